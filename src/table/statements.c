/* statements.c - every statement the table layer runs on djc's own stored
 * pipeline table ({P}: one row per declared table, its definition as
 * written, in declaration order), and the DROP and COUNT of a table by
 * name, written once, whole and named; expanded per connection by
 * tsql_expand() (statements.h lists the fragments). Every one runs under
 * the schema-change lock (lifecycle.c, schema_tx) but pipe.load and
 * pipe.has. */
#include "statements.h"
#include <stdlib.h>
#include <string.h>

/* pipe.create - the stored pipeline, made by the first declare (under the
 * lock, so concurrent first declares do not race on it). */
const sql_stmt TS_PIPE_CREATE = {"pipe.create",
	"CREATE TABLE IF NOT EXISTS {P} ({name} {varchar:255} NOT NULL, {position} {int32} NOT NULL, "
	"{tier} {varchar:16} NOT NULL, {definition} {text} NOT NULL, PRIMARY KEY ({name})){table_suffix}"};

/* pipe.load - every stored definition, in declaration order: each
 * table's parents come before it. No lock: a declare stores a table's
 * row in the transaction that makes it (or, where DDL is not
 * transactional, before it makes it and takes it back on failure). */
const sql_stmt TS_PIPE_LOAD = {"pipe.load", "SELECT {definition} FROM {P} ORDER BY {position}"};

/* pipe.next - the highest position taken (NULL: none): the tables of a
 * declare go after it, in the order of their text. */
const sql_stmt TS_PIPE_NEXT = {"pipe.next", "SELECT MAX({position}) FROM {P}"};

/* pipe.insert - store a table's definition. Arguments: name, position,
 * tier, definition. The primary key (name) refuses a second row of one
 * table should two declares ever get past the lock. */
const sql_stmt TS_PIPE_INSERT = {"pipe.insert",
	"INSERT INTO {P} ({name}, {position}, {tier}, {definition}) VALUES (?, ?, ?, ?)"};

/* pipe.forget - the undo of pipe.insert. Argument: name. */
const sql_stmt TS_PIPE_FORGET = {"pipe.forget", "DELETE FROM {P} WHERE {name} = ?"};

/* pipe.has - whether a table's definition is stored (a running worker
 * asks it when a statement on one of its tables fails: an unadopt or a
 * drop forgot it meanwhile). No lock. Argument: name. */
const sql_stmt TS_PIPE_HAS = {"pipe.has", "SELECT COUNT(*) FROM {P} WHERE {name} = ?"};

/* pipe.rows - the stored rows of the tables {names}, kept by a drop to
 * put back (pipe.insert) should it fail where DDL is not transactional. */
const sql_stmt TS_PIPE_ROWS = {"pipe.rows",
	"SELECT {name}, {position}, {tier}, {definition} FROM {P} WHERE {name} IN ({names})"};

/* pipe.forget.many - a drop takes the stored definitions of its tables
 * first, so that no other process finds a table that is about to go. */
const sql_stmt TS_PIPE_FORGET_MANY = {"pipe.forget.many", "DELETE FROM {P} WHERE {name} IN ({names})"};

/* pipe.set_text - alter stores a table's new text (its own undo with the
 * old text). Arguments: definition, name. */
const sql_stmt TS_PIPE_SET_TEXT = {"pipe.set_text", "UPDATE {P} SET {definition} = ? WHERE {name} = ?"};

/* table.drop - a table by name, harmless when it is gone already (the
 * undo of a CREATE TABLE; drop, one table at a time). */
const sql_stmt TS_DROP = {"table.drop", "DROP TABLE IF EXISTS {X}"};

/* table.drop.many - the tables {Xs} in one statement: a dialect that
 * commits each DROP by itself (ddl_dialect.drop_many) loses none of them
 * half way. */
const sql_stmt TS_DROP_MANY = {"table.drop.many", "DROP TABLE IF EXISTS {Xs}"};

/* table.rename - {X} renamed to names[0] ({Xs}, n 1), qualified as {X}
 * (MariaDB/MySQL: djc adopt --accept-changes moves a jobs table it makes
 * anew out of the way, to be dropped when everything else is done; the
 * undo renames it back). */
const sql_stmt TS_RENAME = {"table.rename", "ALTER TABLE {X} RENAME TO {Xs}"};

/* table.count - how many rows a table has (what drop reports). */
const sql_stmt TS_COUNT = {"table.count", "SELECT COUNT(*) FROM {X}"};

const sql_stmt *const TS_ALL[] = {&TS_PIPE_CREATE, &TS_PIPE_LOAD, &TS_PIPE_NEXT, &TS_PIPE_INSERT, &TS_PIPE_FORGET,
				  &TS_PIPE_HAS, &TS_PIPE_ROWS, &TS_PIPE_FORGET_MANY, &TS_PIPE_SET_TEXT, &TS_DROP, &TS_DROP_MANY, &TS_RENAME,
				  &TS_COUNT, NULL};

/* ------------------------------------------------------------ expanding */

/* {varchar:N} {int32} {text}: a column type in the dialect;
 * SQL_FRAG_UNKNOWN for another fragment. */
static int type_frag(sql_exp *e, const sql_frag *f)
{
	coldef t = {0};
	if (SQL_FRAG_IS(f, "varchar") && f->arg) t = (coldef){T_VARCHAR, atoi(f->arg), 0, NULL, 0};
	else if (SQL_FRAG_IS(f, "int32") && !f->arg) t.t = T_INT32;
	else if (SQL_FRAG_IS(f, "text") && !f->arg) t.t = T_TEXT;
	else return SQL_FRAG_UNKNOWN;
	db_column_type(e->db, e->q, &t);
	return DJC_OK;
}

/* The table layer's fragments (statements.h), for sql_expand. */
static int table_frag(sql_exp *e, const sql_frag *f)
{
	static const char *const pcols[] = {"name", "position", "tier", "definition"};
	const tctx *x = e->ctx;
	if (SQL_FRAG_IS(f, "P") && !f->arg) db_qtable(e->db, e->q, META_TABLE);
	else if (SQL_FRAG_IS(f, "X") && !f->arg && x->table) db_qtable(e->db, e->q, x->table);
	else if (SQL_FRAG_IS(f, "Xs") && !f->arg) {
		for (size_t i = 0; i < x->n; i++) {
			if (i) sb_add(e->q, ", ");
			db_qtable(e->db, e->q, x->names[i]);
		}
	} else if (SQL_FRAG_IS(f, "names") && !f->arg) {
		for (size_t i = 0; i < x->n; i++) {
			sb_add(e->q, i ? ", ?" : "?");
			sql_push(e, val_text(x->names[i]));
		}
	} else {
		for (size_t i = 0; i < sizeof pcols / sizeof *pcols; i++)
			if (!f->arg && f->n == strlen(pcols[i]) && !strncmp(f->text, pcols[i], f->n)) {
				db_qi(e->db, e->q, pcols[i]);
				return DJC_OK;
			}
		return type_frag(e, f);
	}
	return DJC_OK;
}

static void push_param(void *params, val_t v)
{
	pvec_push(params, v);
}

int tsql_expand(djc_conn *c, const sql_stmt *s, const tctx *x, const val_t *args, size_t nargs, sb_t *q, pvec *p)
{
	static const tctx none = {0};
	sql_exp e = {.db = c->db, .s = s, .kind = "table statement", .args = args, .nargs = nargs, .q = q,
		     .push = push_param, .params = p, .frag = table_frag, .ctx = (void *)(x ? x : &none)};
	int rc = sql_expand(&e);
	if (rc == DJC_ERROR && e.err[0]) return conn_fail(c, DJC_ERROR, "%s", e.err);
	return rc;
}

int tsql_run(djc_conn *c, const sql_stmt *s, const tctx *x, const val_t *args, size_t nargs, db_res **out)
{
	if (out) *out = NULL;
	sb_t q = SB_INIT;
	pvec p = {0};
	int rc = tsql_expand(c, s, x, args, nargs, &q, &p);
	if (!rc) rc = db_exec(c->db, sb_str(&q), p.v, p.n, out);
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

void tsql_undo(djc_conn *c, schema_tx *x, const sql_stmt *s, const tctx *t, const val_t *args, size_t nargs)
{
	sb_t q = SB_INIT;
	pvec p = {0};
	if (tsql_expand(c, s, t, args, nargs, &q, &p)) abort();   /* a mistake in the templates above */
	stx_undo(x, sb_steal(&q), p.v, p.n);
}
