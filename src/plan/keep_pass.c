/*
 * keep_pass.c - drop the recomputations a compute order can avoid by
 * keeping values while memory allows; see keep_pass.h.
 *
 * One round, over the order's compute steps (positions 0..m-1):
 *
 * 1. Liveness of each instance: the compute at position i of v makes an
 *    instance of v that is read by the computes of v's consumers up to the
 *    next compute of v; end[i] is its last read (-1: never read).  An
 *    instance never read of a node that is not an output is dropped at
 *    once (nothing reads it).  Input nodes are resident from the start,
 *    their instance ending at their last read.
 * 2. Walk the positions with the memory the order holds, but free lazily:
 *    when an instance ends (after the compute at end[i]) its value is not
 *    freed but becomes a candidate, keyed by priority 0 when nothing reads
 *    the node again, else its cost per byte (cheap, large values go
 *    first), or with REMAT_I_KEEP_PER_BYTE_DISTANCE its cost per byte
 *    and per position until the node's next compute, the one keeping it
 *    would drop (cheap, large values needed late go first); values that
 *    may not be recomputed (inputs, "recompute": false) and still have
 *    readers never become candidates; outputs never end.
 * 3. At the compute at position i of v: if v is resident (an earlier
 *    instance kept as a candidate), the compute is dropped and the value
 *    leaves the candidates (it lives on to the end of instance i).
 *    Otherwise, while v's output and workspace do not fit within the
 *    limit, the least candidate is freed; then v is computed.
 * 4. The computes not dropped form the next order.  Rounds repeat while
 *    a round drops something, up to the given number (the Haskell tool
 *    runs six).
 *
 * Why the result is valid: a dropped compute's value is resident, and
 * every read of an instance happens before it ends, so before it can
 * become a candidate and be freed.  Why it is never more costly: it only
 * drops computes.  Why its peak stays within the limit when the order's
 * did: the walk's memory counts every candidate as resident, and when no
 * candidate is left what it holds is what the order holds at that
 * compute; the liveness pass then frees each value no later than the walk
 * did.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/heap.h"
#include "plan/keep_pass.h"

struct kp_ent {
	double prio;
	int32_t u;
	uint32_t ver;
};

#define KP_LESS(ctx, a, b) \
	((a).prio < (b).prio || ((a).prio == (b).prio && (a).u < (b).u))

REMAT_HEAP_DEFINE(kp_heap, struct kp_ent, void, KP_LESS, REMAT_HEAP_UNTRACKED)

struct kp {
	const struct remat_graph *g;
	int32_t *seq, m;       /* the order's computes */
	int32_t *end;          /* [m] last read of each instance, -1 none */
	int32_t *in_end;       /* [n] last read of an input node's instance */
	int32_t *cur_inst;     /* [n] latest instance while scanning */
	int32_t *last_read;    /* [n] last position reading the node, -1 */
	int32_t *nxt;          /* [m] next compute of the same node, m none */
	int32_t *inst;         /* [n] the instance resident while walking */
	enum remat_i_keep_rule rule;
	int32_t *rel_off;      /* [m + 2] CSR: nodes whose instance ends at p */
	int32_t *rel_idx;      /* (slot 0 is "before the first compute") */
	uint8_t *live, *cand, *drop;
	uint32_t *ver;
	struct kp_ent *heap;
	int64_t hn, hcap;
};

static int is_remat(const struct remat_graph *g, int32_t v)
{
	return g->kind[v] != REMAT_KIND_INPUT && g->recompute[v];
}

static int heap_push(struct kp *k, double prio, int32_t u)
{
	struct kp_ent e = { prio, u, k->ver[u] };

	if (k->hn == k->hcap) {
		int64_t cap = k->hcap ? 2 * k->hcap : 1024;
		void *p = realloc(k->heap, sizeof(*k->heap) * (size_t)cap);

		if (!p)
			return -1;
		k->heap = p;
		k->hcap = cap;
	}
	kp_heap_push(k->heap, &k->hn, e, NULL);
	k->cand[u] = 1;
	return 0;
}

/* The least live candidate, or -1. */
static int32_t heap_pop(struct kp *k)
{
	while (k->hn > 0) {
		struct kp_ent e = kp_heap_pop(k->heap, &k->hn, NULL);

		if (e.ver == k->ver[e.u] && k->cand[e.u])
			return e.u;
	}
	return -1;
}

/* Steps 1-3 over k->seq; returns the computes dropped, -1 on ENOMEM. */
static int64_t kp_round(struct kp *k, int64_t limit)
{
	const struct remat_graph *g = k->g;
	int32_t n = g->n, i, j, m = k->m;
	int64_t cur = 0, dropped = 0;

	/* Step 1. */
	for (i = 0; i < n; i++) {
		k->cur_inst[i] = -1;
		k->in_end[i] = -1;
		k->last_read[i] = -1;
		k->live[i] = 0;
		k->cand[i] = 0;
		k->ver[i]++;
	}
	k->hn = 0;
	for (i = 0; i < m; i++) {
		int32_t v = k->seq[i];

		k->end[i] = -1;
		k->drop[i] = 0;
		k->nxt[i] = m;
		if (k->cur_inst[v] >= 0)
			k->nxt[k->cur_inst[v]] = i;
		for (j = g->in_off[v]; j < g->in_off[v + 1]; j++) {
			int32_t u = g->in_idx[j];

			if (k->cur_inst[u] >= 0)
				k->end[k->cur_inst[u]] = i;
			else
				k->in_end[u] = i;
			k->last_read[u] = i;
		}
		k->cur_inst[v] = i;
	}
	/* Release lists: slot p + 1 for an instance ending at p, 0 for none. */
	memset(k->rel_off, 0, sizeof(int32_t) * ((size_t)m + 2));
	for (i = 0; i < m; i++) {
		int32_t v = k->seq[i];

		if (g->is_output[v])
			continue;
		if (k->end[i] < 0)
			k->drop[i] = 1; /* never read: not needed */
		else
			k->rel_off[k->end[i] + 1]++;
	}
	for (i = 0; i < n; i++)
		if (g->kind[i] == REMAT_KIND_INPUT && !g->is_output[i])
			k->rel_off[k->in_end[i] + 1]++;
	for (i = 1; i < m + 2; i++)
		k->rel_off[i] += k->rel_off[i - 1];
	/* Fill from the back so that each slot keeps its positions in order. */
	for (i = n - 1; i >= 0; i--)
		if (g->kind[i] == REMAT_KIND_INPUT && !g->is_output[i])
			k->rel_idx[--k->rel_off[k->in_end[i] + 1]] = i;
	for (i = m - 1; i >= 0; i--)
		if (!g->is_output[k->seq[i]] && k->end[i] >= 0)
			k->rel_idx[--k->rel_off[k->end[i] + 1]] = k->seq[i];
	/* rel_off[p] .. rel_off[p + 1]: the nodes of slot p. */

	/* Step 2-3. */
	for (i = 0; i < n; i++)
		if (g->kind[i] == REMAT_KIND_INPUT) {
			k->live[i] = 1;
			cur += g->mem[i];
		}
	for (i = -1; i < m; i++) {
		if (i >= 0) {
			int32_t v = k->seq[i];

			if (k->drop[i]) {
				dropped++; /* never read; what ends here still ends */
			} else if (k->live[v]) {
				k->inst[v] = i;
				k->cand[v] = 0;
				k->ver[v]++;
				k->drop[i] = 1;
				dropped++;
			} else {
				int64_t need = g->mem[v] + g->workspace[v];

				while (cur + need > limit) {
					int32_t u = heap_pop(k);

					if (u < 0)
						break;
					k->cand[u] = 0;
					k->live[u] = 0;
					cur -= g->mem[u];
				}
				k->live[v] = 1;
				k->inst[v] = i;
				cur += g->mem[v];
			}
		}
		for (j = k->rel_off[i + 1]; j < k->rel_off[i + 2]; j++) {
			int32_t u = k->rel_idx[j];
			int later = k->last_read[u] > i;
			double prio;

			if (!k->live[u] || k->cand[u])
				continue;
			if (later && !is_remat(g, u))
				continue; /* still read, cannot come back: stays */
			if (!later)
				prio = 0;
			else if (g->mem[u] > 0 && k->rule == REMAT_I_KEEP_PER_BYTE_DISTANCE)
				prio = g->cost[u] / ((double)g->mem[u] * (double)(k->nxt[k->inst[u]] - i));
			else if (g->mem[u] > 0)
				prio = g->cost[u] / (double)g->mem[u];
			else
				prio = INFINITY;
			if (heap_push(k, prio, u))
				return -1;
		}
	}
	/* Step 4. */
	for (i = 0, j = 0; i < m; i++)
		if (!k->drop[i])
			k->seq[j++] = k->seq[i];
	k->m = j;
	return dropped;
}

int remat_i_keep_pass(const struct remat_graph *g, const struct remat_schedule *order,
		      int64_t limit, int rounds, enum remat_i_keep_rule rule,
		      struct remat_schedule *out, int64_t *dropped, struct remat_error *err)
{
	struct kp k;
	size_t n1 = (size_t)g->n + 1, m1;
	int64_t i, total = 0, d;
	int r, rc = REMAT_OK;

	memset(&k, 0, sizeof(k));
	k.g = g;
	for (i = 0; i < order->n; i++)
		if (order->steps[i].op == REMAT_OP_COMPUTE)
			k.m++;
	m1 = (size_t)k.m + 2;
	k.seq = malloc(sizeof(int32_t) * m1);
	k.end = malloc(sizeof(int32_t) * m1);
	k.rel_off = malloc(sizeof(int32_t) * m1);
	k.rel_idx = malloc(sizeof(int32_t) * (m1 + n1));
	k.drop = malloc(m1);
	k.in_end = malloc(sizeof(int32_t) * n1);
	k.cur_inst = malloc(sizeof(int32_t) * n1);
	k.last_read = malloc(sizeof(int32_t) * n1);
	k.nxt = malloc(sizeof(int32_t) * m1);
	k.inst = calloc(n1, sizeof(int32_t));
	k.rule = rule;
	k.live = malloc(n1);
	k.cand = malloc(n1);
	k.ver = calloc(n1, sizeof(uint32_t));
	if (!k.seq || !k.end || !k.rel_off || !k.rel_idx || !k.drop || !k.in_end ||
	    !k.cur_inst || !k.last_read || !k.nxt || !k.inst || !k.live || !k.cand || !k.ver) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	k.m = 0;
	for (i = 0; i < order->n; i++)
		if (order->steps[i].op == REMAT_OP_COMPUTE)
			k.seq[k.m++] = order->steps[i].node;
	for (r = 0; r < rounds; r++) {
		d = kp_round(&k, limit);
		if (d < 0) {
			rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
			goto done;
		}
		total += d;
		if (d == 0)
			break;
	}
	remat_schedule_clear(out);
	rc = remat_schedule_reserve(out, k.m, err);
	for (i = 0; rc == REMAT_OK && i < k.m; i++)
		rc = remat_schedule_push(out, REMAT_OP_COMPUTE, k.seq[i], err);
	if (dropped)
		*dropped = total;
done:
	free(k.seq);
	free(k.end);
	free(k.rel_off);
	free(k.rel_idx);
	free(k.drop);
	free(k.in_end);
	free(k.cur_inst);
	free(k.last_read);
	free(k.nxt);
	free(k.inst);
	free(k.live);
	free(k.cand);
	free(k.ver);
	free(k.heap);
	return rc;
}
