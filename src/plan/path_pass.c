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
 * A point's schedule is its order; when that goes over the budget (the
 * memory of a stage's recomputations), the Belady replay (evict_replay.h)
 * may still bring it within at some more cost; a point whose schedule
 * does not fit is not taken.  Tried and not kept: windows of the model
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

/*
 * The schedule of point x into out (*ok: within the budget): the point's
 * order, or where it goes over the budget, its Belady replay.
 */
static int realise(const struct remat_plan_request *req, const struct remat_i_path *p,
		   const double *x, struct remat_schedule *out, int *ok, struct remat_error *err)
{
	struct remat_schedule order, replayed;
	struct remat_error e;
	int rc;

	*ok = 0;
	remat_schedule_init(&order);
	remat_schedule_init(&replayed);
	rc = remat_i_path_order(p, x, &order, err);
	if (rc == REMAT_OK)
		rc = fits(req, &order, ok, err);
	if (rc == REMAT_OK && !*ok) {
		/* Over the budget inside a stage: the replay may evict there. */
		remat_error_clear(&e);
		if (remat_i_evict_replay(req->graph, &order, req->budget, 16 * order.n + 1024, req,
					 &replayed, &e) == REMAT_OK) {
			rc = fits(req, &replayed, ok, err);
			remat_schedule_swap(&order, &replayed);
		}
	}
	if (rc == REMAT_OK && *ok)
		remat_schedule_swap(out, &order);
	remat_schedule_release(&order);
	remat_schedule_release(&replayed);
	return rc;
}

int remat_i_path_pass(const struct remat_plan_request *req, const struct remat_schedule *start,
		      double deadline, struct remat_schedule *out,
		      struct remat_i_path_result *res, struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_i_milp_result mr;
	struct remat_i_path p;
	enum remat_i_path_state state;
	struct remat_schedule cand;
	struct remat_error e;
	double *x = NULL, bound, xval = HUGE_VAL, t0 = remat_now();
	int rc, ok, found = 0;

	memset(res, 0, sizeof(*res));
	res->bound = res->model_cost = NAN;
	remat_schedule_clear(out);
	remat_i_milp_result_init(&mr);
	remat_schedule_init(&cand);
	if (req->deadline > 0 && (deadline <= 0 || deadline > req->deadline))
		deadline = req->deadline;
	rc = remat_i_path_build(&p, g, req->budget, &state, NULL, err);
	if (rc || state != REMAT_I_PATH_BUILT || (deadline > 0 && remat_now() >= deadline))
		goto out;
	x = malloc(sizeof(double) * ((size_t)p.m.ncols + 1));
	if (!x) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the path pass");
		goto out;
	}
	/* A schedule off the path's order, or a point CBC might refuse: no start. */
	remat_error_clear(&e);
	if (start && remat_i_path_point(&p, start, x, &e) == REMAT_OK &&
	    remat_i_milp_check(&p.m, x, 1e-9, NULL) == -1)
		xval = remat_i_milp_value(&p.m, x);
	rc = remat_i_path_solve(&p, deadline, req->stop, isfinite(xval) ? x : NULL, &mr, &bound,
				err);
	if (rc)
		goto out;
	res->tried = 1;
	res->bound = bound;
	if (mr.x && (mr.status == REMAT_I_MILP_OPTIMAL || mr.status == REMAT_I_MILP_FEASIBLE) &&
	    mr.obj < xval - 1e-6) {
		rc = realise(req, &p, mr.x, &cand, &ok, err);
		if (rc)
			goto out;
		if (ok) {
			xval = mr.obj;
			remat_schedule_swap(out, &cand);
			found = 1;
		}
	}
	if (found)
		res->model_cost = p.floor + xval * p.unit;
	/* The schedule's point is the model's proven optimum. */
	res->optimal = found && mr.status == REMAT_I_MILP_OPTIMAL && xval <= mr.obj + 1e-6;
	res->found = found;
out:
	res->seconds = remat_now() - t0;
	remat_schedule_release(&cand);
	remat_i_milp_result_release(&mr);
	remat_i_path_release(&p);
	free(x);
	return rc;
}
