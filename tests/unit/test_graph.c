/* test_graph.c - the loader and builder: every rule of FORMATS.md section 1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define HEAD "{\"format\":\"remat-graph\",\"version\":1,"

/* Load json expecting REMAT_EINPUT with a message containing each of want[]. */
static void expect_error(const char *json, const char *const *want)
{
	struct remat_error err;
	int rc = tu_graph_err(json, &err);

	if (rc != REMAT_EINPUT)
		fail_msg("expected a bad-input error, got %d (%s) for %s", rc, err.msg, json);
	for (; *want; want++)
		if (!strstr(err.msg, *want))
			fail_msg("message '%s' lacks '%s'", err.msg, *want);
	/* One line, no final full stop. */
	assert_null(strchr(err.msg, '\n'));
	assert_true(err.msg[strlen(err.msg) - 1] != '.');
}

#define EXPECT(json, ...) \
	do { \
		const char *const w_[] = { __VA_ARGS__, NULL }; \
		expect_error(json, w_); \
	} while (0)

static void test_syntax_errors(void **state)
{
	(void)state;
	EXPECT("", "t.json", "empty");
	EXPECT("   \n", "t.json", "empty");
	EXPECT("this is not json", "t.json:1:1", "invalid JSON");
	EXPECT("{\n  \"format\": tru\n}", "t.json:2:13", "invalid JSON");
	EXPECT(HEAD "\"nodes\":[", "t.json:1:", "end of file");
	EXPECT("{} trailing", "t.json:1:4");
	EXPECT("[1,2]", "t.json", "top level must be a JSON object");
}

static void test_top_level_errors(void **state)
{
	(void)state;
	EXPECT("{\"version\":1,\"nodes\":[]}", "'format'");
	EXPECT("{\"format\":\"remat-schedule\",\"version\":1,\"nodes\":[]}", "'format'",
	       "remat-schedule");
	EXPECT("{\"format\":\"remat-graph\",\"nodes\":[]}", "'version'");
	EXPECT("{\"format\":\"remat-graph\",\"version\":2,\"nodes\":[]}", "'version' must be 1",
	       "got 2");
	EXPECT("{\"format\":\"remat-graph\",\"version\":\"1\",\"nodes\":[]}", "'version'");
	EXPECT(HEAD "\"name\":5,\"nodes\":[]}", "'name'");
	EXPECT(HEAD "\"cost_unit\":[],\"nodes\":[]}", "'cost_unit'");
	EXPECT(HEAD "\"fixed_bytes\":-1,\"nodes\":[]}", "'fixed_bytes'", "integer");
	EXPECT(HEAD "\"fixed_bytes\":1.5,\"nodes\":[]}", "'fixed_bytes'", "integer");
	EXPECT(HEAD "\"nodes\":{}}", "'nodes' must be an array");
	EXPECT("{\"format\":\"remat-graph\",\"version\":1}", "'nodes'");
	EXPECT(HEAD "\"format\":\"remat-graph\",\"nodes\":[]}", "'format'", "more than once");
	EXPECT(HEAD "\"nodes\":[],\"outputs\":\"a\"}", "'outputs'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1}],\"outputs\":[1]}", "'outputs'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1}],\"outputs\":[\"q\"]}", "'outputs'",
	       "unknown node 'q'");
}

static void test_node_field_errors(void **state)
{
	(void)state;
	EXPECT(HEAD "\"nodes\":[5]}", "nodes[0]", "must be an object");
	EXPECT(HEAD "\"nodes\":[{\"mem\":1}]}", "nodes[0]", "'id'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"\",\"mem\":1}]}", "nodes[0]", "'id'", "non-empty");
	EXPECT(HEAD "\"nodes\":[{\"id\":7,\"mem\":1}]}", "nodes[0]", "'id'", "got 7");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1},{\"id\":\"a\",\"mem\":2}]}",
	       "node 'a'", "duplicate 'id'");
	/* The JSON reader refuses duplicate keys, at the second one. */
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"mem\":2}]}", "t.json:1:64",
	       "'mem' is given more than once");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"kind\":\"layer\"}]}", "node 'a'",
	       "'kind'", "\"layer\"");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"kind\":3}]}", "node 'a'", "'kind'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\"}]}", "node 'a'", "'mem' is required");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":-1}]}", "node 'a'", "'mem'", "got -1");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1.5}]}", "node 'a'", "'mem'", "got 1.5");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":\"8\"}]}", "node 'a'", "'mem'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":10000000000000000}]}", "node 'a'", "'mem'");
	/* 2^53 + 1 reads as 2^53 in a double: the reader marks it, the loader refuses it. */
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":9007199254740993}]}", "node 'a'", "'mem'",
	       "got 9007199254740993");
	/* Beyond a double: the reader refuses it, with its position. */
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1e400}]}", "t.json:1:62", "too large");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"workspace\":-4}]}", "node 'a'",
	       "'workspace'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"workspace\":true}]}", "node 'a'",
	       "'workspace'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"cost\":-1}]}", "node 'a'", "'cost'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"cost\":\"1\"}]}", "node 'a'", "'cost'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"cost\":1e400}]}", "t.json:1:71",
	       "'1e400' is too large");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"inputs\":\"b\"}]}", "node 'a'", "'inputs'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"inputs\":[1]}]}", "node 'a'", "'inputs'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"inputs\":[\"\"]}]}", "node 'a'", "'inputs'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"x\",\"kind\":\"input\",\"mem\":1},"
	       "{\"id\":\"y\",\"kind\":\"input\",\"mem\":1,\"inputs\":[\"x\"]}]}",
	       "node 'y'", "'inputs'", "input node");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"grad_of\":5}]}", "node 'a'", "'grad_of'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"grad_of\":\"zz\"}]}", "node 'a'",
	       "'grad_of'", "unknown node 'zz'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"recompute\":0}]}", "node 'a'",
	       "'recompute'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"label\":{}}]}", "node 'a'", "'label'");
}

static void test_reference_errors(void **state)
{
	(void)state;
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"inputs\":[\"nope\"]}]}", "node 'a'",
	       "'inputs'", "unknown node 'nope'");
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"inputs\":[\"a\"]}]}", "node 'a'",
	       "cycle", "a -> a");
	/* a -> b -> c -> a in data-flow order, whichever node the message starts at. */
	EXPECT(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"inputs\":[\"c\"]},"
	       "{\"id\":\"b\",\"mem\":1,\"inputs\":[\"a\"]},"
	       "{\"id\":\"c\",\"mem\":1,\"inputs\":[\"b\"]},"
	       "{\"id\":\"d\",\"mem\":1,\"inputs\":[\"c\"]}]}",
	       "cycle", "'inputs'");
}

static void test_cycle_message_order(void **state)
{
	struct remat_error err;
	const char *json = HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"inputs\":[\"c\"]},"
		"{\"id\":\"b\",\"mem\":1,\"inputs\":[\"a\"]},"
		"{\"id\":\"c\",\"mem\":1,\"inputs\":[\"b\"]}]}";

	(void)state;
	assert_int_equal(tu_graph_err(json, &err), REMAT_EINPUT);
	/* Every arrow follows data flow: a feeds b, b feeds c, c feeds a. */
	assert_true(strstr(err.msg, "a -> b -> c -> a") || strstr(err.msg, "b -> c -> a -> b") ||
		    strstr(err.msg, "c -> a -> b -> c"));
}

static void test_total_memory_overflow(void **state)
{
	size_t cap = 1100 * 80 + 100, used = 0;
	char *json = malloc(cap);
	struct remat_error err;
	int i;

	(void)state;
	used += (size_t)snprintf(json + used, cap - used, HEAD "\"nodes\":[");
	/* 1024 outputs of 2^53 bytes add up to 2^63: more than int64 holds. */
	for (i = 0; i < 1024; i++)
		used += (size_t)snprintf(json + used, cap - used,
					 "%s{\"id\":\"n%d\",\"mem\":9007199254740992}",
					 i ? "," : "", i);
	snprintf(json + used, cap - used, "]}");
	assert_int_equal(tu_graph_err(json, &err), REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "2^63"));
	free(json);
}

static void test_kumar_structure(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	int32_t A, B, C, D, E;

	(void)state;
	A = remat_graph_find(g, "A");
	B = remat_graph_find(g, "B");
	C = remat_graph_find(g, "C");
	D = remat_graph_find(g, "D");
	E = remat_graph_find(g, "E");
	assert_int_equal(g->n, 5);
	assert_int_equal(g->n_edges, 6);
	assert_int_equal(remat_graph_find(g, "F"), -1);
	assert_int_equal(A, 0);
	assert_int_equal(E, 4);
	assert_string_equal(g->name, "kumar-fig1");
	assert_string_equal(g->cost_unit, "unit");
	/* D reads B and C, E reads A and D. */
	assert_int_equal(g->in_off[D + 1] - g->in_off[D], 2);
	assert_int_equal(g->in_idx[g->in_off[D]], B);
	assert_int_equal(g->in_idx[g->in_off[D] + 1], C);
	/* A is used by B and E; B by C and D. */
	assert_int_equal(g->use_off[A + 1] - g->use_off[A], 2);
	assert_int_equal(g->use_idx[g->use_off[A]], B);
	assert_int_equal(g->use_idx[g->use_off[A] + 1], E);
	assert_int_equal(g->use_off[B + 1] - g->use_off[B], 2);
	/* Only E is unused, so it is the one output. */
	assert_int_equal(g->n_outputs, 1);
	assert_int_equal(g->outputs[0], E);
	assert_true(g->is_output[E]);
	/* Order A,B,C,D,E needs 4 units (Kumar et al. Fig. 1). */
	assert_int_equal(g->no_remat_peak, 4);
	/* E: A + D + E = 3; D: B + C + D = 3. */
	assert_int_equal(g->min_peak_lower_bound, 3);
	assert_int_equal(g->total_mem, 5);
	assert_true(g->baseline_cost == 5.0);
	assert_int_equal(g->topo[0], A);
	assert_int_equal(g->topo[4], E);
	assert_int_equal(g->topo_pos[C], 2);
	assert_int_equal(g->n_inputs, 0);
	assert_int_equal(g->n_backward, 0);
	remat_graph_free(g);
}

static void test_stable_topological_order(void **state)
{
	/* File order c, b, a, d; a feeds b and c; d feeds nothing and needs nothing. */
	struct remat_graph *g = tu_graph(HEAD "\"nodes\":["
		"{\"id\":\"c\",\"mem\":1,\"inputs\":[\"a\"]},"
		"{\"id\":\"b\",\"mem\":1,\"inputs\":[\"a\"]},"
		"{\"id\":\"a\",\"mem\":1},"
		"{\"id\":\"d\",\"mem\":1}]}");

	(void)state;
	/* Ready at first: a (file 2) and d (file 3): a first.  Then c (0), b (1), d (3). */
	assert_string_equal(g->id[g->topo[0]], "a");
	assert_string_equal(g->id[g->topo[1]], "c");
	assert_string_equal(g->id[g->topo[2]], "b");
	assert_string_equal(g->id[g->topo[3]], "d");
	remat_graph_free(g);
}

static void test_defaults_and_fields(void **state)
{
	struct remat_graph *g = tu_graph(HEAD "\"name\":\"g\",\"cost_unit\":\"us\","
		"\"nodes\":["
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":8,\"cost\":99},"
		"{\"id\":\"unused\",\"kind\":\"input\",\"mem\":2},"
		"{\"id\":\"f\",\"kind\":\"forward\",\"mem\":4,\"inputs\":[\"x\",\"x\"],"
		" \"label\":\"conv\",\"workspace\":16,\"future_field\":{\"a\":[1]}},"
		"{\"id\":\"l\",\"kind\":\"loss\",\"mem\":1,\"cost\":0.5,\"inputs\":[\"f\"]},"
		"{\"id\":\"b\",\"kind\":\"backward\",\"mem\":8,\"cost\":2,\"inputs\":[\"l\",\"x\"],"
		" \"grad_of\":\"f\",\"recompute\":false}],"
		"\"unknown_top\":true}");
	int32_t x = 0, f = 2, b = 4;

	(void)state;
	assert_string_equal(g->name, "g");
	assert_string_equal(g->cost_unit, "us");
	assert_true(g->cost[x] == 0.0);        /* inputs cost nothing */
	assert_true(g->cost[f] == 1.0);        /* default cost */
	assert_true(g->cost[3] == 0.5);
	assert_int_equal(g->n_edges, 4);       /* duplicate x counted once */
	assert_int_equal(g->in_off[f + 1] - g->in_off[f], 1);
	assert_string_equal(g->label[f], "conv");
	assert_null(g->label[x]);
	assert_int_equal(g->workspace[f], 16);
	assert_int_equal(g->grad_of[b], f);
	assert_int_equal(g->grad_of[f], -1);
	assert_int_equal(g->recompute[b], 0);
	assert_int_equal(g->recompute[f], 1);
	assert_int_equal(g->kind[b], REMAT_KIND_BACKWARD);
	assert_int_equal(g->n_inputs, 2);
	assert_int_equal(g->n_backward, 1);
	/* Default outputs: unused nodes, the unused input among them. */
	assert_int_equal(g->n_outputs, 2);
	assert_int_equal(g->outputs[0], 1);
	assert_int_equal(g->outputs[1], b);
	/* baseline: f 1 + l 0.5 + b 2 */
	assert_true(g->baseline_cost == 3.5);
	/* Peak: x(8) + unused(2) + f(4) + ws(16) = 30 while f runs. */
	assert_int_equal(g->no_remat_peak, 30);
	/* f: x + f + ws = 28; b: l + x + b = 17. */
	assert_int_equal(g->min_peak_lower_bound, 28);
	remat_graph_free(g);
}

/* fixed_bytes: read, -1 when absent, written back, carried by train. */
static void test_fixed_bytes(void **state)
{
	struct remat_graph *g = tu_graph(HEAD "\"fixed_bytes\":1234,\"nodes\":["
					 "{\"id\":\"x\",\"kind\":\"input\",\"mem\":1},"
					 "{\"id\":\"a\",\"kind\":\"forward\",\"mem\":2,"
					 "\"inputs\":[\"x\"]}]}");
	struct remat_graph *back = NULL, *t = NULL;
	struct remat_train_opts o;
	struct remat_error err;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_int_equal(g->fixed_bytes, 1234);
	assert_int_equal(remat_graph_write(f, g, &err), REMAT_OK);
	fclose(f);
	assert_non_null(strstr(buf, "\"fixed_bytes\":1234"));
	assert_int_equal(remat_graph_load_buffer(buf, len, "back", &back, &err), REMAT_OK);
	assert_int_equal(back->fixed_bytes, 1234);
	remat_train_opts_init(&o);
	assert_int_equal(remat_graph_train(g, &o, &t, &err), REMAT_OK);
	assert_int_equal(t->fixed_bytes, 1234);
	remat_graph_free(t);
	remat_graph_free(back);
	remat_graph_free(g);
	free(buf);
	g = tu_graph(TU_KUMAR);
	assert_int_equal(g->fixed_bytes, -1);
	remat_graph_free(g);
}

static void test_name_defaults_to_file(void **state)
{
	struct remat_graph *g = NULL;
	const char *json = HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":0}],\"outputs\":[]}";

	(void)state;
	assert_int_equal(remat_graph_load_buffer(json, strlen(json), "dir/my-graph.json", &g,
						 NULL), REMAT_OK);
	assert_string_equal(g->name, "my-graph.json");
	assert_int_equal(g->n_outputs, 0);     /* an empty list is a list */
	assert_int_equal(g->no_remat_peak, 0);
	remat_graph_free(g);
}

static void test_mem_limit_is_inclusive(void **state)
{
	struct remat_graph *g = tu_graph(HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":9007199254740992}]}");

	(void)state;
	assert_int_equal(g->mem[0], (int64_t)1 << 53);
	remat_graph_free(g);
}

static void test_builder_direct(void **state)
{
	struct remat_graph_builder *b;
	struct remat_graph *g;
	struct remat_error err;
	const char *ins[] = { "p", "p" };
	struct remat_node_spec p = { "p", REMAT_KIND_INPUT, 3, 0, -1, 1, NULL, NULL, NULL, 0 };
	struct remat_node_spec q = { "q", REMAT_KIND_OP, 5, 0, 2.5, 1, "lbl", NULL, ins, 2 };
	struct remat_node_spec bad = { "r", REMAT_KIND_OP, -5, 0, 1, 1, NULL, NULL, NULL, 0 };
	/* A count below 0, or inputs without their array (an outside review:
	 * -3 was taken, and the next node wrote before the id array). */
	struct remat_node_spec neg = { "s", REMAT_KIND_OP, 1, 0, 1, 1, NULL, NULL, ins, -3 };
	struct remat_node_spec nul = { "t", REMAT_KIND_OP, 1, 0, 1, 1, NULL, NULL, NULL, 2 };

	(void)state;
	assert_int_equal(remat_builder_new("built", &b, &err), REMAT_OK);
	assert_int_equal(remat_builder_add(b, &q, &err), REMAT_OK); /* forward refs are fine */
	assert_int_equal(remat_builder_add(b, &p, &err), REMAT_OK);
	assert_int_equal(remat_builder_add(b, &bad, &err), REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "node 'r'"));
	assert_int_equal(remat_builder_add(b, &neg, &err), REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "node 's'"));
	assert_int_equal(remat_builder_add(b, &nul, &err), REMAT_EINPUT);
	assert_non_null(strstr(err.msg, "node 't'"));
	assert_int_equal(remat_builder_finish(b, &g, &err), REMAT_OK);
	assert_int_equal(g->n, 2);
	assert_int_equal(g->n_edges, 1);
	assert_string_equal(g->id[g->topo[0]], "p");
	assert_int_equal(g->no_remat_peak, 8);
	remat_graph_free(g);
}

static void test_many_nodes_id_table(void **state)
{
	/* Enough nodes to grow the id table several times. */
	int n = 5000, i;
	size_t cap = (size_t)n * 64 + 100, used = 0;
	char *json = malloc(cap);
	struct remat_graph *g;
	char id[32];

	(void)state;
	used += (size_t)snprintf(json + used, cap - used, HEAD "\"nodes\":[");
	for (i = 0; i < n; i++)
		if (i == 0)
			used += (size_t)snprintf(json + used, cap - used,
						 "{\"id\":\"v0\",\"mem\":1}");
		else
			used += (size_t)snprintf(json + used, cap - used,
						 ",{\"id\":\"v%d\",\"mem\":1,\"inputs\":[\"v%d\"]}",
						 i, i - 1);
	snprintf(json + used, cap - used, "]}");
	g = tu_graph(json);
	for (i = 0; i < n; i += 97) {
		snprintf(id, sizeof(id), "v%d", i);
		assert_int_equal(remat_graph_find(g, id), i);
	}
	assert_int_equal(g->no_remat_peak, 2); /* a chain holds two values at a time */
	remat_graph_free(g);
	free(json);
}

/*
 * The strict JSON reader (core/json_read.c) under the loader, one case per
 * rule, with the exact message: file, line, column and what is wrong.
 */
static void test_strict_reader(void **state)
{
#define N1 HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":"
	static const struct {
		const char *json, *msg;
	} cases[] = {
		/* duplicate keys, at the second one, in every object */
		{ HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,\"kind\":\"op\",\"kind\":\"input\"}]}",
		  "t.json:1:76: duplicate key: 'kind' is given more than once in this object" },
		{ HEAD "\"nodes\":[],\"x\":{\"u\":1,\"u\":2}}",
		  "t.json:1:59: duplicate key: 'u' is given more than once in this object" },
		/* \u0000 in a string */
		{ HEAD "\"nodes\":[{\"id\":\"a\\u0000zzz\",\"mem\":1}]}",
		  "t.json:1:54: invalid JSON string: '\\u0000' is not allowed (a NUL would cut "
		  "the string short)" },
		{ "{\"format\":\"remat-graph\\u0000junk\",\"version\":1,\"nodes\":[]}",
		  "t.json:1:23: invalid JSON string: '\\u0000' is not allowed (a NUL would cut "
		  "the string short)" },
		/* integers a double cannot tell apart */
		{ N1 "9007199254740993}]}",
		  "t.json: node 'a': 'mem' must be an integer number of bytes from 0 to 2^53 "
		  "(got 9007199254740993)" },
		{ N1 "1,\"workspace\":9007199254740993}]}",
		  "t.json: node 'a': 'workspace' must be an integer number of bytes from 0 to "
		  "2^53 (got 9007199254740993)" },
		{ N1 "4.0000000000000001}]}",
		  "t.json: node 'a': 'mem' must be an integer number of bytes from 0 to 2^53 "
		  "(got 4.0000000000000001)" },
		{ "{\"format\":\"remat-graph\",\"version\":1.0000000000000001,\"nodes\":[]}",
		  "t.json: 'version' must be 1 (got 1.0000000000000001)" },
		/* numbers JSON does not allow */
		{ N1 "01}]}", "t.json:1:62: invalid JSON number '01': leading zeros are not allowed" },
		{ N1 "5.}]}", "t.json:1:62: invalid JSON number '5.': a digit must follow the "
		  "decimal point" },
		{ N1 "-}]}", "t.json:1:62: invalid JSON number '-': a digit must follow the "
		  "minus sign" },
		{ N1 "+1}]}", "t.json:1:62: invalid JSON number '+1': JSON numbers have no plus "
		  "sign" },
		{ N1 ".5}]}", "t.json:1:62: invalid JSON number '.5': a digit must come before "
		  "the decimal point" },
		{ N1 "1e}]}", "t.json:1:62: invalid JSON number '1e': the exponent needs digits" },
		{ N1 "1e+}]}", "t.json:1:62: invalid JSON number '1e+': the exponent needs digits" },
		{ N1 "-01}]}", "t.json:1:62: invalid JSON number '-01': leading zeros are not "
		  "allowed" },
		{ N1 "0x10}]}", "t.json:1:62: invalid JSON number '0x10'" },
		{ N1 "1.5.2}]}", "t.json:1:62: invalid JSON number '1.5.2'" },
		{ N1 "NaN}]}", "t.json:1:62: invalid JSON near 'NaN}]}': JSON has no NaN or "
		  "Infinity" },
		/* numbers a double cannot hold */
		{ N1 "1,\"cost\":1e-400}]}", "t.json:1:71: number '1e-400' is too small (a double "
		  "would read it as 0)" },
		{ N1 "1,\"cost\":1e400}]}", "t.json:1:71: number '1e400' is too large (beyond the "
		  "range of a double)" },
		{ N1 "1,\"cost\":-2e308}]}", "t.json:1:71: number '-2e308' is too large (beyond "
		  "the range of a double)" },
		/* nesting and NUL bytes */
		{ HEAD "\"nodes\":[],\"x\":[[[[[[[[[[]]]]]]]]]]}", NULL }, /* 11 levels: fine */
		{ "{\"format\":\"remat-graph\",\n\"version\":1,\0\"nodes\":[]}",
		  "t.json:2:13: not a text file (contains a NUL byte)" },
		/* UTF-8 */
		{ HEAD "\"name\":\"a\xad" "b\",\"nodes\":[]}",
		  "t.json:1:46: invalid UTF-8 in a string (byte 0xad): JSON text must be UTF-8" },
		{ HEAD "\"nodes\":[{\"id\":\"\xc0\xaf\",\"mem\":1}]}",
		  "t.json:1:53: invalid UTF-8 in a string (byte 0xc0): JSON text must be UTF-8" },
		{ HEAD "\"nodes\":[{\"id\":\"\xed\xa0\x80\",\"mem\":1}]}",
		  "t.json:1:53: invalid UTF-8 in a string (byte 0xed): JSON text must be UTF-8" },
		{ HEAD "\"nodes\":[{\"id\":\"\xf4\x90\x80\x80\",\"mem\":1}]}",
		  "t.json:1:53: invalid UTF-8 in a string (byte 0xf4): JSON text must be UTF-8" },
		{ HEAD "\"nodes\":[{\"id\":\"\xe2\x82\",\"mem\":1}]}",
		  "t.json:1:53: invalid UTF-8 in a string (byte 0xe2): JSON text must be UTF-8" },
		{ HEAD "\"nodes\":[{\"id\":\"a\\ud800\",\"mem\":1}]}",
		  "t.json:1:54: invalid JSON string: unpaired surrogate '\\ud800' (a high "
		  "surrogate must be followed by a low one)" },
		{ HEAD "\"nodes\":[{\"id\":\"a\\ud800\\u0041\",\"mem\":1}]}",
		  "t.json:1:54: invalid JSON string: unpaired surrogate '\\ud800' (a high "
		  "surrogate must be followed by a low one)" },
		{ HEAD "\"nodes\":[{\"id\":\"a\\uDC00\",\"mem\":1}]}",
		  "t.json:1:54: invalid JSON string: unpaired surrogate '\\uDC00' (a low "
		  "surrogate must follow a high one)" },
		{ HEAD "\"nodes\":[{\"id\":\"a\\u12\",\"mem\":1}]}",
		  "t.json:1:54: invalid JSON string: '\\u' must be followed by 4 hex digits" },
		{ HEAD "\"nodes\":[{\"id\":\"a\\x41\",\"mem\":1}]}",
		  "t.json:1:54: invalid JSON string: unknown escape '\\x'" },
		{ HEAD "\"nodes\":[{\"id\":\"a\tb\",\"mem\":1}]}",
		  "t.json:1:54: invalid JSON string: control character 0x09 must be escaped" },
		{ "\xef\xbb\xbf{}", "t.json:1:1: invalid JSON: the file starts with a byte order "
		  "mark (save it as UTF-8 without one)" },
		{ "{\"a\":1}\n\xad", "t.json:2:1: invalid JSON: unexpected byte 0xad: text after the "
		  "end of the JSON value" },
		{ HEAD "\"nodes\":[{\"id\":\"a\",\"mem\":1,}]}",
		  "t.json:1:64: invalid JSON near '}]}': expected a key (a string in double "
		  "quotes)" },
		{ HEAD "\"nodes\":[1,]}", "t.json:1:48: invalid JSON near ']}'" },
		{ HEAD "\"nodes\":[\"abc", "t.json:1:46: invalid JSON: unterminated string (the "
		  "file ends inside it)" },
		/* control characters in ids are escaped in messages (here \u001b and \n) */
		{ HEAD "\"nodes\":[{\"id\":\"a\\u001b[2J\\n\",\"mem\":1,\"inputs\":[\"q\"]}]}",
		  "t.json: node 'a\\x1b[2J\\x0a': 'inputs': unknown node 'q'" },
		/* networkx node-link files go through the same reader */
		{ "{\"nodes\":[{\"id\":0,\"cost_ram\":1}],\"links\":[{\"source\":0,\"source\":0}]}",
		  "t.json:1:55: duplicate key: 'source' is given more than once in this object" },
		{ "{\"nodes\":[{\"id\":0,\"name\":\"a\",\"cost_ram\":9007199254740993}],\"links\":[]}",
		  "t.json: node 'a': 'cost_ram' must be an integer number of bytes from 0 to 2^53 "
		  "(got 9007199254740993)" },
	};
	size_t i, bad = 0;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct remat_graph *g = NULL;
		struct remat_error err;
		size_t len = strlen(cases[i].json);
		int rc;

		/* The NUL case: the text goes on after the NUL. */
		if (strstr(cases[i].json, "\"version\":1,") && cases[i].json[len - 1] == ',')
			len += 1 + strlen(cases[i].json + len + 1);
		remat_error_clear(&err);
		rc = remat_graph_load_buffer(cases[i].json, len, "t.json", &g, &err);
		if (!cases[i].msg) {
			if (rc != REMAT_OK)
				fail_msg("case %zu: %s", i, err.msg);
			remat_graph_free(g);
			continue;
		}
		if (rc != REMAT_EINPUT || strcmp(err.msg, cases[i].msg) != 0) {
			print_message("case %zu (status %d):\n  got  %s\n  want %s\n", i, rc, err.msg,
				      cases[i].msg);
			bad++;
		}
	}
	assert_int_equal(bad, 0);
#undef N1
}

/* 2^53 itself is fine, as are integers written with a fraction or an exponent. */
static void test_exact_integers(void **state)
{
	struct remat_graph *g = tu_graph(HEAD "\"nodes\":["
		"{\"id\":\"a\",\"mem\":9007199254740992},"
		"{\"id\":\"b\",\"mem\":8.000,\"workspace\":1e3},"
		"{\"id\":\"c\",\"mem\":0.5e1,\"cost\":1.00000000000000000001},"
		"{\"id\":\"\\u00e4\\ud83d\\ude00\",\"mem\":0e-400,\"cost\":5e-324}]}");

	(void)state;
	assert_int_equal(g->mem[0], 9007199254740992LL);
	assert_int_equal(g->mem[1], 8);
	assert_int_equal(g->workspace[1], 1000);
	assert_int_equal(g->mem[2], 5);
	assert_true(g->cost[2] == 1.0);
	assert_int_equal(remat_graph_find(g, "\xc3\xa4\xf0\x9f\x98\x80"), 3);
	assert_int_equal(g->mem[3], 0);
	assert_true(g->cost[3] > 0);
	remat_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_top_level_errors),
		cmocka_unit_test(test_node_field_errors),
		cmocka_unit_test(test_reference_errors),
		cmocka_unit_test(test_cycle_message_order),
		cmocka_unit_test(test_total_memory_overflow),
		cmocka_unit_test(test_kumar_structure),
		cmocka_unit_test(test_stable_topological_order),
		cmocka_unit_test(test_defaults_and_fields),
		cmocka_unit_test(test_fixed_bytes),
		cmocka_unit_test(test_name_defaults_to_file),
		cmocka_unit_test(test_mem_limit_is_inclusive),
		cmocka_unit_test(test_builder_direct),
		cmocka_unit_test(test_many_nodes_id_table),
		cmocka_unit_test(test_strict_reader),
		cmocka_unit_test(test_exact_integers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
