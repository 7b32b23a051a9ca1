/* rows.c - insert, fetch and delete rows; restrictions; key sources. */
#include "table.h"
#include "util/near.h"
#include "table/opts.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static void col(djc_conn *c, sb_t *b, const char *alias, const char *name)
{
	if (alias) { sb_add(b, alias); sb_addc(b, '.'); }
	db_qi(c->db, b, name);
}

/* ------------------------------------------------------- restrictions
 *
 * A restriction is JSON (README, "Restrictions"): an object of conditions
 * on attributes (AND), or a list of such objects (OR). Each condition is
 * checked strictly before any SQL is run: an operator takes exactly the
 * operand it means (a comparison one value, "in" and "not in" a list of
 * values), so that a malformed restriction is an error naming the
 * attribute, never a different set of rows. */

/* Above this many values, a list (of one attribute's values, or of keys
 * with the same attributes) goes to the database as one parameter where
 * the driver can (db_in_rows), whatever its length. */
#define IN_BIND_MAX 100
/* At most this many values of one restriction are bound one by one: within
 * every backend's limit on a statement's parameters (SQLite's default
 * 32766, PostgreSQL's and MariaDB's 65535). */
#define WHERE_BOUND_MAX 30000

/* What a restriction is being built into. */
typedef struct wctx {
	djc_conn *c;
	const table *t;
	const char *alias;   /* columns prefixed by `alias.` (or NULL) */
	int source_only;     /* only key attributes from the parents */
	sb_t *sql;
	pvec *params;
} wctx;

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

/* v (a plain JSON value) as a value of a, or DJC_EINVAL. */
static int where_value(wctx *w, const attr *a, json_t *v, val_t *out)
{
	char *msg = NULL;
	if (!value_from_json(a, v, out, &msg)) return DJC_OK;
	int rc = conn_fail(w->c, DJC_EINVAL, "restriction: %s", msg);
	free(msg);
	return rc;
}

/* Write "col [NOT] IN (...)" for in (one column; its values set) as the
 * driver's one parameter when the list is long, else one ? per value.
 * A decimal's list is written as ORed equalities (ANDed inequalities):
 * MariaDB compares a decimal column with a list of text values as
 * doubles, so that 1234567890123456.0001 IN ('1234567890123456.0002', ..)
 * held; an equality compares exactly on every backend. Takes the values. */
static void in_sql(wctx *w, db_in *in, val_t *vals)
{
	val_t one[8];
	size_t nb = 0;
	in->vals = vals;
	if (in->n > IN_BIND_MAX && db_in_rows(w->c->db, in, w->sql, one, &nb)) {
		for (size_t i = 0; i < nb; i++) pvec_push(w->params, one[i]);
		for (size_t i = 0; i < in->n; i++) val_free(&vals[i]);
		return;
	}
	int eqs = in->types[0]->t == T_DECIMAL;
	if (eqs) sb_addc(w->sql, '(');
	else sb_printf(w->sql, "%s%s", in->cols[0], in->neg ? " NOT IN (" : " IN (");
	for (size_t r = 0; r < in->n; r++) {
		if (eqs) sb_printf(w->sql, "%s%s %s ?", r ? (in->neg ? " AND " : " OR ") : "", in->cols[0], in->neg ? "<>" : "=");
		else sb_add(w->sql, r ? ", ?" : "?");
		pvec_push(w->params, vals[r]);
	}
	sb_addc(w->sql, ')');
}

/* a [NOT] IN list: every item one plain value of a's type. */
static int cond_list(wctx *w, const attr *a, json_t *list, int neg)
{
	size_t n = json_array_size(list);
	if (!n) { sb_add(w->sql, neg ? "1=1" : "1=0"); return DJC_OK; }
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(list, i);
		if (!is_plain(x))
			return conn_fail(w->c, DJC_EINVAL, "restriction on '%s': item %zu of its list is %s (a list holds values%s)",
					 a->name, i + 1, json_kind(x), json_is_null(x) ? "; to match null, restrict to null alone" : "");
	}
	val_t *vals = xcalloc(n, sizeof(val_t));
	for (size_t i = 0; i < n; i++) {
		int rc = where_value(w, a, json_array_get(list, i), &vals[i]);
		if (rc) {
			for (size_t k = 0; k < i; k++) val_free(&vals[k]);
			free(vals);
			return rc;
		}
	}
	sb_t cs = SB_INIT;
	col(w->c, &cs, w->alias, a->name);
	const char *cols[1] = {sb_str(&cs)};
	const coldef *types[1] = {&a->type};
	db_in in = {cols, types, 1, NULL, n, neg};
	in_sql(w, &in, vals);
	sb_free(&cs);
	free(vals);
	return DJC_OK;
}

/* The condition on a of the restriction's value v for it: a plain value
 * (=), null (IS NULL), a list (IN) or {"op": operand}. */
static int cond_attr(wctx *w, const attr *a, json_t *v)
{
	if (json_is_null(v)) { col(w->c, w->sql, w->alias, a->name); sb_add(w->sql, " IS NULL"); return DJC_OK; }
	if (a->type.t == T_JSON) {
		/* backends cannot compare JSON values alike (PostgreSQL has no json = json) */
		json_t *nn = json_is_object(v) && json_object_size(v) == 1 ? json_object_get(v, "!=") : NULL;
		if (!nn || !json_is_null(nn))
			return conn_fail(w->c, DJC_EINVAL, "json attribute '%s' can only be restricted to null or {\"!=\": null}",
					 a->name);
		col(w->c, w->sql, w->alias, a->name);
		sb_add(w->sql, " IS NOT NULL");
		return DJC_OK;
	}
	if (json_is_array(v)) return cond_list(w, a, v, 0);
	const char *op = "=";
	json_t *val = v;
	if (json_is_object(v)) {
		if (json_object_size(v) != 1)
			return conn_fail(w->c, DJC_EINVAL, "restriction on '%s' must have one operator, e.g. {\">\": 3}", a->name);
		void *it = json_object_iter(v);
		op = json_object_iter_key(it);
		val = json_object_iter_value(it);
		static const char *ops[] = {"=", "!=", "<>", "<", "<=", ">", ">=", "in", "not in", NULL};
		int okop = 0;
		for (int i = 0; ops[i]; i++) if (!strcmp(op, ops[i])) okop = 1;
		if (!okop)
			return conn_fail(w->c, DJC_EINVAL, "unknown operator '%s' in restriction on '%s' (use = != < <= > >= in, not in)",
					 op, a->name);
	}
	int list_op = !strcmp(op, "in") || !strcmp(op, "not in");
	if (list_op) {
		if (!json_is_array(val))
			return conn_fail(w->c, DJC_EINVAL, "restriction on '%s': '%s' takes a list of values, got %s", a->name, op,
					 json_kind(val));
		return cond_list(w, a, val, !strcmp(op, "not in"));
	}
	int eq = !strcmp(op, "="), ne = !strcmp(op, "!=") || !strcmp(op, "<>");
	if (json_is_array(val) || json_is_object(val))
		return conn_fail(w->c, DJC_EINVAL, "restriction on '%s': '%s' takes one value, got %s%s", a->name, op,
				 json_kind(val), json_is_array(val) ? " (a list goes with \"in\" or \"not in\")" : "");
	if (json_is_null(val) && !eq && !ne)
		return conn_fail(w->c, DJC_EINVAL, "restriction on '%s': '%s' cannot compare with null (null goes with = or !=)",
				 a->name, op);
	if (json_is_null(val)) {
		col(w->c, w->sql, w->alias, a->name);
		sb_add(w->sql, ne ? " IS NOT NULL" : " IS NULL");
		return DJC_OK;
	}
	val_t x;
	int rc = where_value(w, a, val, &x);
	if (rc) return rc;
	pvec_push(w->params, x);
	col(w->c, w->sql, w->alias, a->name);
	sb_printf(w->sql, " %s ?", ne ? "!=" : op);
	return DJC_OK;
}

/* One object of the restriction: its conditions, ANDed. */
static int cond_obj(wctx *w, json_t *o)
{
	if (!json_is_object(o))
		return conn_fail(w->c, DJC_EINVAL, "restriction must be a JSON object or a list of objects");
	if (!json_object_size(o)) { sb_add(w->sql, "1=1"); return DJC_OK; }
	const char *k;
	json_t *v;
	int first = 1;
	sb_addc(w->sql, '(');
	json_object_foreach(o, k, v) {
		attr *a;
		int rc = where_attr(w, k, &a);
		if (rc) return rc;
		if (!first) sb_add(w->sql, " AND ");
		first = 0;
		if ((rc = cond_attr(w, a, v))) return rc;
	}
	sb_addc(w->sql, ')');
	return DJC_OK;
}

/* A long list of keys with the same attributes and plain values
 * ([{"a": 1, "b": "x"}, ...]) as one (a, b) IN condition, bound as one
 * parameter by the driver: 1 when written, 0 when the list is not such a
 * list or the driver cannot (the caller then builds it object by object),
 * or an error. */
static int keys_in(wctx *w, json_t *list)
{
	size_t n = json_array_size(list);
	json_t *o0 = json_array_get(list, 0);
	size_t k = json_is_object(o0) ? json_object_size(o0) : 0;
	if (n <= IN_BIND_MAX || !k || k > 8) return 0;
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
		int rc = where_value(w, as[r % k], json_object_get(json_array_get(list, r / k), names[r % k]), &vals[r]);
		if (rc) {
			for (size_t q = 0; q < r; q++) val_free(&vals[q]);
			free(vals);
			return rc;
		}
	}
	sb_t cs[8];
	const char *cols[8];
	const coldef *types[8];
	for (j = 0; j < k; j++) {
		sb_t z = SB_INIT;
		cs[j] = z;
		col(w->c, &cs[j], w->alias, as[j]->name);
		cols[j] = sb_str(&cs[j]);
		types[j] = &as[j]->type;
	}
	db_in in = {cols, types, k, vals, n, 0};
	val_t one[8];
	size_t nb = 0;
	int done = db_in_rows(w->c->db, &in, w->sql, one, &nb);
	for (size_t i = 0; i < nb; i++) pvec_push(w->params, one[i]);
	for (size_t i = 0; i < n * k; i++) val_free(&vals[i]);
	free(vals);
	for (j = 0; j < k; j++) sb_free(&cs[j]);
	return done;
}

int where_build(djc_conn *c, const table *t, const char *where_json, const char *alias, int source_only, sb_t *sql, pvec *params)
{
	if (!where_json || !*where_json) return DJC_OK;
	json_error_t je;
	json_t *j = json_loads(where_json, JSON_REJECT_DUPLICATES, &je);
	if (!j) return conn_fail(c, DJC_EINVAL, "restriction is not valid JSON (column %d): %s", je.column, je.text);
	wctx w = {c, t, alias, source_only, sql, params};
	size_t bound = params->n;
	int rc = DJC_OK;
	sb_add(sql, " AND (");
	if (json_is_array(j)) {
		int keys = json_array_size(j) ? keys_in(&w, j) : 0;
		if (keys < 0) rc = keys;
		if (!json_array_size(j)) sb_add(sql, "1=0");
		for (size_t i = 0; !keys && i < json_array_size(j) && !rc; i++) {
			if (i) sb_add(sql, " OR ");
			rc = cond_obj(&w, json_array_get(j, i));
		}
	} else
		rc = cond_obj(&w, j);
	sb_addc(sql, ')');
	json_decref(j);
	if (!rc && params->n - bound > WHERE_BOUND_MAX)
		rc = conn_fail(c, DJC_EINVAL, "restriction binds %zu values one by one, more than the %d allowed: give a long "
			       "list as one attribute's list ({\"id\": [...]}) or as keys of the same attributes "
			       "([{\"a\": 1, \"b\": 2}, ...])", params->n - bound, WHERE_BOUND_MAX);
	return rc;
}

/* ---------------------------------------------------------- key source */

/* The tables a key source joins, each with the attributes it brings. */
typedef struct ks_part {
	const table *tb;
	char **names;        /* the parent's key (default) or its heading (key_source = A * B) */
	size_t n;
} ks_part;

static int part_has(const ks_part *p, const char *name)
{
	for (size_t k = 0; k < p->n; k++)
		if (!strcmp(p->names[k], name)) return 1;
	return 0;
}

int keysource_sql(djc_conn *c, const table *t, sb_t *sql, pvec *params)
{
	/* the parents named in the primary key (or key_source's tables),
	 * joined on their shared attributes and projected on the key-source
	 * attributes; appended to what the caller already wrote into sql */
	size_t start = sql->len;
	size_t np = 0;
	ks_part ps[64];
	char **heads[64];
	if (t->nks) {
		for (size_t i = 0; i < t->nks && np < 64; i++) {
			const table *u = t->ks_tables[i];
			heads[np] = xcalloc(u->nattrs ? u->nattrs : 1, sizeof(char *));
			for (size_t k = 0; k < u->nattrs; k++) heads[np][k] = u->attrs[k].name;
			ps[np] = (ks_part){u, heads[np], u->nattrs};
			np++;
		}
	} else
		for (size_t i = 0; i < t->nfks && np < 64; i++)
			if (t->fks[i].in_key) {
				heads[np] = NULL;
				ps[np++] = (ks_part){t->fks[i].ptable, t->fks[i].attrs, t->fks[i].nattrs};
			}
	sb_add(sql, "SELECT DISTINCT ");
	for (size_t i = 0; i < t->nsrc; i++) {
		const attr *a = &t->attrs[t->src[i]];
		/* the first table holding the attribute supplies it */
		size_t owner = 0;
		for (size_t p = 0; p < np; p++)
			if (part_has(&ps[p], a->name)) { owner = p; break; }
		if (i) sb_add(sql, ", ");
		char al[24];
		snprintf(al, sizeof al, "s%zu", owner);
		col(c, sql, al, a->name);
		sb_add(sql, " AS ");
		db_qi(c->db, sql, a->name);
	}
	sb_add(sql, " FROM ");
	for (size_t p = 0; p < np; p++) {
		if (p) sb_add(sql, " JOIN ");
		db_qtable(c->db, sql, ps[p].tb->sql_name);
		sb_printf(sql, " s%zu", p);
		if (p) {
			int first = 1;
			for (size_t k = 0; k < ps[p].n; k++) {
				/* join on attributes an earlier table also has, where
				 * one of the two has it in its key (a secondary
				 * attribute of the same name in both is not a link:
				 * DataJoint 2's semantic join) */
				const attr *pa = table_attr(ps[p].tb, ps[p].names[k]);
				for (size_t e = 0; e < p; e++) {
					if (!part_has(&ps[e], ps[p].names[k])) continue;
					const attr *ea = table_attr(ps[e].tb, ps[p].names[k]);
					if (!(pa && pa->in_key) && !(ea && ea->in_key)) continue;
					sb_add(sql, first ? " ON " : " AND ");
					first = 0;
					char a1[24], a2[24];
					snprintf(a1, sizeof a1, "s%zu", e);
					snprintf(a2, sizeof a2, "s%zu", p);
					col(c, sql, a1, ps[p].names[k]);
					sb_add(sql, " = ");
					col(c, sql, a2, ps[p].names[k]);
					break;
				}
			}
			if (first) sb_add(sql, " ON 1=1");
		}
	}
	for (size_t p = 0; p < np; p++) free(heads[p]);
	if (t->key_source_where) {
		/* the standing restriction names attributes, which come from
		 * different parents: wrap the join (only the part this function
		 * wrote) as a derived table and restrict that */
		sb_t inner = SB_INIT;
		sb_addn(&inner, sql->s + start, sql->len - start);
		sql->len = start;
		sql->s[start] = 0;
		sb_add(sql, "SELECT * FROM (");
		sb_add(sql, sb_str(&inner));
		sb_add(sql, ") ksr WHERE 1=1");
		int rc = where_build(c, t, t->key_source_where, "ksr", 1, sql, params);
		sb_free(&inner);
		if (rc) return rc;
	}
	return DJC_OK;
}

void not_in_target_sql(djc_conn *c, const table *t, const char *alias, sb_t *sql)
{
	sb_add(sql, " AND NOT EXISTS (SELECT 1 FROM ");
	db_qtable(c->db, sql, t->sql_name);
	sb_add(sql, " tg WHERE ");
	for (size_t i = 0; i < t->nsrc; i++) {
		const char *n = t->attrs[t->src[i]].name;
		if (i) sb_add(sql, " AND ");
		col(c, sql, "tg", n);
		sb_add(sql, " = ");
		col(c, sql, alias, n);
	}
	sb_addc(sql, ')');
}

/* ----------------------------------------------------------------- rows */

static void now_text(char *buf, size_t n, int p)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	size_t k = strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
	if (p > 0) snprintf(buf + k, n - k, ".%06ld", ts.tv_nsec / 1000), buf[k + 1 + (size_t)p] = 0;
}

int row_prepare(djc_conn *c, const table *t, const djc_row *in, const djc_row *key, djc_row **out, char **msg)
{
	*out = NULL;
	*msg = NULL;
	djc_row *r = djc_row_new();
	for (size_t i = 0; i < in->n; i++) {
		const attr *a = table_attr(t, in->names[i]);
		if (!a) {
			sb_t b = SB_INIT;
			sb_add(&b, "unknown attribute ");
			json_quote(&b, in->names[i], strlen(in->names[i]));
			sb_printf(&b, " for table %s", t->name);
			*msg = sb_steal(&b);
			djc_row_free(r);
			return DJC_EINVAL;
		}
		val_t v;
		if (value_in(a, &in->vals[i], &v, msg)) { djc_row_free(r); return DJC_EINVAL; }
		row_put(r, a->name, &v);
	}
	if (key) {
		for (size_t i = 0; i < key->n; i++) {
			const attr *a = table_attr(t, key->names[i]);
			if (!a) continue;
			val_t v;
			if (value_in(a, &key->vals[i], &v, msg)) { djc_row_free(r); return DJC_EINVAL; }
			const val_t *have = row_get(r, a->name);
			if (have) {
				int same = have->t == v.t && have->i == v.i && have->u == v.u && have->f == v.f && have->n == v.n &&
					   (!have->s || !memcmp(have->s, v.s, v.n));
				if (!same) {
					*msg = xasprintf("row is for another key: attribute '%s' differs from the key being made", a->name);
					val_free(&v);
					djc_row_free(r);
					return DJC_EINVAL;
				}
				val_free(&v);
			} else
				row_put(r, a->name, &v);
		}
	}
	for (size_t i = 0; i < t->nattrs; i++) {
		const attr *a = &t->attrs[i];
		if (row_get(r, a->name)) continue;
		if (a->has_def) {
			val_t in_v, v;
			if (!strcasecmp(a->def, "CURRENT_TIMESTAMP")) {
				char buf[64];
				now_text(buf, sizeof buf, a->type.p);
				in_v = val_text(buf);
			} else {
				json_t *j = a->type.t <= T_BOOL ? json_loads(a->def, JSON_DECODE_ANY, NULL) : NULL;
				if (j) {
					int rc = value_from_json(a, j, &v, msg);
					json_decref(j);
					if (rc) { djc_row_free(r); return rc; }
					row_put(r, a->name, &v);
					continue;
				}
				in_v = val_text(a->def);
			}
			int rc = value_in(a, &in_v, &v, msg);
			val_free(&in_v);
			if (rc) { djc_row_free(r); return rc; }
			row_put(r, a->name, &v);
		} else if (a->nullable) {
			val_t v = val_null();
			row_put(r, a->name, &v);
		} else {
			*msg = xasprintf("missing %sattribute '%s' of table %s", a->in_key ? "primary key " : "", a->name, t->name);
			djc_row_free(r);
			return DJC_EINVAL;
		}
	}
	*out = r;
	return DJC_OK;
}

int rows_insert(djc_conn *c, const table *t, djc_row *const *rows, size_t n, int skip_dup, size_t *inserted, size_t *bad)
{
	/* one statement per row, so a failure names its row */
	if (inserted) *inserted = 0;
	for (size_t r = 0; r < n; r++) {
		size_t one = 0;
		int rc = rows_insert_many(c, t, &rows[r], 1, skip_dup, &one);
		if (rc) {
			if (bad) *bad = r;
			return rc;
		}
		if (inserted) *inserted += one;
	}
	return DJC_OK;
}

void stmt_list_add(stmt_list *l, sb_t *sql, pvec *p, long expect)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->items = xrealloc(l->items, l->cap * sizeof *l->items);
		l->texts = xrealloc(l->texts, l->cap * sizeof *l->texts);
		l->params = xrealloc(l->params, l->cap * sizeof *l->params);
	}
	memset(&l->items[l->n], 0, sizeof *l->items);
	l->items[l->n].expect = expect;
	l->texts[l->n] = *sql;
	l->params[l->n] = *p;
	memset(sql, 0, sizeof *sql);
	memset(p, 0, sizeof *p);
	l->n++;
}

void stmt_list_claim(stmt_list *l, const db_claim *cl)
{
	sb_t none = SB_INIT;
	pvec nop = {0};
	stmt_list_add(l, &none, &nop, -1);
	l->items[l->n - 1].claim = cl;
}

db_item *stmt_list_items(stmt_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->items[i].claim) continue;
		l->items[i].sql = sb_str(&l->texts[i]);
		l->items[i].params = l->params[i].v;
		l->items[i].np = l->params[i].n;
	}
	return l->items;
}

void stmt_list_free(stmt_list *l)
{
	for (size_t i = 0; i < l->n; i++) { sb_free(&l->texts[i]); pvec_free(&l->params[i]); }
	free(l->items);
	free(l->texts);
	free(l->params);
	memset(l, 0, sizeof *l);
}

void rows_insert_stmts(djc_conn *c, const table *t, djc_row *const *rows, size_t n, int skip_dup, stmt_list *l)
{
	/* make's rows carry the job metadata (the hidden columns, docs/parity.md)
	 * when the table has them; other rows leave them NULL */
	size_t ncol = t->nattrs + (t->nhidden && n && row_get(rows[0], t->attrs[t->nattrs].name) ? t->nhidden : 0);
	/* statements of at most 500 rows and ~30,000 parameters */
	size_t per = 30000 / (ncol ? ncol : 1);
	if (per > 500) per = 500;
	if (per < 1) per = 1;
	for (size_t at = 0; at < n; at += per) {
		size_t k = n - at < per ? n - at : per;
		sb_t q = SB_INIT;
		pvec p = {0};
		sb_add(&q, skip_dup ? db_insert_ignore_head(c->db) : "INSERT INTO");
		sb_addc(&q, ' ');
		db_qtable(c->db, &q, t->sql_name);
		sb_add(&q, " (");
		for (size_t i = 0; i < ncol; i++) {
			if (i) sb_add(&q, ", ");
			db_qi(c->db, &q, t->attrs[i].name);
		}
		sb_add(&q, ") VALUES ");
		for (size_t r = 0; r < k; r++) {
			sb_add(&q, r ? ", (" : "(");
			for (size_t i = 0; i < ncol; i++) {
				sb_add(&q, i ? ", ?" : "?");
				const val_t *v = row_get(rows[at + r], t->attrs[i].name);
				val_t x;
				if (v) val_copy(&x, v);
				else x = val_null();
				pvec_push(&p, x);
			}
			sb_addc(&q, ')');
		}
		if (skip_dup) sb_add(&q, db_insert_ignore_tail(c->db));
		stmt_list_add(l, &q, &p, -1);
	}
}

int rows_insert_many(djc_conn *c, const table *t, djc_row *const *rows, size_t n, int skip_dup, size_t *inserted)
{
	if (inserted) *inserted = 0;
	int rc = DJC_OK;
	/* a slice at a time: the statements hold copies of the values */
	for (size_t at = 0; at < n && !rc; at += 500) {
		stmt_list l = {0};
		rows_insert_stmts(c, t, rows + at, n - at < 500 ? n - at : 500, skip_dup, &l);
		db_item *it = stmt_list_items(&l);
		for (size_t i = 0; i < l.n && !rc; i++) {
			db_res *res = NULL;
			rc = db_exec(c->db, it[i].sql, it[i].params, it[i].np, &res);
			if (!rc && inserted) *inserted += (size_t)res->affected;
			db_res_free(res);
		}
		stmt_list_free(&l);
	}
	return rc;
}

int rows_select(djc_conn *c, const table *t, const char *sql, const pvec *params, djc_rowset **out)
{
	*out = NULL;
	db_res *r = NULL;
	int rc = db_exec(c->db, sql, params ? params->v : NULL, params ? params->n : 0, &r);
	if (rc) return conn_dbfail(c, rc, t->name);
	djc_rowset *rs = rowset_new();
	const attr **attrs = xcalloc(r->ncols, sizeof(attr *));
	for (size_t k = 0; k < r->ncols; k++) attrs[k] = table_attr_any(t, r->cols[k]);
	for (size_t i = 0; i < r->nrows; i++) {
		djc_row *row = djc_row_new();
		for (size_t k = 0; k < r->ncols; k++) {
			val_t v;
			if (attrs[k]) value_out(attrs[k], db_cell(r, i, k), &v);
			else val_copy(&v, db_cell(r, i, k));
			row_put(row, r->cols[k], &v);
		}
		rowset_push(rs, row);
	}
	free(attrs);
	db_res_free(r);
	*out = rs;
	return DJC_OK;
}

/* SELECT of t's attributes (with hidden: the job metadata columns too). */
static void select_cols(djc_conn *c, const table *t, sb_t *q, int hidden)
{
	sb_add(q, "SELECT ");
	for (size_t i = 0; i < t->nattrs + (hidden ? t->nhidden : 0); i++) {
		if (i) sb_add(q, ", ");
		db_qi(c->db, q, t->attrs[i].name);
	}
	sb_add(q, " FROM ");
	db_qtable(c->db, q, t->sql_name);
	sb_add(q, " WHERE 1=1");
}

static void order_by_key(djc_conn *c, const table *t, sb_t *q)
{
	sb_add(q, " ORDER BY ");
	for (size_t i = 0; i < t->nkey; i++) {
		if (i) sb_add(q, ", ");
		db_qi(c->db, q, t->attrs[i].name);
	}
}

/* ------------------------------------------------------------- public */

int djc_key_restriction(char **where_json, djc_conn *c, const char *name, const char *key_json)
{
	*where_json = NULL;
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	json_error_t je;
	json_t *j = key_json ? json_loads(key_json, JSON_REJECT_DUPLICATES, &je) : NULL;
	if (!j) return conn_fail(c, DJC_EINVAL, "key is not valid JSON%s", key_json ? "" : " (none given)");
	if (!json_is_object(j)) {
		json_decref(j);
		return conn_fail(c, DJC_EINVAL, "key must be a JSON object, e.g. {\"session_id\": 3}");
	}
	json_t *w = json_object();
	const char *k;
	json_t *v;
	json_object_foreach(j, k, v)
		if (table_attr(t, k)) json_object_set(w, k, v);
	if (!json_object_size(w)) {
		json_decref(w);
		json_decref(j);
		return conn_fail(c, DJC_EINVAL, "key shares no attribute with %s", t->name);
	}
	*where_json = json_dumps(w, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(w);
	json_decref(j);
	return DJC_OK;
}

static void select_all(djc_conn *c, const table *t, sb_t *q) { select_cols(c, t, q, 0); }

void djc_fetch_options_init(djc_fetch_options *o)
{
	djc_fetch_options d = DJC_FETCH_OPTIONS_INIT;
	*o = d;
}

int djc_fetch_ext(djc_rowset **out, djc_conn *c, const char *name, const char *where_json, const djc_fetch_options *opts)
{
	*out = NULL;
	if (opts && OPTS_VERSION(c, "fetch", opts, 1, FETCH)) return DJC_EINVAL;
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	sb_t q = SB_INIT;
	pvec p = {0};
	select_cols(c, t, &q, opts && opts->all_columns);
	if (!(rc = where_build(c, t, where_json, NULL, 0, &q, &p))) {
		order_by_key(c, t, &q);
		rc = rows_select(c, t, sb_str(&q), &p, out);
	}
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

int djc_fetch(djc_rowset **out, djc_conn *c, const char *name, const char *where_json)
{
	*out = NULL;
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	sb_t q = SB_INIT;
	pvec p = {0};
	select_all(c, t, &q);
	if (!(rc = where_build(c, t, where_json, NULL, 0, &q, &p))) {
		order_by_key(c, t, &q);
		rc = rows_select(c, t, sb_str(&q), &p, out);
	}
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

static char *child_refs(djc_conn *c, table *t, const char *where);

int djc_delete(size_t *deleted, djc_conn *c, const char *name, const char *where_json)
{
	if (deleted) *deleted = 0;
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	sb_t q = SB_INIT;
	pvec p = {0};
	sb_add(&q, "DELETE FROM ");
	db_qtable(c->db, &q, t->sql_name);
	sb_add(&q, " WHERE 1=1");
	if ((rc = where_build(c, t, where_json, NULL, 0, &q, &p))) goto out;
	db_res *r = NULL;
	if ((rc = db_begin(c->db))) { rc = conn_dbfail(c, rc, "delete"); goto out; }
	rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r);
	if (rc == DJC_EFOREIGN) {
		db_rollback(c->db);
		char *who = child_refs(c, t, where_json);
		rc = conn_fail(c, rc, "cannot delete from %s: %s (delete those first)", t->name, who);
		free(who);
		goto out;
	}
	if (rc) { rc = conn_dbfail(c, rc, t->name); db_rollback(c->db); goto out; }
	if (deleted) *deleted = (size_t)r->affected;
	db_res_free(r);
	if ((rc = db_commit(c->db))) { rc = conn_dbfail(c, rc, "delete"); db_rollback(c->db); }
out:
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

/* Untyped JSON for the public row API. */
char *djc_row_to_json(const djc_row *r)
{
	sb_t b = SB_INIT;
	sb_addc(&b, '{');
	for (size_t i = 0; r && i < r->n; i++) {
		if (i) sb_addc(&b, ',');
		json_quote(&b, r->names[i], strlen(r->names[i]));
		sb_addc(&b, ':');
		value_to_json(&b, NULL, &r->vals[i]);
	}
	sb_addc(&b, '}');
	return sb_steal(&b);
}

int djc_row_from_json(djc_row **out, const char *text, char **msg)
{
	if (msg) *msg = NULL;
	if (!out) return DJC_EINVAL;
	*out = NULL;
	if (!text) {
		if (msg) *msg = xstrdup("no JSON text (NULL)");
		return DJC_EINVAL;
	}
	json_error_t je;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!j || !json_is_object(j)) {
		if (msg) *msg = j ? xstrdup("expected a JSON object") : xasprintf("malformed JSON (column %d): %s", je.column, je.text);
		json_decref(j);
		return DJC_EINVAL;
	}
	const char *k;
	json_t *v;
	json_object_foreach(j, k, v)
		if (!*k) {   /* as the setters refuse an empty name */
			if (msg) *msg = xstrdup("an attribute name is empty");
			json_decref(j);
			return DJC_EINVAL;
		}
	djc_row *r = djc_row_new();
	json_object_foreach(j, k, v) {
		val_t x = {0};
		switch (json_typeof(v)) {
		case JSON_INTEGER: x = val_int(json_integer_value(v)); break;
		case JSON_REAL: x = val_float(json_real_value(v)); break;
		case JSON_TRUE: case JSON_FALSE: x.t = DJC_BOOL; x.i = json_is_true(v); break;
		case JSON_STRING: x = val_textn(json_string_value(v), json_string_length(v)); break;
		case JSON_NULL: break;
		default: {
			char *d = json_dumps(v, JSON_COMPACT);
			x = val_text(d);
			free(d);
		}
		}
		row_put(r, k, &x);
	}
	json_decref(j);
	*out = r;
	return DJC_OK;
}

/* ------------------------------------------------------ cascading delete */

/* Append the condition under which a row of S[i], named `ref` in the SQL,
 * is deleted: for the table deleted from (i = 0), the user's restriction;
 * for a dependent, that it references a deleted row of one of its parents
 * in S (S is in declaration order, so parents come before it). *alias
 * numbers the subqueries' aliases, unique within a statement so that no
 * inner alias hides an outer one. */
static int cascade_cond(djc_conn *c, table **S, size_t i, const char *where, const char *ref, int *alias, sb_t *sql,
			pvec *p)
{
	const table *x = S[i];
	if (i == 0) {
		sb_add(sql, "(1=1");
		int rc = where_build(c, x, where, ref, 0, sql, p);
		sb_addc(sql, ')');
		return rc;
	}
	sb_addc(sql, '(');
	int first = 1;
	for (size_t f = 0; f < x->nfks; f++) {
		size_t j = 0;
		while (j < i && S[j] != x->fks[f].ptable) j++;
		if (j == i) continue;
		char al[24];
		snprintf(al, sizeof al, "d%d", ++*alias);
		sb_add(sql, first ? "EXISTS (SELECT 1 FROM " : " OR EXISTS (SELECT 1 FROM ");
		first = 0;
		db_qtable(c->db, sql, S[j]->sql_name);
		sb_printf(sql, " %s WHERE ", al);
		for (size_t k = 0; k < x->fks[f].nattrs; k++) {
			col(c, sql, al, x->fks[f].attrs[k]);
			sb_add(sql, " = ");
			col(c, sql, ref, x->fks[f].attrs[k]);
			sb_add(sql, " AND ");
		}
		int rc = cascade_cond(c, S, j, where, al, alias, sql, p);
		if (rc) return rc;
		sb_addc(sql, ')');
	}
	if (first) sb_add(sql, "1=0");
	sb_addc(sql, ')');
	return DJC_OK;
}

/* SELECT COUNT(*) of sql's rows, or -1 on error (c->err set). */
static long long count_of(djc_conn *c, const char *sql, const pvec *p, int *rc)
{
	db_res *r = NULL;
	if ((*rc = db_exec(c->db, sql, p->v, p->n, &r))) return -1;
	long long n = r->nrows ? (long long)db_cell_int(r, 0, 0) : 0;
	db_res_free(r);
	return n;
}

/* After a delete from t restricted by where failed on a foreign key (and
 * was rolled back): "2 rows of Session reference them" for the first table
 * whose rows reference a row to delete, or "rows of a child table
 * reference them" when none does by now. Caller frees. */
static char *child_refs(djc_conn *c, table *t, const char *where)
{
	for (size_t i = 0; c->pipe && i < c->pipe->n; i++) {
		table *S[2] = {t, c->pipe->tables[i]};
		int child = 0;
		for (size_t f = 0; f < S[1]->nfks; f++) child = child || S[1]->fks[f].ptable == t;
		if (!child || S[1] == t) continue;
		sb_t q = SB_INIT, ref = SB_INIT;
		pvec p = {0};
		int alias = 0, rc;
		db_qtable(c->db, &ref, S[1]->sql_name);
		sb_printf(&q, "SELECT COUNT(*) FROM %s WHERE ", sb_str(&ref));
		rc = cascade_cond(c, S, 1, where, sb_str(&ref), &alias, &q, &p);
		long long n = rc ? -1 : count_of(c, sb_str(&q), &p, &rc);
		sb_free(&q);
		sb_free(&ref);
		pvec_free(&p);
		if (n > 0) return xasprintf("%lld row%s of %s reference%s them", n, n == 1 ? "" : "s", S[1]->name, n == 1 ? "s" : "");
	}
	return xstrdup("rows of a child table reference them");
}

static int delete_once(djc_conn *c, table **S, size_t nS, const char *where, const djc_delete_options *o, djc_changes *ch)
{
	sb_t q = SB_INIT, ref = SB_INIT;
	pvec p = {0};
	int rc, alias = 0;
	long long *counts = xcalloc(nS, sizeof(long long));
	if ((rc = db_begin(c->db))) { rc = conn_dbfail(c, rc, "delete"); goto out; }
	/* DataJoint's part integrity: a part's rows go only with their master's */
	for (size_t i = 0; i < nS && o->cascade; i++) {
		table *x = S[i];
		if (!x->master) continue;
		size_t m = 0;
		while (m < nS && S[m] != x->master) m++;
		sb_reset(&q); sb_reset(&ref); pvec_free(&p);
		db_qtable(c->db, &ref, x->sql_name);
		sb_add(&q, "SELECT COUNT(*) FROM ");
		sb_add(&q, sb_str(&ref));
		sb_add(&q, " WHERE ");
		if ((rc = cascade_cond(c, S, i, where, sb_str(&ref), &alias, &q, &p))) goto fail;
		if (m < nS) {
			sb_add(&q, " AND NOT EXISTS (SELECT 1 FROM ");
			db_qtable(c->db, &q, x->master->sql_name);
			sb_add(&q, " pm WHERE ");
			for (size_t k = 0; k < x->master->nkey; k++) {
				col(c, &q, "pm", x->master->attrs[k].name);
				sb_add(&q, " = ");
				col(c, &q, sb_str(&ref), x->master->attrs[k].name);
				sb_add(&q, " AND ");
			}
			if ((rc = cascade_cond(c, S, m, where, "pm", &alias, &q, &p))) goto fail;
			sb_addc(&q, ')');
		}
		long long n = count_of(c, sb_str(&q), &p, &rc);
		if (rc) { rc = conn_dbfail(c, rc, x->name); goto fail; }
		if (n > 0) {
			rc = conn_fail(c, DJC_EINVAL, "cannot delete %lld row%s of part table %s without their master rows in %s "
				       "(DataJoint's part integrity): delete from %s instead", n, n == 1 ? "" : "s", x->name,
				       x->master->name, x->master->name);
			goto fail;
		}
	}
	/* the counts, in the order of deletion: dependents first */
	for (size_t i = nS; i-- > 0;) {
		sb_reset(&q); sb_reset(&ref); pvec_free(&p);
		db_qtable(c->db, &ref, S[i]->sql_name);
		sb_add(&q, o->dry_run ? "SELECT COUNT(*) FROM " : "DELETE FROM ");
		sb_add(&q, sb_str(&ref));
		sb_add(&q, " WHERE ");
		if ((rc = cascade_cond(c, S, i, where, sb_str(&ref), &alias, &q, &p))) goto fail;
		if (i > 0 && S[i]->jobs_name) {
			/* jobs of keys whose upstream rows go: a job for a key that has
			 * left the key source would only fail (or linger). Jobs of the
			 * table deleted from are kept: their upstream rows stay, and
			 * refresh re-adds or re-pends them. */
			sb_t jq = SB_INIT, jref = SB_INIT;
			pvec jp = {0};
			db_qtable(c->db, &jref, S[i]->jobs_name);
			sb_add(&jq, o->dry_run ? "SELECT COUNT(*) FROM " : "DELETE FROM ");
			sb_add(&jq, sb_str(&jref));
			sb_add(&jq, " WHERE 1=0");
			int any = 0;
			for (size_t f = 0; f < S[i]->nfks && !rc; f++) {
				const fkey *fk = &S[i]->fks[f];
				size_t j = 0;
				while (j < i && S[j] != fk->ptable) j++;
				if (j == i || !fk->in_key) continue;
				any = 1;
				char al[24];
				snprintf(al, sizeof al, "d%d", ++alias);
				sb_add(&jq, " OR EXISTS (SELECT 1 FROM ");
				db_qtable(c->db, &jq, S[j]->sql_name);
				sb_printf(&jq, " %s WHERE ", al);
				for (size_t k = 0; k < fk->nattrs; k++) {
					col(c, &jq, al, fk->attrs[k]);
					sb_add(&jq, " = ");
					col(c, &jq, sb_str(&jref), fk->attrs[k]);
					sb_add(&jq, " AND ");
				}
				rc = cascade_cond(c, S, j, where, al, &alias, &jq, &jp);
				sb_addc(&jq, ')');
			}
			db_res *r = NULL;
			if (!rc && any && (rc = db_exec(c->db, sb_str(&jq), jp.v, jp.n, &r))) rc = conn_dbfail(c, rc, S[i]->jobs_name);
			long long nj = !r ? 0 : o->dry_run ? (r->nrows ? (long long)db_cell_int(r, 0, 0) : 0) : r->affected;
			if (!rc && nj > 0) changes_add(ch, S[i]->name, S[i]->jobs_name, "delete jobs", nj);
			db_res_free(r);
			sb_free(&jq);
			sb_free(&jref);
			pvec_free(&jp);
			if (rc) goto fail;
		}
		if (o->dry_run) {
			counts[i] = count_of(c, sb_str(&q), &p, &rc);
		} else {
			db_res *r = NULL;
			rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r);
			counts[i] = r ? r->affected : -1;
			db_res_free(r);
		}
		if (rc == DJC_EFOREIGN && !o->cascade) {
			db_rollback(c->db);
			char *who = child_refs(c, S[i], where);
			rc = conn_fail(c, rc, "cannot delete from %s: %s (delete those first, or delete with cascade)", S[i]->name,
				       who);
			free(who);
			goto out;
		}
		if (rc) { rc = conn_dbfail(c, rc, S[i]->name); goto fail; }
		changes_add(ch, S[i]->name, S[i]->sql_name, "delete", counts[i]);
	}
	if (o->dry_run) {
		db_rollback(c->db);
		goto out;
	}
	if ((rc = db_commit(c->db))) { rc = conn_dbfail(c, rc, "delete"); db_rollback(c->db); goto out; }
	ch->applied = 1;
	goto out;
fail:
	db_rollback(c->db);
out:
	free(counts);
	sb_free(&q);
	sb_free(&ref);
	pvec_free(&p);
	return rc;
}

int djc_delete_ext(djc_changes **out, djc_conn *c, const char *name, const char *where_json,
		   const djc_delete_options *opts)
{
	if (out) *out = NULL;
	if (!c) return DJC_EINVAL;
	djc_delete_options o = DJC_DELETE_OPTIONS_INIT;
	if (opts) {
		if (OPTS_VERSION(c, "delete", opts, 1, DELETE)) return DJC_EINVAL;
		o = *opts;
	}
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	/* the tables other processes declared since may depend on t */
	if ((rc = pipe_load(c)) || (rc = conn_table(c, name, &t))) return rc;
	size_t nS = 1;
	table **S = o.cascade ? pipe_descendants(c, t, &nS) : xcalloc(1, sizeof(table *));
	S[0] = t;
	djc_changes *ch = NULL;
	/* a row inserted meanwhile that references one being deleted makes
	 * the DELETE of its parent fail: count again and retry, a few times;
	 * deadlocks and the like as every transaction does (conn_retry) */
	for (int attempt = 0, fk = 0;;) {
		djc_changes_free(ch);
		ch = xcalloc(1, sizeof *ch);
		rc = delete_once(c, S, nS, where_json, &o, ch);
		if (rc == DJC_EFOREIGN && o.cascade && ++fk < 5) continue;
		if (!conn_retry(c, rc, 1, 0, &attempt)) break;
	}
	free(S);
	if (out) *out = ch;
	else djc_changes_free(ch);
	return rc;
}

/* The name before the API's convention (djc.h): deprecated, removed in 0.2. */
int djc_delete_with_options(djc_changes **out, djc_conn *c, const char *name, const char *where_json,
			    const djc_delete_options *opts)
{
	return djc_delete_ext(out, c, name, where_json, opts);
}
