/*
 * tighten.c - replay a compute order under a memory limit; see tighten.h.
 *
 * A post-pass in the spirit of the greedy freeing nshepperd's TWRemat
 * runs after its recursion, written here from the idea only:
 *
 * 1. Read the order's compute steps as demands and index, for every node,
 *    the positions where the order computes or reads it.
 * 2. Walk the demands.  A demand for a resident value is skipped (it was
 *    kept).  Otherwise its missing inputs are rematerialised first,
 *    depth first with an explicit stack, each frame locking the inputs it
 *    has made resident so that no sibling evicts them.
 * 3. Before each compute, evict until the node's output and workspace
 *    fit: values no later demand touches go at once (they are dead);
 *    then values the order itself computes again before reading them
 *    (evicting them costs nothing the order did not already pay); only
 *    then values read again later, which will be recomputed.  Within a
 *    class the victim has the least (recompute cost) / (bytes * distance
 *    to its next use).  Input nodes, outputs and "recompute": false nodes
 *    are never evicted while a demand still needs them.
 * 4. After each demand, free the values no later demand touches.
 *
 * Since the second class always goes before the third, a replay of an
 * order whose peak fits within the limit never recomputes anything the
 * order did not, so it fits at no more cost; below that peak it trades
 * recomputation for memory, Belady-style with the order as the oracle.
 * It gives up (REMAT_ENOFIT) when nothing can be evicted or when a value
 * to recompute needs an input node or a "recompute": false node that was
 * already dropped.  Time O(steps * in-degree) plus a scan of the resident
 * values per eviction.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tighten.h"

#define NO_USE INT32_MAX
/* Largest recomputation an eviction may commit to (values). */
#define CLOSURE_CAP 64

struct tg_cand {
	double lb;     /* cost(u) / dist: a lower bound on its score */
	double dist;   /* bytes * demands until its next use */
	int32_t u;
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
	int32_t *lock;
	int32_t *rlist, *rpos, rn; /* resident list */
	int64_t cur, limit;
	int32_t pos;        /* current demand */
	struct remat_schedule *out;
	int64_t computes, max_steps;
	int32_t *mset;         /* values one demand recomputes */
	int32_t *mark, stamp;
	int32_t cq[CLOSURE_CAP + 1];
	struct tg_cand *cand;
	uint8_t *owed;         /* evicted while a later demand reads it */
	int32_t *pend;         /* owed consumers of each node */
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

static int tg_free(struct tg *t, int32_t u)
{
	int32_t i = t->rpos[u], last = t->rlist[--t->rn];

	t->rlist[i] = last;
	t->rpos[last] = i;
	t->res[u] = 0;
	t->cur -= t->g->mem[u];
	return remat_schedule_push(t->out, REMAT_OP_FREE, u, t->err);
}

/*
 * When the evicted values still to be read that u feeds will be needed
 * (NO_USE: none is pending).
 */
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

			if (nu < best)
				best = nu;
		}
	}
	return best;
}

/* Mark u evicted while a later demand still reads it (or clear it). */
static void set_owed(struct tg *t, int32_t u, int owed)
{
	const struct remat_graph *g = t->g;
	int32_t k;

	if (t->owed[u] == owed)
		return;
	t->owed[u] = (uint8_t)owed;
	for (k = g->in_off[u]; k < g->in_off[u + 1]; k++)
		t->pend[g->in_idx[k]] += owed ? 1 : -1;
}

/*
 * What recomputing u would cost now: u and its missing ancestors, up to
 * the resident values.  -1 when that takes more than CLOSURE_CAP values
 * or a value that cannot be recomputed.
 */
static double closure_cost(struct tg *t, int32_t u)
{
	const struct remat_graph *g = t->g;
	int32_t n = 0, i, k;
	double sum = g->cost[u];

	if (t->stamp == INT32_MAX) {
		memset(t->mark, 0, sizeof(int32_t) * (size_t)g->n);
		t->stamp = 0;
	}
	t->stamp++;
	t->cq[n++] = u;
	t->mark[u] = t->stamp;
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
	}
	return sum;
}

/*
 * Step 3: evict until need more bytes fit.  Classes, in order: 0 values
 * nothing will read again; 1 values the order computes again before its
 * next read of them; 2 values to be read again, recomputed when needed.
 */
static int cmp_cand(const void *pa, const void *pb)
{
	const struct tg_cand *a = pa, *b = pb;

	if (a->lb != b->lb)
		return a->lb < b->lb ? -1 : 1;
	return (a->u > b->u) - (a->u < b->u);
}

static int make_room(struct tg *t, int64_t need)
{
	const struct remat_graph *g = t->g;

	while (t->cur + need > t->limit) {
		int32_t i, best = -1, best_class = 3, nc = 0;
		double best_score = 0;

		for (i = 0; i < t->rn; i++) {
			int32_t u = t->rlist[i], nu, pu, cls;
			double score;

			if (t->lock[u] || g->mem[u] == 0)
				continue;
			nu = next_use(t, u);
			pu = pending_use(t, u);
			if (nu == NO_USE && pu == NO_USE && !g->is_output[u]) {
				cls = 0;
				score = g->cost[u] / (double)g->mem[u];
			} else {
				if (!recomputable(g, u) || g->is_output[u])
					continue;
				if (pu < nu || t->seq[nu] != u) {
					/* Class 2: priced exactly below, if it can win. */
					if (pu < nu)
						nu = pu;
					t->cand[nc].u = u;
					t->cand[nc].dist = (double)g->mem[u] * (double)(nu - t->pos);
					t->cand[nc].lb = g->cost[u] / t->cand[nc].dist;
					nc++;
					continue;
				}
				cls = 1;
				score = g->cost[u] / ((double)g->mem[u] * (double)(nu - t->pos));
			}
			if (cls < best_class || (cls == best_class &&
			    (score < best_score || (score == best_score && u < best)))) {
				best = u;
				best_class = cls;
				best_score = score;
			}
		}
		if (best < 0 && nc > 0) {
			/* Cheapest bound first; stop once no bound can beat the best. */
			qsort(t->cand, (size_t)nc, sizeof(*t->cand), cmp_cand);
			for (i = 0; i < nc; i++) {
				double est, score;

				if (best >= 0 && t->cand[i].lb >= best_score)
					break;
				est = closure_cost(t, t->cand[i].u);
				if (est < 0)
					continue; /* too deep, or cannot be recomputed */
				score = est / t->cand[i].dist;
				if (best < 0 || score < best_score ||
				    (score == best_score && t->cand[i].u < best)) {
					best = t->cand[i].u;
					best_score = score;
					best_class = 2;
				}
			}
		}
		if (best < 0)
			return REMAT_ENOFIT;
		if (best_class == 2)
			set_owed(t, best, 1);
		REMAT_TRY(tg_free(t, best));
	}
	return REMAT_OK;
}

static int cmp_i32(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;

	return (a > b) - (a < b);
}

/*
 * Step 2: compute v (not resident).  Its missing ancestors (up to the
 * resident values) are recomputed first in topological order, each value
 * locked while something of this demand still reads it: the frontier,
 * not a recursion stack, is what stays resident.
 */
static int demand(struct tg *t, int32_t v)
{
	const struct remat_graph *g = t->g;
	int32_t m = 0, i, k;
	int rc;

	if (t->stamp == INT32_MAX) {
		memset(t->mark, 0, sizeof(int32_t) * (size_t)g->n);
		t->stamp = 0;
	}
	t->stamp++;
	t->mset[m++] = v;
	t->mark[v] = t->stamp;
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
			t->lock[x]--;
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
			t->rpos[x] = t->rn;
			t->rlist[t->rn++] = x;
			t->cur += g->mem[x];
			set_owed(t, x, 0);
		}
		/* Release x's reads (also on failure, to leave locks balanced). */
		for (k = g->in_off[x]; k < g->in_off[x + 1]; k++)
			t->lock[g->in_idx[k]]--;
	}
	return rc;
}

int remat_i_tighten(const struct remat_graph *g, const struct remat_schedule *order,
		    int64_t limit, int64_t max_steps,
		    const struct remat_plan_request *req,
		    struct remat_schedule *out, struct remat_error *err)
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
	t.rlist = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	t.rpos = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	t.mset = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	t.mark = calloc((size_t)g->n + 1, sizeof(int32_t));
	t.owed = calloc((size_t)g->n + 1, 1);
	t.pend = calloc((size_t)g->n + 1, sizeof(int32_t));
	t.cand = malloc(sizeof(*t.cand) * ((size_t)g->n + 1));
	if (!t.seq || !t.occ_off || !t.occ_pos || !t.ptr || !t.res || !t.lock ||
	    !t.rlist || !t.rpos || !t.mset || !t.mark || !t.owed || !t.pend || !t.cand) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the replay");
		goto done;
	}
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
	for (v = 0; v < g->n; v++)
		if (g->kind[v] == REMAT_KIND_INPUT) {
			t.res[v] = 1;
			t.rpos[v] = t.rn;
			t.rlist[t.rn++] = v;
			t.cur += g->mem[v];
		}
	/* Steps 2 to 4. */
	for (t.pos = 0; t.pos < t.len; t.pos++) {
		v = t.seq[t.pos];
		if (!t.res[v] && (rc = demand(&t, v)))
			goto done;
	}
done:
	if (rc == REMAT_ENOFIT && err && err->code != REMAT_ENOFIT)
		REMAT_FAIL(err, REMAT_ENOFIT, "replay does not fit in %lld bytes",
			   (long long)limit);
	if (rc)
		remat_schedule_clear(out);
	free(t.seq);
	free(t.occ_off);
	free(t.occ_pos);
	free(t.ptr);
	free(t.res);
	free(t.lock);
	free(t.rlist);
	free(t.rpos);
	free(t.mset);
	free(t.mark);
	free(t.owed);
	free(t.pend);
	free(t.cand);
	return rc;
}
