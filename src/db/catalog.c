/* catalog.c - a schema's catalog (catalog.h), read with the driver's
 * catalog queries; this file only assembles their rows. */
#include "catalog.h"
#include "db.h"
#include "djc.h"
#include <stdlib.h>
#include <string.h>

static char *dup_or(const char *s, const char *dflt)
{
	return s ? xstrdup(s) : dflt ? xstrdup(dflt) : NULL;
}

static db_ctable *find_mut(db_catalog *cat, const char *name)
{
	for (size_t i = 0; i < cat->n; i++)
		if (!strcmp(cat->tables[i].name, name)) return &cat->tables[i];
	return NULL;
}

const db_ctable *db_catalog_table(const db_catalog *cat, const char *name)
{
	return find_mut((db_catalog *)cat, name);
}

const db_ccol *db_ctable_col(const db_ctable *t, const char *name)
{
	for (size_t i = 0; i < t->ncols; i++)
		if (!strcmp(t->cols[i].name, name)) return &t->cols[i];
	return NULL;
}

/* Split "a\x1fb" into labels. */
static void split_labels(db_ccol *col, const char *s)
{
	if (!s || !*s) return;
	for (const char *p = s;;) {
		const char *e = strchr(p, '\x1f');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		col->labels = xrealloc(col->labels, (col->nlabels + 1) * sizeof *col->labels);
		col->labels[col->nlabels++] = xstrndup(p, n);
		if (!e) break;
		p = e + 1;
	}
}

static void add_columns(db_catalog *cat, db_res *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		db_ctable *t = find_mut(cat, db_cell_text(r, i, 0));
		if (!t) continue;
		t->cols = xrealloc(t->cols, (t->ncols + 1) * sizeof *t->cols);
		db_ccol *c = &t->cols[t->ncols++];
		memset(c, 0, sizeof *c);
		c->name = xstrdup(db_cell_text(r, i, 1));
		c->sql_type = dup_or(db_cell_text(r, i, 2), "");
		c->comment = dup_or(db_cell_text(r, i, 3), "");
		c->nullable = db_cell_int(r, i, 4) != 0;
		c->def = dup_or(db_cell_text(r, i, 5), NULL);
		c->collation = dup_or(db_cell_text(r, i, 6), NULL);
		split_labels(c, db_cell_text(r, i, 7));
		c->json_check = db_cell_int(r, i, 8) != 0;
	}
}

static void add_pk(db_catalog *cat, db_res *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		db_ctable *t = find_mut(cat, db_cell_text(r, i, 0));
		if (!t) continue;
		t->pk = xrealloc(t->pk, (t->npk + 1) * sizeof *t->pk);
		t->pk[t->npk++] = xstrdup(db_cell_text(r, i, 1));
	}
}

/* Rows of one constraint are consecutive: a new (table, constraint) pair
 * starts a new foreign key. */
static void add_fks(db_catalog *cat, db_res *r)
{
	const char *pt = NULL, *pc = NULL;
	for (size_t i = 0; i < r->nrows; i++) {
		const char *tn = db_cell_text(r, i, 0), *cn = db_cell_text(r, i, 1);
		db_ctable *t = find_mut(cat, tn);
		int same = pt && pc && !strcmp(pt, tn) && !strcmp(pc, cn);
		pt = tn;
		pc = cn;
		if (!t) continue;
		if (!same) {
			t->fks = xrealloc(t->fks, (t->nfks + 1) * sizeof *t->fks);
			db_cfk *f = &t->fks[t->nfks++];
			memset(f, 0, sizeof *f);
			f->ref_schema = xstrdup(db_cell_text(r, i, 3));
			f->ref_table = xstrdup(db_cell_text(r, i, 4));
		}
		db_cfk *f = &t->fks[t->nfks - 1];
		f->cols = xrealloc(f->cols, (f->n + 1) * sizeof *f->cols);
		f->ref_cols = xrealloc(f->ref_cols, (f->n + 1) * sizeof *f->ref_cols);
		f->cols[f->n] = xstrdup(db_cell_text(r, i, 2));
		f->ref_cols[f->n++] = xstrdup(db_cell_text(r, i, 5));
	}
}

/* Run one catalog query with the schema bound. */
static int query(db_conn *c, const char *sql, const char *schema, db_res **out, char **msg)
{
	val_t p = val_text(schema);
	int rc = db_exec(c, sql, &p, 1, out);
	val_free(&p);
	if (rc && msg) *msg = xasprintf("reading the catalog of schema %s: %s", schema, c->err);
	return rc;
}

int db_catalog_read(db_catalog **out, db_conn *c, const char *schema, char **msg)
{
	*out = NULL;
	const db_catalog_sql *q = c->drv->catalog;
	if (!q) {
		if (msg) *msg = xasprintf("%s has no DataJoint schemas (DataJoint schemas live on MySQL/MariaDB or PostgreSQL)", c->drv->name);
		return DJC_EINVAL;
	}
	db_res *r = NULL;
	int rc = query(c, q->exists, schema, &r, msg);
	if (rc) return rc;
	size_t found = r->nrows;
	db_res_free(r);
	if (!found) {
		if (msg) *msg = xasprintf("no schema %s on this server", schema);
		return DJC_ENOTFOUND;
	}
	db_catalog *cat = xcalloc(1, sizeof *cat);
	cat->schema = xstrdup(schema);
	if ((rc = query(c, q->tables, schema, &r, msg))) goto fail;
	cat->tables = xcalloc(r->nrows ? r->nrows : 1, sizeof *cat->tables);
	for (size_t i = 0; i < r->nrows; i++) {
		cat->tables[cat->n].name = xstrdup(db_cell_text(r, i, 0));
		cat->tables[cat->n++].comment = dup_or(db_cell_text(r, i, 1), "");
	}
	db_res_free(r);
	void (*add[])(db_catalog *, db_res *) = {add_columns, add_pk, add_fks};
	const char *sql[] = {q->columns, q->pk, q->fks};
	for (int k = 0; k < 3; k++) {
		if ((rc = query(c, sql[k], schema, &r, msg))) goto fail;
		add[k](cat, r);
		db_res_free(r);
	}
	*out = cat;
	return DJC_OK;
fail:
	db_catalog_free(cat);
	return rc;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++) free(v[i]);
	free(v);
}

void db_catalog_free(db_catalog *cat)
{
	if (!cat) return;
	for (size_t i = 0; i < cat->n; i++) {
		db_ctable *t = &cat->tables[i];
		for (size_t k = 0; k < t->ncols; k++) {
			db_ccol *c = &t->cols[k];
			free(c->name); free(c->sql_type); free(c->comment); free(c->def); free(c->collation);
			free_strv(c->labels, c->nlabels);
		}
		for (size_t k = 0; k < t->nfks; k++) {
			free(t->fks[k].ref_schema); free(t->fks[k].ref_table);
			free_strv(t->fks[k].cols, t->fks[k].n);
			free_strv(t->fks[k].ref_cols, t->fks[k].n);
		}
		free(t->name); free(t->comment); free(t->cols); free(t->fks);
		free_strv(t->pk, t->npk);
	}
	free(cat->tables);
	free(cat->schema);
	free(cat);
}
