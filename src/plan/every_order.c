/*
 * every_order.c - the report's lower bound in every node order
 * (every_order.h).
 *
 * Checkmate's model fixes the order of first computations (the file's,
 * or --order's): its MILP's optimum and its LP's bound hold for the
 * schedules of that model only.  On a 4-node graph of two chains (a, b,
 * a2, b2 in the file) at 5 B its optimum is 24 where a, a2, b, b2 costs
 * 13, so its "optimal" would have been false as a claim about the plan.
 * The report keeps the model's bound as order_lower_bound and claims
 * optimal only against a bound that holds in every order, as auto does.
 */
#include <math.h>

#include "remat/bound.h"
#include "remat/sim.h"
#include "analysis/needed.h"
#include "plan/every_order.h"
#include "plan/exact_small.h"

/* The most seconds of each bound here, and of the time left to the deadline. */
#define EVERY_ORDER_SECONDS 1.0
#define EVERY_ORDER_SHARE 0.1

static double bound_share(const struct remat_plan_request *req)
{
	if (req->deadline <= 0)
		return EVERY_ORDER_SECONDS;
	return fmin(EVERY_ORDER_SECONDS, EVERY_ORDER_SHARE * (req->deadline - remat_now()));
}

int remat_i_report_every_order(const struct remat_plan_request *req,
			       const struct remat_schedule *s, struct remat_error *err)
{
	struct remat_plan_report *rep = req->report;
	const struct remat_graph *g = req->graph;
	struct remat_sim_result r;
	struct remat_error e;
	double lb, cost, share;
	int rc;

	if (!rep)
		return REMAT_OK;
	rep->order_lower_bound = rep->lower_bound;
	rep->lower_bound = NAN;
	rep->gap = NAN;
	rep->optimal = -1;
	REMAT_TRY(remat_simulate(g, s, req->budget, NULL, &r, err));
	if (!r.valid)
		return REMAT_OK; /* the runner says why */
	cost = r.cost;
	lb = remat_i_least_cost(g);
	if (lb < 0)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	share = bound_share(req);
	rc = lb < cost * (1 - 1e-12) && share > 0 ? remat_i_exact_fits(g, REMAT_EXACT_MAX_BITS) : 0;
	if (rc < 0)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	if (rc == 1) {
		struct remat_schedule x;
		double xc = -1;

		remat_schedule_init(&x);
		rc = remat_i_exact_small(g, req->budget, remat_now() + share, &x, &xc, &e);
		remat_schedule_release(&x);
		if (rc == REMAT_ENOMEM) {
			*err = e;
			return rc;
		}
		if (rc == REMAT_OK && xc > lb)
			lb = xc;
	}
	share = bound_share(req);
	if (lb < cost * (1 - 1e-12) && share > 0) {
		enum remat_bound_status st;
		double cb = NAN;
		int32_t at = -1;

		REMAT_TRY(remat_bound_cut(g, req->budget, share, &cb, &st, &at, err));
		if (st == REMAT_BOUND_OK && cb > lb)
			lb = cb;
	}
	/* Within float noise of the cost (the cut bound is a Lagrangian dual) it proves it. */
	if (lb > cost * (1 - 1e-8))
		lb = cost;
	rep->lower_bound = lb;
	rep->gap = cost > 0 ? (cost - lb) / cost : 0;
	rep->optimal = rep->gap == 0;
	return REMAT_OK;
}
