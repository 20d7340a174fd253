/*
 * fuzz_schedule.c - libFuzzer target for the schedule reader followed by
 * the simulator.  The input is a remat-schedule document read against a
 * fixed small graph, or "GRAPH\n%%\nSCHEDULE": a remat-graph document and
 * a schedule for it.  A schedule must read or fail with a message; one
 * that reads must simulate, and the simulator's verdict (valid or not,
 * and the peak of a valid one) must agree with the independent replay of
 * judge.h.  Budgets and the timeline are exercised on the way.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "remat/remat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* kumar-fig1 with an input, a workspace and a node computed only once. */
static const char fixed_graph[] =
	"{\"format\": \"remat-graph\", \"version\": 1, \"name\": \"fixed\", \"nodes\": [\n"
	"{\"id\": \"x\", \"kind\": \"input\", \"mem\": 2},\n"
	"{\"id\": \"A\", \"mem\": 1, \"inputs\": [\"x\"]},\n"
	"{\"id\": \"B\", \"mem\": 1, \"inputs\": [\"A\"], \"workspace\": 3},\n"
	"{\"id\": \"C\", \"mem\": 1, \"inputs\": [\"B\"], \"recompute\": false},\n"
	"{\"id\": \"D\", \"mem\": 1, \"inputs\": [\"B\", \"C\"]},\n"
	"{\"id\": \"E\", \"mem\": 1, \"inputs\": [\"A\", \"D\"]}\n"
	"]}\n";

static void check(const struct remat_graph *g, const char *buf, size_t len)
{
	struct remat_schedule s;
	struct remat_sim_result r, rb;
	struct remat_error err;
	struct judge_result j;
	int64_t *timeline;

	remat_schedule_init(&s);
	remat_error_clear(&err);
	if (remat_schedule_read_buffer(buf, len, "fuzz", g, &s, &err) != REMAT_OK) {
		if (!err.msg[0])
			abort();
		remat_schedule_release(&s);
		return;
	}
	timeline = malloc(sizeof(*timeline) * (size_t)(s.n + 1));
	if (timeline && remat_simulate(g, &s, -1, timeline, &r, &err) == REMAT_OK) {
		if (!r.valid && !r.error[0])
			abort();
		if (s.n <= 2000 && judge_replay(g, &s, &j) &&
		    (j.valid != r.valid || (r.valid && j.peak != r.peak_mem)))
			abort(); /* the simulator and the replay disagree */
		/* With a budget: the same schedule, feasible exactly when it fits. */
		if (remat_simulate(g, &s, r.peak_mem, NULL, &rb, &err) == REMAT_OK &&
		    (rb.valid != r.valid || rb.feasible != r.valid))
			abort();
		if (r.valid && r.peak_mem > 0 &&
		    remat_simulate(g, &s, r.peak_mem - 1, NULL, &rb, &err) == REMAT_OK &&
		    rb.feasible)
			abort();
	}
	free(timeline);
	remat_schedule_release(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct remat_graph *fixed;
	const char *buf = (const char *)data, *sep = NULL;
	struct remat_error err;

	for (size_t i = 0; i + 4 <= size; i++)
		if (memcmp(buf + i, "\n%%\n", 4) == 0) {
			sep = buf + i;
			break;
		}
	if (sep) {
		struct remat_graph *g = NULL;

		if (remat_graph_load_buffer(buf, (size_t)(sep - buf), "fuzz-graph", &g, &err) ==
		    REMAT_OK) {
			check(g, sep + 4, size - (size_t)(sep - buf) - 4);
			remat_graph_free(g);
		}
		return 0;
	}
	if (!fixed &&
	    remat_graph_load_buffer(fixed_graph, strlen(fixed_graph), "fixed", &fixed, &err) !=
	    REMAT_OK)
		abort();
	check(fixed, buf, size);
	return 0;
}
