/* util.c - bounded file reading and JSON writing helpers; see util.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "remat/budget.h"
#include "remat/sim.h"
#include "core/json_read.h"
#include "core/util.h"

int remat_i_max_input(int64_t *out, struct remat_error *err)
{
	const char *env = getenv("REMAT_MAX_INPUT");
	struct remat_budget_spec spec;
	struct remat_error e2;
	int64_t v;

	*out = REMAT_I_MAX_INPUT_DEFAULT;
	if (!env || !*env)
		return REMAT_OK;
	if (remat_budget_parse(env, &spec, &e2) || spec.percent ||
	    remat_budget_resolve(&spec, 0, &v, &e2))
		return REMAT_FAIL(err, REMAT_EUSAGE, "REMAT_MAX_INPUT: cannot read '%.60s' "
				  "(expected a size such as 4GiB)", env);
	*out = v;
	return REMAT_OK;
}

static int too_large(const char *path, int64_t size, int64_t limit,
		     struct remat_error *err)
{
	char lim[32], got[32];

	remat_format_bytes(limit, lim, sizeof(lim));
	if (size < 0) /* a stream: we stopped reading at the limit */
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: too large (more than the input limit "
				  "of %s; set REMAT_MAX_INPUT to raise it)", path, lim);
	remat_format_bytes(size, got, sizeof(got));
	return REMAT_FAIL(err, REMAT_EINPUT, "%s: too large (%s; the input limit is %s, "
			  "set REMAT_MAX_INPUT to raise it)", path, got, lim);
}

const char *remat_i_input_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/*
 * One reader for plain and gzip-compressed input: zlib's gzread passes a
 * file that is not gzip through as it is ("transparent"), so a graph, a
 * schedule or a results file may be FILE or FILE.gz alike.  Standard
 * input is read through a duplicate of its descriptor, so that it stays
 * open (only one reader takes it, but it is not ours).
 */
static gzFile open_input(const char *path, int stdin_in)
{
	int fd = stdin_in ? dup(STDIN_FILENO) : open(path, O_RDONLY);
	gzFile gz;

	if (fd < 0)
		return NULL;
	gz = gzdopen(fd, "rb");
	if (!gz) {
		int e = errno;

		close(fd);
		errno = e ? e : ENOMEM;
	}
	return gz;
}

/* zlib's message without the "<fd:3>: " it puts before it. */
static const char *gz_reason(const char *msg, const char *otherwise)
{
	const char *c;

	if (!msg || !*msg)
		return otherwise;
	if (strncmp(msg, "<fd:", 4) == 0 && (c = strstr(msg, ">: ")) != NULL)
		msg = c + 3;
	return *msg ? msg : otherwise;
}

int remat_i_read_file(const char *path, char **buf, size_t *len,
		      struct remat_error *err)
{
	gzFile gz;
	struct stat st;
	char *data = NULL;
	size_t cap = 256 * 1024, n = 0, limit;
	int64_t max;
	int rc = REMAT_OK, stdin_in;

	*buf = NULL;
	*len = 0;
	REMAT_TRY(remat_i_max_input(&max, err));
	limit = (uint64_t)max >= SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)max;
	stdin_in = strcmp(path, "-") == 0;
	path = remat_i_input_name(path);
	errno = 0;
	gz = open_input(path, stdin_in);
	if (!gz)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: cannot read: %s", path,
				  strerror(errno ? errno : EIO));
	if (!stdin_in && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		if (st.st_size > max) {
			gzclose(gz);
			return too_large(path, (int64_t)st.st_size, max, err);
		}
		cap = (size_t)st.st_size + 1; /* one more byte: did it grow? */
	}
	if (cap > limit + 1)
		cap = limit + 1;
	if (cap < 4096)
		cap = 4096;
	data = malloc(cap + 1);
	if (!data) {
		gzclose(gz);
		return REMAT_FAIL(err, REMAT_ENOMEM, "%s: out of memory reading the file", path);
	}
	for (;;) {
		int got;
		unsigned want;
		const char *nul;

		if (n == cap) {
			size_t ncap = cap <= limit / 2 ? cap * 2 : limit + 1;
			char *nd;

			if (n > limit) {
				rc = too_large(path, -1, max, err);
				break;
			}
			nd = realloc(data, ncap + 1);
			if (!nd) {
				rc = REMAT_FAIL(err, REMAT_ENOMEM, "%s: out of memory reading the file",
						path);
				break;
			}
			data = nd;
			cap = ncap;
		}
		want = cap - n > (1u << 30) ? (1u << 30) : (unsigned)(cap - n);
		errno = 0;
		got = gzread(gz, data + n, want);
		if (got < 0) {
			int zerr;
			const char *msg = gzerror(gz, &zerr);

			if (zerr == Z_ERRNO)
				rc = REMAT_FAIL(err, REMAT_EINPUT, "%s: cannot read: %s", path,
						strerror(errno ? errno : EIO));
			else
				rc = REMAT_FAIL(err, REMAT_EINPUT, "%s: not a valid gzip file (%s)",
						path, gz_reason(msg, "corrupt data"));
			break;
		}
		nul = memchr(data + n, '\0', (size_t)got);
		if (nul) {
			long line, col;

			remat_i_line_col(data, (size_t)(nul - data), &line, &col);
			rc = REMAT_FAIL(err, REMAT_EINPUT, "%s:%ld:%ld: not a text file (contains "
					"a NUL byte)", path, line, col);
			break;
		}
		n += (size_t)got;
		if (got == 0) {
			int zerr;
			const char *msg = gzerror(gz, &zerr);

			/* A gzip stream cut short reads as an end with an error set. */
			if (zerr != Z_OK && zerr != Z_STREAM_END)
				rc = REMAT_FAIL(err, REMAT_EINPUT, "%s: not a valid gzip file (%s)",
						path, gz_reason(msg, "truncated"));
			break;
		}
	}
	gzclose(gz);
	if (rc) {
		free(data);
		return rc;
	}
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
	const unsigned char *p = (const unsigned char *)s, *e = p + strlen(s);

	fputc('"', f);
	for (; *p; p++) {
		if (*p >= 0x80) {
			/*
			 * JSON text is UTF-8: a byte that starts no valid
			 * sequence (a file name in another encoding, a CSV
			 * field) becomes U+FFFD, so that what is written reads
			 * back (found by tests/fuzz/fuzz_results.c).
			 */
			int n = remat_i_utf8_seq(p, e);

			if (n == 0) {
				fputs("\\ufffd", f);
			} else {
				fwrite(p, 1, (size_t)n, f);
				p += n - 1;
			}
			continue;
		}
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
