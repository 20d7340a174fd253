/*
 * chen.c - Chen et al.'s segmented checkpointing on the chain view:
 * `chen` (sqrt(n) segments) and `chen-greedy` (Algorithm 3 with a search
 * over its segment budget).
 *
 * Chen, Xu, Zhang, Guestrin, "Training Deep Nets with Sublinear Memory
 * Cost" (2016), section 4.3 (sqrt(n) segmentation), Algorithm 3 (memory
 * planning with budget B) and appendix A (search over B).
 *
 * chen:
 * 1. Build the chain view (src/analysis/chain.c): k stages cut at
 *    1-separators.  Inference graph or no stage: nothing to plan.
 * 2. Checkpoint every floor(sqrt(k))-th stage boundary, which gives
 *    segments of floor(sqrt(k)) stages (the last may be shorter).
 * 3. Forward pass keeping only the segments' inputs (the checkpoints);
 *    the last segment keeps everything; then, from the last segment to
 *    the first, recompute the segment from its checkpoint keeping
 *    everything and run its backward.  At most one extra forward pass.
 * 4. Expand to nodes and simulate.  (Where the budget covers the
 *    no-remat peak, the plan runner keeps the cheaper of this schedule
 *    and the no-remat order: src/plan/run.c.)
 *
 * chen-greedy:
 * 1. As above, k stages; stage i's size is x-bar_i, the bytes its forward
 *    keeps for its backward.
 * 2. Algorithm 3 for a segment budget B: a running sum of stage sizes;
 *    a stage boundary becomes a checkpoint when the sum exceeds B, which
 *    then restarts at 0.  It also returns x (checkpoint bytes) and y
 *    (largest segment sum).
 * 3. The search over B of appendix A: B = 0, then B0 = sqrt(x*y) from
 *    that run and a 6-point grid on [B0/sqrt(2), sqrt(2)*B0]; added
 *    here, 24 geometric steps from the smallest stage size to the sum of
 *    all (so budgets far from B0 are covered) and B = infinity.  Every
 *    distinct segmentation is expanded and simulated; the cheapest
 *    schedule within the user's budget wins (src/plan/best.c).
 *
 * Complexity: chain view O(n + e); chen one expansion and simulation,
 * O(n + e + recomputes); chen-greedy at most ~40 of them.
 *
 * Not guaranteed: sqrt(k) segments fit any particular budget, or are the
 * best segmentation (they minimise Chen's O(n/k) + O(k) estimate for
 * equal stages only); chen-greedy's B search is a heuristic and Chen's
 * single-level segmentation is never better than Rotor's optimum on the
 * same stage model.  Both answer exit 3 when neither their schedule nor
 * the no-remat order fits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/stage_plan.h"

int32_t remat_i_chen_sqrt_starts(int32_t k, int32_t *starts)
{
	int32_t c = (int32_t)floor(sqrt((double)k)), s, n = 0;

	if (c < 1)
		c = 1;
	while ((int64_t)(c + 1) * (c + 1) <= k)   /* guard sqrt rounding */
		c++;
	while ((int64_t)c * c > k)
		c--;
	for (s = 0; s < k; s += c)
		starts[n++] = s;
	return n;
}

int32_t remat_i_chen_greedy_starts(const struct remat_chain *c, double B, int32_t *starts,
				   double *x_out, double *y_out)
{
	double temp = 0, x = 0, y = 0;
	int32_t i, n = 0;

	starts[n++] = 0;
	for (i = 0; i < c->n_stages; i++) {
		temp += (double)c->stages[i].xbar;
		if (i + 1 < c->n_stages && temp > B) {
			x += (double)c->stages[i].y;
			if (temp > y)
				y = temp;
			temp = 0;
			starts[n++] = i + 1;
		}
	}
	if (x_out)
		*x_out = x;
	if (y_out)
		*y_out = y;
	return n;
}

static int chen_plan_view(const struct remat_plan_request *req, struct remat_schedule *out,
		     struct remat_error *err)
{
	struct remat_i_chain_run run;
	struct remat_i_cops ops;
	int32_t *starts = NULL, nseg, L;
	int rc;

	remat_i_cops_init(&ops);
	rc = remat_i_chain_run_start(&run, req, "chen", err);
	if (rc || !run.chain)
		goto done;
	L = run.chain->n_stages;
	starts = malloc(sizeof(int32_t) * ((size_t)L + 1));
	if (!starts) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	nseg = remat_i_chen_sqrt_starts(L, starts);
	rc = remat_i_chen_ops(L, starts, nseg, &ops, err);
	if (rc == REMAT_OK)
		rc = remat_i_chain_run_offer(&run, &ops, NULL, err);
	if (rc == REMAT_OK && req->report)
		snprintf(req->report->note, sizeof(req->report->note),
			 "%d stages, %d segments of up to %d", (int)L, (int)nseg,
			 (int)(nseg > 1 ? starts[1] : L));
done:
	free(starts);
	remat_i_cops_release(&ops);
	return remat_i_chain_run_finish(&run, rc, out, err);
}

static int chen_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		struct remat_error *err)
{
	return remat_i_chain_views(req, "chen", chen_plan_view, out, err);
}

/* Segmentations already tried (a small set: at most ~40 budgets B). */
struct seen {
	int32_t *starts[64];
	int32_t n_starts[64];
	int n;
};

/* Was this segmentation tried?  Records it if not (when memory allows). */
static int seen_before(struct seen *sn, const int32_t *starts, int32_t nseg)
{
	int i;

	for (i = 0; i < sn->n; i++)
		if (sn->n_starts[i] == nseg &&
		    memcmp(sn->starts[i], starts, sizeof(int32_t) * (size_t)nseg) == 0)
			return 1;
	if (sn->n < 64 && (sn->starts[sn->n] = malloc(sizeof(int32_t) * (size_t)nseg))) {
		memcpy(sn->starts[sn->n], starts, sizeof(int32_t) * (size_t)nseg);
		sn->n_starts[sn->n++] = nseg;
	}
	return 0;
}

static int chen_greedy_plan_view(const struct remat_plan_request *req,
			    struct remat_schedule *out, struct remat_error *err)
{
	struct remat_i_chain_run run;
	struct remat_i_cops ops;
	struct seen sn;
	const struct remat_chain *c;
	int32_t *starts = NULL, i, nseg;
	double x0, y0, B0, lo = INFINITY, total = 0, Bs[40];
	int nb = 0, rc, k, tried = 0;

	remat_i_cops_init(&ops);
	memset(&sn, 0, sizeof(sn));
	rc = remat_i_chain_run_start(&run, req, "chen-greedy", err);
	if (rc || !run.chain)
		goto done;
	c = run.chain;
	starts = malloc(sizeof(int32_t) * ((size_t)c->n_stages + 1));
	if (!starts) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < c->n_stages; i++) {
		total += (double)c->stages[i].xbar;
		if (c->stages[i].xbar > 0 && (double)c->stages[i].xbar < lo)
			lo = (double)c->stages[i].xbar;
	}
	/* Appendix A: B = 0, then sqrt(x*y) and a 6-point grid around it. */
	remat_i_chen_greedy_starts(c, 0, starts, &x0, &y0);
	B0 = sqrt(x0 * y0);
	Bs[nb++] = 0;
	Bs[nb++] = B0;
	for (k = 0; k < 6; k++)
		Bs[nb++] = B0 / sqrt(2) * pow(2, k / 5.0);
	/* A geometric sweep over the whole range, then no checkpoint at all. */
	if (isfinite(lo) && total > lo)
		for (k = 0; k <= 24; k++)
			Bs[nb++] = lo * pow(total / lo, k / 24.0);
	Bs[nb++] = INFINITY;
	for (k = 0; k < nb && rc == REMAT_OK; k++) {
		if (run.best.have && remat_plan_expired(req))
			break;
		nseg = remat_i_chen_greedy_starts(c, Bs[k], starts, NULL, NULL);
		if (seen_before(&sn, starts, nseg))
			continue;
		ops.n = 0;
		rc = remat_i_chen_ops(c->n_stages, starts, nseg, &ops, err);
		if (rc == REMAT_OK)
			rc = remat_i_chain_run_offer(&run, &ops, NULL, err);
		tried++;
	}
	if (rc == REMAT_OK && req->report)
		snprintf(req->report->note, sizeof(req->report->note),
			 "%d stages, %d segmentations tried", (int)c->n_stages, tried);
done:
	for (i = 0; i < sn.n; i++)
		free(sn.starts[i]);
	free(starts);
	remat_i_cops_release(&ops);
	return remat_i_chain_run_finish(&run, rc, out, err);
}

static int chen_greedy_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		struct remat_error *err)
{
	return remat_i_chain_views(req, "chen-greedy", chen_greedy_plan_view, out, err);
}

const struct remat_planner remat_i_planner_chen = {
	.name = "chen",
	.summary = "Chen et al. 2016: checkpoint every sqrt(n)-th stage of the chain view",
	.flags = REMAT_PLANNER_AUTO,
	.options = NULL,
	.plan = chen_plan,
};

const struct remat_planner remat_i_planner_chen_greedy = {
	.name = "chen-greedy",
	.summary = "Chen et al. 2016 Alg. 3: greedy segments under a budget B, B searched",
	.flags = REMAT_PLANNER_AUTO,
	.options = NULL,
	.plan = chen_greedy_plan,
};
