/*
 * path_model.h - the path bound's MILP (bound_path.c), shared with the
 * pass that plans with it (path_pass.c); internal to libremat.
 *
 * On a graph whose needed non-input nodes lie on one path, the model's
 * columns say what is resident at each first computation (a moment) and
 * what each stage between two moments computes again.  Every schedule
 * gives a point of it (remat_i_path_point), so its optimum bounds every
 * schedule; a point, its recomputations placed before each moment's
 * first computation, is a compute order (remat_i_path_order) whose replay
 * may fit the budget or not: the model does not count the memory of a
 * stage's recomputations.
 */
#ifndef REMAT_PLAN_PATH_MODEL_H
#define REMAT_PLAN_PATH_MODEL_H

#include <signal.h>

#include "remat/graph.h"
#include "remat/schedule.h"
#include "solver/milp.h"

struct remat_i_path {
	const struct remat_graph *g;
	int32_t T;
	int32_t *sigma, *pos, *last; /* pos: -1 an input, -2 not needed */
	int32_t *scol, *rcol;        /* S[t,v] = scol[v] + t - s0(v); R likewise */
	double unit;                 /* the model's cost unit (remat_i_cost_unit) */
	double floor;                /* the least cost (remat_i_least_cost) */
	int64_t cols;                /* its columns (known before it is built) */
	struct remat_i_milp m;
	/* Stages tightened (remat_i_path_tighten): Z[t,w], columns from zcol0. */
	int64_t budget;
	uint8_t *tight;              /* [T + 1] */
	int32_t zcol0, nz, zcap;
	int32_t *zt, *zw;
};

enum remat_i_path_state {
	REMAT_I_PATH_BUILT = 0,  /* the model is in p->m */
	REMAT_I_PATH_FORK,       /* more than one order: *fork names the node */
	REMAT_I_PATH_TOO_LARGE,  /* more columns than the bound tries */
	REMAT_I_PATH_NEVER       /* a moment's own working set exceeds the budget */
};

/*
 * Build the model of g at budget into p (released by remat_i_path_release
 * whatever the outcome); *state says whether it was built.  *fork (may
 * be NULL): the first node that does not read the one before, else -1.
 * REMAT_OK or REMAT_ENOMEM.
 */
int remat_i_path_build(struct remat_i_path *p, const struct remat_graph *g, int64_t budget,
		       enum remat_i_path_state *state, int32_t *fork, struct remat_error *err);
void remat_i_path_release(struct remat_i_path *p);
/*
 * 1: g's model would be built (one order, not too large) with at most
 * max_cols columns; 0: not; -1: out of memory.
 */
int remat_i_path_fits(const struct remat_graph *g, int64_t max_cols, struct remat_error *err);

/*
 * Solve the built model with CBC (without its preprocessing) until
 * deadline or *stop (may be NULL), from start (a point, may be NULL),
 * into mr; *bound: what it proves of every schedule's cost (the least
 * cost where the solver failed or found nothing).  The solver's return.
 */
int remat_i_path_solve(const struct remat_i_path *p, double deadline,
		       const volatile sig_atomic_t *stop, const double *start,
		       struct remat_i_milp_result *mr, double *bound, struct remat_error *err);

/*
 * The point of a valid schedule s (its compute steps; each value taken
 * as resident from where it is made to its last read before it is made
 * again, the least an order of computes can hold) into x[m.ncols]; its
 * objective is at most s's recomputation cost.  REMAT_ENOFIT when s's
 * first computations are not in the model's order.
 */
int remat_i_path_point(const struct remat_i_path *p, const struct remat_schedule *s,
		       double *x, struct remat_error *err);

/*
 * The schedule of point x: each stage's recomputations in topological
 * order, then the moment's first computation, with each value instance
 * freed after its last read (an output's earlier instances too, which
 * the compute-only semantics would keep: the model does not count them).
 */
int remat_i_path_order(const struct remat_i_path *p, const double *x,
		       struct remat_schedule *out, struct remat_error *err);

/*
 * Tighten stage t (0..T) so that every point of the model then runs it,
 * in remat_i_path_order's order, within the budget: Z[t,w] >= S[t,w],
 * Z[t,w] >= R[t,w] and Z[t,w] >= S[t-1,w] + R[t,v] - 1 for each user v
 * of w, and sum mem(w) Z[t,w] within what sigma_t leaves (and each
 * recomputation's workspace).  Every value resident at some step of the
 * stage has Z 1 there, so the row counts a superset of the stage's peak.
 * The rows do not hold for every schedule: a model with a tightened
 * stage plans, it no longer bounds.  Once per stage (again: no-op).
 */
int remat_i_path_tighten(struct remat_i_path *p, int32_t t, struct remat_error *err);

/* Set the Z columns of point x (S and R set) to the least they may be. */
void remat_i_path_extend(const struct remat_i_path *p, double *x);

#endif
