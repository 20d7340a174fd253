/*
 * fuzz_load.c - libFuzzer target for the graph loader: any byte string
 * must load or fail with a message, never crash, leak or hang.  When a
 * graph loads, the no-remat schedule must simulate valid.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "remat/remat.h"
#include "judge.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct remat_graph *g = NULL;
	struct remat_error err;
	int rc;

	remat_error_clear(&err);
	rc = remat_graph_load_buffer((const char *)data, size, "fuzz", &g, &err);
	judge_loaded(rc, g, &err);
	return 0;
}
