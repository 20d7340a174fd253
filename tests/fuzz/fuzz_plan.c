/*
 * fuzz_plan.c - differential libFuzzer target: plan then judge.  The
 * input is a remat-graph document (at most 40 nodes, sizes up to 2^40
 * bytes), optionally followed by a NUL byte and one more byte that picks
 * the budget between the graph's peak lower bound (0) and its no-remat
 * peak (255, the default).  Every fast planner (flagged
 * REMAT_PLANNER_AUTO) plans it with a 0.05 s time limit, and every
 * schedule remat_plan_run() accepts (REMAT_OK) must be valid and within
 * budget by the independent replay of judge.h, at the peak the runner
 * reported; any disagreement aborts.  Every failure carries a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "remat/remat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_NODES 40
#define MAX_SIZE ((int64_t)1 << 40)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct remat_planner *const *list = remat_planner_list();
	struct remat_graph *g = NULL;
	struct remat_error err;
	const uint8_t *nul = memchr(data, 0, size);
	size_t len = nul ? (size_t)(nul - data) : size;
	unsigned pick = nul && len + 1 < size ? data[len + 1] : 255;
	int64_t lo, hi, budget;

	remat_error_clear(&err);
	if (remat_graph_load_buffer((const char *)data, len, "fuzz", &g, &err) != REMAT_OK)
		return 0;
	if (g->n > MAX_NODES || g->total_mem > MAX_SIZE) {
		remat_graph_free(g);
		return 0;
	}
	for (int32_t v = 0; v < g->n; v++)
		if (g->workspace[v] > MAX_SIZE || !(g->cost[v] <= 1e9)) {
			remat_graph_free(g);
			return 0;
		}
	lo = g->min_peak_lower_bound;
	hi = g->no_remat_peak;
	if (hi < lo)
		hi = lo;
	budget = lo + (int64_t)((double)(hi - lo) * (pick / 255.0));
	for (size_t i = 0; list[i]; i++) {
		const struct remat_planner *p = list[i];
		struct remat_plan_report rep;
		struct remat_plan_request req = { 0 };
		struct remat_schedule s;
		struct remat_sim_result res;
		struct judge_result j;
		int rc;

		if (!(p->flags & REMAT_PLANNER_AUTO))
			continue;
		req.graph = g;
		req.budget = budget;
		req.time_limit = 0.05;
		req.deadline = remat_now() + req.time_limit;
		req.seed = 1;
		req.report = &rep;
		remat_schedule_init(&s);
		remat_error_clear(&err);
		rc = remat_plan_run(p, &req, &s, &res, &err);
		if (rc != REMAT_OK && rc != REMAT_ENOFIT && !err.msg[0])
			abort();
		if (rc == REMAT_EINTERNAL)
			abort(); /* a planner's own bug, whatever its message says */
		if (rc == REMAT_OK) {
			if (!res.valid || !res.feasible || res.peak_mem > budget)
				abort(); /* the runner contradicts itself */
			if (judge_replay(g, &s, &j) &&
			    (!j.valid || j.peak > budget || j.peak != res.peak_mem))
				abort(); /* the judge disagrees with the runner */
		}
		remat_schedule_release(&s);
	}
	remat_graph_free(g);
	return 0;
}
