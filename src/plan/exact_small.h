/*
 * exact_small.h - the cheapest schedule of a tiny graph, by a shortest
 * path over every state a schedule can be in.  Internal to libremat;
 * auto's first step on graphs small enough for it.
 *
 * A state is which needed nodes are resident and which "recompute":
 * false nodes were computed.  "compute v" costs cost(v) and needs v's
 * inputs resident, v not resident nor an input nor (if it may not be
 * recomputed) computed before, and what is resident + mem(v) +
 * workspace(v) within the budget, as the simulator measures a compute;
 * "free v" costs nothing.  The goal: every output resident.  Dijkstra's
 * search then gives the least cost over every schedule, in any order:
 * a proof, where the MILP's holds in one order.  Nodes no output needs
 * are never computed (an unneeded input is freed first).
 */
#ifndef REMAT_PLAN_EXACT_SMALL_H
#define REMAT_PLAN_EXACT_SMALL_H

#include <stdint.h>

#include "remat/graph.h"
#include "remat/schedule.h"

/* The most state bits (needed nodes + nodes computed once) searched. */
#define REMAT_EXACT_MAX_BITS 20

/*
 * Whether g is small enough: its state bits at most bits (<=
 * REMAT_EXACT_MAX_BITS): 1 yes, 0 no, -1 out of memory.
 */
int remat_i_exact_fits(const struct remat_graph *g, int32_t bits);

/*
 * Search until deadline (remat_now() value; 0: none).  On REMAT_OK,
 * *cost is the least cost of a schedule within budget and out holds one
 * such schedule (computes and explicit frees), or *cost is -1: no
 * schedule fits (proven).  REMAT_ECANCELED at the deadline (out and
 * *cost untouched), REMAT_EUSAGE when g does not fit, REMAT_ENOMEM.
 */
int remat_i_exact_small(const struct remat_graph *g, int64_t budget, double deadline,
			struct remat_schedule *out, double *cost, struct remat_error *err);

#endif
