/*
 * json_read.c - the strict JSON reader (RFC 8259) behind every file remat
 * reads: graphs, networkx graphs, schedules, benchmark results.  See
 * json_read.h for the interface.
 *
 * Why a parser of our own rather than cJSON_Parse.  FORMATS.md asks for a
 * strict reader whose errors name the file, line and column; cJSON is lax
 * where the contract is strict and silent where it must speak.  It accepts
 * numbers JSON does not allow ("01", "5.", "1e"), reads 1e-400 as 0 and
 * 2^53 + 1 as 2^53 leaving no trace in the tree, cuts strings at \u0000,
 * keeps the first of duplicate keys, does not check UTF-8, and reports
 * nesting past its limit as a plain syntax error.  A strict pre-pass beside
 * cJSON would have to tokenise the whole grammar anyway, then pair what it
 * found (which numbers were inexact) with tree nodes in a second walk: two
 * parsers of one grammar to keep in step, and three passes over the text.
 * So this file is one recursive-descent parser, a single pass that builds
 * ordinary cJSON trees: every reader keeps cJSON's accessors and
 * cJSON_Delete, and cJSON stays the dependency for the tree type and for
 * printing.  It is as fast as cJSON's parser (one scan; one allocation per
 * value and per string; integers and short decimals converted without
 * strtod).
 *
 * Rules beyond RFC 8259's grammar, each an error with line and column:
 * - the text is UTF-8 (RFC 3629: no overlong forms, no encoded surrogates,
 *   nothing above U+10FFFF); a leading byte order mark is refused with a
 *   hint;
 * - \u0000 is refused (remat's strings are C strings: the value would be
 *   cut short), and \uD800-\uDFFF escapes must form high-low pairs;
 * - an object names each key once (RFC 8259 only says SHOULD, and readers
 *   disagree on which copy wins, so remat refuses rather than guess);
 * - a number must fit a double: overflow to infinity and nonzero numbers
 *   that underflow to 0 are refused; a number whose double is an integer
 *   of magnitude <= 2^53 but whose text is not exactly that integer
 *   (2^53 + 1) is marked REMAT_I_JSON_NOT_EXACT for remat_i_json_uint;
 * - nesting deeper than REMAT_I_JSON_MAX_DEPTH levels, and a NUL byte
 *   anywhere in the text.
 *
 * Numbers are converted correctly rounded: up to 19 significant digits
 * with a decimal exponent within +-22 by Clinger's fast path (an exact
 * integer times or divided by an exact power of ten: one IEEE operation);
 * anything else by strtod on a copy without a decimal point, so the C
 * locale's radix character never matters.
 *
 * Time O(length of the text) (duplicate keys: a scan of the keys so far
 * in objects of up to 16 keys, a hash table in larger ones); memory one
 * cJSON item per value plus its strings; recursion depth at most
 * REMAT_I_JSON_MAX_DEPTH.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/json_read.h"
#include "core/util.h"

struct jp {
	const unsigned char *p, *start, *end;
	const char *src;
	struct remat_error *err;
	int depth;
	char *scratch; /* slow-path number text */
	size_t scap;
};

static int fail_at(struct jp *j, const unsigned char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "SOURCE:LINE:COL: what" at byte at. */
static int fail_at(struct jp *j, const unsigned char *at, const char *fmt, ...)
{
	char what[400];
	long line, col;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	remat_i_line_col((const char *)j->start, (size_t)(at - j->start), &line, &col);
	return REMAT_FAIL(j->err, REMAT_EINPUT, "%s:%ld:%ld: %s", j->src, line, col, what);
}

static int fail_eof(struct jp *j)
{
	return fail_at(j, j->end, "invalid JSON: unexpected end of file");
}

static int oom(struct jp *j)
{
	return REMAT_FAIL(j->err, REMAT_ENOMEM, "%s: out of memory reading JSON", j->src);
}

/* See json_read.h: 1 for ASCII, 2-4 for a valid sequence, 0 otherwise. */
int remat_i_utf8_seq(const unsigned char *p, const unsigned char *e)
{
	unsigned c = p[0], lo = 0x80, hi = 0xBF;
	int n, i;

	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0; /* overlong */
		else if (c == 0xED)
			hi = 0x9F; /* surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90; /* overlong */
		else if (c == 0xF4)
			hi = 0x8F; /* above U+10FFFF */
	} else {
		return c < 0x80 ? 1 : 0;
	}
	if (e - p < n || p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

/* "invalid JSON near 'TEXT'[: why]", quoting up to 12 printable bytes at at. */
static int fail_near(struct jp *j, const unsigned char *at, const char *why)
{
	char near[16];
	size_t k = 0;

	if (at >= j->end)
		return fail_eof(j);
	while (k < 12 && at + k < j->end && at[k] >= 0x20 && at[k] != 0x7f) {
		if (at[k] < 0x80) {
			near[k] = (char)at[k];
			k++;
		} else {
			int n = remat_i_utf8_seq(at + k, j->end);

			if (n == 0 || k + (size_t)n > 12)
				break; /* never cut a character in two */
			memcpy(near + k, at + k, (size_t)n);
			k += (size_t)n;
		}
	}
	near[k] = '\0';
	if (k == 0)
		return fail_at(j, at, "invalid JSON: unexpected byte 0x%02x%s%s", at[0],
			       why ? ": " : "", why ? why : "");
	return fail_at(j, at, "invalid JSON near '%s'%s%s", near, why ? ": " : "",
		       why ? why : "");
}

static inline void skip_ws(struct jp *j)
{
	const unsigned char *p = j->p, *e = j->end;

	while (p < e && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++;
	j->p = p;
}

static inline int is_digit(unsigned c)
{
	return c - '0' < 10u;
}

/* Value of 4 hex digits at p, or -1. */
static long hex4(const unsigned char *p)
{
	long v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		unsigned c = p[i];

		if (is_digit(c))
			v = v * 16 + (c - '0');
		else if (c >= 'a' && c <= 'f')
			v = v * 16 + (c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v = v * 16 + (c - 'A' + 10);
		else
			return -1;
	}
	return v;
}

static unsigned char *put_utf8(unsigned char *o, unsigned long cp)
{
	if (cp < 0x80) {
		*o++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*o++ = (unsigned char)(0xC0 | (cp >> 6));
		*o++ = (unsigned char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*o++ = (unsigned char)(0xE0 | (cp >> 12));
		*o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		*o++ = (unsigned char)(0x80 | (cp & 0x3F));
	} else {
		*o++ = (unsigned char)(0xF0 | (cp >> 18));
		*o++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
		*o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		*o++ = (unsigned char)(0x80 | (cp & 0x3F));
	}
	return o;
}

/*
 * Decode the escapes of the string body [s, e) into out (which has room:
 * no escape is shorter than what it stands for).  The scan has checked
 * the escape letters and the hex digits; left are \u0000 and surrogates.
 */
static int decode(struct jp *j, const unsigned char *s, const unsigned char *e, char *out)
{
	unsigned char *o = (unsigned char *)out;

	while (s < e) {
		const unsigned char *at = s;
		long cp, lo;

		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		switch (s[1]) {
		case 'b': *o++ = '\b'; s += 2; continue;
		case 'f': *o++ = '\f'; s += 2; continue;
		case 'n': *o++ = '\n'; s += 2; continue;
		case 'r': *o++ = '\r'; s += 2; continue;
		case 't': *o++ = '\t'; s += 2; continue;
		case 'u': break;
		default: *o++ = s[1]; s += 2; continue; /* " \ / */
		}
		cp = hex4(s + 2);
		s += 6;
		if (cp == 0)
			return fail_at(j, at, "invalid JSON string: '\\u0000' is not allowed "
				       "(a NUL would cut the string short)");
		if (cp >= 0xDC00 && cp <= 0xDFFF)
			return fail_at(j, at, "invalid JSON string: unpaired surrogate '%.6s' "
				       "(a low surrogate must follow a high one)", (const char *)at);
		if (cp >= 0xD800 && cp <= 0xDBFF) {
			if (e - s < 6 || s[0] != '\\' || s[1] != 'u' || (lo = hex4(s + 2)) < 0xDC00 ||
			    lo > 0xDFFF)
				return fail_at(j, at, "invalid JSON string: unpaired surrogate '%.6s' "
					       "(a high surrogate must be followed by a low one)",
					       (const char *)at);
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			s += 6;
		}
		o = put_utf8(o, (unsigned long)cp);
	}
	*o = '\0';
	return REMAT_OK;
}

/* A string at j->p (its opening quote) into a new cJSON_malloc'd *out. */
static int parse_string(struct jp *j, char **out)
{
	const unsigned char *open = j->p, *s = open + 1, *q = s, *e = j->end;
	int esc = 0;
	size_t len;
	char *str;

	*out = NULL;
	for (;;) {
		unsigned c;

		/* Printable ASCII but '"' and '\': the common case, byte by byte. */
		while (q < e && *q - 0x20u < 0x60u && *q != '"' && *q != '\\')
			q++;
		if (q >= e)
			return fail_at(j, open, "invalid JSON: unterminated string (the file ends "
				       "inside it)");
		c = *q;
		if (c == '"')
			break;
		if (c == '\\') {
			esc = 1;
			if (e - q < 2)
				return fail_at(j, open, "invalid JSON: unterminated string (the file "
					       "ends inside it)");
			switch (q[1]) {
			case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
				q += 2;
				continue;
			case 'u':
				if (e - q < 6 || hex4(q + 2) < 0)
					return fail_at(j, q, "invalid JSON string: '\\u' must be "
						       "followed by 4 hex digits");
				q += 6;
				continue;
			default:
				if (q[1] >= 0x20 && q[1] < 0x7f)
					return fail_at(j, q, "invalid JSON string: unknown escape "
						       "'\\%c'", q[1]);
				return fail_at(j, q, "invalid JSON string: unknown escape (byte "
					       "0x%02x after '\\')", q[1]);
			}
		}
		if (c < 0x20)
			return fail_at(j, q, "invalid JSON string: control character 0x%02x must "
				       "be escaped", c);
		{
			int n = remat_i_utf8_seq(q, e);

			if (n == 0)
				return fail_at(j, q, "invalid UTF-8 in a string (byte 0x%02x): JSON "
					       "text must be UTF-8", c);
			q += n;
		}
	}
	len = (size_t)(q - s);
	str = cJSON_malloc(len + 1);
	if (!str)
		return oom(j);
	if (!esc) {
		memcpy(str, s, len);
		str[len] = '\0';
	} else if (decode(j, s, q, str)) {
		cJSON_free(str);
		return REMAT_EINPUT;
	}
	j->p = q + 1;
	*out = str;
	return REMAT_OK;
}

/* "invalid JSON number 'TEXT'[: why]", quoting the token at s. */
static int bad_number(struct jp *j, const unsigned char *s, const char *why)
{
	const unsigned char *q = s;

	while (q < j->end && q - s < 40 &&
	       (is_digit(*q) || (unsigned)((*q | 0x20) - 'a') < 26u || *q == '.' || *q == '+' ||
		*q == '-' || *q == '_'))
		q++;
	return fail_at(j, s, "invalid JSON number '%.*s'%s%s", (int)(q - s), (const char *)s,
		       why ? ": " : "", why ? why : "");
}

static const double pow10_exact[23] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22
};

#define TWO53 9007199254740992ull

/* The significant digits of a number, read across its integer and fraction parts. */
struct digits {
	uint64_t m;       /* the digits from the first nonzero one through the last */
	int nm;           /* how many digits m holds (<= 19) */
	int big;          /* more than 19 significant digits: m is not used */
	long long zeros;  /* zeros since the last nonzero digit, not in m yet */
	long long first, last; /* indices of the first and last nonzero digits */
};

static void take_digits(struct digits *d, const unsigned char *p, const unsigned char *e,
			long long k)
{
	for (; p < e; p++, k++) {
		unsigned c = *p - '0';

		if (c == 0) {
			if (d->first >= 0)
				d->zeros++;
			continue;
		}
		if (d->first < 0)
			d->first = k;
		if (!d->big) {
			if (d->nm + d->zeros + 1 > 19) {
				d->big = 1;
			} else {
				for (; d->zeros > 0; d->zeros--, d->nm++)
					d->m *= 10;
				d->m = d->m * 10 + c;
				d->nm++;
			}
		}
		d->zeros = 0;
		d->last = k;
	}
}

/* Digit k of a number whose integer part is [ip, ip + nint) and fraction starts at fp. */
static unsigned char digit_at(const unsigned char *ip, long long nint, const unsigned char *fp,
			      long long k)
{
	return k < nint ? ip[k] : fp[k - nint];
}

/*
 * The slow path: strtod on "DIGITSeEXP" (no decimal point, so no locale),
 * the digits cut to 800 with a sticky 1 (enough for correct rounding: a
 * halfway point between doubles has at most 767 significant digits).
 */
static int slow_number(struct jp *j, const struct digits *d, const unsigned char *ip,
		       long long nint, const unsigned char *fp, long long e10, double *out)
{
	long long n = d->big ? d->last - d->first + 1 : d->nm, keep = n, k;
	size_t need;
	char *p;

	if (keep > 800)
		keep = 801;
	need = (size_t)keep + 32;
	if (j->scap < need) {
		char *ns = realloc(j->scratch, need);

		if (!ns)
			return oom(j);
		j->scratch = ns;
		j->scap = need;
	}
	p = j->scratch;
	if (!d->big) {
		snprintf(p, j->scap, "%llue%lld", (unsigned long long)d->m, e10);
	} else {
		for (k = 0; k < keep; k++)
			p[k] = (char)digit_at(ip, nint, fp, d->first + k);
		if (keep < n)
			p[keep - 1] = '1'; /* sticky: something nonzero was cut */
		snprintf(p + keep, j->scap - (size_t)keep, "e%lld", e10 + (n - keep));
	}
	*out = strtod(p, NULL);
	return REMAT_OK;
}

/* A number at j->p into item. */
static int parse_number(struct jp *j, cJSON *item)
{
	const unsigned char *s = j->p, *q = s, *e = j->end, *ip, *ie, *fp = NULL, *fe = NULL;
	struct digits d = { 0, 0, 0, 0, -1, -1 };
	long long nint, ex = 0, e10 = 0;
	int neg = 0, exact_int = 0;
	double v = 0;

	if (*q == '-') {
		neg = 1;
		q++;
	}
	if (q >= e || !is_digit(*q))
		return bad_number(j, s, q < e && *q == '.' ?
				  "a digit must come before the decimal point" :
				  "a digit must follow the minus sign");
	ip = q;
	if (*q == '0') {
		q++;
		if (q < e && is_digit(*q))
			return bad_number(j, s, "leading zeros are not allowed");
	} else {
		while (q < e && is_digit(*q))
			q++;
	}
	ie = q;
	if (q < e && *q == '.') {
		fp = ++q;
		while (q < e && is_digit(*q))
			q++;
		fe = q;
		if (fp == fe)
			return bad_number(j, s, "a digit must follow the decimal point");
	}
	if (q < e && (*q == 'e' || *q == 'E')) {
		int eneg = 0;

		q++;
		if (q < e && (*q == '+' || *q == '-'))
			eneg = *q++ == '-';
		if (q >= e || !is_digit(*q))
			return bad_number(j, s, "the exponent needs digits");
		while (q < e && is_digit(*q)) {
			if (ex < 1000000000)
				ex = ex * 10 + (*q - '0');
			q++;
		}
		if (eneg)
			ex = -ex;
	}
	/* A number ends at white space or punctuation: "1x", "1.5.2" are not numbers. */
	if (q < e && (is_digit(*q) || (unsigned)((*q | 0x20) - 'a') < 26u || *q == '.' || *q == '+' ||
		      *q == '-' || *q == '_'))
		return bad_number(j, s, NULL);

	nint = ie - ip;
	take_digits(&d, ip, ie, 0);
	if (fp)
		take_digits(&d, fp, fe, nint);
	if (d.first < 0) {
		v = 0;
		exact_int = 1;
	} else {
		/* value = (digits first..last) * 10^e10 */
		e10 = (nint - 1 - d.last) + ex;
		if (!d.big && d.m <= TWO53 && e10 >= -22 && e10 <= 22)
			v = e10 >= 0 ? (double)d.m * pow10_exact[e10] : (double)d.m / pow10_exact[-e10];
		else if (slow_number(j, &d, ip, nint, fp, e10, &v))
			return REMAT_ENOMEM;
		if (isinf(v))
			return fail_at(j, s, "number '%.*s%s' is too large (beyond the range of a "
				       "double)", (int)(q - s > 40 ? 37 : q - s), (const char *)s,
				       q - s > 40 ? "..." : "");
		if (v == 0)
			return fail_at(j, s, "number '%.*s%s' is too small (a double would read it "
				       "as 0)", (int)(q - s > 40 ? 37 : q - s), (const char *)s,
				       q - s > 40 ? "..." : "");
		if (!d.big && e10 >= 0 && e10 <= 15) {
			uint64_t p10 = 1;
			long long i;

			for (i = 0; i < e10; i++)
				p10 *= 10;
			exact_int = d.m <= TWO53 / p10;
		}
	}
	item->type = cJSON_Number;
	item->valuedouble = neg ? -v : v;
	if (item->valuedouble >= 2147483647.0)
		item->valueint = 2147483647;
	else if (item->valuedouble <= -2147483648.0)
		item->valueint = -2147483647 - 1;
	else
		item->valueint = (int)item->valuedouble;
	if (!exact_int && v <= (double)TWO53 && v == floor(v)) {
		/* Looks like an integer a double holds exactly, but was not: mark it. */
		size_t n = (size_t)(q - s) > 48 ? 48 : (size_t)(q - s);

		item->type |= REMAT_I_JSON_NOT_EXACT;
		item->valuestring = cJSON_malloc(n + 4);
		if (!item->valuestring)
			return oom(j);
		memcpy(item->valuestring, s, n);
		strcpy(item->valuestring + n, (size_t)(q - s) > n ? "..." : "");
	}
	j->p = q;
	return REMAT_OK;
}

static int parse_value(struct jp *j, cJSON **out);

/* Append it to container c whose last child is *last (cJSON's links: child->prev is the last). */
static inline void link_child(cJSON *c, cJSON **last, cJSON *it)
{
	if (*last) {
		(*last)->next = it;
		it->prev = *last;
	} else {
		c->child = it;
	}
	c->child->prev = it;
	*last = it;
}

static int enter(struct jp *j)
{
	if (++j->depth > REMAT_I_JSON_MAX_DEPTH)
		return fail_at(j, j->p, "too deeply nested (more than %d levels)",
			       REMAT_I_JSON_MAX_DEPTH);
	return REMAT_OK;
}

static int parse_array(struct jp *j, cJSON *arr)
{
	cJSON *last = NULL, *it;

	arr->type = cJSON_Array;
	REMAT_TRY(enter(j));
	j->p++;
	skip_ws(j);
	if (j->p < j->end && *j->p == ']') {
		j->p++;
		j->depth--;
		return REMAT_OK;
	}
	for (;;) {
		skip_ws(j);
		REMAT_TRY(parse_value(j, &it));
		link_child(arr, &last, it);
		skip_ws(j);
		if (j->p >= j->end)
			return fail_eof(j);
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p == ']') {
			j->p++;
			break;
		}
		return fail_near(j, j->p, "expected ',' or ']'");
	}
	j->depth--;
	return REMAT_OK;
}

/* The keys of a large object, for finding duplicates. */
struct keyset {
	const char **slot;
	size_t mask, n;
};

static size_t key_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return (size_t)(h ^ (h >> 29));
}

/* Insert key; returns 1 when it was there already, -1 out of memory. */
static int keyset_add(struct keyset *ks, const char *key)
{
	size_t i;

	if (2 * (ks->n + 1) > ks->mask + 1) {
		size_t ncap = ks->slot ? 2 * (ks->mask + 1) : 64, k;
		const char **ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -1;
		for (k = 0; ks->slot && k <= ks->mask; k++) {
			if (!ks->slot[k])
				continue;
			i = key_hash(ks->slot[k]) & (ncap - 1);
			while (ns[i])
				i = (i + 1) & (ncap - 1);
			ns[i] = ks->slot[k];
		}
		free(ks->slot);
		ks->slot = ns;
		ks->mask = ncap - 1;
	}
	for (i = key_hash(key) & ks->mask; ks->slot[i]; i = (i + 1) & ks->mask)
		if (strcmp(ks->slot[i], key) == 0)
			return 1;
	ks->slot[i] = key;
	ks->n++;
	return 0;
}

#define KEYSET_FROM 16 /* objects with more keys than this hash them */

static int parse_object(struct jp *j, cJSON *obj)
{
	struct keyset ks = { NULL, 0, 0 };
	cJSON *last = NULL, *it;
	size_t count = 0;
	int rc = REMAT_OK;

	obj->type = cJSON_Object;
	REMAT_TRY(enter(j));
	j->p++;
	skip_ws(j);
	if (j->p < j->end && *j->p == '}') {
		j->p++;
		j->depth--;
		return REMAT_OK;
	}
	for (;;) {
		const unsigned char *kpos;
		char *key;
		int dup = 0;

		skip_ws(j);
		if (j->p >= j->end) {
			rc = fail_eof(j);
			break;
		}
		if (*j->p != '"') {
			rc = fail_near(j, j->p, "expected a key (a string in double quotes)");
			break;
		}
		kpos = j->p;
		if ((rc = parse_string(j, &key)))
			break;
		if (count < KEYSET_FROM) {
			for (it = obj->child; it; it = it->next)
				if (it->string[0] == key[0] && strcmp(it->string, key) == 0) {
					dup = 1;
					break;
				}
		} else {
			if (count == KEYSET_FROM) /* from now on: a hash table */
				for (it = obj->child; it; it = it->next)
					if (keyset_add(&ks, it->string) < 0)
						dup = -1;
			if (dup == 0)
				dup = keyset_add(&ks, key);
		}
		if (dup) {
			rc = dup < 0 ? oom(j) :
			     fail_at(j, kpos, "duplicate key: '%.80s' is given more than "
				     "once in this object", key);
			cJSON_free(key);
			break;
		}
		skip_ws(j);
		if (j->p >= j->end || *j->p != ':') {
			rc = fail_near(j, j->p, "expected ':' after the key");
			cJSON_free(key);
			break;
		}
		j->p++;
		skip_ws(j);
		if ((rc = parse_value(j, &it))) {
			cJSON_free(key);
			break;
		}
		it->string = key;
		link_child(obj, &last, it);
		count++;
		skip_ws(j);
		if (j->p >= j->end) {
			rc = fail_eof(j);
			break;
		}
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p == '}') {
			j->p++;
			j->depth--;
			break;
		}
		rc = fail_near(j, j->p, "expected ',' or '}'");
		break;
	}
	free(ks.slot);
	return rc;
}

static int parse_literal(struct jp *j, const char *word, size_t n)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return fail_near(j, j->p, NULL);
	j->p += n;
	return REMAT_OK;
}

static int parse_value(struct jp *j, cJSON **out)
{
	cJSON *item;
	int rc;

	*out = NULL;
	if (j->p >= j->end)
		return fail_eof(j);
	item = cJSON_CreateNull();
	if (!item)
		return oom(j);
	switch (*j->p) {
	case '"':
		item->type = cJSON_String;
		rc = parse_string(j, &item->valuestring);
		break;
	case '{':
		rc = parse_object(j, item);
		break;
	case '[':
		rc = parse_array(j, item);
		break;
	case 't':
		item->type = cJSON_True;
		item->valueint = 1;
		rc = parse_literal(j, "true", 4);
		break;
	case 'f':
		item->type = cJSON_False;
		rc = parse_literal(j, "false", 5);
		break;
	case 'n':
		rc = parse_literal(j, "null", 4);
		break;
	case '-': case '0': case '1': case '2': case '3': case '4':
	case '5': case '6': case '7': case '8': case '9':
		rc = parse_number(j, item);
		break;
	case '+':
		rc = bad_number(j, j->p, "JSON numbers have no plus sign");
		break;
	case '.':
		rc = bad_number(j, j->p, "a digit must come before the decimal point");
		break;
	case 'N': case 'I':
		rc = fail_near(j, j->p, "JSON has no NaN or Infinity");
		break;
	default:
		rc = fail_near(j, j->p, NULL);
	}
	if (rc) {
		cJSON_Delete(item);
		return rc;
	}
	*out = item;
	return REMAT_OK;
}

int remat_i_json_parse(const char *buf, size_t len, const char *source,
		       struct cJSON **out, struct remat_error *err)
{
	const unsigned char *u = (const unsigned char *)buf, *nul;
	struct jp j;
	cJSON *root = NULL;
	size_t i;
	int rc;

	*out = NULL;
	for (i = 0; i < len; i++)
		if (u[i] != ' ' && u[i] != '\t' && u[i] != '\n' && u[i] != '\r')
			break;
	if (i == len)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: empty file, expected JSON", source);
	memset(&j, 0, sizeof(j));
	j.start = j.p = u;
	j.end = u + len;
	j.src = source;
	j.err = err;
	nul = memchr(u, '\0', len);
	if (nul)
		return fail_at(&j, nul, "not a text file (contains a NUL byte)");
	if (len >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF)
		return fail_at(&j, u, "invalid JSON: the file starts with a byte order mark "
			       "(save it as UTF-8 without one)");
	skip_ws(&j);
	rc = parse_value(&j, &root);
	if (rc == REMAT_OK) {
		skip_ws(&j);
		if (j.p < j.end)
			rc = fail_near(&j, j.p, "text after the end of the JSON value");
	}
	free(j.scratch);
	if (rc) {
		cJSON_Delete(root);
		return rc;
	}
	*out = root;
	return REMAT_OK;
}

int remat_i_json_parse_file(const char *path, struct cJSON **out, const char **source,
			    struct remat_error *err)
{
	char *buf;
	size_t len;
	int rc;

	*out = NULL;
	REMAT_TRY(remat_i_read_file(path, &buf, &len, err));
	*source = remat_i_input_name(path);
	rc = remat_i_json_parse(buf, len, *source, out, err);
	free(buf);
	return rc;
}

int remat_i_json_parse_copy(const char *buf, size_t len, const char *source,
			    struct cJSON **out, struct remat_error *err)
{
	return remat_i_json_parse(buf, len, source, out, err);
}

struct cJSON *remat_i_json_member(const struct cJSON *obj, const char *key, int *dup)
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

	if (!v || !cJSON_IsNumber(v) || (v->type & REMAT_I_JSON_NOT_EXACT))
		return 0;
	d = v->valuedouble;
	if (!isfinite(d) || d != floor(d) || d < 0 || d > (double)max)
		return 0;
	*out = (int64_t)d;
	return 1;
}

int remat_i_json_field_fail(const char *src, struct remat_error *err, const char *field,
			    const char *what, const cJSON *got)
{
	char shown[64];

	if (!got)
		return REMAT_FAIL(err, REMAT_EINPUT, "%s: '%s' %s", src, field, what);
	remat_i_json_show(got, shown, sizeof(shown));
	return REMAT_FAIL(err, REMAT_EINPUT, "%s: '%s' %s (got %s)", src, field, what, shown);
}

void remat_i_json_show(const struct cJSON *v, char *buf, size_t size)
{
	char *txt;

	if (v && cJSON_IsNumber(v) && v->valuestring) {
		snprintf(buf, size, "%s", v->valuestring);
		return;
	}
	txt = v ? cJSON_PrintUnformatted(v) : NULL;
	if (!txt) {
		snprintf(buf, size, "?");
		return;
	}
	if (strlen(txt) > 40)
		snprintf(buf, size, "%.37s...", txt);
	else
		snprintf(buf, size, "%s", txt);
	cJSON_free(txt);
}
