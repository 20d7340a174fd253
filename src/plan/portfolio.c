/* portfolio.c - every fast planner, one after another; see portfolio.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/order.h"
#include "analysis/order_basic.h"
#include "plan/portfolio.h"

/* Orders the portfolio plans in: the file's, then up to two more. */
#define MAX_ORDERS 3

struct ordered {
	struct remat_graph *g;  /* NULL: req->graph itself */
	int32_t *map;           /* its nodes on req->graph */
};

void remat_i_portfolio_init(struct remat_i_portfolio *pf, const char *caller)
{
	memset(pf, 0, sizeof(*pf));
	pf->caller = caller;
	pf->incumbent = NAN;
	pf->bound = NAN;
	pf->first_failure = REMAT_OK;
	pf->order_share = 0.25;
}

/* Time for finding one order: a share of what is left. */
static double order_deadline(const struct remat_i_portfolio *pf, double deadline)
{
	double now = remat_now();

	if (deadline <= 0)
		return 0;
	return now + pf->order_share * (deadline > now ? deadline - now : 0);
}

/*
 * The orders to plan in (pf->orders): the file's, req->order's when its
 * peak is lower, and the budget order when the budget is below that
 * peak.  ord[0] is always the file's.
 */
static int build_orders(const struct remat_plan_request *req, struct remat_i_portfolio *pf,
			double deadline, struct ordered *ord, int *n, struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_order_opts o;
	int32_t *order = NULL;
	int64_t peak = g->no_remat_peak;
	int rc;

	*n = 1;
	ord[0].g = NULL;
	ord[0].map = NULL;
	pf->order_peak = g->no_remat_peak;
	if (!pf->orders || req->order == REMAT_ORDER_FILE)
		return REMAT_OK;
	remat_order_opts_init(&o);
	o.seed = req->seed;
	o.budget = req->budget;
	o.deadline = order_deadline(pf, deadline);
	if (req->time_limit > 0) {
		/*
		 * More moves with more time, by the limit asked for and not by
		 * the clock, so that a run that ends early is the same twice
		 * (the deadline is only a safety net).  1,000 moves per node
		 * for every 10 s, from a tenth of that to ten times.
		 */
		double k = req->time_limit / 10 < 0.1 ? 0.1 : req->time_limit / 10 > 10 ? 10
			: req->time_limit / 10;
		int64_t L = g->n - g->n_inputs;

		o.max_moves = (int64_t)(k * (double)(1000 * L < 5000000 ? 1000 * L : 5000000));
		if (o.max_moves < 1)
			o.max_moves = 1;
	}
	order = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!order)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	rc = remat_order_compute(g, (enum remat_order_method)(req->order == REMAT_ORDER_BUDGET ?
							     REMAT_ORDER_BEST : req->order),
				 &o, order, &peak, err);
	if (rc == REMAT_OK && peak < g->no_remat_peak) {
		rc = remat_graph_reorder(g, order, &ord[*n].g, err);
		if (rc == REMAT_OK) {
			ord[*n].map = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
			if (!ord[*n].map)
				rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
			else
				memcpy(ord[*n].map, order, sizeof(int32_t) * (size_t)g->n);
			(*n)++;
			pf->order_peak = peak;
		}
	}
	if (rc == REMAT_OK && (req->order == REMAT_ORDER_BEST || req->order == REMAT_ORDER_BUDGET) &&
	    req->budget < peak) {
		/* From that order on: the least memory above the budget. */
		int64_t p2 = peak;

		if (*n == 1)
			memcpy(order, g->topo, sizeof(int32_t) * (size_t)g->n);
		o.target = req->budget;
		o.deadline = order_deadline(pf, deadline);
		rc = remat_i_order_local_from(g, &o, order, &p2, err);
		if (rc == REMAT_OK && memcmp(order, *n > 1 ? ord[*n - 1].map : g->topo,
					     sizeof(int32_t) * (size_t)g->n) != 0) {
			rc = remat_graph_reorder(g, order, &ord[*n].g, err);
			if (rc == REMAT_OK) {
				ord[*n].map = order;
				order = NULL;
				(*n)++;
			}
		}
	}
	free(order);
	return rc;
}

static int is_fast(const struct remat_planner *p)
{
	return (p->flags & REMAT_PLANNER_AUTO) != 0;
}

/*
 * With a time limit and share_time, each planner gets an equal share of
 * what is left, so one slow planner cannot starve the ones after it; the
 * fast ones finish early and leave their time to the rest.
 */
static double planner_deadline(const struct remat_i_portfolio *pf, double deadline,
			       const struct remat_planner *const *pp, int orders_left)
{
	double now, left;
	int n = 0;

	if (deadline <= 0 || !pf->share_time)
		return deadline;
	for (pp++; *pp; pp++)
		if (is_fast(*pp))
			n++;
	/* This run, the other orders of this planner, the later planners' runs. */
	n = orders_left + n * (pf->n_orders > 0 ? pf->n_orders : 1);
	now = remat_now();
	left = deadline - now;
	if (n <= 1 || left <= 0)
		return deadline;
	return now + left / n;
}

/* Runs cut short by their share, run again after the others. */
#define MAX_RERUN 32

/* run_one's answer when the run is over by the deadline. */
#define PF_DEADLINE (-1)

/*
 * One planner in one order; the schedule goes to the callback.  own: the
 * planner's deadline (0: its share of what is left).
 */
static int run_one(const struct remat_plan_request *req, struct remat_i_portfolio *pf,
		   const struct remat_planner *p, const struct remat_planner *const *pp,
		   struct remat_plan_request *sub, const struct ordered *ord, int orders_left,
		   double deadline, double own, double t0, struct remat_schedule *cand,
		   int *offered, int *stop, struct remat_error *err)
{
	struct remat_sim_result r;
	struct remat_error e;
	struct remat_progress pr = { pf->caller, NULL, -1, NAN, NAN, 0 };
	char phase[64];
	int prc;

	if ((*offered || pf->strict_deadline) && deadline > 0 && remat_now() >= deadline)
		return PF_DEADLINE;
	/* What is being waited for: a search, by which planner. */
	snprintf(phase, sizeof(phase), "searching: %s", p->name);
	pr.phase = phase;
	pr.incumbent = pf->incumbent;
	pr.bound = pf->bound;
	pr.elapsed = remat_now() - t0;
	remat_plan_progress(req, &pr);
	remat_plan_report_init(sub->report);
	sub->graph = ord->g ? ord->g : req->graph;
	sub->deadline = own > 0 ? own : planner_deadline(pf, deadline, pp, orders_left);
	remat_error_clear(&e);
	prc = remat_plan_run(p, sub, cand, &r, &e);
	if (prc == REMAT_OK && ord->map) {
		/* Back to req->graph, where the simulator judges it again. */
		remat_schedule_map_nodes(cand, ord->map);
		prc = remat_simulate(req->graph, cand, req->budget, NULL, &r, &e);
		if (prc == REMAT_OK && (!r.valid || !r.feasible))
			prc = REMAT_FAIL(&e, REMAT_EINTERNAL, "planner '%s': its schedule in "
					 "another order does not carry over: %s", p->name, r.error);
	}
	pf->ran++;
	if (prc == REMAT_ENOFIT || prc == REMAT_ECANCELED)
		return REMAT_OK;
	if (prc == REMAT_EUSAGE) {
		/* A bad option value is the user's to fix. */
		if (err)
			*err = e;
		return prc;
	}
	if (prc != REMAT_OK) {
		/*
		 * One planner failing (a bug, or out of memory on a huge graph)
		 * must not deny the caller the others' schedules.
		 */
		if (pf->first_failure == REMAT_OK) {
			pf->first_failure = prc;
			pf->failure = e;
		}
		return REMAT_OK;
	}
	*offered = 1;
	if (pf->offer)
		return pf->offer(pf->ctx, p, cand, &r, stop, err);
	return REMAT_OK;
}

int remat_i_portfolio_run(const struct remat_plan_request *req,
			  struct remat_i_portfolio *pf, struct remat_error *err)
{
	const struct remat_planner *const *pp;
	struct remat_plan_request sub = *req;
	struct remat_plan_report rep;
	struct remat_schedule cand;
	struct ordered ord[MAX_ORDERS];
	double deadline = pf->deadline > 0 ? pf->deadline : req->deadline;
	double t0 = remat_now();
	int rc = REMAT_OK, offered = 0, stop = 0, n_ord = 0, oi, k, nrerun = 0, i, pass;
	struct rerun { const struct remat_planner *const *pp; int oi; } rerun[MAX_RERUN];

	remat_schedule_init(&cand);
	memset(ord, 0, sizeof(ord));
	sub.report = &rep;
	sub.order = REMAT_ORDER_FILE;
	if (!pf->pass_options) {
		sub.options = NULL;
		sub.n_options = 0;
		sub.progress = NULL;
	}
	/*
	 * First every planner in the file's order, then (unless the offer
	 * callback stopped it: a schedule within the caller's gap of a bound)
	 * the other orders, found only then: an answer the first pass proves
	 * good enough never waits for the order search (issue 30).  The time
	 * shares count the orders to come.
	 */
	n_ord = 1; /* ord[0], zeroed: the file's order */
	pf->order_peak = req->graph->no_remat_peak;
	pf->n_orders = !pf->orders || req->order == REMAT_ORDER_FILE ? 1 :
		req->order == REMAT_ORDER_BEST || req->order == REMAT_ORDER_BUDGET ? MAX_ORDERS : 2;
	for (pass = 0; pass < 2 && rc == REMAT_OK && !stop; pass++) {
		if (pass == 1) {
			rc = build_orders(req, pf, deadline, ord, &n_ord, err);
			pf->n_orders = n_ord;
		}
		for (pp = remat_planner_list(); rc == REMAT_OK && *pp && !stop; pp++) {
			if (!is_fast(*pp))
				continue;
			/* Pass 0: the file's order; pass 1: the others. */
			for (oi = pass; oi < (pass ? n_ord : 1) && rc == REMAT_OK && !stop; oi++) {
				double start = remat_now();

				rc = run_one(req, pf, *pp, pp, &sub, &ord[oi], pf->n_orders - oi,
					     deadline, 0, t0, &cand, &offered, &stop, err);
				if (rc == PF_DEADLINE) {
					rc = REMAT_OK;
					stop = 1;
				}
				/*
				 * A run that used up its share (it stopped at its
				 * deadline, with or without a schedule) may do
				 * better with what the faster ones leave over.
				 */
				if (!stop && pf->share_time && sub.deadline > 0 &&
				    sub.deadline < deadline &&
				    remat_now() >= start + 0.9 * (sub.deadline - start) &&
				    nrerun < MAX_RERUN) {
					rerun[nrerun].pp = pp;
					rerun[nrerun++].oi = oi;
				}
			}
		}
	}
	/*
	 * Second pass: the time left, shared among the runs cut short; up to
	 * rerun_deadline when nothing came in the first.
	 */
	if (!offered && pf->rerun_deadline > deadline)
		deadline = pf->rerun_deadline;
	for (i = 0; i < nrerun && rc == REMAT_OK && !stop; i++) {
		double now = remat_now(), left = deadline - now;

		if (left <= 0.05 * (deadline - t0))
			break;
		rc = run_one(req, pf, *rerun[i].pp, rerun[i].pp, &sub, &ord[rerun[i].oi], 1,
			     deadline, now + left / (nrerun - i), t0, &cand, &offered, &stop, err);
		if (rc == PF_DEADLINE)
			rc = REMAT_OK;
	}
	remat_schedule_release(&cand);
	for (k = 0; k < MAX_ORDERS; k++) {
		remat_graph_free(ord[k].g);
		free(ord[k].map);
	}
	return rc;
}
