/*
 * seq_moves.c - a topological sequence of nodes under moves; see
 * seq_moves.h.
 */
#include <stdlib.h>
#include <string.h>

#include "plan/seq_moves.h"

int remat_i_seq_init(struct remat_i_seq *s, const struct remat_graph *g)
{
	size_t n = (size_t)g->n + 1;

	memset(s, 0, sizeof(*s));
	s->g = g;
	s->seq = malloc(sizeof(int32_t) * n);
	s->pos = malloc(sizeof(int32_t) * n);
	s->save = malloc(sizeof(int32_t) * n);
	s->blk = malloc(sizeof(int32_t) * n);
	s->mark = calloc(n, sizeof(int32_t));
	if (s->seq && s->pos && s->save && s->blk && s->mark)
		return 0;
	remat_i_seq_release(s);
	return -1;
}

void remat_i_seq_release(struct remat_i_seq *s)
{
	free(s->seq);
	free(s->pos);
	free(s->save);
	free(s->blk);
	free(s->mark);
	memset(s, 0, sizeof(*s));
}

void remat_i_seq_load(struct remat_i_seq *s, const uint8_t *keep, const int32_t *order)
{
	const struct remat_graph *g = s->g;
	int32_t v, i;

	for (v = 0; v < g->n; v++)
		s->pos[v] = -1;
	s->m = 0;
	for (i = 0; i < g->n; i++) {
		v = order[i];
		if (keep[v]) {
			s->pos[v] = s->m;
			s->seq[s->m++] = v;
		}
	}
}

void remat_i_seq_copy(struct remat_i_seq *s, const struct remat_i_seq *from)
{
	s->m = from->m;
	memcpy(s->seq, from->seq, sizeof(int32_t) * (size_t)from->m);
	memcpy(s->pos, from->pos, sizeof(int32_t) * ((size_t)from->g->n + 1));
}

/* Put seq[a..b]'s places into pos. */
static void repos(struct remat_i_seq *s, int32_t a, int32_t b)
{
	int32_t i;

	for (i = a; i <= b; i++)
		s->pos[s->seq[i]] = i;
}

void remat_i_seq_move(struct remat_i_seq *s, int32_t i, int32_t j)
{
	int32_t v = s->seq[i];

	if (j < i) {
		memcpy(s->save, s->seq + j, sizeof(int32_t) * (size_t)(i - j + 1));
		memmove(s->seq + j + 1, s->seq + j, sizeof(int32_t) * (size_t)(i - j));
		s->seq[j] = v;
		repos(s, j, i);
	} else {
		memcpy(s->save, s->seq + i, sizeof(int32_t) * (size_t)(j - i + 1));
		memmove(s->seq + i, s->seq + i + 1, sizeof(int32_t) * (size_t)(j - i));
		s->seq[j] = v;
		repos(s, i, j);
	}
}

void remat_i_seq_block_move(struct remat_i_seq *s, int32_t i, int32_t j)
{
	const struct remat_graph *g = s->g;
	int32_t a = i < j ? i : j, b = i < j ? j : i, p, k, nb = 0, st;

	if (s->stamp == INT32_MAX) {
		memset(s->mark, 0, sizeof(int32_t) * (size_t)g->n);
		s->stamp = 0;
	}
	st = ++s->stamp;
	memcpy(s->save, s->seq + a, sizeof(int32_t) * (size_t)(b - a + 1));
	/* Mark what comes along, walking away from i (so a node is marked
	 * before the walk reaches it). */
	s->mark[s->seq[i]] = st;
	if (j < i) {
		for (p = i; p >= j; p--) {
			int32_t x = s->seq[p];

			if (s->mark[x] != st)
				continue;
			for (k = g->in_off[x]; k < g->in_off[x + 1]; k++)
				if (s->pos[g->in_idx[k]] >= j)
					s->mark[g->in_idx[k]] = st;
		}
	} else {
		for (p = i; p <= j; p++) {
			int32_t x = s->seq[p];

			if (s->mark[x] != st)
				continue;
			for (k = g->use_off[x]; k < g->use_off[x + 1]; k++) {
				int32_t q = s->pos[g->use_idx[k]];

				if (q >= 0 && q <= j)
					s->mark[g->use_idx[k]] = st;
			}
		}
	}
	/* The marked nodes first (j < i) or last (j > i), each group in order. */
	for (p = a; p <= b; p++)
		if (s->mark[s->save[p - a]] == st)
			s->blk[nb++] = s->save[p - a];
	p = a;
	if (j < i) {
		memcpy(s->seq + a, s->blk, sizeof(int32_t) * (size_t)nb);
		p += nb;
	}
	for (k = a; k <= b; k++)
		if (s->mark[s->save[k - a]] != st)
			s->seq[p++] = s->save[k - a];
	if (j > i)
		memcpy(s->seq + p, s->blk, sizeof(int32_t) * (size_t)nb);
	repos(s, a, b);
}

void remat_i_seq_undo(struct remat_i_seq *s, int32_t a, int32_t b)
{
	memcpy(s->seq + a, s->save, sizeof(int32_t) * (size_t)(b - a + 1));
	repos(s, a, b);
}
