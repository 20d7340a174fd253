/* igraph_glue.c - non-aborting igraph error handling; see igraph_glue.h. */
#include <stdio.h>

#include "core/igraph_glue.h"

static _Thread_local char last_msg[256];

static void record_error(const char *reason, const char *file, int line,
			 igraph_error_t igraph_errno)
{
	(void)file;
	(void)line;
	snprintf(last_msg, sizeof(last_msg), "%s (%s)", reason ? reason : "error",
		 igraph_strerror(igraph_errno));
	/* igraph's contract for handlers that return: free its finally stack. */
	IGRAPH_FINALLY_FREE();
}

static void ignore_warning(const char *reason, const char *file, int line)
{
	(void)reason;
	(void)file;
	(void)line;
}

void remat_i_igraph_setup(void)
{
	/*
	 * Once per thread, before the first igraph call libremat makes
	 * (igraph keeps its handlers per thread when built with thread-local
	 * storage, globally otherwise: once per thread covers both).
	 */
	static _Thread_local int done;

	if (done)
		return;
	igraph_set_error_handler(record_error);
	igraph_set_warning_handler(ignore_warning);
	done = 1;
}

int remat_i_igraph_check(igraph_error_t rc, const char *what,
			 struct remat_error *err)
{
	if (rc == IGRAPH_SUCCESS)
		return REMAT_OK;
	if (rc == IGRAPH_ENOMEM)
		return REMAT_FAIL(err, REMAT_ENOMEM, "%s: out of memory", what);
	return REMAT_FAIL(err, REMAT_EINTERNAL, "%s: igraph: %s", what, last_msg);
}
