/*
 * test_checkmate.c - the exact planner: answers worked out by hand
 * (Kumar et al. 2019 Fig. 1) or by the exhaustive search of
 * exhaustive.h, the model's own invariants (its peak is the simulator's,
 * its points satisfy its rows), warm starts, the GLPK error hook.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"
#include "exhaustive.h"
#include "plan/checkmate_model.h"
#include "solver/milp.h"

extern const struct remat_planner remat_i_planner_checkmate;

/*
 * A training chain of n layers with unit sizes: x, f1..fn, loss,
 * bn..b1 where b_i reads b_{i+1} (the loss for bn), f_i and f_{i-1} (x
 * for b1); forward and loss cost 1, backward 2.  Output b1.
 */
static struct remat_graph *chain(int n)
{
	char buf[8192];
	int used = 0, i;

	used += snprintf(buf + used, sizeof(buf) - (size_t)used,
			 "{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
			 "{\"id\":\"x\",\"kind\":\"input\",\"mem\":1}");
	for (i = 1; i <= n; i++) {
		char prev[16];

		if (i == 1)
			snprintf(prev, sizeof(prev), "x");
		else
			snprintf(prev, sizeof(prev), "f%d", i - 1);
		used += snprintf(buf + used, sizeof(buf) - (size_t)used,
				 ",{\"id\":\"f%d\",\"kind\":\"forward\",\"mem\":1,\"cost\":1,"
				 "\"inputs\":[\"%s\"]}", i, prev);
	}
	used += snprintf(buf + used, sizeof(buf) - (size_t)used,
			 ",{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":1,\"cost\":1,"
			 "\"inputs\":[\"f%d\"]}", n);
	for (i = n; i >= 1; i--) {
		char grad[16], below[16];

		if (i == n)
			snprintf(grad, sizeof(grad), "loss");
		else
			snprintf(grad, sizeof(grad), "b%d", i + 1);
		if (i == 1)
			snprintf(below, sizeof(below), "x");
		else
			snprintf(below, sizeof(below), "f%d", i - 1);
		used += snprintf(buf + used, sizeof(buf) - (size_t)used,
				 ",{\"id\":\"b%d\",\"kind\":\"backward\",\"mem\":1,\"cost\":2,"
				 "\"grad_of\":\"f%d\",\"inputs\":[\"%s\",\"f%d\",\"%s\"]}",
				 i, i, grad, i, below);
	}
	snprintf(buf + used, sizeof(buf) - (size_t)used, "],\"outputs\":[\"b1\"]}");
	return tu_graph(buf);
}

/*
 * Run checkmate through tu_plan_run() (testutil.h: the runner, then its
 * answer checked) with the given solver and warm start; r.rc, r.res,
 * r.rep, r.s.  Release with tu_plan_release().
 */
static struct tu_plan run_cm(const struct remat_graph *g, int64_t budget, double limit,
			     const char *solver, const char *warm)
{
	struct remat_kv kv[2];
	struct tu_plan r = { .p = &remat_i_planner_checkmate, .opts = kv, .time_limit = limit };

	if (solver) {
		kv[r.n_opts].key = "solver";
		kv[r.n_opts++].value = solver;
	}
	if (warm) {
		kv[r.n_opts].key = "warm-start";
		kv[r.n_opts++].value = warm;
	}
	tu_plan_run(g, budget, &r);
	r.opts = NULL;
	r.n_opts = 0;
	return r;
}

static int count_computes(const struct remat_schedule *s, int32_t v)
{
	int64_t i;
	int n = 0;

	for (i = 0; i < s->n; i++)
		n += s->steps[i].op == REMAT_OP_COMPUTE && s->steps[i].node == v;
	return n;
}

/* Kumar et al. Fig. 1 at budget 3: one recomputation of A, cost 6. */
static void test_kumar(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	const char *solvers[] = { "cbc", "glpk" };
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		struct tu_plan r = run_cm(g, 3, 0, solvers[i], "off");

		assert_int_equal(r.rc, REMAT_OK);
		assert_true(r.res.cost == 6);
		assert_true(r.res.peak_mem <= 3);
		assert_int_equal(r.res.recomputes, 1);
		assert_int_equal(count_computes(&r.s, remat_graph_find(g, "A")), 2);
		assert_int_equal(r.rep.optimal, 1);
		assert_true(r.rep.lower_bound == 6);
		assert_true(r.rep.gap == 0);
		tu_plan_release(&r);

		/* At the no-remat peak the warm start (none) is optimal at once. */
		r = run_cm(g, 4, 0, solvers[i], NULL);
		assert_int_equal(r.rc, REMAT_OK);
		assert_true(r.res.cost == 5);
		assert_int_equal(r.rep.optimal, 1);
		tu_plan_release(&r);
	}
	remat_graph_free(g);
}

/*
 * Training chains of 3 to 6 layers at every budget from 1 unit to the
 * no-remat peak: the proven MILP optimum equals the exhaustive optimum
 * (a chain's topological order is unique, so every schedule's first
 * computations follow it), and both agree on where nothing fits.
 */
static void test_chains_against_exhaustive(void **state)
{
	int n;

	(void)state;
	for (n = 3; n <= 6; n++) {
		struct remat_graph *g = chain(n);
		int64_t b;

		for (b = 1; b <= g->no_remat_peak; b++) {
			double ex = exhaustive_min_cost(g, b);
			int k;

			for (k = 0; k < (n <= 4 ? 2 : 1); k++) {
				struct tu_plan r = run_cm(g, b, 0, k ? "glpk" : "cbc", "off");

				if (ex < 0) {
					assert_int_equal(r.rc, REMAT_ENOFIT);
				} else {
					if (r.rc != REMAT_OK || fabs(r.res.cost - ex) > 1e-9)
						fail_msg("chain %d budget %lld %s: cost %g rc %d, "
							 "exhaustive %g", n, (long long)b,
							 k ? "glpk" : "cbc", r.res.cost, r.rc, ex);
					assert_true(r.res.peak_mem <= b);
					assert_int_equal(r.rep.optimal, 1);
				}
				tu_plan_release(&r);
			}
		}
		remat_graph_free(g);
	}
}

/*
 * Solve the model directly and check its invariants: the solver's point
 * satisfies the rows it was given; after rounding, (R, S) satisfies the
 * structural rows and the budget; the schedule of the point simulates to
 * exactly the model's peak and cost, before and after normalizing; the
 * exact point, written back as a vector, satisfies every row.
 */
static void roundtrip(const struct remat_graph *g, int64_t budget, int hazard,
		      enum remat_i_milp_backend backend, double expect_cost)
{
	struct remat_i_cm cm;
	struct remat_i_cm_sol sol;
	struct remat_i_milp_opts mo;
	struct remat_i_milp_result mr;
	struct remat_schedule s;
	struct remat_sim_result res;
	struct remat_error err;
	double *x;
	int pass;

	remat_error_clear(&err);
	assert_int_equal(remat_i_cm_init(&cm, g, budget, 0, &err), REMAT_OK);
	cm.hazard_rows = hazard;
	assert_int_equal(remat_i_cm_build(&cm, &err), REMAT_OK);
	assert_int_equal(remat_i_cm_sol_init(&cm, &sol, &err), REMAT_OK);
	memset(&mo, 0, sizeof(mo));
	assert_int_equal(remat_i_milp_solve(backend, &cm.lp, &mo, &mr, &err), REMAT_OK);
	if (expect_cost < 0) {
		assert_int_equal(mr.status, REMAT_I_MILP_INFEASIBLE);
		goto out;
	}
	assert_int_equal(mr.status, REMAT_I_MILP_OPTIMAL);
	/* The objective counts costs in the model's unit (cost_unit). */
	assert_true(fabs(mr.obj * cm.cost_unit - expect_cost) < 1e-6);
	assert_int_equal(remat_i_milp_check(&cm.lp, mr.x, 1e-6, NULL), -1);
	remat_i_cm_from_x(&cm, mr.x, &sol);
	remat_schedule_init(&s);
	x = calloc((size_t)cm.lp.ncols + 1, sizeof(double));
	for (pass = 0; pass < 2; pass++) {
		if (pass == 0) {
			assert_null(remat_i_cm_complete(&cm, &sol));
			/* The raw point costs what the solver says. */
			assert_true(fabs(sol.cost - mr.obj * cm.cost_unit) < 1e-6);
		} else {
			assert_int_equal(remat_i_cm_normalize(&cm, &sol, &err), REMAT_OK);
			assert_null(remat_i_cm_complete(&cm, &sol));
			assert_true(sol.cost <= mr.obj * cm.cost_unit + 1e-6);
		}
		assert_true(sol.peak <= cm.budget);
		remat_i_cm_to_x(&cm, &sol, x);
		assert_int_equal(remat_i_milp_check(&cm.lp, x, 1e-9, NULL), -1);
		assert_int_equal(remat_i_cm_schedule(&cm, &sol, &s, &err), REMAT_OK);
		assert_int_equal(remat_simulate(g, &s, budget, NULL, &res, &err), REMAT_OK);
		if (!res.valid)
			fail_msg("schedule invalid: %s (%s)", res.error, tu_sched_text(g, &s));
		assert_true(res.feasible);
		assert_int_equal(res.peak_mem, sol.peak * cm.unit);
		assert_true(fabs(res.cost - sol.cost) < 1e-9);
		/* Explicit frees: the simulator did not derive its own. */
		assert_true(remat_schedule_count_frees(&s) > 0 || g->n == g->n_outputs);
	}
	free(x);
	remat_schedule_release(&s);
out:
	remat_i_milp_result_release(&mr);
	remat_i_cm_sol_release(&sol);
	remat_i_cm_release(&cm);
}

static void test_model_roundtrip(void **state)
{
	struct remat_graph *k = tu_graph(TU_KUMAR), *c4 = chain(4);
	int64_t b;
	int hz;

	(void)state;
	for (hz = 0; hz < 2; hz++) {
		roundtrip(k, 3, hz, REMAT_I_MILP_CBC, 6);
		roundtrip(k, 3, hz, REMAT_I_MILP_GLPK, 6);
		roundtrip(k, 4, hz, REMAT_I_MILP_CBC, 5);
		for (b = 1; b <= c4->no_remat_peak; b++) {
			double ex = exhaustive_min_cost(c4, b);

			/* Below the lower bound the model is infeasible too. */
			roundtrip(c4, b, hz, REMAT_I_MILP_CBC, ex);
		}
	}
	remat_graph_free(k);
	remat_graph_free(c4);
}

/*
 * The adaptations on one graph: an input nobody needs (freed before the
 * first step), a node no output depends on (never computed), an input
 * that is an output, a workspace, a node that may not be recomputed, and
 * sizes with a GCD of 1024.
 */
static const char *const ADAPT =
	"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
	"{\"id\":\"x\",\"kind\":\"input\",\"mem\":2048},"
	"{\"id\":\"unused\",\"kind\":\"input\",\"mem\":9216},"
	"{\"id\":\"w\",\"kind\":\"input\",\"mem\":1024},"
	"{\"id\":\"a\",\"mem\":2048,\"cost\":1,\"inputs\":[\"x\"]},"
	"{\"id\":\"r\",\"mem\":1024,\"cost\":4,\"recompute\":false,\"inputs\":[\"a\"]},"
	"{\"id\":\"dead\",\"mem\":4096,\"cost\":1,\"inputs\":[\"a\"]},"
	"{\"id\":\"b\",\"mem\":2048,\"cost\":2,\"workspace\":1024,\"inputs\":[\"a\",\"w\"]},"
	"{\"id\":\"c\",\"mem\":2048,\"cost\":1,\"inputs\":[\"b\"]},"
	"{\"id\":\"d\",\"mem\":2048,\"cost\":1,\"inputs\":[\"c\"]},"
	"{\"id\":\"e\",\"mem\":1024,\"cost\":1,\"inputs\":[\"d\",\"a\"]},"
	"{\"id\":\"f\",\"mem\":1024,\"cost\":1,\"inputs\":[\"e\",\"r\",\"c\"]}],"
	"\"outputs\":[\"f\",\"w\"]}";

static void test_adaptations(void **state)
{
	struct remat_graph *g = tu_graph(ADAPT);
	struct remat_i_cm cm;
	struct remat_error err;
	int64_t b;
	int checked = 0;

	(void)state;
	assert_int_equal(remat_i_cm_init(&cm, g, 100000, 0, &err), REMAT_OK);
	/* Model nodes: x, w (inputs), a, r, b, c, d, e, f; unit 1024. */
	assert_int_equal(cm.P, 2);
	assert_int_equal(cm.T, 7);
	assert_int_equal(cm.unit, 1024);
	assert_int_equal(cm.mi[remat_graph_find(g, "dead")], -1);
	assert_int_equal(cm.mi[remat_graph_find(g, "unused")], -1);
	remat_i_cm_release(&cm);
	for (b = g->min_peak_lower_bound - 1024; b <= g->no_remat_peak; b += 1024) {
		double ex = exhaustive_min_cost(g, b), exo = exhaustive_min_cost_in_order(g, b);
		struct tu_plan r = run_cm(g, b, 0, "cbc", "off");

		if (r.rc == REMAT_OK) {
			int64_t i;

			checked++;
			/* Optimal among schedules in the loader's order. */
			if (fabs(r.res.cost - exo) > 1e-9)
				fail_msg("budget %lld: cost %g, exhaustive in order %g", (long long)b,
					 r.res.cost, exo);
			assert_true(r.res.cost >= ex - 1e-9);
			/*
			 * Proven in its order (order_lower_bound); "optimal" and
			 * lower_bound hold in every order: optimal only where the
			 * in-order optimum is the optimum, and never above it.
			 */
			assert_true(fabs(r.rep.order_lower_bound - exo) < 1e-9);
			assert_int_equal(r.rep.optimal, fabs(r.res.cost - ex) < 1e-9);
			assert_true(r.rep.lower_bound <= ex + 1e-9);
			assert_int_equal(count_computes(&r.s, remat_graph_find(g, "dead")), 0);
			assert_int_equal(count_computes(&r.s, remat_graph_find(g, "r")), 1);
			/* The unused input is freed before the first compute. */
			for (i = 0; i < r.s.n && r.s.steps[i].op == REMAT_OP_FREE; i++)
				if (r.s.steps[i].node == remat_graph_find(g, "unused"))
					break;
			assert_true(i < r.s.n && r.s.steps[i].op == REMAT_OP_FREE);
			roundtrip(g, b, 0, REMAT_I_MILP_CBC, r.res.cost);
		} else {
			assert_int_equal(r.rc, REMAT_ENOFIT);
			assert_true(exo < 0);
		}
		tu_plan_release(&r);
	}
	/* At 8 KiB the global optimum (11) uses another order (below). */
	assert_true(exhaustive_min_cost(g, 8192) == 11);
	assert_true(exhaustive_min_cost_in_order(g, 8192) == 14);
	assert_int_equal(checked, 2);

	/*
	 * At 7 KiB a schedule exists (found by brute force, checked here by
	 * the simulator) though none in the loader's order does: it computes
	 * r after e, not right after a (topological order a r dead b c d e
	 * f), and r may run only once, so in that order r is held from the
	 * start.  A limit of the model, not of the solver.
	 */
	{
		struct remat_sim_result res = tu_sim(g, "-unused a -x b c -b d -c e -d b r -a "
						     "c -b f", 7168);
		struct remat_schedule sch;

		assert_true(res.feasible);
		assert_true(res.cost == 14);
		assert_true(exhaustive_min_cost(g, 7168) == 14);
		assert_true(exhaustive_min_cost_in_order(g, 7168) < 0);
		remat_schedule_init(&sch);
		tu_sched(g, "-unused a -x b c -b d -c e -d b r -a c -b f", &sch);
		assert_int_equal(remat_i_cm_init(&cm, g, 7168, 0, &err), REMAT_OK);
		{
			struct remat_i_cm_sol s;

			assert_int_equal(remat_i_cm_sol_init(&cm, &s, &err), REMAT_OK);
			assert_int_equal(remat_i_cm_map(&cm, &sch, &s, &err), REMAT_ENOFIT);
			assert_non_null(strstr(err.msg, "order"));
			remat_i_cm_sol_release(&s);
		}
		remat_i_cm_release(&cm);
		remat_schedule_release(&sch);
	}
	remat_graph_free(g);
}

/*
 * --max-computes: with C = 1 a chain (one topological order, no
 * recomputation) fits exactly from its no-remat peak on; with C = 2 no
 * node runs more than twice and the cost is at least the uncapped one.
 * With the warm start too: the fast planners' schedules, which recompute,
 * are no start and no answer (an outside review found checkmate returning
 * rotor's 7 recomputations under --max-computes 1 where the MILP was
 * infeasible).
 */
static void test_max_computes(void **state)
{
	struct remat_graph *g = chain(5);
	struct remat_kv kv[2] = { { "max-computes", "1" }, { "warm-start", "off" } };
	struct tu_plan t = { .p = &remat_i_planner_checkmate, .opts = kv, .n_opts = 2 };
	int64_t b, i;
	int32_t v;

	(void)state;
	/* Budgets 1 to the no-remat peak, without the warm start, then with it. */
	for (i = 0; i < 2 * g->no_remat_peak; i++) {
		int w = i >= g->no_remat_peak, rc;
		double ex;

		b = 1 + i % g->no_remat_peak;
		ex = exhaustive_min_cost(g, b);

		kv[0].value = "1";
		kv[1].value = w ? "on" : "off";
		t.brute = &ex;
		rc = tu_plan_run(g, b, &t);
		assert_int_equal(rc, b >= g->no_remat_peak ? REMAT_OK : REMAT_ENOFIT);
		kv[0].value = "2";
		rc = tu_plan_run(g, b, &t);
		if (rc == REMAT_OK)
			for (v = 0; v < g->n; v++)
				assert_true(count_computes(&t.s, v) <= 2);
	}
	tu_plan_release(&t);
	remat_graph_free(g);
}

static void *climber_ends(void *arg)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	(void)arg;
	nanosleep(&ts, NULL);
	remat_i_threads_add(-1);
	return NULL;
}

/*
 * Plans in several threads of one process: a solve forks, so it waits at
 * a gate while another plan's climbers (the order search's threads) run,
 * until its deadline, and then has stopped without a solution, as at the
 * deadline; once they end, it solves.  (An outside review ran lns and
 * checkmate in two threads: 7 of 10 checkmate runs failed with
 * REMAT_EINTERNAL, "other threads of remat are running".)  The climber is
 * played by remat_i_threads_add().
 */
static void test_solve_waits_for_other_plans(void **state)
{
	struct remat_graph *g = chain(5);
	double ex = exhaustive_min_cost(g, 6);
	struct tu_plan t;
	pthread_t th;

	(void)state;
	remat_i_threads_add(1);
	/* Closed to its deadline: no schedule (no warm start), not a bug. */
	t = run_cm(g, 6, 0.5, "cbc", "off");
	assert_int_equal(t.rc, REMAT_ENOFIT);
	tu_plan_release(&t);
	/* Opened 0.2 s in: the optimum (the exhaustive search's). */
	assert_int_equal(pthread_create(&th, NULL, climber_ends, NULL), 0);
	t = run_cm(g, 6, 60, "cbc", "off");
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(t.rc, REMAT_OK);
	assert_true(fabs(t.res.cost - ex) < 1e-9);
	tu_plan_release(&t);
	remat_graph_free(g);
}

/*
 * Warm start: improve() from a schedule that maps into the model.  With
 * the deadline already past it returns the incumbent's image (never
 * worse, not claimed optimal); with time it returns the optimum.  A
 * schedule in another order is no warm start.
 */
static void test_warm_start(void **state)
{
	struct remat_graph *g = chain(5);
	const char *solvers[] = { "cbc", "glpk" };
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		/* An incumbent: the optimum at a tighter budget fits a looser one. */
		struct tu_plan tight = run_cm(g, 5, 0, solvers[i], "off");
		struct remat_kv kv[1] = { { "solver", solvers[i] } };
		struct remat_plan_request req;
		struct remat_plan_report rep;
		struct remat_schedule out;
		struct remat_sim_result res;
		struct remat_error err;
		double ex = exhaustive_min_cost(g, 6);

		assert_int_equal(tight.rc, REMAT_OK);
		assert_true(tight.res.cost > ex); /* room to improve at budget 6 */
		memset(&req, 0, sizeof(req));
		remat_plan_report_init(&rep);
		remat_schedule_init(&out);
		req.graph = g;
		req.budget = 6;
		req.options = kv;
		req.n_options = 1;
		req.report = &rep;
		req.deadline = remat_now() - 1;
		assert_int_equal(remat_i_checkmate_improve(&req, &tight.s, &out, &err), REMAT_OK);
		assert_int_equal(remat_simulate(g, &out, 6, NULL, &res, &err), REMAT_OK);
		assert_true(res.feasible);
		assert_true(res.cost <= tight.res.cost + 1e-9);
		assert_int_equal(rep.optimal, 0);

		req.deadline = 0;
		remat_plan_report_init(&rep);
		assert_int_equal(remat_i_checkmate_improve(&req, &tight.s, &out, &err), REMAT_OK);
		assert_int_equal(remat_simulate(g, &out, 6, NULL, &res, &err), REMAT_OK);
		assert_true(res.feasible);
		assert_true(fabs(res.cost - ex) < 1e-9);
		assert_int_equal(rep.optimal, 1);
		remat_schedule_release(&out);
		tu_plan_release(&tight);
	}
	remat_graph_free(g);
}

static void test_map(void **state)
{
	/* Two independent branches: topological order a1 a2 b1 b2 out. */
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"a1\",\"mem\":1},{\"id\":\"a2\",\"mem\":1,\"inputs\":[\"a1\"]},"
		"{\"id\":\"b1\",\"mem\":1},{\"id\":\"b2\",\"mem\":1,\"inputs\":[\"b1\"]},"
		"{\"id\":\"out\",\"mem\":1,\"inputs\":[\"a2\",\"b2\"]}]}");
	struct remat_i_cm cm;
	struct remat_i_cm_sol s;
	struct remat_schedule sch;
	struct remat_error err;

	(void)state;
	assert_int_equal(remat_i_cm_init(&cm, g, 10, 0, &err), REMAT_OK);
	assert_int_equal(remat_i_cm_sol_init(&cm, &s, &err), REMAT_OK);
	remat_schedule_init(&sch);
	tu_sched(g, "a1 a2 b1 b2 out", &sch);
	assert_int_equal(remat_i_cm_map(&cm, &sch, &s, &err), REMAT_OK);
	/* Liveness of that order: a2 b1 b2 held while b2 runs... peak 3. */
	assert_int_equal(s.peak, 3);
	assert_true(s.cost == 5);
	/* b1 first: another order, not in the model. */
	tu_sched(g, "b1 b2 a1 a2 out", &sch);
	assert_int_equal(remat_i_cm_map(&cm, &sch, &s, &err), REMAT_ENOFIT);
	assert_non_null(strstr(err.msg, "order"));
	/* A recompute in the same stage twice: not in the model either. */
	tu_sched(g, "a1 a2 b1 -a1 a1 -a1 a1 b2 out", &sch);
	assert_int_equal(remat_i_cm_map(&cm, &sch, &s, &err), REMAT_ENOFIT);
	/* A recompute nothing reads is dropped by the mapping: cost 5, not 6. */
	tu_sched(g, "a1 a2 b1 -a1 a1 -a1 b2 out", &sch);
	assert_int_equal(remat_i_cm_map(&cm, &sch, &s, &err), REMAT_OK);
	assert_true(s.cost == 5);
	remat_schedule_release(&sch);
	remat_i_cm_sol_release(&s);
	remat_i_cm_release(&cm);
	remat_graph_free(g);
}

/* max x, x integer in [0, 1], x <= 1: optimum x = 1, objective -1 (minimised). */
static void one_var_model(struct remat_i_milp *m)
{
	struct remat_error err;

	remat_i_milp_init(m);
	assert_int_equal(remat_i_milp_add_col(m, 0, 1, -1, 1, NULL, &err), REMAT_OK);
	remat_i_milp_row_begin(m);
	assert_int_equal(remat_i_milp_row_add(m, 0, 1, &err), REMAT_OK);
	assert_int_equal(remat_i_milp_row_end(m, -HUGE_VAL, 1, &err), REMAT_OK);
}

/* GLPK's misuse abort becomes an error, and GLPK still works after it. */
static void test_glpk_error_hook(void **state)
{
	struct remat_i_milp m;
	struct remat_i_milp_opts mo;
	struct remat_i_milp_result mr;
	struct remat_error err;

	(void)state;
	one_var_model(&m);
	/* Corrupt a column index behind the builder's back. */
	m.row_idx[0] = 7;
	memset(&mo, 0, sizeof(mo));
	assert_int_equal(remat_i_milp_solve_glpk(&m, &mo, &mr, &err), REMAT_EINTERNAL);
	assert_non_null(strstr(err.msg, "GLPK"));
	m.row_idx[0] = 0;
	assert_int_equal(remat_i_milp_solve_glpk(&m, &mo, &mr, &err), REMAT_OK);
	assert_int_equal(mr.status, REMAT_I_MILP_OPTIMAL);
	assert_true(fabs(mr.obj + 1) < 1e-9);
	remat_i_milp_result_release(&mr);
	remat_i_milp_release(&m);
}

/*
 * Binary columns fixed by their bounds stay fixed, with both backends:
 * minimise x0 + 2 x1 + 3 x2 with x0 fixed at 1, x2 fixed at 0, and
 * x1 >= x0 (so x1 = 1 as well): optimum 3.  GLPK once set the kind
 * after the bounds, and GLP_BV reset them to [0, 1]: it answered 0.
 */
static void test_fixed_binaries(void **state)
{
	static const double lo[3] = { 1, 0, 0 }, up[3] = { 1, 1, 0 }, obj[3] = { 1, 2, 3 };
	int b;

	(void)state;
	for (b = 0; b < 2; b++) {
		struct remat_i_milp m;
		struct remat_i_milp_opts mo;
		struct remat_i_milp_result mr;
		struct remat_error err;
		int j;

		remat_i_milp_init(&m);
		for (j = 0; j < 3; j++)
			assert_int_equal(remat_i_milp_add_col(&m, lo[j], up[j], obj[j], 1, NULL, &err),
					 REMAT_OK);
		remat_i_milp_row_begin(&m); /* x0 - x1 <= 0 */
		assert_int_equal(remat_i_milp_row_add(&m, 0, 1, &err), REMAT_OK);
		assert_int_equal(remat_i_milp_row_add(&m, 1, -1, &err), REMAT_OK);
		assert_int_equal(remat_i_milp_row_end(&m, -HUGE_VAL, 0, &err), REMAT_OK);
		memset(&mo, 0, sizeof(mo));
		assert_int_equal(remat_i_milp_solve(b ? REMAT_I_MILP_GLPK : REMAT_I_MILP_CBC, &m, &mo,
						    &mr, &err), REMAT_OK);
		assert_int_equal(mr.status, REMAT_I_MILP_OPTIMAL);
		assert_true(fabs(mr.obj - 3) < 1e-9);
		assert_true(remat_i_milp_check(&m, mr.x, 1e-9, NULL) == -1);
		remat_i_milp_result_release(&mr);
		remat_i_milp_release(&m);
	}
}

/*
 * opts.hard bounds the whole solve, result included: with a hard time
 * already past, both backends return at once, stopped without a
 * solution (the child is told to stop, and killed at that time); with
 * none, the same model solves to its optimum (x = 1, objective -1, worked
 * out by hand: maximise x, x integer in [0, 1], x <= 1).
 */
static void test_hard_time(void **state)
{
	struct remat_i_milp m;
	struct remat_i_milp_opts mo;
	struct remat_i_milp_result mr;
	struct remat_error err;
	int b;

	(void)state;
	one_var_model(&m);
	for (b = 0; b < 2; b++) {
		enum remat_i_milp_backend be = b ? REMAT_I_MILP_GLPK : REMAT_I_MILP_CBC;

		memset(&mo, 0, sizeof(mo));
		mo.hard = remat_now() - 1;
		assert_int_equal(remat_i_milp_solve(be, &m, &mo, &mr, &err), REMAT_OK);
		assert_int_equal(mr.status, REMAT_I_MILP_NOSOLUTION);
		assert_true(mr.stopped);
		remat_i_milp_result_release(&mr);
		memset(&mo, 0, sizeof(mo));
		assert_int_equal(remat_i_milp_solve(be, &m, &mo, &mr, &err), REMAT_OK);
		assert_int_equal(mr.status, REMAT_I_MILP_OPTIMAL);
		assert_true(fabs(mr.obj + 1) < 1e-9);
		remat_i_milp_result_release(&mr);
	}
	remat_i_milp_release(&m);
}

/* A backend that crashes as CBC 2.10.8 does (SIGSEGV), or hangs. */
static int crashing_solve(const struct remat_i_milp *m, const struct remat_i_milp_opts *o,
			  struct remat_i_milp_result *r, struct remat_error *e)
{
	(void)m;
	(void)o;
	(void)r;
	(void)e;
	signal(SIGSEGV, SIG_DFL); /* not a sanitizer's report: the plain crash */
	raise(SIGSEGV);
	return REMAT_OK;
}

static int hanging_solve(const struct remat_i_milp *m, const struct remat_i_milp_opts *o,
			 struct remat_i_milp_result *r, struct remat_error *e)
{
	(void)m;
	(void)o;
	(void)r;
	(void)e;
	for (;;)
		pause();
	return REMAT_OK;
}

/*
 * Issue 36: a child that dies by a signal is a crash, counted with its
 * signal (res.crashed, remat_i_milp_crashes()); one killed at its
 * deadline is not; no solve forks while another thread of remat runs.
 */
static void test_isolate_crash(void **state)
{
	struct remat_i_milp m;
	struct remat_i_milp_opts mo;
	struct remat_i_milp_result mr;
	struct remat_error err;
	int64_t before;
	int sig = 0;

	(void)state;
	one_var_model(&m);
	memset(&mo, 0, sizeof(mo));
	before = remat_i_milp_crashes(NULL);
	assert_int_equal(remat_i_milp_isolate(crashing_solve, "crasher", &m, &mo, &mr, &err),
			 REMAT_OK);
	assert_int_equal(mr.status, REMAT_I_MILP_NOSOLUTION);
	assert_int_equal(mr.crashed, SIGSEGV);
	assert_null(mr.x);
	assert_int_equal(remat_i_milp_crashes(&sig), before + 1);
	assert_int_equal(sig, SIGSEGV);
	remat_i_milp_result_release(&mr);
	/* Killed at its deadline: stopped, not crashed. */
	mo.deadline = remat_now() + 0.2;
	assert_int_equal(remat_i_milp_isolate(hanging_solve, "hanger", &m, &mo, &mr, &err),
			 REMAT_OK);
	assert_int_equal(mr.status, REMAT_I_MILP_NOSOLUTION);
	assert_true(mr.stopped);
	assert_int_equal(mr.crashed, 0);
	assert_int_equal(remat_i_milp_crashes(NULL), before + 1);
	remat_i_milp_result_release(&mr);
	/*
	 * Another plan's thread running to the deadline: nothing forked,
	 * stopped without a solution (test_solve_waits_for_other_plans has
	 * the gate opening in time).
	 */
	remat_i_threads_add(1);
	memset(&mo, 0, sizeof(mo));
	mo.deadline = remat_now() + 0.2;
	assert_int_equal(remat_i_milp_solve(REMAT_I_MILP_CBC, &m, &mo, &mr, &err), REMAT_OK);
	assert_int_equal(mr.status, REMAT_I_MILP_NOSOLUTION);
	assert_true(mr.stopped);
	assert_int_equal(mr.crashed, 0);
	remat_i_milp_result_release(&mr);
	remat_i_threads_add(-1);
	mo.deadline = 0;
	assert_int_equal(remat_i_milp_solve(REMAT_I_MILP_CBC, &m, &mo, &mr, &err), REMAT_OK);
	assert_int_equal(mr.status, REMAT_I_MILP_OPTIMAL);
	assert_int_equal(mr.crashed, 0);
	remat_i_milp_result_release(&mr);
	remat_i_milp_release(&m);
}

static void test_options(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_kv kv[1] = { { "solver", "gurobi" } };
	struct tu_plan t = { .p = &remat_i_planner_checkmate, .opts = kv, .n_opts = 1,
			     .flags = TU_ANY_STATUS };

	(void)state;
	assert_int_equal(tu_plan_run(g, 3, &t), REMAT_EUSAGE);
	assert_non_null(strstr(t.err.msg, "'--solver'"));
	kv[0].key = "warm-start";
	kv[0].value = "maybe";
	assert_int_equal(tu_plan_run(g, 3, &t), REMAT_EUSAGE);
	tu_plan_release(&t);
	remat_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kumar),
		cmocka_unit_test(test_chains_against_exhaustive),
		cmocka_unit_test(test_model_roundtrip),
		cmocka_unit_test(test_adaptations),
		cmocka_unit_test(test_max_computes),
		cmocka_unit_test(test_solve_waits_for_other_plans),
		cmocka_unit_test(test_warm_start),
		cmocka_unit_test(test_map),
		cmocka_unit_test(test_glpk_error_hook),
		cmocka_unit_test(test_fixed_binaries),
		cmocka_unit_test(test_hard_time),
		cmocka_unit_test(test_isolate_crash),
		cmocka_unit_test(test_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
