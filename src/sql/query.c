/* query.c - build and render statements over users' tables (query.h). */
#include "query.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Above this many values (Q_IN_BIND_MAX), a list goes to the database as
 * the driver's one parameter where it can (db_in_rows), whatever its
 * length. */
#define IN_BIND_MAX Q_IN_BIND_MAX

void pvec_push(pvec *p, val_t v)
{
	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->v = xrealloc(p->v, p->cap * sizeof(val_t));
	}
	p->v[p->n++] = v;
}

void pvec_free(pvec *p)
{
	for (size_t i = 0; i < p->n; i++) val_free(&p->v[i]);
	free(p->v);
	memset(p, 0, sizeof *p);
}

/* ----------------------------------------------------------------- arena */

void *q_alloc(q_arena *a, size_t size)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 16;
		a->blocks = xrealloc(a->blocks, a->cap * sizeof(void *));
	}
	return a->blocks[a->n++] = xcalloc(1, size ? size : 1);
}

/* Grow an array of the arena (*arr holding n of cap items of size sz) to
 * room for one more: the old block stays in the arena until it is freed. */
static void q_grow(q_arena *a, void *arr, size_t n, size_t *cap, size_t sz)
{
	void **p = arr;
	if (n < *cap) return;
	size_t nc = *cap ? *cap * 2 : 4;
	void *b = q_alloc(a, nc * sz);
	if (n) memcpy(b, *p, n * sz);
	*p = b;
	*cap = nc;
}

void q_arena_own(q_arena *a, void *p, void (*fr)(void *))
{
	if (a->nown == a->capown) {
		a->capown = a->capown ? a->capown * 2 : 4;
		a->own = xrealloc(a->own, a->capown * sizeof *a->own);
		a->own_free = xrealloc(a->own_free, a->capown * sizeof *a->own_free);
	}
	a->own[a->nown] = p;
	a->own_free[a->nown++] = fr;
}

void q_arena_free(q_arena *a)
{
	for (size_t i = a->nown; i-- > 0;) a->own_free[i](a->own[i]);
	free(a->own);
	free(a->own_free);
	for (size_t i = 0; i < a->nv; i++)
		for (size_t k = 0; k < a->nvals[i]; k++) val_free(&a->vals[i][k]);
	for (size_t i = 0; i < a->n; i++) free(a->blocks[i]);
	free(a->blocks);
	free(a->vals);
	free(a->nvals);
	memset(a, 0, sizeof *a);
}

/* Keep n values (their block from q_alloc) to be val_free'd with a. */
static void q_own_vals(q_arena *a, val_t *v, size_t n)
{
	if (a->nv == a->capv) {
		a->capv = a->capv ? a->capv * 2 : 8;
		a->vals = xrealloc(a->vals, a->capv * sizeof *a->vals);
		a->nvals = xrealloc(a->nvals, a->capv * sizeof *a->nvals);
	}
	a->vals[a->nv] = v;
	a->nvals[a->nv++] = n;
}

char *q_strdup(q_arena *a, const char *s)
{
	size_t n = strlen(s);
	char *d = q_alloc(a, n + 1);
	memcpy(d, s, n);
	return d;
}

char *q_printf(q_arena *a, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return q_strdup(a, buf);
}

/* ------------------------------------------------------------ conditions */

static q_node *node(q_arena *a, q_kind k)
{
	q_node *x = q_alloc(a, sizeof *x);
	x->k = k;
	return x;
}

q_node *q_true(q_arena *a) { return node(a, Q_TRUE); }
q_node *q_false(q_arena *a) { return node(a, Q_FALSE); }

q_node *q_cmp_t(q_arena *a, q_col c, const char *op, val_t v, const coldef *t)
{
	q_node *x = q_cmp(a, c, op, v);
	const coldef **ts = q_alloc(a, sizeof *ts);
	ts[0] = t;
	x->types = ts;
	return x;
}
q_node *q_and(q_arena *a) { return node(a, Q_AND); }
q_node *q_or(q_arena *a) { return node(a, Q_OR); }

q_node *q_cmp(q_arena *a, q_col c, const char *op, val_t v)
{
	q_node *x = node(a, Q_CMP);
	val_t *keep = q_alloc(a, sizeof *keep);
	*keep = v;
	q_own_vals(a, keep, 1);
	x->a = c;
	x->op = op;
	x->v = keep;
	return x;
}

q_node *q_null(q_arena *a, q_col c, int neg)
{
	q_node *x = node(a, Q_NULL);
	x->a = c;
	x->neg = neg;
	return x;
}

q_node *q_same(q_arena *a, q_col c1, q_col c2)
{
	q_node *x = node(a, Q_SAME);
	x->a = c1;
	x->b = c2;
	return x;
}

q_node *q_in(q_arena *a, const q_col *cols, const coldef *const *types, size_t k, val_t *vals, size_t n, int neg)
{
	q_node *x = node(a, Q_IN);
	q_col *cs = q_alloc(a, k * sizeof *cs);
	const coldef **ts = q_alloc(a, k * sizeof *ts);
	memcpy(cs, cols, k * sizeof *cs);
	memcpy(ts, types, k * sizeof *ts);
	val_t *vs = q_alloc(a, n * k * sizeof *vs);
	if (n && k) memcpy(vs, vals, n * k * sizeof *vs);
	q_own_vals(a, vs, n * k);
	x->cols = cs;
	x->types = ts;
	x->k_cols = k;
	x->v = vs;
	x->n = n;
	x->neg = neg;
	return x;
}

void q_add(q_arena *a, q_node *list, q_node *kid)
{
	q_grow(a, &list->kids, list->nkids, &list->capkids, sizeof(q_node *));
	list->kids[list->nkids++] = kid;
}

q_node *q_not(q_arena *a, q_node *x)
{
	q_node *n = node(a, Q_NOT);
	q_add(a, n, x);
	return n;
}

q_node *q_exists(q_arena *a, const q_sel *sub, int neg)
{
	q_node *x = node(a, Q_EXISTS);
	x->sub = sub;
	x->neg = neg;
	return x;
}

/* ---------------------------------------------------------------- queries */

q_sel *q_select(q_arena *a)
{
	q_sel *s = q_alloc(a, sizeof *s);
	s->where = q_and(a);
	s->limit = s->offset = -1;
	return s;
}

static q_node *from_add(q_arena *a, q_sel *s, q_from f)
{
	q_grow(a, &s->from, s->nfrom, &s->capfrom, sizeof *s->from);
	f.on = q_and(a);
	s->from[s->nfrom++] = f;
	return f.on;
}

q_node *q_from_table(q_arena *a, q_sel *s, const char *table, const char *alias, int left)
{
	return from_add(a, s, (q_from){table, NULL, alias, left, NULL});
}

q_node *q_from_query(q_arena *a, q_sel *s, const q_sel *sub, const char *alias, int left)
{
	return from_add(a, s, (q_from){NULL, sub, alias, left, NULL});
}

void q_col_item(q_arena *a, q_sel *s, q_col c, const char *as)
{
	q_grow(a, &s->items, s->nitems, &s->capitems, sizeof *s->items);
	s->items[s->nitems++] = (q_item){QI_COL, c, as, NULL, NULL, 0, NULL, 0, NULL};
}

void q_item_add(q_arena *a, q_sel *s, q_item_kind kind, const q_node *cond)
{
	q_grow(a, &s->items, s->nitems, &s->capitems, sizeof *s->items);
	s->items[s->nitems++] = (q_item){kind, {NULL, NULL, NULL}, NULL, cond, NULL, 0, NULL, 0, NULL};
}

void q_agg_item(q_arena *a, q_sel *s, const char *agg, q_col c, const char *as, const coldef *t)
{
	static const char *const fns[] = {"count", "sum", "avg", "min", "max", "count distinct", NULL};
	const char *fn = NULL;
	for (int i = 0; fns[i]; i++)
		if (!strcmp(agg, fns[i])) fn = fns[i];   /* only these reach the SQL text */
	if (!fn) abort();
	q_grow(a, &s->items, s->nitems, &s->capitems, sizeof *s->items);
	s->items[s->nitems++] = (q_item){QI_AGG, c, as, NULL, fn, 0, NULL, 0, t};
}

void q_upto_item(q_arena *a, q_sel *s, q_col c, size_t upto, const char *as)
{
	q_grow(a, &s->items, s->nitems, &s->capitems, sizeof *s->items);
	s->items[s->nitems++] = (q_item){QI_UPTO, c, as, NULL, NULL, upto, NULL, 0, NULL};
}

void q_octets_item(q_arena *a, q_sel *s, q_col c, const char *as)
{
	q_grow(a, &s->items, s->nitems, &s->capitems, sizeof *s->items);
	s->items[s->nitems++] = (q_item){QI_OCTETS, c, as, NULL, NULL, 0, NULL, 0, NULL};
}

void q_versions_item(q_arena *a, q_sel *s, q_col c, const q_col *ord, size_t nord, const char *as)
{
	q_col *o = q_alloc(a, (nord ? nord : 1) * sizeof *o);
	memcpy(o, ord, nord * sizeof *o);
	q_grow(a, &s->items, s->nitems, &s->capitems, sizeof *s->items);
	s->items[s->nitems++] = (q_item){QI_VERSIONS, c, as, NULL, NULL, 0, o, nord, NULL};
}

void q_group(q_arena *a, q_sel *s, q_col c)
{
	q_grow(a, &s->group, s->ngroup, &s->capgroup, sizeof *s->group);
	s->group[s->ngroup++] = c;
}

void q_where(q_arena *a, q_sel *s, q_node *cond) { q_add(a, s->where, cond); }

void q_order(q_arena *a, q_sel *s, q_col c)
{
	q_order_desc(a, s, c, 0);
}

void q_order_desc(q_arena *a, q_sel *s, q_col c, int desc)
{
	size_t cap = s->caporder;
	q_grow(a, &s->order, s->norder, &s->caporder, sizeof *s->order);
	if (cap != s->caporder || !s->desc) {   /* the flags grow with the columns */
		unsigned char *d = q_alloc(a, s->caporder);
		if (s->desc && s->norder) memcpy(d, s->desc, s->norder);
		s->desc = d;
	}
	s->desc[s->norder] = desc != 0;
	s->order[s->norder++] = c;
}

/* ---------------------------------------------------------------- render */

static void col_sql(db_conn *db, sb_t *b, const q_col *c)
{
	if (c->table) {
		db_qtable(db, b, c->table);
		sb_addc(b, '.');
	} else if (c->alias) {
		sb_add(b, c->alias);
		sb_addc(b, '.');
	}
	db_qi(db, b, c->name);
}

static void bind(q_out *o, const val_t *v)
{
	val_t x;
	if (v) val_copy(&x, v);
	else x = val_null();
	pvec_push(o->p, x);
}

/* One column's short list: "col [NOT] IN (?, ...)", or for a decimal
 * ORed equalities (ANDed inequalities): MariaDB compares a decimal column
 * with a list of text values as doubles, an equality exactly. */
static void in_one_by_one(db_conn *db, const q_node *x, q_out *o)
{
	sb_t cs = SB_INIT;
	col_sql(db, &cs, &x->cols[0]);
	int eqs = x->types[0]->t == T_DECIMAL;
	if (eqs) sb_addc(o->sql, '(');
	else sb_printf(o->sql, "%s%s", sb_str(&cs), x->neg ? " NOT IN (" : " IN (");
	for (size_t r = 0; r < x->n; r++) {
		if (eqs) sb_printf(o->sql, "%s%s %s ?", r ? (x->neg ? " AND " : " OR ") : "", sb_str(&cs), x->neg ? "<>" : "=");
		else sb_add(o->sql, r ? ", ?" : "?");
		bind(o, &x->v[r]);
	}
	sb_addc(o->sql, ')');
	sb_free(&cs);
}

/* Several columns' rows value by value: (a = ? AND b = ?) OR ... */
static void in_rows_by_value(db_conn *db, const q_node *x, q_out *o)
{
	if (x->neg) sb_add(o->sql, "NOT ");
	sb_addc(o->sql, '(');
	for (size_t r = 0; r < x->n; r++) {
		sb_add(o->sql, r ? " OR (" : "(");
		for (size_t j = 0; j < x->k_cols; j++) {
			if (j) sb_add(o->sql, " AND ");
			col_sql(db, o->sql, &x->cols[j]);
			sb_add(o->sql, " = ?");
			bind(o, &x->v[r * x->k_cols + j]);
		}
		sb_addc(o->sql, ')');
	}
	sb_addc(o->sql, ')');
}

static void in_sql(db_conn *db, const q_node *x, q_out *o)
{
	if (!x->n) { sb_add(o->sql, x->neg ? "1=1" : "1=0"); return; }
	if (!x->by_value && (x->n > IN_BIND_MAX || x->k_cols > 1)) {
		sb_t cs[8];
		const char *cols[8];
		size_t k = x->k_cols <= 8 ? x->k_cols : 0;
		for (size_t j = 0; j < k; j++) {
			sb_t z = SB_INIT;
			cs[j] = z;
			col_sql(db, &cs[j], &x->cols[j]);
			cols[j] = sb_str(&cs[j]);
		}
		db_in in = {cols, x->types, k, x->v, x->n, x->neg};
		val_t one[8];
		size_t nb = 0;
		int done = k && db_in_rows(db, &in, o->sql, one, &nb);
		for (size_t i = 0; i < nb; i++) pvec_push(o->p, one[i]);
		for (size_t j = 0; j < k; j++) sb_free(&cs[j]);
		if (done) return;
	}
	if (x->k_cols == 1) in_one_by_one(db, x, o);
	else in_rows_by_value(db, x, o);
}

static int list_sql(db_conn *db, const q_node *x, q_out *o)
{
	const char *sep = x->k == Q_AND ? " AND " : " OR ";
	if (!x->nkids) { sb_add(o->sql, x->k == Q_AND ? "1=1" : "1=0"); return DJC_OK; }
	if (x->nkids == 1) return q_cond_sql(db, x->kids[0], o);
	sb_addc(o->sql, '(');
	for (size_t i = 0; i < x->nkids; i++) {
		if (i) sb_add(o->sql, sep);
		int rc = q_cond_sql(db, x->kids[i], o);
		if (rc) return rc;
	}
	sb_addc(o->sql, ')');
	return DJC_OK;
}

/* col op ?; a decimal ordered where decimals are text: both sides CAST. */
static void cmp_sql(db_conn *db, const q_node *x, q_out *o)
{
	const char *cast = x->types && x->types[0]->t == T_DECIMAL && strchr("<>", x->op[0]) ? db_decimal_order_cast(db) : NULL;
	const char *like = x->types && x->types[0]->t == T_ENUM && strstr(x->op, "LIKE") ? db_enum_like_cast(db) : NULL;
	if (cast || like) sb_add(o->sql, "CAST(");
	col_sql(db, o->sql, &x->a);
	if (cast) sb_printf(o->sql, " AS %s) %s CAST(? AS %s)", cast, x->op, cast);
	else if (like) sb_printf(o->sql, " AS %s) %s ?", like, x->op);
	else sb_printf(o->sql, " %s ?", x->op);
	bind(o, x->v);
}

static int cond_sql(db_conn *db, const q_node *x, q_out *o)
{
	switch (x->k) {
	case Q_TRUE: sb_add(o->sql, "1=1"); return DJC_OK;
	case Q_FALSE: sb_add(o->sql, "1=0"); return DJC_OK;
	case Q_CMP: cmp_sql(db, x, o); return DJC_OK;
	case Q_NULL:
		col_sql(db, o->sql, &x->a);
		sb_add(o->sql, x->neg ? " IS NOT NULL" : " IS NULL");
		return DJC_OK;
	case Q_SAME:
		col_sql(db, o->sql, &x->a);
		sb_add(o->sql, " = ");
		col_sql(db, o->sql, &x->b);
		return DJC_OK;
	case Q_IN: in_sql(db, x, o); return DJC_OK;
	case Q_AND: case Q_OR: return list_sql(db, x, o);
	case Q_NOT: {
		sb_add(o->sql, "NOT (");
		int rc = q_cond_sql(db, x->kids[0], o);
		sb_addc(o->sql, ')');
		return rc;
	}
	case Q_EXISTS: {
		sb_add(o->sql, x->neg ? "NOT EXISTS (" : "EXISTS (");
		int rc = q_select_sql(db, x->sub, o);
		sb_addc(o->sql, ')');
		return rc;
	}
	}
	return DJC_OK;
}

int q_cond_sql(db_conn *db, const q_node *x, q_out *o)
{
	size_t before = o->p->n;
	int rc = cond_sql(db, x, o);
	if (!rc && x->bound_max && o->p->n - before > x->bound_max) {
		o->over = o->p->n - before;
		rc = DJC_EINVAL;
	}
	return rc;
}

int q_and_sql(db_conn *db, const q_node *x, q_out *o)
{
	sb_add(o->sql, " AND (");
	int rc = q_cond_sql(db, x, o);
	sb_addc(o->sql, ')');
	return rc;
}

static int items_sql(db_conn *db, const q_sel *s, q_out *o)
{
	sb_add(o->sql, s->distinct ? "SELECT DISTINCT " : "SELECT ");
	if (!s->nitems) sb_addc(o->sql, '*');
	for (size_t i = 0; i < s->nitems; i++) {
		const q_item *it = &s->items[i];
		if (i) sb_add(o->sql, ", ");
		switch (it->kind) {
		case QI_COL:
			col_sql(db, o->sql, &it->col);
			if (it->as) { sb_add(o->sql, " AS "); db_qi(db, o->sql, it->as); }
			break;
		case QI_NULL:
			sb_add(o->sql, "NULL AS ");
			db_qi(db, o->sql, it->as);
			break;
		case QI_UPTO:
			sb_add(o->sql, "CASE WHEN OCTET_LENGTH(");
			col_sql(db, o->sql, &it->col);
			sb_printf(o->sql, ") > %zu", it->upto);
			if (db_stored_size(db)) {
				/* a compressed value: whole, here */
				sb_printf(o->sql, " AND %s(", db_stored_size(db));
				col_sql(db, o->sql, &it->col);
				sb_add(o->sql, ") >= OCTET_LENGTH(");
				col_sql(db, o->sql, &it->col);
				sb_addc(o->sql, ')');
			}
			sb_add(o->sql, " THEN NULL ELSE ");
			col_sql(db, o->sql, &it->col);
			sb_add(o->sql, " END AS ");
			db_qi(db, o->sql, it->as);
			break;
		case QI_OCTETS:
			sb_add(o->sql, "OCTET_LENGTH(");
			col_sql(db, o->sql, &it->col);
			sb_add(o->sql, ") AS ");
			db_qi(db, o->sql, it->as);
			break;
		case QI_VERSIONS:
			sb_add(o->sql, "coalesce(string_agg(CAST(");
			col_sql(db, o->sql, &it->col);
			sb_add(o->sql, " AS text), ','");
			for (size_t k = 0; k < it->nord; k++) {
				sb_add(o->sql, k ? ", " : " ORDER BY ");
				col_sql(db, o->sql, &it->ord[k]);
			}
			sb_add(o->sql, "), '') AS ");
			db_qi(db, o->sql, it->as);
			break;
		case QI_STAR: sb_addc(o->sql, '*'); break;
		case QI_ONE: sb_addc(o->sql, '1'); break;
		case QI_COUNT: sb_add(o->sql, "count(*)"); break;
		case QI_AGG:
		{
			const char *num = it->type && it->type->t == T_BOOL && strncmp(it->agg, "count", 5) ? db_bool_agg_cast(db) : NULL;
			if (!strcmp(it->agg, "count distinct")) sb_add(o->sql, "count(DISTINCT ");
			else sb_printf(o->sql, "%s(", it->agg);
			if (num && it->col.name) sb_add(o->sql, "CAST(");
			if (it->col.name) col_sql(db, o->sql, &it->col);
			else sb_addc(o->sql, '*');
			if (num && it->col.name) sb_printf(o->sql, " AS %s)", num);
			sb_addc(o->sql, ')');
			if (it->as) { sb_add(o->sql, " AS "); db_qi(db, o->sql, it->as); }
			break;
		}
		case QI_COUNT_IF: {
			sb_add(o->sql, "coalesce(sum(CASE WHEN ");
			int rc = q_cond_sql(db, it->cond, o);
			if (rc) return rc;
			sb_add(o->sql, " THEN 1 ELSE 0 END), 0)");
			break;
		}
		}
	}
	return DJC_OK;
}

static int from_sql(db_conn *db, const q_sel *s, q_out *o)
{
	for (size_t i = 0; i < s->nfrom; i++) {
		const q_from *f = &s->from[i];
		sb_add(o->sql, !i ? " FROM " : f->left ? " LEFT JOIN " : " JOIN ");
		if (f->sub) {
			sb_addc(o->sql, '(');
			int rc = q_select_sql(db, f->sub, o);
			if (rc) return rc;
			sb_addc(o->sql, ')');
		} else
			db_qtable(db, o->sql, f->table);
		if (f->alias) sb_printf(o->sql, " %s", f->alias);
		if (i) {
			sb_add(o->sql, " ON ");
			int rc = q_cond_sql(db, f->on, o);
			if (rc) return rc;
		}
	}
	return DJC_OK;
}

int q_select_sql(db_conn *db, const q_sel *s, q_out *o)
{
	int rc = items_sql(db, s, o);
	if (!rc) rc = from_sql(db, s, o);
	if (!rc && s->where->nkids) {
		sb_add(o->sql, " WHERE ");
		rc = q_cond_sql(db, s->where, o);
	}
	if (rc) return rc;
	for (size_t i = 0; i < s->ngroup; i++) {
		sb_add(o->sql, i ? ", " : " GROUP BY ");
		col_sql(db, o->sql, &s->group[i]);
	}
	for (size_t i = 0; i < s->norder; i++) {
		sb_add(o->sql, i ? ", " : " ORDER BY ");
		col_sql(db, o->sql, &s->order[i]);
		if (s->desc && s->desc[i]) sb_add(o->sql, " DESC");
	}
	if (s->limit >= 0) sb_printf(o->sql, " LIMIT %ld", s->limit);
	if (s->offset >= 0) sb_printf(o->sql, " OFFSET %ld", s->offset);
	if (s->union_all) {
		sb_add(o->sql, " UNION ALL ");
		return q_select_sql(db, s->union_all, o);
	}
	return DJC_OK;
}

int q_check_sql(db_conn *db, const q_sel *s, val_t want, q_out *o)
{
	sb_add(o->sql, "SELECT 1 / (CASE WHEN (");
	int rc = q_select_sql(db, s, o);
	if (rc) { val_free(&want); return rc; }
	sb_add(o->sql, ") = ? THEN 1 ELSE 0 END)");
	pvec_push(o->p, want);
	return DJC_OK;
}

static int sel_reads(const q_sel *s, const char *table);

int q_cond_reads(const q_node *x, const char *table)
{
	if (!x) return 0;
	if (x->k == Q_EXISTS && sel_reads(x->sub, table)) return 1;
	for (size_t i = 0; i < x->nkids; i++)
		if (q_cond_reads(x->kids[i], table)) return 1;
	return 0;
}

static int sel_reads(const q_sel *s, const char *table)
{
	for (; s; s = s->union_all) {
		for (size_t i = 0; i < s->nfrom; i++) {
			const q_from *f = &s->from[i];
			if ((f->table && !strcmp(f->table, table)) || (f->sub && sel_reads(f->sub, table)) ||
			    q_cond_reads(f->on, table))
				return 1;
		}
		for (size_t i = 0; i < s->nitems; i++)
			if (q_cond_reads(s->items[i].cond, table)) return 1;
		if (q_cond_reads(s->where, table)) return 1;
	}
	return 0;
}

int q_delete_sql(db_conn *db, const char *table, const q_node *where, q_out *o)
{
	/* the multiple-table form where the driver has one (MariaDB: a key
	 * list's IN (subquery) read once, db.h write_join), unless a subquery
	 * reads the table deleted from, which MariaDB refuses in it (error
	 * 1093) and takes in the single-table DELETE */
	if (q_cond_reads(where, table)) {
		sb_add(o->sql, "DELETE FROM ");
		db_qtable(db, o->sql, table);
	} else
		db_delete_head(db, o->sql, table);
	sb_add(o->sql, " WHERE ");
	return q_cond_sql(db, where, o);
}

void q_insert_sql(db_conn *db, const q_insert *ins, q_out *o)
{
	sb_add(o->sql, ins->ignore ? db_insert_ignore_head(db) : "INSERT INTO");
	sb_addc(o->sql, ' ');
	db_qtable(db, o->sql, ins->table);
	sb_add(o->sql, " (");
	for (size_t i = 0; i < ins->ncols; i++) {
		if (i) sb_add(o->sql, ", ");
		db_qi(db, o->sql, ins->cols[i]);
	}
	sb_add(o->sql, ") VALUES ");
	for (size_t r = 0; r < ins->nrows; r++) {
		sb_add(o->sql, r ? ", (" : "(");
		for (size_t i = 0; i < ins->ncols; i++) {
			sb_add(o->sql, i ? ", ?" : "?");
			bind(o, ins->vals[r * ins->ncols + i]);
		}
		sb_addc(o->sql, ')');
	}
	if (ins->ignore) sb_add(o->sql, db_insert_ignore_tail(db));
}
