/*
 * prop_sim.c - the simulator and the liveness pass against a naive
 * reference written here from FORMATS.md alone, on random graphs and
 * random schedules (valid and invalid).
 *
 * The reference keeps a resident set and rescans it at every step
 * (quadratic, obviously right).  For compute-only schedules it decides
 * each free by scanning the rest of the schedule.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

struct ref {
	int valid;
	int64_t peak;
	int64_t error_step;
	double cost;
	int64_t computes, recomputes;
};

static int reads(const struct remat_graph *g, int32_t v, int32_t u)
{
	int32_t k;

	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
		if (g->in_idx[k] == u)
			return 1;
	return 0;
}

/* Does a compute step after i read u before u is computed again? */
static int used_later(const struct remat_graph *g, const struct remat_schedule *s, int64_t i,
		      int32_t u)
{
	int64_t j;

	for (j = i + 1; j < s->n; j++) {
		if (reads(g, s->steps[j].node, u))
			return 1;
		if (s->steps[j].node == u)
			return 0;
	}
	return 0;
}

static struct ref reference(const struct remat_graph *g, const struct remat_schedule *s)
{
	struct ref r = { 1, 0, -1, 0, 0, 0 };
	char *res = calloc((size_t)g->n, 1), *done = calloc((size_t)g->n, 1);
	int compute_only = 1, any = 0;
	int64_t i;
	int32_t v, k;

	for (i = 0; i < s->n; i++)
		if (s->steps[i].op == REMAT_OP_FREE)
			compute_only = 0;
	for (v = 0; v < g->n; v++)
		res[v] = g->kind[v] == REMAT_KIND_INPUT &&
			 !(compute_only && !g->is_output[v] && !used_later(g, s, -1, v));
	for (i = 0; i < s->n && r.valid; i++) {
		int32_t u = s->steps[i].node;
		int64_t m = 0;

		if (s->steps[i].op == REMAT_OP_FREE) {
			if (!res[u])
				r.valid = 0;
			res[u] = 0;
		} else {
			if (g->kind[u] == REMAT_KIND_INPUT || res[u] || (done[u] && !g->recompute[u]))
				r.valid = 0;
			for (k = g->in_off[u]; k < g->in_off[u + 1]; k++)
				if (!res[g->in_idx[k]])
					r.valid = 0;
			if (!r.valid)
				break;
			for (v = 0; v < g->n; v++)
				if (res[v])
					m += g->mem[v];
			m += g->mem[u] + g->workspace[u];
			if (!any || m > r.peak)
				r.peak = m;
			any = 1;
			res[u] = 1;
			r.cost += g->cost[u];
			r.computes++;
			if (done[u])
				r.recomputes++;
			done[u] = 1;
			if (compute_only)
				for (v = 0; v < g->n; v++)
					if (res[v] && !g->is_output[v] && (v == u || reads(g, u, v)) &&
					    !used_later(g, s, i, v))
						res[v] = 0;
		}
		if (!r.valid)
			break;
	}
	if (!r.valid)
		r.error_step = i;
	if (r.valid && !any) {
		for (v = 0; v < g->n; v++)
			if (res[v])
				r.peak += g->mem[v];
	}
	if (r.valid)
		for (k = 0; k < g->n_outputs; k++)
			if (!res[g->outputs[k]]) {
				r.valid = 0;
				r.error_step = s->n;
			}
	free(res);
	free(done);
	return r;
}

/* A random schedule: mostly legal moves, sometimes an illegal one. */
static void random_schedule(const struct remat_graph *g, uint64_t *rs, int explicit_frees,
			    int legal, struct remat_schedule *s)
{
	char *res = calloc((size_t)g->n, 1);
	int32_t v, k, steps = g->n * 3;

	remat_schedule_clear(s);
	for (v = 0; v < g->n; v++)
		res[v] = g->kind[v] == REMAT_KIND_INPUT;
	while (steps-- > 0) {
		int32_t pick = (int32_t)(tu_rand(rs) % (uint64_t)g->n);
		int ok = g->kind[pick] != REMAT_KIND_INPUT && !res[pick];

		for (k = g->in_off[pick]; ok && k < g->in_off[pick + 1]; k++)
			ok = res[g->in_idx[k]];
		if (explicit_frees && res[pick] && tu_rand(rs) % 3 == 0) {
			remat_schedule_push(s, REMAT_OP_FREE, pick, NULL);
			res[pick] = 0;
		} else if (ok || (!legal && tu_rand(rs) % 50 == 0)) {
			remat_schedule_push(s, REMAT_OP_COMPUTE, pick, NULL);
			res[pick] = 1;
			if (!explicit_frees)
				memset(res, 0, (size_t)g->n); /* implicit frees: keep it simple */
		}
	}
	/* Finish with the topological order of what is not resident. */
	for (k = 0; k < g->n; k++) {
		v = g->topo[k];
		if (g->kind[v] != REMAT_KIND_INPUT && (!explicit_frees || !res[v]))
			remat_schedule_push(s, REMAT_OP_COMPUTE, v, NULL);
	}
	free(res);
}

static int n_valid, n_invalid, n_recompute;

static void check_one(const struct remat_graph *g, const struct remat_schedule *s)
{
	struct remat_sim_result r;
	struct ref want = reference(g, s);

	assert_int_equal(remat_simulate(g, s, -1, NULL, &r, NULL), REMAT_OK);
	if (r.valid != want.valid)
		fail_msg("valid %d, reference %d (%s) on %s", r.valid, want.valid, r.error,
			 tu_sched_text(g, s));
	if (!r.valid) {
		n_invalid++;
		assert_int_equal(r.error_step, want.error_step);
		return;
	}
	n_valid++;
	n_recompute += r.recomputes > 0;
	assert_int_equal(r.peak_mem, want.peak);
	assert_true(r.cost == want.cost);
	assert_int_equal(r.computes, want.computes);
	assert_int_equal(r.recomputes, want.recomputes);
}

/* After every step of the explicit form, nothing resident is dead. */
static void check_liveness_minimal(const struct remat_graph *g, const struct remat_schedule *order)
{
	struct remat_schedule ex;
	char *res = calloc((size_t)g->n, 1);
	int64_t i, j;
	int32_t v;

	remat_schedule_init(&ex);
	assert_int_equal(remat_liveness(g, order, &ex, NULL), REMAT_OK);
	for (v = 0; v < g->n; v++)
		res[v] = g->kind[v] == REMAT_KIND_INPUT;
	for (i = 0; i < ex.n; i++) {
		res[ex.steps[i].node] = ex.steps[i].op == REMAT_OP_COMPUTE;
		/* At a compute boundary (next step is a compute or the end)... */
		if (i + 1 < ex.n && ex.steps[i + 1].op == REMAT_OP_FREE)
			continue;
		for (v = 0; v < g->n; v++) {
			int needed = g->is_output[v];

			if (!res[v] || needed)
				continue;
			for (j = i + 1; j < ex.n && !needed; j++) {
				if (ex.steps[j].op != REMAT_OP_COMPUTE)
					continue;
				if (reads(g, ex.steps[j].node, v))
					needed = 1;
				else if (ex.steps[j].node == v)
					break;
			}
			if (!needed)
				fail_msg("'%s' is resident after step %lld but dead", g->id[v],
					 (long long)i);
		}
	}
	free(res);
	remat_schedule_release(&ex);
}

static void test_random(void **state)
{
	uint64_t rs = 12345;
	int round;

	(void)state;
	for (round = 0; round < 300; round++) {
		int n = 2 + (int)(tu_rand(&rs) % 12);
		char *json = tu_random_graph_json(&rs, n, 0.3, round % 2);
		struct remat_graph *g = tu_graph(json);
		struct remat_schedule s;

		remat_schedule_init(&s);
		random_schedule(g, &rs, round % 3 == 0, round % 5 != 0, &s);
		check_one(g, &s);
		if (round % 3 != 0) {
			struct remat_sim_result r;

			assert_int_equal(remat_simulate(g, &s, -1, NULL, &r, NULL), REMAT_OK);
			if (r.valid)
				check_liveness_minimal(g, &s);
		}
		/* The no-remat peak is the compute-only topological schedule's. */
		assert_int_equal(remat_schedule_topo(g, &s, NULL), REMAT_OK);
		assert_int_equal(reference(g, &s).peak, g->no_remat_peak);
		remat_schedule_release(&s);
		remat_graph_free(g);
		free(json);
	}
	/* The generator must exercise every outcome. */
	print_message("%d valid (%d with recomputes), %d invalid\n", n_valid, n_recompute,
		      n_invalid);
	assert_true(n_valid > 50 && n_invalid > 20 && n_recompute > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
