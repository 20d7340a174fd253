/*
 * mincut.h - the cut the mincut planner makes, for its tests (internal).
 */
#ifndef REMAT_PLANNERS_MINCUT_H
#define REMAT_PLANNERS_MINCUT_H

#include <stdint.h>

#include "remat/graph.h"

/*
 * The minimum cut of g under the default policy (ban_intensive: the
 * compute-intensive operators banned, else only inputs, outputs and
 * "recompute": false).  saved[v] and recomputed[v] (g->n entries each)
 * receive the partition; *saved_bytes the bytes saved.  REMAT_ENOFIT
 * when g is not a training graph.
 */
int remat_i_mincut_cut(const struct remat_graph *g, int ban_intensive, uint8_t *saved,
		       uint8_t *recomputed, int64_t *saved_bytes, struct remat_error *err);

#endif
