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
 * 4. If any step is over the budget: a second walk (round 2), steps 1-3
 *    again with blocks (XLA's block rematerialization, one level deep):
 *    a value also qualifies when each input that is gone is restorable
 *    (not an input, may be recomputed, all its own inputs resident).
 *    Dropping it schedules those inputs' recomputations in front of its
 *    own, pins their inputs, and frees each of them again right after
 *    the block unless the item there reads it or a recomputation still
 *    waits for it (its own recomputation, later, brings it back).  A
 *    recomputation of a value that is already resident is skipped.  On a
 *    chain, round 1 can only drop every other value (about half the
 *    memory); round 2 drops two of three.  Round 2 runs only when round 1
 *    ends over the budget, so a schedule round 1 fits is returned as is.
 *    Option --rounds 1 stops after round 1.
 * 5. If round 2 is over the budget too, or the time limit runs out
 *    (checked every 4096 items), REMAT_ENOFIT naming the lower peak of
 *    the two; round 1 out of time at a budget that covers the no-remat
 *    peak: the topological order instead.
 *
 * Complexity: O((n + e) log n) per round: a max-heap keyed by (size, -cost)
 * with lazy deletion holds the qualifying values; each residency change
 * touches the value's users once (round 2: also the users of a user whose
 * restorability changes, O(sum of deg^2) at worst).  At most n
 * recomputations in round 1, n + e in round 2.
 *
 * Not guaranteed: like XLA's pass it is a best-effort sweep that never
 * revisits a choice; it reduces memory only by dropping values that are
 * resident at the over-budget point, never by reordering, and recomputes
 * each value at most once per round (block parts aside), so deep chains
 * keep linear memory (Kumar et al. report "very little memory savings" on
 * feed-forward networks): round 1 reaches about 1/2 of a chain's peak,
 * round 2 about 1/3.  Values whose inputs died several levels back (skip
 * connections of layered graphs) never qualify.
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

	int block;           /* round 2: block rematerialization allowed */
	uint8_t *needed, *resident, *cloned, *in_heap;
	uint8_t *tcomp;      /* computed as part of a block, to free after it */
	int32_t *bad;        /* inputs neither resident nor restorable (round 2) */
	int32_t *pin;        /* pending recomputations that read the value */
	int32_t *nonres_in;  /* inputs not resident */
	int32_t *nu_off, *nu_idx, *nu_ptr; /* needed users in topological order */
	int32_t *order, *midx; /* items and each node's item index */
	int32_t *head, *tail, *inext, *inode; /* recomputation lists per item */
	uint8_t *itrans;     /* the recomputation is part of a block */
	int32_t n_items, n_clones;
	int32_t *heap;
	int64_t heap_n;
	int32_t *aside;
	int64_t placed;
};

static int eligible(const struct greedy *s, int32_t c)
{
	const struct remat_graph *g = s->g;

	return s->resident[c] && !s->cloned[c] && s->pin[c] == 0 &&
	       (s->block ? s->bad[c] == 0 : s->nonres_in[c] == 0) &&
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

/*
 * Round 2: can a block recompute p from what is resident?  Not when p is
 * gone and is an input, may not be recomputed or misses an input itself.
 */
static int unrestorable(const struct greedy *s, int32_t p)
{
	const struct remat_graph *g = s->g;

	return !s->resident[p] && (g->kind[p] == REMAT_KIND_INPUT || !g->recompute[p] ||
				   s->nonres_in[p] != 0);
}

/* p became (d = 1) or stopped being (d = -1) unrestorable: tell its users. */
static void adjust_bad(struct greedy *s, int32_t p, int d)
{
	const struct remat_graph *g = s->g;
	int32_t k;

	if (!s->needed[p])
		return;
	for (k = g->use_off[p]; k < g->use_off[p + 1]; k++) {
		int32_t c = g->use_idx[k];

		s->bad[c] += d;
		if (s->bad[c] == 0)
			try_push(s, c);
	}
}

static void set_resident(struct greedy *s, int32_t v, int on)
{
	const struct remat_graph *g = s->g;
	int32_t k;
	int before = s->block ? unrestorable(s, v) : 0;

	s->resident[v] = (uint8_t)on;
	s->cur += on ? g->mem[v] : -g->mem[v];
	for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
		int32_t c = g->use_idx[k];
		int cb = s->block && s->needed[c] ? unrestorable(s, c) : 0;

		if (on) {
			if (--s->nonres_in[c] == 0)
				try_push(s, c);
		} else {
			s->nonres_in[c]++;
		}
		if (s->block && s->needed[c] && unrestorable(s, c) != cb)
			adjust_bad(s, c, cb ? -1 : 1);
	}
	if (s->block && unrestorable(s, v) != before)
		adjust_bad(s, v, before ? -1 : 1);
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

/* Append a recomputation of c to item m's list; pin c's inputs. */
static void enqueue(struct greedy *s, int32_t c, int32_t m, int trans)
{
	const struct remat_graph *g = s->g;
	int32_t it = s->n_clones++, k;

	s->inode[it] = c;
	s->itrans[it] = (uint8_t)trans;
	s->inext[it] = -1;
	if (s->tail[m] >= 0)
		s->inext[s->tail[m]] = it;
	else
		s->head[m] = it;
	s->tail[m] = it;
	for (k = g->in_off[c]; k < g->in_off[c + 1]; k++)
		s->pin[g->in_idx[k]]++;
}

/*
 * Rematerialize c: free it now, recompute it before its next use.  In
 * round 2 its inputs that are gone are recomputed first, in the same
 * block (their own inputs are resident: c qualified).
 */
static int drop(struct greedy *s, int32_t c)
{
	const struct remat_graph *g = s->g;
	int32_t y = s->nu_idx[s->nu_ptr[c]], m = s->midx[y], k;

	REMAT_TRY(remat_schedule_push(s->out, REMAT_OP_FREE, c, s->err));
	set_resident(s, c, 0);
	s->cloned[c] = 1;
	for (k = g->in_off[c]; k < g->in_off[c + 1]; k++)
		if (!s->resident[g->in_idx[k]])
			enqueue(s, g->in_idx[k], m, 1);
	enqueue(s, c, m, 0);
	return REMAT_OK;
}

/*
 * After a recomputation read p: a value a block brought back only for it
 * goes again unless x itself reads it or another recomputation still
 * will (its own recomputation, which has not run yet, brings it back at
 * its next use).
 */
static int release_transient(struct greedy *s, int32_t p, int32_t x)
{
	if (!s->tcomp[p] || !s->resident[p] || s->pin[p])
		return REMAT_OK;
	if (s->nu_ptr[p] < s->nu_off[p + 1] && s->nu_idx[s->nu_ptr[p]] == x)
		return REMAT_OK;
	s->tcomp[p] = 0;
	if (s->nu_ptr[p] == s->nu_off[p + 1])
		return REMAT_OK; /* dead: check_free frees it */
	REMAT_TRY(remat_schedule_push(s->out, REMAT_OP_FREE, p, s->err));
	set_resident(s, p, 0);
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

/* Place w before or as item x: clone 0 the item, 1 a recomputation, 2 part of a block. */
static int place(struct greedy *s, int32_t w, int clone, int32_t x)
{
	const struct remat_graph *g = s->g;
	int64_t need = g->mem[w] + g->workspace[w];
	int32_t k, n_aside = 0;

	if (clone && s->resident[w]) {
		/* Already back (a block brought it): only release its inputs. */
		for (k = g->in_off[w]; k < g->in_off[w + 1]; k++) {
			int32_t p = g->in_idx[k];

			if (--s->pin[p] == 0)
				try_push(s, p);
			REMAT_TRY(release_transient(s, p, x));
			REMAT_TRY(check_free(s, p));
		}
		return REMAT_OK;
	}
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
	s->tcomp[w] = (uint8_t)(clone == 2); /* part of a block */
	try_push(s, w);
	for (k = g->in_off[w]; k < g->in_off[w + 1]; k++) {
		int32_t p = g->in_idx[k];

		if (clone) {
			if (--s->pin[p] == 0)
				try_push(s, p);
			REMAT_TRY(release_transient(s, p, x));
		} else {
			s->nu_ptr[p]++; /* w was p's first unplaced user */
			s->tcomp[p] = 0;
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
	free(s->itrans);
	free(s->tcomp);
	free(s->bad);
}

/*
 * One walk (round 1: XLA's rules; round 2, block: with blocks).  REMAT_OK
 * with the peak it reached, which may be over the budget.
 */
static int greedy_round(const struct remat_plan_request *req, struct remat_schedule *out,
			struct remat_error *err, int block, int64_t *peak, int32_t *peak_node)
{
	const struct remat_graph *g = req->graph;
	size_t n1 = (size_t)g->n + 1, nc = n1 + (size_t)g->n_edges;
	struct greedy s;
	int32_t i, k, m;
	int rc = REMAT_OK;

	memset(&s, 0, sizeof(s));
	s.g = g;
	s.req = req;
	s.out = out;
	s.err = err;
	s.budget = req->budget;
	s.block = block;
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
	s.inext = malloc(sizeof(int32_t) * nc);
	s.inode = malloc(sizeof(int32_t) * nc);
	s.itrans = malloc(nc);
	s.heap = malloc(sizeof(int32_t) * n1);
	s.aside = malloc(sizeof(int32_t) * n1);
	s.tcomp = calloc(n1, 1);
	s.bad = calloc(n1, sizeof(int32_t));
	if (!s.needed || !s.resident || !s.cloned || !s.in_heap || !s.pin || !s.nonres_in ||
	    !s.nu_off || !s.nu_idx || !s.nu_ptr || !s.order || !s.midx || !s.head ||
	    !s.tail || !s.inext || !s.inode || !s.itrans || !s.heap || !s.aside || !s.tcomp ||
	    !s.bad) {
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
	if (block)
		for (m = 0; m < s.n_items; m++)
			for (k = g->in_off[s.order[m]]; k < g->in_off[s.order[m] + 1]; k++)
				s.bad[s.order[m]] += unrestorable(&s, g->in_idx[k]);
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
			rc = place(&s, s.inode[it], s.itrans[it] ? 2 : 1, x);
		if (rc == REMAT_OK)
			rc = place(&s, x, 0, x);
	}
done:
	*peak = s.peak;
	*peak_node = s.peak_node;
	greedy_release(&s);
	return rc;
}

static int greedy_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		       struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	int64_t peak, peak2;
	int32_t node, node2;
	char pk[32], bu[32];
	const char *late = "";
	long rounds;
	int rc, rc2;

	REMAT_TRY(remat_opt_int(req, "rounds", 2, 1, 2, &rounds, err));
	rc = greedy_round(req, out, err, 0, &peak, &node);
	if (rc == REMAT_OK && peak > req->budget && rounds == 2) {
		/* Round 1 does not fit: the walk again, with blocks. */
		rc2 = greedy_round(req, out, err, 1, &peak2, &node2);
		if (rc2 == REMAT_OK && peak2 <= req->budget)
			return REMAT_OK;
		if (rc2 != REMAT_OK && rc2 != REMAT_ECANCELED)
			return rc2;
		if (rc2 == REMAT_OK && peak2 < peak) {
			peak = peak2;
			node = node2;
		}
		if (rc2 == REMAT_ECANCELED)
			late = " (the time limit ran out during the second round, with blocks)";
	}
	if (rc == REMAT_OK && peak > req->budget) {
		/* The lower peak of the rounds, and where it was reached. */
		remat_schedule_clear(out);
		remat_format_bytes(peak, pk, sizeof(pk));
		remat_format_bytes(req->budget, bu, sizeof(bu));
		return REMAT_FAIL(err, REMAT_ENOFIT,
				  "greedy: memory reaches %s (%lld bytes) %s%s%s, over the budget of "
				  "%s, with nothing left there to rematerialize%s", pk, (long long)peak,
				  node < 0 ? "at the start" : "at '", node < 0 ? "" : g->id[node],
				  node < 0 ? "" : "'", bu, late);
	}
	if (rc == REMAT_ECANCELED) {
		/* Out of time (the runner still offers the no-remat order). */
		remat_schedule_clear(out);
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "greedy: the time limit ran out before "
				"the walk finished");
	}
	return rc;
}

static const struct remat_planner_option greedy_options[] = {
	{ "rounds", "N", "1: XLA's rules only; 2: when they end over the budget, a second "
	  "walk with blocks (default 2)" },
	{ NULL, NULL, NULL }
};

const struct remat_planner remat_i_planner_greedy = {
	.name = "greedy",
	.summary = "XLA-style greedy rematerialization (the GreedyRemat baseline of Kumar et "
		   "al. 2019)",
	.flags = REMAT_PLANNER_AUTO,
	.options = greedy_options,
	.plan = greedy_plan,
};
