/*
 * replay_search.c - search compute orders by the cost of their replay
 * under the budget; see replay_search.h.
 *
 * Below an order's no-remat peak the evict-and-recompute replay
 * (evict_replay.c) turns the order into a schedule within the budget, and
 * which values it must bring back depends much on where the order places
 * each compute: on Moccasin's 1,000-node random layered graph at 80%, the
 * replays of orders with the same peak differ from +7% to +20% (keep
 * pass included).  A replay takes about a millisecond there, so the
 * orders themselves can be searched:
 *
 * 1. An order's needed non-input nodes are its sequence (inputs are
 *    resident from the start; unneeded nodes are never computed).  Of the
 *    orders given, the one whose sequence scores least is the start.
 * 2. Score a sequence: replay it within the budget, drop the replay's
 *    frees (the liveness pass frees no later, so the peak can only fall),
 *    run the keep pass (six rounds, as twremat does) and simulate: the
 *    cost when valid and within the budget, else +inf.
 * 3. Hill-climb with plateau moves: a random node (half the time one the
 *    best schedule recomputes, or a user of one) moves to a random place
 *    between its last input and its first user (so the sequence stays
 *    topological); the move stays when the score is no higher, and is
 *    undone otherwise.  The cheapest schedule seen is kept.
 * 4. Stop after `stall` scores without a lower cost, after max_evals, at
 *    the deadline or when the request expires; early (a quarter of stall,
 *    or the check time) while nothing beats the target, the schedule the
 *    caller already has: the time is better spent elsewhere.
 *
 * Never returns a schedule the simulator did not accept; deterministic
 * for a seed while no deadline stops it.  Time per step: one replay, one
 * keep pass and one simulation, O(steps * (in-degree + log n)), plus the
 * move's O(distance).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/rand.h"
#include "analysis/needed.h"
#include "plan/evict_replay.h"
#include "plan/keep_pass.h"
#include "plan/replay_search.h"

/* Scores between progress reports. */
#define REPORT_EVERY 256

struct rs {
	const struct remat_plan_request *req;
	const struct remat_graph *g;
	int32_t *seq, m;        /* the sequence (step 1) */
	int32_t *pos;           /* [n] place of each node in seq, -1 */
	int64_t max_steps;
	struct remat_schedule order, replay, kept;
	int32_t *cnt;           /* [n] computes of each node in the best schedule */
	int32_t *hot, nhot;     /* the nodes it computes more than once */
};

/* The best schedule is now R->kept: note what it recomputes (step 3). */
static void note_hot(struct rs *R)
{
	int64_t i;

	for (i = 0; i < R->kept.n; i++)
		R->cnt[R->kept.steps[i].node] = 0;
	R->nhot = 0;
	for (i = 0; i < R->kept.n; i++)
		if (++R->cnt[R->kept.steps[i].node] == 2)
			R->hot[R->nhot++] = R->kept.steps[i].node;
}

/* Step 2: the cost of seq's replay into R->kept, or HUGE_VAL. */
static int score(struct rs *R, double *cost, struct remat_error *err)
{
	const struct remat_graph *g = R->g;
	struct remat_sim_result r;
	struct remat_error e;
	int64_t i, n = 0;
	int rc;

	*cost = HUGE_VAL;
	remat_schedule_clear(&R->order);
	REMAT_TRY(remat_schedule_reserve(&R->order, R->m, err));
	for (i = 0; i < R->m; i++)
		R->order.steps[R->order.n++] =
			(struct remat_step){ REMAT_OP_COMPUTE, R->seq[i] };
	remat_error_clear(&e);
	rc = remat_i_evict_replay(g, &R->order, R->req->budget, R->max_steps, R->req, &R->replay,
				  &e);
	if (rc == REMAT_ENOFIT)
		return REMAT_OK;
	if (rc) {
		*err = e;
		return rc;
	}
	for (i = 0; i < R->replay.n; i++)
		if (R->replay.steps[i].op == REMAT_OP_COMPUTE)
			R->replay.steps[n++] = R->replay.steps[i];
	R->replay.n = n;
	REMAT_TRY(remat_i_keep_pass(g, &R->replay, R->req->budget, 6, &R->kept, NULL, err));
	REMAT_TRY(remat_simulate(g, &R->kept, R->req->budget, NULL, &r, err));
	if (r.valid && r.feasible)
		*cost = r.cost;
	return REMAT_OK;
}

/* Move seq[from] to place to, shifting what lies between. */
static void move(struct rs *R, int32_t from, int32_t to)
{
	int32_t v = R->seq[from], i;

	if (to < from) {
		memmove(R->seq + to + 1, R->seq + to, sizeof(int32_t) * (size_t)(from - to));
		R->seq[to] = v;
		for (i = to; i <= from; i++)
			R->pos[R->seq[i]] = i;
	} else {
		memmove(R->seq + from, R->seq + from + 1, sizeof(int32_t) * (size_t)(to - from));
		R->seq[to] = v;
		for (i = from; i <= to; i++)
			R->pos[R->seq[i]] = i;
	}
}

/* Step 3: a random move (*from, *to), or 0 when the node drawn cannot move. */
static int pick(struct rs *R, uint64_t *rng, int32_t *from, int32_t *to)
{
	const struct remat_graph *g = R->g;
	int32_t i = (int32_t)remat_i_rand_below(rng, R->m);
	int32_t v = R->seq[i], lo = 0, hi = R->m - 1, k, j;

	/* Half the moves: a recomputed node or one of its users. */
	if (R->nhot > 0 && (remat_i_rand_next(rng) & 1)) {
		int32_t h = R->hot[(int32_t)remat_i_rand_below(rng, R->nhot)];
		int32_t nu = g->use_off[h + 1] - g->use_off[h];
		int32_t c = (int32_t)remat_i_rand_below(rng, nu + 1);

		v = c == nu ? h : g->use_idx[g->use_off[h] + c];
		if (R->pos[v] < 0)
			v = h;
		i = R->pos[v];
	}

	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
		if (R->pos[g->in_idx[k]] + 1 > lo)
			lo = R->pos[g->in_idx[k]] + 1;
	for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
		if (R->pos[g->use_idx[k]] >= 0 && R->pos[g->use_idx[k]] - 1 < hi)
			hi = R->pos[g->use_idx[k]] - 1;
	if (hi <= lo)
		return 0;
	j = lo + (int32_t)remat_i_rand_below(rng, hi - lo);
	if (j >= i)
		j++; /* a place other than its own */
	*from = i;
	*to = j;
	return 1;
}

static void progress(const struct rs *R, const char *caller, double cost, double t0)
{
	struct remat_progress p = { NULL, "lns: order search", -1, NAN, NAN, 0 };

	p.planner = caller;
	p.incumbent = isinf(cost) ? NAN : cost;
	p.elapsed = remat_now() - t0;
	remat_plan_progress(R->req, &p);
}

int remat_i_replay_search(const struct remat_plan_request *req, const char *caller,
			  const int32_t *const *orders, int norders, int64_t max_evals,
			  int64_t stall, double deadline, double target, double check,
			  struct remat_schedule *out, struct remat_i_replay_search_stats *st,
			  struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_i_replay_search_stats local;
	struct rs R;
	uint8_t *need = NULL;
	uint64_t rng = req->seed ^ 0x5eed5eed5eedull;
	int64_t since = 0;
	double best = HUGE_VAL, c, t0 = remat_now();
	int32_t v, i;
	int k, first = 0, rc = REMAT_OK;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	st->start_cost = st->cost = HUGE_VAL;
	memset(&R, 0, sizeof(R));
	R.req = req;
	R.g = g;
	R.max_steps = 16 * (int64_t)g->n > 2000000 ? 16 * (int64_t)g->n : 2000000;
	remat_schedule_init(&R.order);
	remat_schedule_init(&R.replay);
	remat_schedule_init(&R.kept);
	need = malloc((size_t)g->n + 1);
	R.seq = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	R.pos = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	R.cnt = calloc((size_t)g->n + 1, sizeof(int32_t));
	R.hot = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	if (!need || !R.seq || !R.pos || !R.cnt || !R.hot) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the order search");
		goto done;
	}
	/* Steps 1 and 2: the cheapest of the orders given is where the search starts. */
	remat_i_needed(g, need);
	for (k = 0; k < norders && rc == REMAT_OK; k++) {
		for (v = 0; v < g->n; v++)
			R.pos[v] = -1;
		R.m = 0;
		for (i = 0; i < g->n; i++) {
			v = orders[k][i];
			if (need[v] && g->kind[v] != REMAT_KIND_INPUT) {
				R.pos[v] = R.m;
				R.seq[R.m++] = v;
			}
		}
		rc = score(&R, &c, err);
		st->evals++;
		if (k == 0 || c < best) {
			best = c;
			first = k;
			if (!isinf(c)) {
				rc = remat_schedule_copy(out, &R.kept, err);
				note_hot(&R);
			}
		}
	}
	if (rc && rc != REMAT_ECANCELED)
		goto done;
	st->start_cost = best;
	if (first != norders - 1) {
		for (v = 0; v < g->n; v++)
			R.pos[v] = -1;
		R.m = 0;
		for (i = 0; i < g->n; i++) {
			v = orders[first][i];
			if (need[v] && g->kind[v] != REMAT_KIND_INPUT) {
				R.pos[v] = R.m;
				R.seq[R.m++] = v;
			}
		}
	}
	/* Steps 3 and 4. */
	while (rc == REMAT_OK && since < stall && (max_evals <= 0 || st->evals < max_evals) &&
	       !(deadline > 0 && remat_now() >= deadline) && !remat_plan_expired(req)) {
		int32_t from, to;

		if (best >= target &&
		    (st->evals >= stall / 4 || (check > 0 && remat_now() >= check)))
			break; /* not even near what it should beat */
		if (!pick(&R, &rng, &from, &to)) {
			since++; /* a graph with no move left still ends */
			continue;
		}
		move(&R, from, to);
		rc = score(&R, &c, err);
		if (rc)
			break;
		st->evals++;
		since++;
		if (c < best) {
			best = c;
			since = 0;
			st->improved++;
			rc = remat_schedule_copy(out, &R.kept, err);
			note_hot(&R);
		} else if (c > best) {
			move(&R, to, from);
		}
		if (st->evals % REPORT_EVERY == 0)
			progress(&R, caller, best, t0);
	}
	if (rc == REMAT_ECANCELED)
		rc = REMAT_OK; /* the request expired during a replay */
	st->cost = best;
	if (rc == REMAT_OK && isinf(best))
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "no replay of the order fits in %lld bytes",
				(long long)req->budget);
done:
	free(need);
	free(R.seq);
	free(R.pos);
	free(R.cnt);
	free(R.hot);
	remat_schedule_release(&R.order);
	remat_schedule_release(&R.replay);
	remat_schedule_release(&R.kept);
	return rc;
}
