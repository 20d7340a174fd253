/*
 * chaintest.h - helpers shared by the chain planner tests: a generator of
 * chain-structured training graphs and a one-call planner runner.
 * Header-only (static functions), included by test_chen.c, test_rotor.c
 * and prop_chain.c.
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
 * Run planner on g within budget (options may be NULL).  Returns the
 * status, which must be REMAT_OK or REMAT_ENOFIT; on success the schedule
 * must be valid and within budget, and *res (may be NULL) describes it.
 */
static inline int ct_plan(const struct remat_graph *g, const char *planner, int64_t budget,
		   const struct remat_kv *opts, int n_opts, struct remat_sim_result *res)
{
	const struct remat_planner *p = remat_planner_find(planner);
	struct remat_plan_request req;
	struct remat_schedule s;
	struct remat_sim_result r;
	struct remat_error err;
	int rc;

	assert_non_null(p);
	memset(&req, 0, sizeof(req));
	req.graph = g;
	req.budget = budget;
	req.options = opts;
	req.n_options = n_opts;
	remat_error_clear(&err);
	remat_schedule_init(&s);
	rc = remat_plan_run(p, &req, &s, &r, &err);
	if (rc != REMAT_OK && rc != REMAT_ENOFIT)
		fail_msg("%s on %s at %lld: status %d: %s", planner, g->name, (long long)budget,
			 rc, err.msg);
	if (rc == REMAT_OK) {
		struct remat_sim_result again;

		assert_true(r.valid && r.feasible);
		assert_true(r.peak_mem <= budget);
		/* The schedule as written (explicit frees) replays the same. */
		assert_int_equal(remat_simulate(g, &s, budget, NULL, &again, NULL), REMAT_OK);
		assert_true(again.valid && again.feasible);
		assert_int_equal(again.peak_mem, r.peak_mem);
	}
	if (res)
		*res = r;
	remat_schedule_release(&s);
	return rc;
}

#endif
