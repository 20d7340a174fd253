/*
 * prop_twremat.c - twremat on random DAGs of every shape the format
 * allows: several inputs, several outputs (some of them inputs or
 * interior nodes), "recompute": false nodes, zero sizes, workspaces,
 * kind "op" only or training kinds.  Properties:
 *   - every answer is a valid schedule within budget or REMAT_ENOFIT
 *     (remat_plan_run re-simulates; never REMAT_EINTERNAL);
 *   - at or above the no-remat peak it succeeds at the baseline cost;
 *   - the bare recursion (--cutoff K) is valid for every K;
 *   - the same request twice gives the same schedule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static char *random_dag(uint64_t *st, int n)
{
	size_t cap = (size_t)n * (size_t)n * 12 + 4096, used = 0;
	char *b = malloc(cap);
	int i, j, first, n_in = 1 + (int)(tu_rand(st) % 3), outs = 0;

#define OUT(...) used += (size_t)snprintf(b + used, cap - used, __VA_ARGS__)
	OUT("{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[");
	for (i = 0; i < n; i++) {
		int input = i < n_in;

		OUT("%s{\"id\":\"v%d\",\"mem\":%d", i ? "," : "", i, (int)(tu_rand(st) % 9));
		if (input) {
			OUT(",\"kind\":\"input\"}");
			continue;
		}
		if (tu_rand(st) % 6 == 0)
			OUT(",\"workspace\":%d", (int)(tu_rand(st) % 12));
		if (tu_rand(st) % 8 == 0)
			OUT(",\"recompute\":false");
		OUT(",\"cost\":%d,\"inputs\":[", (int)(tu_rand(st) % 4));
		first = 1;
		for (j = 0; j < i; j++)
			if (j == i - 1 || tu_rand(st) % 100 < 20) {
				OUT("%s\"v%d\"", first ? "" : ",", j);
				first = 0;
			}
		OUT("]}");
	}
	OUT("],\"outputs\":[\"v%d\"", n - 1);
	for (i = 0; i < n - 1; i++)
		if (tu_rand(st) % 10 == 0 && outs++ < 3)
			OUT(",\"v%d\"", i);
	OUT("]}");
#undef OUT
	return b;
}

static int plan(const struct remat_graph *g, int64_t budget, const char *cutoff,
		struct remat_schedule *s, struct remat_sim_result *r)
{
	struct remat_plan_request req;
	struct remat_kv opt = { "cutoff", cutoff };
	struct remat_error err;
	int rc;

	memset(&req, 0, sizeof(req));
	req.graph = g;
	req.budget = budget;
	req.options = cutoff ? &opt : NULL;
	req.n_options = cutoff ? 1 : 0;
	remat_error_clear(&err);
	rc = remat_plan_run(remat_planner_find("twremat"), &req, s, r, &err);
	if (rc != REMAT_OK && rc != REMAT_ENOFIT)
		fail_msg("twremat: status %d: %s", rc, err.msg);
	if (rc == REMAT_OK && (!r->valid || r->peak_mem > budget))
		fail_msg("twremat: bad schedule accepted");
	return rc;
}

static void check_graph(struct remat_graph *g)
{
	struct remat_schedule s, s2;
	struct remat_sim_result r, r2;
	int64_t lb = g->min_peak_lower_bound, top = g->no_remat_peak, b;
	int k;

	remat_schedule_init(&s);
	remat_schedule_init(&s2);
	assert_int_equal(plan(g, top, NULL, &s, &r), REMAT_OK);
	assert_true(r.recomputes == 0 && r.cost == g->baseline_cost);
	for (k = 0; k <= 8; k++) {
		b = lb + (top - lb) * k / 8;
		if (plan(g, b, NULL, &s, &r) == REMAT_OK) {
			assert_int_equal(plan(g, b, NULL, &s2, &r2), REMAT_OK);
			assert_true(s.n == s2.n &&
				    memcmp(s.steps, s2.steps, sizeof(*s.steps) * (size_t)s.n) == 0);
		}
	}
	for (k = 1; k <= 6; k++) {
		char cut[8];

		snprintf(cut, sizeof(cut), "%d", k * k);
		assert_int_equal(plan(g, INT64_MAX / 4, cut, &s, &r), REMAT_OK);
	}
	remat_schedule_release(&s);
	remat_schedule_release(&s2);
}

static void prop_random_dags(void **state)
{
	uint64_t seed = 31337;
	int round;

	(void)state;
	for (round = 0; round < 150; round++) {
		char *json = random_dag(&seed, 3 + round % 40);
		struct remat_graph *g = tu_graph(json);

		check_graph(g);
		remat_graph_free(g);
		free(json);
	}
}

static void prop_random_training_graphs(void **state)
{
	uint64_t seed = 8086;
	int round;

	(void)state;
	for (round = 0; round < 60; round++) {
		char *json = tu_random_graph_json(&seed, 3 + round % 30, 0.2, 1);
		struct remat_graph *g = tu_graph(json);

		check_graph(g);
		remat_graph_free(g);
		free(json);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(prop_random_dags),
		cmocka_unit_test(prop_random_training_graphs),
	};

	return cmocka_run_group_tests_name("prop_twremat", tests, NULL, NULL);
}
