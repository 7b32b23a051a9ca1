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
} attr;

typedef struct fkey {
	char *parent;          /* the parent's table name */
	struct table *ptable;
	int in_key;
	char **attrs;          /* the parent's primary key attributes */
	size_t nattrs;
} fkey;

typedef struct tindex {
	int unique;
	char **attrs;
	size_t nattrs;
} tindex;

typedef struct table {
	char *name;            /* "SessionStats" or "SessionStats.Unit" */
	char *sql_name;        /* "__session_stats" */
	char *jobs_name;       /* "~~session_stats" (computed/imported only) */
	tier tier;
	struct table *master;  /* part tables */
	attr *attrs;           /* primary key attributes first */
	size_t nattrs, nkey;
	fkey *fks;
	size_t nfks;
	tindex *idx;
	size_t nidx;
	char **make_argv;      /* make = prog args... (NULL-terminated) */
	char *key_source_where;/* key_source = JSON restriction */
	double timeout;        /* timeout = 2h: seconds one make may run (0: none) */
	char *text;            /* the block as written, header included */
	char *canon;           /* canonical form, compared for idempotent declare */
	int line;              /* header line in its file */
	/* key source: the primary key attributes inherited from parents */
	size_t nsrc;
	size_t *src;           /* indexes into attrs */
	int jobs_ready;        /* jobs table known to exist (jobs_ensure ran on this connection) */
	double lapsed_check;   /* when this process last looked for lapsed reservations (monotonic s) */
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
const char *tier_name(tier t);

/* Check and convert a value for attribute a (a user's input) into the value
 * bound for the database. On error returns DJC_EINVAL with a message. */
int value_in(const attr *a, const val_t *in, val_t *out, char **msg);
/* Convert a database cell into the attribute's typed value. */
int value_out(const attr *a, const val_t *cell, val_t *out);

/* Decode a JSON value for attribute a (bytes from base64, json as text). */
int value_from_json(const attr *a, json_t *j, val_t *out, char **msg);
/* Append the JSON text of a typed value of attribute a (NULL a: untyped). */
void value_to_json(sb_t *b, const attr *a, const val_t *v);
void json_quote(sb_t *b, const char *s, size_t n);

/* A row of t (object text or jansson object) checked against the heading:
 * every attribute known, every value valid. Missing attributes stay
 * missing (callers fill defaults/keys). */
int row_from_json_obj(const table *t, json_t *obj, djc_row **out, char **msg);
/* JSON object text of a typed row of t, attributes in heading order. */
void row_to_json(sb_t *b, const table *t, const djc_row *r);
/* {"a": 1, ...} for the key attributes only (for messages). */
char *key_to_json(const table *t, const djc_row *r, int source_only);

#endif
