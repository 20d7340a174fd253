/*
 * treedec.c - tree decomposition by greedy minimum fill-in elimination,
 * then Kumar et al. 2019 Lemma 1 bag merging; see remat/treedec.h.
 *
 * 1. Take the undirected simple graph of the masked nodes (an edge per
 *    distinct input relation, directions forgotten).
 * 2. Count each vertex's fill (non-adjacent pairs among its neighbours)
 *    once, from a degree-ordered triangle count: fill = C(d,2) - triangles.
 * 3. Repeatedly pop the vertex of least (fill, degree, index) from a
 *    binary heap, record the bag {v} + N(v), remove v and make N(v) a
 *    clique.  Fills change only near v and are kept exact by deltas:
 *    removing v costs each neighbour w the pairs (v, x) with x not in
 *    N(v); an added edge (a, b) removes the pair (a, b) from every common
 *    neighbour and gives a and b the pairs with their neighbours not
 *    adjacent to the other end.  Adjacency is tested by stamping one
 *    vertex's neighbours in an array; eliminated vertices are dropped
 *    lazily from adjacency lists.
 * 4. The parent of v's bag is the bag of the neighbour eliminated first
 *    after v (the standard chordal-completion tree); bags of the vertices
 *    that end a connected component hang under the last one, so the bags
 *    always form one tree.
 * 5. Lemma 1: in elimination order (children before parents) merge each
 *    bag with its parent when one contains the other, with union-find;
 *    merges never enable or disable one another, so one pass suffices and
 *    at most n bags remain.
 *
 * The result is a heuristic: the width bounds the treewidth from above
 * and is exact for forests and series-parallel graphs (there a vertex of
 * degree <= 2 always has the least fill and the smallest degree among
 * the least fill), not in general.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "remat/treedec.h"
#include "core/heap.h"

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
};

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

static int initial_fill(struct mf_state *st)
{
	int32_t m = st->m, u, i, j;
	int32_t *rank = NULL, *ord = NULL, *ooff = NULL, *oidx = NULL;
	int64_t *tri = NULL;
	int rc = -1;

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

		for (i = ooff[u]; i < ooff[u + 1]; i++)
			st->mark[oidx[i]] = su;
		for (i = ooff[u]; i < ooff[u + 1]; i++) {
			int32_t v = oidx[i];

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
 * Returns 0, or -1 when out of memory.
 */
static int eliminate(struct mf_state *st, int32_t v)
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
				return -1;
	}
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

int remat_treedec_build(const struct remat_graph *g, const uint8_t *mask,
			struct remat_treedec *td, struct remat_error *err)
{
	struct mf_state st;
	int32_t *verts = NULL, *loc = NULL, *epos = NULL, *bparent = NULL;
	int32_t *up = NULL, *content = NULL, *newid = NULL, *kept = NULL;
	int32_t *toff = NULL, *tadj = NULL, *queue = NULL;
	int64_t *boff = NULL;
	int32_t *bidx = NULL;
	int64_t bcap = 0, btot = 0;
	int32_t m = 0, v, i, k, n_kept = 0, nb_out = 0, rest_at = INT32_MAX;
	int rc = REMAT_ENOMEM;

	memset(&st, 0, sizeof(st));
	memset(td, 0, sizeof(*td));
	td->width = -1;
	td->root = -1;

	/* Step 1: local ids and the simple undirected graph. */
	loc = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	verts = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!loc || !verts)
		goto fail;
	for (v = 0; v < g->n; v++) {
		loc[v] = -1;
		if (!mask || mask[v]) {
			loc[v] = m;
			verts[m++] = v;
		}
	}
	td->n_vertices = m;
	td->order = malloc(sizeof(int32_t) * ((size_t)m + 1));
	td->bag_off = malloc(sizeof(int32_t) * ((size_t)m + 2));
	td->parent = malloc(sizeof(int32_t) * ((size_t)m + 1));
	if (!td->order || !td->bag_off || !td->parent)
		goto fail;
	if (m == 0) {
		td->bag_off[0] = 0;
		td->bag_idx = malloc(sizeof(int32_t));
		if (!td->bag_idx)
			goto fail;
		free(loc);
		free(verts);
		return REMAT_OK;
	}
	st.m = m;
	st.adj = calloc((size_t)m, sizeof(struct adj_list));
	st.deg = calloc((size_t)m, sizeof(int32_t));
	st.fill = calloc((size_t)m, sizeof(int64_t));
	st.gone = calloc((size_t)m, 1);
	st.heap = malloc(sizeof(int32_t) * (size_t)m);
	st.hpos = malloc(sizeof(int32_t) * (size_t)m);
	st.mark = calloc((size_t)m, sizeof(int32_t));
	st.dirty = malloc(sizeof(int32_t) * (size_t)m);
	st.dmark = calloc((size_t)m, sizeof(int32_t));
	if (!st.adj || !st.deg || !st.fill || !st.gone || !st.heap || !st.hpos ||
	    !st.mark || !st.dirty || !st.dmark)
		goto fail;
	/* A DAG's distinct inputs give each undirected edge exactly once. */
	for (v = 0; v < g->n; v++) {
		if (loc[v] < 0)
			continue;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = g->in_idx[k], a = loc[v], b;

			if (loc[u] < 0 || u == v)
				continue;
			b = loc[u];
			if (adj_push(&st.adj[a], b) || adj_push(&st.adj[b], a))
				goto fail;
			st.deg[a]++;
			st.deg[b]++;
		}
	}
	/* Step 2. */
	if (initial_fill(&st))
		goto fail;
	for (i = 0; i < m; i++) {
		st.heap[i] = i;
		st.hpos[i] = i;
	}
	st.hn = m;
	mf_heap_heapify(st.heap, st.hn, &st);

	/* Step 3: eliminate, recording the bags (local ids). */
	epos = malloc(sizeof(int32_t) * (size_t)m);
	boff = malloc(sizeof(int64_t) * ((size_t)m + 1));
	bcap = (int64_t)m * 4 + 16;
	bidx = malloc(sizeof(int32_t) * (size_t)bcap);
	if (!epos || !boff || !bidx)
		goto fail;
	for (i = 0; i < m; i++) {
		int32_t d;

		v = heap_pop(&st);
		if (st.deg[v] > REMAT_TREEDEC_MAX_DEGREE) {
			/*
			 * Every vertex left has degree above the cap: eliminating
			 * them one by one costs the square of the degree each
			 * (seconds on dense graphs of a few thousand nodes).
			 * Treat the rest as a clique instead: one bag holds them
			 * all (v's, below), each later one a bag of itself, which
			 * step 5 merges into v's.  Still a tree decomposition,
			 * of width (vertices left - 1).
			 */
			int32_t rest = m - i, r;

			if (btot + 2 * (int64_t)rest > bcap) {
				int32_t *nbidx;

				while (btot + 2 * (int64_t)rest > bcap)
					bcap *= 2;
				nbidx = realloc(bidx, sizeof(int32_t) * (size_t)bcap);
				if (!nbidx)
					goto fail;
				bidx = nbidx;
			}
			/* v first, then the others by local id (deterministic). */
			memcpy(st.dirty, st.heap, sizeof(int32_t) * (size_t)(rest - 1));
			qsort(st.dirty, (size_t)(rest - 1), sizeof(int32_t), cmp_i32);
			memcpy(st.heap + 1, st.dirty, sizeof(int32_t) * (size_t)(rest - 1));
			st.heap[0] = v;
			boff[i] = btot;
			for (r = 0; r < rest; r++)
				bidx[btot++] = st.heap[r];
			rest_at = i;
			for (r = 0; r < rest; r++) {
				int32_t u = st.heap[r];

				if (r > 0) {
					boff[i + r] = btot;
					bidx[btot++] = u;
				}
				epos[u] = i + r;
				td->order[i + r] = verts[u];
			}
			break;
		}
		epos[v] = i;
		td->order[i] = verts[v];
		if (eliminate(&st, v))
			goto fail;
		d = st.adj[v].len;
		if (btot + d + 1 > bcap) {
			int32_t *nbidx;

			while (btot + d + 1 > bcap)
				bcap *= 2;
			nbidx = realloc(bidx, sizeof(int32_t) * (size_t)bcap);
			if (!nbidx)
				goto fail;
			bidx = nbidx;
		}
		boff[i] = btot;
		bidx[btot++] = v;
		if (d > 0)
			memcpy(bidx + btot, st.adj[v].a, sizeof(int32_t) * (size_t)d);
		btot += d;
		/* v's list is not needed again: it is dead. */
	}
	boff[m] = btot;

	/* Step 4: parents, by bag index = elimination position. */
	bparent = malloc(sizeof(int32_t) * (size_t)m);
	if (!bparent)
		goto fail;
	for (i = 0; i < m; i++) {
		int32_t best = -1;
		int64_t q;

		for (q = boff[i] + 1; q < boff[i + 1]; q++)
			if (best < 0 || epos[bidx[q]] < best)
				best = epos[bidx[q]];
		/*
		 * The bag of all the rest stands for every bag after it, and
		 * takes the ends of the other components too (the singletons
		 * after it must have nothing hanging under them).
		 */
		if (rest_at < m && i < rest_at && (best < 0 || best > rest_at))
			best = rest_at;
		bparent[i] = best;
	}
	for (i = 0; i < m - 1; i++)
		if (bparent[i] < 0)
			bparent[i] = m - 1;
	bparent[m - 1] = -1;

	/* Step 5: Lemma 1. */
	up = malloc(sizeof(int32_t) * (size_t)m);
	content = malloc(sizeof(int32_t) * (size_t)m);
	kept = malloc(sizeof(int32_t) * (size_t)m);
	if (!up || !content || !kept)
		goto fail;
	for (i = 0; i < m; i++) {
		up[i] = i;
		content[i] = i;
	}
	for (i = 0; i < m - 1; i++) {
		int32_t rs = uf_find(up, i), rp = uf_find(up, bparent[i]);
		int32_t a = content[rs], b = content[rp];

		if (bag_subset(&st, boff, bidx, a, b)) {
			up[rs] = rp;
			content[rp] = b;
		} else if (bag_subset(&st, boff, bidx, b, a)) {
			up[rs] = rp;
			content[rp] = a;
		} else {
			kept[n_kept++] = i;
		}
	}
	/* Number the merged bags by their first member's elimination. */
	newid = malloc(sizeof(int32_t) * (size_t)m);
	if (!newid)
		goto fail;
	for (i = 0; i < m; i++)
		newid[i] = -1;
	for (i = 0; i < m; i++) {
		int32_t r = uf_find(up, i);

		if (newid[r] < 0)
			newid[r] = nb_out++;
	}
	td->n_bags = nb_out;
	{
		int64_t tot = 0;
		int32_t *rep = malloc(sizeof(int32_t) * (size_t)nb_out);

		if (!rep)
			goto fail;
		for (i = 0; i < m; i++)
			if (uf_find(up, i) == i)
				rep[newid[i]] = content[i];
		for (k = 0; k < nb_out; k++)
			tot += boff[rep[k] + 1] - boff[rep[k]];
		if (tot >= INT32_MAX) {
			free(rep);
			goto fail;
		}
		td->bag_idx = malloc(sizeof(int32_t) * ((size_t)tot + 1));
		if (!td->bag_idx) {
			free(rep);
			goto fail;
		}
		tot = 0;
		for (k = 0; k < nb_out; k++) {
			int64_t q, len = boff[rep[k] + 1] - boff[rep[k]];

			td->bag_off[k] = (int32_t)tot;
			for (q = boff[rep[k]]; q < boff[rep[k] + 1]; q++)
				td->bag_idx[tot++] = verts[bidx[q]];
			qsort(td->bag_idx + td->bag_off[k], (size_t)len, sizeof(int32_t), cmp_i32);
			if (len - 1 > td->width)
				td->width = (int32_t)(len - 1);
		}
		td->bag_off[nb_out] = (int32_t)tot;
		free(rep);
	}
	/* Root the contracted tree at the last bag's class. */
	toff = calloc((size_t)nb_out + 2, sizeof(int32_t));
	tadj = malloc(sizeof(int32_t) * ((size_t)n_kept * 2 + 1));
	queue = malloc(sizeof(int32_t) * ((size_t)nb_out + 1));
	if (!toff || !tadj || !queue)
		goto fail;
	for (k = 0; k < n_kept; k++) {
		toff[newid[uf_find(up, kept[k])] + 1]++;
		toff[newid[uf_find(up, bparent[kept[k]])] + 1]++;
	}
	for (k = 0; k < nb_out; k++)
		toff[k + 1] += toff[k];
	{
		int32_t *cur = malloc(sizeof(int32_t) * ((size_t)nb_out + 1));

		if (!cur)
			goto fail;
		memcpy(cur, toff, sizeof(int32_t) * (size_t)nb_out);
		for (k = 0; k < n_kept; k++) {
			int32_t a = newid[uf_find(up, kept[k])];
			int32_t b = newid[uf_find(up, bparent[kept[k]])];

			tadj[cur[a]++] = b;
			tadj[cur[b]++] = a;
		}
		free(cur);
	}
	{
		int32_t head = 0, tail = 0, root = newid[uf_find(up, m - 1)];

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
			goto fail_set;
		}
	}
	rc = REMAT_OK;
	goto done;
fail:
	rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the tree decomposition");
fail_set:
	remat_treedec_release(td);
done:
	if (st.adj)
		for (i = 0; i < m; i++)
			free(st.adj[i].a);
	free(st.adj);
	free(st.deg);
	free(st.fill);
	free(st.gone);
	free(st.heap);
	free(st.hpos);
	free(st.mark);
	free(st.dirty);
	free(st.dmark);
	free(verts);
	free(loc);
	free(epos);
	free(bparent);
	free(up);
	free(content);
	free(newid);
	free(kept);
	free(toff);
	free(tadj);
	free(queue);
	free(boff);
	free(bidx);
	return rc;
}
