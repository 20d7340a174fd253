/*
 * remat/io.h - files in and out: the remat-graph loader (and its networkx
 * node-link importer), the remat-graph writer, and reading and writing
 * remat-schedule files (docs/FORMATS.md sections 1 and 2).
 *
 * Readers report every problem as REMAT_EINPUT naming the file, the node
 * or step and the field.  Every reader goes through one strict JSON
 * reader (RFC 8259, errors with line and column): duplicate keys, text
 * that is not UTF-8, \u0000 or unpaired surrogates in strings, numbers
 * JSON does not allow or a double cannot hold, integers beyond what a
 * double tells apart (2^53 + 1 is not 2^53), nesting deeper than 1000
 * levels and NUL bytes are all errors.  Files are read up to a limit
 * (2 GiB, or the environment variable REMAT_MAX_INPUT: "8GiB"); a larger
 * file is REMAT_EINPUT, an unreadable REMAT_MAX_INPUT REMAT_EUSAGE.
 * Writers that take a path write atomically: a temporary file in the
 * target's directory, flushed and synced, then renamed into place, so an
 * interrupted run never leaves a half-written file.
 */
#ifndef REMAT_IO_H
#define REMAT_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "remat/error.h"
#include "remat/graph.h"
#include "remat/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

struct remat_sim_result;

/* ---- graphs ---- */

/*
 * Load a remat-graph JSON file.  On success *out owns a new graph.
 * Errors are REMAT_EINPUT (unreadable file, JSON syntax with line and
 * column, any rule of FORMATS.md) or REMAT_ENOMEM.  Time and memory are
 * linear in the file size (plus n log n for the topological order).
 */
int remat_graph_load_file(const char *path, struct remat_graph **out,
			  struct remat_error *err);

/* The same from a buffer; source names it in messages. */
int remat_graph_load_buffer(const char *buf, size_t len, const char *source,
			    struct remat_graph **out, struct remat_error *err);

/*
 * networkx node-link JSON (as networkx.node_link_data writes it, and as
 * Checkmate's and Moccasin's published graphs are released).  The loader
 * (remat_graph_load_*) detects it by itself: no "format" field, and both
 * "nodes" and "links".  Mapping, node by node in file order:
 *   id       "name" when present, else the node key ("id")
 *   mem      "cost_ram", "out_cost" or "mem" (integer bytes; required)
 *   cost     "cost_cpu", "duration" or "cost" (default 1)
 *   kind     with a "backward" field: loss for the node named "Loss",
 *            backward when true, forward when false; without it: op
 *   grad_of  for a backward node "X_backward" where a node "X" exists
 *   inputs   the sources of the links into the node, in link order;
 *            links use "source"/"target" or "0"/"1" and refer to nodes by
 *            their key: "id" when every node has one, else "name"
 * With REMAT_NX_GRAPH_ORDER the nodes are listed in the order of the
 * file's "graph": {"order": [keys...]} (the topological order Moccasin's
 * authors used) instead of file order.
 */
#define REMAT_NX_GRAPH_ORDER 1u

int remat_nx_load_file(const char *path, unsigned flags,
		       struct remat_graph **out, struct remat_error *err);
int remat_nx_load_buffer(const char *buf, size_t len, const char *source,
			 unsigned flags, struct remat_graph **out,
			 struct remat_error *err);

/*
 * Write g as remat-graph JSON, one node per line, fields in a fixed order
 * (id, kind, mem, cost, workspace, inputs, grad_of, recompute, label),
 * defaults left out (kind op, workspace 0, recompute true, an input's
 * cost) and "outputs" written only when they differ from the default (the
 * nodes nobody uses).  Loading the result gives g back node for node.
 */
int remat_graph_write(FILE *f, const struct remat_graph *g,
		      struct remat_error *err);
/*
 * The same into path, atomically (a temporary file in the same directory,
 * synced, then renamed into place); "-" writes to stdout.
 */
int remat_graph_write_file(const char *path, const struct remat_graph *g,
			   struct remat_error *err);

/* ---- schedules ---- */

/*
 * Read a remat-schedule JSON file against g.  "format" and "version" are
 * required, as in a graph file.  Node ids are resolved to indices; an
 * unknown id or op is REMAT_EINPUT naming the step.
 */
int remat_schedule_read(const char *path, const struct remat_graph *g,
			struct remat_schedule *out, struct remat_error *err);
int remat_schedule_read_buffer(const char *buf, size_t len,
			       const char *source,
			       const struct remat_graph *g,
			       struct remat_schedule *out,
			       struct remat_error *err);

/* What goes into a written schedule besides its steps. */
struct remat_schedule_meta {
	const char *planner;                  /* may be NULL */
	int64_t budget;                       /* -1: none */
	const struct remat_sim_result *summary; /* may be NULL */
};

/*
 * Write s as remat-schedule JSON to path atomically: a temporary file in
 * the same directory, flushed and synced, then renamed into place.  On
 * any failure the temporary is removed and path is untouched.
 */
int remat_schedule_write(const char *path, const struct remat_graph *g,
			 const struct remat_schedule *s,
			 const struct remat_schedule_meta *meta,
			 struct remat_error *err);

#ifdef __cplusplus
}
#endif
#endif
