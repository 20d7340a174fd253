/*
 * treedec.c - tree decomposition by greedy minimum fill-in elimination,
 * then Kumar et al. 2019 Lemma 1 bag merging; see remat/treedec.h.
 *
 * 1. Take the undirected simple graph of the masked nodes (an edge per
 *    distinct input relation, directions forgotten).
 * 2. Count each vertex's fill (non-adjacent pairs among its neighbours)
 *    once, from a degree-ordered triangle count: fill = C(d,2) - triangles.
 * 3. Repeatedly pop the vertex of least (fill, degree, index) from a
 *    binary heap (nearly: see eliminate()), record the bag {v} + N(v),
 *    remove v and make N(v) a clique.  Fills change only near v and are
 *    kept exact by deltas: removing v costs each neighbour w the pairs
 *    (v, x) with x not in N(v); an added edge (a, b) removes the pair
 *    (a, b) from every common neighbour and gives a and b the pairs with
 *    their neighbours not adjacent to the other end.  Adjacency is tested
 *    by stamping one vertex's neighbours in an array; eliminated vertices
 *    are dropped lazily from adjacency lists.
 * 4. The parent of v's bag is the bag of the neighbour eliminated first
 *    after v (the standard chordal-completion tree); bags of the vertices
 *    that end a connected component hang under the last one, so the bags
 *    always form one tree.
 * 5. Lemma 1: in elimination order (children before parents) merge each
 *    bag with its parent when one contains the other, with union-find;
 *    merges never enable or disable one another, so one pass suffices and
 *    at most n bags remain.
 *
 * Limits (remat_treedec_build_limited): steps 2, 3 and 5 count their
 * work (adjacency entries scanned) and read the clock every
 * TD_CHECK_WORK units, so a deadline or a stop flag ends the build within
 * about a millisecond of work, even inside one costly elimination; the
 * partial decomposition is dropped (REMAT_ECANCELED).
 *
 * The result is a heuristic: the width bounds the treewidth from above
 * and is exact for forests and series-parallel graphs (there a vertex of
 * degree <= 2 always has the least fill and the smallest degree among
 * the least fill), not in general.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/planner.h"
#include "remat/treedec.h"
#include "core/heap.h"

/* Units of work (adjacency entries scanned) between two looks at the clock. */
#define TD_CHECK_WORK (1 << 16)

/* Internal status of the steps: out of memory, out of time. */
#define TD_NOMEM (-1)
#define TD_EXPIRED (-2)

struct adj_list {
	int32_t *a;
	int32_t len, cap;
};

struct mf_state {
	int32_t m;               /* vertices */
	struct adj_list *adj;
	int32_t *deg;            /* live degree */
	int64_t *fill;
	uint8_t *gone;           /* eliminated */
	int32_t *heap, *hpos;    /* heap of live vertices, and where each sits */
	int64_t hn;
	int32_t *mark;           /* stamps */
	int32_t stamp;
	int32_t *dirty;
	int32_t n_dirty;
	int32_t *dmark;
	int32_t dstamp;
	/* Limits: work done, when to look at the clock next, and the limits. */
	int64_t work, next_check;
	double deadline;
	const volatile sig_atomic_t *stop;
	int expired;
};

/* Has the deadline passed or the stop flag been set?  Reads the clock
 * only once per TD_CHECK_WORK units of work. */
static int td_expired(struct mf_state *st)
{
	if (st->work < st->next_check)
		return 0;
	st->next_check = st->work + TD_CHECK_WORK;
	if ((st->stop && *st->stop) || (st->deadline > 0 && remat_now() >= st->deadline))
		st->expired = 1;
	return st->expired;
}

static int adj_push(struct adj_list *l, int32_t v)
{
	if (l->len == l->cap) {
		int32_t cap = l->cap ? l->cap * 2 : 4;
		int32_t *a = realloc(l->a, sizeof(int32_t) * (size_t)cap);

		if (!a)
			return -1;
		l->a = a;
		l->cap = cap;
	}
	l->a[l->len++] = v;
	return 0;
}

/* Drop eliminated vertices from v's list; returns the live count. */
static int32_t adj_compact(struct mf_state *st, int32_t v)
{
	struct adj_list *l = &st->adj[v];
	int32_t i, k = 0;

	st->work += l->len;
	for (i = 0; i < l->len; i++)
		if (!st->gone[l->a[i]])
			l->a[k++] = l->a[i];
	l->len = k;
	return k;
}

/* ---- heap of live vertices keyed by (fill, degree, id) ---- */

static int mf_less(const struct mf_state *st, int32_t a, int32_t b)
{
	if (st->fill[a] != st->fill[b])
		return st->fill[a] < st->fill[b];
	if (st->deg[a] != st->deg[b])
		return st->deg[a] < st->deg[b];
	return a < b;
}

/* Where each vertex sits, so that a changed fill can move it. */
static void mf_moved(struct mf_state *st, int32_t v, int64_t i)
{
	st->hpos[v] = (int32_t)i;
}

REMAT_HEAP_DEFINE(mf_heap, int32_t, struct mf_state, mf_less, mf_moved)

static int32_t heap_pop(struct mf_state *st)
{
	int32_t v = mf_heap_pop(st->heap, &st->hn, st);

	st->hpos[v] = -1;
	return v;
}

static void touch(struct mf_state *st, int32_t v)
{
	if (st->dmark[v] != st->dstamp) {
		st->dmark[v] = st->dstamp;
		st->dirty[st->n_dirty++] = v;
	}
}

static int32_t next_stamp(struct mf_state *st)
{
	if (st->stamp == INT32_MAX) {
		memset(st->mark, 0, sizeof(int32_t) * (size_t)st->m);
		st->stamp = 0;
	}
	return ++st->stamp;
}

/* ---- step 2: initial fills from a degree-ordered triangle count ---- */

/* 0, TD_NOMEM or TD_EXPIRED. */
static int initial_fill(struct mf_state *st)
{
	int32_t m = st->m, u, i, j;
	int32_t *rank = NULL, *ord = NULL, *ooff = NULL, *oidx = NULL;
	int64_t *tri = NULL;
	int rc = TD_NOMEM;

	rank = malloc(sizeof(int32_t) * ((size_t)m + 1));
	ord = malloc(sizeof(int32_t) * ((size_t)m + 1));
	ooff = calloc((size_t)m + 2, sizeof(int32_t));
	tri = calloc((size_t)m + 1, sizeof(int64_t));
	if (!rank || !ord || !ooff || !tri)
		goto done;
	/* Rank by degree with a counting sort (ties by id keep it stable). */
	{
		int32_t maxd = 0, *cnt;

		for (u = 0; u < m; u++)
			if (st->deg[u] > maxd)
				maxd = st->deg[u];
		cnt = calloc((size_t)maxd + 2, sizeof(int32_t));
		if (!cnt)
			goto done;
		for (u = 0; u < m; u++)
			cnt[st->deg[u] + 1]++;
		for (i = 0; i <= maxd; i++)
			cnt[i + 1] += cnt[i];
		for (u = 0; u < m; u++)
			ord[cnt[st->deg[u]]++] = u;
		free(cnt);
		for (i = 0; i < m; i++)
			rank[ord[i]] = i;
	}
	/* Orient every edge towards the higher rank. */
	for (u = 0; u < m; u++)
		for (i = 0; i < st->adj[u].len; i++)
			if (rank[st->adj[u].a[i]] > rank[u])
				ooff[u + 1]++;
	for (u = 0; u < m; u++)
		ooff[u + 1] += ooff[u];
	oidx = malloc(sizeof(int32_t) * ((size_t)ooff[m] + 1));
	if (!oidx)
		goto done;
	{
		int32_t *cur = malloc(sizeof(int32_t) * ((size_t)m + 1));

		if (!cur)
			goto done;
		memcpy(cur, ooff, sizeof(int32_t) * (size_t)m);
		for (u = 0; u < m; u++)
			for (i = 0; i < st->adj[u].len; i++) {
				int32_t w = st->adj[u].a[i];

				if (rank[w] > rank[u])
					oidx[cur[u]++] = w;
			}
		free(cur);
	}
	/* Each triangle is found once, from its lowest-ranked corner. */
	for (u = 0; u < m; u++) {
		int32_t su = next_stamp(st);

		if (td_expired(st)) {
			rc = TD_EXPIRED;
			goto done;
		}
		st->work += 1 + ooff[u + 1] - ooff[u];
		for (i = ooff[u]; i < ooff[u + 1]; i++)
			st->mark[oidx[i]] = su;
		for (i = ooff[u]; i < ooff[u + 1]; i++) {
			int32_t v = oidx[i];

			st->work += ooff[v + 1] - ooff[v];
			for (j = ooff[v]; j < ooff[v + 1]; j++)
				if (st->mark[oidx[j]] == su) {
					tri[u]++;
					tri[v]++;
					tri[oidx[j]]++;
				}
		}
	}
	for (u = 0; u < m; u++)
		st->fill[u] = (int64_t)st->deg[u] * (st->deg[u] - 1) / 2 - tri[u];
	rc = 0;
done:
	free(rank);
	free(ord);
	free(ooff);
	free(oidx);
	free(tri);
	return rc;
}

/* ---- step 3: one elimination ---- */

/*
 * Make a and b adjacent, keeping every fill exact; the live neighbours of
 * a carry the stamp sa.  -1: out of memory.
 */
static int add_fill_edge(struct mf_state *st, int32_t a, int32_t b, int32_t sa)
{
	int32_t i, common = 0, len = adj_compact(st, b);

	/* Common neighbours lose the non-adjacent pair (a, b). */
	for (i = 0; i < len; i++) {
		int32_t c = st->adj[b].a[i];

		if (st->mark[c] == sa) {
			common++;
			st->fill[c]--;
			touch(st, c);
		}
	}
	st->fill[a] += st->deg[a] - common;
	st->fill[b] += st->deg[b] - common;
	st->deg[a]++;
	st->deg[b]++;
	touch(st, a);
	touch(st, b);
	st->mark[b] = sa;
	if (adj_push(&st->adj[a], b) || adj_push(&st->adj[b], a))
		return -1;
	return 0;
}

/*
 * Eliminate v: its live neighbours are left in st->adj[v] (compacted).
 * Adjacency is tested with stamps: a vertex's neighbours are stamped,
 * then candidates are looked up, O(sum of neighbour degrees).
 * Returns 0, TD_NOMEM, or TD_EXPIRED (v's neighbourhood then half made a
 * clique: the state is only fit to be released).
 *
 * Kept out of line: its common-neighbour scan (add_fill_edge) is the
 * hottest loop of min-fill, and inlined into step 3's loop GCC 12 runs
 * short of registers there and reloads st->mark on every neighbour (+4%
 * instructions on a 20,000-node layered graph).
 */
static __attribute__((noinline)) int eliminate(struct mf_state *st, int32_t v)
{
	int32_t *nb, d, i, j, sv, sa;

	st->gone[v] = 1;
	d = adj_compact(st, v);
	nb = st->adj[v].a;
	st->dstamp++;
	st->n_dirty = 0;
	sv = next_stamp(st);
	for (i = 0; i < d; i++)
		st->mark[nb[i]] = sv;
	for (i = 0; i < d; i++) {
		int32_t w = nb[i], common = 0, len = adj_compact(st, w);

		/* |N(w) ∩ N(v)|: the pairs (v, x) with x outside N(v) go. */
		for (j = 0; j < len; j++)
			common += st->mark[st->adj[w].a[j]] == sv;
		st->fill[w] -= st->deg[w] - 1 - common;
		st->deg[w]--;
		touch(st, w);
	}
	for (i = 0; i + 1 < d; i++) {
		int32_t a = nb[i], len = adj_compact(st, a);

		sa = next_stamp(st);
		for (j = 0; j < len; j++)
			st->mark[st->adj[a].a[j]] = sa;
		for (j = i + 1; j < d; j++)
			if (st->mark[nb[j]] != sa && add_fill_edge(st, a, nb[j], sa))
				return TD_NOMEM;
		if (td_expired(st))
			return TD_EXPIRED;
	}
	/*
	 * Re-sift every vertex whose key changed, one after another.  With
	 * several keys changed at once one such pass does not always restore
	 * the heap order (on lstm64 1,465 eliminations leave it out of
	 * order), so the vertex popped next is then not always a least one.
	 * Kept as it is: decompositions, and the plans built on them, stay
	 * as they were; a fix (sift at each key change) would change them.
	 */
	for (i = 0; i < st->n_dirty; i++) {
		int32_t w = st->dirty[i];

		if (st->hpos[w] >= 0)
			mf_heap_update(st->heap, st->hn, st->hpos[w], st);
	}
	return 0;
}

/* ---- steps 4 and 5: the tree and Lemma 1 ---- */

static int32_t uf_find(int32_t *up, int32_t x)
{
	while (up[x] != x) {
		up[x] = up[up[x]];
		x = up[x];
	}
	return x;
}

/* Is bag a a subset of bag b (local ids, CSR boff/bidx)? */
static int bag_subset(struct mf_state *st, const int64_t *boff, const int32_t *bidx,
		      int32_t a, int32_t b)
{
	int64_t k;
	int32_t sb;

	if (boff[a + 1] - boff[a] > boff[b + 1] - boff[b])
		return 0;
	sb = next_stamp(st);
	st->work += boff[b + 1] - boff[b] + boff[a + 1] - boff[a];
	for (k = boff[b]; k < boff[b + 1]; k++)
		st->mark[bidx[k]] = sb;
	for (k = boff[a]; k < boff[a + 1]; k++)
		if (st->mark[bidx[k]] != sb)
			return 0;
	return 1;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

void remat_treedec_release(struct remat_treedec *td)
{
	if (!td)
		return;
	free(td->bag_off);
	free(td->bag_idx);
	free(td->parent);
	free(td->order);
	memset(td, 0, sizeof(*td));
	td->width = -1;
	td->root = -1;
}

/* ---- remat_treedec_build, step by step ---- */

/* What the steps hand on to one another (local ids throughout). */
struct td_build {
	struct mf_state st;
	int32_t *loc;            /* [g->n] local id of each node, -1 when masked out */
	int32_t *verts;          /* [m] node of each local id */
	int32_t *epos;           /* [m] elimination position of each vertex */
	int64_t *boff;           /* [m + 1] bags by elimination position (CSR) */
	int32_t *bidx;
	int64_t bcap, btot;
	int32_t rest_at;         /* position of the bag of all the rest, or INT32_MAX */
	int32_t *bparent;        /* [m] parent of each bag */
	int32_t *up, *content;   /* union-find of merged bags; each class's bag */
	int32_t *kept, n_kept;   /* bags still joined to their parent by an edge */
	int32_t *newid, nb_out;  /* number of each class (at its root), classes */
	int32_t n_elim;          /* vertices eliminated so far (step 3) */
};

static void td_build_release(struct td_build *b)
{
	struct mf_state *st = &b->st;
	int32_t i;

	if (st->adj)
		for (i = 0; i < st->m; i++)
			free(st->adj[i].a);
	free(st->adj);
	free(st->deg);
	free(st->fill);
	free(st->gone);
	free(st->heap);
	free(st->hpos);
	free(st->mark);
	free(st->dirty);
	free(st->dmark);
	free(b->loc);
	free(b->verts);
	free(b->epos);
	free(b->boff);
	free(b->bidx);
	free(b->bparent);
	free(b->up);
	free(b->content);
	free(b->kept);
	free(b->newid);
}

/*
 * Step 1: local ids, td's per-vertex arrays, and the simple undirected
 * graph.  With no vertex, td is complete (no bags).  -1: out of memory.
 */
static int local_graph(struct td_build *b, const struct remat_graph *g,
		       const uint8_t *mask, struct remat_treedec *td)
{
	struct mf_state *st = &b->st;
	int32_t m = 0, v, k;

	b->loc = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	b->verts = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!b->loc || !b->verts)
		return -1;
	for (v = 0; v < g->n; v++) {
		b->loc[v] = -1;
		if (!mask || mask[v]) {
			b->loc[v] = m;
			b->verts[m++] = v;
		}
	}
	td->n_vertices = m;
	td->order = malloc(sizeof(int32_t) * ((size_t)m + 1));
	td->bag_off = malloc(sizeof(int32_t) * ((size_t)m + 2));
	td->parent = malloc(sizeof(int32_t) * ((size_t)m + 1));
	if (!td->order || !td->bag_off || !td->parent)
		return -1;
	if (m == 0) {
		td->bag_off[0] = 0;
		td->bag_idx = malloc(sizeof(int32_t));
		return td->bag_idx ? 0 : -1;
	}
	st->m = m;
	st->adj = calloc((size_t)m, sizeof(struct adj_list));
	st->deg = calloc((size_t)m, sizeof(int32_t));
	st->fill = calloc((size_t)m, sizeof(int64_t));
	st->gone = calloc((size_t)m, 1);
	st->heap = malloc(sizeof(int32_t) * (size_t)m);
	st->hpos = malloc(sizeof(int32_t) * (size_t)m);
	st->mark = calloc((size_t)m, sizeof(int32_t));
	st->dirty = malloc(sizeof(int32_t) * (size_t)m);
	st->dmark = calloc((size_t)m, sizeof(int32_t));
	if (!st->adj || !st->deg || !st->fill || !st->gone || !st->heap || !st->hpos ||
	    !st->mark || !st->dirty || !st->dmark)
		return -1;
	/* A DAG's distinct inputs give each undirected edge exactly once. */
	for (v = 0; v < g->n; v++) {
		if (b->loc[v] < 0)
			continue;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = g->in_idx[k], x = b->loc[v], y;

			if (b->loc[u] < 0 || u == v)
				continue;
			y = b->loc[u];
			if (adj_push(&st->adj[x], y) || adj_push(&st->adj[y], x))
				return -1;
			st->deg[x]++;
			st->deg[y]++;
		}
	}
	return 0;
}

/* Step 2's end: every vertex in the heap, keyed by its initial fill. */
static void heap_all(struct mf_state *st)
{
	int32_t i;

	for (i = 0; i < st->m; i++) {
		st->heap[i] = i;
		st->hpos[i] = i;
	}
	st->hn = st->m;
	mf_heap_heapify(st->heap, st->hn, st);
}

/* Room for need more bag entries.  -1: out of memory. */
static int bags_reserve(struct td_build *b, int64_t need)
{
	int32_t *nbidx;

	if (b->btot + need <= b->bcap)
		return 0;
	while (b->btot + need > b->bcap)
		b->bcap *= 2;
	nbidx = realloc(b->bidx, sizeof(int32_t) * (size_t)b->bcap);
	if (!nbidx)
		return -1;
	b->bidx = nbidx;
	return 0;
}

/*
 * v, just popped at position i, and every vertex left have degree above
 * the cap: eliminating them one by one costs the square of the degree
 * each (seconds on dense graphs of a few thousand nodes).  Treat the rest
 * as a clique instead: one bag holds them all (v's), each later one a bag
 * of itself, which step 5 merges into v's.  Still a tree decomposition,
 * of width (vertices left - 1).  -1: out of memory.
 */
static int bag_of_the_rest(struct td_build *b, struct remat_treedec *td, int32_t i,
			   int32_t v)
{
	struct mf_state *st = &b->st;
	int32_t rest = st->m - i, r;

	if (bags_reserve(b, 2 * (int64_t)rest))
		return -1;
	/* v first, then the others by local id (deterministic). */
	memcpy(st->dirty, st->heap, sizeof(int32_t) * (size_t)(rest - 1));
	qsort(st->dirty, (size_t)(rest - 1), sizeof(int32_t), cmp_i32);
	memcpy(st->heap + 1, st->dirty, sizeof(int32_t) * (size_t)(rest - 1));
	st->heap[0] = v;
	b->boff[i] = b->btot;
	for (r = 0; r < rest; r++)
		b->bidx[b->btot++] = st->heap[r];
	b->rest_at = i;
	for (r = 0; r < rest; r++) {
		int32_t u = st->heap[r];

		if (r > 0) {
			b->boff[i + r] = b->btot;
			b->bidx[b->btot++] = u;
		}
		b->epos[u] = i + r;
		td->order[i + r] = b->verts[u];
	}
	return 0;
}

/* Step 3: eliminate, recording the bags (local ids).  0, TD_NOMEM or
 * TD_EXPIRED. */
static int eliminate_all(struct td_build *b, struct remat_treedec *td)
{
	struct mf_state *st = &b->st;
	int32_t m = st->m, i;

	b->epos = malloc(sizeof(int32_t) * (size_t)m);
	b->boff = malloc(sizeof(int64_t) * ((size_t)m + 1));
	b->bcap = (int64_t)m * 4 + 16;
	b->bidx = malloc(sizeof(int32_t) * (size_t)b->bcap);
	if (!b->epos || !b->boff || !b->bidx)
		return -1;
	for (i = 0; i < m; i++) {
		int32_t v, d;
		int rc;

		st->work++;
		if (td_expired(st))
			return TD_EXPIRED;
		b->n_elim = i;
		v = heap_pop(st);
		if (st->deg[v] > REMAT_TREEDEC_MAX_DEGREE) {
			if (bag_of_the_rest(b, td, i, v))
				return -1;
			break;
		}
		b->epos[v] = i;
		td->order[i] = b->verts[v];
		rc = eliminate(st, v);
		if (rc)
			return rc;
		d = st->adj[v].len;
		if (bags_reserve(b, (int64_t)d + 1))
			return -1;
		b->boff[i] = b->btot;
		b->bidx[b->btot++] = v;
		if (d > 0)
			memcpy(b->bidx + b->btot, st->adj[v].a, sizeof(int32_t) * (size_t)d);
		b->btot += d;
		/* v's list is not needed again: it is dead. */
	}
	b->boff[m] = b->btot;
	return 0;
}

/* Step 4: parents, by bag index = elimination position.  -1: out of memory. */
static int tree_parents(struct td_build *b)
{
	int32_t m = b->st.m, i;

	b->bparent = malloc(sizeof(int32_t) * (size_t)m);
	if (!b->bparent)
		return -1;
	for (i = 0; i < m; i++) {
		int32_t best = -1;
		int64_t q;

		for (q = b->boff[i] + 1; q < b->boff[i + 1]; q++)
			if (best < 0 || b->epos[b->bidx[q]] < best)
				best = b->epos[b->bidx[q]];
		/*
		 * The bag of all the rest stands for every bag after it, and
		 * takes the ends of the other components too (the singletons
		 * after it must have nothing hanging under them).
		 */
		if (b->rest_at < m && i < b->rest_at && (best < 0 || best > b->rest_at))
			best = b->rest_at;
		b->bparent[i] = best;
	}
	for (i = 0; i < m - 1; i++)
		if (b->bparent[i] < 0)
			b->bparent[i] = m - 1;
	b->bparent[m - 1] = -1;
	return 0;
}

/*
 * Step 5: Lemma 1, then number the merged bags by their first member's
 * elimination.  0, TD_NOMEM or TD_EXPIRED.
 */
static int merge_bags(struct td_build *b)
{
	int32_t m = b->st.m, i;

	b->up = malloc(sizeof(int32_t) * (size_t)m);
	b->content = malloc(sizeof(int32_t) * (size_t)m);
	b->kept = malloc(sizeof(int32_t) * (size_t)m);
	if (!b->up || !b->content || !b->kept)
		return -1;
	for (i = 0; i < m; i++) {
		b->up[i] = i;
		b->content[i] = i;
	}
	for (i = 0; i < m - 1; i++) {
		int32_t rs = uf_find(b->up, i), rp = uf_find(b->up, b->bparent[i]);
		int32_t x = b->content[rs], y = b->content[rp];

		b->st.work++;
		if (td_expired(&b->st))
			return TD_EXPIRED;
		if (bag_subset(&b->st, b->boff, b->bidx, x, y)) {
			b->up[rs] = rp;
			b->content[rp] = y;
		} else if (bag_subset(&b->st, b->boff, b->bidx, y, x)) {
			b->up[rs] = rp;
			b->content[rp] = x;
		} else {
			b->kept[b->n_kept++] = i;
		}
	}
	b->newid = malloc(sizeof(int32_t) * (size_t)m);
	if (!b->newid)
		return -1;
	for (i = 0; i < m; i++)
		b->newid[i] = -1;
	for (i = 0; i < m; i++) {
		int32_t r = uf_find(b->up, i);

		if (b->newid[r] < 0)
			b->newid[r] = b->nb_out++;
	}
	return 0;
}

/*
 * Step 5's bags into td: node ids, ascending within each bag, and the
 * width.  -1: out of memory (or more entries than int32 offsets hold).
 */
static int write_bags(struct td_build *b, struct remat_treedec *td)
{
	int32_t nb_out = b->nb_out, i, k, *rep;
	int64_t tot = 0;
	int rc = -1;

	td->n_bags = nb_out;
	rep = malloc(sizeof(int32_t) * (size_t)nb_out);
	if (!rep)
		goto done;
	for (i = 0; i < b->st.m; i++)
		if (uf_find(b->up, i) == i)
			rep[b->newid[i]] = b->content[i];
	for (k = 0; k < nb_out; k++)
		tot += b->boff[rep[k] + 1] - b->boff[rep[k]];
	if (tot >= INT32_MAX)
		goto done;
	td->bag_idx = malloc(sizeof(int32_t) * ((size_t)tot + 1));
	if (!td->bag_idx)
		goto done;
	tot = 0;
	for (k = 0; k < nb_out; k++) {
		int64_t q, len = b->boff[rep[k] + 1] - b->boff[rep[k]];

		td->bag_off[k] = (int32_t)tot;
		for (q = b->boff[rep[k]]; q < b->boff[rep[k] + 1]; q++)
			td->bag_idx[tot++] = b->verts[b->bidx[q]];
		qsort(td->bag_idx + td->bag_off[k], (size_t)len, sizeof(int32_t), cmp_i32);
		if (len - 1 > td->width)
			td->width = (int32_t)(len - 1);
	}
	td->bag_off[nb_out] = (int32_t)tot;
	rc = 0;
done:
	free(rep);
	return rc;
}

/*
 * Step 5's tree into td: the kept edges between merged bags, rooted at
 * the last bag's class.  REMAT_ENOMEM (err not set) or REMAT_EINTERNAL.
 */
static int root_tree(struct td_build *b, struct remat_treedec *td,
		     struct remat_error *err)
{
	int32_t nb_out = b->nb_out, k, head = 0, tail = 0, root;
	int32_t *toff, *tadj, *cur, *queue;
	int rc = REMAT_ENOMEM;

	toff = calloc((size_t)nb_out + 2, sizeof(int32_t));
	tadj = malloc(sizeof(int32_t) * ((size_t)b->n_kept * 2 + 1));
	cur = malloc(sizeof(int32_t) * ((size_t)nb_out + 1));
	queue = malloc(sizeof(int32_t) * ((size_t)nb_out + 1));
	if (!toff || !tadj || !cur || !queue)
		goto done;
	for (k = 0; k < b->n_kept; k++) {
		toff[b->newid[uf_find(b->up, b->kept[k])] + 1]++;
		toff[b->newid[uf_find(b->up, b->bparent[b->kept[k]])] + 1]++;
	}
	for (k = 0; k < nb_out; k++)
		toff[k + 1] += toff[k];
	memcpy(cur, toff, sizeof(int32_t) * (size_t)nb_out);
	for (k = 0; k < b->n_kept; k++) {
		int32_t x = b->newid[uf_find(b->up, b->kept[k])];
		int32_t y = b->newid[uf_find(b->up, b->bparent[b->kept[k]])];

		tadj[cur[x]++] = y;
		tadj[cur[y]++] = x;
	}
	root = b->newid[uf_find(b->up, b->st.m - 1)];
	for (k = 0; k < nb_out; k++)
		td->parent[k] = -2;
	td->parent[root] = -1;
	td->root = root;
	queue[tail++] = root;
	while (head < tail) {
		int32_t x = queue[head++];

		for (k = toff[x]; k < toff[x + 1]; k++)
			if (td->parent[tadj[k]] == -2) {
				td->parent[tadj[k]] = x;
				queue[tail++] = tadj[k];
			}
	}
	if (tail != nb_out) {
		rc = REMAT_FAIL(err, REMAT_EINTERNAL,
				"tree decomposition: merged bags do not form a tree");
		goto done;
	}
	rc = REMAT_OK;
done:
	free(toff);
	free(tadj);
	free(cur);
	free(queue);
	return rc;
}

int remat_treedec_build(const struct remat_graph *g, const uint8_t *mask,
			struct remat_treedec *td, struct remat_error *err)
{
	return remat_treedec_build_limited(g, mask, NULL, td, err);
}


int remat_treedec_build_limited(const struct remat_graph *g, const uint8_t *mask,
				const struct remat_treedec_limits *lim,
				struct remat_treedec *td, struct remat_error *err)
{
	struct td_build b;
	int rc = REMAT_ENOMEM, step, s;

	memset(&b, 0, sizeof(b));
	b.rest_at = INT32_MAX;
	if (lim) {
		b.st.deadline = lim->deadline;
		b.st.stop = lim->stop;
	}
	memset(td, 0, sizeof(*td));
	td->width = -1;
	td->root = -1;
	/* Out of time already: not even step 1's O(n + edges). */
	step = 1;
	s = td_expired(&b.st) ? TD_EXPIRED : 0;
	if (s)
		goto failed;
	/* Step 1. */
	if (local_graph(&b, g, mask, td))
		goto done;
	if (td->n_vertices == 0) {
		rc = REMAT_OK;
		goto done;
	}
	/* Step 2. */
	step = 2;
	s = initial_fill(&b.st);
	if (s)
		goto failed;
	heap_all(&b.st);
	/* Steps 3 to 5. */
	step = 3;
	s = eliminate_all(&b, td);
	if (s)
		goto failed;
	step = 4;
	s = tree_parents(&b);
	if (s)
		goto failed;
	step = 5;
	s = merge_bags(&b);
	if (s || (s = write_bags(&b, td)) != 0)
		goto failed;
	rc = root_tree(&b, td, err);
	goto done;
failed:
	if (s == TD_EXPIRED) {
		char where[80];

		if (step == 3)
			snprintf(where, sizeof(where), "while eliminating nodes (%d of %d done)",
				 (int)b.n_elim, (int)b.st.m);
		else
			snprintf(where, sizeof(where), "%s", step == 1 ? "before it started"
				 : step == 2 ? "while counting triangles" : "while merging bags");
		rc = REMAT_FAIL(err, REMAT_ECANCELED, "tree decomposition: %s %s",
				b.st.stop && *b.st.stop ? "stopped" : "time limit reached",
				where);
	}
done:
	if (rc == REMAT_ENOMEM)
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the tree decomposition");
	if (rc)
		remat_treedec_release(td);
	td_build_release(&b);
	return rc;
}
