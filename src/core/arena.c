/* arena.c - bump allocator; see arena.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/arena.h"

#define ARENA_MIN_BLOCK ((size_t)64 * 1024)

struct block {
	struct block *next;
	size_t size;
	size_t used;
	_Alignas(16) unsigned char data[];
};

struct remat_arena {
	struct block *head;
	size_t footprint;
};

struct remat_arena *remat_i_arena_new(void)
{
	return calloc(1, sizeof(struct remat_arena));
}

void remat_i_arena_free(struct remat_arena *a)
{
	struct block *b, *next;

	if (!a)
		return;
	for (b = a->head; b; b = next) {
		next = b->next;
		free(b);
	}
	free(a);
}

void *remat_i_arena_alloc(struct remat_arena *a, size_t size)
{
	struct block *b = a->head;
	size_t need = (size + 15) & ~(size_t)15;
	void *p;

	if (need < size)
		return NULL;
	if (need == 0)
		need = 16;
	if (!b || b->size - b->used < need) {
		size_t bsize = ARENA_MIN_BLOCK;

		/* Grow geometrically with the arena so there are O(log) blocks. */
		if (a->footprint / 4 > bsize)
			bsize = a->footprint / 4;
		if (need > bsize)
			bsize = need;
		if (bsize > SIZE_MAX - sizeof(struct block))
			return NULL;
		b = malloc(sizeof(struct block) + bsize);
		if (!b)
			return NULL;
		b->size = bsize;
		b->used = 0;
		b->next = a->head;
		a->head = b;
		a->footprint += bsize;
	}
	p = b->data + b->used;
	b->used += need;
	return p;
}

void *remat_i_arena_calloc(struct remat_arena *a, size_t n, size_t size)
{
	void *p;

	if (size && n > SIZE_MAX / size)
		return NULL;
	p = remat_i_arena_alloc(a, n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

char *remat_i_arena_strdup(struct remat_arena *a, const char *s)
{
	size_t len = strlen(s) + 1;
	char *p = remat_i_arena_alloc(a, len);

	if (p)
		memcpy(p, s, len);
	return p;
}

size_t remat_i_arena_footprint(const struct remat_arena *a)
{
	return a->footprint;
}
