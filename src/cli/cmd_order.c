/*
 * cmd_order.c - remat order: a topological order with a low no-remat
 * peak (remat/order.h), reported, and written as the reordered graph.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/util.h"

int cmd_order(const struct cli_cmd *cmd, int argc, char **argv)
{
	const char *mtext = NULL, *out = NULL;
	struct cli_budget budget = CLI_BUDGET_INIT, target = CLI_BUDGET_INIT;
	uint64_t seed = 1, moves = 0;
	double limit = 0;
	int json = 0;
	struct cli_opt opts[] = {
		OPT_STRING_C('m', "method", &mtext, "M", CLI_COMPLETE_ORDER,
			     "file, greedy, schedule, local, best or budget (default best)"),
		OPT_STRING('o', "output", &out, "FILE", "write the graph with its nodes in the "
			   "new order (atomically; - for stdout)"),
		OPT_BUDGET('b', "budget", &budget, "schedule: plan at this budget (default: at "
			   "90%, 75% and 60% of the no-remat peak); local, best: stop once the "
			   "peak fits it; budget: the budget"),
		OPT_SECONDS('t', "time-limit", &limit, "stop searching after SECONDS (default: none)"),
		OPT_UINT64(0, "seed", &seed, "N", "seed of the local search (default 1)"),
		OPT_UINT64(0, "moves", &moves, "N",
			   "moves of the local search (default 1000 per node, at most 5e6)"),
		OPT_BUDGET(0, "target", &target, "local, best: first minimise the memory above "
			   "B, summed over the steps, then the peak"),
		OPT_FLAG(0, "json", &json, "print one JSON object on stdout"),
		OPT_END()
	};
	struct remat_order_opts o;
	struct remat_graph *g = NULL, *r = NULL;
	struct remat_error err;
	int32_t *order = NULL;
	int64_t peak = 0;
	int method = REMAT_ORDER_BEST, rc, code;
	double t0;

	code = cli_parse(cmd, opts, &argc, argv);
	if (code != CLI_GO_ON)
		return code;
	code = CLI_EXIT_OK;
	remat_error_clear(&err);
	remat_order_opts_init(&o);
	if (mtext && (method = remat_order_method_parse(mtext)) < 0) {
		code = cli_usage_error("unknown order method '%s' (file, greedy, schedule, "
				       "local, best, budget)", mtext);
		goto done;
	}
	o.seed = seed;
	if (cli_given(opts, "moves")) {
		if (moves > INT64_MAX) {
			code = cli_usage_error("'--moves' needs an integer up to 2^63-1");
			goto done;
		}
		o.max_moves = (int64_t)moves;
	}
	rc = remat_graph_load_file(argv[0], &g, &err);
	if (rc == REMAT_OK && budget.given)
		rc = remat_budget_resolve(&budget.spec, g->no_remat_peak, &o.budget, &err);
	if (rc == REMAT_OK && target.given)
		rc = remat_budget_resolve(&target.spec, g->no_remat_peak, &o.target, &err);
	if (rc == REMAT_OK && !(order = malloc(sizeof(int32_t) * ((size_t)g->n + 1))))
		rc = REMAT_FAIL(&err, REMAT_ENOMEM, "out of memory");
	t0 = remat_now();
	if (limit > 0)
		o.deadline = t0 + limit;
	if (rc == REMAT_OK)
		rc = remat_order_compute(g, (enum remat_order_method)method, &o, order, &peak,
					 &err);
	if (rc == REMAT_OK && out) {
		rc = remat_graph_reorder(g, order, &r, &err);
		if (rc == REMAT_OK && r->no_remat_peak != peak)
			rc = REMAT_FAIL(&err, REMAT_EINTERNAL, "the reordered graph's no-remat peak "
					"%lld differs from the order's %lld",
					(long long)r->no_remat_peak, (long long)peak);
		if (rc == REMAT_OK)
			rc = remat_graph_write_file(out, r, &err);
	}
	if (rc) {
		cli_error("%s", err.msg);
		if (json) {
			fputs("{\"error\": ", stdout);
			remat_i_json_write_str(stdout, err.msg);
			fputs("}\n", stdout);
		}
		code = cli_exit_code(rc);
		goto done;
	}
	if (json) {
		printf("{\"name\": ");
		remat_i_json_write_str(stdout, g->name);
		printf(", \"method\": \"%s\", \"nodes\": %d, \"file_peak\": %lld, \"peak\": %lld, "
		       "\"time_s\": ", remat_order_method_name((enum remat_order_method)method),
		       g->n, (long long)g->no_remat_peak, (long long)peak);
		remat_i_json_write_num(stdout, (double)(long long)((remat_now() - t0) * 1e6) / 1e6);
		printf("}\n");
	} else if (!out || strcmp(out, "-") != 0) {
		char b1[32], b2[32];

		remat_format_bytes(g->no_remat_peak, b1, sizeof(b1));
		remat_format_bytes(peak, b2, sizeof(b2));
		printf("%s: order %s, %.3f s\n", cli_safe(g->name),
		       remat_order_method_name((enum remat_order_method)method), remat_now() - t0);
		printf("  file order  no-remat peak %-14s (%lld bytes)\n", b1,
		       (long long)g->no_remat_peak);
		printf("  this order  no-remat peak %-14s (%lld bytes), %+.2f%%\n", b2,
		       (long long)peak, g->no_remat_peak > 0 ?
		       100.0 * ((double)peak / (double)g->no_remat_peak - 1) : 0.0);
		if (out)
			printf("  written to  %s\n", out);
	}
done:
	free(order);
	remat_graph_free(r);
	remat_graph_free(g);
	cli_release(opts);
	return code;
}
