/*
 * test_import_nx.c - the networkx node-link importer: hand-made files in
 * both published dialects with their expected remat-graphs written out by
 * hand (inline, and as files under tests/data/nx/ shaped like the
 * published ones, with their no-remat peaks worked out by hand), and its
 * error messages.  The published graphs themselves (kept outside the
 * repository) are compared with their published conversion by
 * 'tests/stress/stress.py --full'.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "gcompare.h"

static struct remat_graph *nx(const char *json, unsigned flags)
{
	struct remat_graph *g = NULL;
	struct remat_error err;

	remat_error_clear(&err);
	if (remat_nx_load_buffer(json, strlen(json), "n.json", flags, &g, &err))
		fail_msg("node-link graph did not load: %s", err.msg);
	return g;
}

/* Checkmate dialect: int ids, names, backward flags, a Loss. */
static const char *const CHECKMATE =
	"{\"directed\": true, \"multigraph\": false,"
	" \"graph\": {\"name\": \"tiny (MLSys)_train\"},"
	" \"nodes\": ["
	"  {\"name\": \"conv\", \"backward\": false, \"cost_cpu\": 10, \"cost_ram\": 400, \"id\": 0},"
	"  {\"name\": \"fc\", \"backward\": false, \"cost_cpu\": 5, \"cost_ram\": 40, \"id\": 1},"
	"  {\"name\": \"Loss\", \"backward\": true, \"cost_cpu\": 1, \"cost_ram\": 4, \"id\": 2},"
	"  {\"name\": \"fc_backward\", \"backward\": true, \"cost_cpu\": 9, \"cost_ram\": 40, \"id\": 3},"
	"  {\"name\": \"conv_backward\", \"backward\": true, \"cost_cpu\": 21.5, \"cost_ram\": 400, \"id\": 4},"
	"  {\"name\": \"odd_backward\", \"backward\": true, \"cost_cpu\": 1, \"cost_ram\": 8, \"id\": 5}],"
	" \"links\": [{\"source\": 0, \"target\": 1}, {\"source\": 1, \"target\": 2},"
	"  {\"source\": 2, \"target\": 3}, {\"source\": 1, \"target\": 3},"
	"  {\"source\": 3, \"target\": 4}, {\"source\": 0, \"target\": 4},"
	"  {\"source\": 1, \"target\": 4}, {\"source\": 4, \"target\": 5}]}";

/* The same graph as a remat-graph, written by hand from the mapping. */
static const char *const CHECKMATE_EXPECTED =
	"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
	"{\"id\":\"conv\",\"kind\":\"forward\",\"mem\":400,\"cost\":10},"
	"{\"id\":\"fc\",\"kind\":\"forward\",\"mem\":40,\"cost\":5,\"inputs\":[\"conv\"]},"
	"{\"id\":\"Loss\",\"kind\":\"loss\",\"mem\":4,\"cost\":1,\"inputs\":[\"fc\"]},"
	"{\"id\":\"fc_backward\",\"kind\":\"backward\",\"mem\":40,\"cost\":9,"
	" \"inputs\":[\"Loss\",\"fc\"],\"grad_of\":\"fc\"},"
	"{\"id\":\"conv_backward\",\"kind\":\"backward\",\"mem\":400,\"cost\":21.5,"
	" \"inputs\":[\"fc_backward\",\"conv\",\"fc\"],\"grad_of\":\"conv\"},"
	"{\"id\":\"odd_backward\",\"kind\":\"backward\",\"mem\":8,\"cost\":1,"
	" \"inputs\":[\"conv_backward\"]}]}";

static void test_checkmate_dialect(void **state)
{
	struct remat_graph *g = nx(CHECKMATE, 0), *want = tu_graph(CHECKMATE_EXPECTED);

	(void)state;
	gc_assert_same(g, want, "checkmate");
	assert_string_equal(g->name, "tiny (MLSys)_train");
	/* Detected by the ordinary loader as well. */
	remat_graph_free(want);
	want = tu_graph(CHECKMATE);
	gc_assert_same(want, g, "auto-detected");
	gc_assert_round_trip(g, "checkmate round trip");
	remat_graph_free(g);
	remat_graph_free(want);
}

/*
 * Random layered dialect: nodes keyed by "name" (ints), links "0"/"1",
 * no backward field (kind op), graph.order a different topological order.
 */
static const char *const LAYERED =
	"{\"directed\": true, \"graph\": {\"name\": \"rl\", \"order\": [0, 3, 2, 4, 1]},"
	" \"nodes\": ["
	"  {\"out_cost\": 70, \"param_cost\": 0, \"duration\": 0, \"name\": 0},"
	"  {\"out_cost\": 10, \"param_cost\": 0, \"duration\": 0, \"name\": 1},"
	"  {\"out_cost\": 20, \"param_cost\": 0, \"duration\": 514, \"name\": 2},"
	"  {\"out_cost\": 30, \"param_cost\": 0, \"duration\": 896, \"name\": 3},"
	"  {\"out_cost\": 40, \"param_cost\": 0, \"duration\": 7, \"name\": 4}],"
	" \"links\": [{\"0\": 0, \"1\": 2}, {\"0\": 0, \"1\": 3}, {\"0\": 3, \"1\": 4},"
	"  {\"0\": 2, \"1\": 4}, {\"0\": 4, \"1\": 1}, {\"0\": 0, \"1\": 4}]}";

static void test_layered_dialect(void **state)
{
	struct remat_graph *g = nx(LAYERED, 0), *p = nx(LAYERED, REMAT_NX_GRAPH_ORDER);
	struct remat_graph *want = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"0\",\"mem\":70,\"cost\":0},"
		"{\"id\":\"1\",\"mem\":10,\"cost\":0,\"inputs\":[\"4\"]},"
		"{\"id\":\"2\",\"mem\":20,\"cost\":514,\"inputs\":[\"0\"]},"
		"{\"id\":\"3\",\"mem\":30,\"cost\":896,\"inputs\":[\"0\"]},"
		"{\"id\":\"4\",\"mem\":40,\"cost\":7,\"inputs\":[\"3\",\"2\",\"0\"]}]}");
	struct remat_graph *want_p = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"0\",\"mem\":70,\"cost\":0},"
		"{\"id\":\"3\",\"mem\":30,\"cost\":896,\"inputs\":[\"0\"]},"
		"{\"id\":\"2\",\"mem\":20,\"cost\":514,\"inputs\":[\"0\"]},"
		"{\"id\":\"4\",\"mem\":40,\"cost\":7,\"inputs\":[\"3\",\"2\",\"0\"]},"
		"{\"id\":\"1\",\"mem\":10,\"cost\":0,\"inputs\":[\"4\"]}]}");

	(void)state;
	gc_assert_same(g, want, "layered");
	gc_assert_same(p, want_p, "layered, graph order");
	/* In graph order, Kahn's order is the file order: 0 3 2 4 1. */
	assert_int_equal(p->topo[1], 1);
	remat_graph_free(g);
	remat_graph_free(p);
	remat_graph_free(want);
	remat_graph_free(want_p);
}

/* 7 and "7" are different networkx keys; ids render both as "7". */
static void test_number_and_string_keys(void **state)
{
	struct remat_error err;
	int rc;

	(void)state;
	rc = tu_graph_err("{\"nodes\":[{\"id\":7,\"mem\":1},{\"id\":\"7\",\"mem\":1}],"
			  "\"links\":[{\"source\":7,\"target\":\"7\"}]}", &err);
	assert_int_equal(rc, REMAT_EINPUT);
	assert_string_equal(err.msg, "t.json: node '7': duplicate 'id' (also nodes[0])");
}

static void expect_err(const char *json, const char *msg)
{
	struct remat_error err;

	assert_int_equal(tu_graph_err(json, &err), REMAT_EINPUT);
	assert_string_equal(err.msg, msg);
}

static void test_errors(void **state)
{
	(void)state;
	expect_err("{\"directed\":false,\"nodes\":[],\"links\":[]}",
		   "t.json: 'directed' must be true: a computation graph is directed");
	expect_err("{\"nodes\":[{\"id\":0,\"name\":\"a\",\"cost_ram\":1}],"
		   "\"links\":[{\"source\":0,\"target\":9}]}",
		   "t.json: links[0]: 'target': unknown node 9");
	expect_err("{\"nodes\":[{\"name\":0,\"out_cost\":1}],\"links\":[{\"0\":0}]}",
		   "t.json: links[0]: 'target' is required");
	expect_err("{\"nodes\":[{\"id\":0,\"name\":\"a\",\"cost_cpu\":3}],\"links\":[]}",
		   "t.json: node 'a': 'cost_ram' is required (or 'out_cost', 'mem')");
	expect_err("{\"nodes\":[{\"id\":0,\"name\":\"a\",\"cost_ram\":-4}],\"links\":[]}",
		   "t.json: node 'a': 'cost_ram' must be an integer number of bytes from 0 to 2^53 (got -4)");
	expect_err("{\"nodes\":[{\"id\":0,\"name\":\"a\",\"cost_ram\":4,\"cost_cpu\":\"x\"}],\"links\":[]}",
		   "t.json: node 'a': 'cost_cpu' must be a finite number >= 0 (got \"x\")");
	expect_err("{\"nodes\":[{\"id\":0,\"name\":\"a\",\"cost_ram\":4,\"backward\":1}],\"links\":[]}",
		   "t.json: node 'a': 'backward' must be true or false (got 1)");
	expect_err("{\"nodes\":[{\"id\":0,\"name\":\"a\",\"cost_ram\":4},{\"id\":0,\"name\":\"b\",\"cost_ram\":4}],\"links\":[]}",
		   "t.json: node 'b': 'id' is not unique (got 0)");
	expect_err("{\"nodes\":[{\"mem\":4}],\"links\":[]}",
		   "t.json: nodes[0]: 'id' or 'name' is required");
	expect_err("{\"nodes\":[{\"id\":0,\"name\":\"a\",\"cost_ram\":1},{\"id\":1,\"name\":\"b\",\"cost_ram\":1}],"
		   "\"links\":[{\"source\":0,\"target\":1},{\"source\":1,\"target\":0}]}",
		   "t.json: node 'b': 'inputs' form a cycle: b -> a -> b");
	expect_err("{\"nodes\":{},\"links\":[]}", "t.json: 'nodes' must be an array");
}

static void test_graph_order_errors(void **state)
{
	struct remat_graph *g = NULL;
	struct remat_error err;
	const char *bad = "{\"graph\":{\"order\":[0,0]},\"nodes\":[{\"name\":0,\"mem\":1},"
			  "{\"name\":1,\"mem\":1}],\"links\":[]}";
	const char *none = "{\"nodes\":[{\"name\":0,\"mem\":1}],\"links\":[]}";
	const char *fmt = "{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[],\"links\":[]}";

	(void)state;
	assert_int_equal(remat_nx_load_buffer(bad, strlen(bad), "n.json", REMAT_NX_GRAPH_ORDER,
					      &g, &err), REMAT_EINPUT);
	assert_string_equal(err.msg, "n.json: 'graph': 'order'[1]: repeated node 0");
	assert_int_equal(remat_nx_load_buffer(none, strlen(none), "n.json", REMAT_NX_GRAPH_ORDER,
					      &g, &err), REMAT_EINPUT);
	assert_string_equal(err.msg, "n.json: 'graph': 'order' must be an array of node keys");
	assert_int_equal(remat_nx_load_buffer(fmt, strlen(fmt), "n.json", 0, &g, &err),
			 REMAT_EINPUT);
	assert_string_equal(err.msg, "n.json: not networkx node-link JSON (needs 'nodes' and "
			    "'links', and no 'format')");
}

/*
 * tests/data/nx/: files in the published shapes (README there) and their
 * conversions written by hand, with figures worked out by hand:
 *
 * tiny train (file order = Kahn's order; bytes resident while each runs):
 *   conv1 4096, relu1 8192, conv2 10240, add 12288, predictions 12352,
 *   Loss 12356, predictions_backward 12420 (Loss freed after), add_backward
 *   14464 (predictions, its backward freed), conv2_backward 16384,
 *   relu1_backward 16384 + 4096 = 20480 (conv2, add and their backwards
 *   freed after), conv1_backward 12288 + 4096 = 16384.  Peak 20480.
 *   Lower bound: relu1_backward reads 4096+2048+2048+2048+2048, is 4096:
 *   16384 (conv1_backward too).  Baseline 40+5+40+3+10+1+12+4+80+6+85 = 286.
 * tiny test: conv1 4096, relu1 8192 (conv1 freed), conv2 6144, add 8192
 *   (relu1, conv2 freed), predictions 2112: peak 8192 = the lower bound
 *   (add: 4096+2048+2048).  Baseline 98.
 * random layered, file order: Kahn gives 0 2 3 4 5 1: 100, 130, 190, 210
 *   (2 freed), 220 (0, 3 freed), 110: peak 220.  graph.order 0 3 2 5 4 1:
 *   100, 160, 190, 230 (0 freed), 150 (3, 2 freed), 110: peak 230.  Lower
 *   bound: 5 reads 0 and 3: 100+60+40 = 200.  Baseline 514+896+7+250 = 1667.
 */
static const struct {
	const char *nx, *expected;
	unsigned flags;
	const char *name;
	int64_t peak, lower_bound;
	double baseline;
	int training;
} FIXTURES[] = {
	{ "tiny_MLSys_4_8_8_3_train_nx.json", "tiny-train.expected.json", 0,
	  "Tiny (MLSys)_4_(8, 8, 3)_train", 20480, 16384, 286, 1 },
	{ "tiny_MLSys_4_8_8_3_test_nx.json", "tiny-infer.expected.json", 0,
	  "Tiny (MLSys)_4_(8, 8, 3)_test", 8192, 8192, 98, 0 },
	{ "random_layered_n6_tiny.json", "random-layered-n6.expected.json", 0,
	  "random_layered_n6_tiny", 220, 200, 1667, 0 },
	{ "random_layered_n6_tiny.json", "random-layered-n6-graph-order.expected.json",
	  REMAT_NX_GRAPH_ORDER, "random_layered_n6_tiny", 230, 200, 1667, 0 },
};

#define NXDATA REMAT_SOURCE_DIR "/tests/data/nx"

static void test_fixture_files(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(FIXTURES) / sizeof(FIXTURES[0]); i++) {
		char a[512], b[512];
		struct remat_graph *g = NULL, *want = NULL, *auto_g = NULL;
		struct remat_error err;

		snprintf(a, sizeof(a), "%s/%s", NXDATA, FIXTURES[i].nx);
		snprintf(b, sizeof(b), "%s/%s", NXDATA, FIXTURES[i].expected);
		if (remat_nx_load_file(a, FIXTURES[i].flags, &g, &err))
			fail_msg("%s", err.msg);
		if (remat_graph_load_file(b, &want, &err))
			fail_msg("%s", err.msg);
		gc_assert_same(g, want, FIXTURES[i].expected);
		assert_string_equal(g->name, FIXTURES[i].name);
		assert_int_equal(g->no_remat_peak, FIXTURES[i].peak);
		assert_int_equal(g->min_peak_lower_bound, FIXTURES[i].lower_bound);
		assert_true(g->baseline_cost == FIXTURES[i].baseline);
		assert_int_equal(g->n_backward > 0, FIXTURES[i].training);
		assert_int_equal(g->n_inputs, 0);
		gc_assert_round_trip(g, FIXTURES[i].expected);
		if (FIXTURES[i].flags == 0) {
			/* The ordinary loader detects node-link files by itself. */
			if (remat_graph_load_file(a, &auto_g, &err))
				fail_msg("%s", err.msg);
			gc_assert_same(auto_g, want, "auto-detected");
			remat_graph_free(auto_g);
		}
		remat_graph_free(g);
		remat_graph_free(want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_checkmate_dialect),
		cmocka_unit_test(test_layered_dialect),
		cmocka_unit_test(test_number_and_string_keys),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_graph_order_errors),
		cmocka_unit_test(test_fixture_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
