/*
 * checkmate_model.c - Checkmate's MILP over a remat graph; see
 * checkmate_model.h and, for the model itself, checkmate.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/checkmate_model.h"
#include "analysis/needed.h"

#define ZERO REMAT_I_CM_ZERO
#define ONE REMAT_I_CM_ONE

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t r = a % b;

		a = b;
		b = r;
	}
	return a;
}

void remat_i_cm_release(struct remat_i_cm *cm)
{
	free(cm->node);
	free(cm->mi);
	free(cm->mem);
	free(cm->ws);
	free(cm->cost);
	free(cm->once);
	free(cm->is_out);
	free(cm->last_need);
	free(cm->in_off);
	free(cm->in_idx);
	free(cm->use_off);
	free(cm->use_idx);
	free(cm->edge_src);
	free(cm->edge_off);
	free(cm->R);
	free(cm->S);
	free(cm->F);
	free(cm->U);
	remat_i_milp_release(&cm->lp);
	memset(cm, 0, sizeof(*cm));
}

int remat_i_cm_init(struct remat_i_cm *cm, const struct remat_graph *g, int64_t budget,
		    int max_computes, struct remat_error *err)
{
	uint8_t *need = NULL;
	int32_t i, k, v, m, n_in = 0, n_use = 0;
	int64_t unit = 0;

	memset(cm, 0, sizeof(*cm));
	remat_i_milp_init(&cm->lp);
	cm->g = g;
	cm->max_computes = max_computes;
	cm->budget_bytes = budget;
	need = calloc((size_t)g->n + 1, 1);
	cm->mi = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!need || !cm->mi)
		goto nomem;
	/* The nodes some output depends on; the rest is never computed. */
	remat_i_needed(g, need);
	for (v = 0; v < g->n; v++) {
		cm->mi[v] = -1;
		if (need[v]) {
			cm->N++;
			if (g->kind[v] == REMAT_KIND_INPUT)
				cm->P++;
		}
	}
	cm->T = cm->N - cm->P;
	cm->node = malloc(sizeof(int32_t) * ((size_t)cm->N + 1));
	cm->mem = malloc(sizeof(int64_t) * ((size_t)cm->N + 1));
	cm->ws = malloc(sizeof(int64_t) * ((size_t)cm->N + 1));
	cm->cost = malloc(sizeof(double) * ((size_t)cm->N + 1));
	cm->once = calloc((size_t)cm->N + 1, 1);
	cm->is_out = calloc((size_t)cm->N + 1, 1);
	cm->last_need = malloc(sizeof(int32_t) * ((size_t)cm->N + 1));
	cm->in_off = calloc((size_t)cm->N + 2, sizeof(int32_t));
	cm->use_off = calloc((size_t)cm->N + 2, sizeof(int32_t));
	cm->edge_off = calloc((size_t)cm->T + 2, sizeof(int32_t));
	if (!cm->node || !cm->mem || !cm->ws || !cm->cost || !cm->once || !cm->is_out ||
	    !cm->last_need || !cm->in_off || !cm->use_off || !cm->edge_off)
		goto nomem;
	/* Inputs first, then the others in topological order. */
	m = 0;
	for (i = 0; i < g->n; i++) {
		v = g->topo[i];
		if (need[v] && g->kind[v] == REMAT_KIND_INPUT) {
			cm->node[m] = v;
			cm->mi[v] = m++;
		}
	}
	for (i = 0; i < g->n; i++) {
		v = g->topo[i];
		if (need[v] && g->kind[v] != REMAT_KIND_INPUT) {
			cm->node[m] = v;
			cm->mi[v] = m++;
		}
	}
	for (m = 0; m < cm->N; m++) {
		v = cm->node[m];
		if (g->mem[v] > 0)
			unit = gcd64(unit, g->mem[v]);
		if (g->workspace[v] > 0)
			unit = gcd64(unit, g->workspace[v]);
		cm->is_out[m] = g->is_output[v];
		cm->cost[m] = m >= cm->P ? g->cost[v] : 0;
		cm->once[m] = m >= cm->P && (!g->recompute[v] || max_computes == 1);
		if (m >= cm->P)
			cm->least_cost += g->cost[v];
		/* Every input of a model node is a model node. */
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = cm->mi[g->in_idx[k]];

			n_in++;
			cm->use_off[u + 1]++;
			n_use++;
		}
		cm->in_off[m + 1] = cm->in_off[m] + (g->in_off[v + 1] - g->in_off[v]);
	}
	cm->unit = unit > 0 ? unit : 1;
	cm->cost_unit = INFINITY;
	for (m = cm->P; m < cm->N; m++)
		if (cm->cost[m] > 0 && cm->cost[m] < cm->cost_unit)
			cm->cost_unit = cm->cost[m];
	if (!isfinite(cm->cost_unit))
		cm->cost_unit = 1;
	for (m = 0; m < cm->N; m++) {
		cm->mem[m] = g->mem[cm->node[m]] / cm->unit;
		cm->ws[m] = g->workspace[cm->node[m]] / cm->unit;
	}
	/*
	 * Every memory total is a multiple of the unit, so "peak <= budget"
	 * and "peak <= floor(budget / unit) units" are the same condition.
	 */
	cm->budget = budget >= 0 ? budget / cm->unit : -1;
	cm->E = n_in;
	cm->in_idx = malloc(sizeof(int32_t) * ((size_t)n_in + 1));
	cm->use_idx = malloc(sizeof(int32_t) * ((size_t)n_use + 1));
	cm->edge_src = malloc(sizeof(int32_t) * ((size_t)n_in + 1));
	if (!cm->in_idx || !cm->use_idx || !cm->edge_src)
		goto nomem;
	for (m = 0; m < cm->N; m++)
		cm->use_off[m + 1] += cm->use_off[m];
	{
		int32_t *fill = calloc((size_t)cm->N + 1, sizeof(int32_t));

		if (!fill)
			goto nomem;
		/* Users in ascending model order = ascending compute index. */
		for (m = 0; m < cm->N; m++) {
			v = cm->node[m];
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
				int32_t u = cm->mi[g->in_idx[k]];

				cm->in_idx[cm->in_off[m] + (k - g->in_off[v])] = u;
				cm->use_idx[cm->use_off[u] + fill[u]++] = m - cm->P;
			}
		}
		free(fill);
	}
	for (m = cm->P; m < cm->N; m++) {
		int32_t c = m - cm->P;

		cm->edge_off[c + 1] = cm->edge_off[c] + (cm->in_off[m + 1] - cm->in_off[m]);
		for (k = cm->in_off[m]; k < cm->in_off[m + 1]; k++)
			cm->edge_src[cm->edge_off[c] + (k - cm->in_off[m])] = cm->in_idx[k];
	}
	for (m = 0; m < cm->N; m++) {
		int32_t last = -1;

		for (k = cm->use_off[m]; k < cm->use_off[m + 1]; k++) {
			int32_t c = cm->use_idx[k];
			int32_t l = cm->once[cm->P + c] ? c : cm->T - 1;

			if (l > last)
				last = l;
		}
		cm->last_need[m] = cm->is_out[m] ? cm->T : last;
	}
	free(need);
	return REMAT_OK;
nomem:
	free(need);
	remat_i_cm_release(cm);
	return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory building the Checkmate model");
}

/* ---- handles ---- */

static int32_t r_handle(const struct remat_i_cm *cm, int32_t t, int32_t c)
{
	if (c > t)
		return ZERO;
	if (c == t)
		return ONE;
	if (cm->once[cm->P + c] || t > cm->last_need[cm->P + c])
		return ZERO;
	return 0; /* a variable */
}

static int32_t s_handle(const struct remat_i_cm *cm, int32_t t, int32_t m)
{
	if (m >= cm->P && t <= m - cm->P)
		return ZERO;
	if (t == cm->T)
		return cm->is_out[m] ? ONE : ZERO;
	if (t > cm->last_need[m])
		return ZERO;
	return 0;
}

/* Handle of R for a model index (inputs are never computed). */
static int32_t rh(const struct remat_i_cm *cm, int32_t t, int32_t m)
{
	return m < cm->P ? ZERO : cm->R[(int64_t)t * cm->T + (m - cm->P)];
}

static int32_t sh(const struct remat_i_cm *cm, int32_t t, int32_t m)
{
	return cm->S[(int64_t)t * cm->N + m];
}

void remat_i_cm_estimate(const struct remat_i_cm *cm, int64_t *cols, int64_t *nnz)
{
	int64_t n = 0, z = 0;
	int32_t t, c, m, k;

	if (cm->T > REMAT_I_CM_MAX_T) {
		/* Far beyond any cap; not worth the O(T (T + N)) count. */
		*cols = (int64_t)cm->T * cm->T;
		*nnz = 8 * *cols;
		return;
	}
	for (t = 0; t < cm->T; t++) {
		for (c = 0; c < t; c++)
			if (r_handle(cm, t, c) == 0)
				n += 2;     /* R and U */
		n++;                        /* U of the frontier */
		for (m = 0; m < cm->N; m++)
			if (s_handle(cm, t, m) == 0)
				n++;
	}
	for (c = 0; c < cm->T; c++)
		for (k = cm->edge_off[c]; k < cm->edge_off[c + 1]; k++) {
			/* FREE columns: at most one per stage where c may run. */
			int64_t stages = cm->once[cm->P + c] ? 1 : cm->T - c;

			n += stages;
			z += stages * 8;
		}
	*cols = n;
	*nnz = z + n * 6;
}

/* ---- building ---- */

struct row {
	double shift;
};

static int term(struct remat_i_cm *cm, struct row *r, int32_t h, double coef,
		struct remat_error *err)
{
	if (h == ONE) {
		r->shift += coef;
		return REMAT_OK;
	}
	if (h == ZERO || coef == 0)
		return REMAT_OK;
	return remat_i_milp_row_add(&cm->lp, h, coef, err);
}

static int end_row(struct remat_i_cm *cm, struct row *r, double lo, double up,
		   struct remat_error *err)
{
	return remat_i_milp_row_end(&cm->lp, lo - r->shift, up - r->shift, err);
}

static int begin(struct remat_i_cm *cm, struct row *r)
{
	r->shift = 0;
	remat_i_milp_row_begin(&cm->lp);
	return REMAT_OK;
}

static int new_bin(struct remat_i_cm *cm, double obj, int32_t *h, struct remat_error *err)
{
	return remat_i_milp_add_col(&cm->lp, 0, 1, obj, 1, h, err);
}

/*
 * FREE[t, e] for edge e = (i -> c), the Checkmate hazard count:
 * h = (1 - R[t,c]) + S[t+1,i] + sum of R[t,j] over users j of i with
 * c < j <= t.  FREE = 1 exactly when h = 0.  Constant terms are folded:
 * a term that is 1 makes FREE 0; no variable term left makes it 1.
 * Checkmate's two rows (hazard_rows) or one row per term (default).
 */
static int build_free(struct remat_i_cm *cm, int32_t t, int32_t c, int32_t e,
		      struct remat_error *err)
{
	int32_t i = cm->edge_src[e], k, h, nvar = 0, nneg = 0;
	int32_t *slot = &cm->F[(int64_t)t * cm->E + e];
	int32_t hr = cm->R[(int64_t)t * cm->T + c], hs = sh(cm, t + 1, i);
	struct row r;
	int pass;

	if (hr == ZERO || hs == ONE) {
		*slot = ZERO;
		return REMAT_OK;
	}
	if (hr != ONE) {
		nvar++;
		nneg++;
	}
	if (hs != ZERO)
		nvar++;
	for (k = cm->use_off[i]; k < cm->use_off[i + 1]; k++) {
		int32_t j = cm->use_idx[k];

		if (j <= c || j > t)
			continue;
		h = cm->R[(int64_t)t * cm->T + j];
		if (h == ONE) {
			*slot = ZERO;
			return REMAT_OK;
		}
		if (h != ZERO)
			nvar++;
	}
	if (nvar == 0) {
		*slot = ONE;
		return REMAT_OK;
	}
	REMAT_TRY(new_bin(cm, 0, slot, err));
	if (!cm->hazard_rows) {
		/*
		 * One row per hazard: FREE <= R[t,c], FREE <= 1 - S[t+1,i],
		 * FREE <= 1 - R[t,j].  For binaries this is the hazard count's
		 * upper row; its LP relaxation is tighter.  The lower row
		 * (FREE >= 1 - h) is left out: freeing only lowers memory, so
		 * an optimum frees wherever it may, and the exact evaluation
		 * afterwards (remat_i_cm_complete) frees wherever it may.
		 */
		if (hr != ONE) {
			begin(cm, &r);
			REMAT_TRY(term(cm, &r, *slot, 1, err));
			REMAT_TRY(term(cm, &r, hr, -1, err));
			REMAT_TRY(end_row(cm, &r, -HUGE_VAL, 0, err));
		}
		if (hs != ZERO) {
			begin(cm, &r);
			REMAT_TRY(term(cm, &r, *slot, 1, err));
			REMAT_TRY(term(cm, &r, hs, 1, err));
			REMAT_TRY(end_row(cm, &r, -HUGE_VAL, 1, err));
		}
		for (k = cm->use_off[i]; k < cm->use_off[i + 1]; k++) {
			int32_t j = cm->use_idx[k];

			h = cm->R[(int64_t)t * cm->T + j];
			if (j <= c || j > t || h == ZERO)
				continue;
			begin(cm, &r);
			REMAT_TRY(term(cm, &r, *slot, 1, err));
			REMAT_TRY(term(cm, &r, h, 1, err));
			REMAT_TRY(end_row(cm, &r, -HUGE_VAL, 1, err));
		}
		return REMAT_OK;
	}
	/* pass 0: FREE + h >= 1; pass 1: nvar * FREE + h <= nvar. */
	for (pass = 0; pass < 2; pass++) {
		begin(cm, &r);
		REMAT_TRY(term(cm, &r, *slot, pass ? nvar : 1, err));
		if (hr != ONE)
			REMAT_TRY(term(cm, &r, hr, -1, err));
		REMAT_TRY(term(cm, &r, hs, 1, err));
		for (k = cm->use_off[i]; k < cm->use_off[i + 1]; k++) {
			int32_t j = cm->use_idx[k];

			if (j > c && j <= t)
				REMAT_TRY(term(cm, &r, cm->R[(int64_t)t * cm->T + j], 1, err));
		}
		if (pass == 0)
			REMAT_TRY(end_row(cm, &r, 1 - nneg, HUGE_VAL, err));
		else
			REMAT_TRY(end_row(cm, &r, -HUGE_VAL, nvar - nneg, err));
	}
	return REMAT_OK;
}

int remat_i_cm_build(struct remat_i_cm *cm, struct remat_error *err)
{
	int32_t T = cm->T, N = cm->N, E = cm->E, t, c, m, e;
	double B = (double)cm->budget;
	struct row r;

	cm->R = malloc(sizeof(int32_t) * ((size_t)T * (size_t)T + 1));
	cm->S = malloc(sizeof(int32_t) * ((size_t)(T + 1) * (size_t)N + 1));
	cm->F = malloc(sizeof(int32_t) * ((size_t)T * (size_t)E + 1));
	cm->U = malloc(sizeof(int32_t) * ((size_t)T * (size_t)T + 1));
	if (!cm->R || !cm->S || !cm->F || !cm->U)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory building the Checkmate model");

	/* Columns: R (with the objective), S, FREE; U with the memory rows. */
	cm->lp.obj_const = cm->least_cost / cm->cost_unit; /* the frontier computes */
	for (t = 0; t < T; t++)
		for (c = 0; c < T; c++) {
			int32_t h = r_handle(cm, t, c);

			if (h == 0)
				REMAT_TRY(new_bin(cm, cm->cost[cm->P + c] / cm->cost_unit, &h,
						  err));
			cm->R[(int64_t)t * T + c] = h;
			cm->U[(int64_t)t * T + c] = -1;
		}
	for (t = 0; t <= T; t++)
		for (m = 0; m < N; m++) {
			int32_t h = s_handle(cm, t, m);

			if (h == 0)
				REMAT_TRY(new_bin(cm, 0, &h, err));
			cm->S[(int64_t)t * N + m] = h;
		}
	for (t = 0; t < T; t++)
		for (e = 0; e < E; e++)
			cm->F[(int64_t)t * E + e] = ZERO;
	for (t = 0; t < T; t++)
		for (c = 0; c <= t; c++)
			for (e = cm->edge_off[c]; e < cm->edge_off[c + 1]; e++)
				REMAT_TRY(build_free(cm, t, c, e, err));

	/* Dependencies: R[t,c] <= R[t,i] + S[t,i] for every input i of c. */
	for (t = 0; t < T; t++)
		for (c = 0; c <= t; c++) {
			int32_t hc = cm->R[(int64_t)t * T + c];

			if (hc == ZERO)
				continue;
			for (e = cm->edge_off[c]; e < cm->edge_off[c + 1]; e++) {
				int32_t i = cm->edge_src[e];
				int32_t hri = rh(cm, t, i), hsi = sh(cm, t, i);

				if (hri == ONE || hsi == ONE)
					continue;
				begin(cm, &r);
				REMAT_TRY(term(cm, &r, hc, 1, err));
				REMAT_TRY(term(cm, &r, hri, -1, err));
				REMAT_TRY(term(cm, &r, hsi, -1, err));
				REMAT_TRY(end_row(cm, &r, -HUGE_VAL, 0, err));
			}
		}
	/* Retention: S[t+1,m] <= S[t,m] + R[t,m]. */
	for (t = 0; t < T; t++)
		for (m = 0; m < N; m++) {
			int32_t hn = sh(cm, t + 1, m), hs = sh(cm, t, m), hr = rh(cm, t, m);

			if (hn == ZERO || hs == ONE || hr == ONE)
				continue;
			begin(cm, &r);
			REMAT_TRY(term(cm, &r, hn, 1, err));
			REMAT_TRY(term(cm, &r, hs, -1, err));
			REMAT_TRY(term(cm, &r, hr, -1, err));
			REMAT_TRY(end_row(cm, &r, -HUGE_VAL, 0, err));
		}
	/* Computing a resident value is invalid (FORMATS.md): R + S <= 1. */
	for (t = 0; t < T; t++)
		for (c = 0; c < t; c++) {
			int32_t hr = cm->R[(int64_t)t * T + c], hs = sh(cm, t, cm->P + c);

			if (hr < 0 || hs < 0)
				continue;
			begin(cm, &r);
			REMAT_TRY(term(cm, &r, hr, 1, err));
			REMAT_TRY(term(cm, &r, hs, 1, err));
			REMAT_TRY(end_row(cm, &r, -HUGE_VAL, 1, err));
		}
	/* At most max_computes computes of a node (the frontier is one). */
	if (cm->max_computes > 1)
		for (c = 0; c < T; c++) {
			int32_t nvar = 0;

			for (t = c + 1; t < T; t++)
				nvar += cm->R[(int64_t)t * T + c] >= 0;
			if (nvar <= cm->max_computes - 1)
				continue;
			begin(cm, &r);
			for (t = c + 1; t < T; t++)
				REMAT_TRY(term(cm, &r, cm->R[(int64_t)t * T + c], 1, err));
			REMAT_TRY(end_row(cm, &r, -HUGE_VAL, cm->max_computes - 1, err));
		}
	/*
	 * Memory through each stage.  U[t,c] is the memory while c runs
	 * (its output included, its workspace not); it is created only
	 * where c can run, and carries the frees of the previous such
	 * position: U[t,c] = U[t,c'] - sum mem(i) FREE[t,(i,c')] + mem(c) R[t,c],
	 * and for the first, U = sum mem(m) S[t,m] + mem(c) R[t,c].
	 * Budget: U[t,c] + workspace(c) R[t,c] <= B.
	 */
	for (t = 0; t < T; t++) {
		int32_t prev = -1;

		for (c = 0; c <= t; c++) {
			int32_t hr = cm->R[(int64_t)t * T + c], hu;
			double up = B;

			if (hr == ZERO)
				continue;
			if (hr == ONE)
				up = B - (double)cm->ws[cm->P + c];
			if (up < 0)
				up = -1; /* infeasible; the solver will say so */
			REMAT_TRY(remat_i_milp_add_col(&cm->lp, 0, up < 0 ? 0 : up, 0, 0, &hu, err));
			if (up < 0) {
				/* An empty row 0 >= 1: no budget fits this workspace. */
				begin(cm, &r);
				REMAT_TRY(end_row(cm, &r, 1, HUGE_VAL, err));
			}
			cm->U[(int64_t)t * T + c] = hu;
			begin(cm, &r);
			REMAT_TRY(term(cm, &r, hu, 1, err));
			REMAT_TRY(term(cm, &r, hr, -(double)cm->mem[cm->P + c], err));
			if (prev < 0) {
				for (m = 0; m < N; m++)
					REMAT_TRY(term(cm, &r, sh(cm, t, m), -(double)cm->mem[m], err));
			} else {
				REMAT_TRY(term(cm, &r, cm->U[(int64_t)t * T + prev], -1, err));
				for (e = cm->edge_off[prev]; e < cm->edge_off[prev + 1]; e++)
					REMAT_TRY(term(cm, &r, cm->F[(int64_t)t * E + e],
						       (double)cm->mem[cm->edge_src[e]], err));
			}
			REMAT_TRY(end_row(cm, &r, 0, 0, err));
			if (hr >= 0 && cm->ws[cm->P + c] > 0) {
				begin(cm, &r);
				REMAT_TRY(term(cm, &r, hu, 1, err));
				REMAT_TRY(term(cm, &r, hr, (double)cm->ws[cm->P + c], err));
				REMAT_TRY(end_row(cm, &r, -HUGE_VAL, B, err));
			}
			prev = c;
		}
	}
	cm->built = 1;
	return REMAT_OK;
}

/* ---- points of the model ---- */

int remat_i_cm_sol_init(const struct remat_i_cm *cm, struct remat_i_cm_sol *s,
			struct remat_error *err)
{
	size_t TT = (size_t)cm->T * (size_t)cm->T + 1;

	memset(s, 0, sizeof(*s));
	s->R = calloc(TT, 1);
	s->S = calloc((size_t)(cm->T + 1) * (size_t)cm->N + 1, 1);
	s->F = calloc((size_t)cm->T * (size_t)cm->E + 1, 1);
	s->U = malloc(sizeof(int64_t) * TT);
	if (!s->R || !s->S || !s->F || !s->U) {
		remat_i_cm_sol_release(s);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for a Checkmate solution");
	}
	return REMAT_OK;
}

void remat_i_cm_sol_release(struct remat_i_cm_sol *s)
{
	free(s->R);
	free(s->S);
	free(s->F);
	free(s->U);
	memset(s, 0, sizeof(*s));
}

int remat_i_cm_sol_copy(const struct remat_i_cm *cm, struct remat_i_cm_sol *dst,
			const struct remat_i_cm_sol *src, struct remat_error *err)
{
	size_t TT = (size_t)cm->T * (size_t)cm->T;

	if (!dst->R)
		REMAT_TRY(remat_i_cm_sol_init(cm, dst, err));
	memcpy(dst->R, src->R, TT);
	memcpy(dst->S, src->S, (size_t)(cm->T + 1) * (size_t)cm->N);
	memcpy(dst->F, src->F, (size_t)cm->T * (size_t)cm->E);
	memcpy(dst->U, src->U, sizeof(int64_t) * TT);
	dst->peak = src->peak;
	dst->cost = src->cost;
	return REMAT_OK;
}

int remat_i_cm_sol_better(const struct remat_i_cm_sol *a, const struct remat_i_cm_sol *b)
{
	double tol = 1e-12 * fmax(fabs(a->cost), fabs(b->cost));

	if (a->cost < b->cost - tol)
		return 1;
	if (a->cost > b->cost + tol)
		return 0;
	return a->peak < b->peak;
}

#define SR(s, t, c) ((s)->R[(int64_t)(t) * cm->T + (c)])
#define SS(s, t, m) ((s)->S[(int64_t)(t) * cm->N + (m)])

/* R of a model index in a point (inputs: never). */
static int rv(const struct remat_i_cm *cm, const struct remat_i_cm_sol *s, int32_t t,
	      int32_t m)
{
	return m >= cm->P && SR(s, t, m - cm->P);
}

const char *remat_i_cm_complete(const struct remat_i_cm *cm, struct remat_i_cm_sol *s)
{
	int32_t T = cm->T, N = cm->N, E = cm->E, t, c, m, e, k;
	const char *bad = NULL;

	s->peak = 0;
	s->cost = 0;
	for (t = 0; t < T; t++)
		for (c = 0; c < T; c++) {
			int32_t h = r_handle(cm, t, c);
			int v = SR(s, t, c);

			if ((h == ZERO && v) || (h == ONE && !v))
				bad = bad ? bad : "R breaks a structural bound (frontier, once, useless)";
			if (v)
				s->cost += cm->cost[cm->P + c];
		}
	for (t = 0; t <= T; t++)
		for (m = 0; m < N; m++) {
			int32_t h = s_handle(cm, t, m);
			int v = SS(s, t, m);

			if ((h == ZERO && v) || (h == ONE && !v))
				bad = bad ? bad : "S breaks a structural bound (future, end, useless)";
			if (t > 0 && v && !SS(s, t - 1, m) && !rv(cm, s, t - 1, m))
				bad = bad ? bad : "S keeps a value that is not resident (retention row)";
			if (t < T && m >= cm->P && v && SR(s, t, m - cm->P))
				bad = bad ? bad : "R computes a resident value (R + S <= 1)";
		}
	if (cm->max_computes > 1)
		for (c = 0; c < T; c++) {
			int n = 0;

			for (t = 0; t < T; t++)
				n += SR(s, t, c);
			if (n > cm->max_computes)
				bad = bad ? bad : "a node is computed more than max_computes times";
		}
	for (t = 0; t < T; t++) {
		int64_t cur = 0;

		for (m = 0; m < N; m++)
			if (SS(s, t, m))
				cur += cm->mem[m];
		for (c = 0; c <= t; c++) {
			int on = SR(s, t, c);

			for (e = cm->edge_off[c]; e < cm->edge_off[c + 1]; e++) {
				int32_t i = cm->edge_src[e];
				int f = on && !SS(s, t + 1, i);

				if (on && !rv(cm, s, t, i) && !SS(s, t, i))
					bad = bad ? bad : "R computes a node whose input is not resident";
				for (k = cm->use_off[i]; f && k < cm->use_off[i + 1]; k++) {
					int32_t j = cm->use_idx[k];

					if (j > c && j <= t && SR(s, t, j))
						f = 0;
				}
				s->F[(int64_t)t * E + e] = (uint8_t)f;
			}
			if (on) {
				cur += cm->mem[cm->P + c];
				if (cur + cm->ws[cm->P + c] > s->peak)
					s->peak = cur + cm->ws[cm->P + c];
			}
			s->U[(int64_t)t * T + c] = cur;
			if (on)
				for (e = cm->edge_off[c]; e < cm->edge_off[c + 1]; e++)
					if (s->F[(int64_t)t * E + e])
						cur -= cm->mem[cm->edge_src[e]];
		}
	}
	return bad;
}

/* The least retention R needs, dropping computes nothing reads. */
static void backward_pass(const struct remat_i_cm *cm, struct remat_i_cm_sol *s,
			  uint8_t *used)
{
	int32_t T = cm->T, N = cm->N, t, c, m, k;

	for (m = 0; m < N; m++)
		SS(s, T, m) = cm->is_out[m];
	for (t = T - 1; t >= 0; t--) {
		memset(used, 0, (size_t)N);
		for (c = t; c >= 0; c--) {
			int32_t mm = cm->P + c;

			if (!SR(s, t, c))
				continue;
			if (c != t && !used[mm] && !SS(s, t + 1, mm)) {
				SR(s, t, c) = 0;
				continue;
			}
			for (k = cm->in_off[mm]; k < cm->in_off[mm + 1]; k++)
				used[cm->in_idx[k]] = 1;
		}
		for (m = 0; m < N; m++) {
			if (m >= cm->P && m - cm->P >= t)
				SS(s, t, m) = 0;
			else
				SS(s, t, m) = !rv(cm, s, t, m) && (used[m] || SS(s, t + 1, m));
		}
	}
}

int remat_i_cm_normalize(const struct remat_i_cm *cm, struct remat_i_cm_sol *s,
			 struct remat_error *err)
{
	int32_t T = cm->T, t, c;
	uint8_t *used = malloc((size_t)cm->N + 1);
	int again;

	if (!used)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for a Checkmate solution");
	for (t = 0; t < T; t++)
		for (c = 0; c < T; c++) {
			if (c == t)
				SR(s, t, c) = 1;
			else if (c > t || cm->once[cm->P + c])
				SR(s, t, c) = 0;
		}
	do {
		again = 0;
		backward_pass(cm, s, used);
		if (cm->max_computes <= 1)
			break;
		for (c = 0; c < T; c++) {
			int n = 0;

			for (t = c; t < T; t++)
				n += SR(s, t, c);
			/*
			 * Too many computes: drop the recompute closest to the
			 * one before it (the shortest extra retention), repeat.
			 */
			while (n > cm->max_computes) {
				int32_t prev = c, best = -1, gap = 0;

				for (t = c + 1; t < T; t++)
					if (SR(s, t, c)) {
						if (best < 0 || t - prev <= gap) {
							best = t;
							gap = t - prev;
						}
						prev = t;
					}
				SR(s, best, c) = 0;
				n--;
				again = 1;
			}
		}
	} while (again);
	free(used);
	remat_i_cm_complete(cm, s);
	return REMAT_OK;
}

void remat_i_cm_from_x(const struct remat_i_cm *cm, const double *x,
		       struct remat_i_cm_sol *s)
{
	int32_t T = cm->T, N = cm->N, t, c, m;

	for (t = 0; t < T; t++)
		for (c = 0; c < T; c++) {
			int32_t h = cm->R[(int64_t)t * T + c];

			SR(s, t, c) = h == ONE || (h >= 0 && x[h] > 0.5);
		}
	for (t = 0; t <= T; t++)
		for (m = 0; m < N; m++) {
			int32_t h = cm->S[(int64_t)t * N + m];

			SS(s, t, m) = h == ONE || (h >= 0 && x[h] > 0.5);
		}
}

void remat_i_cm_to_x(const struct remat_i_cm *cm, const struct remat_i_cm_sol *s,
		     double *x)
{
	int32_t T = cm->T, N = cm->N, E = cm->E, t, c, m, e;

	for (t = 0; t < T; t++)
		for (c = 0; c < T; c++) {
			int32_t h = cm->R[(int64_t)t * T + c], u = cm->U[(int64_t)t * T + c];

			if (h >= 0)
				x[h] = SR(s, t, c);
			if (u >= 0)
				x[u] = (double)s->U[(int64_t)t * T + c];
		}
	for (t = 0; t <= T; t++)
		for (m = 0; m < N; m++) {
			int32_t h = cm->S[(int64_t)t * N + m];

			if (h >= 0)
				x[h] = SS(s, t, m);
		}
	for (t = 0; t < T; t++)
		for (e = 0; e < E; e++) {
			int32_t h = cm->F[(int64_t)t * E + e];

			if (h >= 0)
				x[h] = s->F[(int64_t)t * E + e];
		}
}

void remat_i_cm_r_from_s(const struct remat_i_cm *cm, struct remat_i_cm_sol *s)
{
	int32_t T = cm->T, t, c, k;

	memset(s->R, 0, (size_t)T * (size_t)T);
	for (t = 0; t < T; t++) {
		SR(s, t, t) = 1;
		for (c = 0; c < t; c++)
			if (SS(s, t + 1, cm->P + c) && !SS(s, t, cm->P + c))
				SR(s, t, c) = 1;
		for (c = t; c >= 0; c--) {
			int32_t mm = cm->P + c;

			if (!SR(s, t, c))
				continue;
			for (k = cm->in_off[mm]; k < cm->in_off[mm + 1]; k++) {
				int32_t i = cm->in_idx[k];

				if (i >= cm->P && !SS(s, t, i))
					SR(s, t, i - cm->P) = 1;
			}
		}
	}
}

int remat_i_cm_map(const struct remat_i_cm *cm, const struct remat_schedule *sched,
		   struct remat_i_cm_sol *s, struct remat_error *err)
{
	const struct remat_graph *g = cm->g;
	int32_t next = 0;
	int64_t i;

	/*
	 * Stage t runs its frontier t last (index order), so a compute
	 * between the first computations of t-1 and t belongs to stage t.
	 */
	memset(s->R, 0, (size_t)cm->T * (size_t)cm->T);
	for (i = 0; i < sched->n; i++) {
		const struct remat_step *st = &sched->steps[i];
		int32_t m, c;

		if (st->op != REMAT_OP_COMPUTE)
			continue;
		if (st->node < 0 || st->node >= g->n)
			return REMAT_FAIL(err, REMAT_EINTERNAL, "step %lld: bad node", (long long)i);
		m = cm->mi[st->node];
		if (m < 0)
			continue; /* no output needs it: the model never computes it */
		if (m < cm->P)
			return REMAT_FAIL(err, REMAT_ENOFIT, "step %lld computes input '%s'",
					  (long long)i, g->id[st->node]);
		c = m - cm->P;
		if (next == cm->T)
			return REMAT_FAIL(err, REMAT_ENOFIT, "'%s' is computed after the last "
					  "node's first computation", g->id[st->node]);
		if (c > next)
			return REMAT_FAIL(err, REMAT_ENOFIT, "first computations leave the "
					  "model's order: '%s' before '%s'", g->id[st->node],
					  g->id[cm->node[cm->P + next]]);
		if (SR(s, next, c))
			return REMAT_FAIL(err, REMAT_ENOFIT, "'%s' is computed twice in the "
					  "stage of '%s'", g->id[st->node],
					  g->id[cm->node[cm->P + next]]);
		SR(s, next, c) = 1;
		if (c == next)
			next++;
	}
	if (next != cm->T)
		return REMAT_FAIL(err, REMAT_ENOFIT, "'%s' is never computed",
				  g->id[cm->node[cm->P + next]]);
	return remat_i_cm_normalize(cm, s, err);
}

int remat_i_cm_schedule(const struct remat_i_cm *cm, const struct remat_i_cm_sol *s,
			struct remat_schedule *out, struct remat_error *err)
{
	const struct remat_graph *g = cm->g;
	int32_t T = cm->T, N = cm->N, E = cm->E, t, c, m, e, v;
	uint8_t *res = calloc((size_t)N + 1, 1);
	int rc = REMAT_OK;

	if (!res)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	remat_schedule_clear(out);
	for (v = 0; v < g->n && rc == REMAT_OK; v++) {
		if (g->kind[v] != REMAT_KIND_INPUT)
			continue;
		m = cm->mi[v];
		if (m >= 0 && SS(s, 0, m))
			res[m] = 1;
		else
			rc = remat_schedule_push(out, REMAT_OP_FREE, v, err);
	}
	for (t = 0; t < T && rc == REMAT_OK; t++) {
		for (c = 0; c <= t && rc == REMAT_OK; c++) {
			if (!SR(s, t, c))
				continue;
			rc = remat_schedule_push(out, REMAT_OP_COMPUTE, cm->node[cm->P + c], err);
			res[cm->P + c] = 1;
			for (e = cm->edge_off[c]; e < cm->edge_off[c + 1] && rc == REMAT_OK; e++)
				if (s->F[(int64_t)t * E + e]) {
					m = cm->edge_src[e];
					rc = remat_schedule_push(out, REMAT_OP_FREE, cm->node[m], err);
					res[m] = 0;
				}
		}
		for (m = 0; m < N && rc == REMAT_OK; m++)
			if (res[m] && !SS(s, t + 1, m)) {
				rc = remat_schedule_push(out, REMAT_OP_FREE, cm->node[m], err);
				res[m] = 0;
			}
	}
	free(res);
	return rc;
}
