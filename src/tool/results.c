/*
 * results.c - benchmark rows: one column table drives the CSV writer, the
 * JSON writer and both readers, so the two formats cannot drift apart;
 * sorting, merging, and the comparison with a baseline.  See results.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "remat/remat.h"
#include "tool/results.h"
#include "core/atomic.h"
#include "core/json_read.h"
#include "core/util.h"

static const char *const status_names[REMAT_I_RUN_NSTATUS] = {
	"ok", "nofit", "timeout", "crash", "error"
};

const char *remat_i_run_status_name(int status)
{
	if (status < 0 || status >= REMAT_I_RUN_NSTATUS)
		return "error";
	return status_names[status];
}

int remat_i_run_status_parse(const char *s)
{
	int i;

	for (i = 0; i < REMAT_I_RUN_NSTATUS; i++)
		if (strcmp(s, status_names[i]) == 0)
			return i;
	return -1;
}

int remat_i_row_fits(const struct remat_i_row *r)
{
	return r->status == REMAT_I_RUN_OK && r->feasible && r->has_schedule &&
	       r->peak <= r->budget;
}

void remat_i_row_name(const struct remat_i_row *r, char *buf, size_t size)
{
	char safe[2048];

	/* A graph's name from its file: safe to print (it may hold controls). */
	remat_i_text_safe(safe, sizeof(safe), r->graph[0] ? r->graph : r->file);
	snprintf(buf, size, "%s %s %s", safe, r->planner, r->budget_spec);
}

void remat_i_rows_init(struct remat_i_rows *t)
{
	memset(t, 0, sizeof(*t));
}

void remat_i_rows_free(struct remat_i_rows *t)
{
	free(t->v);
	remat_i_rows_init(t);
}

int remat_i_rows_push(struct remat_i_rows *t, const struct remat_i_row *r,
		      struct remat_error *err)
{
	if (t->n == t->cap) {
		int64_t ncap = t->cap ? 2 * t->cap : 64;
		struct remat_i_row *nv = realloc(t->v, sizeof(*nv) * (size_t)ncap);

		if (!nv)
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		t->v = nv;
		t->cap = ncap;
	}
	t->v[t->n++] = *r;
	return REMAT_OK;
}

/* ---- the column table ---- */

enum col_type { T_STR, T_INT, T_NUM, T_BOOL };

enum col_id {
	C_GRAPH, C_FILE, C_NODES, C_PLANNER, C_SPEC, C_BUDGET, C_PCT, C_STATUS,
	C_FEASIBLE, C_PEAK, C_COST, C_OVERHEAD, C_RECOMPUTES, C_TIME, C_NRP, C_LB,
	C_CHOSEN, C_ERROR, N_COLS
};

static const struct {
	const char *name;
	int type;
	int required;  /* a file without this column is not a results file */
} cols[N_COLS] = {
	{ "graph", T_STR, 0 }, { "file", T_STR, 1 }, { "nodes", T_INT, 0 },
	{ "planner", T_STR, 1 }, { "budget_spec", T_STR, 1 }, { "budget", T_INT, 1 },
	{ "budget_pct", T_NUM, 0 }, { "status", T_STR, 1 }, { "feasible", T_BOOL, 1 },
	{ "peak", T_INT, 0 }, { "cost", T_NUM, 0 }, { "overhead", T_NUM, 0 },
	{ "recomputes", T_INT, 0 }, { "time_s", T_NUM, 0 },
	{ "no_remat_peak", T_INT, 0 }, { "lower_bound", T_INT, 0 },
	{ "chosen", T_STR, 0 }, { "error", T_STR, 0 },
};

/* The text of column c of r, or NULL when unknown. */
static const char *col_text(const struct remat_i_row *r, int c, unsigned flags,
			    char *buf, size_t size)
{
	switch (c) {
	case C_GRAPH: return r->graph;
	case C_FILE: return r->file;
	case C_NODES: snprintf(buf, size, "%d", r->nodes); return buf;
	case C_PLANNER: return r->planner;
	case C_SPEC: return r->budget_spec;
	case C_BUDGET: snprintf(buf, size, "%lld", (long long)r->budget); return buf;
	case C_PCT:
		if (r->no_remat_peak <= 0)
			return NULL;
		remat_i_json_fmt_num(floor(1e6 * (double)r->budget / (double)r->no_remat_peak
					 + 0.5) / 1e4, buf, size);
		return buf;
	case C_STATUS: return remat_i_run_status_name(r->status);
	case C_FEASIBLE: return r->feasible ? "true" : "false";
	case C_PEAK:
		if (!r->has_schedule)
			return NULL;
		snprintf(buf, size, "%lld", (long long)r->peak);
		return buf;
	case C_COST:
	case C_OVERHEAD:
		if (!r->has_schedule)
			return NULL;
		remat_i_json_fmt_num(c == C_COST ? r->cost : r->overhead, buf, size);
		return buf;
	case C_RECOMPUTES:
		if (!r->has_schedule)
			return NULL;
		snprintf(buf, size, "%lld", (long long)r->recomputes);
		return buf;
	case C_TIME:
		if ((flags & REMAT_I_ROWS_NO_TIME) || isnan(r->time_s))
			return NULL;
		/*
		 * To the microsecond; a time too large for that (only a file
		 * can hold one) as it is: time_s * 1e6 must not overflow to
		 * infinity, written as null, which CSV cannot read back
		 * (found by tests/fuzz/fuzz_results.c).
		 */
		remat_i_json_fmt_num(fabs(r->time_s) < 1e12 ? floor(r->time_s * 1e6 + 0.5) / 1e6
				     : r->time_s, buf, size);
		return buf;
	case C_NRP: snprintf(buf, size, "%lld", (long long)r->no_remat_peak); return buf;
	case C_LB: snprintf(buf, size, "%lld", (long long)r->lower_bound); return buf;
	case C_CHOSEN: return r->chosen[0] ? r->chosen : NULL;
	case C_ERROR: return r->error[0] ? r->error : NULL;
	}
	return NULL;
}

static int set_str(char *dst, size_t size, const char *s)
{
	if (strlen(s) >= size)
		return -1;
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

static int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

static int parse_num(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

/*
 * Set column c of r from text s (NULL or "" for unknown).  Returns NULL or
 * what is wrong.
 */
static const char *set_col(struct remat_i_row *r, int c, const char *s)
{
	int64_t i = 0;
	double d = 0;

	if (!s || !*s) {
		if (cols[c].required)
			return "must not be empty";
		return NULL;
	}
	switch (cols[c].type) {
	case T_INT:
		if (parse_i64(s, &i) || i < 0)
			return "must be a non-negative integer";
		break;
	case T_NUM:
		if (parse_num(s, &d))
			return "must be a number";
		break;
	case T_BOOL:
		if (strcmp(s, "true") && strcmp(s, "false"))
			return "must be true or false";
		break;
	}
	switch (c) {
	case C_GRAPH: return set_str(r->graph, sizeof(r->graph), s) ? "is too long" : NULL;
	case C_FILE: return set_str(r->file, sizeof(r->file), s) ? "is too long" : NULL;
	case C_NODES:
		if (i > INT32_MAX)
			return "is too large";
		r->nodes = (int32_t)i;
		return NULL;
	case C_PLANNER:
		return set_str(r->planner, sizeof(r->planner), s) ? "is too long" : NULL;
	case C_SPEC:
		return set_str(r->budget_spec, sizeof(r->budget_spec), s) ? "is too long" : NULL;
	case C_BUDGET: r->budget = i; return NULL;
	case C_PCT: return NULL; /* derived from budget and no_remat_peak */
	case C_STATUS:
		r->status = remat_i_run_status_parse(s);
		return r->status < 0 ? "must be ok, nofit, timeout, crash or error" : NULL;
	case C_FEASIBLE: r->feasible = strcmp(s, "true") == 0; return NULL;
	case C_PEAK: r->peak = i; r->has_schedule = 1; return NULL;
	case C_COST: r->cost = d; return NULL;
	case C_OVERHEAD: r->overhead = d; return NULL;
	case C_RECOMPUTES: r->recomputes = i; return NULL;
	case C_TIME: r->time_s = d; return NULL;
	case C_NRP: r->no_remat_peak = i; return NULL;
	case C_LB: r->lower_bound = i; return NULL;
	case C_CHOSEN:
		return set_str(r->chosen, sizeof(r->chosen), s) ? "is too long" : NULL;
	case C_ERROR: {
		/*
		 * Cut long messages rather than refuse the file, at the start
		 * of a UTF-8 sequence so that the text stays UTF-8 (found by
		 * tests/fuzz/fuzz_results.c).
		 */
		size_t n = strlen(s);

		if (n >= sizeof(r->error)) {
			n = sizeof(r->error) - 1;
			while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
				n--;
		}
		memcpy(r->error, s, n);
		r->error[n] = '\0';
		return NULL;
	}
	}
	return NULL;
}

static void row_blank(struct remat_i_row *r)
{
	memset(r, 0, sizeof(*r));
	r->time_s = NAN;
}

/* A read row: fill what was left out. */
static void row_finish(struct remat_i_row *r)
{
	if (!r->graph[0]) {
		const char *b = remat_i_basename(r->file);
		size_t len = strlen(b);

		if (len > 5 && strcmp(b + len - 5, ".json") == 0)
			len -= 5;
		if (len >= sizeof(r->graph))
			len = sizeof(r->graph) - 1;
		memcpy(r->graph, b, len);
		r->graph[len] = '\0';
	}
}

/* ---- writing ---- */

static void csv_field(FILE *f, const char *s)
{
	const char *p;

	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && (!*s || s[strlen(s) - 1] != ' ')) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (p = s; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	fputc('"', f);
}

static void csv_header(FILE *f)
{
	int c;

	for (c = 0; c < N_COLS; c++) {
		if (c)
			fputc(',', f);
		fputs(cols[c].name, f);
	}
	fputc('\n', f);
}

static void csv_row(FILE *f, const struct remat_i_row *r, unsigned flags)
{
	char buf[64];
	int c;

	for (c = 0; c < N_COLS; c++) {
		if (c)
			fputc(',', f);
		csv_field(f, col_text(r, c, flags, buf, sizeof(buf)));
	}
	fputc('\n', f);
}

static void json_row(FILE *f, const struct remat_i_row *r, unsigned flags)
{
	char buf[64];
	int c;

	fputc('{', f);
	for (c = 0; c < N_COLS; c++) {
		const char *s = col_text(r, c, flags, buf, sizeof(buf));

		if (c)
			fputs(", ", f);
		remat_i_json_write_str(f, cols[c].name);
		fputs(": ", f);
		if (!s)
			fputs("null", f);
		else if (cols[c].type == T_STR)
			remat_i_json_write_str(f, s);
		else
			fputs(s, f);
	}
	fputc('}', f);
}

static void json_head(FILE *f, const struct remat_i_rows_meta *meta, unsigned flags)
{
	fputs("{\"format\": \"remat-bench\", \"version\": 1, \"remat\": \"" REMAT_VERSION "\"", f);
	if (meta && !(flags & REMAT_I_ROWS_NO_TIME)) {
		if (meta->date) {
			fputs(", \"date\": ", f);
			remat_i_json_write_str(f, meta->date);
		}
		if (meta->machine) {
			fputs(", \"machine\": ", f);
			remat_i_json_write_str(f, meta->machine);
		}
	}
	fputs(", \"rows\": [", f);
}

#define JSON_TAIL "\n]}\n"

void remat_i_rows_print(FILE *f, int fmt, const struct remat_i_rows *t,
			const struct remat_i_rows_meta *meta, unsigned flags)
{
	int64_t i;

	if (fmt == 'c') {
		csv_header(f);
		for (i = 0; i < t->n; i++)
			csv_row(f, &t->v[i], flags);
		return;
	}
	json_head(f, meta, flags);
	for (i = 0; i < t->n; i++) {
		fputs(i ? ",\n" : "\n", f);
		json_row(f, &t->v[i], flags);
	}
	fputs(JSON_TAIL, f);
}

int remat_i_rows_format(const char *path)
{
	size_t len = strlen(path);

	if (len >= 4 && strcmp(path + len - 4, ".csv") == 0)
		return 'c';
	if (len >= 5 && strcmp(path + len - 5, ".json") == 0)
		return 'j';
	return 0;
}

static int bad_format(const char *path, struct remat_error *err)
{
	return REMAT_FAIL(err, REMAT_EUSAGE, "%s: cannot tell the format: name results "
			  "files .csv or .json", path);
}

int remat_i_rows_write(const char *path, const struct remat_i_rows *t,
		       const struct remat_i_rows_meta *meta, unsigned flags,
		       struct remat_error *err)
{
	int fmt = remat_i_rows_format(path), rc;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!fmt)
		return bad_format(path, err);
	f = open_memstream(&buf, &len);
	if (!f)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	remat_i_rows_print(f, fmt, t, meta, flags);
	if (fclose(f) != 0) {
		free(buf);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	rc = remat_i_write_atomic(path, buf, len, err);
	free(buf);
	return rc;
}

struct remat_i_rows_out {
	FILE *f;
	char *path;
	int fmt;
	int seekable;   /* JSON: the tail is rewritten after every row */
	long tail;      /* where the tail starts */
	int64_t rows;
};

static int out_fail(struct remat_i_rows_out *o, struct remat_error *err)
{
	return REMAT_FAIL(err, REMAT_EIO, "%s: cannot write: %s", o->path,
			  strerror(errno ? errno : EIO));
}

int remat_i_rows_out_open(const char *path, const struct remat_i_rows_meta *meta,
			  struct remat_i_rows_out **out, struct remat_error *err)
{
	struct remat_i_rows_out *o;
	int fmt = remat_i_rows_format(path);

	*out = NULL;
	if (!fmt)
		return bad_format(path, err);
	o = calloc(1, sizeof(*o));
	if (!o || !(o->path = strdup(path))) {
		free(o);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	o->fmt = fmt;
	o->f = fopen(path, "w");
	if (!o->f) {
		int rc = out_fail(o, err);

		free(o->path);
		free(o);
		return rc;
	}
	if (fmt == 'c') {
		csv_header(o->f);
	} else {
		json_head(o->f, meta, 0);
		o->tail = ftell(o->f);
		o->seekable = o->tail >= 0 && fseek(o->f, o->tail, SEEK_SET) == 0;
		if (o->seekable)
			fputs(JSON_TAIL, o->f);
	}
	*out = o;
	if (fflush(o->f) != 0 || ferror(o->f))
		return out_fail(o, err);
	return REMAT_OK;
}

int remat_i_rows_out_add(struct remat_i_rows_out *o, const struct remat_i_row *r,
			 struct remat_error *err)
{
	errno = 0;
	if (o->fmt == 'c') {
		csv_row(o->f, r, 0);
	} else {
		if (o->seekable && fseek(o->f, o->tail, SEEK_SET) != 0)
			return out_fail(o, err);
		fputs(o->rows ? ",\n" : "\n", o->f);
		json_row(o->f, r, 0);
		if (o->seekable) {
			o->tail = ftell(o->f);
			fputs(JSON_TAIL, o->f);
		}
	}
	o->rows++;
	if (fflush(o->f) != 0 || ferror(o->f))
		return out_fail(o, err);
	return REMAT_OK;
}

int remat_i_rows_out_close(struct remat_i_rows_out *o, struct remat_error *err)
{
	int rc = REMAT_OK;

	if (!o)
		return REMAT_OK;
	errno = 0;
	if (o->fmt == 'j' && !o->seekable)
		fputs(JSON_TAIL, o->f);
	if (fflush(o->f) != 0 || ferror(o->f))
		rc = out_fail(o, err);
	if (fclose(o->f) != 0 && rc == REMAT_OK)
		rc = out_fail(o, err);
	free(o->path);
	free(o);
	return rc;
}

/* ---- reading ---- */

struct csv_reader {
	const char *p, *end;
	long line;
	char *field;
	size_t flen, fcap;
};

static int field_put(struct csv_reader *c, char ch)
{
	if (c->flen + 1 >= c->fcap) {
		size_t ncap = c->fcap ? 2 * c->fcap : 256;
		char *nf = realloc(c->field, ncap);

		if (!nf)
			return -1;
		c->field = nf;
		c->fcap = ncap;
	}
	c->field[c->flen++] = ch;
	c->field[c->flen] = '\0';
	return 0;
}

/*
 * Read one field into c->field.  *eol is set when it ended its record,
 * *eof when nothing was left.  Returns 0, -1 (out of memory) or -2 (an
 * unterminated quote).
 */
static int csv_next(struct csv_reader *c, int *eol, int *eof)
{
	*eol = *eof = 0;
	c->flen = 0;
	if (field_put(c, 'x'))
		return -1;
	c->flen = 0;
	c->field[0] = '\0';
	if (c->p >= c->end) {
		*eof = *eol = 1;
		return 0;
	}
	if (*c->p == '"') {
		c->p++;
		for (;;) {
			if (c->p >= c->end)
				return -2;
			if (*c->p == '"') {
				if (c->p + 1 < c->end && c->p[1] == '"') {
					if (field_put(c, '"'))
						return -1;
					c->p += 2;
					continue;
				}
				c->p++;
				break;
			}
			if (*c->p == '\n')
				c->line++;
			if (field_put(c, *c->p++))
				return -1;
		}
	}
	while (c->p < c->end && *c->p != ',' && *c->p != '\n') {
		if (*c->p != '\r' && field_put(c, *c->p))
			return -1;
		c->p++;
	}
	if (c->p >= c->end) {
		*eol = 1;
	} else if (*c->p == '\n') {
		*eol = 1;
		c->line++;
		c->p++;
	} else {
		c->p++;
	}
	return 0;
}

static int read_csv(const char *buf, size_t len, const char *source,
		    struct remat_i_rows *t, struct remat_error *err)
{
	struct csv_reader c = { buf, buf + len, 1, NULL, 0, 0 };
	int colmap[64], ncol = 0, i, eol, eof, rc = REMAT_OK, seen[N_COLS] = { 0 };
	struct remat_i_row r;
	const unsigned char *u = (const unsigned char *)buf, *ue = u + len;

	/*
	 * Text is UTF-8, as in a JSON results file: a field in another
	 * encoding could not be written back as JSON (found by
	 * tests/fuzz/fuzz_results.c).
	 */
	while (u < ue) {
		int n = *u < 0x80 ? 1 : remat_i_utf8_seq(u, ue);

		if (n == 0) {
			long line, col;

			remat_i_line_col(buf, (size_t)(u - (const unsigned char *)buf), &line, &col);
			return REMAT_FAIL(err, REMAT_EINPUT, "%s:%ld:%ld: invalid UTF-8 (byte 0x%02x): "
					  "a results file must be UTF-8 text", source, line, col, *u);
		}
		u += n;
	}

	/* The header: map each position to a known column (or -1). */
	do {
		int k, e = csv_next(&c, &eol, &eof);

		if (e)
			goto bad_parse;
		if (ncol >= 64) {
			rc = REMAT_FAIL(err, REMAT_EINPUT, "%s:1: too many columns", source);
			goto done;
		}
		colmap[ncol] = -1;
		for (k = 0; k < N_COLS; k++)
			if (strcmp(c.field, cols[k].name) == 0) {
				colmap[ncol] = k;
				seen[k] = 1;
			}
		ncol++;
	} while (!eol);
	for (i = 0; i < N_COLS; i++)
		if (cols[i].required && !seen[i]) {
			rc = REMAT_FAIL(err, REMAT_EINPUT, "%s:1: not a remat bench results file "
					"(no '%s' column)", source, cols[i].name);
			goto done;
		}
	while (c.p < c.end) {
		long line = c.line;
		int k = 0;

		if (*c.p == '\n' || (*c.p == '\r' && c.p + 1 < c.end && c.p[1] == '\n')) {
			c.p += *c.p == '\r' ? 2 : 1; /* blank line */
			c.line++;
			continue;
		}
		row_blank(&r);
		do {
			const char *why;
			int e = csv_next(&c, &eol, &eof);

			if (e)
				goto bad_parse;
			if (k >= ncol) {
				rc = REMAT_FAIL(err, REMAT_EINPUT, "%s:%ld: more fields than the "
						"header has columns", source, line);
				goto done;
			}
			if (colmap[k] >= 0 && (why = set_col(&r, colmap[k], c.field))) {
				rc = REMAT_FAIL(err, REMAT_EINPUT, "%s:%ld: '%s' %s (got '%.40s')",
						source, line, cols[colmap[k]].name, why, c.field);
				goto done;
			}
			k++;
		} while (!eol);
		if (k != ncol) {
			rc = REMAT_FAIL(err, REMAT_EINPUT, "%s:%ld: %d fields, the header has %d",
					source, line, k, ncol);
			goto done;
		}
		row_finish(&r);
		if ((rc = remat_i_rows_push(t, &r, err)))
			goto done;
	}
	goto done;
bad_parse:
	rc = REMAT_FAIL(err, REMAT_EINPUT, "%s:%ld: %s", source, c.line,
			c.field ? "unterminated quoted field" : "out of memory");
done:
	free(c.field);
	return rc;
}

static int read_json(const char *buf, size_t len, const char *source,
		     struct remat_i_rows *t, struct remat_error *err)
{
	cJSON *root, *rows, *it;
	int rc = REMAT_OK;
	int64_t idx = 0;

	REMAT_TRY(remat_i_json_parse_copy(buf, len, source, &root, err));
	rows = cJSON_IsArray(root) ? root : remat_i_json_member(root, "rows", NULL);
	if (!cJSON_IsArray(rows)) {
		rc = REMAT_FAIL(err, REMAT_EINPUT, "%s: not a remat bench results file (no "
				"'rows' array)", source);
		goto done;
	}
	cJSON_ArrayForEach(it, rows) {
		struct remat_i_row r;
		int c;

		row_blank(&r);
		if (!cJSON_IsObject(it)) {
			rc = REMAT_FAIL(err, REMAT_EINPUT, "%s: rows[%lld] must be an object",
					source, (long long)idx);
			goto done;
		}
		for (c = 0; c < N_COLS; c++) {
			cJSON *v = remat_i_json_member(it, cols[c].name, NULL);
			char num[64];
			const char *s = NULL, *why;

			if (!v || cJSON_IsNull(v))
				s = NULL;
			else if (cols[c].type == T_STR && cJSON_IsString(v))
				s = v->valuestring;
			else if (cols[c].type == T_BOOL && cJSON_IsBool(v))
				s = cJSON_IsTrue(v) ? "true" : "false";
			else if ((cols[c].type == T_INT || cols[c].type == T_NUM) &&
				 cJSON_IsNumber(v)) {
				if (cols[c].type == T_INT && v->valuedouble == floor(v->valuedouble) &&
				    fabs(v->valuedouble) < 9.2e18)
					snprintf(num, sizeof(num), "%lld", (long long)v->valuedouble);
				else
					snprintf(num, sizeof(num), "%.17g", v->valuedouble);
				s = num;
			} else {
				rc = REMAT_FAIL(err, REMAT_EINPUT, "%s: rows[%lld]: '%s' must be %s",
						source, (long long)idx, cols[c].name,
						cols[c].type == T_STR ? "a string" :
						cols[c].type == T_BOOL ? "true or false" : "a number");
				goto done;
			}
			if ((why = set_col(&r, c, s))) {
				rc = REMAT_FAIL(err, REMAT_EINPUT, "%s: rows[%lld]: '%s' %s", source,
						(long long)idx, cols[c].name,
						s ? why : "is required");
				goto done;
			}
		}
		row_finish(&r);
		if ((rc = remat_i_rows_push(t, &r, err)))
			goto done;
		idx++;
	}
done:
	cJSON_Delete(root);
	return rc;
}

int remat_i_rows_read_buffer(const char *buf, size_t len, const char *source,
			     struct remat_i_rows *t, struct remat_error *err)
{
	size_t i = 0;

	while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' ||
			   buf[i] == '\n'))
		i++;
	if (i == len)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: empty file, expected results "
				  "(CSV or JSON)", source);
	if (buf[i] == '{' || buf[i] == '[')
		return read_json(buf, len, source, t, err);
	return read_csv(buf, len, source, t, err);
}

int remat_i_rows_read(const char *path, struct remat_i_rows *t,
		      struct remat_error *err)
{
	char *buf;
	size_t len;
	int rc;

	REMAT_TRY(remat_i_read_file(path, &buf, &len, err));
	rc = remat_i_rows_read_buffer(buf, len, remat_i_input_name(path), t, err);
	free(buf);
	return rc;
}

/* ---- order ---- */

/* Position of a planner in the registry; unknown names after all. */
static int planner_rank(const char *name)
{
	const struct remat_planner *const *pp = remat_planner_list();
	int i;

	for (i = 0; pp[i]; i++)
		if (strcmp(pp[i]->name, name) == 0)
			return i;
	return i;
}

struct sort_ent {
	const struct remat_i_row *r;
	int rank;
	int64_t seq;
};

/* Rows by file, rank and planner. */
static int cmp_head(const struct sort_ent *a, const struct sort_ent *b)
{
	int c = strcmp(a->r->file, b->r->file);

	if (c)
		return c;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return strcmp(a->r->planner, b->r->planner);
}

static int cmp_key(const struct sort_ent *a, const struct sort_ent *b)
{
	int c = cmp_head(a, b);

	return c ? c : strcmp(a->r->budget_spec, b->r->budget_spec);
}

static int cmp_canonical(const void *pa, const void *pb)
{
	const struct sort_ent *a = pa, *b = pb;
	int c = cmp_head(a, b);

	if (c)
		return c;
	if (a->r->budget != b->r->budget)
		return a->r->budget < b->r->budget ? -1 : 1;
	c = strcmp(a->r->budget_spec, b->r->budget_spec);
	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int cmp_by_key(const void *pa, const void *pb)
{
	const struct sort_ent *a = pa, *b = pb;
	int c = cmp_key(a, b);

	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static struct sort_ent *sort_ents(const struct remat_i_rows *t,
				  int (*cmp)(const void *, const void *))
{
	struct sort_ent *e = malloc(sizeof(*e) * (size_t)(t->n + 1));
	int64_t i;

	if (!e)
		return NULL;
	for (i = 0; i < t->n; i++) {
		e[i].r = &t->v[i];
		e[i].rank = planner_rank(t->v[i].planner);
		e[i].seq = i;
	}
	qsort(e, (size_t)t->n, sizeof(*e), cmp);
	return e;
}

/* Rebuild t from the rows e points to, keeping those with keep[i]. */
static int reorder(struct remat_i_rows *t, const struct sort_ent *e,
		   const uint8_t *keep, struct remat_error *err)
{
	struct remat_i_row *nv = malloc(sizeof(*nv) * (size_t)(t->n + 1));
	int64_t i, k = 0;

	if (!nv)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	for (i = 0; i < t->n; i++)
		if (!keep || keep[i])
			nv[k++] = *e[i].r;
	free(t->v);
	t->v = nv;
	t->n = k;
	t->cap = t->n + 1;
	return REMAT_OK;
}

int remat_i_rows_sort(struct remat_i_rows *t, struct remat_error *err)
{
	struct sort_ent *e = sort_ents(t, cmp_canonical);
	int rc;

	if (!e)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	rc = reorder(t, e, NULL, err);
	free(e);
	return rc;
}

int remat_i_rows_dedup(struct remat_i_rows *t, int64_t *dropped,
		       struct remat_error *err)
{
	struct sort_ent *e = sort_ents(t, cmp_by_key);
	uint8_t *keep = calloc((size_t)t->n + 1, 1);
	int64_t i, before = t->n;
	int rc;

	if (dropped)
		*dropped = 0;
	if (!e || !keep) {
		free(e);
		free(keep);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	/* Within a key the rows are in input order: keep the last. */
	for (i = 0; i < t->n; i++)
		keep[i] = i + 1 == t->n || cmp_key(&e[i], &e[i + 1]) != 0;
	rc = reorder(t, e, keep, err);
	free(e);
	free(keep);
	if (rc == REMAT_OK) {
		if (dropped)
			*dropped = before - t->n;
		rc = remat_i_rows_sort(t, err);
	}
	return rc;
}

/* ---- comparison ---- */

static int add_finding(struct remat_i_compare *c, int kind, const struct remat_i_row *r,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int add_finding(struct remat_i_compare *c, int kind, const struct remat_i_row *r,
		       const char *fmt, ...)
{
	struct remat_i_finding *f;
	va_list ap;
	int len;

	if (c->n == c->cap) {
		int64_t ncap = c->cap ? 2 * c->cap : 32;
		struct remat_i_finding *nv = realloc(c->v, sizeof(*nv) * (size_t)ncap);

		if (!nv)
			return -1;
		c->v = nv;
		c->cap = ncap;
	}
	f = &c->v[c->n++];
	f->kind = kind;
	remat_i_row_name(r, f->msg, sizeof(f->msg));
	len = (int)strlen(f->msg);
	len += snprintf(f->msg + len, sizeof(f->msg) - (size_t)len, ": ");
	if (len < (int)sizeof(f->msg)) {
		va_start(ap, fmt);
		vsnprintf(f->msg + len, sizeof(f->msg) - (size_t)len, fmt, ap);
		va_end(ap);
	}
	c->count[kind]++;
	return 0;
}

/* What a row that does not fit says about itself. */
static void why_not(const struct remat_i_row *r, char *buf, size_t size)
{
	if (r->status == REMAT_I_RUN_OK && r->has_schedule && r->peak > r->budget)
		snprintf(buf, size, "peak %lld bytes exceeds the budget", (long long)r->peak);
	else if (r->error[0])
		snprintf(buf, size, "%s: %s", remat_i_run_status_name(r->status), r->error);
	else
		snprintf(buf, size, "%s", remat_i_run_status_name(r->status));
}

void remat_i_compare_free(struct remat_i_compare *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

int remat_i_rows_compare(struct remat_i_rows *base, struct remat_i_rows *cur,
			 double tolerance, struct remat_i_compare *out,
			 struct remat_error *err)
{
	struct sort_ent *eb = NULL, *ec = NULL;
	int64_t i = 0, j = 0;
	int rc = REMAT_OK;

	memset(out, 0, sizeof(*out));
	REMAT_TRY(remat_i_rows_dedup(base, NULL, err));
	REMAT_TRY(remat_i_rows_dedup(cur, NULL, err));
	eb = sort_ents(base, cmp_by_key);
	ec = sort_ents(cur, cmp_by_key);
	if (!eb || !ec) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	while (i < base->n || j < cur->n) {
		const struct remat_i_row *b, *r;
		char why[480];
		int c, bad = 0;

		if (i >= base->n)
			c = 1;
		else if (j >= cur->n)
			c = -1;
		else
			c = cmp_key(&eb[i], &ec[j]);
		if (c < 0) {
			b = eb[i++].r;
			bad = add_finding(out, REMAT_I_MISSING, b, "in the baseline, not run");
			if (bad)
				goto oom;
			continue;
		}
		r = ec[j++].r;
		b = c == 0 ? eb[i++].r : NULL;
		if (b)
			out->compared++;
		if (r->status == REMAT_I_RUN_OK && r->feasible && r->has_schedule &&
		    r->peak > r->budget) {
			/* A result that claims to fit but does not is wrong in any case. */
			bad = add_finding(out, REMAT_I_REGRESSION, r, "peak %lld bytes exceeds "
					  "its budget of %lld bytes", (long long)r->peak,
					  (long long)r->budget);
		} else if (!b) {
			bad = add_finding(out, REMAT_I_NEW, r, "not in the baseline");
		} else if (b->budget != r->budget) {
			bad |= add_finding(out, REMAT_I_MISMATCH, r, "budget is %lld bytes, "
					   "%lld in the baseline: the graph changed; regenerate "
					   "the baseline", (long long)r->budget, (long long)b->budget);
		} else if (remat_i_row_fits(b) && !remat_i_row_fits(r)) {
			why_not(r, why, sizeof(why));
			bad |= add_finding(out, REMAT_I_REGRESSION, r, "feasible in the baseline "
					   "(overhead %+.2f%%), now %s", 100 * b->overhead, why);
		} else if (!remat_i_row_fits(b) && remat_i_row_fits(r)) {
			bad |= add_finding(out, REMAT_I_IMPROVED, r, "now feasible (overhead "
					   "%+.2f%%), infeasible in the baseline", 100 * r->overhead);
		} else if (remat_i_row_fits(b)) {
			double growth = (1 + r->overhead) / (1 + b->overhead) - 1;

			/* 1e-9 absorbs rounding in files written with fewer digits. */
			if (growth > tolerance + 1e-9)
				bad |= add_finding(out, REMAT_I_REGRESSION, r, "overhead %+.2f%%, "
						   "baseline %+.2f%%: cost up %.2f%% (tolerance "
						   "%.2f%%)", 100 * r->overhead, 100 * b->overhead,
						   100 * growth, 100 * tolerance);
			else if (growth < -1e-9)
				bad |= add_finding(out, REMAT_I_IMPROVED, r, "overhead %+.2f%%, "
						   "baseline %+.2f%%", 100 * r->overhead,
						   100 * b->overhead);
		}
		if (bad)
			goto oom;
	}
	goto done;
oom:
	rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
done:
	free(eb);
	free(ec);
	if (rc)
		remat_i_compare_free(out);
	return rc;
}
