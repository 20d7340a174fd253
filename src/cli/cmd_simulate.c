/* cmd_simulate.c - remat simulate: judge a schedule file. */
#include <stdio.h>

#include "cli/cli.h"
#include "core/util.h"
#include "tool/svg.h"

const struct cli_opt cmd_simulate_opts[] = {
	{ "budget", 'b', "B", "also check the peak against B (bytes, 4GiB, 60%, ...)", 0 },
	{ "json", 0, NULL, "print one JSON object on stdout", 0 },
	{ "timeline", 0, "FILE", "draw memory at every step to FILE (SVG, written atomically)", 0 },
	{ NULL, 0, NULL, NULL, 0 }
};

int cmd_simulate(struct cli_args *a)
{
	const char *gpath = a->pos[0], *spath = a->pos[1];
	const char *btext = cli_get(a, "budget");
	struct remat_budget_spec spec;
	struct remat_graph *g = NULL;
	struct remat_schedule s;
	struct remat_sim_result res;
	struct remat_error err;
	int json = cli_flag(a, "json"), rc, code;
	int64_t budget = -1;

	remat_error_clear(&err);
	remat_schedule_init(&s);
	if (btext && remat_budget_parse(btext, &spec, &err)) {
		cli_error("%s", err.msg);
		if (json)
			cli_print_result_json(stdout, NULL, -1, NULL, NULL, 0, err.msg, NULL);
		return 2;
	}
	rc = remat_graph_load_file(gpath, &g, &err);
	if (rc == REMAT_OK && btext)
		rc = remat_budget_resolve(&spec, g->no_remat_peak, &budget, &err);
	if (rc == REMAT_OK)
		rc = remat_schedule_read(spath, g, &s, &err);
	if (rc == REMAT_OK)
		rc = remat_simulate(g, &s, budget, NULL, &res, &err);
	if (rc) {
		cli_error("%s", err.msg);
		if (json)
			cli_print_result_json(stdout, NULL, budget, NULL, NULL, 0, err.msg, NULL);
		code = cli_exit_code(rc);
		goto done;
	}
	if (!res.valid) {
		char msg[600];

		snprintf(msg, sizeof(msg), "%s: %s", spath, res.error);
		cli_error("%s", msg);
		if (json)
			cli_print_result_json(stdout, &res, budget, NULL, NULL, 0, msg, NULL);
		code = 1;
		goto done;
	}
	if (cli_get(a, "timeline") &&
	    (rc = remat_i_svg_timeline_write(cli_get(a, "timeline"), g, &s, budget,
					     remat_i_basename(spath), &err))) {
		cli_error("%s", err.msg);
		code = cli_exit_code(rc);
		goto done;
	}
	code = res.feasible ? 0 : 3;
	if (json) {
		char msg[200] = "";

		if (!res.feasible)
			snprintf(msg, sizeof(msg), "peak %lld bytes exceeds the budget of %lld bytes",
				 (long long)res.peak_mem, (long long)budget);
		cli_print_result_json(stdout, &res, budget, NULL, NULL, 0, msg, NULL);
		if (!res.feasible)
			cli_error("%s: %s", spath, msg);
	} else {
		printf("%s on %s: %s schedule, %lld steps\n", spath, g->name,
		       res.compute_only ? "compute-only" : "explicit", (long long)s.n);
		cli_print_result_text(stdout, g, &res, budget);
		if (!res.feasible)
			cli_error("%s: the peak exceeds the budget", spath);
	}
done:
	remat_schedule_release(&s);
	remat_graph_free(g);
	return code;
}
