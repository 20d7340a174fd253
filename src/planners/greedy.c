/*
 * greedy.c - XLA-style greedy rematerialization.
 *
 * The GreedyRemat baseline of Kumar, Purohit, Svitkina, Vee, Wang,
 * "Efficient Rematerialization for Deep Networks" (NeurIPS 2019, sec. 4),
 * which describes XLA's HloRematerialization pass: "Starting with a
 * topological sort of all operations, it processes each operation
 * sequentially.  At each stage, if the current memory usage is over a
 * specified memory limit, the algorithm attempts to rematerialize an
 * already scheduled operation ... the operation whose rematerialization
 * maximizes the amount of reduction in memory usage is chosen greedily at
 * each step.  If the memory usage cannot be reduced, the algorithm moves
 * on to the next operation."
 *
 * 1. Items are the needed non-input nodes in the stable topological order
 *    (nodes no output depends on are left out); each may carry a list of
 *    recomputations to run right before it.  Values are freed right after
 *    their last scheduled use, as in the no-remat order.
 * 2. Place the items in order, each item's recomputations first.  Before
 *    placing node w, while (resident + mem(w) + workspace(w)) exceeds the
 *    budget, pick among the already placed values the one whose
 *    rematerialization frees the most memory here (ties: lower
 *    recompute cost, then the earlier in topological order):
 *      - resident, rematerializable (not an input, not "recompute":
 *        false), more than zero bytes, with a later use;
 *      - not read by the current item or a pending recomputation;
 *      - all its own inputs resident, so the recomputation can reuse them
 *        (they are kept until it runs) and no earlier step changes;
 *      - not itself a recomputation (XLA denylists rematerialized
 *        instructions, which also bounds the work: each node is
 *        recomputed at most once).
 *    Under these rules the memory freed here is exactly the value's size.
 *    Free it now and schedule its recomputation right before its next use.
 * 3. When no value qualifies, place w anyway and move on.
 * 4. If any step is over the budget, or the time limit runs out (checked
 *    every 4096 items), REMAT_ENOFIT; out of time at a budget that covers
 *    the no-remat peak, the topological order instead.
 *
 * Complexity: O((n + e) log n): a max-heap keyed by (size, -cost) with
 * lazy deletion holds the qualifying values; each residency change
 * touches the value's users once.  At most n recomputations.
 *
 * Not guaranteed: like XLA's pass it is a best-effort sweep that never
 * revisits a choice; it reduces memory only by dropping values that are
 * resident at the over-budget point, never by reordering, and recomputes
 * each value at most once, so deep chains keep linear memory (Kumar et
 * al. report "very little memory savings" on feed-forward networks).
 */
#include <stdlib.h>
#include <string.h>

#include "remat/budget.h"
#include "remat/planner.h"
#include "analysis/needed.h"
#include "core/heap.h"

struct greedy {
	const struct remat_graph *g;
	const struct remat_plan_request *req;
	struct remat_schedule *out;
	struct remat_error *err;
	int64_t budget, cur, peak;
	int32_t peak_node;

	uint8_t *needed, *resident, *cloned, *in_heap;
	int32_t *pin;        /* pending recomputations that read the value */
	int32_t *nonres_in;  /* inputs not resident */
	int32_t *nu_off, *nu_idx, *nu_ptr; /* needed users in topological order */
	int32_t *order, *midx; /* items and each node's item index */
	int32_t *head, *tail, *inext, *inode; /* recomputation lists per item */
	int32_t n_items, n_clones;
	int32_t *heap;
	int64_t heap_n;
	int32_t *aside;
	int64_t placed;
};

static int eligible(const struct greedy *s, int32_t c)
{
	const struct remat_graph *g = s->g;

	return s->resident[c] && !s->cloned[c] && s->pin[c] == 0 && s->nonres_in[c] == 0 &&
	       s->nu_ptr[c] < s->nu_off[c + 1] && g->kind[c] != REMAT_KIND_INPUT &&
	       g->recompute[c] && g->mem[c] > 0;
}

/* Does a come before b in the heap (more memory, then cheaper, then earlier)? */
static int heap_less(const struct greedy *s, int32_t a, int32_t b)
{
	const struct remat_graph *g = s->g;

	if (g->mem[a] != g->mem[b])
		return g->mem[a] > g->mem[b];
	if (g->cost[a] != g->cost[b])
		return g->cost[a] < g->cost[b];
	return g->topo_pos[a] < g->topo_pos[b];
}

REMAT_HEAP_DEFINE(cand, int32_t, const struct greedy, heap_less, REMAT_HEAP_UNTRACKED)

static void heap_push(struct greedy *s, int32_t v)
{
	cand_push(s->heap, &s->heap_n, v, s);
	s->in_heap[v] = 1;
}

static int32_t heap_pop(struct greedy *s)
{
	int32_t top = cand_pop(s->heap, &s->heap_n, s);

	s->in_heap[top] = 0;
	return top;
}

static void try_push(struct greedy *s, int32_t c)
{
	if (!s->in_heap[c] && s->needed[c] && eligible(s, c))
		heap_push(s, c);
}

static void set_resident(struct greedy *s, int32_t v, int on)
{
	const struct remat_graph *g = s->g;
	int32_t k;

	s->resident[v] = (uint8_t)on;
	s->cur += on ? g->mem[v] : -g->mem[v];
	for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
		int32_t c = g->use_idx[k];

		if (on) {
			if (--s->nonres_in[c] == 0)
				try_push(s, c);
		} else {
			s->nonres_in[c]++;
		}
	}
}

/* Free v after its last scheduled use. */
static int check_free(struct greedy *s, int32_t v)
{
	if (!s->resident[v] || s->nu_ptr[v] < s->nu_off[v + 1] || s->pin[v] ||
	    s->g->is_output[v])
		return REMAT_OK;
	REMAT_TRY(remat_schedule_push(s->out, REMAT_OP_FREE, v, s->err));
	set_resident(s, v, 0);
	return REMAT_OK;
}

/* Rematerialize c: free it now, recompute it before its next use. */
static int drop(struct greedy *s, int32_t c)
{
	const struct remat_graph *g = s->g;
	int32_t y = s->nu_idx[s->nu_ptr[c]], m = s->midx[y], it = s->n_clones++, k;

	REMAT_TRY(remat_schedule_push(s->out, REMAT_OP_FREE, c, s->err));
	set_resident(s, c, 0);
	s->cloned[c] = 1;
	s->inode[it] = c;
	s->inext[it] = -1;
	if (s->tail[m] >= 0)
		s->inext[s->tail[m]] = it;
	else
		s->head[m] = it;
	s->tail[m] = it;
	for (k = g->in_off[c]; k < g->in_off[c + 1]; k++)
		s->pin[g->in_idx[k]]++;
	return REMAT_OK;
}

/* The best qualifying value not read by item x, or -1. */
static int32_t select_value(struct greedy *s, int32_t x, int32_t *n_aside)
{
	while (s->heap_n > 0) {
		int32_t c = heap_pop(s);

		if (!eligible(s, c))
			continue; /* re-pushed when it qualifies again */
		if (s->nu_idx[s->nu_ptr[c]] == x) {
			s->aside[(*n_aside)++] = c;
			continue;
		}
		return c;
	}
	return -1;
}

/* Place w (a recomputation when clone) before or as item x. */
static int place(struct greedy *s, int32_t w, int clone, int32_t x)
{
	const struct remat_graph *g = s->g;
	int64_t need = g->mem[w] + g->workspace[w];
	int32_t k, n_aside = 0;

	while (s->cur + need > s->budget) {
		int32_t c = select_value(s, x, &n_aside);

		if (c < 0)
			break;
		REMAT_TRY(drop(s, c));
	}
	for (k = 0; k < n_aside; k++)
		try_push(s, s->aside[k]);
	/* As the simulator: the peak is the largest memory during a compute. */
	if (s->peak_node < 0 || s->cur + need > s->peak) {
		s->peak = s->cur + need;
		s->peak_node = w;
	}
	REMAT_TRY(remat_schedule_push(s->out, REMAT_OP_COMPUTE, w, s->err));
	set_resident(s, w, 1);
	try_push(s, w);
	for (k = g->in_off[w]; k < g->in_off[w + 1]; k++) {
		int32_t p = g->in_idx[k];

		if (clone) {
			if (--s->pin[p] == 0)
				try_push(s, p);
		} else {
			s->nu_ptr[p]++; /* w was p's first unplaced user */
		}
		REMAT_TRY(check_free(s, p));
	}
	REMAT_TRY(check_free(s, w));
	if ((++s->placed & 4095) == 0 && remat_plan_expired(s->req))
		return REMAT_ECANCELED;
	return REMAT_OK;
}

static void greedy_release(struct greedy *s)
{
	free(s->needed);
	free(s->resident);
	free(s->cloned);
	free(s->in_heap);
	free(s->pin);
	free(s->nonres_in);
	free(s->nu_off);
	free(s->nu_idx);
	free(s->nu_ptr);
	free(s->order);
	free(s->midx);
	free(s->head);
	free(s->tail);
	free(s->inext);
	free(s->inode);
	free(s->heap);
	free(s->aside);
}

static int greedy_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		       struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	size_t n1 = (size_t)g->n + 1;
	struct greedy s;
	int32_t i, k, m;
	int rc = REMAT_OK;

	memset(&s, 0, sizeof(s));
	s.g = g;
	s.req = req;
	s.out = out;
	s.err = err;
	s.budget = req->budget;
	s.peak_node = -1;
	s.needed = calloc(n1, 1);
	s.resident = calloc(n1, 1);
	s.cloned = calloc(n1, 1);
	s.in_heap = calloc(n1, 1);
	s.pin = calloc(n1, sizeof(int32_t));
	s.nonres_in = calloc(n1, sizeof(int32_t));
	s.nu_off = calloc(n1 + 1, sizeof(int32_t));
	s.nu_idx = malloc(sizeof(int32_t) * ((size_t)g->n_edges + 1));
	s.nu_ptr = calloc(n1, sizeof(int32_t));
	s.order = malloc(sizeof(int32_t) * n1);
	s.midx = malloc(sizeof(int32_t) * n1);
	s.head = malloc(sizeof(int32_t) * n1);
	s.tail = malloc(sizeof(int32_t) * n1);
	s.inext = malloc(sizeof(int32_t) * n1);
	s.inode = malloc(sizeof(int32_t) * n1);
	s.heap = malloc(sizeof(int32_t) * n1);
	s.aside = malloc(sizeof(int32_t) * n1);
	if (!s.needed || !s.resident || !s.cloned || !s.in_heap || !s.pin || !s.nonres_in ||
	    !s.nu_off || !s.nu_idx || !s.nu_ptr || !s.order || !s.midx || !s.head ||
	    !s.tail || !s.inext || !s.inode || !s.heap || !s.aside) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	remat_i_needed(g, s.needed);
	/* Items, and each node's needed users in topological order. */
	for (i = 0; i < g->n; i++) {
		int32_t v = g->topo[i];

		s.midx[v] = -1;
		if (!s.needed[v] || g->kind[v] == REMAT_KIND_INPUT)
			continue;
		s.midx[v] = s.n_items;
		s.head[s.n_items] = s.tail[s.n_items] = -1;
		s.order[s.n_items++] = v;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			s.nu_off[g->in_idx[k] + 1]++;
			if (g->kind[g->in_idx[k]] != REMAT_KIND_INPUT)
				s.nonres_in[v]++;
		}
	}
	for (i = 0; i < g->n; i++)
		s.nu_off[i + 1] += s.nu_off[i];
	for (i = 0; i < g->n; i++)
		s.nu_ptr[i] = s.nu_off[i];
	for (m = 0; m < s.n_items; m++) {
		int32_t v = s.order[m];

		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			s.nu_idx[s.nu_ptr[g->in_idx[k]]++] = v;
	}
	for (i = 0; i < g->n; i++)
		s.nu_ptr[i] = s.nu_off[i];

	remat_schedule_clear(out);
	rc = remat_schedule_reserve(out, 2 * (int64_t)n1, err);
	if (rc)
		goto done;
	for (i = 0; i < g->n; i++)
		if (g->kind[i] == REMAT_KIND_INPUT) {
			s.resident[i] = 1;
			s.cur += g->mem[i];
		}
	/*
	 * Nothing to compute (no output needs a non-input node): the empty
	 * schedule, which the simulator reads as compute-only and so drops
	 * the unused inputs before the first step.  Explicit frees with no
	 * compute would leave the peak at every input's bytes (FORMATS.md:
	 * without a compute step the peak is the memory at the start).
	 */
	if (s.n_items == 0)
		goto done;
	for (i = 0; i < g->n && rc == REMAT_OK; i++)
		if (g->kind[i] == REMAT_KIND_INPUT)
			rc = check_free(&s, i);
	/* Only the memory during computes counts toward the peak. */
	s.peak = s.cur;
	for (m = 0; m < s.n_items && rc == REMAT_OK; m++) {
		int32_t x = s.order[m], it;

		for (it = s.head[m]; it >= 0 && rc == REMAT_OK; it = s.inext[it])
			rc = place(&s, s.inode[it], 1, x);
		if (rc == REMAT_OK)
			rc = place(&s, x, 0, x);
	}
	if (rc == REMAT_OK && s.peak > s.budget) {
		char pk[32], bu[32];

		remat_format_bytes(s.peak, pk, sizeof(pk));
		remat_format_bytes(s.budget, bu, sizeof(bu));
		rc = REMAT_FAIL(err, REMAT_ENOFIT,
				"greedy: memory reaches %s (%lld bytes) %s%s%s, over the budget of "
				"%s, with nothing left there to rematerialize", pk, (long long)s.peak,
				s.peak_node < 0 ? "at the start" : "at '",
				s.peak_node < 0 ? "" : g->id[s.peak_node],
				s.peak_node < 0 ? "" : "'", bu);
	}
	if (rc == REMAT_ECANCELED) {
		/* Out of time (the runner still offers the no-remat order). */
		remat_schedule_clear(out);
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "greedy: the time limit ran out before "
				"the walk finished");
	}
done:
	greedy_release(&s);
	return rc;
}

const struct remat_planner remat_i_planner_greedy = {
	.name = "greedy",
	.summary = "XLA-style greedy rematerialization (the GreedyRemat baseline of Kumar et "
		   "al. 2019)",
	.flags = REMAT_PLANNER_AUTO,
	.options = NULL,
	.plan = greedy_plan,
};
