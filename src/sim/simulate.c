/*
 * simulate.c - the one judge: replays a schedule under FORMATS.md
 * section 2 and reports validity (first error with step, node and
 * reason), peak memory, cost, overhead, computes, recomputes and
 * feasibility.  Every planner's output passes through here before it is
 * printed or written.
 *
 * O(steps + inputs read + nodes): one pass over the steps with a resident
 * flag per node.
 *
 * FORMATS.md also requires every node an output depends on to have been
 * computed.  That follows from the other rules, so it needs no check of
 * its own: an output resident at the end was computed (or is an input)
 * with all its inputs resident at that moment, and so on back to the
 * input nodes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/sim.h"
#include "core/util.h"
#include "sim/sim_internal.h"

static void sim_fail(struct remat_sim_result *r, int64_t step, int32_t node,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void sim_fail(struct remat_sim_result *r, int64_t step, int32_t node,
		     const char *fmt, ...)
{
	va_list ap;
	char raw[sizeof(r->error)];

	r->valid = 0;
	r->feasible = 0;
	r->error_step = step;
	r->error_node = node;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* It quotes ids: safe to print, as library messages are (error.c). */
	remat_i_text_safe(r->error, sizeof(r->error), raw);
}

int remat_simulate(const struct remat_graph *g, const struct remat_schedule *s,
		   int64_t budget, int64_t *timeline,
		   struct remat_sim_result *r, struct remat_error *err)
{
	struct remat_i_frees fr;
	struct remat_error ierr;
	uint8_t *resident = NULL, *computed = NULL;
	int64_t i, cur = 0, distinct = 0;
	int have_compute = 0, rc = REMAT_OK;
	int32_t v, k;

	memset(r, 0, sizeof(*r));
	memset(&fr, 0, sizeof(fr));
	r->valid = 1;
	r->error_step = -1;
	r->error_node = -1;
	r->peak_step = -1;
	r->budget = budget;
	r->baseline_cost = g->baseline_cost;
	r->compute_only = remat_schedule_count_frees(s) == 0;

	resident = calloc((size_t)g->n + 1, 1);
	computed = calloc((size_t)g->n + 1, 1);
	if (!resident || !computed) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the simulator");
		goto done;
	}
	/*
	 * The frees of a compute order, which need every node index in range
	 * (a schedule built through the library: the first one out of range
	 * makes it invalid there, as the walk below says with frees).
	 */
	if (r->compute_only) {
		if (remat_i_check_indices(g, s, &i, &ierr)) {
			sim_fail(r, i, -1, "steps[%lld]: node index %d out of range",
				 (long long)i, s->steps[i].node);
			goto done;
		}
		rc = remat_i_frees_plan(g, s, 0, &fr, err);
		if (rc)
			goto done;
	}
	for (v = 0; v < g->n; v++)
		if (g->kind[v] == REMAT_KIND_INPUT) {
			resident[v] = 1;
			cur += g->mem[v];
		}
	for (k = 0; k < fr.n_pre; k++) {
		resident[fr.pre[k]] = 0;
		cur -= g->mem[fr.pre[k]];
	}
	r->peak_mem = cur;

	for (i = 0; i < s->n; i++) {
		const struct remat_step *st = &s->steps[i];
		int32_t u = st->node;

		if (u < 0 || u >= g->n) {
			sim_fail(r, i, -1, "steps[%lld]: node index %d out of range",
				 (long long)i, u);
			break;
		}
		if (st->op == REMAT_OP_FREE) {
			if (!resident[u]) {
				sim_fail(r, i, u, "steps[%lld]: free '%s': it is not resident",
					 (long long)i, g->id[u]);
				break;
			}
			resident[u] = 0;
			cur -= g->mem[u];
			if (timeline)
				timeline[i] = cur;
			continue;
		}
		if (st->op != REMAT_OP_COMPUTE) {
			sim_fail(r, i, u, "steps[%lld]: unknown op %d", (long long)i, st->op);
			break;
		}
		if (g->kind[u] == REMAT_KIND_INPUT) {
			sim_fail(r, i, u, "steps[%lld]: compute '%s': an input node is resident "
				 "from the start and can never be computed", (long long)i, g->id[u]);
			break;
		}
		if (resident[u]) {
			sim_fail(r, i, u, "steps[%lld]: compute '%s': it is already resident",
				 (long long)i, g->id[u]);
			break;
		}
		if (computed[u] && !g->recompute[u]) {
			sim_fail(r, i, u, "steps[%lld]: compute '%s': it has \"recompute\": "
				 "false and was already computed", (long long)i, g->id[u]);
			break;
		}
		for (k = g->in_off[u]; k < g->in_off[u + 1]; k++)
			if (!resident[g->in_idx[k]])
				break;
		if (k < g->in_off[u + 1]) {
			sim_fail(r, i, u, "steps[%lld]: compute '%s': its input '%s' is not "
				 "resident", (long long)i, g->id[u], g->id[g->in_idx[k]]);
			break;
		}
		{
			int64_t during = cur + g->mem[u] + g->workspace[u];

			if (!have_compute || during > r->peak_mem) {
				r->peak_mem = during;
				r->peak_step = i;
			}
			have_compute = 1;
			if (timeline)
				timeline[i] = during;
		}
		resident[u] = 1;
		cur += g->mem[u];
		r->cost += g->cost[u];
		r->computes++;
		if (!computed[u]) {
			computed[u] = 1;
			distinct++;
		}
		if (r->compute_only) {
			for (k = 0; k < fr.cnt[i]; k++) {
				int32_t w = fr.idx[fr.off[i] + k];

				if (resident[w]) {
					resident[w] = 0;
					cur -= g->mem[w];
				}
			}
		}
	}
	r->recomputes = r->computes - distinct;
	/*
	 * No compute step: the memory at the end.  Memory is measured while
	 * computes run; what is resident before the first one and freed before
	 * it does not count (the compute-only form frees an unused input before
	 * the first step, and "steps": [] with it written out, a free, must
	 * score the same).
	 */
	if (!have_compute && r->valid)
		r->peak_mem = cur;

	if (r->valid) {
		for (k = 0; k < g->n_outputs; k++) {
			int32_t o = g->outputs[k];

			if (!resident[o]) {
				sim_fail(r, s->n, o, "end: output '%s' is not resident", g->id[o]);
				break;
			}
		}
	}
	if (r->baseline_cost > 0)
		r->overhead = r->cost / r->baseline_cost - 1.0;
	else
		r->overhead = 0;
	r->feasible = r->valid && (budget < 0 || r->peak_mem <= budget);
done:
	remat_i_frees_release(&fr);
	free(resident);
	free(computed);
	return rc;
}
