/*
 * heap.h - the binary heap every priority queue in libremat uses: Kahn's
 * order in the graph builder, min-fill elimination in the tree
 * decomposition (with decrease-key), the greedy planner's candidates and
 * the evict-and-recompute replay's eviction candidates.
 *
 * REMAT_HEAP_DEFINE(name, T, Ctx, LESS, MOVED) defines, for elements of
 * type T in a caller-owned array h of n elements with h[0] least:
 *
 *   void name_push(T *h, int64_t *n, T e, Ctx *ctx)   h needs room for *n + 1
 *   T    name_pop(T *h, int64_t *n, Ctx *ctx)         *n > 0
 *   void name_update(T *h, int64_t n, int64_t i, Ctx *ctx)
 *                  h[i]'s key changed (either way): restore the order
 *   void name_heapify(T *h, int64_t n, Ctx *ctx)      order any array, O(n)
 *   int64_t name_sift_up(T *h, int64_t i, Ctx *ctx)   returns where h[i] lands
 *   void name_sift_down(T *h, int64_t n, int64_t i, Ctx *ctx)
 *
 * LESS(ctx, a, b) is a strict weak order ("a comes out before b") on
 * lvalues of type T (elements of h, or the one being placed); it may be
 * a function or a function-like macro.  For a struct T, a macro that
 * compares through &(a) and &(b) spares the copies a by-value function
 * can leave in the sift loops (see evict_replay.c).
 * MOVED(ctx, e, i) runs each time element e is stored at h[i]: a heap
 * that must find its elements again (for name_update) records i there;
 * the others pass REMAT_HEAP_UNTRACKED, which compiles to nothing.
 *
 * Why a macro and not one heap of void * with a comparator pointer (as
 * qsort): the comparator and the hook are inlined into every sift, so
 * the hot loops (min-fill on graphs of 10^5-10^6 nodes) pay no indirect
 * call per comparison and no element copy through memcpy.  The storage
 * stays the caller's, because the callers differ in it: most know their
 * bound (one slot per node), the replay grows its array with the lazily
 * deleted entries it keeps.
 *
 * Equal elements come out in an order fixed by the sift rules below (a
 * value moves past another only when strictly less; the right child is
 * taken only when strictly less than the left), so a given sequence of
 * operations always gives the same pops: plans depend on it.
 */
#ifndef REMAT_HEAP_H
#define REMAT_HEAP_H

#include <stdint.h>

/* MOVED for a heap that does not track positions. */

/*
 * Every function is marked unused: a file defines the whole family and
 * calls only some, and clang (unlike gcc) warns about an unused static
 * inline function that a macro expanded in the .c file itself.
 */
#if defined(__GNUC__) || defined(__clang__)
#define REMAT_HEAP_FN static inline __attribute__((unused))
#else
#define REMAT_HEAP_FN static inline
#endif
#define REMAT_HEAP_UNTRACKED(ctx, e, i) ((void)0)

#define REMAT_HEAP_DEFINE(name, T, Ctx, LESS, MOVED)                           \
/* Put e into the hole at i, moving larger parents down; where e lands. */     \
REMAT_HEAP_FN int64_t name##_place_up(T *h, int64_t i, T e, Ctx *ctx)          \
{                                                                              \
	(void)ctx;                                                             \
	while (i > 0) {                                                        \
		int64_t p = (i - 1) / 2;                                       \
                                                                               \
		if (!LESS(ctx, e, h[p]))                                       \
			break;                                                 \
		h[i] = h[p];                                                   \
		MOVED(ctx, h[i], i);                                           \
		i = p;                                                         \
	}                                                                      \
	h[i] = e;                                                              \
	MOVED(ctx, e, i);                                                      \
	return i;                                                              \
}                                                                              \
                                                                               \
/* Put e into the hole at i, moving smaller children up into it. */            \
REMAT_HEAP_FN void name##_place_down(T *h, int64_t n, int64_t i, T e,          \
				     Ctx *ctx)                                 \
{                                                                              \
	(void)ctx;                                                             \
	for (;;) {                                                             \
		int64_t c = 2 * i + 1;                                         \
                                                                               \
		if (c >= n)                                                    \
			break;                                                 \
		if (c + 1 < n && LESS(ctx, h[c + 1], h[c]))                    \
			c++;                                                   \
		if (!LESS(ctx, h[c], e))                                       \
			break;                                                 \
		h[i] = h[c];                                                   \
		MOVED(ctx, h[i], i);                                           \
		i = c;                                                         \
	}                                                                      \
	h[i] = e;                                                              \
	MOVED(ctx, e, i);                                                      \
}                                                                              \
                                                                               \
REMAT_HEAP_FN int64_t name##_sift_up(T *h, int64_t i, Ctx *ctx)                \
{                                                                              \
	return name##_place_up(h, i, h[i], ctx);                               \
}                                                                              \
                                                                               \
REMAT_HEAP_FN void name##_sift_down(T *h, int64_t n, int64_t i, Ctx *ctx)      \
{                                                                              \
	name##_place_down(h, n, i, h[i], ctx);                                 \
}                                                                              \
                                                                               \
REMAT_HEAP_FN void name##_push(T *h, int64_t *n, T e, Ctx *ctx)                \
{                                                                              \
	int64_t i = (*n)++;                                                    \
                                                                               \
	(void)name##_place_up(h, i, e, ctx);                                   \
}                                                                              \
                                                                               \
REMAT_HEAP_FN T name##_pop(T *h, int64_t *n, Ctx *ctx)                         \
{                                                                              \
	T top = h[0];                                                          \
	int64_t len = --(*n);                                                  \
                                                                               \
	if (len > 0)                                                           \
		name##_place_down(h, len, 0, h[len], ctx);                     \
	return top;                                                            \
}                                                                              \
                                                                               \
/*                                                                             \
 * Up, then down from where it lands: with one key changed only one of         \
 * them moves it.  With several keys changed before the updates (as in         \
 * treedec) the second may move it too, and the order is not always            \
 * restored: update after each change when it must be.                         \
 */                                                                            \
REMAT_HEAP_FN void name##_update(T *h, int64_t n, int64_t i, Ctx *ctx)         \
{                                                                              \
	i = name##_place_up(h, i, h[i], ctx);                                  \
	name##_place_down(h, n, i, h[i], ctx);                                 \
}                                                                              \
                                                                               \
REMAT_HEAP_FN void name##_heapify(T *h, int64_t n, Ctx *ctx)                   \
{                                                                              \
	int64_t i;                                                             \
                                                                               \
	for (i = n / 2 - 1; i >= 0; i--)                                       \
		name##_place_down(h, n, i, h[i], ctx);                         \
}

#endif
