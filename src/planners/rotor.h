/*
 * rotor.h - Rotor's dynamic program on a chain whose sizes are already in
 * memory slots.  Internal to libremat; exposed for rotor.c, its tests and
 * bench/bench_rotor.c.
 *
 * Stage i (0..L-1) of the chain, every size in slots:
 *   x[i]    its input (x[0]: graph inputs that only stage 0's forward
 *           reads, which the plan may free; other inputs are not counted)
 *   y[i]    its output (x[i+1])
 *   xb[i]   what F_all(i) leaves resident (its output included)
 *   fa[i]   peak during F_all(i), input held outside
 *   fah[i]  peak during F_held(i): F_all(i) when its output is resident
 *           from the start and not recomputed
 *   fo[i]   peak during F_ng(i), input held outside
 *   fi[i]   peak during F_ng(i) when its input is resident at the start
 *           and freed after its last use (a stage inside a no-grad run)
 *   bp[i]   peak during B(i), counting everything resident at its start
 *   d[k]    (k = 0..L) gradient bytes crossing boundary k backwards, the
 *           incoming gradient of stage k-1; d[L] = 0
 *   po[i]   outputs the stage computes, resident to the end
 *   fw[i], fwh[i], fwng[i], bw[i]: costs of F_all, F_held, F_ng and B
 *   nr[i]   F_ng(i) is forbidden (it would recompute an output or a
 *           "recompute": false node)
 *   xl[i]   x[i] is still read after F_all(i) (by B(i) in Rotor's model;
 *           Keras-style graphs, whose backward reads the next layer's
 *           output instead, have 0 here, and a checkpoint x[i] can then be
 *           freed as soon as F_all(i) has used it)
 */
#ifndef REMAT_ROTOR_H
#define REMAT_ROTOR_H

#include <stdint.h>

#include "remat/planner.h"
#include "plan/stage_plan.h"

struct remat_i_rotor_chain {
	int32_t L;
	int32_t *x, *y, *xb, *fa, *fah, *fo, *fi, *bp, *d, *po;
	double *fw, *fwh, *fwng, *bw;
	uint8_t *nr, *xl;
	int plain;      /* 1: Rotor's recurrence only, no held variant (benchmarks) */
};

/* Allocate every array of a chain of L stages (zeroed). */
int remat_i_rotor_chain_alloc(struct remat_i_rotor_chain *ch, int32_t L,
			      struct remat_error *err);
void remat_i_rotor_chain_release(struct remat_i_rotor_chain *ch);

/*
 * Opt(i, l, m) for 0 <= i <= l < L and 0 <= m <= M, in up to four tables
 * (see rotor.c): the plain subproblem, the least of it and the held one
 * (stage l's output still resident, a checkpoint, counted in m: F_held
 * instead of recomputing it), and the same two when stage i's input is
 * freed after its last forward.  top: which one answers for the chain.
 */
struct remat_i_rotor_table {
	int32_t L, M;
	int top;
	double *t[4];
};

/* Bytes the table of L stages and M slots takes. */
double remat_i_rotor_table_bytes(int32_t L, int32_t M);

/*
 * Fill the tables.  req (may be NULL) supplies the deadline:
 * REMAT_ECANCELED when it passes.  O(L^3 M / 3) time, O(L^2 M) doubles.
 */
int remat_i_rotor_solve(const struct remat_i_rotor_chain *ch, int32_t M,
			struct remat_i_rotor_table *tab,
			const struct remat_plan_request *req, struct remat_error *err);
void remat_i_rotor_table_release(struct remat_i_rotor_table *tab);

/* Opt(0, L-1, m): the whole chain's cost with m slots (INFINITY: none). */
double remat_i_rotor_cost(const struct remat_i_rotor_table *tab, int32_t m);

/*
 * Backtrack the whole chain at m slots into F_all / F_held / F_ck / F_ng /
 * B operations (appended to ops).  REMAT_ENOFIT when Opt(0, L-1, m) is
 * infinite.  O(L^2) for the arg-min re-evaluations plus the operations.
 */
int remat_i_rotor_backtrack(const struct remat_i_rotor_chain *ch,
			    const struct remat_i_rotor_table *tab, int32_t m,
			    struct remat_i_cops *ops, struct remat_error *err);

/*
 * Step 2 of rotor.c, shared with rockmate.c: the slot size for m_top bytes
 * cut into slots units; the bytes of the inputs only stages 0..end-1's
 * forward reads (the chain's x_0); and the slot chain of the groups
 * [gs[k], gs[k+1]) of c's stages (k < G), sizes capped at cap slots.
 */
int64_t remat_i_rotor_slot_unit(const struct remat_graph *g, const struct remat_chain *c,
				int64_t mtop, long slots);
int64_t remat_i_rotor_first_input_bytes(const struct remat_graph *g,
					const struct remat_chain *c, int32_t end);
/* bytes in slots of unit bytes, rounded up, at most cap. */
int32_t remat_i_rotor_to_slots(int64_t bytes, int64_t unit, int32_t cap);

/* Step 2's figures for one grouping of the stages. */
struct remat_i_rotor_levels {
	int64_t x0;    /* bytes of the inputs only the first group reads */
	int64_t mtop;  /* the budget above the other, resident inputs */
	int64_t unit;  /* bytes per slot */
	int32_t M;     /* whole slots in mtop */
	int32_t Mtab;  /* slots the tables span: M and an eighth more */
};
/*
 * Fill lv for a first group ending at stage end: the slot unit is
 * remat_i_rotor_slot_unit()'s for mtop when lv->unit is 0, else kept (a
 * regrouping measures in the slots it started with).  0 when mtop <= 0
 * (nothing fits above the resident inputs; M and Mtab are then not set),
 * else 1.
 */
int remat_i_rotor_levels(const struct remat_graph *g, const struct remat_chain *c,
			 int64_t budget, int32_t end, long slots,
			 struct remat_i_rotor_levels *lv);
int remat_i_rotor_build_slot_chain(const struct remat_graph *g, const struct remat_chain *c,
				   const int32_t *gs, int32_t G, int64_t x0, int64_t unit,
				   int32_t cap, struct remat_i_rotor_chain *ch,
				   struct remat_error *err);

#endif
