/*
 * milp_glpk.c - the GLPK 5.0 backend of milp.h.
 *
 * Pitfalls measured on GLPK 5.0 (Debian 12) and what is
 * done about each:
 * - GLPK aborts the process on API misuse: glp_error_hook is installed
 *   for the duration of the call and longjmps back here, where the GLPK
 *   environment is freed and the error becomes REMAT_EINTERNAL.
 * - tm_lim is not hard in glp_intopt: the branch-and-bound callback
 *   checks the wall clock and calls glp_ios_terminate; tm_lim is still
 *   set for the LP phases, which do respect it.
 * - glp_intopt can return 0 with no feasible solution: the status comes
 *   from glp_mip_status, never from the return code alone.
 * - glp_ios_heur_sol works only with the MIP presolver off and needs an
 *   optimal LP basis first (glp_simplex), and it checks neither rows nor
 *   bounds: the caller validates the incumbent before handing it over.
 * - There is no API for the best bound after the return: it is tracked
 *   in the callback (glp_ios_best_node / glp_ios_node_bound).
 * - Terminal output is switched off, and a terminal hook swallows what
 *   GLPK prints anyway (its error handler switches output back on and
 *   writes to stdout); the first line of an error message is kept for
 *   the caller's error.
 */
#include <glpk.h>
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "remat/planner.h"
#include "solver/milp.h"

struct glpk_ctx {
	jmp_buf jump;
	const struct remat_i_milp *m;
	const struct remat_i_milp_opts *opts;
	struct remat_i_milp_result *res;
	double *start1;      /* 1-based incumbent for glp_ios_heur_sol */
	int start_given;
	double last_report;
	double bound;        /* best bound seen in the callback */
	int stopped;
	glp_prob *P;
	char msg[200];       /* first line GLPK printed, for errors */
	size_t msg_len;
};

static int glpk_sink(void *info, const char *s)
{
	struct glpk_ctx *c = info;

	while (*s && *s != '\n' && c->msg_len + 1 < sizeof(c->msg) &&
	       !memchr(c->msg, '\n', c->msg_len))
		c->msg[c->msg_len++] = *s++;
	if (*s == '\n' && c->msg_len + 1 < sizeof(c->msg) && !memchr(c->msg, '\n', c->msg_len))
		c->msg[c->msg_len++] = '\n';
	c->msg[c->msg_len] = '\0';
	return 1; /* nothing reaches the terminal */
}

static void glpk_hook(void *info)
{
	struct glpk_ctx *c = info;

	longjmp(c->jump, 1);
}

static int ms_left(double deadline)
{
	double left;

	if (deadline <= 0)
		return 0x7fffffff;
	left = (deadline - remat_now()) * 1000;
	if (left < 1)
		return 1;
	if (left > 0x7fffffff)
		return 0x7fffffff;
	return (int)left;
}

static void glpk_callback(glp_tree *tree, void *info)
{
	struct glpk_ctx *c = info;
	int reason = glp_ios_reason(tree), best;
	double now = remat_now();

	if (c->opts->deadline > 0 && now >= c->opts->deadline) {
		c->stopped = 1;
		glp_ios_terminate(tree);
		return;
	}
	if (reason == GLP_IHEUR && c->start1 && !c->start_given) {
		/* Once, at the root: GLPK keeps it if it beats what it has. */
		c->start_given = 1;
		glp_ios_heur_sol(tree, c->start1);
	}
	best = glp_ios_best_node(tree);
	if (best > 0) {
		double b = glp_ios_node_bound(tree, best);

		if (isnan(c->bound) || b > c->bound)
			c->bound = b;
	}
	if (c->opts->progress && now - c->last_report >= 0.2) {
		glp_prob *P = glp_ios_get_prob(tree);
		double inc = NAN;

		c->last_report = now;
		if (glp_mip_status(P) == GLP_FEAS || glp_mip_status(P) == GLP_OPT)
			inc = glp_mip_obj_val(P);
		c->opts->progress(c->opts->progress_ctx, inc, c->bound);
	}
}

/* GLPK's kind of bounds for [lo, up] (either may be infinite). */
static int bounds_type(double lo, double up)
{
	if (isinf(lo) && isinf(up))
		return GLP_FR;
	if (isinf(up))
		return GLP_LO;
	if (isinf(lo))
		return GLP_UP;
	return lo == up ? GLP_FX : GLP_DB;
}

static void load(glp_prob *P, const struct remat_i_milp *m, int *ia, int *ja, double *ar)
{
	int32_t i, j;
	int64_t k, ne = 0;

	glp_set_obj_dir(P, GLP_MIN);
	glp_set_obj_coef(P, 0, m->obj_const);
	if (m->ncols > 0)
		glp_add_cols(P, m->ncols);
	if (m->nrows > 0)
		glp_add_rows(P, m->nrows);
	for (j = 0; j < m->ncols; j++) {
		double lo = m->clo[j], up = m->cup[j];
		int type = bounds_type(lo, up);

		/*
		 * The kind first: GLP_BV also sets the bounds to [0, 1], which
		 * would undo a column fixed at 1 (lo == up == 1).
		 */
		if (m->is_int[j])
			glp_set_col_kind(P, j + 1, lo >= 0 && up <= 1 ? GLP_BV : GLP_IV);
		glp_set_col_bnds(P, j + 1, type, isinf(lo) ? 0 : lo, isinf(up) ? 0 : up);
		glp_set_obj_coef(P, j + 1, m->obj[j]);
	}
	for (i = 0; i < m->nrows; i++) {
		double lo = m->rlo[i], up = m->rup[i];
		int type = bounds_type(lo, up);

		glp_set_row_bnds(P, i + 1, type, isinf(lo) ? 0 : lo, isinf(up) ? 0 : up);
		for (k = m->row_off[i]; k < m->row_off[i + 1]; k++) {
			ne++;
			ia[ne] = i + 1;
			ja[ne] = m->row_idx[k] + 1;
			ar[ne] = m->row_val[k];
		}
	}
	glp_load_matrix(P, (int)ne, ia, ja, ar);
}

/* Everything that calls GLPK; a GLPK error longjmps out of here. */
static int run(struct glpk_ctx *c, int *ia, int *ja, double *ar, struct remat_error *err)
{
	const struct remat_i_milp *m = c->m;
	const struct remat_i_milp_opts *o = c->opts;
	struct remat_i_milp_result *res = c->res;
	glp_smcp smcp;
	glp_iocp iocp;
	int rc, st, have_x = 0;
	int32_t j;

	c->P = glp_create_prob();
	load(c->P, m, ia, ja, ar);
	/* Byte-sized coefficients next to binaries: scale, or simplex fails. */
	glp_scale_prob(c->P, GLP_SF_AUTO);
	glp_init_smcp(&smcp);
	smcp.msg_lev = GLP_MSG_OFF;
	smcp.presolve = GLP_OFF;
	smcp.tm_lim = ms_left(o->deadline);

	if (o->relax) {
		smcp.presolve = GLP_ON;
		rc = glp_simplex(c->P, &smcp);
		st = glp_get_status(c->P);
		if (st == GLP_OPT) {
			res->status = REMAT_I_MILP_OPTIMAL;
			have_x = 1;
		} else if (st == GLP_NOFEAS || (rc == 0 && st == GLP_INFEAS)) {
			res->status = REMAT_I_MILP_INFEASIBLE;
		} else if (rc == GLP_ETMLIM) {
			res->status = REMAT_I_MILP_NOSOLUTION;
			res->stopped = 1;
		} else {
			return REMAT_FAIL(err, REMAT_EINTERNAL,
					  "GLPK simplex failed (return %d, status %d)", rc, st);
		}
		if (have_x) {
			res->obj = glp_get_obj_val(c->P);
			res->bound = res->obj;
			for (j = 0; j < m->ncols; j++)
				res->x[j] = glp_get_col_prim(c->P, j + 1);
		}
		return REMAT_OK;
	}

	glp_init_iocp(&iocp);
	iocp.msg_lev = GLP_MSG_OFF;
	iocp.cb_func = glpk_callback;
	iocp.cb_info = c;
	iocp.mip_gap = o->gap;
	/*
	 * GLPK's default 1e-5 lets a "zero" binary carry 1e-5 of a value of
	 * 10^5 bytes-units into the memory rows: solutions that round to
	 * over budget (seen on an 8-layer chain with 4-byte GCD).
	 */
	iocp.tol_int = 1e-9;
	if (c->start1) {
		/* glp_ios_heur_sol needs the presolver off and an optimal root LP. */
		glp_adv_basis(c->P, 0);
		rc = glp_simplex(c->P, &smcp);
		st = glp_get_status(c->P);
		if (rc == GLP_ETMLIM || (o->deadline > 0 && remat_now() >= o->deadline)) {
			res->stopped = 1;
			res->status = REMAT_I_MILP_NOSOLUTION;
			return REMAT_OK;
		}
		if (st == GLP_NOFEAS)
			return REMAT_FAIL(err, REMAT_EINTERNAL, "GLPK: the LP relaxation is "
					  "infeasible although an incumbent was given");
		if (rc != 0 || st != GLP_OPT)
			return REMAT_FAIL(err, REMAT_EINTERNAL,
					  "GLPK simplex failed (return %d, status %d)", rc, st);
		iocp.presolve = GLP_OFF;
	} else {
		iocp.presolve = GLP_ON;
	}
	iocp.tm_lim = ms_left(o->deadline);
	rc = glp_intopt(c->P, &iocp);
	st = glp_mip_status(c->P);
	res->stopped = c->stopped || rc == GLP_ETMLIM;
	if (rc == GLP_ENOPFS || st == GLP_NOFEAS) {
		res->status = REMAT_I_MILP_INFEASIBLE;
	} else if (rc == 0 && st == GLP_OPT) {
		res->status = REMAT_I_MILP_OPTIMAL;
		have_x = 1;
	} else if ((rc == GLP_ESTOP || rc == GLP_ETMLIM || rc == GLP_EMIPGAP || rc == 0) &&
		   (st == GLP_FEAS || st == GLP_OPT)) {
		/* A gap stop is as good as optimal for the caller's gap. */
		res->status = rc == GLP_EMIPGAP ? REMAT_I_MILP_OPTIMAL : REMAT_I_MILP_FEASIBLE;
		have_x = 1;
	} else if (rc == GLP_ESTOP || rc == GLP_ETMLIM) {
		res->status = REMAT_I_MILP_NOSOLUTION;
		res->stopped = 1;
	} else {
		return REMAT_FAIL(err, REMAT_EINTERNAL,
				  "GLPK branch-and-bound failed (return %d, status %d)", rc, st);
	}
	if (have_x) {
		res->obj = glp_mip_obj_val(c->P);
		for (j = 0; j < m->ncols; j++)
			res->x[j] = glp_mip_col_val(c->P, j + 1);
	}
	if (res->status == REMAT_I_MILP_OPTIMAL)
		res->bound = rc == GLP_EMIPGAP && !isnan(c->bound) ? c->bound : res->obj;
	else
		res->bound = c->bound;
	return REMAT_OK;
}

int remat_i_milp_solve_glpk(const struct remat_i_milp *m,
			    const struct remat_i_milp_opts *opts,
			    struct remat_i_milp_result *res, struct remat_error *err)
{
	/* volatile: read after a longjmp. */
	struct glpk_ctx *volatile c = NULL;
	int *volatile ia = NULL;
	int *volatile ja = NULL;
	double *volatile ar = NULL;
	volatile int rc = REMAT_OK, term;
	int32_t j;

	remat_i_milp_result_init(res);
	c = calloc(1, sizeof(*c));
	ia = malloc(sizeof(int) * (size_t)(m->nnz + 1));
	ja = malloc(sizeof(int) * (size_t)(m->nnz + 1));
	ar = malloc(sizeof(double) * (size_t)(m->nnz + 1));
	res->x = malloc(sizeof(double) * ((size_t)m->ncols + 1));
	if (!c || !ia || !ja || !ar || !res->x) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for GLPK");
		goto done;
	}
	c->m = m;
	c->opts = opts;
	c->res = res;
	c->bound = NAN;
	if (opts->start && !opts->relax) {
		c->start1 = malloc(sizeof(double) * ((size_t)m->ncols + 1));
		if (!c->start1) {
			rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for GLPK");
			goto done;
		}
		c->start1[0] = 0;
		for (j = 0; j < m->ncols; j++)
			c->start1[j + 1] = opts->start[j];
	}
	term = glp_term_out(GLP_OFF);
	glp_term_hook(glpk_sink, c);
	if (setjmp(c->jump) == 0) {
		glp_error_hook(glpk_hook, c);
		rc = run(c, ia, ja, ar, err);
		glp_error_hook(NULL, NULL);
		glp_delete_prob(c->P);
		c->P = NULL;
		glp_term_hook(NULL, NULL);
		glp_term_out(term);
	} else {
		char *nl = strchr(c->msg, '\n');

		/* GLPK's state is unusable after an error: drop all of it. */
		glp_error_hook(NULL, NULL);
		glp_term_hook(NULL, NULL);
		glp_free_env();
		if (nl)
			*nl = '\0';
		rc = REMAT_FAIL(err, REMAT_EINTERNAL, "GLPK reported an internal error: %s",
				c->msg[0] ? c->msg : "(no message)");
	}
done:
	if (rc != REMAT_OK || (res->status != REMAT_I_MILP_OPTIMAL &&
			       res->status != REMAT_I_MILP_FEASIBLE)) {
		free(res->x);
		res->x = NULL;
	}
	if (c)
		free(c->start1);
	free(c);
	free(ia);
	free(ja);
	free(ar);
	return rc;
}
