/* error.c - the caller-owned error record. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "remat/error.h"
#include "core/json_read.h"
#include "core/util.h"

/*
 * Copy message src into dst (size bytes) made safe to print, so that no
 * caller has to escape what it quotes (ids, paths, JSON text): bytes below
 * 0x20, DEL and bytes that are not valid UTF-8 become \xNN, the C1
 * controls U+0080-U+009F become \u00NN.  Printable ASCII and valid UTF-8
 * pass through, so escaping twice changes nothing.
 */
void remat_i_text_safe(char *dst, size_t size, const char *src)
{
	const unsigned char *p = (const unsigned char *)src, *e = p + strlen(src);
	size_t o = 0;

	while (p < e) {
		char piece[8];
		size_t n;
		int seq = *p >= 0x20 && *p != 0x7f ? remat_i_utf8_seq(p, e) : 0;

		if (seq == 2 && p[0] == 0xC2 && p[1] < 0xA0) {
			n = (size_t)snprintf(piece, sizeof(piece), "\\u%04x", p[1]);
		} else if (seq > 0) {
			memcpy(piece, p, (size_t)seq);
			n = (size_t)seq;
		} else {
			n = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", *p);
			seq = 1;
		}
		if (o + n >= size)
			break;
		memcpy(dst + o, piece, n);
		o += n;
		p += seq;
	}
	dst[o] = '\0';
}

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
	char raw[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	err->src_file = file;
	err->src_line = line;
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	remat_i_text_safe(err->msg, sizeof(err->msg), raw);
	return code;
}

void remat_error_prefix(struct remat_error *err, const char *fmt, ...)
{
	char head[256], raw[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(head, sizeof(head), fmt, ap);
	va_end(ap);
	snprintf(raw, sizeof(raw), "%s: %s", head, err->msg);
	remat_i_text_safe(err->msg, sizeof(err->msg), raw);
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
