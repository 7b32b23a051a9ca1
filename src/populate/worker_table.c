/* worker_table.c - the table ~djc_worker (worker_table.h): created when
 * missing, its refresh slots taken and its duration histograms kept, by
 * the statements of worker_statements.c. */
#include "worker_table.h"
#include "jobs/jobs.h"
#include "util/clock.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define STATS_FLUSH_N 16      /* durations are added to the shared histogram every 16 makes */
#define STATS_FLUSH_S 30.0    /* ... or 30 s */
#define STATS_READ_S 60.0     /* the shared histogram is read again after this */
#define STATS_HALVE 4096      /* a reader of more makes than this halves them (worker.durations.halve) */

/* Run a statement of worker_statements.c. */
static int wrun(djc_conn *c, const jsql *s, const val_t *args, size_t n, db_res **out)
{
	jctx x = {.max_priority = -1, .named = WORKER_TABLE};
	return jsql_run(c, s, &x, args, n, out);
}

/* Checked by reading first: a thousand workers starting together create
 * nothing when it exists, and CREATE TABLE IF NOT EXISTS racing itself can
 * fail on PostgreSQL (then the table is there: looked at again). */
int worker_table_ensure(djc_conn *c, table *const *tabs, size_t n)
{
	jctx x = {.max_priority = -1, .named = WORKER_TABLE};
	sb_t q = SB_INIT;
	pvec p = {0};
	int rc = jsql_expand(c, &WS_EXISTS, &x, NULL, 0, &q, &p);
	if (!rc) rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
	if (rc == DJC_ECONN) rc = conn_dbfail(c, rc, WORKER_TABLE);
	else if (rc) {
		jctx cx = {.max_priority = -1, .named = WORKER_TABLE, .attrs = W_COLUMNS, .nattrs = NW_COLUMNS};
		rc = jsql_raw(c, &WS_CREATE, &cx, NULL);
		if (rc && db_exec(c->db, sb_str(&q), NULL, 0, NULL) == DJC_OK) rc = DJC_OK;   /* another worker made it */
		if (rc) rc = conn_dbfail(c, rc, WORKER_TABLE);
	}
	sb_free(&q);
	pvec_free(&p);
	for (size_t i = 0; !rc && i < n; i++) {
		val_t name = val_text(tabs[i]->name);
		rc = wrun(c, &WS_ADD, &name, 1, NULL);
		val_free(&name);
	}
	return rc;
}

/* ------------------------------------------------------- the slot */

/* The slot is taken by one autocommit UPDATE (what an idle worker pays per
 * interval); the winner then reads the generation it started: the row
 * still names it (another worker could take the slot only an interval
 * later, or at once by the generation it started, which it cannot have
 * read yet). */
int slot_take(djc_conn *c, const char *name, double interval, int *got, int64_t *gen)
{
	*got = 0;
	*gen = 0;
	db_res *r = NULL;
	val_t a[4] = {val_text(jobs_host()), val_int(getpid()), val_text(name), val_float(-interval)};
	int rc = wrun(c, &WS_SLOT, a, 4, &r);
	if (!rc) *got = r->affected == 1;
	db_res_free(r);
	r = NULL;
	if (!rc && *got && !(rc = wrun(c, &WS_GEN, &a[2], 1, &r)) && r->nrows == 1) {
		const char *h = db_cell_text(r, 0, 2);
		if (h && !strcmp(h, jobs_host()) && db_cell_int(r, 0, 3) == (int64_t)getpid()) *gen = db_cell_int(r, 0, 0);
	}
	db_res_free(r);
	for (int i = 0; i < 4; i++) val_free(&a[i]);
	return rc;
}

int slot_take_after(djc_conn *c, const char *name, int64_t gen0, int *got)
{
	db_res *r = NULL;
	val_t a[4] = {val_text(jobs_host()), val_int(getpid()), val_text(name), val_int(gen0)};
	int rc = wrun(c, &WS_SLOT_NOW, a, 4, &r);
	*got = !rc && r->affected == 1;
	db_res_free(r);
	for (int i = 0; i < 4; i++) val_free(&a[i]);
	return rc;
}

int slot_gens(djc_conn *c, const char *name, int64_t *gen, int64_t *done)
{
	db_res *r = NULL;
	val_t v = val_text(name);
	int rc = wrun(c, &WS_GEN, &v, 1, &r);
	if (!rc && r->nrows != 1) rc = conn_fail(c, DJC_ENOTFOUND, "%s has no row for %s", WORKER_TABLE, name);
	if (!rc) {
		*gen = db_cell_int(r, 0, 0);
		*done = db_cell_int(r, 0, 1);
	}
	db_res_free(r);
	val_free(&v);
	return rc;
}

int slot_refreshed(djc_conn *c, const char *name, int64_t gen)
{
	val_t g[3] = {val_int(gen), val_text(name), val_int(gen)};
	int rc = wrun(c, &WS_REFRESHED, g, 3, NULL);
	val_free(&g[1]);
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

void durations_read(djc_conn *c, const char *name, durations *d)
{
	val_t v = val_text(name);
	db_res *r = NULL;
	long tot = 0;
	if (wrun(c, &WS_DURATIONS, &v, 1, &r) == DJC_OK && r->nrows == 1)
		for (int b = 0; b < NBUCKET; b++) tot += d->shared[b] = (long)db_cell_int(r, 0, (size_t)b);
	db_res_free(r);
	if (tot > STATS_HALVE && wrun(c, &WS_DURATIONS_HALVE, &v, 1, NULL) == DJC_OK)
		for (int b = 0; b < NBUCKET; b++) d->shared[b] /= 2;
	val_free(&v);
	d->read_at = mono_now();
}

void durations_flush(djc_conn *c, const char *name, durations *d)
{
	if (!d->nlocal) return;
	val_t a[NBUCKET + 1];
	for (int b = 0; b < NBUCKET; b++) a[b] = val_int(d->local[b]);
	a[NBUCKET] = val_text(name);
	if (wrun(c, &WS_DURATIONS_ADD, a, NBUCKET + 1, NULL) == DJC_OK) {
		for (int b = 0; b < NBUCKET; b++) { d->shared[b] += d->local[b]; d->local[b] = 0; }
		d->nlocal = 0;
	}
	d->flushed_at = mono_now();
	val_free(&a[NBUCKET]);
}

void durations_add(djc_conn *c, const char *name, durations *d, double seconds)
{
	d->local[bucket_of(seconds)]++;
	d->nlocal++;
	if (d->nlocal >= STATS_FLUSH_N || mono_now() - d->flushed_at > STATS_FLUSH_S) durations_flush(c, name, d);
}

double durations_p90(djc_conn *c, const char *name, durations *d)
{
	if (mono_now() - d->read_at > STATS_READ_S) durations_read(c, name, d);
	long tot = 0;
	for (int b = 0; b < NBUCKET; b++) tot += d->shared[b] + d->local[b];
	if (!tot) return -1;
	long want = (tot * 9 + 9) / 10, acc = 0;
	for (int b = 0; b < NBUCKET; b++) {
		acc += d->shared[b] + d->local[b];
		if (acc >= want) return bucket_top(b);
	}
	return bucket_top(NBUCKET - 1);
}
