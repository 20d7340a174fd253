/*
 * stage_plan.h - what the chain planners (chen.c, rotor.c) share: a plan at
 * the level of stages, written in Rotor's four operations, and its
 * expansion into a node-level compute order.  Internal to libremat.
 *
 *   F_all(i)  run stage i's forward keeping what its backward reads
 *   F_held(i) the same when stage i's output is still resident (it was a
 *             checkpoint): the output is not recomputed, nor what only it
 *             needs
 *   F_ck(i)   run stage i's forward keeping only its output; its input
 *             stays resident (a checkpoint) for a later recomputation
 *   F_ng(i)   the same without grad: only the output survives
 *   B(i)      run stage i's backward
 *
 * At node level F_ck and F_ng emit the same computes (the nodes the stage
 * output depends on); which values stay resident is decided by the
 * liveness pass from the rest of the order, so the distinction is kept
 * only for reading and testing plans.
 */
#ifndef REMAT_PLAN_STAGE_PLAN_H
#define REMAT_PLAN_STAGE_PLAN_H

#include "remat/chain.h"
#include "remat/planner.h"
#include "plan/best.h"

enum remat_i_cop_kind {
	REMAT_I_FALL = 0,
	REMAT_I_FCK = 1,
	REMAT_I_FNG = 2,
	REMAT_I_BWD = 3,
	REMAT_I_FHELD = 4
};

struct remat_i_cop {
	int32_t op;     /* enum remat_i_cop_kind */
	int32_t stage;
};

struct remat_i_cops {
	struct remat_i_cop *v;
	int64_t n, cap;
};

void remat_i_cops_init(struct remat_i_cops *s);
void remat_i_cops_release(struct remat_i_cops *s);
int remat_i_cops_push(struct remat_i_cops *s, int op, int32_t stage,
		      struct remat_error *err);
/* Same operations in the same order? */
int remat_i_cops_equal(const struct remat_i_cops *a, const struct remat_i_cops *b);

/*
 * Expanding stage-level operations into a compute-only schedule, for
 * remat_i_chain_expand() and planners with their own backward steps
 * (rockmate's block options).  emit(v) computes v, after any ancestor
 * never computed yet (in topological order); a computed output or
 * "recompute": false node is not computed again.  forward() emits the
 * forward nodes op (REMAT_I_FALL, _FHELD, _FCK, _FNG) runs of a stage.
 * finish() computes the outputs never computed, releases x and returns
 * rc (or its own failure).  init() clears out.
 */
struct remat_i_expander {
	const struct remat_graph *g;
	struct remat_schedule *out;
	uint8_t *computed;   /* 1: computed at least once; 2: being collected */
	int32_t *stack, *found;
};

int remat_i_expander_init(struct remat_i_expander *x, const struct remat_graph *g,
			  struct remat_schedule *out, struct remat_error *err);
int remat_i_expander_emit(struct remat_i_expander *x, int32_t v, struct remat_error *err);
int remat_i_expander_forward(struct remat_i_expander *x, const struct remat_chain *c,
			     int32_t stage, int op, struct remat_error *err);
int remat_i_expander_finish(struct remat_i_expander *x, int rc, struct remat_error *err);

/*
 * Expand stage operations into a compute-only schedule of g (frees are
 * left to the liveness pass).  Valid for any graph and any operation
 * sequence: a node whose input was never computed gets that input (and
 * its own missing ancestors) computed first; an output or a
 * "recompute": false node is never computed twice; outputs not yet
 * computed at the end are computed then.  O(n + computes emitted).
 */
int remat_i_chain_expand(const struct remat_graph *g, const struct remat_chain *c,
			 const struct remat_i_cops *ops, struct remat_schedule *out,
			 struct remat_error *err);

/*
 * Chen et al.'s segmented plan for stages 0..L-1 cut into segments
 * starting at starts[0] = 0 < starts[1] < ... < starts[nseg-1] < L:
 * a forward pass that keeps only each segment's input (F_ck + F_ng),
 * the last segment with F_all, then for each segment from the last,
 * F_all over it followed by its backward.  Appends to ops.
 */
int remat_i_chen_ops(int32_t L, const int32_t *starts, int32_t nseg,
		     struct remat_i_cops *ops, struct remat_error *err);

/*
 * chen.c: the sqrt(n) segmentation of k stages, segment starts 0, c, 2c,
 * ... with c = floor(sqrt(k)); and Algorithm 3's segmentation for segment
 * budget B (a boundary becomes a checkpoint when the running sum of stage
 * sizes x-bar exceeds B), with *x_out the checkpointed bytes and *y_out
 * the largest running sum at a checkpoint (either may be NULL).  starts
 * must hold k entries; both return the number of segments.
 */
int32_t remat_i_chen_sqrt_starts(int32_t k, int32_t *starts);
int32_t remat_i_chen_greedy_starts(const struct remat_chain *c, double B, int32_t *starts,
				   double *x_out, double *y_out);

/*
 * What every chain planner does around its algorithm: build the chain
 * view, expand and offer stage plans (the simulator as the oracle, best.h),
 * and finish with the cheapest schedule within budget or REMAT_ENOFIT
 * naming the least peak that was found.
 */

struct remat_i_chain_run {
	const struct remat_plan_request *req;
	const char *planner;
	struct remat_chain *chain;   /* NULL: inference graph, or nothing to plan */
	struct remat_i_best best;
	struct remat_schedule tmp;
	int offered;                 /* schedules offered */
};

/*
 * Run a chain planner's plan on the chain view (REMAT_CHAIN_OBJECTS),
 * again on the plain view when the graph has aliases or static values,
 * and on the cuts view when it has more stages (remat/chain.h), each
 * schedule judged by the simulator; out gets the best.  A chain planner's
 * .plan is this around its own function.
 * When neither view gives a schedule, the first run's status and message
 * stand.
 */
int remat_i_chain_views(const struct remat_plan_request *req, const char *planner,
			int (*plan)(const struct remat_plan_request *req,
				    struct remat_schedule *out, struct remat_error *err),
			struct remat_schedule *out, struct remat_error *err);

/* Start: the chain view (not for inference graphs; req picks the view). */
int remat_i_chain_run_start(struct remat_i_chain_run *r,
			    const struct remat_plan_request *req, const char *planner,
			    struct remat_error *err);
/* Expand ops and offer the schedule; *kept (may be NULL): it is the best so far. */
int remat_i_chain_run_offer(struct remat_i_chain_run *r, const struct remat_i_cops *ops,
			    int *kept, struct remat_error *err);
/*
 * Finish: when rc is REMAT_OK, move the best schedule into out, or fail
 * with REMAT_ENOFIT; release everything in any case.  Returns the status.
 */
int remat_i_chain_run_finish(struct remat_i_chain_run *r, int rc,
			     struct remat_schedule *out, struct remat_error *err);

#endif
