/*
 * bench.c - batch benchmarking: choosing planners, finding graph files,
 * expanding graphs x planners x budgets into jobs, and running them in a
 * pool of forked children.  See bench.h.
 *
 * Why fork: a planner that crashes, leaks or ignores its deadline must not
 * take a 10,000-run sweep down with it.  Each child inherits the loaded
 * graphs (copy-on-write), does one run, and writes its fixed-size row to a
 * pipe in one write() (smaller than PIPE_BUF, hence atomic).  The parent
 * polls the pipes, kills children past their limit, and reaps them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/proc.h"
#include "tool/bench.h"
#include "tool/suggest.h"
#include "core/util.h"

_Static_assert(sizeof(struct remat_i_row) <= PIPE_BUF,
	       "a row must fit in one atomic pipe write");

/* ---- planners ---- */

int remat_i_bench_planners(const char *spec, const struct remat_planner ***out,
			   int *n, struct remat_error *err)
{
	const struct remat_planner *const *all = remat_planner_list();
	const char *p = spec;
	uint8_t *on;
	int total = 0, i, k;

	*out = NULL;
	*n = 0;
	while (all[total])
		total++;
	on = calloc((size_t)total + 1, 1);
	if (!on)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char name[64];
		int neg = 0, found = 0;

		if (len > 0 && *p == '-') {
			neg = 1;
			p++;
			len--;
		}
		if (len == 0 || len >= sizeof(name)) {
			free(on);
			return REMAT_FAIL(err, REMAT_EUSAGE, "cannot read planner list '%s'",
					  spec);
		}
		memcpy(name, p, len);
		name[len] = '\0';
		for (i = 0; i < total; i++) {
			int hit;

			if (strcmp(name, "all") == 0)
				hit = 1;
			else if (strcmp(name, "fast") == 0)
				hit = strcmp(all[i]->name, "auto") == 0 ||
				      (all[i]->flags & REMAT_PLANNER_AUTO);
			else
				hit = strcmp(name, all[i]->name) == 0;
			if (hit) {
				on[i] = !neg;
				found = 1;
			}
		}
		if (!found) {
			const char *names[66];
			char near[200];
			int m = 0;

			for (i = 0; i < total && m < 63; i++)
				names[m++] = all[i]->name;
			names[m++] = "all";
			names[m++] = "fast";
			names[m] = NULL;
			free(on);
			if (remat_i_suggest(name, names, near, sizeof(near)))
				return REMAT_FAIL(err, REMAT_EUSAGE, "unknown planner '%s'; did you "
						  "mean %s? (see 'remat planners'; also 'all' and "
						  "'fast')", name, near);
			return REMAT_FAIL(err, REMAT_EUSAGE, "unknown planner '%s' (see 'remat "
					  "planners'; also 'all' and 'fast')", name);
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	*out = malloc(sizeof(**out) * ((size_t)total + 1));
	if (!*out) {
		free(on);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	for (i = 0, k = 0; i < total; i++)
		if (on[i])
			(*out)[k++] = all[i];
	*n = k;
	free(on);
	if (k == 0) {
		free(*out);
		*out = NULL;
		return REMAT_FAIL(err, REMAT_EUSAGE, "planner list '%s' selects no planner",
				  spec);
	}
	return REMAT_OK;
}

/* ---- graph files ---- */

struct file_list {
	char **v;
	uint8_t *dir;
	int n, cap;
};

static int fl_push(struct file_list *l, const char *path, size_t len, int from_dir)
{
	if (l->n == l->cap) {
		int ncap = l->cap ? 2 * l->cap : 32;
		char **nv = realloc(l->v, sizeof(char *) * (size_t)ncap);
		uint8_t *nd;

		if (!nv)
			return -1;
		l->v = nv;
		nd = realloc(l->dir, (size_t)ncap);
		if (!nd)
			return -1;
		l->dir = nd;
		l->cap = ncap;
	}
	l->v[l->n] = malloc(len + 1);
	if (!l->v[l->n])
		return -1;
	memcpy(l->v[l->n], path, len);
	l->v[l->n][len] = '\0';
	l->dir[l->n++] = (uint8_t)from_dir;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int wanted(const char *s, int with_csv)
{
	size_t len = strlen(s);

	return (len > 5 && strcmp(s + len - 5, ".json") == 0) ||
	       (with_csv && len > 4 && strcmp(s + len - 4, ".csv") == 0);
}

static int walk(struct file_list *l, const char *dir, int depth, int with_csv,
		struct remat_error *err)
{
	DIR *d;
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	int rc = REMAT_OK;

	if (depth > 32)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: folders nested too deep", dir);
	d = opendir(dir);
	if (!d)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: cannot read: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 32;
			char **nn = realloc(names, sizeof(char *) * ncap);

			if (!nn)
				goto oom;
			names = nn;
			cap = ncap;
		}
		if (!(names[n] = strdup(e->d_name)))
			goto oom;
		n++;
	}
	closedir(d);
	d = NULL;
	qsort(names, n, sizeof(char *), cmp_str);
	for (i = 0; i < n && rc == REMAT_OK; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(len);
		struct stat st;

		if (!path)
			goto oom;
		snprintf(path, len, "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			rc = walk(l, path, depth + 1, with_csv, err);
		else if (wanted(names[i], with_csv) && fl_push(l, path, strlen(path), 1))
			rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		free(path);
	}
	goto done;
oom:
	rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
done:
	if (d)
		closedir(d);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

void remat_i_bench_files_free(char **files, uint8_t *from_dir, int n)
{
	int i;

	for (i = 0; i < n; i++)
		free(files[i]);
	free(files);
	free(from_dir);
}

int remat_i_bench_files(const char *const *paths, int npaths, int with_csv,
			char ***files,
			uint8_t **from_dir, int *nfiles, struct remat_error *err)
{
	struct file_list l = { NULL, NULL, 0, 0 };
	int i, rc = REMAT_OK;

	for (i = 0; i < npaths && rc == REMAT_OK; i++) {
		struct stat st;
		size_t len = strlen(paths[i]);

		if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			char *dir = strdup(paths[i]);

			if (!dir) {
				rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
				break;
			}
			/* "examples/" and "examples" name the same files. */
			while (len > 1 && dir[len - 1] == '/')
				dir[--len] = '\0';
			rc = walk(&l, dir, 0, with_csv, err);
			free(dir);
		} else if (fl_push(&l, paths[i], len, 0)) {
			rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		}
	}
	if (rc) {
		remat_i_bench_files_free(l.v, l.dir, l.n);
		return rc;
	}
	*files = l.v;
	*from_dir = l.dir;
	*nfiles = l.n;
	return REMAT_OK;
}

int remat_i_bench_load(const char *file, int from_dir, struct remat_graph **out,
		       int *skipped, struct remat_error *err)
{
	char *buf;
	size_t len;
	cJSON *root = NULL;
	struct remat_error e2;
	int rc;

	*skipped = 0;
	rc = remat_graph_load_file(file, out, err);
	if (rc != REMAT_EINPUT || !from_dir)
		return rc;
	/* Only now look at what the file is: the common case parses once. */
	remat_error_clear(&e2);
	if (remat_i_read_file(file, &buf, &len, &e2))
		return rc;
	if (remat_i_json_parse(buf, len, file, &root, &e2) == REMAT_OK) {
		cJSON *f = remat_i_json_member(root, "format", NULL);

		if (cJSON_IsString(f) && strcmp(f->valuestring, "remat-graph") != 0) {
			*skipped = 1;
			rc = REMAT_OK;
		}
	}
	cJSON_Delete(root);
	free(buf);
	return rc;
}

/* ---- jobs ---- */

int remat_i_bench_expand(const struct remat_i_bench_graph *graphs, int ngraphs,
			 const struct remat_planner *const *planners, int nplanners,
			 char *const *budgets, int nbudgets,
			 struct remat_i_bench_job **jobs, int64_t *njobs,
			 struct remat_error *err)
{
	int64_t n = (int64_t)ngraphs * nplanners * nbudgets, k = 0;
	int gi, pi, bi;

	*jobs = malloc(sizeof(**jobs) * (size_t)(n + 1));
	*njobs = 0;
	if (!*jobs)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	for (gi = 0; gi < ngraphs; gi++)
		for (pi = 0; pi < nplanners; pi++)
			for (bi = 0; bi < nbudgets; bi++) {
				struct remat_i_bench_job *j = &(*jobs)[k++];
				int rc;

				j->graph = gi;
				j->planner = planners[pi];
				j->budget_spec = budgets[bi];
				rc = remat_budget_bytes(budgets[bi], graphs[gi].g->no_remat_peak,
							&j->budget, err);
				if (rc) {
					remat_error_prefix(err, "%s", graphs[gi].file);
					free(*jobs);
					*jobs = NULL;
					return rc;
				}
			}
	*njobs = n;
	return REMAT_OK;
}

/* ---- one run ---- */

void remat_i_bench_row_init(const struct remat_i_bench_graph *gr,
			    const struct remat_i_bench_job *j, struct remat_i_row *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->graph, sizeof(r->graph), "%s", gr->g->name);
	snprintf(r->file, sizeof(r->file), "%s", gr->file);
	snprintf(r->planner, sizeof(r->planner), "%s", j->planner->name);
	snprintf(r->budget_spec, sizeof(r->budget_spec), "%s", j->budget_spec);
	r->nodes = gr->g->n;
	r->budget = j->budget;
	r->no_remat_peak = gr->g->no_remat_peak;
	r->lower_bound = gr->g->min_peak_lower_bound;
	r->status = REMAT_I_RUN_ERROR;
	r->time_s = NAN;
}

void remat_i_bench_run_one(const struct remat_i_bench_graph *gr,
			   const struct remat_i_bench_job *j,
			   const struct remat_i_bench_opts *o, struct remat_i_row *r)
{
	const struct remat_planner *p = j->planner;
	struct remat_kv *opts = NULL;
	struct remat_plan_request req;
	struct remat_plan_report report;
	struct remat_schedule s;
	struct remat_sim_result res;
	struct remat_error err;
	double t0;
	int rc, i, k = 0;

	remat_i_bench_row_init(gr, j, r);
	remat_error_clear(&err);
	remat_schedule_init(&s);
	remat_plan_report_init(&report);
	if (o->n_options > 0) {
		opts = malloc(sizeof(*opts) * (size_t)o->n_options);
		if (!opts) {
			snprintf(r->error, sizeof(r->error), "out of memory");
			return;
		}
		/* Like remat plan: auto passes every option on. */
		for (i = 0; i < o->n_options; i++)
			if (strcmp(p->name, "auto") == 0 ||
			    remat_planner_has_option(p, o->options[i].key))
				opts[k++] = o->options[i];
	}
	memset(&req, 0, sizeof(req));
	req.graph = gr->g;
	req.budget = j->budget;
	req.time_limit = o->time_limit;
	req.seed = o->seed;
	req.options = opts;
	req.n_options = k;
	req.report = &report;
	t0 = remat_now();
	if (o->time_limit > 0)
		req.deadline = t0 + o->time_limit;
	rc = remat_plan_run(p, &req, &s, &res, &err);
	r->time_s = remat_now() - t0;
	switch (rc) {
	case REMAT_OK: r->status = REMAT_I_RUN_OK; break;
	case REMAT_ENOFIT: r->status = REMAT_I_RUN_NOFIT; break;
	case REMAT_ECANCELED: r->status = REMAT_I_RUN_TIMEOUT; break;
	default: r->status = REMAT_I_RUN_ERROR; break;
	}
	if (rc != REMAT_OK)
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
	r->has_schedule = res.valid;
	if (res.valid) {
		r->peak = res.peak_mem;
		r->cost = res.cost;
		r->overhead = res.overhead;
		r->recomputes = res.recomputes;
	}
	r->feasible = rc == REMAT_OK && res.feasible;
	snprintf(r->chosen, sizeof(r->chosen), "%s", report.chosen);
	remat_schedule_release(&s);
	free(opts);
}

double remat_i_bench_kill_after(double time_limit)
{
	return time_limit + fmax(2.0, time_limit / 10);
}

/* ---- the pool ---- */

struct slot {
	pid_t pid;
	int fd;
	int64_t job;
	double start;
	double kill_at;          /* 0: never */
	int killed;
	size_t got;
	struct remat_i_row row;
};

static void child_main(const struct remat_i_bench_graph *graphs,
		       const struct remat_i_bench_job *j,
		       const struct remat_i_bench_opts *o, int fd)
{
	struct remat_i_row r;
	const char *p = (const char *)&r;
	size_t left = sizeof(r);

	/* The parent's handlers would only set its flag: die like a plain run. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	remat_i_bench_run_one(&graphs[j->graph], j, o, &r);
	while (left > 0) {
		ssize_t w = write(fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(2);
		p += w;
		left -= (size_t)w;
	}
	_exit(0);
}

static int spawn(struct slot *s, const struct remat_i_bench_graph *graphs,
		 const struct remat_i_bench_job *jobs, int64_t job,
		 const struct remat_i_bench_opts *o, struct remat_error *err)
{
	int fds[2];
	pid_t parent = getpid();

	if (pipe(fds) != 0)
		return REMAT_FAIL(err, REMAT_EIO, "cannot create a pipe: %s", strerror(errno));
	/* Whatever the parent buffered must not be written twice. */
	fflush(NULL);
	s->pid = fork();
	if (s->pid < 0) {
		int e = errno;

		close(fds[0]);
		close(fds[1]);
		return REMAT_FAIL(err, REMAT_EIO, "cannot start a run: %s", strerror(e));
	}
	if (s->pid == 0) {
		close(fds[0]);
		remat_i_die_with_parent(parent);
		child_main(graphs, &jobs[job], o, fds[1]);
	}
	close(fds[1]);
	fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK);
	s->fd = fds[0];
	s->job = job;
	s->start = remat_now();
	s->kill_at = o->time_limit > 0 ? s->start + remat_i_bench_kill_after(o->time_limit) : 0;
	s->killed = 0;
	s->got = 0;
	return REMAT_OK;
}

/* Kill and reap every running child. */
static void kill_all(struct slot *slots, int *active)
{
	int i;

	for (i = 0; i < *active; i++) {
		kill(slots[i].pid, SIGKILL);
		close(slots[i].fd);
		while (waitpid(slots[i].pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	*active = 0;
}

/*
 * Reap a child whose pipe reached end of file and make its row.  Returns
 * 1 when the child was interrupted by a signal meant for the whole
 * process group (its row is then not reported).
 */
static int finish(struct slot *s, const struct remat_i_bench_graph *graphs,
		  const struct remat_i_bench_job *jobs, struct remat_i_row *r)
{
	const struct remat_i_bench_job *j = &jobs[s->job];
	int st = 0;

	close(s->fd);
	while (waitpid(s->pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!s->killed && s->got == sizeof(*r) && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		*r = s->row;
		return 0;
	}
	if (!s->killed && WIFSIGNALED(st) &&
	    (WTERMSIG(st) == SIGINT || WTERMSIG(st) == SIGTERM || WTERMSIG(st) == SIGHUP))
		return 1;
	remat_i_bench_row_init(&graphs[j->graph], j, r);
	r->time_s = remat_now() - s->start;
	if (s->killed) {
		r->status = REMAT_I_RUN_TIMEOUT;
		snprintf(r->error, sizeof(r->error), "killed after %.1f s: still running "
			 "past its time limit", r->time_s);
	} else if (WIFSIGNALED(st)) {
		r->status = REMAT_I_RUN_CRASH;
		snprintf(r->error, sizeof(r->error), "the run died of signal %d (%s)",
			 WTERMSIG(st), strsignal(WTERMSIG(st)));
	} else {
		r->status = REMAT_I_RUN_CRASH;
		snprintf(r->error, sizeof(r->error), "the run exited with status %d and no "
			 "result", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	return 0;
}

int remat_i_bench_pool(const struct remat_i_bench_graph *graphs,
		       const struct remat_i_bench_job *jobs, int64_t njobs,
		       const struct remat_i_bench_opts *o, struct remat_error *err)
{
	int cap = o->jobs < 1 ? 1 : o->jobs, active = 0, i, rc = REMAT_OK;
	struct slot *slots = calloc((size_t)cap, sizeof(*slots));
	struct pollfd *pfd = calloc((size_t)cap, sizeof(*pfd));
	int64_t next = 0, done = 0;

	if (!slots || !pfd) {
		free(slots);
		free(pfd);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	while (next < njobs || active > 0) {
		double now, wait_s = 0.25;

		if (o->stop && *o->stop) {
			rc = REMAT_FAIL(err, REMAT_ECANCELED, "interrupted");
			break;
		}
		while (active < cap && next < njobs) {
			rc = spawn(&slots[active], graphs, jobs, next, o, err);
			if (rc)
				break;
			active++;
			next++;
		}
		if (rc)
			break;
		now = remat_now();
		for (i = 0; i < active; i++) {
			pfd[i].fd = slots[i].fd;
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
			if (slots[i].kill_at > 0 && !slots[i].killed)
				wait_s = fmin(wait_s, fmax(0, slots[i].kill_at - now));
		}
		if (poll(pfd, (nfds_t)active, (int)ceil(wait_s * 1000)) < 0 && errno != EINTR) {
			rc = REMAT_FAIL(err, REMAT_EIO, "poll: %s", strerror(errno));
			break;
		}
		now = remat_now();
		for (i = 0; i < active; i++) {
			struct slot *s = &slots[i];
			int eof = 0;

			if (pfd[i].revents) {
				for (;;) {
					ssize_t got = read(s->fd, (char *)&s->row + s->got,
							   s->got < sizeof(s->row) ?
							   sizeof(s->row) - s->got : 0);

					if (got > 0) {
						s->got += (size_t)got;
						if (s->got < sizeof(s->row))
							continue;
						/* A full row: the child is leaving. */
						eof = 1;
					} else if (got < 0 && errno == EINTR) {
						continue;
					} else if (got == 0 || errno != EAGAIN) {
						eof = 1;
					}
					break;
				}
			}
			if (!eof && s->kill_at > 0 && !s->killed && now >= s->kill_at) {
				kill(s->pid, SIGKILL);
				s->killed = 1;
			}
			if (eof) {
				struct remat_i_row r;

				if (finish(s, graphs, jobs, &r)) {
					/* Ctrl-C reached the children first. */
					slots[i] = slots[--active];
					pfd[i] = pfd[active];
					rc = REMAT_FAIL(err, REMAT_ECANCELED, "interrupted");
					goto out;
				}
				slots[i] = slots[--active];
				pfd[i] = pfd[active];
				i--;
				done++;
				if (o->on_row && (rc = o->on_row(o->ctx, &r, err)))
					goto out;
				if (o->on_tick)
					o->on_tick(o->ctx, done, active);
			}
		}
		if (o->on_tick)
			o->on_tick(o->ctx, done, active);
	}
out:
	kill_all(slots, &active);
	free(slots);
	free(pfd);
	return rc;
}
