/*
 * arena.h - bump allocator for everything a graph owns (after git's
 * mem-pool.h).  Allocations are never freed one by one; the whole arena
 * goes at once.  Internal to libremat.
 */
#ifndef REMAT_ARENA_H
#define REMAT_ARENA_H

#include <stddef.h>

struct remat_arena;

struct remat_arena *remat_i_arena_new(void);
void remat_i_arena_free(struct remat_arena *a);
/* size bytes aligned to 16, or NULL when out of memory. */
void *remat_i_arena_alloc(struct remat_arena *a, size_t size);
/* Zeroed array of n elements of size each, or NULL (also on overflow). */
void *remat_i_arena_calloc(struct remat_arena *a, size_t n, size_t size);
char *remat_i_arena_strdup(struct remat_arena *a, const char *s);
/* Total bytes reserved from the system. */
size_t remat_i_arena_footprint(const struct remat_arena *a);

#endif
