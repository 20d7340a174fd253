/*
 * checkmate.c - the exact planner: Checkmate's MILP (Jain et al.,
 * "Checkmate: Breaking the Memory Wall with Optimal Tensor
 * Rematerialization", MLSys 2020), as its reference implementation
 * (checkmate/core/solvers/gurobi_solver.py) builds it, solved by CBC
 * (default) or GLPK.
 *
 * 1. Warm start: run every fast planner (flagged REMAT_PLANNER_AUTO), map
 *    each schedule into the model (remat_i_cm_map: same first-compute
 *    order, no node twice in a stage, then the least retention its
 *    computes need) and keep the cheapest whose model peak fits.  When
 *    none fits, round the LP relaxation as checkmate-lp does.  When a
 *    fast schedule costs what computing every needed node once costs,
 *    stop: it is optimal.  The cheapest fast schedule is kept whether it
 *    maps or not: at the end it is returned if it is strictly cheaper
 *    than the MILP's result, or the MILP found none (prefer_fast).  The
 *    report's note says which schedule came back and why.
 * 2. Build the MILP (checkmate_model.c): stages t = 0..T-1 follow the
 *    loader's topological order of the nodes that must be computed;
 *    binaries R[t,i] (compute i in stage t), S[t,i] (i resident entering
 *    stage t), FREE[t,(u,v)] (free u after v runs in stage t: allowed
 *    only when none of the hazards of Checkmate's hazard count holds),
 *    continuous U[t,k] (memory while k runs); R[t,v] <= R[t,u] + S[t,u]
 *    for every edge; S[t+1,i] <= S[t,i] + R[t,i]; U + workspace <=
 *    budget; minimise sum cost * R.
 * 3. Validate the warm start against every row and bound of that MILP
 *    ourselves (the solvers check little), then hand it to the solver.
 * 4. Solve until optimal, the gap option, or the deadline (a hard
 *    wall-clock stop from inside the search; see milp_glpk.c and
 *    milp_cbc.c).  Progress: incumbent and bound through req->progress.
 * 5. Round the solution, recompute FREE, U and the peak exactly in
 *    integers, drop computes nothing reads (the objective is never worse,
 *    the peak never higher), and keep the better of it and the warm start.
 * 6. Convert to a schedule: per stage the computes in index order, each
 *    followed by the frees FREE says, then the frees of what S does not
 *    keep into the next stage.  The simulator's peak equals the model's.
 *
 * Adaptations to FORMATS.md's memory model, and deliberate departures:
 * - Nodes no output depends on are never computed: they are left out of
 *   the model (T counts only the nodes some output needs).  Their
 *   computes are dropped when a heuristic schedule is mapped in.
 * - Input nodes are resident from the start and never computed: they
 *   have S but no R and no stage; S[0,input] is free (an input may be
 *   dropped before the first step) and S[t+1,input] <= S[t,input].
 * - Outputs are resident at the end: a retention vector S[T,.] after the
 *   last stage is fixed to 1 on outputs and 0 elsewhere.  This replaces
 *   Checkmate's special last-stage hazard count (no S term there).
 * - Workspace is held only while its node runs: U[t,k] + ws(k) R[t,k]
 *   <= budget (a row where R is a variable, a bound on the frontier).
 * - recompute: false allows the frontier compute only (R[t,i] = 0 for
 *   t != i); --max-computes C adds sum_t R[t,i] <= C per node.
 * - Computing a resident value is invalid here (Checkmate allows it and
 *   then counts the value twice): R[t,i] + S[t,i] <= 1.
 * - Memory counts every resident value, inputs included (Checkmate's U
 *   counts activations only and adds parameters outside the model).
 * - Frontier-advancing and the other structural zeros (R[t,i>t],
 *   S[t,i>=t], S and R past the last stage that can read a value) are
 *   not variables at all: constants folded into the rows, where
 *   Checkmate writes three aggregate equality rows.
 * - Sizes are divided by the GCD of every mem and workspace; the budget
 *   is rounded down to a multiple of it, which changes nothing, since
 *   every memory total is such a multiple.
 * - U exists only where the node can run in that stage; it carries the
 *   frees of the previous such position (Checkmate has one per (t,k)).
 * - FREE: by default one row per hazard (FREE <= R[t,v], FREE <= 1 -
 *   S[t+1,u], FREE <= 1 - R[t,w] for each later user w in the stage) and
 *   no row forcing FREE to 1.  Same integer optimum as Checkmate's two
 *   aggregated rows (--free-rows hazard), a tighter LP relaxation, and
 *   up to 15 times faster on training chains (bench/RESULTS.md).  Where
 *   the solver leaves a free out, step 5 frees anyway.
 * - No 1% noise on the costs (Checkmate perturbs them to break ties);
 *   ties are broken by the solver, deterministically.
 *
 * Complexity: O(T^2 + T E) variables and rows for T nodes and E edges;
 * the branch and bound is exponential in the worst case.  CBC proves
 * 32-layer training chains (66 nodes) optimal in about a second and
 * FCN-8's 73-node training graph in seconds; GLPK is slower on most
 * instances (bench/RESULTS.md).
 *
 * What it does not guarantee: optimality among all schedules.  It is
 * optimal among schedules whose first computations follow the loader's
 * topological order, that compute each stage's nodes in that order and
 * no node twice in one stage (Checkmate's frontier-advancing model).
 * The lower bound it reports is a bound within that model.  A stopped
 * run returns the best schedule found (at least the warm start) with its
 * gap.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/planner.h"
#include "analysis/needed.h"
#include "plan/best.h"
#include "plan/checkmate_model.h"
#include "plan/every_order.h"
#include "plan/portfolio.h"

/* Without --time-limit, an LP rounding warm start must fit in this. */
#define WARM_LP_SECONDS 30.0

static const struct remat_planner_option checkmate_options[] = {
	{ "solver", "NAME", "MILP solver: cbc or glpk (default cbc: it proves more)" },
	{ "warm-start", "on|off",
	  "start from the cheapest fast planner's schedule that maps into the model, "
	  "else from the LP rounding (default on)" },
	{ "max-computes", "C", "compute each node at most C times (default 0: no cap)" },
	{ "gap", "G", "stop at relative optimality gap G (default 0.0001; 0: prove optimality)" },
	{ "free-rows", "split|hazard",
	  "FREE rows: one per hazard (default) or Checkmate's hazard count" },
	{ NULL, NULL, NULL }
};

/* What the warm start keeps while the portfolio runs. */
struct warm {
	struct remat_i_cm *cm;
	struct remat_i_cm_sol tmp;
	struct remat_i_cm_sol *inc;
	int *have;
	struct remat_i_portfolio *pf;
	const struct remat_plan_request *req;
	struct remat_i_best *fast;      /* the cheapest, mapped or not */
	const char **fast_from;
};

static int keep_mapped(void *ctx, const struct remat_planner *p, struct remat_schedule *s,
		       const struct remat_sim_result *r, int *stop, struct remat_error *err)
{
	struct warm *w = ctx;
	double before = *w->have ? w->inc->cost : INFINITY;
	int kept = 0;

	(void)r;
	(void)stop;
	/* --max-computes: a schedule over the cap is neither a start nor an answer. */
	if (remat_i_cm_over_cap(w->cm, s))
		return REMAT_OK;
	REMAT_TRY(remat_i_cm_offer(w->cm, s, &w->tmp, w->inc, w->have, err));
	if (*w->have && w->inc->cost < before)
		w->cm->warm_from = p->name; /* a static string */
	if (*w->have)
		w->pf->incumbent = w->inc->cost;
	REMAT_TRY(remat_i_best_offer(w->fast, p->name, w->req->graph, w->req->budget, s, NULL,
				     &kept, err));
	if (kept)
		*w->fast_from = p->name;
	return REMAT_OK;
}

/*
 * Step 1: the fast planners' schedules, within a quarter of the time;
 * if none fits, the LP rounding.
 */
static int warm_start(const struct remat_plan_request *req, struct remat_i_cm *cm,
		      struct remat_i_cm_sol *inc, int *have, struct remat_i_best *fast,
		      const char **fast_from, struct remat_error *err)
{
	struct remat_i_portfolio pf;
	struct warm w;
	double t0 = remat_now();
	int rc;

	memset(&w, 0, sizeof(w));
	REMAT_TRY(remat_i_cm_sol_init(cm, &w.tmp, err));
	w.cm = cm;
	w.inc = inc;
	w.have = have;
	w.pf = &pf;
	w.req = req;
	w.fast = fast;
	w.fast_from = fast_from;
	remat_i_portfolio_init(&pf, "checkmate");
	pf.strict_deadline = 1;
	if (req->deadline > 0)
		pf.deadline = t0 + 0.25 * (req->deadline - t0);
	pf.offer = keep_mapped;
	pf.ctx = &w;
	rc = remat_i_portfolio_run(req, &pf, err);
	if (rc == REMAT_OK && !*have) {
		/* No heuristic fits: Checkmate's LP rounding, within half the time. */
		double until = req->deadline > 0 ? t0 + 0.5 * (req->deadline - t0)
			: remat_now() + WARM_LP_SECONDS;
		struct remat_progress pr = { "checkmate", "warm start: LP rounding", -1, NAN,
					     NAN, 0 };

		pr.elapsed = remat_now() - t0;
		remat_plan_progress(req, &pr);
		rc = remat_i_checkmate_lp_warm(req, cm, until, inc, have, err);
		if (rc == REMAT_OK && *have)
			cm->warm_from = "LP rounding";
	}
	remat_i_cm_sol_release(&w.tmp);
	return rc;
}

/*
 * A fast planner's schedule in another first-compute order can be cheaper
 * than anything the MILP found in its own order (or the MILP may have
 * found nothing in the time): then that schedule is returned, saying so.
 * The model's bound does not hold outside the model; the report keeps
 * only the bound every schedule obeys (each needed node computed once).
 */
static int prefer_fast(const struct remat_plan_request *req, int rc,
		       struct remat_i_best *fast, const char *fast_from,
		       struct remat_schedule *out, struct remat_error *err)
{
	struct remat_plan_report *rep = req->report;
	struct remat_sim_result res;
	char why[256];
	double floor;

	if (!fast->have || (rc != REMAT_OK && rc != REMAT_ENOFIT))
		return rc;
	if (rc == REMAT_OK) {
		REMAT_TRY(remat_simulate(req->graph, out, req->budget, NULL, &res, err));
		/* Strictly cheaper only: at equal cost the MILP's proof is worth more. */
		if (res.valid && res.peak_mem <= req->budget &&
		    fast->res.cost >= res.cost * (1 - 1e-12))
			return REMAT_OK;
		snprintf(why, sizeof(why), "%s's schedule: cheaper than the MILP's best, in "
			 "another first-compute order than the model's", fast_from);
	} else if (fast->res.cost <= remat_i_least_cost(req->graph) * (1 + 1e-12)) {
		snprintf(why, sizeof(why), "%s's schedule: it computes every needed node "
			 "once, so nothing is cheaper (the MILP was not needed)", fast_from);
	} else {
		/* Why the MILP gave none, where it fits in the note (not cut mid-word). */
		int n = snprintf(why, sizeof(why), "%s's schedule (another first-compute order "
				 "than the model's): %s", fast_from, err->msg);

		if (n < 0 || (size_t)n >= sizeof(why))
			snprintf(why, sizeof(why), "%s's schedule (another first-compute order "
				 "than the model's): the MILP found none in its order", fast_from);
	}
	remat_schedule_release(out);
	remat_schedule_init(out);
	REMAT_TRY(remat_i_best_take(fast, out, err));
	remat_error_clear(err);
	if (rep) {
		floor = remat_i_least_cost(req->graph);
		rep->lower_bound = floor;
		rep->gap = fast->res.cost > 0 ? (fast->res.cost - floor) / fast->res.cost : 0;
		if (rep->gap < 1e-9)
			rep->gap = 0;
		rep->optimal = rep->gap == 0;
		snprintf(rep->note, sizeof(rep->note), "%s", why);
	}
	return REMAT_OK;
}

static int checkmate_solve(const struct remat_plan_request *req,
			   struct remat_schedule *out, struct remat_error *err)
{
	struct remat_i_cm cm;
	struct remat_i_cm_sol inc;
	struct remat_i_cm_opts o;
	struct remat_i_best fast;
	const char *fast_from = NULL;
	int rc, have = 0;

	REMAT_TRY(remat_i_cm_opts_read(req, &o, err));
	REMAT_TRY(remat_i_cm_init(&cm, req->graph, req->budget, (int)o.max_computes, err));
	memset(&inc, 0, sizeof(inc));
	remat_i_best_init(&fast);
	rc = remat_i_cm_check_size(&cm, err);
	if (rc == REMAT_OK)
		rc = remat_i_cm_sol_init(&cm, &inc, err);
	if (rc == REMAT_OK && o.warm)
		rc = warm_start(req, &cm, &inc, &have, &fast, &fast_from, err);
	/* A fast schedule that computes every needed node once is optimal. */
	if (rc == REMAT_OK && fast.have &&
	    fast.res.cost <= remat_i_least_cost(req->graph) * (1 + 1e-12))
		rc = REMAT_ENOFIT; /* skip the MILP: prefer_fast takes it */
	else if (rc == REMAT_OK)
		rc = remat_i_cm_solve(req, &cm, &o, &inc, have, out, err);
	rc = prefer_fast(req, rc, &fast, fast_from, out, err);
	remat_i_best_release(&fast);
	remat_i_cm_sol_release(&inc);
	remat_i_cm_release(&cm);
	return rc;
}

/* The MILP's bound holds in its order; the report's, in every order. */
static int checkmate_plan(const struct remat_plan_request *req,
			  struct remat_schedule *out, struct remat_error *err)
{
	int rc = checkmate_solve(req, out, err);

	if (rc == REMAT_OK)
		rc = remat_i_report_every_order(req, out, err);
	return rc;
}

const struct remat_planner remat_i_planner_checkmate = {
	.name = "checkmate",
	.summary = "exact: Checkmate's MILP (CBC or GLPK) in the topological order, warm-started",
	.flags = REMAT_PLANNER_EXACT | REMAT_PLANNER_BOUNDS,
	.options = checkmate_options,
	.plan = checkmate_plan,
};
