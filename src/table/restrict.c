/* restrict.c - restrictions and key sources as query nodes (sql/query.h).
 *
 * A restriction is JSON (README, "Restrictions"): an object of conditions
 * on attributes (AND), or a list of such objects (OR). Each condition is
 * checked strictly before any SQL is run: an operator takes exactly the
 * operand it means (a comparison one value, "in" and "not in" a list of
 * values), so that a malformed restriction is an error naming the
 * attribute, never a different set of rows. */
#include "table.h"
#include "util/near.h"
#include "cond.h"
#include "algebra.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* At most this many values of one restriction are bound one by one: within
 * every backend's limit on a statement's parameters (SQLite's default
 * 32766, PostgreSQL's and MariaDB's 65535). */
#define WHERE_BOUND_MAX 30000

/* What a restriction is being built into. */
typedef struct wctx {
	djc_conn *c;
	const table *t;
	q_col ref;           /* how the attributes' columns are qualified (name unset) */
	int source_only;     /* only key attributes from the parents */
	q_arena *a;
	const q_col *cols;   /* t->attrs[i]'s column cols[i] (a join's heading), or NULL: ref's */
} wctx;

static q_col wcol(const wctx *w, const attr *a)
{
	if (w->cols) return w->cols[a - w->t->attrs];
	q_col c = w->ref;
	c.name = a->name;
	return c;
}

/* "a list", "an object", ...: what a JSON value is, for messages. */
static const char *json_kind(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_ARRAY: return "a list";
	case JSON_OBJECT: return "an object";
	case JSON_NULL: return "null";
	case JSON_STRING: return "a string";
	case JSON_TRUE: case JSON_FALSE: return "a boolean";
	default: return "a number";
	}
}

static int is_plain(const json_t *j) { return json_is_string(j) || json_is_number(j) || json_is_boolean(j); }

/* The attribute k of the restriction, or DJC_EINVAL naming it with the
 * attributes it may name (and the nearest of them). */
static int where_attr(wctx *w, const char *k, attr **out)
{
	const table *t = w->t;
	attr *a = table_attr(t, k);
	int ok = a != NULL;
	if (ok && w->source_only) {
		ok = 0;
		for (size_t i = 0; i < t->nsrc; i++) if (&t->attrs[t->src[i]] == a) ok = 1;
	}
	*out = a;
	if (ok) return DJC_OK;
	size_t n = w->source_only ? t->nsrc : t->nattrs;
	const char **names = xcalloc(n + 1, sizeof(char *));
	sb_t b = SB_INIT, all = SB_INIT;
	for (size_t i = 0; i < n; i++) {
		names[i] = t->attrs[w->source_only ? t->src[i] : i].name;
		if (i < 30) sb_printf(&all, "%s%s", i ? ", " : "", names[i]);
		else if (i == 30) sb_printf(&all, ", ... (%zu in all)", n);
	}
	const char *near = near_name(k, names, n);
	json_quote(&b, k, strlen(k));
	int rc = conn_fail(w->c, DJC_EINVAL, "restriction names %s, which is not %s of %s (%s%s%s%s: %s)", sb_str(&b),
			   w->source_only ? "a key attribute from its parents" : "an attribute", t->name,
			   near ? "did you mean " : "", near ? near : "", near ? "? " : "",
			   w->source_only ? "its key attributes" : "its attributes", sb_str(&all));
	sb_free(&b);
	sb_free(&all);
	free(names);
	return rc;
}

/* v (a plain JSON value) as a value of a, or DJC_EINVAL. A datetime string
 * for a date attribute is taken as cond_date_of_datetime says, *after
 * set. */
static int where_value(wctx *w, const attr *a, json_t *v, val_t *out, int *after)
{
	char *msg = NULL;
	*after = 0;
	if (!value_cmp_json(a, v, out, &msg)) return DJC_OK;
	if (a->type.t == T_DATE && json_is_string(v) &&
	    !cond_date_of_datetime(a, json_string_value(v), json_string_length(v), out, after)) {
		free(msg);
		return DJC_OK;
	}
	int date = a->type.t == T_DATE && msg && strstr(msg, "is not a date YYYY-MM-DD");
	int rc = conn_fail(w->c, DJC_EINVAL, "restriction: %s%s", msg, date ? " or a datetime YYYY-MM-DD HH:MM[:SS[.ffffff]]" : "");
	free(msg);
	return rc;
}

/* a [NOT] IN list: every item one plain value of a's type (a datetime
 * after midnight for a date equals none: left out, as in condition text). */
static int cond_list(wctx *w, const attr *a, json_t *list, int neg, q_node **out)
{
	size_t n = json_array_size(list);
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(list, i);
		if (!is_plain(x))
			return conn_fail(w->c, DJC_EINVAL, "restriction on '%s': item %zu of its list is %s (a list holds values%s)",
					 a->name, i + 1, json_kind(x), json_is_null(x) ? "; to match null, restrict to null alone" : "");
	}
	val_t *vals = xcalloc(n ? n : 1, sizeof(val_t)), never = val_null();
	size_t m = 0;
	int rc = DJC_OK, after;
	for (size_t i = 0; i < n && !rc; i++)
		if (!(rc = where_value(w, a, json_array_get(list, i), &vals[m], &after)) && !after) m++;
		else if (!rc && never.t == VAL_NULL) never = vals[m];
		else if (!rc) val_free(&vals[m]);
	if (rc || (m && never.t != VAL_NULL)) val_free(&never);
	if (rc || (!m && n)) {
		if (!rc) *out = cond_cmp(w->a, wcol(w, a), &a->type, neg ? "!=" : "=", never, 1);
		for (size_t k = 0; k < m; k++) val_free(&vals[k]);
		free(vals);
		return rc;
	}
	n = m;
	q_col cs[1] = {wcol(w, a)};
	const coldef *types[1] = {&a->type};
	*out = q_in(w->a, cs, types, 1, vals, n, neg);
	free(vals);
	return DJC_OK;
}

/* The operator of {"op": operand} on a, or DJC_EINVAL. */
static int cond_op(wctx *w, const attr *a, json_t *v, const char **op, json_t **val)
{
	if (json_object_size(v) != 1)
		return conn_fail(w->c, DJC_EINVAL, "restriction on '%s' must have one operator, e.g. {\">\": 3}", a->name);
	void *it = json_object_iter(v);
	*op = json_object_iter_key(it);
	*val = json_object_iter_value(it);
	static const char *ops[] = {"=", "!=", "<>", "<", "<=", ">", ">=", "in", "not in", NULL};
	for (int i = 0; ops[i]; i++)
		if (!strcmp(*op, ops[i])) { *op = ops[i]; return DJC_OK; }   /* static: the node outlives the JSON */
	return conn_fail(w->c, DJC_EINVAL, "unknown operator '%s' in restriction on '%s' (use = != < <= > >= in, not in)", *op,
			 a->name);
}

/* The condition on a of the restriction's value v for it: a plain value
 * (=), null (IS NULL), a list (IN) or {"op": operand}. */
static int cond_attr(wctx *w, const attr *a, json_t *v, q_node **out)
{
	if (json_is_null(v)) { *out = q_null(w->a, wcol(w, a), 0); return DJC_OK; }
	if (a->type.t == T_JSON) {
		/* backends cannot compare JSON values alike (PostgreSQL has no json = json) */
		json_t *nn = json_is_object(v) && json_object_size(v) == 1 ? json_object_get(v, "!=") : NULL;
		if (!nn || !json_is_null(nn))
			return conn_fail(w->c, DJC_EINVAL, "json attribute '%s' can only be restricted to null or {\"!=\": null}",
					 a->name);
		*out = q_null(w->a, wcol(w, a), 1);
		return DJC_OK;
	}
	if (json_is_array(v)) return cond_list(w, a, v, 0, out);
	const char *op = "=";
	json_t *val = v;
	int rc;
	if (json_is_object(v) && (rc = cond_op(w, a, v, &op, &val))) return rc;
	if (!strcmp(op, "in") || !strcmp(op, "not in")) {
		if (!json_is_array(val))
			return conn_fail(w->c, DJC_EINVAL, "restriction on '%s': '%s' takes a list of values, got %s", a->name, op,
					 json_kind(val));
		return cond_list(w, a, val, !strcmp(op, "not in"), out);
	}
	int eq = !strcmp(op, "="), ne = !strcmp(op, "!=") || !strcmp(op, "<>");
	if (json_is_array(val) || json_is_object(val))
		return conn_fail(w->c, DJC_EINVAL, "restriction on '%s': '%s' takes one value, got %s%s", a->name, op,
				 json_kind(val), json_is_array(val) ? " (a list goes with \"in\" or \"not in\")" : "");
	if (json_is_null(val) && !eq && !ne)
		return conn_fail(w->c, DJC_EINVAL, "restriction on '%s': '%s' cannot compare with null (null goes with = or !=)",
				 a->name, op);
	if (json_is_null(val)) { *out = q_null(w->a, wcol(w, a), ne); return DJC_OK; }
	val_t x;
	int after;
	if ((rc = where_value(w, a, val, &x, &after))) return rc;
	*out = cond_cmp(w->a, wcol(w, a), &a->type, ne ? "!=" : op, x, after);
	return DJC_OK;
}

/* One object of the restriction: its conditions, ANDed. */
static int cond_obj(wctx *w, json_t *o, q_node **out)
{
	if (!json_is_object(o))
		return conn_fail(w->c, DJC_EINVAL, "restriction must be a JSON object or a list of objects");
	q_node *and = q_and(w->a);
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		attr *a;
		q_node *x;
		int rc = where_attr(w, k, &a);
		if (!rc) rc = cond_attr(w, a, v, &x);
		if (rc) return rc;
		q_add(w->a, and, x);
	}
	*out = and;
	return DJC_OK;
}

/* A long list of keys with the same attributes and plain values
 * ([{"a": 1, "b": "x"}, ...]) as one (a, b) IN condition, which the driver
 * binds as one parameter where it can: 1 when built, 0 when the list is
 * not such a list (the caller then builds it object by object), or an
 * error. */
static int keys_in(wctx *w, json_t *list, q_node **out)
{
	size_t n = json_array_size(list);
	json_t *o0 = json_array_get(list, 0);
	size_t k = json_is_object(o0) ? json_object_size(o0) : 0;
	if (n <= Q_IN_BIND_MAX || !k || k > 8) return 0;
	const char *names[8];
	attr *as[8];
	size_t j = 0;
	const char *key;
	json_t *v;
	json_object_foreach(o0, key, v) {
		names[j] = key;
		if (!table_attr(w->t, key) || where_attr(w, key, &as[j]) || as[j]->type.t == T_JSON)
			return 0;   /* built object by object, which says what is wrong */
		j++;
	}
	for (size_t r = 0; r < n; r++) {
		json_t *o = json_array_get(list, r);
		if (!json_is_object(o) || json_object_size(o) != k) return 0;
		for (j = 0; j < k; j++)
			if (!is_plain(json_object_get(o, names[j]))) return 0;
	}
	val_t *vals = xcalloc(n * k, sizeof(val_t));
	for (size_t r = 0; r < n * k; r++) {
		int after, rc = where_value(w, as[r % k], json_object_get(json_array_get(list, r / k), names[r % k]), &vals[r], &after);
		if (rc || after) {   /* a datetime after midnight for a date: object by object (cond_cmp) */
			for (size_t q = 0; q < r + !rc; q++) val_free(&vals[q]);
			free(vals);
			return rc;
		}
	}
	q_col cols[8];
	const coldef *types[8];
	for (j = 0; j < k; j++) {
		cols[j] = wcol(w, as[j]);
		types[j] = &as[j]->type;
	}
	*out = q_in(w->a, cols, types, k, vals, n, 0);
	free(vals);
	return 1;
}

static int json_node(q_node **out, wctx *w, const char *where_json);

int restrict_node(q_node **out, q_arena *a, djc_conn *c, const table *t, const char *where_json, const char *alias,
		  int source_only)
{
	return restrict_node_at(out, a, c, t, where_json, (q_col){alias, NULL, NULL}, source_only);
}

/* A JSON list that holds condition text among its objects ([{"species":
 * "rat"}, "weight > 50"]: DataJoint's Subject & [{'species': 'rat'},
 * 'weight > 50']): the OR of its items, each restricted as it would be
 * alone (an object as JSON, a string as the text --where takes). 1 when
 * it is such a list (built into *out, or an error in *rc), 0 when not
 * (no string among the items: json_node's list, or not a list at all). */
static int mixed_list(q_node **out, const wctx *w, const char *where, int *rc)
{
	djc_conn *c = w->c;
	q_arena *a = w->a;
	const char *p = where;
	while (isspace((unsigned char)*p)) p++;
	if (*p != '[') return 0;
	json_t *j = json_loads(where, JSON_REJECT_DUPLICATES, NULL);
	size_t n = json_array_size(j), i = 0;
	while (i < n && !json_is_string(json_array_get(j, i))) i++;
	if (i == n) {   /* not valid JSON, or no string in it: json_node says what it is */
		json_decref(j);
		return 0;
	}
	q_node *x = q_or(a);
	*rc = DJC_OK;
	for (i = 0; i < n && !*rc; i++) {
		json_t *e = json_array_get(j, i);
		char *text = NULL;
		if (json_is_string(e) && cond_is_text(json_string_value(e)))
			text = xstrdup(json_string_value(e));
		else if (json_is_object(e))
			text = json_dumps(e, JSON_COMPACT);
		else {
			*rc = conn_fail(c, DJC_EINVAL, "restriction: item %zu of the list is %s (a list holds objects and "
					"conditions: {\"a\": 1}, \"b > 2\")", i + 1,
					json_is_string(e) ? "a string that is not a condition" : json_kind(e));
			break;
		}
		q_node *y = NULL;
		*rc = restrict_node_at(&y, a, c, w->t, text, w->ref, w->source_only);
		free(text);
		if (!*rc && y) q_add(a, x, y);
	}
	json_decref(j);
	if (*rc) return 1;
	x->bound_max = WHERE_BOUND_MAX;
	*out = x;
	return 1;
}

/* DJC_EINVAL for a restriction that is empty or only blanks: NULL is every
 * row; "" restricts nothing, as --where "" (docs/conditions.md: an empty
 * restriction never means everything). */
static int blank_refused(djc_conn *c, const char *where_json)
{
	const char *s = where_json;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
	if (*s) return DJC_OK;
	return conn_fail(c, DJC_EINVAL, "restriction is %s: give NULL for every row (an empty restriction never means "
			 "all)", *where_json ? "only blanks" : "empty");
}

int restrict_node_at(q_node **out, q_arena *a, djc_conn *c, const table *t, const char *where_json, q_col ref,
		     int source_only)
{
	*out = NULL;
	if (!where_json) return DJC_OK;
	int brc = blank_refused(c, where_json);
	if (brc) return brc;
	wctx w = {c, t, ref, source_only, a, NULL};
	int mixed_rc;
	if (mixed_list(out, &w, where_json, &mixed_rc)) return mixed_rc;
	int rt = restrict_text_at(out, a, c, t, where_json, ref, source_only);
	if (rt != RESTRICT_JSON) return rt;
	return json_node(out, &w, where_json);
}

/* The JSON restriction as a node of w's arena. */
static int json_node(q_node **out, wctx *w0, const char *where_json)
{
	djc_conn *c = w0->c;
	q_arena *a = w0->a;
	wctx w = *w0;
	json_error_t je;
	json_t *j = json_loads(where_json, JSON_REJECT_DUPLICATES, &je);
	if (!j) return conn_fail(c, DJC_EINVAL, "restriction is not valid JSON (column %d): %s", je.column, je.text);
	q_node *x = NULL;
	int rc = DJC_OK;
	if (json_is_array(j)) {
		int keys = json_array_size(j) ? keys_in(&w, j, &x) : 0;
		if (keys < 0) rc = keys;
		if (!keys) x = q_or(a);
		for (size_t i = 0; !keys && i < json_array_size(j) && !rc; i++) {
			q_node *o;
			if (!(rc = cond_obj(&w, json_array_get(j, i), &o))) q_add(a, x, o);
		}
	} else
		rc = cond_obj(&w, j, &x);
	json_decref(j);
	if (rc) return rc;
	x->bound_max = WHERE_BOUND_MAX;
	*out = x;
	return DJC_OK;
}

int restrict_fail(djc_conn *c, int rc, const q_out *o)
{
	if (!o->over) return rc;
	return conn_fail(c, DJC_EINVAL, "restriction binds %zu values one by one, more than the %d allowed: give a long "
			 "list as one attribute's list ({\"id\": [...]}) or as keys of the same attributes "
			 "([{\"a\": 1, \"b\": 2}, ...])", o->over, WHERE_BOUND_MAX);
}

/* where_build's last result. A populate renders its restriction for every
 * claim, peek and count: a list of 100,000 keys parsed, checked against the
 * pipeline and rendered again each time. The same table object, text,
 * alias and kind render the same SQL and values as long as the pipeline's
 * tables are the ones they were (pipe_gen): table objects live until
 * djc_close, so an address names one definition. */
struct where_memo {
	const table *t;
	unsigned long gen;
	char *where, *alias;
	int source_only;
	sb_t sql;
	pvec params;
};

void where_memo_free(djc_conn *c)
{
	struct where_memo *m = c->where;
	if (!m) return;
	free(m->where);
	free(m->alias);
	sb_free(&m->sql);
	pvec_free(&m->params);
	free(m);
	c->where = NULL;
}

static int str_same(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* Append the memo's SQL and a copy of its values. */
static void memo_append(const struct where_memo *m, sb_t *sql, pvec *params)
{
	sb_add(sql, sb_str(&m->sql));
	for (size_t i = 0; i < m->params.n; i++) {
		val_t v;
		val_copy(&v, &m->params.v[i]);
		pvec_push(params, v);
	}
}

int where_build(djc_conn *c, const table *t, const char *where_json, const char *alias, int source_only, sb_t *sql, pvec *params)
{
	if (!where_json) return DJC_OK;
	int brc = blank_refused(c, where_json);
	if (brc) return brc;
	struct where_memo *m = c->where;
	if (m && m->t == t && m->gen == c->pipe_gen && m->source_only == source_only && str_same(m->alias, alias) &&
	    !strcmp(m->where, where_json)) {
		memo_append(m, sql, params);
		return DJC_OK;
	}
	where_memo_free(c);
	m = xcalloc(1, sizeof *m);
	q_arena a = Q_ARENA_INIT;
	q_node *x;
	int rc = restrict_node(&x, &a, c, t, where_json, alias, source_only);
	if (!rc && x) {
		q_out o = {&m->sql, &m->params, 0};
		rc = restrict_fail(c, q_and_sql(c->db, x, &o), &o);
	}
	q_arena_free(&a);
	m->t = t;
	m->gen = c->pipe_gen;
	m->where = xstrdup(where_json);
	m->alias = alias ? xstrdup(alias) : NULL;
	m->source_only = source_only;
	where_memo_free(c);   /* one a nested where_build (an expression's restriction in where_json) left */
	c->where = m;
	if (rc) {
		where_memo_free(c);
		return rc;
	}
	memo_append(m, sql, params);
	return DJC_OK;
}

int restrict_check(djc_conn *c, const table *t, const char *where_json, int source_only)
{
	sb_t tmp = SB_INIT;
	pvec p = {0};
	int rc = where_build(c, t, where_json, NULL, source_only, &tmp, &p);
	sb_free(&tmp);
	pvec_free(&p);
	return rc;
}

/* ---------------------------------------------------------- key source */

/* The tables a key source joins, each with the attributes it brings. */
typedef struct ks_part {
	const table *tb;
	char **names;        /* the parent's key (default) or its heading (key_source = A * B), as the
	                      * target names them (a renamed reference's child attributes) */
	char **cols;         /* the part's own columns for names (the parent's, before renaming) */
	size_t n;
} ks_part;

/* The index of the attribute name in part p, or -1. */
static long part_at(const ks_part *p, const char *name)
{
	for (size_t k = 0; k < p->n; k++)
		if (!strcmp(p->names[k], name)) return (long)k;
	return -1;
}


/* The parts of t's key source: the parents named in its primary key, or
 * its key_source's tables (their headings in the arena). */
static size_t ks_parts(q_arena *a, const table *t, ks_part *ps, size_t max)
{
	size_t np = 0;
	if (t->nks) {
		for (size_t i = 0; i < t->nks && np < max; i++) {
			const table *u = t->ks_tables[i];
			char **head = q_alloc(a, (u->nattrs ? u->nattrs : 1) * sizeof(char *));
			for (size_t k = 0; k < u->nattrs; k++) head[k] = u->attrs[k].name;
			ps[np++] = (ks_part){u, head, head, u->nattrs};
		}
	} else
		/* DataJoint's: the primary-key parents, projected and renamed
		 * (-> P.proj(child='parent')) to the target's names */
		for (size_t i = 0; i < t->nfks && np < max; i++)
			if (t->fks[i].in_key)
				ps[np++] = (ks_part){t->fks[i].ptable, t->fks[i].cattrs, t->fks[i].attrs, t->fks[i].nattrs};
	return np;
}

/* The condition joining part p to the parts before it: on the attributes
 * an earlier part also has, where one of the two has it in its key (a
 * secondary attribute of the same name in both is not a link: DataJoint
 * 2's semantic join); true when there are none (a cross product). */
static void ks_join_on(q_arena *a, const ks_part *ps, size_t p, const char *const *al, q_node *on)
{
	for (size_t k = 0; k < ps[p].n; k++) {
		const char *name = ps[p].names[k];
		const attr *pa = table_attr(ps[p].tb, ps[p].cols[k]);
		for (size_t e = 0; e < p; e++) {
			long ek = part_at(&ps[e], name);
			if (ek < 0) continue;
			const attr *ea = table_attr(ps[e].tb, ps[e].cols[ek]);
			if (!(pa && pa->in_key) && !(ea && ea->in_key)) continue;
			q_add(a, on, q_same(a, (q_col){al[e], NULL, ps[e].cols[ek]}, (q_col){al[p], NULL, ps[p].cols[k]}));
			break;
		}
	}
	if (!on->nkids) q_add(a, on, q_true(a));
}

q_node *not_in_target(q_arena *a, const table *t, const char *alias)
{
	q_sel *s = q_select(a);
	q_item_add(a, s, QI_ONE, NULL);
	q_from_table(a, s, table_sqlref(t), "tg", 0);
	for (size_t i = 0; i < t->nsrc; i++) {
		const char *n = t->attrs[t->src[i]].name;
		q_where(a, s, q_same(a, (q_col){"tg", NULL, n}, (q_col){alias, NULL, n}));
	}
	return q_exists(a, s, 1);
}

/* ------------------------------------------- condition text (issue 39) */

/* A table's attributes (or its key attributes from its parents) as the
 * names of a condition, their columns qualified as ref says. */
typedef struct thead {
	const table *t;
	q_col ref;
	int source_only;
	int missed;          /* a name was not found */
	const struct ks_wide *w;   /* a key source's heading (t is w->head): its columns, and its
	                            * ambiguous names, refused */
	const char *amb;     /* the first ambiguous name met */
} thead;

static attr *th_attr(const thead *h, const char *name)
{
	attr *a = table_attr(h->t, name);
	if (!a || !h->source_only) return a;
	for (size_t i = 0; i < h->t->nsrc; i++)
		if (&h->t->attrs[h->t->src[i]] == a) return a;
	return NULL;
}

static int ks_resolve(thead *h, attr *a, cond_ref *out);

static int th_resolve(void *ctx, const char *name, cond_ref *out)
{
	thead *h = ctx;
	attr *a = th_attr(h, name);
	if (!a) { h->missed = 1; return 1; }
	if (h->w) return ks_resolve(h, a, out);
	out->col = h->ref;
	out->col.name = a->name;
	out->a = a;
	return 0;
}

static size_t th_names(void *ctx, const char **names, size_t max)
{
	thead *h = ctx;
	size_t n = h->source_only ? h->t->nsrc : h->t->nattrs;
	for (size_t i = 0; i < n && i < max; i++) names[i] = h->t->attrs[h->source_only ? h->t->src[i] : i].name;
	return n;
}

/* Condition text on h's table's attributes (h->source_only: its key
 * attributes from its parents) as a node; h->missed: whether a name was
 * unknown. */
static int text_node(q_node **out, q_arena *a, djc_conn *c, thead *h, const char *text)
{
	char *what = xasprintf(h->source_only ? "a key attribute from the parents of %s" : "an attribute of %s", h->t->name);
	cond_heading hd = {th_resolve, th_names, h, what};
	char *msg = NULL;
	int rc = cond_compile(out, a, text, &hd, &msg);
	if (rc) rc = conn_fail(c, rc, "%s", msg);
	else (*out)->bound_max = WHERE_BOUND_MAX;
	free(msg);
	free(what);
	return rc;
}

/* ------------------------------- a key source's tables and their ancestors */

/* t's key source's tables, then (with ancestors) the tables their primary
 * keys reference (and theirs), joined in one query, and the names a
 * restriction of the key source may use (its heading), each with its
 * column: first the key source's own attributes (keysource_query's
 * projection, by the target's names), then the other attributes of its
 * tables (a default key source's parents: their secondary attributes
 * too), then the ancestors' (nearest first). A name is its first table's;
 * one that two tables of the same rank (the key source's, or the
 * ancestors') have as a secondary attribute, which the join does not
 * match, is ambiguous (also). */
typedef struct ks_wide {
	const table *tb[64];
	const char *al[64];
	size_t n, nparts;    /* tb[0..nparts): the key source's tables */
	table head;          /* the heading: name and attrs (in the arena) */
	q_col *cols;         /* head.attrs[i]'s column */
	const table **own;   /* head.attrs[i]'s table */
	const table **also;  /* another table with it as a secondary attribute: ambiguous (NULL: not) */
	unsigned char *rank; /* 0 the key source's attribute, 1 its tables', 2 an ancestor's */
	unsigned char *key;  /* in its table's primary key */
} ks_wide;

/* The ancestor tables through the primary keys of w's tables, joined into
 * s on their keys: each path its own alias. A reference to a primary key
 * gives exactly one parent row, so every path is that row whatever other
 * paths reach the table; two paths joined to one alias would make their
 * values equal, which a renamed reference (-> P.proj(...): another row of
 * P) does not mean: keys were lost. A name two paths give is ambiguous
 * (ks_head_add). */
static void ks_ancestors(q_arena *a, q_sel *s, ks_wide *w)
{
	for (size_t i = 0; i < w->n; i++)
		for (size_t f = 0; f < w->tb[i]->nfks; f++) {
			const fkey *fk = &w->tb[i]->fks[f];
			if (!fk->in_key || !fk->ptable || w->n == 64) continue;
			size_t p = w->n++;
			w->tb[p] = fk->ptable;
			w->al[p] = q_printf(a, "a%zu", p);
			q_node *on = q_from_table(a, s, table_sqlref(fk->ptable), w->al[p], 0);
			for (size_t k = 0; k < fk->nattrs; k++)
				/* the child's column (renamed: -> P.proj(child='parent')) is the parent's */
				q_add(a, on, q_same(a, (q_col){w->al[i], NULL, fk->cattrs[k]}, (q_col){w->al[p], NULL, fk->attrs[k]}));
		}
}

/* The part of ps[0..np) that gives the key source's attribute name (the
 * first holding it) and its index there (-1: none). */
static size_t ks_owner(const ks_part *ps, size_t np, const char *name, long *k)
{
	*k = -1;
	for (size_t p = 0; p < np; p++)
		if ((*k = part_at(&ps[p], name)) >= 0) return p;
	return 0;
}

/* name (attribute at of table tb[ti], column col) into w's heading. */
static void ks_head_add(ks_wide *w, size_t ti, const attr *at, const char *name, const char *col, int rank)
{
	attr *e = table_attr(&w->head, name);
	int key = at && at->in_key;
	if (e) {
		size_t i = (size_t)(e - w->head.attrs);
		/* two tables (or two paths to one: an ancestor reached twice) of one
		 * rank give it: ambiguous where it is not the join's own link (a
		 * key attribute of the key source's tables) */
		if (!w->also[i] && w->rank[i] == rank && (rank == 2 || (!w->key[i] && !key)) && w->cols[i].alias != w->al[ti])
			w->also[i] = w->tb[ti];
		return;
	}
	if (!at) return;
	size_t i = w->head.nattrs++;
	w->head.attrs[i] = *at;
	w->head.attrs[i].name = (char *)name;
	w->cols[i] = (q_col){w->al[ti], NULL, col};
	w->own[i] = w->tb[ti];
	w->also[i] = NULL;
	w->rank[i] = (unsigned char)rank;
	w->key[i] = (unsigned char)key;
}

/* w's query (its FROM: the join, no items) and heading. */
static q_sel *ks_wide_build(q_arena *a, const table *t, ks_wide *w, int ancestors)
{
	ks_part ps[64];
	size_t np = ks_parts(a, t, ps, 64);
	q_sel *s = q_select(a);
	w->n = 0;
	for (size_t p = 0; p < np; p++) {
		w->tb[p] = ps[p].tb;
		w->al[p] = q_printf(a, "s%zu", p);
		q_node *on = q_from_table(a, s, table_sqlref(ps[p].tb), w->al[p], 0);
		if (p) ks_join_on(a, ps, p, w->al, on);
		w->n++;
	}
	w->nparts = np;
	if (ancestors) ks_ancestors(a, s, w);
	size_t cap = t->nsrc;
	for (size_t i = 0; i < w->n; i++) cap += w->tb[i]->nattrs;
	if (!cap) cap = 1;
	w->head.attrs = q_alloc(a, cap * sizeof(attr));
	w->head.nattrs = 0;
	w->cols = q_alloc(a, cap * sizeof(q_col));
	w->own = q_alloc(a, cap * sizeof(table *));
	w->also = q_alloc(a, cap * sizeof(table *));
	w->rank = q_alloc(a, cap);
	w->key = q_alloc(a, cap);
	for (size_t i = 0; i < t->nsrc && np; i++) {
		const attr *at = &t->attrs[t->src[i]];
		long k;
		size_t p = ks_owner(ps, np, at->name, &k);
		ks_head_add(w, p, at, at->name, k >= 0 ? ps[p].cols[k] : at->name, 0);
	}
	for (size_t p = 0; p < np; p++) {
		const table *u = ps[p].tb;
		for (size_t k = 0; k < ps[p].n; k++)
			ks_head_add(w, p, table_attr(u, ps[p].cols[k]), ps[p].names[k], ps[p].cols[k], 1);
		/* a parent's attributes beyond its key (the default key source projects them away) */
		for (size_t k = 0; k < u->nattrs; k++) {
			size_t q = 0;
			while (q < ps[p].n && strcmp(ps[p].cols[q], u->attrs[k].name)) q++;
			if (q == ps[p].n) ks_head_add(w, p, &u->attrs[k], u->attrs[k].name, u->attrs[k].name, 1);
		}
	}
	for (size_t i = np; i < w->n; i++)
		for (size_t k = 0; k < w->tb[i]->nattrs; k++)
			ks_head_add(w, i, &w->tb[i]->attrs[k], w->tb[i]->attrs[k].name, w->tb[i]->attrs[k].name, 2);
	sb_t names = SB_INIT;
	for (size_t i = 0; i < w->n; i++) sb_printf(&names, "%s%s", i ? ", " : "", w->tb[i]->name);
	w->head.name = q_printf(a, "the key source of %s (%s)", t->name, sb_str(&names));
	sb_free(&names);
	return s;
}

/* w's query with every attribute of its heading as a column. */
static q_sel *ks_wide_query(q_arena *a, const table *t, ks_wide *w)
{
	q_sel *s = ks_wide_build(a, t, w, 1);
	for (size_t i = 0; i < w->head.nattrs; i++) q_col_item(a, s, w->cols[i], w->head.attrs[i].name);
	return s;
}

/* Whether the JSON restriction names an attribute that is not one of t's
 * key attributes from its parents: then it is a restriction of the key
 * source's heading, which says what is wrong with a name that is not one
 * of its attributes, naming those it accepts (0: the JSON path, which
 * also says what is wrong with JSON that is not a restriction). */
static int json_beyond_key(const table *t, const char *where)
{
	json_t *j = json_loads(where, JSON_REJECT_DUPLICATES, NULL);
	thead h = {t, {0}, 1, 0, NULL, NULL};
	int beyond = 0;
	for (size_t i = 0; j && i < (json_is_array(j) ? json_array_size(j) : 1); i++) {
		json_t *o = json_is_array(j) ? json_array_get(j, i) : j;
		const char *k;
		json_t *v;
		if (json_is_object(o))
			json_object_foreach(o, k, v) if (!th_attr(&h, k)) beyond = 1;
	}
	json_decref(j);
	return beyond;
}

/* EXISTS (a row of t's key source's tables and their ancestors, joined,
 * with ref's key attributes, for which the restriction holds): a
 * restriction of t's key naming any attribute of those tables
 * (RESTRICT_JSON for JSON that json_beyond_key leaves to the JSON path). ref
 * unqualified: the jobs table's columns (the jobs statements name it by
 * itself). */
static int keysource_exists(q_node **out, q_arena *a, djc_conn *c, const table *t, const char *where, q_col ref)
{
	ks_wide *w = q_alloc(a, sizeof *w);
	q_sel *inner = ks_wide_query(a, t, w);
	if (!cond_is_text(where) && !json_beyond_key(t, where)) return RESTRICT_JSON;
	q_sel *e = q_select(a);
	q_item_add(a, e, QI_ONE, NULL);
	q_from_query(a, e, inner, "ksx", 0);
	if (!ref.alias && !ref.table) ref.table = t->jobs_name ? t->jobs_name : t->sql_name;
	for (size_t i = 0; i < t->nsrc; i++) {
		const char *n = t->attrs[t->src[i]].name;
		if (!table_attr(&w->head, n))
			return conn_fail(c, DJC_EINVAL, "key attribute '%s' of %s is not in %s", n, t->name, w->head.name);
		q_col r = ref;
		r.name = n;
		q_where(a, e, q_same(a, (q_col){"ksx", NULL, n}, r));
	}
	q_node *x;
	int rc = restrict_node_at(&x, a, c, &w->head, where, (q_col){"ksx", NULL, NULL}, 0);
	if (rc) return rc;
	if (x) q_where(a, e, x);
	*out = q_exists(a, e, 0);
	(*out)->bound_max = WHERE_BOUND_MAX;
	return DJC_OK;
}

int restrict_text_at(q_node **out, q_arena *a, djc_conn *c, const table *t, const char *where, q_col ref,
		     int source_only)
{
	*out = NULL;
	if (!cond_is_text(where)) return source_only ? keysource_exists(out, a, c, t, where, ref) : RESTRICT_JSON;
	if (source_only && alg_is_expr(c, where)) return alg_where_node(out, a, c, t, where, ref, 1);
	thead h = {t, ref, source_only, 0, NULL, NULL};
	int rc = text_node(out, a, c, &h, where);
	if (!rc || !source_only || !h.missed) return rc;
	/* a name beyond the key: any attribute of the key source's tables */
	return keysource_exists(out, a, c, t, where, ref);
}

/* ------------------------------------------------- a key source's restriction */

/* DJC_EINVAL: the key_source restriction of t names name, which two of
 * w's tables have as a secondary attribute. */
static int ks_ambiguous(djc_conn *c, const table *t, const ks_wide *w, const char *name)
{
	const attr *e = table_attr(&w->head, name);
	size_t i = e ? (size_t)(e - w->head.attrs) : 0;
	if (e && w->also[i] == w->own[i])
		return conn_fail(c, DJC_EINVAL, "key_source of %s restricts '%s', which is ambiguous: %s, which has it, is reached "
				 "by two paths (two references to it, or to its descendants, one renamed: two of its rows)",
				 t->name, name, w->own[i]->name);
	return conn_fail(c, DJC_EINVAL, "key_source of %s restricts '%s', which is ambiguous: %s and %s both have it, as a "
			 "secondary attribute that the join does not match", t->name, name, e ? w->own[i]->name : "?",
			 e && w->also[i] ? w->also[i]->name : "?");
}

static int ks_resolve(thead *h, attr *a, cond_ref *out)
{
	size_t i = (size_t)(a - h->t->attrs);
	if (h->w->also[i]) {
		if (!h->amb) h->amb = a->name;
		return 1;
	}
	out->col = h->w->cols[i];
	out->a = a;
	return 0;
}

/* "its tables (A, B) or their ancestors (C)": what w's heading holds. */
static char *ks_tables_text(const ks_wide *w)
{
	sb_t b = SB_INIT;
	sb_add(&b, "its tables (");
	for (size_t i = 0; i < w->n; i++)
		sb_printf(&b, "%s%s", i == w->nparts ? ") or their ancestors (" : i ? ", " : "", w->tb[i]->name);
	sb_addc(&b, ')');
	return sb_steal(&b);
}

/* The first name of the JSON restriction that w's heading lacks (NULL:
 * none); DJC_EINVAL in *rc for one that is ambiguous. */
static const char *ks_json_names(djc_conn *c, const table *t, const ks_wide *w, json_t *j, int *rc)
{
	*rc = DJC_OK;
	for (size_t i = 0; i < (json_is_array(j) ? json_array_size(j) : 1); i++) {
		json_t *o = json_is_array(j) ? json_array_get(j, i) : j;
		const char *k;
		json_t *v;
		if (!json_is_object(o)) continue;   /* json_node says what is wrong */
		json_object_foreach(o, k, v) {
			const attr *e = table_attr(&w->head, k);
			if (!e) return k;
			if (w->also[e - w->head.attrs]) {
				*rc = ks_ambiguous(c, t, w, k);
				return NULL;
			}
		}
	}
	return NULL;
}

static int ks_where_of(q_node **out, q_arena *a, djc_conn *c, const table *t, const ks_wide *w, const char *where,
		       int *missed);

/* A key_source list that holds condition text among its objects
 * ([{"rig": "r1"}, "rig is null"], as --where takes it: mixed_list): the
 * OR of its items, each as it would be alone, built into *out (DJC_OK, or
 * an error), or KS_NOT_MIXED when where is no such list. */
#define KS_NOT_MIXED 1
static int ks_mixed_list(q_node **out, q_arena *a, djc_conn *c, const table *t, const ks_wide *w, const char *where,
			 int *missed)
{
	const char *p = where;
	while (isspace((unsigned char)*p)) p++;
	if (*p != '[') return KS_NOT_MIXED;
	json_t *j = json_loads(where, JSON_REJECT_DUPLICATES, NULL);
	size_t n = json_array_size(j), i = 0;
	while (i < n && !json_is_string(json_array_get(j, i))) i++;
	if (i == n) { json_decref(j); return KS_NOT_MIXED; }
	q_node *x = q_or(a);
	int rc = DJC_OK;
	for (i = 0; i < n && !rc; i++) {
		json_t *e = json_array_get(j, i);
		char *text = NULL;
		if (json_is_string(e) && cond_is_text(json_string_value(e))) text = xstrdup(json_string_value(e));
		else if (json_is_object(e)) text = json_dumps(e, JSON_COMPACT);
		else {
			rc = conn_fail(c, DJC_EINVAL, "key_source of %s: item %zu of the list is %s (a list holds objects and "
					"conditions: {\"a\": 1}, \"b > 2\")", t->name, i + 1,
					json_is_string(e) ? "a string that is not a condition" : json_kind(e));
			break;
		}
		q_node *y = NULL;
		int m = 0;
		rc = ks_where_of(&y, a, c, t, w, text, &m);
		*missed |= m;
		free(text);
		if (!rc && y) q_add(a, x, y);
	}
	json_decref(j);
	if (!rc) *out = x;
	return rc;
}

/* t's key_source restriction (JSON or condition text) as a condition on
 * the columns of w's join. *missed: it names what w's heading lacks. */
static int ks_where_node(q_node **out, q_arena *a, djc_conn *c, const table *t, const ks_wide *w, int *missed)
{
	*missed = 0;
	*out = NULL;
	int rc = ks_where_of(out, a, c, t, w, t->key_source_where, missed);
	if (!rc && *out) (*out)->bound_max = WHERE_BOUND_MAX;
	return rc;
}

static int ks_where_of(q_node **out, q_arena *a, djc_conn *c, const table *t, const ks_wide *w, const char *where,
		       int *missed)
{
	int rc = ks_mixed_list(out, a, c, t, w, where, missed);
	if (rc != KS_NOT_MIXED) return rc;
	char *tabs = ks_tables_text(w);
	if (cond_is_text(where)) {
		thead h = {&w->head, {0}, 0, 0, w, NULL};
		char *what = xasprintf("an attribute of %s", tabs);
		cond_heading hd = {th_resolve, th_names, &h, what};
		char *msg = NULL;
		rc = cond_compile(out, a, where, &hd, &msg);
		if (rc && h.amb) rc = ks_ambiguous(c, t, w, h.amb);
		else if (rc) {
			*missed = h.missed;
			rc = conn_fail(c, rc, "key_source of %s: %s", t->name, msg);
		}
		free(msg);
		free(what);
	} else {
		json_t *j = json_loads(where, JSON_REJECT_DUPLICATES, NULL);
		const char *miss = j ? ks_json_names(c, t, w, j, &rc) : NULL;
		if (!j) rc = DJC_OK;   /* json_node says what is wrong */
		if (miss) {
			*missed = 1;
			sb_t q = SB_INIT;
			json_quote(&q, miss, strlen(miss));
			rc = conn_fail(c, DJC_EINVAL, "key_source of %s restricts %s, which is not an attribute of %s", t->name,
				       sb_str(&q), tabs);
			sb_free(&q);
		}
		json_decref(j);
		if (!rc) {
			wctx wc = {c, &w->head, {0}, 0, a, w->cols};
			if ((rc = json_node(out, &wc, where))) {
				char m[sizeof c->err];
				snprintf(m, sizeof m, "%s", c->err);
				rc = conn_fail(c, rc, "key_source of %s: %s", t->name, m);
			}
		}
	}
	free(tabs);
	return rc;
}

/* t's key source unrestricted: the distinct values of the key-source
 * attributes in the join of its tables. */
static q_sel *ks_select(q_arena *a, const table *t)
{
	ks_part ps[64];
	size_t np = ks_parts(a, t, ps, 64);
	const char *al[64];
	q_sel *s = q_select(a);
	s->distinct = 1;
	for (size_t p = 0; p < np; p++) {
		al[p] = q_printf(a, "s%zu", p);
		q_node *on = q_from_table(a, s, table_sqlref(ps[p].tb), al[p], 0);
		if (p) ks_join_on(a, ps, p, al, on);
	}
	for (size_t i = 0; i < t->nsrc; i++) {
		const attr *at = &t->attrs[t->src[i]];
		/* the first table holding the attribute supplies it */
		long k;
		size_t owner = ks_owner(ps, np, at->name, &k);
		q_col_item(a, s, (q_col){np ? al[owner] : "s0", NULL, np && k >= 0 ? ps[owner].cols[k] : at->name}, at->name);
	}
	return s;
}

int keysource_query(q_sel **out, q_arena *a, djc_conn *c, const table *t)
{
	const char *where = t->key_source_where;
	*out = NULL;
	if (!where || !*where) {
		*out = ks_select(a, t);
		return DJC_OK;
	}
	if (cond_is_text(where) && alg_is_expr(c, where)) {
		/* an expression (key_source = A & B - C): a semijoin of the
		 * key source's attributes, the projection as a derived table */
		q_node *x;
		int rc = alg_where_node(&x, a, c, t, where, (q_col){"ksr", NULL, NULL}, 1);
		if (rc) return rc;
		q_sel *w = q_select(a);
		q_from_query(a, w, ks_select(a, t), "ksr", 0);
		if (x) q_where(a, w, x);
		*out = w;
		return DJC_OK;
	}
	/* DataJoint's (A * B) & restriction: the restriction inside the join,
	 * on any attribute of its tables (their ancestors' only when it names
	 * what the tables lack), then the projection on the key source's
	 * attributes */
	for (int anc = 0;; anc = 1) {
		ks_wide *w = q_alloc(a, sizeof *w);
		q_sel *s = ks_wide_build(a, t, w, anc);
		q_node *x;
		int missed, rc = ks_where_node(&x, a, c, t, w, &missed);
		if (rc && missed && !anc) continue;
		if (rc) return rc;
		s->distinct = 1;
		for (size_t i = 0; i < t->nsrc; i++)
			q_col_item(a, s, w->cols[i], t->attrs[t->src[i]].name);   /* the heading's first nsrc */
		if (x) q_where(a, s, x);
		*out = s;
		return DJC_OK;
	}
}

int keysource_sql(djc_conn *c, const table *t, sb_t *sql, pvec *params)
{
	q_arena a = Q_ARENA_INIT;
	q_sel *s;
	int rc = keysource_query(&s, &a, c, t);
	if (!rc) {
		q_out o = {sql, params, 0};
		rc = restrict_fail(c, q_select_sql(c->db, s, &o), &o);
	}
	q_arena_free(&a);
	return rc;
}

/* Whether the text is one of np's table names alone (in parentheses or
 * not): an expression (key_source = A & B, B declared with it), which
 * alg_is_expr knows only once B is stored. */
static int names_new_table(const pipeline *np, const char *text)
{
	while (*text == ' ' || *text == '\t' || *text == '(') text++;
	size_t n = strcspn(text, " \t)");
	char *name = xstrndup(text, n);
	int is = pipeline_lookup(np, name) != NULL;
	free(name);
	return is;
}

int keysource_check(djc_conn *c, const pipeline *np, const char *file)
{
	for (size_t i = 0; i < np->n; i++) {
		const table *t = np->tables[i];
		const char *where = t->key_source_where;
		if (!where || !*where || !t->nsrc) continue;
		if (cond_is_text(where) && (alg_is_expr(c, where) || names_new_table(np, where))) continue;   /* checked where read */
		q_arena a = Q_ARENA_INIT;
		q_sel *s;
		int rc = keysource_query(&s, &a, c, t);
		q_arena_free(&a);
		if (rc) {
			char m[sizeof c->err];
			snprintf(m, sizeof m, "%s", c->err);
			return conn_fail(c, rc, "%s:%d: %s", file, t->ks_line ? t->ks_line : t->line, m);
		}
	}
	return DJC_OK;
}
