/* cmd_planners.c - remat planners: one line per planner. */
#include <stdio.h>

#include "cli/cli.h"

const struct cli_opt cmd_planners_opts[] = {
	{ NULL, 0, NULL, NULL, 0 }
};

int cmd_planners(struct cli_args *a)
{
	const struct remat_planner *const *pp;

	(void)a;
	for (pp = remat_planner_list(); *pp; pp++)
		printf("%-12s %s\n", (*pp)->name, (*pp)->summary);
	return 0;
}
