/*
 * remat/treedec.h - tree decompositions of a computation graph.
 *
 * The decomposition is of the undirected graph the DAG gives when edge
 * directions are forgotten (Kumar et al. 2019, section 2.2): bags of
 * nodes joined in a tree such that (i) every node is in some bag, (ii)
 * both ends of every edge share a bag, and (iii) the bags holding any one
 * node form a connected subtree.  Its width is the largest bag size
 * minus one.
 *
 * The bags come from a greedy minimum fill-in elimination order
 * (Bodlaender & Koster, "Treewidth computations I. Upper bounds", 2010):
 * repeatedly eliminate the node whose elimination adds the fewest edges
 * among its neighbours (ties: lower degree, then earlier in the file),
 * turning its neighbourhood into a clique; the node plus its neighbours
 * at elimination time form a bag.  Adjacent bags where one contains the
 * other are then merged (Kumar et al. Lemma 1), so there are at most as
 * many bags as nodes taking part.  The width is an upper bound on the
 * treewidth, exact for forests (1) and series-parallel graphs (<= 2).
 *
 * Once every vertex left has more than REMAT_TREEDEC_MAX_DEGREE
 * neighbours, the rest are put in one bag instead of being eliminated
 * one by one (each elimination costs the square of the degree: seconds
 * on dense graphs of a few thousand nodes).  The width is then the
 * number of vertices left minus one: still an upper bound, only a looser
 * one, and only on graphs whose width is far beyond what rematerializing
 * along the decomposition can use.
 */
#define REMAT_TREEDEC_MAX_DEGREE 256
#ifndef REMAT_TREEDEC_H
#define REMAT_TREEDEC_H

#include <signal.h>
#include <stdint.h>

#include "remat/error.h"
#include "remat/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

struct remat_treedec {
	int32_t n_vertices;   /* graph nodes taking part */
	int32_t n_bags;       /* 0 when no node takes part */
	int32_t width;        /* largest bag size - 1; -1 with no bags */
	int32_t root;         /* the bag with parent -1, or -1 */
	int32_t *bag_off;     /* [n_bags + 1] CSR of bag contents */
	int32_t *bag_idx;     /* node indices, ascending within each bag */
	int32_t *parent;      /* [n_bags] parent bag, -1 for the root */
	int32_t *order;       /* [n_vertices] the elimination order (nodes) */
};

/*
 * Decompose the subgraph of g induced by the nodes v with mask[v] != 0
 * (mask NULL: every node).  The bags always form one tree, even when the
 * subgraph is disconnected.  td is overwritten; release it with
 * remat_treedec_release().  Errors: REMAT_ENOMEM.
 *
 * Time O(sum over eliminated nodes v of the degrees of v's neighbours at
 * elimination, plus the same for each added edge) with stamp arrays for
 * adjacency tests, plus O(m^1.5) to count the initial triangles; memory
 * O(n + m + added edges).  Sparse graphs of small width, such as neural
 * network graphs, take near-linear time; the cost grows with the square
 * of the width.
 */
int remat_treedec_build(const struct remat_graph *g, const uint8_t *mask,
			struct remat_treedec *td, struct remat_error *err);

/*
 * Limits on remat_treedec_build_limited(): the build looks at them every
 * few thousand steps (about a millisecond of work apart, also inside one
 * costly elimination) and stops once either is reached.
 */
struct remat_treedec_limits {
	double deadline;                    /* remat_now() value; 0: none */
	const volatile sig_atomic_t *stop;  /* may be NULL; stop once nonzero */
};

/*
 * remat_treedec_build() within limits (NULL: none, as
 * remat_treedec_build()).  When a limit is reached the partial work is
 * dropped, td is left empty (as after remat_treedec_release()) and the
 * result is REMAT_ECANCELED, with a message saying where it stopped.
 */
int remat_treedec_build_limited(const struct remat_graph *g, const uint8_t *mask,
				const struct remat_treedec_limits *lim,
				struct remat_treedec *td, struct remat_error *err);

/* Free what td owns and zero it.  td may be zeroed already. */
void remat_treedec_release(struct remat_treedec *td);

#ifdef __cplusplus
}
#endif
#endif
