/*
 * checkmate_model.h - Checkmate's MILP (Jain et al., MLSys 2020) over a
 * remat graph, and everything that moves between schedules and the
 * model's R/S/FREE/U variables; then solving it (checkmate_solve.c) and
 * its LP relaxation with rounding (checkmate_relax.c).  Internal to
 * libremat; shared by the checkmate and checkmate-lp planners, auto and
 * the public LP bound (remat/bound.h).
 *
 * Model nodes: the nodes some output depends on.  Inputs among them get
 * model indices 0..P-1 (resident from the start, never computed); the
 * others, in the loader's topological order, get P..P+T-1 and define the
 * T stages: stage t computes node P+t (the frontier) and may recompute
 * any earlier one.  "c" below is a compute index 0..T-1 (model index
 * P+c); "m" a model index.
 *
 * The only real decision is R: given which nodes are computed in which
 * stage, the least retention S, the frees and the memory all follow
 * (remat_i_cm_normalize, remat_i_cm_complete).  Rounding an LP solution
 * and mapping a heuristic's schedule both go through that path.
 */
#ifndef REMAT_CHECKMATE_MODEL_H
#define REMAT_CHECKMATE_MODEL_H

#include <stdint.h>

#include "remat/planner.h"
#include "plan/best.h"
#include "solver/milp.h"

/*
 * Most stages a model (or a point of it: O(T^2) bytes) is made for; the
 * planners refuse larger graphs before allocating.
 */
#define REMAT_I_CM_MAX_T 4000

/* Handles of model variables: a column >= 0, or one of these constants. */
#define REMAT_I_CM_ZERO (-1)
#define REMAT_I_CM_ONE (-2)

struct remat_i_cm {
	const struct remat_graph *g;
	int32_t T, P, N;        /* stages, model inputs, model nodes */
	int32_t *node;          /* [N] graph index */
	int32_t *mi;            /* [g->n] model index, -1 when not in the model */
	int64_t *mem, *ws;      /* [N] in units of `unit` */
	double *cost;           /* [N] */
	uint8_t *once;          /* [N] at most one compute (recompute false, or C = 1) */
	uint8_t *is_out;        /* [N] */
	int32_t *last_need;     /* [N] last stage in which the node can be read; T: output */
	int32_t *in_off, *in_idx;   /* [N+1] inputs of each model node (model indices) */
	int32_t *use_off, *use_idx; /* [N+1] users: compute indices, ascending */
	int32_t E;              /* edges (input -> compute node) */
	int32_t *edge_src;      /* [E] model index of the input; edges of compute c */
	int32_t *edge_off;      /* [T+1]   are edge_off[c] .. edge_off[c+1]-1 */
	int64_t unit;           /* GCD of every mem and workspace (>= 1) */
	int64_t budget;         /* floor(budget bytes / unit) */
	int64_t budget_bytes;
	int max_computes;       /* 0: unlimited */
	int hazard_rows;        /* FREE by Checkmate's two hazard-count rows */
	double least_cost;      /* every model node once */
	/*
	 * The objective's unit: the least positive cost (1 when none).  The
	 * LP and MILP minimise costs in this unit, so that a graph measured in
	 * nanoseconds is solved as one counted in whole units (Clp's and
	 * CBC's tolerances are absolute: costs of 1e-9 were all "zero" and an
	 * LP stopped at a vertex far from its optimum).  Objective values the
	 * solver returns are multiplied by it.
	 */
	double cost_unit;
	const char *warm_from;  /* who made the warm start ("dtr", "LP rounding"), for notes */

	/* Variable handles, filled by remat_i_cm_build. */
	int32_t *R;             /* [T*T]  R[t*T + c] */
	int32_t *S;             /* [(T+1)*N] S[t*N + m] */
	int32_t *F;             /* [T*E]  F[t*E + e] */
	int32_t *U;             /* [T*T]  U[t*T + c], -1 where not created */
	struct remat_i_milp lp;
	int built;
};

/* A point of the model: which nodes each stage computes and keeps. */
struct remat_i_cm_sol {
	uint8_t *R;             /* [T*T] */
	uint8_t *S;             /* [(T+1)*N] */
	uint8_t *F;             /* [T*E] */
	int64_t *U;             /* [T*T] memory while c runs in stage t (units), -1 */
	int64_t peak;           /* units, incl. workspace; 0 when T = 0 */
	double cost;
};

/*
 * Prepare the model of g at budget (bytes): the model nodes, the GCD
 * unit and the scaled budget.  max_computes 0 is unlimited.  No variable
 * yet.  REMAT_ENOMEM only.
 */
int remat_i_cm_init(struct remat_i_cm *cm, const struct remat_graph *g, int64_t budget,
		    int max_computes, struct remat_error *err);
void remat_i_cm_release(struct remat_i_cm *cm);

/* Create the MILP (variables, rows, objective) in cm->lp; set
 * cm->hazard_rows first to get Checkmate's own FREE rows. */
int remat_i_cm_build(struct remat_i_cm *cm, struct remat_error *err);
/* Columns and nonzeros the model would have, for size caps (no allocation). */
void remat_i_cm_estimate(const struct remat_i_cm *cm, int64_t *cols, int64_t *nnz);

int remat_i_cm_sol_init(const struct remat_i_cm *cm, struct remat_i_cm_sol *s,
			struct remat_error *err);
void remat_i_cm_sol_release(struct remat_i_cm_sol *s);
int remat_i_cm_sol_copy(const struct remat_i_cm *cm, struct remat_i_cm_sol *dst,
			const struct remat_i_cm_sol *src, struct remat_error *err);

/*
 * Given s->R (frontier set or not), make it the cheapest consistent
 * point: the frontier computes are set, computes of nodes that may run
 * once are dropped where they are not the frontier, more than
 * max_computes computes are cut back, computes nobody reads are dropped,
 * and S becomes the least retention that R needs.  Then completes s.
 * Always yields a point satisfying every row but, maybe, the budget.
 */
int remat_i_cm_normalize(const struct remat_i_cm *cm, struct remat_i_cm_sol *s,
			 struct remat_error *err);

/*
 * Given s->R and s->S, derive FREE by the hazard rule and U, the peak
 * and the cost exactly (integers).  Returns NULL when (R, S) satisfies
 * every structural row, else a static description of the first violated
 * one (budget not included: compare s->peak with cm->budget).
 */
const char *remat_i_cm_complete(const struct remat_i_cm *cm, struct remat_i_cm_sol *s);

/* Is a cheaper than b (costs within 1e-12 relative tie), or as cheap and lower? */
int remat_i_cm_sol_better(const struct remat_i_cm_sol *a, const struct remat_i_cm_sol *b);

/* ---- the LP relaxation and its rounding (checkmate_relax.c) ---- */

/* One rounding run: where candidates are judged and kept. */
struct remat_i_cm_rounding {
	const struct remat_plan_request *req;
	const struct remat_i_cm *cm;       /* at the real budget: judges peaks */
	double deadline;                   /* 0: none */
	struct remat_i_cm_sol cand;
	struct remat_i_cm_sol *best;       /* the cheapest point that fits */
	int *have;
	struct remat_i_best *sbest;          /* NULL, or its schedules, simulated */
	struct remat_schedule sched;
};

/*
 * Steps 1 to 3 of checkmate-lp: LPs at 100% of the budget (when lb is
 * wanted), 90%, 80%, ... while nothing fits and time is left, each
 * rounded; candidates that fit go to r->best (and r->sbest, simulated).
 * *lb (may be NULL): the LP optimum at 100% (NaN if not solved).
 * REMAT_ENOFIT when the LP cannot be started in time or is too large.
 */
int remat_i_cm_lp_round(struct remat_i_cm_rounding *r, int backend, long rounds, double *lb,
			struct remat_error *err);

/*
 * Warm start from Checkmate's LP rounding: keep in inc
 * the cheapest rounding that fits cm's budget if it beats inc (*have).
 * Stops at deadline (0: none); an LP that would not finish by then is
 * not started.
 */
int remat_i_checkmate_lp_warm(const struct remat_plan_request *req,
			      const struct remat_i_cm *cm, double deadline,
			      struct remat_i_cm_sol *inc, int *have, struct remat_error *err);

/* Read a solver's x (rounding binaries) into s->R and s->S. */
void remat_i_cm_from_x(const struct remat_i_cm *cm, const double *x,
		       struct remat_i_cm_sol *s);
/* Write a completed point as a column vector for the built model. */
void remat_i_cm_to_x(const struct remat_i_cm *cm, const struct remat_i_cm_sol *s,
		     double *x);

/*
 * Checkmate's solve_r_opt: from a retention matrix s->S, the R that
 * computes what S needs (a value kept into t+1 but not held at t is
 * computed at t; inputs of every compute that are not held are computed
 * too, walking the stage from the frontier down).  Overwrites s->R.
 */
void remat_i_cm_r_from_s(const struct remat_i_cm *cm, struct remat_i_cm_sol *s);

/*
 * Map a schedule into the model: drop computes of nodes outside it,
 * require the first computations in the model's order; the computes
 * after node t-1's first and up to node t's first form stage t, where
 * no node may appear twice; then normalize.  REMAT_ENOFIT (with a reason in err)
 * when it does not map; the caller compares s->peak with the budget.
 */
int remat_i_cm_map(const struct remat_i_cm *cm, const struct remat_schedule *sched,
		   struct remat_i_cm_sol *s, struct remat_error *err);

/*
 * The schedule of a completed point: per stage the computes in index
 * order, each followed by the frees FREE says, then frees of what S does
 * not keep into the next stage.  Inputs outside the model and those S
 * drops at stage 0 are freed first.  Its simulated peak is s->peak*unit.
 */
int remat_i_cm_schedule(const struct remat_i_cm *cm, const struct remat_i_cm_sol *s,
			struct remat_schedule *out, struct remat_error *err);

/* ---- solving (checkmate_solve.c) ---- */

/* The options of the checkmate planner (its --help lists them). */
struct remat_i_cm_opts {
	int backend;
	int warm;
	long max_computes;
	double gap;
	int hazard_rows;
};

/* Read them from req; REMAT_EUSAGE on a bad value. */
int remat_i_cm_opts_read(const struct remat_plan_request *req, struct remat_i_cm_opts *o,
			 struct remat_error *err);

/* REMAT_ENOFIT naming the limit when cm has more than REMAT_I_CM_MAX_T stages. */
int remat_i_cm_check_size(const struct remat_i_cm *cm, struct remat_error *err);

/*
 * Whether sched computes some node more than cm's max_computes times (0
 * when there is no cap; 1 when out of memory, as if it did).
 */
int remat_i_cm_over_cap(const struct remat_i_cm *cm, const struct remat_schedule *sched);

/*
 * Map sched into the model (tmp is scratch); keep it in best when its
 * model peak fits and it is better (*have).  A schedule in another order
 * is no warm start: REMAT_OK, nothing kept.
 */
int remat_i_cm_offer(const struct remat_i_cm *cm, const struct remat_schedule *sched,
		     struct remat_i_cm_sol *tmp, struct remat_i_cm_sol *best, int *have,
		     struct remat_error *err);

/*
 * Build and solve the MILP of cm for req from the incumbent inc (when
 * have_inc), round, keep the better of the solver's point and inc, and
 * write its schedule to out; req->report gets the bound, the gap and a
 * note.  REMAT_ENOFIT when there is no incumbent and the solver found
 * none.
 */
int remat_i_cm_solve(const struct remat_plan_request *req, struct remat_i_cm *cm,
		     const struct remat_i_cm_opts *o, struct remat_i_cm_sol *inc, int have_inc,
		     struct remat_schedule *out, struct remat_error *err);

/*
 * Would auto run the MILP on g within time_left seconds (0: no limit)?
 * Small graphs only; see auto.c.
 */
int remat_i_checkmate_auto_fits(const struct remat_graph *g, double time_left);

/*
 * Solve the Checkmate MILP for req, starting from incumbent (may be NULL,
 * or a schedule that does not map into the model: then no warm start).
 * Honours req->deadline and req's checkmate options; fills req->report's
 * lower_bound, gap and optimal.  REMAT_OK with a schedule in out, which
 * is never worse than the incumbent's image in the model; REMAT_ENOFIT
 * when none was found.
 */
int remat_i_checkmate_improve(const struct remat_plan_request *req,
			      const struct remat_schedule *incumbent,
			      struct remat_schedule *out, struct remat_error *err);

/*
 * The same; when the incumbent gives no warm start and lp_until > 0, the
 * rounding of the LP relaxation (checkmate-lp's) gives one, until then.
 */
int remat_i_checkmate_improve_lp(const struct remat_plan_request *req,
				 const struct remat_schedule *incumbent, double lp_until,
				 struct remat_schedule *out, struct remat_error *err);

#endif
