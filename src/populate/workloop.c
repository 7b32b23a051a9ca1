/* workloop.c - one `djc worker` process (djc_worker, worker_api.c): the
 * long-running form of populate with job reservation. Each worker process
 * serves several tables, upstream first, claiming and committing through
 * work_reserved (reserved.c, steered by work_hooks); when nothing can be
 * claimed it waits: for a notification where its connection can receive
 * one (PostgreSQL without a pooler: LISTEN, woken by refresh's NOTIFY),
 * else polling with jittered exponential backoff, so idle workers cost the
 * server a few cheap claims a minute each. What workers share goes
 * through the table ~djc_worker (worker_table.h), never their own memory:
 * the refresh slots (worker_refresh.c) and the durations of makes, so that
 * a worker with a deadline claims only jobs it can finish before it (their
 * 90th percentile), even a worker that has not made one of them yet.
 * docs/workers.md describes the model, its costs and its limits. */
#include "workloop.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POLL_MIN 0.1          /* the first wait after an empty claim (s) */
#define POLL_MAX 5.0          /* the longest between two looks when polling */
#define LISTEN_MAX 30.0       /* ... when woken by notifications (time-based changes: due, lapsed) */
#define YIELD_AFTER 10.0      /* on a downstream table, look upstream again after this (s) */
#define DEADLINE_MARGIN 1.0   /* seconds kept free before a deadline for the commit */

/* How many jobs of tab this worker can still finish before the deadline,
 * with `ahead` makes to run first (2^30 without a deadline). */
static long fit(wloop *s, stab *tb, long ahead)
{
	if (!s->p->deadline) return 1L << 30;
	double left = s->p->deadline - mono_now() - DEADLINE_MARGIN;
	if (left <= 0) return 0;
	double est = durations_p90(s->w->c, tb->t->name, &tb->d);
	if (est <= 0) return ahead ? 0 : 1;   /* unknown: one at a time, to learn */
	long k = (long)(left / est) - ahead;
	return k > 0 ? k : 0;
}

/* ------------------------------------------------------------ hooks */

static long hook_claim_size(void *arg, long batch, long ahead)
{
	wloop *s = arg;
	/* a downstream table is left now and then to look upstream again */
	if (s->cur > 0 && mono_now() >= s->yield_at) return 0;
	long k = fit(s, &s->tabs[s->cur], ahead);
	return k < batch ? k : batch;
}

static void hook_claimed(void *arg, size_t n) { ((wloop *)arg)->claimed += (long)n; }

static void hook_made(void *arg, double seconds)
{
	wloop *s = arg;
	stab *tb = &s->tabs[s->cur];
	durations_add(s->w->c, tb->t->name, &tb->d, seconds);
}

static int hook_gone(void *arg)
{
	wloop *s = arg;
	return wloop_forgotten(s, s->cur);
}

static const work_hooks HOOKS = {hook_claim_size, hook_claimed, hook_made, hook_gone};

/* ------------------------------------------------------------ tables that left */

int wloop_forgotten(wloop *s, size_t i)
{
	stab *tb = &s->tabs[i];
	djc_conn *c = s->w->c;
	if (tb->gone) return 1;
	if (!c->db || c->db->in_tx) return 0;
	char *failure = xstrdup(c->err);
	int has = 1;
	int rc = pipe_has(c, tb->t->name, &has);
	snprintf(c->err, sizeof c->err, "%s", failure);   /* the step's failure, as it was */
	free(failure);
	if (rc || has) return 0;
	tb->gone = 1;
	const char *how = tb->t->adopted ? "unadopted" : "dropped";
	/* one line for all the processes of the worker */
	if (!atomic_exchange(&s->p->left[tb->idx], 1))
		fprintf(stderr, "djc: warning: worker leaves out table %s, which was %s (it is no longer in the stored "
			"pipeline): its job in hand is not committed, the other tables are served\n", tb->t->name, how);
	worker_event("leave out %s: %s", tb->t->name, how);
	return 1;
}

/* Leave out the tables that left the stored pipeline (found by this
 * process, or told by another: wloop_params.left): the others keep their
 * order, their marks and what is downstream of what. 1 when none is left. */
static int prune_left(wloop *s)
{
	size_t n = s->n, k = 0, gone = 0;
	for (size_t i = 0; i < n && !gone; i++) gone = s->tabs[i].gone || atomic_load(&s->p->left[s->tabs[i].idx]);
	if (!gone) return n == 0;   /* (the common case: a look at shared memory, nothing allocated) */
	gone = 0;
	long *to = xcalloc(n + 1, sizeof *to);
	for (size_t i = 0; i < n; i++) {
		stab *tb = &s->tabs[i];
		if (!tb->gone && atomic_load(&s->p->left[tb->idx])) {
			tb->gone = 1;
			worker_event("leave out %s: %s", tb->t->name, tb->t->adopted ? "unadopted" : "dropped");
		}
		to[i] = tb->gone ? -1 : (long)k++;
		gone += tb->gone != 0;
	}
	if (gone) {
		unsigned char *down = xcalloc(k * k + 1, 1);
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++)
				if (to[i] >= 0 && to[j] >= 0) down[(size_t)to[i] * k + (size_t)to[j]] = s->down[i * n + j];
		for (size_t i = 0; i < n; i++) {
			if (to[i] < 0) continue;
			stab tb = s->tabs[i];
			if (tb.why >= 0) tb.why = to[tb.why];   /* (-1 when that one left: logged as the start) */
			s->tabs[to[i]] = tb;
		}
		free(s->down);
		s->down = down;
		s->n = k;
		s->cur = 0;
		worker_end(s->w);   /* a serve program of the table that left */
		s->w->gone = 0;
	}
	free(to);
	return s->n == 0;
}

/* ------------------------------------------------------------ waiting */

/* Wait up to secs: a relevant notification (jobs added to one of our
 * schema's tables) ends the wait early (returns 1). */
static int wait_for_work(wloop *s, double secs)
{
	if (secs < 0.01) secs = 0.01;
	double end = mono_now() + secs;
	while (!worker_stopping(s->w)) {
		double left = end - mono_now();
		if (left <= 0) return 0;
		if (s->listening) {
			char *payload = NULL;
			int rc = db_wait_notify(s->w->c->db, left, &payload);
			int ours = rc == 1 && payload && !strncmp(payload, s->prefix, strlen(s->prefix));
			if (ours) worker_event("wake %s", payload + strlen(s->prefix));
			free(payload);
			if (ours) return 1;
			if (rc >= 0) continue;
			/* the connection went: the next statement reconnects (and
			 * LISTENs again); until then, sleep */
			left = end - mono_now();
			if (left <= 0) return 0;
		}
		struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
		if (left > 0.5) ts = (struct timespec){0, 500000000};   /* signals and stops are seen within 0.5 s */
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* ------------------------------------------------------------ the loop */

static void use_table(wloop *s, size_t i)
{
	worker *w = s->w;
	/* a serve program makes one table's keys: another table's ends here */
	if (w->srv && i != s->cur) worker_end(w);
	s->cur = i;
	w->t = s->tabs[i].t;
	w->argv = s->tabs[i].argv;
	w->serve = s->tabs[i].serve;
	w->gone = 0;
	w->timeout = worker_timeout(w->o, w->t);   /* the table's `timeout =` line */
	pthread_mutex_lock(&w->lease.mu);   /* no token is held between claims */
	w->lease.t = w->t;
	pthread_mutex_unlock(&w->lease.mu);
	s->yield_at = mono_now() + YIELD_AFTER;
}

/* One worker process's life: returns why it stopped. Two timers: when to
 * look for work again (the backoff, reset by work, a notification, or a
 * refresh that added jobs) and when to try each table's refresh slot (an
 * interval); a wait lasts until the first of them, the deadline or the
 * idle limit, so an idle worker's refresh tries cost no extra claims. */
static int work_loop(wloop *s)
{
	worker *w = s->w;
	const djc_worker_options *o = s->p->o;
	double idle_since = mono_now(), backoff = POLL_MIN, claim_at = 0;
	int busy = 1;   /* since the last "idle" event */
	mark_dirty(s, -1);
	for (;;) {
		/* every table served left the stored pipeline: nothing is left to do */
		if (prune_left(s)) return DJC_WORKER_EMPTY;
		if (populate_signal) return DJC_WORKER_SIGNAL;
		if (populate_drain) return DJC_WORKER_DRAIN;
		if (worker_stopping(w)) return DJC_WORKER_FAILED;
		if (o->max_jobs > 0 && atomic_load(&w->sh->calls) >= o->max_jobs) return DJC_WORKER_MAX_JOBS;
		if (s->p->deadline && s->p->deadline - mono_now() <= DEADLINE_MARGIN) return DJC_WORKER_DEADLINE;
		long added = 0;
		if (refresh_due(s, &added)) {
			worker_error(w, NULL, w->c->err);
			return DJC_WORKER_FAILED;
		}
		if (prune_left(s)) return DJC_WORKER_EMPTY;
		if (added) claim_at = 0;   /* jobs appeared: look now */
		/* idle only once the keys of this worker's own commits are jobs */
		else if (o->idle_exit > 0 && mono_now() - idle_since >= o->idle_exit && !any_dirty(s)) return DJC_WORKER_IDLE;
		double now = mono_now();
		if (now >= claim_at) {
			int any_fits = 0;
			s->claimed = 0;
			for (size_t i = 0; i < s->n; i++) {
				if (s->tabs[i].gone || !fit(s, &s->tabs[i], 0)) continue;
				any_fits = 1;
				use_table(s, i);
				work_reserved(w);
				if (worker_stopping(w)) break;
				if (s->claimed) break;   /* work was found: look upstream again first */
			}
			if (s->claimed) {
				idle_since = mono_now();
				backoff = POLL_MIN;
				claim_at = 0;
				busy = 1;
				mark_dirty(s, (long)s->cur);   /* its rows may make keys downstream */
				continue;
			}
			if (worker_stopping(w)) continue;
			if (prune_left(s)) return DJC_WORKER_EMPTY;
			if (s->p->deadline && !any_fits) return DJC_WORKER_DEADLINE;
			if (o->until_empty && queue_empty(s)) return DJC_WORKER_EMPTY;
			now = mono_now();
			if (o->idle_exit > 0 && now - idle_since >= o->idle_exit && !any_dirty(s)) return DJC_WORKER_IDLE;
			if (busy) worker_event("idle");   /* once per stretch without work */
			busy = 0;
			claim_at = now + backoff * wloop_jitter(s, 0.5, 1.5);
			double cap = s->listening ? LISTEN_MAX : POLL_MAX;
			backoff = backoff * 2 > cap ? cap : backoff * 2;
		}
		/* wait for the first of: the next look, a refresh try, the
		 * deadline, the idle limit (or a notification) */
		double wait = claim_at - now;
		for (size_t i = 0; s->p->refresh && i < s->n; i++)
			if (s->tabs[i].next_refresh - now < wait) wait = s->tabs[i].next_refresh - now;
		if (s->p->deadline && s->p->deadline - DEADLINE_MARGIN - now < wait) wait = s->p->deadline - DEADLINE_MARGIN - now;
		if (o->idle_exit > 0 && idle_since + o->idle_exit - now < wait) wait = idle_since + o->idle_exit - now;
		if (wait_for_work(s, wait)) {
			claim_at = 0;
			backoff = POLL_MIN;
		}
	}
}

void wloop_run(worker *w, void *arg)
{
	const wloop_params *p = arg;
	wloop s = {.w = w, .p = p, .stop = -1};
	s.seed = (unsigned)getpid() ^ (unsigned)(mono_now() * 1e6);
	s.n = p->n;
	s.tabs = xcalloc(p->n, sizeof *s.tabs);
	s.down = xcalloc(p->n * p->n, 1);
	w->hooks = &HOOKS;
	w->hooks_arg = &s;
	int rc = DJC_OK;
	for (size_t i = 0; i < p->n && !rc; i++) {
		stab *tb = &s.tabs[i];
		tb->idx = i;
		if (!(rc = conn_table(w->c, p->names[i], &tb->t))) rc = jobs_ensure(w->c, tb->t);
		if (p->argv) {
			tb->argv = p->argv;
			tb->serve = p->serve;
		} else if (tb->t->make_serve_argv && tb->t->make_serve_argv[0]) {
			tb->argv = tb->t->make_serve_argv;
			tb->serve = 1;
		} else
			tb->argv = tb->t->make_argv;
		tb->d.flushed_at = mono_now();
		tb->next_refresh = 0;   /* try the slot at once: of workers starting together one wins */
		if (!rc) durations_read(w->c, tb->t->name, &tb->d);
	}
	if (rc) {
		worker_error(w, NULL, w->c->err);
		atomic_fetch_add(&p->stops[DJC_WORKER_FAILED], 1);
		free(s.tabs);
		free(s.down);
		return;
	}
	for (size_t i = 0; i < s.n; i++)
		for (size_t j = 0; j < s.n; j++) s.down[i * s.n + j] = (unsigned char)table_is_ancestor(w->c, s.tabs[j].t, s.tabs[i].t);
	/* notifications wake us where the connection can hear them */
	snprintf(s.prefix, sizeof s.prefix, "%s.", w->c->db->schema ? w->c->db->schema : "");
	s.listening = db_listen(w->c->db, JOBS_CHANNEL) == DJC_OK;
	{
		sb_t names = SB_INIT;
		for (size_t i = 0; i < s.n; i++) sb_printf(&names, "%s%s", i ? "," : "", s.tabs[i].t->name);
		worker_event("start listen=%s tables=%s", s.listening ? "yes" : "no", sb_str(&names));
		sb_free(&names);
	}
	int why = work_loop(&s);
	worker_event("stop %s", djc_worker_stop_name(why));
	for (size_t i = 0; i < s.n; i++) durations_flush(w->c, s.tabs[i].t->name, &s.tabs[i].d);
	atomic_fetch_add(&p->stops[why], 1);
	free(s.tabs);
	free(s.down);
}

