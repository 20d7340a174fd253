/*
 * isolate.c - every MILP solve runs in a child process, killed at its
 * deadline.
 *
 * Why: neither backend stops on time by itself.  GLPK checks no clock in
 * glp_scale_prob or its presolve (73 s for a 2 s limit on a 300-node
 * training graph); CBC 2.10.8 checks none in its preprocessing and root
 * LP, overruns by minutes on large models, and can crash
 * (CglPreProcess::postProcess when its time limit strikes during
 * preprocessing).  So remat_i_milp_solve() forks; the child runs the
 * backend and sends back, through a pipe, progress records (GLPK's
 * callback still reaches the caller's progress function, from here) and
 * then its result; the parent kills the child GRACE seconds after the
 * deadline and treats a kill or a crash as "stopped without a solution"
 * (the caller still has its warm start).  The child dies with remat if
 * remat is killed (core/proc.c).
 *
 * The child only runs the solver and _exit()s, which is safe after
 * fork() in a single-threaded process.  remat's own threads (the order
 * search's climbers) are joined before any solve of the same plan;
 * remat_i_threads_add() counts them.  Plans run by several threads of a
 * library user meet at a gate: a solve waits, until its deadline, for
 * the other plans' climbers to end (and then says it stopped without a
 * solution, as at a deadline), and climbers wait to start while a solve
 * forks.  (A solve used to refuse with REMAT_EINTERNAL: an outside review
 * ran lns and checkmate in two threads, and 7 of 10 checkmate runs
 * failed.)  The gate is not fair: a plan starting climbers again and
 * again can keep a waiting solve out to its deadline (one without a
 * deadline waits as long).  Threads of the user's own still see a fork.
 *
 * A child that dies by a signal the parent did not send (CBC 2.10.8's
 * SIGSEGV in CglPreProcess::postProcess: issue 36, see lns.c) is counted:
 * res->crashed says which signal, and remat_i_milp_crashes() keeps the
 * thread's total, which the plan's report carries to the user.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remat/planner.h"
#include "core/proc.h"
#include "solver/milp.h"

/* In the child: stdout and stderr to /dev/null (the result goes through the pipe). */
static void quiet_child(void)
{
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return;
	(void)dup2(fd, STDOUT_FILENO);
	(void)dup2(fd, STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
}

static _Thread_local int64_t crashes;
static _Thread_local int crash_signal;

/* The gate: climbers running, solves forking, under gate_mu. */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int threads_running, forking;

int64_t remat_i_milp_crashes(int *last_signal)
{
	if (last_signal)
		*last_signal = crash_signal;
	return crashes;
}

void remat_i_threads_add(int delta)
{
	pthread_mutex_lock(&gate_mu);
	while (delta > 0 && forking)
		pthread_cond_wait(&gate_cv, &gate_mu);
	threads_running += delta;
	if (threads_running == 0)
		pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
}

/*
 * Wait until no climber runs, then hold the gate for a fork (1); 0 when
 * the solver's deadline (0: none) passes or *stop is set first.
 */
static int gate_enter(double deadline, const volatile sig_atomic_t *stop)
{
	int ok;

	pthread_mutex_lock(&gate_mu);
	while (threads_running > 0 && !(stop && *stop) &&
	       (deadline <= 0 || remat_now() < deadline)) {
		/* Short waits: the deadline and the stop flag are polled. */
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 10 * 1000 * 1000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&gate_cv, &gate_mu, &ts);
	}
	ok = threads_running == 0;
	if (ok)
		forking++;
	pthread_mutex_unlock(&gate_mu);
	return ok;
}

static void gate_leave(void)
{
	pthread_mutex_lock(&gate_mu);
	forking--;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
}

/* Seconds the child may overrun the deadline before it is killed. */
#define GRACE 0.25

/*
 * The solver's deadline and the kill time: deadline + GRACE (or the
 * caller's grace: CBC's cut generators check no clock, and on a large
 * model one round takes seconds), or, with a
 * hard time, the solver stops up to GRACE before it (at most half the
 * time left) so that its result still arrives by it.
 */
static void times(const struct remat_i_milp_opts *opts, double *solver, double *kill_at)
{
	double margin;

	*solver = opts->deadline;
	*kill_at = opts->deadline > 0 ? opts->deadline + (opts->grace > 0 ? opts->grace : GRACE)
				      : 0;
	if (opts->hard <= 0)
		return;
	margin = fmin(GRACE, 0.5 * fmax(opts->hard - remat_now(), 0));
	if (*solver <= 0 || *solver > opts->hard - margin)
		*solver = opts->hard - margin;
	if (*kill_at <= 0 || *kill_at > opts->hard)
		*kill_at = opts->hard;
}

enum { REC_PROGRESS = 1, REC_RESULT = 2 };

struct record {
	int32_t tag;
	int32_t rc;
	int32_t status;
	int32_t stopped;
	int32_t has_x;
	double obj, bound, incumbent;
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
 * Read len bytes from fd before the deadline (0: none) and before *stop
 * is set (stop may be NULL; a signal that sets it interrupts poll(), and
 * poll wakes up every 100 ms in any case).  Returns 0 when done, -1 on
 * end of file or error, 1 when the deadline passed or stop was set.
 */
/* What the parent shows while the child is silent (CBC reports nothing). */
struct ticker {
	const struct remat_i_milp_opts *opts;
	double incumbent, bound;  /* the last the child sent */
	double last;              /* when progress was last reported */
};

/* Report progress again (the elapsed time moves) once a second. */
static void tick(struct ticker *t)
{
	double now;

	if (!t || !t->opts->progress)
		return;
	now = remat_now();
	if (now - t->last < 1.0)
		return;
	t->last = now;
	t->opts->progress(t->opts->progress_ctx, t->incumbent, t->bound);
}

static int read_all(int fd, void *buf, size_t len, double deadline,
		    const volatile sig_atomic_t *stop, struct ticker *tk)
{
	char *p = buf;

	while (len > 0) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int timeout = stop || tk ? 100 : -1, pr;
		ssize_t r;

		tick(tk);
		if (stop && *stop)
			return 1;
		if (deadline > 0) {
			double left = deadline - remat_now();

			if (left <= 0)
				return 1;
			if (timeout < 0 || left * 1000 + 1 < timeout)
				timeout = (int)(left * 1000) + 1;
		}
		pr = poll(&pfd, 1, timeout);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -1;
		if (pr == 0)
			continue; /* the checks at the top say why it woke */
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

/* In the child: the backend's progress goes to the parent as a record. */
static void forward_progress(void *ctx, double incumbent, double bound)
{
	struct record r;

	memset(&r, 0, sizeof(r));
	r.tag = REC_PROGRESS;
	r.incumbent = incumbent;
	r.bound = bound;
	write_all(*(int *)ctx, &r, sizeof(r));
}

static void child(remat_i_milp_solve_fn solve, const struct remat_i_milp *m,
		  const struct remat_i_milp_opts *opts, int fd)
{
	struct remat_i_milp_opts o = *opts;
	struct remat_i_milp_result res;
	struct remat_error e;
	struct record r;

	if (o.progress) {
		o.progress = forward_progress;
		o.progress_ctx = &fd;
	}
	/* Whole records: no byte of the pipe's is left uninitialised (valgrind). */
	memset(&e, 0, sizeof(e));
	remat_i_milp_result_init(&res);
	memset(&r, 0, sizeof(r));
	r.tag = REC_RESULT;
	r.rc = solve(m, &o, &res, &e);
	r.status = res.status;
	r.stopped = res.stopped;
	r.has_x = r.rc == REMAT_OK && res.x != NULL;
	r.obj = res.obj;
	r.bound = res.bound;
	r.nodes = res.nodes;
	memcpy(r.msg, e.msg, sizeof(r.msg));
	if (write_all(fd, &r, sizeof(r)) == 0 && r.has_x)
		write_all(fd, res.x, sizeof(double) * (size_t)m->ncols);
	_exit(0);
}

int remat_i_milp_isolate(remat_i_milp_solve_fn solve, const char *name,
			 const struct remat_i_milp *m, const struct remat_i_milp_opts *opts,
			 struct remat_i_milp_result *res, struct remat_error *err)
{
	struct record r;
	struct remat_i_milp_opts co = *opts;
	double limit;
	int fds[2], got, wstatus;
	pid_t pid, parent = getpid();
	struct ticker tk;

	remat_i_milp_result_init(res);
	times(opts, &co.deadline, &limit);
	if (!gate_enter(co.deadline, opts->stop)) {
		/* Other plans' threads ran to the deadline (or a stop): no solution. */
		res->status = REMAT_I_MILP_NOSOLUTION;
		res->stopped = 1;
		return REMAT_OK;
	}
	if (pipe(fds) != 0) {
		gate_leave();
		return REMAT_FAIL(err, REMAT_EINTERNAL, "cannot run %s: pipe: %s", name,
				  strerror(errno));
	}
	fflush(NULL);
	pid = fork();
	if (pid != 0)
		gate_leave();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return REMAT_FAIL(err, REMAT_EINTERNAL, "cannot run %s: fork: %s", name,
				  strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		remat_i_die_with_parent(parent);
		/* Ctrl-C is the parent's to handle: it stops the child. */
		signal(SIGINT, SIG_IGN);
		/*
		 * The solver's own prints (CBC's cut generators write to stdout on
		 * some models: "2mir_test: why does constraint not exist ?") are
		 * not remat's output: a --json on stdout stays one JSON object.
		 */
		quiet_child();
		child(solve, m, &co, fds[1]);
	}
	close(fds[1]);
	memset(&r, 0, sizeof(r));
	tk.opts = opts;
	tk.incumbent = tk.bound = NAN;
	tk.last = remat_now();
	while ((got = read_all(fds[0], &r, sizeof(r), limit, opts->stop, &tk)) == 0 &&
	       r.tag == REC_PROGRESS) {
		tk.incumbent = r.incumbent;
		tk.bound = r.bound;
		tk.last = remat_now();
		if (opts->progress)
			opts->progress(opts->progress_ctx, r.incumbent, r.bound);
	}
	if (got == 0 && r.tag != REC_RESULT)
		got = -1;
	if (got == 0 && r.rc == REMAT_OK && r.has_x) {
		res->x = malloc(sizeof(double) * ((size_t)m->ncols + 1));
		if (!res->x) {
			got = -2;
		} else {
			got = read_all(fds[0], res->x, sizeof(double) * (size_t)m->ncols, limit,
				       opts->stop, NULL);
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
	/*
	 * Our SIGKILL (deadline, stop, or after the pipe broke) ends a child
	 * that is still alive; one that died of anything else before it
	 * answered crashed.  A SIGKILL when the child had not answered and we
	 * had not given up on it (got == -1: it closed the pipe) is someone
	 * else's (the OOM killer): a crash too.
	 */
	if (got != 0 && WIFSIGNALED(wstatus) &&
	    (WTERMSIG(wstatus) != SIGKILL || got == -1)) {
		res->crashed = WTERMSIG(wstatus);
		crashes++;
		crash_signal = res->crashed;
	}
	if (got == -2)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for %s's solution", name);
	if (got != 0) {
		/* Killed at the deadline or on stop, or it crashed: no solution. */
		res->status = REMAT_I_MILP_NOSOLUTION;
		res->stopped = 1;
		return REMAT_OK;
	}
	if (r.rc != REMAT_OK)
		return REMAT_FAIL(err, r.rc, "%s", r.msg);
	res->status = r.status;
	res->stopped = r.stopped;
	res->obj = r.obj;
	res->bound = r.bound;
	res->nodes = r.nodes;
	return REMAT_OK;
}
