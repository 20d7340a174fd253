/*
 * bound_path.c - the path bound (remat/bound.h): on a graph whose needed
 * nodes lie on one path, every schedule's first computations come in one
 * order, and a MILP over what is resident at each of them bounds all
 * schedules (issue 32).
 *
 * sigma_0, ..., sigma_(T-1): the needed nodes that are not inputs, in
 * topological order.  When each reads the one before, that is the only
 * order in which any schedule computes them first.  Moment t is sigma_t's
 * first computation; moment T follows the last compute (the outputs are
 * resident).  Stage t is what runs between moments t-1 and t.  Columns:
 *
 *   S[t,v]  v resident while sigma_t runs (at T: at the end), v != sigma_t;
 *   R[t,v]  v computed in stage t, after its first computation (cost(v)).
 *
 * Rows, each true of every schedule:
 *   S[t,v] <= S[t-1,v] + R[t,v]   resident at t: resident at t-1 or made
 *                                 since (sigma_(t-1) is resident at t-1);
 *   R[t,v] <= S[t-1,u] + R[t,u]   for each input u of v: u was there;
 *   S[t,u] = 1                    for each input u of sigma_t;
 *   sum mem(w) S[t,w] <= budget - mem(sigma_t) - workspace(sigma_t);
 *   S[T,o] = 1 for each output, and sum mem(w) S[T,w] <= budget.
 * A schedule gives a point (R[t,v] = 1 when stage t computes v, however
 * often) that costs it at most its recomputation.  What happens inside a
 * stage is not modelled (the memory there is not counted), so the point
 * need not be a schedule: the optimum is a bound, not a plan.  S[t,v] and
 * R[t,v] exist only up to last(v), the latest moment anything may still
 * read v (an output: T; else the latest first computation of a user, or
 * the last(u) of a user u that may be recomputed).
 *
 * CBC solves it without its preprocessing (as the window bound's MILPs:
 * it has proven wrong optima on models with many fixed columns), costs in
 * units of the least positive cost; its proven bound at the deadline,
 * less a margin for its tolerances, counts.  Its answer that nothing
 * fits is not taken as a proof; a moment whose inputs, output and
 * workspace alone exceed the budget is.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "remat/bound.h"
#include "remat/planner.h"
#include "analysis/needed.h"
#include "solver/milp.h"

/* The largest model tried (columns); beyond it the bound is not tried. */
#define PATH_MAX_COLS 400000
/* The time without a cap. */
#define PATH_SECONDS 60.0

struct path {
	const struct remat_graph *g;
	int32_t T;
	int32_t *sigma, *pos, *last; /* pos: -1 an input, -2 not needed */
	int32_t *scol, *rcol;        /* S[t,v] = scol[v] + t - s0(v); R likewise */
	struct remat_i_milp m;
};

static int path_oom(struct remat_error *err)
{
	return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the path bound");
}

/* The first moment v may be resident at other than as sigma's output. */
static int32_t s0(const struct path *p, int32_t v)
{
	return p->pos[v] < 0 ? 0 : p->pos[v] + 1;
}

/* S[t,v]'s column, or -1 when it is the constant 1 (v = sigma_t). */
static int32_t S(const struct path *p, int32_t t, int32_t v)
{
	return t == p->pos[v] ? -1 : p->scol[v] + t - s0(p, v);
}

/* R[t,v]'s column, or -1 when v cannot be computed again in stage t. */
static int32_t R(const struct path *p, int32_t t, int32_t v)
{
	return p->rcol[v] >= 0 ? p->rcol[v] + t - (p->pos[v] + 1) : -1;
}

/*
 * The order and last(v).  *fork: the first sigma_t that does not read
 * sigma_(t-1) (more than one order), else -1.
 */
static int path_order(struct path *p, int32_t *fork, struct remat_error *err)
{
	const struct remat_graph *g = p->g;
	uint8_t *need = malloc((size_t)g->n + 1);
	int32_t i, k, v, t = 0;

	*fork = -1;
	if (!need)
		return path_oom(err);
	remat_i_needed(g, need);
	for (i = 0; i < g->n; i++) {
		v = g->topo[i];
		p->pos[v] = !need[v] ? -2 : g->kind[v] == REMAT_KIND_INPUT ? -1 : t++;
		if (p->pos[v] >= 0)
			p->sigma[p->pos[v]] = v;
	}
	p->T = t;
	for (t = 1; t < p->T && *fork < 0; t++) {
		int reads = 0;

		v = p->sigma[t];
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			reads |= g->in_idx[k] == p->sigma[t - 1];
		if (!reads)
			*fork = v;
	}
	for (i = g->n - 1; i >= 0; i--) {
		v = g->topo[i];
		p->last[v] = -1;
		if (p->pos[v] == -2)
			continue;
		if (g->is_output[v])
			p->last[v] = p->T;
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k], l;

			if (p->pos[u] < 0)
				continue;
			l = g->recompute[u] ? p->last[u] : p->pos[u];
			if (l > p->last[v])
				p->last[v] = l;
		}
	}
	free(need);
	return REMAT_OK;
}

/* Add S[t,v] (a column or the constant 1) with coefficient a to the open row. */
static int add_s(struct path *p, int32_t t, int32_t v, double a, double *rhs,
		 struct remat_error *err)
{
	int32_t c = S(p, t, v);

	if (c < 0) {
		*rhs -= a;
		return REMAT_OK;
	}
	return remat_i_milp_row_add(&p->m, c, a, err);
}

/* The model; *never when a moment's own working set exceeds the budget. */
static int path_model(struct path *p, int64_t budget, double unit, int *never,
		      struct remat_error *err)
{
	const struct remat_graph *g = p->g;
	struct remat_i_milp *m = &p->m;
	int32_t v, t, k, c;
	double rhs, scale;

	*never = 0;
	for (v = 0; v < g->n; v++) {
		p->scol[v] = p->rcol[v] = -1;
		if (p->pos[v] == -2 || p->last[v] < s0(p, v))
			continue;
		p->scol[v] = m->ncols;
		for (t = s0(p, v); t <= p->last[v]; t++)
			REMAT_TRY(remat_i_milp_add_col(m, 0, 1, 0, 1, NULL, err));
		if (p->pos[v] < 0 || !g->recompute[v])
			continue;
		p->rcol[v] = m->ncols;
		for (t = p->pos[v] + 1; t <= p->last[v]; t++)
			REMAT_TRY(remat_i_milp_add_col(m, 0, 1, g->cost[v] / unit, 1, NULL, err));
	}
	for (v = 0; v < g->n; v++) {
		if (p->scol[v] < 0)
			continue;
		/* Resident: resident before, or made in the stage. */
		for (t = s0(p, v) + 1; t <= p->last[v]; t++) {
			rhs = 0;
			remat_i_milp_row_begin(m);
			REMAT_TRY(remat_i_milp_row_add(m, S(p, t, v), 1, err));
			REMAT_TRY(remat_i_milp_row_add(m, S(p, t - 1, v), -1, err));
			if (R(p, t, v) >= 0)
				REMAT_TRY(remat_i_milp_row_add(m, R(p, t, v), -1, err));
			REMAT_TRY(remat_i_milp_row_end(m, -HUGE_VAL, rhs, err));
		}
		/* Made again: each input there (u = sigma_(t-1) always is). */
		if (p->rcol[v] < 0)
			continue;
		for (t = p->pos[v] + 1; t <= p->last[v]; t++)
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
				int32_t u = g->in_idx[k];

				if (t - 1 == p->pos[u])
					continue;
				rhs = 0;
				remat_i_milp_row_begin(m);
				REMAT_TRY(remat_i_milp_row_add(m, R(p, t, v), 1, err));
				REMAT_TRY(add_s(p, t - 1, u, -1, &rhs, err));
				if (R(p, t, u) >= 0)
					REMAT_TRY(remat_i_milp_row_add(m, R(p, t, u), -1, err));
				REMAT_TRY(remat_i_milp_row_end(m, -HUGE_VAL, rhs, err));
			}
	}
	/*
	 * The moments: sigma_t's inputs resident, and all of it fits.  The
	 * memory rows in hundredths of the budget: in bytes (vgg-unet-train
	 * at 40%: 8.4e9), CBC proved less in 300 s (+11.04%) than in 120 s
	 * with them scaled (+11.88%).
	 */
	scale = budget > 0 ? 100.0 / (double)budget : 1;
	for (t = 0; t <= p->T; t++) {
		int32_t x = t < p->T ? p->sigma[t] : -1;
		double fixed = 0;

		rhs = (double)budget;
		if (x >= 0) {
			rhs -= (double)g->mem[x] + (double)g->workspace[x];
			for (k = g->in_off[x]; k < g->in_off[x + 1]; k++)
				m->clo[S(p, t, g->in_idx[k])] = 1;
		} else {
			for (v = 0; v < g->n; v++)
				if (p->scol[v] >= 0 && g->is_output[v])
					m->clo[S(p, t, v)] = 1;
		}
		remat_i_milp_row_begin(m);
		for (v = 0; v < g->n; v++) {
			if (v == x || p->scol[v] < 0 || t < s0(p, v) || t > p->last[v] ||
			    g->mem[v] == 0)
				continue;
			c = S(p, t, v);
			REMAT_TRY(remat_i_milp_row_add(m, c, (double)g->mem[v] * scale, err));
			if (m->clo[c] > 0)
				fixed += (double)g->mem[v];
		}
		REMAT_TRY(remat_i_milp_row_end(m, -HUGE_VAL, rhs * scale, err));
		if (fixed > rhs)
			*never = 1;
	}
	return REMAT_OK;
}

int remat_bound_path(const struct remat_graph *g, int64_t budget, double max_seconds,
		     double *bound, enum remat_bound_status *status, int32_t *fork,
		     struct remat_error *err)
{
	struct remat_i_milp_opts opts;
	struct remat_i_milp_result mr;
	struct path p;
	double unit, floor, cols = 0, val;
	int32_t v, fk;
	int never = 0, rc = REMAT_OK;

	*bound = NAN;
	*status = REMAT_BOUND_NOT_TRIED;
	if (fork)
		*fork = -1;
	floor = remat_i_least_cost(g);
	if (floor < 0)
		return path_oom(err);
	if (remat_i_outputs_bytes(g) > budget) {
		*status = REMAT_BOUND_INFEASIBLE;
		return REMAT_OK;
	}
	memset(&p, 0, sizeof(p));
	p.g = g;
	remat_i_milp_init(&p.m);
	remat_i_milp_result_init(&mr);
	p.sigma = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	p.pos = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	p.last = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	p.scol = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	p.rcol = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!p.sigma || !p.pos || !p.last || !p.scol || !p.rcol) {
		rc = path_oom(err);
		goto out;
	}
	rc = path_order(&p, &fk, err);
	if (rc)
		goto out;
	if (fork)
		*fork = fk;
	if (fk >= 0)
		goto out; /* more than one order: not tried */
	unit = remat_i_cost_unit(g);
	for (v = 0; v < g->n; v++) {
		if (p.pos[v] == -2 || p.last[v] < s0(&p, v))
			continue;
		cols += p.last[v] - s0(&p, v) + 1; /* S */
		if (p.pos[v] >= 0 && g->recompute[v])
			cols += p.last[v] - p.pos[v]; /* R */
	}
	if (cols > PATH_MAX_COLS)
		goto out;
	rc = path_model(&p, budget, unit, &never, err);
	if (rc)
		goto out;
	if (never) {
		*status = REMAT_BOUND_INFEASIBLE;
		goto out;
	}
	memset(&opts, 0, sizeof(opts));
	opts.deadline = remat_now() + (max_seconds > 0 ? max_seconds : PATH_SECONDS);
	opts.hard = opts.deadline;
	opts.no_preprocess = 1;
	rc = remat_i_milp_solve(REMAT_I_MILP_CBC, &p.m, &opts, &mr, err);
	if (rc == REMAT_ENOMEM)
		goto out;
	/* A solver that fails, or says nothing fits, proves no more than the floor. */
	val = rc || mr.status == REMAT_I_MILP_INFEASIBLE ? 0 :
		mr.status == REMAT_I_MILP_OPTIMAL ? mr.obj : mr.bound;
	rc = REMAT_OK;
	*status = REMAT_BOUND_OK;
	*bound = floor + remat_i_milp_proven(val) * unit;
out:
	remat_i_milp_result_release(&mr);
	remat_i_milp_release(&p.m);
	free(p.sigma);
	free(p.pos);
	free(p.last);
	free(p.scol);
	free(p.rcol);
	return rc;
}
