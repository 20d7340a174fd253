/*
 * prop_twremat.c - twremat on random DAGs of every shape the format
 * allows: several inputs, several outputs (some of them inputs or
 * interior nodes), "recompute": false nodes, zero sizes, workspaces,
 * kind "op" only or training kinds.  Properties:
 *   - every answer is a valid schedule within budget or REMAT_ENOFIT
 *     (tu_plan_run() simulates it again; never REMAT_EINTERNAL), on
 *     graphs of up to 12 nodes never cheaper than the brute force
 *     (exhaustive.h) and only where it finds a schedule;
 *   - at or above the no-remat peak it succeeds at the baseline cost;
 *   - the bare recursion (--cutoff K, its own schedule, not the runner's
 *     fallback) is valid for every K;
 *   - at the peak of the K = 1 schedule, below the needed nodes' order's
 *     peak, the search finds a schedule (it offers that one);
 *   - the same request twice gives the same schedule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "exhaustive.h"

/* twremat through tu_plan_run() (testutil.h), which checks the answer. */
static int plan(const struct remat_graph *g, int64_t budget, const char *cutoff, unsigned flags,
		const double *brute, struct remat_schedule *s, struct remat_sim_result *r)
{
	struct remat_kv opt = { "cutoff", cutoff };
	struct tu_plan t = { .planner = "twremat", .opts = cutoff ? &opt : NULL,
			     .n_opts = cutoff ? 1 : 0, .flags = flags, .brute = brute };

	remat_schedule_swap(&t.s, s);
	tu_plan_run(g, budget, &t);
	remat_schedule_swap(&t.s, s);
	*r = t.res;
	tu_plan_release(&t);
	return t.rc;
}

static int n_search_fits;

static void check_graph(struct remat_graph *g)
{
	struct remat_schedule s, s2;
	struct remat_sim_result r, r2;
	int64_t lb = g->min_peak_lower_bound, top = g->no_remat_peak, b, peak1 = -1;
	int k;

	remat_schedule_init(&s);
	remat_schedule_init(&s2);
	assert_int_equal(plan(g, top, NULL, 0, NULL, &s, &r), REMAT_OK);
	assert_true(r.recomputes == 0 && r.cost == g->baseline_cost);
	for (k = 0; k <= 8; k++) {
		double ex = -2;

		b = lb + (top - lb) * k / 8;
		/* Small graphs: no cheaper than the brute force, and only where it fits. */
		if (g->n <= 12)
			ex = exhaustive_min_cost(g, b);
		if (plan(g, b, NULL, 0, ex > -2 ? &ex : NULL, &s, &r) == REMAT_OK) {
			assert_int_equal(plan(g, b, NULL, 0, NULL, &s2, &r2), REMAT_OK);
			assert_true(s.n == s2.n &&
				    memcmp(s.steps, s2.steps, sizeof(*s.steps) * (size_t)s.n) == 0);
		}
	}
	/*
	 * The bare recursion (its own schedule: through the runner the needed
	 * nodes' order would replace it at this budget) is a valid schedule
	 * for every K: Algorithm 1 computes any DAG.
	 */
	for (k = 1; k <= 6; k++) {
		char cut[8];

		snprintf(cut, sizeof(cut), "%d", k * k);
		assert_int_equal(plan(g, INT64_MAX / 4, cut, TU_OWN | TU_MUST_FIT, NULL, &s, &r),
				 REMAT_OK);
		if (k == 1)
			peak1 = r.peak_mem;
	}
	/*
	 * The search offers the K = 1 schedule among its candidates (step 6
	 * of twremat.c): at that schedule's peak it must find one.
	 */
	if (peak1 < tu_needed_order_peak(g)) {
		plan(g, peak1, NULL, TU_MUST_FIT, NULL, &s, &r);
		n_search_fits++;
	}
	remat_schedule_release(&s);
	remat_schedule_release(&s2);
}

static void prop_random_dags(void **state)
{
	uint64_t seed = 31337;
	int round;

	(void)state;
	for (round = 0; round < 150; round++) {
		char *json = tu_random_any_dag_json(&seed, 3 + round % 40, 20);
		struct remat_graph *g = tu_graph(json);

		check_graph(g);
		remat_graph_free(g);
		free(json);
	}
	print_message("search fitted at the K = 1 peak below the needed order's: %d graphs\n",
		      n_search_fits);
	assert_true(n_search_fits >= 20);
	n_search_fits = 0;
}

static void prop_random_training_graphs(void **state)
{
	uint64_t seed = 8086;
	int round;

	(void)state;
	for (round = 0; round < 60; round++) {
		char *json = tu_random_graph_json(&seed, 3 + round % 30, 0.2, 1);
		struct remat_graph *g = tu_graph(json);

		check_graph(g);
		remat_graph_free(g);
		free(json);
	}
	print_message("search fitted at the K = 1 peak below the needed order's: %d graphs\n",
		      n_search_fits);
	assert_true(n_search_fits >= 20);
	n_search_fits = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prop_random_dags),
		cmocka_unit_test(prop_random_training_graphs),
	};

	return cmocka_run_group_tests_name("prop_twremat", tests, NULL, NULL);
}
