/*
 * test_twremat.c - the TWRemat planner (src/planners/twremat.c) and the
 * replay post-pass it uses (src/plan/evict_replay.c).
 *
 * Expected figures are worked out by hand in the comments; the chain
 * bound is the shape of Kumar et al. Theorem 5 with unit sizes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "plan/evict_replay.h"

static const struct remat_planner *tw(void)
{
	const struct remat_planner *p = remat_planner_find("twremat");

	assert_non_null(p);
	return p;
}

/*
 * Run twremat through tu_plan_run() (testutil.h: the schedule is checked
 * there); returns the status, s and res filled.  flags: TU_OWN for the
 * planner's own schedule (with --cutoff, the bare recursion, which the
 * runner would replace by the needed nodes' order wherever that fits).
 */
static int run_flags(const struct remat_graph *g, int64_t budget, const char *cutoff,
		     unsigned flags, struct remat_schedule *s, struct remat_sim_result *res)
{
	struct remat_kv opt = { "cutoff", cutoff };
	struct tu_plan t = { .p = tw(), .opts = cutoff ? &opt : NULL, .n_opts = cutoff ? 1 : 0,
			     .flags = flags };

	remat_schedule_swap(&t.s, s);
	tu_plan_run(g, budget, &t);
	remat_schedule_swap(&t.s, s);
	*res = t.res;
	tu_plan_release(&t);
	return t.rc;
}

static int run(const struct remat_graph *g, int64_t budget, const char *cutoff,
	       struct remat_schedule *s, struct remat_sim_result *res)
{
	return run_flags(g, budget, cutoff, 0, s, res);
}

static void test_kumar_fig1(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule s;
	struct remat_sim_result r;

	(void)state;
	remat_schedule_init(&s);
	/* At the no-remat peak (4): the no-remat order, cost 5. */
	assert_int_equal(run(g, 4, NULL, &s, &r), REMAT_OK);
	assert_true(r.cost == 5 && r.recomputes == 0);
	/* At 3: the paper's A B C D A E, cost 6 (recompute A once). */
	assert_int_equal(run(g, 3, NULL, &s, &r), REMAT_OK);
	assert_true(r.cost == 6 && r.peak_mem == 3 && r.recomputes == 1);
	/* Below the lower bound of 3 nothing fits. */
	assert_int_equal(run(g, 2, NULL, &s, &r), REMAT_ENOFIT);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/* The unit training chain of examples/train-chain4.json, n layers. */
static char *chain_json(int n)
{
	size_t cap = (size_t)n * 160 + 512, used = 0;
	char *b = malloc(cap), prev[16], grad[16];
	int i;

	used += (size_t)snprintf(b + used, cap - used, "{\"format\":\"remat-graph\",\"version\":1,"
				 "\"nodes\":[{\"id\":\"x\",\"kind\":\"input\",\"mem\":1}");
	for (i = 1; i <= n; i++) {
		if (i > 1)
			snprintf(prev, sizeof(prev), "f%d", i - 1);
		else
			snprintf(prev, sizeof(prev), "x");
		used += (size_t)snprintf(b + used, cap - used, ",{\"id\":\"f%d\",\"kind\":\"forward\","
					 "\"mem\":1,\"inputs\":[\"%s\"]}", i, prev);
	}
	used += (size_t)snprintf(b + used, cap - used, ",{\"id\":\"loss\",\"kind\":\"loss\","
				 "\"mem\":1,\"inputs\":[\"f%d\"]}", n);
	for (i = n; i >= 1; i--) {
		if (i > 1)
			snprintf(prev, sizeof(prev), "f%d", i - 1);
		else
			snprintf(prev, sizeof(prev), "x");
		if (i == n)
			snprintf(grad, sizeof(grad), "loss");
		else
			snprintf(grad, sizeof(grad), "b%d", i + 1);
		used += (size_t)snprintf(b + used, cap - used, ",{\"id\":\"b%d\",\"kind\":\"backward\","
					 "\"mem\":1,\"cost\":2,\"inputs\":[\"%s\",\"%s\",\"f%d\"],"
					 "\"grad_of\":\"f%d\"}", i, grad, prev, i, i);
	}
	snprintf(b + used, cap - used, "],\"outputs\":[\"b1\"]}");
	return b;
}

static void test_chain_memory_is_logarithmic(void **state)
{
	int n;

	(void)state;
	for (n = 16; n <= 1024; n *= 4) {
		char *json = chain_json(n);
		struct remat_graph *g = tu_graph(json);
		struct remat_treedec td;
		struct remat_schedule s;
		struct remat_sim_result r;
		int64_t levels;

		remat_schedule_init(&s);
		assert_int_equal(remat_treedec_build(g, NULL, &td, NULL), REMAT_OK);
		/*
		 * Theorem 5 with unit sizes: each of the <= log2(bags) + 1 levels
		 * holds a separator (<= width + 1) and one node's inputs (3).
		 */
		levels = (int64_t)floor(log2((double)td.n_bags)) + 1;
		assert_int_equal(run_flags(g, levels * (td.width + 1 + 3) + 1, "1", TU_OWN | TU_MUST_FIT,
					   &s, &r), REMAT_OK);
		/* ... far below the no-remat peak, which grows with n. */
		assert_true(r.peak_mem * 4 < g->no_remat_peak || n < 64);
		remat_treedec_release(&td);
		remat_schedule_release(&s);
		remat_graph_free(g);
		free(json);
	}
}

static void test_budget_at_no_remat_peak_costs_nothing(void **state)
{
	uint64_t seed = 99;
	int round;

	(void)state;
	for (round = 0; round < 20; round++) {
		char *json = tu_random_graph_json(&seed, 5 + round, 0.3, round % 2);
		struct remat_graph *g = tu_graph(json);
		struct remat_schedule s;
		struct remat_sim_result r;

		remat_schedule_init(&s);
		assert_int_equal(run(g, g->no_remat_peak, NULL, &s, &r), REMAT_OK);
		assert_true(r.recomputes == 0 && r.cost == g->baseline_cost);
		remat_schedule_release(&s);
		remat_graph_free(g);
		free(json);
	}
}

/*
 * Two inputs of 10 bytes and a, b, c of 1: whichever of a and b runs
 * first, both inputs are still resident (each is read once, later), so
 * every schedule peaks at 10 + 10 + 1 = 21 although the lower bound (one
 * node's inputs, output and workspace) is only 11.
 */
static const char *const TWO_INPUTS =
	"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
	"{\"id\":\"x1\",\"kind\":\"input\",\"mem\":10},"
	"{\"id\":\"x2\",\"kind\":\"input\",\"mem\":10},"
	"{\"id\":\"a\",\"mem\":1,\"inputs\":[\"x1\"]},"
	"{\"id\":\"b\",\"mem\":1,\"inputs\":[\"x2\"]},"
	"{\"id\":\"c\",\"mem\":1,\"inputs\":[\"a\",\"b\"]}]}";

static void test_no_fit_returns_enofit(void **state)
{
	struct remat_graph *g = tu_graph(TWO_INPUTS);
	struct remat_schedule s;
	struct remat_sim_result r;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(g->min_peak_lower_bound, 11);
	assert_int_equal(run(g, 20, NULL, &s, &r), REMAT_ENOFIT);
	assert_int_equal(run(g, 21, NULL, &s, &r), REMAT_OK);
	assert_int_equal(r.peak_mem, 21);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * "recompute": false on the middle of an 8-node chain with a long skip
 * edge; outputs n7 and n3.  Whatever the budget, those run once.
 */
static void test_recompute_false_and_outputs_run_once(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"n0\",\"mem\":2},"
		"{\"id\":\"n1\",\"mem\":2,\"inputs\":[\"n0\"]},"
		"{\"id\":\"n2\",\"mem\":2,\"inputs\":[\"n1\"]},"
		"{\"id\":\"n3\",\"mem\":1,\"inputs\":[\"n2\"]},"
		"{\"id\":\"n4\",\"mem\":2,\"recompute\":false,\"inputs\":[\"n3\"]},"
		"{\"id\":\"n5\",\"mem\":2,\"inputs\":[\"n4\",\"n0\"]},"
		"{\"id\":\"n6\",\"mem\":2,\"inputs\":[\"n5\",\"n1\"]},"
		"{\"id\":\"n7\",\"mem\":1,\"inputs\":[\"n6\",\"n2\",\"n4\"]}],"
		"\"outputs\":[\"n7\",\"n3\"]}");
	struct remat_schedule s;
	struct remat_sim_result r;
	int64_t b, i;
	int fits = 0;

	(void)state;
	remat_schedule_init(&s);
	for (b = g->min_peak_lower_bound; b <= g->no_remat_peak; b++) {
		int32_t n4 = remat_graph_find(g, "n4"), n3 = remat_graph_find(g, "n3");
		int c4 = 0, c3 = 0;

		if (run(g, b, NULL, &s, &r) != REMAT_OK)
			continue;
		fits++;
		for (i = 0; i < s.n; i++)
			if (s.steps[i].op == REMAT_OP_COMPUTE) {
				c4 += s.steps[i].node == n4;
				c3 += s.steps[i].node == n3;
			}
		assert_int_equal(c4, 1);
		assert_int_equal(c3, 1);
	}
	assert_true(fits > 0);
	/*
	 * The bare recursion at every cutoff too (its own schedule: through
	 * the runner, the needed nodes' order would win at this budget).
	 */
	for (i = 1; i <= 8; i++) {
		char k[8];
		int32_t n4 = remat_graph_find(g, "n4"), n3 = remat_graph_find(g, "n3");
		int64_t j;
		int c4 = 0, c3 = 0;

		snprintf(k, sizeof(k), "%d", (int)i);
		assert_int_equal(run_flags(g, 1000, k, TU_OWN | TU_MUST_FIT, &s, &r), REMAT_OK);
		for (j = 0; j < s.n; j++)
			if (s.steps[j].op == REMAT_OP_COMPUTE) {
				c4 += s.steps[j].node == n4;
				c3 += s.steps[j].node == n3;
			}
		assert_int_equal(c4, 1);
		assert_int_equal(c3, 1);
	}
	remat_schedule_release(&s);
	remat_graph_free(g);
}

static void test_workspace_counts(void **state)
{
	/* b's workspace of 50 sets the floor: 1 (a) + 1 (b) + 50 = 52. */
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"a\",\"mem\":1},"
		"{\"id\":\"b\",\"mem\":1,\"workspace\":50,\"inputs\":[\"a\"]},"
		"{\"id\":\"c\",\"mem\":1,\"inputs\":[\"b\",\"a\"]}]}");
	struct remat_schedule s;
	struct remat_sim_result r;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(run(g, 52, NULL, &s, &r), REMAT_OK);
	assert_int_equal(r.peak_mem, 52);
	assert_int_equal(run(g, 51, NULL, &s, &r), REMAT_ENOFIT);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * A training chain of 3 layers that lists its weight gradients W3, W2
 * last (F1 F2 F3 4 bytes, L 1, B3 B2 4, W3 W2 1; costs 1, 1, 1, 1, 2, 2,
 * 2, 2: baseline 12).  The file's order F1 F2 F3 L B3 B2 W3 W2: B3 at
 * 13 + 4 = 17, F3 freed (13); B2 at 17, and since W3 still reads L and
 * F2 and W2 reads F1 and B3, all stay: W3 at 17 + 1 = 18, the no-remat
 * peak.  At budget 17 a plan in that order must recompute (cost >= 13;
 * twremat found 13 before it followed a second order).  The order
 * F1 F2 F3 L B3 W3 B2 W2 computes every node once: B3 at 17, F3 freed
 * (13); W3 at 14, L freed (13); B2 at 17, F2 freed (13); W2 at 14.
 * Peak 17, cost 12: list scheduling finds it (step 2a).
 */
static void test_order_with_late_weight_gradients(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"F1\",\"kind\":\"forward\",\"mem\":4,\"cost\":1},"
		"{\"id\":\"F2\",\"kind\":\"forward\",\"mem\":4,\"cost\":1,\"inputs\":[\"F1\"]},"
		"{\"id\":\"F3\",\"kind\":\"forward\",\"mem\":4,\"cost\":1,\"inputs\":[\"F2\"]},"
		"{\"id\":\"L\",\"kind\":\"loss\",\"mem\":1,\"cost\":1,\"inputs\":[\"F3\"]},"
		"{\"id\":\"B3\",\"kind\":\"backward\",\"mem\":4,\"cost\":2,"
		"\"inputs\":[\"L\",\"F2\",\"F3\"],\"grad_of\":\"F3\"},"
		"{\"id\":\"B2\",\"kind\":\"backward\",\"mem\":4,\"cost\":2,"
		"\"inputs\":[\"B3\",\"F1\",\"F2\"],\"grad_of\":\"F2\"},"
		"{\"id\":\"W3\",\"kind\":\"backward\",\"mem\":1,\"cost\":2,"
		"\"inputs\":[\"L\",\"F2\"],\"grad_of\":\"F3\"},"
		"{\"id\":\"W2\",\"kind\":\"backward\",\"mem\":1,\"cost\":2,"
		"\"inputs\":[\"B3\",\"F1\"],\"grad_of\":\"F2\"}],"
		"\"outputs\":[\"B2\",\"W3\",\"W2\"]}");
	struct remat_schedule s;
	struct remat_sim_result r;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(g->no_remat_peak, 18);
	assert_true(g->baseline_cost == 12);
	assert_int_equal(run(g, 17, NULL, &s, &r), REMAT_OK);
	assert_true(r.cost == 12 && r.recomputes == 0 && r.peak_mem == 17);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

static void test_bad_options(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_kv opt = { "cutoff", "zero" };
	struct tu_plan t = { .p = tw(), .opts = &opt, .n_opts = 1, .flags = TU_ANY_STATUS };

	(void)state;
	assert_int_equal(tu_plan_run(g, 3, &t), REMAT_EUSAGE);
	assert_non_null(strstr(t.err.msg, "--cutoff"));
	tu_plan_release(&t);
	remat_graph_free(g);
}

/* The compute steps of s, by id, are want ("A B C", frees left out). */
static void assert_computes(const struct remat_graph *g, const struct remat_schedule *s,
			    const char *want)
{
	char buf[256];
	size_t used = 0;
	int64_t i;

	buf[0] = '\0';
	for (i = 0; i < s->n && used < sizeof(buf) - 32; i++)
		if (s->steps[i].op == REMAT_OP_COMPUTE)
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s",
						 used ? " " : "", g->id[s->steps[i].node]);
	assert_string_equal(buf, want);
}

/*
 * The replay on Kumar Fig. 1 in the order A B C D E within 3: D needs room,
 * so A (read again only by E) is evicted; E then recomputes A, freeing B
 * and C, which nothing reads again.  Computes A B C D A E, cost 6.
 */
static void test_replay_kumar(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule order, out;
	struct remat_sim_result r;

	(void)state;
	remat_schedule_init(&order);
	remat_schedule_init(&out);
	tu_sched(g, "A B C D E", &order);
	assert_int_equal(remat_i_evict_replay(g, &order, 3, 1000, NULL, &out, NULL), REMAT_OK);
	assert_computes(g, &out, "A B C D A E");
	assert_int_equal(remat_simulate(g, &out, 3, NULL, &r, NULL), REMAT_OK);
	assert_true(r.valid && r.feasible && r.cost == 6);
	/* Within 4 the order itself fits: replayed unchanged. */
	assert_int_equal(remat_i_evict_replay(g, &order, 4, 1000, NULL, &out, NULL), REMAT_OK);
	assert_int_equal(remat_simulate(g, &out, 4, NULL, &r, NULL), REMAT_OK);
	assert_true(r.valid && r.feasible && r.cost == 5);
	/* Within 2 nothing can work. */
	assert_int_equal(remat_i_evict_replay(g, &order, 2, 1000, NULL, &out, NULL), REMAT_ENOFIT);
	/* The step cap is honoured. */
	assert_int_equal(remat_i_evict_replay(g, &order, 3, 5, NULL, &out, NULL), REMAT_ENOFIT);
	remat_schedule_release(&order);
	remat_schedule_release(&out);
	remat_graph_free(g);
}

/*
 * The soft replay on Kumar Fig. 1, order A B C D E, within 2: as within 3
 * up to C, where A (read again by E) is evicted.  D reads B and C, both
 * locked, so D goes 1 over (2 held + 1).  E needs A back: B and C, read
 * no more, are freed for it, then E itself finds A and D locked: 1 over
 * again.  Computes A B C D A E, over 2, peak 3.  Within 3 it is the
 * replay above (over 0); the step cap is still a failure.
 */
static void test_replay_soft_kumar(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule order, out;
	struct remat_sim_result r;
	int64_t over = -1;

	(void)state;
	remat_schedule_init(&order);
	remat_schedule_init(&out);
	tu_sched(g, "A B C D E", &order);
	assert_int_equal(remat_i_evict_replay_soft(g, &order, 2, 1000, NULL, &out, &over, NULL),
			 REMAT_OK);
	assert_int_equal(over, 2);
	assert_computes(g, &out, "A B C D A E");
	assert_int_equal(remat_simulate(g, &out, 2, NULL, &r, NULL), REMAT_OK);
	assert_true(r.valid && !r.feasible && r.peak_mem == 3 && r.cost == 6);
	assert_int_equal(remat_i_evict_replay_soft(g, &order, 3, 1000, NULL, &out, &over, NULL),
			 REMAT_OK);
	assert_int_equal(over, 0);
	assert_int_equal(remat_simulate(g, &out, 3, NULL, &r, NULL), REMAT_OK);
	assert_true(r.valid && r.feasible && r.cost == 6);
	assert_int_equal(remat_i_evict_replay_soft(g, &order, 3, 5, NULL, &out, &over, NULL),
			 REMAT_ENOFIT);
	assert_true(over == INT64_MAX);
	remat_schedule_release(&order);
	remat_schedule_release(&out);
	remat_graph_free(g);
}

/*
 * A replay of a valid order is valid and within its limit whenever it
 * succeeds; when the order itself fits, the replay succeeds and costs no
 * more (it only skips recomputations of values it kept).
 */
static void test_replay_random(void **state)
{
	uint64_t seed = 2024;
	int round;

	(void)state;
	for (round = 0; round < 80; round++) {
		char *json = tu_random_graph_json(&seed, 4 + round % 25, 0.25, round % 3 == 0);
		struct remat_graph *g = tu_graph(json);
		struct remat_schedule order, out, soft;
		struct remat_sim_result ro, r;
		int64_t limit;
		int rc;

		remat_schedule_init(&order);
		remat_schedule_init(&out);
		remat_schedule_init(&soft);
		assert_int_equal(remat_schedule_topo(g, &order, NULL), REMAT_OK);
		assert_int_equal(remat_simulate(g, &order, -1, NULL, &ro, NULL), REMAT_OK);
		for (limit = g->min_peak_lower_bound; limit <= ro.peak_mem + 2; limit++) {
			int64_t over = -1;

			/* The soft replay: always a valid schedule, over 0 exactly when
			 * the replay fits, and then the same schedule. */
			int src = remat_i_evict_replay_soft(g, &order, limit, 100000, NULL, &soft,
							    &over, NULL);

			/* The soft replay: a valid schedule, over 0 exactly when it
			 * fits, and then the replay's own schedule.  (Rounds 10 and 16
			 * at 27 and 36 bytes gave up before evictions made owed the
			 * missing values between an evicted value and what is
			 * resident.) */
			if (src != REMAT_OK)
				fail_msg("soft replay gave up at %lld (round %d)", (long long)limit, round);
			assert_int_equal(remat_simulate(g, &soft, limit, NULL, &r, NULL), REMAT_OK);
			if (!r.valid)
				fail_msg("invalid soft replay at %lld: %s", (long long)limit, r.error);
			assert_true(over >= 0 && (over == 0) == (r.peak_mem <= limit));
			rc = remat_i_evict_replay(g, &order, limit, 100000, NULL, &out, NULL);
			assert_true(rc == REMAT_OK || rc == REMAT_ENOFIT);
			assert_true((rc == REMAT_OK) == (over == 0));
			if (rc == REMAT_OK) {
				assert_true(soft.n == out.n);
				assert_memory_equal(soft.steps, out.steps, sizeof(*out.steps) * (size_t)out.n);
			}
			if (limit >= ro.peak_mem)
				assert_int_equal(rc, REMAT_OK);
			if (rc != REMAT_OK)
				continue;
			assert_int_equal(remat_simulate(g, &out, limit, NULL, &r, NULL), REMAT_OK);
			if (!r.valid)
				fail_msg("invalid replay at %lld: %s", (long long)limit, r.error);
			assert_true(r.feasible);
			if (limit >= ro.peak_mem)
				assert_true(r.cost <= ro.cost);
		}
		remat_schedule_release(&order);
		remat_schedule_release(&out);
		remat_schedule_release(&soft);
		remat_graph_free(g);
		free(json);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kumar_fig1),
		cmocka_unit_test(test_chain_memory_is_logarithmic),
		cmocka_unit_test(test_budget_at_no_remat_peak_costs_nothing),
		cmocka_unit_test(test_no_fit_returns_enofit),
		cmocka_unit_test(test_recompute_false_and_outputs_run_once),
		cmocka_unit_test(test_workspace_counts),
		cmocka_unit_test(test_order_with_late_weight_gradients),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_replay_kumar),
		cmocka_unit_test(test_replay_soft_kumar),
		cmocka_unit_test(test_replay_random),
	};

	return cmocka_run_group_tests_name("twremat", tests, NULL, NULL);
}
