/*
 * swap_pass.c - exchange what a compute order recomputes; see swap_pass.h.
 *
 * The order is its compute steps (the compute-only semantics of
 * remat/sim.h frees each value after its last read), recomputations
 * included.  One exchange, for the recomputation of x at position i:
 *
 * 1. Drop step i.  Readers of x up to its next compute now read the
 *    value x had before i, which stays resident longer; then drop every
 *    compute nobody reads any more (the recomputations that only fed x),
 *    repeatedly.  Cheaper, and valid: every value read still has a
 *    compute before the read.
 * 2. Simulate.  Within the limit: done.  Over it, at first at step p:
 *    the values held across p (computed before p, not read at p, read
 *    later without a compute in between), x excepted, are the
 *    candidates; recomputing one, w, right before its first read after
 *    p frees it from its last read before p to there (or, second try,
 *    with that read moved to just after the next compute of one of w's
 *    inputs, so that w is rebuilt from a value brought back anyway).
 *    Of the largest SWAP_CANDS candidates, take the one whose insertion
 *    fits the limit at least cost; else the cheapest that moves the
 *    first overflow past p; else give up.  Up to SWAP_REPAIRS
 *    insertions.
 * 3. Keep the result when it is within the limit and cheaper.
 *
 * A round tries every recomputation, costliest node first; an exchange
 * kept is followed by the keep pass (keep_pass.h), which drops what the
 * new memory profile lets it keep.  Rounds repeat while one improves.
 * On the U-Net generator's depth-4 training graph at 50% (bench/RESULTS.md,
 * "The hard end") the exchange "keep e2b, recompute d2b" is what the
 * Checkmate windows and the order search could not make.
 *
 * Never returns a schedule the simulator did not accept within the
 * limit, never a costlier one; deterministic.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/keep_pass.h"
#include "plan/swap_pass.h"

/* Candidates tried at each overflow, the largest first. */
#define SWAP_CANDS 12
/* Recomputations inserted to repair one exchange. */
#define SWAP_REPAIRS 4

struct sw {
	const struct remat_graph *g;
	const struct remat_plan_request *req;
	int64_t limit;
	int32_t cap;
	int32_t *cur, ncur;        /* the current order */
	int32_t *cand, ncand;      /* an exchange being built */
	int32_t *trial, ntrial;    /* cand with one insertion */
	int32_t *pos;              /* [cap] positions of cur's recomputations */
	int64_t *tl;               /* [cap] memory at each step */
	uint8_t *read;             /* [cap] */
	int32_t *latest;           /* [n] latest compute position, -1 */
	uint8_t *done;             /* [n] */
	int32_t *cq, *cpos;        /* [n] candidates and their first reads */
	struct remat_schedule s;
	struct remat_schedule kept;
	double cost;
	struct remat_error *err;
};

static int expired(const struct remat_plan_request *req)
{
	return req && remat_plan_expired(req);
}

static int grow(struct sw *w, int32_t need)
{
	int32_t cap = w->cap;
	void *p;

	if (need <= cap)
		return REMAT_OK;
	while (cap < need)
		cap = cap < 1024 ? 2048 : cap + cap / 2;
#define GROW(field, type)                                                        \
	do {                                                                     \
		p = realloc(w->field, sizeof(type) * (size_t)cap);               \
		if (!p)                                                          \
			return REMAT_FAIL(w->err, REMAT_ENOMEM,                  \
					  "out of memory in the swap pass");     \
		w->field = p;                                                    \
	} while (0)
	GROW(cur, int32_t);
	GROW(cand, int32_t);
	GROW(trial, int32_t);
	GROW(pos, int32_t);
	GROW(tl, int64_t);
	GROW(read, uint8_t);
#undef GROW
	w->cap = cap;
	return REMAT_OK;
}

/* Simulate seq[0..n) (compute-only) with the timeline into w->tl. */
static int judge(struct sw *w, const int32_t *seq, int32_t n, struct remat_sim_result *r)
{
	int32_t i;

	remat_schedule_clear(&w->s);
	REMAT_TRY(remat_schedule_reserve(&w->s, n, w->err));
	for (i = 0; i < n; i++)
		w->s.steps[i] = (struct remat_step){ REMAT_OP_COMPUTE, seq[i] };
	w->s.n = n;
	return remat_simulate(w->g, &w->s, w->limit, w->tl, r, w->err);
}

static int32_t first_over(const struct sw *w, int32_t n)
{
	int32_t i;

	for (i = 0; i < n; i++)
		if (w->tl[i] > w->limit)
			return i;
	return -1;
}

/*
 * Drop computes nobody reads (step 1), in one backward sweep: a compute
 * stays when a later step reads its value before the node's next compute
 * (or it is an output's last), and only computes that stay mark their
 * inputs read, so whatever fed only dropped computes goes too.
 */
static void prune(struct sw *w, int32_t *seq, int32_t *n)
{
	const struct remat_graph *g = w->g;
	int32_t i, k, m = 0;

	for (i = 0; i < g->n; i++)
		w->done[i] = g->is_output[i]; /* read after this point */
	for (i = *n - 1; i >= 0; i--) {
		int32_t v = seq[i];

		w->read[i] = w->done[v];
		w->done[v] = 0;
		if (!w->read[i])
			continue;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			w->done[g->in_idx[k]] = 1;
	}
	for (i = 0; i < *n; i++)
		if (w->read[i])
			seq[m++] = seq[i];
	*n = m;
}

static int recomputable(const struct remat_graph *g, int32_t v)
{
	return g->kind[v] != REMAT_KIND_INPUT && g->recompute[v] && !g->is_output[v];
}

/*
 * Values held across step p of seq (step 2), x excepted: into w->cq,
 * their first reads after p into w->cpos.  Returns how many, the
 * largest SWAP_CANDS of them.
 */
static int32_t held_across(struct sw *w, const int32_t *seq, int32_t n, int32_t p, int32_t x)
{
	const struct remat_graph *g = w->g;
	int32_t i, k, nc = 0;

	for (i = 0; i < g->n; i++) {
		w->latest[i] = -1;
		w->done[i] = 0;
	}
	for (i = 0; i < p; i++)
		w->latest[seq[i]] = i;
	for (i = p; i < n; i++) {
		int32_t v = seq[i];

		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = g->in_idx[k];

			if (w->done[u])
				continue;
			w->done[u] = 1;
			if (i > p && w->latest[u] >= 0 && u != x && recomputable(g, u) &&
			    g->mem[u] > 0) {
				w->cq[nc] = u;
				w->cpos[nc++] = i;
			}
		}
		w->done[v] = 1;
	}
	/* The largest first (selection; ties by node). */
	for (i = 0; i < nc && i < SWAP_CANDS; i++) {
		int32_t best = i, t;

		for (k = i + 1; k < nc; k++)
			if (g->mem[w->cq[k]] > g->mem[w->cq[best]] ||
			    (g->mem[w->cq[k]] == g->mem[w->cq[best]] && w->cq[k] < w->cq[best]))
				best = k;
		t = w->cq[i];
		w->cq[i] = w->cq[best];
		w->cq[best] = t;
		t = w->cpos[i];
		w->cpos[i] = w->cpos[best];
		w->cpos[best] = t;
	}
	return nc < SWAP_CANDS ? nc : SWAP_CANDS;
}

/*
 * w->trial = w->cand with a compute of v inserted before position q; or,
 * when r > q, with the step at q (v's reader) moved to after position r
 * and v computed right before it.
 */
static void insert(struct sw *w, int32_t v, int32_t q, int32_t r)
{
	int32_t reader;

	if (r <= q) {
		memcpy(w->trial, w->cand, sizeof(int32_t) * (size_t)q);
		w->trial[q] = v;
		memcpy(w->trial + q + 1, w->cand + q, sizeof(int32_t) * (size_t)(w->ncand - q));
		w->ntrial = w->ncand + 1;
		return;
	}
	reader = w->cand[q];
	memcpy(w->trial, w->cand, sizeof(int32_t) * (size_t)q);
	memcpy(w->trial + q, w->cand + q + 1, sizeof(int32_t) * (size_t)(r - q));
	w->trial[r] = v;
	w->trial[r + 1] = reader;
	memcpy(w->trial + r + 2, w->cand + r + 1, sizeof(int32_t) * (size_t)(w->ncand - r - 1));
	w->ntrial = w->ncand + 1;
}

/*
 * Where v's reader at q may go instead (insert()'s r): after the first
 * compute after q of one of v's inputs, so that v's recomputation reads
 * that compute's value, not one held from before; -1 when none.
 */
static int32_t later_input(const struct sw *w, int32_t v, int32_t q)
{
	const struct remat_graph *g = w->g;
	int32_t i, k;

	for (i = q + 1; i < w->ncand; i++)
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (w->cand[i] == g->in_idx[k])
				return i;
	return -1;
}

/*
 * Steps 1 to 3 for the recomputation at position i of w->cur.  *kept:
 * the exchange was kept (w->cur and w->cost updated).
 */
static int exchange(struct sw *w, int32_t i, int *kept, struct remat_i_swap_stats *st)
{
	const struct remat_graph *g = w->g;
	struct remat_sim_result r;
	int32_t x = w->cur[i], rep, p, ins = 0;
	double tol = 1e-12 * fmax(1, w->cost);

	*kept = 0;
	memcpy(w->cand, w->cur, sizeof(int32_t) * (size_t)i);
	memcpy(w->cand + i, w->cur + i + 1, sizeof(int32_t) * (size_t)(w->ncur - i - 1));
	w->ncand = w->ncur - 1;
	prune(w, w->cand, &w->ncand);
	REMAT_TRY(judge(w, w->cand, w->ncand, &r));
	st->tried++;
	if (!r.valid)
		return REMAT_OK; /* cannot happen (step 1); the simulator judges anyway */
	for (rep = 0; !r.feasible && rep < SWAP_REPAIRS; rep++) {
		int32_t nc, k, pick = -1, pick_over = -1;
		double pick_cost = HUGE_VAL, base = r.cost;
		int fits = 0;

		if (base >= w->cost - tol || expired(w->req))
			return REMAT_OK;
		p = first_over(w, w->ncand);
		nc = held_across(w, w->cand, w->ncand, p, x);
		REMAT_TRY(grow(w, w->ncand + 2));
		for (k = 0; k < 2 * nc; k++) {
			struct remat_sim_result tr;
			int32_t over, v = w->cq[k / 2], q = w->cpos[k / 2], at = -1;

			if (base + g->cost[v] >= w->cost - tol)
				continue;
			if (k % 2 == 1 && (at = later_input(w, v, q)) < 0)
				continue;
			insert(w, v, q, at);
			REMAT_TRY(judge(w, w->trial, w->ntrial, &tr));
			st->tried++;
			if (!tr.valid)
				continue; /* the moved reader's value is read before its new place */
			over = first_over(w, w->ntrial);
			/* A fit beats any progress; then the least cost, then the latest overflow. */
			if ((tr.feasible && (!fits || tr.cost < pick_cost)) ||
			    (!fits && !tr.feasible && over > p &&
			     (tr.cost < pick_cost || (tr.cost == pick_cost && over > pick_over)))) {
				fits = tr.feasible;
				pick = k;
				pick_cost = tr.cost;
				pick_over = over;
			}
		}
		if (pick < 0)
			return REMAT_OK;
		insert(w, w->cq[pick / 2], w->cpos[pick / 2],
		       pick % 2 ? later_input(w, w->cq[pick / 2], w->cpos[pick / 2]) : -1);
		memcpy(w->cand, w->trial, sizeof(int32_t) * (size_t)w->ntrial);
		w->ncand = w->ntrial;
		ins++;
		REMAT_TRY(judge(w, w->cand, w->ncand, &r));
	}
	if (!r.valid || !r.feasible || r.cost >= w->cost - tol)
		return REMAT_OK;
	memcpy(w->cur, w->cand, sizeof(int32_t) * (size_t)w->ncand);
	w->ncur = w->ncand;
	w->cost = r.cost;
	st->improved++;
	st->inserted += ins;
	*kept = 1;
	return REMAT_OK;
}

/* The keep pass over w->cur; kept when the simulator agrees and it is cheaper. */
static int keep(struct sw *w)
{
	struct remat_sim_result r;
	int64_t i;

	remat_schedule_clear(&w->s);
	REMAT_TRY(remat_schedule_reserve(&w->s, w->ncur, w->err));
	for (i = 0; i < w->ncur; i++)
		w->s.steps[i] = (struct remat_step){ REMAT_OP_COMPUTE, w->cur[i] };
	w->s.n = w->ncur;
	REMAT_TRY(remat_i_keep_pass(w->g, &w->s, w->limit, 6, REMAT_I_KEEP_PER_BYTE_DISTANCE,
				    &w->kept, NULL, w->err));
	if (w->kept.n >= w->ncur)
		return REMAT_OK;
	REMAT_TRY(remat_simulate(w->g, &w->kept, w->limit, NULL, &r, w->err));
	if (!r.valid || !r.feasible || r.cost >= w->cost)
		return REMAT_OK;
	for (i = 0; i < w->kept.n; i++)
		w->cur[i] = w->kept.steps[i].node;
	w->ncur = (int32_t)w->kept.n;
	w->cost = r.cost;
	return REMAT_OK;
}

/* Positions of w->cur's recomputations, the costliest node first, into pos. */
static int32_t recomputations(struct sw *w, int32_t *pos)
{
	const struct remat_graph *g = w->g;
	int32_t i, n = 0, k;

	memset(w->done, 0, (size_t)g->n);
	for (i = 0; i < w->ncur; i++) {
		if (w->done[w->cur[i]])
			pos[n++] = i;
		w->done[w->cur[i]] = 1;
	}
	/* Insertion sort by cost, descending, stable: n is small next to the steps. */
	for (i = 1; i < n; i++) {
		int32_t v = pos[i];

		for (k = i; k > 0 && g->cost[w->cur[pos[k - 1]]] < g->cost[w->cur[v]]; k--)
			pos[k] = pos[k - 1];
		pos[k] = v;
	}
	return n;
}

int remat_i_swap_pass(const struct remat_graph *g, const struct remat_schedule *order,
		      int64_t limit, const struct remat_plan_request *req,
		      struct remat_schedule *out, struct remat_i_swap_stats *st,
		      struct remat_error *err)
{
	struct sw w;
	struct remat_i_swap_stats own;
	struct remat_sim_result r;
	int32_t npos, j;
	int64_t i, n = 0;
	int rc, improved = 1, kept;

	if (!st)
		st = &own;
	memset(st, 0, sizeof(*st));
	memset(&w, 0, sizeof(w));
	w.g = g;
	w.req = req;
	w.limit = limit;
	w.err = err;
	remat_schedule_init(&w.s);
	remat_schedule_init(&w.kept);
	for (i = 0; i < order->n; i++)
		n += order->steps[i].op == REMAT_OP_COMPUTE;
	if (n >= INT32_MAX / 2)
		return REMAT_FAIL(err, REMAT_ENOMEM, "order too long for the swap pass");
	rc = grow(&w, (int32_t)n + SWAP_REPAIRS + 2);
	w.latest = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	w.done = malloc((size_t)g->n + 1);
	w.cq = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	w.cpos = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (rc == REMAT_OK && (!w.latest || !w.done || !w.cq || !w.cpos))
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the swap pass");
	if (rc)
		goto done;
	for (i = 0; i < order->n; i++)
		if (order->steps[i].op == REMAT_OP_COMPUTE)
			w.cur[w.ncur++] = order->steps[i].node;
	rc = judge(&w, w.cur, w.ncur, &r);
	if (rc == REMAT_OK && (!r.valid || !r.feasible))
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "swap pass: the order's computes, freed as "
				"late as the compute-only rule frees them, are not valid within the "
				"limit");
	if (rc)
		goto done;
	w.cost = r.cost;
	st->start_cost = st->cost = r.cost;
	st->last_at = remat_now();
	while (improved && rc == REMAT_OK && !expired(req)) {
		improved = 0;
		npos = recomputations(&w, w.pos);
		for (j = 0; j < npos && rc == REMAT_OK && !expired(req); j++) {
			rc = exchange(&w, w.pos[j], &kept, st);
			if (rc || !kept)
				continue;
			improved = 1;
			rc = keep(&w);
			if (rc == REMAT_OK)
				rc = grow(&w, w.ncur + SWAP_REPAIRS + 2);
			if (rc)
				break;
			st->last_at = remat_now();
			/* The positions moved: list them again, going on at rank j. */
			npos = recomputations(&w, w.pos);
			j--; /* rank j holds the next costliest now */
		}
	}
	if (rc == REMAT_OK) {
		remat_schedule_clear(out);
		rc = remat_schedule_reserve(out, w.ncur, err);
		for (i = 0; rc == REMAT_OK && i < w.ncur; i++)
			out->steps[out->n++] = (struct remat_step){ REMAT_OP_COMPUTE, w.cur[i] };
		st->cost = w.cost;
	}
done:
	free(w.cur);
	free(w.pos);
	free(w.cand);
	free(w.trial);
	free(w.tl);
	free(w.read);
	free(w.latest);
	free(w.done);
	free(w.cq);
	free(w.cpos);
	remat_schedule_release(&w.s);
	remat_schedule_release(&w.kept);
	return rc;
}
