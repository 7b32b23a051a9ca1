/* algebra_api.c - fetching an expression (djc_fetch_expr, djc_expr_sql):
 * one SELECT statement, rendered by sql/query.c. */
#include "algebra.h"
#include "table/opts.h"
#include <stdlib.h>
#include <string.h>

void djc_expr_fetch_options_init(djc_expr_fetch_options *o)
{
	djc_expr_fetch_options d = DJC_EXPR_FETCH_OPTIONS_INIT;
	*o = d;
}

/* The statement of e fetched as o says (NULL: the defaults). */
static int expr_stmt(djc_conn *c, const djc_expr *e, const djc_expr_fetch_options *opts, sb_t *sql, pvec *p)
{
	if (!c) return DJC_EINVAL;
	if (!e) return conn_fail(c, DJC_EINVAL, "no expression (NULL)");
	djc_expr_fetch_options o = DJC_EXPR_FETCH_OPTIONS_INIT;
	if (opts) {
		if (OPTS_VERSION(c, "expression fetch", opts, 1, EXPR_FETCH)) return DJC_EINVAL;
		o = *opts;
	}
	if (o.offset < 0) return conn_fail(c, DJC_EINVAL, "offset %lld is negative", o.offset);
	/* fetch1: two rows are enough to tell one from more */
	alg_fetch f = {o.order_by, o.fetch1 ? 2 : o.limit, o.fetch1 ? 0 : o.offset, o.attrs};
	q_arena a = Q_ARENA_INIT;
	q_sel *s;
	int rc = alg_query(&s, &a, c, e, &f);
	if (!rc) {
		q_out out = {sql, p, 0};
		rc = restrict_fail(c, q_select_sql(c->db, s, &out), &out);
	}
	q_arena_free(&a);
	return rc;
}

int djc_expr_sql(char **sql, djc_conn *c, const djc_expr *e, const djc_expr_fetch_options *opts)
{
	*sql = NULL;
	sb_t q = SB_INIT;
	pvec p = {0};
	int rc = expr_stmt(c, e, opts, &q, &p);
	pvec_free(&p);
	if (rc) { sb_free(&q); return rc; }
	*sql = sb_steal(&q);
	return DJC_OK;
}

/* After rc, a failure of e's statement: the first of e's tables that is
 * adopted and no longer as adopted (DataJoint dropped or changed it) told
 * as such (adopt_failure_explain), else rc as it was. */
static int expr_failure_explain(djc_conn *c, const djc_expr *e, int rc)
{
	if (e->k == A_TABLE) return adopt_failure_explain(c, (table *)e->t, rc);   /* (only read) */
	int r = e->l ? expr_failure_explain(c, e->l, rc) : rc;
	return r == rc && e->r ? expr_failure_explain(c, e->r, rc) : r;
}

int djc_fetch_expr(djc_rowset **out, djc_conn *c, const djc_expr *e, const djc_expr_fetch_options *opts)
{
	*out = NULL;
	sb_t q = SB_INIT;
	pvec p = {0};
	int rc = expr_stmt(c, e, opts, &q, &p);
	if (!rc && (rc = rows_select(c, &e->h, sb_str(&q), &p, out))) rc = expr_failure_explain(c, e, rc);
	sb_free(&q);
	pvec_free(&p);
	if (rc || !opts || !opts->fetch1 || (*out)->n == 1) return rc;
	size_t n = (*out)->n;
	djc_rowset_free(*out);
	*out = NULL;
	return conn_fail(c, DJC_EINVAL, "fetch1: %s has %s, not exactly one", e->repr, n ? "more than one row" : "no rows");
}

int djc_expr_upstream_check(djc_conn *c, const char *target, const djc_expr *e)
{
	if (!c || !e) return DJC_EINVAL;
	if (e->k == A_TABLE) return djc_upstream_check(c, target, e->t->name);
	int rc = e->l ? djc_expr_upstream_check(c, target, e->l) : DJC_OK;
	if (!rc && e->r) rc = djc_expr_upstream_check(c, target, e->r);
	return rc;
}
