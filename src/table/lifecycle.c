/* lifecycle.c - schema changes after declare: the schema-change lock and
 * its undo log (schema_tx), drop and alter. Cascading delete is in rows.c. */
#include "table.h"
#include "table/opts.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ schema_tx */

int stx_begin(djc_conn *c, schema_tx *x)
{
	memset(x, 0, sizeof *x);
	if (!c->db) return conn_fail(c, DJC_ECONN, "not connected");
	x->d = ddl_dialect_for(c->db->drv->name);
	if (!x->d) return conn_fail(c, DJC_ERROR, "no schema-change support for database driver %s", c->db->drv->name);
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
	const ddl_dialect *d = ddl_dialect_for(c->db->drv->name);
	if (!d) return DJC_ERROR;
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
	sb_t q = SB_INIT;
	sb_add(&q, "SELECT COUNT(*) FROM ");
	db_qtable(c->db, &q, sql_name);
	db_res *r = NULL;
	rc = db_exec(c->db, sb_str(&q), NULL, 0, &r);
	sb_free(&q);
	if (rc) return rc;
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

/* The stored rows of the tables in v, to put back if a drop on a server
 * without transactional DDL fails after they were deleted. */
static int meta_rows(djc_conn *c, table **v, size_t n, db_res **out)
{
	sb_t q = SB_INIT;
	pvec p = {0};
	sb_add(&q, "SELECT ");
	db_qi(c->db, &q, "name"); sb_add(&q, ", ");
	db_qi(c->db, &q, "position"); sb_add(&q, ", ");
	db_qi(c->db, &q, "tier"); sb_add(&q, ", ");
	db_qi(c->db, &q, "definition");
	sb_add(&q, " FROM ");
	db_qtable(c->db, &q, META_TABLE);
	sb_add(&q, " WHERE ");
	db_qi(c->db, &q, "name");
	sb_add(&q, " IN (");
	for (size_t i = 0; i < n; i++) {
		sb_add(&q, i ? ", ?" : "?");
		pvec_push(&p, val_text(v[i]->name));
	}
	sb_addc(&q, ')');
	int rc = db_exec(c->db, sb_str(&q), p.v, p.n, out);
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

static int drop_once(djc_conn *c, const char *name, int dry_run, djc_changes *ch)
{
	schema_tx x;
	int rc = stx_begin(c, &x);
	if (rc) return rc;
	table **v = NULL;
	size_t n = 0;
	db_res *meta = NULL;
	sb_t q = SB_INIT;
	/* under the lock: what is stored now */
	table *t;
	if ((rc = pipe_load(c)) || (rc = conn_table(c, name, &t))) goto fail;
	if (t->tier == TIER_PART) {
		rc = conn_fail(c, DJC_EINVAL, "%s is a part table: it is dropped with its master (djc drop %s)", t->name,
			       t->master->name);
		goto fail;
	}
	v = pipe_descendants(c, t, &n);
	/* dependents first: the reverse of the declaration order */
	for (size_t i = 0; i < n / 2; i++) { table *s = v[i]; v[i] = v[n - 1 - i]; v[n - 1 - i] = s; }
	const char **drops = xcalloc(n * (TABLE_AUX_MAX + 1) + 1, sizeof(char *));
	size_t nd = 0;
	for (size_t i = 0; i < n; i++) {
		const char *names[TABLE_AUX_MAX + 1];
		size_t na = table_aux_tables(v[i], names, TABLE_AUX_MAX);
		names[na++] = v[i]->sql_name;
		for (size_t k = 0; k < na; k++) {
			long long rows;
			if ((rc = sql_count(c, names[k], &rows))) {
				free(drops);
				rc = conn_dbfail(c, rc, names[k]);
				goto fail;
			}
			changes_add(ch, v[i]->name, names[k], rows < 0 ? "drop (missing)" : "drop", rows);
			if (rows >= 0) drops[nd++] = names[k];
		}
	}
	if (dry_run) {
		free(drops);
		stx_abort(c, &x);
		goto out;
	}
	/* the stored definitions first, so that no other process finds a
	 * table that is about to go; put back if a DROP fails */
	if ((rc = meta_rows(c, v, n, &meta))) { free(drops); rc = conn_dbfail(c, rc, "drop"); goto fail; }
	for (size_t i = 0; i < meta->nrows; i++) {
		sb_add(&q, "INSERT INTO ");
		db_qtable(c->db, &q, META_TABLE);
		sb_add(&q, " (");
		db_qi(c->db, &q, "name"); sb_add(&q, ", ");
		db_qi(c->db, &q, "position"); sb_add(&q, ", ");
		db_qi(c->db, &q, "tier"); sb_add(&q, ", ");
		db_qi(c->db, &q, "definition");
		sb_add(&q, ") VALUES (?, ?, ?, ?)");
		val_t *p = xcalloc(4, sizeof(val_t));
		for (size_t k = 0; k < 4; k++) {
			const char *s = db_cell_text(meta, i, k);
			p[k] = k == 1 ? val_int(db_cell_int(meta, i, k)) : val_text(s ? s : "");
		}
		stx_undo(&x, sb_steal(&q), p, 4);
	}
	sb_add(&q, "DELETE FROM ");
	db_qtable(c->db, &q, META_TABLE);
	sb_add(&q, " WHERE ");
	db_qi(c->db, &q, "name");
	sb_add(&q, " IN (");
	pvec pv = {0};
	for (size_t i = 0; i < n; i++) {
		sb_add(&q, i ? ", ?" : "?");
		pvec_push(&pv, val_text(v[i]->name));
	}
	sb_addc(&q, ')');
	rc = db_exec(c->db, sb_str(&q), pv.v, pv.n, NULL);
	pvec_free(&pv);
	sb_reset(&q);
	if (rc) { free(drops); rc = conn_dbfail(c, rc, "drop"); goto fail; }
	if (x.d->drop_many && nd) {
		/* one statement: MariaDB/MySQL commit each DROP by itself */
		sb_add(&q, "DROP TABLE IF EXISTS ");
		for (size_t i = 0; i < nd; i++) {
			if (i) sb_add(&q, ", ");
			db_qtable(c->db, &q, drops[i]);
		}
		rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
		if (rc) rc = conn_dbfail(c, rc, "drop");
	} else
		for (size_t i = 0; i < nd && !rc; i++) {
			sb_reset(&q);
			sb_add(&q, "DROP TABLE IF EXISTS ");
			db_qtable(c->db, &q, drops[i]);
			if ((rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL))) rc = conn_dbfail(c, rc, drops[i]);
		}
	free(drops);
	if (rc) goto fail;
	if ((rc = stx_commit(c, &x))) goto out;
	ch->applied = 1;
	for (size_t i = 0; i < n; i++) pipe_retire(c, v[i]);
	goto out;
fail:
	stx_abort(c, &x);
out:
	db_res_free(meta);
	sb_free(&q);
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

/* Compare the declared table old with its new definition nt: the SQL
 * changes into *ops (their attrs point into nt and old), one entry per
 * change into ch. DJC_EINVAL naming the table and what to do instead for
 * a change alter does not make. */
static int alter_plan(djc_conn *c, const table *old, const table *nt, const char *file, alt_op **ops, size_t *nops,
		      djc_changes *ch)
{
	*ops = NULL;
	*nops = 0;
	const char *nm = nt->name;
	char instead[512];
	snprintf(instead, sizeof instead, "alter changes secondary attributes only; to change this, 'djc drop %s' (it drops the "
		 "tables that depend on it too) and declare it again", nm);
	if (old->tier != nt->tier)
		return conn_fail(c, DJC_EINVAL, "%s:%d: table %s: the tier changes from %s to %s; %s", file, nt->line, nm,
				 tier_name(old->tier), tier_name(nt->tier), instead);
	int keyok = old->nkey == nt->nkey;
	for (size_t i = 0; keyok && i < old->nkey; i++)
		keyok = !strcmp(old->attrs[i].name, nt->attrs[i].name) && !strcmp(old->attrs[i].type_text, nt->attrs[i].type_text);
	if (!keyok) {
		sb_t a = SB_INIT, b = SB_INIT;
		for (size_t i = 0; i < old->nkey; i++) sb_printf(&a, "%s%s : %s", i ? ", " : "", old->attrs[i].name, old->attrs[i].type_text);
		for (size_t i = 0; i < nt->nkey; i++) sb_printf(&b, "%s%s : %s", i ? ", " : "", nt->attrs[i].name, nt->attrs[i].type_text);
		int rc = conn_fail(c, DJC_EINVAL, "%s:%d: table %s: the primary key changes from (%s) to (%s); %s", file, nt->line,
				   nm, sb_str(&a), sb_str(&b), instead);
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
						 x->fks[i].parent, x->fks[i].in_key ? "" : " (below ---)", pass ? "new" : "gone", instead);
		}
	}
	/* old name of each attribute of nt (NULL: new) */
	const char **from = xcalloc(nt->nattrs + 1, sizeof(char *));
	int rc = DJC_OK;
	for (size_t i = 0; i < nt->nattrs && !rc; i++) {
		const attr *a = &nt->attrs[i];
		char was[128];
		if (!a->in_key && !a->from_parent && rename_from(a, was, sizeof was) && strcmp(was, a->name) && !table_attr(old, a->name)) {
			const attr *o = table_attr(old, was);
			if (!o) {
				rc = conn_fail(c, DJC_EINVAL, "%s:%d: table %s: attribute '%s' is to be renamed from '%s' ({%s} in its comment), "
					       "but %s has no attribute '%s'", file, nt->line, nm, a->name, was, was, nm, was);
				break;
			}
			if (o->in_key || o->from_parent) {
				rc = conn_fail(c, DJC_EINVAL, "%s:%d: table %s: '%s' is a key or dependency attribute and cannot be renamed; %s",
					       file, nt->line, nm, was, instead);
				break;
			}
			if (table_attr(nt, was)) {
				rc = conn_fail(c, DJC_EINVAL, "%s:%d: table %s: '%s' is renamed to '%s' but is still in the definition", file,
					       nt->line, nm, was, a->name);
				break;
			}
			for (size_t k = 0; k < i; k++)
				if (from[k] && !strcmp(from[k], was)) {
					rc = conn_fail(c, DJC_EINVAL, "%s:%d: table %s: '%s' is renamed twice", file, nt->line, nm, was);
					break;
				}
			from[i] = o->name;
		} else if (table_attr(old, a->name))
			from[i] = a->name;
	}
	/* indexes: the same after renames */
	if (!rc) {
		int same = old->nidx == nt->nidx;
		for (size_t i = 0; same && i < nt->nidx; i++) {
			const tindex *o = &old->idx[i], *n = &nt->idx[i];
			same = o->unique == n->unique && o->nattrs == n->nattrs;
			for (size_t k = 0; same && k < n->nattrs; k++) {
				const char *was = n->attrs[k];
				for (size_t j = 0; j < nt->nattrs; j++)
					if (!strcmp(nt->attrs[j].name, n->attrs[k])) was = from[j] ? from[j] : "";
				same = !strcmp(was, o->attrs[k]);
			}
		}
		if (!same)
			rc = conn_fail(c, DJC_EINVAL, "%s:%d: table %s: its indexes change; %s", file, nt->line, nm, instead);
	}
	alt_op *v = xcalloc(2 * (nt->nattrs + old->nattrs) + 1, sizeof(alt_op));
	size_t n = 0;
	sb_t act = SB_INIT;
	/* drops: old secondary attributes nothing comes from */
	for (size_t i = 0; i < old->nattrs && !rc; i++) {
		const attr *o = &old->attrs[i];
		int kept = 0;
		for (size_t k = 0; k < nt->nattrs && !kept; k++) kept = from[k] && !strcmp(from[k], o->name);
		if (kept) continue;
		v[n++] = (alt_op){ALT_DROP, o->name, NULL, o};
		sb_reset(&act);
		sb_printf(&act, "drop %s", o->name);
		changes_add(ch, nm, nt->sql_name, sb_str(&act), -1);
	}
	for (size_t i = 0; i < nt->nattrs && !rc; i++) {
		const attr *a = &nt->attrs[i];
		sb_reset(&act);
		if (!from[i]) {
			if (!a->nullable && !a->has_def) {
				rc = conn_fail(c, DJC_EINVAL, "%s:%d: table %s: new attribute '%s' needs a default for the rows that exist "
					       "('%s = 0 : %s') or must be nullable ('%s = null : %s')", file, nt->line, nm, a->name,
					       a->name, a->type_text, a->name, a->type_text);
				break;
			}
			v[n++] = (alt_op){ALT_ADD, a->name, a, NULL};
			sb_add(&act, "add ");
			attr_text(&act, a);
			changes_add(ch, nm, nt->sql_name, sb_str(&act), -1);
			continue;
		}
		const attr *o = table_attr(old, from[i]);
		if (strcmp(from[i], a->name)) {
			v[n++] = (alt_op){ALT_RENAME, o->name, a, o};
			sb_printf(&act, "rename %s to %s", o->name, a->name);
			changes_add(ch, nm, nt->sql_name, sb_str(&act), -1);
		}
		if (o->nullable != a->nullable) {
			rc = conn_fail(c, DJC_EINVAL, "%s:%d: table %s: attribute '%s' %s nullable; alter does not change that: add a new "
				       "attribute and drop the old one, or drop and declare the table again", file, nt->line, nm, a->name,
				       a->nullable ? "becomes" : "is no longer");
			break;
		}
		if (strcmp(o->type_text, a->type_text)) {
			if (!widens(&o->type, &a->type)) {
				rc = conn_fail(c, DJC_EINVAL, "%s:%d: table %s: the type of '%s' changes from %s to %s; alter only widens "
					       "varchar(n) and integer types (a type that holds every old value); add a new attribute "
					       "and drop the old one, or drop and declare the table again", file, nt->line, nm, a->name,
					       o->type_text, a->type_text);
				break;
			}
			v[n++] = (alt_op){ALT_RETYPE, a->name, a, o};
			sb_reset(&act);
			sb_printf(&act, "widen %s from %s to %s", a->name, o->type_text, a->type_text);
			changes_add(ch, nm, nt->sql_name, sb_str(&act), -1);
		}
		if (o->has_def != a->has_def || (a->has_def && strcmp(o->def, a->def))) {
			sb_reset(&act);
			sb_printf(&act, "default of %s: %s", a->name, a->has_def ? a->def : "none");
			changes_add(ch, nm, nt->sql_name, sb_str(&act), -1);
		}
		char was[128];
		const char *nc = a->comment;
		if (nc && rename_from(a, was, sizeof was) && from[i] && strcmp(from[i], a->name)) {
			nc = strchr(nc, '}') + 1;
			while (*nc == ' ') nc++;
		}
		if (!same_str(o->comment, nc)) {
			sb_reset(&act);
			sb_printf(&act, "comment of %s", a->name);
			changes_add(ch, nm, nt->sql_name, sb_str(&act), -1);
		}
	}
	if (!rc) {
		if (!same_str(old->key_source_join, nt->key_source_join))   /* its jobs table's key may change */
			rc = conn_fail(c, DJC_EINVAL, "%s:%d: table %s: alter does not change the tables of key_source (%s -> %s); drop "
				       "and declare it again", file, nt->line, nm, old->key_source_join ? old->key_source_join : "its parents",
				       nt->key_source_join ? nt->key_source_join : "its parents");
		else if (!same_str(old->key_source_where, nt->key_source_where)) {
			sb_reset(&act);
			sb_printf(&act, "key_source: %s -> %s", old->key_source_where ? old->key_source_where : "none",
				  nt->key_source_where ? nt->key_source_where : "none");
			changes_add(ch, nm, nt->sql_name, sb_str(&act), -1);
		}
	}
	if (!rc) {
		/* how the rows are made (declare changes it too) */
		char *how[3];
		size_t nh = table_how_changes(old, nt, how);
		for (size_t i = 0; i < nh; i++) {
			changes_add(ch, nm, nt->sql_name, how[i], -1);
			free(how[i]);
		}
	}
	sb_free(&act);
	free(from);
	if (rc) { free(v); return rc; }
	*ops = v;
	*nops = n;
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
	sb_t q = SB_INIT;
	sb_add(&q, "UPDATE ");
	db_qtable(c->db, &q, META_TABLE);
	sb_add(&q, " SET ");
	db_qi(c->db, &q, "definition");
	sb_add(&q, " = ? WHERE ");
	db_qi(c->db, &q, "name");
	sb_add(&q, " = ?");
	val_t p[2] = {val_text(text), val_text(name)};
	int rc = db_exec(c->db, sb_str(&q), p, 2, NULL);
	val_free(&p[0]);
	val_free(&p[1]);
	if (rc) {
		sb_free(&q);
		return conn_dbfail(c, rc, name);
	}
	val_t *u = xcalloc(2, sizeof(val_t));
	u[0] = val_text(was);
	u[1] = val_text(name);
	stx_undo(x, sb_steal(&q), u, 2);
	return DJC_OK;
}

static int alter_once(djc_conn *c, const char *text, const char *file, int dry_run, djc_changes *ch)
{
	schema_tx x;
	int rc = stx_begin(c, &x);
	if (rc) return rc;
	pipeline *np = NULL;
	char *msg = NULL;
	sb_t done = SB_INIT;
	if ((rc = pipe_load(c))) goto fail;
	if ((rc = pipeline_parse(&np, text, file, c->pipe, &msg))) {
		rc = conn_fail(c, rc, "%s", msg);
		free(msg);
		goto fail;
	}
	/* the job metadata columns of a stored table stay (alter neither adds
	 * nor drops them; its stored text keeps its job_metadata line) */
	for (size_t i = 0; i < np->n && !rc; i++) {
		table *nt = np->tables[i], *old = pipeline_find(c->pipe, nt->name);
		if (old && old->job_meta) table_enable_job_meta(nt);
		else if (old && nt->job_meta)
			rc = conn_fail(c, DJC_EINVAL,
				       "%s:%d: table %s: alter does not add job metadata columns (job_metadata = true); 'djc "
				       "drop %s' and declare it again to add them",
				       file, nt->line, nt->name, nt->name);
	}
	if (rc) goto fail;
	alt_op **ops = xcalloc(np->n + 1, sizeof(alt_op *));
	size_t *nops = xcalloc(np->n + 1, sizeof(size_t));
	/* plan every table before changing any */
	for (size_t i = 0; i < np->n && !rc; i++) {
		table *nt = np->tables[i], *old = pipeline_find(c->pipe, nt->name);
		if (!old) {
			changes_add(ch, nt->name, nt->sql_name, "not declared (djc declare creates it)", -1);
			continue;
		}
		size_t before = ch->n;
		rc = alter_plan(c, old, nt, file, &ops[i], &nops[i], ch);
		if (!rc && ch->n == before && !same_text(old->text, nt->text))
			changes_add(ch, nt->name, nt->sql_name, "definition text", -1);
	}
	for (size_t i = 0; i < np->n && !rc && !dry_run; i++) {
		table *nt = np->tables[i], *old = pipeline_find(c->pipe, nt->name);
		if (!old || same_text(old->text, nt->text)) continue;
		/* the stored text first (put back if the ALTER fails where DDL is
		 * not transactional), then the table's ALTER statement(s) */
		if ((rc = pipe_set_text(c, &x, nt->name, nt->text, old->text))) break;
		char **st = NULL;
		sb_t qt = SB_INIT;
		db_qtable(c->db, &qt, nt->sql_name);
		rc = nops[i] ? ddl_alter(&st, x.d, c->db->drv, sb_str(&qt), ops[i], nops[i], &msg) : DJC_OK;
		sb_free(&qt);
		if (rc) {
			rc = conn_fail(c, rc, "%s:%d: table %s: %s", file, nt->line, nt->name, msg);
			free(msg);
			break;
		}
		for (size_t k = 0; st && st[k] && !rc; k++)
			if ((rc = db_exec(c->db, st[k], NULL, 0, NULL))) rc = conn_dbfail(c, rc, nt->name);
		for (size_t k = 0; st && st[k]; k++) free(st[k]);
		free(st);
		if (rc) break;
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
	int rc = pipe_load(c);
	if (rc) return rc;
	/* bad input before any lock */
	pipeline *np = NULL;
	char *msg = NULL;
	if ((rc = pipeline_parse(&np, text, file, c->pipe, &msg))) {
		rc = conn_fail(c, rc, "%s", msg);
		free(msg);
		return rc;
	}
	size_t n = np->n;
	pipeline_free(np);
	if (!n) return conn_fail(c, DJC_EINVAL, "%s: no tables (a table starts with 'Name (tier)')", file);
	djc_changes *ch = xcalloc(1, sizeof *ch);
	rc = alter_once(c, text, file, o.dry_run, ch);
	if (out) *out = ch;
	else djc_changes_free(ch);
	return rc;
}
