/*
 * auto.c - the default planner: try the others, keep the cheapest.
 *
 * 1. Run every registered planner flagged REMAT_PLANNER_AUTO, in registry
 *    order, each through remat_plan_run() so its schedule is simulated
 *    (the portfolio, src/plan/portfolio.c).
 * 2. Keep the cheapest valid schedule within budget (ties: lower peak).
 * 3. Stop early when a schedule costs no more than the least any schedule
 *    can cost (every node an output depends on, computed once), or when
 *    the deadline has passed.  With a time limit, each planner gets an
 *    equal share of the time still left.
 * 4. On graphs small enough for the exact planner (checkmate_model.h), when
 *    that floor was not reached and time is left: hand the cheapest
 *    schedule to the Checkmate MILP as its warm start, for the rest of
 *    --time-limit (AUTO_EXACT_SECONDS without one), and keep the better.
 *
 * Its cost is the minimum over the planners it ran, no better: never
 * worse than its best heuristic, optimal within the MILP's model when
 * the MILP finishes.  It is only as fast as the slowest of them within
 * the time limit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/planner.h"
#include "analysis/needed.h"
#include "plan/best.h"
#include "plan/checkmate_model.h"
#include "plan/portfolio.h"


/* The exact planner's share when no --time-limit bounds auto. */
#define AUTO_EXACT_SECONDS 10.0

/*
 * Step 4: the MILP from best's schedule (or from nothing); offered to best
 * like any candidate.  *kept says whether it won; its bound goes to rep.
 */
static int polish_exact(const struct remat_plan_request *req, struct remat_i_best *best,
			struct remat_schedule *cand, struct remat_plan_report *rep,
			int *kept, struct remat_error *err)
{
	struct remat_plan_request sub = *req;
	struct remat_progress pr = { "auto", "checkmate", -1, NAN, NAN, 0 };
	double left = req->deadline > 0 ? req->deadline - remat_now() : 0;
	int rc;

	*kept = 0;
	if (!remat_i_checkmate_auto_fits(req->graph, req->deadline > 0 ? left : 0) ||
	    (req->deadline > 0 && left <= 0))
		return REMAT_OK;
	if (req->deadline <= 0)
		sub.deadline = remat_now() + AUTO_EXACT_SECONDS;
	sub.report = rep;
	remat_plan_report_init(rep);
	if (best->have)
		pr.incumbent = best->res.cost;
	remat_plan_progress(req, &pr);
	rc = remat_i_checkmate_improve(&sub, best->have ? &best->sched : NULL, cand, err);
	if (rc == REMAT_ENOFIT || rc == REMAT_ECANCELED)
		return REMAT_OK;
	if (rc)
		return rc;
	return remat_i_best_offer(best, "checkmate", req->graph, req->budget, cand, NULL, kept,
				err);
}

/* What auto keeps while the portfolio runs. */
struct auto_keep {
	const struct remat_plan_request *req;
	struct remat_i_best best;
	double floor_cost;     /* nothing costs less: stop there */
	char winner[64];
	struct remat_i_portfolio *pf;
};

/* Steps 2 and 3: keep the cheapest; stop at the floor. */
static int keep_cheapest(void *ctx, const struct remat_planner *p, struct remat_schedule *s,
			 const struct remat_sim_result *r, int *stop, struct remat_error *err)
{
	struct auto_keep *k = ctx;
	int kept;

	(void)r;
	REMAT_TRY(remat_i_best_offer(&k->best, p->name, k->req->graph, k->req->budget, s,
				     NULL, &kept, err));
	if (kept)
		snprintf(k->winner, sizeof(k->winner), "%s", p->name);
	k->pf->incumbent = k->best.res.cost;
	if (k->best.res.cost <= k->floor_cost * (1 + 1e-12))
		*stop = 1;
	return REMAT_OK;
}

static int auto_plan(const struct remat_plan_request *req,
		     struct remat_schedule *out, struct remat_error *err)
{
	struct remat_i_portfolio pf;
	struct auto_keep k;
	struct remat_schedule cand;
	struct remat_plan_report sub_report;
	int first_failure;
	struct remat_error failure;
	int rc;

	memset(&k, 0, sizeof(k));
	k.req = req;
	k.floor_cost = remat_i_least_cost(req->graph);
	k.pf = &pf;
	remat_i_best_init(&k.best);
	remat_schedule_init(&cand);
	remat_i_portfolio_init(&pf, "auto");
	pf.share_time = 1;
	pf.pass_options = 1;
	pf.offer = keep_cheapest;
	pf.ctx = &k;
	rc = remat_i_portfolio_run(req, &pf, err);
	if (rc)
		goto done;
	first_failure = pf.first_failure;
	failure = pf.failure;
	if (!k.best.have || k.best.res.cost > k.floor_cost * (1 + 1e-12)) {
		struct remat_error e;
		int kept, prc;

		remat_error_clear(&e);
		prc = polish_exact(req, &k.best, &cand, &sub_report, &kept, &e);
		if (prc == REMAT_EUSAGE) {
			*err = e;
			rc = prc;
			goto done;
		}
		if (prc != REMAT_OK && first_failure == REMAT_OK) {
			first_failure = prc;
			failure = e;
		}
		if (kept)
			snprintf(k.winner, sizeof(k.winner), "checkmate");
		/*
		 * The MILP's bound holds for schedules in its model; report it
		 * unless a schedule outside the model came in under it.
		 */
		if (k.best.have && req->report && !isnan(sub_report.lower_bound) &&
		    sub_report.lower_bound <= k.best.res.cost * (1 + 1e-12)) {
			double c = k.best.res.cost, lb = sub_report.lower_bound;

			req->report->lower_bound = lb;
			req->report->gap = c > 0 ? (c - lb) / c : 0;
			if (req->report->gap < 1e-9)
				req->report->gap = 0;
			req->report->optimal = req->report->gap == 0;
		}
	}
	if (!k.best.have && first_failure != REMAT_OK) {
		*err = failure;
		rc = first_failure;
		goto done;
	}
	if (!k.best.have) {
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "no planner found a schedule within the "
				"budget of %lld bytes (no-remat peak %lld, lower bound %lld)",
				(long long)req->budget, (long long)req->graph->no_remat_peak,
				(long long)req->graph->min_peak_lower_bound);
		goto done;
	}
	rc = remat_i_best_take(&k.best, out, err);
	if (rc == REMAT_OK && req->report)
		snprintf(req->report->chosen, sizeof(req->report->chosen), "%s", k.winner);
done:
	remat_schedule_release(&cand);
	remat_i_best_release(&k.best);
	return rc;
}

const struct remat_planner remat_i_planner_auto = {
	.name = "auto",
	.summary = "run every fast planner and keep the cheapest schedule within budget",
	.flags = 0,
	.options = NULL,
	.plan = auto_plan,
};
