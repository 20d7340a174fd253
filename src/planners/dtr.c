/*
 * dtr.c - Dynamic Tensor Rematerialization, run as a planner.
 *
 * Kirisame, Lyubomirsky, Haan, Brennan, He, Roesch, Chen, Tatlock,
 * "Dynamic Tensor Rematerialization", ICLR 2021.  DTR needs no static
 * plan: it runs the program in its own order and, whenever an allocation
 * does not fit, evicts the resident tensor a heuristic deems least
 * valuable, recomputing evicted tensors when they are needed again.  This
 * file simulates that runtime over the graph's stable topological order
 * and emits what it executed (every compute, eviction and free) as the
 * schedule.  The paper's callbacks map to:
 *
 * 1. Start with the input nodes resident; drop at once the inputs no
 *    needed node reads.  Nodes no output depends on are never run.
 * 2. PerformOp(v), for each needed non-input node v in topological order:
 *    lock v's resident inputs; Rematerialize each evicted input (step 3),
 *    locking it as soon as it is back; Allocate (step 4); compute v;
 *    unlock the inputs.
 * 3. Rematerialize(u): replay u's op exactly as in step 2, recursively
 *    rematerializing u's evicted inputs.  The recursion runs on an
 *    explicit stack of frames (a 100k-layer chain is 100k frames deep);
 *    the nodes on the stack form a chain of strict ancestors, so it holds
 *    at most n frames and each frame's inputs once.
 * 4. Allocate(v): while (resident bytes + mem(v) + workspace(v)) exceeds
 *    the budget, PerformEviction: the heuristic picks the resident,
 *    unlocked, rematerializable tensor with the lowest score (inputs and
 *    "recompute": false nodes never qualify, nor zero-byte tensors, which
 *    free nothing).  When every candidate is locked by the pending ops
 *    below the current one (a deep rematerialization), those ops release
 *    their locks once and take them again when they resume, bringing
 *    back what was evicted meanwhile; this departs from the paper only
 *    where its runtime would run out of memory.  Still nothing to evict:
 *    REMAT_ENOFIT.
 * 5. Eager frees (the variant the paper compares with Checkmate): when a
 *    program step ends, an input that no later program step reads and
 *    that is not an output is freed at once.  It stays rematerializable:
 *    if a later rematerialization needs it, step 3 recomputes it.  What
 *    happens to a recomputed tensor no later program step reads, once
 *    the op that wanted it is done, is --after-recompute: keep (it stays
 *    resident, an eviction candidate, as in the authors' simulator simrd,
 *    where only a release frees eagerly), free (at once), or best (the
 *    default: both runs, the cheaper schedule by the simulator).  keep
 *    helps where several recomputations read it (a batch norm's outputs
 *    in DenseNet), free where it only holds memory.  A value that can
 *    never be recomputed (an input, "recompute": false) is kept until no
 *    rematerializable tensor that may still be needed depends on it
 *    (reference counts cascade from dead tensors to their parents).
 * 6. At the end, rematerialize every output that was evicted (the missing
 *    ones first, while the resident ones can still make room), locking
 *    each as it is back.
 * 7. Give up (REMAT_ENOFIT) when recomputation exceeds --max-overhead
 *    times the baseline cost (the paper's thrash limit, 2 by default), or
 *    when it exceeds a step count proportional to n (graphs of zero-cost
 *    nodes), or when the time limit runs out (checked every 4096 ops).
 *    (At budgets covering the no-remat peak the plan runner offers the
 *    plain topological order too and keeps the cheaper schedule.)
 *
 * Heuristics (--heuristic; lowest score is evicted):
 *   dtr       h = (c(t) + c(e*(t))) / (m(t) * s(t)): own cost plus the cost
 *             of the evicted neighbourhood e*(t), divided by size and
 *             staleness.  e*(t) is approximated as the paper does, with
 *             union-find equivalence classes over evicted tensors: an
 *             evicted tensor joins the classes of its evicted parents and
 *             children; each class keeps the sum of its members' costs;
 *             a rematerialized (or dead) tensor subtracts its cost from its
 *             class and leaves it, so a class may keep "phantom"
 *             connections through members that are resident again.
 *   dtr-local c(t) / (m(t) * s(t)).
 *   lru       the least recently used (last access in compute time).
 *   largest   m(t) only: the largest.
 *   msps      (c(t) + cost of the classes of t's evicted parents) / m(t):
 *             compute needed per byte freed, with no staleness.
 * Staleness s(t) = clock - last access in compute time, as the paper and
 * simrd define it: the clock advances by each executed op's cost; a new
 * tensor is accessed when its op ends, an op's inputs when it starts
 * (before their rematerialization).  s = 0 (just used) scores infinite
 * for dtr and dtr-local, as in simrd; ties (all infinite when costs are
 * zero) go to the tensor least recently used on a tick clock (one tick
 * per op), then the larger, then the lower index.
 *
 * Candidate search: sampling.  Resident candidates live in an array
 * (O(1) insert and delete).  When at most --sample of them exist (2048 by
 * default), every one is scored (exact), as simrd does; otherwise --sample
 * of them (256 by default) are drawn at random
 * (xorshift seeded by --seed) and the best drawn is evicted, falling back
 * to a full scan only when every draw was locked.  Scores change with the
 * clock and with neighbours' evictions, so a heap would need re-keying on
 * every tick; sampling keeps each eviction at O(sample * degree).
 *
 * Complexity: O(n + e) set-up; per executed op O(in-degree); per eviction
 * O(sample * degree * alpha(n)) (a full scan when every draw is locked;
 * a lock release costs the in-degrees of the pending ops).  The number
 * of ops executed is bounded by the thrash limit.  Memory O(n + e +
 * executed steps).
 *
 * Not guaranteed: DTR is online and greedy; it may recompute far more
 * than an optimal plan, or fail where a static planner fits (the paper's
 * "no free lunch": every heuristic has adversarial inputs).  Deep
 * inference DAGs are its weak spot: eager frees leave no checkpoint
 * behind the frontier, so an evicted tensor is recomputed from the
 * inputs, shared ancestors once per descendant, and the thrash limit
 * ends the run.  With sampling, the evicted tensor is the best of a
 * sample, not of all.  Values that cannot be recomputed are held while a
 * rematerializable descendant may still need them, which on inference
 * graphs can hold an input longer than the no-remat order would.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/budget.h"
#include "remat/planner.h"
#include "analysis/needed.h"
#include "plan/best.h" /* remat_i_result_better */

enum dtr_state { ST_NEW = 0, ST_RESIDENT, ST_EVICTED, ST_DEAD };

enum dtr_heur { H_DTR, H_LOCAL, H_LRU, H_LARGEST, H_MSPS };

static const char *const heur_names[] = { "dtr", "dtr-local", "lru", "largest", "msps" };

struct dtr_frame {
	int32_t v;     /* node being (re)computed */
	int32_t k;     /* next input to make resident */
	int64_t base;  /* its lock bits: lb[base .. base + in-degree) */
};

struct dtr {
	const struct remat_graph *g;
	const struct remat_plan_request *req;
	struct remat_schedule *out;
	struct remat_error *err;
	int heur;
	int64_t budget, cur, peak;
	double remat_cost, max_remat_cost;
	int64_t recomputes, max_recomputes;
	int64_t clock, computes;
	double tclock;      /* compute time: the sum of the costs of the ops run */
	int free_recomputed; /* free recomputed tensors no program step reads */
	int64_t sample;     /* candidates drawn per eviction */
	int64_t exact_upto; /* score every candidate when at most this many */
	uint64_t rng;
	int32_t main_done, main_total;

	uint8_t *state;     /* enum dtr_state */
	uint8_t *needed;    /* some output depends on it (or it is one) */
	int32_t *lock;      /* frames holding it as a resident input */
	int32_t *want;      /* frames waiting for it to come back */
	int32_t *pending;   /* program steps still to read it */
	int32_t *alive;     /* pending + output + live rematerializable children */
	int64_t *last;      /* tick of the last access (ties) */
	double *tlast;      /* compute time of the last access (staleness) */

	int32_t *pool;      /* resident eviction candidates */
	int32_t *ppos;      /* position in pool, -1 when absent */
	int32_t pool_n;

	/* Union-find over evicted tensors (dtr and msps only). */
	int use_uf;
	int32_t *elem_of;   /* [n] element of an evicted tensor, -1 */
	int32_t *uf_par, *uf_size;
	double *uf_sum;
	uint32_t *uf_stamp;
	int32_t uf_n, uf_cap;
	uint32_t stamp;

	struct dtr_frame *stack;
	int32_t sp;
	uint8_t *lb;        /* per-frame "this input is locked by me" bits */
	int64_t lb_top;
	int32_t *cascade;
	int64_t evictions, eager_frees, spills;
};

/* What a run did, for the report. */
struct dtr_stats {
	int64_t peak, evictions, eager_frees, recomputes, spills;
};

static int is_remat(const struct remat_graph *g, int32_t v)
{
	return g->kind[v] != REMAT_KIND_INPUT && g->recompute[v];
}

static int is_candidate(const struct dtr *d, int32_t v)
{
	return is_remat(d->g, v) && d->g->mem[v] > 0;
}

static uint64_t dtr_rand(struct dtr *d)
{
	uint64_t x = d->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	d->rng = x;
	return x;
}

/* ---- candidate pool ---- */

static void pool_add(struct dtr *d, int32_t v)
{
	if (d->ppos[v] >= 0 || !is_candidate(d, v))
		return;
	d->ppos[v] = d->pool_n;
	d->pool[d->pool_n++] = v;
}

static void pool_del(struct dtr *d, int32_t v)
{
	int32_t i = d->ppos[v], w;

	if (i < 0)
		return;
	w = d->pool[--d->pool_n];
	d->pool[i] = w;
	d->ppos[w] = i;
	d->ppos[v] = -1;
}

/* ---- union-find equivalence classes ---- */

static int32_t uf_find(struct dtr *d, int32_t x)
{
	while (d->uf_par[x] != x) {
		d->uf_par[x] = d->uf_par[d->uf_par[x]]; /* path halving */
		x = d->uf_par[x];
	}
	return x;
}

static void uf_union(struct dtr *d, int32_t a, int32_t b)
{
	a = uf_find(d, a);
	b = uf_find(d, b);
	if (a == b)
		return;
	if (d->uf_size[a] < d->uf_size[b]) {
		int32_t t = a;

		a = b;
		b = t;
	}
	d->uf_par[b] = a;
	d->uf_size[a] += d->uf_size[b];
	d->uf_sum[a] += d->uf_sum[b];
}

static int uf_grow(struct dtr *d)
{
	int32_t cap = d->uf_cap ? d->uf_cap * 2 : 1024;
	void *p;

	if (d->uf_cap > INT32_MAX / 4)
		return REMAT_FAIL(d->err, REMAT_ENOMEM, "dtr: too many evictions to track");
	if (!(p = realloc(d->uf_par, sizeof(int32_t) * (size_t)cap)))
		goto nomem;
	d->uf_par = p;
	if (!(p = realloc(d->uf_size, sizeof(int32_t) * (size_t)cap)))
		goto nomem;
	d->uf_size = p;
	if (!(p = realloc(d->uf_sum, sizeof(double) * (size_t)cap)))
		goto nomem;
	d->uf_sum = p;
	if (!(p = realloc(d->uf_stamp, sizeof(uint32_t) * (size_t)cap)))
		goto nomem;
	d->uf_stamp = p;
	d->uf_cap = cap;
	return REMAT_OK;
nomem:
	return REMAT_FAIL(d->err, REMAT_ENOMEM, "out of memory");
}

/* v has just been evicted: give it a class and join its evicted neighbours. */
static int uf_attach(struct dtr *d, int32_t v)
{
	const struct remat_graph *g = d->g;
	int32_t e, k;

	if (!d->use_uf)
		return REMAT_OK;
	if (d->uf_n == d->uf_cap)
		REMAT_TRY(uf_grow(d));
	e = d->uf_n++;
	d->uf_par[e] = e;
	d->uf_size[e] = 1;
	d->uf_sum[e] = g->cost[v];
	d->uf_stamp[e] = 0;
	d->elem_of[v] = e;
	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
		if (d->state[g->in_idx[k]] == ST_EVICTED)
			uf_union(d, e, d->elem_of[g->in_idx[k]]);
	for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
		if (d->state[g->use_idx[k]] == ST_EVICTED)
			uf_union(d, e, d->elem_of[g->use_idx[k]]);
	return REMAT_OK;
}

/* v leaves the evicted set (recomputed or dead): its cost leaves its class. */
static void uf_detach(struct dtr *d, int32_t v)
{
	int32_t r;

	if (!d->use_uf || d->elem_of[v] < 0)
		return;
	r = uf_find(d, d->elem_of[v]);
	d->uf_sum[r] -= d->g->cost[v];
	d->elem_of[v] = -1;
}

/* The class of u when it is evicted and not yet counted in this stamp: its cost sum (>= 0). */
static double class_once(struct dtr *d, int32_t u)
{
	int32_t r;

	if (d->state[u] != ST_EVICTED)
		return 0;
	r = uf_find(d, d->elem_of[u]);
	if (d->uf_stamp[r] == d->stamp)
		return 0;
	d->uf_stamp[r] = d->stamp;
	return d->uf_sum[r] > 0 ? d->uf_sum[r] : 0;
}

/* Sum of the classes of v's evicted parents (and children, if both). */
static double neighbourhood_cost(struct dtr *d, int32_t v, int both)
{
	const struct remat_graph *g = d->g;
	double s = 0;
	int32_t k;

	if (++d->stamp == 0) {
		memset(d->uf_stamp, 0, sizeof(uint32_t) * (size_t)d->uf_n);
		d->stamp = 1;
	}
	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
		s += class_once(d, g->in_idx[k]);
	if (both)
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			s += class_once(d, g->use_idx[k]);
	return s;
}

/* ---- eviction ---- */

static double score(struct dtr *d, int32_t v)
{
	const struct remat_graph *g = d->g;
	double m = (double)g->mem[v], s = d->tclock - d->tlast[v];

	switch (d->heur) {
	case H_DTR:
		if (!(m * s > 0))
			return INFINITY;
		return (g->cost[v] + neighbourhood_cost(d, v, 1)) / (m * s);
	case H_LOCAL:
		if (!(m * s > 0))
			return INFINITY;
		return g->cost[v] / (m * s);
	case H_LRU:
		return d->tlast[v];
	case H_LARGEST:
		return -m;
	default: /* H_MSPS */
		return (g->cost[v] + neighbourhood_cost(d, v, 0)) / m;
	}
}

/* Is (sa, a) a better eviction than (sb, b)? */
static int better(const struct dtr *d, double sa, int32_t a, double sb, int32_t b)
{
	if (sa != sb)
		return sa < sb;
	if (d->last[a] != d->last[b])
		return d->last[a] < d->last[b];
	if (d->g->mem[a] != d->g->mem[b])
		return d->g->mem[a] > d->g->mem[b];
	return a < b;
}

static int32_t choose(struct dtr *d)
{
	int32_t best = -1, i, v;
	double bs = 0, s;
	int64_t t;

	if (d->sample > 0 && d->pool_n > d->exact_upto) {
		for (t = 0; t < d->sample; t++) {
			v = d->pool[dtr_rand(d) % (uint64_t)d->pool_n];
			if (d->lock[v])
				continue;
			s = score(d, v);
			if (best < 0 || better(d, s, v, bs, best)) {
				best = v;
				bs = s;
			}
		}
		if (best >= 0)
			return best;
	}
	for (i = 0; i < d->pool_n; i++) {
		v = d->pool[i];
		if (d->lock[v])
			continue;
		s = score(d, v);
		if (best < 0 || better(d, s, v, bs, best)) {
			best = v;
			bs = s;
		}
	}
	return best;
}

/* Drop resident v: an eviction or an eager free. */
static int drop(struct dtr *d, int32_t v)
{
	REMAT_TRY(remat_schedule_push(d->out, REMAT_OP_FREE, v, d->err));
	d->cur -= d->g->mem[v];
	pool_del(d, v);
	if (d->alive[v] > 0) {
		d->state[v] = ST_EVICTED;
		return uf_attach(d, v);
	}
	d->state[v] = ST_DEAD;
	return REMAT_OK;
}

/*
 * Step 5: free v if it is not an output and nothing will read it again:
 * no later program step for a rematerializable value (a later
 * rematerialization may still bring it back), nothing at all (alive == 0)
 * for one that cannot be recomputed.  Values a pending op is waiting for
 * (want) or holds (lock) stay.
 */
static int maybe_free(struct dtr *d, int32_t v, int release)
{
	const struct remat_graph *g = d->g;

	if (d->state[v] != ST_RESIDENT || d->lock[v] || d->want[v] || g->is_output[v])
		return REMAT_OK;
	if (d->free_recomputed)
		release = 1;
	if (is_remat(g, v) ? d->pending[v] != 0 || (!release && d->alive[v] != 0) :
	    d->alive[v] != 0)
		return REMAT_OK;
	d->eager_frees++;
	return drop(d, v);
}

/* One fewer reason to keep v; cascade to parents when it is dead. */
static int dec_alive(struct dtr *d, int32_t v)
{
	const struct remat_graph *g = d->g;
	int32_t top = 0, k;

	if (--d->alive[v] > 0)
		return REMAT_OK;
	d->cascade[top++] = v;
	while (top > 0) {
		int32_t x = d->cascade[--top];

		if (is_remat(g, x))
			for (k = g->in_off[x]; k < g->in_off[x + 1]; k++)
				if (--d->alive[g->in_idx[k]] == 0)
					d->cascade[top++] = g->in_idx[k];
		if (d->state[x] == ST_EVICTED) {
			uf_detach(d, x);
			d->state[x] = ST_DEAD;
		} else if (d->state[x] == ST_RESIDENT) {
			REMAT_TRY(maybe_free(d, x, 0));
		}
	}
	return REMAT_OK;
}

/* ---- performing ops ---- */

static int push_frame(struct dtr *d, int32_t v)
{
	const struct remat_graph *g = d->g;
	struct dtr_frame *f;
	int32_t k, deg = g->in_off[v + 1] - g->in_off[v];

	/*
	 * Frames form a chain of strict ancestors, so at most n of them with
	 * at most n_edges lock bits in all; anything else is a bug.
	 */
	if (d->state[v] == ST_DEAD || d->state[v] == ST_RESIDENT ||
	    (d->state[v] == ST_NEW && d->sp > 0) || d->sp > g->n ||
	    d->lb_top + deg > g->n_edges)
		return REMAT_FAIL(d->err, REMAT_EINTERNAL,
				  "dtr: asked to compute '%s' in state %d", g->id[v], d->state[v]);
	f = &d->stack[d->sp++];
	f->v = v;
	f->k = 0;
	f->base = d->lb_top;
	d->lb_top += deg;
	for (k = 0; k < deg; k++) {
		int32_t u = g->in_idx[g->in_off[v] + k];

		d->tlast[u] = d->tclock; /* an op's start accesses its inputs */

		if (d->state[u] == ST_RESIDENT) {
			d->lock[u]++;
			d->lb[f->base + k] = 1;
		} else {
			d->want[u]++;
			d->lb[f->base + k] = 0;
		}
	}
	return REMAT_OK;
}

/*
 * Every candidate is locked: let the pending ops below the top release
 * their resident inputs.  Each resumes from its first input and locks (or
 * brings back) them again.  Returns the number of locks released.
 */
static int64_t spill(struct dtr *d)
{
	const struct remat_graph *g = d->g;
	int64_t n = 0;
	int32_t i, j;

	for (i = 0; i + 1 < d->sp; i++) {
		struct dtr_frame *f = &d->stack[i];
		int32_t off = g->in_off[f->v], deg = g->in_off[f->v + 1] - off;

		for (j = 0; j < deg; j++)
			if (d->lb[f->base + j]) {
				int32_t u = g->in_idx[off + j];

				d->lb[f->base + j] = 0;
				d->lock[u]--;
				d->want[u]++;
				n++;
			}
		f->k = 0;
	}
	if (n)
		d->spills++;
	return n;
}

/* Compute v now that its inputs are resident and locked (steps 2-4). */

/* A cost for a message: %g below 10^6, whole units above (no exponent). */
static void cost_text(double c, char *buf, size_t size)
{
	if (c < 1e6)
		snprintf(buf, size, "%g", c);
	else
		snprintf(buf, size, "%.0f", c);
}

static int compute(struct dtr *d, int32_t v)
{
	const struct remat_graph *g = d->g;
	int64_t need = g->mem[v] + g->workspace[v];
	int32_t k;
	int spilled = 0;

	while (d->cur + need > d->budget) {
		int32_t c = choose(d);

		if (c < 0 && !spilled) {
			spilled = 1;
			if (spill(d) > 0)
				continue;
		}
		if (c < 0) {
			char ne[32], cu[32], bu[32];

			remat_format_bytes(need, ne, sizeof(ne));
			remat_format_bytes(d->cur, cu, sizeof(cu));
			remat_format_bytes(d->budget, bu, sizeof(bu));
			return REMAT_FAIL(d->err, REMAT_ENOFIT,
					  "dtr: cannot fit '%s': it needs %s with %s resident "
					  "that cannot be evicted (budget %s; %d candidates, all "
					  "locked by %d nested ops)", g->id[v], ne, cu, bu,
					  d->pool_n, d->sp);
		}
		REMAT_TRY(drop(d, c));
		d->evictions++;
	}
	REMAT_TRY(remat_schedule_push(d->out, REMAT_OP_COMPUTE, v, d->err));
	/* As the simulator: the peak is the largest memory during a compute. */
	if (d->computes == 0 || d->cur + need > d->peak)
		d->peak = d->cur + need;
	d->cur += g->mem[v];
	if (d->state[v] == ST_EVICTED) {
		uf_detach(d, v);
		d->recomputes++;
		d->remat_cost += g->cost[v];
		if (d->remat_cost > d->max_remat_cost * (1 + 1e-12)) {
			char a[32], b[32];

			cost_text(d->remat_cost, a, sizeof(a));
			cost_text(d->max_remat_cost, b, sizeof(b));
			return REMAT_FAIL(d->err, REMAT_ENOFIT,
					  "dtr: recomputing '%s' takes the recomputation cost to "
					  "%s %s, over the thrash limit of %s %s (--max-overhead "
					  "times the baseline cost)", g->id[v], a, g->cost_unit, b,
					  g->cost_unit);
		}
		if (d->recomputes > d->max_recomputes)
			return REMAT_FAIL(d->err, REMAT_ENOFIT,
					  "dtr: more than %lld recomputations (the thrash limit "
					  "on steps) at '%s'", (long long)d->max_recomputes,
					  g->id[v]);
	}
	d->tclock += g->cost[v];
	/*
	 * As simrd: a new tensor is accessed when its op ends; a recomputed
	 * one was last accessed when the op that wanted it started (below).
	 */
	if (d->state[v] == ST_NEW)
		d->tlast[v] = d->tclock;
	d->state[v] = ST_RESIDENT;
	pool_add(d, v);
	d->last[v] = d->clock;
	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
		d->last[g->in_idx[k]] = d->clock;
	d->clock++;
	if ((++d->computes & 4095) == 0) {
		if (remat_plan_expired(d->req))
			return REMAT_FAIL(d->err, REMAT_ENOFIT, "dtr: the time limit ran out "
					  "before the run finished");
		if ((d->computes & 65535) == 0) {
			struct remat_progress pr = { "dtr", "run", -1, NAN, NAN, 0 };

			pr.fraction = d->main_total ? (double)d->main_done / d->main_total : 1;
			remat_plan_progress(d->req, &pr);
		}
	}
	return REMAT_OK;
}

/*
 * PerformOp(root) with every rematerialization it triggers, on the
 * explicit frame stack.  main: root is a program step (its inputs' pending
 * counts drop afterwards); otherwise it is an output being brought back.
 */
static int run_op(struct dtr *d, int32_t root, int main)
{
	const struct remat_graph *g = d->g;

	REMAT_TRY(push_frame(d, root));
	while (d->sp > 0) {
		struct dtr_frame *f = &d->stack[d->sp - 1];
		int32_t v = f->v, off = g->in_off[v];
		int32_t deg = g->in_off[v + 1] - off, k, pushed = 0, release;

		while (f->k < deg) {
			int32_t u = g->in_idx[off + f->k];

			if (!d->lb[f->base + f->k]) {
				if (d->state[u] != ST_RESIDENT) {
					REMAT_TRY(push_frame(d, u));
					pushed = 1;
					break;
				}
				d->want[u]--;
				d->lock[u]++;
				d->lb[f->base + f->k] = 1;
			}
			f->k++;
		}
		if (pushed)
			continue;
		REMAT_TRY(compute(d, v));
		for (k = 0; k < deg; k++)
			d->lock[g->in_idx[off + k]]--;
		d->lb_top = f->base;
		d->sp--;
		release = d->sp == 0 && main;
		if (release) {
			for (k = 0; k < deg; k++) {
				int32_t u = g->in_idx[off + k];

				d->pending[u]--;
				REMAT_TRY(dec_alive(d, u));
			}
		}
		for (k = 0; k < deg; k++)
			REMAT_TRY(maybe_free(d, g->in_idx[off + k], release));
	}
	return REMAT_OK;
}

static int parse_heuristic(const struct remat_plan_request *req, int *out,
			   struct remat_error *err)
{
	const char *s = remat_opt_get(req, "heuristic");
	int i;

	*out = H_DTR;
	if (!s)
		return REMAT_OK;
	for (i = 0; i < (int)(sizeof(heur_names) / sizeof(heur_names[0])); i++)
		if (strcmp(s, heur_names[i]) == 0) {
			*out = i;
			return REMAT_OK;
		}
	return REMAT_FAIL(err, REMAT_EUSAGE, "option '--heuristic': expected dtr, dtr-local, "
			  "lru, largest or msps, got '%s'", s);
}

static void dtr_release(struct dtr *d)
{
	free(d->state);
	free(d->needed);
	free(d->lock);
	free(d->want);
	free(d->pending);
	free(d->alive);
	free(d->last);
	free(d->tlast);
	free(d->pool);
	free(d->ppos);
	free(d->elem_of);
	free(d->uf_par);
	free(d->uf_size);
	free(d->uf_sum);
	free(d->uf_stamp);
	free(d->stack);
	free(d->lb);
	free(d->cascade);
}

/* Simulate the runtime; out receives the executed steps. */
static int dtr_run(const struct remat_plan_request *req, int heur, double max_overhead,
		   int64_t sample, int free_recomputed, struct remat_schedule *out,
		   struct dtr_stats *st, struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	size_t n1 = (size_t)g->n + 1;
	struct dtr d;
	int32_t i, k;
	int rc = REMAT_OK;
	double limit;

	memset(&d, 0, sizeof(d));
	d.g = g;
	d.req = req;
	d.out = out;
	d.err = err;
	d.heur = heur;
	d.budget = req->budget;
	/* sample < 0: the default, exact up to 2048 candidates, else 256 drawn. */
	d.sample = sample < 0 ? 256 : sample;
	d.exact_upto = sample < 0 ? 2048 : sample;
	d.free_recomputed = free_recomputed;
	d.rng = req->seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
	if (!d.rng)
		d.rng = 88172645463325252ull;
	d.use_uf = heur == H_DTR || heur == H_MSPS;
	d.max_remat_cost = max_overhead * g->baseline_cost;
	limit = (max_overhead + 1) * 64.0 * (double)n1;
	d.max_recomputes = limit > 1e9 ? (int64_t)1e9 : (int64_t)limit;

	d.state = calloc(n1, 1);
	d.needed = calloc(n1, 1);
	d.lock = calloc(n1, sizeof(int32_t));
	d.want = calloc(n1, sizeof(int32_t));
	d.pending = calloc(n1, sizeof(int32_t));
	d.alive = calloc(n1, sizeof(int32_t));
	d.last = calloc(n1, sizeof(int64_t));
	d.tlast = calloc(n1, sizeof(double));
	d.pool = malloc(sizeof(int32_t) * n1);
	d.ppos = malloc(sizeof(int32_t) * n1);
	d.elem_of = malloc(sizeof(int32_t) * n1);
	d.stack = malloc(sizeof(struct dtr_frame) * (n1 + 1));
	d.lb = malloc((size_t)g->n_edges + 1);
	d.cascade = malloc(sizeof(int32_t) * n1);
	if (!d.state || !d.needed || !d.lock || !d.want || !d.pending || !d.alive ||
	    !d.last || !d.tlast || !d.pool || !d.ppos || !d.elem_of || !d.stack || !d.lb || !d.cascade) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < g->n; i++) {
		d.ppos[i] = -1;
		d.elem_of[i] = -1;
	}
	remat_i_needed(g, d.needed);
	for (i = 0; i < g->n; i++) {
		if (!d.needed[i])
			continue;
		d.alive[i] += g->is_output[i];
		if (g->kind[i] == REMAT_KIND_INPUT)
			continue;
		d.main_total++;
		for (k = g->in_off[i]; k < g->in_off[i + 1]; k++) {
			int32_t p = g->in_idx[k];

			d.pending[p]++;
			d.alive[p] += 1 + is_remat(g, i);
		}
	}
	remat_schedule_clear(out);
	rc = remat_schedule_reserve(out, 2 * (int64_t)n1, err);
	if (rc)
		goto done;
	/* Step 1: inputs start resident; those nobody needs go at once. */
	for (i = 0; i < g->n; i++)
		if (g->kind[i] == REMAT_KIND_INPUT) {
			d.state[i] = ST_RESIDENT;
			d.cur += g->mem[i];
		}
	d.peak = d.cur;
	for (i = 0; i < g->n; i++)
		if (g->kind[i] == REMAT_KIND_INPUT && d.alive[i] == 0 && !g->is_output[i]) {
			rc = drop(&d, i);
			if (rc)
				goto done;
		}
	/* Steps 2-5: the program. */
	for (i = 0; i < g->n && rc == REMAT_OK; i++) {
		int32_t v = g->topo[i];

		if (!d.needed[v] || g->kind[v] == REMAT_KIND_INPUT)
			continue;
		rc = run_op(&d, v, 1);
		d.main_done++;
	}
	/*
	 * Step 6: outputs evicted along the way come back, and stay (locked).
	 * The missing ones first, while the resident ones may still make room
	 * for them (they are then brought back in the second pass).
	 */
	for (k = 0; k < 2; k++)
		for (i = 0; i < g->n_outputs && rc == REMAT_OK; i++) {
			int32_t o = g->outputs[i];

			if (d.lock[o] || (k == 0 && d.state[o] == ST_RESIDENT))
				continue;
			if (d.state[o] != ST_RESIDENT)
				rc = run_op(&d, o, 0);
			if (rc == REMAT_OK)
				d.lock[o]++;
		}
	if (rc == REMAT_OK && d.sp != 0)
		rc = REMAT_FAIL(err, REMAT_EINTERNAL, "dtr: frame stack not empty at the end");
	/* With no compute at all, the peak is the inputs at the start. */
	if (rc == REMAT_OK && d.peak > d.budget)
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "dtr: the inputs alone (%lld bytes) exceed the "
				"budget of %lld bytes", (long long)d.peak, (long long)d.budget);
	st->peak = d.peak;
	st->evictions = d.evictions;
	st->eager_frees = d.eager_frees;
	st->recomputes = d.recomputes;
	st->spills = d.spills;
done:
	dtr_release(&d);
	return rc;
}

static const char *const after_names[] = { "keep", "free", "best" };

static void dtr_note(const struct remat_plan_request *req, int heur, int free_recomputed,
		     const struct dtr_stats *st)
{
	if (req->report)
		snprintf(req->report->note, sizeof(req->report->note),
			 "dtr heuristic %s, recomputed tensors %s: %lld evictions, "
			 "%lld eager frees, %lld recomputes, %lld spills, runtime peak "
			 "%lld bytes", heur_names[heur],
			 free_recomputed ? "freed" : "kept", (long long)st->evictions,
			 (long long)st->eager_frees, (long long)st->recomputes,
			 (long long)st->spills, (long long)st->peak);
}

/*
 * The runtime's steps are returned as executed (its peak then equals the
 * simulator's).  With --after-recompute best, both runs are judged by the
 * simulator (plan/best.c) and the cheaper is returned; when neither fits,
 * the first run's error is.  At budgets covering the no-remat peak the
 * plan runner offers the plain order too (src/plan/run.c).
 */
static int dtr_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		    struct remat_error *err)
{
	struct dtr_stats st[2];
	struct remat_schedule cand;
	struct remat_sim_result r[2];
	struct remat_error first;
	double max_overhead;
	const char *after = remat_opt_get(req, "after-recompute");
	long sample;
	int heur, rc = REMAT_OK, mode = 2, f, chosen = -1;

	REMAT_TRY(parse_heuristic(req, &heur, err));
	REMAT_TRY(remat_opt_double(req, "max-overhead", 2.0, 0.0, 1e9, &max_overhead, err));
	REMAT_TRY(remat_opt_int(req, "sample", -1, 0, 1L << 30, &sample, err));
	if (after) {
		for (mode = 0; mode < 3 && strcmp(after, after_names[mode]) != 0; mode++)
			;
		if (mode == 3)
			return REMAT_FAIL(err, REMAT_EUSAGE, "option '--after-recompute': "
					  "expected keep, free or best, got '%s'", after);
	}
	memset(st, 0, sizeof(st));
	if (mode < 2) {
		rc = dtr_run(req, heur, max_overhead, sample, mode, out, &st[0], err);
		if (rc == REMAT_OK)
			dtr_note(req, heur, mode, &st[0]);
		return rc;
	}
	/* Both runs, each judged by the simulator as it is; the cheaper stays in out. */
	remat_schedule_init(&cand);
	memset(&first, 0, sizeof(first));
	for (f = 0; f < 2; f++) {
		struct remat_error e;

		memset(&e, 0, sizeof(e));
		rc = dtr_run(req, heur, max_overhead, sample, f, f ? &cand : out, &st[f], &e);
		if (rc == REMAT_OK) {
			rc = remat_simulate(req->graph, f ? &cand : out, req->budget, NULL, &r[f], err);
			if (rc)
				goto done;
			if (!r[f].valid) {
				rc = REMAT_FAIL(err, REMAT_EINTERNAL, "planner 'dtr' built an "
						"invalid schedule: %s", r[f].error);
				goto done;
			}
			if (r[f].feasible && (chosen < 0 ||
			    remat_i_result_better(&r[f], cand.n, &r[chosen], out->n))) {
				if (f)
					remat_schedule_swap(out, &cand);
				chosen = f;
			}
		} else if (rc != REMAT_ENOFIT) {
			*err = e;
			goto done;
		} else if (f == 0) {
			first = e;
		}
		if (f == 0 && remat_plan_expired(req))
			break;
	}
	if (chosen < 0) {
		if (first.code) {
			*err = first;
			rc = first.code;
		} else {
			rc = REMAT_FAIL(err, REMAT_ENOFIT, "dtr: no run fit the budget");
		}
		goto done;
	}
	rc = REMAT_OK;
	dtr_note(req, heur, chosen, &st[chosen]);
done:
	remat_schedule_release(&cand);
	return rc;
}

static const struct remat_planner_option dtr_options[] = {
	{ "heuristic", "NAME", "eviction heuristic: dtr, dtr-local, lru, largest or msps "
	  "(default dtr)" },
	{ "max-overhead", "X", "give up when recomputation exceeds X times the baseline "
	  "cost (default 2)" },
	{ "sample", "N", "score N random candidates per eviction when more are resident "
	  "(default: every one up to 2048, else 256 random ones; 0: score all)" },
	{ "after-recompute", "WHAT", "a recomputed tensor no later program step reads: keep "
	  "(resident until evicted, as DTR's simulator), free (at once) or best (run both, "
	  "return the cheaper; default)" },
	{ NULL, NULL, NULL }
};

const struct remat_planner remat_i_planner_dtr = {
	.name = "dtr",
	.summary = "Dynamic Tensor Rematerialization (Kirisame et al. 2021): evict on demand, "
		   "recompute when needed",
	.flags = REMAT_PLANNER_AUTO,
	.options = dtr_options,
	.plan = dtr_plan,
};
