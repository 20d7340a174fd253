/*
 * test_greedy.c - the XLA-style greedy planner (src/planners/greedy.c) on
 * hand-sized graphs, each run worked out by hand in the comments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* greedy through tu_plan_run() (testutil.h), which checks its answer. */
static int greedy(const struct remat_graph *g, int64_t budget, struct remat_schedule *s,
		  struct remat_sim_result *res, struct remat_error *err)
{
	struct tu_plan t = { .planner = "greedy", .seed = 1 };

	remat_schedule_swap(&t.s, s);
	tu_plan_run(g, budget, &t);
	remat_schedule_swap(&t.s, s);
	*res = t.res;
	*err = t.err;
	tu_plan_release(&t);
	return t.rc;
}

/*
 * Kumar et al. Fig. 1 at budget 3.  A B C fill memory; D needs a fourth
 * byte.  B and C are D's inputs; A (next use E) qualifies: drop it,
 * recompute it before E.  After D, B and C are dead.  Before E: A again
 * (D + A = 2), then E (3).
 */
static void test_kumar(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(greedy(g, 3, &s, &r, &err), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &s), "A B C -A D -B -C A E -A -D");
	assert_true(r.cost == 6.0);
	assert_int_equal(r.peak_mem, 3);
	/* At the no-remat peak nothing is dropped. */
	assert_int_equal(greedy(g, 4, &s, &r, &err), REMAT_OK);
	assert_int_equal(r.recomputes, 0);
	assert_int_equal(r.peak_mem, 4);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * a (3 bytes, cost 1), b (5, cost 9), c (5, cost 2), t (2) with no inputs,
 * then ya, yb, yc (1 byte each) reading a, b, c; t and the y's are
 * outputs.  No-remat peak 16, at ya (a b c t ya).
 */
#define ABC \
	"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[" \
	"{\"id\":\"a\",\"mem\":3,\"cost\":1}," \
	"{\"id\":\"b\",\"mem\":5,\"cost\":9}," \
	"{\"id\":\"c\",\"mem\":5,\"cost\":2%s}," \
	"{\"id\":\"t\",\"mem\":2}," \
	"{\"id\":\"ya\",\"mem\":1,\"inputs\":[\"a\"]}," \
	"{\"id\":\"yb\",\"mem\":1,\"inputs\":[\"b\"]}," \
	"{\"id\":\"yc\",\"mem\":1,\"inputs\":[\"c\"]}]}"

static struct remat_graph *abc(const char *c_extra)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), ABC, c_extra);
	return tu_graph(buf);
}

/*
 * Budget 14: t needs 13 + 2 = 15.  b and c free the most (5); tie broken
 * by the lower recompute cost: c.  t: 10; ya: 11, a dies; yb: 9, b dies;
 * c comes back before yc: 4 + 5 = 9; yc: 10.
 */
static void test_largest_then_cheapest(void **state)
{
	struct remat_graph *g = abc("");
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(g->no_remat_peak, 16);
	assert_int_equal(greedy(g, 14, &s, &r, &err), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &s), "a b c -c t ya -a yb -b c yc -c");
	assert_int_equal(r.recomputes, 1);
	assert_true(r.cost == 18.0); /* 1 + 9 + 2 + 4 x 1, plus c again (2) */
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * Budget 10: c needs 3 + 5 + 5 = 13: a (3) or b (5)? b frees more: drop
 * it (next use yb); c at 8, t at 10.  ya needs 11; a is its input, c
 * (next use yc) goes; ya at 6, a dies.  Before yb: b (3 + 5 = 8), yb 9,
 * b dies; before yc: c (4 + 5 = 9), yc 10.
 */
static void test_repeats_while_over(void **state)
{
	struct remat_graph *g = abc("");
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(greedy(g, 10, &s, &r, &err), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &s), "a b -b c t -c ya -a b yb -b c yc -c");
	assert_int_equal(r.recomputes, 2);
	assert_int_equal(r.peak_mem, 10);
	/*
	 * Budget 9: c drops b (13 -> 8), t drops c (10 -> 5); ya 6, a dies;
	 * b back (8), yb 9; c back (9) and yc needs 10: c is yc's input, t and
	 * the y's have no later use: nothing qualifies, over budget.
	 */
	assert_int_equal(greedy(g, 9, &s, &r, &err), REMAT_ENOFIT);
	assert_non_null(strstr(err.msg, "(10 bytes) at 'yc'"));
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/* c may not be recomputed: at t, b goes instead (14: 8 + 2 = 10). */
static void test_recompute_false(void **state)
{
	struct remat_graph *g = abc(",\"recompute\":false");
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(greedy(g, 14, &s, &r, &err), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &s), "a b c -b t ya -a b yb -b yc -c");
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * Only values with a later use qualify.  o1 (3 bytes) is an output nobody
 * reads, z1 (4), z2 reads z1.  Budget 6: z1 needs 7 and o1 has no later
 * use: greedy moves on and ends over budget (dtr, which may evict an
 * output and bring it back at the end, fits: see test_dtr.c).
 */
static void test_moves_on_then_enofit(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"o1\",\"mem\":3},"
		"{\"id\":\"z1\",\"mem\":4},"
		"{\"id\":\"z2\",\"mem\":1,\"inputs\":[\"z1\"]}],\"outputs\":[\"o1\",\"z2\"]}");
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(greedy(g, 6, &s, &r, &err), REMAT_ENOFIT);
	assert_non_null(strstr(err.msg, "(8 bytes) at 'z2'"));
	assert_int_equal(greedy(g, 8, &s, &r, &err), REMAT_OK);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * A value's recomputation must be able to reuse its inputs as they are.
 * Chain x -> f1 -> f2 -> f3 -> loss -> b3 -> b2 -> b1 (b_i reads
 * b_(i+1) or loss, f_(i-1) or x, f_i), 1 byte each; no-remat peak 6 (at b3).
 * Budget 5: f1 f2 f3 loss fit (5).  b3 needs 6: loss and f3 are its
 * inputs, f2's next use is b3 itself, so f1 (next use b2) goes; b3 at 5;
 * loss and f3 die.  Before b2, f1 again (x f2 b3 f1 = 4); b2 at 5; b3 and
 * f2 die; b1 at 4.
 * Budget 4: loss already needs 5: f1 and f2 qualify (1 byte, cost 1),
 * the earlier, f1, goes; loss at 4.  b3 needs 5: f2 no longer qualifies
 * (its input f1 is gone), nothing else does: over budget at 'b3'.
 */
static void test_inputs_must_be_resident(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"f1\",\"mem\":1,\"inputs\":[\"x\"]},"
		"{\"id\":\"f2\",\"mem\":1,\"inputs\":[\"f1\"]},"
		"{\"id\":\"f3\",\"mem\":1,\"inputs\":[\"f2\"]},"
		"{\"id\":\"loss\",\"mem\":1,\"inputs\":[\"f3\"]},"
		"{\"id\":\"b3\",\"mem\":1,\"inputs\":[\"loss\",\"f2\",\"f3\"]},"
		"{\"id\":\"b2\",\"mem\":1,\"inputs\":[\"b3\",\"f1\",\"f2\"]},"
		"{\"id\":\"b1\",\"mem\":1,\"inputs\":[\"b2\",\"x\",\"f1\"]}],\"outputs\":[\"b1\"]}");
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(g->no_remat_peak, 6);
	assert_int_equal(greedy(g, 5, &s, &r, &err), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &s),
			    "f1 f2 f3 loss -f1 b3 -loss -f3 f1 b2 -b3 -f2 b1 -b2 -x -f1");
	assert_int_equal(r.recomputes, 1);
	assert_int_equal(greedy(g, 4, &s, &r, &err), REMAT_ENOFIT);
	assert_non_null(strstr(err.msg, "(5 bytes) at 'b3'"));
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * A recomputed value is never dropped again (XLA's denylist).  c (4
 * bytes) is read by y1 and y2; p1 (5) and p2 (4) are transients read by
 * q1 and q2; q1 y1 q2 y2 are 1-byte outputs.  Order c p1 q1 y1 p2 q2 y2.
 * Budget 9: q1 needs 4 + 5 + 1 = 10: c (next use y1) goes; p1 dies; c
 * again before y1 (q1 + c = 5), y1 at 6.  p2 needs 6 + 4 = 10: c would
 * free 4, but it is a recomputation; q1 and y1 have no later use: over
 * (10); q2: 11.  Dropping c a second time would have fit.
 */
static void test_denylist(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"c\",\"mem\":4},"
		"{\"id\":\"p1\",\"mem\":5},"
		"{\"id\":\"q1\",\"mem\":1,\"inputs\":[\"p1\"]},"
		"{\"id\":\"y1\",\"mem\":1,\"inputs\":[\"c\"]},"
		"{\"id\":\"p2\",\"mem\":4},"
		"{\"id\":\"q2\",\"mem\":1,\"inputs\":[\"p2\"]},"
		"{\"id\":\"y2\",\"mem\":1,\"inputs\":[\"c\"]}]}");
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(greedy(g, 9, &s, &r, &err), REMAT_ENOFIT);
	assert_non_null(strstr(err.msg, "(11 bytes) at 'q2'"));
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * The training chain x -> f1 -> f2 -> f3 -> f4 -> loss -> b4 -> ... -> b1
 * (b_i reads b_(i+1) or loss, f_(i-1) or x, f_i), 1 byte and cost 1
 * each; no-remat peak 7 (at b4), baseline cost 9.
 * Budget 6, round 1 fits: loss needs 6, fits; b4 needs 7: f1 (next use
 * b2) goes; f1 again before b2.  One recomputation, cost 10; the second
 * round does not run.
 * Budget 5, round 1 (XLA's rules): loss needs 6: f1 and f2 qualify, the
 * earlier, f1, goes (5).  b4 needs 6: f3, f4, loss are its inputs, f2's
 * input f1 is gone: nothing qualifies, over at 'b4' (6 bytes).
 * Round 2 (blocks): the same up to b4; now f2 qualifies, since its
 * missing input f1 can be recomputed from x: f2 goes, to come back before
 * b3 with f1 in front of it.  b4 at 5; loss and f4 die (x f3 b4 = 3).
 * Before b3: f1 (4), f2 (5), f1 goes again (its next use is b2, where its
 * own recomputation waits); b3 at 5; b4 and f3 die.  Before b2: f1 (4);
 * b2 at 5; b1 at 4.  Recomputed f1, f2, f1: cost 12, peak 5.  Budget 4:
 * b4 alone needs x f3 f4 loss b4 = 5, so no fit, with round 1's 6 bytes
 * or round 2's 5 as the lowest peak reached: 5.
 */
#define CHAIN4 \
	"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[" \
	"{\"id\":\"x\",\"kind\":\"input\",\"mem\":1}," \
	"{\"id\":\"f1\",\"mem\":1,\"inputs\":[\"x\"]}," \
	"{\"id\":\"f2\",\"mem\":1,\"inputs\":[\"f1\"]}," \
	"{\"id\":\"f3\",\"mem\":1,\"inputs\":[\"f2\"]}," \
	"{\"id\":\"f4\",\"mem\":1,\"inputs\":[\"f3\"]}," \
	"{\"id\":\"loss\",\"mem\":1,\"inputs\":[\"f4\"]}," \
	"{\"id\":\"b4\",\"mem\":1,\"inputs\":[\"loss\",\"f3\",\"f4\"]}," \
	"{\"id\":\"b3\",\"mem\":1,\"inputs\":[\"b4\",\"f2\",\"f3\"]}," \
	"{\"id\":\"b2\",\"mem\":1,\"inputs\":[\"b3\",\"f1\",\"f2\"]}," \
	"{\"id\":\"b1\",\"mem\":1,\"inputs\":[\"b2\",\"x\",\"f1\"]}],\"outputs\":[\"b1\"]}"

static void test_second_round_blocks(void **state)
{
	struct remat_graph *g = tu_graph(CHAIN4);
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(g->no_remat_peak, 7);
	assert_int_equal(greedy(g, 6, &s, &r, &err), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &s),
			    "f1 f2 f3 f4 loss -f1 b4 -loss -f4 b3 -b4 -f3 f1 b2 -b3 -f2 b1 -b2 -x -f1");
	assert_int_equal(r.recomputes, 1);
	assert_true(r.cost == 10.0);
	assert_int_equal(r.peak_mem, 6);
	assert_int_equal(greedy(g, 5, &s, &r, &err), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &s),
			    "f1 f2 f3 f4 -f1 loss -f2 b4 -loss -f4 f1 f2 -f1 b3 -b4 -f3 "
			    "f1 b2 -b3 -f2 b1 -b2 -x -f1");
	assert_int_equal(r.recomputes, 3);
	assert_true(r.cost == 12.0);
	assert_int_equal(r.peak_mem, 5);
	assert_int_equal(greedy(g, 4, &s, &r, &err), REMAT_ENOFIT);
	assert_non_null(strstr(err.msg, "(5 bytes) at '"));
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/* --rounds 1: XLA's rules alone, on the same chain (above): over at b4 at 5, round 1 at 6. */
static void test_rounds_one(void **state)
{
	struct remat_graph *g = tu_graph(CHAIN4);
	static const struct remat_kv one[] = { { "rounds", "1" } };
	struct tu_plan t = { .planner = "greedy", .opts = one, .n_opts = 1, .seed = 1 };

	(void)state;
	assert_int_equal(tu_plan_run(g, 5, &t), REMAT_ENOFIT);
	assert_non_null(strstr(t.err.msg, "(6 bytes) at 'b4'"));
	assert_int_equal(tu_plan_run(g, 6, &t), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &t.s),
			    "f1 f2 f3 f4 loss -f1 b4 -loss -f4 b3 -b4 -f3 f1 b2 -b3 -f2 b1 -b2 -x -f1");
	assert_true(t.res.cost == 10.0);
	tu_plan_release(&t);
	remat_graph_free(g);
}

/*
 * A deadline already past: the walk stops at its next check (every 4096
 * items).  At a budget that covers the no-remat peak the topological
 * order is returned instead of nothing (it fits by definition: the chain
 * computes each node once, nothing again).
 */
static void test_deadline(void **state)
{
	struct remat_graph_builder *b = NULL;
	struct remat_graph *g = NULL;
	struct tu_plan t = { .planner = "greedy", .time_limit = -1 };
	struct remat_error err;
	char id[32], in0[32];
	const char *ins[1] = { in0 };
	int i;

	(void)state;
	assert_int_equal(remat_builder_new("chain", &b, &err), REMAT_OK);
	for (i = 0; i < 5000; i++) {
		struct remat_node_spec v = { id, REMAT_KIND_OP, 1, 0, 1, 1, NULL, NULL, ins, i > 0 };

		snprintf(id, sizeof(id), "v%d", i);
		snprintf(in0, sizeof(in0), "v%d", i - 1);
		assert_int_equal(remat_builder_add(b, &v, &err), REMAT_OK);
	}
	assert_int_equal(remat_builder_finish(b, &g, &err), REMAT_OK);
	assert_int_equal(tu_plan_run(g, g->no_remat_peak, &t), REMAT_OK);
	assert_int_equal(t.res.computes, 5000);
	assert_int_equal(t.res.recomputes, 0);
	t.time_limit = 0;
	assert_int_equal(tu_plan_run(g, g->no_remat_peak, &t), REMAT_OK);
	tu_plan_release(&t);
	remat_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kumar),
		cmocka_unit_test(test_largest_then_cheapest),
		cmocka_unit_test(test_repeats_while_over),
		cmocka_unit_test(test_recompute_false),
		cmocka_unit_test(test_moves_on_then_enofit),
		cmocka_unit_test(test_inputs_must_be_resident),
		cmocka_unit_test(test_denylist),
		cmocka_unit_test(test_second_round_blocks),
		cmocka_unit_test(test_rounds_one),
		cmocka_unit_test(test_deadline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
