/*
 * mincut.c - the partition PyTorch users already run: torch.compile's
 * default training partitioner (torch._functorch.partitioners.
 * min_cut_rematerialization_partition) on remat graphs, with its
 * activation-memory-budget variant's knapsack for budgets, solved by
 * igraph's maximum flow.
 *
 * 1. Phases.  Among the nodes some output needs, a node is in the
 *    backward phase when it is a backward node or reads one (directly or
 *    not); the others are the forward phase.  A graph whose backward
 *    phase reads nothing of the forward phase is not a training graph:
 *    nothing to partition (REMAT_ENOFIT saying so).
 * 2. Policy: forward nodes that may not be recomputed.  Always: input
 *    nodes, outputs and "recompute": false nodes.  By default (--ban
 *    intensive) also the compute-intensive operators: in a graph whose
 *    labels name operators, those naming a matrix product or a
 *    convolution (mm, bmm, addmm, matmul, linear, einsum, conv,
 *    scaled_dot_product); in a graph without such labels, the nodes
 *    whose cost per byte is at least 4 times the median over the forward
 *    phase.  (PyTorch bans matrix products, convolutions and random
 *    operators; costs stand in for operator names where there are none.)
 * 3. The flow network, as PyTorch builds it: each forward node v is an
 *    edge v_in -> v_out of capacity mem(v) (scaled so that among
 *    cuts of equal bytes the one with fewer values wins); an edge
 *    u_out -> v_in of infinite capacity for every forward edge u -> v;
 *    source -> v_in for banned nodes; v_out -> sink for every forward
 *    value the backward phase reads.
 * 4. A minimum s-t cut (igraph_maxflow, push-relabel).  Forward nodes
 *    with v_in on the source side and v_out on the sink side are saved
 *    for the backward; those with v_in on the sink side are recomputed
 *    in it (closed under inputs: what a recomputed node reads is saved
 *    or recomputed too).
 * 5. The schedule: the forward phase in topological order; then each
 *    backward-phase node in topological order, preceded by the
 *    recomputation of the recomputed nodes it needs that have not been
 *    recomputed yet (their own missing inputs first).  The liveness pass
 *    frees every value after its last use: a value outside the saved set
 *    dies after its last forward read, a recomputed one after its last
 *    backward read.
 * 6. Budgets: the schedule is simulated; while it is over budget, the
 *    soft-banned nodes (step 2's compute-intensive ones) are allowed to
 *    be recomputed in order of memory saved per unit of recompute cost
 *    (mem / cost, largest first: the knapsack of PyTorch's
 *    activation_memory_budget, solved greedily), 1, 2, 4, ... of them,
 *    then the smallest count that fits is searched by bisection; every
 *    fitting schedule is offered and the cheapest kept.  When even
 *    allowing every candidate does not fit: REMAT_ENOFIT naming the
 *    lowest peak reached.
 *
 * Complexity: one cut is a push-relabel maximum flow on 2F + 2 vertices
 * and 2E_F + F edges (F forward nodes, E_F forward edges), in practice
 * near-linear; step 6 makes at most 2 log2(K) + 2 cuts for K candidates,
 * each followed by a linear schedule build and simulation.
 *
 * Policies (--policy).  "remat" is steps 2 and 3 above.  "torch-1.13"
 * is what functorch 1.13's min_cut_rematerialization_partition does with
 * its default compiler (nvfuser), read from its source
 * (functorch/_src/partitioners.py), on graphs whose labels name ATen
 * operators ("aten.relu.default", as remat_torch's joint graphs do, or
 * "aten::relu"): a forward node is banned unless its operator is on
 * PyTorch's list of recomputable (pointwise, reduction, view-like)
 * operators, or when its output is under a quarter of its inputs' bytes
 * (a reduction that shrinks them); an output of a multi-output operator
 * taken over by a node of its own ("output 1 of ...", PyTorch's getitem)
 * is never banned.  Capacities are PyTorch's weights: bytes times
 * 1.1^d, d the distance to the backward (1 to 100), doubled when every
 * reader of the node could fuse with it (pointwise into pointwise: such
 * a value need not exist in memory unless saved).  "torch-1.13-inductor"
 * adds inductor's longer list (views, clones, full, arange, index ...) and
 * bans what is more than 4 steps from the backward.  No knapsack: 1.13
 * has no memory budget for its partitioner, so step 6 lifts nothing.
 * The default is torch-1.13 on graphs labelled "aten.X.Y" (remat_torch's
 * joint graphs, traced with that partitioner's PyTorch) and remat
 * elsewhere.
 *
 * --natural returns the partition itself: never replaced by the plain
 * order the runner offers (remat_plan_run()), at any budget; over the
 * budget it is REMAT_ENOFIT as ever.
 *
 * Not guaranteed: the cut minimises the bytes kept between forward and
 * backward, not the peak; a recomputed value lives from its
 * recomputation to its last backward read, so on chains without
 * fusion (remat's memory model has none) recomputing more can raise the
 * peak.  It is the reference for what torch.compile does by default, not
 * a planner for tight budgets.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/budget.h"
#include "remat/planner.h"
#include "analysis/needed.h"
#include "core/igraph_glue.h"
#include "plan/best.h"
#include "planners/mincut.h"

/* Soft bans: a forward node whose cost per byte is this many medians. */
#define MC_INTENSIVE_RATIO 4.0

static const struct remat_planner_option mincut_options[] = {
	{ "ban", "POLICY", "remat policy: operators never recomputed besides inputs, outputs "
	  "and recompute: false: 'intensive' (default: matrix products and convolutions) "
	  "or 'none'" },
	{ "policy", "remat|torch-1.13|torch-1.13-inductor", "what may be recomputed and what "
	  "a saved value costs: remat's, or PyTorch 1.13's partitioner's (default: "
	  "torch-1.13 on graphs labelled with ATen overloads, remat's elsewhere)" },
	{ "natural", NULL, "return the partition itself, never the plain order in its place "
	  "(PyTorch's answer, at any budget)" },
	{ NULL, NULL, NULL }
};

enum mc_policy { MC_REMAT, MC_TORCH, MC_TORCH_INDUCTOR };

/*
 * functorch 1.13's recomputable_ops (min_cut_rematerialization_partition),
 * by overload packet name; getitem is the move-out nodes (labels
 * "output K of ...").  Random operators are banned by not being listed.
 */
static const char *const torch_recomputable[] = {
	"add", "sub", "div", "atan2", "mul", "max", "min", "pow", "remainder", "fmod",
	"__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "eq", "ne", "ge", "gt",
	"le", "lt", "abs", "bitwise_not", "ceil", "floor", "frac", "neg", "relu", "round",
	"silu", "trunc", "log", "log10", "log1p", "log2", "lgamma", "exp", "expm1", "erf",
	"erfc", "cos", "acos", "cosh", "sin", "asin", "sinh", "tan", "atan", "tanh", "atanh",
	"sqrt", "rsqrt", "reciprocal", "sigmoid", "softplus", "threshold",
	"threshold_backward", "clamp", "where", "lerp", "addcmul", "gelu", "gelu_backward",
	"alias", "softmax", "_softmax", "_softmax_backward_data", "sum", "mean",
	"_grad_sum_to_size", "sum_to_size", "amax", "to", "type_as", "squeeze", "unsqueeze",
	NULL
};
/* ... and what its compiler="inductor" adds. */
static const char *const torch_inductor_extra[] = {
	"convert_element_type", "sign", "clone", "_to_copy", "full_like", "var", "std",
	"broadcast_in_dim", "select", "permute", "_unsafe_view", "view", "expand", "slice",
	"reshape", "broadcast_tensors", "scalar_tensor", "ones", "new_zeros",
	"lift_fresh_copy", "minimum", "arange", "bitwise_and", "triu", "var_mean", "isinf",
	"any", "isnan", "full", "as_strided", "zeros", "argmax", "maximum", "bitwise_or",
	"logical_and", "logical_or", "index", NULL
};
/* Random operators: fusible, never recomputed. */
static const char *const torch_random[] = { "native_dropout", "rand_like", "randn_like",
					    NULL };

/* The ATen operator a label names ("aten.relu.default", "x aten::relu"), or "". */
static void aten_op(const char *label, char *op, size_t size)
{
	const char *p = label ? strstr(label, "aten.") : NULL;
	size_t k = 0;

	if (label && !p && (p = strstr(label, "aten::")))
		p += 6;
	else if (p)
		p += 5;
	op[0] = '\0';
	if (!p)
		return;
	while ((isalnum((unsigned char)p[k]) || p[k] == '_') && k + 1 < size) {
		op[k] = p[k];
		k++;
	}
	op[k] = '\0';
}

/* A move-out or copy-out node: PyTorch's getitem. */
static int getitem_label(const char *label)
{
	return label && (strncmp(label, "output ", 7) == 0 ||
			 strncmp(label, "copy of output ", 15) == 0);
}

static int in_list(const char *const *l, const char *op)
{
	for (; *l; l++)
		if (strcmp(*l, op) == 0)
			return 1;
	return 0;
}

/* Is op (a packet name) on the policy's list of recomputable operators? */
static int torch_recomputable_op(enum mc_policy pol, const char *op)
{
	return op[0] && (in_list(torch_recomputable, op) ||
			 (pol == MC_TORCH_INDUCTOR && in_list(torch_inductor_extra, op)));
}

/* Is the labelled node fusible for the policy (recomputable or random)? */
static int torch_fusible(enum mc_policy pol, const char *label)
{
	char op[64];

	if (getitem_label(label))
		return 1;
	aten_op(label, op, sizeof(op));
	return torch_recomputable_op(pol, op) || (op[0] && in_list(torch_random, op));
}

/* Do most forward nodes carry "aten.X.Y" labels (remat_torch's joint graphs)? */
static int aten_overload_labels(const struct remat_graph *g)
{
	int32_t v, with = 0, all = 0;

	for (v = 0; v < g->n; v++) {
		if (g->kind[v] != REMAT_KIND_FORWARD)
			continue;
		all++;
		with += g->label && g->label[v] && strncmp(g->label[v], "aten.", 5) == 0;
	}
	return all > 0 && 2 * with >= all;
}

enum { MC_FWD = 1, MC_BWD = 2 };

struct mincut {
	const struct remat_graph *g;
	uint8_t *phase;      /* [n] 0 (not needed, or input), MC_FWD, MC_BWD */
	uint8_t *hard;       /* [n] never recomputed */
	uint8_t *soft;       /* [n] banned by the policy, may be lifted */
	uint8_t *ban;        /* [n] banned in the current cut */
	uint8_t *bwd_reads;  /* [n] a forward value the backward phase reads */
	uint8_t *recomp;     /* [n] recomputed in the backward (current cut) */
	uint8_t *saved_v;    /* [n] saved for the backward (current cut) */
	uint8_t *done;       /* [n] scratch: recomputed already */
	int32_t *fidx;       /* [n] index among forward vertices, -1 */
	int32_t *stack;      /* [n] scratch */
	int32_t nf;          /* forward vertices (forward phase + inputs) */
	double *cap;         /* [n] capacity of a forward vertex's edge */
	int32_t *cand;       /* soft-banned nodes, best candidates first */
	int32_t ncand;
	double scale;        /* capacity = mem * scale + 1 (tie-break) */
	int64_t saved_bytes; /* of the current cut */
	int32_t saved, recomputed;
	/* The cut of the schedule kept so far. */
	int32_t kept_k, kept_saved, kept_recomputed;
	int64_t kept_saved_bytes;
};

static void mc_release(struct mincut *m)
{
	free(m->phase);
	free(m->hard);
	free(m->soft);
	free(m->ban);
	free(m->bwd_reads);
	free(m->recomp);
	free(m->saved_v);
	free(m->done);
	free(m->fidx);
	free(m->stack);
	free(m->cand);
	free(m->cap);
}

/* Does s name a compute-intensive operator (case-insensitive)? */
static int intensive_label(const char *s)
{
	static const char *const ops[] = { "mm", "matmul", "linear", "einsum", "conv",
					   "scaled_dot_product", NULL };
	char low[256];
	size_t i;
	int k;

	if (!s)
		return 0;
	for (i = 0; s[i] && i + 1 < sizeof(low); i++)
		low[i] = (char)tolower((unsigned char)s[i]);
	low[i] = '\0';
	for (k = 0; ops[k]; k++)
		if (strstr(low, ops[k]))
			return 1;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A candidate for recomputation, ranked by memory per unit of cost. */
struct cand {
	double ratio;
	int32_t pos;     /* topological position: ties, earlier first */
	int32_t v;
};

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->ratio != y->ratio)
		return x->ratio > y->ratio ? -1 : 1;
	return (x->pos > y->pos) - (x->pos < y->pos);
}

/*
 * The torch policies: bans (as hard ones) and PyTorch's weights as
 * capacities, from the phases mc_init() found.
 */
static int mc_torch_policy(struct mincut *m, enum mc_policy pol, struct remat_error *err)
{
	const struct remat_graph *g = m->g;
	int32_t *dist = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	int32_t i, k, v;

	if (!dist)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in mincut");
	/* Distance to the backward: 0 outside the forward, else 1 + the least of its readers'. */
	for (i = g->n - 1; i >= 0; i--) {
		v = g->topo[i];
		if (m->fidx[v] < 0 || m->phase[v] == MC_BWD) {
			dist[v] = 0;
			continue;
		}
		dist[v] = 1000000000;
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if ((m->fidx[u] >= 0 || m->phase[u]) && dist[u] + 1 < dist[v])
				dist[v] = dist[u] + 1;
		}
	}
	for (v = 0; v < g->n; v++) {
		const char *lab = g->label ? g->label[v] : NULL;
		int materialized = g->kind[v] == REMAT_KIND_INPUT || !torch_fusible(pol, lab);
		double w;

		if (m->fidx[v] < 0)
			continue;
		for (k = g->use_off[v]; !materialized && k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if ((m->fidx[u] >= 0 || m->phase[u]) &&
			    !torch_fusible(pol, g->label ? g->label[u] : NULL))
				materialized = 1;
		}
		w = floor((double)g->mem[v] * pow(1.1, dist[v] < 1 ? 1 : dist[v] > 100 ? 100 :
						  dist[v]));
		m->cap[v] = materialized ? w : 2 * w;
		if (m->phase[v] != MC_FWD || m->hard[v] || getitem_label(lab))
			continue;
		{
			char op[64];
			int64_t in_bytes = 0;

			aten_op(lab, op, sizeof(op));
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
				in_bytes += g->mem[g->in_idx[k]];
			if (!torch_recomputable_op(pol, op))
				m->hard[v] = 1;    /* not on the list: random ops, matmuls, norms ... */
			else if (pol == MC_TORCH_INDUCTOR && dist[v] > 4)
				m->hard[v] = 1;
			else if (g->mem[v] * 4 < in_bytes)
				m->hard[v] = 1;    /* shrinks its inputs 4 times or more */
		}
	}
	free(dist);
	return REMAT_OK;
}

/* Steps 1 and 2 (or the torch policies). */
static int mc_init(struct mincut *m, const struct remat_graph *g, int ban_intensive,
		   enum mc_policy pol, struct remat_error *err)
{
	size_t n1 = (size_t)g->n + 1;
	int32_t i, k, v, nrat = 0, any_label = 0;
	double *ratio = NULL, median = 0;
	int64_t max_mem = 0;

	memset(m, 0, sizeof(*m));
	m->g = g;
	m->phase = calloc(n1, 1);
	m->hard = calloc(n1, 1);
	m->soft = calloc(n1, 1);
	m->ban = calloc(n1, 1);
	m->bwd_reads = calloc(n1, 1);
	m->recomp = calloc(n1, 1);
	m->saved_v = calloc(n1, 1);
	m->done = calloc(n1, 1);
	m->fidx = malloc(sizeof(int32_t) * n1);
	m->stack = malloc(sizeof(int32_t) * n1);
	m->cand = malloc(sizeof(int32_t) * n1);
	m->cap = calloc(n1, sizeof(double));
	ratio = malloc(sizeof(double) * n1);
	if (!m->phase || !m->hard || !m->soft || !m->ban || !m->bwd_reads || !m->recomp ||
	    !m->saved_v || !m->done || !m->fidx || !m->stack || !m->cand || !m->cap || !ratio) {
		free(ratio);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in mincut");
	}
	remat_i_needed(g, m->done); /* done doubles as "needed" here */
	for (i = 0; i < g->n; i++) {
		v = g->topo[i];
		m->fidx[v] = -1;
		if (!m->done[v])
			continue;
		if (g->kind[v] == REMAT_KIND_INPUT) {
			m->fidx[v] = m->nf++;
			m->hard[v] = 1;
			continue;
		}
		m->phase[v] = g->kind[v] == REMAT_KIND_BACKWARD ? MC_BWD : MC_FWD;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (m->phase[g->in_idx[k]] == MC_BWD)
				m->phase[v] = MC_BWD;
		if (m->phase[v] == MC_FWD) {
			m->fidx[v] = m->nf++;
			m->hard[v] = g->is_output[v] || !g->recompute[v];
			if (g->label && g->label[v] && intensive_label(g->label[v]))
				any_label = 1;
		}
	}
	for (v = 0; v < g->n; v++) {
		if (m->phase[v] != MC_BWD)
			continue;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (m->fidx[g->in_idx[k]] >= 0)
				m->bwd_reads[g->in_idx[k]] = 1;
	}
	memset(m->done, 0, n1);
	for (v = 0; v < g->n; v++) {
		if (m->phase[v] != MC_FWD)
			continue;
		if (g->mem[v] > 0)
			ratio[nrat++] = g->cost[v] / (double)g->mem[v];
		if (g->mem[v] > max_mem)
			max_mem = g->mem[v];
	}
	if (nrat > 0) {
		qsort(ratio, (size_t)nrat, sizeof(double), cmp_double);
		median = ratio[nrat / 2];
	}
	for (v = 0; pol == MC_REMAT && ban_intensive && v < g->n; v++) {
		if (m->phase[v] != MC_FWD || m->hard[v])
			continue;
		if (any_label)
			m->soft[v] = g->label[v] && intensive_label(g->label[v]);
		else
			m->soft[v] = g->mem[v] > 0 && median > 0 &&
				     g->cost[v] / (double)g->mem[v] >= MC_INTENSIVE_RATIO * median;
		if (m->soft[v])
			m->cand[m->ncand++] = v;
	}
	free(ratio);
	if (m->ncand > 0) {
		struct cand *c = malloc(sizeof(*c) * (size_t)m->ncand);

		if (!c)
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in mincut");
		for (i = 0; i < m->ncand; i++) {
			v = m->cand[i];
			c[i].ratio = g->cost[v] > 0 ? (double)g->mem[v] / g->cost[v] : HUGE_VAL;
			c[i].pos = g->topo_pos[v];
			c[i].v = v;
		}
		qsort(c, (size_t)m->ncand, sizeof(*c), cmp_cand);
		for (i = 0; i < m->ncand; i++)
			m->cand[i] = c[i].v;
		free(c);
	}
	/*
	 * Capacities mem * scale + 1: the fewest values among cuts of the
	 * fewest bytes, as long as the sum stays exact in a double.
	 */
	m->scale = (double)m->nf + 1;
	if ((double)max_mem * m->scale * ((double)m->nf + 1) > 9007199254740992.0)
		m->scale = 0;
	if (pol != MC_REMAT)
		return mc_torch_policy(m, pol, err);
	for (v = 0; v < g->n; v++)
		if (m->fidx[v] >= 0)
			m->cap[v] = (double)g->mem[v] * (m->scale > 0 ? m->scale : 1) +
				    (m->scale > 0 ? 1 : 0);
	return REMAT_OK;
}

/* Steps 3 and 4 with the current bans: fills recomp, saved counts. */
static int mc_cut(struct mincut *m, struct remat_error *err)
{
	const struct remat_graph *g = m->g;
	igraph_vector_int_t edges, part;
	igraph_vector_t cap;
	igraph_t G;
	igraph_real_t flow;
	int64_t ne = 0;
	double inf = 1, c;
	uint8_t *src_side = NULL;
	int32_t v, k;
	int rc = REMAT_OK, have_g = 0;

	remat_i_igraph_setup();
	if (igraph_vector_int_init(&edges, 0))
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in mincut");
	if (igraph_vector_int_init(&part, 0)) {
		igraph_vector_int_destroy(&edges);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in mincut");
	}
	if (igraph_vector_init(&cap, 0)) {
		igraph_vector_int_destroy(&edges);
		igraph_vector_int_destroy(&part);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in mincut");
	}
	for (v = 0; v < g->n; v++)
		if (m->fidx[v] >= 0)
			inf += m->cap[v] + 1;
	/* Vertices: 0 source, 1 sink, 2 + 2f in, 3 + 2f out. */
#define IN(v) (2 + 2 * (igraph_integer_t)m->fidx[v])
#define OUT(v) (3 + 2 * (igraph_integer_t)m->fidx[v])
#define EDGE(a, b, w)                                                              \
	do {                                                                       \
		if (igraph_vector_int_push_back(&edges, (a)) ||                    \
		    igraph_vector_int_push_back(&edges, (b)) ||                    \
		    igraph_vector_push_back(&cap, (w))) {                          \
			rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in mincut"); \
			goto done;                                                 \
		}                                                                  \
		ne++;                                                              \
	} while (0)
	for (v = 0; v < g->n; v++) {
		if (m->fidx[v] < 0)
			continue;
		c = m->cap[v];
		EDGE(IN(v), OUT(v), c);
		if (m->hard[v] || m->ban[v])
			EDGE(0, IN(v), inf);
		if (m->bwd_reads[v])
			EDGE(OUT(v), 1, inf);
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			int32_t u = g->in_idx[k];

			if (m->fidx[u] >= 0)
				EDGE(OUT(u), IN(v), inf);
		}
	}
	rc = remat_i_igraph_check(igraph_create(&G, &edges, 2 + 2 * (igraph_integer_t)m->nf,
						IGRAPH_DIRECTED), "mincut", err);
	if (rc)
		goto done;
	have_g = 1;
	rc = remat_i_igraph_check(igraph_maxflow(&G, &flow, NULL, NULL, &part, NULL, 0, 1,
						 &cap, NULL), "mincut", err);
	if (rc)
		goto done;
	src_side = calloc((size_t)2 * (size_t)m->nf + 2, 1);
	if (!src_side) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in mincut");
		goto done;
	}
	for (k = 0; k < (int32_t)igraph_vector_int_size(&part); k++)
		src_side[VECTOR(part)[k]] = 1;
	m->saved = m->recomputed = 0;
	m->saved_bytes = 0;
	for (v = 0; v < g->n; v++) {
		m->recomp[v] = 0;
		m->saved_v[v] = 0;
		if (m->fidx[v] < 0)
			continue;
		if (src_side[IN(v)] && !src_side[OUT(v)]) {
			m->saved_v[v] = 1;
			m->saved++;
			m->saved_bytes += g->mem[v];
		} else if (!src_side[IN(v)] && !src_side[OUT(v)]) {
			m->recomp[v] = 1;
			m->recomputed++;
		}
	}
#undef IN
#undef OUT
#undef EDGE
done:
	(void)ne;
	free(src_side);
	if (have_g)
		igraph_destroy(&G);
	igraph_vector_int_destroy(&edges);
	igraph_vector_int_destroy(&part);
	igraph_vector_destroy(&cap);
	return rc;
}

/* Recompute v after the recomputed nodes it reads (iteratively). */
static int recompute(struct mincut *m, int32_t v, struct remat_schedule *out,
		     struct remat_error *err)
{
	const struct remat_graph *g = m->g;
	int32_t sp = 0, k;

	if (m->done[v])
		return REMAT_OK;
	m->stack[sp++] = v;
	m->done[v] = 1;
	/*
	 * Depth-first with an explicit stack: a node is emitted once every
	 * recomputed input before it has been; inputs are visited in
	 * topological order, so the emitted order is topological.
	 */
	while (sp > 0) {
		int32_t u = m->stack[sp - 1], next = -1;

		for (k = g->in_off[u]; k < g->in_off[u + 1]; k++) {
			int32_t w = g->in_idx[k];

			if (m->recomp[w] && !m->done[w] &&
			    (next < 0 || g->topo_pos[w] < g->topo_pos[next]))
				next = w;
		}
		if (next >= 0) {
			m->done[next] = 1;
			m->stack[sp++] = next;
			continue;
		}
		REMAT_TRY(remat_schedule_push(out, REMAT_OP_COMPUTE, u, err));
		sp--;
	}
	return REMAT_OK;
}

/* Step 5: the compute order of the current cut. */
static int mc_schedule(struct mincut *m, struct remat_schedule *out, struct remat_error *err)
{
	const struct remat_graph *g = m->g;
	int32_t i, k;

	remat_schedule_clear(out);
	memset(m->done, 0, (size_t)g->n);
	for (i = 0; i < g->n; i++) {
		int32_t v = g->topo[i];

		if (m->phase[v] == MC_FWD)
			REMAT_TRY(remat_schedule_push(out, REMAT_OP_COMPUTE, v, err));
	}
	for (i = 0; i < g->n; i++) {
		int32_t v = g->topo[i];

		if (m->phase[v] != MC_BWD)
			continue;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (m->recomp[g->in_idx[k]])
				REMAT_TRY(recompute(m, g->in_idx[k], out, err));
		REMAT_TRY(remat_schedule_push(out, REMAT_OP_COMPUTE, v, err));
	}
	return REMAT_OK;
}

/* Cut with the first k candidates allowed; offer the schedule to best. */
static int mc_try(struct mincut *m, const struct remat_plan_request *req, int32_t k,
		  struct remat_i_best *best, struct remat_schedule *tmp, int *fits,
		  struct remat_error *err)
{
	struct remat_sim_result r;
	int32_t i;
	int kept;

	for (i = 0; i < m->ncand; i++)
		m->ban[m->cand[i]] = i >= k;
	REMAT_TRY(mc_cut(m, err));
	REMAT_TRY(mc_schedule(m, tmp, err));
	REMAT_TRY(remat_i_best_offer(best, "mincut", m->g, req->budget, tmp, &r, &kept, err));
	*fits = r.feasible;
	if (kept) {
		m->kept_k = k;
		m->kept_saved = m->saved;
		m->kept_saved_bytes = m->saved_bytes;
		m->kept_recomputed = m->recomputed;
	}
	return REMAT_OK;
}

/* Step 1's test: does the backward phase read any forward value? */
static int mc_check_training(const struct mincut *m, struct remat_error *err)
{
	int32_t v;

	for (v = 0; v < m->g->n; v++)
		if (m->bwd_reads[v] && m->g->kind[v] != REMAT_KIND_INPUT)
			return REMAT_OK;
	return REMAT_FAIL(err, REMAT_ENOFIT, "mincut: '%s' is not a training graph: no "
			  "backward node reads a forward value, so there is nothing to save "
			  "or recompute", m->g->name);
}

int remat_i_mincut_cut(const struct remat_graph *g, int ban_intensive, uint8_t *saved,
		       uint8_t *recomputed, int64_t *saved_bytes, struct remat_error *err)
{
	struct mincut m;
	int32_t i;
	int rc;

	rc = mc_init(&m, g, ban_intensive, MC_REMAT, err);
	if (rc == REMAT_OK)
		rc = mc_check_training(&m, err);
	for (i = 0; rc == REMAT_OK && i < m.ncand; i++)
		m.ban[m.cand[i]] = 1;
	if (rc == REMAT_OK)
		rc = mc_cut(&m, err);
	if (rc == REMAT_OK) {
		memcpy(saved, m.saved_v, (size_t)g->n);
		memcpy(recomputed, m.recomp, (size_t)g->n);
		*saved_bytes = m.saved_bytes;
	}
	mc_release(&m);
	return rc;
}

static int mincut_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		       struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	const char *ban = remat_opt_get(req, "ban"), *ps = remat_opt_get(req, "policy");
	struct remat_i_best best;
	struct remat_schedule tmp;
	struct mincut m;
	enum mc_policy pol;
	int32_t lo, hi, k;
	int rc, fits = 0;

	if (ban && strcmp(ban, "intensive") != 0 && strcmp(ban, "none") != 0)
		return REMAT_FAIL(err, REMAT_EUSAGE, "option '--ban': expected 'intensive' or "
				  "'none', got '%s'", ban);
	if (!ps)
		pol = aten_overload_labels(g) ? MC_TORCH : MC_REMAT;
	else if (strcmp(ps, "remat") == 0)
		pol = MC_REMAT;
	else if (strcmp(ps, "torch-1.13") == 0)
		pol = MC_TORCH;
	else if (strcmp(ps, "torch-1.13-inductor") == 0)
		pol = MC_TORCH_INDUCTOR;
	else
		return REMAT_FAIL(err, REMAT_EUSAGE, "option '--policy': expected 'remat', "
				  "'torch-1.13' or 'torch-1.13-inductor', got '%s'", ps);
	if (ban && pol != MC_REMAT)
		return REMAT_FAIL(err, REMAT_EUSAGE, "option '--ban' is the remat policy's; this "
				  "plan uses '%s' (give '--policy remat')",
				  pol == MC_TORCH ? "torch-1.13" : "torch-1.13-inductor");
	rc = mc_init(&m, g, !ban || strcmp(ban, "intensive") == 0, pol, err);
	if (rc == REMAT_OK)
		rc = mc_check_training(&m, err);
	if (rc) {
		mc_release(&m);
		return rc;
	}
	remat_i_best_init(&best);
	remat_schedule_init(&tmp);
	/* Step 6: the default policy, then lift soft bans until one fits. */
	rc = mc_try(&m, req, 0, &best, &tmp, &fits, err);
	lo = 0;
	hi = -1;
	for (k = 1; rc == REMAT_OK && !fits && lo < m.ncand; k = k * 2 < m.ncand ? k * 2 : m.ncand) {
		if (remat_plan_expired(req))
			break;
		rc = mc_try(&m, req, k, &best, &tmp, &fits, err);
		if (fits)
			hi = k;
		else
			lo = k;
	}
	/* Bisection for the fewest lifted bans that fit: lo does not, hi does. */
	while (rc == REMAT_OK && hi > lo + 1 && !remat_plan_expired(req)) {
		int32_t mid = lo + (hi - lo) / 2;

		rc = mc_try(&m, req, mid, &best, &tmp, &fits, err);
		if (fits)
			hi = mid;
		else
			lo = mid;
	}
	if (rc == REMAT_OK && !best.have) {
		char b[32], p[32];

		remat_format_bytes(req->budget, b, sizeof(b));
		remat_format_bytes(best.least_peak, p, sizeof(p));
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "mincut found no partition within the budget "
				"of %s (%lld bytes): the lowest peak it reached is %s (%lld bytes), "
				"with every one of its %d candidate operators recomputable", b,
				(long long)req->budget, p, (long long)best.least_peak, (int)m.ncand);
	}
	if (rc == REMAT_OK) {
		rc = remat_i_best_take(&best, out, err);
		if (rc == REMAT_OK && req->report)
			snprintf(req->report->note, sizeof(req->report->note),
				 "mincut (%s policy): saves %d values (%lld bytes) for the backward "
				 "and recomputes %d nodes; %d of %d compute-intensive operators may "
				 "be recomputed", pol == MC_REMAT ? "remat" : pol == MC_TORCH ?
				 "torch-1.13" : "torch-1.13-inductor", (int)m.kept_saved,
				 (long long)m.kept_saved_bytes, (int)m.kept_recomputed, (int)m.kept_k,
				 (int)m.ncand);
	}
	remat_schedule_release(&tmp);
	remat_i_best_release(&best);
	mc_release(&m);
	return rc;
}

const struct remat_planner remat_i_planner_mincut = {
	.name = "mincut",
	.summary = "PyTorch's default training partitioner (torch.compile): a minimum s-t "
		   "cut of what to save for the backward, igraph max-flow",
	.flags = REMAT_PLANNER_AUTO,
	.options = mincut_options,
	.plan = mincut_plan,
};
