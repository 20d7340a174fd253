/* cmd_plan.c - remat plan: run a planner, judge, report, write. */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/util.h"
#include "tool/svg.h"

/* Without --time-limit: planners stop searching after this many seconds. */
#define PLAN_DEFAULT_SECONDS 10.0

/*
 * Ctrl-C: the first one stops the search and the plan finishes with the
 * best schedule found (written with -o as usual); a second one kills.
 */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	if (interrupted) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	interrupted = 1;
}

/* The nodes recomputed (the first few, and how many), for the summary. */
static void print_recomputed(FILE *o, const struct remat_graph *g,
			     const struct remat_schedule *s)
{
	uint8_t *seen = calloc((size_t)g->n + 1, 1), *listed = calloc((size_t)g->n + 1, 1);
	int64_t i, shown = 0, distinct = 0;

	if (!seen || !listed) {
		free(seen);
		free(listed);
		return;
	}
	for (i = 0; i < s->n; i++) {
		int32_t v = s->steps[i].node;

		if (s->steps[i].op != REMAT_OP_COMPUTE)
			continue;
		if (seen[v] && !listed[v]) {
			listed[v] = 1;
			distinct++;
			if (shown < 5) {
				fprintf(o, "%s%s", shown ? ", " : "  recomputed  ",
					cli_safe(g->id[v]));
				shown++;
			}
		}
		seen[v] = 1;
	}
	if (distinct > shown)
		fprintf(o, " and %lld more", (long long)(distinct - shown));
	if (distinct)
		fprintf(o, " (%lld nodes)\n", (long long)distinct);
	free(seen);
	free(listed);
}

struct progress_ctx {
	int shown;
	double start;
};

static void show_progress(void *ctx, const struct remat_progress *p)
{
	struct progress_ctx *pc = ctx;
	char line[160], cost[32];
	int len;

	len = snprintf(line, sizeof(line), "%s: %s", p->planner, p->phase ? p->phase : "");
	if (p->fraction >= 0 && len < (int)sizeof(line))
		len += snprintf(line + len, sizeof(line) - (size_t)len, " %3.0f%%",
				100 * p->fraction);
	if (!isnan(p->incumbent) && len < (int)sizeof(line)) {
		cli_format_cost(p->incumbent, cost, sizeof(cost));
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  best %s", cost);
	}
	if (!isnan(p->bound) && len < (int)sizeof(line)) {
		cli_format_cost(p->bound, cost, sizeof(cost));
		len += snprintf(line + len, sizeof(line) - (size_t)len, "  bound %s", cost);
	}
	if (len < (int)sizeof(line))
		snprintf(line + len, sizeof(line) - (size_t)len, "  %.1fs",
			 remat_now() - pc->start);
	fprintf(stderr, "\r\033[K%s", line);
	fflush(stderr);
	pc->shown = 1;
}

int cmd_plan(const struct cli_cmd *cmd, int argc, char **argv)
{
	const char *pname = "auto", *out = NULL, *timeline = NULL, *order_text = NULL;
	struct cli_budget budget = CLI_BUDGET_INIT;
	struct cli_planner_opts popts = { NULL, 0 };
	int json = 0, quiet = 0, rc, code, i, lowest = 0;
	int64_t peak_bound = -1;
	double t0 = remat_now(), elapsed, limit = PLAN_DEFAULT_SECONDS;
	struct sigaction sa, old_int;
	uint64_t seed = 1;
	int64_t device = -1;
	struct cli_opt opts[] = {
		OPT_BUDGET('b', "budget", &budget,
			   "memory budget: bytes, 4GiB, 1.5GB, 60% of the no-remat peak, or "
			   "lowest (the lowest peak the planner reaches)"),
		OPT_BYTES(0, "device-memory", &device, "B",
			  "instead of --budget: the device's memory; the budget is B less the "
			  "graph's fixed_bytes (parameters, buffers, what it leaves out)"),
		OPT_STRING_C('p', "planner", &pname, "NAME", CLI_COMPLETE_PLANNER,
			     "planner to run (default auto; see 'remat planners')"),
		OPT_STRING('o', "output", &out, "FILE", "write the schedule to FILE (atomically; - for "
			   "stdout, the summary then on stderr)"),
		OPT_SECONDS('t', "time-limit", &limit,
			    "stop searching SECONDS after the command starts, loading "
			    "included, and keep the best schedule (default 10; 0: no limit)"),
		OPT_UINT64(0, "seed", &seed, "N", "seed for randomized planners (default 1)"),
		OPT_STRING_C(0, "order", &order_text, "METHOD", CLI_COMPLETE_ORDER,
			     "plan in a node order with a low no-remat peak: file (as listed), "
			     "greedy, schedule, local, budget or best (default best for auto and "
			     "lns, file for the others; see 'remat order')"),
		OPT_FLAG(0, "json", &json, "print one JSON object on stdout"),
		OPT_FLAG('q', "quiet", &quiet, "no progress display"),
		OPT_STRING(0, "timeline", &timeline, "FILE",
			   "draw memory at every step to FILE (SVG, written atomically)"),
		OPT_PLANNER_OPTIONS(&popts),
		OPT_END()
	};
	const struct remat_planner *p;
	struct remat_graph *g = NULL;
	struct remat_schedule s;
	struct remat_sim_result res;
	struct remat_plan_request req;
	struct remat_plan_report report;
	struct remat_error err;
	struct progress_ctx pc = { 0, 0 };
	FILE *sum = stdout;

	code = cli_parse(cmd, opts, &argc, argv);
	if (code != CLI_GO_ON) {
		/* An unreadable budget is the one usage error --json reports. */
		if (json && budget.err.code)
			cli_print_result_json(stdout, NULL, -1, cli_given(opts, "planner") ?
					      cli_given(opts, "planner") : "auto", NULL, 0,
					      budget.err.msg, NULL);
		return code;
	}
	remat_error_clear(&err);
	remat_schedule_init(&s);
	if (budget.given == (device >= 0)) {
		code = cli_usage_error(budget.given ? "give '--budget' or '--device-memory', not both"
				       : "'--budget' is required (or '--device-memory')");
		goto done;
	}
	p = cli_find_planner(pname);
	if (!p) {
		code = CLI_EXIT_USAGE;
		goto done;
	}
	if (cli_stdout_claims(json, out, timeline) > 1) {
		code = cli_usage_error("'--json', '-o -' and '--timeline -' each write to "
				       "standard output: give one of them");
		goto done;
	}
	/* The schedule on stdout: the summary goes to stderr, as with --json. */
	if (out && strcmp(out, "-") == 0)
		sum = stderr;
	if (order_text && remat_order_method_parse(order_text) < 0) {
		code = cli_usage_error("unknown order '%s' (file, greedy, schedule, local, best, "
				       "budget)", order_text);
		goto done;
	}
	for (i = 0; i < popts.n; i++)
		if (strcmp(p->name, "auto") != 0 && !remat_planner_has_option(p, popts.v[i].key)) {
			code = cli_usage_error("option '--%s' does not apply to planner '%s'",
					       popts.v[i].key, p->name);
			goto done;
		}

	memset(&req, 0, sizeof(req));
	rc = remat_graph_load_file(argv[0], &g, &err);
	if (rc == REMAT_OK && budget.given && budget.spec.lowest) {
		lowest = 1;
	} else if (rc == REMAT_OK && budget.given) {
		rc = remat_budget_resolve(&budget.spec, g->no_remat_peak, &req.budget, &err);
	} else if (rc == REMAT_OK && g->fixed_bytes < 0) {
		rc = REMAT_FAIL(&err, REMAT_EINPUT, "%s: '--device-memory' needs the graph's "
				"'fixed_bytes' (memory held outside the graph), which it does not "
				"give; use '--budget'", argv[0]);
	} else if (rc == REMAT_OK && device < g->fixed_bytes) {
		char d[32], f[32];

		remat_format_bytes(device, d, sizeof(d));
		remat_format_bytes(g->fixed_bytes, f, sizeof(f));
		rc = REMAT_FAIL(&err, REMAT_ENOFIT, "a device of %s holds less than the %s the "
				"graph keeps outside it (fixed_bytes)", d, f);
	} else if (rc == REMAT_OK) {
		req.budget = device - g->fixed_bytes;
	}
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
	req.options = popts.v;
	req.n_options = popts.n;
	req.report = &report;
	/*
	 * Default order: best for planners that also plan in the file's
	 * order and keep the cheaper (auto, lns): never worse.  A single
	 * planner in the best order can be (bench/RESULTS.md): the file's.
	 */
	req.order = order_text ? remat_order_method_parse(order_text)
		: (p->flags & REMAT_PLANNER_ORDERS) ? REMAT_ORDER_BEST : REMAT_ORDER_FILE;
	/* The limit counts from the start of the command: loading included. */
	pc.start = t0;
	if (limit > 0)
		req.deadline = t0 + limit;
	if (!quiet && isatty(STDERR_FILENO)) {
		req.progress = show_progress;
		req.progress_ctx = &pc;
	}
	interrupted = 0;
	req.stop = &interrupted;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	if (lowest) {
		rc = remat_plan_lowest(p, &req, &s, &res, &peak_bound, &err);
		if (rc == REMAT_OK)
			req.budget = res.budget;   /* the budget it was found at */
	} else {
		rc = remat_plan_run(p, &req, &s, &res, &err);
	}
	sigaction(SIGINT, &old_int, NULL);
	elapsed = remat_now() - t0;
	if (interrupted && !report.note[0])
		snprintf(report.note, sizeof(report.note), "interrupted: the best schedule "
			 "found before Ctrl-C");
	if (pc.shown)
		fputs("\r\033[K", stderr);
	if (rc == REMAT_OK && out) {
		struct remat_schedule_meta meta = { p->name, req.budget, &res };

		rc = remat_schedule_write(out, g, &s, &meta, &err);
	}
	/* Also over budget: the picture shows where it does not fit. */
	if ((rc == REMAT_OK || (rc == REMAT_ENOFIT && res.valid)) && timeline) {
		char label[96];
		int trc;

		snprintf(label, sizeof(label), "planner %s%s%s%s", p->name,
			 report.chosen[0] ? " (chose " : "", report.chosen,
			 report.chosen[0] ? ")" : "");
		trc = remat_i_svg_timeline_write(timeline, g, &s, req.budget, label, &err);
		if (trc)
			rc = trc;
	}
	if (rc != REMAT_OK) {
		cli_error("%s", err.msg);
		/*
		 * No schedule is given (or it is over the budget): nothing is
		 * optimal, and no gap is a schedule's (a failed -o write said
		 * "optimal": true beside "valid": false; outside review).
		 */
		report.gap = NAN;
		report.optimal = -1;
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
		fprintf(sum, "%s: planner %s%s%s%s, %lld steps, planned in %.3f s\n",
			cli_safe(g->name), p->name,
		       report.chosen[0] ? " (chose " : "", report.chosen,
		       report.chosen[0] ? ")" : "", (long long)s.n, elapsed);
		cli_print_result_text(sum, g, &res, req.budget);
		print_recomputed(sum, g, &s);
		if (!isnan(report.lower_bound)) {
			char lb[32];

			cli_format_cost(report.lower_bound, lb, sizeof(lb));
			fprintf(sum, "  bound       %s %s   gap %.2f%%%s\n", lb, g->cost_unit,
			       100 * report.gap, report.optimal == 1 ? " (optimal)" : "");
		}
		if (!isnan(report.order_lower_bound)) {
			char lb[32];

			cli_format_cost(report.order_lower_bound, lb, sizeof(lb));
			fprintf(sum, "  in order    %s %s   (the bound of its model, in the order "
				"planned in)\n", lb, g->cost_unit);
		}
		if (report.order[0] && strcmp(report.order, "file") != 0) {
			char ob[32];

			remat_format_bytes(report.order_peak, ob, sizeof(ob));
			fprintf(sum, "  order       %-14s no-remat peak %s in it\n", report.order, ob);
		}
		if (report.note[0])
			fprintf(sum, "  note        %s\n", report.note);
		if (out && sum == stdout)
			fprintf(sum, "  written to  %s\n", out);
	}
	code = CLI_EXIT_OK;
done:
	remat_schedule_release(&s);
	remat_graph_free(g);
	cli_release(opts);
	return code;
}
