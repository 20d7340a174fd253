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
 *    1-separators.  Inference graph or no stage: the no-remat order.
 * 2. Checkpoint every floor(sqrt(k))-th stage boundary, which gives
 *    segments of floor(sqrt(k)) stages (the last may be shorter).
 * 3. Forward pass keeping only the segments' inputs (the checkpoints);
 *    the last segment keeps everything; then, from the last segment to
 *    the first, recompute the segment from its checkpoint keeping
 *    everything and run its backward.  At most one extra forward pass.
 * 4. Expand to nodes, simulate, and keep the cheaper of this schedule
 *    and the no-remat order that fits the budget.
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
 *    schedule within the user's budget wins (fit.c).
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

#include "chainplan.h"
#include "fit.h"

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

static int chen_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		     struct remat_error *err)
{
	struct remat_best best;
	struct remat_chain *c = NULL;
	struct remat_i_cops ops;
	struct remat_schedule tmp;
	int32_t *starts = NULL, nseg;
	int rc;

	remat_best_init(&best);
	remat_i_cops_init(&ops);
	remat_schedule_init(&tmp);
	rc = remat_i_chain_start(req, "chen", &best, &c, err);
	if (rc || !c)
		goto done;
	starts = malloc(sizeof(int32_t) * ((size_t)c->n_stages + 1));
	if (!starts) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	nseg = remat_i_chen_sqrt_starts(c->n_stages, starts);
	rc = remat_i_chen_ops(c->n_stages, starts, nseg, &ops, err);
	if (rc == REMAT_OK)
		rc = remat_i_chain_offer(req, "chen", c, &ops, &best, &tmp, NULL, NULL, err);
	if (rc == REMAT_OK && req->report && best.have)
		snprintf(req->report->note, sizeof(req->report->note),
			 "%d stages, %d segments of up to %d", (int)c->n_stages, (int)nseg,
			 (int)(nseg > 1 ? starts[1] : c->n_stages));
done:
	if (rc == REMAT_OK)
		rc = remat_best_take(&best, out, err);
	free(starts);
	remat_chain_free(c);
	remat_i_cops_release(&ops);
	remat_schedule_release(&tmp);
	remat_best_release(&best);
	return rc;
}

/* Try the segmentation for B unless it was tried already. */
static int try_budget(const struct remat_plan_request *req, const struct remat_chain *c,
		      double B, int32_t *starts, int32_t **seen, int32_t *seen_n,
		      int32_t *n_seen, struct remat_best *best, struct remat_i_cops *ops,
		      struct remat_schedule *tmp, struct remat_error *err)
{
	int32_t nseg = remat_i_chen_greedy_starts(c, B, starts, NULL, NULL), i;

	for (i = 0; i < *n_seen; i++)
		if (seen_n[i] == nseg &&
		    memcmp(seen[i], starts, sizeof(int32_t) * (size_t)nseg) == 0)
			return REMAT_OK;
	if (*n_seen < 64) {
		seen[*n_seen] = malloc(sizeof(int32_t) * (size_t)nseg);
		if (!seen[*n_seen])
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		memcpy(seen[*n_seen], starts, sizeof(int32_t) * (size_t)nseg);
		seen_n[(*n_seen)++] = nseg;
	}
	ops->n = 0;
	REMAT_TRY(remat_i_chen_ops(c->n_stages, starts, nseg, ops, err));
	return remat_i_chain_offer(req, "chen-greedy", c, ops, best, tmp, NULL, NULL, err);
}

static int chen_greedy_plan(const struct remat_plan_request *req,
			    struct remat_schedule *out, struct remat_error *err)
{
	struct remat_best best;
	struct remat_chain *c = NULL;
	struct remat_i_cops ops;
	struct remat_schedule tmp;
	int32_t *starts = NULL, *seen[64], seen_n[64], n_seen = 0, i;
	double x0, y0, B0, lo, hi, total = 0, Bs[40];
	int nb = 0, rc, k;

	remat_best_init(&best);
	remat_i_cops_init(&ops);
	remat_schedule_init(&tmp);
	rc = remat_i_chain_start(req, "chen-greedy", &best, &c, err);
	if (rc || !c)
		goto done;
	starts = malloc(sizeof(int32_t) * ((size_t)c->n_stages + 1));
	if (!starts) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	lo = INFINITY;
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
	if (isfinite(lo) && total > lo) {
		hi = total;
		for (k = 0; k <= 24; k++)
			Bs[nb++] = lo * pow(hi / lo, k / 24.0);
	}
	Bs[nb++] = INFINITY;
	for (k = 0; k < nb && rc == REMAT_OK; k++) {
		if (best.have && remat_plan_expired(req))
			break;
		rc = try_budget(req, c, Bs[k], starts, seen, seen_n, &n_seen, &best, &ops,
				&tmp, err);
	}
	if (rc == REMAT_OK && req->report && best.have)
		snprintf(req->report->note, sizeof(req->report->note),
			 "%d stages, %d segmentations tried", (int)c->n_stages, (int)n_seen);
done:
	if (rc == REMAT_OK)
		rc = remat_best_take(&best, out, err);
	for (i = 0; i < n_seen; i++)
		free(seen[i]);
	free(starts);
	remat_chain_free(c);
	remat_i_cops_release(&ops);
	remat_schedule_release(&tmp);
	remat_best_release(&best);
	return rc;
}

const struct remat_planner remat_planner_chen = {
	.name = "chen",
	.summary = "Chen et al. 2016: checkpoint every sqrt(n)-th stage of the chain view",
	.flags = REMAT_PLANNER_AUTO,
	.options = NULL,
	.plan = chen_plan,
};

const struct remat_planner remat_planner_chen_greedy = {
	.name = "chen-greedy",
	.summary = "Chen et al. 2016 Alg. 3: greedy segments under a budget B, B searched",
	.flags = REMAT_PLANNER_AUTO,
	.options = NULL,
	.plan = chen_greedy_plan,
};
