/* testutil.c - helpers for the cmocka tests; see testutil.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

const char *const TU_KUMAR =
	"{\"format\":\"remat-graph\",\"version\":1,\"name\":\"kumar-fig1\",\"nodes\":["
	"{\"id\":\"A\",\"mem\":1},"
	"{\"id\":\"B\",\"mem\":1,\"inputs\":[\"A\"]},"
	"{\"id\":\"C\",\"mem\":1,\"inputs\":[\"B\"]},"
	"{\"id\":\"D\",\"mem\":1,\"inputs\":[\"B\",\"C\"]},"
	"{\"id\":\"E\",\"mem\":1,\"inputs\":[\"A\",\"D\"]}]}";

struct remat_graph *tu_graph(const char *json)
{
	struct remat_graph *g = NULL;
	struct remat_error err;
	int rc;

	remat_error_clear(&err);
	rc = remat_graph_load_buffer(json, strlen(json), "t.json", &g, &err);
	if (rc)
		fail_msg("graph did not load: %s", err.msg);
	return g;
}

int tu_graph_err(const char *json, struct remat_error *err)
{
	struct remat_graph *g = NULL;
	int rc;

	remat_error_clear(err);
	rc = remat_graph_load_buffer(json, strlen(json), "t.json", &g, err);
	if (rc == REMAT_OK)
		remat_graph_free(g);
	return rc;
}

void tu_sched(const struct remat_graph *g, const char *text, struct remat_schedule *s)
{
	char buf[4096], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", text);
	remat_schedule_clear(s);
	for (tok = strtok_r(buf, " ,\n", &save); tok; tok = strtok_r(NULL, " ,\n", &save)) {
		int fr = tok[0] == '-';
		int32_t v = remat_graph_find(g, tok + fr);

		if (v < 0)
			fail_msg("unknown node '%s' in schedule text", tok + fr);
		assert_int_equal(remat_schedule_push(s, fr ? REMAT_OP_FREE : REMAT_OP_COMPUTE,
						     v, NULL), REMAT_OK);
	}
}

struct remat_sim_result tu_sim(const struct remat_graph *g, const char *text, int64_t budget)
{
	struct remat_schedule s;
	struct remat_sim_result r;

	remat_schedule_init(&s);
	tu_sched(g, text, &s);
	assert_int_equal(remat_simulate(g, &s, budget, NULL, &r, NULL), REMAT_OK);
	remat_schedule_release(&s);
	return r;
}

const char *tu_sched_text(const struct remat_graph *g, const struct remat_schedule *s)
{
	static char buf[8192];
	size_t used = 0;
	int64_t i;

	buf[0] = '\0';
	for (i = 0; i < s->n && used < sizeof(buf) - 64; i++) {
		int w = snprintf(buf + used, sizeof(buf) - used, "%s%s%s", i ? " " : "",
				 s->steps[i].op == REMAT_OP_FREE ? "-" : "",
				 g->id[s->steps[i].node]);
		if (w > 0)
			used += (size_t)w;
	}
	return buf;
}

uint64_t tu_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 88172645463325252ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

char *tu_random_any_dag_json(uint64_t *st, int n, int edge_pct)
{
	size_t cap = (size_t)n * (size_t)n * 12 + 4096, used = 0;
	char *b = malloc(cap);
	int i, j, first, n_in = 1 + (int)(tu_rand(st) % 3), outs = 0;

#define OUT(...) used += (size_t)snprintf(b + used, cap - used, __VA_ARGS__)
	OUT("{\"format\":\"remat-graph\",\"version\":1,\"nodes\":[");
	for (i = 0; i < n; i++) {
		OUT("%s{\"id\":\"v%d\",\"mem\":%d", i ? "," : "", i, (int)(tu_rand(st) % 9));
		if (i < n_in) {
			OUT(",\"kind\":\"input\"}");
			continue;
		}
		if (tu_rand(st) % 6 == 0)
			OUT(",\"workspace\":%d", (int)(tu_rand(st) % 12));
		if (tu_rand(st) % 8 == 0)
			OUT(",\"recompute\":false");
		OUT(",\"cost\":%d,\"inputs\":[", (int)(tu_rand(st) % 4));
		first = 1;
		for (j = 0; j < i; j++)
			if (j == i - 1 || tu_rand(st) % 100 < (uint64_t)edge_pct) {
				OUT("%s\"v%d\"", first ? "" : ",", j);
				first = 0;
			}
		OUT("]}");
	}
	OUT("],\"outputs\":[\"v%d\"", n - 1);
	for (i = 0; i < n - 1; i++)
		if (tu_rand(st) % 10 == 0 && outs++ < 3)
			OUT(",\"v%d\"", i);
	OUT("]}");
#undef OUT
	return b;
}

char *tu_random_graph_json(uint64_t *state, int n, double p, int training)
{
	size_t cap = (size_t)n * (size_t)n * 24 + 4096, used = 0;
	char *buf = malloc(cap);
	unsigned char *adj = calloc((size_t)n * (size_t)n + 1, 1); /* adj[j*n+i]: j -> i */
	unsigned char *from_x = calloc((size_t)n + 1, 1);
	int i, j, first;

	for (i = 0; i < n; i++) {
		from_x[i] = i == 0 || tu_rand(state) % 4 == 0;
		for (j = 0; j < i; j++)
			adj[j * n + i] = j == i - 1 || (double)(tu_rand(state) % 1000) < p * 1000;
	}
#define OUT(...) used += (size_t)snprintf(buf + used, cap - used, __VA_ARGS__)
	OUT("{\"format\":\"remat-graph\",\"version\":1,\"name\":\"rand\",\"nodes\":[");
	OUT("{\"id\":\"x\",\"kind\":\"input\",\"mem\":%d}", (int)(1 + tu_rand(state) % 8));
	for (i = 0; i < n; i++) {
		OUT(",{\"id\":\"n%d\",\"kind\":\"%s\",\"mem\":%d,\"cost\":%d,\"inputs\":[",
		    i, training ? "forward" : "op", (int)(1 + tu_rand(state) % 8),
		    (int)(1 + tu_rand(state) % 5));
		first = 1;
		if (from_x[i]) {
			OUT("\"x\"");
			first = 0;
		}
		for (j = 0; j < i; j++)
			if (adj[j * n + i]) {
				OUT("%s\"n%d\"", first ? "" : ",", j);
				first = 0;
			}
		OUT("]}");
	}
	if (training) {
		/*
		 * Checkmate's rule: b_i reads the gradients of i's consumers
		 * (the loss for the last node), i's inputs and i itself.
		 */
		OUT(",{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":1,\"inputs\":[\"n%d\"]}", n - 1);
		for (i = n - 1; i >= 0; i--) {
			OUT(",{\"id\":\"b%d\",\"kind\":\"backward\",\"grad_of\":\"n%d\",\"mem\":%d,"
			    "\"cost\":2,\"inputs\":[\"n%d\"", i, i, (int)(1 + tu_rand(state) % 8), i);
			if (i == n - 1)
				OUT(",\"loss\"");
			if (from_x[i])
				OUT(",\"x\"");
			for (j = 0; j < n; j++) {
				if (j < i && adj[j * n + i])
					OUT(",\"n%d\"", j);
				if (j > i && adj[i * n + j])
					OUT(",\"b%d\"", j);
			}
			OUT("]}");
		}
		OUT("],\"outputs\":[\"b0\"]}");
	} else {
		OUT("]}");
	}
#undef OUT
	free(adj);
	free(from_x);
	return buf;
}

/* ---- figures every schedule obeys, from FORMATS.md alone ---- */

void tu_needed(const struct remat_graph *g, uint8_t *need)
{
	int32_t i, k, v;

	memset(need, 0, (size_t)g->n);
	for (k = 0; k < g->n_outputs; k++)
		need[g->outputs[k]] = 1;
	for (i = g->n - 1; i >= 0; i--) {
		v = g->topo[i];
		if (need[v])
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
				need[g->in_idx[k]] = 1;
	}
}

double tu_least_cost(const struct remat_graph *g)
{
	uint8_t *need = malloc((size_t)g->n + 1);
	double c = 0;
	int32_t v;

	assert_non_null(need);
	tu_needed(g, need);
	for (v = 0; v < g->n; v++)
		if (need[v] && g->kind[v] != REMAT_KIND_INPUT)
			c += g->cost[v];
	free(need);
	return c;
}

int64_t tu_least_peak(const struct remat_graph *g)
{
	uint8_t *need = malloc((size_t)g->n + 1);
	int64_t best = 0;
	int32_t v, k;

	assert_non_null(need);
	tu_needed(g, need);
	for (v = 0; v < g->n; v++) {
		int64_t m;

		if (!need[v] || g->kind[v] == REMAT_KIND_INPUT)
			continue;
		m = g->mem[v] + g->workspace[v];
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
			m += g->mem[g->in_idx[k]];
		if (m > best)
			best = m;
	}
	free(need);
	return best;
}

int64_t tu_needed_order_peak(const struct remat_graph *g)
{
	uint8_t *need = malloc((size_t)g->n + 1);
	struct remat_schedule s;
	struct remat_sim_result r;
	int32_t i, v;

	assert_non_null(need);
	tu_needed(g, need);
	remat_schedule_init(&s);
	for (i = 0; i < g->n; i++) {
		v = g->topo[i];
		if (need[v] && g->kind[v] != REMAT_KIND_INPUT)
			assert_int_equal(remat_schedule_push(&s, REMAT_OP_COMPUTE, v, NULL), REMAT_OK);
	}
	assert_int_equal(remat_simulate(g, &s, -1, NULL, &r, NULL), REMAT_OK);
	if (!r.valid)
		fail_msg("the needed nodes in topological order are invalid: %s", r.error);
	remat_schedule_release(&s);
	free(need);
	return r.peak_mem;
}

/* ---- the plan-and-check helper ---- */

static int tu_close(double a, double b)
{
	double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);

	return fabs(a - b) <= 1e-9 * (m > 1 ? m : 1);
}

/* Does some output get computed more than once in s? */
static int output_recomputed(const struct remat_graph *g, const struct remat_schedule *s)
{
	uint8_t *seen = calloc((size_t)g->n + 1, 1);
	int64_t i;
	int twice = 0;

	assert_non_null(seen);
	for (i = 0; i < s->n && !twice; i++) {
		int32_t v = s->steps[i].node;

		if (s->steps[i].op != REMAT_OP_COMPUTE || !g->is_output[v])
			continue;
		twice = seen[v];
		seen[v] = 1;
	}
	free(seen);
	return twice;
}

/* t->rc is REMAT_OK: judge the schedule again, independently of the runner. */
static void check_schedule(const struct remat_graph *g, int64_t budget, const char *where,
			   const struct tu_plan *t)
{
	const struct remat_sim_result *r = &t->res;
	struct remat_sim_result again;
	struct remat_schedule co;
	int64_t i;

	if (!r->valid || !r->feasible || r->peak_mem > budget)
		fail_msg("%s: REMAT_OK with valid %d, feasible %d, peak %lld", where, r->valid,
			 r->feasible, (long long)r->peak_mem);
	assert_int_equal(remat_simulate(g, &t->s, budget, NULL, &again, NULL), REMAT_OK);
	if (!again.valid || !again.feasible)
		fail_msg("%s: the schedule simulates %s: %s (peak %lld): %s", where,
			 again.valid ? "over budget" : "invalid", again.error,
			 (long long)again.peak_mem, tu_sched_text(g, &t->s));
	if (again.peak_mem != r->peak_mem || !tu_close(again.cost, r->cost) ||
	    again.computes != r->computes || again.recomputes != r->recomputes)
		fail_msg("%s: the runner reported peak %lld cost %g computes %lld, the schedule "
			 "simulates to %lld, %g, %lld", where, (long long)r->peak_mem, r->cost,
			 (long long)r->computes, (long long)again.peak_mem, again.cost,
			 (long long)again.computes);
	if (r->cost < tu_least_cost(g) - 1e-9 * (1 + r->cost))
		fail_msg("%s: cost %g below the least cost %g", where, r->cost, tu_least_cost(g));
	if (r->peak_mem < tu_least_peak(g))
		fail_msg("%s: peak %lld below the least peak %lld", where, (long long)r->peak_mem,
			 (long long)tu_least_peak(g));
	/* Compute-only, its frees are at last use: valid, and no higher. */
	if (remat_schedule_count_frees(&t->s) == 0 || output_recomputed(g, &t->s))
		return;
	remat_schedule_init(&co);
	for (i = 0; i < t->s.n; i++)
		if (t->s.steps[i].op == REMAT_OP_COMPUTE)
			assert_int_equal(remat_schedule_push(&co, REMAT_OP_COMPUTE, t->s.steps[i].node,
							     NULL), REMAT_OK);
	if (co.n > 0) {
		assert_int_equal(remat_simulate(g, &co, -1, NULL, &again, NULL), REMAT_OK);
		if (!again.valid || again.peak_mem > r->peak_mem)
			fail_msg("%s: its computes alone (frees at last use) %s %lld: %s", where,
				 again.valid ? "peak higher, at" : "are invalid:",
				 (long long)again.peak_mem, again.valid ? "" : again.error);
	}
	remat_schedule_release(&co);
}

/* TU_OWN: the planner's own schedule, without the runner. */
static int own_run(const struct remat_graph *g, int64_t budget, const struct remat_planner *p,
		   const struct remat_plan_request *req, const char *where, struct tu_plan *t)
{
	memset(&t->res, 0, sizeof(t->res));
	remat_schedule_clear(&t->s);
	t->rc = p->plan(req, &t->s, &t->err);
	if (t->rc != REMAT_OK) {
		if (!(t->flags & TU_ANY_STATUS) && t->rc != REMAT_ENOFIT &&
		    !(t->rc == REMAT_ECANCELED && (t->flags & TU_MAY_CANCEL)))
			fail_msg("%s (its own schedule): status %d (%s): %s", where, t->rc,
				 remat_status_name(t->rc), t->err.msg);
		if (t->flags & TU_MUST_FIT)
			fail_msg("%s (its own schedule): none (status %d: %s), though one is known "
				 "to fit", where, t->rc, t->err.msg);
		return t->rc;
	}
	assert_int_equal(remat_simulate(g, &t->s, budget, NULL, &t->res, NULL), REMAT_OK);
	if (!t->res.valid)
		fail_msg("%s (its own schedule) is invalid: %s: %s", where, t->res.error,
			 tu_sched_text(g, &t->s));
	if ((t->flags & TU_MUST_FIT) && !t->res.feasible)
		fail_msg("%s (its own schedule) peaks at %lld, though a schedule is known to fit",
			 where, (long long)t->res.peak_mem);
	if (t->res.feasible) {
		check_schedule(g, budget, where, t);
		if (t->brute && (*t->brute < 0 || t->res.cost < *t->brute - 1e-9 * (1 + *t->brute)))
			fail_msg("%s (its own schedule): cost %g, but the brute force's least cost "
				 "is %g (-1: nothing fits)", where, t->res.cost, *t->brute);
	}
	return t->rc;
}

int tu_plan_run(const struct remat_graph *g, int64_t budget, struct tu_plan *t)
{
	const struct remat_planner *p = t->p ? t->p : remat_planner_find(t->planner);
	struct remat_plan_request req;
	char where[256];
	int64_t least_peak = tu_least_peak(g), order_peak = tu_needed_order_peak(g);
	double least_cost = tu_least_cost(g);
	int reference, must;

	if (!p)
		fail_msg("no planner '%s'", t->planner ? t->planner : "(null)");
	reference = (p->flags & REMAT_PLANNER_REFERENCE) != 0;
	snprintf(where, sizeof(where), "planner '%s' on '%s' (%d nodes) at budget %lld", p->name,
		 g->name ? g->name : "?", (int)g->n, (long long)budget);
	memset(&req, 0, sizeof(req));
	req.graph = g;
	req.budget = budget;
	req.seed = t->seed;
	req.options = t->opts;
	req.n_options = t->n_opts;
	if (t->time_limit > 0) {
		req.time_limit = t->time_limit;
		req.deadline = remat_now() + t->time_limit;
	} else if (t->time_limit < 0) {
		req.deadline = remat_now() - 1;
	}
	remat_plan_report_init(&t->rep);
	req.report = &t->rep;
	remat_error_clear(&t->err);
	if (t->flags & TU_OWN)
		return own_run(g, budget, p, &req, where, t);
	t->rc = remat_plan_run(p, &req, &t->s, &t->res, &t->err);

	if (!(t->flags & TU_ANY_STATUS)) {
		if (t->rc != REMAT_OK && t->rc != REMAT_ENOFIT &&
		    !(t->rc == REMAT_ECANCELED && (t->flags & TU_MAY_CANCEL)))
			fail_msg("%s: status %d (%s): %s", where, t->rc, remat_status_name(t->rc),
				 t->err.msg);
		must = (t->flags & TU_MUST_FIT) || budget >= g->no_remat_peak ||
		       (!reference && budget >= order_peak);
		if (must && t->rc != REMAT_OK)
			fail_msg("%s: no schedule (status %d: %s), though one is known to fit "
				 "(no-remat peak %lld, needed order's peak %lld%s)", where, t->rc,
				 t->err.msg, (long long)g->no_remat_peak, (long long)order_peak,
				 (t->flags & TU_MUST_FIT) ? ", and the caller knows one" : "");
		if (t->rc == REMAT_OK && !reference && budget >= order_peak &&
		    !tu_close(t->res.cost, least_cost))
			fail_msg("%s: cost %g where the needed nodes once each fit at %g", where,
				 t->res.cost, least_cost);
	}
	if (t->rc == REMAT_OK && budget < least_peak)
		fail_msg("%s: a schedule below the least peak %lld", where, (long long)least_peak);
	if (t->rc == REMAT_OK) {
		check_schedule(g, budget, where, t);
		if (t->brute && (*t->brute < 0 || t->res.cost < *t->brute - 1e-9 * (1 + *t->brute)))
			fail_msg("%s: cost %g, but the brute force's least cost is %g (-1: nothing "
				 "fits)", where, t->res.cost, *t->brute);
	} else if (t->res.valid) {
		struct remat_sim_result again;

		/* Over budget: the runner reports what the planner found. */
		if (t->rc != REMAT_ENOFIT || t->res.feasible || t->res.peak_mem <= budget)
			fail_msg("%s: status %d with a valid schedule (feasible %d, peak %lld)", where,
				 t->rc, t->res.feasible, (long long)t->res.peak_mem);
		assert_int_equal(remat_simulate(g, &t->s, budget, NULL, &again, NULL), REMAT_OK);
		assert_true(again.valid && again.peak_mem == t->res.peak_mem);
	} else if ((t->rc == REMAT_ENOFIT || t->rc == REMAT_ECANCELED) && t->s.n != 0) {
		fail_msg("%s: status %d, no result, but %lld steps left", where, t->rc,
			 (long long)t->s.n);
	}
	return t->rc;
}

void tu_plan_release(struct tu_plan *t)
{
	remat_schedule_release(&t->s);
}

int tu_plan(const struct remat_graph *g, const char *planner, int64_t budget,
	    const struct remat_kv *opts, int n_opts, unsigned flags,
	    struct remat_sim_result *res)
{
	struct tu_plan t;

	memset(&t, 0, sizeof(t));
	t.planner = planner;
	t.opts = opts;
	t.n_opts = n_opts;
	t.flags = flags;
	tu_plan_run(g, budget, &t);
	if (res)
		*res = t.res;
	tu_plan_release(&t);
	return t.rc;
}
