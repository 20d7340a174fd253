/*
 * order_pick.c - remat_order_compute() (remat/order.h): the methods that
 * need no planner come from src/analysis/order.c; 'schedule' runs the
 * fast planners (the portfolio) and takes the first computations of each
 * schedule they return; 'best' keeps the lowest peak of file, greedy and
 * schedule, then runs the local search from it; 'budget' goes on from
 * best's order to the least memory above the budget.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "remat/order.h"
#include "remat/planner.h"
#include "analysis/needed.h"
#include "analysis/order_basic.h"
#include "plan/portfolio.h"

/* 'best' takes the planners' orders up to this many nodes to compute. */
#define BEST_SCHEDULE_NODES 300

/* What 'schedule' keeps while the portfolio runs. */
struct pick {
	const struct remat_graph *g;
	int32_t *order;     /* best so far */
	int64_t peak;
	int32_t *cand;      /* scratch */
};

static int keep_lowest(void *ctx, const struct remat_planner *p, struct remat_schedule *s,
		       const struct remat_sim_result *r, int *stop, struct remat_error *err)
{
	struct pick *k = ctx;
	int64_t peak;

	(void)p;
	(void)r;
	(void)stop;
	REMAT_TRY(remat_order_from_schedule(k->g, s, k->cand, err));
	REMAT_TRY(remat_order_peak(k->g, k->cand, &peak, err));
	if (peak < k->peak) {
		k->peak = peak;
		memcpy(k->order, k->cand, sizeof(int32_t) * (size_t)k->g->n);
	}
	return REMAT_OK;
}

/*
 * The fast planners at opts->budget, or at 90%, 75% and 60% of the
 * no-remat peak (those above the least peak any schedule has); order
 * and *peak come in as the best known and are replaced by a lower one.
 */
static int order_schedule(const struct remat_graph *g, const struct remat_order_opts *o,
			  int32_t *order, int64_t *peak, struct remat_error *err)
{
	static const double fractions[] = { 0.9, 0.75, 0.6 };
	struct pick k;
	int64_t least = remat_i_least_peak(g);
	int i, nb = o->budget >= 0 ? 1 : 3, rc = REMAT_OK;

	if (least < 0)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	k.g = g;
	k.order = order;
	k.peak = *peak;
	k.cand = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!k.cand)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for an order");
	for (i = 0; i < nb && rc == REMAT_OK; i++) {
		struct remat_plan_request req;
		struct remat_i_portfolio pf;

		memset(&req, 0, sizeof(req));
		req.graph = g;
		req.seed = o->seed;
		req.budget = o->budget >= 0 ? o->budget
			: (int64_t)floor(fractions[i] * (double)g->no_remat_peak);
		if (req.budget < least)
			continue;
		if (o->deadline > 0) {
			double now = remat_now();

			if (now >= o->deadline)
				break;
			/* An equal share of what is left for each budget. */
			req.deadline = now + (o->deadline - now) / (nb - i);
		}
		remat_i_portfolio_init(&pf, "order");
		pf.strict_deadline = 1;
		pf.share_time = req.deadline > 0;
		pf.offer = keep_lowest;
		pf.ctx = &k;
		rc = remat_i_portfolio_run(&req, &pf, err);
	}
	*peak = k.peak;
	free(k.cand);
	return rc;
}

int remat_order_compute(const struct remat_graph *g, enum remat_order_method m,
			const struct remat_order_opts *o, int32_t *order, int64_t *peak,
			struct remat_error *err)
{
	struct remat_order_opts def;
	int32_t *cand = NULL;
	int64_t p, cp;
	int rc = REMAT_OK;

	if (!o) {
		remat_order_opts_init(&def);
		o = &def;
	}
	if (!peak)
		peak = &p;
	switch (m) {
	case REMAT_ORDER_FILE:
	case REMAT_ORDER_GREEDY:
	case REMAT_ORDER_LOCAL:
		return remat_i_order_basic(g, m, o, order, peak, err);
	case REMAT_ORDER_SCHEDULE:
		REMAT_TRY(remat_i_order_basic(g, REMAT_ORDER_FILE, o, order, peak, err));
		return order_schedule(g, o, order, peak, err);
	case REMAT_ORDER_BEST:
	case REMAT_ORDER_BUDGET:
		break;
	default:
		return REMAT_FAIL(err, REMAT_EUSAGE, "unknown order method %d", (int)m);
	}
	/*
	 * best: greedy (which keeps the file's order unless it finds a
	 * lower peak), then the schedules' orders (on graphs of up to
	 * BEST_SCHEDULE_NODES nodes to compute, within a third of the time:
	 * beyond, the planners take seconds and their orders did not win
	 * once in bench/RESULTS.md), then the local search from the lowest.
	 */
	cand = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!cand)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for an order");
	rc = remat_i_order_basic(g, REMAT_ORDER_GREEDY, o, order, peak, err);
	if (rc == REMAT_OK && g->n - g->n_inputs <= BEST_SCHEDULE_NODES) {
		struct remat_order_opts so = *o;

		if (o->deadline > 0)
			so.deadline = remat_now() + (o->deadline - remat_now()) / 3;
		memcpy(cand, order, sizeof(int32_t) * (size_t)g->n);
		cp = *peak;
		rc = order_schedule(g, &so, cand, &cp, err);
		if (rc == REMAT_OK && cp < *peak) {
			*peak = cp;
			memcpy(order, cand, sizeof(int32_t) * (size_t)g->n);
		}
	}
	if (rc == REMAT_OK)
		rc = remat_i_order_local_from(g, o, order, peak, err);
	if (rc == REMAT_OK && m == REMAT_ORDER_BUDGET && o->budget > 0 && *peak > o->budget) {
		struct remat_order_opts to = *o;

		to.target = o->budget;
		rc = remat_i_order_local_from(g, &to, order, peak, err);
	}
	free(cand);
	return rc;
}
