/* direct.c - populate without reservation: every worker takes the next
 * key of (key_source & where) - target from one shared list and commits
 * make's rows in one short transaction (no jobs table; a key made by
 * someone else meanwhile counts as skipped). A commit that waited for a
 * lock as long as its bound (jobs.lock_timeout, DJC_ELOCKED) stops every
 * worker at once, as with reservations: the populate ends with one line
 * saying the table is locked, no make counted as failed (before, each key
 * waited the whole bound and was counted as a failed make). */
#include "worker.h"
#include <stdlib.h>
#include <string.h>

/* The commit of key's make waited the bound for a lock: the worker
 * stops, and every other one (worker_fatal; worded by worker_failure). */
static void direct_locked(worker *w, const djc_row *key)
{
	char *k = key_to_json(w->t, key, 1);
	sb_t b = SB_INIT;
	sb_printf(&b, "%s; the make of %s %s was not committed", w->c->err, w->t->name, k);
	worker_fatal(w, sb_str(&b));
	sb_free(&b);
	free(k);
}

typedef struct direct_commit { worker *w; staged *st; int taken; } direct_commit;

static int commit_body(djc_conn *c, void *arg)
{
	direct_commit *d = arg;
	return make_rows_insert(c, d->w->t, &(made_rows){d->st->tables, d->st->rows, d->st->n, d->st->reads}, &d->taken);
}

void work_direct(worker *w, djc_rowset *keys)
{
	for (;;) {
		if (worker_stopping(w)) break;
		long i = atomic_fetch_add(&w->sh->next, 1);
		if (i >= (long)keys->n) break;
		if (!worker_take_call(w)) break;
		const djc_row *key = keys->rows[i];
		staged st = {0};
		make_result mr;
		if (worker_make(w, key, 1, &st, &mr) == DJC_OK) {
			direct_commit d = {w, &st, 0};
			/* a deadlock or busy database rolls the insert back: try again */
			int rc = conn_tx(w->c, "commit", 0, commit_body, &d);
			if (rc == DJC_OK) atomic_fetch_add(&w->sh->success, 1);
			else if (d.taken) atomic_fetch_add(&w->sh->skipped, 1);
			else if (rc == DJC_ELOCKED) direct_locked(w, key);
			else worker_error(w, key, w->c->err);
		} else if (mr.fatal) {
			worker_fatal(w, mr.message);   /* the key was not tried */
		} else
			worker_error(w, key, mr.message);
		staged_free(&st);
		make_result_free(&mr);
		worker_tick(w);
		if (populate_signal) break;
	}
}
