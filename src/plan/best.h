/*
 * best.h - keeping the best schedule of a search, with the simulator as
 * the oracle.  Planners with a knob that trades memory for compute (Chen's
 * segment budget, TWRemat's cut-off, Rotor's internal budget, ...) build a
 * candidate per knob value and offer each here; the cheapest valid one
 * within budget is kept (ties: lower peak, then fewer steps).  Internal to
 * libremat.
 */
#ifndef REMAT_PLAN_BEST_H
#define REMAT_PLAN_BEST_H

#include "remat/planner.h"

struct remat_i_best {
	struct remat_schedule sched;
	struct remat_sim_result res;
	int have;
	int64_t least_peak;   /* lowest peak of any valid candidate, -1: none yet */
};

void remat_i_best_init(struct remat_i_best *b);
void remat_i_best_release(struct remat_i_best *b);

/*
 * Judge cand (frees are derived first when it has none; cand may be
 * rewritten in place) and keep a copy when it is valid, within budget and
 * better than what is kept.  res_out (may be NULL) receives the
 * simulation; *kept (may be NULL) says whether it was kept.  An invalid
 * candidate is a planner bug: REMAT_EINTERNAL naming planner.
 */
int remat_i_best_offer(struct remat_i_best *b, const char *planner,
		     const struct remat_graph *g, int64_t budget,
		     struct remat_schedule *cand, struct remat_sim_result *res_out,
		     int *kept, struct remat_error *err);

/* Move the kept schedule into out; REMAT_ENOFIT when there is none. */
int remat_i_best_take(struct remat_i_best *b, struct remat_schedule *out,
		    struct remat_error *err);

/* Is a better than b as a plan (valid, feasible assumed)? */
int remat_i_result_better(const struct remat_sim_result *a, int64_t a_steps,
			const struct remat_sim_result *b, int64_t b_steps);

#endif
