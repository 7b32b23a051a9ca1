/* sql.h - the jobs layer's SQL: every statement on a jobs table is written
 * once, whole, with its name and the reason it is safe, in statements.c;
 * jsql_expand() turns it into the connection's dialect for one table
 * through the one expander (sql/expand.h), with the jobs fragments.
 *
 * A template is SQL with `?` for the caller's arguments (taken in order)
 * and {fragments} (the expander's own: {now} {now+?} {insert_ignore}
 * {insert_ignore_tail}; the jobs layer's:
 *   {J} {T} {H}      the jobs table, the target table, the history table (quoted)
 *   {N}              the table jctx.named (quoted): one of djc's own tables
 *                    named outright (the worker table, worker_statements.c)
 *   {status} ...     a column of the jobs or the history table (JOB_COLS,
 *                    HIST_COLS), quoted; a column whose name a key
 *                    attribute already uses is `_name`
 *   {key}            "k1 = ? AND k2 = ?" with the values of jctx.key
 *   {keyin}          "((k1 = ? AND ...) OR (...))" over jctx.keys
 *   {keyvals}        "?, ?" with the values of jctx.key
 *   {keys} {keys:A}  the key columns "k1, k2" (prefixed "A.")
 *   {cols} {hcols}   every column of JOB_COLS, of HIST_COLS, in order
 *   {join:A:B}       "A.k1 = B.k1 AND ..." (A, B: aliases, or J / T)
 *   {keysource}      SELECT of the target's key source (with its params)
 *   {where} {where:A}  " AND (<jctx.where>)" on key attributes, or nothing
 *   {prio}           " AND priority <= ?" when jctx.max_priority >= 0
 *   {ifstatus}       " AND status = ?" when jctx.status is set, or nothing
 *   {by:lease}       after {J}: read it with its index `lease` (ddl.c), in
 *                    a dialect that names indexes (SQLite), else nothing
 *   {srcdefs}        the DDL of t's key-source attributes "k1 type NOT NULL, ..."
 *   {coldefs} {hcoldefs}   the DDL of JOB_COLS, of HIST_COLS
 *   {coldef}         the DDL of the column jctx.col
 *   {attrdefs}       the DDL of the columns jctx.attrs (NOT NULL unless
 *                    nullable): a table of djc's own (the worker table)
 *   {update} {delete}  "UPDATE {J}", "DELETE FROM {J}" for a statement
 *                    with {where}: the form whose IN (subquery) the server
 *                    reads once (db.h, db_update_head); its assignments
 *                    must not read a column another of them sets
 *   {delete:next}    "DELETE FROM {J}", reading it with its index `next`
 *                    where the driver must be told (MariaDB: db.h, delete_using))
 * Values never enter the text: every value is a bound parameter. */
#ifndef DJC_JOBS_SQL_H
#define DJC_JOBS_SQL_H
#include "table/table.h"
#include "sql/expand.h"

/* A jobs statement: a named statement of fixed shape (sql/expand.h). */
typedef sql_stmt jsql;

/* What a template's fragments refer to. */
typedef struct jctx {
	const table *t;
	const djc_row *key;             /* {key} */
	const djc_row *const *keys;     /* {keyin} */
	size_t nkeys;
	const char *where;              /* {where}: JSON restriction, or NULL */
	long max_priority;              /* {prio}: -1 = no bound */
	const char *status;             /* {ifstatus}: a status, or NULL */
	const char *named;              /* {N}: a table by name, or NULL */
	const struct jcol *col;         /* {coldef}: a column of JOB_COLS, or NULL */
	const attr *attrs;              /* {attrdefs}: columns, or NULL */
	size_t nattrs;
} jctx;

#define JCTX(tab) ((jctx){.t = (tab), .max_priority = -1})

/* The jobs table's own columns, in DDL order (statements.c). */
typedef struct jcol jcol;
struct jcol {
	const char *name;
	coltype type;
	int p;              /* varchar length, datetime digits */
	int not_null;
	const char *def;    /* DEFAULT (SQL text), or NULL */
};
extern const jcol JOB_COLS[];
extern const size_t NJOB_COLS;
/* The jobs table's column of that name (one of JOB_COLS). */
const jcol *jcol_named(const char *name);
/* The history table's own columns (statements.c). */
extern const jcol HIST_COLS[];
extern const size_t NHIST_COLS;
/* How many attempts the history keeps per job. */
#define HISTORY_KEEP 20

/* The name of t's history table ("~~name__history") into buf. */
const char *jobs_hist_name(const table *t, sb_t *buf);

/* The column `name` of t's jobs table as it is called there: `name`, or
 * `_name` when a key attribute of t is called `name`. */
const char *jobs_col(const table *t, const char *name, sb_t *buf);

/* Expand s for c and x into *sql, pushing parameters in order into *params
 * (args[0..nargs) for the template's own `?`). DJC_ERROR for a template
 * mistake (unknown fragment, argument count), with a message naming s;
 * restriction errors as where_build reports them. */
int jsql_expand(djc_conn *c, const jsql *s, const jctx *x, const val_t *args, size_t nargs, sb_t *sql, pvec *params);
/* Expand and run; *out (may be NULL) as db_exec. Database errors go
 * through conn_dbfail with s->name as context. */
int jsql_run(djc_conn *c, const jsql *s, const jctx *x, const val_t *args, size_t nargs, db_res **out);
/* Expand (no arguments) and run, returning the database's code as db_exec
 * does: the caller words a failure (DJC_ERROR with the message on c for a
 * template mistake). */
int jsql_raw(djc_conn *c, const jsql *s, const jctx *x, db_res **out);
/* The same, returning the number of rows changed in *n. */
int jsql_count(djc_conn *c, const jsql *s, const jctx *x, const val_t *args, size_t nargs, long *n);

/* The statements (statements.c). */
extern const jsql JS_CLAIM_DUE, JS_CLAIM_SET, JS_CLAIM_ALONE, JS_CLAIM_MANY, JS_CLAIM_ORDER, JS_CLAIM_KEYS, JS_CLAIM_MADE,
	JS_CLAIM_INFO, JS_CLAIM_PEEK;
extern const jsql JS_LAPSED_LIST, JS_LAPSED_RETRY, JS_LAPSED_FAIL;
extern const jsql JS_RENEW, JS_HOLD, JS_MAKE_ALONE, JS_HELD_COUNT, JS_HELD, JS_RELEASE, JS_RELEASE_PID, JS_RELEASE_CLAIM,
	JS_RELEASE_ONE;
extern const jsql JS_CLOSE_DELETE, JS_CLOSE_SUCCESS, JS_CLOSE_MANY, JS_FAIL, JS_RETRY;
extern const jsql JS_HISTORY_ADD, JS_HISTORY_MARKED, JS_HISTORY_LAPSED, JS_LOST_COUNT, JS_HISTORY_TRIM;
extern const jsql JS_HISTORY_SWEEP, JS_HISTORY_EXPIRE, JS_HISTORY_LIST;
extern const jsql JS_OUTCOME_JOB, JS_OUTCOME_TARGET, JS_OUTCOME_ENDED;
extern const jsql JS_READY_COUNT, JS_READY_NOW, JS_NOT_DUE, JS_CANCEL_MARK, JS_CANCEL, JS_IGNORE_UPDATE, JS_IGNORE_ADD, JS_IGNORE_INSERT,
	JS_IGNORE_ADOPTED;
extern const jsql JS_CLEAR, JS_SET_PRIORITY, JS_SET_DELAY, JS_LOST_WHY, JS_COUNTS, JS_LIST, JS_LIST_STATUS;
extern const jsql JS_REFRESH_ADD, JS_REFRESH_REPEND_MARK, JS_REFRESH_REPEND, JS_REFRESH_REPEND_UNMARK;
extern const jsql JS_REFRESH_STALE_MARK, JS_REFRESH_STALE, JS_REFRESH_ORPHANS_MARK, JS_REFRESH_ORPHANS;
/* The DDL of jobs and history tables (ddl.c): not in JS_ALL, whose
 * statements a test runs (MariaDB commits DDL at once). */
extern const jsql JS_JOBS_CREATE, JS_HISTORY_CREATE, JS_JOBS_COLUMNS, JS_HISTORY_COLUMNS, JS_JOBS_ADD_COLUMN;
/* Every statement above, NULL-terminated (tests expand and prepare each). */
extern const jsql *const JS_ALL[];
#endif
