/* testutil.c - helpers for the cmocka tests; see testutil.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

const char *const TU_KUMAR =
	"{\"format\":\"remat-graph\",\"version\":1,\"name\":\"kumar-fig1\",\"nodes\":["
	"{\"id\":\"A\",\"mem\":1},"
	"{\"id\":\"B\",\"mem\":1,\"inputs\":[\"A\"]},"
	"{\"id\":\"C\",\"mem\":1,\"inputs\":[\"B\"]},"
	"{\"id\":\"D\",\"mem\":1,\"inputs\":[\"B\",\"C\"]},"
	"{\"id\":\"E\",\"mem\":1,\"inputs\":[\"A\",\"D\"]}]}";

struct remat_graph *tu_graph(const char *json)
{
	struct remat_graph *g = NULL;
	struct remat_error err;
	int rc;

	remat_error_clear(&err);
	rc = remat_graph_load_buffer(json, strlen(json), "t.json", &g, &err);
	if (rc)
		fail_msg("graph did not load: %s", err.msg);
	return g;
}

int tu_graph_err(const char *json, struct remat_error *err)
{
	struct remat_graph *g = NULL;
	int rc;

	remat_error_clear(err);
	rc = remat_graph_load_buffer(json, strlen(json), "t.json", &g, err);
	if (rc == REMAT_OK)
		remat_graph_free(g);
	return rc;
}

void tu_sched(const struct remat_graph *g, const char *text, struct remat_schedule *s)
{
	char buf[4096], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", text);
	remat_schedule_clear(s);
	for (tok = strtok_r(buf, " ,\n", &save); tok; tok = strtok_r(NULL, " ,\n", &save)) {
		int fr = tok[0] == '-';
		int32_t v = remat_graph_find(g, tok + fr);

		if (v < 0)
			fail_msg("unknown node '%s' in schedule text", tok + fr);
		assert_int_equal(remat_schedule_push(s, fr ? REMAT_OP_FREE : REMAT_OP_COMPUTE,
						     v, NULL), REMAT_OK);
	}
}

struct remat_sim_result tu_sim(const struct remat_graph *g, const char *text, int64_t budget)
{
	struct remat_schedule s;
	struct remat_sim_result r;

	remat_schedule_init(&s);
	tu_sched(g, text, &s);
	assert_int_equal(remat_simulate(g, &s, budget, NULL, &r, NULL), REMAT_OK);
	remat_schedule_release(&s);
	return r;
}

const char *tu_sched_text(const struct remat_graph *g, const struct remat_schedule *s)
{
	static char buf[8192];
	size_t used = 0;
	int64_t i;

	buf[0] = '\0';
	for (i = 0; i < s->n && used < sizeof(buf) - 64; i++) {
		int w = snprintf(buf + used, sizeof(buf) - used, "%s%s%s", i ? " " : "",
				 s->steps[i].op == REMAT_OP_FREE ? "-" : "",
				 g->id[s->steps[i].node]);
		if (w > 0)
			used += (size_t)w;
	}
	return buf;
}

uint64_t tu_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 88172645463325252ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

char *tu_random_graph_json(uint64_t *state, int n, double p, int training)
{
	size_t cap = (size_t)n * (size_t)n * 24 + 4096, used = 0;
	char *buf = malloc(cap);
	unsigned char *adj = calloc((size_t)n * (size_t)n + 1, 1); /* adj[j*n+i]: j -> i */
	unsigned char *from_x = calloc((size_t)n + 1, 1);
	int i, j, first;

	for (i = 0; i < n; i++) {
		from_x[i] = i == 0 || tu_rand(state) % 4 == 0;
		for (j = 0; j < i; j++)
			adj[j * n + i] = j == i - 1 || (double)(tu_rand(state) % 1000) < p * 1000;
	}
#define OUT(...) used += (size_t)snprintf(buf + used, cap - used, __VA_ARGS__)
	OUT("{\"format\":\"remat-graph\",\"version\":1,\"name\":\"rand\",\"nodes\":[");
	OUT("{\"id\":\"x\",\"kind\":\"input\",\"mem\":%d}", (int)(1 + tu_rand(state) % 8));
	for (i = 0; i < n; i++) {
		OUT(",{\"id\":\"n%d\",\"kind\":\"%s\",\"mem\":%d,\"cost\":%d,\"inputs\":[",
		    i, training ? "forward" : "op", (int)(1 + tu_rand(state) % 8),
		    (int)(1 + tu_rand(state) % 5));
		first = 1;
		if (from_x[i]) {
			OUT("\"x\"");
			first = 0;
		}
		for (j = 0; j < i; j++)
			if (adj[j * n + i]) {
				OUT("%s\"n%d\"", first ? "" : ",", j);
				first = 0;
			}
		OUT("]}");
	}
	if (training) {
		/*
		 * Checkmate's rule: b_i reads the gradients of i's consumers
		 * (the loss for the last node), i's inputs and i itself.
		 */
		OUT(",{\"id\":\"loss\",\"kind\":\"loss\",\"mem\":1,\"inputs\":[\"n%d\"]}", n - 1);
		for (i = n - 1; i >= 0; i--) {
			OUT(",{\"id\":\"b%d\",\"kind\":\"backward\",\"grad_of\":\"n%d\",\"mem\":%d,"
			    "\"cost\":2,\"inputs\":[\"n%d\"", i, i, (int)(1 + tu_rand(state) % 8), i);
			if (i == n - 1)
				OUT(",\"loss\"");
			if (from_x[i])
				OUT(",\"x\"");
			for (j = 0; j < n; j++) {
				if (j < i && adj[j * n + i])
					OUT(",\"n%d\"", j);
				if (j > i && adj[i * n + j])
					OUT(",\"b%d\"", j);
			}
			OUT("]}");
		}
		OUT("],\"outputs\":[\"b0\"]}");
	} else {
		OUT("]}");
	}
#undef OUT
	free(adj);
	free(from_x);
	return buf;
}
