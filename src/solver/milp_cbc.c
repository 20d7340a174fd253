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
 *   limit by minutes on large models.  So the solve runs in a forked
 *   child that sends its result back through a pipe; the parent kills it
 *   CBC_GRACE seconds after the deadline and treats a crash or a kill as
 *   "stopped without a solution" (the caller still has its warm start).
 *   The child only runs CBC and _exit()s, which is safe after fork() in
 *   the single-threaded CLI; a multithreaded library user should know
 *   that the CBC backend forks.
 */
#include <coin/Cbc_C_Interface.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remat/planner.h"
#include "solver/milp.h"

static int solve_here(const struct remat_i_milp *m,
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

/* Seconds the child may overrun the deadline before it is killed. */
#define CBC_GRACE 0.5

struct wire {
	int rc;
	int status;
	int stopped;
	int has_x;
	double obj, bound;
	int64_t nodes;
	char msg[sizeof(((struct remat_error *)0)->msg)];
};

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * Read len bytes from fd before the deadline (0: none).  Returns 0 when
 * done, -1 on end of file or error, 1 when the deadline passed.
 */
static int read_all(int fd, void *buf, size_t len, double deadline)
{
	char *p = buf;

	while (len > 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int timeout = -1, pr;
		ssize_t r;

		if (deadline > 0) {
			double left = deadline - remat_now();

			if (left <= 0)
				return 1;
			timeout = (int)(left * 1000) + 1;
		}
		pr = poll(&pfd, 1, timeout);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -1;
		if (pr == 0)
			return 1;
		r = read(fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

int remat_i_milp_solve_cbc(const struct remat_i_milp *m,
			   const struct remat_i_milp_opts *opts,
			   struct remat_i_milp_result *res, struct remat_error *err)
{
	struct wire w;
	double limit = opts->deadline > 0 ? opts->deadline + CBC_GRACE : 0;
	int fds[2], got, wstatus;
	pid_t pid;

	remat_i_milp_result_init(res);
	if (pipe(fds) != 0)
		return REMAT_FAIL(err, REMAT_EINTERNAL, "cannot run CBC: pipe: %s",
				  strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return REMAT_FAIL(err, REMAT_EINTERNAL, "cannot run CBC: fork: %s",
				  strerror(errno));
	}
	if (pid == 0) {
		struct remat_i_milp_result r;
		struct remat_error e;

		close(fds[0]);
		remat_error_clear(&e);
		memset(&w, 0, sizeof(w));
		w.rc = solve_here(m, opts, &r, &e);
		w.status = r.status;
		w.stopped = r.stopped;
		w.has_x = w.rc == REMAT_OK && r.x != NULL;
		w.obj = r.obj;
		w.bound = r.bound;
		w.nodes = r.nodes;
		memcpy(w.msg, e.msg, sizeof(w.msg));
		if (write_all(fds[1], &w, sizeof(w)) == 0 && w.has_x)
			write_all(fds[1], r.x, sizeof(double) * (size_t)m->ncols);
		_exit(0);
	}
	close(fds[1]);
	memset(&w, 0, sizeof(w));
	got = read_all(fds[0], &w, sizeof(w), limit);
	if (got == 0 && w.rc == REMAT_OK && w.has_x) {
		res->x = malloc(sizeof(double) * ((size_t)m->ncols + 1));
		if (!res->x) {
			got = -2;
		} else {
			got = read_all(fds[0], res->x, sizeof(double) * (size_t)m->ncols, limit);
			if (got != 0) {
				free(res->x);
				res->x = NULL;
			}
		}
	}
	close(fds[0]);
	if (got != 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	if (got == -2)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for CBC's solution");
	if (got != 0) {
		/* Killed at the deadline, or CBC crashed: no solution from it. */
		res->status = REMAT_I_MILP_NOSOLUTION;
		res->stopped = 1;
		return REMAT_OK;
	}
	if (w.rc != REMAT_OK)
		return REMAT_FAIL(err, w.rc, "%s", w.msg);
	res->status = w.status;
	res->stopped = w.stopped;
	res->obj = w.obj;
	res->bound = w.bound;
	res->nodes = w.nodes;
	return REMAT_OK;
}
