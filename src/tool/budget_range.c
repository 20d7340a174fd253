/*
 * budget_range.c - budget lists and ranges for sweeps; see budget_range.h
 * for the grammar.  Points are computed in exact integer arithmetic (micro
 * percent for percentages, bytes for sizes), so a range expands the same
 * way on every machine.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool/budget_range.h"

#define MICRO 1000000LL
/* Largest percentage in a range, in micro percent (10^9 %). */
#define PCT_MAX (1000000000LL * MICRO)

void remat_i_budget_list_free(struct remat_i_budget_list *l)
{
	int i;

	for (i = 0; i < l->n; i++)
		free(l->text[i]);
	free(l->text);
	memset(l, 0, sizeof(*l));
}

static int push(struct remat_i_budget_list *l, const char *s, struct remat_error *err)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (strcmp(l->text[i], s) == 0)
			return REMAT_OK;
	if (l->n >= REMAT_I_BUDGET_LIST_MAX)
		return REMAT_FAIL(err, REMAT_EUSAGE, "budget list expands to more than %d "
				  "budgets", REMAT_I_BUDGET_LIST_MAX);
	if (l->n == l->cap) {
		int ncap = l->cap ? 2 * l->cap : 16;
		char **nt = realloc(l->text, sizeof(char *) * (size_t)ncap);

		if (!nt)
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		l->text = nt;
		l->cap = ncap;
	}
	l->text[l->n] = strdup(s);
	if (!l->text[l->n])
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	l->n++;
	return REMAT_OK;
}

/* Copy s[0..len) without surrounding blanks into buf. */
static void trim_copy(char *buf, size_t size, const char *s, size_t len)
{
	while (len > 0 && isspace((unsigned char)*s)) {
		s++;
		len--;
	}
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	if (len >= size)
		len = size - 1;
	memcpy(buf, s, len);
	buf[len] = '\0';
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* A percentage spec in micro percent. */
static int to_micro(const struct remat_budget_spec *sp, const char *item,
		    long long *out, struct remat_error *err)
{
	unsigned __int128 v = sp->num;
	int s;

	if (sp->scale > 6)
		return REMAT_FAIL(err, REMAT_EUSAGE, "budget range '%s': at most 6 decimals "
				  "in a percentage", item);
	for (s = sp->scale; s < 6; s++)
		v *= 10;
	if (v > (unsigned __int128)PCT_MAX)
		return REMAT_FAIL(err, REMAT_EUSAGE, "budget range '%s' is too large", item);
	*out = (long long)v;
	return REMAT_OK;
}

static void fmt_point(char *buf, size_t size, int percent, long long v)
{
	if (!percent) {
		snprintf(buf, size, "%lld", v);
		return;
	}
	if (v % MICRO == 0) {
		snprintf(buf, size, "%lld%%", v / MICRO);
	} else {
		char frac[16];
		int len;

		snprintf(frac, sizeof(frac), "%06lld", v % MICRO);
		for (len = 6; len > 0 && frac[len - 1] == '0'; len--)
			frac[len - 1] = '\0';
		snprintf(buf, size, "%lld.%s%%", v / MICRO, frac);
	}
}

/* Put "budget range 'ITEM': " before the message already in err. */
static int again(struct remat_error *err, const char *item, const char *what)
{
	char msg[sizeof(err->msg)];

	snprintf(msg, sizeof(msg), "%s", err->msg);
	return REMAT_FAIL(err, REMAT_EUSAGE, "budget range '%s': %s%s", item, what, msg);
}

static int parse_range(struct remat_i_budget_list *l, const char *item,
		       const char *dots, struct remat_error *err)
{
	struct remat_budget_spec lo, hi, step;
	char a[64], b[64], c[64];
	const char *colon = strchr(dots + 2, ':');
	long long va = 0, vb = 0, vs = 0, n = 0, k;
	int64_t bytes;
	char pt[64];

	if (!colon)
		return REMAT_FAIL(err, REMAT_EUSAGE, "budget range '%s' needs ':N' (a number "
				  "of points) or ':STEP' (such as ':10%%')", item);
	trim_copy(a, sizeof(a), item, (size_t)(dots - item));
	trim_copy(b, sizeof(b), dots + 2, (size_t)(colon - (dots + 2)));
	trim_copy(c, sizeof(c), colon + 1, strlen(colon + 1));
	if (remat_budget_parse(a, &lo, err) || remat_budget_parse(b, &hi, err))
		return again(err, item, "");
	if (lo.percent != hi.percent)
		return REMAT_FAIL(err, REMAT_EUSAGE, "budget range '%s': both ends must be "
				  "percentages or both sizes", item);
	if (all_digits(c)) {
		n = strtoll(c, NULL, 10);
		if (strlen(c) > 9 || n < 2 || n > REMAT_I_BUDGET_LIST_MAX)
			return REMAT_FAIL(err, REMAT_EUSAGE, "budget range '%s': the number "
					  "of points must be from 2 to %d", item,
					  REMAT_I_BUDGET_LIST_MAX);
	} else {
		if (remat_budget_parse(c, &step, err))
			return again(err, item, "step: ");
		if (step.percent != lo.percent)
			return REMAT_FAIL(err, REMAT_EUSAGE, "budget range '%s': the step must "
					  "be %s like the ends", item,
					  lo.percent ? "a percentage" : "a size with a unit");
	}
	if (lo.percent) {
		REMAT_TRY(to_micro(&lo, item, &va, err));
		REMAT_TRY(to_micro(&hi, item, &vb, err));
		if (!n)
			REMAT_TRY(to_micro(&step, item, &vs, err));
	} else {
		REMAT_TRY(remat_budget_resolve(&lo, -1, &bytes, err));
		va = bytes;
		REMAT_TRY(remat_budget_resolve(&hi, -1, &bytes, err));
		vb = bytes;
		if (!n) {
			REMAT_TRY(remat_budget_resolve(&step, -1, &bytes, err));
			vs = bytes;
		}
	}
	if (!n) {
		if (vs <= 0)
			return REMAT_FAIL(err, REMAT_EUSAGE, "budget range '%s': the step must "
					  "be positive", item);
		n = (va <= vb ? vb - va : va - vb) / vs + 1;
		if (n > REMAT_I_BUDGET_LIST_MAX)
			return REMAT_FAIL(err, REMAT_EUSAGE, "budget range '%s' has more than "
					  "%d points", item, REMAT_I_BUDGET_LIST_MAX);
		for (k = 0; k < n; k++) {
			fmt_point(pt, sizeof(pt), lo.percent, va <= vb ? va + k * vs : va - k * vs);
			REMAT_TRY(push(l, pt, err));
		}
		return REMAT_OK;
	}
	for (k = 0; k < n; k++) {
		/* A convex combination, so the numerator is never negative. */
		__int128 num = (__int128)va * (n - 1) + ((__int128)vb - va) * k;
		/* Percentages to the nearest micro percent, sizes down to a byte. */
		__int128 v = lo.percent ? (2 * num + (n - 1)) / (2 * (n - 1)) : num / (n - 1);

		fmt_point(pt, sizeof(pt), lo.percent, (long long)v);
		REMAT_TRY(push(l, pt, err));
	}
	return REMAT_OK;
}

int remat_i_budget_list_parse(const char *text, struct remat_i_budget_list *out,
			      struct remat_error *err)
{
	const char *p = text;
	int rc = REMAT_OK;

	memset(out, 0, sizeof(*out));
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char item[160];
		const char *dots;

		if (len >= sizeof(item)) {
			rc = REMAT_FAIL(err, REMAT_EUSAGE, "budget '%.40s...' is too long", p);
			break;
		}
		trim_copy(item, sizeof(item), p, len);
		if (!item[0]) {
			rc = REMAT_FAIL(err, REMAT_EUSAGE, "budget list '%s' has an empty item",
					text);
			break;
		}
		dots = strstr(item, "..");
		if (dots) {
			rc = parse_range(out, item, dots, err);
		} else {
			struct remat_budget_spec sp;

			rc = remat_budget_parse(item, &sp, err);
			if (rc == REMAT_OK)
				rc = push(out, item, err);
		}
		if (rc || !comma)
			break;
		p = comma + 1;
	}
	if (rc)
		remat_i_budget_list_free(out);
	return rc;
}
