/*
 * util.h - small internals shared across libremat (and its CLI): whole-file
 * reading (bounded), line/column of a byte offset, JSON writing helpers;
 * it includes core/json_read.h, the strict JSON reader.
 */
#ifndef REMAT_UTIL_H
#define REMAT_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "remat/error.h"
#include "core/json_read.h" /* the JSON reader: parse, members, integers */

struct cJSON;

/*
 * The most bytes remat reads from one file: REMAT_MAX_INPUT when set (a
 * size such as "4GiB", as budgets are written, without '%'), else
 * REMAT_I_MAX_INPUT_DEFAULT.  An unreadable setting is REMAT_EUSAGE.
 */
#define REMAT_I_MAX_INPUT_DEFAULT ((int64_t)2 << 30) /* 2 GiB */
int remat_i_max_input(int64_t *out, struct remat_error *err);

/*
 * Read a whole text file into a malloc'd, NUL-terminated buffer ("-" is
 * standard input, named "<stdin>" in messages).  Reads
 * at most remat_i_max_input() bytes (a regular file larger than that is
 * refused before reading; a pipe or device is read up to the limit and
 * then refused) and stops at the first NUL byte: remat reads only text.
 * Failures are REMAT_EINPUT naming the path ("cannot read: No such file or
 * directory", "PATH:LINE:COL: not a text file (contains a NUL byte)",
 * "larger than the input limit ..."), REMAT_ENOMEM, or REMAT_EUSAGE for a
 * bad REMAT_MAX_INPUT.
 */
int remat_i_read_file(const char *path, char **buf, size_t *len,
		      struct remat_error *err);

/*
 * Copy text src into dst (size bytes) made safe to print: control bytes,
 * DEL and bytes that are not UTF-8 as \xNN, the C1 controls as \u00NN
 * (error.c, which makes every library message so).
 */
void remat_i_text_safe(char *dst, size_t size, const char *src);

/* How messages name an input: "<stdin>" for "-", else the path itself. */
const char *remat_i_input_name(const char *path);

/* Line and column (1-based; columns count bytes) of byte offset off in buf. */
void remat_i_line_col(const char *buf, size_t off, long *line, long *col);

/* Write s as a JSON string literal (quoted and escaped). */
void remat_i_json_write_str(FILE *f, const char *s);
/* Write a number: integers exactly, others to 12 significant digits; NaN/inf as null. */
void remat_i_json_write_num(FILE *f, double v);
/* Format a number the same way into buf. */
void remat_i_json_fmt_num(double v, char *buf, size_t size);

struct remat_sim_result;

/*
 * Write the figures of a simulation as JSON members, each preceded by sep
 * (", " on one line, ",\n    " indented): peak_mem, cost, baseline_cost,
 * overhead, computes, recomputes.  r NULL writes them as null.
 */
void remat_i_json_write_figures(FILE *f, const struct remat_sim_result *r,
				const char *sep);

/* The last path component of path (points into path). */
const char *remat_i_basename(const char *path);

#endif
