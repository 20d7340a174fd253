/*
 * gcompare.h - node-for-node comparison of two graphs, for the importer,
 * generator and writer tests: same nodes in the same file order with the
 * same id, kind, mem, workspace, cost, recompute, grad_of and inputs (in
 * order), and the same outputs.  Names are not compared.
 */
#ifndef REMAT_GCOMPARE_H
#define REMAT_GCOMPARE_H

#include <string.h>

#include "testutil.h"

static void gc_assert_same(const struct remat_graph *a, const struct remat_graph *b,
			   const char *what)
{
	int32_t v, k;

	if (a->n != b->n)
		fail_msg("%s: %d nodes, expected %d", what, a->n, b->n);
	for (v = 0; v < a->n; v++) {
		const char *id = b->id[v];

		if (strcmp(a->id[v], id) != 0)
			fail_msg("%s: node %d is '%s', expected '%s'", what, v, a->id[v], id);
		if (a->kind[v] != b->kind[v] || a->mem[v] != b->mem[v] ||
		    a->workspace[v] != b->workspace[v] || a->cost[v] != b->cost[v] ||
		    a->recompute[v] != b->recompute[v])
			fail_msg("%s: node '%s': kind %d/%d mem %lld/%lld ws %lld/%lld "
				 "cost %g/%g recompute %d/%d", what, id, a->kind[v], b->kind[v],
				 (long long)a->mem[v], (long long)b->mem[v],
				 (long long)a->workspace[v], (long long)b->workspace[v],
				 a->cost[v], b->cost[v], a->recompute[v], b->recompute[v]);
		if ((a->grad_of[v] < 0) != (b->grad_of[v] < 0) ||
		    (a->grad_of[v] >= 0 &&
		     strcmp(a->id[a->grad_of[v]], b->id[b->grad_of[v]]) != 0))
			fail_msg("%s: node '%s': grad_of differs", what, id);
		if (a->in_off[v + 1] - a->in_off[v] != b->in_off[v + 1] - b->in_off[v])
			fail_msg("%s: node '%s': %d inputs, expected %d", what, id,
				 a->in_off[v + 1] - a->in_off[v], b->in_off[v + 1] - b->in_off[v]);
		for (k = 0; k < a->in_off[v + 1] - a->in_off[v]; k++) {
			const char *x = a->id[a->in_idx[a->in_off[v] + k]];
			const char *y = b->id[b->in_idx[b->in_off[v] + k]];

			if (strcmp(x, y) != 0)
				fail_msg("%s: node '%s': input %d is '%s', expected '%s'", what,
					 id, k, x, y);
		}
	}
	if (a->n_outputs != b->n_outputs)
		fail_msg("%s: %d outputs, expected %d", what, a->n_outputs, b->n_outputs);
	for (k = 0; k < a->n_outputs; k++)
		if (strcmp(a->id[a->outputs[k]], b->id[b->outputs[k]]) != 0)
			fail_msg("%s: output %d is '%s', expected '%s'", what, k,
				 a->id[a->outputs[k]], b->id[b->outputs[k]]);
}

/* g written by remat_graph_write, as a malloc'd string. */
static char *gc_write(const struct remat_graph *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(remat_graph_write(f, g, NULL), REMAT_OK);
	fclose(f);
	return buf;
}

/* Write g, load the text back, and check nothing changed. */
static void gc_assert_round_trip(const struct remat_graph *g, const char *what)
{
	char *text = gc_write(g);
	struct remat_graph *h = tu_graph(text);

	int32_t v;

	gc_assert_same(h, g, what);
	for (v = 0; v < g->n; v++)
		if ((g->label[v] == NULL) != (h->label[v] == NULL) ||
		    (g->label[v] && strcmp(g->label[v], h->label[v]) != 0))
			fail_msg("%s: node '%s': label differs", what, g->id[v]);
	assert_string_equal(h->name, g->name);
	assert_string_equal(h->cost_unit, g->cost_unit);
	remat_graph_free(h);
	free(text);
}

#endif
