/*
 * lns.c - large-neighbourhood search on the Checkmate model (lns.h).
 *
 * 0. When the start recomputes, the order search by replay
 *    (replay_search.c) runs first, from the cheapest replay of the
 *    start's order, the file's and local search's, for o->replay_share
 *    of the time left (nine tenths by default: a climb that stalls
 *    first leaves the rest to the windows); its schedule becomes the
 *    start when cheaper.  On large graphs at tight budgets it finds much
 *    cheaper starts than the windows below reach in the same time
 *    (bench/results/moccasin.md, "The lost cell").
 * 1. The model's order is the order of the start schedule's first
 *    computations (remat_order_from_schedule), so every schedule maps
 *    into its own model: the graph is reordered by it when that differs
 *    from the loader's, and the model (checkmate_model.h) is built on
 *    that graph.  The schedule becomes a point of the model: stage t
 *    computes the nodes run after node t-1's first computation and up to
 *    node t's, in index order.  (A stage that computes a node twice does
 *    not map: there are no windows then, only the swap pass of step 4.)
 *    The simulator judges the point's schedule; over budget (computes
 *    reordered within a stage can cost memory) it is no start either.
 *    Before that, with o->interval_share > 0 (by default when a time
 *    limit leaves at least LNS_INTERVAL_AUTO_SECONDS), the interval pass
 *    (interval_pass.h) re-decides, for the start's whole order at once,
 *    which values are held and which are computed again: one MILP, for
 *    that share of the time left (30 s without a limit).
 * 2. A window is stages a..b-1 and a set K of free nodes; every other
 *    node keeps the start's R and S there (constants), and everything
 *    outside the stages stays: the computes of the other stages, hence
 *    (least retention, computed by a backward pass) what must be
 *    resident entering stage b, S_b, which is fixed.  Entering stage a,
 *    K's nodes may be kept at most as the start kept them, so the stages
 *    before a never need more memory.  The sub-MILP is Checkmate's model
 *    over those stages with K's R and S free (FREE and U wherever a
 *    hazard or a memory row involves them).  Two kinds of window:
 *    a. stage windows: K = every compute of the stages and their inputs
 *       up to o->depth levels;
 *    b. recompute-centred: for a node v recomputed in stage t2 (costliest
 *       first), the stages from its previous computation to t2 (at most
 *       a span that adapts like the stage windows), K = v, the other
 *       recomputes there with their inputs, and the values resident at
 *       the fullest stage that are cheapest to bring back per byte: can v
 *       be kept instead of recomputed, making room by dropping others?
 *    The start's own window is a feasible point of it and goes in as the
 *    MILP's start.
 * 3. CBC solves it within o->window_nodes branch-and-bound nodes and
 *    o->window_seconds.  Its computes replace the window's; the point is
 *    normalized (computes nobody reads are dropped, everywhere), turned
 *    into a schedule, mapped back to the request's graph and simulated:
 *    kept when valid, within budget and cheaper.
 * 4. Passes alternate: the swap pass (swap_pass.h: keep a value a
 *    recomputation brought back and recompute others held across where
 *    memory then overflows, judged by the simulator; for at most
 *    o->swap_share of the time left, a quarter by default; it also runs
 *    once on the start, before step 1, as it needs no model), stage
 *    windows sliding by half their length over the stages (a window
 *    solved to optimality grows the next by a quarter, one stopped by
 *    its node limit shrinks it), then the recompute-centred windows.  A
 *    swap that moves a first computation leaves the model's order: LNS
 *    goes on from step 1 in the swapped schedule's order (at most
 *    LNS_RESTARTS times).  Two passes in a row without an
 *    improvement end the search (the same windows would give the same
 *    answers); a stage window spanning every stage solved to optimality,
 *    or a schedule that recomputes nothing, proves it optimal in its
 *    order.  Stop at the deadline or after o->max_windows too.  When
 *    there can be no windows (the start does not map into the model, or
 *    the restarts ran out), the swap pass has the rest of the time
 *    (swap_rest).
 *
 * Never worse than its start (only cheaper schedules are kept, each
 * checked by the simulator); deterministic for a given start and options
 * as long as no sub-MILP hits window_seconds or the deadline.  Each
 * sub-MILP has O(w (K + E_K)) columns for w stages and K active nodes
 * with E_K input edges.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/order.h"
#include "remat/planner.h"
#include "plan/checkmate_model.h"
#include "plan/interval_pass.h"
#include "analysis/needed.h"
#include "plan/lns.h"
#include "plan/replay_search.h"
#include "plan/swap_pass.h"
#include "solver/milp.h"

#define ZERO REMAT_I_CM_ZERO
#define ONE REMAT_I_CM_ONE

void remat_i_lns_opts_init(struct remat_i_lns_opts *o, const char *caller)
{
	memset(o, 0, sizeof(*o));
	o->caller = caller;
	o->backend = REMAT_I_MILP_CBC;
	o->depth = 1;
	o->window = 8;
	o->window_nodes = 500;
	o->window_seconds = 2.0;
	o->replay_share = 0.9;
	o->replay_threads = 2;
	o->swap_share = 0.25;
	o->interval_share = -1; /* automatic: interval_share_now() */
}

int remat_i_lns_opts_read(const struct remat_plan_request *req, struct remat_i_lns_opts *o,
			  const char *caller, struct remat_error *err)
{
	long v;

	remat_i_lns_opts_init(o, caller);
	REMAT_TRY(remat_opt_int(req, "lns-window", o->window, 2, 1000000, &v, err));
	o->window = (int32_t)v;
	REMAT_TRY(remat_opt_int(req, "lns-depth", o->depth, 1, 8, &v, err));
	o->depth = (int)v;
	REMAT_TRY(remat_opt_int(req, "lns-nodes", (long)o->window_nodes, 1, 100000000, &v, err));
	o->window_nodes = v;
	REMAT_TRY(remat_opt_int(req, "lns-windows", 0, 0, 1000000000, &v, err));
	o->max_windows = v;
	REMAT_TRY(remat_opt_double(req, "lns-replay", o->replay_share, 0, 1, &o->replay_share,
				   err));
	REMAT_TRY(remat_opt_int(req, "lns-replay-stall", 0, 0, 1000000000, &v, err));
	o->replay_stall = v;
	REMAT_TRY(remat_opt_int(req, "lns-threads", o->replay_threads, 1, 16, &v, err));
	o->replay_threads = (int)v;
	REMAT_TRY(remat_opt_double(req, "lns-swap", o->swap_share, 0, 1, &o->swap_share, err));
	REMAT_TRY(remat_opt_double(req, "lns-interval", o->interval_share, 0, 1,
				   &o->interval_share, err));
	return REMAT_OK;
}

/* ---- sparse points: the computes of each stage ---- */

struct pt {
	int32_t T;
	int32_t *off;          /* [T+1] */
	int32_t *c;            /* compute indices, ascending per stage */
	int64_t n, cap;
};

static void pt_release(struct pt *p)
{
	free(p->off);
	free(p->c);
	memset(p, 0, sizeof(*p));
}

static int pt_init(struct pt *p, int32_t T, struct remat_error *err)
{
	memset(p, 0, sizeof(*p));
	p->T = T;
	p->off = calloc((size_t)T + 2, sizeof(int32_t));
	p->cap = 2 * (int64_t)T + 16;
	p->c = malloc(sizeof(int32_t) * (size_t)p->cap);
	if (!p->off || !p->c) {
		pt_release(p);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
	}
	return REMAT_OK;
}

static int pt_push(struct pt *p, int32_t c, struct remat_error *err)
{
	if (p->n == p->cap) {
		int64_t nc = 2 * p->cap;
		int32_t *nv = realloc(p->c, sizeof(int32_t) * (size_t)nc);

		if (!nv)
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
		p->c = nv;
		p->cap = nc;
	}
	p->c[p->n++] = c;
	return REMAT_OK;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/*
 * Stages of a schedule of cm->g (step 1).  REMAT_ENOFIT when it does not
 * map (a node twice in a stage, first computations out of order).
 */
static int pt_from_schedule(const struct remat_i_cm *cm, const struct remat_schedule *s,
			    struct pt *p, int32_t *stamp, struct remat_error *err)
{
	int32_t next = 0, c, t;
	int64_t i, start = 0;

	for (c = 0; c < cm->T; c++)
		stamp[c] = -1;
	p->n = 0;
	p->off[0] = 0;
	for (i = 0; i < s->n && next < cm->T; i++) {
		int32_t m;

		if (s->steps[i].op != REMAT_OP_COMPUTE)
			continue;
		m = cm->mi[s->steps[i].node];
		if (m < 0)
			continue;
		if (m < cm->P)
			return REMAT_FAIL(err, REMAT_ENOFIT, "an input is computed");
		c = m - cm->P;
		if (c > next)
			return REMAT_FAIL(err, REMAT_ENOFIT, "first computations out of order");
		if (stamp[c] == next)
			return REMAT_FAIL(err, REMAT_ENOFIT, "a node computed twice in a stage");
		stamp[c] = next;
		REMAT_TRY(pt_push(p, c, err));
		if (c == next) {
			qsort(p->c + start, (size_t)(p->n - start), sizeof(int32_t), cmp_i32);
			p->off[++next] = (int32_t)p->n;
			start = p->n;
		}
	}
	if (next != cm->T)
		return REMAT_FAIL(err, REMAT_ENOFIT, "a node is never computed");
	for (t = 0; t < cm->T; t++)
		if (p->c[p->off[t + 1] - 1] != t)
			return REMAT_FAIL(err, REMAT_EINTERNAL, "LNS: stage %d lacks its frontier", t);
	return REMAT_OK;
}

/*
 * Drop computes nothing reads (least retention, backward): a compute
 * other than the frontier stays when a later compute of its stage reads
 * it or the next stage keeps it.  S (N bytes) and used (N bytes) are
 * scratch.
 */
static void pt_normalize(const struct remat_i_cm *cm, struct pt *p, uint8_t *S, uint8_t *used)
{
	int32_t t, m, k;
	int64_t i, w;

	for (m = 0; m < cm->N; m++) {
		S[m] = cm->is_out[m];
		used[m] = 0;
	}
	/* Mark drops as -1, then compact. */
	for (t = cm->T - 1; t >= 0; t--) {
		for (i = p->off[t + 1] - 1; i >= p->off[t]; i--) {
			int32_t c = p->c[i], mm = cm->P + c;

			if (c != t && !used[mm] && !S[mm]) {
				p->c[i] = -1;
				continue;
			}
			for (k = cm->in_off[mm]; k < cm->in_off[mm + 1]; k++)
				used[cm->in_idx[k]] = 1;
		}
		/* S_t = (S_{t+1} + used) - R_t; used is cleared as it goes. */
		for (i = p->off[t]; i < p->off[t + 1]; i++) {
			int32_t c = p->c[i];

			if (c < 0)
				continue;
			for (k = cm->in_off[cm->P + c]; k < cm->in_off[cm->P + c + 1]; k++) {
				int32_t u = cm->in_idx[k];

				if (used[u]) {
					S[u] = 1;
					used[u] = 0;
				}
			}
		}
		for (i = p->off[t]; i < p->off[t + 1]; i++)
			if (p->c[i] >= 0)
				S[cm->P + p->c[i]] = 0;
	}
	w = 0;
	for (t = 0; t < cm->T; t++) {
		int64_t from = p->off[t];

		p->off[t] = (int32_t)w;
		for (i = from; i < p->off[t + 1]; i++)
			if (p->c[i] >= 0)
				p->c[w++] = p->c[i];
	}
	p->off[cm->T] = (int32_t)w;
	p->n = w;
}

/* The compute-only schedule of a point, on the request's graph (map). */
static int pt_schedule(const struct remat_i_cm *cm, const struct pt *p, const int32_t *map,
		       struct remat_schedule *out, struct remat_error *err)
{
	int64_t i;

	remat_schedule_clear(out);
	REMAT_TRY(remat_schedule_reserve(out, p->n, err));
	for (i = 0; i < p->n; i++) {
		int32_t v = cm->node[cm->P + p->c[i]];

		out->steps[out->n++] = (struct remat_step){ REMAT_OP_COMPUTE, map ? map[v] : v };
	}
	return REMAT_OK;
}

/* ---- the window's sub-MILP ---- */

/*
 * A window: stages a..b-1 and the free nodes K.  Every other node keeps
 * the start's R and S in those stages (constants), and so do all nodes
 * outside them.  K's S entering a is at most the start's, entering b
 * exactly the start's.
 */
struct win {
	const struct remat_i_cm *cm;
	int32_t a, b, w, N;
	int32_t nk, *K;          /* free nodes, ascending model index */
	int32_t *kpos;           /* [N] position in K, -1 */
	uint8_t *sinc;           /* [(w+1) N] the start's S_t, t = a..b */
	uint8_t *rinc;           /* [w N] the start's R_t */
	int32_t *R, *S;          /* handles of K: [w nk], [(w+1) nk] */
	int32_t *roff;           /* [w+1] runnable computes of each stage: */
	int32_t *rm;             /*   their model indices, ascending */
	int32_t *U;              /*   their memory columns */
	int32_t *foff, *F;       /*   FREE handles of their input edges */
	int32_t nrun;
	double *cmem;            /* [w] memory of fixed nodes resident entering t */
	struct remat_i_milp lp;
};

static void win_release(struct win *W)
{
	free(W->K);
	free(W->kpos);
	free(W->sinc);
	free(W->rinc);
	free(W->R);
	free(W->S);
	free(W->roff);
	free(W->rm);
	free(W->U);
	free(W->foff);
	free(W->F);
	free(W->cmem);
	remat_i_milp_release(&W->lp);
	memset(W, 0, sizeof(*W));
}

#define SI(W, t, m) ((W)->sinc[(int64_t)((t) - (W)->a) * (W)->N + (m)])
#define RI(W, t, m) ((W)->rinc[(int64_t)((t) - (W)->a) * (W)->N + (m)])
#define WR(W, t, k) ((W)->R[(int64_t)((t) - (W)->a) * (W)->nk + (k)])
#define WS(W, t, k) ((W)->S[(int64_t)((t) - (W)->a) * (W)->nk + (k)])

/* R of model node m in stage t of the window: a column, ONE or ZERO. */
static int32_t hR(const struct win *W, int32_t t, int32_t m)
{
	int32_t k = W->kpos[m];

	if (k >= 0)
		return WR(W, t, k);
	return RI(W, t, m) ? ONE : ZERO;
}

static int32_t hS(const struct win *W, int32_t t, int32_t m)
{
	int32_t k = W->kpos[m];

	if (k >= 0)
		return WS(W, t, k);
	return SI(W, t, m) ? ONE : ZERO;
}

/* Is R[t, K[k]] a variable (0), or a constant? */
static int32_t wr(const struct win *W, int32_t t, int32_t k)
{
	const struct remat_i_cm *cm = W->cm;
	int32_t m = W->K[k], c, q;

	if (m < cm->P)
		return ZERO;
	c = m - cm->P;
	if (c > t)
		return ZERO;
	if (c == t)
		return ONE;
	if (cm->once[m] || t > cm->last_need[m])
		return ZERO;
	/* An input fixed and absent in this stage rules it out. */
	for (q = cm->in_off[m]; q < cm->in_off[m + 1]; q++) {
		int32_t i = cm->in_idx[q];

		if (W->kpos[i] < 0 && !RI(W, t, i) && !SI(W, t, i))
			return ZERO;
	}
	return 0;
}

static int32_t ws_(const struct win *W, int32_t t, int32_t k)
{
	const struct remat_i_cm *cm = W->cm;
	int32_t m = W->K[k];

	if (t == W->b)
		return SI(W, t, m) ? ONE : ZERO;
	if (m >= cm->P && t <= m - cm->P)
		return ZERO;
	if (t > cm->last_need[m])
		return ZERO;
	if (t == W->a && !SI(W, t, m))
		return ZERO;
	return 0;
}

struct row {
	double shift;
};

static void begin(struct win *W, struct row *r)
{
	r->shift = 0;
	remat_i_milp_row_begin(&W->lp);
}

static int term(struct win *W, struct row *r, int32_t h, double coef, struct remat_error *err)
{
	if (h == ONE) {
		r->shift += coef;
		return REMAT_OK;
	}
	if (h == ZERO || coef == 0)
		return REMAT_OK;
	return remat_i_milp_row_add(&W->lp, h, coef, err);
}

static int end_row(struct win *W, struct row *r, double lo, double up, struct remat_error *err)
{
	return remat_i_milp_row_end(&W->lp, lo - r->shift, up - r->shift, err);
}

static int new_bin(struct win *W, double obj, int32_t *h, struct remat_error *err)
{
	return remat_i_milp_add_col(&W->lp, 0, 1, obj, 1, h, err);
}

/*
 * The start's R and S over the window (backward from the end: the point
 * is normalized, so S is its least retention).  S is N-byte scratch.
 */
static int win_history(struct win *W, const struct pt *p, uint8_t *S, struct remat_error *err)
{
	const struct remat_i_cm *cm = W->cm;
	int32_t N = cm->N, t, m, k;
	int64_t i;

	W->N = N;
	W->sinc = calloc((size_t)(W->w + 1) * (size_t)N + 1, 1);
	W->rinc = calloc((size_t)W->w * (size_t)N + 1, 1);
	if (!W->sinc || !W->rinc)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
	for (m = 0; m < N; m++)
		S[m] = cm->is_out[m];
	for (t = cm->T; t >= W->a; t--) {
		if (t < cm->T) {
			for (i = p->off[t]; i < p->off[t + 1]; i++)
				for (k = cm->in_off[cm->P + p->c[i]]; k < cm->in_off[cm->P + p->c[i] + 1];
				     k++)
					S[cm->in_idx[k]] = 1;
			for (i = p->off[t]; i < p->off[t + 1]; i++)
				S[cm->P + p->c[i]] = 0;
		}
		if (t <= W->b)
			memcpy(W->sinc + (int64_t)(t - W->a) * N, S, (size_t)N);
		if (t < W->b)
			for (i = p->off[t]; i < p->off[t + 1]; i++)
				RI(W, t, cm->P + p->c[i]) = 1;
	}
	return REMAT_OK;
}

/* K: the seeds (model indices), the first nexp with their inputs up to depth levels. */
static int win_free_nodes(struct win *W, const int32_t *seeds, int32_t nseeds, int32_t nexp,
			  int depth, struct remat_error *err)
{
	const struct remat_i_cm *cm = W->cm;
	int32_t N = cm->N, m, k, d, lo, hi;
	int64_t i;

	W->kpos = malloc(sizeof(int32_t) * ((size_t)N + 1));
	W->K = malloc(sizeof(int32_t) * ((size_t)N + 1));
	if (!W->kpos || !W->K)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
	for (m = 0; m < N; m++)
		W->kpos[m] = -1;
	W->nk = 0;
	for (k = 0; k < nexp; k++)
		if (W->kpos[seeds[k]] < 0) {
			W->kpos[seeds[k]] = 0;
			W->K[W->nk++] = seeds[k];
		}
	lo = 0;
	for (d = 0; d < depth; d++) {
		hi = W->nk;
		for (k = lo; k < hi; k++)
			for (i = cm->in_off[W->K[k]]; i < cm->in_off[W->K[k] + 1]; i++) {
				m = cm->in_idx[i];
				if (W->kpos[m] < 0) {
					W->kpos[m] = 0;
					W->K[W->nk++] = m;
				}
			}
		lo = hi;
	}
	for (k = nexp; k < nseeds; k++)
		if (W->kpos[seeds[k]] < 0) {
			W->kpos[seeds[k]] = 0;
			W->K[W->nk++] = seeds[k];
		}
	qsort(W->K, (size_t)W->nk, sizeof(int32_t), cmp_i32);
	for (k = 0; k < W->nk; k++)
		W->kpos[W->K[k]] = k;
	return REMAT_OK;
}

/* FREE for runnable compute m's input edge to i in stage t (checkmate_model.c). */
static int build_free(struct win *W, int32_t t, int32_t m, int32_t i, int32_t *slot,
		      struct remat_error *err)
{
	const struct remat_i_cm *cm = W->cm;
	int32_t hr = hR(W, t, m), hs = hS(W, t + 1, i), h, q, nvar = 0, c = m - cm->P;
	struct row r;

	if (hr == ZERO || hs == ONE) {
		*slot = ZERO;
		return REMAT_OK;
	}
	nvar += hr != ONE;
	nvar += hs != ZERO;
	for (q = cm->use_off[i]; q < cm->use_off[i + 1]; q++) {
		int32_t j = cm->use_idx[q];

		if (j <= c || j > t)
			continue;
		h = hR(W, t, cm->P + j);
		if (h == ONE) {
			*slot = ZERO;
			return REMAT_OK;
		}
		nvar += h != ZERO;
	}
	if (nvar == 0) {
		*slot = ONE;
		return REMAT_OK;
	}
	REMAT_TRY(new_bin(W, 0, slot, err));
	if (hr != ONE) {
		begin(W, &r);
		REMAT_TRY(term(W, &r, *slot, 1, err));
		REMAT_TRY(term(W, &r, hr, -1, err));
		REMAT_TRY(end_row(W, &r, -HUGE_VAL, 0, err));
	}
	if (hs != ZERO) {
		begin(W, &r);
		REMAT_TRY(term(W, &r, *slot, 1, err));
		REMAT_TRY(term(W, &r, hs, 1, err));
		REMAT_TRY(end_row(W, &r, -HUGE_VAL, 1, err));
	}
	for (q = cm->use_off[i]; q < cm->use_off[i + 1]; q++) {
		int32_t j = cm->use_idx[q];

		if (j <= c || j > t)
			continue;
		h = hR(W, t, cm->P + j);
		if (h == ZERO)
			continue;
		begin(W, &r);
		REMAT_TRY(term(W, &r, *slot, 1, err));
		REMAT_TRY(term(W, &r, h, 1, err));
		REMAT_TRY(end_row(W, &r, -HUGE_VAL, 1, err));
	}
	return REMAT_OK;
}

static int win_build(struct win *W, const struct pt *p, struct remat_error *err)
{
	const struct remat_i_cm *cm = W->cm;
	int32_t nk = W->nk, t, k, e, q, m;
	int64_t i, cap;
	double B = (double)cm->budget;
	struct row r;

	W->R = malloc(sizeof(int32_t) * ((size_t)W->w * (size_t)nk + 1));
	W->S = malloc(sizeof(int32_t) * ((size_t)(W->w + 1) * (size_t)nk + 1));
	W->roff = malloc(sizeof(int32_t) * ((size_t)W->w + 2));
	W->cmem = calloc((size_t)W->w + 1, sizeof(double));
	cap = (int64_t)W->w * nk + (p->off[W->b] - p->off[W->a]) + 1;
	W->rm = malloc(sizeof(int32_t) * (size_t)cap);
	W->U = malloc(sizeof(int32_t) * (size_t)cap);
	W->foff = malloc(sizeof(int32_t) * ((size_t)cap + 1));
	if (!W->R || !W->S || !W->roff || !W->cmem || !W->rm || !W->U || !W->foff)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
	for (t = W->a; t < W->b; t++)
		for (k = 0; k < nk; k++) {
			int32_t h = wr(W, t, k);

			if (h == 0)
				REMAT_TRY(new_bin(W, cm->cost[W->K[k]] / cm->cost_unit, &h, err));
			WR(W, t, k) = h;
		}
	for (t = W->a; t <= W->b; t++)
		for (k = 0; k < nk; k++) {
			int32_t h = ws_(W, t, k);

			if (h == 0)
				REMAT_TRY(new_bin(W, 0, &h, err));
			WS(W, t, k) = h;
		}
	/* Runnable computes: the fixed ones of the start, and K's that may run. */
	W->nrun = 0;
	for (t = W->a; t < W->b; t++) {
		int32_t from = W->nrun;

		W->roff[t - W->a] = W->nrun;
		for (i = p->off[t]; i < p->off[t + 1]; i++)
			if (W->kpos[cm->P + p->c[i]] < 0)
				W->rm[W->nrun++] = cm->P + p->c[i];
		for (k = 0; k < nk; k++)
			if (WR(W, t, k) != ZERO)
				W->rm[W->nrun++] = W->K[k];
		qsort(W->rm + from, (size_t)(W->nrun - from), sizeof(int32_t), cmp_i32);
		for (m = 0; m < cm->N; m++)
			if (W->kpos[m] < 0 && SI(W, t, m))
				W->cmem[t - W->a] += (double)cm->mem[m];
	}
	W->roff[W->w] = W->nrun;
	W->foff[0] = 0;
	for (q = 0; q < W->nrun; q++)
		W->foff[q + 1] = W->foff[q] + (cm->in_off[W->rm[q] + 1] - cm->in_off[W->rm[q]]);
	W->F = malloc(sizeof(int32_t) * ((size_t)W->foff[W->nrun] + 1));
	if (!W->F)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
	for (t = W->a; t < W->b; t++)
		for (q = W->roff[t - W->a]; q < W->roff[t - W->a + 1]; q++)
			for (e = W->foff[q]; e < W->foff[q + 1]; e++)
				REMAT_TRY(build_free(W, t, W->rm[q],
						     cm->in_idx[cm->in_off[W->rm[q]] + (e - W->foff[q])],
						     &W->F[e], err));
	/* Dependencies: R[t,m] <= R[t,i] + S[t,i]. */
	for (t = W->a; t < W->b; t++)
		for (q = W->roff[t - W->a]; q < W->roff[t - W->a + 1]; q++) {
			int32_t hc = hR(W, t, W->rm[q]);

			for (i = cm->in_off[W->rm[q]]; i < cm->in_off[W->rm[q] + 1]; i++) {
				int32_t hri = hR(W, t, cm->in_idx[i]), hsi = hS(W, t, cm->in_idx[i]);

				if (hri == ONE || hsi == ONE)
					continue;
				begin(W, &r);
				REMAT_TRY(term(W, &r, hc, 1, err));
				REMAT_TRY(term(W, &r, hri, -1, err));
				REMAT_TRY(term(W, &r, hsi, -1, err));
				REMAT_TRY(end_row(W, &r, -HUGE_VAL, 0, err));
			}
		}
	/* K's retention: S[t+1,m] <= S[t,m] + R[t,m]; R + S <= 1. */
	for (t = W->a; t < W->b; t++)
		for (k = 0; k < nk; k++) {
			int32_t hn = WS(W, t + 1, k), hs = WS(W, t, k), hr = WR(W, t, k);

			if (!(hn == ZERO || hs == ONE || hr == ONE)) {
				begin(W, &r);
				REMAT_TRY(term(W, &r, hn, 1, err));
				REMAT_TRY(term(W, &r, hs, -1, err));
				REMAT_TRY(term(W, &r, hr, -1, err));
				REMAT_TRY(end_row(W, &r, -HUGE_VAL, 0, err));
			}
			if (hr != ZERO && hs != ZERO && (hr >= 0 || hs >= 0)) {
				begin(W, &r);
				REMAT_TRY(term(W, &r, hr, 1, err));
				REMAT_TRY(term(W, &r, hs, 1, err));
				REMAT_TRY(end_row(W, &r, -HUGE_VAL, 1, err));
			}
		}
	/* Memory through each stage, as in checkmate_model.c. */
	for (t = W->a; t < W->b; t++) {
		int32_t prev = -1;

		for (q = W->roff[t - W->a]; q < W->roff[t - W->a + 1]; q++) {
			int32_t hr = hR(W, t, W->rm[q]), hu;
			double up = B;

			m = W->rm[q];
			if (hr == ONE)
				up = B - (double)cm->ws[m];
			REMAT_TRY(remat_i_milp_add_col(&W->lp, 0, up < 0 ? 0 : up, 0, 0, &hu, err));
			if (up < 0) {
				begin(W, &r);
				REMAT_TRY(end_row(W, &r, 1, HUGE_VAL, err));
			}
			W->U[q] = hu;
			begin(W, &r);
			REMAT_TRY(term(W, &r, hu, 1, err));
			REMAT_TRY(term(W, &r, hr, -(double)cm->mem[m], err));
			if (prev < 0) {
				r.shift -= W->cmem[t - W->a];
				for (k = 0; k < nk; k++)
					REMAT_TRY(term(W, &r, WS(W, t, k), -(double)cm->mem[W->K[k]], err));
			} else {
				REMAT_TRY(term(W, &r, W->U[prev], -1, err));
				for (e = W->foff[prev]; e < W->foff[prev + 1]; e++) {
					int32_t in = cm->in_idx[cm->in_off[W->rm[prev]] + (e - W->foff[prev])];

					REMAT_TRY(term(W, &r, W->F[e], (double)cm->mem[in], err));
				}
			}
			REMAT_TRY(end_row(W, &r, 0, 0, err));
			if (hr >= 0 && cm->ws[m] > 0) {
				begin(W, &r);
				REMAT_TRY(term(W, &r, hu, 1, err));
				REMAT_TRY(term(W, &r, hr, (double)cm->ws[m], err));
				REMAT_TRY(end_row(W, &r, -HUGE_VAL, B, err));
			}
			prev = q;
		}
	}
	return REMAT_OK;
}

/* The start's window as a column vector (step 2's warm start). */
static void win_start(const struct win *W, double *x)
{
	const struct remat_i_cm *cm = W->cm;
	int32_t t, k, e, q, j;

	for (t = W->a; t <= W->b; t++)
		for (k = 0; k < W->nk; k++) {
			if (WS(W, t, k) >= 0)
				x[WS(W, t, k)] = SI(W, t, W->K[k]);
			if (t < W->b && WR(W, t, k) >= 0)
				x[WR(W, t, k)] = RI(W, t, W->K[k]);
		}
	for (t = W->a; t < W->b; t++) {
		double cur = W->cmem[t - W->a];

		for (k = 0; k < W->nk; k++)
			if (SI(W, t, W->K[k]))
				cur += (double)cm->mem[W->K[k]];
		for (q = W->roff[t - W->a]; q < W->roff[t - W->a + 1]; q++) {
			int32_t m = W->rm[q], c = m - cm->P, on = RI(W, t, m);

			for (e = W->foff[q]; e < W->foff[q + 1]; e++) {
				int32_t i = cm->in_idx[cm->in_off[m] + (e - W->foff[q])];
				int f = on && !SI(W, t + 1, i);

				for (j = cm->use_off[i]; f && j < cm->use_off[i + 1]; j++) {
					int32_t u = cm->use_idx[j];

					if (u > c && u <= t && RI(W, t, cm->P + u))
						f = 0;
				}
				if (W->F[e] >= 0)
					x[W->F[e]] = f;
			}
			if (on)
				cur += (double)cm->mem[m];
			x[W->U[q]] = cur;
			if (on)
				for (e = W->foff[q]; e < W->foff[q + 1]; e++) {
					int32_t i = cm->in_idx[cm->in_off[m] + (e - W->foff[q])];
					int32_t h = W->F[e];

					if (h == ONE || (h >= 0 && x[h] > 0.5))
						cur -= (double)cm->mem[i];
				}
		}
	}
}

/* ---- the search ---- */

struct lns {
	const struct remat_plan_request *req;
	const struct remat_i_lns_opts *o;
	struct remat_i_lns_stats *st;
	struct remat_i_cm cm;
	const int32_t *map;      /* model graph -> request graph, or NULL */
	const int32_t *inv;      /* request graph -> model graph, or NULL */
	struct pt cur, cand;
	uint8_t *S, *used;
	int32_t *stamp;          /* [T] scratch of pt_from_schedule */
	struct remat_schedule sched;
	struct remat_schedule swapped; /* the swap pass's, on the request's graph */
	double swapped_cost;     /* its cost when it is not the point, else HUGE_VAL */
	int left;                /* it left the model's order */
	double cost;             /* of cur, simulated */
	int32_t span;            /* stages of a recompute-centred window */
	int64_t peak;
	double t0;
	struct remat_schedule *out; /* the caller's: the best schedule so far */
};

/* Simulate a point's schedule on the request's graph. */
static int judge(struct lns *L, const struct pt *p, struct remat_sim_result *r,
		 struct remat_error *err)
{
	REMAT_TRY(pt_schedule(&L->cm, p, L->map, &L->sched, err));
	return remat_simulate(L->req->graph, &L->sched, L->req->budget, NULL, r, err);
}

static int pt_copy(struct pt *dst, const struct pt *src, struct remat_error *err)
{
	if (dst->cap < src->n) {
		int32_t *nv = realloc(dst->c, sizeof(int32_t) * (size_t)src->cap);

		if (!nv)
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
		dst->c = nv;
		dst->cap = src->cap;
	}
	memcpy(dst->c, src->c, sizeof(int32_t) * (size_t)src->n);
	memcpy(dst->off, src->off, sizeof(int32_t) * ((size_t)src->T + 1));
	dst->n = src->n;
	dst->T = src->T;
	return REMAT_OK;
}

/* Seeds of a window (step 2): which nodes are free. */
enum { SEED_STAGES, SEED_RECOMPUTE };

/* Free nodes a recompute-centred window seeds: recomputes (with their
 * inputs), then values resident where memory is fullest. */
#define SEED_RECOMPUTES 8
#define SEED_RESIDENT 8
#define SEED_CAP (SEED_RECOMPUTES + SEED_RESIDENT)

/*
 * The seeds: SEED_STAGES, every compute of the window; SEED_RECOMPUTE,
 * node v (recomputed in the window's last stage), the other recomputes
 * of the window, and the values resident at the window's fullest stage
 * that are cheapest to bring back per byte (they could make room for v).
 */
static int32_t win_seeds(const struct lns *L, const struct win *W, int mode, int32_t v,
			 int32_t *seeds, int32_t *nexp)
{
	const struct remat_i_cm *cm = W->cm;
	const struct pt *p = &L->cur;
	int32_t n = 0, t, m, tight = W->a, k;
	int64_t i;
	double best = -1;

	if (mode == SEED_STAGES) {
		for (i = p->off[W->a]; i < p->off[W->b]; i++)
			seeds[n++] = cm->P + p->c[i];
		*nexp = n;
		return n;
	}
	seeds[n++] = v;
	for (t = W->b - 1; t >= W->a && n < SEED_RECOMPUTES; t--)
		for (i = p->off[t]; i < p->off[t + 1] - 1 && n < SEED_RECOMPUTES; i++)
			if (cm->P + p->c[i] != v)
				seeds[n++] = cm->P + p->c[i];
	*nexp = n;
	for (t = W->a; t < W->b; t++) {
		double mem = 0;

		for (m = 0; m < cm->N; m++)
			if (SI(W, t, m))
				mem += (double)cm->mem[m];
		if (mem > best) {
			best = mem;
			tight = t;
		}
	}
	/* The cheapest per byte among those resident there, by selection. */
	for (k = n; k < SEED_CAP; k++) {
		int32_t pick = -1;
		double ratio = 0;

		for (m = cm->P; m < cm->N; m++) {
			double r;
			int32_t q;

			if (!SI(W, tight, m) || cm->once[m] || cm->mem[m] == 0)
				continue;
			for (q = 0; q < n; q++)
				if (seeds[q] == m)
					break;
			if (q < n)
				continue;
			r = cm->cost[m] / (double)cm->mem[m];
			if (pick < 0 || r < ratio) {
				pick = m;
				ratio = r;
			}
		}
		if (pick < 0)
			break;
		seeds[n++] = pick;
	}
	return n;
}

/*
 * One window: stages a..b-1 with the nodes mode and v choose free; build,
 * solve, try.  *optimal: the sub-MILP was proven; *better: the schedule
 * improved.
 */
static int one_window(struct lns *L, int32_t a, int32_t b, int mode, int32_t v, int *optimal,
		      int *better, struct remat_error *err)
{
	const struct remat_plan_request *req = L->req;
	struct win W;
	struct remat_i_milp_opts mo;
	struct remat_i_milp_result mr;
	double *x = NULL, now = remat_now(), xv;
	int32_t *seeds = NULL, nseeds, nexp, t, k;
	int64_t bad;
	int rc;

	*optimal = 0;
	*better = 0;
	memset(&W, 0, sizeof(W));
	remat_i_milp_init(&W.lp);
	remat_i_milp_result_init(&mr);
	W.cm = &L->cm;
	W.a = a;
	W.b = b;
	W.w = b - a;
	seeds = malloc(sizeof(int32_t) * ((size_t)(L->cur.off[b] - L->cur.off[a]) + SEED_CAP + 1));
	if (!seeds) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
		goto done;
	}
	rc = win_history(&W, &L->cur, L->S, err);
	if (rc)
		goto done;
	nseeds = win_seeds(L, &W, mode, v, seeds, &nexp);
	rc = win_free_nodes(&W, seeds, nseeds, nexp, L->o->depth, err);
	if (rc == REMAT_OK)
		rc = win_build(&W, &L->cur, err);
	if (rc)
		goto done;
	x = calloc((size_t)W.lp.ncols + 1, sizeof(double));
	if (!x) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
		goto done;
	}
	win_start(&W, x);
	bad = remat_i_milp_check(&W.lp, x, 1e-6, NULL);
	if (bad != -1) {
		rc = REMAT_FAIL(err, REMAT_EINTERNAL, "LNS: the start violates %s %lld of the "
				"window %d..%d", bad >= 0 ? "row" : "column",
				(long long)(bad >= 0 ? bad : -2 - bad), a, b - 1);
		goto done;
	}
	xv = remat_i_milp_value(&W.lp, x);
	if (xv <= 0) {
		*optimal = 1; /* nothing to save: no recompute among the free nodes */
		goto done;
	}
	memset(&mo, 0, sizeof(mo));
	mo.start = x;
	mo.max_nodes = L->o->window_nodes;
	/*
	 * No CglPreProcess in a window (issue 36): CBC 2.10.8 crashes in
	 * CglPreProcess::postProcess when its time limit strikes a
	 * preprocessed model solved from a MIP start (resnet18 at 70%, -t 3:
	 * 9 children killed by SIGSEGV in 6 runs; none with preprocessing
	 * off, none without the start, none without CBC's own clock).  A
	 * window is small: without preprocessing its solves are also faster
	 * (vgg-unet-train at 50%, -t 5: 19 windows instead of 9).
	 */
	mo.no_preprocess = 1;
	mo.deadline = now + L->o->window_seconds;
	if (req->deadline > 0 && req->deadline < mo.deadline)
		mo.deadline = req->deadline;
	mo.hard = req->deadline;
	rc = remat_i_milp_solve(L->o->backend, &W.lp, &mo, &mr, err);
	if (rc)
		goto done;
	L->st->windows++;
	*optimal = mr.status == REMAT_I_MILP_OPTIMAL && !mr.stopped;
	if (!mr.x || remat_i_milp_value(&W.lp, mr.x) >= xv - 1e-9 * fmax(1, fabs(xv)))
		goto done;
	/* Step 3: the window's new computes, the rest as it was. */
	L->cand.n = 0;
	for (t = 0; t < L->cm.T && rc == REMAT_OK; t++) {
		int64_t i;
		int64_t from = L->cand.n;

		L->cand.off[t] = (int32_t)L->cand.n;
		for (i = L->cur.off[t]; i < L->cur.off[t + 1] && rc == REMAT_OK; i++)
			if (t < a || t >= b || W.kpos[L->cm.P + L->cur.c[i]] < 0)
				rc = pt_push(&L->cand, L->cur.c[i], err);
		if (t < a || t >= b)
			continue;
		for (k = 0; k < W.nk && rc == REMAT_OK; k++) {
			int32_t h = WR(&W, t, k);

			if (h == ONE || (h >= 0 && mr.x[h] > 0.5))
				rc = pt_push(&L->cand, W.K[k] - L->cm.P, err);
		}
		if (rc == REMAT_OK)
			qsort(L->cand.c + from, (size_t)(L->cand.n - from), sizeof(int32_t), cmp_i32);
	}
	L->cand.off[L->cm.T] = (int32_t)L->cand.n;
	if (rc == REMAT_OK) {
		struct remat_sim_result r;

		pt_normalize(&L->cm, &L->cand, L->S, L->used);
		rc = judge(L, &L->cand, &r, err);
		if (rc == REMAT_OK && (!r.valid || !r.feasible)) {
			L->st->rejected++;
		} else if (rc == REMAT_OK && r.cost < L->cost - 1e-12 * fmax(1, L->cost)) {
			rc = pt_copy(&L->cur, &L->cand, err);
			L->cost = r.cost;
			L->peak = r.peak_mem;
			L->st->improved++;
			L->st->last_s = remat_now() - L->t0;
			*better = 1;
		}
	}
done:
	free(seeds);
	free(x);
	remat_i_milp_result_release(&mr);
	win_release(&W);
	return rc;
}

static void report(struct lns *L, int32_t a, int32_t b)
{
	struct remat_progress p = { NULL, NULL, -1, NAN, NAN, 0 };
	char phase[64];

	snprintf(phase, sizeof(phase), "lns: stages %d-%d of %d", a, b - 1, L->cm.T);
	p.planner = L->o->caller;
	p.phase = phase;
	p.fraction = L->cm.T > 0 ? (double)a / L->cm.T : -1;
	p.incumbent = L->cost;
	p.elapsed = remat_now() - L->t0;
	remat_plan_progress(L->req, &p);
}

/* Does the current point recompute anything in stages a..b-1? */
static int recomputes_in(const struct lns *L, int32_t a, int32_t b)
{
	return L->cur.off[b] - L->cur.off[a] > b - a;
}

/* Passes in a row without an improvement before the search stops. */
#define STALE_PASSES 2
/* Span of a recompute-centred window (stages): first, least, most. */
#define SPAN_FIRST 16
#define SPAN_MIN 4
#define SPAN_MAX 96

static int stop_now(const struct lns *L)
{
	return remat_plan_expired(L->req) ||
	       (L->o->max_windows > 0 && L->st->windows >= L->o->max_windows) ||
	       (L->o->target > 0 && L->cost <= L->o->target);
}

/* Is c computed in stage t of the current point? */
static int computed_in(const struct lns *L, int32_t t, int32_t c)
{
	int32_t lo = L->cur.off[t], hi = L->cur.off[t + 1] - 1;

	while (lo <= hi) {
		int32_t mid = lo + (hi - lo) / 2;

		if (L->cur.c[mid] == c)
			return 1;
		if (L->cur.c[mid] < c)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return 0;
}

/*
 * Step 4a: windows of stages sliding over the schedule; *w adapts.
 * *better: something improved.
 */
static int pass_stages(struct lns *L, int32_t *w, int *better, struct remat_error *err)
{
	int32_t T = L->cm.T, a = 0;

	*better = 0;
	if (!recomputes_in(L, 0, T)) {
		L->st->proven = 1; /* every node once: nothing costs less */
		return REMAT_OK;
	}
	while (!stop_now(L)) {
		int32_t b = a + *w > T ? T : a + *w;
		int optimal = 1, imp = 0;

		if (recomputes_in(L, a, b)) {
			report(L, a, b);
			REMAT_TRY(one_window(L, a, b, SEED_STAGES, -1, &optimal, &imp, err));
			*better |= imp;
			if (a == 0 && b == T && optimal) {
				L->st->proven = 1;
				return REMAT_OK;
			}
			/* Grow after a proof, shrink after a node or time limit. */
			if (optimal && !imp)
				*w = *w + (*w + 3) / 4;
			else if (!optimal)
				*w = *w * 2 / 3 > 2 ? *w * 2 / 3 : 2;
			if (*w > T)
				*w = T;
		}
		if (b >= T)
			break;
		a += *w / 2 > 1 ? *w / 2 : 1;
		if (a + *w > T)
			a = T - *w > 0 ? T - *w : 0;
	}
	return REMAT_OK;
}

struct event {
	double cost;
	int32_t t, m;
};

static int event_cmp(const void *x, const void *y)
{
	const struct event *a = x, *b = y;

	if (a->cost != b->cost)
		return a->cost < b->cost ? 1 : -1;
	if (a->t != b->t)
		return (a->t > b->t) - (a->t < b->t);
	return (a->m > b->m) - (a->m < b->m);
}

/*
 * Step 4b: for each recompute (costliest first), the stages from the
 * node's previous computation to this one, the node and its neighbours
 * free: can it be kept instead?
 */
static int pass_recomputes(struct lns *L, int *better, struct remat_error *err)
{
	const struct remat_i_cm *cm = &L->cm;
	struct event *ev;
	int64_t n = 0, i, j;
	int32_t t;
	int rc = REMAT_OK;

	*better = 0;
	ev = malloc(sizeof(*ev) * ((size_t)L->cur.n + 1));
	if (!ev)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
	for (t = 0; t < cm->T; t++)
		for (i = L->cur.off[t]; i < L->cur.off[t + 1] - 1; i++)
			ev[n++] = (struct event){ cm->cost[cm->P + L->cur.c[i]], t, L->cur.c[i] };
	qsort(ev, (size_t)n, sizeof(*ev), event_cmp);
	for (j = 0; j < n && rc == REMAT_OK && !stop_now(L); j++) {
		int32_t t2 = ev[j].t, c = ev[j].m, t1, a;
		int optimal, imp;

		if (!computed_in(L, t2, c))
			continue; /* an earlier window removed it */
		for (t1 = t2 - 1; t1 > c && !computed_in(L, t1, c); t1--)
			;
		a = t2 + 1 - t1 > L->span ? t2 + 1 - L->span : t1;
		report(L, a, t2 + 1);
		rc = one_window(L, a, t2 + 1, SEED_RECOMPUTE, cm->P + c, &optimal, &imp, err);
		*better |= imp;
		/* Wider after a proof, narrower after a limit. */
		if (optimal && !imp && t2 + 1 - t1 > L->span)
			L->span = L->span + (L->span + 3) / 4 > SPAN_MAX ? SPAN_MAX
				: L->span + (L->span + 3) / 4;
		else if (!optimal)
			L->span = L->span * 2 / 3 > SPAN_MIN ? L->span * 2 / 3 : SPAN_MIN;
	}
	free(ev);
	return rc;
}

/*
 * Step 4, first pass: the swap pass (swap_pass.h) on the current point,
 * for at most o->swap_share of the time left (a quarter by default).  A
 * cheaper schedule becomes the point when it maps into the model, else it
 * is kept aside (L->swapped, when the cheapest so far).  One that moved a
 * first computation out of the model's order sets *left: this model's
 * windows cannot improve it, so the search ends with it, and LNS starts
 * again from it in its own order (up to LNS_RESTARTS times).
 */
static int pass_swaps(struct lns *L, int *better, int *left, struct remat_error *err)
{
	struct remat_plan_request sub = *L->req;
	struct remat_i_swap_stats sst;
	struct remat_sim_result r;
	struct remat_schedule res;
	struct remat_error e;
	double now = remat_now();
	int64_t i;
	int rc;

	*better = 0;
	*left = 0;
	if (L->o->swap_share <= 0)
		return REMAT_OK;
	if (L->req->deadline > 0)
		sub.deadline = now + L->o->swap_share * (L->req->deadline - now);
	remat_schedule_init(&res);
	rc = pt_schedule(&L->cm, &L->cur, L->map, &L->sched, err);
	if (rc == REMAT_OK)
		rc = remat_i_swap_pass(L->req->graph, &L->sched, L->req->budget, &sub, &res, &sst,
				       err);
	if (rc || sst.cost >= L->cost - 1e-12 * fmax(1, L->cost))
		goto done;
	L->st->swaps += sst.improved;
	/* Into the model's node indices, and its stages. */
	rc = remat_schedule_copy(&L->sched, &res, err);
	if (rc)
		goto done;
	if (L->inv)
		for (i = 0; i < L->sched.n; i++)
			L->sched.steps[i].node = L->inv[L->sched.steps[i].node];
	remat_error_clear(&e);
	rc = pt_from_schedule(&L->cm, &L->sched, &L->cand, L->stamp, &e);
	if (rc == REMAT_OK) {
		pt_normalize(&L->cm, &L->cand, L->S, L->used);
		rc = judge(L, &L->cand, &r, err);
		if (rc == REMAT_OK && r.valid && r.feasible &&
		    r.cost < L->cost - 1e-12 * fmax(1, L->cost)) {
			rc = pt_copy(&L->cur, &L->cand, err);
			L->cost = r.cost;
			L->peak = r.peak_mem;
			L->st->last_s = sst.last_at - L->t0;
			*better = 1;
			goto done;
		}
	} else if (rc == REMAT_ENOFIT) {
		*left = 1; /* out of the model's order: LNS starts again in its own */
		rc = REMAT_OK;
	} else {
		*err = e;
	}
	/* Not the point (out of the order, or its stages cost more): aside. */
	if (rc == REMAT_OK && sst.cost < L->swapped_cost) {
		rc = remat_schedule_copy(&L->swapped, &res, err);
		L->swapped_cost = sst.cost;
		L->st->last_s = sst.last_at - L->t0;
	}
done:
	remat_schedule_release(&res);
	return rc;
}

static int search(struct lns *L, struct remat_error *err)
{
	int32_t T = L->cm.T, w = L->o->window > 1 ? L->o->window : 2;
	int stale = 0, b1, b2, b3, left;

	L->span = SPAN_FIRST;
	if (w > T)
		w = T;
	while (T > 0 && !stop_now(L) && !L->st->proven) {
		/* The swap pass first: it is cheap next to the windows. */
		REMAT_TRY(pass_swaps(L, &b3, &left, err));
		L->left = left;
		if (left || stop_now(L))
			break;
		REMAT_TRY(pass_stages(L, &w, &b1, err));
		if (L->st->proven || stop_now(L))
			break;
		REMAT_TRY(pass_recomputes(L, &b2, err));
		if (b1 || b2 || b3) {
			stale = 0;
		} else {
			if (++stale >= STALE_PASSES)
				break; /* the same windows would give the same answers */
			w = 2 * w > T ? T : 2 * w;
		}
	}
	return REMAT_OK;
}

/*
 * Starts costing more than this times the least cost are poor (the fast
 * planners' on a random layered DAG at 70%: +200% to +1,000%): the order
 * search keeps its whole share and also climbs from a looser budget's
 * order (replay_start()).
 */
#define LNS_POOR_START 2.0
/* A poor start's looser budget: this fraction of the no-remat peak more. */
#define LNS_LOOSER 0.05

/*
 * One more order for the order search to start from: method m (budget:
 * its opts' budget, -1 for none; deadline 0: none) into buf, appended to
 * orders when found.  Only REMAT_ENOMEM is returned; another failure
 * leaves the order out (its message in *e).
 */
static int add_order(const struct remat_graph *g, enum remat_order_method m, uint64_t seed,
		     int64_t budget, double deadline, int32_t *buf, const int32_t **orders, int *k,
		     struct remat_error *e)
{
	struct remat_order_opts oo;
	int rc;

	remat_order_opts_init(&oo);
	oo.seed = seed;
	oo.budget = budget;
	oo.deadline = deadline;
	remat_error_clear(e);
	rc = remat_order_compute(g, m, &oo, buf, NULL, e);
	if (rc == REMAT_OK)
		orders[(*k)++] = buf;
	return rc == REMAT_ENOMEM ? rc : REMAT_OK;
}

/*
 * Step 0: the order search (replay_search.c) from the cheapest replay of
 * start's first computations, the file's order, local search's and, for a
 * poor start, that of the fast planners at a looser budget, for
 * o->replay_share of the time left (without a deadline, until it
 * stalls), a quarter of that when nothing it finds beats start (unless
 * start is poor).  When its schedule is cheaper than
 * L->st->cost, it goes to rs and out, and L->st->cost falls.  order is
 * scratch (g->n entries).
 */
static int replay_start(struct lns *L, const struct remat_schedule *start, int32_t *order,
			struct remat_schedule *rs, struct remat_i_replay_search_stats *rst,
			struct remat_error *err)
{
	const struct remat_plan_request *req = L->req;
	const struct remat_graph *g = req->graph;
	struct remat_sim_result r;
	struct remat_error e;
	double deadline = 0, check = 0, now = remat_now();
	int64_t stall = L->o->replay_stall > 0 ? L->o->replay_stall : 2000 + 8 * (int64_t)g->n;
	int32_t *extra = NULL; /* local search's order, then the looser budget's */
	const int32_t *orders[4];
	int rc, k = 0, poor = L->st->cost > LNS_POOR_START * remat_i_least_cost(g);

	if (req->deadline > 0) {
		deadline = now + L->o->replay_share * (req->deadline - now);
		/*
		 * A start within LNS_POOR_START times the least cost
		 * is worth the windows' time; a poorer one (the fast
		 * planners' best on a random layered DAG at 70%: +200% to
		 * +1,000%) is not, so the search keeps its share: its
		 * climbers begin again while none beats the start
		 * (replay_search.c, step 6) when the user set a time
		 * limit: without one (auto's own 10 s for LNS) the
		 * rounds would end by the clock, and a seed must give
		 * one answer (tests/property/prop_lowest.c under ASan).
		 */
		if (!poor)
			check = now + 0.25 * (deadline - now);
	}
	/*
	 * Where to start: the start's order, the file's, and local search's
	 * (for a tenth of the search's time); the replays of orders of the
	 * same peak differ much, so the cheapest replay is the start.
	 */
	REMAT_TRY(remat_order_from_schedule(g, start, order, err));
	orders[k++] = order;
	orders[k++] = g->topo;
	extra = malloc(sizeof(int32_t) * (2 * (size_t)g->n + 1));
	if (!extra)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
	rc = add_order(g, REMAT_ORDER_LOCAL, req->seed, -1,
		       deadline > 0 ? now + 0.1 * (deadline - now) : 0, extra, orders, &k, &e);
	if (rc)
		goto done;
	/*
	 * A poor start: the order of the fast planners' schedules at a
	 * looser budget (LNS_LOOSER of the no-remat peak more; in three
	 * tenths of the search's time) is a better place to climb from than
	 * the orders above, whose replays at the budget are poor too
	 * (bench/RESULTS.md, the hard end: random-layered-n1000 at 70%).
	 */
	if (poor && deadline > 0 &&
	    (double)req->budget + LNS_LOOSER * (double)g->no_remat_peak < (double)g->no_remat_peak) {
		now = remat_now();
		rc = add_order(g, REMAT_ORDER_SCHEDULE, req->seed,
			       req->budget + (int64_t)(LNS_LOOSER * (double)g->no_remat_peak),
			       now + 0.3 * (deadline - now), extra + g->n, orders, &k, &e);
		if (rc)
			goto done;
	}
	remat_error_clear(&e);
	rc = remat_i_replay_search(req, L->o->caller, orders, k, L->o->replay_threads, 0, stall,
				   deadline,
				   L->st->cost * (1 - 1e-12), check, L->o->target,
				   poor && deadline > 0 && req->time_limit > 0, rs, rst, &e);
	L->st->replay_evals = rst->evals;
	L->st->replay_cost = rst->cost;
	if (rc == REMAT_ENOFIT) {
		rc = REMAT_OK; /* no replay fits: LNS goes on from start */
		goto done;
	}
	if (rc)
		goto done;
	/* The search simulated it; the start of LNS is judged again all the same. */
	rc = remat_simulate(g, rs, req->budget, NULL, &r, err);
	if (rc || !r.valid || !r.feasible || r.cost >= L->st->cost * (1 - 1e-12))
		goto done;
	rc = remat_schedule_copy(L->out, rs, err);
	L->st->cost = r.cost;
	L->st->last_s = rst->last_at - L->t0;
done:
	if (rc && e.code == rc)
		*err = e; /* from the order or the search (e is cleared before each) */
	free(extra);
	return rc;
}

/*
 * The swap pass on from into to, for share of the time left (1: all of
 * it).  When its schedule costs less than st->cost, st takes its cost
 * and time (t0: when the search began) and *kept is 1.  A schedule whose
 * frees matter gives the pass no start (REMAT_ENOFIT): *kept is 0.
 */
static int swap_once(const struct remat_plan_request *req, double share,
		     const struct remat_schedule *from, struct remat_schedule *to,
		     struct remat_i_lns_stats *st, double t0, int *kept, struct remat_error *err)
{
	struct remat_plan_request sub = *req;
	struct remat_i_swap_stats sst;
	struct remat_error e;
	double now = remat_now();
	int rc;

	*kept = 0;
	if (req->deadline > 0 && share < 1)
		sub.deadline = now + share * (req->deadline - now);
	remat_error_clear(&e);
	rc = remat_i_swap_pass(req->graph, from, req->budget, &sub, to, &sst, &e);
	if (rc == REMAT_ENOFIT)
		return REMAT_OK;
	if (rc) {
		*err = e;
		return rc;
	}
	st->swaps += sst.improved;
	if (sst.cost < st->cost * (1 - 1e-12)) {
		st->cost = sst.cost;
		st->last_s = sst.last_at - t0;
		*kept = 1;
	}
	return REMAT_OK;
}

/*
 * Without windows (the schedule does not map into a model, or its swaps
 * left one LNS_RESTARTS times), the swap pass on out until it stops
 * improving or the deadline: the time is the search's either way.
 */
static int swap_rest(const struct remat_plan_request *req, const struct remat_i_lns_opts *o,
		     struct remat_schedule *out, struct remat_i_lns_stats *st, double t0,
		     struct remat_error *err)
{
	struct remat_schedule from, to;
	int rc, kept = 0;

	if (o->swap_share <= 0 || remat_plan_expired(req))
		return REMAT_OK;
	remat_schedule_init(&from);
	remat_schedule_init(&to);
	rc = remat_schedule_copy(&from, out, err);
	if (rc == REMAT_OK)
		rc = swap_once(req, 1, &from, &to, st, t0, &kept, err);
	if (rc == REMAT_OK && kept)
		rc = remat_schedule_copy(out, &to, err);
	remat_schedule_release(&from);
	remat_schedule_release(&to);
	return rc;
}

/* The interval pass's largest model (interval_pass.h). */
#define INTERVAL_MAX_COLS 400000
#define INTERVAL_MAX_NNZ 8000000

/*
 * The interval pass by default: LNS_INTERVAL_SHARE of the time left when
 * a time limit leaves at least LNS_INTERVAL_AUTO_SECONDS after the order
 * search and the first swap pass.  CBC needs a minute or more on a
 * thousand-node graph (random-layered-n1000 at 70%: its root in about
 * 90 s), so shorter runs keep their time for the windows.  `-t 300` there:
 * +13.34% without the pass, +9.05% with it; on real models at `-t 120`
 * it saved up to 0.01 points and cost nothing (bench/RESULTS.md, the
 * nineteenth and twenty-second sessions).
 */
#define LNS_INTERVAL_SHARE 0.8
#define LNS_INTERVAL_AUTO_SECONDS 100.0

static double interval_share_now(const struct remat_plan_request *req,
				  const struct remat_i_lns_opts *o)
{
	if (o->interval_share >= 0)
		return o->interval_share;
	return req->deadline > 0 && req->deadline - remat_now() >= LNS_INTERVAL_AUTO_SECONDS ?
	       LNS_INTERVAL_SHARE : 0;
}

/* Times the search goes on in the order of a swap that left its model. */
#define LNS_RESTARTS 4

static int improve(const struct remat_plan_request *req, const struct remat_schedule *start,
		   const struct remat_i_lns_opts *o, struct remat_schedule *out,
		   struct remat_i_lns_stats *st, int depth, struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_i_lns_stats local;
	struct remat_i_replay_search_stats rst;
	struct remat_graph *pg = NULL;
	struct remat_schedule s2, rs, sw, iv;
	struct remat_sim_result r;
	struct remat_error e;
	struct lns L;
	int32_t *order = NULL, *inv = NULL, v, *stamp = NULL;
	int rc, same = 1, restart = 0, no_model = 0;
	int64_t i;
	double ishare;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	st->interval = -1;
	memset(&L, 0, sizeof(L));
	remat_schedule_init(&s2);
	remat_schedule_init(&rs);
	remat_schedule_init(&L.sched);
	remat_schedule_init(&L.swapped);
	remat_schedule_init(&sw);
	remat_schedule_init(&iv);
	L.swapped_cost = HUGE_VAL;
	L.req = req;
	L.o = o;
	L.st = st;
	L.t0 = remat_now();
	L.out = out;
	REMAT_TRY(remat_schedule_copy(out, start, err));
	REMAT_TRY(remat_simulate(g, start, req->budget, NULL, &r, err));
	if (!r.valid || !r.feasible)
		return REMAT_FAIL(err, REMAT_EINTERNAL, "LNS: its start is not a valid schedule "
				  "within the budget");
	st->start_cost = st->cost = r.cost;
	st->replay_cost = HUGE_VAL;
	order = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	inv = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!order || !inv) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
		goto done;
	}
	if (o->target > 0 && r.cost <= o->target) {
		rc = REMAT_OK; /* already as good as asked */
		goto done;
	}
	/* Step 0: a cheaper start from the order search, when it recomputes. */
	if (o->replay_share > 0 && r.cost > remat_i_least_cost(g) * (1 + 1e-12)) {
		rc = replay_start(&L, start, order, &rs, &rst, err);
		if (rc)
			goto done;
		if (st->cost < st->start_cost)
			start = &rs;
		if (o->target > 0 && st->cost <= o->target)
			goto done; /* out holds the search's schedule */
	}
	/*
	 * The swap pass on the start (step 4's first pass), here too: it needs
	 * no model, and the order search's schedules often do not map into one.
	 */
	if (o->swap_share > 0 && st->cost > remat_i_least_cost(g) * (1 + 1e-12)) {
		int kept;

		rc = swap_once(req, o->swap_share, start, &sw, st, L.t0, &kept, err);
		if (rc)
			goto done;
		if (kept) {
			rc = remat_schedule_copy(out, &sw, err);
			if (rc)
				goto done;
			start = &sw;
			if (o->target > 0 && st->cost <= o->target)
				goto done;
		}
	}
	/* The interval pass: hold or compute again, the whole order at once. */
	ishare = depth == 0 ? interval_share_now(req, o) : 0;
	if (ishare > 0 && !remat_plan_expired(req) &&
	    st->cost > remat_i_least_cost(g) * (1 + 1e-12)) {
		double now = remat_now(), until = 0;
		struct remat_i_interval_stats ist;
		int kept;

		if (req->deadline > 0)
			until = now + ishare * (req->deadline - now);
		rc = remat_i_interval_pass(req, start, until, INTERVAL_MAX_COLS, INTERVAL_MAX_NNZ,
					   &iv, &kept, &ist, err);
		if (rc)
			goto done;
		st->interval = kept;
		if (kept) {
			st->interval_saved = st->cost - ist.cost;
			st->cost = ist.cost;
			st->last_s = remat_now() - L.t0;
			rc = remat_schedule_copy(out, &iv, err);
			if (rc)
				goto done;
			start = &iv;
			if (o->target > 0 && st->cost <= o->target)
				goto done;
		}
	}
	/* Step 1: the order of the start's first computations. */
	rc = remat_order_from_schedule(g, start, order, err);
	if (rc)
		goto done;
	for (v = 0; v < g->n; v++)
		same &= order[v] == g->topo[v];
	if (!same) {
		rc = remat_graph_reorder(g, order, &pg, err);
		if (rc)
			goto done;
		for (v = 0; v < g->n; v++)
			inv[order[v]] = v;
		rc = remat_schedule_copy(&s2, start, err);
		if (rc)
			goto done;
		for (i = 0; i < s2.n; i++)
			s2.steps[i].node = inv[s2.steps[i].node];
		L.map = order;
		L.inv = inv;
	}
	rc = remat_i_cm_init(&L.cm, pg ? pg : g, req->budget, 0, err);
	if (rc)
		goto done;
	st->stages = L.cm.T;
	L.S = malloc((size_t)L.cm.N + 1);
	L.used = malloc((size_t)L.cm.N + 1);
	stamp = malloc(sizeof(int32_t) * ((size_t)L.cm.T + 1));
	L.stamp = stamp;
	if (!L.S || !L.used || !stamp) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for LNS");
		goto done;
	}
	rc = pt_init(&L.cur, L.cm.T, err);
	if (rc == REMAT_OK)
		rc = pt_init(&L.cand, L.cm.T, err);
	if (rc)
		goto done;
	remat_error_clear(&e);
	rc = pt_from_schedule(&L.cm, pg ? &s2 : start, &L.cur, stamp, &e);
	if (rc == REMAT_ENOFIT) {
		rc = REMAT_OK; /* does not map: no windows */
		no_model = 1;
		goto done;
	}
	if (rc) {
		*err = e;
		goto done;
	}
	pt_normalize(&L.cm, &L.cur, L.S, L.used);
	rc = judge(&L, &L.cur, &r, err);
	if (rc || !r.valid || !r.feasible || r.cost > st->cost * (1 + 1e-12)) {
		no_model = rc == REMAT_OK;
		goto done; /* over budget in the model's stage order */
	}
	L.cost = r.cost;
	L.peak = r.peak_mem;
	rc = search(&L, err);
	if (rc == REMAT_OK && L.swapped_cost < L.cost && L.swapped_cost < st->cost) {
		rc = remat_schedule_copy(out, &L.swapped, err);
		st->cost = L.swapped_cost;
		if (rc == REMAT_OK && L.left) {
			restart = depth < LNS_RESTARTS && !remat_plan_expired(req) &&
				  (o->max_windows <= 0 || st->windows < o->max_windows);
			no_model = !restart;
		}
	} else if (rc == REMAT_OK && L.cost < st->cost) {
		rc = pt_schedule(&L.cm, &L.cur, L.map, out, err);
		st->cost = L.cost;
	}
done:
	free(order);
	free(inv);
	free(stamp);
	free(L.S);
	free(L.used);
	pt_release(&L.cur);
	pt_release(&L.cand);
	remat_schedule_release(&L.sched);
	remat_schedule_release(&L.swapped);
	remat_schedule_release(&sw);
	remat_schedule_release(&iv);
	remat_schedule_release(&s2);
	remat_schedule_release(&rs);
	remat_i_cm_release(&L.cm);
	remat_graph_free(pg);
	if (restart) {
		/* Step 4's swap left the model's order: go on in its own order. */
		struct remat_i_lns_opts o2 = *o;
		struct remat_i_lns_stats st2;
		struct remat_schedule next;
		double t_sub = remat_now(); /* st2's times count from about here */

		o2.replay_share = 0;
		if (o->max_windows > 0)
			o2.max_windows = o->max_windows - st->windows; /* the caller's cap in all */
		remat_schedule_init(&next);
		rc = remat_schedule_copy(&next, out, err);
		if (rc == REMAT_OK)
			rc = improve(req, &next, &o2, out, &st2, depth + 1, err);
		if (rc == REMAT_OK) {
			st->windows += st2.windows;
			st->improved += st2.improved;
			st->rejected += st2.rejected;
			st->swaps += st2.swaps;
			st->stages = st2.stages;
			st->proven = st2.proven;
			if (st2.cost < st->cost) {
				st->cost = st2.cost;
				st->last_s = t_sub - L.t0 + st2.last_s;
			}
		}
		remat_schedule_release(&next);
	}
	if (rc == REMAT_OK && no_model)
		rc = swap_rest(req, o, out, st, L.t0, err);
	return rc;
}

int remat_i_lns_improve(const struct remat_plan_request *req, const struct remat_schedule *start,
			const struct remat_i_lns_opts *o, struct remat_schedule *out,
			struct remat_i_lns_stats *st, struct remat_error *err)
{
	return improve(req, start, o, out, st, 0, err);
}
