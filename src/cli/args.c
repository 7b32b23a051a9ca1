/* args.c - option parsing with getopt_long's conventions, global options
 * anywhere, and the closest name suggested on a typo. */
#include "cli.h"
#include <stdlib.h>
#include <string.h>

const char *cli_db, *cli_schema;

enum { G_DB = -100, G_SCHEMA, G_HELP };

static const cli_option globals[] = {
	{"db", CLI_VALUE, G_DB, 0},
	{"schema", CLI_VALUE, G_SCHEMA, 0},
	{"help", CLI_FLAG, G_HELP, 'h'},
	{NULL, 0, 0, 0},
};

void cli_args_init(cli_args *a, int argc, char **argv, const cli_option *opts, const char *help)
{
	memset(a, 0, sizeof *a);
	a->argc = argc;
	a->argv = argv;
	a->opts = opts;
	a->help = help;
	a->unknown_fmt = "unknown option %s";
	a->missing_fmt = "%s needs a value";
	a->i = 1;
	if (argv[0] && *argv[0]) snprintf(a->prefix, sizeof a->prefix, "%s: ", argv[0]);
}

const char *cli_closest(const char *word, const char *const *cand, size_t n)
{
	/* a name given exactly (an option of another command) is its own
	 * closest; else util/near's "did you mean" */
	for (size_t i = 0; *word && i < n; i++)
		if (cand[i] && !strcmp(cand[i], word)) return cand[i];
	return near_name(word, cand, n);
}

static const cli_option *find_long(const cli_option *t, const char *name, size_t n)
{
	for (; t && t->name; t++)
		if (strlen(t->name) == n && !strncmp(t->name, name, n)) return t;
	return NULL;
}

static const cli_option *find_short(const cli_option *t, char c)
{
	for (; t && t->name; t++)
		if (t->short_name && t->short_name == c) return t;
	return NULL;
}

static void die_unknown(cli_args *a, const char *typed, const char *name, size_t n)
{
	const char *cand[128];
	size_t k = 0;
	for (const cli_option *o = a->opts; o && o->name && k < 120; o++) cand[k++] = o->name;
	for (const cli_option *o = globals; o->name; o++) cand[k++] = o->name;
	const char *best = NULL;
	if (name) {
		char word[64];
		snprintf(word, sizeof word, "%.*s", (int)(n < 63 ? n : 63), name);
		best = cli_closest(word, cand, k);
	}
	if (best) die_usage("%sunknown option %s; did you mean --%s?", a->prefix, typed, best);
	char msg[256];
	snprintf(msg, sizeof msg, a->unknown_fmt, typed);
	die_usage("%s%s", a->prefix, msg);
}

static void die_missing(cli_args *a, const char *typed)
{
	char msg[256];
	snprintf(msg, sizeof msg, a->missing_fmt, typed);
	die_usage("%s%s", a->prefix, msg);
}

/* Apply a global option; returns 1 if o was one. */
static int global(cli_args *a, const cli_option *o)
{
	switch (o->id) {
	case G_DB: cli_db = a->arg; return 1;
	case G_SCHEMA: cli_schema = a->arg; return 1;
	case G_HELP:
		if (a->help) fputs(a->help, stdout);
		exit(0);
	}
	return 0;
}

int cli_next(cli_args *a)
{
	for (;;) {
		a->arg = a->opt = NULL;
		a->rest = NULL;
		if (a->i >= a->argc) return CLI_END;
		char *t = a->argv[a->i++];
		if (a->only_args || t[0] != '-' || !t[1]) {
			a->arg = t;
			return CLI_ARG;
		}
		if (!strcmp(t, "--")) { a->only_args = 1; continue; }
		const cli_option *o;
		char *val = NULL;   /* a value attached to the token: --name=V or -nV */
		if (t[1] == '-') {
			const char *name = t + 2;
			char *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			o = find_long(a->opts, name, n);
			if (!o) o = find_long(globals, name, n);
			if (!o) {
				char typed[80];
				snprintf(typed, sizeof typed, "--%.*s", (int)(n < 60 ? n : 60), name);
				die_unknown(a, typed, name, n);
			}
			if (eq) val = eq + 1;
		} else {
			o = find_short(a->opts, t[1]);
			if (!o) o = find_short(globals, t[1]);
			if (!o) {
				char typed[3] = {'-', t[1], 0};
				die_unknown(a, typed, NULL, 0);
			}
			if (t[2]) val = t + 2;
		}
		char *typed = a->optbuf;
		if (t[1] == '-') snprintf(typed, sizeof a->optbuf, "--%s", o->name);
		else snprintf(typed, sizeof a->optbuf, "-%c", o->short_name);
		switch (o->has_arg) {
		case CLI_FLAG:
			/* -xy: clustered short flags are not supported */
			if (val) die_usage("%s%s takes no value", a->prefix, typed);
			break;
		case CLI_VALUE:
			if (val) a->arg = val;
			else if (a->i < a->argc) a->arg = a->argv[a->i++];
			else die_missing(a, typed);
			break;
		case CLI_REST:
			/* --make=PROG ARG... or --make PROG ARG...: the value becomes
			 * the first word of the rest */
			if (val) {
				a->argv[a->i - 1] = val;
				a->rest = &a->argv[a->i - 1];
			} else if (a->i < a->argc)
				a->rest = &a->argv[a->i];
			else
				die_missing(a, typed);
			a->arg = a->rest[0];
			a->i = a->argc;
			break;
		}
		if (global(a, o)) continue;
		a->opt = typed;
		return o->id;
	}
}

/* --where: condition text (the library parses and checks it: "condition,
 * column N: ...", exit 2) or JSON, which must parse (blank is checked as
 * JSON: "--where is not valid JSON", as before condition text). */
void check_where(const char *opt, const char *v)
{
	const char *s = v;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
	if (!*s || *s == '{' || *s == '[') check_json(opt, v);
}
