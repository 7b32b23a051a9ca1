/* make_rows.c - a make's staged rows inserted in the caller's transaction
 * (make_rows.h). */
#include "make_rows.h"
#include <stdlib.h>
#include <string.h>

/* Whether target row i of a make repeats the key of an earlier target row
 * of the same make (make's own mistake), rather than one committed by
 * someone else. */
static int repeats_own(const table *t, table *const *tables, djc_row *const *rows, size_t i)
{
	char *k = key_to_json(t, rows[i], 0);
	int same = 0;
	for (size_t j = 0; j < i && !same; j++) {
		if (tables[j] != t) continue;
		char *kj = key_to_json(t, rows[j], 0);
		same = !strcmp(k, kj);
		free(kj);
	}
	free(k);
	return same;
}

int make_rows_insert(djc_conn *c, const table *target, const made_rows *r, int *taken)
{
	*taken = 0;
	size_t n = r ? r->n : 0;
	table *const *tables = r ? r->tables : NULL;
	djc_row *const *rows = r ? r->rows : NULL;
	/* upstream checked at commit: what make read is still what is there */
	if (r && r->reads) {
		int rc = read_set_verify(c, target, r->reads);
		if (rc) return rc;
	}
	for (size_t i = 0; i < n; i++) {
		size_t bad = 0;
		int rc = rows_insert(c, tables[i], &rows[i], 1, 0, NULL, &bad);
		if (!rc) continue;
		char *k = key_to_json(tables[i], rows[i], 0);
		/* a target row whose primary key is already there and is not
		 * one of this make's earlier rows: someone else (a DataJoint
		 * worker, a direct insert) made the key first; a unique index
		 * other than the primary key is make's own error */
		*taken = rc == DJC_EDUPLICATE && tables[i] == target && !repeats_own(target, tables, rows, i);
		/* the public code conn_fail gives (a lock wait that reached its
		 * bound, DB_ELOCKED, is DJC_ELOCKED: a worker stops at it; before,
		 * the raw code made it a failed make of every key) */
		if (*taken)
			rc = conn_fail(c, rc, "%s %s already exists", tables[i]->name, k);
		else if (rc == DB_EUNIQUE)
			rc = conn_fail(c, rc, "row %s of %s repeats a value of a unique index: %s", k, tables[i]->name, c->db->err);
		else if (rc == DJC_EDUPLICATE)
			rc = conn_fail(c, rc, "make produced a duplicate row %s for %s", k, tables[i]->name);
		else if (rc == DJC_EFOREIGN)
			rc = conn_fail(c, rc, "row %s of %s references a missing parent row", k, tables[i]->name);
		else
			rc = conn_fail(c, rc, "inserting %s into %s: %s", k, tables[i]->name, c->db->err);
		free(k);
		return rc;
	}
	return DJC_OK;
}
