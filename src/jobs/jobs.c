/* jobs.c - the jobs table: reservation by one atomic claim, leases renewed
 * by heartbeats, completion fenced by a token inside the commit
 * transaction, errors, ignore, clear, refresh (set-based), listing.
 *
 * Row states (status, queue, avail_time):
 *   pending   queue=1 avail_time=scheduled_time   takeable when avail_time <= now
 *   reserved  queue=1 avail_time=lease expiry     takeable again only when the lease lapsed
 *   success/error/ignore  queue=0 avail_time=NULL never taken
 * One index (queue, priority, avail_time) serves "most urgent takeable job",
 * whatever the depth of the queue. */
#include "jobs.h"
#include "util/config.h"
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ERR_LEN 2047
#define TRUNC "...truncated"

/* ------------------------------------------------------------- identity */

int64_t jobs_new_token(void)
{
	uint64_t x = 0;
	if (getrandom(&x, sizeof x, 0) != sizeof x) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		x = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
	}
	x &= 0x7fffffffffffffffULL;
	return x ? (int64_t)x : 1;
}

const char *jobs_host(void)
{
	static char host[256];
	if (!host[0] && gethostname(host, sizeof host - 1)) strcpy(host, "unknown");
	return host;
}

const char *jobs_user(void)
{
	static char user[128];
	if (!user[0]) {
		struct passwd *pw = getpwuid(getuid());
		const char *u = pw ? pw->pw_name : getenv("USER");
		snprintf(user, sizeof user, "%s", u ? u : "unknown");
	}
	return user;
}

const char *jobs_version(void)
{
	static char ver[64];
	static int done;
	if (done) return ver;
	done = 1;
	if (strcmp(config_get("jobs.version_method"), "git")) return ver;
	int fd[2];
	if (pipe(fd)) return ver;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		int dn = open("/dev/null", O_WRONLY);
		if (dn >= 0) dup2(dn, 2);
		close(fd[0]);
		execlp("git", "git", "rev-parse", "--short", "HEAD", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	ssize_t n = pid > 0 ? read(fd[0], ver, sizeof ver - 1) : -1;
	close(fd[0]);
	int st = 0;
	if (pid > 0) waitpid(pid, &st, 0);
	if (n <= 0 || !WIFEXITED(st) || WEXITSTATUS(st)) { ver[0] = 0; return ver; }
	ver[n] = 0;
	ver[strcspn(ver, "\r\n")] = 0;
	return ver;
}

char *jobs_truncate(const char *msg)
{
	if (!msg) return NULL;
	/* count characters, not bytes, so multibyte text is cut whole */
	size_t len = strlen(msg), chars = utf8_len(msg, len);
	if (chars <= ERR_LEN) return xstrdup(msg);
	size_t keep = ERR_LEN - strlen(TRUNC), i = 0, ch = 0;
	while (i < len && ch < keep) {
		i++;
		while (i < len && ((unsigned char)msg[i] & 0xC0) == 0x80) i++;
		ch++;
	}
	char *o = xmalloc(i + strlen(TRUNC) + 1);
	memcpy(o, msg, i);
	strcpy(o + i, TRUNC);
	return o;
}

/* ------------------------------------------------------------- heading */

static const struct { const char *name; coltype t; int p; int not_null; } JOB_COLS[] = {
	{"status", T_VARCHAR, 10, 1},
	{"priority", T_INT32, 0, 1},
	{"created_time", T_DATETIME, 3, 1},
	{"scheduled_time", T_DATETIME, 3, 1},
	{"reserved_time", T_DATETIME, 3, 0},
	{"completed_time", T_DATETIME, 3, 0},
	{"duration", T_FLOAT64, 0, 0},
	{"error_message", T_VARCHAR, 2047, 0},
	{"error_stack", T_TEXT, 0, 0},
	{"user", T_VARCHAR, 255, 0},
	{"host", T_VARCHAR, 255, 0},
	{"pid", T_INT64, 0, 0},
	{"connection_id", T_INT64, 0, 0},
	{"version", T_VARCHAR, 255, 0},
	{"token", T_INT64, 0, 0},
	{"queue", T_INT8, 0, 1},
	{"avail_time", T_DATETIME, 3, 0},
	{"reservations", T_INT32, 0, 1},
	{"last_end", T_VARCHAR, 255, 0},
};
#define NJOBCOLS (sizeof JOB_COLS / sizeof *JOB_COLS)

static void qi(djc_conn *c, sb_t *b, const char *n) { db_qi(c->db, b, n); }
static void now(djc_conn *c, sb_t *b) { c->db->drv->now(b); }
static void now_plus(djc_conn *c, sb_t *b) { c->db->drv->now_plus(b); }

/* "k1 = ? AND k2 = ?" with the key's values pushed */
static void key_cond(djc_conn *c, const table *t, const djc_row *key, const char *alias, sb_t *b, pvec *p)
{
	for (size_t i = 0; i < t->nsrc; i++) {
		const attr *a = &t->attrs[t->src[i]];
		if (i) sb_add(b, " AND ");
		if (alias) { sb_add(b, alias); sb_addc(b, '.'); }
		qi(c, b, a->name);
		sb_add(b, " = ?");
		const val_t *v = row_get(key, a->name);
		val_t x;
		if (v) val_copy(&x, v); else x = val_null();
		pvec_push(p, x);
	}
}

int jobs_ensure(djc_conn *c, table *t)
{
	if (!t->jobs_name) return conn_fail(c, DJC_EINVAL, "table %s is %s: only computed and imported tables have jobs",
					    t->name, tier_name(t->tier));
	if (t->jobs_ready) return DJC_OK;   /* once per table per connection, not per reserve */
	sb_t q = SB_INIT;
	sb_add(&q, "CREATE TABLE IF NOT EXISTS ");
	qi(c, &q, t->jobs_name);
	sb_add(&q, " (");
	for (size_t i = 0; i < t->nsrc; i++) {
		ddl_column(c, &q, &t->attrs[t->src[i]], 1);
		sb_add(&q, ", ");
	}
	for (size_t i = 0; i < NJOBCOLS; i++) {
		attr a = {.name = (char *)JOB_COLS[i].name, .type = {JOB_COLS[i].t, JOB_COLS[i].p, 0, NULL, 0}};
		ddl_column(c, &q, &a, JOB_COLS[i].not_null);
		sb_add(&q, ", ");
	}
	sb_add(&q, "PRIMARY KEY (");
	for (size_t i = 0; i < t->nsrc; i++) {
		if (i) sb_add(&q, ", ");
		qi(c, &q, t->attrs[t->src[i]].name);
	}
	sb_add(&q, "))");
	sb_add(&q, c->db->table_suffix);
	int rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
	if (!rc) {
		sb_t cols = SB_INIT, name = SB_INIT;
		qi(c, &cols, "queue"); sb_add(&cols, ", ");
		qi(c, &cols, "priority"); sb_add(&cols, ", ");
		qi(c, &cols, "avail_time");
		sb_printf(&name, "%s_next", t->jobs_name);
		sb_reset(&q);
		c->db->drv->create_index(&q, t->jobs_name, sb_str(&name), sb_str(&cols), 0);
		rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
		if (!rc) {
			sb_reset(&cols); sb_reset(&name); sb_reset(&q);
			qi(c, &cols, "token");
			sb_printf(&name, "%s_token", t->jobs_name);
			c->db->drv->create_index(&q, t->jobs_name, sb_str(&name), sb_str(&cols), 0);
			rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
		}
		if (!rc) {
			/* lapsed leases: (status, avail_time) finds them among the few
			 * reserved rows, whatever the depth of the queue */
			sb_reset(&cols); sb_reset(&name); sb_reset(&q);
			qi(c, &cols, "status"); sb_add(&cols, ", ");
			qi(c, &cols, "avail_time");
			sb_printf(&name, "%s_lease", t->jobs_name);
			c->db->drv->create_index(&q, t->jobs_name, sb_str(&name), sb_str(&cols), 0);
			rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
		}
		sb_free(&cols);
		sb_free(&name);
	}
	sb_free(&q);
	if (!rc) t->jobs_ready = 1;
	return rc ? conn_dbfail(c, rc, t->jobs_name) : DJC_OK;
}

/* ------------------------------------------------------------- reserve */

int jobs_claim(djc_conn *c, table *t, const char *where, long max_priority, double lease, long n,
	       djc_job ***out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	sb_t w = SB_INIT, set = SB_INIT, keys = SB_INIT;
	pvec wp = {0}, sp = {0};
	int rc;
	qi(c, &w, "queue");
	sb_add(&w, " = 1 AND ");
	qi(c, &w, "avail_time");
	sb_add(&w, " <= ");
	now(c, &w);
	if (max_priority >= 0) {
		sb_add(&w, " AND ");
		qi(c, &w, "priority");
		sb_add(&w, " <= ?");
		pvec_push(&wp, val_int(max_priority));
	}
	if ((rc = where_build(c, t, where, NULL, 1, &w, &wp))) goto out;
	/* last_end and reservations first: MySQL evaluates SET left to right */
	int64_t token = jobs_new_token();
	qi(c, &set, "last_end");
	sb_add(&set, " = CASE WHEN ");
	qi(c, &set, "status");
	sb_add(&set, " = 'reserved' THEN 'lease expired' ELSE ");
	qi(c, &set, "last_end");
	sb_add(&set, " END, ");
	qi(c, &set, "reservations"); sb_add(&set, " = ");
	qi(c, &set, "reservations"); sb_add(&set, " + 1, ");
	qi(c, &set, "status"); sb_add(&set, " = 'reserved', ");
	qi(c, &set, "token"); sb_add(&set, " = ?, ");
	pvec_push(&sp, val_int(token));
	qi(c, &set, "reserved_time"); sb_add(&set, " = ");
	now(c, &set);
	sb_add(&set, ", ");
	qi(c, &set, "avail_time"); sb_add(&set, " = ");
	now_plus(c, &set);
	pvec_push(&sp, val_float(lease));
	sb_add(&set, ", ");
	qi(c, &set, "host"); sb_add(&set, " = ?, ");
	pvec_push(&sp, val_text(jobs_host()));
	qi(c, &set, "pid"); sb_add(&set, " = ?, ");
	pvec_push(&sp, val_int(getpid()));
	qi(c, &set, "user"); sb_add(&set, " = ?, ");
	pvec_push(&sp, val_text(jobs_user()));
	qi(c, &set, "connection_id"); sb_add(&set, " = ?, ");
	pvec_push(&sp, val_int(c->db->drv->connection_id(c->db)));
	qi(c, &set, "version"); sb_add(&set, " = ?");
	pvec_push(&sp, val_text(jobs_version()));
	for (size_t i = 0; i < t->nsrc; i++) {
		if (i) sb_add(&keys, ", ");
		qi(c, &keys, t->attrs[t->src[i]].name);
	}
	sb_t order = SB_INIT;
	qi(c, &order, "priority");
	sb_add(&order, ", ");
	qi(c, &order, "avail_time");
	/* never a NULL array, even when empty: drivers memcpy it (NULL is UB there) */
	db_claim cl = {t->jobs_name, sb_str(&keys), sb_str(&w), wp.v ? wp.v : sp.v, wp.n, sb_str(&order), n > 0 ? n : 1,
		       sb_str(&set), sp.v, sp.n};
	db_res *r = NULL;
	/* First a job whose holder's lease lapsed (its worker died, hung or
	 * was cut off): it was due before anything pending now, and taking it
	 * first bounds its takeover by one lease even with a deep queue. The
	 * reserved rows are few (one per running make), so this costs the
	 * same whatever the depth of the queue. */
	sb_t lw = SB_INIT;
	sb_printf(&lw, "%s AND ", sb_str(&w));
	qi(c, &lw, "status");
	sb_add(&lw, " = 'reserved'");
	db_claim lcl = cl;
	lcl.where = sb_str(&lw);
	/* Looked for at most every min(1 s, lease/4) per process: that keeps
	 * the takeover bound (a lease plus a second) without a second claim
	 * statement per job on the hot path. */
	struct timespec mts;
	clock_gettime(CLOCK_MONOTONIC, &mts);
	double mnow = (double)mts.tv_sec + mts.tv_nsec / 1e9;
	double every = lease / 4 < 1.0 ? lease / 4 : 1.0;
	if (!t->lapsed_check || mnow - t->lapsed_check >= every) {
		t->lapsed_check = mnow;
		rc = c->db->drv->claim(c->db, &lcl, &r);
	} else {
		rc = DJC_OK;
		r = xcalloc(1, sizeof *r);
	}
	sb_free(&lw);
	if (!rc && !r->nrows) {
		db_res_free(r);
		r = NULL;
		rc = c->db->drv->claim(c->db, &cl, &r);
	}
	sb_free(&order);
	if (rc) { rc = conn_dbfail(c, rc, "reserve"); goto out; }
	if (r->nrows) {
		djc_job **jobs = xcalloc(r->nrows, sizeof(djc_job *));
		for (size_t i = 0; i < r->nrows; i++) {
			djc_job *j = xcalloc(1, sizeof *j);
			j->t = t;
			j->token = token;
			j->key = djc_row_new();
			for (size_t k = 0; k < r->ncols && k < t->nsrc; k++) {
				val_t v;
				value_out(&t->attrs[t->src[k]], db_cell(r, i, k), &v);
				row_put(j->key, t->attrs[t->src[k]].name, &v);
			}
			jobs[i] = j;
		}
		*out = jobs;
		*nout = r->nrows;
	}
	db_res_free(r);
out:
	sb_free(&w); sb_free(&set); sb_free(&keys);
	pvec_free(&wp); pvec_free(&sp);
	return rc;
}

int jobs_renew(djc_conn *c, table *t, int64_t token, double lease, long *held)
{
	sb_t q = SB_INIT;
	sb_add(&q, "UPDATE ");
	qi(c, &q, t->jobs_name);
	sb_add(&q, " SET ");
	qi(c, &q, "avail_time");
	sb_add(&q, " = ");
	now_plus(c, &q);
	sb_add(&q, " WHERE ");
	qi(c, &q, "token");
	sb_add(&q, " = ? AND ");
	qi(c, &q, "status");
	sb_add(&q, " = 'reserved'");
	val_t p[2] = {val_float(lease), val_int(token)};
	db_res *r = NULL;
	int rc = db_exec(c->db, sb_str(&q), p, 2, &r);
	sb_free(&q);
	if (rc) return conn_dbfail(c, rc, "lease renewal");
	*held = (long)r->affected;
	db_res_free(r);
	return DJC_OK;
}

/* Finish q (an UPDATE ... SET ... or DELETE FROM of the jobs table) with
 * the fence "WHERE key AND token = ? AND status = 'reserved'", run it with
 * p, and free both; *hit = rows affected. */
static int run_fenced(djc_conn *c, djc_job *job, sb_t *q, pvec *p, long *hit)
{
	sb_add(q, " WHERE ");
	key_cond(c, job->t, job->key, NULL, q, p);
	sb_add(q, " AND ");
	qi(c, q, "token");
	sb_add(q, " = ? AND ");
	qi(c, q, "status");
	sb_add(q, " = 'reserved'");
	pvec_push(p, val_int(job->token));
	db_res *r = NULL;
	int rc = db_exec(c->db, sb_str(q), p->v, p->n, &r);
	if (!rc) *hit = (long)r->affected;
	db_res_free(r);
	sb_free(q);
	pvec_free(p);
	return rc;
}

/* UPDATE/DELETE the job row fenced by its token; *hit = rows affected. */
static int close_job(djc_conn *c, djc_job *job, const char *status, const char *msg, const char *stack,
		     double duration, long *hit)
{
	sb_t q = SB_INIT;
	pvec p = {0};
	int keep = !strcmp(status, "error") || config_bool("jobs.keep_completed");
	if (keep) {
		sb_add(&q, "UPDATE ");
		qi(c, &q, job->t->jobs_name);
		sb_add(&q, " SET ");
		qi(c, &q, "status"); sb_add(&q, " = ?, ");
		pvec_push(&p, val_text(status));
		qi(c, &q, "queue"); sb_add(&q, " = 0, ");
		qi(c, &q, "avail_time"); sb_add(&q, " = NULL, ");
		qi(c, &q, "completed_time"); sb_add(&q, " = ");
		now(c, &q);
		sb_add(&q, ", ");
		qi(c, &q, "duration"); sb_add(&q, " = ?, ");
		pvec_push(&p, val_float(duration));
		qi(c, &q, "error_message"); sb_add(&q, " = ?, ");
		char *m = jobs_truncate(msg);
		pvec_push(&p, m ? val_text(m) : val_null());
		free(m);
		qi(c, &q, "error_stack"); sb_add(&q, " = ?, ");
		pvec_push(&p, stack ? val_text(stack) : val_null());
		qi(c, &q, "last_end"); sb_add(&q, " = ?");
		pvec_push(&p, val_text(status));
	} else {
		sb_add(&q, "DELETE FROM ");
		qi(c, &q, job->t->jobs_name);
	}
	return run_fenced(c, job, &q, &p, hit);
}

int make_rows_insert(djc_conn *c, const table *target, table **tables, djc_row **rows, size_t n)
{
	c->taken = 0;
	for (size_t i = 0; i < n; i++) {
		size_t bad = 0;
		int rc = rows_insert(c, tables[i], &rows[i], 1, 0, NULL, &bad);
		if (!rc) continue;
		char *k = key_to_json(tables[i], rows[i], 0);
		/* only the first target row can collide with someone else's
		 * commit (a later one duplicates a row of this very make); a
		 * unique index is make's own error */
		c->taken = rc == DJC_EDUPLICATE && !c->db->dup_unique && tables[i] == target && i == 0;
		if (c->taken)
			conn_fail(c, rc, "%s %s already exists", tables[i]->name, k);
		else if (rc == DJC_EDUPLICATE && c->db->dup_unique)
			conn_fail(c, rc, "row %s of %s repeats a value of a unique index: %s", k, tables[i]->name, c->db->err);
		else if (rc == DJC_EDUPLICATE)
			conn_fail(c, rc, "make produced a duplicate row %s for %s", k, tables[i]->name);
		else if (rc == DJC_EFOREIGN)
			conn_fail(c, rc, "row %s of %s references a missing parent row", k, tables[i]->name);
		else
			conn_fail(c, rc, "inserting %s into %s: %s", k, tables[i]->name, c->db->err);
		free(k);
		return rc;
	}
	return DJC_OK;
}

int jobs_commit(djc_conn *c, djc_job *job, table **tables, djc_row **rows, size_t n, double duration)
{
	c->taken = 0;
	int rc = db_begin(c->db);
	if (rc) return conn_dbfail(c, rc, "commit");
	long hit = 0;
	if ((rc = close_job(c, job, "success", NULL, NULL, duration, &hit))) {
		rc = conn_dbfail(c, rc, "commit");
		db_rollback(c->db);
		return rc;
	}
	if (!hit) {
		db_rollback(c->db);
		char *k = key_to_json(job->t, job->key, 1);
		rc = conn_fail(c, DJC_ELOST, "reservation of %s %s was lost before commit (lease lapsed and the job was taken or reset); nothing committed",
			       job->t->name, k);
		free(k);
		return rc;
	}
	if ((rc = make_rows_insert(c, job->t, tables, rows, n))) {
		db_rollback(c->db);
		if (c->taken) {
			/* made by someone else (e.g. a populate without reservation):
			 * close the job as success, commit nothing of ours */
			if (!db_begin(c->db)) {
				if (!close_job(c, job, "success", NULL, NULL, duration, &hit)) db_commit(c->db);
				else db_rollback(c->db);
			}
		}
		return rc;
	}
	if ((rc = db_commit(c->db))) {
		/* the connection went while COMMIT was under way: it may have
		 * taken effect; jobs_commit_outcome tells */
		if (rc == DJC_ECONN) job->commit_unknown = 1;
		rc = conn_dbfail(c, rc, "commit");
		db_rollback(c->db);
	}
	return rc;
}

int jobs_commit_many(djc_conn *c, djc_job **jobs, size_t k, table **tables, djc_row **rows, size_t n, int *unknown)
{
	*unknown = 0;
	if (!k) return DJC_OK;
	if (config_bool("jobs.keep_completed")) return DJC_EINVAL;   /* per-job durations: one by one */
	table *t = jobs[0]->t;
	sb_t q = SB_INIT;
	pvec p = {0};
	sb_add(&q, "DELETE FROM ");
	qi(c, &q, t->jobs_name);
	sb_add(&q, " WHERE ");
	qi(c, &q, "token");
	sb_add(&q, " = ? AND ");
	qi(c, &q, "status");
	sb_add(&q, " = 'reserved' AND (");
	pvec_push(&p, val_int(jobs[0]->token));
	for (size_t i = 0; i < k; i++) {
		sb_add(&q, i ? " OR (" : "(");
		key_cond(c, t, jobs[i]->key, NULL, &q, &p);
		sb_addc(&q, ')');
	}
	sb_addc(&q, ')');
	db_res *r = NULL;
	int rc = db_begin(c->db);
	if (rc) { rc = conn_dbfail(c, rc, "commit"); goto out; }
	if ((rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r))) { rc = conn_dbfail(c, rc, "commit"); goto fail; }
	if ((size_t)r->affected != k) { rc = conn_fail(c, DJC_ELOST, "a reservation of the group was lost"); goto fail; }
	/* the rows, table by table in order of first appearance (targets
	 * come before their parts) */
	djc_row **sel = xcalloc(n ? n : 1, sizeof(djc_row *));
	char *done = xcalloc(n ? n : 1, 1);
	for (size_t i = 0; i < n && !rc; i++) {
		if (done[i]) continue;
		size_t m = 0;
		for (size_t j = i; j < n; j++)
			if (!done[j] && tables[j] == tables[i]) { sel[m++] = rows[j]; done[j] = 1; }
		if ((rc = rows_insert_many(c, tables[i], sel, m, 0, NULL))) rc = conn_dbfail(c, rc, "commit");
	}
	free(sel);
	free(done);
	if (rc) goto fail;
	if ((rc = db_commit(c->db))) {
		if (rc == DJC_ECONN) *unknown = 1;
		rc = conn_dbfail(c, rc, "commit");
		goto fail;
	}
	goto out;
fail:
	db_rollback(c->db);
out:
	db_res_free(r);
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

int jobs_commit_outcome(djc_conn *c, djc_job *job)
{
	sb_t q = SB_INIT;
	pvec p = {0};
	sb_add(&q, "SELECT ");
	qi(c, &q, "status");
	sb_add(&q, ", ");
	qi(c, &q, "token");
	sb_add(&q, " FROM ");
	qi(c, &q, job->t->jobs_name);
	sb_add(&q, " WHERE ");
	key_cond(c, job->t, job->key, NULL, &q, &p);
	db_res *r = NULL;
	int rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r);
	if (rc) goto out;
	if (r->nrows) {
		const char *st = db_cell_text(r, 0, 0);
		int64_t tok = db_cell_int(r, 0, 1);
		if (tok != job->token) rc = DJC_ELOST;                 /* reset or taken: not ours */
		else if (st && !strcmp(st, "reserved")) rc = 1;       /* still ours, not committed */
		else if (st && !strcmp(st, "success")) rc = DJC_OK;   /* keep_completed: committed */
		else rc = DJC_ELOST;
		goto out;
	}
	/* the job row is gone: deleted by our commit (keep_completed false), or
	 * by a commit of whoever took it after our lease lapsed, or cleared.
	 * The target row tells a commit from none; while we were renewing the
	 * lease nobody else could have taken the job, so the commit is ours. */
	db_res_free(r);
	r = NULL;
	pvec_free(&p);
	sb_reset(&q);
	sb_add(&q, "SELECT count(*) FROM ");
	qi(c, &q, job->t->sql_name);
	sb_add(&q, " WHERE ");
	key_cond(c, job->t, job->key, NULL, &q, &p);
	if ((rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r))) goto out;
	rc = db_cell_int(r, 0, 0) > 0 ? DJC_OK : DJC_ELOST;
out:
	db_res_free(r);
	sb_free(&q);
	pvec_free(&p);
	if (rc < 0 && rc != DJC_ELOST) return conn_dbfail(c, rc, "checking the outcome of a commit");
	if (rc == DJC_ELOST) {
		char *k = key_to_json(job->t, job->key, 1);
		conn_fail(c, DJC_ELOST, "reservation of %s %s was lost before commit; nothing committed", job->t->name, k);
		free(k);
	}
	return rc;
}

int jobs_fail(djc_conn *c, djc_job *job, const char *message, const char *stack, double duration)
{
	long hit = 0;
	int rc = close_job(c, job, "error", message ? message : "make failed", stack, duration, &hit);
	if (rc) return conn_dbfail(c, rc, "recording the error");
	if (!hit) return conn_fail(c, DJC_ELOST, "reservation lost before the error could be recorded");
	return DJC_OK;
}

int jobs_fail_pid(djc_conn *c, table *t, const char *host, long pid, const char *message)
{
	sb_t q = SB_INIT;
	sb_add(&q, "UPDATE ");
	qi(c, &q, t->jobs_name);
	sb_add(&q, " SET ");
	qi(c, &q, "status"); sb_add(&q, " = 'error', ");
	qi(c, &q, "queue"); sb_add(&q, " = 0, ");
	qi(c, &q, "avail_time"); sb_add(&q, " = NULL, ");
	qi(c, &q, "completed_time"); sb_add(&q, " = ");
	now(c, &q);
	sb_add(&q, ", ");
	qi(c, &q, "error_message"); sb_add(&q, " = ?, ");
	qi(c, &q, "last_end"); sb_add(&q, " = 'error' WHERE ");
	qi(c, &q, "status"); sb_add(&q, " = 'reserved' AND ");
	qi(c, &q, "host"); sb_add(&q, " = ? AND ");
	qi(c, &q, "pid"); sb_add(&q, " = ?");
	char *m = jobs_truncate(message);
	val_t p[3] = {val_text(m), val_text(host), val_int(pid)};
	free(m);
	int rc = db_exec(c->db, sb_str(&q), p, 3, NULL);
	for (int i = 0; i < 3; i++) val_free(&p[i]);
	sb_free(&q);
	return rc ? conn_dbfail(c, rc, "recording the error") : DJC_OK;
}

int jobs_release(djc_conn *c, table *t, int64_t token)
{
	sb_t q = SB_INIT;
	sb_add(&q, "UPDATE ");
	qi(c, &q, t->jobs_name);
	sb_add(&q, " SET ");
	qi(c, &q, "status"); sb_add(&q, " = 'pending', ");
	qi(c, &q, "avail_time"); sb_add(&q, " = ");
	now(c, &q);
	sb_add(&q, ", ");
	qi(c, &q, "token"); sb_add(&q, " = NULL, ");
	qi(c, &q, "last_end"); sb_add(&q, " = 'released' WHERE ");
	qi(c, &q, "token"); sb_add(&q, " = ? AND ");
	qi(c, &q, "status"); sb_add(&q, " = 'reserved'");
	val_t p = val_int(token);
	int rc = db_exec(c->db, sb_str(&q), &p, 1, NULL);
	sb_free(&q);
	return rc ? conn_dbfail(c, rc, "release") : DJC_OK;
}

/* Fenced statements on one job: key, token and status reserved. */
static int one_job(djc_conn *c, djc_job *job, const char *set, const val_t *sp, size_t nsp, long *hit)
{
	sb_t q = SB_INIT;
	pvec p = {0};
	for (size_t i = 0; i < nsp; i++) { val_t v; val_copy(&v, &sp[i]); pvec_push(&p, v); }
	sb_add(&q, "UPDATE ");
	qi(c, &q, job->t->jobs_name);
	sb_printf(&q, " SET %s", set);
	int rc = run_fenced(c, job, &q, &p, hit);
	return rc ? conn_dbfail(c, rc, job->t->jobs_name) : DJC_OK;
}

int jobs_hold(djc_conn *c, djc_job *job, double lease, long *held)
{
	sb_t set = SB_INIT;
	qi(c, &set, "avail_time");
	sb_add(&set, " = ");
	now_plus(c, &set);
	val_t p = val_float(lease);
	int rc = one_job(c, job, sb_str(&set), &p, 1, held);
	sb_free(&set);
	return rc;
}

int jobs_release_job(djc_conn *c, djc_job *job)
{
	sb_t set = SB_INIT;
	qi(c, &set, "status"); sb_add(&set, " = 'pending', ");
	qi(c, &set, "avail_time"); sb_add(&set, " = ");
	now(c, &set);
	sb_add(&set, ", ");
	qi(c, &set, "token"); sb_add(&set, " = NULL, ");
	qi(c, &set, "last_end"); sb_add(&set, " = 'released'");
	long hit = 0;
	int rc = one_job(c, job, sb_str(&set), NULL, 0, &hit);
	sb_free(&set);
	return rc;
}

long jobs_ready_count(djc_conn *c, table *t, const char *where, long max_priority)
{
	sb_t q = SB_INIT;
	pvec p = {0};
	sb_add(&q, "SELECT count(*) FROM ");
	qi(c, &q, t->jobs_name);
	sb_add(&q, " WHERE ");
	qi(c, &q, "queue");
	sb_add(&q, " = 1");
	if (max_priority >= 0) {
		sb_add(&q, " AND ");
		qi(c, &q, "priority");
		sb_add(&q, " <= ?");
		pvec_push(&p, val_int(max_priority));
	}
	long n = 0;
	db_res *r = NULL;
	if (!where_build(c, t, where, NULL, 1, &q, &p) && !db_exec(c->db, sb_str(&q), p.v, p.n, &r)) n = (long)db_cell_int(r, 0, 0);
	db_res_free(r);
	sb_free(&q);
	pvec_free(&p);
	return n;
}

/* ------------------------------------------------------------- public */

static int jobs_table(djc_conn *c, const char *name, table **t)
{
	int rc = conn_table(c, name, t);
	if (rc) return rc;
	return jobs_ensure(c, *t);
}

const djc_row *djc_job_key(const djc_job *job) { return job ? job->key : NULL; }
int64_t djc_job_token(const djc_job *job) { return job ? job->token : 0; }
void djc_job_free(djc_job *job)
{
	if (!job) return;
	djc_row_free(job->key);
	free(job);
}

int djc_jobs_reserve(djc_conn *c, const char *name, const char *where, long max_priority, djc_job **out)
{
	*out = NULL;
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	djc_job **jobs = NULL;
	size_t n = 0;
	rc = jobs_claim(c, t, where, max_priority, config_double("jobs.lease_timeout"), 1, &jobs, &n);
	if (rc) return rc;
	if (!n) return conn_fail(c, DJC_ENOTFOUND, "no job of %s is ready to reserve", t->name);
	*out = jobs[0];
	free(jobs);
	return DJC_OK;
}

int djc_jobs_complete(djc_conn *c, djc_job *job, const djc_row *const *rows, size_t n, double duration)
{
	if (!job) return conn_fail(c, DJC_EINVAL, "no job (NULL)");
	if (n && !rows) return conn_fail(c, DJC_EINVAL, "%zu rows announced, none given (NULL)", n);
	for (size_t i = 0; i < n; i++)
		if (!rows[i]) return conn_fail(c, DJC_EINVAL, "row %zu is NULL", i + 1);
	djc_row **prep = xcalloc(n ? n : 1, sizeof(djc_row *));
	table **tabs = xcalloc(n ? n : 1, sizeof(table *));
	int rc = DJC_OK;
	size_t k = 0;
	for (; k < n; k++) {
		char *msg = NULL;
		tabs[k] = job->t;
		if ((rc = row_prepare(c, job->t, rows[k], job->key, &prep[k], &msg))) {
			rc = conn_fail(c, rc, "row %zu: %s", k + 1, msg);
			free(msg);
			break;
		}
	}
	if (!rc) rc = jobs_commit(c, job, tabs, prep, n, duration);
	for (size_t i = 0; i < k; i++) djc_row_free(prep[i]);
	free(prep);
	free(tabs);
	return rc;
}

int djc_jobs_error(djc_conn *c, djc_job *job, const char *message, const char *stack)
{
	return jobs_fail(c, job, message, stack, 0);
}

int djc_jobs_ignore(djc_conn *c, const char *name, const djc_row *key)
{
	if (!key) return conn_fail(c, DJC_EINVAL, "no key (NULL)");
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	/* the key must be exactly the key-source attributes, typed */
	djc_row *k = djc_row_new();
	for (size_t i = 0; i < key->n; i++) {
		attr *a = table_attr(t, key->names[i]);
		int src = 0;
		for (size_t s = 0; a && s < t->nsrc; s++) if (&t->attrs[t->src[s]] == a) src = 1;
		if (!src) {
			djc_row_free(k);
			return conn_fail(c, DJC_EINVAL, "'%s' is not a key attribute of %s's jobs", key->names[i], t->name);
		}
		val_t v;
		char *msg = NULL;
		if (value_in(a, &key->vals[i], &v, &msg)) {
			rc = conn_fail(c, DJC_EINVAL, "key: %s", msg);
			free(msg);
			djc_row_free(k);
			return rc;
		}
		row_put(k, a->name, &v);
	}
	for (size_t s = 0; s < t->nsrc; s++)
		if (!row_get(k, t->attrs[t->src[s]].name)) {
			djc_row_free(k);
			return conn_fail(c, DJC_EINVAL, "key lacks attribute '%s' of %s", t->attrs[t->src[s]].name, t->name);
		}
	sb_t q = SB_INIT;
	pvec p = {0};
	if ((rc = db_begin(c->db))) { rc = conn_dbfail(c, rc, "ignore"); goto out; }
	sb_add(&q, "UPDATE ");
	qi(c, &q, t->jobs_name);
	sb_add(&q, " SET ");
	qi(c, &q, "status"); sb_add(&q, " = 'ignore', ");
	qi(c, &q, "queue"); sb_add(&q, " = 0, ");
	qi(c, &q, "avail_time"); sb_add(&q, " = NULL WHERE ");
	key_cond(c, t, k, NULL, &q, &p);
	db_res *r = NULL;
	if ((rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r))) { rc = conn_dbfail(c, rc, "ignore"); db_rollback(c->db); goto out; }
	long hit = (long)r->affected;
	db_res_free(r);
	if (!hit) {
		sb_reset(&q);
		pvec_free(&p);
		sb_add(&q, "INSERT INTO ");
		qi(c, &q, t->jobs_name);
		sb_add(&q, " (");
		for (size_t i = 0; i < t->nsrc; i++) { qi(c, &q, t->attrs[t->src[i]].name); sb_add(&q, ", "); }
		const char *cols[] = {"status", "priority", "created_time", "scheduled_time", "queue", "reservations", "user", "host"};
		for (size_t i = 0; i < 8; i++) { if (i) sb_add(&q, ", "); qi(c, &q, cols[i]); }
		sb_add(&q, ") VALUES (");
		for (size_t i = 0; i < t->nsrc; i++) {
			val_t v;
			val_copy(&v, row_get(k, t->attrs[t->src[i]].name));
			pvec_push(&p, v);
			sb_add(&q, "?, ");
		}
		sb_add(&q, "'ignore', ?, ");
		pvec_push(&p, val_int(config_long("jobs.default_priority")));
		now(c, &q); sb_add(&q, ", ");
		now(c, &q);
		sb_add(&q, ", 0, 0, ?, ?)");
		pvec_push(&p, val_text(jobs_user()));
		pvec_push(&p, val_text(jobs_host()));
		if ((rc = db_exec(c->db, sb_str(&q), p.v, p.n, NULL))) { rc = conn_dbfail(c, rc, "ignore"); db_rollback(c->db); goto out; }
	}
	if ((rc = db_commit(c->db))) { rc = conn_dbfail(c, rc, "ignore"); db_rollback(c->db); }
out:
	djc_row_free(k);
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

static int status_ok(const char *status)
{
	static const char *ok[] = {"pending", "reserved", "success", "error", "ignore", NULL};
	for (int i = 0; ok[i]; i++) if (status && !strcmp(status, ok[i])) return 1;
	return 0;
}

int djc_jobs_clear(djc_conn *c, const char *name, const char *status, long *n)
{
	if (n) *n = 0;
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	if (!status_ok(status)) return conn_fail(c, DJC_EINVAL, "unknown job status '%s' (pending, reserved, success, error, ignore)", status ? status : "");
	sb_t q = SB_INIT;
	sb_add(&q, "DELETE FROM ");
	qi(c, &q, t->jobs_name);
	sb_add(&q, " WHERE ");
	qi(c, &q, "status");
	sb_add(&q, " = ?");
	val_t p = val_text(status);
	db_res *r = NULL;
	rc = db_exec(c->db, sb_str(&q), &p, 1, &r);
	val_free(&p);
	sb_free(&q);
	if (rc) return conn_dbfail(c, rc, "clear");
	if (n) *n = (long)r->affected;
	db_res_free(r);
	return DJC_OK;
}

int djc_jobs_counts(djc_conn *c, const char *name, long counts[5])
{
	memset(counts, 0, 5 * sizeof(long));
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	sb_t q = SB_INIT;
	sb_add(&q, "SELECT ");
	qi(c, &q, "status");
	sb_add(&q, ", count(*) FROM ");
	qi(c, &q, t->jobs_name);
	sb_add(&q, " GROUP BY ");
	qi(c, &q, "status");
	db_res *r = NULL;
	rc = db_exec(c->db, sb_str(&q), NULL, 0, &r);
	sb_free(&q);
	if (rc) return conn_dbfail(c, rc, "jobs");
	static const char *st[] = {"pending", "reserved", "success", "error", "ignore"};
	for (size_t i = 0; i < r->nrows; i++) {
		const char *s = db_cell_text(r, i, 0);
		for (int k = 0; k < 5; k++) if (s && !strcmp(s, st[k])) counts[k] = (long)db_cell_int(r, i, 1);
	}
	db_res_free(r);
	return DJC_OK;
}

int djc_jobs_list(djc_conn *c, const char *name, const char *status, djc_rowset **out)
{
	*out = NULL;
	if (status && !status_ok(status))
		return conn_fail(c, DJC_EINVAL, "unknown job status '%s' (pending, reserved, success, error, ignore)", status);
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	sb_t q = SB_INIT;
	pvec p = {0};
	sb_add(&q, "SELECT ");
	for (size_t i = 0; i < t->nsrc; i++) { qi(c, &q, t->attrs[t->src[i]].name); sb_add(&q, ", "); }
	for (size_t i = 0; i < NJOBCOLS; i++) {
		if (i) sb_add(&q, ", ");
		qi(c, &q, JOB_COLS[i].name);
	}
	sb_add(&q, " FROM ");
	qi(c, &q, t->jobs_name);
	if (status) {
		sb_add(&q, " WHERE ");
		qi(c, &q, "status");
		sb_add(&q, " = ?");
		pvec_push(&p, val_text(status));
	}
	sb_add(&q, " ORDER BY ");
	qi(c, &q, "priority");
	sb_add(&q, ", ");
	qi(c, &q, "scheduled_time");
	db_res *r = NULL;
	rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r);
	sb_free(&q);
	pvec_free(&p);
	if (rc) return conn_dbfail(c, rc, "jobs");
	djc_rowset *rs = rowset_new();
	for (size_t i = 0; i < r->nrows; i++) {
		djc_row *row = djc_row_new();
		for (size_t k = 0; k < r->ncols; k++) {
			val_t v;
			if (k < t->nsrc) value_out(&t->attrs[t->src[k]], db_cell(r, i, k), &v);
			else {
				size_t j = k - t->nsrc;
				attr a = {.name = (char *)JOB_COLS[j].name, .type = {JOB_COLS[j].t, JOB_COLS[j].p, 0, NULL, 0}};
				value_out(&a, db_cell(r, i, k), &v);
			}
			row_put(row, r->cols[k], &v);
		}
		rowset_push(rs, row);
	}
	db_res_free(r);
	*out = rs;
	return DJC_OK;
}

/* ------------------------------------------------------------- refresh */

/* "ks.a = J.a AND ..." over the key source attributes: the key source row
 * (alias ks) of the jobs row of table J (quoted name). */
static void ks_is_job(djc_conn *c, const table *t, const char *jq, sb_t *q)
{
	for (size_t i = 0; i < t->nsrc; i++) {
		const char *n = t->attrs[t->src[i]].name;
		if (i) sb_add(q, " AND ");
		sb_add(q, "ks."); qi(c, q, n);
		sb_printf(q, " = %s.", jq); qi(c, q, n);
	}
}

int djc_jobs_refresh(djc_conn *c, const char *name, const djc_refresh_options *o, djc_refresh_result *res)
{
	djc_refresh_result ignored;
	if (!res) res = &ignored;
	memset(res, 0, sizeof *res);
	djc_refresh_options def = DJC_REFRESH_OPTIONS_INIT;
	if (!o) o = &def;
	if (o->version != DJC_REFRESH_OPTIONS_VERSION)
		return conn_fail(c, DJC_EINVAL, "refresh options version %d is not %d (use DJC_REFRESH_OPTIONS_INIT)", o->version,
				 DJC_REFRESH_OPTIONS_VERSION);
	table *t;
	int rc = jobs_table(c, name, &t);
	if (rc) return rc;
	long prio = o->priority >= 0 ? o->priority : config_long("jobs.default_priority");
	double stale = o->stale_timeout >= 0 ? o->stale_timeout : config_double("jobs.stale_timeout");
	sb_t q = SB_INIT;
	pvec p = {0};
	db_res *r = NULL;
	const char *J = t->jobs_name;
	sb_t jq = SB_INIT;
	qi(c, &jq, J);

	/* 1. add new keys: (key_source & restriction) - target - jobs */
	sb_printf(&q, "%s %s (", c->db->drv->insert_ignore_head, sb_str(&jq));
	for (size_t i = 0; i < t->nsrc; i++) { qi(c, &q, t->attrs[t->src[i]].name); sb_add(&q, ", "); }
	const char *cols[] = {"status", "priority", "created_time", "scheduled_time", "queue", "avail_time", "reservations"};
	for (size_t i = 0; i < 7; i++) { if (i) sb_add(&q, ", "); qi(c, &q, cols[i]); }
	sb_add(&q, ") SELECT ");
	for (size_t i = 0; i < t->nsrc; i++) {
		sb_add(&q, "ks.");
		qi(c, &q, t->attrs[t->src[i]].name);
		sb_add(&q, ", ");
	}
	sb_add(&q, "'pending', ?, ");
	pvec_push(&p, val_int(prio));
	now(c, &q);
	sb_add(&q, ", ");
	now_plus(c, &q);
	pvec_push(&p, val_float(o->delay));
	sb_add(&q, ", 1, ");
	now_plus(c, &q);
	pvec_push(&p, val_float(o->delay));
	sb_add(&q, ", 0 FROM (");
	if ((rc = keysource_sql(c, t, &q, &p))) goto out;
	sb_add(&q, ") ks WHERE 1=1");
	if ((rc = where_build(c, t, o->where_json, "ks", 1, &q, &p))) goto out;
	not_in_target_sql(c, t, "ks", &q);
	sb_printf(&q, " AND NOT EXISTS (SELECT 1 FROM %s jj WHERE ", sb_str(&jq));
	ks_is_job(c, t, "jj", &q);
	sb_addc(&q, ')');
	sb_add(&q, c->db->drv->insert_ignore_tail);
	if ((rc = db_begin(c->db))) { rc = conn_dbfail(c, rc, "refresh"); goto out; }
	if ((rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r))) { rc = conn_dbfail(c, rc, "refresh (add)"); goto fail; }
	res->added = (long)r->affected;
	db_res_free(r);
	r = NULL;

	/* 2. with keep_completed (as DataJoint): successes whose target row is
	 * gone while the key is still in (key_source & restriction) go back to
	 * pending, with this refresh's priority */
	if (config_bool("jobs.keep_completed")) {
		sb_reset(&q);
		pvec_free(&p);
		sb_printf(&q, "UPDATE %s SET ", sb_str(&jq));
		qi(c, &q, "status"); sb_add(&q, " = 'pending', ");
		qi(c, &q, "priority"); sb_add(&q, " = ?, ");
		pvec_push(&p, val_int(prio));
		qi(c, &q, "queue"); sb_add(&q, " = 1, ");
		qi(c, &q, "scheduled_time"); sb_add(&q, " = "); now(c, &q); sb_add(&q, ", ");
		qi(c, &q, "avail_time"); sb_add(&q, " = "); now(c, &q); sb_add(&q, ", ");
		qi(c, &q, "last_end"); sb_add(&q, " = 're-pended: target row deleted' WHERE ");
		qi(c, &q, "status"); sb_add(&q, " = 'success'");
		{
			sb_t tmp = SB_INIT;
			not_in_target_sql(c, t, sb_str(&jq), &tmp);
			sb_add(&q, sb_str(&tmp));
			sb_free(&tmp);
		}
		sb_add(&q, " AND EXISTS (SELECT 1 FROM (");
		if ((rc = keysource_sql(c, t, &q, &p))) goto fail;
		sb_add(&q, ") ks WHERE ");
		ks_is_job(c, t, sb_str(&jq), &q);
		if ((rc = where_build(c, t, o->where_json, "ks", 1, &q, &p))) goto fail;
		sb_addc(&q, ')');
		if ((rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r))) { rc = conn_dbfail(c, rc, "refresh (re-pend)"); goto fail; }
		res->re_pended = (long)r->affected;
		db_res_free(r);
		r = NULL;
	}

	/* 3. stale: old jobs whose key left the key source (never ignore or reserved) */
	if (stale > 0) {
		sb_reset(&q);
		pvec_free(&p);
		sb_printf(&q, "DELETE FROM %s WHERE ", sb_str(&jq));
		qi(c, &q, "status"); sb_add(&q, " NOT IN ('ignore', 'reserved') AND ");
		qi(c, &q, "created_time"); sb_add(&q, " < ");
		now_plus(c, &q);
		pvec_push(&p, val_float(-stale));
		sb_add(&q, " AND NOT EXISTS (SELECT 1 FROM (");
		if ((rc = keysource_sql(c, t, &q, &p))) goto fail;
		sb_add(&q, ") ks WHERE ");
		ks_is_job(c, t, sb_str(&jq), &q);
		sb_addc(&q, ')');
		if ((rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r))) { rc = conn_dbfail(c, rc, "refresh (stale)"); goto fail; }
		res->removed = (long)r->affected;
		db_res_free(r);
		r = NULL;
	}

	/* 4. orphans: reservations older than orphan_timeout go back to pending */
	if (o->orphan_timeout > 0) {
		sb_reset(&q);
		pvec_free(&p);
		sb_printf(&q, "UPDATE %s SET ", sb_str(&jq));
		qi(c, &q, "status"); sb_add(&q, " = 'pending', ");
		qi(c, &q, "queue"); sb_add(&q, " = 1, ");
		qi(c, &q, "token"); sb_add(&q, " = NULL, ");
		qi(c, &q, "avail_time"); sb_add(&q, " = "); now(c, &q); sb_add(&q, ", ");
		qi(c, &q, "last_end"); sb_add(&q, " = 'orphan timeout' WHERE ");
		qi(c, &q, "status"); sb_add(&q, " = 'reserved' AND ");
		qi(c, &q, "reserved_time"); sb_add(&q, " < ");
		now_plus(c, &q);
		pvec_push(&p, val_float(-o->orphan_timeout));
		if ((rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r))) { rc = conn_dbfail(c, rc, "refresh (orphans)"); goto fail; }
		res->orphaned = (long)r->affected;
		db_res_free(r);
		r = NULL;
	}
	if ((rc = db_commit(c->db))) { rc = conn_dbfail(c, rc, "refresh"); goto fail; }
	goto out;
fail:
	db_rollback(c->db);
	memset(res, 0, sizeof *res);
out:
	sb_free(&q);
	sb_free(&jq);
	pvec_free(&p);
	return rc;
}
