/* rows.c - insert, fetch and delete rows; restrictions; key sources. */
#include "table.h"
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

/* ------------------------------------------------------- restrictions */

static int cond_obj(djc_conn *c, const table *t, json_t *o, const char *alias, int source_only, sb_t *sql, pvec *params)
{
	if (!json_is_object(o)) return conn_fail(c, DJC_EINVAL, "restriction must be a JSON object or a list of objects");
	if (!json_object_size(o)) { sb_add(sql, "1=1"); return DJC_OK; }
	const char *k;
	json_t *v;
	int first = 1;
	sb_addc(sql, '(');
	json_object_foreach(o, k, v) {
		attr *a = table_attr(t, k);
		int ok = a != NULL;
		if (ok && source_only) {
			ok = 0;
			for (size_t i = 0; i < t->nsrc; i++) if (&t->attrs[t->src[i]] == a) ok = 1;
		}
		if (!ok) {
			sb_t b = SB_INIT;
			json_quote(&b, k, strlen(k));
			int rc = conn_fail(c, DJC_EINVAL, "restriction names %s, which is not %s of %s", sb_str(&b),
					   source_only ? "a key attribute from its parents" : "an attribute", t->name);
			sb_free(&b);
			return rc;
		}
		if (!first) sb_add(sql, " AND ");
		first = 0;
		if (json_is_null(v)) { col(c, sql, alias, a->name); sb_add(sql, " IS NULL"); continue; }
		if (a->type.t == T_JSON) {
			/* backends cannot compare JSON values alike (PostgreSQL has no json = json) */
			json_t *nn = json_is_object(v) && json_object_size(v) == 1 ? json_object_get(v, "!=") : NULL;
			if (!nn || !json_is_null(nn))
				return conn_fail(c, DJC_EINVAL, "json attribute '%s' can only be restricted to null or {\"!=\": null}",
						 a->name);
			col(c, sql, alias, a->name);
			sb_add(sql, " IS NOT NULL");
			continue;
		}
		const char *op = "=";
		json_t *val = v;
		if (json_is_object(v) && a->type.t != T_JSON) {
			if (json_object_size(v) != 1)
				return conn_fail(c, DJC_EINVAL, "restriction on '%s' must have one operator, e.g. {\">\": 3}", a->name);
			void *it = json_object_iter(v);
			op = json_object_iter_key(it);
			val = json_object_iter_value(it);
			static const char *ops[] = {"=", "!=", "<>", "<", "<=", ">", ">=", "in", "not in", NULL};
			int okop = 0;
			for (int i = 0; ops[i]; i++) if (!strcmp(op, ops[i])) okop = 1;
			if (!okop) return conn_fail(c, DJC_EINVAL, "unknown operator '%s' in restriction on '%s' (use = != < <= > >= in)", op, a->name);
			if (!strcmp(op, "<>")) op = "!=";
		}
		if (json_is_array(val) || !strcmp(op, "in") || !strcmp(op, "not in")) {
			if (!json_is_array(val)) return conn_fail(c, DJC_EINVAL, "'%s' on '%s' takes a list", op, a->name);
			int neg = !strcmp(op, "not in") || !strcmp(op, "!=");
			if (!json_array_size(val)) { sb_add(sql, neg ? "1=1" : "1=0"); continue; }
			col(c, sql, alias, a->name);
			sb_add(sql, neg ? " NOT IN (" : " IN (");
			for (size_t i = 0; i < json_array_size(val); i++) {
				val_t x;
				char *msg = NULL;
				if (value_from_json(a, json_array_get(val, i), &x, &msg)) {
					int rc = conn_fail(c, DJC_EINVAL, "restriction: %s", msg);
					free(msg);
					return rc;
				}
				pvec_push(params, x);
				sb_add(sql, i ? ", ?" : "?");
			}
			sb_addc(sql, ')');
			continue;
		}
		val_t x;
		char *msg = NULL;
		if (value_from_json(a, val, &x, &msg)) {
			int rc = conn_fail(c, DJC_EINVAL, "restriction: %s", msg);
			free(msg);
			return rc;
		}
		if (x.t == DJC_NULL) {
			col(c, sql, alias, a->name);
			sb_add(sql, strcmp(op, "!=") ? " IS NULL" : " IS NOT NULL");
			continue;
		}
		pvec_push(params, x);
		col(c, sql, alias, a->name);
		sb_printf(sql, " %s ?", op);
	}
	sb_addc(sql, ')');
	return DJC_OK;
}

int where_build(djc_conn *c, const table *t, const char *where_json, const char *alias, int source_only, sb_t *sql, pvec *params)
{
	if (!where_json || !*where_json) return DJC_OK;
	json_error_t je;
	json_t *j = json_loads(where_json, JSON_REJECT_DUPLICATES, &je);
	if (!j) return conn_fail(c, DJC_EINVAL, "restriction is not valid JSON (column %d): %s", je.column, je.text);
	int rc = DJC_OK;
	sb_add(sql, " AND (");
	if (json_is_array(j)) {
		if (!json_array_size(j)) sb_add(sql, "1=0");
		for (size_t i = 0; i < json_array_size(j) && !rc; i++) {
			if (i) sb_add(sql, " OR ");
			rc = cond_obj(c, t, json_array_get(j, i), alias, source_only, sql, params);
		}
	} else
		rc = cond_obj(c, t, j, alias, source_only, sql, params);
	sb_addc(sql, ')');
	json_decref(j);
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
		sb_add(&q, skip_dup ? c->db->drv->insert_ignore_head : "INSERT INTO");
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
		if (skip_dup) sb_add(&q, c->db->drv->insert_ignore_tail);
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
	if (opts && opts->version != DJC_FETCH_OPTIONS_VERSION)
		return conn_fail(c, DJC_EINVAL, "fetch options version %d is not %d (use DJC_FETCH_OPTIONS_INIT)", opts->version,
				 DJC_FETCH_OPTIONS_VERSION);
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
		rc = conn_fail(c, rc, "cannot delete from %s: rows of a child table reference them (delete those first)", t->name);
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
			rc = conn_fail(c, rc, "cannot delete from %s: rows of a child table reference them (delete those first, "
				       "or delete with cascade)", S[i]->name);
			goto fail;
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

int djc_delete_with_options(djc_changes **out, djc_conn *c, const char *name, const char *where_json,
			    const djc_delete_options *opts)
{
	if (out) *out = NULL;
	if (!c) return DJC_EINVAL;
	djc_delete_options o = DJC_DELETE_OPTIONS_INIT;
	if (opts) {
		if (opts->version != DJC_DELETE_OPTIONS_VERSION)
			return conn_fail(c, DJC_EINVAL, "djc_delete_options version %d is not %d", opts->version,
					 DJC_DELETE_OPTIONS_VERSION);
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
