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

/* One planner through the runner; its schedule to the callback. */
static int run_one(const struct remat_plan_request *req, struct remat_i_portfolio *pf,
		   const struct remat_planner *p, struct remat_plan_request *sub,
		   struct remat_schedule *cand, double t0, int *offered, int *stop,
		   struct remat_error *err)
{
	struct remat_sim_result r;
	struct remat_error e;
	struct remat_progress pr = { pf->caller, p->name, -1, NAN, NAN, 0 };
	int prc;

	pr.incumbent = pf->incumbent;
	pr.elapsed = remat_now() - t0;
	remat_plan_progress(req, &pr);
	remat_plan_report_init(sub->report);
	remat_error_clear(&e);
	prc = remat_plan_run(p, sub, cand, &r, &e);
	pf->ran++;
	if (prc == REMAT_ENOFIT || prc == REMAT_ECANCELED)
		return REMAT_OK;
	if (prc == REMAT_EUSAGE) {
		/* A bad option value is the user's to fix. */
		if (err)
			*err = e;
		return prc;
	}
	if (prc != REMAT_OK) {
		/*
		 * One planner failing (a bug, or out of memory on a huge graph)
		 * must not deny the caller the others' schedules.
		 */
		if (pf->first_failure == REMAT_OK) {
			pf->first_failure = prc;
			pf->failure = e;
		}
		return REMAT_OK;
	}
	*offered = 1;
	return pf->offer ? pf->offer(pf->ctx, p, cand, &r, stop, err) : REMAT_OK;
}

/* Planners flagged in the first pass as cut short by their share. */
#define MAX_RERUN 32

int remat_i_portfolio_run(const struct remat_plan_request *req,
			  struct remat_i_portfolio *pf, struct remat_error *err)
{
	const struct remat_planner *const *pp;
	const struct remat_planner *rerun[MAX_RERUN];
	struct remat_plan_request sub = *req;
	struct remat_plan_report rep;
	struct remat_schedule cand;
	double deadline = pf->deadline > 0 ? pf->deadline : req->deadline;
	double t0 = remat_now();
	int rc = REMAT_OK, offered = 0, stop = 0, nrerun = 0, i;

	remat_schedule_init(&cand);
	sub.report = &rep;
	if (!pf->pass_options) {
		sub.options = NULL;
		sub.n_options = 0;
		sub.progress = NULL;
	}
	for (pp = remat_planner_list(); *pp && !stop && rc == REMAT_OK; pp++) {
		double start;

		if (!is_fast(*pp))
			continue;
		if ((offered || pf->strict_deadline) && deadline > 0 && remat_now() >= deadline)
			break;
		start = remat_now();
		sub.deadline = planner_deadline(pf, deadline, pp);
		rc = run_one(req, pf, *pp, &sub, &cand, t0, &offered, &stop, err);
		/*
		 * A planner that used up its share (it stopped at its deadline,
		 * with or without a schedule) may do better with what the
		 * faster ones left over.
		 */
		if (pf->share_time && sub.deadline > 0 && sub.deadline < deadline &&
		    remat_now() >= start + 0.9 * (sub.deadline - start) && nrerun < MAX_RERUN)
			rerun[nrerun++] = *pp;
	}
	/* Second pass: the time left, shared among those cut short. */
	for (i = 0; i < nrerun && !stop && rc == REMAT_OK; i++) {
		double now = remat_now(), left = deadline - now;

		if (left <= 0.05 * (deadline - t0))
			break;
		sub.deadline = now + left / (nrerun - i);
		rc = run_one(req, pf, rerun[i], &sub, &cand, t0, &offered, &stop, err);
	}
	remat_schedule_release(&cand);
	return rc;
}
