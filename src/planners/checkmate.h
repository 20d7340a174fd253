/*
 * checkmate.h - what the Checkmate planners offer the rest of libremat:
 * auto's hand-over of its best schedule to the MILP, and the LP bound of
 * `remat info --budget`.  Internal to libremat.
 */
#ifndef REMAT_CHECKMATE_H
#define REMAT_CHECKMATE_H

#include "remat/planner.h"

/*
 * Would auto run the MILP on g within time_left seconds (0: no limit)?
 * Small graphs only; see auto.c.
 */
int remat_i_checkmate_auto_fits(const struct remat_graph *g, double time_left);

/*
 * Solve the Checkmate MILP for req, starting from incumbent (may be NULL,
 * or a schedule that does not map into the model: then no warm start).
 * Honours req->deadline and req's checkmate options; fills req->report's
 * lower_bound, gap and optimal.  REMAT_OK with a schedule in out, which
 * is never worse than the incumbent's image in the model; REMAT_ENOFIT
 * when none was found.
 */
int remat_i_checkmate_improve(const struct remat_plan_request *req,
			      const struct remat_schedule *incumbent,
			      struct remat_schedule *out, struct remat_error *err);

/*
 * The LP relaxation's optimum at budget (Clp): a lower bound on the cost
 * of every schedule in the Checkmate model (first computations in the
 * loader's order).  *status: 0 bound found, 1 the relaxation is
 * infeasible (no such schedule fits), 2 not tried: the LP is estimated
 * to take more than max_seconds (0: no cap).
 */
int remat_i_checkmate_lp_bound(const struct remat_graph *g, int64_t budget,
			       double max_seconds, double *bound, int *status,
			       struct remat_error *err);

#endif
