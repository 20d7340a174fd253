/*
 * chaintest.h - helpers shared by the chain planner tests: a generator of
 * chain-structured training graphs (planners run through tu_plan(),
 * testutil.h).  Header-only (static functions), included by test_chen.c,
 * test_rotor.c and prop_chain.c.
 */
#ifndef REMAT_CHAINTEST_H
#define REMAT_CHAINTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define CT_MAX 256

/*
 * A training chain x -> f1 -> ... -> fn -> loss with backward nodes
 * b_n .. b_1 (grad_of f_i).  pattern 0 (PyTorch-like, Checkmate's linear
 * graphs): b_i reads the next gradient (b_{i+1}, or the loss), f_i and
 * f_{i-1} (x for b1).  pattern 1 (Checkmate's Keras extraction): b_i
 * reads the next gradient, f_i and the next layer's output (f_{i+1}, or
 * the loss).  The output is b1.
 */
struct ct_chain {
	int n, pattern;
	int64_t mx, mloss, mf[CT_MAX + 1], mb[CT_MAX + 1], wf[CT_MAX + 1];
	double cf[CT_MAX + 1], cb[CT_MAX + 1], closs;
	int norecomp[CT_MAX + 1];
};

/* Every tensor mem bytes, forward cost 1, backward cost 2, loss cost 1. */
static inline void ct_homogeneous(struct ct_chain *t, int n, int64_t mem, int pattern)
{
	int i;

	assert_true(n >= 1 && n <= CT_MAX);
	memset(t, 0, sizeof(*t));
	t->n = n;
	t->pattern = pattern;
	t->mx = mem;
	t->mloss = mem;
	t->closs = 1;
	for (i = 1; i <= n; i++) {
		t->mf[i] = t->mb[i] = mem;
		t->cf[i] = 1;
		t->cb[i] = 2;
	}
}

/* Sizes 1..maxmem (times scale) and whole costs 1..9 drawn from rs. */
static inline void ct_random(struct ct_chain *t, uint64_t *rs, int n, int64_t maxmem,
		      int64_t scale, int pattern)
{
	int i;

	assert_true(n >= 1 && n <= CT_MAX);
	memset(t, 0, sizeof(*t));
	t->n = n;
	t->pattern = pattern;
	t->mx = scale * (int64_t)(1 + tu_rand(rs) % (uint64_t)maxmem);
	t->mloss = scale * (int64_t)(1 + tu_rand(rs) % 2);
	t->closs = 1;
	for (i = 1; i <= n; i++) {
		t->mf[i] = scale * (int64_t)(1 + tu_rand(rs) % (uint64_t)maxmem);
		t->mb[i] = scale * (int64_t)(1 + tu_rand(rs) % (uint64_t)maxmem);
		t->cf[i] = (double)(1 + tu_rand(rs) % 9);
		t->cb[i] = (double)(1 + tu_rand(rs) % 9);
	}
}

static inline char *ct_json(const struct ct_chain *t)
{
	size_t cap = 4096 + (size_t)t->n * 400, used = 0;
	char *buf = malloc(cap);
	int i;

#define CT_OUT(...) used += (size_t)snprintf(buf + used, cap - used, __VA_ARGS__)
	CT_OUT("{\"format\":\"remat-graph\",\"version\":1,\"name\":\"ct%d\",\"nodes\":[", t->n);
	CT_OUT("{\"id\":\"x\",\"kind\":\"input\",\"mem\":%lld}", (long long)t->mx);
	for (i = 1; i <= t->n; i++) {
		CT_OUT(",{\"id\":\"f%d\",\"kind\":\"forward\",\"mem\":%lld,\"cost\":%.17g,"
		       "\"workspace\":%lld,\"inputs\":[\"", i, (long long)t->mf[i], t->cf[i],
		       (long long)t->wf[i]);
		if (i == 1)
			CT_OUT("x\"]");
		else
			CT_OUT("f%d\"]", i - 1);
		if (t->norecomp[i])
			CT_OUT(",\"recompute\":false");
		CT_OUT("}");
	}
	CT_OUT(",{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":%lld,\"cost\":%.17g,"
	       "\"inputs\":[\"f%d\"]}", (long long)t->mloss, t->closs, t->n);
	for (i = t->n; i >= 1; i--) {
		char next[16], other[16];

		if (i == t->n)
			snprintf(next, sizeof(next), "loss");
		else
			snprintf(next, sizeof(next), "b%d", i + 1);
		if (t->pattern == 0) {
			if (i == 1)
				snprintf(other, sizeof(other), "x");
			else
				snprintf(other, sizeof(other), "f%d", i - 1);
		} else {
			if (i == t->n)
				snprintf(other, sizeof(other), "loss");
			else
				snprintf(other, sizeof(other), "f%d", i + 1);
		}
		CT_OUT(",{\"id\":\"b%d\",\"kind\":\"backward\",\"grad_of\":\"f%d\",\"mem\":%lld,"
		       "\"cost\":%.17g,\"inputs\":[\"%s\",\"f%d\",\"%s\"]}", i, i,
		       (long long)t->mb[i], t->cb[i], next, i, other);
	}
	CT_OUT("],\"outputs\":[\"b1\"]}");
#undef CT_OUT
	return buf;
}

static inline struct remat_graph *ct_graph(const struct ct_chain *t)
{
	char *json = ct_json(t);
	struct remat_graph *g = tu_graph(json);

	free(json);
	return g;
}

/*
 * Known schedules of a ct_graph() chain of n layers, built here from the
 * node names (not by a planner), as compute orders: the simulator's
 * compute-only rule frees each value after its last use before its next
 * compute.
 */
static inline int32_t ct_node(const struct remat_graph *g, char kind, int i)
{
	char id[16];
	int32_t v;

	if (kind == 'l')
		snprintf(id, sizeof(id), "loss");
	else
		snprintf(id, sizeof(id), "%c%d", kind, i);
	v = remat_graph_find(g, id);
	assert_true(v >= 0);
	return v;
}

static inline void ct_push(struct remat_schedule *s, int32_t v)
{
	assert_int_equal(remat_schedule_push(s, REMAT_OP_COMPUTE, v, NULL), REMAT_OK);
}

/*
 * Single-level checkpointing (Chen et al. 2016, section 4): segments
 * start at layers starts[0] = 1 < starts[1] < ... < starts[ns - 1]
 * (1-based).  One forward pass over all segments but the last keeps the
 * segments' inputs; then, last segment first, each segment is computed
 * again from its input and its backward run.
 */
static inline void ct_segmented(const struct remat_graph *g, int n, const int *starts, int ns,
				struct remat_schedule *s)
{
	int t, i, end;

	remat_schedule_clear(s);
	for (i = 1; i < starts[ns - 1]; i++)
		ct_push(s, ct_node(g, 'f', i));
	for (t = ns - 1; t >= 0; t--) {
		end = t + 1 < ns ? starts[t + 1] : n + 1;
		for (i = starts[t]; i < end; i++)
			ct_push(s, ct_node(g, 'f', i));
		if (t == ns - 1)
			ct_push(s, ct_node(g, 'l', 0));
		for (i = end - 1; i >= starts[t]; i--)
			ct_push(s, ct_node(g, 'b', i));
	}
}

/* Chen's sqrt(n) segmentation: segments of floor(sqrt(n)) layers. */
static inline void ct_chen_sqrt(const struct remat_graph *g, int n, struct remat_schedule *s)
{
	int starts[CT_MAX + 1], ns = 0, c = 1, i;

	while ((c + 1) * (c + 1) <= n)
		c++;
	for (i = 1; i <= n; i += c)
		starts[ns++] = i;
	ct_segmented(g, n, starts, ns, s);
}

/*
 * The least memory, most computation schedule: for each layer l from the
 * last down, the forward again from x up to f_l (each layer once, keeping
 * only what the next layer and b_l read), then b_l.  Quadratic cost.
 */
static inline void ct_revolve_all(const struct remat_graph *g, int n, struct remat_schedule *s)
{
	int l, i;

	remat_schedule_clear(s);
	for (l = n; l >= 1; l--) {
		for (i = 1; i <= l; i++)
			ct_push(s, ct_node(g, 'f', i));
		if (l == n)
			ct_push(s, ct_node(g, 'l', 0));
		ct_push(s, ct_node(g, 'b', l));
	}
}

/* Peak of a compute order (it must be valid). */
static inline int64_t ct_peak(const struct remat_graph *g, const struct remat_schedule *s)
{
	struct remat_sim_result r;

	assert_int_equal(remat_simulate(g, s, -1, NULL, &r, NULL), REMAT_OK);
	if (!r.valid)
		fail_msg("constructed schedule invalid: %s: %s", r.error, tu_sched_text(g, s));
	return r.peak_mem;
}

#endif
