/* ddl.c - the SQL of schema changes that differs between dialects: how a
 * schema change is serialised and whether it rolls back, how a table's
 * columns are listed, how an ALTER TABLE and a default literal are
 * written, and which auxiliary tables belong to a table. Rendering only:
 * the table layer runs what is rendered here. */
#include "schema.h"
#include "djc.h"
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One row per dialect, named by its driver (db_driver.name).
 *
 * Serialising schema changes: SQLite has one writer, so its IMMEDIATE write
 * transaction already excludes every other schema change. PostgreSQL takes
 * a transaction-scoped advisory lock keyed by the schema (released by
 * COMMIT or ROLLBACK, so a transaction pooler in front of the server is no
 * problem), with a bounded wait. MariaDB/MySQL commit DDL implicitly, so no
 * transaction can hold anything across a CREATE TABLE: a named session lock
 * (GET_LOCK, freed when the connection ends) serialises instead, and the
 * caller undoes its own steps on failure. */
static const ddl_dialect dialects[] = {
	{
		.driver = "sqlite",
		.transactional = 1,
		.columns = "SELECT name FROM pragma_table_info(?) ORDER BY cid",
		.drop_many = 0,
		.alter_combined = 0,
		.backslash_escapes = 0,
		.max_name = 64,   /* none of its own: DataJoint's (MariaDB's), so a pipeline moves */
	},
	{
		.driver = "postgresql",
		.transactional = 1,
		/* -- name: SchemaLock: the wait is bounded; a lock not had in
		 * time is 55P03 (DJC_EBUSY), and so is a DROP TABLE that waits
		 * too long for a running transaction on the table */
		.lock_setup = "SET LOCAL lock_timeout = '120s'",
		.lock = "SELECT pg_advisory_xact_lock(6580835, hashtext(?))",
		.columns = "SELECT column_name FROM information_schema.columns WHERE table_schema = ? "
			   "AND table_name = ? ORDER BY ordinal_position",
		.by_schema = 1,
		.drop_many = 0,
		.alter_combined = 0,
		.retype_head = "ALTER COLUMN ",
		.retype_mid = " TYPE ",
		.backslash_escapes = 0,
		.max_name = 63,   /* NAMEDATALEN - 1: a longer name is cut, silently */
	},
	{
		.driver = "mysql",
		.transactional = 0,
		/* -- name: SchemaLock: 1 when taken, 0 after 120 s, NULL on error;
		 * the name is per database (at most 64 characters) */
		.lock = "SELECT GET_LOCK(CONCAT('djc_ddl_', MD5(DATABASE())), 120)",
		.lock_returns_1 = 1,
		.unlock = "SELECT RELEASE_LOCK(CONCAT('djc_ddl_', MD5(DATABASE())))",
		.columns = "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() "
			   "AND table_name = ? ORDER BY ordinal_position",
		.drop_many = 1,
		.alter_combined = 1,
		.backslash_escapes = 1,   /* the session's sql_mode has no NO_BACKSLASH_ESCAPES */
		.max_name = 64,
	},
};

const ddl_dialect *ddl_dialect_for(const char *driver)
{
	for (size_t i = 0; i < sizeof dialects / sizeof *dialects; i++)
		if (!strcmp(dialects[i].driver, driver)) return &dialects[i];
	return NULL;
}

size_t table_aux_tables(const table *t, const char **names, size_t max)
{
	size_t n = 0;
	/* the jobs table of a computed or imported table, and the attempt
	 * history of its jobs beside it */
	if (t->jobs_name && n < max) names[n++] = t->jobs_name;
	if (t->hist_name && n < max) names[n++] = t->hist_name;
	return n;
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

static void column_def(sb_t *b, const db_driver *drv, const attr *a)
{
	drv->quote_ident(b, a->name);
	sb_addc(b, ' ');
	drv->column_type(b, &a->type);
	sb_add(b, a->nullable ? " NULL" : " NOT NULL");
}

static int same_type_sql(const db_driver *drv, const coldef *x, const coldef *y)
{
	sb_t a = SB_INIT, b = SB_INIT;
	drv->column_type(&a, x);
	drv->column_type(&b, y);
	int same = !strcmp(sb_str(&a), sb_str(&b));
	sb_free(&a);
	sb_free(&b);
	return same;
}

int ddl_alter(char ***out, const ddl_dialect *d, const db_driver *drv, const char *qtable, const alt_op *ops, size_t n,
	      char **msg)
{
	*out = NULL;
	*msg = NULL;
	char **v = xcalloc(4 * n + 2, sizeof(char *));
	size_t nv = 0;
	sb_t head = SB_INIT, one = SB_INIT;
	sb_add(&head, "ALTER TABLE ");
	sb_add(&head, qtable);
	sb_addc(&head, ' ');
	/* in the order drops, renames, type changes, adds: a name given up by a
	 * drop or a rename is free for what follows */
	static const alt_kind order[] = {ALT_DROP, ALT_RENAME, ALT_RETYPE, ALT_ADD};
	int rc = DJC_OK;
	for (size_t o = 0; o < 4 && !rc; o++)
		for (size_t i = 0; i < n && !rc; i++) {
			const alt_op *op = &ops[i];
			if (op->kind != order[o]) continue;
			sb_t s = SB_INIT;
			switch (op->kind) {
			case ALT_DROP:
				sb_add(&s, "DROP COLUMN ");
				drv->quote_ident(&s, op->col);
				break;
			case ALT_RENAME:
				if (d->alter_combined) {
					/* CHANGE renames and (re)states the type at once, on
					 * every MariaDB/MySQL version */
					sb_add(&s, "CHANGE COLUMN ");
					drv->quote_ident(&s, op->col);
					sb_addc(&s, ' ');
					column_def(&s, drv, op->a);
				} else {
					sb_add(&s, "RENAME COLUMN ");
					drv->quote_ident(&s, op->col);
					sb_add(&s, " TO ");
					drv->quote_ident(&s, op->a->name);
				}
				break;
			case ALT_RETYPE:
				if (op->old && same_type_sql(drv, &op->old->type, &op->a->type)) break;   /* the same SQL type */
				if (d->alter_combined) {
					/* a renamed column got its type in CHANGE */
					int renamed = 0;
					for (size_t k = 0; k < n; k++)
						if (ops[k].kind == ALT_RENAME && ops[k].a == op->a) renamed = 1;
					if (renamed) break;
					sb_add(&s, "MODIFY COLUMN ");
					column_def(&s, drv, op->a);
				} else if (d->retype_head) {
					sb_add(&s, d->retype_head);
					drv->quote_ident(&s, op->a->name);
					sb_add(&s, d->retype_mid);
					drv->column_type(&s, &op->a->type);
				} else {
					*msg = xasprintf("the SQL type of attribute '%s' cannot be changed on %s", op->a->name, d->driver);
					rc = DJC_EINVAL;
				}
				break;
			case ALT_ADD: {
				sb_add(&s, "ADD COLUMN ");
				drv->quote_ident(&s, op->a->name);
				sb_addc(&s, ' ');
				drv->column_type(&s, &op->a->type);
				if (!op->a->nullable) sb_add(&s, " NOT NULL");
				sb_add(&s, " DEFAULT ");
				rc = ddl_default_literal(&s, d, op->a, msg);
				break;
			}
			}
			if (!rc && s.len) {
				if (d->alter_combined) {
					if (one.len) sb_add(&one, ", ");
					sb_add(&one, sb_str(&s));
				} else
					v[nv++] = xasprintf("%s%s", sb_str(&head), sb_str(&s));
			}
			sb_free(&s);
		}
	if (!rc && one.len) v[nv++] = xasprintf("%s%s", sb_str(&head), sb_str(&one));
	sb_free(&head);
	sb_free(&one);
	if (rc) {
		for (size_t i = 0; i < nv; i++) free(v[i]);
		free(v);
		return rc;
	}
	*out = v;
	return DJC_OK;
}
