/* cmd_view.c - pictures of the pipeline: djc diagram (Graphviz DOT, SVG
 * through Graphviz's dot program) and djc progress without a table (every
 * computed and imported table in dependency order, --watch to follow it). */
#include "cli.h"
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The pipeline graph (djc_pipeline_json) parsed; exits through exit_for
 * when the library fails. */
static json_t *load_graph(djc_conn *c)
{
	char *s = NULL;
	int rc = djc_pipeline_json(&s, c);
	if (rc) {
		int code = exit_for(rc, c);
		djc_close(c);
		exit(code);
	}
	json_error_t e;
	json_t *g = json_loads(s, 0, &e);
	free(s);
	if (!g) die_usage("the pipeline description does not parse: %s", e.text);
	return g;
}

/* ------------------------------------------------------------- diagram */

/* s as a DOT quoted string. */
static void dot_id(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\') fputc('\\', f);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
	fputc('"', f);
}

/* The diagram in DOT, styled as DataJoint's dj.Diagram: manual tables green
 * boxes, lookup grey, imported blue ellipses, computed red ellipses, parts
 * small plain text tied to their master; a reference in the primary key is a
 * solid edge, a secondary one dashed. */
static void write_dot(FILE *f, json_t *g)
{
	fputs("digraph pipeline {\n"
	      "\trankdir=TB;\n"
	      "\tnode [fontname=\"Helvetica\", fontsize=12];\n"
	      "\tedge [arrowhead=none, color=\"#555555\"];\n",
	      f);
	size_t i;
	json_t *t;
	json_array_foreach(json_object_get(g, "tables"), i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		const char *tier = json_string_value(json_object_get(t, "tier"));
		const char *style = "shape=box, style=filled, fillcolor=\"#00FF0030\"";
		if (!strcmp(tier, "lookup")) style = "shape=plaintext, style=filled, fillcolor=\"#00000020\"";
		else if (!strcmp(tier, "imported")) style = "shape=ellipse, style=filled, fillcolor=\"#00007F40\"";
		else if (!strcmp(tier, "computed")) style = "shape=ellipse, style=filled, fillcolor=\"#FF000030\"";
		else if (!strcmp(tier, "part")) style = "shape=plaintext, fontsize=9";
		fputc('\t', f);
		dot_id(f, name);
		fprintf(f, " [%s, tooltip=\"%s\"];\n", style, tier);
	}
	json_array_foreach(json_object_get(g, "tables"), i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		json_t *m = json_object_get(t, "master");
		if (json_is_string(m)) {
			fputc('\t', f);
			dot_id(f, json_string_value(m));
			fputs(" -> ", f);
			dot_id(f, name);
			fputs(" [color=\"#999999\", penwidth=2];\n", f);
		}
		size_t k;
		json_t *p;
		json_array_foreach(json_object_get(t, "parents"), k, p) {
			const char *parent = json_string_value(json_object_get(p, "name"));
			if (json_is_string(m) && !strcmp(parent, json_string_value(m))) continue;   /* shown as the master's tie */
			fputc('\t', f);
			dot_id(f, parent);
			fputs(" -> ", f);
			dot_id(f, name);
			fputs(json_is_true(json_object_get(p, "primary")) ? ";\n" : " [style=dashed];\n", f);
		}
	}
	fputs("}\n", f);
}

/* Pipe the DOT text to `dot -Tsvg` (found on PATH, no shell), which writes
 * to our stdout. Returns the exit status for djc. */
static int write_svg(json_t *g)
{
	int fd[2];
	if (pipe(fd)) { fprintf(stderr, "djc: diagram: pipe: %s\n", strerror(errno)); return 1; }
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[0], 0);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addclose(&fa, fd[1]);
	char *argv[] = {"dot", "-Tsvg", NULL};
	pid_t pid;
	fflush(stdout);
	int err = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[0]);
	if (err) {
		close(fd[1]);
		if (err == ENOENT)
			fputs("djc: diagram --format svg needs Graphviz's dot program, which is not on PATH: install graphviz "
			      "(apt-get install graphviz, dnf install graphviz), or use --format dot\n",
			      stderr);
		else fprintf(stderr, "djc: diagram: cannot run dot: %s\n", strerror(err));
		return 1;
	}
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);   /* dot failing early must not kill djc */
	FILE *f = fdopen(fd[1], "w");
	if (f) {
		write_dot(f, g);
		fclose(f);
	} else close(fd[1]);
	signal(SIGPIPE, old);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "djc: diagram: dot failed (%s %d)\n", WIFEXITED(st) ? "exit status" : "signal",
			WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		return 1;
	}
	return 0;
}

int cmd_diagram(int argc, char **argv)
{
	static const char H[] =
		"usage: djc diagram [--format dot|svg]\n"
		"The pipeline as a graph, as DataJoint's dj.Diagram draws it: Graphviz DOT text\n"
		"(the default; render it with `dot -Tpng`), or SVG made by Graphviz's dot program.\n"
		"Manual tables are green boxes, lookup grey, imported blue and computed red\n"
		"ellipses, parts small text tied to their master; a dependency in the primary key\n"
		"is a solid line, a secondary one dashed.\n";
	enum { FORMAT = 1 };
	static const cli_option opts[] = {{"format", CLI_VALUE, FORMAT, 0}, {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, H);
	int svg = 0;
	for (int k; (k = cli_next(&a)) != CLI_END;) {
		if (k == FORMAT) {
			if (!strcmp(a.arg, "svg")) svg = 1;
			else if (!strcmp(a.arg, "dot")) svg = 0;
			else die_usage("--format must be dot or svg, got '%s'", a.arg);
		} else die_usage("diagram takes no arguments (the pipeline is the database's)");
	}
	djc_conn *c = cli_connect(CLI_EXISTING);
	json_t *g = load_graph(c);
	djc_close(c);
	int code = 0;
	if (svg) code = write_svg(g);
	else write_dot(stdout, g);
	json_decref(g);
	return code;
}

/* ------------------------------------------------- progress of everything */

typedef struct tprog {
	const char *name;
	long remaining, total, jobs[5];   /* jobs: pending reserved success error ignore */
} tprog;

/* The names of the tables told left out so far (each told once, under
 * --watch too). */
typedef struct told_set {
	char **v;
	size_t n;
} told_set;

static int told_before(told_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name)) return 1;
	char **v = realloc(s->v, (s->n + 1) * sizeof *v);
	char *d = strdup(name);
	if (!v || !d) die_usage("out of memory");
	s->v = v;
	s->v[s->n++] = d;
	return 0;
}

/* The computed and imported tables of g, in dependency order (the
 * declaration order is one), with their progress now; an adopted table
 * that is not as adopted (DataJoint dropped or redeclared it, or a table it
 * reads) is left out, told on stderr once, as `djc worker` leaves it out
 * (docs/adopt.md): *left counts them. 0, or the exit status after printing
 * the library's error. */
static int snapshot(djc_conn *c, json_t *g, tprog **out, size_t *n, size_t *left, told_set *told)
{
	size_t i, k = 0, m = 0;
	json_t *t, *ts = json_object_get(g, "tables");
	tprog *p = calloc(json_array_size(ts) + 1, sizeof *p);
	const char **names = calloc(json_array_size(ts) + 1, sizeof *names);
	char **why = calloc(json_array_size(ts) + 1, sizeof *why);
	if (!p || !names || !why) die_usage("out of memory");
	json_array_foreach(ts, i, t) {
		const char *tier = json_string_value(json_object_get(t, "tier"));
		if (!strcmp(tier, "computed") || !strcmp(tier, "imported")) names[m++] = json_string_value(json_object_get(t, "name"));
	}
	/* one read of the catalogs for every table */
	int rc = djc_adopted_check(why, c, names, m);
	*left = 0;
	for (i = 0; i < m && !rc; i++) {
		if (why[i]) {
			if (!told_before(told, names[i]))
				fprintf(stderr, "djc: warning: progress leaves out table %s, which is not as adopted: %s\n", names[i], why[i]);
			++*left;
			continue;
		}
		tprog *q = &p[k++];
		q->name = names[i];
		rc = djc_progress(&q->remaining, &q->total, c, q->name, NULL);
		if (!rc) rc = djc_jobs_counts(q->jobs, c, q->name);
	}
	for (i = 0; i < m; i++) free(why[i]);
	free(why);
	free(names);
	if (rc) { free(p); return exit_for(rc, c); }
	*out = p;
	*n = k;
	return 0;
}

static int term_width(void)
{
	struct winsize ws;
	if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
	return 80;
}

/* One line per table: name, bar, done/total, percent, errors and jobs in
 * flight; fitted to width (the bar shrinks, down to none). Returns the
 * number of lines written. */
static int print_table_lines(const tprog *p, size_t n, size_t left, int width, int in_place)
{
	int namew = 5;
	for (size_t i = 0; i < n; i++) {
		int l = (int)strlen(p[i].name);
		if (l > namew) namew = l;
	}
	if (!n && left) printf("%sno computed or imported table to show (%zu left out: not as adopted)\n", in_place ? "\033[K" : "", left);
	else if (!n) printf("%sno computed or imported tables\n", in_place ? "\033[K" : "");
	for (size_t i = 0; i < n; i++) {
		long done = p[i].total - p[i].remaining;
		/* no keys: no percentage (0/0 is not "done") and an empty bar */
		char pct[16] = "    --";
		if (p[i].total) snprintf(pct, sizeof pct, "%5.1f%%", 100.0 * (double)done / (double)p[i].total);
		char tail[200];
		int tl = snprintf(tail, sizeof tail, " %ld/%ld %s  errors %ld, ignored %ld, reserved %ld, pending %ld", done,
				  p[i].total, pct, p[i].jobs[3], p[i].jobs[4], p[i].jobs[1], p[i].jobs[0]);
		int barw = width - 1 - namew - 4 - tl;   /* name, " [", "]", the tail, a spare column */
		if (barw > 40) barw = 40;
		char line[512];
		int len = snprintf(line, sizeof line, "%-*s", namew, p[i].name);
		if (barw >= 5 && len + barw + 3 < (int)sizeof line) {
			int fill = p[i].total ? (int)((double)barw * (double)done / (double)p[i].total) : 0;
			line[len++] = ' ';
			line[len++] = '[';
			for (int b = 0; b < barw; b++) line[len++] = b < fill ? '#' : '.';
			line[len++] = ']';
			line[len] = 0;
		}
		if (len < (int)sizeof line) snprintf(line + len, sizeof line - (size_t)len, "%s", tail);
		/* on a terminal a line never wraps (a wrapped line would break the
		 * redraw in place): cut at the width */
		if (in_place && width > 1 && (int)strlen(line) > width - 1) line[width - 1] = 0;
		if (in_place) fputs("\033[K", stdout);
		fputs(line, stdout);
		fputc('\n', stdout);
	}
	return n ? (int)n : 1;
}

static volatile sig_atomic_t stop_sig;
static void on_stop(int s) { stop_sig = s; }

/* djc progress without a table (cmd_progress): every computed and imported
 * table; with --watch, again every `interval` seconds until SIGINT or
 * SIGTERM (exit 0): redrawn in place on a terminal, a snapshot under a
 * time line otherwise (a log). */
int cli_progress_all(int json, int watch, double interval)
{
	djc_conn *c = cli_connect(CLI_EXISTING);
	int tty = isatty(1), lines = 0, code = 0;
	told_set told = {NULL, 0};
	if (watch) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_stop;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	do {
		json_t *g = load_graph(c);   /* again each time: tables may be declared meanwhile */
		tprog *p = NULL;
		size_t n = 0, left = 0;
		code = snapshot(c, g, &p, &n, &left, &told);
		if (code) { json_decref(g); break; }
		if (json) {
			json_t *arr = json_array();
			for (size_t i = 0; i < n; i++)
				json_array_append_new(arr, json_pack("{s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "table", cli_json_text(p[i].name),
								     "remaining", (json_int_t)p[i].remaining, "total", (json_int_t)p[i].total,
								     "pending", (json_int_t)p[i].jobs[0], "reserved", (json_int_t)p[i].jobs[1],
								     "success", (json_int_t)p[i].jobs[2], "error", (json_int_t)p[i].jobs[3],
								     "ignore", (json_int_t)p[i].jobs[4]));
			char ts[32];
			time_t now = time(NULL);
			strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));   /* each snapshot's time, UTC */
			cli_print_json(json_pack("{s:s,s:o}", "time", ts, "tables", arr));
		} else if (watch && tty) {
			if (lines) printf("\r\033[%dA", lines);   /* back to the first line of the last drawing */
			lines = print_table_lines(p, n, left, term_width(), 1);
		} else {
			if (watch) {
				char ts[64];
				time_t now = time(NULL);
				strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", localtime(&now));
				printf("== %s\n", ts);
			}
			print_table_lines(p, n, left, term_width(), 0);
		}
		fflush(stdout);
		free(p);
		json_decref(g);
		if (!watch) break;
		struct timespec d = {(time_t)interval, (long)((interval - (double)(time_t)interval) * 1e9)};
		while (!stop_sig && nanosleep(&d, &d) && errno == EINTR) {}
	} while (!stop_sig);
	for (size_t i = 0; i < told.n; i++) free(told.v[i]);
	free(told.v);
	djc_close(c);
	return code;
}
