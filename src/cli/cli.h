/*
 * cli.h - the remat command line: a table of subcommands (after git's
 * commands[]), each with a table of options from which its --help is
 * generated (after git's parse-options).  The CLI is thin: it parses,
 * calls libremat, prints, and maps statuses to exit codes.
 */
#ifndef REMAT_CLI_H
#define REMAT_CLI_H

#include <stdio.h>

#include "remat/remat.h"

#define CLI_MAX_OPTS 48
#define CLI_MAX_POS 64

struct cli_opt {
	const char *name;     /* long name, given as --name */
	char short_name;      /* 0 for none */
	const char *arg;      /* placeholder ("B"), NULL for a flag */
	const char *help;
	int multi;            /* may be repeated; every value kept */
};

struct cli_args;

struct cli_cmd {
	const char *name;
	const char *usage;    /* after "remat NAME " */
	const char *summary;  /* one line for "remat --help" */
	const char *description; /* paragraph for "remat NAME --help", or NULL */
	const struct cli_opt *opts; /* {NULL}-terminated */
	int min_pos, max_pos;
	int planner_opts;     /* accepts --OPTION VALUE declared by planners */
	int (*run)(struct cli_args *a);
};

struct cli_args {
	const struct cli_cmd *cmd;
	const char *val[CLI_MAX_OPTS];   /* last value, or "" for a set flag */
	const char **multi[CLI_MAX_OPTS];
	int n_multi[CLI_MAX_OPTS];
	const char *pos[CLI_MAX_POS];
	int npos;
	struct remat_kv *popts;          /* planner options */
	int n_popts;
};

/* Value of option name, or NULL when not given. */
const char *cli_get(const struct cli_args *a, const char *name);
/* All values of a multi option (count in *n). */
const char **cli_get_all(const struct cli_args *a, const char *name, int *n);
int cli_flag(const struct cli_args *a, const char *name);

/* Print "remat: msg" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Map a libremat status to the exit code of FORMATS.md section 4. */
int cli_exit_code(int status);
/* Usage error for the current command: message, hint, exit code 2. */
int cli_usage_error(const struct cli_args *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Parse --time-limit style non-negative seconds; -1 on error. */
double cli_parse_seconds(const char *s);

/* Emit the --json object of plan and simulate (res NULL: no schedule). */
void cli_print_result_json(FILE *f, const struct remat_sim_result *res,
			   int64_t budget, const char *planner,
			   const char *chosen, double time_s, const char *error,
			   const struct remat_plan_report *report);
/* Print the human summary of a simulated schedule. */
void cli_print_result_text(FILE *f, const struct remat_graph *g,
			   const struct remat_sim_result *res, int64_t budget);

int cmd_plan(struct cli_args *a);
int cmd_simulate(struct cli_args *a);
int cmd_info(struct cli_args *a);
int cmd_planners(struct cli_args *a);
int cmd_gen(struct cli_args *a);
int cmd_convert(struct cli_args *a);
int cmd_bench(struct cli_args *a);
int cmd_order(struct cli_args *a);

extern const struct cli_opt cmd_plan_opts[];
extern const struct cli_opt cmd_simulate_opts[];
extern const struct cli_opt cmd_info_opts[];
extern const struct cli_opt cmd_planners_opts[];
extern const struct cli_opt cmd_gen_opts[];
extern const struct cli_opt cmd_convert_opts[];
extern const struct cli_opt cmd_bench_opts[];
extern const struct cli_opt cmd_order_opts[];

#endif
