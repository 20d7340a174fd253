/*
 * test_import_nx.c - the networkx node-link importer: hand-made files in
 * both published dialects with their expected remat-graphs written out by
 * hand, its error messages, and (when ../shared/benchmarks exists) the
 * published graphs against their published conversion, node for node.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The published files and the name of their published conversion. */
static const struct {
	const char *nx, *conv;
	unsigned flags;
} PUBLISHED[] = {
	{ "MobileNet_MLSys_512_224_224_3_test_nx.json", "mobilenet-infer.json", 0 },
	{ "MobileNet_MLSys_512_224_224_3_train_nx.json", "mobilenet-train.json", 0 },
	{ "ResNet50_MLSys_256_224_224_3_test_nx.json", "resnet50-infer.json", 0 },
	{ "ResNet50_MLSys_256_224_224_3_train_nx.json", "resnet50-train.json", 0 },
	{ "VGG16_MLSys_256_224_224_3_test_nx.json", "vgg16-infer.json", 0 },
	{ "VGG16_MLSys_256_224_224_3_train_nx.json", "vgg16-train.json", 0 },
	{ "VGG19_MLSys_256_224_224_3_test_nx.json", "vgg19-infer.json", 0 },
	{ "VGG19_MLSys_256_224_224_3_train_nx.json", "vgg19-train.json", 0 },
	{ "fcn_8_vgg_MLSys_32_416_608_3_test_nx.json", "fcn-8-vgg-infer.json", 0 },
	{ "fcn_8_vgg_MLSys_32_416_608_3_train_nx.json", "fcn-8-vgg-train.json", 0 },
	{ "segnet_MLSys_32_416_608_3_test_nx.json", "segnet-infer.json", 0 },
	{ "segnet_MLSys_32_416_608_3_train_nx.json", "segnet-train.json", 0 },
	{ "vgg_unet_MLSys_32_416_608_3_test_nx.json", "vgg-unet-infer.json", 0 },
	{ "vgg_unet_MLSys_32_416_608_3_train_nx.json", "vgg-unet-train.json", 0 },
	{ "random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json", "random-layered-n100.json", 0 },
	{ "random_layered_n250_w0.43_nlv0.75_ed0.2_scd0.14.json", "random-layered-n250.json", 0 },
	{ "random_layered_n500_w0.36_nlv0.75_ed0.2_scd0.14.json", "random-layered-n500.json", 0 },
	{ "random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json", "random-layered-n1000.json", 0 },
	{ "random_layered_n100_w0.27_nlv0.75_ed0.2_scd0.14.json",
	  "random-layered-n100-paper-order.json", REMAT_NX_GRAPH_ORDER },
	{ "random_layered_n250_w0.43_nlv0.75_ed0.2_scd0.14.json",
	  "random-layered-n250-paper-order.json", REMAT_NX_GRAPH_ORDER },
	{ "random_layered_n500_w0.36_nlv0.75_ed0.2_scd0.14.json",
	  "random-layered-n500-paper-order.json", REMAT_NX_GRAPH_ORDER },
	{ "random_layered_n1000_w0.31_nlv0.75_ed0.2_scd0.14.json",
	  "random-layered-n1000-paper-order.json", REMAT_NX_GRAPH_ORDER },
};

#define BENCH REMAT_SOURCE_DIR "/../shared/benchmarks"

static void test_published(void **state)
{
	struct stat st;
	size_t i;
	int n_nx = 0;
	DIR *d;
	struct dirent *e;

	(void)state;
	if (stat(BENCH "/published-nx", &st) != 0 || stat(BENCH "/published", &st) != 0) {
		print_message("no %s: skipped\n", BENCH);
		skip();
	}
	/* Every released file is in the table (a new one must be added). */
	d = opendir(BENCH "/published-nx");
	assert_non_null(d);
	while ((e = readdir(d))) {
		int found = 0;

		if (!strstr(e->d_name, ".json"))
			continue;
		n_nx++;
		for (i = 0; i < sizeof(PUBLISHED) / sizeof(PUBLISHED[0]); i++)
			found |= strcmp(PUBLISHED[i].nx, e->d_name) == 0;
		if (!found)
			fail_msg("%s is not in the test's table", e->d_name);
	}
	closedir(d);
	assert_int_equal(n_nx, 18);
	for (i = 0; i < sizeof(PUBLISHED) / sizeof(PUBLISHED[0]); i++) {
		char a[512], b[512];
		struct remat_graph *g = NULL, *want = NULL;
		struct remat_error err;

		snprintf(a, sizeof(a), "%s/published-nx/%s", BENCH, PUBLISHED[i].nx);
		snprintf(b, sizeof(b), "%s/published/%s", BENCH, PUBLISHED[i].conv);
		if (remat_nx_load_file(a, PUBLISHED[i].flags, &g, &err))
			fail_msg("%s", err.msg);
		if (remat_graph_load_file(b, &want, &err))
			fail_msg("%s", err.msg);
		gc_assert_same(g, want, PUBLISHED[i].conv);
		assert_int_equal(g->no_remat_peak, want->no_remat_peak);
		gc_assert_round_trip(g, PUBLISHED[i].conv);
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
		cmocka_unit_test(test_published),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
