/* table.h - the connection object behind djc_conn, the stored pipeline,
 * rows (insert, fetch, delete), restrictions and key sources. */
#ifndef DJC_TABLE_H
#define DJC_TABLE_H
#include "djc.h"
#include "db/db.h"
#include "schema/schema.h"
#include "sql/query.h"

struct djc_conn {
	db_conn *db;
	char *url;          /* as opened (workers and make programs reuse it) */
	char *schema;       /* as requested (NULL = the URL's default) */
	pipeline *pipe;     /* loaded from the database on first use */
	char err[4096];
	void *jobs;                  /* the jobs layer's per-connection state */
	void (*jobs_free)(void *);   /* how djc_close frees it */
	pipeline *retired;  /* tables dropped or redefined since loaded: kept until djc_close,
	                     * as populate, jobs and make contexts may still point at them */
	unsigned long pipe_gen;    /* changes whenever a table of pipe is added, dropped or redefined */
	struct where_memo *where;  /* where_build's last result (restrict.c) */
};

#define META_TABLE "~djc_pipeline"

/* Set conn's message and return code. */
int conn_fail(djc_conn *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Message from the database error of the last statement, with context. */
int conn_dbfail(djc_conn *c, int code, const char *context);
/* How long a worker retries a database fault before it gives up, for a
 * lease of lease_s seconds: max(60 s, 4 leases) (populate/worker.h,
 * retry_wait); also the bound on each wait for the server on a worker's
 * connection while its lease runs (populate/lease.c, lease_start). */
double lease_window(double lease_s);
/* The bound on a statement's lock wait, seconds: jobs.lock_timeout, or
 * when 0 lease_window(jobs.lease_timeout). */
double conn_lock_wait(void);
/* Run body inside a transaction (begin, body, commit). When the database
 * reports a retryable failure (deadlock, serialization failure, lock wait
 * timeout, SQLite busy) the transaction is rolled back and run again, with
 * bounded exponential backoff; so is one cut short by a lost connection,
 * and with TX_IDEMPOTENT (the body's effect is the same when repeated) even
 * when the connection went during COMMIT. After the last try the error
 * says "gave up after N tries". body must reset its outputs on each run.
 * `what` names the operation in messages. */
typedef int (*tx_body)(djc_conn *c, void *arg);
#define TX_IDEMPOTENT 1
#define TX_TRIES 12
int conn_tx(djc_conn *c, const char *what, int flags, tx_body body, void *arg);
/* The same policy for callers that run their own transaction: after an
 * attempt failed with rc (and was rolled back), 1 when it is worth another
 * try (the backoff was slept), else 0 (after the last try with the "gave
 * up" message set). *attempt starts at 0. */
int conn_retry(djc_conn *c, int rc, int in_commit, int flags, int *attempt);

/* (Re)load the stored pipeline. */
int pipe_load(djc_conn *c);
/* pipe_load, then text (from file) parsed against it into *np; a parse
 * error's message on c. */
int pipe_parse_text(djc_conn *c, const char *text, const char *file, pipeline **np);
/* The named table, or DJC_ENOTFOUND with a message naming it. */
int conn_table(djc_conn *c, const char *name, table **out);
/* *has = 1 when the stored pipeline (META_TABLE) still holds table name,
 * read now (not c->pipe, which was loaded before): 0 once an unadopt or a
 * drop forgot it. A code only when it cannot be read (*has stays 1). */
int pipe_has(djc_conn *c, const char *name, int *has);

/* restrict.c. The condition of a JSON restriction on t's attributes
 * (source_only: only key-source attributes), its columns qualified by
 * alias when non-NULL, as a node of a; *out NULL for a NULL or empty
 * restriction. A malformed restriction: DJC_EINVAL naming what is wrong. */
int restrict_node(q_node **out, q_arena *a, djc_conn *c, const table *t, const char *where_json, const char *alias,
		  int source_only);
/* The same with the columns qualified as ref says (its name unset): by
 * an alias, or by a table's own name. */
int restrict_node_at(q_node **out, q_arena *a, djc_conn *c, const table *t, const char *where_json, q_col ref,
		     int source_only);
/* A restriction that is condition text (table/cond.h), or JSON naming
 * an attribute beyond t's key when source_only (any attribute of its key
 * source's tables and their ancestors through their keys: an EXISTS over
 * them), as restrict_node_at builds it; RESTRICT_JSON for any other
 * restriction (plain JSON: restrict_node_at's own path). */
#define RESTRICT_JSON 1
int restrict_text_at(q_node **out, q_arena *a, djc_conn *c, const table *t, const char *where, q_col ref,
		     int source_only);
/* After rendering a statement holding restrictions failed with rc: the
 * message when a restriction bound too many values one by one (o->over),
 * else rc. */
int restrict_fail(djc_conn *c, int rc, const q_out *o);
/* Whether where_json is a valid restriction of t (rendered and dropped). */
int restrict_check(djc_conn *c, const table *t, const char *where_json, int source_only);
/* Append " AND (<condition>)" for a JSON restriction (restrict_node) to
 * sql and params; nothing for NULL/empty. For callers writing the rest of
 * a statement themselves (the jobs statements' expander). */
int where_build(djc_conn *c, const table *t, const char *where_json, const char *alias, int source_only,
		sb_t *sql, pvec *params);
/* Frees where_build's memo (djc_close). */
void where_memo_free(djc_conn *c);

/* t's key source: SELECT DISTINCT with one column per source attribute,
 * named after it, including the table's standing key_source restriction. */
int keysource_query(q_sel **out, q_arena *a, djc_conn *c, const table *t);
/* The same rendered, appended to sql and params. */
int keysource_sql(djc_conn *c, const table *t, sb_t *sql, pvec *params);
/* The key_source restrictions of np's tables (any attribute of the key
 * source's tables or their ancestors; an expression is checked where it
 * is read): DJC_EINVAL "FILE:LINE: key_source of T ..." for a name no
 * table has, an ambiguous one, a malformed one. Runs no SQL. */
int keysource_check(djc_conn *c, const pipeline *np, const char *file);
/* NOT EXISTS (a row of t whose source attributes equal alias's) */
q_node *not_in_target(q_arena *a, const table *t, const char *alias);
/* 1 when rows of t come from populate (a computed or imported table). */
int table_populated(const table *t);
/* DJC_OK for such a table, else DJC_EINVAL: "table X is manual: only
 * computed and imported tables are populated". */
int table_populated_check(djc_conn *c, const table *t);
/* table_populated_check, and no raw column (an adopted column djc cannot
 * write, docs/types.md) in t or its parts: DJC_EINVAL "table X: column 'x'
 * (raw(time)) cannot be written by djc, so X cannot be populated by djc".
 * For what writes rows (populate, worker), not for what reads (progress). */
int table_target_check(djc_conn *c, const table *t);

/* Check a row against t's heading: known attributes, valid values,
 * defaults filled, key attributes taken from `key` when given (a
 * conflicting value is an error), every non-nullable attribute present.
 * *out is the row of bound values. */
int row_prepare(djc_conn *c, const table *t, const djc_row *in, const djc_row *key, djc_row **out, char **msg);
/* row_prepare of a row the caller frees next: its bytes values are moved
 * into *out (value_in_take), not copied; in is then only to be freed. */
int row_prepare_take(djc_conn *c, const table *t, djc_row *in, const djc_row *key, djc_row **out, char **msg);
/* INSERT prepared rows inside the caller's transaction. On a duplicate or
 * missing parent, returns the code and *bad the row's index. */
int rows_insert(djc_conn *c, const table *t, djc_row *const *rows, size_t n, int skip_dup, size_t *inserted, size_t *bad);
/* The same with multi-row INSERT statements (a few round trips for many
 * rows). On failure it does not say which row: callers that need that roll
 * back and insert one by one. */
int rows_insert_many(djc_conn *c, const table *t, djc_row *const *rows, size_t n, int skip_dup, size_t *inserted);
/* Statements built for one db_batch: each item's text and parameters are
 * owned by the list (stmt_list_items points the items at them). */
typedef struct stmt_list {
	db_item *items;
	sb_t *texts;
	pvec *params;
	size_t n, cap;
} stmt_list;
/* Append a statement (sql and p are taken, left empty); expect as db_item. */
void stmt_list_add(stmt_list *l, sb_t *sql, pvec *p, long expect);
/* Append a claim item (cl must outlive the batch). */
void stmt_list_claim(stmt_list *l, const db_claim *cl);
/* The items, pointing at the list's texts and parameters. */
db_item *stmt_list_items(stmt_list *l);
void stmt_list_free(stmt_list *l);
/* Drop the statements after the first n. */
void stmt_list_truncate(stmt_list *l, size_t n);
/* Append the multi-row INSERT statements of rows into t (values copied). */
void rows_insert_stmts(djc_conn *c, const table *t, djc_row *const *rows, size_t n, int skip_dup, stmt_list *l);

/* upstream.c: 1 when a is an ancestor of t (reached through the `->`
 * references of t, of its parents, ...; a part's master counts), else 0
 * (t itself is not its own ancestor). */
int table_is_ancestor(const djc_conn *c, const table *t, const table *a);
/* 1 when a make of t may read a: a is an ancestor of t, or a part table
 * of one (and not itself downstream of t), else 0. */
int table_may_read(const djc_conn *c, const table *t, const table *a);
/* DJC_OK when a make of t may read a (table_may_read), else DJC_EINVAL
 * with a one-line message naming both. */
int table_upstream_check(djc_conn *c, const table *t, const table *a);

/* What a make read through djc (table, restriction, a hash of the rows),
 * checked again inside its commit's transaction (docs/parity.md). Any
 * protocol's reads can feed it: read through read_set_fetch; the
 * set goes with make's rows to the commit (made_rows.reads, make_rows.h). */
typedef struct read_set read_set;
read_set *read_set_new(void);
void read_set_free(read_set *rs);
/* Read the rows of a restricted by where (JSON text, NULL: all rows) into
 * *out, as djc_fetch does, and record in rs that they were read, with
 * their row versions where the backend has them (db_row_version: the
 * commit then reads those first). */
int read_set_fetch(djc_conn *c, read_set *rs, const table *a, const char *where, djc_rowset **out);
/* Read each recorded restriction again (in the caller's transaction) and
 * compare: DJC_OK when all are the same, else DJC_ECONFLICT with a
 * one-line message naming the changed table and make's target t. */
int read_set_verify(djc_conn *c, const table *t, const read_set *rs);
/* The checks of rs as statements for a commit's batch (l): one per
 * restriction read, each failing (division by zero) inside the
 * transaction unless the rows it reads now have exactly the versions
 * recorded. DJC_EINVAL, nothing appended, when rs cannot be checked that
 * way (a backend without row versions, a read of more than
 * READ_CHECK_ROWS rows): the caller checks with read_set_verify. Any
 * failed check is not yet a change (a row rewritten as it was): the
 * caller then checks with read_set_verify, which compares values too. */
#define READ_CHECK_ROWS 10000
int read_set_check_stmts(djc_conn *c, const read_set *rs, stmt_list *l);
/* 1 when read_set_check_stmts can check rs, else 0. */
int read_set_checkable(djc_conn *c, const read_set *rs);
/* One set holding the reads of sets[0..n) (NULL ones skipped): the
 * reads of a group of makes committed together. */
read_set *read_set_join(const read_set *const *sets, size_t n);

/* What rows_fetch_read reads of each row. */
typedef enum {
	READ_WITH_VERSION,   /* its values as djc_fetch reads them, and its version
			      * (named db_row_version) where the backend has one */
	READ_VERSION_ONLY,   /* its version alone (DJC_EINVAL where the backend has none) */
	READ_DIGESTED        /* its values as djc_fetch reads them, but a bytes value over 64 KiB
			      * digested where the driver can (value.h, VAL_DIGESTED): to compare
			      * (read_set_verify), never to hand out */
} read_what;
/* The rows of t matching where_json in primary key order. For the reads
 * of a make, checked at its commit (read_set). */
int rows_fetch_read(djc_conn *c, const table *t, const char *where_json, read_what what, djc_rowset **out);

/* Where rows_fetch_stream hands its rows: each row with a bytes value
 * longer than over (stored as it is: not raw) as value.h's VAL_DIGESTED
 * (s NULL, n its length, u not yet), count the rows in all (known with
 * the first); then such values' bytes to each, in the order of t's
 * attributes, in pieces of at most piece bytes (col: the attribute's
 * index; buf from piece_get, each's to give back: piece_put, util/piecepool.h). A nonzero return is returned by
 * rows_fetch_stream (the rest of the rows are read and dropped). */
typedef struct rows_sink {
	size_t over, piece;
	int (*row)(void *ctx, const djc_row *r, size_t count);
	int (*each)(void *ctx, size_t col, size_t at, char *buf, size_t n);
	void *ctx;
} rows_sink;
/* The rows of t matching where_json in primary key order, as djc_fetch
 * reads them, handed to k as they come (db_exec_stream: never held whole
 * by djc where the driver streams, db_can_stream); *out: the rows as read,
 * their streamed values digested (for the read's record, read_set_add). */
int rows_fetch_stream(djc_conn *c, const table *t, const char *where_json, const rows_sink *k, djc_rowset **out);
/* Record in rs that the rows of a restricted by where were read (rows:
 * as read, large bytes values may be digested), as read_set_fetch does
 * on a backend without row versions. */
void read_set_add(read_set *rs, const table *a, const char *where, const djc_rowset *rows);

/* Select columns of t into typed rows. cols NULL = all attributes. */
int rows_select(djc_conn *c, const table *t, const char *sql, const pvec *params, djc_rowset **out);
/* The same for a query built with sql/query.h (rendered here). */
int rows_fetch(djc_conn *c, const table *t, const q_sel *s, djc_rowset **out);

/* Creates the auxiliary tables of t (table_aux_tables) if missing: the
 * jobs layer's part of declare. */
typedef int (*tbl_aux_fn)(djc_conn *c, table *t);
/* Declare the tables of a pipeline text, all or nothing, serialised with
 * every other schema change of the schema (see schema_tx): new tables are
 * created with their auxiliary tables (aux, called for every computed and
 * imported table of the stored pipeline) and stored; tables declared
 * before with the same definition are left alone. DJC_ECONFLICT when a
 * table is declared with another definition, when a table of that name
 * exists that djc did not declare, or when a declared table's SQL table
 * differs from its stored definition; then nothing is created. *report
 * (may be NULL; caller frees) gets one line per table. */
int tbl_declare(djc_conn *c, const char *text, const char *filename, tbl_aux_fn aux, char **report);
/* Run by tbl_declare_with once the tables of p (the text's, parsed) are
 * declared, in the same change: what it writes is kept only with them. */
typedef int (*tbl_then_fn)(djc_conn *c, const pipeline *p, void *arg);
struct schema_tx;
/* djc adopt --accept-changes (docs/adopt.md, the jobs layer's
 * adopt_accept.c): tbl_declare taking a stored adopted table whose
 * definition differs from the text's as the text defines it. All under
 * declare's schema-change lock, in its transaction or with its undo
 * steps: before() after the stored tables' auxiliary tables are checked
 * (forgets the tables DataJoint dropped); for each changed adopted table,
 * its text stored, then renew() (keeps or makes anew its auxiliary
 * tables); verify() once they all are, before anything the declare's
 * then step writes (a refusal there leaves nothing); after() last, before
 * the change is committed (the drops). Each may add lines to rep; a code
 * fails the whole declare. */
typedef struct tbl_accept {
	int (*before)(djc_conn *c, struct schema_tx *x, void *ctx, sb_t *rep);
	int (*renew)(djc_conn *c, struct schema_tx *x, void *ctx, const table *old, table *nt, sb_t *rep);
	int (*verify)(djc_conn *c, struct schema_tx *x, void *ctx);
	int (*after)(djc_conn *c, struct schema_tx *x, void *ctx);
	void *ctx;
} tbl_accept;
/* How tbl_declare_with declares: aux makes each table's auxiliary tables;
 * acc (NULL: they are refused) takes changed adopted tables, the lock
 * then always taken; then (NULL: none) writes rows in the change once the
 * tables are declared, before acc->after: where DDL is transactional in
 * its transaction, elsewhere in a transaction of its own after the DDL,
 * undone with it when it fails (so then writes rows only, never DDL).
 * When every table of the text is declared already, as it is (and no
 * acc), then runs alone in a transaction (conn_tx: it must be idempotent,
 * and reset its outputs). */
typedef struct tbl_declare_ways {
	tbl_aux_fn aux;
	const tbl_accept *acc;
	tbl_then_fn then;
	void *then_arg;
} tbl_declare_ways;
/* tbl_declare, in the ways w says. */
int tbl_declare_with(djc_conn *c, const char *text, const char *filename, const tbl_declare_ways *w, char **report);
/* What tbl_declare checks before it takes the lock, writing nothing: the
 * text parses (against the stored pipeline), each adopted table's SQL
 * table is there with its columns, each SQL name fits the backend; with
 * stored, also what it checks under the lock against the stored tables (a
 * changed definition, a table in the way): a dry run's checks, read
 * without the lock. *ntables (may be NULL): the text's tables. stored 2:
 * as 1, a changed adopted table accepted (tbl_accept). */
int tbl_declare_check(djc_conn *c, const char *text, const char *file, size_t *ntables, int stored);

/* ------------------------------------- schema changes (declare, drop, alter) */

typedef struct undo_step {
	char *sql;
	val_t *p;
	size_t np;
} undo_step;

/* A schema change in progress. Every schema change of a schema (declare,
 * drop, alter) takes the schema-change lock first, so concurrent ones run
 * one after the other, and each sees what the one before it stored. Where
 * DDL is transactional (SQLite, PostgreSQL) the change is one transaction;
 * where it is not (MariaDB/MySQL) each step records how to undo it, and a
 * failed change is undone in reverse order. */
typedef struct schema_tx {
	const ddl_dialect *d;
	int active;
	undo_step *undo;
	size_t nundo;
} schema_tx;

/* Wait (bounded) for the schema-change lock and take it; DJC_EBUSY when it
 * did not come in time. */
int stx_begin(djc_conn *c, schema_tx *x);
/* Record how to undo the step just done: sql with np parameters (both
 * taken). Runs only where DDL is not transactional. */
void stx_undo(schema_tx *x, char *sql, val_t *p, size_t np);
/* Finish: commit, free the lock. On failure the change is aborted. */
int stx_commit(djc_conn *c, schema_tx *x);
/* Give up: roll back, or undo the recorded steps in reverse order; free
 * the lock. c's message is kept (an undo that fails is added to it). */
void stx_abort(djc_conn *c, schema_tx *x);
/* Store text as the definition of the declared table name, recording
 * how to put back was. A code (with the message) when it failed. */
int pipe_set_text(djc_conn *c, schema_tx *x, const char *name, const char *text, const char *was);
/* Take the stored definitions of v[0..n) away (drop, and djc adopt
 * --accept-changes for tables DataJoint dropped), recording how to put
 * each back. A code (with the message) when it failed. */
int pipe_forget_stored(djc_conn *c, schema_tx *x, table **v, size_t n);
/* What differs between the declared table old and its definition nt in
 * file, for declare's refusal, into b: DJC_OK with the changes alter makes
 * ("add n = 0 : int32, key_source: {...} -> {...}"), or alter's code with
 * its reason for not making them (c's message is then alter's). */
int tbl_declare_diff(djc_conn *c, const table *old, const table *nt, const char *file, sb_t *b);
/* The column names of the SQL table sql_name, in order (*n = 0 and *cols
 * NULL when it does not exist); free with strv_free. */
int sql_columns(djc_conn *c, const char *sql_name, char ***cols, size_t *n);
/* Adopted tables (adopted.c): DJC_OK when t's DataJoint table exists with
 * every column t names (a SELECT of them that reads no row), else
 * DJC_ECONFLICT naming the table or the first missing column (file:line of
 * t). */
int adopted_probe(djc_conn *c, const table *t, const char *file);
/* DJC_EINVAL for a delete of rows of adopted table t (a cascade's too):
 * DataJoint's rows are DataJoint's to delete, with its cascade through the
 * tables djc does not know. */
int adopted_delete_refuse(djc_conn *c, const table *t);
/* DJC_EINVAL for a drop of adopted table t (dropped: the table named,
 * t itself or one t depends on): the message points to djc unadopt. */
int adopted_drop_refuse(djc_conn *c, const table *t, const table *dropped);
/* DJC_EINVAL for an insert (djc insert, the API's) into an adopted manual
 * or lookup table: DataJoint's to fill; DJC_OK otherwise. */
int adopted_insert_check(djc_conn *c, const table *t);
/* Adopted tables DataJoint changed (adopt_stale.c): whether adopted tables
 * are still as adopted (docs/adopt.md, "When DataJoint changes an adopted
 * table"): for each of tabs[0..n) that is
 * adopted, why[i] (caller frees) says what differs between its stored
 * definition (its parts' too) and its DataJoint table now (missing; a
 * column added, removed, of another type) and how to adopt it again;
 * NULL when nothing does or it is not adopted. The catalogs are read once
 * for all of them. A code only when they cannot be read. */
int adopt_stale(djc_conn *c, table *const *tabs, size_t n, char **why);
/* DJC_ECONFLICT "table X is not as adopted: ..." when t is stale, else
 * DJC_OK (populate and worker check their tables once, at start). */
int adopt_current_check(djc_conn *c, table *t);
/* After rc, a failure of a statement on t: when t is adopted and not as
 * adopted (a table it reads dropped, say), DJC_ECONFLICT "table X is not as
 * adopted: ..." instead of the server's message; else rc, its message kept.
 * Costs a catalog read on failure only; nothing inside a transaction.
 * Every command on one table calls it where its statements fail (fetch,
 * progress, refresh, the jobs functions): one line and exit 2, never the
 * server's message about a table DataJoint dropped. */
int adopt_failure_explain(djc_conn *c, table *t, int rc);
/* An attribute's type as its definition gives it ("float64 as float8
 * collate X (nullable)"), for messages. */
void adopt_attr_desc(sb_t *b, const attr *a);
/* The stored pipeline loaded, (*missing)[i] (c->pipe->n of them; caller
 * frees) = 1 for each adopted table of c->pipe whose DataJoint table is
 * not there (dropped, or its schema), read from the catalogs once. A
 * code only when they cannot be read. */
int adopt_missing(djc_conn *c, char **missing);
void strv_free(char **v, size_t n);
/* Row count of the SQL table sql_name (-1 if it does not exist). */
int sql_count(djc_conn *c, const char *sql_name, long long *n);
/* Take t out of c->pipe (it stays allocated until djc_close). */
void pipe_retire(djc_conn *c, table *t);
/* Tables of c->pipe that depend on t (through a -> reference or as its
 * parts), t first, then in declaration order; *n entries, caller frees the
 * array. */
table **pipe_descendants(djc_conn *c, table *t, size_t *n);

/* djc_changes (djc.h) builder */
void changes_add(djc_changes *ch, const char *tname, const char *sql_name, const char *action, long long rows);
#endif
