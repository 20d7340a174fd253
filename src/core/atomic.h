/*
 * atomic.h - writing a whole file atomically: into a temporary file in the
 * same directory, flushed and synced, then renamed into place, so that a
 * reader (or an interrupted run) never sees half a file.  Internal to
 * libremat.
 *
 * What a path means, as in Unix tools:
 *   "-"                 standard output (flushed, not closed);
 *   a symbolic link     written through: the file the chain of links ends
 *                       at is replaced atomically in its own directory,
 *                       and the link stays a link;
 *   a FIFO or a character device (/dev/null, /dev/stdout, a terminal)
 *                       written in place, never replaced;
 *   a directory or any other file that is not regular: refused;
 *   a regular file      replaced; it keeps its permission bits.
 */
#ifndef REMAT_ATOMIC_H
#define REMAT_ATOMIC_H

#include <stddef.h>
#include <stdio.h>

#include "remat/error.h"

/*
 * Replace path by the len bytes of buf.  On failure path is untouched, the
 * temporary is removed and err holds REMAT_EIO ("PATH: cannot write: ...").
 * (A FIFO, device or "-" is written in place, so not atomically.)
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

/*
 * Remove the temporary file of a write under way, if any: for a handler
 * of a fatal signal (async-signal-safe), so that an interrupted write
 * leaves neither half a file nor a PATH.tmp.XXXXXX beside it.
 */
void remat_i_atomic_abandon(void);

#endif
