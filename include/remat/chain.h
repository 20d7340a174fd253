/*
 * remat/chain.h - the chain view of a graph: its forward part cut into a
 * sequence of stages at 1-separators, each backward node attached to a
 * stage, and per stage the figures that chain planners (Chen's
 * segmentation, Rotor's dynamic program) reason with.
 *
 * How a graph is cut (remat_chain_build):
 *
 * 1. The forward part is every needed (some output depends on it)
 *    non-input node that has no backward node among its ancestors.  The
 *    rest of the needed non-input nodes -- the backward nodes and anything
 *    computed from them -- form the backward part.  Input nodes belong to
 *    no stage: they are resident from the start and never recomputed.
 *    Static values belong to no stage either: forward nodes that no input
 *    node reaches (a causal mask, position ids, a zero initial state),
 *    when some input reaches the targets.  They are computed once, when
 *    first read, and count as resident the whole step (input_mem).
 * 1b. Aliases: an exporter models an in-place operator or a view as a
 *    node of size 0 whose readers all read the storage's owner too.  A
 *    size-0 node v is an alias of the owner of its input u (u's owner when
 *    u is itself an alias) when every reader of v reads that owner; owner
 *    and aliases are one memory object (alias_of[]).  Edges between
 *    members of one object never break a cut, and only the object's last
 *    chain member can be a separator; a stage's input and output sizes
 *    are the owner's size.
 * 2. Targets: the forward part's loss nodes; without any, its outputs;
 *    without any, its sinks.  A forward node is on the chain when some
 *    target depends on it.
 * 3. The separators: in the topological order of the chain nodes, v is
 *    one when it is the last chain node of its memory object (1b) and
 *    every edge from an earlier chain node to a later one leaves v's
 *    object.  Edges from inputs and static values never break a cut
 *    (they are resident the whole step), so a chain node reading only
 *    such values (a reshape of the labels beside the loss) does not
 *    either.  Without aliases this is a 1-separator of the forward part
 *    taken in that order: the cut holds one value.  One linear sweep
 *    finds them.  Segments run from just after one separator up to and
 *    including the next.
 * 4. Forward nodes off the chain (a dropout mask read only by a backward
 *    node, say) join the latest segment among their inputs and the
 *    segments of their consumers in the backward part.
 * 5. A backward node joins the segment of its grad_of.  Without grad_of
 *    it joins the segment of the forward node it reads that comes latest
 *    in topological order (the nearest one); when it reads no forward
 *    node, the earliest segment among the backward nodes it reads; when
 *    it reads neither, the last segment.
 * 6. In a training graph a segment that received no backward node (the
 *    loss alone, a reshape whose gradient is folded into its neighbour)
 *    is merged into the next segment; trailing ones merge into the last
 *    segment that has backward nodes.  Segments become stages.
 *
 * A graph that does not decompose is one stage; a graph without backward
 * nodes is an inference chain (n_backward == 0 in the graph).  Time and
 * memory O(n + e).
 *
 * Cuts of several values (REMAT_CHAIN_CUTS).  A stacked LSTM unrolled in
 * time is a grid: between two time steps the hidden and cell states of
 * every layer cross, so rule 3 finds no separator.  This view keeps
 * rules 1, 1b and 2 and replaces rule 3: a boundary may carry several
 * memory objects, as long as no edge between chain nodes jumps over a
 * whole stage (every value a stage's forward reads from an earlier stage
 * comes from the stage just before).  Boundaries never split a memory
 * object.  After a boundary b, the next one lies at or after the first
 * rank R(b) that the edges from ranks <= b allow; among the ranks from
 * R(b) up to (not including) R(b) + (R(b) - b), or R(b) + 1 when that is
 * less, it is the one whose cut holds the fewest bytes (the earliest on a
 * tie), or the first allowed rank after them.
 * On a chain of single values this cuts where rule 3 does; on the LSTM
 * it cuts between time steps.  A stage's exit is then a set of objects
 * (those its forward computes and a later stage's forward reads), the
 * next stage's entry the same set; x and y are their bytes.
 *
 * Gathers: a node that reads 8 or more chain values (the stack of every
 * time step's output at an LSTM's end) would keep any cut from holding,
 * so edges into gathers do not count when boundaries are chosen.  Where
 * such nodes are more than a quarter of the chain nodes (a dense random
 * DAG, where most nodes read that many) none counts as a gather.  A
 * chain node read only by gathers and larger than what it reads (an LSTM
 * step's output projection) joins the stage of its first gather, so that
 * its smaller inputs pass instead of it.  An
 * object that a gather more than one stage later reads is then
 * *passing*: it is in no exit, the stage figures do not count it, and
 * input_mem counts it as resident the whole step.  That over-counts it
 * before it is computed and after its last reader, never under-counts
 * it.  rotor and rockmate let their internal budget rise by those bytes
 * (at most doubling their table), so their plans rest on the simulator,
 * which judges every plan anyway.
 */
#ifndef REMAT_CHAIN_H
#define REMAT_CHAIN_H

#include <stdint.h>

#include "remat/error.h"
#include "remat/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One stage (or a run of merged stages).  Bytes are measured by replaying
 * the stage's nodes under the simulator's rules (FORMATS.md section 2:
 * while a node runs, resident outputs + its output + its workspace), with
 * the stage input x held by the caller.  These are Rotor's chain figures
 * (Beaumont et al. 2019; Rockmate appendix C): x_i, x-bar_i, fwd_tmp,
 * bwd_tmp, plus what a node-level graph adds (gradient sizes that differ
 * from activation sizes, outputs that stay resident).
 */
struct remat_stage {
	int32_t fwd_off, n_fwd;   /* forward nodes: chain fwd[fwd_off ...], topo order */
	int32_t bwd_off, n_bwd;   /* backward nodes: chain bwd[bwd_off ...], topo order */
	int32_t entry;            /* node whose output is the stage input, -1 for none
				     (with cuts of several values: the latest of them) */
	int32_t exit;             /* separator closing the stage (its output), -1 for none
				     (with cuts of several values: the latest of them) */

	double fwd_cost;          /* every forward node once */
	double fwd_cost_ng;       /* only the nodes the exit depends on */
	double fwd_cost_h;        /* forward when the exit is still resident: the
				     nodes its backward needs, except the exit */
	double bwd_cost;          /* every backward node once */

	int64_t x;                /* bytes of the stage input (mem of entry's owner;
				     cuts view: of every entry object) */
	int64_t y;                /* bytes of the stage output (mem of exit's owner;
				     cuts view: of every exit object) */
	int64_t xbar;             /* bytes a forward that keeps all leaves resident, y included */
	int64_t fwd_tmp;          /* peak of that forward minus xbar */
	int64_t fwd_tmp_h;        /* the same when the exit is resident and not recomputed */
	int64_t fwd_tmp_ng;       /* peak of a forward keeping only y, minus y */
	int64_t fwd_peak_ng_in;   /* same forward when it also holds and frees x */
	int64_t grad_in;          /* bytes of later stages' gradients its backward reads */
	int64_t grad;             /* bytes its backward leaves for earlier stages */
	int64_t bwd_start;        /* resident at backward start: kept xbar + grad_in */
	int64_t bwd_tmp;          /* peak of the backward minus bwd_start */
	int64_t out_mem;          /* bytes of outputs it computes (resident to the end) */
	int input_live;           /* x is read after the stage's forward (by its own or
				     a later stage's backward, a later forward, or as an
				     output); 0 lets a plan free it right after */
	int norecompute;          /* the no-grad forward would recompute an output or a
				     "recompute": false node: run its forward once only */
};

struct remat_chain {
	int32_t n_stages;
	struct remat_stage *stages;   /* [n_stages] */
	int32_t n_fwd, n_bwd;
	int32_t *fwd;                 /* forward nodes stage by stage */
	uint8_t *fwd_ng;              /* [n_fwd] 1: on the chain (needed for the exit) */
	uint8_t *fwd_h;               /* [n_fwd] 1: recomputed when the exit is resident */
	int32_t *bwd;                 /* backward nodes stage by stage */
	int32_t *stage_of;            /* [n] stage of each node, -1 inputs, static
					 values and unneeded */
	int32_t *alias_of;            /* [n] owner of the node's memory object (itself
					 when it is no alias) */
	int32_t *exit_stage;          /* [n] for an object's owner: the stage whose exit
					 the object is (a later stage's forward reads
					 it), -1 for none; see remat_chain_in_exit() */
	int64_t *exit_mem;            /* [n_stages] bytes of each stage's exit */
	uint8_t *passing;             /* [n] cuts view: 1 for the owner of an object a
					 chain node more than one stage later reads;
					 NULL in the other views */
	int32_t n_passing;            /* passing objects */
	int64_t passing_mem;          /* their bytes (counted in input_mem) */
	int32_t widest_cut;           /* most memory objects in one stage's exit */
	uint8_t *is_static;           /* [n] 1: a static value (rule 1) */
	int32_t n_static;             /* static values found */
	int32_t n_aliases;            /* nodes that alias another node's storage */
	uint8_t *is_bwd;              /* [n] 1: in the backward part */
	int32_t *bwd_reader_min;      /* [n] earliest stage whose backward reads it, or n_stages */
	int64_t *grad_at;             /* [n_stages + 1] bytes crossing boundary k backwards */
	int32_t n_separators;         /* 1-separators found (before merging) */
	int32_t n_segments;           /* segments before merging */
	int32_t largest;              /* stage with the most nodes, -1 when none */
	int32_t largest_nodes;
	int64_t input_mem;            /* bytes of the graph's input nodes and of the
					 static values: resident the whole step */
	int training;                 /* the graph has backward nodes */
};

/*
 * Build the chain view of g.  On success *out owns a new chain, freed with
 * remat_chain_free().  Errors: REMAT_ENOMEM only; every graph has a chain
 * view (possibly one stage, or none when g has no computed nodes).
 */
int remat_chain_build(const struct remat_graph *g, struct remat_chain **out,
		      struct remat_error *err);

/*
 * Views remat_chain_build_ex() can take.  REMAT_CHAIN_PLAIN leaves out
 * rules 1b and 1's static values: every node is its own memory object
 * and every forward node is on the chain or off it by rule 4, as cuts
 * were found before aliasing was seen through.  It cuts graphs with
 * aliases less finely, but its stages hold each value's own size, which
 * on some graphs (VGG's in-place ReLUs) lets a chain planner fit where
 * the objects' view does not; the chain planners plan on both
 * (src/plan/stage_plan.c) and keep the better.
 */
enum remat_chain_view {
	REMAT_CHAIN_OBJECTS = 0,  /* the default: rules 1 to 6 as above */
	REMAT_CHAIN_PLAIN = 1,
	REMAT_CHAIN_CUTS = 2      /* rules 1, 1b, 2, and cuts of several values */
};

int remat_chain_build_ex(const struct remat_graph *g, enum remat_chain_view view,
			 struct remat_chain **out, struct remat_error *err);

void remat_chain_free(struct remat_chain *c);

/*
 * Is v part of the exit of stage s (s's output, read by a later stage's
 * forward)?  Stage s + 1's entry is the same set.  -1 <= s < n_stages.
 */
int remat_chain_in_exit(const struct remat_chain *c, int32_t v, int32_t s);

/*
 * Measure stages a..b (0-based, inclusive) as one merged stage into *st
 * (the lists are left empty: fwd_off = n_fwd = 0 ...).  scratch holds
 * 2 * g->n int32 all equal to -1 and is returned that way.  O(nodes and
 * edges of the stages).
 */
int remat_chain_measure(const struct remat_graph *g, const struct remat_chain *c,
			int32_t a, int32_t b, int32_t *scratch,
			struct remat_stage *st);

/*
 * Options of one stage s (Rockmate's per-block schedules): drop[] (indexed
 * by node) marks forward nodes of s that F_all does not keep for the
 * backward; the backward recomputes each just before its first reader,
 * with the nodes of s it needs that are not resident either.
 *
 * remat_chain_option_seq() writes that backward's compute sequence
 * (recomputations and backward nodes, in order) into seq, which has room
 * for n_fwd + n_bwd of s, and returns its length; mark (g->n zeros) and
 * stack (n_fwd of s) are scratch, mark is returned zeroed.
 * remat_chain_measure_option() measures s as remat_chain_measure() does,
 * with the dropped nodes freed after their last forward reader (xbar,
 * fwd_tmp, fwd_tmp_h, bwd_start less them) and seq as the backward (bwd_cost and
 * bwd_tmp include the recomputations).
 */
int32_t remat_chain_option_seq(const struct remat_graph *g, const struct remat_chain *c,
			       int32_t s, const uint8_t *drop, uint8_t *mark, int32_t *stack,
			       int32_t *seq);
int remat_chain_measure_option(const struct remat_graph *g, const struct remat_chain *c,
			       int32_t s, const uint8_t *drop, const int32_t *seq,
			       int32_t nseq, int32_t *scratch, struct remat_stage *st);

#ifdef __cplusplus
}
#endif
#endif
