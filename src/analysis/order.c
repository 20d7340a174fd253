/*
 * order.c - topological orders with a low no-remat peak (remat/order.h):
 * the peak of an order, the greedy list scheduler, the local search, the
 * order of a schedule's first computations, and the graph listed in an
 * order.  The 'schedule' and 'best' methods run planners and live in the
 * plan layer (src/plan/order_pick.c).
 *
 * The memory of an order, step by step.  seq[0..L-1] are the non-input
 * nodes in the order.  Every value u has a last user lu[u]: the user
 * latest in seq; none (LU_KEEP) for an output, which stays; u itself for
 * a non-input nobody reads (freed right after it runs); LU_GONE for an
 * input nobody reads (dropped before the first step).  fmem[w] is the
 * memory freed right after w runs (the values whose last user is w), and
 *
 *     cross[0]   = inputs that are read or are outputs
 *     prof[k]    = cross[k] + mem(seq[k]) + workspace(seq[k])
 *     cross[k+1] = cross[k] + mem(seq[k]) - fmem[seq[k]]
 *
 * which is exactly what the simulator does with the compute-only
 * schedule seq (remat_order_peak() is tested against it).  The peak is
 * the largest prof[k].
 *
 * Greedy (Sethi-style list scheduling): among the ready nodes pick the
 * best by one of four keys, ties to the file's order: (1) net memory
 * after it runs (its output, unless nobody reads it, minus the inputs it
 * reads last), then memory while it runs; (2) memory while it runs, then
 * net; (3) memory it frees, most first, then its own size; (4) the node
 * whose latest input was computed most recently (depth first), then net.
 * O(L x ready x degree) each.
 *
 * Local search: a move takes node v from position i to j inside its
 * window (after its latest input, before its earliest user).  Only steps
 * lo..hi = min(i,j)..max(i,j) change: cross[lo] and cross[hi+1] are the
 * same before and after (the same nodes ran before them), and the last
 * users change only for v's inputs.  A move is evaluated by walking
 * lo..hi with a running total (O(hi - lo + degree^2)), and the peak
 * outside lo..hi comes from a segment tree of prof.  The objective is
 * (peak, excess): excess = sum over steps of max(0, prof - level) with
 * level just under the peak, so that moves lowering the crowded stretches
 * count before the peak itself drops.  Moves that are no worse are kept
 * (the search walks plateaus).  Nodes are drawn by a seeded splitmix64,
 * half of them around the peak's step.
 */
#include <stdlib.h>
#include <string.h>

#include "remat/order.h"
#include "core/rand.h"
#include "remat/planner.h"
#include "analysis/order_basic.h"

#define LU_KEEP (-1)
#define LU_GONE (-2)

static const char *const method_names[] = { "file", "greedy", "schedule", "local", "best",
					    "budget" };

const char *remat_order_method_name(enum remat_order_method m)
{
	if ((int)m < 0 || (int)m >= (int)(sizeof(method_names) / sizeof(method_names[0])))
		return NULL;
	return method_names[m];
}

int remat_order_method_parse(const char *s)
{
	int i;

	for (i = 0; i < (int)(sizeof(method_names) / sizeof(method_names[0])); i++)
		if (strcmp(s, method_names[i]) == 0)
			return i;
	return -1;
}

void remat_order_opts_init(struct remat_order_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->budget = -1;
}

int remat_order_is_topological(const struct remat_graph *g, const int32_t *order)
{
	int32_t *pos = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	int32_t i, k, ok = 1;

	if (!pos)
		return -1;
	for (i = 0; i < g->n; i++)
		pos[i] = -1;
	for (i = 0; i < g->n && ok; i++) {
		if (order[i] < 0 || order[i] >= g->n || pos[order[i]] >= 0)
			ok = 0;
		else
			pos[order[i]] = i;
	}
	for (i = 0; i < g->n && ok; i++)
		for (k = g->in_off[i]; k < g->in_off[i + 1]; k++)
			if (pos[g->in_idx[k]] > pos[i])
				ok = 0;
	free(pos);
	return ok;
}

/* ---- the memory of an order ---- */

struct ord {
	const struct remat_graph *g;
	int32_t L;          /* non-input nodes */
	int32_t *seq;       /* [L] */
	int32_t *pos;       /* [n] position in seq, -1 for inputs */
	int32_t *lu;        /* [n] last user, LU_KEEP or LU_GONE */
	int64_t *fmem;      /* [n] memory freed right after the node runs */
	int64_t *cross;     /* [L+1] */
	int64_t *prof;      /* [L] */
	/* local search only */
	int64_t *tree;      /* [2 * size] max of prof over segments */
	int32_t size;
	int64_t *adj;       /* [n] scratch: changes to fmem during an evaluation */
	int32_t *touched;   /* [n] */
	int64_t level;      /* excess is memory above this */
	int64_t excess;
	int64_t target;     /* > 0: the level is fixed here, and excess comes first */
};

static void ord_release(struct ord *o)
{
	free(o->seq);
	free(o->pos);
	free(o->lu);
	free(o->fmem);
	free(o->cross);
	free(o->prof);
	free(o->tree);
	free(o->adj);
	free(o->touched);
	memset(o, 0, sizeof(*o));
}

static int ord_alloc(struct ord *o, const struct remat_graph *g, struct remat_error *err)
{
	size_t n = (size_t)g->n + 1;

	memset(o, 0, sizeof(*o));
	o->g = g;
	o->L = g->n - g->n_inputs;
	o->seq = malloc(sizeof(int32_t) * n);
	o->pos = malloc(sizeof(int32_t) * n);
	o->lu = malloc(sizeof(int32_t) * n);
	o->fmem = malloc(sizeof(int64_t) * n);
	o->cross = malloc(sizeof(int64_t) * (n + 1));
	o->prof = malloc(sizeof(int64_t) * n);
	if (!o->seq || !o->pos || !o->lu || !o->fmem || !o->cross || !o->prof) {
		ord_release(o);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for an order");
	}
	return REMAT_OK;
}

/* Last users, freed memory, cross and prof from seq (pos set). */
static void ord_eval(struct ord *o)
{
	const struct remat_graph *g = o->g;
	int32_t v, k;

	for (v = 0; v < g->n; v++) {
		int32_t best = -1;

		o->fmem[v] = 0;
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t x = g->use_idx[k];

			if (best < 0 || o->pos[x] > o->pos[best])
				best = x;
		}
		if (g->is_output[v])
			o->lu[v] = LU_KEEP;
		else if (best >= 0)
			o->lu[v] = best;
		else
			o->lu[v] = g->kind[v] == REMAT_KIND_INPUT ? LU_GONE : v;
	}
	o->cross[0] = 0;
	for (v = 0; v < g->n; v++) {
		if (o->lu[v] >= 0)
			o->fmem[o->lu[v]] += g->mem[v];
		if (g->kind[v] == REMAT_KIND_INPUT && o->lu[v] != LU_GONE)
			o->cross[0] += g->mem[v];
	}
	for (k = 0; k < o->L; k++) {
		int32_t w = o->seq[k];

		o->prof[k] = o->cross[k] + g->mem[w] + g->workspace[w];
		o->cross[k + 1] = o->cross[k] + g->mem[w] - o->fmem[w];
	}
}

/* seq and pos from an order of every node. */
static void ord_set(struct ord *o, const int32_t *order)
{
	const struct remat_graph *g = o->g;
	int32_t i, L = 0;

	for (i = 0; i < g->n; i++) {
		int32_t v = order[i];

		if (g->kind[v] == REMAT_KIND_INPUT) {
			o->pos[v] = -1;
		} else {
			o->pos[v] = L;
			o->seq[L++] = v;
		}
	}
}

static int64_t ord_peak(const struct ord *o)
{
	int64_t p = o->cross[0];
	int32_t k;

	/* As the simulator: with no compute, the peak is what is resident. */
	for (k = 0; k < o->L; k++)
		if (k == 0 || o->prof[k] > p)
			p = o->prof[k];
	return p;
}

/* Inputs first (file order), then seq. */
static void ord_write(const struct ord *o, int32_t *order)
{
	const struct remat_graph *g = o->g;
	int32_t i, m = 0;

	for (i = 0; i < g->n; i++)
		if (g->kind[i] == REMAT_KIND_INPUT)
			order[m++] = i;
	memcpy(order + m, o->seq, sizeof(int32_t) * (size_t)o->L);
}

int remat_order_peak(const struct remat_graph *g, const int32_t *order, int64_t *peak,
		     struct remat_error *err)
{
	struct ord o;

	REMAT_TRY(ord_alloc(&o, g, err));
	ord_set(&o, order);
	ord_eval(&o);
	*peak = ord_peak(&o);
	ord_release(&o);
	return REMAT_OK;
}

/* ---- greedy list scheduling ---- */

enum { GREEDY_NET, GREEDY_DURING, GREEDY_FREES, GREEDY_DEPTH, GREEDY_VARIANTS };

struct key {
	int64_t a, b;
	int32_t tie;
};

static int key_less(const struct key *x, const struct key *y)
{
	if (x->a != y->a)
		return x->a < y->a;
	if (x->b != y->b)
		return x->b < y->b;
	return x->tie < y->tie;
}

/*
 * One greedy order into o->seq (and o->pos).  rem[u]: users of u not yet
 * placed; ready holds the nodes whose inputs are all placed.
 */
static int greedy_run(struct ord *o, int variant, double deadline, struct remat_error *err)
{
	const struct remat_graph *g = o->g;
	int32_t *rem = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	int32_t *need = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	int32_t *ready = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	int32_t nready = 0, placed = 0, v, k, i;
	int64_t cur = 0;

	if (!rem || !need || !ready) {
		free(rem);
		free(need);
		free(ready);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for an order");
	}
	for (v = 0; v < g->n; v++) {
		rem[v] = g->use_off[v + 1] - g->use_off[v];
		need[v] = 0;
		o->pos[v] = -1;
		if (g->kind[v] == REMAT_KIND_INPUT) {
			if (rem[v] > 0 || g->is_output[v])
				cur += g->mem[v];
			continue;
		}
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (g->kind[g->in_idx[k]] != REMAT_KIND_INPUT)
				need[v]++;
		if (need[v] == 0)
			ready[nready++] = v;
	}
	while (placed < o->L) {
		struct key best = { 0, 0, 0 }, kk;
		int32_t bi = -1;

		if (deadline > 0 && (placed & 255) == 255 && remat_now() >= deadline)
			variant = GREEDY_NET; /* finish quickly: no change in cost per step */
		for (i = 0; i < nready; i++) {
			int64_t freed = 0, keep, during, latest = -1;

			v = ready[i];
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
				int32_t u = g->in_idx[k];

				if (rem[u] == 1 && !g->is_output[u])
					freed += g->mem[u];
				if (o->pos[u] > latest)
					latest = o->pos[u];
			}
			keep = (g->use_off[v + 1] > g->use_off[v] || g->is_output[v]) ? g->mem[v] : 0;
			during = cur + g->mem[v] + g->workspace[v];
			kk.tie = g->topo_pos[v];
			switch (variant) {
			case GREEDY_NET:
				kk.a = keep - freed;
				kk.b = during;
				break;
			case GREEDY_DURING:
				kk.a = during;
				kk.b = keep - freed;
				break;
			case GREEDY_FREES:
				kk.a = -freed;
				kk.b = keep;
				break;
			default:
				kk.a = -latest;
				kk.b = keep - freed;
				break;
			}
			if (bi < 0 || key_less(&kk, &best)) {
				best = kk;
				bi = i;
			}
		}
		v = ready[bi];
		ready[bi] = ready[--nready];
		o->pos[v] = placed;
		o->seq[placed++] = v;
		cur += g->mem[v];
		if (g->use_off[v + 1] == g->use_off[v] && !g->is_output[v])
			cur -= g->mem[v];
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = g->in_idx[k];

			if (--rem[u] == 0 && !g->is_output[u])
				cur -= g->mem[u];
		}
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t x = g->use_idx[k];

			if (--need[x] == 0)
				ready[nready++] = x;
		}
	}
	free(rem);
	free(need);
	free(ready);
	return REMAT_OK;
}

/* The best greedy variant (or the file's order when none is lower). */
static int order_greedy(const struct remat_graph *g, double deadline, int32_t *order,
			int64_t *peak, struct remat_error *err)
{
	struct ord o;
	int64_t p;
	int variant, rc = REMAT_OK;

	REMAT_TRY(ord_alloc(&o, g, err));
	ord_set(&o, g->topo);
	ord_eval(&o);
	*peak = ord_peak(&o);
	ord_write(&o, order);
	for (variant = 0; variant < GREEDY_VARIANTS && rc == REMAT_OK; variant++) {
		if (variant > 0 && deadline > 0 && remat_now() >= deadline)
			break;
		rc = greedy_run(&o, variant, deadline, err);
		if (rc)
			break;
		ord_eval(&o);
		p = ord_peak(&o);
		if (p < *peak) {
			*peak = p;
			ord_write(&o, order);
		}
	}
	ord_release(&o);
	return rc;
}

/* ---- local search ---- */

static void tree_set(struct ord *o, int32_t k, int64_t v)
{
	int32_t i = k + o->size;

	o->tree[i] = v;
	for (i >>= 1; i >= 1; i >>= 1)
		o->tree[i] = o->tree[2 * i] > o->tree[2 * i + 1] ? o->tree[2 * i] : o->tree[2 * i + 1];
}

/* Largest prof over [lo, hi]; INT64_MIN when empty. */
static int64_t tree_max(const struct ord *o, int32_t lo, int32_t hi)
{
	int64_t m = INT64_MIN;
	int32_t l = lo + o->size, r = hi + o->size + 1;

	for (; l < r; l >>= 1, r >>= 1) {
		if (l & 1) {
			if (o->tree[l] > m)
				m = o->tree[l];
			l++;
		}
		if (r & 1) {
			r--;
			if (o->tree[r] > m)
				m = o->tree[r];
		}
	}
	return m;
}

/* Position of a largest prof. */
static int32_t tree_argmax(const struct ord *o)
{
	int32_t i = 1;

	while (i < o->size)
		i = o->tree[2 * i] >= o->tree[2 * i + 1] ? 2 * i : 2 * i + 1;
	return i - o->size;
}

static int64_t excess_of(int64_t p, int64_t level)
{
	return p > level ? p - level : 0;
}

/* The level for the excess: 1/64 of the peak under it. */
static void rebase(struct ord *o, int64_t peak)
{
	int32_t k;

	o->level = o->target > 0 ? o->target : peak - (peak / 64 > 1 ? peak / 64 : 1);
	o->excess = 0;
	for (k = 0; k < o->L; k++)
		o->excess += excess_of(o->prof[k], o->level);
}

/* Rebuild the segment tree from prof. */
static void tree_build(struct ord *o)
{
	int32_t k;

	for (k = 0; k < 2 * o->size; k++)
		o->tree[k] = INT64_MIN;
	for (k = 0; k < o->L; k++)
		o->tree[o->size + k] = o->prof[k];
	for (k = o->size - 1; k >= 1; k--)
		o->tree[k] = o->tree[2 * k] > o->tree[2 * k + 1] ? o->tree[2 * k] : o->tree[2 * k + 1];
}

static int ls_alloc(struct ord *o, struct remat_error *err)
{
	o->size = 1;
	while (o->size < o->L)
		o->size <<= 1;
	o->tree = malloc(sizeof(int64_t) * 2 * (size_t)o->size);
	o->adj = calloc((size_t)o->g->n + 1, sizeof(int64_t));
	o->touched = malloc(sizeof(int32_t) * ((size_t)o->g->n + 1));
	if (!o->tree || !o->adj || !o->touched)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for an order");
	tree_build(o);
	return REMAT_OK;
}

/* Position of node x after v moves from i to j. */
static int32_t moved_pos(const struct ord *o, int32_t x, int32_t v, int32_t i, int32_t j)
{
	int32_t p = o->pos[x];

	if (x == v)
		return j;
	if (j < i && p >= j && p < i)
		return p + 1;
	if (j > i && p > i && p <= j)
		return p - 1;
	return p;
}

/* Node at position k after v moves from i to j. */
static int32_t moved_at(const struct ord *o, int32_t k, int32_t v, int32_t i, int32_t j)
{
	if (k == j)
		return v;
	if (j < i && k > j && k <= i)
		return o->seq[k - 1];
	if (j > i && k >= i && k < j)
		return o->seq[k + 1];
	return o->seq[k];
}

/*
 * Evaluate (apply: also carry out) moving v to j: the new peak of the
 * steps between and the new total excess.  Last users of v's inputs are
 * recomputed; changes to fmem go to o->adj (reset unless applied).
 */
static void move(struct ord *o, int32_t v, int32_t j, int apply, int64_t *range_peak,
		 int64_t *new_excess)
{
	const struct remat_graph *g = o->g;
	int32_t i = o->pos[v], lo = i < j ? i : j, hi = i < j ? j : i, k, q, nt = 0;
	int64_t cur, peak = INT64_MIN, ex = o->excess;

	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
		int32_t u = g->in_idx[k], best = -1, bp = -1;

		if (o->lu[u] < 0)
			continue; /* an output: never freed */
		for (q = g->use_off[u]; q < g->use_off[u + 1]; q++) {
			int32_t x = g->use_idx[q], p = moved_pos(o, x, v, i, j);

			if (p > bp) {
				bp = p;
				best = x;
			}
		}
		if (best != o->lu[u]) {
			o->adj[o->lu[u]] -= g->mem[u];
			o->adj[best] += g->mem[u];
			o->touched[nt++] = o->lu[u];
			o->touched[nt++] = best;
			if (apply)
				o->lu[u] = best;
		}
	}
	cur = o->cross[lo];
	for (k = lo; k <= hi; k++) {
		int32_t w = moved_at(o, k, v, i, j);
		int64_t during = cur + g->mem[w] + g->workspace[w];

		if (during > peak)
			peak = during;
		ex += excess_of(during, o->level) - excess_of(o->prof[k], o->level);
		if (apply) {
			o->prof[k] = during;
			o->cross[k] = cur;
		}
		cur += g->mem[w] - o->fmem[w] - o->adj[w];
	}
	if (apply) {
		for (k = 0; k < nt; k++) {
			o->fmem[o->touched[k]] += o->adj[o->touched[k]];
			o->adj[o->touched[k]] = 0;
		}
		if (j < i) {
			memmove(o->seq + j + 1, o->seq + j, sizeof(int32_t) * (size_t)(i - j));
		} else {
			memmove(o->seq + i, o->seq + i + 1, sizeof(int32_t) * (size_t)(j - i));
		}
		o->seq[j] = v;
		for (k = lo; k <= hi; k++) {
			o->pos[o->seq[k]] = k;
			tree_set(o, k, o->prof[k]);
		}
		o->excess = ex;
	} else {
		for (k = 0; k < nt; k++)
			o->adj[o->touched[k]] = 0;
	}
	*range_peak = peak;
	*new_excess = ex;
}

/* Default moves: a thousand per node, at most five million. */
static int64_t default_moves(int32_t L)
{
	int64_t m = 1000 * (int64_t)L;

	return m > 5000000 ? 5000000 : m;
}

/* A random node (half the time one near the peak's step) and a place for it. */
static int pick_move(struct ord *o, uint64_t *rng, int near_peak, int32_t *vout, int32_t *jout)
{
	const struct remat_graph *g = o->g;
	int32_t v, i, lo = 0, hi = o->L - 1, j, k;

	if (!near_peak) {
		i = (int32_t)remat_i_rand_below(rng, o->L);
	} else {
		int32_t c = tree_argmax(o), w = 16;

		i = c - w + (int32_t)remat_i_rand_below(rng, 2 * w + 1);
		if (i < 0)
			i = 0;
		if (i >= o->L)
			i = o->L - 1;
	}
	v = o->seq[i];
	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
		if (o->pos[g->in_idx[k]] + 1 > lo)
			lo = o->pos[g->in_idx[k]] + 1;
	for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
		if (o->pos[g->use_idx[k]] - 1 < hi)
			hi = o->pos[g->use_idx[k]] - 1;
	if (hi <= lo)
		return 0;
	j = lo + (int32_t)remat_i_rand_below(rng, hi - lo);
	if (j >= i)
		j++; /* never i itself */
	*vout = v;
	*jout = j;
	return 1;
}

/*
 * Iterated local search: moves that are no worse are kept; after `stall`
 * moves without a strict improvement the search goes back to the best
 * order seen and kicks it with `kick` random moves.
 */
static int local_search(struct ord *o, const struct remat_order_opts *opts,
			struct remat_error *err)
{
	uint64_t rng = opts->seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	int64_t moves = opts->max_moves > 0 ? opts->max_moves : default_moves(o->L), t;
	int64_t peak, best_peak, stall, since = 0, best_ex;
	int32_t *best = NULL, kick, r;

	if (o->L < 2)
		return REMAT_OK;
	REMAT_TRY(ls_alloc(o, err));
	best = malloc(sizeof(int32_t) * (size_t)o->L);
	if (!best)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for an order");
	memcpy(best, o->seq, sizeof(int32_t) * (size_t)o->L);
	o->target = opts->target;
	peak = best_peak = tree_max(o, 0, o->L - 1);
	rebase(o, peak);
	best_ex = o->excess;
	/* Tuned on the random layered graphs (bench/results/moccasin.md, Orders). */
	stall = 1000 + (int64_t)o->L;
	kick = 10 + o->L / 5 < 300 ? 10 + o->L / 5 : 300;
	for (t = 0; t < moves; t++) {
		int32_t v, j;
		int64_t rp, ex, np;

		if ((t & 1023) == 1023 && opts->deadline > 0 && remat_now() >= opts->deadline)
			break;
		/* An order that fits the budget needs nothing more from the search. */
		if (opts->budget > 0 && (o->target > 0 ? best_ex == 0 : best_peak <= opts->budget))
			break;
		if (since >= stall) {
			/* Back to the best, then a kick. */
			memcpy(o->seq, best, sizeof(int32_t) * (size_t)o->L);
			for (j = 0; j < o->L; j++)
				o->pos[o->seq[j]] = j;
			ord_eval(o);
			tree_build(o);
			rebase(o, best_peak);
			for (r = 0; r < kick; r++)
				if (pick_move(o, &rng, 0, &v, &j))
					move(o, v, j, 1, &rp, &ex);
			peak = tree_max(o, 0, o->L - 1);
			rebase(o, peak);
			since = 0;
		}
		since++;
		if (!pick_move(o, &rng, t & 1, &v, &j))
			continue;
		move(o, v, j, 0, &rp, &ex);
		np = rp;
		{
			int32_t i = o->pos[v], a = i < j ? i : j, b = i < j ? j : i;
			int64_t left = a > 0 ? tree_max(o, 0, a - 1) : INT64_MIN;
			int64_t right = b < o->L - 1 ? tree_max(o, b + 1, o->L - 1) : INT64_MIN;

			if (left > np)
				np = left;
			if (right > np)
				np = right;
		}
		if (o->target > 0) {
			/* (excess over the target, peak) */
			if (ex > o->excess || (ex == o->excess && np > peak))
				continue;
			if (ex < o->excess || np < peak)
				since = 0;
			move(o, v, j, 1, &rp, &ex);
			peak = np;
			if (ex < best_ex || (ex == best_ex && peak < best_peak)) {
				best_ex = ex;
				best_peak = peak;
				memcpy(best, o->seq, sizeof(int32_t) * (size_t)o->L);
			}
			continue;
		}
		if (np > peak || (np == peak && ex > o->excess))
			continue;
		if (np < peak || ex < o->excess)
			since = 0;
		move(o, v, j, 1, &rp, &ex);
		if (np < peak) {
			peak = np;
			rebase(o, peak);
		}
		if (peak < best_peak) {
			best_peak = peak;
			memcpy(best, o->seq, sizeof(int32_t) * (size_t)o->L);
		}
	}
	memcpy(o->seq, best, sizeof(int32_t) * (size_t)o->L);
	for (t = 0; t < o->L; t++)
		o->pos[o->seq[t]] = (int32_t)t;
	free(best);
	return REMAT_OK;
}

int remat_i_order_local_from(const struct remat_graph *g, const struct remat_order_opts *opts,
			     int32_t *order, int64_t *peak, struct remat_error *err)
{
	struct ord o;
	int rc;

	int64_t ex0 = 0, ex1 = 0;
	int32_t k;

	REMAT_TRY(ord_alloc(&o, g, err));
	ord_set(&o, order);
	ord_eval(&o);
	for (k = 0; k < o.L; k++)
		ex0 += opts->target > 0 ? excess_of(o.prof[k], opts->target) : 0;
	rc = local_search(&o, opts, err);
	if (rc == REMAT_OK) {
		/* Re-derive everything from scratch: the figures are exact. */
		ord_eval(&o);
		for (k = 0; k < o.L; k++)
			ex1 += opts->target > 0 ? excess_of(o.prof[k], opts->target) : 0;
		if (ex1 < ex0 || (ex1 == ex0 && ord_peak(&o) < *peak)) {
			*peak = ord_peak(&o);
			ord_write(&o, order);
		}
	}
	ord_release(&o);
	return rc;
}

int remat_i_order_basic(const struct remat_graph *g, enum remat_order_method m,
			const struct remat_order_opts *opts, int32_t *order, int64_t *peak,
			struct remat_error *err)
{
	switch (m) {
	case REMAT_ORDER_GREEDY:
		return order_greedy(g, opts->deadline, order, peak, err);
	case REMAT_ORDER_LOCAL:
		/* From the better of the file's order and greedy's. */
		REMAT_TRY(order_greedy(g, opts->deadline, order, peak, err));
		return remat_i_order_local_from(g, opts, order, peak, err);
	default:
		memcpy(order, g->topo, sizeof(int32_t) * (size_t)g->n);
		*peak = g->no_remat_peak;
		return REMAT_OK;
	}
}

/* ---- orders from schedules, reordered graphs ---- */

struct keyed {
	int64_t key;
	int32_t tie, node;
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->tie > y->tie) - (x->tie < y->tie);
}

int remat_order_from_schedule(const struct remat_graph *g, const struct remat_schedule *s,
			      int32_t *order, struct remat_error *err)
{
	int64_t *key = malloc(sizeof(int64_t) * ((size_t)g->n + 1));
	struct keyed *kv = malloc(sizeof(struct keyed) * ((size_t)g->n + 1));
	int64_t i, step = 0;
	int32_t v, k, n = 0;

	if (!key || !kv) {
		free(key);
		free(kv);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for an order");
	}
	for (v = 0; v < g->n; v++)
		key[v] = -1;
	/* Computed nodes: twice their first compute's rank (even keys). */
	for (i = 0; i < s->n; i++) {
		v = s->steps[i].node;
		if (s->steps[i].op != REMAT_OP_COMPUTE || v < 0 || v >= g->n ||
		    g->kind[v] == REMAT_KIND_INPUT || key[v] >= 0)
			continue;
		key[v] = 2 * (++step);
	}
	/* The rest right after their latest input (odd keys), inputs at 0. */
	for (i = 0; i < g->n; i++) {
		v = g->topo[i];
		if (g->kind[v] == REMAT_KIND_INPUT) {
			key[v] = 0;
			continue;
		}
		if (key[v] >= 0)
			continue;
		key[v] = 1;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (key[g->in_idx[k]] + 1 > key[v])
				key[v] = key[g->in_idx[k]] + 1;
	}
	for (v = 0; v < g->n; v++)
		kv[n++] = (struct keyed){ key[v], g->topo_pos[v], v };
	qsort(kv, (size_t)n, sizeof(*kv), keyed_cmp);
	for (k = 0; k < n; k++)
		order[k] = kv[k].node;
	free(key);
	free(kv);
	return REMAT_OK;
}

int remat_graph_reorder(const struct remat_graph *g, const int32_t *order,
			struct remat_graph **out, struct remat_error *err)
{
	struct remat_graph_builder *b = NULL;
	const char **ins = NULL;
	int32_t i, k;
	int rc, topo;

	*out = NULL;
	topo = remat_order_is_topological(g, order);
	if (topo < 0)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	if (!topo)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: the order is not a topological order "
				  "of the graph's nodes", g->source);
	ins = malloc(sizeof(char *) * ((size_t)g->n_edges + 1));
	if (!ins)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	rc = remat_builder_new(g->source, &b, err);
	if (rc == REMAT_OK)
		rc = remat_builder_set_name(b, g->name, err);
	if (rc == REMAT_OK)
		rc = remat_builder_set_cost_unit(b, g->cost_unit, err);
	if (rc == REMAT_OK)
		remat_builder_set_fixed_bytes(b, g->fixed_bytes);
	for (i = 0; i < g->n && rc == REMAT_OK; i++) {
		int32_t v = order[i];
		struct remat_node_spec sp;

		memset(&sp, 0, sizeof(sp));
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			ins[k - g->in_off[v]] = g->id[g->in_idx[k]];
		sp.id = g->id[v];
		sp.kind = (enum remat_kind)g->kind[v];
		sp.mem = g->mem[v];
		sp.workspace = g->workspace[v];
		sp.cost = g->cost[v];
		sp.recompute = g->recompute[v];
		sp.label = g->label[v];
		sp.grad_of = g->grad_of[v] >= 0 ? g->id[g->grad_of[v]] : NULL;
		sp.inputs = ins;
		sp.n_inputs = g->in_off[v + 1] - g->in_off[v];
		rc = remat_builder_add(b, &sp, err);
	}
	for (i = 0; i < g->n_outputs && rc == REMAT_OK; i++)
		rc = remat_builder_add_output(b, g->id[g->outputs[i]], err);
	if (rc == REMAT_OK) {
		remat_builder_outputs_given(b);
		rc = remat_builder_finish(b, out, err);
		b = NULL;
	}
	if (b)
		remat_builder_free(b);
	free(ins);
	return rc;
}

void remat_schedule_map_nodes(struct remat_schedule *s, const int32_t *map)
{
	int64_t i;

	for (i = 0; i < s->n; i++)
		s->steps[i].node = map[s->steps[i].node];
}
