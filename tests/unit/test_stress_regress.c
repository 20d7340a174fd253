/*
 * test_stress_regress.c - regressions found by tests/stress/stress.py, each
 * on a graph small enough to work the answer out by hand (in the comments).
 * Every case runs every registered planner through tu_plan_run() (the
 * runner, remat_plan_run(), with its answer checked), so a
 * planner added later is held to the same answers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/*
 * Every planner at budget b must find a schedule whose peak is at most b
 * (b is at least the no-remat peak in each use below, so one exists).
 */
static void all_fit(const struct remat_graph *g, int64_t b, int64_t want_peak)
{
	const struct remat_planner *const *pp;

	for (pp = remat_planner_list(); *pp; pp++) {
		struct tu_plan t = { .p = *pp, .seed = 1, .flags = TU_MUST_FIT };

		tu_plan_run(g, b, &t);
		if (want_peak >= 0)
			assert_int_equal(t.res.peak_mem, want_peak);
		tu_plan_release(&t);
	}
}

/*
 * Inputs a (10 bytes, the output) and b (4000 bytes, read by nothing).
 * No node needs computing, so the empty schedule is the plan; read
 * compute-only, it drops b before the first step and its peak is a's 10
 * bytes (FORMATS.md section 2), which is also the no-remat peak.  greedy used to emit
 * "free b" and nothing else: an explicit schedule with no compute, whose
 * peak is the memory at the start, 4010 bytes, so it found nothing at a
 * budget of 10 = the no-remat peak.
 */
static void test_nothing_to_compute(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"a\",\"kind\":\"input\",\"mem\":10},"
		"{\"id\":\"b\",\"kind\":\"input\",\"mem\":4000}],"
		"\"outputs\":[\"a\"]}");

	(void)state;
	assert_int_equal(g->no_remat_peak, 10);
	all_fit(g, 10, 10);
	remat_graph_free(g);
}

/*
 * A time limit already past, on a 6000-node chain (long enough for every
 * planner's periodic deadline check to fire): at a budget that covers
 * the no-remat peak the topological order fits, so no planner may answer
 * "no schedule" (FORMATS.md section 4: exit 3 means none was found, and
 * one is known).  greedy used to give up with REMAT_ENOFIT.
 */
static void test_expired_deadline_at_no_remat_peak(void **state)
{
	const struct remat_planner *const *pp;
	size_t cap = 6000 * 64 + 256, used = 0;
	char *json = malloc(cap);
	struct remat_graph *g;
	int i;

	(void)state;
	used += (size_t)snprintf(json + used, cap - used,
				 "{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
				 "{\"id\":\"x\",\"kind\":\"input\",\"mem\":3}");
	for (i = 0; i < 6000; i++) {
		char in[32];

		snprintf(in, sizeof(in), i ? "v%d" : "x", i - 1);
		used += (size_t)snprintf(json + used, cap - used,
					 ",{\"id\":\"v%d\",\"mem\":%d,\"inputs\":[\"%s\"]}",
					 i, 1 + i % 7, in);
	}
	snprintf(json + used, cap - used, "]}");
	g = tu_graph(json);
	free(json);
	/* The largest neighbouring pair: 6 + 7 (v5, v6 and every 7th on). */
	assert_int_equal(g->no_remat_peak, 13);
	for (pp = remat_planner_list(); *pp; pp++) {
		struct tu_plan t = { .p = *pp, .seed = 1, .time_limit = 1e-9,
				     .flags = TU_MUST_FIT };

		tu_plan_run(g, g->no_remat_peak, &t);
		assert_true(t.res.peak_mem <= 13);
		tu_plan_release(&t);
	}
	remat_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_to_compute),
		cmocka_unit_test(test_expired_deadline_at_no_remat_peak),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
