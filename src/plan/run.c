/*
 * run.c - running a planner: the request helpers (options, deadline,
 * progress) and remat_plan_run(), which puts every schedule a planner
 * returns through the simulator before anyone sees it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remat/budget.h"
#include "remat/planner.h"

double remat_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int remat_plan_expired(const struct remat_plan_request *req)
{
	return req->deadline > 0 && remat_now() >= req->deadline;
}

void remat_plan_progress(const struct remat_plan_request *req,
			 const struct remat_progress *p)
{
	if (req->progress)
		req->progress(req->progress_ctx, p);
}

void remat_plan_report_init(struct remat_plan_report *r)
{
	memset(r, 0, sizeof(*r));
	r->lower_bound = NAN;
	r->gap = NAN;
	r->optimal = -1;
}

const char *remat_opt_get(const struct remat_plan_request *req, const char *name)
{
	int i;

	/* The last occurrence wins, as on a command line. */
	for (i = req->n_options - 1; i >= 0; i--)
		if (strcmp(req->options[i].key, name) == 0)
			return req->options[i].value;
	return NULL;
}

int remat_opt_int(const struct remat_plan_request *req, const char *name,
		  long def, long lo, long hi, long *out, struct remat_error *err)
{
	const char *s = remat_opt_get(req, name);
	char *end;
	long v;

	*out = def;
	if (!s)
		return REMAT_OK;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return REMAT_FAIL(err, REMAT_EUSAGE,
				  "option '--%s': expected an integer from %ld to %ld, got '%s'",
				  name, lo, hi, s);
	*out = v;
	return REMAT_OK;
}

int remat_opt_double(const struct remat_plan_request *req, const char *name,
		     double def, double lo, double hi, double *out,
		     struct remat_error *err)
{
	const char *s = remat_opt_get(req, name);
	char *end;
	double v;

	*out = def;
	if (!s)
		return REMAT_OK;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
		return REMAT_FAIL(err, REMAT_EUSAGE,
				  "option '--%s': expected a number from %g to %g, got '%s'",
				  name, lo, hi, s);
	*out = v;
	return REMAT_OK;
}

int remat_planner_has_option(const struct remat_planner *p, const char *name)
{
	const struct remat_planner_option *o;

	for (o = p->options; o && o->name; o++)
		if (strcmp(o->name, name) == 0)
			return 1;
	return 0;
}

static void no_result(struct remat_sim_result *res, int64_t budget,
		      const struct remat_graph *g)
{
	memset(res, 0, sizeof(*res));
	res->valid = 0;
	res->feasible = 0;
	res->error_step = -1;
	res->error_node = -1;
	res->peak_step = -1;
	res->budget = budget;
	res->baseline_cost = g->baseline_cost;
}

/*
 * The least peak any schedule can have: the largest (distinct inputs + own
 * output + workspace) over the nodes that must be computed, those some
 * output depends on.  (Over all nodes this is FORMATS.md's
 * min_peak_lower_bound; nodes no output needs may be skipped.)
 */
static int needed_lower_bound(const struct remat_graph *g, int64_t *lb)
{
	uint8_t *need = calloc((size_t)g->n + 1, 1);
	int32_t i, k;

	*lb = 0;
	if (!need)
		return -1;
	for (i = 0; i < g->n_outputs; i++)
		need[g->outputs[i]] = 1;
	for (i = g->n - 1; i >= 0; i--) {
		int32_t v = g->topo[i];
		int64_t m;

		if (!need[v])
			continue;
		m = g->mem[v] + g->workspace[v];
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			need[g->in_idx[k]] = 1;
			m += g->mem[g->in_idx[k]];
		}
		if (g->kind[v] != REMAT_KIND_INPUT && m > *lb)
			*lb = m;
	}
	free(need);
	return 0;
}

int remat_plan_run(const struct remat_planner *p,
		   const struct remat_plan_request *req,
		   struct remat_schedule *out, struct remat_sim_result *res,
		   struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	int rc;

	int64_t lb;

	no_result(res, req->budget, g);
	remat_schedule_clear(out);
	if (needed_lower_bound(g, &lb))
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	if (req->budget < lb) {
		char b[32], l[32];

		remat_format_bytes(req->budget, b, sizeof(b));
		remat_format_bytes(lb, l, sizeof(l));
		return REMAT_FAIL(err, REMAT_ENOFIT,
				  "the budget of %s (%lld bytes) is below the lower bound of %s "
				  "(%lld bytes): some node's inputs, output and workspace alone "
				  "exceed it", b, (long long)req->budget, l, (long long)lb);
	}
	rc = p->plan(req, out, err);
	if (rc != REMAT_OK) {
		remat_schedule_clear(out);
		if (rc == REMAT_ENOFIT && err && !err->msg[0])
			REMAT_FAIL(err, REMAT_ENOFIT, "planner '%s' found no schedule within "
				   "the budget", p->name);
		return rc;
	}
	/*
	 * Frees alone (nothing to compute: every output is an input) are
	 * never better than the empty compute-only schedule, which drops
	 * every unused input before the first step.
	 */
	if (remat_schedule_count_frees(out) == out->n)
		remat_schedule_clear(out);
	if (remat_schedule_count_frees(out) == 0 && out->n > 0) {
		struct remat_schedule tmp;

		remat_schedule_init(&tmp);
		rc = remat_liveness(g, out, &tmp, err);
		if (rc) {
			remat_schedule_release(&tmp);
			return rc;
		}
		remat_schedule_swap(out, &tmp);
		remat_schedule_release(&tmp);
	}
	REMAT_TRY(remat_simulate(g, out, req->budget, NULL, res, err));
	if (!res->valid)
		return REMAT_FAIL(err, REMAT_EINTERNAL,
				  "planner '%s' produced an invalid schedule: %s", p->name,
				  res->error);
	if (!res->feasible)
		return REMAT_FAIL(err, REMAT_ENOFIT,
				  "planner '%s' found no schedule within the budget "
				  "(its best peaks at %lld bytes)", p->name,
				  (long long)res->peak_mem);
	return REMAT_OK;
}
