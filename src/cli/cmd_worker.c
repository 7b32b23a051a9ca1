/* cmd_worker.c - `djc worker`: the long-running form of populate (the C
 * API's djc_worker). Uses only the public API. */
#include "djc.h"
#include "util/config.h"
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int cmd_worker(int argc, char **argv, const char *db, const char *schema);

static const char HELP[] =
	"usage: djc worker [TABLE...] [--processes N] [--max-jobs N] [--idle-exit SECONDS]\n"
	"                  [--until-empty] [--deadline TIME|+DURATION] [--priority P]\n"
	"                  [--where JSON] [--refresh | --no-refresh] [--refresh-interval SECONDS]\n"
	"                  [--json] [--make COMMAND [ARG...]]\n"
	"Serve the computed and imported tables (all of the pipeline, or those named),\n"
	"upstream first, for as long as work may appear: claim a job, make it, commit it;\n"
	"when nothing can be claimed, wait for work (a notification on PostgreSQL, else\n"
	"polling, backing off to a few seconds) and refresh each table at most once per\n"
	"interval among all workers. A failed make is recorded and the worker goes on.\n"
	"  --processes N         N worker processes (one database connection each, plus this one)\n"
	"  --max-jobs N          stop after N make calls in all\n"
	"  --idle-exit SECONDS   a process stops after SECONDS without a job\n"
	"  --until-empty         a process stops when nothing is pending or reserved any more\n"
	"  --deadline TIME       be done by TIME (2026-12-01T18:00[:SS][Z|+HH:MM], @UNIX_SECONDS)\n"
	"                        or +DURATION (+90, +90s, +30m, +2h, +1d): claim only jobs that\n"
	"                        fit before it (the 90th percentile of the table's make times),\n"
	"                        let running makes finish, then stop\n"
	"  --priority P          reserve only jobs with priority <= P\n"
	"  --where JSON          restrict the jobs reserved (key attributes of every served table)\n"
	"  --refresh/--no-refresh  refresh the jobs tables (default jobs.auto_refresh)\n"
	"  --refresh-interval S  at most one refresh per table per S seconds (default 10)\n"
	"  --make COMMAND ...    the make program (one served table only; must come last)\n"
	"Without --idle-exit, --max-jobs, --until-empty or --deadline it runs until a signal.\n"
	"Exit status: 0 stopped as asked, 1 some make failed (or the worker could not go on),\n"
	"2 bad input, 130/143 interrupted by SIGINT/SIGTERM.\n";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	char *m = NULL;
	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) < 0) m = NULL;
	va_end(ap);
	fputs("djc: ", stderr);
	for (const char *p = m ? m : fmt; *p; p++) fputc((unsigned char)*p < 0x20 ? ' ' : *p, stderr);
	fputc('\n', stderr);
	free(m);
	exit(2);
}

static long num_long(const char *opt, const char *v, long min)
{
	char *e;
	errno = 0;
	long x = strtol(v, &e, 10);
	if (!*v || *e || errno || x < min) die("%s expects an integer >= %ld, got '%s'", opt, min, v);
	return x;
}

static double num_seconds(const char *opt, const char *v)
{
	char *e;
	errno = 0;
	double x = strtod(v, &e);
	if (!*v || *e || errno || x != x || x < 0 || x > 1e9) die("%s expects a number of seconds from 0 to 1e9, got '%s'", opt, v);
	return x;
}

/* +DURATION: numbers each followed by s, m, h or d (or nothing: seconds),
 * e.g. +90, +30m, +1h30m. -1 when malformed. */
static double duration(const char *v)
{
	double tot = 0;
	if (!*v) return -1;
	while (*v) {
		char *e;
		errno = 0;
		double x = strtod(v, &e);
		if (e == v || errno || x < 0 || x != x) return -1;
		double unit = 1;
		switch (*e) {
		case 's': unit = 1; e++; break;
		case 'm': unit = 60; e++; break;
		case 'h': unit = 3600; e++; break;
		case 'd': unit = 86400; e++; break;
		case 0: break;
		default: return -1;
		}
		tot += x * unit;
		v = e;
	}
	return tot;
}

/* TIME: @UNIX_SECONDS, or YYYY-MM-DD[T ]HH:MM[:SS] in local time, or with
 * Z / +HH:MM / -HH:MM. -1 when malformed. */
static double clock_time(const char *v)
{
	if (*v == '@') {
		char *e;
		double x = strtod(v + 1, &e);
		return v[1] && !*e && x > 0 ? x : -1;
	}
	struct tm tm = {0};
	int n = 0, sec = 0;
	if (sscanf(v, "%4d-%2d-%2d%*1[T ]%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &n) != 5 || !n)
		return -1;
	const char *p = v + n;
	if (*p == ':') {
		int k = 0;
		if (sscanf(p, ":%2d%n", &sec, &k) != 1 || k != 3) return -1;
		p += k;
	}
	tm.tm_sec = sec;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 || sec > 60)
		return -1;
	time_t t;
	if (!*p) {
		tm.tm_isdst = -1;
		t = mktime(&tm);
	} else {
		long off = 0;
		if (!strcmp(p, "Z")) off = 0;
		else {
			int hh, mm, k = 0;
			if ((*p != '+' && *p != '-') || (sscanf(p + 1, "%2d:%2d%n", &hh, &mm, &k) != 2 &&
							 sscanf(p + 1, "%2d%2d%n", &hh, &mm, &k) != 2) || p[1 + k] || hh > 23 || mm > 59)
				return -1;
			off = (hh * 3600L + mm * 60L) * (*p == '-' ? -1 : 1);
		}
		t = timegm(&tm) - off;
	}
	return t == (time_t)-1 ? -1 : (double)t;
}

static double parse_deadline(const char *v)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	double nowd = (double)now.tv_sec + now.tv_nsec / 1e9;
	double t = *v == '+' ? (duration(v + 1) >= 0 ? nowd + duration(v + 1) : -1) : clock_time(v);
	if (t < 0)
		die("--deadline must be a time (2026-12-01T18:00[:SS][Z|+HH:MM], @UNIX_SECONDS) or +DURATION (+90, +30m, +2h), got '%s'", v);
	if (t <= nowd) die("--deadline '%s' is in the past", v);
	return t;
}

static void check_json(const char *opt, const char *v)
{
	json_error_t je;
	json_t *j = json_loads(v, 0, &je);
	if (!j) die("%s is not valid JSON: %s", opt, je.text);
	json_decref(j);
}

static void put_line(const char *s, FILE *f)
{
	for (const char *p = s; *p; p++) fputc((unsigned char)*p < 0x20 || *p == 0x7f ? ' ' : *p, f);
}

static void print_result(const djc_worker_result *r, int json)
{
	char *const *tables = r->tables;
	size_t n = r->n_tables;
	if (json) {
		json_t *o = json_object(), *tv = json_array(), *st = json_object(), *ev = json_array();
		for (size_t i = 0; i < n; i++) json_array_append_new(tv, json_string(tables[i]));
		json_object_set_new(o, "tables", tv);
		json_object_set_new(o, "success_count", json_integer(r->success_count));
		json_object_set_new(o, "error_count", json_integer(r->error_count));
		json_object_set_new(o, "skipped_count", json_integer(r->skipped_count));
		json_object_set_new(o, "lost_count", json_integer(r->lost_count));
		json_object_set_new(o, "interrupted", r->interrupted == SIGINT ? json_string("SIGINT")
					: r->interrupted == SIGTERM ? json_string("SIGTERM") : json_null());
		for (int i = 0; i < DJC_WORKER_NSTOPS; i++)
			if (r->stopped[i]) json_object_set_new(st, djc_worker_stop_name(i), json_integer(r->stopped[i]));
		json_object_set_new(o, "stopped", st);
		for (size_t i = 0; i < r->n_errors; i++) {
			json_t *k = json_loads(r->errors[i].key_json, 0, NULL);
			json_t *m = json_string(r->errors[i].message);
			json_array_append_new(ev, json_pack("{s:o,s:o}", "key", k ? k : json_object(), "message", m ? m : json_string("")));
		}
		json_object_set_new(o, "errors", ev);
		char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (s) puts(s);
		free(s);
		json_decref(o);
	} else {
		printf("worker: %ld made, %ld error%s, %ld skipped", r->success_count, r->error_count,
		       r->error_count == 1 ? "" : "s", r->skipped_count);
		if (r->lost_count) printf(", %ld lost reservation%s", r->lost_count, r->lost_count == 1 ? "" : "s");
		printf("; stopped:");
		int any = 0;
		for (int i = 0; i < DJC_WORKER_NSTOPS; i++)
			if (r->stopped[i]) printf("%s %s (%ld)", any++ ? "," : "", djc_worker_stop_name(i), r->stopped[i]);
		if (!any) printf(" -");
		printf("\n");
		for (size_t i = 0; i < r->n_errors; i++) {
			fputs("error ", stdout);
			put_line(r->errors[i].key_json, stdout);
			fputs(": ", stdout);
			put_line(r->errors[i].message, stdout);
			fputc('\n', stdout);
		}
	}
	fflush(stdout);
}

int cmd_worker(int argc, char **argv, const char *db, const char *schema)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--make") || !strcmp(argv[i], "--")) break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { fputs(HELP, stdout); return 0; }
	}
	djc_worker_options o;
	djc_worker_options_init(&o);
	const char **tables = calloc((size_t)argc + 1, sizeof *tables);
	if (!tables) die("out of memory");
	size_t nt = 0;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define VALUE(name) (!strcmp(a, name) && v && (i++, 1))
		if (VALUE("--processes")) o.processes = (int)num_long(a, v, 1);
		else if (VALUE("--max-jobs")) o.max_jobs = num_long(a, v, 1);
		else if (VALUE("--idle-exit")) o.idle_exit = num_seconds(a, v);
		else if (!strcmp(a, "--until-empty")) o.until_empty = 1;
		else if (VALUE("--deadline")) o.deadline = parse_deadline(v);
		else if (VALUE("--priority")) o.priority = num_long(a, v, 0);
		else if (VALUE("--where")) { o.where_json = v; check_json("--where", v); }
		else if (!strcmp(a, "--refresh")) o.refresh = 1;
		else if (!strcmp(a, "--no-refresh")) o.refresh = 0;
		else if (VALUE("--refresh-interval")) {
			o.refresh_interval = num_seconds(a, v);
			if (o.refresh_interval <= 0) die("--refresh-interval must be greater than 0, got '%s'", v);
		} else if (!strcmp(a, "--json")) json = 1;
		else if (!strcmp(a, "--make")) {
			if (i + 1 >= argc) die("--make needs a program");
			o.make_argv = (const char *const *)&argv[i + 1];
			break;
		} else if (a[0] == '-') die("worker: unknown or incomplete option %s (see djc worker --help)", a);
		else tables[nt++] = a;
#undef VALUE
	}
	if (o.processes > 256) die("--processes is at most 256");
	djc_conn *c = NULL;
	int rc = djc_open(&c, db, schema);
	if (rc) {
		fputs("djc: ", stderr);
		put_line(djc_error_last(c), stderr);
		fputc('\n', stderr);
		djc_close(c);
		free(tables);
		return rc == DJC_EINVAL ? 2 : 1;
	}
	const char *w = config_warning();
	if (w) fprintf(stderr, "djc: %s\n", w);
	djc_worker_result *r = NULL;
	rc = djc_worker(c, nt ? tables : NULL, nt, &o, &r);
	if (r) print_result(r, json);
	int code = 0;
	if (rc == DJC_EINTR) {
		fprintf(stderr, "djc: %s\n", djc_error_last(c));
		code = 128 + (r ? r->interrupted : SIGTERM);
	} else if (rc == DJC_EMAKE && r && r->n_errors) {
		long n = r->error_count;
		fprintf(stderr, "djc: %ld make call%s failed; %s", n, n == 1 ? "" : "s", n == 1 ? "key " : "first ");
		put_line(r->errors[0].key_json, stderr);
		if (n > 1) fprintf(stderr, " (%ld more)", n - 1);
		fputs(": ", stderr);
		put_line(r->errors[0].message, stderr);
		fputc('\n', stderr);
		code = 1;
	} else if (rc) {
		fputs("djc: ", stderr);
		put_line(djc_error_last(c), stderr);
		fputc('\n', stderr);
		code = rc == DJC_EINVAL || rc == DJC_ENOTFOUND ? 2 : 1;
	}
	djc_worker_result_free(r);
	djc_close(c);
	free(tables);
	return code;
}
