/*
 * parse.c - options bound to typed variables (after git's parse-options):
 * one parser for every command, converting and range-checking each value
 * once, and the --help text generated from the same table.
 *
 * Two passes: the first recognizes every argument (unknown options,
 * missing values, --help) and sets the flags; the second converts the
 * values in command-line order.  So a command knows its flags (--json)
 * even when a value before them is refused.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Set by cli_describe(): describe the table instead of parsing. */
static cli_describe_fn describe_fn;
static void *describe_ctx;

void cli_describe(cli_describe_fn fn, void *ctx)
{
	describe_fn = fn;
	describe_ctx = ctx;
}

/* A value waiting for the second pass. */
struct pending {
	struct cli_opt *o;
	const char *val;
};

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

static int takes_planner_options(const struct cli_opt *opts)
{
	for (; opts->type != CLI_OPT_END; opts++)
		if (opts->type == CLI_OPT_PLANNER)
			return 1;
	return 0;
}

static void command_help(const struct cli_cmd *c, const struct cli_opt *opts, FILE *f)
{
	const struct cli_opt *o;

	fprintf(f, "usage: remat %s %s\n\n%s\n", c->name, c->usage, c->summary);
	if (c->description)
		fprintf(f, "\n%s\n", c->description);
	fprintf(f, "\noptions:\n");
	for (o = opts; o->type != CLI_OPT_END; o++)
		if (o->type != CLI_OPT_PLANNER)
			print_opt(f, o->long_name, o->short_name,
				  o->type == CLI_OPT_FLAG ? NULL : o->argh, o->help);
	print_opt(f, "help", 'h', NULL, "show this help");
	if (takes_planner_options(opts)) {
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

/* The name of option name as some planner declares it (static), or NULL. */
static const struct remat_planner_option *planner_option_def(const char *name)
{
	const struct remat_planner *const *pp;

	for (pp = remat_planner_list(); *pp; pp++) {
		const struct remat_planner_option *po = (*pp)->options;

		for (; po && po->name; po++)
			if (strcmp(po->name, name) == 0)
				return po;
	}
	return NULL;
}

static const char *planner_option(const char *name)
{
	const struct remat_planner_option *po = planner_option_def(name);

	return po ? po->name : NULL;
}

static struct cli_opt *find_long(struct cli_opt *opts, const char *name)
{
	for (; opts->type != CLI_OPT_END; opts++)
		if (opts->long_name && strcmp(opts->long_name, name) == 0)
			return opts;
	return NULL;
}

static struct cli_opt *find_short(struct cli_opt *opts, char c)
{
	for (; opts->type != CLI_OPT_END; opts++)
		if (opts->short_name && opts->short_name == c)
			return opts;
	return NULL;
}

static struct cli_opt *find_type(struct cli_opt *opts, enum cli_opt_type t)
{
	for (; opts->type != CLI_OPT_END; opts++)
		if (opts->type == t)
			return opts;
	return NULL;
}

int cli_to_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (*end || errno == ERANGE || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int to_uint64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!(*s >= '0' && *s <= '9'))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno == ERANGE)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int to_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int to_bytes(const char *s, int64_t *out)
{
	struct remat_budget_spec spec;
	struct remat_error err;
	int64_t v;

	remat_error_clear(&err);
	if (remat_budget_parse(s, &spec, &err) || spec.percent ||
	    remat_budget_resolve(&spec, 0, &v, &err) || v > REMAT_MAX_BYTES)
		return -1;
	*out = v;
	return 0;
}

static int push_list(struct cli_list *l, const char *v)
{
	const char **nv = realloc(l->v, sizeof(*nv) * (size_t)(l->n + 1));

	if (!nv)
		return -1;
	nv[l->n++] = v;
	l->v = nv;
	return 0;
}

static int push_planner_opt(struct cli_planner_opts *p, const char *key, const char *v)
{
	struct remat_kv *nv = realloc(p->v, sizeof(*nv) * (size_t)(p->n + 1));

	if (!nv)
		return -1;
	nv[p->n].key = key;
	nv[p->n].value = v;
	p->n++;
	p->v = nv;
	return 0;
}

/* What a value of o must be, for the one message about a refused value. */
static void describe_needs(const struct cli_opt *o, char *buf, size_t size)
{
	switch (o->type) {
	case CLI_OPT_INT:
		snprintf(buf, size, "an integer from %ld to %ld", (long)o->lo, (long)o->hi);
		break;
	case CLI_OPT_UINT64:
		snprintf(buf, size, "a non-negative integer");
		break;
	case CLI_OPT_NUMBER:
		if (isinf(o->hi))
			snprintf(buf, size, "a number >= %g", o->lo);
		else
			snprintf(buf, size, "a number from %g to %g", o->lo, o->hi);
		break;
	case CLI_OPT_SECONDS:
		snprintf(buf, size, "a number of seconds");
		break;
	case CLI_OPT_BYTES:
		snprintf(buf, size, "a size in bytes (4096, 1.5MiB)");
		break;
	default:
		snprintf(buf, size, "%s", o->needs ? o->needs : "another value");
		break;
	}
}

/* Convert one value into its variable: 0, or an exit code (reported). */
static int convert(struct cli_opt *o, const char *val)
{
	int bad = 0;

	switch (o->type) {
	case CLI_OPT_INT: {
		long v;

		bad = cli_to_long(val, (long)o->lo, (long)o->hi, &v);
		if (!bad)
			*(int *)o->value = (int)v;
		break;
	}
	case CLI_OPT_UINT64:
		bad = to_uint64(val, o->value);
		break;
	case CLI_OPT_NUMBER:
		bad = to_double(val, o->lo, o->hi, o->value);
		break;
	case CLI_OPT_SECONDS:
		bad = to_double(val, 0, INFINITY, o->value);
		break;
	case CLI_OPT_BYTES:
		bad = to_bytes(val, o->value);
		break;
	case CLI_OPT_BUDGET: {
		struct cli_budget *b = o->value;

		b->given = 1;
		remat_error_clear(&b->err);
		if (remat_budget_parse(val, &b->spec, &b->err))
			return cli_usage_error("%s", b->err.msg);
		break;
	}
	case CLI_OPT_STRING:
		*(const char **)o->value = val;
		break;
	case CLI_OPT_LIST:
		if (push_list(o->value, val)) {
			cli_error("out of memory");
			return CLI_EXIT_SYSTEM;
		}
		break;
	case CLI_OPT_CALLBACK:
		bad = o->cb(o, val);
		break;
	default:
		break;
	}
	if (bad) {
		char needs[128];

		describe_needs(o, needs, sizeof(needs));
		return cli_usage_error("'--%s' needs %s, not '%s'", o->long_name, needs, val);
	}
	return 0;
}

void cli_release(struct cli_opt *opts)
{
	for (; opts->type != CLI_OPT_END; opts++) {
		if (opts->type == CLI_OPT_LIST) {
			struct cli_list *l = opts->value;

			free(l->v);
			l->v = NULL;
			l->n = 0;
		} else if (opts->type == CLI_OPT_PLANNER) {
			struct cli_planner_opts *p = opts->value;

			free(p->v);
			p->v = NULL;
			p->n = 0;
		}
	}
}

const char *cli_given(const struct cli_opt *opts, const char *long_name)
{
	for (; opts->type != CLI_OPT_END; opts++)
		if (opts->long_name && strcmp(opts->long_name, long_name) == 0)
			return opts->given;
	return NULL;
}

/*
 * The first pass over one argument that starts with '-': find its entry
 * and its value.  Returns 0 with *o (NULL for a planner's option, whose
 * name goes to *pkey) and *val set, 1 after --help, or an exit code.
 */
static int recognize(const struct cli_cmd *cmd, struct cli_opt *opts, int argc,
		     char **argv, int *i, struct cli_opt **o, const char **pkey,
		     const char **val)
{
	const char *s = argv[*i];
	char name[64];
	int attached = 0;

	*o = NULL;
	*pkey = NULL;
	*val = NULL;
	if (s[1] == '-') {
		const char *eq = strchr(s + 2, '=');
		size_t len = eq ? (size_t)(eq - (s + 2)) : strlen(s + 2);

		if (len >= sizeof(name))
			return cli_usage_error("unknown option '%s'", s);
		memcpy(name, s + 2, len);
		name[len] = '\0';
		if (eq) {
			*val = eq + 1;
			attached = 1;
		}
		*o = find_long(opts, name);
		if (!*o && strcmp(name, "help") == 0) {
			command_help(cmd, opts, stdout);
			return 1;
		}
		if (!*o && find_type(opts, CLI_OPT_PLANNER))
			*pkey = planner_option(name);
		if (!*o && !*pkey)
			return cli_usage_error("unknown option '%s'", s);
	} else {
		*o = find_short(opts, s[1]);
		if (!*o && s[1] == 'h' && s[2] == '\0') {
			command_help(cmd, opts, stdout);
			return 1;
		}
		/* A flag stands alone; an option with a value may have it attached. */
		if (!*o || ((*o)->type == CLI_OPT_FLAG && s[2] != '\0'))
			return cli_usage_error("unknown option '%s'", s);
		if (s[2] != '\0') {
			*val = s + 2;
			attached = 1;
		}
		snprintf(name, sizeof(name), "%s", (*o)->long_name);
	}
	if (*o && (*o)->type == CLI_OPT_FLAG) {
		if (attached)
			return cli_usage_error("option '--%s' takes no value", name);
		return 0;
	}
	/* A planner's option without an argument (arg NULL) is a flag: "1". */
	if (!*o && *pkey && !planner_option_def(*pkey)->arg) {
		if (attached)
			return cli_usage_error("option '--%s' takes no value", name);
		*val = "1";
		return 0;
	}
	if (!attached) {
		if (*i + 1 >= argc)
			return cli_usage_error("option '--%s' needs a value", name);
		*val = argv[++*i];
	}
	return 0;
}

int cli_parse(const struct cli_cmd *cmd, struct cli_opt *opts, int *argc, char **argv)
{
	struct cli_opt *popt = find_type(opts, CLI_OPT_PLANNER), *o;
	struct pending *todo;
	int i, npos = 0, ntodo = 0, only_pos = 0, code = CLI_GO_ON;

	if (describe_fn) {
		describe_fn(cmd, opts, describe_ctx);
		*argc = 0;
		return CLI_EXIT_OK;
	}
	todo = malloc(sizeof(*todo) * ((size_t)*argc + 1));
	if (!todo) {
		cli_error("out of memory");
		return CLI_EXIT_SYSTEM;
	}
	/* Pass 1: recognize every argument; flags are set here. */
	for (i = 0; i < *argc && code == CLI_GO_ON; i++) {
		const char *s = argv[i], *key, *val;
		int rc;

		if (only_pos || s[0] != '-' || s[1] == '\0') {
			argv[npos++] = argv[i];
			continue;
		}
		if (strcmp(s, "--") == 0) {
			only_pos = 1;
			continue;
		}
		rc = recognize(cmd, opts, *argc, argv, &i, &o, &key, &val);
		if (rc == 1)
			code = CLI_EXIT_OK;
		else if (rc)
			code = rc;
		else if (key && push_planner_opt(popt->value, key, val))
			code = CLI_EXIT_SYSTEM;
		else if (o && o->type == CLI_OPT_FLAG)
			*(int *)o->value = 1;
		else if (o)
			todo[ntodo++] = (struct pending){ o, val };
		if (o && rc == 0)
			o->given = o->type == CLI_OPT_FLAG ? "" : val;
	}
	if (code == CLI_EXIT_SYSTEM)
		cli_error("out of memory");
	/* The positional arguments, then the required options. */
	if (code == CLI_GO_ON && npos < cmd->min_pos)
		code = cli_usage_error("missing arguments: usage: remat %s %s", cmd->name,
				       cmd->usage);
	if (code == CLI_GO_ON && cmd->max_pos >= 0 && npos > cmd->max_pos)
		code = cli_usage_error("unexpected argument '%s'", argv[cmd->max_pos]);
	for (o = opts; code == CLI_GO_ON && o->type != CLI_OPT_END; o++)
		if ((o->flags & CLI_REQUIRED) && !o->given)
			code = cli_usage_error("'--%s' is required", o->long_name);
	/* Pass 2: convert the values in command-line order. */
	for (i = 0; i < ntodo && code == CLI_GO_ON; i++) {
		int rc = convert(todo[i].o, todo[i].val);

		if (rc)
			code = rc;
	}
	free(todo);
	if (code != CLI_GO_ON)
		cli_release(opts);
	*argc = npos;
	return code;
}
