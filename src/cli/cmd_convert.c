/*
 * cmd_convert.c - remat convert: any graph remat reads (remat-graph, or
 * networkx node-link JSON) to remat-graph JSON, written atomically.
 */
#include <stdio.h>

#include "cli/cli.h"
#include "remat/gen.h"

const struct cli_opt cmd_convert_opts[] = {
	{ "output", 'o', "FILE", "write to FILE (atomically); default: stdout", 0 },
	{ "graph-order", 0, NULL,
	  "node-link input: list nodes in the order of its graph.order, not file order", 0 },
	{ NULL, 0, NULL, NULL, 0 }
};

int cmd_convert(struct cli_args *a)
{
	const char *out = cli_get(a, "output");
	struct remat_graph *g = NULL;
	struct remat_error err;
	int rc;

	remat_error_clear(&err);
	if (cli_flag(a, "graph-order"))
		rc = remat_nx_load_file(a->pos[0], REMAT_NX_GRAPH_ORDER, &g, &err);
	else
		rc = remat_graph_load_file(a->pos[0], &g, &err);
	if (rc == REMAT_OK)
		rc = remat_graph_write_file(out ? out : "-", g, &err);
	remat_graph_free(g);
	if (rc) {
		cli_error("%s", err.msg);
		return cli_exit_code(rc);
	}
	return 0;
}
