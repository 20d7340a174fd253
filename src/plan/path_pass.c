/*
 * path_pass.c - planning with the path bound's model; see path_pass.h.
 *
 * unet-d4 at 50% (issue 32): CBC proves the model's optimum, +19.44%,
 * in about 20 s, and the order of that point fits the budget: the
 * optimum in every order, where LNS and the whole Checkmate MILP stopped
 * at +21.62%.  Started from auto's schedule (every schedule is a point
 * of the model, at no more than its cost), CBC has an incumbent at once
 * and its tree closes sooner: vgg-unet-train at 40%, +13.27% to the
 * proven +13.11% in 78 s, where without a start it proved only its root
 * (+11.00%) in 120 s.
 *
 * A point's schedule is its order, with frees where each value instance
 * is read last (an output's earlier instances too).  When that goes over
 * the budget (the memory of a stage's recomputations, which the model
 * does not count), the Belady replay (evict_replay.h) may still bring it
 * within at some more cost; and where time is left, the stages that go
 * over are tightened (remat_i_path_tighten: every value resident at any
 * step of the stage counted at once) and the model solved again.  On
 * unet-d5 at 50% the model's optimum, +18.52%, goes over the budget in
 * one stage (75.76 of 73.79 MB); tightened there, CBC found +18.73%,
 * which fits (a scratch driver, 45 s per round), where auto's plan
 * was +18.94%.  Tried and not kept: windows of the model
 * (all columns fixed at the incumbent but those of some consecutive
 * stages, or of the values resident at one moment), solved in turn:
 * on vgg-unet-train at 40% none improved auto's +13.27%, and those of
 * the second kind took CBC as long as the whole model.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "remat/sim.h"
#include "plan/evict_replay.h"
#include "plan/path_model.h"
#include "plan/path_pass.h"

/* *ok: s fits the budget (valid and within it). */
static int fits(const struct remat_plan_request *req, const struct remat_schedule *s, int *ok,
		struct remat_error *err)
{
	struct remat_sim_result r;

	*ok = 0;
	REMAT_TRY(remat_simulate(req->graph, s, req->budget, NULL, &r, err));
	*ok = r.valid && r.feasible;
	return REMAT_OK;
}

/* The order of point x into out; *ok: it fits the budget. */
static int order_of(const struct remat_plan_request *req, const struct remat_i_path *p,
		    const double *x, struct remat_schedule *out, int *ok, struct remat_error *err)
{
	*ok = 0;
	REMAT_TRY(remat_i_path_order(p, x, out, err));
	return fits(req, out, ok, err);
}

/*
 * The Belady replay of an order that goes over the budget (inside a
 * stage: the replay may evict there) into out; *cost its cost in the
 * model's units when it fits, else HUGE_VAL.
 */
static int replay(const struct remat_plan_request *req, const struct remat_i_path *p,
		  const struct remat_schedule *order, struct remat_schedule *out, double *cost,
		  struct remat_error *err)
{
	struct remat_sim_result r;
	struct remat_error e;

	*cost = HUGE_VAL;
	remat_error_clear(&e);
	if (remat_i_evict_replay(req->graph, order, req->budget, 16 * order->n + 1024, req, out,
				 &e) != REMAT_OK)
		return REMAT_OK;
	REMAT_TRY(remat_simulate(req->graph, out, req->budget, NULL, &r, err));
	if (r.valid && r.feasible)
		*cost = (r.cost - p->floor) / p->unit;
	return REMAT_OK;
}

/*
 * The stages in which order (a point's) goes over the budget, tightened
 * (remat_i_path_tighten); *n how many were not tight yet.
 */
static int tighten_over(const struct remat_plan_request *req, struct remat_i_path *p,
			const struct remat_schedule *order, int32_t *n, struct remat_error *err)
{
	struct remat_sim_result r;
	int64_t *mem = malloc(sizeof(int64_t) * ((size_t)order->n + 1)), i;
	int32_t t = 0;
	int rc;

	*n = 0;
	if (!mem)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the path pass");
	rc = remat_simulate(req->graph, order, req->budget, mem, &r, err);
	for (i = 0; rc == REMAT_OK && r.valid && i < order->n; i++) {
		if (order->steps[i].op != REMAT_OP_COMPUTE)
			continue;
		if (mem[i] > req->budget && !p->tight[t]) {
			rc = remat_i_path_tighten(p, t, err);
			++*n;
		}
		if (t < p->T && order->steps[i].node == p->sigma[t])
			t++;
	}
	free(mem);
	return rc;
}

/* x (grown to the model's columns) as start's point; its value, or HUGE_VAL. */
static int start_point(const struct remat_i_path *p, const struct remat_schedule *start,
		       double **x, double *xval, struct remat_error *err)
{
	double *a = realloc(*x, sizeof(double) * ((size_t)p->m.ncols + 1));
	struct remat_error e;

	*xval = HUGE_VAL;
	if (!a)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the path pass");
	*x = a;
	/* A schedule off the path's order, or a point CBC might refuse: no start. */
	remat_error_clear(&e);
	if (start && remat_i_path_point(p, start, a, &e) == REMAT_OK) {
		remat_i_path_extend(p, a);
		if (remat_i_milp_check(&p->m, a, 1e-9, NULL) == -1)
			*xval = remat_i_milp_value(&p->m, a);
	}
	return REMAT_OK;
}

int remat_i_path_pass(const struct remat_plan_request *req, const struct remat_schedule *start,
		      double deadline, struct remat_schedule *out,
		      struct remat_i_path_result *res, struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_i_milp_result mr;
	struct remat_i_path p;
	enum remat_i_path_state state;
	struct remat_schedule cand, again;
	const struct remat_schedule *from = start;
	double *x = NULL, bound, xval, best = HUGE_VAL, cost, t0 = remat_now();
	int rc, ok, tight = 0;
	int32_t over;

	memset(res, 0, sizeof(*res));
	res->bound = res->model_cost = NAN;
	remat_schedule_clear(out);
	remat_i_milp_result_init(&mr);
	remat_schedule_init(&cand);
	remat_schedule_init(&again);
	if (req->deadline > 0 && (deadline <= 0 || deadline > req->deadline))
		deadline = req->deadline;
	rc = remat_i_path_build(&p, g, req->budget, &state, NULL, err);
	if (rc || state != REMAT_I_PATH_BUILT || (deadline > 0 && remat_now() >= deadline))
		goto out;
	/*
	 * Rounds.  The whole model first, until the deadline: its bound holds.
	 * When its best point's order goes over the budget and time is left
	 * (CBC proved the point optimal early), the stages where the order
	 * goes over are tightened and the model solved again, from the best
	 * schedule so far: it then plans, it no longer bounds.  best: that
	 * schedule's cost in the model's units.
	 */
	for (;;) {
		rc = start_point(&p, from, &x, &xval, err);
		if (rc)
			goto out;
		if (from == start)
			best = fmin(best, xval);
		rc = remat_i_path_solve(&p, deadline, req->stop, isfinite(xval) ? x : NULL, &mr,
					&bound, err);
		if (rc)
			goto out;
		res->tried = 1;
		if (!tight && !(res->bound >= bound))
			res->bound = bound;
		/* Nothing cheaper: the same model from the same start would search the same tree. */
		if (!mr.x || (mr.status != REMAT_I_MILP_OPTIMAL &&
			      mr.status != REMAT_I_MILP_FEASIBLE) || mr.obj >= best - 1e-6)
			break;
		rc = order_of(req, &p, mr.x, &cand, &ok, err);
		if (rc)
			goto out;
		if (ok) {
			best = mr.obj;
			remat_schedule_swap(out, &cand);
			from = out;
			res->found = 1;
			/* The schedule's point is the whole model's proven optimum. */
			res->optimal = !tight && mr.status == REMAT_I_MILP_OPTIMAL;
			if (mr.status == REMAT_I_MILP_OPTIMAL)
				break;
		} else {
			rc = replay(req, &p, &cand, &again, &cost, err);
			if (rc)
				goto out;
			if (cost < best - 1e-6) {
				best = cost;
				remat_schedule_swap(out, &again);
				from = out;
				res->found = 1;
			}
			rc = tighten_over(req, &p, &cand, &over, err);
			if (rc || !over)
				goto out;
			tight = 1;
		}
		/* (Without a deadline the rounds end too: each tightens a stage more.) */
		if ((deadline > 0 && remat_now() >= deadline - 0.1) || (req->stop && *req->stop))
			break;
		remat_i_milp_result_release(&mr);
		remat_i_milp_result_init(&mr);
	}
out:
	if (res->found)
		res->model_cost = p.floor + best * p.unit;
	res->seconds = remat_now() - t0;
	remat_schedule_release(&cand);
	remat_schedule_release(&again);
	remat_i_milp_result_release(&mr);
	remat_i_path_release(&p);
	free(x);
	return rc;
}
