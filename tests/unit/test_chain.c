/*
 * test_chain.c - the chain view (src/analysis/chain.c): stages, stage
 * figures worked out by hand, the assignment rules, and the 1-separator
 * sweep checked against igraph's articulation points and a brute-force
 * path search on random graphs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "remat/chain.h"
#include "core/igraph_glue.h"

#define MiB 1048576

static struct remat_chain *chain_of(const struct remat_graph *g)
{
	struct remat_chain *c = NULL;
	struct remat_error err;

	remat_error_clear(&err);
	assert_int_equal(remat_chain_build(g, &c, &err), REMAT_OK);
	return c;
}

static char *read_example(const char *name)
{
	char path[1024];
	FILE *f;
	long n;
	char *buf;

	snprintf(path, sizeof(path), "%s/examples/%s", REMAT_SOURCE_DIR, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The ids of a stage's forward (or backward) nodes, space-separated. */
static const char *stage_ids(const struct remat_graph *g, const struct remat_chain *c,
			     int32_t s, int bwd)
{
	static char buf[1024];
	const struct remat_stage *st = &c->stages[s];
	int32_t i, n = bwd ? st->n_bwd : st->n_fwd;
	size_t used = 0;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		int32_t v = bwd ? c->bwd[st->bwd_off + i] : c->fwd[st->fwd_off + i];

		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? " " : "",
					 g->id[v]);
	}
	return buf;
}

/*
 * examples/train-chain4.json: x, f1..f4, loss, b4..b1, every tensor 1 MiB,
 * b_i reads b_{i+1} (loss for b4), f_i and f_{i-1} (x for b1).  By hand:
 * four stages {f_i | b_i}, the loss merged into the last one.
 */
static void test_train_chain4(void **state)
{
	char *json = read_example("train-chain4.json");
	struct remat_graph *g = tu_graph(json);
	struct remat_chain *c = chain_of(g);
	const struct remat_stage *s;

	(void)state;
	assert_int_equal(c->training, 1);
	assert_int_equal(c->n_separators, 5);   /* f1 f2 f3 f4 loss */
	assert_int_equal(c->n_stages, 4);
	assert_int_equal(c->input_mem, MiB);
	assert_string_equal(stage_ids(g, c, 0, 0), "f1");
	assert_string_equal(stage_ids(g, c, 0, 1), "b1");
	assert_string_equal(stage_ids(g, c, 2, 0), "f3");
	assert_string_equal(stage_ids(g, c, 3, 0), "f4 loss");
	assert_string_equal(stage_ids(g, c, 3, 1), "b4");
	assert_int_equal(c->largest, 3);
	assert_int_equal(c->largest_nodes, 3);

	/* Stage 1: no entry (x is an input), exit f1. */
	s = &c->stages[0];
	assert_int_equal(s->entry, -1);
	assert_int_equal(s->exit, remat_graph_find(g, "f1"));
	assert_int_equal(s->x, 0);
	assert_int_equal(s->y, MiB);
	assert_int_equal(s->xbar, MiB);          /* f1, read by b1 and b2 */
	assert_int_equal(s->fwd_tmp, 0);
	assert_int_equal(s->fwd_tmp_ng, 0);
	assert_int_equal(s->fwd_peak_ng_in, MiB);
	assert_int_equal(s->grad_in, MiB);       /* b2 */
	assert_int_equal(s->grad, 0);
	assert_int_equal(s->bwd_start, 2 * MiB); /* f1 + b2 */
	assert_int_equal(s->bwd_tmp, MiB);       /* + b1 */
	assert_int_equal(s->out_mem, MiB);       /* b1 is the output */
	assert_true(s->fwd_cost == 1 && s->bwd_cost == 2 && s->fwd_cost_ng == 1);
	/* With f1 still resident nothing of stage 1 needs recomputing. */
	assert_true(s->fwd_cost_h == 0);
	assert_int_equal(s->fwd_tmp_h, 0);

	/* Stage 2: entry f1, which a no-grad run inside a run holds and frees. */
	s = &c->stages[1];
	assert_int_equal(s->entry, remat_graph_find(g, "f1"));
	assert_int_equal(s->x, MiB);
	assert_int_equal(s->fwd_peak_ng_in, 2 * MiB);
	assert_int_equal(s->grad_in, MiB);
	assert_int_equal(s->grad, MiB);          /* b2, read by b1 */
	assert_int_equal(s->out_mem, 0);

	/* Stage 4: f4 and loss, both read by b4. */
	s = &c->stages[3];
	assert_int_equal(s->exit, remat_graph_find(g, "loss"));
	assert_int_equal(s->xbar, 2 * MiB);
	assert_int_equal(s->fwd_tmp, 0);
	assert_int_equal(s->fwd_tmp_ng, MiB);    /* f4 and loss at once, loss kept */
	assert_int_equal(s->fwd_peak_ng_in, 2 * MiB);
	assert_int_equal(s->grad_in, 0);
	assert_int_equal(s->grad, MiB);
	assert_int_equal(s->bwd_start, 2 * MiB);
	assert_int_equal(s->bwd_tmp, MiB);
	assert_true(s->fwd_cost == 2 && s->bwd_cost == 2);
	assert_int_equal(c->grad_at[0], 0);
	assert_int_equal(c->grad_at[4], 0);
	assert_int_equal(c->grad_at[2], MiB);
	remat_chain_free(c);
	remat_graph_free(g);
	free(json);
}

/* Kumar et al. Fig. 1 (op nodes only): A, then B..E cut by no separator. */
static void test_kumar_inference(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_chain *c = chain_of(g);

	(void)state;
	assert_int_equal(c->training, 0);
	assert_int_equal(c->n_separators, 2);   /* A and E */
	assert_int_equal(c->n_stages, 2);
	assert_string_equal(stage_ids(g, c, 0, 0), "A");
	assert_string_equal(stage_ids(g, c, 1, 0), "B C D E");
	assert_int_equal(c->stages[1].entry, remat_graph_find(g, "A"));
	assert_int_equal(c->stages[1].exit, remat_graph_find(g, "E"));
	remat_chain_free(c);
	remat_graph_free(g);
}

#define HDR "{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["

/*
 * Weights as inputs do not break the chain (inputs belong to no stage);
 * a skip connection a -> d makes b, c, d one stage; a reshape r without
 * a backward of its own joins the next stage.
 */
static void test_rules(void **state)
{
	const char *json = HDR
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"w1\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"w2\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"a\",\"kind\":\"forward\",\"mem\":2,\"inputs\":[\"x\",\"w1\"]},"
		"{\"id\":\"r\",\"kind\":\"forward\",\"mem\":2,\"inputs\":[\"a\"]},"
		"{\"id\":\"b\",\"kind\":\"forward\",\"mem\":3,\"inputs\":[\"r\",\"w2\"]},"
		"{\"id\":\"c\",\"kind\":\"forward\",\"mem\":4,\"inputs\":[\"b\"]},"
		"{\"id\":\"d\",\"kind\":\"forward\",\"mem\":5,\"inputs\":[\"c\",\"r\"]},"
		"{\"id\":\"L\",\"kind\":\"loss\",\"mem\":1,\"inputs\":[\"d\"]},"
		"{\"id\":\"gd\",\"kind\":\"backward\",\"mem\":5,\"inputs\":[\"L\",\"d\"],\"grad_of\":\"d\"},"
		"{\"id\":\"gc\",\"kind\":\"backward\",\"mem\":4,\"inputs\":[\"gd\",\"c\"],\"grad_of\":\"c\"},"
		"{\"id\":\"gb\",\"kind\":\"backward\",\"mem\":3,\"inputs\":[\"gc\",\"b\",\"w2\"],\"grad_of\":\"b\"},"
		"{\"id\":\"ga\",\"kind\":\"backward\",\"mem\":2,\"inputs\":[\"gb\",\"gd\",\"a\",\"x\"],\"grad_of\":\"a\"}"
		"],\"outputs\":[\"ga\"]}";
	struct remat_graph *g = tu_graph(json);
	struct remat_chain *c = chain_of(g);

	(void)state;
	/* Separators a, r, d, L; segments {a} {r} {b c d} {L}. */
	assert_int_equal(c->n_separators, 4);
	assert_int_equal(c->n_segments, 4);
	assert_int_equal(c->n_stages, 2);
	assert_string_equal(stage_ids(g, c, 0, 0), "a");
	assert_string_equal(stage_ids(g, c, 0, 1), "ga");
	assert_string_equal(stage_ids(g, c, 1, 0), "r b c d L");
	assert_string_equal(stage_ids(g, c, 1, 1), "gd gc gb");
	assert_int_equal(c->stages[1].entry, remat_graph_find(g, "a"));
	assert_int_equal(c->stages[1].exit, remat_graph_find(g, "L"));
	assert_int_equal(c->input_mem, 3);
	remat_chain_free(c);
	remat_graph_free(g);
}

/*
 * Backward nodes without grad_of join the stage of the forward node they
 * read that comes latest; reading none, the earliest stage among the
 * backward nodes they read; reading neither, the last stage.  A dropout
 * mask read only by a backward node is off the chain and joins that
 * backward node's stage.
 */
static void test_backward_rules(void **state)
{
	const char *json = HDR
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"f1\",\"kind\":\"forward\",\"mem\":1,\"inputs\":[\"x\"]},"
		"{\"id\":\"f2\",\"kind\":\"forward\",\"mem\":1,\"inputs\":[\"f1\"]},"
		"{\"id\":\"m3\",\"kind\":\"forward\",\"mem\":1,\"inputs\":[\"f2\"]},"
		"{\"id\":\"f3\",\"kind\":\"forward\",\"mem\":1,\"inputs\":[\"f2\"]},"
		"{\"id\":\"L\",\"kind\":\"loss\",\"mem\":1,\"inputs\":[\"f3\"]},"
		"{\"id\":\"g3\",\"kind\":\"backward\",\"mem\":1,\"inputs\":[\"L\",\"f2\",\"m3\"]},"
		"{\"id\":\"g2\",\"kind\":\"backward\",\"mem\":1,\"inputs\":[\"g3\",\"f1\",\"f2\"]},"
		"{\"id\":\"g1\",\"kind\":\"backward\",\"mem\":1,\"inputs\":[\"g2\",\"x\",\"f1\"],\"grad_of\":\"f1\"},"
		"{\"id\":\"h\",\"kind\":\"backward\",\"mem\":1,\"inputs\":[\"g2\",\"g3\"]},"
		"{\"id\":\"k\",\"kind\":\"backward\",\"mem\":1,\"inputs\":[\"x\"]},"
		"{\"id\":\"upd\",\"kind\":\"op\",\"mem\":1,\"inputs\":[\"g1\",\"h\",\"k\"]}"
		"],\"outputs\":[\"upd\"]}";
	struct remat_graph *g = tu_graph(json);
	struct remat_chain *c = chain_of(g);

	(void)state;
	assert_int_equal(c->n_stages, 3);
	/* g3 reads L (stage 3) and f2 (stage 2): the latest is L. */
	assert_int_equal(c->stage_of[remat_graph_find(g, "g3")], 2);
	/* g2 reads f1 and f2: f2, stage 2. */
	assert_int_equal(c->stage_of[remat_graph_find(g, "g2")], 1);
	/* h reads g2 (stage 2) and g3 (stage 3): the earliest, 2. */
	assert_int_equal(c->stage_of[remat_graph_find(g, "h")], 1);
	/* k reads only an input: the last stage. */
	assert_int_equal(c->stage_of[remat_graph_find(g, "k")], 2);
	/* upd reads backward nodes: backward part; it reads no forward node. */
	assert_int_equal(c->is_bwd[remat_graph_find(g, "upd")], 1);
	assert_int_equal(c->stage_of[remat_graph_find(g, "upd")], 0);
	/* The mask: off the chain, in g3's stage, not in no-grad runs. */
	assert_int_equal(c->stage_of[remat_graph_find(g, "m3")], 2);
	assert_string_equal(stage_ids(g, c, 2, 0), "m3 f3 L");
	assert_int_equal(c->fwd_ng[c->stages[2].fwd_off], 0);
	assert_int_equal(c->fwd_ng[c->stages[2].fwd_off + 1], 1);
	remat_chain_free(c);
	remat_graph_free(g);
}

/*
 * Aliasing (issue 12): a2 is an in-place relu of a1 and b2 an in-place
 * add into b1; every reader of an alias also reads its owner, as the
 * exporter writes them.  By hand: objects {a1 a2}, {b1 b2}; under the
 * old node-level sweep a1 -> b1, a1 -> b2 and b1 -> c1 jump over a2 and
 * b2, leaving separators a1, c1, L (2 stages).  With objects, a1 and b1
 * are not their objects' last chain nodes, and every edge over a2 (over
 * b2) leaves a2's (b2's) object: separators a2, b2, c1, L; segments
 * {a1 a2} {b1 b2} {c1} {L}, L merged into c1's: 3 stages.  Stage 2's
 * input and output are whole objects: x = y = 8.  Its no-grad forward
 * with the input inside: 8 resident, b1 adds 8 (peak 16), b2 (size 0)
 * is the last reader of a1/a2, which is freed once (8 left).
 */
static void test_aliases(void **state)
{
	const char *json = HDR
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":4},"
		"{\"id\":\"a1\",\"kind\":\"forward\",\"mem\":8,\"inputs\":[\"x\"]},"
		"{\"id\":\"a2\",\"kind\":\"forward\",\"mem\":0,\"inputs\":[\"a1\"]},"
		"{\"id\":\"b1\",\"kind\":\"forward\",\"mem\":8,\"inputs\":[\"a2\",\"a1\"]},"
		"{\"id\":\"b2\",\"kind\":\"forward\",\"mem\":0,\"inputs\":[\"b1\",\"a2\",\"a1\"]},"
		"{\"id\":\"c1\",\"kind\":\"forward\",\"mem\":8,\"inputs\":[\"b2\",\"b1\"]},"
		"{\"id\":\"L\",\"kind\":\"loss\",\"mem\":1,\"inputs\":[\"c1\"]},"
		"{\"id\":\"gc1\",\"kind\":\"backward\",\"mem\":8,\"inputs\":[\"L\",\"b2\",\"b1\"],\"grad_of\":\"c1\"},"
		"{\"id\":\"gb1\",\"kind\":\"backward\",\"mem\":8,\"inputs\":[\"gc1\",\"a2\",\"a1\"],\"grad_of\":\"b1\"},"
		"{\"id\":\"ga1\",\"kind\":\"backward\",\"mem\":8,\"inputs\":[\"gb1\",\"x\"],\"grad_of\":\"a1\"}"
		"],\"outputs\":[\"ga1\"]}";
	struct remat_graph *g = tu_graph(json);
	struct remat_chain *c = chain_of(g);

	(void)state;
	assert_int_equal(c->n_aliases, 2);
	assert_int_equal(c->alias_of[remat_graph_find(g, "a2")], remat_graph_find(g, "a1"));
	assert_int_equal(c->alias_of[remat_graph_find(g, "b2")], remat_graph_find(g, "b1"));
	assert_int_equal(c->alias_of[remat_graph_find(g, "c1")], remat_graph_find(g, "c1"));
	assert_int_equal(c->n_separators, 4);
	assert_int_equal(c->n_stages, 3);
	assert_string_equal(stage_ids(g, c, 0, 0), "a1 a2");
	assert_string_equal(stage_ids(g, c, 1, 0), "b1 b2");
	assert_string_equal(stage_ids(g, c, 2, 0), "c1 L");
	assert_string_equal(stage_ids(g, c, 1, 1), "gb1");
	assert_int_equal(c->stages[1].entry, remat_graph_find(g, "a2"));
	assert_int_equal(c->stages[1].exit, remat_graph_find(g, "b2"));
	assert_int_equal(c->stages[1].x, 8);
	assert_int_equal(c->stages[1].y, 8);
	assert_int_equal(c->stages[0].y, 8);
	assert_int_equal(c->stages[1].fwd_peak_ng_in, 16);
	assert_int_equal(c->n_static, 0);
	assert_int_equal(c->input_mem, 4);
	remat_chain_free(c);
	/* The plain view (no objects) is the old sweep: separators a1, c1, L. */
	{
		struct remat_error err;

		assert_int_equal(remat_chain_build_ex(g, REMAT_CHAIN_PLAIN, &c, &err), REMAT_OK);
		assert_int_equal(c->n_aliases, 0);
		assert_int_equal(c->alias_of[remat_graph_find(g, "a2")], remat_graph_find(g, "a2"));
		assert_int_equal(c->n_separators, 3);
		assert_int_equal(c->n_stages, 2);
		assert_string_equal(stage_ids(g, c, 0, 0), "a1");
		remat_chain_free(c);
	}
	remat_graph_free(g);
}

/*
 * Values resident the whole step (issue 12): z (a "full") reads nothing
 * and k (its "triu") reads z; no input reaches them, so both are static:
 * in no stage, their bytes counted with the inputs x and y (4 + 1 + 2 + 3
 * = 10).  k is
 * read by every layer; under the old sweep k -> h2 and k -> h3 jumped
 * over h1 and h2 (one stage).  Now: separators h1, h2, h3, L; stages
 * {h1} {h2} {h3 L}.  Also the labels: y is an input read only by lab,
 * which the file lists after h3; lab reads no chain node, and the old
 * sweep's virtual source reached it, which jumped over h1..h3 as well.
 */
static void test_static_values(void **state)
{
	const char *json = HDR
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":4},"
		"{\"id\":\"y\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"z\",\"kind\":\"forward\",\"mem\":2},"
		"{\"id\":\"k\",\"kind\":\"forward\",\"mem\":3,\"inputs\":[\"z\"]},"
		"{\"id\":\"h1\",\"kind\":\"forward\",\"mem\":8,\"inputs\":[\"x\",\"k\"]},"
		"{\"id\":\"h2\",\"kind\":\"forward\",\"mem\":8,\"inputs\":[\"h1\",\"k\"]},"
		"{\"id\":\"h3\",\"kind\":\"forward\",\"mem\":8,\"inputs\":[\"h2\",\"k\"]},"
		"{\"id\":\"lab\",\"kind\":\"forward\",\"mem\":1,\"inputs\":[\"y\"]},"
		"{\"id\":\"L\",\"kind\":\"loss\",\"mem\":1,\"inputs\":[\"h3\",\"lab\"]},"
		"{\"id\":\"g3\",\"kind\":\"backward\",\"mem\":8,\"inputs\":[\"L\",\"h2\",\"k\"],\"grad_of\":\"h3\"},"
		"{\"id\":\"g2\",\"kind\":\"backward\",\"mem\":8,\"inputs\":[\"g3\",\"h1\",\"k\"],\"grad_of\":\"h2\"},"
		"{\"id\":\"g1\",\"kind\":\"backward\",\"mem\":8,\"inputs\":[\"g2\",\"x\",\"k\"],\"grad_of\":\"h1\"}"
		"],\"outputs\":[\"g1\"]}";
	struct remat_graph *g = tu_graph(json);
	struct remat_chain *c = chain_of(g);

	(void)state;
	assert_int_equal(c->n_static, 2);
	assert_int_equal(c->is_static[remat_graph_find(g, "z")], 1);
	assert_int_equal(c->is_static[remat_graph_find(g, "k")], 1);
	assert_int_equal(c->is_static[remat_graph_find(g, "lab")], 0);
	assert_int_equal(c->stage_of[remat_graph_find(g, "k")], -1);
	assert_int_equal(c->input_mem, 10);
	assert_int_equal(c->n_stages, 3);
	assert_string_equal(stage_ids(g, c, 0, 0), "h1");
	assert_string_equal(stage_ids(g, c, 1, 0), "h2");
	assert_string_equal(stage_ids(g, c, 2, 0), "h3 lab L");
	assert_string_equal(stage_ids(g, c, 2, 1), "g3");
	/* Stage 2: input h1, output h2, 8 bytes each; k is held outside. */
	assert_int_equal(c->stages[1].x, 8);
	assert_int_equal(c->stages[1].y, 8);
	assert_int_equal(c->stages[1].xbar, 8);
	remat_chain_free(c);
	remat_graph_free(g);
}

/* Inputs and backward nodes only: one stage without forward nodes. */
static void test_degenerate(void **state)
{
	struct remat_graph *g = tu_graph(HDR
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":4},"
		"{\"id\":\"b\",\"kind\":\"backward\",\"mem\":3,\"inputs\":[\"x\"]}]}");
	struct remat_chain *c = chain_of(g);

	(void)state;
	assert_int_equal(c->n_stages, 1);
	assert_int_equal(c->stages[0].n_fwd, 0);
	assert_int_equal(c->stages[0].n_bwd, 1);
	remat_chain_free(c);
	remat_graph_free(g);
	g = tu_graph(HDR "{\"id\":\"x\",\"kind\":\"input\",\"mem\":4}]}");
	c = chain_of(g);
	assert_int_equal(c->n_stages, 0);
	assert_int_equal(c->largest, -1);
	remat_chain_free(c);
	remat_graph_free(g);
}

/*
 * Reference for the separators of an inference graph, two ways: (a) brute
 * force: v separates when removing it disconnects a virtual source (joined
 * to every non-input node with no non-input predecessor) from a virtual
 * sink (joined from every output), by BFS; (b) igraph: every such v is an
 * articulation point of the undirected graph with source and sink.
 */
static int reaches_without(const struct remat_graph *g, int32_t cut, uint8_t *seen,
			   int32_t *stack)
{
	int32_t top = 0, v, k;
	int found = 0;

	memset(seen, 0, (size_t)g->n);
	for (v = 0; v < g->n; v++) {
		int src = g->kind[v] != REMAT_KIND_INPUT;

		for (k = g->in_off[v]; k < g->in_off[v + 1] && src; k++)
			if (g->kind[g->in_idx[k]] != REMAT_KIND_INPUT)
				src = 0;
		if (src && v != cut) {
			seen[v] = 1;
			stack[top++] = v;
		}
	}
	while (top > 0 && !found) {
		v = stack[--top];
		if (g->is_output[v])
			found = 1;
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if (u != cut && !seen[u]) {
				seen[u] = 1;
				stack[top++] = u;
			}
		}
	}
	return found;
}

static void test_separators_random(void **state)
{
	uint64_t rs = 12345;
	int trial;

	(void)state;
	remat_i_igraph_setup();
	for (trial = 0; trial < 60; trial++) {
		int n = 4 + (int)(tu_rand(&rs) % 30);
		double p = 0.02 + (double)(tu_rand(&rs) % 20) / 100.0;
		char *json = tu_random_graph_json(&rs, n, p, 0);
		struct remat_graph *g = tu_graph(json);
		struct remat_chain *c = chain_of(g);
		uint8_t *seen = calloc((size_t)g->n + 2, 1), *is_sep = calloc((size_t)g->n, 1);
		int32_t *stack = malloc(sizeof(int32_t) * ((size_t)g->n + 2)), v, s, n_sep = 0;
		igraph_t ig;
		igraph_vector_int_t edges, ap;
		igraph_integer_t S = g->n, T = g->n + 1, i;

		/* The chain's separators: the exits of an inference graph's stages. */
		for (s = 0; s < c->n_stages; s++)
			if (c->stages[s].exit >= 0) {
				is_sep[c->stages[s].exit] = 1;
				n_sep++;
			}
		assert_int_equal(n_sep, c->n_separators);
		igraph_vector_int_init(&edges, 0);
		for (v = 0; v < g->n; v++) {
			int32_t k;
			int src = g->kind[v] != REMAT_KIND_INPUT;

			if (g->kind[v] == REMAT_KIND_INPUT)
				continue;
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
				if (g->kind[g->in_idx[k]] == REMAT_KIND_INPUT)
					continue;
				src = 0;
				igraph_vector_int_push_back(&edges, g->in_idx[k]);
				igraph_vector_int_push_back(&edges, v);
			}
			if (src) {
				igraph_vector_int_push_back(&edges, S);
				igraph_vector_int_push_back(&edges, v);
			}
			if (g->is_output[v]) {
				igraph_vector_int_push_back(&edges, v);
				igraph_vector_int_push_back(&edges, T);
			}
		}
		assert_int_equal(igraph_create(&ig, &edges, g->n + 2, IGRAPH_UNDIRECTED),
				 IGRAPH_SUCCESS);
		igraph_vector_int_init(&ap, 0);
		assert_int_equal(igraph_articulation_points(&ig, &ap), IGRAPH_SUCCESS);
		for (v = 0; v < g->n; v++) {
			int brute = g->kind[v] != REMAT_KIND_INPUT &&
				    !reaches_without(g, v, seen, stack);
			int art = 0;

			for (i = 0; i < igraph_vector_int_size(&ap); i++)
				if (VECTOR(ap)[i] == v)
					art = 1;
			if (brute != is_sep[v])
				fail_msg("trial %d: node '%s': brute force %d, chain %d\n%s", trial,
					 g->id[v], brute, is_sep[v], json);
			if (brute && !art)
				fail_msg("trial %d: separator '%s' is no articulation point", trial,
					 g->id[v]);
		}
		igraph_vector_int_destroy(&ap);
		igraph_vector_int_destroy(&edges);
		igraph_destroy(&ig);
		free(seen);
		free(is_sep);
		free(stack);
		remat_chain_free(c);
		remat_graph_free(g);
		free(json);
	}
}

/*
 * Every needed node of a random training graph is in exactly one stage
 * list, forward or backward by its kind, and merged stages all carry
 * backward nodes.
 */
static void test_partition_random(void **state)
{
	uint64_t rs = 777;
	int trial;

	(void)state;
	for (trial = 0; trial < 40; trial++) {
		int n = 2 + (int)(tu_rand(&rs) % 25);
		char *json = tu_random_graph_json(&rs, n, 0.1, 1);
		struct remat_graph *g = tu_graph(json);
		struct remat_chain *c = chain_of(g);
		int32_t *hits = calloc((size_t)g->n, sizeof(int32_t)), v, s, i;

		for (s = 0; s < c->n_stages; s++) {
			const struct remat_stage *st = &c->stages[s];

			assert_true(st->n_bwd > 0);
			for (i = 0; i < st->n_fwd; i++) {
				v = c->fwd[st->fwd_off + i];
				hits[v]++;
				assert_int_equal(c->stage_of[v], s);
				assert_false(g->kind[v] == REMAT_KIND_BACKWARD);
			}
			for (i = 0; i < st->n_bwd; i++) {
				v = c->bwd[st->bwd_off + i];
				hits[v]++;
				assert_int_equal(c->stage_of[v], s);
			}
		}
		for (v = 0; v < g->n; v++)
			assert_int_equal(hits[v], g->kind[v] == REMAT_KIND_INPUT ? 0 : 1);
		free(hits);
		remat_chain_free(c);
		remat_graph_free(g);
		free(json);
	}
}

static struct remat_chain *cuts_of(const struct remat_graph *g)
{
	struct remat_chain *c = NULL;
	struct remat_error err;

	remat_error_clear(&err);
	assert_int_equal(remat_chain_build_ex(g, REMAT_CHAIN_CUTS, &c, &err), REMAT_OK);
	return c;
}

/*
 * A two-layer recurrence over three steps (a stacked LSTM in small):
 * a_t reads a_(t-1), b_t reads b_(t-1) and a_t.  Only a1 and b3 are
 * 1-separators.  By hand, ranks a1 0, b1 1, a2 2, b2 3, a3 4, b3 5, L 6;
 * the ranks read from each (the reach) 2 3 4 5 5 6 end; bytes crossing
 * each boundary 2 5 5 5 5 3 1.  Cuts: after a1 (the first rank); then
 * from R = 2 over ranks 2..3 (5 and 5: the earlier); then from R = 4
 * over 4..5 (5 and 3: after b3); then after L.  Stages {a1} {b1 a2}
 * {b2 a3 b3 L} (L has no backward node: merged), each cut holding the
 * newest value of both layers.
 */
static void test_cuts_grid(void **state)
{
	const char *json = HDR
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"a1\",\"kind\":\"forward\",\"mem\":2,\"inputs\":[\"x\"]},"
		"{\"id\":\"b1\",\"kind\":\"forward\",\"mem\":3,\"inputs\":[\"a1\"]},"
		"{\"id\":\"a2\",\"kind\":\"forward\",\"mem\":2,\"inputs\":[\"a1\",\"x\"]},"
		"{\"id\":\"b2\",\"kind\":\"forward\",\"mem\":3,\"inputs\":[\"b1\",\"a2\"]},"
		"{\"id\":\"a3\",\"kind\":\"forward\",\"mem\":2,\"inputs\":[\"a2\",\"x\"]},"
		"{\"id\":\"b3\",\"kind\":\"forward\",\"mem\":3,\"inputs\":[\"b2\",\"a3\"]},"
		"{\"id\":\"L\",\"kind\":\"loss\",\"mem\":1,\"inputs\":[\"b3\"]},"
		"{\"id\":\"gb3\",\"kind\":\"backward\",\"mem\":3,\"inputs\":[\"L\",\"b2\",\"a3\"],\"grad_of\":\"b3\"},"
		"{\"id\":\"ga3\",\"kind\":\"backward\",\"mem\":2,\"inputs\":[\"gb3\",\"a2\"],\"grad_of\":\"a3\"},"
		"{\"id\":\"gb2\",\"kind\":\"backward\",\"mem\":3,\"inputs\":[\"gb3\",\"b1\",\"a2\"],\"grad_of\":\"b2\"},"
		"{\"id\":\"ga2\",\"kind\":\"backward\",\"mem\":2,\"inputs\":[\"ga3\",\"gb2\",\"a1\"],\"grad_of\":\"a2\"},"
		"{\"id\":\"gb1\",\"kind\":\"backward\",\"mem\":3,\"inputs\":[\"gb2\",\"a1\"],\"grad_of\":\"b1\"},"
		"{\"id\":\"ga1\",\"kind\":\"backward\",\"mem\":2,\"inputs\":[\"ga2\",\"gb1\",\"x\"],\"grad_of\":\"a1\"}"
		"],\"outputs\":[\"ga1\"]}";
	struct remat_graph *g = tu_graph(json);
	struct remat_chain *c = chain_of(g), *k;

	(void)state;
	assert_int_equal(c->n_stages, 2);    /* {a1} {b1 .. b3 L}: no other separator */
	remat_chain_free(c);
	k = cuts_of(g);
	assert_int_equal(k->n_separators, 4);
	assert_int_equal(k->n_stages, 3);
	assert_string_equal(stage_ids(g, k, 0, 0), "a1");
	assert_string_equal(stage_ids(g, k, 1, 0), "b1 a2");
	assert_string_equal(stage_ids(g, k, 2, 0), "b2 a3 b3 L");
	assert_int_equal(k->widest_cut, 2);
	assert_int_equal(k->n_passing, 0);
	assert_true(remat_chain_in_exit(k, remat_graph_find(g, "a1"), 0));
	assert_false(remat_chain_in_exit(k, remat_graph_find(g, "a1"), 1));
	assert_true(remat_chain_in_exit(k, remat_graph_find(g, "b1"), 1));
	assert_true(remat_chain_in_exit(k, remat_graph_find(g, "a2"), 1));
	assert_false(remat_chain_in_exit(k, remat_graph_find(g, "b3"), 2));
	assert_int_equal(k->stages[1].x, 2);
	assert_int_equal(k->stages[1].y, 5);
	assert_int_equal(k->stages[2].x, 5);
	assert_int_equal(k->stages[2].y, 0);
	assert_int_equal(k->stages[2].exit, -1);
	/* Stage 1: b1 and a2 both stay (read later); with a1 inside, 2 + 3 + 2 at a2. */
	assert_int_equal(k->stages[1].xbar, 5);
	assert_int_equal(k->stages[1].fwd_tmp, 0);
	assert_int_equal(k->stages[1].fwd_tmp_ng, 0);
	assert_int_equal(k->stages[1].fwd_peak_ng_in, 7);
	assert_int_equal(k->stages[1].input_live, 1);    /* gb1 and ga2 read a1 */
	remat_chain_free(k);
	remat_graph_free(g);
}

/* The graph of test_cuts_gather, with o_i of omem bytes, into json. */
static void gather_json(char *json, size_t cap, int omem)
{
	size_t u = 0;
	int i;

	u += (size_t)snprintf(json + u, cap - u,
			      HDR "{\"id\":\"x\",\"kind\":\"input\",\"mem\":1}");
	for (i = 1; i <= 8; i++) {
		char prev[8];

		snprintf(prev, sizeof(prev), i == 1 ? "x" : "c%d", i - 1);
		u += (size_t)snprintf(json + u, cap - u,
				      ",{\"id\":\"c%d\",\"kind\":\"forward\",\"mem\":4,"
				      "\"inputs\":[\"%s\"]},{\"id\":\"o%d\",\"kind\":\"forward\","
				      "\"mem\":%d,\"inputs\":[\"c%d\"]}", i, prev, i, omem, i);
	}
	u += (size_t)snprintf(json + u, cap - u,
			      ",{\"id\":\"G\",\"kind\":\"forward\",\"mem\":8,\"inputs\":[\"o1\","
			      "\"o2\",\"o3\",\"o4\",\"o5\",\"o6\",\"o7\",\"o8\"]},"
			      "{\"id\":\"L\",\"kind\":\"loss\",\"mem\":1,\"inputs\":[\"G\"]}");
	for (i = 8; i >= 1; i--) {
		char prev[8], next[16];

		if (i == 1)
			snprintf(prev, sizeof(prev), "x");
		else
			snprintf(prev, sizeof(prev), "c%d", i - 1);
		if (i == 8)
			next[0] = '\0';
		else
			snprintf(next, sizeof(next), ",\"gc%d\"", i + 1);
		u += (size_t)snprintf(json + u, cap - u,
				      ",{\"id\":\"go%d\",\"kind\":\"backward\",\"mem\":1,"
				      "\"inputs\":[\"L\",\"c%d\"],\"grad_of\":\"o%d\"}"
				      ",{\"id\":\"gc%d\",\"kind\":\"backward\",\"mem\":4,"
				      "\"inputs\":[\"go%d\"%s,\"%s\"],\"grad_of\":\"c%d\"}",
				      i, i, i, i, i, next, prev, i);
	}
	snprintf(json + u, cap - u, "],\"outputs\":[\"gc1\"]}");
}

/*
 * A chain c1..c8 whose every step also feeds a gather G (eight inputs: an
 * LSTM's stack of per-step outputs).  Edges into G do not count for
 * cuts, so by hand (ranks c_i 2i-2, o_i 2i-1): a cut after c1, then each
 * window [2i, 2i+2) holds c_(i+1) on both ranks (4 bytes each) and takes
 * the earlier, until the window [14, 16) where nothing crosses after o8.
 * Stages {c1} {o1 c2} .. {o6 c7} {o7 c8 o8 G L}.  G is in stage 7, so
 * o1..o5 (stages 1..5) are passing; o6 is in stage 6's exit.
 */
static void test_cuts_gather(void **state)
{
	char json[8192];
	int i;
	struct remat_graph *g;
	struct remat_chain *k;

	(void)state;
	gather_json(json, sizeof(json), 1);
	g = tu_graph(json);
	k = cuts_of(g);
	assert_int_equal(k->n_stages, 8);
	assert_string_equal(stage_ids(g, k, 0, 0), "c1");
	assert_string_equal(stage_ids(g, k, 1, 0), "o1 c2");
	assert_string_equal(stage_ids(g, k, 6, 0), "o6 c7");
	assert_string_equal(stage_ids(g, k, 7, 0), "o7 c8 o8 G L");
	assert_int_equal(k->n_passing, 5);
	assert_int_equal(k->passing_mem, 5);
	assert_int_equal(k->input_mem, 1 + 5);
	for (i = 1; i <= 8; i++) {
		char id[8];

		snprintf(id, sizeof(id), "o%d", i);
		assert_int_equal(k->passing[remat_graph_find(g, id)], i <= 5);
	}
	assert_int_equal(k->stages[1].y, 4);     /* c2; o1 passes */
	assert_int_equal(k->stages[6].y, 5);     /* o6 and c7 */
	assert_int_equal(k->stages[7].x, 5);
	assert_int_equal(k->widest_cut, 2);
	/* Passing values count nowhere in the stages: stage 1 keeps c2 only. */
	assert_int_equal(k->stages[1].xbar, 4);
	remat_chain_free(k);
	remat_graph_free(g);
}

/*
 * The same graph with o_i of 8 bytes, more than the c_i (4) they read:
 * the cuts are the same, then each o_i moves to G's segment, so the
 * stages are {c1} .. {c8} {o1 .. o8 G L}.  Now c1..c7 (stages 0..6) are
 * read in stage 8 and pass (28 bytes); c8 is stage 7's exit.
 */
static void test_cuts_defer(void **state)
{
	char json[8192];
	struct remat_graph *g;
	struct remat_chain *k;

	(void)state;
	gather_json(json, sizeof(json), 8);
	g = tu_graph(json);
	k = cuts_of(g);
	assert_int_equal(k->n_stages, 9);
	assert_string_equal(stage_ids(g, k, 0, 0), "c1");
	assert_string_equal(stage_ids(g, k, 7, 0), "c8");
	assert_string_equal(stage_ids(g, k, 8, 0), "o1 o2 o3 o4 o5 o6 o7 o8 G L");
	assert_string_equal(stage_ids(g, k, 8, 1), "go8 go7 go6 go5 go4 go3 go2 go1");
	assert_int_equal(k->n_passing, 7);
	assert_int_equal(k->passing_mem, 28);
	assert_int_equal(k->stages[7].y, 4);
	assert_int_equal(k->stages[8].x, 4);
	remat_chain_free(k);
	remat_graph_free(g);
}

/*
 * Twelve nodes, each reading every earlier one: n9..n12 read 8 or more
 * chain values, a third of the chain.  That is no gather: every edge
 * counts, n1's edge to n12 allows no boundary before n12, so the view
 * has one stage and nothing passing.
 */
static void test_cuts_dense(void **state)
{
	char json[8192];
	size_t u = 0;
	int i, j;
	struct remat_graph *g;
	struct remat_chain *k;

	(void)state;
	u += (size_t)snprintf(json + u, sizeof(json) - u,
			      HDR "{\"id\":\"x\",\"kind\":\"input\",\"mem\":1}");
	for (i = 1; i <= 12; i++) {
		u += (size_t)snprintf(json + u, sizeof(json) - u,
				      ",{\"id\":\"n%d\",\"kind\":\"op\",\"mem\":1,\"inputs\":[\"x\"", i);
		for (j = 1; j < i; j++)
			u += (size_t)snprintf(json + u, sizeof(json) - u, ",\"n%d\"", j);
		u += (size_t)snprintf(json + u, sizeof(json) - u, "]}");
	}
	snprintf(json + u, sizeof(json) - u, "],\"outputs\":[\"n12\"]}");
	g = tu_graph(json);
	k = cuts_of(g);
	assert_int_equal(k->n_passing, 0);
	assert_int_equal(k->passing_mem, 0);
	assert_int_equal(k->n_stages, 2);    /* {n1} | {n2 .. n12}: after n1, R = n12 */
	remat_chain_free(k);
	remat_graph_free(g);
}

/*
 * The cuts view on random training graphs: every value a stage's forward
 * reads from an earlier stage's chain node is in the previous stage's
 * exit or passing (or a view of an input); x is the previous y; y is the
 * bytes of the distinct exit objects.
 */
static void test_cuts_random(void **state)
{
	uint64_t rs = 4242;
	int trial;

	(void)state;
	for (trial = 0; trial < 60; trial++) {
		int n = 2 + (int)(tu_rand(&rs) % 30);
		char *json = tu_random_graph_json(&rs, n, 0.05 + (trial % 4) * 0.1, 1);
		struct remat_graph *g = tu_graph(json);
		struct remat_chain *k = cuts_of(g);
		uint8_t *on = calloc((size_t)g->n + 1, 1), *seen = calloc((size_t)g->n + 1, 1);
		int32_t s, i, j;

		for (s = 0; s < k->n_stages; s++)
			for (i = 0; i < k->stages[s].n_fwd; i++)
				on[k->fwd[k->stages[s].fwd_off + i]] =
					k->fwd_ng[k->stages[s].fwd_off + i];
		for (s = 0; s < k->n_stages; s++) {
			const struct remat_stage *st = &k->stages[s];
			int64_t y = 0;

			if (s > 0)
				assert_int_equal(st->x, k->stages[s - 1].y);
			for (i = 0; i < st->n_fwd; i++) {
				int32_t v = k->fwd[st->fwd_off + i];

				for (j = g->in_off[v]; j < g->in_off[v + 1] && on[v]; j++) {
					int32_t u = g->in_idx[j], su = k->stage_of[u];

					if (!on[u] || su == s)
						continue;
					assert_true(su < s);
					assert_true(k->passing[k->alias_of[u]] ||
						    g->kind[k->alias_of[u]] == REMAT_KIND_INPUT ||
						    (su == s - 1 && remat_chain_in_exit(k, u, su)));
				}
				if (remat_chain_in_exit(k, v, s) && !seen[k->alias_of[v]]) {
					seen[k->alias_of[v]] = 1;
					y += g->mem[k->alias_of[v]];
				}
			}
			assert_int_equal(st->y, y);
		}
		free(on);
		free(seen);
		remat_chain_free(k);
		remat_graph_free(g);
		free(json);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_train_chain4),
		cmocka_unit_test(test_kumar_inference),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_backward_rules),
		cmocka_unit_test(test_aliases),
		cmocka_unit_test(test_static_values),
		cmocka_unit_test(test_degenerate),
		cmocka_unit_test(test_separators_random),
		cmocka_unit_test(test_partition_random),
		cmocka_unit_test(test_cuts_grid),
		cmocka_unit_test(test_cuts_gather),
		cmocka_unit_test(test_cuts_defer),
		cmocka_unit_test(test_cuts_dense),
		cmocka_unit_test(test_cuts_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
