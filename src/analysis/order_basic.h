/*
 * order_basic.h - the order methods that need no planner (order.c), for
 * remat_order_compute() in src/plan/order_pick.c.  Internal to libremat.
 */
#ifndef REMAT_ANALYSIS_ORDER_BASIC_H
#define REMAT_ANALYSIS_ORDER_BASIC_H

#include "remat/order.h"

/* file, greedy and local; any other method gives the file's order. */
int remat_i_order_basic(const struct remat_graph *g, enum remat_order_method m,
			const struct remat_order_opts *opts, int32_t *order, int64_t *peak,
			struct remat_error *err);

/*
 * The local search from order (in and out; *peak its peak on entry):
 * order changes only when the search found a lower peak.
 */
int remat_i_order_local_from(const struct remat_graph *g, const struct remat_order_opts *opts,
			     int32_t *order, int64_t *peak, struct remat_error *err);

#endif
