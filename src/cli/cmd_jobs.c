/* cmd_jobs.c - the jobs table: jobs (counts, listings), jobs refresh,
 * jobs clear, jobs ignore. */
#include "cli.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char JOBS_HELP[] =
	"usage: djc jobs TABLE [--status STATUS | --all] [--where COND] [--counts] [--json]\n"
	"       djc jobs TABLE --key JSON [--json]\n"
	"       djc jobs --status STATUS [--json]\n"
	"       djc jobs refresh TABLE [--priority P] [--delay S] [--stale-timeout S]\n"
	"                              [--orphan-timeout S] [--where COND] [--json]\n"
	"       djc jobs clear TABLE [--status STATUS] [--where COND | --all] [--json]\n"
	"       djc jobs ignore TABLE (KEY_JSON | --where COND | --all) [--json]\n"
	"       djc jobs cancel TABLE (--where COND | --all) [--json]\n"
	"       djc jobs set TABLE (--where COND | --all) [--priority P] [--delay S] [--json]\n"
	"Without options: the counts by status and their total. --status S, --all or --where\n"
	"list the jobs (every column with --json); --key shows one job with its attempts.\n"
	"STATUS: pending, reserved, success, error, ignore (or DataJoint's errors, completed,\n"
	"ignored). --where restricts the job keys, as for populate: a condition\n"
	"(species = \"rat\") or JSON, on any attribute of the key source's tables. In a listing, an\n"
	"error's stack follows its job's line, indented. Without a TABLE, --status S shows\n"
	"those jobs of every computed and imported table grouped by message, with counts\n"
	"and each message's first key.\n";

/* The status a --status value names (DataJoint's view names too). */
static const char *status_arg(const char *v)
{
	static const char *const map[][2] = {
		{"pending", "pending"}, {"reserved", "reserved"}, {"success", "success"}, {"error", "error"},
		{"ignore", "ignore"}, {"errors", "error"}, {"completed", "success"}, {"ignored", "ignore"},
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (!strcmp(v, map[i][0])) return map[i][1];
	die_usage("--status must be pending, reserved, success, error or ignore (or errors, completed, ignored), got '%s'", v);
}

/* The options the per-key subcommands (clear, ignore, cancel, set) share:
 * TABLE (and, for ignore, KEY_JSON), --where COND, --all, --json; --status
 * for clear, --priority and --delay for set. */
typedef struct keyed_args {
	const char *table, *key, *where, *status;
	int all, json;
	long priority;
	double delay;
} keyed_args;

enum { K_STATUS = 1, K_WHERE, K_ALL, K_JSON, K_PRIORITY, K_DELAY };

static void keyed_parse(int argc, char **argv, const char *sub, const cli_option *opts, const char *help, int take_key,
			keyed_args *k)
{
	memset(k, 0, sizeof *k);
	k->priority = -1;
	k->delay = -1;
	cli_args a;
	cli_args_init(&a, argc, argv, opts, help);
	a.unknown_fmt = a.missing_fmt = "unknown or incomplete option %s";
	for (int o; (o = cli_next(&a)) != CLI_END;) {
		switch (o) {
		case K_STATUS: k->status = status_arg(a.arg); break;
		case K_WHERE: k->where = a.arg; check_where("--where", k->where); break;
		case K_ALL: k->all = 1; break;
		case K_JSON: k->json = 1; break;
		case K_PRIORITY: k->priority = parse_priority(a.opt, a.arg); break;
		case K_DELAY: k->delay = parse_double(a.opt, a.arg); check_value(a.opt, "delay", k->delay, a.arg); break;
		default:
			if (!k->table) k->table = a.arg;
			else if (take_key && !k->key) k->key = a.arg;
			else die_usage("jobs %s takes one TABLE%s", sub, take_key ? " and one KEY_JSON" : "");
		}
	}
	if (!k->table) die_usage("jobs %s needs a TABLE (see djc jobs --help)", sub);
	if (k->where && k->all) die_usage("jobs %s takes --where or --all, not both", sub);
	if (k->where && where_is_empty(k->where))
		die_usage("jobs %s: --where %s restricts nothing; to act on every job give --all (an empty restriction "
			  "never means all)", sub, k->where);
}

/* --delay: seconds from now, negative too (DataJoint's populate refreshes
 * with delay=-1: due at once whatever the clocks say), within what a delay
 * takes (check_value). */
static double parse_delay(const char *opt, const char *v)
{
	char *e;
	double x = strtod(v, &e);
	if (!*v || *e || x != x) die_usage("%s expects a number of seconds, got '%s'", opt, v);
	check_value(opt, "delay", x, v);
	return x;
}

int cmd_jobs_refresh(int argc, char **argv)
{
	static const char H[] =
		"usage: djc jobs refresh TABLE [--priority P] [--delay S] [--stale-timeout S]\n"
		"                              [--orphan-timeout S] [--where COND] [--json]\n"
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
		case PRIORITY: o.priority = parse_priority(a.opt, a.arg); break;
		case DELAY: o.delay = parse_delay(a.opt, a.arg); break;
		case STALE:
			o.stale_timeout = parse_double(a.opt, a.arg);
			check_value(a.opt, "stale_timeout", o.stale_timeout, a.arg);
			break;
		case ORPHAN:
			o.orphan_timeout = parse_double(a.opt, a.arg);
			check_value(a.opt, "orphan_timeout", o.orphan_timeout, a.arg);
			break;
		case WHERE: o.where_json = a.arg; check_where("--where", o.where_json); break;
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
			cli_print_json(json_pack("{s:o,s:I,s:I,s:I,s:I}", "table", cli_json_text(table), "added", (json_int_t)r.added,
						 "removed", (json_int_t)r.removed, "orphaned", (json_int_t)r.orphaned, "re_pended",
						 (json_int_t)r.re_pended));
		else printf("%s: added %ld, removed %ld, orphaned %ld, re_pended %ld\n", table, r.added, r.removed, r.orphaned, r.re_pended);
	}
	return cli_done(rc, c);
}

int cmd_jobs_clear(int argc, char **argv)
{
	static const char H[] =
		"usage: djc jobs clear TABLE [--status STATUS] [--where COND | --all] [--json]\n"
		"Delete jobs: those of a status, those of the restriction, or (--all) every one, of\n"
		"any status. Clearing errors makes their keys eligible again (the next refresh adds\n"
		"them); clearing ignore un-ignores. Their attempt history goes with them, unless\n"
		"their target row exists (then it is kept like a made job's: jobs.history_retention).\n";
	static const cli_option opts[] = {{"status", CLI_VALUE, K_STATUS, 0}, {"where", CLI_VALUE, K_WHERE, 0},
					  {"all", CLI_FLAG, K_ALL, 0}, {"json", CLI_FLAG, K_JSON, 0}, {NULL, 0, 0, 0}};
	keyed_args k;
	keyed_parse(argc, argv, "clear", opts, H, 0, &k);
	if (!k.status && !k.where && !k.all) die_usage("jobs clear needs --status STATUS, --where JSON or --all (every job)");
	djc_conn *c = cli_connect(CLI_EXISTING);
	long n = 0;
	int rc = djc_jobs_clear_ext(&n, c, k.table, k.status, k.where);
	if (!rc) {
		if (k.json) cli_print_json(json_pack("{s:o,s:I}", "table", cli_json_text(k.table), "cleared", (json_int_t)n));
		else printf("%s: cleared %ld %s%sjob%s\n", k.table, n, k.status ? k.status : "", k.status ? " " : "", n == 1 ? "" : "s");
	}
	return cli_done(rc, c);
}

int cmd_jobs_ignore(int argc, char **argv)
{
	static const char H[] =
		"usage: djc jobs ignore TABLE (KEY_JSON | --where COND | --all) [--json]\n"
		"Mark keys `ignore`: populate never makes them (djc jobs clear TABLE --status ignore\n"
		"undoes it). KEY_JSON is a key as the job listings print it; --where marks the jobs\n"
		"of the restriction and adds its keys of the key source that have no job; --all every\n"
		"job and key. A pending or reserved job is cancelled (a running make is stopped,\n"
		"nothing of it committed).\n";
	static const cli_option opts[] = {{"where", CLI_VALUE, K_WHERE, 0}, {"all", CLI_FLAG, K_ALL, 0},
					  {"json", CLI_FLAG, K_JSON, 0}, {NULL, 0, 0, 0}};
	keyed_args k;
	keyed_parse(argc, argv, "ignore", opts, H, 1, &k);
	if (k.key && (k.where || k.all)) die_usage("jobs ignore takes KEY_JSON, --where COND or --all, not two of them");
	if (!k.key && !k.where && !k.all) die_usage("jobs ignore needs KEY_JSON or --where COND (or --all: every job and key)");
	int rc;
	djc_conn *c;
	if (k.key) {
		djc_row *key = NULL;
		char *msg = NULL;
		if (djc_row_from_json(&key, k.key, &msg)) {
			fputs("djc: KEY_JSON: ", stderr);
			put_line(msg ? msg : "not a JSON object", stderr);
			fputc('\n', stderr);
			free(msg);
			return 2;
		}
		c = cli_connect(CLI_EXISTING);
		rc = djc_jobs_ignore(c, k.table, key);
		if (!rc) {
			if (k.json) cli_print_json(json_pack("{s:o,s:I}", "table", cli_json_text(k.table), "ignored", (json_int_t)1));
			else {
				printf("%s: ignoring ", k.table);
				put_line(k.key, stdout);
				printf("\n");
			}
		}
		djc_row_free(key);
	} else {
		c = cli_connect(CLI_EXISTING);
		long n = 0;
		rc = djc_jobs_ignore_ext(&n, c, k.table, k.where);
		if (!rc) {
			if (k.json) cli_print_json(json_pack("{s:o,s:I}", "table", cli_json_text(k.table), "ignored", (json_int_t)n));
			else printf("%s: ignoring %ld job%s\n", k.table, n, n == 1 ? "" : "s");
		}
	}
	return cli_done(rc, c);
}

int cmd_jobs_cancel(int argc, char **argv)
{
	static const char H[] =
		"usage: djc jobs cancel TABLE (--where COND | --all) [--json]\n"
		"Pending and reserved jobs of the restriction become ignore (last_end cancelled, the\n"
		"message naming who cancelled). A running make is stopped by its worker within one\n"
		"heartbeat (jobs.lease_timeout / 4) and nothing of it is committed. djc jobs clear\n"
		"TABLE --status ignore --where COND undoes it.\n";
	static const cli_option opts[] = {{"where", CLI_VALUE, K_WHERE, 0}, {"all", CLI_FLAG, K_ALL, 0},
					  {"json", CLI_FLAG, K_JSON, 0}, {NULL, 0, 0, 0}};
	keyed_args k;
	keyed_parse(argc, argv, "cancel", opts, H, 0, &k);
	if (!k.where && !k.all) die_usage("jobs cancel needs --where COND (or --all: every pending and reserved job)");
	djc_conn *c = cli_connect(CLI_EXISTING);
	long np = 0, nr = 0;
	int rc = djc_jobs_cancel(&np, &nr, c, k.table, k.where);
	if (!rc) {
		if (k.json)
			cli_print_json(json_pack("{s:o,s:I,s:I}", "table", cli_json_text(k.table), "pending", (json_int_t)np,
						 "reserved", (json_int_t)nr));
		else printf("%s: cancelled %ld pending and %ld reserved job%s\n", k.table, np, nr, np + nr == 1 ? "" : "s");
	}
	return cli_done(rc, c);
}

int cmd_jobs_set(int argc, char **argv)
{
	static const char H[] =
		"usage: djc jobs set TABLE (--where COND | --all) [--priority P] [--delay S] [--json]\n"
		"Re-prioritise (--priority, lower is more urgent) or reschedule (--delay: due S seconds\n"
		"from now) the pending jobs of the restriction.\n";
	static const cli_option opts[] = {{"where", CLI_VALUE, K_WHERE, 0}, {"all", CLI_FLAG, K_ALL, 0},
					  {"json", CLI_FLAG, K_JSON, 0}, {"priority", CLI_VALUE, K_PRIORITY, 0},
					  {"delay", CLI_VALUE, K_DELAY, 0}, {NULL, 0, 0, 0}};
	keyed_args k;
	keyed_parse(argc, argv, "set", opts, H, 0, &k);
	if (!k.where && !k.all) die_usage("jobs set needs --where COND (or --all: every pending job)");
	if (k.priority < 0 && k.delay < 0) die_usage("jobs set needs --priority P and/or --delay S");
	djc_conn *c = cli_connect(CLI_EXISTING);
	djc_jobs_set_options o = DJC_JOBS_SET_OPTIONS_INIT;
	o.priority = k.priority;
	o.delay = k.delay;
	long n = 0;
	int rc = djc_jobs_set(&n, c, k.table, k.where, &o);
	if (!rc) {
		if (k.json) cli_print_json(json_pack("{s:o,s:I}", "table", cli_json_text(k.table), "updated", (json_int_t)n));
		else printf("%s: updated %ld pending job%s\n", k.table, n, n == 1 ? "" : "s");
	}
	return cli_done(rc, c);
}

static long job_col(const djc_row *r, const char *name);

/* A job row as JSON (djc_row_to_json), or NULL when it does not parse. */
static json_t *row_json(const djc_row *r)
{
	char *s = djc_row_to_json(r);
	json_t *j = s ? json_loads(s, JSON_DECODE_ANY, NULL) : NULL;
	free(s);
	return j;
}

/* A jobs or history row as JSON for --json, its fencing token as a
 * string of digits: tokens use 63 bits, and JSON readers that hold
 * numbers as doubles (jq, JavaScript) would round them. */
static json_t *job_json(const djc_row *r)
{
	json_t *j = row_json(r);
	long k = job_col(r, "token");
	int64_t v;
	if (j && k >= 0 && djc_row_int(&v, r, (size_t)k) == DJC_OK) {
		char b[32];
		snprintf(b, sizeof b, "%" PRId64, v);
		json_object_set_new(j, djc_row_name(r, (size_t)k), json_string(b));
	}
	return j;
}

/* --json: one object, {"table":T,"status":S,"jobs":[{...},...]}, each job
 * the row as djc_row_to_json writes it (status null: every status). */
static void print_jobs_json(const djc_rowset *rs, const char *table, const char *status)
{
	json_t *jobs = json_array();
	for (size_t i = 0; i < djc_rowset_count(rs); i++) {
		json_t *j = job_json(djc_rowset_row(rs, i));
		json_array_append_new(jobs, j ? j : json_null());
	}
	cli_print_json(json_pack("{s:o,s:o,s:o}", "table", cli_json_text(table), "status",
				 status ? cli_json_text(status) : json_null(), "jobs", jobs));
}

/* The index of the jobs (or history) table's own column `name` in one of
 * its rows, or -1: `_name` when a key attribute has that name (the jobs
 * table's column steps aside: a key `status` makes the job's `_status`;
 * attribute names start with a letter, so `_name` is never a key
 * attribute's), else `name`. */
static long job_col(const djc_row *r, const char *name)
{
	char u[64];
	snprintf(u, sizeof u, "_%s", name);
	long k = djc_row_find(r, u);
	return k >= 0 ? k : djc_row_find(r, name);
}

/* Below a job's line, its error_stack (a make program's last stderr, or
 * what djc_jobs_error was given), one indented line per line of the stack:
 * a job's line starts with '{', so a reader (or grep '^{') tells them apart.
 * Nothing when the job has no stack. */
static void print_job_stack(const djc_row *r)
{
	long k = job_col(r, "error_stack");
	const char *t;
	if (k < 0 || djc_row_type(r, (size_t)k) == DJC_NULL || djc_row_text(&t, r, (size_t)k) != DJC_OK) return;
	size_t n = strlen(t);
	while (n && (t[n - 1] == '\n' || t[n - 1] == '\r')) n--;   /* no empty last line */
	if (!n) return;
	char *s = strndup(t, n);
	if (!s) return;
	fputs("    stack:\n", stdout);
	for (char *line = s, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next) *next++ = '\0';
		fputs("      ", stdout);
		put_line(line, stdout);   /* a tab or CR as a space: one line stays one line */
		fputc('\n', stdout);
	}
	free(s);
}

/* The key attributes of a jobs row (everything before its status column;
 * of a history row, before its attempt column) as JSON that `djc jobs
 * ignore TABLE KEY_JSON` takes back. */
static void print_key(const djc_row *r, const char *first_col)
{
	long st = job_col(r, first_col);
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
}

/* "  name=value" for each of the columns that is set (attempts only when
 * some failed). */
static void print_cols(const djc_row *r, const char *const *show)
{
	for (int s = 0; show[s]; s++) {
		long k = job_col(r, show[s]);
		if (k < 0 || djc_row_type(r, (size_t)k) == DJC_NULL) continue;
		const char *t;
		int64_t v;
		double f;
		if (djc_row_text(&t, r, (size_t)k) == DJC_OK) {
			printf("  %s=", show[s]);
			put_line(t, stdout);   /* a message's newlines would start a fake job line */
		} else if (djc_row_int(&v, r, (size_t)k) == DJC_OK) {
			if (!strcmp(show[s], "attempts") && v == 0) continue;
			printf("  %s=%" PRId64, show[s], v);
		} else if (djc_row_float(&f, r, (size_t)k) == DJC_OK)
			printf("  %s=%.3f", show[s], f);
	}
}

/* One line per job: its key, then the chosen columns as name=value
 * (scheduled_time only for a pending job: when a retry is due). */
static void print_jobs_rows(const djc_rowset *rs)
{
	static const char *const pending[] = {"status", "priority", "reservations", "attempts", "host", "pid", "reserved_time",
					      "completed_time", "scheduled_time", "last_end", "error_message", NULL};
	static const char *const other[] = {"status", "priority", "reservations", "attempts", "host", "pid", "reserved_time",
					    "completed_time", "last_end", "error_message", NULL};
	for (size_t i = 0; i < djc_rowset_count(rs); i++) {
		const djc_row *r = djc_rowset_row(rs, i);
		print_key(r, "status");
		const char *st = NULL;
		long k = job_col(r, "status");
		if (k >= 0) djc_row_text(&st, r, (size_t)k);
		print_cols(r, st && !strcmp(st, "pending") ? pending : other);
		printf("\n");
		print_job_stack(r);
	}
}

/* The attempts of one job, one line each. */
static void print_history(const djc_rowset *hs)
{
	static const char *const show[] = {"outcome", "host", "pid", "start_time", "end_time", "duration", "backoff", "message", NULL};
	printf("history (%zu attempt%s):\n", djc_rowset_count(hs), djc_rowset_count(hs) == 1 ? "" : "s");
	for (size_t i = 0; i < djc_rowset_count(hs); i++) {
		const djc_row *r = djc_rowset_row(hs, i);
		long k = job_col(r, "attempt");
		int64_t a = 0;
		if (k >= 0) djc_row_int(&a, r, (size_t)k);
		printf("  attempt %" PRId64 ":", a);
		print_cols(r, show);
		printf("\n");
	}
}

/* `djc jobs TABLE --key JSON`: one job and its attempts. */
static int show_job(djc_conn *c, const char *table, const char *key, int json)
{
	djc_row *k = NULL;
	char *msg = NULL;
	if (djc_row_from_json(&k, key, &msg)) {
		fputs("djc: --key: ", stderr);
		put_line(msg ? msg : "not a JSON object", stderr);
		fputc('\n', stderr);
		free(msg);
		return 2;
	}
	djc_rowset *rs = NULL, *hs = NULL;
	int rc = djc_jobs_history(&hs, c, table, k);
	if (!rc) rc = djc_jobs_list_ext(&rs, c, table, NULL, key);
	int code = 0;
	/* a job made and deleted (jobs.keep_completed off) has no row, but
	 * its history, when it had one, is kept (jobs.history_retention) */
	int have_job = !rc && djc_rowset_count(rs) > 0;
	if (!rc && !have_job && djc_rowset_count(hs) == 0) {
		fprintf(stderr, "djc: %s has no job with key ", table);
		put_line(key, stderr);
		fputc('\n', stderr);
		code = 2;
	} else if (!rc && json) {
		json_t *h = json_array();
		for (size_t i = 0; i < djc_rowset_count(hs); i++) {
			json_t *j = job_json(djc_rowset_row(hs, i));
			json_array_append_new(h, j ? j : json_null());
		}
		json_t *job = have_job ? job_json(djc_rowset_row(rs, 0)) : NULL;
		cli_print_json(json_pack("{s:o,s:o,s:o}", "table", cli_json_text(table), "job", job ? job : json_null(), "history", h));
	} else if (!rc) {
		if (have_job) print_jobs_rows(rs);
		else {
			print_key(djc_rowset_row(hs, 0), "attempt");
			printf("  (no job row: made and deleted; its history is kept for jobs.history_retention)\n");
		}
		print_history(hs);
	} else
		code = exit_for(rc, c);
	djc_rowset_free(rs);
	djc_rowset_free(hs);
	djc_row_free(k);
	return code;
}

/* The key of a jobs row as a JSON object (what print_key prints). */
static json_t *key_json(const djc_row *r)
{
	long st = job_col(r, "status");
	json_t *all = row_json(r), *key = json_object();
	for (long k = 0; k < st; k++) {
		json_t *v = all ? json_object_get(all, djc_row_name(r, (size_t)k)) : NULL;
		json_object_set(key, djc_row_name(r, (size_t)k), v ? v : json_null());
	}
	json_decref(all);
	return key;
}

/* The jobs of rs grouped by error_message, most frequent first: a JSON
 * array of {"message", "count", "first": the first job's key}. */
static json_t *group_messages(const djc_rowset *rs)
{
	json_t *groups = json_array();
	for (size_t i = 0; i < djc_rowset_count(rs); i++) {
		const djc_row *r = djc_rowset_row(rs, i);
		const char *m = NULL;
		long k = job_col(r, "error_message");
		if (k >= 0 && djc_row_type(r, (size_t)k) != DJC_NULL) djc_row_text(&m, r, (size_t)k);
		size_t g;
		json_t *gr, *found = NULL;
		json_array_foreach(groups, g, gr) {
			json_t *gm = json_object_get(gr, "message");
			if (m ? json_is_string(gm) && !strcmp(json_string_value(gm), m) : json_is_null(gm)) { found = gr; break; }
		}
		if (found) json_object_set_new(found, "count", json_integer(json_integer_value(json_object_get(found, "count")) + 1));
		else json_array_append_new(groups, json_pack("{s:o,s:I,s:o}", "message", m ? cli_json_text(m) : json_null(), "count",
							     (json_int_t)1, "first", key_json(r)));
	}
	/* most frequent first; equal counts keep the listing's order */
	size_t n = json_array_size(groups);
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0; j--) {
			json_t *a = json_array_get(groups, j - 1), *b = json_array_get(groups, j);
			if (json_integer_value(json_object_get(a, "count")) >= json_integer_value(json_object_get(b, "count"))) break;
			json_incref(a);
			json_array_set(groups, j - 1, b);
			json_array_set_new(groups, j, a);
		}
	return groups;
}

/* `djc jobs --status S` without a TABLE: the jobs of status S of every
 * computed and imported table, grouped by message with counts (56
 * identical failures are one line, not 56 stacks); the first key of each
 * group leads to its stack (djc jobs TABLE --key KEY). */
static int jobs_everywhere(djc_conn *c, const char *status, int json)
{
	char *g = NULL;
	int rc = djc_pipeline_json(&g, c);
	json_t *graph = rc ? NULL : json_loads(g, 0, NULL), *out = json_array(), *t;
	free(g);
	size_t i;
	long total = 0;
	json_array_foreach(json_object_get(graph, "tables"), i, t) {
		const char *tier = json_string_value(json_object_get(t, "tier")), *name = json_string_value(json_object_get(t, "name"));
		if (!tier || !name || (strcmp(tier, "computed") && strcmp(tier, "imported"))) continue;
		djc_rowset *rs = NULL;
		if ((rc = djc_jobs_list_ext(&rs, c, name, status, NULL))) break;
		if (djc_rowset_count(rs))
			json_array_append_new(out, json_pack("{s:o,s:I,s:o}", "table", cli_json_text(name), "count",
							     (json_int_t)djc_rowset_count(rs), "messages", group_messages(rs)));
		total += (long)djc_rowset_count(rs);
		djc_rowset_free(rs);
	}
	json_decref(graph);
	if (rc) { json_decref(out); return exit_for(rc, c); }
	if (json) {
		cli_print_json(json_pack("{s:o,s:o}", "status", cli_json_text(status), "tables", out));
		return 0;
	}
	if (!total) printf("no %s job in any table\n", status);
	json_t *e, *m;
	json_array_foreach(out, i, e) {
		size_t k;
		json_t *msgs = json_object_get(e, "messages");
		long n = (long)json_integer_value(json_object_get(e, "count"));
		printf("%s: %ld %s job%s, %zu message%s\n", json_string_value(json_object_get(e, "table")), n, status, n == 1 ? "" : "s",
		       json_array_size(msgs), json_array_size(msgs) == 1 ? "" : "s");
		json_array_foreach(msgs, k, m) {
			json_t *msg = json_object_get(m, "message");
			char *first = cli_json_dumps(json_object_get(m, "first"), 0);
			printf("  %6" JSON_INTEGER_FORMAT "  ", json_integer_value(json_object_get(m, "count")));
			put_line(json_is_string(msg) ? json_string_value(msg) : "(no message)", stdout);
			printf("  (first %s)\n", first ? first : "?");
			free(first);
		}
	}
	json_decref(out);
	return 0;
}

/* After a text listing of TABLE that found nothing: why, when it is not
 * plain (completed jobs are not kept; a direct populate records no job). */
static void empty_listing_note(djc_conn *c, const char *table, const char *status)
{
	int keep = 0;
	djc_config_get_bool(&keep, "jobs.keep_completed");
	djc_job_counts n;
	if (status && !strcmp(status, "success") && !keep)
		fprintf(stderr, "djc: note: completed jobs are not kept (a job's row is deleted when its make commits) "
				"unless jobs.keep_completed is true\n");
	else if (!djc_jobs_count(&n, c, table, NULL) && n.total == 0)
		fprintf(stderr, "djc: note: %s has no job at all: %sa populate without --reserve-jobs records no jobs (it "
				"printed its errors), and djc jobs refresh %s adds the missing keys as jobs\n", table,
			keep ? "" : "a job's row is deleted when its make commits (jobs.keep_completed is false), ", table);
}

int cmd_jobs(int argc, char **argv)
{
	enum { STATUS = 1, JSON, WHERE, KEY, ALL, COUNTS };
	static const cli_option opts[] = {{"status", CLI_VALUE, STATUS, 0}, {"json", CLI_FLAG, JSON, 0},
					  {"where", CLI_VALUE, WHERE, 0}, {"key", CLI_VALUE, KEY, 0},
					  {"all", CLI_FLAG, ALL, 0}, {"counts", CLI_FLAG, COUNTS, 0}, {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, JOBS_HELP);
	a.unknown_fmt = a.missing_fmt = "unknown or incomplete option %s";
	if (argc < 2) die_usage("jobs needs a TABLE, or --status STATUS (see djc jobs --help)");
	const char *table = NULL, *status = NULL, *where = NULL, *key = NULL;
	int json = 0, all = 0, counts = 0;
	for (int k; (k = cli_next(&a)) != CLI_END;) {
		switch (k) {
		case STATUS: status = status_arg(a.arg); break;
		case JSON: json = 1; break;
		case WHERE: where = a.arg; check_where("--where", where); break;
		case KEY: key = a.arg; check_json("--key", key); break;
		case ALL: all = 1; break;
		case COUNTS: counts = 1; break;
		default:
			if (!table) { table = a.arg; break; }
			/* `djc jobs refrsh T`: a mistyped subcommand, not two tables */
			const char *sub = cli_subcommand_near("jobs", table);
			if (sub) die_usage("jobs: unknown subcommand '%s'; did you mean '%s'?", table, sub);
			die_usage("jobs takes one TABLE (or refresh, clear, ignore, cancel, set)");
		}
	}
	if (!table && (!status || where || key || all || counts))
		die_usage("jobs needs a TABLE (or --status STATUS alone: those jobs of every table, grouped by message)");
	if (!table) {
		djc_conn *c = cli_connect(CLI_EXISTING);
		int code = jobs_everywhere(c, status, json);
		djc_close(c);
		return code;
	}
	if (key && (status || where || all || counts)) die_usage("jobs --key shows one job: no --status, --where, --all or --counts");
	if (status && all) die_usage("jobs takes --status or --all, not both");
	if (counts && (status || all)) die_usage("jobs --counts counts every status: no --status or --all");
	djc_conn *c = cli_connect(CLI_EXISTING);
	int rc = DJC_OK, code;
	if (key) {
		code = show_job(c, table, key, json);
		djc_close(c);
		return code;
	}
	if (status || all || (where && !counts)) {
		djc_rowset *rs = NULL;
		rc = djc_jobs_list_ext(&rs, c, table, status, where);
		if (!rc) {
			if (json) print_jobs_json(rs, table, status);
			else print_jobs_rows(rs);
			if (!json && !djc_rowset_count(rs)) empty_listing_note(c, table, status);
		}
		djc_rowset_free(rs);
	} else {
		djc_job_counts n;
		rc = djc_jobs_count(&n, c, table, where);
		if (!rc) {
			if (json)
				cli_print_json(json_pack("{s:o,s:I,s:I,s:I,s:I,s:I,s:I}", "table", cli_json_text(table), "pending",
							 (json_int_t)n.pending, "reserved", (json_int_t)n.reserved, "success",
							 (json_int_t)n.success, "error", (json_int_t)n.error, "ignore", (json_int_t)n.ignore,
							 "total", (json_int_t)n.total));
			else printf("%s jobs: pending %ld, reserved %ld, success %ld, error %ld, ignore %ld, total %ld\n", table,
				    n.pending, n.reserved, n.success, n.error, n.ignore, n.total);
		}
	}
	code = exit_for(rc, c);
	djc_close(c);
	return code;
}
