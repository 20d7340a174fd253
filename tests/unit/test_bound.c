/*
 * test_bound.c - the cut bound (remat_bound_cut, src/plan/bound_cut.c):
 * a lower bound on the cost of every schedule in every order.  Checked
 * against a graph worked by hand and against exhaustive search (which
 * shares no code with it) on small random graphs: never above the
 * optimum, "infeasible" only where no schedule fits.
 */
#include <math.h>
#include <string.h>

#include "testutil.h"
#include "exhaustive.h"
#include "randdag.h"
#include "analysis/needed.h"
#include "plan/path_model.h"
#include "plan/path_pass.h"
#include "solver/milp.h"

/*
 * A two-layer training chain.  in (input, 1 byte) -> f1 (2 bytes, cost 3)
 * -> f2 (2, cost 5) -> loss (1, cost 1) -> g2 (1, cost 1; reads loss and
 * f2) -> g1 (1, cost 1; reads g2 and f1).  Least cost 11.
 *
 * Budget 5.  While g2 runs, loss and f2 (its inputs) and g2 itself take
 * 4 bytes, leaving 1: f1 (2 bytes, read later by g1) cannot be resident
 * then, so it is computed again after g2, from in (1 byte, which must
 * be resident: an input cannot be recomputed).  Every schedule costs at
 * least 11 + 3 = 14, and "f1 f2 -f1 loss g2 -loss -f2 f1 g1" does, with
 * a peak of 5 (while g2 runs: in f2 loss g2; while g1 runs: in g2 f1 g1).
 *
 * Budget 4.  Beside g2 and its inputs (4 bytes) nothing fits, not even
 * in, so f1 can neither stay nor come back: no schedule fits, although
 * every node's own working set (at most 4 bytes) does.
 */
static const char *const hand_chain =
	"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
	"{\"id\":\"in\",\"kind\":\"input\",\"mem\":1},"
	"{\"id\":\"f1\",\"kind\":\"forward\",\"mem\":2,\"cost\":3,\"inputs\":[\"in\"]},"
	"{\"id\":\"f2\",\"kind\":\"forward\",\"mem\":2,\"cost\":5,\"inputs\":[\"f1\"]},"
	"{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":1,\"cost\":1,\"inputs\":[\"f2\"]},"
	"{\"id\":\"g2\",\"kind\":\"backward\",\"mem\":1,\"cost\":1,\"inputs\":[\"loss\",\"f2\"]},"
	"{\"id\":\"g1\",\"kind\":\"backward\",\"mem\":1,\"cost\":1,\"inputs\":[\"g2\",\"f1\"]}],"
	"\"outputs\":[\"g1\"]}";

static void test_cut_by_hand(void **state)
{
	struct remat_graph *g = tu_graph(hand_chain);
	enum remat_bound_status st;
	struct remat_error err;
	double lb;
	int32_t at;

	(void)state;
	assert_true(g->min_peak_lower_bound == 4);
	assert_int_equal(remat_bound_cut(g, 5, 0, &lb, &st, &at, &err), REMAT_OK);
	assert_int_equal(st, REMAT_BOUND_OK);
	assert_true(fabs(lb - 14) < 1e-6);
	assert_string_equal(g->id[at], "g2");
	assert_true(exhaustive_min_cost(g, 5) == 14);
	{
		struct remat_sim_result r = tu_sim(g, "f1 f2 -f1 loss g2 -loss -f2 f1 g1", 5);

		assert_true(r.feasible && r.cost == 14 && r.peak_mem == 5);
	}

	assert_int_equal(remat_bound_cut(g, 4, 0, &lb, &st, &at, &err), REMAT_OK);
	assert_int_equal(st, REMAT_BOUND_INFEASIBLE);
	assert_true(isnan(lb));
	assert_true(exhaustive_min_cost(g, 4) == -1);

	/* The peak: in (1), loss and f2 stay beside g2 (1): no schedule below 5. */
	{
		int64_t peak;

		assert_int_equal(remat_bound_cut_peak(g, 0, &peak, &at, &err), REMAT_OK);
		assert_true(peak == 5);
		assert_string_equal(g->id[at], "g2");
	}

	/* With room for everything: each node once, nothing more. */
	assert_int_equal(remat_bound_cut(g, g->no_remat_peak, 0, &lb, &st, &at, &err),
			 REMAT_OK);
	assert_int_equal(st, REMAT_BOUND_OK);
	assert_true(fabs(lb - 11) < 1e-6);
	remat_graph_free(g);
}

/*
 * The same chain with an input of 0 bytes.  At budget 5, while g2 runs,
 * 1 byte is left beside loss, f2 and g2, and f1 takes 2: f1 must be
 * computed again (14, as before).  The dual alone would keep half of f1
 * and bound 11 + 3/2 = 12.5; the knapsack solved whole gives 14.
 */
static void test_cut_whole_values(void **state)
{
	char *json = strdup(hand_chain);
	char *p = strstr(json, "\"mem\":1}");
	struct remat_graph *g;
	enum remat_bound_status st;
	struct remat_error err;
	double lb;
	int32_t at;

	(void)state;
	assert_non_null(p);
	p[6] = '0'; /* in: "mem":0 */
	g = tu_graph(json);
	assert_true(g->mem[0] == 0);
	assert_int_equal(remat_bound_cut(g, 5, 0, &lb, &st, &at, &err), REMAT_OK);
	assert_int_equal(st, REMAT_BOUND_OK);
	assert_true(fabs(lb - 14) < 1e-4);
	assert_string_equal(g->id[at], "g2");
	assert_true(exhaustive_min_cost(g, 5) == 14);
	remat_graph_free(g);
	free(json);
}

/*
 * A graph on which CBC with its preprocessing (CglPreProcess) proved the
 * knapsack at v10 "optimal" at 4.25 when its optimum is 0.5: the bound
 * then said 30 at budget 37, where exhaustive search finds a schedule
 * of cost 26.25.  CBC now runs without preprocessing, and the exact
 * answer is never taken above a closure known to fit.
 */
static const char *const cbc_preprocess_graph =
	"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[{\"id\":\"v0\",\"mem\":0,\"kind\":\""
	"input\"},{\"id\":\"v1\",\"mem\":2,\"cost\":0.5,\"inputs\":[\"v0\"]},{\"id\":\"v2\",\"mem\":"
	"9,\"cost\":5,\"inputs\":[\"v1\",\"v1\"]},{\"id\":\"v3\",\"mem\":0,\"workspace\":6,\"cost\""
	":2,\"inputs\":[\"v2\"]},{\"id\":\"v4\",\"mem\":7,\"cost\":1,\"inputs\":[\"v0\",\"v3\",\"v3\""
	"]},{\"id\":\"v5\",\"mem\":4,\"kind\":\"input\"},{\"id\":\"v6\",\"mem\":6,\"cost\":3,\"input"
	"s\":[\"v1\"]},{\"id\":\"v7\",\"mem\":5,\"cost\":4.25,\"inputs\":[\"v1\",\"v6\"]},{\"id\":\"v"
	"8\",\"mem\":6,\"workspace\":3,\"cost\":1.75,\"inputs\":[\"v7\"]},{\"id\":\"v9\",\"mem\":5"
	",\"kind\":\"input\"},{\"id\":\"v10\",\"mem\":3,\"cost\":4.25,\"inputs\":[\"v4\",\"v4\",\"v6"
	"\",\"v8\",\"v9\"]},{\"id\":\"v11\",\"mem\":8,\"recompute\":false,\"cost\":0,\"inputs\":[\""
	"v0\",\"v3\",\"v8\",\"v8\",\"v9\",\"v10\"]},{\"id\":\"v12\",\"mem\":0,\"recompute\":false,\"c"
	"ost\":4,\"inputs\":[\"v0\",\"v3\",\"v7\",\"v7\",\"v11\"]}],\"outputs\":[\"v12\",\"v7\",\"v5\""
	",\"v1\",\"v0\"]}";

static void test_cut_exact_not_above(void **state)
{
	struct remat_graph *g = tu_graph(cbc_preprocess_graph);
	enum remat_bound_status st;
	struct remat_error err;
	double lb, ex = exhaustive_min_cost(g, 37);
	int32_t at;

	(void)state;
	assert_true(fabs(ex - 26.25) < 1e-9);
	assert_int_equal(remat_bound_cut(g, 37, 0, &lb, &st, &at, &err), REMAT_OK);
	assert_int_equal(st, REMAT_BOUND_OK);
	assert_true(lb <= ex * (1 + 1e-9));
	remat_graph_free(g);
}

/*
 * The property tests' graphs, by trial: a DAG of any shape, a training
 * graph, a DAG with explicit outputs, in turn (5 to 13 nodes).
 */
static char *random_mix(uint64_t *st, int trial)
{
	int n = 5 + (int)(tu_rand(st) % 9);

	return trial % 3 == 0 ? tu_random_any_dag_json(st, n, 30)
		: trial % 3 == 1 ? tu_random_graph_json(st, 3 + (int)(tu_rand(st) % 3), 0.2, 1)
		: random_dag_out(st, n, 1);
}

/*
 * Random training graphs and DAGs of every shape (inputs, zero sizes,
 * workspaces, nodes that may not be recomputed), every budget from the
 * least peak to the no-remat peak: the bound is at least the least cost
 * and at most the exhaustive optimum; "infeasible" exactly never where a
 * schedule fits.  The bound must rise above the least cost, and prove
 * some budget infeasible, often enough to mean something.  The peak
 * bound: no schedule fits one byte below it.
 */
static void test_cut_never_above_optimum(void **state)
{
	uint64_t st = 77;
	int trial, runs = 0, above_floor = 0, tight = 0, infeasible = 0;
	int peak_runs = 0, peak_above = 0, peak_tight = 0;

	(void)state;
	for (trial = 0; trial < 240; trial++) {
		char *json = random_mix(&st, trial);
		struct remat_graph *g = tu_graph(json);
		int64_t lo = tu_least_peak(g), hi = g->no_remat_peak, b, peak;
		double floor = tu_least_cost(g);
		struct remat_error perr;

		/* The peak bound: nothing fits one byte below it. */
		assert_int_equal(remat_bound_cut_peak(g, 0, &peak, NULL, &perr), REMAT_OK);
		assert_true(peak >= lo && peak <= hi);
		if (exhaustive_min_cost(g, peak - 1) != -2) {
			if (exhaustive_min_cost(g, peak - 1) != -1)
				fail_msg("trial %d: a schedule peaks below the cut's peak bound %lld",
					 trial, (long long)peak);
			peak_runs++;
			if (peak > lo)
				peak_above++;
			if (exhaustive_min_cost(g, peak) >= 0)
				peak_tight++;
		}

		for (b = lo; b <= hi; b += (hi - lo) / 6 + 1) {
			enum remat_bound_status status;
			struct remat_error err;
			double lb, ex = exhaustive_min_cost(g, b);
			int32_t at;

			if (ex == -2)
				continue; /* too large to search */
			runs++;
			assert_int_equal(remat_bound_cut(g, b, 0, &lb, &status, &at, &err), REMAT_OK);
			if (status == REMAT_BOUND_INFEASIBLE) {
				if (ex != -1)
					fail_msg("trial %d budget %lld: cut says infeasible, a "
						 "schedule costs %g", trial, (long long)b, ex);
				infeasible++;
				continue;
			}
			assert_int_equal(status, REMAT_BOUND_OK);
			assert_true(lb >= floor * (1 - 1e-12));
			if (ex >= 0 && lb > ex * (1 + 1e-9))
				fail_msg("trial %d budget %lld: cut bound %g above the optimum %g",
					 trial, (long long)b, lb, ex);
			if (lb > floor * (1 + 1e-9))
				above_floor++;
			if (ex >= 0 && ex > floor * (1 + 1e-9) && fabs(lb - ex) <= 1e-9 * ex)
				tight++;
		}
		remat_graph_free(g);
		free(json);
	}
	print_message("cut bound: %d runs, %d above the least cost, %d equal to an optimum "
		      "above it, %d proved infeasible\n", runs, above_floor, tight, infeasible);
	print_message("cut peak bound: %d graphs, %d above the working-set bound, %d reached by "
		      "a schedule\n", peak_runs, peak_above, peak_tight);
	assert_true(runs > 300);
	assert_true(peak_above > peak_runs / 20);
	assert_true(peak_tight > peak_runs / 2);
	assert_true(above_floor > runs / 20);
	assert_true(tight > 0);
	assert_true(infeasible > 0);
}

/*
 * Three layers: in (1 byte) -> f1 (2, cost 3) -> f2 (2, cost 5) -> f3
 * (2, cost 7) -> loss (1, 1) -> g3 (1, 1; reads loss, f3) -> g2 (1, 1;
 * reads g3, f2) -> g1 (1, 1; reads g2, f1 and in, which therefore stays
 * to the end).  Least cost 19; budget 6.
 *
 * While g3 runs (in, loss, f3, g3: 5 bytes) one byte is free: neither f1
 * nor f2 stays, so f2 is computed again before g2, from f1, computed
 * again too (the cut at g3: 19 + 3 + 5 = 27).  While g2 runs (in, g3,
 * f2, g2: 5 bytes) f1 cannot stay either, so it is computed a third time
 * before g1: the windows g3 -> g2 and g2 -> end cost 8 and 3, every
 * schedule at least 30, and "f1 f2 -f1 f3 loss -f3 ... " does:
 * f1 f2 -f1 f3 -f2 loss g3 -loss -f3 f1 f2 -f1 g2 -g3 -f2 f1 g1.
 */
static const char *const hand_chain3 =
	"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
	"{\"id\":\"in\",\"kind\":\"input\",\"mem\":1},"
	"{\"id\":\"f1\",\"kind\":\"forward\",\"mem\":2,\"cost\":3,\"inputs\":[\"in\"]},"
	"{\"id\":\"f2\",\"kind\":\"forward\",\"mem\":2,\"cost\":5,\"inputs\":[\"f1\"]},"
	"{\"id\":\"f3\",\"kind\":\"forward\",\"mem\":2,\"cost\":7,\"inputs\":[\"f2\"]},"
	"{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":1,\"cost\":1,\"inputs\":[\"f3\"]},"
	"{\"id\":\"g3\",\"kind\":\"backward\",\"mem\":1,\"cost\":1,\"inputs\":[\"loss\",\"f3\"]},"
	"{\"id\":\"g2\",\"kind\":\"backward\",\"mem\":1,\"cost\":1,\"inputs\":[\"g3\",\"f2\"]},"
	"{\"id\":\"g1\",\"kind\":\"backward\",\"mem\":1,\"cost\":1,"
	"\"inputs\":[\"g2\",\"f1\",\"in\"]}],"
	"\"outputs\":[\"g1\"]}";

static void test_window_by_hand(void **state)
{
	struct remat_graph *g = tu_graph(hand_chain3);
	enum remat_bound_status st;
	struct remat_error err;
	double lb;
	int32_t at, mo[8], nmo;

	(void)state;
	assert_int_equal(remat_bound_cut(g, 6, 0, &lb, &st, &at, &err), REMAT_OK);
	assert_int_equal(st, REMAT_BOUND_OK);
	assert_true(fabs(lb - 27) < 1e-4);
	assert_int_equal(remat_bound_window(g, 6, 0, &lb, &st, mo, 8, &nmo, &err), REMAT_OK);
	assert_int_equal(st, REMAT_BOUND_OK);
	assert_true(fabs(lb - 30) < 1e-4);
	{
		int i, seen = 0;

		assert_true(nmo >= 2 && nmo <= 4);
		for (i = 0; i < nmo; i++)
			seen |= (strcmp(g->id[mo[i]], "g3") == 0) | (strcmp(g->id[mo[i]], "g2") == 0) << 1;
		assert_int_equal(seen, 3);
	}
	assert_true(exhaustive_min_cost(g, 6) == 30);
	{
		struct remat_sim_result r = tu_sim(g, "f1 f2 -f1 f3 -f2 loss g3 -loss -f3 f1 f2 -f1 g2 "
						   "-g3 -f2 f1 g1", 6);

		assert_true(r.feasible && r.cost == 30 && r.peak_mem == 6);
	}
	remat_graph_free(g);
}

/*
 * The graph in seconds of microsecond operators: CBC's absolute
 * tolerances (about 1e-5) must not lift a bound above the optimum (they
 * did before the objective was scaled).
 */
static void micro_costs(struct remat_graph *g)
{
	int32_t v;

	for (v = 0; v < g->n; v++)
		g->cost[v] *= 3.7e-6;
	g->baseline_cost *= 3.7e-6;
}

/*
 * The window bound (remat_bound_window): the same random graphs and
 * budgets (every other one with costs about 1e-6), against the exhaustive optimum (never above it, "infeasible"
 * only where nothing fits) and against the cut bound (the windows must
 * prove more than one cut often enough to mean something).
 */
static void test_window_never_above_optimum(void **state)
{
	uint64_t st = 4242;
	int trial, runs = 0, above_cut = 0, tight = 0, chains = 0;

	(void)state;
	for (trial = 0; trial < 150; trial++) {
		char *json = random_mix(&st, trial);
		struct remat_graph *g = tu_graph(json);
		int64_t lo = tu_least_peak(g), hi = g->no_remat_peak, b;

		if (trial % 2)
			micro_costs(g);
		for (b = lo; b <= hi; b += (hi - lo) / 5 + 1) {
			enum remat_bound_status ws, cs;
			struct remat_error err;
			double wb, cb, ex = exhaustive_min_cost(g, b);
			int32_t mo[8], nmo, at;

			if (ex == -2)
				continue;
			runs++;
			assert_int_equal(remat_bound_window(g, b, 0, &wb, &ws, mo, 8, &nmo, &err),
					 REMAT_OK);
			if (ws == REMAT_BOUND_INFEASIBLE) {
				if (ex != -1)
					fail_msg("trial %d budget %lld: window bound says infeasible, "
						 "a schedule costs %g", trial, (long long)b, ex);
				continue;
			}
			assert_int_equal(ws, REMAT_BOUND_OK);
			if (ex >= 0 && wb > ex * (1 + 1e-9))
				fail_msg("trial %d budget %lld: window bound %g above the optimum %g",
					 trial, (long long)b, wb, ex);
			if (nmo > 1)
				chains++;
			assert_int_equal(remat_bound_cut(g, b, 0, &cb, &cs, &at, &err), REMAT_OK);
			if (cs == REMAT_BOUND_OK && ex >= 0 && cb > ex * (1 + 1e-9))
				fail_msg("trial %d budget %lld: cut bound %g above the optimum %g",
					 trial, (long long)b, cb, ex);
			if (cs == REMAT_BOUND_OK && wb > cb * (1 + 1e-6))
				above_cut++;
			if (ex >= 0 && ex > tu_least_cost(g) * (1 + 1e-9) && fabs(wb - ex) <= 1e-6 * ex)
				tight++;
		}
		remat_graph_free(g);
		free(json);
	}
	print_message("window bound: %d runs, %d above the cut bound, %d proved by a chain of "
		      "moments, %d equal to an optimum above the least cost\n", runs, above_cut,
		      chains, tight);
	assert_true(runs > 200);
	assert_true(above_cut > 0);
	assert_true(tight > 0);
}

/*
 * The down-set bound (remat_bound_downset): the same random graphs, every
 * budget from the least peak to the no-remat peak, against the
 * exhaustive optimum in any order (never above it; "infeasible" only
 * where nothing fits) and against the cut bound: on forward DAGs, where
 * a schedule may put off what one cut lets it, it must prove more than
 * the cut often enough to mean something.
 */
static void test_downset_never_above_optimum(void **state)
{
	uint64_t st = 9090;
	int trial, runs = 0, above_cut = 0, above_floor = 0, infeasible = 0;

	(void)state;
	for (trial = 0; trial < 240; trial++) {
		char *json = random_mix(&st, trial);
		struct remat_graph *g = tu_graph(json);
		int64_t lo = tu_least_peak(g), hi = g->no_remat_peak, b;
		double floor = tu_least_cost(g);

		for (b = lo; b <= hi; b += (hi - lo) / 6 + 1) {
			enum remat_bound_status ds, cs;
			struct remat_error err;
			double db, cb, ex = exhaustive_min_cost(g, b);
			int32_t size, at;

			if (ex == -2)
				continue;
			runs++;
			assert_int_equal(remat_bound_downset(g, b, 0, &db, &ds, &size, &err),
					 REMAT_OK);
			if (ds == REMAT_BOUND_INFEASIBLE) {
				if (ex != -1)
					fail_msg("trial %d budget %lld: down-set bound says infeasible, "
						 "a schedule costs %g", trial, (long long)b, ex);
				infeasible++;
				continue;
			}
			assert_int_equal(ds, REMAT_BOUND_OK);
			assert_true(db >= floor * (1 - 1e-12));
			if (ex >= 0 && db > ex * (1 + 1e-9))
				fail_msg("trial %d budget %lld: down-set bound %g above the optimum %g",
					 trial, (long long)b, db, ex);
			if (size == 0) /* no down-set: the least cost is all it proved */
				assert_true(db <= floor * (1 + 1e-12));
			if (db > floor * (1 + 1e-9))
				above_floor++;
			assert_int_equal(remat_bound_cut(g, b, 0, &cb, &cs, &at, &err), REMAT_OK);
			if (cs == REMAT_BOUND_OK && db > cb * (1 + 1e-6))
				above_cut++;
		}
		remat_graph_free(g);
		free(json);
	}
	print_message("down-set bound: %d runs, %d above the least cost, %d above the cut "
		      "bound, %d proved infeasible\n", runs, above_floor, above_cut, infeasible);
	assert_true(runs > 300);
	assert_true(above_floor > runs / 20);
	assert_true(above_cut > 0);
}

/*
 * auto's lower_bound takes the down-set bound where the cut proves
 * nothing above the least cost: on the small random graphs and budgets
 * where the down-set bound proves more than the cut (above), auto's
 * bound rises above the least cost too, and is never above the
 * exhaustive optimum in any order (a bound auto took from its own order
 * could be).
 */
static void test_auto_takes_downset(void **state)
{
	uint64_t st = 9090;
	int trial, runs = 0, planned = 0, above_floor = 0;

	(void)state;
	for (trial = 0; trial < 240 && runs < 6; trial++) {
		char *json = random_mix(&st, trial);
		struct remat_graph *g = tu_graph(json);
		int64_t lo = tu_least_peak(g), hi = g->no_remat_peak, b;
		double floor = tu_least_cost(g);

		for (b = lo; b <= hi && runs < 6; b += (hi - lo) / 6 + 1) {
			enum remat_bound_status ds, cs;
			struct remat_error err;
			double db, cb, ex = exhaustive_min_cost(g, b);
			int32_t size, at;
			/* Without its exhaustive search, which would prove the optimum here. */
			struct remat_kv off = { "exhaustive-nodes", "0" };
			struct tu_plan t = { .planner = "auto", .flags = TU_ANY_STATUS,
					     .opts = &off, .n_opts = 1 };

			if (ex < 0)
				continue;
			assert_int_equal(remat_bound_cut(g, b, 0, &cb, &cs, &at, &err), REMAT_OK);
			assert_int_equal(remat_bound_downset(g, b, 0, &db, &ds, &size, &err),
					 REMAT_OK);
			if (cs != REMAT_BOUND_OK || cb > floor * (1 + 1e-9) || ds != REMAT_BOUND_OK ||
			    db <= floor * (1 + 1e-9))
				continue;
			runs++;
			/*
			 * auto may find no schedule on a tiny graph where one exists
			 * (it answers exit 3; under ASan it happened): no bound then.
			 */
			if (tu_plan_run(g, b, &t) != REMAT_OK) {
				assert_int_equal(t.rc, REMAT_ENOFIT);
				tu_plan_release(&t);
				continue;
			}
			planned++;
			if (t.rep.lower_bound > ex * (1 + 1e-9))
				fail_msg("trial %d budget %lld: auto's bound %g above the optimum %g",
					 trial, (long long)b, t.rep.lower_bound, ex);
			if (t.rep.lower_bound > floor * (1 + 1e-9))
				above_floor++;
			tu_plan_release(&t);
		}
		remat_graph_free(g);
		free(json);
	}
	print_message("auto and the down-set bound: %d cases, %d planned, auto's bound above "
		      "the least cost in %d\n", runs, planned, above_floor);
	/* (A plan within --gap of the least cost stops before the down-set bound.) */
	assert_true(above_floor > 0);
}

/*
 * The path bound (remat_bound_path) on hand_chain3 above, whose nodes lie
 * on one path: the windows' argument there holds at every first
 * computation, so it proves the optimum, 30.  A graph with two orders is
 * not tried, and says which node breaks the path.
 */
static void test_path_by_hand(void **state)
{
	struct remat_graph *g = tu_graph(hand_chain3);
	enum remat_bound_status st;
	struct remat_error err;
	double lb;
	int32_t fork;

	(void)state;
	assert_int_equal(remat_bound_path(g, 6, 0, &lb, &st, &fork, &err), REMAT_OK);
	assert_int_equal(st, REMAT_BOUND_OK);
	assert_int_equal(fork, -1);
	assert_true(fabs(lb - 30) < 1e-4);
	/* One byte less: g1's inputs g2, f1, in and g1 itself fill 5, g2's moment 6. */
	assert_int_equal(remat_bound_path(g, 5, 0, &lb, &st, &fork, &err), REMAT_OK);
	assert_true(exhaustive_min_cost(g, 5) == -1);
	assert_true(st == REMAT_BOUND_INFEASIBLE || (st == REMAT_BOUND_OK && lb >= 30 - 1e-4));
	remat_graph_free(g);
	/* hand_chain: one path too; at 5 B its optimum, 14 (exhaustive search). */
	g = tu_graph(hand_chain);
	assert_int_equal(remat_bound_path(g, 5, 0, &lb, &st, &fork, &err), REMAT_OK);
	assert_int_equal(fork, -1);
	assert_int_equal(st, REMAT_BOUND_OK);
	assert_true(fabs(lb - 14) < 1e-4);
	remat_graph_free(g);
	g = tu_graph("{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		     "{\"id\":\"x\",\"kind\":\"input\",\"mem\":1},"
		     "{\"id\":\"a\",\"mem\":1,\"cost\":1,\"inputs\":[\"x\"]},"
		     "{\"id\":\"b\",\"mem\":1,\"cost\":1,\"inputs\":[\"x\"]},"
		     "{\"id\":\"c\",\"mem\":1,\"cost\":1,\"inputs\":[\"a\",\"b\"]}]}");
	assert_int_equal(remat_bound_path(g, 4, 0, &lb, &st, &fork, &err), REMAT_OK);
	assert_int_equal(st, REMAT_BOUND_NOT_TRIED);
	assert_true(fork >= 0 && strcmp(g->id[fork], "b") == 0);
	assert_true(isnan(lb));
	remat_graph_free(g);
}

/*
 * The path bound on the random graphs and budgets of the bounds above,
 * and one byte below the least peak (every other graph with costs about
 * 1e-6): never above the exhaustive optimum, "infeasible" only where
 * nothing fits (and there, often); where it is tried (the
 * graphs of tu_random_any_dag_json always: each node reads the one
 * before), never below the cut bound (its model holds every cut), and
 * above it often enough to mean something.
 */
static void test_path_never_above_optimum(void **state)
{
	uint64_t st = 5151;
	int trial, runs = 0, tried = 0, above_cut = 0, tight = 0, infeasible = 0;

	(void)state;
	for (trial = 0; trial < 240; trial++) {
		char *json = random_mix(&st, trial);
		struct remat_graph *g = tu_graph(json);
		int64_t lo = tu_least_peak(g), hi = g->no_remat_peak, b;

		if (trial % 2)
			micro_costs(g);
		/* From one byte below the least peak, where nothing fits. */
		for (b = lo > 0 ? lo - 1 : lo; b <= hi; b += (hi - lo) / 6 + 1) {
			enum remat_bound_status ps, cs;
			struct remat_error err;
			double pb, cb, ex = exhaustive_min_cost(g, b);
			int32_t fork, at;

			if (ex == -2)
				continue;
			runs++;
			assert_int_equal(remat_bound_path(g, b, 0, &pb, &ps, &fork, &err), REMAT_OK);
			if (trial % 3 == 0)
				assert_int_equal(fork, -1);
			if (fork >= 0) {
				assert_int_equal(ps, REMAT_BOUND_NOT_TRIED);
				continue;
			}
			tried++;
			if (ps == REMAT_BOUND_INFEASIBLE) {
				if (ex != -1)
					fail_msg("trial %d budget %lld: path bound says infeasible, a "
						 "schedule costs %g", trial, (long long)b, ex);
				infeasible++;
				continue;
			}
			assert_int_equal(ps, REMAT_BOUND_OK);
			assert_true(pb >= tu_least_cost(g) * (1 - 1e-12));
			if (ex >= 0 && pb > ex * (1 + 1e-9))
				fail_msg("trial %d budget %lld: path bound %g above the optimum %g",
					 trial, (long long)b, pb, ex);
			assert_int_equal(remat_bound_cut(g, b, 0, &cb, &cs, &at, &err), REMAT_OK);
			/* (Less the MILP's margin: 2e-5 of the least positive cost, 1e-6.) */
			if (cs == REMAT_BOUND_OK && ex >= 0 &&
			    pb < cb * (1 - 1e-5) - 1e-4 * remat_i_cost_unit(g))
				fail_msg("trial %d budget %lld: path bound %g below the cut bound %g",
					 trial, (long long)b, pb, cb);
			if (cs == REMAT_BOUND_OK && pb > cb * (1 + 1e-6))
				above_cut++;
			if (ex >= 0 && ex > tu_least_cost(g) * (1 + 1e-9) && fabs(pb - ex) <= 1e-6 * ex)
				tight++;
		}
		remat_graph_free(g);
		free(json);
	}
	print_message("path bound: %d runs, %d tried (one order), %d above the cut bound, %d "
		      "equal to an optimum above the least cost, %d proved infeasible\n", runs,
		      tried, above_cut, tight, infeasible);
	assert_true(runs > 300);
	assert_true(tried > runs / 3 && tried < runs);
	assert_true(above_cut > 0);
	assert_true(tight > 0);
	assert_true(infeasible > 0);
}

/*
 * The path pass (plan/path_pass.h) and the point of a schedule in the
 * path model (remat_i_path_point), against exhaustive search on random
 * graphs on one path (tu_random_any_dag_json, as in
 * test_path_never_above_optimum: each node reads the one before, with
 * other inputs, workspaces, "recompute": false; half with costs about
 * 1e-6), from one byte below the least peak (nothing fits: the pass must
 * return nothing) to the no-remat peak:
 * - every schedule a planner returns within the budget is a point of the
 *   model (every row holds) costing no more than it: the reason the
 *   model's optimum bounds every schedule;
 * - a schedule the pass returns fits and costs no less than the
 *   optimum; its bound is no higher than the optimum; and when CBC
 *   proved its point optimal and the point's order fitted as it was,
 *   the schedule is the optimum (bound <= optimum <= cost = bound).
 * By hand: hand_chain3 at 6 B, the pass finds its optimum, 30.
 */
static struct remat_sim_result sim_of(const struct remat_graph *g,
				      const struct remat_schedule *s, int64_t b)
{
	struct remat_sim_result r;
	struct remat_error err;

	assert_int_equal(remat_simulate(g, s, b, NULL, &r, &err), REMAT_OK);
	return r;
}

/*
 * One run of the pass on g at b (optimum ex) from start (may be NULL):
 * its bound is no higher than ex; a schedule it returns fits, costs no
 * less than ex, and is ex when the pass says its point is the model's
 * proven optimum and it costs that point's value (no replay added any).
 */
static void check_pass(const struct remat_graph *g, int64_t b, double ex,
		       const struct remat_schedule *start, int trial, int *found, int *proven)
{
	struct remat_plan_request req;
	struct remat_i_path_result pr;
	struct remat_schedule out;
	struct remat_error err;

	memset(&req, 0, sizeof(req));
	req.graph = g;
	req.budget = b;
	remat_schedule_init(&out);
	assert_int_equal(remat_i_path_pass(&req, start, remat_now() + 60, &out, &pr, &err),
			 REMAT_OK);
	assert_true(pr.tried);
	if (pr.bound > ex * (1 + 1e-9))
		fail_msg("trial %d budget %lld: the pass's bound %g above the optimum %g", trial,
			 (long long)b, pr.bound, ex);
	if (pr.found) {
		struct remat_sim_result r = sim_of(g, &out, b);

		(*found)++;
		assert_true(r.feasible);
		assert_true(r.cost >= ex * (1 - 1e-9));
		if (pr.optimal && r.cost <= pr.model_cost * (1 + 1e-9)) {
			(*proven)++;
			if (fabs(r.cost - ex) > 1e-9 * ex + 1e-12)
				fail_msg("trial %d budget %lld: the pass's proven schedule costs %g, "
					 "the optimum %g", trial, (long long)b, r.cost, ex);
		}
	}
	remat_schedule_release(&out);
}

/*
 * Every stage of p tightened (remat_i_path_tighten), the model's optimum
 * is a point whose order fits the budget as it is (no replay), and costs
 * no less than the exhaustive optimum ex.
 */
static void check_tightened(const struct remat_graph *g, int64_t b, double ex,
			    struct remat_i_path *p, int trial, int *runs)
{
	struct remat_i_milp_opts opts;
	struct remat_i_milp_result mr;
	struct remat_schedule order;
	struct remat_sim_result r;
	struct remat_error err;
	int32_t t;

	for (t = 0; t <= p->T; t++)
		assert_int_equal(remat_i_path_tighten(p, t, &err), REMAT_OK);
	memset(&opts, 0, sizeof(opts));
	opts.no_preprocess = 1;
	remat_i_milp_result_init(&mr);
	remat_schedule_init(&order);
	assert_int_equal(remat_i_milp_solve(REMAT_I_MILP_CBC, &p->m, &opts, &mr, &err), REMAT_OK);
	if (mr.status == REMAT_I_MILP_OPTIMAL) {
		assert_int_equal(remat_i_path_order(p, mr.x, &order, &err), REMAT_OK);
		r = sim_of(g, &order, b);
		if (!r.feasible)
			fail_msg("trial %d budget %lld: the tightened model's optimum runs at %lld",
				 trial, (long long)b, (long long)r.peak_mem);
		if (r.cost < ex * (1 - 1e-9) - 1e-12)
			fail_msg("trial %d budget %lld: below the optimum", trial, (long long)b);
		++*runs;
	}
	remat_schedule_release(&order);
	remat_i_milp_result_release(&mr);
}

static void test_path_pass(void **state)
{
	static const char *const planners[] = { "twremat", "dtr", "chen", "greedy" };
	uint64_t st = 5151;
	int trial, runs = 0, points = 0, found = 0, proven = 0, improved = 0, improved_proven = 0;
	int nofit = 0, tight_runs = 0;
	struct remat_plan_request req;
	struct remat_i_path_result pr;
	struct remat_schedule out;
	struct remat_error err;
	struct remat_graph *g;

	(void)state;
	remat_schedule_init(&out);
	memset(&req, 0, sizeof(req));
	g = tu_graph(hand_chain3);
	req.graph = g;
	req.budget = 6;
	assert_int_equal(remat_i_path_pass(&req, NULL, 0, &out, &pr, &err), REMAT_OK);
	assert_true(pr.tried && pr.found && pr.optimal);
	assert_true(sim_of(g, &out, 6).feasible);
	assert_true(fabs(sim_of(g, &out, 6).cost - 30) < 1e-9);
	remat_graph_free(g);
	/*
	 * More inputs nothing reads than the schedule has steps: each is freed
	 * first (an outside review found the schedule's buffer too small for
	 * them; AddressSanitizer caught the write past its end).
	 */
	g = tu_graph("{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		     "{\"id\":\"x\",\"kind\":\"input\",\"mem\":1},"
		     "{\"id\":\"u1\",\"kind\":\"input\",\"mem\":1},"
		     "{\"id\":\"u2\",\"kind\":\"input\",\"mem\":1},"
		     "{\"id\":\"u3\",\"kind\":\"input\",\"mem\":1},"
		     "{\"id\":\"u4\",\"kind\":\"input\",\"mem\":1},"
		     "{\"id\":\"a\",\"mem\":1,\"cost\":1,\"inputs\":[\"x\"]}],"
		     "\"outputs\":[\"a\"]}");
	req.graph = g;
	req.budget = 2;
	assert_int_equal(remat_i_path_pass(&req, NULL, 0, &out, &pr, &err), REMAT_OK);
	assert_true(pr.tried && pr.found && pr.optimal);
	assert_int_equal(out.n, 6); /* four frees, a, the free of x */
	assert_true(sim_of(g, &out, 2).feasible);
	assert_true(fabs(sim_of(g, &out, 2).cost - 1) < 1e-9);
	remat_schedule_release(&out);
	remat_graph_free(g);
	for (trial = 0; trial < 240; trial += 3) {
		char *json = random_mix(&st, trial);
		int64_t lo, hi, b;

		g = tu_graph(json);
		lo = tu_least_peak(g);
		hi = g->no_remat_peak;
		if (trial % 2)
			micro_costs(g);
		for (b = lo > 0 ? lo - 1 : lo; b <= hi; b += (hi - lo) / 6 + 1) {
			double ex = exhaustive_min_cost(g, b), floor = tu_least_cost(g);
			enum remat_i_path_state ps;
			struct remat_i_path p;
			size_t k;

			if (ex == -1) {
				/* Nothing fits: the pass returns nothing. */
				memset(&req, 0, sizeof(req));
				req.graph = g;
				req.budget = b;
				assert_int_equal(remat_i_path_pass(&req, NULL, 0, &out, &pr, &err),
						 REMAT_OK);
				assert_false(pr.found);
				nofit++;
				continue;
			}
			if (ex < 0)
				continue;
			runs++;
			check_pass(g, b, ex, NULL, trial, &found, &proven);
			assert_int_equal(remat_i_path_build(&p, g, b, &ps, NULL, &err), REMAT_OK);
			assert_int_equal(ps, REMAT_I_PATH_BUILT);
			for (k = 0; k < sizeof(planners) / sizeof(planners[0]); k++) {
				struct tu_plan t = { .planner = planners[k], .flags = TU_ANY_STATUS };
				double *x = malloc(sizeof(double) * ((size_t)p.m.ncols + 1)), exc;
				int64_t bad;

				assert_non_null(x);
				if (tu_plan_run(g, b, &t) == REMAT_OK) {
					points++;
					assert_int_equal(remat_i_path_point(&p, &t.s, x, &err), REMAT_OK);
					bad = remat_i_milp_check(&p.m, x, 1e-9, &exc);
					if (bad != -1)
						fail_msg("trial %d budget %lld: %s's schedule is no point "
							 "of the model (row or column %lld, by %g)", trial,
							 (long long)b, planners[k], (long long)bad, exc);
					if (floor + remat_i_milp_value(&p.m, x) * p.unit >
					    t.res.cost * (1 + 1e-9) + 1e-12)
						fail_msg("trial %d budget %lld: %s's point costs more than "
							 "its schedule", trial, (long long)b, planners[k]);
					/* From that start: only a cheaper schedule comes back. */
					check_pass(g, b, ex, &t.s, trial, &improved, &improved_proven);
				}
				free(x);
				tu_plan_release(&t);
			}
			check_tightened(g, b, ex, &p, trial, &tight_runs);
			remat_i_path_release(&p);
		}
		remat_graph_free(g);
		free(json);
	}
	remat_schedule_release(&out);
	print_message("path pass: %d runs, %d found (%d proven optimal); %d planners' schedules "
		      "mapped, %d improved from them (%d proven); %d budgets where nothing fits; "
		      "%d tightened models' optima fit\n",
		      runs, found, proven, points, improved, improved_proven, nofit, tight_runs);
	assert_true(points > 100);
	assert_true(found > runs / 2);
	assert_true(proven > runs / 3);
	assert_true(improved > 0);
	assert_true(nofit > 0);
	assert_true(tight_runs > runs / 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cut_by_hand),
		cmocka_unit_test(test_cut_whole_values),
		cmocka_unit_test(test_cut_exact_not_above),
		cmocka_unit_test(test_cut_never_above_optimum),
		cmocka_unit_test(test_window_by_hand),
		cmocka_unit_test(test_window_never_above_optimum),
		cmocka_unit_test(test_downset_never_above_optimum),
		cmocka_unit_test(test_auto_takes_downset),
		cmocka_unit_test(test_path_by_hand),
		cmocka_unit_test(test_path_never_above_optimum),
		cmocka_unit_test(test_path_pass),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
