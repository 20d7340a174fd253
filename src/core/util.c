/* util.c - file reading and JSON text helpers; see util.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

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

int remat_i_json_parse(const char *buf, size_t len, const char *source,
		       struct cJSON **out, struct remat_error *err)
{
	const char *end = NULL;
	cJSON *root;
	size_t i;
	int blank = 1;

	*out = NULL;
	for (i = 0; i < len; i++) {
		if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r') {
			blank = 0;
			break;
		}
	}
	if (blank)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: empty file, expected JSON", source);
	if (memchr(buf, '\0', len))
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: not a JSON text (contains a NUL byte)",
				  source);
	/* The length must include the terminating NUL (cJSON 1.7.15). */
	root = cJSON_ParseWithLengthOpts(buf, len + 1, &end, 1);
	if (!root) {
		long line, col;
		size_t off = end && end >= buf ? (size_t)(end - buf) : 0;

		if (off > len)
			off = len;
		remat_i_line_col(buf, off, &line, &col);
		if (off >= len)
			return REMAT_FAIL(err, REMAT_EINPUT,
					  "%s:%ld:%ld: invalid JSON: unexpected end of file",
					  source, line, col);
		{
			char near[16];
			size_t k;

			/* Quote the text at the error, up to 12 printable bytes. */
			for (k = 0; k < 12 && off + k < len && (unsigned char)buf[off + k] >= 0x20;
			     k++)
				near[k] = buf[off + k];
			near[k] = '\0';
			return REMAT_FAIL(err, REMAT_EINPUT, "%s:%ld:%ld: invalid JSON near '%s'",
					  source, line, col, near);
		}
	}
	*out = root;
	return REMAT_OK;
}

int remat_i_json_parse_copy(const char *buf, size_t len, const char *source,
			    struct cJSON **out, struct remat_error *err)
{
	char *copy = malloc(len + 1);
	int rc;

	*out = NULL;
	if (!copy)
		return REMAT_FAIL(err, REMAT_ENOMEM, "%s: out of memory", source);
	if (len)
		memcpy(copy, buf, len);
	copy[len] = '\0';
	rc = remat_i_json_parse(copy, len, source, out, err);
	free(copy);
	return rc;
}

struct cJSON *remat_i_json_member(const struct cJSON *obj, const char *key,
				  int *dup)
{
	cJSON *found = NULL, *it;

	if (dup)
		*dup = 0;
	if (!obj || !cJSON_IsObject(obj))
		return NULL;
	for (it = obj->child; it; it = it->next) {
		if (it->string && strcmp(it->string, key) == 0) {
			if (found) {
				if (dup)
					*dup = 1;
				break;
			}
			found = it;
			if (!dup)
				break;
		}
	}
	return found;
}

int remat_i_json_uint(const struct cJSON *v, int64_t max, int64_t *out)
{
	double d;

	if (!v || !cJSON_IsNumber(v))
		return 0;
	d = v->valuedouble;
	if (!isfinite(d) || d != floor(d) || d < 0 || d > (double)max)
		return 0;
	*out = (int64_t)d;
	return 1;
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
