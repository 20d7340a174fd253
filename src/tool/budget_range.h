/*
 * budget_range.h - lists and ranges of budgets for sweeps (remat bench
 * --budgets).  Internal to libremat.
 *
 * Grammar: ITEM[,ITEM...] where ITEM is a budget as in FORMATS.md section 3
 * ("60%", "1.5GiB", "1048576") or a range LO..HI:N or LO..HI:STEP.
 *
 * - LO..HI:N (N a bare integer >= 2): N evenly spaced points from LO to HI,
 *   both included: point k (k = 0..N-1) is LO + k*(HI-LO)/(N-1), computed
 *   exactly, then rounded: percentages to the nearest millionth of a
 *   percent (halves up), sizes down to a whole byte.  "30%..100%:8" is
 *   30%, 40%, ..., 100%; "30%..100%:10" is 30%, 37.777778%, 45.555556%,
 *   ..., 100%.
 * - LO..HI:STEP (STEP with "%" or a unit, the same kind as LO and HI): LO,
 *   LO+STEP, ... up to HI (included when reached exactly); a range with
 *   LO > HI walks down.  "30%..100%:10%" is 30%, 40%, ..., 100%;
 *   "1GiB..2GiB:256MiB" is five sizes.
 * - LO and HI are both percentages or both sizes (any units).  Points of a
 *   percentage range are written as percentages ("37.777777%"), points of
 *   a size range as whole bytes ("1342177280"): each expands to a budget
 *   text that remat_budget_parse reads back to the same value, which is
 *   what a row of results records and what --emit-jobs passes on.
 * - Repeated points are kept once, in order of first appearance.
 */
#ifndef REMAT_BUDGET_RANGE_H
#define REMAT_BUDGET_RANGE_H

#include "remat/budget.h"

/* Most points one list may expand to. */
#define REMAT_I_BUDGET_LIST_MAX 100000

struct remat_i_budget_list {
	char **text;   /* [n] budgets remat_budget_parse accepts */
	int n;
	int cap;
};

/*
 * Parse a list; on success out owns the expanded budget texts.  Errors are
 * REMAT_EUSAGE quoting the item that could not be read.
 */
int remat_i_budget_list_parse(const char *text, struct remat_i_budget_list *out,
			      struct remat_error *err);
void remat_i_budget_list_free(struct remat_i_budget_list *l);

#endif
