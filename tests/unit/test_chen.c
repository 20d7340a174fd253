/*
 * test_chen.c - the chen and chen-greedy planners (src/planners/chen.c),
 * on values worked out by hand.
 */
#include <math.h>

#include "chaintest.h"
#include "plan/stage_plan.h"

static void test_sqrt_starts(void **state)
{
	int32_t st[200];

	(void)state;
	/* k = 16: c = 4, segments 0-3 4-7 8-11 12-15. */
	assert_int_equal(remat_i_chen_sqrt_starts(16, st), 4);
	assert_int_equal(st[1], 4);
	assert_int_equal(st[3], 12);
	/* k = 10: c = 3, starts 0 3 6 9 (the last segment is one stage). */
	assert_int_equal(remat_i_chen_sqrt_starts(10, st), 4);
	assert_int_equal(st[3], 9);
	/* k = 99: c = 9, eleven segments. */
	assert_int_equal(remat_i_chen_sqrt_starts(99, st), 11);
	assert_int_equal(remat_i_chen_sqrt_starts(1, st), 1);
	assert_int_equal(remat_i_chen_sqrt_starts(3, st), 3);
	/* A perfect square: 100 -> c = 10 exactly (no sqrt rounding down to 9). */
	assert_int_equal(remat_i_chen_sqrt_starts(100, st), 10);
	assert_int_equal(st[1], 10);
}

/*
 * A homogeneous chain of 16 layers, every tensor 1 byte, forward and loss
 * cost 1, backward 2 (baseline 16 + 1 + 32 = 49).  Chen: segments of 4,
 * checkpoints f4, f8, f12 (3, about sqrt(16)); the first three segments
 * are recomputed once: 12 extra forward computes, within one extra
 * forward pass (16).  Peak by hand: during b16, x + f4 f8 f12 + f13..f16
 * + loss + b16 = 1 + 3 + 4 + 1 + 1 = 10; the no-remat peak is
 * x + f1..f16 + loss + b16 = 19.
 */
static void test_homogeneous_16(void **state)
{
	struct ct_chain t;
	struct remat_graph *g;
	struct remat_sim_result r, rg;

	(void)state;
	ct_homogeneous(&t, 16, 1, 0);
	g = ct_graph(&t);
	assert_int_equal(g->no_remat_peak, 19);
	assert_int_equal(tu_plan(g, "chen", 10, NULL, 0, 0, &r), REMAT_OK);
	assert_int_equal(r.peak_mem, 10);
	assert_int_equal(r.recomputes, 12);
	assert_true(r.cost == 49 + 12);
	assert_true(r.cost - r.baseline_cost <= 16);
	assert_int_equal(tu_plan(g, "chen", 9, NULL, 0, 0, &r), REMAT_ENOFIT);
	/* At the no-remat peak the no-remat order wins: nothing recomputed. */
	assert_int_equal(tu_plan(g, "chen", 19, NULL, 0, 0, &r), REMAT_OK);
	assert_true(r.cost == 49);
	/* chen-greedy's B search reaches the sqrt segmentation too: no worse. */
	assert_int_equal(tu_plan(g, "chen-greedy", 10, NULL, 0, 0, &rg), REMAT_OK);
	assert_true(rg.cost <= 61);
	remat_graph_free(g);
}

/* About sqrt(n) checkpoints and at most one extra forward pass, for several n. */
static void test_sqrt_property(void **state)
{
	static const int sizes[] = { 9, 25, 36, 50, 64, 100 };
	unsigned k;

	(void)state;
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct ct_chain t;
		struct remat_graph *g;
		struct remat_sim_result r;
		int n = sizes[k], c = (int)floor(sqrt(n)), segs = (n + c - 1) / c;
		int64_t b;

		ct_homogeneous(&t, n, 1, 0);
		g = ct_graph(&t);
		/* Find chen's own peak: the least budget it accepts below no-remat. */
		for (b = 1; tu_plan(g, "chen", b, NULL, 0, 0, &r) != REMAT_OK; b++)
			;
		assert_true(b < g->no_remat_peak);
		/* Recomputed: every layer outside the last segment, once. */
		assert_int_equal(r.recomputes, n - (n - (segs - 1) * c));
		assert_true(r.cost - r.baseline_cost <= n);
		/*
		 * Peak, the larger of: b_n with x, segs - 1 checkpoints, the last
		 * segment (ls layers), the loss and b_n itself; and the first
		 * backward of segment segs - 1 with x, segs - 2 checkpoints, its c
		 * layers recomputed, the incoming gradient and its own.
		 */
		{
			int ls = n - (segs - 1) * c;
			int64_t last = 1 + (segs - 1) + ls + 2, inner = segs + c + 1;

			assert_int_equal(r.peak_mem, last > inner ? last : inner);
		}
		remat_graph_free(g);
	}
}

/*
 * Algorithm 3 on stage sizes x-bar (1 byte per stage, 2 for the last,
 * which holds f16 and the loss): with B = 3.5 the running sum first
 * exceeds B at the fourth stage, so segments of four; with B = 0 every
 * boundary; with B infinite none.
 */
static void test_greedy_starts(void **state)
{
	struct ct_chain t;
	struct remat_graph *g;
	struct remat_chain *c = NULL;
	int32_t st[64];
	double x, y;

	(void)state;
	ct_homogeneous(&t, 16, 1, 0);
	g = ct_graph(&t);
	assert_int_equal(remat_chain_build(g, &c, NULL), REMAT_OK);
	assert_int_equal(remat_i_chen_greedy_starts(c, 3.5, st, &x, &y), 4);
	assert_int_equal(st[1], 4);
	assert_int_equal(st[2], 8);
	assert_int_equal(st[3], 12);
	assert_true(x == 3 && y == 4);
	assert_int_equal(remat_i_chen_greedy_starts(c, 0, st, &x, &y), 16);
	assert_true(x == 15 && y == 1);
	assert_int_equal(remat_i_chen_greedy_starts(c, INFINITY, st, NULL, NULL), 1);
	remat_chain_free(c);
	remat_graph_free(g);
}

/* Inference graphs: the no-remat order or nothing. */
static void test_inference(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_sim_result r;

	(void)state;
	assert_int_equal(tu_plan(g, "chen", 4, NULL, 0, 0, &r), REMAT_OK);
	assert_true(r.cost == 5 && r.recomputes == 0);
	assert_int_equal(tu_plan(g, "chen-greedy", 4, NULL, 0, 0, &r), REMAT_OK);
	assert_int_equal(tu_plan(g, "chen", 3, NULL, 0, 0, &r), REMAT_ENOFIT);
	assert_int_equal(tu_plan(g, "chen-greedy", 3, NULL, 0, 0, &r), REMAT_ENOFIT);
	remat_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sqrt_starts),
		cmocka_unit_test(test_homogeneous_16),
		cmocka_unit_test(test_sqrt_property),
		cmocka_unit_test(test_greedy_starts),
		cmocka_unit_test(test_inference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
