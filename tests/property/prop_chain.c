/*
 * prop_chain.c - property test for the chain planners (chen, chen-greedy,
 * rotor): on random chain-structured training graphs, with the features
 * that break the textbook chain (skip connections, dropout masks read
 * only by a backward node, weights as inputs, workspace, "recompute":
 * false, backward nodes without grad_of, op nodes, extra outputs, an
 * update op after the backward), and on random DAGs of any shape, at
 * budgets from the no-remat peak down past the lower bound: every answer
 * is a valid schedule within budget (checked by ct_plan through the
 * simulator) or REMAT_ENOFIT, and at budgets covering the no-remat peak
 * there is always an answer.
 */
#include "chaintest.h"

static const char *const planners[] = { "chen", "chen-greedy", "rotor" };

static int coin(uint64_t *rs, int percent)
{
	return (int)(tu_rand(rs) % 100) < percent;
}

static int64_t rmem(uint64_t *rs)
{
	return (int64_t)(1 + tu_rand(rs) % 9);
}

/* A random chain with random features, as remat-graph JSON (malloc'd). */
static char *random_chain(uint64_t *rs, int n)
{
	size_t cap = 8192 + (size_t)n * 1200, used = 0;
	char *buf = malloc(cap);
	int pattern = coin(rs, 50), i;
	int skip[CT_MAX + 1], mask[CT_MAX + 1], weight[CT_MAX + 1];
	int loss_out = coin(rs, 20), upd = coin(rs, 20);

#define OUT(...) used += (size_t)snprintf(buf + used, cap - used, __VA_ARGS__)
	assert_non_null(buf);
	OUT("{\"format\":\"remat-graph\",\"version\":1,\"name\":\"pc%d\",\"nodes\":[", n);
	OUT("{\"id\":\"x\",\"kind\":\"input\",\"mem\":%lld}", (long long)rmem(rs));
	for (i = 1; i <= n; i++) {
		skip[i] = i >= 3 && coin(rs, 15);
		mask[i] = coin(rs, 20);
		weight[i] = coin(rs, 20);
		if (weight[i])
			OUT(",{\"id\":\"w%d\",\"kind\":\"input\",\"mem\":%lld}", i,
			    (long long)rmem(rs));
		if (mask[i] && i == 1)
			OUT(",{\"id\":\"m1\",\"kind\":\"forward\",\"mem\":%lld,\"inputs\":[\"x\"]}",
			    (long long)rmem(rs));
		else if (mask[i])
			OUT(",{\"id\":\"m%d\",\"kind\":\"forward\",\"mem\":%lld,\"inputs\":[\"f%d\"]}",
			    i, (long long)rmem(rs), i - 1);
		OUT(",{\"id\":\"f%d\",\"kind\":\"%s\",\"mem\":%lld,\"cost\":%d,\"workspace\":%lld,"
		    "\"inputs\":[", i, coin(rs, 10) ? "op" : "forward", (long long)rmem(rs),
		    (int)(1 + tu_rand(rs) % 9), coin(rs, 15) ? (long long)rmem(rs) : 0LL);
		if (i == 1)
			OUT("\"x\"");
		else
			OUT("\"f%d\"", i - 1);
		if (skip[i])
			OUT(",\"f%d\"", i - 2);
		if (weight[i])
			OUT(",\"w%d\"", i);
		if (mask[i])
			OUT(",\"m%d\"", i);
		OUT("]%s}", coin(rs, 10) ? ",\"recompute\":false" : "");
	}
	OUT(",{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":%lld,\"inputs\":[\"f%d\"]}",
	    (long long)rmem(rs), n);
	for (i = n; i >= 1; i--) {
		OUT(",{\"id\":\"b%d\",\"kind\":\"backward\",\"mem\":%lld,\"cost\":%d,"
		    "\"workspace\":%lld", i, (long long)rmem(rs), (int)(1 + tu_rand(rs) % 9),
		    coin(rs, 15) ? (long long)rmem(rs) : 0LL);
		if (!coin(rs, 20))
			OUT(",\"grad_of\":\"f%d\"", i);
		OUT(",\"inputs\":[\"%s", i == n ? "loss" : "b");
		if (i < n)
			OUT("%d", i + 1);
		OUT("\",\"f%d\"", i);
		if (pattern == 0) {
			if (i == 1)
				OUT(",\"x\"");
			else
				OUT(",\"f%d\"", i - 1);
		} else {
			OUT(",\"%s", i == n ? "loss" : "f");
			if (i < n)
				OUT("%d", i + 1);
			OUT("\"");
		}
		if (skip[i])
			OUT(",\"f%d\"", i - 2);
		if (i + 2 <= n && skip[i + 2])
			OUT(",\"b%d\"", i + 2);
		if (weight[i])
			OUT(",\"w%d\"", i);
		if (mask[i])
			OUT(",\"m%d\"", i);
		OUT("]%s}", coin(rs, 5) ? ",\"recompute\":false" : "");
	}
	if (upd)
		OUT(",{\"id\":\"upd\",\"kind\":\"op\",\"mem\":1,\"inputs\":[\"b1\"]}");
	OUT("],\"outputs\":[\"%s\"%s]}", upd ? "upd" : "b1", loss_out ? ",\"loss\"" : "");
#undef OUT
	return buf;
}

/* Every planner at budgets from the no-remat peak down past the lower bound. */
static void check_graph(const struct remat_graph *g)
{
	int64_t hi = g->no_remat_peak, lo = g->min_peak_lower_bound, b;
	int k, step;

	for (step = 0; step <= 14; step++) {
		b = hi - (hi - lo) * step / 12;     /* the last two steps are below lo */
		for (k = 0; k < 3; k++) {
			int rc = tu_plan(g, planners[k], b, NULL, 0, 0, NULL);

			if (b >= hi && rc != REMAT_OK)
				fail_msg("%s found nothing at the no-remat peak of %s", planners[k],
					 g->name);
		}
	}
	/* A larger budget than needed, and the coarsest slot count. */
	{
		struct remat_kv o[] = { { "slots", "1" } }, o2[] = { { "max-stages", "2" } };

		assert_int_equal(tu_plan(g, "rotor", hi * 2, NULL, 0, 0, NULL), REMAT_OK);
		assert_int_equal(tu_plan(g, "rotor", hi, o, 1, 0, NULL), REMAT_OK);
		assert_int_equal(tu_plan(g, "rotor", hi, o2, 1, 0, NULL), REMAT_OK);
		tu_plan(g, "rotor", (hi + lo) / 2, o2, 1, 0, NULL);
	}
}

static void test_random_chains(void **state)
{
	uint64_t rs = 4242;
	int trial;

	(void)state;
	for (trial = 0; trial < 150; trial++) {
		char *json = random_chain(&rs, 1 + (int)(tu_rand(&rs) % 24));
		struct remat_graph *g = tu_graph(json);

		check_graph(g);
		remat_graph_free(g);
		free(json);
	}
}

static void test_random_dags(void **state)
{
	uint64_t rs = 5151;
	int trial;

	(void)state;
	for (trial = 0; trial < 80; trial++) {
		int n = 1 + (int)(tu_rand(&rs) % 20);
		char *json = tu_random_graph_json(&rs, n, 0.05 + (double)(trial % 5) / 10,
						  trial % 2);
		struct remat_graph *g = tu_graph(json);

		check_graph(g);
		remat_graph_free(g);
		free(json);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_chains),
		cmocka_unit_test(test_random_dags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
