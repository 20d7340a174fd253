/*
 * test_mincut.c - the mincut planner (src/planners/mincut.c): hand-worked
 * cuts, and on random small training graphs the cut's bytes against a
 * brute force over every saved set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "planners/mincut.h"

static int plan(const struct remat_graph *g, int64_t budget, const char *ban,
		struct remat_schedule *s, struct remat_sim_result *r, struct remat_error *err)
{
	struct remat_plan_request req;
	struct remat_kv opt = { "ban", ban };

	memset(&req, 0, sizeof(req));
	req.graph = g;
	req.budget = budget;
	req.options = ban ? &opt : NULL;
	req.n_options = ban ? 1 : 0;
	remat_error_clear(err);
	return remat_plan_run(remat_planner_find("mincut"), &req, s, r, err);
}

/* The ids of the nodes flagged in set, space-separated (static buffer). */
static const char *ids(const struct remat_graph *g, const uint8_t *set)
{
	static char buf[512];
	size_t used = 0;
	int32_t i;

	buf[0] = '\0';
	for (i = 0; i < g->n; i++) {
		int32_t v = g->topo[i];

		if (set[v])
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s",
						 used ? " " : "", g->id[v]);
	}
	return buf;
}

static void cut(const struct remat_graph *g, int ban_intensive, const char *want_saved,
		const char *want_recomputed, int64_t want_bytes)
{
	uint8_t *saved = calloc((size_t)g->n + 1, 1), *rec = calloc((size_t)g->n + 1, 1);
	struct remat_error err;
	int64_t bytes = -1;

	assert_int_equal(remat_i_mincut_cut(g, ban_intensive, saved, rec, &bytes, &err),
			 REMAT_OK);
	assert_string_equal(ids(g, saved), want_saved);
	assert_string_equal(ids(g, rec), want_recomputed);
	assert_int_equal(bytes, want_bytes);
	free(saved);
	free(rec);
}

/*
 * A chain x -> f1 -> f2 -> f3 -> f4 -> loss whose backward reads every f
 * (b_i reads f_i and b_(i+1); b4 reads the loss).  Sizes 1, 10, 1, 10;
 * the input x is 3; f1 and f3 are random operators ("recompute": false,
 * like dropout).  By hand: everything the backward reads is saved or
 * recomputed, a recomputed node needs its inputs saved or recomputed, and
 * f1, f3 cannot be recomputed, so they are saved (2 bytes), which is
 * enough to recompute f2 from f1 and f4 and the loss from f3.  Every
 * other value: the minimum cut.
 */
static const char *const CHAIN =
	"{\"format\":\"remat-graph\",\"version\":1,\"name\":\"alt\",\"nodes\":["
	"{\"id\":\"x\",\"kind\":\"input\",\"mem\":3},"
	"{\"id\":\"f1\",\"kind\":\"forward\",\"mem\":1,\"inputs\":[\"x\"],\"recompute\":false},"
	"{\"id\":\"f2\",\"kind\":\"forward\",\"mem\":10,\"inputs\":[\"f1\"]},"
	"{\"id\":\"f3\",\"kind\":\"forward\",\"mem\":1,\"inputs\":[\"f2\"],\"recompute\":false},"
	"{\"id\":\"f4\",\"kind\":\"forward\",\"mem\":10,\"inputs\":[\"f3\"]},"
	"{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":1,\"inputs\":[\"f4\"]},"
	"{\"id\":\"b4\",\"kind\":\"backward\",\"mem\":1,\"inputs\":[\"loss\",\"f4\"],\"grad_of\":\"f4\"},"
	"{\"id\":\"b3\",\"kind\":\"backward\",\"mem\":1,\"inputs\":[\"b4\",\"f3\"],\"grad_of\":\"f3\"},"
	"{\"id\":\"b2\",\"kind\":\"backward\",\"mem\":1,\"inputs\":[\"b3\",\"f2\"],\"grad_of\":\"f2\"},"
	"{\"id\":\"b1\",\"kind\":\"backward\",\"mem\":1,\"inputs\":[\"b2\",\"f1\"],\"grad_of\":\"f1\"}],"
	"\"outputs\":[\"b1\"]}";

static void test_chain_saves_every_other_value(void **state)
{
	struct remat_graph *g = tu_graph(CHAIN);
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	cut(g, 0, "f1 f3", "f2 f4 loss", 2);
	/*
	 * The schedule: the forward, then f4 and the loss recomputed before
	 * b4, f2 before b2.  By hand (memory while each compute runs): f1 4
	 * (x, then x dies); f2 11; f3 12 (f2's first copy dies); f4 12; loss
	 * 13 (f4's and the loss's first copies die); f4 12; loss 13; b4 14
	 * (loss and f4 die); b3 4 (b4, f3 die); f2 12; b2 13 (b3, f2 die);
	 * b1 3.  Peak 14, against the no-remat peak of 24 (f1 f2 f3 f4 loss
	 * b4 all held: 1 + 10 + 1 + 10 + 1 + 1); cost 9 + 3 recomputes.
	 */
	assert_int_equal(g->no_remat_peak, 24);
	remat_schedule_init(&s);
	assert_int_equal(plan(g, 20, "none", &s, &r, &err), REMAT_OK);
	assert_int_equal(r.peak_mem, 14);
	assert_true(r.cost == 12 && r.recomputes == 3);
	assert_string_equal(tu_sched_text(g, &s), "f1 -x f2 f3 -f2 f4 loss -loss -f4 "
			    "f4 loss b4 -loss -f4 b3 -b4 -f3 f2 b2 -b3 -f2 b1 -b2 -f1");
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * x -> f1 (1) -> f2 (50, a convolution) -> f3 (1); the backward reads f2
 * and f3.  With nothing banned, saving f1 (1 byte) recomputes f2 and f3.
 * With the convolution banned (the default policy), f2 cannot be
 * recomputed, so it is saved (50) and f3 is recomputed from it.
 */
static const char *const BANNED =
	"{\"format\":\"remat-graph\",\"version\":1,\"name\":\"ban\",\"nodes\":["
	"{\"id\":\"x\",\"kind\":\"input\",\"mem\":100},"
	"{\"id\":\"f1\",\"kind\":\"forward\",\"mem\":1,\"inputs\":[\"x\"],\"label\":\"relu\"},"
	"{\"id\":\"f2\",\"kind\":\"forward\",\"mem\":50,\"inputs\":[\"f1\"],\"label\":\"aten::convolution\"},"
	"{\"id\":\"f3\",\"kind\":\"forward\",\"mem\":1,\"inputs\":[\"f2\"],\"label\":\"relu\"},"
	"{\"id\":\"b3\",\"kind\":\"backward\",\"mem\":1,\"inputs\":[\"f3\"],\"grad_of\":\"f3\"},"
	"{\"id\":\"b2\",\"kind\":\"backward\",\"mem\":1,\"inputs\":[\"b3\",\"f2\"],\"grad_of\":\"f2\"}],"
	"\"outputs\":[\"b2\"]}";

static void test_banned_operator_is_saved(void **state)
{
	struct remat_graph *g = tu_graph(BANNED);

	(void)state;
	cut(g, 0, "f1", "f2 f3", 1);
	cut(g, 1, "f2", "f3", 50);
	remat_graph_free(g);
}

/*
 * A residual block: x -> in (2) -> c1 (4) -> r1 (4) -> c2 (4) -> add(in,
 * c2) (4) -> loss; the backward reads every value of the block.  Saving
 * the block input alone (2 bytes) lets everything else be recomputed;
 * recomputing 'in' itself would need x (100).
 */
static const char *const RESIDUAL =
	"{\"format\":\"remat-graph\",\"version\":1,\"name\":\"res\",\"nodes\":["
	"{\"id\":\"x\",\"kind\":\"input\",\"mem\":100},"
	"{\"id\":\"in\",\"kind\":\"forward\",\"mem\":2,\"inputs\":[\"x\"]},"
	"{\"id\":\"c1\",\"kind\":\"forward\",\"mem\":4,\"inputs\":[\"in\"]},"
	"{\"id\":\"r1\",\"kind\":\"forward\",\"mem\":4,\"inputs\":[\"c1\"]},"
	"{\"id\":\"c2\",\"kind\":\"forward\",\"mem\":4,\"inputs\":[\"r1\"]},"
	"{\"id\":\"add\",\"kind\":\"forward\",\"mem\":4,\"inputs\":[\"in\",\"c2\"]},"
	"{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":4,\"inputs\":[\"add\"]},"
	"{\"id\":\"badd\",\"kind\":\"backward\",\"mem\":4,\"inputs\":[\"add\"],\"grad_of\":\"add\"},"
	"{\"id\":\"bc2\",\"kind\":\"backward\",\"mem\":4,\"inputs\":[\"badd\",\"c2\",\"r1\"],\"grad_of\":\"c2\"},"
	"{\"id\":\"br1\",\"kind\":\"backward\",\"mem\":4,\"inputs\":[\"bc2\",\"r1\",\"c1\"],\"grad_of\":\"r1\"},"
	"{\"id\":\"bc1\",\"kind\":\"backward\",\"mem\":4,\"inputs\":[\"br1\",\"c1\",\"in\",\"badd\"],\"grad_of\":\"c1\"}],"
	"\"outputs\":[\"bc1\",\"loss\"]}";

static void test_residual_block_saves_its_input(void **state)
{
	struct remat_graph *g = tu_graph(RESIDUAL);

	(void)state;
	/* loss is an output: never recomputed, and nothing reads it later. */
	cut(g, 0, "in", "c1 r1 c2 add", 2);
	remat_graph_free(g);
}

static void test_not_a_training_graph(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	/* Below the no-remat peak nothing replaces it: the reason is given. */
	assert_int_equal(plan(g, 3, NULL, &s, &r, &err), REMAT_ENOFIT);
	assert_non_null(strstr(err.msg, "not a training graph"));
	assert_int_equal(plan(g, 3, "most", &s, &r, &err), REMAT_EUSAGE);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/* ---- brute force ---- */

/*
 * The least bytes of a saved set from which everything the backward
 * phase reads is saved or recomputable, found by trying every subset of
 * the forward values (inputs included).  Phases and rules worked out
 * here, independently of mincut.c: backward phase = backward nodes and
 * their descendants; inputs, outputs and "recompute": false nodes are
 * never recomputed.  -1 when no set works.
 */
static int64_t brute_min_bytes(const struct remat_graph *g)
{
	int32_t n = g->n, nf = 0, *fv = malloc(sizeof(int32_t) * (size_t)n), v, k, i;
	uint8_t *bwd = calloc((size_t)n, 1), *fwd = calloc((size_t)n, 1);
	uint8_t *reads = calloc((size_t)n, 1), *sv = calloc((size_t)n, 1),
		*rc = calloc((size_t)n, 1);
	int64_t best = -1;
	uint32_t mask;

	for (i = 0; i < n; i++) {
		v = g->topo[i];
		bwd[v] = g->kind[v] == REMAT_KIND_BACKWARD;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (bwd[g->in_idx[k]])
				bwd[v] = 1;
		if (!bwd[v]) {
			fwd[v] = 1;
			fv[nf++] = v;
		}
	}
	for (v = 0; v < n; v++)
		for (k = g->in_off[v]; bwd[v] && k < g->in_off[v + 1]; k++)
			if (fwd[g->in_idx[k]])
				reads[g->in_idx[k]] = 1;
	assert_true(nf <= 20);
	for (mask = 0; mask < (1u << nf); mask++) {
		int64_t bytes = 0;
		int ok = 1, changed = 1;

		memset(sv, 0, (size_t)n);
		memset(rc, 0, (size_t)n);
		for (i = 0; i < nf; i++)
			if (mask >> i & 1) {
				sv[fv[i]] = 1;
				bytes += g->mem[fv[i]];
			}
		for (v = 0; v < n; v++)
			if (reads[v] && !sv[v])
				rc[v] = 1;
		/* Close the recomputed set under inputs. */
		while (changed) {
			changed = 0;
			for (v = 0; v < n; v++)
				for (k = g->in_off[v]; rc[v] && k < g->in_off[v + 1]; k++) {
					int32_t u = g->in_idx[k];

					if (!sv[u] && !rc[u]) {
						rc[u] = 1;
						changed = 1;
					}
				}
		}
		for (v = 0; v < n; v++)
			if (rc[v] && (g->kind[v] == REMAT_KIND_INPUT || g->is_output[v] ||
				      !g->recompute[v]))
				ok = 0;
		if (ok && (best < 0 || bytes < best))
			best = bytes;
	}
	free(fv);
	free(bwd);
	free(fwd);
	free(reads);
	free(sv);
	free(rc);
	return best;
}

/*
 * A random training graph: inputs x, y; forward nodes f0..f(n-1) reading
 * earlier values; a loss; backward nodes reading a random selection of
 * forward values and the previous backward node.  Sizes 0..9, some
 * nodes "recompute": false.
 */
static char *random_training(uint64_t *st, int n)
{
	size_t cap = 16384, used = 0;
	char *b = malloc(cap);
	int i, j, first;

#define OUT(...) used += (size_t)snprintf(b + used, cap - used, __VA_ARGS__)
	OUT("{\"format\":\"remat-graph\",\"version\":1,\"name\":\"r\",\"nodes\":["
	    "{\"id\":\"x\",\"kind\":\"input\",\"mem\":%d},"
	    "{\"id\":\"y\",\"kind\":\"input\",\"mem\":%d}",
	    (int)(tu_rand(st) % 10), (int)(tu_rand(st) % 10));
	for (i = 0; i < n; i++) {
		OUT(",{\"id\":\"f%d\",\"kind\":\"forward\",\"mem\":%d,\"cost\":%d%s,\"inputs\":[",
		    i, (int)(tu_rand(st) % 10), (int)(1 + tu_rand(st) % 4),
		    tu_rand(st) % 6 == 0 ? ",\"recompute\":false" : "");
		OUT(i == 0 ? "\"x\"" : "\"f%d\"", i - 1);
		if (tu_rand(st) % 3 == 0)
			OUT(",\"y\"");
		for (j = 0; j + 1 < i; j++)
			if (tu_rand(st) % 4 == 0)
				OUT(",\"f%d\"", j);
		OUT("]}");
	}
	OUT(",{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":1,\"inputs\":[\"f%d\"]}", n - 1);
	for (i = n - 1; i >= 0; i--) {
		OUT(",{\"id\":\"b%d\",\"kind\":\"backward\",\"mem\":%d,\"inputs\":[\"%s",
		    i, (int)(1 + tu_rand(st) % 5), i == n - 1 ? "loss" : "b");
		if (i < n - 1)
			OUT("%d", i + 1);
		OUT("\"");
		first = 1;
		for (j = 0; j < n; j++)
			if (tu_rand(st) % 3 == 0 || (first && j == i)) {
				OUT(",\"f%d\"", j);
				first = 0;
			}
		if (tu_rand(st) % 4 == 0)
			OUT(",\"x\"");
		OUT("]}");
	}
	OUT("],\"outputs\":[\"b0\"]}");
#undef OUT
	return b;
}

static void test_random_cuts_are_minimum(void **state)
{
	uint64_t st = 0x6d696e637574ull;
	int iter;

	(void)state;
	for (iter = 0; iter < 150; iter++) {
		char *json = random_training(&st, 3 + (int)(tu_rand(&st) % 10));
		struct remat_graph *g = tu_graph(json);
		uint8_t *saved = calloc((size_t)g->n, 1), *rec = calloc((size_t)g->n, 1);
		int64_t bytes, want = brute_min_bytes(g), budgets[3];
		struct remat_schedule s;
		struct remat_sim_result r;
		struct remat_error err;
		int b;

		assert_int_equal(remat_i_mincut_cut(g, 0, saved, rec, &bytes, &err), REMAT_OK);
		assert_true(want >= 0);
		if (bytes != want)
			fail_msg("iteration %d: cut of %lld bytes, brute force %lld\n%s", iter,
				 (long long)bytes, (long long)want, json);
		/* Every schedule, at every budget, is valid; at the no-remat
		 * peak one must be found. */
		remat_schedule_init(&s);
		budgets[0] = g->no_remat_peak;
		budgets[1] = (g->no_remat_peak + g->min_peak_lower_bound) / 2;
		budgets[2] = g->min_peak_lower_bound;
		for (b = 0; b < 3; b++) {
			int rc = plan(g, budgets[b], b == 1 ? "none" : NULL, &s, &r, &err);

			assert_true(rc == REMAT_OK || rc == REMAT_ENOFIT);
			if (b == 0)
				assert_int_equal(rc, REMAT_OK);
			if (rc == REMAT_OK)
				assert_true(r.valid && r.peak_mem <= budgets[b]);
		}
		remat_schedule_release(&s);
		free(saved);
		free(rec);
		remat_graph_free(g);
		free(json);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_saves_every_other_value),
		cmocka_unit_test(test_banned_operator_is_saved),
		cmocka_unit_test(test_residual_block_saves_its_input),
		cmocka_unit_test(test_not_a_training_graph),
		cmocka_unit_test(test_random_cuts_are_minimum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
