/* test_planner.c - the registry, remat_plan_run, none and auto. */
#include <math.h>
#include <string.h>

#include "testutil.h"

static int bogus_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		      struct remat_error *err)
{
	/* E without its inputs: a planner bug the runner must catch. */
	return remat_schedule_push(out, REMAT_OP_COMPUTE, remat_graph_find(req->graph, "E"), err);
}

static const struct remat_planner bogus = {
	.name = "bogus", .summary = "broken on purpose", .plan = bogus_plan,
};

static int giveup_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		       struct remat_error *err)
{
	(void)req;
	(void)out;
	return REMAT_FAIL(err, REMAT_ECANCELED, "out of time");
}

static const struct remat_planner giveup = {
	.name = "giveup", .summary = "finds nothing", .plan = giveup_plan,
};

static void request(struct remat_plan_request *req, const struct remat_graph *g, int64_t b)
{
	memset(req, 0, sizeof(*req));
	req->graph = g;
	req->budget = b;
}

/*
 * The runner's shared rule: the needed nodes in topological order, when
 * they fit.  x(1) -> A(2) -> B(1) is what the output B needs; U(5) reads
 * A and nothing needs it.  By hand: the no-remat order x A U B peaks at
 * 7 (A and U resident after x is dropped), costs 3; the needed order
 * A -x B -A peaks at 3 (x and A while A runs; A and B while B runs) and
 * costs 2.
 */
static void test_runner_offers_needed_order(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"A\",\"mem\":2,\"inputs\":[\"x\"]},"
		"{\"id\":\"U\",\"mem\":5,\"inputs\":[\"A\"]},"
		"{\"id\":\"B\",\"mem\":1,\"inputs\":[\"A\"]}],\"outputs\":[\"B\"]}");
	struct remat_plan_request req;
	struct remat_plan_report rep;
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	assert_int_equal(g->no_remat_peak, 7);
	remat_schedule_init(&s);
	remat_plan_report_init(&rep);
	request(&req, g, 3);
	req.report = &rep;
	assert_int_equal(remat_plan_run(&giveup, &req, &s, &r, &err), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &s), "A -x B -A");
	assert_true(r.valid && r.feasible && r.recomputes == 0);
	assert_int_equal(r.peak_mem, 3);
	assert_true(r.cost == 2 && r.baseline_cost == 3);
	assert_non_null(strstr(rep.note, "giveup: the needed nodes"));
	/* Below the least peak (A and its input x) nothing runs. */
	request(&req, g, 2);
	assert_int_equal(remat_plan_run(&giveup, &req, &s, &r, &err), REMAT_ENOFIT);
	/* 'none' is the reference: every node once, as it is (peak 7, cost 3). */
	request(&req, g, 7);
	assert_int_equal(remat_plan_run(remat_planner_find("none"), &req, &s, &r, &err),
			 REMAT_OK);
	assert_true(r.cost == 3 && r.peak_mem == 7);
	remat_graph_free(g);
	/* Where the order does not fit (Kumar's at 3: it peaks at 4), the
	 * planner's own status stands. */
	g = tu_graph(TU_KUMAR);
	request(&req, g, 3);
	assert_int_equal(remat_plan_run(&giveup, &req, &s, &r, &err), REMAT_ECANCELED);
	assert_false(r.valid);
	assert_int_equal(s.n, 0);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

static void test_registry(void **state)
{
	const struct remat_planner *const *pp = remat_planner_list();
	int n = 0;

	(void)state;
	assert_string_equal(pp[0]->name, "auto");
	for (; *pp; pp++) {
		assert_non_null((*pp)->summary);
		assert_ptr_equal(remat_planner_find((*pp)->name), *pp);
		n++;
	}
	assert_true(n >= 2);
	assert_non_null(remat_planner_find("none"));
	assert_null(remat_planner_find("nope"));
}

static void test_none_on_kumar(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_plan_request req;
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	request(&req, g, 4);
	assert_int_equal(remat_plan_run(remat_planner_find("none"), &req, &s, &r, &err),
			 REMAT_OK);
	/* Topological order with explicit frees after each last use. */
	assert_string_equal(tu_sched_text(g, &s), "A B C D -B -C E -A -D");
	assert_true(r.valid && r.feasible);
	assert_int_equal(r.peak_mem, 4);
	/* Over budget: reported, with the figures of what the planner found. */
	request(&req, g, 3);
	assert_int_equal(remat_plan_run(remat_planner_find("none"), &req, &s, &r, &err),
			 REMAT_ENOFIT);
	assert_true(r.valid && !r.feasible);
	assert_int_equal(r.peak_mem, 4);
	/* Below the lower bound (3): no planner is even asked. */
	request(&req, g, 2);
	assert_int_equal(remat_plan_run(remat_planner_find("none"), &req, &s, &r, &err),
			 REMAT_ENOFIT);
	assert_non_null(strstr(err.msg, "lower bound of 3 B (3 bytes)"));
	assert_false(r.valid);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

static void test_invalid_schedule_is_a_bug(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_plan_request req;
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	request(&req, g, 10);
	assert_int_equal(remat_plan_run(&bogus, &req, &s, &r, &err), REMAT_EINTERNAL);
	assert_non_null(strstr(err.msg, "planner 'bogus' produced an invalid schedule"));
	assert_non_null(strstr(err.msg, "compute 'E'"));
	remat_schedule_release(&s);
	remat_graph_free(g);
}

static void test_auto_picks_a_feasible_schedule(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_plan_request req;
	struct remat_plan_report rep;
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	remat_plan_report_init(&rep);
	request(&req, g, 4);
	req.report = &rep;
	assert_int_equal(remat_plan_run(remat_planner_find("auto"), &req, &s, &r, &err), REMAT_OK);
	assert_true(r.feasible);
	/* Nothing is cheaper than computing each needed node once. */
	assert_true(r.cost == 5);
	assert_true(rep.chosen[0] != '\0');
	remat_schedule_release(&s);
	remat_graph_free(g);
}

static void test_options(void **state)
{
	struct remat_kv kv[] = { { "slots", "300" }, { "ratio", "0.5" }, { "slots", "12" },
				 { "bad", "12x" } };
	struct remat_plan_request req;
	struct remat_error err;
	long v;
	double d;

	(void)state;
	memset(&req, 0, sizeof(req));
	req.options = kv;
	req.n_options = 4;
	assert_int_equal(remat_opt_int(&req, "slots", 500, 1, 100000, &v, &err), REMAT_OK);
	assert_int_equal(v, 12); /* the last one given wins */
	assert_int_equal(remat_opt_int(&req, "absent", 500, 1, 100000, &v, &err), REMAT_OK);
	assert_int_equal(v, 500);
	assert_int_equal(remat_opt_int(&req, "bad", 1, 1, 100, &v, &err), REMAT_EUSAGE);
	assert_non_null(strstr(err.msg, "'--bad'"));
	assert_int_equal(remat_opt_int(&req, "slots", 1, 20, 100, &v, &err), REMAT_EUSAGE);
	assert_int_equal(remat_opt_double(&req, "ratio", 1, 0, 1, &d, &err), REMAT_OK);
	assert_true(d == 0.5);
	assert_string_equal(remat_opt_get(&req, "ratio"), "0.5");
	assert_null(remat_opt_get(&req, "nothing"));
}

static void test_report_init(void **state)
{
	struct remat_plan_report r;

	(void)state;
	remat_plan_report_init(&r);
	assert_true(isnan(r.lower_bound) && isnan(r.gap));
	assert_int_equal(r.optimal, -1);
	assert_string_equal(r.chosen, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_runner_offers_needed_order),
		cmocka_unit_test(test_none_on_kumar),
		cmocka_unit_test(test_invalid_schedule_is_a_bug),
		cmocka_unit_test(test_auto_picks_a_feasible_schedule),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_report_init),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
