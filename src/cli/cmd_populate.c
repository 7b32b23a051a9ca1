/* cmd_populate.c - filling computed tables: populate, progress. */
#include "cli.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>

void cli_print_counts(const cli_run_counts *n)
{
	printf("%ld made, %ld error%s, %ld skipped", n->made, n->errors, n->errors == 1 ? "" : "s", n->skipped);
	if (n->lost) printf(", %ld lost reservation%s", n->lost, n->lost == 1 ? "" : "s");
	if (n->retried) printf(", %ld retried", n->retried);
	if (n->cancelled) printf(", %ld cancelled", n->cancelled);
}

json_t *cli_json_signal(int sig)
{
	return sig == SIGINT ? json_string("SIGINT") : sig == SIGTERM ? json_string("SIGTERM") : json_null();
}

void cli_print_make_failures(long n, const char *table, const char *first_table, const djc_populate_error *first)
{
	fprintf(stderr, "djc: %ld make call%s", n, n == 1 ? "" : "s");
	if (table) {
		fputs(" of ", stderr);
		put_line(table, stderr);
	}
	fputs(" failed; ", stderr);
	fputs(n == 1 ? "key " : "first ", stderr);
	if (!table) {
		put_line(first_table, stderr);
		fputc(' ', stderr);
	}
	put_line(first->key_json, stderr);
	if (n > 1) fprintf(stderr, " (%ld more)", n - 1);
	fputs(": ", stderr);
	put_line(first->message, stderr);
	fputc('\n', stderr);
}

int cli_run_exit(int rc, djc_conn *c, int have_result, int interrupted)
{
	if (rc != DJC_EINTR) return exit_for(rc, c);
	fprintf(stderr, "djc: %s\n", djc_error_last(c));
	return 128 + (have_result ? interrupted : SIGTERM);
}

/* s seconds as "45s", "4m10s", "2h05m", "3d04h". */
static void say_seconds(char *b, size_t n, double s)
{
	long t = (long)(s + 0.5);
	if (t < 60) snprintf(b, n, "%lds", t);
	else if (t < 3600) snprintf(b, n, "%ldm%02lds", t / 60, t % 60);
	else if (t < 86400) snprintf(b, n, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else snprintf(b, n, "%ldd%02ldh", t / 86400, t / 3600 % 24);
}

/* After a reserving populate that found nothing to take: why, on stderr,
 * when jobs are waiting (not due yet, or above --priority), so that "0
 * made" is not mistaken for "nothing to do". */
static void explain_nothing_taken(djc_conn *c, const char *table, const djc_populate_options *o)
{
	djc_jobs_wait w;
	if (djc_jobs_waiting(&w, c, table, o->where_json, o->priority)) return;
	if (w.later) {
		char in[32];
		say_seconds(in, sizeof in, w.first_due_in);
		fprintf(stderr, "djc: note: no job of %s was due: %ld pending job%s wait%s (a retry's backoff or a --delay); "
			"the first is due in %s (%.19s UTC)\n", table, w.later, w.later == 1 ? "" : "s", w.later == 1 ? "s" : "",
			in, w.first_due);
	}
	if (w.above_priority)
		fprintf(stderr, "djc: note: %ld job%s of %s %s due but above --priority %ld\n", w.above_priority,
			w.above_priority == 1 ? "" : "s", table, w.above_priority == 1 ? "is" : "are", o->priority);
}

static const char POPULATE_HELP[] =
	"usage: djc populate TABLE [--reserve-jobs] [--processes N] [--max-calls N]\n"
	"                     [--priority P] [--suppress-errors] [--display-progress]\n"
	"                     [--refresh | --no-refresh] [--where COND] [--json]\n"
	"                     [--timeout DURATION]\n"
	"                     [--make COMMAND [ARG...] | --make-serve COMMAND [ARG...]]\n"
	"Call make once for every key of (key_source & where) - TABLE.\n"
	"  --reserve-jobs      coordinate through the jobs table (many workers, many hosts)\n"
	"  --processes N       N worker processes, each taking keys as it goes\n"
	"  --max-calls N       at most N make calls in all\n"
	"  --priority P        reserve only jobs with priority <= P\n"
	"  --where COND        only these keys: a condition (species = \"rat\" and session > 2)\n"
	"                      or JSON, on any attribute of the key source's tables, or an\n"
	"                      expression of its tables (Subject - Excluded)\n"
	"  --suppress-errors   go on after a failed make (else the first error stops)\n"
	"  --display-progress  a progress bar on stderr\n"
	"  --refresh/--no-refresh  refresh the jobs table first (default jobs.auto_refresh)\n"
	"  --timeout DURATION  stop a make that runs longer (90, 30s, 15m, 2h); it is\n"
	"                      recorded as an error \"timed out after ...\" and retried like\n"
	"                      any failure (default: the table's timeout =, jobs.make_timeout;\n"
	"                      0: no limit for this run)\n"
	"  --make COMMAND ...  the make program and its arguments (must come last); it\n"
	"                      gets the key as JSON on stdin and in DJC_KEY and prints\n"
	"                      rows as JSON Lines\n"
	"  --make-serve COMMAND ...  a make program started once per worker process and\n"
	"                      kept: it gets keys and answers rows over its stdin and\n"
	"                      stdout, and reads upstream rows from djc over the same\n"
	"                      pipe (docs/serve-protocol.md); must come last\n"
	"SIGUSR1 drains: no new job is taken, running makes finish and commit, exit 0.\n"
	"Exit status: 0 all made, 1 some make failed, 2 bad input, 130/143 interrupted.\n";

/* populate's command line into o, *table and *json (exits on a usage error). */
static void populate_args(int argc, char **argv, djc_populate_options *o, const char **table, int *json)
{
	enum { RESERVE = 1, PROCESSES, MAX_CALLS, PRIORITY, SUPPRESS, PROGRESS, REFRESH, NO_REFRESH, JSON, WHERE, TIMEOUT, MAKE, MAKE_SERVE };
	static const cli_option opts[] = {
		{"reserve-jobs", CLI_FLAG, RESERVE, 0},
		{"processes", CLI_VALUE, PROCESSES, 0},
		{"max-calls", CLI_VALUE, MAX_CALLS, 0},
		{"priority", CLI_VALUE, PRIORITY, 0},
		{"suppress-errors", CLI_FLAG, SUPPRESS, 0},
		{"display-progress", CLI_FLAG, PROGRESS, 0},
		{"refresh", CLI_FLAG, REFRESH, 0},
		{"no-refresh", CLI_FLAG, NO_REFRESH, 0},
		{"json", CLI_FLAG, JSON, 0},
		{"where", CLI_VALUE, WHERE, 0},
		{"timeout", CLI_VALUE, TIMEOUT, 0},
		{"make", CLI_REST, MAKE, 0},
		{"make-serve", CLI_REST, MAKE_SERVE, 0},
		{NULL, 0, 0, 0},
	};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, POPULATE_HELP);
	a.unknown_fmt = a.missing_fmt = "unknown or incomplete option %s";
	for (int k; (k = cli_next(&a)) != CLI_END;) {
		switch (k) {
		case RESERVE: o->reserve_jobs = 1; break;
		case PROCESSES: o->processes = (int)parse_long(a.opt, a.arg, 1); break;
		case MAX_CALLS: o->max_calls = parse_long(a.opt, a.arg, 1); break;
		case PRIORITY: o->priority = parse_priority(a.opt, a.arg); break;
		case SUPPRESS: o->suppress_errors = 1; break;
		case PROGRESS: o->display_progress = 1; break;
		case REFRESH: o->refresh = 1; break;
		case NO_REFRESH: o->refresh = 0; break;
		case JSON: *json = 1; break;
		case WHERE: o->where_json = a.arg; check_where("--where", o->where_json); break;
		case TIMEOUT: o->timeout = parse_timeout(a.opt, a.arg); break;
		case MAKE: o->make_argv = (const char *const *)a.rest; break;
		case MAKE_SERVE: o->make_serve_argv = (const char *const *)a.rest; break;
		default:
			if (*table) die_usage("populate takes one TABLE (put --make or --make-serve last)");
			*table = a.arg;
		}
	}
	if (!*table) die_usage("populate needs a TABLE (see djc populate --help)");
	if (o->processes > DJC_MAX_PROCESSES) die_usage("--processes is at most %d", DJC_MAX_PROCESSES);
}

/* populate's result on stdout: a JSON object, or the counts line and one
 * line per error. */
static void print_populate_result(const djc_populate_result *r, const char *table, int json)
{
	if (json) {
		json_t *errors = json_array();
		for (size_t i = 0; i < r->n_errors; i++) {
			json_t *k = json_loads(r->errors[i].key_json, 0, NULL);
			json_array_append_new(errors, json_pack("{s:o,s:o}", "key", k ? k : json_object(), "message",
								 cli_json_text(r->errors[i].message)));
		}
		cli_print_json(json_pack("{s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:b,s:o,s:o,s:o}", "table", cli_json_text(table),
					 "success_count", (json_int_t)r->success_count, "error_count", (json_int_t)r->error_count,
					 "skipped_count", (json_int_t)r->skipped_count, "lost_count", (json_int_t)r->lost_count,
					 "retried_count", (json_int_t)r->retried_count,
					 "cancelled_count", (json_int_t)r->cancelled_count, "drained", r->drained,
					 "interrupted", cli_json_signal(r->interrupted), "errors", errors, "failure",
					 r->failure ? cli_json_text(r->failure) : json_null()));
	} else {
		cli_run_counts n = {r->success_count, r->error_count, r->skipped_count, r->lost_count, r->retried_count,
				    r->cancelled_count};
		printf("%s: ", table);
		cli_print_counts(&n);
		if (r->drained) printf("; drained (SIGUSR1)");
		printf("\n");
		/* one line per error, whatever a make put in its message (a
		 * serve program's newline, a terminal escape): as djc worker */
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

int cmd_populate(int argc, char **argv)
{
	cli_block_drain();
	djc_populate_options o;
	djc_populate_options_init(&o);
	const char *table = NULL;
	int json = 0;
	populate_args(argc, argv, &o, &table, &json);
	djc_conn *c = cli_connect(CLI_EXISTING);
	if (!o.display_progress) djc_config_get_bool(&o.display_progress, "display.progress");   /* djc.json / DJC_DISPLAY_PROGRESS */
	djc_populate_result *r = NULL;
	int rc = djc_populate(&r, c, table, &o);
	if (r) {
		print_populate_result(r, table, json);
		if (!rc && o.reserve_jobs && !r->interrupted && !r->drained && !r->success_count && !r->error_count &&
		    !r->skipped_count && !r->retried_count)
			explain_nothing_taken(c, table, &o);
	}
	int code;
	if (rc == DJC_EMAKE) {
		if (r && r->error_count >= 1 && r->n_errors) cli_print_make_failures(r->error_count, table, NULL, &r->errors[0]);
		else {
			fputs("djc: ", stderr);
			put_line(djc_error_last(c), stderr);
			fputc('\n', stderr);
		}
		code = 1;
	} else
		code = cli_run_exit(rc, c, r != NULL, r ? r->interrupted : 0);
	djc_populate_result_free(r);
	djc_close(c);
	return code;
}

int cmd_progress(int argc, char **argv)
{
	static const char H[] =
		"usage: djc progress TABLE [--where COND] [--json]\n"
		"       djc progress [--watch [--interval S]] [--json]\n"
		"Remaining and total keys of TABLE's key source. Without a TABLE: every computed\n"
		"and imported table in dependency order, with a bar, counts and its jobs (errors,\n"
		"ignored, reserved, pending). --json: for TABLE, its keys and its jobs by status;\n"
		"without, {\"time\": UTC, \"tables\": [...]}, one object per snapshot with --watch.\n"
		"  --watch        show it again every --interval seconds (default 2) until\n"
		"                 interrupted: redrawn in place on a terminal, else a snapshot\n"
		"                 under a time line each time (a log)\n";
	enum { WHERE = 1, JSON, WATCH, INTERVAL };
	static const cli_option opts[] = {{"where", CLI_VALUE, WHERE, 0}, {"json", CLI_FLAG, JSON, 0},
					  {"watch", CLI_FLAG, WATCH, 0}, {"interval", CLI_VALUE, INTERVAL, 0}, {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, H);
	a.unknown_fmt = a.missing_fmt = "unknown or incomplete option %s";
	const char *table = NULL, *where = NULL;
	int json = 0, watch = 0, interval_given = 0;
	double interval = 2;
	for (int o; (o = cli_next(&a)) != CLI_END;) {
		if (o == WHERE) { where = a.arg; check_where("--where", where); }
		else if (o == JSON) json = 1;
		else if (o == WATCH) watch = 1;
		else if (o == INTERVAL) {
			interval = parse_double(a.opt, a.arg);
			if (!(interval >= 0.05 && interval <= 86400)) die_usage("--interval must be 0.05 to 86400 seconds, got '%s'", a.arg);
			interval_given = 1;
		} else if (!table) table = a.arg;
		else die_usage("progress takes one TABLE");
	}
	if (interval_given && !watch) die_usage("--interval goes with --watch");
	if (!table) {
		if (where) die_usage("--where needs a TABLE (progress TABLE --where COND)");
		return cli_progress_all(json, watch, interval);
	}
	if (watch) die_usage("--watch follows every table: leave out TABLE");
	djc_conn *c = cli_connect(CLI_EXISTING);
	long rem = 0, tot = 0;
	/* an adopted table DataJoint changed is refused, as populate refuses it */
	char *why = NULL;
	int rc = djc_adopted_check(&why, c, &table, 1);
	if (!rc && why) {
		fprintf(stderr, "djc: table %s is not as adopted: %s\n", table, why);
		free(why);
		djc_close(c);
		return 2;
	}
	if (!rc) rc = djc_progress(&rem, &tot, c, table, where);
	if (!rc) {
		djc_job_counts n;
		if (json && !(rc = djc_jobs_count(&n, c, table, where)))
			/* the fields of an entry of `djc progress --json` */
			cli_print_json(json_pack("{s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "table", cli_json_text(table), "remaining",
						 (json_int_t)rem, "total", (json_int_t)tot, "pending", (json_int_t)n.pending,
						 "reserved", (json_int_t)n.reserved, "success", (json_int_t)n.success, "error",
						 (json_int_t)n.error, "ignore", (json_int_t)n.ignore));
		else if (!json && tot)
			printf("%s: Completed %ld of %ld (%.1f%%), %ld remaining\n", table, tot - rem, tot,
			       100.0 * (double)(tot - rem) / (double)tot, rem);
		else if (!json)
			printf("%s: Completed 0 of 0 (no keys in its key source)\n", table);
	}
	return cli_done(rc, c);
}
