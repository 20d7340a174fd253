/*
 * test_gen.c - generators and the training transform.  Expected graphs are
 * written out by hand from the rules in remat/gen.h; random generators are
 * checked for determinism (same seed, same bytes) and for the structural
 * properties their algorithm promises.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "gcompare.h"

#define HDR "{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["

static void test_chain2_by_hand(void **state)
{
	struct remat_gen_chain_opts o;
	struct remat_graph *g = NULL, *want = tu_graph(HDR
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":1048576},"
		"{\"id\":\"f1\",\"kind\":\"forward\",\"mem\":1048576,\"cost\":1,\"inputs\":[\"x\"]},"
		"{\"id\":\"f2\",\"kind\":\"forward\",\"mem\":1048576,\"cost\":1,\"inputs\":[\"f1\"]},"
		"{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":4,\"cost\":1,\"inputs\":[\"f2\"]},"
		"{\"id\":\"b2\",\"kind\":\"backward\",\"mem\":1048576,\"cost\":2,"
		" \"inputs\":[\"loss\",\"f1\",\"f2\"],\"grad_of\":\"f2\"},"
		"{\"id\":\"b1\",\"kind\":\"backward\",\"mem\":1048576,\"cost\":2,"
		" \"inputs\":[\"b2\",\"x\",\"f1\"],\"grad_of\":\"f1\"}]}");

	(void)state;
	remat_gen_chain_opts_init(&o);
	o.n = 2;
	assert_int_equal(remat_gen_chain(&o, &g, NULL), REMAT_OK);
	gc_assert_same(g, want, "chain 2");
	assert_string_equal(g->name, "train-chain2");
	/* While b2 runs, x, f1, f2, loss and b2 itself are resident. */
	assert_int_equal(g->no_remat_peak, 4 * 1048576 + 4);
	gc_assert_round_trip(g, "chain 2");
	remat_graph_free(g);
	remat_graph_free(want);
}

/* The lead's hand-written examples/train-chain4.json is gen chain 4. */
static void test_chain4_is_the_example(void **state)
{
	struct remat_gen_chain_opts o;
	struct remat_graph *g = NULL, *want = NULL;

	(void)state;
	assert_int_equal(remat_graph_load_file(REMAT_SOURCE_DIR "/examples/train-chain4.json",
					       &want, NULL), REMAT_OK);
	remat_gen_chain_opts_init(&o);
	o.n = 4;
	o.train.loss_mem = 1048576;
	assert_int_equal(remat_gen_chain(&o, &g, NULL), REMAT_OK);
	gc_assert_same(g, want, "chain 4");
	remat_graph_free(g);
	remat_graph_free(want);
}

static void test_chain_forward_only(void **state)
{
	struct remat_gen_chain_opts o;
	struct remat_graph *g = NULL, *want = tu_graph(HDR
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":5},"
		"{\"id\":\"f1\",\"kind\":\"forward\",\"mem\":5,\"cost\":2.5,\"inputs\":[\"x\"]},"
		"{\"id\":\"f2\",\"kind\":\"forward\",\"mem\":5,\"cost\":2.5,\"inputs\":[\"f1\"]},"
		"{\"id\":\"f3\",\"kind\":\"forward\",\"mem\":5,\"cost\":2.5,\"inputs\":[\"f2\"]}]}");

	(void)state;
	remat_gen_chain_opts_init(&o);
	o.n = 3;
	o.mem = 5;
	o.cost = 2.5;
	o.forward_only = 1;
	assert_int_equal(remat_gen_chain(&o, &g, NULL), REMAT_OK);
	gc_assert_same(g, want, "forward chain 3");
	assert_string_equal(g->name, "chain3");
	remat_graph_free(g);
	remat_graph_free(want);
}

static void test_chain_random_ranges(void **state)
{
	struct remat_gen_chain_opts o;
	struct remat_graph *g = NULL;
	int32_t i, distinct_mem = 0, distinct_cost = 0;
	char id[16];

	(void)state;
	remat_gen_chain_opts_init(&o);
	o.n = 200;
	o.random = 1;
	o.mem_min = 100;
	o.mem_max = 200;
	o.cost_min = 2.5; /* integers 3..5 */
	o.cost_max = 5;
	o.seed = 42;
	assert_int_equal(remat_gen_chain(&o, &g, NULL), REMAT_OK);
	assert_int_equal(g->n, 2 * 200 + 2);
	assert_int_equal(g->mem[remat_graph_find(g, "x")], g->mem[remat_graph_find(g, "f1")]);
	for (i = 1; i <= 200; i++) {
		int32_t f, b;

		snprintf(id, sizeof(id), "f%d", i);
		f = remat_graph_find(g, id);
		snprintf(id, sizeof(id), "b%d", i);
		b = remat_graph_find(g, id);
		assert_true(f >= 0 && b >= 0);
		assert_true(g->mem[f] >= 100 && g->mem[f] <= 200);
		assert_true(g->cost[f] == 3 || g->cost[f] == 4 || g->cost[f] == 5);
		assert_true(g->cost[b] == 2 * g->cost[f]);
		assert_int_equal(g->mem[b], g->mem[f]);
		if (i > 1) {
			distinct_mem += g->mem[f] != g->mem[f - 1];
			distinct_cost += g->cost[f] != g->cost[f - 1];
		}
	}
	/* Uniform draws: consecutive layers differ most of the time. */
	assert_true(distinct_mem > 150);
	assert_true(distinct_cost > 100);
	remat_graph_free(g);
}

/* Same options, same bytes; another seed, other bytes. */
static void test_determinism(void **state)
{
	struct remat_gen_chain_opts c;
	struct remat_gen_layered_opts l;
	struct remat_graph *g1 = NULL, *g2 = NULL, *g3 = NULL;
	char *t1, *t2, *t3;
	int round;

	(void)state;
	for (round = 0; round < 2; round++) {
		if (round == 0) {
			remat_gen_chain_opts_init(&c);
			c.n = 50;
			c.random = 1;
			c.seed = 7;
			assert_int_equal(remat_gen_chain(&c, &g1, NULL), REMAT_OK);
			assert_int_equal(remat_gen_chain(&c, &g2, NULL), REMAT_OK);
			c.seed = 8;
			assert_int_equal(remat_gen_chain(&c, &g3, NULL), REMAT_OK);
		} else {
			remat_gen_layered_opts_init(&l);
			l.n = 300;
			l.seed = 7;
			assert_int_equal(remat_gen_layered(&l, &g1, NULL), REMAT_OK);
			assert_int_equal(remat_gen_layered(&l, &g2, NULL), REMAT_OK);
			l.seed = 8;
			assert_int_equal(remat_gen_layered(&l, &g3, NULL), REMAT_OK);
		}
		t1 = gc_write(g1);
		t2 = gc_write(g2);
		t3 = gc_write(g3);
		assert_string_equal(t1, t2);
		assert_true(strcmp(t1, t3) != 0);
		gc_assert_round_trip(g1, "generated");
		free(t1);
		free(t2);
		free(t3);
		remat_graph_free(g1);
		remat_graph_free(g2);
		remat_graph_free(g3);
	}
}

static const char *const DIAMOND = HDR
	"{\"id\":\"a\",\"kind\":\"input\",\"mem\":8},"
	"{\"id\":\"b\",\"mem\":4,\"cost\":3,\"inputs\":[\"a\"]},"
	"{\"id\":\"c\",\"mem\":2,\"cost\":5,\"inputs\":[\"a\"]},"
	"{\"id\":\"d\",\"mem\":1,\"cost\":7,\"inputs\":[\"b\",\"c\"]}]}";

static void test_train_diamond(void **state)
{
	struct remat_graph *f = tu_graph(DIAMOND), *g = NULL;
	struct remat_graph *want = tu_graph(HDR
		"{\"id\":\"a\",\"kind\":\"input\",\"mem\":8},"
		"{\"id\":\"b\",\"kind\":\"forward\",\"mem\":4,\"cost\":3,\"inputs\":[\"a\"]},"
		"{\"id\":\"c\",\"kind\":\"forward\",\"mem\":2,\"cost\":5,\"inputs\":[\"a\"]},"
		"{\"id\":\"d\",\"kind\":\"forward\",\"mem\":1,\"cost\":7,\"inputs\":[\"b\",\"c\"]},"
		"{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":16,\"cost\":2.5,\"inputs\":[\"d\"]},"
		"{\"id\":\"d_backward\",\"kind\":\"backward\",\"mem\":1,\"cost\":21,"
		" \"inputs\":[\"loss\",\"b\",\"c\",\"d\"],\"grad_of\":\"d\"},"
		"{\"id\":\"c_backward\",\"kind\":\"backward\",\"mem\":2,\"cost\":15,"
		" \"inputs\":[\"d_backward\",\"a\",\"c\"],\"grad_of\":\"c\"},"
		"{\"id\":\"b_backward\",\"kind\":\"backward\",\"mem\":4,\"cost\":9,"
		" \"inputs\":[\"d_backward\",\"a\",\"b\"],\"grad_of\":\"b\"}]}");
	struct remat_train_opts o;

	(void)state;
	remat_train_opts_init(&o);
	o.backward_factor = 3;
	o.loss_mem = 16;
	o.loss_cost = 2.5;
	assert_int_equal(remat_graph_train(f, &o, &g, NULL), REMAT_OK);
	gc_assert_same(g, want, "diamond");
	assert_string_equal(g->name, "t.json-train");
	assert_int_equal(g->n_outputs, 2); /* c_backward, b_backward */
	remat_graph_free(f);
	remat_graph_free(g);
	remat_graph_free(want);
}

/* An output that also has users: its backward reads both. */
static void test_train_output_with_users(void **state)
{
	struct remat_graph *f = tu_graph(HDR
		"{\"id\":\"a\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"b\",\"mem\":1,\"inputs\":[\"a\"]},"
		"{\"id\":\"c\",\"mem\":1,\"inputs\":[\"b\"]}],\"outputs\":[\"b\",\"c\"]}");
	struct remat_graph *want = tu_graph(HDR
		"{\"id\":\"a\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"b\",\"kind\":\"forward\",\"mem\":1,\"inputs\":[\"a\"]},"
		"{\"id\":\"c\",\"kind\":\"forward\",\"mem\":1,\"inputs\":[\"b\"]},"
		"{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":4,\"inputs\":[\"b\",\"c\"]},"
		"{\"id\":\"c_backward\",\"kind\":\"backward\",\"mem\":1,\"cost\":2,"
		" \"inputs\":[\"loss\",\"b\",\"c\"],\"grad_of\":\"c\"},"
		"{\"id\":\"b_backward\",\"kind\":\"backward\",\"mem\":1,\"cost\":2,"
		" \"inputs\":[\"c_backward\",\"loss\",\"a\",\"b\"],\"grad_of\":\"b\"}]}");
	struct remat_graph *g = NULL;

	(void)state;
	assert_int_equal(remat_graph_train(f, NULL, &g, NULL), REMAT_OK);
	gc_assert_same(g, want, "output with users");
	remat_graph_free(f);
	remat_graph_free(g);
	remat_graph_free(want);
}

static void expect_train_err(const char *json, const char *msg)
{
	struct remat_graph *f = tu_graph(json), *g = NULL;
	struct remat_error err;

	assert_int_equal(remat_graph_train(f, NULL, &g, &err), REMAT_EINPUT);
	assert_null(g);
	assert_string_equal(err.msg, msg);
	remat_graph_free(f);
}

static void test_train_errors(void **state)
{
	(void)state;
	expect_train_err(HDR "{\"id\":\"a\",\"mem\":1},{\"id\":\"l\",\"kind\":\"loss\",\"mem\":1,"
			 "\"inputs\":[\"a\"]}]}",
			 "t.json: node 'l': already a training graph (kind loss)");
	expect_train_err(HDR "{\"id\":\"loss\",\"mem\":1}]}",
			 "t.json: node 'loss': the id is taken, so the loss node cannot have it");
	expect_train_err(HDR "{\"id\":\"a\",\"mem\":1},{\"id\":\"a_backward\",\"mem\":1,"
			 "\"inputs\":[\"a\"]}]}",
			 "t.json: node 'a_backward': the id is taken, so the backward node of 'a' cannot have it");
	expect_train_err(HDR "{\"id\":\"a\",\"kind\":\"input\",\"mem\":1}]}",
			 "t.json: the graph has no non-input output for a loss to read");
}

static void test_unet_depth1_by_hand(void **state)
{
	struct remat_gen_unet_opts o;
	struct remat_graph *g = NULL, *want = tu_graph(HDR
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":8},"
		"{\"id\":\"e1a\",\"kind\":\"forward\",\"mem\":8,\"cost\":9,\"inputs\":[\"x\"]},"
		"{\"id\":\"e1b\",\"kind\":\"forward\",\"mem\":8,\"cost\":9,\"inputs\":[\"e1a\"]},"
		"{\"id\":\"p1\",\"kind\":\"forward\",\"mem\":4,\"cost\":0.5,\"inputs\":[\"e1b\"]},"
		"{\"id\":\"m1\",\"kind\":\"forward\",\"mem\":4,\"cost\":4.5,\"inputs\":[\"p1\"]},"
		"{\"id\":\"m2\",\"kind\":\"forward\",\"mem\":4,\"cost\":4.5,\"inputs\":[\"m1\"]},"
		"{\"id\":\"u1\",\"kind\":\"forward\",\"mem\":8,\"cost\":1,\"inputs\":[\"m2\"]},"
		"{\"id\":\"c1\",\"kind\":\"forward\",\"mem\":16,\"cost\":2,\"inputs\":[\"u1\",\"e1b\"]},"
		"{\"id\":\"d1a\",\"kind\":\"forward\",\"mem\":8,\"cost\":9,\"inputs\":[\"c1\"]},"
		"{\"id\":\"d1b\",\"kind\":\"forward\",\"mem\":8,\"cost\":9,\"inputs\":[\"d1a\"]},"
		"{\"id\":\"head\",\"kind\":\"forward\",\"mem\":8,\"cost\":1,\"inputs\":[\"d1b\"]}]}");

	(void)state;
	remat_gen_unet_opts_init(&o);
	o.depth = 1;
	o.mem = 8;
	assert_int_equal(remat_gen_unet(&o, &g, NULL), REMAT_OK);
	gc_assert_same(g, want, "unet 1");
	assert_string_equal(g->name, "unet-d1");
	gc_assert_round_trip(g, "unet 1");
	remat_graph_free(g);
	remat_graph_free(want);
}

/* Depth 4: every concat reads its encoder level (the long skips). */
static void test_unet_skips_and_train(void **state)
{
	struct remat_gen_unet_opts o;
	struct remat_graph *g = NULL;
	char c[8], e[8];
	int32_t k, v;

	(void)state;
	remat_gen_unet_opts_init(&o);
	o.train = 1;
	assert_int_equal(remat_gen_unet(&o, &g, NULL), REMAT_OK);
	/* x + 4 x 3 encoder + 2 middle + 4 x 4 decoder + head = 32 forward-side. */
	assert_int_equal(g->n, 32 + 1 + 31);
	assert_int_equal(g->n_backward, 31);
	assert_string_equal(g->name, "unet-d4-train");
	for (k = 1; k <= 4; k++) {
		snprintf(c, sizeof(c), "c%d", k);
		snprintf(e, sizeof(e), "e%db", k);
		v = remat_graph_find(g, c);
		assert_true(v >= 0);
		assert_int_equal(g->in_off[v + 1] - g->in_off[v], 2);
		assert_string_equal(g->id[g->in_idx[g->in_off[v] + 1]], e);
		assert_int_equal(g->mem[v], 2 * ((8 << 20) >> (k - 1)));
	}
	remat_graph_free(g);
}

static int layer_of(const struct remat_graph *g, int32_t v)
{
	int k = -1;

	assert_non_null(g->label[v]);
	assert_int_equal(sscanf(g->label[v], "layer %d", &k), 1);
	return k;
}

/* Structural promises of the layered generator (remat/gen.h steps 1-5). */
static void test_layered_properties(void **state)
{
	struct remat_gen_layered_opts o;
	struct remat_graph *g = NULL;
	int32_t v, k, L = 0, *width, src, sink, n_layers = 0;
	int64_t inner = 0, skips = 0;
	double mean;

	(void)state;
	remat_gen_layered_opts_init(&o);
	o.n = 1000;
	o.seed = 3;
	assert_int_equal(remat_gen_layered(&o, &g, NULL), REMAT_OK);
	assert_int_equal(g->n, 1000);
	src = remat_graph_find(g, "0");
	sink = remat_graph_find(g, "1");
	assert_int_equal(layer_of(g, src), 0);
	L = layer_of(g, sink) - 1;
	width = calloc((size_t)L + 2, sizeof(int32_t));
	for (v = 0; v < g->n; v++) {
		int l = layer_of(g, v);
		int has_prev = 0, has_next = 0;

		width[l]++;
		assert_int_equal(g->mem[v] % 10, 0);
		assert_true(g->mem[v] >= 10);
		if (v == src || v == sink)
			assert_true(g->cost[v] == 0);
		else
			assert_true(g->cost[v] >= 1 && g->cost[v] <= 1000 &&
				    g->cost[v] == floor(g->cost[v]));
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int lu = layer_of(g, g->in_idx[k]);

			assert_true(lu < l);
			has_prev |= lu == l - 1;
			if (v != sink && lu != 0) {
				inner++;
				skips += lu < l - 1;
			}
			if (k > g->in_off[v]) /* inputs sorted by node number */
				assert_true(atoi(g->id[g->in_idx[k]]) > atoi(g->id[g->in_idx[k - 1]]));
		}
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			has_next |= layer_of(g, g->use_idx[k]) == l + 1;
		if (v != src)
			assert_true(has_prev);
		if (v != sink)
			assert_true(has_next);
		/* The source feeds exactly layer 1; the sink reads exactly layer L. */
		if (v != src && v != sink)
			assert_int_equal(l == 1, g->in_off[v + 1] - g->in_off[v] > 0 &&
					 g->in_idx[g->in_off[v]] == src);
	}
	assert_int_equal(g->use_off[src + 1] - g->use_off[src], width[1]);
	assert_int_equal(g->in_off[sink + 1] - g->in_off[sink], width[L]);
	/* Widths within m(1 +- 0.75) (the last layer takes what is left). */
	for (k = 1; k <= L; k++) {
		double m = 2 * 0.31 * sqrt(1000.0);

		if (k < L)
			assert_true(width[k] >= (int)floor(m * 0.25 + 0.5) &&
				    width[k] <= (int)floor(m * 1.75 + 0.5));
		n_layers++;
	}
	mean = 998.0 / n_layers;
	assert_true(mean > 2 * 0.31 * sqrt(1000.0) * 0.8 && mean < 2 * 0.31 * sqrt(1000.0) * 1.2);
	/* A fraction skip_density of inner edges skip, up to rounding. */
	assert_true(fabs((double)skips / (double)inner - 0.14) < 0.002);
	free(width);
	remat_graph_free(g);
}

/* Constant widths, all consecutive pairs, no skips: countable by hand. */
static void test_layered_complete(void **state)
{
	struct remat_gen_layered_opts o;
	struct remat_graph *g = NULL;
	char id[16];
	int32_t v, k;

	(void)state;
	remat_gen_layered_opts_init(&o);
	o.n = 102;
	o.width = 0.5;     /* m = sqrt(102) = 10.1: ten layers of ten */
	o.width_var = 0;
	o.edge_density = 1;
	o.skip_density = 0;
	assert_int_equal(remat_gen_layered(&o, &g, NULL), REMAT_OK);
	assert_int_equal(g->n_edges, 9 * 100 + 10 + 10);
	for (v = 2; v < 102; v++) {
		int32_t u = remat_graph_find(g, (snprintf(id, sizeof(id), "%d", v), id));
		int l = (v - 2) / 10 + 1;

		assert_int_equal(layer_of(g, u), l);
		assert_int_equal(g->in_off[u + 1] - g->in_off[u], l == 1 ? 1 : 10);
		for (k = 0; l > 1 && k < 10; k++)
			assert_int_equal(atoi(g->id[g->in_idx[g->in_off[u] + k]]), 2 + (l - 2) * 10 + k);
	}
	v = remat_graph_find(g, "1");
	assert_int_equal(g->in_off[v + 1] - g->in_off[v], 10);
	assert_string_equal(g->id[g->in_idx[g->in_off[v]]], "92");
	remat_graph_free(g);
}

static void test_bad_options(void **state)
{
	struct remat_gen_chain_opts c;
	struct remat_gen_layered_opts l;
	struct remat_gen_unet_opts u;
	struct remat_graph *g = NULL;
	struct remat_error err;

	(void)state;
	remat_gen_chain_opts_init(&c);
	c.n = 0;
	assert_int_equal(remat_gen_chain(&c, &g, &err), REMAT_EUSAGE);
	c.n = 3;
	c.random = 1;
	c.mem_min = 10;
	c.mem_max = 5;
	assert_int_equal(remat_gen_chain(&c, &g, &err), REMAT_EUSAGE);
	remat_gen_layered_opts_init(&l);
	l.skip_density = 1;
	assert_int_equal(remat_gen_layered(&l, &g, &err), REMAT_EUSAGE);
	l.skip_density = 0.1;
	l.n = 2;
	assert_int_equal(remat_gen_layered(&l, &g, &err), REMAT_EUSAGE);
	remat_gen_unet_opts_init(&u);
	u.depth = 5;
	u.mem = 16;
	assert_int_equal(remat_gen_unet(&u, &g, &err), REMAT_EUSAGE);
	assert_null(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain2_by_hand),
		cmocka_unit_test(test_chain4_is_the_example),
		cmocka_unit_test(test_chain_forward_only),
		cmocka_unit_test(test_chain_random_ranges),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_train_diamond),
		cmocka_unit_test(test_train_output_with_users),
		cmocka_unit_test(test_train_errors),
		cmocka_unit_test(test_unet_depth1_by_hand),
		cmocka_unit_test(test_unet_skips_and_train),
		cmocka_unit_test(test_layered_properties),
		cmocka_unit_test(test_layered_complete),
		cmocka_unit_test(test_bad_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
