/* cli.h - what the files of the djc command share: the command table, the
 * option parser, errors and exit statuses, connecting, JSON output. The
 * command uses only the public API (include/djc.h); this header is internal
 * to src/cli.
 *
 * Adding a command: write `int cmd_NAME(int argc, char **argv)` in a file of
 * src/cli (argv[0] is the command's name, e.g. "jobs refresh"; parse the rest
 * with cli_args/cli_next; return the exit status) and add one row to
 * commands.h. */
#ifndef DJC_CLI_H
#define DJC_CLI_H

#include "djc.h"
#include <jansson.h>
#include <stdio.h>

/* ------------------------------------------------------------ commands */

typedef int (*cli_run_fn)(int argc, char **argv);

typedef struct cli_command {
	const char *name;       /* "populate"; a subcommand is "jobs refresh" */
	cli_run_fn run;
	const char *synopsis;   /* for djc --help: "populate TABLE" */
	const char *summary;    /* one line for djc --help */
} cli_command;

/* Every command's function, declared from the table in commands.h. */
#define CLI_COMMAND(name, fn, synopsis, summary) int fn(int argc, char **argv);
#include "commands.h"
#undef CLI_COMMAND

/* For `djc GROUP WORD ...` where WORD is not a subcommand of GROUP: the
 * subcommand WORD is a typo of, or NULL. */
const char *cli_subcommand_near(const char *group, const char *word);

/* ------------------------------------------------------ global options */

/* --db and --schema: accepted anywhere on the line (before `--` and before
 * an option that takes the rest of the line); NULL when not given. */
extern const char *cli_db, *cli_schema;

/* ------------------------------------------------------ option parsing */

/* getopt_long conventions: --name=VALUE or --name VALUE, -x VALUE or
 * -xVALUE for an option with a short name, `--` ends the options, a lone
 * `-` is an argument, options and arguments in any order. Long names must
 * be given whole (no abbreviations, so a new option never makes someone's
 * script ambiguous); a typo gets the closest name suggested. --help/-h,
 * --db and --schema are understood by every command. */
enum cli_has_arg {
	CLI_FLAG = 0,   /* --json */
	CLI_VALUE = 1,  /* --where JSON, --where=JSON */
	CLI_REST = 2    /* --make PROG ARG...: the rest of the line, options or not */
};

typedef struct cli_option {
	const char *name;       /* long name without "--"; NULL ends the table */
	int has_arg;            /* enum cli_has_arg */
	int id;                 /* what cli_next returns for it (> 0) */
	char short_name;        /* 0, or 'n' for -n */
} cli_option;

enum { CLI_END = -1, CLI_ARG = -2 };

typedef struct cli_args {
	/* set by cli_args_init; a command may change the wording before parsing */
	int argc;
	char **argv;              /* NULL-terminated; argv[0] is the command's name */
	const cli_option *opts;   /* the command's options, NULL-name terminated */
	const char *help;         /* printed on stdout by --help/-h, then exit 0 */
	const char *unknown_fmt;  /* "unknown option %s" (the option as typed) */
	const char *missing_fmt;  /* "%s needs a value" */
	/* set by cli_next */
	const char *arg;          /* the option's value, or the argument (CLI_ARG) */
	const char *opt;          /* the option as typed, e.g. "--where" */
	char **rest;              /* CLI_REST: the value and what follows it, NULL-terminated */
	/* internal */
	int i, only_args;
	char prefix[64];          /* "fetch: " for messages */
	char optbuf[80];
} cli_args;

void cli_args_init(cli_args *a, int argc, char **argv, const cli_option *opts, const char *help);
/* The next option's id (its value in a->arg), CLI_ARG for an argument (in
 * a->arg), or CLI_END. Global options are applied and skipped; --help
 * prints a->help and exits 0; an unknown option, a missing value or a value
 * given to a flag is a usage error (exit 2, one line, the closest option
 * suggested). */
int cli_next(cli_args *a);

/* The candidate closest to word (a typo: a few letters changed, added,
 * dropped or swapped; or word a prefix of exactly one), or NULL. */
const char *cli_closest(const char *word, const char *const *candidates, size_t n);
/* The library's "did you mean" (src/util/near.c, declared in util/near.h):
 * the CLI includes only djc.h and its own headers, so it is declared here,
 * and the Makefile links util/near.o into djc beside the public libdjc.a
 * (whose copy is local to it). */
const char *near_name(const char *word, const char *const *cand, size_t n);

/* ------------------------------------------------ errors, exit statuses */

/* "djc: MESSAGE" on stderr as one line (control characters as spaces), exit 2. */
void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* s on f with newlines and other control characters as spaces. */
void put_line(const char *s, FILE *f);
/* The exit status for a library status: 0 for DJC_OK; else prints
 * djc_error_last(c) (or djc_strerror(rc) without a connection) as one line
 * and returns 2 for bad input (DJC_EINVAL, ENOTFOUND, ECONFLICT, EDUPLICATE,
 * EFOREIGN), 1 otherwise. */
int exit_for(int rc, djc_conn *c);
/* exit_for's status of rc (0 for DJC_OK), printing nothing. */
int exit_status(int rc);
/* The end of a command that ran on connection c: exit_for(rc, c), then c
 * closed. Returns the exit status. */
int cli_done(int rc, djc_conn *c);

/* Open the connection named by --db/--schema (or the configuration); on
 * failure print why and exit. Only CLI_CREATE (declare) may create the
 * SQLite file or the schema; with CLI_EXISTING a missing one is a one-line
 * error, exit 2. */
enum { CLI_EXISTING = 0, CLI_CREATE = 1 };
djc_conn *cli_connect(int create);
/* The configuration's warnings (djc_config_warning), each line as
 * "djc: warning: ..." on stderr; cli_connect prints them. */
void cli_print_warnings(void);
/* Block SIGUSR1 from the start of populate and worker: a drain asked while
 * they read settings and connect stays pending until djc_populate /
 * djc_worker catch it (and drain before the first job), instead of ending
 * the process. */
void cli_block_drain(void);

/* The whole file at path, NUL-terminated (caller frees); a usage error
 * (exit 2) when it cannot be read or holds a NUL byte. */
char *cli_read_file(const char *path);

/* Option values: a usage error (exit 2) names opt when v is not what it
 * must be. */
long parse_long(const char *opt, const char *v, long min);
double parse_double(const char *opt, const char *v);
void check_json(const char *opt, const char *v);
/* 1 when a command's TABLE argument is a table name (as before issue 39),
 * 0 when it is an expression of the algebra (a bracket, A * B, A & B,
 * A + B, A - B):
 * fetch and delete (cmd_data.c). Anything else, spaces and quotes
 * included, is a table name, unknown as before. */
int cli_plain_name(const char *s);
/* A --where value: condition text (checked by the library) or JSON (must
 * parse; so must a blank value). */
void check_where(const char *opt, const char *v);
/* x (read from v) checked by the library's one check for its kind of
 * value, `name` as djc_option_check takes it ("priority", "delay",
 * "timeout", ...): a usage error "OPT must be WHAT, got 'V'" (exit 2). */
void check_value(const char *opt, const char *name, double x, const char *v);
/* --priority P: an integer >= 0 within what a job's priority takes. */
long parse_priority(const char *opt, const char *v);
/* --timeout DURATION for populate and worker: a duration within what a
 * make's timeout takes; 0 is DJC_TIMEOUT_NONE (no limit for this run,
 * whatever the table's `timeout =` or jobs.make_timeout say). */
double parse_timeout(const char *opt, const char *v);
/* 1 if the restriction v (valid JSON) restricts nothing: {} or a list
 * holding {}. A command that acts on every row only with --all (or without
 * --where) refuses it: an empty restriction never means everything. */
int where_is_empty(const char *v);

/* ------------------------------------- populate and worker (cmd_populate.c) */

/* What populate and worker report alike: their counts and signals. */
typedef struct cli_run_counts {
	long made, errors, skipped, lost, retried, cancelled;
} cli_run_counts;
/* "N made, N error(s), N skipped[, N lost reservation(s)][, N retried][, N
 * cancelled]" on stdout (no newline). */
void cli_print_counts(const cli_run_counts *n);
/* The JSON of the signal that stopped a run: "SIGINT", "SIGTERM" or null. */
json_t *cli_json_signal(int sig);
/* The one stderr line of a run whose makes failed, naming the first failed
 * key: "djc: 1 make call of T failed; key {...}: MESSAGE", or with n > 1
 * "djc: N make calls of T failed; first {...} (N-1 more): MESSAGE"; table
 * NULL when the errors are of several tables: "djc: N make calls failed;
 * first FIRST_TABLE {...} ...". */
void cli_print_make_failures(long n, const char *table, const char *first_table, const djc_populate_error *first);
/* The exit status of a populate or worker that returned rc, having been
 * stopped by signal `interrupted` (0: none; SIGTERM assumed without a
 * result): 128 + the signal for DJC_EINTR (its message on stderr), else
 * exit_for. DJC_EMAKE is the caller's. */
int cli_run_exit(int rc, djc_conn *c, int have_result, int interrupted);

/* djc progress without a TABLE (cmd_view.c): every computed and imported
 * table; with watch, again every interval seconds until SIGINT/SIGTERM.
 * Returns the exit status. */
int cli_progress_all(int json, int watch, double interval);

/* --------------------------------------------------------- JSON output */

/* A JSON string of text that may hold invalid UTF-8 (a make's stderr):
 * each invalid byte becomes U+FFFD. Never NULL. New reference. */
json_t *cli_json_text(const char *s);
/* JSON text of j (caller frees; NULL if j is NULL or memory runs out).
 * Reals are written with as few digits as read back exactly (as few as the
 * real needing most allows: jansson has one precision per call), so 0.1
 * is 0.1; objects keep their insertion order. */
char *cli_json_dumps(json_t *j, size_t flags);
/* Prints j on stdout as one compact line (cli_json_dumps) and releases it
 * (steals the reference). */
void cli_print_json(json_t *j);

#endif
