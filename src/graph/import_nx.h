/* import_nx.h - the networkx node-link importer, shared with load.c's hook. */
#ifndef REMAT_IMPORT_NX_H
#define REMAT_IMPORT_NX_H

#include "remat/gen.h"

struct cJSON;

/* Does root look like node-link JSON (no "format", "nodes" and "links")? */
int remat_i_nx_detect(const struct cJSON *root);

/*
 * Add the nodes of a node-link document to b (see remat/gen.h for the
 * mapping).  Errors name src, the node (or nodes[i], links[i]) and the field.
 */
int remat_i_nx_build(const struct cJSON *root, const char *src, unsigned flags,
		     struct remat_graph_builder *b, struct remat_error *err);

#endif
