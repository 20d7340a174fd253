/*
 * test_lns.c - large-neighbourhood search on the Checkmate model
 * (src/plan/lns.c), the interval pass (src/plan/interval_pass.c), the lns
 * planner, and planning in other node orders (req->order): never worse
 * than the start, never below the exhaustive optimum, optimal where it
 * says so, the same answer twice.
 */
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "exhaustive.h"
#include "randdag.h"
#include "analysis/needed.h"
#include "plan/interval_pass.h"
#include "plan/lns.h"
#include "plan/request.h"
#include "plan/replay_search.h"
#include "plan/seq_moves.h"

static struct remat_sim_result sim(const struct remat_graph *g, const struct remat_schedule *s,
				   int64_t budget)
{
	struct remat_sim_result r;
	struct remat_error err;

	assert_int_equal(remat_simulate(g, s, budget, NULL, &r, &err), REMAT_OK);
	return r;
}

/*
 * A start at budget: the costliest schedule any of a few fast planners
 * finds (so that there is something to improve).  0 when none fits.
 */
static int start_at(const struct remat_graph *g, int64_t budget, struct remat_schedule *s)
{
	static const char *const names[] = { "twremat", "dtr", "greedy", "chen", "chen-greedy" };
	struct remat_plan_request req;
	struct remat_sim_result r;
	struct remat_schedule c;
	struct remat_error err;
	double worst = -1;
	int i;

	memset(&req, 0, sizeof(req));
	req.graph = g;
	req.budget = budget;
	remat_schedule_init(&c);
	for (i = 0; i < 5; i++)
		if (remat_plan_run(remat_planner_find(names[i]), &req, &c, &r, &err) == REMAT_OK &&
		    r.cost > worst) {
			worst = r.cost;
			assert_int_equal(remat_schedule_copy(s, &c, &err), REMAT_OK);
		}
	remat_schedule_release(&c);
	return worst >= 0;
}

/*
 * The small graphs of the random tests: for odd trials a random DAG of 5
 * to 4 + dag_span nodes, for even ones a training chain of 4 to 6 layers
 * (where recomputing pays).
 */
static char *mixed_graph(uint64_t *st, int trial, int dag_span)
{
	int n = trial % 2 ? 5 + (int)(tu_rand(st) % (uint64_t)dag_span)
		: 4 + (int)(tu_rand(st) % 3);

	return trial % 2 ? random_dag_out(st, n, 1) : tu_random_graph_json(st, n, 0.1, 1);
}

/*
 * A budget between g's least peak and its no-remat peak, the costliest
 * fast planner's schedule there in *start, and g reordered by that
 * schedule's first computations in *h (for the exhaustive optimum in its
 * order).  0 when the budget covers the no-remat peak or nothing fits.
 */
static int start_case(uint64_t *st, struct remat_graph *g, int64_t *budget,
		      struct remat_schedule *start, struct remat_graph **h)
{
	int64_t lo = g->min_peak_lower_bound, hi = g->no_remat_peak;
	struct remat_error err;
	int32_t order[32];

	*budget = lo + (hi - lo) * (int64_t)(tu_rand(st) % 4) / 10;
	if (*budget >= hi || !start_at(g, *budget, start))
		return 0;
	assert_int_equal(remat_order_from_schedule(g, start, order, &err), REMAT_OK);
	assert_int_equal(remat_graph_reorder(g, order, h, &err), REMAT_OK);
	return 1;
}

/*
 * From the costliest fast planner's schedule at budgets between the least peak and the
 * no-remat peak: each window re-solve keeps the schedule valid, within
 * budget and never costlier (checked after every number of windows), and
 * never below the optimum in the start's order (exhaustive search on the
 * graph reordered by it); a search that proves its answer has exactly
 * that optimum.
 */
static void test_windows_never_worse(void **state)
{
	uint64_t st = 2024;
	int trial, proven = 0, improved = 0, runs = 0;

	(void)state;
	for (trial = 0; trial < 60; trial++) {
		char *json = mixed_graph(&st, trial, 8);
		struct remat_graph *g = tu_graph(json), *h = NULL;
		int64_t budget;
		struct remat_schedule start, out;
		struct remat_plan_request req;
		struct remat_i_lns_opts o;
		struct remat_i_lns_stats s;
		struct remat_error err;
		double prev, opt;
		int64_t w;

		remat_schedule_init(&start);
		remat_schedule_init(&out);
		if (!start_case(&st, g, &budget, &start, &h)) {
			remat_schedule_release(&start);
			remat_graph_free(g);
			free(json);
			continue;
		}
		runs++;
		/* The optimum in the start's order. */
		opt = exhaustive_min_cost_in_order(h, budget);
		assert_true(opt >= 0);
		memset(&req, 0, sizeof(req));
		req.graph = g;
		req.budget = budget;
		prev = sim(g, &start, budget).cost;
		for (w = 1; w <= 6; w++) {
			struct remat_sim_result r;

			remat_i_lns_opts_init(&o, "test");
			o.window = 2;
			o.max_windows = w;
			o.replay_share = 0; /* windows only: they stay in the start's order */
			o.swap_share = 0;   /* (an exchange may move a first computation) */
			/*
			 * Each window stops at its node limit, never at a clock:
			 * on a busy machine a window cut by window_seconds could
			 * make w + 1 windows costlier than w.
			 */
			o.window_seconds = 600;
			assert_int_equal(remat_i_lns_improve(&req, &start, &o, &out, &s, &err),
					 REMAT_OK);
			r = sim(g, &out, budget);
			assert_true(r.valid && r.feasible);
			assert_true(r.cost <= s.start_cost + 1e-9);
			assert_true(fabs(r.cost - s.cost) < 1e-9);
			/* More windows: never costlier (the same windows first). */
			assert_true(r.cost <= prev + 1e-9);
			assert_true(r.cost >= opt - 1e-9);
			prev = r.cost;
		}
		/* Without a cap it runs until it stops improving, or proves. */
		remat_i_lns_opts_init(&o, "test");
		o.replay_share = 0;
		o.swap_share = 0;
		assert_int_equal(remat_i_lns_improve(&req, &start, &o, &out, &s, &err), REMAT_OK);
		assert_true(s.cost >= opt - 1e-9);
		if (s.proven) {
			assert_true(fabs(s.cost - opt) < 1e-9);
			proven++;
		}
		improved += s.cost < s.start_cost - 1e-9;
		remat_schedule_release(&start);
		remat_schedule_release(&out);
		remat_graph_free(h);
		remat_graph_free(g);
		free(json);
	}
	print_message("lns: %d starts, %d improved, %d proven optimal in their order\n", runs,
		      improved, proven);
	assert_true(runs >= 20);
	assert_true(improved >= 5);
	assert_true(proven >= runs / 2);
}

/*
 * The lns planner and auto, in the file's order and in the best order,
 * against the exhaustive optimum over all schedules: valid, within
 * budget, never below it; lns the same twice (its windows are capped).
 */
static void test_planners_against_exhaustive(void **state)
{
	uint64_t st = 99;
	int trial, m, exact = 0, runs = 0, order_wins = 0;

	(void)state;
	for (trial = 0; trial < 24; trial++) {
		int n = 5 + (int)(tu_rand(&st) % 7);
		char *json = random_dag_out(&st, n, 1);
		struct remat_graph *g = tu_graph(json);
		int64_t lo = g->min_peak_lower_bound, hi = g->no_remat_peak;
		int64_t budget = lo + (hi - lo) * (int64_t)(tu_rand(&st) % 4) / 4;
		double best = exhaustive_min_cost(g, budget), in_file = -1;
		struct remat_kv opt = { "lns-windows", "8" };


		for (m = 0; m < 4; m++) {
			const struct remat_planner *p = remat_planner_find(m < 2 ? "lns" : "auto");
			struct remat_plan_request req;
			struct remat_schedule s, s2;
			struct remat_sim_result r, r2;
			struct remat_error err;
			int rc;

			memset(&req, 0, sizeof(req));
			req.graph = g;
			req.budget = budget;
			req.order = m % 2 ? REMAT_ORDER_BEST : REMAT_ORDER_FILE;
			req.options = &opt;
			req.n_options = 1;
			remat_schedule_init(&s);
			remat_schedule_init(&s2);
			rc = remat_plan_run(p, &req, &s, &r, &err);
			if (best == -1) {
				assert_int_equal(rc, REMAT_ENOFIT);
			} else if (best < 0) {
				/* too large for the exhaustive search */
			} else if (rc == REMAT_OK) {
				assert_true(r.valid && r.feasible);
				assert_true(r.cost >= best - 1e-9);
				runs++;
				exact += fabs(r.cost - best) < 1e-9;
				if (m == 2)
					in_file = r.cost;
				if (m == 3 && in_file >= 0 && r.cost < in_file - 1e-9)
					order_wins++;
				if (m == 3 && in_file >= 0)
					/* auto plans in the file's order too: never worse */
					assert_true(r.cost <= in_file + 1e-9);
				if (m < 2) {
					assert_int_equal(remat_plan_run(p, &req, &s2, &r2, &err), REMAT_OK);
					assert_true(s.n == s2.n);
					assert_memory_equal(s.steps, s2.steps, sizeof(*s.steps) * s.n);
				}
			} else {
				assert_int_equal(rc, REMAT_ENOFIT);
			}
			remat_schedule_release(&s);
			remat_schedule_release(&s2);
		}
		remat_graph_free(g);
		free(json);
	}
	print_message("lns/auto: %d plans, %d at the global optimum; the best order beat the "
		      "file's %d times\n", runs, exact, order_wins);
	assert_true(runs >= 40);
	assert_true(exact >= runs / 2);
}

/*
 * A poor file order (a1 b1 a2 b2 c: both 10s at once, peak 21): at a
 * budget of 12 the file's order must recompute, the best order need not.
 */
static void test_order_poor_file(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"a1\",\"mem\":10,\"inputs\":[\"x\"]},"
		"{\"id\":\"b1\",\"mem\":10,\"inputs\":[\"x\"]},"
		"{\"id\":\"a2\",\"mem\":1,\"inputs\":[\"a1\"]},"
		"{\"id\":\"b2\",\"mem\":1,\"inputs\":[\"b1\"]},"
		"{\"id\":\"c\",\"mem\":1,\"inputs\":[\"a2\",\"b2\"]}]}");
	struct remat_plan_request req;
	struct remat_plan_report rep;
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;
	const char *names[] = { "checkmate", "twremat", "auto", "lns" };
	int i;

	(void)state;
	remat_schedule_init(&s);
	assert_true(exhaustive_min_cost(g, 12) == 5);
	for (i = 0; i < 4; i++) {
		memset(&req, 0, sizeof(req));
		remat_plan_report_init(&rep);
		req.graph = g;
		req.budget = 12;
		req.report = &rep;
		req.order = REMAT_ORDER_BEST;
		assert_int_equal(remat_plan_run(remat_planner_find(names[i]), &req, &s, &r, &err),
				 REMAT_OK);
		assert_true(r.feasible && r.cost == 5 && r.recomputes == 0);
		/*
		 * checkmate in the file's order without a warm start: its MILP's
		 * optimum there, which recomputes.  With one, a fast planner's
		 * schedule in the better order wins, and the note says so.
		 */
		req.order = REMAT_ORDER_FILE;
		if (i == 0) {
			struct remat_kv off = { "warm-start", "off" };

			assert_int_equal(remat_plan_run(remat_planner_find(names[i]), &req, &s, &r,
							&err), REMAT_OK);
			assert_true(r.cost == 5);
			assert_non_null(strstr(rep.note, "'s schedule: it computes every needed node once"));
			req.options = &off;
			req.n_options = 1;
			assert_int_equal(remat_plan_run(remat_planner_find(names[i]), &req, &s, &r,
							&err), REMAT_OK);
			assert_true(fabs(r.cost - exhaustive_min_cost_in_order(g, 12)) < 1e-9);
			req.options = NULL;
			req.n_options = 0;
		}
	}
	assert_true(exhaustive_min_cost_in_order(g, 12) > 5);
	/* 'none' is the reference: it keeps the file's order, whatever is asked. */
	req.order = REMAT_ORDER_BEST;
	req.budget = 21;
	assert_int_equal(remat_plan_run(remat_planner_find("none"), &req, &s, &r, &err), REMAT_OK);
	assert_int_equal(r.peak_mem, 21);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/* A topological order of g that runs the highest-indexed ready node first. */
static int32_t *kahn_reverse(const struct remat_graph *g)
{
	int32_t *ord = malloc(sizeof(int32_t) * ((size_t)g->n + 1)), n = 0, v, k;
	uint8_t *done = calloc((size_t)g->n + 1, 1);

	assert_non_null(ord);
	assert_non_null(done);
	while (n < g->n) {
		for (v = g->n - 1; v >= 0; v--) {
			if (done[v])
				continue;
			for (k = g->in_off[v]; k < g->in_off[v + 1] && done[g->in_idx[k]]; k++)
				;
			if (k == g->in_off[v + 1])
				break;
		}
		assert_true(v >= 0);
		done[v] = 1;
		ord[n++] = v;
	}
	free(done);
	return ord;
}

/*
 * The order search by replay (src/plan/replay_search.c) on random DAGs and
 * training chains at budgets between the least peak and the no-remat
 * peak, from the file's order: whenever it returns a schedule, the
 * simulator finds it valid and within the budget, its cost is what the
 * search reports, never above the first order's replay, never below the
 * exhaustive optimum over all schedules.  Where no schedule fits it
 * gives up (REMAT_ENOFIT); it may give up where one does too (the replay
 * is a heuristic): counted, at most a quarter.  The same answer twice.
 */
static void test_replay_search_brute_force(void **state)
{
	uint64_t st = 7;
	int trial, runs = 0, found = 0, optimal = 0, better = 0, twice = 0;

	(void)state;
	for (trial = 0; trial < 80; trial++) {
		char *json = mixed_graph(&st, trial, 9);
		struct remat_graph *g = tu_graph(json);
		int64_t lo = g->min_peak_lower_bound, hi = g->no_remat_peak;
		int64_t budget = lo + (hi - lo) * (int64_t)(tu_rand(&st) % 5) / 5;
		double best = exhaustive_min_cost(g, budget);
		struct remat_i_replay_search_stats s, s2;
		const int32_t *topo = g->topo;
		struct remat_plan_request req;
		struct remat_schedule out, out2;
		struct remat_error err;
		int rc;

		remat_schedule_init(&out);
		remat_schedule_init(&out2);
		memset(&req, 0, sizeof(req));
		req.graph = g;
		req.budget = budget;
		req.seed = 1 + (uint64_t)trial;
		rc = remat_i_replay_search(&req, "test", &topo, 1, 1, 0, 200, 0, HUGE_VAL, 0, 0, 0, &out, &s,
					   &err);
		if (best == -1) {
			assert_int_equal(rc, REMAT_ENOFIT); /* nothing fits: nor does a replay */
		} else if (best >= 0) {
			runs++;
			assert_true(rc == REMAT_OK || rc == REMAT_ENOFIT);
			if (rc == REMAT_OK) {
				struct remat_sim_result r = sim(g, &out, budget), r2;

				found++;
				assert_true(r.valid && r.feasible);
				assert_true(fabs(r.cost - s.cost) < 1e-9);
				assert_true(s.cost <= s.start_cost);
				assert_true(r.cost >= best - 1e-9);
				assert_true(s.evals >= 1);
				optimal += fabs(r.cost - best) < 1e-9;
				better += s.cost < s.start_cost - 1e-9;
				/* Deterministic for a seed (no deadline). */
				assert_int_equal(remat_i_replay_search(&req, "test", &topo, 1, 1, 0, 200, 0,
								       HUGE_VAL, 0, 0, 0, &out2, &s2, &err), REMAT_OK);
				assert_true(out.n == out2.n && s.evals == s2.evals);
				assert_memory_equal(out.steps, out2.steps, sizeof(*out.steps) * out.n);
				/*
				 * Two climbers: climber 0 is the run above, so never
				 * costlier; valid, and deterministic too.
				 */
				assert_int_equal(remat_i_replay_search(&req, "test", &topo, 1, 2, 0, 200, 0,
								       HUGE_VAL, 0, 0, 0, &out2, &s2, &err), REMAT_OK);
				r2 = sim(g, &out2, budget);
				assert_true(r2.valid && r2.feasible);
				assert_true(fabs(r2.cost - s2.cost) < 1e-9);
				assert_true(s2.cost <= s.cost + 1e-9 && s2.cost >= best - 1e-9);
				assert_true(s2.evals >= s.evals);
				twice += s2.cost < s.cost - 1e-9;
				{
					struct remat_i_replay_search_stats s3;
					struct remat_schedule out3;

					remat_schedule_init(&out3);
					assert_int_equal(remat_i_replay_search(&req, "test", &topo, 1, 2, 0,
									       200, 0, HUGE_VAL, 0, 0, 0, &out3,
									       &s3, &err), REMAT_OK);
					assert_true(out3.n == out2.n && s3.evals == s2.evals);
					assert_memory_equal(out3.steps, out2.steps,
							    sizeof(*out2.steps) * out2.n);
					remat_schedule_release(&out3);
				}
				/* max_evals caps it (three replays may all fail to fit). */
				rc = remat_i_replay_search(&req, "test", &topo, 1, 1, 3, 200, 0, HUGE_VAL, 0, 0, 0,
							   &out2, &s2, &err);
				assert_true(rc == REMAT_OK || rc == REMAT_ENOFIT);
				assert_true(s2.evals <= 3);
				/* A target nothing beats: a quarter of the stall limit. */
				rc = remat_i_replay_search(&req, "test", &topo, 1, 1, 0, 200, 0, -1, 0, 0,
							   0, &out2, &s2, &err);
				assert_true(rc == REMAT_OK || rc == REMAT_ENOFIT);
				assert_true(s2.evals <= 50);
				/*
				 * With restarts the climbers that give up begin again
				 * (Luby: 1, 1, 2, ... times stall / 16 replays), so
				 * only the cap of 300 replays a climber ends a search
				 * for a target nothing beats; what it returns is still the
				 * cheapest fitting replay it saw, never below the
				 * optimum, and deterministic for the seed.
				 */
				rc = remat_i_replay_search(&req, "test", &topo, 1, 2, 300, 200, 0, -1, 0, 0,
							   1, &out2, &s2, &err);
				assert_true(rc == REMAT_OK || rc == REMAT_ENOFIT);
				/* Each climber to the cap (the start's replay counted once), or no move at all. */
				assert_true(s2.evals == 1 + 2 * 299 || s2.evals == 1);
				if (rc == REMAT_OK) {
					r2 = sim(g, &out2, budget);
					assert_true(r2.valid && r2.feasible);
					assert_true(fabs(r2.cost - s2.cost) < 1e-9 &&
						    s2.cost >= best - 1e-9);
					assert_int_equal(remat_i_replay_search(&req, "test", &topo, 1, 2,
									       300, 200, 0, -1, 0, 0,
									       1, &out, &s,
									       &err), REMAT_OK);
					assert_true(out.n == out2.n && s.evals == s2.evals);
					assert_memory_equal(out.steps, out2.steps,
							    sizeof(*out.steps) * out.n);
				}
				/*
				 * Two orders (the file's and the reverse-priority
				 * Kahn order): the rounds also begin from the other
				 * one, each such start a replay the cap counts; the
				 * same guarantees, and the same answer twice.
				 */
				{
					const int32_t *two[2];
					int32_t *rev = kahn_reverse(g);

					two[0] = g->topo;
					two[1] = rev;
					rc = remat_i_replay_search(&req, "test", two, 2, 2, 300, 200, 0, -1,
								   0, 0, 1, &out2, &s2, &err);
					assert_true(rc == REMAT_OK || rc == REMAT_ENOFIT);
					assert_true(s2.evals <= 3 + 2 * 298);
					if (rc == REMAT_OK) {
						r2 = sim(g, &out2, budget);
						assert_true(r2.valid && r2.feasible);
						assert_true(fabs(r2.cost - s2.cost) < 1e-9 &&
							    s2.cost >= best - 1e-9);
					}
					assert_int_equal(remat_i_replay_search(&req, "test", two, 2, 2, 300,
									       200, 0, -1, 0, 0, 1, &out,
									       &s, &err), rc);
					assert_true(s.evals == s2.evals);
					if (rc == REMAT_OK) {
						assert_true(out.n == out2.n && s.cost == s2.cost);
						assert_memory_equal(out.steps, out2.steps,
								    sizeof(*out.steps) * out.n);
					}
					free(rev);
				}
			}
		}
		remat_schedule_release(&out);
		remat_schedule_release(&out2);
		remat_graph_free(g);
		free(json);
	}
	print_message("replay search: %d graphs with a schedule, %d found one, %d optimal, "
		      "%d cheaper than the first order's replay, %d cheaper with two climbers\n",
		      runs, found, optimal, better, twice);
	assert_true(runs >= 40);
	assert_true(found >= runs * 3 / 4);
	assert_true(optimal >= found / 2);
}

/* anc[x] = 1 when x is an ancestor of v (by a walk over the inputs). */
static void ancestors(const struct remat_graph *g, int32_t v, uint8_t *anc)
{
	int32_t *stack = malloc(sizeof(int32_t) * ((size_t)g->n + 1)), sp = 0, k;

	assert_non_null(stack);
	memset(anc, 0, (size_t)g->n);
	stack[sp++] = v;
	while (sp > 0) {
		int32_t x = stack[--sp];

		for (k = g->in_off[x]; k < g->in_off[x + 1]; k++)
			if (!anc[g->in_idx[k]]) {
				anc[g->in_idx[k]] = 1;
				stack[sp++] = g->in_idx[k];
			}
	}
	free(stack);
}

/*
 * The order search's moves (src/plan/seq_moves.c) on random DAGs, each
 * from a random topological order: a block move of seq[i] to j gives
 * exactly the sequence worked out here from the definition (the
 * ancestors of seq[i] placed in j..i-1, found by a walk over the whole
 * graph, go first with it; for j > i the descendants, found the same
 * way, go last), stays topological with pos in step, and undo restores
 * the sequence; so does a plain move's.
 */
static void test_seq_moves(void **state)
{
	uint64_t st = 11;
	int trial, moved_along = 0;

	(void)state;
	for (trial = 0; trial < 60; trial++) {
		int n = 3 + (int)(tu_rand(&st) % 30);
		char *json = random_dag_out(&st, n, trial % 2);
		struct remat_graph *g = tu_graph(json);
		struct remat_i_seq S;
		uint8_t *keep = malloc((size_t)g->n), *anc = malloc((size_t)g->n),
			*desc = malloc((size_t)g->n);
		int32_t *before = malloc(sizeof(int32_t) * (size_t)g->n);
		int32_t *want = malloc(sizeof(int32_t) * (size_t)g->n);
		int32_t v, i, j, p, q, w, rep;

		assert_true(keep && anc && desc && before && want);
		assert_int_equal(remat_i_seq_init(&S, g), 0);
		for (v = 0; v < g->n; v++)
			keep[v] = g->kind[v] != REMAT_KIND_INPUT || tu_rand(&st) % 2;
		remat_i_seq_load(&S, keep, g->topo);
		for (rep = 0; rep < 200 && S.m > 1; rep++) {
			int block = rep % 3 != 0;

			i = (int32_t)(tu_rand(&st) % (uint64_t)S.m);
			j = (int32_t)(tu_rand(&st) % (uint64_t)S.m);
			if (i == j)
				continue;
			memcpy(before, S.seq, sizeof(int32_t) * (size_t)S.m);
			v = S.seq[i];
			/* The expected sequence. */
			ancestors(g, v, anc);
			memset(desc, 0, (size_t)g->n);
			for (w = 0; w < g->n; w++) {
				ancestors(g, w, keep); /* keep is rebuilt below */
				desc[w] = keep[v];
			}
			for (w = 0; w < g->n; w++)
				keep[w] = S.pos[w] >= 0;
			if (!block) {
				memcpy(want, before, sizeof(int32_t) * (size_t)S.m);
				if (j < i)
					memmove(want + j + 1, want + j, sizeof(int32_t) * (size_t)(i - j));
				else
					memmove(want + i, want + i + 1, sizeof(int32_t) * (size_t)(j - i));
				want[j] = v;
			} else {
				int32_t a = i < j ? i : j, b = i < j ? j : i;
				const uint8_t *along = j < i ? anc : desc;

				memcpy(want, before, sizeof(int32_t) * (size_t)S.m);
				q = a;
				for (p = a; p <= b; p++)
					if (j < i && (before[p] == v || along[before[p]]))
						want[q++] = before[p];
				for (p = a; p <= b; p++)
					if (!(before[p] == v || along[before[p]]))
						want[q++] = before[p];
				for (p = a; p <= b; p++)
					if (j > i && (before[p] == v || along[before[p]]))
						want[q++] = before[p];
				assert_int_equal(q, b + 1);
				for (p = a; p <= b; p++)
					moved_along += before[p] != v && along[before[p]];
			}
			if (block)
				remat_i_seq_block_move(&S, i, j);
			else
				remat_i_seq_move(&S, i, j);
			assert_memory_equal(S.seq, want, sizeof(int32_t) * (size_t)S.m);
			for (p = 0; p < S.m; p++)
				assert_int_equal(S.pos[S.seq[p]], p);
			if (block) {
				/* Topological still (a plain move need not be). */
				for (p = 0; p < S.m; p++)
					for (q = g->in_off[S.seq[p]]; q < g->in_off[S.seq[p] + 1]; q++)
						assert_true(S.pos[g->in_idx[q]] < p);
			}
			if (!block || rep % 2) {
				remat_i_seq_undo(&S, i < j ? i : j, i < j ? j : i);
				assert_memory_equal(S.seq, before, sizeof(int32_t) * (size_t)S.m);
				for (p = 0; p < S.m; p++)
					assert_int_equal(S.pos[S.seq[p]], p);
			}
		}
		remat_i_seq_release(&S);
		free(keep);
		free(anc);
		free(desc);
		free(before);
		free(want);
		remat_graph_free(g);
		free(json);
	}
	print_message("sequence moves: %d nodes moved along with the one moved\n", moved_along);
	assert_true(moved_along > 100);
}

/*
 * LNS with the order search first: never costlier than its start, never
 * below the exhaustive optimum over all schedules, valid and within the
 * budget; its stats agree with the simulator.
 */
static void test_lns_with_replay_never_worse(void **state)
{
	uint64_t st = 31;
	int trial, runs = 0, cheaper = 0;

	(void)state;
	for (trial = 0; trial < 40; trial++) {
		char *json = mixed_graph(&st, trial, 8);
		struct remat_graph *g = tu_graph(json);
		int64_t lo = g->min_peak_lower_bound, hi = g->no_remat_peak, budget;
		struct remat_schedule start, out;
		struct remat_plan_request req;
		struct remat_i_lns_opts o;
		struct remat_i_lns_stats s;
		struct remat_sim_result r;
		struct remat_error err;
		double best;

		remat_schedule_init(&start);
		remat_schedule_init(&out);
		budget = lo + (hi - lo) * (int64_t)(tu_rand(&st) % 4) / 10;
		best = exhaustive_min_cost(g, budget);
		if (budget >= hi || best < 0 || !start_at(g, budget, &start)) {
			remat_schedule_release(&start);
			remat_graph_free(g);
			free(json);
			continue;
		}
		runs++;
		memset(&req, 0, sizeof(req));
		req.graph = g;
		req.budget = budget;
		remat_i_lns_opts_init(&o, "test");
		o.replay_stall = 100;
		o.max_windows = 4;
		assert_int_equal(remat_i_lns_improve(&req, &start, &o, &out, &s, &err), REMAT_OK);
		r = sim(g, &out, budget);
		assert_true(r.valid && r.feasible);
		assert_true(fabs(r.cost - s.cost) < 1e-9);
		assert_true(s.cost <= s.start_cost + 1e-9);
		assert_true(fabs(sim(g, &start, budget).cost - s.start_cost) < 1e-9);
		assert_true(r.cost >= best - 1e-9);
		cheaper += s.replay_cost < s.start_cost - 1e-9;
		remat_schedule_release(&start);
		remat_schedule_release(&out);
		remat_graph_free(g);
		free(json);
	}
	print_message("lns with the order search: %d starts, the search beat %d\n", runs,
		      cheaper);
	assert_true(runs >= 15);
}

/*
 * The interval pass (interval_pass.c) from the costliest fast planner's
 * schedule, at budgets between the least peak and the no-remat peak: the
 * start maps into the model exactly (no row relaxed, none broken); what
 * it keeps is valid, within budget, cheaper, and never below the optimum
 * in the start's order (exhaustive search on the graph reordered by it),
 * which it reaches on part of the graphs.  Started from that optimum's
 * own schedule (explicit frees, recomputations anywhere) it maps too and
 * finds nothing cheaper.
 */
static void test_interval_pass(void **state)
{
	uint64_t st = 4711;
	int trial, runs = 0, improved = 0, reached = 0;

	(void)state;
	for (trial = 0; trial < 60; trial++) {
		char *json = mixed_graph(&st, trial, 8);
		struct remat_graph *g = tu_graph(json), *h = NULL;
		int64_t budget;
		struct remat_schedule start, out, path;
		struct remat_plan_request req;
		struct remat_i_interval_stats is;
		struct remat_error err;
		double opt, before, after;
		int kept;

		remat_schedule_init(&start);
		remat_schedule_init(&out);
		remat_schedule_init(&path);
		if (!start_case(&st, g, &budget, &start, &h)) {
			remat_schedule_release(&start);
			remat_graph_free(g);
			free(json);
			continue;
		}
		runs++;
		opt = exhaustive_min_cost_in_order_path(h, budget, &path);
		assert_true(opt >= 0);
		memset(&req, 0, sizeof(req));
		req.graph = g;
		req.budget = budget;
		before = sim(g, &start, budget).cost;
		assert_int_equal(remat_i_interval_pass(&req, &start, 0, 1000000, 100000000, &out,
						       &kept, &is, &err), REMAT_OK);
		assert_int_equal(is.unmapped, 0);
		assert_int_equal(is.relaxed, 0);
		assert_true(is.cols > 0 || before <= remat_i_least_cost(g) + 1e-9);
		after = before;
		if (kept) {
			struct remat_sim_result r = sim(g, &out, budget);

			assert_true(r.valid && r.feasible);
			assert_true(r.cost < before);
			after = r.cost;
			improved++;
		}
		assert_true(after >= opt - 1e-9);
		reached += fabs(after - opt) < 1e-9;
		/* From the optimum in that order: it maps, and nothing is cheaper. */
		req.graph = h;
		assert_int_equal(remat_i_interval_pass(&req, &path, 0, 1000000, 100000000, &out,
						       &kept, &is, &err), REMAT_OK);
		assert_int_equal(is.unmapped, 0);
		assert_int_equal(is.relaxed, 0);
		assert_int_equal(kept, 0);
		remat_schedule_release(&start);
		remat_schedule_release(&out);
		remat_schedule_release(&path);
		remat_graph_free(h);
		remat_graph_free(g);
		free(json);
	}
	print_message("interval pass: %d starts, %d improved, %d at the optimum in their order\n",
		      runs, improved, reached);
	assert_true(runs >= 20);
	assert_true(improved >= 5);
	assert_true(reached >= runs / 2);
}

/*
 * The interval pass's default (lns.c, interval_share_now()): it runs when
 * a time limit leaves at least 100 s, not with a few seconds left nor
 * without a limit, nor when --lns-interval 0 turns it off, and
 * --lns-interval F is read as F.  (The far deadline is never reached:
 * the pass solves these small models whole, the order search, the swap
 * pass and all but two windows are off.)
 */
static void test_interval_default(void **state)
{
	uint64_t st = 99;
	int trial, runs = 0, ran = 0;
	struct remat_plan_request req;
	struct remat_i_lns_opts o;
	struct remat_kv *kv = NULL;
	struct remat_error err;

	(void)state;
	memset(&req, 0, sizeof(req));
	assert_int_equal(remat_i_lns_opts_read(&req, &o, "test", &err), REMAT_OK);
	assert_true(o.interval_share < 0);
	assert_int_equal(remat_i_request_with_option(&req, "lns-interval", "0.5", &kv, &err),
			 REMAT_OK);
	assert_int_equal(remat_i_lns_opts_read(&req, &o, "test", &err), REMAT_OK);
	assert_true(fabs(o.interval_share - 0.5) < 1e-12);
	free(kv);
	for (trial = 0; trial < 40; trial++) {
		char *json = mixed_graph(&st, trial, 8);
		struct remat_graph *g = tu_graph(json), *h = NULL;
		struct remat_schedule start, out;
		struct remat_i_lns_stats s;
		int64_t budget;
		int k;

		remat_schedule_init(&start);
		remat_schedule_init(&out);
		if (!start_case(&st, g, &budget, &start, &h) ||
		    sim(g, &start, budget).cost <= remat_i_least_cost(g) * (1 + 1e-9)) {
			remat_schedule_release(&start);
			remat_graph_free(h);
			remat_graph_free(g);
			free(json);
			continue;
		}
		runs++;
		memset(&req, 0, sizeof(req));
		req.graph = g;
		req.budget = budget;
		for (k = 0; k < 4; k++) {
			remat_i_lns_opts_init(&o, "test");
			o.replay_share = 0;
			o.swap_share = 0;
			o.max_windows = 2;
			if (k == 3)
				o.interval_share = 0; /* --lns-interval 0 */
			/* none, 5 s, 1,000 s, 1,000 s with the pass off */
			req.deadline = k == 0 ? 0 : remat_now() + (k == 1 ? 5 : 1000);
			assert_int_equal(remat_i_lns_improve(&req, &start, &o, &out, &s, &err),
					 REMAT_OK);
			assert_true(sim(g, &out, budget).feasible);
			if (k == 2) {
				assert_true(s.interval == 0 || s.interval == 1);
				ran += s.interval == 1;
			} else {
				assert_int_equal(s.interval, -1);
			}
		}
		remat_schedule_release(&start);
		remat_schedule_release(&out);
		remat_graph_free(h);
		remat_graph_free(g);
		free(json);
	}
	print_message("interval default: %d starts, the pass kept a cheaper schedule on %d\n",
		      runs, ran);
	assert_true(runs >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_windows_never_worse),
		cmocka_unit_test(test_interval_pass),
		cmocka_unit_test(test_interval_default),
		cmocka_unit_test(test_seq_moves),
		cmocka_unit_test(test_replay_search_brute_force),
		cmocka_unit_test(test_lns_with_replay_never_worse),
		cmocka_unit_test(test_planners_against_exhaustive),
		cmocka_unit_test(test_order_poor_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
