/* admin.c - the public jobs API (include/djc.h): reserving and completing
 * one job at a time, renewing its lease, ignore, clear, counts, listing. */
#include "jobs.h"
#include "sql.h"
#include "util/config.h"
#include <stdlib.h>
#include <string.h>

static int jobs_table(djc_conn *c, const char *name, table **t)
{
	int rc = conn_table(c, name, t);
	if (rc) return rc;
	return jobs_ensure(c, *t);
}

const djc_row *djc_job_key(const djc_job *job) { return job ? job->key : NULL; }
int64_t djc_job_token(const djc_job *job) { return job ? job->token : 0; }
void djc_job_free(djc_job *job)
{
	if (!job) return;
	djc_row_free(job->key);
	free(job);
}

int djc_jobs_reserve(djc_job **out, djc_conn *c, const char *name, const char *where, long max_priority)
{
	*out = NULL;
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	for (;;) {
		djc_job **jobs = NULL;
		size_t n = 0;
		rc = jobs_claim(c, t, where, max_priority, config_double("jobs.lease_timeout"), 1, &jobs, &n);
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
		rc = jobs_commit(c, job, tabs, prep, n, duration, NULL, &res);
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
	return jobs_fail(c, job, message, stack, 0);
}

/* ------------------------------------------------------------ ignore */

typedef struct ignore_args { table *t; djc_row *key; } ignore_args;

static int ignore_body(djc_conn *c, void *arg)
{
	ignore_args *a = arg;
	jctx x = JCTX(a->t);
	x.key = a->key;
	long hit = 0;
	int rc = jsql_count(c, &JS_IGNORE_UPDATE, &x, NULL, 0, &hit);
	if (rc || hit) return rc;
	val_t v[3] = {val_int(config_long("jobs.default_priority")), val_text(jobs_user()), val_text(jobs_host())};
	rc = jsql_run(c, &JS_IGNORE_INSERT, &x, v, 3, NULL);
	for (int i = 0; i < 3; i++) val_free(&v[i]);
	return rc;
}

int djc_jobs_ignore(djc_conn *c, const char *name, const djc_row *key)
{
	if (!key) return conn_fail(c, DJC_EINVAL, "no key (NULL)");
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	/* the key must be exactly the key-source attributes, typed */
	djc_row *k = djc_row_new();
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
	ignore_args a = {t, k};
	rc = conn_tx(c, "ignore", TX_IDEMPOTENT, ignore_body, &a);
	djc_row_free(k);
	return rc;
}

/* ------------------------------------------------------ clear, list */

static int status_ok(const char *status)
{
	static const char *ok[] = {"pending", "reserved", "success", "error", "ignore", NULL};
	for (int i = 0; ok[i]; i++) if (status && !strcmp(status, ok[i])) return 1;
	return 0;
}

typedef struct clear_args { table *t; const char *status; long n; } clear_args;

static int clear_body(djc_conn *c, void *arg)
{
	clear_args *a = arg;
	jctx x = JCTX(a->t);
	val_t s = val_text(a->status);
	int rc = jsql_count(c, &JS_CLEAR, &x, &s, 1, &a->n);
	val_free(&s);
	return rc;
}

int djc_jobs_clear(long *n, djc_conn *c, const char *name, const char *status)
{
	if (n) *n = 0;
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	if (!status_ok(status))
		return conn_fail(c, DJC_EINVAL, "unknown job status '%s' (pending, reserved, success, error, ignore)", status ? status : "");
	clear_args a = {t, status, 0};
	rc = conn_tx(c, "clear", TX_IDEMPOTENT, clear_body, &a);
	if (!rc && n) *n = a.n;
	return rc;
}

int djc_jobs_counts(long counts[5], djc_conn *c, const char *name)
{
	memset(counts, 0, 5 * sizeof(long));
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	jctx x = JCTX(t);
	db_res *r = NULL;
	if ((rc = jsql_run(c, &JS_COUNTS, &x, NULL, 0, &r))) return rc;
	static const char *st[] = {"pending", "reserved", "success", "error", "ignore"};
	for (size_t i = 0; i < r->nrows; i++) {
		const char *s = db_cell_text(r, i, 0);
		for (int k = 0; k < 5; k++) if (s && !strcmp(s, st[k])) counts[k] = (long)db_cell_int(r, i, 1);
	}
	db_res_free(r);
	return DJC_OK;
}

int djc_jobs_list(djc_rowset **out, djc_conn *c, const char *name, const char *status)
{
	*out = NULL;
	if (status && !status_ok(status))
		return conn_fail(c, DJC_EINVAL, "unknown job status '%s' (pending, reserved, success, error, ignore)", status);
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	jctx x = JCTX(t);
	val_t s = val_text(status ? status : "");
	db_res *r = NULL;
	rc = status ? jsql_run(c, &JS_LIST_STATUS, &x, &s, 1, &r) : jsql_run(c, &JS_LIST, &x, NULL, 0, &r);
	val_free(&s);
	if (rc) return rc;
	djc_rowset *rs = rowset_new();
	for (size_t i = 0; i < r->nrows; i++) {
		djc_row *row = djc_row_new();
		for (size_t k = 0; k < r->ncols; k++) {
			val_t v;
			if (k < t->nsrc) value_out(&t->attrs[t->src[k]], db_cell(r, i, k), &v);
			else {
				const jcol *jc = &JOB_COLS[k - t->nsrc];
				attr a = {.name = (char *)jc->name, .type = {jc->type, jc->p, 0, NULL, 0}};
				value_out(&a, db_cell(r, i, k), &v);
			}
			row_put(row, r->cols[k], &v);
		}
		rowset_push(rs, row);
	}
	db_res_free(r);
	*out = rs;
	return DJC_OK;
}
