/*
 * cli.h - the remat command line: a table of subcommands (after git's
 * commands[]), each parsing its arguments against a table of options that
 * binds every option to a typed variable (after git's parse-options).
 * The parser converts and range-checks each value once, reports a bad
 * one in one style (exit 2), and generates --help from the same table.
 * The CLI is thin: it parses, calls libremat, prints, and maps statuses
 * to exit codes.
 *
 * A command reads:
 *
 *	int json = 0;
 *	uint64_t seed = 1;
 *	struct cli_budget budget = CLI_BUDGET_INIT;
 *	struct cli_opt opts[] = {
 *		OPT_BUDGET('b', "budget", &budget, "memory budget ..."),
 *		OPT_UINT64(0, "seed", &seed, "N", "seed (default 1)"),
 *		OPT_FLAG(0, "json", &json, "print one JSON object on stdout"),
 *		OPT_END()
 *	};
 *
 *	if ((code = cli_parse(cmd, opts, &argc, argv)) != CLI_GO_ON)
 *		return code;
 *
 * after which argv[0..argc) are the positional arguments.
 */
#ifndef REMAT_CLI_H
#define REMAT_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "remat/remat.h"

/* Exit codes (FORMATS.md section 4, docs/commands.md "Exit codes"). */
enum cli_exit {
	CLI_EXIT_OK = 0,
	CLI_EXIT_INPUT = 1,       /* bad input: graph, schedule or results file */
	CLI_EXIT_USAGE = 2,       /* bad command line */
	CLI_EXIT_NOFIT = 3,       /* no schedule within budget; over budget */
	CLI_EXIT_SYSTEM = 4,      /* out of memory, cannot write, a bug */
	CLI_EXIT_REGRESSION = 5,  /* bench: regression, crashed or failed run */
	CLI_EXIT_INTERRUPTED = 130 /* bench: stopped by a signal */
};

/* cli_parse(): go on and run the command (any other value: exit with it). */
#define CLI_GO_ON (-1)

enum cli_opt_type {
	CLI_OPT_END = 0,
	CLI_OPT_FLAG,       /* int: set to 1 */
	CLI_OPT_INT,        /* int, from lo to hi */
	CLI_OPT_UINT64,     /* uint64_t: a non-negative integer */
	CLI_OPT_NUMBER,     /* double, from lo to hi (hi may be INFINITY) */
	CLI_OPT_SECONDS,    /* double: a non-negative number of seconds */
	CLI_OPT_BYTES,      /* int64_t: a size, 4096 or 1.5MiB (no percentage) */
	CLI_OPT_BUDGET,     /* struct cli_budget: bytes or a percentage */
	CLI_OPT_STRING,     /* const char *: the text as given */
	CLI_OPT_LIST,       /* struct cli_list: every value of a repeated option */
	CLI_OPT_CALLBACK,   /* cb(o, arg) converts into o->value; o->needs says what */
	CLI_OPT_PLANNER     /* struct cli_planner_opts: --NAME VALUE of any planner */
};

enum cli_opt_flags {
	CLI_REQUIRED = 1u << 0  /* a usage error when the option is not given */
};

/*
 * What a shell completes an option's value with ('remat completion bash').
 * CLI_COMPLETE_AUTO follows the placeholder: FILE a file, DIR a folder,
 * "a|b" one of those words, anything else nothing.
 */
enum cli_complete {
	CLI_COMPLETE_AUTO = 0,
	CLI_COMPLETE_PLANNER,   /* a planner's name (remat planners) */
	CLI_COMPLETE_PLANNERS,  /* a comma list of planners' names */
	CLI_COMPLETE_ORDER      /* a node order method (remat order --method) */
};

struct cli_opt {
	enum cli_opt_type type;
	char short_name;        /* 0 for none */
	const char *long_name;  /* given as --NAME */
	void *value;            /* where the converted value goes (see the type) */
	const char *argh;       /* placeholder in --help ("N"), NULL for a flag */
	const char *help;       /* one line for --help */
	unsigned flags;         /* enum cli_opt_flags */
	double lo, hi;          /* INT, NUMBER: the accepted range */
	const char *needs;      /* CALLBACK: "a fraction (0.01) or ..." */
	int (*cb)(const struct cli_opt *o, const char *arg); /* 0, or -1: refused */
	enum cli_complete complete; /* what a shell completes the value with */
	const char *given;      /* set by the parser: the last value as given
				   ("" for a flag), NULL when not given */
};

/* A budget option: the parsed spec, resolved once the graph is known. */
struct cli_budget {
	int given;
	struct remat_budget_spec spec;
	struct remat_error err;  /* why the text was refused (err.code != 0) */
};
#define CLI_BUDGET_INIT { .given = 0 }

/* Every value of a repeatable option, in order (malloc'd: cli_release). */
struct cli_list {
	const char **v;
	int n;
};

/* Options declared by planners, for struct remat_plan_request.options. */
struct cli_planner_opts {
	struct remat_kv *v;
	int n;
};

/*
 * The entries of a table.  The value pointer's type is checked against
 * the option's type at compile time.
 */
#define CLI_TYPED_(T, v) (1 ? (v) : (T *)0)
#define OPT_FLAG(s, l, v, h) \
	{ .type = CLI_OPT_FLAG, .short_name = (s), .long_name = (l), \
	  .value = CLI_TYPED_(int, v), .help = (h) }
#define OPT_INT(s, l, v, a, lo_, hi_, h) \
	{ .type = CLI_OPT_INT, .short_name = (s), .long_name = (l), \
	  .value = CLI_TYPED_(int, v), .argh = (a), .help = (h), .lo = (lo_), .hi = (hi_) }
#define OPT_UINT64(s, l, v, a, h) \
	{ .type = CLI_OPT_UINT64, .short_name = (s), .long_name = (l), \
	  .value = CLI_TYPED_(uint64_t, v), .argh = (a), .help = (h) }
#define OPT_NUMBER(s, l, v, a, lo_, hi_, h) \
	{ .type = CLI_OPT_NUMBER, .short_name = (s), .long_name = (l), \
	  .value = CLI_TYPED_(double, v), .argh = (a), .help = (h), .lo = (lo_), .hi = (hi_) }
#define OPT_SECONDS(s, l, v, h) \
	{ .type = CLI_OPT_SECONDS, .short_name = (s), .long_name = (l), \
	  .value = CLI_TYPED_(double, v), .argh = "SECONDS", .help = (h) }
#define OPT_BYTES(s, l, v, a, h) \
	{ .type = CLI_OPT_BYTES, .short_name = (s), .long_name = (l), \
	  .value = CLI_TYPED_(int64_t, v), .argh = (a), .help = (h) }
#define OPT_BUDGET(s, l, v, h) \
	{ .type = CLI_OPT_BUDGET, .short_name = (s), .long_name = (l), \
	  .value = CLI_TYPED_(struct cli_budget, v), .argh = "B", .help = (h) }
#define OPT_BUDGET_REQUIRED(s, l, v, h) \
	{ .type = CLI_OPT_BUDGET, .short_name = (s), .long_name = (l), \
	  .value = CLI_TYPED_(struct cli_budget, v), .argh = "B", .help = (h), \
	  .flags = CLI_REQUIRED }
#define OPT_STRING(s, l, v, a, h) \
	{ .type = CLI_OPT_STRING, .short_name = (s), .long_name = (l), \
	  .value = CLI_TYPED_(const char *, v), .argh = (a), .help = (h) }
/* A string a shell completes as c says (enum cli_complete). */
#define OPT_STRING_C(s, l, v, a, c, h) \
	{ .type = CLI_OPT_STRING, .short_name = (s), .long_name = (l), \
	  .value = CLI_TYPED_(const char *, v), .argh = (a), .help = (h), .complete = (c) }
#define OPT_LIST(s, l, v, a, h) \
	{ .type = CLI_OPT_LIST, .short_name = (s), .long_name = (l), \
	  .value = CLI_TYPED_(struct cli_list, v), .argh = (a), .help = (h) }
#define OPT_CALLBACK(s, l, v, a, needs_, cb_, h) \
	{ .type = CLI_OPT_CALLBACK, .short_name = (s), .long_name = (l), \
	  .value = (v), .argh = (a), .help = (h), .needs = (needs_), .cb = (cb_) }
#define OPT_PLANNER_OPTIONS(v) \
	{ .type = CLI_OPT_PLANNER, .value = CLI_TYPED_(struct cli_planner_opts, v) }
#define OPT_END() { .type = CLI_OPT_END }

struct cli_cmd {
	const char *name;
	const char *usage;    /* after "remat NAME " */
	const char *summary;  /* one line for "remat --help" */
	const char *description; /* paragraph for "remat NAME --help", or NULL */
	int min_pos, max_pos; /* positional arguments; max_pos -1: any number */
	/*
	 * Calls cli_parse() before it does anything else: 'remat completion'
	 * reads each command's options by running it with cli_describe() set.
	 */
	int (*run)(const struct cli_cmd *cmd, int argc, char **argv);
	/*
	 * The i-th word the first positional argument may be (NULL past the
	 * last), for shell completion; NULL: the positional arguments are files.
	 */
	const char *(*word)(size_t i);
};

/*
 * Parse argv[0..*argc) (the arguments after the command name) against
 * opts: long options as --name VALUE or --name=VALUE, short ones as -n
 * VALUE or -nVALUE, "--" ending the options.  Every value is converted
 * into its variable; the positional arguments are moved to the front of
 * argv and counted in *argc.  Returns CLI_GO_ON, or the exit code to
 * return at once: CLI_EXIT_OK after --help, CLI_EXIT_USAGE after a usage
 * error (reported on stderr), CLI_EXIT_SYSTEM when out of memory.  On
 * anything but CLI_GO_ON nothing is left to release.
 */
int cli_parse(const struct cli_cmd *cmd, struct cli_opt *opts, int *argc, char **argv);
/*
 * While fn is set (not NULL), cli_parse() parses nothing: it hands the
 * command and its table to fn(cmd, opts, ctx) and returns CLI_EXIT_OK, so
 * that running a command describes its options ('remat completion').
 */
typedef void (*cli_describe_fn)(const struct cli_cmd *cmd, const struct cli_opt *opts,
				void *ctx);
void cli_describe(cli_describe_fn fn, void *ctx);
/* Free what the parser allocated for opts (lists, planner options). */
void cli_release(struct cli_opt *opts);
/* The value of the option long_name as given, or NULL when not given. */
const char *cli_given(const struct cli_opt *opts, const char *long_name);

/* The command being run (NULL before one is chosen), for message prefixes. */
void cli_set_command(const struct cli_cmd *cmd);
const char *cli_command_name(void);
/* Print "remat CMD: msg" (or "remat: msg" outside a command) on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * s made safe to print (remat_i_text_safe(): an id or a graph name from a
 * file cannot drive the terminal), in one of 4 static buffers used in turn.
 */
const char *cli_safe(const char *s);
/* The same prefix for a note that is not an error ("remat bench: merged ..."). */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Map a libremat status to its exit code. */
enum cli_exit cli_exit_code(int status);
/*
 * Usage error for the current command: "remat CMD: msg (see 'remat CMD
 * --help')"; returns CLI_EXIT_USAGE.  cli_usage_see() points elsewhere.
 */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_usage_see(const char *see, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * How many of a command's outputs go to standard output: --json (when
 * json is set) and each FILE argument that is "-" (NULL: not given).
 * More than one is a usage error: they would mix.
 */
int cli_stdout_claims(int json, const char *file1, const char *file2);

/* The planner called name, or NULL after a usage error (with a suggestion). */
const struct remat_planner *cli_find_planner(const char *name);
/* Integer text in [lo, hi]: 0, or -1 when it is not one. */
int cli_to_long(const char *s, long lo, long hi, long *out);

/* A cost for people: 6 significant digits, SI prefix from a million on. */
void cli_format_cost(double v, char *buf, size_t size);
/* Emit the --json object of plan and simulate (res NULL: no schedule). */
void cli_print_result_json(FILE *f, const struct remat_sim_result *res,
			   int64_t budget, const char *planner,
			   const char *chosen, double time_s, const char *error,
			   const struct remat_plan_report *report);
/* Print the human summary of a simulated schedule. */
void cli_print_result_text(FILE *f, const struct remat_graph *g,
			   const struct remat_sim_result *res, int64_t budget);

int cmd_plan(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_simulate(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_info(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_planners(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_gen(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_convert(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_bench(const struct cli_cmd *cmd, int argc, char **argv);
int cmd_order(const struct cli_cmd *cmd, int argc, char **argv);
/* gen's generators, in order (NULL past the last), for completion. */
const char *cmd_gen_kind(size_t i);

/*
 * remat completion SHELL: print the completion script of the commands
 * cmds[0..n) (argv[0..argc): the arguments after "completion").
 */
int cli_completion(const struct cli_cmd *cmds, size_t n, int argc, char **argv);

#endif
