/* schema.h - pipelines, tables and headings: the parsed form of a pipeline
 * file (DataJoint 2.x definition syntax), value checking per type, and the
 * SQL names of tables. Knows nothing of connections except the dialect
 * fragments it is handed. */
#ifndef DJC_SCHEMA_H
#define DJC_SCHEMA_H
#include <stddef.h>
#include <jansson.h>
#include "db/db.h"

typedef enum tier { TIER_MANUAL, TIER_LOOKUP, TIER_IMPORTED, TIER_COMPUTED, TIER_PART } tier;

typedef struct attr {
	char *name;
	coldef type;
	char *type_text;   /* canonical type name as declared, e.g. "varchar(64)" */
	int in_key;
	int nullable;
	char *def;         /* default as written (unquoted), NULL = none */
	int has_def;
	char *comment;
	int from_parent;   /* 1 if it came from a -> reference */
	/* Adopted DataJoint columns (docs/types.md "Adopted tables"): */
	int dj_blob;       /* <blob>: bytes holding a DataJoint blob (header checked on write) */
	int raw;           /* raw(<sql type>): opaque, read-only; type_text keeps the server's type */
	int bin16;         /* uuid `as binary(16)`: stored as 16 bytes (DataJoint on MySQL) */
	int nonfinite;     /* float `as float8` / `as float4`: PostgreSQL's column, which keeps NaN
	                    * and infinities (DataJoint on PostgreSQL stores them) */
	char *store_type;  /* `as TYPE`: the column's SQL type in the DataJoint table where djc's own
	                    * differs (binary(16), a PostgreSQL enum type): jobs tables copy it */
	char *collate;     /* `collate NAME`: the column's collation (jobs tables copy it), or NULL */
} attr;

typedef struct fkey {
	char *parent;          /* the parent's table name */
	struct table *ptable;
	int in_key;
	char **attrs;          /* the parent's primary key attributes */
	char **cattrs;         /* the child's attributes, parallel to attrs: equal to them unless
	                        * renamed (-> Parent.proj(child='parent')) */
	size_t nattrs;
	int renamed;           /* some cattrs[i] differs from attrs[i] */
} fkey;

typedef struct tindex {
	int unique;
	char **attrs;
	size_t nattrs;
} tindex;

typedef struct table {
	char *name;            /* "SessionStats" or "SessionStats.Unit"; an adopted table of
	                        * another schema "subject.Subject" (docs/adopt.md) */
	char *sql_name;        /* "__session_stats" (an adopted table's: as DataJoint named it) */
	char *adopted;         /* `adopted = ephys.__x`: the DataJoint schema it is adopted from;
	                        * NULL for djc's own tables */
	char *schema;          /* the SQL schema it lives in; NULL: the connection's */
	char *sqlref;          /* the name rendered by db_qtable: sql_name, or for a table of
	                        * another schema "schema\x1fsql_name" (table_sqlref) */
	char *jobs_name;       /* "~~session_stats" (computed/imported only) */
	char *hist_name;       /* "~~session_stats__history": its jobs' attempt history */
	int jobs_qual;         /* adopted, of another schema, its natural jobs name another
	                        * table's: "~~schema__stats" (docs/adopt.md) */
	tier tier;
	struct table *master;  /* part tables */
	attr *attrs;           /* primary key attributes first */
	size_t nattrs, nkey;
	size_t attrs_cap;      /* attrs' room while the parser adds to it (xgrow) */
	fkey *fks;
	size_t nfks;
	fkey *nullrefs;        /* an adopted table's nullable references (DataJoint's `-> [nullable]
	                        * P` below '---'): their attributes are plain nullable attributes
	                        * (from_parent 0: no key source, cascade or insert check of djc's);
	                        * kept for their lineage only (docs/queries.md) */
	size_t nnullrefs;
	tindex *idx;
	size_t nidx;
	char **make_argv;      /* make = prog args... (NULL-terminated) */
	char **make_serve_argv;/* make_serve = prog args... (NULL-terminated) */
	char *key_source_where;/* key_source = JSON restriction */
	int ks_line;           /* the key_source line in its file (0: none) */
	double timeout;        /* timeout = 2h: seconds one make may run (0: none) */
	char *key_source_join; /* key_source = A * B ...: the tables joined, as "A * B" (NULL: the
	                        * parents in the primary key); docs/parity.md */
	struct table **ks_tables;
	size_t nks;
	char *text;            /* the block as written, header included */
	char *canon;           /* canonical form of the definition, compared for idempotent declare */
	char *how;             /* canonical form of how its rows are made (make, make_serve,
	                        * timeout): not its definition; declare updates it (docs/schema.md) */
	int line;              /* header line in its file */
	/* key source: the primary key attributes inherited from parents */
	size_t nsrc;
	size_t *src;           /* indexes into attrs */
	/* job metadata (docs/parity.md): hidden attributes _job_start_time,
	 * _job_duration, _job_version, stored after the others in attrs
	 * (attrs[nattrs .. nattrs + nhidden)), so that every loop over
	 * nattrs (headings, joins, restrictions, key sources, fetches, alter)
	 * leaves them out; only DDL, make's rows and fetch --all-columns use
	 * them. */
	int job_meta;
	size_t nhidden;
} table;

typedef struct pipeline {
	table **tables;
	size_t n;
} pipeline;

/* Parse a pipeline text. `prev` (may be NULL) holds tables already declared,
 * which the text may reference. On error returns DJC_EINVAL with
 * "file:line: message" in *msg (caller frees) and *out NULL. */
int pipeline_parse(pipeline **out, const char *text, const char *filename, const pipeline *prev, char **msg);
void pipeline_free(pipeline *p);
table *pipeline_find(const pipeline *p, const char *name);
/* Find by name or SQL name; also "Part" alone when unambiguous. */
table *pipeline_lookup(const pipeline *p, const char *name);
attr *table_attr(const table *t, const char *name);
/* 1 when x references p: one of its `->` lines, an adopted table's
 * nullable reference (nullrefs) too; not a part's master. */
int table_references(const table *x, const table *p);
/* The attribute or hidden attribute of that name, or NULL. */
attr *table_attr_any(const table *t, const char *name);
/* Give t (computed or imported) the job metadata columns: sets job_meta,
 * adds the hidden attributes and appends the `job_metadata = true` line to
 * its stored text, so the stored pipeline says so. For a table just parsed
 * by declare (jobs.add_job_metadata) or alter (keeping the columns of the
 * stored table), before it is stored or shared. No-op if it has them. */
void table_enable_job_meta(table *t);
/* How the rows of a table are made (its make, make_serve and timeout
 * lines) is not its definition: declare changes it without an alter.
 * table_text_with_how: old's text (caller frees) with its how lines
 * replaced by nt's, put where old's first one was (else after its last
 * line); everything else of old's text is kept. table_how_changes: one
 * line per change from old to nt into v (at most 3; "make: ./a -> ./b",
 * "timeout: 1h -> 2h"), returns how many; caller frees each. */
char *table_text_with_how(const table *old, const table *nt);
size_t table_how_changes(const table *old, const table *nt, char **v);
#define JOB_META_LINE "    job_metadata = true   # djc: hidden columns _job_start_time, _job_duration, _job_version\n"
const char *tier_name(tier t);

/* ------------------------------------------------ SQL names (names.c) */

/* The one way to name a user table in SQL: table_sqlref is the (unquoted)
 * name every statement builder takes (db_qtable renders it, qualified by
 * the table's own schema for an adopted table of a DataJoint schema, else
 * by the connection's where the driver qualifies); table_qname appends it
 * quoted. Nothing else hands a table's sql_name to db_qtable. */
const char *table_sqlref(const table *t);
void table_qname(db_conn *db, sb_t *b, const table *t);
/* "X is adopted from DataJoint schema S: djc does not change its
 * definition" (caller frees), for the refusals of declare, alter, drop and
 * delete. */
char *table_adopted_refusal(const table *t);
/* 1 when a is a raw (read-only) column of an adopted table that the
 * server fills when a row leaves it out: it has a default (a MySQL
 * timestamp's CURRENT_TIMESTAMP) or takes NULL. djc's inserts leave it
 * out. */
int attr_server_filled(const attr *a);
/* The first raw (read-only) column of t that the server does not fill
 * (attr_server_filled), or NULL: such a table cannot be a populate
 * target. */
const attr *table_raw_attr(const table *t);

/* A table's SQL name may have 64 characters, as in DataJoint (MariaDB's
 * limit; PostgreSQL keeps 63: ddl_dialect.max_name). The names djc derives
 * from it fit 63 on every backend. */
#define SQL_NAME_MAX 64
#define SQL_DERIVED_MAX 63
/* Append stem + suffix to b, or, when longer than SQL_DERIVED_MAX, the
 * stem cut so that stem cut + "_" + 9 digits of a hash of the whole +
 * suffix has exactly SQL_DERIVED_MAX characters. A pure function of its
 * arguments, never changed between versions. Returns 1 when shortened. */
int sql_derived_name(sb_t *b, const char *stem, const char *suffix);
/* Set t->jobs_name and t->hist_name (computed and imported tables, after
 * t->sql_name). */
void table_jobs_names(table *t);
/* t's jobs names qualified by its DataJoint schema: "~~schema__name"
 * (an adopted table of another schema whose natural one is taken). */
void table_jobs_qualify(table *t);
/* Append the name of index suffix ("next", "lease") of t's jobs table;
 * 1 when shortened. */
int table_jobs_index(sb_t *b, const table *t, const char *suffix);
/* Append the name of t's i-th index (index(...) lines), of its i-th
 * foreign key (MariaDB's own name for it, <table>_ibfk_<i+1>, when that
 * fits); 1 when shortened (a foreign key is then named in the DDL). */
int table_index_name(sb_t *b, const table *t, size_t i);
int table_fk_name(sb_t *b, const table *t, size_t i);
/* A shortened derived name that tables a and b share (into buf), or NULL. */
const char *table_names_clash(const table *a, const table *b, char *buf, size_t n);

/* Check and convert a value for attribute a (a user's input) into the value
 * bound for the database. On error returns DJC_EINVAL with a message. */
int value_in(const attr *a, const val_t *in, val_t *out, char **msg);
/* value_in, a bytes value moved from in to *out rather than copied (in is
 * then null; a large value a make wrote); any other value as value_in
 * checks it, in unchanged. */
int value_in_take(const attr *a, val_t *in, val_t *out, char **msg);
/* value_in for a value a restriction compares a's column with (JSON,
 * condition text, lists), which is never written: checked as value_in
 * checks it, but as the servers (and DataJoint) compare: a float32's
 * value is the double given, not rounded to float32 (the column's float32
 * is compared widened to a double: 0.1 equals no float32); a datetime may
 * have more fractional digits than the type keeps (kept: equal to none of
 * the column's values, ordered exactly). */
int value_cmp(const attr *a, const val_t *in, val_t *out, char **msg);
/* The form a value as read (value_out's, or a checked one: value_in's) is
 * bound in to compare with a's column: a uuid `as binary(16)` as its 16
 * bytes, anything else as it is (copied). For keys that come back from a
 * table (a jobs table's) and go to the database again. */
void value_stored(const attr *a, const val_t *v, val_t *out);
/* Convert a database cell into the attribute's typed value. */
int value_out(const attr *a, const val_t *cell, val_t *out);
/* value_out, taking the cell where it can (a bytes value moves, no copy;
 * the cell is left NULL): for a result read once. */
int value_out_take(const attr *a, val_t *cell, val_t *out);

/* Decode a JSON value for attribute a (bytes from base64, json as text). */
int value_from_json(const attr *a, json_t *j, val_t *out, char **msg);
/* value_from_json for a restriction's value: value_cmp's checks. */
int value_cmp_json(const attr *a, json_t *j, val_t *out, char **msg);
/* Append the JSON text of a typed value of attribute a (NULL a: untyped). */
void value_to_json(sb_t *b, const attr *a, const val_t *v);
void json_quote(sb_t *b, const char *s, size_t n);
/* Quoted text at s (s[0] is its quote, ' or "; a backslash before that
 * quote keeps it, other backslashes are the text's own, as DataJoint's
 * condition text is written): the index of the closing quote, or 0 when
 * it does not close within n bytes or before a NUL. The text inside,
 * unescaped, is appended to out (NULL: not wanted). */
size_t quoted_text(const char *s, size_t n, sb_t *out);
/* JSON text s with each text in Python's single quotes outside its JSON
 * strings made a JSON string ('rig = "r1"' -> "rig = \"r1\""; a backslash
 * before the quote keeps it, other backslashes are the text's own), as
 * DataJoint writes condition text in a list ([{"a": 1}, 'b > 2']),
 * appended to b. one: only the balanced {...} or [...] s starts with. The
 * bytes of s read; *open: 0, or what was left open at the end (the quote
 * ' or ", or '[' for a bracket). */
size_t json_single_quotes(sb_t *b, const char *s, int one, char *open);

/* A row of t (object text or jansson object) checked against the heading:
 * every attribute known, every value valid. Missing attributes stay
 * missing (callers fill defaults/keys). */
int row_from_json_obj(const table *t, json_t *obj, djc_row **out, char **msg);
/* JSON object text of a typed row of t, attributes in heading order. */
void row_to_json(sb_t *b, const table *t, const djc_row *r);
/* {"a": 1, ...} for the key attributes only (for messages). */
char *key_to_json(const table *t, const djc_row *r, int source_only);

/* --------------------------------------- a table's auxiliary tables (names.c) */

/* The SQL names of the auxiliary tables that belong to t and live and die
 * with it (its jobs table, ...), at most max of them; returns how many.
 * Declare creates them through the jobs layer, drop drops them: this is the
 * one list both go by. The names are owned by t. */
size_t table_aux_tables(const table *t, const char **names, size_t max);
#define TABLE_AUX_MAX 8

#endif
