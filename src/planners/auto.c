/*
 * auto.c - the default planner: try the others, keep the cheapest, then
 * improve it with the MILP.
 *
 * 0b. A tiny graph (at most --exhaustive-nodes state bits, default 20):
 *    every schedule searched (plan/exact_small.h); the optimum in any
 *    order, or the proof that none fits, ends auto there.
 * 1. Run every registered planner flagged REMAT_PLANNER_AUTO, in registry
 *    order, each through remat_plan_run() so its schedule is simulated
 *    (the portfolio, src/plan/portfolio.c), in each node order the
 *    request asks for (req->order: the file's order, the order with the
 *    lowest no-remat peak and, below that peak, the order with the least
 *    memory above the budget; remat/order.h), within AUTO_PORTFOLIO_SHARE
 *    of the time limit.
 * 2. Keep the cheapest valid schedule within budget (ties: lower peak).
 * 0. First the lower bounds every schedule obeys, cheapest first: each
 *    node an output needs computed once, then the cut bound
 *    (remat/bound.h, a bound in every order) for AUTO_CUT_SHARE of the
 *    time limit; after the portfolio, on graphs small enough for the
 *    whole MILP, the window bound (the cut at several moments) too, and
 *    where the cut proved nothing above the least cost (a forward DAG
 *    that runs in any order), the down-set bound for as long.
 *    The best of them is the target: as soon as a schedule
 *    is within --gap G of it (relative to the schedule's cost, default
 *    AUTO_GAP: 0.01%), auto stops, wherever it is (issue 30), and the
 *    note says which bound proved it.  A proof that nothing fits names
 *    the node in the no-fit message.
 * 3. Stop early when a schedule is within the gap of the bound, or when
 *    the deadline has passed (no planner starts after it).  With a time
 *    limit, each planner gets an equal share of the time still left;
 *    when none found a schedule in the portfolio's share, the runs cut
 *    short get the rest of the limit.  When still none fits (and no
 *    bound proved that none can), the portfolio runs again with the next
 *    seed, and the next, until one fits or the time is up (rescue()).
 *    The seed picks the orders planned in, and whether a planner fits
 *    near the least peak depends much on the order.
 * 4a. On a graph whose needed nodes lie on one path (plan/path_model.h),
 *    LNS (step 5) for AUTO_PATH_LNS_SHARE of the time left, then the path
 *    bound's MILP from the cheapest schedule for AUTO_PATH_SHARE of the
 *    rest (plan/path_pass.h): its proven bound raises the floor, and the
 *    schedule of its best point is offered like any candidate.
 * 4. On graphs small enough for the whole MILP (checkmate_model.h), for
 *    half of the time left: the MILP in the order of the schedule's first
 *    computations, warm-started from it; when it proves its schedule
 *    optimal in that order auto stops there, and the note says so (the
 *    report's lower_bound holds in every order: the cut and window
 *    bounds, the least cost; a schedule in another order may cost less).
 *    When nothing fitted at all, checkmate as it runs alone first (from
 *    its LP's rounding), before the portfolio runs again.
 * 5. Otherwise large-neighbourhood search (src/plan/lns.c) from the
 *    cheapest: windows of its stages re-solved with Checkmate's MILP, on
 *    graphs of every size, until the time limit (AUTO_EXACT_SECONDS
 *    without one) or until it is within the gap of the bound.
 *
 * Its cost is the minimum over the planners it ran, then only lower:
 * never worse than its best heuristic, optimal within the MILP's model
 * when the MILP (or a window spanning every stage) finishes.  It is only
 * as fast as the slowest of them within the time limit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/bound.h"
#include "remat/budget.h"
#include "remat/order.h"
#include "remat/planner.h"
#include "analysis/needed.h"
#include "plan/best.h"
#include "plan/checkmate_model.h"
#include "plan/exact_small.h"
#include "plan/lns.h"
#include "plan/path_model.h"
#include "plan/path_pass.h"
#include "plan/portfolio.h"
#include "plan/request.h"

/* The MILP's share (LNS, then the whole MILP) when no --time-limit bounds auto. */
#define AUTO_EXACT_SECONDS 10.0
/* The cut bound's share of the time left after the portfolio (or seconds, without a limit). */
#define AUTO_CUT_SHARE 0.085
#define AUTO_CUT_SECONDS 1.0
/* On one path: LNS's share of the time left before the path MILP, then the MILP's. */
#define AUTO_PATH_LNS_SHARE 0.1
#define AUTO_PATH_SHARE 0.9
/*
 * The largest path model auto solves (columns): the published
 * mobilenet-train's (shared/benchmarks) has 34,410 (+2.58% -> +2.46% at
 * 40%), `remat gen chain 100`'s 40,804;
 * far larger, CBC does little in a plan's time, which LNS would use.
 */
#define AUTO_PATH_MAX_COLS 60000
/* Share of the time limit the fast planners may use. */
#define AUTO_PORTFOLIO_SHARE 0.4
/* Stop within this relative gap of the best lower bound (--gap). */
#define AUTO_GAP 1e-4
/* Below this --gap, checkmate runs alone when no fast planner fits (cold_exact). */
#define AUTO_COLD_GAP 0.5

/*
 * Step 5: the whole MILP in the order of best's first computations, warm
 * started from it, until the deadline; offered to best like any
 * candidate.  *kept says whether it won; its bound goes to rep.
 */
static int polish_exact(const struct remat_plan_request *req, struct remat_i_best *best,
			struct remat_schedule *cand, struct remat_plan_report *rep,
			int *kept, struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_plan_request sub = *req;
	struct remat_progress pr = { "auto", "checkmate", -1, NAN, NAN, 0 };
	struct remat_graph *pg = NULL;
	struct remat_schedule start;
	int32_t *order = NULL, *inv = NULL, v;
	double left = req->deadline > 0 ? req->deadline - remat_now() : 0;
	int64_t i;
	int rc;

	*kept = 0;
	if (!best->have || !remat_i_checkmate_auto_fits(g, req->deadline > 0 ? left : 0) ||
	    (req->deadline > 0 && left <= 0))
		return REMAT_OK;
	remat_schedule_init(&start);
	order = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	inv = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!order || !inv) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	rc = remat_order_from_schedule(g, &best->sched, order, err);
	if (rc == REMAT_OK)
		rc = remat_graph_reorder(g, order, &pg, err);
	if (rc == REMAT_OK)
		rc = remat_schedule_copy(&start, &best->sched, err);
	if (rc)
		goto done;
	for (v = 0; v < g->n; v++)
		inv[order[v]] = v;
	for (i = 0; i < start.n; i++)
		start.steps[i].node = inv[start.steps[i].node];
	sub.graph = pg;
	sub.order = REMAT_ORDER_FILE;
	sub.report = rep;
	remat_plan_report_init(rep);
	pr.incumbent = best->res.cost;
	remat_plan_progress(req, &pr);
	rc = remat_i_checkmate_improve(&sub, &start, cand, err);
	if (rc == REMAT_ENOFIT || rc == REMAT_ECANCELED) {
		rc = REMAT_OK;
		goto done;
	}
	if (rc)
		goto done;
	remat_schedule_map_nodes(cand, order);
	rc = remat_i_best_offer(best, "checkmate", g, req->budget, cand, NULL, kept, err);
done:
	remat_schedule_release(&start);
	remat_graph_free(pg);
	free(order);
	free(inv);
	return rc;
}

/* What auto keeps while the portfolio runs. */
struct auto_keep {
	const struct remat_plan_request *req;
	struct remat_i_best best;
	double floor_cost;     /* nothing costs less (the best lower bound) */
	double gap;            /* --gap */
	double target;         /* within the gap of floor_cost: stop there */
	char winner[64];
	struct remat_i_portfolio *pf;
	double t0, first_s, final_s;  /* when the first and the last kept schedule came */
};

/* Note when a schedule was kept. */
static void kept_now(struct auto_keep *k)
{
	double t = remat_now() - k->t0;

	if (isnan(k->first_s))
		k->first_s = t;
	k->final_s = t;
}

/* Steps 2 and 3: keep the cheapest; stop at the floor. */
static int keep_cheapest(void *ctx, const struct remat_planner *p, struct remat_schedule *s,
			 const struct remat_sim_result *r, int *stop, struct remat_error *err)
{
	struct auto_keep *k = ctx;
	int kept;

	(void)r;
	REMAT_TRY(remat_i_best_offer(&k->best, p->name, k->req->graph, k->req->budget, s,
				     NULL, &kept, err));
	if (kept) {
		snprintf(k->winner, sizeof(k->winner), "%s", p->name);
		kept_now(k);
	}
	k->pf->incumbent = k->best.res.cost;
	if (k->best.res.cost <= k->target)
		*stop = 1;
	return REMAT_OK;
}

/* Step 4: LNS from the cheapest with options o, until deadline. */
static int polish_lns(const struct remat_plan_request *req, double deadline,
		      const struct remat_i_lns_opts *o, struct auto_keep *k,
		      struct remat_schedule *cand,
		      struct remat_i_lns_stats *st, struct remat_error *err)
{
	struct remat_plan_request sub = *req;
	struct remat_i_lns_opts lo = *o;
	double t1 = remat_now() - k->t0;
	int kept;

	sub.deadline = deadline;
	lo.target = k->target;
	REMAT_TRY(remat_i_lns_improve(&sub, &k->best.sched, &lo, cand, st, err));
	if (st->cost >= st->start_cost)
		return REMAT_OK;
	REMAT_TRY(remat_i_best_offer(&k->best, "lns", req->graph, req->budget, cand, NULL,
				     &kept, err));
	if (kept) {
		char w[64];

		kept_now(k);
		k->final_s = t1 + st->last_s;
		snprintf(w, sizeof(w), "%s", k->winner);
		snprintf(k->winner, sizeof(k->winner), "%.59s+lns", w);
	}
	return REMAT_OK;
}

/*
 * Steps 1 and 3: the portfolio that offers each schedule to k, in every
 * order req->order asks for, until deadline (0: none); k->pf is pf.
 */
static void portfolio_init(struct remat_i_portfolio *pf, struct auto_keep *k, double deadline)
{
	remat_i_portfolio_init(pf, "auto");
	pf->bound = k->floor_cost;
	pf->share_time = 1;
	pf->pass_options = 1;
	pf->orders = 1;
	pf->deadline = deadline;
	pf->offer = keep_cheapest;
	pf->ctx = k;
	/* Past the deadline no planner starts: the limit holds (issue 18). */
	pf->strict_deadline = 1;
	k->pf = pf;
}

/*
 * Step 3b: no planner's schedule fits, no bound proved that none can,
 * and the portfolio planned in orders found by a seeded search (not
 * --order file or greedy).  Below the lowest no-remat peak of the
 * orders found, whether a planner fits depends on the order it plans in
 * and its random draws, so the portfolio runs again with the next seed
 * (other orders, other draws) until one fits or deadline; that schedule
 * goes on to LNS.  On the published random-layered-n250 at 70%, the
 * first portfolio ends in 2.5 s with nothing; with seed 2 twremat fits,
 * and LNS makes it +10.79% in 60 s.  *reruns: the portfolios run here.
 */
static int rescue(const struct remat_plan_request *req, double deadline, struct auto_keep *k,
		  int *reruns, int *first_failure, struct remat_error *failure,
		  struct remat_error *err)
{
	struct remat_plan_request sub = *req;
	struct remat_i_portfolio pf, *keep_pf = k->pf;
	int rc = REMAT_OK;

	while (!k->best.have && rc == REMAT_OK && remat_now() < deadline &&
	       !remat_plan_expired(req)) {
		sub.seed++;
		portfolio_init(&pf, k, deadline);
		rc = remat_i_portfolio_run(&sub, &pf, err);
		k->pf = keep_pf;
		(*reruns)++;
		if (pf.first_failure != REMAT_OK) {
			/* A planner failed for another reason than fit or time: not again. */
			*first_failure = pf.first_failure;
			*failure = pf.failure;
			break;
		}
	}
	return rc;
}

/*
 * Nothing fitted and the graph is small enough for the whole MILP:
 * checkmate as it runs alone (from its LP's rounding when no fast
 * planner's schedule maps into its model), in the file's order and in
 * auto's, each for a quarter of the time left.
 * Near the least peak no heuristic may fit where the MILP finds a
 * schedule at once (an 11-node graph at 26 B: every fast planner over,
 * checkmate's optimum in 0.08 s).  Its bound holds in one order only and
 * is not reported; a solver that fails leaves auto as it was.
 */
static int cold_exact(const struct remat_plan_request *req, double end, struct auto_keep *k,
		      struct remat_schedule *cand, struct remat_error *err)
{
	const struct remat_planner *p = remat_planner_find("checkmate");
	struct remat_progress pr = { "auto", "checkmate", -1, NAN, NAN, 0 };
	struct remat_plan_request sub = *req;
	struct remat_sim_result r;
	struct remat_error e;
	double left = end - remat_now();
	int kept = 0, rc, pass;

	if (!p || left <= 0 || remat_plan_expired(req) ||
	    !remat_i_checkmate_auto_fits(req->graph, left))
		return REMAT_OK;
	pr.elapsed = remat_now() - k->t0;
	remat_plan_progress(req, &pr);
	/* In the file's order (checkmate's own default), then in auto's. */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1 && (req->order == REMAT_ORDER_FILE || remat_plan_expired(req)))
			break;
		sub.order = pass == 0 ? REMAT_ORDER_FILE : req->order;
		sub.deadline = remat_now() + 0.25 * left;
		sub.report = NULL; /* its bound holds in one order: not auto's */
		remat_error_clear(&e);
		if (remat_plan_run(p, &sub, cand, &r, &e) != REMAT_OK)
			continue;
		rc = remat_i_best_offer(&k->best, p->name, req->graph, req->budget, cand, NULL,
					&kept, err);
		if (rc)
			return rc;
		if (kept) {
			snprintf(k->winner, sizeof(k->winner), "%s", p->name);
			kept_now(k);
		}
	}
	return REMAT_OK;
}

static void set_bound(const struct remat_plan_request *req, double cost, double lb)
{
	if (!req->report || isnan(lb) || lb > cost * (1 + 1e-12))
		return;
	if (!isnan(req->report->lower_bound) && req->report->lower_bound >= lb)
		return; /* the stronger of two bounds */
	req->report->lower_bound = lb;
	req->report->gap = cost > 0 ? (cost - lb) / cost : 0;
	/*
	 * The cut bound is a Lagrangian dual in floating point: on a chain
	 * whose optimum costs 6 it gives 5.999999992.  Within 1e-8 of the
	 * cost, the bound proves the cost (issue 30: auto now stops there
	 * instead of having the MILP prove it again).
	 */
	if (req->report->gap < 1e-8) {
		req->report->gap = 0;
		req->report->lower_bound = cost;
	}
	req->report->optimal = req->report->gap == 0;
}

/*
 * Raise the floor to lb (when higher) and aim within the gap of it:
 * cost - floor <= gap * cost, a hair over the floor for rounding.
 */
static void raise_floor(struct auto_keep *k, double lb)
{
	if (!isnan(lb) && lb > k->floor_cost)
		k->floor_cost = lb;
	if (k->pf)
		k->pf->bound = k->floor_cost;
	k->target = fmax(k->floor_cost * (1 + 1e-12), k->floor_cost / (1 - k->gap));
}

/*
 * The cut bound for share seconds (it returns the best bound found by
 * then), raising k's floor and target (raise_floor).  Returns its status.
 */
static enum remat_bound_status cut_bound(const struct remat_plan_request *req, double share,
					 struct auto_keep *k, double *cut_lb, int32_t *cut_at)
{
	struct remat_progress pr = { "auto", "proving: the cut bound", -1, NAN, NAN, 0 };
	enum remat_bound_status st = REMAT_BOUND_NOT_TRIED;
	struct remat_error e;
	double lb = NAN;
	int32_t at = -1;

	if (share <= 0)
		return st;
	pr.incumbent = k->best.have ? k->best.res.cost : NAN;
	pr.elapsed = remat_now() - k->t0;
	remat_plan_progress(req, &pr);
	/* A bound is extra: if it cannot be had (out of memory), plan without. */
	if (remat_bound_cut(req->graph, req->budget, share, &lb, &st, &at, &e) != REMAT_OK)
		return REMAT_BOUND_NOT_TRIED;
	if (st == REMAT_BOUND_OK && (isnan(*cut_lb) || lb > *cut_lb))
		*cut_lb = lb;
	if (st == REMAT_BOUND_INFEASIBLE)
		*cut_at = at;
	raise_floor(k, *cut_lb);
	return st;
}

/*
 * A bound beside the cut for share seconds, raising k's floor and target
 * (*lb_out: the bound when above the floor).  The window bound
 * (remat/bound.h: the cut at several moments), only on graphs small
 * enough for the whole MILP: there it proves what one cut cannot (a
 * training chain whose early activations must come back twice), and its
 * own MILP is small.  The down-set bound (the cut when the last node of
 * a down-set first runs), only where the cut bound proved nothing above
 * the least cost: on a forward DAG a schedule may run in any order, and
 * there a down-set may still prove something; on training graphs the
 * loss is a waist the cut already sees.
 */
static void extra_bound(const struct remat_plan_request *req, double share,
			struct auto_keep *k, int downset, double *lb_out)
{
	struct remat_progress pr = { "auto", downset ? "proving: the down-set bound" :
				     "proving: the window bound", -1, NAN, NAN, 0 };
	enum remat_bound_status st = REMAT_BOUND_NOT_TRIED;
	struct remat_error e;
	double lb = NAN;
	int32_t nmo = 0;
	int rc;

	if (share <= 0)
		return;
	pr.incumbent = k->best.have ? k->best.res.cost : NAN;
	pr.elapsed = remat_now() - k->t0;
	remat_plan_progress(req, &pr);
	rc = downset ? remat_bound_downset(req->graph, req->budget, share, &lb, &st, NULL, &e) :
		remat_bound_window(req->graph, req->budget, share, &lb, &st, NULL, 0, &nmo, &e);
	if (rc != REMAT_OK || st != REMAT_BOUND_OK)
		return;
	if (lb > k->floor_cost)
		*lb_out = lb;
	raise_floor(k, lb);
}

/* Which bound proved a schedule within the gap, for the note. */
static const char *bound_name(double cut_lb, double win_lb, double ds_lb, double path_lb,
			      double least)
{
	if (!isnan(path_lb) && path_lb > least && (isnan(cut_lb) || path_lb > cut_lb) &&
	    (isnan(win_lb) || path_lb > win_lb) && (isnan(ds_lb) || path_lb > ds_lb))
		return "the path bound";
	if (!isnan(ds_lb) && ds_lb > least && (isnan(cut_lb) || ds_lb > cut_lb) &&
	    (isnan(win_lb) || ds_lb > win_lb))
		return "the down-set bound";
	if (!isnan(win_lb) && win_lb > least && (isnan(cut_lb) || win_lb > cut_lb))
		return "the window bound";
	return !isnan(cut_lb) && cut_lb > least ? "the cut bound" :
		"the least cost (each needed node computed once)";
}

/*
 * Step 4a: on a graph whose needed nodes lie on one path, the path
 * bound's MILP (plan/path_pass.h) for AUTO_PATH_SHARE of the time left,
 * started from the cheapest schedule: its proven bound raises the floor
 * (*lb_out when above it), and the order of its best point is offered.
 * On other graphs it returns at once.
 */
static int path_step(const struct remat_plan_request *req, double end, struct auto_keep *k,
		     struct remat_schedule *cand, double *lb_out, struct remat_error *err)
{
	struct remat_progress pr = { "auto", "path MILP", -1, NAN, NAN, 0 };
	struct remat_i_path_result res;
	struct remat_error e;
	int kept = 0, rc;

	pr.incumbent = k->best.res.cost;
	pr.elapsed = remat_now() - k->t0;
	remat_plan_progress(req, &pr);
	remat_error_clear(&e);
	rc = remat_i_path_pass(req, &k->best.sched, remat_now() + AUTO_PATH_SHARE *
			       (end - remat_now()), cand, &res, &e);
	if (rc == REMAT_ENOMEM) {
		*err = e;
		return rc;
	}
	if (rc)
		return REMAT_OK; /* the solver failed: auto has a schedule, plan on */
	if (res.found) {
		REMAT_TRY(remat_i_best_offer(&k->best, "path", req->graph, req->budget, cand, NULL,
					     &kept, err));
		if (kept) {
			snprintf(k->winner, sizeof(k->winner), "path");
			kept_now(k);
		}
	}
	if (res.tried && res.bound > k->floor_cost)
		*lb_out = res.bound;
	if (res.tried)
		raise_floor(k, res.bound);
	return REMAT_OK;
}

/*
 * The outcome prc (error e) of an improving step: a usage error ends
 * auto (returned, in *err); another failure is kept as the first one, to
 * be reported only if nothing fits; then REMAT_OK.
 */
static int step_failed(int prc, const struct remat_error *e, int *first_failure,
		       struct remat_error *failure, struct remat_error *err)
{
	if (prc == REMAT_EUSAGE) {
		*err = *e;
		return prc;
	}
	if (prc != REMAT_OK && *first_failure == REMAT_OK) {
		*first_failure = prc;
		*failure = *e;
	}
	return REMAT_OK;
}

static int auto_plan(const struct remat_plan_request *req,
		     struct remat_schedule *out, struct remat_error *err)
{
	struct remat_i_portfolio pf;
	struct auto_keep k;
	struct remat_schedule cand;
	struct remat_plan_report sub_report;
	struct remat_i_lns_stats st;
	struct remat_i_lns_opts o;
	struct remat_kv *kv = NULL;
	char gapbuf[32];
	int first_failure;
	struct remat_error failure;
	double t0 = remat_now(), end, cut_lb = NAN, win_lb = NAN, ds_lb = NAN, path_lb = NAN;
	double gap, cut_share, cut_t;
	enum remat_bound_status cut_status = REMAT_BOUND_NOT_TRIED;
	int32_t cut_at = -1;
	int rc, stopped_at_bound = 0, path = 0, cut_short, reruns = 0, in_order = 0, exact = 0;
	double exact_cost = -1;
	long exact_bits;
	char seeds[48] = "";

	memset(&k, 0, sizeof(k));
	memset(&st, 0, sizeof(st));
	/* Its last stage's --lns-* options: read (and checked) before planning. */
	REMAT_TRY(remat_i_lns_opts_read(req, &o, "auto", err));
	REMAT_TRY(remat_opt_double(req, "gap", AUTO_GAP, 0, 0.999, &gap, err));
	REMAT_TRY(remat_opt_int(req, "exhaustive-nodes", REMAT_EXACT_MAX_BITS, 0, REMAT_EXACT_MAX_BITS,
				&exact_bits, err));
	remat_plan_report_init(&sub_report);
	k.req = req;
	k.floor_cost = remat_i_least_cost(req->graph);
	k.pf = &pf;
	k.t0 = t0;
	k.first_s = k.final_s = NAN;
	remat_i_best_init(&k.best);
	remat_schedule_init(&cand);
	/*
	 * Step 0: the cut bound, in any order: with a schedule, the gap and
	 * perhaps the proof that it is optimal; without one, perhaps the
	 * proof that none exists.  First, so that every later step can stop
	 * as soon as it is within the gap.
	 */
	k.gap = gap;
	raise_floor(&k, NAN);
	cut_share = req->deadline > 0 ? AUTO_CUT_SHARE * (req->deadline - t0) : AUTO_CUT_SECONDS;
	cut_t = remat_now();
	cut_status = cut_bound(req, cut_share, &k, &cut_lb, &cut_at);
	/* It looked at every node it would look at when it ended early. */
	cut_short = remat_now() - cut_t >= 0.9 * cut_share;
	first_failure = REMAT_OK;
	remat_error_clear(&failure);
	/*
	 * Step 0b: a tiny graph, every schedule searched (exact_small.h): the
	 * cheapest in any order, or the proof that none fits.  Near the least
	 * peak every fast planner may miss a schedule that exists, and
	 * Checkmate's model may not hold it (an 8-node graph at 12 B: only a
	 * schedule that computes a node before one earlier in every
	 * topological order fits).
	 */
	if (cut_status != REMAT_BOUND_INFEASIBLE &&
	    remat_i_exact_fits(req->graph, (int32_t)exact_bits) == 1) {
		struct remat_progress pr = { "auto", "exhaustive", -1, NAN, NAN, 0 };
		struct remat_error e;
		int kept = 0;

		pr.elapsed = remat_now() - t0;
		remat_plan_progress(req, &pr);
		remat_error_clear(&e);
		if (remat_i_exact_small(req->graph, req->budget, req->deadline > 0 ?
					remat_now() + 0.5 * (req->deadline - remat_now()) : 0,
					&cand, &exact_cost, &e) == REMAT_OK) {
			exact = 1;
			if (exact_cost >= 0) {
				rc = remat_i_best_offer(&k.best, "exhaustive", req->graph,
							req->budget, &cand, NULL, &kept, err);
				if (rc)
					goto done;
				if (kept) {
					snprintf(k.winner, sizeof(k.winner), "exhaustive");
					kept_now(&k);
				}
				raise_floor(&k, exact_cost);
			}
			goto report;
		}
	}
	portfolio_init(&pf, &k, req->deadline > 0 ?
		       remat_now() + AUTO_PORTFOLIO_SHARE * (req->deadline - remat_now()) : 0);
	/*
	 * Nothing within the portfolio's share: the time kept for improving
	 * a schedule is of no use without one, so the runs cut short get it.
	 */
	pf.rerun_deadline = req->deadline;
	rc = remat_i_portfolio_run(req, &pf, err);
	if (rc)
		goto done;
	if (req->report && pf.n_orders > 1) {
		snprintf(req->report->order, sizeof(req->report->order), "%s",
			 remat_order_method_name((enum remat_order_method)req->order));
		req->report->order_peak = pf.order_peak;
	}
	if (pf.first_failure != REMAT_OK) {
		first_failure = pf.first_failure;
		failure = pf.failure;
	}
	end = req->deadline > 0 ? req->deadline : remat_now() + AUTO_EXACT_SECONDS;
	/*
	 * Not when asked only for any schedule within the budget (--gap near
	 * 1: remat plan --budget lowest's probes): a budget the probes report
	 * must be one auto asked again reaches, and the fast planners'
	 * answers do not depend on the clock as a MILP's do.
	 */
	if (!k.best.have && first_failure == REMAT_OK && cut_status != REMAT_BOUND_INFEASIBLE &&
	    gap < AUTO_COLD_GAP) {
		rc = cold_exact(req, end, &k, &cand, err);
		if (rc)
			goto done;
	}
	if (!k.best.have && first_failure == REMAT_OK && cut_status != REMAT_BOUND_INFEASIBLE &&
	    pf.n_orders > 1 && end - remat_now() > 0) {
		rc = rescue(req, end, &k, &reruns, &first_failure, &failure, err);
		if (rc)
			goto done;
	}
	/*
	 * Not within the gap yet, and the cut bound stopped at its time
	 * share: once more, for twice as long (it looks at the most promising
	 * nodes first, so a longer run only raises it; on a busy machine the
	 * first may have stopped short).
	 */
	if (k.best.have && k.best.res.cost > k.target && cut_status == REMAT_BOUND_OK &&
	    cut_short)
		cut_bound(req, 2 * cut_share, &k, &cut_lb, &cut_at);
	if (k.best.have && k.best.res.cost > k.target && end - remat_now() > 0 &&
	    remat_i_checkmate_auto_fits(req->graph, end - remat_now()))
		extra_bound(req, fmin(cut_share, end - remat_now()), &k, 0, &win_lb);
	if (k.best.have && k.best.res.cost > k.target && end - remat_now() > 0 &&
	    (isnan(cut_lb) || cut_lb <= remat_i_least_cost(req->graph) * (1 + 1e-9)))
		extra_bound(req, fmin(cut_share, end - remat_now()), &k, 1, &ds_lb);
	/*
	 * Step 4a, on a graph whose needed nodes lie on one path: LNS for a
	 * short share first (its swap pass), then the path MILP from the
	 * cheaper start, CBC's tree closing far sooner from it (unet-d4 at
	 * 50%: proven in 18 s from +21.62%, not in 41 s from +25.9%).
	 */
	if (k.best.have && k.best.res.cost > k.target && end - remat_now() > 0) {
		struct remat_error e;
		int prc;

		remat_error_clear(&e);
		path = remat_i_path_fits(req->graph, AUTO_PATH_MAX_COLS, &e) == 1;
		prc = REMAT_OK;
		if (path) {
			/*
			 * The interval pass, if it runs at all, runs once, in
			 * the LNS after the path MILP (a limit of 1,000 s or so
			 * would leave this short share the 100 s it needs).
			 */
			struct remat_i_lns_opts pre = o;

			pre.interval_share = 0;
			prc = polish_lns(req, remat_now() + AUTO_PATH_LNS_SHARE * (end - remat_now()),
					 &pre, &k, &cand, &st, &e);
		}
		rc = step_failed(prc, &e, &first_failure, &failure, err);
		if (rc)
			goto done;
		if (path && k.best.res.cost > k.target && end - remat_now() > 0) {
			rc = path_step(req, end, &k, &cand, &path_lb, err);
			if (rc)
				goto done;
		}
	}
	if (k.best.have && k.best.res.cost > k.target) {
		struct remat_error e;
		int kept = 0, prc;
		int proven = 0;

		remat_error_clear(&e);
		prc = REMAT_OK;
		/*
		 * Small graphs: the whole MILP first, for half of what is left,
		 * stopping within the gap.  Proven, it ends the search at once (a
		 * 24-node chain no longer waits out the limit in LNS windows);
		 * otherwise LNS goes on from whatever it found.
		 */
		if (remat_i_checkmate_auto_fits(req->graph, end - remat_now())) {
			struct remat_plan_request sub = *req;

			snprintf(gapbuf, sizeof(gapbuf), "%.17g", gap);
			prc = remat_i_request_with_option(&sub, "gap", gapbuf, &kv, &e);
			sub.deadline = remat_now() + 0.5 * (end - remat_now());
			if (prc == REMAT_OK)
				prc = polish_exact(&sub, &k.best, &cand, &sub_report, &kept, &e);
			if (kept) {
				snprintf(k.winner, sizeof(k.winner), "checkmate");
				kept_now(&k);
			}
			proven = prc == REMAT_OK && sub_report.optimal == 1;
		}
		if (prc == REMAT_OK && !proven && k.best.res.cost > k.target)
			prc = polish_lns(req, end, &o, &k, &cand, &st, &e);
		rc = step_failed(prc, &e, &first_failure, &failure, err);
		if (rc)
			goto done;
		/*
		 * The MILP's bound holds for schedules in its model (the order
		 * of the schedule it started from), not for auto's other orders:
		 * the note says so, the report's bound is one of every order.
		 */
		in_order = proven && k.best.have && k.best.res.cost <= sub_report.lower_bound *
			(1 + 1e-9) + 1e-12;
	}
report:
	/* The bounds every schedule obeys: the cut, the window, each needed node once. */
	if (k.best.have) {
		set_bound(req, k.best.res.cost, k.floor_cost);
		stopped_at_bound = k.best.res.cost <= k.target;
	}
	if (reruns > 0)
		snprintf(seeds, sizeof(seeds), "nothing fitted until seed %llu; ",
			 (unsigned long long)(req->seed + (uint64_t)reruns));
	if (req->report && stopped_at_bound)
		snprintf(req->report->note, sizeof(req->report->note),
			 "auto: %sstopped after %.2f s, %s of %s%s", seeds,
			 remat_now() - t0, k.best.res.cost <= k.floor_cost * (1 + 1e-8) ?
			 "optimal: its cost is that" : "within the gap", exact ?
			 "an exhaustive search of every schedule" : bound_name(cut_lb,
			 win_lb, ds_lb, path_lb, remat_i_least_cost(req->graph)), st.windows > 0 ? " (after LNS)" : "");
	else if (req->report && (st.windows > 0 || st.swaps > 0 || st.replay_evals > 0)) {
		/* Where the order search left the cost, then where the windows did. */
		double mid = st.replay_cost < st.start_cost ? st.replay_cost : st.start_cost;
		double rest = st.interval == 1 ? mid - st.interval_saved : mid;
		char iv[96] = "";

		if (st.interval == 1)
			snprintf(iv, sizeof(iv), ", the interval MILP saved %.3f%%",
				 mid > 0 ? 100 * st.interval_saved / mid : 0.0);
		else if (st.interval == 0)
			snprintf(iv, sizeof(iv), ", the interval MILP found nothing cheaper");
		snprintf(req->report->note, sizeof(req->report->note),
			 "auto: %slns replayed %lld orders (cost %+.3f%%)%s, then kept %lld exchanges "
			 "and solved %lld window MILPs, %lld improving the plan (cost %+.3f%%)%s",
			 seeds, (long long)st.replay_evals,
			 st.start_cost > 0 ? 100 * (mid / st.start_cost - 1) : 0.0, iv,
			 (long long)st.swaps, (long long)st.windows, (long long)st.improved,
			 rest > 0 ? 100 * (st.cost / rest - 1) : 0.0,
			 st.proven ? "; optimal in its order" : "");
	} else if (req->report && in_order) {
		snprintf(req->report->note, sizeof(req->report->note),
			 "auto: %scheckmate's MILP proved the plan optimal in its order (the order of "
			 "its first computations); in every order the bound is %s", seeds,
			 bound_name(cut_lb, win_lb, ds_lb, path_lb, remat_i_least_cost(req->graph)));
	} else if (req->report && reruns > 0 && k.best.have) {
		snprintf(req->report->note, sizeof(req->report->note),
			 "auto: nothing fitted until seed %llu",
			 (unsigned long long)(req->seed + (uint64_t)reruns));
	}
	if (!k.best.have && first_failure != REMAT_OK) {
		*err = failure;
		rc = first_failure;
		goto done;
	}
	if (!k.best.have) {
		char b[32], pk[32], lb[32];

		remat_format_bytes(req->budget, b, sizeof(b));
		remat_format_bytes(req->graph->no_remat_peak, pk, sizeof(pk));
		remat_format_bytes(req->graph->min_peak_lower_bound, lb, sizeof(lb));
		if (exact)
			rc = REMAT_FAIL(err, REMAT_ENOFIT, "no schedule fits the budget of %s (%lld "
					"bytes): an exhaustive search of every schedule found none; "
					"the no-remat peak is %s (%lld bytes)", b,
					(long long)req->budget, pk,
					(long long)req->graph->no_remat_peak);
		else if (cut_status == REMAT_BOUND_INFEASIBLE && cut_at < 0)
			rc = REMAT_FAIL(err, REMAT_ENOFIT, "no schedule fits the budget of %s (%lld "
					"bytes): the outputs alone, all held at the end, exceed it; the "
					"no-remat peak is %s (%lld bytes)", b, (long long)req->budget, pk,
					(long long)req->graph->no_remat_peak);
		else if (cut_status == REMAT_BOUND_INFEASIBLE && cut_at >= 0)
			rc = REMAT_FAIL(err, REMAT_ENOFIT, "no schedule fits the budget of %s (%lld "
					"bytes): when '%s' first runs, what it reads, its output and "
					"what must stay for later (or be rebuilt from inputs that "
					"stay) exceed it; the no-remat peak is %s (%lld bytes)", b,
					(long long)req->budget, req->graph->id[cut_at], pk,
					(long long)req->graph->no_remat_peak);
		else {
			char lim[64] = "";

			/* Cut short: say by what, so that the user knows to give it longer. */
			if (req->stop && *req->stop)
				snprintf(lim, sizeof(lim), " before it was stopped");
			else if (remat_plan_expired(req) && req->time_limit > 0)
				snprintf(lim, sizeof(lim), " before the time limit (%g s; more may "
					 "find one)", req->time_limit);
			else if (remat_plan_expired(req))
				snprintf(lim, sizeof(lim), " before the time limit");
			rc = REMAT_FAIL(err, REMAT_ENOFIT, "no planner found a schedule within the "
					"budget of %s (%lld bytes)%s; the no-remat peak is %s (%lld "
					"bytes), the lower bound %s (%lld bytes)", b,
					(long long)req->budget, lim, pk,
					(long long)req->graph->no_remat_peak, lb,
					(long long)req->graph->min_peak_lower_bound);
		}
		goto done;
	}
	rc = remat_i_best_take(&k.best, out, err);
	if (rc == REMAT_OK && req->report) {
		snprintf(req->report->chosen, sizeof(req->report->chosen), "%s", k.winner);
		req->report->first_s = k.first_s;
		req->report->final_s = k.final_s;
	}
done:
	free(kv);
	remat_schedule_release(&cand);
	remat_i_best_release(&k.best);
	return rc;
}

static const struct remat_planner_option auto_options[] = {
	{ "gap", "G", "stop once a schedule is within relative gap G of the best lower bound "
		      "proven (default 0.0001; 0: only at the bound, or the time limit)" },
	{ "exhaustive-nodes", "N", "first search every schedule (exact, any order) when the graph "
				   "has at most N needed nodes, nodes with \"recompute\": false "
				   "counting twice (default and most 20; 0: never)" },
	{ NULL, NULL, NULL }
};

const struct remat_planner remat_i_planner_auto = {
	.name = "auto",
	.summary = "run every fast planner (in several node orders), keep the cheapest, "
		   "improve it by LNS with the MILP",
	.flags = REMAT_PLANNER_ORDERS | REMAT_PLANNER_BOUNDS,
	.options = auto_options,
	.plan = auto_plan,
};
