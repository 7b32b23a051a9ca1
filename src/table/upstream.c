/* upstream.c - a computed table's lineage: which tables are its ancestors
 * (DataJoint's `self.upstream[T]` refuses any other), so that a make reads
 * only what its target depends on: those and their part tables. */
#include "table.h"
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL   /* libxxhash compiled in from its header: nothing to link */
#include <xxhash.h>

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

int table_may_read(const djc_conn *c, const table *t, const table *a)
{
	if (table_is_ancestor(c, t, a)) return 1;
	/* a part of an ancestor: its rows are committed with their master's
	 * row (one make, one transaction), so they are as complete as it is.
	 * Not a part that itself depends on t (its rows may wait for t's). */
	return a && a != t && a->master && table_is_ancestor(c, t, a->master) && !table_is_ancestor(c, a, t);
}

int table_upstream_check(djc_conn *c, const table *t, const table *a)
{
	if (table_may_read(c, t, a)) return DJC_OK;
	return conn_fail(c, DJC_EINVAL,
			 "make of %s may read only its ancestors and their part tables (the tables it depends on through "
			 "->): %s is not upstream of %s",
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

/* ------------------------------------------------ reads checked at commit
 *
 * DataJoint's three-part make fetches the upstream data again inside the
 * insert's transaction and refuses to commit if it changed. djc records
 * every read a make does through djc (table, restriction, a hash of the
 * rows) and, inside the commit's transaction, reads again and compares.
 * The record is kept on the make's connection by (target, key) until that
 * key's commit.
 *
 * Where the backend has a row version (db_row_version: PostgreSQL's xmin,
 * which every write of a row changes), the read records the rows' versions
 * too, and the commit reads those alone first: the same versions are the
 * same rows, with none of their values sent again (a make that read a
 * 10 MiB array read it twice before). Other versions are not yet a change
 * (a row deleted and inserted again as it was is the same row to the
 * content check, as it always was): then the values are read again and
 * compared, as on every other backend. */

typedef struct read_entry {
	const table *a;     /* the table read */
	char *where;        /* its restriction as JSON text (NULL: all rows) */
	uint64_t hash;      /* rows_hash of the rows read */
	uint64_t vhash;     /* versions_hash of them, when versioned */
	int versioned;      /* the backend's row versions were read with them */
	char *vlist;        /* their versions in primary key order, comma-joined
	                     * (QI_VERSIONS' form), when versioned and at most
	                     * READ_CHECK_ROWS rows: what a batch's check compares */
	size_t nrows;
} read_entry;

struct read_set {
	read_entry *v;
	size_t n, cap;
};

/* A hash of the rows as read (in primary key order), over each
 * attribute's typed value as it came from the server: its type, then the
 * number's bits, the text's length and bytes, or the bytes' length and
 * their own XXH3 (a 10 MB blob is hashed as it is, never encoded first;
 * the commit's re-read on MariaDB hashes it piece by piece as it comes,
 * VAL_DIGESTED); NULL has a type of its own.
 * XXH3 (libxxhash's header, compiled in: nothing to link), not a byte at a
 * time: the rows are hashed twice per key (as the make read them, and again
 * at commit), and FNV-1a spent about 20 ms on each 10 MiB array, a fifth of
 * a worker's time on MariaDB (bench/results-2026-12-05.md, "malloc"). The
 * hash never leaves the process, so its function can change freely. */
static uint64_t rows_hash(const table *a, const djc_rowset *rows)
{
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	for (size_t i = 0; rows && i < rows->n; i++) {
		for (size_t k = 0; k < a->nattrs; k++) {
			const val_t *v = row_get(rows->rows[i], a->attrs[k].name);
			unsigned t = v ? v->t : ~0u;
			XXH3_64bits_update(&st, &t, sizeof t);
			if (!v) continue;
			switch (v->t) {
			case VAL_INT: case VAL_BOOL: XXH3_64bits_update(&st, &v->i, sizeof v->i); break;
			case VAL_UINT: XXH3_64bits_update(&st, &v->u, sizeof v->u); break;
			case VAL_FLOAT: XXH3_64bits_update(&st, &v->f, sizeof v->f); break;
			case VAL_TEXT:
				XXH3_64bits_update(&st, &v->n, sizeof v->n);
				if (v->s) XXH3_64bits_update(&st, v->s, v->n);
				break;
			case VAL_BYTES: {
				/* bytes by their own XXH3: a commit's re-read may have
				 * them only as that (VAL_DIGESTED, db_exec_digest) */
				uint64_t d = v->s ? XXH3_64bits(v->s, v->n) : v->i == VAL_DIGESTED ? v->u : 0;
				XXH3_64bits_update(&st, &v->n, sizeof v->n);
				XXH3_64bits_update(&st, &d, sizeof d);
				break;
			}
			default: break;
			}
		}
		XXH3_64bits_update(&st, "\n", 1);
	}
	return XXH3_64bits_digest(&st);
}

/* A hash of the row versions of rows (the value named version of each, in
 * their order). */
static uint64_t versions_hash(const djc_rowset *rows, const char *version)
{
	XXH3_state_t st;
	XXH3_64bits_reset(&st);
	for (size_t i = 0; rows && i < rows->n; i++) {
		const val_t *v = row_get(rows->rows[i], version);
		if (v && v->s) XXH3_64bits_update(&st, v->s, v->n);
		else if (v) XXH3_64bits_update(&st, &v->i, sizeof v->i);
		XXH3_64bits_update(&st, "\n", 1);
	}
	return XXH3_64bits_digest(&st);
}

read_set *read_set_new(void) { return xcalloc(1, sizeof(read_set)); }

void read_set_free(read_set *rs)
{
	if (!rs) return;
	for (size_t i = 0; i < rs->n; i++) {
		free(rs->v[i].where);
		free(rs->v[i].vlist);
	}
	free(rs->v);
	free(rs);
}

static read_entry *read_set_push(read_set *rs, const table *a, const char *where, const djc_rowset *rows)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 4;
		rs->v = xrealloc(rs->v, rs->cap * sizeof *rs->v);
	}
	read_entry *e = &rs->v[rs->n++];
	memset(e, 0, sizeof *e);
	e->a = a;
	e->where = where ? xstrdup(where) : NULL;
	e->hash = rows_hash(a, rows);
	e->nrows = rows ? rows->n : 0;
	return e;
}

/* The versions of rows (named version) as QI_VERSIONS renders them: in
 * the rows' order (primary key order, as the read returned them),
 * comma-joined; NULL for more than READ_CHECK_ROWS rows or a version that
 * is not a whole number. */
static char *versions_list(const djc_rowset *rows, const char *version)
{
	size_t n = rows ? rows->n : 0;
	if (n > READ_CHECK_ROWS) return NULL;
	sb_t b = SB_INIT;
	sb_add(&b, "");
	for (size_t i = 0; i < n; i++) {
		const val_t *x = row_get(rows->rows[i], version);
		uint64_t v;
		char *end = NULL;
		if (x && x->s) {
			v = strtoull(x->s, &end, 10);
			if (!x->n || end != x->s + x->n) { sb_free(&b); return NULL; }
		} else if (x && (x->t == VAL_UINT || (x->t == VAL_INT && x->i >= 0)))
			v = x->t == VAL_UINT ? x->u : (uint64_t)x->i;
		else {
			sb_free(&b);
			return NULL;
		}
		sb_printf(&b, i ? ",%" PRIu64 : "%" PRIu64, v);
	}
	return sb_steal(&b);
}

void read_set_add(read_set *rs, const table *a, const char *where, const djc_rowset *rows)
{
	read_set_push(rs, a, where, rows);
}

int read_set_fetch(djc_conn *c, read_set *rs, const table *a, const char *where, djc_rowset **out)
{
	int rc = rows_fetch_read(c, a, where, READ_WITH_VERSION, out);
	if (rc) return rc;
	read_entry *e = read_set_push(rs, a, where, *out);
	const char *version = db_row_version(c->db);
	if (!version) return DJC_OK;
	e->versioned = 1;
	e->vhash = versions_hash(*out, version);
	e->vlist = versions_list(*out, version);
	for (size_t i = 0; i < (*out)->n; i++) row_del((*out)->rows[i], version);
	return DJC_OK;
}

/* 1 when the rows e recorded have the versions they had (nothing wrote
 * them since), 0 when they may not, else an error code (negative). */
static int versions_same(djc_conn *c, const read_entry *e)
{
	djc_rowset *now = NULL;
	int rc = rows_fetch_read(c, e->a, e->where, READ_VERSION_ONLY, &now);
	if (rc) return rc;
	int same = now->n == e->nrows && versions_hash(now, db_row_version(c->db)) == e->vhash;
	djc_rowset_free(now);
	return same;
}

int read_set_verify(djc_conn *c, const table *t, const read_set *rs)
{
	for (size_t i = 0; rs && i < rs->n; i++) {
		const read_entry *e = &rs->v[i];
		if (e->versioned) {
			int same = versions_same(c, e);
			if (same < 0) return same;
			if (same) continue;
		}
		djc_rowset *now = NULL;
		/* large bytes values as their digests where the driver can: a
		 * second copy of a 10 MiB array beside the driver's own buffer
		 * would only be hashed (bench/results-2026-12-07.md) */
		int rc = rows_fetch_read(c, e->a, e->where, READ_DIGESTED, &now);
		if (rc) return rc;
		int same = now->n == e->nrows && rows_hash(e->a, now) == e->hash;
		size_t n = now->n;
		djc_rowset_free(now);
		if (!same)
			return conn_fail(c, DJC_ECONFLICT,
					 "upstream changed while make ran: the rows of %s that make of %s read (%s%s, %zu row%s then, "
					 "%zu now) are not the same at commit; nothing committed",
					 e->a->name, t->name, e->where ? "restricted by " : "all rows", e->where ? e->where : "",
					 e->nrows, e->nrows == 1 ? "" : "s", n);
	}
	return DJC_OK;
}

int read_set_checkable(djc_conn *c, const read_set *rs)
{
	for (size_t i = 0; rs && i < rs->n; i++)
		if (!db_row_version(c->db) || !rs->v[i].versioned || !rs->v[i].vlist) return 0;
	return 1;
}

int read_set_check_stmts(djc_conn *c, const read_set *rs, stmt_list *l)
{
	const char *version = db_row_version(c->db);
	if (!read_set_checkable(c, rs)) return DJC_EINVAL;
	size_t from = l->n;
	int rc = DJC_OK;
	for (size_t i = 0; rs && i < rs->n && !rc; i++) {
		const read_entry *e = &rs->v[i];
		q_arena a = Q_ARENA_INIT;
		q_sel *s = q_select(&a);
		q_node *x = NULL;
		q_col *ord = q_alloc(&a, (e->a->nkey ? e->a->nkey : 1) * sizeof *ord);
		for (size_t k = 0; k < e->a->nkey; k++) ord[k] = (q_col){NULL, NULL, e->a->attrs[k].name};
		q_versions_item(&a, s, (q_col){NULL, NULL, version}, ord, e->a->nkey, "v");
		q_from_table(&a, s, table_sqlref(e->a), NULL, 0);
		rc = restrict_node(&x, &a, c, e->a, e->where, NULL, 0);
		if (!rc && x) q_where(&a, s, x);
		sb_t q = SB_INIT;
		pvec p = {0};
		if (!rc) rc = q_check_sql(c->db, s, val_text(e->vlist), &(q_out){&q, &p, 0});
		if (!rc) stmt_list_add(l, &q, &p, -1);
		sb_free(&q);
		pvec_free(&p);
		q_arena_free(&a);
	}
	if (rc) stmt_list_truncate(l, from);
	return rc;
}

read_set *read_set_join(const read_set *const *sets, size_t n)
{
	read_set *rs = read_set_new();
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; sets[k] && i < sets[k]->n; i++) {
			const read_entry *e = &sets[k]->v[i];
			if (rs->n == rs->cap) {
				rs->cap = rs->cap ? rs->cap * 2 : 4;
				rs->v = xrealloc(rs->v, rs->cap * sizeof *rs->v);
			}
			read_entry *d = &rs->v[rs->n++];
			*d = *e;
			d->where = e->where ? xstrdup(e->where) : NULL;
			d->vlist = e->vlist ? xstrdup(e->vlist) : NULL;
		}
	return rs;
}
