/*
 * gen.c - synthetic graphs: training chains, random layered DAGs (Gagrani
 * et al. 2022, appendix A) and U-Nets.  The algorithms are described with
 * their options in remat/gen.h.
 *
 * Determinism: random numbers come from splitmix64 (Steele, Lea and Flood
 * 2014) seeded with the caller's seed, integers in a range by rejection
 * (no modulo bias, no floating point), so a seed gives the same graph on
 * every platform.  The only floating-point draws are the exponential sizes
 * and geometric gaps of the layered generator (one log() each).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/gen.h"
#include "core/rand.h"
#include "graph/gen_internal.h"

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	return remat_i_rand_next(&r->s);
}

/* Uniform in [0, n), n >= 1. */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
	uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;

	do
		x = rng_next(r);
	while (x >= limit);
	return x % n;
}

/* Uniform in [lo, hi], lo <= hi. */
static int64_t rng_range(struct rng *r, int64_t lo, int64_t hi)
{
	return lo + (int64_t)rng_below(r, (uint64_t)(hi - lo) + 1);
}

/* Uniform in (0, 1]. */
static double rng_open01(struct rng *r)
{
	return (double)((rng_next(r) >> 11) + 1) * (1.0 / 9007199254740992.0);
}

static int bad(struct remat_error *err, const char *what)
{
	return REMAT_FAIL(err, REMAT_EUSAGE, "%s", what);
}

/* ---- chain ---------------------------------------------------------- */

void remat_gen_chain_opts_init(struct remat_gen_chain_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->n = 8;
	o->mem = 1 << 20;
	o->cost = 1;
	o->mem_min = 256 << 10;
	o->mem_max = 4 << 20;
	o->cost_min = 1;
	o->cost_max = 10;
	remat_train_opts_init(&o->train);
}

/* Chain backward names: "f7" -> "b7". */
static char *chain_bw_name(const struct remat_graph *fwd, int32_t v, void *ctx)
{
	char *s = strdup(fwd->id[v]);

	(void)ctx;
	if (s)
		s[0] = 'b';
	return s;
}

int remat_gen_chain(const struct remat_gen_chain_opts *o,
		    struct remat_graph **out, struct remat_error *err)
{
	struct remat_graph_builder *b = NULL;
	struct remat_graph *fwd = NULL;
	struct rng r = { o->seed };
	struct remat_node_spec s;
	char id[32], prev[32], name[64];
	const char *in[1];
	int64_t lo_c, hi_c, mem1 = 0;
	int32_t i;
	int rc;

	*out = NULL;
	if (o->n < 1 || o->n > 100000000)
		return bad(err, "a chain needs 1 to 10^8 layers");
	if (!o->random && (o->mem < 0 || o->mem > REMAT_MAX_BYTES))
		return bad(err, "the layer size must be an integer from 0 to 2^53");
	if (!o->random && !(o->cost >= 0 && o->cost <= 1e300))
		return bad(err, "the layer cost must be a finite number >= 0");
	if (o->random && (o->mem_min < 0 || o->mem_max > REMAT_MAX_BYTES ||
			  o->mem_min > o->mem_max))
		return bad(err, "the size range must satisfy 0 <= min <= max <= 2^53");
	lo_c = (int64_t)ceil(o->cost_min);
	hi_c = (int64_t)floor(o->cost_max);
	if (o->random && (!(o->cost_min >= 0) || !(o->cost_max <= 1e15) || lo_c > hi_c))
		return bad(err, "the cost range must hold an integer from min to max (0 <= min <= max <= 10^15)");

	REMAT_TRY(remat_builder_new("<chain>", &b, err));
	snprintf(name, sizeof(name), "chain%d", o->n);
	rc = remat_builder_set_name(b, o->forward_only && o->train.name ? o->train.name
					: name, err);
	memset(&s, 0, sizeof(s));
	s.recompute = 1;
	s.inputs = in;
	/* Draw every layer first so that x can take f1's size. */
	for (i = 1; rc == REMAT_OK && i <= o->n; i++) {
		int64_t mem = o->random ? rng_range(&r, o->mem_min, o->mem_max) : o->mem;
		double cost = o->random ? (double)rng_range(&r, lo_c, hi_c) : o->cost;

		if (i == 1) {
			mem1 = mem;
			s.id = "x";
			s.kind = REMAT_KIND_INPUT;
			s.mem = mem1;
			s.n_inputs = 0;
			rc = remat_builder_add(b, &s, err);
			snprintf(prev, sizeof(prev), "x");
			if (rc)
				break;
		}
		snprintf(id, sizeof(id), "f%d", i);
		in[0] = prev;
		s.id = id;
		s.kind = REMAT_KIND_FORWARD;
		s.mem = mem;
		s.cost = cost;
		s.n_inputs = 1;
		rc = remat_builder_add(b, &s, err);
		memcpy(prev, id, sizeof(prev));
	}
	if (rc) {
		remat_builder_free(b);
		return rc;
	}
	REMAT_TRY(remat_builder_finish(b, &fwd, err));
	if (o->forward_only) {
		*out = fwd;
		return REMAT_OK;
	}
	snprintf(name, sizeof(name), "train-chain%d", o->n);
	rc = remat_i_train(fwd, &o->train, chain_bw_name, NULL,
			   o->train.name ? o->train.name : name, out, err);
	remat_graph_free(fwd);
	return rc;
}

/* ---- random layered -------------------------------------------------- */

void remat_gen_layered_opts_init(struct remat_gen_layered_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->n = 100;
	o->width = 0.31;
	o->width_var = 0.75;
	o->edge_density = 0.2;
	o->skip_density = 0.14;
	o->mem_mean = 1900;
}

struct edgeset {      /* open-addressing set of (u, v) pairs */
	uint64_t *slot;   /* 0: empty; else ((u+1) << 32 | v) */
	uint64_t mask;
	int64_t count;
};

static int edgeset_add(struct edgeset *e, int32_t u, int32_t v)
{
	uint64_t key = ((uint64_t)(u + 1) << 32) | (uint32_t)v, i;

	if ((uint64_t)(e->count + 1) * 2 > e->mask + 1) {
		uint64_t nsize = (e->mask + 1) * 2, j;
		uint64_t *ns = calloc(nsize, sizeof(uint64_t));

		if (!ns)
			return -1;
		for (j = 0; j <= e->mask; j++) {
			uint64_t k = e->slot[j], h;

			if (!k)
				continue;
			h = (k * 0x9e3779b97f4a7c15ull) & (nsize - 1);
			while (ns[h])
				h = (h + 1) & (nsize - 1);
			ns[h] = k;
		}
		free(e->slot);
		e->slot = ns;
		e->mask = nsize - 1;
	}
	i = (key * 0x9e3779b97f4a7c15ull) & e->mask;
	while (e->slot[i]) {
		if (e->slot[i] == key)
			return 0;
		i = (i + 1) & e->mask;
	}
	e->slot[i] = key;
	e->count++;
	return 1;
}

struct layered {
	int32_t n, L;          /* nodes; inner layers 1..L */
	int32_t *lstart;       /* [L+2] first node of each layer; layer L+1 ends */
	int32_t *layer;        /* [n] */
	int32_t *eu, *ev;      /* edges */
	int64_t m, cap;
	struct edgeset set;
};

static int add_edge(struct layered *G, int32_t u, int32_t v)
{
	int added = edgeset_add(&G->set, u, v);

	if (added <= 0)
		return added;
	if (G->m == G->cap) {
		int64_t ncap = G->cap ? G->cap * 2 : 1024;
		int32_t *nu = realloc(G->eu, sizeof(int32_t) * (size_t)ncap);
		int32_t *nv;

		if (!nu)
			return -1;
		G->eu = nu;
		nv = realloc(G->ev, sizeof(int32_t) * (size_t)ncap);
		if (!nv)
			return -1;
		G->ev = nv;
		G->cap = ncap;
	}
	G->eu[G->m] = u;
	G->ev[G->m] = v;
	G->m++;
	return 1;
}

/* Step 1: layer widths.  Inner nodes are 2..n-1, in layer order. */
static int make_layers(struct layered *G, const struct remat_gen_layered_opts *o,
		       struct rng *r)
{
	double m = 2.0 * o->width * sqrt((double)o->n);
	int64_t lo = (int64_t)floor(m * (1.0 - o->width_var) + 0.5);
	int64_t hi = (int64_t)floor(m * (1.0 + o->width_var) + 0.5);
	int32_t placed = 0, inner = G->n - 2, v;

	if (lo < 1)
		lo = 1;
	if (hi < lo)
		hi = lo;
	G->lstart = malloc(sizeof(int32_t) * ((size_t)inner + 3));
	G->layer = malloc(sizeof(int32_t) * (size_t)G->n);
	if (!G->lstart || !G->layer)
		return -1;
	G->L = 0;
	while (placed < inner) {
		int64_t w = rng_range(r, lo, hi);

		if (w > inner - placed)
			w = inner - placed;
		G->L++;
		G->lstart[G->L] = 2 + placed;
		for (v = 2 + placed; v < 2 + placed + (int32_t)w; v++)
			G->layer[v] = G->L;
		placed += (int32_t)w;
	}
	G->lstart[G->L + 1] = G->n;
	G->lstart[0] = 0;
	G->layer[0] = 0;
	G->layer[1] = G->L + 1;
	return 0;
}

#define LSIZE(G, l) ((G)->lstart[(l) + 1] - (G)->lstart[(l)])

/*
 * Step 2: one uniform predecessor in the previous layer for every node of
 * layers 2..L, then every other pair of consecutive-layer nodes with
 * probability p, then one uniform successor for every node still without.
 */
static int consecutive_edges(struct layered *G, double p, struct rng *r)
{
	uint8_t *has_succ = calloc((size_t)G->n, 1);
	double lq = p < 1 ? log1p(-p) : 0;
	int32_t l, u, v;
	int rc = 0;

	if (!has_succ)
		return -1;
	for (l = 2; l <= G->L; l++)
		for (v = G->lstart[l]; v < G->lstart[l + 1]; v++) {
			u = G->lstart[l - 1] + (int32_t)rng_below(r, (uint64_t)LSIZE(G, l - 1));
			if (add_edge(G, u, v) < 0) {
				rc = -1;
				goto out;
			}
			has_succ[u] = 1;
		}
	for (l = 1; l < G->L && p > 0; l++) {
		int64_t pairs = (int64_t)LSIZE(G, l) * LSIZE(G, l + 1), k = -1;

		/* Geometric jumps from one success to the next: O(edges). */
		for (;;) {
			if (p >= 1) {
				k++;
			} else {
				double gap = floor(log(rng_open01(r)) / lq);

				if (gap >= (double)(pairs - k))
					break;
				k += 1 + (int64_t)gap;
			}
			if (k >= pairs)
				break;
			u = G->lstart[l] + (int32_t)(k / LSIZE(G, l + 1));
			v = G->lstart[l + 1] + (int32_t)(k % LSIZE(G, l + 1));
			if (add_edge(G, u, v) < 0) {
				rc = -1;
				goto out;
			}
			has_succ[u] = 1;
		}
	}
	for (l = 1; l < G->L; l++)
		for (u = G->lstart[l]; u < G->lstart[l + 1]; u++)
			if (!has_succ[u]) {
				v = G->lstart[l + 1] + (int32_t)rng_below(r, (uint64_t)LSIZE(G, l + 1));
				if (add_edge(G, u, v) < 0) {
					rc = -1;
					goto out;
				}
			}
out:
	free(has_succ);
	return rc;
}

/*
 * Edges expected from steps 2 and 3 (consecutive layers at density p,
 * plus the skip edges' share), to refuse a graph too large to make.
 */
#define REMAT_GEN_MAX_EDGES 5e7

static double expected_edges(const struct layered *G, const struct remat_gen_layered_opts *o)
{
	double e = 0;
	int32_t l;

	for (l = 1; l < G->L; l++)
		e += (double)LSIZE(G, l) * (double)LSIZE(G, l + 1) * o->edge_density;
	e += G->n; /* the edge every node gets at least */
	return e / (1.0 - o->skip_density);
}

/* Step 3: skip edges. */
static int skip_edges(struct layered *G, double sd, struct rng *r)
{
	int64_t want, possible = 0, made = 0;
	int32_t l;

	if (G->L < 3 || sd <= 0)
		return 0;
	for (l = 1; l + 2 <= G->L; l++)
		possible += (int64_t)LSIZE(G, l) * (G->lstart[G->L + 1] - G->lstart[l + 2]);
	want = (int64_t)floor(sd / (1.0 - sd) * (double)G->m + 0.5);
	if (want > possible)
		want = possible;
	while (made < want) {
		/* u uniform over layers 1..L-2, v over layers layer(u)+2..L. */
		int32_t u = G->lstart[1] +
			    (int32_t)rng_below(r, (uint64_t)(G->lstart[G->L - 1] - G->lstart[1]));
		int32_t first = G->lstart[G->layer[u] + 2];
		int32_t v = first + (int32_t)rng_below(r, (uint64_t)(G->lstart[G->L + 1] - first));
		int added = add_edge(G, u, v);

		if (added < 0)
			return -1;
		made += added;
	}
	return 0;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* Steps 4-5 and the builder. */
static int emit_layered(struct layered *G, const struct remat_gen_layered_opts *o,
			struct rng *r, struct remat_graph **out,
			struct remat_error *err)
{
	struct remat_graph_builder *b = NULL;
	int32_t *off = NULL, *src = NULL, *fill = NULL, v, k;
	char **ids = NULL;
	const char **ins = NULL;
	char name[160], label[32];
	int64_t e;
	int rc = REMAT_OK;

	off = calloc((size_t)G->n + 1, sizeof(int32_t));
	fill = calloc((size_t)G->n + 1, sizeof(int32_t));
	src = malloc(sizeof(int32_t) * ((size_t)G->m + 1));
	ids = calloc((size_t)G->n, sizeof(char *));
	ins = malloc(sizeof(char *) * ((size_t)G->n + 1));
	if (!off || !fill || !src || !ids || !ins)
		goto nomem;
	for (v = 0; v < G->n; v++) {
		char num[16];

		snprintf(num, sizeof(num), "%d", v);
		if (!(ids[v] = strdup(num)))
			goto nomem;
	}
	for (e = 0; e < G->m; e++)
		off[G->ev[e] + 1]++;
	for (v = 0; v < G->n; v++)
		off[v + 1] += off[v];
	for (e = 0; e < G->m; e++)
		src[off[G->ev[e]] + fill[G->ev[e]]++] = G->eu[e];
	rc = remat_builder_new("<layered>", &b, err);
	if (rc)
		goto out;
	snprintf(name, sizeof(name), "random_layered_n%d_w%g_nlv%g_ed%g_scd%g_seed%llu",
		 o->n, o->width, o->width_var, o->edge_density, o->skip_density,
		 (unsigned long long)o->seed);
	rc = remat_builder_set_name(b, o->name ? o->name : name, err);
	for (v = 0; rc == REMAT_OK && v < G->n; v++) {
		struct remat_node_spec s;
		double x = -log(rng_open01(r)) * (o->mem_mean / 10.0);

		memset(&s, 0, sizeof(s));
		s.id = ids[v];
		s.kind = REMAT_KIND_OP;
		s.recompute = 1;
		s.mem = 10 * (1 + (int64_t)floor(x < 1e14 ? x : 1e14));
		s.cost = (v < 2) ? 0 : (double)rng_range(r, 1, 1000);
		qsort(src + off[v], (size_t)(off[v + 1] - off[v]), sizeof(int32_t), cmp_i32);
		for (k = off[v]; k < off[v + 1]; k++)
			ins[k - off[v]] = ids[src[k]];
		s.inputs = ins;
		s.n_inputs = off[v + 1] - off[v];
		snprintf(label, sizeof(label), "layer %d", G->layer[v]);
		s.label = label;
		rc = remat_builder_add(b, &s, err);
	}
	if (rc == REMAT_OK) {
		rc = remat_builder_finish(b, out, err);
		b = NULL;
	}
	goto out;
nomem:
	rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
out:
	remat_builder_free(b);
	if (ids)
		for (v = 0; v < G->n; v++)
			free(ids[v]);
	free(ids);
	free(ins);
	free(off);
	free(fill);
	free(src);
	return rc;
}

int remat_gen_layered(const struct remat_gen_layered_opts *o,
		      struct remat_graph **out, struct remat_error *err)
{
	struct layered G;
	struct rng r = { o->seed };
	int32_t v;
	int rc;

	*out = NULL;
	if (o->n < 3 || o->n > 10000000)
		return bad(err, "a layered graph needs 3 to 10^7 nodes");
	if (!(o->width > 0) || o->width > 1e6)
		return bad(err, "the width must be a number > 0");
	if (!(o->width_var >= 0 && o->width_var <= 1))
		return bad(err, "the width variance must be a number from 0 to 1");
	if (!(o->edge_density >= 0 && o->edge_density <= 1))
		return bad(err, "the edge density must be a number from 0 to 1");
	if (!(o->skip_density >= 0 && o->skip_density < 1))
		return bad(err, "the skip density must be a number from 0 to below 1");
	if (!(o->mem_mean >= 0 && o->mem_mean <= 1e12))
		return bad(err, "the mean size must be a number from 0 to 10^12");
	memset(&G, 0, sizeof(G));
	G.n = o->n;
	G.set.mask = 1023;
	G.set.slot = calloc(G.set.mask + 1, sizeof(uint64_t));
	rc = !G.set.slot || make_layers(&G, o, &r) ? -1 : 0;
	if (rc == 0) {
		double e = expected_edges(&G, o);

		if (e > REMAT_GEN_MAX_EDGES) {
			/* Refuse before spending minutes and gigabytes on it. */
			double fit = o->edge_density * 1e7 / e;

			rc = REMAT_FAIL(err, REMAT_EUSAGE, "a layered graph of %lld nodes at edge "
					"density %g would have about %.0f million edges, more than "
					"the %.0f million remat gen makes; give --edge-density %.2g "
					"or less (about 10 million)", (long long)o->n,
					o->edge_density, e / 1e6, REMAT_GEN_MAX_EDGES / 1e6, fit);
			goto release;
		}
	}
	rc = (rc || consecutive_edges(&G, o->edge_density, &r) ||
	      skip_edges(&G, o->skip_density, &r)) ? -1 : 0;
	/* Step 4: source and sink. */
	for (v = G.lstart ? G.lstart[1] : 0; rc == 0 && v < G.lstart[2]; v++)
		rc = add_edge(&G, 0, v) < 0 ? -1 : 0;
	for (v = G.lstart ? G.lstart[G.L] : 0; rc == 0 && v < G.n; v++)
		rc = add_edge(&G, v, 1) < 0 ? -1 : 0;
	if (rc)
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	else
		rc = emit_layered(&G, o, &r, out, err);
release:
	free(G.lstart);
	free(G.layer);
	free(G.eu);
	free(G.ev);
	free(G.set.slot);
	return rc;
}

/* ---- U-Net ---------------------------------------------------------- */

void remat_gen_unet_opts_init(struct remat_gen_unet_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->depth = 4;
	o->mem = 8 << 20;
	remat_train_opts_init(&o->train_opts);
}

struct unet_b {
	struct remat_graph_builder *b;
	int64_t top;
	struct remat_error *err;
};

static int unet_add(struct unet_b *u, const char *id, enum remat_kind kind,
		    int64_t mem, double flop_factor, const char *label,
		    const char *in1, const char *in2)
{
	struct remat_node_spec s;
	const char *ins[2] = { in1, in2 };

	memset(&s, 0, sizeof(s));
	s.id = id;
	s.kind = kind;
	s.mem = mem;
	s.cost = flop_factor * (double)mem / (double)u->top;
	s.recompute = 1;
	s.label = label;
	s.inputs = ins;
	s.n_inputs = in2 ? 2 : in1 ? 1 : 0;
	return remat_builder_add(u->b, &s, u->err);
}

int remat_gen_unet(const struct remat_gen_unet_opts *o,
		   struct remat_graph **out, struct remat_error *err)
{
	struct remat_graph *fwd = NULL;
	struct unet_b u;
	char a[32], bb[32], p[32], prev[32], c[32], up[32], name[64];
	int32_t k, D = o->depth;
	int rc;

	*out = NULL;
	if (D < 1 || D > 40)
		return bad(err, "the U-Net depth must be from 1 to 40");
	if (o->mem < ((int64_t)1 << D) || o->mem > REMAT_MAX_BYTES / 2)
		return bad(err, "the U-Net top-level size must be from 2^depth to 2^52 bytes");
	u.top = o->mem;
	u.err = err;
	REMAT_TRY(remat_builder_new("<unet>", &u.b, err));
	snprintf(name, sizeof(name), "unet-d%d", D);
	rc = remat_builder_set_name(u.b, o->name && !o->train ? o->name : name, err);
	if (rc == REMAT_OK)
		rc = unet_add(&u, "x", REMAT_KIND_INPUT, o->mem, 0, "input", NULL, NULL);
	snprintf(prev, sizeof(prev), "x");
	/* Encoder: level k tensors are top >> (k-1) bytes. */
	for (k = 1; rc == REMAT_OK && k <= D; k++) {
		int64_t s = o->mem >> (k - 1);

		snprintf(a, sizeof(a), "e%da", k);
		snprintf(bb, sizeof(bb), "e%db", k);
		snprintf(p, sizeof(p), "p%d", k);
		rc = unet_add(&u, a, REMAT_KIND_FORWARD, s, 9, "conv", prev, NULL);
		if (rc == REMAT_OK)
			rc = unet_add(&u, bb, REMAT_KIND_FORWARD, s, 9, "conv", a, NULL);
		if (rc == REMAT_OK)
			rc = unet_add(&u, p, REMAT_KIND_FORWARD, s >> 1, 1, "pool", bb, NULL);
		memcpy(prev, p, sizeof(prev));
	}
	if (rc == REMAT_OK)
		rc = unet_add(&u, "m1", REMAT_KIND_FORWARD, o->mem >> D, 9, "conv", prev, NULL);
	if (rc == REMAT_OK)
		rc = unet_add(&u, "m2", REMAT_KIND_FORWARD, o->mem >> D, 9, "conv", "m1", NULL);
	snprintf(prev, sizeof(prev), "m2");
	/* Decoder: up, concat with the encoder's level (the long skip), convs. */
	for (k = D; rc == REMAT_OK && k >= 1; k--) {
		int64_t s = o->mem >> (k - 1);

		snprintf(up, sizeof(up), "u%d", k);
		snprintf(c, sizeof(c), "c%d", k);
		snprintf(bb, sizeof(bb), "e%db", k);
		snprintf(a, sizeof(a), "d%da", k);
		rc = unet_add(&u, up, REMAT_KIND_FORWARD, s, 1, "up", prev, NULL);
		if (rc == REMAT_OK)
			rc = unet_add(&u, c, REMAT_KIND_FORWARD, 2 * s, 1, "concat", up, bb);
		if (rc == REMAT_OK)
			rc = unet_add(&u, a, REMAT_KIND_FORWARD, s, 9, "conv", c, NULL);
		snprintf(bb, sizeof(bb), "d%db", k);
		if (rc == REMAT_OK)
			rc = unet_add(&u, bb, REMAT_KIND_FORWARD, s, 9, "conv", a, NULL);
		memcpy(prev, bb, sizeof(prev));
	}
	if (rc == REMAT_OK)
		rc = unet_add(&u, "head", REMAT_KIND_FORWARD, o->mem, 1, "conv1x1", prev, NULL);
	if (rc) {
		remat_builder_free(u.b);
		return rc;
	}
	REMAT_TRY(remat_builder_finish(u.b, &fwd, err));
	if (!o->train) {
		*out = fwd;
		return REMAT_OK;
	}
	snprintf(name, sizeof(name), "unet-d%d-train", D);
	rc = remat_i_train(fwd, &o->train_opts, NULL, NULL,
			   o->name ? o->name : o->train_opts.name ? o->train_opts.name : name,
			   out, err);
	remat_graph_free(fwd);
	return rc;
}
