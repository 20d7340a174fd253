/* testutil.h - helpers for the cmocka tests. */
#ifndef REMAT_TESTUTIL_H
#define REMAT_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "remat/remat.h"

/* Load a graph from JSON text; fails the test on error. */
struct remat_graph *tu_graph(const char *json);
/* Load expecting failure: returns the status, message in err. */
int tu_graph_err(const char *json, struct remat_error *err);
/*
 * Build a schedule from text: "A B C" are computes; "-A" frees A.
 * Fails the test on an unknown id.
 */
void tu_sched(const struct remat_graph *g, const char *text, struct remat_schedule *s);
/* Simulate and return the result (fails the test on ENOMEM). */
struct remat_sim_result tu_sim(const struct remat_graph *g, const char *text, int64_t budget);
/* Render a schedule as text in tu_sched's syntax (static buffer). */
const char *tu_sched_text(const struct remat_graph *g, const struct remat_schedule *s);

/* A deterministic xorshift generator for property tests. */
uint64_t tu_rand(uint64_t *state);
/* Random DAG as remat-graph JSON (malloc'd); n nodes, edge probability p. */
char *tu_random_graph_json(uint64_t *state, int n, double p, int training);
/*
 * Random DAG of every shape the format allows (JSON, malloc'd): 1-3
 * inputs, n nodes in all, zero sizes, workspaces, "recompute": false,
 * node i reading node i-1 and each earlier node with probability
 * edge_pct %, the last node an output with up to three more.
 */
char *tu_random_any_dag_json(uint64_t *st, int n, int edge_pct);

/*
 * Figures every schedule of g obeys, derived here from FORMATS.md alone
 * (not from libremat's analysis code).  A node is needed when some output
 * depends on it (outputs included).
 */
/* need[v] = 1 for every needed node (inputs included); need has g->n entries. */
void tu_needed(const struct remat_graph *g, uint8_t *need);
/* The least cost of any schedule: every needed non-input node once. */
double tu_least_cost(const struct remat_graph *g);
/* No schedule peaks lower: max over needed non-inputs of inputs + mem + workspace. */
int64_t tu_least_peak(const struct remat_graph *g);
/*
 * The peak of the needed non-input nodes once each in g->topo, compute-only
 * (frees at last use), as the simulator replays it.  At or above it a
 * schedule of least cost exists, and remat_plan_run() must return one from
 * every planner but the reference ('none').  <= g->no_remat_peak.
 */
int64_t tu_needed_order_peak(const struct remat_graph *g);

/*
 * The one plan-and-check helper: run a planner through remat_plan_run()
 * and check its answer independently.
 *
 *   struct tu_plan t = { .planner = "rotor", .flags = TU_MUST_FIT };
 *   tu_plan_run(g, budget, &t);     ... t.rc, t.res, t.s, t.rep, t.err
 *   tu_plan_release(&t);
 *
 * Checks, every call (each failure names planner, graph and budget):
 * - the status is REMAT_OK or REMAT_ENOFIT (REMAT_ECANCELED too with
 *   TU_MAY_CANCEL; anything with TU_ANY_STATUS, then only the checks
 *   that hold for every status are made);
 * - REMAT_OK: the schedule, simulated again here with remat_simulate(),
 *   is valid, within budget and gives the figures the runner reported;
 *   with its frees dropped (compute-only: frees at last use, the least
 *   memory its order allows) it is still valid and peaks no higher; its
 *   cost is at least tu_least_cost() and its peak at least
 *   tu_least_peak();
 * - REMAT_ENOFIT or REMAT_ECANCELED: no schedule, or (REMAT_ENOFIT) one
 *   that is valid and over budget, as simulated again here;
 * - a schedule must come back (REMAT_OK) at a budget covering the
 *   no-remat peak, and, for every planner but the reference, at a budget
 *   covering tu_needed_order_peak(), at the least cost; none may come
 *   back below tu_least_peak();
 * - TU_MUST_FIT: a schedule must come back (the caller knows one exists);
 * - brute (not NULL): *brute is exhaustive_min_cost(g, budget)
 *   (exhaustive.h; -1 when nothing fits): a schedule may come back only
 *   if the brute force found one, and costs no less than it.
 *
 * TU_OWN looks at the planner's own work instead: p->plan() is called
 * directly (no runner, so no needed-order offer and no fallback) and its
 * schedule, as it is, simulated into t->res.  REMAT_OK must then come with a valid schedule,
 * which may be over budget (the runner would answer REMAT_ENOFIT: a
 * planner does not decide feasibility); with TU_MUST_FIT it must also fit.
 */
enum {
	TU_MUST_FIT = 1u << 0,
	TU_MAY_CANCEL = 1u << 1,
	TU_ANY_STATUS = 1u << 2,
	TU_OWN = 1u << 3,
};

struct tu_plan {
	/* In: the planner by name, or p (p wins); options; seed. */
	const char *planner;
	const struct remat_planner *p;
	const struct remat_kv *opts;
	int n_opts;
	uint64_t seed;
	/* Seconds from now; negative: a deadline already past; 0: none. */
	double time_limit;
	unsigned flags;
	const double *brute;
	/* Out. */
	int rc;
	struct remat_schedule s;       /* empty unless the runner left one */
	struct remat_sim_result res;
	struct remat_plan_report rep;
	struct remat_error err;
};

/* Run and check (above); returns t->rc.  t->s is reused across calls. */
int tu_plan_run(const struct remat_graph *g, int64_t budget, struct tu_plan *t);
void tu_plan_release(struct tu_plan *t);
/* The common case in one call: res (may be NULL) receives t.res. */
int tu_plan(const struct remat_graph *g, const char *planner, int64_t budget,
	    const struct remat_kv *opts, int n_opts, unsigned flags,
	    struct remat_sim_result *res);

/* Kumar et al. 2019 Fig. 1. */
extern const char *const TU_KUMAR;

#endif
