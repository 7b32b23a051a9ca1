/* workloop.c - djc_worker (`djc worker`): the long-running form of populate
 * with job reservation. Each worker process serves several tables,
 * upstream first, claiming and committing through work_reserved
 * (reserved.c, steered by work_hooks); when nothing can be claimed it
 * waits: for a notification where its connection can receive one
 * (PostgreSQL without a pooler: LISTEN, woken by refresh's NOTIFY), else
 * polling with jittered exponential backoff, so idle workers cost the
 * server a few cheap claims a minute each. Workers share two things per
 * table through the table ~djc_worker, never through their own memory:
 *   - the refresh slot: at most one refresh of a table per interval among
 *     all workers, taken by an atomic conditional UPDATE (worker.slot);
 *     and at once, whatever the interval, by a worker whose start or
 *     commits upstream no refresh has followed yet (worker.slot.now, by
 *     the slot's generation: flush_dirty);
 *   - the durations of makes, as a histogram, so that a worker with a
 *     deadline claims only jobs it can finish before it (their 90th
 *     percentile), even a worker that has not made one of them yet.
 * docs/workers.md describes the model, its costs and its limits. */
#include "worker.h"
#include "util/config.h"
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define WORKER_TABLE "~djc_worker"
#define NBUCKET 48            /* duration buckets: below 1/16 s, then a factor sqrt(2) each */
#define POLL_MIN 0.1          /* the first wait after an empty claim (s) */
#define POLL_MAX 5.0          /* the longest between two looks when polling */
#define LISTEN_MAX 30.0       /* ... when woken by notifications (time-based changes: due, lapsed) */
#define YIELD_AFTER 10.0      /* on a downstream table, look upstream again after this (s) */
#define STATS_FLUSH_N 16      /* durations are added to the shared histogram every 16 makes */
#define STATS_FLUSH_S 30.0    /* ... or 30 s */
#define STATS_READ_S 60.0     /* the shared histogram is read again after this */
#define DEADLINE_MARGIN 1.0   /* seconds kept free before a deadline for the commit */

/* ------------------------------------------------------------ the table
 * ~djc_worker: one row per served table (name = the table's name).
 *   refresh_at     when the last refresh by a worker started (database clock)
 *   refresh_gen    how many refreshes were started by workers (0: none yet)
 *   refreshed_gen  the generation of the last one that committed
 *   refresh_host, refresh_pid  who started the last one
 *   d0 .. d47      how many makes took a duration in each bucket (bucket_of)
 * Every statement below names it with db_qtable and takes values as bound
 * parameters. */

static const attr W_KEY = {.name = "name", .type = {T_VARCHAR, 255, 0, NULL, 0}};
static const attr W_COLS[] = {
	{.name = "refresh_at", .type = {T_DATETIME, 3, 0, NULL, 0}},
	{.name = "refresh_gen", .type = {T_INT64, 0, 0, NULL, 0}},
	{.name = "refreshed_gen", .type = {T_INT64, 0, 0, NULL, 0}},
	{.name = "refresh_host", .type = {T_VARCHAR, 255, 0, NULL, 0}},
	{.name = "refresh_pid", .type = {T_INT64, 0, 0, NULL, 0}},
};
#define NWCOLS (sizeof W_COLS / sizeof *W_COLS)

/* worker.slot - take the refresh slot of a table: only a row whose last
 * refresh started at least an interval ago (the caller's interval: workers
 * with different ones coexist) matches, and the UPDATE sets that time to
 * now, so of any number of workers trying at once exactly one changes the
 * row (the others see the new time, or wait for its lock and then see it)
 * and refreshes. Arguments: host, pid, name, -interval. */
static const char SQL_SLOT[] =
	"UPDATE {W} SET refresh_at = {now}, refresh_gen = refresh_gen + 1, refresh_host = ?, refresh_pid = ? "
	"WHERE name = ? AND (refresh_gen = 0 OR refresh_at <= {now+?})";
/* worker.slot.now - take the refresh slot of a table at once, whatever the
 * interval, if no refresh started since generation G (read by the caller
 * after its commits, or at its start): of workers trying together with the
 * same G exactly one changes the row; for the others a refresh started
 * after G, which sees what they committed. Arguments: host, pid, name, G. */
static const char SQL_SLOT_NOW[] =
	"UPDATE {W} SET refresh_at = {now}, refresh_gen = refresh_gen + 1, refresh_host = ?, refresh_pid = ? "
	"WHERE name = ? AND refresh_gen = ?";
/* worker.gen - the generation of the slot just taken (with who took it,
 * to be sure it is ours), or the generations a worker compares before
 * --until-empty lets it go. Argument: name. */
static const char SQL_GEN[] = "SELECT refresh_gen, refreshed_gen, refresh_host, refresh_pid FROM {W} WHERE name = ?";
/* worker.refreshed - the refresh of generation G committed. Arguments: G, name, G. */
static const char SQL_REFRESHED[] = "UPDATE {W} SET refreshed_gen = ? WHERE name = ? AND refreshed_gen < ?";
/* worker.add - the row of a served table, when missing: its slot open
 * (refresh_gen 0). Arguments: name. */
static const char SQL_ADD[] =
	"{insert_ignore} {W} (name, refresh_at, refresh_gen, refreshed_gen, {dcols}) VALUES (?, {now}, 0, 0, {dzeros}){insert_ignore_tail}";
/* worker.durations - the shared histogram. Argument: name. */
static const char SQL_DURATIONS[] = "SELECT {dcols} FROM {W} WHERE name = ?";
/* worker.durations.halve - old makes count half as much: done by whoever
 * reads more than STATS_HALVE of them, so the estimate follows a table
 * whose makes got slower or faster. Two halving at once only age it
 * faster. Integer halves in every dialect. Argument: name. */
static const char SQL_HALVE[] = "UPDATE {W} SET {dhalves} WHERE name = ?";
#define STATS_HALVE 4096

/* Expand a statement above: {W} the table, {now} {now+?} the database's
 * clock, {insert_ignore} {insert_ignore_tail}, {dcols} "d0, ..., d47",
 * {dzeros} "0, ..., 0", {dhalves} "d0 = (d0 - d0 % 2) / 2, ...". */
static void wsql(djc_conn *c, const char *s, sb_t *q)
{
	for (const char *p = s; *p;) {
		if (*p != '{') { sb_addc(q, *p++); continue; }
		const char *e = strchr(p, '}');
		size_t n = (size_t)(e - p - 1);
#define IS(lit) (n == sizeof lit - 1 && !strncmp(p + 1, lit, n))
		if (IS("W")) db_qtable(c->db, q, WORKER_TABLE);
		else if (IS("now")) c->db->drv->now(q);
		else if (IS("now+?")) c->db->drv->now_plus(q);
		else if (IS("insert_ignore")) sb_add(q, c->db->drv->insert_ignore_head);
		else if (IS("insert_ignore_tail")) sb_add(q, c->db->drv->insert_ignore_tail);
		else if (IS("dcols")) for (int b = 0; b < NBUCKET; b++) sb_printf(q, "%sd%d", b ? ", " : "", b);
		else if (IS("dzeros")) for (int b = 0; b < NBUCKET; b++) sb_add(q, b ? ", 0" : "0");
		else if (IS("dhalves")) for (int b = 0; b < NBUCKET; b++) sb_printf(q, "%sd%d = (d%d - d%d %% 2) / 2", b ? ", " : "", b, b, b);
#undef IS
		p = e + 1;
	}
}

static int wexec(djc_conn *c, const char *what, const char *tmpl, const val_t *p, size_t n, db_res **out)
{
	sb_t q = SB_INIT;
	wsql(c, tmpl, &q);
	int rc = db_exec(c->db, sb_str(&q), p, n, out);
	sb_free(&q);
	return rc ? conn_dbfail(c, rc, what) : DJC_OK;
}

/* The table and the rows of the served tables, when missing. Checked by
 * reading first: a thousand workers starting together create nothing
 * when it exists, and CREATE TABLE IF NOT EXISTS racing itself can fail
 * on PostgreSQL (then the table is there: looked at again). */
static int worker_table_ensure(djc_conn *c, table *const *tabs, size_t n)
{
	sb_t q = SB_INIT;
	sb_add(&q, "SELECT count(*) FROM ");
	db_qtable(c->db, &q, WORKER_TABLE);
	int rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
	if (rc == DJC_ECONN) { sb_free(&q); return conn_dbfail(c, rc, WORKER_TABLE); }
	if (rc) {
		sb_t d = SB_INIT;
		sb_add(&d, "CREATE TABLE IF NOT EXISTS ");
		db_qtable(c->db, &d, WORKER_TABLE);
		sb_add(&d, " (");
		ddl_column(c, &d, &W_KEY, 1);
		for (size_t i = 0; i < NWCOLS; i++) {
			sb_add(&d, ", ");
			ddl_column(c, &d, &W_COLS[i], i < 3);
		}
		for (int b = 0; b < NBUCKET; b++) {
			char nm[16];
			snprintf(nm, sizeof nm, "d%d", b);
			attr a = {.name = nm, .type = {T_INT64, 0, 0, NULL, 0}};
			sb_add(&d, ", ");
			ddl_column(c, &d, &a, 1);
		}
		sb_add(&d, ", PRIMARY KEY (");
		db_qi(c->db, &d, "name");
		sb_add(&d, "))");
		sb_add(&d, c->db->table_suffix);
		rc = db_exec(c->db, sb_str(&d), NULL, 0, NULL);
		if (rc && db_exec(c->db, sb_str(&q), NULL, 0, NULL) == DJC_OK) rc = DJC_OK;   /* another worker made it */
		if (rc) rc = conn_dbfail(c, rc, WORKER_TABLE);
		sb_free(&d);
	}
	sb_free(&q);
	for (size_t i = 0; !rc && i < n; i++) {
		val_t name = val_text(tabs[i]->name);
		rc = wexec(c, "worker.add", SQL_ADD, &name, 1, NULL);
		val_free(&name);
	}
	return rc;
}

/* ------------------------------------------------------- durations */

/* The upper end of bucket b (s): 2^((b - 8) / 2), so bucket 0 holds
 * makes under 1/16 s and bucket b >= 1 those from top(b-1) to top(b).
 * (No libm: libdjc links without it.) */
static double bucket_top(int b)
{
	double x = 1.0 / 16;
	for (int i = 0; i < b; i++) x *= 1.4142135623730951;
	return x;
}

static int bucket_of(double s)
{
	int b = 0;
	while (b < NBUCKET - 1 && !(s < bucket_top(b))) b++;
	return b;
}

/* ---------------------------------------------------------- the state */

typedef struct stab {
	table *t;
	char *const *argv;
	int serve;                  /* argv is a serve program (the table's make_serve line) */
	double next_refresh;        /* monotonic: when to try the refresh slot again */
	int64_t gen0;               /* a refresh started after this generation sees this worker's rows
	                             * upstream (and, --until-empty, must have committed); -1 unknown */
	int dirty;                  /* keys may be missing from the jobs table that no refresh started
	                             * after gen0 has seen: refresh now (flush_dirty) */
	long why;                   /* what made it dirty: the index of the upstream table worked on, or -1: the start */
	long shared[NBUCKET];       /* the histogram as last read */
	long local[NBUCKET];        /* this process's makes, not yet added to it */
	long nlocal;
	double read_at, flushed_at;
} stab;

/* What every worker process of one djc_worker call shares (the parent's
 * memory, copied into each child by fork; stops is shared memory). */
typedef struct wloop_params {
	const djc_worker_options *o;
	char **names;               /* the served tables, upstream first */
	size_t n;
	char *const *argv;          /* --make or --make-serve, or NULL: each table's make line */
	int serve;                  /* argv is a serve program */
	double deadline;            /* monotonic; 0 = none */
	double interval;            /* refresh interval (s) */
	int refresh;                /* refresh at all */
	atomic_long *stops;         /* [DJC_WORKER_NSTOPS], shared */
} wloop_params;

typedef struct wloop {
	worker *w;
	const wloop_params *p;
	stab *tabs;
	size_t n, cur;
	unsigned char *down;        /* down[i * n + j]: table j is downstream of table i (its rows can make j's keys) */
	double yield_at;
	long claimed;               /* jobs claimed since the loop last looked */
	int listening;
	char prefix[80];            /* "schema." of our notifications' payloads */
	unsigned seed;
	int stop;                   /* djc_worker_stop, or -1 */
} wloop;

static double jitter(wloop *s, double lo, double hi)
{
	return lo + (hi - lo) * ((double)rand_r(&s->seed) / RAND_MAX);
}

/* Read the shared histogram of tab (a failure keeps the old one). */
static void stats_read(wloop *s, stab *tb)
{
	djc_conn *c = s->w->c;
	val_t name = val_text(tb->t->name);
	db_res *r = NULL;
	long tot = 0;
	if (wexec(c, "worker.durations", SQL_DURATIONS, &name, 1, &r) == DJC_OK && r->nrows == 1)
		for (int b = 0; b < NBUCKET; b++) tot += tb->shared[b] = (long)db_cell_int(r, 0, (size_t)b);
	db_res_free(r);
	if (tot > STATS_HALVE && wexec(c, "worker.durations.halve", SQL_HALVE, &name, 1, NULL) == DJC_OK)
		for (int b = 0; b < NBUCKET; b++) tb->shared[b] /= 2;
	val_free(&name);
	tb->read_at = mono_now();
}

/* Add this process's durations to the shared histogram: one UPDATE of the
 * table's row, only the buckets that changed. */
static void stats_flush(wloop *s, stab *tb)
{
	if (!tb->nlocal) return;
	djc_conn *c = s->w->c;
	sb_t q = SB_INIT;
	pvec p = {0};
	sb_add(&q, "UPDATE ");
	db_qtable(c->db, &q, WORKER_TABLE);
	sb_add(&q, " SET ");
	int first = 1;
	for (int b = 0; b < NBUCKET; b++) {
		if (!tb->local[b]) continue;
		sb_printf(&q, "%sd%d = d%d + ?", first ? "" : ", ", b, b);
		pvec_push(&p, val_int(tb->local[b]));
		first = 0;
	}
	sb_add(&q, " WHERE name = ?");
	pvec_push(&p, val_text(tb->t->name));
	/* worker.durations.add */
	if (db_exec(c->db, sb_str(&q), p.v, p.n, NULL) == DJC_OK) {
		for (int b = 0; b < NBUCKET; b++) { tb->shared[b] += tb->local[b]; tb->local[b] = 0; }
		tb->nlocal = 0;
	}
	tb->flushed_at = mono_now();
	sb_free(&q);
	pvec_free(&p);
}

/* The 90th percentile of the durations of tab's makes (the top of its
 * bucket), or -1 when none is known yet. */
static double p90(wloop *s, stab *tb)
{
	if (mono_now() - tb->read_at > STATS_READ_S) stats_read(s, tb);
	long tot = 0;
	for (int b = 0; b < NBUCKET; b++) tot += tb->shared[b] + tb->local[b];
	if (!tot) return -1;
	long want = (tot * 9 + 9) / 10, acc = 0;
	for (int b = 0; b < NBUCKET; b++) {
		acc += tb->shared[b] + tb->local[b];
		if (acc >= want) return bucket_top(b);
	}
	return bucket_top(NBUCKET - 1);
}

/* How many jobs of tab this worker can still finish before the deadline,
 * with `ahead` makes to run first (2^30 without a deadline). */
static long fit(wloop *s, stab *tb, long ahead)
{
	if (!s->p->deadline) return 1L << 30;
	double left = s->p->deadline - mono_now() - DEADLINE_MARGIN;
	if (left <= 0) return 0;
	double est = p90(s, tb);
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
	tb->local[bucket_of(seconds)]++;
	tb->nlocal++;
	if (tb->nlocal >= STATS_FLUSH_N || mono_now() - tb->flushed_at > STATS_FLUSH_S) stats_flush(s, tb);
}

static const work_hooks HOOKS = {hook_claim_size, hook_claimed, hook_made};

/* ---------------------------------------------------------- refresh */

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
	if (gen > 0) {
		val_t g[3] = {val_int(gen), val_text(tb->t->name), val_int(gen)};
		rc = wexec(c, "worker.refreshed", SQL_REFRESHED, g, 3, NULL);
		val_free(&g[1]);
	}
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
 * among all workers); *added: the jobs it added. Taking the slot is one
 * autocommit UPDATE (what an idle worker pays per interval); the winner
 * then reads the generation it started, and marks it committed after the
 * refresh. */
static int maybe_refresh(wloop *s, stab *tb, long *added)
{
	*added = 0;
	if (!s->p->refresh || mono_now() < tb->next_refresh) return DJC_OK;
	djc_conn *c = s->w->c;
	/* whoever takes the slot, it is not worth looking before about one
	 * interval from now (spread, so that waiting workers do not try at once) */
	tb->next_refresh = mono_now() + s->p->interval * jitter(s, 0.5, 1.5);
	int64_t gen = 0;
	long got = 0;
	db_res *r = NULL;
	val_t a[4] = {val_text(jobs_host()), val_int(getpid()), val_text(tb->t->name), val_float(-s->p->interval)};
	int rc = wexec(c, "worker.slot", SQL_SLOT, a, 4, &r);
	if (!rc) got = (long)r->affected;
	db_res_free(r);
	r = NULL;
	/* the generation we started: the row still names us (another worker
	 * could take the slot only an interval later, or at once by the
	 * generation we started, which it cannot have read yet) */
	if (!rc && got == 1 && !(rc = wexec(c, "worker.gen", SQL_GEN, &a[2], 1, &r)) && r->nrows == 1) {
		const char *h = db_cell_text(r, 0, 2);
		if (h && !strcmp(h, jobs_host()) && db_cell_int(r, 0, 3) == (int64_t)getpid()) gen = db_cell_int(r, 0, 0);
	}
	db_res_free(r);
	for (int i = 0; i < 4; i++) val_free(&a[i]);
	if (!rc && got == 1) rc = run_refresh(s, tb, gen, "interval", added);
	return refresh_failed(rc);
}

/* The generations of tab: started (*gen) and committed (*done). */
static int read_gens(wloop *s, stab *tb, int64_t *gen, int64_t *done)
{
	db_res *r = NULL;
	val_t name = val_text(tb->t->name);
	int rc = wexec(s->w->c, "worker.gen", SQL_GEN, &name, 1, &r);
	if (!rc && r->nrows != 1) rc = conn_fail(s->w->c, DJC_ENOTFOUND, "%s has no row for %s", WORKER_TABLE, tb->t->name);
	if (!rc) {
		*gen = db_cell_int(r, 0, 0);
		*done = db_cell_int(r, 0, 1);
	}
	db_res_free(r);
	val_free(&name);
	return rc;
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
	int rc = read_gens(s, tb, &gen, &done);
	if (rc) return refresh_failed(rc);
	if (tb->gen0 < 0) tb->gen0 = gen;   /* the baseline was not read: now will do (later than needed) */
	else if (gen > tb->gen0) {
		tb->dirty = 0;   /* another worker's refresh started since */
		return DJC_OK;
	}
	db_res *r = NULL;
	val_t a[4] = {val_text(jobs_host()), val_int(getpid()), val_text(tb->t->name), val_int(tb->gen0)};
	rc = wexec(s->w->c, "worker.slot.now", SQL_SLOT_NOW, a, 4, &r);
	long got = rc ? 0 : (long)r->affected;
	db_res_free(r);
	for (int i = 0; i < 4; i++) val_free(&a[i]);
	if (rc) return refresh_failed(rc);
	if (got != 1) {
		tb->dirty = 0;   /* taken by another worker since we read it: that refresh started after the baseline */
		return DJC_OK;
	}
	char why[300];
	if (tb->why < 0) snprintf(why, sizeof why, "start");
	else snprintf(why, sizeof why, "after:%s", s->tabs[tb->why].t->name);
	return refresh_failed(run_refresh(s, tb, tb->gen0 + 1, why, added));
}

/* Whether a table still waits for its refresh (flush_dirty). */
static int any_dirty(const wloop *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->tabs[i].dirty) return 1;
	return 0;
}

/* --until-empty: nothing pending (due or not: a delayed job, a retry in
 * its backoff) or reserved is left in any served table, and for each, a
 * refresh started after this worker's start and after its last commit
 * upstream has committed, so no key it made is waiting to become a job
 * downstream. */
static int queue_empty(wloop *s)
{
	djc_conn *c = s->w->c;
	if (any_dirty(s)) return 0;
	for (size_t i = 0; i < s->n; i++) {
		stab *tb = &s->tabs[i];
		if (s->p->refresh) {
			int64_t gen = 0, done = 0;
			if (read_gens(s, tb, &gen, &done) || tb->gen0 < 0 || done <= tb->gen0) return 0;
		}
		long n = 0;
		if (jobs_ready_count(c, tb->t, s->p->o->where_json, s->p->o->priority, &n) || n > 0) return 0;
	}
	return 1;
}

/* Mark the tables that may have keys no refresh has seen: at the start
 * (from < 0) every served table (keys inserted before this worker
 * started); after work on table `from`, the served tables downstream of
 * it (its rows make their keys; a key source is made of ancestors). Each
 * one's generation now is its baseline: a refresh started after it sees
 * those keys (flush_dirty, queue_empty). Read after the commits, so a
 * baseline is never too old; when it cannot be read, flush_dirty reads it
 * then. */
static void mark_dirty(wloop *s, long from)
{
	if (!s->p->refresh) return;
	for (size_t i = 0; i < s->n; i++) {
		if (from >= 0 && !s->down[(size_t)from * s->n + i]) continue;
		stab *tb = &s->tabs[i];
		int64_t gen = 0, done = 0;
		tb->gen0 = read_gens(s, tb, &gen, &done) ? -1 : gen;
		tb->dirty = 1;
		tb->why = from;
	}
}

/* The refreshes due: each table's slot when its interval is over, and the
 * tables marked dirty at once. DJC_OK with *added the jobs they made
 * takeable, or a failure that stops the worker. */
static int refresh_due(wloop *s, long *added)
{
	*added = 0;
	for (size_t i = 0; i < s->n; i++) {
		long a = 0, b = 0;
		int rc = maybe_refresh(s, &s->tabs[i], &a);
		if (!rc) rc = flush_dirty(s, &s->tabs[i], &b);
		if (rc) return rc;
		*added += a + b;
	}
	return DJC_OK;
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
		if (added) claim_at = 0;   /* jobs appeared: look now */
		/* idle only once the keys of this worker's own commits are jobs */
		else if (o->idle_exit > 0 && mono_now() - idle_since >= o->idle_exit && !any_dirty(s)) return DJC_WORKER_IDLE;
		double now = mono_now();
		if (now >= claim_at) {
			int any_fits = 0;
			s->claimed = 0;
			for (size_t i = 0; i < s->n; i++) {
				if (!fit(s, &s->tabs[i], 0)) continue;
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
			if (s->p->deadline && !any_fits) return DJC_WORKER_DEADLINE;
			if (o->until_empty && queue_empty(s)) return DJC_WORKER_EMPTY;
			now = mono_now();
			if (o->idle_exit > 0 && now - idle_since >= o->idle_exit && !any_dirty(s)) return DJC_WORKER_IDLE;
			if (busy) worker_event("idle");   /* once per stretch without work */
			busy = 0;
			claim_at = now + backoff * jitter(s, 0.5, 1.5);
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

/* A worker process (this one, or a child of the pool) serving the tables. */
static void wloop_run(worker *w, void *arg)
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
		if (!(rc = conn_table(w->c, p->names[i], &tb->t))) rc = jobs_ensure(w->c, tb->t);
		if (p->argv) {
			tb->argv = p->argv;
			tb->serve = p->serve;
		} else if (tb->t->make_serve_argv && tb->t->make_serve_argv[0]) {
			tb->argv = tb->t->make_serve_argv;
			tb->serve = 1;
		} else
			tb->argv = tb->t->make_argv;
		tb->flushed_at = mono_now();
		tb->next_refresh = 0;   /* try the slot at once: of workers starting together one wins */
		if (!rc) stats_read(&s, tb);
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
	for (size_t i = 0; i < s.n; i++) stats_flush(&s, &s.tabs[i]);
	atomic_fetch_add(&p->stops[why], 1);
	free(s.tabs);
	free(s.down);
}

/* ------------------------------------------------------------ the API */

void djc_worker_options_init(djc_worker_options *o)
{
	djc_worker_options d = DJC_WORKER_OPTIONS_INIT;
	*o = d;
}

void djc_worker_result_free(djc_worker_result *r)
{
	if (!r) return;
	for (size_t i = 0; i < r->n_errors; i++) {
		free(r->errors[i].key_json);
		free(r->errors[i].message);
		if (r->error_tables) free(r->error_tables[i]);
	}
	free(r->errors);
	free(r->error_tables);
	free(r->failure);
	for (size_t i = 0; i < r->n_tables; i++) free(r->tables[i]);
	free(r->tables);
	free(r);
}

const char *djc_worker_stop_name(int stop)
{
	static const char *const names[DJC_WORKER_NSTOPS] = {"idle", "max_jobs", "empty", "deadline", "signal", "failed", "drain"};
	return stop >= 0 && stop < DJC_WORKER_NSTOPS ? names[stop] : "unknown";
}


/* The tables to serve, upstream first (pipeline order), each once. */
static int served_tables(djc_conn *c, const char *const *names, size_t n, table ***out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	int rc = pipe_load(c);
	if (rc) return rc;
	for (size_t i = 0; i < n; i++) {
		table *t;
		if ((rc = conn_table(c, names[i], &t))) return rc;
		if (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED)
			return conn_fail(c, DJC_EINVAL, "table %s is %s: only computed and imported tables are populated", t->name,
					 tier_name(t->tier));
	}
	table **v = xcalloc(c->pipe->n + 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < c->pipe->n; i++) {
		table *t = c->pipe->tables[i];
		if (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED) continue;
		int want = n == 0;
		for (size_t j = 0; j < n && !want; j++) {
			table *u = NULL;
			conn_table(c, names[j], &u);
			want = u == t;
		}
		if (want) v[k++] = t;
	}
	if (!k) {
		free(v);
		return conn_fail(c, DJC_EINVAL, "the pipeline has no computed or imported table to serve");
	}
	*out = v;
	*nout = k;
	return DJC_OK;
}

int djc_worker(djc_worker_result **out, djc_conn *c, const char *const *names, size_t nnames,
	       const djc_worker_options *o)
{
	if (!out) return c ? conn_fail(c, DJC_EINVAL, "djc_worker: out is NULL") : DJC_EINVAL;
	*out = NULL;
	djc_worker_options defo = DJC_WORKER_OPTIONS_INIT;
	if (!o) o = &defo;
	if (o->version == 1) {
		/* a caller built against version 1 (its struct ends before make_serve_argv) */
		memcpy(&defo, o, offsetof(djc_worker_options, make_serve_argv));
		defo.version = DJC_WORKER_OPTIONS_VERSION;
		o = &defo;
	} else if (o->version != DJC_WORKER_OPTIONS_VERSION)
		return conn_fail(c, DJC_EINVAL, "worker options version %d is not %d (use DJC_WORKER_OPTIONS_INIT)", o->version,
				 DJC_WORKER_OPTIONS_VERSION);
	if (nnames && !names) return conn_fail(c, DJC_EINVAL, "%zu tables announced, none given (NULL)", nnames);
	if (o->max_jobs < 0 || !(o->idle_exit >= 0) || !(o->deadline >= 0) || !(o->refresh_interval >= 0) ||
	    (o->timeout != DJC_TIMEOUT_NONE && config_limit("timeout", o->timeout)) ||
	    (o->priority != -1 && config_limit("priority", (double)o->priority)) || o->processes < 0 || o->processes > DJC_MAX_PROCESSES)
		return conn_fail(c, DJC_EINVAL, "worker options out of range (max_jobs, idle_exit, deadline, refresh_interval >= 0; "
				 "timeout 0 to 1e9 or DJC_TIMEOUT_NONE; priority -1 or 0 to 2147483647; processes 1 to %d)", DJC_MAX_PROCESSES);
	char *const *argv = (char *const *)o->make_argv, *const *sargv = (char *const *)o->make_serve_argv;
	if (argv && !argv[0]) argv = NULL;
	if (sargv && !sargv[0]) sargv = NULL;
	if (!!o->make + !!argv + !!sargv > 1)
		return conn_fail(c, DJC_EINVAL, "give the worker one make: a C make, make_argv or make_serve_argv");
	int serve = sargv != NULL;
	if (serve) argv = sargv;
	/* SIGUSR1 from here on: a drain asked while the worker sets up stops it
	 * before its first job instead of ending the process */
	drain_saved ds;
	drain_catch(&ds);
	table **tabs = NULL;
	size_t n = 0;
	int rc = served_tables(c, names, nnames, &tabs, &n);
	if (rc) {
		drain_release(&ds);
		return rc;
	}
	if ((o->make || argv) && n > 1) {
		rc = conn_fail(c, DJC_EINVAL, "a make given to the worker serves one table, and %zu would be served (%s, %s%s): "
			       "name the table", n, tabs[0]->name, tabs[1]->name, n > 2 ? ", ..." : "");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (!o->make && !argv && (!tabs[i]->make_argv || !tabs[i]->make_argv[0]) &&
		    (!tabs[i]->make_serve_argv || !tabs[i]->make_serve_argv[0])) {
			rc = conn_fail(c, DJC_EINVAL, "table %s has no make: give --make PROGRAM (or a 'make = ...' or "
				       "'make_serve = ...' line in its definition)", tabs[i]->name);
			goto out;
		}
		if (o->where_json) {
			sb_t tmp = SB_INIT;
			pvec pv = {0};
			rc = where_build(c, tabs[i], o->where_json, NULL, 1, &tmp, &pv);
			sb_free(&tmp);
			pvec_free(&pv);
			if (rc) goto out;
		}
		if ((rc = jobs_ensure(c, tabs[i]))) goto out;
	}
	if ((rc = worker_table_ensure(c, tabs, n))) goto out;

	/* what work_reserved reads: populate's options, a failed make recorded and passed */
	djc_populate_options po = DJC_POPULATE_OPTIONS_INIT;
	po.reserve_jobs = 1;
	po.max_calls = o->max_jobs;
	po.priority = o->priority;
	po.suppress_errors = 1;
	po.where_json = o->where_json;
	po.make = o->make;
	po.payload = o->payload;
	po.make_argv = serve ? NULL : (const char *const *)argv;
	po.make_serve_argv = serve ? (const char *const *)argv : NULL;
	po.timeout = o->timeout;

	size_t shsz = sizeof(counters) + DJC_WORKER_NSTOPS * sizeof(atomic_long);
	void *mem = mmap(NULL, shsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) { rc = conn_fail(c, DJC_ERROR, "mmap: %s", strerror(errno)); goto out; }
	memset(mem, 0, shsz);
	counters *sh = mem;
	atomic_long *stops = (atomic_long *)((char *)mem + sizeof(counters));

	wloop_params sp = {.o = o, .n = n, .argv = argv, .serve = serve, .stops = stops};
	sp.names = xcalloc(n, sizeof(char *));
	for (size_t i = 0; i < n; i++) sp.names[i] = tabs[i]->name;
	sp.refresh = o->refresh >= 0 ? o->refresh : config_bool("jobs.auto_refresh");
	sp.interval = o->refresh_interval > 0 ? o->refresh_interval : 10;
	if (o->deadline > 0) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		sp.deadline = mono_now() + (o->deadline - ((double)now.tv_sec + now.tv_nsec / 1e9));
		if (sp.deadline <= 0) sp.deadline = 1e-9;   /* already past */
	}

	djc_populate_result pres = {0};
	struct sigaction sa = {0}, old_int, old_term;
	sa.sa_handler = signals_stop;
	sigemptyset(&sa.sa_mask);
	populate_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	/* a drain (SIGUSR1, caught since the start): no new job; the running
	 * makes finish and commit (the --processes parent forwards it to every
	 * worker process) */
	signal(SIGPIPE, SIG_IGN);

	int procs = o->processes < 1 ? 1 : o->processes;
	if (procs == 1) {
		worker w = {0};
		w.c = c; w.t = tabs[0]; w.o = &po; w.argv = argv; w.sh = sh; w.res = &pres; w.outfd = -1;
		if (!(rc = lease_start(&w.lease, c, tabs[0]))) {
			wloop_run(&w, &sp);
			lease_stop(&w.lease);
			worker_end(&w);
		}
	} else {
		progress prog;
		progress_start(&prog, tabs[0]->name, 0, 0);
		pool_work pw = {wloop_run, &sp, tabs, n};
		rc = pool_run(c, tabs[0], &po, argv, 0, sh, NULL, procs, &pres, &prog, &pw);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);

	djc_worker_result *res = xcalloc(1, sizeof *res);
	res->success_count = atomic_load(&sh->success);
	res->error_count = atomic_load(&sh->errors);
	res->skipped_count = atomic_load(&sh->skipped);
	res->lost_count = atomic_load(&sh->lost);
	res->retried_count = atomic_load(&sh->retried);
	res->cancelled_count = atomic_load(&sh->cancelled);
	res->drained = populate_drain != 0;
	res->failure = worker_failure_text(sh);
	res->n_errors = pres.n_errors;
	res->errors = pres.errors;
	res->error_tables = pres.error_tables;
	res->interrupted = populate_signal;
	for (int i = 0; i < DJC_WORKER_NSTOPS; i++) res->stopped[i] = atomic_load(&stops[i]);
	res->tables = xcalloc(n, sizeof(char *));
	for (size_t i = 0; i < n; i++) res->tables[i] = xstrdup(tabs[i]->name);
	res->n_tables = n;
	int failed = res->stopped[DJC_WORKER_FAILED] > 0;
	munmap(mem, shsz);
	free(sp.names);
	*out = res;
	if (rc) goto out;
	if (res->interrupted) {
		rc = conn_fail(c, DJC_EINTR, "worker interrupted by %s", res->interrupted == SIGINT ? "SIGINT" : "SIGTERM");
	} else if (failed || res->failure) {
		/* the worker's own failure, not a make's */
		rc = conn_fail(c, DJC_ERROR, "%s", res->failure ? res->failure : "a worker process could not go on");
	} else if (res->error_count) {
		rc = conn_fail(c, DJC_EMAKE, "%ld make call%s failed%s%s", res->error_count, res->error_count == 1 ? "" : "s",
			       res->n_errors ? ": " : "", res->n_errors ? res->errors[0].message : "");
	}
out:
	drain_release(&ds);
	free(tabs);
	return rc;
}
