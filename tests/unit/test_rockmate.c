/*
 * test_rockmate.c - rk-Rotor (src/planners/rockmate.c) checked three ways
 * on random slot chains: with one option per stage it is Rotor's
 * recurrence (rotor.c's table, held variant on or off, no release);
 * with several it equals the least, over every choice of one option per
 * stage (exhaustive enumeration), of the one-option optimum; and the
 * operations it backtracks cost exactly what its table says and run each
 * stage's backward once, with one option.  Then the planner end to end on
 * a hand-made graph.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "exhaustive.h"
#include "planners/rockmate.h"

static int32_t rnd(uint64_t *rs, int32_t lo, int32_t hi)
{
	return lo + (int32_t)(tu_rand(rs) % (uint64_t)(hi - lo + 1));
}

/* A random chain of L stages in slots (sizes plausible, not consistent). */
static void random_chain(uint64_t *rs, int32_t L, struct remat_i_rotor_chain *ch)
{
	int32_t i;
	struct remat_error err;

	assert_int_equal(remat_i_rotor_chain_alloc(ch, L, &err), REMAT_OK);
	ch->plain = rnd(rs, 0, 3) == 0;
	for (i = 0; i <= L; i++)
		ch->x[i] = rnd(rs, 1, 4);
	for (i = 0; i < L; i++) {
		ch->y[i] = ch->x[i + 1];
		ch->xb[i] = ch->y[i] + rnd(rs, 0, 5);
		ch->fa[i] = ch->xb[i] + rnd(rs, 0, 3);
		ch->fah[i] = ch->xb[i] + rnd(rs, 0, 3);
		ch->fo[i] = ch->y[i] + rnd(rs, 0, 3);
		ch->fi[i] = ch->x[i] + ch->fo[i];
		ch->d[i] = rnd(rs, 0, 3);
		ch->bp[i] = ch->xb[i] + rnd(rs, 0, 4);
		ch->po[i] = rnd(rs, 0, 5) == 0 ? 1 : 0;
		ch->fw[i] = rnd(rs, 1, 9);
		ch->fwh[i] = ch->fw[i] - rnd(rs, 0, (int32_t)ch->fw[i] - 1);
		ch->fwng[i] = ch->fw[i];
		ch->bw[i] = rnd(rs, 1, 18);
		ch->nr[i] = rnd(rs, 0, 9) == 0;
		ch->xl[i] = 1;
	}
	ch->d[L] = 0;
	for (i = 0; i < L; i++)
		ch->bp[i] += ch->d[i + 1];
}

/* Options: option 0 of each stage is Rotor's; the others trade memory for cost. */
struct opts {
	int32_t off[8], xb[32], fa[32], bp[32], fah[32];
	double fw[32], bw[32], fwh[32];
};

static void random_options(uint64_t *rs, const struct remat_i_rotor_chain *ch, int32_t K,
			   struct opts *o)
{
	int32_t i, k, n = 0;

	for (i = 0; i < ch->L; i++) {
		o->off[i] = n;
		for (k = 0; k < K; k++, n++) {
			int32_t cut = k == 0 ? 0 : rnd(rs, 0, ch->xb[i] - ch->y[i]);

			o->xb[n] = ch->xb[i] - cut;
			o->fa[n] = ch->fa[i] - cut;
			o->fah[n] = ch->fah[i] - cut;
			o->fwh[n] = ch->fwh[i];
			o->bp[n] = ch->bp[i] - cut + (k == 0 ? 0 : rnd(rs, 0, 3));
			o->fw[n] = ch->fw[i];
			o->bw[n] = ch->bw[i] + (k == 0 ? 0 : rnd(rs, 0, 12));
		}
	}
	o->off[ch->L] = n;
}

static void rk_view(const struct remat_i_rotor_chain *ch, struct opts *o,
		    struct remat_i_rk_chain *rk)
{
	rk->base = ch;
	rk->off = o->off;
	rk->xb = o->xb;
	rk->fa = o->fa;
	rk->bp = o->bp;
	rk->fah = o->fah;
	rk->fw = o->fw;
	rk->bw = o->bw;
	rk->fwh = o->fwh;
}

/*
 * One option per stage, Rotor's own figures: the same table as rotor.c's,
 * with its held variant (and without it, plain, on a quarter of the
 * chains); every stage input stays (xl = 1), so rotor.c has no release
 * tables either.
 */
static void test_one_option_is_rotor(void **state)
{
	uint64_t rs = 99;
	int trial;

	(void)state;
	for (trial = 0; trial < 200; trial++) {
		int32_t L = rnd(&rs, 1, 7), M = rnd(&rs, 5, 40), m, i;
		struct remat_i_rotor_chain ch;
		struct remat_i_rotor_table rt;
		struct remat_i_rk_table kt;
		struct remat_i_rk_chain rk;
		struct opts o;
		struct remat_error err;

		random_chain(&rs, L, &ch);
		for (i = 0; i < L; i++) {
			o.off[i] = i;
			o.xb[i] = ch.xb[i];
			o.fa[i] = ch.fa[i];
			o.bp[i] = ch.bp[i];
			o.fah[i] = ch.fah[i];
			o.fw[i] = ch.fw[i];
			o.bw[i] = ch.bw[i];
			o.fwh[i] = ch.fwh[i];
		}
		o.off[L] = L;
		rk_view(&ch, &o, &rk);
		assert_int_equal(remat_i_rotor_solve(&ch, M, &rt, NULL, &err), REMAT_OK);
		assert_int_equal(remat_i_rk_solve(&rk, M, &kt, NULL, &err), REMAT_OK);
		for (m = 0; m <= M; m++) {
			double a = remat_i_rotor_cost(&rt, m), b = remat_i_rk_cost(&kt, m);

			if (!(a == b || (isinf(a) && isinf(b))))
				fail_msg("trial %d, L %d, m %d: rotor %g, rk-Rotor %g", trial, (int)L,
					 (int)m, a, b);
		}
		remat_i_rotor_table_release(&rt);
		remat_i_rk_table_release(&kt);
		remat_i_rotor_chain_release(&ch);
	}
}

/*
 * The cost of an operation list by the chain's figures, checking that it
 * is a complete persistent plan: each stage's backward once, in order
 * L-1 down to 0, right after ... its F_all with the same option.
 */
static double ops_cost(const struct remat_i_rk_chain *rk, const struct remat_i_rk_op *ops,
		       int64_t n)
{
	const struct remat_i_rotor_chain *b = rk->base;
	int32_t next_b = b->L - 1, fall_opt[8];
	double cost = 0;
	int64_t t;

	for (t = 0; t < 8; t++)
		fall_opt[t] = -1;
	for (t = 0; t < n; t++) {
		int32_t s = ops[t].stage, k = ops[t].opt;

		switch (ops[t].op) {
		case REMAT_I_FALL:
		case REMAT_I_FHELD:
			assert_true(k >= rk->off[s] && k < rk->off[s + 1]);
			fall_opt[s] = k;
			cost += ops[t].op == REMAT_I_FHELD ? rk->fwh[k] : rk->fw[k];
			break;
		case REMAT_I_FCK:
		case REMAT_I_FNG:
			cost += b->fwng[s];
			break;
		default:
			assert_int_equal(s, next_b);
			assert_int_equal(k, fall_opt[s]);
			next_b--;
			cost += rk->bw[k];
		}
	}
	assert_int_equal(next_b, -1);
	return cost;
}

/*
 * Several options: the table equals the least over every choice of one
 * option per stage (K^L one-option tables), and the backtracked plan
 * costs what the table says.
 */
static void test_options_exhaustive(void **state)
{
	uint64_t rs = 2024;
	int trial;

	(void)state;
	for (trial = 0; trial < 120; trial++) {
		int32_t L = rnd(&rs, 1, 4), K = rnd(&rs, 1, 3), M = rnd(&rs, 5, 40), m, i;
		int32_t total = 1, a;
		struct remat_i_rotor_chain ch;
		struct remat_i_rk_table kt;
		struct remat_i_rk_chain rk, one;
		struct remat_i_rk_op ops[256];
		struct opts o, p;
		struct remat_error err;
		double best[64];

		random_chain(&rs, L, &ch);
		random_options(&rs, &ch, K, &o);
		rk_view(&ch, &o, &rk);
		assert_int_equal(remat_i_rk_solve(&rk, M, &kt, NULL, &err), REMAT_OK);
		for (m = 0; m <= M; m++)
			best[m] = INFINITY;
		for (i = 0; i < L; i++)
			total *= K;
		for (a = 0; a < total; a++) {
			struct remat_i_rk_table t1;
			int32_t code = a;

			/* Choice a: option (a / K^i) % K of stage i, alone. */
			for (i = 0; i < L; i++) {
				int32_t k = o.off[i] + code % K;

				code /= K;
				p.off[i] = i;
				p.xb[i] = o.xb[k];
				p.fa[i] = o.fa[k];
				p.bp[i] = o.bp[k];
				p.fah[i] = o.fah[k];
				p.fw[i] = o.fw[k];
				p.bw[i] = o.bw[k];
				p.fwh[i] = o.fwh[k];
			}
			p.off[L] = L;
			rk_view(&ch, &p, &one);
			assert_int_equal(remat_i_rk_solve(&one, M, &t1, NULL, &err), REMAT_OK);
			for (m = 0; m <= M; m++)
				if (remat_i_rk_cost(&t1, m) < best[m])
					best[m] = remat_i_rk_cost(&t1, m);
			remat_i_rk_table_release(&t1);
		}
		for (m = 0; m <= M; m++) {
			double c = remat_i_rk_cost(&kt, m);
			int64_t n;

			if (!(c == best[m] || (isinf(c) && isinf(best[m]))))
				fail_msg("trial %d, L %d, K %d, m %d: rk-Rotor %g, exhaustive %g",
					 trial, (int)L, (int)K, (int)m, c, best[m]);
			n = remat_i_rk_backtrack(&rk, &kt, m, ops);
			if (isinf(c)) {
				assert_int_equal(n, -1);
				continue;
			}
			assert_true(n > 0 && n <= 4 * L * L + 4 * L);
			assert_true(fabs(ops_cost(&rk, ops, n) - c) < 1e-9);
		}
		remat_i_rk_table_release(&kt);
		remat_i_rotor_chain_release(&ch);
	}
}

/* The graph of test_planner_by_hand (below). */
static const char HAND[] = "{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
	"{\"id\":\"x\",\"kind\":\"input\",\"mem\":1},"
	"{\"id\":\"a\",\"kind\":\"forward\",\"mem\":1,\"cost\":1,\"inputs\":[\"x\"]},"
	"{\"id\":\"t\",\"kind\":\"forward\",\"mem\":8,\"cost\":1,\"inputs\":[\"a\"]},"
	"{\"id\":\"s\",\"kind\":\"forward\",\"mem\":1,\"cost\":10,\"inputs\":[\"a\"]},"
	"{\"id\":\"h\",\"kind\":\"forward\",\"mem\":1,\"cost\":1,\"inputs\":[\"t\",\"s\",\"a\"]},"
	"{\"id\":\"b\",\"kind\":\"forward\",\"mem\":8,\"cost\":1,\"inputs\":[\"h\"]},"
	"{\"id\":\"k\",\"kind\":\"forward\",\"mem\":1,\"cost\":1,\"inputs\":[\"b\",\"h\"]},"
	"{\"id\":\"L\",\"kind\":\"loss\",\"mem\":1,\"cost\":1,\"inputs\":[\"k\"]},"
	"{\"id\":\"gk\",\"kind\":\"backward\",\"mem\":1,\"cost\":1,\"inputs\":[\"L\",\"b\"],\"grad_of\":\"k\"},"
	"{\"id\":\"gb\",\"kind\":\"backward\",\"mem\":1,\"cost\":1,\"inputs\":[\"gk\",\"h\"],\"grad_of\":\"b\"},"
	"{\"id\":\"gh\",\"kind\":\"backward\",\"mem\":1,\"cost\":1,\"inputs\":[\"gb\",\"t\",\"s\"],\"grad_of\":\"h\"},"
	"{\"id\":\"gs\",\"kind\":\"backward\",\"mem\":1,\"cost\":1,\"inputs\":[\"gh\",\"a\"],\"grad_of\":\"s\"},"
	"{\"id\":\"gt\",\"kind\":\"backward\",\"mem\":1,\"cost\":1,\"inputs\":[\"gh\",\"a\"],\"grad_of\":\"t\"},"
	"{\"id\":\"ga\",\"kind\":\"backward\",\"mem\":1,\"cost\":1,\"inputs\":[\"gt\",\"gs\",\"x\"],\"grad_of\":\"a\"}"
	"],\"outputs\":[\"ga\"]}";

/*
 * The planner end to end, by hand.  Stages (chain view): {a}, {t s h},
 * {b k L}; in the middle block t is big and cheap (8 bytes, cost 1), s
 * small and dear (1 byte, cost 10), both read by the block's backward.
 * No-remat peak 22, cost 22.  At 14 bytes t and b (8 each) can never be
 * resident together (with x and a: 18).  Rotor can only re-run the middle
 * block after the last block's backward: F_held recomputes t and s (h
 * stays), cost 22 + 1 + 10 = 33.  Rockmate's option "do not keep t"
 * recomputes t alone before gh: forward x a t s h (12), t freed after h
 * (4), b k L (14 with k freed at L), gk (14), gb, t again (12), gh (13):
 * peak 14, cost 23, which is optimal (a schedule within 14 must
 * recompute something, and every node costs at least 1).
 */
static void test_planner_by_hand(void **state)
{
	struct remat_graph *g = tu_graph(HAND);
	struct remat_sim_result r;

	(void)state;
	assert_int_equal(g->no_remat_peak, 22);
	assert_int_equal(tu_plan(g, "rotor", 14, NULL, 0, TU_MUST_FIT, &r), REMAT_OK);
	assert_true(r.cost == 33);
	assert_int_equal(tu_plan(g, "rockmate", 14, NULL, 0, TU_MUST_FIT, &r), REMAT_OK);
	assert_true(r.cost == 23);
	assert_int_equal(r.peak_mem, 14);
	assert_int_equal(r.recomputes, 1);
	/*
	 * With one level the middle block's options are "keep all" and "keep
	 * neither t nor s" (recomputing both, 11): 33 again, as rotor.  With
	 * --exhaustive, every non-empty subset of {t, s} is measured: at the
	 * one level of kept bytes only {t, s} (1 byte kept, h aside) reaches
	 * the least; the backward peak is 11 for every subset (gb and gh with
	 * t, s or their recomputations), so at that level the cheapest
	 * subset, {t} (cost 1), becomes an option: 23 again.
	 */
	{
		struct remat_kv o[] = { { "levels", "1" }, { "exhaustive", "4" } };

		assert_int_equal(tu_plan(g, "rockmate", 14, o, 1, TU_MUST_FIT, &r), REMAT_OK);
		assert_true(r.cost == 33);
		assert_int_equal(tu_plan(g, "rockmate", 14, o, 2, TU_MUST_FIT, &r), REMAT_OK);
		assert_true(r.cost == 23);
	}
	remat_graph_free(g);
}

/*
 * Identical blocks: a chain h1..h4 of equal layers, each reading the
 * previous one and a static mask k, with backward g4..g1.  Stages {h1},
 * {h2}, {h3}, {h4 L} (the loss merged into the last).  By hand: h1 reads
 * the graph input x where h2 and h3 read their stage input; h4's stage
 * also holds the loss; h2's and h3's stages read the same kinds of
 * values of the same sizes and are read alike (h3, h4 forward later, g3,
 * g4 backward in the next stage): classes 0, 1, 1, 3, three distinct.
 */
static void test_block_classes(void **state)
{
	const char *json = "{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":4},"
		"{\"id\":\"z\",\"kind\":\"forward\",\"mem\":2},"
		"{\"id\":\"k\",\"kind\":\"forward\",\"mem\":2,\"inputs\":[\"z\"]},"
		"{\"id\":\"h1\",\"kind\":\"forward\",\"mem\":8,\"cost\":5,\"inputs\":[\"x\",\"k\"]},"
		"{\"id\":\"h2\",\"kind\":\"forward\",\"mem\":8,\"cost\":5,\"inputs\":[\"h1\",\"k\"]},"
		"{\"id\":\"h3\",\"kind\":\"forward\",\"mem\":8,\"cost\":5,\"inputs\":[\"h2\",\"k\"]},"
		"{\"id\":\"h4\",\"kind\":\"forward\",\"mem\":8,\"cost\":5,\"inputs\":[\"h3\",\"k\"]},"
		"{\"id\":\"L\",\"kind\":\"loss\",\"mem\":1,\"inputs\":[\"h4\"]},"
		"{\"id\":\"g4\",\"kind\":\"backward\",\"mem\":8,\"cost\":5,\"inputs\":[\"L\",\"h3\",\"k\"],\"grad_of\":\"h4\"},"
		"{\"id\":\"g3\",\"kind\":\"backward\",\"mem\":8,\"cost\":5,\"inputs\":[\"g4\",\"h2\",\"k\"],\"grad_of\":\"h3\"},"
		"{\"id\":\"g2\",\"kind\":\"backward\",\"mem\":8,\"cost\":5,\"inputs\":[\"g3\",\"h1\",\"k\"],\"grad_of\":\"h2\"},"
		"{\"id\":\"g1\",\"kind\":\"backward\",\"mem\":8,\"cost\":5,\"inputs\":[\"g2\",\"x\",\"k\"],\"grad_of\":\"h1\"}"
		"],\"outputs\":[\"g1\"]}";
	struct remat_graph *g = tu_graph(json);
	struct remat_chain *c = NULL;
	struct remat_error err;
	int32_t cls[4];

	(void)state;
	assert_int_equal(remat_chain_build(g, &c, &err), REMAT_OK);
	assert_int_equal(c->n_stages, 4);
	assert_int_equal(remat_i_rk_block_classes(g, c, cls), 3);
	assert_int_equal(cls[0], 0);
	assert_int_equal(cls[1], 1);
	assert_int_equal(cls[2], 1);
	assert_int_equal(cls[3], 3);
	remat_chain_free(c);
	/* A different cost in h3 makes its block distinct. */
	{
		char *j2 = strdup(json), *p = strstr(j2, "\"id\":\"h3\"");

		assert_non_null(p);
		p = strstr(p, "\"cost\":5");
		p[7] = '6';
		remat_graph_free(g);
		g = tu_graph(j2);
		assert_int_equal(remat_chain_build(g, &c, &err), REMAT_OK);
		assert_int_equal(remat_i_rk_block_classes(g, c, cls), 4);
		assert_int_equal(cls[2], 2);
		remat_chain_free(c);
		free(j2);
	}
	remat_graph_free(g);
}

/*
 * The MILP's options (--milp-levels) on the graph of
 * test_planner_by_hand.  With --levels 1 the fast options of the middle
 * block are "keep all" and "keep neither t nor s", and rockmate costs 33
 * at 14 bytes (above).  The block alone, with "kept" levels: what it may
 * keep at the start of its backward beside a (its input), gb (the
 * gradient in) and h (read outside) is t (8) and s (1); at the levels
 * below 9 kept bytes the cheapest answer leaves out t alone (cost 1, s
 * costs 10), so "do not keep t" is an option and rockmate reaches the
 * optimum of the whole graph at 14 bytes, found here by brute force (23).
 * With "peak" levels every option of the block peaks at 13 (its forward
 * at h, its backward at gh), so the MILP has nothing cheaper to offer.
 */
static void test_milp_options_by_hand(void **state)
{
	struct remat_graph *g = tu_graph(HAND);
	/* A generous time per block: the MILP proves these tiny blocks at once. */
	struct remat_kv kept[] = { { "levels", "1" }, { "milp-levels", "4" },
				   { "block-time", "60" } };
	struct remat_kv peak[] = { { "levels", "1" }, { "milp-levels", "4" },
				   { "milp-target", "peak" } };
	struct remat_sim_result r;
	double opt = exhaustive_min_cost_in_order(g, 14);

	(void)state;
	assert_true(opt == 23);
	assert_int_equal(tu_plan(g, "rockmate", 14, kept, 3, TU_MUST_FIT, &r), REMAT_OK);
	assert_true(r.cost == opt);
	assert_int_equal(tu_plan(g, "rockmate", 14, peak, 3, TU_MUST_FIT, &r), REMAT_OK);
	assert_true(r.cost == 33);
	remat_graph_free(g);
}

/*
 * Options are only ever added: at every budget from the least rockmate
 * fits in to the no-remat peak, on the by-hand graph and on a chain of
 * four equal layers with a static mask, rockmate with the MILP's options
 * (either target, one or two fast levels) fits wherever it does without
 * them and costs no more, and never less than the brute-force optimum.
 */
static void test_milp_options_never_worse(void **state)
{
	const char *layers = "{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"x\",\"kind\":\"input\",\"mem\":4},"
		"{\"id\":\"k\",\"kind\":\"input\",\"mem\":1},"
		"{\"id\":\"p1\",\"kind\":\"forward\",\"mem\":6,\"cost\":1,\"inputs\":[\"x\",\"k\"]},"
		"{\"id\":\"h1\",\"kind\":\"forward\",\"mem\":4,\"cost\":4,\"inputs\":[\"p1\"]},"
		"{\"id\":\"p2\",\"kind\":\"forward\",\"mem\":6,\"cost\":1,\"inputs\":[\"h1\",\"k\"]},"
		"{\"id\":\"h2\",\"kind\":\"forward\",\"mem\":4,\"cost\":4,\"inputs\":[\"p2\"]},"
		"{\"id\":\"p3\",\"kind\":\"forward\",\"mem\":6,\"cost\":1,\"inputs\":[\"h2\",\"k\"]},"
		"{\"id\":\"h3\",\"kind\":\"forward\",\"mem\":4,\"cost\":4,\"inputs\":[\"p3\"]},"
		"{\"id\":\"L\",\"kind\":\"loss\",\"mem\":1,\"cost\":1,\"inputs\":[\"h3\"]},"
		"{\"id\":\"g3\",\"kind\":\"backward\",\"mem\":4,\"cost\":2,\"inputs\":[\"L\",\"p3\"],\"grad_of\":\"h3\"},"
		"{\"id\":\"q3\",\"kind\":\"backward\",\"mem\":4,\"cost\":2,\"inputs\":[\"g3\",\"p3\",\"k\"],\"grad_of\":\"p3\"},"
		"{\"id\":\"g2\",\"kind\":\"backward\",\"mem\":4,\"cost\":2,\"inputs\":[\"q3\",\"p2\"],\"grad_of\":\"h2\"},"
		"{\"id\":\"q2\",\"kind\":\"backward\",\"mem\":4,\"cost\":2,\"inputs\":[\"g2\",\"p2\",\"k\"],\"grad_of\":\"p2\"},"
		"{\"id\":\"g1\",\"kind\":\"backward\",\"mem\":4,\"cost\":2,\"inputs\":[\"q2\",\"p1\"],\"grad_of\":\"h1\"},"
		"{\"id\":\"q1\",\"kind\":\"backward\",\"mem\":4,\"cost\":2,\"inputs\":[\"g1\",\"p1\",\"k\",\"x\"],\"grad_of\":\"p1\"}"
		"],\"outputs\":[\"q1\"]}";
	const char *json[2] = { HAND, layers };
	const char *lv[2] = { "1", "2" }, *tg[2] = { "kept", "peak" };
	int gi, li, ti, fits = 0;

	(void)state;
	for (gi = 0; gi < 2; gi++) {
		struct remat_graph *g = tu_graph(json[gi]);
		int64_t b;

		for (b = g->min_peak_lower_bound; b <= g->no_remat_peak; b++) {
			double opt = exhaustive_min_cost_in_order(g, b);

			for (li = 0; li < 2; li++) {
				struct remat_kv off[] = { { "levels", lv[li] } };
				struct remat_sim_result r0, r1;
				int rc0 = tu_plan(g, "rockmate", b, off, 1, TU_ANY_STATUS, &r0);

				for (ti = 0; ti < 2; ti++) {
					struct remat_kv on[] = { { "levels", lv[li] },
								 { "milp-levels", "4" },
								 { "milp-target", tg[ti] } };
					int rc1 = tu_plan(g, "rockmate", b, on, 3, TU_ANY_STATUS, &r1);

					if (rc0 != REMAT_OK || !r0.feasible)
						continue;
					fits++;
					assert_int_equal(rc1, REMAT_OK);
					assert_true(r1.feasible);
					assert_true(r1.cost <= r0.cost);
					assert_true(r1.cost >= opt - 1e-9);
				}
			}
		}
		remat_graph_free(g);
	}
	assert_true(fits > 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_option_is_rotor),
		cmocka_unit_test(test_options_exhaustive),
		cmocka_unit_test(test_planner_by_hand),
		cmocka_unit_test(test_block_classes),
		cmocka_unit_test(test_milp_options_by_hand),
		cmocka_unit_test(test_milp_options_never_worse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
