/*
 * milp_cbc.c - the CBC 2.10 backend of milp.h, through CBC's C API
 * (coin/Cbc_C_Interface.h, pkg-config cbc).
 *
 * - The program is loaded in one Cbc_loadProblem call (column-major);
 *   every index passed to CBC comes from that same program, so CBC's
 *   abort-on-bad-index checks cannot fire.
 * - CBC prints nothing at log level 0 (and no message callback is
 *   registered: CBC's handler would echo every message it forwards to
 *   stdout).
 * - Time: CBC counts elapsed time ("timeMode elapsed") and stops at
 *   "seconds"; it checks the clock between nodes and inside its
 *   heuristics, not inside its preprocessing and root LP, so the caller
 *   passes a deadline early by the model's size (checkmate.c).  No
 *   callback is registered at all: with a cut callback (the only one
 *   the C API offers that runs during the search) CBC 2.10.8 crashes in
 *   CglPreProcess on infeasible models, and its message callback would
 *   echo every message to stdout.  So CBC reports no progress while it
 *   runs; the caller reports before and after.
 * - A warm start goes in through Cbc_setMIPStartI (every integer column);
 *   CBC fixes the integers, solves the LP for the rest and keeps it as
 *   its first incumbent.
 * - LP relaxations (opts->relax) load no integer columns: Cbc_solve then
 *   runs Clp alone.
 * - Isolation: CBC 2.10.8 can crash (CglPreProcess::postProcess when its
 *   time limit strikes during preprocessing) and can overrun its time
 *   limit by minutes on large models, so remat_i_milp_solve() runs this
 *   backend in a child process (isolate.c); this file is the solve
 *   itself, in whatever process calls it.
 */
#include <coin/Cbc_C_Interface.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/planner.h"
#include "solver/milp.h"

int remat_i_milp_solve_cbc(const struct remat_i_milp *m,
		      const struct remat_i_milp_opts *opts,
		      struct remat_i_milp_result *res, struct remat_error *err)
{
	const struct remat_i_milp_opts *o = opts;
	Cbc_Model *cbc = NULL;
	int *start = NULL, *index = NULL, *cnt = NULL, *sidx = NULL;
	double *value = NULL, *sval = NULL, *rlo = NULL, *rup = NULL;
	double *clo = NULL, *cup = NULL;
	int rc = REMAT_OK, nint = 0, has_int = 0;
	int32_t i, j;
	int64_t k;
	char buf[64];

	remat_i_milp_result_init(res);
	if (m->nnz > 0x7fffffff)
		return REMAT_FAIL(err, REMAT_EUSAGE, "the MILP has too many nonzeros for CBC");
	start = calloc((size_t)m->ncols + 1, sizeof(int));
	cnt = calloc((size_t)m->ncols + 1, sizeof(int));
	index = malloc(sizeof(int) * (size_t)(m->nnz + 1));
	value = malloc(sizeof(double) * (size_t)(m->nnz + 1));
	rlo = malloc(sizeof(double) * ((size_t)m->nrows + 1));
	rup = malloc(sizeof(double) * ((size_t)m->nrows + 1));
	clo = malloc(sizeof(double) * ((size_t)m->ncols + 1));
	cup = malloc(sizeof(double) * ((size_t)m->ncols + 1));
	res->x = malloc(sizeof(double) * ((size_t)m->ncols + 1));
	if (!start || !cnt || !index || !value || !rlo || !rup || !clo || !cup || !res->x) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for CBC");
		goto done;
	}
	/* CSR -> CSC. */
	for (k = 0; k < m->nnz; k++)
		start[m->row_idx[k] + 1]++;
	for (j = 0; j < m->ncols; j++)
		start[j + 1] += start[j];
	for (i = 0; i < m->nrows; i++)
		for (k = m->row_off[i]; k < m->row_off[i + 1]; k++) {
			int32_t col = m->row_idx[k];
			int pos = start[col] + cnt[col]++;

			index[pos] = i;
			value[pos] = m->row_val[k];
		}
	/* CBC's infinity is DBL_MAX-like; HUGE_VAL maps to it. */
	for (i = 0; i < m->nrows; i++) {
		rlo[i] = isinf(m->rlo[i]) ? -1e300 : m->rlo[i];
		rup[i] = isinf(m->rup[i]) ? 1e300 : m->rup[i];
	}
	for (j = 0; j < m->ncols; j++) {
		clo[j] = isinf(m->clo[j]) ? -1e300 : m->clo[j];
		cup[j] = isinf(m->cup[j]) ? 1e300 : m->cup[j];
		if (m->is_int[j])
			has_int = 1;
	}

	cbc = Cbc_newModel();
	Cbc_loadProblem(cbc, m->ncols, m->nrows, start, index, value, clo, cup, m->obj,
			rlo, rup);
	Cbc_setObjSense(cbc, 1);
	Cbc_setLogLevel(cbc, 0);
	if (!o->relax && has_int) {
		for (j = 0; j < m->ncols; j++)
			if (m->is_int[j])
				Cbc_setInteger(cbc, j);
		Cbc_setParameter(cbc, "log", "0");
		Cbc_setParameter(cbc, "slog", "0");
		Cbc_setParameter(cbc, "timeMode", "elapsed");
		if (o->deadline > 0) {
			double left = o->deadline - remat_now();

			if (left <= 0) {
				res->status = REMAT_I_MILP_NOSOLUTION;
				res->stopped = 1;
				goto done;
			}
			snprintf(buf, sizeof(buf), "%.3f", left);
			Cbc_setParameter(cbc, "sec", buf);
		}
		if (o->no_preprocess)
			Cbc_setParameter(cbc, "preprocess", "off");
		if (o->max_nodes > 0)
			Cbc_setMaximumNodes(cbc, o->max_nodes > 0x7fffffff ? 0x7fffffff
					    : (int)o->max_nodes);
		if (o->gap > 0) {
			snprintf(buf, sizeof(buf), "%.17g", o->gap);
			Cbc_setParameter(cbc, "ratioGap", buf);
		}
		if (o->start) {
			sidx = malloc(sizeof(int) * ((size_t)m->ncols + 1));
			sval = malloc(sizeof(double) * ((size_t)m->ncols + 1));
			if (!sidx || !sval) {
				rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for CBC");
				goto done;
			}
			for (j = 0; j < m->ncols; j++)
				if (m->is_int[j]) {
					sidx[nint] = j;
					sval[nint] = floor(o->start[j] + 0.5);
					nint++;
				}
			Cbc_setMIPStartI(cbc, nint, sidx, sval);
		}
	}
	Cbc_solve(cbc);

	if (o->relax || !has_int) {
		if (Cbc_isProvenOptimal(cbc)) {
			res->status = REMAT_I_MILP_OPTIMAL;
			res->obj = Cbc_getObjValue(cbc) + m->obj_const;
			res->bound = res->obj;
			memcpy(res->x, Cbc_getColSolution(cbc), sizeof(double) * (size_t)m->ncols);
		} else if (Cbc_isProvenInfeasible(cbc)) {
			res->status = REMAT_I_MILP_INFEASIBLE;
		} else {
			rc = REMAT_FAIL(err, REMAT_EINTERNAL, "CBC (Clp) could not solve the LP "
					"relaxation (abandoned: %d)", Cbc_isAbandoned(cbc));
		}
		goto done;
	}
	{
		const double *best = Cbc_bestSolution(cbc);
		int status = Cbc_status(cbc), second = Cbc_secondaryStatus(cbc);

		res->nodes = Cbc_getNodeCount(cbc);
		res->stopped = Cbc_isSecondsLimitReached(cbc) || second == 4;
		if (status == 2 || Cbc_isAbandoned(cbc)) {
			rc = REMAT_FAIL(err, REMAT_EINTERNAL,
					"CBC abandoned the search (numerical difficulties)");
			goto done;
		}
		if (best) {
			memcpy(res->x, best, sizeof(double) * (size_t)m->ncols);
			res->obj = remat_i_milp_value(m, res->x);
		}
		if (status == 0 && Cbc_isProvenOptimal(cbc) && best) {
			res->status = REMAT_I_MILP_OPTIMAL;
			res->bound = res->obj;
		} else if (status == 0 && Cbc_isProvenInfeasible(cbc) && !best) {
			res->status = REMAT_I_MILP_INFEASIBLE;
		} else if (best) {
			double b = Cbc_getBestPossibleObjValue(cbc) + m->obj_const;

			res->status = REMAT_I_MILP_FEASIBLE;
			if (isfinite(b) && b <= res->obj + 1e-9 * fabs(res->obj))
				res->bound = b;
			if (second == 2)
				res->status = REMAT_I_MILP_OPTIMAL; /* stopped on the gap */
		} else {
			double b = Cbc_getBestPossibleObjValue(cbc) + m->obj_const;

			res->status = REMAT_I_MILP_NOSOLUTION;
			if (isfinite(b) && fabs(b) < 1e299)
				res->bound = b;
		}
	}
done:
	if (rc != REMAT_OK || (res->status != REMAT_I_MILP_OPTIMAL &&
			       res->status != REMAT_I_MILP_FEASIBLE)) {
		free(res->x);
		res->x = NULL;
	}
	if (cbc)
		Cbc_deleteModel(cbc);
	free(start);
	free(cnt);
	free(index);
	free(value);
	free(rlo);
	free(rup);
	free(clo);
	free(cup);
	free(sidx);
	free(sval);
	return rc;
}
