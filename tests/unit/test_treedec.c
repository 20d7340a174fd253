/*
 * test_treedec.c - the min-fill tree decomposition (src/analysis/treedec.c).
 *
 * Expected widths are known facts: forests have treewidth 1, series-
 * parallel graphs with a cycle 2, the complete graph K_n n - 1, the 3 x 3
 * grid 3 (and min-fill, which only ever eliminates a vertex of degree <= 2
 * on graphs of treewidth <= 2, finds them).  On random graphs the three
 * properties of a tree decomposition are checked directly, the width is
 * recomputed by replaying the returned elimination order on an adjacency
 * matrix, and every step of that order is checked to be a minimum
 * (fill, degree, index) choice with fills counted from scratch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "remat/planner.h"
#include "remat/treedec.h"

/* Build remat-graph JSON from an edge list over nodes v0..v(n-1) (a -> b). */
static char *edges_json(int n, const int (*e)[2], int m)
{
	size_t cap = (size_t)(n + m) * 48 + 256, used = 0;
	char *buf = malloc(cap);
	int v, i, first;

	used += (size_t)snprintf(buf + used, cap - used,
				 "{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[");
	for (v = 0; v < n; v++) {
		used += (size_t)snprintf(buf + used, cap - used, "%s{\"id\":\"v%d\",\"mem\":1,"
					 "\"inputs\":[", v ? "," : "", v);
		first = 1;
		for (i = 0; i < m; i++)
			if (e[i][1] == v) {
				used += (size_t)snprintf(buf + used, cap - used, "%s\"v%d\"",
							 first ? "" : ",", e[i][0]);
				first = 0;
			}
		used += (size_t)snprintf(buf + used, cap - used, "]}");
	}
	snprintf(buf + used, cap - used, "]}");
	return buf;
}

/* Node index of "v<k>". */
static int32_t vid(const struct remat_graph *g, int k)
{
	char id[32];

	snprintf(id, sizeof(id), "v%d", k);
	return remat_graph_find(g, id);
}

static int in_bag(const struct remat_treedec *td, int32_t b, int32_t v)
{
	int32_t k;

	for (k = td->bag_off[b]; k < td->bag_off[b + 1]; k++)
		if (td->bag_idx[k] == v)
			return 1;
	return 0;
}

/*
 * The three properties, one tree, at most n bags, sorted bags, the width
 * as defined, and the order a permutation of the masked nodes.
 */
static void check_decomposition(const struct remat_graph *g, const uint8_t *mask,
				const struct remat_treedec *td)
{
	int32_t v, b, k, n = 0, roots = 0, maxbag = 0;
	int32_t *seen = calloc((size_t)g->n + 1, sizeof(int32_t));

	for (v = 0; v < g->n; v++)
		n += !mask || mask[v];
	assert_int_equal(td->n_vertices, n);
	if (n == 0) {
		assert_int_equal(td->n_bags, 0);
		free(seen);
		return;
	}
	assert_true(td->n_bags >= 1 && td->n_bags <= n);
	for (k = 0; k < n; k++) {
		v = td->order[k];
		assert_true(v >= 0 && v < g->n && (!mask || mask[v]));
		assert_int_equal(seen[v], 0);
		seen[v] = 1;
	}
	/* One tree: a single root, every parent chain reaches it. */
	for (b = 0; b < td->n_bags; b++) {
		int32_t x = b, steps = 0;

		if (td->parent[b] < 0) {
			roots++;
			assert_int_equal(b, td->root);
		}
		while (td->parent[x] >= 0 && steps <= td->n_bags) {
			x = td->parent[x];
			steps++;
		}
		assert_true(steps <= td->n_bags);
		assert_int_equal(x, td->root);
		for (k = td->bag_off[b] + 1; k < td->bag_off[b + 1]; k++)
			assert_true(td->bag_idx[k - 1] < td->bag_idx[k]);
		if (td->bag_off[b + 1] - td->bag_off[b] > maxbag)
			maxbag = td->bag_off[b + 1] - td->bag_off[b];
	}
	assert_int_equal(roots, 1);
	assert_int_equal(td->width, maxbag - 1);
	/* (i) and (iii): bags holding v number one more than tree edges inside them. */
	for (v = 0; v < g->n; v++) {
		int32_t nb = 0, ne = 0;

		if (mask && !mask[v])
			continue;
		for (b = 0; b < td->n_bags; b++)
			if (in_bag(td, b, v)) {
				nb++;
				if (td->parent[b] >= 0 && in_bag(td, td->parent[b], v))
					ne++;
			}
		assert_true(nb >= 1);
		assert_int_equal(ne, nb - 1);
	}
	/* (ii): every edge between masked nodes inside some bag. */
	for (v = 0; v < g->n; v++) {
		if (mask && !mask[v])
			continue;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = g->in_idx[k], found = 0;

			if (mask && !mask[u])
				continue;
			for (b = 0; b < td->n_bags && !found; b++)
				found = in_bag(td, b, u) && in_bag(td, b, v);
			assert_true(found);
		}
	}
	/* Unmasked nodes appear nowhere. */
	for (b = 0; b < td->n_bags; b++)
		for (k = td->bag_off[b]; k < td->bag_off[b + 1]; k++)
			assert_true(!mask || mask[td->bag_idx[k]]);
	free(seen);
}

/*
 * Replay td->order as the elimination game on an adjacency matrix: each
 * step must pick a vertex of least (fill, degree, index), fills counted
 * from scratch; returns the largest neighbourhood, i.e. the width.
 */
static int32_t replay_min_fill(const struct remat_graph *g, const uint8_t *mask,
			       const struct remat_treedec *td)
{
	int32_t n = g->n, i, j, a, b, k, width = -1;
	uint8_t *adj = calloc((size_t)n * (size_t)n + 1, 1), *gone = calloc((size_t)n + 1, 1);

	for (i = 0; i < n; i++) {
		if (mask && !mask[i])
			gone[i] = 1;
		for (k = g->in_off[i]; k < g->in_off[i + 1]; k++) {
			j = g->in_idx[k];
			adj[i * n + j] = adj[j * n + i] = 1;
		}
	}
	for (i = 0; i < td->n_vertices; i++) {
		int32_t v = td->order[i], best = -1;
		long bf = 0, bd = 0;

		for (a = 0; a < n; a++) {
			long f = 0, d = 0;

			if (gone[a])
				continue;
			for (b = 0; b < n; b++)
				d += !gone[b] && adj[a * n + b];
			for (b = 0; b < n; b++)
				for (j = b + 1; j < n; j++)
					f += !gone[b] && !gone[j] && adj[a * n + b] && adj[a * n + j] &&
					     !adj[b * n + j];
			if (best < 0 || f < bf || (f == bf && d < bd)) {
				best = a;
				bf = f;
				bd = d;
			}
		}
		/* Local ids follow node order, so ties go to the lower index. */
		assert_int_equal(v, best);
		if (bd > width)
			width = (int32_t)bd;
		for (b = 0; b < n; b++)
			for (j = 0; j < n; j++)
				if (b != j && !gone[b] && !gone[j] && adj[v * n + b] && adj[v * n + j])
					adj[b * n + j] = 1;
		gone[v] = 1;
	}
	free(adj);
	free(gone);
	return width;
}

static struct remat_graph *graph_of_edges(int n, const int (*e)[2], int m)
{
	char *json = edges_json(n, e, m);
	struct remat_graph *g = tu_graph(json);

	free(json);
	return g;
}

static int32_t width_of(struct remat_graph *g, int32_t *n_bags)
{
	struct remat_treedec td;
	int32_t w;

	assert_int_equal(remat_treedec_build(g, NULL, &td, NULL), REMAT_OK);
	check_decomposition(g, NULL, &td);
	assert_int_equal(replay_min_fill(g, NULL, &td), td.width);
	w = td.width;
	if (n_bags)
		*n_bags = td.n_bags;
	remat_treedec_release(&td);
	return w;
}

static void test_path_is_width_one(void **state)
{
	int e[9][2], i;
	int32_t nb;
	struct remat_graph *g;

	(void)state;
	for (i = 0; i < 9; i++) {
		e[i][0] = i;
		e[i][1] = i + 1;
	}
	g = graph_of_edges(10, (const int (*)[2])e, 9);
	assert_int_equal(width_of(g, &nb), 1);
	/* Lemma 1 leaves one bag per edge of a tree. */
	assert_int_equal(nb, 9);
	remat_graph_free(g);
}

static void test_single_node(void **state)
{
	struct remat_graph *g = tu_graph("{\"format\":\"remat-graph\",\"version\":1,"
					 "\"nodes\":[{\"id\":\"a\",\"mem\":1}]}");
	int32_t nb;

	(void)state;
	assert_int_equal(width_of(g, &nb), 0);
	assert_int_equal(nb, 1);
	remat_graph_free(g);
}

static void test_kumar_and_cycles(void **state)
{
	static const int c6[6][2] = { {0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {0, 5} };
	struct remat_graph *g = tu_graph(TU_KUMAR);

	(void)state;
	/* Fig. 1 has the cycle A-B-D-E: series-parallel, width 2. */
	assert_int_equal(width_of(g, NULL), 2);
	remat_graph_free(g);
	g = graph_of_edges(6, c6, 6);
	assert_int_equal(width_of(g, NULL), 2);
	remat_graph_free(g);
}

static void test_cliques(void **state)
{
	int e[15][2], n, m, a, b;
	int32_t nb;

	(void)state;
	for (n = 3; n <= 6; n++) {
		struct remat_graph *g;

		m = 0;
		for (a = 0; a < n; a++)
			for (b = a + 1; b < n; b++) {
				e[m][0] = a;
				e[m][1] = b;
				m++;
			}
		g = graph_of_edges(n, (const int (*)[2])e, m);
		assert_int_equal(width_of(g, &nb), n - 1);
		/* One bag holds everything: all others merge into it. */
		assert_int_equal(nb, 1);
		remat_graph_free(g);
	}
}

static void test_grid(void **state)
{
	int e[12][2], m = 0, r, c;
	struct remat_graph *g;

	(void)state;
	for (r = 0; r < 3; r++)
		for (c = 0; c < 3; c++) {
			if (c < 2) {
				e[m][0] = r * 3 + c;
				e[m++][1] = r * 3 + c + 1;
			}
			if (r < 2) {
				e[m][0] = r * 3 + c;
				e[m++][1] = (r + 1) * 3 + c;
			}
		}
	g = graph_of_edges(9, (const int (*)[2])e, m);
	assert_int_equal(width_of(g, NULL), 3);
	remat_graph_free(g);
}

static void test_disconnected_and_mask(void **state)
{
	static const int e[5][2] = { {0, 1}, {1, 2}, {0, 2}, {3, 4}, {5, 6} };
	struct remat_graph *g = graph_of_edges(8, e, 5);
	struct remat_treedec td;
	uint8_t mask[8];
	int i;

	(void)state;
	/* A triangle, two edges and an isolated node: still one tree. */
	assert_int_equal(width_of(g, NULL), 2);
	/* Without v2 the triangle is an edge: a forest, width 1. */
	for (i = 0; i < 8; i++)
		mask[i] = 1;
	mask[vid(g, 2)] = 0;
	assert_int_equal(remat_treedec_build(g, mask, &td, NULL), REMAT_OK);
	check_decomposition(g, mask, &td);
	assert_int_equal(td.width, 1);
	assert_int_equal(replay_min_fill(g, mask, &td), 1);
	remat_treedec_release(&td);
	/* An empty mask gives no bags. */
	memset(mask, 0, sizeof(mask));
	assert_int_equal(remat_treedec_build(g, mask, &td, NULL), REMAT_OK);
	assert_int_equal(td.n_bags, 0);
	assert_int_equal(td.width, -1);
	remat_treedec_release(&td);
	remat_graph_free(g);
}

static void test_random_trees(void **state)
{
	uint64_t seed = 12345;
	int round;

	(void)state;
	for (round = 0; round < 40; round++) {
		int n = 2 + (int)(tu_rand(&seed) % 120), (*e)[2] = malloc(sizeof(*e) * (size_t)n);
		int i, m = 0;
		struct remat_graph *g;

		/* Each node hangs from a random earlier one, in either direction. */
		for (i = 1; i < n; i++) {
			int p = (int)(tu_rand(&seed) % (uint64_t)i);

			if (tu_rand(&seed) % 2) {
				e[m][0] = p;
				e[m++][1] = i;
			} else {
				e[m][0] = i;
				e[m++][1] = p;
			}
		}
		g = graph_of_edges(n, (const int (*)[2])e, m);
		assert_int_equal(width_of(g, NULL), 1);
		remat_graph_free(g);
		free(e);
	}
}

/* Two-terminal series-parallel composition from s to t into e. */
static void sp_build(uint64_t *seed, int depth, int s, int t, int (*e)[2], int *m, int *n)
{
	uint64_t r = tu_rand(seed) % 3;

	if (depth == 0 || r == 0) {
		e[*m][0] = s;
		e[(*m)++][1] = t;
	} else if (r == 1) {
		int mid = (*n)++;

		sp_build(seed, depth - 1, s, mid, e, m, n);
		sp_build(seed, depth - 1, mid, t, e, m, n);
	} else {
		sp_build(seed, depth - 1, s, t, e, m, n);
		sp_build(seed, depth - 1, s, t, e, m, n);
	}
}

static void test_random_series_parallel(void **state)
{
	uint64_t seed = 777;
	int round;

	(void)state;
	for (round = 0; round < 60; round++) {
		int (*e)[2] = malloc(sizeof(*e) * 4096), m = 0, n = 2, i, j, distinct = 0;
		struct remat_graph *g;

		sp_build(&seed, 9, 0, 1, e, &m, &n);
		g = graph_of_edges(n, (const int (*)[2])e, m);
		for (i = 0; i < m; i++) {
			for (j = 0; j < i; j++)
				if (e[j][0] == e[i][0] && e[j][1] == e[i][1])
					break;
			distinct += j == i;
		}
		/* Connected: a cycle exists exactly when edges >= nodes. */
		assert_int_equal(width_of(g, NULL), distinct >= n ? 2 : 1);
		remat_graph_free(g);
		free(e);
	}
}

static void test_random_graphs(void **state)
{
	uint64_t seed = 4242;
	int round;

	(void)state;
	for (round = 0; round < 60; round++) {
		int n = 2 + (int)(tu_rand(&seed) % 30);
		double p = (double)(tu_rand(&seed) % 40) / 100.0;
		char *json = tu_random_graph_json(&seed, n, p, (int)(tu_rand(&seed) % 2));
		struct remat_graph *g = tu_graph(json);
		struct remat_treedec td;
		uint8_t *mask = malloc((size_t)g->n);
		int32_t v;

		(void)width_of(g, NULL);
		/* A random mask too. */
		for (v = 0; v < g->n; v++)
			mask[v] = tu_rand(&seed) % 4 != 0;
		assert_int_equal(remat_treedec_build(g, mask, &td, NULL), REMAT_OK);
		check_decomposition(g, mask, &td);
		assert_int_equal(replay_min_fill(g, mask, &td), td.width);
		remat_treedec_release(&td);
		free(mask);
		free(json);
		remat_graph_free(g);
	}
}

/*
 * Past REMAT_TREEDEC_MAX_DEGREE the rest goes into one bag.  K_n with a
 * path hanging off v0: min-fill takes the path first (fill 0, degree <= 2),
 * then every clique vertex has degree n - 1 > the cap, so one bag holds
 * the clique: width n - 1, as the exact answer, and the path's bags
 * (pairs) hang off it, as do the bags of two more components (an edge,
 * a lone vertex).  Then dense random graphs (degrees far above the
 * cap), where only the three properties and the bag count can be checked:
 * the width is (vertices left when the cap was hit) - 1 <= n - 1.
 */
static void test_degree_cap(void **state)
{
	int n = REMAT_TREEDEC_MAX_DEGREE + 40, tail = 12, m = 0, a, b, round;
	int (*e)[2] = malloc(sizeof(*e) * (size_t)(n * n / 2 + tail + 1));
	struct remat_treedec td;
	struct remat_graph *g;
	uint64_t seed = 77;

	(void)state;
	for (a = 0; a < n; a++)
		for (b = a + 1; b < n; b++) {
			e[m][0] = a;
			e[m][1] = b;
			m++;
		}
	for (a = 0; a < tail; a++) {
		e[m][0] = a ? n + a - 1 : 0;
		e[m][1] = n + a;
		m++;
	}
	/* and two more components: an edge and a lone vertex */
	e[m][0] = n + tail;
	e[m][1] = n + tail + 1;
	m++;
	g = graph_of_edges(n + tail + 3, (const int (*)[2])e, m);
	assert_int_equal(remat_treedec_build(g, NULL, &td, NULL), REMAT_OK);
	check_decomposition(g, NULL, &td);
	assert_int_equal(td.width, n - 1);
	assert_int_equal(td.n_bags, 1 + tail + 2);
	remat_treedec_release(&td);
	remat_graph_free(g);
	free(e);
	for (round = 0; round < 3; round++) {
		char *json = tu_random_graph_json(&seed, 320, 0.9, round == 1);
		uint8_t *mask;
		int32_t v;

		g = tu_graph(json);
		mask = malloc((size_t)g->n);
		for (v = 0; v < g->n; v++)
			mask[v] = round < 2 || tu_rand(&seed) % 8 != 0;
		assert_int_equal(remat_treedec_build(g, mask, &td, NULL), REMAT_OK);
		check_decomposition(g, mask, &td);
		assert_true(td.width > REMAT_TREEDEC_MAX_DEGREE);
		remat_treedec_release(&td);
		free(mask);
		free(json);
		remat_graph_free(g);
	}
}

/*
 * Limits: none reached gives exactly the unlimited decomposition; a stop
 * flag already set, or a deadline already past, ends the build at its
 * first look, before any work (REMAT_ECANCELED, td empty, the message
 * saying which).
 */
static void test_limits(void **state)
{
	uint64_t seed = 99;
	int round;

	(void)state;
	for (round = 0; round < 10; round++) {
		char *json = tu_random_graph_json(&seed, 20 + round * 5, 0.3, round % 2);
		struct remat_graph *g = tu_graph(json);
		struct remat_treedec td, tl;
		volatile sig_atomic_t stop = 0;
		struct remat_treedec_limits lim = { 0, &stop };
		struct remat_error err;

		assert_int_equal(remat_treedec_build(g, NULL, &td, NULL), REMAT_OK);
		lim.deadline = remat_now() + 3600;
		assert_int_equal(remat_treedec_build_limited(g, NULL, &lim, &tl, NULL), REMAT_OK);
		assert_int_equal(tl.width, td.width);
		assert_int_equal(tl.n_bags, td.n_bags);
		assert_memory_equal(tl.order, td.order, sizeof(int32_t) * (size_t)td.n_vertices);
		assert_memory_equal(tl.bag_off, td.bag_off, sizeof(int32_t) * (size_t)(td.n_bags + 1));
		assert_memory_equal(tl.bag_idx, td.bag_idx,
				    sizeof(int32_t) * (size_t)td.bag_off[td.n_bags]);
		remat_treedec_release(&tl);

		stop = 1;
		assert_int_equal(remat_treedec_build_limited(g, NULL, &lim, &tl, &err),
				 REMAT_ECANCELED);
		assert_int_equal(err.code, REMAT_ECANCELED);
		assert_non_null(strstr(err.msg, "stopped"));
		assert_int_equal(tl.n_bags, 0);
		assert_null(tl.bag_off);
		assert_int_equal(tl.width, -1);

		stop = 0;
		lim.deadline = remat_now() - 1;
		assert_int_equal(remat_treedec_build_limited(g, NULL, &lim, &tl, &err),
				 REMAT_ECANCELED);
		assert_non_null(strstr(err.msg, "time limit reached before it started"));
		assert_int_equal(tl.n_bags, 0);
		remat_treedec_release(&tl);
		remat_treedec_release(&td);
		free(json);
		remat_graph_free(g);
	}
}

static void test_release_twice(void **state)
{
	struct remat_treedec td;

	(void)state;
	memset(&td, 0, sizeof(td));
	remat_treedec_release(&td);
	remat_treedec_release(&td);
	assert_int_equal(td.n_bags, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_is_width_one),
		cmocka_unit_test(test_single_node),
		cmocka_unit_test(test_kumar_and_cycles),
		cmocka_unit_test(test_cliques),
		cmocka_unit_test(test_grid),
		cmocka_unit_test(test_disconnected_and_mask),
		cmocka_unit_test(test_random_trees),
		cmocka_unit_test(test_random_series_parallel),
		cmocka_unit_test(test_random_graphs),
		cmocka_unit_test(test_degree_cap),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_release_twice),
	};

	return cmocka_run_group_tests_name("treedec", tests, NULL, NULL);
}
