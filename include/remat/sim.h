/*
 * remat/sim.h - the simulator, the one judge of every schedule, and the
 * liveness pass that turns a compute order into explicit frees.
 *
 * Semantics are those of FORMATS.md section 2.  A schedule with no free
 * step is "compute-only": the simulator then frees each value right after
 * its last use before its next compute (outputs never), which is the
 * least memory that order allows.
 */
#ifndef REMAT_SIM_H
#define REMAT_SIM_H

#include <stdint.h>

#include "remat/error.h"
#include "remat/graph.h"
#include "remat/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

struct remat_sim_result {
	int valid;            /* all steps legal and end conditions met */
	int compute_only;     /* the schedule had no free step */
	int64_t error_step;   /* first bad step, s->n for an end condition, -1 */
	int32_t error_node;   /* node of that step or condition, -1 */
	char error[320];      /* "step 4: compute 'A': ..." or "" */

	int64_t peak_mem;     /* largest memory during any compute step */
	int64_t peak_step;    /* step where it occurs, -1 */
	double cost;          /* sum of cost over compute steps */
	double baseline_cost; /* sum of cost over non-input nodes */
	double overhead;      /* cost / baseline_cost - 1 (0 when both 0) */
	int64_t computes;
	int64_t recomputes;   /* computes beyond each node's first */

	int64_t budget;       /* -1 when none */
	int feasible;         /* valid and (no budget or peak <= budget) */
};

/*
 * Simulate s on g.  budget < 0 means none.  When timeline is not NULL it
 * must hold s->n entries and receives the memory of every step: during
 * the step for a compute, after it for a free.  Figures up to the first
 * error are still filled in.  Returns REMAT_OK whenever the simulation
 * ran (check res->valid); REMAT_ENOMEM otherwise.
 * O(steps + inputs read + nodes).
 */
int remat_simulate(const struct remat_graph *g, const struct remat_schedule *s,
		   int64_t budget, int64_t *timeline,
		   struct remat_sim_result *res, struct remat_error *err);

/*
 * Liveness: given the compute steps of order (its free steps, if any, are
 * ignored), write to out the same computes with explicit frees exactly as
 * the compute-only semantics would free them.  out must not alias order.
 * O(steps + inputs read + nodes).
 */
int remat_liveness(const struct remat_graph *g,
		   const struct remat_schedule *order,
		   struct remat_schedule *out, struct remat_error *err);

/*
 * Make a compute-only schedule explicit in place: the frees
 * remat_liveness() derives are added (to an empty schedule: the frees of
 * the inputs nothing needs).  A schedule that already has a free step is
 * left as it is.
 */
int remat_schedule_add_frees(const struct remat_graph *g,
			     struct remat_schedule *s, struct remat_error *err);

/* The no-remat order: every non-input node once in g->topo, compute-only. */
int remat_schedule_topo(const struct remat_graph *g, struct remat_schedule *out,
			struct remat_error *err);

#ifdef __cplusplus
}
#endif
#endif
