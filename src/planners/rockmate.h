/*
 * rockmate.h - rk-Rotor, Rotor's dynamic program with a choice of
 * schedule per block (Zhao et al., ICML 2023, section 4).  Internal to
 * libremat; exposed for rockmate.c and its tests.
 *
 * The chain is a remat_i_rotor_chain (rotor.h: x, d, po, fo, fi, fwng,
 * nr per stage, in slots) whose F_all / B figures are replaced by a list
 * of options per stage: option k of stage i (off[i] <= k < off[i+1]) has
 * its own F_all cost fw[k], backward cost bw[k] (recomputations
 * included), kept memory xb[k] (what stays after its forward, output
 * included), forward peak fa[k] and backward peak bp[k], as Rotor's
 * xb/fa/bp/fw/bw are for the one option Rotor knows.
 *
 * A(i, l, m), m slots with stage i's input held outside and the
 * gradient arriving from stage l+1 inside, is Rotor's recurrence (rotor.c
 * with its held variant, without the release one) with a minimum over the
 * options wherever Rotor runs F_all(i) and B(i):
 *   i = l:  min_k fw[k] + bw[k]                  if m >= max(d[l+1] + fa[k], bp[k])
 *   once:   min_k fw[k] + bw[k] + A(i+1, l, m - xb[k])
 *                                    if m >= max(d[l+1] + fa[k], outs(i+1..l) + bp[k])
 *   re-run: sum fwng[i..j-1] + A(j, l, m - x[j]) + S(i, j-1, m - outs(j..l))
 *                                    if m >= d[l+1] + max(fo[i], fi[i+1..j-1])
 * S = min(A, H), H the same with stage l's output (y[l]) resident at the
 * start and counted in m (l < L-1): every need above gains y[l] except
 * at i = l, where F_held runs instead (fwh[k], fah[k]), and the
 * subproblems of "once" and the first of "re-run" are S instead of A.
 * With base->plain, S = A (Rotor's plain recurrence).
 * In a persistent schedule each stage runs F_all and B once, so the
 * optimum is the least over every choice of one option per stage of
 * Rotor's optimum for that choice (tests/unit/test_rockmate.c checks it
 * by enumeration).  O(L^2 M (K + L)) time, K options per stage;
 * O(L^2 M) doubles and choices.
 */
#ifndef REMAT_ROCKMATE_H
#define REMAT_ROCKMATE_H

#include <stdint.h>

#include "remat/planner.h"
#include "remat/chain.h"
#include "planners/rotor.h"

struct remat_i_rk_chain {
	const struct remat_i_rotor_chain *base;   /* x, d, po, fo, fi, fwng, nr */
	int32_t *off;                 /* [L + 1] options of stage i: off[i] .. off[i+1]-1 */
	int32_t *xb, *fa, *bp, *fah;  /* per option, in slots (fah: F_held's peak) */
	double *fw, *bw, *fwh;        /* per option (fwh: F_held's cost) */
};

enum { RK_A, RK_S };

struct remat_i_rk_table {
	int32_t L, M;
	double *t[2];                 /* A and S at (i, l, m) */
	int32_t *ch[2];               /* choice of A, of S: option k >= 0, re-run at j:
					 -2 - j, none: -1 */
	uint8_t *held;                /* S chose the held variant */
};

/* A stage operation with its option (-1 for F_ck / F_ng). */
struct remat_i_rk_op {
	int32_t op;                   /* enum remat_i_cop_kind: FALL, FHELD, FCK, FNG, BWD */
	int32_t stage, opt;
};

/* Fill the table (deadline from req, may be NULL: REMAT_ECANCELED). */
int remat_i_rk_solve(const struct remat_i_rk_chain *ch, int32_t M,
		     struct remat_i_rk_table *tab, const struct remat_plan_request *req,
		     struct remat_error *err);
void remat_i_rk_table_release(struct remat_i_rk_table *tab);

/* A(0, L-1, m) (INFINITY: none; m above M reads M). */
double remat_i_rk_cost(const struct remat_i_rk_table *tab, int32_t m);

/*
 * The operations of A(0, L-1, m) into ops (room for 4 L^2 + 4 L
 * entries); returns their count, or -1 when Opt is infinite.
 */
int64_t remat_i_rk_backtrack(const struct remat_i_rk_chain *ch,
			     const struct remat_i_rk_table *tab, int32_t m,
			     struct remat_i_rk_op *ops);

/*
 * Identical blocks: cls[s] (n_stages entries) gets the first stage whose
 * canonical form (sizes, costs, kinds, flags, the block's own edges by
 * position, its reads of the stage input and of outside values, and its
 * readers outside) equals stage s's, s itself when none.  Returns the
 * number of distinct blocks, -1 when out of memory.  O(n + e) plus the
 * comparisons of equal hashes.
 */
int32_t remat_i_rk_block_classes(const struct remat_graph *g, const struct remat_chain *c,
				 int32_t *cls);

#endif
