/* claim.c - the transitions of a held job's lease: claim (-> reserved),
 * renew and hold (reserved, lease extended), release (-> pending). */
#include "jobs.h"
#include "jobs_state.h"
#include "sql.h"
#include "util/config.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Expand a parameterless fragment statement into b. */
static int frag(djc_conn *c, const jsql *s, const jctx *x, sb_t *b)
{
	pvec p = {0};
	int rc = jsql_expand(c, s, x, NULL, 0, b, &p);
	pvec_free(&p);
	return rc;
}

int jobs_claim(djc_conn *c, table *t, const char *where, long max_priority, double lease, long n,
	       djc_job ***out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	jctx x = {.t = t, .where = where, .max_priority = max_priority};
	sb_t due = SB_INIT, lapsed = SB_INIT, set = SB_INIT, order = SB_INIT, keys = SB_INIT, made = SB_INIT;
	pvec dp = {0}, lp = {0}, sp = {0};
	int64_t token = jobs_new_token();
	val_t sargs[7] = {val_int(token), val_float(lease), val_text(jobs_host()), val_int(getpid()),
			  val_text(jobs_user()), val_int(c->db->drv->connection_id(c->db)), val_text(jobs_version())};
	db_res *r = NULL;
	int rc;
	if ((rc = jsql_expand(c, &JS_CLAIM_DUE, &x, NULL, 0, &due, &dp)) ||
	    (rc = jsql_expand(c, &JS_CLAIM_LAPSED, &x, NULL, 0, &lapsed, &lp)) ||
	    (rc = jsql_expand(c, &JS_CLAIM_SET, &x, sargs, 7, &set, &sp)) || (rc = frag(c, &JS_CLAIM_ORDER, &x, &order)) ||
	    (rc = frag(c, &JS_CLAIM_KEYS, &x, &keys)) || (rc = frag(c, &JS_CLAIM_MADE, &x, &made)))
		goto out;
	sb_t next_idx = SB_INIT;
	sb_printf(&next_idx, "%s_next", t->jobs_name);   /* ddl.c: (queue, priority, avail_time) */
	db_claim cl = {.table = t->jobs_name, .key_cols = sb_str(&keys), .extra = sb_str(&made), .index = sb_str(&next_idx),
		       .where = sb_str(&due), .wparams = dp.v, .nw = dp.n, .order = sb_str(&order),
		       .limit = n > 0 ? n : 1, .set = sb_str(&set), .sparams = sp.v, .ns = sp.n};
	/* A job whose holder's lease lapsed first (claim.lapsed), looked for at
	 * most every min(1 s, lease/4) per connection: that keeps the takeover
	 * bound (a lease plus a second) without a second claim statement per
	 * job on the hot path. */
	jobs_tab *jt = jobs_tab_of(c, t);
	double now = mono(), every = lease / 4 < 1.0 ? lease / 4 : 1.0;
	if (!jt->lapsed_check || now - jt->lapsed_check >= every) {
		jt->lapsed_check = now;
		db_claim lcl = cl;
		lcl.index = NULL;   /* the few reserved rows: (status, avail_time) finds them */
		lcl.where = sb_str(&lapsed);
		lcl.wparams = lp.v;
		lcl.nw = lp.n;
		if ((rc = db_claim_run(c->db, &lcl, &r))) { rc = conn_dbfail(c, rc, JS_CLAIM_LAPSED.name); goto out; }
		if (!r->nrows) { db_res_free(r); r = NULL; }
	}
	if (!r && (rc = db_claim_run(c->db, &cl, &r))) { rc = conn_dbfail(c, rc, JS_CLAIM_DUE.name); goto out; }
	if (r->nrows) {
		djc_job **jobs = xcalloc(r->nrows, sizeof(djc_job *));
		for (size_t i = 0; i < r->nrows; i++) {
			djc_job *j = xcalloc(1, sizeof *j);
			j->t = t;
			j->token = token;
			j->key = djc_row_new();
			for (size_t k = 0; k < t->nsrc; k++) {
				val_t v;
				value_out(&t->attrs[t->src[k]], db_cell(r, i, k), &v);
				row_put(j->key, t->attrs[t->src[k]].name, &v);
			}
			j->made = r->ncols > t->nsrc && db_cell_int(r, i, t->nsrc) != 0;
			jobs[i] = j;
		}
		*out = jobs;
		*nout = r->nrows;
	}
out:
	db_res_free(r);
	for (int i = 0; i < 7; i++) val_free(&sargs[i]);
	sb_free(&next_idx);
	sb_free(&due); sb_free(&lapsed); sb_free(&set); sb_free(&order); sb_free(&keys); sb_free(&made);
	pvec_free(&dp); pvec_free(&lp); pvec_free(&sp);
	return rc;
}

int jobs_renew(djc_conn *c, table *t, int64_t token, double lease, long *held)
{
	jctx x = JCTX(t);
	val_t a[2] = {val_float(lease), val_int(token)};
	return jsql_count(c, &JS_RENEW, &x, a, 2, held);
}

int jobs_hold(djc_conn *c, djc_job *job, double lease, long *held)
{
	jctx x = JCTX(job->t);
	x.key = job->key;
	val_t a[2] = {val_float(lease), val_int(job->token)};
	return jsql_count(c, &JS_HOLD, &x, a, 2, held);
}

int jobs_release(djc_conn *c, table *t, int64_t token)
{
	jctx x = JCTX(t);
	val_t a = val_int(token);
	return jsql_run(c, &JS_RELEASE, &x, &a, 1, NULL);
}

int jobs_release_pid(djc_conn *c, table *t, const char *host, long pid)
{
	jctx x = JCTX(t);
	val_t a[2] = {val_text(host), val_int(pid)};
	int rc = jsql_run(c, &JS_RELEASE_PID, &x, a, 2, NULL);
	val_free(&a[0]);
	return rc;
}

int jobs_release_job(djc_conn *c, djc_job *job)
{
	jctx x = JCTX(job->t);
	x.key = job->key;
	val_t a = val_int(job->token);
	return jsql_run(c, &JS_RELEASE_ONE, &x, &a, 1, NULL);
}

int jobs_ready_count(djc_conn *c, table *t, const char *where, long max_priority, long *n)
{
	jctx x = {.t = t, .where = where, .max_priority = max_priority};
	db_res *r = NULL;
	*n = 0;
	int rc = jsql_run(c, &JS_READY_COUNT, &x, NULL, 0, &r);
	if (!rc) *n = (long)db_cell_int(r, 0, 0);
	db_res_free(r);
	return rc;
}
