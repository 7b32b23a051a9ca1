/* adopt_stale.c - is an adopted table still as it was adopted (table.h,
 * docs/adopt.md "When DataJoint changes an adopted table")? DataJoint may
 * drop a table djc adopted, or drop and declare it again with another
 * heading; djc's stored definition then no longer says what the table is.
 * Checked once per table where populate, worker and adopt start, never per
 * key: the catalogs of the adopted schemas are read once (db/catalog.h),
 * the definitions adopt would write now are generated and parsed
 * (schema/adopt.h), and each table's stored attributes are compared with
 * the catalog's columns (added, removed) and the new definition's types. */
#include "table.h"
#include "db/catalog.h"
#include "schema/adopt.h"
#include <stdlib.h>
#include <string.h>

typedef struct stale_ctx {
	db_catalog **cats;   /* the adopted schemas that exist, then those they reference */
	size_t nc, nmain;
	int complete;        /* every referenced schema was read: the definitions can be made */
	pipeline *now;       /* the definitions adopt would write now, parsed; NULL: none made */
} stale_ctx;

static const db_catalog *cat_of(const stale_ctx *x, const char *schema)
{
	for (size_t i = 0; schema && i < x->nc; i++)
		if (!strcmp(x->cats[i]->schema, schema)) return x->cats[i];
	return NULL;
}

/* Read schema's catalog into x (once); a schema that is not there is
 * left out (its tables are then missing). */
static int add_cat(djc_conn *c, stale_ctx *x, const char *schema, int *found)
{
	*found = 1;
	if (cat_of(x, schema)) return DJC_OK;
	char *msg = NULL;
	db_catalog *cat = NULL;
	int rc = db_catalog_read(&cat, c->db, schema, &msg);
	if (rc == DJC_ENOTFOUND) *found = 0, rc = DJC_OK;
	else if (rc) conn_fail(c, rc, "%s", msg ? msg : "reading the catalog");
	free(msg);
	if (cat) {
		x->cats = xrealloc(x->cats, (x->nc + 1) * sizeof *x->cats);
		x->cats[x->nc++] = cat;
	}
	return rc;
}

/* The catalogs of every adopted schema of the pipeline, then of the
 * schemas their tables reference; the definitions of them all, parsed. */
static int stale_load(djc_conn *c, stale_ctx *x)
{
	int rc = DJC_OK, found;
	x->complete = 1;
	for (size_t i = 0; !rc && i < c->pipe->n; i++) {
		const table *t = c->pipe->tables[i];
		if (t->adopted && (rc = add_cat(c, x, t->schema, &found)) == DJC_OK && !found) x->complete = 0;
	}
	x->nmain = x->nc;
	for (const char *s; !rc && x->complete && (s = adopt_missing_schema(x->cats, x->nc));)
		if ((rc = add_cat(c, x, s, &found)) == DJC_OK && !found) x->complete = 0;
	if (rc || !x->complete || !x->nc) return rc;
	sb_t q = SB_INIT;
	db_qi(c->db, &q, "a");
	adopt_in in = {x->cats, x->nc, x->nmain, sb_str(&q)[0], NULL, NULL};
	char *text = NULL, *msg = NULL;
	/* a schema adopt would refuse now: no types to compare (the columns still are) */
	if (!adopt_generate(&text, &msg, &in) && pipeline_parse(&x->now, text, "adopted definitions", NULL, &msg))
		x->now = NULL;
	free(text);
	free(msg);
	sb_free(&q);
	return DJC_OK;
}

static void stale_free(stale_ctx *x)
{
	for (size_t i = 0; i < x->nc; i++) db_catalog_free(x->cats[i]);
	free(x->cats);
	if (x->now) pipeline_free(x->now);
}

/* The table of the new definitions that is t's DataJoint table, or NULL. */
static const table *now_of(const stale_ctx *x, const table *t)
{
	for (size_t i = 0; x->now && i < x->now->n; i++) {
		const table *u = x->now->tables[i];
		if (u->schema && !strcmp(u->schema, t->schema) && !strcmp(u->sql_name, t->sql_name)) return u;
	}
	return NULL;
}

void adopt_attr_desc(sb_t *b, const attr *a)
{
	sb_add(b, a->type_text);   /* raw(...) as written */
	if (a->store_type) sb_printf(b, " as %s", a->store_type);
	else if (a->nonfinite) sb_add(b, strstr(a->type_text, "32") ? " as float4" : " as float8");
	if (a->collate) sb_printf(b, " collate %s", a->collate);
	if (a->nullable) sb_add(b, " (nullable)");
}

/* Whether a and b are one type as far as the table's values go: what a
 * newer djc adopts differently from the same column is not a change of
 * the table (a PostgreSQL timestamp adopted as datetime, now datetime(6);
 * a double precision as float64, now `as float8`; a collation): a schema
 * adopted before keeps working with its stored definition. */
static int same_kind(const attr *a, const attr *b)
{
	if (a->raw || b->raw) return a->raw == b->raw && !strcmp(a->type_text, b->type_text);
	/* DataJoint's int8 on PostgreSQL (a smallint), adopted as int8 before
	 * December 2026, now as int16: the same column */
	if (a->type.t == T_INT8 && b->type.t == T_INT16 && a->nullable == b->nullable) return 1;
	if (a->type.t != b->type.t || a->nullable != b->nullable) return 0;
	switch (a->type.t) {
	case T_DECIMAL: return a->type.p == b->type.p && a->type.s == b->type.s;
	case T_CHAR: case T_VARCHAR: return a->type.p == b->type.p;
	case T_ENUM:
		if (a->type.nenums != b->type.nenums) return 0;
		for (size_t i = 0; i < a->type.nenums; i++)
			if (strcmp(a->type.enums[i], b->type.enums[i])) return 0;
		return 1;
	default: return 1;
	}
}

/* The type changes of t's attributes from its stored definition to u's. */
static void type_changes(const table *t, const table *u, sb_t *d)
{
	for (size_t i = 0; i < t->nattrs; i++) {
		const attr *a = &t->attrs[i], *b = table_attr(u, a->name);
		/* told as a removed column; or a type adopt cannot tell, which a
		 * definition declared by hand (docs/types.md) may give */
		if (!b || (b->raw && !a->raw) || same_kind(a, b)) continue;
		sb_t was = SB_INIT, is = SB_INIT;
		adopt_attr_desc(&was, a);
		adopt_attr_desc(&is, b);
		if (strcmp(sb_str(&was), sb_str(&is)))
			sb_printf(d, "%scolumn '%s' %s -> %s", d->len ? ", " : "", a->name, sb_str(&was), sb_str(&is));
		sb_free(&was);
		sb_free(&is);
	}
}

/* What differs between adopted table t and its DataJoint table now, into
 * d ("" when nothing). upstream: t is a table the checked one reads (an
 * ancestor), where a column DataJoint added changes nothing djc reads. */
static void stale_one(const stale_ctx *x, const table *t, int upstream, sb_t *d)
{
	const db_catalog *cat = cat_of(x, t->schema);
	const db_ctable *ct = cat ? db_catalog_table(cat, t->sql_name) : NULL;
	if (!ct) {
		sb_add(d, "is missing (dropped since it was adopted)");
		return;
	}
	for (size_t i = 0; i < t->nattrs + t->nhidden; i++)
		if (!db_ctable_col(ct, t->attrs[i].name)) sb_printf(d, "%scolumn '%s' removed", d->len ? ", " : "", t->attrs[i].name);
	/* columns starting with _ are DataJoint's hidden ones, which adopt leaves out */
	for (size_t i = 0; !upstream && i < ct->ncols; i++)
		if (ct->cols[i].name[0] != '_' && !table_attr_any(t, ct->cols[i].name))
			sb_printf(d, "%scolumn '%s' added", d->len ? ", " : "", ct->cols[i].name);
	const table *u = now_of(x, t);
	if (u) type_changes(t, u, d);
}

/* Mark in up[] (by index in p) the tables t reads through its
 * references and its key source's tables, and theirs, up to the top. */
static void mark_upstream(const pipeline *p, const table *t, char *up)
{
	for (size_t k = 0; k < t->nfks + t->nks + 1; k++) {
		const table *u = k < t->nfks ? t->fks[k].ptable : k < t->nfks + t->nks ? t->ks_tables[k - t->nfks] : t->master;
		for (size_t i = 0; u && i < p->n; i++)
			if (p->tables[i] == u && !up[i]) {
				up[i] = 1;
				mark_upstream(p, u, up);
			}
	}
}

/* What differs of u (t itself, its part, or a table t reads), told into msg. */
static void stale_told(const stale_ctx *x, const table *t, const table *u, int upstream, sb_t *msg)
{
	sb_t d = SB_INIT;
	stale_one(x, u, upstream, &d);
	if (d.len)
		sb_printf(msg, "%s%s%s%sDataJoint table %s.%s %s%s", msg->len ? "; " : "",
			  u == t ? "" : upstream ? "its upstream table " : "its part ", u == t ? "" : u->name, u == t ? "" : ": ",
			  u->schema, u->sql_name, strncmp(sb_str(&d), "is missing", 10) ? "changed since it was adopted: " : "",
			  sb_str(&d));
	sb_free(&d);
}

/* t and its parts, then the adopted tables t reads (its ancestors, upstream
 * first: a parent DataJoint dropped would fail t's key source with the
 * server's message), each that differs told into msg. */
static void stale_with_parts(const stale_ctx *x, const pipeline *p, const table *t, sb_t *msg)
{
	stale_told(x, t, t, 0, msg);
	for (size_t i = 0; i < p->n; i++)
		if (p->tables[i]->master == t && p->tables[i]->adopted) stale_told(x, t, p->tables[i], 0, msg);
	char *up = xcalloc(p->n + 1, 1);
	mark_upstream(p, t, up);
	for (size_t i = 0; i < p->n; i++)
		if (up[i] && p->tables[i] != t && p->tables[i]->adopted) stale_told(x, t, p->tables[i], 1, msg);
	free(up);
}

int adopt_stale(djc_conn *c, table *const *tabs, size_t n, char **why)
{
	size_t nadopted = 0;
	for (size_t i = 0; i < n; i++) {
		why[i] = NULL;
		nadopted += tabs[i]->adopted != NULL;
	}
	if (!nadopted) return DJC_OK;
	int rc = pipe_load(c);
	if (rc) return rc;
	stale_ctx x = {0};
	if (!(rc = stale_load(c, &x)))
		for (size_t i = 0; i < n; i++) {
			if (!tabs[i]->adopted) continue;
			sb_t m = SB_INIT;
			stale_with_parts(&x, c->pipe, tabs[i], &m);
			/* dropped, not redeclared: adopting again forgets it */
			const db_catalog *cat = cat_of(&x, tabs[i]->schema);
			int gone = !cat || !db_catalog_table(cat, tabs[i]->sql_name);
			if (m.len && gone)
				sb_printf(&m, "; forget it: djc adopt %s --accept-changes (drops its jobs)", tabs[i]->adopted);
			else if (m.len)
				sb_printf(&m, "; adopt it again: djc adopt %s --accept-changes (keeps its jobs while its key is "
					  "the same)", tabs[i]->adopted);
			why[i] = m.len ? sb_steal(&m) : NULL;
			sb_free(&m);
		}
	stale_free(&x);
	return rc;
}

int adopt_current_check(djc_conn *c, table *t)
{
	char *why = NULL;
	int rc = adopt_stale(c, &t, 1, &why);
	if (!rc && why) rc = conn_fail(c, DJC_ECONFLICT, "table %s is not as adopted: %s", t->name, why);
	free(why);
	return rc;
}

int adopt_failure_explain(djc_conn *c, table *t, int rc)
{
	/* (not inside a caller's transaction, which the failure may have ended) */
	if (!rc || !t || !t->adopted || !c->db || c->db->in_tx) return rc;
	char *saved = xstrdup(c->err), *why = NULL;
	if (!adopt_stale(c, &t, 1, &why) && why) rc = conn_fail(c, DJC_ECONFLICT, "table %s is not as adopted: %s", t->name, why);
	else snprintf(c->err, sizeof c->err, "%s", saved);   /* the failure as it was */
	free(why);
	free(saved);
	return rc;
}

int djc_adopted_check(char **why, djc_conn *c, const char *const *tables, size_t n)
{
	for (size_t i = 0; why && i < n; i++) why[i] = NULL;
	if (!c) return DJC_EINVAL;
	if (n && (!why || !tables)) return conn_fail(c, DJC_EINVAL, "adopted check: %zu tables announced, none given (NULL)", n);
	if (!c->db) return conn_fail(c, DJC_ECONN, "not connected");
	table **v = xcalloc(n + 1, sizeof *v);
	int rc = DJC_OK;
	for (size_t i = 0; i < n && !rc; i++) rc = conn_table(c, tables[i], &v[i]);
	if (!rc) rc = adopt_stale(c, v, n, why);
	free(v);
	return rc;
}

int adopt_missing(djc_conn *c, char **out)
{
	*out = NULL;
	int rc = pipe_load(c);
	if (rc) return rc;
	char *missing = *out = xcalloc(c->pipe->n + 1, 1);
	stale_ctx x = {0};
	for (size_t i = 0; !rc && i < c->pipe->n; i++) {
		const table *t = c->pipe->tables[i];
		int found;
		missing[i] = 0;
		if (!t->adopted || (rc = add_cat(c, &x, t->schema, &found))) continue;
		const db_catalog *cat = cat_of(&x, t->schema);
		missing[i] = !cat || !db_catalog_table(cat, t->sql_name);
	}
	stale_free(&x);
	return rc;
}
