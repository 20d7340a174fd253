/*
 * write.c - a graph back to remat-graph JSON (FORMATS.md section 1).
 *
 * One node per line keeps large graphs diffable and small (no indentation
 * inside a node); defaults are left out so that a generated or imported
 * graph reads like a hand-written one.  The file is written atomically
 * (temporary file + rename) because convert and gen are often pointed at
 * the file a later command reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remat/gen.h"
#include "remat/io.h"
#include "core/atomic.h"
#include "core/util.h"

/* Are g's outputs exactly the nodes nobody uses, in index order? */
static int default_outputs(const struct remat_graph *g)
{
	int32_t v, k = 0;

	for (v = 0; v < g->n; v++) {
		if (g->use_off[v + 1] != g->use_off[v])
			continue;
		if (k >= g->n_outputs || g->outputs[k] != v)
			return 0;
		k++;
	}
	return k == g->n_outputs;
}

static void write_node(FILE *f, const struct remat_graph *g, int32_t v)
{
	int32_t k;

	fputs("{\"id\":", f);
	remat_i_json_write_str(f, g->id[v]);
	if (g->kind[v] != REMAT_KIND_OP) {
		fputs(",\"kind\":", f);
		remat_i_json_write_str(f, remat_kind_name((enum remat_kind)g->kind[v]));
	}
	fprintf(f, ",\"mem\":%lld", (long long)g->mem[v]);
	if (g->kind[v] != REMAT_KIND_INPUT) {
		fputs(",\"cost\":", f);
		remat_i_json_write_num(f, g->cost[v]);
	}
	if (g->workspace[v])
		fprintf(f, ",\"workspace\":%lld", (long long)g->workspace[v]);
	if (g->in_off[v + 1] > g->in_off[v]) {
		fputs(",\"inputs\":[", f);
		for (k = g->in_off[v]; k < g->in_off[v + 1]; k++) {
			if (k > g->in_off[v])
				fputc(',', f);
			remat_i_json_write_str(f, g->id[g->in_idx[k]]);
		}
		fputc(']', f);
	}
	if (g->grad_of[v] >= 0) {
		fputs(",\"grad_of\":", f);
		remat_i_json_write_str(f, g->id[g->grad_of[v]]);
	}
	if (!g->recompute[v])
		fputs(",\"recompute\":false", f);
	if (g->label[v]) {
		fputs(",\"label\":", f);
		remat_i_json_write_str(f, g->label[v]);
	}
	fputc('}', f);
}

static void write_body(FILE *f, const struct remat_graph *g)
{
	int32_t v, k;

	fputs("{\"format\":\"remat-graph\",\"version\":1,\"name\":", f);
	remat_i_json_write_str(f, g->name);
	fputs(",\"cost_unit\":", f);
	remat_i_json_write_str(f, g->cost_unit);
	if (g->fixed_bytes >= 0)
		fprintf(f, ",\"fixed_bytes\":%lld", (long long)g->fixed_bytes);
	fputs(",\"nodes\":[", f);
	for (v = 0; v < g->n; v++) {
		fputs(v ? ",\n" : "\n", f);
		write_node(f, g, v);
	}
	fputs("\n]", f);
	if (!default_outputs(g)) {
		fputs(",\"outputs\":[", f);
		for (k = 0; k < g->n_outputs; k++) {
			if (k)
				fputc(',', f);
			remat_i_json_write_str(f, g->id[g->outputs[k]]);
		}
		fputc(']', f);
	}
	fputs("}\n", f);
}

int remat_graph_write(FILE *f, const struct remat_graph *g,
		      struct remat_error *err)
{
	write_body(f, g);
	if (fflush(f) != 0 || ferror(f))
		return REMAT_FAIL(err, REMAT_EIO, "cannot write the graph: %s",
				  strerror(errno ? errno : EIO));
	return REMAT_OK;
}

static void write_graph_body(FILE *f, const void *ctx)
{
	write_body(f, ctx);
}

int remat_graph_write_file(const char *path, const struct remat_graph *g,
			   struct remat_error *err)
{
	if (strcmp(path, "-") == 0)
		return remat_graph_write(stdout, g, err);
	return remat_i_write_atomic_stream(path, write_graph_body, g, err);
}
