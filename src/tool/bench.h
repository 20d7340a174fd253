/*
 * bench.h - batch benchmarking: graphs x planners x budgets, each run in a
 * forked child so that a crash or a runaway planner costs only that run.
 * Internal to libremat; remat bench (src/cli/cmd_bench.c) drives it.
 *
 * The library never prints: finished rows and progress go to callbacks.
 * The pool forks (POSIX); a child does its one run, writes its row to a
 * pipe and leaves with _exit().
 */
#ifndef REMAT_BENCH_H
#define REMAT_BENCH_H

#include <signal.h>
#include <stdint.h>

#include "remat/remat.h"
#include "tool/results.h"

/*
 * Planners from a spec: a comma list of names and groups, applied left to
 * right: "all" (every registered planner), "fast" (auto and the planners
 * auto tries), NAME, and "-NAME" or "-fast" to take away.  Registry order;
 * REMAT_EUSAGE naming an unknown planner.  *out is malloc'd.
 */
int remat_i_bench_planners(const char *spec, const struct remat_planner ***out,
			   int *n, struct remat_error *err);

/*
 * Expand paths: a file is kept as given; a folder contributes every *.json
 * file (and *.csv file when with_csv) under it, recursively, hidden
 * entries skipped, in name order, as FOLDER/NAME.  *files is malloc'd (free with
 * remat_i_bench_files_free); from_dir[i] says whether file i came from a
 * folder.
 */
int remat_i_bench_files(const char *const *paths, int npaths, int with_csv,
			char ***files,
			uint8_t **from_dir, int *nfiles, struct remat_error *err);
void remat_i_bench_files_free(char **files, uint8_t *from_dir, int n);

/*
 * Load a graph found by remat_i_bench_files.  A JSON file found in a folder
 * whose "format" is some other string (a schedule, a results file) is not
 * an error: *skipped is set and *out is NULL.
 */
int remat_i_bench_load(const char *file, int from_dir, struct remat_graph **out,
		       int *skipped, struct remat_error *err);

struct remat_i_bench_graph {
	const char *file;          /* as given */
	const struct remat_graph *g;
};

struct remat_i_bench_job {
	int graph;                 /* index into the graphs */
	const struct remat_planner *planner;
	const char *budget_spec;
	int64_t budget;            /* bytes, resolved for this graph */
};

/*
 * Every graph x planner x budget (in that nesting), budgets resolved per
 * graph.  *jobs is malloc'd.
 */
int remat_i_bench_expand(const struct remat_i_bench_graph *graphs, int ngraphs,
			 const struct remat_planner *const *planners, int nplanners,
			 char *const *budgets, int nbudgets,
			 struct remat_i_bench_job **jobs, int64_t *njobs,
			 struct remat_error *err);

struct remat_i_bench_opts {
	int jobs;                  /* runs at once, >= 1 */
	double time_limit;         /* seconds per run, 0 for none */
	uint64_t seed;
	const struct remat_kv *options; /* planner options (each planner gets */
	int n_options;             /* those it declares; auto gets all) */
	volatile sig_atomic_t *stop; /* may be NULL; nonzero: stop soon */
	/* A run finished; a non-OK return stops the pool with that status. */
	int (*on_row)(void *ctx, const struct remat_i_row *r, struct remat_error *err);
	/* Called a few times a second and after every row (may be NULL). */
	void (*on_tick)(void *ctx, int64_t done, int running);
	void *ctx;
};

/* The row of a job before it runs: graph figures, planner, budget. */
void remat_i_bench_row_init(const struct remat_i_bench_graph *gr,
			    const struct remat_i_bench_job *j, struct remat_i_row *r);

/* Run one job in this process and fill r (never fails: errors go in r). */
void remat_i_bench_run_one(const struct remat_i_bench_graph *gr,
			   const struct remat_i_bench_job *j,
			   const struct remat_i_bench_opts *o, struct remat_i_row *r);

/*
 * When a run with this time limit is killed: the limit plus the larger of
 * 2 s and a tenth of it, so a planner that honours its deadline has time
 * to return what it found.
 */
double remat_i_bench_kill_after(double time_limit);

/*
 * Run the jobs, at most o->jobs at a time, each in a forked child; report
 * each finished run through o->on_row (in the order they finish).  A run
 * past remat_i_bench_kill_after() is killed (status timeout); a child that
 * dies is status crash.  Returns REMAT_OK when every job ran,
 * REMAT_ECANCELED when *o->stop was set or a run was interrupted by
 * SIGINT/SIGTERM/SIGHUP (running children are killed, their rows are not
 * reported), or the status of a failing on_row or of fork/pipe.
 */
int remat_i_bench_pool(const struct remat_i_bench_graph *graphs,
		       const struct remat_i_bench_job *jobs, int64_t njobs,
		       const struct remat_i_bench_opts *o, struct remat_error *err);

#endif
