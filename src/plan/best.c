/* best.c - the best-schedule keeper for searches; see best.h. */
#include <string.h>

#include "plan/best.h"

void remat_i_best_init(struct remat_i_best *b)
{
	memset(b, 0, sizeof(*b));
	b->least_peak = -1;
	remat_schedule_init(&b->sched);
}

void remat_i_best_release(struct remat_i_best *b)
{
	remat_schedule_release(&b->sched);
	b->have = 0;
}

int remat_i_result_better(const struct remat_sim_result *a, int64_t a_steps,
			const struct remat_sim_result *b, int64_t b_steps)
{
	/* Costs within a relative 1e-12 count as equal (float sums). */
	double tol = 1e-12 * (a->cost > b->cost ? a->cost : b->cost);

	if (a->cost < b->cost - tol)
		return 1;
	if (a->cost > b->cost + tol)
		return 0;
	if (a->peak_mem != b->peak_mem)
		return a->peak_mem < b->peak_mem;
	return a_steps < b_steps;
}

int remat_i_best_offer(struct remat_i_best *b, const char *planner,
		     const struct remat_graph *g, int64_t budget,
		     struct remat_schedule *cand, struct remat_sim_result *res_out,
		     int *kept, struct remat_error *err)
{
	struct remat_sim_result r;

	if (kept)
		*kept = 0;
	REMAT_TRY(remat_schedule_add_frees(g, cand, err));
	REMAT_TRY(remat_simulate(g, cand, budget, NULL, &r, err));
	if (res_out)
		*res_out = r;
	if (!r.valid)
		return REMAT_FAIL(err, REMAT_EINTERNAL,
				  "planner '%s' built an invalid schedule: %s", planner, r.error);
	if (b->least_peak < 0 || r.peak_mem < b->least_peak)
		b->least_peak = r.peak_mem;
	if (!r.feasible)
		return REMAT_OK;
	if (b->have && !remat_i_result_better(&r, cand->n, &b->res, b->sched.n))
		return REMAT_OK;
	REMAT_TRY(remat_schedule_copy(&b->sched, cand, err));
	b->res = r;
	b->have = 1;
	if (kept)
		*kept = 1;
	return REMAT_OK;
}

int remat_i_best_take(struct remat_i_best *b, struct remat_schedule *out,
		    struct remat_error *err)
{
	if (!b->have)
		return REMAT_FAIL(err, REMAT_ENOFIT, "no schedule within the budget");
	remat_schedule_swap(out, &b->sched);
	remat_schedule_clear(&b->sched);
	b->have = 0;
	return REMAT_OK;
}
