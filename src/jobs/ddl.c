/* ddl.c - a table's jobs table and its indexes, and what the jobs layer
 * remembers per connection about each table (the parsed table objects stay
 * immutable: several connections may share nothing, but one connection's
 * facts never leak into a table another connection reads). */
#include "jobs.h"
#include "jobs_state.h"
#include "sql.h"
#include <stdlib.h>
#include <string.h>

static void state_free(void *p)
{
	jobs_state *s = p;
	if (!s) return;
	for (size_t i = 0; i < s->n; i++) claim_text_free(s->tabs[i].claims);
	free(s->tabs);
	free(s);
}

jobs_tab *jobs_tab_of(djc_conn *c, const table *t)
{
	jobs_state *s = c->jobs;
	if (!s) {
		s = xcalloc(1, sizeof *s);
		c->jobs = s;
		c->jobs_free = state_free;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->tabs[i].t == t) return &s->tabs[i];
	s->tabs = xrealloc(s->tabs, (s->n + 1) * sizeof *s->tabs);
	memset(&s->tabs[s->n], 0, sizeof *s->tabs);
	s->tabs[s->n].t = t;
	return &s->tabs[s->n++];
}

/* CREATE INDEX for the jobs columns cols[0..n) (names before renaming),
 * of the rows whose status is `only` when it is not NULL and the backend
 * has partial indexes. */
static int index_on(djc_conn *c, const table *t, const char *suffix, const char *const *cols, size_t n, const char *only)
{
	sb_t list = SB_INIT, name = SB_INIT, q = SB_INIT, b = SB_INIT;
	for (size_t i = 0; i < n; i++) {
		if (i) sb_add(&list, ", ");
		db_qi(c->db, &list, jobs_col(t, cols[i], &b));
	}
	table_jobs_index(&name, t, suffix);
	sb_t where = SB_INIT;
	if (only) {
		db_qi(c->db, &where, jobs_col(t, "status", &b));
		sb_printf(&where, " = '%s'", only);   /* a status name: a constant of this file */
	}
	db_create_index(c->db, &q, t->jobs_name, sb_str(&name), sb_str(&list), 0, only ? sb_str(&where) : NULL);
	sb_free(&where);
	int rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
	sb_free(&list); sb_free(&name); sb_free(&q); sb_free(&b);
	return rc;
}

/* Which columns of JOB_COLS the jobs table lacks: a jobs table made by an
 * earlier djc (before the attempt columns). Read from the column names of
 * an empty SELECT, which works the same on every backend and fails on
 * none. missing[i] is set for JOB_COLS[i]; returns how many. */
static int missing_cols(djc_conn *c, const table *t, char *missing, size_t *nmissing)
{
	*nmissing = 0;
	sb_t b = SB_INIT;
	db_res *r = NULL;
	jctx x = JCTX(t);
	int rc = jsql_raw(c, &JS_JOBS_COLUMNS, &x, &r);
	for (size_t i = 0; !rc && i < NJOB_COLS; i++) {
		const char *want = jobs_col(t, JOB_COLS[i].name, &b);
		int have = 0;
		for (size_t k = 0; k < r->ncols && !have; k++) have = !strcmp(r->cols[k], want);
		missing[i] = !have;
		if (!have) (*nmissing)++;
	}
	db_res_free(r);
	sb_free(&b);
	return rc;
}

/* Add the columns a jobs table of an earlier djc lacks (each has a
 * default, so its rows stay valid). Workers upgrading at the same time:
 * an ALTER that fails is forgiven when the column is there afterwards. */
static int upgrade(djc_conn *c, const table *t)
{
	char missing[64];
	size_t n = 0;
	int rc = missing_cols(c, t, missing, &n);
	for (size_t i = 0; !rc && n && i < NJOB_COLS; i++) {
		if (!missing[i]) continue;
		if (!JOB_COLS[i].def)
			return conn_fail(c, DJC_ERROR, "jobs table %s lacks column %s and cannot be upgraded", t->jobs_name, JOB_COLS[i].name);
		jctx x = JCTX(t);
		x.col = &JOB_COLS[i];
		rc = jsql_raw(c, &JS_JOBS_ADD_COLUMN, &x, NULL);
		if (rc) {
			char again[64];
			size_t n2 = 0;
			if (!missing_cols(c, t, again, &n2) && !again[i]) rc = DJC_OK;   /* another worker added it */
		}
	}
	return rc;
}

/* Whether the jobs table, its indexes and its history table are all
 * there, read without DDL: the catalog for the indexes (which a jobs table
 * gets right after it is made), then, once the table is known to exist, an
 * empty SELECT of each table for their columns. A worker that starts then
 * takes no lock on the jobs table. A CREATE INDEX IF NOT EXISTS, even of
 * an index that exists, waits for every transaction on the table and holds
 * up every later one (PostgreSQL's SHARE lock, MariaDB's exclusive
 * metadata lock): 1,000 workers starting together against a busy jobs
 * table queued behind 3,000 of them (docs/scale-results.md). Outside a
 * transaction only: a failed read there would end it on PostgreSQL. */
static int jobs_complete(djc_conn *c, const table *t)
{
	const char *q = db_index_count_sql(c->db);
	if (!q || c->db->in_tx) return 0;
	sb_t n[2] = {SB_INIT, SB_INIT};
	static const char *const sfx[2] = {"next", "lease"};
	for (int i = 0; i < 2; i++) table_jobs_index(&n[i], t, sfx[i]);
	val_t p[4] = {c->db->schema ? val_text(c->db->schema) : val_null(), val_text(t->jobs_name), val_text(sb_str(&n[0])),
		      val_text(sb_str(&n[1]))};
	db_res *r = NULL;
	int ok = db_exec(c->db, q, p, 4, &r) == DJC_OK && r->nrows == 1 && db_cell_int(r, 0, 0) == 2;
	db_res_free(r);
	for (int i = 0; i < 4; i++) val_free(&p[i]);
	for (int i = 0; i < 2; i++) sb_free(&n[i]);
	char missing[64];
	size_t nm = 0;
	if (ok) ok = missing_cols(c, t, missing, &nm) == DJC_OK && nm == 0;
	if (ok) {
		jctx x = JCTX(t);
		ok = jsql_raw(c, &JS_HISTORY_COLUMNS, &x, NULL) == DJC_OK;
	}
	return ok;
}

int jobs_ensure(djc_conn *c, table *t)
{
	if (!t->jobs_name) return conn_fail(c, DJC_EINVAL, "table %s is %s: only computed and imported tables have jobs",
					    t->name, tier_name(t->tier));
	jobs_tab *jt = jobs_tab_of(c, t);
	if (jt->ready) return DJC_OK;   /* once per table per connection, not per reserve */
	if (jobs_complete(c, t)) {
		jt->ready = 1;
		return DJC_OK;
	}
	jctx x = JCTX(t);
	int rc = jsql_raw(c, &JS_JOBS_CREATE, &x, NULL);
	/* the claim: "most urgent takeable job" (statements.c, claim.due) */
	static const char *const next[] = {"queue", "priority", "avail_time"};
	/* No index on token: a claim writes the token, and every index on a
	 * column a claim writes costs each claim an entry (measured: about 6%
	 * of MariaDB's one-job rate). What finds rows by token (renew,
	 * release) has the claim's keys too. Jobs tables made before keep
	 * their <jobs>_token index until dropped by hand (docs/jobs.md). */
	/* lapsed leases: the index finds them among the few reserved rows,
	 * whatever the depth of the queue (lapsed.list). Where
	 * the backend has partial indexes it holds the reserved rows only, on
	 * avail_time: a claim and the commit that deletes the job then write
	 * one page of it, and no planner can prefer the order of `next` (which
	 * PostgreSQL did on a table without statistics yet, reading the whole
	 * queue on each look for lapsed leases). Elsewhere (MariaDB) all rows,
	 * on (status, avail_time). Every statement that should use it says
	 * status = 'reserved'. */
	static const char *const lease_partial[] = {"avail_time"};
	static const char *const lease_full[] = {"status", "avail_time"};
	int partial = db_partial_index(c->db);
	if (!rc) rc = upgrade(c, t);
	if (!rc) rc = index_on(c, t, "next", next, 3, NULL);
	if (!rc) rc = index_on(c, t, "lease", partial ? lease_partial : lease_full, partial ? 1 : 2, partial ? "reserved" : NULL);
	/* the attempts of each job (statements.c, history.*), keyed by (key, attempt) */
	if (!rc) rc = jsql_raw(c, &JS_HISTORY_CREATE, &x, NULL);
	if (rc) return conn_dbfail(c, rc, t->jobs_name);
	jt->ready = 1;
	return DJC_OK;
}
