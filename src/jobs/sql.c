/* sql.c - expanding the jobs layer's statement templates (sql.h) for one
 * connection and table, and running them. */
#include "sql.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *jobs_col(const table *t, const char *name, sb_t *buf)
{
	sb_reset(buf);
	/* a key attribute keeps its name (it is the target's); the jobs
	 * table's own column steps aside. Attribute names start with a
	 * letter, so `_name` is never a key attribute's. */
	for (size_t i = 0; i < t->nsrc; i++)
		if (!strcmp(t->attrs[t->src[i]].name, name)) {
			sb_addc(buf, '_');
			break;
		}
	sb_add(buf, name);
	return sb_str(buf);
}

const char *jobs_hist_name(const table *t, sb_t *buf)
{
	sb_reset(buf);
	sb_add(buf, t->hist_name);   /* schema/parse.c names it */
	return sb_str(buf);
}

static int is_job_col(const char *name, size_t n)
{
	for (size_t i = 0; i < NJOB_COLS; i++)
		if (strlen(JOB_COLS[i].name) == n && !strncmp(JOB_COLS[i].name, name, n)) return 1;
	for (size_t i = 0; i < NHIST_COLS; i++)
		if (strlen(HIST_COLS[i].name) == n && !strncmp(HIST_COLS[i].name, name, n)) return 1;
	return 0;
}

static void qcol(djc_conn *c, const table *t, const char *name, sb_t *q)
{
	sb_t b = SB_INIT;
	db_qi(c->db, q, jobs_col(t, name, &b));
	sb_free(&b);
}

/* An alias of a fragment: J, T and H are the jobs, target and history tables. */
static void alias(djc_conn *c, const table *t, const char *a, size_t n, sb_t *q)
{
	if (n == 1 && *a == 'J') db_qtable(c->db, q, t->jobs_name);
	else if (n == 1 && *a == 'T') db_qtable(c->db, q, t->sql_name);
	else if (n == 1 && *a == 'H') {
		sb_t b = SB_INIT;
		db_qtable(c->db, q, jobs_hist_name(t, &b));
		sb_free(&b);
	} else sb_addn(q, a, n);
}

static void key_cols(djc_conn *c, const table *t, const char *a, size_t an, sb_t *q)
{
	for (size_t i = 0; i < t->nsrc; i++) {
		if (i) sb_add(q, ", ");
		if (an) { alias(c, t, a, an, q); sb_addc(q, '.'); }
		db_qi(c->db, q, t->attrs[t->src[i]].name);
	}
}

static void push_key_val(const table *t, const djc_row *key, size_t i, pvec *p)
{
	const val_t *v = key ? row_get(key, t->attrs[t->src[i]].name) : NULL;
	val_t x;
	if (v) val_copy(&x, v);
	else x = val_null();
	pvec_push(p, x);
}

static void key_eq(djc_conn *c, const table *t, const djc_row *key, sb_t *q, pvec *p)
{
	for (size_t i = 0; i < t->nsrc; i++) {
		if (i) sb_add(q, " AND ");
		db_qi(c->db, q, t->attrs[t->src[i]].name);
		sb_add(q, " = ?");
		push_key_val(t, key, i, p);
	}
}

static int bad(djc_conn *c, const jsql *s, const char *what, const char *f, size_t n)
{
	return conn_fail(c, DJC_ERROR, "jobs statement %s: %s {%.*s}", s->name, what, (int)n, f);
}

int jsql_expand(djc_conn *c, const jsql *s, const jctx *x, const val_t *args, size_t nargs, sb_t *q, pvec *p)
{
	const table *t = x->t;
	size_t ai = 0;
	int rc = DJC_OK;
	for (const char *s0 = s->sql; *s0 && !rc;) {
		if (*s0 == '\'') {
			/* a literal: copied as is */
			const char *e = strchr(s0 + 1, '\'');
			size_t n = e ? (size_t)(e - s0) + 1 : strlen(s0);
			sb_addn(q, s0, n);
			s0 += n;
			continue;
		}
		if (*s0 == '?') {
			if (ai >= nargs) return conn_fail(c, DJC_ERROR, "jobs statement %s: more ? than the %zu arguments", s->name, nargs);
			val_t v;
			val_copy(&v, &args[ai++]);
			pvec_push(p, v);
			sb_addc(q, '?');
			s0++;
			continue;
		}
		if (*s0 != '{') {
			sb_addc(q, *s0++);
			continue;
		}
		const char *f = s0 + 1, *end = strchr(f, '}');
		if (!end) return bad(c, s, "unterminated", f, strlen(f));
		size_t n = (size_t)(end - f);
		s0 = end + 1;
		const char *colon = memchr(f, ':', n);
		size_t head = colon ? (size_t)(colon - f) : n;
#define IS(lit) (head == sizeof lit - 1 && !strncmp(f, lit, head))
		if (IS("N") && x->named) db_qtable(c->db, q, x->named);
		else if (IS("J") || IS("T") || IS("H")) alias(c, t, f, 1, q);
		else if (IS("now")) c->db->drv->now(q);
		else if (IS("now+?")) {
			if (ai >= nargs) return bad(c, s, "no argument for", f, n);
			c->db->drv->now_plus(q);
			val_t v;
			val_copy(&v, &args[ai++]);
			pvec_push(p, v);
		} else if (IS("key")) key_eq(c, t, x->key, q, p);
		else if (IS("keyvals")) {
			for (size_t i = 0; i < t->nsrc; i++) {
				sb_add(q, i ? ", ?" : "?");
				push_key_val(t, x->key, i, p);
			}
		} else if (IS("keyin")) {
			sb_addc(q, '(');
			for (size_t k = 0; k < x->nkeys; k++) {
				sb_add(q, k ? " OR (" : "(");
				key_eq(c, t, x->keys[k], q, p);
				sb_addc(q, ')');
			}
			if (!x->nkeys) sb_add(q, "1=0");
			sb_addc(q, ')');
		} else if (IS("keys")) key_cols(c, t, colon ? colon + 1 : NULL, colon ? n - head - 1 : 0, q);
		else if (IS("cols") || IS("hcols")) {
			const jcol *cols = IS("cols") ? JOB_COLS : HIST_COLS;
			size_t nc = IS("cols") ? NJOB_COLS : NHIST_COLS;
			for (size_t i = 0; i < nc; i++) {
				if (i) sb_add(q, ", ");
				qcol(c, t, cols[i].name, q);
			}
		} else if (IS("join")) {
			/* join:A:B */
			const char *a = colon ? colon + 1 : NULL;
			const char *b = a ? memchr(a, ':', (size_t)(end - a)) : NULL;
			if (!b) return bad(c, s, "malformed", f, n);
			size_t an = (size_t)(b - a), bn = (size_t)(end - b - 1);
			for (size_t i = 0; i < t->nsrc; i++) {
				if (i) sb_add(q, " AND ");
				alias(c, t, a, an, q);
				sb_addc(q, '.');
				db_qi(c->db, q, t->attrs[t->src[i]].name);
				sb_add(q, " = ");
				alias(c, t, b + 1, bn, q);
				sb_addc(q, '.');
				db_qi(c->db, q, t->attrs[t->src[i]].name);
			}
		} else if (IS("keysource")) rc = keysource_sql(c, t, q, p);
		else if (IS("where")) {
			char *al = colon ? xstrndup(colon + 1, n - head - 1) : NULL;
			rc = where_build(c, t, x->where, al, 1, q, p);
			free(al);
		} else if (IS("prio")) {
			if (x->max_priority >= 0) {
				sb_add(q, " AND ");
				qcol(c, t, "priority", q);
				sb_add(q, " <= ?");
				pvec_push(p, val_int(x->max_priority));
			}
		} else if (IS("ifstatus")) {
			if (x->status) {
				sb_add(q, " AND ");
				qcol(c, t, "status", q);
				sb_add(q, " = ?");
				pvec_push(p, val_text(x->status));
			}
		} else if (IS("by") || IS("delete")) {
			/* by:SUFFIX - read the jobs table with its index SUFFIX
			 * (ddl.c), where the dialect names one; delete:SUFFIX -
			 * "DELETE FROM {J}", reading it with that index where the
			 * driver must be told */
			if (!colon) return bad(c, s, "malformed", f, n);
			int del = IS("delete");
			sb_t ix = SB_INIT;
			char *sfx = xstrndup(colon + 1, n - head - 1);
			table_jobs_index(&ix, t, sfx);   /* names.c */
			free(sfx);
			if (del && c->db->drv->delete_using) c->db->drv->delete_using(c->db, q, t->jobs_name, sb_str(&ix));
			else if (del) {
				sb_add(q, "DELETE FROM ");
				db_qtable(c->db, q, t->jobs_name);
			} else if (c->db->drv->index_hint) {
				sb_add(q, c->db->drv->index_hint);
				db_qi(c->db, q, sb_str(&ix));
			}
			sb_free(&ix);
		} else if (IS("insert_ignore")) sb_add(q, c->db->drv->insert_ignore_head);
		else if (IS("insert_ignore_tail")) sb_add(q, c->db->drv->insert_ignore_tail);
		else if (!colon && is_job_col(f, n)) {
			char *name = xstrndup(f, n);
			qcol(c, t, name, q);
			free(name);
		} else
			return bad(c, s, "unknown fragment", f, n);
#undef IS
	}
	if (!rc && ai != nargs)
		return conn_fail(c, DJC_ERROR, "jobs statement %s: %zu arguments given, %zu used", s->name, nargs, ai);
	return rc;
}

int jsql_run(djc_conn *c, const jsql *s, const jctx *x, const val_t *args, size_t nargs, db_res **out)
{
	if (out) *out = NULL;
	sb_t q = SB_INIT;
	pvec p = {0};
	int rc = jsql_expand(c, s, x, args, nargs, &q, &p);
	if (!rc && (rc = db_exec(c->db, sb_str(&q), p.v, p.n, out))) rc = conn_dbfail(c, rc, s->name);
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

int jsql_count(djc_conn *c, const jsql *s, const jctx *x, const val_t *args, size_t nargs, long *n)
{
	db_res *r = NULL;
	*n = 0;
	int rc = jsql_run(c, s, x, args, nargs, &r);
	if (!rc) *n = (long)r->affected;
	db_res_free(r);
	return rc;
}
