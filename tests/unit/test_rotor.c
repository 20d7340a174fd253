/*
 * test_rotor.c - the rotor planner (src/planners/rotor.c).
 *
 * - Hand-worked: examples/train-chain4.json at 7, 6, 5 and 4 MiB.
 * - Exhaustive: on chains of up to 6 layers, every persistent schedule
 *   (at each sub-chain either the first stage runs once, or it is re-run
 *   from a checkpoint j; a checkpoint still resident may be kept instead
 *   of recomputed) is generated here as a node order, independently of
 *   the planner, and simulated; rotor's cost must equal the cheapest one
 *   within every budget from the no-remat peak to the lower bound, and
 *   be no more than the best single-level checkpoint set (all 2^(n-1)).
 * - Sweeps: rotor is never above none, chen or chen-greedy wherever they
 *   succeed, on homogeneous and random chains of both backward patterns.
 * - Options, recompute: false, long chains grouped by --max-stages.
 */
#include <math.h>

#include "chaintest.h"

#define MiB 1048576

/* ---- exhaustive persistent schedules, generated from the graph's names ---- */

struct seqs {
	int n, cap;
	int32_t **v;
	int *len;
};

static void seqs_add(struct seqs *s, const int32_t *v, int len)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->v = realloc(s->v, sizeof(*s->v) * (size_t)s->cap);
		s->len = realloc(s->len, sizeof(*s->len) * (size_t)s->cap);
		assert_non_null(s->v);
		assert_non_null(s->len);
	}
	s->v[s->n] = malloc(sizeof(int32_t) * ((size_t)len + 1));
	memcpy(s->v[s->n], v, sizeof(int32_t) * (size_t)len);
	s->len[s->n++] = len;
}

static void seqs_free(struct seqs *s)
{
	int k;

	for (k = 0; k < s->n; k++)
		free(s->v[k]);
	free(s->v);
	free(s->len);
	memset(s, 0, sizeof(*s));
}

/* All concatenations pre + a + b + post. */
static void product(struct seqs *out, const int32_t *pre, int npre, const struct seqs *a,
		    const struct seqs *b, const int32_t *post, int npost)
{
	int32_t buf[512];
	int x, y;

	for (x = 0; x < a->n; x++)
		for (y = 0; y < (b ? b->n : 1); y++) {
			int len = 0;

			memcpy(buf + len, pre, sizeof(int32_t) * (size_t)npre);
			len += npre;
			memcpy(buf + len, a->v[x], sizeof(int32_t) * (size_t)a->len[x]);
			len += a->len[x];
			if (b) {
				memcpy(buf + len, b->v[y], sizeof(int32_t) * (size_t)b->len[y]);
				len += b->len[y];
			}
			memcpy(buf + len, post, sizeof(int32_t) * (size_t)npost);
			len += npost;
			assert_true(len < 512);
			seqs_add(out, buf, len);
		}
}

struct names {
	int n;
	int32_t f[CT_MAX + 1], b[CT_MAX + 1], loss;
};

static void names_of(const struct remat_graph *g, int n, struct names *nm)
{
	char id[16];
	int i;

	nm->n = n;
	for (i = 1; i <= n; i++) {
		snprintf(id, sizeof(id), "f%d", i);
		nm->f[i] = remat_graph_find(g, id);
		snprintf(id, sizeof(id), "b%d", i);
		nm->b[i] = remat_graph_find(g, id);
	}
	nm->loss = remat_graph_find(g, "loss");
}

/*
 * Persistent schedules of layers i..l; held: layer l's output is still
 * resident from a checkpoint, so it need not be recomputed (and the
 * sub-chains may either keep it or not).
 */
static void gen(const struct names *nm, int i, int l, int held, struct seqs *out)
{
	int32_t pre[CT_MAX + 2], post[1];
	int j, k, h;

	if (i == l) {
		int32_t one[3];
		int len = 0;

		if (!held) {
			one[len++] = nm->f[i];
			if (i == nm->n)
				one[len++] = nm->loss;
		}
		one[len++] = nm->b[i];
		seqs_add(out, one, len);
		return;
	}
	/* Layer i runs once. */
	for (h = 0; h <= held; h++) {
		struct seqs sub = { 0, 0, NULL, NULL };

		gen(nm, i + 1, l, h, &sub);
		pre[0] = nm->f[i];
		post[0] = nm->b[i];
		product(out, pre, 1, &sub, NULL, post, 1);
		seqs_free(&sub);
	}
	/* Layer i re-run later from its input; layers i..j-1 run without grad. */
	for (j = i + 1; j <= l; j++) {
		for (k = i; k < j; k++)
			pre[k - i] = nm->f[k];
		for (h = 0; h <= held; h++) {
			int h2;

			for (h2 = 0; h2 <= 1; h2++) {
				struct seqs a = { 0, 0, NULL, NULL }, b = { 0, 0, NULL, NULL };

				gen(nm, j, l, h, &a);
				gen(nm, i, j - 1, h2, &b);
				product(out, pre, j - i, &a, &b, post, 0);
				seqs_free(&a);
				seqs_free(&b);
			}
		}
	}
}

/* Chen-style single-level plans for every set of checkpointed boundaries. */
static void gen_checkpoint_sets(const struct names *nm, struct seqs *out)
{
	int n = nm->n, mask;

	for (mask = 0; mask < (1 << (n - 1)); mask++) {
		int32_t buf[512];
		int starts[CT_MAX + 2], ns = 0, len = 0, t, s;

		starts[ns++] = 1;
		for (s = 1; s < n; s++)
			if (mask & (1 << (s - 1)))
				starts[ns++] = s + 1;
		starts[ns] = n + 1;
		for (t = 0; t + 1 < ns; t++)
			for (s = starts[t]; s < starts[t + 1]; s++)
				buf[len++] = nm->f[s];
		for (t = ns - 1; t >= 0; t--) {
			for (s = starts[t]; s < starts[t + 1]; s++) {
				buf[len++] = nm->f[s];
				if (s == n)
					buf[len++] = nm->loss;
			}
			for (s = starts[t + 1] - 1; s >= starts[t]; s--)
				buf[len++] = nm->b[s];
		}
		seqs_add(out, buf, len);
	}
}

/* Peak and cost of every sequence (each must be a valid schedule). */
static void score(const struct remat_graph *g, const struct seqs *s, int64_t *peak,
		  double *cost)
{
	struct remat_schedule sc;
	int k, t;

	remat_schedule_init(&sc);
	for (k = 0; k < s->n; k++) {
		struct remat_sim_result r;

		remat_schedule_clear(&sc);
		for (t = 0; t < s->len[k]; t++)
			assert_int_equal(remat_schedule_push(&sc, REMAT_OP_COMPUTE, s->v[k][t], NULL),
					 REMAT_OK);
		assert_int_equal(remat_simulate(g, &sc, -1, NULL, &r, NULL), REMAT_OK);
		if (!r.valid)
			fail_msg("enumerated schedule %d is invalid: %s (%s)", k, r.error,
				 tu_sched_text(g, &sc));
		peak[k] = r.peak_mem;
		cost[k] = r.cost;
	}
	remat_schedule_release(&sc);
}

static double cheapest(const int64_t *peak, const double *cost, int n, int64_t budget)
{
	double best = INFINITY;
	int k;

	for (k = 0; k < n; k++)
		if (peak[k] <= budget && cost[k] < best)
			best = cost[k];
	return best;
}

/* rotor == exhaustive persistent optimum, <= best checkpoint set, every budget. */
static void check_exhaustive(const struct ct_chain *t)
{
	struct remat_graph *g = ct_graph(t);
	struct names nm;
	struct seqs all = { 0, 0, NULL, NULL }, sets = { 0, 0, NULL, NULL };
	int64_t *pa, *ps, b;
	double *ca, *cs;

	names_of(g, t->n, &nm);
	gen(&nm, 1, t->n, 0, &all);
	gen_checkpoint_sets(&nm, &sets);
	pa = malloc(sizeof(int64_t) * (size_t)all.n);
	ca = malloc(sizeof(double) * (size_t)all.n);
	ps = malloc(sizeof(int64_t) * (size_t)sets.n);
	cs = malloc(sizeof(double) * (size_t)sets.n);
	score(g, &all, pa, ca);
	score(g, &sets, ps, cs);
	for (b = g->no_remat_peak; b >= g->min_peak_lower_bound - 1; b--) {
		struct remat_sim_result r;
		double best = cheapest(pa, ca, all.n, b), best_set = cheapest(ps, cs, sets.n, b);
		int rc = tu_plan(g, "rotor", b, NULL, 0, 0, &r);

		if (rc == REMAT_ENOFIT) {
			if (isfinite(best))
				fail_msg("chain n=%d pattern %d budget %lld: rotor found nothing, "
					 "a persistent schedule costs %g", t->n, t->pattern,
					 (long long)b, best);
			continue;
		}
		if (fabs(r.cost - best) > 1e-9)
			fail_msg("chain n=%d pattern %d budget %lld: rotor %g, exhaustive %g "
				 "(%d schedules)", t->n, t->pattern, (long long)b, r.cost, best,
				 all.n);
		assert_true(r.cost <= best_set + 1e-9);
	}
	free(pa);
	free(ca);
	free(ps);
	free(cs);
	seqs_free(&all);
	seqs_free(&sets);
	remat_graph_free(g);
}

static void test_exhaustive_homogeneous(void **state)
{
	struct ct_chain t;
	int n, pattern;

	(void)state;
	for (pattern = 0; pattern <= 1; pattern++)
		for (n = 1; n <= 6; n++) {
			ct_homogeneous(&t, n, 1, pattern);
			check_exhaustive(&t);
		}
}

static void test_exhaustive_random(void **state)
{
	uint64_t rs = 2024;
	struct ct_chain t;
	int trial;

	(void)state;
	for (trial = 0; trial < 24; trial++) {
		ct_random(&t, &rs, 2 + trial % 5, 6, 1, trial % 2);
		check_exhaustive(&t);
	}
}

/*
 * examples/train-chain4.json by hand (x, f1..f4, loss, b4..b1 all 1 MiB;
 * forward and loss cost 1, backward 2; baseline 13):
 * 7 MiB: nothing recomputed, 13.  6 MiB: b4 runs with x, f3, f4, loss and
 * b4 resident, so only one of f1, f2 stays: one recompute, 14.  5 MiB: at
 * b4 neither stays; f1 and f2 are recomputed for b3, f1 dropped before b3
 * (x f2 f3 b4 b3 is already 5), and recomputed again for b2: 16.  4 MiB:
 * b4 alone needs 5.
 */
static void test_train_chain4_by_hand(void **state)
{
	struct ct_chain t;
	struct remat_graph *g;
	struct remat_sim_result r;

	(void)state;
	ct_homogeneous(&t, 4, MiB, 0);
	g = ct_graph(&t);
	assert_int_equal(tu_plan(g, "rotor", 7 * MiB, NULL, 0, 0, &r), REMAT_OK);
	assert_true(r.cost == 13 && r.recomputes == 0);
	assert_int_equal(tu_plan(g, "rotor", 6 * MiB, NULL, 0, 0, &r), REMAT_OK);
	assert_true(r.cost == 14 && r.recomputes == 1);
	assert_int_equal(tu_plan(g, "rotor", 5 * MiB, NULL, 0, 0, &r), REMAT_OK);
	assert_true(r.cost == 16 && r.recomputes == 3);
	assert_int_equal(tu_plan(g, "rotor", 5 * MiB - 1, NULL, 0, 0, &r), REMAT_ENOFIT);
	/* Chen's sqrt(4) = 2 stages per segment: f1 f2 recomputed once, 15 at 6 MiB. */
	assert_int_equal(tu_plan(g, "chen", 6 * MiB, NULL, 0, 0, &r), REMAT_OK);
	assert_true(r.cost == 15 && r.peak_mem == 6 * MiB);
	assert_int_equal(tu_plan(g, "chen", 6 * MiB - 1, NULL, 0, 0, &r), REMAT_ENOFIT);
	remat_graph_free(g);
}

/* rotor <= none, chen, chen-greedy at every budget where they succeed. */
static void sweep(const struct ct_chain *t, int64_t step)
{
	static const char *const others[] = { "none", "chen", "chen-greedy" };
	struct remat_graph *g = ct_graph(t);
	int64_t b;

	for (b = g->no_remat_peak; b >= g->min_peak_lower_bound - step; b -= step) {
		struct remat_sim_result rr, ro;
		int rc = tu_plan(g, "rotor", b, NULL, 0, 0, &rr);
		unsigned k;

		for (k = 0; k < sizeof(others) / sizeof(others[0]); k++) {
			if (tu_plan(g, others[k], b, NULL, 0, 0, &ro) != REMAT_OK)
				continue;
			if (rc != REMAT_OK || rr.cost > ro.cost * (1 + 1e-12))
				fail_msg("n=%d pattern %d budget %lld: %s costs %g, rotor %s %g",
					 t->n, t->pattern, (long long)b, others[k], ro.cost,
					 rc == REMAT_OK ? "costs" : "found nothing", rr.cost);
		}
	}
	remat_graph_free(g);
}

static void test_sweep_homogeneous(void **state)
{
	static const int sizes[] = { 8, 12, 20, 30 };
	struct ct_chain t;
	unsigned k;
	int pattern;

	(void)state;
	for (pattern = 0; pattern <= 1; pattern++)
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			ct_homogeneous(&t, sizes[k], 1, pattern);
			sweep(&t, 1);
			/* The same in MiB: 500 slots no longer count bytes one by one. */
			if (k % 2)
				continue;
			ct_homogeneous(&t, sizes[k], MiB, pattern);
			t.mloss = 4;
			sweep(&t, MiB / 2);
		}
}

static void test_sweep_random(void **state)
{
	uint64_t rs = 99;
	struct ct_chain t;
	int trial;

	(void)state;
	for (trial = 0; trial < 8; trial++) {
		ct_random(&t, &rs, 8 + trial * 2, 9, 1, trial % 2);
		sweep(&t, 1);
	}
}

/* Bad options are usage errors; odd slot counts still give valid plans. */
static void test_options(void **state)
{
	struct ct_chain t_chain;
	struct remat_graph *g;
	struct remat_kv bad[] = { { "slots", "0" } }, bad2[] = { { "max-stages", "x" } };
	struct remat_kv one[] = { { "slots", "1" } }, few[] = { { "max-stages", "3" } };
	struct tu_plan t = { .planner = "rotor", .opts = bad, .n_opts = 1,
			     .flags = TU_ANY_STATUS };
	int64_t b;

	(void)state;
	ct_homogeneous(&t_chain, 12, MiB, 0);
	g = ct_graph(&t_chain);
	assert_int_equal(tu_plan_run(g, g->no_remat_peak / 2, &t), REMAT_EUSAGE);
	assert_non_null(strstr(t.err.msg, "--slots"));
	t.opts = bad2;
	assert_int_equal(tu_plan_run(g, g->no_remat_peak / 2, &t), REMAT_EUSAGE);
	tu_plan_release(&t);
	for (b = g->no_remat_peak; b >= g->min_peak_lower_bound; b -= MiB / 2) {
		struct remat_sim_result full, grouped;
		int rf = tu_plan(g, "rotor", b, NULL, 0, 0, &full);
		int rg = tu_plan(g, "rotor", b, few, 1, 0, &grouped);

		tu_plan(g, "rotor", b, one, 1, 0, NULL);
		/* Three groups of four layers are a coarser model: never cheaper. */
		if (rg == REMAT_OK) {
			assert_int_equal(rf, REMAT_OK);
			assert_true(full.cost <= grouped.cost + 1e-9);
		}
	}
	remat_graph_free(g);
}

/*
 * A layer that must not be recomputed: rotor runs it once (the simulator
 * would reject a second compute), and at a budget that forces recomputing
 * everything before it, it still finds a plan that keeps it.
 */
static void test_norecompute(void **state)
{
	struct ct_chain t;
	struct remat_graph *g;
	int64_t b;

	(void)state;
	ct_homogeneous(&t, 10, 1, 0);
	t.norecomp[4] = 1;
	t.norecomp[9] = 1;
	g = ct_graph(&t);
	for (b = g->no_remat_peak; b >= g->min_peak_lower_bound; b--) {
		tu_plan(g, "rotor", b, NULL, 0, 0, NULL);
		tu_plan(g, "chen", b, NULL, 0, 0, NULL);
		tu_plan(g, "chen-greedy", b, NULL, 0, 0, NULL);
	}
	assert_int_equal(tu_plan(g, "rotor", g->no_remat_peak - 2, NULL, 0, 0, NULL), REMAT_OK);
	remat_graph_free(g);
}

/* An inference graph: the no-remat order or nothing. */
static void test_inference(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_sim_result r;

	(void)state;
	assert_int_equal(tu_plan(g, "rotor", 4, NULL, 0, 0, &r), REMAT_OK);
	assert_true(r.cost == 5 && r.recomputes == 0);
	assert_int_equal(tu_plan(g, "rotor", 3, NULL, 0, 0, &r), REMAT_ENOFIT);
	remat_graph_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_train_chain4_by_hand),
		cmocka_unit_test(test_exhaustive_homogeneous),
		cmocka_unit_test(test_exhaustive_random),
		cmocka_unit_test(test_sweep_homogeneous),
		cmocka_unit_test(test_sweep_random),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_norecompute),
		cmocka_unit_test(test_inference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
