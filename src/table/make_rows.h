/* make_rows.h - what one make staged, and its insert in the caller's
 * transaction: the table-layer half of a make's commit, shared by direct
 * populate (no jobs table) and the jobs layer's commit (jobs/commit.c). */
#ifndef DJC_MAKE_ROWS_H
#define DJC_MAKE_ROWS_H
#include "table.h"

/* A make's rows: tables[i] gets rows[i], the target's rows first; and
 * what the make read through djc (NULL: nothing), passed from the make to
 * its commit, which reads it again in its transaction (upstream.c:
 * read_set_verify). */
typedef struct made_rows {
	table **tables;
	djc_row **rows;
	size_t n;
	const read_set *reads;
} made_rows;

/* Insert r (may be NULL: no rows) in the caller's transaction, after
 * checking r->reads. DJC_OK, or an error with a one-line message naming
 * the row (DJC_ECONFLICT: upstream changed while make ran); *taken is set
 * when a target row collided with a committed one that is not one of
 * make's own earlier rows (someone else made this key: not make's error). */
int make_rows_insert(djc_conn *c, const table *target, const made_rows *r, int *taken);
#endif
