/*
 * budget.c - budgets as written on the command line (FORMATS.md section 3),
 * parsed into an exact decimal and resolved with 128-bit integer
 * arithmetic, so "1.5GiB" is exactly 1610612736 and "33.3%" of a peak is
 * the floor of the exact product.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "remat/budget.h"

static const struct {
	const char *name;
	uint64_t bytes;
} units[] = {
	{ "b", 1 },
	{ "kb", 1000ull },
	{ "mb", 1000ull * 1000 },
	{ "gb", 1000ull * 1000 * 1000 },
	{ "tb", 1000ull * 1000 * 1000 * 1000 },
	{ "kib", 1ull << 10 },
	{ "mib", 1ull << 20 },
	{ "gib", 1ull << 30 },
	{ "tib", 1ull << 40 },
};

static int bad(const char *text, struct remat_error *err)
{
	return REMAT_FAIL(err, REMAT_EUSAGE,
			  "cannot read budget '%s' (expected bytes such as 4GiB, 1.5GB, "
			  "1048576, or a percentage such as 60%%)", text);
}

int remat_budget_parse(const char *text, struct remat_budget_spec *spec,
		       struct remat_error *err)
{
	const char *p = text, *end;
	int digits = 0, int_digits = 0, frac = 0;
	char unit[8];
	size_t ulen, i;

	memset(spec, 0, sizeof(*spec));
	snprintf(spec->text, sizeof(spec->text), "%s", text);
	while (isspace((unsigned char)*p))
		p++;
	end = p + strlen(p);
	while (end > p && isspace((unsigned char)end[-1]))
		end--;
	if (end - p == 6 && strncasecmp(p, "lowest", 6) == 0) {
		spec->lowest = 1;
		return REMAT_OK;
	}
	for (; p < end && isdigit((unsigned char)*p); p++, int_digits++) {
		if (spec->num == 0 && *p == '0')
			continue; /* leading zeros do not count as digits */
		if (++digits > 19)
			return REMAT_FAIL(err, REMAT_EUSAGE, "budget '%s' is too large", text);
		spec->num = spec->num * 10 + (uint64_t)(*p - '0');
	}
	if (p < end && *p == '.') {
		p++;
		for (; p < end && isdigit((unsigned char)*p); p++, frac++) {
			if (digits >= 19 || spec->scale >= 30)
				continue; /* finer than any unit can matter */
			if (spec->num || *p != '0')
				digits++;
			spec->num = spec->num * 10 + (uint64_t)(*p - '0');
			spec->scale++;
		}
	}
	if (int_digits == 0 && frac == 0)
		return bad(text, err);
	while (p < end && isspace((unsigned char)*p))
		p++;
	ulen = (size_t)(end - p);
	if (ulen == 0) {
		spec->unit = 1;
		return REMAT_OK;
	}
	if (ulen == 1 && *p == '%') {
		spec->percent = 1;
		spec->unit = 1;
		return REMAT_OK;
	}
	if (ulen >= sizeof(unit))
		return bad(text, err);
	memcpy(unit, p, ulen);
	unit[ulen] = '\0';
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcasecmp(unit, units[i].name) == 0) {
			spec->unit = units[i].bytes;
			return REMAT_OK;
		}
	return bad(text, err);
}

int remat_budget_resolve(const struct remat_budget_spec *spec,
			 int64_t no_remat_peak, int64_t *bytes,
			 struct remat_error *err)
{
	unsigned __int128 v, den = 1;
	int i;

	if (spec->lowest)
		return REMAT_FAIL(err, REMAT_EUSAGE, "budget 'lowest' is no size: only 'remat plan' "
				  "takes it (the lowest peak the planner reaches)");
	for (i = 0; i < spec->scale; i++)
		den *= 10;
	if (spec->percent) {
		if (no_remat_peak < 0)
			return REMAT_FAIL(err, REMAT_EUSAGE,
					  "budget '%s' is a percentage and needs a graph", spec->text);
		v = (unsigned __int128)spec->num * (uint64_t)no_remat_peak;
		den *= 100;
	} else {
		v = (unsigned __int128)spec->num * spec->unit;
	}
	v /= den;
	if (v > (unsigned __int128)INT64_MAX)
		return REMAT_FAIL(err, REMAT_EUSAGE, "budget '%s' is too large", spec->text);
	*bytes = (int64_t)v;
	return REMAT_OK;
}

int remat_budget_bytes(const char *text, int64_t no_remat_peak,
		       int64_t *bytes, struct remat_error *err)
{
	struct remat_budget_spec spec;

	REMAT_TRY(remat_budget_parse(text, &spec, err));
	return remat_budget_resolve(&spec, no_remat_peak, bytes, err);
}

void remat_format_bytes(int64_t bytes, char *buf, int size)
{
	static const char *const names[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024 && bytes > -1024) {
		snprintf(buf, (size_t)size, "%lld B", (long long)bytes);
		return;
	}
	while ((v >= 1024 || v <= -1024) && u < 5) {
		v /= 1024;
		u++;
	}
	snprintf(buf, (size_t)size, "%.2f %s", v, names[u]);
}
