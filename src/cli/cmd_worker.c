/* cmd_worker.c - `djc worker`: the long-running form of populate (the C
 * API's djc_worker). Uses only the public API. */
#include "cli.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds(const char *opt, const char *v)
{
	double x = parse_double(opt, v);
	if (x < 0 || x > 1e9) die_usage("%s expects a number of seconds from 0 to 1e9, got '%s'", opt, v);
	return x;
}

static const char HELP[] =
	"usage: djc worker [TABLE...] [--processes N] [--max-jobs N] [--idle-exit SECONDS]\n"
	"                  [--until-empty] [--deadline TIME|+DURATION] [--priority P]\n"
	"                  [--where COND] [--refresh | --no-refresh] [--refresh-interval SECONDS]\n"
	"                  [--timeout DURATION] [--json]\n"
	"                  [--make COMMAND [ARG...] | --make-serve COMMAND [ARG...]]\n"
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
	"  --where COND          restrict the jobs reserved: JSON, a condition or an expression\n"
	"                        (Subject - Excluded) on every served table's key source\n"
	"  --refresh/--no-refresh  refresh the jobs tables (default jobs.auto_refresh)\n"
	"  --refresh-interval S  at most one refresh per table per S seconds (default 10)\n"
	"  --timeout DURATION    stop a make that runs longer (90, 30s, 15m, 2h) and record it\n"
	"                        as an error (default: each table's timeout =, jobs.make_timeout;\n"
	"                        0: no limit for this run)\n"
	"  --make COMMAND ...    the make program (one served table only; must come last)\n"
	"  --make-serve COMMAND ...  a serve program, started once per worker process and kept\n"
	"                        (one served table only; docs/serve-protocol.md; must come last)\n"
	"Without --idle-exit, --max-jobs, --until-empty or --deadline it runs until a signal.\n"
	"SIGUSR1 drains: no new job, the running makes finish and commit, then exit 0.\n"
	"A table's make_serve = line runs one serve program per worker process.\n"
	"Exit status: 0 stopped as asked, 1 some make failed (or the worker could not go on),\n"
	"2 bad input, 130/143 interrupted by SIGINT/SIGTERM.\n";

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
		die_usage("--deadline must be a time (2026-12-01T18:00[:SS][Z|+HH:MM], @UNIX_SECONDS) or +DURATION (+90, +30m, +2h), got '%s'", v);
	if (t <= nowd) die_usage("--deadline '%s' is in the past", v);
	return t;
}

/* The table of the i-th error ("" when not known). */
static const char *error_table(const djc_worker_result *r, size_t i)
{
	return r->error_tables && r->error_tables[i] ? r->error_tables[i] : "";
}

/* The one stderr line of a worker whose makes failed (cli_print_make_failures):
 * of one table, or of several. */
static void print_make_failures(const djc_worker_result *r)
{
	const char *t = error_table(r, 0);
	int one_table = 1;
	for (size_t i = 1; i < r->n_errors; i++) one_table &= !strcmp(error_table(r, i), t);
	cli_print_make_failures(r->error_count, one_table ? t : NULL, t, &r->errors[0]);
}

static void print_result(const djc_worker_result *r, int json)
{
	char *const *tables = r->tables;
	size_t n = r->n_tables;
	if (json) {
		json_t *o = json_object(), *tv = json_array(), *st = json_object(), *ev = json_array();
		for (size_t i = 0; i < n; i++) json_array_append_new(tv, cli_json_text(tables[i]));
		json_object_set_new(o, "tables", tv);
		json_object_set_new(o, "success_count", json_integer(r->success_count));
		json_object_set_new(o, "error_count", json_integer(r->error_count));
		json_object_set_new(o, "skipped_count", json_integer(r->skipped_count));
		json_object_set_new(o, "lost_count", json_integer(r->lost_count));
		json_object_set_new(o, "retried_count", json_integer(r->retried_count));
		json_object_set_new(o, "cancelled_count", json_integer(r->cancelled_count));
		json_object_set_new(o, "drained", json_boolean(r->drained));
		json_object_set_new(o, "interrupted", cli_json_signal(r->interrupted));
		for (int i = 0; i < DJC_WORKER_NSTOPS; i++)
			if (r->stopped[i]) json_object_set_new(st, djc_worker_stop_name(i), json_integer(r->stopped[i]));
		json_object_set_new(o, "stopped", st);
		for (size_t i = 0; i < r->n_errors; i++) {
			json_t *k = json_loads(r->errors[i].key_json, 0, NULL);
			json_array_append_new(ev, json_pack("{s:o,s:o,s:o}", "table", cli_json_text(error_table(r, i)), "key",
							    k ? k : json_object(), "message", cli_json_text(r->errors[i].message)));
		}
		json_object_set_new(o, "errors", ev);
		json_object_set_new(o, "failure", r->failure ? cli_json_text(r->failure) : json_null());
		cli_print_json(o);
	} else {
		cli_run_counts cn = {r->success_count, r->error_count, r->skipped_count, r->lost_count, r->retried_count,
				     r->cancelled_count};
		printf("worker: ");
		cli_print_counts(&cn);
		printf("; stopped:");
		int any = 0;
		for (int i = 0; i < DJC_WORKER_NSTOPS; i++)
			if (r->stopped[i]) printf("%s %s (%ld)", any++ ? "," : "", djc_worker_stop_name(i), r->stopped[i]);
		if (!any) printf(" -");
		printf("\n");
		for (size_t i = 0; i < r->n_errors; i++) {
			fputs("error ", stdout);
			put_line(error_table(r, i), stdout);
			fputc(' ', stdout);
			put_line(r->errors[i].key_json, stdout);
			fputs(": ", stdout);
			put_line(r->errors[i].message, stdout);
			fputc('\n', stdout);
		}
	}
	fflush(stdout);
}

int cmd_worker(int argc, char **argv)
{
	enum { PROCESSES = 1, MAX_JOBS, IDLE_EXIT, UNTIL_EMPTY, DEADLINE, PRIORITY, WHERE, REFRESH, NO_REFRESH, INTERVAL, TIMEOUT, JSON,
	       MAKE, MAKE_SERVE };
	cli_block_drain();
	static const cli_option opts[] = {
		{"processes", CLI_VALUE, PROCESSES, 0},
		{"max-jobs", CLI_VALUE, MAX_JOBS, 0},
		{"idle-exit", CLI_VALUE, IDLE_EXIT, 0},
		{"until-empty", CLI_FLAG, UNTIL_EMPTY, 0},
		{"deadline", CLI_VALUE, DEADLINE, 0},
		{"priority", CLI_VALUE, PRIORITY, 0},
		{"where", CLI_VALUE, WHERE, 0},
		{"refresh", CLI_FLAG, REFRESH, 0},
		{"no-refresh", CLI_FLAG, NO_REFRESH, 0},
		{"refresh-interval", CLI_VALUE, INTERVAL, 0},
		{"timeout", CLI_VALUE, TIMEOUT, 0},
		{"json", CLI_FLAG, JSON, 0},
		{"make", CLI_REST, MAKE, 0},
		{"make-serve", CLI_REST, MAKE_SERVE, 0},
		{NULL, 0, 0, 0},
	};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, HELP);
	a.unknown_fmt = a.missing_fmt = "unknown or incomplete option %s";
	djc_worker_options o;
	djc_worker_options_init(&o);
	const char **tables = calloc((size_t)argc + 1, sizeof *tables);
	if (!tables) die_usage("out of memory");
	size_t nt = 0;
	int json = 0;
	for (int k; (k = cli_next(&a)) != CLI_END;) {
		switch (k) {
		case PROCESSES: o.processes = (int)parse_long(a.opt, a.arg, 1); break;
		case MAX_JOBS: o.max_jobs = parse_long(a.opt, a.arg, 1); break;
		case IDLE_EXIT: o.idle_exit = seconds(a.opt, a.arg); break;
		case UNTIL_EMPTY: o.until_empty = 1; break;
		case DEADLINE: o.deadline = parse_deadline(a.arg); break;
		case PRIORITY: o.priority = parse_priority(a.opt, a.arg); break;
		case WHERE: o.where_json = a.arg; check_where("--where", a.arg); break;
		case REFRESH: o.refresh = 1; break;
		case NO_REFRESH: o.refresh = 0; break;
		case INTERVAL:
			o.refresh_interval = seconds(a.opt, a.arg);
			if (o.refresh_interval <= 0) die_usage("--refresh-interval must be greater than 0, got '%s'", a.arg);
			break;
		case TIMEOUT:
			o.timeout = parse_timeout(a.opt, a.arg);
			break;
		case JSON: json = 1; break;
		case MAKE: o.make_argv = (const char *const *)a.rest; break;
		case MAKE_SERVE: o.make_serve_argv = (const char *const *)a.rest; break;
		default: tables[nt++] = a.arg;
		}
	}
	if (o.processes > DJC_MAX_PROCESSES) die_usage("--processes is at most %d", DJC_MAX_PROCESSES);
	djc_conn *c = cli_connect(CLI_EXISTING);
	djc_worker_result *r = NULL;
	int rc = djc_worker(&r, c, nt ? tables : NULL, nt, &o);
	if (r) print_result(r, json);
	int code;
	if (rc == DJC_EMAKE && r && r->n_errors) {
		print_make_failures(r);
		code = 1;
	} else
		code = cli_run_exit(rc, c, r != NULL, r ? r->interrupted : 0);
	djc_worker_result_free(r);
	djc_close(c);
	free(tables);
	return code;
}
