/*
 * stage_plan.c - stage-level plans and their expansion into node-level
 * compute orders; see stage_plan.h.
 */
#include <stdlib.h>
#include <string.h>

#include "remat/budget.h"
#include "plan/stage_plan.h"
#include "plan/best.h"

void remat_i_cops_init(struct remat_i_cops *s)
{
	memset(s, 0, sizeof(*s));
}

void remat_i_cops_release(struct remat_i_cops *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

int remat_i_cops_push(struct remat_i_cops *s, int op, int32_t stage,
		      struct remat_error *err)
{
	if (s->n == s->cap) {
		int64_t cap = s->cap ? 2 * s->cap : 64;
		struct remat_i_cop *v = realloc(s->v, sizeof(*v) * (size_t)cap);

		if (!v)
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n].op = op;
	s->v[s->n].stage = stage;
	s->n++;
	return REMAT_OK;
}

int remat_i_cops_equal(const struct remat_i_cops *a, const struct remat_i_cops *b)
{
	return a->n == b->n && (a->n == 0 ||
				memcmp(a->v, b->v, sizeof(*a->v) * (size_t)a->n) == 0);
}

/*
 * Sort node indices by topological position: insertion sort for short
 * runs, a pass over the marked span of the order for long ones.
 */
static void sort_by_topo(const struct remat_graph *g, int32_t *v, int32_t n)
{
	int32_t i, j;

	if (n > 32) {
		int32_t lo = g->n, hi = -1, k = 0;
		uint8_t *mark;

		for (i = 0; i < n; i++) {
			if (g->topo_pos[v[i]] < lo)
				lo = g->topo_pos[v[i]];
			if (g->topo_pos[v[i]] > hi)
				hi = g->topo_pos[v[i]];
		}
		mark = calloc((size_t)(hi - lo + 1), 1);
		if (mark) {
			for (i = 0; i < n; i++)
				mark[g->topo_pos[v[i]] - lo] = 1;
			for (i = lo; i <= hi; i++)
				if (mark[i - lo])
					v[k++] = g->topo[i];
			free(mark);
			return;
		}
	}
	for (i = 1; i < n; i++) {
		int32_t x = v[i];

		for (j = i; j > 0 && g->topo_pos[v[j - 1]] > g->topo_pos[x]; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* Compute, in topological order, v and every ancestor never computed yet. */
static int first_compute(struct remat_i_expander *x, int32_t v, struct remat_error *err)
{
	const struct remat_graph *g = x->g;
	int32_t top = 0, nf = 0, i, k;

	x->stack[top++] = v;
	x->computed[v] = 2;
	while (top > 0) {
		int32_t u = x->stack[--top];

		x->found[nf++] = u;
		for (k = g->in_off[u]; k < g->in_off[u + 1]; k++) {
			int32_t w = g->in_idx[k];

			if (!x->computed[w] && g->kind[w] != REMAT_KIND_INPUT) {
				x->computed[w] = 2;
				x->stack[top++] = w;
			}
		}
	}
	sort_by_topo(g, x->found, nf);
	for (i = 0; i < nf; i++) {
		REMAT_TRY(remat_schedule_push(x->out, REMAT_OP_COMPUTE, x->found[i], err));
		x->computed[x->found[i]] = 1;
	}
	return REMAT_OK;
}

int remat_i_expander_emit(struct remat_i_expander *x, int32_t v, struct remat_error *err)
{
	const struct remat_graph *g = x->g;
	int32_t k;

	if (g->kind[v] == REMAT_KIND_INPUT)
		return REMAT_OK;
	if (x->computed[v] && (g->is_output[v] || !g->recompute[v]))
		return REMAT_OK;   /* its one instance stays resident instead */
	if (!x->computed[v])
		return first_compute(x, v, err);
	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
		int32_t u = g->in_idx[k];

		if (!x->computed[u] && g->kind[u] != REMAT_KIND_INPUT)
			REMAT_TRY(first_compute(x, u, err));
	}
	return remat_schedule_push(x->out, REMAT_OP_COMPUTE, v, err);
}

int remat_i_expander_init(struct remat_i_expander *x, const struct remat_graph *g,
			  struct remat_schedule *out, struct remat_error *err)
{
	remat_schedule_clear(out);
	x->g = g;
	x->out = out;
	x->computed = calloc((size_t)g->n + 1, 1);
	x->stack = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	x->found = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!x->computed || !x->stack || !x->found) {
		remat_i_expander_finish(x, REMAT_ENOMEM, err);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory expanding a chain plan");
	}
	return REMAT_OK;
}

int remat_i_expander_forward(struct remat_i_expander *x, const struct remat_chain *c,
			     int32_t stage, int op, struct remat_error *err)
{
	const struct remat_stage *st = &c->stages[stage];
	int32_t i;

	for (i = 0; i < st->n_fwd; i++) {
		int32_t k = st->fwd_off + i;

		if (op == REMAT_I_FALL || (op == REMAT_I_FHELD && c->fwd_h[k]) ||
		    ((op == REMAT_I_FCK || op == REMAT_I_FNG) && c->fwd_ng[k]))
			REMAT_TRY(remat_i_expander_emit(x, c->fwd[k], err));
	}
	return REMAT_OK;
}

int remat_i_expander_finish(struct remat_i_expander *x, int rc, struct remat_error *err)
{
	const struct remat_graph *g = x->g;
	int32_t i;

	for (i = 0; i < g->n_outputs && rc == REMAT_OK; i++)
		if (!x->computed[g->outputs[i]] && g->kind[g->outputs[i]] != REMAT_KIND_INPUT)
			rc = first_compute(x, g->outputs[i], err);
	free(x->computed);
	free(x->stack);
	free(x->found);
	x->computed = NULL;
	x->stack = x->found = NULL;
	return rc;
}

int remat_i_chain_expand(const struct remat_graph *g, const struct remat_chain *c,
			 const struct remat_i_cops *ops, struct remat_schedule *out,
			 struct remat_error *err)
{
	struct remat_i_expander x;
	int64_t t;
	int32_t i;
	int rc = REMAT_OK;

	REMAT_TRY(remat_i_expander_init(&x, g, out, err));
	for (t = 0; t < ops->n && rc == REMAT_OK; t++) {
		const struct remat_stage *st = &c->stages[ops->v[t].stage];

		if (ops->v[t].op != REMAT_I_BWD) {
			rc = remat_i_expander_forward(&x, c, ops->v[t].stage, ops->v[t].op, err);
			continue;
		}
		for (i = 0; i < st->n_bwd && rc == REMAT_OK; i++)
			rc = remat_i_expander_emit(&x, c->bwd[st->bwd_off + i], err);
	}
	return remat_i_expander_finish(&x, rc, err);
}

int remat_i_chen_ops(int32_t L, const int32_t *starts, int32_t nseg,
		     struct remat_i_cops *ops, struct remat_error *err)
{
	int32_t t, s;

	for (t = 0; t + 1 < nseg; t++) {
		REMAT_TRY(remat_i_cops_push(ops, REMAT_I_FCK, starts[t], err));
		for (s = starts[t] + 1; s < starts[t + 1]; s++)
			REMAT_TRY(remat_i_cops_push(ops, REMAT_I_FNG, s, err));
	}
	for (t = nseg - 1; t >= 0; t--) {
		int32_t end = t + 1 < nseg ? starts[t + 1] : L;

		for (s = starts[t]; s < end; s++)
			REMAT_TRY(remat_i_cops_push(ops, REMAT_I_FALL, s, err));
		for (s = end - 1; s >= starts[t]; s--)
			REMAT_TRY(remat_i_cops_push(ops, REMAT_I_BWD, s, err));
	}
	return REMAT_OK;
}

/* The private option remat_i_chain_views() sets for its later runs. */
#define VIEW_OPTION "chain-view"

static enum remat_chain_view chain_view_of(const struct remat_plan_request *req)
{
	const char *v = remat_opt_get(req, VIEW_OPTION);

	if (v && strcmp(v, "plain") == 0)
		return REMAT_CHAIN_PLAIN;
	return v && strcmp(v, "cuts") == 0 ? REMAT_CHAIN_CUTS : REMAT_CHAIN_OBJECTS;
}

/*
 * The views worth a run besides the objects' view: the plain view where
 * the objects' view saw objects, the cuts view where it has more stages.
 */
static int other_views(const struct remat_graph *g, const char **names, int *n,
		       struct remat_error *err)
{
	struct remat_chain *c = NULL, *cuts = NULL;
	int32_t stages;

	*n = 0;
	REMAT_TRY(remat_chain_build(g, &c, err));
	if (c->n_aliases > 0 || c->n_static > 0)
		names[(*n)++] = "plain";
	stages = c->n_stages;
	remat_chain_free(c);
	REMAT_TRY(remat_chain_build_ex(g, REMAT_CHAIN_CUTS, &cuts, err));
	if (cuts->n_stages > stages)
		names[(*n)++] = "cuts";
	remat_chain_free(cuts);
	return REMAT_OK;
}

int remat_i_chain_views(const struct remat_plan_request *req, const char *planner,
			int (*plan)(const struct remat_plan_request *req,
				    struct remat_schedule *out, struct remat_error *err),
			struct remat_schedule *out, struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_plan_request sub = *req;
	struct remat_kv *kv = NULL;
	struct remat_i_best best;
	const char *views[2];
	int rc, n_views = 0, i;

	rc = plan(req, out, err);
	if ((rc != REMAT_OK && rc != REMAT_ENOFIT) || g->n_backward == 0 ||
	    remat_plan_expired(req))
		return rc;
	REMAT_TRY(other_views(g, views, &n_views, err));
	if (n_views == 0)
		return rc;
	kv = malloc(sizeof(*kv) * ((size_t)req->n_options + 1));
	if (!kv)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	if (req->n_options)
		memcpy(kv, req->options, sizeof(*kv) * (size_t)req->n_options);
	kv[req->n_options].key = VIEW_OPTION;
	sub.options = kv;
	sub.n_options = req->n_options + 1;
	remat_i_best_init(&best);
	if (rc == REMAT_OK)
		rc = remat_i_best_offer(&best, planner, g, req->budget, out, NULL, NULL, err);
	for (i = 0; i < n_views && (rc == REMAT_OK || rc == REMAT_ENOFIT) &&
		    !remat_plan_expired(req); i++) {
		struct remat_schedule s2;
		struct remat_error e2;
		int rc2;

		remat_error_clear(&e2);
		remat_schedule_init(&s2);
		kv[req->n_options].value = views[i];
		rc2 = plan(&sub, &s2, &e2);
		if (rc2 == REMAT_OK)
			rc2 = remat_i_best_offer(&best, planner, g, req->budget, &s2, NULL, NULL,
						 &e2);
		remat_schedule_release(&s2);
		if (rc2 != REMAT_OK && rc2 != REMAT_ENOFIT && rc2 != REMAT_ECANCELED) {
			rc = rc2; /* out of memory, or a bug: not to be hidden */
			*err = e2;
		}
	}
	if ((rc == REMAT_OK || rc == REMAT_ENOFIT) && best.have) {
		remat_schedule_clear(out);
		rc = remat_i_best_take(&best, out, err);
	}
	remat_i_best_release(&best);
	free(kv);
	return rc;
}

int remat_i_chain_run_start(struct remat_i_chain_run *r,
			    const struct remat_plan_request *req, const char *planner,
			    struct remat_error *err)
{
	const struct remat_graph *g = req->graph;

	memset(r, 0, sizeof(*r));
	r->req = req;
	r->planner = planner;
	remat_i_best_init(&r->best);
	remat_schedule_init(&r->tmp);
	if (g->n_backward == 0)
		return REMAT_OK;
	REMAT_TRY(remat_chain_build_ex(g, chain_view_of(req), &r->chain, err));
	if (r->chain->n_stages == 0) {
		remat_chain_free(r->chain);
		r->chain = NULL;
	}
	return REMAT_OK;
}

int remat_i_chain_run_offer(struct remat_i_chain_run *r, const struct remat_i_cops *ops,
			    int *kept, struct remat_error *err)
{
	struct remat_sim_result res;

	REMAT_TRY(remat_i_chain_expand(r->req->graph, r->chain, ops, &r->tmp, err));
	REMAT_TRY(remat_i_best_offer(&r->best, r->planner, r->req->graph, r->req->budget,
				   &r->tmp, &res, kept, err));
	r->offered++;
	return REMAT_OK;
}

int remat_i_chain_run_finish(struct remat_i_chain_run *r, int rc,
			     struct remat_schedule *out, struct remat_error *err)
{
	if (rc == REMAT_OK && !r->best.have && r->best.least_peak < 0 && r->chain) {
		char b[32];

		remat_format_bytes(r->req->budget, b, sizeof(b));
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "planner '%s' found no schedule within the "
				"budget of %s (%lld bytes): no plan of its chain view (%d stages) "
				"fits in it; planners of the whole graph (twremat, checkmate) may",
				r->planner, b, (long long)r->req->budget, (int)r->chain->n_stages);
	} else if (rc == REMAT_OK && !r->best.have && r->best.least_peak < 0) {
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "planner '%s' has no stage-level plan for "
				"this graph (no chain view: an inference graph, or nothing to "
				"plan)", r->planner);
	} else if (rc == REMAT_OK && !r->best.have) {
		char b[32], p[32];

		remat_format_bytes(r->req->budget, b, sizeof(b));
		remat_format_bytes(r->best.least_peak, p, sizeof(p));
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "planner '%s' found no schedule within the "
				"budget of %s (%lld bytes): the lowest peak it reached is %s "
				"(%lld bytes)", r->planner, b, (long long)r->req->budget, p,
				(long long)r->best.least_peak);
	}
	if (rc == REMAT_OK)
		rc = remat_i_best_take(&r->best, out, err);
	remat_chain_free(r->chain);
	r->chain = NULL;
	remat_schedule_release(&r->tmp);
	remat_i_best_release(&r->best);
	return rc;
}
