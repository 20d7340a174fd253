/*
 * checkmate_lp.c - Checkmate's LP relaxation with two-phase rounding
 * (Jain et al., MLSys 2020, section 5; checkmate/core/solvers/
 * strategy_approx_lp.py), for graphs too large for the MILP; and the
 * LP lower bound that `remat info --budget` reports.
 *
 * 1. Solve the LP relaxation of the Checkmate model (checkmate.c, all
 *    binaries relaxed to [0, 1]) at the budget: its optimum is a lower
 *    bound on the cost of every schedule in the model, reported as
 *    lower_bound.
 * 2. Solve it again at tighter budgets, 90% first as Checkmate does ("a
 *    hack to get values under the budget"), then 80%, 70%, ... while
 *    time allows and until a rounding fits.
 * 3. Phase one rounds S, the retention matrix: thresholds 0.1 .. 0.9
 *    and randomised rounding (S[t,i] = 1 with probability S[t,i], from
 *    the request's seed, --rounds times).  Phase two rebuilds the
 *    cheapest R that S needs (Checkmate's solve_r_opt) and normalizes:
 *    computes nothing reads are dropped, S becomes the least retention R
 *    needs, a node that may not be recomputed is retained instead.
 *    Thresholded R is tried as well.
 * 4. Keep the cheapest candidate whose exact peak fits the real budget;
 *    the simulator judges it (src/plan/best.h).
 *
 * Complexity: one LP of O(T^2 + T E) variables per budget tried, then
 * O(T^2 + T E) per rounding.  It does not guarantee a schedule even when
 * one exists, and gives no bound on how far from optimal its schedule is
 * beyond the reported LP bound.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/planner.h"
#include "plan/best.h"
#include "plan/checkmate_model.h"
#include "plan/every_order.h"

static const struct remat_planner_option checkmate_lp_options[] = {
	{ "solver", "NAME", "LP solver: cbc (Clp) or glpk (default cbc)" },
	{ "rounds", "N", "randomised roundings per LP solution (default 50)" },
	{ NULL, NULL, NULL }
};

static int checkmate_lp_solve(const struct remat_plan_request *req,
			     struct remat_schedule *out, struct remat_error *err)
{
	const char *sv = remat_opt_get(req, "solver");
	struct remat_i_cm cm;
	struct remat_i_cm_sol best;
	struct remat_i_best sbest;
	struct remat_i_cm_rounding r;
	double lb;
	long rounds;
	int backend = REMAT_I_MILP_CBC, rc, have = 0;

	if (sv && (backend = remat_i_milp_backend_parse(sv)) < 0)
		return REMAT_FAIL(err, REMAT_EUSAGE,
				  "option '--solver': expected 'cbc' or 'glpk', got '%s'", sv);
	REMAT_TRY(remat_opt_int(req, "rounds", 50, 0, 100000, &rounds, err));
	REMAT_TRY(remat_i_cm_init(&cm, req->graph, req->budget, 0, err));
	remat_i_best_init(&sbest);
	memset(&r, 0, sizeof(r));
	memset(&best, 0, sizeof(best));
	if (cm.T > REMAT_I_CM_MAX_T) {
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "%d nodes to compute: too many for the LP "
				"(at most %d)", cm.T, REMAT_I_CM_MAX_T);
		goto done;
	}
	rc = remat_i_cm_sol_init(&cm, &best, err);
	if (rc)
		goto done;
	r.req = req;
	r.cm = &cm;
	r.deadline = req->deadline;
	r.best = &best;
	r.have = &have;
	r.sbest = &sbest;
	rc = remat_i_cm_lp_round(&r, backend, rounds, &lb, err);
	if (rc)
		goto done;
	if (!sbest.have) {
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "no rounding of the LP relaxation fits the "
				"budget");
		goto done;
	}
	/*
	 * A bound above a schedule in the same order is the solver's
	 * tolerance, not a proof: within 1e-7 it proves the schedule, beyond
	 * that it proves nothing (rather than "optimal").
	 */
	if (req->report && !isnan(lb) && lb <= sbest.res.cost * (1 + 1e-7)) {
		double cost = sbest.res.cost;

		req->report->lower_bound = lb > cost ? cost : lb;
		req->report->gap = cost > 0 ? (cost - req->report->lower_bound) / cost : 0;
		if (req->report->gap < 1e-9)
			req->report->gap = 0;
		req->report->optimal = req->report->gap == 0 ? 1 : 0;
	}
	rc = remat_i_best_take(&sbest, out, err);
done:
	remat_i_cm_sol_release(&best);
	remat_i_best_release(&sbest);
	remat_i_cm_release(&cm);
	return rc;
}

/* The LP's bound holds in its order; the report's, in every order. */
static int checkmate_lp_plan(const struct remat_plan_request *req,
			     struct remat_schedule *out, struct remat_error *err)
{
	int rc = checkmate_lp_solve(req, out, err);

	if (rc == REMAT_OK)
		rc = remat_i_report_every_order(req, out, err);
	return rc;
}

const struct remat_planner remat_i_planner_checkmate_lp = {
	.name = "checkmate-lp",
	.summary = "Checkmate's LP relaxation with two-phase rounding, for graphs too large "
		   "for the MILP",
	.flags = REMAT_PLANNER_BOUNDS,
	.options = checkmate_lp_options,
	.plan = checkmate_lp_plan,
};
