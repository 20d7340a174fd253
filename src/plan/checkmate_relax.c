/*
 * checkmate_relax.c - the LP relaxation of the Checkmate model and
 * Checkmate's two-phase rounding (Jain et al., MLSys 2020, section 5),
 * shared by the checkmate-lp planner (src/planners/checkmate_lp.c, which
 * describes the steps), the checkmate planner's warm start, and the LP
 * lower bound of remat/bound.h (`remat info --budget`).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/bound.h"
#include "remat/planner.h"
#include "core/rand.h"
#include "analysis/needed.h"
#include "plan/best.h"
#include "plan/checkmate_model.h"

/* LPs beyond this many columns are not attempted. */
#define LP_MAX_COLS 3000000

/*
 * Seconds Clp needs for the relaxation, from the model's nonzeros: fitted
 * on this machine (2-core x86_64) to FCN8 (1e5 nonzeros, 0.6 s),
 * MobileNet (6.6e5, 11 s), random-layered-n250 (1.9e6, 86 s) and
 * ResNet50 (2.5e6, 112 s) training graphs, rounded up.  Clp cannot be
 * stopped from outside, so an LP that would outlast the time limit is
 * not started.
 */
static double lp_seconds(int64_t nnz)
{
	double r = (double)nnz / 2e5;

	return 1e-5 * (double)nnz * pow(r > 1 ? r : 1, 0.7);
}

/* Solve the relaxation of cm (built here); REMAT_OK with res filled. */
static int solve_lp(struct remat_i_cm *cm, int backend, double deadline,
		    const volatile sig_atomic_t *stop, struct remat_i_milp_result *res,
		    struct remat_error *err)
{
	struct remat_i_milp_opts mo;

	REMAT_TRY(remat_i_cm_build(cm, err));
	memset(&mo, 0, sizeof(mo));
	mo.relax = 1;
	mo.deadline = deadline;
	mo.hard = deadline;
	mo.stop = stop;
	return remat_i_milp_solve(backend, &cm->lp, &mo, res, err);
}


static int expired(const struct remat_i_cm_rounding *r)
{
	return (r->req->stop && *r->req->stop) || (r->deadline > 0 && remat_now() >= r->deadline);
}

/* Normalize cand (R set); keep it when its peak fits and it is cheaper. */
static int try_candidate(struct remat_i_cm_rounding *r, struct remat_error *err)
{
	REMAT_TRY(remat_i_cm_normalize(r->cm, &r->cand, err));
	if (r->cand.peak > r->cm->budget || (*r->have && !remat_i_cm_sol_better(&r->cand,
										 r->best)))
		return REMAT_OK;
	REMAT_TRY(remat_i_cm_sol_copy(r->cm, r->best, &r->cand, err));
	*r->have = 1;
	if (!r->sbest)
		return REMAT_OK;
	/* The simulator judges it too (src/plan/best.h); it agrees with the model's peak. */
	REMAT_TRY(remat_i_cm_schedule(r->cm, &r->cand, &r->sched, err));
	return remat_i_best_offer(r->sbest, "checkmate-lp", r->req->graph, r->req->budget,
				&r->sched, NULL, NULL, err);
}

/* Phase one and two on one LP solution x of the model lpm. */
static int round_solution(struct remat_i_cm_rounding *r, const struct remat_i_cm *lpm,
			  const double *x, long rounds, uint64_t *rng, struct remat_error *err)
{
	const struct remat_i_cm *cm = r->cm;
	int32_t T = cm->T, N = cm->N, t, m, c;
	int th;

	for (th = 1; th <= 9 + rounds; th++) {
		for (t = 0; t <= T; t++)
			for (m = 0; m < N; m++) {
				int32_t h = lpm->S[(int64_t)t * N + m];
				double v = h == REMAT_I_CM_ONE ? 1 : h >= 0 ? x[h] : 0;
				int bit;

				if (th <= 9)
					bit = v >= th / 10.0 - 1e-9;
				else
					bit = (double)(remat_i_rand_next(rng) >> 11) * 0x1p-53 < v;
				r->cand.S[(int64_t)t * N + m] = (uint8_t)bit;
			}
		remat_i_cm_r_from_s(cm, &r->cand);
		REMAT_TRY(try_candidate(r, err));
		if (expired(r))
			return REMAT_OK;
	}
	/* R by thresholds as well: normalize supplies the retention. */
	for (th = 1; th <= 9; th++) {
		for (t = 0; t < T; t++)
			for (c = 0; c < T; c++) {
				int32_t h = lpm->R[(int64_t)t * T + c];
				double v = h == REMAT_I_CM_ONE ? 1 : h >= 0 ? x[h] : 0;

				r->cand.R[(int64_t)t * T + c] = v >= th / 10.0 - 1e-9;
			}
		REMAT_TRY(try_candidate(r, err));
	}
	return REMAT_OK;
}

/*
 * Steps 1 to 3: LPs at 100% (when lb is wanted), 90%, 80%, ... of the
 * budget while nothing fits and time is left, each rounded.  *lb (may be
 * NULL): the LP optimum at 100% (NaN if not solved).  REMAT_ENOFIT when
 * the LP cannot be started in time or is too large.
 */
int remat_i_cm_lp_round(struct remat_i_cm_rounding *r, int backend, long rounds,
			double *lb,
		    struct remat_error *err)
{
	const struct remat_plan_request *req = r->req;
	struct remat_i_cm lpm;
	struct remat_i_milp_result lr;
	uint64_t rng = req->seed;
	int64_t cols, nnz;
	int rc = REMAT_OK, step;

	if (lb)
		*lb = NAN;
	remat_i_cm_estimate(r->cm, &cols, &nnz);
	if (cols > LP_MAX_COLS)
		return REMAT_FAIL(err, REMAT_ENOFIT, "the LP would have about %lld columns: "
				  "too large", (long long)cols);
	if (r->deadline > 0 && backend == REMAT_I_MILP_CBC &&
	    remat_now() + lp_seconds(nnz) > r->deadline)
		return REMAT_FAIL(err, REMAT_ENOFIT, "the LP relaxation would take about %.0f s, "
				  "more than the time limit leaves", lp_seconds(nnz));
	REMAT_TRY(remat_i_cm_sol_init(r->cm, &r->cand, err));
	remat_schedule_init(&r->sched);
	remat_i_milp_result_init(&lr);
	for (step = lb ? 0 : 1; step <= 9 && rc == REMAT_OK; step++) {
		double frac = 1.0 - 0.1 * step;

		if ((step > 1 && *r->have) || expired(r))
			break;
		rc = remat_i_cm_init(&lpm, req->graph, (int64_t)floor(frac * (double)req->budget),
				     0, err);
		if (rc)
			break;
		remat_i_milp_result_release(&lr);
		rc = solve_lp(&lpm, backend, r->deadline, r->req->stop, &lr, err);
		if (rc == REMAT_OK && lr.status == REMAT_I_MILP_OPTIMAL) {
			if (step == 0)
				*lb = lr.obj * lpm.cost_unit;
			rc = round_solution(r, &lpm, lr.x, rounds, &rng, err);
		} else if (rc == REMAT_OK && lr.status == REMAT_I_MILP_INFEASIBLE) {
			step = 10; /* tighter budgets are infeasible too */
		}
		remat_i_cm_release(&lpm);
	}
	remat_i_milp_result_release(&lr);
	remat_i_cm_sol_release(&r->cand);
	remat_schedule_release(&r->sched);
	return rc;
}

int remat_i_checkmate_lp_warm(const struct remat_plan_request *req,
			      const struct remat_i_cm *cm, double deadline,
			      struct remat_i_cm_sol *inc, int *have, struct remat_error *err)
{
	struct remat_i_cm_rounding r;
	int rc;

	memset(&r, 0, sizeof(r));
	r.req = req;
	r.cm = cm;
	r.deadline = deadline;
	r.best = inc;
	r.have = have;
	rc = remat_i_cm_lp_round(&r, REMAT_I_MILP_CBC, 20, NULL, err);
	return rc == REMAT_ENOFIT ? REMAT_OK : rc;
}

double remat_bound_least_cost(const struct remat_graph *g)
{
	return remat_i_least_cost(g);
}

int remat_bound_lp(const struct remat_graph *g, int64_t budget, double max_seconds,
		   double *bound, enum remat_bound_status *status, struct remat_error *err)
{
	struct remat_i_cm cm;
	struct remat_i_milp_result lr;
	int64_t cols, nnz;
	int32_t m;
	int rc;

	*bound = NAN;
	*status = REMAT_BOUND_NOT_TRIED;
	REMAT_TRY(remat_i_cm_init(&cm, g, budget, 0, err));
	remat_i_milp_result_init(&lr);
	remat_i_cm_estimate(&cm, &cols, &nnz);
	rc = REMAT_OK;
	for (m = cm.P; m < cm.N; m++) {
		/* A node whose inputs, output and workspace exceed the budget. */
		int64_t need = cm.mem[m] + cm.ws[m];
		int32_t k;

		for (k = cm.in_off[m]; k < cm.in_off[m + 1]; k++)
			need += cm.mem[cm.in_idx[k]];
		if (need > cm.budget)
			*status = REMAT_BOUND_INFEASIBLE;
	}
	/* The outputs are all held at the end. */
	if (remat_i_outputs_bytes(g) > budget)
		*status = REMAT_BOUND_INFEASIBLE;
	if (*status == REMAT_BOUND_NOT_TRIED && cols <= LP_MAX_COLS &&
	    (max_seconds <= 0 || lp_seconds(nnz) <= max_seconds)) {
		rc = solve_lp(&cm, REMAT_I_MILP_CBC, 0, NULL, &lr, err);
		if (rc == REMAT_OK && lr.status == REMAT_I_MILP_OPTIMAL) {
			*bound = lr.obj * cm.cost_unit;
			*status = REMAT_BOUND_OK;
		} else if (rc == REMAT_OK && lr.status == REMAT_I_MILP_INFEASIBLE) {
			*status = REMAT_BOUND_INFEASIBLE;
		}
	}
	remat_i_milp_result_release(&lr);
	remat_i_cm_release(&cm);
	return rc;
}

