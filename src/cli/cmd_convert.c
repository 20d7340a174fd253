/*
 * cmd_convert.c - remat convert: any graph remat reads (remat-graph, or
 * networkx node-link JSON) to remat-graph JSON, written atomically.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "remat/gen.h"

int cmd_convert(const struct cli_cmd *cmd, int argc, char **argv)
{
	const char *out = "-";
	int graph_order = 0, code, rc;
	struct cli_opt opts[] = {
		OPT_STRING('o', "output", &out, "FILE",
			   "write to FILE (atomically); default: stdout"),
		OPT_FLAG(0, "graph-order", &graph_order,
			 "node-link input: list nodes in the order of its graph.order, not file order"),
		OPT_END()
	};
	struct remat_graph *g = NULL;
	struct remat_error err;

	code = cli_parse(cmd, opts, &argc, argv);
	if (code != CLI_GO_ON)
		return code;
	remat_error_clear(&err);
	if (graph_order)
		rc = remat_nx_load_file(argv[0], REMAT_NX_GRAPH_ORDER, &g, &err);
	else
		rc = remat_graph_load_file(argv[0], &g, &err);
	if (rc == REMAT_OK)
		rc = remat_graph_write_file(out, g, &err);
	remat_graph_free(g);
	if (rc) {
		cli_error("%s", err.msg);
		return cli_exit_code(rc);
	}
	return CLI_EXIT_OK;
}
