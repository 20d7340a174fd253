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
 *    run the keep pass (six rounds, as twremat does, but freeing the
 *    value cheapest per byte and per position until its next compute,
 *    as the replay does, not merely per byte: +3.37% against +3.47% over
 *    twelve seeds of one climber on the graph above) and simulate: the
 *    cost when valid and within the budget.  An order whose replay does
 *    not fit scores the bytes by which it goes over (the soft replay,
 *    evict_replay.h), so that a climb from such an order heads for one
 *    that fits: on the published random layered DAGs at 70% no starting
 *    order's replay fits, and a climb that saw them all as +inf walked
 *    blindly until one did (random-layered-n500, `-t 20`, seed 4:
 *    +46.38% or +12.80% by the clock, against +6.40% for seed 1).  Scores
 *    compare by bytes over, then cost; once a climber has an order that
 *    fits, the others are given up at their first overflow, as before.
 * 3. Hill-climb with plateau moves on a random node (half the time one
 *    the best schedule recomputes, or a user of one), the move staying
 *    when the score is no higher and undone otherwise; the cheapest
 *    schedule seen is kept.  The node's range is the places between its
 *    last input and its first user.  Three moves in four are block
 *    moves beyond that range (seq_moves.h): up to a quarter of the
 *    sequence earlier than the range, taking along its ancestors placed
 *    in between, or later, taking along its descendants.  The others
 *    stay in the range: half of them to one of its ends (right after the
 *    last input or right before the first user), the rest anywhere in
 *    it.  (Within its range a node changes little but its own life and
 *    its inputs'; a block move reorders a whole stretch consistently,
 *    which a run of single moves through costlier orders would have to
 *    do.  On the graph above, one climber for 40 s from seeds 1 to 12:
 *    +3.47% mean with the block moves, +4.14% without; the ends of the
 *    range, drawn uniformly, were rare, and making them half the moves
 *    gave +3.97% against +4.25% over seeds 1 to 6: bench/results/moccasin.md,
 *    "The lost cell".)
 * 4. Stop after `stall` scores without a lower cost, after max_evals, at
 *    the deadline or when the request expires; early (a quarter of stall,
 *    or the check time) while nothing beats the target, the schedule the
 *    caller already has: the time is better spent elsewhere.
 * 5. Step 3 runs in `threads` independent climbers, each with its own
 *    random sequence (climber 0 the request's seed,
 *    climber k the k-th splitmix output of that seed), each on its own
 *    thread (climber 0 on the caller's); the cheapest result wins, the
 *    lowest climber on a tie.  Runs from one start differ much (on the
 *    1,000-node graph above, +3.6% to +5.3% for seeds 1 to 3 of `remat
 *    plan -t 60`), so on two cores two climbers return the better of two
 *    runs in the time of one (bench/results/moccasin.md, "The lost cell").
 *    Climber 1 starts from the second cheapest of the orders given (when
 *    one costs more than the start and fits), the others from the start:
 *    a start can be a poor basin for every climb from it (+6.1% for both
 *    climbers of seed 3 on that graph, +4.0% with this).  Climbers share
 *    nothing but the progress display's best cost.
 * 6. With restarts (LNS asks for them when its start is poor, so the
 *    search has its whole share of the time): when every climber has
 *    stopped and none beats the target, all begin again, their random
 *    sequences going on, for stall / 16 replays times the next term of
 *    Luby's sequence (1 1 2 1 1 2 4 ...), in rounds (at most
 *    MAX_ROUNDS) until a climber beats the target.  In round r climber t
 *    begins from orders[(r * threads + t) mod norders] (its own start's
 *    snapshot when that is its start, else that order replayed afresh,
 *    a replay counted): on random-layered-n250 at 70%, `-t 60`, nine
 *    seeds, rounds from each climber's own start gave a median of +4.71%
 *    and two or three runs above +10%, rounds taking the orders in turn
 *    +3.38% and one (bench/RESULTS.md, the hard end).  The
 *    rounds are synchronous, so the search stays deterministic for a
 *    seed and thread count while no deadline stops it (an earlier form,
 *    where one climber's fit ended the others' restarts at once, was
 *    not: auto planning twice at one budget under ASan got two costs
 *    in tests/property/prop_lowest.c).  Below the lowest peak
 *    an order can have, whether a climb reaches an order whose replay
 *    fits depends mostly on its first few hundred moves: on the
 *    published random-layered-n250 at 70%, one climb in 30 to 120 of
 *    250 to 1,000 replays from the same start reached one, and a climb
 *    of 16,000 came within 2 KB of fitting and no nearer; many short
 *    climbs find one (+3.70/+3.95/+3.38% for seeds 1 to 3 of `remat
 *    plan -t 60`, against +10.8% to +10.9% from the windows alone).
 *
 * Never returns a schedule the simulator did not accept; deterministic
 * for a seed and thread count while no deadline stops it.  Time per step:
 * one replay, one keep pass and one simulation, O(steps * (in-degree +
 * log n)), plus the move's O(distance * degree).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/rand.h"
#include "analysis/needed.h"
#include "plan/evict_replay.h"
#include "plan/keep_pass.h"
#include "plan/replay_search.h"
#include "plan/seq_moves.h"
#include "solver/milp.h"

/* Scores between progress reports. */
#define REPORT_EVERY 256
/* Most climbers (step 5). */
#define MAX_THREADS 16
/* Most rounds of climbs begun again (step 6). */
#define MAX_ROUNDS 64

struct rs {
	const struct remat_plan_request *req;
	const struct remat_graph *g;
	struct remat_i_seq S;   /* the sequence (step 1) */
	int64_t max_steps;
	struct remat_schedule order, replay, kept;
	const struct remat_schedule *scored; /* the last score's: kept, or replay when over */
	int32_t *cnt;           /* [n] computes of each node in the best schedule */
	int32_t *hot, nhot;     /* the nodes it computes more than once */
};

/* What the climbers share: their parameters, and the best cost for display. */
struct climb_ctx {
	const char *caller;
	int64_t max_evals, stall;
	int64_t base;           /* replays before the climb (the start's) */
	double deadline, target, check, t0;
	double good;            /* stop at this cost or less (0: no such stop) */
	atomic_int done;        /* a climber reached good: all stop */
	pthread_mutex_t mu;
	double shown;           /* best cost of any climber (display only) */
};

/* One climber of step 5. */
struct climber {
	struct climb_ctx *cx;
	struct rs R;
	uint64_t rng;
	double best, best_at;   /* its best cost, and remat_now() when it was found */
	int64_t bo;             /* the climb's best: bytes over the budget (0: fits), */
	double bc;              /* then cost (step 2) */
	int64_t evals, improved;
	int64_t limit;          /* replays it may make while its best is not below target */
	int id, rc;             /* out holds its best when best is below the start's */
	struct rs R0;           /* step 6: its start (sequence and hot nodes) */
	int64_t bo0;
	double bc0;
	struct remat_schedule out;
	struct remat_error err;
};

static int rs_alloc(struct rs *R, const struct remat_plan_request *req)
{
	const struct remat_graph *g = req->graph;

	memset(R, 0, sizeof(*R));
	R->req = req;
	R->g = g;
	R->max_steps = 16 * (int64_t)g->n > 2000000 ? 16 * (int64_t)g->n : 2000000;
	remat_schedule_init(&R->order);
	remat_schedule_init(&R->replay);
	remat_schedule_init(&R->kept);
	R->scored = &R->kept;
	R->cnt = calloc((size_t)g->n + 1, sizeof(int32_t));
	R->hot = malloc(sizeof(int32_t) * ((size_t)g->n + 1));
	return remat_i_seq_init(&R->S, g) == 0 && R->cnt && R->hot ? 0 : -1;
}

static void rs_free(struct rs *R)
{
	remat_i_seq_release(&R->S);
	free(R->cnt);
	free(R->hot);
	remat_schedule_release(&R->order);
	remat_schedule_release(&R->replay);
	remat_schedule_release(&R->kept);
}

/* A copy of from's sequence and hot nodes in R (allocated alike). */
static void rs_copy(struct rs *R, const struct rs *from)
{
	size_t n = (size_t)from->g->n + 1;

	remat_i_seq_copy(&R->S, &from->S);
	memcpy(R->cnt, from->cnt, sizeof(int32_t) * n);
	memcpy(R->hot, from->hot, sizeof(int32_t) * (size_t)from->nhot);
	R->nhot = from->nhot;
}

/* The best schedule is now R->scored: note what it recomputes (step 3). */
static void note_hot(struct rs *R)
{
	const struct remat_schedule *s = R->scored;
	int64_t i;

	for (i = 0; i < s->n; i++)
		R->cnt[s->steps[i].node] = 0;
	R->nhot = 0;
	for (i = 0; i < s->n; i++)
		if (++R->cnt[s->steps[i].node] == 2)
			R->hot[R->nhot++] = s->steps[i].node;
}

/*
 * Step 2: seq's replay into R->scored; *over the bytes it goes over the
 * budget (0: it fits; INT64_MAX: no replay), *cost its cost.  soft: an
 * order that does not fit is replayed to its end for *over; else it is
 * given up at once (INT64_MAX), as when one that fits is to be beaten.
 */
static int score(struct rs *R, int soft, double *cost, int64_t *over, struct remat_error *err)
{
	const struct remat_graph *g = R->g;
	struct remat_sim_result r;
	struct remat_error e;
	int64_t i, n = 0, ov;
	double sum = 0;
	int rc;

	*cost = HUGE_VAL;
	*over = INT64_MAX;
	remat_schedule_clear(&R->order);
	REMAT_TRY(remat_schedule_reserve(&R->order, R->S.m, err));
	for (i = 0; i < R->S.m; i++)
		R->order.steps[R->order.n++] =
			(struct remat_step){ REMAT_OP_COMPUTE, R->S.seq[i] };
	remat_error_clear(&e);
	ov = 0;
	rc = remat_i_evict_replay_soft(g, &R->order, R->req->budget, R->max_steps, R->req,
				       &R->replay, soft ? &ov : NULL, &e);
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
	if (ov > 0) {
		/* Over the budget: no keep pass (it needs an order that fits). */
		for (i = 0; i < n; i++)
			sum += g->cost[R->replay.steps[i].node];
		*over = ov;
		*cost = sum;
		R->scored = &R->replay;
		return REMAT_OK;
	}
	REMAT_TRY(remat_i_keep_pass(g, &R->replay, R->req->budget, 6, REMAT_I_KEEP_PER_BYTE_DISTANCE,
				    &R->kept, NULL, err));
	R->scored = &R->kept;
	REMAT_TRY(remat_simulate(g, &R->kept, R->req->budget, NULL, &r, err));
	if (r.valid && r.feasible) {
		*cost = r.cost;
		*over = 0;
	}
	return REMAT_OK;
}

/* Whether (over a, cost a) beats (over b, cost b): less over, then cheaper. */
static int better(int64_t oa, double ca, int64_t ob, double cb)
{
	return oa < ob || (oa == ob && ca < cb);
}

/*
 * Step 3: make a random move and return 1, seq[*a..*b] changed
 * (remat_i_seq_undo() restores it); 0 when the node drawn cannot move.
 */
static int pick(struct rs *R, uint64_t *rng, int32_t *a, int32_t *b)
{
	const struct remat_graph *g = R->g;
	int32_t i = (int32_t)remat_i_rand_below(rng, R->S.m);
	int32_t v = R->S.seq[i], lo = 0, hi = R->S.m - 1, k, j;

	/* Half the moves: a recomputed node or one of its users. */
	if (R->nhot > 0 && (remat_i_rand_next(rng) & 1)) {
		int32_t h = R->hot[(int32_t)remat_i_rand_below(rng, R->nhot)];
		int32_t nu = g->use_off[h + 1] - g->use_off[h];
		int32_t c = (int32_t)remat_i_rand_below(rng, nu + 1);

		v = c == nu ? h : g->use_idx[g->use_off[h] + c];
		if (R->S.pos[v] < 0)
			v = h;
		i = R->S.pos[v];
	}

	for (k = g->in_off[v]; k < g->in_off[v + 1]; k++)
		if (R->S.pos[g->in_idx[k]] + 1 > lo)
			lo = R->S.pos[g->in_idx[k]] + 1;
	for (k = g->use_off[v]; k < g->use_off[v + 1]; k++)
		if (R->S.pos[g->use_idx[k]] >= 0 && R->S.pos[g->use_idx[k]] - 1 < hi)
			hi = R->S.pos[g->use_idx[k]] - 1;
	if (remat_i_rand_next(rng) & 3) {
		/* Three moves in four: a block move beyond the range, up to a
		 * quarter of the sequence earlier than lo or later than hi. */
		int32_t d = 1 + (int32_t)remat_i_rand_below(rng, R->S.m / 4 > 1 ? R->S.m / 4 : 1);

		if (remat_i_rand_next(rng) & 1)
			j = lo - d < 0 ? 0 : lo - d;
		else
			j = hi + d >= R->S.m ? R->S.m - 1 : hi + d;
		if (j == i)
			return 0;
		remat_i_seq_block_move(&R->S, i, j);
		*a = i < j ? i : j;
		*b = i < j ? j : i;
		return 1;
	}
	if (hi <= lo)
		return 0;
	if (remat_i_rand_next(rng) & 1) {
		/* Half the moves to an end of the range: right after the last
		 * input (the inputs' lives may end sooner) or right before the
		 * first user (v's own life is shortest). */
		j = (remat_i_rand_next(rng) & 2) ? lo : hi;
		if (j == i)
			j = j == lo ? hi : lo;
	} else {
		j = lo + (int32_t)remat_i_rand_below(rng, hi - lo);
		if (j >= i)
			j++; /* a place other than its own */
	}
	*a = i < j ? i : j;
	*b = i < j ? j : i;
	remat_i_seq_move(&R->S, i, j);
	return 1;
}

static void progress(struct climber *C)
{
	struct climb_ctx *cx = C->cx;
	struct remat_progress p = { NULL, "lns: order search", -1, NAN, NAN, 0 };
	double best;

	pthread_mutex_lock(&cx->mu);
	best = cx->shown;
	pthread_mutex_unlock(&cx->mu);
	p.planner = cx->caller;
	p.incumbent = isinf(best) ? NAN : best;
	p.elapsed = remat_now() - cx->t0;
	remat_plan_progress(C->R.req, &p);
}

/* The i-th term (i >= 1) of Luby, Sinclair and Zuckerman's sequence 1 1 2 1 1 2 4 1 1 2 ... */
static int64_t luby(int64_t i)
{
	int64_t k = 1;

	for (;;) {
		while (((int64_t)1 << k) - 1 < i)
			k++;
		if (((int64_t)1 << k) - 1 == i)
			return (int64_t)1 << (k - 1);
		i -= ((int64_t)1 << (k - 1)) - 1;
		k = 1;
	}
}

/* C's replay (R.kept) fits at cost c, below its best: its best now. */
static int keep_best(struct climber *C, double c)
{
	struct climb_ctx *cx = C->cx;

	C->best = c;
	C->best_at = remat_now();
	C->improved++;
	pthread_mutex_lock(&cx->mu);
	if (c < cx->shown)
		cx->shown = c;
	pthread_mutex_unlock(&cx->mu);
	if (cx->good > 0 && c <= cx->good)
		atomic_store(&cx->done, 1);
	return remat_schedule_copy(&C->out, &C->R.kept, &C->err);
}

/*
 * Step 6: climber C begins again from order (not its own start): its
 * replay scored as a start is (one replay counted), kept as its best when
 * it fits and is cheaper.  REMAT_OK, REMAT_ECANCELED or another error
 * (its message in C->err).
 */
static int restart_from(struct climber *C, const int32_t *order, const uint8_t *need)
{
	struct rs *R = &C->R;
	int rc;

	remat_i_seq_load(&R->S, need, order);
	rc = score(R, 1, &C->bc, &C->bo, &C->err);
	if (rc)
		return rc;
	C->evals++;
	if (C->bo == INT64_MAX)
		return REMAT_OK;
	note_hot(R);
	if (C->bo > 0 || C->bc >= C->best)
		return REMAT_OK;
	return keep_best(C, C->bc);
}

/* Steps 3 and 4 for one climber; the result in C->rc, C->best, C->out. */
static void *climb(void *arg)
{
	struct climber *C = arg;
	struct climb_ctx *cx = C->cx;
	struct rs *R = &C->R;
	const struct remat_plan_request *req = R->req;
	int64_t since = 0, o;
	double c;
	int rc = REMAT_OK;

	while (since < cx->stall && (cx->max_evals <= 0 || cx->base + C->evals < cx->max_evals) &&
	       !(cx->deadline > 0 && remat_now() >= cx->deadline) && !remat_plan_expired(req) &&
	       !atomic_load(&cx->done)) {
		int32_t a, b;

		if (C->best >= cx->target &&
		    (C->evals >= C->limit || (cx->check > 0 && remat_now() >= cx->check)))
			break; /* not even near what it should beat */
		if (!pick(R, &C->rng, &a, &b)) {
			since++; /* a graph with no move left still ends */
			continue;
		}
		rc = score(R, C->bo > 0, &c, &o, &C->err);
		if (rc)
			break;
		C->evals++;
		since++;
		if (better(o, c, C->bo, C->bc)) {
			/* Nearer to fitting, or fitting and cheaper. */
			C->bo = o;
			C->bc = c;
			since = 0;
			note_hot(R);
			if (o > 0 || c >= C->best)
				continue; /* not fitting yet, or a climb begun again above its best */
			rc = keep_best(C, c);
			if (rc)
				break;
		} else if (better(C->bo, C->bc, o, c)) {
			remat_i_seq_undo(&R->S, a, b);
		}
		if (C->id == 0 && C->evals % REPORT_EVERY == 0)
			progress(C);
	}
	if (rc == REMAT_ECANCELED)
		rc = REMAT_OK; /* the request expired during a replay */
	C->rc = rc;
	return NULL;
}

/*
 * Step 5: climbers 1.. on their own threads, climber 0 on this one;
 * started[t] is set when climber t ran (in this round or before).
 */
static void run_climbers(struct climber *C, int threads, uint8_t *started)
{
	pthread_t tid[MAX_THREADS];
	uint8_t now[MAX_THREADS];
	int t;

	for (t = 1; t < threads; t++) {
		/* Counted before it starts: no solve forks meanwhile. */
		remat_i_threads_add(1);
		now[t] = pthread_create(&tid[t], NULL, climb, &C[t]) == 0;
		if (!now[t])
			remat_i_threads_add(-1);
	}
	climb(&C[0]);
	started[0] = 1;
	for (t = 1; t < threads; t++)
		if (now[t]) {
			pthread_join(tid[t], NULL);
			remat_i_threads_add(-1);
			started[t] = 1;
		}
}

int remat_i_replay_search(const struct remat_plan_request *req, const char *caller,
			  const int32_t *const *orders, int norders, int threads,
			  int64_t max_evals, int64_t stall, double deadline, double target,
			  double check, double good, int restarts, struct remat_schedule *out,
			  struct remat_i_replay_search_stats *st, struct remat_error *err)
{
	const struct remat_graph *g = req->graph;
	struct remat_i_replay_search_stats local;
	struct climber C[MAX_THREADS];
	struct climb_ctx cx;
	uint8_t *need = NULL, started[MAX_THREADS];
	uint64_t rng = req->seed ^ 0x5eed5eed5eedull;
	double best = HUGE_VAL, bc = HUGE_VAL, second_cost = HUGE_VAL, c;
	int64_t bo = INT64_MAX, second_over = INT64_MAX, o;
	int k, t, first = 0, second = -1, win = -1, rc = REMAT_OK, bad = 0, round;
	int own[MAX_THREADS]; /* the index in orders of each climber's start */

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	st->start_cost = st->cost = HUGE_VAL;
	st->last_at = remat_now();
	if (threads < 1)
		threads = 1;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	cx = (struct climb_ctx){ .caller = caller, .max_evals = max_evals, .stall = stall,
				 .deadline = deadline, .target = target, .check = check,
				 .good = good, .t0 = remat_now() };
	atomic_init(&cx.done, 0);
	if (pthread_mutex_init(&cx.mu, NULL))
		return REMAT_FAIL(err, REMAT_ENOMEM, "cannot create a mutex for the order search");
	memset(C, 0, sizeof(C));
	memset(started, 0, sizeof(started));
	for (t = 0; t < threads; t++) {
		C[t].cx = &cx;
		C[t].id = t;
		remat_schedule_init(&C[t].out);
		remat_error_clear(&C[t].err);
		bad |= rs_alloc(&C[t].R, req) != 0;
		if (restarts)
			bad |= rs_alloc(&C[t].R0, req) != 0;
	}
	need = malloc((size_t)g->n + 1);
	if (!need || bad) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory in the order search");
		goto done;
	}
	/* Steps 1 and 2 on climber 0: the cheapest of the orders given is the start. */
	remat_i_needed(g, need);
	for (k = 0; k < g->n; k++)
		need[k] = need[k] && g->kind[k] != REMAT_KIND_INPUT; /* the sequence's nodes */
	for (k = 0; k < norders && rc == REMAT_OK; k++) {
		remat_i_seq_load(&C[0].R.S, need, orders[k]);
		rc = score(&C[0].R, 1, &c, &o, err);
		st->evals++;
		/* The second start fits when the first does (step 5). */
		if (k == 0 || better(o, c, bo, bc)) {
			if (k > 0 && bo < INT64_MAX && (bo == 0) == (o == 0))
				second = first, second_over = bo, second_cost = bc;
			else if (o == 0)
				second = -1, second_over = INT64_MAX, second_cost = HUGE_VAL;
			bo = o;
			bc = c;
			first = k;
			if (o == 0)
				rc = remat_schedule_copy(out, &C[0].R.kept, err);
			if (o < INT64_MAX)
				note_hot(&C[0].R);
		} else if ((o == 0) == (bo == 0) && better(bo, bc, o, c) &&
			   better(o, c, second_over, second_cost)) {
			second = k;
			second_over = o;
			second_cost = c;
		}
	}
	if (rc && rc != REMAT_ECANCELED)
		goto done;
	best = bo == 0 ? bc : HUGE_VAL;
	st->start_cost = best;
	cx.shown = best;
	cx.base = st->evals;
	if (rc == REMAT_OK) {
		if (first != norders - 1)
			remat_i_seq_load(&C[0].R.S, need, orders[first]);
		/* Step 5: the climbers' starts (climber 1 the second cheapest), their sequences. */
		C[0].rng = rng;
		for (t = 0; t < threads; t++) {
			C[t].best = best;
			C[t].bo = bo;
			C[t].bc = bc;
			own[t] = t == 1 && second >= 0 ? second : first;
			if (own[t] != first) {
				remat_i_seq_load(&C[t].R.S, need, orders[own[t]]);
				rc = score(&C[t].R, 1, &C[t].bc, &C[t].bo, err);
				st->evals++;
				if (rc)
					break;
				C[t].best = C[t].bo == 0 ? C[t].bc : HUGE_VAL;
				if (C[t].bo < INT64_MAX)
					note_hot(&C[t].R);
			} else if (t > 0) {
				rs_copy(&C[t].R, &C[0].R);
			}
			if (t > 0)
				C[t].rng = remat_i_rand_next(&rng);
		}
		for (t = 0; t < threads && rc == REMAT_OK; t++) {
			C[t].limit = cx.stall / 4 - cx.base;
			if (restarts) {
				rs_copy(&C[t].R0, &C[t].R);
				C[t].bo0 = C[t].bo;
				C[t].bc0 = C[t].bc;
			}
		}
		if (rc == REMAT_OK)
			run_climbers(C, threads, started);
		/* Step 6: rounds of climbs begun again while none beats the target. */
		for (round = 1; rc == REMAT_OK && restarts && round <= MAX_ROUNDS &&
		     !atomic_load(&cx.done) && !(deadline > 0 && remat_now() >= deadline) &&
		     !remat_plan_expired(req); round++) {
			int go = 0;

			for (t = 0; t < threads; t++)
				if (started[t] && (C[t].rc || C[t].best < target))
					go = -1;
			for (t = 0; t < threads && go >= 0; t++)
				if (started[t] && (max_evals <= 0 || cx.base + C[t].evals < max_evals)) {
					int j = (round * threads + t) % norders, r2;

					if (j == own[t]) {
						rs_copy(&C[t].R, &C[t].R0);
						C[t].bo = C[t].bo0;
						C[t].bc = C[t].bc0;
					} else {
						r2 = restart_from(&C[t], orders[j], need);
						if (r2 == REMAT_ECANCELED) {
							go = -1; /* the request expired in the replay */
							break;
						}
						if (r2) {
							rc = r2;
							*err = C[t].err;
							break;
						}
					}
					C[t].limit = C[t].evals + luby(round) *
						(cx.stall / 16 > 1 ? cx.stall / 16 : 1);
					go = 1;
				}
			if (go <= 0 || rc)
				break;
			run_climbers(C, threads, started);
		}
		for (t = 0; t < threads; t++) {
			if (!started[t])
				continue; /* no thread: this climber did not run */
			st->evals += C[t].evals;
			st->improved += C[t].improved;
			if (C[t].rc && !rc) {
				rc = C[t].rc;
				*err = C[t].err;
			}
			if (C[t].best < best) {
				best = C[t].best;
				st->last_at = C[t].best_at;
				win = t;
			}
		}
		if (rc == REMAT_OK && win >= 0)
			rc = remat_schedule_copy(out, &C[win].out, err);
	}
	if (rc == REMAT_ECANCELED)
		rc = REMAT_OK; /* the request expired during a replay */
	st->cost = best;
	if (rc == REMAT_OK && isinf(best))
		rc = REMAT_FAIL(err, REMAT_ENOFIT, "no replay of the order fits in %lld bytes",
				(long long)req->budget);
done:
	free(need);
	for (t = 0; t < threads; t++) {
		rs_free(&C[t].R);
		if (restarts)
			rs_free(&C[t].R0);
		remat_schedule_release(&C[t].out);
	}
	pthread_mutex_destroy(&cx.mu);
	return rc;
}
