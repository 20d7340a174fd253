/*
 * atomic.h - writing a whole file atomically: into a temporary file in the
 * same directory, flushed and synced, then renamed into place, so that a
 * reader (or an interrupted run) never sees half a file.  Internal to
 * libremat.
 */
#ifndef REMAT_ATOMIC_H
#define REMAT_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

#include "remat/error.h"

/*
 * Replace path by the len bytes of buf.  On failure path is untouched, the
 * temporary is removed and err holds REMAT_EIO ("PATH: cannot write: ...").
 */
int remat_i_write_atomic(const char *path, const char *buf, size_t len,
			 struct remat_error *err);

/*
 * The same with the content written by body(f, ctx) to a stream: for
 * files too large to build in memory first (schedules, graphs).  Write
 * errors on f are caught at the flush.
 */
int remat_i_write_atomic_stream(const char *path,
				void (*body)(FILE *f, const void *ctx),
				const void *ctx, struct remat_error *err);

#endif
