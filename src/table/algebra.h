/* algebra.h - DataJoint's query algebra over djc's tables (issue 39):
 * expressions (a table, join `*`, restriction `&` by a JSON restriction,
 * a condition text or another expression, anti-restriction `-`,
 * projection, aggregation) with DataJoint's headings (primary key,
 * lineage), each compiled to ONE query of sql/query.h (derived tables
 * where an operand cannot take more: a grouped one).
 *
 * An expression is immutable and reference counted: a builder takes a
 * reference to its operands (the caller keeps its own), so one expression
 * may be used in several. Builders check everything (attributes, join
 * compatibility) when they build, with the message on the connection:
 * nothing runs for a bad expression. docs/queries.md has the semantics. */
#ifndef DJC_TABLE_ALGEBRA_H
#define DJC_TABLE_ALGEBRA_H
#include "table.h"

typedef enum alg_kind {
	A_TABLE, A_JOIN, A_WHERE_JSON, A_WHERE_TEXT, A_WHERE_EXPR, A_PROJ, A_AGGR,
	A_GROUP,  /* DataJoint's dj.U(attrs).aggr(r, ...): one row per value of attrs in r */
	A_UNION,  /* l + r: same primary key, no shared secondary attribute */
	A_TOP     /* DataJoint's l & dj.Top(lim, text, off): l's first lim rows in the order text, after off */
} alg_kind;

typedef enum alg_fn { F_NONE, F_COUNT, F_SUM, F_AVG, F_MIN, F_MAX, F_COUNT_DISTINCT } alg_fn;

/* One attribute of a heading: its type and key membership (an attr, whose
 * name is the heading's name), where it comes from and its lineage (the
 * table.attribute it originates in: a primary key attribute or one
 * inherited through ->; NULL for other secondary and computed ones). */
typedef struct alg_attr {
	char *src;          /* A_PROJ: the operand's attribute renamed; A_AGGR: the function's argument (NULL: rows) */
	alg_fn fn;          /* A_AGGR: a computed attribute */
	char *lineage;
} alg_attr;

struct djc_expr {
	int refs;
	alg_kind k;
	int neg;                  /* restrictions: `-` */
	struct djc_expr *l, *r;   /* operands (r: join, restriction by an expression, aggregation's group) */
	const table *t;           /* A_TABLE */
	char *text;               /* A_WHERE_JSON, A_WHERE_TEXT; A_TOP: the order (NULL: the key) */
	long long lim, off;       /* A_TOP */
	char *repr;               /* how it reads, for messages */
	/* the heading: h.attrs/h.nattrs/h.nkey, named repr (for restrict.c's
	 * messages and checks, which take a table) */
	table h;
	alg_attr *x;              /* per attribute of h */
};

/* Compile e to a query of a: its items are e's heading in order, each
 * named after its attribute. DJC_EINVAL (message on c) when a restriction
 * in it cannot be built. */
int alg_compile(q_sel **out, q_arena *a, djc_conn *c, const djc_expr *e);

/* e's query with the ORDER BY ("a desc, b"; NULL or "": the primary key,
 * "KEY" / "KEY DESC" too), LIMIT/OFFSET (limit < 0: none) and only the
 * attributes attrs ("a,b"; NULL: all) of a fetch. */
typedef struct alg_fetch {
	const char *order_by;
	long long limit, offset;
	const char *attrs;
} alg_fetch;
int alg_query(q_sel **out, q_arena *a, djc_conn *c, const djc_expr *e, const alg_fetch *f);

/* The index of name in e's heading, or -1. */
int alg_find(const djc_expr *e, const char *name);
/* An unknown attribute of e: DJC_EINVAL "what names "x", which is not an
 * attribute of E (did you mean y? its attributes: ...)". */
int alg_unknown(djc_conn *c, const djc_expr *e, const char *what, const char *name);

/* The table whose rows e are (e a table restricted by anything), or NULL. */
const table *alg_base(const djc_expr *e);
/* The restrictions of such an e on the row of its table that ref names
 * (the DELETE's target): an AND node. */
int alg_delete_cond(q_node **out, q_arena *a, djc_conn *c, const djc_expr *e, q_col ref);

/* algebra_parse.c: the expression text of the command line (docs/queries.md). */
int alg_parse(djc_expr **out, djc_conn *c, const char *text);

/* --where EXPR (docs/queries.md, "An expression as --where"): whether the
 * restriction text is an expression rather than condition text: after any
 * '(', "U(" or a name followed by & - * + .proj( .aggr(, or a name alone
 * (or before ')') that is a declared table. */
int alg_is_expr(djc_conn *c, const char *text);
/* The restriction of t's rows (source_only: of its keys from its parents,
 * as a key source's) that ref names by the expression text: EXISTS (a row
 * of the expression equal on every attribute they share, each shared name
 * of the same lineage on both sides). ref unqualified: t's jobs table.
 * The expression lives as long as the arena. */
int alg_where_node(q_node **out, q_arena *a, djc_conn *c, const table *t, const char *text, q_col ref, int source_only);

#endif
