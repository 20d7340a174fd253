/* cmd_simulate.c - remat simulate: judge a schedule file. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/util.h"
#include "tool/svg.h"

int cmd_simulate(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_budget budget_opt = CLI_BUDGET_INIT;
	const char *timeline = NULL, *gpath, *spath;
	int json = 0, rc, code;
	struct cli_opt opts[] = {
		OPT_BUDGET('b', "budget", &budget_opt,
			   "also check the peak against B (bytes, 4GiB, 60%, ...)"),
		OPT_FLAG(0, "json", &json, "print one JSON object on stdout"),
		OPT_STRING(0, "timeline", &timeline, "FILE",
			   "draw memory at every step to FILE (SVG, written atomically)"),
		OPT_END()
	};
	struct remat_graph *g = NULL;
	struct remat_schedule s;
	struct remat_sim_result res;
	struct remat_error err;
	int64_t budget = -1;

	code = cli_parse(cmd, opts, &argc, argv);
	if (code != CLI_GO_ON) {
		if (json && budget_opt.err.code)
			cli_print_result_json(stdout, NULL, -1, NULL, NULL, 0, budget_opt.err.msg,
					      NULL);
		return code;
	}
	gpath = argv[0];
	spath = argv[1];
	if (strcmp(gpath, "-") == 0 && strcmp(spath, "-") == 0)
		return cli_usage_error("the graph and the schedule cannot both be read from "
				       "standard input ('-')");
	remat_error_clear(&err);
	remat_schedule_init(&s);
	rc = remat_graph_load_file(gpath, &g, &err);
	if (rc == REMAT_OK && budget_opt.given)
		rc = remat_budget_resolve(&budget_opt.spec, g->no_remat_peak, &budget, &err);
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
		code = CLI_EXIT_INPUT;
		goto done;
	}
	if (timeline && (rc = remat_i_svg_timeline_write(timeline, g, &s, budget,
							 remat_i_basename(spath), &err))) {
		cli_error("%s", err.msg);
		code = cli_exit_code(rc);
		goto done;
	}
	code = res.feasible ? CLI_EXIT_OK : CLI_EXIT_NOFIT;
	if (json) {
		char msg[200] = "";

		if (!res.feasible)
			snprintf(msg, sizeof(msg), "peak %lld bytes exceeds the budget of %lld bytes",
				 (long long)res.peak_mem, (long long)budget);
		cli_print_result_json(stdout, &res, budget, NULL, NULL, 0, msg, NULL);
		if (!res.feasible)
			cli_error("%s: %s", spath, msg);
	} else {
		printf("%s on %s: %s schedule, %lld steps\n", cli_safe(spath), cli_safe(g->name),
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
