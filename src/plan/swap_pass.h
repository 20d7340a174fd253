/*
 * swap_pass.h - exchanging what a compute order recomputes (internal).
 *
 * A local search on the compute steps of a schedule (recomputations
 * included), judged by the simulator: drop the recomputation of one
 * value, keeping the value it had instead, and make room for it by
 * recomputing other values that are held across the steps where memory
 * then overflows.  "Keep the encoder's output, recompute the decoder's"
 * is one such exchange: a move between two long lives that no window of
 * a few stages and no eviction rule makes.  See swap_pass.c.
 */
#ifndef REMAT_PLAN_SWAP_PASS_H
#define REMAT_PLAN_SWAP_PASS_H

#include "remat/planner.h"

struct remat_i_swap_stats {
	int64_t tried;        /* simulations of exchanges and of their repairs */
	int64_t improved;     /* exchanges kept */
	int64_t inserted;     /* recomputations the kept exchanges inserted */
	double start_cost, cost;
	double last_at;       /* remat_now() when the cost last fell (or the pass began) */
};

/*
 * Improve order (its compute steps; free steps are ignored), valid and
 * within limit, by exchanges until a round over all its recomputations
 * finds none or req's deadline passes (req may be NULL: no deadline).
 * out receives compute steps only: order's when nothing improved, else a
 * cheaper order that the simulator found valid and within limit.
 * st may be NULL.  Returns REMAT_OK, REMAT_ENOMEM, or REMAT_ENOFIT when
 * order's computes are not valid within limit under the compute-only
 * rule (an explicit schedule may fit where they do not: one that frees
 * an output and computes it again).  Time per round O(recomputations *
 * candidates * (steps + inputs read)).
 */
int remat_i_swap_pass(const struct remat_graph *g, const struct remat_schedule *order,
		      int64_t limit, const struct remat_plan_request *req,
		      struct remat_schedule *out, struct remat_i_swap_stats *st,
		      struct remat_error *err);

#endif
