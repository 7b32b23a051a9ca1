/* expand.h - statements of fixed shape: djc's SQL on its own tables (jobs
 * and history tables, the worker table, the stored pipeline), each written
 * once, whole, named and commented where it is defined (jobs/statements.c,
 * table/statements.c), and expanded here for one connection's dialect.
 *
 * A template is SQL with `?` for the caller's arguments (taken in order),
 * '...' literals (copied as they are) and {fragments}. The expander knows
 * the fragments every domain shares:
 *   {now} {now+?}    the database's clock, and that plus ? seconds (the
 *                    ? takes the next argument)
 *   {insert_ignore} {insert_ignore_tail}   the dialect's INSERT-or-skip
 *   {table_suffix}   what the connection puts after CREATE TABLE (...)
 * and hands any other fragment to the domain's handler (sql_exp.frag): the
 * jobs layer's {J} {key} {where} ... (jobs/sql.h), a table's {P} ... .
 * Values never enter the text: every value is a bound parameter.
 *
 * Layer: below table, above schema and db (it needs only a connection),
 * so the table, jobs and populate layers all expand through it. */
#ifndef DJC_SQL_EXPAND_H
#define DJC_SQL_EXPAND_H
#include "db/db.h"

/* A named statement: the name is for messages and docs/architecture.md. */
typedef struct sql_stmt {
	const char *name;   /* e.g. "claim.due" */
	const char *sql;    /* the template */
} sql_stmt;

/* One {fragment}: its text between the braces, and the parts before and
 * after its first ':' ("keys:A": name "keys", arg "A"). */
typedef struct sql_frag {
	const char *text;
	size_t n;
	size_t head;        /* length of the name: n when there is no ':' */
	const char *arg;    /* after the ':', or NULL */
	size_t an;
} sql_frag;

/* The fragment's name is lit (a string literal). */
#define SQL_FRAG_IS(f, lit) ((f)->head == sizeof lit - 1 && !strncmp((f)->text, lit, (f)->head))

/* What a domain's handler answers for a fragment it does not know. */
#define SQL_FRAG_UNKNOWN 1

typedef struct sql_exp sql_exp;

/* The expansion of one statement. The caller fills the first fields;
 * the expander keeps the rest. */
struct sql_exp {
	db_conn *db;
	const sql_stmt *s;
	const char *kind;            /* what messages call s: "jobs statement" */
	const val_t *args;           /* the template's own ? arguments */
	size_t nargs;
	sb_t *q;                     /* the SQL is appended here */
	void (*push)(void *params, val_t v);   /* takes v: appends a bound parameter */
	void *params;
	/* The domain's fragments: writes f to e->q (parameters through
	 * sql_push) and answers DJC_OK, SQL_FRAG_UNKNOWN, DJC_ERROR after
	 * sql_bad, or another error code with its message where the domain
	 * keeps messages. NULL: none. */
	int (*frag)(sql_exp *e, const sql_frag *f);
	void *ctx;                   /* the domain's, for frag */
	/* kept by the expander */
	size_t ai;                   /* arguments taken */
	char err[512];               /* the message of a template mistake (DJC_ERROR), or "" */
};

/* Expand e->s into e->q. DJC_ERROR for a template mistake (unknown or
 * malformed fragment, argument count) with the message in e->err naming
 * the statement; a handler's own error code as it returned it. */
int sql_expand(sql_exp *e);
/* Append a bound parameter (taken). */
static inline void sql_push(sql_exp *e, val_t v) { e->push(e->params, v); }
/* Take the template's next argument as a bound parameter; DJC_ERROR (the
 * message in e->err, naming f) when none is left. */
int sql_take_arg(sql_exp *e, const sql_frag *f);
/* Record a template mistake about f ("unknown fragment", "malformed"):
 * returns DJC_ERROR. */
int sql_bad(sql_exp *e, const char *what, const sql_frag *f);
#endif
