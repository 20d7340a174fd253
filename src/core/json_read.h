/*
 * json_read.h - the one strict JSON reader behind every file remat reads
 * (graphs, networkx graphs, schedules, benchmark results): RFC 8259 text
 * into a cJSON tree, or an error naming the file, line and column.  See
 * json_read.c for the rules and why it is our own parser.  Internal to
 * libremat (and its program).
 */
#ifndef REMAT_JSON_READ_H
#define REMAT_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

#include "remat/error.h"

struct cJSON;

/* Arrays and objects nest at most this deep (the top-level value is level 1). */
#define REMAT_I_JSON_MAX_DEPTH 1000

/*
 * A private bit in cJSON's type field of a number the parser read: set
 * when the number's double is an integer of magnitude <= 2^53 but the text
 * was not exactly that integer (2^53 + 1, 3.0000000000000001), so that
 * integer readers can refuse what a double cannot tell apart.  Such a
 * number keeps its text in valuestring for messages.  cJSON's own
 * functions ignore the bit (they test type & 0xFF).
 */
#define REMAT_I_JSON_NOT_EXACT (1 << 12)

/*
 * Parse the len bytes of buf (no NUL terminator needed) as one JSON text.
 * Failures are REMAT_EINPUT "SOURCE:LINE:COL: ..." (columns count bytes
 * from 1): syntax, numbers JSON does not allow or a double cannot hold,
 * invalid UTF-8, bad escapes (\u0000, unpaired surrogates), duplicate keys
 * in an object, nesting deeper than REMAT_I_JSON_MAX_DEPTH, a NUL byte;
 * an empty text is "SOURCE: empty file, expected JSON".  REMAT_ENOMEM when
 * memory runs out.  On success *out owns the tree (cJSON_Delete).
 */
int remat_i_json_parse(const char *buf, size_t len, const char *source,
		       struct cJSON **out, struct remat_error *err);

/*
 * Read the file at path ("-": standard input) and parse it as above;
 * *source is the name its messages give it (remat_i_input_name()).
 */
int remat_i_json_parse_file(const char *path, struct cJSON **out, const char **source,
			    struct remat_error *err);

/* The same (kept for callers from when parsing needed a NUL-terminated copy). */
int remat_i_json_parse_copy(const char *buf, size_t len, const char *source,
			    struct cJSON **out, struct remat_error *err);

/*
 * Member key of object obj, matched case-sensitively.  *dup is set when
 * the key occurs more than once (never in a tree from remat_i_json_parse,
 * which rejects duplicate keys); dup may be NULL.
 */
struct cJSON *remat_i_json_member(const struct cJSON *obj, const char *key,
				  int *dup);

/*
 * Is v a JSON number that is exactly an integer in [0, max] (max <= 2^53)?
 * Rejects numbers marked REMAT_I_JSON_NOT_EXACT.
 */
int remat_i_json_uint(const struct cJSON *v, int64_t max, int64_t *out);

/*
 * Length of the valid UTF-8 sequence (RFC 3629) that starts at p, at most
 * e - p bytes long: 1 for ASCII, 2 to 4, or 0 when it is not valid UTF-8.
 */
int remat_i_utf8_seq(const unsigned char *p, const unsigned char *e);

/*
 * A short rendering of a JSON value for messages ("got ..."): compact
 * JSON, numbers as written when the parser kept their text, cut to about
 * 40 bytes.
 */
void remat_i_json_show(const struct cJSON *v, char *buf, size_t size);

/*
 * REMAT_EINPUT with "SRC: 'field' what", and " (got VALUE)" when got is
 * not NULL: how the graph and schedule loaders name a bad top-level
 * member.  Returns REMAT_EINPUT.
 */
int remat_i_json_field_fail(const char *src, struct remat_error *err, const char *field,
			    const char *what, const struct cJSON *got);

#endif
