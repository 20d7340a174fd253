/*
 * exact_small.c - the cheapest schedule of a tiny graph (exact_small.h).
 *
 * Dijkstra's search over states (resident bits of the needed nodes, in
 * topological order, then one bit per needed "recompute": false node
 * computed), guided by A*'s estimate of the cost still to pay
 * (still_needed()), with an indexed binary heap, so that memory is
 * bounded by the number of states (2^20 at most: 8 bytes of cost, 8 of
 * key, 4 of predecessor, 4 of heap entry, 4 of heap position and 1 of
 * move each, 29 MiB).  On a 20-node training chain it took 11,000 to
 * 36,000 of the 2^20 states, from 70% of the no-remat peak to 100%.
 */
#include <math.h>
#include <stdlib.h>

#include "remat/planner.h"
#include "remat/sim.h"
#include "analysis/needed.h"
#include "plan/exact_small.h"

struct ex_space {
	int32_t m;             /* needed nodes: bits 0..m-1 */
	int32_t n_once;        /* "recompute": false needed non-inputs: bits m.. */
	int32_t *node;         /* bit -> graph node */
	int32_t *bit;          /* graph node -> bit, -1: not needed */
	int32_t *once;         /* bit -> its once bit, -1: may be recomputed */
	uint32_t *in_mask;     /* bit -> its inputs' bits */
};

static void space_release(struct ex_space *sp)
{
	free(sp->node);
	free(sp->bit);
	free(sp->once);
	free(sp->in_mask);
}

/* Returns 0, -1 out of memory, 1 too large. */
static int space_build(const struct remat_graph *g, int32_t bits, struct ex_space *sp)
{
	uint8_t *need = malloc((size_t)g->n + 1);
	int32_t v, k;

	sp->m = sp->n_once = 0;
	sp->node = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	sp->bit = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	sp->once = NULL;
	sp->in_mask = NULL;
	if (!need || !sp->node || !sp->bit) {
		free(need);
		return -1;
	}
	remat_i_needed(g, need);
	for (v = 0; v < g->n; v++)
		sp->bit[v] = -1;
	/* Bits in topological order: an input's bit is below its reader's. */
	for (k = 0; k < g->n; k++) {
		v = g->topo[k];
		if (!need[v])
			continue;
		if (g->kind[v] != REMAT_KIND_INPUT && !g->recompute[v])
			sp->n_once++;
		if (sp->m + 1 + sp->n_once > bits) {
			free(need);
			return 1;
		}
		sp->bit[v] = sp->m;
		sp->node[sp->m++] = v;
	}
	free(need);
	sp->once = malloc(sizeof(int32_t) * ((size_t)sp->m + 1));
	sp->in_mask = malloc(sizeof(uint32_t) * ((size_t)sp->m + 1));
	if (!sp->once || !sp->in_mask)
		return -1;
	sp->n_once = 0;
	for (k = 0; k < sp->m; k++) {
		int32_t e;

		v = sp->node[k];
		sp->once[k] = g->kind[v] != REMAT_KIND_INPUT && !g->recompute[v] ?
			sp->m + sp->n_once++ : -1;
		sp->in_mask[k] = 0;
		for (e = g->in_off[v]; e < g->in_off[v + 1]; e++)
			sp->in_mask[k] |= 1u << sp->bit[g->in_idx[e]];
	}
	return 0;
}

int remat_i_exact_fits(const struct remat_graph *g, int32_t bits)
{
	struct ex_space sp;
	int r = space_build(g, bits, &sp);

	space_release(&sp);
	return r == 0 ? 1 : r > 0 ? 0 : -1;
}

/*
 * What a schedule from resident set res must still compute, at least
 * once each: every output not resident, and (down the bits, which are in
 * topological order) every input not resident of a node it must
 * compute.  Its cost is A*'s estimate: never above the cost still to
 * pay, and consistent (a free only adds to it; computing v takes v off
 * and adds nothing, v's inputs being resident), so that the first time
 * a state leaves the heap its cost is the least.
 */
static double still_needed(const struct remat_graph *g, const struct ex_space *sp,
			   uint32_t res, uint32_t goal)
{
	uint32_t must = goal & ~res;
	double h = 0;
	int32_t k;

	for (k = sp->m - 1; k >= 0 && must; k--)
		if (must >> k & 1) {
			must |= sp->in_mask[k] & ~res;
			must &= ~(1u << k);
			h += g->cost[sp->node[k]];
		}
	return h;
}

/*
 * The indexed heap: hp[0..*hn) states by key, at[state] its index or -1.
 * Of equal keys the one that paid more first: it is further along.
 */
static int before(const double *key, const double *dist, uint32_t a, uint32_t b)
{
	return key[a] < key[b] || (key[a] == key[b] && dist[a] > dist[b]);
}

static void heap_up(uint32_t *hp, int32_t *at, const double *key, const double *dist,
		    int32_t i)
{
	uint32_t s = hp[i];

	while (i > 0 && before(key, dist, s, hp[(i - 1) / 2])) {
		hp[i] = hp[(i - 1) / 2];
		at[hp[i]] = i;
		i = (i - 1) / 2;
	}
	hp[i] = s;
	at[s] = i;
}

static uint32_t heap_pop(uint32_t *hp, int32_t *at, const double *key, const double *dist,
			 int32_t *hn)
{
	uint32_t top = hp[0], s = hp[--*hn];
	int32_t i = 0, n = *hn;

	at[top] = -1;
	if (n == 0)
		return top;
	for (;;) {
		int32_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && before(key, dist, hp[c + 1], hp[c]))
			c++;
		if (!before(key, dist, hp[c], s))
			break;
		hp[i] = hp[c];
		at[hp[i]] = i;
		i = c;
	}
	hp[i] = s;
	at[s] = i;
	return top;
}

int remat_i_exact_small(const struct remat_graph *g, int64_t budget, double deadline,
			struct remat_schedule *out, double *cost, struct remat_error *err)
{
	struct ex_space sp;
	double *dist = NULL, *key = NULL;
	uint32_t *prev = NULL, *hp = NULL, start = 0, goal = 0, st, nstates, found = 0;
	int32_t *at = NULL, hn = 0, k, v;
	int8_t *move = NULL;
	int64_t pops = 0;
	int rc = REMAT_OK, have = 0, r;

	r = space_build(g, REMAT_EXACT_MAX_BITS, &sp);
	if (r != 0) {
		space_release(&sp);
		return r < 0 ? REMAT_FAIL(err, REMAT_ENOMEM, "out of memory") :
			REMAT_FAIL(err, REMAT_EUSAGE, "the graph is too large for exhaustive search");
	}
	/*
	 * Two answers without a search: the needed nodes once each in
	 * topological order (frees at last use) fit, and nothing costs less;
	 * the outputs alone exceed the budget (they are all resident when the
	 * last compute runs, or at the end when nothing is computed), and
	 * nothing fits.
	 */
	{
		struct remat_sim_result sr;
		int64_t outs = 0;

		for (k = 0; k < sp.m; k++)
			if (g->is_output[sp.node[k]])
				outs += g->mem[sp.node[k]];
		if (outs > budget) {
			remat_schedule_clear(out);
			*cost = -1;
			goto done;
		}
		rc = remat_i_needed_order(g, out, err);
		if (rc == REMAT_OK)
			rc = remat_simulate(g, out, budget, NULL, &sr, err);
		if (rc)
			goto done;
		if (sr.valid && sr.feasible) {
			*cost = sr.cost;
			goto done;
		}
	}
	nstates = 1u << (sp.m + sp.n_once);
	dist = malloc(sizeof(double) * nstates);
	key = malloc(sizeof(double) * nstates);
	prev = malloc(sizeof(uint32_t) * nstates);
	hp = malloc(sizeof(uint32_t) * nstates);
	at = malloc(sizeof(int32_t) * nstates);
	move = malloc(nstates);
	if (!dist || !key || !prev || !hp || !at || !move) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	for (k = 0; k < sp.m; k++) {
		v = sp.node[k];
		if (g->kind[v] == REMAT_KIND_INPUT)
			start |= 1u << k;
		if (g->is_output[v])
			goal |= 1u << k;
	}
	for (st = 0; st < nstates; st++) {
		dist[st] = INFINITY;
		at[st] = -1;
	}
	dist[start] = 0;
	key[start] = still_needed(g, &sp, start, goal);
	hp[hn++] = start;
	at[start] = 0;
	while (hn > 0) {
		uint32_t res;
		int64_t cur = 0;
		double d;

		if ((++pops & 4095) == 0 && deadline > 0 && remat_now() > deadline) {
			rc = REMAT_FAIL(err, REMAT_ECANCELED, "exhaustive search: out of time");
			goto done;
		}
		st = heap_pop(hp, at, key, dist, &hn);
		d = dist[st];
		res = st & ((1u << sp.m) - 1);
		if ((res & goal) == goal) {
			found = st;
			have = 1;
			break;
		}
		for (k = 0; k < sp.m; k++)
			if (res >> k & 1)
				cur += g->mem[sp.node[k]];
		for (k = 0; k < sp.m; k++) {
			uint32_t next;
			double nd = d;

			v = sp.node[k];
			if (res >> k & 1) {
				next = st & ~(1u << k);
			} else {
				if (g->kind[v] == REMAT_KIND_INPUT)
					continue;
				if (sp.once[k] >= 0 && (st >> sp.once[k] & 1))
					continue;
				if ((res & sp.in_mask[k]) != sp.in_mask[k])
					continue;
				if (cur + g->mem[v] + g->workspace[v] > budget)
					continue;
				next = st | 1u << k;
				if (sp.once[k] >= 0)
					next |= 1u << sp.once[k];
				nd += g->cost[v];
			}
			if (nd < dist[next]) {
				dist[next] = nd;
				key[next] = nd + still_needed(g, &sp, next & ((1u << sp.m) - 1), goal);
				prev[next] = st;
				move[next] = (int8_t)((res >> k & 1) ? -1 - k : k);
				if (at[next] < 0)
					hp[hn++] = next, at[next] = hn - 1;
				heap_up(hp, at, key, dist, at[next]);
			}
		}
	}
	remat_schedule_clear(out);
	if (!have) {
		*cost = -1;
		goto done;
	}
	/* Unneeded inputs go first; then the path, walked back into hp. */
	for (v = 0; v < g->n && rc == REMAT_OK; v++)
		if (g->kind[v] == REMAT_KIND_INPUT && sp.bit[v] < 0)
			rc = remat_schedule_push(out, REMAT_OP_FREE, v, err);
	hn = 0;
	for (st = found; st != start; st = prev[st])
		hp[hn++] = st;
	while (hn > 0 && rc == REMAT_OK) {
		int8_t mv = move[hp[--hn]];

		rc = remat_schedule_push(out, mv >= 0 ? REMAT_OP_COMPUTE : REMAT_OP_FREE,
					 sp.node[mv >= 0 ? mv : -1 - mv], err);
	}
	/* What is left besides the outputs is freed at the end. */
	for (k = 0; k < sp.m && rc == REMAT_OK; k++)
		if ((found >> k & 1) && !g->is_output[sp.node[k]])
			rc = remat_schedule_push(out, REMAT_OP_FREE, sp.node[k], err);
	if (rc == REMAT_OK)
		*cost = dist[found];
done:
	free(dist);
	free(key);
	free(prev);
	free(hp);
	free(at);
	free(move);
	space_release(&sp);
	return rc;
}
