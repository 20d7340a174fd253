/*
 * fuzz_nx.c - libFuzzer target for the networkx node-link importer
 * (remat_nx_load_buffer), in file order and in the "graph.order" order:
 * any byte string must load or fail with a message, never crash, leak or
 * hang.  When a graph loads, the no-remat schedule must simulate valid at
 * the graph's no-remat peak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "remat/remat.h"
#include "judge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (unsigned flags = 0; flags <= REMAT_NX_GRAPH_ORDER; flags++) {
		struct remat_graph *g = NULL;
		struct remat_error err;
		int rc;

		remat_error_clear(&err);
		rc = remat_nx_load_buffer((const char *)data, size, "fuzz", flags, &g, &err);
		judge_loaded(rc, g, &err);
	}
	return 0;
}
