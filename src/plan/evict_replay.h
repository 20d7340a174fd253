/*
 * evict_replay.h - Belady-style replay of a compute order under a memory limit (internal).
 *
 * The order is read as a list of demands.  Values are kept while memory
 * allows (a demand for a value still resident costs nothing) and evicted
 * when it does not: first values the order itself computes again before
 * reading them (free of charge), then values read again later, which are
 * recomputed from their inputs when next needed.  See evict_replay.c.
 */
#ifndef REMAT_PLAN_EVICT_REPLAY_H
#define REMAT_PLAN_EVICT_REPLAY_H

#include "remat/planner.h"

/*
 * Replay the compute steps of order (free steps are ignored) within limit
 * bytes, writing an explicit schedule (computes and frees) to out.
 * Returns REMAT_OK with out valid whenever order was valid and the replay
 * stayed within limit; REMAT_ENOFIT when it could not (every resident
 * value locked or not recomputable) or out would exceed max_steps
 * computes; REMAT_ENOMEM; REMAT_ECANCELED when req's deadline passed
 * (req may be NULL).  When order fits within limit, so does out, at no
 * more cost.  Time O(steps * (in-degree + resident values per eviction)).
 */
int remat_i_evict_replay(const struct remat_graph *g, const struct remat_schedule *order,
		    int64_t limit, int64_t max_steps,
		    const struct remat_plan_request *req,
		    struct remat_schedule *out, struct remat_error *err);

/*
 * The same, but where nothing can be evicted the replay goes over limit
 * instead of giving up: *over receives the bytes by which the computes
 * that did so went over it, summed (0: out fits within limit), so that a
 * search can tell an order that nearly fits from one that is far from
 * it.  out is then valid but over limit.  REMAT_ENOFIT for the step cap
 * (*over is INT64_MAX on any error).
 */
int remat_i_evict_replay_soft(const struct remat_graph *g, const struct remat_schedule *order,
			      int64_t limit, int64_t max_steps,
			      const struct remat_plan_request *req,
			      struct remat_schedule *out, int64_t *over, struct remat_error *err);

#endif
