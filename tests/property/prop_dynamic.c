/*
 * prop_dynamic.c - the dynamic planners (dtr with every heuristic, dtr
 * sampling, greedy with one round and two) on random graphs x budgets.  Every answer must be a
 * valid schedule within budget (checked again by tu_plan_run()) or
 * REMAT_ENOFIT, never REMAT_ENOFIT where the needed nodes' order fits,
 * and on graphs of up to 12 nodes never cheaper than the brute force
 * (exhaustive.h) and only where it finds a schedule.  Below that order's
 * peak each configuration must find at least a floor of schedules (a
 * planner that gives up finds none).  For dtr's own steps (budgets below
 * the no-remat peak) the runtime's peak must equal the simulator's, and
 * the same seed must give the same schedule.  greedy computes a node at
 * most twice with --rounds 1 (XLA's denylist), at most twice plus once
 * per user with two rounds, and wherever --rounds 1 fits, two rounds
 * return the same schedule.
 *
 * Graphs: inference DAGs and training graphs (Checkmate's rule for the
 * backward nodes) with 0-2 input nodes, zero-byte and zero-cost nodes,
 * workspaces, "recompute": false nodes, explicit outputs that other nodes
 * read, and nodes no output needs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "exhaustive.h"

#define MAXN 40

static int rnd(uint64_t *st, int n)
{
	return (int)(tu_rand(st) % (uint64_t)n);
}

/* A random graph through the builder (ids n0.., x0.., b0.., loss). */
static struct remat_graph *random_graph(uint64_t *st, int training)
{
	struct remat_graph_builder *b = NULL;
	struct remat_graph *g = NULL;
	struct remat_error err;
	static char ids[3 * MAXN + 8][16];
	const char *ins[3 * MAXN];
	uint8_t adj[MAXN][MAXN];
	int n = 2 + rnd(st, training ? 14 : MAXN - 2), nx = rnd(st, 3), i, j, k;
	int from_x[MAXN][2];
	double p = 0.05 + 0.3 * (double)rnd(st, 100) / 100.0;

	memset(adj, 0, sizeof(adj));
	assert_int_equal(remat_builder_new("prop", &b, &err), REMAT_OK);
	for (i = 0; i < nx; i++) {
		struct remat_node_spec x = { ids[MAXN + i], REMAT_KIND_INPUT, rnd(st, 6), 0, -1, 1,
					     NULL, NULL, NULL, 0 };

		snprintf(ids[MAXN + i], sizeof(ids[0]), "x%d", i);
		assert_int_equal(remat_builder_add(b, &x, &err), REMAT_OK);
	}
	for (i = 0; i < n; i++) {
		struct remat_node_spec v = { ids[i], training ? REMAT_KIND_FORWARD : REMAT_KIND_OP,
					     rnd(st, 9), rnd(st, 5) == 0 ? 1 + rnd(st, 6) : 0,
					     rnd(st, 6), rnd(st, 10) != 0, NULL, NULL, ins, 0 };

		snprintf(ids[i], sizeof(ids[0]), "n%d", i);
		for (k = 0; k < nx; k++) {
			from_x[i][k] = rnd(st, 3) == 0;
			if (from_x[i][k])
				ins[v.n_inputs++] = ids[MAXN + k];
		}
		for (j = 0; j < i; j++)
			if ((training && j == i - 1) || rnd(st, 1000) < (int)(p * 1000)) {
				adj[j][i] = 1;
				ins[v.n_inputs++] = ids[j];
			}
		assert_int_equal(remat_builder_add(b, &v, &err), REMAT_OK);
	}
	for (k = nx; k < 2; k++)
		for (i = 0; i < n; i++)
			from_x[i][k] = 0;
	if (training) {
		struct remat_node_spec l = { "loss", REMAT_KIND_LOSS, 1, 0, 1, 1, NULL, NULL, ins, 1 };

		ins[0] = ids[n - 1];
		assert_int_equal(remat_builder_add(b, &l, &err), REMAT_OK);
		for (i = n - 1; i >= 0; i--) {
			struct remat_node_spec bw = { ids[2 * MAXN + i], REMAT_KIND_BACKWARD, rnd(st, 9),
						      rnd(st, 6) == 0 ? 1 + rnd(st, 4) : 0, 2, 1, NULL,
						      ids[i], ins, 0 };

			snprintf(ids[2 * MAXN + i], sizeof(ids[0]), "b%d", i);
			ins[bw.n_inputs++] = ids[i];
			if (i == n - 1)
				ins[bw.n_inputs++] = "loss";
			for (k = 0; k < nx; k++)
				if (from_x[i][k])
					ins[bw.n_inputs++] = ids[MAXN + k];
			for (j = 0; j < n; j++) {
				if (j < i && adj[j][i])
					ins[bw.n_inputs++] = ids[j];
				if (j > i && adj[i][j])
					ins[bw.n_inputs++] = ids[2 * MAXN + j];
			}
			assert_int_equal(remat_builder_add(b, &bw, &err), REMAT_OK);
		}
	} else if (rnd(st, 2)) {
		/* Explicit outputs: some read by others, some nodes left dead. */
		int any = 0;

		for (i = 0; i < n; i++)
			if (rnd(st, 4) == 0 || (i == n - 1 && !any)) {
				assert_int_equal(remat_builder_add_output(b, ids[i], &err), REMAT_OK);
				any = 1;
			}
	}
	if (remat_builder_finish(b, &g, &err))
		fail_msg("random graph: %s", err.msg);
	return g;
}

struct config {
	const char *planner;
	struct remat_kv opts[2];
	int n_opts;
};

static const struct config CONFIGS[] = {
	{ "greedy", { { NULL, NULL } }, 0 },
	{ "dtr", { { "heuristic", "dtr" } }, 1 },
	{ "dtr", { { "heuristic", "dtr-local" } }, 1 },
	{ "dtr", { { "heuristic", "lru" } }, 1 },
	{ "dtr", { { "heuristic", "largest" } }, 1 },
	{ "dtr", { { "heuristic", "msps" } }, 1 },
	{ "dtr", { { "sample", "2" }, { "max-overhead", "50" } }, 2 },
	{ "greedy", { { "rounds", "1" } }, 1 },
};

/* Per configuration: schedules returned, exit 3 answers. */
static int n_ok[16], n_nofit[16];

static int64_t note_peak(const char *note)
{
	const char *p = strstr(note, "runtime peak ");

	if (!p)
		fail_msg("dtr note lacks the runtime peak: '%s'", note);
	return strtoll(p + strlen("runtime peak "), NULL, 10);
}

/*
 * One planner configuration on g at budget through tu_plan_run()
 * (testutil.h: the answer checked, and a schedule required wherever the
 * needed nodes' order fits); brute, when not NULL, is the brute force's
 * least cost there.  Returns the status.
 */
static int check_one(struct remat_graph *g, int64_t budget, const struct config *c,
		     uint64_t seed, int gi, const double *brute)
{
	struct tu_plan t = { .planner = c->planner, .opts = c->opts, .n_opts = c->n_opts,
			     .seed = seed, .brute = brute };
	struct remat_schedule s2;
	int rc, i;
	int32_t counts[4 * MAXN];

	remat_schedule_init(&s2);
	rc = tu_plan_run(g, budget, &t);
	if (rc == REMAT_OK)
		n_ok[c - CONFIGS]++;
	else
		n_nofit[c - CONFIGS]++;
	if (rc == REMAT_OK && strcmp(c->planner, "greedy") == 0) {
		/*
		 * The denylist: each node at most twice in round 1 (XLA's rules),
		 * and in round 2 twice plus once per user dropped with it in a
		 * block.
		 */
		int one = c->n_opts == 1;

		memset(counts, 0, sizeof(counts));
		for (i = 0; i < t.s.n; i++) {
			int32_t v = t.s.steps[i].node;

			if (t.s.steps[i].op == REMAT_OP_COMPUTE &&
			    ++counts[v] > 2 + (one ? 0 : g->use_off[v + 1] - g->use_off[v]))
				fail_msg("graph %d: greedy%s computes '%s' %d times", gi,
					 one ? " --rounds 1" : "", g->id[v], counts[v]);
		}
	}
	if (strcmp(c->planner, "greedy") == 0 && c->n_opts == 0) {
		/* Round 2 only where round 1 ends over the budget: same answer there. */
		struct tu_plan t1 = { .planner = "greedy", .opts = CONFIGS[7].opts, .n_opts = 1,
				      .seed = seed };
		int rc1 = tu_plan_run(g, budget, &t1);

		if (rc1 == REMAT_OK) {
			assert_int_equal(rc, REMAT_OK);
			assert_int_equal(t.s.n, t1.s.n);
			assert_memory_equal(t.s.steps, t1.s.steps,
					    sizeof(struct remat_step) * (size_t)t.s.n);
		}
		tu_plan_release(&t1);
	}

	/* dtr's own steps below the no-remat peak: accounting and determinism. */
	if (strcmp(c->planner, "dtr") == 0 && budget < g->no_remat_peak) {
		int own;

		t.flags = TU_OWN;
		t.brute = NULL;
		own = tu_plan_run(g, budget, &t);

		if (own == REMAT_OK && t.res.feasible) {
			/*
			 * With no free step the simulator frees by liveness, which
			 * can only lower the peak.
			 */
			if (t.res.compute_only ? note_peak(t.rep.note) < t.res.peak_mem
					       : note_peak(t.rep.note) != t.res.peak_mem)
				fail_msg("graph %d, dtr %s, budget %lld: runtime peak %lld, simulator "
					 "%lld", gi, c->opts[0].value, (long long)budget,
					 (long long)note_peak(t.rep.note), (long long)t.res.peak_mem);
			if (c->n_opts == 1 && t.res.overhead > 2 + 1e-9)
				fail_msg("graph %d: overhead %g over the thrash limit 2", gi,
					 t.res.overhead);
		} else if (own == REMAT_OK) {
			fail_msg("graph %d, dtr %s, budget %lld: its own schedule peaks at %lld", gi,
				 c->opts[0].value, (long long)budget, (long long)t.res.peak_mem);
		}
		remat_schedule_swap(&t.s, &s2);
		assert_int_equal(tu_plan_run(g, budget, &t), own);
		if (own == REMAT_OK) {
			assert_int_equal(t.s.n, s2.n);
			assert_memory_equal(t.s.steps, s2.steps,
					    sizeof(struct remat_step) * (size_t)t.s.n);
		}
	}
	tu_plan_release(&t);
	remat_schedule_release(&s2);
	return rc;
}

/*
 * Schedules found below the peak of the needed nodes' order, where the
 * runner's fallback does not fit: the planner's own work.  A planner that
 * gives up scores 0 there.  The floors in run_graphs() are regression
 * floors, about half of what each configuration finds today (the test
 * prints the counts), not guarantees from the papers: neither DTR nor
 * XLA's greedy pass promises a schedule at any particular budget.
 */
static int n_own[16];

static void run_graphs(int training, int count, uint64_t seed, const int *floors)
{
	static const double fracs[] = { 0, 0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 1.0 };
	uint64_t st = seed;
	int gi, n_brute = 0;
	size_t f, c;

	for (gi = 0; gi < count; gi++) {
		struct remat_graph *g = random_graph(&st, training);
		int64_t lb = g->min_peak_lower_bound, nrp = g->no_remat_peak;
		int64_t order_peak = tu_needed_order_peak(g);

		for (f = 0; f < sizeof(fracs) / sizeof(fracs[0]); f++) {
			int64_t budget = lb + (int64_t)floor(fracs[f] * (double)(nrp - lb));
			/* Small graphs: against the brute force (exhaustive.h). */
			double ex = g->n <= 12 ? exhaustive_min_cost(g, budget) : -2;

			n_brute += ex > -2;
			for (c = 0; c < sizeof(CONFIGS) / sizeof(CONFIGS[0]); c++)
				if (check_one(g, budget, &CONFIGS[c], (uint64_t)gi + 1, gi,
					      ex > -2 ? &ex : NULL) == REMAT_OK &&
				    budget < order_peak)
					n_own[c]++;
		}
		for (c = 0; c < sizeof(CONFIGS) / sizeof(CONFIGS[0]); c++)
			check_one(g, nrp + 1, &CONFIGS[c], 1, gi, NULL);
		remat_graph_free(g);
	}
	print_message("%s: %d budgets checked against the brute force\n",
		      training ? "training" : "inference", n_brute);
	for (c = 0; c < sizeof(CONFIGS) / sizeof(CONFIGS[0]); c++) {
		print_message("%s %s %s: %d schedules (%d below the needed order's peak), "
			      "%d exit 3\n", training ? "training" : "inference", CONFIGS[c].planner,
			      CONFIGS[c].n_opts ? CONFIGS[c].opts[0].value : "", n_ok[c], n_own[c],
			      n_nofit[c]);
		if (n_own[c] < floors[c])
			fail_msg("%s %s %s: %d schedules below the needed order's peak, fewer than "
				 "the floor of %d", training ? "training" : "inference",
				 CONFIGS[c].planner, CONFIGS[c].n_opts ? CONFIGS[c].opts[0].value : "",
				 n_own[c], floors[c]);
		n_ok[c] = n_nofit[c] = n_own[c] = 0;
	}
}

static void test_inference_graphs(void **state)
{
	(void)state;
	/*
	 * About half of today's 394, 722, 695, 687, 737, 781, 787, 394 (CONFIGS
	 * order; greedy's first floor from before its second round, which
	 * finds 445).
	 */
	static const int floors[] = { 190, 360, 340, 340, 360, 390, 390, 190 };

	run_graphs(0, 400, 12345, floors);
}

static void test_training_graphs(void **state)
{
	(void)state;
	/* About half of today's 691 (758 with round 2), 796, 769, 750, 806, 863, 870, 691. */
	static const int floors[] = { 340, 390, 380, 370, 400, 430, 430, 340 };

	run_graphs(1, 300, 777, floors);
}

/* Degenerate graphs: one node, inputs only, all zero bytes, an input output. */
static void test_degenerate_graphs(void **state)
{
	static const char *const graphs[] = {
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[{\"id\":\"a\",\"mem\":3}]}",
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[{\"id\":\"x\",\"kind\":\"input\","
		"\"mem\":3},{\"id\":\"y\",\"kind\":\"input\",\"mem\":2}]}",
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[{\"id\":\"a\",\"mem\":0},"
		"{\"id\":\"b\",\"mem\":0,\"inputs\":[\"a\"]},{\"id\":\"c\",\"mem\":0,\"inputs\":[\"a\",\"b\"]}]}",
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[{\"id\":\"x\",\"kind\":\"input\","
		"\"mem\":4},{\"id\":\"a\",\"mem\":1,\"inputs\":[\"x\"]}],\"outputs\":[\"x\",\"a\"]}",
		"{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[{\"id\":\"a\",\"mem\":2,\"cost\":0},"
		"{\"id\":\"b\",\"mem\":2,\"cost\":0,\"inputs\":[\"a\"]},{\"id\":\"c\",\"mem\":2,\"cost\":0,"
		"\"inputs\":[\"b\"]},{\"id\":\"d\",\"mem\":2,\"cost\":0,\"inputs\":[\"a\",\"c\"]}]}",
	};
	size_t i, c;

	(void)state;
	for (i = 0; i < sizeof(graphs) / sizeof(graphs[0]); i++) {
		struct remat_graph *g = tu_graph(graphs[i]);
		int64_t b;

		for (b = 0; b <= g->no_remat_peak + 1; b++)
			for (c = 0; c < sizeof(CONFIGS) / sizeof(CONFIGS[0]); c++)
				check_one(g, b, &CONFIGS[c], 1, (int)i, NULL);
		remat_graph_free(g);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inference_graphs),
		cmocka_unit_test(test_training_graphs),
		cmocka_unit_test(test_degenerate_graphs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
