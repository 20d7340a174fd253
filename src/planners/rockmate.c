/*
 * rockmate.c - Rockmate: Rotor's dynamic program over the blocks of the
 * chain view, with several schedules to choose from inside each block.
 *
 * Zhao, Le Bras, Eyraud-Dubois, Beaumont, "Rockmate: an Efficient, Fast,
 * Automatic and Generic Tool for Re-materialization in PyTorch" (ICML
 * 2023), sections 3-4.
 *
 * 1. Build the chain view (src/analysis/chain.c, which sees through
 *    aliases and resident values): its stages are the blocks.  No stage,
 *    an inference graph, or more than --max-stages stages (default 200):
 *    nothing to plan here (exit 3 unless the no-remat order fits).
 * 2. Discretise the budget as rotor does (rotor.h: the slot unit, the
 *    chain's x_0, the slot chain of every stage).
 * 3. Rotor's own plans first: its table (with the held and release
 *    refinements) and its downward search over internal budgets, every
 *    plan expanded and simulated.  Rockmate's option 0 of every block is
 *    Rotor's F_all / B, so rockmate is never worse than rotor at the same
 *    slots.
 * 4. Options per block (Rockmate's H-partition and per-block solutions,
 *    simplified): the forward nodes of the block read only inside the
 *    block, by its backward among others (not outputs, not "recompute":
 *    false, not the block's output object), are ranked by what
 *    recomputing one costs (it and the block's nodes it needs that are
 *    not kept, as a softmax needs its matmul) per byte, cheapest first;
 *    option t
 *    (t = 0..--levels, default 4) does not keep the first t/levels of
 *    their bytes after the forward, and the backward recomputes each just
 *    before its first reader (with what it needs that is not resident).
 *    Each option is measured by replaying the block under the simulator's
 *    rules (remat_chain_measure_option()); options dominated in cost and
 *    every memory figure are dropped.  With --exhaustive N, every subset
 *    of the block's first N candidates is measured too, and at each level
 *    of kept bytes and of backward peak the cheapest subset within it is
 *    an option as well (2^N replays per block: on the zoo graphs it
 *    changed the plans' costs by a few tenths of a percent either way, so
 *    it is off by default).  Identical blocks (equal canonical forms:
 *    remat_i_rk_block_classes()) are recognised and their options built
 *    once: a repeat takes the first one's, node for node by position
 *    (each still measured on its own block).
 *    With --milp-levels N (default 0: off), each distinct block with
 *    something to leave out is also solved alone by Checkmate's exact
 *    MILP (block_graph(): its nodes, the values it reads as inputs, its
 *    values read outside as outputs) at N budgets from the block's lower
 *    bound up to its fast options' largest, each warm-started from the
 *    cheapest fast option within it (else from the LP's rounding), within
 *    --block-time seconds per block (all blocks at most 30% of the time
 *    left); what the answer does not keep at the start of the backward
 *    becomes an option, measured by the same replay (the MILP's own
 *    recomputation order is not kept: an option is a kept set).  With
 *    --milp-target kept (the default) the budgets bound what the block
 *    keeps from its forward to its backward, rk-Rotor's xb: a node of W
 *    bytes (more than the whole block) lives from the forward's end to a
 *    size-0 marker every backward node reads, so the budget W + x bounds
 *    the kept bytes by x and leaves the rest free; "peak" bounds the
 *    block's own peak.  On gpt2_small, resnet101 and regnet_x_3_2gf at
 *    90/70/50% they changed no plan (bench/RESULTS.md), hence off.
 * 5. rk-Rotor (rockmate.h): Rotor's recurrence, with its held variant, and
 *    the least over the options wherever a block runs F_all (or F_held)
 *    and B; backtrack at internal
 *    budgets from the top downward, expand (each block's backward with its
 *    option's recomputations), simulate, keep the cheapest schedule
 *    within budget (at most 256 plans, or until the model's cost cannot
 *    beat the best).
 *
 * Not done (see README): the paper's per-block options are the MILP's
 * schedules; here an option is a kept set whose backward recomputes each
 * dropped node before its first reader, so a MILP answer is used through
 * its kept set only, and the MILP options are off by default (step 4).
 * rk-Rotor has no release variant (Rotor's plans of step 3 have it).
 *
 * Complexity: step 3 is rotor's; step 4 is O(levels (n + e)); step 5 is
 * O(L^2 M (K + L)) for L blocks, M slots, K options per block, plus one
 * expansion and simulation per plan.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/chain.h"
#include "plan/stage_plan.h"
#include "plan/best.h"
#include "plan/checkmate_model.h"
#include "remat/sim.h"
#include "planners/rotor.h"
#include "planners/rockmate.h"

/* ---- rk-Rotor ---- */

static size_t tri(int32_t i, int32_t l)
{
	return (size_t)l * ((size_t)l + 1) / 2 + (size_t)i;
}

static int32_t max32(int32_t a, int32_t b)
{
	return a > b ? a : b;
}

void remat_i_rk_table_release(struct remat_i_rk_table *tab)
{
	int k;

	for (k = 0; k < 2; k++) {
		free(tab->t[k]);
		free(tab->ch[k]);
	}
	free(tab->held);
	memset(tab, 0, sizeof(*tab));
}

/* Slots of the outputs of stages j..l. */
static int64_t outs(const struct remat_i_rotor_chain *b, int32_t j, int32_t l)
{
	int64_t v = 0;
	int32_t k;

	for (k = j; k <= l; k++)
		v += b->po[k];
	return v;
}

/* Table k (RK_A, RK_S) at (i, l, m); INFINITY below zero slots. */
static double at(const struct remat_i_rk_table *tab, int k, int32_t i, int32_t l, int64_t m)
{
	if (m < 0)
		return INFINITY;
	if (m > tab->M)
		m = tab->M;
	return tab->t[k][tri(i, l) * ((size_t)tab->M + 1) + (size_t)m];
}

/*
 * Variant held (stage l's output resident at the start, counted in m;
 * stage l runs F_held) or not of cell (i, l) at m: the least value and
 * its choice (option k >= 0, re-run at j: -2 - j, none: -1).
 */
static double cell_value(const struct remat_i_rk_chain *ch, const struct remat_i_rk_table *tab,
			 int32_t i, int32_t l, int32_t m, int held, int32_t *choice)
{
	const struct remat_i_rotor_chain *b = ch->base;
	int32_t dl = b->d[l + 1], yl = held ? b->y[l] : 0, k, j, ng;
	int sub = held ? RK_S : RK_A;
	int64_t po = i < l ? outs(b, i + 1, l) : 0;
	double best = INFINITY, v, fws = 0;

	*choice = -1;
	for (k = ch->off[i]; k < ch->off[i + 1]; k++) {
		if (i == l) {
			if (m < max32(dl + (held ? ch->fah[k] : ch->fa[k]), ch->bp[k]))
				continue;
			v = (held ? ch->fwh[k] : ch->fw[k]) + ch->bw[k];
		} else {
			if (m < dl + yl + ch->fa[k] || m < po + ch->bp[k])
				continue;
			v = ch->fw[k] + ch->bw[k] + at(tab, sub, i + 1, l, (int64_t)m - ch->xb[k]);
		}
		if (v < best) {
			best = v;
			*choice = k;
		}
	}
	if (i < l && !b->nr[i]) {
		ng = b->fo[i];
		for (j = i + 1; j <= l; j++) {
			int32_t kk = j - 1;

			if (kk > i) {
				if (b->nr[kk])
					break;
				ng = max32(ng, b->fi[kk]);
			}
			fws += b->fwng[kk];
			if (m < dl + yl + ng)
				break;
			v = fws + at(tab, sub, j, l, (int64_t)m - b->x[j]) +
			    at(tab, RK_S, i, j - 1, (int64_t)m - outs(b, j, l));
			if (v < best) {
				best = v;
				*choice = -2 - j;
			}
		}
	}
	return best;
}

/* Fill cell (i, l) of A and S for every m. */
static void fill_cell(const struct remat_i_rk_chain *ch, struct remat_i_rk_table *tab,
		      int32_t i, int32_t l)
{
	int32_t M = tab->M, m, ca, chh = -1;
	size_t row = tri(i, l) * ((size_t)M + 1);
	int can_hold = l + 1 < ch->base->L && !ch->base->plain;

	for (m = 0; m <= M; m++) {
		double a = cell_value(ch, tab, i, l, m, 0, &ca), h = INFINITY;

		tab->t[RK_A][row + (size_t)m] = a;
		tab->ch[RK_A][row + (size_t)m] = ca;
		if (can_hold)
			h = cell_value(ch, tab, i, l, m, 1, &chh);
		/* The held variant only when strictly cheaper, as rotor.c. */
		tab->held[row + (size_t)m] = h < a;
		tab->t[RK_S][row + (size_t)m] = h < a ? h : a;
		tab->ch[RK_S][row + (size_t)m] = h < a ? chh : ca;
	}
}

int remat_i_rk_solve(const struct remat_i_rk_chain *ch, int32_t M,
		     struct remat_i_rk_table *tab, const struct remat_plan_request *req,
		     struct remat_error *err)
{
	int32_t L = ch->base->L, i, l;
	size_t cells;
	int k;

	memset(tab, 0, sizeof(*tab));
	if (L <= 0 || M < 0)
		return REMAT_FAIL(err, REMAT_EINTERNAL, "rockmate: empty chain or negative budget");
	cells = (tri(L - 1, L - 1) + 1) * ((size_t)M + 1);
	for (k = 0; k < 2; k++) {
		tab->t[k] = malloc(cells * sizeof(double));
		tab->ch[k] = malloc(cells * sizeof(int32_t));
	}
	tab->held = malloc(cells);
	if (!tab->t[0] || !tab->t[1] || !tab->ch[0] || !tab->ch[1] || !tab->held) {
		remat_i_rk_table_release(tab);
		return REMAT_FAIL(err, REMAT_ENOMEM, "rockmate: out of memory for a table of "
				  "%d blocks x %d slots", (int)L, (int)M);
	}
	tab->L = L;
	tab->M = M;
	for (l = 0; l < L; l++) {
		if (req && remat_plan_expired(req)) {
			remat_i_rk_table_release(tab);
			return REMAT_FAIL(err, REMAT_ECANCELED, "rockmate: the time limit passed "
					  "while filling the table");
		}
		for (i = l; i >= 0; i--)
			fill_cell(ch, tab, i, l);
	}
	return REMAT_OK;
}

double remat_i_rk_cost(const struct remat_i_rk_table *tab, int32_t m)
{
	if (!tab->t[RK_A] || m < 0)
		return INFINITY;
	return at(tab, RK_A, 0, tab->L - 1, m);
}

static void push(struct remat_i_rk_op *ops, int64_t *n, int32_t op, int32_t stage,
		 int32_t opt)
{
	ops[*n].op = op;
	ops[*n].stage = stage;
	ops[*n].opt = opt;
	(*n)++;
}

/* Operations of table kind's cell (i, l) at m. */
static void backtrack(const struct remat_i_rk_chain *ch, const struct remat_i_rk_table *tab,
		      int kind, int32_t i, int32_t l, int64_t m, struct remat_i_rk_op *ops,
		      int64_t *n)
{
	int32_t code, j, k;
	size_t cell;
	int held, sub;

	if (m > tab->M)
		m = tab->M;
	cell = tri(i, l) * ((size_t)tab->M + 1) + (size_t)m;
	held = kind == RK_S && tab->held[cell];
	code = tab->ch[kind][cell];
	sub = held ? RK_S : RK_A;
	if (code >= 0) {
		if (i == l) {
			push(ops, n, held ? REMAT_I_FHELD : REMAT_I_FALL, i, code);
		} else {
			push(ops, n, REMAT_I_FALL, i, code);
			backtrack(ch, tab, sub, i + 1, l, m - ch->xb[code], ops, n);
		}
		push(ops, n, REMAT_I_BWD, i, code);
		return;
	}
	j = -2 - code;
	push(ops, n, REMAT_I_FCK, i, -1);
	for (k = i + 1; k < j; k++)
		push(ops, n, REMAT_I_FNG, k, -1);
	backtrack(ch, tab, sub, j, l, m - ch->base->x[j], ops, n);
	backtrack(ch, tab, RK_S, i, j - 1, m - outs(ch->base, j, l), ops, n);
}

int64_t remat_i_rk_backtrack(const struct remat_i_rk_chain *ch,
			     const struct remat_i_rk_table *tab, int32_t m,
			     struct remat_i_rk_op *ops)
{
	int64_t n = 0;

	if (!isfinite(remat_i_rk_cost(tab, m)))
		return -1;
	backtrack(ch, tab, RK_A, 0, tab->L - 1, m, ops, &n);
	return n;
}

/* ---- the block options ---- */

struct rk_options {
	int32_t n;                    /* options in total */
	int32_t distinct;             /* distinct blocks */
	int32_t *off;                 /* [L + 1] */
	int32_t *drop_off;            /* [n + 1] dropped nodes of option k: drop[drop_off[k] ..] */
	int32_t *drop;
	int32_t drop_n, drop_cap;
	int32_t *xb, *fa, *bp, *fah;
	double *fw, *bw, *fwh;
	int32_t cap;
};

static void options_release(struct rk_options *o)
{
	free(o->off);
	free(o->drop_off);
	free(o->drop);
	free(o->xb);
	free(o->fa);
	free(o->bp);
	free(o->fah);
	free(o->fw);
	free(o->bw);
	free(o->fwh);
	memset(o, 0, sizeof(*o));
}

/* Reallocate *p (a pointer to an array of size-byte items) to cap items. */
static int grow(void *p, size_t size, int32_t cap)
{
	void **pp = p, *q = realloc(*pp, size * (size_t)cap);

	if (!q)
		return -1;
	*pp = q;
	return 0;
}

/* Room for one more option and nd more dropped nodes. */
static int options_grow(struct rk_options *o, int32_t nd)
{
	if (o->n + 1 >= o->cap) {
		int32_t cap = o->cap ? 2 * o->cap : 64;
		int32_t *a = realloc(o->drop_off, sizeof(int32_t) * ((size_t)cap + 1));

		if (!a)
			return -1;
		o->drop_off = a;
		if (grow(&o->xb, sizeof(int32_t), cap) || grow(&o->fa, sizeof(int32_t), cap) ||
		    grow(&o->bp, sizeof(int32_t), cap) || grow(&o->fw, sizeof(double), cap) ||
		    grow(&o->bw, sizeof(double), cap) || grow(&o->fah, sizeof(int32_t), cap) ||
		    grow(&o->fwh, sizeof(double), cap))
			return -1;
		o->cap = cap;
	}
	if (o->drop_n + nd > o->drop_cap) {
		int32_t cap = 2 * (o->drop_n + nd) + 64;
		int32_t *a = realloc(o->drop, sizeof(int32_t) * (size_t)cap);

		if (!a)
			return -1;
		o->drop = a;
		o->drop_cap = cap;
	}
	return 0;
}

struct rk_cand {
	double key;     /* recomputation cost per byte kept less */
	int32_t pos, v; /* topological position (ties), node */
};

/* Scratch shared by option building and expansion. */
struct rk_scratch {
	uint8_t *mark, *dropm;
	int32_t *stack, *seq, *meas, *cand;
	struct rk_cand *rank;
};

static void scratch_release(struct rk_scratch *s)
{
	free(s->mark);
	free(s->dropm);
	free(s->stack);
	free(s->seq);
	free(s->meas);
	free(s->cand);
	free(s->rank);
}

static int scratch_alloc(struct rk_scratch *s, int32_t n)
{
	int32_t i;

	memset(s, 0, sizeof(*s));
	s->mark = calloc((size_t)n + 1, 1);
	s->dropm = calloc((size_t)n + 1, 1);
	s->stack = malloc(sizeof(int32_t) * ((size_t)n + 1));
	s->seq = malloc(sizeof(int32_t) * (2 * (size_t)n + 1));
	s->meas = malloc(sizeof(int32_t) * (2 * (size_t)n + 1));
	s->cand = malloc(sizeof(int32_t) * ((size_t)n + 1));
	s->rank = malloc(sizeof(*s->rank) * ((size_t)n + 1));
	if (!s->mark || !s->dropm || !s->stack || !s->seq || !s->meas || !s->cand || !s->rank)
		return -1;
	for (i = 0; i < 2 * n; i++)
		s->meas[i] = -1;
	return 0;
}

/* Is v, a forward node of stage s, one the options may leave out? */
static int droppable(const struct remat_graph *g, const struct remat_chain *c, int32_t s,
		     int32_t v)
{
	int32_t k, bwd = 0;

	if (g->mem[v] <= 0 || !g->recompute[v] || g->is_output[v])
		return 0;
	if (remat_chain_in_exit(c, v, s))
		return 0;
	for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
		int32_t w = g->use_idx[k];

		if (c->stage_of[w] != s)
			return 0;
		bwd |= c->is_bwd[w];
	}
	return bwd;
}

/* Is v, a forward node of stage s, kept after F_all when nothing is dropped? */
static int kept0(const struct remat_graph *g, const struct remat_chain *c, int32_t s,
		 int32_t v)
{
	int32_t k;

	if (g->is_output[v])
		return 1;
	for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
		int32_t w = g->use_idx[k];

		if (c->stage_of[w] != s || c->is_bwd[w])
			return 1;
	}
	return 0;
}

/*
 * What recomputing v alone costs: v and the forward nodes of stage s it
 * needs that are not kept after the forward (a softmax needs the matmul
 * before it).  mark (zeros) and stack are scratch; mark is cleared.
 */
static double closure_cost(const struct remat_graph *g, const struct remat_chain *c,
			   int32_t s, int32_t v, uint8_t *mark, int32_t *stack, int32_t *seen)
{
	int32_t top = 0, ns = 0, k;
	double cost = 0;

	stack[top++] = v;
	mark[v] = 1;
	while (top > 0) {
		int32_t u = stack[--top];

		seen[ns++] = u;
		cost += g->cost[u];
		for (k = g->in_off[u]; k < g->in_off[u + 1]; k++) {
			int32_t x = g->in_idx[k];

			if (!mark[x] && c->stage_of[x] == s && !c->is_bwd[x] && !kept0(g, c, s, x)) {
				mark[x] = 1;
				stack[top++] = x;
			}
		}
	}
	while (ns > 0)
		mark[seen[--ns]] = 0;
	return cost;
}

/* Cheapest recomputation per byte first; ties in topological order. */
static int by_key(const void *pa, const void *pb)
{
	const struct rk_cand *a = pa, *b = pb;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->pos - b->pos;
}

/* Does option k dominate option q (no worse in cost and every figure)? */
static int dominates(const struct rk_options *o, int32_t k, int32_t q)
{
	return o->fw[k] + o->bw[k] <= o->fw[q] + o->bw[q] && o->xb[k] <= o->xb[q] &&
	       o->fa[k] <= o->fa[q] && o->bp[k] <= o->bp[q] && o->fah[k] <= o->fah[q] &&
	       o->fwh[k] <= o->fwh[q];
}

/*
 * Measure stage s with drop[0..nd) left out into *m.  sc->dropm, mark and
 * meas are returned clean.
 */
static void measure_drop(const struct remat_graph *g, const struct remat_chain *c, int32_t s,
			 const int32_t *drop, int32_t nd, struct rk_scratch *sc,
			 struct remat_stage *m)
{
	int32_t i, nseq;

	for (i = 0; i < nd; i++)
		sc->dropm[drop[i]] = 1;
	nseq = remat_chain_option_seq(g, c, s, sc->dropm, sc->mark, sc->stack, sc->seq);
	remat_chain_measure_option(g, c, s, sc->dropm, sc->seq, nseq, sc->meas, m);
	for (i = 0; i < nd; i++)
		sc->dropm[drop[i]] = 0;
}

/*
 * Add the option of stage s that leaves out drop[0..nd), unless an option
 * of s already there (from first on) dominates it; the first one is always
 * added.  -1: out of memory.
 */
static int add_option(const struct remat_graph *g, const struct remat_chain *c, int32_t s,
		      const int32_t *drop, int32_t nd, int64_t unit, int32_t cap, int32_t first,
		      struct rk_options *o, struct rk_scratch *sc)
{
	struct remat_stage m;
	int32_t k, q;

	measure_drop(g, c, s, drop, nd, sc, &m);
	if (options_grow(o, nd))
		return -1;
	k = o->n;
	o->xb[k] = remat_i_rotor_to_slots(m.xbar, unit, cap);
	o->fa[k] = remat_i_rotor_to_slots(m.xbar + m.fwd_tmp, unit, cap);
	o->bp[k] = remat_i_rotor_to_slots(m.bwd_start + m.bwd_tmp, unit, cap);
	o->fah[k] = remat_i_rotor_to_slots(m.xbar + m.fwd_tmp_h, unit, cap);
	o->fw[k] = m.fwd_cost;
	o->bw[k] = m.bwd_cost;
	o->fwh[k] = m.fwd_cost_h;
	for (q = first; q < k; q++)
		if (dominates(o, q, k))
			return 0;
	o->drop_off[k] = o->drop_n;
	if (nd > 0)
		memcpy(o->drop + o->drop_n, drop, sizeof(int32_t) * (size_t)nd);
	o->drop_n += nd;
	o->n++;
	o->drop_off[o->n] = o->drop_n;
	return 0;
}

/*
 * Step 4b: every subset of the first ne candidates (ne <= 16) measured;
 * at each of levels memory levels of the kept bytes, and of the backward
 * peak, between the full set's and the empty set's, the cheapest subset
 * within it becomes an option.  -1: out of memory.
 */
static int exhaustive_options(const struct remat_graph *g, const struct remat_chain *c,
			      int32_t s, int32_t ne, long levels, int64_t unit, int32_t cap,
			      int32_t first, struct rk_options *o, struct rk_scratch *sc)
{
	int32_t n = 1 << ne, mask, i, t, crit, nd, drop[16];
	int64_t *xb = malloc(sizeof(int64_t) * (size_t)n);
	int64_t *bp = malloc(sizeof(int64_t) * (size_t)n);
	double *cost = malloc(sizeof(double) * (size_t)n);
	int rc = 0;

	if (!xb || !bp || !cost) {
		rc = -1;
		goto done;
	}
	for (mask = 0; mask < n; mask++) {
		struct remat_stage m;

		for (i = 0, nd = 0; i < ne; i++)
			if (mask & (1 << i))
				drop[nd++] = sc->cand[i];
		measure_drop(g, c, s, drop, nd, sc, &m);
		xb[mask] = m.xbar;
		bp[mask] = m.bwd_start + m.bwd_tmp;
		cost[mask] = m.fwd_cost + m.bwd_cost;
	}
	for (crit = 0; crit < 2 && rc == 0; crit++) {
		const int64_t *f = crit ? bp : xb;
		int64_t lo = f[0], hi = f[0];

		for (mask = 1; mask < n; mask++) {
			lo = f[mask] < lo ? f[mask] : lo;
			hi = f[mask] > hi ? f[mask] : hi;
		}
		for (t = 1; t <= levels && rc == 0; t++) {
			int64_t target = hi - (int64_t)((double)(hi - lo) * t / levels);
			int32_t best = -1;

			for (mask = 1; mask < n; mask++)
				if (f[mask] <= target &&
				    (best < 0 || cost[mask] < cost[best] ||
				     (cost[mask] == cost[best] && xb[mask] + bp[mask] <
				      xb[best] + bp[best])))
					best = mask;
			if (best < 0)
				continue;
			for (i = 0, nd = 0; i < ne; i++)
				if (best & (1 << i))
					drop[nd++] = sc->cand[i];
			rc = add_option(g, c, s, drop, nd, unit, cap, first, o, sc);
		}
	}
done:
	free(xb);
	free(bp);
	free(cost);
	return rc;
}

/*
 * Step 4 for stage s: options appended to o (option 0 drops nothing):
 * prefixes of the ranking, then the exhaustive levels over the first
 * exh candidates.
 */
static int stage_options(const struct remat_graph *g, const struct remat_chain *c,
			 int32_t s, long levels, long exh, int64_t unit, int32_t cap,
			 struct rk_options *o, struct rk_scratch *sc)
{
	const struct remat_stage *st = &c->stages[s];
	int32_t nc = 0, i, t, prev = -1, first = o->n;
	int64_t total = 0, acc;

	for (i = 0; i < st->n_fwd; i++) {
		int32_t v = c->fwd[st->fwd_off + i];

		if (droppable(g, c, s, v)) {
			sc->rank[nc].key = closure_cost(g, c, s, v, sc->mark, sc->stack, sc->seq) /
					   (double)g->mem[v];
			sc->rank[nc].pos = g->topo_pos[v];
			sc->rank[nc++].v = v;
			total += g->mem[v];
		}
	}
	qsort(sc->rank, (size_t)nc, sizeof(*sc->rank), by_key);
	for (i = 0; i < nc; i++)
		sc->cand[i] = sc->rank[i].v;
	for (t = 0; t <= levels; t++) {
		int32_t nd = 0;

		/* The prefix of the ranking holding t / levels of the bytes. */
		for (acc = 0; nd < nc && acc * levels < total * t; nd++)
			acc += g->mem[sc->cand[nd]];
		if (nd == prev)
			continue;
		prev = nd;
		if (add_option(g, c, s, sc->cand, nd, unit, cap, t > 0 ? first : o->n, o, sc))
			return -1;
	}
	if (exh > 0 && nc > 1)
		return exhaustive_options(g, c, s, nc < exh ? nc : (int32_t)exh, levels, unit,
					  cap, first, o, sc);
	return 0;
}

/* ---- options from the exact MILP on the block alone ---- */

static int by_int(const void *pa, const void *pb)
{
	int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;

	return (a > b) - (a < b);
}
static void progress(const struct remat_plan_request *req, const char *phase, double f,
		     double best);

/* Largest block (forward + backward nodes) given to the MILP. */
#define RK_MILP_MAX_NODES 600

struct rk_milp {
	long levels;                  /* budgets per block; 0: no MILP options */
	double block_time;            /* seconds per block; 0: the default */
	int hold;                     /* levels of kept memory rather than of peak */
	double until;                 /* no solve past this remat_now() value; 0: none */
	const struct remat_plan_request *req;
	int32_t solved, improved;     /* MILP solves run, options they added */
};

/*
 * The block alone: stage s's forward and backward nodes (ids "n<index>",
 * added in g's topological order, so the block's order is g's), every
 * outside value they read as an input (the block input, resident values,
 * the gradient flowing in), and as outputs the nodes g reads outside the
 * block or declares outputs.  map[v] gets v's index in the block graph
 * for every v added (the caller resets it to -1 afterwards).
 */
static int block_graph(const struct remat_graph *g, const struct remat_chain *c, int32_t s,
		       int64_t hold, int32_t *map, struct rk_scratch *sc,
		       struct remat_graph **out, struct remat_error *err)
{
	static const char hold_id[] = "h", mark_id[] = "m";
	int32_t last_fwd = -1;
	int marked = 0;
	const struct remat_stage *st = &c->stages[s];
	struct remat_graph_builder *b = NULL;
	int32_t n = st->n_fwd + st->n_bwd, i, k, nl = 0, ni;
	char (*ids)[16] = NULL;
	const char **ins = NULL;
	int rc;

	*out = NULL;
	ids = malloc(sizeof(*ids) * (size_t)(g->n + 1));
	ins = malloc(sizeof(*ins) * (size_t)(g->n + 1));
	if (!ids || !ins) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	rc = remat_builder_new("rockmate block", &b, err);
	if (rc)
		goto done;
	/* The block's nodes by topological position (seq as scratch). */
	for (i = 0; i < n; i++) {
		int32_t v = i < st->n_fwd ? c->fwd[st->fwd_off + i]
			: c->bwd[st->bwd_off + i - st->n_fwd];

		sc->seq[nl++] = g->topo_pos[v];
		sc->mark[v] = 1;
	}
	qsort(sc->seq, (size_t)nl, sizeof(int32_t), by_int);
	/* The outside values read: inputs of the block graph. */
	for (i = 0; i < nl && rc == REMAT_OK; i++) {
		int32_t v = g->topo[sc->seq[i]];

		for (k = g->in_off[v]; k < g->in_off[v + 1] && rc == REMAT_OK; k++) {
			int32_t u = g->in_idx[k];
			struct remat_node_spec sp;

			if (sc->mark[u])
				continue;
			sc->mark[u] = 2;
			memset(&sp, 0, sizeof(sp));
			snprintf(ids[u], sizeof(ids[u]), "n%d", (int)u);
			sp.id = ids[u];
			sp.kind = REMAT_KIND_INPUT;
			sp.mem = g->mem[u];
			sp.cost = 0;
			rc = remat_builder_add(b, &sp, err);
		}
	}
	for (i = 0; i < nl && rc == REMAT_OK; i++) {
		int32_t v = g->topo[sc->seq[i]], out_v = g->is_output[v];
		struct remat_node_spec sp;

		memset(&sp, 0, sizeof(sp));
		ni = 0;
		if (hold > 0 && c->is_bwd[v] && last_fwd >= 0) {
			/*
			 * The hold: W bytes after the forward's last node, read
			 * by a size-0 marker that every backward node reads.
			 */
			sp.id = hold_id;
			sp.kind = REMAT_KIND_FORWARD;
			sp.mem = hold;
			sp.cost = 0;
			sp.inputs = ins;
			sp.n_inputs = 1;
			ins[0] = ids[last_fwd];
			rc = remat_builder_add(b, &sp, err);
			sp.id = mark_id;
			sp.kind = REMAT_KIND_BACKWARD;
			sp.mem = 0;
			ins[0] = hold_id;
			if (rc == REMAT_OK)
				rc = remat_builder_add(b, &sp, err);
			if (rc)
				break;
			memset(&sp, 0, sizeof(sp));
			last_fwd = -1;
			marked = 1;
		}
		if (marked && c->is_bwd[v])
			ins[ni++] = mark_id;
		if (!c->is_bwd[v])
			last_fwd = v;
		snprintf(ids[v], sizeof(ids[v]), "n%d", (int)v);
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = g->in_idx[k];

			if (sc->mark[u] == 1)
				snprintf(ids[u], sizeof(ids[u]), "n%d", (int)u);
			ins[ni++] = ids[u];
		}
		sp.id = ids[v];
		sp.kind = (enum remat_kind)g->kind[v];
		sp.mem = g->mem[v];
		sp.workspace = g->workspace[v];
		sp.cost = g->cost[v];
		sp.recompute = g->recompute[v];
		sp.inputs = ins;
		sp.n_inputs = ni;
		rc = remat_builder_add(b, &sp, err);
		for (k = g->use_off[v]; k < g->use_off[v + 1] && !out_v; k++)
			out_v = c->stage_of[g->use_idx[k]] != s;
		if (rc == REMAT_OK && out_v)
			rc = remat_builder_add_output(b, ids[v], err);
	}
	if (rc == REMAT_OK) {
		remat_builder_outputs_given(b);
		rc = remat_builder_finish(b, out, err);
		b = NULL;
	}
	for (i = 0; i < nl; i++) {
		int32_t v = g->topo[sc->seq[i]];

		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			sc->mark[g->in_idx[k]] = 0;
		sc->mark[v] = 0;
	}
	for (i = 0; rc == REMAT_OK && i < (*out)->n; i++)
		if ((*out)->id[i][0] == 'n')
			map[strtol((*out)->id[i] + 1, NULL, 10)] = i;
done:
	if (b)
		remat_builder_free(b);
	free(ids);
	free(ins);
	return rc;
}

/*
 * The block schedule of option k of stage s (in the block graph bg,
 * map: g's index to bg's): the forward in order, then the option's
 * backward sequence, frees by the liveness pass.
 */
static int option_schedule(const struct remat_graph *g, const struct remat_chain *c,
			   int32_t s, const struct rk_options *o, int32_t k,
			   const int32_t *map, const struct remat_graph *bg,
			   struct rk_scratch *sc, struct remat_schedule *tmp,
			   struct remat_schedule *out, struct remat_error *err)
{
	const struct remat_stage *st = &c->stages[s];
	int32_t i, nseq;
	int rc = REMAT_OK;

	remat_schedule_clear(tmp);
	for (i = 0; i < st->n_fwd && rc == REMAT_OK; i++)
		rc = remat_schedule_push(tmp, REMAT_OP_COMPUTE, map[c->fwd[st->fwd_off + i]], err);
	if (rc == REMAT_OK && remat_graph_find(bg, "h") >= 0)
		rc = remat_schedule_push(tmp, REMAT_OP_COMPUTE, remat_graph_find(bg, "h"), err);
	if (rc == REMAT_OK && remat_graph_find(bg, "m") >= 0)
		rc = remat_schedule_push(tmp, REMAT_OP_COMPUTE, remat_graph_find(bg, "m"), err);
	for (i = o->drop_off[k]; i < o->drop_off[k + 1]; i++)
		sc->dropm[o->drop[i]] = 1;
	nseq = remat_chain_option_seq(g, c, s, sc->dropm, sc->mark, sc->stack, sc->seq);
	for (i = o->drop_off[k]; i < o->drop_off[k + 1]; i++)
		sc->dropm[o->drop[i]] = 0;
	for (i = 0; i < nseq && rc == REMAT_OK; i++)
		rc = remat_schedule_push(tmp, REMAT_OP_COMPUTE, map[sc->seq[i]], err);
	if (rc == REMAT_OK)
		rc = remat_liveness(bg, tmp, out, err);
	return rc;
}

/*
 * The drop set a block schedule of bg implies: the droppable forward
 * nodes of stage s not resident when its first backward node runs.
 * Written to sc->cand; returns their count, -1 when out of memory.
 */
static int32_t schedule_drops(const struct remat_graph *g, const struct remat_chain *c,
			      int32_t s, const int32_t *map, const struct remat_graph *bg,
			      const struct remat_schedule *sched, struct rk_scratch *sc)
{
	const struct remat_stage *st = &c->stages[s];
	uint8_t *res = calloc((size_t)bg->n + 1, 1);   /* bg's residency */
	int64_t t;
	int32_t i, nd = 0;

	if (!res)
		return -1;

	for (t = 0; t < sched->n; t++) {
		int32_t v = sched->steps[t].node;

		if (sched->steps[t].op == REMAT_OP_COMPUTE && bg->kind[v] == REMAT_KIND_BACKWARD)
			break;
		res[v] = sched->steps[t].op == REMAT_OP_COMPUTE;
	}
	for (i = 0; i < st->n_fwd; i++) {
		int32_t v = c->fwd[st->fwd_off + i];

		if (droppable(g, c, s, v) && !res[map[v]])
			sc->cand[nd++] = v;
	}
	free(res);
	return nd;
}

/*
 * Checkmate's MILP on the block graph sub->graph at sub->budget, as
 * remat_i_checkmate_improve() runs it, from the incumbent (may be NULL
 * or over the budget) or else from the rounding of its LP relaxation
 * (half of the solve's time at most), so that levels below every fast
 * option start from a schedule too.  REMAT_ENOFIT: nothing found.
 */
static int block_solve(const struct remat_plan_request *sub,
		       const struct remat_schedule *incumbent, struct remat_schedule *out,
		       struct remat_error *err)
{
	double now = remat_now();

	return remat_i_checkmate_improve_lp(sub, incumbent, now + 0.5 * (sub->deadline - now),
					    out, err);
}

/*
 * Step 4c for stage s, whose fast options are o->off[s] .. o->n - 1:
 * the block alone (block_graph()) solved by Checkmate's MILP at
 * mp->levels budgets evenly spaced between the least and the largest
 * block peak of those options, each warm-started from the cheapest
 * option that fits it; every MILP answer's kept set becomes an option
 * (measured like the others; dominated ones are not added).  A block the
 * MILP cannot take (too large, out of time, no answer) keeps its fast
 * options.  map: g->n entries of -1, returned so.
 */
static int milp_options(const struct remat_graph *g, const struct remat_chain *c, int32_t s,
			struct rk_milp *mp, int64_t unit, int32_t cap, struct rk_options *o,
			struct rk_scratch *sc, int32_t *map, struct remat_error *err)
{
	const struct remat_stage *st = &c->stages[s];
	struct remat_graph *bg = NULL;
	struct remat_schedule tmp, *sch = NULL, res;
	int64_t *peak = NULL, lo = -1, hi = -1, floor_b, hold;
	double *cost = NULL, per;
	int32_t first = o->off[s], nk = o->n - first, k, i, t;
	int rc;

	if (mp->levels <= 0 || st->n_fwd + st->n_bwd > RK_MILP_MAX_NODES || nk <= 0 ||
	    remat_plan_expired(mp->req) || (mp->until > 0 && remat_now() >= mp->until))
		return REMAT_OK;
	for (i = 0; i < st->n_fwd && !droppable(g, c, s, c->fwd[st->fwd_off + i]); i++)
		;
	if (i == st->n_fwd)
		return REMAT_OK;   /* nothing it may leave out: one option only */
	remat_schedule_init(&tmp);
	remat_schedule_init(&res);
	progress(mp->req, "milp", (double)s / c->n_stages, NAN);
	hold = 0;
	if (mp->hold)
		for (i = 0; i < st->n_fwd + st->n_bwd; i++) {
			int32_t v = i < st->n_fwd ? c->fwd[st->fwd_off + i]
				: c->bwd[st->bwd_off + i - st->n_fwd];

			hold += g->mem[v];
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
				if (c->stage_of[g->in_idx[k]] != s)
					hold += g->mem[g->in_idx[k]];
		}
	rc = block_graph(g, c, s, hold, map, sc, &bg, err);
	if (rc == REMAT_ENOMEM)
		goto done;
	if (rc) {
		rc = REMAT_OK;   /* not a graph of its own: no MILP options */
		goto done;
	}
	sch = calloc((size_t)nk, sizeof(*sch));
	peak = malloc(sizeof(int64_t) * (size_t)nk);
	cost = malloc(sizeof(double) * (size_t)nk);
	if (!sch || !peak || !cost) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	for (k = 0; k < nk && rc == REMAT_OK; k++) {
		struct remat_sim_result r;

		remat_schedule_init(&sch[k]);
		rc = option_schedule(g, c, s, o, first + k, map, bg, sc, &tmp, &sch[k], err);
		if (rc == REMAT_OK)
			rc = remat_simulate(bg, &sch[k], -1, NULL, &r, err);
		if (rc)
			break;
		peak[k] = r.valid ? r.peak_mem : -1;
		cost[k] = r.cost;
		if (r.valid && (lo < 0 || r.peak_mem < lo))
			lo = r.peak_mem;
		if (r.valid && r.peak_mem > hi)
			hi = r.peak_mem;
	}
	if (rc || lo < 0)
		goto done;
	floor_b = bg->min_peak_lower_bound < lo ? bg->min_peak_lower_bound : lo;
	per = (mp->block_time > 0 ? mp->block_time : 1.0) / (double)mp->levels;
	for (t = 0; t < mp->levels && rc == REMAT_OK; t++) {
		struct remat_plan_request sub;
		struct remat_plan_report rep;
		int64_t b = floor_b + (hi - floor_b) * t / mp->levels;
		int32_t best = -1, nd;
		int sr;

		if (remat_plan_expired(mp->req))
			break;
		for (k = 0; k < nk; k++)
			if (peak[k] >= 0 && peak[k] <= b && (best < 0 || cost[k] < cost[best]))
				best = k;
		memset(&sub, 0, sizeof(sub));
		remat_plan_report_init(&rep);
		sub.graph = bg;
		sub.budget = b;
		sub.time_limit = per;
		sub.deadline = remat_now() + per;
		if (mp->until > 0 && sub.deadline > mp->until)
			sub.deadline = mp->until;
		if (mp->req->deadline > 0 && sub.deadline > mp->req->deadline)
			sub.deadline = mp->req->deadline;
		if (sub.deadline <= remat_now())
			break;
		sub.stop = mp->req->stop;
		sub.seed = mp->req->seed;
		sub.report = &rep;
		sr = block_solve(&sub, best >= 0 ? &sch[best] : NULL, &res, err);
		mp->solved++;
		if (sr == REMAT_ENOMEM || sr == REMAT_EINTERNAL) {
			rc = sr;   /* out of memory, or a bug: not to be hidden */
			break;
		}
		if (sr)
			continue;   /* no answer in time: the fast options stand */
		nd = schedule_drops(g, c, s, map, bg, &res, sc);
		if (nd < 0) {
			rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
			break;
		}
		i = o->n;
		rc = add_option(g, c, s, sc->cand, nd, unit, cap, first, o, sc);
		mp->improved += o->n > i;
	}
done:
	for (i = 0; bg && i < bg->n; i++)
		if (bg->id[i][0] == 'n')
			map[strtol(bg->id[i] + 1, NULL, 10)] = -1;
	for (k = 0; sch && k < nk; k++)
		remat_schedule_release(&sch[k]);
	free(sch);
	free(peak);
	free(cost);
	remat_schedule_release(&tmp);
	remat_schedule_release(&res);
	remat_graph_free(bg);
	return rc;
}

/* ---- identical blocks ---- */

struct sig {
	int64_t *v;
	int64_t n, cap;
	uint64_t hash;
};

static int sig_push(struct sig *s, int64_t x)
{
	if (s->n == s->cap) {
		int64_t cap = s->cap ? 2 * s->cap : 64;
		int64_t *v = realloc(s->v, sizeof(int64_t) * (size_t)cap);

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

/*
 * The canonical form of stage s: its sizes at the boundaries, then every
 * node of its lists in order (kind, size, cost, workspace, flags), each
 * input as a position in the lists, the stage input, or an outside value
 * (kind, size, static, earlier or later stage), and the readers outside
 * the stage.  Two stages with equal forms are measured alike and get the
 * same options.  pos: g->n entries of -1, returned so.  -1: out of memory.
 */
static int block_signature(const struct remat_graph *g, const struct remat_chain *c,
			   int32_t s, int32_t *pos, struct sig *out)
{
	const struct remat_stage *st = &c->stages[s];
	int32_t n = st->n_fwd + st->n_bwd, i, k;
	int rc = 0;

	out->n = 0;
	for (i = 0; i < n; i++)
		pos[i < st->n_fwd ? c->fwd[st->fwd_off + i] : c->bwd[st->bwd_off + i - st->n_fwd]] = i;
	rc |= sig_push(out, st->n_fwd) | sig_push(out, st->n_bwd) | sig_push(out, st->x) |
	      sig_push(out, st->y) | sig_push(out, c->grad_at[s]) |
	      sig_push(out, c->grad_at[s + 1]) | sig_push(out, st->exit >= 0 ? pos[st->exit] : -1);
	for (i = 0; i < n && !rc; i++) {
		int32_t v = i < st->n_fwd ? c->fwd[st->fwd_off + i]
			: c->bwd[st->bwd_off + i - st->n_fwd];
		int64_t cost;
		int32_t later_fwd = 0, other_bwd = 0;

		memcpy(&cost, &g->cost[v], sizeof(cost));
		rc |= sig_push(out, g->kind[v]) | sig_push(out, g->mem[v]) | sig_push(out, cost) |
		      sig_push(out, g->workspace[v]) | sig_push(out, g->recompute[v]) |
		      sig_push(out, g->is_output[v]) | sig_push(out, c->alias_of[v] == v) |
		      sig_push(out, remat_chain_in_exit(c, v, s)) |
		      sig_push(out, c->passing && c->passing[c->alias_of[v]]) |
		      sig_push(out, g->in_off[v + 1] - g->in_off[v]);
		for (k = g->in_off[v]; k < g->in_off[v + 1] && !rc; k++) {
			int32_t u = g->in_idx[k], su = c->stage_of[u];

			if (pos[u] >= 0)
				rc |= sig_push(out, 1) | sig_push(out, pos[u]);
			else if (remat_chain_in_exit(c, u, s - 1))
				rc |= sig_push(out, 2) | sig_push(out, u == st->entry);
			else
				rc |= sig_push(out, 3) | sig_push(out, g->kind[u]) |
				      sig_push(out, g->mem[u]) | sig_push(out, c->is_static[u]) |
				      sig_push(out, su < 0 ? 9 : su < s ? -1 : 1);
		}
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t w = g->use_idx[k];

			if (pos[w] >= 0)
				continue;
			if (c->is_bwd[w])
				other_bwd++;
			else
				later_fwd++;
		}
		rc |= sig_push(out, later_fwd) | sig_push(out, other_bwd);
	}
	for (i = 0; i < n; i++)
		pos[i < st->n_fwd ? c->fwd[st->fwd_off + i] : c->bwd[st->bwd_off + i - st->n_fwd]] = -1;
	out->hash = 1469598103934665603ull;
	for (i = 0; i < out->n; i++)
		out->hash = (out->hash ^ (uint64_t)out->v[i]) * 1099511628211ull;
	return rc ? -1 : 0;
}

int32_t remat_i_rk_block_classes(const struct remat_graph *g, const struct remat_chain *c,
				 int32_t *cls)
{
	int32_t L = c->n_stages, s, r, distinct = 0, i;
	struct sig *sg = calloc((size_t)L + 1, sizeof(*sg));
	int32_t *pos = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	int rc = 0;

	if (!sg || !pos) {
		rc = -1;
		goto done;
	}
	for (i = 0; i < g->n; i++)
		pos[i] = -1;
	for (s = 0; s < L && !rc; s++) {
		rc = block_signature(g, c, s, pos, &sg[s]);
		cls[s] = s;
		for (r = 0; r < s && !rc; r++)
			if (cls[r] == r && sg[r].hash == sg[s].hash && sg[r].n == sg[s].n &&
			    memcmp(sg[r].v, sg[s].v, sizeof(int64_t) * (size_t)sg[s].n) == 0) {
				cls[s] = r;
				break;
			}
		distinct += cls[s] == s;
	}
done:
	for (s = 0; sg && s < L; s++)
		free(sg[s].v);
	free(sg);
	free(pos);
	return rc ? -1 : distinct;
}

/*
 * Stage s is identical to stage r < s, whose options are built: the same
 * options, each node taken at the same position of s's forward list.
 */
static int copy_options(const struct remat_graph *g, const struct remat_chain *c, int32_t s,
			int32_t r, int64_t unit, int32_t cap, struct rk_options *o,
			struct rk_scratch *sc)
{
	const struct remat_stage *sr = &c->stages[r], *ss = &c->stages[s];
	int32_t k, i, p, first = o->n;

	for (k = o->off[r]; k < o->off[r + 1]; k++) {
		int32_t nd = o->drop_off[k + 1] - o->drop_off[k];

		for (i = 0; i < nd; i++) {
			int32_t v = o->drop[o->drop_off[k] + i];

			for (p = 0; p < sr->n_fwd && c->fwd[sr->fwd_off + p] != v; p++)
				;
			sc->cand[i] = c->fwd[ss->fwd_off + p];
		}
		if (add_option(g, c, s, sc->cand, nd, unit, cap, k == o->off[r] ? o->n : first,
			       o, sc))
			return -1;
	}
	return 0;
}

static int build_options(const struct remat_graph *g, const struct remat_chain *c,
			 long levels, long exh, struct rk_milp *mp, int64_t unit, int32_t cap,
			 struct rk_options *o, struct rk_scratch *sc, struct remat_error *err)
{
	int32_t s, L = c->n_stages, *cls, *map, i;
	int bad = 0, rc = REMAT_OK;

	memset(o, 0, sizeof(*o));
	o->off = malloc(sizeof(int32_t) * ((size_t)L + 1));
	cls = malloc(sizeof(int32_t) * ((size_t)L + 1));
	map = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!o->off || !cls || !map || options_grow(o, 0)) {
		free(cls);
		free(map);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	for (i = 0; i < g->n; i++)
		map[i] = -1;
	o->drop_off[0] = 0;
	o->distinct = remat_i_rk_block_classes(g, c, cls);
	bad = o->distinct < 0;
	for (s = 0; s < L && !bad && rc == REMAT_OK; s++) {
		o->off[s] = o->n;
		if (cls[s] != s) {
			bad = copy_options(g, c, s, cls[s], unit, cap, o, sc);
		} else {
			bad = stage_options(g, c, s, levels, exh, unit, cap, o, sc);
			if (!bad)
				rc = milp_options(g, c, s, mp, unit, cap, o, sc, map, err);
		}
		o->off[s + 1] = o->n;
	}
	free(cls);
	free(map);
	if (rc)
		return rc;
	if (bad)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	return REMAT_OK;
}

/* ---- expansion: stage_plan.c's expander, with each block's option ---- */

/*
 * Expand rk operations into a compute-only schedule: F_all, F_ck and F_ng
 * as in stage_plan.c; B(i) with option k runs the option's backward
 * sequence (recomputations included).  The liveness pass derives frees.
 */
static int rk_expand(const struct remat_graph *g, const struct remat_chain *c,
		     const struct rk_options *o, const struct remat_i_rk_op *ops, int64_t nops,
		     struct rk_scratch *sc, struct remat_schedule *out, struct remat_error *err)
{
	struct remat_i_expander x;
	int64_t t;
	int32_t i;
	int rc = REMAT_OK;

	REMAT_TRY(remat_i_expander_init(&x, g, out, err));
	for (t = 0; t < nops && rc == REMAT_OK; t++) {
		int32_t k = ops[t].opt, nseq;

		if (ops[t].op != REMAT_I_BWD) {
			rc = remat_i_expander_forward(&x, c, ops[t].stage, ops[t].op, err);
			continue;
		}
		for (i = o->drop_off[k]; i < o->drop_off[k + 1]; i++)
			sc->dropm[o->drop[i]] = 1;
		nseq = remat_chain_option_seq(g, c, ops[t].stage, sc->dropm, sc->mark, sc->stack,
					      sc->seq);
		for (i = o->drop_off[k]; i < o->drop_off[k + 1]; i++)
			sc->dropm[o->drop[i]] = 0;
		for (i = 0; i < nseq && rc == REMAT_OK; i++)
			rc = remat_i_expander_emit(&x, sc->seq[i], err);
	}
	return remat_i_expander_finish(&x, rc, err);
}

/* ---- the planner ---- */

static const struct remat_planner_option rockmate_options[] = {
	{ "levels", "N", "memory levels of each block's options: option t keeps all but "
	  "t/N of what it may recompute (default 4)" },
	{ "exhaustive", "N", "also try every subset of a block's N cheapest "
	  "recomputations (at most 16), keeping the cheapest at each level (default 0: off)" },
	{ "milp-levels", "N", "also solve each distinct block alone by Checkmate's MILP at N "
	  "memory levels, each answer's kept set an option (default 0: off)" },
	{ "milp-target", "peak|kept", "what the MILP levels bound: the block's peak, or what "
	  "it keeps from its forward to its backward (default kept)" },
	{ "block-time", "S", "seconds of MILP per distinct block (default 1, and all blocks "
	  "together at most 30% of the time left)" },
	{ "slots", "N", "memory slots the budget is cut into (default 500)" },
	{ "max-stages", "N", "largest number of blocks planned (default 200)" },
	{ NULL, NULL, NULL }
};

static void progress(const struct remat_plan_request *req, const char *phase, double f,
		     double best)
{
	struct remat_progress pr = { "rockmate", NULL, -1, NAN, NAN, 0 };

	pr.phase = phase;
	pr.fraction = f;
	pr.incumbent = best;
	remat_plan_progress(req, &pr);
}

/* Step 3: Rotor's plans, as rotor.c searches them.  *tried counts plans. */
static int rotor_plans(struct remat_i_chain_run *run, const struct remat_i_rotor_chain *ch,
		       int32_t Mtab, int *tried, struct remat_error *err)
{
	struct remat_i_rotor_table tab;
	struct remat_i_cops ops, prev;
	int32_t m;
	int rc;

	remat_i_cops_init(&ops);
	remat_i_cops_init(&prev);
	rc = remat_i_rotor_solve(ch, Mtab, &tab, run->req, err);
	if (rc == REMAT_ECANCELED)
		return REMAT_OK;
	if (rc)
		return rc;
	for (m = Mtab; m >= 0 && rc == REMAT_OK; m--) {
		double model = remat_i_rotor_cost(&tab, m);
		struct remat_i_cops sw;

		if (!isfinite(model) || *tried >= 256 ||
		    (run->best.have && model > run->best.res.cost * (1 + 1e-12)) ||
		    (*tried > 0 && remat_plan_expired(run->req)))
			break;
		ops.n = 0;
		rc = remat_i_rotor_backtrack(ch, &tab, m, &ops, err);
		if (rc || (*tried > 0 && remat_i_cops_equal(&ops, &prev)))
			continue;
		rc = remat_i_chain_run_offer(run, &ops, NULL, err);
		sw = prev;
		prev = ops;
		ops = sw;
		(*tried)++;
	}
	remat_i_rotor_table_release(&tab);
	remat_i_cops_release(&ops);
	remat_i_cops_release(&prev);
	return rc;
}

static int same_ops(const struct remat_i_rk_op *a, int64_t na, const struct remat_i_rk_op *b,
		    int64_t nb)
{
	return na == nb && (na == 0 || memcmp(a, b, sizeof(*a) * (size_t)na) == 0);
}

/* Step 5: rk-Rotor's plans.  *tried counts plans, *won those kept. */
static int rk_plans(struct remat_i_chain_run *run, const struct remat_i_rk_chain *rk,
		    const struct rk_options *o, struct rk_scratch *sc, int32_t Mtab,
		    int *tried, int *won, struct remat_error *err)
{
	const struct remat_graph *g = run->req->graph;
	struct remat_i_rk_table tab;
	struct remat_i_rk_op *ops = NULL, *prev = NULL, *sw;
	int64_t L = rk->base->L, cap = 4 * L * L + 4 * L + 8, n, np = -1;
	int32_t m;
	int rc, n_rk = 0;

	rc = remat_i_rk_solve(rk, Mtab, &tab, run->req, err);
	if (rc == REMAT_ECANCELED)
		return REMAT_OK;
	if (rc)
		return rc;
	ops = malloc(sizeof(*ops) * (size_t)cap);
	prev = malloc(sizeof(*prev) * (size_t)cap);
	if (!ops || !prev) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	for (m = Mtab; m >= 0 && rc == REMAT_OK; m--) {
		double model = remat_i_rk_cost(&tab, m);
		struct remat_sim_result res;
		int kept = 0;

		if (!isfinite(model) || n_rk >= 256 ||
		    (run->best.have && model > run->best.res.cost * (1 + 1e-12)) ||
		    remat_plan_expired(run->req))
			break;
		n = remat_i_rk_backtrack(rk, &tab, m, ops);
		if (n < 0 || same_ops(ops, n, prev, np))
			continue;
		rc = rk_expand(g, run->chain, o, ops, n, sc, &run->tmp, err);
		if (rc == REMAT_OK)
			rc = remat_i_best_offer(&run->best, "rockmate", g, run->req->budget,
						&run->tmp, &res, &kept, err);
		if (rc)
			break;
		run->offered++;
		n_rk++;
		*won += kept;
		sw = prev;
		prev = ops;
		ops = sw;
		np = n;
		if ((n_rk & 15) == 0)
			progress(run->req, "search", (double)(Mtab - m) / (Mtab + 1),
				 run->best.have ? run->best.res.cost : NAN);
	}
	*tried += n_rk;
done:
	free(ops);
	free(prev);
	remat_i_rk_table_release(&tab);
	return rc;
}

static int rockmate_plan_view(const struct remat_plan_request *req, struct remat_schedule *out,
			 struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_i_chain_run run;
	const struct remat_chain *c;
	struct remat_i_rotor_chain ch;
	struct remat_i_rk_chain rk;
	struct rk_options o;
	struct rk_scratch sc;
	int32_t *gs = NULL, L, k;
	long slots, max_stages, levels, exh;
	struct rk_milp mp;
	struct remat_i_rotor_levels lv = { 0, 0, 0, 0, 0 };
	int rc, tried_rotor = 0, tried_rk = 0, won_rk = 0;

	memset(&ch, 0, sizeof(ch));
	memset(&o, 0, sizeof(o));
	memset(&sc, 0, sizeof(sc));
	memset(&run, 0, sizeof(run));
	rc = remat_opt_int(req, "slots", 500, 1, 1000000, &slots, err);
	if (rc == REMAT_OK)
		rc = remat_opt_int(req, "max-stages", 200, 1, 100000, &max_stages, err);
	if (rc == REMAT_OK)
		rc = remat_opt_int(req, "levels", 4, 1, 64, &levels, err);
	if (rc == REMAT_OK)
		rc = remat_opt_int(req, "exhaustive", 0, 0, 16, &exh, err);
	memset(&mp, 0, sizeof(mp));
	mp.req = req;
	if (rc == REMAT_OK)
		rc = remat_opt_int(req, "milp-levels", 0, 0, 64, &mp.levels, err);
	if (rc == REMAT_OK) {
		const char *tg = remat_opt_get(req, "milp-target");

		if (tg && strcmp(tg, "peak") != 0 && strcmp(tg, "kept") != 0)
			rc = REMAT_FAIL(err, REMAT_EUSAGE, "option '--milp-target': expected "
					"'peak' or 'kept', got '%s'", tg);
		mp.hold = !tg || strcmp(tg, "kept") == 0;
	}
	if (rc == REMAT_OK)
		rc = remat_opt_double(req, "block-time", 0, 0, 1e6, &mp.block_time, err);
	if (rc)
		return rc;
	rc = remat_i_chain_run_start(&run, req, "rockmate", err);
	if (rc || !run.chain)
		goto done;
	c = run.chain;
	L = c->n_stages;
	if (L > max_stages) {
		if (req->report)
			snprintf(req->report->note, sizeof(req->report->note),
				 "%d blocks, more than --max-stages %ld: not planned", (int)L,
				 max_stages);
		goto done;
	}

	/* Step 2: rotor's discretisation, one group per stage. */
	if (!remat_i_rotor_levels(g, c, req->budget, 1, slots, &lv))
		goto done;
	gs = malloc(sizeof(int32_t) * ((size_t)L + 1));
	if (!gs) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	for (k = 0; k <= L; k++)
		gs[k] = k;
	rc = remat_i_rotor_build_slot_chain(g, c, gs, L, lv.x0, lv.unit, lv.Mtab + 1, &ch, err);
	if (rc)
		goto done;

	/* Step 3: Rotor's plans. */
	progress(req, "rotor", 0, NAN);
	rc = rotor_plans(&run, &ch, lv.Mtab, &tried_rotor, err);
	if (rc)
		goto done;

	/* Step 4: the options of every block. */
	progress(req, "options", 0, run.best.have ? run.best.res.cost : NAN);
	if (scratch_alloc(&sc, g->n)) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	if (req->deadline > 0 && mp.block_time <= 0)
		mp.until = remat_now() + 0.3 * fmax(req->deadline - remat_now(), 0);
	rc = build_options(g, c, levels, exh, &mp, lv.unit, lv.Mtab + 1, &o, &sc, err);
	if (rc)
		goto done;

	/* Step 5: rk-Rotor. */
	progress(req, "solve", 0, run.best.have ? run.best.res.cost : NAN);
	rk.base = &ch;
	rk.off = o.off;
	rk.xb = o.xb;
	rk.fa = o.fa;
	rk.bp = o.bp;
	rk.fah = o.fah;
	rk.fw = o.fw;
	rk.bw = o.bw;
	rk.fwh = o.fwh;
	rc = rk_plans(&run, &rk, &o, &sc, lv.Mtab, &tried_rk, &won_rk, err);
	if (rc)
		goto done;
	if (req->report)
		snprintf(req->report->note, sizeof(req->report->note),
			 "%d blocks (%d distinct), %d options (%d from %d MILP solves), %d slots "
			 "of %lld bytes; %d rotor plans, %d rk-Rotor plans simulated (%d "
			 "improved the best)", (int)L, (int)o.distinct, (int)o.n,
			 (int)mp.improved, (int)mp.solved,
			 (int)lv.M, (long long)lv.unit, tried_rotor, tried_rk, won_rk);
done:
	free(gs);
	options_release(&o);
	scratch_release(&sc);
	remat_i_rotor_chain_release(&ch);
	return remat_i_chain_run_finish(&run, rc, out, err);
}

static int rockmate_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		struct remat_error *err)
{
	return remat_i_chain_views(req, "rockmate", rockmate_plan_view, out, err);
}

const struct remat_planner remat_i_planner_rockmate = {
	.name = "rockmate",
	.summary = "Rockmate (Zhao et al. 2023): rk-Rotor over the chain view's blocks, "
		   "several schedules per block",
	.flags = REMAT_PLANNER_AUTO,
	.options = rockmate_options,
	.plan = rockmate_plan,
};
