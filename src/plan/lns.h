/*
 * lns.h - large-neighbourhood search on the Checkmate model: from a
 * schedule, re-solve windows of stages with the MILP while the rest stays
 * fixed (lns.c describes the method).  Shared by the lns planner and the
 * last stage of auto.  Internal to libremat.
 */
#ifndef REMAT_PLAN_LNS_H
#define REMAT_PLAN_LNS_H

#include "remat/planner.h"

struct remat_i_lns_opts {
	const char *caller;      /* progress label ("lns", "auto") */
	int backend;             /* enum remat_i_milp_backend (CBC) */
	int depth;               /* recompute candidates: inputs of the window's
				    computes up to this depth (default 1) */
	int32_t window;          /* stages in the first window (default 8) */
	int64_t max_windows;     /* stop after this many sub-MILPs; 0: none */
	int64_t window_nodes;    /* branch-and-bound nodes per sub-MILP (default 500) */
	double window_seconds;   /* wall-clock cap per sub-MILP (default 2 s) */
	double replay_share;     /* share of the time left spent first on the
				    order search by replay (replay_search.h;
				    default 0.9, 0: none) */
	int64_t replay_stall;    /* its scores without improvement before it
				    stops; 0: 2000 + 8 per node (default) */
	int replay_threads;      /* its climbers, one thread each (default 2) */
	double swap_share;       /* share of the time left each run of the swap
				    pass (swap_pass.h) may take (default 0.25;
				    0: no swap pass); without windows it has
				    all the rest */
	double interval_share;   /* share of the time left the interval pass
				    (interval_pass.h) may take, once, after the
				    order search and the first swap pass;
				    < 0 (the default): LNS_INTERVAL_SHARE
				    when a time limit leaves at least
				    LNS_INTERVAL_AUTO_SECONDS then, else none;
				    0: none */
	double target;           /* stop once the cost is at most this (a lower
				    bound plus the caller's gap); 0: none */
};

/* The defaults above. */
void remat_i_lns_opts_init(struct remat_i_lns_opts *o, const char *caller);

/* The defaults, then the request's --lns-* options; REMAT_EUSAGE on a bad value. */
int remat_i_lns_opts_read(const struct remat_plan_request *req, struct remat_i_lns_opts *o,
			  const char *caller, struct remat_error *err);

struct remat_i_lns_stats {
	int64_t windows;         /* sub-MILPs solved */
	int64_t improved;        /* of which improved the schedule */
	int64_t rejected;        /* solutions the simulator did not confirm (a model bug) */
	int32_t stages;          /* T of the model */
	int proven;              /* a window spanning every stage was solved to
				    optimality: out is optimal in its order */
	double start_cost, cost; /* before and after */
	double last_s;           /* seconds from the start of LNS to its last improvement */
	int64_t swaps;           /* exchanges the swap pass kept (swap_pass.h) */
	int interval;            /* the interval pass: -1 not run, 0 ran, 1 kept */
	double interval_saved;   /* cost it saved */
	int64_t replay_evals;    /* orders the order search replayed */
	double replay_cost;      /* its cheapest schedule (HUGE_VAL: none; it
				    replaced the start when cheaper) */
};

/*
 * Improve start (a valid schedule of req->graph within req->budget): when
 * it recomputes something, first by the order search of replay_search.h
 * from the order of its first computations (o->replay_share of the time
 * left) and the swap pass of swap_pass.h (o->swap_share), then by LNS in
 * the order of the cheaper schedule's first computations, swap passes
 * between its rounds of windows, until req->deadline (or o->max_windows;
 * with neither, until a pass over all stages at the largest window
 * improves nothing).  A swap that leaves the model's order starts LNS
 * again in its own; without windows (no model, or no restart left) the
 * swap pass has the rest of the time.  out receives a schedule of
 * req->graph never costlier than start: start itself when nothing better
 * was found, else a compute-only one.  REMAT_OK, or REMAT_ENOMEM /
 * REMAT_EINTERNAL.
 */
int remat_i_lns_improve(const struct remat_plan_request *req, const struct remat_schedule *start,
			const struct remat_i_lns_opts *o, struct remat_schedule *out,
			struct remat_i_lns_stats *st, struct remat_error *err);

#endif
