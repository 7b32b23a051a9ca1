/* db.h - the database driver interface: one struct of function pointers per
 * backend (sqlite.c, postgres.c, mysql.c), chosen by URL scheme in db.c.
 * Everything above this layer speaks portable SQL with `?` placeholders plus
 * the few dialect fragments a driver supplies here; no layer above tests
 * which backend it runs on. */
#ifndef DJC_DB_H
#define DJC_DB_H
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "../util/sb.h"
#include "../util/value.h"
#include "djc.h"   /* statuses (DJC_E*) and djc_type */

/* Column types of the DDL (DataJoint 2.x core types plus internal ones). */
typedef enum coltype {
	T_INT8, T_INT16, T_INT32, T_INT64,
	T_UINT8, T_UINT16, T_UINT32, T_UINT64,
	T_FLOAT32, T_FLOAT64, T_BOOL, T_DECIMAL,
	T_CHAR, T_VARCHAR, T_ENUM,
	T_DATE, T_DATETIME, T_UUID, T_JSON, T_BYTES,
	T_TEXT        /* internal: unbounded text (definitions, error stacks) */
} coltype;

typedef struct coldef {
	coltype t;
	int p;          /* decimal precision; char/varchar length; datetime fractional digits */
	int s;          /* decimal scale */
	char **enums;   /* enum labels (owned by whoever built the coldef) */
	size_t nenums;
} coldef;

/* What db_driver.read_pieces streams: the value of bytes column col
 * (unquoted) of the row of table (unquoted, as db_qtable takes it) whose
 * row_id is at (its value as the select read it), in pieces of piece
 * bytes, each handed to each as it arrives: the byte offset of its start,
 * the piece, the row's version (row_version's value). The value is read
 * from the table once, not once a piece. each returning nonzero stops the
 * handing; read_pieces returns that value. */
typedef struct db_pieces {
	const char *table, *col;
	const val_t *at;
	size_t piece;
	int (*each)(void *ctx, size_t at, const val_t *bytes, const val_t *version);
	void *ctx;
} db_pieces;

/* A parsed connection URL. Every string is owned by the db_url. */
typedef struct db_url {
	char *scheme;    /* "sqlite", "postgresql", "mysql" */
	char *path;      /* sqlite file path */
	char *user, *password, *host, *dbname;
	int port;        /* 0 = driver default */
	size_t nopts;    /* query parameters (?sslmode=require&...) */
	char **opt_keys, **opt_vals;
	char *redacted;  /* the URL with the password replaced by "***" */
	char *conninfo;  /* postgresql: the URL as libpq gets it (djc_* parameters taken out) */
	int flags;       /* DB_OPEN_* (set by db_open_ext, not parsed) */
	double lock_wait;   /* seconds a statement may wait for a lock (set by db_open_ext, not parsed; 0: the driver's own) */
} db_url;

/* Open flags. DB_OPEN_NO_CREATE: a driver's open creates nothing (no
 * SQLite file, no schema); a missing one is DJC_ENOTFOUND.
 * DB_OPEN_POOLED: the server is reached through a transaction pooler
 * (database.pooler = transaction); the URL parameter pooler=none or
 * pooler=transaction decides instead when given. Only PostgreSQL's driver
 * reads it. */
#define DB_OPEN_NO_CREATE 1
#define DB_OPEN_POOLED 2

/* Parse url; on error returns DJC_EINVAL with a message in err. */
int db_url_parse(db_url *out, const char *url, char *err, size_t errlen);
void db_url_free(db_url *u);

typedef struct db_driver db_driver;

/* Which bytes values of a result come digested (db_exec_digest): those of
 * result column i (i < ncols, cols[i] nonzero) longer than over bytes, as
 * value.h's VAL_DIGESTED (s NULL, n their length, u the XXH3_64 of them). */
typedef struct db_digest {
	const unsigned char *cols;
	size_t ncols, over;
} db_digest;

/* What db_exec_stream hands over, a row at a time, as it comes (db.h,
 * exec_stream). Of result column i (i < ncols, cols[i] nonzero) a bytes
 * value longer than over comes in pieces of at most piece bytes: row gets
 * the row (r->nrows 1) with such a cell as value.h's VAL_DIGESTED (s
 * NULL, n its length, u 0 as yet); then each such value's pieces go to
 * each, in column order, each piece's buffer (piece_get, util/piecepool.h)
 * handed over (each gives it back: piece_put); then row_end gets the row again, those cells' u now the
 * XXH3_64 of their bytes (as db_exec_digest gives it), to take values
 * out of (db_cell_mut). A nonzero return of a callback is what
 * db_exec_stream returns; the rest of the result is read and dropped. */
typedef struct db_res db_res;
typedef struct db_stream {
	const unsigned char *cols;
	size_t ncols, over, piece;
	int (*row)(void *ctx, db_res *r);
	int (*each)(void *ctx, size_t col, size_t at, char *buf, size_t n);
	int (*row_end)(void *ctx, db_res *r);
	void *ctx;
} db_stream;

/* Base of every driver's connection struct (drivers put it first). */
typedef struct db_conn {
	const db_driver *drv;
	char err[1024];     /* message of the last failure */
	int in_tx;
	char *schema;       /* effective schema name */
	int qualify;        /* table names carry the schema (db_qtable): set by the driver's open */
	const char *table_suffix;   /* after CREATE TABLE (...): the driver's, unless its open set one */
	/* Threads sharing one connection (a worker and its heartbeat) take
	 * turns: the db_* wrappers hold this recursive mutex around each
	 * statement, and from db_begin to the end of the transaction. A
	 * thread marked urgent (db_thread_urgent: the heartbeat) goes before
	 * the others' next statement (db.c, conn_lock). */
	pthread_mutex_t mu;
	int tx_held;        /* the open transaction holds mu (db.c) */
	int depth;          /* how many times its holder has taken mu */
	atomic_int urgent;  /* urgent threads waiting for mu */
	/* Where the driver publishes this connection's own session (session_id)
	 * each time it (re)connects, before djc's first statement on the new
	 * session (db_publish_session: a pool child's shared slot), or NULL. */
	_Atomic long long *session_out;
	int created;        /* its open created its schema (MariaDB, PostgreSQL): db_drop_created */
	/* The longest wait for the server, in seconds, on one round trip
	 * with no byte moving either way, before the session is given up as
	 * lost (DJC_ECONN); 0: no bound (db_set_wait_bound). */
	double wait_bound;
	double wait_now;    /* the bound of the call at hand, set by db.c around it: wait_bound,
			     * or less while a run of failures goes on (0: use wait_bound) */
	/* The bound on a statement's wait for a lock (db_url.lock_wait,
	 * seconds; 0: the server's own). A statement that waited that long
	 * fails with DB_ELOCKED, and the driver sets locked_out; while
	 * lock_final is on (db_lock_final: a populate's worker), every later
	 * statement of the connection then fails at once the same way, so
	 * that neither the worker nor its heartbeat waits out the bound
	 * again on the same lock. */
	double lock_wait;
	double stmt_t0;     /* when the statement running now began (monotonic seconds, db.c) */
	atomic_int locked_out;
	atomic_int lock_final;
} db_conn;

/* A fully materialised result. Cells are row-major. A driver returns a cell
 * as DJC_NULL, DJC_INT, DJC_FLOAT, DJC_BYTES (binary columns) or DJC_TEXT
 * (the server's text form); callers coerce by the column's declared type. */
struct db_res {
	size_t ncols, nrows;
	char **cols;
	val_t *cells;
	long long affected;   /* rows changed by INSERT/UPDATE/DELETE */
};

void db_res_free(db_res *r);
const val_t *db_cell(const db_res *r, size_t row, size_t col);
/* The cell itself, to take its value (value_out_take): the result frees
 * what is left in it. */
val_t *db_cell_mut(db_res *r, size_t row, size_t col);
/* Integer value of a cell (parses text); 0 for NULL. */
int64_t db_cell_int(const db_res *r, size_t row, size_t col);
/* Text of a cell (NULL for SQL NULL); owned by the result. Integers and
 * floats are formatted into the cell on first call. */
const char *db_cell_text(db_res *r, size_t row, size_t col);

/* An atomic claim: mark up to `limit` rows of `table` matching `where`, taken
 * in `order`, with `set`, such that no two concurrent claimers ever get the
 * same row, and without waiting on rows another claimer holds (SKIP LOCKED
 * or the backend's equivalent). Returns the claimed rows' key_cols, then
 * `extra` (evaluated on the claimed row) when given. */
typedef struct db_claim {
	const char *table;      /* unquoted table name (the driver writes it with db_qtable) */
	const char *key_cols;   /* quoted, comma-separated primary key columns */
	const char *extra;      /* one more returned expression without params, or NULL */
	/* Or NULL, NULL: extra in two parts, for a driver that holds the claimed
	 * key in variables and looks it up by value (MariaDB's compound
	 * statement): extra = (1 when the table made_in, unquoted, has a row
	 * with the claimed key's values in its columns of the same names, else
	 * 0) + extra_rest (on the claimed row, without params). */
	const char *extra_rest;
	const char *made_in;
	const char *where;      /* condition with ? params */
	const val_t *wparams;
	size_t nw;
	const char *order;      /* ORDER BY list */
	const char *index;      /* an index whose order serves `where` and `order` (unquoted name), or
	                         * NULL; a driver may use it to claim in one locking read */
	long limit;
	const char *set;        /* SET assignments with ? params */
	const val_t *sparams;
	size_t ns;
	/* The column types of key_cols, then of order's columns, in order, for
	 * a driver that declares variables of them (MariaDB's compound
	 * statement); NULL: it finds them itself. */
	const coldef *types;
	size_t ntypes;
} db_claim;

/* A result of exec beyond the public codes: a unique index other than the
 * primary key was violated (DJC_EDUPLICATE is the primary key). Never
 * returned by the public API: conn_fail() reports it as DJC_EDUPLICATE. */
#define DB_EUNIQUE (-100)

/* A batch item that did not change exactly the rows it expected (db_item.expect). */
#define DB_EEXPECT (-101)

/* One item of a batch: a statement, or a claim. */
typedef struct db_item {
	const char *sql;          /* with ? params; NULL for a claim */
	const val_t *params;
	size_t np;
	long expect;              /* >= 0: the statement must change exactly this many rows */
	const db_claim *claim;    /* a claim instead of sql (its result: the claimed rows) */
} db_item;

/* A server refused a statement for lack of a privilege (PostgreSQL's
 * insufficient_privilege, MariaDB's "command denied"). Never returned by
 * the public API: conn_fail() reports it as DJC_ERROR. */
#define DB_EACCESS (-102)

/* A statement waited for a lock as long as the connection's bound
 * (db_conn.lock_wait: PostgreSQL lock_timeout, MariaDB lock_wait_timeout,
 * SQLite busy_timeout) and gave up: another session holds a table (or
 * the database) locked. Not retried by djc (the wait was the retry). The
 * public API reports it as DJC_ELOCKED (conn_fail). */
#define DB_ELOCKED (-103)

/* A condition "(cols) [NOT] IN (rows)" whose rows travel as one parameter
 * (db_in_rows), so that its length is not limited by how many parameters
 * a statement may bind. */
typedef struct db_in {
	const char *const *cols;   /* the k columns as SQL (quoted, with their alias) */
	const coldef *const *types;   /* their declared types */
	size_t k;
	const val_t *vals;         /* n rows of k values, row-major; none is NULL */
	size_t n;
	int neg;                   /* NOT IN */
} db_in;

/* What differs between dialects when the schema changes (driver-owned
 * data: db_driver.ddl, db_ddl()). The table layer runs the schema changes
 * (table/lifecycle.c), sql/ddl.c writes their ALTER TABLE; both ask the
 * connection's driver through this, never its name. */
typedef struct ddl_dialect {
	const char *driver;        /* db_driver.name (for messages) */
	int transactional;         /* CREATE/DROP/ALTER TABLE roll back with the transaction */
	const char *lock_setup;    /* run first inside the transaction (NULL: none) */
	const char *lock;          /* takes the schema-change lock; NULL: the write transaction is the lock */
	int lock_returns_1;        /* the lock statement answers 1 when it got the lock */
	const char *unlock;        /* frees a session lock; NULL: the transaction's end frees it */
	const char *columns;       /* column names of the table named by the one parameter, in order */
	int by_schema;             /* lock and columns take the schema's name as a first parameter
	                            * (PostgreSQL: never the session's current_schema(), which a
	                            * transaction pooler does not keep) */
	int drop_many;             /* DROP TABLE a, b in one statement */
	int alter_combined;        /* all changes of a table in one ALTER TABLE statement */
	const char *retype_head, *retype_mid; /* "ALTER COLUMN " c " TYPE " t; NULL: no type change needed ever */
	int backslash_escapes;     /* string literals treat \ as an escape character */
	int max_name;              /* the longest table name it keeps (<= SQL_NAME_MAX) */
} ddl_dialect;

#define DB_DRIVER_VERSION 1

struct db_driver {
	int version;
	const char *name;     /* URL scheme */

	/* must provide */
	int (*open)(db_conn **out, const db_url *url, const char *schema, char *err, size_t errlen);
	/* may provide: parse the URL itself (into a zeroed db_url whose scheme
	 * is set), instead of db_url_parse's generic scheme://user:password@
	 * host:port/dbname?k=v. DJC_EINVAL with a message (never holding the
	 * password) in err when it is not a URL the driver accepts. */
	int (*url_parse)(db_url *u, const char *url, char *err, size_t errlen);
	void (*close)(db_conn *c);
	/* Run one statement with bound parameters. out may be NULL. Returns
	 * DJC_OK or an error class: DJC_EDUPLICATE, DB_EUNIQUE, DJC_EFOREIGN, DJC_EBUSY
	 * (retryable), DJC_ECONN, DJC_EINVAL (data rejected), DJC_ERROR; with
	 * c->err set. */
	int (*exec)(db_conn *c, const char *sql, const val_t *params, size_t nparams, db_res **out);
	int (*begin)(db_conn *c);      /* a write transaction (SQLite: IMMEDIATE) */
	int (*commit)(db_conn *c);
	int (*rollback)(db_conn *c);   /* safe to call after a failed statement */
	int (*claim)(db_conn *c, const db_claim *cl, db_res **out);
	int64_t (*connection_id)(db_conn *c);
	/* may provide: connection_id when it names this connection's own
	 * server session, checked (the server sees the TCP port this client's
	 * socket has), else 0: through a proxy or pooler, NAT, a unix socket.
	 * NULL: connection_id as it is (SQLite: the process). */
	int64_t (*session_id)(db_conn *c);

	/* may provide (NULL: db.c runs the items one by one in a transaction) */
	/* Run items[0..n) as one transaction, all or nothing, in as few round
	 * trips as the protocol allows (PostgreSQL: one pipeline). Called
	 * outside any transaction. On success res[i] (res may be NULL) holds
	 * item i's result and the transaction is committed. On failure nothing
	 * is committed, no result is returned, *failed is the index of the
	 * item that failed (DB_EEXPECT when it changed other than `expect`
	 * rows), or n when the COMMIT itself failed: DJC_ECONN then means the
	 * outcome is unknown. */
	int (*batch)(db_conn *c, const db_item *items, size_t n, db_res **res, size_t *failed);

	/* dialect fragments */
	void (*quote_ident)(sb_t *b, const char *name);
	void (*column_type)(sb_t *b, const coldef *t);
	void (*now)(sb_t *b);          /* current UTC time as datetime(3) */
	void (*now_plus)(sb_t *b);     /* UTC now plus ? seconds (one FLOAT param) */
	const char *insert_ignore_head;   /* e.g. "INSERT OR IGNORE INTO" */
	const char *insert_ignore_tail;   /* e.g. " ON CONFLICT DO NOTHING" */
	const char *table_suffix;         /* after CREATE TABLE (...) */
	const ddl_dialect *ddl;           /* schema changes (must provide) */
	/* How many of two named indexes a table has, from the catalog
	 * (no lock on the table): parameters schema (NULL on SQLite), table,
	 * and the two index names. NULL: unknown (callers create them). */
	const char *index_count_sql;
	/* 1 if CREATE INDEX takes a WHERE (a partial index): SQLite and
	 * PostgreSQL; MariaDB has none. */
	int partial_index;
	/* What names the index a query reads a table with, put after the
	 * table's name and followed by the quoted index (" INDEXED BY "), or
	 * NULL. For a planner without statistics (SQLite's) that misjudges
	 * the jobs table's indexes (sql.h, {by:...}). */
	const char *index_hint;
	/* The statement, followed by the quoted table, that has the planner
	 * count a table again ("ANALYZE "), where its plans of the claim
	 * depend on the counts, or NULL. PostgreSQL: with the counts of an
	 * empty or never counted jobs table, a claim among 100,000 pending
	 * jobs was a bitmap scan and a sort of all of them. */
	const char *analyze_head;
	/* A read with one ? parameter, a connection_id, that returns a row
	 * while that server session exists; NULL where a session ends with its
	 * process (SQLite). A session's end is the one point after which
	 * nothing it sent can still commit: a client killed just after it sent
	 * a COMMIT leaves the server to run it (db_session_alive). */
	const char *session_sql;
	/* The statement that ends the server session with the connection_id
	 * given as its one ? parameter (rolling back whatever it runs), or
	 * NULL. Only for a session the driver's session_id vouched for. */
	const char *session_end_sql;

	/* may provide (NULL: the backend has no notifications; db.c copes) */
	/* Subscribe the connection to channel (kept across reconnects);
	 * DJC_EINVAL when this connection cannot receive notifications (through
	 * a transaction pooler). */
	int (*listen)(db_conn *c, const char *channel);
	/* Notify channel's listeners, when the current transaction commits (at
	 * once outside one). */
	int (*notify)(db_conn *c, const char *channel, const char *payload);
	/* Without waiting: 1 and the payload (caller frees) of a notification
	 * that arrived, 0 when none, DJC_ECONN when the connection is gone. */
	int (*notified)(db_conn *c, char **payload);
	/* The connection's socket (-1: none at the moment), to poll while
	 * waiting for notifications (with notified), and for tests to cut. */
	int (*socket)(db_conn *c);
	/* Write the head of a DELETE of table that reads it with index (both
	 * unquoted): for a planner that would scan the whole table once most
	 * of it matches (MariaDB's, whose DELETE then waits for each row
	 * another transaction holds, and keeps it locked to its end). NULL:
	 * DELETE FROM table (sql.h, {delete:...}). */
	void (*delete_using)(db_conn *c, sb_t *q, const char *table, const char *index);
	/* may provide: a one-row table an UPDATE or DELETE whose condition may
	 * hold an IN (subquery) joins (", (SELECT 1) AS name"), so the server
	 * plans it as a multiple-table statement (db_update_head,
	 * db_delete_head): MariaDB 10.x never semi-joins such a subquery in a
	 * single-table UPDATE or DELETE, and ran the JSON_TABLE of a long key
	 * list (in_rows) once per row of the table; joined, it reads the keys
	 * once and the table by its primary key. NULL: the plain statement. */
	const char *write_join;
	/* may provide: write in's condition to sql, its rows bound as at most
	 * in->k parameters put in out[] (*nout of them; the caller frees
	 * them), whatever in->n is, comparing as the same values bound one by
	 * one would. 0 when it wrote nothing (a type it cannot pass so, a
	 * server without the means): the caller binds each value. */
	int (*in_rows)(db_conn *c, const db_in *in, sb_t *sql, val_t *out, size_t *nout);
	/* may provide: the catalog queries `djc adopt` reads a DataJoint
	 * schema with (catalog.h); NULL: the backend has none (SQLite). */
	const struct db_catalog_sql *catalog;
	/* may provide: the type a decimal column and a decimal value are
	 * CAST to for <, <=, >, >= ("REAL"), where decimals are stored as text
	 * (SQLite); NULL: the column's own type compares numerically. */
	const char *decimal_order_cast;
	/* may provide: the type an enum column is CAST to for LIKE, where an
	 * adopted enum is a type of its own that LIKE does not take
	 * (PostgreSQL's "s"."enum_<hash>": "text"); NULL: LIKE takes it. */
	const char *enum_like_cast;
	/* may provide: the type a bool column is CAST to under sum, avg, min
	 * and max, where a bool is no number (PostgreSQL's boolean:
	 * "integer"); NULL: they take it. */
	const char *bool_agg_cast;
	/* may provide: a column every row of every table has, whose value
	 * changes whenever that row is written (PostgreSQL: xmin, the id of
	 * the transaction that wrote the row's version: it comes back only
	 * after four billion transactions). A commit checks the rows
	 * a make read by these alone when they are unchanged (upstream.c),
	 * rather than reading every value again. NULL: none. */
	const char *row_version;
	/* may provide (with row_version, row_id, read_pieces and
	 * begin_snapshot): bytes values longer than this are read in pieces
	 * of this many bytes (rows.c, fetch_rows), so that the driver's
	 * buffers hold a piece, not the value (libpq keeps its input buffer
	 * at the largest message it received, and a result copies the
	 * message). 0: read whole. */
	size_t read_piece;
	/* may provide: a column that names where a row lies (PostgreSQL:
	 * ctid); with row_version it names one version of one row, whatever
	 * its key (a key read back may not find its row: a timestamp cut to
	 * the microseconds djc keeps, a NaN). */
	const char *row_id;
	/* may provide: begin a read-only transaction whose statements all see
	 * one snapshot (PostgreSQL: REPEATABLE READ READ ONLY); commit or
	 * rollback ends it. */
	int (*begin_snapshot)(db_conn *c);
	/* may provide: stream a value in pieces (db_pieces). */
	int (*read_pieces)(db_conn *c, const struct db_pieces *req);
	/* may provide, with read_pieces: the SQL function of a value's size
	 * as stored. A value stored in fewer bytes than it has (compressed)
	 * is read whole by the select, not in pieces (read_pieces would
	 * send it whole anyway, one round trip later). */
	const char *stored_size;
	/* may provide: remove the schema that this connection's open
	 * created, when it holds no table (db_drop_created). NULL: kept
	 * (SQLite: another process may have the new file open). */
	int (*drop_created)(db_conn *c);
	/* may provide: exec, but the bytes values d asks for come digested
	 * (db_digest), hashed a piece at a time where the driver can, so djc
	 * never holds them whole (MariaDB: Connector/C holds the row's packet
	 * whole in its connection buffer already). NULL: db_exec_digest runs
	 * exec (values whole). */
	int (*exec_digest)(db_conn *c, const char *sql, const val_t *params, size_t nparams, const db_digest *d,
			   db_res **out);
	/* may provide: exec of a query whose rows go to s as they come, its
	 * large bytes values in pieces (db_stream), never held whole by djc
	 * (MariaDB: copied out of Connector/C's row a piece at a time). NULL:
	 * db_exec_stream is refused (db_can_stream 0). */
	int (*exec_stream)(db_conn *c, const char *sql, const val_t *params, size_t nparams, const db_stream *s);
	/* may provide: apply c->wait_bound (just changed) to the session at
	 * hand and to every later one. NULL: waits are not bounded (SQLite:
	 * no server to wait for). */
	void (*wait_bound_changed)(db_conn *c);
};

extern const db_driver db_sqlite_driver;
extern const db_driver db_postgres_driver;
extern const db_driver db_mysql_driver;

/* Open by URL (see djc_open for defaults). On failure returns a code and
 * fills err; *out is NULL. */
int db_open(db_conn **out, const char *url, const char *schema, char *err, size_t errlen);
/* db_open with DB_OPEN_* flags (db_open is flags 0) and a bound on each
 * statement's lock wait (lock_wait seconds, db_conn.lock_wait; 0: the
 * server's own). */
int db_open_ext(db_conn **out, const char *url, const char *schema, int flags, double lock_wait, char *err,
		size_t errlen);
/* After a lock wait that reached the bound (DB_ELOCKED), every later
 * statement of c fails at once with DB_ELOCKED and the same message (on),
 * or waits again (off, which also forgets the lock wait). */
void db_lock_final(db_conn *c, int on);
/* The driver's part of DB_ELOCKED: marks c locked out and puts the
 * message in c->err, "<driver>: waited N s for a lock another session
 * holds (<setting>)". Returns DB_ELOCKED. */
int db_locked(db_conn *c, const char *driver, const char *setting);
/* Whether the statement running on c has waited as long as c's bound on a
 * lock wait (db_conn.lock_wait): a driver whose lock errors do not say
 * which bound ran out (MariaDB's row and metadata locks, SQLite's busy)
 * tells the bound's from a short one's so. */
int db_lock_bound_reached(const db_conn *c);
void db_close(db_conn *c);
/* Remove what c's open created (c->created: its MariaDB/MySQL database or
 * PostgreSQL schema) when it still holds no table, so that a command that
 * failed leaves nothing behind; kept when tables are there, the open
 * created nothing or the driver has no drop_created (DJC_OK). c is then of
 * no use but to be closed. */
int db_drop_created(db_conn *c);

/* The wrappers that dispatch through c->drv, serialising the threads that
 * share c (see db_conn.mu). */
/* Mark the calling thread urgent (on) or not: its statements on a shared
 * connection go before the next statement of any other thread (which may
 * still finish its transaction first). For the heartbeat, whose renewal
 * must not wait behind a worker's statements one after another until the
 * lease lapses. */
void db_thread_urgent(int on);
/* Whether the server session with this id (another process's, as its
 * db_publish_session published it) still exists: 1 yes, 0 no (or the
 * backend's sessions end with their processes), else an error code. id 0
 * names no session: DJC_EINVAL. */
int db_session_alive(db_conn *c, int64_t id);
/* End that session now (its owner is dead): DJC_OK, or an error code;
 * DJC_EINVAL where the backend cannot. */
int db_session_end(db_conn *c, int64_t id);
/* Publish c's own server session (session_id: 0 when the connection is
 * not known to be its own, e.g. through a proxy) at *out now, and again
 * each time the driver has a new session (drivers call db_session_changed
 * after every reconnect, before djc's first statement on it). */
void db_publish_session(db_conn *c, _Atomic long long *out);
/* Bound each wait for the server on c (seconds; 0: none, the default):
 * a round trip that hears nothing from the server for that long, nor can
 * send to it, gives the session up as lost (DJC_ECONN; the next
 * statement outside a transaction reconnects). A frozen server (its
 * processes stopped: the kernel still acknowledges TCP, so keepalives and
 * TCP_USER_TIMEOUT never fire) or a pooler queueing a statement for a
 * server that crashed would otherwise hold the caller for ever. It bounds
 * a statement that runs that long on the server without a reply too:
 * workers set it (lease.c), one-shot commands do not. */
void db_set_wait_bound(db_conn *c, double seconds);
/* How long ago the last run of calls on a connection with a wait bound
 * that failed as a lost session (DJC_ECONN) began (seconds; a run: each
 * call starting within 5 s of the last one's end), taken once: 0 after it
 * is read, and when none failed in the last 5 s. A worker's retries count
 * their window from the start of that run, not from its end (worker.c,
 * retry_wait): a round trip the bound gave up on had already waited the
 * bound. One for the process (a worker process has one connection,
 * shared with its heartbeat thread, whose renewal may be the round trip
 * that hung while the worker waited for the connection). The db_*
 * wrappers record it (db_stalled). */
double db_stalled_take(void);
void db_stalled(double t0, double t1);
void db_session_changed(db_conn *c);
/* 1 if the server saw `port` as this client socket's own port (fd: the
 * socket; port: as the server reports it, e.g. inet_client_port()). */
int db_socket_port_is(int fd, long port);
int db_exec(db_conn *c, const char *sql, const val_t *p, size_t n, db_res **out);
/* db_driver.exec_digest, or db_exec where the driver has none. */
int db_exec_digest(db_conn *c, const char *sql, const val_t *p, size_t n, const db_digest *d, db_res **out);
/* db_driver.exec_stream (DJC_EINVAL where the driver has none). The
 * connection is held from the statement's start to its last row: the
 * callbacks must not use it. */
int db_exec_stream(db_conn *c, const char *sql, const val_t *p, size_t n, const db_stream *s);
int db_can_stream(db_conn *c);
int db_begin(db_conn *c);
int db_commit(db_conn *c);
int db_rollback(db_conn *c);
int db_claim_run(db_conn *c, const db_claim *cl, db_res **out);
/* db_driver.batch, or its equivalent one item at a time. */
int db_batch(db_conn *c, const db_item *items, size_t n, db_res **res, size_t *failed);
/* Tests only may set it, to act out a connection lost during a batch's
 * COMMIT: db_batch calls it before the batch (done 0) and after a batch
 * that committed (done 1). Nonzero ends the batch as a driver ends one
 * whose connection went during the COMMIT: DJC_ECONN, *failed = n, no
 * results; before, nothing was run (the COMMIT did not take effect);
 * after, everything was committed and only the reply is lost. The hook
 * runs with c locked: it may cut c's socket (db_driver.socket), not use c. */
extern int (*db_batch_fault)(db_conn *c, const db_item *items, size_t n, int done);
/* The one-item-at-a-time equivalent, for a driver whose batch cannot run
 * (called with the connection's mutex held). */
int db_batch_each(db_conn *c, const db_item *items, size_t n, db_res **res, size_t *failed);
void db_qi(db_conn *c, sb_t *b, const char *name);   /* quoted identifier */
/* The driver's in_rows, or 0 where it has none. */
int db_in_rows(db_conn *c, const db_in *in, sb_t *sql, val_t *out, size_t *nout);
/* s[0..n) as a JSON string, quotes included (for the drivers' in_rows). */
void db_json_str(sb_t *b, const char *s, size_t n);
/* The table `name` of the connection's schema, quoted: "schema"."name"
 * where the driver qualifies names (PostgreSQL), else "name". Every
 * statement names its tables through this, so none depends on session
 * state such as the search_path (a transaction pooler does not keep it).
 * A name "schema\x1fname" is that schema's table, always qualified. */
void db_qtable(db_conn *c, sb_t *b, const char *name);
/* Notifications (LISTEN/NOTIFY on PostgreSQL): db_listen is DJC_EINVAL
 * (message on c) where the connection cannot receive them (another backend,
 * a transaction pooler); db_notify does nothing where there are none.
 * db_wait_notify waits up to `seconds` for a notification: 1 with its
 * payload (caller frees), 0 when none came, or an error code (the
 * connection went; the next statement reconnects). It holds the
 * connection's mutex only to read what arrived, never while waiting. */
int db_listen(db_conn *c, const char *channel);
int db_notify(db_conn *c, const char *channel, const char *payload);
int db_wait_notify(db_conn *c, double seconds, char **payload);
/* CREATE INDEX IF NOT EXISTS index ON <table> (cols) in the dialect, of
 * the rows matching where when it is not NULL (only where the driver has
 * partial_index). */
void db_create_index(db_conn *c, sb_t *b, const char *table, const char *index, const char *cols, int unique,
		     const char *where);

/* The dialect facts and fragments of c's driver, for the layers above,
 * which never read c->drv themselves (docs/architecture.md). Inline: some
 * are on the claim's path. */
/* The server's id of this connection (db_driver.connection_id). */
static inline int64_t db_connection_id(db_conn *c) { return c->drv->connection_id(c); }
/* The SQL type of t in the dialect. */
static inline void db_column_type(db_conn *c, sb_t *b, const coldef *t) { c->drv->column_type(b, t); }
/* The database's clock as datetime(3) UTC, and that plus ? seconds (one FLOAT parameter). */
static inline void db_now(db_conn *c, sb_t *b) { c->drv->now(b); }
static inline void db_now_plus(db_conn *c, sb_t *b) { c->drv->now_plus(b); }
/* The INSERT that skips rows whose key exists: head instead of
 * "INSERT INTO", tail after the VALUES or SELECT. */
static inline const char *db_insert_ignore_head(db_conn *c) { return c->drv->insert_ignore_head; }
static inline const char *db_insert_ignore_tail(db_conn *c) { return c->drv->insert_ignore_tail; }
/* What differs in schema changes (never NULL). */
static inline const ddl_dialect *db_ddl(db_conn *c) { return c->drv->ddl; }
/* db_driver.index_count_sql, or NULL. */
static inline const char *db_index_count_sql(db_conn *c) { return c->drv->index_count_sql; }
/* 1 if CREATE INDEX takes a WHERE (db_driver.partial_index). */
static inline int db_partial_index(db_conn *c) { return c->drv->partial_index; }
/* 1 if another session's existence can be asked (db_session_alive): a
 * backend whose sessions outlive their clients' processes. */
static inline int db_session_checkable(db_conn *c) { return c->drv->session_sql != NULL; }
/* After the name of table (unquoted) in a FROM: read it with its index
 * (unquoted) where the dialect names indexes (db_driver.index_hint), else
 * nothing. */
void db_index_hint(db_conn *c, sb_t *q, const char *index);
/* The type to CAST a decimal column and value to for an ordering
 * comparison (db_driver.decimal_order_cast), or NULL. */
const char *db_decimal_order_cast(db_conn *c);
/* The type to CAST an enum column to for LIKE (db_driver.enum_like_cast),
 * or NULL. */
const char *db_enum_like_cast(db_conn *c);
/* The type to CAST a bool column to under sum, avg, min and max
 * (db_driver.bool_agg_cast), or NULL. */
const char *db_bool_agg_cast(db_conn *c);
/* The column that tells one version of a row from the next
 * (db_driver.row_version), or NULL. */
static inline const char *db_row_version(db_conn *c) { return c->drv->row_version; }
/* db_driver.read_piece, or DJC_READ_PIECE's bytes where the driver reads
 * in pieces (docs/workers.md); 0: values are read whole; DB_PIECE_BAD:
 * DJC_READ_PIECE is neither 0 nor a number of bytes from DB_PIECE_MIN to
 * DB_PIECE_MAX. */
#define DB_PIECE_MIN 1000
#define DB_PIECE_MAX (1ul << 30)
#define DB_PIECE_BAD ((size_t)-1)
/* DJC_READ_PIECE: 0 when it is not set, 1 when it is (*n its value: 0
 * or a size from DB_PIECE_MIN to DB_PIECE_MAX), -1 when it is neither. */
int db_piece_env(size_t *n);
size_t db_read_piece(db_conn *c);
/* db_driver.row_id. */
static inline const char *db_row_id(db_conn *c) { return c->drv->row_id; }
/* db_driver.begin_snapshot, the connection held until the transaction
 * ends (as db_begin holds it: the heartbeat thread's statements wait). */
int db_begin_snapshot(db_conn *c);
/* db_driver.stored_size, or NULL. */
static inline const char *db_stored_size(db_conn *c) { return c->drv->stored_size; }
/* db_driver.read_pieces (only where db_read_piece is not 0), the
 * connection held while the pieces come (no other statement between). */
int db_read_pieces(db_conn *c, const db_pieces *req);/* "DELETE FROM table", reading table with index where the driver must be
 * told (db_driver.delete_using); both unquoted. */
void db_delete_from(db_conn *c, sb_t *q, const char *table, const char *index);
/* "UPDATE table" and "DELETE FROM table" (table unquoted, never aliased,
 * so a condition can name it) for a statement whose condition may hold a
 * restriction's IN (subquery): on a driver with write_join, the
 * multiple-table form joined to its one row. The assignments of such an
 * UPDATE must not read a column another of them sets (a multiple-table
 * UPDATE does not promise their order). */
void db_update_head(db_conn *c, sb_t *q, const char *table);
void db_delete_head(db_conn *c, sb_t *q, const char *table);
/* Have the planner count table (unquoted) again where its plans depend on
 * the counts (db_driver.analyze_head); DJC_OK doing nothing elsewhere. */
int db_analyze(db_conn *c, const char *table);

/* 1 if name is a valid identifier for djc (letters, digits, _, and the
 * DataJoint prefixes ~ # handled by callers): [A-Za-z_][A-Za-z0-9_]*,
 * at most 64 bytes. */
int db_ident_ok(const char *name);

/* The binary NO PAD collation a MariaDB/MySQL server of this version
 * (mysql_get_server_info) offers, or utf8mb4_bin on older servers. */
const char *db_mysql_collation(const char *server_info);

/* SQLite on a network file system: the name of the network or cluster file
 * system whose statfs f_type is f_type (NFS, SMB/CIFS, Lustre, GPFS, CephFS,
 * BeeGFS, ...), or NULL for a local one. SQLite's WAL mode needs shared
 * memory and POSIX locks that these do not provide across machines, so the
 * SQLite driver refuses a database file on them (sqlite.c). */
const char *db_netfs_name(unsigned long f_type);
/* How the SQLite driver learns a path's f_type (statfs); -1 when it cannot.
 * Tests only may replace it, to act out a network file system. */
extern long (*db_fs_type)(const char *path);

#endif
