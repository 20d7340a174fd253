/*
 * bench_topo.c - the loader's topological sort against igraph's
 * (issue 15: use igraph where it serves, if not slower; keep the faster
 * and say why).  On a graph file, best of REPEATS:
 *
 *   kahn     the stable Kahn sort the builder runs (a min-heap of ready
 *            nodes, the earliest in the file first: the order FORMATS.md
 *            defines the no-remat peak by), on the graph's CSR arrays;
 *   igraph   building an igraph_t from the same edges plus
 *            igraph_topological_sorting() (igraph has no graph without the
 *            build), and the sort alone;
 *
 * and how many positions igraph's order differs from the defined one.
 *
 *   bench_topo GRAPH.json [REPEATS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <igraph.h>

#include "remat/remat.h"
#include "core/heap.h"
#include "core/igraph_glue.h"

static int earlier(const void *ctx, int32_t a, int32_t b)
{
	(void)ctx;
	return a < b;
}

REMAT_HEAP_DEFINE(ready, int32_t, const void, earlier, REMAT_HEAP_UNTRACKED)

static void kahn(const struct remat_graph *g, int32_t *indeg, int32_t *heap, int32_t *out)
{
	int64_t hlen = 0;
	int32_t v, k, placed = 0;

	for (v = 0; v < g->n; v++) {
		indeg[v] = g->in_off[v + 1] - g->in_off[v];
		if (indeg[v] == 0)
			ready_push(heap, &hlen, v, NULL);
	}
	while (hlen > 0) {
		v = ready_pop(heap, &hlen, NULL);
		out[placed++] = v;
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			if (--indeg[g->use_idx[k]] == 0)
				ready_push(heap, &hlen, g->use_idx[k], NULL);
	}
}

int main(int argc, char **argv)
{
	struct remat_graph *g;
	struct remat_error err;
	int repeats = argc > 2 ? atoi(argv[2]) : 5, r;
	double best_k = 1e30, best_ib = 1e30, best_is = 1e30;
	int32_t *indeg, *heap, *out;
	igraph_vector_int_t res;
	int64_t diff = 0, i;

	if (argc < 2 || remat_graph_load_file(argv[1], &g, &err)) {
		fprintf(stderr, "usage: bench_topo GRAPH.json [REPEATS]%s%s\n",
			argc < 2 ? "" : ": ", argc < 2 ? "" : err.msg);
		return 1;
	}
	remat_i_igraph_setup();
	indeg = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	heap = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	out = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	igraph_vector_int_init(&res, 0);
	for (r = 0; r < repeats; r++) {
		igraph_vector_int_t edges;
		igraph_t ig;
		double t0 = remat_now(), t1, t2, t3;
		int32_t v, k;

		kahn(g, indeg, heap, out);
		t1 = remat_now();
		igraph_vector_int_init(&edges, 2 * (igraph_integer_t)g->in_off[g->n]);
		for (v = 0, i = 0; v < g->n; v++)
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
				VECTOR(edges)[i++] = g->in_idx[k];
				VECTOR(edges)[i++] = v;
			}
		igraph_create(&ig, &edges, g->n, IGRAPH_DIRECTED);
		t2 = remat_now();
		igraph_topological_sorting(&ig, &res, IGRAPH_OUT);
		t3 = remat_now();
		igraph_destroy(&ig);
		igraph_vector_int_destroy(&edges);
		if (t1 - t0 < best_k)
			best_k = t1 - t0;
		if (t3 - t1 < best_ib)
			best_ib = t3 - t1;
		if (t3 - t2 < best_is)
			best_is = t3 - t2;
	}
	for (i = 0; i < g->n; i++)
		diff += VECTOR(res)[i] != out[i];
	printf("%s: %d nodes, %lld edges; best of %d\n", argv[1], g->n,
	       (long long)g->in_off[g->n], repeats);
	printf("  kahn (stable, file order)   %.3f ms\n", 1e3 * best_k);
	printf("  igraph build + sort         %.3f ms  (%.2fx)\n", 1e3 * best_ib, best_ib / best_k);
	printf("  igraph sort alone           %.3f ms  (%.2fx)\n", 1e3 * best_is, best_is / best_k);
	printf("  positions where igraph's order differs from the defined one: %lld\n",
	       (long long)diff);
	igraph_vector_int_destroy(&res);
	free(indeg);
	free(heap);
	free(out);
	remat_graph_free(g);
	return 0;
}
