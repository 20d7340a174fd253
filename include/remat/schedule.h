/*
 * remat/schedule.h - schedules (FORMATS.md section 2): a sequence of
 * compute and free steps over a graph's node indices.
 */
#ifndef REMAT_SCHEDULE_H
#define REMAT_SCHEDULE_H

#include <stdint.h>

#include "remat/error.h"
#include "remat/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

enum remat_op { REMAT_OP_COMPUTE = 0, REMAT_OP_FREE = 1 };

struct remat_step {
	int32_t op;   /* enum remat_op */
	int32_t node; /* node index */
};

struct remat_schedule {
	struct remat_step *steps;
	int64_t n;
	int64_t cap;
};

void remat_schedule_init(struct remat_schedule *s);
/* Free the steps; the schedule is left empty and reusable. */
void remat_schedule_release(struct remat_schedule *s);
/* Drop all steps, keep the storage. */
static inline void remat_schedule_clear(struct remat_schedule *s) { s->n = 0; }
int remat_schedule_reserve(struct remat_schedule *s, int64_t cap,
			   struct remat_error *err);
/* Append one step: REMAT_OK or REMAT_ENOMEM. */
int remat_schedule_push(struct remat_schedule *s, enum remat_op op,
			int32_t node, struct remat_error *err);
/* Replace dst's steps by a copy of src's. */
int remat_schedule_copy(struct remat_schedule *dst,
			const struct remat_schedule *src,
			struct remat_error *err);
/* Exchange the contents of two schedules (O(1)). */
void remat_schedule_swap(struct remat_schedule *a, struct remat_schedule *b);
/* Number of free steps. */
int64_t remat_schedule_count_frees(const struct remat_schedule *s);

#ifdef __cplusplus
}
#endif
#endif
