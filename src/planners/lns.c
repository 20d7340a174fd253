/*
 * lns.c - the lns planner: large-neighbourhood search on Checkmate's MILP.
 *
 * 1. Start: every fast planner (the portfolio, flagged
 *    REMAT_PLANNER_AUTO), in the node orders req->order asks for (as auto
 *    does), within a quarter of the time limit; the cheapest schedule
 *    within budget is the start.
 * 2. When the start recomputes, search node orders by the cost of their
 *    evict-and-recompute replay (src/plan/replay_search.c) for half of
 *    the time left, and start from its schedule when cheaper.
 * 3. Re-solve windows of stages of the start with the MILP (CBC) while
 *    the rest stays fixed, keep what the simulator confirms is cheaper,
 *    move the window; until the time limit, or without one until passes
 *    over all stages stop improving (src/plan/lns.c has the details).
 *
 * The model follows the order of the start's first computations, so any
 * start maps (Checkmate's own warm start needs the loader's order);
 * windows stay small (a few stages, their computes and their inputs), so
 * each sub-MILP solves in well under a second even on graphs of
 * thousands of nodes, where the whole MILP would not be built.
 *
 * 0. First, the cut bound (remat/bound.h) for a tenth of the time (at
 *    most 1 s without a limit): every later step stops as soon as the
 *    schedule is within --gap G (default 0.01%) of the best bound proven
 *    (issue 30), and a cut that proves no schedule fits ends the run.
 *
 * Anytime and never worse than its start.  Deterministic for a seed
 * while no sub-MILP hits its wall-clock cap or the time limit.  What it
 * does not guarantee: optimality, except when a window spanning every
 * stage is proven (reported as optimal in that order).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/bound.h"
#include "remat/planner.h"
#include "analysis/needed.h"
#include "plan/best.h"
#include "plan/lns.h"
#include "plan/portfolio.h"

static const struct remat_planner_option lns_options[] = {
	{ "lns-window", "N", "stages in the first window (default 8; it adapts)" },
	{ "lns-depth", "D", "recompute candidates: inputs of the window's nodes up to D "
	  "levels (default 1)" },
	{ "lns-nodes", "N", "branch-and-bound nodes per window MILP (default 500)" },
	{ "lns-windows", "N", "stop after N window MILPs (default 0: the time limit, or no "
	  "more improvement)" },
	{ "lns-replay", "F", "first search node orders by their evict-and-recompute replay for "
	  "F of the time left (default 0.9; 0: off)" },
	{ "lns-replay-stall", "N", "end that search after N replays without improvement "
	  "(default 2000 + 8 per node)" },
	{ "lns-threads", "N", "run that search as N independent climbers on N threads; the "
	  "cheapest wins (default 2)" },
	{ "lns-swap", "F", "exchange one recomputation for others (keep a value, recompute "
	  "values held across where memory overflows) for at most F of the time left, before "
	  "the windows and between their rounds, and all of it when there can be no windows "
	  "(default 0.25; 0: off)" },
	{ "lns-interval", "F", "decide which values are held and which are computed again "
	  "in the whole order at once, by one MILP of retention intervals, for at most F of "
	  "the time left, after the order search (default: 0.8 when a time limit leaves at "
	  "least 100 s then, else off; 0: off; it needs minutes on graphs of a thousand "
	  "nodes)" },
	{ "gap", "G", "stop once a schedule is within relative gap G of the best lower bound "
	  "proven (default 0.0001; 0: only at the bound, or the time limit)" },
	{ NULL, NULL, NULL }
};

/* Stop within this relative gap of the best lower bound (--gap). */
#define LNS_GAP 1e-4
/* The cut bound's share of the time limit, and its time without one. */
#define LNS_CUT_SHARE 0.1
#define LNS_CUT_SECONDS 1.0

struct keep {
	const struct remat_plan_request *req;
	struct remat_i_best best;
	struct remat_i_portfolio *pf;
	double floor_cost;      /* the best lower bound proven */
	double target;          /* within the gap of it: stop there */
};

static int keep_cheapest(void *ctx, const struct remat_planner *p, struct remat_schedule *s,
			 const struct remat_sim_result *r, int *stop, struct remat_error *err)
{
	struct keep *k = ctx;

	(void)r;
	REMAT_TRY(remat_i_best_offer(&k->best, p->name, k->req->graph, k->req->budget, s, NULL,
				     NULL, err));
	k->pf->incumbent = k->best.res.cost;
	if (k->best.res.cost <= k->target)
		*stop = 1;
	return REMAT_OK;
}

static int lns_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		    struct remat_error *err)
{
	struct remat_i_lns_opts o;
	struct remat_i_lns_stats st;
	struct remat_i_portfolio pf;
	struct keep k;
	double t0 = remat_now(), gap, cut_lb = NAN;
	enum remat_bound_status cut_st = REMAT_BOUND_NOT_TRIED;
	struct remat_error e;
	int32_t cut_at = -1;
	int rc;

	REMAT_TRY(remat_i_lns_opts_read(req, &o, "lns", err));
	REMAT_TRY(remat_opt_double(req, "gap", LNS_GAP, 0, 0.999, &gap, err));
	memset(&k, 0, sizeof(k));
	k.req = req;
	k.pf = &pf;
	k.floor_cost = remat_i_least_cost(req->graph);
	/* 0. The cut bound: the floor to stop at, or the proof that nothing fits. */
	if (remat_bound_cut(req->graph, req->budget, req->deadline > 0 ?
			    LNS_CUT_SHARE * (req->deadline - t0) : LNS_CUT_SECONDS,
			    &cut_lb, &cut_st, &cut_at, &e) == REMAT_OK) {
		if (cut_st == REMAT_BOUND_INFEASIBLE)
			return REMAT_FAIL(err, REMAT_ENOFIT, "lns: no schedule fits the budget: the "
					  "cut bound at node '%s' proves it", cut_at >= 0 ?
					  req->graph->id[cut_at] : "?");
		if (cut_st == REMAT_BOUND_OK && cut_lb > k.floor_cost)
			k.floor_cost = cut_lb;
	}
	k.target = fmax(k.floor_cost * (1 + 1e-12), k.floor_cost / (1 - gap));
	o.target = k.target;
	remat_i_best_init(&k.best);
	remat_i_portfolio_init(&pf, "lns");
	pf.bound = k.floor_cost;
	pf.strict_deadline = 0;
	pf.share_time = 1;
	pf.orders = 1;
	if (req->deadline > 0)
		pf.deadline = t0 + 0.25 * (req->deadline - t0);
	pf.offer = keep_cheapest;
	pf.ctx = &k;
	rc = remat_i_portfolio_run(req, &pf, err);
	if (rc == REMAT_OK && !k.best.have)
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "lns: no fast planner found a schedule within "
				"the budget to start from");
	if (rc == REMAT_OK && k.best.res.cost <= k.target) {
		rc = remat_i_best_take(&k.best, out, err);
		if (rc == REMAT_OK && req->report)
			snprintf(req->report->note, sizeof(req->report->note), "lns: the fast planners' "
				 "schedule is within the gap of the %s bound", cut_lb == k.floor_cost ?
				 "cut" : "least-cost");
		goto report;
	}
	if (rc == REMAT_OK)
		rc = remat_i_lns_improve(req, &k.best.sched, &o, out, &st, err);
	if (rc == REMAT_OK && req->report) {
		snprintf(req->report->note, sizeof(req->report->note),
			 "lns: %lld order replays (%s), %lld exchanges kept, %lld window MILPs "
			 "(%lld improving): cost %+.3f%% from the start%s", (long long)st.replay_evals,
			 st.replay_cost < st.start_cost ? "a cheaper start" : "no cheaper start",
			 (long long)st.swaps, (long long)st.windows, (long long)st.improved,
			 st.start_cost > 0 ? 100 * (st.cost / st.start_cost - 1) : 0.0,
			 st.proven ? "; optimal in its order" : "");
		/* Proven in its order: the bound in every order is the floor, below. */
		if (st.proven)
			req->report->order_lower_bound = st.cost;
	}
report:
	/* The bound in every order, and the gap to it (when nothing better). */
	if (rc == REMAT_OK && req->report) {
		struct remat_sim_result r;
		struct remat_error se;

		if (remat_simulate(req->graph, out, req->budget, NULL, &r, &se) == REMAT_OK &&
		    r.valid) {
			double g = r.cost > 0 ? (r.cost - k.floor_cost) / r.cost : 0;

			req->report->lower_bound = k.floor_cost;
			req->report->gap = g < 1e-8 ? 0 : g;
			req->report->optimal = req->report->gap == 0;
		}
	}
	remat_i_best_release(&k.best);
	return rc;
}

const struct remat_planner remat_i_planner_lns = {
	.name = "lns",
	.summary = "large-neighbourhood search: re-solve windows of the best fast plan with "
		   "Checkmate's MILP (CBC)",
	.flags = REMAT_PLANNER_ORDERS | REMAT_PLANNER_BOUNDS,
	.options = lns_options,
	.plan = lns_plan,
};
