/*
 * test_sim.c - the simulator on hand-worked schedules: both schedule
 * forms, every invalid-step rule, workspace, inputs and outputs.
 */
#include <math.h>
#include <string.h>

#include "testutil.h"

#define HEAD "{\"format\":\"remat-graph\",\"version\":1,"

static void test_kumar_no_remat(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_sim_result r = tu_sim(g, "A B C D E", -1);

	(void)state;
	assert_true(r.valid);
	assert_true(r.compute_only);
	assert_int_equal(r.peak_mem, 4);   /* Kumar et al. Fig. 1 */
	assert_int_equal(r.peak_step, 3);  /* while D runs: A B C + D */
	assert_true(r.cost == 5 && r.baseline_cost == 5 && r.overhead == 0);
	assert_int_equal(r.computes, 5);
	assert_int_equal(r.recomputes, 0);
	assert_int_equal(r.budget, -1);
	assert_true(r.feasible);
	remat_graph_free(g);
}

static void test_kumar_remat_A(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule s;
	int64_t tl[6];
	struct remat_sim_result r;

	(void)state;
	remat_schedule_init(&s);
	tu_sched(g, "A B C D A E", &s);
	assert_int_equal(remat_simulate(g, &s, 3, tl, &r, NULL), REMAT_OK);
	assert_true(r.valid && r.feasible);
	assert_int_equal(r.peak_mem, 3);
	assert_true(r.cost == 6);
	assert_int_equal(r.recomputes, 1);
	assert_true(fabs(r.overhead - 0.2) < 1e-12);
	/* A freed after B; B, C after D; memory during each compute: */
	assert_int_equal(tl[0], 1);
	assert_int_equal(tl[1], 2);
	assert_int_equal(tl[2], 2);
	assert_int_equal(tl[3], 3);
	assert_int_equal(tl[4], 2);
	assert_int_equal(tl[5], 3);
	r = tu_sim(g, "A B C D A E", 2);
	assert_true(r.valid && !r.feasible);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

static void test_explicit_frees(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_sim_result r;

	(void)state;
	r = tu_sim(g, "A B -A C D -B -C A E", 3);
	assert_true(r.valid && r.feasible);
	assert_false(r.compute_only);
	assert_int_equal(r.peak_mem, 3);
	assert_true(r.cost == 6);
	/* Frees as written and nothing else: B C D stay, E runs on 5. */
	r = tu_sim(g, "A B C D -A A E", -1);
	assert_true(r.valid);
	assert_int_equal(r.peak_mem, 5);
	remat_graph_free(g);
}

static void expect_invalid(const struct remat_graph *g, const char *text, int64_t step,
			   const char *node, const char *why)
{
	struct remat_sim_result r = tu_sim(g, text, -1);

	assert_false(r.valid);
	assert_false(r.feasible);
	assert_int_equal(r.error_step, step);
	assert_string_equal(g->id[r.error_node], node);
	if (!strstr(r.error, why))
		fail_msg("error '%s' lacks '%s'", r.error, why);
}

static void test_invalid_steps(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);

	(void)state;
	/* With an explicit free present nothing is freed implicitly. */
	expect_invalid(g, "A B C D A E -B", 4, "A", "already resident");
	expect_invalid(g, "A -B", 1, "B", "not resident");
	expect_invalid(g, "A C", 1, "C", "its input 'B' is not resident");
	expect_invalid(g, "A B -B D", 3, "D", "its input 'B'");
	expect_invalid(g, "A B C D", 4, "E", "output 'E' is not resident");
	expect_invalid(g, "A B C D E -E", 6, "E", "output 'E'");
	remat_graph_free(g);
}

/*
 * A schedule built through the library with a node index out of range:
 * invalid at that step, with or without frees, and refused by the
 * liveness pass (an outside review: a compute-only one was read, and
 * written, out of bounds before the check).
 */
static void test_index_out_of_range(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	int32_t bad[2] = { -1, 0 };
	struct remat_sim_result r;
	struct remat_schedule s, out;
	struct remat_error err;
	int i, with_free;

	(void)state;
	bad[1] = g->n;
	remat_schedule_init(&out);
	for (i = 0; i < 2; i++)
		for (with_free = 0; with_free < 2; with_free++) {
			remat_schedule_init(&s);
			assert_int_equal(remat_schedule_push(&s, REMAT_OP_COMPUTE, 0, &err),
					 REMAT_OK);
			if (with_free)
				assert_int_equal(remat_schedule_push(&s, REMAT_OP_FREE, 0, &err),
						 REMAT_OK);
			assert_int_equal(remat_schedule_push(&s, REMAT_OP_COMPUTE, bad[i], &err),
					 REMAT_OK);
			assert_int_equal(remat_simulate(g, &s, -1, NULL, &r, &err), REMAT_OK);
			assert_false(r.valid);
			assert_int_equal(r.error_step, 1 + with_free);
			assert_non_null(strstr(r.error, "out of range"));
			if (!with_free) {
				assert_int_equal(remat_liveness(g, &s, &out, &err), REMAT_EINPUT);
				assert_non_null(strstr(err.msg, "out of range"));
				assert_int_equal(remat_schedule_add_frees(g, &s, &err),
						 REMAT_EINPUT);
			}
			remat_schedule_release(&s);
		}
	remat_schedule_release(&out);
	remat_graph_free(g);
}

static void test_inputs_and_recompute_false(void **state)
{
	struct remat_graph *g = tu_graph(HEAD "\"nodes\":["
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":100},"
		"{\"id\":\"a\",\"mem\":1,\"inputs\":[\"x\"],\"recompute\":false},"
		"{\"id\":\"b\",\"mem\":1,\"inputs\":[\"a\"]},"
		"{\"id\":\"c\",\"mem\":1,\"inputs\":[\"a\",\"b\"]}]}");
	struct remat_sim_result r;

	(void)state;
	expect_invalid(g, "x", 0, "x", "input node");
	/* x is freed after its last use: never available again. */
	expect_invalid(g, "a -x b -a a", 4, "a", "\"recompute\": false");
	expect_invalid(g, "a -x -x", 2, "x", "not resident");
	r = tu_sim(g, "a b c", -1);
	assert_true(r.valid);
	/* x(100) + a = 101; then x is dropped: a b = 2, a b c = 3. */
	assert_int_equal(r.peak_mem, 101);
	remat_graph_free(g);
}

static void test_workspace_counts(void **state)
{
	struct remat_graph *g = tu_graph(HEAD "\"nodes\":["
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":100},"
		"{\"id\":\"a\",\"mem\":10,\"cost\":2,\"inputs\":[\"x\"],\"workspace\":1000},"
		"{\"id\":\"b\",\"mem\":10,\"cost\":3,\"inputs\":[\"a\"]}]}");
	struct remat_schedule s;
	int64_t tl[2];
	struct remat_sim_result r;

	(void)state;
	remat_schedule_init(&s);
	tu_sched(g, "a b", &s);
	assert_int_equal(remat_simulate(g, &s, 1110, tl, &r, NULL), REMAT_OK);
	assert_true(r.valid && r.feasible);
	assert_int_equal(r.peak_mem, 1110);   /* x + a + workspace */
	assert_int_equal(tl[1], 20);          /* x gone after a: a + b */
	assert_true(r.cost == 5 && r.baseline_cost == 5);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

static void test_unused_input_dropped(void **state)
{
	struct remat_graph *g = tu_graph(HEAD "\"nodes\":["
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":100},"
		"{\"id\":\"a\",\"mem\":1},"
		"{\"id\":\"b\",\"mem\":1,\"inputs\":[\"a\"]}],\"outputs\":[\"b\"]}");
	struct remat_sim_result r;

	(void)state;
	/* Compute-only: an input nobody uses goes before the first step. */
	r = tu_sim(g, "a b", -1);
	assert_true(r.valid);
	assert_int_equal(r.peak_mem, 2);
	/* Explicit: it stays until freed. */
	r = tu_sim(g, "a b -a", -1);
	assert_int_equal(r.peak_mem, 102);
	r = tu_sim(g, "-x a b -a", -1);
	assert_int_equal(r.peak_mem, 2);
	remat_graph_free(g);
}

static void test_empty_schedule(void **state)
{
	struct remat_graph *g = tu_graph(HEAD "\"nodes\":["
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":7}]}");
	struct remat_sim_result r;

	(void)state;
	/* x is its own output: resident from the start, never freed. */
	r = tu_sim(g, "", 7);
	assert_true(r.valid && r.feasible);
	assert_int_equal(r.peak_mem, 7);
	assert_int_equal(r.computes, 0);
	assert_true(r.overhead == 0 && r.baseline_cost == 0);
	remat_graph_free(g);
}

static void test_outputs_never_freed_implicitly(void **state)
{
	/* a is an output and also feeds b. */
	struct remat_graph *g = tu_graph(HEAD "\"nodes\":["
		"{\"id\":\"a\",\"mem\":5},"
		"{\"id\":\"b\",\"mem\":1,\"inputs\":[\"a\"]},"
		"{\"id\":\"c\",\"mem\":1,\"inputs\":[\"b\"]}],\"outputs\":[\"a\",\"c\"]}");
	struct remat_sim_result r = tu_sim(g, "a b c", -1);

	(void)state;
	assert_true(r.valid);
	assert_int_equal(r.peak_mem, 7);  /* a stays: a + b + c */
	remat_graph_free(g);
}

static void test_dead_nodes_may_be_skipped(void **state)
{
	struct remat_graph *g = tu_graph(HEAD "\"nodes\":["
		"{\"id\":\"a\",\"mem\":1},"
		"{\"id\":\"dead\",\"mem\":50,\"cost\":4,\"inputs\":[\"a\"]},"
		"{\"id\":\"b\",\"mem\":1,\"inputs\":[\"a\"]}],\"outputs\":[\"b\"]}");
	struct remat_sim_result r = tu_sim(g, "a b", -1);

	(void)state;
	assert_true(r.valid);
	assert_true(r.cost == 2);
	assert_true(r.baseline_cost == 6);
	assert_true(fabs(r.overhead - (2.0 / 6.0 - 1.0)) < 1e-12);
	/* A dead value is freed right after it is computed. */
	r = tu_sim(g, "a dead b", -1);
	assert_int_equal(r.peak_mem, 51);
	assert_int_equal(g->no_remat_peak, 51);
	remat_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kumar_no_remat),
		cmocka_unit_test(test_kumar_remat_A),
		cmocka_unit_test(test_explicit_frees),
		cmocka_unit_test(test_invalid_steps),
		cmocka_unit_test(test_index_out_of_range),
		cmocka_unit_test(test_inputs_and_recompute_false),
		cmocka_unit_test(test_workspace_counts),
		cmocka_unit_test(test_unused_input_dropped),
		cmocka_unit_test(test_empty_schedule),
		cmocka_unit_test(test_outputs_never_freed_implicitly),
		cmocka_unit_test(test_dead_nodes_may_be_skipped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
