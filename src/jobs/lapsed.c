/* lapsed.c - reserved jobs whose holder's lease lapsed: its worker died
 * (SIGKILL, the OOM killer, a crash in a C make, a lost node), hung or was
 * cut off. The first claim of the table that looks (claim.c, at most once
 * a second per connection) ends each such attempt, as nobody else can:
 * the job goes back to pending, due after the backoff of a retry and so
 * behind the pending work due before it; when the lapse is laid on it
 * (its worker made it alone: the blame column) it counts as lost, and a
 * job that has killed jobs.max_lost workers becomes an error saying so.
 * A make that crashes its worker therefore stops after a few workers,
 * instead of being taken over first by every next one (issue 36). */
#include "jobs.h"
#include "jobs_state.h"
#include "sql.h"
#include "util/clock.h"
#include "util/config.h"
#include <stdlib.h>
#include <unistd.h>

/* lapsed.list's columns after the key, in order. */
enum { L_RESERVATIONS, L_HOST, L_PID, L_USER, L_START, L_END, L_TOKEN, L_LOST, L_BLAME };

static const char *cell_text(db_res *r, size_t i, size_t k)
{
	const char *s = db_cell_text(r, i, k);
	return s ? s : "?";
}

/* history.lapsed and history.trim for the lapsed attempt of row i (its
 * job has just been ended by lapsed.retry or lapsed.fail). Best effort:
 * the job's new state stands either way. */
static void record(djc_conn *c, const jctx *x, db_res *r, size_t i, double backoff, const char *message)
{
	size_t nk = x->t->nsrc;
	val_t a[8];
	val_copy(&a[0], db_cell(r, i, nk + L_RESERVATIONS));   /* the attempt: its reservation number */
	val_copy(&a[1], db_cell(r, i, nk + L_HOST));
	val_copy(&a[2], db_cell(r, i, nk + L_PID));
	val_copy(&a[3], db_cell(r, i, nk + L_USER));
	val_copy(&a[4], db_cell(r, i, nk + L_START));
	a[5] = val_float(backoff);
	a[6] = val_text(message);
	val_copy(&a[7], db_cell(r, i, nk + L_TOKEN));
	long n = 0;
	if (jsql_count(c, &JS_HISTORY_LAPSED, x, a, 8, &n) == DJC_OK && n) {
		val_t keep = val_int(HISTORY_KEEP);
		(void)jsql_count(c, &JS_HISTORY_TRIM, x, &keep, 1, &n);
	}
	for (int k = 0; k < 8; k++) val_free(&a[k]);
}

/* End the lapsed attempt of lapsed.list's row i, fenced by the lapsed
 * holder's token and the lapse itself (a holder that renewed meanwhile,
 * or another worker that ended it first, leaves nothing to match). */
static int end_one(djc_conn *c, table *t, db_res *r, size_t i)
{
	size_t nk = t->nsrc;
	djc_row *key = djc_row_new();
	for (size_t k = 0; k < nk; k++) {
		val_t v;
		value_out(&t->attrs[t->src[k]], db_cell(r, i, k), &v);
		row_put(key, t->attrs[t->src[k]].name, &v);
	}
	jctx x = JCTX(t);
	x.key = key;
	long lost = (long)db_cell_int(r, i, nk + L_LOST), max = config_long("jobs.max_lost");
	int laid = (db_cell_int(r, i, nk + L_BLAME) & 1) != 0;   /* its worker made it alone */
	const char *host = cell_text(r, i, nk + L_HOST), *at = cell_text(r, i, nk + L_END);
	long pid = (long)db_cell_int(r, i, nk + L_PID);
	char *msg, *err = NULL;
	double delay = -1;
	long hit = 0;
	int rc;
	val_t tok;
	val_copy(&tok, db_cell(r, i, nk + L_TOKEN));
	if (laid && lost + 1 >= max) {
		err = xasprintf("worker died %ld time%s on this job; last: host %s, pid %ld (its lease lapsed at %s)", lost + 1,
				lost ? "s" : "", host, pid, at);
		msg = xasprintf("the lease lapsed at %s (its worker died, hung or was cut off): worker died %ld of jobs.max_lost %ld "
				"times on this job, an error now; found by %s pid %ld", at, lost + 1, max, jobs_host(), (long)getpid());
		val_t a[2] = {val_text(err), tok};
		rc = jsql_count(c, &JS_LAPSED_FAIL, &x, a, 2, &hit);
		val_free(&a[0]);
	} else {
		delay = laid ? jobs_backoff(lost + 1) : 0;
		if (laid)
			msg = xasprintf("the lease lapsed at %s (its worker died, hung or was cut off): worker died %ld of jobs.max_lost "
					"%ld times on this job; found by %s pid %ld", at, lost + 1, max, jobs_host(), (long)getpid());
		else
			msg = xasprintf("the lease lapsed at %s (its worker died, hung or was cut off) while it held this job with "
					"others of one claim, none known to be the one it made: not counted against jobs.max_lost; "
					"found by %s pid %ld", at, jobs_host(), (long)getpid());
		val_t a[5] = {val_int(laid), val_float(delay), val_float(delay), val_text(msg), tok};
		rc = jsql_count(c, &JS_LAPSED_RETRY, &x, a, 5, &hit);
		val_free(&a[3]);
	}
	val_free(&tok);
	if (!rc && hit) {
		record(c, &x, r, i, delay, msg);
		jobs_tab *jt = jobs_tab_of(c, t);
		if (delay > 0 && mono_now() + delay > jt->lapsed_due) jt->lapsed_due = mono_now() + delay;
	}
	free(msg);
	free(err);
	djc_row_free(key);
	return rc;
}

int jobs_lapsed(djc_conn *c, table *t, const char *where, long max_priority)
{
	jctx x = {.t = t, .where = where, .max_priority = max_priority};
	db_res *r = NULL;
	int rc = jsql_run(c, &JS_LAPSED_LIST, &x, NULL, 0, &r);
	/* each in a statement of its own (autocommit), so a job ended here is
	 * pending (or an error) before the claim that follows looks */
	for (size_t i = 0; !rc && i < r->nrows; i++) rc = end_one(c, t, r, i);
	db_res_free(r);
	return rc;
}

double jobs_lapsed_due(djc_conn *c, const table *t)
{
	double due = jobs_tab_of(c, t)->lapsed_due;
	return due > 0 ? due - mono_now() : 0;
}
