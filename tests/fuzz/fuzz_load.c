/*
 * fuzz_load.c - libFuzzer target for the graph loader: any byte string
 * must load or fail with a message, never crash, leak or hang.  When a
 * graph loads, the no-remat schedule must simulate valid.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "remat/remat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct remat_graph *g = NULL;
	struct remat_error err;
	struct remat_schedule s;
	struct remat_sim_result r;

	remat_error_clear(&err);
	if (remat_graph_load_buffer((const char *)data, size, "fuzz", &g, &err) != REMAT_OK) {
		if (!err.msg[0])
			abort(); /* every failure carries a message */
		return 0;
	}
	remat_schedule_init(&s);
	if (remat_schedule_topo(g, &s, &err) == REMAT_OK &&
	    remat_simulate(g, &s, -1, NULL, &r, &err) == REMAT_OK &&
	    (!r.valid || r.peak_mem != g->no_remat_peak))
		abort();
	remat_schedule_release(&s);
	remat_graph_free(g);
	return 0;
}
