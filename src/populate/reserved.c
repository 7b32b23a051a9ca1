/* reserved.c - populate with job reservation: claim (one atomic statement),
 * make outside any transaction while the lease is kept, then one short
 * fenced commit. With jobs.reserve_batch > 1 a claim takes several jobs and
 * finished makes of it commit together. Database faults are retried. A
 * failed make whose job has attempts left goes back to pending (jobs_fail)
 * and the worker waits for its retry before it leaves; a cancelled job's
 * make is stopped and counted as cancelled; a drain takes no new work. */
#include "worker.h"
#include "util/config.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ endings */

/* After a step on w->t failed for good: 1 when the table left the
 * stored pipeline (djc worker's hook asks; populate has none), which no
 * further step of it is tried. */
static int table_gone(worker *w)
{
	if (!w->gone && w->hooks && w->hooks->gone) w->gone = w->hooks->gone(w->hooks_arg);
	return w->gone;
}

/* Database faults are retried (worker.h: retry_wait), with the lease of
 * this worker's heartbeat. */

/* A database fault outlasted its retries (retry_wait: max(60 s, 4
 * leases) of backoff) while this worker wrote what became of a job (key,
 * or NULL): the server is gone, or stuck behind a lock. The worker stops
 * with that as its failure (no make's error: the make may well have
 * succeeded) and waits on the database no more: what it holds stays
 * reserved under its token, and goes back to pending by itself when its
 * lease lapses (docs/leases.md). Before, a commit that gave up went on to
 * record the job's error, waiting out a whole second window for the same
 * dead server (a group of batched jobs, a window per job), and populate
 * then reported "make call failed; recording the error: ..." for a make
 * that had succeeded. */
static void database_gone(worker *w, const djc_row *key, const char *msg, int unknown)
{
	if (w->down) return;
	w->down = 1;
	char *k = key ? key_to_json(w->t, key, 1) : NULL;
	sb_t b = SB_INIT;
	/* (on a connection a lock wait ended, worker_failure words it so) */
	sb_printf(&b, "%s", msg && *msg ? msg : "the database could not be reached");
	/* unknown: its COMMIT went out and no reply came (a server frozen
	 * with the COMMIT in its socket's buffer commits it when it thaws) */
	if (k && unknown)
		sb_printf(&b, "; the make of %s %s was sent to commit, with no reply: whether it committed is not known "
			      "(if not, its job goes back to pending when its lease lapses)", w->t->name, k);
	else if (k)
		sb_printf(&b, "; the make of %s %s was not committed (its job goes back to pending when its lease lapses)", w->t->name, k);
	worker_fatal(w, sb_str(&b));
	sb_free(&b);
	free(k);
}

/* Whether rc, a retried code once retry_wait gave up (only then), means
 * the database outlasted the retries (not a signal cutting them short). */
static int outlasted(int rc)
{
	return (retryable(rc) || rc == DJC_ELOCKED) && !populate_signal;
}

/* A job found no longer ours (a refused commit, a renewal, a fenced
 * error): cancelled (ignore under our token) or lost. */
static void count_gone(worker *w, djc_job *job)
{
	int cancelled = 0;
	jobs_lost_why(w->c, job, &cancelled, NULL);
	atomic_fetch_add(cancelled ? &w->sh->cancelled : &w->sh->lost, 1);
}

/* Count a decided commit. */
static void count(worker *w, djc_job *job, commit_result res)
{
	if (res == COMMIT_DONE) atomic_fetch_add(&w->sh->success, 1);
	else if (res == COMMIT_TAKEN) atomic_fetch_add(&w->sh->skipped, 1);
	else if (res == COMMIT_LOST) count_gone(w, job);
}

/* After a commit that carried the next claim ended UNKNOWN and was not
 * found uncommitted: the claim took effect when the commit did, under a
 * token that only the COMMIT's lost reply would have handed this worker
 * (its jobs were never read). They go back to pending at once, fenced by
 * that token (a claim that did not happen matches nothing), instead of
 * staying reserved by nobody until their leases lapse, each lapse then
 * counted as a worker lost on a job that never started. The worker claims
 * again on its own. */
static void release_lost_claim(worker *w, next_claim *next)
{
	if (!next || !next->token) return;
	retry r = {0, 0};
	long n = 0;
	int rc;
	while (retryable(rc = jobs_release_claim(w->c, w->t, next->token, &n)) && retry_wait(&r, w->lease.lease)) {}
	if (!rc) worker_event("released %ld of a claim whose commit reply was lost", n);
	next->token = 0;
}

/* Commit a job's rows, fenced by its token, retrying faults. When the
 * connection went during COMMIT itself, the outcome is looked up before
 * anything is retried: a commit is never reported that did not happen,
 * and never made twice; the next claim that went with it is handed back
 * (release_lost_claim). DJC_OK with *res decided, or the last error;
 * *outage 1 when the database outlasted the retries, 2 when it did so
 * while the outcome of a COMMIT that went out was being asked. */
static int commit_job(worker *w, djc_job *job, staged *st, double dur, next_claim *next, commit_result *res, int *outage)
{
	retry r = {0, 0};
	*outage = 0;
	for (;;) {
		int rc = jobs_commit(w->c, job, &(commit_rows){st->tables, st->rows, st->n, st->reads}, dur, next, res);
		while (rc && *res == COMMIT_UNKNOWN) {
			commit_result o;
			int orc = jobs_commit_outcome(w->c, job, &o);
			if (!orc && o != COMMIT_FAILED) {
				*res = o;
				release_lost_claim(w, next);
				return DJC_OK;
			}
			if (!orc) break;   /* not committed, still ours (nor was the claim made): commit again */
			if (!retryable(orc) || !retry_wait(&r, w->lease.lease)) {
				/* not known: whatever it holds (when the database
				 * outlasted the retries, its leases hand it back) */
				*outage = outlasted(orc) ? 2 : 0;
				if (!*outage) release_lost_claim(w, next);
				return rc;
			}
		}
		if (!rc) return DJC_OK;
		if (!retryable(rc)) {
			*outage = rc == DJC_ELOCKED && outlasted(rc);   /* a lock wait that reached its bound */
			return rc;
		}
		if (!retry_wait(&r, w->lease.lease)) { *outage = outlasted(rc); return rc; }
	}
}

/* Record a failed attempt and count what became of it: back to pending
 * (retried: this worker waits for it before leaving, unless stopping),
 * an error, or no longer ours. */
static void failed(worker *w, djc_job *job, fail_kind kind, const char *msg, const char *stack, double dur)
{
	fail_result fr = FAILED_ERROR;
	double delay = 0;
	jobs_failure f = {kind, msg, stack, dur};
	retry r = {0, 0};
	int rc;
	if (w->down) return;   /* nothing more is written (database_gone) */
	while (retryable(rc = jobs_fail(w->c, job, &f, &fr, &delay)) && retry_wait(&r, w->lease.lease)) {}
	if (outlasted(rc) && !table_gone(w)) {
		/* the make's failure stands; its record waits for the lease */
		worker_error(w, job->key, msg);
		database_gone(w, NULL, w->c->err, 0);
		return;
	}
	if (rc == DJC_ELOST) count_gone(w, job);          /* someone else's now, or cancelled */
	else if (rc != DJC_OK && table_gone(w)) atomic_fetch_add(&w->sh->lost, 1);   /* went with its table */
	else if (rc == DJC_OK && fr != FAILED_ERROR) {
		atomic_fetch_add(&w->sh->retried, 1);
		worker_retry_due(w->sh, delay);
	} else
		worker_error(w, job->key, rc == DJC_OK ? msg : w->c->err);
}

/* Commit one finished job and count the outcome; with next, claim the
 * next jobs in the same transaction. */
static void finish_one(worker *w, djc_job *job, staged *st, double dur, next_claim *next)
{
	commit_result res;
	if (worker_stopping(w)) next = NULL;   /* nothing more to claim */
	/* its table was forgotten: the job went with its jobs table, and its
	 * rows are never committed */
	if (w->gone) { atomic_fetch_add(&w->sh->lost, 1); return; }
	if (w->down) return;   /* left reserved (database_gone) */
	int outage;
	int rc = commit_job(w, job, st, dur, next, &res, &outage);
	if (!rc) { count(w, job, res); return; }
	if (table_gone(w)) { atomic_fetch_add(&w->sh->lost, 1); return; }
	if (outage) { database_gone(w, job->key, w->c->err, outage == 2); return; }
	char *msg = xstrdup(w->c->err);
	failed(w, job, FAIL_ERROR, msg, NULL, dur);
	free(msg);
}

/* A job whose target row the claim found already there: close it. */
static void finish_made(worker *w, djc_job *job)
{
	retry r = {0, 0};
	commit_result res;
	int rc;
	if (w->down) return;
	while (retryable(rc = jobs_close_made(w->c, job, &res)) && retry_wait(&r, w->lease.lease)) {}
	if (!rc) count(w, job, res);
	else if (table_gone(w)) atomic_fetch_add(&w->sh->lost, 1);
	else if (outlasted(rc)) database_gone(w, NULL, w->c->err, 0);
	else worker_error(w, job->key, w->c->err);
}

/* ------------------------------------------------------------ groups */

/* Finished jobs of one claim waiting to be committed together. */
typedef struct group {
	djc_job **jobs;
	staged *st;
	double *dur;
	size_t n;
	double first;   /* when the oldest was finished */
} group;

/* Commit the group in one transaction (with next: claiming the next
 * batch in it); when that fails (a lost job, a duplicate, a fault) fall
 * back to one transaction per job, which sorts each out exactly as
 * without grouping. */
static void group_flush(worker *w, group *g, next_claim *next)
{
	if (!g->n) return;
	if (worker_stopping(w)) next = NULL;
	int done = 0;
	if (w->down) done = 1;   /* left reserved (database_gone) */
	else if (g->n > 1 && !w->gone) {   /* (a table that left: each counted by finish_one, none committed) */
		size_t nrows = 0;
		for (size_t i = 0; i < g->n; i++) nrows += g->st[i].n;
		table **tabs = xcalloc(nrows, sizeof(table *));
		djc_row **rows = xcalloc(nrows, sizeof(djc_row *));
		size_t k = 0;
		/* the reads of every make of the group, checked in its
		 * transaction (by row versions; where the backend has none, the
		 * group commits one by one, each make's reads read again) */
		const read_set **sets = xcalloc(g->n, sizeof *sets);
		int any = 0;
		for (size_t i = 0; i < g->n; i++) {
			for (size_t j = 0; j < g->st[i].n; j++) { tabs[k] = g->st[i].tables[j]; rows[k++] = g->st[i].rows[j]; }
			sets[i] = g->st[i].reads;
			any |= sets[i] != NULL;
		}
		read_set *reads = any ? read_set_join(sets, g->n) : NULL;
		free(sets);
		retry r = {0, 0};
		commit_result res;
		int rc;
		while (retryable(rc = jobs_commit_many(w->c, g->jobs, g->n, &(commit_rows){tabs, rows, nrows, reads}, next, &res)) && res != COMMIT_UNKNOWN &&
		       retry_wait(&r, w->lease.lease)) {}
		free(tabs);
		free(rows);
		read_set_free(reads);
		if (rc == DJC_OK) {
			atomic_fetch_add(&w->sh->success, (long)g->n);
			done = 1;
		} else if (res == COMMIT_UNKNOWN) {
			/* the COMMIT may have happened: ask, job by job */
			for (size_t i = 0; i < g->n && !w->down; i++) {
				commit_result o = COMMIT_FAILED;
				retry r2 = {0, 0};
				int orc;
				while (retryable(orc = jobs_commit_outcome(w->c, g->jobs[i], &o)) && retry_wait(&r2, w->lease.lease)) {}
				if (!orc && o != COMMIT_FAILED) count(w, g->jobs[i], o);
				else if (outlasted(orc)) database_gone(w, g->jobs[i]->key, w->c->err, 1);
				else finish_one(w, g->jobs[i], &g->st[i], g->dur[i], NULL);
			}
			/* the next claim went with that COMMIT, committed or not */
			if (!w->down) release_lost_claim(w, next);
			done = 1;
		} else if (outlasted(rc)) {
			/* the database outlasted the retries: one by one would
			 * wait as long again for each job */
			database_gone(w, g->jobs[0]->key, w->c->err, 0);
			done = 1;
		}
	}
	if (!done)
		for (size_t i = 0; i < g->n; i++)
			finish_one(w, g->jobs[i], &g->st[i], g->dur[i], i + 1 == g->n ? next : NULL);
	for (size_t i = 0; i < g->n; i++) staged_free(&g->st[i]);
	g->n = 0;
	worker_tick(w);
}

/* ------------------------------------------------------------- the loop */

/* Run make for one job of the current claim and end it: into the group
 * (batches), committed, handed back, or recorded as an error. The last job
 * of a claim committed alone carries the next claim (next). */
static void make_one(worker *w, group *g, djc_job *const *jobs, size_t i, size_t n, next_claim *next)
{
	djc_job *job = jobs[i];
	lease_hold(&w->lease, job->token, jobs, (long)n);
	lease_making(&w->lease, job->key);
	if (w->slot) worker_making(w, job);
	double t0 = mono_now();
	staged st = {0};
	make_result mr;
	int ok = worker_make(w, job->key, (int)job->attempts + 1, &st, &mr) == DJC_OK;
	double dur = mono_now() - t0;
	if (w->slot) worker_made(w);
	if (mr.fatal) {
		/* the key was not tried (its serve program cannot be run): it
		 * goes back to pending for another worker, and this one stops */
		jobs_release_job(w->c, job, mr.message);   /* recorded: "released", why */
		worker_fatal(w, mr.message);
		make_result_free(&mr);
		return;
	}
	if (w->hooks && !mr.stopped) w->hooks->made(w->hooks_arg, dur);
	lease_state ls = lease_get(&w->lease);
	lease_making(&w->lease, NULL);
	/* LEASE_LOST: a renewal found the job taken or reset; LEASE_CANCELLED:
	 * found it cancelled; LEASE_UNPROVEN: not proved for a lease (it may
	 * still be ours: the fenced commit decides). The heartbeat goes on
	 * during the commit and its retries. */
	if (ok && ls != LEASE_LOST && ls != LEASE_CANCELLED) {
		if (n > 1 && ls == LEASE_HELD && !job->suspect) {
			if (!g->n) g->first = mono_now();
			g->jobs[g->n] = job;
			g->st[g->n] = st;
			g->dur[g->n++] = dur;
			memset(&st, 0, sizeof st);
		} else {
			/* committed alone (a suspect, a lease not proved, a claim
			 * of one): when it is the claim's last, its commit claims
			 * the next jobs, so the jobs of the claim waiting in the
			 * group are committed first, without a claim; committed
			 * after it, with one, they claimed the next jobs a second
			 * time in the place of the first, which stayed reserved,
			 * held by nobody, until their leases lapsed */
			if (next) group_flush(w, g, NULL);
			finish_one(w, job, &st, dur, next);
		}
	} else if (mr.stopped == MAKE_STOP_CANCELLED || ls == LEASE_CANCELLED) {
		/* cancelled: the job is ignore already, the attempt recorded by
		 * the cancel; nothing of the make is written */
		atomic_fetch_add(&w->sh->cancelled, 1);
	} else if (mr.stopped == MAKE_STOP_LOST || mr.stopped == MAKE_STOP_UNPROVEN || (ok && ls != LEASE_HELD)) {
		/* someone else holds it now, or nobody could prove we do: if it
		 * is still ours, hand it back at once (recording the stopped
		 * attempt) rather than renewing it with the rest of the batch */
		atomic_fetch_add(&w->sh->lost, 1);
		jobs_release_job(w->c, job, mr.message ? mr.message : "make stopped: the lease could not be proved");
	} else {
		/* make failed, timed out or was interrupted: recorded (fenced),
		 * retried when attempts are left */
		if (i + 1 == n) { group_flush(w, g, NULL); lease_hold(&w->lease, 0, NULL, 0); }
		fail_kind k = mr.stopped == MAKE_STOP_SIGNAL ? FAIL_INTERRUPTED : mr.stopped == MAKE_STOP_TIMEOUT ? FAIL_TIMEOUT : FAIL_ERROR;
		failed(w, job, k, mr.message, mr.stack, dur);
	}
	staged_free(&st);
	make_result_free(&mr);
}

/* How often, at most, the jobs of a claim of several are read before the
 * next of their makes starts (jobs_held): a job cancelled at least this
 * long before its make's turn never starts; one cancelled later is
 * stopped as a running make is (the heartbeat), and its commit refused. */
#define HELD_CHECK_EVERY 0.01

/* What a worker knows of the claim at hand beyond the lease: when its
 * jobs were last read (the claim itself reads them all), up to which one,
 * and which were found gone (cancelled, or taken or reset). */
typedef struct claim_state {
	double at;      /* monotonic time of the last read */
	size_t from;    /* the first job it read */
	size_t to;      /* one past the last */
	char *gone;     /* per job: found gone */
} claim_state;

/* Whether job i of the claim may start its make: it was read, still held,
 * no longer than HELD_CHECK_EVERY ago; else it is read now, with the next
 * ones (twice as many as started since the last read, so that about one
 * read covers the makes of each interval). A job found gone is counted
 * (cancelled or lost) and skipped. A failed read lets the make start: its
 * heartbeat and its fenced commit still decide. */
static int may_start(worker *w, djc_job *const *jobs, size_t i, size_t n, claim_state *cs)
{
	if (i >= cs->to || mono_now() - cs->at >= HELD_CHECK_EVERY) {
		size_t k = 2 * (i - cs->from);
		if (k < 1) k = 1;
		if (k > n - i) k = n - i;
		const djc_row **keys = xcalloc(k, sizeof *keys);
		for (size_t j = 0; j < k; j++) keys[j] = jobs[i + j]->key;
		char *held = xcalloc(k, 1);
		if (jobs_held(w->c, w->t, jobs[i]->token, keys, k, held) == DJC_OK)
			for (size_t j = 0; j < k; j++) cs->gone[i + j] = !held[j];
		free(held);
		free(keys);
		cs->at = mono_now();
		cs->from = i;
		cs->to = i + k;
	}
	if (!cs->gone[i]) return 1;
	count_gone(w, jobs[i]);
	return 0;
}

/* The jobs after job i of the claim whose keys a serve program may be
 * given ahead of their turn (w->next, serve.h): those the claim's last
 * read found held, no longer than HELD_CHECK_EVERY ago (so a job
 * cancelled that long before its key is sent never starts), up to the
 * first that needs a step of its own before its make (made already, a
 * suspect, gone). None with max_calls: every make is a call, counted at
 * its turn. nx has room for n entries; returns how many. */
static size_t next_keys(worker *w, djc_job *const *jobs, size_t i, size_t n, const claim_state *cs, make_next *nx)
{
	if (!w->serve || w->o->max_calls > 0 || mono_now() - cs->at >= HELD_CHECK_EVERY) return 0;
	size_t k = 0;
	for (size_t j = i + 1; j < n && j >= cs->from && j < cs->to; j++) {
		if (jobs[j]->made || jobs[j]->suspect || cs->gone[j]) break;
		nx[k].key = jobs[j]->key;
		nx[k++].attempt = (int)jobs[j]->attempts + 1;
	}
	return k;
}

/* A suspect of a claim of several (a worker died holding it with others,
 * none known to be the one it made): marked before its make, so that the
 * lapse, should this worker die now, is laid on it (jobs_make_alone). 0:
 * it is not ours any more (counted, skipped). */
static int mark_alone(worker *w, djc_job *job)
{
	long held = 0;
	int rc = jobs_make_alone(w->c, job, w->lease.lease, &held);
	if (rc == DJC_OK && held == 0) {
		count_gone(w, job);
		return 0;
	}
	return 1;   /* marked, or the write failed: the make goes on, blamed on none */
}

/* Hand back what is still held of a claim (its unstarted jobs). */
static void release_claim(worker *w, djc_job *const *jobs, size_t n)
{
	const djc_row **keys = xcalloc(n, sizeof *keys);
	for (size_t k = 0; k < n; k++) keys[k] = jobs[k]->key;
	jobs_release(w->c, w->t, jobs[0]->token, keys, n);
	free(keys);
}

/* Whether the commit of this claim's last job should claim the next jobs:
 * the worker goes on, and max_calls leaves room. */
static long next_size(worker *w, long batch)
{
	if (worker_stopping(w)) return 0;
	if (w->o->max_calls > 0) {
		long left = w->o->max_calls - atomic_load(&w->sh->calls);
		if (left <= 0) return 0;
		if (left < batch) batch = left;
	}
	/* djc worker: the claim would start after the make about to run */
	if (w->hooks) batch = w->hooks->claim_size(w->hooks_arg, batch, 1);
	return batch;
}

/* What a claim of the worker's own came to. */
enum { CLAIM_GOT, CLAIM_AGAIN, CLAIM_LEAVE };

/* No job was claimed: CLAIM_AGAIN to look again (a retry of this populate
 * not due yet; an empty claim that may be momentary), or CLAIM_LEAVE. */
static int claim_empty(worker *w, int *empty_claims)
{
	/* A retry this populate scheduled is not due yet: wait for it
	 * (another worker may take it first; then this one finds nothing
	 * once it is due, and leaves) */
	double wait = (double)atomic_load(&w->sh->retry_due) / 1e6 - mono_now();
	if (wait > 0) {
		usleep((useconds_t)((wait < 0.2 ? wait : 0.2) * 1e6) + 1000);
		*empty_claims = 0;
		return CLAIM_AGAIN;
	}
	/* An empty claim can be momentary: rows locked by a claim or a
	 * commit in flight are skipped (SKIP LOCKED). A plain read that
	 * skips nothing (claim.peek) tells: it sees no takeable row, the
	 * queue is empty and the worker leaves now (it used to wait 120 ms at
	 * the end of every populate); it sees one (or cannot tell), look
	 * twice more before leaving. */
	int any = 1;
	(*empty_claims)++;
	if (*empty_claims <= 2 && (jobs_peek(w->c, w->t, w->o->where_json, w->o->priority, &any) != DJC_OK || any)) {
		usleep(*empty_claims == 1 ? 20000 : 100000);
		return CLAIM_AGAIN;
	}
	worker_event("leave %s looks=%d", w->t->name, *empty_claims);
	return CLAIM_LEAVE;
}

/* Claim up to batch jobs on the worker's own (no commit brought the next
 * ones): CLAIM_GOT with *jobs and *n, CLAIM_AGAIN, or CLAIM_LEAVE. */
static int claim_own(worker *w, long batch, retry *cr, int *empty_claims, djc_job ***jobs, size_t *n)
{
	if (w->o->max_calls > 0 && atomic_load(&w->sh->calls) >= w->o->max_calls) return CLAIM_LEAVE;
	long want = w->hooks ? w->hooks->claim_size(w->hooks_arg, batch, 0) : batch;
	if (want <= 0) return CLAIM_LEAVE;
	claim_want cw = {w->o->where_json, w->o->priority, w->lease.lease, want};
	int rc = jobs_claim(w->c, w->t, &cw, jobs, n);
	if (rc) {
		if (retryable(rc) && retry_wait(cr, w->lease.lease)) return CLAIM_AGAIN;
		if (table_gone(w)) return CLAIM_LEAVE;   /* the worker serves the others */
		if (outlasted(rc)) {
			/* the database outlasted the retries, or a lock the bound
			 * (jobs.lock_timeout): nothing more is written */
			database_gone(w, NULL, w->c->err, 0);
			return CLAIM_LEAVE;
		}
		atomic_store(&w->sh->stop, 1);
		worker_error(w, NULL, w->c->err);
		return CLAIM_LEAVE;
	}
	cr->start = 0;
	/* a job this claim's look sent back from a lapse, due after a
	 * backoff: waited for like a retry of this populate's own */
	double due = jobs_lapsed_due(w->c, w->t);
	if (due > 0) worker_retry_due(w->sh, due);
	if (w->hooks) w->hooks->claimed(w->hooks_arg, *n);
	if (*n) return CLAIM_GOT;
	if (w->hooks) return CLAIM_LEAVE;   /* djc worker waits its own way */
	return claim_empty(w, empty_claims);
}

/* Make the jobs[0..n) of one claim, in order, grouping short commits (g);
 * the commit of the last one may claim the next (next). Returns how many
 * were gone through: fewer than n when the worker stops or the claim's
 * reservation could not be proved. */
static size_t make_claim(worker *w, group *g, djc_job **jobs, size_t n, long batch, next_claim *next)
{
	claim_state cs = {mono_now(), 0, n, xcalloc(n ? n : 1, 1)};   /* the claim read them all */
	make_next *nx = n > 1 && w->serve ? xcalloc(n, sizeof *nx) : NULL;
	size_t i = 0;
	for (; i < n; i++) {
		djc_job *job = jobs[i];
		if (worker_stopping(w) || w->gone) break;
		if (job->made) { finish_made(w, job); continue; }
		if (i > 0 && lease_stale(&w->lease)) {
			/* the reservation of this claim was found lost, or has not
			 * been proved for half a lease (a freeze, a cut, a slow
			 * database): prove it before starting another make under it,
			 * or leave the rest */
			long held = 0;
			if (jobs_hold(w->c, job, w->lease.lease, &held) != DJC_OK || held == 0) break;
			lease_proved(&w->lease);
		}
		/* a job of the claim cancelled meanwhile never starts */
		if (i > 0 && !may_start(w, jobs, i, n, &cs)) continue;
		if (job->suspect && !mark_alone(w, job)) continue;
		if (!worker_take_call(w)) break;
		/* the last make of the claim: its commit may claim the next */
		if (i + 1 == n) next->n = next_size(w, batch);
		w->nnext = nx ? next_keys(w, jobs, i, n, &cs, nx) : 0;
		w->next = nx;
		make_one(w, g, jobs, i, n, i + 1 == n ? next : NULL);
		w->next = NULL;
		w->nnext = 0;
		if (g->n && mono_now() - g->first > 0.2) group_flush(w, g, NULL);
		worker_tick(w);
		if (populate_signal) { i++; break; }
	}
	free(cs.gone);
	free(nx);
	return i;
}

void work_reserved(worker *w)
{
	long batch = config_long("jobs.reserve_batch");
	if (batch < 1) batch = 1;
	if (batch > 1000) batch = 1000;
	if (w->o->max_calls > 0 && batch > w->o->max_calls) batch = w->o->max_calls;
	/* with batches, short makes commit together: at most a batch, and
	 * nothing finished waits more than 0.2 s (a suspect commits alone: a
	 * lapse of the claim must not be laid on it once its make ended) */
	group g = {xcalloc((size_t)batch, sizeof(djc_job *)), xcalloc((size_t)batch, sizeof(staged)),
		   xcalloc((size_t)batch, sizeof(double)), 0, 0};
	retry cr = {0, 0};
	int empty_claims = 0;
	/* the claim at hand: made on its own, or by the commit of the last one
	 * (then a steady worker pays one commit per job, or per batch) */
	djc_job **jobs = NULL;
	size_t n = 0;
	while (!worker_stopping(w) && !w->gone) {
		if (!n) {
			int got = claim_own(w, batch, &cr, &empty_claims, &jobs, &n);
			if (got == CLAIM_AGAIN) continue;
			if (got == CLAIM_LEAVE) break;
		}
		empty_claims = 0;
		next_claim next = {w->o->where_json, w->o->priority, w->lease.lease, 0, NULL, 0, 0};
		size_t i = make_claim(w, &g, jobs, n, batch, &next);
		/* before the release: those jobs are still reserved */
		if (g.n && i == n && next.n == 0) next.n = next_size(w, batch);
		group_flush(w, &g, i == n ? &next : NULL);
		lease_hold(&w->lease, 0, NULL, 0);
		if (i < n && !w->gone && !w->down) release_claim(w, jobs, n);
		for (size_t k = 0; k < n; k++) djc_job_free(jobs[k]);
		free(jobs);
		jobs = next.jobs;
		n = next.njobs;
		if (n && w->hooks) w->hooks->claimed(w->hooks_arg, n);
	}
	/* stopped with a claim in hand: hand it back (none when its table left) */
	if (n && !w->gone && !w->down) release_claim(w, jobs, n);
	for (size_t k = 0; k < n; k++) djc_job_free(jobs[k]);
	free(jobs);
	free(g.jobs);
	free(g.st);
	free(g.dur);
}
