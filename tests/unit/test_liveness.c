/* test_liveness.c - explicit frees from a compute order, worked by hand. */
#include <string.h>

#include "testutil.h"

#define HEAD "{\"format\":\"remat-graph\",\"version\":1,"

static void expect_frees(const char *json, const char *order, const char *want)
{
	struct remat_graph *g = tu_graph(json);
	struct remat_schedule in, out;
	struct remat_sim_result a, b;

	remat_schedule_init(&in);
	remat_schedule_init(&out);
	tu_sched(g, order, &in);
	assert_int_equal(remat_liveness(g, &in, &out, NULL), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &out), want);
	/* The explicit form behaves exactly as the compute-only one. */
	assert_int_equal(remat_simulate(g, &in, -1, NULL, &a, NULL), REMAT_OK);
	assert_int_equal(remat_simulate(g, &out, -1, NULL, &b, NULL), REMAT_OK);
	assert_true(a.valid && b.valid);
	assert_int_equal(a.peak_mem, b.peak_mem);
	remat_schedule_release(&in);
	remat_schedule_release(&out);
	remat_graph_free(g);
}

static void test_kumar(void **state)
{
	(void)state;
	/* A's first value dies after B (A is recomputed before E); B, C after D. */
	expect_frees(TU_KUMAR, "A B C D A E", "A B -A C D -B -C A E -A -D");
	expect_frees(TU_KUMAR, "A B C D E", "A B C D -B -C E -A -D");
}

static void test_dead_value_freed_at_once(void **state)
{
	(void)state;
	expect_frees(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1},"
		     "{\"id\":\"c\",\"mem\":1,\"inputs\":[\"a\"]},"
		     "{\"id\":\"b\",\"mem\":1,\"inputs\":[\"a\"]}],\"outputs\":[\"b\"]}",
		     "a c b", "a c -c b -a");
}

static void test_inputs(void **state)
{
	(void)state;
	/* u is never read: dropped first; x after its last reader. */
	expect_frees(HEAD "\"nodes\":[{\"id\":\"x\",\"kind\":\"input\",\"mem\":4},"
		     "{\"id\":\"u\",\"kind\":\"input\",\"mem\":4},"
		     "{\"id\":\"a\",\"mem\":1,\"inputs\":[\"x\"]},"
		     "{\"id\":\"b\",\"mem\":1,\"inputs\":[\"a\",\"x\"]}],\"outputs\":[\"b\"]}",
		     "a b", "-u a b -a -x");
	/* An input that is an output stays. */
	expect_frees(HEAD "\"nodes\":[{\"id\":\"x\",\"kind\":\"input\",\"mem\":4},"
		     "{\"id\":\"a\",\"mem\":1,\"inputs\":[\"x\"]}],\"outputs\":[\"x\",\"a\"]}",
		     "a", "a");
}

static void test_recomputed_twice_without_use(void **state)
{
	(void)state;
	/* The first a is never read before it is computed again. */
	expect_frees(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1},"
		     "{\"id\":\"b\",\"mem\":1,\"inputs\":[\"a\"]}]}",
		     "a a b", "a -a a b -a");
}

static void test_frees_in_input_ignored(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule in, out;

	(void)state;
	remat_schedule_init(&in);
	remat_schedule_init(&out);
	tu_sched(g, "A B -A C D E", &in);
	assert_int_equal(remat_liveness(g, &in, &out, NULL), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &out), "A B C D -B -C E -A -D");
	remat_schedule_release(&in);
	remat_schedule_release(&out);
	remat_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kumar),
		cmocka_unit_test(test_dead_value_freed_at_once),
		cmocka_unit_test(test_inputs),
		cmocka_unit_test(test_recomputed_twice_without_use),
		cmocka_unit_test(test_frees_in_input_ignored),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
