/*
 * milp.h - a solver-neutral mixed-integer linear program and the two
 * backends that solve it (GLPK: milp_glpk.c, CBC: milp_cbc.c).  Internal
 * to libremat; used by the Checkmate planners.
 *
 * A program is: minimise obj_const + obj . x subject to clo <= x <= cup,
 * rlo <= A x <= rup (A in CSR), and x integral where is_int is set.
 * Infinite bounds are +-HUGE_VAL.  The builder grows its arrays as rows
 * and columns are added; every allocation failure is REMAT_ENOMEM.
 *
 * Both backends share one contract: they never print, never abort on
 * their own account (GLPK's error hook is intercepted; CBC is never
 * called with an index it could reject), stop by req->deadline from the
 * inside where the solver lets them, check the solver's status rather
 * than its return code, and report the best proven bound they saw.
 * remat_i_milp_solve() runs either in a child process that is killed at
 * the deadline, so the deadline holds where the solvers do not check it.
 */
#ifndef REMAT_MILP_H
#define REMAT_MILP_H

#include <signal.h>
#include <stdint.h>

#include "remat/error.h"

struct remat_i_milp {
	int32_t ncols, nrows;
	double obj_const;
	double *obj, *clo, *cup;  /* [ncols] */
	uint8_t *is_int;          /* [ncols] */
	int64_t *row_off;         /* [nrows + 1] */
	int32_t *row_idx;         /* [nnz] */
	double *row_val;          /* [nnz] */
	double *rlo, *rup;        /* [nrows] */
	int64_t nnz;
	int32_t cap_cols, cap_rows;
	int64_t cap_nnz;
	int in_row;               /* a row is open (row_begin called) */
};

void remat_i_milp_init(struct remat_i_milp *m);
void remat_i_milp_release(struct remat_i_milp *m);
/* Add a column; its index in *col (may be NULL). */
int remat_i_milp_add_col(struct remat_i_milp *m, double lo, double up, double obj,
			 int is_int, int32_t *col, struct remat_error *err);
/* Rows: begin, add terms (a column may appear once per row), end. */
void remat_i_milp_row_begin(struct remat_i_milp *m);
int remat_i_milp_row_add(struct remat_i_milp *m, int32_t col, double val,
			 struct remat_error *err);
int remat_i_milp_row_end(struct remat_i_milp *m, double lo, double up,
			 struct remat_error *err);

/*
 * Check x against every bound, row and integrality with absolute
 * tolerance tol (scaled by the row's largest |coefficient| for rows).
 * Returns -1 when x satisfies everything, else the index of the first
 * violated row (>= 0) or -2 - col for the first violated column; *excess
 * (may be NULL) receives the size of the violation.
 */
int64_t remat_i_milp_check(const struct remat_i_milp *m, const double *x, double tol,
			   double *excess);
/* obj_const + obj . x */
double remat_i_milp_value(const struct remat_i_milp *m, const double *x);

/*
 * What a MILP's proven bound val proves for sure: val less a margin for
 * the solver's tolerances (1e-6 relative, 2e-5 absolute; the bounds'
 * MILPs count costs in units of the least positive cost), and 0 when
 * that is not positive or val is not finite.
 */
double remat_i_milp_proven(double val);

enum remat_i_milp_backend { REMAT_I_MILP_CBC = 0, REMAT_I_MILP_GLPK = 1 };

/* Called from inside the solve, at most every ~0.2 s; NaN when unknown. */
typedef void (*remat_i_milp_progress_fn)(void *ctx, double incumbent, double bound);

struct remat_i_milp_opts {
	int relax;             /* solve the LP relaxation only */
	double deadline;       /* remat_now() value; 0: none */
	double hard;           /* remat_now() value by which the solve returns,
				  result included (the request's deadline);
				  0: deadline + a grace for the result */
	double grace;          /* seconds the solver may overrun deadline before its
				  process is killed, its result lost (0: a quarter
				  of a second); hard still holds */
	const volatile sig_atomic_t *stop; /* NULL, or: stop as at the deadline once set */
	double gap;            /* stop at this relative gap; 0: prove optimality */
	const double *start;   /* a feasible x to start from (all columns), or NULL */
	int64_t max_nodes;     /* CBC: stop after this many branch-and-bound nodes
				  (deterministic, unlike a time limit); 0: none */
	int no_preprocess;     /* CBC: no CglPreProcess (it has proven wrong optima
				  on models with many fixed columns; bound_cut.c) */
	remat_i_milp_progress_fn progress;
	void *progress_ctx;
};

enum remat_i_milp_status {
	REMAT_I_MILP_OPTIMAL = 0,   /* x optimal (within opts.gap) */
	REMAT_I_MILP_FEASIBLE,      /* stopped with a solution, not proven */
	REMAT_I_MILP_INFEASIBLE,    /* proven: no solution */
	REMAT_I_MILP_NOSOLUTION     /* stopped before finding any */
};

struct remat_i_milp_result {
	int status;            /* enum remat_i_milp_status */
	double *x;             /* [ncols], malloc'd, when a solution exists */
	double obj;            /* objective of x (with obj_const), NaN if none */
	double bound;          /* best proven lower bound, NaN if none */
	int stopped;           /* the deadline stopped the search */
	int64_t nodes;         /* branch-and-bound nodes, -1 unknown */
	int crashed;           /* the solver's process died by this signal
				  (SIGSEGV ...) before it answered; 0 if not */
};

void remat_i_milp_result_init(struct remat_i_milp_result *r);
void remat_i_milp_result_release(struct remat_i_milp_result *r);

/*
 * Solve m with the backend, in a child process killed shortly after
 * opts->deadline, or at opts->hard (isolate.c): the deadline is hard
 * whatever the solver does.  REMAT_OK whenever the solver ran to a status or was stopped
 * (res->status says which); REMAT_ENOMEM; REMAT_EINTERNAL when the
 * solver failed or reported a state it should not (message in err).
 */
int remat_i_milp_solve(enum remat_i_milp_backend b, const struct remat_i_milp *m,
		       const struct remat_i_milp_opts *opts,
		       struct remat_i_milp_result *res, struct remat_error *err);

/*
 * Solves lost to a crash of the solver's process (res->crashed) on this
 * thread since it started, and the signal of the last one (0: none):
 * remat_plan_run() reports the ones of a plan (report->solver_crashes).
 */
int64_t remat_i_milp_crashes(int *last_signal);

/*
 * Threads of remat running beside the caller (the order search's
 * climbers): a solve forks, and the child of a multithreaded process may
 * only make async-signal-safe calls, so remat_i_milp_isolate() refuses to
 * fork while any run (REMAT_EINTERNAL).  The climbers count themselves.
 */
void remat_i_threads_add(int delta);

/* A backend, run in the calling process (deadline checked where it can). */
typedef int (*remat_i_milp_solve_fn)(const struct remat_i_milp *m,
				     const struct remat_i_milp_opts *opts,
				     struct remat_i_milp_result *res,
				     struct remat_error *err);
/* Run solve in a child process killed at the deadline (isolate.c). */
int remat_i_milp_isolate(remat_i_milp_solve_fn solve, const char *name,
			 const struct remat_i_milp *m, const struct remat_i_milp_opts *opts,
			 struct remat_i_milp_result *res, struct remat_error *err);
int remat_i_milp_solve_glpk(const struct remat_i_milp *m,
			    const struct remat_i_milp_opts *opts,
			    struct remat_i_milp_result *res, struct remat_error *err);
int remat_i_milp_solve_cbc(const struct remat_i_milp *m,
			   const struct remat_i_milp_opts *opts,
			   struct remat_i_milp_result *res, struct remat_error *err);

/* Backend by name ("glpk", "cbc"); -1 if unknown. */
int remat_i_milp_backend_parse(const char *name);
const char *remat_i_milp_backend_name(enum remat_i_milp_backend b);

#endif
