/* main.c - the djc command: global options, usage, and dispatch from the
 * table of commands (commands.h). Exit status: 0 success, 1 a make failed
 * (or the database failed), 2 bad usage or bad input, 128+N interrupted by
 * signal N. */
#include "cli.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

static const cli_command commands[] = {
#define CLI_COMMAND(name, fn, synopsis, summary) {name, fn, synopsis, summary},
#include "commands.h"
#undef CLI_COMMAND
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static void usage(FILE *f)
{
	fputs("usage: djc [--db URL] [--schema NAME] COMMAND ...\n\ncommands:\n", f);
	for (size_t i = 0; i < NCOMMANDS; i++) fprintf(f, "  %-28s %s\n", commands[i].synopsis, commands[i].summary);
	fputs("\n"
	      "--db defaults to $DJC_DATABASE_URL, then database.url in djc.json, then sqlite:djc.db.\n"
	      "--db and --schema may come anywhere on the line; -- ends the options.\n"
	      "Run 'djc COMMAND --help' for a command's options.\n",
	      f);
}

/* Length of the group word of a command name ("jobs" of "jobs refresh"). */
static size_t group_len(const char *name)
{
	return strcspn(name, " ");
}

static const cli_command *find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name)) return &commands[i];
	return NULL;
}

/* The subcommand "group word", or NULL. */
static const cli_command *find_sub(const char *group, const char *word)
{
	size_t g = strlen(group);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const char *n = commands[i].name;
		if (group_len(n) == g && !strncmp(n, group, g) && n[g] == ' ' && !strcmp(n + g + 1, word)) return &commands[i];
	}
	return NULL;
}

const char *cli_subcommand_near(const char *group, const char *word)
{
	const char *cand[NCOMMANDS];
	size_t k = 0, g = strlen(group);
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const char *n = commands[i].name;
		if (group_len(n) == g && !strncmp(n, group, g) && n[g] == ' ') cand[k++] = n + g + 1;
	}
	return cli_closest(word, cand, k);
}

static void die_unknown_command(const char *word)
{
	const char *cand[NCOMMANDS];
	size_t k = 0;
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strchr(commands[i].name, ' ')) cand[k++] = commands[i].name;
	const char *best = cli_closest(word, cand, k);
	if (best) die_usage("unknown command '%s'; did you mean '%s'?", word, best);
	die_usage("unknown command '%s' (see djc --help)", word);
}

/* argv[*i] is a global option (--db URL, --db=URL, ...): its number of
 * words, else 0. */
static int global_words(char **argv, int i, int argc)
{
	static const char *const g[] = {"--db", "--schema"};
	for (size_t k = 0; k < sizeof g / sizeof *g; k++) {
		size_t n = strlen(g[k]);
		if (!strncmp(argv[i], g[k], n)) {
			if (argv[i][n] == '=') return 1;
			if (!argv[i][n]) return i + 1 < argc ? 2 : 0;
		}
	}
	return 0;
}

/* Run cmd with argv[first..] after it (minus the word at index skip, a
 * subcommand's name, or -1): argv[0] of the command is its name. */
static int run(const cli_command *cmd, int argc, char **argv, int first, int skip)
{
	char **v = calloc((size_t)(argc - first + 2), sizeof *v);
	if (!v) die_usage("out of memory");
	int n = 0;
	v[n++] = (char *)cmd->name;
	for (int i = first; i < argc; i++)
		if (i != skip) v[n++] = argv[i];
	v[n] = NULL;
	int rc = cmd->run(n, v);
	free(v);
	return rc;
}

/* Dispatch argv[first..]: argv[first - 1] is the command word. */
static int dispatch(const char *word, int argc, char **argv, int first)
{
	const cli_command *cmd = find(word);
	/* a subcommand: the next argument, global options allowed between */
	int i = first;
	for (int w; i < argc && (w = global_words(argv, i, argc)); i += w) {}
	if (i < argc && argv[i][0] != '-') {
		const cli_command *sub = find_sub(word, argv[i]);
		if (sub) return run(sub, argc, argv, first, i);
	}
	if (!cmd) die_unknown_command(word);
	return run(cmd, argc, argv, first, -1);
}

int cmd_help(int argc, char **argv)
{
	cli_args a;
	cli_args_init(&a, argc, argv, NULL, "usage: djc help [COMMAND [SUBCOMMAND]]\nThe list of commands, or a command's options.\n");
	const char *w[2] = {NULL, NULL};
	int n = 0;
	for (int k; (k = cli_next(&a)) != CLI_END;)
		if (n++ < 2) w[n - 1] = a.arg;
	if (n > 2) die_usage("help takes a COMMAND and perhaps its SUBCOMMAND");
	if (!n) { usage(stdout); return 0; }
	const cli_command *cmd = n == 2 ? find_sub(w[0], w[1]) : find(w[0]);
	if (!cmd && n == 2) {
		const char *near = cli_subcommand_near(w[0], w[1]);
		if (near) die_usage("unknown command '%s %s'; did you mean '%s %s'?", w[0], w[1], w[0], near);
		die_usage("unknown command '%s %s' (see djc --help)", w[0], w[1]);
	}
	if (!cmd) die_unknown_command(w[0]);
	char help[] = "--help";
	char *v[] = {(char *)cmd->name, help, NULL};
	return cmd->run(2, v);
}

/* Make programs are told where this djc is: DJC, its own path (a node's
 * PATH may lack it), whatever the variable said before. */
static void set_djc_path(void)
{
	char *self = realpath("/proc/self/exe", NULL);
	if (self) setenv("DJC", self, 1);
	free(self);
}

/* Memory for large values. A worker handles values of megabytes key after
 * key (an upstream array fetched, handed to the make, the result
 * committed). glibc maps such allocations on their own and, after a free,
 * gives heap memory above twice the last large free back to the system, so
 * every key faulted its buffers in again page by page, which on a virtual
 * machine costs more than copying the bytes (bench/results-2026-12-05.md,
 * "malloc": 10 MiB arrays through MariaDB). Here blocks up to 64 MiB come
 * from the heap and up to 256 MiB of freed heap stays with the process for
 * the next key; a larger value still maps and unmaps its own memory. A
 * user's own glibc setting (GLIBC_TUNABLES naming malloc, or
 * MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_) is left alone. */
static void tune_malloc(void)
{
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
	const char *t = getenv("GLIBC_TUNABLES");
	if ((t && strstr(t, "glibc.malloc.")) || getenv("MALLOC_MMAP_THRESHOLD_") || getenv("MALLOC_TRIM_THRESHOLD_"))
		return;
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

/* The command's exit status rc, unless its output did not reach its file:
 * a full disk is a failure (exit 1 with one line), not a success with a
 * short file; a reader that went away (| head) ends djc by SIGPIPE, as it
 * ends any program (MariaDB's client library ignores SIGPIPE in the
 * process, so there the writes only failed with EPIPE). */
static int output_done(int rc)
{
	errno = 0;
	int flushed = fflush(stdout) == 0;
	int e = errno;
	if (flushed && !ferror(stdout)) return rc;
	if (!e) {
		/* the write failed earlier (a command flushes its own output):
		 * a pipe whose reader is gone polls as an error */
		struct pollfd p = {.fd = fileno(stdout), .events = POLLOUT};
		if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR)) e = EPIPE;
	}
	if (e == EPIPE) {
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
	}
	fprintf(stderr, "djc: cannot write the output: %s\n", e ? strerror(e) : "write error");
	return rc ? rc : 1;
}

int main(int argc, char **argv)
{
	tune_malloc();
	enum { HELP = 1, VERSION };
	static const cli_option opts[] = {{"help", CLI_FLAG, HELP, 'h'}, {"version", CLI_FLAG, VERSION, 0}, {NULL, 0, 0, 0}};
	static char empty[] = "";
	char *argv0 = argv[0];
	argv[0] = empty;   /* no "djc: " prefix in the messages of global options */
	cli_args a;
	cli_args_init(&a, argc, argv, opts, NULL);
	a.unknown_fmt = "unknown option %s (see djc --help)";
	a.missing_fmt = "%s needs a value (see djc --help)";
	int k = cli_next(&a);
	for (; k != CLI_END && k != CLI_ARG; k = cli_next(&a)) {
		if (k == HELP) { usage(stdout); return 0; }
		if (k == VERSION) { printf("djc %s\n", DJC_VERSION); return 0; }
	}
	argv[0] = argv0;
	if (k == CLI_END) { usage(stderr); return 2; }
	set_djc_path();
	return output_done(dispatch(a.arg, argc, argv, a.i));
}
