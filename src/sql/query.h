/* query.h - the one builder of statements over users' tables: SELECT
 * (fetch, key sources, counts), INSERT and DELETE. A caller builds a
 * small tree of nodes (a query: what it reads FROM, a WHERE of condition
 * nodes, a select list, ORDER BY / LIMIT / OFFSET) and renders it to SQL
 * text with `?` placeholders plus the list of bound values; identifiers
 * go through the driver's quoting (db_qi, db_qtable) and a long list of
 * values through its in_rows. Nothing here knows tables' definitions: the
 * table layer (rows.c) turns restrictions and key sources into nodes.
 *
 * Nodes live in an arena (q_arena) and are freed with it; a tree is not
 * changed by rendering and may be rendered more than once (the bound
 * values are copied into the parameter list). Strings handed to the
 * builders (table and column names, aliases) are borrowed: they must
 * outlive the rendering (q_strdup keeps a copy in the arena). */
#ifndef DJC_SQL_QUERY_H
#define DJC_SQL_QUERY_H
#include "db/db.h"

/* A growable parameter vector (the bound values of a statement). */
typedef struct pvec {
	val_t *v;
	size_t n, cap;
} pvec;
void pvec_push(pvec *p, val_t v);   /* takes v */
void pvec_free(pvec *p);

/* Where the nodes of one statement live. Zero-initialise; free once. */
typedef struct q_arena {
	void **blocks;
	size_t n, cap;
	val_t **vals;        /* value blocks: freed with val_free */
	size_t *nvals;
	size_t nv, capv;
	void **own;          /* objects freed with the arena, each by its own function */
	void (**own_free)(void *);
	size_t nown, capown;
} q_arena;
#define Q_ARENA_INIT {0}
void q_arena_free(q_arena *a);
void *q_alloc(q_arena *a, size_t size);   /* zeroed, freed with the arena */
char *q_strdup(q_arena *a, const char *s);
/* Free p with fr when a is freed (an object whose strings a tree borrows). */
void q_arena_own(q_arena *a, void *p, void (*fr)(void *));
char *q_printf(q_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A column: name, qualified by a derived table's or a FROM item's alias
 * (an identifier the builder chose: "ks", "d3"), or by a table itself
 * (its unquoted name: written with db_qtable, for a statement whose
 * target has no alias, as DELETE's), or neither. */
typedef struct q_col {
	const char *alias;
	const char *table;
	const char *name;
} q_col;

typedef struct q_node q_node;
typedef struct q_sel q_sel;

/* ------------------------------------------------------------ conditions */

typedef enum q_kind {
	Q_TRUE, Q_FALSE,
	Q_CMP,      /* col op ?           */
	Q_NULL,     /* col IS [NOT] NULL  */
	Q_SAME,     /* col = col          */
	Q_IN,       /* (cols) [NOT] IN (rows of values) */
	Q_AND, Q_OR, Q_NOT,
	Q_EXISTS    /* [NOT] EXISTS (query): semijoin / antijoin */
} q_kind;

struct q_node {
	q_kind k;
	int neg;                /* Q_NULL, Q_IN, Q_EXISTS: the negated form */
	const char *op;         /* Q_CMP: one of = != < <= > >= LIKE, NOT LIKE */
	q_col a, b;             /* Q_CMP, Q_NULL: a; Q_SAME: a = b */
	const q_col *cols;      /* Q_IN: k columns, their types */
	const coldef *const *types;
	size_t k_cols;
	const val_t *v;         /* Q_CMP: one value; Q_IN: n rows of k_cols values, row-major */
	size_t n;
	q_node **kids;          /* Q_AND, Q_OR, Q_NOT (one) */
	size_t nkids, capkids;
	const q_sel *sub;       /* Q_EXISTS */
	/* > 0: the values this subtree binds one by one (not as the driver's
	 * one list parameter) may be at most this many; more fails the
	 * rendering (q_out.over says how many) */
	size_t bound_max;
	/* Q_IN: bound value by value whatever its length (rows each found by
	 * an index, as a primary key's) */
	int by_value;
};

q_node *q_true(q_arena *a);
q_node *q_false(q_arena *a);
q_node *q_cmp(q_arena *a, q_col c, const char *op, val_t v);   /* takes v */
/* q_cmp of a column of type t (borrowed): a decimal's <, <=, >, >= compare
 * numbers on every backend (db_decimal_order_cast). */
q_node *q_cmp_t(q_arena *a, q_col c, const char *op, val_t v, const coldef *t);
q_node *q_null(q_arena *a, q_col c, int neg);
q_node *q_same(q_arena *a, q_col x, q_col y);
/* cols[0..k) with their types (borrowed); vals: n * k values, row-major,
 * none NULL (taken: the arena frees them). One column's list of up to a
 * hundred values is bound value by value (a decimal's as ORed equalities,
 * which every backend compares exactly); a longer list, or several
 * columns, is bound as the driver's one parameter where it can, else
 * value by value (several columns: ORed equalities of whole rows). */
#define Q_IN_BIND_MAX 100
q_node *q_in(q_arena *a, const q_col *cols, const coldef *const *types, size_t k, val_t *vals, size_t n, int neg);
q_node *q_and(q_arena *a);   /* empty: true */
q_node *q_or(q_arena *a);    /* empty: false */
q_node *q_not(q_arena *a, q_node *x);
q_node *q_exists(q_arena *a, const q_sel *sub, int neg);
/* Append kid to an AND or OR node. */
void q_add(q_arena *a, q_node *list, q_node *kid);

/* ---------------------------------------------------------------- queries */

typedef enum q_item_kind {
	QI_COL,       /* col [AS as] */
	QI_STAR,      /* every column of the FROM */
	QI_ONE,       /* the constant 1 (an EXISTS, a probe) */
	QI_COUNT,     /* the number of rows */
	QI_COUNT_IF,  /* the number of rows for which cond holds (0 for none) */
	QI_AGG,       /* agg(col) [AS as]: one of count sum avg min max, count(DISTINCT col) (the algebra's aggr) */
	QI_NULL,      /* NULL AS as (the missing side of the algebra's union) */
	QI_UPTO,      /* col AS as where col holds at most upto bytes or is stored compressed
	               * (db_stored_size), else NULL (a bytes value read in pieces: rows.c) */
	QI_OCTETS,    /* OCTET_LENGTH(col) AS as: a bytes value's length */
	QI_VERSIONS   /* the row versions col of the rows, as decimal text joined by
	               * commas in the order of the item's columns ('' for none), AS
	               * as: an aggregate (PostgreSQL's string_agg; asked only of a
	               * backend with row versions, db_row_version) */
} q_item_kind;

typedef struct q_item {
	q_item_kind kind;
	q_col col;
	const char *as;
	const q_node *cond;
	const char *agg;   /* QI_AGG: "count", "sum", "avg", "min" or "max" */
	size_t upto;       /* QI_UPTO */
	const q_col *ord;  /* QI_VERSIONS: the order of the versions */
	size_t nord;
	const coldef *type;   /* QI_AGG: the aggregated column's type (borrowed), or NULL */
} q_item;

/* One operand of the FROM: a table (unquoted name) or a query, with an
 * alias, joined to the operands before it on `on` (inner, or left). */
typedef struct q_from {
	const char *table;
	const q_sel *sub;
	const char *alias;
	int left;
	q_node *on;
} q_from;

struct q_sel {
	int distinct;
	q_item *items;
	size_t nitems, capitems;
	q_from *from;
	size_t nfrom, capfrom;
	q_node *where;       /* an AND node */
	q_col *order;
	size_t norder, caporder;
	long limit, offset;  /* < 0: none */
	unsigned char *desc;   /* per ORDER BY column: 1 for descending (q_order_desc); NULL: none */
	q_col *group;          /* GROUP BY columns */
	size_t ngroup, capgroup;
	const q_sel *union_all;   /* this query UNION ALL that one (which may have its own); the
	                           * queries without ORDER BY / LIMIT, same items */
};

q_sel *q_select(q_arena *a);
/* FROM operands: the first is the query's source, each later one a join
 * whose condition is the returned AND node (empty: a cross product). */
q_node *q_from_table(q_arena *a, q_sel *s, const char *table, const char *alias, int left);
q_node *q_from_query(q_arena *a, q_sel *s, const q_sel *sub, const char *alias, int left);
void q_col_item(q_arena *a, q_sel *s, q_col c, const char *as);
void q_item_add(q_arena *a, q_sel *s, q_item_kind kind, const q_node *cond);
/* AND cond into the query's WHERE. */
void q_where(q_arena *a, q_sel *s, q_node *cond);
void q_order(q_arena *a, q_sel *s, q_col c);
/* ORDER BY c, descending when desc. */
void q_order_desc(q_arena *a, q_sel *s, q_col c, int desc);
/* agg(c) AS as (agg one of count sum avg min max, or "count distinct":
 * count(DISTINCT c); c.name NULL with count:
 * count(*)). t: c's type (borrowed), or NULL: sum, avg, min and max of a
 * bool are of it as a number where the backend's bool is no number
 * (db_bool_agg_cast). */
void q_agg_item(q_arena *a, q_sel *s, const char *agg, q_col c, const char *as, const coldef *t);
/* c AS as where c holds at most upto bytes or is stored compressed, else
 * NULL; OCTET_LENGTH(c) AS as (bytes values). */
void q_upto_item(q_arena *a, q_sel *s, q_col c, size_t upto, const char *as);
void q_octets_item(q_arena *a, q_sel *s, q_col c, const char *as);
/* The versions of the rows in c (a row version column, db_row_version), in
 * the order of ord[0..nord) (copied), as QI_VERSIONS says. */
void q_versions_item(q_arena *a, q_sel *s, q_col c, const q_col *ord, size_t nord, const char *as);
/* GROUP BY c (after the ones before). */
void q_group(q_arena *a, q_sel *s, q_col c);

/* ---------------------------------------------------------------- render */

/* What a rendering appends to: SQL text and its bound values. over: set
 * when a bound_max was exceeded (how many values that subtree bound). */
typedef struct q_out {
	sb_t *sql;
	pvec *p;
	size_t over;
} q_out;

/* Each returns DJC_OK, or DJC_EINVAL with o->over set (bound_max). */
int q_cond_sql(db_conn *db, const q_node *x, q_out *o);
/* " AND (cond)": for a caller that writes the rest of a WHERE itself
 * (the jobs statements' expander). */
int q_and_sql(db_conn *db, const q_node *x, q_out *o);
int q_select_sql(db_conn *db, const q_sel *s, q_out *o);
/* A check: SELECT 1 / (1 when the one value query s returns equals want,
 * else 0), so that it fails with division by zero inside the transaction
 * when they differ (takes want). */
int q_check_sql(db_conn *db, const q_sel *s, val_t want, q_out *o);
/* DELETE FROM table WHERE where (columns of table qualified by its name):
 * the multiple-table form of db_delete_head (MariaDB) unless a subquery of
 * where reads table itself. */
int q_delete_sql(db_conn *db, const char *table, const q_node *where, q_out *o);
/* Whether condition x reads table (unquoted name, as q_from_table takes
 * it) in a subquery. */
int q_cond_reads(const q_node *x, const char *table);

/* INSERT of nrows rows into table's cols; vals: nrows * ncols pointers
 * (NULL: SQL NULL), copied into the parameters. ignore: skip rows whose
 * key is stored (the driver's INSERT-or-ignore). */
typedef struct q_insert {
	const char *table;
	const char *const *cols;
	size_t ncols;
	const val_t *const *vals;
	size_t nrows;
	int ignore;
} q_insert;
void q_insert_sql(db_conn *db, const q_insert *ins, q_out *o);

#endif
