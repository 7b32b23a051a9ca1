/* statements.h - the table layer's statements of fixed shape: the SQL on
 * djc's own stored pipeline table (META_TABLE) and the DROP and COUNT of a
 * table by name, each written once, whole and named in statements.c, and
 * expanded by the one expander (sql/expand.h) with these fragments:
 *   {P}              the stored pipeline table (quoted)
 *   {name} {position} {tier} {definition}   its columns (quoted)
 *   {varchar:N} {int32} {text}   a column type in the dialect
 *   {X}              the table tctx.table (quoted, schema-qualified)
 *   {Xs}             the tables tctx.names, quoted, comma-separated
 *   {names}          "?, ?, ..." with tctx.names as bound text values
 * plus the expander's own ({table_suffix}, ...). */
#ifndef DJC_TABLE_STATEMENTS_H
#define DJC_TABLE_STATEMENTS_H
#include "table.h"
#include "sql/expand.h"

/* What a template's fragments refer to. */
typedef struct tctx {
	const char *table;               /* {X} */
	const char *const *names;        /* {Xs} {names} */
	size_t n;
} tctx;

/* Expand s for c and x into *q, its parameters (args[0..nargs) for the
 * template's own ?) pushed in order into *p. DJC_ERROR with a message on c
 * for a template mistake. */
int tsql_expand(djc_conn *c, const sql_stmt *s, const tctx *x, const val_t *args, size_t nargs, sb_t *q, pvec *p);
/* Expand and run; *out (may be NULL) as db_exec, whose code it returns
 * (the caller words the failure: conn_dbfail). */
int tsql_run(djc_conn *c, const sql_stmt *s, const tctx *x, const val_t *args, size_t nargs, db_res **out);
/* Expand s as an undo step of x (schema_tx: run if the change is undone). */
void tsql_undo(djc_conn *c, schema_tx *x, const sql_stmt *s, const tctx *t, const val_t *args, size_t nargs);

/* The statements (statements.c). */
extern const sql_stmt TS_PIPE_CREATE, TS_PIPE_LOAD, TS_PIPE_NEXT, TS_PIPE_INSERT, TS_PIPE_FORGET, TS_PIPE_HAS,
	TS_PIPE_ROWS, TS_PIPE_FORGET_MANY, TS_PIPE_SET_TEXT;
extern const sql_stmt TS_DROP, TS_DROP_MANY, TS_RENAME, TS_COUNT;
/* Every statement above, NULL-terminated (tests expand and prepare each). */
extern const sql_stmt *const TS_ALL[];
#endif
