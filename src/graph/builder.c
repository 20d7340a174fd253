/*
 * builder.c - graph construction: node-by-node collection, id resolution,
 * validation, CSR inputs/users, the stable topological order and the
 * derived figures.  The JSON loader, importers, generators and tests all
 * build graphs through here, so every rule of FORMATS.md section 1 is
 * checked in one place.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/graph.h"
#include "remat/sim.h"
#include "core/arena.h"
#include "core/heap.h"
#include "graph/graph_internal.h"

struct pending {
	const char *id, *label, *grad_of;
	int64_t mem, workspace;
	double cost;
	int64_t in_start;
	int32_t in_count;
	uint8_t kind, recompute;
};

struct remat_graph_builder {
	struct remat_arena *arena;
	const char *source, *name, *cost_unit;
	int64_t fixed_bytes;      /* -1: not given */
	struct pending *nodes;
	int32_t n, cap;
	const char **in_ids;
	int64_t n_in, cap_in;
	const char **out_ids;
	int32_t n_out, cap_out;
	int outputs_given;
	int32_t *map;
	uint32_t mask;
};

static const char *const kind_names[] = {
	[REMAT_KIND_OP] = "op",
	[REMAT_KIND_INPUT] = "input",
	[REMAT_KIND_FORWARD] = "forward",
	[REMAT_KIND_LOSS] = "loss",
	[REMAT_KIND_BACKWARD] = "backward",
};

const char *remat_kind_name(enum remat_kind k)
{
	if ((unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]))
		return kind_names[k];
	return "?";
}

int remat_i_kind_parse(const char *s)
{
	unsigned i;

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (strcmp(s, kind_names[i]) == 0)
			return (int)i;
	return -1;
}

uint64_t remat_i_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h;
}

/* Slot for id in a table whose entries name nodes through ids[]. */
static uint32_t map_slot(const int32_t *map, uint32_t mask,
			 const char *const *ids, size_t stride, const char *id)
{
	uint32_t i = (uint32_t)remat_i_hash_str(id) & mask;

	while (map[i] >= 0) {
		const char *other = *(const char *const *)((const char *)ids +
							    (size_t)map[i] * stride);
		if (strcmp(other, id) == 0)
			break;
		i = (i + 1) & mask;
	}
	return i;
}

/* What a graph owns beyond its public arrays. */
struct remat_graph_store {
	struct remat_arena *arena; /* everything, the graph itself included */
	int32_t *idmap;            /* open-addressing id -> index table */
	uint32_t idmap_mask;
};

int32_t remat_graph_find(const struct remat_graph *g, const char *id)
{
	const struct remat_graph_store *st = g->store;
	uint32_t i;

	if (!st || !st->idmap)
		return -1;
	i = map_slot(st->idmap, st->idmap_mask, g->id, sizeof(g->id[0]), id);
	return st->idmap[i];
}

void remat_graph_free(struct remat_graph *g)
{
	if (!g)
		return;
	free(g->store->idmap);
	remat_i_arena_free(g->store->arena); /* g itself lives in the arena */
}

int remat_builder_new(const char *source, struct remat_graph_builder **out,
		      struct remat_error *err)
{
	struct remat_graph_builder *b = calloc(1, sizeof(*b));

	*out = NULL;
	if (!b || !(b->arena = remat_i_arena_new())) {
		free(b);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	b->source = remat_i_arena_strdup(b->arena, source ? source : "<graph>");
	b->fixed_bytes = -1;
	b->mask = 1023;
	b->map = malloc(sizeof(int32_t) * (b->mask + 1));
	if (!b->source || !b->map) {
		remat_builder_free(b);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	memset(b->map, 0xff, sizeof(int32_t) * (b->mask + 1));
	*out = b;
	return REMAT_OK;
}

void remat_builder_free(struct remat_graph_builder *b)
{
	if (!b)
		return;
	remat_i_arena_free(b->arena);
	free(b->nodes);
	free(b->in_ids);
	free(b->out_ids);
	free(b->map);
	free(b);
}

static int oom(struct remat_graph_builder *b, struct remat_error *err)
{
	return REMAT_FAIL(err, REMAT_ENOMEM, "%s: out of memory", b->source);
}

int remat_builder_set_name(struct remat_graph_builder *b, const char *name,
			   struct remat_error *err)
{
	if (!(b->name = remat_i_arena_strdup(b->arena, name)))
		return oom(b, err);
	return REMAT_OK;
}

int remat_builder_set_cost_unit(struct remat_graph_builder *b,
				const char *unit, struct remat_error *err)
{
	if (!(b->cost_unit = remat_i_arena_strdup(b->arena, unit)))
		return oom(b, err);
	return REMAT_OK;
}

void remat_builder_set_fixed_bytes(struct remat_graph_builder *b, int64_t bytes)
{
	b->fixed_bytes = bytes < 0 ? -1 : bytes;
}

void remat_builder_outputs_given(struct remat_graph_builder *b)
{
	b->outputs_given = 1;
}

static int grow(void **p, int64_t *cap, int64_t need, size_t elem)
{
	int64_t ncap = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	if ((uint64_t)ncap > SIZE_MAX / elem)
		return -1;
	np = realloc(*p, (size_t)ncap * elem);
	if (!np)
		return -1;
	*p = np;
	*cap = ncap;
	return 0;
}

static int map_grow(struct remat_graph_builder *b)
{
	uint32_t nmask = b->mask * 2 + 1, i;
	int32_t *nmap;

	if (nmask > (1u << 31) - 1)
		return -1;
	nmap = malloc(sizeof(int32_t) * ((size_t)nmask + 1));
	if (!nmap)
		return -1;
	memset(nmap, 0xff, sizeof(int32_t) * ((size_t)nmask + 1));
	for (i = 0; i <= b->mask; i++) {
		int32_t v = b->map[i];
		uint32_t j;

		if (v < 0)
			continue;
		j = (uint32_t)remat_i_hash_str(b->nodes[v].id) & nmask;
		while (nmap[j] >= 0)
			j = (j + 1) & nmask;
		nmap[j] = v;
	}
	free(b->map);
	b->map = nmap;
	b->mask = nmask;
	return 0;
}

static int32_t builder_find(const struct remat_graph_builder *b, const char *id)
{
	if (b->n == 0)
		return -1;
	return b->map[map_slot(b->map, b->mask, &b->nodes[0].id,
			       sizeof(struct pending), id)];
}

int remat_builder_add(struct remat_graph_builder *b,
		      const struct remat_node_spec *s, struct remat_error *err)
{
	struct pending *p;
	int64_t cap, i;
	uint32_t slot;
	const char *src = b->source;

	if (!s->id || !s->id[0])
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: nodes[%d]: 'id' must be a non-empty string", src, b->n);
	if ((unsigned)s->kind > REMAT_KIND_BACKWARD)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: node '%s': 'kind' is not valid",
				  src, s->id);
	if (s->mem < 0 || s->mem > REMAT_MAX_BYTES)
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: node '%s': 'mem' must be an integer from 0 to 2^53",
				  src, s->id);
	if (s->workspace < 0 || s->workspace > REMAT_MAX_BYTES)
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: node '%s': 'workspace' must be an integer from 0 to 2^53",
				  src, s->id);
	if (isnan(s->cost) || isinf(s->cost))
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: node '%s': 'cost' must be a finite number >= 0", src, s->id);
	if (s->n_inputs < 0 || (s->n_inputs > 0 && !s->inputs))
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: node '%s': %d 'inputs' %s", src,
				  s->id, s->n_inputs, s->n_inputs < 0 ? "(a count below 0)" :
				  "given as a NULL array");
	if (s->kind == REMAT_KIND_INPUT && s->n_inputs > 0)
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: node '%s': 'inputs' must be empty on an input node",
				  src, s->id);
	if (b->n == INT32_MAX - 1)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: too many nodes", src);

	/* Keep the table at most half full. */
	if ((uint32_t)b->n + 1 > (b->mask + 1) / 2 && map_grow(b))
		return oom(b, err);
	cap = b->cap;
	if (grow((void **)&b->nodes, &cap, (int64_t)b->n + 1, sizeof(*b->nodes)))
		return oom(b, err);
	b->cap = (int32_t)(cap > INT32_MAX ? INT32_MAX : cap);
	if (b->n > 0) {
		slot = map_slot(b->map, b->mask, &b->nodes[0].id, sizeof(struct pending), s->id);
		if (b->map[slot] >= 0)
			return REMAT_FAIL(err, REMAT_EINPUT,
					  "%s: node '%s': duplicate 'id' (also nodes[%d])",
					  src, s->id, b->map[slot]);
	} else {
		slot = (uint32_t)remat_i_hash_str(s->id) & b->mask;
	}
	if (grow((void **)&b->in_ids, &b->cap_in, b->n_in + s->n_inputs, sizeof(char *)))
		return oom(b, err);

	p = &b->nodes[b->n];
	memset(p, 0, sizeof(*p));
	p->id = remat_i_arena_strdup(b->arena, s->id);
	p->label = s->label ? remat_i_arena_strdup(b->arena, s->label) : NULL;
	p->grad_of = s->grad_of ? remat_i_arena_strdup(b->arena, s->grad_of) : NULL;
	if (!p->id || (s->label && !p->label) || (s->grad_of && !p->grad_of))
		return oom(b, err);
	p->kind = (uint8_t)s->kind;
	p->recompute = s->recompute ? 1 : 0;
	p->mem = s->mem;
	p->workspace = s->workspace;
	if (s->kind == REMAT_KIND_INPUT)
		p->cost = 0; /* inputs are never computed */
	else
		p->cost = s->cost < 0 ? 1.0 : s->cost;
	p->in_start = b->n_in;
	p->in_count = s->n_inputs;
	for (i = 0; i < s->n_inputs; i++) {
		const char *x = s->inputs[i];

		if (!x || !x[0])
			return REMAT_FAIL(err, REMAT_EINPUT,
					  "%s: node '%s': 'inputs' must hold non-empty ids", src, s->id);
		if (!(b->in_ids[b->n_in + i] = remat_i_arena_strdup(b->arena, x)))
			return oom(b, err);
	}
	b->n_in += s->n_inputs;
	b->map[slot] = b->n;
	b->n++;
	return REMAT_OK;
}

int remat_builder_add_output(struct remat_graph_builder *b, const char *id,
			     struct remat_error *err)
{
	int64_t cap = b->cap_out;

	b->outputs_given = 1;
	if (grow((void **)&b->out_ids, &cap, (int64_t)b->n_out + 1, sizeof(char *)))
		return oom(b, err);
	b->cap_out = (int32_t)cap;
	if (!(b->out_ids[b->n_out] = remat_i_arena_strdup(b->arena, id ? id : "")))
		return oom(b, err);
	b->n_out++;
	return REMAT_OK;
}

/* Kahn's ready set: a min-heap of node indices, "earliest in the file first". */
static int earlier(const void *ctx, int32_t a, int32_t b)
{
	(void)ctx;
	return a < b;
}

REMAT_HEAP_DEFINE(ready, int32_t, const void, earlier, REMAT_HEAP_UNTRACKED)

/* Describe one cycle among the nodes Kahn's algorithm could not order. */
static int report_cycle(struct remat_graph *g, const int32_t *indeg,
			struct remat_error *err)
{
	int32_t *seen_at = NULL, v = -1, i, len = 0, start;
	int32_t *path = NULL;
	char buf[400];
	size_t used = 0;
	int rc;

	for (i = 0; i < g->n; i++)
		if (indeg[i] > 0) {
			v = i;
			break;
		}
	seen_at = malloc(sizeof(int32_t) * (size_t)g->n);
	path = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!seen_at || !path) {
		free(seen_at);
		free(path);
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: the graph has a cycle", g->source);
	}
	for (i = 0; i < g->n; i++)
		seen_at[i] = -1;
	/* Walk backwards along unordered inputs until a node repeats. */
	while (seen_at[v] < 0) {
		int32_t k, next = -1;

		seen_at[v] = len;
		path[len++] = v;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			if (indeg[g->in_idx[k]] > 0) {
				next = g->in_idx[k];
				break;
			}
		v = next;
	}
	start = seen_at[v];
	/* path[start..len-1] follows inputs; print it in data-flow order. */
	buf[0] = '\0';
	for (i = len - 1; i >= start && used < sizeof(buf) - 40; i--) {
		int w = snprintf(buf + used, sizeof(buf) - used, "%s -> ",
				 g->id[path[i]]);
		if (w < 0)
			break;
		used += (size_t)w;
		if (used >= sizeof(buf))
			used = sizeof(buf) - 1;
	}
	if (i >= start)
		snprintf(buf + used, sizeof(buf) - used, "... -> ");
	rc = REMAT_FAIL(err, REMAT_EINPUT,
			"%s: node '%s': 'inputs' form a cycle: %s%s", g->source,
			g->id[path[len - 1]], buf, g->id[path[len - 1]]);
	free(seen_at);
	free(path);
	return rc;
}

static int64_t sat_add(int64_t a, int64_t b)
{
	return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int derive_figures(struct remat_graph *g, struct remat_error *err)
{
	struct remat_schedule s;
	struct remat_sim_result r;
	int32_t v, k;
	int64_t max_ws = 0;
	int rc;

	g->total_mem = 0;
	g->baseline_cost = 0;
	g->min_peak_lower_bound = 0;
	for (v = 0; v < g->n; v++) {
		g->total_mem = sat_add(g->total_mem, g->mem[v]);
		if (g->workspace[v] > max_ws)
			max_ws = g->workspace[v];
		if (g->kind[v] == REMAT_KIND_INPUT)
			continue;
		g->baseline_cost += g->cost[v];
	}
	/*
	 * Costs too large to add up (two of 1e308) would score a schedule inf,
	 * and so would one of 1e308 recomputed: at most DBL_MAX / 2^32 in all,
	 * so that a schedule of up to 2^32 computes scores a finite cost.
	 */
	if (!(g->baseline_cost <= DBL_MAX / 4294967296.0))
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: the nodes' 'cost' values add up to more than 4e298 (a "
				  "schedule that recomputes them could not be scored); scale them "
				  "down (cost_unit says the unit)", g->source);
	/* Keep every sum of sizes the simulator can form inside int64. */
	if (sat_add(g->total_mem, max_ws) == INT64_MAX)
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: 'mem' and 'workspace' add up to 2^63-1 bytes or more",
				  g->source);
	for (v = 0; v < g->n; v++) {
		int64_t need;

		if (g->kind[v] == REMAT_KIND_INPUT)
			continue;
		need = g->mem[v] + g->workspace[v];
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			need += g->mem[g->in_idx[k]];
		if (need > g->min_peak_lower_bound)
			g->min_peak_lower_bound = need;
	}
	remat_schedule_init(&s);
	rc = remat_schedule_topo(g, &s, err);
	if (rc == REMAT_OK)
		rc = remat_simulate(g, &s, -1, NULL, &r, err);
	remat_schedule_release(&s);
	if (rc)
		return rc;
	if (!r.valid)
		return REMAT_FAIL(err, REMAT_EINTERNAL,
				  "%s: the topological order does not simulate: %s",
				  g->source, r.error);
	g->no_remat_peak = r.peak_mem;
	return REMAT_OK;
}

/*
 * The graph in b's arena: names, per-node arrays (one spare slot each)
 * and the fields each node declared.  REMAT_ENOMEM (err not set).
 */
static int graph_new(struct remat_graph_builder *b, struct remat_graph **out)
{
	struct remat_arena *A = b->arena;
	struct remat_graph *g;
	const char *src = b->source;
	int32_t n = b->n, v;

	g = remat_i_arena_calloc(A, 1, sizeof(*g));
	if (!g || !(g->store = remat_i_arena_calloc(A, 1, sizeof(*g->store))))
		return REMAT_ENOMEM;
	g->store->arena = A;
	g->source = src;
	g->n = n;
	g->name = b->name ? b->name : remat_i_arena_strdup(A, strrchr(src, '/') ?
							 strrchr(src, '/') + 1 : src);
	g->cost_unit = b->cost_unit ? b->cost_unit : "unit";
	g->fixed_bytes = b->fixed_bytes;
	g->id = remat_i_arena_calloc(A, (size_t)n + 1, sizeof(char *));
	g->label = remat_i_arena_calloc(A, (size_t)n + 1, sizeof(char *));
	g->kind = remat_i_arena_calloc(A, (size_t)n + 1, 1);
	g->recompute = remat_i_arena_calloc(A, (size_t)n + 1, 1);
	g->is_output = remat_i_arena_calloc(A, (size_t)n + 1, 1);
	g->mem = remat_i_arena_calloc(A, (size_t)n + 1, sizeof(int64_t));
	g->workspace = remat_i_arena_calloc(A, (size_t)n + 1, sizeof(int64_t));
	g->cost = remat_i_arena_calloc(A, (size_t)n + 1, sizeof(double));
	g->grad_of = remat_i_arena_calloc(A, (size_t)n + 1, sizeof(int32_t));
	g->in_off = remat_i_arena_calloc(A, (size_t)n + 1, sizeof(int32_t));
	g->use_off = remat_i_arena_calloc(A, (size_t)n + 2, sizeof(int32_t));
	g->topo = remat_i_arena_calloc(A, (size_t)n + 1, sizeof(int32_t));
	g->topo_pos = remat_i_arena_calloc(A, (size_t)n + 1, sizeof(int32_t));
	if (!g->name || !g->id || !g->label || !g->kind || !g->recompute ||
	    !g->is_output || !g->mem || !g->workspace || !g->cost || !g->grad_of ||
	    !g->in_off || !g->use_off || !g->topo || !g->topo_pos)
		return REMAT_ENOMEM;
	for (v = 0; v < n; v++) {
		const struct pending *p = &b->nodes[v];

		g->id[v] = p->id;
		g->label[v] = p->label;
		g->kind[v] = p->kind;
		g->recompute[v] = p->recompute;
		g->mem[v] = p->mem;
		g->workspace[v] = p->workspace;
		g->cost[v] = p->cost;
		g->grad_of[v] = -1;
		if (p->kind == REMAT_KIND_INPUT)
			g->n_inputs++;
		if (p->kind == REMAT_KIND_BACKWARD)
			g->n_backward++;
	}
	*out = g;
	return REMAT_OK;
}

/*
 * Resolve inputs, dropping duplicates, into CSR order, and grad_of.
 * REMAT_ENOMEM (err not set) or REMAT_EINPUT.
 */
static int resolve_inputs(struct remat_graph_builder *b, struct remat_graph *g,
			  struct remat_error *err)
{
	const char *src = b->source;
	int32_t n = b->n, v, k, *mark, *resolved;
	int64_t e = 0;
	int rc = REMAT_ENOMEM;

	mark = malloc(sizeof(int32_t) * ((size_t)n + 1));
	resolved = malloc(sizeof(int32_t) * ((size_t)b->n_in + 1));
	if (!mark || !resolved)
		goto done;
	for (v = 0; v < n; v++)
		mark[v] = -1;
	for (v = 0; v < n; v++) {
		const struct pending *p = &b->nodes[v];

		g->in_off[v] = (int32_t)e;
		for (k = 0; k < p->in_count; k++) {
			const char *x = b->in_ids[p->in_start + k];
			int32_t u = builder_find(b, x);

			if (u < 0) {
				rc = REMAT_FAIL(err, REMAT_EINPUT,
						"%s: node '%s': 'inputs': unknown node '%s'",
						src, p->id, x);
				goto done;
			}
			if (u == v) {
				rc = REMAT_FAIL(err, REMAT_EINPUT,
						"%s: node '%s': 'inputs' form a cycle: %s -> %s",
						src, p->id, p->id, p->id);
				goto done;
			}
			if (mark[u] == v)
				continue;
			mark[u] = v;
			if (e >= INT32_MAX) {
				rc = REMAT_FAIL(err, REMAT_EINPUT, "%s: too many edges", src);
				goto done;
			}
			resolved[e++] = u;
		}
		if (p->grad_of) {
			int32_t u = builder_find(b, p->grad_of);

			if (u < 0) {
				rc = REMAT_FAIL(err, REMAT_EINPUT,
						"%s: node '%s': 'grad_of': unknown node '%s'",
						src, p->id, p->grad_of);
				goto done;
			}
			g->grad_of[v] = u;
		}
	}
	g->in_off[n] = (int32_t)e;
	g->n_edges = e;
	g->in_idx = remat_i_arena_alloc(b->arena, sizeof(int32_t) * ((size_t)e + 1));
	g->use_idx = remat_i_arena_alloc(b->arena, sizeof(int32_t) * ((size_t)e + 1));
	if (!g->in_idx || !g->use_idx)
		goto done;
	memcpy(g->in_idx, resolved, sizeof(int32_t) * (size_t)e);
	rc = REMAT_OK;
done:
	free(mark);
	free(resolved);
	return rc;
}

/* Users: counting sort by producer, consumers in file order. */
static void link_users(struct remat_graph *g)
{
	int32_t n = g->n, v, k;

	for (k = 0; k < (int32_t)g->n_edges; k++)
		g->use_off[g->in_idx[k] + 2]++;
	for (v = 0; v < n; v++)
		g->use_off[v + 2] += g->use_off[v + 1];
	for (v = 0; v < n; v++)
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			g->use_idx[g->use_off[g->in_idx[k] + 1]++] = v;
}

/*
 * Stable Kahn: among ready nodes the earliest in the file first.
 * REMAT_ENOMEM (err not set) or REMAT_EINPUT naming a cycle.
 *
 * Not igraph_topological_sorting(): its order (ready nodes first in,
 * first out) is not the one FORMATS.md defines the no-remat peak by, and
 * it is 5-6x slower than this even without building an igraph_t
 * (bench/topo.sh, bench/RESULTS.md).
 */
static int topo_order(struct remat_graph *g, struct remat_error *err)
{
	int32_t n = g->n, v, k, *indeg, *heap, placed = 0;
	int64_t hlen = 0;
	int rc = REMAT_ENOMEM;

	indeg = malloc(sizeof(int32_t) * ((size_t)n + 1));
	heap = malloc(sizeof(int32_t) * ((size_t)n + 1));
	if (!indeg || !heap)
		goto done;
	for (v = 0; v < n; v++) {
		indeg[v] = g->in_off[v + 1] - g->in_off[v];
		if (indeg[v] == 0)
			ready_push(heap, &hlen, v, NULL);
	}
	while (hlen > 0) {
		int32_t u = ready_pop(heap, &hlen, NULL);

		g->topo_pos[u] = placed;
		g->topo[placed++] = u;
		for (k = g->use_off[u]; k < g->use_off[u + 1]; k++)
			if (--indeg[g->use_idx[k]] == 0)
				ready_push(heap, &hlen, g->use_idx[k], NULL);
	}
	rc = placed < n ? report_cycle(g, indeg, err) : REMAT_OK;
done:
	free(indeg);
	free(heap);
	return rc;
}

/*
 * Outputs: as given (deduplicated), or every node nobody uses.
 * REMAT_ENOMEM (err not set) or REMAT_EINPUT.
 */
static int resolve_outputs(struct remat_graph_builder *b, struct remat_graph *g,
			   struct remat_error *err)
{
	int32_t v, k;

	if (!b->outputs_given) {
		g->outputs = remat_i_arena_alloc(b->arena,
						 sizeof(int32_t) * ((size_t)g->n + 1));
		if (!g->outputs)
			return REMAT_ENOMEM;
		for (v = 0; v < g->n; v++)
			if (g->use_off[v + 1] == g->use_off[v]) {
				g->is_output[v] = 1;
				g->outputs[g->n_outputs++] = v;
			}
		return REMAT_OK;
	}
	g->outputs = remat_i_arena_alloc(b->arena, sizeof(int32_t) * ((size_t)b->n_out + 1));
	if (!g->outputs)
		return REMAT_ENOMEM;
	for (k = 0; k < b->n_out; k++) {
		int32_t u = builder_find(b, b->out_ids[k]);

		if (u < 0)
			return REMAT_FAIL(err, REMAT_EINPUT, "%s: 'outputs': unknown node '%s'",
					  b->source, b->out_ids[k]);
		if (!g->is_output[u]) {
			g->is_output[u] = 1;
			g->outputs[g->n_outputs++] = u;
		}
	}
	return REMAT_OK;
}

int remat_builder_finish(struct remat_graph_builder *b,
			 struct remat_graph **out, struct remat_error *err)
{
	struct remat_graph *g = NULL;
	int rc;

	*out = NULL;
	rc = graph_new(b, &g);
	if (rc == REMAT_OK)
		rc = resolve_inputs(b, g, err);
	if (rc == REMAT_OK) {
		link_users(g);
		rc = topo_order(g, err);
	}
	if (rc == REMAT_OK)
		rc = resolve_outputs(b, g, err);
	if (rc == REMAT_ENOMEM)
		rc = oom(b, err);
	if (rc)
		goto done;
	/* Hand the id table and the arena over to the graph. */
	g->store->idmap = b->map;
	g->store->idmap_mask = b->mask;
	b->map = NULL;
	b->arena = NULL;
	rc = derive_figures(g, err);
	if (rc)
		remat_graph_free(g);
	else
		*out = g;
done:
	remat_builder_free(b);
	return rc;
}
