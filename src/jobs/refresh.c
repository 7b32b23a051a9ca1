/* refresh.c - djc_jobs_refresh: DataJoint's refresh as set-based
 * statements in one short transaction (statements.c, refresh.*), retried
 * as a whole when the database reports a deadlock or the like. */
#include "jobs.h"
#include "sql.h"
#include "util/config.h"
#include "table/opts.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A refresh that adds at least this many jobs has the planner count the
 * jobs table again (db.h, analyze_head): a sample of at most 30,000 rows
 * on PostgreSQL, tens of milliseconds, next to adding the jobs. */
#define ANALYZE_AFTER 1000

typedef struct refresh_args {
	table *t;
	const char *where;
	long prio;
	double delay, stale, orphan;
	double retention;         /* jobs.history_retention */
	int keep;                 /* jobs.keep_completed */
	djc_refresh_result *res;
} refresh_args;

static int refresh_body(djc_conn *c, void *arg)
{
	refresh_args *a = arg;
	djc_refresh_result *res = a->res;
	memset(res, 0, sizeof *res);
	jctx x = JCTX(a->t);
	x.where = a->where;
	int rc;
	/* 0. history rows whose job row is gone without its history (a
	 * cascading `djc delete` of upstream rows deletes jobs, and the table
	 * layer does not know their history): before a key's job is added
	 * again, so its new attempts do not meet the old ones; and the kept
	 * history of completed jobs whose retention is over */
	long swept0 = 0;
	val_t ret = val_float(-a->retention);
	if ((rc = jsql_count(c, &JS_HISTORY_SWEEP, &x, NULL, 0, &swept0))) return rc;
	if ((rc = jsql_count(c, &JS_HISTORY_EXPIRE, &x, &ret, 1, &swept0))) return rc;
	/* 1. new keys */
	val_t add[3] = {val_float(a->delay), val_int(a->prio), val_float(a->delay)};
	if ((rc = jsql_count(c, &JS_REFRESH_ADD, &x, add, 3, &res->added))) return rc;
	/* 2. successes whose target row is gone (keep_completed): mark, re-pend, unmark */
	if (a->keep) {
		long marked = 0, unmarked = 0;
		val_t pr = val_int(a->prio);
		if ((rc = jsql_count(c, &JS_REFRESH_REPEND_MARK, &x, NULL, 0, &marked))) return rc;
		if (marked) {
			if ((rc = jsql_count(c, &JS_REFRESH_REPEND, &x, &pr, 1, &res->re_pended))) return rc;
			if ((rc = jsql_count(c, &JS_REFRESH_REPEND_UNMARK, &x, NULL, 0, &unmarked))) return rc;
		}
	}
	/* 3. stale jobs: their key left the key source (and their history goes) */
	if (a->stale > 0) {
		val_t s = val_float(-a->stale);
		long swept = 0, marked = 0;
		if ((rc = jsql_count(c, &JS_REFRESH_STALE_MARK, &x, &s, 1, &marked))) return rc;
		if (marked && (rc = jsql_count(c, &JS_REFRESH_STALE, &x, NULL, 0, &res->removed))) return rc;
		if (res->removed && (rc = jsql_count(c, &JS_HISTORY_SWEEP, &x, NULL, 0, &swept))) return rc;
	}
	/* 4. orphans: reservations older than orphan_timeout, recorded in
	 * their history, back to pending */
	if (a->orphan > 0) {
		val_t o = val_float(-a->orphan);
		long marked = 0, added = 0;
		if ((rc = jsql_count(c, &JS_REFRESH_ORPHANS_MARK, &x, &o, 1, &marked))) return rc;
		if (marked) {
			char *m = xasprintf("orphan timeout: reset by a refresh (%s pid %ld)", jobs_host(), (long)getpid());
			val_t h[2] = {val_text("orphaned"), val_text(m)};
			free(m);
			rc = jsql_count(c, &JS_HISTORY_MARKED, &x, h, 2, &added);
			val_free(&h[0]);
			val_free(&h[1]);
			if (!rc) rc = jsql_count(c, &JS_REFRESH_ORPHANS, &x, NULL, 0, &res->orphaned);
			if (rc) return rc;
		}
	}
	/* 5. waiting workers wake up: inside the transaction, so the
	 * notification is delivered when the jobs become visible, at the
	 * commit (PostgreSQL; elsewhere workers poll) */
	if (res->added || res->re_pended || res->orphaned) {
		sb_t p = SB_INIT;
		sb_printf(&p, "%s.%s", c->db->schema ? c->db->schema : "", a->t->name);
		rc = db_notify(c->db, JOBS_CHANNEL, sb_str(&p));
		sb_free(&p);
	}
	return rc;
}

/* The options' values, each by the one check of its kind (config_limit):
 * -1 for priority and stale_timeout means the setting's. */
static int refresh_check(djc_conn *c, const djc_refresh_options *o)
{
	const char *what;
	if (o->priority != -1 && (what = config_limit("priority", (double)o->priority)))
		return conn_fail(c, DJC_EINVAL, "refresh: priority must be %s (or -1: jobs.default_priority), got %ld", what, o->priority);
	if ((what = config_limit("delay", o->delay)))
		return conn_fail(c, DJC_EINVAL, "refresh: delay must be %s, got %g", what, o->delay);
	if (o->stale_timeout != -1 && (what = config_limit("stale_timeout", o->stale_timeout)))
		return conn_fail(c, DJC_EINVAL, "refresh: stale_timeout must be %s (or -1: jobs.stale_timeout), got %g", what,
				 o->stale_timeout);
	if ((what = config_limit("orphan_timeout", o->orphan_timeout)))
		return conn_fail(c, DJC_EINVAL, "refresh: orphan_timeout must be %s, got %g", what, o->orphan_timeout);
	return DJC_OK;
}

int djc_jobs_refresh(djc_refresh_result *res, djc_conn *c, const char *name, const djc_refresh_options *o)
{
	djc_refresh_result ignored;
	if (!res) res = &ignored;
	memset(res, 0, sizeof *res);
	djc_refresh_options def = DJC_REFRESH_OPTIONS_INIT;
	if (!o) o = &def;
	if (OPTS_VERSION(c, "refresh", o, 1, REFRESH)) return DJC_EINVAL;
	table *t;
	int rc = refresh_check(c, o);
	if (!rc) rc = conn_table(c, name, &t);
	if (!rc) rc = jobs_ensure(c, t);
	if (rc) return rc;
	refresh_args a = {t, o->where_json, o->priority >= 0 ? o->priority : config_long("jobs.default_priority"),
			  o->delay, o->stale_timeout >= 0 ? o->stale_timeout : config_double("jobs.stale_timeout"),
			  o->orphan_timeout, config_double("jobs.history_retention"), config_bool("jobs.keep_completed"), res};
	/* every step is a set operation that a second run repeats harmlessly */
	rc = conn_tx(c, "refresh", TX_IDEMPOTENT, refresh_body, &a);
	if (rc) rc = adopt_failure_explain(c, t, rc);   /* a parent DataJoint dropped, say */
	if (!rc && res->added >= ANALYZE_AFTER && !c->db->in_tx) {
		/* the planner's counts of the jobs table predate these rows (an
		 * empty table's, or none): count again now rather than when the
		 * server's autovacuum gets to it, up to a minute later, with every
		 * claim meanwhile reading the whole queue. Best effort: the refresh
		 * stands either way (inside a caller's transaction, whose failure
		 * it must not cause, autovacuum is left to it). */
		(void)db_analyze(c->db, t->jobs_name);
	}
	if (rc) memset(res, 0, sizeof *res);
	return rc;
}
