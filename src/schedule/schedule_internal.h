/* schedule_internal.h - checks on schedules shared inside libremat. */
#ifndef REMAT_SCHEDULE_INTERNAL_H
#define REMAT_SCHEDULE_INTERNAL_H

#include <stdint.h>

#include "remat/error.h"
#include "remat/graph.h"
#include "remat/schedule.h"

/*
 * REMAT_EINPUT naming the first step whose node index is out of range
 * (a schedule built through the library, not read from a file), else
 * REMAT_OK; *step gets that step (-1 when none).  The simulator, the
 * liveness pass and the schedule writer call it before they index by node.
 */
int remat_i_check_indices(const struct remat_graph *g, const struct remat_schedule *s,
			  int64_t *step, struct remat_error *err);

#endif
