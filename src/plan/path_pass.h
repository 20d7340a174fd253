/*
 * path_pass.h - planning with the path bound's model (path_model.h) on a
 * graph whose needed nodes lie on one path (internal).
 *
 * The model's optimum bounds every schedule; its best point, each
 * stage's recomputations placed before the stage's first computation,
 * is a compute order that often fits the budget as it is (the memory the
 * model leaves out, that of the recomputations inside a stage, is then
 * below the budget).  When it fits and CBC proved the point optimal, the
 * schedule is optimal in every order.  When it does not, the stages that
 * go over are tightened and the model solved again.
 */
#ifndef REMAT_PLAN_PATH_PASS_H
#define REMAT_PLAN_PATH_PASS_H

#include "remat/planner.h"

struct remat_i_path_result {
	int tried;        /* the model was built and solved */
	int found;        /* out holds a schedule within the budget, cheaper than
			     start's (with a start) */
	int optimal;      /* found, and out is the order of the whole model's
			     proven optimum: optimal in every order */
	double bound;     /* a lower bound on every schedule's cost, from the
			     whole model (NaN: none) */
	double model_cost;/* out's cost (NaN: none) */
	double seconds;   /* the rounds' time */
};

/*
 * Solve the model of req's graph at req's budget until deadline (never
 * past req's; 0: none), starting from start's point when start (may be
 * NULL) is a schedule in the path's order, and write to out the best
 * schedule that comes of it within the budget (res->found): a point's
 * order, with its frees, or that order's Belady replay.  When an order
 * goes over the budget and time is left, the stages where it does are
 * tightened (remat_i_path_tighten) and the model solved again.  Nothing
 * is tried (res->tried 0) on a graph with more than one order or too
 * large a model.  REMAT_OK, REMAT_ENOMEM, or the solver's failure.
 */
int remat_i_path_pass(const struct remat_plan_request *req, const struct remat_schedule *start,
		      double deadline, struct remat_schedule *out,
		      struct remat_i_path_result *res, struct remat_error *err);

#endif
