/*
 * needed.h - which nodes the outputs need, and the figures that follow
 * from it.  A node is needed when some output depends on it (the outputs
 * themselves included); a schedule never has to compute anything else.
 * Internal to libremat; every planner and the plan runner ask here.
 */
#ifndef REMAT_ANALYSIS_NEEDED_H
#define REMAT_ANALYSIS_NEEDED_H

#include <stdint.h>

#include "remat/graph.h"
#include "remat/schedule.h"

/*
 * Set need[v] to 1 for every needed node (inputs included), 0 for the
 * rest.  need has g->n entries.  O(n + edges).
 */
void remat_i_needed(const struct remat_graph *g, uint8_t *need);

/*
 * The least cost of any schedule: the sum of cost over the needed
 * non-input nodes (each computed once).  -1 when out of memory.
 */
double remat_i_least_cost(const struct remat_graph *g);

/*
 * The least positive cost of g's nodes, 1 when none: the unit the bounds'
 * MILPs count costs in (so that CBC's absolute tolerances stay small
 * beside them).
 */
double remat_i_cost_unit(const struct remat_graph *g);

/*
 * The outputs' bytes together (each once): every schedule holds them all
 * when its last compute runs (or at the end, when it computes nothing),
 * so no schedule peaks lower.
 */
int64_t remat_i_outputs_bytes(const struct remat_graph *g);

/* What is held while v runs: its distinct inputs, its output, its workspace. */
int64_t remat_i_working_set(const struct remat_graph *g, int32_t v);

/*
 * The least peak of any schedule: the largest (distinct inputs + own
 * output + workspace) over the needed non-input nodes.  (Over every node
 * this is docs/FORMATS.md's min_peak_lower_bound.)  -1 when out of memory.
 */
int64_t remat_i_least_peak(const struct remat_graph *g);

/*
 * The needed nodes once each, compute-only, in g->topo: the cheapest
 * schedule there is (remat_i_least_cost), with a peak no higher than the
 * no-remat peak.
 */
int remat_i_needed_order(const struct remat_graph *g, struct remat_schedule *out,
			 struct remat_error *err);

#endif
