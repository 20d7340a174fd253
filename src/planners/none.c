/*
 * none.c - the reference planner: no rematerialization.
 *
 * 1. Compute every non-input node once, in the graph's stable topological
 *    order (Kahn's algorithm, earliest-in-file ready node first).
 * 2. Free each value right after its last use (the liveness pass).
 *
 * Its peak is the graph's no-remat peak by definition (FORMATS.md
 * section 3) and its cost the baseline.  O(n + e).  It does not try
 * another order, so a different topological order may peak lower; it
 * succeeds exactly when the budget covers that peak.
 */
#include "remat/planner.h"

static int none_plan(const struct remat_plan_request *req,
		     struct remat_schedule *out, struct remat_error *err)
{
	return remat_schedule_topo(req->graph, out, err);
}

const struct remat_planner remat_i_planner_none = {
	.name = "none",
	.summary = "no rematerialization: every node once in topological order",
	.flags = REMAT_PLANNER_AUTO | REMAT_PLANNER_REFERENCE,
	.options = NULL,
	.plan = none_plan,
};
