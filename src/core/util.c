/* util.c - file reading and JSON writing helpers; see util.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/sim.h"
#include "core/util.h"

int remat_i_read_file(const char *path, char **buf, size_t *len,
		      struct remat_error *err)
{
	FILE *f = fopen(path, "rb");
	char *data = NULL;
	size_t cap = 0, n = 0;

	*buf = NULL;
	*len = 0;
	if (!f)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: cannot read: %s", path,
				  strerror(errno));
	for (;;) {
		size_t got;

		if (cap - n < 65536) {
			size_t ncap = cap ? cap * 2 : 65536 * 4;
			char *nd = realloc(data, ncap + 1);

			if (!nd) {
				free(data);
				fclose(f);
				return REMAT_FAIL(err, REMAT_ENOMEM,
						  "%s: out of memory reading the file", path);
			}
			data = nd;
			cap = ncap;
		}
		got = fread(data + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				int e = errno;

				free(data);
				fclose(f);
				return REMAT_FAIL(err, REMAT_EINPUT, "%s: cannot read: %s",
						  path, strerror(e ? e : EIO));
			}
			break;
		}
	}
	fclose(f);
	data[n] = '\0';
	*buf = data;
	*len = n;
	return REMAT_OK;
}

void remat_i_line_col(const char *buf, size_t off, long *line, long *col)
{
	long l = 1, c = 1;
	size_t i;

	for (i = 0; i < off && buf[i]; i++) {
		if (buf[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

void remat_i_json_write_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		case '\b': fputs("\\b", f); break;
		case '\f': fputs("\\f", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

void remat_i_json_fmt_num(double v, char *buf, size_t size)
{
	if (!isfinite(v)) {
		snprintf(buf, size, "null");
		return;
	}
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		snprintf(buf, size, "%.0f", v);
		if (strcmp(buf, "-0") == 0)
			snprintf(buf, size, "0");
		return;
	}
	/*
	 * Twelve significant digits: costs and overheads are sums and ratios
	 * of doubles, and 0.19999999999999996 helps nobody.
	 */
	snprintf(buf, size, "%.12g", v);
}

void remat_i_json_write_num(FILE *f, double v)
{
	char buf[64];

	remat_i_json_fmt_num(v, buf, sizeof(buf));
	fputs(buf, f);
}

void remat_i_json_write_figures(FILE *f, const struct remat_sim_result *r,
				const char *sep)
{
	if (!r) {
		fprintf(f, "%s\"peak_mem\": null%s\"cost\": null%s\"baseline_cost\": null"
			"%s\"overhead\": null%s\"computes\": null%s\"recomputes\": null",
			sep, sep, sep, sep, sep, sep);
		return;
	}
	fprintf(f, "%s\"peak_mem\": %lld%s\"cost\": ", sep, (long long)r->peak_mem, sep);
	remat_i_json_write_num(f, r->cost);
	fprintf(f, "%s\"baseline_cost\": ", sep);
	remat_i_json_write_num(f, r->baseline_cost);
	fprintf(f, "%s\"overhead\": ", sep);
	remat_i_json_write_num(f, r->overhead);
	fprintf(f, "%s\"computes\": %lld%s\"recomputes\": %lld", sep, (long long)r->computes,
		sep, (long long)r->recomputes);
}

const char *remat_i_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}
