/* commit.c - the transitions that end a reservation: commit (-> success,
 * or the row deleted), fail (-> error), each fenced by the token inside the
 * transaction that writes make's rows (DESIGN invariant 2). */
#include "jobs.h"
#include "jobs_state.h"
#include "sql.h"
#include "util/config.h"
#include <stdlib.h>
#include <string.h>

void next_claim_drop(next_claim *next)
{
	if (!next) return;
	for (size_t i = 0; i < next->njobs; i++) djc_job_free(next->jobs[i]);
	free(next->jobs);
	next->jobs = NULL;
	next->njobs = 0;
}

static jctx job_ctx(const djc_job *job)
{
	jctx x = JCTX(job->t);
	x.key = job->key;
	return x;
}

int make_rows_insert(djc_conn *c, const table *target, table **tables, djc_row **rows, size_t n, int *taken)
{
	*taken = 0;
	/* upstream checked at commit: what make read is still what is there */
	if (n && tables[0] == target) {
		int rc = conn_reads_verify(c, target, rows[0]);
		if (rc) return rc;
	}
	for (size_t i = 0; i < n; i++) {
		size_t bad = 0;
		int rc = rows_insert(c, tables[i], &rows[i], 1, 0, NULL, &bad);
		if (!rc) continue;
		char *k = key_to_json(tables[i], rows[i], 0);
		/* only the first target row can collide with someone else's
		 * commit (a later one duplicates a row of this very make); a
		 * unique index other than the primary key is make's own error */
		*taken = rc == DJC_EDUPLICATE && tables[i] == target && i == 0;
		if (*taken)
			conn_fail(c, rc, "%s %s already exists", tables[i]->name, k);
		else if (rc == DB_EUNIQUE)
			conn_fail(c, rc, "row %s of %s repeats a value of a unique index: %s", k, tables[i]->name, c->db->err);
		else if (rc == DJC_EDUPLICATE)
			conn_fail(c, rc, "make produced a duplicate row %s for %s", k, tables[i]->name);
		else if (rc == DJC_EFOREIGN)
			conn_fail(c, rc, "row %s of %s references a missing parent row", k, tables[i]->name);
		else
			conn_fail(c, rc, "inserting %s into %s: %s", k, tables[i]->name, c->db->err);
		free(k);
		return rc == DB_EUNIQUE ? DJC_EDUPLICATE : rc;
	}
	return DJC_OK;
}

/* The fenced close of a job as success, in the caller's transaction:
 * close.delete, or close.success with jobs.keep_completed. *hit = rows. */
static int tx_close_success(djc_conn *c, djc_job *job, double duration, long *hit)
{
	jctx x = job_ctx(job);
	if (config_bool("jobs.keep_completed")) {
		val_t a[2] = {val_float(duration), val_int(job->token)};
		return jsql_count(c, &JS_CLOSE_SUCCESS, &x, a, 2, hit);
	}
	val_t a = val_int(job->token);
	return jsql_count(c, &JS_CLOSE_DELETE, &x, &a, 1, hit);
}

static int lost(djc_conn *c, const djc_job *job, const char *what)
{
	char *k = key_to_json(job->t, job->key, 1);
	int rc = conn_fail(c, DJC_ELOST, "reservation of %s %s was lost before %s (lease lapsed and the job was taken or reset); nothing committed",
			   job->t->name, k, what);
	free(k);
	return rc;
}

/* A commit as one db_batch: the fenced close of the k jobs of one claim
 * (it must match all k: DB_EEXPECT otherwise), make's rows table by table
 * in multi-row INSERTs (targets first), and, when next asks, the claim of
 * the next jobs. On PostgreSQL that is one pipeline: one round trip and
 * one commit; elsewhere the same statements in one transaction. Returns
 * DJC_OK with *res DONE (next filled) or LOST (nothing written), or an
 * error with *res UNKNOWN (the COMMIT's outcome is unknown) or FAILED
 * (nothing written: retry a retryable code; with *exact set, let the
 * one-statement-at-a-time path sort out which row is wrong or taken). */
static int commit_batch(djc_conn *c, djc_job **jobs, size_t k, table **tables, djc_row **rows, size_t n,
			double duration, next_claim *next, commit_result *res, int *exact)
{
	*res = COMMIT_FAILED;
	*exact = 0;
	table *t = jobs[0]->t;
	stmt_list l = {0};
	sb_t q = SB_INIT;
	pvec p = {0};
	int rc;
	/* 1. the fence */
	jctx x = JCTX(t);
	const djc_row **keys = NULL;
	if (k == 1) {
		x.key = jobs[0]->key;
		if (config_bool("jobs.keep_completed")) {
			val_t a[2] = {val_float(duration), val_int(jobs[0]->token)};
			rc = jsql_expand(c, &JS_CLOSE_SUCCESS, &x, a, 2, &q, &p);
		} else {
			val_t a = val_int(jobs[0]->token);
			rc = jsql_expand(c, &JS_CLOSE_DELETE, &x, &a, 1, &q, &p);
		}
	} else {
		keys = xcalloc(k, sizeof *keys);
		for (size_t i = 0; i < k; i++) keys[i] = jobs[i]->key;
		x.keys = keys;
		x.nkeys = k;
		val_t a = val_int(jobs[0]->token);
		rc = jsql_expand(c, &JS_CLOSE_MANY, &x, &a, 1, &q, &p);
	}
	free(keys);
	if (rc) { sb_free(&q); pvec_free(&p); return rc; }
	stmt_list_add(&l, &q, &p, (long)k);
	/* 2. the rows, table by table in order of first appearance */
	djc_row **sel = xcalloc(n ? n : 1, sizeof(djc_row *));
	char *done = xcalloc(n ? n : 1, 1);
	for (size_t i = 0; i < n; i++) {
		if (done[i]) continue;
		size_t m = 0;
		for (size_t j = i; j < n; j++)
			if (!done[j] && tables[j] == tables[i]) { sel[m++] = rows[j]; done[j] = 1; }
		rows_insert_stmts(c, tables[i], sel, m, 0, &l);
	}
	free(sel);
	free(done);
	/* 3. the next claim, unless this connection should look for lapsed
	 * leases first (then the caller claims on its own) */
	claim_build b;
	int claimed = next && next->n > 0 && !claim_lapsed_due(c, t, next->lease);
	if (claimed) {
		if ((rc = claim_build_init(c, t, next->where, next->max_priority, next->lease, next->n, &b))) {
			stmt_list_free(&l);
			return rc;
		}
		stmt_list_claim(&l, &b.due_claim);
	}
	db_res **out = xcalloc(l.n, sizeof *out);
	size_t failed = 0;
	rc = db_batch(c->db, stmt_list_items(&l), l.n, out, &failed);
	if (rc == DJC_OK) {
		*res = COMMIT_DONE;
		if (claimed) claim_parse(&b, out[l.n - 1], &next->jobs, &next->njobs);
	} else if (rc == DB_EEXPECT && failed == 0 && k == 1) {
		*res = COMMIT_LOST;
		lost(c, jobs[0], "commit");
		rc = DJC_OK;
	} else if (rc == DB_EEXPECT && failed == 0) {
		rc = conn_fail(c, DJC_ELOST, "a reservation of the group was lost");
	} else if (failed == l.n) {
		/* the COMMIT itself: with the connection gone, it may have taken
		 * effect; jobs_commit_outcome tells */
		if (rc == DJC_ECONN) *res = COMMIT_UNKNOWN;
		rc = conn_dbfail(c, rc, "commit");
	} else if (claimed && failed == l.n - 1 && rc != DJC_ECONN) {
		/* the claim failed (a deadlock, a busy server): commit without it */
		for (size_t i = 0; i < l.n; i++) db_res_free(out[i]);
		free(out);
		stmt_list_free(&l);
		claim_build_free(&b);
		return commit_batch(c, jobs, k, tables, rows, n, duration, NULL, res, exact);
	} else {
		*exact = rc != DJC_EBUSY && rc != DJC_ECONN;
		rc = conn_dbfail(c, rc, "commit");
	}
	for (size_t i = 0; i < l.n; i++) db_res_free(out[i]);
	free(out);
	stmt_list_free(&l);
	if (claimed) claim_build_free(&b);
	return rc;
}

/* A commit one statement at a time, after a batch failed on a row: it
 * names the row, and tells a target row made by someone else (taken) from
 * make's own mistakes. No next claim. */
static int commit_exact(djc_conn *c, djc_job *job, table **tables, djc_row **rows, size_t n, double duration,
			commit_result *res)
{
	*res = COMMIT_FAILED;
	int rc = db_begin(c->db);
	if (rc) return conn_dbfail(c, rc, "commit");
	long hit = 0;
	/* the fence first: it also locks the job row until COMMIT */
	if ((rc = tx_close_success(c, job, duration, &hit))) goto fail;
	if (!hit) {
		db_rollback(c->db);
		*res = COMMIT_LOST;
		lost(c, job, "commit");
		return DJC_OK;
	}
	int taken = 0;
	if ((rc = make_rows_insert(c, job->t, tables, rows, n, &taken))) {
		db_rollback(c->db);
		if (!taken) return rc;
		/* made by someone else (a populate without reservation, a direct
		 * insert): close the job as success, commit nothing of ours */
		if ((rc = db_begin(c->db))) return conn_dbfail(c, rc, "commit");
		if ((rc = tx_close_success(c, job, duration, &hit))) goto fail;
		if ((rc = db_commit(c->db))) { rc = conn_dbfail(c, rc, "commit"); goto fail; }
		*res = hit ? COMMIT_TAKEN : COMMIT_LOST;
		return DJC_OK;
	}
	if ((rc = db_commit(c->db))) {
		if (rc == DJC_ECONN) *res = COMMIT_UNKNOWN;
		rc = conn_dbfail(c, rc, "commit");
		db_rollback(c->db);
		return rc;
	}
	*res = COMMIT_DONE;
	return DJC_OK;
fail:
	db_rollback(c->db);
	return rc;
}

int jobs_commit(djc_conn *c, djc_job *job, table **tables, djc_row **rows, size_t n, double duration,
		next_claim *next, commit_result *res)
{
	if (next) { next->jobs = NULL; next->njobs = 0; }
	/* a make whose reads must be checked commits statement by statement:
	 * the check reads inside the transaction, which one batch cannot */
	if (n && tables[0] == job->t && conn_reads_pending(c, job->t, rows[0])) {
		int rc = commit_exact(c, job, tables, rows, n, duration, res);
		/* decided (or failed for good): forget; retried: check again */
		if (*res == COMMIT_DONE || *res == COMMIT_TAKEN || *res == COMMIT_LOST ||
		    (*res == COMMIT_FAILED && rc != DJC_EBUSY && rc != DJC_ECONN))
			conn_reads_forget(c, job->t, rows[0]);
		return rc;
	}
	int exact = 0;
	int rc = commit_batch(c, &job, 1, tables, rows, n, duration, next, res, &exact);
	if (!exact) return rc;
	return commit_exact(c, job, tables, rows, n, duration, res);
}

int jobs_commit_many(djc_conn *c, djc_job **jobs, size_t k, table **tables, djc_row **rows, size_t n,
		     next_claim *next, commit_result *res)
{
	*res = COMMIT_FAILED;
	if (next) { next->jobs = NULL; next->njobs = 0; }
	if (!k) { *res = COMMIT_DONE; return DJC_OK; }
	if (config_bool("jobs.keep_completed")) return DJC_EINVAL;   /* per-job durations: one by one */
	for (size_t i = 0; i < n; i++)   /* reads to check: one by one (jobs_commit) */
		if (tables[i] == jobs[0]->t && conn_reads_pending(c, tables[i], rows[i])) return DJC_EINVAL;
	int exact = 0;
	/* anything but DONE and UNKNOWN: the caller commits the jobs one by one */
	return commit_batch(c, jobs, k, tables, rows, n, 0, next, res, &exact);
}

int jobs_commit_outcome(djc_conn *c, djc_job *job, commit_result *res)
{
	*res = COMMIT_FAILED;
	jctx x = job_ctx(job);
	db_res *r = NULL;
	int rc = jsql_run(c, &JS_OUTCOME_JOB, &x, NULL, 0, &r);
	if (rc) goto out;
	if (r->nrows) {
		const char *st = db_cell_text(r, 0, 0);
		int64_t tok = db_cell_int(r, 0, 1);
		if (tok != job->token) *res = COMMIT_LOST;                   /* reset or taken: not ours */
		else if (st && !strcmp(st, "reserved")) *res = COMMIT_FAILED; /* still ours, not committed */
		else if (st && !strcmp(st, "success")) *res = COMMIT_DONE;    /* keep_completed: committed */
		else *res = COMMIT_LOST;
		goto out;
	}
	/* the job row is gone: deleted by our commit (keep_completed off), or
	 * by a commit of whoever took it after our lease lapsed, or cleared.
	 * The target row tells a commit from none; while we were renewing the
	 * lease nobody else could have taken the job, so the commit is ours
	 * (docs/leases.md: the one residual ambiguity). */
	db_res_free(r);
	r = NULL;
	if ((rc = jsql_run(c, &JS_OUTCOME_TARGET, &x, NULL, 0, &r))) goto out;
	*res = db_cell_int(r, 0, 0) > 0 ? COMMIT_DONE : COMMIT_LOST;
out:
	db_res_free(r);
	if (rc) return rc;
	if (*res == COMMIT_LOST) lost(c, job, "commit");
	return DJC_OK;
}

int jobs_close_made(djc_conn *c, djc_job *job, commit_result *res)
{
	*res = COMMIT_FAILED;
	int rc = db_begin(c->db);
	if (rc) return conn_dbfail(c, rc, "closing a job already made");
	long hit = 0;
	if ((rc = tx_close_success(c, job, 0, &hit))) { db_rollback(c->db); return rc; }
	if ((rc = db_commit(c->db))) {
		rc = conn_dbfail(c, rc, "closing a job already made");
		db_rollback(c->db);
		return rc;
	}
	*res = hit ? COMMIT_TAKEN : COMMIT_LOST;
	return DJC_OK;
}

int jobs_fail(djc_conn *c, djc_job *job, const char *message, const char *stack, double duration)
{
	jctx x = job_ctx(job);
	char *m = jobs_truncate(message ? message : "make failed");
	val_t a[4] = {val_float(duration), val_text(m), stack ? val_text(stack) : val_null(), val_int(job->token)};
	free(m);
	long hit = 0;
	int rc = jsql_count(c, &JS_FAIL, &x, a, 4, &hit);
	for (int i = 0; i < 4; i++) val_free(&a[i]);
	if (rc) return rc;
	if (!hit) return conn_fail(c, DJC_ELOST, "reservation lost before the error could be recorded");
	return DJC_OK;
}

int jobs_fail_pid(djc_conn *c, table *t, const char *host, long pid, const char *message, long *n)
{
	long hit = 0;
	jctx x = JCTX(t);
	char *m = jobs_truncate(message);
	val_t a[3] = {val_text(m), val_text(host), val_int(pid)};
	free(m);
	int rc = jsql_count(c, &JS_FAIL_PID, &x, a, 3, &hit);
	for (int i = 0; i < 3; i++) val_free(&a[i]);
	if (n) *n = hit;
	return rc;
}
