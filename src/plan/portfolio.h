/*
 * portfolio.h - run every fast planner and hand each schedule to the
 * caller: the one loop behind auto (keep the cheapest) and the exact
 * planners' warm start (keep the cheapest that maps into the MILP).
 * Internal to libremat.
 *
 * The fast planners are those flagged REMAT_PLANNER_AUTO, in registry
 * order, each run through remat_plan_run(), so every schedule handed
 * over has been simulated: valid and within the request's budget.
 */
#ifndef REMAT_PLAN_PORTFOLIO_H
#define REMAT_PLAN_PORTFOLIO_H

#include "remat/planner.h"

struct remat_i_portfolio {
	/* Set by the caller. */
	const char *caller;     /* progress label ("auto", "checkmate") */
	double deadline;        /* for the whole run; 0: the request's */
	int share_time;         /* each planner gets an equal share of the time left;
				   those that use all of it run again, after the
				   others, with what is left */
	int pass_options;       /* hand the request's options and progress on */
	int strict_deadline;    /* past the deadline stop at once (else only
				   once something was offered) */
	double rerun_deadline;  /* when nothing was offered by the deadline,
				   the runs cut short run again until this
				   later one (0: no second chance) */
	int orders;             /* with req->order other than the file's, run
				   every planner in several node orders: the
				   file's, req->order's and, when the budget is
				   below that order's peak, the budget order
				   (remat/order.h); schedules are handed over
				   on req->graph */
	double order_share;     /* most of the time left spent finding each
				   order (default 0.25; the move count is what
				   normally ends the search) */
	/*
	 * Called with each schedule (valid, within budget; the callee may
	 * take it with remat_schedule_swap).  Setting *stop ends the run.
	 * A status other than REMAT_OK ends it with that status.
	 */
	int (*offer)(void *ctx, const struct remat_planner *p,
		     struct remat_schedule *s, const struct remat_sim_result *r,
		     int *stop, struct remat_error *err);
	void *ctx;
	double incumbent;       /* best cost so far, for progress (NaN: none);
				   the callback keeps it up to date */
	double bound;           /* best proven lower bound, for progress (NaN) */

	/* Filled by the run. */
	int ran;                /* planners run */
	int n_orders;           /* orders planned in (1: the file's only) */
	int64_t order_peak;     /* lowest no-remat peak among them */
	int first_failure;      /* first status of a planner that failed for
				   another reason than "no fit" or time (a bug,
				   out of memory), REMAT_OK when none */
	struct remat_error failure; /* its message */
};

/* Fill pf with the defaults: no callback, no time sharing, NaN incumbent. */
void remat_i_portfolio_init(struct remat_i_portfolio *pf, const char *caller);

/*
 * Run the fast planners on req.  A planner that finds nothing, runs out
 * of time or fails is skipped (failures are recorded in pf, not
 * returned); a usage error (a bad option value, pass_options only) is
 * returned, as is any status from the callback.  The run stops at the
 * deadline once the callback has been offered something (strict_deadline:
 * at once).
 */
int remat_i_portfolio_run(const struct remat_plan_request *req,
			  struct remat_i_portfolio *pf, struct remat_error *err);

#endif
