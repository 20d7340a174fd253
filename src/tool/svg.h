/*
 * svg.h - the pictures remat draws itself, as SVG (no plotting
 * dependency): the overhead-versus-budget curves of a benchmark, and the
 * memory timeline of one schedule.  Both are written atomically.
 * Internal to libremat.
 */
#ifndef REMAT_SVG_H
#define REMAT_SVG_H

#include <stdint.h>
#include <stdio.h>

#include "remat/remat.h"
#include "tool/results.h"

/*
 * Overhead (% extra compute over the no-remat cost) against budget (% of
 * the no-remat peak) for every planner in rows, which all belong to one
 * graph (one file) and are in canonical order (remat_i_rows_sort): one
 * curve per planner through its feasible runs (broken where a run did not
 * fit), the no-remat peak and the memory lower bound marked, the region
 * below the lower bound shaded.
 */
void remat_i_svg_overhead(FILE *f, const struct remat_i_row *rows, int64_t n);
int remat_i_svg_overhead_write(const char *path, const struct remat_i_row *rows,
			       int64_t n, struct remat_error *err);

/*
 * Memory at every step of schedule s on g (as remat_simulate reports it:
 * during a compute, after a free), with the budget (budget < 0: none) and
 * the no-remat peak as lines, the peak marked, what exceeds the budget in
 * red, and every recomputation marked on a strip under the curve.  label
 * (may be NULL) names the schedule in the subtitle ("planner rotor").
 * REMAT_EINPUT when the schedule is invalid (the message says why).
 */
int remat_i_svg_timeline(FILE *f, const struct remat_graph *g,
			 const struct remat_schedule *s, int64_t budget,
			 const char *label, struct remat_error *err);
int remat_i_svg_timeline_write(const char *path, const struct remat_graph *g,
			       const struct remat_schedule *s, int64_t budget,
			       const char *label, struct remat_error *err);

/*
 * Ticks for an axis over [lo, hi]: about target "nice" values (1, 2 or 5
 * times a power of ten) covering the range.  *first is the first tick,
 * *step the spacing, and the return value the count.  Exposed for tests.
 */
int remat_i_nice_ticks(double lo, double hi, int target, double *first,
		       double *step);

#endif
