/*
 * run.c - running a planner: the request helpers (options, deadline,
 * progress) and remat_plan_run(), which puts every schedule a planner
 * returns through the simulator before anyone sees it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/budget.h"
#include "remat/order.h"
#include "remat/planner.h"
#include "analysis/needed.h"
#include "plan/best.h"
#include "plan/request.h"
#include "solver/milp.h"

int remat_plan_expired(const struct remat_plan_request *req)
{
	return (req->stop && *req->stop) || (req->deadline > 0 && remat_now() >= req->deadline);
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
	r->order_peak = -1;
	r->peak_bound = -1;
	r->first_s = NAN;
	r->final_s = NAN;
	r->order_lower_bound = NAN;
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

int remat_i_request_with_option(struct remat_plan_request *sub, const char *key,
				const char *value, struct remat_kv **kv, struct remat_error *err)
{
	int i;

	*kv = malloc(sizeof(**kv) * ((size_t)sub->n_options + 1));
	if (!*kv)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	for (i = 0; i < sub->n_options; i++)
		(*kv)[i] = sub->options[i];
	(*kv)[i].key = key;
	(*kv)[i].value = value;
	sub->options = *kv;
	sub->n_options = i + 1;
	return REMAT_OK;
}

const struct remat_plan_request *remat_i_request_timed(const struct remat_plan_request *req,
							struct remat_plan_request *tmp)
{
	if (req->deadline > 0 || !(req->time_limit > 0))
		return req;
	*tmp = *req;
	tmp->deadline = remat_now() + req->time_limit;
	return tmp;
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
 * The rule every planner shares: the needed nodes once each in
 * topological order cost the least any schedule can cost, and their peak
 * is at most the no-remat peak.  Whenever that order fits the budget
 * (always, when the budget covers the no-remat peak) the runner offers it
 * beside whatever the planner returned, or in its place when the planner
 * found nothing or ran out of time, and keeps the better, so no planner
 * has to.  rc is the planner's status; returns the status to go on with.
 */
/* 1 when every node of g is needed by an output, 0 if not, -1 out of memory. */
static int all_needed(const struct remat_graph *g)
{
	uint8_t *need = malloc((size_t)g->n + 1);
	int32_t v;
	int all = 1;

	if (!need)
		return -1;
	remat_i_needed(g, need);
	for (v = 0; v < g->n && all; v++)
		all = need[v];
	free(need);
	return all;
}

static int offer_no_remat(const struct remat_planner *p,
			  const struct remat_plan_request *req, const struct remat_graph *pg,
			  const int32_t *map, int rc, struct remat_schedule *out,
			  struct remat_sim_result *res, struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_schedule ord;
	struct remat_sim_result r;
	struct remat_error e;
	int orc;

	/*
	 * A reference's schedule goes out as it is: a planner flagged so, or
	 * one asked for its natural answer (--natural, mincut's: PyTorch's
	 * partition itself, issue 37).
	 */
	if ((p->flags & REMAT_PLANNER_REFERENCE) ||
	    (remat_planner_has_option(p, "natural") && remat_opt_get(req, "natural")) ||
	    (rc != REMAT_OK && rc != REMAT_ENOFIT && rc != REMAT_ECANCELED))
		return rc;
	/*
	 * When every node is needed, the needed order is pg's topological
	 * order and its peak pg's no-remat peak: over the budget, it cannot
	 * fit, and the liveness pass and simulation (about a second each at
	 * 10^6 nodes, for every planner auto runs) are skipped.
	 */
	if (req->budget < pg->no_remat_peak) {
		int all = all_needed(pg);

		if (all < 0)
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		if (all)
			return rc;
	}
	remat_schedule_init(&ord);
	remat_error_clear(&e);
	/* In the order planned in (pg; map takes it back to g). */
	orc = remat_i_needed_order(pg, &ord, &e);
	if (orc == REMAT_OK && map)
		remat_schedule_map_nodes(&ord, map);
	if (orc == REMAT_OK)
		orc = remat_schedule_add_frees(g, &ord, &e);
	if (orc == REMAT_OK)
		orc = remat_simulate(g, &ord, req->budget, NULL, &r, &e);
	if (orc == REMAT_OK && !r.valid)
		orc = REMAT_FAIL(&e, REMAT_EINTERNAL, "the needed nodes in topological order "
				 "make an invalid schedule: %s", r.error);
	if (orc != REMAT_OK) {
		remat_schedule_release(&ord);
		if (err)
			*err = e;
		return orc;
	}
	if (!r.feasible || (rc == REMAT_OK && res->feasible &&
			    !remat_i_result_better(&r, ord.n, res, out->n))) {
		remat_schedule_release(&ord);
		return rc;
	}
	remat_schedule_swap(out, &ord);
	remat_schedule_release(&ord);
	*res = r;
	if (err)
		remat_error_clear(err);
	if (req->report) {
		struct remat_plan_report *rep = req->report;

		snprintf(rep->note, sizeof(rep->note),
			 "%s: the needed nodes in topological order fit the budget; nothing "
			 "is cheaper", p->name);
		/*
		 * Its cost is the least cost, a bound in every order: the bound
		 * and gap the planner gave described its own schedule (an outside
		 * review saw gap 0.125 beside lower_bound = cost).
		 */
		if (!isnan(rep->lower_bound) || (p->flags & REMAT_PLANNER_BOUNDS)) {
			rep->lower_bound = r.cost;
			rep->gap = 0;
			rep->optimal = 1;
		}
	}
	return REMAT_OK;
}

/*
 * The most of the time limit the runner spends finding an order: the
 * local search stops at its default number of moves (normally first, so
 * that runs are the same twice) or at this fraction of the time left.
 */
#define ORDER_TIME_SHARE 0.25

/*
 * req->order: the order to plan in.  *pg is the graph to plan on and
 * *map (g->n entries) takes its schedules back to req->graph; both stay
 * NULL when the file's order is kept (asked for, a reference planner, or
 * no lower peak found).
 */
static int reorder_for(const struct remat_planner *p, const struct remat_plan_request *req,
		       struct remat_graph **pg, int32_t **map, struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_order_opts o;
	int64_t peak;
	int rc;

	*pg = NULL;
	*map = NULL;
	if (req->order == REMAT_ORDER_FILE ||
	    (p->flags & (REMAT_PLANNER_REFERENCE | REMAT_PLANNER_ORDERS)))
		return REMAT_OK;
	remat_order_opts_init(&o);
	o.seed = req->seed;
	o.budget = req->budget;
	if (req->deadline > 0) {
		double now = remat_now();

		o.deadline = now + ORDER_TIME_SHARE * (req->deadline > now ? req->deadline - now : 0);
	}
	*map = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!*map)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	rc = remat_order_compute(g, (enum remat_order_method)req->order, &o, *map, &peak, err);
	if (rc == REMAT_OK && peak < g->no_remat_peak)
		rc = remat_graph_reorder(g, *map, pg, err);
	if (rc != REMAT_OK || !*pg) {
		free(*map);
		*map = NULL;
	}
	if (rc == REMAT_OK && req->report) {
		snprintf(req->report->order, sizeof(req->report->order), "%s",
			 *pg ? remat_order_method_name((enum remat_order_method)req->order) : "file");
		req->report->order_peak = *pg ? (*pg)->no_remat_peak : g->no_remat_peak;
	}
	return rc;
}

/*
 * Solves lost to solver crashes during this plan (issue 36): counted in
 * the report and said in its note, so that a run that lost work says so.
 */
static void report_crashes(struct remat_plan_report *r, int64_t n)
{
	int sig = 0;
	size_t len;

	if (n <= 0)
		return;
	remat_i_milp_crashes(&sig);
	r->solver_crashes = n;
	r->crash_signal = sig;
	len = strlen(r->note);
	snprintf(r->note + len, sizeof(r->note) - len, "%s%lld MILP solve%s lost to a crash "
		 "of the solver (signal %d, %s)", len ? "; " : "", (long long)n, n == 1 ? "" : "s",
		 sig, strsignal(sig));
}

int remat_plan_run(const struct remat_planner *p,
		   const struct remat_plan_request *req_in,
		   struct remat_schedule *out, struct remat_sim_result *res,
		   struct remat_error *err)
{
	struct remat_plan_request timed;
	const struct remat_plan_request *req = remat_i_request_timed(req_in, &timed);
	const struct remat_graph *g = req->graph;
	int64_t lb = remat_i_least_peak(g);
	int64_t crashes0 = remat_i_milp_crashes(NULL);
	struct remat_graph *pg = NULL;
	int32_t *map = NULL;
	int rc;

	no_result(res, req->budget, g);
	remat_schedule_clear(out);
	if (lb < 0)
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
	rc = reorder_for(p, req, &pg, &map, err);
	if (rc)
		return rc;
	if (pg) {
		/* Plan in the new order, then carry the schedule back to g. */
		struct remat_plan_request sub = *req;

		sub.graph = pg;
		sub.order = REMAT_ORDER_FILE;
		rc = p->plan(&sub, out, err);
		if (rc == REMAT_OK)
			remat_schedule_map_nodes(out, map);
	} else {
		rc = p->plan(req, out, err);
	}
	if (rc == REMAT_OK) {
		/*
		 * Frees alone (nothing to compute: every output is an input):
		 * the liveness pass writes the frees of every unused input
		 * instead, so that an executor holds no more than the schedule
		 * is scored at.
		 */
		if (remat_schedule_count_frees(out) == out->n)
			remat_schedule_clear(out);
		rc = remat_schedule_add_frees(g, out, err);
		if (rc == REMAT_OK)
			rc = remat_simulate(g, out, req->budget, NULL, res, err);
		if (rc)
			goto done;
		if (!res->valid) {
			rc = REMAT_FAIL(err, REMAT_EINTERNAL,
					"planner '%s' produced an invalid schedule: %s", p->name,
					res->error);
			goto done;
		}
	}
	rc = offer_no_remat(p, req, pg ? pg : g, map, rc, out, res, err);
	if (pg)
		rc = offer_no_remat(p, req, g, NULL, rc, out, res, err);
	if (rc != REMAT_OK) {
		remat_schedule_clear(out);
		no_result(res, req->budget, g);
		if (rc == REMAT_ENOFIT && err && !err->msg[0])
			REMAT_FAIL(err, REMAT_ENOFIT, "planner '%s' found no schedule within "
				   "the budget", p->name);
		goto done;
	}
	if (!res->feasible) {
		char b[32], pk[32];

		remat_format_bytes(req->budget, b, sizeof(b));
		remat_format_bytes(res->peak_mem, pk, sizeof(pk));
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "planner '%s' found no schedule within the "
				"budget of %s (%lld bytes): its best peaks at %s (%lld bytes)",
				p->name, b, (long long)req->budget, pk, (long long)res->peak_mem);
	}
done:
	if (req->report)
		report_crashes(req->report, remat_i_milp_crashes(NULL) - crashes0);
	remat_graph_free(pg);
	free(map);
	return rc;
}
