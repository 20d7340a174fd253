/*
 * replay_search.h - a search over compute orders, each scored by the
 * schedule the evict-and-recompute replay makes of it (internal).  The
 * start of LNS at tight budgets; see replay_search.c.
 */
#ifndef REMAT_PLAN_REPLAY_SEARCH_H
#define REMAT_PLAN_REPLAY_SEARCH_H

#include "remat/planner.h"

struct remat_i_replay_search_stats {
	int64_t evals;       /* orders replayed (all climbers) */
	int64_t improved;    /* of which lowered the best cost */
	double start_cost;   /* of the cheapest given order's schedule (HUGE_VAL: none fitted) */
	double cost;         /* of the best schedule (HUGE_VAL: none fitted) */
	double last_at;      /* remat_now() when it was found (the start's: when the search began) */
};

/*
 * From the cheapest of orders[0..norders-1] (topological orders of
 * req->graph, g->n entries each; norders >= 1), search orders of the
 * needed non-input nodes: a node moves to another place (with the
 * ancestors or descendants that must come along, seq_moves.h), the
 * order is replayed within req->budget
 * (remat_i_evict_replay), the keep pass drops what it can
 * (remat_i_keep_pass) and the simulator prices the result; a move that
 * costs no more is kept.  threads independent climbers (at least 1) run
 * that search from the same start, each on its own thread with its own
 * random sequence; the cheapest wins.  Each climber stops after stall
 * replays without a lower cost, after max_evals replays (the start's
 * included; 0: no cap), at deadline (a remat_now() value; 0: none) or
 * when req expires; and, while its best costs target or more (a schedule
 * it should beat; HUGE_VAL: none), after stall / 4 replays or at check (a
 * remat_now() value; 0: none).  With restarts, when every climber has
 * stopped and none has a schedule below target, all begin again with
 * their random sequences where they are, each round from the next of
 * orders in turn, for stall / 16 replays times the next term of Luby's
 * sequence (1 1 2 1 1 2 4 ...), in at most 64 such rounds.  Every climber
 * stops as soon as one has a schedule costing good or less (a bound plus
 * a gap; 0: none).  out receives the cheapest schedule found
 * (compute-only, valid and within the budget by the simulator) and
 * REMAT_OK; REMAT_ENOFIT when no replay fitted; REMAT_ENOMEM.
 * Deterministic for req->seed and threads when neither deadline stops
 * it; climber 0 is the search of threads = 1, so more threads never
 * return a costlier schedule then (without restarts: with them, another
 * climber's schedule below target ends the rounds).  Progress
 * goes to req's callback under the planner name caller, from the calling
 * thread.  Each replay costs O(steps * (in-degree + log n)).
 */
int remat_i_replay_search(const struct remat_plan_request *req, const char *caller,
			  const int32_t *const *orders, int norders, int threads,
			  int64_t max_evals, int64_t stall, double deadline, double target,
			  double check, double good, int restarts, struct remat_schedule *out,
			  struct remat_i_replay_search_stats *st, struct remat_error *err);

#endif
