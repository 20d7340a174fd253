/* graph_internal.h - graph internals shared by builder.c and load.c. */
#ifndef REMAT_GRAPH_INTERNAL_H
#define REMAT_GRAPH_INTERNAL_H

#include <stdint.h>

#include "remat/graph.h"

/* Parse a kind name; -1 when unknown. */
int remat_i_kind_parse(const char *s);

/* FNV-1a hash of a string. */
uint64_t remat_i_hash_str(const char *s);

#endif
