/* admin.c - the public jobs API (include/djc.h): reserving and completing
 * one job at a time, renewing its lease, cancel, ignore, clear, set,
 * counts, listing, history. A statement of them that fails on an adopted
 * table DataJoint dropped or changed (or a table it reads) is told as such
 * (adopt_failure_explain), as populate and progress tell it. */
#include "jobs.h"
#include "sql.h"
#include "util/config.h"
#include "table/opts.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int jobs_table(djc_conn *c, const char *name, table **t)
{
	int rc = conn_table(c, name, t);
	if (rc) return rc;
	return jobs_ensure(c, *t);
}

const djc_row *djc_job_key(const djc_job *job) { return job ? job->key : NULL; }
int64_t djc_job_token(const djc_job *job) { return job ? job->token : 0; }
int djc_job_attempt(const djc_job *job) { return job ? (int)job->attempts + 1 : 0; }
void djc_job_free(djc_job *job)
{
	if (!job) return;
	djc_row_free(job->key);
	free(job);
}

/* A bound on the priority as populate's (-1: none), or DJC_EINVAL naming it:
 * -5 read as "any" would reserve what the caller did not ask for. */
static int max_priority_check(djc_conn *c, const char *what, long max_priority)
{
	const char *lim;
	if (max_priority != -1 && (lim = config_limit("priority", (double)max_priority)))
		return conn_fail(c, DJC_EINVAL, "%s: max_priority must be %s (or -1: any), got %ld", what, lim, max_priority);
	return DJC_OK;
}

int djc_jobs_reserve(djc_job **out, djc_conn *c, const char *name, const char *where, long max_priority)
{
	if (!out) return conn_fail(c, DJC_EINVAL, "djc_jobs_reserve: out is NULL");
	*out = NULL;
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	if ((rc = max_priority_check(c, "jobs reserve", max_priority))) return rc;
	for (;;) {
		djc_job **jobs = NULL;
		size_t n = 0;
		rc = jobs_claim(c, t, &(claim_want){where, max_priority, config_double("jobs.lease_timeout"), 1}, &jobs, &n);
		if (rc) return rc;
		if (!n) return conn_fail(c, DJC_ENOTFOUND, "no job of %s is ready to reserve", t->name);
		djc_job *job = jobs[0];
		free(jobs);
		if (!job->made) {
			*out = job;
			return DJC_OK;
		}
		/* its target row exists already: close it, take the next */
		commit_result res;
		rc = jobs_close_made(c, job, &res);
		djc_job_free(job);
		if (rc) return rc;
	}
}

int djc_jobs_renew(djc_conn *c, djc_job *job)
{
	if (!job) return conn_fail(c, DJC_EINVAL, "no job (NULL)");
	long held = 0;
	int rc = jobs_hold(c, job, config_double("jobs.lease_timeout"), &held);
	if (rc) return rc;
	if (!held) {
		char *k = key_to_json(job->t, job->key, 1);
		rc = conn_fail(c, DJC_ELOST, "reservation of %s %s was lost (lease lapsed and the job was taken or reset)",
			       job->t->name, k);
		free(k);
	}
	return rc;
}

int djc_jobs_complete(djc_conn *c, djc_job *job, const djc_row *const *rows, size_t n, double duration)
{
	if (!job) return conn_fail(c, DJC_EINVAL, "no job (NULL)");
	if (n && !rows) return conn_fail(c, DJC_EINVAL, "%zu rows announced, none given (NULL)", n);
	for (size_t i = 0; i < n; i++)
		if (!rows[i]) return conn_fail(c, DJC_EINVAL, "row %zu is NULL", i + 1);
	djc_row **prep = xcalloc(n ? n : 1, sizeof(djc_row *));
	table **tabs = xcalloc(n ? n : 1, sizeof(table *));
	int rc = DJC_OK;
	size_t k = 0;
	for (; k < n; k++) {
		char *msg = NULL;
		tabs[k] = job->t;
		if ((rc = row_prepare(c, job->t, rows[k], job->key, &prep[k], &msg))) {
			rc = conn_fail(c, rc, "row %zu: %s", k + 1, msg);
			free(msg);
			break;
		}
	}
	if (!rc) {
		commit_result res;
		rc = jobs_commit(c, job, &(commit_rows){tabs, prep, n, NULL}, duration, NULL, &res);
		if (!rc && res == COMMIT_LOST) rc = DJC_ELOST;   /* message set by jobs_commit */
		else if (!rc && res == COMMIT_TAKEN) {
			char *kj = key_to_json(job->t, job->key, 1);
			rc = conn_fail(c, DJC_EDUPLICATE, "%s %s already exists (made by someone else); the job is closed", job->t->name, kj);
			free(kj);
		}
	}
	for (size_t i = 0; i < k; i++) djc_row_free(prep[i]);
	free(prep);
	free(tabs);
	return rc;
}

int djc_jobs_error(djc_conn *c, djc_job *job, const char *message, const char *stack)
{
	if (!job) return conn_fail(c, DJC_EINVAL, "no job (NULL)");
	return jobs_fail(c, job, &(jobs_failure){FAIL_ERROR, message, stack, 0}, NULL, NULL);
}

/* --------------------------------------------------------- statuses */

/* The status a name stands for: a status, or DataJoint's view name
 * (errors, completed, ignored); NULL for anything else. */
static const char *status_of(const char *name)
{
	static const char *const map[][2] = {
		{"pending", "pending"}, {"reserved", "reserved"}, {"success", "success"}, {"error", "error"},
		{"ignore", "ignore"}, {"errors", "error"}, {"completed", "success"}, {"ignored", "ignore"},
	};
	for (size_t i = 0; name && i < sizeof map / sizeof *map; i++)
		if (!strcmp(name, map[i][0])) return map[i][1];
	return NULL;
}

static int bad_status(djc_conn *c, const char *status)
{
	return conn_fail(c, DJC_EINVAL, "unknown job status '%s' (pending, reserved, success, error, ignore; "
			 "or errors, completed, ignored)", status ? status : "");
}

/* The key of one job of t: exactly its key-source attributes, typed.
 * DJC_EINVAL with a message naming the problem. */
static int job_key(djc_conn *c, table *t, const djc_row *key, djc_row **out)
{
	*out = NULL;
	if (!key) return conn_fail(c, DJC_EINVAL, "no key (NULL)");
	djc_row *k = djc_row_new();
	int rc;
	for (size_t i = 0; i < key->n; i++) {
		attr *a = table_attr(t, key->names[i]);
		int src = 0;
		for (size_t s = 0; a && s < t->nsrc; s++) if (&t->attrs[t->src[s]] == a) src = 1;
		if (!src) {
			djc_row_free(k);
			return conn_fail(c, DJC_EINVAL, "'%s' is not a key attribute of %s's jobs", key->names[i], t->name);
		}
		val_t v;
		char *msg = NULL;
		if (value_in(a, &key->vals[i], &v, &msg)) {
			rc = conn_fail(c, DJC_EINVAL, "key: %s", msg);
			free(msg);
			djc_row_free(k);
			return rc;
		}
		row_put(k, a->name, &v);
	}
	for (size_t s = 0; s < t->nsrc; s++)
		if (!row_get(k, t->attrs[t->src[s]].name)) {
			djc_row_free(k);
			return conn_fail(c, DJC_EINVAL, "key lacks attribute '%s' of %s", t->attrs[t->src[s]].name, t->name);
		}
	*out = k;
	return DJC_OK;
}

/* Check a restriction on t's key attributes before a transaction uses it:
 * a typo is DJC_EINVAL, never "everything". */
static int where_ok(djc_conn *c, table *t, const char *where)
{
	if (!where) return DJC_OK;
	sb_t q = SB_INIT;
	pvec p = {0};
	int rc = where_build(c, t, where, NULL, 1, &q, &p);
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

/* "user@host (pid N)": who cancels or ignores, for the jobs' message. */
static char *who(const char *verb)
{
	return xasprintf("%s by %s@%s (pid %ld)", verb, jobs_user(), jobs_host(), (long)getpid());
}

/* ----------------------------------------------------- cancel, ignore */

/* The pending and reserved jobs of x.where become ignore, the reserved
 * ones recorded in their history (statements cancel.*). *pending and
 * *reserved count them. */
static int tx_cancel(djc_conn *c, jctx *x, const char *message, const char *last_end, long *pending, long *reserved)
{
	long marked = 0, total = 0;
	*pending = *reserved = 0;
	int rc = jsql_count(c, &JS_CANCEL_MARK, x, NULL, 0, &marked);
	if (rc || !marked) return rc;
	val_t h[2] = {val_text("cancelled"), val_text(message)};
	rc = jsql_count(c, &JS_HISTORY_MARKED, x, h, 2, reserved);
	val_free(&h[0]);
	val_free(&h[1]);
	if (rc) return rc;
	val_t v[2] = {val_text(message), val_text(last_end)};
	rc = jsql_count(c, &JS_CANCEL, x, v, 2, &total);
	val_free(&v[0]);
	val_free(&v[1]);
	*pending = total - *reserved;
	return rc;
}

typedef struct cancel_args { table *t; const char *where; char *message; long pending, reserved; } cancel_args;

static int cancel_body(djc_conn *c, void *arg)
{
	cancel_args *a = arg;
	jctx x = JCTX(a->t);
	x.where = a->where;
	return tx_cancel(c, &x, a->message, "cancelled", &a->pending, &a->reserved);
}

int djc_jobs_cancel(long *pending, long *reserved, djc_conn *c, const char *name, const char *where_json)
{
	if (pending) *pending = 0;
	if (reserved) *reserved = 0;
	table *t;
	int rc = jobs_table(c, name, &t);
	if (!rc) rc = where_ok(c, t, where_json);
	if (rc) return rc;
	cancel_args a = {t, where_json, who("cancelled"), 0, 0};
	/* idempotent: a second run finds those jobs ignore already */
	rc = adopt_failure_explain(c, t, conn_tx(c, "cancel", TX_IDEMPOTENT, cancel_body, &a));
	free(a.message);
	if (!rc && pending) *pending = a.pending;
	if (!rc && reserved) *reserved = a.reserved;
	return rc;
}

typedef struct ignore_args { table *t; const char *where; const djc_row *key; char *message; long n; } ignore_args;

static int ignore_body(djc_conn *c, void *arg)
{
	ignore_args *a = arg;
	jctx x = JCTX(a->t);
	x.where = a->where;
	long p = 0, r = 0, upd = 0, add = 0;
	a->n = 0;
	/* error, success (and ignore) ones; then pending and reserved ones as
	 * a cancel does (a running make stops) */
	int rc = jsql_count(c, &JS_IGNORE_UPDATE, &x, NULL, 0, &upd);
	if (!rc) rc = tx_cancel(c, &x, a->message, "ignored", &p, &r);
	if (rc) return rc;
	val_t v[3] = {val_int(config_long("jobs.default_priority")), val_text(jobs_user()), val_text(jobs_host())};
	if (a->key && p + r + upd == 0) {
		/* one key without a job: DataJoint inserts it, in the key source or not */
		x.key = a->key;
		rc = jsql_count(c, &JS_IGNORE_INSERT, &x, v, 3, &add);
	} else if (!a->key)
		rc = jsql_count(c, &JS_IGNORE_ADD, &x, v, 3, &add);
	for (int i = 0; i < 3; i++) val_free(&v[i]);
	a->n = p + r + upd + add;
	return rc;
}

int djc_jobs_ignore(djc_conn *c, const char *name, const djc_row *key)
{
	if (!key) return conn_fail(c, DJC_EINVAL, "no key (NULL)");
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	djc_row *k = NULL;
	if ((rc = job_key(c, t, key, &k))) return rc;
	/* the key as a restriction: the statements are those of --where */
	sb_t w = SB_INIT;
	row_to_json(&w, t, k);
	ignore_args a = {t, sb_str(&w), k, who("ignored"), 0};
	rc = adopt_failure_explain(c, t, conn_tx(c, "ignore", TX_IDEMPOTENT, ignore_body, &a));
	free(a.message);
	sb_free(&w);
	djc_row_free(k);
	return rc;
}

int djc_jobs_ignore_ext(long *n, djc_conn *c, const char *name, const char *where_json)
{
	if (n) *n = 0;
	table *t;
	int rc = jobs_table(c, name, &t);
	if (!rc) rc = where_ok(c, t, where_json);
	if (rc) return rc;
	ignore_args a = {t, where_json, NULL, who("ignored"), 0};
	rc = adopt_failure_explain(c, t, conn_tx(c, "ignore", TX_IDEMPOTENT, ignore_body, &a));
	free(a.message);
	if (!rc && n) *n = a.n;
	return rc;
}

/* ------------------------------------------------- clear, set, list */

typedef struct clear_args { table *t; const char *status, *where; long n; } clear_args;

static int clear_body(djc_conn *c, void *arg)
{
	clear_args *a = arg;
	jctx x = JCTX(a->t);
	x.status = a->status;
	x.where = a->where;
	long swept = 0;
	int rc = jsql_count(c, &JS_CLEAR, &x, NULL, 0, &a->n);
	/* the history of the jobs that went */
	if (!rc && a->n) rc = jsql_count(c, &JS_HISTORY_SWEEP, &x, NULL, 0, &swept);
	return rc;
}

int djc_jobs_clear_ext(long *n, djc_conn *c, const char *name, const char *status, const char *where_json)
{
	if (n) *n = 0;
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	const char *st = status ? status_of(status) : NULL;
	if (status && !st) return bad_status(c, status);
	if ((rc = where_ok(c, t, where_json))) return rc;
	clear_args a = {t, st, where_json, 0};
	rc = adopt_failure_explain(c, t, conn_tx(c, "clear", TX_IDEMPOTENT, clear_body, &a));
	if (!rc && n) *n = a.n;
	return rc;
}

int djc_jobs_clear(long *n, djc_conn *c, const char *name, const char *status)
{
	if (n) *n = 0;
	if (!status_of(status)) {
		/* the table first: an unknown table is the better message */
		table *t;
		int rc = jobs_table(c, name, &t);
		return rc ? rc : bad_status(c, status);
	}
	return djc_jobs_clear_ext(n, c, name, status, NULL);
}

typedef struct set_args { table *t; const char *where; long priority; double delay; long n; } set_args;

static int set_body(djc_conn *c, void *arg)
{
	set_args *a = arg;
	jctx x = JCTX(a->t);
	x.where = a->where;
	long n1 = 0, n2 = 0;
	int rc = DJC_OK;
	a->n = 0;
	if (a->priority >= 0) {
		val_t p = val_int(a->priority);
		rc = jsql_count(c, &JS_SET_PRIORITY, &x, &p, 1, &n1);
	}
	if (!rc && a->delay >= 0) {
		val_t d[2] = {val_float(a->delay), val_float(a->delay)};
		rc = jsql_count(c, &JS_SET_DELAY, &x, d, 2, &n2);
	}
	a->n = n1 > n2 ? n1 : n2;
	return rc;
}

int djc_jobs_set(long *n, djc_conn *c, const char *name, const char *where_json, const djc_jobs_set_options *o)
{
	if (n) *n = 0;
	if (!o) return conn_fail(c, DJC_EINVAL, "no jobs set options (NULL)");
	if (OPTS_VERSION(c, "jobs set", o, 1, JOBS_SET)) return DJC_EINVAL;
	const char *what;
	if (o->priority == -1 && o->delay == -1)
		return conn_fail(c, DJC_EINVAL, "jobs set: nothing to set (give a priority >= 0 or a delay >= 0)");
	if (o->priority != -1 && (what = config_limit("priority", (double)o->priority)))
		return conn_fail(c, DJC_EINVAL, "jobs set: priority must be %s (or -1: unchanged), got %ld", what, o->priority);
	if (o->delay != -1 && ((what = config_limit("delay", o->delay)) || o->delay < 0))
		return conn_fail(c, DJC_EINVAL, "jobs set: delay must be a number of seconds from 0 to 1e9 (or -1: unchanged), got %g",
				 o->delay);
	table *t;
	int rc = jobs_table(c, name, &t);
	if (!rc) rc = where_ok(c, t, where_json);
	if (rc) return rc;
	set_args a = {t, where_json, o->priority, o->delay >= 0 ? o->delay : -1, 0};
	rc = adopt_failure_explain(c, t, conn_tx(c, "jobs set", TX_IDEMPOTENT, set_body, &a));
	if (!rc && n) *n = a.n;
	return rc;
}

int djc_jobs_count(djc_job_counts *out, djc_conn *c, const char *name, const char *where_json)
{
	memset(out, 0, sizeof *out);
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	jctx x = JCTX(t);
	x.where = where_json;
	db_res *r = NULL;
	if ((rc = jsql_run(c, &JS_COUNTS, &x, NULL, 0, &r))) return adopt_failure_explain(c, t, rc);
	for (size_t i = 0; i < r->nrows; i++) {
		const char *s = db_cell_text(r, i, 0);
		long n = (long)db_cell_int(r, i, 1);
		if (!s) continue;
		if (!strcmp(s, "pending")) out->pending = n;
		else if (!strcmp(s, "reserved")) out->reserved = n;
		else if (!strcmp(s, "success")) out->success = n;
		else if (!strcmp(s, "error")) out->error = n;
		else if (!strcmp(s, "ignore")) out->ignore = n;
		out->total += n;
	}
	db_res_free(r);
	return DJC_OK;
}

/* Seconds since the epoch of a database time text, UTC ("2026-12-04
 * 16:32:15.328"); -1 when it does not read as one. */
static double utc_seconds(const char *s)
{
	struct tm tm = {0};
	double sec = 0;
	if (!s || sscanf(s, "%d-%d-%d%*[ T]%d:%d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	return (double)timegm(&tm) + sec;
}

int djc_jobs_waiting(djc_jobs_wait *out, djc_conn *c, const char *name, const char *where_json, long max_priority)
{
	if (!out) return conn_fail(c, DJC_EINVAL, "djc_jobs_waiting: out is NULL");
	memset(out, 0, sizeof *out);
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	if ((rc = max_priority_check(c, "jobs waiting", max_priority))) return rc;
	jctx x = {.t = t, .where = where_json, .max_priority = max_priority};
	db_res *r = NULL;
	if ((rc = jsql_run(c, &JS_NOT_DUE, &x, NULL, 0, &r))) return adopt_failure_explain(c, t, rc);
	out->later = (long)db_cell_int(r, 0, 0);
	const char *first = db_cell_text(r, 0, 1), *now = db_cell_text(r, 0, 2);
	if (out->later && first) {
		snprintf(out->first_due, sizeof out->first_due, "%s", first);
		double f = utc_seconds(first), n = utc_seconds(now);
		out->first_due_in = f >= 0 && n >= 0 && f > n ? f - n : 0;
	}
	db_res_free(r);
	if (max_priority >= 0) {
		long all = 0, mine = 0;
		if ((rc = jobs_claimable_count(c, t, where_json, -1, &all)) ||
		    (rc = jobs_claimable_count(c, t, where_json, max_priority, &mine)))
			return adopt_failure_explain(c, t, rc);
		out->above_priority = all > mine ? all - mine : 0;
	}
	return DJC_OK;
}

int djc_jobs_counts(long counts[5], djc_conn *c, const char *name)
{
	djc_job_counts n;
	int rc = djc_jobs_count(&n, c, name, NULL);
	counts[0] = n.pending;
	counts[1] = n.reserved;
	counts[2] = n.success;
	counts[3] = n.error;
	counts[4] = n.ignore;
	return rc;
}

/* Rows of a jobs or history result, typed: the key attributes, then cols. */
static djc_rowset *typed_rows(table *t, db_res *r, const jcol *cols)
{
	djc_rowset *rs = rowset_new();
	for (size_t i = 0; i < r->nrows; i++) {
		djc_row *row = djc_row_new();
		for (size_t k = 0; k < r->ncols; k++) {
			val_t v;
			if (k < t->nsrc) value_out(&t->attrs[t->src[k]], db_cell(r, i, k), &v);
			else {
				const jcol *jc = &cols[k - t->nsrc];
				attr a = {.name = (char *)jc->name, .type = {jc->type, jc->p, 0, NULL, 0}};
				value_out(&a, db_cell(r, i, k), &v);
			}
			row_put(row, r->cols[k], &v);
		}
		rowset_push(rs, row);
	}
	return rs;
}

int djc_jobs_list_ext(djc_rowset **out, djc_conn *c, const char *name, const char *status, const char *where_json)
{
	*out = NULL;
	const char *st = status ? status_of(status) : NULL;
	if (status && !st) return bad_status(c, status);
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	jctx x = JCTX(t);
	x.where = where_json;
	val_t s = val_text(st ? st : "");
	db_res *r = NULL;
	rc = st ? jsql_run(c, &JS_LIST_STATUS, &x, &s, 1, &r) : jsql_run(c, &JS_LIST, &x, NULL, 0, &r);
	val_free(&s);
	if (rc) return adopt_failure_explain(c, t, rc);
	*out = typed_rows(t, r, JOB_COLS);
	db_res_free(r);
	return DJC_OK;
}

int djc_jobs_list(djc_rowset **out, djc_conn *c, const char *name, const char *status)
{
	return djc_jobs_list_ext(out, c, name, status, NULL);
}

int djc_jobs_history(djc_rowset **out, djc_conn *c, const char *name, const djc_row *key)
{
	*out = NULL;
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	djc_row *k = NULL;
	if ((rc = job_key(c, t, key, &k))) return rc;
	jctx x = JCTX(t);
	x.key = k;
	db_res *r = NULL;
	rc = adopt_failure_explain(c, t, jsql_run(c, &JS_HISTORY_LIST, &x, NULL, 0, &r));
	if (!rc) *out = typed_rows(t, r, HIST_COLS);
	db_res_free(r);
	djc_row_free(k);
	return rc;
}

/* The names before the API's convention (djc.h): deprecated, removed in 0.2. */
int djc_jobs_ignore_where(long *n, djc_conn *c, const char *name, const char *where_json)
{
	return djc_jobs_ignore_ext(n, c, name, where_json);
}

int djc_jobs_clear_where(long *n, djc_conn *c, const char *name, const char *status, const char *where_json)
{
	return djc_jobs_clear_ext(n, c, name, status, where_json);
}

int djc_jobs_list_where(djc_rowset **out, djc_conn *c, const char *name, const char *status, const char *where_json)
{
	return djc_jobs_list_ext(out, c, name, status, where_json);
}
