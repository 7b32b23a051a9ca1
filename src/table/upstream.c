/* upstream.c - a computed table's lineage: which tables are its ancestors
 * (DataJoint's `self.upstream[T]` refuses any other), so that a make reads
 * only what its target depends on. */
#include "table.h"
#include <stdlib.h>
#include <string.h>

/* The parents of t: the tables its `->` lines reference (a part's master
 * among them). */
static int is_parent(const table *t, const table *p)
{
	if (t->master == p) return 1;
	for (size_t i = 0; i < t->nfks; i++)
		if (t->fks[i].ptable == p) return 1;
	return 0;
}

int table_is_ancestor(const djc_conn *c, const table *t, const table *a)
{
	if (!t || !a || t == a) return 0;
	size_t n = c->pipe->n;
	char *up = xcalloc(n ? n : 1, 1);
	/* mark t's parents, then their parents, until nothing changes */
	int found = 0, more = 1;
	while (more && !found) {
		more = 0;
		for (size_t j = 0; j < n; j++) {
			const table *p = c->pipe->tables[j];
			if (up[j]) continue;
			int par = is_parent(t, p);
			for (size_t i = 0; i < n && !par; i++)
				par = up[i] && is_parent(c->pipe->tables[i], p);
			if (par) { up[j] = 1; more = 1; if (p == a) found = 1; }
		}
	}
	free(up);
	return found;
}

int table_upstream_check(djc_conn *c, const table *t, const table *a)
{
	if (table_is_ancestor(c, t, a)) return DJC_OK;
	return conn_fail(c, DJC_EINVAL,
			 "make of %s may read only its ancestors (the tables it depends on through ->): %s is not upstream "
			 "of %s",
			 t->name, a->name, t->name);
}

int djc_upstream_check(djc_conn *c, const char *target, const char *name)
{
	table *t, *a;
	int rc = conn_table(c, target, &t);
	if (!rc) rc = conn_table(c, name, &a);
	if (!rc) rc = table_upstream_check(c, t, a);
	return rc;
}
