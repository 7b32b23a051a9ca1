/* catalog.h - what a server's catalog says about the tables of one schema
 * (issue 38, /work/notes/w3-adopt.md "The catalog"): columns with their
 * server-side type text, comments, nullability, defaults and collations,
 * primary keys and foreign keys (with the referenced schema). Read by
 * `djc adopt` to turn a DataJoint schema into djc definitions. Each driver
 * gives its catalog queries (db_catalog_sql); SQLite has none. */
#ifndef DJC_CATALOG_H
#define DJC_CATALOG_H
#include <stddef.h>

typedef struct db_conn db_conn;

typedef struct db_ccol {
	char *name;
	char *sql_type;   /* as the server shows it: "tinyint(3) unsigned", "enum('a','b')";
			   * PostgreSQL: format_type, an enum as "schema"."type" */
	char *comment;    /* "" when none */
	int nullable;
	char *def;        /* the server's default expression, NULL: none */
	char *collation;  /* NULL: none or the type's default */
	char **labels;    /* PostgreSQL enum labels, in order */
	size_t nlabels;
	int json_check;   /* MariaDB: CHECK (json_valid(col)) */
} db_ccol;

typedef struct db_cfk {
	char *ref_schema, *ref_table;
	char **cols, **ref_cols;   /* child and parent columns, parallel */
	size_t n;
} db_cfk;

typedef struct db_ctable {
	char *name;
	char *comment;   /* "" when none */
	db_ccol *cols;
	size_t ncols;
	char **pk;
	size_t npk;
	db_cfk *fks;     /* in declaration order */
	size_t nfks;
} db_ctable;

typedef struct db_catalog {
	char *schema;
	db_ctable *tables;   /* sorted by name */
	size_t n;
} db_catalog;

/* A driver's catalog queries, each with the schema as its one ? parameter:
 * tables: name, comment; columns: table, column, type, comment, nullable
 * (0/1), default, collation, enum labels joined by \x1f, json_check (0/1),
 * by table and position; pk: table, column, by table and position;
 * fks: table, constraint, column, ref schema, ref table, ref column, by
 * table, constraint in declaration order, position; exists: a row when
 * the schema exists. */
typedef struct db_catalog_sql {
	const char *exists, *tables, *columns, *pk, *fks;
} db_catalog_sql;

/* Read schema's catalog into *out (caller frees with db_catalog_free).
 * DJC_ENOTFOUND: no such schema; DJC_EINVAL: the backend has no catalog
 * djc reads (SQLite); *msg (caller frees) says which. Values are bound. */
int db_catalog_read(db_catalog **out, db_conn *c, const char *schema, char **msg);
void db_catalog_free(db_catalog *cat);
/* The table of that name, or NULL. */
const db_ctable *db_catalog_table(const db_catalog *cat, const char *name);
/* The column of that name, or NULL. */
const db_ccol *db_ctable_col(const db_ctable *t, const char *name);

#endif
