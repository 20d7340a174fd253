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

const char *cmd_gen_kind(size_t i)
{
	return i < N_KINDS ? kinds[i].name : NULL;
}

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

static int parse_count(const char *what, const char *t, int32_t *out)
{
	long v;

	if (cli_to_long(t, 0, 2000000000, &v))
		return cli_usage_error("%s needs an integer from 0 to 2000000000, not '%s'",
				       what, t);
	*out = (int32_t)v;
	return CLI_EXIT_OK;
}

int cmd_gen(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct remat_gen_chain_opts chain;
	struct remat_gen_layered_opts layered;
	struct remat_gen_unet_opts unet;
	struct remat_train_opts train;
	const char *out = "-";
	int64_t mem = -1;   /* chain and unet: their own default when not given */
	uint64_t seed = 0;
	int with_train = 0;
	struct cli_opt opts[] = {
		OPT_STRING('o', "output", &out, "FILE",
			   "write the graph to FILE (atomically) instead of stdout"),
		OPT_UINT64(0, "seed", &seed, "S", "random seed, a non-negative integer (default 0)"),
		OPT_BYTES(0, "mem", &mem, "B",
			  "chain: bytes per layer (1MiB); unet: top-level tensor (8MiB)"),
		OPT_NUMBER(0, "cost", &chain.cost, "C", 0, INFINITY, "chain: cost per layer (1)"),
		OPT_FLAG(0, "random", &chain.random,
			 "chain: draw each layer's size and cost from the ranges"),
		OPT_BYTES(0, "mem-min", &chain.mem_min, "B", "chain --random: smallest layer (256KiB)"),
		OPT_BYTES(0, "mem-max", &chain.mem_max, "B", "chain --random: largest layer (4MiB)"),
		OPT_NUMBER(0, "cost-min", &chain.cost_min, "C", 0, INFINITY,
			   "chain --random: smallest cost (1)"),
		OPT_NUMBER(0, "cost-max", &chain.cost_max, "C", 0, INFINITY,
			   "chain --random: largest cost (10)"),
		OPT_FLAG(0, "forward", &chain.forward_only,
			 "chain: the forward chain only (no loss, no backward)"),
		OPT_NUMBER(0, "width", &layered.width, "W", 0, INFINITY,
			   "layered: mean layer width 2 W sqrt(N) (0.31)"),
		OPT_NUMBER(0, "width-var", &layered.width_var, "V", 0, INFINITY,
			   "layered: widths vary by +-V of the mean (0.75)"),
		OPT_NUMBER(0, "edge-density", &layered.edge_density, "E", 0, INFINITY,
			   "layered: edge probability between layers (0.2)"),
		OPT_NUMBER(0, "skip-density", &layered.skip_density, "S", 0, INFINITY,
			   "layered: fraction of edges that skip layers (0.14)"),
		OPT_NUMBER(0, "mem-mean", &layered.mem_mean, "B", 0, INFINITY,
			   "layered: mean node size in bytes (1900)"),
		OPT_FLAG(0, "train", &with_train, "layered, unet: add the loss and backward nodes"),
		OPT_NUMBER(0, "backward-factor", &train.backward_factor, "F", 0, INFINITY,
			   "backward cost = F x forward cost (2)"),
		OPT_BYTES(0, "loss-mem", &train.loss_mem, "B", "bytes of the loss node (4)"),
		OPT_NUMBER(0, "loss-cost", &train.loss_cost, "C", 0, INFINITY,
			   "cost of the loss node (1)"),
		OPT_STRING(0, "name", &train.name, "NAME", "graph name"),
		OPT_END()
	};
	const struct gen_kind *k = NULL;
	const struct cli_opt *o;
	const char *arg;
	struct remat_graph *g = NULL, *in = NULL;
	struct remat_error err;
	size_t i;
	int rc;

	remat_gen_chain_opts_init(&chain);
	remat_gen_layered_opts_init(&layered);
	remat_gen_unet_opts_init(&unet);
	remat_train_opts_init(&train);
	rc = cli_parse(cmd, opts, &argc, argv);
	if (rc != CLI_GO_ON)
		return rc;
	arg = argc > 1 ? argv[1] : NULL;
	remat_error_clear(&err);
	for (i = 0; i < N_KINDS; i++)
		if (strcmp(kinds[i].name, argv[0]) == 0)
			k = &kinds[i];
	if (!k)
		return cli_usage_error("unknown generator '%s' (chain, layered, unet, train)",
				       argv[0]);
	if (k->arg_required && !arg)
		return cli_usage_error("'%s' needs %s", k->name, k->arg);
	for (o = opts; o->type != CLI_OPT_END; o++) {
		static const char *const train_only[] = { "backward-factor", "loss-mem",
							  "loss-cost", NULL };
		static const char *const random_only[] = { "mem-min", "mem-max", "cost-min",
							   "cost-max", NULL };
		const char *const *t;

		if (!o->given)
			continue;
		if (!allowed(k, o->long_name))
			return cli_usage_error("'--%s' does not apply to '%s'", o->long_name,
					       k->name);
		/*
		 * What a combination leaves without effect is refused too (an
		 * outside review: layered --loss-mem without --train was taken).
		 */
		for (t = train_only; *t; t++)
			if (strcmp(*t, o->long_name) == 0 &&
			    (strcmp(k->name, "chain") == 0 ? chain.forward_only :
			     strcmp(k->name, "train") != 0 && !with_train))
				return cli_usage_error("'--%s' applies to training graphs: %s",
						       o->long_name, strcmp(k->name, "chain") == 0 ?
						       "not with '--forward'" : "add '--train'");
		for (t = random_only; *t; t++)
			if (strcmp(*t, o->long_name) == 0 && !chain.random)
				return cli_usage_error("'--%s' applies to 'chain --random'",
						       o->long_name);
		if (strcmp(k->name, "chain") == 0 && chain.random &&
		    (strcmp(o->long_name, "mem") == 0 || strcmp(o->long_name, "cost") == 0))
			return cli_usage_error("'--%s' does not apply to 'chain --random' (it "
					       "draws sizes and costs from --mem-min ... "
					       "--cost-max)", o->long_name);
	}

	if (strcmp(k->name, "chain") == 0) {
		if ((rc = parse_count("'chain' N", arg, &chain.n)))
			return rc;
		if (mem >= 0)
			chain.mem = mem;
		chain.seed = seed;
		chain.train = train;
		rc = remat_gen_chain(&chain, &g, &err);
	} else if (strcmp(k->name, "layered") == 0) {
		if ((rc = parse_count("'layered' N", arg, &layered.n)))
			return rc;
		layered.seed = seed;
		layered.name = train.name;
		rc = remat_gen_layered(&layered, &in, &err);
		if (rc == REMAT_OK && with_train) {
			rc = remat_graph_train(in, &train, &g, &err);
		} else if (rc == REMAT_OK) {
			g = in;
			in = NULL;
		}
	} else if (strcmp(k->name, "unet") == 0) {
		if (arg && (rc = parse_count("'unet' DEPTH", arg, &unet.depth)))
			return rc;
		if (mem >= 0)
			unet.mem = mem;
		unet.train = with_train;
		unet.train_opts = train;
		unet.name = train.name;
		rc = remat_gen_unet(&unet, &g, &err);
	} else {
		rc = remat_graph_load_file(arg, &in, &err);
		if (rc == REMAT_OK)
			rc = remat_graph_train(in, &train, &g, &err);
	}
	if (rc == REMAT_OK)
		rc = remat_graph_write_file(out, g, &err);
	remat_graph_free(in);
	remat_graph_free(g);
	/*
	 * A generator refusing its arguments (a size over its limit, a chain
	 * of 2^53-byte layers) is a usage error, as the options' own checks
	 * are; train's graph file is input.
	 */
	if (rc == REMAT_EUSAGE || (rc == REMAT_EINPUT && strcmp(k->name, "train") != 0))
		return cli_usage_error("%s", err.msg);
	if (rc) {
		cli_error("%s", err.msg);
		return cli_exit_code(rc);
	}
	return CLI_EXIT_OK;
}
