/*
 * remat/graph.h - the computation graph (FORMATS.md section 1).
 *
 * A struct remat_graph is immutable once built.  Nodes are dense indices
 * 0..n-1 in file order; inputs and users are stored as CSR arrays (the
 * inputs of node v are in_idx[in_off[v] .. in_off[v+1]-1], deduplicated,
 * in file order).  topo[] is the stable topological order of FORMATS.md
 * (Kahn's algorithm, among ready nodes the one earliest in the file first)
 * and topo_pos[] its inverse.  Everything a graph owns lives in one arena
 * and goes away with one remat_graph_free() call.
 *
 * Graphs come from the JSON loader (remat_graph_load_* in remat/io.h) or,
 * for importers,
 * generators and tests, from the builder below.  Both apply every rule of
 * FORMATS.md section 1 and report violations naming the source, the node
 * id and the field.
 */
#ifndef REMAT_GRAPH_H
#define REMAT_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "remat/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum remat_kind {
	REMAT_KIND_OP = 0,
	REMAT_KIND_INPUT,
	REMAT_KIND_FORWARD,
	REMAT_KIND_LOSS,
	REMAT_KIND_BACKWARD
};

/* Largest accepted "mem" or "workspace": 2^53, exact in a JSON double. */
#define REMAT_MAX_BYTES ((int64_t)1 << 53)

struct remat_graph_store;

struct remat_graph {
	int32_t n;            /* number of nodes */
	int64_t n_edges;      /* distinct (input, node) pairs */
	const char *name;     /* "name" or the file's base name */
	const char *cost_unit;/* "cost_unit" or "unit" */
	const char *source;   /* file name used in messages */

	const char **id;      /* [n] */
	const char **label;   /* [n], NULL where absent */
	uint8_t *kind;        /* [n] enum remat_kind */
	uint8_t *recompute;   /* [n] 0: may be computed only once */
	uint8_t *is_output;   /* [n] */
	int64_t *mem;         /* [n] bytes of the node's output */
	int64_t *workspace;   /* [n] bytes held only while it runs */
	double *cost;         /* [n] compute cost; 0 for inputs */
	int32_t *grad_of;     /* [n] index or -1 */

	int32_t *in_off;      /* [n+1] CSR of distinct inputs */
	int32_t *in_idx;      /* [n_edges] */
	int32_t *use_off;     /* [n+1] CSR of users (reverse edges) */
	int32_t *use_idx;     /* [n_edges] */

	int32_t *topo;        /* [n] stable topological order */
	int32_t *topo_pos;    /* [n] position of each node in topo */

	int32_t n_outputs;
	int32_t *outputs;     /* [n_outputs] in the order given */
	int32_t n_inputs;     /* nodes of kind input */
	int32_t n_backward;   /* nodes of kind backward; 0: inference graph */

	/* Figures derived once at build time (see remat info). */
	int64_t total_mem;            /* sum of mem over all nodes */
	int64_t no_remat_peak;        /* FORMATS.md section 3 */
	int64_t min_peak_lower_bound; /* max over non-inputs of inputs+mem+ws */
	double baseline_cost;         /* sum of cost over non-input nodes */
	/*
	 * "fixed_bytes" (optional): device memory the step holds outside the
	 * graph from start to end (parameters, buffers, what the exporter
	 * leaves out); -1 when the file does not say.  A device of D bytes
	 * leaves D - fixed_bytes for the graph (remat plan --device-memory).
	 */
	int64_t fixed_bytes;

	struct remat_graph_store *store; /* internal: storage and the id index */
};

/* Index of the node with this id, or -1.  O(1) expected. */
int32_t remat_graph_find(const struct remat_graph *g, const char *id);

/* Free the graph and everything it owns.  g may be NULL. */
void remat_graph_free(struct remat_graph *g);

/* Name of a kind ("input", "forward", ...). */
const char *remat_kind_name(enum remat_kind k);

/*
 * Builder: construct a graph node by node, in any order.  Strings are
 * copied.  remat_builder_finish() resolves ids, checks every rule,
 * builds the CSR arrays and the topological order, and always consumes
 * the builder.
 */
struct remat_node_spec {
	const char *id;
	enum remat_kind kind;
	int64_t mem;
	int64_t workspace;
	double cost;           /* negative: the default (1, or 0 for inputs) */
	int recompute;         /* nonzero: may be recomputed */
	const char *label;     /* may be NULL */
	const char *grad_of;   /* may be NULL */
	const char *const *inputs;   /* n_inputs ids; NULL only when n_inputs is 0 */
	int32_t n_inputs;      /* >= 0 */
};

struct remat_graph_builder;

int remat_builder_new(const char *source, struct remat_graph_builder **out,
		      struct remat_error *err);
int remat_builder_set_name(struct remat_graph_builder *b, const char *name,
			   struct remat_error *err);
int remat_builder_set_cost_unit(struct remat_graph_builder *b,
				const char *unit, struct remat_error *err);
/* Add a node; checks the node's own fields (id, sizes, cost, kind rules). */
int remat_builder_add(struct remat_graph_builder *b,
		      const struct remat_node_spec *spec,
		      struct remat_error *err);
/* Declare an output; with none declared, every node nobody uses is one. */
int remat_builder_add_output(struct remat_graph_builder *b, const char *id,
			     struct remat_error *err);
/* Bytes resident outside the graph for the whole step (-1: not known). */
void remat_builder_set_fixed_bytes(struct remat_graph_builder *b, int64_t bytes);
/* Declare explicitly that the outputs list is present (possibly empty). */
void remat_builder_outputs_given(struct remat_graph_builder *b);
int remat_builder_finish(struct remat_graph_builder *b,
			 struct remat_graph **out, struct remat_error *err);
void remat_builder_free(struct remat_graph_builder *b);

#ifdef __cplusplus
}
#endif
#endif
