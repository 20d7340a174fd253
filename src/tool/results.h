/*
 * results.h - benchmark results: one row per (graph, planner, budget) run,
 * written and read as CSV or JSON, merged, and compared with a baseline.
 * Internal to libremat (remat bench is its user).
 *
 * A row is a fixed-size record with no pointers, so that a forked run can
 * hand it to its parent in one write() on a pipe.
 *
 * Files.  The format follows the extension: ".csv" or ".json".
 * - CSV: a header line with the columns below, then one line per row
 *   (RFC 4180 quoting); empty fields where a value is unknown.
 * - JSON: {"format": "remat-bench", "version": 1, ..., "rows": [{...}]}
 *   with one object per row and null where a value is unknown.
 * Columns, in order: graph, file, nodes, planner, budget_spec, budget,
 * budget_pct, status, feasible, peak, cost, overhead, recomputes, time_s,
 * no_remat_peak, lower_bound, chosen, error.
 *
 * A run is identified by (file, planner, budget_spec): the graph file as
 * given on the command line, the planner's name and the budget text.
 */
#ifndef REMAT_RESULTS_H
#define REMAT_RESULTS_H

#include <stdint.h>
#include <stdio.h>

#include "remat/error.h"

enum remat_i_run_status {
	REMAT_I_RUN_OK = 0,    /* a schedule within the budget */
	REMAT_I_RUN_NOFIT,     /* no schedule within the budget was found */
	REMAT_I_RUN_TIMEOUT,   /* the time limit stopped it (or killed it) */
	REMAT_I_RUN_CRASH,     /* the run's process died */
	REMAT_I_RUN_ERROR,     /* any other failure: a bad option, a planner bug */
	REMAT_I_RUN_NSTATUS
};

struct remat_i_row {
	char graph[128];       /* the graph's name */
	char file[512];        /* the graph file as given */
	char planner[64];
	char budget_spec[64];  /* the budget as written: "80%", "4GiB" */
	char chosen[64];       /* auto: the planner whose schedule won, or "" */
	char error[400];       /* why it failed, or "" */
	int32_t nodes;
	int status;            /* enum remat_i_run_status */
	int feasible;          /* a valid schedule with peak <= budget */
	int has_schedule;      /* peak, cost, overhead, recomputes are known */
	int64_t budget;        /* bytes */
	int64_t peak;
	int64_t recomputes;
	int64_t no_remat_peak;
	int64_t lower_bound;   /* the graph's min_peak_lower_bound */
	double cost;
	double overhead;       /* cost / baseline cost - 1 */
	double time_s;         /* wall-clock planning time; NaN when unknown */
};

struct remat_i_rows {
	struct remat_i_row *v;
	int64_t n, cap;
};

/* Metadata a JSON file records (fields may be NULL). */
struct remat_i_rows_meta {
	const char *date;      /* "2024-05-01T12:00:00Z" */
	const char *machine;   /* "x86_64, 2 CPUs, Debian 12" */
};

/* Leave out what changes from run to run (planning times, metadata). */
#define REMAT_I_ROWS_NO_TIME 1u

const char *remat_i_run_status_name(int status);
/* The status named s, or -1. */
int remat_i_run_status_parse(const char *s);

/* Does the row describe a schedule within its budget? */
int remat_i_row_fits(const struct remat_i_row *r);
/* "vgg16-train auto 80%": how messages name a run. */
void remat_i_row_name(const struct remat_i_row *r, char *buf, size_t size);

void remat_i_rows_init(struct remat_i_rows *t);
void remat_i_rows_free(struct remat_i_rows *t);
int remat_i_rows_push(struct remat_i_rows *t, const struct remat_i_row *r,
		      struct remat_error *err);

/*
 * Sort into the canonical order: file, planner (registry order, unknown
 * names after, by name), budget in bytes, budget text.  Stable.
 */
int remat_i_rows_sort(struct remat_i_rows *t, struct remat_error *err);
/*
 * Sort, and of rows with the same (file, planner, budget_spec) keep the
 * one that came last.  *dropped (may be NULL) counts the rows dropped.
 */
int remat_i_rows_dedup(struct remat_i_rows *t, int64_t *dropped,
		       struct remat_error *err);

/* 'c' for ".csv", 'j' for ".json", 0 for anything else. */
int remat_i_rows_format(const char *path);

/*
 * Read a results file (CSV or JSON, told apart by content) and append its
 * rows to t.  Errors are REMAT_EINPUT naming the file, line or row and
 * column.
 */
int remat_i_rows_read(const char *path, struct remat_i_rows *t,
		      struct remat_error *err);
/* The same from a buffer; source names it in messages. */
int remat_i_rows_read_buffer(const char *buf, size_t len, const char *source,
			     struct remat_i_rows *t, struct remat_error *err);

/* Write every row to f as CSV or JSON (fmt 'c' or 'j'). */
void remat_i_rows_print(FILE *f, int fmt, const struct remat_i_rows *t,
			const struct remat_i_rows_meta *meta, unsigned flags);
/* Write the rows to path (format by extension) atomically. */
int remat_i_rows_write(const char *path, const struct remat_i_rows *t,
		       const struct remat_i_rows_meta *meta, unsigned flags,
		       struct remat_error *err);

/*
 * Incremental output: every added row is on disk (flushed) when add
 * returns, and a JSON file is kept a complete document after each row (the
 * closing brackets are rewritten after every row), so an interrupted
 * sweep leaves a readable file with every finished row.
 */
struct remat_i_rows_out;
int remat_i_rows_out_open(const char *path, const struct remat_i_rows_meta *meta,
			  struct remat_i_rows_out **out, struct remat_error *err);
int remat_i_rows_out_add(struct remat_i_rows_out *o, const struct remat_i_row *r,
			 struct remat_error *err);
/* Close; the file stays as written.  o may be NULL. */
int remat_i_rows_out_close(struct remat_i_rows_out *o, struct remat_error *err);

/* Comparison with a baseline. */
enum remat_i_finding_kind {
	REMAT_I_REGRESSION = 0, /* feasible -> not, overhead up, peak over budget */
	REMAT_I_MISMATCH,       /* not comparable: the budget in bytes differs */
	REMAT_I_IMPROVED,       /* infeasible -> feasible, or overhead down */
	REMAT_I_NEW,            /* in the results, not in the baseline */
	REMAT_I_MISSING,        /* in the baseline, not in the results */
	REMAT_I_NFINDING
};

struct remat_i_finding {
	int kind;
	char msg[640];          /* "vgg16-train auto 80%: ..." */
};

struct remat_i_compare {
	struct remat_i_finding *v;
	int64_t n, cap;
	int64_t count[REMAT_I_NFINDING];
	int64_t compared;       /* runs present in both */
};

/*
 * Compare results cur with baseline base (each deduplicated first, as
 * remat_i_rows_dedup; both may be reordered).  tolerance is the relative
 * growth of a run's cost (1 + overhead) allowed before it counts as a
 * regression: 0.01 lets a run cost 1% more than in the baseline.
 * Findings are in the canonical order of the runs.  A row claiming a
 * schedule within budget whose peak exceeds its budget is a regression
 * whether or not the baseline has it.
 */
int remat_i_rows_compare(struct remat_i_rows *base, struct remat_i_rows *cur,
			 double tolerance, struct remat_i_compare *out,
			 struct remat_error *err);
void remat_i_compare_free(struct remat_i_compare *c);

#endif
