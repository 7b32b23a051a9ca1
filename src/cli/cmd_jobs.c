/* cmd_jobs.c - the jobs table: jobs (counts, listings), jobs refresh,
 * jobs clear, jobs ignore. */
#include "cli.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char JOBS_HELP[] =
	"usage: djc jobs TABLE [--status pending|reserved|success|error|ignore] [--json]\n"
	"       djc jobs refresh TABLE [--priority P] [--delay S] [--stale-timeout S]\n"
	"                              [--orphan-timeout S] [--where JSON] [--json]\n"
	"       djc jobs clear TABLE --status STATUS\n"
	"       djc jobs ignore TABLE KEY_JSON\n";

/* --delay: seconds from now, negative too (DataJoint's populate refreshes
 * with delay=-1: due at once whatever the clocks say); finite. */
static double parse_delay(const char *opt, const char *v)
{
	char *e;
	double x = strtod(v, &e);
	if (!*v || *e || x != x || x > 1e12 || x < -1e12) die_usage("%s expects a number of seconds, got '%s'", opt, v);
	return x;
}

int cmd_jobs_refresh(int argc, char **argv)
{
	static const char H[] =
		"usage: djc jobs refresh TABLE [--priority P] [--delay S] [--stale-timeout S]\n"
		"                              [--orphan-timeout S] [--where JSON] [--json]\n"
		"Add the keys of (key_source & where) - TABLE that have no job as pending jobs,\n"
		"due after --delay seconds (negative: due already, ahead of jobs due now),\n"
		"re-pend successes whose row is gone, remove jobs older than the stale timeout\n"
		"whose key left the key source, and re-pend reservations older than the orphan\n"
		"timeout.\n";
	enum { PRIORITY = 1, DELAY, STALE, ORPHAN, WHERE, JSON };
	static const cli_option opts[] = {
		{"priority", CLI_VALUE, PRIORITY, 0}, {"delay", CLI_VALUE, DELAY, 0},
		{"stale-timeout", CLI_VALUE, STALE, 0}, {"orphan-timeout", CLI_VALUE, ORPHAN, 0},
		{"where", CLI_VALUE, WHERE, 0}, {"json", CLI_FLAG, JSON, 0}, {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, H);
	a.unknown_fmt = a.missing_fmt = "unknown or incomplete option %s";
	djc_refresh_options o = DJC_REFRESH_OPTIONS_INIT;
	const char *table = NULL;
	int json = 0;
	for (int k; (k = cli_next(&a)) != CLI_END;) {
		switch (k) {
		case PRIORITY: o.priority = parse_long(a.opt, a.arg, 0); break;
		case DELAY: o.delay = parse_delay(a.opt, a.arg); break;
		case STALE: o.stale_timeout = parse_double(a.opt, a.arg); break;
		case ORPHAN: o.orphan_timeout = parse_double(a.opt, a.arg); break;
		case WHERE: o.where_json = a.arg; check_json("--where", o.where_json); break;
		case JSON: json = 1; break;
		default:
			if (table) die_usage("jobs refresh takes one TABLE");
			table = a.arg;
		}
	}
	if (!table) die_usage("jobs refresh needs a TABLE");
	djc_conn *c = cli_connect(CLI_EXISTING);
	djc_refresh_result r;
	int rc = djc_jobs_refresh(&r, c, table, &o);
	if (!rc) {
		if (json)
			cli_print_json(json_pack("{s:I,s:I,s:I,s:I}", "added", (json_int_t)r.added, "removed", (json_int_t)r.removed,
						 "orphaned", (json_int_t)r.orphaned, "re_pended", (json_int_t)r.re_pended));
		else printf("%s: added %ld, removed %ld, orphaned %ld, re_pended %ld\n", table, r.added, r.removed, r.orphaned, r.re_pended);
	}
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}

int cmd_jobs_clear(int argc, char **argv)
{
	static const char H[] = "usage: djc jobs clear TABLE --status STATUS\n"
				"Delete the jobs of a status: clearing errors makes their keys eligible again.\n";
	enum { STATUS = 1 };
	static const cli_option opts[] = {{"status", CLI_VALUE, STATUS, 0}, {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, H);
	a.unknown_fmt = a.missing_fmt = "unknown or incomplete option %s";
	const char *table = NULL, *status = NULL;
	for (int k; (k = cli_next(&a)) != CLI_END;) {
		if (k == STATUS) status = a.arg;
		else if (!table) table = a.arg;
		else die_usage("jobs clear takes one TABLE");
	}
	if (!table || !status) die_usage("usage: djc jobs clear TABLE --status STATUS");
	djc_conn *c = cli_connect(CLI_EXISTING);
	long n = 0;
	int rc = djc_jobs_clear(&n, c, table, status);
	if (!rc) printf("%s: cleared %ld %s job%s\n", table, n, status, n == 1 ? "" : "s");
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}

int cmd_jobs_ignore(int argc, char **argv)
{
	static const char H[] = "usage: djc jobs ignore TABLE KEY_JSON\n"
				"Mark a key `ignore`: populate never makes it (djc jobs clear TABLE --status ignore\n"
				"undoes it). KEY_JSON is a key as the job listings print it.\n";
	cli_args a;
	cli_args_init(&a, argc, argv, NULL, H);
	const char *pos[2] = {NULL, NULL};
	int n = 0;
	for (int k; (k = cli_next(&a)) != CLI_END;)
		if (n++ < 2) pos[n - 1] = a.arg;
	if (n != 2) die_usage("usage: djc jobs ignore TABLE KEY_JSON");
	djc_row *key = NULL;
	char *msg = NULL;
	if (djc_row_from_json(&key, pos[1], &msg)) {
		fputs("djc: KEY_JSON: ", stderr);
		put_line(msg ? msg : "not a JSON object", stderr);
		fputc('\n', stderr);
		free(msg);
		return 2;
	}
	djc_conn *c = cli_connect(CLI_EXISTING);
	int rc = djc_jobs_ignore(c, pos[0], key);
	if (!rc) printf("%s: ignoring %s\n", pos[0], pos[1]);
	djc_row_free(key);
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}

/* A job row as JSON (djc_row_to_json), or NULL when it does not parse. */
static json_t *row_json(const djc_row *r)
{
	char *s = djc_row_to_json(r);
	json_t *j = s ? json_loads(s, JSON_DECODE_ANY, NULL) : NULL;
	free(s);
	return j;
}

/* --json: one object, {"table":T,"status":S,"jobs":[{...},...]}, each job
 * the row as djc_row_to_json writes it. */
static void print_jobs_json(const djc_rowset *rs, const char *table, const char *status)
{
	json_t *jobs = json_array();
	for (size_t i = 0; i < djc_rowset_count(rs); i++) {
		json_t *j = row_json(djc_rowset_row(rs, i));
		json_array_append_new(jobs, j ? j : json_null());
	}
	cli_print_json(json_pack("{s:o,s:o,s:o}", "table", cli_json_text(table), "status", cli_json_text(status), "jobs", jobs));
}

/* One line per job: its key as JSON that `djc jobs ignore TABLE KEY_JSON`
 * takes back (every character escaped as JSON needs), then the chosen
 * columns as name=value. */
static void print_jobs_rows(const djc_rowset *rs)
{
	static const char *show[] = {"status", "priority", "reservations", "host", "pid", "reserved_time", "completed_time",
				     "last_end", "error_message", NULL};
	for (size_t i = 0; i < djc_rowset_count(rs); i++) {
		const djc_row *r = djc_rowset_row(rs, i);
		/* the key attributes come first (everything before "status") */
		long st = djc_row_find(r, "status");
		json_t *all = row_json(r), *key = json_object();
		for (long k = 0; k < st; k++) {
			const char *name = djc_row_name(r, (size_t)k);
			json_t *v = all ? json_object_get(all, name) : NULL;
			json_object_set(key, name, v ? v : json_null());
		}
		json_decref(all);
		/* ", " and ": " between items, as in populate's error lines */
		char *ks = cli_json_dumps(key, 0);
		json_decref(key);
		fputs(ks ? ks : "{}", stdout);
		free(ks);
		for (int s = 0; show[s]; s++) {
			long k = djc_row_find(r, show[s]);
			if (k < 0 || djc_row_type(r, (size_t)k) == DJC_NULL) continue;
			const char *t;
			int64_t v;
			if (djc_row_text(&t, r, (size_t)k) == DJC_OK) {
				printf("  %s=", show[s]);
				put_line(t, stdout);   /* a message's newlines would start a fake job line */
			} else if (djc_row_int(&v, r, (size_t)k) == DJC_OK)
				printf("  %s=%" PRId64, show[s], v);
		}
		printf("\n");
	}
}

int cmd_jobs(int argc, char **argv)
{
	enum { STATUS = 1, JSON };
	static const cli_option opts[] = {{"status", CLI_VALUE, STATUS, 0}, {"json", CLI_FLAG, JSON, 0}, {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, JOBS_HELP);
	a.unknown_fmt = a.missing_fmt = "unknown or incomplete option %s";
	if (argc < 2) die_usage("jobs needs a TABLE (see djc jobs --help)");
	const char *table = NULL, *status = NULL;
	int json = 0;
	for (int k; (k = cli_next(&a)) != CLI_END;) {
		if (k == STATUS) status = a.arg;
		else if (k == JSON) json = 1;
		else if (!table) table = a.arg;
		else {
			/* `djc jobs refrsh T`: a mistyped subcommand, not two tables */
			const char *sub = cli_subcommand_near("jobs", table);
			if (sub) die_usage("jobs: unknown subcommand '%s'; did you mean '%s'?", table, sub);
			die_usage("jobs takes one TABLE (or refresh, clear, ignore)");
		}
	}
	if (!table) die_usage("jobs needs a TABLE");
	if (status) {
		static const char *ok[] = {"pending", "reserved", "success", "error", "ignore", NULL};
		int valid = 0;
		for (int i = 0; ok[i]; i++) if (!strcmp(status, ok[i])) valid = 1;
		if (!valid) die_usage("--status must be pending, reserved, success, error or ignore, got '%s'", status);
	}
	djc_conn *c = cli_connect(CLI_EXISTING);
	int rc;
	if (status) {
		djc_rowset *rs = NULL;
		rc = djc_jobs_list(&rs, c, table, status);
		if (!rc) {
			if (json) print_jobs_json(rs, table, status);
			else print_jobs_rows(rs);
		}
		djc_rowset_free(rs);
	} else {
		long n[5];
		rc = djc_jobs_counts(n, c, table);
		if (!rc) {
			if (json)
				cli_print_json(json_pack("{s:o,s:I,s:I,s:I,s:I,s:I}", "table", cli_json_text(table), "pending", (json_int_t)n[0],
							 "reserved", (json_int_t)n[1], "success", (json_int_t)n[2], "error", (json_int_t)n[3],
							 "ignore", (json_int_t)n[4]));
			else printf("%s jobs: pending %ld, reserved %ld, success %ld, error %ld, ignore %ld\n", table, n[0], n[1], n[2], n[3], n[4]);
		}
	}
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}
