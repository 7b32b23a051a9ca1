/* worker_refresh.c - the refreshes of `djc worker` (docs/workers.md):
 * at most one refresh of a table per interval among all workers, taken
 * through the table's slot in ~djc_worker (worker.slot); and at once,
 * whatever the interval, by a worker whose start or commits upstream no
 * refresh has followed yet (worker.slot.now, by the slot's generation:
 * flush_dirty), so keys its own work made become jobs without waiting. */
#include "workloop.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double wloop_jitter(wloop *s, double lo, double hi)
{
	return lo + (hi - lo) * ((double)rand_r(&s->seed) / RAND_MAX);
}

/* Refresh tab, the slot of generation gen being ours (0: not known), and
 * mark that generation committed; why says what asked for it, for the log
 * ("interval", "start", "after:A"). *added: the jobs it made takeable. */
static int run_refresh(wloop *s, stab *tb, int64_t gen, const char *why, long *added)
{
	djc_conn *c = s->w->c;
	djc_refresh_options ro = DJC_REFRESH_OPTIONS_INIT;
	ro.delay = -1;   /* due at once, whatever the clocks say (as populate's refresh) */
	djc_refresh_result rr;
	int rc = djc_jobs_refresh(&rr, c, tb->t->name, &ro);
	if (rc) {
		/* it saw nothing: a refresh after this generation must follow */
		if (tb->dirty && gen > tb->gen0) tb->gen0 = gen;
		return rc;
	}
	*added = rr.added + rr.re_pended + rr.orphaned;
	worker_event("refresh %s gen=%lld added=%ld why=%s", tb->t->name, (long long)gen, rr.added, why);
	/* a refresh started after the baseline: what was missing is seen */
	if (gen > tb->gen0 && tb->gen0 >= 0) tb->dirty = 0;
	if (gen > 0) rc = slot_refreshed(c, tb->t->name, gen);
	return rc;
}

/* A failed refresh: a retryable one waits for the next try; any other
 * stops the worker (its message the failure), as a failed refresh fails
 * populate. */
static int refresh_failed(int rc)
{
	return rc == DJC_ECONN || rc == DJC_EBUSY ? DJC_OK : rc;
}

/* Refresh tab if its slot is ours to take (at most once per interval
 * among all workers); *added: the jobs it added. */
static int maybe_refresh(wloop *s, stab *tb, long *added)
{
	*added = 0;
	if (!s->p->refresh || mono_now() < tb->next_refresh) return DJC_OK;
	/* whoever takes the slot, it is not worth looking before about one
	 * interval from now (spread, so that waiting workers do not try at once) */
	tb->next_refresh = mono_now() + s->p->interval * wloop_jitter(s, 0.5, 1.5);
	int got = 0;
	int64_t gen = 0;
	int rc = slot_take(s->w->c, tb->t->name, s->p->interval, &got, &gen);
	if (!rc && got) rc = run_refresh(s, tb, gen, "interval", added);
	return refresh_failed(rc);
}

/* A table marked dirty (mark_dirty) gets its refresh now, not at the next
 * interval: unless one started since its baseline (by any worker: it sees
 * the keys), this worker takes the slot by that generation (worker.slot.now)
 * and refreshes. So keys made by this worker's commits upstream, or
 * inserted before it started, become jobs at once, and of the workers that
 * committed before one refresh started, one refreshes. *added: the jobs it
 * made takeable. */
static int flush_dirty(wloop *s, stab *tb, long *added)
{
	*added = 0;
	if (!tb->dirty) return DJC_OK;
	int64_t gen = 0, done = 0;
	int rc = slot_gens(s->w->c, tb->t->name, &gen, &done);
	if (rc) return refresh_failed(rc);
	if (tb->gen0 < 0) tb->gen0 = gen;   /* the baseline was not read: now will do (later than needed) */
	else if (gen > tb->gen0) {
		tb->dirty = 0;   /* another worker's refresh started since */
		return DJC_OK;
	}
	int got = 0;
	if ((rc = slot_take_after(s->w->c, tb->t->name, tb->gen0, &got))) return refresh_failed(rc);
	if (!got) {
		tb->dirty = 0;   /* taken by another worker since we read it: that refresh started after the baseline */
		return DJC_OK;
	}
	char why[300];
	if (tb->why < 0) snprintf(why, sizeof why, "start");
	else snprintf(why, sizeof why, "after:%s", s->tabs[tb->why].t->name);
	return refresh_failed(run_refresh(s, tb, tb->gen0 + 1, why, added));
}

int any_dirty(const wloop *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->tabs[i].dirty) return 1;
	return 0;
}

/* Nothing pending (due or not: a delayed job, a retry in its backoff) or
 * reserved is left in any served table, and for each, a refresh started
 * after this worker's start and after its last commit upstream has
 * committed, so no key it made is waiting to become a job downstream. */
int queue_empty(wloop *s)
{
	djc_conn *c = s->w->c;
	if (any_dirty(s)) return 0;
	for (size_t i = 0; i < s->n; i++) {
		stab *tb = &s->tabs[i];
		if (s->p->refresh) {
			int64_t gen = 0, done = 0;
			if (slot_gens(c, tb->t->name, &gen, &done) || tb->gen0 < 0 || done <= tb->gen0) return 0;
		}
		long n = 0;
		if (jobs_ready_count(c, tb->t, s->p->o->where_json, s->p->o->priority, &n) || n > 0) return 0;
	}
	return 1;
}

/* At the start, keys inserted before this worker started; after work on
 * table `from`, its rows make keys of the tables downstream (a key source
 * is made of ancestors). Each one's generation now is its baseline: a
 * refresh started after it sees those keys (flush_dirty, queue_empty).
 * Read after the commits, so a baseline is never too old; when it cannot
 * be read, flush_dirty reads it then. */
void mark_dirty(wloop *s, long from)
{
	if (!s->p->refresh) return;
	for (size_t i = 0; i < s->n; i++) {
		if (from >= 0 && !s->down[(size_t)from * s->n + i]) continue;
		stab *tb = &s->tabs[i];
		int64_t gen = 0, done = 0;
		tb->gen0 = slot_gens(s->w->c, tb->t->name, &gen, &done) ? -1 : gen;
		tb->dirty = 1;
		tb->why = from;
	}
}

int refresh_due(wloop *s, long *added)
{
	*added = 0;
	for (size_t i = 0; i < s->n; i++) {
		long a = 0, b = 0;
		if (s->tabs[i].gone) continue;
		int rc = maybe_refresh(s, &s->tabs[i], &a);
		if (!rc) rc = flush_dirty(s, &s->tabs[i], &b);
		if (rc && wloop_forgotten(s, i)) continue;   /* unadopted: the others are refreshed */
		if (rc) return rc;
		*added += a + b;
	}
	return DJC_OK;
}
