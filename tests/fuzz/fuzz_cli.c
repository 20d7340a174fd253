/*
 * fuzz_cli.c - libFuzzer target for the command-line option parser
 * (src/cli/parse.c).  The input is split at NUL bytes into an argv (at
 * most 32 words) and parsed against an option table with one option of
 * every type: 'remat plan's table plus --jobs (INT), --output as a list,
 * --tolerance (a callback) and --ratio (NUMBER).  Only cli_parse() and
 * cli_release() run: nothing is loaded, planned or written, and nothing
 * calls exit().  A parse must end in CLI_GO_ON with every positional
 * argument in argv[0..argc), or in an exit code; usage errors print on
 * stderr (run the fuzzer with -close_fd_mask=3 to keep it quiet).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int remat_cli_main(int argc, char **argv);

/* The CLI's messages, command table and helpers, without its main(). */
#define main remat_cli_main
#include "cli/main.c"
#undef main

static int tolerance_cb(const struct cli_opt *o, const char *arg)
{
	char *end;
	double v = strtod(arg, &end);

	if (end == arg || (*end && strcmp(end, "%") != 0) || !(v >= 0))
		return -1;
	*(double *)o->value = *end ? v / 100 : v;
	return 0;
}

#define MAX_WORDS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct cli_cmd cmd = { "plan", "GRAPH [--budget B] [options]",
					    "plan a schedule", NULL, 0, 2, NULL, NULL };
	struct cli_budget budget = CLI_BUDGET_INIT;
	const char *pname = "auto", *out = NULL, *order_text = NULL, *timeline = NULL;
	double limit = 0, tolerance = 0.01, ratio = 0;
	int64_t device = -1;
	uint64_t seed = 1;
	int json = 0, quiet = 0, jobs = 1;
	struct cli_list outs = { 0 };
	struct cli_planner_opts popts = { 0 };
	struct cli_opt opts[] = {
		OPT_BUDGET('b', "budget", &budget, "memory budget"),
		OPT_BYTES(0, "device-memory", &device, "B", "device memory"),
		OPT_STRING_C('p', "planner", &pname, "NAME", CLI_COMPLETE_PLANNER, "planner"),
		OPT_STRING('O', "out", &out, "FILE", "schedule file"),
		OPT_SECONDS('t', "time-limit", &limit, "time limit"),
		OPT_UINT64(0, "seed", &seed, "N", "seed"),
		OPT_STRING_C(0, "order", &order_text, "METHOD", CLI_COMPLETE_ORDER, "order"),
		OPT_FLAG(0, "json", &json, "JSON"),
		OPT_FLAG('q', "quiet", &quiet, "quiet"),
		OPT_STRING(0, "timeline", &timeline, "FILE", "timeline"),
		OPT_INT('j', "jobs", &jobs, "N", 1, 1024, "jobs"),
		OPT_LIST('o', "output", &outs, "FILE", "outputs (repeatable)"),
		OPT_CALLBACK(0, "tolerance", &tolerance, "T", "a fraction or a percentage",
			     tolerance_cb, "tolerance"),
		OPT_NUMBER(0, "ratio", &ratio, "R", 0, 1, "a number from 0 to 1"),
		OPT_PLANNER_OPTIONS(&popts),
		OPT_END()
	};
	char *copy = malloc(size + 1), *argv[MAX_WORDS + 1], *orig[MAX_WORDS + 1];
	int argc = 0, code;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	for (char *p = copy; p <= copy + size && argc < MAX_WORDS; p += strlen(p) + 1)
		orig[argc] = argv[argc] = p, argc++;
	argv[argc] = orig[argc] = NULL;
	cli_set_command(&cmd);
	{
		int n = argc;

		code = cli_parse(&cmd, opts, &n, argv);
		if (code == CLI_GO_ON) {
			/* The positional arguments are words of the input. */
			if (n < 0 || n > 2)
				abort();
			for (int i = 0; i < n; i++) {
				int found = 0;

				for (int k = 0; k < argc; k++)
					found |= argv[i] == orig[k];
				if (!found)
					abort();
			}
			if (budget.given && budget.err.code == 0 && budget.spec.text[0] == '\0' &&
			    !budget.spec.lowest)
				abort();
			for (int i = 0; i < outs.n; i++)
				if (!outs.v[i])
					abort();
			cli_release(opts);
		} else if (code != CLI_EXIT_OK && code != CLI_EXIT_USAGE && code != CLI_EXIT_SYSTEM) {
			abort();
		}
	}
	cli_set_command(NULL);
	free(copy);
	return 0;
}
