/* cmd_info.c - remat info: validate a graph and describe it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "remat/chain.h"
#include "core/util.h"

/* The LP bound at --budget: never more than this many seconds of LP. */
#define INFO_LP_SECONDS 15
/* The cut's peak bound: never more than this many seconds. */
#define INFO_PEAK_SECONDS 2
/*
 * The cut, window and down-set bounds at --budget: each at most this many
 * seconds (--bound-time).
 */
#define INFO_BOUND_SECONDS 5
/* Moments of the window bound's chain shown. */
#define INFO_MOMENTS 64
/* The best order's peak: never more than this many seconds of search. */
#define INFO_ORDER_SECONDS 2
/*
 * Without --time-limit the optional analyses (the best order, the tree
 * width) end INFO_LOAD_FACTOR times the load time after the command
 * starts, but no sooner than INFO_MIN_SECONDS (the LP bound, asked for
 * with --budget, is not counted): info on a large graph takes about
 * twice its load, and small graphs get every figure.
 */
#define INFO_LOAD_FACTOR 2.0
#define INFO_MIN_SECONDS 0.5

/*
 * Seconds for one bound of --budget: bound_time (0: no cap), cut to what
 * is left of an explicit --time-limit; -1 when nothing is left.
 */
static double bound_share(double bound_time, double limit, double t0)
{
	double left = limit > 0 ? t0 + limit - remat_now() : INFINITY;

	if (left <= 0)
		return -1;
	return bound_time > 0 && bound_time < left ? bound_time : isinf(left) ? 0 : left;
}

/* ', "NAME_lower_bound": V, "NAME_status": "STATUS"' (V null unless ok). */
static void json_bound(const char *name, int ok, double v, const char *status)
{
	printf(", \"%s_lower_bound\": ", name);
	if (ok)
		remat_i_json_write_num(stdout, v);
	else
		fputs("null", stdout);
	printf(", \"%s_status\": \"%s\"", name, status);
}

/* A bound's status in --json. */
static const char *status_name(enum remat_bound_status st)
{
	return st == REMAT_BOUND_OK ? "ok" : st == REMAT_BOUND_INFEASIBLE ? "infeasible" :
	       "not computed";
}

/* prefix, then node v's id as a JSON string, or null when v < 0. */
static void json_node(const char *prefix, const struct remat_graph *g, int32_t v)
{
	fputs(prefix, stdout);
	if (v >= 0)
		remat_i_json_write_str(stdout, g->id[v]);
	else
		fputs("null", stdout);
}

static void json_error(const char *msg)
{
	fputs("{\"error\": ", stdout);
	remat_i_json_write_str(stdout, msg);
	fputs("}\n", stdout);
}

int cmd_info(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct cli_budget budget_opt = CLI_BUDGET_INIT;
	int json = 0, rc, code;
	enum remat_bound_status lp_status = REMAT_BOUND_NOT_TRIED;
	enum remat_bound_status cut_status = REMAT_BOUND_NOT_TRIED;
	int32_t cut_at = -1, peak_at = -1;
	int64_t cut_peak = -1;
	double cut_bound = NAN, win_bound = NAN, lp_time = 0, cut_time = 0, win_time = 0;
	enum remat_bound_status win_status = REMAT_BOUND_NOT_TRIED;
	enum remat_bound_status ds_status = REMAT_BOUND_NOT_TRIED;
	double ds_bound = NAN, ds_time = 0;
	int32_t ds_size = 0;
	enum remat_bound_status path_status = REMAT_BOUND_NOT_TRIED;
	double path_bound = NAN, path_time = 0;
	int32_t path_fork = -1;
	int32_t moments[INFO_MOMENTS], n_moments = 0, i;
	double t0 = remat_now(), limit = -1, deadline = 0, t_load, t_bounds = 0, lp_seconds;
	double bound_time = INFO_BOUND_SECONDS;
	struct cli_opt opts[] = {
		OPT_FLAG(0, "json", &json, "print one JSON object on stdout"),
		OPT_BUDGET('b', "budget", &budget_opt, "also bound the cost at budget B: the LP "
			   "relaxation of the checkmate model, the cut bound, the window bound, "
			   "the down-set bound and the path bound (any order)"),
		OPT_SECONDS(0, "bound-time", &bound_time, "with --budget: seconds for each of the "
			    "cut, window, down-set and path bounds (default 5; more may prove more; "
			    "0: no limit, 60 s for the path bound)"),
		OPT_SECONDS('t', "time-limit", &limit, "stop the best order, the cut peak bound "
			    "and the tree width SECONDS after the command starts, loading "
			    "included, and report what "
			    "is not done as not computed (default: twice the load time, at "
			    "least 0.5 s, not counting the bounds of --budget; 0: no limit)"),
		OPT_END()
	};
	struct remat_graph *g = NULL;
	struct remat_chain *chain = NULL, *cuts = NULL;
	struct remat_error err;
	int32_t v, counts[5] = { 0 }, width;
	char b1[32], b2[32], b3[32];
	struct remat_treedec td;
	struct remat_treedec_limits td_lim = { 0, NULL };
	int64_t budget = -1, order_peak = -1;
	int order_late = 0, width_late = 0;
	double lp_bound = 0;

	code = cli_parse(cmd, opts, &argc, argv);
	if (code != CLI_GO_ON) {
		if (json && budget_opt.err.code)
			json_error(budget_opt.err.msg);
		return code;
	}
	remat_error_clear(&err);
	rc = remat_graph_load_file(argv[0], &g, &err);
	t_load = remat_now() - t0;
	if (rc == REMAT_OK && budget_opt.given)
		rc = remat_budget_resolve(&budget_opt.spec, g->no_remat_peak, &budget, &err);
	/* An explicit limit bounds the LP too (it is not started past it). */
	lp_seconds = INFO_LP_SECONDS;
	if (limit > 0 && t0 + limit - remat_now() < lp_seconds)
		lp_seconds = t0 + limit - remat_now();
	if (rc == REMAT_OK && budget_opt.given && lp_seconds > 0) {
		double t = remat_now();

		rc = remat_bound_lp(g, budget, lp_seconds, &lp_bound, &lp_status, &err);
		lp_time = remat_now() - t;
		t_bounds = lp_time;
	}
	if (rc == REMAT_OK && budget_opt.given) {
		double t = remat_now(), share = bound_share(bound_time, limit, t0);

		if (share >= 0)
			rc = remat_bound_cut(g, budget, share, &cut_bound, &cut_status, &cut_at,
					     &err);
		cut_time = remat_now() - t;
		t_bounds += cut_time;
	}
	if (rc == REMAT_OK && budget_opt.given) {
		double t = remat_now(), share = bound_share(bound_time, limit, t0);

		if (share >= 0)
			rc = remat_bound_window(g, budget, share, &win_bound, &win_status, moments,
						INFO_MOMENTS, &n_moments, &err);
		win_time = remat_now() - t;
		t_bounds += win_time;
	}
	if (rc == REMAT_OK && budget_opt.given) {
		double t = remat_now(), share = bound_share(bound_time, limit, t0);

		if (share >= 0)
			rc = remat_bound_downset(g, budget, share, &ds_bound, &ds_status, &ds_size,
						 &err);
		ds_time = remat_now() - t;
		t_bounds += ds_time;
	}
	if (rc == REMAT_OK && budget_opt.given) {
		double t = remat_now(), share = bound_share(bound_time, limit, t0);

		if (share >= 0)
			rc = remat_bound_path(g, budget, share, &path_bound, &path_status,
					      &path_fork, &err);
		path_time = remat_now() - t;
		t_bounds += path_time;
	}
	if (limit > 0)
		deadline = t0 + limit;
	else if (limit < 0)
		deadline = t0 + t_bounds + (INFO_LOAD_FACTOR * t_load > INFO_MIN_SECONDS ?
					INFO_LOAD_FACTOR * t_load : INFO_MIN_SECONDS);
	if (rc == REMAT_OK)
		rc = remat_chain_build(g, &chain, &err);
	if (rc == REMAT_OK)
		rc = remat_chain_build_ex(g, REMAT_CHAIN_CUTS, &cuts, &err);
	if (rc) {
		cli_error("%s", err.msg);
		if (json)
			json_error(err.msg);
		remat_chain_free(chain);
		remat_graph_free(g);
		return cli_exit_code(rc);
	}
	for (v = 0; v < g->n; v++)
		counts[g->kind[v]]++;
	{
		/*
		 * The least peak any schedule can have (the cut's peak bound): a
		 * third of the time to the deadline, at most INFO_PEAK_SECONDS.
		 */
		double now = remat_now(), share = INFO_PEAK_SECONDS;
		struct remat_error e;

		if (deadline > 0 && (deadline - now) / 3 < share)
			share = (deadline - now) / 3;
		if (share > 0 && remat_bound_cut_peak(g, share, &cut_peak, &peak_at, &e))
			cut_peak = -1;
	}
	{
		/*
		 * The lowest no-remat peak of any order remat finds (remat
		 * order): at most INFO_ORDER_SECONDS, and at most half of what
		 * is left before the deadline (the tree width gets the rest).
		 */
		struct remat_order_opts oo;
		int32_t *ord = NULL;
		double now = remat_now(), share = INFO_ORDER_SECONDS;

		if (deadline > 0 && (deadline - now) / 2 < share)
			share = (deadline - now) / 2;
		if (share > 0)
			ord = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
		remat_order_opts_init(&oo);
		oo.deadline = now + share;
		if (share <= 0)
			order_late = 1;
		else if (!ord || remat_order_compute(g, REMAT_ORDER_BEST, &oo, ord, &order_peak,
						     &err))
			order_peak = -1;
		free(ord);
	}
	/*
	 * The width is informative: left out (null) if the heuristic fails
	 * or does not finish by the deadline.
	 */
	td_lim.deadline = deadline;
	memset(&td, 0, sizeof(td));
	rc = deadline > 0 && remat_now() >= deadline ? REMAT_ECANCELED
		: remat_treedec_build_limited(g, NULL, &td_lim, &td, &err);
	width = rc == REMAT_OK ? td.width : -2;
	width_late = rc == REMAT_ECANCELED;
	remat_treedec_release(&td);
	if (json) {
		printf("{\"name\": ");
		remat_i_json_write_str(stdout, g->name);
		printf(", \"cost_unit\": ");
		remat_i_json_write_str(stdout, g->cost_unit);
		printf(", \"nodes\": %d, \"edges\": %lld, \"inputs\": %d, \"outputs\": %d, "
		       "\"total_mem\": %lld, \"no_remat_peak\": %lld, "
		       "\"min_peak_lower_bound\": %lld, \"baseline_cost\": ",
		       g->n, (long long)g->n_edges, g->n_inputs, g->n_outputs,
		       (long long)g->total_mem, (long long)g->no_remat_peak,
		       (long long)g->min_peak_lower_bound);
		remat_i_json_write_num(stdout, g->baseline_cost);
		if (cut_peak >= 0) {
			printf(", \"min_peak_cut_bound\": %lld, \"min_peak_cut_node\": ",
			       (long long)cut_peak);
			if (peak_at >= 0)
				remat_i_json_write_str(stdout, g->id[peak_at]);
			else
				fputs("null", stdout);
		} else {
			printf(", \"min_peak_cut_bound\": null, \"min_peak_cut_node\": null");
		}
		if (order_peak >= 0)
			printf(", \"best_order_peak\": %lld", (long long)order_peak);
		else if (order_late)
			printf(", \"best_order_peak\": null");
		if (g->fixed_bytes >= 0)
			printf(", \"fixed_bytes\": %lld", (long long)g->fixed_bytes);
		else
			printf(", \"fixed_bytes\": null");
		if (width >= -1)
			printf(", \"treewidth\": %d", width);
		else
			printf(", \"treewidth\": null");
		if (budget_opt.given) {
			printf(", \"budget\": %lld", (long long)budget);
			json_bound("lp", lp_status == 0, lp_bound, lp_status == 0 ? "ok" :
				   lp_status == 1 ? "infeasible" : "too large");
			json_bound("cut", cut_status == REMAT_BOUND_OK, cut_bound, status_name(cut_status));
			json_node(", \"cut_node\": ", g, cut_at);
			json_bound("window", win_status == REMAT_BOUND_OK, win_bound,
				   status_name(win_status));
			fputs(", \"window_moments\": [", stdout);
			for (i = 0; win_status == REMAT_BOUND_OK && i < n_moments &&
				    i < INFO_MOMENTS; i++)
				json_node(i ? ", " : "", g, moments[i]);
			fputs("]", stdout);
			json_bound("downset", ds_status == REMAT_BOUND_OK, ds_bound, status_name(ds_status));
			printf(", \"downset_size\": %d", (int)ds_size);
			json_bound("path", path_status == REMAT_BOUND_OK, path_bound,
				   path_status == REMAT_BOUND_NOT_TRIED && path_fork >= 0 ?
				   "more than one order" : status_name(path_status));
			json_node(", \"path_fork\": ", g, path_fork);
			printf(", \"lp_seconds\": %.3f, \"cut_seconds\": %.3f, "
			       "\"window_seconds\": %.3f, \"downset_seconds\": %.3f, "
			       "\"path_seconds\": %.3f", lp_time, cut_time, win_time, ds_time,
			       path_time);
		}
		printf(", \"kinds\": {\"input\": %d, \"forward\": %d, \"loss\": %d, "
		       "\"backward\": %d, \"op\": %d}, \"training\": %s, "
		       "\"stages\": %d, \"largest_stage_nodes\": %d, \"cuts_stages\": %d, "
		       "\"cuts_largest_stage_nodes\": %d, \"cuts_widest\": %d, "
		       "\"cuts_passing\": %d}\n",
		       counts[REMAT_KIND_INPUT], counts[REMAT_KIND_FORWARD],
		       counts[REMAT_KIND_LOSS], counts[REMAT_KIND_BACKWARD],
		       counts[REMAT_KIND_OP], g->n_backward ? "true" : "false",
		       chain->n_stages, chain->largest_nodes, cuts->n_stages,
		       cuts->largest_nodes, cuts->widest_cut, cuts->n_passing);
	} else {
		remat_format_bytes(g->total_mem, b1, sizeof(b1));
		remat_format_bytes(g->no_remat_peak, b2, sizeof(b2));
		remat_format_bytes(g->min_peak_lower_bound, b3, sizeof(b3));
		printf("graph          %s (%s)\n", cli_safe(g->name),
		       cli_safe(remat_i_input_name(argv[0])));
		printf("nodes          %d: %d input, %d forward, %d loss, %d backward, %d op\n",
		       g->n, counts[REMAT_KIND_INPUT], counts[REMAT_KIND_FORWARD],
		       counts[REMAT_KIND_LOSS], counts[REMAT_KIND_BACKWARD],
		       counts[REMAT_KIND_OP]);
		printf("edges          %lld\n", (long long)g->n_edges);
		printf("outputs        %d\n", g->n_outputs);
		printf("graph kind     %s\n", g->n_backward ? "training (has backward nodes)"
		       : "inference (no backward nodes)");
		printf("total memory   %-14s (%lld bytes)\n", b1, (long long)g->total_mem);
		printf("no-remat peak  %-14s (%lld bytes)\n", b2, (long long)g->no_remat_peak);
		if (g->fixed_bytes >= 0) {
			char b4[32];

			remat_format_bytes(g->fixed_bytes, b4, sizeof(b4));
			printf("fixed memory   %-14s (%lld bytes held outside the graph; a device "
			       "needs the no-remat peak plus this)\n", b4, (long long)g->fixed_bytes);
		}
		if (order_late)
			printf("best order     not computed (no time left %.3g s after the start; "
			       "see --time-limit)\n", deadline - t0);
		if (order_peak >= 0) {
			char b4[32];

			remat_format_bytes(order_peak, b4, sizeof(b4));
			printf("best order     %-14s (%lld bytes; no-remat peak of the lowest order "
			       "'remat order' finds, %+.1f%%)\n", b4, (long long)order_peak,
			       g->no_remat_peak > 0 ? 100.0 * ((double)order_peak /
							       (double)g->no_remat_peak - 1) : 0.0);
		}
		printf("lower bound    %-14s (%lld bytes; no schedule computing every node peaks "
		       "lower)\n", b3,
		       (long long)g->min_peak_lower_bound);
		if (cut_peak > g->min_peak_lower_bound) {
			char b4[32];

			remat_format_bytes(cut_peak, b4, sizeof(b4));
			printf("cut peak bound %-14s (%lld bytes, %.1f%% of the no-remat peak; no "
			       "schedule peaks lower: %s%s%s)\n", b4, (long long)cut_peak,
			       g->no_remat_peak > 0 ?
			       100.0 * (double)cut_peak / (double)g->no_remat_peak : 0.0,
			       peak_at == -2 ? "the outputs, all resident at the end" :
			       "what must stay while ", peak_at == -2 ? "" :
			       peak_at >= 0 ? g->id[peak_at] : "?",
			       peak_at == -2 ? "" : " first runs");
		}
		cli_format_cost(g->baseline_cost, b1, sizeof(b1));
		printf("baseline cost  %s %s\n", b1, g->cost_unit);
		if (chain->largest >= 0) {
			const struct remat_stage *st = &chain->stages[chain->largest];

			printf("chain stages   %d (largest: stage %d, %d nodes", chain->n_stages,
			       chain->largest + 1, chain->largest_nodes);
			if (st->n_fwd > 0)
				printf(", '%s' to '%s'", g->id[chain->fwd[st->fwd_off]],
				       g->id[chain->fwd[st->fwd_off + st->n_fwd - 1]]);
			printf(")\n");
		} else {
			printf("chain stages   0\n");
		}
		if (cuts->largest >= 0 && cuts->n_stages > chain->n_stages) {
			remat_format_bytes(cuts->passing_mem, b1, sizeof(b1));
			printf("chain cuts     %d stages with cuts of up to %d value%s (largest: "
			       "stage %d, %d nodes", cuts->n_stages, cuts->widest_cut,
			       cuts->widest_cut == 1 ? "" : "s",
			       cuts->largest + 1, cuts->largest_nodes);
			if (cuts->n_passing > 0)
				printf("; %d values passing to a gather, %s", cuts->n_passing, b1);
			printf(")\n");
		}
		if (width >= -1)
			printf("tree width     %d (min-fill heuristic, an upper bound on the "
			       "treewidth)\n", width);
		else if (width_late)
			printf("tree width     not computed (not done %.3g s after the start; "
			       "see --time-limit)\n", deadline - t0);
		if (budget_opt.given) {
			remat_format_bytes(budget, b1, sizeof(b1));
			cli_format_cost(lp_bound, b2, sizeof(b2));
			if (lp_status == 0)
				printf("LP bound       %s %s at %s (checkmate model: no schedule "
				       "whose first computations follow the file's order costs "
				       "less)\n", b2, g->cost_unit, b1);
			else if (lp_status == 1)
				printf("LP bound       none at %s: no schedule whose first "
				       "computations follow the file's order fits\n", b1);
			else if (lp_seconds <= 0)
				printf("LP bound       not computed at %s: no time left (see "
				       "--time-limit)\n", b1);
			else
				printf("LP bound       not computed at %s: the LP would take over "
				       "%.3g s\n", b1, lp_seconds);
			if (cut_status == REMAT_BOUND_OK) {
				double floor = remat_bound_least_cost(g);

				cli_format_cost(cut_bound, b2, sizeof(b2));
				printf("cut bound      %s %s at %s (%+.2f%% over each needed node once; "
				       "any order", b2, g->cost_unit, b1,
				       floor > 0 ? 100 * (cut_bound / floor - 1) : 0.0);
				if (cut_at >= 0)
					printf(": at the first computation of %s", g->id[cut_at]);
				printf(")\n");
			} else if (cut_status == REMAT_BOUND_INFEASIBLE) {
				if (cut_at >= 0)
					printf("cut bound      none at %s: no schedule fits (at the first "
					       "computation of %s)\n", b1, g->id[cut_at]);
				else
					printf("cut bound      none at %s: no schedule fits (the outputs "
					       "alone, all held at the end, exceed it)\n", b1);
			} else {
				printf("cut bound      not computed at %s: no time left (see "
				       "--time-limit)\n", b1);
			}
			if (win_status == REMAT_BOUND_OK && cut_status == REMAT_BOUND_OK &&
			    win_bound <= cut_bound) {
				printf("window bound   no more than the cut bound at %s (%.2f s)\n", b1,
				       win_time);
			} else if (win_status == REMAT_BOUND_OK) {
				double floor = remat_bound_least_cost(g);

				cli_format_cost(win_bound, b2, sizeof(b2));
				printf("window bound   %s %s at %s (%+.2f%% over each needed node once; "
				       "any order", b2, g->cost_unit, b1,
				       floor > 0 ? 100 * (win_bound / floor - 1) : 0.0);
				for (i = 0; i < n_moments && i < INFO_MOMENTS; i++)
					printf("%s%s", i ? ", " :
					       ": windows between the first computations of ",
					       g->id[moments[i]]);
				if (n_moments > INFO_MOMENTS)
					printf(" and %d more", (int)(n_moments - INFO_MOMENTS));
				printf("; %.2f s)\n", win_time);
			} else if (win_status == REMAT_BOUND_INFEASIBLE) {
				printf("window bound   none at %s: no schedule fits\n", b1);
			} else {
				printf("window bound   not computed at %s: no time left (see "
				       "--time-limit)\n", b1);
			}
			if (ds_status == REMAT_BOUND_OK && ds_size == 0) {
				printf("down-set bound no more than the least cost at %s (%.2f s)\n", b1,
				       ds_time);
			} else if (ds_status == REMAT_BOUND_OK) {
				double floor = remat_bound_least_cost(g);

				cli_format_cost(ds_bound, b2, sizeof(b2));
				printf("down-set bound %s %s at %s (%+.2f%% over each needed node once; "
				       "any order: when the last of %d nodes, each with its inputs, "
				       "first runs; %.2f s)\n", b2, g->cost_unit, b1,
				       floor > 0 ? 100 * (ds_bound / floor - 1) : 0.0, (int)ds_size,
				       ds_time);
			} else if (ds_status == REMAT_BOUND_INFEASIBLE) {
				printf("down-set bound none at %s: no schedule fits\n", b1);
			} else {
				printf("down-set bound not computed at %s: no time left (see "
				       "--time-limit)\n", b1);
			}
			if (path_status == REMAT_BOUND_OK) {
				double floor = remat_bound_least_cost(g);

				cli_format_cost(path_bound, b2, sizeof(b2));
				printf("path bound     %s %s at %s (%+.2f%% over each needed node once; "
				       "any order: the nodes lie on one path, each first computation "
				       "a moment; %.2f s)\n", b2, g->cost_unit, b1,
				       floor > 0 ? 100 * (path_bound / floor - 1) : 0.0, path_time);
			} else if (path_status == REMAT_BOUND_INFEASIBLE) {
				printf("path bound     none at %s: no schedule fits\n", b1);
			} else if (path_fork >= 0) {
				printf("path bound     not tried at %s: more than one order (%s need not "
				       "follow the node before it)\n", b1, g->id[path_fork]);
			} else {
				printf("path bound     not computed at %s: no time left (see "
				       "--time-limit), or a model of over 400,000 columns\n", b1);
			}
		}
	}
	remat_chain_free(chain);
	remat_chain_free(cuts);
	remat_graph_free(g);
	return CLI_EXIT_OK;
}
