/* ddl.h - the DDL of the tables a pipeline declares, written for the
 * connection's dialect (whose facts its driver holds: db.h, ddl_dialect):
 * a declared table's CREATE TABLE, a column's definition (also for the
 * jobs and worker tables' statements), a default as a literal, and the
 * ALTER TABLE statements of a change. Rendering only: the table layer runs
 * what is rendered here. With query.c and the named statements' expander,
 * the only place outside src/db that writes SQL (docs/architecture.md).
 *
 * Layer: sql (below table, above schema and db). */
#ifndef DJC_SQL_DDL_H
#define DJC_SQL_DDL_H
#include "schema/schema.h"

/* A column's definition: its quoted name, its SQL type (an adopted
 * column's own storage and collation: docs/types.md) and NOT NULL when
 * not_null. */
void ddl_column(db_conn *db, sb_t *b, const attr *a, int not_null);

/* "CREATE TABLE t (columns, PRIMARY KEY, FOREIGN KEYs, UNIQUE ...)" of a
 * declared table t, with its hidden job metadata columns: never IF NOT
 * EXISTS (a table of that name that djc did not create is an error, not
 * something to adopt). Its secondary indexes are db_create_index's. */
void ddl_create_table(db_conn *db, sb_t *q, const table *t);
/* "a", "b", "c": names quoted, comma-separated. */
void ddl_names(db_conn *db, sb_t *b, char *const *names, size_t n);

/* The default of attribute a as an SQL literal of dialect d (for ADD
 * COLUMN: rows that exist get it, and so do inserts by processes that still
 * know the old definition). DJC_EINVAL with *msg (caller frees) when it
 * cannot be written as one. */
int ddl_default_literal(sb_t *b, const ddl_dialect *d, const attr *a, char **msg);

typedef enum alt_kind { ALT_DROP, ALT_RENAME, ALT_RETYPE, ALT_ADD } alt_kind;
typedef struct alt_op {
	alt_kind kind;
	const char *col;   /* the column as it is now (drop, rename) */
	const attr *a;     /* the attribute as it will be (rename, retype, add) */
	const attr *old;   /* the attribute as it is now (retype) */
} alt_op;

/* The statements that apply ops to the table qtable (its name already
 * quoted, and schema-qualified where the driver wants it: db_qtable): one
 * per change, or one for all with alter_combined (db_ddl(db)); *out is NULL-terminated, the caller frees
 * each string and the array. DJC_EINVAL with *msg (caller frees) when a
 * change cannot be written in this dialect; *out is NULL then. */
int ddl_alter(char ***out, db_conn *db, const char *qtable, const alt_op *ops, size_t n, char **msg);

#endif
