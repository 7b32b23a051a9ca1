/* main.c - the djc command. Uses only the public API (include/djc.h) and
 * the config module. Exit status: 0 success, 1 a make failed (or the
 * database failed), 2 bad usage or bad input, 128+N interrupted by signal N. */
#include "djc.h"
#include "util/config.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_db, *g_schema;

int cmd_worker(int argc, char **argv, const char *db, const char *schema);   /* cmd_worker.c */

static const char USAGE[] =
	"usage: djc [--db URL] [--schema NAME] COMMAND ...\n"
	"\n"
	"commands:\n"
	"  declare PIPELINE_FILE        declare the tables of a pipeline (idempotent)\n"
	"  tables                       list declared tables\n"
	"  insert TABLE [FILE]          insert JSON Lines rows (stdin by default)\n"
	"  fetch TABLE                  print rows (--where JSON, --format table|json|csv)\n"
	"  delete TABLE                 delete rows (--where JSON)\n"
	"  populate TABLE               call make for every missing key\n"
	"  worker [TABLE...]            serve the computed tables for as long as work may appear\n"
	"  progress TABLE               remaining and total keys\n"
	"  jobs TABLE                   the jobs table: counts by status, or --status rows\n"
	"  jobs refresh|clear|ignore    manage the jobs table\n"
	"  config                       effective settings and where each came from\n"
	"\n"
	"--db defaults to $DJC_DATABASE_URL, then database.url in djc.json, then sqlite:djc.db.\n"
	"Run 'djc COMMAND --help' for a command's options.\n";

static void die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* fputs with newlines and other control characters as spaces: stderr
 * messages stay one line. */
static void put_line(const char *s, FILE *f)
{
	for (const char *p = s; *p; p++) fputc((unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p, f);
}

static void die_usage(const char *fmt, ...)
{
	va_list ap;
	char *m = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&m, fmt, ap);
	va_end(ap);
	if (n < 0) m = NULL;
	fputs("djc: ", stderr);
	put_line(m ? m : fmt, stderr);   /* one line, whatever the arguments hold */
	fputc('\n', stderr);
	free(m);
	exit(2);
}

static int exit_for(int rc, djc_conn *c)
{
	if (rc == DJC_OK) return 0;
	const char *m = c ? djc_error_last(c) : djc_strerror(rc);
	fputs("djc: ", stderr);
	for (const char *p = m; *p; p++) fputc(*p == '\n' || *p == '\r' ? ' ' : *p, stderr);
	fputc('\n', stderr);
	switch (rc) {
	case DJC_EINVAL: case DJC_ENOTFOUND: case DJC_ECONFLICT: case DJC_EDUPLICATE: case DJC_EFOREIGN: return 2;
	default: return 1;
	}
}

static djc_conn *connect_or_die(void)
{
	djc_conn *c = NULL;
	int rc = djc_open(&c, g_db, g_schema);
	if (rc) {
		int code = exit_for(rc, c);
		djc_close(c);
		exit(code);
	}
	const char *w = config_warning();
	if (w) fprintf(stderr, "djc: %s\n", w);
	return c;
}

static int want_help(int argc, char **argv, const char *text)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) break;
		if (!strcmp(argv[i], "--make")) break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { fputs(text, stdout); return 1; }
	}
	return 0;
}

static long parse_long(const char *opt, const char *v, long min)
{
	char *e;
	errno = 0;
	long x = strtol(v, &e, 10);
	if (!*v || *e || errno || x < min) die_usage("%s expects an integer >= %ld, got '%s'", opt, min, v);
	return x;
}

static double parse_double(const char *opt, const char *v)
{
	char *e;
	double x = strtod(v, &e);
	if (!*v || *e || x != x || x < 0) die_usage("%s expects a number of seconds >= 0, got '%s'", opt, v);
	return x;
}

static void check_json(const char *opt, const char *v)
{
	json_error_t je;
	json_t *j = json_loads(v, 0, &je);
	if (!j) die_usage("%s is not valid JSON: %s", opt, je.text);
	json_decref(j);
}

/* ------------------------------------------------------------ commands */

static int cmd_declare(int argc, char **argv)
{
	static const char H[] = "usage: djc declare PIPELINE_FILE\n"
				"Declare every table of the pipeline file (and the jobs table of each computed\n"
				"or imported one). Idempotent; a changed definition is an error.\n";
	if (want_help(argc, argv, H)) return 0;
	if (argc != 2) die_usage("declare takes one pipeline file (see djc declare --help)");
	FILE *f = fopen(argv[1], "r");
	if (!f) die_usage("cannot read %s: %s", argv[1], strerror(errno));
	size_t cap = 1 << 16, n = 0;
	char *text = malloc(cap);
	size_t r;
	while (text && (r = fread(text + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 >= cap) { cap *= 2; text = realloc(text, cap); }
	}
	fclose(f);
	if (!text) die_usage("out of memory");
	text[n] = 0;
	if (strlen(text) != n) { free(text); die_usage("%s: contains a NUL byte", argv[1]); }
	djc_conn *c = connect_or_die();
	char *report = NULL;
	int rc = djc_declare(c, text, argv[1], &report);
	free(text);
	if (!rc && report) fputs(report, stdout);
	free(report);
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}

static int cmd_tables(int argc, char **argv)
{
	if (want_help(argc, argv, "usage: djc tables\nList the declared tables in declaration order.\n")) return 0;
	if (argc != 1) die_usage("tables takes no arguments");
	djc_conn *c = connect_or_die();
	char *s = NULL;
	int rc = djc_tables(c, &s);
	if (!rc) fputs(s, stdout);
	free(s);
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}

static int cmd_insert(int argc, char **argv)
{
	static const char H[] = "usage: djc insert TABLE [FILE] [--skip-duplicates]\n"
				"Insert rows given as JSON Lines (one object per line) from FILE or stdin.\n"
				"All rows or none. bytes are base64 strings; json attributes take any JSON value.\n";
	if (want_help(argc, argv, H)) return 0;
	const char *table = NULL, *file = NULL;
	djc_insert_options o = DJC_INSERT_OPTIONS_INIT;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--skip-duplicates")) o.skip_duplicates = 1;
		else if (argv[i][0] == '-' && argv[i][1]) die_usage("insert: unknown option %s", argv[i]);
		else if (!table) table = argv[i];
		else if (!file) file = argv[i];
		else die_usage("insert takes TABLE [FILE]");
	}
	if (!table) die_usage("insert needs a TABLE (see djc insert --help)");
	FILE *in = stdin;
	if (file && strcmp(file, "-")) {
		in = fopen(file, "r");
		if (!in) die_usage("cannot read %s: %s", file, strerror(errno));
	}
	djc_conn *c = connect_or_die();
	size_t n = 0;
	int rc = djc_insert_jsonl(c, table, in, file ? file : "<stdin>", &o, &n);
	if (in != stdin) fclose(in);
	if (!rc) printf("inserted %zu row%s into %s\n", n, n == 1 ? "" : "s", table);
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}

static int cmd_fetch(int argc, char **argv)
{
	static const char H[] = "usage: djc fetch TABLE [--where JSON | --key JSON] [--format table|json|csv]\n"
				"Print rows ordered by primary key. --where takes {\"attr\": value}, {\"attr\": [v1, v2]},\n"
				"{\"attr\": {\">\": 3}} or a list of such objects (OR); every attribute must be TABLE's.\n"
				"--key takes a key object, e.g. a make program's $DJC_KEY, and matches TABLE's rows on the\n"
				"attributes they share, ignoring the rest (DataJoint's Table & key).\n";
	if (want_help(argc, argv, H)) return 0;
	const char *table = NULL, *where = NULL, *key = NULL;
	djc_format fmt = DJC_FORMAT_TABLE;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--where") && i + 1 < argc) { where = argv[++i]; check_json("--where", where); }
		else if (!strcmp(argv[i], "--key") && i + 1 < argc) { key = argv[++i]; check_json("--key", key); }
		else if (!strcmp(argv[i], "--format") && i + 1 < argc) {
			const char *f = argv[++i];
			if (!strcmp(f, "table")) fmt = DJC_FORMAT_TABLE;
			else if (!strcmp(f, "json")) fmt = DJC_FORMAT_JSON;
			else if (!strcmp(f, "csv")) fmt = DJC_FORMAT_CSV;
			else die_usage("--format must be table, json or csv, got '%s'", f);
		} else if (argv[i][0] == '-') die_usage("fetch: unknown or incomplete option %s", argv[i]);
		else if (!table) table = argv[i];
		else die_usage("fetch takes one TABLE");
	}
	if (!table) die_usage("fetch needs a TABLE (see djc fetch --help)");
	if (where && key) die_usage("fetch takes --where or --key, not both");
	djc_conn *c = connect_or_die();
	char *kw = NULL;
	int rc = key ? djc_key_restriction(c, table, key, &kw) : DJC_OK;
	if (!rc) rc = djc_fetch_print(c, table, key ? kw : where, fmt, stdout);
	free(kw);
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}

static int cmd_delete(int argc, char **argv)
{
	static const char H[] = "usage: djc delete TABLE [--where JSON]\n"
				"Delete rows that no child row references (all matching rows, or none).\n";
	if (want_help(argc, argv, H)) return 0;
	const char *table = NULL, *where = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--where") && i + 1 < argc) { where = argv[++i]; check_json("--where", where); }
		else if (argv[i][0] == '-') die_usage("delete: unknown or incomplete option %s", argv[i]);
		else if (!table) table = argv[i];
		else die_usage("delete takes one TABLE");
	}
	if (!table) die_usage("delete needs a TABLE");
	djc_conn *c = connect_or_die();
	size_t n = 0;
	int rc = djc_delete(c, table, where, &n);
	if (!rc) printf("deleted %zu row%s from %s\n", n, n == 1 ? "" : "s", table);
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}

/* A JSON string of text that may hold invalid UTF-8 (a make's stderr):
 * each byte outside valid UTF-8 becomes U+FFFD, so --json stays JSON. */
static json_t *json_text(const char *s)
{
	json_t *j = json_string(s);
	if (j) return j;
	size_t n = strlen(s), k = 0;
	char *o = malloc(n * 3 + 1);
	if (!o) return json_string("");
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		size_t m = 1;
		while (len && m < len && i + m < n && ((unsigned char)s[i + m] & 0xC0) == 0x80) m++;
		char tmp[5] = {0};
		if (len && m == len) memcpy(tmp, s + i, len);
		json_t *t = len && m == len ? json_string(tmp) : NULL;   /* rejects overlongs and surrogates */
		if (t) { memcpy(o + k, s + i, len); k += len; i += len; json_decref(t); }
		else { memcpy(o + k, "\xEF\xBF\xBD", 3); k += 3; i++; }
	}
	o[k] = 0;
	j = json_string(o);
	free(o);
	return j ? j : json_string("");
}

/* The one stderr line of a populate whose makes failed, naming the first
 * failed key: "djc: 1 make call of T failed; key {...}: MESSAGE" or
 * "djc: N make calls of T failed; first {...} (N-1 more): MESSAGE". */
static void print_make_failures(const djc_populate_result *r, const char *table, const char *fallback)
{
	if (!r || r->error_count < 1 || r->n_errors == 0) {
		fputs("djc: ", stderr);
		put_line(fallback, stderr);
		fputc('\n', stderr);
		return;
	}
	long n = r->error_count;
	fprintf(stderr, "djc: %ld make call%s of %s failed; ", n, n == 1 ? "" : "s", table);
	if (n == 1) fputs("key ", stderr);
	else fputs("first ", stderr);
	put_line(r->errors[0].key_json, stderr);
	if (n > 1) fprintf(stderr, " (%ld more)", n - 1);
	fputs(": ", stderr);
	put_line(r->errors[0].message, stderr);
	fputc('\n', stderr);
}

static int cmd_populate(int argc, char **argv)
{
	static const char H[] =
		"usage: djc populate TABLE [--reserve-jobs] [--processes N] [--max-calls N]\n"
		"                     [--priority P] [--suppress-errors] [--display-progress]\n"
		"                     [--refresh | --no-refresh] [--where JSON] [--json]\n"
		"                     [--make COMMAND [ARG...]]\n"
		"Call make once for every key of (key_source & where) - TABLE.\n"
		"  --reserve-jobs      coordinate through the jobs table (many workers, many hosts)\n"
		"  --processes N       N worker processes, each taking keys as it goes\n"
		"  --max-calls N       at most N make calls in all\n"
		"  --priority P        reserve only jobs with priority <= P\n"
		"  --suppress-errors   go on after a failed make (else the first error stops)\n"
		"  --display-progress  a progress bar on stderr\n"
		"  --refresh/--no-refresh  refresh the jobs table first (default jobs.auto_refresh)\n"
		"  --make COMMAND ...  the make program and its arguments (must come last); it\n"
		"                      gets the key as JSON on stdin and in DJC_KEY and prints\n"
		"                      rows as JSON Lines\n"
		"Exit status: 0 all made, 1 some make failed, 2 bad input, 130/143 interrupted.\n";
	if (want_help(argc, argv, H)) return 0;
	djc_populate_options o;
	djc_populate_options_init(&o);
	const char *table = NULL;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--reserve-jobs")) o.reserve_jobs = 1;
		else if (!strcmp(a, "--processes") && i + 1 < argc) o.processes = (int)parse_long(a, argv[++i], 1);
		else if (!strcmp(a, "--max-calls") && i + 1 < argc) o.max_calls = parse_long(a, argv[++i], 1);
		else if (!strcmp(a, "--priority") && i + 1 < argc) o.priority = parse_long(a, argv[++i], 0);
		else if (!strcmp(a, "--suppress-errors")) o.suppress_errors = 1;
		else if (!strcmp(a, "--display-progress")) o.display_progress = 1;
		else if (!strcmp(a, "--refresh")) o.refresh = 1;
		else if (!strcmp(a, "--no-refresh")) o.refresh = 0;
		else if (!strcmp(a, "--json")) json = 1;
		else if (!strcmp(a, "--where") && i + 1 < argc) { o.where_json = argv[++i]; check_json("--where", o.where_json); }
		else if (!strcmp(a, "--make")) {
			if (i + 1 >= argc) die_usage("--make needs a program");
			o.make_argv = (const char *const *)&argv[i + 1];
			break;
		} else if (a[0] == '-') die_usage("populate: unknown or incomplete option %s", a);
		else if (!table) table = a;
		else die_usage("populate takes one TABLE (put --make last)");
	}
	if (!table) die_usage("populate needs a TABLE (see djc populate --help)");
	if (o.processes > 256) die_usage("--processes is at most 256");
	djc_conn *c = connect_or_die();
	if (!o.display_progress) o.display_progress = config_bool("display.progress");   /* djc.json / DJC_DISPLAY_PROGRESS */
	djc_populate_result *r = NULL;
	int rc = djc_populate(c, table, &o, &r);
	if (r) {
		if (json) {
			printf("{\"table\":\"%s\",\"success_count\":%ld,\"error_count\":%ld,\"skipped_count\":%ld,\"lost_count\":%ld,"
			       "\"interrupted\":%s,\"errors\":[", table, r->success_count, r->error_count, r->skipped_count, r->lost_count,
			       r->interrupted == SIGINT ? "\"SIGINT\"" : r->interrupted == SIGTERM ? "\"SIGTERM\"" : "null");
			for (size_t i = 0; i < r->n_errors; i++) {
				json_t *k = json_loads(r->errors[i].key_json, 0, NULL);
				json_t *e = json_pack("{s:o,s:o}", "key", k ? k : json_object(), "message", json_text(r->errors[i].message));
				char *s = json_dumps(e, JSON_COMPACT);
				printf("%s%s", i ? "," : "", s);
				free(s);
				json_decref(e);
			}
			printf("]}\n");
		} else {
			printf("%s: %ld made, %ld error%s, %ld skipped", table, r->success_count, r->error_count,
			       r->error_count == 1 ? "" : "s", r->skipped_count);
			if (r->lost_count) printf(", %ld lost reservation%s", r->lost_count, r->lost_count == 1 ? "" : "s");
			printf("\n");
			for (size_t i = 0; i < r->n_errors; i++) printf("error %s: %s\n", r->errors[i].key_json, r->errors[i].message);
		}
		fflush(stdout);
	}
	int code;
	if (rc == DJC_EINTR) {
		fprintf(stderr, "djc: %s\n", djc_error_last(c));
		code = 128 + (r ? r->interrupted : SIGTERM);
	} else if (rc == DJC_EMAKE) {
		print_make_failures(r, table, djc_error_last(c));
		code = 1;
	} else
		code = exit_for(rc, c);
	djc_populate_result_free(r);
	djc_close(c);
	return code;
}

static int cmd_progress(int argc, char **argv)
{
	static const char H[] = "usage: djc progress TABLE [--where JSON] [--json]\nRemaining and total keys of the key source.\n";
	if (want_help(argc, argv, H)) return 0;
	const char *table = NULL, *where = NULL;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--where") && i + 1 < argc) { where = argv[++i]; check_json("--where", where); }
		else if (!strcmp(argv[i], "--json")) json = 1;
		else if (argv[i][0] == '-') die_usage("progress: unknown or incomplete option %s", argv[i]);
		else if (!table) table = argv[i];
		else die_usage("progress takes one TABLE");
	}
	if (!table) die_usage("progress needs a TABLE");
	djc_conn *c = connect_or_die();
	long rem = 0, tot = 0;
	int rc = djc_progress(c, table, where, &rem, &tot);
	if (!rc) {
		if (json) printf("{\"table\":\"%s\",\"remaining\":%ld,\"total\":%ld}\n", table, rem, tot);
		else printf("%s: Completed %ld of %ld (%.1f%%), %ld remaining\n", table, tot - rem, tot,
			    tot ? 100.0 * (double)(tot - rem) / (double)tot : 100.0, rem);
	}
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}

/* JSON text of s (a quoted, escaped string); caller frees. */
static char *json_quoted(const char *s)
{
	json_t *j = json_text(s);
	char *q = json_dumps(j, JSON_ENCODE_ANY);
	json_decref(j);
	return q;
}

/* --json: one object, {"table":T,"status":S,"jobs":[{...},...]}, each job
 * the row as djc_row_to_json writes it. */
static void print_jobs_json(const djc_rowset *rs, const char *table, const char *status)
{
	char *qt = json_quoted(table), *qs = json_quoted(status);
	printf("{\"table\":%s,\"status\":%s,\"jobs\":[", qt ? qt : "\"\"", qs ? qs : "\"\"");
	free(qt);
	free(qs);
	for (size_t i = 0; i < djc_rowset_count(rs); i++) {
		char *s = djc_row_to_json(djc_rowset_row(rs, i));
		printf("%s%s", i ? "," : "", s);
		free(s);
	}
	printf("]}\n");
}

static void print_jobs_rows(const djc_rowset *rs)
{
	static const char *show[] = {"status", "priority", "reservations", "host", "pid", "reserved_time", "completed_time",
				     "last_end", "error_message", NULL};
	for (size_t i = 0; i < djc_rowset_count(rs); i++) {
		const djc_row *r = djc_rowset_row(rs, i);
		/* key attributes first (everything before "status"), then the chosen columns */
		long st = djc_row_find(r, "status");
		printf("{");
		for (long k = 0; k < st; k++) {
			const char *t = NULL;
			int64_t v;
			if (djc_row_text(r, (size_t)k, &t) == DJC_OK) printf("%s\"%s\": \"%s\"", k ? ", " : "", djc_row_name(r, (size_t)k), t);
			else if (djc_row_int(r, (size_t)k, &v) == DJC_OK) printf("%s\"%s\": %" PRId64, k ? ", " : "", djc_row_name(r, (size_t)k), v);
			else printf("%s\"%s\": ?", k ? ", " : "", djc_row_name(r, (size_t)k));
		}
		printf("}");
		for (int s = 0; show[s]; s++) {
			long k = djc_row_find(r, show[s]);
			if (k < 0 || djc_row_type(r, (size_t)k) == DJC_NULL) continue;
			const char *t;
			int64_t v;
			if (djc_row_text(r, (size_t)k, &t) == DJC_OK) printf("  %s=%s", show[s], t);
			else if (djc_row_int(r, (size_t)k, &v) == DJC_OK) printf("  %s=%" PRId64, show[s], v);
		}
		printf("\n");
	}
}

static int cmd_jobs(int argc, char **argv)
{
	static const char H[] =
		"usage: djc jobs TABLE [--status pending|reserved|success|error|ignore] [--json]\n"
		"       djc jobs refresh TABLE [--priority P] [--delay S] [--stale-timeout S]\n"
		"                              [--orphan-timeout S] [--where JSON] [--json]\n"
		"       djc jobs clear TABLE --status STATUS\n"
		"       djc jobs ignore TABLE KEY_JSON\n";
	if (want_help(argc, argv, H)) return 0;
	if (argc < 2) die_usage("jobs needs a TABLE (see djc jobs --help)");
	const char *sub = argv[1];
	if (!strcmp(sub, "refresh")) {
		djc_refresh_options o = DJC_REFRESH_OPTIONS_INIT;
		const char *table = NULL;
		int json = 0;
		for (int i = 2; i < argc; i++) {
			const char *a = argv[i];
			if (!strcmp(a, "--priority") && i + 1 < argc) o.priority = parse_long(a, argv[++i], 0);
			else if (!strcmp(a, "--delay") && i + 1 < argc) o.delay = parse_double(a, argv[++i]);
			else if (!strcmp(a, "--stale-timeout") && i + 1 < argc) o.stale_timeout = parse_double(a, argv[++i]);
			else if (!strcmp(a, "--orphan-timeout") && i + 1 < argc) o.orphan_timeout = parse_double(a, argv[++i]);
			else if (!strcmp(a, "--where") && i + 1 < argc) { o.where_json = argv[++i]; check_json("--where", o.where_json); }
			else if (!strcmp(a, "--json")) json = 1;
			else if (a[0] == '-') die_usage("jobs refresh: unknown or incomplete option %s", a);
			else if (!table) table = a;
			else die_usage("jobs refresh takes one TABLE");
		}
		if (!table) die_usage("jobs refresh needs a TABLE");
		djc_conn *c = connect_or_die();
		djc_refresh_result r;
		int rc = djc_jobs_refresh(c, table, &o, &r);
		if (!rc) {
			if (json) printf("{\"added\":%ld,\"removed\":%ld,\"orphaned\":%ld,\"re_pended\":%ld}\n", r.added, r.removed, r.orphaned, r.re_pended);
			else printf("%s: added %ld, removed %ld, orphaned %ld, re_pended %ld\n", table, r.added, r.removed, r.orphaned, r.re_pended);
		}
		int code = exit_for(rc, c);
		djc_close(c);
		return code;
	}
	if (!strcmp(sub, "clear")) {
		const char *table = NULL, *status = NULL;
		for (int i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--status") && i + 1 < argc) status = argv[++i];
			else if (argv[i][0] == '-') die_usage("jobs clear: unknown or incomplete option %s", argv[i]);
			else if (!table) table = argv[i];
			else die_usage("jobs clear takes one TABLE");
		}
		if (!table || !status) die_usage("usage: djc jobs clear TABLE --status STATUS");
		djc_conn *c = connect_or_die();
		long n = 0;
		int rc = djc_jobs_clear(c, table, status, &n);
		if (!rc) printf("%s: cleared %ld %s job%s\n", table, n, status, n == 1 ? "" : "s");
		int code = exit_for(rc, c);
		djc_close(c);
		return code;
	}
	if (!strcmp(sub, "ignore")) {
		if (argc != 4) die_usage("usage: djc jobs ignore TABLE KEY_JSON");
		djc_row *key = NULL;
		char *msg = NULL;
		if (djc_row_from_json(&key, argv[3], &msg)) {
			fprintf(stderr, "djc: KEY_JSON: %s\n", msg);
			free(msg);
			return 2;
		}
		djc_conn *c = connect_or_die();
		int rc = djc_jobs_ignore(c, argv[2], key);
		if (!rc) printf("%s: ignoring %s\n", argv[2], argv[3]);
		djc_row_free(key);
		int code = exit_for(rc, c);
		djc_close(c);
		return code;
	}
	const char *table = NULL, *status = NULL;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--status") && i + 1 < argc) status = argv[++i];
		else if (!strcmp(argv[i], "--json")) json = 1;
		else if (argv[i][0] == '-') die_usage("jobs: unknown or incomplete option %s", argv[i]);
		else if (!table) table = argv[i];
		else die_usage("jobs takes one TABLE (or refresh, clear, ignore)");
	}
	if (!table) die_usage("jobs needs a TABLE");
	if (status) {
		static const char *ok[] = {"pending", "reserved", "success", "error", "ignore", NULL};
		int valid = 0;
		for (int i = 0; ok[i]; i++) if (!strcmp(status, ok[i])) valid = 1;
		if (!valid) die_usage("--status must be pending, reserved, success, error or ignore, got '%s'", status);
	}
	djc_conn *c = connect_or_die();
	int rc;
	if (status) {
		djc_rowset *rs = NULL;
		rc = djc_jobs_list(c, table, status, &rs);
		if (!rc) {
			if (json) print_jobs_json(rs, table, status);
			else print_jobs_rows(rs);
		}
		djc_rowset_free(rs);
	} else {
		long n[5];
		rc = djc_jobs_counts(c, table, n);
		if (!rc) {
			if (json) printf("{\"table\":\"%s\",\"pending\":%ld,\"reserved\":%ld,\"success\":%ld,\"error\":%ld,\"ignore\":%ld}\n",
					 table, n[0], n[1], n[2], n[3], n[4]);
			else printf("%s jobs: pending %ld, reserved %ld, success %ld, error %ld, ignore %ld\n", table, n[0], n[1], n[2], n[3], n[4]);
		}
	}
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}

static int cmd_config(int argc, char **argv)
{
	if (want_help(argc, argv, "usage: djc config [--json]\nEffective settings: defaults < djc.json ($DJC_CONFIG) < DJC_* environment < options.\n")) return 0;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) json = 1;
		else if (argv[i][0] == '-') die_usage("config: unknown option %s (see djc config --help)", argv[i]);
		else die_usage("config takes no arguments, only --json (got '%s')", argv[i]);
	}
	char *msg = NULL;
	if (config_load(&msg)) { fprintf(stderr, "djc: %s\n", msg); free(msg); return 2; }
	if (g_db) config_set("database.url", g_db, "command line");
	if (g_schema) config_set("database.schema", g_schema, "command line");
	if (json) printf("{");
	int first = 1;
	for (const config_item *i = config_items(); i->key; i++) {
		const char *v = i->value;
		if (!strcmp(i->kind, "secret") && *v) v = "***";
		if (!strcmp(i->key, "database.url") && strstr(v, "@") && strstr(v, "://")) {
			/* hide a password in the URL */
			const char *s = strstr(v, "://") + 3, *at = strrchr(v, '@'), *colon = memchr(s, ':', (size_t)(at - s));
			if (colon) {
				static char red[1024];
				snprintf(red, sizeof red, "%.*s:***%s", (int)(colon - v), v, at);
				v = red;
			}
		}
		if (json) {
			json_t *o = json_pack("{s:s,s:s}", "value", v, "source", i->source);
			char *s = json_dumps(o, JSON_COMPACT);
			printf("%s\"%s\":%s", first ? "" : ",", i->key, s);
			free(s);
			json_decref(o);
		} else
			printf("%-22s %-24s (%s)\n", i->key, v, i->source);
		first = 0;
	}
	if (json) printf("}\n");
	const char *w = config_warning();
	if (w) fprintf(stderr, "djc: %s\n", w);
	return 0;
}

int main(int argc, char **argv)
{
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--db") && i + 1 < argc) g_db = argv[++i];
		else if (!strncmp(a, "--db=", 5)) g_db = a + 5;
		else if (!strcmp(a, "--schema") && i + 1 < argc) g_schema = argv[++i];
		else if (!strncmp(a, "--schema=", 9)) g_schema = a + 9;
		else if (!strcmp(a, "--db") || !strcmp(a, "--schema")) die_usage("%s needs a value (see djc --help)", a);
		else if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(USAGE, stdout); return 0; }
		else if (!strcmp(a, "--version")) { printf("djc %s\n", DJC_VERSION); return 0; }
		else if (a[0] == '-') die_usage("unknown option %s (see djc --help)", a);
		else break;
	}
	if (i >= argc) { fputs(USAGE, stderr); return 2; }
	const char *cmd = argv[i];
	int n = argc - i;
	char **v = argv + i;
	if (!strcmp(cmd, "declare")) return cmd_declare(n, v);
	if (!strcmp(cmd, "tables")) return cmd_tables(n, v);
	if (!strcmp(cmd, "insert")) return cmd_insert(n, v);
	if (!strcmp(cmd, "fetch")) return cmd_fetch(n, v);
	if (!strcmp(cmd, "delete")) return cmd_delete(n, v);
	if (!strcmp(cmd, "populate")) return cmd_populate(n, v);
	if (!strcmp(cmd, "worker")) return cmd_worker(n, v, g_db, g_schema);
	if (!strcmp(cmd, "progress")) return cmd_progress(n, v);
	if (!strcmp(cmd, "jobs")) return cmd_jobs(n, v);
	if (!strcmp(cmd, "config")) return cmd_config(n, v);
	die_usage("unknown command '%s' (see djc --help)", cmd);
}
