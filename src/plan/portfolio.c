/* portfolio.c - every fast planner, one after another; see portfolio.h. */
#include <math.h>
#include <string.h>

#include "plan/portfolio.h"

void remat_i_portfolio_init(struct remat_i_portfolio *pf, const char *caller)
{
	memset(pf, 0, sizeof(*pf));
	pf->caller = caller;
	pf->incumbent = NAN;
	pf->first_failure = REMAT_OK;
}

static int is_fast(const struct remat_planner *p)
{
	return (p->flags & REMAT_PLANNER_AUTO) != 0;
}

/*
 * With a time limit and share_time, each planner gets an equal share of
 * what is left, so one slow planner cannot starve the ones after it; the
 * fast ones finish early and leave their time to the rest.
 */
static double planner_deadline(const struct remat_i_portfolio *pf, double deadline,
			       const struct remat_planner *const *pp)
{
	double now, left;
	int n = 0;

	if (deadline <= 0 || !pf->share_time)
		return deadline;
	for (; *pp; pp++)
		if (is_fast(*pp))
			n++;
	now = remat_now();
	left = deadline - now;
	if (n <= 1 || left <= 0)
		return deadline;
	return now + left / n;
}

int remat_i_portfolio_run(const struct remat_plan_request *req,
			  struct remat_i_portfolio *pf, struct remat_error *err)
{
	const struct remat_planner *const *pp;
	struct remat_plan_request sub = *req;
	struct remat_plan_report rep;
	struct remat_schedule cand;
	double deadline = pf->deadline > 0 ? pf->deadline : req->deadline;
	double t0 = remat_now();
	int rc = REMAT_OK, offered = 0, stop = 0;

	remat_schedule_init(&cand);
	sub.report = &rep;
	if (!pf->pass_options) {
		sub.options = NULL;
		sub.n_options = 0;
		sub.progress = NULL;
	}
	for (pp = remat_planner_list(); *pp && !stop; pp++) {
		const struct remat_planner *p = *pp;
		struct remat_sim_result r;
		struct remat_error e;
		struct remat_progress pr = { pf->caller, p->name, -1, NAN, NAN, 0 };
		int prc;

		if (!is_fast(p))
			continue;
		if ((offered || pf->strict_deadline) && deadline > 0 && remat_now() >= deadline)
			break;
		pr.incumbent = pf->incumbent;
		pr.elapsed = remat_now() - t0;
		remat_plan_progress(req, &pr);
		remat_plan_report_init(&rep);
		sub.deadline = planner_deadline(pf, deadline, pp);
		remat_error_clear(&e);
		prc = remat_plan_run(p, &sub, &cand, &r, &e);
		pf->ran++;
		if (prc == REMAT_ENOFIT || prc == REMAT_ECANCELED)
			continue;
		if (prc == REMAT_EUSAGE) {
			/* A bad option value is the user's to fix. */
			if (err)
				*err = e;
			rc = prc;
			break;
		}
		if (prc != REMAT_OK) {
			/*
			 * One planner failing (a bug, or out of memory on a huge
			 * graph) must not deny the caller the others' schedules.
			 */
			if (pf->first_failure == REMAT_OK) {
				pf->first_failure = prc;
				pf->failure = e;
			}
			continue;
		}
		offered = 1;
		if (pf->offer)
			rc = pf->offer(pf->ctx, p, &cand, &r, &stop, err);
		if (rc)
			break;
	}
	remat_schedule_release(&cand);
	return rc;
}
