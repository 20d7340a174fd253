/*
 * igraph_glue.h - the one place libremat meets igraph's error handling.
 * igraph's default handler aborts the process; remat_i_igraph_setup()
 * installs one that records the message and returns, so every igraph call
 * can be checked and mapped to a remat status with remat_i_igraph_check().
 */
#ifndef REMAT_IGRAPH_GLUE_H
#define REMAT_IGRAPH_GLUE_H

#include <igraph.h>

#include "remat/error.h"

/* Install the non-aborting handlers (idempotent, cheap). */
void remat_i_igraph_setup(void);

/*
 * Map an igraph status to a remat status: REMAT_OK, REMAT_ENOMEM, or
 * REMAT_EINTERNAL with "WHAT: igraph: <its message>" in err.
 */
int remat_i_igraph_check(igraph_error_t rc, const char *what,
			 struct remat_error *err);

#endif
