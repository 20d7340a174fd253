/*
 * cmd_bench.c - remat bench: run graphs x planners x budgets in worker
 * processes and write one row per run; merge results; draw them; compare
 * them with a baseline.  The work is in the program's modules
 * (src/tool/bench.c, results.c, svg.c); this file parses, prints
 * progress, and maps outcomes to exit codes.  cmd_bench() at the end
 * reads as its stages: options, inputs (or results to merge), the runs,
 * the rows written, then failures, plots and the baseline.
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
		cli_note("[%lld/%lld] %s: %s", (long long)c->rows.n, (long long)c->total, name,
			 what);
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


/* One bench invocation: its options, then what each stage fills in. */
struct bench {
	/* Options. */
	const char *planner_spec, *budget_spec, *plot, *baseline, *emit_dir;
	const char *time_limit_text, *seed_text; /* as given, for --emit-jobs */
	struct cli_list outs;
	struct cli_planner_opts popts;
	int jobs, merge, quiet, update_baseline;
	double time_limit, tolerance;
	uint64_t seed;
	char **inputs;             /* graphs or folders; results with --merge */
	int ninputs;
	/* The runs: planners x budgets x graphs. */
	struct remat_i_budget_list budgets;
	const struct remat_planner **planners;
	int nplanners;
	struct remat_i_bench_graph *graphs;
	int ngraphs;
	char **files;
	uint8_t *from_dir;
	int nfiles;
	struct remat_i_bench_job *runs;
	int64_t nruns;
	/* The rows, as they finish or as merged, and where they go. */
	struct bench_ctx c;
	char date[64], mach[256];
	struct remat_i_rows_meta meta;
};

static void bench_init(struct bench *b)
{
	memset(b, 0, sizeof(*b));
	b->planner_spec = "all";
	b->budget_spec = "10%..100%:10%";
	b->jobs = 1;
	b->tolerance = 0.01;
	b->seed = 1;
	remat_i_rows_init(&b->c.rows);
	machine_meta(b->date, sizeof(b->date), b->mach, sizeof(b->mach));
	b->meta.date = b->date;
	b->meta.machine = b->mach;
	b->c.tty = isatty(STDERR_FILENO);
}

static void bench_free(struct bench *b)
{
	int i;

	for (i = 0; i < b->c.nout; i++)
		remat_i_rows_out_close(b->c.outs[i], NULL);
	remat_i_rows_free(&b->c.rows);
	remat_i_budget_list_free(&b->budgets);
	free(b->planners);
	free(b->runs);
	for (i = 0; i < b->ngraphs; i++)
		remat_graph_free((struct remat_graph *)b->graphs[i].g);
	free(b->graphs);
	remat_i_bench_files_free(b->files, b->from_dir, b->nfiles);
}

/* --tolerance: a fraction (0.01) or a percentage (1%). */
static int parse_tolerance(const struct cli_opt *o, const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !isfinite(v) || v < 0)
		return -1;
	if (strcmp(end, "%") == 0)
		v /= 100;
	else if (*end)
		return -1;
	*(double *)o->value = v;
	return 0;
}

/* Stage 1 (after the parser): options that depend on each other. */
static int check_options(struct bench *b, const struct cli_opt *opts)
{
	static const char *const run_only[] = { "planners", "budgets", "jobs", "time-limit",
						"seed", "emit-jobs" };
	size_t k;
	int i;

	if (b->outs.n > MAX_OUT)
		return cli_usage_error("at most %d '-o' files", MAX_OUT);
	for (i = 0; i < b->outs.n; i++)
		if (!remat_i_rows_format(b->outs.v[i]))
			return cli_usage_error("'-o %s': name results files .csv or .json",
					       b->outs.v[i]);
	if (b->update_baseline && !b->baseline)
		return cli_usage_error("'--update-baseline' needs '--baseline FILE'");
	if (cli_given(opts, "tolerance") && !b->baseline)
		return cli_usage_error("'--tolerance' needs '--baseline FILE'");
	if (!b->merge)
		return CLI_EXIT_OK;
	for (k = 0; k < sizeof(run_only) / sizeof(run_only[0]); k++)
		if (cli_given(opts, run_only[k]))
			return cli_usage_error("'--%s' does not apply to --merge", run_only[k]);
	if (b->popts.n)
		return cli_usage_error("planner options do not apply to --merge");
	return CLI_EXIT_OK;
}

/* Load the graphs; folders' non-graph JSON files are skipped with a note. */
static int load_graphs(struct bench *b)
{
	struct remat_error err;
	int i;

	remat_error_clear(&err);
	if (remat_i_bench_files((const char *const *)b->inputs, b->ninputs, 0, &b->files,
				&b->from_dir, &b->nfiles, &err)) {
		cli_error("%s", err.msg);
		return cli_exit_code(err.code);
	}
	b->graphs = calloc((size_t)b->nfiles + 1, sizeof(*b->graphs));
	if (!b->graphs) {
		cli_error("out of memory");
		return CLI_EXIT_SYSTEM;
	}
	for (i = 0; i < b->nfiles; i++) {
		const char *file = b->files[i];
		struct remat_graph *g = NULL;
		int skipped;

		if (strlen(file) >= sizeof(((struct remat_i_row *)0)->file)) {
			cli_error("%s: path too long for a results row", file);
			return CLI_EXIT_INPUT;
		}
		if (remat_i_bench_load(file, b->from_dir[i], &g, &skipped, &err)) {
			cli_error("%s", err.msg);
			return cli_exit_code(err.code);
		}
		if (skipped) {
			cli_note("%s: not a remat-graph file, skipped", file);
			continue;
		}
		b->graphs[b->ngraphs].file = file;
		b->graphs[b->ngraphs].g = g;
		b->ngraphs++;
	}
	if (b->ngraphs == 0) {
		cli_error("no graph files found");
		return CLI_EXIT_INPUT;
	}
	return CLI_EXIT_OK;
}

/* Stage 2: planners x budgets x graphs, expanded into runs. */
static int expand_inputs(struct bench *b)
{
	struct remat_error err;
	int i, k, code;

	remat_error_clear(&err);
	/* The planner list's message says where to look already. */
	if (remat_i_bench_planners(b->planner_spec, &b->planners, &b->nplanners, &err)) {
		cli_error("%s", err.msg);
		return cli_exit_code(err.code);
	}
	if (remat_i_budget_list_parse(b->budget_spec, &b->budgets, &err))
		return cli_usage_error("%s", err.msg);
	for (i = 0; i < b->popts.n; i++) {
		int used = 0;

		for (k = 0; k < b->nplanners; k++)
			used |= strcmp(b->planners[k]->name, "auto") == 0 ||
				remat_planner_has_option(b->planners[k], b->popts.v[i].key);
		if (!used)
			return cli_usage_error("option '--%s' applies to none of the planners "
					       "chosen", b->popts.v[i].key);
	}
	code = load_graphs(b);
	if (code)
		return code;
	if (remat_i_bench_expand(b->graphs, b->ngraphs, b->planners, b->nplanners,
				 b->budgets.text, b->budgets.n, &b->runs, &b->nruns, &err))
		return cli_usage_error("%s", err.msg);
	return CLI_EXIT_OK;
}

/* Stage 2 with --merge: read result files (or folders of them). */
static int merge_inputs(struct bench *b)
{
	struct remat_error err;
	char **files = NULL;
	uint8_t *from_dir = NULL;
	int nfiles = 0, i, code = CLI_EXIT_OK;
	int64_t dropped = 0;

	remat_error_clear(&err);
	if (remat_i_bench_files((const char *const *)b->inputs, b->ninputs, 1, &files,
				&from_dir, &nfiles, &err)) {
		cli_error("%s", err.msg);
		return cli_exit_code(err.code);
	}
	for (i = 0; i < nfiles && code == CLI_EXIT_OK; i++)
		if (remat_i_rows_read(files[i], &b->c.rows, &err)) {
			cli_error("%s", err.msg);
			code = cli_exit_code(err.code);
		}
	if (code == CLI_EXIT_OK && remat_i_rows_dedup(&b->c.rows, &dropped, &err)) {
		cli_error("%s", err.msg);
		code = CLI_EXIT_SYSTEM;
	}
	if (code == CLI_EXIT_OK && dropped > 0)
		cli_note("%lld runs appeared more than once; kept the one read last",
			 (long long)dropped);
	if (code == CLI_EXIT_OK && !b->quiet)
		cli_note("merged %lld runs from %d file%s", (long long)b->c.rows.n, nfiles,
			 nfiles == 1 ? "" : "s");
	remat_i_bench_files_free(files, from_dir, nfiles);
	return code;
}

/* Stage 3 with --emit-jobs: print one command per run instead. */
static int emit_jobs(const struct bench *b)
{
	char exe[4096];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int64_t k;
	int width = 4, i;

	if (len > 0)
		exe[len] = '\0';
	else
		snprintf(exe, sizeof(exe), "remat");
	if (mkdir_p(b->emit_dir) != 0) {
		cli_error("%s: cannot create the folder: %s", b->emit_dir, strerror(errno));
		return CLI_EXIT_SYSTEM;
	}
	for (k = b->nruns; k >= 10000; k /= 10)
		width++;
	for (k = 0; k < b->nruns; k++) {
		const struct remat_i_bench_job *j = &b->runs[k];
		char out[4200];

		sh_quote(stdout, exe);
		fputs(" bench ", stdout);
		sh_quote(stdout, b->graphs[j->graph].file);
		fputs(" --planners ", stdout);
		sh_quote(stdout, j->planner->name);
		fputs(" --budgets ", stdout);
		sh_quote(stdout, j->budget_spec);
		if (b->time_limit_text) {
			fputs(" --time-limit ", stdout);
			sh_quote(stdout, b->time_limit_text);
		}
		if (b->seed_text) {
			fputs(" --seed ", stdout);
			sh_quote(stdout, b->seed_text);
		}
		for (i = 0; i < b->popts.n; i++) {
			if (strcmp(j->planner->name, "auto") != 0 &&
			    !remat_planner_has_option(j->planner, b->popts.v[i].key))
				continue;
			fprintf(stdout, " --%s ", b->popts.v[i].key);
			sh_quote(stdout, b->popts.v[i].value);
		}
		snprintf(out, sizeof(out), "%s/%0*lld.json", b->emit_dir, width, (long long)k + 1);
		fputs(" -q -o ", stdout);
		sh_quote(stdout, out);
		fputc('\n', stdout);
	}
	cli_note("%lld jobs; when they are done: remat bench --merge %s -o results.csv",
		 (long long)b->nruns, b->emit_dir);
	return CLI_EXIT_OK;
}

/* Stage 3: every run in the worker pool, rows written as they finish. */
static int run_all(struct bench *b)
{
	struct remat_i_bench_opts o;
	struct sigaction sa, old_int, old_term, old_hup;
	struct remat_error err;
	int i, rc;

	remat_error_clear(&err);
	for (i = 0; i < b->outs.n; i++) {
		if (remat_i_rows_out_open(b->outs.v[i], &b->meta, &b->c.outs[b->c.nout], &err)) {
			cli_error("%s", err.msg);
			return cli_exit_code(err.code);
		}
		b->c.nout++;
	}
	memset(&o, 0, sizeof(o));
	o.jobs = b->jobs;
	o.time_limit = b->time_limit;
	o.seed = b->seed;
	o.options = b->popts.v;
	o.n_options = b->popts.n;
	o.stop = &stop_flag;
	o.on_row = on_row;
	o.on_tick = on_tick;
	o.ctx = &b->c;
	b->c.total = b->nruns;
	b->c.start = remat_now();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	draw_bar(&b->c, 0, 0, 1);
	rc = remat_i_bench_pool(b->graphs, b->runs, b->nruns, &o, &err);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	clear_bar(&b->c);
	for (i = 0; i < b->c.nout; i++) {
		struct remat_error e2;

		remat_error_clear(&e2);
		if (remat_i_rows_out_close(b->c.outs[i], &e2) && rc == REMAT_OK) {
			err = e2;
			rc = e2.code;
		}
	}
	b->c.nout = 0;
	if (rc == REMAT_ECANCELED) {
		cli_note("interrupted: %lld of %lld runs finished%s", (long long)b->c.rows.n,
			 (long long)b->nruns, b->outs.n ? " and kept in the output files" : "");
		return CLI_EXIT_INTERRUPTED;
	}
	if (rc) {
		cli_error("%s", err.msg);
		return cli_exit_code(rc);
	}
	if (!b->quiet) {
		char e1[32];
		int64_t cnt[REMAT_I_RUN_NSTATUS] = { 0 };
		int64_t k;

		for (k = 0; k < b->c.rows.n; k++)
			cnt[b->c.rows.v[k].status]++;
		fmt_clock(e1, sizeof(e1), remat_now() - b->c.start);
		cli_note("%lld runs in %s: %lld ok, %lld nofit, %lld timeout, %lld crash, "
			 "%lld error", (long long)b->c.rows.n, e1, (long long)cnt[0],
			 (long long)cnt[1], (long long)cnt[2], (long long)cnt[3],
			 (long long)cnt[4]);
	}
	return CLI_EXIT_OK;
}

/* Stage 4: the rows in a stable order, each -o file rewritten so. */
static int write_rows(struct bench *b)
{
	struct remat_error err;
	int i;

	remat_error_clear(&err);
	if (remat_i_rows_sort(&b->c.rows, &err)) {
		cli_error("%s", err.msg);
		return CLI_EXIT_SYSTEM;
	}
	/* The files were filled as runs finished. */
	for (i = 0; i < b->outs.n; i++)
		if (remat_i_rows_write(b->outs.v[i], &b->c.rows, &b->meta, 0, &err)) {
			cli_error("%s", err.msg);
			return CLI_EXIT_SYSTEM;
		}
	return CLI_EXIT_OK;
}

/* Stage 5: name every run that crashed or failed; how many. */
static int64_t report_failures(const struct remat_i_rows *t)
{
	int64_t k, failed = 0;

	for (k = 0; k < t->n; k++) {
		const struct remat_i_row *r = &t->v[k];
		char name[300];

		if (r->status != REMAT_I_RUN_CRASH && r->status != REMAT_I_RUN_ERROR)
			continue;
		remat_i_row_name(r, name, sizeof(name));
		cli_note("failed: %s: %s: %s", name, remat_i_run_status_name(r->status),
			 r->error);
		failed++;
	}
	return failed;
}

/* Stage 6: one SVG per graph file into dir. */
static int plot_all(const char *dir, const struct remat_i_rows *t)
{
	struct remat_error err;
	char **used = calloc((size_t)t->n + 1, sizeof(char *));
	int64_t i = 0, nused = 0, k;
	int code = CLI_EXIT_OK;

	remat_error_clear(&err);
	if (!used) {
		cli_error("out of memory");
		return CLI_EXIT_SYSTEM;
	}
	if (mkdir_p(dir) != 0) {
		cli_error("%s: cannot create the folder: %s", dir, strerror(errno));
		free(used);
		return CLI_EXIT_SYSTEM;
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
			code = cli_exit_code(err.code);
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

/* Stage 7: compare with (or rewrite) the baseline. */
static int check_baseline(const struct bench *b)
{
	const char *path = b->baseline;
	struct remat_i_rows base, copy;
	struct remat_i_compare cmp;
	struct remat_error err;
	int have_old = 1, code = CLI_EXIT_OK;
	int64_t i;

	remat_error_clear(&err);
	remat_i_rows_init(&base);
	remat_i_rows_init(&copy);
	if (remat_i_rows_read(path, &base, &err)) {
		/* What was read before the error goes too. */
		remat_i_rows_free(&base);
		remat_i_rows_init(&base);
		if (!b->update_baseline || access(path, F_OK) == 0) {
			cli_error("%s", err.msg);
			return cli_exit_code(err.code);
		}
		have_old = 0;
	}
	/* The comparison reorders its inputs: compare a copy of ours. */
	for (i = 0; i < b->c.rows.n; i++)
		if (remat_i_rows_push(&copy, &b->c.rows.v[i], &err))
			goto oom;
	if (remat_i_rows_compare(&base, &copy, b->tolerance, &cmp, &err))
		goto oom;
	if (have_old) {
		for (i = 0; i < cmp.n; i++) {
			const struct remat_i_finding *f = &cmp.v[i];

			if (f->kind == REMAT_I_REGRESSION || f->kind == REMAT_I_MISMATCH)
				cli_note("%s: %s", f->kind == REMAT_I_REGRESSION ? "regression" :
					 "not comparable", f->msg);
			else if (f->kind == REMAT_I_IMPROVED)
				cli_note("improved: %s", f->msg);
		}
		cli_note("against %s: %lld runs compared, %lld regressions, %lld not comparable, "
			 "%lld improved, %lld new, %lld not run (tolerance %g%%)", path,
			 (long long)cmp.compared, (long long)cmp.count[REMAT_I_REGRESSION],
			 (long long)cmp.count[REMAT_I_MISMATCH],
			 (long long)cmp.count[REMAT_I_IMPROVED], (long long)cmp.count[REMAT_I_NEW],
			 (long long)cmp.count[REMAT_I_MISSING], 100 * b->tolerance);
	}
	if (b->update_baseline) {
		if (have_old && cmp.count[REMAT_I_MISSING] > 0)
			cli_note("note: %lld runs of the old baseline were not run here and are "
				 "left out of the new one", (long long)cmp.count[REMAT_I_MISSING]);
		if (remat_i_rows_write(path, &b->c.rows, NULL, REMAT_I_ROWS_NO_TIME, &err)) {
			cli_error("%s", err.msg);
			code = CLI_EXIT_SYSTEM;
		} else {
			cli_note("wrote the baseline %s (%lld runs)", path, (long long)b->c.rows.n);
		}
	} else if (cmp.count[REMAT_I_REGRESSION] + cmp.count[REMAT_I_MISMATCH] > 0) {
		code = CLI_EXIT_REGRESSION;
	}
	remat_i_compare_free(&cmp);
	remat_i_rows_free(&base);
	remat_i_rows_free(&copy);
	return code;
oom:
	cli_error("%s", err.msg);
	remat_i_rows_free(&base);
	remat_i_rows_free(&copy);
	return CLI_EXIT_SYSTEM;
}

/* Stages 5 to 7 on the finished rows: failures, plots, baseline, table. */
static int check_results(const struct bench *b)
{
	int64_t failed = report_failures(&b->c.rows);
	int code = CLI_EXIT_OK;

	if (b->plot) {
		code = plot_all(b->plot, &b->c.rows);
		if (code != CLI_EXIT_OK)
			return code;
		if (!b->quiet)
			cli_note("plots in %s/", b->plot);
	}
	if (b->baseline)
		code = check_baseline(b);
	if (!b->outs.n && !b->plot && !b->baseline)
		print_table(&b->c.rows);
	if (code == CLI_EXIT_OK && failed > 0)
		code = CLI_EXIT_REGRESSION;
	return code;
}

int cmd_bench(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct bench b;
	struct cli_opt opts[] = {
		OPT_STRING_C('p', "planners", &b.planner_spec, "LIST", CLI_COMPLETE_PLANNERS,
			     "planners: all (default), fast, NAME,... and -NAME to leave out"),
		OPT_STRING('b', "budgets", &b.budget_spec, "LIST",
			   "budgets: 80%, 4GiB, LO..HI:N (N points), LO..HI:STEP, comma lists "
			   "(default 10%..100%:10%)"),
		OPT_INT('j', "jobs", &b.jobs, "N", 1, 1024,
			"runs at once, each in its own process (default 1)"),
		OPT_SECONDS('t', "time-limit", &b.time_limit,
			    "per run; a run still going well past it is killed"),
		OPT_UINT64(0, "seed", &b.seed, "N", "seed for randomized planners (default 1)"),
		OPT_LIST('o', "output", &b.outs, "FILE",
			 "write the rows to FILE.csv or FILE.json (repeatable)"),
		OPT_STRING(0, "plot", &b.plot, "DIR",
			   "draw DIR/GRAPH.svg: overhead vs budget per planner"),
		OPT_STRING(0, "baseline", &b.baseline, "FILE",
			   "compare with FILE; exit 5 naming each regression"),
		OPT_CALLBACK(0, "tolerance", &b.tolerance, "T",
			     "a fraction (0.01) or a percentage (1%)", parse_tolerance,
			     "cost growth allowed against the baseline (default 1%)"),
		OPT_FLAG(0, "update-baseline", &b.update_baseline,
			 "rewrite the --baseline FILE with these results"),
		OPT_STRING(0, "emit-jobs", &b.emit_dir, "DIR",
			   "print one command per run (writing DIR/N.json) and exit"),
		OPT_FLAG(0, "merge", &b.merge,
			 "the arguments are results files (or folders): join them"),
		OPT_FLAG('q', "quiet", &b.quiet, "no progress on stderr"),
		OPT_PLANNER_OPTIONS(&b.popts),
		OPT_END()
	};
	int code;

	bench_init(&b);
	code = cli_parse(cmd, opts, &argc, argv);
	if (code != CLI_GO_ON)
		return code;
	b.inputs = argv;
	b.ninputs = argc;
	b.time_limit_text = cli_given(opts, "time-limit");
	b.seed_text = cli_given(opts, "seed");
	b.c.quiet = b.quiet;

	code = check_options(&b, opts);
	if (code == CLI_EXIT_OK)
		code = b.merge ? merge_inputs(&b) : expand_inputs(&b);
	if (code == CLI_EXIT_OK && b.emit_dir) {
		code = emit_jobs(&b);
	} else if (code == CLI_EXIT_OK) {
		if (!b.merge)
			code = run_all(&b);
		if (code == CLI_EXIT_OK)
			code = write_rows(&b);
		if (code == CLI_EXIT_OK)
			code = check_results(&b);
	}
	bench_free(&b);
	cli_release(opts);
	return code;
}
