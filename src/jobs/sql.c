/* sql.c - the jobs layer's fragments of statement templates (sql.h), for
 * the one expander (sql/expand.c), and running the statements. */
#include "sql.h"
#include "sql/ddl.h"
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
	else if (n == 1 && *a == 'T') table_qname(c->db, q, t);
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

/* A key's value as its column stores it: a job's key is in the form it was
 * read in (a uuid of DataJoint's on MySQL as text, its column 16 bytes) */
static void push_key_val(const table *t, const djc_row *key, size_t i, pvec *p)
{
	const attr *a = &t->attrs[t->src[i]];
	const val_t *v = key ? row_get(key, a->name) : NULL;
	val_t x;
	if (v) value_stored(a, v, &x);
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

/* What the jobs layer's fragments refer to (jobs_frag's context). */
typedef struct jexp {
	djc_conn *c;
	const jctx *x;
} jexp;

/* {keys} {keys:A} {keyvals} {key} {keyin}: the key's columns, values and
 * conditions; SQL_FRAG_UNKNOWN for another fragment. */
static int key_frag(djc_conn *c, const jctx *x, sql_exp *e, const sql_frag *f)
{
	const table *t = x->t;
	sb_t *q = e->q;
	pvec *p = e->params;
	if (SQL_FRAG_IS(f, "key")) key_eq(c, t, x->key, q, p);
	else if (SQL_FRAG_IS(f, "keyvals")) {
		for (size_t i = 0; i < t->nsrc; i++) {
			sb_add(q, i ? ", ?" : "?");
			push_key_val(t, x->key, i, p);
		}
	} else if (SQL_FRAG_IS(f, "keyin")) {
		sb_addc(q, '(');
		for (size_t k = 0; k < x->nkeys; k++) {
			sb_add(q, k ? " OR (" : "(");
			key_eq(c, t, x->keys[k], q, p);
			sb_addc(q, ')');
		}
		if (!x->nkeys) sb_add(q, "1=0");
		sb_addc(q, ')');
	} else if (SQL_FRAG_IS(f, "keys")) key_cols(c, t, f->arg, f->an, q);
	else return SQL_FRAG_UNKNOWN;
	return DJC_OK;
}

/* {join:A:B}: "A.k1 = B.k1 AND ..." */
static int join_frag(djc_conn *c, const table *t, sql_exp *e, const sql_frag *f)
{
	const char *a = f->arg;
	const char *b = a ? memchr(a, ':', f->an) : NULL;
	if (!b) return sql_bad(e, "malformed", f);
	size_t an = (size_t)(b - a), bn = f->an - an - 1;
	for (size_t i = 0; i < t->nsrc; i++) {
		if (i) sb_add(e->q, " AND ");
		alias(c, t, a, an, e->q);
		sb_addc(e->q, '.');
		db_qi(c->db, e->q, t->attrs[t->src[i]].name);
		sb_add(e->q, " = ");
		alias(c, t, b + 1, bn, e->q);
		sb_addc(e->q, '.');
		db_qi(c->db, e->q, t->attrs[t->src[i]].name);
	}
	return DJC_OK;
}

/* {where} {where:A} {prio} {ifstatus}: the caller's optional conditions;
 * SQL_FRAG_UNKNOWN for another fragment. */
static int cond_frag(djc_conn *c, const jctx *x, sql_exp *e, const sql_frag *f)
{
	if (SQL_FRAG_IS(f, "where")) {
		char *al = f->arg ? xstrndup(f->arg, f->an) : NULL;
		int rc = where_build(c, x->t, x->where, al, 1, e->q, e->params);
		free(al);
		return rc;
	}
	if (SQL_FRAG_IS(f, "prio")) {
		if (x->max_priority < 0) return DJC_OK;
		sb_add(e->q, " AND ");
		qcol(c, x->t, "priority", e->q);
		sb_add(e->q, " <= ?");
		sql_push(e, val_int(x->max_priority));
		return DJC_OK;
	}
	if (SQL_FRAG_IS(f, "ifstatus")) {
		if (!x->status) return DJC_OK;
		sb_add(e->q, " AND ");
		qcol(c, x->t, "status", e->q);
		sb_add(e->q, " = ?");
		sql_push(e, val_text(x->status));
		return DJC_OK;
	}
	return SQL_FRAG_UNKNOWN;
}

/* {by:SUFFIX} - read the jobs table with its index SUFFIX (ddl.c), where
 * the dialect names one; {delete:SUFFIX} - "DELETE FROM {J}", reading it
 * with that index where the driver must be told. */
static int index_frag(djc_conn *c, const table *t, sql_exp *e, const sql_frag *f)
{
	if (!f->arg) return sql_bad(e, "malformed", f);
	sb_t ix = SB_INIT;
	char *sfx = xstrndup(f->arg, f->an);
	table_jobs_index(&ix, t, sfx);   /* names.c */
	free(sfx);
	if (SQL_FRAG_IS(f, "delete")) db_delete_from(c->db, e->q, t->jobs_name, sb_str(&ix));
	else db_index_hint(c->db, e->q, sb_str(&ix));
	sb_free(&ix);
	return DJC_OK;
}

/* The column jc of JOB_COLS or HIST_COLS, as DDL: name, type, NOT NULL,
 * DEFAULT. */
static void col_ddl(djc_conn *c, const table *t, const jcol *jc, sb_t *q)
{
	sb_t b = SB_INIT;
	attr a = {.name = (char *)jobs_col(t, jc->name, &b), .type = {jc->type, jc->p, 0, NULL, 0}};
	ddl_column(c->db, q, &a, jc->not_null);
	if (jc->def) sb_printf(q, " DEFAULT %s", jc->def);
	sb_free(&b);
}

/* {srcdefs} {coldefs} {hcoldefs} {attrdefs} {coldef}: column DDL; SQL_FRAG_UNKNOWN
 * for another fragment. */
static int ddl_frag(djc_conn *c, const jctx *x, sql_exp *e, const sql_frag *f)
{
	const table *t = x->t;
	if (f->arg) return SQL_FRAG_UNKNOWN;
	if (SQL_FRAG_IS(f, "srcdefs")) {
		for (size_t i = 0; i < t->nsrc; i++) {
			if (i) sb_add(e->q, ", ");
			ddl_column(c->db, e->q, &t->attrs[t->src[i]], 1);
		}
	} else if (SQL_FRAG_IS(f, "coldefs") || SQL_FRAG_IS(f, "hcoldefs")) {
		int job = SQL_FRAG_IS(f, "coldefs");
		const jcol *cols = job ? JOB_COLS : HIST_COLS;
		size_t nc = job ? NJOB_COLS : NHIST_COLS;
		for (size_t i = 0; i < nc; i++) {
			if (i) sb_add(e->q, ", ");
			col_ddl(c, t, &cols[i], e->q);
		}
	} else if (SQL_FRAG_IS(f, "attrdefs")) {
		for (size_t i = 0; i < x->nattrs; i++) {
			if (i) sb_add(e->q, ", ");
			ddl_column(c->db, e->q, &x->attrs[i], !x->attrs[i].nullable);
		}
	} else if (SQL_FRAG_IS(f, "coldef")) {
		if (!x->col) return sql_bad(e, "no jctx.col for", f);
		col_ddl(c, t, x->col, e->q);
	} else
		return SQL_FRAG_UNKNOWN;
	return DJC_OK;
}

/* The jobs layer's fragments (sql.h), for sql_expand. */
static int jobs_frag(sql_exp *e, const sql_frag *f)
{
	const jexp *j = e->ctx;
	djc_conn *c = j->c;
	const table *t = j->x->t;
	if (SQL_FRAG_IS(f, "N") && !f->arg && j->x->named) db_qtable(c->db, e->q, j->x->named);
	else if (SQL_FRAG_IS(f, "J") || SQL_FRAG_IS(f, "T") || SQL_FRAG_IS(f, "H")) alias(c, t, f->text, 1, e->q);
	else if (SQL_FRAG_IS(f, "cols") || SQL_FRAG_IS(f, "hcols")) {
		int job = SQL_FRAG_IS(f, "cols");
		const jcol *cols = job ? JOB_COLS : HIST_COLS;
		size_t nc = job ? NJOB_COLS : NHIST_COLS;
		for (size_t i = 0; i < nc; i++) {
			if (i) sb_add(e->q, ", ");
			qcol(c, t, cols[i].name, e->q);
		}
	} else if (SQL_FRAG_IS(f, "join")) return join_frag(c, t, e, f);
	else if (SQL_FRAG_IS(f, "keysource")) return keysource_sql(c, t, e->q, e->params);
	else if (SQL_FRAG_IS(f, "update") && !f->arg) db_update_head(c->db, e->q, t->jobs_name);
	else if (SQL_FRAG_IS(f, "delete") && !f->arg) db_delete_head(c->db, e->q, t->jobs_name);
	else if (SQL_FRAG_IS(f, "by") || SQL_FRAG_IS(f, "delete")) return index_frag(c, t, e, f);
	else {
		int rc = key_frag(c, j->x, e, f);
		if (rc == SQL_FRAG_UNKNOWN) rc = cond_frag(c, j->x, e, f);
		if (rc == SQL_FRAG_UNKNOWN) rc = ddl_frag(c, j->x, e, f);
		if (rc != SQL_FRAG_UNKNOWN || f->arg || !is_job_col(f->text, f->n)) return rc;
		char *name = xstrndup(f->text, f->n);   /* a column: {status} */
		qcol(c, t, name, e->q);
		free(name);
	}
	return DJC_OK;
}

static void push_param(void *params, val_t v)
{
	pvec_push(params, v);
}

int jsql_expand(djc_conn *c, const jsql *s, const jctx *x, const val_t *args, size_t nargs, sb_t *q, pvec *p)
{
	jexp j = {c, x};
	sql_exp e = {.db = c->db, .s = s, .kind = "jobs statement", .args = args, .nargs = nargs, .q = q,
		     .push = push_param, .params = p, .frag = jobs_frag, .ctx = &j};
	int rc = sql_expand(&e);
	if (rc == DJC_ERROR && e.err[0]) return conn_fail(c, DJC_ERROR, "%s", e.err);
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

int jsql_raw(djc_conn *c, const jsql *s, const jctx *x, db_res **out)
{
	if (out) *out = NULL;
	sb_t q = SB_INIT;
	pvec p = {0};
	int rc = jsql_expand(c, s, x, NULL, 0, &q, &p);
	if (!rc) rc = db_exec(c->db, sb_str(&q), p.v, p.n, out);
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
