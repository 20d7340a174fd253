/*
 * remat/order.h - topological orders chosen for a low peak, and the graph
 * listed in such an order.
 *
 * An order here is a permutation of all g->n node indices in which every
 * node comes after its inputs.  Its peak is the no-remat peak of
 * docs/FORMATS.md section 3 taken in that order: every non-input node
 * computed once, in the order, frees derived by the liveness pass.  The
 * file's order (g->topo) gives g->no_remat_peak; other orders can be far
 * lower, and every planner that follows an order (the Checkmate MILP, the
 * needed nodes' order, greedy, ...) inherits it.
 *
 * Methods (remat_order_compute):
 *   file      g->topo, the loader's order: the reference
 *   greedy    list scheduling: among ready nodes the one that frees most
 *             and allocates least (several tie-breaking variants, the
 *             lowest peak kept)
 *   schedule  the first computations of the best schedules the fast
 *             planners find (at opts->budget, or at a few fractions of the
 *             no-remat peak), unplanned nodes as early as they can run
 *   local     local search from the best of file and greedy: move one node
 *             within its window (after its last input, before its first
 *             user), re-simulate only the steps between its old and new
 *             place, keep moves that do not raise (peak, memory above a
 *             level just under the peak); deterministic for opts->seed,
 *             bounded by opts->max_moves and opts->deadline
 *   best      the lowest peak of all of the above (file wins ties)
 *   budget    for a budget below best's peak (opts->budget): the local
 *             search from best minimising first the memory above the
 *             budget, summed over the steps (what a planner must shave
 *             off by recomputing), then the peak; else best
 *
 * A graph reordered by remat_graph_reorder() lists the same nodes (same
 * ids, sizes, costs, edges, outputs) in the order, so the loader's order
 * of the result is the order.  Schedules carry node indices; one planned
 * on the reordered graph maps back to the original with
 * remat_schedule_map_nodes(), and is then valid on the original (the
 * simulator judges it there).
 */
#ifndef REMAT_ORDER_H
#define REMAT_ORDER_H

#include <stdint.h>

#include "remat/error.h"
#include "remat/graph.h"
#include "remat/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

enum remat_order_method {
	REMAT_ORDER_FILE = 0,
	REMAT_ORDER_GREEDY,
	REMAT_ORDER_SCHEDULE,
	REMAT_ORDER_LOCAL,
	REMAT_ORDER_BEST,
	REMAT_ORDER_BUDGET
};

/* "file", "greedy", ...; NULL for an unknown value. */
const char *remat_order_method_name(enum remat_order_method m);
/* The method named s, or -1. */
int remat_order_method_parse(const char *s);

struct remat_order_opts {
	double deadline;     /* remat_now() value; 0: none */
	uint64_t seed;       /* local search */
	int64_t max_moves;   /* local search moves; 0: the default (see order.c) */
	int64_t budget;      /* schedule: plan at this budget (bytes); < 0: at
				a few fractions of the no-remat peak; local:
				stop once the peak fits it */
	int64_t target;      /* local: > 0 minimises the memory above target
				(summed over the steps) before the peak */
};

/* Defaults: no deadline, seed 1, default moves, no budget. */
void remat_order_opts_init(struct remat_order_opts *o);

/*
 * An order of g by method m into order (g->n entries) and its peak into
 * *peak (may be NULL).  Every method returns a valid order even when the
 * deadline has passed (at worst the file's).  REMAT_ENOMEM, or another
 * error from a planner that 'schedule' runs.
 */
int remat_order_compute(const struct remat_graph *g, enum remat_order_method m,
			const struct remat_order_opts *o, int32_t *order, int64_t *peak,
			struct remat_error *err);

/*
 * Is order (g->n entries) a permutation of the nodes in which every node
 * comes after its inputs?  1 yes, 0 no, -1 out of memory.
 */
int remat_order_is_topological(const struct remat_graph *g, const int32_t *order);

/*
 * The no-remat peak of a topological order (every non-input node once,
 * compute-only): what remat_simulate() reports for it.  O(n + edges).
 */
int remat_order_peak(const struct remat_graph *g, const int32_t *order, int64_t *peak,
		     struct remat_error *err);

/*
 * The order of first computations in a schedule of g, completed into an
 * order of every node: nodes it never computes go right after their
 * latest input, inputs first.
 */
int remat_order_from_schedule(const struct remat_graph *g, const struct remat_schedule *s,
			      int32_t *order, struct remat_error *err);

/*
 * The graph with g's nodes listed in order (a topological order of g):
 * node k of *out is node order[k] of g.  Everything else is g's.
 * REMAT_EINPUT when order is not a topological order of g.
 */
int remat_graph_reorder(const struct remat_graph *g, const int32_t *order,
			struct remat_graph **out, struct remat_error *err);

/*
 * Rewrite every step's node through map: node k becomes map[k] (for a
 * schedule of remat_graph_reorder(g, order), map = order gives the same
 * schedule on g).
 */
void remat_schedule_map_nodes(struct remat_schedule *s, const int32_t *map);

#ifdef __cplusplus
}
#endif
#endif
