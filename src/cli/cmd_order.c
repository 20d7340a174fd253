/*
 * cmd_order.c - remat order: a topological order with a low no-remat
 * peak (remat/order.h), reported, and written as the reordered graph.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/util.h"

const struct cli_opt cmd_order_opts[] = {
	{ "method", 'm', "M", "file, greedy, schedule, local, best or budget (default best)", 0 },
	{ "output", 'o', "FILE", "write the graph with its nodes in the new order (atomically; "
	  "- for stdout)", 0 },
	{ "budget", 'b', "B", "schedule: plan at this budget (default: at 90%, 75% and 60% of "
	  "the no-remat peak); local, best: stop once the peak fits it; budget: the budget", 0 },
	{ "time-limit", 't', "SECONDS", "stop searching after SECONDS (default: none)", 0 },
	{ "seed", 0, "N", "seed of the local search (default 1)", 0 },
	{ "moves", 0, "N", "moves of the local search (default 1000 per node, at most 5e6)", 0 },
	{ "target", 0, "B", "local, best: first minimise the memory above B, summed over the "
	  "steps, then the peak", 0 },
	{ "json", 0, NULL, "print one JSON object on stdout", 0 },
	{ NULL, 0, NULL, NULL, 0 }
};

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!s || s[0] == '-' || s[0] == '\0')
		return -1;
	*out = strtoull(s, &end, 10);
	return *end ? -1 : 0;
}

int cmd_order(struct cli_args *a)
{
	const char *mtext = cli_get(a, "method"), *out = cli_get(a, "output");
	const char *btext = cli_get(a, "budget"), *tl = cli_get(a, "time-limit");
	struct remat_order_opts o;
	struct remat_graph *g = NULL, *r = NULL;
	struct remat_error err;
	int32_t *order = NULL;
	int64_t peak = 0;
	int method = REMAT_ORDER_BEST, json = cli_flag(a, "json"), rc, code = 0;
	double t0, limit = 0;
	uint64_t u;

	remat_error_clear(&err);
	remat_order_opts_init(&o);
	if (mtext && (method = remat_order_method_parse(mtext)) < 0)
		return cli_usage_error(a, "unknown order method '%s' (file, greedy, schedule, "
				       "local, best, budget)", mtext);
	if (tl && (limit = cli_parse_seconds(tl)) < 0)
		return cli_usage_error(a, "'--time-limit' needs a number of seconds, not '%s'", tl);
	if (cli_get(a, "seed")) {
		if (parse_u64(cli_get(a, "seed"), &u))
			return cli_usage_error(a, "'--seed' needs a non-negative integer, not '%s'",
					       cli_get(a, "seed"));
		o.seed = u;
	}
	if (cli_get(a, "moves")) {
		if (parse_u64(cli_get(a, "moves"), &u) || u > INT64_MAX)
			return cli_usage_error(a, "'--moves' needs a non-negative integer, not '%s'",
					       cli_get(a, "moves"));
		o.max_moves = (int64_t)u;
	}
	rc = remat_graph_load_file(a->pos[0], &g, &err);
	if (rc == REMAT_OK && btext)
		rc = remat_budget_bytes(btext, g->no_remat_peak, &o.budget, &err);
	if (rc == REMAT_OK && cli_get(a, "target"))
		rc = remat_budget_bytes(cli_get(a, "target"), g->no_remat_peak, &o.target, &err);
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
		printf("%s: order %s, %.3f s\n", g->name,
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
	return code;
}
