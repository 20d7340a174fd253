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

struct remat_sim_result;

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

/*
 * Read a remat-schedule JSON file against g.  Node ids are resolved to
 * indices; an unknown id or op is REMAT_EINPUT naming the step.
 */
int remat_schedule_read(const char *path, const struct remat_graph *g,
			struct remat_schedule *out, struct remat_error *err);
int remat_schedule_read_buffer(const char *buf, size_t len,
			       const char *source,
			       const struct remat_graph *g,
			       struct remat_schedule *out,
			       struct remat_error *err);

/* What goes into a written schedule besides its steps. */
struct remat_schedule_meta {
	const char *planner;                  /* may be NULL */
	int64_t budget;                       /* -1: none */
	const struct remat_sim_result *summary; /* may be NULL */
};

/*
 * Write s as remat-schedule JSON to path atomically: a temporary file in
 * the same directory, flushed and synced, then renamed into place.  On
 * any failure the temporary is removed and path is untouched.
 */
int remat_schedule_write(const char *path, const struct remat_graph *g,
			 const struct remat_schedule *s,
			 const struct remat_schedule_meta *meta,
			 struct remat_error *err);

#ifdef __cplusplus
}
#endif
#endif
