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
 *    stage: nothing to plan (the plan runner offers the no-remat order
 *    whenever the budget covers its peak, so rotor is never worse than
 *    none).  More stages than --max-stages
 *    (default 200), or tables over 1 GiB: neighbouring stages are merged
 *    into groups of equal count, each measured as one stage.
 * 2. Discretise: the budget less the graph's inputs, m_top bytes, is cut
 *    into --slots units (default 500) of unit = ceil(m_top / slots) bytes,
 *    or a divisor of the tensors' common size factor between half that and
 *    that (slot_unit()); every stage size is rounded up to whole units.
 *    Inputs that only the first stage's forward reads count as the
 *    chain's input x_0; the other inputs are subtracted from the budget.
 * 3. Fill Opt(i, l, m), the least cost of running stages i..l forward and
 *    back with their input held outside and m slots, which include the
 *    gradient arriving from stage l+1.  Either stage i runs once (F_all,
 *    then i+1..l with m - xb[i], then B(i)) or its forward is re-run
 *    later: F_ck(i), F_ng(i+1..j-1), then j..l with m - x[j], then i..j-1
 *    with m (less the outputs j..l left behind).  Each option is valid
 *    only when every peak it passes through fits in m.  Two refinements
 *    over Rotor's recurrence, each a variant of the subproblem:
 *    - held: after j..l the checkpoint x[j] is still resident, and i..j-1
 *      may keep it instead of recomputing it (stage j-1 then runs F_held,
 *      which skips its output and what only the output needs).  In a
 *      chain of one node per stage this is exactly the recomputation
 *      Rotor's model wastes.
 *    - release: when nothing after stage i's forward reads x_i (Keras-
 *      style graphs, whose backward reads the next layer's output rather
 *      than its input), x_i may be freed after the stage's last forward
 *      instead of being held to the end of the subproblem.
 *    The tables hold per (i, l, m): plain, min(plain, held), release, and
 *    min(release, release + held); the last two only when some input can
 *    be released.  With them rotor reaches the fixed-order MILP optimum
 *    on the conformance chains and matches an exhaustive search over
 *    persistent schedules on small chains of both backward patterns.
 * 4. Backtrack the whole chain at m slots into F_all / F_held / F_ck /
 *    F_ng / B operations and expand them into a node-level compute order
 *    (src/plan/stage_plan.c); the liveness pass derives the frees.
 * 5. The stage model is an approximation of the node-level simulator
 *    (sizes are rounded, reads across non-adjacent stages of unusual
 *    graphs are modelled coarsely), so the internal budget m is searched:
 *    from slots + slack (an eighth of the slots, to win back what
 *    rounding up loses) downward over every distinct plan, each expanded
 *    and simulated, until the model's cost can no longer beat the best
 *    schedule that fits the real budget (at most 256 simulations).  The
 *    result is always simulator-checked and within budget, or exit 3.
 *
 * Complexity: O(L^3 M / 3) time (twice that with release tables) and
 * O(L^2 M) doubles (twice that) for the tables, L stages and M slots; the
 * table fill relaxes only the part of each row an option can improve.
 * The search is O(M L^2) backtracking plus one expansion and simulation
 * (O(n + recomputations)) per distinct plan.
 *
 * Not guaranteed: optimality beyond the persistent stage model at the
 * slot resolution.  Within it the table is exact: on a chain whose stages
 * each read only their own nodes, their input and the next stage's
 * gradient (or output), and whose sizes are whole slots, rotor's cost is
 * the least of any persistent schedule.  Stages are recomputed whole
 * (Rockmate's finer per-block options are not here); merged groups
 * (--max-stages) lose further options.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/chain.h"
#include "plan/stage_plan.h"
#include "plan/best.h"
#include "planners/rotor.h"

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
	ch->xl = calloc(n, 1);
	if (!ch->xl || !ch->x || !ch->y || !ch->xb || !ch->fa || !ch->fah || !ch->fo || !ch->fi ||
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
	free(ch->xl);
	memset(ch, 0, sizeof(*ch));
}

void remat_i_rotor_table_release(struct remat_i_rotor_table *tab)
{
	int k;

	for (k = 0; k < 4; k++)
		free(tab->t[k]);
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

/* Columns of the table filled together (see remat_i_rotor_solve()). */
#ifndef ROTOR_BLOCK
#define ROTOR_BLOCK 8
#endif

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

/*
 * The four tables, by kind: A, the plain subproblem; S = min(A, H), where
 * H has stage l's output resident at the start (a kept checkpoint); R,
 * the subproblem whose input x_i is resident inside m and freed after
 * stage i's last forward (allowed when nothing later reads x_i: xl[i] =
 * 0); SR = min(R, RH).  Rows of R and SR exist only for stages with
 * xl[i] = 0; for the others R(i, l, m) = A(i, l, m - x_i) (the input just
 * stays) and the lookup is redirected.  lo[] holds each row's first finite
 * entry while the tables fill (NULL in the backtrack, where it only
 * sharpens bounds); zero is a row of M + 1 zeros, the second operand of
 * options with one subproblem.
 */
enum { TAB_A, TAB_S, TAB_R, TAB_SR, N_TABS };

struct dp {
	const struct remat_i_rotor_chain *ch;
	const int64_t *pp;
	double *t[N_TABS];
	int32_t *lo[N_TABS];
	const double *zero;
	int32_t M;
};

enum opt_kind {
	OPT_BASE,     /* i == l: F_all(i) (F_held when held), B(i) */
	OPT_ONCE,     /* F_all(i), stages i+1..l, B(i) */
	OPT_HOLD,     /* F_ck(i), F_ng(i+1..j-1), j..l with x_j held, then i..j-1 */
	OPT_RELEASE   /* the same with x_j freed after its last use in j..l */
};

/* One option: c + a[m - sa] + b[m - sb] for m >= need; subproblems ka, kb. */
struct opt {
	double c;
	const double *a, *b;
	int32_t sa, sb, need, j;
	int kind, ka, kb;
};

/* Row (i, l) of table k with shift s, redirected for inputs that stay. */
static const double *operand(const struct dp *dp, int k, int32_t i, int32_t l,
			     int32_t *s, int32_t *lo)
{
	if ((k == TAB_R || k == TAB_SR) && dp->ch->xl[i]) {
		k = k == TAB_R ? TAB_A : TAB_S;
		*s += dp->ch->x[i];
	}
	*lo = dp->lo[k] ? dp->lo[k][tri(i, l)] : 0;
	return dp->t[k] + tri(i, l) * ((size_t)dp->M + 1);
}

/* Add option o[*n] with operands (ka, i1, l1, sa) and (kb, i2, l2, sb). */
static void add_opt(const struct dp *dp, struct opt *o, int32_t *n, int kind, int32_t j,
		    double c, int32_t need, int ka, int32_t i1, int32_t l1, int32_t sa,
		    int kb, int32_t i2, int32_t l2, int32_t sb)
{
	struct opt *p = &o[*n];
	int32_t lo;

	p->kind = kind;
	p->j = j;
	p->c = c;
	p->ka = ka;
	p->kb = kb;
	p->sa = sa;
	p->sb = sb;
	if (ka >= 0) {
		p->a = operand(dp, ka, i1, l1, &p->sa, &lo);
		need = max32(need, p->sa + lo);
	} else {
		p->a = dp->zero;
	}
	if (kb >= 0) {
		p->b = operand(dp, kb, i2, l2, &p->sb, &lo);
		need = max32(need, p->sb + lo);
	} else {
		p->b = dp->zero;
	}
	need = max32(need, max32(p->sa, p->sb));
	p->need = need;
	if (need <= dp->M)
		(*n)++;
}

/*
 * Every option of subproblem (i, l) of variant (held, rel), in the order
 * the tables and the backtrack both use.  held: stage l's output is
 * resident at the start and counts in m; its first sub-chains may keep it
 * too, and stage l runs F_held.  rel: x_i is resident inside m and freed
 * after stage i's last forward.  The second part i..j-1 of a re-run finds
 * its checkpoint x_j resident when it was held (and may keep it), not
 * when it was released.  Options whose needs exceed M are left out.
 */
static int32_t enum_options(const struct dp *dp, int32_t i, int32_t l, int held,
			    int rel, struct opt *o)
{
	const struct remat_i_rotor_chain *ch = dp->ch;
	int32_t M = dp->M, dl = ch->d[l + 1], yl = held ? ch->y[l] : 0, n = 0, j;
	int32_t xin = rel ? ch->x[i] : 0, ng;
	int plain = held ? TAB_S : TAB_A, rplain = held ? TAB_SR : TAB_R;
	double fws = 0;

	if (i == l) {
		add_opt(dp, o, &n, OPT_BASE, i, (held ? ch->fwh[i] : ch->fw[i]) + ch->bw[i],
			max32(dl + xin + (held ? ch->fah[i] : ch->fa[i]), ch->bp[i]),
			-1, 0, 0, 0, -1, 0, 0, 0);
		return n;
	}
	add_opt(dp, o, &n, OPT_ONCE, i + 1, ch->fw[i] + ch->bw[i],
		max32(dl + yl + xin + ch->fa[i], outs(dp->pp, i + 1, l, M) + ch->bp[i]),
		plain, i + 1, l, ch->xb[i], -1, 0, 0, 0);
	if (ch->nr[i])
		return n;
	ng = ch->fo[i];
	for (j = i + 1; j <= l; j++) {
		int32_t k = j - 1, pj, need;

		if (k > i) {
			if (ch->nr[k])
				break;
			ng = max32(ng, ch->fi[k]);
		}
		fws += ch->fwng[k];
		need = dl + yl + xin + ng;
		if (need > M)
			break;
		pj = outs(dp->pp, j, l, M);
		add_opt(dp, o, &n, OPT_HOLD, j, fws, need, plain, j, l, ch->x[j] + xin,
			rel ? TAB_SR : TAB_S, i, j - 1, pj);
		if (!ch->xl[j])
			add_opt(dp, o, &n, OPT_RELEASE, j, fws, need, rplain, j, l, xin,
				rel ? TAB_R : TAB_A, i, j - 1, pj);
	}
	return n;
}

/*
 * Fill row with the least over the options.  An option is never below its
 * value at m = M (both parts are non-increasing in m), and the row is
 * non-increasing too, so only the prefix of the row still above that
 * floor is relaxed.  Returns the first finite entry.
 */
static int32_t fill_row(const struct dp *dp, struct opt *o, int32_t i, int32_t l,
			int held, int rel, double *row)
{
	int32_t M = dp->M, n = enum_options(dp, i, l, held, rel, o), k, m;

	for (m = 0; m <= M; m++)
		row[m] = INFINITY;
	for (k = 0; k < n; k++) {
		double floor = o[k].c + o[k].a[M - o[k].sa] + o[k].b[M - o[k].sb];
		int32_t a = o[k].need, b = M + 1;

		while (a < b) {
			int32_t mid = a + (b - a) / 2;

			if (row[mid] <= floor)
				b = mid;
			else
				a = mid + 1;
		}
		if (a > o[k].need)
			relax(row, o[k].a, o[k].b, o[k].c, o[k].sa, o[k].sb, o[k].need, a - 1);
	}
	return first_finite(row, M);
}

/* Fill the plain row of (i, l) and its held pair into kinds p and ps. */
static void fill_pair(struct dp *dp, struct opt *o, double *h, int32_t i, int32_t l,
		      int rel, int p, int ps)
{
	int32_t M = dp->M, L = dp->ch->L, m;
	size_t r = tri(i, l), M1 = (size_t)M + 1;
	double *ra = dp->t[p] + r * M1, *rs = dp->t[ps] + r * M1;

	dp->lo[p][r] = fill_row(dp, o, i, l, 0, rel, ra);
	/* Held variant: only a stage followed by another keeps its output. */
	if (l + 1 < L && !dp->ch->plain) {
		fill_row(dp, o, i, l, 1, rel, h);
		for (m = 0; m <= M; m++)
			rs[m] = h[m] < ra[m] ? h[m] : ra[m];
		dp->lo[ps][r] = first_finite(rs, M);
	} else {
		memcpy(rs, ra, M1 * sizeof(double));
		dp->lo[ps][r] = dp->lo[p][r];
	}
}

/* The kind of the whole chain's subproblem: its input is released when it can be. */
static int top_kind(const struct remat_i_rotor_chain *ch)
{
	return ch->x[0] > 0 && !ch->xl[0] ? TAB_R : TAB_A;
}

int remat_i_rotor_solve(const struct remat_i_rotor_chain *ch, int32_t M,
			struct remat_i_rotor_table *tab,
			const struct remat_plan_request *req, struct remat_error *err)
{
	int32_t L = ch->L, i, l, l0;
	size_t M1 = (size_t)M + 1, cells;
	int64_t *pp = NULL;
	double *h = NULL, *zero = NULL;
	struct opt *o = NULL;
	struct dp dp;
	int rc = REMAT_OK, k, ntab = N_TABS;

	memset(tab, 0, sizeof(*tab));
	memset(&dp, 0, sizeof(dp));
	if (L <= 0 || M < 0)
		return REMAT_FAIL(err, REMAT_EINTERNAL, "rotor: empty chain or negative budget");
	/* The release tables only when some stage input can be released. */
	for (i = 0; i < L && ch->xl[i]; i++)
		;
	if (i == L)
		ntab = 2;
	if (remat_i_rotor_table_bytes(L, M) * ntab / 2 > (double)SIZE_MAX / 4)
		return REMAT_FAIL(err, REMAT_ENOMEM, "rotor: table of %d stages x %d slots "
				  "is too large", (int)L, (int)M);
	cells = tri(L - 1, L - 1) + 1;
	for (k = 0; k < ntab; k++) {
		dp.t[k] = malloc(cells * M1 * sizeof(double));
		dp.lo[k] = malloc(cells * sizeof(int32_t));
		if (!dp.t[k] || !dp.lo[k])
			goto nomem;
	}
	h = malloc(M1 * sizeof(double));
	zero = calloc(M1, sizeof(double));
	o = malloc(sizeof(*o) * (2 * (size_t)L + 2));
	pp = malloc(sizeof(int64_t) * ((size_t)L + 1));
	if (!h || !zero || !o || !pp)
		goto nomem;
	pp[0] = 0;
	for (i = 0; i < L; i++)
		pp[i + 1] = pp[i] + ch->po[i];
	dp.ch = ch;
	dp.pp = pp;
	dp.zero = zero;
	dp.M = M;

	/*
	 * (i, l) needs (j, l) for j > i and (i, k) for k < l.  Columns of
	 * ROTOR_BLOCK last stages are filled together, first stage i
	 * downwards, so that the rows (i, k) that every column reads are
	 * fetched once per block instead of once per column: the table fill
	 * is bound by memory traffic, not arithmetic.
	 */
	for (l0 = 0; l0 < L; l0 += ROTOR_BLOCK) {
		int32_t l1 = l0 + ROTOR_BLOCK < L ? l0 + ROTOR_BLOCK : L;

		if (req && remat_plan_expired(req)) {
			rc = REMAT_FAIL(err, REMAT_ECANCELED, "rotor: the time limit passed "
					"while filling the table");
			goto fail;
		}
		for (i = l1 - 1; i >= 0; i--) {
			for (l = i > l0 ? i : l0; l < l1; l++) {
				fill_pair(&dp, o, h, i, l, 0, TAB_A, TAB_S);
				if (ntab > 2 && !ch->xl[i])
					fill_pair(&dp, o, h, i, l, 1, TAB_R, TAB_SR);
			}
		}
	}
	tab->L = L;
	tab->M = M;
	tab->top = top_kind(ch);
	for (k = 0; k < N_TABS; k++) {
		tab->t[k] = dp.t[k];
		dp.t[k] = NULL;
	}
	goto fail;
nomem:
	rc = REMAT_FAIL(err, REMAT_ENOMEM, "rotor: out of memory for a table of "
			"%d stages x %d slots (%.0f MiB)", (int)L, (int)M,
			remat_i_rotor_table_bytes(L, M) * ntab / 2 / 1048576.0);
fail:
	for (k = 0; k < N_TABS; k++) {
		free(dp.t[k]);
		free(dp.lo[k]);
	}
	free(h);
	free(zero);
	free(o);
	free(pp);
	return rc;
}

double remat_i_rotor_cost(const struct remat_i_rotor_table *tab, int32_t m)
{
	if (!tab->t[TAB_A] || m < 0)
		return INFINITY;
	if (m > tab->M)
		m = tab->M;
	return tab->t[tab->top][tri(0, tab->L - 1) * ((size_t)tab->M + 1) + (size_t)m];
}

/* A pending item of the backtrack: a subproblem or an operation to emit. */
struct bt_item {
	int32_t i, l, m;
	int32_t op;        /* an operation on stage i, or -1 - table kind to solve */
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

/* The cheapest option of (i, l) at m slots (index into o), or -1. */
static int32_t best_option(const struct dp *dp, struct opt *o, int32_t i, int32_t l,
			   int32_t m, int held, int rel, double *val)
{
	int32_t n = enum_options(dp, i, l, held, rel, o), k, best = -1;

	*val = INFINITY;
	for (k = 0; k < n; k++) {
		double v;

		if (m < o[k].need)
			continue;
		v = o[k].c + o[k].a[m - o[k].sa] + o[k].b[m - o[k].sb];
		if (v < *val) {
			*val = v;
			best = k;
		}
	}
	return best;
}

int remat_i_rotor_backtrack(const struct remat_i_rotor_chain *ch,
			    const struct remat_i_rotor_table *tab, int32_t m,
			    struct remat_i_cops *ops, struct remat_error *err)
{
	struct bt_stack st = { NULL, 0, 0 };
	struct opt *o = NULL, *oh = NULL;
	int64_t *pp = NULL;
	double *zero = NULL;
	int32_t L = ch->L, i;
	struct dp dp;
	int rc = REMAT_OK, k;

	if (m > tab->M)
		m = tab->M;
	if (!isfinite(remat_i_rotor_cost(tab, m)))
		return REMAT_FAIL(err, REMAT_ENOFIT, "rotor: no persistent schedule fits "
				  "%d slots", (int)m);
	pp = malloc(sizeof(int64_t) * ((size_t)L + 1));
	zero = calloc((size_t)tab->M + 1, sizeof(double));
	o = malloc(sizeof(*o) * (2 * (size_t)L + 2));
	oh = malloc(sizeof(*oh) * (2 * (size_t)L + 2));
	if (!pp || !zero || !o || !oh) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	pp[0] = 0;
	for (i = 0; i < L; i++)
		pp[i + 1] = pp[i] + ch->po[i];
	memset(&dp, 0, sizeof(dp));
	dp.ch = ch;
	dp.pp = pp;
	for (k = 0; k < N_TABS; k++)
		dp.t[k] = tab->t[k];
	dp.zero = zero;
	dp.M = tab->M;
	rc = bt_push(&st, 0, L - 1, m, -1 - tab->top, err);
	while (rc == REMAT_OK && st.n > 0) {
		struct bt_item it = st.v[--st.n];
		const struct opt *c;
		int held = 0, rel, kind, plain;
		int32_t kb, j;
		double va, vh;

		if (it.op >= 0) {
			rc = remat_i_cops_push(ops, it.op, it.i, err);
			continue;
		}
		kind = -1 - it.op;
		if ((kind == TAB_R || kind == TAB_SR) && ch->xl[it.i]) {
			/* The input stays: the plain tables at m - x_i. */
			kind = kind == TAB_R ? TAB_A : TAB_S;
			it.m -= ch->x[it.i];
		}
		rel = kind == TAB_R || kind == TAB_SR;
		kb = best_option(&dp, o, it.i, it.l, it.m, 0, rel, &va);
		c = kb >= 0 ? &o[kb] : NULL;
		if ((kind == TAB_S || kind == TAB_SR) && it.l + 1 < L && !ch->plain) {
			/* Either variant: the held one only when strictly cheaper (as in S). */
			int32_t kh = best_option(&dp, oh, it.i, it.l, it.m, 1, rel, &vh);

			if (kh >= 0 && vh < va) {
				held = 1;
				c = &oh[kh];
			}
		}
		if (!c) {
			rc = REMAT_FAIL(err, REMAT_EINTERNAL, "rotor: backtrack found no option "
					"for stages %d..%d at %d slots", (int)it.i, (int)it.l,
					(int)it.m);
			break;
		}
		plain = held ? TAB_S : TAB_A;
		j = c->j;
		/* Pushed in reverse: popped in execution order. */
		switch (c->kind) {
		case OPT_BASE:
			rc = bt_push(&st, it.i, 0, 0, REMAT_I_BWD, err);
			if (rc == REMAT_OK)
				rc = bt_push(&st, it.i, 0, 0, held ? REMAT_I_FHELD : REMAT_I_FALL,
					     err);
			break;
		case OPT_ONCE:
			rc = bt_push(&st, it.i, 0, 0, REMAT_I_BWD, err);
			if (rc == REMAT_OK)
				rc = bt_push(&st, it.i + 1, it.l, it.m - ch->xb[it.i], -1 - plain,
					     err);
			if (rc == REMAT_OK)
				rc = bt_push(&st, it.i, 0, 0, REMAT_I_FALL, err);
			break;
		default:
			/* The unredirected operand kinds and shifts, as enum_options() set them. */
			if (c->kind == OPT_HOLD) {
				rc = bt_push(&st, it.i, j - 1, it.m - outs(pp, j, it.l, tab->M),
					     -1 - (rel ? TAB_SR : TAB_S), err);
				if (rc == REMAT_OK)
					rc = bt_push(&st, j, it.l, it.m - ch->x[j] -
						     (rel ? ch->x[it.i] : 0), -1 - plain, err);
			} else {
				rc = bt_push(&st, it.i, j - 1, it.m - outs(pp, j, it.l, tab->M),
					     -1 - (rel ? TAB_R : TAB_A), err);
				if (rc == REMAT_OK)
					rc = bt_push(&st, j, it.l, it.m - (rel ? ch->x[it.i] : 0),
						     -1 - (held ? TAB_SR : TAB_R), err);
			}
			for (k = j - 1; k > it.i && rc == REMAT_OK; k--)
				rc = bt_push(&st, k, 0, 0, REMAT_I_FNG, err);
			if (rc == REMAT_OK)
				rc = bt_push(&st, it.i, 0, 0, REMAT_I_FCK, err);
		}
	}
done:
	free(st.v);
	free(pp);
	free(zero);
	free(o);
	free(oh);
	return rc;
}

/* ---- the planner ---- */

static const struct remat_planner_option rotor_options[] = {
	{ "slots", "N", "memory slots the budget is cut into (default 500)" },
	{ "max-stages", "N", "merge neighbouring stages down to N for the table "
	  "(default 200)" },
	{ NULL, NULL, NULL }
};

int32_t remat_i_rotor_to_slots(int64_t bytes, int64_t unit, int32_t cap)
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
int64_t remat_i_rotor_slot_unit(const struct remat_graph *g, const struct remat_chain *c,
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
	/*
	 * The largest divisor of common that is at most u0, if it is over
	 * u0 / 2: common / k for k from ceil(common / u0) up, a few thousand
	 * steps at most (common is no larger than the budget, u0 its share
	 * of one slot).
	 */
	for (k = common / u0 + (common % u0 != 0);
	     k <= 2 * (common / u0 + 1) && k <= 4 * (int64_t)slots + 16; k++)
		if (common % k == 0 && common / k <= u0)
			return common / k > u0 / 2 ? common / k : u0;
	return u0;
}

/*
 * Bytes of the graph's inputs that only the first group's forward reads:
 * the chain's input x_0, which a plan may free after its last use.  The
 * other inputs stay resident (counted outside the table).
 */
int64_t remat_i_rotor_first_input_bytes(const struct remat_graph *g, const struct remat_chain *c,
				 int32_t end)
{
	int64_t x0 = 0;
	int32_t v, k;

	for (v = 0; v < g->n; v++) {
		int only = g->kind[v] == REMAT_KIND_INPUT && !g->is_output[v];

		for (k = g->use_off[v]; k < g->use_off[v + 1] && only; k++) {
			int32_t u = g->use_idx[k];

			if (c->stage_of[u] >= 0 && (c->is_bwd[u] || c->stage_of[u] >= end))
				only = 0;
		}
		if (only)
			x0 += g->mem[v];
	}
	return x0;
}

int remat_i_rotor_levels(const struct remat_graph *g, const struct remat_chain *c,
			 int64_t budget, int32_t end, long slots,
			 struct remat_i_rotor_levels *lv)
{
	lv->x0 = remat_i_rotor_first_input_bytes(g, c, end);
	lv->mtop = budget - (c->input_mem - lv->x0);
	if (lv->mtop <= 0)
		return 0;
	if (lv->unit == 0)
		lv->unit = remat_i_rotor_slot_unit(g, c, lv->mtop, slots);
	lv->M = (int32_t)(lv->mtop / lv->unit);
	lv->Mtab = lv->M + (lv->M + 7) / 8;
	/*
	 * The cuts view counts its passing values as resident the whole step
	 * (input_mem), which over-counts them after their gather: let the
	 * internal budget reach that far above too (at most M slots more, so
	 * the table stays within twice its size); the simulator judges.
	 */
	if (c->passing_mem > 0) {
		int64_t extra = c->passing_mem / lv->unit;

		lv->Mtab += (int32_t)(extra < lv->M ? extra : lv->M);
	}
	return 1;
}

/* Measure the groups [gs[g], gs[g+1]) into the slot chain. */
int remat_i_rotor_build_slot_chain(const struct remat_graph *g, const struct remat_chain *c,
			    const int32_t *gs, int32_t G, int64_t x0, int64_t unit, int32_t cap,
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
		ch->x[k] = remat_i_rotor_to_slots(k == 0 ? x0 : st.x, unit, cap);
		ch->y[k] = remat_i_rotor_to_slots(st.y, unit, cap);
		ch->xb[k] = remat_i_rotor_to_slots(st.xbar, unit, cap);
		ch->fa[k] = remat_i_rotor_to_slots(st.xbar + st.fwd_tmp, unit, cap);
		ch->fah[k] = remat_i_rotor_to_slots(st.xbar + st.fwd_tmp_h, unit, cap);
		ch->fwh[k] = st.fwd_cost_h;
		ch->fo[k] = remat_i_rotor_to_slots(st.y + st.fwd_tmp_ng, unit, cap);
		ch->fi[k] = remat_i_rotor_to_slots(st.fwd_peak_ng_in, unit, cap);
		ch->bp[k] = remat_i_rotor_to_slots(st.bwd_start + st.bwd_tmp, unit, cap);
		ch->d[k] = remat_i_rotor_to_slots(c->grad_at[gs[k]], unit, cap);
		ch->po[k] = remat_i_rotor_to_slots(st.out_mem, unit, cap);
		ch->fw[k] = st.fwd_cost;
		ch->fwng[k] = st.fwd_cost_ng;
		ch->bw[k] = st.bwd_cost;
		ch->nr[k] = (uint8_t)st.norecompute;
		ch->xl[k] = (uint8_t)(k == 0 ? x0 == 0 : st.input_live);
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

/* Stages in the first group when n stages are cut into G groups. */
static int32_t gs_end_first(int32_t n, int32_t G)
{
	return (int32_t)((int64_t)n / G);
}

/* The tables may take at most this many bytes; longer chains get fewer groups. */
#define ROTOR_TABLE_CAP ((double)(1u << 30))

static int rotor_plan_view(const struct remat_plan_request *req, struct remat_schedule *out,
		      struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_i_chain_run run;
	const struct remat_chain *c;
	struct remat_i_rotor_chain ch;
	struct remat_i_rotor_table tab;
	struct remat_i_cops gops, prev, ops;
	int32_t *gs = NULL, G, k, m, chosen = -1;
	long slots, max_stages;
	struct remat_i_rotor_levels lv = { 0, 0, 0, 0, 0 };
	int rc, tried = 0;

	memset(&ch, 0, sizeof(ch));
	memset(&tab, 0, sizeof(tab));
	remat_i_cops_init(&gops);
	remat_i_cops_init(&prev);
	remat_i_cops_init(&ops);
	memset(&run, 0, sizeof(run));
	rc = remat_opt_int(req, "slots", 500, 1, 1000000, &slots, err);
	if (rc == REMAT_OK)
		rc = remat_opt_int(req, "max-stages", 200, 1, 100000, &max_stages, err);
	if (rc)
		return rc;
	rc = remat_i_chain_run_start(&run, req, "rotor", err);
	if (rc || !run.chain)
		goto done;
	c = run.chain;

	/* Step 2's slot count first: it bounds how many groups the tables allow. */
	G = c->n_stages < max_stages ? c->n_stages : (int32_t)max_stages;
	if (!remat_i_rotor_levels(g, c, req->budget, gs_end_first(c->n_stages, G), slots, &lv))
		goto done;
	while (G > 1 && 2 * remat_i_rotor_table_bytes(G, lv.Mtab) > ROTOR_TABLE_CAP)
		G = G * 3 / 4;
	/* In the same unit: a larger first group only adds to x0 and mtop. */
	if (!remat_i_rotor_levels(g, c, req->budget, gs_end_first(c->n_stages, G), slots, &lv))
		goto done;

	/* Step 1: groups of neighbouring stages when the chain is long. */
	gs = malloc(sizeof(int32_t) * ((size_t)G + 1));
	if (!gs) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto done;
	}
	for (k = 0; k <= G; k++)
		gs[k] = (int32_t)((int64_t)k * c->n_stages / G);
	rc = remat_i_rotor_build_slot_chain(g, c, gs, G, lv.x0, lv.unit, lv.Mtab + 1, &ch, err);
	if (rc)
		goto done;

	/* Step 3: the tables. */
	rc = remat_i_rotor_solve(&ch, lv.Mtab, &tab, req, err);
	if (rc == REMAT_ECANCELED) {
		/* Keep the no-remat order if it fits. */
		rc = run.best.have ? REMAT_OK
			: REMAT_FAIL(err, REMAT_ENOFIT, "planner 'rotor': the time limit passed "
				     "before its table of %d stages x %d slots was filled, and "
				     "the no-remat order does not fit", (int)G, (int)lv.Mtab);
		goto done;
	}
	if (rc)
		goto done;

	/* Steps 4 and 5: internal budgets from the top, each plan simulated. */
	for (m = lv.Mtab; m >= 0; m--) {
		double model = remat_i_rotor_cost(&tab, m);
		int kept = 0;

		if (!isfinite(model))
			break;
		if (run.best.have && model > run.best.res.cost * (1 + 1e-12))
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
			rc = remat_i_chain_run_offer(&run, &ops, &kept, err);
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
			 (int)lv.M, (long long)lv.unit, (int)lv.Mtab, tried, (int)chosen);
done:
	free(gs);
	remat_i_rotor_table_release(&tab);
	remat_i_rotor_chain_release(&ch);
	remat_i_cops_release(&gops);
	remat_i_cops_release(&prev);
	remat_i_cops_release(&ops);
	return remat_i_chain_run_finish(&run, rc, out, err);
}

static int rotor_plan(const struct remat_plan_request *req, struct remat_schedule *out,
		struct remat_error *err)
{
	return remat_i_chain_views(req, "rotor", rotor_plan_view, out, err);
}

const struct remat_planner remat_i_planner_rotor = {
	.name = "rotor",
	.summary = "Rotor (Beaumont et al. 2019): optimal dynamic program on the chain view",
	.flags = REMAT_PLANNER_AUTO,
	.options = rotor_options,
	.plan = rotor_plan,
};
