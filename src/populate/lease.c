/* lease.c - the heartbeat (lease.h). */
#include "lease.h"
#include "util/clock.h"
#include "util/config.h"
#include "db/db.h"
#include <stdlib.h>
#include <time.h>

double lease_seconds(void)
{
	double s = config_double("jobs.lease_timeout");
	return s > 0 ? s : 60;
}

/* Wait on the condition for at most secs, by the monotonic clock. */
static void wait_for(lease *l, double secs)
{
	if (secs > 3600) secs = 3600;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double until = (double)ts.tv_sec + ts.tv_nsec / 1e9 + secs;
	ts.tv_sec = (time_t)until;
	ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
	pthread_cond_timedwait(&l->cv, &l->mu, &ts);
}

/* Renew every lease/4. The renewal runs without l->mu, so one stuck on a
 * dead network never blocks the worker's questions; failed renewals are
 * tried again next period (the driver reconnects between transactions).
 * When the job being made is gone, one more read tells a cancel (the job
 * is ignore under our token) from a loss. */
static void *hb_main(void *arg)
{
	lease *l = arg;
	db_thread_urgent(1);   /* a renewal goes before the worker's next statement */
	double period = l->lease / 4;
	if (period < 0.05) period = 0.05;
	pthread_mutex_lock(&l->mu);
	while (!l->quit) {
		wait_for(l, period);
		if (l->quit) break;
		if (!l->token) continue;
		int64_t tok = l->token;
		table *t = l->t;   /* use_table may change it under the lock */
		long njobs = l->njobs;
		unsigned gen = l->gen;
		djc_row *key = l->making ? djc_row_dup(l->making) : NULL;
		djc_row **keys = xcalloc(njobs > 0 ? (size_t)njobs : 1, sizeof *keys);
		for (long i = 0; i < njobs; i++) keys[i] = djc_row_dup(l->jobs[i]->key);
		pthread_mutex_unlock(&l->mu);
		double t0 = mono_now();
		long held = 0, cur = 1;
		int cancelled = 0;
		djc_job job = {.t = t, .key = key, .token = tok};
		int rc = jobs_renew(l->c, t, tok, (const djc_row *const *)keys, (size_t)njobs, l->lease, &held);
		/* several jobs under one token: is the one being made still ours? */
		if (rc == DJC_OK && held > 0 && njobs > 1 && key && jobs_hold(l->c, &job, l->lease, &cur) != DJC_OK) cur = 1;
		if (rc == DJC_OK && (held == 0 || cur == 0) && key) jobs_lost_why(l->c, &job, &cancelled, NULL);
		djc_row_free(key);
		for (long i = 0; i < njobs; i++) djc_row_free(keys[i]);
		free(keys);
		pthread_mutex_lock(&l->mu);
		if (l->token != tok) continue;        /* the worker moved on to another claim */
		if (rc == DJC_OK && held == 0) l->lost = 1;
		else if (rc == DJC_OK) {
			if (t0 > l->proved) l->proved = t0;
			if (cur == 0 && l->gen == gen) l->job_lost = 1;
		}
		if (cancelled && l->gen == gen) l->cancelled = 1;
	}
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

int lease_start(lease *l, djc_conn *c, table *t)
{
	l->c = c;
	l->t = t;
	l->lease = lease_seconds();
	l->quit = 0;
	l->token = 0;
	l->jobs = NULL;
	l->njobs = 0;
	l->making = NULL;
	l->gen = 0;
	l->lost = 0;
	l->job_lost = 0;
	l->cancelled = 0;
	l->proved = mono_now();
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&l->mu, NULL);
	pthread_cond_init(&l->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* no wait for the server on this connection lasts longer than the
	 * window of a worker's retries (db_set_wait_bound): a frozen server,
	 * or a pooler holding a statement for a server that crashed, then
	 * fails the statement as a lost session, and the worker's retries
	 * end within their window instead of never. Lifted at lease_stop:
	 * the connection may serve a one-shot command's long statements. A
	 * lock wait is a wait with no byte moving too: the bound leaves the
	 * server's own bound on it (jobs.lock_timeout) 5 s to answer first,
	 * so that a locked table is reported as such, not as a lost server. */
	db_set_wait_bound(c->db, lease_wait_bound(c, l->lease));
	if (pthread_create(&l->hb, NULL, hb_main, l)) {
		db_set_wait_bound(c->db, 0);
		pthread_mutex_destroy(&l->mu);
		pthread_cond_destroy(&l->cv);
		return conn_fail(c, DJC_ERROR, "cannot start the heartbeat thread");
	}
	/* a lock wait that reached its bound (jobs.lock_timeout) ends the
	 * worker's writes: neither it nor this heartbeat waits on the same
	 * lock a second time (db_lock_final) */
	db_lock_final(c->db, 1);
	l->on = 1;
	return DJC_OK;
}

double lease_wait_bound(const djc_conn *c, double lease_s)
{
	double wait = lease_window(lease_s);
	return c->db->lock_wait + 5 > wait ? c->db->lock_wait + 5 : wait;
}

void lease_stop(lease *l)
{
	if (!l->on) return;
	pthread_mutex_lock(&l->mu);
	l->quit = 1;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mu);
	pthread_join(l->hb, NULL);
	db_set_wait_bound(l->c->db, 0);
	db_lock_final(l->c->db, 0);
	djc_row_free(l->making);
	l->making = NULL;
	pthread_mutex_destroy(&l->mu);
	pthread_cond_destroy(&l->cv);
	l->on = 0;
}

void lease_hold(lease *l, int64_t token, djc_job *const *jobs, long njobs)
{
	pthread_mutex_lock(&l->mu);
	if (token != l->token) {
		l->lost = 0;
		l->job_lost = 0;
		l->cancelled = 0;
		if (token) l->proved = mono_now();   /* the claim just proved it */
	}
	l->token = token;
	l->jobs = token ? jobs : NULL;
	l->njobs = token ? njobs : 0;
	pthread_mutex_unlock(&l->mu);
}

void lease_making(lease *l, const djc_row *key)
{
	djc_row *k = key ? djc_row_dup(key) : NULL;
	pthread_mutex_lock(&l->mu);
	djc_row *old = l->making;
	l->making = k;
	l->gen++;
	l->job_lost = 0;
	l->cancelled = 0;
	pthread_mutex_unlock(&l->mu);
	djc_row_free(old);
}

lease_state lease_get(lease *l)
{
	pthread_mutex_lock(&l->mu);
	lease_state s = !l->token ? LEASE_HELD : l->cancelled ? LEASE_CANCELLED : l->lost || l->job_lost ? LEASE_LOST
		      : mono_now() - l->proved > l->lease ? LEASE_UNPROVEN : LEASE_HELD;
	pthread_mutex_unlock(&l->mu);
	return s;
}

void lease_proved(lease *l)
{
	pthread_mutex_lock(&l->mu);
	l->proved = mono_now();
	l->lost = 0;
	pthread_mutex_unlock(&l->mu);
}

int lease_stale(lease *l)
{
	pthread_mutex_lock(&l->mu);
	int s = l->lost || mono_now() - l->proved > l->lease / 2;
	pthread_mutex_unlock(&l->mu);
	return s;
}
