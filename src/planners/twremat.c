/*
 * twremat.c - divide and conquer over a tree decomposition (TWRemat).
 *
 * From Kumar, Purohit, Svitkina, Vee and Wang, "Efficient Rematerialization
 * for Deep Networks", NeurIPS 2019: Algorithm 1 (section 3) and its
 * TWRemat(k) variant (section 4.3).
 *
 * 1. If the budget covers the no-remat peak, plan nothing: the plan
 *    runner's no-remat order costs nothing extra (src/plan/run.c).
 * 2. Decompose the undirected graph of the nodes an output needs (input
 *    nodes are resident anyway and stay out) with the minimum fill-in
 *    heuristic, bags merged by Lemma 1 (src/analysis/treedec.c).
 *    2a. "Topological order" below is one of up to two orders: the
 *    file's, and list scheduling's (include/remat/order.h, method
 *    greedy) when its no-remat peak is lower; step 6 runs in both.  The
 *    paper fixes none, and the file's can be poor (a training chain that
 *    lists every weight gradient after the whole backward pass).  The
 *    second is computed after the search in the first, time permitting.
 * 3. Lemma 3, memoised as section 3 asks: build once the whole hierarchy
 *    of balanced separators (centroid decomposition of the bag tree: each
 *    separator bag leaves components of at most half its component's
 *    bags).  Each node belongs to the separator of the topmost hierarchy
 *    node whose bag holds it (its "home"); the nodes of a component are
 *    those whose home lies in its hierarchy subtree, an O(1) test with
 *    hierarchy nodes numbered in preorder.
 * 4. TW(H, S) computes the nodes S of component H, leaving them resident:
 *    a. need = the nodes of H that S depends on through H (a node already
 *       computed that may not be computed again stops the search: it is
 *       still resident);
 *    b. if H has fewer than k bags, compute need in topological order;
 *    c. otherwise, for each separator node v of H in need, in topological
 *       order: for each child component C holding inputs of v, run
 *       TW(C, inputs of v in C); then compute v;
 *    d. then for each child component C, TW(C, S in C).
 *    Nodes H's caller does not need are freed after their last use: the
 *    planner emits computes only and the liveness pass places the frees,
 *    which is never later than Algorithm 1's own annotations.  Step 4a is
 *    nshepperd's refinement of Algorithm 1: only separator nodes that S
 *    depends on are computed.
 * 5. Outputs and nodes with "recompute": false are computed once and then
 *    kept (the liveness pass never frees an output, and keeps the single
 *    instance of the other until its last use).
 * 6. TWRemat(k) (section 4.3): with --cutoff K, return the schedule for
 *    k = K as it is (in the file's order).  Otherwise build it for
 *    k = n_bags + 1 (no recursion: the topological order of what the
 *    outputs need), then halving k down to 1, in each order of step 2a,
 *    and offer each to remat_i_best_offer (the simulator judges) along
 *    with step 7's replay of it and step 8's keep pass of both; keep the
 *    cheapest schedule within budget.
 * 7. Post-pass (src/plan/evict_replay.c): replay each schedule's compute order within
 *    the budget, keeping values while memory allows and evicting (then
 *    recomputing) the cheapest ones per byte and time when it does not;
 *    its frees are dropped again so that the liveness pass places them.
 *    A schedule within budget comes back no more costly; one over budget
 *    may come back within it.
 * 8. Keep pass (src/plan/keep_pass.c), the pass nshepperd's Haskell
 *    TWRemat runs after its recursion: up to six rounds of walking the
 *    compute order with values freed lazily (only when a compute needs
 *    the memory, cheapest per byte first) and computes of values still
 *    resident dropped.  It only drops computes: never more costly, and
 *    within the budget whenever its input was.
 *
 * Complexity: O(n d^3) for the decomposition on graphs of small width d
 * (see treedec.h), O(n log n) for the hierarchy, list scheduling's order
 * (order.c), and for each of the two orders and O(log n) values of k
 * time linear in the schedule it emits times the in-degree, plus
 * O(steps log n) for its replay and keep passes; TWRemat(1) emits
 * O(n^(1 + log2(w + 2))) steps on width w in the worst case (Theorem 5),
 * far fewer on network graphs.  Candidates longer than --max-steps are
 * dropped.
 *
 * Not guaranteed: the width is a heuristic's, so the memory bound of
 * Theorem 5 holds for that width only; only O(log n) values of k are
 * tried, and the replay is greedy, so neither the least cost within the
 * budget nor the lowest budget reachable is certain; "recompute": false
 * nodes and outputs computed deep inside the recursion stay resident,
 * which can make TWRemat(1) peak above what it would reach without them.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/planner.h"
#include "analysis/needed.h"
#include "remat/order.h"
#include "remat/treedec.h"
#include "plan/best.h"
#include "remat/budget.h"
#include "plan/evict_replay.h"
#include "plan/keep_pass.h"

/* Internal status: the schedule outgrew --max-steps. */
#define TW_TOO_LONG 100

/* The balanced separator hierarchy (Lemma 3), numbered in preorder. */
struct tw_tree {
	int32_t n;        /* hierarchy nodes, one per bag */
	int32_t *par;     /* [n] parent, -1 for the root */
	int32_t *size;    /* [n] bags in the subtree (the component's size) */
	int32_t *home;    /* [g->n] hierarchy node of each node, -1 if none */
	int32_t *sep_off; /* [n + 1] CSR of separator nodes */
	int32_t *sep_idx; /* in topological order */
	const int32_t *topo; /* the topological order the recursion follows */
	const int32_t *pos;  /* [g->n] position of each node in it */
};

struct tw_run {
	const struct remat_graph *g;
	const struct tw_tree *t;
	const struct remat_plan_request *req;
	int32_t k;
	const uint8_t *pinned;  /* computed at most once */
	uint8_t *done;          /* pinned and computed */
	int32_t *mark;
	int32_t stamp;
	int32_t *a;             /* scratch stack */
	int64_t n, cap;
	struct remat_schedule *out;
	int64_t max_steps;
	struct remat_error *err;
};

static void tw_tree_release(struct tw_tree *t)
{
	free(t->par);
	free(t->size);
	free(t->home);
	free(t->sep_off);
	free(t->sep_idx);
	memset(t, 0, sizeof(*t));
}

/* ---- step 3: the separator hierarchy ---- */

/* What tw_tree_build works with besides the hierarchy it fills. */
struct tw_scratch {
	int32_t *coff, *cidx;         /* undirected bag adjacency (CSR) */
	int32_t *removed;             /* bags already taken as centroids */
	int32_t *bpar, *sz, *order;   /* one component: parent, subtree size, BFS order */
	int32_t *stk, *stk_hp;        /* components still to split, their hierarchy parent */
	int32_t nc;                   /* hierarchy nodes so far, in creation order: */
	int32_t *cbag, *cpar, *csize; /* centroid bag, parent, component size */
	int32_t *pre;                 /* preorder number of each */
};

static int tw_scratch_alloc(struct tw_scratch *w, int32_t nb)
{
	memset(w, 0, sizeof(*w));
	w->coff = calloc((size_t)nb + 2, sizeof(int32_t));
	w->cidx = malloc(sizeof(int32_t) * (size_t)(2 * nb));
	w->removed = calloc((size_t)nb, sizeof(int32_t));
	w->bpar = malloc(sizeof(int32_t) * (size_t)nb);
	w->sz = malloc(sizeof(int32_t) * (size_t)nb);
	w->order = malloc(sizeof(int32_t) * (size_t)nb);
	w->stk = malloc(sizeof(int32_t) * (size_t)(nb + 1));
	w->stk_hp = malloc(sizeof(int32_t) * (size_t)(nb + 1));
	w->cbag = malloc(sizeof(int32_t) * (size_t)nb);
	w->cpar = malloc(sizeof(int32_t) * (size_t)nb);
	w->csize = malloc(sizeof(int32_t) * (size_t)nb);
	w->pre = malloc(sizeof(int32_t) * (size_t)nb);
	if (!w->coff || !w->cidx || !w->removed || !w->bpar || !w->sz || !w->order ||
	    !w->stk || !w->stk_hp || !w->cbag || !w->cpar || !w->csize || !w->pre)
		return -1;
	return 0;
}

static void tw_scratch_release(struct tw_scratch *w)
{
	free(w->coff);
	free(w->cidx);
	free(w->removed);
	free(w->bpar);
	free(w->sz);
	free(w->order);
	free(w->stk);
	free(w->stk_hp);
	free(w->cbag);
	free(w->cpar);
	free(w->csize);
	free(w->pre);
}

/* The bag tree as undirected adjacency lists.  -1: out of memory. */
static int bag_adjacency(const struct remat_treedec *td, struct tw_scratch *w)
{
	int32_t nb = td->n_bags, i, *cur;

	for (i = 0; i < nb; i++)
		if (td->parent[i] >= 0) {
			w->coff[i + 1]++;
			w->coff[td->parent[i] + 1]++;
		}
	for (i = 0; i < nb; i++)
		w->coff[i + 1] += w->coff[i];
	cur = malloc(sizeof(int32_t) * (size_t)nb);
	if (!cur)
		return -1;
	memcpy(cur, w->coff, sizeof(int32_t) * (size_t)nb);
	for (i = 0; i < nb; i++)
		if (td->parent[i] >= 0) {
			w->cidx[cur[i]++] = td->parent[i];
			w->cidx[cur[td->parent[i]]++] = i;
		}
	free(cur);
	return 0;
}

/*
 * The component of bag s among the bags not yet removed, rooted at s:
 * parents, BFS order and subtree sizes.  Returns its number of bags.
 */
static int32_t component_sizes(struct tw_scratch *w, int32_t s)
{
	int32_t head = 0, tail = 0, i, j, x;

	w->order[tail++] = s;
	w->bpar[s] = -1;
	while (head < tail) {
		x = w->order[head++];
		for (j = w->coff[x]; j < w->coff[x + 1]; j++) {
			int32_t y = w->cidx[j];

			if (!w->removed[y] && y != w->bpar[x]) {
				w->bpar[y] = x;
				w->order[tail++] = y;
			}
		}
	}
	for (i = tail - 1; i >= 0; i--) {
		x = w->order[i];
		w->sz[x] = 1;
		for (j = w->coff[x]; j < w->coff[x + 1]; j++) {
			int32_t y = w->cidx[j];

			if (!w->removed[y] && y != w->bpar[x])
				w->sz[x] += w->sz[y];
		}
	}
	return tail;
}

/* The centroid of s's component: no subtree left of more than half of it. */
static int32_t centroid_of(const struct tw_scratch *w, int32_t s, int32_t total)
{
	int32_t c = s, j;

	for (;;) {
		int32_t next = -1;

		for (j = w->coff[c]; j < w->coff[c + 1]; j++) {
			int32_t y = w->cidx[j];

			if (!w->removed[y] && y != w->bpar[c] && w->sz[y] * 2 > total) {
				next = y;
				break;
			}
		}
		if (next < 0)
			return c;
		c = next;
	}
}

/* Centroids, component by component (explicit stack: trees are deep). */
static void centroids(const struct remat_treedec *td, struct tw_scratch *w)
{
	int32_t top = 0, j;

	w->stk[top] = td->root;
	w->stk_hp[top++] = -1;
	while (top > 0) {
		int32_t s = w->stk[--top], hp = w->stk_hp[top];
		int32_t total = component_sizes(w, s), c = centroid_of(w, s, total);

		w->cbag[w->nc] = c;
		w->cpar[w->nc] = hp;
		w->csize[w->nc] = total;
		w->removed[c] = 1;
		/* Push in reverse so components are numbered in adjacency order. */
		for (j = w->coff[c + 1] - 1; j >= w->coff[c]; j--)
			if (!w->removed[w->cidx[j]]) {
				w->stk[top] = w->cidx[j];
				w->stk_hp[top++] = w->nc;
			}
		w->nc++;
	}
}

/*
 * Preorder numbers: children of each hierarchy node in creation order.
 * -1: out of memory.
 */
static int preorder(struct tw_scratch *w)
{
	int32_t nc = w->nc, i, j, x, top = 0, next = 0;
	int32_t *hoff, *hidx, *cur;
	int rc = -1;

	hoff = calloc((size_t)nc + 2, sizeof(int32_t));
	hidx = malloc(sizeof(int32_t) * (size_t)nc);
	cur = malloc(sizeof(int32_t) * (size_t)nc);
	if (!hoff || !hidx || !cur)
		goto done;
	for (i = 1; i < nc; i++)
		hoff[w->cpar[i] + 1]++;
	for (i = 0; i < nc; i++)
		hoff[i + 1] += hoff[i];
	memcpy(cur, hoff, sizeof(int32_t) * (size_t)nc);
	for (i = 1; i < nc; i++)
		hidx[cur[w->cpar[i]]++] = i;
	w->stk[top++] = 0;
	while (top > 0) {
		x = w->stk[--top];
		w->pre[x] = next++;
		for (j = hoff[x + 1] - 1; j >= hoff[x]; j--)
			w->stk[top++] = hidx[j];
	}
	rc = 0;
done:
	free(hoff);
	free(hidx);
	free(cur);
	return rc;
}

/*
 * The hierarchy in preorder (parents, sizes) and the homes: the first
 * hierarchy node in preorder whose bag holds v.  Counts each node's
 * separator nodes in t->sep_off.
 */
static void homes(const struct remat_treedec *td, struct tw_scratch *w,
		  struct tw_tree *t)
{
	int32_t nc = w->nc, i, j, *by_pre = w->order; /* reused: bag of each number */

	for (i = 0; i < nc; i++) {
		t->par[w->pre[i]] = w->cpar[i] < 0 ? -1 : w->pre[w->cpar[i]];
		t->size[w->pre[i]] = w->csize[i];
	}
	for (i = 0; i < nc; i++)
		by_pre[w->pre[i]] = w->cbag[i];
	for (i = 0; i < nc; i++) {
		int32_t b = by_pre[i];

		for (j = td->bag_off[b]; j < td->bag_off[b + 1]; j++) {
			int32_t v = td->bag_idx[j];

			if (t->home[v] < 0) {
				t->home[v] = i;
				t->sep_off[i + 1]++;
			}
		}
	}
}

/* Each hierarchy node's separator nodes, in topological order.  -1: out of memory. */
static int separator_lists(const struct remat_graph *g, int32_t nc, struct tw_tree *t)
{
	int32_t i, *cur;

	for (i = 0; i < nc; i++)
		t->sep_off[i + 1] += t->sep_off[i];
	t->sep_idx = malloc(sizeof(int32_t) * ((size_t)t->sep_off[nc] + 1));
	cur = malloc(sizeof(int32_t) * ((size_t)nc + 1));
	if (!t->sep_idx || !cur) {
		free(cur);
		return -1;
	}
	memcpy(cur, t->sep_off, sizeof(int32_t) * (size_t)nc);
	for (i = 0; i < g->n; i++) {
		int32_t v = t->topo[i];

		if (t->home[v] >= 0)
			t->sep_idx[cur[t->home[v]]++] = v;
	}
	free(cur);
	return 0;
}

/*
 * Step 3: centroid decomposition of the bag tree, then preorder numbers,
 * homes and separator lists.  O(n_bags log n_bags + total bag size).
 */
static int tw_tree_build(const struct remat_graph *g, const struct remat_treedec *td,
			 const int32_t *topo, const int32_t *pos, struct tw_tree *t,
			 struct remat_error *err)
{
	int32_t nb = td->n_bags, i;
	struct tw_scratch w;
	int rc = REMAT_ENOMEM;

	memset(t, 0, sizeof(*t));
	memset(&w, 0, sizeof(w));
	t->topo = topo;
	t->pos = pos;
	t->n = nb;
	t->home = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	t->sep_off = calloc((size_t)nb + 2, sizeof(int32_t));
	t->par = malloc(sizeof(int32_t) * ((size_t)nb + 1));
	t->size = malloc(sizeof(int32_t) * ((size_t)nb + 1));
	if (!t->home || !t->sep_off || !t->par || !t->size)
		goto done;
	for (i = 0; i < g->n; i++)
		t->home[i] = -1;
	if (nb == 0) {
		t->sep_idx = malloc(sizeof(int32_t));
		rc = t->sep_idx ? REMAT_OK : REMAT_ENOMEM;
		goto done;
	}
	if (tw_scratch_alloc(&w, nb) || bag_adjacency(td, &w))
		goto done;
	centroids(td, &w);
	if (preorder(&w))
		goto done;
	homes(td, &w, t);
	if (separator_lists(g, w.nc, t))
		goto done;
	rc = REMAT_OK;
done:
	tw_scratch_release(&w);
	if (rc) {
		tw_tree_release(t);
		return REMAT_FAIL(err, rc, "out of memory in the separator hierarchy");
	}
	return REMAT_OK;
}

/* ---- step 4: the recursion ---- */

static int tw_push(struct tw_run *r, int32_t v)
{
	if (r->n == r->cap) {
		int64_t cap = r->cap ? r->cap * 2 : 1024;
		int32_t *a = realloc(r->a, sizeof(int32_t) * (size_t)cap);

		if (!a)
			return REMAT_FAIL(r->err, REMAT_ENOMEM, "out of memory in twremat");
		r->a = a;
		r->cap = cap;
	}
	r->a[r->n++] = v;
	return REMAT_OK;
}

static int tw_emit(struct tw_run *r, int32_t v)
{
	if (r->pinned[v]) {
		if (r->done[v])
			return REMAT_OK;
		r->done[v] = 1;
	}
	if (r->out->n >= r->max_steps)
		return TW_TOO_LONG;
	if ((r->out->n & 0xffff) == 0xffff && remat_plan_expired(r->req))
		return REMAT_FAIL(r->err, REMAT_ECANCELED, "twremat: time limit reached");
	return remat_schedule_push(r->out, REMAT_OP_COMPUTE, v, r->err);
}

static int cmp_pair(const void *pa, const void *pb)
{
	const int32_t *a = pa, *b = pb;

	if (a[0] != b[0])
		return (a[0] > b[0]) - (a[0] < b[0]);
	return (a[1] > b[1]) - (a[1] < b[1]);
}

static int cmp_i32(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;

	return (a > b) - (a < b);
}

/* Sort r->a[lo..hi) (nodes) into topological order. */
static void tw_sort_topo(struct tw_run *r, int64_t lo, int64_t hi)
{
	int64_t i;

	if (hi - lo < 2)
		return;
	for (i = lo; i < hi; i++)
		r->a[i] = r->t->pos[r->a[i]];
	qsort(r->a + lo, (size_t)(hi - lo), sizeof(int32_t), cmp_i32);
	for (i = lo; i < hi; i++)
		r->a[i] = r->t->topo[r->a[i]];
}

static int tw_rec(struct tw_run *r, int32_t h, int64_t s0, int64_t s1);

/*
 * r->a[lo..hi) holds nodes whose homes lie strictly below h: run TW on
 * each child component of h with the nodes in it, children in preorder.
 * The range is consumed (the stack is back at lo on return).
 */
static int tw_children(struct tw_run *r, int32_t h, int64_t lo, int64_t hi)
{
	const struct tw_tree *t = r->t;
	int64_t cnt = hi - lo, p, q, i;
	int rc;

	if (cnt == 0)
		return REMAT_OK;
	/* Pairs (child, topological position) above the range. */
	for (i = lo; i < hi; i++) {
		int32_t v = r->a[i], c = t->home[v];

		while (t->par[c] != h)
			c = t->par[c];
		REMAT_TRY(tw_push(r, c));
		REMAT_TRY(tw_push(r, t->pos[v]));
	}
	qsort(r->a + hi, (size_t)cnt, 2 * sizeof(int32_t), cmp_pair);
	for (p = 0; p < cnt; p = q) {
		int32_t c = r->a[hi + 2 * p];
		int64_t s0 = r->n;

		for (q = p; q < cnt && r->a[hi + 2 * q] == c; q++)
			REMAT_TRY(tw_push(r, t->topo[r->a[hi + 2 * q + 1]]));
		rc = tw_rec(r, c, s0, r->n);
		if (rc)
			return rc;
		r->n = s0;
	}
	r->n = lo;
	return REMAT_OK;
}

/* TW(h, S = r->a[s0..s1)); the stack is back at its entry height on return. */
static int tw_rec(struct tw_run *r, int32_t h, int64_t s0, int64_t s1)
{
	const struct remat_graph *g = r->g;
	const struct tw_tree *t = r->t;
	int32_t lo = h, hi = h + t->size[h];
	int64_t base = r->n, i, q, m;
	int rc;

	/* 4a: need, by a backward search through h's component. */
	if (r->stamp == INT32_MAX) {
		memset(r->mark, 0, sizeof(int32_t) * (size_t)g->n);
		r->stamp = 0;
	}
	r->stamp++;
	for (i = s0; i < s1; i++) {
		int32_t v = r->a[i];

		if (!r->done[v] && r->mark[v] != r->stamp) {
			r->mark[v] = r->stamp;
			REMAT_TRY(tw_push(r, v));
		}
	}
	for (q = base; q < r->n; q++) {
		int32_t x = r->a[q], k;

		for (k = g->in_off[x]; k < g->in_off[x + 1]; k++) {
			int32_t u = g->in_idx[k], hm = t->home[u];

			if (hm < lo || hm >= hi || r->done[u] || r->mark[u] == r->stamp)
				continue;
			r->mark[u] = r->stamp;
			REMAT_TRY(tw_push(r, u));
		}
	}
	/* 4b: a small component, in topological order. */
	if (t->size[h] < r->k) {
		tw_sort_topo(r, base, r->n);
		for (q = base; q < r->n; q++) {
			rc = tw_emit(r, r->a[q]);
			if (rc)
				return rc;
		}
		r->n = base;
		return REMAT_OK;
	}
	/* 4c: the separator nodes in need, in topological order. */
	m = 0;
	for (q = base; q < r->n; q++)
		if (t->home[r->a[q]] == h)
			r->a[base + m++] = r->a[q];
	r->n = base + m;
	tw_sort_topo(r, base, r->n);
	for (i = 0; i < m; i++) {
		int32_t v = r->a[base + i], k;
		int64_t g0 = r->n;

		if (r->done[v])
			continue;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = g->in_idx[k], hm = t->home[u];

			if (hm > h && hm < hi && !r->done[u])
				REMAT_TRY(tw_push(r, u));
		}
		rc = tw_children(r, h, g0, r->n);
		if (rc)
			return rc;
		rc = tw_emit(r, v);
		if (rc)
			return rc;
	}
	/* 4d: the rest of S, component by component. */
	{
		int64_t g0 = r->n;

		for (i = s0; i < s1; i++) {
			int32_t v = r->a[i], hm = t->home[v];

			if (hm > h && hm < hi && !r->done[v])
				REMAT_TRY(tw_push(r, v));
		}
		rc = tw_children(r, h, g0, r->n);
		if (rc)
			return rc;
	}
	r->n = base;
	return REMAT_OK;
}

/* ---- the planner ---- */

struct tw_plan {
	const struct remat_graph *g;
	struct remat_treedec td;
	struct tw_tree t;
	uint8_t *pinned;
	uint8_t *done;
	int32_t *mark;
	int32_t *a;
	int64_t cap;
	int32_t *targets;
	int32_t n_targets;
	/* Step 2a: the orders the recursion may follow (0: the file's). */
	const int32_t *topo[2], *pos[2];
	int n_orders;
	int32_t *alt, *alt_pos; /* list scheduling's, when lower */
};

static void tw_plan_release(struct tw_plan *p)
{
	remat_treedec_release(&p->td);
	tw_tree_release(&p->t);
	free(p->pinned);
	free(p->done);
	free(p->mark);
	free(p->a);
	free(p->targets);
	free(p->alt);
	free(p->alt_pos);
	memset(p, 0, sizeof(*p));
}

/*
 * Step 2a: the topological orders the recursion may follow wherever it
 * says "in topological order": the file's, and list scheduling's
 * (remat_order_compute, method greedy) when that order's no-remat peak is
 * lower.  The recursion does not fix one; the file's may list, say, every
 * weight gradient after the whole backward pass.
 */
static int tw_orders(struct tw_plan *p, double deadline, struct remat_error *err)
{
	const struct remat_graph *g = p->g;
	struct remat_order_opts o;
	int64_t peak = 0;
	int32_t i;

	p->alt = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	p->alt_pos = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!p->alt || !p->alt_pos)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in twremat");
	remat_order_opts_init(&o);
	o.deadline = deadline;
	REMAT_TRY(remat_order_compute(g, REMAT_ORDER_GREEDY, &o, p->alt, &peak, err));
	if (peak >= g->no_remat_peak)
		return REMAT_OK;
	for (i = 0; i < g->n; i++)
		p->alt_pos[p->alt[i]] = i;
	p->topo[1] = p->alt;
	p->pos[1] = p->alt_pos;
	p->n_orders = 2;
	return REMAT_OK;
}

/* Follow order o of step 2a: the separator lists are sorted again. */
static void tw_use_order(struct tw_plan *p, int o)
{
	struct tw_tree *t = &p->t;
	int32_t h, i;

	t->topo = p->topo[o];
	t->pos = p->pos[o];
	for (h = 0; h < t->n; h++) {
		int32_t lo = t->sep_off[h], hi = t->sep_off[h + 1];

		if (hi - lo < 2)
			continue;
		for (i = lo; i < hi; i++)
			t->sep_idx[i] = t->pos[t->sep_idx[i]];
		qsort(t->sep_idx + lo, (size_t)(hi - lo), sizeof(int32_t), cmp_i32);
		for (i = lo; i < hi; i++)
			t->sep_idx[i] = t->topo[t->sep_idx[i]];
	}
}

/* Steps 2 and 3, and what every run of step 4 shares. */
static int tw_plan_init(struct tw_plan *p, const struct remat_plan_request *req,
			struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_treedec_limits lim = { req->deadline, req->stop };
	uint8_t *need;
	int32_t i;
	int rc;

	memset(p, 0, sizeof(*p));
	p->g = g;
	need = calloc((size_t)g->n + 1, 1);
	p->pinned = calloc((size_t)g->n + 1, 1);
	p->done = calloc((size_t)g->n + 1, 1);
	p->mark = calloc((size_t)g->n + 1, sizeof(int32_t));
	p->targets = malloc(sizeof(int32_t) * ((size_t)g->n_outputs + 1));
	if (!need || !p->pinned || !p->done || !p->mark || !p->targets) {
		free(need);
		tw_plan_release(p);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in twremat");
	}
	remat_i_needed(g, need);
	for (i = 0; i < g->n; i++) {
		if (g->kind[i] == REMAT_KIND_INPUT)
			need[i] = 0;
		p->pinned[i] = g->is_output[i] || !g->recompute[i];
	}
	for (i = 0; i < g->n_outputs; i++)
		if (g->kind[g->outputs[i]] != REMAT_KIND_INPUT)
			p->targets[p->n_targets++] = g->outputs[i];
	p->n_orders = 1;
	p->topo[0] = g->topo;
	p->pos[0] = g->topo_pos;
	rc = remat_treedec_build_limited(g, need, &lim, &p->td, err);
	free(need);
	if (rc == REMAT_OK)
		rc = tw_tree_build(g, &p->td, g->topo, g->topo_pos, &p->t, err);
	if (rc)
		tw_plan_release(p);
	return rc;
}

/* Step 4 for one k: a compute-only schedule in out. */
static int tw_plan_run(struct tw_plan *p, const struct remat_plan_request *req,
		       int32_t k, int64_t max_steps, struct remat_schedule *out,
		       struct remat_error *err)
{
	struct tw_run r;
	int32_t i;
	int rc;

	remat_schedule_clear(out);
	if (p->t.n == 0)
		return REMAT_OK;
	memset(&r, 0, sizeof(r));
	r.g = p->g;
	r.t = &p->t;
	r.req = req;
	r.k = k;
	r.pinned = p->pinned;
	r.done = p->done;
	r.mark = p->mark;
	r.stamp = 0;
	r.a = p->a;
	r.cap = p->cap;
	r.out = out;
	r.max_steps = max_steps;
	r.err = err;
	memset(p->done, 0, (size_t)p->g->n);
	memset(p->mark, 0, sizeof(int32_t) * (size_t)p->g->n);
	for (i = 0; i < p->n_targets; i++) {
		rc = tw_push(&r, p->targets[i]);
		if (rc)
			goto done;
	}
	rc = tw_rec(&r, 0, 0, r.n);
done:
	p->a = r.a;
	p->cap = r.cap;
	return rc;
}

/* Drop the free steps of s (its computes keep their order). */
static void tw_strip_frees(struct remat_schedule *s)
{
	int64_t i, n = 0;

	for (i = 0; i < s->n; i++)
		if (s->steps[i].op == REMAT_OP_COMPUTE)
			s->steps[n++] = s->steps[i];
	s->n = n;
}

/*
 * Step 8: the keep pass (src/plan/keep_pass.c) over sched, offered too;
 * kept receives the result.  Skipped once the deadline has passed.
 */
static int tw_offer_kept(struct remat_i_best *best, const struct remat_plan_request *req,
			 const struct remat_schedule *sched, struct remat_schedule *kept,
			 struct remat_error *err)
{
	if (remat_plan_expired(req))
		return REMAT_OK;
	REMAT_TRY(remat_i_keep_pass(req->graph, sched, req->budget, 6, REMAT_I_KEEP_PER_BYTE, kept,
				    NULL, err));
	return remat_i_best_offer(best, "twremat", req->graph, req->budget, kept,
				NULL, NULL, err);
}

/*
 * Offer the compute-only order cand, then its replay within the budget
 * (src/plan/evict_replay.c) with the replay's frees dropped: the liveness pass frees no
 * later than the replay did, so the peak can only fall; and each of the
 * two after the keep pass (step 8).  cand is left explicit.
 * REMAT_ECANCELED when the deadline passed.
 */
static int tw_offer(struct remat_i_best *best, const struct remat_plan_request *req,
		    struct remat_schedule *cand, struct remat_schedule *tight,
		    struct remat_schedule *kept, int64_t max_steps, struct remat_error *err)
{
	struct remat_error e;
	int rc;

	remat_error_clear(&e);
	rc = remat_i_evict_replay(req->graph, cand, req->budget, max_steps, req, tight, &e);
	REMAT_TRY(remat_i_best_offer(best, "twremat", req->graph, req->budget, cand,
				   NULL, NULL, err));
	REMAT_TRY(tw_offer_kept(best, req, cand, kept, err));
	if (rc == REMAT_ENOFIT)
		return REMAT_OK;
	if (rc) {
		*err = e;
		return rc;
	}
	tw_strip_frees(tight);
	REMAT_TRY(remat_i_best_offer(best, "twremat", req->graph, req->budget, tight,
				   NULL, NULL, err));
	return tw_offer_kept(best, req, tight, kept, err);
}

static const struct remat_planner_option twremat_options[] = {
	{ "cutoff", "K", "stop the recursion at components of fewer than K bags "
	  "(1: full Algorithm 1; default: searched for the cheapest fit)" },
	{ "max-steps", "N", "drop candidate schedules longer than N computes "
	  "(default 16 per node, at least 2000000)" },
	{ NULL, NULL, NULL }
};

/*
 * Step 6 in the order the plan follows: the candidates for k = n_bags + 1
 * down to 1 (halving), each offered with its replay and keep passes.
 * Progress is reported as the fraction f0 + span * (share of the k's).
 */
static int tw_search(struct tw_plan *p, const struct remat_plan_request *req,
		     struct remat_i_best *best, struct remat_schedule *cand,
		     struct remat_schedule *tight, struct remat_schedule *prev,
		     struct remat_schedule *kept, int64_t max_steps, double t0, double f0,
		     double span, struct remat_error *err)
{
	int32_t k;
	int rc;

	for (k = p->t.n + 1; k >= 1; k = k > 1 ? (k + 1) / 2 : 0) {
		struct remat_progress pr = { "twremat", "search", -1, NAN, NAN, 0 };

		if (remat_plan_expired(req))
			break;
		pr.fraction = f0 + span * (1.0 - log2((double)k) / log2((double)p->t.n + 2.0));
		pr.elapsed = remat_now() - t0;
		if (best->have)
			pr.incumbent = best->res.cost;
		remat_plan_progress(req, &pr);
		rc = tw_plan_run(p, req, k, max_steps, cand, err);
		if (rc == TW_TOO_LONG || rc == REMAT_ECANCELED)
			break;
		if (rc)
			return rc;
		/*
		 * Neighbouring cut-offs often give the same order (always, when
		 * one bag holds most of the graph); its replay is deterministic,
		 * so offering it again would only repeat the work.
		 */
		if (k <= p->t.n && cand->n == prev->n &&
		    (cand->n == 0 ||
		     memcmp(cand->steps, prev->steps, sizeof(*cand->steps) * (size_t)cand->n) == 0)) {
			if (k == 1)
				break;
			continue;
		}
		REMAT_TRY(remat_schedule_copy(prev, cand, err));
		rc = tw_offer(best, req, cand, tight, kept, max_steps, err);
		if (rc == REMAT_ECANCELED)
			break;
		if (rc)
			return rc;
		if (k == 1)
			break;
	}
	return REMAT_OK;
}

static int twremat_plan(const struct remat_plan_request *req,
			struct remat_schedule *out, struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct tw_plan p;
	struct remat_i_best best;
	struct remat_schedule cand;
	long cutoff, max_steps_opt;
	int64_t max_steps, def_steps;
	struct remat_schedule tight, prev, kept;
	double t0 = remat_now();
	int rc;

	def_steps = (int64_t)g->n * 16;
	if (def_steps < 2000000)
		def_steps = 2000000;
	REMAT_TRY(remat_opt_int(req, "cutoff", 0, 1, 2147483647L, &cutoff, err));
	REMAT_TRY(remat_opt_int(req, "max-steps", (long)def_steps, 1, 2147483647L,
				&max_steps_opt, err));
	max_steps = max_steps_opt;
	/* Step 1. */
	if (!remat_opt_get(req, "cutoff") && req->budget >= g->no_remat_peak)
		return REMAT_FAIL(err, REMAT_ENOFIT, "twremat: the budget covers the no-remat "
				  "peak, so the plan runner's topological order is the plan");
	rc = tw_plan_init(&p, req, err);
	if (rc == REMAT_ECANCELED) {
		/* Out of time before a schedule: exit 3, as when none fits. */
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err ? err->msg : "tree decomposition");
		return REMAT_FAIL(err, REMAT_ENOFIT, "twremat: time ran out before a schedule "
				  "was found (%s)", why);
	}
	if (rc)
		return rc;
	remat_i_best_init(&best);
	remat_schedule_init(&cand);
	remat_schedule_init(&tight);
	remat_schedule_init(&prev);
	remat_schedule_init(&kept);
	if (cutoff > 0) {
		rc = tw_plan_run(&p, req, (int32_t)cutoff, max_steps, out, err);
		if (rc == TW_TOO_LONG)
			rc = REMAT_FAIL(err, REMAT_ENOFIT, "twremat: the schedule for cutoff %ld "
					"exceeds %lld computes (see --max-steps)", cutoff,
					(long long)max_steps);
		else if (rc == REMAT_ECANCELED)
			rc = REMAT_FAIL(err, REMAT_ENOFIT, "twremat: time limit reached");
		goto done;
	}
	/*
	 * Step 6: k = n_bags + 1 (no recursion), then halving down to 1, in
	 * the file's order, then (time permitting) in list scheduling's.
	 */
	rc = tw_search(&p, req, &best, &cand, &tight, &prev, &kept, max_steps, t0, 0, 0.5, err);
	if (rc == REMAT_OK && !remat_plan_expired(req))
		rc = tw_orders(&p, req->deadline, err);
	if (rc)
		goto done;
	if (p.n_orders == 2 && !remat_plan_expired(req)) {
		tw_use_order(&p, 1);
		rc = tw_search(&p, req, &best, &cand, &tight, &prev, &kept, max_steps, t0, 0.5,
			       0.5, err);
		if (rc)
			goto done;
	}
	if (!best.have) {
		char lowest[96] = "";

		if (best.least_peak >= 0) {
			char pk[32];

			remat_format_bytes(best.least_peak, pk, sizeof(pk));
			snprintf(lowest, sizeof(lowest), ": the lowest peak it reached is %s "
				 "(%lld bytes)", pk, (long long)best.least_peak);
		}
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "twremat: %s within %lld bytes%s",
				!remat_plan_expired(req) ? "no cutoff gives a schedule"
				: best.least_peak >= 0 ? "time ran out before a schedule fit"
				: "time ran out before a schedule was found",
				(long long)req->budget, lowest);
		goto done;
	}
	rc = remat_i_best_take(&best, out, err);
done:
	remat_schedule_release(&cand);
	remat_schedule_release(&tight);
	remat_schedule_release(&prev);
	remat_schedule_release(&kept);
	remat_i_best_release(&best);
	tw_plan_release(&p);
	return rc;
}

const struct remat_planner remat_i_planner_twremat = {
	.name = "twremat",
	.summary = "treewidth divide and conquer (Kumar et al. 2019), searching its cutoff",
	.flags = REMAT_PLANNER_AUTO,
	.options = twremat_options,
	.plan = twremat_plan,
};
