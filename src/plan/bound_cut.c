/*
 * bound_cut.c - the cut bound (remat/bound.h): a lower bound on the cost
 * of every schedule at a budget, in every node order.
 *
 * Take a valid schedule and a needed node x that is not an input, and
 * stop it at the first computation of x.  Every node x depends on (its
 * ancestors) has been computed before that moment; every needed node that
 * depends on x is computed after it.  Let R be what is resident while x
 * runs and C what is computed afterwards without having been resident
 * then.  Then
 *
 *   mem(R) + mem(x) + workspace(x) <= budget, and x's inputs are in R;
 *   every input of a node of C other than x is in R or in C;
 *   every output other than x is in R or in C;
 *   C holds every needed descendant of x, no input node, and no ancestor
 *   of x that may not be recomputed;
 *
 * and each ancestor of x in C is computed a second time, so the schedule
 * costs at least least_cost + cost(C ∩ ancestors).  The least of that
 * over all (R, C) is a bound (for every x; the largest is kept).
 *
 * Finding the least is a knapsack over a closure.  With the memory
 * constraint moved into the objective at a price lam >= 0 per byte, what
 * is left is a minimum-cost closure (each constraint says "this choice
 * implies that one"), solved exactly as a minimum s-t cut: a variable
 * a_v (v is in R or C) and c_v (v is in C) per node, a_v weighing
 * lam mem(v), c_v weighing cost(v) [an ancestor] - lam mem(v).  For
 * every lam, the cut's value less lam (budget - mem(x) - workspace(x))
 * bounds the least from below (Lagrangian duality).  That dual is
 * concave in lam (each closure is a line over it: its recomputation plus
 * lam times its memory over the room), and its maximum is found by
 * cutting planes.  The max-flow is Dinic's, here, stopped by the
 * deadline between augmentations (a flow stopped early still bounds).
 * When even the closure of least memory (every cost ignored) is over, no
 * schedule fits at all.
 *
 * The dual may keep a fraction of one large value where a schedule must
 * keep all of it or none, so for the few x whose dual may be loosest (a
 * closure that fits costs most above the best bound), the knapsack is
 * also solved whole, as a MILP with CBC, and CBC's proven bound counts.
 *
 * Strong where the graph has a narrow waist every schedule must pass
 * (the loss of a training graph: all activations the backward pass reads
 * are resident there or recomputed after); weak on graphs a schedule
 * may run in any order (a random DAG: what is not resident can be
 * computed later for the first time).
 *
 * Which x: those that must hold more than the room if nothing were
 * recomputed, found in order of the memory held while they run in the
 * plain order; most excess first, each with its own price search, for
 * half of the time; the rest at the best price found, and the best few
 * of those with their own search; then the whole knapsacks.  Stops at
 * the time limit with the best bound so far.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "remat/bound.h"
#include "remat/planner.h"
#include "analysis/needed.h"
#include "core/rand.h"
#include "solver/milp.h"

/* Nodes given their own price search after the sweep at one price. */
#define CUT_REFINE 8
/* Cutting-plane steps per node. */
#define CUT_STEPS 24
/* Nodes whose knapsack is solved exactly (CBC), and the cap per solve without a limit. */
#define CUT_EXACT 4
#define CUT_EXACT_SECONDS 30.0
/* Moments of the window bound (the nodes whose own cut proved most). */
#define WINDOW_MOMENTS 10
/* Moments x nodes up to which the windows are solved as a MILP (above: its LP). */
#define WINDOW_MILP_CELLS 4000

/* Edge kinds: what an edge's capacity is at a price. */
enum { E_INF, E_MEM, E_CNEG, E_CPOS };

struct cut {
	const struct remat_graph *g;
	double floor;          /* least cost: every needed node once */
	double unit;           /* the least positive cost: the MILPs' objective unit */
	double deadline;       /* remat_now() value; 0: none */
	int64_t budget;
	uint8_t *need;         /* [n] */
	uint8_t *mark;         /* [n] per x: 1 ancestor, 2 descendant, 4 input of x,
				  8 ancestor of y or y */
	int32_t y;             /* mark_x's window end (window_milp only); -1: none */
	const uint8_t *before; /* [n] or NULL: a down-set all computed before x (the
				  down-set bound), marked 1 with x's ancestors */
	int32_t *stack;        /* [n] */
	/*
	 * The network of one x: vertices 0 source, 1 sink, 2+2v a_v, 3+2v
	 * c_v.  Edge e runs eu[e] -> ev[e]; its arcs are 2e (forward) and
	 * 2e+1 (back), res[] their residual capacities; arcs[off[u]..off[u+1])
	 * are the arcs leaving u.
	 */
	int32_t nv;
	int32_t *eu, *ev;      /* per edge */
	uint8_t *ekind;        /* per edge */
	int32_t *enode;        /* per edge */
	int64_t ne, ecap;
	int64_t *off;          /* [nv + 1] */
	int64_t *arcs;         /* [2 ne] */
	double *res;           /* [2 ne] */
	int32_t *level, *queue;/* [nv] */
	int64_t *it, *path;    /* [nv] */
	uint8_t *side;         /* [nv] source side of the last cut */
};

/* One evaluation at a price: the bound it proves and the closure's line. */
struct cut_eval {
	double extra;          /* proven: every schedule costs >= floor + extra */
	double proven;         /* the dual's value itself (may be below 0); for a
				  memory-only closure: least memory - room, from below */
	double k;              /* the closure's recomputation cost */
	double s;              /* its memory over the room: mem(R) - room */
	int partial;           /* the deadline stopped the flow: extra holds, k and s do not */
};

static int expired(const struct cut *c)
{
	return c->deadline > 0 && remat_now() >= c->deadline;
}

/* budget - mem(x) - workspace(x), in whole bytes (exact below 2^53). */
static double room_at(const struct cut *c, int32_t x)
{
	return (double)(c->budget - c->g->mem[x] - c->g->workspace[x]);
}

static int cut_oom(struct remat_error *err)
{
	return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the cut bound");
}

static int add_edge(struct cut *c, int64_t a, int64_t b, int kind, int32_t v,
		    struct remat_error *err)
{
	if (c->ne == c->ecap) {
		int64_t ncap = c->ecap ? 2 * c->ecap : 1024;
		uint8_t *k = realloc(c->ekind, (size_t)ncap);
		int32_t *n2, *u2, *v2;

		if (!k)
			return cut_oom(err);
		c->ekind = k;
		if (!(n2 = realloc(c->enode, sizeof(int32_t) * (size_t)ncap)))
			return cut_oom(err);
		c->enode = n2;
		if (!(u2 = realloc(c->eu, sizeof(int32_t) * (size_t)ncap)))
			return cut_oom(err);
		c->eu = u2;
		if (!(v2 = realloc(c->ev, sizeof(int32_t) * (size_t)ncap)))
			return cut_oom(err);
		c->ev = v2;
		c->ecap = ncap;
	}
	c->eu[c->ne] = (int32_t)a;
	c->ev[c->ne] = (int32_t)b;
	c->ekind[c->ne] = (uint8_t)kind;
	c->enode[c->ne] = v;
	c->ne++;
	return REMAT_OK;
}

/* The arcs leaving each vertex, once the edges are in (build()). */
static int index_arcs(struct cut *c, struct remat_error *err)
{
	int64_t e, *fill;
	int32_t u;

	free(c->arcs);
	free(c->res);
	c->arcs = malloc(sizeof(int64_t) * (size_t)(2 * c->ne + 1));
	c->res = malloc(sizeof(double) * (size_t)(2 * c->ne + 1));
	if (!c->arcs || !c->res)
		return cut_oom(err);
	memset(c->off, 0, sizeof(int64_t) * ((size_t)c->nv + 1));
	for (e = 0; e < c->ne; e++) {
		c->off[c->eu[e] + 1]++;
		c->off[c->ev[e] + 1]++;
	}
	for (u = 0; u < c->nv; u++)
		c->off[u + 1] += c->off[u];
	fill = c->it; /* scratch */
	memcpy(fill, c->off, sizeof(int64_t) * (size_t)c->nv);
	for (e = 0; e < c->ne; e++) {
		c->arcs[fill[c->eu[e]]++] = 2 * e;
		c->arcs[fill[c->ev[e]]++] = 2 * e + 1;
	}
	return REMAT_OK;
}

static inline int32_t arc_head(const struct cut *c, int64_t a)
{
	return (a & 1) ? c->eu[a >> 1] : c->ev[a >> 1];
}

static inline int32_t arc_tail(const struct cut *c, int64_t a)
{
	return (a & 1) ? c->ev[a >> 1] : c->eu[a >> 1];
}

/* Levels from the source over arcs with residual above eps; 1 if the sink is reached. */
static int bfs_levels(struct cut *c, double eps)
{
	int32_t qh = 0, qt = 0, u;
	int64_t k;

	for (u = 0; u < c->nv; u++)
		c->level[u] = -1;
	c->level[0] = 0;
	c->queue[qt++] = 0;
	while (qh < qt) {
		u = c->queue[qh++];
		for (k = c->off[u]; k < c->off[u + 1]; k++) {
			int64_t a = c->arcs[k];
			int32_t w = arc_head(c, a);

			if (c->res[a] > eps && c->level[w] < 0) {
				c->level[w] = c->level[u] + 1;
				c->queue[qt++] = w;
			}
		}
	}
	return c->level[1] >= 0;
}

/*
 * Dinic's maximum flow from 0 to 1 on res[] (residuals are left in it).
 * *value: the flow pushed, which is at most every cut's capacity even
 * when the deadline stops it early (*partial set); the source side of a
 * minimum cut is in side[] when it ran to the end.
 */
static void max_flow(struct cut *c, double eps, double *value, int *partial)
{
	int64_t pushes = 0;
	int32_t u;

	*value = 0;
	*partial = 0;
	while (bfs_levels(c, eps)) {
		int64_t depth = 0;

		if (expired(c)) {
			*partial = 1;
			return;
		}
		memcpy(c->it, c->off, sizeof(int64_t) * (size_t)c->nv);
		u = 0;
		for (;;) {
			if (u == 1) { /* augment along the path, then start again */
				double f = INFINITY;
				int64_t d;

				for (d = 0; d < depth; d++)
					if (c->res[c->path[d]] < f)
						f = c->res[c->path[d]];
				for (d = 0; d < depth; d++) {
					c->res[c->path[d]] -= f;
					c->res[c->path[d] ^ 1] += f;
				}
				*value += f;
				depth = 0;
				u = 0;
				if ((++pushes & 1023) == 0 && expired(c)) {
					*partial = 1;
					return;
				}
				continue;
			}
			while (c->it[u] < c->off[u + 1]) {
				int64_t a = c->arcs[c->it[u]];
				int32_t w = arc_head(c, a);

				if (c->res[a] > eps && c->level[w] == c->level[u] + 1)
					break;
				c->it[u]++;
			}
			if (c->it[u] < c->off[u + 1]) {
				int64_t a = c->arcs[c->it[u]];

				c->path[depth++] = a;
				u = arc_head(c, a);
			} else if (u == 0) {
				break; /* blocking flow done */
			} else {
				c->level[u] = -1; /* dead end */
				u = arc_tail(c, c->path[--depth]);
				c->it[u]++;
			}
		}
	}
	/* The source side of a minimum cut: what the source still reaches. */
	memset(c->side, 0, (size_t)c->nv);
	for (u = 0; u < c->nv; u++)
		c->side[u] = c->level[u] >= 0;
}

/*
 * Mark x's ancestors (1) and needed descendants (2), and its inputs (4).
 * With a window's end y (c->y >= 0), the descendants are those y depends
 * on and y itself (8 marks them): what runs after x and before y.  With
 * a down-set (c->before), its nodes other than x are marked 1 too.
 */
static void mark_x(struct cut *c, int32_t x)
{
	const struct remat_graph *g = c->g;
	int32_t top = 0, v, k, y = c->y;

	memset(c->mark, 0, (size_t)g->n);
	if (y >= 0) {
		c->mark[y] = 8;
		c->stack[top++] = y;
		while (top > 0) {
			v = c->stack[--top];
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
				int32_t u = g->in_idx[k];

				if (!(c->mark[u] & 8)) {
					c->mark[u] |= 8;
					c->stack[top++] = u;
				}
			}
		}
	}
	c->stack[top++] = x;
	while (top > 0) {
		v = c->stack[--top];
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = g->in_idx[k];

			if (!(c->mark[u] & 1)) {
				c->mark[u] |= 1;
				c->stack[top++] = u;
			}
		}
	}
	c->stack[top++] = x;
	while (top > 0) {
		v = c->stack[--top];
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if (c->need[u] && !(c->mark[u] & 2) && (y < 0 || (c->mark[u] & 8))) {
				c->mark[u] |= 2;
				c->stack[top++] = u;
			}
		}
	}
	for (k = g->in_off[x]; k < g->in_off[x + 1]; k++)
		c->mark[g->in_idx[k]] |= 4;
	if (c->before)
		for (v = 0; v < g->n; v++)
			if (c->before[v] && v != x)
				c->mark[v] |= 1;
}

#define AV(v) (2 + 2 * (int64_t)(v))
#define CV(v) (3 + 2 * (int64_t)(v))

/* The network of x (capacities are set per price by evaluate()). */
static int build(struct cut *c, int32_t x, struct remat_error *err)
{
	const struct remat_graph *g = c->g;
	int32_t v, k;

	c->ne = 0;
	mark_x(c, x);
	for (v = 0; v < g->n; v++) {
		int c_never;

		if (!c->need[v] || v == x)
			continue;
		/* c_v = 0: an input node, an input of x, a fixed ancestor. */
		c_never = g->kind[v] == REMAT_KIND_INPUT || (c->mark[v] & 4) ||
			  ((c->mark[v] & 1) && !g->recompute[v]);
		if (g->mem[v] > 0)
			REMAT_TRY(add_edge(c, AV(v), 1, E_MEM, v, err));
		if (c_never) {
			REMAT_TRY(add_edge(c, CV(v), 1, E_INF, v, err));
		} else {
			REMAT_TRY(add_edge(c, 0, CV(v), E_CNEG, v, err));
			REMAT_TRY(add_edge(c, CV(v), 1, E_CPOS, v, err));
		}
		REMAT_TRY(add_edge(c, CV(v), AV(v), E_INF, v, err));
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (g->in_idx[k] != x)
				REMAT_TRY(add_edge(c, CV(v), AV(g->in_idx[k]), E_INF, v, err));
		if (c->mark[v] & 2) /* a descendant: computed after x */
			REMAT_TRY(add_edge(c, 0, CV(v), E_INF, v, err));
		if ((c->mark[v] & 4) || g->is_output[v]) /* resident then, or at the end */
			REMAT_TRY(add_edge(c, 0, AV(v), E_INF, v, err));
	}
	return index_arcs(c, err);
}

/*
 * The least closure at price lam (memory_only: every cost taken as 0, the
 * closure of least memory).  room = budget - mem(x) - workspace(x).
 */
static void evaluate(struct cut *c, double lam, int memory_only, double room,
		     struct cut_eval *ev)
{
	const struct remat_graph *g = c->g;
	double konst = 0, finite = 0, inf, flow_value, mem = 0, k = 0, scale = 0;
	int exact;
	int64_t e;
	int32_t v;

	for (e = 0; e < c->ne; e++) {
		double w = 0;

		v = c->enode[e];
		switch (c->ekind[e]) {
		case E_MEM:
			w = lam * (double)g->mem[v];
			break;
		case E_CNEG:
		case E_CPOS: {
			double cw = ((c->mark[v] & 1) && !memory_only ? g->cost[v] : 0) -
				    lam * (double)g->mem[v];

			w = c->ekind[e] == E_CNEG ? (cw < 0 ? -cw : 0) : (cw > 0 ? cw : 0);
			if (c->ekind[e] == E_CNEG && cw < 0)
				konst += cw;
			break;
		}
		default:
			break;
		}
		c->res[2 * e] = w;
		c->res[2 * e + 1] = 0;
		finite += w;
	}
	inf = 2 * finite + 1;
	for (e = 0; e < c->ne; e++)
		if (c->ekind[e] == E_INF)
			c->res[2 * e] = inf;
	/*
	 * Memory alone below 2^53 (every capacity, INF included, a whole
	 * number a double holds exactly): the flow is exact, with no
	 * tolerance and no margin.  Otherwise rounding is allowed for.
	 */
	exact = memory_only && inf < 9007199254740992.0;
	max_flow(c, exact ? 0 : 1e-13 * finite, &flow_value, &ev->partial);
	for (v = 0; !ev->partial && v < g->n; v++) {
		if (!c->need[v] || !c->side[AV(v)])
			continue;
		if (c->side[CV(v)]) {
			if (c->mark[v] & 1)
				k += g->cost[v];
		} else {
			mem += (double)g->mem[v];
		}
	}
	ev->k = k;
	ev->s = mem - room;
	/*
	 * Every closure weighs at least konst + flow (a flow is at most any
	 * cut), so every schedule's extra cost is at least that less
	 * lam * room.  Rounding is paid for by a margin far below a flop.
	 */
	scale = finite - konst + lam * fabs(room);
	ev->proven = konst + flow_value - lam * room - (exact ? 0 : 1e-9 * scale);
	ev->extra = memory_only || ev->proven < 0 ? 0 : ev->proven;
}

/*
 * The best bound at x: from price lam0 (> 0), cutting planes on the
 * concave dual.  *extra: the bound's excess over the floor; *lam: the
 * price that proved it (unchanged when none did); *kfit: the least
 * recomputation of a closure seen that fits (what x's exact knapsack costs
 * at most; 0 when nothing needs it, INFINITY when none was seen);
 * *infeasible: not even the closure of least memory fits.
 */
static int search_x(struct cut *c, int32_t x, double lam0, double *extra, double *lam,
		    double *kfit, int *infeasible, struct remat_error *err)
{
	const struct remat_graph *g = c->g;
	double room = room_at(c, x);
	double anc = 0, l;
	struct cut_eval up, down, ev;
	int step;
	int32_t v;

	*extra = 0;
	*kfit = INFINITY;
	*infeasible = 0;
	if (room < 0) {
		*infeasible = 1;
		return REMAT_OK;
	}
	REMAT_TRY(build(c, x, err));
	/* Price 0: nothing to recompute; if that fits, x proves nothing. */
	evaluate(c, 0, 0, room, &up);
	if (up.partial)
		return REMAT_OK;
	if (up.s <= 0) {
		*kfit = 0;
		return REMAT_OK;
	}
	for (v = 0; v < g->n; v++)
		if ((c->mark[v] & 1) && c->need[v])
			anc += g->cost[v];
	/* Up from lam0 until the closure fits; past anc a byte outweighs all. */
	l = lam0 > 0 ? lam0 : 1;
	for (;;) {
		if (expired(c))
			return REMAT_OK;
		if (l > anc + 1) {
			evaluate(c, 1, 1, room, &down);
			if (down.partial)
				return REMAT_OK;
			/* From the flow, not the cut read back: proven, not measured. */
			if (down.proven > 0) {
				*infeasible = 1;
				return REMAT_OK;
			}
			if (down.s > 0)
				return REMAT_OK; /* within rounding of the room: no line */
			*kfit = down.k;
			break;
		}
		evaluate(c, l, 0, room, &ev);
		if (ev.extra > *extra) {
			*extra = ev.extra;
			*lam = l;
		}
		if (ev.partial)
			return REMAT_OK;
		if (ev.s <= 0) {
			down = ev;
			*kfit = ev.k;
			break;
		}
		up = ev;
		l *= 4;
	}
	/* Cutting planes: the price where the two lines meet. */
	for (step = 0; step < CUT_STEPS && up.s > down.s && !expired(c); step++) {
		l = (down.k - up.k) / (up.s - down.s);
		if (!(l > 0) || !isfinite(l))
			break;
		evaluate(c, l, 0, room, &ev);
		if (ev.extra > *extra) {
			*extra = ev.extra;
			*lam = l;
		}
		if (ev.partial)
			break;
		if (ev.s > 0) {
			if (ev.k == up.k && ev.s == up.s)
				break;
			up = ev;
		} else {
			if (ev.k < *kfit)
				*kfit = ev.k;
			if (ev.k == down.k && ev.s == down.s)
				break;
			down = ev;
		}
	}
	return REMAT_OK;
}

/* One price, no search: for the sweep over every x. */
static int at_price(struct cut *c, int32_t x, double lam, double *extra, int *infeasible,
		    struct remat_error *err)
{
	double room = room_at(c, x);
	struct cut_eval ev;

	*extra = 0;
	*infeasible = room < 0;
	if (*infeasible)
		return REMAT_OK;
	REMAT_TRY(build(c, x, err));
	evaluate(c, lam, 0, room, &ev);
	*extra = ev.extra;
	return REMAT_OK;
}

/*
 * What a MILP's answer proves, in cost: val is CBC's optimum or bound in
 * the objective unit c->unit (the least positive cost, so that CBC's
 * absolute tolerances, about 1e-5 of the objective, are small against
 * every cost), less a margin for them; 0 when that leaves nothing.
 */
static double milp_proven(const struct cut *c, double val)
{
	return remat_i_milp_proven(val) * c->unit;
}

/*
 * x's knapsack solved as it is, not through its dual: the MILP over the
 * a_v and c_v of the network above (the same implications, the memory
 * constraint as a row), by CBC in a child process until deadline: the
 * window bound's MILP with x its only moment (window_milp).  Items are
 * whole values, so this is stronger where one large value decides (the
 * dual may keep a fraction of it).  *extra: CBC's proven bound (its
 * optimum when it finished), less a margin for its tolerances, and never
 * above kfit, the recomputation of a closure known to fit (the knapsack
 * costs at most that).
 */
static int window_milp(struct cut *c, const int32_t *mo, int32_t k, double deadline,
		       int relax, double *extra, struct remat_error *err);

static int exact_x(struct cut *c, int32_t x, double deadline, double kfit, double *extra,
		   struct remat_error *err)
{
	REMAT_TRY(window_milp(c, &x, 1, deadline, 0, extra, err));
	if (*extra > kfit)
		*extra = kfit;
	return REMAT_OK;
}

/*
 * What must be resident while x runs if nothing is computed again (x's
 * inputs, the outputs and whatever x's descendants read that x does not
 * precede), less the room beside x: above zero, x may prove something
 * (its bound at price lam is at most lam times this).  Marks x (mark_x).
 */
static double excess_at(struct cut *c, int32_t x)
{
	const struct remat_graph *g = c->g;
	double mem = 0;
	int32_t v, k;

	mark_x(c, x);
	for (v = 0; v < g->n; v++) {
		if (!c->need[v] || v == x || (c->mark[v] & 2))
			continue;
		if ((c->mark[v] & 4) || g->is_output[v]) {
			mem += (double)g->mem[v];
			continue;
		}
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
			if (c->mark[g->use_idx[k]] & 2) {
				mem += (double)g->mem[v];
				break;
			}
	}
	return mem - room_at(c, x);
}

struct cand {
	double excess;         /* excess_at() */
	int32_t pos, x;        /* topological position, node */
	double extra;          /* bound proved (price search or sweep) */
	double kfit;           /* search_x()'s *kfit; INFINITY: not searched */
};

/* Larger key first; ties in topological order. */
static int key_then_pos(double p, double q, int32_t pp, int32_t qp)
{
	if (p != q)
		return p > q ? -1 : 1;
	return (pp > qp) - (pp < qp);
}

static int by_excess(const void *a, const void *b)
{
	const struct cand *p = a, *q = b;

	return key_then_pos(p->excess, q->excess, p->pos, q->pos);
}

/*
 * Every needed node that is not an input, in cand[0..*n), ordered by the
 * memory held while it runs when the needed nodes run once each in
 * g->topo and each value is freed after its last reader (the inputs
 * held from the start): highest first.  cand[].excess holds that memory.
 */
static int topo_live(struct cut *c, struct cand *cand, int32_t *n, struct remat_error *err)
{
	const struct remat_graph *g = c->g;
	int32_t *last = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	int32_t *head = malloc(sizeof(int32_t) * ((size_t)g->n + 2));
	int32_t *next = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	double held = 0;
	int32_t i, v, k;

	*n = 0;
	if (!last || !head || !next) {
		free(last);
		free(head);
		free(next);
		return cut_oom(err);
	}
	for (i = 0; i <= g->n; i++)
		head[i] = -1;
	for (v = 0; v < g->n; v++) {
		if (!c->need[v])
			continue;
		last[v] = g->is_output[v] ? g->n : g->topo_pos[v];
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if (c->need[u] && g->topo_pos[u] > last[v] && last[v] < g->n)
				last[v] = g->topo_pos[u];
		}
		if (g->kind[v] == REMAT_KIND_INPUT)
			held += (double)g->mem[v];
		next[v] = head[last[v]];
		head[last[v]] = v;
	}
	for (i = 0; i < g->n; i++) {
		v = g->topo[i];
		if (c->need[v] && g->kind[v] != REMAT_KIND_INPUT) {
			cand[*n].excess = held + (double)g->mem[v] + (double)g->workspace[v];
			cand[*n].pos = i;
			cand[*n].x = v;
			cand[*n].extra = 0;
			cand[*n].kfit = INFINITY;
			(*n)++;
			held += (double)g->mem[v];
		}
		for (k = head[i]; k >= 0; k = next[k])
			held -= (double)g->mem[k];
	}
	free(last);
	free(head);
	free(next);
	qsort(cand, (size_t)*n, sizeof(*cand), by_excess);
	return REMAT_OK;
}

static int by_extra(const void *a, const void *b)
{
	const struct cand *p = a, *q = b;

	return key_then_pos(p->extra, q->extra, p->pos, q->pos);
}

/* Unsearched nodes (kfit infinite) come first and are passed over. */
static int by_kfit(const void *a, const void *b)
{
	const struct cand *p = a, *q = b;

	return key_then_pos(p->kfit, q->kfit, p->pos, q->pos);
}

static void cut_release(struct cut *c)
{
	free(c->need);
	free(c->mark);
	free(c->stack);
	free(c->side);
	free(c->ekind);
	free(c->enode);
	free(c->eu);
	free(c->ev);
	free(c->off);
	free(c->arcs);
	free(c->res);
	free(c->level);
	free(c->queue);
	free(c->it);
	free(c->path);
}

static int cut_init(struct cut *c, const struct remat_graph *g, int64_t budget,
		    double max_seconds, struct remat_error *err)
{
	size_t nv = (size_t)2 * (size_t)g->n + 2;

	memset(c, 0, sizeof(*c));
	c->g = g;
	c->budget = budget;
	c->y = -1;
	c->deadline = max_seconds > 0 ? remat_now() + max_seconds : 0;
	c->nv = (int32_t)nv;
	c->need = malloc((size_t)g->n + 1);
	c->mark = malloc((size_t)g->n + 1);
	c->stack = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	c->side = malloc(nv);
	c->off = malloc(sizeof(int64_t) * (nv + 1));
	c->level = malloc(sizeof(int32_t) * nv);
	c->queue = malloc(sizeof(int32_t) * nv);
	c->it = malloc(sizeof(int64_t) * nv);
	c->path = malloc(sizeof(int64_t) * nv);
	c->floor = remat_i_least_cost(g);
	c->unit = remat_i_cost_unit(g);
	if (!c->need || !c->mark || !c->stack || !c->side || !c->off || !c->level ||
	    !c->queue || !c->it || !c->path || c->floor < 0) {
		cut_release(c);
		return cut_oom(err);
	}
	remat_i_needed(g, c->need);
	return REMAT_OK;
}

/* A needed node whose own working set is over the budget (nothing fits at all), or -1. */
static int32_t over_budget(const struct cut *c)
{
	const struct remat_graph *g = c->g;
	int32_t v;

	for (v = 0; v < g->n; v++)
		if (c->need[v] && g->kind[v] != REMAT_KIND_INPUT &&
		    remat_i_working_set(g, v) > c->budget)
			return v;
	return -1;
}

/*
 * The nodes that may prove anything (excess_at() above 0) into
 * cand[0..*ncand), most excess first.  The exact excess costs a pass
 * over the graph per node, so nodes are taken in order of the memory
 * held while they run in the plain order (topo_live(): where a budget
 * binds first), for at most share of the time left when there is a limit.
 */
static int scan_excess(struct cut *c, struct cand *cand, double share, int32_t *ncand,
		       struct remat_error *err)
{
	double until = c->deadline > 0 ? remat_now() + share * (c->deadline - remat_now()) : 0;
	int32_t n_all = 0, i;

	*ncand = 0;
	REMAT_TRY(topo_live(c, cand, &n_all, err));
	for (i = 0; i < n_all; i++) {
		double e;

		if (i > 0 && ((until > 0 && remat_now() >= until) || expired(c)))
			break;
		e = excess_at(c, cand[i].x);
		if (e <= 0)
			continue;
		cand[*ncand] = cand[i];
		cand[*ncand].excess = e;
		(*ncand)++;
	}
	qsort(cand, (size_t)*ncand, sizeof(*cand), by_excess);
	return REMAT_OK;
}

/* The first price of a search: the least cost per byte of the graph. */
static double first_price(const struct cut *c)
{
	return c->g->total_mem > 0 && c->floor > 0 ? c->floor / (double)c->g->total_mem : 1;
}

int remat_bound_cut(const struct remat_graph *g, int64_t budget, double max_seconds,
		    double *bound, enum remat_bound_status *status, int32_t *at,
		    struct remat_error *err)
{
	struct cut c;
	struct cand *cand = NULL;
	double best = 0, lam, extra, full_until, sweep_until;
	int32_t ncand = 0, nfull, i, best_x = -1;
	int infeasible = 0, rc;

	*bound = NAN;
	*status = REMAT_BOUND_NOT_TRIED;
	if (at)
		*at = -1;
	if (remat_i_outputs_bytes(g) > budget) {
		*status = REMAT_BOUND_INFEASIBLE;
		return REMAT_OK;
	}
	REMAT_TRY(cut_init(&c, g, budget, max_seconds, err));
	cand = malloc(sizeof(*cand) * ((size_t)g->n + 1));
	if (!cand) {
		rc = cut_oom(err);
		goto out;
	}
	/*
	 * Which nodes can prove anything, most promising first (a third of
	 * the time).  A node whose own working set is over the budget proves
	 * at once that nothing fits.
	 */
	best_x = over_budget(&c);
	infeasible = best_x >= 0;
	rc = infeasible ? REMAT_OK : scan_excess(&c, cand, 1.0 / 3, &ncand, err);
	/*
	 * 1. Each node with its own price search, most excess first, each
	 * starting from the best price so far; for half of the time when
	 * there is a limit.
	 */
	lam = first_price(&c);
	full_until = c.deadline > 0 ? remat_now() + 0.5 * (c.deadline - remat_now()) : 0;
	/* Phases 2 and 3 leave a quarter of the time to the whole knapsacks. */
	sweep_until = c.deadline > 0 ? remat_now() + 0.75 * (c.deadline - remat_now()) : 0;
	for (nfull = 0; rc == REMAT_OK && !infeasible && nfull < ncand && !expired(&c);
	     nfull++) {
		double l2 = lam;

		if (nfull > 0 && full_until > 0 && remat_now() >= full_until)
			break;
		rc = search_x(&c, cand[nfull].x, lam, &extra, &l2, &cand[nfull].kfit,
			      &infeasible, err);
		cand[nfull].extra = extra;
		if (rc == REMAT_OK && (infeasible || extra > best)) {
			best = extra;
			best_x = cand[nfull].x;
			lam = l2;
		}
	}
	/* 2. The others at the best price, unless they cannot beat the best. */
	for (i = nfull; rc == REMAT_OK && !infeasible && i < ncand && !expired(&c); i++) {
		if (sweep_until > 0 && remat_now() >= sweep_until)
			break;
		if (lam * cand[i].excess <= best)
			continue;
		rc = at_price(&c, cand[i].x, lam, &cand[i].extra, &infeasible, err);
		if (rc == REMAT_OK && (infeasible || cand[i].extra > best)) {
			best = cand[i].extra;
			best_x = cand[i].x;
		}
	}
	/* 3. The best few of those, each with its own price. */
	if (rc == REMAT_OK && !infeasible && nfull < ncand) {
		qsort(cand + nfull, (size_t)(ncand - nfull), sizeof(*cand), by_extra);
		for (i = nfull; rc == REMAT_OK && !infeasible && i < nfull + CUT_REFINE &&
			    i < ncand && cand[i].extra > 0 && !expired(&c); i++) {
			double l2 = lam;

			if (sweep_until > 0 && remat_now() >= sweep_until)
				break;
			rc = search_x(&c, cand[i].x, lam, &extra, &l2, &cand[i].kfit,
				      &infeasible, err);
			if (rc == REMAT_OK && (infeasible || extra > best)) {
				best = extra;
				best_x = cand[i].x;
			}
		}
	}
	/*
	 * 4. The knapsacks that could prove more than the best so far (a
	 * fitting closure costs more than it), exactly: largest first.
	 */
	if (rc == REMAT_OK && !infeasible && ncand > 0) {
		int done = 0;

		qsort(cand, (size_t)ncand, sizeof(*cand), by_kfit);
		for (i = 0; rc == REMAT_OK && !infeasible && i < ncand && done < CUT_EXACT &&
			    !expired(&c); i++) {
			double now = remat_now(), until;

			if (!(cand[i].kfit > best * (1 + 1e-9) + 1e-12) || !isfinite(cand[i].kfit))
				continue;
			until = c.deadline > 0 ? now + (c.deadline - now) / 2
				: now + CUT_EXACT_SECONDS;
			rc = exact_x(&c, cand[i].x, until, cand[i].kfit, &extra, err);
			done++;
			if (rc == REMAT_OK && extra > best) {
				best = extra;
				best_x = cand[i].x;
			}
		}
	}
	if (rc == REMAT_OK) {
		if (infeasible) {
			*status = REMAT_BOUND_INFEASIBLE;
		} else {
			*status = REMAT_BOUND_OK;
			*bound = c.floor + best;
		}
		if (at)
			*at = best_x;
	}
out:
	free(cand);
	cut_release(&c);
	return rc;
}

/*
 * The window bound (remat/bound.h).  Moments x1, ..., xk, each an
 * ancestor of the next, are the first computations of those nodes, in
 * that order in every schedule.  Window i runs from xi's first
 * computation to x(i+1)'s (the last to the end).  Per window, as in x's
 * cut: a_v (v is resident when xi runs, or computed in the window) and
 * c_v (computed in the window and not resident then); what x(i+1)
 * depends on and follows xi, and x(i+1) itself, is computed in window i
 * (the last window: every needed descendant, and the outputs are
 * there); what a node computed in the window reads is in a_v; what is
 * resident fits beside xi.  The windows are tied: what is resident when
 * x(i+1) runs was resident when xi ran or was computed in window i
 * (a_v - c_v <= a_v of the window before).  Each ancestor of xi computed
 * in window i is computed again, and the windows do not overlap, so the
 * schedule costs at least least_cost + the sum of those recomputations.
 * A MILP over all windows at once (CBC, its proven bound at the
 * deadline; with relax, its LP relaxation alone, also a bound).  CBC
 * runs without its preprocessing, which proved wrong optima on these
 * models; its answer that nothing fits is not taken as a proof.  With
 * one moment (k = 1), x's knapsack whole (exact_x).
 */
/* A window MILP's variable: a column (>= 0), or one of these. */
#define WM_ABSENT (-1) /* no such variable (not needed, or the moment itself) */
#define WM_FREE (-2)   /* to be a column */
#define WM_ONE (-3)    /* fixed at 1 */
#define WM_ZERO (-4)   /* fixed at 0 */

/*
 * The row p <= q + r (r may be WM_ABSENT), with fixed variables as
 * constants; *never is set when the constants alone break it (the model
 * has no solution, which proves nothing: see window_milp).
 */
static int wm_row(struct remat_i_milp *m, int32_t p, int32_t q, int32_t r, int *never,
		  struct remat_error *err)
{
	double rhs = 0;
	int vars = 0, rc = REMAT_OK;
	int32_t t[3] = {p, q, r};
	double coef[3] = {1, -1, -1};
	int i;

	if (p == WM_ZERO || p == WM_ABSENT || q == WM_ONE || r == WM_ONE)
		return REMAT_OK; /* holds whatever the rest is */
	for (i = 0; i < 3; i++)
		vars += t[i] >= 0;
	if (vars == 0) {
		if (p == WM_ONE)
			*never = 1; /* 1 <= 0 */
		return REMAT_OK;
	}
	remat_i_milp_row_begin(m);
	for (i = 0; i < 3 && rc == REMAT_OK; i++) {
		if (t[i] >= 0)
			rc = remat_i_milp_row_add(m, t[i], coef[i], err);
		else if (t[i] == WM_ONE)
			rhs -= coef[i];
	}
	if (rc == REMAT_OK)
		rc = remat_i_milp_row_end(m, -HUGE_VAL, rhs, err);
	return rc;
}

static int window_milp(struct cut *c, const int32_t *mo, int32_t k, double deadline,
		       int relax, double *extra, struct remat_error *err)
{
	const struct remat_graph *g = c->g;
	struct remat_i_milp m;
	struct remat_i_milp_opts opts;
	struct remat_i_milp_result mr;
	int32_t *acol = NULL, *ccol = NULL, i, v, j;
	uint8_t *mk = NULL;
	int rc = REMAT_OK, never = 0;
	size_t n = (size_t)g->n;

	*extra = 0;
	remat_i_milp_init(&m);
	remat_i_milp_result_init(&mr);
	acol = malloc(sizeof(int32_t) * n * (size_t)k + 1);
	ccol = malloc(sizeof(int32_t) * n * (size_t)k + 1);
	mk = malloc(n * (size_t)k + 1);
	if (!acol || !ccol || !mk) {
		rc = cut_oom(err);
		goto out;
	}
	for (i = 0; i < k; i++) {
		c->y = i + 1 < k ? mo[i + 1] : -1;
		mark_x(c, mo[i]);
		memcpy(mk + (size_t)i * n, c->mark, n);
	}
	c->y = -1;
	/*
	 * What each moment fixes: c_v = 0 (an input node, an input of the
	 * moment, an ancestor that may not be recomputed), c_v = a_v = 1 (a
	 * descendant), a_v = 1 (an input of the moment or of a descendant,
	 * an output at the last moment).  A fixed variable is a constant, not
	 * a column: on a training graph the loss's descendants are half the
	 * nodes, and CBC, without its preprocessing, took ten times as long
	 * on the model with them (resnet101 at 50%: the loss's cut in 10 s
	 * instead of 1 s).
	 */
	for (i = 0; i < k && rc == REMAT_OK; i++) {
		const uint8_t *mark = mk + (size_t)i * n;
		int last = i + 1 == k;

		for (v = 0; v < g->n; v++) {
			size_t at = (size_t)i * n + (size_t)v;

			acol[at] = ccol[at] = WM_ABSENT;
			if (!c->need[v] || v == mo[i])
				continue;
			acol[at] = ccol[at] = WM_FREE;
			if (g->kind[v] == REMAT_KIND_INPUT || (mark[v] & 4) ||
			    ((mark[v] & 1) && !g->recompute[v]))
				ccol[at] = WM_ZERO;
			if ((mark[v] & 4) || (last && g->is_output[v]))
				acol[at] = WM_ONE;
			if (mark[v] & 2)
				acol[at] = ccol[at] = WM_ONE;
		}
		for (v = 0; v < g->n; v++) {
			if (ccol[(size_t)i * n + (size_t)v] != WM_ONE)
				continue;
			for (j = g->in_off[v]; j < g->in_off[v + 1]; j++) {
				size_t au = (size_t)i * n + (size_t)g->in_idx[j];

				if (acol[au] != WM_ABSENT)
					acol[au] = WM_ONE;
			}
		}
		/* Columns for the rest. */
		for (v = 0; v < g->n && rc == REMAT_OK; v++) {
			size_t at = (size_t)i * n + (size_t)v;

			if (acol[at] == WM_FREE)
				rc = remat_i_milp_add_col(&m, 0, 1, 0, 1, &acol[at], err);
			if (rc == REMAT_OK && ccol[at] == WM_FREE)
				rc = remat_i_milp_add_col(&m, 0, 1, (mark[v] & 1) ?
							  g->cost[v] / c->unit : 0, 1, &ccol[at], err);
		}
	}
	for (i = 0; i < k && rc == REMAT_OK; i++) {
		for (v = 0; v < g->n && rc == REMAT_OK; v++) {
			size_t at = (size_t)i * n + (size_t)v;

			if (ccol[at] == WM_ABSENT)
				continue;
			/* c_v <= a_v; c_v <= a_u for each input u. */
			rc = wm_row(&m, ccol[at], acol[at], WM_ABSENT, &never, err);
			for (j = g->in_off[v]; j < g->in_off[v + 1] && rc == REMAT_OK; j++) {
				int32_t u = g->in_idx[j];

				if (u != mo[i])
					rc = wm_row(&m, ccol[at], acol[(size_t)i * n + (size_t)u],
						    WM_ABSENT, &never, err);
			}
			/* Resident at this moment: there in the window before. */
			if (i > 0 && v != mo[i - 1] && acol[at - n] != WM_ABSENT && rc == REMAT_OK)
				rc = wm_row(&m, acol[at], ccol[at], acol[at - n], &never, err);
		}
		/* What is resident fits beside the moment. */
		if (rc == REMAT_OK) {
			double room = room_at(c, mo[i]);

			remat_i_milp_row_begin(&m);
			for (v = 0; v < g->n && rc == REMAT_OK; v++) {
				size_t at = (size_t)i * n + (size_t)v;
				double b = (double)g->mem[v];

				if (ccol[at] == WM_ABSENT || g->mem[v] == 0)
					continue;
				if (acol[at] >= 0)
					rc = remat_i_milp_row_add(&m, acol[at], b, err);
				else
					room -= b; /* a_v = 1 */
				if (rc == REMAT_OK && ccol[at] >= 0)
					rc = remat_i_milp_row_add(&m, ccol[at], -b, err);
				else if (ccol[at] == WM_ONE)
					room += b;
			}
			if (rc == REMAT_OK)
				rc = remat_i_milp_row_end(&m, -HUGE_VAL, room, err);
		}
	}
	/* Nothing left to choose: every variable fixed, no recomputation. */
	if (rc || never || m.ncols == 0)
		goto out;
	memset(&opts, 0, sizeof(opts));
	opts.deadline = deadline;
	opts.hard = deadline;
	opts.no_preprocess = 1;
	opts.relax = relax;
	rc = remat_i_milp_solve(REMAT_I_MILP_CBC, &m, &opts, &mr, err);
	if (rc)
		goto out;
	/*
	 * CBC saying that nothing fits is not taken as a proof (as for x's
	 * knapsack: it has been wrong on such models); the cuts of the moments
	 * prove that where it holds.
	 */
	if (mr.status == REMAT_I_MILP_INFEASIBLE)
		goto out;
	*extra = milp_proven(c, mr.status == REMAT_I_MILP_OPTIMAL ? mr.obj : mr.bound);
out:
	free(acol);
	free(ccol);
	free(mk);
	remat_i_milp_result_release(&mr);
	remat_i_milp_release(&m);
	return rc;
}

int remat_bound_window(const struct remat_graph *g, int64_t budget, double max_seconds,
		       double *bound, enum remat_bound_status *status, int32_t *moments,
		       int32_t max_moments, int32_t *n_moments, struct remat_error *err)
{
	struct cut c;
	struct cand *cand = NULL;
	uint8_t *rel = NULL; /* per node: an ancestor or a descendant of each moment so far */
	int32_t mo[WINDOW_MOMENTS];
	double lam, extra = 0, best = 0, cuts_until;
	int32_t ncand = 0, k = 0, i, v;
	int infeasible = 0, rc = REMAT_OK;

	*bound = NAN;
	*status = REMAT_BOUND_NOT_TRIED;
	*n_moments = 0;
	if (remat_i_outputs_bytes(g) > budget) {
		*status = REMAT_BOUND_INFEASIBLE;
		return REMAT_OK;
	}
	REMAT_TRY(cut_init(&c, g, budget, max_seconds, err));
	cand = malloc(sizeof(*cand) * ((size_t)g->n + 1));
	rel = malloc((size_t)g->n + 1);
	if (!cand || !rel) {
		rc = cut_oom(err);
		goto out;
	}
	infeasible = over_budget(&c) >= 0;
	if (infeasible)
		goto done;
	/* The nodes whose cut may prove anything (a sixth of the time). */
	rc = scan_excess(&c, cand, 1.0 / 6, &ncand, err);
	if (rc)
		goto out;
	/* Their own cuts (the moments' candidates), for a sixth more. */
	lam = first_price(&c);
	cuts_until = c.deadline > 0 ? remat_now() + (c.deadline - remat_now()) / 5 : 0;
	for (i = 0; rc == REMAT_OK && i < ncand && !expired(&c); i++) {
		double l2 = lam, kfit;

		if (i > 0 && cuts_until > 0 && remat_now() >= cuts_until)
			break;
		rc = search_x(&c, cand[i].x, lam, &extra, &l2, &kfit, &infeasible, err);
		if (rc || infeasible)
			break;
		cand[i].extra = extra;
		if (extra > best)
			best = extra;
		if (extra > 0)
			lam = l2;
	}
	ncand = i;
	if (rc || infeasible)
		goto done;
	/*
	 * The moments: the nodes whose cut proved most, each taken when it
	 * is an ancestor or a descendant of every one taken before.
	 */
	qsort(cand, (size_t)ncand, sizeof(*cand), by_extra);
	memset(rel, 1, (size_t)g->n);
	for (i = 0; i < ncand && k < WINDOW_MOMENTS && cand[i].extra > 0; i++) {
		int32_t x = cand[i].x;

		if (!rel[x])
			continue;
		mo[k++] = x;
		mark_x(&c, x);
		for (v = 0; v < g->n; v++)
			rel[v] = rel[v] && (c.mark[v] & 3);
	}
	/* In the order they run. */
	for (i = 1; i < k; i++) {
		int32_t x = mo[i], j = i;

		while (j > 0 && g->topo_pos[mo[j - 1]] > g->topo_pos[x]) {
			mo[j] = mo[j - 1];
			j--;
		}
		mo[j] = x;
	}
	if (k > 1 && !expired(&c)) {
		struct remat_error e2;

		/* A solver that fails (CBC gave up, no process) proves nothing more. */
		/* Beyond small models CBC rarely proves more than the root in time: the LP alone. */
		rc = window_milp(&c, mo, k, c.deadline > 0 ? c.deadline : remat_now() +
				 CUT_EXACT_SECONDS, (int64_t)k * g->n > WINDOW_MILP_CELLS, &extra, &e2);
		if (rc == REMAT_ENOMEM)
			*err = e2;
		else
			rc = REMAT_OK;
		if (rc == REMAT_OK && extra > best)
			best = extra;
		else
			k = 0; /* the chain proved no more than one cut */
	}
	if (k < 2)
		k = 0;
done:
	if (rc == REMAT_OK) {
		if (infeasible) {
			*status = REMAT_BOUND_INFEASIBLE;
		} else {
			*status = REMAT_BOUND_OK;
			*bound = c.floor + best;
			for (i = 0; i < k && best > 0; i++) {
				if (moments && i < max_moments)
					moments[i] = mo[i];
				(*n_moments)++;
			}
		}
	}
out:
	free(rel);
	free(cand);
	cut_release(&c);
	return rc;
}

int remat_bound_cut_peak(const struct remat_graph *g, double max_seconds, int64_t *peak,
			 int32_t *at, struct remat_error *err)
{
	struct cut c;
	struct cand *cand = NULL;
	struct cut_eval ev;
	int32_t n_all = 0, i;
	int rc;

	*peak = remat_i_least_peak(g);
	if (at)
		*at = -1;
	if (*peak < 0)
		return cut_oom(err);
	/* No budget: the room is taken as 0, and only the memory is read. */
	REMAT_TRY(cut_init(&c, g, 0, max_seconds, err));
	cand = malloc(sizeof(*cand) * ((size_t)g->n + 1));
	if (!cand) {
		rc = cut_oom(err);
		goto out;
	}
	rc = topo_live(&c, cand, &n_all, err);
	for (i = 0; rc == REMAT_OK && i < n_all && !expired(&c); i++) {
		int32_t x = cand[i].x;
		int64_t held;

		rc = build(&c, x, err);
		if (rc)
			break;
		evaluate(&c, 1, 1, 0, &ev);
		if (ev.partial)
			break;
		/*
		 * The least memory resident beside x when it first runs (from
		 * below, by the flow: a whole number of bytes at least this),
		 * and x.
		 */
		held = (int64_t)ceil(ev.proven) + g->mem[x] + g->workspace[x];
		if (held > *peak) {
			*peak = held;
			if (at)
				*at = x;
		}
	}
	if (rc == REMAT_OK) {
		/*
		 * The outputs are all resident after the last compute, which
		 * held at least that much while it ran (a training graph's
		 * parameter gradients: often more than any one node's needs).
		 */
		int64_t outs = 0;

		for (i = 0; i < g->n; i++)
			if (g->is_output[i])
				outs += g->mem[i];
		if (outs > *peak) {
			*peak = outs;
			if (at)
				*at = -2;
		}
	}
out:
	free(cand);
	cut_release(&c);
	return rc;
}

/*
 * The down-set bound (remat/bound.h).  D is a down-set of the needed
 * nodes (with each node, its inputs; graph inputs count as in every D).
 * In a valid schedule, let w be the node of D computed first the latest,
 * and stop at that first computation of w.  w is maximal in D (no user
 * in D: that user would run after w for the first time), and every other
 * node of D has run before.  So the cut at w holds with D \ {w} in place
 * of w's ancestors: what is computed after w without having been
 * resident while w ran, and lies in D, is computed a second time.  No
 * schedule knows which w is last, so D proves the least over its maximal
 * nodes of those cuts (each through its dual, mark_x() with c->before;
 * for the down-sets kept at the end also whole, exact_x()).  With D = x
 * and its ancestors it is x's cut; a larger D may prove more where a
 * schedule could put off what one cut lets it put off: on a forward DAG
 * with a node of many inputs, every input is computed before the last of
 * them, and those not resident then come back.
 *
 * Which D: every prefix of the needed nodes in g->topo (at most
 * DS_PREFIXES of them, evenly spread), the best one then improved by a
 * local search adding a node whose inputs are all in D or removing one
 * with no user in D, a move kept when the value does not fall; half the
 * moves at the node that gives the least (it, a user or an input), and
 * after DS_STALL moves per node without a rise, a kick of one to eight
 * random moves kept whatever they cost (a plateau held the search at
 * +0.69% on random-layered-n250 at 70%; with kicks, +0.92% in 40 s).
 * The best D found is evaluated again at the end with its maximal
 * nodes' knapsacks solved whole, least dual first.  Time: a fifth of
 * max_seconds for the prefixes, two fifths for the search, the rest for
 * the knapsacks; at most DS_MOVES_PER_NODE moves per node without a
 * limit, DS_MOVES_PER_NODE_TIMED with one (a small graph need not wait
 * out its share).
 */
#define DS_PREFIXES 512
#define DS_MOVES_PER_NODE 100
#define DS_MOVES_PER_NODE_TIMED 10000
#define DS_STALL 4
#define DS_CLOSURES 8

static int ds_maximal(const struct cut *c, const uint8_t *D, int32_t v)
{
	const struct remat_graph *g = c->g;
	int32_t k;

	if (!D[v] || !c->need[v] || g->kind[v] == REMAT_KIND_INPUT)
		return 0;
	for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
		if (D[g->use_idx[k]] && c->need[g->use_idx[k]])
			return 0;
	return 1;
}

/*
 * D's bound over the least cost into *val: the least, over its maximal
 * nodes, of their cuts with D before them (through the dual); INFINITY
 * when none can run last within the budget.  Stops once that is below
 * stop (*val is then no more than the value).  *argw: the node of the
 * least (-1: none).  wx, wv (may be NULL): each
 * maximal node and its value, *nw of them (all of them only when it did
 * not stop early).
 */
static int ds_value(struct cut *c, const uint8_t *D, double stop, double *val, int32_t *argw,
		    int32_t *wx, double *wv, int32_t *nw, struct remat_error *err)
{
	const struct remat_graph *g = c->g;
	double lo = INFINITY;
	int32_t v;
	int rc = REMAT_OK, seen = 0;

	if (nw)
		*nw = 0;
	*argw = -1;
	c->before = D;
	for (v = 0; v < g->n && rc == REMAT_OK; v++) {
		double extra = 0, lam = 0, kfit = INFINITY;
		int inf = 0;

		if (!ds_maximal(c, D, v))
			continue;
		seen = 1;
		if (expired(c)) {
			lo = 0;
			break;
		}
		rc = search_x(c, v, first_price(c), &extra, &lam, &kfit, &inf, err);
		if (inf)
			extra = INFINITY;
		if (nw) {
			wx[*nw] = v;
			wv[(*nw)++] = extra;
		}
		if (extra < lo) {
			lo = extra;
			*argw = v;
		}
		if (!nw && (lo < stop || lo <= 0))
			break;
	}
	c->before = NULL;
	*val = seen ? lo : 0;
	return rc;
}

/*
 * D's bound with the knapsacks whole: its maximal nodes' duals (wx, wv,
 * nw from ds_value), then, least first, each knapsack by CBC until
 * `until` (split among those left), its proven value taken where above
 * the dual; stops once the least dual left is no lower than the least
 * value so far (solving more could not lower it).  *val: the least
 * value over all.
 */
static int ds_exact(struct cut *c, const uint8_t *D, int32_t *wx, double *wv, int32_t nw,
		    double until, double *val, struct remat_error *err)
{
	double lo = INFINITY;
	int32_t i, j;
	int rc = REMAT_OK;

	/* Insertion sort, least dual first (nw is small: D's maximal nodes). */
	for (i = 1; i < nw; i++)
		for (j = i; j > 0 && wv[j - 1] > wv[j]; j--) {
			double t = wv[j];
			int32_t x = wx[j];

			wv[j] = wv[j - 1];
			wx[j] = wx[j - 1];
			wv[j - 1] = t;
			wx[j - 1] = x;
		}
	c->before = D;
	for (i = 0; i < nw && rc == REMAT_OK; i++) {
		double ex = 0, now = remat_now(), v = wv[i];
		struct remat_error e2;

		if (v >= lo)
			break;
		if (isfinite(v) && now < until && !expired(c)) {
			rc = exact_x(c, wx[i], now + (until - now) / (nw - i), INFINITY, &ex, &e2);
			if (rc == REMAT_ENOMEM)
				*err = e2;
			else
				rc = REMAT_OK;
			if (ex > v)
				v = ex;
		}
		if (v < lo)
			lo = v;
	}
	c->before = NULL;
	*val = nw > 0 ? lo : 0;
	return rc;
}

static int32_t ds_size(const struct cut *c, const uint8_t *D)
{
	int32_t v, k = 0;

	for (v = 0; v < c->g->n; v++)
		k += D[v] && c->need[v] && c->g->kind[v] != REMAT_KIND_INPUT;
	return k;
}

static int ds_movable(const struct cut *c, const uint8_t *D, int32_t v)
{
	const struct remat_graph *g = c->g;
	int32_t k;

	if (!c->need[v] || g->kind[v] == REMAT_KIND_INPUT)
		return 0;
	if (D[v])
		return ds_maximal(c, D, v);
	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
		if (!D[g->in_idx[k]] && c->need[g->in_idx[k]] &&
		    g->kind[g->in_idx[k]] != REMAT_KIND_INPUT)
			return 0;
	return 1;
}

/* D as a start of the search: into bestD and *best when its value is higher. */
static int ds_start(struct cut *c, const uint8_t *D, uint8_t *bestD, double *best,
		    int *infeasible, struct remat_error *err)
{
	double val;
	int32_t aw;
	int rc = ds_value(c, D, *best, &val, &aw, NULL, NULL, NULL, err);

	if (rc == REMAT_OK && isinf(val)) {
		*infeasible = 1;
	} else if (rc == REMAT_OK && val > *best) {
		*best = val;
		memcpy(bestD, D, (size_t)c->g->n);
	}
	return rc;
}

int remat_bound_downset(const struct remat_graph *g, int64_t budget, double max_seconds,
			double *bound, enum remat_bound_status *status, int32_t *size,
			struct remat_error *err)
{
	struct cut c;
	uint8_t *D = NULL, *bestD = NULL;
	struct cand *cand = NULL;
	int32_t *seq = NULL, *wx = NULL, m = 0, i, v, nw = 0, ncand = 0;
	int32_t aw = -1, neck = -1, np, stride, tried;
	double *wv = NULL, best = 0, cur, val, t_prefix = 0, t_search = 0, now;
	int64_t moves, cap, since;
	uint64_t rng = 0x5eedULL;
	int rc = REMAT_OK, infeasible = 0;
	size_t n = (size_t)g->n;

	*bound = NAN;
	*status = REMAT_BOUND_NOT_TRIED;
	if (remat_i_outputs_bytes(g) > budget) {
		*status = REMAT_BOUND_INFEASIBLE;
		if (size)
			*size = 0;
		return REMAT_OK;
	}
	if (size)
		*size = 0;
	REMAT_TRY(cut_init(&c, g, budget, max_seconds, err));
	D = calloc(n + 1, 1);
	bestD = malloc(n + 1);
	seq = malloc(sizeof(int32_t) * (n + 1));
	wx = malloc(sizeof(int32_t) * (n + 1));
	wv = malloc(sizeof(double) * (n + 1));
	cand = malloc(sizeof(*cand) * (n + 1));
	if (!D || !bestD || !seq || !wx || !wv || !cand) {
		rc = cut_oom(err);
		goto out;
	}
	infeasible = over_budget(&c) >= 0;
	if (infeasible)
		goto done;
	if (c.deadline > 0) {
		now = remat_now();
		t_prefix = now + 0.1 * (c.deadline - now);
		t_search = now + 0.6 * (c.deadline - now);
	}
	for (i = 0; i < g->n; i++) {
		v = g->topo[i];
		if (c.need[v] && g->kind[v] != REMAT_KIND_INPUT)
			seq[m++] = v;
	}
	/*
	 * 1. The prefixes of the topological order: np of them, evenly
	 * spread, coarse to fine (every half, then every quarter, ...), so
	 * that a run cut short by its time has tried the whole order.
	 */
	np = m < DS_PREFIXES ? m : DS_PREFIXES;
	for (stride = 1; stride < np; stride *= 2)
		;
	for (tried = 0; stride >= 1 && rc == REMAT_OK && !infeasible; stride /= 2) {
		int32_t k, len, j;

		for (k = stride; k <= np && rc == REMAT_OK; k += stride) {
			if (stride < np && k % (2 * stride) == 0 && 2 * stride <= np)
				continue; /* tried at the coarser stride */
			if (expired(&c) || (tried > 0 && t_prefix > 0 && remat_now() >= t_prefix))
				goto prefixes_done;
			len = (int32_t)(((int64_t)k * m) / np);
			memset(D, 0, n);
			for (j = 0; j < len; j++)
				D[seq[j]] = 1;
			tried++;
			rc = ds_start(&c, D, bestD, &best, &infeasible, err);
			if (infeasible)
				break;
		}
	}
prefixes_done:
	if (rc || infeasible)
		goto done;
	/*
	 * 1b. The down-sets of one node and its ancestors (x's cut), for the
	 * nodes that would hold most were nothing recomputed (the cut bound's
	 * first candidates): where one cut proves more than any prefix (a
	 * training graph's loss), the search starts from it.
	 */
	rc = scan_excess(&c, cand, 0.1, &ncand, err);
	for (i = 0; i < ncand && i < DS_CLOSURES && rc == REMAT_OK && !expired(&c); i++) {
		mark_x(&c, cand[i].x);
		for (v = 0; v < g->n; v++)
			D[v] = (c.mark[v] & 1) || v == cand[i].x;
		rc = ds_start(&c, D, bestD, &best, &infeasible, err);
		if (infeasible)
			break;
	}
	if (rc || infeasible || !(best > 0))
		goto done;
	/*
	 * 2. Local search from the best of those: a move stays when the value
	 * does not fall; after DS_STALL moves per node without a rise, a kick
	 * of a few random moves, kept whatever they cost (the best D is kept
	 * aside).
	 */
	memcpy(D, bestD, n);
	cap = (int64_t)(c.deadline > 0 ? DS_MOVES_PER_NODE_TIMED : DS_MOVES_PER_NODE) * m;
	cur = best;
	rc = ds_value(&c, D, cur, &val, &neck, NULL, NULL, NULL, err);
	for (moves = 0, since = 0; moves < cap && rc == REMAT_OK && !expired(&c); moves++) {
		int32_t x;

		if (t_search > 0 && remat_now() >= t_search)
			break;
		if (since >= (int64_t)DS_STALL * m) {
			int32_t kick = 1 + (int32_t)remat_i_rand_below(&rng, 8);

			for (i = 0; i < 8 * kick && kick > 0; i++) {
				x = seq[remat_i_rand_below(&rng, m)];
				if (ds_movable(&c, D, x)) {
					D[x] = !D[x];
					kick--;
				}
			}
			rc = ds_value(&c, D, -1, &cur, &neck, NULL, NULL, NULL, err);
			if (rc == REMAT_OK && isinf(cur)) {
				infeasible = 1;
				break;
			}
			since = 0;
			continue;
		}
		x = seq[remat_i_rand_below(&rng, m)];
		/* Half the moves at the bottleneck: it, one of its users or inputs. */
		if (neck >= 0 && (remat_i_rand_next(&rng) & 1)) {
			int32_t nu = g->use_off[neck + 1] - g->use_off[neck];
			int32_t ni = g->in_off[neck + 1] - g->in_off[neck];
			int32_t r = (int32_t)remat_i_rand_below(&rng, 1 + nu + ni);

			x = r == 0 ? neck : r <= nu ? g->use_idx[g->use_off[neck] + r - 1]
				: g->in_idx[g->in_off[neck] + r - 1 - nu];
		}
		since++;
		if (!ds_movable(&c, D, x))
			continue;
		D[x] = !D[x];
		rc = ds_value(&c, D, cur, &val, &aw, NULL, NULL, NULL, err);
		if (rc == REMAT_OK && isinf(val)) {
			infeasible = 1;
			break;
		}
		if (rc == REMAT_OK && val >= cur) {
			if (val > cur)
				since = 0;
			cur = val;
			neck = aw;
			if (cur > best) {
				best = cur;
				memcpy(bestD, D, n);
			}
		} else {
			D[x] = !D[x];
		}
	}
	if (rc || infeasible)
		goto done;
	/* 3. The search's down-set with its knapsacks whole. */
	rc = ds_value(&c, bestD, -1, &val, &aw, wx, wv, &nw, err);
	if (rc == REMAT_OK && !expired(&c)) {
		now = remat_now();
		rc = ds_exact(&c, bestD, wx, wv, nw, c.deadline > 0 ? c.deadline :
			      now + CUT_EXACT_SECONDS, &val, err);
		if (rc == REMAT_OK && isinf(val))
			infeasible = 1;
		else if (rc == REMAT_OK && val > best)
			best = val;
	}
done:
	if (rc == REMAT_OK) {
		if (infeasible) {
			*status = REMAT_BOUND_INFEASIBLE;
		} else {
			*status = REMAT_BOUND_OK;
			*bound = c.floor + best;
		}
		if (size && best > 0)
			*size = ds_size(&c, bestD);
	}
out:
	free(D);
	free(bestD);
	free(seq);
	free(wx);
	free(wv);
	free(cand);
	cut_release(&c);
	return rc;
}
