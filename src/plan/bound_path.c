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
 * The pass that plans with the model (path_pass.c) may tighten stages
 * (remat_i_path_tighten) so that a point's order fits: rows that hold
 * for the points whose order fits, not for every schedule, so a model
 * with a tightened stage is never taken as a bound.
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
#include "plan/path_model.h"
#include "sim/sim_internal.h"
#include "solver/milp.h"

/* The largest model tried (columns); beyond it the bound is not tried. */
#define PATH_MAX_COLS 400000
/* The time without a cap. */
#define PATH_SECONDS 60.0


static int path_oom(struct remat_error *err)
{
	return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the path bound");
}

/* The first moment v may be resident at other than as sigma's output. */
static int32_t s0(const struct remat_i_path *p, int32_t v)
{
	return p->pos[v] < 0 ? 0 : p->pos[v] + 1;
}

/* S[t,v]'s column, or -1 when it is the constant 1 (v = sigma_t). */
static int32_t S(const struct remat_i_path *p, int32_t t, int32_t v)
{
	return t == p->pos[v] ? -1 : p->scol[v] + t - s0(p, v);
}

/* R[t,v]'s column, or -1 when v cannot be computed again in stage t. */
static int32_t R(const struct remat_i_path *p, int32_t t, int32_t v)
{
	return p->rcol[v] >= 0 ? p->rcol[v] + t - (p->pos[v] + 1) : -1;
}

/*
 * The order and last(v).  *fork: the first sigma_t that does not read
 * sigma_(t-1) (more than one order), else -1.
 */
static int path_order(struct remat_i_path *p, int32_t *fork, struct remat_error *err)
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
static int add_s(struct remat_i_path *p, int32_t t, int32_t v, double a, double *rhs,
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
static int path_model(struct remat_i_path *p, int64_t budget, double unit, int *never,
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

/* S[t,v]'s column, -1 the constant 1 (v = sigma_t), -2 the constant 0. */
static int32_t s_at(const struct remat_i_path *p, int32_t t, int32_t v)
{
	if (p->pos[v] >= 0 && t == p->pos[v])
		return -1;
	return p->scol[v] < 0 || t < s0(p, v) || t > p->last[v] ? -2 : S(p, t, v);
}

/* R[t,v]'s column, or -1 where there is none. */
static int32_t r_at(const struct remat_i_path *p, int32_t t, int32_t v)
{
	return t <= p->pos[v] || t > p->last[v] ? -1 : R(p, t, v);
}

static double x_at(const double *x, int32_t c)
{
	return c == -1 ? 1 : c < 0 ? 0 : x[c];
}

/* Z >= the column c (or its constant), or Z >= S[t-1,w] + R - 1 (sp, r). */
static int z_row(struct remat_i_milp *m, int32_t z, int32_t c, int32_t sp, int32_t r,
		 struct remat_error *err)
{
	double lo = 0;

	remat_i_milp_row_begin(m);
	REMAT_TRY(remat_i_milp_row_add(m, z, 1, err));
	if (r >= 0) {
		REMAT_TRY(remat_i_milp_row_add(m, r, -1, err));
		c = sp;
		lo = -1;
	}
	if (c == -1)
		lo += 1;
	else if (c >= 0)
		REMAT_TRY(remat_i_milp_row_add(m, c, -1, err));
	return remat_i_milp_row_end(m, lo, HUGE_VAL, err);
}

int remat_i_path_tighten(struct remat_i_path *p, int32_t t, struct remat_error *err)
{
	const struct remat_graph *g = p->g;
	struct remat_i_milp *m = &p->m;
	int32_t x = t < p->T ? p->sigma[t] : -1, w, v, k, first = m->ncols, c;
	double scale = p->budget > 0 ? 100.0 / (double)p->budget : 1, room = (double)p->budget;

	if (t < 0 || t > p->T || p->tight[t])
		return REMAT_OK;
	if (p->zcol0 < 0)
		p->zcol0 = m->ncols;
	for (w = 0; w < g->n; w++) {
		int32_t z, sp;

		if (w == x || g->mem[w] == 0 ||
		    (s_at(p, t, w) == -2 && r_at(p, t, w) < 0 && s_at(p, t - 1, w) == -2))
			continue;
		if (p->nz == p->zcap) {
			int32_t cap = p->zcap ? 2 * p->zcap : 256;
			int32_t *a = realloc(p->zt, sizeof(int32_t) * (size_t)cap);

			if (a)
				p->zt = a;
			a = a ? realloc(p->zw, sizeof(int32_t) * (size_t)cap) : NULL;
			if (!a)
				return path_oom(err);
			p->zw = a;
			p->zcap = cap;
		}
		z = m->ncols;
		REMAT_TRY(remat_i_milp_add_col(m, 0, 1, 0, 1, NULL, err));
		p->zt[p->nz] = t;
		p->zw[p->nz++] = w;
		if ((c = s_at(p, t, w)) != -2)
			REMAT_TRY(z_row(m, z, c, -2, -1, err));
		if ((c = r_at(p, t, w)) >= 0)
			REMAT_TRY(z_row(m, z, c, -2, -1, err));
		if ((sp = s_at(p, t - 1, w)) == -2)
			continue;
		for (k = g->use_off[w]; k < g->use_off[w + 1]; k++)
			if ((c = r_at(p, t, g->use_idx[k])) >= 0)
				REMAT_TRY(z_row(m, z, -2, sp, c, err));
	}
	if (x >= 0)
		room -= (double)g->mem[x] + (double)g->workspace[x];
	remat_i_milp_row_begin(m);
	for (c = first; c < m->ncols; c++)
		REMAT_TRY(remat_i_milp_row_add(m, c, (double)g->mem[p->zw[p->nz - (m->ncols - c)]] *
					       scale, err));
	REMAT_TRY(remat_i_milp_row_end(m, -HUGE_VAL, room * scale, err));
	/* A recomputation's workspace, beside all that. */
	for (v = 0; v < g->n; v++) {
		if (g->workspace[v] == 0 || (c = r_at(p, t, v)) < 0)
			continue;
		remat_i_milp_row_begin(m);
		for (k = first; k < m->ncols; k++)
			REMAT_TRY(remat_i_milp_row_add(m, k, (double)g->mem[p->zw[p->nz - (m->ncols - k)]] *
						       scale, err));
		REMAT_TRY(remat_i_milp_row_add(m, c, (double)g->workspace[v] * scale, err));
		REMAT_TRY(remat_i_milp_row_end(m, -HUGE_VAL, (double)p->budget * scale, err));
	}
	p->tight[t] = 1;
	return REMAT_OK;
}

void remat_i_path_extend(const struct remat_i_path *p, double *x)
{
	const struct remat_graph *g = p->g;
	int32_t i, k, c;

	for (i = 0; i < p->nz; i++) {
		int32_t t = p->zt[i], w = p->zw[i];
		double z = x_at(x, s_at(p, t, w)), sp = x_at(x, s_at(p, t - 1, w));

		if ((c = r_at(p, t, w)) >= 0 && x[c] > z)
			z = x[c];
		for (k = g->use_off[w]; k < g->use_off[w + 1]; k++)
			if ((c = r_at(p, t, g->use_idx[k])) >= 0 && sp + x[c] - 1 > z)
				z = sp + x[c] - 1;
		x[p->zcol0 + i] = z;
	}
}

void remat_i_path_release(struct remat_i_path *p)
{
	remat_i_milp_release(&p->m);
	free(p->tight);
	free(p->zt);
	free(p->zw);
	free(p->sigma);
	free(p->pos);
	free(p->last);
	free(p->scol);
	free(p->rcol);
	memset(p, 0, sizeof(*p));
}

/* The order, last(v) and the model's size: *state FORK, TOO_LARGE or BUILT (to be built). */
static int path_probe(struct remat_i_path *p, const struct remat_graph *g,
		      enum remat_i_path_state *state, int32_t *fork, struct remat_error *err)
{
	double cols = 0;
	int32_t v, fk;
	size_t n = (size_t)g->n + 1;

	memset(p, 0, sizeof(*p));
	p->g = g;
	remat_i_milp_init(&p->m);
	*state = REMAT_I_PATH_FORK;
	if (fork)
		*fork = -1;
	p->sigma = malloc(sizeof(int32_t) * n);
	p->pos = malloc(sizeof(int32_t) * n);
	p->last = malloc(sizeof(int32_t) * n);
	p->scol = malloc(sizeof(int32_t) * n);
	p->rcol = malloc(sizeof(int32_t) * n);
	p->tight = calloc(n + 1, 1);
	p->zcol0 = -1;
	if (!p->sigma || !p->pos || !p->last || !p->scol || !p->rcol || !p->tight)
		return path_oom(err);
	REMAT_TRY(path_order(p, &fk, err));
	if (fork)
		*fork = fk;
	if (fk >= 0)
		return REMAT_OK; /* more than one order */
	p->unit = remat_i_cost_unit(g);
	p->floor = remat_i_least_cost(g);
	if (p->floor < 0)
		return path_oom(err);
	for (v = 0; v < g->n; v++) {
		if (p->pos[v] == -2 || p->last[v] < s0(p, v))
			continue;
		cols += p->last[v] - s0(p, v) + 1; /* S */
		if (p->pos[v] >= 0 && g->recompute[v])
			cols += p->last[v] - p->pos[v]; /* R */
	}
	p->cols = (int64_t)cols;
	*state = cols > PATH_MAX_COLS ? REMAT_I_PATH_TOO_LARGE : REMAT_I_PATH_BUILT;
	return REMAT_OK;
}

int remat_i_path_fits(const struct remat_graph *g, int64_t max_cols, struct remat_error *err)
{
	struct remat_i_path p;
	enum remat_i_path_state state;
	int rc = path_probe(&p, g, &state, NULL, err);
	int64_t cols = p.cols;

	remat_i_path_release(&p);
	return rc ? -1 : state == REMAT_I_PATH_BUILT && cols <= max_cols;
}

int remat_i_path_build(struct remat_i_path *p, const struct remat_graph *g, int64_t budget,
		       enum remat_i_path_state *state, int32_t *fork, struct remat_error *err)
{
	int never = 0;

	REMAT_TRY(path_probe(p, g, state, fork, err));
	p->budget = budget;
	if (*state != REMAT_I_PATH_BUILT)
		return REMAT_OK;
	REMAT_TRY(path_model(p, budget, p->unit, &never, err));
	if (never)
		*state = REMAT_I_PATH_NEVER;
	return REMAT_OK;
}

int remat_i_path_point(const struct remat_i_path *p, const struct remat_schedule *s,
		       double *x, struct remat_error *err)
{
	const struct remat_graph *g = p->g;
	uint8_t *need = calloc((size_t)g->n + 1, 1), *made = calloc((size_t)g->n + 1, 1);
	int32_t *stage = malloc(sizeof(int32_t) * ((size_t)s->n + 1));
	int32_t t = 0, v, k, c;
	int64_t i;
	int rc = REMAT_OK;

	if (!need || !made || !stage) {
		rc = path_oom(err);
		goto out;
	}
	memset(x, 0, sizeof(double) * (size_t)p->m.ncols);
	/* Forward: the stage of each compute, and the first computations' order. */
	for (i = 0; i < s->n; i++) {
		v = s->steps[i].node;
		stage[i] = -1;
		if (s->steps[i].op != REMAT_OP_COMPUTE || v < 0 || v >= g->n || p->pos[v] < 0)
			continue;
		if (made[v]) {
			stage[i] = t;
			continue;
		}
		if (t >= p->T || p->sigma[t] != v) {
			rc = REMAT_FAIL(err, REMAT_ENOFIT, "'%s' is computed first out of the "
					"path's order", g->id[v]);
			goto out;
		}
		made[v] = 1;
		stage[i] = t++;
	}
	if (t != p->T) {
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "'%s' is never computed", g->id[p->sigma[t]]);
		goto out;
	}
	/*
	 * Backward: need[u] while some later compute reads u before u is made
	 * again.  At each moment, what is needed is resident.
	 */
	for (v = 0; v < g->n; v++)
		need[v] = g->is_output[v] && p->pos[v] != -2;
	for (v = 0; v < g->n; v++)
		if (need[v] && p->scol[v] >= 0 && p->T >= s0(p, v) && p->T <= p->last[v])
			x[S(p, p->T, v)] = 1;
	for (i = s->n - 1; i >= 0; i--) {
		int32_t y = s->steps[i].node;

		if (s->steps[i].op != REMAT_OP_COMPUTE || y < 0 || y >= g->n || p->pos[y] == -2)
			continue;
		need[y] = 0;
		for (k = g->in_off[y]; k < g->in_off[y + 1]; k++)
			need[g->in_idx[k]] = 1;
		if (stage[i] < 0)
			continue;
		t = stage[i];
		if (t == p->T || y != p->sigma[t]) {
			/* Computed again in stage t. */
			if (t <= p->last[y] && (c = R(p, t, y)) >= 0)
				x[c] = 1;
			continue;
		}
		for (v = 0; v < g->n; v++)
			if (need[v] && v != y && p->scol[v] >= 0 && t >= s0(p, v) &&
			    t <= p->last[v])
				x[S(p, t, v)] = 1;
	}
out:
	free(need);
	free(made);
	free(stage);
	return rc;
}

int remat_i_path_order(const struct remat_i_path *p, const double *x,
		       struct remat_schedule *out, struct remat_error *err)
{
	const struct remat_graph *g = p->g;
	struct remat_schedule order;
	int32_t t, i, v, c;
	int rc = REMAT_OK;

	remat_schedule_init(&order);
	for (t = 0; t <= p->T && rc == REMAT_OK; t++) {
		for (i = 0; i < g->n && rc == REMAT_OK; i++) {
			v = g->topo[i];
			if (p->pos[v] < 0 || t <= p->pos[v] || t > p->last[v] ||
			    (c = R(p, t, v)) < 0 || x[c] < 0.5)
				continue;
			rc = remat_schedule_push(&order, REMAT_OP_COMPUTE, v, err);
		}
		if (t < p->T && rc == REMAT_OK)
			rc = remat_schedule_push(&order, REMAT_OP_COMPUTE, p->sigma[t], err);
	}
	/* Frees after last reads, an output's earlier instances too. */
	if (rc == REMAT_OK)
		rc = remat_i_liveness(g, &order, 1, out, err);
	remat_schedule_release(&order);
	return rc;
}

int remat_i_path_solve(const struct remat_i_path *p, double deadline,
		       const volatile sig_atomic_t *stop, const double *start,
		       struct remat_i_milp_result *mr, double *bound, struct remat_error *err)
{
	struct remat_i_milp_opts opts;
	double val;
	int rc;

	memset(&opts, 0, sizeof(opts));
	opts.deadline = deadline;
	opts.hard = deadline;
	opts.stop = stop;
	opts.no_preprocess = 1;
	opts.start = start;
	rc = remat_i_milp_solve(REMAT_I_MILP_CBC, &p->m, &opts, mr, err);
	/* A solver that fails, or says nothing fits, proves no more than the floor. */
	val = rc || mr->status == REMAT_I_MILP_INFEASIBLE ? 0 :
		mr->status == REMAT_I_MILP_OPTIMAL ? mr->obj : mr->bound;
	*bound = p->floor + remat_i_milp_proven(val) * p->unit;
	return rc;
}

int remat_bound_path(const struct remat_graph *g, int64_t budget, double max_seconds,
		     double *bound, enum remat_bound_status *status, int32_t *fork,
		     struct remat_error *err)
{
	struct remat_i_milp_result mr;
	struct remat_i_path p;
	enum remat_i_path_state state;
	int rc;

	*bound = NAN;
	*status = REMAT_BOUND_NOT_TRIED;
	if (fork)
		*fork = -1;
	if (remat_i_outputs_bytes(g) > budget) {
		*status = REMAT_BOUND_INFEASIBLE;
		return REMAT_OK;
	}
	remat_i_milp_result_init(&mr);
	rc = remat_i_path_build(&p, g, budget, &state, fork, err);
	if (rc || state == REMAT_I_PATH_FORK || state == REMAT_I_PATH_TOO_LARGE)
		goto out;
	if (state == REMAT_I_PATH_NEVER) {
		*status = REMAT_BOUND_INFEASIBLE;
		goto out;
	}
	rc = remat_i_path_solve(&p, remat_now() + (max_seconds > 0 ? max_seconds : PATH_SECONDS),
				NULL, NULL, &mr, bound, err);
	if (rc == REMAT_ENOMEM)
		goto out;
	/* A solver that fails proves no more than the floor (*bound says so). */
	rc = REMAT_OK;
	*status = REMAT_BOUND_OK;
out:
	remat_i_milp_result_release(&mr);
	remat_i_path_release(&p);
	return rc;
}
