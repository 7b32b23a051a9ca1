/* lifecycle.c - schema changes after declare: the schema-change lock and
 * its undo log (schema_tx), drop and alter. Cascading delete is in rows.c. */
#include "table.h"
#include "statements.h"
#include "sql/ddl.h"
#include <stdarg.h>
#include "table/opts.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ schema_tx */

int stx_begin(djc_conn *c, schema_tx *x)
{
	memset(x, 0, sizeof *x);
	if (!c->db) return conn_fail(c, DJC_ECONN, "not connected");
	x->d = db_ddl(c->db);
	int rc;
	if (x->d->transactional && (rc = db_begin(c->db))) return conn_dbfail(c, rc, "cannot start the schema change");
	if (x->d->lock_setup && (rc = db_exec(c->db, x->d->lock_setup, NULL, 0, NULL))) goto fail;
	if (x->d->lock) {
		db_res *r = NULL;
		val_t s = val_text(c->db->schema ? c->db->schema : "");
		rc = db_exec(c->db, x->d->lock, &s, x->d->by_schema ? 1 : 0, &r);
		val_free(&s);
		if (rc) goto fail;
		int got = !x->d->lock_returns_1 || (r->nrows == 1 && db_cell(r, 0, 0)->t != DJC_NULL && db_cell_int(r, 0, 0) == 1);
		db_res_free(r);
		if (!got) {
			if (x->d->transactional) db_rollback(c->db);
			return conn_fail(c, DJC_EBUSY, "another schema change (declare, drop or alter) of this schema did not "
					 "finish in time; try again");
		}
	}
	x->active = 1;
	return DJC_OK;
fail:
	rc = conn_dbfail(c, rc, "cannot take the schema-change lock");
	if (x->d->transactional) db_rollback(c->db);
	return rc;
}

void stx_undo(schema_tx *x, char *sql, val_t *p, size_t np)
{
	x->undo = xrealloc(x->undo, (x->nundo + 1) * sizeof(undo_step));
	x->undo[x->nundo++] = (undo_step){sql, p, np};
}

static void stx_free(schema_tx *x)
{
	for (size_t i = 0; i < x->nundo; i++) {
		free(x->undo[i].sql);
		for (size_t k = 0; k < x->undo[i].np; k++) val_free(&x->undo[i].p[k]);
		free(x->undo[i].p);
	}
	free(x->undo);
	x->undo = NULL;
	x->nundo = 0;
	x->active = 0;
}

static void stx_unlock(djc_conn *c, schema_tx *x)
{
	if (x->d->unlock) db_exec(c->db, x->d->unlock, NULL, 0, NULL);
}

int stx_commit(djc_conn *c, schema_tx *x)
{
	int rc = DJC_OK;
	if (x->d->transactional) {
		if ((rc = db_commit(c->db))) {
			rc = conn_dbfail(c, rc, "schema change");
			db_rollback(c->db);
		}
	} else
		stx_unlock(c, x);
	stx_free(x);
	return rc;
}

void stx_abort(djc_conn *c, schema_tx *x)
{
	if (!x->active) return;
	if (x->d->transactional) {
		db_rollback(c->db);
	} else {
		/* undo what was done, newest first; a step that fails is named
		 * after the error that made us undo */
		char first[sizeof c->err];
		snprintf(first, sizeof first, "%s", c->err);
		int bad = 0;
		for (size_t i = x->nundo; i-- > 0;) {
			int rc = db_exec(c->db, x->undo[i].sql, x->undo[i].p, x->undo[i].np, NULL);
			if (rc && !bad) {
				bad = 1;
				conn_fail(c, DJC_ERROR, "%s (undoing it failed too: %s)", first, c->db->err);
			}
		}
		stx_unlock(c, x);
	}
	stx_free(x);
}

void strv_free(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++) free(v[i]);
	free(v);
}

int sql_columns(djc_conn *c, const char *sql_name, char ***cols, size_t *n)
{
	*cols = NULL;
	*n = 0;
	const ddl_dialect *d = db_ddl(c->db);
	val_t p[2] = {val_text(c->db->schema ? c->db->schema : ""), val_text(sql_name)};
	db_res *r = NULL;
	int rc = db_exec(c->db, d->columns, d->by_schema ? p : p + 1, d->by_schema ? 2 : 1, &r);
	val_free(&p[0]);
	val_free(&p[1]);
	if (rc) return rc;
	if (r->nrows) {
		*cols = xcalloc(r->nrows, sizeof(char *));
		for (size_t i = 0; i < r->nrows; i++) {
			const char *s = db_cell_text(r, i, 0);
			(*cols)[i] = xstrdup(s ? s : "");
		}
		*n = r->nrows;
	}
	db_res_free(r);
	return DJC_OK;
}

int sql_count(djc_conn *c, const char *sql_name, long long *n)
{
	*n = -1;
	char **cols = NULL;
	size_t nc = 0;
	int rc = sql_columns(c, sql_name, &cols, &nc);
	strv_free(cols, nc);
	if (rc || !nc) return rc;
	db_res *r = NULL;
	if ((rc = tsql_run(c, &TS_COUNT, &(tctx){.table = sql_name}, NULL, 0, &r))) return rc;
	*n = r->nrows ? (long long)db_cell_int(r, 0, 0) : 0;
	db_res_free(r);
	return DJC_OK;
}

/* ------------------------------------------------------------- changes */

void changes_add(djc_changes *ch, const char *tname, const char *sql_name, const char *action, long long rows)
{
	ch->items = xrealloc(ch->items, (ch->n + 1) * sizeof(djc_change));
	ch->items[ch->n++] = (djc_change){xstrdup(tname), xstrdup(sql_name), xstrdup(action), rows};
}

void djc_changes_free(djc_changes *ch)
{
	if (!ch) return;
	for (size_t i = 0; i < ch->n; i++) {
		free(ch->items[i].table);
		free(ch->items[i].sql_name);
		free(ch->items[i].action);
	}
	free(ch->items);
	free(ch);
}

void djc_drop_options_init(djc_drop_options *o)
{
	if (o) *o = (djc_drop_options)DJC_DROP_OPTIONS_INIT;
}
void djc_delete_options_init(djc_delete_options *o)
{
	if (o) *o = (djc_delete_options)DJC_DELETE_OPTIONS_INIT;
}
void djc_alter_options_init(djc_alter_options *o)
{
	if (o) *o = (djc_alter_options)DJC_ALTER_OPTIONS_INIT;
}

/* ---------------------------------------------------------------- drop */

/* The names of the tables v[0..n) (owned by them), for {names}. */
static tctx names_of(table **v, size_t n)
{
	const char **names = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) names[i] = v[i]->name;
	return (tctx){.names = names, .n = n};
}

/* Take the stored definitions of v[0..n) away (under the lock), first, so
 * that no other process finds a table that is about to go; each is put
 * back if a DROP fails after (where DDL is not transactional). */
int pipe_forget_stored(djc_conn *c, schema_tx *x, table **v, size_t n)
{
	tctx names = names_of(v, n);
	db_res *meta = NULL;
	int rc = tsql_run(c, &TS_PIPE_ROWS, &names, NULL, 0, &meta);
	for (size_t i = 0; !rc && i < meta->nrows; i++) {
		val_t p[4];
		for (size_t k = 0; k < 4; k++) {
			const char *s = db_cell_text(meta, i, k);
			p[k] = k == 1 ? val_int(db_cell_int(meta, i, k)) : val_text(s ? s : "");
		}
		tsql_undo(c, x, &TS_PIPE_INSERT, NULL, p, 4);
		for (size_t k = 0; k < 4; k++) val_free(&p[k]);
	}
	if (!rc) rc = tsql_run(c, &TS_PIPE_FORGET_MANY, &names, NULL, 0, NULL);
	db_res_free(meta);
	free((void *)names.names);
	return rc ? conn_dbfail(c, rc, "drop") : DJC_OK;
}

/* Drop the SQL tables drops[0..nd): in one statement where the dialect
 * commits each DROP by itself (MariaDB/MySQL), else one by one. */
static int drop_tables(djc_conn *c, const schema_tx *x, const char **drops, size_t nd)
{
	int rc = DJC_OK;
	if (x->d->drop_many && nd) {
		if ((rc = tsql_run(c, &TS_DROP_MANY, &(tctx){.names = drops, .n = nd}, NULL, 0, NULL)))
			rc = conn_dbfail(c, rc, "drop");
	} else
		for (size_t i = 0; i < nd && !rc; i++)
			if ((rc = tsql_run(c, &TS_DROP, &(tctx){.table = drops[i]}, NULL, 0, NULL))) rc = conn_dbfail(c, rc, drops[i]);
	return rc;
}

/* What dropping v[0..n) drops: each table's auxiliary tables and itself,
 * counted into ch ("drop", or "drop (missing)" for one that is gone).
 * The SQL names of those that exist into *drops (caller frees; the names
 * are the tables'), how many into *nd. */
static int drop_list(djc_conn *c, table **v, size_t n, djc_changes *ch, const char ***drops, size_t *nd)
{
	*drops = xcalloc(n * (TABLE_AUX_MAX + 1) + 1, sizeof(char *));
	*nd = 0;
	for (size_t i = 0; i < n; i++) {
		const char *names[TABLE_AUX_MAX + 1];
		size_t na = table_aux_tables(v[i], names, TABLE_AUX_MAX);
		names[na++] = v[i]->sql_name;
		for (size_t k = 0; k < na; k++) {
			long long rows;
			int rc = sql_count(c, names[k], &rows);
			if (rc) return conn_dbfail(c, rc, names[k]);
			changes_add(ch, v[i]->name, names[k], rows < 0 ? "drop (missing)" : "drop", rows);
			if (rows >= 0) (*drops)[(*nd)++] = names[k];
		}
	}
	return DJC_OK;
}

static int drop_once(djc_conn *c, const char *name, int dry_run, djc_changes *ch)
{
	schema_tx x;
	int rc = stx_begin(c, &x);
	if (rc) return rc;
	table **v = NULL;
	const char **drops = NULL;
	size_t n = 0, nd = 0;
	/* under the lock: what is stored now */
	table *t;
	if ((rc = pipe_load(c)) || (rc = conn_table(c, name, &t))) goto fail;
	if (t->tier == TIER_PART) {
		rc = conn_fail(c, DJC_EINVAL, "%s is a part table: it is dropped with its master (djc drop %s)", t->name,
			       t->master->name);
		goto fail;
	}
	v = pipe_descendants(c, t, &n);
	for (size_t i = 0; i < n; i++)
		if (v[i]->adopted) {   /* never DDL on DataJoint's tables */
			rc = adopted_drop_refuse(c, v[i], t);
			goto fail;
		}
	/* dependents first: the reverse of the declaration order */
	for (size_t i = 0; i < n / 2; i++) { table *s = v[i]; v[i] = v[n - 1 - i]; v[n - 1 - i] = s; }
	if ((rc = drop_list(c, v, n, ch, &drops, &nd))) goto fail;
	if (dry_run) {
		stx_abort(c, &x);
		goto out;
	}
	if ((rc = pipe_forget_stored(c, &x, v, n)) || (rc = drop_tables(c, &x, drops, nd))) goto fail;
	if ((rc = stx_commit(c, &x))) goto out;
	ch->applied = 1;
	for (size_t i = 0; i < n; i++) pipe_retire(c, v[i]);
	goto out;
fail:
	stx_abort(c, &x);
out:
	free(drops);
	free(v);
	return rc;
}

int djc_drop(djc_changes **out, djc_conn *c, const char *name, const djc_drop_options *opts)
{
	if (out) *out = NULL;
	if (!c) return DJC_EINVAL;
	djc_drop_options o = DJC_DROP_OPTIONS_INIT;
	if (opts) {
		if (OPTS_VERSION(c, "drop", opts, 1, DROP)) return DJC_EINVAL;
		o = *opts;
	}
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	if (t->adopted) return adopted_drop_refuse(c, t, t);
	/* not retried: a drop that waited its bound for the tables is told */
	djc_changes *ch = xcalloc(1, sizeof *ch);
	rc = drop_once(c, name, o.dry_run, ch);
	if (out && ch->n) *out = ch;
	else djc_changes_free(ch);
	return rc;
}

/* --------------------------------------------------------------- alter */

/* Integer types: width in bits and signedness; 0 for other types. */
static int int_bits(coltype t, int *is_unsigned)
{
	*is_unsigned = t >= T_UINT8 && t <= T_UINT64;
	switch (t) {
	case T_INT8: case T_UINT8: return 8;
	case T_INT16: case T_UINT16: return 16;
	case T_INT32: case T_UINT32: return 32;
	case T_INT64: case T_UINT64: return 64;
	default: return 0;
	}
}

/* 1 if every value of type a is a value of type b: a wider varchar, or an
 * integer type that holds the old one's whole range. */
static int widens(const coldef *a, const coldef *b)
{
	if (a->t == T_VARCHAR && b->t == T_VARCHAR) return b->p >= a->p;
	int ua, ub;
	int ba = int_bits(a->t, &ua), bb = int_bits(b->t, &ub);
	if (!ba || !bb) return 0;
	if (ua == ub) return bb >= ba;
	return ua && !ub && bb > ba;   /* uintN fits in intM for M > N */
}

static int same_str(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

/* The same definition text, but for the blank lines and spaces at its end
 * (a stored block is read back with a newline more). */
static int same_text(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	while (na && strchr(" \t\r\n", a[na - 1])) na--;
	while (nb && strchr(" \t\r\n", b[nb - 1])) nb--;
	return na == nb && !memcmp(a, b, na);
}

static void attr_text(sb_t *b, const attr *a)
{
	sb_add(b, a->name);
	if (a->nullable) sb_add(b, " = null");
	else if (a->has_def) sb_printf(b, " = %s", a->def);
	sb_printf(b, " : %s", a->type_text);
}

/* The old name a rename names: the comment starts with "{old}". */
static int rename_from(const attr *a, char *buf, size_t n)
{
	const char *s = a->comment;
	if (!s || *s != '{') return 0;
	const char *e = strchr(s, '}');
	if (!e) return 0;
	const char *p = s + 1;
	while (*p == ' ') p++;
	size_t k = (size_t)(e - p);
	while (k && p[k - 1] == ' ') k--;
	if (!k || k >= n) return 0;
	memcpy(buf, p, k);
	buf[k] = 0;
	return 1;
}

/* An alter plan of one table under way (alter_plan). */
typedef struct plan {
	djc_conn *c;
	const table *old, *nt;
	const char *file;
	char instead[512];    /* what to do for a change alter does not make */
	const char **from;    /* old name of each attribute of nt (NULL: new) */
	alt_op *v;            /* the SQL changes */
	size_t n;
	djc_changes *ch;
	sb_t act;             /* scratch for a change's text */
} plan;

/* Refuse a change of what alter does not change: tier, primary key,
 * dependencies. */
static int plan_shape(plan *pl)
{
	const table *old = pl->old, *nt = pl->nt;
	const char *nm = nt->name, *file = pl->file;
	djc_conn *c = pl->c;
	if (old->tier != nt->tier)
		return conn_fail(c, DJC_EINVAL, "%s:%d: table %s: the tier changes from %s to %s; %s", file, nt->line, nm,
				 tier_name(old->tier), tier_name(nt->tier), pl->instead);
	int keyok = old->nkey == nt->nkey;
	for (size_t i = 0; keyok && i < old->nkey; i++)
		keyok = !strcmp(old->attrs[i].name, nt->attrs[i].name) && !strcmp(old->attrs[i].type_text, nt->attrs[i].type_text);
	if (!keyok) {
		sb_t a = SB_INIT, b = SB_INIT;
		for (size_t i = 0; i < old->nkey; i++) sb_printf(&a, "%s%s : %s", i ? ", " : "", old->attrs[i].name, old->attrs[i].type_text);
		for (size_t i = 0; i < nt->nkey; i++) sb_printf(&b, "%s%s : %s", i ? ", " : "", nt->attrs[i].name, nt->attrs[i].type_text);
		int rc = conn_fail(c, DJC_EINVAL, "%s:%d: table %s: the primary key changes from (%s) to (%s); %s", file, nt->line,
				   nm, sb_str(&a), sb_str(&b), pl->instead);
		sb_free(&a);
		sb_free(&b);
		return rc;
	}
	for (int pass = 0; pass < 2; pass++) {
		const table *x = pass ? nt : old, *y = pass ? old : nt;
		for (size_t i = 0; i < x->nfks; i++) {
			int found = 0;
			for (size_t k = 0; k < y->nfks && !found; k++)
				found = !strcmp(x->fks[i].parent, y->fks[k].parent) && x->fks[i].in_key == y->fks[k].in_key;
			if (!found)
				return conn_fail(c, DJC_EINVAL, "%s:%d: table %s: the dependency '-> %s'%s is %s; %s", file, nt->line, nm,
						 x->fks[i].parent, x->fks[i].in_key ? "" : " (below ---)", pass ? "new" : "gone",
						 pl->instead);
		}
	}
	return DJC_OK;
}

/* pl->from[i]: the old attribute attribute i of nt is renamed from
 * ({old} at the start of its comment), else its own name when old has
 * it. DJC_EINVAL for a rename that cannot be. */
static int plan_from(plan *pl)
{
	const table *old = pl->old, *nt = pl->nt;
	const char *nm = nt->name, *file = pl->file;
	djc_conn *c = pl->c;
	for (size_t i = 0; i < nt->nattrs; i++) {
		const attr *a = &nt->attrs[i];
		char was[128];
		if (!(!a->in_key && !a->from_parent && rename_from(a, was, sizeof was) && strcmp(was, a->name) &&
		      !table_attr(old, a->name))) {
			if (table_attr(old, a->name)) pl->from[i] = a->name;
			continue;
		}
		const attr *o = table_attr(old, was);
		if (!o)
			return conn_fail(c, DJC_EINVAL, "%s:%d: table %s: attribute '%s' is to be renamed from '%s' ({%s} in its "
					 "comment), but %s has no attribute '%s'", file, nt->line, nm, a->name, was, was, nm, was);
		if (o->in_key || o->from_parent)
			return conn_fail(c, DJC_EINVAL, "%s:%d: table %s: '%s' is a key or dependency attribute and cannot be renamed; %s",
					 file, nt->line, nm, was, pl->instead);
		if (table_attr(nt, was))
			return conn_fail(c, DJC_EINVAL, "%s:%d: table %s: '%s' is renamed to '%s' but is still in the definition", file,
					 nt->line, nm, was, a->name);
		for (size_t k = 0; k < i; k++)
			if (pl->from[k] && !strcmp(pl->from[k], was))
				return conn_fail(c, DJC_EINVAL, "%s:%d: table %s: '%s' is renamed twice", file, nt->line, nm, was);
		pl->from[i] = o->name;
	}
	return DJC_OK;
}

/* Refuse a change of the indexes (compared after renames). */
static int plan_indexes(plan *pl)
{
	const table *old = pl->old, *nt = pl->nt;
	int same = old->nidx == nt->nidx;
	for (size_t i = 0; same && i < nt->nidx; i++) {
		const tindex *o = &old->idx[i], *n = &nt->idx[i];
		same = o->unique == n->unique && o->nattrs == n->nattrs;
		for (size_t k = 0; same && k < n->nattrs; k++) {
			const char *was = n->attrs[k];
			for (size_t j = 0; j < nt->nattrs; j++)
				if (!strcmp(nt->attrs[j].name, n->attrs[k])) was = pl->from[j] ? pl->from[j] : "";
			same = !strcmp(was, o->attrs[k]);
		}
	}
	if (same) return DJC_OK;
	return conn_fail(pl->c, DJC_EINVAL, "%s:%d: table %s: its indexes change; %s", pl->file, nt->line, nt->name, pl->instead);
}

/* One change of the plan, described by act (printf). */
static void plan_note(plan *pl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void plan_note(plan *pl, const char *fmt, ...)
{
	sb_reset(&pl->act);
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0) abort();
	va_end(ap);
	sb_add(&pl->act, s);
	free(s);
	changes_add(pl->ch, pl->nt->name, pl->nt->sql_name, sb_str(&pl->act), -1);
}

/* Drops: old secondary attributes nothing comes from. */
static void plan_drops(plan *pl)
{
	for (size_t i = 0; i < pl->old->nattrs; i++) {
		const attr *o = &pl->old->attrs[i];
		int kept = 0;
		for (size_t k = 0; k < pl->nt->nattrs && !kept; k++) kept = pl->from[k] && !strcmp(pl->from[k], o->name);
		if (kept) continue;
		pl->v[pl->n++] = (alt_op){ALT_DROP, o->name, NULL, o};
		plan_note(pl, "drop %s", o->name);
	}
}

/* A new attribute a: added, with its default for the rows that exist. */
static int plan_add(plan *pl, const attr *a)
{
	if (!a->nullable && !a->has_def)
		return conn_fail(pl->c, DJC_EINVAL, "%s:%d: table %s: new attribute '%s' needs a default for the rows that exist "
				 "('%s = 0 : %s') or must be nullable ('%s = null : %s')", pl->file, pl->nt->line, pl->nt->name,
				 a->name, a->name, a->type_text, a->name, a->type_text);
	pl->v[pl->n++] = (alt_op){ALT_ADD, a->name, a, NULL};
	sb_t t = SB_INIT;
	attr_text(&t, a);
	plan_note(pl, "add %s", sb_str(&t));
	sb_free(&t);
	return DJC_OK;
}

/* Attribute a of nt that was o: renamed, widened, its default or comment
 * changed; DJC_EINVAL for what alter does not change. */
static int plan_kept(plan *pl, const attr *o, const attr *a)
{
	const char *nm = pl->nt->name;
	if (strcmp(o->name, a->name)) {
		pl->v[pl->n++] = (alt_op){ALT_RENAME, o->name, a, o};
		plan_note(pl, "rename %s to %s", o->name, a->name);
	}
	if (o->nullable != a->nullable)
		return conn_fail(pl->c, DJC_EINVAL, "%s:%d: table %s: attribute '%s' %s nullable; alter does not change that: add a "
				 "new attribute and drop the old one, or drop and declare the table again", pl->file, pl->nt->line,
				 nm, a->name, a->nullable ? "becomes" : "is no longer");
	if (strcmp(o->type_text, a->type_text)) {
		if (!widens(&o->type, &a->type))
			return conn_fail(pl->c, DJC_EINVAL, "%s:%d: table %s: the type of '%s' changes from %s to %s; alter only widens "
					 "varchar(n) and integer types (a type that holds every old value); add a new attribute "
					 "and drop the old one, or drop and declare the table again", pl->file, pl->nt->line, nm,
					 a->name, o->type_text, a->type_text);
		pl->v[pl->n++] = (alt_op){ALT_RETYPE, a->name, a, o};
		plan_note(pl, "widen %s from %s to %s", a->name, o->type_text, a->type_text);
	}
	if (o->has_def != a->has_def || (a->has_def && strcmp(o->def, a->def)))
		plan_note(pl, "default of %s: %s", a->name, a->has_def ? a->def : "none");
	char was[128];
	const char *nc = a->comment;
	if (nc && rename_from(a, was, sizeof was) && strcmp(o->name, a->name)) {
		nc = strchr(nc, '}') + 1;
		while (*nc == ' ') nc++;
	}
	if (!same_str(o->comment, nc)) plan_note(pl, "comment of %s", a->name);
	return DJC_OK;
}

/* The key source's restriction and how the rows are made (declare
 * changes that too); the tables of the key source alter does not change
 * (its jobs table's key may change). */
static int plan_making(plan *pl)
{
	const table *old = pl->old, *nt = pl->nt;
	if (!same_str(old->key_source_join, nt->key_source_join))
		return conn_fail(pl->c, DJC_EINVAL, "%s:%d: table %s: alter does not change the tables of key_source (%s -> %s); "
				 "drop and declare it again", pl->file, nt->line, nt->name,
				 old->key_source_join ? old->key_source_join : "its parents",
				 nt->key_source_join ? nt->key_source_join : "its parents");
	if (!same_str(old->key_source_where, nt->key_source_where))
		plan_note(pl, "key_source: %s -> %s", old->key_source_where ? old->key_source_where : "none",
			  nt->key_source_where ? nt->key_source_where : "none");
	char *how[3];
	size_t nh = table_how_changes(old, nt, how);
	for (size_t i = 0; i < nh; i++) {
		changes_add(pl->ch, nt->name, nt->sql_name, how[i], -1);
		free(how[i]);
	}
	return DJC_OK;
}

/* Compare the declared table old with its new definition nt: the SQL
 * changes into *ops (their attrs point into nt and old), one entry per
 * change into ch. DJC_EINVAL naming the table and what to do instead for
 * a change alter does not make. */
static int alter_plan(djc_conn *c, const table *old, const table *nt, const char *file, alt_op **ops, size_t *nops,
		      djc_changes *ch)
{
	*ops = NULL;
	*nops = 0;
	plan pl = {.c = c, .old = old, .nt = nt, .file = file, .ch = ch, .act = SB_INIT};
	snprintf(pl.instead, sizeof pl.instead, "alter changes secondary attributes only; to change this, 'djc drop %s' (it "
		 "drops the tables that depend on it too) and declare it again", nt->name);
	int rc = plan_shape(&pl);
	if (rc) return rc;
	pl.from = xcalloc(nt->nattrs + 1, sizeof(char *));
	pl.v = xcalloc(2 * (nt->nattrs + old->nattrs) + 1, sizeof(alt_op));
	if (!(rc = plan_from(&pl)) && !(rc = plan_indexes(&pl))) {
		plan_drops(&pl);
		for (size_t i = 0; i < nt->nattrs && !rc; i++)
			rc = pl.from[i] ? plan_kept(&pl, table_attr(old, pl.from[i]), &nt->attrs[i]) : plan_add(&pl, &nt->attrs[i]);
	}
	if (!rc) rc = plan_making(&pl);
	sb_free(&pl.act);
	free(pl.from);
	if (rc) { free(pl.v); return rc; }
	*ops = pl.v;
	*nops = pl.n;
	return DJC_OK;
}

int tbl_declare_diff(djc_conn *c, const table *old, const table *nt, const char *file, sb_t *b)
{
	djc_changes *ch = xcalloc(1, sizeof *ch);
	alt_op *ops = NULL;
	size_t nops = 0;
	int rc = alter_plan(c, old, nt, file, &ops, &nops, ch);
	free(ops);
	if (rc) {
		/* alter's reason, without its "file:line: table X: " */
		char head[512];
		snprintf(head, sizeof head, "%s:%d: table %s: ", file, nt->line, nt->name);
		sb_add(b, strncmp(c->err, head, strlen(head)) ? c->err : c->err + strlen(head));
	} else
		for (size_t i = 0; i < ch->n; i++) sb_printf(b, "%s%s", i ? ", " : "", ch->items[i].action);
	djc_changes_free(ch);
	return rc;
}

int pipe_set_text(djc_conn *c, schema_tx *x, const char *name, const char *text, const char *was)
{
	val_t p[2] = {val_text(text), val_text(name)};
	int rc = tsql_run(c, &TS_PIPE_SET_TEXT, NULL, p, 2, NULL);
	val_free(&p[0]);
	if (!rc) {
		p[0] = val_text(was);
		tsql_undo(c, x, &TS_PIPE_SET_TEXT, NULL, p, 2);
	}
	val_free(&p[0]);
	val_free(&p[1]);
	return rc ? conn_dbfail(c, rc, name) : DJC_OK;
}

/* The job metadata columns of a stored table stay (alter neither adds
 * nor drops them; its stored text keeps its job_metadata line). */
static int alter_job_meta(djc_conn *c, const pipeline *np, const char *file)
{
	for (size_t i = 0; i < np->n; i++) {
		table *nt = np->tables[i], *old = pipeline_find(c->pipe, nt->name);
		if (old && old->job_meta) table_enable_job_meta(nt);
		else if (old && nt->job_meta)
			return conn_fail(c, DJC_EINVAL,
					 "%s:%d: table %s: alter does not add job metadata columns (job_metadata = true); 'djc "
					 "drop %s' and declare it again to add them",
					 file, nt->line, nt->name, nt->name);
	}
	return DJC_OK;
}

/* The plans of every table of np (before any changes), into ops[i] and
 * nops[i], their changes into ch. */
static int alter_plan_all(djc_conn *c, const pipeline *np, const char *file, alt_op **ops, size_t *nops, djc_changes *ch)
{
	int rc = DJC_OK;
	for (size_t i = 0; i < np->n && !rc; i++) {
		table *nt = np->tables[i], *old = pipeline_find(c->pipe, nt->name);
		if (!old) {
			changes_add(ch, nt->name, nt->sql_name, "not declared (djc declare creates it)", -1);
			continue;
		}
		if (old->adopted && strcmp(old->canon, nt->canon)) {
			char *m = table_adopted_refusal(old);
			rc = conn_fail(c, DJC_EINVAL, "%s:%d: %s", file, nt->line, m);
			free(m);
			break;
		}
		size_t before = ch->n;
		rc = alter_plan(c, old, nt, file, &ops[i], &nops[i], ch);
		if (!rc && ch->n == before && !same_text(old->text, nt->text))
			changes_add(ch, nt->name, nt->sql_name, "definition text", -1);
	}
	return rc;
}

/* Change the table nt to ops[0..nops): the stored text first (put back if
 * the ALTER fails where DDL is not transactional), then its ALTER
 * statement(s). */
static int alter_apply(djc_conn *c, schema_tx *x, const table *nt, const char *was, const alt_op *ops, size_t nops,
		       const char *file)
{
	int rc = pipe_set_text(c, x, nt->name, nt->text, was);
	if (rc || !nops) return rc;
	char **st = NULL, *msg = NULL;
	sb_t qt = SB_INIT;
	table_qname(c->db, &qt, nt);
	rc = ddl_alter(&st, c->db, sb_str(&qt), ops, nops, &msg);
	sb_free(&qt);
	if (rc) {
		rc = conn_fail(c, rc, "%s:%d: table %s: %s", file, nt->line, nt->name, msg);
		free(msg);
		return rc;
	}
	for (size_t k = 0; st[k] && !rc; k++)
		if ((rc = db_exec(c->db, st[k], NULL, 0, NULL))) rc = conn_dbfail(c, rc, nt->name);
	for (size_t k = 0; st[k]; k++) free(st[k]);
	free(st);
	return rc;
}

static int alter_once(djc_conn *c, const char *text, const char *file, int dry_run, djc_changes *ch)
{
	schema_tx x;
	int rc = stx_begin(c, &x);
	if (rc) return rc;
	pipeline *np = NULL;
	sb_t done = SB_INIT;   /* tables changed for good (DDL not transactional) */
	if ((rc = pipe_parse_text(c, text, file, &np))) goto fail;
	if ((rc = keysource_check(c, np, file))) goto fail;
	if ((rc = alter_job_meta(c, np, file))) goto fail;
	alt_op **ops = xcalloc(np->n + 1, sizeof(alt_op *));
	size_t *nops = xcalloc(np->n + 1, sizeof(size_t));
	rc = alter_plan_all(c, np, file, ops, nops, ch);
	for (size_t i = 0; i < np->n && !rc && !dry_run; i++) {
		table *nt = np->tables[i], *old = pipeline_find(c->pipe, nt->name);
		if (!old || same_text(old->text, nt->text)) continue;
		if ((rc = alter_apply(c, &x, nt, old->text, ops[i], nops[i], file))) break;
		if (!x.d->transactional) {
			/* this table's change stands, whatever happens to the next */
			stx_free(&x);
			x.active = 1;
			sb_printf(&done, "%s%s", done.len ? ", " : "", nt->name);
		}
	}
	for (size_t i = 0; i < np->n; i++) free(ops[i]);
	free(ops);
	free(nops);
	if (rc) goto fail;
	if (dry_run) {
		stx_abort(c, &x);
		goto out;
	}
	if ((rc = stx_commit(c, &x))) goto out;
	ch->applied = 1;
	rc = pipe_load(c);
	goto out;
fail:
	if (done.len) {
		char first[sizeof c->err];
		snprintf(first, sizeof first, "%s", c->err);
		conn_fail(c, rc, "%s (the change of %s was made before and stands)", first, sb_str(&done));
	}
	stx_abort(c, &x);
	if (done.len) pipe_load(c);
out:
	sb_free(&done);
	pipeline_free(np);
	return rc;
}

int djc_alter(djc_changes **out, djc_conn *c, const char *text, const char *filename, const djc_alter_options *opts)
{
	if (out) *out = NULL;
	if (!c) return DJC_EINVAL;
	if (!text) return conn_fail(c, DJC_EINVAL, "no pipeline text (NULL)");
	djc_alter_options o = DJC_ALTER_OPTIONS_INIT;
	if (opts) {
		if (OPTS_VERSION(c, "alter", opts, 1, ALTER)) return DJC_EINVAL;
		o = *opts;
	}
	const char *file = filename ? filename : "<pipeline>";
	/* bad input before any lock */
	pipeline *np;
	int rc = pipe_parse_text(c, text, file, &np);
	if (rc) return rc;
	size_t n = np->n;
	pipeline_free(np);
	if (!n) return conn_fail(c, DJC_EINVAL, "%s: no tables (a table starts with 'Name (tier)')", file);
	djc_changes *ch = xcalloc(1, sizeof *ch);
	rc = alter_once(c, text, file, o.dry_run, ch);
	if (out) *out = ch;
	else djc_changes_free(ch);
	return rc;
}
