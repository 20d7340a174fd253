/*
 * completion.c - remat completion bash: the bash completion script,
 * written from the command line's own tables so that it cannot drift from
 * them: the commands from main.c's table, each command's options from the
 * table it hands to cli_parse() (read by running the command under
 * cli_describe()), the planners and their options from the planner
 * registry, the order methods from remat/order.h.  The build writes it
 * into the build folder and installs it (CMakeLists.txt).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "remat/order.h"

/* What a value is completed with. */
enum value_kind {
	VALUE_NONE,     /* nothing to offer (a number, a size, free text) */
	VALUE_FILE,
	VALUE_DIR,
	VALUE_WORDS,    /* one of words (a|b in the placeholder) */
	VALUE_PLANNER,
	VALUE_PLANNERS, /* a comma list of planners */
	VALUE_ORDER
};

/* One option of a command, as completion sees it. */
struct copt {
	char short_name;
	const char *long_name;
	int takes;              /* takes a value */
	enum value_kind kind;
	const char *words;      /* VALUE_WORDS: the placeholder, a|b|c */
};

#define MAX_COPTS 256

struct described {
	int seen;               /* the command called cli_parse() */
	int bad;                /* too many options, or a name unfit for the script */
	struct copt v[MAX_COPTS];
	int n;
};

/* Whether s can go into the script between single quotes and in a case label. */
static int plain_word(const char *s)
{
	return s && *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789-_.|") == strlen(s);
}

static enum value_kind kind_of(const char *argh, enum cli_complete c)
{
	switch (c) {
	case CLI_COMPLETE_PLANNER:
		return VALUE_PLANNER;
	case CLI_COMPLETE_PLANNERS:
		return VALUE_PLANNERS;
	case CLI_COMPLETE_ORDER:
		return VALUE_ORDER;
	case CLI_COMPLETE_AUTO:
		break;
	}
	if (!argh)
		return VALUE_NONE;
	if (strcmp(argh, "FILE") == 0)
		return VALUE_FILE;
	if (strcmp(argh, "DIR") == 0)
		return VALUE_DIR;
	if (strchr(argh, '|'))
		return VALUE_WORDS;
	return VALUE_NONE;
}

/* Add an option unless one of that long name is there (planners share names). */
static void add(struct described *d, char short_name, const char *long_name, int takes,
		enum value_kind kind, const char *words)
{
	int i;

	if (!plain_word(long_name) || (kind == VALUE_WORDS && !plain_word(words)) ||
	    (short_name && !strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789", short_name))) {
		d->bad = 1;
		return;
	}
	for (i = 0; i < d->n; i++)
		if (strcmp(d->v[i].long_name, long_name) == 0)
			return;
	if (d->n == MAX_COPTS) {
		d->bad = 1;
		return;
	}
	d->v[d->n++] = (struct copt){ short_name, long_name, takes, kind, words };
}

static void describe(const struct cli_cmd *cmd, const struct cli_opt *opts, void *ctx)
{
	struct described *d = ctx;
	const struct cli_opt *o;
	int planner_opts = 0;

	(void)cmd;
	d->seen = 1;
	for (o = opts; o->type != CLI_OPT_END; o++) {
		if (o->type == CLI_OPT_PLANNER) {
			planner_opts = 1;
			continue;
		}
		add(d, o->short_name, o->long_name, o->type != CLI_OPT_FLAG,
		    o->type == CLI_OPT_FLAG ? VALUE_NONE : kind_of(o->argh, o->complete),
		    o->argh);
	}
	add(d, 'h', "help", 0, VALUE_NONE, NULL);  /* every command's (parse.c) */
	if (planner_opts) {
		const struct remat_planner *const *pp;

		for (pp = remat_planner_list(); *pp; pp++) {
			const struct remat_planner_option *po = (*pp)->options;

			for (; po && po->name; po++)
				/* An option without an argument is a flag (parse.c). */
				add(d, 0, po->name, po->arg != NULL,
				    kind_of(po->arg, CLI_COMPLETE_AUTO), po->arg);
		}
	}
}

/* Print words separated by blanks: a|b|c as a b c. */
static void print_words(FILE *f, const char *words)
{
	for (; *words; words++)
		fputc(*words == '|' ? ' ' : *words, f);
}

/* The case arm of o's value ("-p|--planner) ..."); a|b|c ends the pattern. */
static void print_pattern(FILE *f, const struct copt *o, int last)
{
	if (o->short_name)
		fprintf(f, "-%c|", o->short_name);
	fprintf(f, "--%s%s", o->long_name, last ? ")" : "|");
}

static void print_value_arm(FILE *f, const struct copt *o)
{
	fputs("\t\t", f);
	print_pattern(f, o, 1);
	switch (o->kind) {
	case VALUE_NONE:
		break;
	case VALUE_FILE:
		fputs(" _remat_files", f);
		break;
	case VALUE_DIR:
		fputs(" _remat_dirs", f);
		break;
	case VALUE_WORDS:
		fputs(" _remat_reply '", f);
		print_words(f, o->words);
		fputs("'", f);
		break;
	case VALUE_PLANNER:
		fputs(" _remat_reply \"$_remat_planners\"", f);
		break;
	case VALUE_PLANNERS:
		fputs(" _remat_list \"$_remat_planners\"", f);
		break;
	case VALUE_ORDER:
		fputs(" _remat_reply \"$_remat_orders\"", f);
		break;
	}
	fputs("; return 0 ;;\n", f);
}

/* The case arm of one command. */
static int print_command(FILE *f, const struct cli_cmd *cmd)
{
	static char arg0[] = "completion";
	char *argv[] = { arg0, NULL };
	struct described d;
	int i, first, last;

	memset(&d, 0, sizeof(d));
	cli_describe(describe, &d);
	cmd->run(cmd, 0, argv);
	cli_describe(NULL, NULL);
	if (!d.seen || d.bad || !plain_word(cmd->name)) {
		cli_error("internal error: cannot describe the options of '%s'", cmd->name);
		return CLI_EXIT_SYSTEM;
	}
	fprintf(f, "\t%s)\n\t\topts='", cmd->name);
	for (i = 0; i < d.n; i++) {
		if (d.v[i].short_name)
			fprintf(f, "-%c ", d.v[i].short_name);
		fprintf(f, "--%s%s", d.v[i].long_name, i + 1 < d.n ? " " : "");
	}
	fputs("'\n\t\ttakes=' ", f);
	for (i = 0; i < d.n; i++) {
		if (!d.v[i].takes)
			continue;
		if (d.v[i].short_name)
			fprintf(f, "-%c ", d.v[i].short_name);
		fprintf(f, "--%s ", d.v[i].long_name);
	}
	fprintf(f, "'\n\t\tmax=%d\n", cmd->max_pos);
	if (cmd->word) {
		const char *w;
		size_t k;

		fputs("\t\tfirst='", f);
		for (k = 0; (w = cmd->word(k)); k++) {
			if (!plain_word(w)) {
				cli_error("internal error: '%s' cannot be completed", w);
				return CLI_EXIT_SYSTEM;
			}
			fprintf(f, "%s%s", k ? " " : "", w);
		}
		fputs("'\n", f);
	}
	/* The values: one arm each, then one for all those with nothing to offer. */
	fputs("\t\tcase $prev in\n", f);
	for (i = 0; i < d.n; i++)
		if (d.v[i].takes && d.v[i].kind != VALUE_NONE)
			print_value_arm(f, &d.v[i]);
	for (i = 0, last = -1; i < d.n; i++)
		if (d.v[i].takes && d.v[i].kind == VALUE_NONE)
			last = i;
	for (i = 0, first = 1; i <= last; i++) {
		if (!d.v[i].takes || d.v[i].kind != VALUE_NONE)
			continue;
		if (first)
			fputs("\t\t", f);
		first = 0;
		print_pattern(f, &d.v[i], i == last);
	}
	if (last >= 0)
		fputs(" return 0 ;;\n", f);
	fputs("\t\tesac\n\t\t;;\n", f);
	return CLI_EXIT_OK;
}

static const char script_head[] =
	"_remat_reply()\n"
	"{\n"
	"\tmapfile -t COMPREPLY < <(compgen -W \"$1\" -- \"$cur\")\n"
	"}\n"
	"\n"
	"_remat_files()\n"
	"{\n"
	"\tcompopt -o filenames 2>/dev/null\n"
	"\tmapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n"
	"}\n"
	"\n"
	"_remat_dirs()\n"
	"{\n"
	"\tcompopt -o filenames 2>/dev/null\n"
	"\tmapfile -t COMPREPLY < <(compgen -d -- \"$cur\")\n"
	"}\n"
	"\n"
	"# A comma list (bench --planners a,b,-c): complete the item after the last comma.\n"
	"_remat_list()\n"
	"{\n"
	"\tlocal head= item=$cur\n"
	"\tif [[ $cur == *,* ]]; then\n"
	"\t\thead=${cur%,*}, item=${cur##*,}\n"
	"\tfi\n"
	"\tif [[ $item == -* ]]; then\n"
	"\t\thead=$head- item=${item#-}\n"
	"\tfi\n"
	"\tmapfile -t COMPREPLY < <(compgen -W \"$1\" -P \"$head\" -- \"$item\")\n"
	"\tcompopt -o nospace 2>/dev/null\n"
	"}\n"
	"\n"
	"_remat()\n"
	"{\n"
	"\tlocal cur=${COMP_WORDS[COMP_CWORD]-} prev= cmd=${COMP_WORDS[1]-}\n"
	"\tlocal opts= takes= max=-1 first= i w n=0 only_pos=0\n"
	"\tCOMPREPLY=()\n"
	"\tif ((COMP_CWORD < 2)); then\n"
	"\t\t_remat_reply \"$_remat_commands --help --version\"\n"
	"\t\treturn 0\n"
	"\tfi\n"
	"\tprev=${COMP_WORDS[COMP_CWORD-1]}\n"
	"\t# --name=VALUE: bash splits the word at '=' (COMP_WORDBREAKS).\n"
	"\tif [[ $cur == = ]]; then\n"
	"\t\tcur=\n"
	"\telif [[ $prev == = ]] && ((COMP_CWORD > 2)); then\n"
	"\t\tprev=${COMP_WORDS[COMP_CWORD-2]}\n"
	"\tfi\n"
	"\tcase $cmd in\n"
	"\thelp)\n"
	"\t\t((COMP_CWORD == 2)) && _remat_reply \"$_remat_commands\"\n"
	"\t\treturn 0 ;;\n"
	"\tcompletion)\n"
	"\t\t((COMP_CWORD == 2)) && _remat_reply bash\n"
	"\t\treturn 0 ;;\n";

static const char script_tail[] =
	"\t*)\n"
	"\t\treturn 0 ;;\n"
	"\tesac\n"
	"\t# The positional arguments before this word, and whether '--' ended the options.\n"
	"\tfor ((i = 2; i < COMP_CWORD; i++)); do\n"
	"\t\tw=${COMP_WORDS[i]}\n"
	"\t\tif ((only_pos)); then\n"
	"\t\t\t((++n))\n"
	"\t\telif [[ $w == -- ]]; then\n"
	"\t\t\tonly_pos=1\n"
	"\t\telif [[ $w == = ]]; then\n"
	"\t\t\t((++i))\n"
	"\t\telif [[ $w == -?* ]]; then\n"
	"\t\t\tif [[ $takes == *\" $w \"* && ${COMP_WORDS[i+1]-} != = ]]; then\n"
	"\t\t\t\t((++i))\n"
	"\t\t\tfi\n"
	"\t\telse\n"
	"\t\t\t((++n))\n"
	"\t\tfi\n"
	"\tdone\n"
	"\tif ((!only_pos)) && [[ $cur == -* ]]; then\n"
	"\t\t_remat_reply \"$opts\"\n"
	"\telif ((max >= 0 && n >= max)); then\n"
	"\t\treturn 0\n"
	"\telif ((n == 0)) && [[ -n $first ]]; then\n"
	"\t\t_remat_reply \"$first\"\n"
	"\telse\n"
	"\t\t_remat_files\n"
	"\tfi\n"
	"\treturn 0\n"
	"}\n"
	"\n"
	"complete -F _remat remat\n";

static int print_bash(FILE *f, const struct cli_cmd *cmds, size_t n)
{
	const struct remat_planner *const *pp;
	const char *name;
	size_t i;
	int m, code;

	fprintf(f, "# bash completion for remat(1) %s: its commands, their options, the\n"
		"# planners' names and options.  Written by 'remat completion bash' from\n"
		"# the command line's own tables; do not edit.  To load it by hand:\n"
		"#   source <(remat completion bash)\n\n", REMAT_VERSION);
	fputs("_remat_commands='", f);
	for (i = 0; i < n; i++) {
		if (!plain_word(cmds[i].name))
			return CLI_EXIT_SYSTEM;
		fprintf(f, "%s%s", i ? " " : "", cmds[i].name);
	}
	fputs("'\n_remat_planners='", f);
	for (pp = remat_planner_list(); *pp; pp++) {
		if (!plain_word((*pp)->name))
			return CLI_EXIT_SYSTEM;
		fprintf(f, "%s%s", pp == remat_planner_list() ? "" : " ", (*pp)->name);
	}
	fputs("'\n_remat_orders='", f);
	for (m = 0; (name = remat_order_method_name((enum remat_order_method)m)); m++) {
		if (!plain_word(name))
			return CLI_EXIT_SYSTEM;
		fprintf(f, "%s%s", m ? " " : "", name);
	}
	fputs("'\n\n", f);
	fputs(script_head, f);
	for (i = 0; i < n; i++)
		if ((code = print_command(f, &cmds[i])) != CLI_EXIT_OK)
			return code;
	fputs(script_tail, f);
	return CLI_EXIT_OK;
}

int cli_completion(const struct cli_cmd *cmds, size_t n, int argc, char **argv)
{
	int code;

	if (argc != 1 || strcmp(argv[0], "bash") != 0) {
		if (argc == 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
			printf("usage: remat completion bash\n\nprint the bash completion "
			       "script (source <(remat completion bash))\n");
			return CLI_EXIT_OK;
		}
		return cli_usage_see("remat completion --help",
				     "usage: remat completion bash (the one shell it knows)");
	}
	code = print_bash(stdout, cmds, n);
	if (code == CLI_EXIT_OK && (fflush(stdout) || ferror(stdout))) {
		cli_error("cannot write the script");
		code = CLI_EXIT_SYSTEM;
	}
	return code;
}
