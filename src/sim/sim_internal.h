/* sim_internal.h - the liveness plan shared by liveness.c and simulate.c. */
#ifndef REMAT_SIM_INTERNAL_H
#define REMAT_SIM_INTERNAL_H

#include <stdint.h>

#include "remat/graph.h"
#include "remat/schedule.h"
#include "schedule/schedule_internal.h"

/*
 * Frees implied by a compute order (FORMATS.md section 2, compute-only
 * form): the inputs dropped before the first step, and for each step i
 * the nodes idx[off[i] .. off[i] + cnt[i] - 1] freed right after it.
 * Free steps in the order are ignored (treated as absent).
 */
struct remat_i_frees {
	int32_t *pre;
	int32_t n_pre;
	int64_t *off;   /* [steps + 1] */
	int32_t *cnt;   /* [steps] */
	int32_t *idx;
};

/*
 * The frees of s's compute order; REMAT_EINPUT on a node index out of
 * range.  With free_outputs, an output's earlier instances are freed like
 * any value's and only its last is kept (the compute-only semantics keep
 * an output from its first computation: free_outputs 0).
 */
int remat_i_frees_plan(const struct remat_graph *g,
		       const struct remat_schedule *s, int free_outputs,
		       struct remat_i_frees *fr, struct remat_error *err);
void remat_i_frees_release(struct remat_i_frees *fr);

/* remat_liveness(), with remat_i_frees_plan()'s free_outputs. */
int remat_i_liveness(const struct remat_graph *g, const struct remat_schedule *order,
		     int free_outputs, struct remat_schedule *out, struct remat_error *err);

#endif
