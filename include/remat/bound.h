/*
 * remat/bound.h - lower bounds on the cost of any plan at a budget, to
 * say how far a schedule is from the best possible.  (Bounds on the
 * peak need no budget: struct remat_graph's min_peak_lower_bound.)
 */
#ifndef REMAT_BOUND_H
#define REMAT_BOUND_H

#include <stdint.h>

#include "remat/error.h"
#include "remat/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

enum remat_bound_status {
	REMAT_BOUND_OK = 0,          /* *bound holds */
	REMAT_BOUND_INFEASIBLE = 1,  /* no schedule of the model fits the budget */
	REMAT_BOUND_NOT_TRIED = 2    /* too large, or longer than max_seconds */
};

/*
 * The optimum of the LP relaxation of Checkmate's MILP at budget (bytes),
 * solved with Clp: a lower bound on the cost of every schedule whose
 * first computations follow the loader's topological order.  The LP is
 * not started when it is estimated to take more than max_seconds (0: no
 * cap) or is too large to build.  *bound is NaN unless REMAT_BOUND_OK.
 * Returns REMAT_OK (whatever *status says) or an error (REMAT_ENOMEM).
 */
int remat_bound_lp(const struct remat_graph *g, int64_t budget, double max_seconds,
		   double *bound, enum remat_bound_status *status, struct remat_error *err);

/*
 * The cut bound: a lower bound on the cost of every schedule at budget,
 * in any node order (src/plan/bound_cut.c).  At the first computation of
 * a node x, what is resident must fit beside x, and whatever the rest of
 * the schedule reads that x depends on and is not resident must be
 * computed again; the least such recomputation (a knapsack over a
 * closure, bounded through its Lagrangian dual by minimum cuts) bounds
 * the cost, for every x.  Strong on training graphs (the loss is a
 * waist every schedule passes), zero where a schedule may put off what
 * it does not keep (random DAGs).  Looks at nodes until max_seconds
 * (0: no cap) and returns the best bound found by then.  *status:
 * REMAT_BOUND_OK (*bound holds; at least the least cost) or
 * REMAT_BOUND_INFEASIBLE (no schedule fits the budget).  *at (may be
 * NULL): the node whose cut gave it, -1 for none.  Returns REMAT_OK or
 * an error (REMAT_ENOMEM, REMAT_EINTERNAL).
 */
int remat_bound_cut(const struct remat_graph *g, int64_t budget, double max_seconds,
		    double *bound, enum remat_bound_status *status, int32_t *at,
		    struct remat_error *err);

/*
 * The window bound: the cut taken at several moments.  Nodes x1, ...,
 * xk, each an ancestor of the next, first run in that order in every
 * schedule; between two of them (a window) what runs is resident at the
 * first or computed in the window, what is resident at the second was
 * resident at the first or computed between, and what the first depends
 * on and is computed there is computed again.  Windows do not overlap, so
 * their recomputations add up (the last window is xk's cut).  Stronger
 * than the cut where a schedule must recompute the same values in more
 * than one stretch (a training chain whose early activations come back
 * twice).  The moments: the nodes whose own cut (through its dual)
 * proves most, each an ancestor or descendant of those taken, up to ten;
 * all windows are then solved as one MILP by CBC (its proven bound at the
 * limit; on larger models its LP relaxation alone).  It may prove less
 * than remat_bound_cut, which also solves single knapsacks whole: the
 * larger of the two counts.  Until max_seconds (0: no cap).  *status and
 * *bound as remat_bound_cut; moments[0..max_moments) (may be NULL) gets
 * the chain whose MILP gave the bound, *n_moments its length (0 when one
 * cut or the least cost gave it).  Returns REMAT_OK or an error
 * (REMAT_ENOMEM; a solver that fails proves nothing more).
 */
int remat_bound_window(const struct remat_graph *g, int64_t budget, double max_seconds,
		       double *bound, enum remat_bound_status *status, int32_t *moments,
		       int32_t max_moments, int32_t *n_moments, struct remat_error *err);

/*
 * The down-set bound: the cut taken when the last node of a down-set D
 * (a set holding each node's inputs) first runs.  That node w has no
 * user in D and everything else in D has run, so what is computed after
 * w without having been resident then, and lies in D, is computed again;
 * no schedule knows which w is last, so D proves the least over them.
 * D = x and its ancestors is x's cut; a larger D proves more on forward
 * DAGs that a schedule may run in any order, where a node of many inputs
 * must have each of them made before the last (the published random
 * layered DAGs, where the cut proves nothing).  D: the best prefix of the
 * topological order, then a local search adding or removing one node;
 * the best few D with each knapsack solved whole (CBC).  Until
 * max_seconds (0: no cap).  *status and *bound as remat_bound_cut;
 * *size (may be NULL): the nodes of the D that proved it (0 when the
 * least cost is all it proved).  Returns REMAT_OK or an error
 * (REMAT_ENOMEM; a solver that fails proves nothing more).
 */
int remat_bound_downset(const struct remat_graph *g, int64_t budget, double max_seconds,
			double *bound, enum remat_bound_status *status, int32_t *size,
			struct remat_error *err);

/*
 * The path bound: where the needed nodes that are not inputs lie on one
 * path (each reads the one before it in topological order; a chain, a
 * U-Net and its backward pass), every schedule computes them first in
 * that order.  Then what is resident while each first runs, and what
 * is computed again between two of them, is one MILP over all of them
 * at once (what a value computed again reads was there; what is
 * resident was resident at the one before or computed since; it fits
 * beside the node that runs), which CBC solves until max_seconds (0:
 * 60 s); its proven bound counts.  Memory while values are computed
 * again between two first computations is not counted, so the optimum
 * bounds every schedule without being one.  *fork (may be NULL): -1,
 * or the first node that does not read the one before it (more than
 * one order: *status REMAT_BOUND_NOT_TRIED, as for a model of over
 * 400,000 columns).  *status and *bound as remat_bound_cut.  Returns
 * REMAT_OK or an error (REMAT_ENOMEM; a solver that fails proves
 * nothing more).
 */
int remat_bound_path(const struct remat_graph *g, int64_t budget, double max_seconds,
		     double *bound, enum remat_bound_status *status, int32_t *fork,
		     struct remat_error *err);

/*
 * The same cut as a bound on the peak: the largest, over the nodes x
 * tried, of the least memory any schedule holds while x first runs (what
 * the rest reads from x's side and cannot be recomputed from what stays,
 * plus x's inputs, output and workspace), recomputation being free.  No
 * schedule peaks lower, so no budget below it fits.  Never below
 * min_peak_lower_bound's needed-node figure.  Nodes are tried most
 * promising first until max_seconds (0: no cap), and at least the bytes
 * of the outputs (all resident after the last compute); *at (may be
 * NULL): the node that gave it, -1 when it is the working-set figure, -2
 * when it is the outputs'.
 */
int remat_bound_cut_peak(const struct remat_graph *g, double max_seconds, int64_t *peak,
			 int32_t *at, struct remat_error *err);

/*
 * The bound every schedule obeys at any budget: the cost of computing
 * each node some output needs exactly once (auto reports it as its lower
 * bound when the MILP proved nothing better; the gap is then the
 * overhead over it).  O(n + edges).  -1 when out of memory.
 */
double remat_bound_least_cost(const struct remat_graph *g);

#ifdef __cplusplus
}
#endif
#endif
