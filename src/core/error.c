/* error.c - the caller-owned error record. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "remat/error.h"

void remat_error_clear(struct remat_error *err)
{
	if (!err)
		return;
	err->code = REMAT_OK;
	err->msg[0] = '\0';
	err->src_file = NULL;
	err->src_line = 0;
}

int remat_error_set_at(struct remat_error *err, const char *file, int line,
		       int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	err->src_file = file;
	err->src_line = line;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

void remat_error_prefix(struct remat_error *err, const char *fmt, ...)
{
	char head[256], old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", head, old);
}

const char *remat_status_name(int code)
{
	switch (code) {
	case REMAT_OK: return "ok";
	case REMAT_EINPUT: return "bad input";
	case REMAT_EUSAGE: return "usage error";
	case REMAT_ENOFIT: return "no schedule within budget";
	case REMAT_ENOMEM: return "out of memory";
	case REMAT_EIO: return "i/o error";
	case REMAT_EINTERNAL: return "internal error";
	case REMAT_ECANCELED: return "canceled";
	}
	return "unknown error";
}
