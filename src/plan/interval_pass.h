/*
 * interval_pass.h - which values a schedule holds and which it computes
 * again, decided for its whole order at once by one MILP (internal).
 *
 * The order of the schedule's first computations stays.  Each value is
 * held between two stages where it can be needed, or not at all
 * (Moccasin's retention intervals with the order fixed), and comes back
 * only where one of its users first runs or where the schedule already
 * brings it back.  The model is much smaller than Checkmate's (a twentieth
 * to a thirtieth on Moccasin's random layered graphs), so CBC sees every
 * stage at once where LNS's windows see a few: on random-layered-n1000
 * at 70% it finds, in the order the search left, a schedule 3 points
 * cheaper than the one the windows and the swap pass stop at, but its
 * root LP and cuts take CBC a minute and a half there (bench/RESULTS.md,
 * the hard end).  See interval_pass.c.
 */
#ifndef REMAT_PLAN_INTERVAL_PASS_H
#define REMAT_PLAN_INTERVAL_PASS_H

#include "remat/planner.h"

struct remat_i_interval_stats {
	int32_t stages;        /* the model's stages (first computations) */
	int32_t cols, rows;    /* its size; 0 when it was not built */
	int64_t nnz;
	int32_t relaxed;       /* memory rows relaxed to the start's value */
	int unmapped;          /* the start broke a row it should not (not solved) */
	int status;            /* enum remat_i_milp_status; -1: not solved */
	double bound;          /* CBC's bound on the model (not on schedules) */
	int crashed;           /* the solver's process died */
	double cost;           /* the kept schedule's (the simulator's) */
};

/*
 * Improve s, a valid schedule of req->graph within req->budget, by the
 * MILP above, solved by CBC until deadline (remat_now() value; the
 * request's deadline also holds).  *out receives the schedule (compute
 * steps with their frees) and *kept is 1 when the simulator finds it
 * valid, within the budget and cheaper; else *kept is 0 and *out is
 * untouched.  Nothing is tried (REMAT_OK, *kept 0) when s does not map
 * into the model (a value computed twice in one stage, or after the last
 * first computation) or the model would exceed max_cols columns or
 * max_nnz nonzeros.  st may be NULL.
 */
int remat_i_interval_pass(const struct remat_plan_request *req, const struct remat_schedule *s,
			  double deadline, int32_t max_cols, int64_t max_nnz,
			  struct remat_schedule *out, int *kept,
			  struct remat_i_interval_stats *st, struct remat_error *err);

#endif
