/*
 * autodiff.c - the training graph of a forward graph (Checkmate's rule).
 *
 * Checkmate (Jain et al., MLSys 2020) builds the training graph of a
 * forward graph by reverse-mode differentiation at the level of whole
 * operators: the gradient step of v needs the gradient flowing back from
 * every consumer of v, plus the values v's operator itself read and
 * produced.  So:
 *
 * 1. Every forward node is kept (non-input nodes become kind forward).
 * 2. One loss node reads every non-input output of the forward graph.
 * 3. For each non-input node v, in reverse topological order, a backward
 *    node reads: the backward nodes of v's users (in the users' file
 *    order), the loss when v is a forward output, v's inputs, and v.  Its
 *    output is the gradient w.r.t. v's output, so mem = mem(v); its cost
 *    is backward_factor * cost(v); grad_of = v.
 *
 * Inputs (data) get no backward node: nothing upstream needs their
 * gradient.  O(n + edges) time and memory.  The rule over-approximates
 * what a real backward step reads (a ReLU's backward needs only its
 * output, a matmul's only its inputs); remat_torch/export.py gives the
 * exact dependencies for PyTorch models.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/gen.h"
#include "graph/gen_internal.h"

void remat_train_opts_init(struct remat_train_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backward_factor = 2.0;
	o->loss_mem = 4;
	o->loss_cost = 1.0;
}

static char *default_bw_name(const struct remat_graph *fwd, int32_t v, void *ctx)
{
	size_t len = strlen(fwd->id[v]);
	char *s = malloc(len + 10);

	(void)ctx;
	if (s) {
		memcpy(s, fwd->id[v], len);
		memcpy(s + len, "_backward", 10);
	}
	return s;
}

struct train_ctx {
	char **bw;            /* [n] backward ids, NULL for inputs */
	const char **ins;     /* scratch */
	char *name;
};

static void train_ctx_free(struct train_ctx *c, int32_t n)
{
	int32_t v;

	if (c->bw)
		for (v = 0; v < n; v++)
			free(c->bw[v]);
	free(c->bw);
	free(c->ins);
	free(c->name);
}

static int check_opts(const struct remat_train_opts *o, struct remat_error *err)
{
	if (!(o->backward_factor >= 0) || o->backward_factor > 1e300)
		return REMAT_FAIL(err, REMAT_EUSAGE,
				  "the backward cost factor must be a finite number >= 0");
	if (o->loss_mem < 0 || o->loss_mem > REMAT_MAX_BYTES)
		return REMAT_FAIL(err, REMAT_EUSAGE,
				  "the loss size must be an integer from 0 to 2^53");
	if (!(o->loss_cost >= 0) || o->loss_cost > 1e300)
		return REMAT_FAIL(err, REMAT_EUSAGE,
				  "the loss cost must be a finite number >= 0");
	return REMAT_OK;
}

/* Steps 1-2: forward nodes and the loss into b. */
static int add_forward(const struct remat_graph *fwd,
		       const struct remat_train_opts *o, struct train_ctx *c,
		       struct remat_graph_builder *b, struct remat_error *err)
{
	struct remat_node_spec s;
	int32_t v, k, n_loss_in = 0;

	for (v = 0; v < fwd->n; v++) {
		memset(&s, 0, sizeof(s));
		s.id = fwd->id[v];
		s.kind = fwd->kind[v] == REMAT_KIND_INPUT ? REMAT_KIND_INPUT
							   : REMAT_KIND_FORWARD;
		s.mem = fwd->mem[v];
		s.workspace = fwd->workspace[v];
		s.cost = fwd->cost[v];
		s.recompute = fwd->recompute[v];
		s.label = fwd->label[v];
		for (k = fwd->in_off[v]; k < fwd->in_off[v + 1]; k++)
			c->ins[s.n_inputs++] = fwd->id[fwd->in_idx[k]];
		s.inputs = c->ins;
		REMAT_TRY(remat_builder_add(b, &s, err));
	}
	memset(&s, 0, sizeof(s));
	for (k = 0; k < fwd->n_outputs; k++)
		if (fwd->kind[fwd->outputs[k]] != REMAT_KIND_INPUT)
			c->ins[n_loss_in++] = fwd->id[fwd->outputs[k]];
	if (n_loss_in == 0)
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: the graph has no non-input output for a loss to read",
				  fwd->source);
	s.id = "loss";
	s.kind = REMAT_KIND_LOSS;
	s.mem = o->loss_mem;
	s.cost = o->loss_cost;
	s.recompute = 1;
	s.inputs = c->ins;
	s.n_inputs = n_loss_in;
	return remat_builder_add(b, &s, err);
}

/* Step 3: backward nodes, reverse topological order. */
static int add_backward(const struct remat_graph *fwd,
			const struct remat_train_opts *o, struct train_ctx *c,
			struct remat_graph_builder *b, struct remat_error *err)
{
	struct remat_node_spec s;
	int32_t i, v, k, n;

	for (i = fwd->n - 1; i >= 0; i--) {
		v = fwd->topo[i];
		if (fwd->kind[v] == REMAT_KIND_INPUT)
			continue;
		memset(&s, 0, sizeof(s));
		n = 0;
		for (k = fwd->use_off[v]; k < fwd->use_off[v + 1]; k++)
			c->ins[n++] = c->bw[fwd->use_idx[k]];
		if (fwd->is_output[v])
			c->ins[n++] = "loss";
		for (k = fwd->in_off[v]; k < fwd->in_off[v + 1]; k++)
			c->ins[n++] = fwd->id[fwd->in_idx[k]];
		c->ins[n++] = fwd->id[v];
		s.id = c->bw[v];
		s.kind = REMAT_KIND_BACKWARD;
		s.mem = fwd->mem[v];
		s.cost = o->backward_factor * fwd->cost[v];
		s.recompute = 1;
		s.grad_of = fwd->id[v];
		s.inputs = c->ins;
		s.n_inputs = n;
		REMAT_TRY(remat_builder_add(b, &s, err));
	}
	return REMAT_OK;
}

int remat_i_train(const struct remat_graph *fwd, const struct remat_train_opts *o,
		  remat_i_bw_name_fn name_fn, void *ctx, const char *name,
		  struct remat_graph **out, struct remat_error *err)
{
	struct remat_graph_builder *b = NULL;
	struct remat_train_opts defaults;
	struct train_ctx c;
	int32_t v;
	size_t max_ins;
	int rc;

	*out = NULL;
	if (!o) {
		remat_train_opts_init(&defaults);
		o = &defaults;
	}
	REMAT_TRY(check_opts(o, err));
	if (!name_fn)
		name_fn = default_bw_name;
	for (v = 0; v < fwd->n; v++)
		if (fwd->kind[v] == REMAT_KIND_LOSS || fwd->kind[v] == REMAT_KIND_BACKWARD)
			return REMAT_FAIL(err, REMAT_EINPUT,
					  "%s: node '%s': already a training graph (kind %s)",
					  fwd->source, fwd->id[v],
					  remat_kind_name((enum remat_kind)fwd->kind[v]));
	if (remat_graph_find(fwd, "loss") >= 0)
		return REMAT_FAIL(err, REMAT_EINPUT,
				  "%s: node 'loss': the id is taken, so the loss node cannot have it",
				  fwd->source);
	memset(&c, 0, sizeof(c));
	/* A backward node reads users + loss + inputs + itself. */
	max_ins = (size_t)fwd->n_edges * 2 + (size_t)fwd->n + 2;
	c.bw = calloc((size_t)fwd->n + 1, sizeof(char *));
	c.ins = malloc(sizeof(char *) * max_ins);
	if (!c.bw || !c.ins) {
		rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
		goto out;
	}
	for (v = 0; v < fwd->n; v++) {
		if (fwd->kind[v] == REMAT_KIND_INPUT)
			continue;
		if (!(c.bw[v] = name_fn(fwd, v, ctx))) {
			rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
			goto out;
		}
		if (remat_graph_find(fwd, c.bw[v]) >= 0) {
			rc = REMAT_FAIL(err, REMAT_EINPUT,
					"%s: node '%s': the id is taken, so the backward node of '%s' cannot have it",
					fwd->source, c.bw[v], fwd->id[v]);
			goto out;
		}
	}
	if (!name)
		name = o->name;
	if (!name) {
		size_t len = strlen(fwd->name);

		if (!(c.name = malloc(len + 7))) {
			rc = REMAT_FAIL(err, REMAT_ENOMEM, "out of memory");
			goto out;
		}
		memcpy(c.name, fwd->name, len);
		memcpy(c.name + len, "-train", 7);
		name = c.name;
	}
	rc = remat_builder_new(fwd->source, &b, err);
	if (rc == REMAT_OK)
		rc = remat_builder_set_name(b, name, err);
	if (rc == REMAT_OK)
		rc = remat_builder_set_cost_unit(b, fwd->cost_unit, err);
	if (rc == REMAT_OK)
		remat_builder_set_fixed_bytes(b, fwd->fixed_bytes);
	if (rc == REMAT_OK)
		rc = add_forward(fwd, o, &c, b, err);
	if (rc == REMAT_OK)
		rc = add_backward(fwd, o, &c, b, err);
	if (rc == REMAT_OK) {
		rc = remat_builder_finish(b, out, err);
		b = NULL; /* consumed */
	}
out:
	remat_builder_free(b);
	train_ctx_free(&c, fwd->n);
	return rc;
}

int remat_graph_train(const struct remat_graph *fwd,
		      const struct remat_train_opts *o,
		      struct remat_graph **out, struct remat_error *err)
{
	return remat_i_train(fwd, o, NULL, NULL, NULL, out, err);
}
