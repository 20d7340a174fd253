/*
 * cmd_bench.c - remat bench: run graphs x planners x budgets in worker
 * processes and write one row per run; merge results; draw them; compare
 * them with a baseline.  The work is in libremat (src/tool/bench.c,
 * results.c, svg.c); this file parses, prints progress, and maps outcomes
 * to exit codes.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "tool/budget_range.h"
#include "core/util.h"
#include "tool/bench.h"
#include "tool/results.h"
#include "tool/svg.h"

#define MAX_OUT 16
#define EXIT_FAILED 5
#define EXIT_INTERRUPTED 130

const struct cli_opt cmd_bench_opts[] = {
	{ "planners", 'p', "LIST", "planners: all (default), fast, NAME,... and -NAME to leave out", 0 },
	{ "budgets", 'b', "LIST", "budgets: 80%, 4GiB, LO..HI:N (N points), LO..HI:STEP, comma "
	  "lists (default 10%..100%:10%)", 0 },
	{ "jobs", 'j', "N", "runs at once, each in its own process (default 1)", 0 },
	{ "time-limit", 't', "SECONDS", "per run; a run still going well past it is killed", 0 },
	{ "seed", 0, "N", "seed for randomized planners (default 1)", 0 },
	{ "output", 'o', "FILE", "write the rows to FILE.csv or FILE.json (repeatable)", 1 },
	{ "plot", 0, "DIR", "draw DIR/GRAPH.svg: overhead vs budget per planner", 0 },
	{ "baseline", 0, "FILE", "compare with FILE; exit 5 naming each regression", 0 },
	{ "tolerance", 0, "T", "cost growth allowed against the baseline (default 1%)", 0 },
	{ "update-baseline", 0, NULL, "rewrite the --baseline FILE with these results", 0 },
	{ "emit-jobs", 0, "DIR", "print one command per run (writing DIR/N.json) and exit", 0 },
	{ "merge", 0, NULL, "the arguments are results files (or folders): join them", 0 },
	{ "quiet", 'q', NULL, "no progress on stderr", 0 },
	{ NULL, 0, NULL, NULL, 0 }
};

static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_flag = 1;
	stop_signal = sig;
}

struct bench_ctx {
	struct remat_i_rows rows;
	struct remat_i_rows_out *outs[MAX_OUT];
	int nout;
	int tty, quiet;
	int64_t total;
	double start, last_draw;
	int bar_shown;
};

static void fmt_clock(char *buf, size_t size, double s)
{
	long t = (long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

static void draw_bar(struct bench_ctx *c, int64_t done, int running, int force)
{
	double now = remat_now(), el = now - c->start;
	char e1[32], e2[32], bar[32];
	int width = 24, fill, i;

	if (!c->tty || c->quiet || (!force && now - c->last_draw < 0.1))
		return;
	c->last_draw = now;
	fill = c->total > 0 ? (int)(width * done / c->total) : width;
	for (i = 0; i < width; i++)
		bar[i] = i < fill ? '#' : '-';
	bar[width] = '\0';
	fmt_clock(e1, sizeof(e1), el);
	if (done > 0)
		fmt_clock(e2, sizeof(e2), el / (double)done * (double)(c->total - done));
	else
		snprintf(e2, sizeof(e2), "?");
	fprintf(stderr, "\r\033[Kbench [%s] %lld/%lld runs  elapsed %s  ETA %s  (%d running)",
		bar, (long long)done, (long long)c->total, e1, e2, running);
	fflush(stderr);
	c->bar_shown = 1;
}

static void clear_bar(struct bench_ctx *c)
{
	if (c->bar_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		c->bar_shown = 0;
	}
}

static void on_tick(void *ctx, int64_t done, int running)
{
	draw_bar(ctx, done, running, 0);
}

static void describe(const struct remat_i_row *r, char *buf, size_t size)
{
	char pk[32];

	if (remat_i_row_fits(r)) {
		remat_format_bytes(r->peak, pk, sizeof(pk));
		snprintf(buf, size, "ok, overhead %+.2f%%, peak %s, %.3f s", 100 * r->overhead,
			 pk, r->time_s);
	} else {
		/* "nofit" is an ordinary outcome; its reason is long and alike. */
		int why = r->status != REMAT_I_RUN_NOFIT && r->error[0];

		snprintf(buf, size, "%s, %.3f s%s%s", remat_i_run_status_name(r->status),
			 r->time_s, why ? ": " : "", why ? r->error : "");
	}
}

static int on_row(void *ctx, const struct remat_i_row *r, struct remat_error *err)
{
	struct bench_ctx *c = ctx;
	int i;

	REMAT_TRY(remat_i_rows_push(&c->rows, r, err));
	for (i = 0; i < c->nout; i++)
		REMAT_TRY(remat_i_rows_out_add(c->outs[i], r, err));
	if (!c->tty && !c->quiet) {
		char name[300], what[600];

		remat_i_row_name(r, name, sizeof(name));
		describe(r, what, sizeof(what));
		fprintf(stderr, "bench: [%lld/%lld] %s: %s\n", (long long)c->rows.n,
			(long long)c->total, name, what);
	}
	return REMAT_OK;
}

/* Print s for a POSIX shell: as is when safe, else in single quotes. */
static void sh_quote(FILE *f, const char *s)
{
	const char *p;

	if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			 "0123456789_@%+=:,./-") == strlen(s)) {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (p = s; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

static int mkdir_p(const char *dir)
{
	char buf[4096];
	size_t i, len = strlen(dir);

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, dir, len + 1);
	for (i = 1; i <= len; i++) {
		if (buf[i] == '/' || buf[i] == '\0') {
			char ch = buf[i];

			buf[i] = '\0';
			if (mkdir(buf, 0777) != 0 && errno != EEXIST)
				return -1;
			buf[i] = ch;
		}
	}
	return 0;
}

static void machine_meta(char *date, size_t dsize, char *mach, size_t msize)
{
	struct utsname u;
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(date, dsize, "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (uname(&u) == 0)
		snprintf(mach, msize, "%s %s %s, %ld CPUs", u.sysname, u.release, u.machine,
			 sysconf(_SC_NPROCESSORS_ONLN));
	else
		snprintf(mach, msize, "unknown");
}

static int emit_jobs(struct cli_args *a, const char *dir,
		     const struct remat_i_bench_graph *graphs,
		     const struct remat_i_bench_job *jobs, int64_t n)
{
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *tl = cli_get(a, "time-limit"), *seed = cli_get(a, "seed");
	int64_t k;
	int width = 4, i;

	if (len > 0)
		exe[len] = '\0';
	else
		snprintf(exe, sizeof(exe), "remat");
	if (mkdir_p(dir) != 0) {
		cli_error("%s: cannot create the folder: %s", dir, strerror(errno));
		return 4;
	}
	for (k = n; k >= 10000; k /= 10)
		width++;
	for (k = 0; k < n; k++) {
		const struct remat_i_bench_job *j = &jobs[k];
		char out[4200];

		sh_quote(stdout, exe);
		fputs(" bench ", stdout);
		sh_quote(stdout, graphs[j->graph].file);
		fputs(" --planners ", stdout);
		sh_quote(stdout, j->planner->name);
		fputs(" --budgets ", stdout);
		sh_quote(stdout, j->budget_spec);
		if (tl) {
			fputs(" --time-limit ", stdout);
			sh_quote(stdout, tl);
		}
		if (seed) {
			fputs(" --seed ", stdout);
			sh_quote(stdout, seed);
		}
		for (i = 0; i < a->n_popts; i++) {
			if (strcmp(j->planner->name, "auto") != 0 &&
			    !remat_planner_has_option(j->planner, a->popts[i].key))
				continue;
			fprintf(stdout, " --%s ", a->popts[i].key);
			sh_quote(stdout, a->popts[i].value);
		}
		snprintf(out, sizeof(out), "%s/%0*lld.json", dir, width, (long long)k + 1);
		fputs(" -q -o ", stdout);
		sh_quote(stdout, out);
		fputc('\n', stdout);
	}
	fprintf(stderr, "remat bench: %lld jobs; when they are done: remat bench --merge %s "
		"-o results.csv\n", (long long)n, dir);
	return 0;
}

/* Draw one SVG per graph file into dir. */
static int plot_all(const char *dir, const struct remat_i_rows *t)
{
	struct remat_error err;
	char **used = calloc((size_t)t->n + 1, sizeof(char *));
	int64_t i = 0, nused = 0, k;
	int code = 0;

	remat_error_clear(&err);
	if (!used)
		return 4;
	if (mkdir_p(dir) != 0) {
		cli_error("%s: cannot create the folder: %s", dir, strerror(errno));
		free(used);
		return 4;
	}
	while (i < t->n) {
		int64_t j = i;
		const char *base = remat_i_basename(t->v[i].file);
		char name[600], path[4800];
		size_t len = strlen(base);
		int dup = 1;

		while (j < t->n && strcmp(t->v[j].file, t->v[i].file) == 0)
			j++;
		if (len > 5 && strcmp(base + len - 5, ".json") == 0)
			len -= 5;
		snprintf(name, sizeof(name), "%.*s", (int)len, base);
		/* Two folders may hold files of the same name. */
		for (k = 0; k < nused; k++)
			if (strcmp(used[k], name) == 0) {
				snprintf(name, sizeof(name), "%.*s-%d", (int)len, base, ++dup);
				k = -1;
			}
		used[nused++] = strdup(name);
		snprintf(path, sizeof(path), "%s/%s.svg", dir, name);
		if (remat_i_svg_overhead_write(path, &t->v[i], j - i, &err)) {
			cli_error("%s", err.msg);
			code = 4;
			break;
		}
		i = j;
	}
	for (k = 0; k < nused; k++)
		free(used[k]);
	free(used);
	return code;
}

/* A table for people, when the rows go nowhere else. */
static void print_table(const struct remat_i_rows *t)
{
	int64_t i;

	printf("%-24s %-12s %-22s %-7s %-11s %-10s %-10s %s\n", "graph", "planner", "budget",
	       "status", "peak", "overhead", "recomputes", "time");
	for (i = 0; i < t->n; i++) {
		const struct remat_i_row *r = &t->v[i];
		char b[32], bud[48], pk[32] = "-", ov[24] = "-", rc[24] = "-", tm[32];

		remat_format_bytes(r->budget, b, sizeof(b));
		snprintf(bud, sizeof(bud), "%s (%s)", r->budget_spec, b);
		if (r->has_schedule) {
			remat_format_bytes(r->peak, pk, sizeof(pk));
			snprintf(ov, sizeof(ov), "%+.2f%%", 100 * r->overhead);
			snprintf(rc, sizeof(rc), "%lld", (long long)r->recomputes);
		}
		if (isnan(r->time_s))
			snprintf(tm, sizeof(tm), "-");
		else
			snprintf(tm, sizeof(tm), "%.3f s", r->time_s);
		printf("%-24s %-12s %-22s %-7s %-11s %-10s %-10s %s\n", r->graph, r->planner,
		       bud, remat_i_run_status_name(r->status), pk, ov, rc, tm);
	}
}

static double parse_tolerance(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !isfinite(v) || v < 0)
		return -1;
	if (strcmp(end, "%") == 0)
		return v / 100;
	return *end ? -1 : v;
}

/* Compare with (or rewrite) the baseline; returns an exit code. */
static int baseline_stage(struct cli_args *a, struct remat_i_rows *cur, double tol)
{
	const char *path = cli_get(a, "baseline");
	int update = cli_flag(a, "update-baseline"), have_old = 1, code = 0;
	struct remat_i_rows base, copy;
	struct remat_i_compare cmp;
	struct remat_error err;
	int64_t i;

	remat_error_clear(&err);
	remat_i_rows_init(&base);
	remat_i_rows_init(&copy);
	if (remat_i_rows_read(path, &base, &err)) {
		if (!update || access(path, F_OK) == 0) {
			cli_error("%s", err.msg);
			return cli_exit_code(err.code);
		}
		have_old = 0;
	}
	/* The comparison reorders its inputs: compare a copy of ours. */
	for (i = 0; i < cur->n; i++)
		if (remat_i_rows_push(&copy, &cur->v[i], &err))
			goto oom;
	if (remat_i_rows_compare(&base, &copy, tol, &cmp, &err))
		goto oom;
	if (have_old) {
		for (i = 0; i < cmp.n; i++) {
			const struct remat_i_finding *f = &cmp.v[i];

			if (f->kind == REMAT_I_REGRESSION || f->kind == REMAT_I_MISMATCH)
				fprintf(stderr, "remat bench: %s: %s\n",
					f->kind == REMAT_I_REGRESSION ? "regression" : "not comparable",
					f->msg);
			else if (f->kind == REMAT_I_IMPROVED)
				fprintf(stderr, "remat bench: improved: %s\n", f->msg);
		}
		fprintf(stderr, "remat bench: against %s: %lld runs compared, %lld regressions, "
			"%lld not comparable, %lld improved, %lld new, %lld not run (tolerance %g%%)\n",
			path, (long long)cmp.compared, (long long)cmp.count[REMAT_I_REGRESSION],
			(long long)cmp.count[REMAT_I_MISMATCH], (long long)cmp.count[REMAT_I_IMPROVED],
			(long long)cmp.count[REMAT_I_NEW], (long long)cmp.count[REMAT_I_MISSING],
			100 * tol);
	}
	if (update) {
		if (have_old && cmp.count[REMAT_I_MISSING] > 0)
			fprintf(stderr, "remat bench: note: %lld runs of the old baseline were not "
				"run here and are left out of the new one\n",
				(long long)cmp.count[REMAT_I_MISSING]);
		if (remat_i_rows_write(path, cur, NULL, REMAT_I_ROWS_NO_TIME, &err)) {
			cli_error("%s", err.msg);
			code = 4;
		} else {
			fprintf(stderr, "remat bench: wrote the baseline %s (%lld runs)\n", path,
				(long long)cur->n);
		}
	} else if (cmp.count[REMAT_I_REGRESSION] + cmp.count[REMAT_I_MISMATCH] > 0) {
		code = EXIT_FAILED;
	}
	remat_i_compare_free(&cmp);
	remat_i_rows_free(&base);
	remat_i_rows_free(&copy);
	return code;
oom:
	cli_error("%s", err.msg);
	remat_i_rows_free(&base);
	remat_i_rows_free(&copy);
	return 4;
}

/* Read result files (or folders of them) for --merge. */
static int merge_inputs(struct cli_args *a, struct remat_i_rows *t)
{
	struct remat_error err;
	char **files = NULL;
	uint8_t *from_dir = NULL;
	int nfiles = 0, i, code = 0;
	int64_t dropped = 0;

	remat_error_clear(&err);
	if (remat_i_bench_files(a->pos, a->npos, 1, &files, &from_dir, &nfiles, &err)) {
		cli_error("%s", err.msg);
		return cli_exit_code(err.code);
	}
	for (i = 0; i < nfiles && code == 0; i++)
		if (remat_i_rows_read(files[i], t, &err)) {
			cli_error("%s", err.msg);
			code = cli_exit_code(err.code);
		}
	if (code == 0 && remat_i_rows_dedup(t, &dropped, &err)) {
		cli_error("%s", err.msg);
		code = 4;
	}
	if (code == 0 && dropped > 0)
		fprintf(stderr, "remat bench: %lld runs appeared more than once; kept the one "
			"read last\n", (long long)dropped);
	if (code == 0 && !cli_flag(a, "quiet"))
		fprintf(stderr, "remat bench: merged %lld runs from %d file%s\n", (long long)t->n,
			nfiles, nfiles == 1 ? "" : "s");
	remat_i_bench_files_free(files, from_dir, nfiles);
	return code;
}

/* Load the graphs; folders' non-graph JSON files are skipped with a note. */
static int load_graphs(struct cli_args *a, struct remat_i_bench_graph **out, int *nout,
		       char ***files_out, uint8_t **dir_out, int *nfiles_out)
{
	struct remat_error err;
	struct remat_i_bench_graph *gs;
	int i, n = 0;

	remat_error_clear(&err);
	if (remat_i_bench_files(a->pos, a->npos, 0, files_out, dir_out, nfiles_out, &err)) {
		cli_error("%s", err.msg);
		return cli_exit_code(err.code);
	}
	gs = calloc((size_t)*nfiles_out + 1, sizeof(*gs));
	if (!gs)
		return 4;
	for (i = 0; i < *nfiles_out; i++) {
		struct remat_graph *g = NULL;
		int skipped, rc;

		if (strlen((*files_out)[i]) >= sizeof(((struct remat_i_row *)0)->file)) {
			cli_error("%s: path too long for a results row", (*files_out)[i]);
			rc = 1;
			goto fail;
		}
		rc = remat_i_bench_load((*files_out)[i], (*dir_out)[i], &g, &skipped, &err);
		if (rc) {
			cli_error("%s", err.msg);
			rc = cli_exit_code(rc);
			goto fail;
		}
		if (skipped) {
			fprintf(stderr, "remat bench: %s: not a remat-graph file, skipped\n",
				(*files_out)[i]);
			continue;
		}
		gs[n].file = (*files_out)[i];
		gs[n].g = g;
		n++;
		continue;
fail:
		while (n > 0)
			remat_graph_free((struct remat_graph *)gs[--n].g);
		free(gs);
		return rc;
	}
	if (n == 0) {
		cli_error("no graph files found");
		free(gs);
		return 1;
	}
	*out = gs;
	*nout = n;
	return 0;
}

int cmd_bench(struct cli_args *a)
{
	const char *pspec = cli_get(a, "planners"), *bspec = cli_get(a, "budgets");
	const char *jtext = cli_get(a, "jobs"), *tl = cli_get(a, "time-limit");
	const char *seed_text = cli_get(a, "seed"), *plot = cli_get(a, "plot");
	const char *baseline = cli_get(a, "baseline"), *toltext = cli_get(a, "tolerance");
	const char *emit = cli_get(a, "emit-jobs");
	const char **outs;
	int nouts, merge = cli_flag(a, "merge"), code = 0, ngraphs = 0, nplanners = 0;
	int nfiles = 0, i, jobs = 1;
	double limit = 0, tol = 0.01;
	uint64_t seed = 1;
	struct remat_i_budget_list budgets = { NULL, 0, 0 };
	const struct remat_planner **planners = NULL;
	struct remat_i_bench_graph *graphs = NULL;
	struct remat_i_bench_job *joblist = NULL;
	int64_t njobs = 0, failed = 0;
	char **files = NULL;
	uint8_t *from_dir = NULL;
	struct remat_error err;
	struct bench_ctx c;
	char date[64], mach[256];
	struct remat_i_rows_meta meta = { date, mach };

	memset(&c, 0, sizeof(c));
	remat_error_clear(&err);
	remat_i_rows_init(&c.rows);
	machine_meta(date, sizeof(date), mach, sizeof(mach));
	c.quiet = cli_flag(a, "quiet");
	c.tty = isatty(STDERR_FILENO);

	/* Check every option before doing anything. */
	outs = cli_get_all(a, "output", &nouts);
	if (nouts > MAX_OUT)
		return cli_usage_error(a, "at most %d '-o' files", MAX_OUT);
	for (i = 0; i < nouts; i++)
		if (!remat_i_rows_format(outs[i]))
			return cli_usage_error(a, "'-o %s': name results files .csv or .json", outs[i]);
	if (jtext) {
		char *end;
		long v = strtol(jtext, &end, 10);

		if (end == jtext || *end || v < 1 || v > 1024)
			return cli_usage_error(a, "'--jobs' needs a number from 1 to 1024, not '%s'",
					       jtext);
		jobs = (int)v;
	}
	if (tl && (limit = cli_parse_seconds(tl)) < 0)
		return cli_usage_error(a, "'--time-limit' needs a number of seconds, not '%s'", tl);
	if (seed_text) {
		char *end;

		seed = strtoull(seed_text, &end, 10);
		if (end == seed_text || *end || seed_text[0] == '-')
			return cli_usage_error(a, "'--seed' needs a non-negative integer, not '%s'",
					       seed_text);
	}
	if (toltext && (tol = parse_tolerance(toltext)) < 0)
		return cli_usage_error(a, "'--tolerance' needs a fraction (0.01) or a percentage "
				       "(1%%), not '%s'", toltext);
	if (cli_flag(a, "update-baseline") && !baseline)
		return cli_usage_error(a, "'--update-baseline' needs '--baseline FILE'");
	if (toltext && !baseline)
		return cli_usage_error(a, "'--tolerance' needs '--baseline FILE'");
	if (merge) {
		static const char *const run_only[] = { "planners", "budgets", "jobs", "time-limit",
							"seed", "emit-jobs" };
		size_t k;

		for (k = 0; k < sizeof(run_only) / sizeof(run_only[0]); k++)
			if (cli_get(a, run_only[k]))
				return cli_usage_error(a, "'--%s' does not apply to --merge", run_only[k]);
		if (a->n_popts)
			return cli_usage_error(a, "planner options do not apply to --merge");
		code = merge_inputs(a, &c.rows);
		if (code)
			goto done;
		goto results;
	}
	if (remat_i_bench_planners(pspec ? pspec : "all", &planners, &nplanners, &err) ||
	    remat_i_budget_list_parse(bspec ? bspec : "10%..100%:10%", &budgets, &err)) {
		code = cli_usage_error(a, "%s", err.msg);
		goto done;
	}
	for (i = 0; i < a->n_popts; i++) {
		int k, used = 0;

		for (k = 0; k < nplanners; k++)
			used |= strcmp(planners[k]->name, "auto") == 0 ||
				remat_planner_has_option(planners[k], a->popts[i].key);
		if (!used) {
			code = cli_usage_error(a, "option '--%s' applies to none of the planners "
					       "chosen", a->popts[i].key);
			goto done;
		}
	}
	code = load_graphs(a, &graphs, &ngraphs, &files, &from_dir, &nfiles);
	if (code)
		goto done;
	if (remat_i_bench_expand(graphs, ngraphs, planners, nplanners, budgets.text, budgets.n,
				 &joblist, &njobs, &err)) {
		code = cli_usage_error(a, "%s", err.msg);
		goto done;
	}
	if (emit) {
		code = emit_jobs(a, emit, graphs, joblist, njobs);
		goto done;
	}

	for (i = 0; i < nouts; i++) {
		if (remat_i_rows_out_open(outs[i], &meta, &c.outs[c.nout], &err)) {
			cli_error("%s", err.msg);
			code = cli_exit_code(err.code);
			goto done;
		}
		c.nout++;
	}
	{
		struct remat_i_bench_opts o;
		struct sigaction sa, old_int, old_term, old_hup;
		int rc;

		memset(&o, 0, sizeof(o));
		o.jobs = jobs;
		o.time_limit = limit;
		o.seed = seed;
		o.options = a->popts;
		o.n_options = a->n_popts;
		o.stop = &stop_flag;
		o.on_row = on_row;
		o.on_tick = on_tick;
		o.ctx = &c;
		c.total = njobs;
		c.start = remat_now();
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
		sigaction(SIGHUP, &sa, &old_hup);
		draw_bar(&c, 0, 0, 1);
		rc = remat_i_bench_pool(graphs, joblist, njobs, &o, &err);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		clear_bar(&c);
		for (i = 0; i < c.nout; i++) {
			struct remat_error e2;

			remat_error_clear(&e2);
			if (remat_i_rows_out_close(c.outs[i], &e2) && rc == REMAT_OK) {
				err = e2;
				rc = e2.code;
			}
		}
		c.nout = 0;
		if (rc == REMAT_ECANCELED) {
			fprintf(stderr, "remat bench: interrupted: %lld of %lld runs finished%s\n",
				(long long)c.rows.n, (long long)njobs,
				nouts ? " and kept in the output files" : "");
			code = EXIT_INTERRUPTED;
			goto done;
		}
		if (rc) {
			cli_error("%s", err.msg);
			code = cli_exit_code(rc);
			goto done;
		}
		if (!c.quiet) {
			char e1[32];
			int64_t cnt[REMAT_I_RUN_NSTATUS] = { 0 };
			int64_t k;

			for (k = 0; k < c.rows.n; k++)
				cnt[c.rows.v[k].status]++;
			fmt_clock(e1, sizeof(e1), remat_now() - c.start);
			fprintf(stderr, "remat bench: %lld runs in %s: %lld ok, %lld nofit, %lld "
				"timeout, %lld crash, %lld error\n", (long long)c.rows.n, e1,
				(long long)cnt[0], (long long)cnt[1], (long long)cnt[2],
				(long long)cnt[3], (long long)cnt[4]);
		}
	}

results:
	if (remat_i_rows_sort(&c.rows, &err)) {
		cli_error("%s", err.msg);
		code = 4;
		goto done;
	}
	/* The files were filled as runs finished; leave them in a stable order. */
	for (i = 0; i < nouts; i++)
		if (remat_i_rows_write(outs[i], &c.rows, &meta, 0, &err)) {
			cli_error("%s", err.msg);
			code = 4;
			goto done;
		}
	{
		int64_t k;

		for (k = 0; k < c.rows.n; k++) {
			const struct remat_i_row *r = &c.rows.v[k];
			char name[300];

			if (r->status != REMAT_I_RUN_CRASH && r->status != REMAT_I_RUN_ERROR)
				continue;
			remat_i_row_name(r, name, sizeof(name));
			fprintf(stderr, "remat bench: failed: %s: %s: %s\n", name,
				remat_i_run_status_name(r->status), r->error);
			failed++;
		}
	}
	if (plot && (code = plot_all(plot, &c.rows)) != 0)
		goto done;
	if (plot && !c.quiet)
		fprintf(stderr, "remat bench: plots in %s/\n", plot);
	if (baseline)
		code = baseline_stage(a, &c.rows, tol);
	if (!nouts && !plot && !baseline)
		print_table(&c.rows);
	if (code == 0 && failed > 0)
		code = EXIT_FAILED;
done:
	for (i = 0; i < c.nout; i++)
		remat_i_rows_out_close(c.outs[i], NULL);
	remat_i_rows_free(&c.rows);
	remat_i_budget_list_free(&budgets);
	free(planners);
	free(joblist);
	for (i = 0; i < ngraphs; i++)
		remat_graph_free((struct remat_graph *)graphs[i].g);
	free(graphs);
	remat_i_bench_files_free(files, from_dir, nfiles);
	return code;
}
