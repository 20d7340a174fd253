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

/* Kumar et al. 2019 Fig. 1. */
extern const char *const TU_KUMAR;

#endif
