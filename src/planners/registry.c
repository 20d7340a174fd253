/*
 * registry.c - the table of planners.  Adding one: write its file, add one
 * line here (see include/remat/planner.h).  Order matters: it is the order
 * of `remat planners` and the order in which `auto` tries them (put the
 * cheap and reliable ones first).
 */
#include <string.h>

#include "remat/planner.h"

extern const struct remat_planner remat_i_planner_auto;
extern const struct remat_planner remat_i_planner_none;
extern const struct remat_planner remat_i_planner_chen;
extern const struct remat_planner remat_i_planner_chen_greedy;
extern const struct remat_planner remat_i_planner_rotor;
extern const struct remat_planner remat_i_planner_rockmate;
extern const struct remat_planner remat_i_planner_twremat;
extern const struct remat_planner remat_i_planner_greedy;
extern const struct remat_planner remat_i_planner_dtr;
extern const struct remat_planner remat_i_planner_mincut;
extern const struct remat_planner remat_i_planner_checkmate;
extern const struct remat_planner remat_i_planner_checkmate_lp;
extern const struct remat_planner remat_i_planner_lns;

static const struct remat_planner *const planners[] = {
	&remat_i_planner_auto,
	&remat_i_planner_none,
	&remat_i_planner_chen,
	&remat_i_planner_chen_greedy,
	&remat_i_planner_rotor,
	&remat_i_planner_rockmate,
	&remat_i_planner_twremat,
	&remat_i_planner_greedy,
	&remat_i_planner_dtr,
	&remat_i_planner_mincut,
	&remat_i_planner_checkmate,
	&remat_i_planner_checkmate_lp,
	&remat_i_planner_lns,
	NULL
};

const struct remat_planner *const *remat_planner_list(void)
{
	return planners;
}

const struct remat_planner *remat_planner_find(const char *name)
{
	const struct remat_planner *const *p;

	for (p = planners; *p; p++)
		if (strcmp((*p)->name, name) == 0)
			return *p;
	return NULL;
}
