/*
 * liveness.c - derive explicit frees from a compute order.
 *
 * One backward walk over the steps, remembering for every node whether a
 * later step uses its current value and whether a later step recomputes
 * it.  A value is freed right after the step that uses it last before its
 * next compute (or after the step that computed it, when nothing uses it),
 * outputs never; an input node nobody uses is dropped before the first
 * step.  That is the least memory the compute order allows: nothing is
 * resident that a later step of the same value-instance still needs.
 * O(steps + inputs read + nodes) time, O(nodes + frees) memory.
 */
#include <stdlib.h>
#include <string.h>

#include "remat/sim.h"
#include "sim/sim_internal.h"

void remat_i_frees_release(struct remat_i_frees *fr)
{
	free(fr->pre);
	free(fr->off);
	free(fr->cnt);
	free(fr->idx);
	memset(fr, 0, sizeof(*fr));
}

int remat_i_frees_plan(const struct remat_graph *g,
		       const struct remat_schedule *s, int free_outputs,
		       struct remat_i_frees *fr, struct remat_error *err)
{
	/* used[v]: a later step reads v's current value. */
	uint8_t *used = NULL;
	int64_t i, total = 0;
	int32_t v;

	memset(fr, 0, sizeof(*fr));
	REMAT_TRY(remat_i_check_indices(g, s, &i, err));
	fr->off = malloc(sizeof(int64_t) * ((size_t)s->n + 1));
	fr->cnt = calloc((size_t)s->n + 1, sizeof(int32_t));
	used = calloc((size_t)g->n + 1, 1);
	fr->pre = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!fr->off || !fr->cnt || !used || !fr->pre)
		goto nomem;
	/* Capacity per step: the node itself plus its inputs. */
	for (i = 0; i < s->n; i++) {
		const struct remat_step *st = &s->steps[i];

		fr->off[i] = total;
		if (st->op == REMAT_OP_COMPUTE)
			total += 1 + g->in_off[st->node + 1] - g->in_off[st->node];
	}
	fr->off[s->n] = total;
	fr->idx = malloc(sizeof(int32_t) * ((size_t)total + 1));
	if (!fr->idx)
		goto nomem;
	/* With free_outputs, each output's last instance is read at the end. */
	for (v = 0; free_outputs && v < g->n; v++)
		used[v] = g->is_output[v];

	for (i = s->n - 1; i >= 0; i--) {
		const struct remat_step *st = &s->steps[i];
		int32_t u = st->node, k, *out;

		if (st->op != REMAT_OP_COMPUTE)
			continue;
		out = fr->idx + fr->off[i];
		/* This instance of u: dead at once when no later step reads it. */
		if (!used[u] && (free_outputs || !g->is_output[u]))
			out[fr->cnt[i]++] = u;
		used[u] = 0;
		for (k = g->in_off[u]; k < g->in_off[u + 1]; k++) {
			int32_t w = g->in_idx[k];

			if (!used[w]) {
				/* Last read of this instance of w. */
				if (free_outputs || !g->is_output[w])
					out[fr->cnt[i]++] = w;
				used[w] = 1;
			}
		}
	}
	for (v = 0; v < g->n; v++)
		if (g->kind[v] == REMAT_KIND_INPUT && !used[v] && !g->is_output[v])
			fr->pre[fr->n_pre++] = v;
	free(used);
	return REMAT_OK;
nomem:
	free(used);
	remat_i_frees_release(fr);
	return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the liveness pass");
}

int remat_liveness(const struct remat_graph *g,
		   const struct remat_schedule *order,
		   struct remat_schedule *out, struct remat_error *err)
{
	return remat_i_liveness(g, order, 0, out, err);
}

int remat_i_liveness(const struct remat_graph *g, const struct remat_schedule *order,
		     int free_outputs, struct remat_schedule *out, struct remat_error *err)
{
	struct remat_i_frees fr;
	int64_t i, n = 0;
	int32_t k;
	int rc;

	REMAT_TRY(remat_i_frees_plan(g, order, free_outputs, &fr, err));
	remat_schedule_clear(out);
	rc = remat_schedule_reserve(out, fr.off[order->n] + fr.n_pre + order->n, err);
	if (rc)
		goto done;
	for (k = 0; k < fr.n_pre; k++)
		out->steps[n++] = (struct remat_step){ REMAT_OP_FREE, fr.pre[k] };
	for (i = 0; i < order->n; i++) {
		if (order->steps[i].op != REMAT_OP_COMPUTE)
			continue;
		out->steps[n++] = order->steps[i];
		for (k = 0; k < fr.cnt[i]; k++)
			out->steps[n++] = (struct remat_step){ REMAT_OP_FREE,
							      fr.idx[fr.off[i] + k] };
	}
	out->n = n;
done:
	remat_i_frees_release(&fr);
	return rc;
}

int remat_schedule_add_frees(const struct remat_graph *g,
			     struct remat_schedule *s, struct remat_error *err)
{
	struct remat_schedule tmp;
	int rc;

	/* (An empty schedule too: it gets the frees of the unused inputs.) */
	if (remat_schedule_count_frees(s) > 0)
		return REMAT_OK;
	remat_schedule_init(&tmp);
	rc = remat_liveness(g, s, &tmp, err);
	if (rc == REMAT_OK)
		remat_schedule_swap(s, &tmp);
	remat_schedule_release(&tmp);
	return rc;
}

int remat_schedule_topo(const struct remat_graph *g, struct remat_schedule *out,
			struct remat_error *err)
{
	int32_t i;

	remat_schedule_clear(out);
	REMAT_TRY(remat_schedule_reserve(out, g->n, err));
	for (i = 0; i < g->n; i++) {
		int32_t v = g->topo[i];

		if (g->kind[v] != REMAT_KIND_INPUT)
			out->steps[out->n++] = (struct remat_step){ REMAT_OP_COMPUTE, v };
	}
	return REMAT_OK;
}
