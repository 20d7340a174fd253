/*
 * interval_pass.c - hold or compute again, in a fixed order, as one MILP;
 * see interval_pass.h.
 *
 * 1. Stages.  Stage t ends with the schedule's t-th compute step, of
 *    sigma_t (its first computation, or one again).  pos[v] is the stage
 *    of v's first computation, -1 for an input (resident before stage 0).
 *    A stage per step, not per first computation: the order search's
 *    replays bring a value back with its missing ancestors, up to 30
 *    computations before one first computation on random-layered-n1000,
 *    and a row that counted them all at once put the schedule itself
 *    over the budget there.
 * 2. Where v can come back, C(v): the stages of its users' first
 *    computations and those where the schedule computes it again (none
 *    for inputs and "recompute": false nodes).  Its events E(v): pos[v],
 *    its users' stages and their C, C(v), and the last stage for an
 *    output.  Columns: R[t,v] for t in C(v) (cost(v)); H[v,i] for each
 *    pair of consecutive events e_i < e_(i+1): v held from the end of
 *    stage e_i into stage e_(i+1) (no cost).  v is present in stage t, an
 *    event, when H[v, i-1] (e_i = t) or R[t,v].
 * 3. Rows: H[v,i] <= H[v,i-1] + R[e_i,v] (held only when there); every
 *    input of a first computation present; every input of R[t,c] present
 *    when R[t,c]; an output present in the last stage; and the memory of
 *    stage t: what is held into it, plus everything computed in it with
 *    its workspace, at once (so a point of the model fits wherever its
 *    rows do) <= the budget.  What is held into stage t is a column
 *    L[t], kept by balance rows: L[t] = L[t-1] + mem of the segments
 *    held from stage t-1 on - mem of those that ended in stage t-1.
 *    Two nonzeros per segment, where a sum in each memory row had one
 *    per stage the segment spans.
 * 4. The schedule's own point: R from its computations again, H[v,i]
 *    when the next time the schedule touches v from stage e_(i+1) on is
 *    a read (or, for an output, not a computation): the compute-only
 *    liveness of remat/sim.h, under which each memory row is exactly the
 *    memory while sigma_t runs, so the point fits.  (Should a row not
 *    hold, it is relaxed to the point's value and nothing the point does
 *    not hold or compute there may be added; the test suite checks that
 *    this never happens.)
 * 5. CBC from that point until the deadline, without its preprocessing
 *    (lns.c, issue 36: CBC 2.10.8 can crash when its clock stops a
 *    preprocessed model solved from a start).
 * 6. The answer: each stage computes its R in stage order (inputs before
 *    users), skipping values held into it, then sigma_t when it is a
 *    first computation; the frees are the compute-only ones
 *    (remat_liveness), as early as the computes allow.  Kept when the
 *    simulator finds it valid, within the budget and cheaper.
 *
 * Size: columns sum |C(v)| + sum |E(v)| + T (the pass is not tried above
 * max_cols columns, or an estimate of over max_nnz nonzeros).  On random-layered-n1000 at
 * 70% (5,875 edges, the plan's 1,148 compute steps) 30,647 columns,
 * 66,233 rows and 190,585 nonzeros; with the held terms summed in each
 * memory row instead of L, 671,505 nonzeros, and CBC found nothing
 * cheaper in 40 s, where it now finds -2.66% (bench/RESULTS.md, the
 * nineteenth session).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/needed.h"
#include "plan/interval_pass.h"
#include "remat/sim.h"
#include "solver/milp.h"

/* The solve's time when neither the caller nor the request sets a deadline. */
#define INTERVAL_SECONDS 30.0

struct ip {
	const struct remat_graph *g;
	int32_t T;
	int32_t *sigma, *pos;         /* [T]: the stage's compute; [n]: first stage,
					 -1 input, -2 not in the model */
	uint8_t *first;               /* [T] sigma_t's first computation */
	int32_t *c_off, *c_st, *rcol; /* C(v) as CSR (sorted), R's columns */
	int32_t *e_off, *e_st, *hcol; /* E(v) as CSR (sorted), H's columns (segment i) */
	int32_t *ag_t, *ag_v, nag;    /* the schedule's computations again */
	struct remat_i_milp m;
};

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* Sort and dedupe a[0..n), return the new length. */
static int32_t uniq(int32_t *a, int32_t n)
{
	int32_t i, k = 0;

	qsort(a, (size_t)n, sizeof(int32_t), cmp_i32);
	for (i = 0; i < n; i++)
		if (k == 0 || a[k - 1] != a[i])
			a[k++] = a[i];
	return k;
}

/* The first index in the sorted a[lo..hi) whose entry is at least t (hi: none). */
static int32_t lower_bound(const int32_t *a, int32_t lo, int32_t hi, int32_t t)
{
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;

		if (a[mid] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index of t in the sorted a[lo..hi), or -1. */
static int32_t find(const int32_t *a, int32_t lo, int32_t hi, int32_t t)
{
	int32_t k = lower_bound(a, lo, hi, t);

	return k < hi && a[k] == t ? k : -1;
}

static int32_t rcol_at(const struct ip *p, int32_t v, int32_t t)
{
	int32_t k = find(p->c_st, p->c_off[v], p->c_off[v + 1], t);

	return k >= 0 ? p->rcol[k] : -1;
}

/* Add "v present in stage t" (t an event of v) to the open row. */
static int add_present(struct ip *p, int32_t v, int32_t t, struct remat_error *err)
{
	int32_t k = find(p->e_st, p->e_off[v], p->e_off[v + 1], t), r;

	if (k < 0)
		return REMAT_FAIL(err, REMAT_EINTERNAL, "interval pass: stage %d is no event "
				  "of node %d", t, v);
	if (k > p->e_off[v])
		REMAT_TRY(remat_i_milp_row_add(&p->m, p->hcol[k - 1], 1, err));
	r = rcol_at(p, v, t);
	if (r >= 0)
		REMAT_TRY(remat_i_milp_row_add(&p->m, r, 1, err));
	return REMAT_OK;
}

/*
 * Steps 1 and 2.  REMAT_ENOFIT when s does not map.  The lists are built
 * in scratch arrays sized by the graph's edges.
 */
static int build_sets(struct ip *p, const struct remat_schedule *s, struct remat_error *err)
{
	const struct remat_graph *g = p->g;
	uint8_t *need = malloc((size_t)g->n + 1);
	int32_t *last = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	int32_t v, t = 0, k;
	int64_t i, total, cap = 0;
	int rc = REMAT_OK;

	for (i = 0; i < s->n; i++)
		cap += s->steps[i].op == REMAT_OP_COMPUTE;
	p->sigma = malloc(sizeof(int32_t) * ((size_t)cap + 1));
	p->first = malloc((size_t)cap + 1);
	p->pos = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	p->ag_t = malloc(sizeof(int32_t) * ((size_t)s->n + 1));
	p->ag_v = malloc(sizeof(int32_t) * ((size_t)s->n + 1));
	p->c_off = calloc((size_t)g->n + 1, sizeof(int32_t));
	p->e_off = calloc((size_t)g->n + 1, sizeof(int32_t));
	if (!need || !last || !p->sigma || !p->first || !p->pos || !p->ag_t || !p->ag_v || !p->c_off ||
	    !p->e_off) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for the interval pass");
		goto done;
	}
	remat_i_needed(g, need);
	for (v = 0; v < g->n; v++)
		p->pos[v] = g->kind[v] == REMAT_KIND_INPUT && need[v] ? -1 : -2;
	/* Step 1: a stage per compute step. */
	for (i = 0; i < s->n; i++) {
		if (s->steps[i].op != REMAT_OP_COMPUTE)
			continue;
		v = s->steps[i].node;
		if (p->pos[v] == -1) {
			rc = REMAT_ENOFIT; /* an input computed: not a valid start */
			goto done;
		}
		p->sigma[t] = v;
		p->first[t] = p->pos[v] == -2;
		if (p->first[t]) {
			p->pos[v] = t;
		} else {
			p->ag_t[p->nag] = t;
			p->ag_v[p->nag++] = v;
		}
		t++;
	}
	p->T = t;
	for (v = 0; v < g->n; v++)
		if (need[v] && p->pos[v] == -2) {
			rc = REMAT_ENOFIT; /* a needed node never computed: not a valid start */
			goto done;
		}
	/* Step 2: C(v), counted, then filled, then sorted. */
	total = 0;
	for (v = 0; v < g->n; v++) {
		int64_t c = 0;

		if (p->pos[v] >= 0 && g->recompute[v])
			for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
				c += p->pos[g->use_idx[k]] >= 0;
		p->c_off[v + 1] = (int32_t)c;
		total += c;
	}
	for (k = 0; k < p->nag; k++)
		p->c_off[p->ag_v[k] + 1]++;
	total += p->nag;
	for (v = 0; v < g->n; v++)
		p->c_off[v + 1] += p->c_off[v];
	p->c_st = malloc(sizeof(int32_t) * ((size_t)total + 1));
	p->rcol = malloc(sizeof(int32_t) * ((size_t)total + 1));
	if (!p->c_st || !p->rcol) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for the interval pass");
		goto done;
	}
	for (v = 0; v < g->n; v++) {
		int32_t at = p->c_off[v];

		if (p->pos[v] >= 0 && g->recompute[v])
			for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
				if (p->pos[g->use_idx[k]] >= 0)
					p->c_st[at++] = p->pos[g->use_idx[k]];
		last[v] = at; /* next free slot */
	}
	for (k = 0; k < p->nag; k++)
		p->c_st[last[p->ag_v[k]]++] = p->ag_t[k];
	/* Compact each list after sorting: keep the offsets dense. */
	{
		int32_t w = 0;

		for (v = 0; v < g->n; v++) {
			int32_t a = p->c_off[v], len = uniq(p->c_st + a, last[v] - a);

			memmove(p->c_st + w, p->c_st + a, sizeof(int32_t) * (size_t)len);
			p->c_off[v] = w;
			w += len;
		}
		p->c_off[g->n] = w;
	}
	/* E(v): pos, users' stages and their C, C(v), the last stage for an output. */
	total = 0;
	for (v = 0; v < g->n; v++) {
		int64_t c = 0;

		if (p->pos[v] == -2)
			continue;
		c = 2 + (p->c_off[v + 1] - p->c_off[v]);
		for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
			int32_t u = g->use_idx[k];

			if (p->pos[u] >= 0)
				c += 1 + (p->c_off[u + 1] - p->c_off[u]);
		}
		total += c;
		last[v] = (int32_t)c;
	}
	p->e_st = malloc(sizeof(int32_t) * ((size_t)total + 1));
	p->hcol = malloc(sizeof(int32_t) * ((size_t)total + 1));
	if (!p->e_st || !p->hcol) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for the interval pass");
		goto done;
	}
	{
		int32_t w = 0;

		for (v = 0; v < g->n; v++) {
			int32_t a = w, j;

			p->e_off[v] = w;
			if (p->pos[v] == -2)
				continue;
			p->e_st[w++] = p->pos[v];
			for (j = p->c_off[v]; j < p->c_off[v + 1]; j++)
				p->e_st[w++] = p->c_st[j];
			for (k = g->use_off[v]; k < g->use_off[v + 1]; k++) {
				int32_t u = g->use_idx[k];

				if (p->pos[u] < 0)
					continue;
				p->e_st[w++] = p->pos[u];
				for (j = p->c_off[u]; j < p->c_off[u + 1]; j++)
					p->e_st[w++] = p->c_st[j];
			}
			if (g->is_output[v] && p->pos[v] < p->T - 1)
				p->e_st[w++] = p->T - 1;
			w = a + uniq(p->e_st + a, w - a);
		}
		p->e_off[g->n] = w;
	}
done:
	free(need);
	free(last);
	return rc;
}

/* Step 3 (and 4's start point in x0, grown with the columns). */
static int build_model(struct ip *p, const struct remat_schedule *s, int64_t budget,
		       int32_t max_cols, int64_t max_nnz, double **x0p, int *too_big, int32_t *relaxed,
		       struct remat_error *err)
{
	const struct remat_graph *g = p->g;
	struct remat_i_milp *m = &p->m;
	int64_t nnz, *mcnt = NULL, *moff = NULL, *boff = NULL, i;
	int32_t *mcol = NULL, *bcol = NULL, *toff = NULL, *tk = NULL;
	uint8_t *tread = NULL;
	double *mval = NULL, *bval = NULL, *x0 = NULL;
	int32_t v, t, k, j, ncol, lcol0;
	int rc = REMAT_OK;

	*too_big = 0;
	/*
	 * The size: R and H columns; the nonzeros of the rows below, at most
	 * 5 per H (3 in "held only when there", 2 balance terms), 2 per R
	 * (a memory term, a term in "held only when there"), 3 per L (2
	 * balance terms, a memory term) and 3 per input row.
	 */
	ncol = p->c_off[g->n];
	nnz = 3 * (int64_t)p->T + 2 * (int64_t)p->c_off[g->n];
	for (v = 0; v < g->n; v++) {
		if (p->e_off[v + 1] > p->e_off[v])
			ncol += p->e_off[v + 1] - p->e_off[v] - 1;
		if (p->pos[v] >= 0)
			nnz += 3 * (int64_t)(g->in_off[v + 1] - g->in_off[v]) *
			       (1 + p->c_off[v + 1] - p->c_off[v]);
	}
	nnz += 5 * (int64_t)(ncol - p->c_off[g->n]);
	if (ncol > max_cols || nnz > max_nnz) {
		*too_big = 1;
		return REMAT_OK;
	}
	/* Columns: R, then H. */
	for (v = 0; v < g->n; v++)
		for (k = p->c_off[v]; k < p->c_off[v + 1]; k++)
			REMAT_TRY(remat_i_milp_add_col(m, 0, 1, g->cost[v], 1, &p->rcol[k], err));
	for (v = 0; v < g->n; v++)
		for (k = p->e_off[v]; k + 1 < p->e_off[v + 1]; k++)
			REMAT_TRY(remat_i_milp_add_col(m, 0, 1, 0, 1, &p->hcol[k], err));
	/* Held only when there. */
	for (v = 0; v < g->n; v++)
		for (k = p->e_off[v] + 1; k + 1 < p->e_off[v + 1]; k++) {
			int32_t r = rcol_at(p, v, p->e_st[k]);

			remat_i_milp_row_begin(m);
			REMAT_TRY(remat_i_milp_row_add(m, p->hcol[k], 1, err));
			REMAT_TRY(remat_i_milp_row_add(m, p->hcol[k - 1], -1, err));
			if (r >= 0)
				REMAT_TRY(remat_i_milp_row_add(m, r, -1, err));
			REMAT_TRY(remat_i_milp_row_end(m, -HUGE_VAL, 0, err));
		}
	/* Inputs present at first computations and at computations again. */
	for (v = 0; v < g->n; v++) {
		if (p->pos[v] < 0)
			continue;
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			remat_i_milp_row_begin(m);
			REMAT_TRY(add_present(p, g->in_idx[k], p->pos[v], err));
			REMAT_TRY(remat_i_milp_row_end(m, 1, HUGE_VAL, err));
		}
		for (j = p->c_off[v]; j < p->c_off[v + 1]; j++)
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
				remat_i_milp_row_begin(m);
				REMAT_TRY(add_present(p, g->in_idx[k], p->c_st[j], err));
				REMAT_TRY(remat_i_milp_row_add(m, p->rcol[j], -1, err));
				REMAT_TRY(remat_i_milp_row_end(m, 0, HUGE_VAL, err));
			}
	}
	for (v = 0; v < g->n; v++)
		if (g->is_output[v] && p->pos[v] != -2 && p->pos[v] < p->T - 1) {
			remat_i_milp_row_begin(m);
			REMAT_TRY(add_present(p, v, p->T - 1, err));
			REMAT_TRY(remat_i_milp_row_end(m, 1, HUGE_VAL, err));
		}
	/* L[t]: what is held into stage t (the balance rows below). */
	lcol0 = m->ncols;
	for (t = 0; t < p->T; t++)
		REMAT_TRY(remat_i_milp_add_col(m, 0, HUGE_VAL, 0, 0, NULL, err));
	/* Memory rows' R terms: count them per stage, fill, emit. */
	mcnt = calloc((size_t)p->T + 1, sizeof(int64_t));
	moff = calloc((size_t)p->T + 2, sizeof(int64_t));
	x0 = calloc((size_t)m->ncols + 1, sizeof(double));
	if (!mcnt || !moff || !x0) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for the interval pass");
		goto done;
	}
	for (v = 0; v < g->n; v++)
		for (k = p->c_off[v]; k < p->c_off[v + 1]; k++)
			mcnt[p->c_st[k]]++;
	for (t = 0; t < p->T; t++)
		moff[t + 1] = moff[t] + mcnt[t];
	mcol = malloc(sizeof(int32_t) * ((size_t)moff[p->T] + 1));
	mval = malloc(sizeof(double) * ((size_t)moff[p->T] + 1));
	if (!mcol || !mval) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for the interval pass");
		goto done;
	}
	memset(mcnt, 0, sizeof(int64_t) * ((size_t)p->T + 1));
	for (v = 0; v < g->n; v++)
		for (k = p->c_off[v]; k < p->c_off[v + 1]; k++) {
			t = p->c_st[k];
			mcol[moff[t] + mcnt[t]] = p->rcol[k];
			mval[moff[t] + mcnt[t]++] = (double)(g->mem[v] + g->workspace[v]);
		}
	/*
	 * Step 4: the start's point.  Stage t begins at its first compute step
	 * (tbeg, in compute steps); each node's touches (compute or read) in
	 * step order.
	 */
	for (k = 0; k < p->nag; k++)
		x0[rcol_at(p, p->ag_v[k], p->ag_t[k])] = 1;
	{
		int64_t nt = 0, c = 0;

		for (i = 0; i < s->n; i++)
			if (s->steps[i].op == REMAT_OP_COMPUTE)
				nt += 1 + g->in_off[s->steps[i].node + 1] - g->in_off[s->steps[i].node];
		toff = calloc((size_t)g->n + 2, sizeof(int32_t));
		tk = malloc(sizeof(int32_t) * ((size_t)nt + 1));
		tread = malloc((size_t)nt + 1);
		if (!toff || !tk || !tread) {
			rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for the interval pass");
			goto done;
		}
		for (i = 0; i < s->n; i++) {
			if (s->steps[i].op != REMAT_OP_COMPUTE)
				continue;
			v = s->steps[i].node;
			toff[v + 2]++;
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
				toff[g->in_idx[k] + 2]++;
		}
		for (v = 0; v < g->n; v++)
			toff[v + 2] += toff[v + 1];
		/* toff[v + 1] is now v's start; fill, advancing it. */
		for (i = 0; i < s->n; i++) {
			if (s->steps[i].op != REMAT_OP_COMPUTE)
				continue;
			v = s->steps[i].node;
			tk[toff[v + 1]] = (int32_t)c;
			tread[toff[v + 1]++] = 0;
			for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
				int32_t u = g->in_idx[k];

				tk[toff[u + 1]] = (int32_t)c;
				tread[toff[u + 1]++] = 1;
			}
			c++;
		}
		/* toff[v] is now v's start, toff[v + 1] its end. */
		for (v = 0; v < g->n; v++)
			for (k = p->e_off[v]; k + 1 < p->e_off[v + 1]; k++) {
				int32_t at = lower_bound(tk, toff[v], toff[v + 1], p->e_st[k + 1]);

				if (at < toff[v + 1] ? tread[at] : g->is_output[v])
					x0[p->hcol[k]] = 1;
			}
	}
	/*
	 * The balance rows (step 3), L[t] - L[t-1] - (segments held into t
	 * from stage t-1) + (segments that ended in stage t-1) = 0; the
	 * start's L from the same differences.
	 */
	for (v = 0; v < g->n; v++)
		for (k = p->e_off[v]; k + 1 < p->e_off[v + 1]; k++)
			if (x0[p->hcol[k]] > 0.5) {
				x0[lcol0 + p->e_st[k] + 1] += (double)g->mem[v];
				if (p->e_st[k + 1] + 1 < p->T)
					x0[lcol0 + p->e_st[k + 1] + 1] -= (double)g->mem[v];
			}
	for (t = 1; t < p->T; t++)
		x0[lcol0 + t] += x0[lcol0 + t - 1];
	boff = calloc((size_t)p->T + 3, sizeof(int64_t));
	if (!boff) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for the interval pass");
		goto done;
	}
	for (v = 0; v < g->n; v++)
		for (k = p->e_off[v]; k + 1 < p->e_off[v + 1]; k++) {
			boff[p->e_st[k] + 3]++; /* stage e + 1's count in boff[e + 3] */
			if (p->e_st[k + 1] + 1 < p->T)
				boff[p->e_st[k + 1] + 3]++;
		}
	for (t = 0; t < p->T; t++)
		boff[t + 2] += boff[t + 1];
	bcol = malloc(sizeof(int32_t) * ((size_t)boff[p->T + 1] + 1));
	bval = malloc(sizeof(double) * ((size_t)boff[p->T + 1] + 1));
	if (!bcol || !bval) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for the interval pass");
		goto done;
	}
	/* boff[t + 1] is now stage t's start; fill, advancing it to its end. */
	for (v = 0; v < g->n; v++)
		for (k = p->e_off[v]; k + 1 < p->e_off[v + 1]; k++) {
			t = p->e_st[k] + 1;
			bcol[boff[t + 1]] = p->hcol[k];
			bval[boff[t + 1]++] = -(double)g->mem[v];
			t = p->e_st[k + 1] + 1;
			if (t < p->T) {
				bcol[boff[t + 1]] = p->hcol[k];
				bval[boff[t + 1]++] = (double)g->mem[v];
			}
		}
	for (t = 0; t < p->T && rc == REMAT_OK; t++) {
		remat_i_milp_row_begin(m);
		rc = remat_i_milp_row_add(m, lcol0 + t, 1, err);
		if (rc == REMAT_OK && t > 0)
			rc = remat_i_milp_row_add(m, lcol0 + t - 1, -1, err);
		for (i = boff[t]; i < boff[t + 1] && rc == REMAT_OK; i++)
			rc = remat_i_milp_row_add(m, bcol[i], bval[i], err);
		if (rc == REMAT_OK)
			rc = remat_i_milp_row_end(m, 0, 0, err);
	}
	if (rc)
		goto done;
	for (t = 0; t < p->T; t++) {
		double a = 0, rhs = (double)budget;

		if (p->first[t])
			rhs -= (double)g->mem[p->sigma[t]] + (double)g->workspace[p->sigma[t]];

		a = x0[lcol0 + t];
		for (i = moff[t]; i < moff[t + 1]; i++)
			a += mval[i] * x0[mcol[i]];
		remat_i_milp_row_begin(m);
		rc = remat_i_milp_row_add(m, lcol0 + t, 1, err);
		for (i = moff[t]; i < moff[t + 1] && rc == REMAT_OK; i++)
			rc = remat_i_milp_row_add(m, mcol[i], mval[i], err);
		if (rc == REMAT_OK)
			rc = remat_i_milp_row_end(m, -HUGE_VAL, a > rhs ? a : rhs, err);
		if (rc)
			goto done;
		/*
		 * Relaxed to the start's value: nothing the start does not hold
		 * or compute there may be added (the slack is the start's frees
		 * inside the stage, which the row does not see).
		 */
		if (a > rhs) {
			++*relaxed;
			for (i = moff[t]; i < moff[t + 1]; i++)
				if (x0[mcol[i]] < 0.5)
					m->cup[mcol[i]] = 0;
			for (v = 0; v < g->n; v++)
				for (k = p->e_off[v]; k + 1 < p->e_off[v + 1]; k++)
					if (p->e_st[k] < t && t <= p->e_st[k + 1] &&
					    x0[p->hcol[k]] < 0.5)
						m->cup[p->hcol[k]] = 0;
		}
	}
	*x0p = x0;
	x0 = NULL;
done:
	free(mcnt);
	free(moff);
	free(mcol);
	free(mval);
	free(boff);
	free(bcol);
	free(bval);
	free(toff);
	free(tk);
	free(tread);
	free(x0);
	return rc;
}

/* Step 6: the answer's compute steps, R in stage order, then sigma_t. */
static int answer(const struct ip *p, const double *x, struct remat_schedule *order,
		  struct remat_error *err)
{
	const struct remat_graph *g = p->g;
	int32_t *cnt = calloc((size_t)p->T + 2, sizeof(int32_t)), *at = NULL, v, k, t;
	int rc = REMAT_OK;

	if (!cnt)
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for the interval pass");
	/* R[t,v] taken, and v not held into t: counted per stage, then listed. */
	for (v = 0; v < g->n; v++)
		for (k = p->c_off[v]; k < p->c_off[v + 1]; k++) {
			int32_t e = find(p->e_st, p->e_off[v], p->e_off[v + 1], p->c_st[k]);

			if (x[p->rcol[k]] > 0.5 && !(e > p->e_off[v] && x[p->hcol[e - 1]] > 0.5))
				cnt[p->c_st[k] + 1]++;
		}
	for (t = 0; t < p->T; t++)
		cnt[t + 1] += cnt[t];
	at = malloc(sizeof(int32_t) * ((size_t)cnt[p->T] + 1));
	if (!at) {
		free(cnt);
		return REMAT_FAIL(err, REMAT_ENOMEM, "out of memory for the interval pass");
	}
	/* Filled in node order per stage; sorted by stage position below. */
	for (v = 0; v < g->n; v++)
		for (k = p->c_off[v]; k < p->c_off[v + 1]; k++) {
			int32_t e = find(p->e_st, p->e_off[v], p->e_off[v + 1], p->c_st[k]);

			if (x[p->rcol[k]] > 0.5 && !(e > p->e_off[v] && x[p->hcol[e - 1]] > 0.5))
				at[cnt[p->c_st[k]]++] = p->pos[v];
		}
	order->n = 0;
	for (t = 0, k = 0; t < p->T && rc == REMAT_OK; t++) {
		int32_t end = cnt[t], j;

		qsort(at + k, (size_t)(end - k), sizeof(int32_t), cmp_i32);
		for (j = k; j < end && rc == REMAT_OK; j++)
			rc = remat_schedule_push(order, REMAT_OP_COMPUTE, p->sigma[at[j]], err);
		if (rc == REMAT_OK && p->first[t])
			rc = remat_schedule_push(order, REMAT_OP_COMPUTE, p->sigma[t], err);
		k = end;
	}
	free(cnt);
	free(at);
	return rc;
}

static void ip_release(struct ip *p)
{
	free(p->sigma);
	free(p->first);
	free(p->pos);
	free(p->c_off);
	free(p->c_st);
	free(p->rcol);
	free(p->e_off);
	free(p->e_st);
	free(p->hcol);
	free(p->ag_t);
	free(p->ag_v);
	remat_i_milp_release(&p->m);
}

int remat_i_interval_pass(const struct remat_plan_request *req, const struct remat_schedule *s,
			  double deadline, int32_t max_cols, int64_t max_nnz,
			  struct remat_schedule *out, int *kept,
			  struct remat_i_interval_stats *st, struct remat_error *err)
{
	struct remat_i_interval_stats local;
	struct remat_i_milp_opts mo;
	struct remat_i_milp_result mr;
	struct remat_schedule order, expl;
	struct remat_sim_result r0, r;
	struct ip p;
	double *x0 = NULL, v0, now, span;
	int rc, too_big = 0;
	int32_t relaxed = 0;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	st->status = -1;
	*kept = 0;
	memset(&p, 0, sizeof(p));
	p.g = req->graph;
	remat_i_milp_init(&p.m);
	remat_i_milp_result_init(&mr);
	remat_schedule_init(&order);
	remat_schedule_init(&expl);
	rc = remat_simulate(p.g, s, req->budget, NULL, &r0, err);
	if (rc || !r0.valid || !r0.feasible)
		goto done; /* no start to improve */
	rc = build_sets(&p, s, err);
	if (rc == REMAT_ENOFIT) {
		rc = REMAT_OK;
		goto done;
	}
	if (rc)
		goto done;
	st->stages = p.T;
	rc = build_model(&p, s, req->budget, max_cols, max_nnz, &x0, &too_big, &relaxed, err);
	if (rc || too_big)
		goto done;
	st->cols = p.m.ncols;
	st->rows = p.m.nrows;
	st->nnz = p.m.nnz;
	st->relaxed = relaxed;
	if (remat_i_milp_check(&p.m, x0, 1e-6, NULL) != -1) {
		st->unmapped = 1; /* a case the mapping misses: leave s as it is */
		goto done;
	}
	v0 = remat_i_milp_value(&p.m, x0);
	if (v0 <= 0)
		goto done; /* nothing computed again: nothing to save */
	/*
	 * Step 5.  CBC stops itself at four fifths of the time and has the
	 * rest to return: its cut generators check no clock, and a round of
	 * them on n1000's model takes seconds (a kill loses the incumbent).
	 */
	now = remat_now();
	if (req->deadline > 0 && (deadline <= 0 || req->deadline < deadline))
		deadline = req->deadline;
	span = deadline > 0 ? deadline - now : INTERVAL_SECONDS;
	if (span <= 0)
		goto done;
	memset(&mo, 0, sizeof(mo));
	mo.start = x0;
	mo.no_preprocess = 1;
	mo.gap = 1e-4;
	mo.deadline = now + 0.8 * span;
	mo.grace = 0.2 * span;
	mo.hard = req->deadline;
	mo.stop = req->stop;
	rc = remat_i_milp_solve(REMAT_I_MILP_CBC, &p.m, &mo, &mr, err);
	if (rc)
		goto done;
	st->status = mr.status;
	st->bound = mr.bound;
	st->crashed = mr.crashed;
	if (!mr.x || remat_i_milp_value(&p.m, mr.x) >= v0 - 1e-9 * fmax(1, v0))
		goto done;
	rc = answer(&p, mr.x, &order, err);
	if (rc == REMAT_OK)
		rc = remat_liveness(p.g, &order, &expl, err);
	if (rc == REMAT_OK)
		rc = remat_simulate(p.g, &expl, req->budget, NULL, &r, err);
	if (rc)
		goto done;
	if (r.valid && r.feasible && r.cost < r0.cost * (1 - 1e-12)) {
		rc = remat_schedule_copy(out, &expl, err);
		*kept = rc == REMAT_OK;
		st->cost = r.cost;
	}
done:
	free(x0);
	remat_i_milp_result_release(&mr);
	remat_schedule_release(&order);
	remat_schedule_release(&expl);
	ip_release(&p);
	return rc;
}
