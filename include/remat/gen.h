/*
 * remat/gen.h - graphs made rather than read: synthetic generators (a
 * training chain, a random layered DAG, a U-Net) and the training-graph
 * transform of a forward graph.  remat/io.h writes any of them to a file.
 *
 * Every generator is deterministic: the same options (seed included) give
 * the same graph, node for node, on every platform (the random numbers
 * come from a fixed 64-bit generator, never from rand()), so the writer's
 * output is byte-identical too.  All graphs are built through the builder
 * of graph.h, so they obey every rule of FORMATS.md section 1.
 */
#ifndef REMAT_GEN_H
#define REMAT_GEN_H

#include <stdint.h>
#include <stdio.h>

#include "remat/error.h"
#include "remat/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Training graph of a forward graph, after Checkmate's rule: one node
 * "loss" (kind loss) reading every non-input output of the forward graph;
 * for each non-input node v, one backward node reading the backward nodes
 * of v's users (the loss for an output), v's inputs and v itself, with
 * mem(v), grad_of v and cost = backward_factor * cost(v).  Input nodes get
 * no backward node.  The outputs are the backward nodes no other node
 * reads.  Node ids: the forward ids, "loss" and "<id>_backward" (the
 * naming the networkx importer maps back to grad_of); a clash with an
 * existing id is an error.  Nodes come out forward first (in the forward
 * graph's file order), then the loss, then the backward nodes in reverse
 * topological order of their forward nodes.
 */
struct remat_train_opts {
	double backward_factor;   /* backward cost / forward cost; default 2 */
	int64_t loss_mem;         /* bytes of the loss value; default 4 */
	double loss_cost;         /* default 1 */
	const char *name;         /* graph name; NULL: "<forward name>-train" */
};

/* Fill o with the defaults above. */
void remat_train_opts_init(struct remat_train_opts *o);

/*
 * Build the training graph of fwd into *out.  Fails (REMAT_EINPUT) when
 * fwd already has loss or backward nodes, or has no non-input output.
 * O(n + edges).
 */
int remat_graph_train(const struct remat_graph *fwd,
		      const struct remat_train_opts *o,
		      struct remat_graph **out, struct remat_error *err);

/*
 * Training chain of n layers: input "x", forward "f1".."fn" (fi reads
 * f(i-1), f1 reads x), then the training rule above with backward nodes
 * named "b1".."bn" instead of "fi_backward".  Sizes and costs are either
 * homogeneous (mem, cost) or, with random set, drawn uniformly per layer
 * from [mem_min, mem_max] and the integers in [cost_min, cost_max]; x has
 * the size of f1 in either case.
 */
struct remat_gen_chain_opts {
	int32_t n;                /* layers, >= 1 */
	int64_t mem;              /* default 1 MiB */
	double cost;              /* default 1 */
	int random;               /* 0: homogeneous */
	int64_t mem_min, mem_max; /* default 256 KiB .. 4 MiB */
	double cost_min, cost_max;/* default 1 .. 10 */
	uint64_t seed;
	int forward_only;         /* nonzero: stop before the loss */
	struct remat_train_opts train; /* train.name names the result, either
					  way (NULL: "train-chainN" or "chainN") */
};

void remat_gen_chain_opts_init(struct remat_gen_chain_opts *o);
int remat_gen_chain(const struct remat_gen_chain_opts *o,
		    struct remat_graph **out, struct remat_error *err);

/*
 * Random layered DAG after Gagrani et al. 2022 (appendix A), the family of
 * the published random_layered_n*_w*_nlv*_ed*_scd* graphs (Moccasin):
 *
 * 1. Node "0" is the source and node "1" the sink (cost 0, as published);
 *    the n-2 inner nodes "2".."n-1" fill layers in order.  Each layer's
 *    width is drawn uniformly from the integers in
 *    [m(1 - width_var), m(1 + width_var)] (at least 1) with mean
 *    m = 2 width sqrt(n), until the nodes run out.  (The published files'
 *    w and nlv fit this reading: n=1000, w=0.31 has 49 layers of mean
 *    width 20.4, against m = 19.6.)
 * 2. Every node of layers 2..L gets one uniform predecessor in the layer
 *    before; then every other pair of nodes in consecutive layers is an
 *    edge with probability edge_density; then each node still without a
 *    successor in the next layer gets a uniform one.  (The published files
 *    have about one edge per node more than edge_density alone gives:
 *    n=1000 has 5027 such edges where 0.2 of the pairs is 4033.)
 * 3. Skip edges: round(S / (1 - S) * E) more edges, E the count so far and
 *    S = skip_density, each from a uniform inner node of a layer l to a
 *    uniform node of a layer l+2 or later (repeats are drawn again), so
 *    that a fraction S of the inner edges skip a layer, as in the
 *    published files (13.5%-14% for scd 0.14).
 * 4. The source feeds every node of the first layer; every node of the
 *    last layer feeds the sink.
 * 5. mem: 10 * (1 + floor(Exp(mem_mean / 10))) bytes, as the published
 *    out_cost values (multiples of 10, roughly exponential, mean ~1900);
 *    cost: an integer uniform in [1, 1000], as their duration.
 *
 * Nodes are labelled "layer K".  All nodes are of kind op (an inference
 * graph); remat_graph_train() turns it into a training graph.
 */
struct remat_gen_layered_opts {
	int32_t n;                /* nodes, >= 3 */
	double width;             /* default 0.31 */
	double width_var;         /* default 0.75 */
	double edge_density;      /* default 0.2 */
	double skip_density;      /* default 0.14, in [0, 1) */
	double mem_mean;          /* default 1900 */
	uint64_t seed;
	const char *name;         /* NULL: random_layered_n<N>_w<W>_..._seed<S> */
};

void remat_gen_layered_opts_init(struct remat_gen_layered_opts *o);
int remat_gen_layered(const struct remat_gen_layered_opts *o,
		      struct remat_graph **out, struct remat_error *err);

/*
 * U-Net forward graph with long skip connections, depth levels:
 *   x -> e1a -> e1b -> p1 -> e2a -> e2b -> p2 ... -> pD -> m1 -> m2
 *   u_D = up(m2), c_D = concat(u_D, eDb) -> dDa -> dDb -> u_(D-1) ...
 *   d1b -> head
 * Level k (1-based) tensors have mem / 2^(k-1) bytes (spatial area / 4,
 * channels x 2), the concat twice that; pools and ups are the size of the
 * level they produce.  Costs are FLOP-like: a conv costs 9 * mem(out) /
 * mem (relative to one top-level tensor), other ops mem(out) / mem.  With
 * train set, the training rule is applied.
 */
struct remat_gen_unet_opts {
	int32_t depth;            /* levels, >= 1; default 4 */
	int64_t mem;              /* top-level tensor bytes; default 8 MiB */
	int train;
	struct remat_train_opts train_opts;
	const char *name;         /* NULL: "unet-d<depth>" (+ "-train") */
};

void remat_gen_unet_opts_init(struct remat_gen_unet_opts *o);
int remat_gen_unet(const struct remat_gen_unet_opts *o,
		   struct remat_graph **out, struct remat_error *err);

#ifdef __cplusplus
}
#endif
#endif
