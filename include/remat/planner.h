/*
 * remat/planner.h - the planner interface and registry.
 *
 * Adding a new planner
 * --------------------
 * 1. Write src/planners/<name>.c.  It opens with its algorithm in numbered
 *    steps, the paper it comes from, its complexity and what it does not
 *    guarantee.  It defines one
 *
 *        const struct remat_planner remat_i_planner_<name> = {
 *            .name = "<name>", .summary = "one line", .flags = ...,
 *            .options = <name>_options, .plan = <name>_plan,
 *        };
 *
 * 2. Add "&remat_i_planner_<name>," to the table in src/planners/registry.c
 *    (the order there is the order of `remat planners` and of `auto`).
 *
 * That is all: the CLI accepts the options the planner declares
 * (`remat plan --<option> VALUE`), `remat planners` lists it, `auto` tries
 * it when flagged REMAT_PLANNER_AUTO, and the conformance suite runs it.
 *
 * The contract a plan() function keeps:
 * - It never prints, never writes files, never calls exit().
 * - It fills out with a schedule for req->graph and returns REMAT_OK, or
 *   returns REMAT_ENOFIT when it found nothing within req->budget (or
 *   another status with a message).  It may emit compute steps only; the
 *   runner then derives the frees with the liveness pass.
 * - It does not decide feasibility: remat_plan_run() simulates whatever it
 *   returns, and a schedule over budget is reported as REMAT_ENOFIT.  A
 *   planner that searches a knob uses the simulator as its oracle
 *   (src/plan/best.h).
 * - It honours req->deadline (remat_plan_expired()) and reports progress
 *   through req->progress when it runs long.
 * - Same graph, budget, options and seed: the same schedule.
 */
#ifndef REMAT_PLANNER_H
#define REMAT_PLANNER_H

#include <signal.h>
#include <stdint.h>

#include "remat/error.h"
#include "remat/graph.h"
#include "remat/schedule.h"
#include "remat/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct remat_kv {
	const char *key;
	const char *value;
};

struct remat_progress {
	const char *planner;
	const char *phase;     /* "search", "solve", ... */
	double fraction;       /* 0..1, or negative when unknown */
	double incumbent;      /* best cost so far, NaN when none */
	double bound;          /* best proven lower bound, NaN when none */
	double elapsed;        /* seconds since the plan started */
};

typedef void (*remat_progress_fn)(void *ctx, const struct remat_progress *p);

/* What a planner may add to the report (all optional). */
struct remat_plan_report {
	char chosen[64];       /* auto: the planner whose schedule won */
	double lower_bound;    /* proven lower bound on cost, NaN if none */
	double gap;            /* relative optimality gap, NaN if unknown */
	int optimal;           /* 1 proven optimal, 0 not, -1 unknown */
	char note[256];        /* one line for people, or "" */
	double first_s;        /* auto, lns: seconds to the first schedule within
				  budget, NaN if unknown */
	double final_s;        /* ... and to the schedule returned */
	char order[16];        /* the order planned in ("file", "best", ...) */
	int64_t order_peak;    /* its no-remat peak (bytes), -1 when not reordered */
	int64_t solver_crashes; /* MILP solves lost because the solver's process
				   crashed (filled in by remat_plan_run()) */
	int crash_signal;      /* the signal of the last one (SIGSEGV ...), 0 if none */
	int64_t peak_bound;    /* remat_plan_lowest(): the peak lower bound, -1 if none */
	double order_lower_bound; /* checkmate, checkmate-lp, lns: the bound proven in the
				     order planned in (Checkmate's model), NaN if none;
				     lower_bound holds in every order */
};

struct remat_plan_request {
	const struct remat_graph *graph;
	int64_t budget;               /* bytes */
	/*
	 * Seconds, 0 for none; the deadline is what planners watch.  With
	 * the deadline 0, remat_plan_run() and remat_plan_lowest() set it to
	 * time_limit from their start.
	 */
	double time_limit;
	double deadline;              /* remat_now() value, 0 for none */
	/*
	 * May be NULL.  Once *stop is nonzero the request counts as out of
	 * time (remat_plan_expired()): planners finish with what they have,
	 * as at the deadline.  Set from a signal handler to stop a long
	 * search and keep its best schedule.
	 */
	const volatile sig_atomic_t *stop;
	uint64_t seed;
	const struct remat_kv *options; /* planner options, by name */
	int n_options;
	remat_progress_fn progress;   /* may be NULL */
	void *progress_ctx;
	struct remat_plan_report *report; /* may be NULL */
	/*
	 * The node order planners follow, an enum remat_order_method
	 * (remat/order.h).  REMAT_ORDER_FILE (0) plans on graph as it is;
	 * any other method makes remat_plan_run() find that order and, when
	 * its no-remat peak is lower than the file order's, plan on the
	 * graph reordered by it and map the schedule back.  Planners flagged
	 * REMAT_PLANNER_REFERENCE always get the file's order.
	 */
	int order;
};

struct remat_planner_option {
	const char *name;      /* "slots": given as --slots N */
	const char *arg;       /* "N"; NULL: a flag (given alone, its value "1") */
	const char *help;      /* one line, with the default */
};

enum remat_planner_flags {
	REMAT_PLANNER_AUTO = 1u << 0,  /* tried by the auto planner */
	REMAT_PLANNER_EXACT = 1u << 1, /* optimal within its model */
	/*
	 * Its schedule is the reference and goes out as it is: the runner
	 * does not offer the needed nodes' order in its place (see
	 * remat_plan_run()).
	 */
	REMAT_PLANNER_REFERENCE = 1u << 2,
	/*
	 * It plans in several node orders itself (auto, lns: through the
	 * portfolio), so the runner hands req->order over instead of
	 * reordering the graph for it.
	 */
	REMAT_PLANNER_ORDERS = 1u << 3,
	/*
	 * Reports a cost bound (lower_bound, gap, optimal): where the runner
	 * or remat_plan_lowest() replaces its schedule, they give the bound
	 * for the schedule returned.
	 */
	REMAT_PLANNER_BOUNDS = 1u << 4
};

struct remat_planner {
	const char *name;
	const char *summary;
	unsigned flags;
	const struct remat_planner_option *options; /* {NULL}-terminated, or NULL */
	int (*plan)(const struct remat_plan_request *req,
		    struct remat_schedule *out, struct remat_error *err);
};

/* The registry, in order, NULL-terminated. */
const struct remat_planner *const *remat_planner_list(void);
const struct remat_planner *remat_planner_find(const char *name);
/* Does p declare the option name? */
int remat_planner_has_option(const struct remat_planner *p, const char *name);

/*
 * Run p on req (on the graph reordered by req->order, the schedule
 * mapped back), then make the schedule explicit (liveness) when p emitted
 * computes only, then simulate it on req->graph.  Unless p is flagged
 * REMAT_PLANNER_REFERENCE (or declares the flag option "natural" and was
 * given it), the needed nodes once each in topological
 * order are offered too whenever they fit the budget (always, when it
 * covers the no-remat peak): no schedule costs less, so the better of
 * the two is kept, and a planner that found nothing or ran out of time
 * still gets that order.  Returns REMAT_OK only for a valid
 * schedule within budget; REMAT_ENOFIT when p found none or its schedule
 * is over budget (res then describes it when there was one); another
 * status for errors, including REMAT_EINTERNAL when p returned an invalid
 * schedule.  res is always filled (res->valid = 0 when no schedule).
 */
int remat_plan_run(const struct remat_planner *p,
		   const struct remat_plan_request *req,
		   struct remat_schedule *out, struct remat_sim_result *res,
		   struct remat_error *err);

/*
 * The lowest peak p reaches (remat plan --budget lowest): req->budget is
 * ignored; req's time limit covers the whole search.  A bisection on the
 * budget between a proven peak lower bound and the peak of a plan at the
 * no-remat peak, each probe a remat_plan_run() with a share of the time
 * (for auto: auto asked for any schedule within the budget, --gap 0.999;
 * then auto as asked at the lowest budget that fitted, with the time
 * left; the cheaper schedule is kept).  On
 * REMAT_OK, *out is that schedule, res its simulation with res->budget
 * the budget it was found at (p asked again for it finds it; the peak
 * may be lower), *peak_bound the peak lower bound (no schedule peaks
 * lower), and req->report (if any) says what was chosen and, in its note,
 * how far the peak is from the bound.  The lowest found, not a proof that
 * nothing lower fits: planners are not monotone in the budget.
 */
int remat_plan_lowest(const struct remat_planner *p, const struct remat_plan_request *req,
		      struct remat_schedule *out, struct remat_sim_result *res,
		      int64_t *peak_bound, struct remat_error *err);

/* Initialise a report to "nothing known". */
void remat_plan_report_init(struct remat_plan_report *r);

/* Monotonic wall clock in seconds. */
double remat_now(void);

/* Has the request's deadline passed, or has *req->stop been set? */
int remat_plan_expired(const struct remat_plan_request *req);

/* Send progress if the request has a callback. */
void remat_plan_progress(const struct remat_plan_request *req,
			 const struct remat_progress *p);

/* Option lookup: the value given for name, or NULL. */
const char *remat_opt_get(const struct remat_plan_request *req,
			  const char *name);
/* Integer option in [lo, hi], default def; REMAT_EUSAGE on a bad value. */
int remat_opt_int(const struct remat_plan_request *req, const char *name,
		  long def, long lo, long hi, long *out,
		  struct remat_error *err);
/* Number option in [lo, hi], default def; REMAT_EUSAGE on a bad value. */
int remat_opt_double(const struct remat_plan_request *req, const char *name,
		     double def, double lo, double hi, double *out,
		     struct remat_error *err);

#ifdef __cplusplus
}
#endif
#endif
