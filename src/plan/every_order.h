/*
 * every_order.h - the report's lower bound in every node order, for the
 * planners whose own bound holds in one (checkmate, checkmate-lp: the
 * MILP or LP of Checkmate's model in the order planned in).  Internal to
 * libremat.
 */
#ifndef REMAT_PLAN_EVERY_ORDER_H
#define REMAT_PLAN_EVERY_ORDER_H

#include "remat/planner.h"

/*
 * req->report's lower_bound, as the planner left it, is a bound in the
 * order it planned in: move it to order_lower_bound, and set
 * lower_bound, gap and optimal from the bounds that hold in every order:
 * the least cost, the exhaustive optimum of a tiny graph
 * (exact_small.h), the cut bound (remat/bound.h), each for at most a
 * second and a tenth of the time left to req's deadline.  s is the
 * schedule returned.  Nothing without a report.  REMAT_ENOMEM (in err)
 * when out of memory; a bound cut short by the time is left out.
 */
int remat_i_report_every_order(const struct remat_plan_request *req,
			       const struct remat_schedule *s, struct remat_error *err);

#endif
