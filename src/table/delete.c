/* delete.c - delete rows, and (cascade) the rows that depend on them. */
#include "table.h"
#include "table/opts.h"
#include "table/algebra.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A delete being built: the tables it deletes from (S[0] the one named,
 * then with cascade its dependents in declaration order, so that parents
 * come before their children), the user's restriction, where the nodes
 * live, and a counter numbering the subqueries' aliases, unique within a
 * statement so that no inner alias hides an outer one. */
typedef struct cascade {
	djc_conn *c;
	table **S;
	size_t nS;
	const char *where;
	q_arena *a;
	int alias;
	const djc_expr *expr;   /* djc_delete_expr: S[0]'s rows to delete (where is NULL) */
} cascade;

/* A column name of the row that ref (an alias, or a table) names. */
static q_col at(q_col ref, const char *name) { ref.name = name; return ref; }

static int cascade_cond(cascade *k, size_t i, q_col ref, q_node **out);

/* EXISTS (a row of parent, aliased anew, whose columns cols[] have the
 * values of ref's columns ccols[] (the child's names of a renamed
 * reference; cols again when not renamed), itself deleted). */
static int parent_deleted(cascade *k, size_t j, q_col ref, char *const *cols, char *const *ccols, size_t n, q_node **out)
{
	const char *al = q_printf(k->a, "d%d", ++k->alias);
	q_sel *s = q_select(k->a);
	q_item_add(k->a, s, QI_ONE, NULL);
	q_from_table(k->a, s, table_sqlref(k->S[j]), al, 0);
	for (size_t c = 0; c < n; c++) q_where(k->a, s, q_same(k->a, (q_col){al, NULL, cols[c]}, at(ref, ccols[c])));
	q_node *x;
	int rc = cascade_cond(k, j, (q_col){al, NULL, NULL}, &x);
	if (rc) return rc;
	q_where(k->a, s, x);
	*out = q_exists(k->a, s, 0);
	return DJC_OK;
}

/* The condition under which a row of S[i], named ref in the statement, is
 * deleted: for the table deleted from (i = 0), the user's restriction; for
 * a dependent, that it references a deleted row of one of its parents in
 * S (with in_key: through a reference in its primary key only). */
static int cascade_refs(cascade *k, size_t i, q_col ref, int in_key, q_node **out)
{
	const table *x = k->S[i];
	q_node *any = q_or(k->a);
	for (size_t f = 0; f < x->nfks; f++) {
		size_t j = 0;
		while (j < i && k->S[j] != x->fks[f].ptable) j++;
		if (j == i || (in_key && !x->fks[f].in_key)) continue;
		q_node *e;
		int rc = parent_deleted(k, j, ref, x->fks[f].attrs, x->fks[f].cattrs, x->fks[f].nattrs, &e);
		if (rc) return rc;
		q_add(k->a, any, e);
	}
	*out = any;
	return DJC_OK;
}

static int cascade_cond(cascade *k, size_t i, q_col ref, q_node **out)
{
	if (i > 0) return cascade_refs(k, i, ref, 0, out);
	if (k->expr) return alg_delete_cond(out, k->a, k->c, k->expr, ref);
	q_node *x;
	int rc = restrict_node_at(&x, k->a, k->c, k->S[0], k->where, ref, 0);
	*out = x ? x : q_true(k->a);
	return rc;
}

/* The statement counting (count) or deleting the rows of table where
 * cond holds (tname: a table's unquoted name), into q and p. */
static int stmt_sql(cascade *k, const char *tname, const q_node *cond, int count, sb_t *q, pvec *p)
{
	q_out o = {q, p, 0};
	int rc;
	if (count) {
		q_sel *s = q_select(k->a);
		q_item_add(k->a, s, QI_COUNT, NULL);
		q_from_table(k->a, s, tname, NULL, 0);
		q_where(k->a, s, (q_node *)cond);
		rc = q_select_sql(k->c->db, s, &o);
	} else
		rc = q_delete_sql(k->c->db, tname, cond, &o);
	return restrict_fail(k->c, rc, &o);
}

/* Run a statement of stmt_sql: the rows counted or deleted, or -1 with
 * *rc set (the database's code). */
static long long stmt_run(djc_conn *c, const sb_t *q, const pvec *p, int count, int *rc)
{
	db_res *r = NULL;
	long long n = -1;
	if (!(*rc = db_exec(c->db, sb_str(q), p->v, p->n, &r)))
		n = !count ? r->affected : r->nrows ? (long long)db_cell_int(r, 0, 0) : 0;
	db_res_free(r);
	return n;
}

/* Build and run the statement counting or deleting S[i]'s rows that go:
 * *n of them. A statement that could not be built: its code, *built 0. */
static int cascade_stmt(cascade *k, size_t i, const q_node *extra, int count, long long *n, int *built)
{
	const table *x = k->S[i];
	q_col ref = {NULL, table_sqlref(x), NULL};
	q_node *cond, *all = q_and(k->a);
	sb_t q = SB_INIT;
	pvec p = {0};
	*built = 0;
	int rc = cascade_cond(k, i, ref, &cond);
	if (!rc) {
		q_add(k->a, all, cond);
		if (extra) q_add(k->a, all, (q_node *)extra);
		rc = stmt_sql(k, table_sqlref(x), all, count, &q, &p);
	}
	if (!rc) {
		*built = 1;
		*n = stmt_run(k->c, &q, &p, count, &rc);
	}
	sb_free(&q);
	pvec_free(&p);
	return rc;
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
		q_arena a = Q_ARENA_INIT;
		cascade k = {c, S, 2, where, &a, 0, NULL};
		long long n = -1;
		int built;
		cascade_stmt(&k, 1, NULL, 1, &n, &built);
		q_arena_free(&a);
		if (n > 0) return xasprintf("%lld row%s of %s reference%s them", n, n == 1 ? "" : "s", S[1]->name, n == 1 ? "s" : "");
	}
	return xstrdup("rows of a child table reference them");
}

int djc_delete(size_t *deleted, djc_conn *c, const char *name, const char *where_json)
{
	if (deleted) *deleted = 0;
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	if (t->adopted) return adopted_delete_refuse(c, t);
	sb_t q = SB_INIT;
	pvec p = {0};
	q_arena a = Q_ARENA_INIT;
	q_node *x;
	q_out o = {&q, &p, 0};
	if ((rc = restrict_node(&x, &a, c, t, where_json, NULL, 0))) goto out;
	if ((rc = restrict_fail(c, q_delete_sql(c->db, table_sqlref(t), x ? x : q_true(&a), &o), &o))) goto out;
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
	q_arena_free(&a);
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

/* DataJoint's part integrity: a part's rows go only with their master's.
 * DJC_EINVAL naming the first part of S with rows to delete whose master
 * rows stay. */
static int parts_check(cascade *k)
{
	for (size_t i = 0; i < k->nS; i++) {
		table *x = k->S[i];
		if (!x->master) continue;
		size_t m = 0;
		while (m < k->nS && k->S[m] != x->master) m++;
		q_node *keep = NULL;
		if (m < k->nS) {
			/* NOT EXISTS (its master row, deleted too) */
			char **key = q_alloc(k->a, (x->master->nkey ? x->master->nkey : 1) * sizeof(char *));
			for (size_t c = 0; c < x->master->nkey; c++) key[c] = x->master->attrs[c].name;
			q_node *e;
			int rc = parent_deleted(k, m, (q_col){NULL, table_sqlref(x), NULL}, key, key, x->master->nkey, &e);
			if (rc) return rc;
			e->neg = 1;
			keep = e;
		}
		long long n = 0;
		int built, rc = cascade_stmt(k, i, keep, 1, &n, &built);
		if (rc) return built ? conn_dbfail(k->c, rc, x->name) : rc;
		if (n > 0)
			return conn_fail(k->c, DJC_EINVAL, "cannot delete %lld row%s of part table %s without their master rows in %s "
					 "(DataJoint's part integrity): delete from %s instead", n, n == 1 ? "" : "s", x->name,
					 x->master->name, x->master->name);
	}
	return DJC_OK;
}

/* The jobs of S[i] (a dependent) whose keys' upstream rows go: a job for a
 * key that has left the key source would only fail (or linger). Jobs of
 * the table deleted from are kept: their upstream rows stay, and refresh
 * re-adds or re-pends them. Counted (dry_run) or deleted. */
static int jobs_of_deleted(cascade *k, size_t i, int dry_run, djc_changes *ch)
{
	const table *x = k->S[i];
	q_node *cond;
	int rc = cascade_refs(k, i, (q_col){NULL, x->jobs_name, NULL}, 1, &cond);
	if (rc || !cond->nkids) return rc;
	sb_t q = SB_INIT;
	pvec p = {0};
	long long n = 0;
	if (!(rc = stmt_sql(k, x->jobs_name, cond, dry_run, &q, &p)) && (n = stmt_run(k->c, &q, &p, dry_run, &rc)) < 0)
		rc = conn_dbfail(k->c, rc, x->jobs_name);
	if (!rc && n > 0) changes_add(ch, x->name, x->jobs_name, "delete jobs", n);
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

/* When the restriction of S[0] reads a table the cascade deletes from
 * first (delete 'K & (C & "w < 5")', C a child of K), the children's
 * statements would change what it selects before S[0]'s own: the children
 * of the selected rows went and the rows themselves stayed (and a dry run
 * counted what the delete did not do). Then S[0]'s rows are read first,
 * in the delete's transaction, and named by their keys (*keys, a JSON list
 * of key objects, "[]" for none: caller frees) for every statement of the
 * cascade. *keys NULL: the restriction reads no such table. */
static int root_keys(cascade *k, char **keys)
{
	*keys = NULL;
	table *t = k->S[0];
	q_col ref = {NULL, table_sqlref(t), NULL};
	q_node *cond;
	int rc = cascade_cond(k, 0, ref, &cond);
	if (rc) return rc;
	int reads = 0;
	for (size_t i = 1; i < k->nS && !reads; i++) reads = q_cond_reads(cond, table_sqlref(k->S[i]));
	if (!reads) return DJC_OK;
	q_sel *s = q_select(k->a);
	for (size_t i = 0; i < t->nkey; i++) q_col_item(k->a, s, at(ref, t->attrs[i].name), NULL);
	q_from_table(k->a, s, table_sqlref(t), NULL, 0);
	q_where(k->a, s, cond);
	djc_rowset *rs = NULL;
	if ((rc = rows_fetch(k->c, t, s, &rs))) return rc;
	sb_t b = SB_INIT;
	sb_addc(&b, '[');
	for (size_t j = 0; j < rs->n; j++) {
		if (j) sb_addc(&b, ',');
		row_to_json(&b, t, rs->rows[j]);
	}
	sb_addc(&b, ']');
	djc_rowset_free(rs);
	*keys = sb_steal(&b);
	return DJC_OK;
}

static int delete_once(djc_conn *c, table **S, size_t nS, const djc_expr *e, const char *where, const djc_delete_options *o,
		       djc_changes *ch)
{
	q_arena a = Q_ARENA_INIT;
	cascade k = {c, S, nS, where, &a, 0, e};
	int rc;
	char *keys = NULL;
	if ((rc = db_begin(c->db))) { rc = conn_dbfail(c, rc, "delete"); goto out; }
	if (nS > 1 && (rc = root_keys(&k, &keys))) goto fail;
	if (keys) {
		k.where = keys;
		k.expr = NULL;
	}
	if (o->cascade && (rc = parts_check(&k))) goto fail;
	/* the counts, in the order of deletion: dependents first */
	for (size_t i = nS; i-- > 0;) {
		if (i > 0 && S[i]->jobs_name && (rc = jobs_of_deleted(&k, i, o->dry_run, ch))) goto fail;
		long long n = -1;
		int built;
		rc = cascade_stmt(&k, i, NULL, o->dry_run, &n, &built);
		if (rc && !built) goto fail;
		if (rc == DJC_EFOREIGN && !o->cascade) {
			db_rollback(c->db);
			char *who = child_refs(c, S[i], where);
			rc = conn_fail(c, rc, "cannot delete from %s: %s (delete those first, or delete with cascade)", S[i]->name,
				       who);
			free(who);
			goto out;
		}
		if (rc) { rc = conn_dbfail(c, rc, S[i]->name); goto fail; }
		changes_add(ch, S[i]->name, S[i]->sql_name, "delete", n);
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
	q_arena_free(&a);
	free(keys);
	return rc;
}

/* djc_delete_ext of table name restricted by where_json, or of the rows
 * of expression e (a restriction of that table). */
static int delete_run(djc_changes **out, djc_conn *c, const char *name, const djc_expr *e, const char *where_json,
		      const djc_delete_options *opts)
{
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
	/* DataJoint's rows are DataJoint's to delete (docs/adopt.md) */
	for (size_t i = 0; i < nS; i++)
		if (S[i]->adopted) {
			rc = adopted_delete_refuse(c, S[i]);
			free(S);
			return rc;
		}
	djc_changes *ch = NULL;
	/* a row inserted meanwhile that references one being deleted makes
	 * the DELETE of its parent fail: count again and retry, a few times;
	 * deadlocks and the like as every transaction does (conn_retry) */
	for (int attempt = 0, fk = 0;;) {
		djc_changes_free(ch);
		ch = xcalloc(1, sizeof *ch);
		rc = delete_once(c, S, nS, e, where_json, &o, ch);
		if (rc == DJC_EFOREIGN && o.cascade && ++fk < 5) continue;
		if (!conn_retry(c, rc, 1, 0, &attempt)) break;
	}
	free(S);
	if (out) *out = ch;
	else djc_changes_free(ch);
	return rc;
}

int djc_delete_ext(djc_changes **out, djc_conn *c, const char *name, const char *where_json,
		   const djc_delete_options *opts)
{
	if (out) *out = NULL;
	if (!c) return DJC_EINVAL;
	return delete_run(out, c, name, NULL, where_json, opts);
}

int djc_delete_expr(djc_changes **out, djc_conn *c, const djc_expr *e, const djc_delete_options *opts)
{
	if (out) *out = NULL;
	if (!c) return DJC_EINVAL;
	if (!e) return conn_fail(c, DJC_EINVAL, "delete: no expression (NULL)");
	const table *t = alg_base(e);
	if (!t)
		return conn_fail(c, DJC_EINVAL, "delete: %s is not rows of one table (delete from a table restricted by "
				 "anything: T & ..., T - ...)", djc_expr_text(e));
	return delete_run(out, c, t->name, e, NULL, opts);
}

/* The name before the API's convention (djc.h): deprecated, removed in 0.2. */
int djc_delete_with_options(djc_changes **out, djc_conn *c, const char *name, const char *where_json,
			    const djc_delete_options *opts)
{
	return djc_delete_ext(out, c, name, where_json, opts);
}
