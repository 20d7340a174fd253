/*
 * main.c - remat's entry point: the subcommand table, the main help, the
 * message prefixes and the exit codes of library statuses.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/atomic.h"
#include "tool/suggest.h"

static const struct cli_cmd commands[] = {
	{ "plan", "GRAPH --budget B [options]",
	  "plan a schedule within a memory budget",
	  "Runs a planner on GRAPH, checks its schedule with the simulator and\n"
	  "prints a summary; -o writes the schedule (atomically).  Exit 0: a\n"
	  "schedule within the budget was found; 3: none was found (no file is\n"
	  "written); 1: bad input; 2: usage error.",
	  1, 1, cmd_plan, NULL },
	{ "simulate", "GRAPH SCHEDULE [--budget B] [--json]",
	  "check a schedule and report its peak memory and cost",
	  "Replays SCHEDULE on GRAPH under the rules of FORMATS.md.  Exit 0: valid\n"
	  "(and within the budget, if one was given); 1: invalid schedule or bad\n"
	  "input; 3: valid but over budget.",
	  2, 2, cmd_simulate, NULL },
	{ "info", "GRAPH [--budget B] [--json]",
	  "validate a graph and show its size, no-remat peak and lower bound",
	  NULL, 1, 1, cmd_info, NULL },
	{ "order", "GRAPH [--method M] [-o ORDERED.json]",
	  "find a topological order with a low no-remat peak",
	  "Orders GRAPH's nodes for a low peak without recomputation (methods:\n"
	  "file, greedy, schedule, local, budget, best) and reports the peak next to\n"
	  "the file order's; -o writes the same graph with its nodes in that order,\n"
	  "so that every planner follows it.",
	  1, 1, cmd_order, NULL },
	{ "planners", "", "list the planners, one per line", NULL,
	  0, 0, cmd_planners, NULL },
	{ "gen", "chain N | layered N | unet [DEPTH] | train GRAPH [options]",
	  "generate a synthetic graph, or the training graph of a forward graph",
	  "Writes a remat-graph (stdout, or -o FILE atomically).  The same arguments\n"
	  "and --seed always give the same bytes.  chain: a training chain of N\n"
	  "layers; layered: a random layered DAG of N nodes (Gagrani et al. 2022);\n"
	  "unet: a U-Net with long skip connections; train: Checkmate's training\n"
	  "graph of GRAPH (a loss, and a backward node per forward node).",
	  1, 2, cmd_gen, cmd_gen_kind },
	{ "convert", "IN [-o OUT]", "convert a graph (remat-graph or networkx node-link) to remat-graph",
	  NULL, 1, 1, cmd_convert, NULL },
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
	  1, -1, cmd_bench, NULL },
};


#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct cli_cmd *current;

void cli_set_command(const struct cli_cmd *cmd)
{
	current = cmd;
}

const char *cli_command_name(void)
{
	return current ? current->name : NULL;
}

__attribute__((format(printf, 1, 0)))
static void vmessage(const char *fmt, va_list ap)
{
	if (current)
		fprintf(stderr, "remat %s: ", current->name);
	else
		fputs("remat: ", stderr);
	vfprintf(stderr, fmt, ap);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	if (current)
		fprintf(stderr, " (see 'remat %s --help')\n", current->name);
	else
		fputs(" (see 'remat --help')\n", stderr);
	return CLI_EXIT_USAGE;
}

int cli_stdout_claims(int json, const char *file1, const char *file2)
{
	return !!json + (file1 && strcmp(file1, "-") == 0) + (file2 && strcmp(file2, "-") == 0);
}

int cli_usage_see(const char *see, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see '%s')\n", see);
	return CLI_EXIT_USAGE;
}

enum cli_exit cli_exit_code(int status)
{
	switch ((enum remat_status)status) {
	case REMAT_OK:
		return CLI_EXIT_OK;
	case REMAT_EINPUT:
		return CLI_EXIT_INPUT;
	case REMAT_EUSAGE:
		return CLI_EXIT_USAGE;
	case REMAT_ENOFIT:
		return CLI_EXIT_NOFIT;
	case REMAT_ENOMEM:
	case REMAT_EIO:
	case REMAT_EINTERNAL:
		return CLI_EXIT_SYSTEM;
	case REMAT_ECANCELED:
		/*
		 * Planners turn their time limit into REMAT_ENOFIT; bench
		 * reports its interruption (130) itself.  Anything else that
		 * was stopped did not finish.
		 */
		return CLI_EXIT_SYSTEM;
	}
	return CLI_EXIT_SYSTEM;
}

const struct remat_planner *cli_find_planner(const char *name)
{
	const struct remat_planner *p = remat_planner_find(name);
	const struct remat_planner *const *pp;
	const char *names[64];
	char near[200];
	int n = 0;

	if (p)
		return p;
	for (pp = remat_planner_list(); *pp && n < 63; pp++)
		names[n++] = (*pp)->name;
	names[n] = NULL;
	if (remat_i_suggest(name, names, near, sizeof(near)))
		cli_usage_see("remat planners", "unknown planner '%s'; did you mean %s?", name,
			      near);
	else
		cli_usage_see("remat planners", "unknown planner '%s'", name);
	return NULL;
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
		"(-V) prints the version.\n");
}

static const struct cli_cmd *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int unknown_command(const char *name)
{
	const char *names[N_COMMANDS + 1];
	char near[200];
	size_t i;

	for (i = 0; i < N_COMMANDS; i++)
		names[i] = commands[i].name;
	names[N_COMMANDS] = NULL;
	if (remat_i_suggest(name, names, near, sizeof(near)))
		cli_error("'%s' is not a remat command; did you mean %s? (see 'remat --help')",
			  name, near);
	else
		cli_error("'%s' is not a remat command (see 'remat --help')", name);
	return CLI_EXIT_USAGE;
}

static int run(const struct cli_cmd *cmd, int argc, char **argv)
{
	cli_set_command(cmd);
	return cmd->run(cmd, argc, argv);
}

/*
 * A fatal signal while a file is being written: remove the temporary
 * (the target is untouched until the rename), then die of the signal as
 * if there were no handler, so the parent sees how remat ended.
 */
static void on_fatal_signal(int sig)
{
	remat_i_atomic_abandon();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch_fatal_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* A signal ignored by whoever started us (nohup) stays ignored. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

int main(int argc, char **argv)
{
	const struct cli_cmd *cmd;
	const char *name = argc > 1 ? argv[1] : NULL;

	if (!name) {
		main_help(stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 ||
	    strcmp(name, "help") == 0) {
		static char help_arg[] = "--help";
		char *help_argv[] = { help_arg, NULL };

		if (argc > 2 && strcmp(name, "help") == 0 && strcmp(argv[2], "--help") != 0 &&
		    strcmp(argv[2], "-h") != 0) {
			/* remat help NOSUCH: as remat NOSUCH --help (exit 2). */
			cmd = find_command(argv[2]);
			return cmd ? run(cmd, 1, help_argv) : unknown_command(argv[2]);
		}
		main_help(stdout);
		return CLI_EXIT_OK;
	}
	if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0 ||
	    strcmp(name, "version") == 0) {
		printf("remat %s\n", REMAT_VERSION);
		return CLI_EXIT_OK;
	}
	/* Not in the table: what the build runs to write the completion script. */
	if (strcmp(name, "completion") == 0)
		return cli_completion(commands, N_COMMANDS, argc - 2, argv + 2);
	cmd = find_command(name);
	if (!cmd)
		return unknown_command(name);
	catch_fatal_signals();
	return run(cmd, argc - 2, argv + 2);
}
