/* populate.c - populate a computed/imported table: direct mode (keys =
 * (key_source & where) - target) and distributed mode (reserve jobs one
 * atomic claim at a time), in this process or in N worker processes that
 * take work dynamically. make runs outside any transaction; its rows are
 * committed in one short transaction (fenced by the job's token when
 * reserving). A heartbeat thread keeps a running job's lease alive and
 * notices when it was lost. */
#include "populate.h"
#include "progress.h"
#include "util/config.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROCS 256

typedef struct shared {
	atomic_long next;        /* direct mode: next key index */
	atomic_long calls;       /* makes started */
	atomic_long success, errors, skipped, lost;
	atomic_int stop;         /* stop taking work (error without suppress_errors) */
} shared;

typedef struct worker {
	djc_conn *c;
	table *t;
	const djc_populate_options *o;
	char *const *argv;
	shared *sh;
	djc_populate_result *res;
	int outfd;                /* error reports to the parent, or -1 */
	progress *prog;           /* single-process progress bar, or NULL */
	/* heartbeat */
	pthread_t hb;
	int hb_on;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int64_t token;
	atomic_int lost;
	int quit;
	double lease;
	djc_conn *hbc;
	/* watchdog: when the last renewal that proved the lease began (or the
	 * hold started); a lease not proved for a whole lease period may be
	 * taken by another worker, so the make is stopped */
	pthread_t wd;
	int wd_on;
	double proved;
	int64_t proved_token;
} worker;

void djc_populate_options_init(djc_populate_options *o)
{
	djc_populate_options d = DJC_POPULATE_OPTIONS_INIT;
	*o = d;
}

void djc_populate_result_free(djc_populate_result *r)
{
	if (!r) return;
	for (size_t i = 0; i < r->n_errors; i++) { free(r->errors[i].key_json); free(r->errors[i].message); }
	free(r->errors);
	free(r);
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void add_error(djc_populate_result *r, const char *key, const char *msg)
{
	r->errors = xrealloc(r->errors, (r->n_errors + 1) * sizeof *r->errors);
	r->errors[r->n_errors].key_json = xstrdup(key);
	r->errors[r->n_errors].message = xstrdup(msg ? msg : "make failed");
	r->n_errors++;
}

/* A line to the parent; a pipe write of a whole line, retried on EINTR. */
static void write_all(int fd, const sb_t *b)
{
	size_t off = 0;
	while (off < b->len) {
		ssize_t n = write(fd, b->s + off, b->len - off);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) break;
		off += (size_t)n;
	}
}

static void report_error(worker *w, const djc_row *key, const char *msg)
{
	char *k = key ? key_to_json(w->t, key, 1) : xstrdup("{}");
	atomic_fetch_add(&w->sh->errors, 1);
	if (w->outfd >= 0) {
		/* one JSON line to the parent */
		sb_t b = SB_INIT;
		sb_add(&b, "{\"key\":");
		json_quote(&b, k, strlen(k));
		sb_add(&b, ",\"message\":");
		json_quote(&b, msg ? msg : "make failed", strlen(msg ? msg : "make failed"));
		sb_add(&b, "}\n");
		write_all(w->outfd, &b);
		sb_free(&b);
	} else
		add_error(w->res, k, msg);
	free(k);
	if (!w->o->suppress_errors) atomic_store(&w->sh->stop, 1);
}

/* Tell the parent which job this worker child is making, so that if the
 * child dies of a signal the parent records that job (and only it) as the
 * make's failure and hands the rest of the child's claim back. */
static void report_making(worker *w, djc_job *job)
{
	char *k = key_to_json(w->t, job->key, 1);
	sb_t b = SB_INIT;
	sb_add(&b, "{\"making\":");
	json_quote(&b, k, strlen(k));
	sb_printf(&b, ",\"token\":\"%lld\"}\n", (long long)job->token);
	free(k);
	write_all(w->outfd, &b);
	sb_free(&b);
}

static void tick(worker *w, int final)
{
	if (w->prog)
		progress_update(w->prog, atomic_load(&w->sh->success) + atomic_load(&w->sh->errors) + atomic_load(&w->sh->skipped),
				atomic_load(&w->sh->errors), final);
}

static int should_stop(worker *w)
{
	return populate_signal || atomic_load(&w->sh->stop);
}

/* Claim a make call under max_calls; 0 when the budget is spent. */
static int take_call(worker *w)
{
	long prev = atomic_fetch_add(&w->sh->calls, 1);
	if (w->o->max_calls > 0 && prev >= w->o->max_calls) return 0;
	return 1;
}

static int run_make(worker *w, const djc_row *key, staged *st, make_result *mr)
{
	if (w->o->make) return make_callback(w->c, w->t, key, w->o->make, w->o->payload, st, mr);
	return make_program(w->c, w->t, key, w->argv, make_stop_check, &w->lost, st, mr);
}

/* ------------------------------------------------------------ heartbeat */

static void wait_for(worker *w, double secs)
{
	if (secs > 3600) secs = 3600;   /* callers loop; keeps the deadline within time_t */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	double until = (double)ts.tv_sec + ts.tv_nsec / 1e9 + secs;
	ts.tv_sec = (time_t)until;
	ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
	pthread_cond_timedwait(&w->cv, &w->mu, &ts);
}

/* Renew the lease every lease/4 on the heartbeat's own connection. The
 * renewal runs without the mutex, so a renewal stuck on a dead network
 * never blocks the worker; a renewal that finds no row (taken, reset)
 * sets `lost`, which stops the make program. Failed renewals are simply
 * tried again next period (the driver reconnects). */
static void *hb_main(void *arg)
{
	worker *w = arg;
	double period = w->lease / 4;
	if (period < 0.05) period = 0.05;
	pthread_mutex_lock(&w->mu);
	while (!w->quit) {
		wait_for(w, period);
		if (w->quit) break;
		if (!w->token) continue;
		int64_t tok = w->token;
		pthread_mutex_unlock(&w->mu);
		double t0 = mono();
		long held = 0;
		int rc = jobs_renew(w->hbc, w->t, tok, w->lease, &held);
		pthread_mutex_lock(&w->mu);
		if (w->token != tok) continue;        /* the worker moved on to another claim */
		if (rc == DJC_OK && held == 0) w->lost = 1;   /* taken or reset: stop the make */
		else if (rc == DJC_OK && t0 > w->proved) w->proved = t0;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* The watchdog: a lease that no renewal has proved for a whole lease period
 * may already belong to someone else (network cut, database down, renewal
 * stuck): stop the make, as the worker that takes the job over starts its
 * own. The commit stays fenced either way. */
static void *wd_main(void *arg)
{
	worker *w = arg;
	double period = w->lease / 20;
	if (period < 0.02) period = 0.02;
	if (period > 0.5) period = 0.5;
	pthread_mutex_lock(&w->mu);
	while (!w->quit) {
		wait_for(w, period);
		if (w->quit) break;
		if (w->token && !w->lost && mono() - w->proved > w->lease) w->lost = 2;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static int hb_start(worker *w)
{
	w->lease = config_double("jobs.lease_timeout");
	if (w->lease <= 0) w->lease = 60;
	int rc = djc_open(&w->hbc, w->c->url, w->c->schema);
	if (rc) {
		conn_fail(w->c, rc, "heartbeat connection: %s", djc_error_last(w->hbc));
		djc_close(w->hbc);
		w->hbc = NULL;
		return rc;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->quit = 0;
	w->token = 0;
	w->proved = mono();
	if (pthread_create(&w->hb, NULL, hb_main, w)) {
		djc_close(w->hbc);
		w->hbc = NULL;
		return conn_fail(w->c, DJC_ERROR, "cannot start the heartbeat thread");
	}
	w->hb_on = 1;
	w->wd_on = pthread_create(&w->wd, NULL, wd_main, w) == 0;
	return DJC_OK;
}

static void hb_stop(worker *w)
{
	if (!w->hb_on) return;
	pthread_mutex_lock(&w->mu);
	w->quit = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->hb, NULL);
	if (w->wd_on) pthread_join(w->wd, NULL);
	w->wd_on = 0;
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	djc_close(w->hbc);
	w->hbc = NULL;
	w->hb_on = 0;
}

static void hb_hold(worker *w, int64_t token)
{
	pthread_mutex_lock(&w->mu);
	w->token = token;
	w->lost = 0;
	if (token != w->proved_token) w->proved = mono();   /* the claim just proved it */
	w->proved_token = token;
	pthread_mutex_unlock(&w->mu);
}

/* ------------------------------------------------------------- direct */

static int commit_direct(worker *w, staged *st)
{
	djc_conn *c = w->c;
	c->taken = 0;
	int rc = db_begin(c->db);
	if (rc) return conn_dbfail(c, rc, "commit");
	if ((rc = make_rows_insert(c, w->t, st->tables, st->rows, st->n))) {
		db_rollback(c->db);
		return rc;
	}
	rc = db_commit(c->db);
	if (rc) { rc = conn_dbfail(c, rc, "commit"); db_rollback(c->db); }
	return rc;
}

static void work_direct(worker *w, djc_rowset *keys)
{
	for (;;) {
		if (should_stop(w)) break;
		long i = atomic_fetch_add(&w->sh->next, 1);
		if (i >= (long)keys->n) break;
		if (!take_call(w)) break;
		const djc_row *key = keys->rows[i];
		staged st = {0};
		make_result mr;
		if (run_make(w, key, &st, &mr) == DJC_OK) {
			int rc = commit_direct(w, &st);
			if (rc == DJC_OK) atomic_fetch_add(&w->sh->success, 1);
			else if (rc == DJC_EDUPLICATE && w->c->taken) atomic_fetch_add(&w->sh->skipped, 1);
			else report_error(w, key, w->c->err);
		} else
			report_error(w, key, mr.message);
		staged_free(&st);
		make_result_free(&mr);
		tick(w, 0);
		if (populate_signal) break;
	}
}

/* ------------------------------------------------------------ reserved */

/* Database faults (connection lost, deadlock, serialization failure,
 * busy) are retried with exponential backoff (50 ms doubling to 2 s) for
 * at most max(60 s, 4 leases); the drivers reconnect between transactions.
 * retry_wait returns 0 when the budget is spent (or a signal came). */
typedef struct retry { double start, delay; } retry;

static int retryable(int rc) { return rc == DJC_EBUSY || rc == DJC_ECONN; }

static int retry_wait(worker *w, retry *r)
{
	double now = mono(), window = 4 * w->lease;
	if (window < 60) window = 60;
	if (r->start == 0) { r->start = now; r->delay = 0.05; }
	if (now - r->start > window || populate_signal) return 0;
	usleep((useconds_t)(r->delay * 1e6));
	r->delay = r->delay * 2 > 2 ? 2 : r->delay * 2;
	return 1;
}

/* Commit a job's rows, fenced by its token, retrying faults. When the
 * connection went during COMMIT itself, the outcome is looked up before
 * anything is retried: a commit is never reported that did not happen,
 * and never made twice. */
static int commit_job(worker *w, djc_job *job, staged *st, double dur)
{
	retry r = {0, 0};
	for (;;) {
		job->commit_unknown = 0;
		int rc = jobs_commit(w->c, job, st->tables, st->rows, st->n, dur);
		while (rc == DJC_ECONN && job->commit_unknown) {
			int o = jobs_commit_outcome(w->c, job);
			if (o == DJC_OK || o == DJC_ELOST) return o;
			if (o == 1) { job->commit_unknown = 0; break; }   /* not committed: commit again */
			if (!retryable(o) || !retry_wait(w, &r)) return rc;
		}
		if (!retryable(rc) || !retry_wait(w, &r)) return rc;
	}
}

static int fail_job(worker *w, djc_job *job, const char *msg, const char *stack, double dur)
{
	retry r = {0, 0};
	int rc;
	while (retryable(rc = jobs_fail(w->c, job, msg, stack, dur)) && retry_wait(w, &r)) {}
	return rc;
}

/* Commit one finished job and count the outcome. */
static void finish_one(worker *w, djc_job *job, staged *st, double dur)
{
	int rc = commit_job(w, job, st, dur);
	if (rc == DJC_OK) atomic_fetch_add(&w->sh->success, 1);
	else if (rc == DJC_ELOST) atomic_fetch_add(&w->sh->lost, 1);
	else if (rc == DJC_EDUPLICATE && w->c->taken) atomic_fetch_add(&w->sh->skipped, 1);
	else {
		char *msg = xstrdup(w->c->err);
		fail_job(w, job, msg, NULL, dur);
		report_error(w, job->key, msg);
		free(msg);
	}
}

/* Finished jobs of one claim waiting to be committed together. */
typedef struct group {
	djc_job **jobs;
	staged *st;
	double *dur;
	size_t n;
	double first;   /* when the oldest was finished */
} group;

/* Commit the group in one transaction; when that fails (a lost job, a
 * duplicate, a fault) fall back to one transaction per job, which sorts
 * each out exactly as without grouping. */
static void group_flush(worker *w, group *g)
{
	if (!g->n) return;
	int done = 0;
	if (g->n > 1) {
		size_t nrows = 0;
		for (size_t i = 0; i < g->n; i++) nrows += g->st[i].n;
		table **tabs = xcalloc(nrows, sizeof(table *));
		djc_row **rows = xcalloc(nrows, sizeof(djc_row *));
		size_t k = 0;
		for (size_t i = 0; i < g->n; i++)
			for (size_t j = 0; j < g->st[i].n; j++) { tabs[k] = g->st[i].tables[j]; rows[k++] = g->st[i].rows[j]; }
		retry r = {0, 0};
		int unknown = 0, rc;
		while (retryable(rc = jobs_commit_many(w->c, g->jobs, g->n, tabs, rows, nrows, &unknown)) && !unknown &&
		       retry_wait(w, &r)) {}
		free(tabs);
		free(rows);
		if (rc == DJC_OK) {
			atomic_fetch_add(&w->sh->success, (long)g->n);
			done = 1;
		} else if (unknown) {
			/* the COMMIT may have happened: ask, job by job */
			for (size_t i = 0; i < g->n; i++) {
				int o;
				retry r2 = {0, 0};
				while (retryable(o = jobs_commit_outcome(w->c, g->jobs[i])) && retry_wait(w, &r2)) {}
				if (o == DJC_OK) atomic_fetch_add(&w->sh->success, 1);
				else if (o == DJC_ELOST) atomic_fetch_add(&w->sh->lost, 1);
				else finish_one(w, g->jobs[i], &g->st[i], g->dur[i]);
			}
			done = 1;
		}
	}
	if (!done)
		for (size_t i = 0; i < g->n; i++) finish_one(w, g->jobs[i], &g->st[i], g->dur[i]);
	for (size_t i = 0; i < g->n; i++) staged_free(&g->st[i]);
	g->n = 0;
	tick(w, 0);
}

static void work_reserved(worker *w)
{
	long batch = config_long("jobs.reserve_batch");
	if (batch < 1) batch = 1;
	if (batch > 1000) batch = 1000;
	if (w->o->max_calls > 0 && batch > w->o->max_calls) batch = w->o->max_calls;
	/* with batches, short makes commit together: at most a batch, and
	 * nothing finished waits more than 0.2 s */
	group g = {xcalloc((size_t)batch, sizeof(djc_job *)), xcalloc((size_t)batch, sizeof(staged)),
		   xcalloc((size_t)batch, sizeof(double)), 0, 0};
	retry cr = {0, 0};
	int empty_claims = 0;
	while (!should_stop(w)) {
		if (w->o->max_calls > 0 && atomic_load(&w->sh->calls) >= w->o->max_calls) break;
		djc_job **jobs = NULL;
		size_t n = 0;
		int rc = jobs_claim(w->c, w->t, w->o->where_json, w->o->priority, w->lease, batch, &jobs, &n);
		if (rc) {
			if (retryable(rc) && retry_wait(w, &cr)) continue;
			atomic_store(&w->sh->stop, 1);
			report_error(w, NULL, w->c->err);
			break;
		}
		cr.start = 0;
		if (!n) {
			/* An empty claim can be momentary: rows locked by a claim or a
			 * commit in flight are skipped (SKIP LOCKED), and a job handed
			 * back a moment ago may not be visible yet. Look twice more
			 * before leaving. */
			if (empty_claims++ < 2) { usleep(empty_claims == 1 ? 20000 : 100000); continue; }
			break;
		}
		empty_claims = 0;
		size_t i = 0;
		for (; i < n; i++) {
			djc_job *job = jobs[i];
			if (should_stop(w)) break;
			pthread_mutex_lock(&w->mu);
			int unproven = w->lost || mono() - w->proved > w->lease / 2;
			pthread_mutex_unlock(&w->mu);
			if (i > 0 && unproven) {
				/* the reservation of this claim was found lost, or has not
				 * been proved for half a lease (a freeze, a cut, a slow
				 * database): prove it now before starting another make under
				 * it (the watchdog would stop that make at once), or leave
				 * the rest */
				long held = 0;
				if (jobs_hold(w->c, job, w->lease, &held) != DJC_OK || held == 0) break;
				pthread_mutex_lock(&w->mu);
				w->proved = mono();
				w->lost = 0;
				pthread_mutex_unlock(&w->mu);
			}
			if (!take_call(w)) break;
			hb_hold(w, job->token);
			if (w->outfd >= 0) report_making(w, job);
			double t0 = mono();
			staged st = {0};
			make_result mr;
			int ok = run_make(w, job->key, &st, &mr) == DJC_OK;
			double dur = mono() - t0;
			/* lost == 1: a renewal found the job taken or reset; lost == 2:
			 * not proved for a lease (it may still be ours: the fenced commit
			 * decides). The heartbeat goes on during the commit and its
			 * retries. */
			if (ok && w->lost != 1) {
				if (n > 1 && w->lost == 0) {
					if (!g.n) g.first = mono();
					g.jobs[g.n] = job;
					g.st[g.n] = st;
					g.dur[g.n++] = dur;
					memset(&st, 0, sizeof st);
				} else
					finish_one(w, job, &st, dur);
			} else if (mr.stopped == 1 || (ok && w->lost)) {
				/* someone else holds it now, or (watchdog) nobody could prove
				 * we do: if it is still ours, hand it back at once rather than
				 * renewing it with the rest of the batch */
				atomic_fetch_add(&w->sh->lost, 1);
				jobs_release_job(w->c, job);
			} else {
				if (i + 1 == n) { group_flush(w, &g); hb_hold(w, 0); }
				rc = fail_job(w, job, mr.message, mr.stack, dur);
				if (rc == DJC_ELOST) atomic_fetch_add(&w->sh->lost, 1);   /* someone else's now */
				else report_error(w, job->key, mr.message);
			}
			staged_free(&st);
			make_result_free(&mr);
			if (g.n && mono() - g.first > 0.2) group_flush(w, &g);
			tick(w, 0);
			if (populate_signal) { i++; break; }
		}
		group_flush(w, &g);   /* before the release: those jobs are still reserved */
		hb_hold(w, 0);
		if (i < n) jobs_release(w->c, w->t, jobs[0]->token);
		for (size_t k = 0; k < n; k++) djc_job_free(jobs[k]);
		free(jobs);
	}
	free(g.jobs);
	free(g.st);
	free(g.dur);
}

/* -------------------------------------------------------------- driver */

static void on_signal(int sig) { if (!populate_signal) populate_signal = sig; }

static int key_list(djc_conn *c, table *t, const char *where, djc_rowset **out)
{
	sb_t q = SB_INIT;
	pvec p = {0};
	sb_add(&q, "SELECT * FROM (");
	int rc = keysource_sql(c, t, &q, &p);
	if (!rc) {
		sb_add(&q, ") ks WHERE 1=1");
		rc = where_build(c, t, where, "ks", 1, &q, &p);
	}
	if (!rc) {
		not_in_target_sql(c, t, "ks", &q);
		sb_add(&q, " ORDER BY ");
		for (size_t i = 0; i < t->nsrc; i++) {
			if (i) sb_add(&q, ", ");
			sb_add(&q, "ks.");
			db_qi(c->db, &q, t->attrs[t->src[i]].name);
		}
		rc = rows_select(c, t, sb_str(&q), &p, out);
	}
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

int djc_progress(djc_conn *c, const char *name, const char *where, long *remaining, long *total)
{
	*remaining = *total = 0;
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	if (!t->nsrc || (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED))
		return conn_fail(c, DJC_EINVAL, "table %s is %s: only computed and imported tables are populated", t->name, tier_name(t->tier));
	sb_t q = SB_INIT;
	pvec p = {0};
	/* one query: total keys, and those without a target row */
	sb_add(&q, "SELECT count(*), coalesce(sum(CASE WHEN NOT EXISTS (SELECT 1 FROM ");
	db_qi(c->db, &q, t->sql_name);
	sb_add(&q, " tg WHERE ");
	for (size_t i = 0; i < t->nsrc; i++) {
		const char *n = t->attrs[t->src[i]].name;
		if (i) sb_add(&q, " AND ");
		sb_add(&q, "tg.");
		db_qi(c->db, &q, n);
		sb_add(&q, " = ks.");
		db_qi(c->db, &q, n);
	}
	sb_add(&q, ") THEN 1 ELSE 0 END), 0) FROM (");
	if (!(rc = keysource_sql(c, t, &q, &p))) {
		sb_add(&q, ") ks WHERE 1=1");
		rc = where_build(c, t, where, "ks", 1, &q, &p);
	}
	db_res *r = NULL;
	if (!rc && (rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r))) rc = conn_dbfail(c, rc, "progress");
	if (!rc) {
		*total = (long)db_cell_int(r, 0, 0);
		*remaining = (long)db_cell_int(r, 0, 1);
	}
	db_res_free(r);
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

typedef struct making { char *key; int64_t token; } making;

static void gather_line(djc_populate_result *res, char *line, making *mk)
{
	json_t *j = json_loads(line, 0, NULL);
	if (!j) return;
	json_t *mkey = json_object_get(j, "making");
	if (json_is_string(mkey)) {
		free(mk->key);
		mk->key = xstrdup(json_string_value(mkey));
		mk->token = strtoll(json_string_value(json_object_get(j, "token")) ? json_string_value(json_object_get(j, "token")) : "0", NULL, 10);
	} else {
		json_t *k = json_object_get(j, "key"), *m = json_object_get(j, "message");
		add_error(res, json_is_string(k) ? json_string_value(k) : "{}", json_is_string(m) ? json_string_value(m) : "make failed");
	}
	json_decref(j);
}

/* Read what a child wrote to its (non-blocking) pipe and handle each whole
 * line. At end of file the pipe is closed and *fd set to -1. */
static void drain(int *fd, sb_t *buf, djc_populate_result *res, making *mk)
{
	char tmp[8192];
	for (;;) {
		if (*fd < 0) break;
		ssize_t r = read(*fd, tmp, sizeof tmp);
		if (r > 0) { sb_addn(buf, tmp, (size_t)r); continue; }
		if (r < 0 && errno == EINTR) continue;
		if (r == 0 || errno != EAGAIN) { close(*fd); *fd = -1; }
		break;
	}
	char *nl;
	while (buf->s && (nl = strchr(buf->s, '\n'))) {
		*nl = 0;
		gather_line(res, buf->s, mk);
		size_t used = (size_t)(nl - buf->s) + 1;
		memmove(buf->s, buf->s + used, buf->len - used + 1);
		buf->len -= used;
	}
}

/* A worker child died of a signal: its current job is that make's failure
 * (fenced by key and token); the rest of its claim goes back to pending. */
static void child_died(djc_conn *c, table *t, const making *mk, pid_t pid, const char *msg)
{
	if (!mk->key) { jobs_fail_pid(c, t, jobs_host(), (long)pid, msg); return; }
	json_t *kj = json_loads(mk->key, 0, NULL);
	djc_row *key = NULL;
	char *err = NULL;
	if (kj && !row_from_json_obj(t, kj, &key, &err)) {
		djc_job job = {t, key, mk->token, 0};
		jobs_fail(c, &job, msg, NULL, 0);
		jobs_release(c, t, mk->token);
	} else
		jobs_fail_pid(c, t, jobs_host(), (long)pid, msg);
	json_decref(kj);
	djc_row_free(key);
	free(err);
}

/* Fork a worker child with its own connection; it reports errors (and,
 * reserving, the job it is making) as JSON lines on a pipe whose read end
 * goes to *fd. fds[0..nfds) are the other children's pipes, closed in the
 * child. Returns the child's pid, or -1. */
static pid_t spawn_worker(djc_conn *c, table *t, const djc_populate_options *o, char *const *argv, shared *sh,
			  djc_rowset *keys, const int *fds, int nfds, int *fd)
{
	int pf[2];
	if (pipe(pf)) return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) { close(pf[0]); close(pf[1]); return -1; }
	if (pid == 0) {
		close(pf[0]);
		fcntl(pf[1], F_SETFD, FD_CLOEXEC);   /* make programs must not hold it open */
		for (int k = 0; k < nfds; k++) if (fds[k] >= 0) close(fds[k]);
		/* a fresh connection: never touch the parent's */
		djc_conn *cc = NULL;
		int crc = djc_open(&cc, c->url, c->schema);
		worker w = {0};
		djc_populate_result cres = {0};
		w.c = cc; w.o = o; w.argv = argv; w.sh = sh; w.res = &cres; w.outfd = pf[1];
		if (!crc) crc = conn_table(cc, t->name, &w.t);
		if (!crc && o->reserve_jobs) crc = hb_start(&w);
		if (crc) {
			sb_t b = SB_INIT;
			sb_add(&b, "{\"key\":\"{}\",\"message\":");
			json_quote(&b, djc_error_last(cc), strlen(djc_error_last(cc)));
			sb_add(&b, "}\n");
			if (write(pf[1], b.s, b.len) < 0) {}
			atomic_fetch_add(&sh->errors, 1);
			atomic_store(&sh->stop, 1);
			_exit(3);
		}
		if (o->reserve_jobs) { work_reserved(&w); hb_stop(&w); }
		else work_direct(&w, keys);
		djc_close(cc);
		_exit(populate_signal ? 4 : 0);
	}
	close(pf[1]);
	fcntl(pf[0], F_SETFL, O_NONBLOCK);
	*fd = pf[0];
	return pid;
}

int djc_populate(djc_conn *c, const char *name, const djc_populate_options *o, djc_populate_result **out)
{
	*out = NULL;
	djc_populate_options defo = DJC_POPULATE_OPTIONS_INIT;
	if (!o) o = &defo;
	if (o->version != DJC_POPULATE_OPTIONS_VERSION)
		return conn_fail(c, DJC_EINVAL, "populate options version %d is not %d (use DJC_POPULATE_OPTIONS_INIT)", o->version,
				 DJC_POPULATE_OPTIONS_VERSION);
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	if (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED)
		return conn_fail(c, DJC_EINVAL, "table %s is %s: only computed and imported tables are populated", t->name, tier_name(t->tier));
	char *const *argv = (char *const *)o->make_argv;
	if (!o->make && (!argv || !argv[0])) argv = t->make_argv;
	if (!o->make && (!argv || !argv[0]))
		return conn_fail(c, DJC_EINVAL, "table %s has no make: give --make PROGRAM (or a 'make = ...' line in its definition)", t->name);
	int procs = o->processes < 1 ? 1 : o->processes > MAX_PROCS ? MAX_PROCS : o->processes;
	if (o->where_json) {
		sb_t tmp = SB_INIT;
		pvec p = {0};
		rc = where_build(c, t, o->where_json, NULL, 1, &tmp, &p);
		sb_free(&tmp);
		pvec_free(&p);
		if (rc) return rc;
	}

	djc_rowset *keys = NULL;
	long total = 0;
	if (o->reserve_jobs) {
		if ((rc = jobs_ensure(c, t))) return rc;
		int refresh = o->refresh >= 0 ? o->refresh : config_bool("jobs.auto_refresh");
		if (refresh) {
			djc_refresh_options ro = DJC_REFRESH_OPTIONS_INIT;
			ro.where_json = o->where_json;
			/* new jobs get populate's priority (DataJoint's populate does
			 * the same), so --priority P also runs the keys it adds */
			if (o->priority >= 0) ro.priority = o->priority;
			ro.stale_timeout = 0;   /* stale removal is `djc jobs refresh`'s */
			djc_refresh_result rr;
			if ((rc = djc_jobs_refresh(c, name, &ro, &rr))) return rc;
		}
		total = jobs_ready_count(c, t, o->where_json, o->priority);
	} else {
		if ((rc = key_list(c, t, o->where_json, &keys))) return rc;
		total = (long)keys->n;
	}
	if (o->max_calls > 0 && total > o->max_calls) total = o->max_calls;

	shared *sh = mmap(NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) { djc_rowset_free(keys); return conn_fail(c, DJC_ERROR, "mmap: %s", strerror(errno)); }
	memset(sh, 0, sizeof *sh);
	djc_populate_result *res = xcalloc(1, sizeof *res);
	progress prog;
	progress_start(&prog, t->name, total, o->display_progress);

	struct sigaction sa = {0}, old_int, old_term;
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	populate_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	signal(SIGPIPE, SIG_IGN);

	rc = DJC_OK;
	if (procs == 1) {
		worker w = {0};
		w.c = c; w.t = t; w.o = o; w.argv = argv; w.sh = sh; w.res = res; w.outfd = -1; w.prog = &prog;
		if (o->reserve_jobs) {
			if (!(rc = hb_start(&w))) {
				work_reserved(&w);
				hb_stop(&w);
			}
		} else
			work_direct(&w, keys);
	} else {
		pid_t pids[MAX_PROCS];
		int fds[MAX_PROCS];
		sb_t bufs[MAX_PROCS];
		making mk[MAX_PROCS];
		memset(mk, 0, sizeof mk);
		int n = 0;
		fflush(NULL);
		for (int i = 0; i < procs; i++) {
			int fd;
			pid_t pid = spawn_worker(c, t, o, argv, sh, keys, fds, n, &fd);
			if (pid < 0) break;
			pids[n] = pid;
			fds[n] = fd;
			sb_t z = SB_INIT;
			bufs[n] = z;
			n++;
		}
		int respawns = 0;
		int alive = n, forwarded = 0;
		while (alive > 0) {
			struct pollfd pfd[MAX_PROCS];
			int map[MAX_PROCS], np = 0;
			for (int i = 0; i < n; i++) if (fds[i] >= 0) { pfd[np].fd = fds[i]; pfd[np].events = POLLIN; map[np++] = i; }
			if (np) poll(pfd, (nfds_t)np, 100); else usleep(50000);
			for (int k = 0; k < np; k++) {
				if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
				int i = map[k];
				drain(&fds[i], &bufs[i], res, &mk[i]);
			}
			if (populate_signal && !forwarded) {
				for (int i = 0; i < n; i++) if (pids[i] > 0) kill(pids[i], populate_signal);
				forwarded = 1;
			}
			for (int i = 0; i < n; i++) {
				int st;
				if (pids[i] <= 0 || waitpid(pids[i], &st, WNOHANG) != pids[i]) continue;
				pid_t p = pids[i];
				pids[i] = -1;
				alive--;
				/* what it wrote last (its current job) may still be in the pipe */
				drain(&fds[i], &bufs[i], res, &mk[i]);
				if (WIFSIGNALED(st) && !(forwarded && (WTERMSIG(st) == SIGINT || WTERMSIG(st) == SIGTERM))) {
					/* the worker died of its own (a crash in a C make, an OOM kill):
					 * its job is that make's failure, recorded now */
					char msg[128];
					snprintf(msg, sizeof msg, "make killed by signal %d (worker process %d died)", WTERMSIG(st), (int)p);
					if (o->reserve_jobs) child_died(c, t, &mk[i], p, msg);
					add_error(res, mk[i].key ? mk[i].key : "{}", msg);
					atomic_fetch_add(&sh->errors, 1);
					if (!o->suppress_errors) atomic_store(&sh->stop, 1);
					/* the rest of the work (and the jobs handed back) need a
					 * worker: start a new one in its place, a bounded number
					 * of times so a make that always crashes ends */
					if (!atomic_load(&sh->stop) && !populate_signal && respawns < 4 * procs) {
						int fd;
						if (fds[i] >= 0) close(fds[i]);
						fds[i] = -1;
						sb_reset(&bufs[i]);
						free(mk[i].key);
						mk[i].key = NULL;
						pid_t npid = spawn_worker(c, t, o, argv, sh, keys, fds, n, &fd);
						if (npid > 0) { pids[i] = npid; fds[i] = fd; alive++; respawns++; }
					}
				}
			}
			progress_update(&prog, atomic_load(&sh->success) + atomic_load(&sh->errors) + atomic_load(&sh->skipped),
					atomic_load(&sh->errors), 0);
		}
		/* the children are gone: read what they wrote last (the loop above
		 * may have reaped the last one before reading its pipe to the end) */
		for (int i = 0; i < n; i++) {
			drain(&fds[i], &bufs[i], res, &mk[i]);
			if (fds[i] >= 0) close(fds[i]);
			sb_free(&bufs[i]);
			free(mk[i].key);
		}
		if (n == 0) rc = conn_fail(c, DJC_ERROR, "cannot start worker processes: %s", strerror(errno));
	}
	progress_update(&prog, atomic_load(&sh->success) + atomic_load(&sh->errors) + atomic_load(&sh->skipped),
			atomic_load(&sh->errors), 1);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);

	res->success_count = atomic_load(&sh->success);
	res->error_count = atomic_load(&sh->errors);
	res->skipped_count = atomic_load(&sh->skipped);
	res->lost_count = atomic_load(&sh->lost);
	res->interrupted = populate_signal;
	munmap(sh, sizeof *sh);
	djc_rowset_free(keys);
	*out = res;
	if (rc) return rc;
	if (res->interrupted) return conn_fail(c, DJC_EINTR, "populate of %s interrupted by %s", t->name,
					       res->interrupted == SIGINT ? "SIGINT" : "SIGTERM");
	if (res->error_count) {
		return conn_fail(c, DJC_EMAKE, "%ld make call%s of %s failed%s%s", res->error_count, res->error_count == 1 ? "" : "s",
				 t->name, res->n_errors ? ": " : "", res->n_errors ? res->errors[0].message : "");
	}
	return DJC_OK;
}
