/*
 * remat/budget.h - memory budgets as written on the command line
 * (FORMATS.md section 3): "1073741824", "1.5GiB", "800 MB", "60%".
 */
#ifndef REMAT_BUDGET_H
#define REMAT_BUDGET_H

#include <stdint.h>

#include "remat/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct remat_budget_spec {
	int percent;       /* nonzero: a percentage of the no-remat peak */
	/* The value is num / 10^scale units (bytes, or percent). */
	uint64_t num;
	int scale;
	uint64_t unit;     /* bytes per unit (1 for percent) */
	char text[64];     /* the text as given, for messages */
	int lowest;        /* "lowest": the lowest peak the planner reaches
			      (remat_plan_lowest()); resolves to no size */
};

/*
 * Parse a budget.  Numbers are decimal with an optional fraction;
 * units B, KB/MB/GB/TB (1000^k), KiB/MiB/GiB/TiB (1024^k), any case, with
 * optional blanks before the unit; or a trailing "%"; or the word
 * "lowest" (any case; spec->lowest set).  Errors are REMAT_EUSAGE quoting
 * the text.
 */
int remat_budget_parse(const char *text, struct remat_budget_spec *spec,
		       struct remat_error *err);

/*
 * Resolve to bytes, rounding fractions down; a percentage is taken of
 * no_remat_peak.  Exact integer arithmetic; REMAT_EUSAGE on overflow of
 * int64, and for "lowest", which is no size.
 */
int remat_budget_resolve(const struct remat_budget_spec *spec,
			 int64_t no_remat_peak, int64_t *bytes,
			 struct remat_error *err);

/* Both at once. */
int remat_budget_bytes(const char *text, int64_t no_remat_peak,
		       int64_t *bytes, struct remat_error *err);

/* Format bytes for people: "512 B", "1.50 KiB", "3.20 GiB". */
void remat_format_bytes(int64_t bytes, char *buf, int size);

#ifdef __cplusplus
}
#endif
#endif
