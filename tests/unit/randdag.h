/*
 * randdag.h - random DAGs whose topological orders differ (the file's
 * order is often poor), for tests of orders and of planners that follow
 * one.  Header-only.
 */
#ifndef REMAT_TEST_RANDDAG_H
#define REMAT_TEST_RANDDAG_H

#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

/*
 * A random DAG that is not a chain: n op nodes in a few layers, each
 * reading 1 to 3 nodes of earlier layers (or the input x), sizes 1..9,
 * some workspace.  The outputs: the nodes nobody reads, or with
 * one_output the last node, which then also reads up to three of the
 * nodes nobody else reads (the rest are needed by no output).  JSON,
 * malloc'd.
 */
static inline char *random_dag_out(uint64_t *st, int n, int one_output)
{
	size_t cap = (size_t)n * 200 + 512, used = 0;
	char *buf = malloc(cap);
	int i, k, layer[64], width = 1 + (int)(tu_rand(st) % 3), read[64] = { 0 };

	used += (size_t)snprintf(buf + used, cap - used,
				 "{\"format\":\"remat-graph\",\"version\":1,\"nodes\":["
				 "{\"id\":\"x\",\"kind\":\"input\",\"mem\":%d}",
				 (int)(1 + tu_rand(st) % 4));
	for (i = 0; i < n; i++) {
		int nin = 1 + (int)(tu_rand(st) % 3), first = 1;

		layer[i] = i < width ? 0 : layer[i - 1] + (tu_rand(st) % 3 == 0);
		used += (size_t)snprintf(buf + used, cap - used,
					 ",{\"id\":\"n%d\",\"mem\":%d,\"workspace\":%d,\"cost\":%d,"
					 "\"inputs\":[", i, (int)(1 + tu_rand(st) % 9),
					 (int)(tu_rand(st) % 4 == 0 ? tu_rand(st) % 3 : 0),
					 (int)(1 + tu_rand(st) % 5));
		for (k = 0; k < nin; k++) {
			int j = (int)(tu_rand(st) % (unsigned)(i + 1)) - 1;

			if (j >= 0 && layer[j] >= layer[i])
				j = -1;
			if (j < 0 && !first)
				continue;
			if (j >= 0)
				read[j] = 1;
			if (j < 0)
				used += (size_t)snprintf(buf + used, cap - used, "%s\"x\"",
							 first ? "" : ",");
			else
				used += (size_t)snprintf(buf + used, cap - used, "%s\"n%d\"",
							 first ? "" : ",", j);
			first = 0;
		}
		if (one_output && i == n - 1) {
			int j, extra = 0;

			for (j = 0; j < i && extra < 3; j++)
				if (!read[j] && layer[j] < layer[i]) {
					used += (size_t)snprintf(buf + used, cap - used, ",\"n%d\"", j);
					read[j] = 1;
					extra++;
				}
		}
		used += (size_t)snprintf(buf + used, cap - used, "]}");
	}
	if (one_output)
		used += (size_t)snprintf(buf + used, cap - used, "],\"outputs\":[\"n%d\"]}", n - 1);
	else
		used += (size_t)snprintf(buf + used, cap - used, "]}");
	return buf;
}

static inline char *random_dag(uint64_t *st, int n)
{
	return random_dag_out(st, n, 0);
}

#endif
