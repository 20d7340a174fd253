/* gen_internal.h - internals shared by gen.c and autodiff.c. */
#ifndef REMAT_GEN_INTERNAL_H
#define REMAT_GEN_INTERNAL_H

#include "remat/gen.h"

/*
 * Name of the backward node of forward node v: a malloc'd string, or NULL
 * when out of memory.  ctx is the caller's.
 */
typedef char *(*remat_i_bw_name_fn)(const struct remat_graph *fwd, int32_t v,
				     void *ctx);

/*
 * remat_graph_train() with a caller-chosen backward naming (NULL: the
 * default "<id>_backward") and graph name (NULL: o->name or
 * "<name>-train").
 */
int remat_i_train(const struct remat_graph *fwd, const struct remat_train_opts *o,
		  remat_i_bw_name_fn name_fn, void *ctx, const char *name,
		  struct remat_graph **out, struct remat_error *err);

#endif
