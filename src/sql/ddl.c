/* ddl.c - the DDL of declared tables, for the connection's dialect
 * (ddl.h). */
#include "ddl.h"
#include "djc.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ddl_column(db_conn *db, sb_t *b, const attr *a, int not_null)
{
	db_qi(db, b, a->name);
	sb_addc(b, ' ');
	/* an adopted column's own storage (docs/types.md): a jobs table's key
	 * column compares with it as the server compares the target's */
	if (a->store_type) sb_add(b, a->store_type);
	else db_column_type(db, b, &a->type);
	if (a->collate) {
		sb_add(b, " COLLATE ");
		db_qi(db, b, a->collate);
	}
	if (not_null) sb_add(b, " NOT NULL");
}

void ddl_names(db_conn *db, sb_t *b, char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i) sb_add(b, ", ");
		db_qi(db, b, names[i]);
	}
}

void ddl_create_table(db_conn *db, sb_t *q, const table *t)
{
	sb_add(q, "CREATE TABLE ");
	table_qname(db, q, t);
	sb_add(q, " (");
	for (size_t i = 0; i < t->nattrs + t->nhidden; i++) {   /* the job metadata columns too */
		if (i) sb_add(q, ", ");
		ddl_column(db, q, &t->attrs[i], !t->attrs[i].nullable);
	}
	sb_add(q, ", PRIMARY KEY (");
	for (size_t i = 0; i < t->nkey; i++) {
		if (i) sb_add(q, ", ");
		db_qi(db, q, t->attrs[i].name);
	}
	sb_addc(q, ')');
	for (size_t i = 0; i < t->nfks; i++) {
		const fkey *f = &t->fks[i];
		/* MariaDB names a foreign key <table>_ibfk_<n>, which must fit
		 * 64 characters: a long table's is named here, shortened */
		sb_t fk = SB_INIT;
		if (table_fk_name(&fk, t, i)) {
			sb_add(q, ", CONSTRAINT ");
			db_qi(db, q, sb_str(&fk));
			sb_add(q, " FOREIGN KEY (");
		} else
			sb_add(q, ", FOREIGN KEY (");
		sb_free(&fk);
		ddl_names(db, q, f->cattrs, f->nattrs);   /* the child's names (-> P.proj(child='parent')) */
		sb_add(q, ") REFERENCES ");
		table_qname(db, q, f->ptable);
		sb_add(q, " (");
		ddl_names(db, q, f->attrs, f->nattrs);
		sb_add(q, ") ON UPDATE CASCADE ON DELETE RESTRICT");
	}
	for (size_t i = 0; i < t->nidx; i++)
		if (t->idx[i].unique) {
			sb_add(q, ", UNIQUE (");
			ddl_names(db, q, t->idx[i].attrs, t->idx[i].nattrs);
			sb_addc(q, ')');
		}
	sb_addc(q, ')');
	sb_add(q, db->table_suffix);
}

static void str_literal(sb_t *b, const ddl_dialect *d, const char *s, size_t n)
{
	sb_addc(b, '\'');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\'') sb_addc(b, '\'');
		else if (s[i] == '\\' && d->backslash_escapes) sb_addc(b, '\\');
		sb_addc(b, s[i]);
	}
	sb_addc(b, '\'');
}

int ddl_default_literal(sb_t *b, const ddl_dialect *d, const attr *a, char **msg)
{
	*msg = NULL;
	if (!a->has_def) {
		sb_add(b, "NULL");
		return DJC_OK;
	}
	if (!strcasecmp(a->def, "CURRENT_TIMESTAMP")) {
		*msg = xasprintf("attribute '%s' cannot be added with the default CURRENT_TIMESTAMP (make it nullable: = null)", a->name);
		return DJC_EINVAL;
	}
	/* the value exactly as an insert would store it (rows.c, row_prepare) */
	val_t v = {0};
	json_t *j = a->type.t <= T_BOOL ? json_loads(a->def, JSON_DECODE_ANY, NULL) : NULL;
	int rc;
	if (j) {
		rc = value_from_json(a, j, &v, msg);
		json_decref(j);
	} else {
		val_t in = val_text(a->def);
		rc = value_in(a, &in, &v, msg);
		val_free(&in);
	}
	if (rc) return rc;
	switch (v.t) {
	case DJC_INT: sb_printf(b, "%" PRId64, v.i); break;
	case DJC_UINT: sb_printf(b, "%" PRIu64, v.u); break;
	case DJC_BOOL: sb_add(b, v.i ? "TRUE" : "FALSE"); break;
	case DJC_FLOAT:
		if (!isfinite(v.f)) rc = DJC_EINVAL;
		else sb_printf(b, "%.17g", v.f);
		break;
	case DJC_TEXT: str_literal(b, d, v.s, v.n); break;
	default: rc = DJC_EINVAL; break;
	}
	val_free(&v);
	if (rc) *msg = xasprintf("attribute '%s' of type %s cannot be added with a default (make it nullable: = null)", a->name,
				 a->type_text);
	return rc;
}

static void column_def(sb_t *b, db_conn *db, const attr *a)
{
	db_qi(db, b, a->name);
	sb_addc(b, ' ');
	db_column_type(db, b, &a->type);
	sb_add(b, a->nullable ? " NULL" : " NOT NULL");
}

static int same_type_sql(db_conn *db, const coldef *x, const coldef *y)
{
	sb_t a = SB_INIT, b = SB_INIT;
	db_column_type(db, &a, x);
	db_column_type(db, &b, y);
	int same = !strcmp(sb_str(&a), sb_str(&b));
	sb_free(&a);
	sb_free(&b);
	return same;
}

/* The clause renaming op's column: CHANGE COLUMN where the dialect says
 * all in one statement (it renames and (re)states the type at once, on
 * every MariaDB/MySQL version), else RENAME COLUMN. */
static void rename_clause(sb_t *s, db_conn *db, const alt_op *op)
{
	if (db_ddl(db)->alter_combined) {
		sb_add(s, "CHANGE COLUMN ");
		db_qi(db, s, op->col);
		sb_addc(s, ' ');
		column_def(s, db, op->a);
	} else {
		sb_add(s, "RENAME COLUMN ");
		db_qi(db, s, op->col);
		sb_add(s, " TO ");
		db_qi(db, s, op->a->name);
	}
}

/* The clause changing the SQL type of ops[i]'s column, or nothing when
 * the SQL type stays (or a CHANGE of ops[] restates it). DJC_EINVAL with
 * *msg where the dialect cannot change a type. */
static int retype_clause(sb_t *s, db_conn *db, const alt_op *ops, size_t n, size_t i, char **msg)
{
	const ddl_dialect *d = db_ddl(db);
	const alt_op *op = &ops[i];
	if (op->old && same_type_sql(db, &op->old->type, &op->a->type)) return DJC_OK;
	if (d->alter_combined) {
		/* a renamed column got its type in CHANGE */
		for (size_t k = 0; k < n; k++)
			if (ops[k].kind == ALT_RENAME && ops[k].a == op->a) return DJC_OK;
		sb_add(s, "MODIFY COLUMN ");
		column_def(s, db, op->a);
	} else if (d->retype_head) {
		sb_add(s, d->retype_head);
		db_qi(db, s, op->a->name);
		sb_add(s, d->retype_mid);
		db_column_type(db, s, &op->a->type);
	} else {
		*msg = xasprintf("the SQL type of attribute '%s' cannot be changed on %s", op->a->name, d->driver);
		return DJC_EINVAL;
	}
	return DJC_OK;
}

/* The clause of ops[i] after "ALTER TABLE t " into s (nothing when there
 * is nothing to change); DJC_EINVAL with *msg when it cannot be written. */
static int alter_clause(sb_t *s, db_conn *db, const alt_op *ops, size_t n, size_t i, char **msg)
{
	const alt_op *op = &ops[i];
	switch (op->kind) {
	case ALT_DROP:
		sb_add(s, "DROP COLUMN ");
		db_qi(db, s, op->col);
		return DJC_OK;
	case ALT_RENAME:
		rename_clause(s, db, op);
		return DJC_OK;
	case ALT_RETYPE:
		return retype_clause(s, db, ops, n, i, msg);
	case ALT_ADD:
		sb_add(s, "ADD COLUMN ");
		db_qi(db, s, op->a->name);
		sb_addc(s, ' ');
		db_column_type(db, s, &op->a->type);
		if (!op->a->nullable) sb_add(s, " NOT NULL");
		sb_add(s, " DEFAULT ");
		return ddl_default_literal(s, db_ddl(db), op->a, msg);
	}
	return DJC_OK;
}

int ddl_alter(char ***out, db_conn *db, const char *qtable, const alt_op *ops, size_t n, char **msg)
{
	const ddl_dialect *d = db_ddl(db);
	*out = NULL;
	*msg = NULL;
	char **v = xcalloc(4 * n + 2, sizeof(char *));
	size_t nv = 0;
	sb_t one = SB_INIT;   /* the clauses of one combined statement */
	/* in the order drops, renames, type changes, adds: a name given up by a
	 * drop or a rename is free for what follows */
	static const alt_kind order[] = {ALT_DROP, ALT_RENAME, ALT_RETYPE, ALT_ADD};
	int rc = DJC_OK;
	for (size_t o = 0; o < 4 && !rc; o++)
		for (size_t i = 0; i < n && !rc; i++) {
			if (ops[i].kind != order[o]) continue;
			sb_t s = SB_INIT;
			rc = alter_clause(&s, db, ops, n, i, msg);
			if (!rc && s.len) {
				if (d->alter_combined) {
					if (one.len) sb_add(&one, ", ");
					sb_add(&one, sb_str(&s));
				} else
					v[nv++] = xasprintf("ALTER TABLE %s %s", qtable, sb_str(&s));
			}
			sb_free(&s);
		}
	if (!rc && one.len) v[nv++] = xasprintf("ALTER TABLE %s %s", qtable, sb_str(&one));
	sb_free(&one);
	if (rc) {
		for (size_t i = 0; i < nv; i++) free(v[i]);
		free(v);
		return rc;
	}
	*out = v;
	return DJC_OK;
}
