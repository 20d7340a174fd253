/*
 * bench_chain.c - time the chain view and the chain planners on a long
 * training chain built in memory (no JSON parsing in the timings):
 * x -> f1 -> ... -> fN -> loss, backward b_N .. b_1 where b_i reads the
 * next gradient, f_i and f_{i-1} (x for b1), every tensor 1 MiB, forward
 * cost 1, backward cost 2.  2N + 2 nodes.
 *
 *   bench_chain N [REPEATS] [BUDGET_PERCENT]
 *
 * Prints, best of REPEATS: building the graph (builder, for reference),
 * remat_chain_build(), and remat_plan_run() for chen, chen-greedy and
 * rotor at BUDGET_PERCENT (default 10) of the no-remat peak (each run
 * includes the liveness pass and the simulation of the result), with
 * the cost overhead each reaches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/remat.h"
#include "remat/chain.h"

#define MiB 1048576

static int build_chain(int n, struct remat_graph **out, struct remat_error *err)
{
	struct remat_graph_builder *b;
	char id[32], in1[32], in2[32], in3[32];
	const char *ins[3];
	struct remat_node_spec s;
	int i;

	if (remat_builder_new("bench-chain", &b, err))
		return 1;
	memset(&s, 0, sizeof(s));
	s.id = "x";
	s.kind = REMAT_KIND_INPUT;
	s.mem = MiB;
	s.cost = -1;
	s.recompute = 1;
	if (remat_builder_add(b, &s, err))
		goto fail;
	for (i = 1; i <= n; i++) {
		snprintf(id, sizeof(id), "f%d", i);
		if (i == 1)
			snprintf(in1, sizeof(in1), "x");
		else
			snprintf(in1, sizeof(in1), "f%d", i - 1);
		ins[0] = in1;
		s.id = id;
		s.kind = REMAT_KIND_FORWARD;
		s.cost = 1;
		s.inputs = ins;
		s.n_inputs = 1;
		if (remat_builder_add(b, &s, err))
			goto fail;
	}
	snprintf(in1, sizeof(in1), "f%d", n);
	ins[0] = in1;
	s.id = "loss";
	s.kind = REMAT_KIND_LOSS;
	s.cost = 1;
	s.n_inputs = 1;
	if (remat_builder_add(b, &s, err))
		goto fail;
	for (i = n; i >= 1; i--) {
		snprintf(id, sizeof(id), "b%d", i);
		if (i == n)
			snprintf(in1, sizeof(in1), "loss");
		else
			snprintf(in1, sizeof(in1), "b%d", i + 1);
		snprintf(in2, sizeof(in2), "f%d", i);
		if (i == 1)
			snprintf(in3, sizeof(in3), "x");
		else
			snprintf(in3, sizeof(in3), "f%d", i - 1);
		ins[0] = in1;
		ins[1] = in2;
		ins[2] = in3;
		s.id = id;
		s.kind = REMAT_KIND_BACKWARD;
		s.cost = 2;
		s.grad_of = in2;
		s.n_inputs = 3;
		if (remat_builder_add(b, &s, err))
			goto fail;
		s.grad_of = NULL;
	}
	if (remat_builder_add_output(b, "b1", err))
		goto fail;
	return remat_builder_finish(b, out, err) ? 1 : 0;
fail:
	remat_builder_free(b);
	return 1;
}

int main(int argc, char **argv)
{
	static const char *const planners[] = { "chen", "chen-greedy", "rotor" };
	struct remat_graph *g = NULL;
	struct remat_error err;
	double best_build = 1e30, best_chain = 1e30, best_plan[3] = { 1e30, 1e30, 1e30 };
	double overhead[3] = { 0, 0, 0 };
	int n = 50000, reps = 3, r, k, stages = 0;
	double percent = 10;

	if (argc > 1)
		n = atoi(argv[1]);
	if (argc > 2)
		reps = atoi(argv[2]);
	if (argc > 3)
		percent = atof(argv[3]);
	if (n < 1 || reps < 1 || percent <= 0) {
		fprintf(stderr, "usage: bench_chain LAYERS [REPEATS] [BUDGET_PERCENT]\n");
		return 2;
	}
	remat_error_clear(&err);
	for (r = 0; r < reps; r++) {
		struct remat_chain *c = NULL;
		double t0 = remat_now(), t1;

		remat_graph_free(g);
		g = NULL;
		if (build_chain(n, &g, &err)) {
			fprintf(stderr, "bench_chain: %s\n", err.msg);
			return 1;
		}
		t1 = remat_now();
		if (t1 - t0 < best_build)
			best_build = t1 - t0;
		if (remat_chain_build(g, &c, &err)) {
			fprintf(stderr, "bench_chain: %s\n", err.msg);
			return 1;
		}
		t0 = remat_now() - t1;
		if (t0 < best_chain)
			best_chain = t0;
		stages = c->n_stages;
		remat_chain_free(c);
		for (k = 0; k < 3; k++) {
			struct remat_plan_request req;
			struct remat_schedule s;
			struct remat_sim_result res;
			double t;
			int rc;

			memset(&req, 0, sizeof(req));
			req.graph = g;
			req.budget = (int64_t)((double)g->no_remat_peak * percent / 100);
			remat_schedule_init(&s);
			t = remat_now();
			rc = remat_plan_run(remat_planner_find(planners[k]), &req, &s, &res, &err);
			t = remat_now() - t;
			if (rc != REMAT_OK && rc != REMAT_ENOFIT) {
				fprintf(stderr, "bench_chain: %s\n", err.msg);
				return 1;
			}
			if (t < best_plan[k])
				best_plan[k] = t;
			overhead[k] = rc == REMAT_OK ? res.overhead : -1;
			remat_schedule_release(&s);
		}
	}
	printf("nodes %d stages %d build %.3f s chain %.3f s", g->n, stages, best_build,
	       best_chain);
	for (k = 0; k < 3; k++) {
		printf(" | %s %.3f s ", planners[k], best_plan[k]);
		if (overhead[k] < 0)
			printf("(no fit)");
		else
			printf("(+%.1f%%)", 100 * overhead[k]);
	}
	printf(" | budget %.0f%% of %.0f MiB\n", percent, (double)g->no_remat_peak / MiB);
	remat_graph_free(g);
	return 0;
}
