/*
 * judge.h - an independent replay of a schedule (docs/FORMATS.md section
 * 2), for the fuzz targets to check the simulator and the planners
 * against.  Written from the format's text, not from src/sim: it shares
 * no code with the simulator but the graph it reads.
 *
 * Rules: the replay starts with exactly the input nodes resident.
 * compute v needs v not an input, every input of v resident, v not
 * resident, and (recompute false) v not computed before; while v runs
 * memory is resident + mem(v) + workspace(v); afterwards v is resident.
 * free v needs v resident.  At the end every output is resident.  A
 * schedule with no free step is read with the implicit frees of "Schedules
 * without frees": an input no step reads is freed before the first step;
 * after each compute, each value the step read and the value it produced
 * is freed unless a later step reads it before it is computed again;
 * outputs are never freed.  The peak is the largest memory while any
 * compute step runs; with no compute step at all, the memory at the start
 * (section 2's figures).
 */
#ifndef REMAT_FUZZ_JUDGE_H
#define REMAT_FUZZ_JUDGE_H

#include <stdint.h>
#include <stdlib.h>

#include "remat/remat.h"

struct judge_result {
	int valid;
	int64_t peak;
};

/* Does step j (a compute) read u? */
static inline int judge_reads(const struct remat_graph *g, int32_t v, int32_t u)
{
	for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++)
		if (g->in_idx[k] == u)
			return 1;
	return 0;
}

/* Compute-only reading: is u read by a step after i before it is computed again? */
static inline int judge_needed_later(const struct remat_graph *g, const struct remat_schedule *s,
			      int64_t i, int32_t u)
{
	for (int64_t j = i + 1; j < s->n; j++) {
		int32_t v = s->steps[j].node;

		if (judge_reads(g, v, u))
			return 1;
		if (v == u)
			return 0;
	}
	return 0;
}

/*
 * Replay s on g.  Returns 0 when it could not judge (out of memory), 1
 * with *r filled in otherwise.
 */
static inline int judge_replay(const struct remat_graph *g, const struct remat_schedule *s,
			struct judge_result *r)
{
	uint8_t *res = calloc((size_t)g->n + 1, 1), *done = calloc((size_t)g->n + 1, 1);
	int64_t mem = 0, frees = 0, computes = 0;
	int ok = 1;

	r->valid = 0;
	r->peak = 0;
	if (!res || !done) {
		free(res);
		free(done);
		return 0;
	}
	for (int64_t i = 0; i < s->n; i++)
		frees += s->steps[i].op == REMAT_OP_FREE;
	for (int32_t v = 0; v < g->n; v++) {
		if (g->kind[v] != REMAT_KIND_INPUT)
			continue;
		if (frees == 0 && !g->is_output[v] && !judge_needed_later(g, s, -1, v))
			continue; /* freed before the first step */
		res[v] = 1;
		mem += g->mem[v];
	}
	r->peak = mem; /* kept only when no compute step runs */
	for (int64_t i = 0; i < s->n && ok; i++) {
		int32_t v = s->steps[i].node;

		if (v < 0 || v >= g->n) {
			ok = 0;
			break;
		}
		if (s->steps[i].op == REMAT_OP_FREE) {
			if (!res[v])
				ok = 0;
			res[v] = 0;
			mem -= g->mem[v];
			continue;
		}
		if (s->steps[i].op != REMAT_OP_COMPUTE || g->kind[v] == REMAT_KIND_INPUT ||
		    res[v] || (!g->recompute[v] && done[v])) {
			ok = 0;
			break;
		}
		for (int32_t k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (!res[g->in_idx[k]])
				ok = 0;
		if (!ok)
			break;
		if (computes++ == 0 || mem + g->mem[v] + g->workspace[v] > r->peak)
			r->peak = mem + g->mem[v] + g->workspace[v];
		res[v] = 1;
		done[v] = 1;
		mem += g->mem[v];
		if (frees)
			continue;
		for (int32_t k = g->in_off[v]; k <= g->in_off[v + 1]; k++) {
			int32_t u = k < g->in_off[v + 1] ? g->in_idx[k] : v;

			if (res[u] && !g->is_output[u] && !judge_needed_later(g, s, i, u)) {
				res[u] = 0;
				mem -= g->mem[u];
			}
		}
	}
	for (int32_t k = 0; ok && k < g->n_outputs; k++)
		if (!res[g->outputs[k]])
			ok = 0;
	r->valid = ok;
	free(res);
	free(done);
	return 1;
}

/*
 * What every loader target checks of a graph it loaded (and then frees):
 * its topological order simulates valid at its no-remat peak.  A load
 * that failed (rc != REMAT_OK) must carry a message.
 */
static inline void judge_loaded(int rc, struct remat_graph *g, const struct remat_error *lerr)
{
	struct remat_error err;
	struct remat_schedule s;
	struct remat_sim_result r;

	if (rc != REMAT_OK) {
		if (!lerr->msg[0])
			abort(); /* every failure carries a message */
		return;
	}
	remat_error_clear(&err);
	remat_schedule_init(&s);
	if (remat_schedule_topo(g, &s, &err) == REMAT_OK &&
	    remat_simulate(g, &s, -1, NULL, &r, &err) == REMAT_OK &&
	    (!r.valid || r.peak_mem != g->no_remat_peak))
		abort();
	remat_schedule_release(&s);
	remat_graph_free(g);
}

#endif
