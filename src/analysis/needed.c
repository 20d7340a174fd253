/* needed.c - the nodes the outputs need; see needed.h. */
#include <math.h>
#include <stdlib.h>

#include "analysis/needed.h"

void remat_i_needed(const struct remat_graph *g, uint8_t *need)
{
	int32_t i, k;

	for (i = 0; i < g->n; i++)
		need[i] = 0;
	for (i = 0; i < g->n_outputs; i++)
		need[g->outputs[i]] = 1;
	for (i = g->n - 1; i >= 0; i--) {
		int32_t v = g->topo[i];

		if (need[v])
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
				need[g->in_idx[k]] = 1;
	}
}

double remat_i_least_cost(const struct remat_graph *g)
{
	uint8_t *need = malloc((size_t)g->n + 1);
	double sum = 0;
	int32_t v;

	if (!need)
		return -1;
	remat_i_needed(g, need);
	for (v = 0; v < g->n; v++)
		if (need[v] && g->kind[v] != REMAT_KIND_INPUT)
			sum += g->cost[v];
	free(need);
	return sum;
}

double remat_i_cost_unit(const struct remat_graph *g)
{
	double unit = INFINITY;
	int32_t v;

	for (v = 0; v < g->n; v++)
		if (g->cost[v] > 0 && g->cost[v] < unit)
			unit = g->cost[v];
	return isfinite(unit) ? unit : 1;
}

int64_t remat_i_working_set(const struct remat_graph *g, int32_t v)
{
	int64_t m = g->mem[v] + g->workspace[v];
	int32_t k;

	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
		m += g->mem[g->in_idx[k]];
	return m;
}

int64_t remat_i_outputs_bytes(const struct remat_graph *g)
{
	int64_t b = 0;
	int32_t v;

	for (v = 0; v < g->n; v++)
		if (g->is_output[v])
			b += g->mem[v];
	return b;
}

int64_t remat_i_least_peak(const struct remat_graph *g)
{
	uint8_t *need = malloc((size_t)g->n + 1);
	int64_t lb = 0;
	int32_t v;

	if (!need)
		return -1;
	remat_i_needed(g, need);
	for (v = 0; v < g->n; v++) {
		int64_t m;

		if (!need[v] || g->kind[v] == REMAT_KIND_INPUT)
			continue;
		m = remat_i_working_set(g, v);
		if (m > lb)
			lb = m;
	}
	free(need);
	return lb;
}

int remat_i_needed_order(const struct remat_graph *g, struct remat_schedule *out,
			 struct remat_error *err)
{
	uint8_t *need = malloc((size_t)g->n + 1);
	int32_t i;
	int rc;

	remat_schedule_clear(out);
	if (!need)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	remat_i_needed(g, need);
	rc = remat_schedule_reserve(out, g->n, err);
	for (i = 0; rc == REMAT_OK && i < g->n; i++) {
		int32_t v = g->topo[i];

		if (need[v] && g->kind[v] != REMAT_KIND_INPUT)
			out->steps[out->n++] = (struct remat_step){ REMAT_OP_COMPUTE, v };
	}
	free(need);
	return rc;
}
