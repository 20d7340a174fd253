/*
 * main.c - remat's entry point: the subcommand table, option parsing and
 * generated help.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const struct cli_cmd commands[] = {
	{ "plan", "GRAPH --budget B [options]",
	  "plan a schedule within a memory budget",
	  "Runs a planner on GRAPH, checks its schedule with the simulator and\n"
	  "prints a summary; -o writes the schedule (atomically).  Exit 0: a\n"
	  "schedule within the budget was found; 3: none was found (no file is\n"
	  "written); 1: bad input; 2: usage error.",
	  cmd_plan_opts, 1, 1, 1, cmd_plan },
	{ "simulate", "GRAPH SCHEDULE [--budget B] [--json]",
	  "check a schedule and report its peak memory and cost",
	  "Replays SCHEDULE on GRAPH under the rules of FORMATS.md.  Exit 0: valid\n"
	  "(and within the budget, if one was given); 1: invalid schedule or bad\n"
	  "input; 3: valid but over budget.",
	  cmd_simulate_opts, 2, 2, 0, cmd_simulate },
	{ "info", "GRAPH [--budget B] [--json]",
	  "validate a graph and show its size, no-remat peak and lower bound",
	  NULL, cmd_info_opts, 1, 1, 0, cmd_info },
	{ "order", "GRAPH [--method M] [-o ORDERED.json]",
	  "find a topological order with a low no-remat peak",
	  "Orders GRAPH's nodes for a low peak without recomputation (methods:\n"
	  "file, greedy, schedule, local, best) and reports the peak next to the\n"
	  "file order's; -o writes the same graph with its nodes in that order, so\n"
	  "that every planner follows it.",
	  cmd_order_opts, 1, 1, 0, cmd_order },
	{ "planners", "", "list the planners, one per line", NULL,
	  cmd_planners_opts, 0, 0, 0, cmd_planners },
	{ "gen", "chain N | layered N | unet [DEPTH] | train GRAPH [options]",
	  "generate a synthetic graph, or the training graph of a forward graph",
	  "Writes a remat-graph (stdout, or -o FILE atomically).  The same arguments\n"
	  "and --seed always give the same bytes.  chain: a training chain of N\n"
	  "layers; layered: a random layered DAG of N nodes (Gagrani et al. 2022);\n"
	  "unet: a U-Net with long skip connections; train: Checkmate's training\n"
	  "graph of GRAPH (a loss, and a backward node per forward node).",
	  cmd_gen_opts, 1, 2, 0, cmd_gen },
	{ "convert", "IN [-o OUT]", "convert a graph (remat-graph or networkx node-link) to remat-graph",
	  NULL, cmd_convert_opts, 1, 1, 0, cmd_convert },
	{ "bench", "GRAPH|FOLDER... [--planners LIST] [--budgets LIST] [-o FILE] [options]\n"
	  "       remat bench --merge RESULTS|FOLDER... [-o FILE] [--plot DIR] [--baseline FILE]",
	  "run planners x budgets over graphs; merge, plot and check results",
	  "Runs every planner on every graph at every budget, each run in its own\n"
	  "process (--jobs at once), and writes one row per run to each -o file as\n"
	  "it finishes: graph, nodes, planner, budget, status (ok, nofit, timeout,\n"
	  "crash, error), feasible, peak, cost, overhead, recomputes, planning\n"
	  "time, the no-remat peak and the lower bound.  Budget lists: 80%,60%;\n"
	  "LO..HI:N is N evenly spaced points, both ends included (30%..100%:8 is\n"
	  "30%, 40%, ..., 100%); LO..HI:STEP steps by a size or percentage\n"
	  "(30%..100%:10% is the same eight).  Exit 0: every run finished (whether\n"
	  "or not it fit); 5: a regression against --baseline, or a run crashed or\n"
	  "failed; 130: interrupted (finished rows are kept); 1, 2, 4 as for plan.",
	  cmd_bench_opts, 1, CLI_MAX_POS, 1, cmd_bench },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("remat: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_exit_code(int status)
{
	switch (status) {
	case REMAT_OK: return 0;
	case REMAT_EINPUT: return 1;
	case REMAT_EUSAGE: return 2;
	case REMAT_ENOFIT: return 3;
	}
	return 4;
}

int cli_usage_error(const struct cli_args *a, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "remat %s: ", a->cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'remat %s --help')\n", a->cmd->name);
	return 2;
}

static int opt_index(const struct cli_cmd *c, const char *name)
{
	int i;

	for (i = 0; c->opts[i].name; i++)
		if (strcmp(c->opts[i].name, name) == 0)
			return i;
	return -1;
}

const char *cli_get(const struct cli_args *a, const char *name)
{
	int i = opt_index(a->cmd, name);

	return i < 0 ? NULL : a->val[i];
}

const char **cli_get_all(const struct cli_args *a, const char *name, int *n)
{
	int i = opt_index(a->cmd, name);

	*n = i < 0 ? 0 : a->n_multi[i];
	return i < 0 ? NULL : a->multi[i];
}

int cli_flag(const struct cli_args *a, const char *name)
{
	return cli_get(a, name) != NULL;
}

static void print_opt(FILE *f, const char *name, char short_name,
		      const char *arg, const char *help)
{
	char left[64];

	if (short_name)
		snprintf(left, sizeof(left), "-%c, --%s%s%s", short_name, name,
			 arg ? " " : "", arg ? arg : "");
	else
		snprintf(left, sizeof(left), "    --%s%s%s", name, arg ? " " : "",
			 arg ? arg : "");
	fprintf(f, "  %-26s %s\n", left, help);
}

static void command_help(const struct cli_cmd *c, FILE *f)
{
	const struct cli_opt *o;

	fprintf(f, "usage: remat %s %s\n\n%s\n", c->name, c->usage, c->summary);
	if (c->description)
		fprintf(f, "\n%s\n", c->description);
	fprintf(f, "\noptions:\n");
	for (o = c->opts; o->name; o++)
		print_opt(f, o->name, o->short_name, o->arg, o->help);
	print_opt(f, "help", 'h', NULL, "show this help");
	if (c->planner_opts) {
		const struct remat_planner *const *pp;

		for (pp = remat_planner_list(); *pp; pp++) {
			const struct remat_planner_option *po = (*pp)->options;

			if (!po || !po->name)
				continue;
			fprintf(f, "\noptions of planner '%s':\n", (*pp)->name);
			for (; po->name; po++)
				print_opt(f, po->name, 0, po->arg, po->help);
		}
	}
}

static void main_help(FILE *f)
{
	size_t i;

	fprintf(f, "usage: remat COMMAND [options]\n\n"
		"Plans tensor rematerialization (gradient checkpointing): which\n"
		"activations to free and recompute so that training fits a memory budget.\n\n"
		"commands:\n");
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'remat COMMAND --help' describes one command; 'remat --version' "
		"prints the version.\n");
}

/* Is name an option some planner declares? */
static int planner_declares(const char *name)
{
	const struct remat_planner *const *pp;

	for (pp = remat_planner_list(); *pp; pp++)
		if (remat_planner_has_option(*pp, name))
			return 1;
	return 0;
}

static int add_multi(struct cli_args *a, int i, const char *v)
{
	const char **nv = realloc(a->multi[i], sizeof(char *) * (size_t)(a->n_multi[i] + 1));

	if (!nv)
		return -1;
	nv[a->n_multi[i]++] = v;
	a->multi[i] = nv;
	return 0;
}

static int parse_args(const struct cli_cmd *c, int argc, char **argv,
		      struct cli_args *a)
{
	int i, only_pos = 0;

	for (i = 0; i < argc; i++) {
		const char *s = argv[i], *val = NULL;
		char name[64];
		int k = -1;

		if (only_pos || s[0] != '-' || s[1] == '\0') {
			if (a->npos >= CLI_MAX_POS)
				return cli_usage_error(a, "too many arguments");
			a->pos[a->npos++] = s;
			continue;
		}
		if (strcmp(s, "--") == 0) {
			only_pos = 1;
			continue;
		}
		if (s[1] == '-') {
			const char *eq = strchr(s + 2, '=');
			size_t len = eq ? (size_t)(eq - (s + 2)) : strlen(s + 2);

			if (len >= sizeof(name))
				return cli_usage_error(a, "unknown option '%s'", s);
			memcpy(name, s + 2, len);
			name[len] = '\0';
			if (eq)
				val = eq + 1;
			k = opt_index(c, name);
		} else {
			int j;

			if (s[2] != '\0')
				return cli_usage_error(a, "unknown option '%s'", s);
			name[0] = '\0';
			for (j = 0; c->opts[j].name; j++)
				if (c->opts[j].short_name == s[1]) {
					k = j;
					snprintf(name, sizeof(name), "%s", c->opts[j].name);
				}
			if (k < 0 && s[1] != 'h')
				return cli_usage_error(a, "unknown option '%s'", s);
			if (k < 0)
				snprintf(name, sizeof(name), "help");
		}
		if (k < 0 && strcmp(name, "help") == 0) {
			command_help(c, stdout);
			return -1;
		}
		if (k < 0 && c->planner_opts && planner_declares(name)) {
			struct remat_kv *nk;

			if (!val) {
				if (i + 1 >= argc)
					return cli_usage_error(a, "option '--%s' needs a value", name);
				val = argv[++i];
			}
			nk = realloc(a->popts, sizeof(*nk) * (size_t)(a->n_popts + 1));
			if (!nk)
				return 4;
			a->popts = nk;
			nk[a->n_popts].key = strdup(name);
			nk[a->n_popts].value = val;
			if (!nk[a->n_popts].key)
				return 4;
			a->n_popts++;
			continue;
		}
		if (k < 0)
			return cli_usage_error(a, "unknown option '%s'", s);
		if (c->opts[k].arg) {
			if (!val) {
				if (i + 1 >= argc)
					return cli_usage_error(a, "option '--%s' needs a value",
							       c->opts[k].name);
				val = argv[++i];
			}
		} else {
			if (val)
				return cli_usage_error(a, "option '--%s' takes no value",
						       c->opts[k].name);
			val = "";
		}
		a->val[k] = val;
		if (c->opts[k].multi && add_multi(a, k, val))
			return 4;
	}
	if (a->npos < c->min_pos)
		return cli_usage_error(a, "missing arguments: usage: remat %s %s", c->name,
				       c->usage);
	if (a->npos > c->max_pos)
		return cli_usage_error(a, "unexpected argument '%s'", a->pos[c->max_pos]);
	return 0;
}

static void free_args(struct cli_args *a)
{
	int i;

	for (i = 0; i < CLI_MAX_OPTS; i++)
		free(a->multi[i]);
	for (i = 0; i < a->n_popts; i++)
		free((char *)a->popts[i].key);
	free(a->popts);
}

int main(int argc, char **argv)
{
	struct cli_args a;
	size_t i;
	int rc;

	if (argc < 2) {
		main_help(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			for (i = 0; i < N_COMMANDS; i++)
				if (strcmp(commands[i].name, argv[2]) == 0) {
					command_help(&commands[i], stdout);
					return 0;
				}
		}
		main_help(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("remat %s\n", REMAT_VERSION);
		return 0;
	}
	for (i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, argv[1]) == 0)
			break;
	if (i == N_COMMANDS) {
		cli_error("'%s' is not a remat command (see 'remat --help')", argv[1]);
		return 2;
	}
	memset(&a, 0, sizeof(a));
	a.cmd = &commands[i];
	rc = parse_args(&commands[i], argc - 2, argv + 2, &a);
	if (rc < 0) {
		free_args(&a);
		return 0; /* --help */
	}
	if (rc == 0)
		rc = commands[i].run(&a);
	free_args(&a);
	return rc;
}
