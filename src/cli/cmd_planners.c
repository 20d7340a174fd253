/* cmd_planners.c - remat planners: one line per planner. */
#include <stdio.h>

#include "cli/cli.h"

int cmd_planners(const struct cli_cmd *cmd, int argc, char **argv)
{
	const struct remat_planner *const *pp;
	struct cli_opt opts[] = { OPT_END() };
	int code = cli_parse(cmd, opts, &argc, argv);

	if (code != CLI_GO_ON)
		return code;
	for (pp = remat_planner_list(); *pp; pp++)
		printf("%-12s %s\n", (*pp)->name, (*pp)->summary);
	return CLI_EXIT_OK;
}
