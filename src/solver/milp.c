/* milp.c - the solver-neutral program: builder, checker, dispatch; see milp.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver/milp.h"

void remat_i_milp_init(struct remat_i_milp *m)
{
	memset(m, 0, sizeof(*m));
}

void remat_i_milp_release(struct remat_i_milp *m)
{
	free(m->obj);
	free(m->clo);
	free(m->cup);
	free(m->is_int);
	free(m->row_off);
	free(m->row_idx);
	free(m->row_val);
	free(m->rlo);
	free(m->rup);
	memset(m, 0, sizeof(*m));
}

static int grow(void **p, size_t elem, int64_t need, int64_t *cap)
{
	int64_t nc = *cap ? *cap : 256;
	void *np;

	if (need <= *cap)
		return 0;
	while (nc < need)
		nc *= 2;
	np = realloc(*p, elem * (size_t)nc);
	if (!np)
		return -1;
	*p = np;
	*cap = nc;
	return 0;
}

int remat_i_milp_add_col(struct remat_i_milp *m, double lo, double up, double obj,
			 int is_int, int32_t *col, struct remat_error *err)
{
	if (m->ncols >= m->cap_cols) {
		int64_t c1 = m->cap_cols, c2 = m->cap_cols, c3 = m->cap_cols, c4 = m->cap_cols;
		int64_t need = (int64_t)m->ncols + 1;

		if (grow((void **)&m->obj, sizeof(double), need, &c1) ||
		    grow((void **)&m->clo, sizeof(double), need, &c2) ||
		    grow((void **)&m->cup, sizeof(double), need, &c3) ||
		    grow((void **)&m->is_int, 1, need, &c4))
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory building the MILP");
		/* All four grew to the same capacity (same start, same rule). */
		m->cap_cols = (int32_t)c1;
	}
	m->obj[m->ncols] = obj;
	m->clo[m->ncols] = lo;
	m->cup[m->ncols] = up;
	m->is_int[m->ncols] = is_int != 0;
	if (col)
		*col = m->ncols;
	m->ncols++;
	return REMAT_OK;
}

void remat_i_milp_row_begin(struct remat_i_milp *m)
{
	m->in_row = 1;
}

int remat_i_milp_row_add(struct remat_i_milp *m, int32_t col, double val,
			 struct remat_error *err)
{
	if (val == 0)
		return REMAT_OK;
	if (col < 0 || col >= m->ncols || !m->in_row)
		return REMAT_FAIL(err, REMAT_EINTERNAL, "MILP builder: bad column %d", col);
	if (m->nnz >= m->cap_nnz) {
		int64_t c1 = m->cap_nnz, c2 = m->cap_nnz;

		if (grow((void **)&m->row_idx, sizeof(int32_t), m->nnz + 1, &c1) ||
		    grow((void **)&m->row_val, sizeof(double), m->nnz + 1, &c2))
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory building the MILP");
		m->cap_nnz = c1;
	}
	m->row_idx[m->nnz] = col;
	m->row_val[m->nnz] = val;
	m->nnz++;
	return REMAT_OK;
}

int remat_i_milp_row_end(struct remat_i_milp *m, double lo, double up,
			 struct remat_error *err)
{
	if (!m->in_row)
		return REMAT_FAIL(err, REMAT_EINTERNAL, "MILP builder: no open row");
	m->in_row = 0;
	if (m->nrows + 1 >= m->cap_rows) {
		int64_t c1 = m->cap_rows, c2 = m->cap_rows, c3 = m->cap_rows;
		int64_t need = (int64_t)m->nrows + 2;

		if (grow((void **)&m->row_off, sizeof(int64_t), need, &c1) ||
		    grow((void **)&m->rlo, sizeof(double), need, &c2) ||
		    grow((void **)&m->rup, sizeof(double), need, &c3))
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory building the MILP");
		m->cap_rows = (int32_t)c1;
	}
	if (m->nrows == 0)
		m->row_off[0] = 0;
	m->rlo[m->nrows] = lo;
	m->rup[m->nrows] = up;
	m->nrows++;
	m->row_off[m->nrows] = m->nnz;
	return REMAT_OK;
}

double remat_i_milp_proven(double val)
{
	double v = val - 1e-6 * fabs(val) - 2e-5;

	return isfinite(v) && v > 0 ? v : 0;
}

double remat_i_milp_value(const struct remat_i_milp *m, const double *x)
{
	double v = m->obj_const;
	int32_t j;

	for (j = 0; j < m->ncols; j++)
		v += m->obj[j] * x[j];
	return v;
}

int64_t remat_i_milp_check(const struct remat_i_milp *m, const double *x, double tol,
			   double *excess)
{
	int32_t i, j;

	if (excess)
		*excess = 0;
	for (j = 0; j < m->ncols; j++) {
		double v = x[j], e = 0;

		if (v < m->clo[j] - tol)
			e = m->clo[j] - v;
		else if (v > m->cup[j] + tol)
			e = v - m->cup[j];
		else if (m->is_int[j] && fabs(v - floor(v + 0.5)) > tol)
			e = fabs(v - floor(v + 0.5));
		if (e > 0) {
			if (excess)
				*excess = e;
			return -2 - (int64_t)j;
		}
	}
	for (i = 0; i < m->nrows; i++) {
		double a = 0, big = 1;
		int64_t k;

		for (k = m->row_off[i]; k < m->row_off[i + 1]; k++) {
			a += m->row_val[k] * x[m->row_idx[k]];
			if (fabs(m->row_val[k]) > big)
				big = fabs(m->row_val[k]);
		}
		if (a < m->rlo[i] - tol * big || a > m->rup[i] + tol * big) {
			if (excess)
				*excess = a < m->rlo[i] ? m->rlo[i] - a : a - m->rup[i];
			return i;
		}
	}
	return -1;
}

void remat_i_milp_result_init(struct remat_i_milp_result *r)
{
	memset(r, 0, sizeof(*r));
	r->status = REMAT_I_MILP_NOSOLUTION;
	r->obj = NAN;
	r->bound = NAN;
	r->nodes = -1;
}

void remat_i_milp_result_release(struct remat_i_milp_result *r)
{
	free(r->x);
	remat_i_milp_result_init(r);
}

int remat_i_milp_solve(enum remat_i_milp_backend b, const struct remat_i_milp *m,
		       const struct remat_i_milp_opts *opts,
		       struct remat_i_milp_result *res, struct remat_error *err)
{
	if (m->in_row)
		return REMAT_FAIL(err, REMAT_EINTERNAL, "MILP builder: a row is still open");
	if (b == REMAT_I_MILP_GLPK)
		return remat_i_milp_isolate(remat_i_milp_solve_glpk, "GLPK", m, opts, res, err);
	return remat_i_milp_isolate(remat_i_milp_solve_cbc, "CBC", m, opts, res, err);
}

int remat_i_milp_backend_parse(const char *name)
{
	if (strcmp(name, "cbc") == 0)
		return REMAT_I_MILP_CBC;
	if (strcmp(name, "glpk") == 0)
		return REMAT_I_MILP_GLPK;
	return -1;
}

const char *remat_i_milp_backend_name(enum remat_i_milp_backend b)
{
	return b == REMAT_I_MILP_GLPK ? "glpk" : "cbc";
}
