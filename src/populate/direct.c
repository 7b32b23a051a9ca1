/* direct.c - populate without reservation: every worker takes the next
 * key of (key_source & where) - target from one shared list and commits
 * make's rows in one short transaction (no jobs table; a key made by
 * someone else meanwhile counts as skipped). */
#include "worker.h"
#include <string.h>

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
