/*
 * auto.c - the default planner: try the others, keep the cheapest.
 *
 * 1. Run every registered planner flagged REMAT_PLANNER_AUTO, in registry
 *    order, each through remat_plan_run() so its schedule is simulated.
 * 2. Keep the cheapest valid schedule within budget (ties: lower peak).
 * 3. Stop early when a schedule costs no more than the least any schedule
 *    can cost (every node an output depends on, computed once), or when
 *    the deadline has passed.  With a time limit, each planner gets an
 *    equal share of the time still left (share_deadline()).
 * 4. On graphs small enough for the exact planner (checkmate.h), when
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
#include "planners/checkmate.h"
#include "plan/best.h"

extern const struct remat_planner remat_i_planner_auto;

/* The exact planner's share when no --time-limit bounds auto. */
#define AUTO_EXACT_SECONDS 10.0

/*
 * With a time limit, each planner gets an equal share of what is left, so
 * one slow planner cannot starve the ones after it; the fast ones finish
 * early and leave their time to the rest.
 */
static double share_deadline(const struct remat_plan_request *req,
			     const struct remat_planner *const *pp)
{
	double now, left;
	int n = 0;

	if (req->deadline <= 0)
		return 0;
	for (; *pp; pp++)
		if (*pp != &remat_i_planner_auto && ((*pp)->flags & REMAT_PLANNER_AUTO))
			n++;
	now = remat_now();
	left = req->deadline - now;
	if (n <= 1 || left <= 0)
		return req->deadline;
	return now + left / n;
}

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

static int auto_plan(const struct remat_plan_request *req,
		     struct remat_schedule *out, struct remat_error *err)
{
	const struct remat_planner *const *pp;
	struct remat_i_best best;
	struct remat_schedule cand;
	struct remat_plan_request sub = *req;
	struct remat_plan_report sub_report;
	double floor_cost = remat_i_least_cost(req->graph);
	char winner[64] = "";
	struct remat_error failure;
	int rc = REMAT_OK, first_failure = REMAT_OK;

	remat_i_best_init(&best);
	remat_schedule_init(&cand);
	sub.report = &sub_report;
	for (pp = remat_planner_list(); *pp; pp++) {
		const struct remat_planner *p = *pp;
		struct remat_sim_result r;
		struct remat_error e;
		struct remat_progress pr = { "auto", p->name, -1, NAN, NAN, 0 };
		int prc, kept;

		if (p == &remat_i_planner_auto || !(p->flags & REMAT_PLANNER_AUTO))
			continue;
		if (best.have && remat_plan_expired(req))
			break;
		if (best.have)
			pr.incumbent = best.res.cost;
		remat_plan_progress(req, &pr);
		remat_plan_report_init(&sub_report);
		sub.deadline = share_deadline(req, pp);
		remat_error_clear(&e);
		prc = remat_plan_run(p, &sub, &cand, &r, &e);
		if (prc == REMAT_ENOFIT || prc == REMAT_ECANCELED)
			continue;
		if (prc == REMAT_EUSAGE) {
			/* A bad option value is the user's to fix. */
			*err = e;
			rc = prc;
			goto done;
		}
		if (prc != REMAT_OK) {
			/*
			 * One planner failing (a bug, or out of memory on a huge
			 * graph) must not deny the user the others' schedules;
			 * the failure is reported only if nothing else works.
			 */
			if (first_failure == REMAT_OK) {
				first_failure = prc;
				failure = e;
			}
			continue;
		}
		rc = remat_i_best_offer(&best, p->name, req->graph, req->budget, &cand,
				      NULL, &kept, err);
		if (rc)
			goto done;
		if (kept)
			snprintf(winner, sizeof(winner), "%s", p->name);
		if (best.have && best.res.cost <= floor_cost * (1 + 1e-12))
			break;
	}
	if (!best.have || best.res.cost > floor_cost * (1 + 1e-12)) {
		struct remat_error e;
		int kept, prc;

		remat_error_clear(&e);
		prc = polish_exact(req, &best, &cand, &sub_report, &kept, &e);
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
			snprintf(winner, sizeof(winner), "checkmate");
		/*
		 * The MILP's bound holds for schedules in its model; report it
		 * unless a schedule outside the model came in under it.
		 */
		if (best.have && req->report && !isnan(sub_report.lower_bound) &&
		    sub_report.lower_bound <= best.res.cost * (1 + 1e-12)) {
			double c = best.res.cost, lb = sub_report.lower_bound;

			req->report->lower_bound = lb;
			req->report->gap = c > 0 ? (c - lb) / c : 0;
			if (req->report->gap < 1e-9)
				req->report->gap = 0;
			req->report->optimal = req->report->gap == 0;
		}
	}
	if (!best.have && first_failure != REMAT_OK) {
		*err = failure;
		rc = first_failure;
		goto done;
	}
	if (!best.have) {
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "no planner found a schedule within the "
				"budget of %lld bytes (no-remat peak %lld, lower bound %lld)",
				(long long)req->budget, (long long)req->graph->no_remat_peak,
				(long long)req->graph->min_peak_lower_bound);
		goto done;
	}
	rc = remat_i_best_take(&best, out, err);
	if (rc == REMAT_OK && req->report)
		snprintf(req->report->chosen, sizeof(req->report->chosen), "%s", winner);
done:
	remat_schedule_release(&cand);
	remat_i_best_release(&best);
	return rc;
}

const struct remat_planner remat_i_planner_auto = {
	.name = "auto",
	.summary = "run every fast planner and keep the cheapest schedule within budget",
	.flags = 0,
	.options = NULL,
	.plan = auto_plan,
};
