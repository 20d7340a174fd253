/* cmd_plan.c - remat plan: run a planner, judge, report, write. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/util.h"
#include "tool/svg.h"

const struct cli_opt cmd_plan_opts[] = {
	{ "budget", 'b', "B", "memory budget: bytes, 4GiB, 1.5GB, or 60% of the no-remat peak", 0 },
	{ "planner", 'p', "NAME", "planner to run (default auto; see 'remat planners')", 0 },
	{ "output", 'o', "FILE", "write the schedule to FILE (atomically)", 0 },
	{ "time-limit", 't', "SECONDS", "stop searching after SECONDS (default: none)", 0 },
	{ "seed", 0, "N", "seed for randomized planners (default 1)", 0 },
	{ "order", 0, "METHOD", "plan in a node order with a low no-remat peak: file (as "
	  "listed), greedy, schedule, local or best (default best; see 'remat order')", 0 },
	{ "json", 0, NULL, "print one JSON object on stdout", 0 },
	{ "quiet", 'q', NULL, "no progress display", 0 },
	{ "timeline", 0, "FILE", "draw memory at every step to FILE (SVG, written atomically)", 0 },
	{ NULL, 0, NULL, NULL, 0 }
};

struct progress_ctx {
	int shown;
	double start;
};

static void show_progress(void *ctx, const struct remat_progress *p)
{
	struct progress_ctx *pc = ctx;
	char line[160];
	int len;

	len = snprintf(line, sizeof(line), "%s: %s", p->planner, p->phase ? p->phase : "");
	if (p->fraction >= 0 && len < (int)sizeof(line))
		len += snprintf(line + len, sizeof(line) - (size_t)len, " %3.0f%%",
				100 * p->fraction);
	if (!isnan(p->incumbent) && len < (int)sizeof(line))
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  best %.6g",
				p->incumbent);
	if (!isnan(p->bound) && len < (int)sizeof(line))
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  bound %.6g",
				p->bound);
	if (len < (int)sizeof(line))
		snprintf(line + len, sizeof(line) - (size_t)len, "  %.1fs",
			 remat_now() - pc->start);
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	pc->shown = 1;
}

int cmd_plan(struct cli_args *a)
{
	const char *gpath = a->pos[0], *btext = cli_get(a, "budget");
	const char *pname = cli_get(a, "planner"), *out = cli_get(a, "output");
	const char *tl = cli_get(a, "time-limit"), *seed_text = cli_get(a, "seed");
	const struct remat_planner *p;
	struct remat_budget_spec spec;
	struct remat_graph *g = NULL;
	struct remat_schedule s;
	struct remat_sim_result res;
	struct remat_plan_request req;
	struct remat_plan_report report;
	struct remat_error err;
	struct progress_ctx pc = { 0, 0 };
	int json = cli_flag(a, "json"), rc, code, i;
	double t0, elapsed, limit = 0;
	uint64_t seed = 1;

	remat_error_clear(&err);
	remat_schedule_init(&s);
	if (!btext)
		return cli_usage_error(a, "'--budget' is required");
	if (remat_budget_parse(btext, &spec, &err)) {
		cli_error("%s", err.msg);
		if (json)
			cli_print_result_json(stdout, NULL, -1, pname ? pname : "auto", NULL, 0,
					      err.msg, NULL);
		return 2;
	}
	if (!pname)
		pname = "auto";
	p = remat_planner_find(pname);
	if (!p)
		return cli_usage_error(a, "unknown planner '%s' (see 'remat planners')", pname);
	for (i = 0; i < a->n_popts; i++)
		if (strcmp(p->name, "auto") != 0 && !remat_planner_has_option(p, a->popts[i].key))
			return cli_usage_error(a, "option '--%s' does not apply to planner '%s'",
					       a->popts[i].key, p->name);
	if (tl && (limit = cli_parse_seconds(tl)) < 0)
		return cli_usage_error(a, "'--time-limit' needs a number of seconds, not '%s'", tl);
	if (cli_get(a, "order") && remat_order_method_parse(cli_get(a, "order")) < 0)
		return cli_usage_error(a, "unknown order '%s' (file, greedy, schedule, local, best, budget)",
				       cli_get(a, "order"));
	if (seed_text) {
		char *end;

		seed = strtoull(seed_text, &end, 10);
		if (end == seed_text || *end || seed_text[0] == '-')
			return cli_usage_error(a, "'--seed' needs a non-negative integer, not '%s'",
					       seed_text);
	}

	memset(&req, 0, sizeof(req));
	rc = remat_graph_load_file(gpath, &g, &err);
	if (rc == REMAT_OK)
		rc = remat_budget_resolve(&spec, g->no_remat_peak, &req.budget, &err);
	if (rc) {
		cli_error("%s", err.msg);
		if (json)
			cli_print_result_json(stdout, NULL, -1, p->name, NULL, 0, err.msg, NULL);
		code = cli_exit_code(rc);
		goto done;
	}
	remat_plan_report_init(&report);
	req.graph = g;
	req.time_limit = limit;
	req.seed = seed;
	req.options = a->popts;
	req.n_options = a->n_popts;
	req.report = &report;
	/*
	 * Default: best for planners that also plan in the file's order and
	 * keep the cheaper (auto, lns): never worse.  A single planner in
	 * the best order can be (bench/RESULTS.md): the file's for those.
	 */
	req.order = cli_get(a, "order") ? remat_order_method_parse(cli_get(a, "order"))
		: (p->flags & REMAT_PLANNER_ORDERS) ? REMAT_ORDER_BEST : REMAT_ORDER_FILE;
	t0 = remat_now();
	pc.start = t0;
	if (limit > 0)
		req.deadline = t0 + limit;
	if (!cli_flag(a, "quiet") && isatty(STDERR_FILENO)) {
		req.progress = show_progress;
		req.progress_ctx = &pc;
	}
	rc = remat_plan_run(p, &req, &s, &res, &err);
	elapsed = remat_now() - t0;
	if (pc.shown)
		fputs("\r\033[K", stderr);
	if (rc == REMAT_OK && out) {
		struct remat_schedule_meta meta = { p->name, req.budget, &res };

		rc = remat_schedule_write(out, g, &s, &meta, &err);
	}
	/* Also over budget: the picture shows where it does not fit. */
	if ((rc == REMAT_OK || (rc == REMAT_ENOFIT && res.valid)) && cli_get(a, "timeline")) {
		char label[96];
		int trc;

		snprintf(label, sizeof(label), "planner %s%s%s%s", p->name,
			 report.chosen[0] ? " (chose " : "", report.chosen,
			 report.chosen[0] ? ")" : "");
		trc = remat_i_svg_timeline_write(cli_get(a, "timeline"), g, &s, req.budget, label,
						 &err);
		if (trc)
			rc = trc;
	}
	if (rc != REMAT_OK) {
		cli_error("%s", err.msg);
		if (json)
			cli_print_result_json(stdout, rc == REMAT_ENOFIT && res.valid ? &res : NULL,
					      req.budget, p->name, report.chosen, elapsed, err.msg,
					      &report);
		code = cli_exit_code(rc);
		goto done;
	}
	if (json) {
		cli_print_result_json(stdout, &res, req.budget, p->name, report.chosen, elapsed,
				      NULL, &report);
	} else {
		printf("%s: planner %s%s%s%s, %lld steps, planned in %.3f s\n", g->name, p->name,
		       report.chosen[0] ? " (chose " : "", report.chosen,
		       report.chosen[0] ? ")" : "", (long long)s.n, elapsed);
		cli_print_result_text(stdout, g, &res, req.budget);
		if (report.order[0] && strcmp(report.order, "file") != 0) {
			char ob[32];

			remat_format_bytes(report.order_peak, ob, sizeof(ob));
			printf("  order       %-14s no-remat peak %s in it\n", report.order, ob);
		}
		if (report.note[0])
			printf("  note        %s\n", report.note);
		if (out)
			printf("  written to  %s\n", out);
	}
	code = 0;
done:
	remat_schedule_release(&s);
	remat_graph_free(g);
	return code;
}
