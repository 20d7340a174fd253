/*
 * cmd_gen.c - remat gen: synthetic graphs and the training transform.
 * Thin: parse the options of one generator, call libremat (remat/gen.h),
 * write the graph.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "remat/gen.h"

const struct cli_opt cmd_gen_opts[] = {
	{ "output", 'o', "FILE", "write the graph to FILE (atomically) instead of stdout", 0 },
	{ "seed", 0, "S", "random seed, a non-negative integer (default 0)", 0 },
	{ "mem", 0, "B", "chain: bytes per layer (1MiB); unet: top-level tensor (8MiB)", 0 },
	{ "cost", 0, "C", "chain: cost per layer (1)", 0 },
	{ "random", 0, NULL, "chain: draw each layer's size and cost from the ranges", 0 },
	{ "mem-min", 0, "B", "chain --random: smallest layer (256KiB)", 0 },
	{ "mem-max", 0, "B", "chain --random: largest layer (4MiB)", 0 },
	{ "cost-min", 0, "C", "chain --random: smallest cost (1)", 0 },
	{ "cost-max", 0, "C", "chain --random: largest cost (10)", 0 },
	{ "forward", 0, NULL, "chain: the forward chain only (no loss, no backward)", 0 },
	{ "width", 0, "W", "layered: mean layer width 2 W sqrt(N) (0.31)", 0 },
	{ "width-var", 0, "V", "layered: widths vary by +-V of the mean (0.75)", 0 },
	{ "edge-density", 0, "E", "layered: edge probability between layers (0.2)", 0 },
	{ "skip-density", 0, "S", "layered: fraction of edges that skip layers (0.14)", 0 },
	{ "mem-mean", 0, "B", "layered: mean node size in bytes (1900)", 0 },
	{ "train", 0, NULL, "layered, unet: add the loss and backward nodes", 0 },
	{ "backward-factor", 0, "F", "backward cost = F x forward cost (2)", 0 },
	{ "loss-mem", 0, "B", "bytes of the loss node (4)", 0 },
	{ "loss-cost", 0, "C", "cost of the loss node (1)", 0 },
	{ "name", 0, "NAME", "graph name", 0 },
	{ NULL, 0, NULL, NULL, 0 }
};

struct gen_kind {
	const char *name;
	const char *arg;          /* positional argument, NULL for none */
	int arg_required;
	const char *const *opts;  /* options it accepts besides output, seed */
};

static const char *const chain_opts[] = { "mem", "cost", "random", "mem-min", "mem-max",
	"cost-min", "cost-max", "forward", "backward-factor", "loss-mem", "loss-cost",
	"name", NULL };
static const char *const layered_opts[] = { "width", "width-var", "edge-density",
	"skip-density", "mem-mean", "train", "backward-factor", "loss-mem",
	"loss-cost", "name", NULL };
static const char *const unet_opts[] = { "mem", "train", "backward-factor", "loss-mem",
	"loss-cost", "name", NULL };
static const char *const train_opts[] = { "backward-factor", "loss-mem", "loss-cost",
	"name", NULL };

static const struct gen_kind kinds[] = {
	{ "chain", "N", 1, chain_opts },
	{ "layered", "N", 1, layered_opts },
	{ "unet", "DEPTH", 0, unet_opts },
	{ "train", "GRAPH", 1, train_opts },
};

#define N_KINDS (sizeof(kinds) / sizeof(kinds[0]))

static int allowed(const struct gen_kind *k, const char *opt)
{
	const char *const *o;

	if (strcmp(opt, "output") == 0 || strcmp(opt, "seed") == 0)
		return 1;
	for (o = k->opts; *o; o++)
		if (strcmp(*o, opt) == 0)
			return 1;
	return 0;
}

static int parse_double(struct cli_args *a, const char *opt, double *out)
{
	const char *t = cli_get(a, opt);
	char *end;
	double v;

	if (!t)
		return 0;
	v = strtod(t, &end);
	if (end == t || *end || !isfinite(v) || v < 0)
		return cli_usage_error(a, "'--%s' needs a number >= 0, not '%s'", opt, t);
	*out = v;
	return 0;
}

static int parse_bytes(struct cli_args *a, const char *opt, int64_t *out)
{
	const char *t = cli_get(a, opt);
	struct remat_budget_spec spec;
	struct remat_error err;

	if (!t)
		return 0;
	remat_error_clear(&err);
	if (remat_budget_parse(t, &spec, &err) || spec.percent ||
	    remat_budget_resolve(&spec, 0, out, &err) || *out > REMAT_MAX_BYTES)
		return cli_usage_error(a, "'--%s' needs a size in bytes (4096, 1.5MiB), not '%s'",
				       opt, t);
	return 0;
}

static int parse_count(struct cli_args *a, const char *what, const char *t,
		       int32_t *out)
{
	char *end;
	long v = strtol(t, &end, 10);

	if (end == t || *end || v < 0 || v > 2000000000)
		return cli_usage_error(a, "%s needs a non-negative integer, not '%s'", what, t);
	*out = (int32_t)v;
	return 0;
}

static int parse_train(struct cli_args *a, struct remat_train_opts *t)
{
	int rc;

	if ((rc = parse_double(a, "backward-factor", &t->backward_factor)) ||
	    (rc = parse_bytes(a, "loss-mem", &t->loss_mem)) ||
	    (rc = parse_double(a, "loss-cost", &t->loss_cost)))
		return rc;
	t->name = cli_get(a, "name");
	return 0;
}

int cmd_gen(struct cli_args *a)
{
	const struct gen_kind *k = NULL;
	const char *kind = a->pos[0], *arg = a->npos > 1 ? a->pos[1] : NULL;
	const char *out = cli_get(a, "output"), *seed_text = cli_get(a, "seed");
	struct remat_graph *g = NULL, *in = NULL;
	struct remat_error err;
	uint64_t seed = 0;
	size_t i;
	int rc;

	remat_error_clear(&err);
	for (i = 0; i < N_KINDS; i++)
		if (strcmp(kinds[i].name, kind) == 0)
			k = &kinds[i];
	if (!k)
		return cli_usage_error(a, "unknown generator '%s' (chain, layered, unet, train)",
				       kind);
	if (k->arg_required && !arg)
		return cli_usage_error(a, "'%s' needs %s", k->name, k->arg);
	for (i = 0; cmd_gen_opts[i].name; i++)
		if (a->val[i] && !allowed(k, cmd_gen_opts[i].name))
			return cli_usage_error(a, "'--%s' does not apply to '%s'",
					       cmd_gen_opts[i].name, k->name);
	if (seed_text) {
		char *end;

		seed = strtoull(seed_text, &end, 10);
		if (end == seed_text || *end || seed_text[0] == '-')
			return cli_usage_error(a, "'--seed' needs a non-negative integer, not '%s'",
					       seed_text);
	}

	if (strcmp(k->name, "chain") == 0) {
		struct remat_gen_chain_opts o;

		remat_gen_chain_opts_init(&o);
		if ((rc = parse_count(a, "'chain' N", arg, &o.n)) ||
		    (rc = parse_bytes(a, "mem", &o.mem)) ||
		    (rc = parse_double(a, "cost", &o.cost)) ||
		    (rc = parse_bytes(a, "mem-min", &o.mem_min)) ||
		    (rc = parse_bytes(a, "mem-max", &o.mem_max)) ||
		    (rc = parse_double(a, "cost-min", &o.cost_min)) ||
		    (rc = parse_double(a, "cost-max", &o.cost_max)) ||
		    (rc = parse_train(a, &o.train)))
			return rc;
		o.random = cli_flag(a, "random");
		o.forward_only = cli_flag(a, "forward");
		o.seed = seed;
		rc = remat_gen_chain(&o, &g, &err);
	} else if (strcmp(k->name, "layered") == 0) {
		struct remat_gen_layered_opts o;
		struct remat_train_opts t;

		remat_gen_layered_opts_init(&o);
		remat_train_opts_init(&t);
		if ((rc = parse_count(a, "'layered' N", arg, &o.n)) ||
		    (rc = parse_double(a, "width", &o.width)) ||
		    (rc = parse_double(a, "width-var", &o.width_var)) ||
		    (rc = parse_double(a, "edge-density", &o.edge_density)) ||
		    (rc = parse_double(a, "skip-density", &o.skip_density)) ||
		    (rc = parse_double(a, "mem-mean", &o.mem_mean)) ||
		    (rc = parse_train(a, &t)))
			return rc;
		o.seed = seed;
		o.name = t.name;
		rc = remat_gen_layered(&o, &in, &err);
		if (rc == REMAT_OK && cli_flag(a, "train")) {
			rc = remat_graph_train(in, &t, &g, &err);
		} else if (rc == REMAT_OK) {
			g = in;
			in = NULL;
		}
	} else if (strcmp(k->name, "unet") == 0) {
		struct remat_gen_unet_opts o;

		remat_gen_unet_opts_init(&o);
		if ((arg && (rc = parse_count(a, "'unet' DEPTH", arg, &o.depth))) ||
		    (rc = parse_bytes(a, "mem", &o.mem)) ||
		    (rc = parse_train(a, &o.train_opts)))
			return rc;
		o.train = cli_flag(a, "train");
		o.name = o.train_opts.name;
		rc = remat_gen_unet(&o, &g, &err);
	} else {
		struct remat_train_opts t;

		remat_train_opts_init(&t);
		if ((rc = parse_train(a, &t)))
			return rc;
		rc = remat_graph_load_file(arg, &in, &err);
		if (rc == REMAT_OK)
			rc = remat_graph_train(in, &t, &g, &err);
	}
	if (rc == REMAT_OK)
		rc = remat_graph_write_file(out ? out : "-", g, &err);
	remat_graph_free(in);
	remat_graph_free(g);
	if (rc) {
		if (rc == REMAT_EUSAGE)
			return cli_usage_error(a, "%s", err.msg);
		cli_error("%s", err.msg);
		return cli_exit_code(rc);
	}
	return 0;
}
