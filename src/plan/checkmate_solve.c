/*
 * checkmate_solve.c - solving the Checkmate MILP (checkmate_model.h) for
 * a request: options, warm start check, the solver run with progress and
 * a hard deadline, rounding back to an exact point, and the report.
 * Shared by the checkmate planner (src/planners/checkmate.c, which
 * describes the method step by step) and auto's hand-over.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/planner.h"
#include "plan/checkmate_model.h"

/* Largest model built at all (columns), to fail early instead of thrashing. */
#define CM_MAX_COLS 4000000

int remat_i_cm_opts_read(const struct remat_plan_request *req, struct remat_i_cm_opts *o,
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
	/* Stop within 0.01% of the bound, as auto and lns do (issue 30). */
	REMAT_TRY(remat_opt_double(req, "gap", 1e-4, 0, 1, &o->gap, err));
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
	double unit;       /* the objective's unit (remat_i_cm.cost_unit) */
};

static void on_progress(void *ctx, double inc, double bound)
{
	struct progress_ctx *pc = ctx;
	struct remat_progress p = { "checkmate", "solve", -1, NAN, NAN, 0 };

	inc *= pc->unit;
	bound *= pc->unit;
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
int remat_i_cm_solve(const struct remat_plan_request *req, struct remat_i_cm *cm,
		       const struct remat_i_cm_opts *o, struct remat_i_cm_sol *inc, int have_inc,
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
	int rc, have_sol = 0, from_milp = 0;

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
			 "large; %s%s%s", (long long)cols, have_inc ? "the warm start (" : "try checkmate-lp",
			 have_inc ? (cm->warm_from ? cm->warm_from : "the incumbent") : "",
			 have_inc ? "'s schedule)" : "");
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
	mo.hard = req->deadline;
	mo.stop = req->stop;
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
	pc.unit = cm->cost_unit;
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
		lb = fmax(lb, mr.bound * cm->cost_unit);
	if (mr.status == REMAT_I_MILP_INFEASIBLE && !have_inc) {
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "no schedule of Checkmate's model fits the "
				"budget in its order (the MILP is infeasible; the model computes "
				"within each stage in topological order, so a schedule outside it "
				"may still fit: try auto or another --order)");
		goto done;
	}
	if (have_sol && (!have_inc || remat_i_cm_sol_better(&sol, inc))) {
		rc = remat_i_cm_sol_copy(cm, inc, &sol, err);
		if (rc)
			goto done;
		have_inc = 1;
		from_milp = 1;
	}
	if (!have_inc) {
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "%s", mr.stopped ?
				"the time limit came before the MILP found a schedule" :
				"the MILP found no schedule within the budget");
		goto done;
	}
	if (!from_milp && !note[0]) {
		/* Say that the schedule is the warm start, whose, and why. */
		snprintf(note, sizeof(note), "the warm start (%s's schedule): the MILP %s",
			 cm->warm_from ? cm->warm_from : "the incumbent",
			 mr.status == REMAT_I_MILP_OPTIMAL ? "proved nothing is cheaper in its order" :
			 req->stop && *req->stop ? "was interrupted before it found a cheaper one" :
			 mr.stopped ? "found nothing cheaper before the time limit" :
			 "found nothing cheaper");
	} else if (mr.stopped && !note[0]) {
		snprintf(note, sizeof(note), "%s", req->stop && *req->stop ?
			 "interrupted: the best schedule so far, not proven optimal" :
			 "stopped by the time limit");
	} else if (!note[0] && have_inc && lb >= inc->cost * (1 - 1e-9)) {
		/* The report's bound holds in every order; say what this one holds in. */
		snprintf(note, sizeof(note), "the MILP's schedule: it proved nothing is cheaper "
			 "in its order");
	}
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

int remat_i_cm_check_size(const struct remat_i_cm *cm, struct remat_error *err)
{
	if (cm->T <= REMAT_I_CM_MAX_T)
		return REMAT_OK;
	return REMAT_FAIL(err, REMAT_ENOFIT, "%d nodes to compute: too many for the MILP "
			  "(at most %d); use another planner", cm->T, REMAT_I_CM_MAX_T);
}

int remat_i_cm_over_cap(const struct remat_i_cm *cm, const struct remat_schedule *sched)
{
	int32_t *n;
	int64_t i;
	int over = 0;

	if (cm->max_computes <= 0)
		return 0;
	n = calloc((size_t)cm->g->n + 1, sizeof(*n));
	if (!n)
		return 1;
	for (i = 0; i < sched->n && !over; i++)
		if (sched->steps[i].op == REMAT_OP_COMPUTE && sched->steps[i].node >= 0 &&
		    sched->steps[i].node < cm->g->n)
			over = ++n[sched->steps[i].node] > cm->max_computes;
	free(n);
	return over;
}

/* Map sched into the model; keep it in best when it fits and is better. */
int remat_i_cm_offer(const struct remat_i_cm *cm, const struct remat_schedule *sched,
		 struct remat_i_cm_sol *tmp, struct remat_i_cm_sol *best, int *have,
		 struct remat_error *err)
{
	struct remat_error e;
	int rc;

	/* --max-computes: a schedule over the cap is no start (a fast planner's). */
	if (remat_i_cm_over_cap(cm, sched))
		return REMAT_OK;
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

int remat_i_checkmate_improve(const struct remat_plan_request *req,
			      const struct remat_schedule *incumbent,
			      struct remat_schedule *out, struct remat_error *err)
{
	return remat_i_checkmate_improve_lp(req, incumbent, 0, out, err);
}

int remat_i_checkmate_improve_lp(const struct remat_plan_request *req,
				 const struct remat_schedule *incumbent, double lp_until,
				 struct remat_schedule *out, struct remat_error *err)
{
	struct remat_i_cm cm;
	struct remat_i_cm_sol inc, tmp;
	struct remat_i_cm_opts o;
	int rc, have = 0;

	REMAT_TRY(remat_i_cm_opts_read(req, &o, err));
	REMAT_TRY(remat_i_cm_init(&cm, req->graph, req->budget, (int)o.max_computes, err));
	memset(&tmp, 0, sizeof(tmp));
	memset(&inc, 0, sizeof(inc));
	rc = remat_i_cm_check_size(&cm, err);
	if (rc == REMAT_OK)
		rc = remat_i_cm_sol_init(&cm, &inc, err);
	if (rc == REMAT_OK)
		rc = remat_i_cm_sol_init(&cm, &tmp, err);
	if (rc == REMAT_OK && incumbent)
		rc = remat_i_cm_offer(&cm, incumbent, &tmp, &inc, &have, err);
	if (rc == REMAT_OK && !have && lp_until > 0)
		rc = remat_i_checkmate_lp_warm(req, &cm, lp_until, &inc, &have, err);
	if (rc == REMAT_OK)
		rc = remat_i_cm_solve(req, &cm, &o, &inc, have, out, err);
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

