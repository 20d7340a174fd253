/*
 * rotor.c - Rotor: the optimal persistent checkpointing schedule of a
 * heterogeneous chain by dynamic programming over discretised memory.
 *
 * Beaumont, Eyraud-Dubois, Herrmann, Joly, Shilova, "Optimal checkpointing
 * for heterogeneous chains: how to train deep neural networks with limited
 * memory" (2019), as restated in the Rockmate paper (Zhao et al., ICML
 * 2023), section 3.4 and appendix C; table recurrences as in Rotor's
 * persistent.py (notes/prior-art.md section 3).
 *
 * 1. Build the chain view (src/analysis/chain.c).  Inference graph or no
 *    stage: the no-remat order.  The no-remat order is always offered too,
 *    so rotor is never worse than none.  More stages than --max-stages
 *    (default 200): neighbouring stages are merged into that many groups
 *    of equal count, each measured as one stage.
 * 2. Discretise: the budget less the graph's inputs, m_top bytes, is cut
 *    into --slots units (default 500) of unit = ceil(m_top / slots) bytes,
 *    or a divisor of the tensors' common size factor between half that and
 *    that (slot_unit()); every stage size is rounded up to whole units.
 * 3. Fill Opt(i, l, m), the least cost of running stages i..l forward and
 *    back with their input held outside and m slots, which include the
 *    gradient arriving from stage l+1.  Either stage i runs once (F_all,
 *    then i+1..l with m - xb[i], then B(i)) or its forward is re-run
 *    later: F_ck(i), F_ng(i+1..j-1), then j..l with m - x[j], then i..j-1
 *    with m (less the outputs j..l left behind).  Each option is valid
 *    only when every peak it passes through fits in m.  One refinement
 *    over Rotor: after j..l the checkpoint x[j] is still resident, and
 *    i..j-1 may keep it instead of recomputing it (its last stage then
 *    runs F_held, which skips the output and what only the output
 *    needs); a second table holds min(plain, held) per (i, l, m).  For a
 *    chain of one node per stage this is exactly the recomputation that
 *    Rotor's model wastes, and with it rotor reaches the fixed-order
 *    MILP optimum on the conformance chains.
 * 4. Backtrack Opt(0, L-1, m) into F_all / F_ck / F_ng / B operations and
 *    expand them into a node-level compute order (chainplan.c).
 * 5. The stage model is an approximation of the node-level simulator
 *    (sizes are rounded, cross-stage reads of unusual graphs are not
 *    modelled), so the internal budget m is searched: from slots + slack
 *    (slack: an eighth of the slots, to win back what rounding up loses)
 *    downward over every distinct plan, each expanded and simulated,
 *    until the model's cost can no longer beat the best schedule that
 *    fits the real budget.  The result is always simulator-checked and
 *    within budget, or exit 3.
 *
 * Complexity: O(L^3 M / 3) time and O(L^2 M) doubles for the two tables
 * (L stages, M slots); the search O(M L^2) plus one expansion and
 * simulation per distinct plan.
 *
 * Not guaranteed: optimality beyond the persistent stage model at the
 * slot resolution.  Within it the table is exact: on a chain whose stage
 * model matches the graph (each backward reading its own stage, its
 * input and the next stage's gradient) and sizes that are whole units,
 * rotor's cost is the least of any persistent schedule.  Stages are
 * recomputed whole (Rockmate's finer per-block options are not here);
 * merged groups (--max-stages) lose further options.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/chain.h"
#include "chainplan.h"
#include "fit.h"
#include "rotor.h"

int remat_i_rotor_chain_alloc(struct remat_i_rotor_chain *ch, int32_t L,
			      struct remat_error *err)
{
	size_t n = (size_t)L + 1;

	memset(ch, 0, sizeof(*ch));
	ch->L = L;
	ch->x = calloc(n, sizeof(int32_t));
	ch->y = calloc(n, sizeof(int32_t));
	ch->xb = calloc(n, sizeof(int32_t));
	ch->fa = calloc(n, sizeof(int32_t));
	ch->fah = calloc(n, sizeof(int32_t));
	ch->fo = calloc(n, sizeof(int32_t));
	ch->fi = calloc(n, sizeof(int32_t));
	ch->bp = calloc(n, sizeof(int32_t));
	ch->d = calloc(n, sizeof(int32_t));
	ch->po = calloc(n, sizeof(int32_t));
	ch->fw = calloc(n, sizeof(double));
	ch->fwh = calloc(n, sizeof(double));
	ch->fwng = calloc(n, sizeof(double));
	ch->bw = calloc(n, sizeof(double));
	ch->nr = calloc(n, 1);
	if (!ch->x || !ch->y || !ch->xb || !ch->fa || !ch->fah || !ch->fo || !ch->fi ||
	    !ch->bp || !ch->d || !ch->po || !ch->fw || !ch->fwh || !ch->fwng || !ch->bw ||
	    !ch->nr) {
		remat_i_rotor_chain_release(ch);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	return REMAT_OK;
}

void remat_i_rotor_chain_release(struct remat_i_rotor_chain *ch)
{
	free(ch->x);
	free(ch->y);
	free(ch->xb);
	free(ch->fa);
	free(ch->fah);
	free(ch->fo);
	free(ch->fi);
	free(ch->bp);
	free(ch->d);
	free(ch->po);
	free(ch->fw);
	free(ch->fwh);
	free(ch->fwng);
	free(ch->bw);
	free(ch->nr);
	memset(ch, 0, sizeof(*ch));
}

void remat_i_rotor_table_release(struct remat_i_rotor_table *tab)
{
	free(tab->a);
	free(tab->s);
	memset(tab, 0, sizeof(*tab));
}

/* Row of (i, l) in a triangular table: rows of equal l are adjacent. */
static size_t tri(int32_t i, int32_t l)
{
	return (size_t)l * ((size_t)l + 1) / 2 + (size_t)i;
}

double remat_i_rotor_table_bytes(int32_t L, int32_t M)
{
	return 2.0 * L * ((double)L + 1) / 2 * ((double)M + 1) * sizeof(double);
}

static int32_t max32(int32_t a, int32_t b)
{
	return a > b ? a : b;
}

/* Slots of the outputs of stages j..l (prefix sums in pp), at most M + 1. */
static int32_t outs(const int64_t *pp, int32_t j, int32_t l, int32_t M)
{
	int64_t v = pp[l + 1] - pp[j];

	return v > (int64_t)M + 1 ? M + 1 : (int32_t)v;
}

/* row[m] = min(row[m], c + a[m - sa] + b[m - sb]) for m in [lo, M]. */
static void relax(double *restrict row, const double *restrict a, const double *restrict b,
		  double c, int32_t sa, int32_t sb, int32_t lo, int32_t M)
{
	const double *pa = a + (lo - sa), *pb = b + (lo - sb);
	double *pr = row + lo;
	int32_t m = 0, n = M - lo + 1;

	/*
	 * Unrolled by four so that -O2's basic-block vectorizer turns it into
	 * packed adds and mins (the loop vectorizer of -O2 leaves loops with
	 * a run-time trip count alone): this loop is the whole table's time.
	 */
	for (; m + 4 <= n; m += 4) {
		double v0 = c + pa[m] + pb[m], v1 = c + pa[m + 1] + pb[m + 1];
		double v2 = c + pa[m + 2] + pb[m + 2], v3 = c + pa[m + 3] + pb[m + 3];
		double r0 = pr[m], r1 = pr[m + 1], r2 = pr[m + 2], r3 = pr[m + 3];

		pr[m] = v0 < r0 ? v0 : r0;
		pr[m + 1] = v1 < r1 ? v1 : r1;
		pr[m + 2] = v2 < r2 ? v2 : r2;
		pr[m + 3] = v3 < r3 ? v3 : r3;
	}
	for (; m < n; m++) {
		double v = c + pa[m] + pb[m];

		pr[m] = v < pr[m] ? v : pr[m];
	}
}

/* First finite entry of a non-increasing row (M + 1 when none). */
static int32_t first_finite(const double *row, int32_t M)
{
	int32_t lo = 0, hi = M + 1;

	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;

		if (isfinite(row[mid]))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The tables being filled and, per row, the first finite entry. */
struct dp {
	const struct remat_i_rotor_chain *ch;
	const int64_t *pp;
	double *A, *S;
	int32_t *lo_a, *lo_s;
	int32_t M;
};

/*
 * One row: Opt(i, l, .) into row, for the plain subproblem (held = 0: the
 * output of stage l is not resident) or the held one (held = 1: it is, and
 * counts in m).  The run-once option and the first part of the re-run
 * option recurse into the same variant (the plain table, or min(plain,
 * held) when stage l's output is resident); the second part of the
 * re-run option into min(plain, held), since its checkpoint is resident.
 * Returns the first finite entry.
 */
static int32_t fill_row(const struct dp *dp, int32_t i, int32_t l, int held, double *row)
{
	const struct remat_i_rotor_chain *ch = dp->ch;
	int32_t M = dp->M, dl = ch->d[l + 1], yl = held ? ch->y[l] : 0, need, j, m, lo;
	size_t M1 = (size_t)M + 1;
	const double *sub = held ? dp->S : dp->A;
	const int32_t *sub_lo = held ? dp->lo_s : dp->lo_a;

	if (i == l) {
		double c = (held ? ch->fwh[i] : ch->fw[i]) + ch->bw[i];

		need = max32(dl + (held ? ch->fah[i] : ch->fa[i]), ch->bp[i]);
		for (m = 0; m <= M; m++)
			row[m] = m >= need ? c : INFINITY;
		return need > M ? M + 1 : need;
	}
	/* Stage i runs once: F_all(i), stages i+1..l, B(i). */
	need = max32(dl + yl + ch->fa[i], outs(dp->pp, i + 1, l, M) + ch->bp[i]);
	need = max32(need, ch->xb[i] + sub_lo[tri(i + 1, l)]);
	{
		const double *child = sub + tri(i + 1, l) * M1;
		double c = ch->fw[i] + ch->bw[i];
		int32_t xb = ch->xb[i];

		for (m = 0; m < need && m <= M; m++)
			row[m] = INFINITY;
		for (m = need; m <= M; m++)
			row[m] = c + child[m - xb];
	}
	lo = need > M ? M + 1 : need;
	if (ch->nr[i])
		return lo;
	/* Stage i re-run later: F_ck(i), F_ng(i+1..j-1), j..l, then i..j-1. */
	{
		double fws = 0;
		int32_t ng = ch->fo[i];

		for (j = i + 1; j <= l; j++) {
			int32_t k = j - 1, pj;

			if (k > i) {
				if (ch->nr[k])
					break;
				ng = max32(ng, ch->fi[k]);
			}
			fws += ch->fwng[k];
			if (dl + yl + ng > M)
				break;
			pj = outs(dp->pp, j, l, M);
			need = max32(dl + yl + ng, ch->x[j] + sub_lo[tri(j, l)]);
			need = max32(need, pj + dp->lo_s[tri(i, j - 1)]);
			if (need > M)
				continue;
			{
				const double *fr = sub + tri(j, l) * M1;
				const double *sr = dp->S + tri(i, j - 1) * M1;
				/*
				 * This option is never below its value at m = M (both
				 * parts are non-increasing in m), and the row is
				 * non-increasing too: only the prefix of the row still
				 * above that floor can improve.
				 */
				double floor = fws + fr[M - ch->x[j]] + sr[M - pj];
				int32_t a = need, b = M + 1;

				while (a < b) {
					int32_t mid = a + (b - a) / 2;

					if (row[mid] <= floor)
						b = mid;
					else
						a = mid + 1;
				}
				if (a == need)
					continue;
				relax(row, fr, sr, fws, ch->x[j], pj, need, a - 1);
			}
			if (need < lo)
				lo = need;
		}
	}
	return lo;
}

int remat_i_rotor_solve(const struct remat_i_rotor_chain *ch, int32_t M,
			struct remat_i_rotor_table *tab,
			const struct remat_plan_request *req, struct remat_error *err)
{
	int32_t L = ch->L, i, l, m;
	size_t M1 = (size_t)M + 1, cells;
	int64_t *pp = NULL;
	double *h = NULL;
	struct dp dp;
	int rc = REMAT_OK;

	memset(tab, 0, sizeof(*tab));
	memset(&dp, 0, sizeof(dp));
	if (L <= 0 || M < 0)
		return REMAT_FAIL(err, REMAT_EINTERNAL, "rotor: empty chain or negative budget");
	if (remat_i_rotor_table_bytes(L, M) > (double)SIZE_MAX / 4)
		return REMAT_FAIL(err, REMAT_ENOMEM, "rotor: table of %d stages x %d slots "
				  "is too large", (int)L, (int)M);
	cells = tri(L - 1, L - 1) + 1;
	dp.ch = ch;
	dp.M = M;
	dp.A = malloc(cells * M1 * sizeof(double));
	dp.S = malloc(cells * M1 * sizeof(double));
	dp.lo_a = malloc(cells * sizeof(int32_t));
	dp.lo_s = malloc(cells * sizeof(int32_t));
	h = malloc(M1 * sizeof(double));
	pp = malloc(sizeof(int64_t) * ((size_t)L + 1));
	if (!dp.A || !dp.S || !dp.lo_a || !dp.lo_s || !h || !pp) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "rotor: out of memory for a table of "
				"%d stages x %d slots (%.0f MiB)", (int)L, (int)M,
				remat_i_rotor_table_bytes(L, M) / 1048576.0);
		goto fail;
	}
	pp[0] = 0;
	for (i = 0; i < L; i++)
		pp[i + 1] = pp[i] + ch->po[i];
	dp.pp = pp;

	/*
	 * By last stage l, then first stage i downwards: (i, l) needs (j, l)
	 * for j > i and (i, k) for k < l.  This order keeps the rows of the
	 * current l, which every i reads, in cache.
	 */
	for (l = 0; l < L; l++) {
		if (req && remat_plan_expired(req)) {
			rc = REMAT_FAIL(err, REMAT_ECANCELED, "rotor: the time limit passed "
					"while filling the table");
			goto fail;
		}
		for (i = l; i >= 0; i--) {
			size_t r = tri(i, l);
			double *ra = dp.A + r * M1, *rs = dp.S + r * M1;

			dp.lo_a[r] = fill_row(&dp, i, l, 0, ra);
			/* The held variant: only a stage with a later stage has its output kept. */
			if (l + 1 < L) {
				fill_row(&dp, i, l, 1, h);
				for (m = 0; m <= M; m++)
					rs[m] = h[m] < ra[m] ? h[m] : ra[m];
			} else {
				memcpy(rs, ra, M1 * sizeof(double));
			}
			dp.lo_s[r] = first_finite(rs, M);
			dp.lo_a[r] = first_finite(ra, M);
		}
	}
	free(pp);
	free(h);
	free(dp.lo_a);
	free(dp.lo_s);
	tab->L = L;
	tab->M = M;
	tab->a = dp.A;
	tab->s = dp.S;
	return REMAT_OK;
fail:
	free(dp.A);
	free(dp.S);
	free(dp.lo_a);
	free(dp.lo_s);
	free(h);
	free(pp);
	return rc;
}

double remat_i_rotor_cost(const struct remat_i_rotor_table *tab, int32_t m)
{
	if (!tab->a || m < 0)
		return INFINITY;
	if (m > tab->M)
		m = tab->M;
	return tab->a[tri(0, tab->L - 1) * ((size_t)tab->M + 1) + (size_t)m];
}

/* A pending item of the backtrack: a subproblem or an operation to emit. */
struct bt_item {
	int32_t i, l, m;   /* solve (i..l, m) when op < 0 */
	int32_t op;        /* an operation on stage i, or -1 (plain) / -2 (either) */
};

struct bt_stack {
	struct bt_item *v;
	int64_t n, cap;
};

static int bt_push(struct bt_stack *s, int32_t i, int32_t l, int32_t m, int32_t op,
		   struct remat_error *err)
{
	if (s->n == s->cap) {
		int64_t cap = s->cap ? 2 * s->cap : 64;
		struct bt_item *v = realloc(s->v, sizeof(*v) * (size_t)cap);

		if (!v)
			return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n].i = i;
	s->v[s->n].l = l;
	s->v[s->n].m = m;
	s->v[s->n].op = op;
	s->n++;
	return REMAT_OK;
}

/*
 * The option fill_row() chose for (i, l, m) of the plain or held variant:
 * -1 for "stage i runs once" (or the base case), j for the re-run option,
 * -2 for none.  Re-evaluates the options in the same order with the same
 * arithmetic, so the arg-min is the one the table holds; *val gets it.
 */
static int32_t choice(const struct remat_i_rotor_chain *ch,
		      const struct remat_i_rotor_table *tab, const int64_t *pp,
		      int32_t i, int32_t l, int32_t m, int held, double *val)
{
	int32_t M = tab->M, dl = ch->d[l + 1], yl = held ? ch->y[l] : 0, need, j;
	size_t M1 = (size_t)M + 1;
	const double *run_once = held ? tab->s : tab->a, *first = held ? tab->s : tab->a;
	double best = INFINITY;
	int32_t best_j = -2;

	*val = INFINITY;
	if (i == l) {
		need = max32(dl + (held ? ch->fah[i] : ch->fa[i]), ch->bp[i]);
		if (m >= need) {
			*val = (held ? ch->fwh[i] : ch->fw[i]) + ch->bw[i];
			return -1;
		}
		return -2;
	}
	need = max32(dl + yl + ch->fa[i], outs(pp, i + 1, l, M) + ch->bp[i]);
	need = max32(need, ch->xb[i]);
	if (m >= need) {
		best = ch->fw[i] + ch->bw[i] +
		       run_once[tri(i + 1, l) * M1 + (size_t)(m - ch->xb[i])];
		best_j = -1;
	}
	if (!ch->nr[i]) {
		double fws = 0;
		int32_t ng = ch->fo[i];

		for (j = i + 1; j <= l; j++) {
			int32_t k = j - 1, pj;
			double v;

			if (k > i) {
				if (ch->nr[k])
					break;
				ng = max32(ng, ch->fi[k]);
			}
			fws += ch->fwng[k];
			if (dl + yl + ng > M)
				break;
			pj = outs(pp, j, l, M);
			need = max32(dl + yl + ng, max32(ch->x[j], pj));
			if (need > m)
				continue;
			v = fws + first[tri(j, l) * M1 + (size_t)(m - ch->x[j])] +
			    tab->s[tri(i, j - 1) * M1 + (size_t)(m - pj)];
			if (v < best) {
				best = v;
				best_j = j;
			}
		}
	}
	if (!isfinite(best))
		return -2;
	*val = best;
	return best_j;
}

int remat_i_rotor_backtrack(const struct remat_i_rotor_chain *ch,
			    const struct remat_i_rotor_table *tab, int32_t m,
			    struct remat_i_cops *ops, struct remat_error *err)
{
	struct bt_stack st = { NULL, 0, 0 };
	int64_t *pp = NULL;
	int32_t L = ch->L, i;
	int rc = REMAT_OK;

	if (m > tab->M)
		m = tab->M;
	if (!isfinite(remat_i_rotor_cost(tab, m)))
		return REMAT_FAIL(err, REMAT_ENOFIT, "rotor: no persistent schedule fits "
				  "%d slots", (int)m);
	pp = malloc(sizeof(int64_t) * ((size_t)L + 1));
	if (!pp)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	pp[0] = 0;
	for (i = 0; i < L; i++)
		pp[i + 1] = pp[i] + ch->po[i];
	rc = bt_push(&st, 0, L - 1, m, -1, err);
	while (rc == REMAT_OK && st.n > 0) {
		struct bt_item it = st.v[--st.n];
		int held = 0, sub;
		int32_t j, k;
		double va, vh;

		if (it.op >= 0) {
			rc = remat_i_cops_push(ops, it.op, it.i, err);
			continue;
		}
		j = choice(ch, tab, pp, it.i, it.l, it.m, 0, &va);
		if (it.op == -2 && it.l + 1 < L) {
			/* Either variant: the held one only when strictly cheaper. */
			int32_t jh = choice(ch, tab, pp, it.i, it.l, it.m, 1, &vh);

			if (vh < va) {
				held = 1;
				j = jh;
			}
		}
		if (j == -2) {
			rc = REMAT_FAIL(err, REMAT_EINTERNAL, "rotor: backtrack found no option "
					"for stages %d..%d at %d slots", (int)it.i, (int)it.l,
					(int)it.m);
			break;
		}
		sub = held ? -2 : -1;   /* the run-once child and the first re-run part */
		/* Pushed in reverse: popped in execution order. */
		if (it.i == it.l) {
			rc = bt_push(&st, it.i, 0, 0, REMAT_I_BWD, err);
			if (rc == REMAT_OK)
				rc = bt_push(&st, it.i, 0, 0, held ? REMAT_I_FHELD : REMAT_I_FALL,
					     err);
			continue;
		}
		if (j == -1) {
			rc = bt_push(&st, it.i, 0, 0, REMAT_I_BWD, err);
			if (rc == REMAT_OK)
				rc = bt_push(&st, it.i + 1, it.l, it.m - ch->xb[it.i], sub, err);
			if (rc == REMAT_OK)
				rc = bt_push(&st, it.i, 0, 0, REMAT_I_FALL, err);
			continue;
		}
		rc = bt_push(&st, it.i, j - 1, it.m - outs(pp, j, it.l, tab->M), -2, err);
		if (rc == REMAT_OK)
			rc = bt_push(&st, j, it.l, it.m - ch->x[j], sub, err);
		for (k = j - 1; k > it.i && rc == REMAT_OK; k--)
			rc = bt_push(&st, k, 0, 0, REMAT_I_FNG, err);
		if (rc == REMAT_OK)
			rc = bt_push(&st, it.i, 0, 0, REMAT_I_FCK, err);
	}
	free(st.v);
	free(pp);
	return rc;
}

/* ---- the planner ---- */

static const struct remat_planner_option rotor_options[] = {
	{ "slots", "N", "memory slots the budget is cut into (default 500)" },
	{ "max-stages", "N", "merge neighbouring stages down to N for the table "
	  "(default 200)" },
	{ NULL, NULL, NULL }
};

static int32_t to_slots(int64_t bytes, int64_t unit, int32_t cap)
{
	int64_t s;

	if (bytes <= 0)
		return 0;
	s = bytes / unit + (bytes % unit != 0);
	return s > cap ? cap : (int32_t)s;
}

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * The slot size.  Rotor's is ceil(m_top / slots), which rounds every
 * tensor up by a fraction of a unit: 4 MiB of stage sizes can need 501
 * slots of a 500-slot budget.  Tensor sizes usually share a large common
 * factor (2^k bytes); when the sizes of at least a unit share one with a
 * divisor between half the plain unit and the plain unit, that divisor is
 * used instead, so those sizes are counted exactly (up to twice the slots).
 */
static int64_t slot_unit(const struct remat_graph *g, const struct remat_chain *c,
			 int64_t mtop, long slots)
{
	int64_t u0 = mtop / slots + (mtop % slots != 0), common = 0, k;
	int32_t v;

	if (u0 <= 1)
		return 1;
	for (v = 0; v < g->n; v++)
		if (c->stage_of[v] >= 0 && g->mem[v] >= u0)
			common = gcd64(common, g->mem[v]);
	if (common < u0)
		return common > u0 / 2 ? common : u0;
	/* The largest divisor of common that is at most u0, if it is over u0 / 2. */
	for (k = common / u0 + (common % u0 != 0); k <= 2 * (common / u0 + 1); k++)
		if (common % k == 0 && common / k <= u0)
			return common / k > u0 / 2 ? common / k : u0;
	return u0;
}

/* Measure the groups [gs[g], gs[g+1]) into the slot chain. */
static int build_slot_chain(const struct remat_graph *g, const struct remat_chain *c,
			    const int32_t *gs, int32_t G, int64_t unit, int32_t cap,
			    struct remat_i_rotor_chain *ch, struct remat_error *err)
{
	int32_t *scratch, k;

	REMAT_TRY(remat_i_rotor_chain_alloc(ch, G, err));
	scratch = malloc(sizeof(int32_t) * (2 * (size_t)g->n + 1));
	if (!scratch) {
		remat_i_rotor_chain_release(ch);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
	}
	for (k = 0; k < 2 * g->n; k++)
		scratch[k] = -1;
	for (k = 0; k < G; k++) {
		struct remat_stage st;

		remat_chain_measure(g, c, gs[k], gs[k + 1] - 1, scratch, &st);
		ch->x[k] = k == 0 ? 0 : to_slots(st.x, unit, cap);
		ch->y[k] = to_slots(st.y, unit, cap);
		ch->xb[k] = to_slots(st.xbar, unit, cap);
		ch->fa[k] = to_slots(st.xbar + st.fwd_tmp, unit, cap);
		ch->fah[k] = to_slots(st.xbar + st.fwd_tmp_h, unit, cap);
		ch->fwh[k] = st.fwd_cost_h;
		ch->fo[k] = to_slots(st.y + st.fwd_tmp_ng, unit, cap);
		ch->fi[k] = to_slots(st.fwd_peak_ng_in, unit, cap);
		ch->bp[k] = to_slots(st.bwd_start + st.bwd_tmp, unit, cap);
		ch->d[k] = to_slots(c->grad_at[gs[k]], unit, cap);
		ch->po[k] = to_slots(st.out_mem, unit, cap);
		ch->fw[k] = st.fwd_cost;
		ch->fwng[k] = st.fwd_cost_ng;
		ch->bw[k] = st.bwd_cost;
		ch->nr[k] = (uint8_t)st.norecompute;
	}
	ch->d[G] = 0;
	free(scratch);
	return REMAT_OK;
}

/* Group operations -> stage operations. */
static int ungroup(const struct remat_i_cops *gops, const int32_t *gs,
		   struct remat_i_cops *ops, struct remat_error *err)
{
	int64_t t;
	int32_t s;

	ops->n = 0;
	for (t = 0; t < gops->n; t++) {
		int32_t a = gs[gops->v[t].stage], b = gs[gops->v[t].stage + 1];

		switch (gops->v[t].op) {
		case REMAT_I_FALL:
		case REMAT_I_FHELD:
			for (s = a; s < b; s++)
				REMAT_TRY(remat_i_cops_push(ops, s + 1 == b ? gops->v[t].op
							    : REMAT_I_FALL, s, err));
			break;
		case REMAT_I_FCK:
		case REMAT_I_FNG:
			for (s = a; s < b; s++)
				REMAT_TRY(remat_i_cops_push(ops, s == a ? gops->v[t].op
							    : REMAT_I_FNG, s, err));
			break;
		default:
			for (s = b - 1; s >= a; s--)
				REMAT_TRY(remat_i_cops_push(ops, REMAT_I_BWD, s, err));
		}
	}
	return REMAT_OK;
}

static int rotor_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		      struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_best best;
	struct remat_chain *c = NULL;
	struct remat_i_rotor_chain ch;
	struct remat_i_rotor_table tab;
	struct remat_i_cops gops, prev, ops;
	struct remat_schedule tmp;
	int32_t *gs = NULL, G, k, M, Mtab, m, chosen = -1;
	long slots, max_stages;
	int64_t mtop, unit;
	int rc, tried = 0;

	memset(&ch, 0, sizeof(ch));
	memset(&tab, 0, sizeof(tab));
	remat_best_init(&best);
	remat_i_cops_init(&gops);
	remat_i_cops_init(&prev);
	remat_i_cops_init(&ops);
	remat_schedule_init(&tmp);
	rc = remat_opt_int(req, "slots", 500, 1, 1000000, &slots, err);
	if (rc == REMAT_OK)
		rc = remat_opt_int(req, "max-stages", 200, 1, 100000, &max_stages, err);
	if (rc == REMAT_OK)
		rc = remat_i_chain_start(req, "rotor", &best, &c, err);
	if (rc || !c)
		goto done;
	mtop = req->budget - c->input_mem;
	if (mtop <= 0)
		goto done;

	/* Step 1: groups of neighbouring stages when the chain is long. */
	G = c->n_stages < max_stages ? c->n_stages : (int32_t)max_stages;
	gs = malloc(sizeof(int32_t) * ((size_t)G + 1));
	if (!gs) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	for (k = 0; k <= G; k++)
		gs[k] = (int32_t)((int64_t)k * c->n_stages / G);

	/* Step 2: slots. */
	unit = slot_unit(g, c, mtop, slots);
	M = (int32_t)(mtop / unit);
	Mtab = M + (M + 7) / 8;
	rc = build_slot_chain(g, c, gs, G, unit, Mtab + 1, &ch, err);
	if (rc)
		goto done;

	/* Step 3: the table. */
	rc = remat_i_rotor_solve(&ch, Mtab, &tab, req, err);
	if (rc == REMAT_ECANCELED) {
		/* Keep the no-remat order if it fits; otherwise nothing was found. */
		rc = best.have ? REMAT_OK : REMAT_ENOFIT;
		goto done;
	}
	if (rc)
		goto done;

	/* Steps 4 and 5: internal budgets from the top, each plan simulated. */
	for (m = Mtab; m >= 0; m--) {
		double model = remat_i_rotor_cost(&tab, m);
		int kept = 0;

		if (!isfinite(model))
			break;
		if (best.have && model > best.res.cost * (1 + 1e-12))
			break;
		if (tried >= 256 || (tried > 0 && remat_plan_expired(req)))
			break;
		gops.n = 0;
		rc = remat_i_rotor_backtrack(&ch, &tab, m, &gops, err);
		if (rc)
			goto done;
		if (tried > 0 && remat_i_cops_equal(&gops, &prev))
			continue;
		rc = ungroup(&gops, gs, &ops, err);
		if (rc == REMAT_OK)
			rc = remat_i_chain_offer(req, "rotor", c, &ops, &best, &tmp, NULL, &kept,
						 err);
		if (rc)
			goto done;
		{
			struct remat_i_cops sw = prev;

			prev = gops;
			gops = sw;
		}
		tried++;
		if (kept)
			chosen = m;
	}
	if (req->report)
		snprintf(req->report->note, sizeof(req->report->note),
			 "%d stages in %d groups, %d slots of %lld bytes (table to %d), "
			 "%d plans simulated, internal budget %d", (int)c->n_stages, (int)G,
			 (int)M, (long long)unit, (int)Mtab, tried, (int)chosen);
done:
	if (rc == REMAT_OK)
		rc = remat_best_take(&best, out, err);
	free(gs);
	remat_i_rotor_table_release(&tab);
	remat_i_rotor_chain_release(&ch);
	remat_chain_free(c);
	remat_i_cops_release(&gops);
	remat_i_cops_release(&prev);
	remat_i_cops_release(&ops);
	remat_schedule_release(&tmp);
	remat_best_release(&best);
	return rc;
}

const struct remat_planner remat_planner_rotor = {
	.name = "rotor",
	.summary = "Rotor (Beaumont et al. 2019): optimal dynamic program on the chain view",
	.flags = REMAT_PLANNER_AUTO,
	.options = rotor_options,
	.plan = rotor_plan,
};
