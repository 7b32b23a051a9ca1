/* commit.c - the transitions that end a reservation: commit (-> success,
 * or the row deleted), fail (-> error, or back to pending for a retry),
 * release of a stopped make (-> pending), each fenced by the token inside
 * one transaction (DESIGN invariant 2) that also writes or deletes the
 * job's history. */
#include "jobs.h"
#include "jobs_state.h"
#include "sql.h"
#include "util/config.h"
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

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

/* history.add for job (fenced), then history.trim when the job had rows
 * before (a first row needs none). *added = rows added (0: not ours). */
typedef struct hist_row {
	const char *outcome;
	double duration;
	double backoff;        /* seconds until the retry is due; -1: not retried */
	const char *message, *stack;   /* may be NULL */
} hist_row;

static int tx_history(djc_conn *c, djc_job *job, const hist_row *h, long *added)
{
	jctx x = job_ctx(job);
	val_t a[6] = {val_text(h->outcome), val_float(h->duration), val_float(h->backoff),
		      h->message ? val_text(h->message) : val_null(), h->stack ? val_text(h->stack) : val_null(), val_int(job->token)};
	int rc = jsql_count(c, &JS_HISTORY_ADD, &x, a, 6, added);
	for (int i = 0; i < 6; i++) val_free(&a[i]);
	if (!rc && *added && job->history) {
		val_t keep = val_int(HISTORY_KEEP);
		long n = 0;
		rc = jsql_count(c, &JS_HISTORY_TRIM, &x, &keep, 1, &n);
	}
	return rc;
}

/* The fenced close of a job as success, in the caller's transaction:
 * close.delete, or, with jobs.keep_completed, close.success. The attempt
 * is recorded (history.add) when `record` (make ran) and the job has
 * history, or with keep_completed: a job that needed several attempts
 * keeps its history after its row is deleted (history.expire ends it), and
 * one that never failed pays no statement for it. *hit = rows. */
static int tx_close_success(djc_conn *c, djc_job *job, double duration, int record, long *hit)
{
	jctx x = job_ctx(job);
	int keep = config_bool("jobs.keep_completed");
	long added = 0;
	int rc;
	/* before the close: history.add reads the job row, fenced */
	if (record && (keep || job->history) && (rc = tx_history(c, job, &(hist_row){"success", duration, -1, NULL, NULL}, &added))) return rc;
	if (keep) {
		val_t a[3] = {val_int(added), val_float(duration), val_int(job->token)};
		return jsql_count(c, &JS_CLOSE_SUCCESS, &x, a, 3, hit);
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

/* What one batched commit does: close the k jobs of one claim (their
 * make ran `duration` seconds; k == 1 only: a batch of several has no
 * history), insert the rows, and claim the next jobs (next: NULL, or n
 * jobs to claim). */
typedef struct batch {
	djc_job **jobs;
	size_t k;
	const commit_rows *rows;
	double duration;
	next_claim *next;
} batch;

/* The fence of one job, with its history: the attempt's row first
 * (history.add is fenced too: it reads the row while it is still ours)
 * with keep_completed, or when the claim said the job has history (so a
 * job that never failed pays no statement for it; one that did keeps its
 * history after its row is deleted), then history.trim if the job had
 * rows before (it reads the job row), then the close: close.success, or
 * close.delete. *fence: the index of the close in l. */
static int fence_one(djc_conn *c, const batch *b, stmt_list *l, sb_t *q, pvec *p, size_t *fence)
{
	djc_job *job = b->jobs[0];
	jctx x = JCTX(job->t);
	x.key = job->key;
	int keep = config_bool("jobs.keep_completed");
	int rc = DJC_OK;
	if (keep || job->history) {
		val_t h[6] = {val_text("success"), val_float(b->duration), val_float(-1), val_null(), val_null(), val_int(job->token)};
		rc = jsql_expand(c, &JS_HISTORY_ADD, &x, h, 6, q, p);
		for (int i = 0; i < 6; i++) val_free(&h[i]);
		if (!rc) stmt_list_add(l, q, p, -1);
		if (!rc && job->history) {
			val_t keepn = val_int(HISTORY_KEEP);
			if (!(rc = jsql_expand(c, &JS_HISTORY_TRIM, &x, &keepn, 1, q, p))) stmt_list_add(l, q, p, -1);
		}
	}
	if (!rc && keep) {
		/* history.add matched exactly when the fence does (the same
		 * token, the same transaction): one row more */
		val_t a[3] = {val_int(1), val_float(b->duration), val_int(job->token)};
		rc = jsql_expand(c, &JS_CLOSE_SUCCESS, &x, a, 3, q, p);
	} else if (!rc) {
		val_t a = val_int(job->token);
		rc = jsql_expand(c, &JS_CLOSE_DELETE, &x, &a, 1, q, p);
	}
	*fence = l->n;
	if (!rc) stmt_list_add(l, q, p, 1);
	return rc;
}

/* 1. the fence: the item that must match k rows (when it is short, the
 * reservation was lost): fence_one, or close.many for several jobs. */
static int fence_stmts(djc_conn *c, const batch *b, stmt_list *l, size_t *fence)
{
	sb_t q = SB_INIT;
	pvec p = {0};
	int rc;
	if (b->k == 1) rc = fence_one(c, b, l, &q, &p, fence);
	else {
		jctx x = JCTX(b->jobs[0]->t);
		const djc_row **keys = xcalloc(b->k, sizeof *keys);
		for (size_t i = 0; i < b->k; i++) keys[i] = b->jobs[i]->key;
		x.keys = keys;
		x.nkeys = b->k;
		val_t a = val_int(b->jobs[0]->token);
		rc = jsql_expand(c, &JS_CLOSE_MANY, &x, &a, 1, &q, &p);
		*fence = l->n;
		if (!rc) stmt_list_add(l, &q, &p, (long)b->k);
		free(keys);
	}
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

/* 2. the rows, table by table in order of first appearance */
static void row_stmts(djc_conn *c, const commit_rows *r, stmt_list *l)
{
	size_t n = r ? r->n : 0;
	djc_row **sel = xcalloc(n ? n : 1, sizeof(djc_row *));
	char *done = xcalloc(n ? n : 1, 1);
	for (size_t i = 0; i < n; i++) {
		if (done[i]) continue;
		size_t m = 0;
		for (size_t j = i; j < n; j++)
			if (!done[j] && r->tables[j] == r->tables[i]) { sel[m++] = r->rows[j]; done[j] = 1; }
		rows_insert_stmts(c, r->tables[i], sel, m, 0, l);
	}
	free(sel);
	free(done);
}

/* 3. whether the next claim goes with the commit. When this connection's
 * look for lapsed leases is due (at most once a second; after every job
 * whose make takes longer), lapsed.list looks first, a plain read before
 * the transaction: nothing lapsed (nearly always), the claim goes with
 * the commit as usual; some (or the read failed), the caller claims on
 * its own, whose look ends them first (lapsed.c). It used to leave every
 * such job to a claim of its own: two transactions per job for makes
 * longer than a second. */
static int claim_with_commit(djc_conn *c, table *t, const next_claim *next)
{
	if (!next || next->n <= 0) return 0;
	if (!claim_lapsed_due(c, t, next->lease)) return 1;
	jctx lx = {.t = t, .where = next->where, .max_priority = next->max_priority};
	db_res *lapsed = NULL;
	int ok = 1;
	if (jsql_run(c, &JS_LAPSED_LIST, &lx, NULL, 0, &lapsed) || lapsed->nrows) {
		ok = 0;
		jobs_tab_of(c, t)->lapsed_check = 0;   /* the caller's claim looks again */
	}
	db_res_free(lapsed);
	return ok;
}

/* Where the statements of a commit's batch are: the fence (the close of
 * the claim's jobs) at fence, the checks of the make's reads in [checks,
 * checks_end), the rows after them, the next claim last when claimed;
 * failed: the statement the batch failed at. */
typedef struct {
	size_t fence, checks, checks_end, n, failed;
	int claimed;
} batch_shape;

/* What commit_batch's failed batch (rc) means: *res, *exact and the error
 * to return, or *again when only the next claim failed (a deadlock, a
 * busy server): the caller commits again without it. */
static int batch_failed(djc_conn *c, const batch *bt, const batch_shape *s, int rc, commit_result *res, int *exact, int *again)
{
	if (rc == DB_EEXPECT && s->failed == s->fence && bt->k == 1) {
		*res = COMMIT_LOST;
		lost(c, bt->jobs[0], "commit");
		return DJC_OK;
	}
	if (rc == DB_EEXPECT && s->failed == s->fence)
		return conn_fail(c, DJC_ELOST, "a reservation of the group was lost");
	if (s->failed == s->n) {
		/* the COMMIT itself: with the connection gone, it may have taken
		 * effect; jobs_commit_outcome tells. So may the next claim that
		 * went with it, whose jobs nobody read: the caller hands them
		 * back by their token (jobs_release_claim) */
		if (rc == DJC_ECONN) *res = COMMIT_UNKNOWN;
		return conn_dbfail(c, rc, "commit");
	}
	if (s->failed >= s->checks && s->failed < s->checks_end && rc != DJC_ECONN && rc != DJC_EBUSY) {
		/* rows a make read have other versions now: changed, or only
		 * rewritten as they were; read_set_verify tells, statement by
		 * statement (commit_exact) */
		*exact = 1;
		return conn_fail(c, DJC_ECONFLICT, "commit: rows a make read have other versions");
	}
	if (s->claimed && s->failed == s->n - 1 && rc != DJC_ECONN) {
		*again = 1;
		return rc;
	}
	*exact = rc != DJC_EBUSY && rc != DJC_ECONN;
	return conn_dbfail(c, rc, "commit");
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
static int commit_batch(djc_conn *c, const batch *bt, commit_result *res, int *exact)
{
	*res = COMMIT_FAILED;
	*exact = 0;
	if (bt->rows && bt->rows->reads && !read_set_checkable(c, bt->rows->reads)) {
		*exact = 1;   /* its reads are checked statement by statement (no error to report) */
		return DJC_EINVAL;
	}
	table *t = bt->jobs[0]->t;
	stmt_list l = {0};
	batch_shape s = {0};
	int rc = fence_stmts(c, bt, &l, &s.fence);
	if (rc) { stmt_list_free(&l); return rc; }
	/* the make's reads checked after the fence (which locks the job rows),
	 * as commit_exact checks them: by their row versions, each check a
	 * statement of the batch */
	s.checks = l.n;
	if (bt->rows && bt->rows->reads && (rc = read_set_check_stmts(c, bt->rows->reads, &l))) {
		stmt_list_free(&l);
		*exact = 1;   /* statement by statement */
		return rc;
	}
	s.checks_end = l.n;
	row_stmts(c, bt->rows, &l);
	claim_build b;
	s.claimed = claim_with_commit(c, t, bt->next);
	if (s.claimed) {
		next_claim *next = bt->next;
		if ((rc = claim_build_init(c, t, next->where, next->max_priority, next->lease, next->n, &b))) {
			stmt_list_free(&l);
			return rc;
		}
		stmt_list_claim(&l, &b.due_claim);
	}
	s.n = l.n;
	db_res **out = xcalloc(l.n, sizeof *out);
	rc = db_batch(c->db, stmt_list_items(&l), l.n, out, &s.failed);
	int again = 0;
	if (rc == DJC_OK) {
		*res = COMMIT_DONE;
		if (s.claimed) {
			claim_parse(&b, out[l.n - 1], &bt->next->jobs, &bt->next->njobs);
			bt->next->token = b.token;
		}
	} else {
		rc = batch_failed(c, bt, &s, rc, res, exact, &again);
		if (*res == COMMIT_UNKNOWN && s.claimed) bt->next->token = b.token;
	}
	for (size_t i = 0; i < l.n; i++) db_res_free(out[i]);
	free(out);
	stmt_list_free(&l);
	if (s.claimed) claim_build_free(&b);
	if (!again) return rc;
	batch alone = *bt;
	alone.next = NULL;
	return commit_batch(c, &alone, res, exact);
}

/* A commit one statement at a time, after a batch failed on a row: it
 * names the row, and tells a target row made by someone else (taken) from
 * make's own mistakes. No next claim. */
static int commit_exact(djc_conn *c, djc_job *job, const commit_rows *r, double duration, commit_result *res)
{
	*res = COMMIT_FAILED;
	int rc = db_begin(c->db);
	if (rc) return conn_dbfail(c, rc, "commit");
	long hit = 0;
	/* the fence first: it also locks the job row until COMMIT */
	if ((rc = tx_close_success(c, job, duration, 1, &hit))) goto fail;
	if (!hit) {
		db_rollback(c->db);
		*res = COMMIT_LOST;
		lost(c, job, "commit");
		return DJC_OK;
	}
	int taken = 0;
	if ((rc = make_rows_insert(c, job->t, r, &taken))) {
		db_rollback(c->db);
		if (!taken) return rc;
		/* made by someone else (a populate without reservation, a direct
		 * insert): close the job as success, commit nothing of ours */
		if ((rc = db_begin(c->db))) return conn_dbfail(c, rc, "commit");
		if ((rc = tx_close_success(c, job, duration, 0, &hit))) goto fail;
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

int jobs_commit(djc_conn *c, djc_job *job, const commit_rows *r, double duration, next_claim *next, commit_result *res)
{
	if (next) { next->jobs = NULL; next->njobs = 0; next->token = 0; }
	/* a make whose reads must be checked: by their row versions inside
	 * the batch where the backend has them (read_set_check_stmts), else
	 * (or when a check failed) statement by statement, which reads them
	 * again and compares (a retry checks them again: the caller passes the
	 * same reads) */
	int exact = 0;
	batch b = {&job, 1, r, duration, next};
	int rc = commit_batch(c, &b, res, &exact);
	if (!exact) return rc;
	return commit_exact(c, job, r, duration, res);
}

int jobs_commit_many(djc_conn *c, djc_job **jobs, size_t k, const commit_rows *r, next_claim *next, commit_result *res)
{
	*res = COMMIT_FAILED;
	if (next) { next->jobs = NULL; next->njobs = 0; next->token = 0; }
	if (!k) { *res = COMMIT_DONE; return DJC_OK; }
	if (config_bool("jobs.keep_completed")) return DJC_EINVAL;   /* per-job durations: one by one */
	for (size_t i = 0; i < k; i++)   /* attempts to record: one by one (jobs_commit) */
		if (jobs[i]->history) return DJC_EINVAL;
	int exact = 0;
	/* anything but DONE and UNKNOWN: the caller commits the jobs one by one */
	batch b = {jobs, k, r, 0, next};
	return commit_batch(c, &b, res, &exact);
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
	 * The target row tells a commit from none. Whoever took the job ended
	 * our attempt first, and that end left a history row with our token
	 * (a lapse, an orphan reset, a cancel): then the row is theirs. None:
	 * the commit is ours. (Until 2026-12-07 a commit cut short by a server
	 * crash longer than the lease was counted by both workers when
	 * another took the job over and committed it before we asked.) */
	db_res_free(r);
	r = NULL;
	if ((rc = jsql_run(c, &JS_OUTCOME_TARGET, &x, NULL, 0, &r))) goto out;
	*res = db_cell_int(r, 0, 0) > 0 ? COMMIT_DONE : COMMIT_LOST;
	if (*res == COMMIT_DONE) {
		db_res_free(r);
		r = NULL;
		val_t tok = val_int(job->token);
		if ((rc = jsql_run(c, &JS_OUTCOME_ENDED, &x, &tok, 1, &r))) goto out;
		if (db_cell_int(r, 0, 0) > 0) *res = COMMIT_LOST;
	}
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
	if ((rc = tx_close_success(c, job, 0, 0, &hit))) { db_rollback(c->db); return rc; }
	if ((rc = db_commit(c->db))) {
		rc = conn_dbfail(c, rc, "closing a job already made");
		db_rollback(c->db);
		return rc;
	}
	*res = hit ? COMMIT_TAKEN : COMMIT_LOST;
	return DJC_OK;
}

/* A uniform random number in [0, 1). */
static double unit_random(void)
{
	uint64_t r = 0;
	if (getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r) r = (uint64_t)clock() * 2654435761u;
	return (double)(r >> 11) / 9007199254740992.0;
}

double jobs_backoff(long failures)
{
	double base = config_double("jobs.retry_delay"), cap = config_double("jobs.retry_delay_max");
	double d = base;
	for (long i = 1; i < failures && d < cap; i++) d *= 2;
	if (d > cap) d = cap;
	/* jitter in [d/2, d): workers that failed together do not come back
	 * together, and each delay is at least the whole of the previous one */
	return d / 2 + unit_random() * d / 2;
}

static const char *kind_name(fail_kind k)
{
	switch (k) {
	case FAIL_TIMEOUT: return "timeout";
	case FAIL_INTERRUPTED: return "interrupted";
	case FAIL_DIED: return "died";
	default: return "error";
	}
}

typedef struct fail_args {
	djc_job *job;
	jobs_failure *f;     /* its message truncated (jobs_truncate) */
	jobs_death *death;   /* FAIL_DIED through jobs_died, else NULL */
	fail_result res;
	double delay;
	long inc;            /* attempts used: 0 or 1 */
} fail_args;

/* A --processes child died making the job: its death counts against
 * jobs.max_lost (lost.count reads the deaths before, fenced), as a lapsed
 * lease laid on the job does (lapsed.c), and uses no attempt. *lost: the
 * deaths with this one. 1 when this one reaches the limit
 * (a->death->error is then the job's message), 0 when not; DJC_ELOST when
 * the job is no longer ours. */
static int died_too_often(djc_conn *c, fail_args *a, const jctx *x, long *lost_now)
{
	jobs_death *d = a->death;
	val_t tok = val_int(a->job->token);
	db_res *r = NULL;
	int rc = jsql_run(c, &JS_LOST_COUNT, x, &tok, 1, &r);
	if (!rc && !r->nrows) rc = conn_fail(c, DJC_ELOST, "reservation lost before the error could be recorded");
	long lost = rc ? 0 : (long)db_cell_int(r, 0, 0) + 1, max = config_long("jobs.max_lost");
	db_res_free(r);
	if (rc) return rc;
	*lost_now = lost;
	free(d->error);
	d->error = NULL;
	if (lost < max) return 0;
	char *m = xasprintf("worker died %ld time%s on this job; last: host %s, pid %ld, %s", lost, lost == 1 ? "" : "s",
			    d->host ? d->host : "?", d->pid, d->how ? d->how : "how unknown");
	d->error = jobs_truncate(m);
	free(m);
	return 1;
}

static int fail_body(djc_conn *c, void *arg)
{
	fail_args *a = arg;
	djc_job *job = a->job;
	jctx x = job_ctx(job);
	/* what becomes of the job: one whose worker died jobs.max_lost times
	 * is an error; one whose worker died fewer times comes back after the
	 * backoff of its lost count, without using an attempt (a lapsed lease
	 * does the same: DESIGN invariant 3, docs/jobs.md "Lost workers"); an
	 * interruption with retry_interrupted comes back at once without
	 * using an attempt; a failure with attempts left comes back after its
	 * backoff; else an error */
	int interrupted = a->f->kind == FAIL_INTERRUPTED, died = a->death != NULL;
	long lost_now = 0;
	int killed = died ? died_too_often(c, a, &x, &lost_now) : 0;
	if (killed < 0) return killed;
	const char *message = killed ? a->death->error : a->f->message;
	long inc = died ? 0 : 1, lost = died;
	double delay = -1;
	if (killed)
		a->res = FAILED_ERROR;
	else if (died) {
		a->res = FAILED_RETRY;
		delay = jobs_backoff(lost_now);
	} else if (interrupted && config_bool("jobs.retry_interrupted")) {
		a->res = FAILED_REPENDED;
		inc = 0;
		delay = 0;
	} else if (!interrupted && job->attempts + 1 < config_long("jobs.max_attempts")) {
		a->res = FAILED_RETRY;
		delay = jobs_backoff(job->attempts + 1);
	} else
		a->res = FAILED_ERROR;
	a->delay = delay > 0 ? delay : 0;
	a->inc = inc;
	long added = 0, hit = 0;
	hist_row h = {kind_name(a->f->kind), a->f->duration, a->res == FAILED_RETRY ? delay : -1, message, a->f->stack};
	int rc = tx_history(c, job, &h, &added);
	if (rc) return rc;
	if (a->res == FAILED_ERROR) {
		val_t v[6] = {val_int(inc), val_int(lost), val_float(a->f->duration), val_text(message),
			      a->f->stack ? val_text(a->f->stack) : val_null(), val_int(job->token)};
		rc = jsql_count(c, &JS_FAIL, &x, v, 6, &hit);
		for (int i = 0; i < 6; i++) val_free(&v[i]);
	} else {
		const char *end = died ? "worker died" : interrupted ? "interrupted" : "retry";
		val_t v[10] = {val_int(inc), val_int(lost), val_int(lost), val_float(delay), val_float(delay), val_float(a->f->duration),
			       val_text(message), a->f->stack ? val_text(a->f->stack) : val_null(), val_text(end), val_int(job->token)};
		rc = jsql_count(c, &JS_RETRY, &x, v, 10, &hit);
		for (int i = 0; i < 10; i++) val_free(&v[i]);
	}
	if (!rc && !hit) rc = conn_fail(c, DJC_ELOST, "reservation lost before the error could be recorded");
	return rc;
}

/* jobs_fail and jobs_died: one transaction, not made again after a
 * COMMIT whose outcome is unknown (it would find the job no longer ours). */
static int fail_run(djc_conn *c, fail_args *a, fail_result *res, double *delay)
{
	int rc = conn_tx(c, "recording the error", 0, fail_body, a);
	if (!rc) {
		a->job->history = 1;
		a->job->attempts += a->inc;
	}
	if (res) *res = a->res;
	if (delay) *delay = a->delay;
	return rc;
}

int jobs_fail(djc_conn *c, djc_job *job, const jobs_failure *f, fail_result *res, double *delay)
{
	char *m = jobs_truncate(f->message ? f->message : "make failed");
	char *st = utf8_clean_dup(f->stack);   /* as the message: a server's UTF-8 column */
	jobs_failure tf = {f->kind, m, st, f->duration};
	fail_args a = {job, &tf, NULL, FAILED_ERROR, 0, 0};
	int rc = fail_run(c, &a, res, delay);
	free(m);
	free(st);
	return rc;
}

int jobs_died(djc_conn *c, djc_job *job, jobs_death *d, fail_result *res, double *delay)
{
	d->error = NULL;
	char *m = jobs_truncate(d->message ? d->message : "its worker process died");
	jobs_failure tf = {FAIL_DIED, m, NULL, 0};
	fail_args a = {job, &tf, d, FAILED_ERROR, 0, 0};
	int rc = fail_run(c, &a, res, delay);
	free(m);
	if (rc || a.res != FAILED_ERROR) {
		free(d->error);
		d->error = NULL;
	}
	return rc;
}

typedef struct release_args { djc_job *job; const char *message; } release_args;

static int release_body(djc_conn *c, void *arg)
{
	release_args *a = arg;
	jctx x = job_ctx(a->job);
	long added = 0, hit = 0;
	int rc = tx_history(c, a->job, &(hist_row){"released", 0, -1, a->message, NULL}, &added);
	val_t tok = val_int(a->job->token);
	if (!rc) rc = jsql_count(c, &JS_RELEASE_ONE, &x, &tok, 1, &hit);
	if (!rc && !hit) rc = conn_fail(c, DJC_ELOST, "reservation lost before the job could be handed back");
	return rc;
}

int jobs_release_job(djc_conn *c, djc_job *job, const char *message)
{
	release_args a = {job, message};
	return conn_tx(c, "handing a job back", 0, release_body, &a);
}

int jobs_lost_why(djc_conn *c, djc_job *job, int *cancelled, char **message)
{
	*cancelled = 0;
	if (message) *message = NULL;
	jctx x = job_ctx(job);
	db_res *r = NULL;
	int rc = jsql_run(c, &JS_LOST_WHY, &x, NULL, 0, &r);
	if (!rc && r->nrows) {
		const char *st = db_cell_text(r, 0, 0);
		/* ignore under our own token: cancel and ignore keep the holder's token */
		if (st && !strcmp(st, "ignore") && db_cell_int(r, 0, 1) == job->token) {
			*cancelled = 1;
			const char *m = db_cell_text(r, 0, 2);
			if (message && m) *message = xstrdup(m);
		}
	}
	db_res_free(r);
	return rc;
}
