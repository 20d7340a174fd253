/*
 * lowest.c - remat_plan_lowest(): the lowest peak a planner reaches, in
 * one call (remat plan --budget lowest).
 *
 * A bisection on the budget between a proven peak lower bound (the cut
 * peak bound, remat_bound_cut_peak(), else the graph's least peak) and
 * the peak of a plan at the no-remat peak, each probe one
 * remat_plan_run() with a share of the time left; a probe that fits
 * lowers the top to the peak it found (not only to the budget it was
 * given), so the bisection closes on peaks that exist.  Planners are not
 * monotone in the budget (one may fit at 744 KB and not at 743), so the
 * answer is the lowest peak found, not a proof that nothing lower fits,
 * and the budget it reports is the one that probe was given (the planner
 * asked again for that budget finds that schedule), not the peak.
 *
 * auto's probes are auto asked only for a schedule within the budget
 * (--gap 0.999: it stops at the first one its fast planners find, and its
 * cut bound may prove at once that none exists); then auto plans, with
 * the options it was given, at the lowest peak found with the time left,
 * to lower the cost there, and the cheaper schedule is kept (its budget,
 * that peak, is the one reported).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/bound.h"
#include "remat/budget.h"
#include "remat/planner.h"
#include "analysis/needed.h"
#include "plan/every_order.h"
#include "plan/request.h"

/* The bisection stops when the top is within this fraction of the bottom. */
#define LOWEST_PRECISION 1e-3
/* Share of the time the probes may use before auto's own plan. */
#define LOWEST_PROBE_SHARE 0.8
/* Seconds kept from the last stage for the caller (at most; 2% of a shorter limit). */
#define LOWEST_WRITE_RESERVE 0.25
/* auto's probes: any schedule within the budget will do. */
#define LOWEST_PROBE_GAP "0.999"
/* Seconds the cut peak bound may take, at most (and at most 10% of the limit). */
#define LOWEST_BOUND_SECONDS 1.0

struct probe_state {
	const struct remat_plan_request *req;
	double t0;
	int probes;
	int64_t lo, hi;       /* lo: no budget <= lo is known to fit; hi: a peak found */
	char phase[96];
};

/* Probes the bisection still needs, about: one per halving to the precision. */
static double probes_left(const struct probe_state *ps)
{
	double span = (double)(ps->hi - ps->lo);

	return ceil(log2(fmax(2.0, span / fmax(1.0, LOWEST_PRECISION * (double)ps->lo))));
}

/* An even share of the time to phase_end (0: none, no limit). */
static double share_of(const struct probe_state *ps, double phase_end)
{
	return phase_end > 0 ? (phase_end - remat_now()) / probes_left(ps) : 0;
}

static double time_left(const struct remat_plan_request *req)
{
	return req->deadline > 0 ? req->deadline - remat_now() : INFINITY;
}

static void say(struct probe_state *ps, int64_t budget)
{
	struct remat_progress pr;
	char b[32];
	int left = (int)probes_left(ps);

	remat_format_bytes(budget, b, sizeof(b));
	snprintf(ps->phase, sizeof(ps->phase), "lowest: trying %s (probe %d, about %d more)",
		 b, ps->probes + 1, left);
	memset(&pr, 0, sizeof(pr));
	pr.planner = "lowest";
	pr.phase = ps->phase;
	pr.fraction = -1;
	pr.incumbent = NAN;
	pr.bound = NAN;
	pr.elapsed = remat_now() - ps->t0;
	remat_plan_progress(ps->req, &pr);
}

/*
 * One probe of p with the probes' request at budget with `seconds` (0:
 * up to the request's deadline).  REMAT_OK with *s, *res and chosen (64
 * bytes) filled, REMAT_ENOFIT, or an error.
 */
static int probe(const struct remat_planner *p, const struct remat_plan_request *probes,
		 int64_t budget, double seconds, struct remat_schedule *s,
		 struct remat_sim_result *res, char *chosen, struct remat_error *err)
{
	struct remat_plan_request sub = *probes;
	struct remat_plan_report rep;
	int rc;

	remat_plan_report_init(&rep);
	sub.budget = budget;
	sub.report = &rep;
	sub.progress = NULL;
	if (seconds > 0) {
		double d = remat_now() + seconds;

		if (sub.deadline <= 0 || d < sub.deadline)
			sub.deadline = d;
	}
	rc = remat_plan_run(p, &sub, s, res, err);
	if (rc == REMAT_OK)
		snprintf(chosen, 64, "%s", rep.chosen);
	return rc;
}

int remat_plan_lowest(const struct remat_planner *p, const struct remat_plan_request *req_in,
		      struct remat_schedule *out, struct remat_sim_result *res,
		      int64_t *peak_bound, struct remat_error *err)
{
	struct remat_plan_request timed;
	const struct remat_plan_request *req = remat_i_request_timed(req_in, &timed);
	const struct remat_graph *g = req->graph;
	struct remat_plan_request probes = *req;
	struct remat_kv *opts = NULL;
	struct remat_schedule try;
	struct remat_sim_result tres;
	struct probe_state ps;
	struct remat_error perr;
	double left, bound_s, phase_end;
	int64_t cut = -1, least = remat_i_least_peak(g), at = g->no_remat_peak;
	int rc, is_auto = strcmp(p->name, "auto") == 0, auto_won = 0;
	char chosen[64] = "", probe_chosen[64] = "";

	*peak_bound = -1;
	remat_schedule_clear(out);
	memset(res, 0, sizeof(*res));
	res->valid = 0;
	res->budget = -1;
	if (least < 0)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	memset(&ps, 0, sizeof(ps));
	ps.req = req;
	ps.t0 = remat_now();
	/* auto's probes: the options it was given, and --gap 0.999 last (it wins). */
	if (is_auto)
		REMAT_TRY(remat_i_request_with_option(&probes, "gap", LOWEST_PROBE_GAP, &opts,
						      err));

	/* The peak lower bound: the cut's, in a small share of the time. */
	left = time_left(req);
	bound_s = isinf(left) ? LOWEST_BOUND_SECONDS : fmin(LOWEST_BOUND_SECONDS, 0.1 * left);
	rc = remat_bound_cut_peak(g, bound_s, &cut, NULL, err);
	if (rc) {
		free(opts);
		return rc;
	}
	*peak_bound = cut > least ? cut : least;
	ps.lo = *peak_bound - 1;

	/* The top: a plan at the no-remat peak, which always fits. */
	remat_schedule_init(&try);
	left = time_left(req);
	phase_end = is_auto && !isinf(left) ? remat_now() + LOWEST_PROBE_SHARE * left
		: req->deadline;
	ps.hi = g->no_remat_peak;
	say(&ps, g->no_remat_peak);
	rc = probe(p, &probes, g->no_remat_peak, share_of(&ps, phase_end), out, res,
		   chosen, err);
	ps.probes++;
	if (rc) {
		remat_schedule_release(&try);
		free(opts);
		return rc;
	}
	ps.hi = res->peak_mem;

	/* Bisect, each probe with an even share of what the bisection has left. */
	while (ps.hi - ps.lo > (int64_t)fmax(1.0, LOWEST_PRECISION * (double)ps.lo)
	       && !remat_plan_expired(req)) {
		int64_t mid = ps.lo + (ps.hi - ps.lo) / 2;
		double share = share_of(&ps, phase_end);

		if (phase_end > 0 && share <= 0)
			break;
		say(&ps, mid);
		remat_error_clear(&perr);
		rc = probe(p, &probes, mid, share, &try, &tres, probe_chosen, &perr);
		ps.probes++;
		if (rc == REMAT_OK) {
			ps.hi = tres.peak_mem < mid ? tres.peak_mem : mid;
			at = mid;
			memcpy(chosen, probe_chosen, sizeof(chosen));
			remat_schedule_swap(out, &try);
			*res = tres;
		} else if (rc == REMAT_ENOFIT) {
			ps.lo = mid;
		} else {
			*err = perr;
			remat_schedule_release(&try);
			free(opts);
			return rc;
		}
	}
	free(opts);

	/*
	 * auto: plan at the lowest peak found, to lower the cost there.  Not
	 * at the budget of the probe that found it: a cheaper schedule there
	 * may peak higher (an outside review: fcn-8-vgg-train's first probe
	 * found the peak bound, 7.72 GiB, and the plan at its budget, 10.14
	 * GiB, replaced it with a cheaper one of 9.78 GiB).
	 */
	if (is_auto && !remat_plan_expired(req)) {
		struct remat_plan_request sub = *req;

		sub.budget = res->peak_mem;
		/*
		 * Leave the caller a moment of the limit to check and write
		 * the answer: --time-limit bounds the whole command.
		 */
		if (sub.deadline > 0)
			sub.deadline -= fmin(LOWEST_WRITE_RESERVE, 0.02 * req->time_limit);
		remat_error_clear(&perr);
		rc = remat_plan_run(p, &sub, &try, &tres, &perr);
		if (rc == REMAT_OK && tres.cost < res->cost) {
			remat_schedule_swap(out, &try);
			*res = tres;
			at = sub.budget;
			auto_won = 1;
			if (req->report)
				snprintf(chosen, sizeof(chosen), "%s", req->report->chosen);
		} else if (rc != REMAT_OK && rc != REMAT_ENOFIT) {
			*err = perr;
			remat_schedule_release(&try);
			return rc;
		}
	}
	remat_schedule_release(&try);
	res->budget = at;
	res->feasible = res->valid && res->peak_mem <= at;
	if (req->report) {
		char pk[32], lb[32];
		struct remat_plan_report *r = req->report;

		if (!auto_won) {
			/* A probe's schedule: auto's own report does not describe it. */
			remat_plan_report_init(r);
			/*
			 * The planners that report a bound: one in every order at the
			 * budget found, for the schedule returned (it was left out).
			 */
			if (p->flags & REMAT_PLANNER_BOUNDS) {
				struct remat_plan_request at_req = *req;
				int brc;

				at_req.budget = at;
				brc = remat_i_report_every_order(&at_req, out, err);
				if (brc)
					return brc;
				r->order_lower_bound = NAN;
			}
		}
		snprintf(r->chosen, sizeof(r->chosen), "%s", chosen);
		r->peak_bound = *peak_bound;
		remat_format_bytes(res->peak_mem, pk, sizeof(pk));
		remat_format_bytes(*peak_bound, lb, sizeof(lb));
		/* A peak bound of 0 (nothing to hold): the peak is at it, or 0% is meaningless. */
		snprintf(r->note, sizeof(r->note), "lowest: peak %s, %.2f%% above the peak lower "
			 "bound %s (%s); %d probes in %.2f s", pk, *peak_bound > 0 ?
			 100.0 * ((double)res->peak_mem / (double)*peak_bound - 1.0) : 0.0, lb,
			 cut > least ? "the cut" : "the largest node", ps.probes,
			 remat_now() - ps.t0);
	}
	return REMAT_OK;
}
