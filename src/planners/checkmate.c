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
 *    none fits, round the LP relaxation as checkmate-lp does.  When the
 *    warm start costs what computing every needed node once costs, stop:
 *    it is optimal.
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
#include "planners/checkmate.h"
#include "plan/checkmate_model.h"
#include "plan/best.h"

extern const struct remat_planner remat_i_planner_auto;
extern const struct remat_planner remat_i_planner_checkmate;

/* Largest model built at all (columns), to fail early instead of thrashing. */
#define CM_MAX_COLS 4000000
/* Without --time-limit, an LP rounding warm start must fit in this. */
#define WARM_LP_SECONDS 30.0

static const struct remat_planner_option checkmate_options[] = {
	{ "solver", "NAME", "MILP solver: cbc or glpk (default cbc: it proves more)" },
	{ "warm-start", "on|off",
	  "start from the cheapest fast planner's schedule that maps into the model, "
	  "else from the LP rounding (default on)" },
	{ "max-computes", "C", "compute each node at most C times (default 0: no cap)" },
	{ "gap", "G", "stop at relative optimality gap G (default 0: prove optimality)" },
	{ "free-rows", "split|hazard",
	  "FREE rows: one per hazard (default) or Checkmate's hazard count" },
	{ NULL, NULL, NULL }
};

struct cm_opts {
	int backend;
	int warm;
	long max_computes;
	double gap;
	int hazard_rows;
};

static int read_opts(const struct remat_plan_request *req, struct cm_opts *o,
		     struct remat_error *err)
{
	const char *s = remat_opt_get(req, "solver");
	const char *w = remat_opt_get(req, "warm-start");

	o->backend = REMAT_I_MILP_CBC;
	if (s && (o->backend = remat_i_milp_backend_parse(s)) < 0)
		return REMAT_FAIL(err, REMAT_EUSAGE,
				  "option '--solver': expected 'cbc' or 'glpk', got '%s'", s);
	o->warm = 1;
	if (w && strcmp(w, "on") != 0 && strcmp(w, "off") != 0)
		return REMAT_FAIL(err, REMAT_EUSAGE,
				  "option '--warm-start': expected 'on' or 'off', got '%s'", w);
	if (w && strcmp(w, "off") == 0)
		o->warm = 0;
	REMAT_TRY(remat_opt_int(req, "max-computes", 0, 0, 1000000, &o->max_computes, err));
	REMAT_TRY(remat_opt_double(req, "gap", 0, 0, 1, &o->gap, err));
	w = remat_opt_get(req, "free-rows");
	if (w && strcmp(w, "split") != 0 && strcmp(w, "hazard") != 0)
		return REMAT_FAIL(err, REMAT_EUSAGE,
				  "option '--free-rows': expected 'split' or 'hazard', got '%s'", w);
	o->hazard_rows = w && strcmp(w, "hazard") == 0;
	return REMAT_OK;
}

struct progress_ctx {
	const struct remat_plan_request *req;
	double t0;
	double incumbent;  /* the warm start's cost, NaN when none */
	double floor;      /* least cost: every model node once */
};

static void on_progress(void *ctx, double inc, double bound)
{
	struct progress_ctx *pc = ctx;
	struct remat_progress p = { "checkmate", "solve", -1, NAN, NAN, 0 };

	p.incumbent = inc;
	if (!isnan(pc->incumbent) && (isnan(inc) || pc->incumbent < inc))
		p.incumbent = pc->incumbent;
	p.bound = isnan(bound) || bound < pc->floor ? pc->floor : bound;
	p.elapsed = remat_now() - pc->t0;
	remat_plan_progress(pc->req, &p);
}

static void set_report(const struct remat_plan_request *req, double cost, double lb,
		       const char *note)
{
	struct remat_plan_report *r = req->report;

	if (!r)
		return;
	if (lb > cost)
		lb = cost; /* float noise from the solver's bound */
	r->lower_bound = lb;
	r->gap = cost > 0 ? (cost - lb) / cost : 0;
	if (r->gap < 1e-9)
		r->gap = 0;
	r->optimal = r->gap == 0;
	if (note && note[0])
		snprintf(r->note, sizeof(r->note), "%s", note);
}

/*
 * The deadline handed to the solver: earlier than the request's by what
 * CBC cannot interrupt (its preprocessing and root LP, about 5 us per
 * nonzero on this machine, plus rounding and simulation afterwards),
 * but never by more than half the time left.
 */
static double solver_deadline(const struct remat_plan_request *req, int64_t nnz)
{
	double left, margin;

	if (req->deadline <= 0)
		return 0;
	left = req->deadline - remat_now();
	margin = fmin(0.5 * fmax(left, 0), 0.1 + 5e-6 * (double)nnz);
	return req->deadline - margin;
}

/*
 * Steps 2 to 6 on a prepared model, with the incumbent inc (have_inc).
 * out receives the schedule of the best point.
 */
static int solve_model(const struct remat_plan_request *req, struct remat_i_cm *cm,
		       const struct cm_opts *o, struct remat_i_cm_sol *inc, int have_inc,
		       struct remat_schedule *out, struct remat_error *err)
{
	struct remat_i_milp_opts mo;
	struct remat_i_milp_result mr;
	struct remat_i_cm_sol sol;
	struct progress_ctx pc;
	double *x = NULL, lb = cm->least_cost, t0 = remat_now();
	int64_t cols, nnz, bad;
	const char *why;
	char note[256] = "";
	int rc, have_sol = 0;

	remat_i_milp_result_init(&mr);
	memset(&sol, 0, sizeof(sol));
	if (cm->T == 0) {
		/* Every output is an input: nothing to compute, nothing to solve. */
		REMAT_TRY(remat_i_cm_normalize(cm, inc, err));
		have_inc = 1;
	}
	if (have_inc && inc->cost <= cm->least_cost * (1 + 1e-12)) {
		/* Nothing is cheaper than computing every needed node once. */
		rc = remat_i_cm_schedule(cm, inc, out, err);
		if (rc == REMAT_OK)
			set_report(req, inc->cost, cm->least_cost, "");
		return rc;
	}
	remat_i_cm_estimate(cm, &cols, &nnz);
	if (cols > CM_MAX_COLS) {
		snprintf(note, sizeof(note), "the MILP would have about %lld columns: too "
			 "large; try checkmate-lp", (long long)cols);
		if (!have_inc)
			return REMAT_FAIL(err, REMAT_ENOFIT, "%s", note);
		goto finish;
	}
	cm->hazard_rows = o->hazard_rows;
	REMAT_TRY(remat_i_cm_build(cm, err));
	rc = remat_i_cm_sol_init(cm, &sol, err);
	if (rc)
		goto done;
	memset(&mo, 0, sizeof(mo));
	mo.deadline = solver_deadline(req, cm->lp.nnz);
	mo.gap = o->gap;
	if (have_inc) {
		double excess;

		x = calloc((size_t)cm->lp.ncols + 1, sizeof(double));
		if (!x) {
			rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
			goto done;
		}
		remat_i_cm_to_x(cm, inc, x);
		bad = remat_i_milp_check(&cm->lp, x, 1e-9, &excess);
		if (bad != -1) {
			rc = REMAT_FAIL(err, REMAT_EINTERNAL, "checkmate: the warm start violates "
					"%s %lld of the MILP by %g", bad >= 0 ? "row" : "column",
					(long long)(bad >= 0 ? bad : -2 - bad), excess);
			goto done;
		}
		mo.start = x;
	}
	pc.req = req;
	pc.t0 = t0;
	pc.incumbent = have_inc ? inc->cost : NAN;
	pc.floor = cm->least_cost;
	mo.progress = req->progress ? on_progress : NULL;
	mo.progress_ctx = &pc;
	/* CBC reports nothing while it runs (milp_cbc.c): say where we start. */
	on_progress(&pc, NAN, NAN);
	rc = remat_i_milp_solve(o->backend, &cm->lp, &mo, &mr, err);
	if (rc)
		goto done;
	if (mr.x) {
		remat_i_cm_from_x(cm, mr.x, &sol);
		why = remat_i_cm_complete(cm, &sol);
		if (!why) {
			/* Drop what nothing reads: never costlier, never higher. */
			rc = remat_i_cm_normalize(cm, &sol, err);
			if (rc)
				goto done;
		}
		if (why) {
			snprintf(note, sizeof(note), "the solver's solution breaks the model "
				 "after rounding (%s)", why);
		} else if (sol.peak > cm->budget) {
			snprintf(note, sizeof(note), "the solver's solution is over budget by "
				 "%lld bytes after rounding", (long long)((sol.peak - cm->budget) *
									  cm->unit));
		} else {
			have_sol = 1;
		}
	}
	if (mr.status == REMAT_I_MILP_OPTIMAL && o->gap == 0 && have_sol)
		lb = fmax(lb, sol.cost);
	else if (!isnan(mr.bound))
		lb = fmax(lb, mr.bound);
	if (mr.status == REMAT_I_MILP_INFEASIBLE && !have_inc) {
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "no schedule in the model's order fits "
				"the budget (the MILP is infeasible)");
		goto done;
	}
	if (have_sol && (!have_inc || remat_i_cm_sol_better(&sol, inc))) {
		rc = remat_i_cm_sol_copy(cm, inc, &sol, err);
		if (rc)
			goto done;
		have_inc = 1;
	}
	if (!have_inc) {
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "%s", mr.stopped ?
				"the time limit came before the MILP found a schedule" :
				"the MILP found no schedule within the budget");
		goto done;
	}
	if (mr.stopped && !note[0])
		snprintf(note, sizeof(note), "stopped by the time limit");
finish:
	rc = remat_i_cm_schedule(cm, inc, out, err);
	if (rc == REMAT_OK)
		set_report(req, inc->cost, lb, note);
done:
	free(x);
	remat_i_cm_sol_release(&sol);
	remat_i_milp_result_release(&mr);
	return rc;
}

static int too_large(const struct remat_i_cm *cm, struct remat_error *err)
{
	if (cm->T <= REMAT_I_CM_MAX_T)
		return REMAT_OK;
	return REMAT_FAIL(err, REMAT_ENOFIT, "%d nodes to compute: too many for the MILP "
			  "(at most %d); use another planner", cm->T, REMAT_I_CM_MAX_T);
}

/* Map sched into the model; keep it in best when it fits and is better. */
static int offer(const struct remat_i_cm *cm, const struct remat_schedule *sched,
		 struct remat_i_cm_sol *tmp, struct remat_i_cm_sol *best, int *have,
		 struct remat_error *err)
{
	struct remat_error e;
	int rc;

	remat_error_clear(&e);
	rc = remat_i_cm_map(cm, sched, tmp, &e);
	if (rc == REMAT_ENOFIT)
		return REMAT_OK; /* another order: not a warm start */
	if (rc) {
		*err = e;
		return rc;
	}
	if (tmp->peak > cm->budget || (*have && !remat_i_cm_sol_better(tmp, best)))
		return REMAT_OK;
	REMAT_TRY(remat_i_cm_sol_copy(cm, best, tmp, err));
	*have = 1;
	return REMAT_OK;
}

/*
 * Step 1: the fast planners' schedules, within a quarter of the time;
 * if none fits, the LP rounding.
 */
static int warm_start(const struct remat_plan_request *req, const struct remat_i_cm *cm,
		      struct remat_i_cm_sol *inc, int *have, struct remat_error *err)
{
	const struct remat_planner *const *pp;
	struct remat_i_cm_sol tmp;
	struct remat_schedule cand;
	struct remat_plan_request sub = *req;
	struct remat_plan_report rep;
	double t0 = remat_now();
	int rc = REMAT_OK;

	REMAT_TRY(remat_i_cm_sol_init(cm, &tmp, err));
	remat_schedule_init(&cand);
	sub.options = NULL;
	sub.n_options = 0;
	sub.report = &rep;
	sub.progress = NULL;
	if (req->deadline > 0)
		sub.deadline = t0 + 0.25 * (req->deadline - t0);
	for (pp = remat_planner_list(); *pp; pp++) {
		const struct remat_planner *p = *pp;
		struct remat_sim_result r;
		struct remat_error e;
		struct remat_progress pr = { "checkmate", "warm start", -1, NAN, NAN, 0 };
		int prc;

		if (p == &remat_i_planner_auto || p == &remat_i_planner_checkmate ||
		    !(p->flags & REMAT_PLANNER_AUTO))
			continue;
		if (remat_plan_expired(&sub))
			break;
		pr.phase = p->name;
		pr.incumbent = *have ? inc->cost : NAN;
		pr.elapsed = remat_now() - t0;
		remat_plan_progress(req, &pr);
		remat_plan_report_init(&rep);
		remat_error_clear(&e);
		prc = remat_plan_run(p, &sub, &cand, &r, &e);
		if (prc)
			continue; /* no schedule, or a failing planner: not a warm start */
		rc = offer(cm, &cand, &tmp, inc, have, err);
		if (rc)
			break;
	}
	if (rc == REMAT_OK && !*have) {
		/* No heuristic fits: Checkmate's LP rounding, within half the time. */
		double until = req->deadline > 0 ? t0 + 0.5 * (req->deadline - t0)
			: remat_now() + WARM_LP_SECONDS;
		struct remat_progress pr = { "checkmate", "warm start: LP rounding", -1, NAN,
					     NAN, 0 };

		pr.elapsed = remat_now() - t0;
		remat_plan_progress(req, &pr);
		rc = remat_i_checkmate_lp_warm(req, cm, until, inc, have, err);
	}
	remat_schedule_release(&cand);
	remat_i_cm_sol_release(&tmp);
	return rc;
}

static int checkmate_solve(const struct remat_plan_request *req,
			   struct remat_schedule *out, struct remat_error *err)
{
	struct remat_i_cm cm;
	struct remat_i_cm_sol inc;
	struct cm_opts o;
	int rc, have = 0;

	REMAT_TRY(read_opts(req, &o, err));
	REMAT_TRY(remat_i_cm_init(&cm, req->graph, req->budget, (int)o.max_computes, err));
	memset(&inc, 0, sizeof(inc));
	rc = too_large(&cm, err);
	if (rc == REMAT_OK)
		rc = remat_i_cm_sol_init(&cm, &inc, err);
	if (rc == REMAT_OK && o.warm)
		rc = warm_start(req, &cm, &inc, &have, err);
	if (rc == REMAT_OK)
		rc = solve_model(req, &cm, &o, &inc, have, out, err);
	remat_i_cm_sol_release(&inc);
	remat_i_cm_release(&cm);
	return rc;
}

static int checkmate_plan(const struct remat_plan_request *req,
			  struct remat_schedule *out, struct remat_error *err)
{
	return checkmate_solve(req, out, err);
}

int remat_i_checkmate_improve(const struct remat_plan_request *req,
			      const struct remat_schedule *incumbent,
			      struct remat_schedule *out, struct remat_error *err)
{
	struct remat_i_cm cm;
	struct remat_i_cm_sol inc, tmp;
	struct cm_opts o;
	int rc, have = 0;

	REMAT_TRY(read_opts(req, &o, err));
	REMAT_TRY(remat_i_cm_init(&cm, req->graph, req->budget, (int)o.max_computes, err));
	memset(&tmp, 0, sizeof(tmp));
	memset(&inc, 0, sizeof(inc));
	rc = too_large(&cm, err);
	if (rc == REMAT_OK)
		rc = remat_i_cm_sol_init(&cm, &inc, err);
	if (rc == REMAT_OK)
		rc = remat_i_cm_sol_init(&cm, &tmp, err);
	if (rc == REMAT_OK && incumbent)
		rc = offer(&cm, incumbent, &tmp, &inc, &have, err);
	if (rc == REMAT_OK)
		rc = solve_model(req, &cm, &o, &inc, have, out, err);
	remat_i_cm_sol_release(&tmp);
	remat_i_cm_sol_release(&inc);
	remat_i_cm_release(&cm);
	return rc;
}

int remat_i_checkmate_auto_fits(const struct remat_graph *g, double time_left)
{
	/*
	 * CBC proves 66-node training chains optimal in about a second; at
	 * 100 nodes (random-layered-n100) it needs tens of seconds or does
	 * not finish in a minute (bench/RESULTS.md).  Larger graphs are left
	 * to the heuristics.
	 */
	if (time_left > 0 && time_left < 0.5)
		return 0;
	return g->n - g->n_inputs <= 100;
}

const struct remat_planner remat_i_planner_checkmate = {
	.name = "checkmate",
	.summary = "exact: Checkmate's MILP (CBC or GLPK) in the topological order, warm-started",
	.flags = REMAT_PLANNER_EXACT,
	.options = checkmate_options,
	.plan = checkmate_plan,
};
