/* djc.h - the public API of libdjc: pipelines of tables filled by make(key),
 * with distributed job reservation through a per-table jobs table.
 *
 * Conventions (README.md, "The C API", has an example):
 *  - every function returns an int status: DJC_OK (0) or a negative DJC_E*
 *    code; on failure djc_error_last(conn) says why (it keeps the message of
 *    the last failed call; a successful call does not clear it);
 *  - arguments in libgit2's order: output parameters first (djc_fetch(&rows,
 *    conn, table, where)), then the connection or object acted on, then the
 *    inputs, then options (NULL means their _INIT defaults); an error
 *    message parameter (char **msg), where there is one, comes last;
 *  - option structs are initialised with their designated-initialiser _INIT
 *    macro (or _init function); their version field is checked;
 *  - one suffix for "the same call with more": a function's fuller form is
 *    named <base>_ext and takes the base form's arguments plus an options
 *    struct (djc_open_ext, djc_fetch_ext, djc_fetch_print_ext,
 *    djc_insert_ext, djc_delete_ext) or a restriction (djc_jobs_list_ext,
 *    djc_jobs_clear_ext, djc_jobs_ignore_ext); a function that only exists
 *    with options takes them under its base name (djc_populate, djc_drop);
 *  - names replaced by this convention stay for one release, marked
 *    DJC_DEPRECATED (the compiler warns where they are called; define
 *    DJC_DEPRECATED empty before including djc.h to silence it);
 *  - handles are opaque; each is freed by its NULL-safe djc_<type>_free();
 *  - strings returned as `const char *` are owned by the object they came
 *    from and live as long as it; strings returned as `char *` are the
 *    caller's to free() with free();
 *  - the connection, and an output parameter not marked "may be NULL",
 *    must not be NULL (most functions do not check them);
 *  - a connection is used by one thread at a time (its cached pipeline and
 *    its djc_error_last are the connection's, not the thread's): give each
 *    thread its own. A forked child neither uses nor closes its parent's
 *    connections (on PostgreSQL a child's djc_close ends the parent's
 *    server session, and statements it prepares there collide with the
 *    parent's); it opens its own, as djc_populate's worker processes do;
 *  - a make callback returns: a longjmp out of it leaves djc_populate's
 *    signal handlers, lease thread and reservations behind.
 */
#ifndef DJC_H
#define DJC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DJC_VERSION "0.1.0"

/* Marks a name kept for one release after it was replaced: the compiler
 * warns where it is called, naming what to use instead. */
#ifndef DJC_DEPRECATED
#if defined(__GNUC__) || defined(__clang__)
#define DJC_DEPRECATED(use) __attribute__((deprecated("use " use)))
#else
#define DJC_DEPRECATED(use)
#endif
#endif

/* Status codes. Only ever appended, never renumbered. */
enum {
	DJC_OK = 0,
	DJC_ERROR = -1,       /* unclassified failure */
	DJC_EINVAL = -2,      /* bad input: definition, row, option, name */
	DJC_ENOTFOUND = -3,   /* no such table / row / job */
	DJC_EDUPLICATE = -4,  /* a row with that primary key exists */
	DJC_EFOREIGN = -5,    /* foreign key: missing parent / referenced by a child */
	DJC_EBUSY = -6,       /* retryable: a short lock timeout, deadlock, serialization */
	DJC_ECONN = -7,       /* connection lost or refused */
	DJC_ELOST = -8,       /* the reservation was lost before commit */
	DJC_EMAKE = -9,       /* make() failed (populate) */
	DJC_ECONFLICT = -10,  /* declared definition differs from the stored one */
	DJC_EINTR = -11,      /* interrupted by SIGINT/SIGTERM */
	DJC_ETIMEDOUT = -12,  /* make ran past its timeout (djc_make_cancelled) */
	DJC_ECANCELED = -13,  /* the job was cancelled or ignored (djc_make_cancelled) */
	DJC_ELOCKED = -14     /* a statement waited for a lock another session holds as long as
	                       * jobs.lock_timeout allows, and gave up (not retried by djc) */
};

/* A static English description of a status code. */
const char *djc_strerror(int code);

/* ---------------------------------------------------------------- values */

typedef enum djc_type {
	DJC_NULL = 0,
	DJC_INT,    /* int8..int64, uint8..uint32 */
	DJC_UINT,   /* uint64 */
	DJC_FLOAT,  /* float32, float64 */
	DJC_BOOL,
	DJC_TEXT,   /* char, varchar, enum, date, datetime, uuid, decimal, json (its text) */
	DJC_BYTES
} djc_type;

/* An ordered set of named values: a row, a key or a restriction. */
typedef struct djc_row djc_row;

djc_row *djc_row_new(void);
void djc_row_free(djc_row *row);
djc_row *djc_row_dup(const djc_row *row);
/* Setters replace an existing value of the same name. They copy their input.
 * They return DJC_EINVAL for a NULL or empty name. */
int djc_row_set_null(djc_row *row, const char *name);
int djc_row_set_int(djc_row *row, const char *name, int64_t v);
int djc_row_set_uint(djc_row *row, const char *name, uint64_t v);
int djc_row_set_float(djc_row *row, const char *name, double v);
int djc_row_set_bool(djc_row *row, const char *name, int v);
int djc_row_set_text(djc_row *row, const char *name, const char *v);
int djc_row_set_bytes(djc_row *row, const char *name, const void *v, size_t n);

size_t djc_row_count(const djc_row *row);
const char *djc_row_name(const djc_row *row, size_t i);
/* Index of name, or -1. */
long djc_row_find(const djc_row *row, const char *name);
djc_type djc_row_type(const djc_row *row, size_t i);
/* Getters by index. They convert where exact (an INT to a FLOAT, a UINT that
 * fits to an INT) and return DJC_EINVAL otherwise. Text and bytes point into
 * the row. */
int djc_row_int(int64_t *out, const djc_row *row, size_t i);
int djc_row_uint(uint64_t *out, const djc_row *row, size_t i);
int djc_row_float(double *out, const djc_row *row, size_t i);
int djc_row_text(const char **out, const djc_row *row, size_t i);
int djc_row_bytes(const void **out, size_t *n, const djc_row *row, size_t i);
/* Getters by attribute name (a row fetched, a key, a make's key): as the
 * getters by index, converting the same way, and DJC_ENOTFOUND when the
 * row has no value of that name. A NULL value is DJC_EINVAL for every
 * getter: djc_row_is_null tells it apart. djc_row_get_bool takes a bool
 * (or an integer 0 or 1) into *out as 0 or 1. */
int djc_row_get_int(int64_t *out, const djc_row *row, const char *name);
int djc_row_get_uint(uint64_t *out, const djc_row *row, const char *name);
int djc_row_get_float(double *out, const djc_row *row, const char *name);
int djc_row_get_bool(int *out, const djc_row *row, const char *name);
int djc_row_get_text(const char **out, const djc_row *row, const char *name);
int djc_row_get_bytes(const void **out, size_t *n, const djc_row *row, const char *name);
/* 1 when the row's value of name is NULL, 0 when it is another value,
 * DJC_ENOTFOUND when the row has no value of that name. */
int djc_row_is_null(const djc_row *row, const char *name);

/* JSON object text of the row (bytes as base64 text); caller frees. Always
 * valid UTF-8: a byte of a text value that does not start a valid UTF-8
 * sequence is written as U+FFFD, as the command line's JSON output does (so
 * for djc_row_to_json_typed). */
char *djc_row_to_json(const djc_row *row);
/* Parse one JSON object into a row, untyped (integers become INT, other
 * numbers FLOAT, strings TEXT, nested arrays/objects their JSON text;
 * integers beyond int64 are refused by the JSON parser: give them as
 * strings, which djc_insert converts for uint64 attributes). On error *out
 * is NULL and msg (if given, caller frees) says why. */
int djc_row_from_json(djc_row **out, const char *json, char **msg);

/* A list of rows, e.g. a fetch result. */
typedef struct djc_rowset djc_rowset;
size_t djc_rowset_count(const djc_rowset *rs);
const djc_row *djc_rowset_row(const djc_rowset *rs, size_t i);
void djc_rowset_free(djc_rowset *rs);

/* --------------------------------------------------------- configuration
 *
 * Settings (jobs.*, database.*, display.*; `djc config` lists them) come
 * from their defaults, then djc.json in the working directory (or the file
 * named by $DJC_CONFIG), then DJC_* environment variables (jobs.keep_completed
 * is DJC_JOBS_KEEP_COMPLETED), then djc_config_set. They are process-wide:
 * read once, on the first djc_open or djc_config_* call, and shared by every
 * connection of the process. Not safe to call djc_config_set while another
 * thread uses the library. */

/* Read the configuration if not yet read. Returns DJC_OK, or DJC_EINVAL for
 * an unreadable or malformed file, an unknown setting or a value a setting
 * does not take; then, if msg is non-NULL, *msg is a one-line message naming
 * the file or environment variable (caller frees). A failed read fails every
 * later call the same way (djc_open included). */
int djc_config_load(char **msg);

/* The effective value of a setting as text ("true", "60", "sqlite:djc.db"),
 * passwords included. *out is owned by the library and valid until the
 * setting is set again. DJC_ENOTFOUND for an unknown key, DJC_EINVAL when the
 * configuration does not load (djc_config_load says why). */
int djc_config_get(const char **out, const char *key);
/* The value of a true/false setting: *out is 1 for true, 0 for false.
 * DJC_EINVAL also when key is not a true/false setting. */
int djc_config_get_bool(int *out, const char *key);

/* Set a setting for the rest of the process, remembering `source` (e.g.
 * "command line") as where it came from. The value is checked as one from
 * a file would be: DJC_EINVAL for a value the setting does not take (or a
 * configuration that does not load), DJC_ENOTFOUND for an unknown key; then
 * nothing changes and, if msg is non-NULL, *msg says why (caller frees). */
int djc_config_set(const char *key, const char *value, const char *source, char **msg);

typedef struct djc_setting {
	const char *key;      /* "jobs.keep_completed" */
	const char *value;    /* the effective value as text, for display: a
			       * password (database.password, or one in
			       * database.url) is shown as "***" */
	const char *source;   /* "default", the config file's name,
			       * "environment", or a djc_config_set source */
	const char *env;      /* its environment variable */
	const char *kind;     /* "bool", "int", "float", "choice", "string" or "secret" */
} djc_setting;

/* Call cb once for every setting, in a fixed order (the order of `djc
 * config`). The setting and its strings are valid during that call only. A
 * non-zero return from cb stops the walk and is returned; DJC_EINVAL when the
 * configuration does not load. */
int djc_config_foreach(int (*cb)(const djc_setting *setting, void *payload), void *payload);

/* Check a number given for an option against what it takes, with the one
 * check every command, option and setting of that kind of value shares:
 * "priority" (a job's priority, or a bound on it: an integer from 0 to
 * 2147483647, as jobs.default_priority), "delay" (seconds from now, -1e9 to
 * 1e9), "timeout" (one make's: 0 to 1e9 seconds, as jobs.make_timeout),
 * "stale_timeout" and "orphan_timeout" (0 to 1e9 seconds, as
 * jobs.stale_timeout), or the key of a numeric setting ("jobs.lease_timeout").
 * DJC_OK; DJC_EINVAL when value is not one it takes, with *msg (if msg is
 * non-NULL; caller frees) saying what it must be ("an integer from 0 to
 * 2147483647"); DJC_ENOTFOUND for a name without a check. The library's
 * functions check their options' values the same way (djc_jobs_refresh,
 * djc_jobs_set, djc_populate, djc_worker). */
int djc_option_check(const char *name, double value, char **msg);

/* The warnings found while reading the configuration, one per line
 * (separated by '\n'), or NULL: a file that holds a password and other
 * users can read; a DJC_* environment variable that is not a setting (a
 * typo: DJC_JOBS_LEASE_TIMOUT), naming the closest setting. Variables djc
 * itself sets or reads that are not settings (DJC_KEY, DJC_KEY_<name>,
 * DJC_TABLE, DJC_SCHEMA, DJC_ATTEMPT, DJC_CONFIG, ...: README.md,
 * "Configuration") earn none, but DJC_SCHEMA set to another value than
 * DJC_DATABASE_SCHEMA (it chooses no schema). Owned by the library. */
const char *djc_config_warning(void);

/* ------------------------------------------------------------ connection */

typedef struct djc_conn djc_conn;

/* Open a connection. url NULL means $DJC_DATABASE_URL, then the config's
 * database.url, then "sqlite:djc.db"; an empty url ("") is DJC_EINVAL, as
 * is a SQLite URL with parameters ("sqlite:f.db?x=1"). schema NULL means the URL's default
 * (SQLite: the file itself; PostgreSQL: "public"; MySQL: the URL's
 * database). On failure *out is still a connection object (not connected)
 * whose djc_error_last() says why; free it with djc_close(). */
int djc_open(djc_conn **out, const char *url, const char *schema);

/* How to open a connection (djc_open_ext). */
typedef struct djc_open_options {
	int version;     /* DJC_OPEN_OPTIONS_VERSION */
	int no_create;   /* 1: create nothing. djc_open creates a missing SQLite
			  * file, PostgreSQL schema or MariaDB/MySQL schema
			  * (database); with no_create a missing one is
			  * DJC_ENOTFOUND, for commands that only read or that
			  * need declared tables. */
} djc_open_options;
#define DJC_OPEN_OPTIONS_VERSION 1
#define DJC_OPEN_OPTIONS_INIT {DJC_OPEN_OPTIONS_VERSION, 0}
void djc_open_options_init(djc_open_options *opts);

/* djc_open with options; opts NULL is DJC_OPEN_OPTIONS_INIT, which is
 * djc_open. On failure *out is as for djc_open. */
int djc_open_ext(djc_conn **out, const char *url, const char *schema, const djc_open_options *opts);
void djc_close(djc_conn *conn);
/* Remove what opening conn created (its MariaDB/MySQL database or
 * PostgreSQL schema: opened without no_create, and not there before) when
 * it still holds no table, so that a command that failed, or stored
 * nothing, leaves nothing behind (djc adopt). DJC_OK also when the open
 * created nothing, tables are there (then kept), or the backend is SQLite
 * (its file stays: another process may have opened it meanwhile). conn is
 * then of no use but to be closed. */
int djc_discard_created(djc_conn *conn);
/* The message of the last failed call on conn ("" if none). Passwords never
 * appear in it. Owned by conn. */
const char *djc_error_last(const djc_conn *conn);

/* ------------------------------------------------------------- pipelines */

/* Declare every table of a pipeline text (DESIGN section 1). Idempotent: a
 * table declared with the same definition is left alone, a different
 * definition is DJC_ECONFLICT. All or nothing: on any failure no table,
 * jobs table or stored definition of the text is left behind. Concurrent
 * declares (many workers starting at once) run one after the other, so
 * each of them succeeds when they declare the same definitions. djc never
 * takes over a table it did not declare: DJC_ECONFLICT, naming the table,
 * when a table of a new table's name exists already, or when a declared
 * table's SQL table differs from (or is missing for) its stored
 * definition. `filename` is used in messages ("file:line: ..."); the
 * message of DJC_ECONFLICT for a changed definition says what changed.
 * How a declared table's rows are made (its make, make_serve and timeout
 * lines) is not its definition: a change of those is stored, under the
 * same serialisation ("updated X ...: make: old -> new"). A computed or
 * imported table with a primary key attribute from no parent is
 * DJC_EINVAL unless jobs.allow_new_pk_fields_in_computed_tables is true
 * (as in DataJoint). A table whose SQL name is longer than the backend
 * keeps (64; PostgreSQL 63) is DJC_EINVAL. If report is non-NULL it
 * receives one line per table ("created X", "exists X" or "updated X");
 * caller frees. */
int djc_declare(char **report, djc_conn *conn, const char *text, const char *filename);

/* Names of the declared tables, in declaration order, as one
 * newline-separated string; caller frees. */
int djc_tables(char **out, djc_conn *conn);

/* The declared pipeline as a graph, for diagrams and overviews: one JSON
 * object {"tables": [{"name": "B", "tier": "computed", "master": null,
 * "key": ["id"], "parents": [{"name": "A", "primary": true}, ...]}, ...]}
 * with the tables in declaration order (a table after the tables it
 * references), a part's master by name, and each `->` reference as a parent
 * (primary: in the primary key). Caller frees *out; NULL on failure. */
int djc_pipeline_json(char **out, djc_conn *conn);

/* ------------------------------------------------------------------ rows */

typedef struct djc_insert_options {
	int version;           /* DJC_INSERT_OPTIONS_VERSION */
	int skip_duplicates;   /* rows whose primary key exists are skipped
				* (without it such a row is DJC_EDUPLICATE,
				* "... duplicate primary key in T (set
				* skip_duplicates in djc_insert_options to skip
				* it)"; djc insert names --skip-duplicates) */
	/* version 2: */
	int allow_direct_insert; /* 1: insert into a computed, imported or part
				  * table by hand (DataJoint's allow_direct_insert,
				  * for backfills and repairs); 0: such tables are
				  * filled by populate only (DJC_EINVAL). The jobs
				  * table stays consistent without being touched: a
				  * key whose row exists is never added by refresh or
				  * populate, and its pending job is closed as made
				  * when it is next reserved (docs/parity.md). */
} djc_insert_options;
/* Version 1 (without allow_direct_insert) is still accepted. */
#define DJC_INSERT_OPTIONS_VERSION 2
#define DJC_INSERT_OPTIONS_INIT {.version = DJC_INSERT_OPTIONS_VERSION}

/* Insert rows into table, all or nothing, in one transaction. Values are
 * checked against the heading; the message of a bad row names it by its
 * position ("row 1" is rows[0]) and key. *inserted (may be NULL) counts
 * rows written. opts NULL means DJC_INSERT_OPTIONS_INIT; a version other
 * than DJC_INSERT_OPTIONS_VERSION is DJC_EINVAL (so for every options
 * struct). */
int djc_insert_ext(size_t *inserted, djc_conn *conn, const char *table, const djc_row *const *rows, size_t n,
		   const djc_insert_options *opts);
/* Deprecated (removed in 0.2): djc_insert_ext with the count last. */
int djc_insert(djc_conn *conn, const char *table, const djc_row *const *rows, size_t n,
	       const djc_insert_options *opts, size_t *inserted) DJC_DEPRECATED("djc_insert_ext");

/* A key as a restriction on `table` (DataJoint's `Table & key`): key_json
 * is a JSON object; its attributes that table does not have are dropped
 * (the values of those it keeps are checked against the heading when the
 * restriction is used, as for any restriction). DJC_EINVAL when it shares
 * no attribute with table. *where_json (caller frees) can be
 * passed to djc_fetch, djc_fetch_print, djc_delete, ... */
int djc_key_restriction(char **where_json, djc_conn *conn, const char *table, const char *key_json);
/* Fetch rows of table matching a restriction (JSON text, README.md "The command line";
 * NULL for all), ordered by primary key. Every where_json of the API
 * alike: an empty or blank text ("", "  ") is DJC_EINVAL, as `--where ""`
 * is (it never means all rows: pass NULL). */
int djc_fetch(djc_rowset **out, djc_conn *conn, const char *table, const char *where_json);

/* How to fetch (djc_fetch_ext, djc_fetch_print_ext). */
typedef struct djc_fetch_options {
	int version;       /* DJC_FETCH_OPTIONS_VERSION */
	int all_columns;   /* 1: also the hidden job metadata columns
			    * (_job_start_time, _job_duration, _job_version) of a
			    * table declared with them (docs/parity.md); they are
			    * NULL in rows not made by populate */
} djc_fetch_options;
#define DJC_FETCH_OPTIONS_VERSION 1
#define DJC_FETCH_OPTIONS_INIT {.version = DJC_FETCH_OPTIONS_VERSION}
void djc_fetch_options_init(djc_fetch_options *opts);
/* djc_fetch with options; opts NULL is djc_fetch. */
int djc_fetch_ext(djc_rowset **out, djc_conn *conn, const char *table, const char *where_json,
		  const djc_fetch_options *opts);

/* Insert JSON Lines (one object per line; blank lines skipped) read from
 * `in`, typed by the table's heading (bytes as base64 strings, json
 * attributes as any JSON value); or, when the input starts with '[', one
 * JSON array of objects (rows named "row N" in messages). All or nothing;
 * errors name source_name:line. *inserted (may be NULL) counts rows
 * written. Needs <stdio.h>. */
int djc_insert_jsonl_ext(size_t *inserted, djc_conn *conn, const char *table, void *in /* FILE* */,
			 const char *source_name, const djc_insert_options *opts);
/* Deprecated (removed in 0.2): djc_insert_jsonl_ext with the count last. */
int djc_insert_jsonl(djc_conn *conn, const char *table, void *in /* FILE* */, const char *source_name,
		     const djc_insert_options *opts, size_t *inserted) DJC_DEPRECATED("djc_insert_jsonl_ext");

/* Insert CSV read from `in` (RFC 4180: what djc_fetch_print writes with
 * DJC_FORMAT_CSV, or a spreadsheet's export): a header line of attribute
 * names (any order, any subset), then one record per row; fields may be
 * quoted ("a, b", "say ""hi""") and quoted fields may span lines; LF or
 * CRLF; a UTF-8 byte order mark is skipped; blank lines are skipped. An
 * empty field is no value (NULL for a nullable attribute, the default for
 * one with a default, else an error); "" is an empty text. Numbers,
 * true/false (or 1/0) and json attributes are read from their text, bytes
 * as base64. All or nothing; errors name source_name:line. *inserted (may
 * be NULL) counts rows written. Needs <stdio.h>. */
int djc_insert_csv_ext(size_t *inserted, djc_conn *conn, const char *table, void *in /* FILE* */,
		       const char *source_name, const djc_insert_options *opts);
/* Deprecated (removed in 0.2): djc_insert_csv_ext with the count last. */
int djc_insert_csv(djc_conn *conn, const char *table, void *in /* FILE* */, const char *source_name,
		   const djc_insert_options *opts, size_t *inserted) DJC_DEPRECATED("djc_insert_csv_ext");

typedef enum djc_format { DJC_FORMAT_TABLE = 0, DJC_FORMAT_JSON, DJC_FORMAT_CSV } djc_format;
/* Fetch and print rows to `out` (a FILE*): an aligned text table, JSON
 * Lines, or CSV with a header row. */
int djc_fetch_print(djc_conn *conn, const char *table, const char *where_json, djc_format format, void *out);
/* djc_fetch_print with options (all_columns: the hidden columns after the
 * others); opts NULL is djc_fetch_print. */
int djc_fetch_print_ext(djc_conn *conn, const char *table, const char *where_json, djc_format format,
			const djc_fetch_options *opts, void *out);
/* JSON text of a row typed by table's heading (json attributes embedded,
 * bytes base64); caller frees. */
char *djc_row_to_json_typed(djc_conn *conn, const char *table, const djc_row *row);

/* Delete the matching rows. DJC_EFOREIGN if a child row references one;
 * then nothing is deleted. (djc_delete_ext deletes the dependent rows too,
 * as DataJoint's delete does.) */
int djc_delete(size_t *deleted, djc_conn *conn, const char *table, const char *where_json);

/* ------------------------------------------------------------- populate */

typedef struct djc_make_ctx djc_make_ctx;

/* A make callback: compute the rows for key and stage them with
 * djc_make_insert. Return 0 on success; anything else is an error whose
 * message is the one set with djc_make_error (or a generic one). A make
 * fails by returning, not by exit(): exit() ends the process it runs in,
 * with processes > 1 a worker process, which populate records as a worker
 * lost on the job, as if a signal had killed it ("make called exit(N)"). */
typedef int (*djc_make_fn)(djc_make_ctx *ctx, const djc_row *key, void *payload);

/* Stage a row for the target table (table NULL) or one of its part tables
 * (table "Master.Part" or just "Part"). Key attributes may be omitted:
 * they are filled from the key. The row is copied. Nothing is written
 * before make returns successfully. */
int djc_make_insert(djc_make_ctx *ctx, const char *table, const djc_row *row);
/* Read rows of an upstream table restricted by where_json. `table` must be
 * an ancestor of the make's target (DataJoint's self.upstream): a parent
 * through `->`, a parent's parent, ...; or a part table of one (committed
 * with its master's row: `Analysis.Unit` in a make of a table downstream
 * of Analysis); any other table is DJC_EINVAL with
 * a message naming both tables (also set as make's error message), so a
 * make cannot silently depend on data outside its lineage. What it read is
 * checked again when make's rows are committed (docs/parity.md). */
int djc_make_fetch(djc_rowset **out, djc_make_ctx *ctx, const char *table, const char *where_json);
/* Read the rows of `table` that match `key` on the attributes they share
 * (DataJoint's `Table & key`): the usual way to read an upstream table in
 * make, whatever other parents the key also comes from. Ancestors and
 * their part tables only, as djc_make_fetch. */
int djc_make_fetch_key(djc_rowset **out, djc_make_ctx *ctx, const char *table, const djc_row *key);
/* Whether make should stop as soon as it can: DJC_OK (0) to go on,
 * DJC_EINTR when populate was interrupted (SIGINT/SIGTERM), DJC_ELOST when
 * the job's reservation was lost (taken by another worker, or its lease
 * could not be renewed), DJC_ETIMEDOUT when make ran past its timeout
 * (djc_populate_options.timeout, the table's `timeout =`,
 * jobs.make_timeout), DJC_ECANCELED when the job was cancelled
 * (djc_jobs_cancel, djc_jobs_ignore). A long make should ask now and then
 * and return non-zero when told to stop: nothing it staged is written, and
 * the job is recorded as interrupted or timed out (retried like any
 * failure when attempts are left), cancelled, or left to its new holder.
 * Work a make finishes (returns 0) is committed even if a stop came
 * meanwhile (unless the job was cancelled or lost: the fence refuses it).
 * A drain (SIGUSR1) never stops a running make. */
int djc_make_cancelled(const djc_make_ctx *ctx);
/* The attempt this make is: 1 for a job's first, 2 after one failure, ...
 * (jobs.max_attempts; a make program gets it as DJC_ATTEMPT). Always 1
 * without job reservation. */
int djc_make_attempt(const djc_make_ctx *ctx);
/* Set the error message recorded if make returns non-zero. */
void djc_make_error(djc_make_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Set the error stack recorded with it (the jobs table's error_stack; a
 * make program's is its stderr): text, copied; NULL: none. */
void djc_make_error_stack(djc_make_ctx *ctx, const char *stack);

/* For a make written in another language that calls this library in the
 * worker's own process (python/djc_lib.py's populate and worker, from
 * the make callback it gives djc_populate): the serve protocol's messages
 * (docs/serve-protocol.md) as calls, answered by the code that answers a
 * serve program's pipe, so such a make gets what a serve program gets.
 *
 * djc_make_request answers one request line req[0..n) into *out (*len
 * bytes, NUL-terminated, the caller's to free()); with raw (and nraw)
 * non-NULL, the raw values of the answer's rows are not in *out but in
 * (*raw)[0..*nraw), in the order the rows' "_bin" name them with their
 * lengths, each the buffer it was read into (not copied; the caller
 * free()s each and the array). {"_djc": "key"} with
 * the key's line as a serve program reads it ({"_djc":"key","table":...,
 * "key":{...},"attempt":N}); {"_djc": "table"} with the table message of
 * the table made (its attributes' types and its parts'); a fetch
 * ({"_djc": "fetch", "table": ..., "key" or "where"; "types" and
 * "binary": true for the types and bytes values raw after their row's
 * line, named in its "_bin") with its rows' lines, as djc_make_fetch
 * reads them (ancestors only; checked at commit). A failed fetch and a
 * request that is none of these are answered with an error line
 * ({"_djc":"rows","error":...}). DJC_OK, or DJC_EINVAL for a NULL
 * argument. */
int djc_make_request(char **out, size_t *len, void ***raw, size_t *nraw, djc_make_ctx *ctx, const char *req,
		     size_t n);
/* Stage a row given as a serve program writes it: one JSON object
 * json[0..n) (its "_part" names a part table; values as `djc fetch
 * --format json` prints them), and, when its "_bin" names them
 * ([["attribute", length], ...]), the raw values of bytes and <blob>
 * attributes in raw[0..nraw) in that order, each of its stated length
 * (copied). Checked as djc_make_insert checks a row; on failure the make's
 * error message says why (DJC_EINVAL). */
int djc_make_insert_json(djc_make_ctx *ctx, const char *json, size_t n, const void *const *raw, size_t nraw);

/* The most worker processes djc_populate and djc_worker run (processes). */
#define DJC_MAX_PROCESSES 256

typedef struct djc_populate_options {
	int version;               /* DJC_POPULATE_OPTIONS_VERSION */
	int reserve_jobs;          /* use the jobs table */
	int processes;             /* worker processes, 0 to DJC_MAX_PROCESSES; 0 or 1 = this
	                            * process. Above 1 the calling thread forks them (see
	                            * djc_populate); outside the range DJC_EINVAL */
	long max_calls;            /* 0 = no limit; per populate call (all processes);
	                            * negative: DJC_EINVAL */
	long priority;             /* reserve only jobs with priority <= this; -1 = any */
	int suppress_errors;       /* go on after a failed make */
	int display_progress;      /* progress bar on stderr */
	int refresh;               /* -1 = jobs.auto_refresh; 0 no; 1 yes; else DJC_EINVAL */
	const char *where_json;    /* restriction on key attributes, or NULL */
	djc_make_fn make;          /* C make, or NULL to use make_argv / the table's make line */
	void *payload;             /* passed to make */
	const char *const *make_argv; /* NULL-terminated program and arguments, run once per
	                                 key (the per-key protocol, README.md). A make
	                                 program (per key or serve) gets this process's
	                                 environment plus djc's variables: DJC as the
	                                 environment has it, else the djc installed beside
	                                 libdjc.so (PREFIX/bin) or in the BINDIR the library
	                                 was built for, if there is one; and the directory of
	                                 djc_make.py (beside libdjc.so, or the PYDIR it was
	                                 built for) first on PYTHONPATH, the environment's
	                                 after it. Nothing of this process changes. */
	/* Since version 2: */
	const char *const *make_serve_argv; /* NULL-terminated program and arguments, started
	                                 once per worker process and kept for many keys (the
	                                 serve protocol, docs/serve-protocol.md); not with
	                                 make_argv. Neither given: the table's `make =` or
	                                 `make_serve =` line. */
	/* Since version 3: */
	double timeout;            /* seconds one make may run; 0 = the table's `timeout =`, then
	                              jobs.make_timeout (0 there: no limit); DJC_TIMEOUT_NONE: no
	                              limit for this run, whatever the table or the setting say */
} djc_populate_options;
/* A timeout (djc_populate_options, djc_worker_options) that lifts every
 * limit for one run (`--timeout 0`). */
#define DJC_TIMEOUT_NONE (-1.0)
/* Versions 1 (without make_serve_argv and timeout) and 2 (without timeout)
 * are still accepted. */
#define DJC_POPULATE_OPTIONS_VERSION 3
/* Designated initialisers: the fields not named are 0 / NULL. */
#define DJC_POPULATE_OPTIONS_INIT \
	{.version = DJC_POPULATE_OPTIONS_VERSION, .processes = 1, .priority = -1, .refresh = -1}
void djc_populate_options_init(djc_populate_options *opts);
/* A duration as people write it: "90" or "90s", "15m", "2h", "1d", "1.5h",
 * "1h30m" (the form of a table's `timeout =` line and of populate's
 * --timeout) into seconds (0 to 1e9). DJC_OK, or DJC_EINVAL for anything
 * else (empty text, an unknown unit, a negative value, trailing text). */
int djc_duration_parse(double *seconds, const char *text);

typedef struct djc_populate_error {
	char *key_json;
	char *message;
} djc_populate_error;

typedef struct djc_populate_result {
	long success_count;   /* keys made and committed */
	long error_count;     /* keys whose make failed */
	long skipped_count;   /* keys committed by someone else meanwhile */
	long lost_count;      /* reservations lost before commit (not committed) */
	size_t n_errors;
	djc_populate_error *errors;
	int interrupted;      /* signal number that stopped populate, or 0 */
	long retried_count;   /* failed or interrupted makes whose job went back to pending
	                         (jobs.max_attempts, jobs.retry_interrupted); not errors */
	long cancelled_count; /* running makes stopped because their job was cancelled */
	int drained;          /* SIGUSR1 asked populate to take no more work; it finished
	                         the makes it had started */
	char **error_tables;  /* [n_errors]: the table of each error (populate: its table) */
	char *failure;        /* why the workers could not go on, which is no make's failure
	                         (a serve program that cannot be run or restarted, a database
	                         gone for longer than the retries), or NULL. Not counted in
	                         error_count nor listed in errors; populate then returns
	                         DJC_ERROR with this message (DJC_ELOCKED when a statement
	                         waited jobs.lock_timeout for a lock: "T is locked by
	                         another session: ..."). */
} djc_populate_result;
void djc_populate_result_free(djc_populate_result *res);

/* Call make for every key of (key_source & where) - target. Returns DJC_OK
 * when every make succeeded, DJC_EMAKE when some failed (see *out), DJC_EINTR
 * when a signal stopped it, another code when populate itself failed. *out
 * is set whenever populate ran.
 *
 * With reserve_jobs, a failed make whose job has attempts left
 * (jobs.max_attempts) goes back to pending after its backoff; populate
 * waits for the retries of the jobs it failed itself and takes them again
 * (another worker may take them first), so its result counts the final
 * outcome. While it runs, populate handles SIGINT and SIGTERM (stop: the
 * running makes are stopped and recorded as interrupted) and SIGUSR1
 * (drain: take no more work, let the running makes finish and commit,
 * return DJC_OK with drained set), and ignores SIGPIPE; the previous
 * dispositions of these four signals are restored when it returns. SIGUSR1 is
 * unblocked while it runs (and blocked again after if it was): a caller
 * that blocks SIGUSR1 from its start loses no drain asked before (the
 * populate then drains before its first make). djc_worker does the same.
 *
 * With processes > 1 the calling thread forks that many worker processes
 * (each opens its own connection; the caller's is used only by the thread
 * that stays in the call) and returns once all have ended. They are copies
 * of the caller made by fork: they run the make, then leave with _exit
 * (no atexit handler, no stdio flush of the caller's). Each asks the kernel
 * for SIGTERM on its parent's death (PR_SET_PDEATHSIG, tied to the calling
 * thread, which stays in this call until they have ended: in effect, on
 * the death of the caller's process, a kill -9 or a crash): a worker
 * process then stops as on SIGTERM (its make recorded as interrupted, the
 * rest of its claim handed back), claims nothing more and exits, instead
 * of working on with nobody to report to. This is set in the worker
 * processes only; nothing of the caller's process changes. djc_worker
 * with processes > 1 does the same. */
int djc_populate(djc_populate_result **out, djc_conn *conn, const char *table,
		 const djc_populate_options *opts);

/* ---------------------------------------------------------------- worker */

/* Why a worker process stopped (djc_worker_result.stopped counts the
 * processes that stopped for each). Appended, never renumbered. */
typedef enum djc_worker_stop {
	DJC_WORKER_IDLE = 0,      /* no job for idle_exit seconds */
	DJC_WORKER_MAX_JOBS,      /* max_jobs make calls were started */
	DJC_WORKER_EMPTY,         /* until_empty: nothing pending or reserved is left */
	DJC_WORKER_DEADLINE,      /* no job fits before the deadline any more */
	DJC_WORKER_SIGNAL,        /* SIGINT/SIGTERM */
	DJC_WORKER_FAILED,        /* the worker could not go on (database gone too long, ...) */
	DJC_WORKER_DRAIN,         /* SIGUSR1: took no new job, finished and committed the running makes */
	DJC_WORKER_NSTOPS
} djc_worker_stop;

typedef struct djc_worker_options {
	int version;               /* DJC_WORKER_OPTIONS_VERSION */
	int processes;             /* worker processes; 1 = this process; above 1, forked by
	                            * the calling thread as djc_populate's are */
	long max_jobs;             /* stop after this many make calls in all (all processes); 0 = no limit */
	double idle_exit;          /* a process stops after this many seconds without a job; 0 = never */
	int until_empty;           /* a process stops when the served jobs tables hold nothing pending or
	                            * reserved (after a refresh made since it started) */
	double deadline;           /* Unix time to be done by: claim only jobs that fit, then stop; 0 = none */
	long priority;             /* reserve only jobs with priority <= this; -1 = any */
	const char *where_json;    /* restriction on key attributes (each served table must have them), or NULL */
	int refresh;               /* -1 = jobs.auto_refresh; 0 no; 1 yes (else DJC_EINVAL): refresh each table at most once
	                            * per refresh_interval, by whichever worker claims it first */
	double refresh_interval;   /* seconds; 0 = 10 */
	djc_make_fn make;          /* C make (one served table only), or NULL for make_argv / the table's make line */
	void *payload;             /* passed to make */
	const char *const *make_argv; /* NULL-terminated program and arguments (one served table only) */
	const char *const *make_serve_argv; /* NULL-terminated serve program and arguments, started once per
	                            * worker process (one served table only; docs/serve-protocol.md) */
	double timeout;            /* seconds a make may run; 0 = each table's `timeout =` line, else
	                            * jobs.make_timeout; DJC_TIMEOUT_NONE: no limit */
} djc_worker_options;
/* Version 1 (without make_serve_argv and timeout) is still accepted. */
#define DJC_WORKER_OPTIONS_VERSION 2
#define DJC_WORKER_OPTIONS_INIT {.version = DJC_WORKER_OPTIONS_VERSION, .processes = 1, .priority = -1, .refresh = -1}
void djc_worker_options_init(djc_worker_options *opts);

typedef struct djc_worker_result {
	long success_count;   /* keys made and committed */
	long error_count;     /* keys whose make failed (recorded as errors; the worker went on) */
	long skipped_count;   /* keys committed by someone else meanwhile */
	long lost_count;      /* reservations lost before commit (not committed) */
	size_t n_errors;
	djc_populate_error *errors;
	int interrupted;      /* signal number that stopped the worker, or 0 */
	long stopped[DJC_WORKER_NSTOPS];   /* processes that stopped for each djc_worker_stop */
	char **tables;        /* the tables served, upstream first */
	size_t n_tables;
	long retried_count;   /* failed or interrupted makes whose job went back to pending */
	long cancelled_count; /* running makes stopped because their job was cancelled */
	int drained;          /* SIGUSR1 asked the worker to take no more work */
	char **error_tables;  /* [n_errors]: the table of each error */
	char *failure;        /* why a worker process could not go on (stopped[DJC_WORKER_FAILED]),
	                         which is no make's failure; NULL when none did. Not counted in
	                         error_count nor listed in errors. */
} djc_worker_result;
void djc_worker_result_free(djc_worker_result *res);

/* The long-running form of populate with job reservation: serve the named
 * tables (NULL / 0: every computed and imported table of the pipeline), in
 * pipeline order (upstream first), for as long as work may appear: when
 * nothing can be claimed, wait (woken by a notification where the
 * connection can receive one: PostgreSQL without a pooler; else polling
 * with jittered exponential backoff up to a few seconds), refreshing each
 * table at most once per refresh_interval among all workers. A failed make
 * is recorded and the worker goes on. Stops on idle_exit, max_jobs,
 * until_empty, deadline or a signal. Returns DJC_OK, DJC_EMAKE when some
 * make failed (see *out), DJC_EINTR when a signal stopped it, or another
 * code when the worker could not start or go on; *out is set whenever it
 * ran. */
int djc_worker(djc_worker_result **out, djc_conn *conn, const char *const *tables, size_t ntables,
	       const djc_worker_options *opts);
/* The name of a djc_worker_stop ("idle", "max_jobs", "empty", "deadline",
 * "signal", "failed"); static. */
const char *djc_worker_stop_name(int stop);

/* DJC_OK when `table` is an ancestor of `target` or a part table of one
 * (what a make of target may read, as djc_make_fetch), else DJC_EINVAL
 * with a message naming both
 * (DJC_ENOTFOUND for an unknown table). `djc fetch` run by a make program
 * checks this against $DJC_TABLE. */
int djc_upstream_check(djc_conn *conn, const char *target, const char *table);

/* Remaining and total keys of the key source (restricted by where_json). */
int djc_progress(long *remaining, long *total, djc_conn *conn,
		 const char *table, const char *where_json);

/* ----------------------------------------------------------------- jobs */

typedef struct djc_refresh_options {
	int version;              /* DJC_REFRESH_OPTIONS_VERSION */
	long priority;            /* -1 = jobs.default_priority */
	double delay;             /* seconds from now (database clock) */
	double stale_timeout;     /* -1 = jobs.stale_timeout; 0 = no stale removal */
	double orphan_timeout;    /* 0 = none */
	const char *where_json;   /* restricts what is added */
} djc_refresh_options;
#define DJC_REFRESH_OPTIONS_VERSION 1
#define DJC_REFRESH_OPTIONS_INIT {.version = DJC_REFRESH_OPTIONS_VERSION, .priority = -1, .stale_timeout = -1}

typedef struct djc_refresh_result {
	long added, removed, orphaned, re_pended;
} djc_refresh_result;

int djc_jobs_refresh(djc_refresh_result *out, djc_conn *conn, const char *table,
		     const djc_refresh_options *opts);

/* A reservation held by this connection. */
typedef struct djc_job djc_job;
const djc_row *djc_job_key(const djc_job *job);
int64_t djc_job_token(const djc_job *job);
/* The attempt this reservation is (1 for the first; see djc_make_attempt). */
int djc_job_attempt(const djc_job *job);
void djc_job_free(djc_job *job);

/* Reserve the most urgent eligible job (DJC_ENOTFOUND when none). A job
 * whose target row already exists is closed instead of being handed out.
 * max_priority: reserve only jobs with priority <= it (-1: any); outside
 * -1 and 0 to 2147483647 DJC_EINVAL, as for djc_populate's priority (and
 * for djc_jobs_waiting's). */
int djc_jobs_reserve(djc_job **out, djc_conn *conn, const char *table,
		     const char *where_json, long max_priority);
/* Extend the lease of a held job: it stays this caller's for another
 * jobs.lease_timeout seconds (60 by default; the database's clock). The
 * holder of a job from djc_jobs_reserve must call this while it works on
 * the job, at least once per lease and best every lease/4: a job not
 * renewed for a whole lease counts as abandoned (its worker died) and may
 * be reserved by another worker, after which this call, djc_jobs_complete
 * and djc_jobs_error return DJC_ELOST. Stop working on the job then. (djc_populate
 * renews for its makes by itself.) */
int djc_jobs_renew(djc_conn *conn, djc_job *job);
/* Commit rows (for the target, may be empty) and mark the job success, in
 * one transaction, only if the reservation is still held: DJC_ELOST else.
 * DJC_EDUPLICATE when the target row already existed (made by someone
 * else): the job is then closed and nothing of rows is written. */
int djc_jobs_complete(djc_conn *conn, djc_job *job, const djc_row *const *rows, size_t n,
		      double duration);
/* Record a failed attempt (message truncated to 2047 characters), with a
 * history row: with attempts left (jobs.max_attempts) the job goes back to
 * pending, due after its backoff (jobs.retry_delay doubling per failure,
 * at most jobs.retry_delay_max, with jitter); else it is an error. */
int djc_jobs_error(djc_conn *conn, djc_job *job, const char *message, const char *stack);

/* Statuses: "pending", "reserved", "success", "error", "ignore"; DataJoint's
 * view names "errors", "completed", "ignored" are accepted for the last
 * three. A restriction (where_json) is on the jobs' key attributes, as for
 * populate; NULL means every job. */

/* Mark a key `ignore` (inserting the job if needed). A reserved job is
 * cancelled as by djc_jobs_cancel. */
int djc_jobs_ignore(djc_conn *conn, const char *table, const djc_row *key);
/* Mark every job of the restriction `ignore` (a reserved one is cancelled
 * as by djc_jobs_cancel), and add the restriction's keys of the key source
 * that have no job and no target row as `ignore`. *n (may be NULL): jobs
 * now ignored. */
int djc_jobs_ignore_ext(long *n, djc_conn *conn, const char *table, const char *where_json);
/* Deprecated (removed in 0.2): djc_jobs_ignore_ext. */
int djc_jobs_ignore_where(long *n, djc_conn *conn, const char *table, const char *where_json)
	DJC_DEPRECATED("djc_jobs_ignore_ext");
/* Cancel the pending and reserved jobs of the restriction: they become
 * `ignore` with a message naming who cancelled them. A reserved job's
 * worker stops its make within one heartbeat (jobs.lease_timeout / 4) and
 * commits nothing of it; the attempt is kept in its history. *pending and
 * *reserved (may be NULL) count them. */
int djc_jobs_cancel(long *pending, long *reserved, djc_conn *conn, const char *table, const char *where_json);
/* Delete jobs with the given status ("error", ...); *n receives the count. */
int djc_jobs_clear(long *n, djc_conn *conn, const char *table, const char *status);
/* Delete the jobs of the restriction with the given status (NULL: any
 * status) and their history; the next refresh adds their keys again
 * (clearing `ignore` un-ignores). *n (may be NULL) receives the count. */
int djc_jobs_clear_ext(long *n, djc_conn *conn, const char *table, const char *status, const char *where_json);
/* Deprecated (removed in 0.2): djc_jobs_clear_ext. */
int djc_jobs_clear_where(long *n, djc_conn *conn, const char *table, const char *status, const char *where_json)
	DJC_DEPRECATED("djc_jobs_clear_ext");

typedef struct djc_jobs_set_options {
	int version;           /* DJC_JOBS_SET_OPTIONS_VERSION */
	long priority;         /* the new priority; -1 = unchanged */
	double delay;          /* due this many seconds from now (database clock); -1 = unchanged */
} djc_jobs_set_options;
#define DJC_JOBS_SET_OPTIONS_VERSION 1
#define DJC_JOBS_SET_OPTIONS_INIT {.version = DJC_JOBS_SET_OPTIONS_VERSION, .priority = -1, .delay = -1}
/* Re-prioritise and/or reschedule the pending jobs of the restriction.
 * *n (may be NULL): how many. DJC_EINVAL when o sets nothing. */
int djc_jobs_set(long *n, djc_conn *conn, const char *table, const char *where_json, const djc_jobs_set_options *o);

/* Counts of jobs by status: pending, reserved, success, error, ignore
 * (in that order) into counts[5]. */
int djc_jobs_counts(long counts[5], djc_conn *conn, const char *table);
typedef struct djc_job_counts {
	long pending, reserved, success, error, ignore;
	long total;            /* all of them */
} djc_job_counts;
/* Counts of the jobs of the restriction, by status, and their total. */
int djc_jobs_count(djc_job_counts *out, djc_conn *conn, const char *table, const char *where_json);
/* Why a reserve finds nothing to take now (a populate that made nothing):
 * the pending jobs of the restriction that are not due yet (a retry's
 * backoff, a refresh's or djc_jobs_set's delay), and those due but above
 * the priority bound. */
typedef struct djc_jobs_wait {
	long later;             /* pending jobs (priority <= max_priority) not due yet */
	double first_due_in;    /* seconds from now, by the database's clock, until the
	                         * first of them is due; 0 when later is 0 */
	char first_due[32];     /* when that is, UTC ("2026-12-04 16:32:15.328"); "" when
	                         * later is 0 */
	long above_priority;    /* jobs due now whose priority is above max_priority
	                         * (0 when max_priority is -1: no bound) */
} djc_jobs_wait;
int djc_jobs_waiting(djc_jobs_wait *out, djc_conn *conn, const char *table, const char *where_json,
		     long max_priority);
/* Jobs rows, optionally only one status, as rows (key attributes and the
 * job's columns). */
int djc_jobs_list(djc_rowset **out, djc_conn *conn, const char *table, const char *status);
/* The same, restricted (status NULL: every status). */
int djc_jobs_list_ext(djc_rowset **out, djc_conn *conn, const char *table, const char *status,
		      const char *where_json);
/* Deprecated (removed in 0.2): djc_jobs_list_ext. */
int djc_jobs_list_where(djc_rowset **out, djc_conn *conn, const char *table, const char *status,
			const char *where_json) DJC_DEPRECATED("djc_jobs_list_ext");
/* One job's attempts, oldest first: its key attributes, then attempt (the
 * reservation number), outcome (error, timeout, interrupted, died,
 * cancelled, released, lease expired, orphaned, success), host, pid,
 * user, start_time, end_time, duration, backoff (seconds until its retry
 * was due, or NULL), message, stack (a make program's stderr tail), token.
 * The last 20 attempts of a job are kept; they are deleted with the job,
 * unless its target row is there (a job made and deleted, without
 * jobs.keep_completed): then they stay until jobs.history_retention after
 * the last one (a refresh deletes them), or a new job of the key. A job
 * made at its first attempt has none. key: exactly the job's key
 * attributes. */
int djc_jobs_history(djc_rowset **out, djc_conn *conn, const char *table, const djc_row *key);

/* ================================================================
 * Schema lifecycle: drop, cascading delete, alter (docs/schema.md).
 * Options NULL means their _INIT defaults.
 * ================================================================ */

/* What a drop, delete or alter did (or, on a dry run, would do): one entry
 * per table acted on, in the order acted on. */
typedef struct djc_change {
	char *table;      /* the table's pipeline name ("Stats", "Stats.Unit") */
	char *sql_name;   /* the SQL table acted on: the table itself or one of
	                   * its auxiliary tables (its jobs table "~~stats") */
	char *action;     /* "drop", "delete", "delete jobs", "add n = 0 : int32", ... */
	long long rows;   /* rows dropped or deleted (on a dry run: that would
	                   * be); -1 where rows are not counted (alter, missing table) */
} djc_change;

typedef struct djc_changes {
	size_t n;
	djc_change *items;
	int applied;      /* 1 when the changes were made; 0 on a dry run */
} djc_changes;
/* Free changes and every string in it. NULL-safe. */
void djc_changes_free(djc_changes *changes);

typedef struct djc_drop_options {
	int version;      /* DJC_DROP_OPTIONS_VERSION */
	int dry_run;      /* list what would be dropped, with row counts; change nothing */
} djc_drop_options;
#define DJC_DROP_OPTIONS_VERSION 1
#define DJC_DROP_OPTIONS_INIT {.version = DJC_DROP_OPTIONS_VERSION}
void djc_drop_options_init(djc_drop_options *opts);

/* Drop `table`, its part tables, every table that depends on it (through
 * `->`, transitively) and the auxiliary tables of each (its jobs table),
 * dependents first, and remove their stored definitions. All or nothing:
 * one transaction on SQLite and PostgreSQL; on MariaDB/MySQL, where DROP
 * commits by itself, the stored definitions are removed first and put back
 * if the DROP fails. Serialised with declare, alter and other drops; waits
 * (at most about two minutes) for transactions running on the tables, then
 * fails with DJC_EBUSY and drops nothing. A part table cannot be dropped
 * alone (DJC_EINVAL: drop its master). A declared table whose SQL table is
 * already gone is dropped from the stored pipeline only.
 * @param[out] out  (may be NULL) each table and auxiliary table with its
 *                  row count, also on a dry run and on failure when the
 *                  list was made; caller frees with djc_changes_free. */
int djc_drop(djc_changes **out, djc_conn *conn, const char *table, const djc_drop_options *opts);

typedef struct djc_delete_options {
	int version;      /* DJC_DELETE_OPTIONS_VERSION */
	int dry_run;      /* count what would be deleted; change nothing */
	int cascade;      /* 1: also delete the rows downstream that depend on the
	                   * deleted ones (DataJoint's delete); 0: DJC_EFOREIGN
	                   * and nothing deleted when a row has dependents */
} djc_delete_options;
#define DJC_DELETE_OPTIONS_VERSION 1
#define DJC_DELETE_OPTIONS_INIT {.version = DJC_DELETE_OPTIONS_VERSION, .cascade = 1}
void djc_delete_options_init(djc_delete_options *opts);

/* Delete the rows of `table` matching where_json (NULL: all of them) and,
 * with cascade, every row of a downstream table that depends on them, in
 * one transaction. Jobs stay consistent: the jobs of a downstream computed
 * or imported table whose keys lose their upstream rows are deleted with
 * them, the rest are left alone, so a later refresh adds back exactly the
 * keys whose upstream rows still exist (and re-pends kept success jobs
 * whose target row was deleted). Rows of a part table are deleted only with
 * their master row (DataJoint's part integrity): DJC_EINVAL otherwise.
 * @param[out] out  (may be NULL) one entry per table reached with its
 *                  count ("delete"), plus "delete jobs" entries; caller
 *                  frees with djc_changes_free. */
int djc_delete_ext(djc_changes **out, djc_conn *conn, const char *table, const char *where_json,
		   const djc_delete_options *opts);
/* Deprecated (removed in 0.2): djc_delete_ext. */
int djc_delete_with_options(djc_changes **out, djc_conn *conn, const char *table, const char *where_json,
			    const djc_delete_options *opts) DJC_DEPRECATED("djc_delete_ext");

typedef struct djc_alter_options {
	int version;      /* DJC_ALTER_OPTIONS_VERSION */
	int dry_run;      /* list the changes; change nothing */
} djc_alter_options;
#define DJC_ALTER_OPTIONS_VERSION 1
#define DJC_ALTER_OPTIONS_INIT {.version = DJC_ALTER_OPTIONS_VERSION}
void djc_alter_options_init(djc_alter_options *opts);

/* Bring the declared tables of a pipeline text to their definitions in it,
 * for changes of secondary attributes: add one (with a default or
 * nullable), drop one, rename one (`new : type  # {old} comment`), change
 * a comment or a default, widen a varchar(n) or an integer type, change
 * the key_source restriction or the make, make_serve and timeout lines. The
 * stored definitions are updated. Changes of the primary key, of
 * dependencies (`->`), of indexes, of the tier, narrowing or other type
 * changes are refused with DJC_EINVAL naming the table and what to do
 * instead (drop and declare again); then nothing is changed. Tables of the
 * text that are not declared yet are listed ("not declared") and left to
 * djc_declare. One transaction on SQLite and PostgreSQL; on MariaDB/MySQL
 * one ALTER TABLE per table (each table changes completely or not at all).
 * @param[out] out  (may be NULL) one entry per change; caller frees. */
int djc_alter(djc_changes **out, djc_conn *conn, const char *text, const char *filename,
	      const djc_alter_options *opts);
/* ============================ end of schema lifecycle ============ */


/* ============================ query algebra (issue 39) ===== * DataJoint's query expressions (docs/queries.md): a table, join `*`,
 * restriction `&` by a JSON restriction or another expression (a
 * semijoin), anti-restriction `-`, projection and aggregation, each
 * fetched with ONE SQL statement. An expression is immutable: a builder
 * returns a new one and takes its own reference to its operands, so the
 * caller still frees each expression it got (djc_expr_free) and may use
 * one in several. Builders check attributes and DataJoint's join
 * compatibility (a shared attribute must come from the same table
 * attribute, its lineage, on both sides) when they build: DJC_EINVAL (or
 * DJC_ENOTFOUND for a table) naming the attribute or table and the valid
 * ones; *out is then NULL. */
typedef struct djc_expr djc_expr;

/* The rows of a declared table. */
int djc_expr_table(djc_expr **out, djc_conn *conn, const char *table);
/* a * b: the natural join on their shared attributes (none: all pairs). */
int djc_expr_join(djc_expr **out, djc_conn *conn, djc_expr *a, djc_expr *b);
/* a & where_json: djc_fetch's JSON restriction on a's heading, or
 * condition text (docs/queries.md: 'subject = "m1" and duration > 3.5'). */
int djc_expr_restrict(djc_expr **out, djc_conn *conn, djc_expr *a, const char *where_json);
/* a - where_json: the rows of a the restriction does not match. */
int djc_expr_anti(djc_expr **out, djc_conn *conn, djc_expr *a, const char *where_json);
/* a & b: the rows of a matching some row of b on their shared attributes
 * (when they share none: all of a if b has a row, else none). */
int djc_expr_restrict_expr(djc_expr **out, djc_conn *conn, djc_expr *a, djc_expr *b);
/* a - b: the rows of a matching no row of b (NULL-safe: NOT EXISTS). */
int djc_expr_anti_expr(djc_expr **out, djc_conn *conn, djc_expr *a, djc_expr *b);
/* a.proj(...): the primary key (always kept) and attrs[0..n), each an
 * attribute name, "new=old" (a rename), "..." (every attribute) or
 * "-name" (not that secondary attribute, wherever it stands: DataJoint's
 * proj(..., '-name'); a key attribute cannot be excluded). */
int djc_expr_proj(djc_expr **out, djc_conn *conn, djc_expr *a, const char *const *attrs, size_t n);
/* a.aggr(b, ...): one row per row of a (those without a match in b too),
 * with a's primary key, and attrs[0..n): an attribute of a, "...",
 * "-name" (a secondary attribute of a left out, as in proj), or
 * "name=f(x)" with f one of count sum avg min max and x an attribute of
 * b (count() or count(*): the matching rows of b, 0 for none). b must
 * have every primary key attribute of a. */
int djc_expr_aggr(djc_expr **out, djc_conn *conn, djc_expr *a, djc_expr *b, const char *const *attrs, size_t n);
/* a + b: DataJoint's union. a and b must have the same primary key and
 * share no other attribute; every key of either, with a's attributes
 * (NULL where only b has the key) and b's (NULL where only a has it). */
int djc_expr_union(djc_expr **out, djc_conn *conn, djc_expr *a, djc_expr *b);
/* DataJoint's dj.U(by...).aggr(b, ...): one row per distinct value of the
 * attributes by[0..nby) of b (its primary key), with attrs[0..n) each
 * "name=f(x)" as djc_expr_aggr's (count(): b's rows with that value). */
int djc_expr_group(djc_expr **out, djc_conn *conn, djc_expr *b, const char *const *by, size_t nby,
		   const char *const *attrs, size_t n);
/* The expression of a text as `djc fetch` takes it (docs/queries.md):
 * `Session * Stats & {"subject": "m1"}`, `Session - Stats`,
 * `Session.proj(a, new=old)`, `Session.aggr(Trial, n=count(), m=avg(d))`,
 * parentheses. A syntax error names its column. */
int djc_expr_parse(djc_expr **out, djc_conn *conn, const char *text);
/* How the expression reads (owned by it). */
const char *djc_expr_text(const djc_expr *e);
/* Drop the caller's reference (NULL-safe). */
void djc_expr_free(djc_expr *e);

/* How to fetch an expression (djc_fetch_expr, djc_expr_sql). */
typedef struct djc_expr_fetch_options {
	int version;            /* DJC_EXPR_FETCH_OPTIONS_VERSION */
	const char *order_by;   /* "a desc, b" ("KEY [DESC]": the primary key); NULL: the primary key */
	long long limit;        /* at most this many rows; < 0: all */
	long long offset;       /* rows skipped first (0: none) */
	const char *attrs;      /* "a,b": only these attributes, in this order (KEY: the primary key's); NULL: all */
	int fetch1;             /* 1: exactly one row, else DJC_EINVAL (DataJoint's fetch1) */
} djc_expr_fetch_options;
#define DJC_EXPR_FETCH_OPTIONS_VERSION 1
#define DJC_EXPR_FETCH_OPTIONS_INIT {.version = DJC_EXPR_FETCH_OPTIONS_VERSION, .limit = -1}
void djc_expr_fetch_options_init(djc_expr_fetch_options *opts);
/* The rows of e (one SELECT statement). opts NULL: the _INIT defaults. */
int djc_fetch_expr(djc_rowset **out, djc_conn *conn, const djc_expr *e, const djc_expr_fetch_options *opts);
/* The statement djc_fetch_expr would run, with `?` placeholders, and
 * nothing run (caller frees *sql). */
int djc_expr_sql(char **sql, djc_conn *conn, const djc_expr *e, const djc_expr_fetch_options *opts);
/* Print e's rows to `out` (a FILE*) as djc_fetch_print does, plus "tsv"
 * and "jsonl": format is one of table json jsonl csv tsv ("json" is JSON
 * Lines too, as djc_fetch_print's). */
int djc_fetch_expr_print(djc_conn *conn, const djc_expr *e, const char *format, const djc_expr_fetch_options *opts,
			 void *out);
/* Delete the rows of e, which must be rows of one table (a table
 * restricted by anything: T & ..., T - ...; DJC_EINVAL otherwise), and
 * with opts->cascade the rows depending on them, as djc_delete_ext. */
int djc_delete_expr(djc_changes **out, djc_conn *conn, const djc_expr *e, const djc_delete_options *opts);
/* djc_upstream_check for every table e reads (a make program of target
 * reads only its ancestors and their part tables). */
int djc_expr_upstream_check(djc_conn *conn, const char *target, const djc_expr *e);
/* ============================ end of query algebra ============ */
/* ============================ conditions (issue 39) ============== */
/* Every `where_json` parameter of this header (djc_fetch, djc_delete,
 * djc_progress, the djc_jobs_* calls, djc_populate_options.where_json,
 * djc_worker_options.where_json, ...) also takes condition text: a string
 * whose first non-blank character is '{' or '[' is a JSON restriction, as
 * before; any other is a condition, parsed by djc with every value bound
 * as a parameter (docs/conditions.md):
 *	subject = "m1" and duration > 3.5
 *	session in (1, 2) or not (note like "pilot%") or weight is null
 * A malformed condition is DJC_EINVAL with one line on the connection,
 * "condition, column N: ...", and nothing is read or changed. On a computed
 * or imported table, a restriction of its keys (populate, progress, jobs)
 * may name any attribute of its key source's tables and of their ancestors
 * through their primary keys, in JSON or a condition: DataJoint's
 * T.populate(Session & 'species="rat"'). No new function: the strings. */
/* ============================ end of conditions ================== */

/* ============================ adopt (issue 38, docs/adopt.md) ========= */

/* djc_adopt's options. */
typedef struct djc_adopt_options {
	int version;              /* DJC_ADOPT_OPTIONS_VERSION */
	const char *overlay;      /* the overlay's text (docs/adopt.md), or NULL */
	const char *overlay_file; /* its name in messages ("file:line: ...") */
	int dry_run;              /* 1: generate the definitions, store nothing */
	/* version 2: */
	int accept_changes;       /* 1: take DataJoint's current definitions of
	                           * adopted tables it changed (their jobs kept
	                           * while the jobs table's key is the same, else
	                           * made anew) and forget those it dropped,
	                           * instead of refusing them (docs/adopt.md) */
} djc_adopt_options;
/* Version 1 (without accept_changes) is still accepted. */
#define DJC_ADOPT_OPTIONS_VERSION 2
#define DJC_ADOPT_OPTIONS_INIT {.version = DJC_ADOPT_OPTIONS_VERSION}

/* Adopt the DataJoint schemas schemas[0..n) (MySQL/MariaDB databases or
 * PostgreSQL schemas of conn's server): read their catalogs (and those of
 * the schemas their tables reference), write each DataJoint table as a
 * definition with an `adopted = schema.table` line (types, keys and
 * references as DataJoint left them; the overlay's make, make_serve,
 * timeout and key_source lines in the blocks of the computed and imported
 * tables it names) and declare them into conn's schema (the companion,
 * which holds djc's pipeline and jobs tables; no DDL on DataJoint's
 * schemas). Idempotent: adopting again declares nothing new. *out (caller
 * frees): with dry_run the definitions, else djc_declare's report; a line
 * "left out S.T (Class): why" for each table of the schemas left out (a
 * DataJoint 2.x singleton table; a `#` comment before a dry run's
 * definitions).
 * DJC_EINVAL for a backend without DataJoint schemas (SQLite), a layout
 * djc does not recognise (naming the table and what), an overlay that
 * does not fit (file:line); DJC_ENOTFOUND for a schema that is not there;
 * DJC_ECONFLICT for an adopted table DataJoint changed or dropped since
 * (unless accept_changes: then *out has a line per table changed,
 * "changed X ...", or forgotten, "forgot X ..."). Nothing is stored on
 * failure. */
int djc_adopt(char **out, djc_conn *conn, const char *const *schemas, size_t n, const djc_adopt_options *opts);

/* Undo djc_adopt for DataJoint schema `schema`: drop djc's jobs and
 * history tables of the tables adopted from it and forget their
 * definitions, and those of tables of other schemas adopted only as
 * their parents. DataJoint's tables are not touched. *out (caller frees;
 * may be NULL): one line per table ("unadopted X"). DJC_ENOTFOUND when no
 * table is adopted from schema. */
int djc_unadopt(char **out, djc_conn *conn, const char *schema);

/* Whether the adopted tables among tables[0..n) are still as DataJoint's
 * tables they were adopted from (docs/adopt.md, "When DataJoint changes an
 * adopted table"): why[i] (caller frees each; NULL when it is, or when the
 * table is not adopted) says what differs (its DataJoint table, a part's
 * or a table it reads through its references dropped, or redeclared with a
 * column added, removed or of another type) and how to adopt it again.
 * djc_populate and djc_worker refuse such a table (DJC_ECONFLICT with the
 * same text), `djc progress` leaves it out. The catalogs are read once for
 * them all. DJC_ENOTFOUND for an unknown table, another code when a catalog
 * cannot be read; why[] is then all NULL. */
int djc_adopted_check(char **why, djc_conn *conn, const char *const *tables, size_t n);
/* ============================ end of adopt ============================ */

/* ===================== query algebra: top (issue 39) ===================== */
/* DataJoint's a & dj.Top(limit, order_by, offset): a's first `limit` rows
 * (0: none) in the order order_by ("a desc, b"; NULL or "": the primary
 * key; "KEY [DESC]" too), after skipping `offset` rows. The result is a
 * restriction of a (a's heading), usable anywhere an expression is: as the
 * right operand of djc_expr_restrict_expr it keeps the rows matching those.
 * Rows equal in order_by are taken in primary key order. DJC_EINVAL for a negative limit or offset or an
 * unknown attribute in order_by. *out: caller frees (djc_expr_free). */
int djc_expr_top(djc_expr **out, djc_conn *conn, djc_expr *a, long long limit, const char *order_by, long long offset);
/* ==================== end of query algebra: top ==================== */

#ifdef __cplusplus
}
#endif
#endif
