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

/* CREATE INDEX for the jobs columns cols[0..n) (names before renaming). */
static int index_on(djc_conn *c, const table *t, const char *suffix, const char *const *cols, size_t n)
{
	sb_t list = SB_INIT, name = SB_INIT, q = SB_INIT, b = SB_INIT;
	for (size_t i = 0; i < n; i++) {
		if (i) sb_add(&list, ", ");
		db_qi(c->db, &list, jobs_col(t, cols[i], &b));
	}
	sb_printf(&name, "%s_%s", t->jobs_name, suffix);
	db_create_index(c->db, &q, t->jobs_name, sb_str(&name), sb_str(&list), 0);
	int rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
	sb_free(&list); sb_free(&name); sb_free(&q); sb_free(&b);
	return rc;
}

int jobs_ensure(djc_conn *c, table *t)
{
	if (!t->jobs_name) return conn_fail(c, DJC_EINVAL, "table %s is %s: only computed and imported tables have jobs",
					    t->name, tier_name(t->tier));
	jobs_tab *jt = jobs_tab_of(c, t);
	if (jt->ready) return DJC_OK;   /* once per table per connection, not per reserve */
	sb_t q = SB_INIT, b = SB_INIT;
	sb_add(&q, "CREATE TABLE IF NOT EXISTS ");
	db_qtable(c->db, &q, t->jobs_name);
	sb_add(&q, " (");
	for (size_t i = 0; i < t->nsrc; i++) {
		ddl_column(c, &q, &t->attrs[t->src[i]], 1);
		sb_add(&q, ", ");
	}
	for (size_t i = 0; i < NJOB_COLS; i++) {
		attr a = {.name = (char *)jobs_col(t, JOB_COLS[i].name, &b),
			  .type = {JOB_COLS[i].type, JOB_COLS[i].p, 0, NULL, 0}};
		ddl_column(c, &q, &a, JOB_COLS[i].not_null);
		sb_add(&q, ", ");
	}
	sb_add(&q, "PRIMARY KEY (");
	for (size_t i = 0; i < t->nsrc; i++) {
		if (i) sb_add(&q, ", ");
		db_qi(c->db, &q, t->attrs[t->src[i]].name);
	}
	sb_add(&q, "))");
	sb_add(&q, c->db->table_suffix);
	int rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
	/* the claim: "most urgent takeable job" (statements.c, claim.due) */
	static const char *const next[] = {"queue", "priority", "avail_time"};
	/* the heartbeat renews by token */
	static const char *const token[] = {"token"};
	/* lapsed leases: (status, avail_time) finds them among the few reserved
	 * rows, whatever the depth of the queue (claim.lapsed) */
	static const char *const lease[] = {"status", "avail_time"};
	if (!rc) rc = index_on(c, t, "next", next, 3);
	if (!rc) rc = index_on(c, t, "token", token, 1);
	if (!rc) rc = index_on(c, t, "lease", lease, 2);
	sb_free(&q);
	sb_free(&b);
	if (rc) return conn_dbfail(c, rc, t->jobs_name);
	jt->ready = 1;
	return DJC_OK;
}
