/*
 * exhaustive.h - the least cost of any schedule, by exhaustive search,
 * for tests of exact planners.  Header-only (static functions), written
 * from FORMATS.md section 2 alone: it shares no code with the simulator
 * or the planners.
 *
 * Dijkstra over states (resident set, which "recompute: false" nodes
 * were computed): "compute v" costs cost(v) and needs v's inputs
 * resident, v not resident, v computable (not an input; computed before
 * only if it may be recomputed) and resident + mem(v) + workspace(v) <=
 * budget; "free v" costs nothing.  The goal is every output resident:
 * computing an output needs its inputs resident, so every node an output
 * depends on was computed by then.  Graphs of up to 16 nodes with at
 * most 4 nodes that may not be recomputed.
 *
 * exhaustive_min_cost_in_order() restricts the search to schedules whose
 * first computations of the nodes some output depends on follow the
 * graph's topological order (g->topo) and that compute nothing else:
 * the set of schedules Checkmate's model draws from (which also fixes
 * the order within a stage; see checkmate.c).  Its state adds how many
 * of those nodes have been computed.
 */
#ifndef REMAT_TEST_EXHAUSTIVE_H
#define REMAT_TEST_EXHAUSTIVE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remat/remat.h"

#define EX_MAX_NODES 16

struct ex_heap {
	uint32_t *st;
	double *key;
	int64_t n, cap;
};

static inline void ex_push(struct ex_heap *h, uint32_t st, double key)
{
	int64_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 1024;
		h->st = realloc(h->st, sizeof(uint32_t) * (size_t)h->cap);
		h->key = realloc(h->key, sizeof(double) * (size_t)h->cap);
	}
	i = h->n++;
	while (i > 0 && h->key[(i - 1) / 2] > key) {
		h->st[i] = h->st[(i - 1) / 2];
		h->key[i] = h->key[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->st[i] = st;
	h->key[i] = key;
}

static inline uint32_t ex_pop(struct ex_heap *h, double *key)
{
	uint32_t top = h->st[0], st = h->st[h->n - 1];
	double k = h->key[h->n - 1];
	int64_t i = 0, n = --h->n;

	*key = h->key[0];
	for (;;) {
		int64_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && h->key[c + 1] < h->key[c])
			c++;
		if (h->key[c] >= k)
			break;
		h->st[i] = h->st[c];
		h->key[i] = h->key[c];
		i = c;
	}
	if (n > 0) {
		h->st[i] = st;
		h->key[i] = k;
	}
	return top;
}

/*
 * The search; with path not NULL, also the steps of one cheapest
 * schedule (explicit frees, as the search took them) into *path.
 */
static inline double ex_search(const struct remat_graph *g, int64_t budget, int in_order,
			       struct remat_schedule *path)
{
	int32_t n = g->n, v, k, once_idx[EX_MAX_NODES], n_once = 0, extra;
	int32_t pos[EX_MAX_NODES], order[EX_MAX_NODES], n_order = 0, i;
	uint32_t start = 0, goal = 0, nstates, st, need = 0;
	double *dist, best = -1, d;
	uint32_t *prev = NULL;
	int16_t *move = NULL;   /* node computed (>= 0) or freed (-1 - node) into a state */
	struct ex_heap h = { NULL, NULL, 0, 0 };

	if (n > EX_MAX_NODES)
		return -2;
	for (v = 0; v < n; v++)
		if (g->is_output[v])
			need |= 1u << v;
	for (i = n - 1; i >= 0; i--) {
		v = g->topo[i];
		if (need >> v & 1)
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
				need |= 1u << g->in_idx[k];
	}
	for (v = 0; v < n; v++)
		pos[v] = -1;
	for (i = 0; i < n; i++) {
		v = g->topo[i];
		if ((need >> v & 1) && g->kind[v] != REMAT_KIND_INPUT) {
			pos[v] = n_order;
			order[n_order++] = v;
		}
	}
	(void)order;
	for (v = 0; v < n; v++) {
		once_idx[v] = -1;
		if (g->kind[v] == REMAT_KIND_INPUT)
			start |= 1u << v;
		else if (!g->recompute[v])
			once_idx[v] = n_once++;
		if (g->is_output[v])
			goal |= 1u << v;
	}
	/* In order: the count of first computations (5 bits) replaces the once bits. */
	extra = in_order ? 5 : n_once;
	if ((!in_order && n_once > 4) || n + extra > 22 || n_order > 31)
		return -2;
	nstates = 1u << (n + extra);
	dist = malloc(sizeof(double) * nstates);
	if (path) {
		prev = malloc(sizeof(uint32_t) * nstates);
		move = malloc(sizeof(int16_t) * nstates);
		remat_schedule_clear(path);
	}
	for (st = 0; st < nstates; st++)
		dist[st] = INFINITY;
	dist[start] = 0;
	ex_push(&h, start, 0);
	while (h.n > 0) {
		uint32_t res, done;
		int64_t cur = 0;

		st = ex_pop(&h, &d);
		if (d > dist[st])
			continue;
		res = st & ((1u << n) - 1);
		done = st >> n;
		if ((res & goal) == goal && (!in_order || (int32_t)done == n_order)) {
			best = d;
			if (path) {
				int32_t len = 0, j;
				int16_t mv[64 * EX_MAX_NODES];

				for (; st != start && len < 64 * EX_MAX_NODES; st = prev[st])
					mv[len++] = move[st];
				for (j = len - 1; j >= 0; j--)
					remat_schedule_push(path, mv[j] >= 0 ? REMAT_OP_COMPUTE
									   : REMAT_OP_FREE,
							    mv[j] >= 0 ? mv[j] : -1 - mv[j], NULL);
			}
			break;
		}
		for (v = 0; v < n; v++)
			if (res >> v & 1)
				cur += g->mem[v];
		for (v = 0; v < n; v++) {
			uint32_t next;
			double nd = d;

			if (res >> v & 1) {
				next = st & ~(1u << v);
			} else {
				if (g->kind[v] == REMAT_KIND_INPUT)
					continue;
				if (in_order) {
					/* Only needed nodes; a first compute only as the next in order. */
					if (pos[v] < 0 || pos[v] > (int32_t)done)
						continue;
					if (!g->recompute[v] && pos[v] < (int32_t)done)
						continue;
				} else if (once_idx[v] >= 0 && (done >> once_idx[v] & 1)) {
					continue;
				}
				if (cur + g->mem[v] + g->workspace[v] > budget)
					continue;
				for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
					if (!(res >> g->in_idx[k] & 1))
						break;
				if (k < g->in_off[v + 1])
					continue;
				next = st | 1u << v;
				if (in_order && pos[v] == (int32_t)done)
					next += 1u << n;
				else if (!in_order && once_idx[v] >= 0)
					next |= 1u << (n + once_idx[v]);
				nd += g->cost[v];
			}
			if (nd < dist[next]) {
				dist[next] = nd;
				if (path) {
					prev[next] = st;
					move[next] = (int16_t)((res >> v & 1) ? -1 - v : v);
				}
				ex_push(&h, next, nd);
			}
		}
	}
	free(dist);
	free(prev);
	free(move);
	free(h.st);
	free(h.key);
	return best;
}

/* Least cost within budget, or -1 when no schedule fits (-2: too large). */
static inline double exhaustive_min_cost(const struct remat_graph *g, int64_t budget)
{
	return ex_search(g, budget, 0, NULL);
}

/* The same over schedules whose first computations follow g->topo. */
static inline double exhaustive_min_cost_in_order(const struct remat_graph *g,
						  int64_t budget)
{
	return ex_search(g, budget, 1, NULL);
}

/*
 * The same, also writing one cheapest schedule in that order into *path
 * (computes and explicit frees; left empty when nothing fits).  A witness
 * found without the planners: what an exact planner must match.
 */
static inline double exhaustive_min_cost_in_order_path(const struct remat_graph *g,
						       int64_t budget,
						       struct remat_schedule *path)
{
	return ex_search(g, budget, 1, path);
}

#endif
