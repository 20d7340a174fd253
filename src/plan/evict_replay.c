/*
 * evict_replay.c - replay a compute order under a memory limit, evicting and
 * recomputing as Belady would; see evict_replay.h.
 *
 * A post-pass in the spirit of the greedy freeing nshepperd's TWRemat
 * runs after its recursion (written here from that idea only):
 *
 * 1. Read the order's compute steps as demands and index, for every node,
 *    the positions where the order computes or reads it.
 * 2. Walk the demands.  A demand for a resident value is skipped: it was
 *    kept.  Otherwise the demanded value and its missing ancestors (up to
 *    resident values) are computed in topological order, each held while
 *    something of this demand still reads it, so the frontier of the
 *    recomputation (not a recursion stack) is what stays resident.
 * 3. Values stay resident after use while memory allows.  Before each
 *    compute, evict until its output and workspace fit, by class:
 *    0. values nothing will read again;
 *    1. values the order computes again before it reads them (evicting
 *       them costs nothing the order did not already pay);
 *    2. values to be read again, which are then recomputed when needed
 *       (with their missing ancestors: at most CLOSURE_CAP values).
 *    Within a class the victim has the least (cost of bringing it back) /
 *    (bytes * demands until its next use), Belady's rule weighted by size
 *    and cost.  Input nodes, outputs and "recompute": false nodes are
 *    only evicted once nothing can need them again.  A value evicted in
 *    class 2 is *owed*, and so are the values missing between it and
 *    what is resident, which come back with it, each noting when it is
 *    needed; a value an owed one reads is still needed then (without the
 *    second part, an input read only by such a missing value was freed
 *    as read no more, and the recomputation found it gone).
 * 4. Candidates sit in a heap keyed by (class, score).  A node's entry is
 *    renewed by the events that change its class or next use (a demand
 *    reading or computing it, a consumer evicted or recomputed); between
 *    them its distance shrinks unseen, so the score is the one it had
 *    when last renewed (an approximation that keeps each eviction at
 *    O(log n)).  Class 2 scores first omit the missing ancestors; their
 *    cost is added for the entries popped before the next entry's score
 *    exceeds the best priced one, and a pricing walk stops as soon as
 *    its sum passes that one's (the entry is filed again at the partial
 *    sum, a lower bound): on random layered DAGs, whose nodes read
 *    dozens of values, the full walks were most of a replay's time.
 *
 * Class 1 always goes before class 2, so replaying an order whose peak
 * fits within the limit recomputes nothing the order did not: it fits at
 * no more cost.  Below that peak it trades recomputation for memory.  It
 * gives up (REMAT_ENOFIT) when nothing can be evicted.  Time O((steps +
 * recomputations) * in-degree * log n) plus the class-2 pricing.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/heap.h"
#include "plan/evict_replay.h"

#define NO_USE INT32_MAX
/* Largest recomputation an eviction may commit to (values). */
#define CLOSURE_CAP 256

struct tg_ent {
	double score;     /* lower bound within the class */
	double denom;     /* bytes * demands until the next use */
	int32_t cls;      /* 0, 1, 2 */
	int32_t u;
	uint32_t ver;
};

struct tg {
	const struct remat_graph *g;
	const struct remat_plan_request *req;
	int32_t *seq;       /* the demands */
	int32_t len;
	int32_t *occ_off;   /* [n + 1] positions where a node is computed or read */
	int32_t *occ_pos;
	int32_t *ptr;       /* [n] cursor into each node's positions */
	uint8_t *res;
	int32_t *lock;      /* reads of the demand being computed: not evictable */
	struct tg_ent *park; /* [n] a locked node's popped entry, back when unlocked */
	uint8_t *parked;
	int64_t cur, limit;
	int soft;           /* go over the limit where nothing can be evicted */
	int64_t over;       /* bytes over it, summed over those computes */
	int32_t pos;        /* current demand */
	struct remat_schedule *out;
	int64_t computes, max_steps;
	int32_t *mset;      /* values one demand computes */
	int32_t *mark, stamp;
	int32_t cq[CLOSURE_CAP + 1];
	uint8_t *owed;      /* evicted while a later demand reads it */
	int32_t *pend;      /* owed consumers of each node */
	uint32_t *ver;      /* current key version of each node */
	uint8_t *deferred;  /* out of the heap until an input is recomputed */
	int32_t *needat;    /* [n] when an owed value is needed (NO_USE: by its own reads) */
	struct tg_ent *heap;
	int64_t hn, hcap;
	struct tg_ent *aside;
	int64_t an, acap;
	struct remat_error *err;
};

static int recomputable(const struct remat_graph *g, int32_t u)
{
	return g->kind[u] != REMAT_KIND_INPUT && g->recompute[u];
}

/* Position of u's next demand after the current one, or NO_USE. */
static int32_t next_use(struct tg *t, int32_t u)
{
	int32_t p = t->ptr[u], end = t->occ_off[u + 1];

	while (p < end && t->occ_pos[p] <= t->pos)
		p++;
	t->ptr[u] = p;
	return p < end ? t->occ_pos[p] : NO_USE;
}

/* When the owed (evicted, still to be read) consumers of u are needed. */
static int32_t pending_use(struct tg *t, int32_t u)
{
	const struct remat_graph *g = t->g;
	int32_t k, best = NO_USE;

	if (t->pend[u] == 0)
		return NO_USE;
	for (k = g->use_off[u]; k < g->use_off[u + 1]; k++) {
		int32_t c = g->use_idx[k];

		if (t->owed[c]) {
			int32_t nu = next_use(t, c);

			if (t->needat[c] > t->pos && t->needat[c] < nu)
				nu = t->needat[c];

			if (nu < best)
				best = nu;
		}
	}
	return best;
}

/* ---- the candidate heap ---- */

static int ent_less(const struct tg_ent *a, const struct tg_ent *b)
{
	if (a->cls != b->cls)
		return a->cls < b->cls;
	if (a->score != b->score)
		return a->score < b->score;
	return a->u < b->u;
}

/* Entries are compared in place, not copied (the heap's elements are lvalues). */
#define ENT_BEFORE(ctx, a, b) ent_less(&(a), &(b))

REMAT_HEAP_DEFINE(cand, struct tg_ent, const void, ENT_BEFORE, REMAT_HEAP_UNTRACKED)

/* Entries are deleted lazily (by version), so the array grows as needed. */
static int heap_push(struct tg *t, struct tg_ent e)
{
	if (t->hn == t->hcap) {
		int64_t cap = t->hcap ? t->hcap * 2 : 1024;
		struct tg_ent *h = realloc(t->heap, sizeof(*h) * (size_t)cap);

		if (!h)
			return REMAT_FAIL(t->err, REMAT_ENOMEM, "out of memory in the replay");
		t->heap = h;
		t->hcap = cap;
	}
	cand_push(t->heap, &t->hn, e, NULL);
	return REMAT_OK;
}

static int aside_push(struct tg *t, struct tg_ent e)
{
	if (t->an == t->acap) {
		int64_t cap = t->acap ? t->acap * 2 : 256;
		struct tg_ent *a = realloc(t->aside, sizeof(*a) * (size_t)cap);

		if (!a)
			return REMAT_FAIL(t->err, REMAT_ENOMEM, "out of memory in the replay");
		t->aside = a;
		t->acap = cap;
	}
	t->aside[t->an++] = e;
	return REMAT_OK;
}

/*
 * u's key now: 1 with *e filled when u may be evicted, 0 when it may not
 * (not resident, no bytes, or still needed and not recomputable).
 */
static int key_of(struct tg *t, int32_t u, struct tg_ent *e)
{
	const struct remat_graph *g = t->g;
	int32_t nu, pu;

	if (!t->res[u] || g->mem[u] == 0)
		return 0;
	nu = next_use(t, u);
	pu = pending_use(t, u);
	e->u = u;
	e->ver = t->ver[u];
	if (nu == NO_USE && pu == NO_USE && !g->is_output[u]) {
		e->cls = 0;
		e->denom = (double)g->mem[u];
		e->score = g->cost[u] / e->denom;
		return 1;
	}
	if (!recomputable(g, u) || g->is_output[u])
		return 0;
	if (pu < nu || t->seq[nu] != u) {
		e->cls = 2;
		if (pu < nu)
			nu = pu;
	} else {
		e->cls = 1;
	}
	e->denom = (double)g->mem[u] * (double)(nu - t->pos);
	e->score = g->cost[u] / e->denom;
	return 1;
}

/* Something about u changed: give it a fresh heap entry. */
static int rekey(struct tg *t, int32_t u)
{
	struct tg_ent e;

	t->ver[u]++;
	t->deferred[u] = 0;
	if (!key_of(t, u, &e))
		return REMAT_OK;
	return heap_push(t, e);
}

/* Mark u evicted while a later demand reads it (or clear that mark). */
static int set_owed(struct tg *t, int32_t u, int owed)
{
	const struct remat_graph *g = t->g;
	int32_t k;

	if (t->owed[u] == owed)
		return REMAT_OK;
	t->owed[u] = (uint8_t)owed;
	if (!owed)
		t->needat[u] = NO_USE;
	for (k = g->in_off[u]; k < g->in_off[u + 1]; k++) {
		t->pend[g->in_idx[k]] += owed ? 1 : -1;
		REMAT_TRY(rekey(t, g->in_idx[k]));
	}
	return REMAT_OK;
}

/* A stamp no node's mark holds yet (t->mark, t->stamp): a fresh walk. */
static void new_stamp(struct tg *t)
{
	if (t->stamp == INT32_MAX) {
		memset(t->mark, 0, sizeof(int32_t) * (size_t)t->g->n);
		t->stamp = 0;
	}
	t->stamp++;
}

/* Start a walk from u on the queue q (a fresh stamp, u marked): its length, 1. */
static int32_t walk_from(struct tg *t, int32_t *q, int32_t u)
{
	new_stamp(t);
	q[0] = u;
	t->mark[u] = t->stamp;
	return 1;
}

/*
 * What bringing u back would cost now: u and its missing ancestors, up
 * to resident values.  -1 when that takes more than CLOSURE_CAP values
 * or a value that cannot be recomputed.  The walk stops once the sum is
 * over cap, returning that partial sum (a candidate that cannot win
 * needs no exact price: on dense graphs the walks were most of a replay).
 */
static double closure_cost(struct tg *t, int32_t u, double cap)
{
	const struct remat_graph *g = t->g;
	int32_t n, i, k;
	double sum = g->cost[u];

	n = walk_from(t, t->cq, u);
	for (i = 0; i < n; i++) {
		int32_t x = t->cq[i];

		for (k = g->in_off[x]; k < g->in_off[x + 1]; k++) {
			int32_t w = g->in_idx[k];

			if (t->res[w] || t->mark[w] == t->stamp)
				continue;
			if (!recomputable(g, w) || n == CLOSURE_CAP)
				return -1;
			t->mark[w] = t->stamp;
			t->cq[n++] = w;
			sum += g->cost[w];
		}
		if (sum > cap)
			return sum;
	}
	return sum;
}

static void tg_drop(struct tg *t, int32_t u)
{
	t->res[u] = 0;
	t->cur -= t->g->mem[u];
	t->ver[u]++;
}

/*
 * u was just evicted, to be brought back at when: the values missing
 * between it and what is resident come back with it, so they are owed
 * too, needed at when (and what they read is then held or owed in its
 * turn: pending_use sees them).  Without this, a value only such a
 * missing value reads looks read no more and goes first.  The walk is
 * u's closure, which make_room priced within CLOSURE_CAP values.
 */
static int owe_missing(struct tg *t, int32_t u, int32_t when)
{
	const struct remat_graph *g = t->g;
	int32_t n, i, k;

	if (when == NO_USE)
		return REMAT_OK;
	n = walk_from(t, t->cq, u);
	for (i = 0; i < n; i++) {
		int32_t x = t->cq[i];

		for (k = g->in_off[x]; k < g->in_off[x + 1]; k++) {
			int32_t w = g->in_idx[k], j;

			if (t->res[w] || t->mark[w] == t->stamp || !recomputable(g, w))
				continue;
			t->mark[w] = t->stamp;
			if (t->owed[w] && t->needat[w] > t->pos && t->needat[w] <= when)
				continue; /* owed, and needed no later already */
			t->needat[w] = when;
			if (!t->owed[w]) {
				REMAT_TRY(set_owed(t, w, 1));
			} else {
				for (j = g->in_off[w]; j < g->in_off[w + 1]; j++)
					REMAT_TRY(rekey(t, g->in_idx[j]));
			}
			if (n < CLOSURE_CAP)
				t->cq[n++] = w;
		}
	}
	return REMAT_OK;
}

/* Step 3: evict until need more bytes fit.  REMAT_ENOFIT if impossible. */
static int make_room(struct tg *t, int64_t need)
{
	int rc = REMAT_OK;

	while (t->cur + need > t->limit) {
		struct tg_ent best = { 0, 0, 0, -1, 0 }, e;
		int have = 0;

		t->an = 0;
		while (t->hn > 0) {
			double est;

			if (have && !(t->heap[0].cls == 2 && t->heap[0].score < best.score))
				break;
			e = cand_pop(t->heap, &t->hn, NULL);
			if (e.ver != t->ver[e.u])
				continue; /* stale: a newer entry or no longer resident */
			if (t->lock[e.u]) {
				/* Out of the heap until unlocked (see unlock()). */
				t->park[e.u] = e;
				t->parked[e.u] = 1;
				continue;
			}
			if (e.cls < 2) {
				best = e;
				have = 1;
				break;
			}
			est = closure_cost(t, e.u, have ? best.score * e.denom : HUGE_VAL);
			if (est < 0) {
				/* Too deep, or not recomputable: wait for an input. */
				t->deferred[e.u] = 1;
				continue;
			}
			/* File it again at its priced score: it may win later. */
			e.score = est / e.denom;
			if ((rc = aside_push(t, e)))
				break;
			if (!have || ent_less(&e, &best)) {
				best = e;
				have = 1;
			}
		}
		/* Everything set aside stays a candidate. */
		while (rc == REMAT_OK && t->an > 0) {
			e = t->aside[--t->an];
			if (have && e.u == best.u)
				continue;
			rc = heap_push(t, e);
		}
		if (rc)
			return rc;
		if (!have) {
			if (!t->soft)
				return REMAT_ENOFIT;
			t->over += t->cur + need - t->limit;
			return REMAT_OK;
		}
		if (best.cls == 2) {
			int32_t nu = next_use(t, best.u), pu = pending_use(t, best.u);

			/* Needed first by an owed consumer: when that one is. */
			if (pu < nu)
				t->needat[best.u] = pu;
			REMAT_TRY(set_owed(t, best.u, 1));
			tg_drop(t, best.u);
			REMAT_TRY(owe_missing(t, best.u, pu < nu ? pu : nu));
		} else {
			tg_drop(t, best.u);
		}
		REMAT_TRY(remat_schedule_push(t->out, REMAT_OP_FREE, best.u, t->err));
	}
	return REMAT_OK;
}

static int cmp_i32(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;

	return (a > b) - (a < b);
}

/*
 * Release one read lock on u.  An entry popped while u was locked was
 * parked rather than pushed back at once (a demand that recomputes a deep
 * closure locks hundreds of values, often the cheapest ones, which every
 * eviction would otherwise pop and push again); it returns unchanged, so
 * the evictions are the same as if it had stayed in the heap.
 */
static int unlock(struct tg *t, int32_t u)
{
	if (--t->lock[u] > 0 || !t->parked[u])
		return REMAT_OK;
	t->parked[u] = 0;
	if (t->park[u].ver != t->ver[u])
		return REMAT_OK;
	return heap_push(t, t->park[u]);
}

/* Step 2: compute v (not resident) and its missing ancestors. */
static int demand(struct tg *t, int32_t v)
{
	const struct remat_graph *g = t->g;
	int32_t m, i, k;
	int rc;

	m = walk_from(t, t->mset, v);
	for (i = 0; i < m; i++) {
		int32_t x = t->mset[i];

		for (k = g->in_off[x]; k < g->in_off[x + 1]; k++) {
			int32_t w = g->in_idx[k];

			if (t->res[w] || t->mark[w] == t->stamp)
				continue;
			if (!recomputable(g, w))
				return REMAT_ENOFIT;
			t->mark[w] = t->stamp;
			t->mset[m++] = w;
		}
	}
	for (i = 0; i < m; i++) {
		int32_t x = t->mset[i];

		t->mset[i] = g->topo_pos[x];
		for (k = g->in_off[x]; k < g->in_off[x + 1]; k++)
			t->lock[g->in_idx[k]]++;
	}
	qsort(t->mset, (size_t)m, sizeof(int32_t), cmp_i32);
	rc = REMAT_OK;
	for (i = 0; i < m; i++) {
		int32_t x = g->topo[t->mset[i]];

		if (rc == REMAT_OK) {
			t->lock[x]++;
			rc = make_room(t, g->mem[x] + g->workspace[x]);
			if (rc == REMAT_OK)
				rc = unlock(t, x);
			else
				unlock(t, x);
		}
		if (rc == REMAT_OK && t->computes >= t->max_steps)
			rc = REMAT_ENOFIT;
		if (rc == REMAT_OK && (++t->computes & 0xfff) == 0 && t->req &&
		    remat_plan_expired(t->req))
			rc = REMAT_FAIL(t->err, REMAT_ECANCELED, "time limit reached");
		if (rc == REMAT_OK)
			rc = remat_schedule_push(t->out, REMAT_OP_COMPUTE, x, t->err);
		if (rc == REMAT_OK) {
			t->res[x] = 1;
			t->cur += g->mem[x];
			rc = set_owed(t, x, 0);
		}
		if (rc == REMAT_OK)
			rc = rekey(t, x);
		/* Resident consumers are cheaper to bring back now: re-price them. */
		for (k = g->use_off[x]; k < g->use_off[x + 1] && rc == REMAT_OK; k++)
			if (t->res[g->use_idx[k]] || t->deferred[g->use_idx[k]])
				rc = rekey(t, g->use_idx[k]);
		/* Release x's reads (also on failure, to leave locks balanced). */
		for (k = g->in_off[x]; k < g->in_off[x + 1]; k++) {
			int urc = unlock(t, g->in_idx[k]);

			if (rc == REMAT_OK)
				rc = urc;
		}
	}
	return rc;
}

/*
 * A demand touching u is over, so u's next use moved on: re-key it, and
 * if it is owed (evicted), its inputs, whose pending use moved too.
 */
static int passed(struct tg *t, int32_t u)
{
	const struct remat_graph *g = t->g;
	int32_t k;

	if (t->res[u])
		return rekey(t, u);
	if (!t->owed[u])
		return REMAT_OK;
	if (next_use(t, u) == NO_USE && (t->needat[u] == NO_USE || t->needat[u] <= t->pos))
		return set_owed(t, u, 0);
	for (k = g->in_off[u]; k < g->in_off[u + 1]; k++)
		REMAT_TRY(rekey(t, g->in_idx[k]));
	return REMAT_OK;
}

/* Drop stale entries when the heap has grown far beyond the live ones. */
static void heap_compact(struct tg *t)
{
	int64_t i, n = 0;

	for (i = 0; i < t->hn; i++)
		if (t->heap[i].ver == t->ver[t->heap[i].u] && t->res[t->heap[i].u])
			t->heap[n++] = t->heap[i];
	t->hn = n;
	cand_heapify(t->heap, n, NULL);
}

int remat_i_evict_replay(const struct remat_graph *g, const struct remat_schedule *order,
		    int64_t limit, int64_t max_steps,
		    const struct remat_plan_request *req,
		    struct remat_schedule *out, struct remat_error *err)
{
	return remat_i_evict_replay_soft(g, order, limit, max_steps, req, out, NULL, err);
}

int remat_i_evict_replay_soft(const struct remat_graph *g, const struct remat_schedule *order,
			      int64_t limit, int64_t max_steps,
			      const struct remat_plan_request *req,
			      struct remat_schedule *out, int64_t *over, struct remat_error *err)
{
	struct tg t;
	int64_t i, nocc = 0;
	int32_t v, k;
	int rc = REMAT_OK;

	memset(&t, 0, sizeof(t));
	t.g = g;
	t.req = req;
	t.limit = limit;
	t.out = out;
	t.max_steps = max_steps;
	t.err = err;
	t.soft = over != NULL;
	remat_schedule_clear(out);
	for (i = 0; i < order->n; i++)
		if (order->steps[i].op == REMAT_OP_COMPUTE)
			nocc += 1 + g->in_off[order->steps[i].node + 1] -
				g->in_off[order->steps[i].node];
	if (order->n >= INT32_MAX || nocc >= INT32_MAX)
		return REMAT_FAIL(err, REMAT_ENOFIT, "order too long to replay");
	t.seq = malloc(sizeof(int32_t) * ((size_t)order->n + 1));
	t.occ_off = calloc((size_t)g->n + 2, sizeof(int32_t));
	t.occ_pos = malloc(sizeof(int32_t) * ((size_t)nocc + 1));
	t.ptr = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	t.res = calloc((size_t)g->n + 1, 1);
	t.lock = calloc((size_t)g->n + 1, sizeof(int32_t));
	t.park = malloc(sizeof(*t.park) * ((size_t)g->n + 1));
	t.parked = calloc((size_t)g->n + 1, 1);
	t.mset = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	t.mark = calloc((size_t)g->n + 1, sizeof(int32_t));
	t.owed = calloc((size_t)g->n + 1, 1);
	t.pend = calloc((size_t)g->n + 1, sizeof(int32_t));
	t.ver = calloc((size_t)g->n + 1, sizeof(uint32_t));
	t.deferred = calloc((size_t)g->n + 1, 1);
	t.needat = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!t.seq || !t.occ_off || !t.occ_pos || !t.ptr || !t.res || !t.lock ||
	    !t.park || !t.parked ||
	    !t.mset || !t.mark || !t.owed || !t.pend || !t.ver || !t.deferred ||
	    !t.needat) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the replay");
		goto done;
	}
	for (v = 0; v < g->n; v++)
		t.needat[v] = NO_USE;
	/* Step 1. */
	for (i = 0; i < order->n; i++)
		if (order->steps[i].op == REMAT_OP_COMPUTE)
			t.seq[t.len++] = order->steps[i].node;
	for (i = 0; i < t.len; i++) {
		v = t.seq[i];
		t.occ_off[v + 1]++;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			t.occ_off[g->in_idx[k] + 1]++;
	}
	for (v = 0; v < g->n; v++)
		t.occ_off[v + 1] += t.occ_off[v];
	memcpy(t.ptr, t.occ_off, sizeof(int32_t) * (size_t)g->n);
	for (i = 0; i < t.len; i++) {
		v = t.seq[i];
		t.occ_pos[t.ptr[v]++] = (int32_t)i;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			t.occ_pos[t.ptr[g->in_idx[k]]++] = (int32_t)i;
	}
	memcpy(t.ptr, t.occ_off, sizeof(int32_t) * (size_t)g->n);
	/* Inputs start resident. */
	t.pos = -1;
	for (v = 0; v < g->n && rc == REMAT_OK; v++)
		if (g->kind[v] == REMAT_KIND_INPUT) {
			t.res[v] = 1;
			t.cur += g->mem[v];
			rc = rekey(&t, v);
		}
	/* Steps 2 to 4. */
	for (t.pos = 0; t.pos < t.len && rc == REMAT_OK; t.pos++) {
		v = t.seq[t.pos];
		if (!t.res[v])
			rc = demand(&t, v);
		/* Their next uses moved on: re-key them once this demand is over. */
		if (rc == REMAT_OK)
			rc = passed(&t, v);
		for (k = g->in_off[v]; k < g->in_off[v + 1] && rc == REMAT_OK; k++)
			rc = passed(&t, g->in_idx[k]);
		if (t.hn > 4 * (int64_t)g->n + 1024)
			heap_compact(&t);
	}
	if (rc == REMAT_ENOFIT && err && err->code != REMAT_ENOFIT)
		REMAT_FAIL(err, REMAT_ENOFIT, "replay does not fit in %lld bytes",
			   (long long)limit);
done:
	if (rc)
		remat_schedule_clear(out);
	if (over)
		*over = rc ? INT64_MAX : t.over;
	free(t.seq);
	free(t.occ_off);
	free(t.occ_pos);
	free(t.ptr);
	free(t.res);
	free(t.lock);
	free(t.park);
	free(t.parked);
	free(t.mset);
	free(t.mark);
	free(t.owed);
	free(t.pend);
	free(t.ver);
	free(t.deferred);
	free(t.needat);
	free(t.heap);
	free(t.aside);
	return rc;
}
