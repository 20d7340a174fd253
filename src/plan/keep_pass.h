/*
 * keep_pass.h - dropping recomputations a compute order can avoid by
 * keeping values resident while memory allows (internal).
 *
 * The pass nshepperd's Haskell TWRemat runs after its recursion (rounds of
 * a greedy freeing pass and a schedule clean-up), written here from its
 * description: values are freed lazily, only when a compute needs their
 * memory, and a compute of a value still resident is dropped.  It can only
 * remove computes, never add them.  See keep_pass.c.
 */
#ifndef REMAT_PLAN_KEEP_PASS_H
#define REMAT_PLAN_KEEP_PASS_H

#include "remat/planner.h"

/*
 * Which kept value is freed first when a compute needs memory: the one
 * cheapest to bring back per byte (nshepperd's rule, twremat's), or the
 * one cheapest per byte and per position until the compute it would
 * spare (Belady's rule weighted by cost and size, as the replay's).
 */
enum remat_i_keep_rule { REMAT_I_KEEP_PER_BYTE, REMAT_I_KEEP_PER_BYTE_DISTANCE };

/*
 * Run up to rounds rounds of the pass over the compute steps of order
 * (free steps are ignored) with limit bytes, freeing by rule, writing
 * the computes kept to out (compute steps only: the liveness pass places
 * the frees).  Stops
 * early when a round drops nothing.  out is a subsequence of order's
 * computes that is a valid order whenever order was; its cost is never
 * higher.  Its peak is at most limit when order's was (the simulator
 * judges it anyway).  *dropped (may be NULL) receives the computes
 * dropped.  Time O(rounds * (steps * in-degree + steps * log n)).
 * Returns REMAT_OK or REMAT_ENOMEM.
 */
int remat_i_keep_pass(const struct remat_graph *g, const struct remat_schedule *order,
		      int64_t limit, int rounds, enum remat_i_keep_rule rule,
		      struct remat_schedule *out, int64_t *dropped, struct remat_error *err);

#endif
