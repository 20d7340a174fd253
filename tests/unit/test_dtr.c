/*
 * test_dtr.c - the dtr planner (src/planners/dtr.c) on hand-sized graphs
 * whose runs are worked out by hand in the comments, a long chain for the
 * paper's O(N) bound, and a 100k-deep rematerialization.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/*
 * Both through tu_plan_run() (testutil.h), which checks what comes back;
 * s, res, rep and err receive its answer.
 */
static int dtr_plan(const struct remat_graph *g, int64_t budget, const struct remat_kv *opts,
		    int n_opts, unsigned flags, struct remat_schedule *s,
		    struct remat_sim_result *res, struct remat_plan_report *rep,
		    struct remat_error *err)
{
	struct tu_plan t = { .planner = "dtr", .opts = opts, .n_opts = n_opts, .seed = 1,
			     .flags = flags };

	remat_schedule_swap(&t.s, s);
	tu_plan_run(g, budget, &t);
	remat_schedule_swap(&t.s, s);
	if (res)
		*res = t.res;
	if (rep)
		*rep = t.rep;
	*err = t.err;
	tu_plan_release(&t);
	return t.rc;
}

/* dtr's plan() itself: the runtime's own steps, no runner (TU_OWN). */
static int dtr_direct(const struct remat_graph *g, int64_t budget, const struct remat_kv *opts,
		      int n_opts, struct remat_schedule *s, struct remat_plan_report *rep,
		      struct remat_error *err)
{
	return dtr_plan(g, budget, opts, n_opts, TU_OWN | TU_ANY_STATUS, s, NULL, rep, err);
}

/* Through remat_plan_run, as the CLI does. */
static int dtr_run(const struct remat_graph *g, int64_t budget, const char *heuristic,
		   const char *max_overhead, struct remat_schedule *s,
		   struct remat_sim_result *res, struct remat_error *err)
{
	struct remat_kv opts[2];
	int n = 0;

	if (heuristic)
		opts[n++] = (struct remat_kv){ "heuristic", heuristic };
	if (max_overhead)
		opts[n++] = (struct remat_kv){ "max-overhead", max_overhead };
	return dtr_plan(g, budget, opts, n, 0, s, res, NULL, err);
}

static int64_t note_peak(const struct remat_plan_report *rep)
{
	const char *p = strstr(rep->note, "runtime peak ");

	assert_non_null(p);
	return strtoll(p + strlen("runtime peak "), NULL, 10);
}

static const char *const HEURISTICS[] = { "dtr", "dtr-local", "lru", "largest", "msps" };

/*
 * Kumar et al. Fig. 1 (A..E, 1 byte each; D reads B, C; E reads A, D) at
 * budget 3.  A B C fill memory; D needs one more byte; B and C are its
 * locked inputs, so every heuristic must evict A.  After D, B and C have
 * no later reader and go.  E needs A back: 1 (D) + 1 = 2 fits; E: 3.
 */
static void test_kumar_every_heuristic(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule s;
	struct remat_plan_report rep;
	struct remat_error err;
	struct remat_sim_result r;
	size_t i;

	(void)state;
	remat_schedule_init(&s);
	for (i = 0; i < sizeof(HEURISTICS) / sizeof(HEURISTICS[0]); i++) {
		struct remat_kv o = { "heuristic", HEURISTICS[i] };

		assert_int_equal(dtr_direct(g, 3, &o, 1, &s, &rep, &err), REMAT_OK);
		assert_string_equal(tu_sched_text(g, &s), "A B C -A D -B -C A E -A -D");
		assert_int_equal(remat_simulate(g, &s, 3, NULL, &r, NULL), REMAT_OK);
		assert_true(r.valid && r.feasible);
		assert_true(r.cost == 6.0);
		assert_int_equal(note_peak(&rep), r.peak_mem);
	}
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * Five candidates, one allocation, a victim per heuristic that tells the
 * rules apart.  Program order (Kahn, file order): A B P C E D X, then the
 * readers y*.  Staleness is counted in compute time, as the DTR paper and
 * its simulator do: the clock advances by each op's cost (A 30, B 40,
 * P 10, C 1, E 2, D 0.3), a new tensor is accessed when its op ends and
 * an op's inputs when it starts.  Last access: A 30, B 70, P 80 (C's
 * start), C 81, E 83, D 83.3; X allocates at 83.3, so staleness A 53.3,
 * B 13.3, C 2.3, E 0.3, D 0 (score infinite: just used).  P's only reader
 * is C, so P is freed right after C and sits evicted (class cost 10) next
 * to C.  Memory before X: A2 B8 C4 E2 D2 = 18 = budget; X needs 1, so
 * exactly one tensor goes.
 *
 *        m  c    s     dtr-local c/(ms)    dtr (c+nb)/(ms)    msps (c+nb_in)/m
 *   A    2  30   53.3  0.2814              0.2814 <-dtr       15
 *   B    8  40   13.3  0.3759              0.3759             5
 *   C    4  1    2.3   0.1087 <-local      11/9.2 = 1.196     11/4 = 2.75
 *   E    2  2    0.3   3.333               3.333              1
 *   D    2  0.3  0     inf                 inf                0.15 <-msps
 * lru: A (oldest); largest: B.
 *
 * With the tick clock (one tick per op: staleness A 6, B 5, C 3, E 2,
 * D 1), dtr would score A 2.5, B 1, C 0.917, E 0.5, D 0.15 and evict D:
 * cost-based staleness evicts A instead.
 */
#define HEUR_GRAPH \
	"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[" \
	"{\"id\":\"A\",\"mem\":2,%s}," \
	"{\"id\":\"B\",\"mem\":8,\"cost\":40%s}," \
	"{\"id\":\"P\",\"mem\":1,\"cost\":10}," \
	"{\"id\":\"C\",\"mem\":4,\"cost\":1,\"inputs\":[\"P\"]}," \
	"{\"id\":\"E\",\"mem\":2,\"cost\":2}," \
	"{\"id\":\"D\",\"mem\":2,\"cost\":0.3}," \
	"{\"id\":\"X\",\"mem\":1,\"cost\":1}," \
	"{\"id\":\"yA\",\"mem\":1,\"inputs\":[\"A\"]}," \
	"{\"id\":\"yB\",\"mem\":1,\"inputs\":[\"B\"]}," \
	"{\"id\":\"yC\",\"mem\":1,\"inputs\":[\"C\"]}," \
	"{\"id\":\"yE\",\"mem\":1,\"inputs\":[\"E\"]}," \
	"{\"id\":\"yD\",\"mem\":1,\"inputs\":[\"D\"]}]}"

/* a_fields: A's cost or kind; b_extra: more fields for B. */
static struct remat_graph *heur_graph(const char *a_fields, const char *b_extra)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), HEUR_GRAPH, a_fields, b_extra);
	return tu_graph(buf);
}

static void expect_victim(struct remat_graph *g, const char *heuristic, const char *prefix)
{
	struct remat_kv o = { "heuristic", heuristic };
	struct remat_schedule s;
	struct remat_plan_report rep;
	struct remat_error err;
	struct remat_sim_result r;
	const char *text;

	remat_schedule_init(&s);
	assert_int_equal(dtr_direct(g, 18, &o, 1, &s, &rep, &err), REMAT_OK);
	text = tu_sched_text(g, &s);
	if (strncmp(text, prefix, strlen(prefix)) != 0)
		fail_msg("heuristic %s: schedule '%s' does not start '%s'", heuristic, text, prefix);
	assert_int_equal(remat_simulate(g, &s, 18, NULL, &r, NULL), REMAT_OK);
	assert_true(r.valid && r.feasible);
	assert_int_equal(note_peak(&rep), r.peak_mem);
	remat_schedule_release(&s);
}

static void test_heuristic_choices(void **state)
{
	struct remat_graph *g = heur_graph("\"cost\":30", "");

	(void)state;
	assert_true(g->no_remat_peak > 18);
	expect_victim(g, "dtr", "A B P C -P E D -A X ");
	expect_victim(g, "dtr-local", "A B P C -P E D -C X ");
	expect_victim(g, "lru", "A B P C -P E D -A X ");
	expect_victim(g, "largest", "A B P C -P E D -B X ");
	expect_victim(g, "msps", "A B P C -P E D -D X ");
	remat_graph_free(g);
}

/*
 * --after-recompute.  a (4 bytes, cost 10), b1 and b2 read a (1 byte, cost
 * 1 each), Z (6, cost 1), Z2 reads Z (1), y reads b1, b2, Z2 (1); budget 7.
 * a is freed after b2, its last program reader.  Z needs 2 + 6: b1 goes
 * (b2 was just used: staleness 0); Z2 needs 7 + 1: b2 goes; Z is freed
 * after Z2.  y brings b1 back, which brings a back (1 + 4, then b1: 6).
 * keep: a stays, b2 reads it (7); y needs one more byte and a, the only
 * unlocked candidate, goes: recomputed a, b1, b2 = 12, cost 15 + 12 = 27.
 * free: a goes once b1 is done and b2 brings it back again: a, b1, a, b2
 * = 22, cost 37.  best returns keep's schedule.
 */
static void test_after_recompute(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"a\",\"mem\":4,\"cost\":10},"
		"{\"id\":\"b1\",\"mem\":1,\"cost\":1,\"inputs\":[\"a\"]},"
		"{\"id\":\"b2\",\"mem\":1,\"cost\":1,\"inputs\":[\"a\"]},"
		"{\"id\":\"Z\",\"mem\":6,\"cost\":1},"
		"{\"id\":\"Z2\",\"mem\":1,\"cost\":1,\"inputs\":[\"Z\"]},"
		"{\"id\":\"y\",\"mem\":1,\"cost\":1,\"inputs\":[\"b1\",\"b2\",\"Z2\"]}]}");
	static const char *const modes[] = { "keep", "free", "best" };
	static const char *const want[] = {
		"a b1 b2 -a -b1 Z -b2 Z2 -Z a b1 b2 -a y -b1 -b2 -Z2",
		"a b1 b2 -a -b1 Z -b2 Z2 -Z a b1 -a a b2 -a y -b1 -b2 -Z2",
		"a b1 b2 -a -b1 Z -b2 Z2 -Z a b1 b2 -a y -b1 -b2 -Z2",
	};
	static const double cost[] = { 27, 37, 27 };
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;
	int i;

	(void)state;
	assert_int_equal(g->no_remat_peak, 9); /* at Z2: b1 b2 Z Z2 */
	for (i = 0; i < 3; i++) {
		struct remat_kv o = { "after-recompute", modes[i] };

		remat_schedule_init(&s);
		assert_int_equal(dtr_plan(g, 7, &o, 1, 0, &s, &r, NULL, &err), REMAT_OK);
		assert_string_equal(tu_sched_text(g, &s), want[i]);
		assert_true(r.feasible);
		assert_int_equal(r.peak_mem, 7);
		assert_true(fabs(r.cost - cost[i]) < 1e-9);
		remat_schedule_release(&s);
	}
	remat_graph_free(g);
}

/* B may not be recomputed: largest takes the next largest, C (4 bytes). */
static void test_recompute_false_never_evicted(void **state)
{
	struct remat_graph *g = heur_graph("\"cost\":30", ",\"recompute\":false");

	(void)state;
	expect_victim(g, "largest", "A B P C -P E D -C X ");
	remat_graph_free(g);
}

/* A is an input (cost 0, never evicted); lru now takes B, the oldest op. */
static void test_inputs_never_evicted(void **state)
{
	struct remat_graph *g = heur_graph("\"kind\":\"input\"", "");

	(void)state;
	expect_victim(g, "lru", "B P C -P E D -B X ");
	remat_graph_free(g);
}

/*
 * Workspace counts: a (4 bytes), b (1 byte + 4 workspace, no inputs),
 * c reads a and b.  No-remat peak 9 (a + b + workspace).  At budget 8, b's
 * allocation must evict a (4 + 1 + 4 > 8); c brings a back: 1 + 4 = 5,
 * then c: 6.  Peak 6 (at c).
 */
static void test_workspace_forces_eviction(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"a\",\"mem\":4},"
		"{\"id\":\"b\",\"mem\":1,\"workspace\":4},"
		"{\"id\":\"c\",\"mem\":1,\"inputs\":[\"a\",\"b\"]}]}");
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(g->no_remat_peak, 9);
	assert_int_equal(dtr_run(g, 8, NULL, NULL, &s, &r, &err), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &s), "a -a b a c -a -b");
	assert_int_equal(r.peak_mem, 6);
	assert_int_equal(r.recomputes, 1);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * An output evicted along the way comes back at the end.  o1 (3 bytes,
 * an output nobody reads), z1 (4), z2 reads z1.  Budget 6: z1 needs
 * 3 + 4 = 7, so o1 goes; z2: 4 + 1; z1 is then dead; o1 returns: 1 + 3.
 */
static void test_evicted_output_returns(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"o1\",\"mem\":3},"
		"{\"id\":\"z1\",\"mem\":4},"
		"{\"id\":\"z2\",\"mem\":1,\"inputs\":[\"z1\"]}],\"outputs\":[\"o1\",\"z2\"]}");
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(g->no_remat_peak, 8);
	assert_int_equal(dtr_run(g, 6, NULL, NULL, &s, &r, &err), REMAT_OK);
	assert_string_equal(tu_sched_text(g, &s), "o1 -o1 z1 z2 -z1 o1");
	assert_int_equal(r.peak_mem, 5);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * Lock release in a deep rematerialization (step 4).  R (3 bytes), Q (1)
 * reads R, Y (5) with Yc (0) reading it, P (4), Z (0) reads P and Q.
 * Order R Q Y Yc P Z; budget 5 (the lower bound: Y alone, or P + Q).
 * R Q, then R is freed (Q was its last reader).  Y needs 1 + 5: Q goes.
 * Yc; Y is freed.  P at 4.  Z locks P and brings Q back, which needs R:
 * 4 + 3 > 5 and the only candidate, P, is locked by Z.  Z releases P; P
 * goes; R (3), Q (4), R freed; Z resumes: P again (1 + 4), then Z; P and
 * Q are freed after their last reader.
 */
static void test_lock_release(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"R\",\"mem\":3},"
		"{\"id\":\"Q\",\"mem\":1,\"inputs\":[\"R\"]},"
		"{\"id\":\"Y\",\"mem\":5},"
		"{\"id\":\"Yc\",\"mem\":0,\"inputs\":[\"Y\"]},"
		"{\"id\":\"P\",\"mem\":4},"
		"{\"id\":\"Z\",\"mem\":0,\"inputs\":[\"P\",\"Q\"]}]}");
	struct remat_schedule s;
	struct remat_plan_report rep;
	struct remat_error err;
	struct remat_sim_result r;
	size_t i;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(g->min_peak_lower_bound, 5);
	assert_int_equal(g->no_remat_peak, 6);
	for (i = 0; i < sizeof(HEURISTICS) / sizeof(HEURISTICS[0]); i++) {
		struct remat_kv o = { "heuristic", HEURISTICS[i] };

		assert_int_equal(dtr_direct(g, 5, &o, 1, &s, &rep, &err), REMAT_OK);
		assert_string_equal(tu_sched_text(g, &s),
				    "R Q -R -Q Y Yc -Y P -P R Q -R P Z -P -Q");
		assert_non_null(strstr(rep.note, " 1 spills"));
		assert_int_equal(remat_simulate(g, &s, 5, NULL, &r, NULL), REMAT_OK);
		assert_true(r.valid && r.feasible);
		assert_int_equal(r.recomputes, 3);
	}
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * The thrash limit: Kumar at budget 3 needs one recompute of A (cost 1)
 * over a baseline of 5, an overhead of exactly 0.2.
 */
static void test_thrash_limit(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(dtr_run(g, 3, NULL, "0.2", &s, &r, &err), REMAT_OK);
	assert_int_equal(dtr_run(g, 3, NULL, "0.19", &s, &r, &err), REMAT_ENOFIT);
	assert_non_null(strstr(err.msg, "recomputation cost to 1 unit, over the thrash limit of 0.95 unit"));
	assert_int_equal(dtr_run(g, 3, NULL, "0", &s, &r, &err), REMAT_ENOFIT);
	/* The no-remat peak needs no recompute, whatever the limit. */
	assert_int_equal(dtr_run(g, 4, NULL, "0", &s, &r, &err), REMAT_OK);
	assert_int_equal(r.recomputes, 0);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/* Nothing may be evicted: every op "recompute": false, budget below the peak. */
static void test_nothing_evictable(void **state)
{
	struct remat_graph *g = tu_graph(
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
		"{\"id\":\"A\",\"mem\":1,\"recompute\":false},"
		"{\"id\":\"B\",\"mem\":1,\"recompute\":false,\"inputs\":[\"A\"]},"
		"{\"id\":\"C\",\"mem\":1,\"recompute\":false,\"inputs\":[\"B\"]},"
		"{\"id\":\"D\",\"mem\":1,\"recompute\":false,\"inputs\":[\"B\",\"C\"]},"
		"{\"id\":\"E\",\"mem\":1,\"recompute\":false,\"inputs\":[\"A\",\"D\"]}]}");
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;

	(void)state;
	remat_schedule_init(&s);
	assert_int_equal(dtr_run(g, 3, NULL, NULL, &s, &r, &err), REMAT_ENOFIT);
	assert_non_null(strstr(err.msg, "cannot fit 'D'"));
	remat_schedule_release(&s);
	remat_graph_free(g);
}

static void test_bad_options(void **state)
{
	struct remat_graph *g = tu_graph(TU_KUMAR);
	struct remat_schedule s;
	struct remat_plan_report rep;
	struct remat_error err;
	struct remat_kv bad[] = { { "heuristic", "fifo" }, { "max-overhead", "-1" },
				  { "sample", "many" } };
	int i;

	(void)state;
	remat_schedule_init(&s);
	for (i = 0; i < 3; i++) {
		assert_int_equal(dtr_direct(g, 3, &bad[i], 1, &s, &rep, &err), REMAT_EUSAGE);
		assert_non_null(strstr(err.msg, bad[i].key));
	}
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/*
 * A training chain x -> f1 .. fN -> loss -> bN .. b1, b_i reading b_(i+1)
 * (loss for N), f_(i-1) (x for 1) and f_i; every tensor 1 byte, cost 1.
 */
static struct remat_graph *train_chain(int n)
{
	struct remat_graph_builder *b = NULL;
	struct remat_graph *g = NULL;
	struct remat_error err;
	char id[32], in0[32], in1[32], in2[32], gof[32];
	const char *ins[3];
	int i;

	assert_int_equal(remat_builder_new("chain", &b, &err), REMAT_OK);
	{
		struct remat_node_spec x = { "x", REMAT_KIND_INPUT, 1, 0, -1, 1, NULL, NULL, NULL, 0 };

		assert_int_equal(remat_builder_add(b, &x, &err), REMAT_OK);
	}
	for (i = 1; i <= n; i++) {
		struct remat_node_spec f = { id, REMAT_KIND_FORWARD, 1, 0, 1, 1, NULL, NULL, ins, 1 };

		snprintf(id, sizeof(id), "f%d", i);
		snprintf(in0, sizeof(in0), i == 1 ? "x" : "f%d", i - 1);
		ins[0] = in0;
		assert_int_equal(remat_builder_add(b, &f, &err), REMAT_OK);
	}
	{
		struct remat_node_spec l = { "loss", REMAT_KIND_LOSS, 1, 0, 1, 1, NULL, NULL, ins, 1 };

		snprintf(in0, sizeof(in0), "f%d", n);
		ins[0] = in0;
		assert_int_equal(remat_builder_add(b, &l, &err), REMAT_OK);
	}
	for (i = n; i >= 1; i--) {
		struct remat_node_spec bw = { id, REMAT_KIND_BACKWARD, 1, 0, 1, 1, NULL, gof, ins, 3 };

		snprintf(id, sizeof(id), "b%d", i);
		snprintf(gof, sizeof(gof), "f%d", i);
		snprintf(in0, sizeof(in0), i == n ? "loss" : "b%d", i + 1);
		snprintf(in1, sizeof(in1), i == 1 ? "x" : "f%d", i - 1);
		snprintf(in2, sizeof(in2), "f%d", i);
		ins[0] = in0;
		ins[1] = in1;
		ins[2] = in2;
		assert_int_equal(remat_builder_add(b, &bw, &err), REMAT_OK);
	}
	assert_int_equal(remat_builder_add_output(b, "b1", &err), REMAT_OK);
	if (remat_builder_finish(b, &g, &err))
		fail_msg("chain: %s", err.msg);
	return g;
}

/*
 * DTR's bound (Kirisame et al., Theorem: Omega(sqrt N) memory, O(N)
 * operations on an N-layer linear network) with h_DTR and union-find
 * classes.  At a budget of 2 sqrt(N) tensors the run must finish with at
 * most 3N recomputations (about 1.0N is typical); the constant is loose
 * on purpose, the point is that it does not grow with N.
 */
static void test_chain_linear_recomputes(void **state)
{
	static const int sizes[] = { 256, 1024, 4096 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		int n = sizes[i];
		struct remat_graph *g = train_chain(n);
		struct remat_schedule s;
		struct remat_sim_result r;
		struct remat_error err;
		int64_t budget = (int64_t)(2 * sqrt((double)n));

		remat_schedule_init(&s);
		if (dtr_run(g, budget, "dtr", "100", &s, &r, &err) != REMAT_OK)
			fail_msg("chain %d at %lld: %s", n, (long long)budget, err.msg);
		assert_true(r.feasible);
		if (r.recomputes > 3 * (int64_t)n)
			fail_msg("chain %d: %lld recomputes, more than 3N", n, (long long)r.recomputes);
		remat_schedule_release(&s);
		remat_graph_free(g);
	}
}

/*
 * A 100000-deep rematerialization (an explicit stack, no C recursion).
 * x (input) -> f1 -> ... -> fN, then W (10 bytes + 2 workspace, no
 * inputs, an output) and g reading x and fN (an output).  No-remat peak
 * 14 (x + fN + W + workspace); budget 13.  Forward:
 * x + f(i-1) + f(i) = 3 at most, each f freed after its reader.  W needs
 * 2 + 12 = 14 > 13: fN, the only candidate, goes.  g needs fN, whose
 * whole chain is evicted: f1 .. fN come back one by one at x + W +
 * f(i-1) + f(i) = 13, then g: x + W + fN + g = 13.  Exactly N recomputes.
 */
static void test_deep_chain_explicit_stack(void **state)
{
	const int n = 100000;
	struct remat_graph_builder *b = NULL;
	struct remat_graph *g = NULL;
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;
	char id[32], in0[32];
	const char *ins[2] = { in0, "x" };
	int i;

	(void)state;
	assert_int_equal(remat_builder_new("deep", &b, &err), REMAT_OK);
	{
		struct remat_node_spec x = { "x", REMAT_KIND_INPUT, 1, 0, -1, 1, NULL, NULL, NULL, 0 };

		assert_int_equal(remat_builder_add(b, &x, &err), REMAT_OK);
	}
	for (i = 1; i <= n; i++) {
		struct remat_node_spec f = { id, REMAT_KIND_OP, 1, 0, 1, 1, NULL, NULL, ins, 1 };

		snprintf(id, sizeof(id), "f%d", i);
		snprintf(in0, sizeof(in0), i == 1 ? "x" : "f%d", i - 1);
		assert_int_equal(remat_builder_add(b, &f, &err), REMAT_OK);
	}
	{
		struct remat_node_spec w = { "W", REMAT_KIND_OP, 10, 2, 1, 1, NULL, NULL, NULL, 0 };
		struct remat_node_spec gg = { "g", REMAT_KIND_OP, 1, 0, 1, 1, NULL, NULL, ins, 2 };

		assert_int_equal(remat_builder_add(b, &w, &err), REMAT_OK);
		snprintf(in0, sizeof(in0), "f%d", n);
		assert_int_equal(remat_builder_add(b, &gg, &err), REMAT_OK);
	}
	assert_int_equal(remat_builder_add_output(b, "W", &err), REMAT_OK);
	assert_int_equal(remat_builder_add_output(b, "g", &err), REMAT_OK);
	assert_int_equal(remat_builder_finish(b, &g, &err), REMAT_OK);
	assert_int_equal(g->no_remat_peak, 14);

	remat_schedule_init(&s);
	if (dtr_run(g, 13, NULL, NULL, &s, &r, &err) != REMAT_OK)
		fail_msg("deep chain: %s", err.msg);
	assert_int_equal(r.recomputes, n);
	assert_int_equal(r.peak_mem, 13);
	assert_int_equal(r.computes, 2 * (int64_t)n + 2);
	remat_schedule_release(&s);
	remat_graph_free(g);
}

/* A deadline already past: the run stops at its next check (every 4096 ops). */
static void test_deadline(void **state)
{
	struct remat_graph *g = train_chain(4096);
	struct tu_plan t = { .planner = "dtr", .time_limit = -1 };

	(void)state;
	assert_int_equal(tu_plan_run(g, 128, &t), REMAT_ENOFIT);
	assert_non_null(strstr(t.err.msg, "time limit"));
	tu_plan_release(&t);
	remat_graph_free(g);
}

/* Same seed, same schedule, also when sampling (--sample 2). */
static void test_deterministic_sampling(void **state)
{
	uint64_t rs = 7;
	char *json = tu_random_graph_json(&rs, 30, 0.15, 1);
	struct remat_graph *g = tu_graph(json);
	struct remat_kv o = { "sample", "2" };
	struct remat_schedule s1, s2;
	struct remat_plan_report rep;
	struct remat_error err;
	int64_t budget = (g->no_remat_peak + g->min_peak_lower_bound) / 2;
	int rc1, rc2;

	(void)state;
	remat_schedule_init(&s1);
	remat_schedule_init(&s2);
	rc1 = dtr_direct(g, budget, &o, 1, &s1, &rep, &err);
	rc2 = dtr_direct(g, budget, &o, 1, &s2, &rep, &err);
	assert_int_equal(rc1, rc2);
	assert_int_equal(s1.n, s2.n);
	if (s1.n)
		assert_memory_equal(s1.steps, s2.steps, sizeof(struct remat_step) * (size_t)s1.n);
	remat_schedule_release(&s1);
	remat_schedule_release(&s2);
	remat_graph_free(g);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kumar_every_heuristic),
		cmocka_unit_test(test_heuristic_choices),
		cmocka_unit_test(test_after_recompute),
		cmocka_unit_test(test_recompute_false_never_evicted),
		cmocka_unit_test(test_inputs_never_evicted),
		cmocka_unit_test(test_workspace_forces_eviction),
		cmocka_unit_test(test_evicted_output_returns),
		cmocka_unit_test(test_lock_release),
		cmocka_unit_test(test_thrash_limit),
		cmocka_unit_test(test_nothing_evictable),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_chain_linear_recomputes),
		cmocka_unit_test(test_deep_chain_explicit_stack),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_deterministic_sampling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
