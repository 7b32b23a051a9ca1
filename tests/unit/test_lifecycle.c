/* test_lifecycle.c - a job's life through the C API (issue 15), on the
 * backend of $DJC_TEST_URL: a C make sees its attempt number and is
 * retried; a finished job's history outlives its row; a timeout and a cancel
 * reach a running C make through djc_make_cancelled; a make that finishes
 * after its job was cancelled commits nothing; djc_jobs_error retries
 * with a growing backoff; a lapsed attempt is recorded by the worker that
 * takes the job over; the per-key API (count, list, clear, ignore, set,
 * cancel with a restriction, status aliases); version 1 populate options;
 * a jobs table of the previous version gains the new columns when opened. */
#include "t.h"
#include "tdb.h"
#include "djc.h"
#include "jobs/jobs.h"
#include "jobs/sql.h"
#include "sql/ddl.h"
#include "util/config.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *url, *schema, *backend;

static const char PIPE[] =
	"Key (manual)\n"
	"    k : int32\n"
	"    ---\n"
	"\n"
	"Re (computed)\n"
	"    -> Key\n"
	"    ---\n"
	"    att : int32\n"
	"\n"
	"Tm (computed)\n"
	"    -> Key\n"
	"    ---\n"
	"    att : int32\n"
	"\n"
	"Ca (computed)\n"
	"    -> Key\n"
	"    ---\n"
	"    att : int32\n"
	"\n"
	"Ma (computed)\n"
	"    -> Key\n"
	"    ---\n"
	"    att : int32\n"
	"\n"
	"La (computed)\n"
	"    -> Key\n"
	"    ---\n"
	"    att : int32\n"
	"\n"
	"Wh (computed)\n"
	"    -> Key\n"
	"    ---\n"
	"    att : int32\n"
	"\n"
	"Old (computed)\n"
	"    -> Key\n"
	"    ---\n"
	"    att : int32\n";

static void set(const char *key, const char *value)
{
	config_get(key);   /* loaded first, so the load does not undo this */
	config_set(key, value, "test");
}

static djc_row *key_of(int k)
{
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "k", k);
	return r;
}

/* Text column `name` of rs[i], or "" */
static const char *text_of(const djc_rowset *rs, size_t i, const char *name)
{
	const char *s = NULL;
	const djc_row *r = rs && i < djc_rowset_count(rs) ? djc_rowset_row(rs, i) : NULL;
	long k = r ? djc_row_find(r, name) : -1;
	if (k < 0 || djc_row_text(&s, r, (size_t)k)) return "";
	return s;
}

static int64_t int_of(const djc_rowset *rs, size_t i, const char *name)
{
	int64_t v = -1;
	const djc_row *r = rs && i < djc_rowset_count(rs) ? djc_rowset_row(rs, i) : NULL;
	long k = r ? djc_row_find(r, name) : -1;
	if (k < 0 || djc_row_int(&v, r, (size_t)k)) return -1;
	return v;
}

/* The history of key k of tab ("outcome,outcome,..."). */
static char *outcomes(djc_conn *c, const char *tab, int k)
{
	djc_row *key = key_of(k);
	djc_rowset *hs = NULL;
	char buf[512] = "";
	if (djc_jobs_history(&hs, c, tab, key) == 0)
		for (size_t i = 0; i < djc_rowset_count(hs); i++) {
			strncat(buf, i ? "," : "", sizeof buf - strlen(buf) - 1);
			strncat(buf, text_of(hs, i, "outcome"), sizeof buf - strlen(buf) - 1);
		}
	else
		snprintf(buf, sizeof buf, "(history: %s)", djc_error_last(c));
	djc_rowset_free(hs);
	djc_row_free(key);
	return strdup(buf);
}

static long refresh(djc_conn *c, const char *tab, const char *where)
{
	djc_refresh_options o = DJC_REFRESH_OPTIONS_INIT;
	o.where_json = where;
	djc_refresh_result rr;
	if (djc_jobs_refresh(&rr, c, tab, &o)) {
		fprintf(stderr, "refresh %s: %s\n", tab, djc_error_last(c));
		return -1;
	}
	return rr.added;
}

/* ------------------------------------------------------------ retries */

static int seen[8];
static atomic_int nseen;

/* Fails while its attempt is below the payload's number. */
static int mk_flaky(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)key;
	int a = djc_make_attempt(ctx);
	int i = atomic_fetch_add(&nseen, 1);
	if (i < 8) seen[i] = a;
	if (a < *(int *)payload) {
		djc_make_error(ctx, "flaky on attempt %d", a);
		return 1;
	}
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "att", a);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

static void test_retries(djc_conn *c)
{
	set("jobs.max_attempts", "3");
	set("jobs.retry_delay", "0.05");
	int until = 3;
	for (int keep = 0; keep < 2; keep++) {
		set("jobs.keep_completed", keep ? "true" : "false");
		int k = keep + 1;
		char w[32];
		snprintf(w, sizeof w, "{\"k\": %d}", k);
		CHECK(refresh(c, "Re", w) == 1);
		atomic_store(&nseen, 0);
		djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
		o.reserve_jobs = 1;
		o.refresh = 0;
		o.make = mk_flaky;
		o.payload = &until;
		djc_populate_result *res = NULL;
		int rc = djc_populate(&res, c, "Re", &o);
		CHECK_MSG(rc == 0 && res && res->success_count == 1 && res->error_count == 0 && res->retried_count == 2,
			  "populate Re (keep %d): %d %s", keep, rc, djc_error_last(c));
		djc_populate_result_free(res);
		CHECK_MSG(atomic_load(&nseen) == 3 && seen[0] == 1 && seen[1] == 2 && seen[2] == 3, "attempts seen: %d: %d %d %d",
			  atomic_load(&nseen), seen[0], seen[1], seen[2]);
		djc_rowset *rs = NULL;
		CHECK(djc_fetch(&rs, c, "Re", w) == 0 && int_of(rs, 0, "att") == 3);
		djc_rowset_free(rs);
		char *h = outcomes(c, "Re", k);
		/* without keep_completed the job row goes at commit, and the
		 * history of a job that needed retries stays (jobs.history_retention) */
		CHECK_MSG(!strcmp(h, "error,error,success"), "history of Re %d (keep %d): %s", k, keep, h);
		free(h);
	}
	set("jobs.keep_completed", "false");
	set("jobs.max_attempts", "1");
}

/* --------------------------------------------------------- timeouts */

static atomic_int stop_code;

/* Waits until told to stop (at most 60 s), then says why. */
static int mk_patient(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)key;
	atomic_int *started = payload;
	if (started) atomic_store(started, 1);
	for (int i = 0; i < 6000; i++) {
		int rc = djc_make_cancelled(ctx);
		if (rc) {
			atomic_store(&stop_code, rc);
			djc_make_error(ctx, "stopped: %s", djc_strerror(rc));
			return 1;
		}
		t_nap(0.01);
	}
	return 1;
}

static int mk_sleepy(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)key; (void)payload;
	t_nap(0.4);
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "att", djc_make_attempt(ctx));
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

static void test_timeout(djc_conn *c)
{
	set("jobs.keep_completed", "true");
	CHECK(refresh(c, "Tm", "{\"k\": 1}") == 1);
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.reserve_jobs = 1;
	o.refresh = 0;
	o.make = mk_patient;
	o.timeout = 0.25;
	atomic_store(&stop_code, 0);
	djc_populate_result *res = NULL;
	int rc = djc_populate(&res, c, "Tm", &o);
	CHECK_MSG(rc == DJC_EMAKE && res && res->error_count == 1, "populate Tm: %d %s", rc, djc_error_last(c));
	CHECK_MSG(atomic_load(&stop_code) == DJC_ETIMEDOUT, "djc_make_cancelled said %d", atomic_load(&stop_code));
	CHECK(res && res->n_errors == 1 && !strcmp(res->errors[0].message, "timed out after 0.25s"));
	djc_populate_result_free(res);
	char *h = outcomes(c, "Tm", 1);
	CHECK_MSG(!strcmp(h, "timeout"), "history: %s", h);
	free(h);
	/* a version 1 options struct has no timeout: the field is not read */
	CHECK(refresh(c, "Tm", "{\"k\": 2}") == 1);
	djc_populate_options o1 = DJC_POPULATE_OPTIONS_INIT;
	o1.version = 1;
	o1.reserve_jobs = 1;
	o1.refresh = 0;
	o1.make = mk_sleepy;
	o1.timeout = 0.05;
	res = NULL;
	rc = djc_populate(&res, c, "Tm", &o1);
	CHECK_MSG(rc == 0 && res && res->success_count == 1, "populate Tm with version 1 options: %d %s", rc, djc_error_last(c));
	djc_populate_result_free(res);
	set("jobs.keep_completed", "false");
}

/* ------------------------------------------------------------ cancel */

typedef struct canceller { const char *tab; atomic_int *started, *done; long pending, reserved; int rc; } canceller;

/* Another connection cancels key 1 once the make started. */
static void *cancel_thread(void *arg)
{
	canceller *x = arg;
	for (int i = 0; i < 6000 && !atomic_load(x->started); i++) t_nap(0.01);
	djc_conn *c = t_open(url, schema);
	x->rc = djc_jobs_cancel(&x->pending, &x->reserved, c, x->tab, "{\"k\": 1}");
	if (x->rc) fprintf(stderr, "cancel: %s\n", djc_error_last(c));
	if (x->done) atomic_store(x->done, 1);
	djc_close(c);
	return NULL;
}

/* Finishes as soon as the cancel is done (before a renewal can notice). */
static int mk_late(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)key;
	atomic_int **flags = payload;
	atomic_store(flags[0], 1);
	for (int i = 0; i < 6000 && !atomic_load(flags[1]); i++) t_nap(0.01);
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "att", djc_make_attempt(ctx));
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

static void test_cancel(djc_conn *c)
{
	set("jobs.lease_timeout", "1");   /* a renewal every 0.25 s */
	/* a running make sees DJC_ECANCELED, nothing is committed */
	CHECK(refresh(c, "Ca", "{\"k\": [1, 2]}") == 2);
	atomic_int started = 0;
	canceller x = {"Ca", &started, NULL, 0, 0, 0};
	pthread_t th;
	pthread_create(&th, NULL, cancel_thread, &x);
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.reserve_jobs = 1;
	o.refresh = 0;
	o.where_json = "{\"k\": 1}";
	o.make = mk_patient;
	o.payload = &started;
	atomic_store(&stop_code, 0);
	djc_populate_result *res = NULL;
	int rc = djc_populate(&res, c, "Ca", &o);
	pthread_join(th, NULL);
	CHECK_MSG(x.rc == 0 && x.reserved == 1 && x.pending == 0, "cancel: %d, %ld reserved, %ld pending", x.rc, x.reserved, x.pending);
	CHECK_MSG(rc == 0 && res && res->cancelled_count == 1 && res->lost_count == 0 && res->error_count == 0 && res->success_count == 0,
		  "populate Ca: %d %s", rc, djc_error_last(c));
	djc_populate_result_free(res);
	CHECK_MSG(atomic_load(&stop_code) == DJC_ECANCELED, "djc_make_cancelled said %d", atomic_load(&stop_code));
	CHECK(t_count(c, "Ca", NULL) == 0);
	djc_rowset *rs = NULL;
	CHECK(djc_jobs_list_ext(&rs, c, "Ca", "ignored", "{\"k\": 1}") == 0 && djc_rowset_count(rs) == 1);
	CHECK(!strncmp(text_of(rs, 0, "error_message"), "cancelled by ", 13) && !strcmp(text_of(rs, 0, "last_end"), "cancelled"));
	djc_rowset_free(rs);
	char *h = outcomes(c, "Ca", 1);
	CHECK_MSG(!strcmp(h, "cancelled"), "history: %s", h);
	free(h);

	/* a make that finishes just after the cancel: its commit is refused by
	 * the fence, counted cancelled, nothing written */
	djc_jobs_clear_ext(NULL, c, "Ca", NULL, NULL);
	CHECK(refresh(c, "Ca", "{\"k\": 1}") == 1);
	set("jobs.lease_timeout", "600");   /* no renewal during the make */
	atomic_int st2 = 0, done = 0;
	atomic_int *flags[2] = {&st2, &done};
	canceller y = {"Ca", &st2, &done, 0, 0, 0};
	pthread_create(&th, NULL, cancel_thread, &y);
	o.make = mk_late;
	o.payload = flags;
	res = NULL;
	rc = djc_populate(&res, c, "Ca", &o);
	pthread_join(th, NULL);
	CHECK_MSG(rc == 0 && res && res->cancelled_count == 1 && res->success_count == 0 && res->lost_count == 0,
		  "populate Ca (late): %d %s", rc, djc_error_last(c));
	djc_populate_result_free(res);
	CHECK(t_count(c, "Ca", NULL) == 0);
	set("jobs.lease_timeout", "1");
}

/* ----------------------------------------------- djc_jobs_error, backoff */

static void test_manual_retry(djc_conn *c)
{
	set("jobs.max_attempts", "3");
	set("jobs.retry_delay", "0.2");
	set("jobs.keep_completed", "true");
	CHECK(refresh(c, "Ma", "{\"k\": 1}") == 1);
	double prev = 0;
	for (int a = 1; a <= 3; a++) {
		djc_job *j = NULL;
		int rc = DJC_ENOTFOUND;
		/* due after its backoff: poll, bounded */
		for (int i = 0; i < 6000 && (rc = djc_jobs_reserve(&j, c, "Ma", NULL, -1)) == DJC_ENOTFOUND; i++) t_nap(0.01);
		CHECK_MSG(rc == 0 && j, "reserve attempt %d: %s", a, djc_error_last(c));
		if (!j) break;
		CHECK_MSG(djc_job_attempt(j) == a, "attempt %d, djc_job_attempt %d", a, djc_job_attempt(j));
		CHECK(djc_jobs_error(c, j, "manual failure", NULL) == 0);
		djc_job_free(j);
		djc_rowset *rs = NULL;
		CHECK(djc_jobs_list_ext(&rs, c, "Ma", NULL, "{\"k\": 1}") == 0);
		CHECK_MSG(!strcmp(text_of(rs, 0, "status"), a < 3 ? "pending" : "error") && int_of(rs, 0, "attempts") == a,
			  "after attempt %d: %s, %lld attempts", a, text_of(rs, 0, "status"), (long long)int_of(rs, 0, "attempts"));
		if (a < 3)   /* due after its backoff, not at once (database times, same format) */
			CHECK_MSG(strcmp(text_of(rs, 0, "scheduled_time"), text_of(rs, 0, "completed_time")) > 0, "retry due %s, failed %s",
				  text_of(rs, 0, "scheduled_time"), text_of(rs, 0, "completed_time"));
		djc_rowset_free(rs);
		djc_rowset *hs = NULL;
		djc_row *key = key_of(1);
		CHECK(djc_jobs_history(&hs, c, "Ma", key) == 0 && djc_rowset_count(hs) == (size_t)a);
		double b = -1;
		const djc_row *last = hs && djc_rowset_count(hs) ? djc_rowset_row(hs, djc_rowset_count(hs) - 1) : NULL;
		long bi = last ? djc_row_find(last, "backoff") : -1;
		if (a < 3) {
			CHECK(bi >= 0 && djc_row_float(&b, last, (size_t)bi) == 0 && b > prev);
			prev = b;
		} else
			CHECK(bi >= 0 && djc_row_type(last, (size_t)bi) == DJC_NULL);
		djc_rowset_free(hs);
		djc_row_free(key);
	}
	set("jobs.max_attempts", "1");
	set("jobs.keep_completed", "false");
}

/* ------------------------------------------------- a lapsed attempt */

static void test_lapsed(djc_conn *c)
{
	set("jobs.lease_timeout", "0.5");
	set("jobs.keep_completed", "true");
	CHECK(refresh(c, "La", "{\"k\": 1}") == 1);
	djc_conn *dead = t_open(url, schema);
	djc_job *j1 = NULL, *j2 = NULL;
	CHECK(djc_jobs_reserve(&j1, dead, "La", NULL, -1) == 0 && j1);
	/* its holder never renews: another connection takes it once it lapsed */
	int rc = DJC_ENOTFOUND;
	for (int i = 0; i < 6000 && (rc = djc_jobs_reserve(&j2, c, "La", NULL, -1)) == DJC_ENOTFOUND; i++) t_nap(0.01);
	CHECK_MSG(rc == 0 && j2, "takeover: %s", djc_error_last(c));
	CHECK(j2 && djc_job_attempt(j2) == 1);   /* a lapse is no failure */
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "att", 2);
	const djc_row *rows[1] = {r};
	CHECK(j2 && djc_jobs_complete(c, j2, rows, 1, 0.1) == 0);
	CHECK(j1 && djc_jobs_complete(dead, j1, rows, 1, 0.1) == DJC_ELOST);
	djc_row_free(r);
	char *h = outcomes(c, "La", 1);
	CHECK_MSG(!strcmp(h, "lease expired,success"), "history: %s", h);
	free(h);
	djc_row *key = key_of(1);
	djc_rowset *hs = NULL;
	CHECK(djc_jobs_history(&hs, c, "La", key) == 0);
	CHECK(int_of(hs, 0, "attempt") == 1 && int_of(hs, 0, "pid") == (int64_t)getpid() && int_of(hs, 0, "token") == djc_job_token(j1));
	CHECK(!strncmp(text_of(hs, 0, "message"), "the lease lapsed at ", 20));
	djc_rowset_free(hs);
	djc_row_free(key);
	djc_job_free(j1);
	djc_job_free(j2);
	djc_close(dead);
	set("jobs.lease_timeout", "1");
	set("jobs.keep_completed", "false");
}

/* ------------------------------------------------------- per-key API */

static void test_where(djc_conn *c)
{
	CHECK(refresh(c, "Wh", "{\"k\": {\"<=\": 6}}") == 6);
	djc_job_counts n;
	CHECK(djc_jobs_count(&n, c, "Wh", "{\"k\": [1, 2, 3]}") == 0 && n.pending == 3 && n.total == 3);
	CHECK(djc_jobs_count(&n, c, "Wh", NULL) == 0 && n.pending == 6 && n.total == 6);
	long k = 0;
	CHECK(djc_jobs_ignore_ext(&k, c, "Wh", "{\"k\": [1, 7]}") == 0 && k == 2);   /* 7 has no job yet: added */
	djc_jobs_set_options so = DJC_JOBS_SET_OPTIONS_INIT;
	so.priority = 1;
	CHECK(djc_jobs_set(&k, c, "Wh", "{\"k\": 2}", &so) == 0 && k == 1);
	djc_rowset *rs = NULL;
	CHECK(djc_jobs_list_ext(&rs, c, "Wh", "pending", "{\"k\": 2}") == 0 && int_of(rs, 0, "priority") == 1);
	djc_rowset_free(rs);
	so.priority = -1;
	so.delay = 3600;
	CHECK(djc_jobs_set(&k, c, "Wh", "{\"k\": [3, 4]}", &so) == 0 && k == 2);
	djc_jobs_set_options none = DJC_JOBS_SET_OPTIONS_INIT;
	CHECK(djc_jobs_set(&k, c, "Wh", NULL, &none) == DJC_EINVAL);
	none.version = 9;
	none.priority = 1;
	CHECK(djc_jobs_set(&k, c, "Wh", NULL, &none) == DJC_EINVAL);
	long p = 0, r = 0;
	CHECK(djc_jobs_cancel(&p, &r, c, "Wh", "{\"k\": [5, 1]}") == 0 && p == 1 && r == 0);
	CHECK(djc_jobs_count(&n, c, "Wh", NULL) == 0 && n.pending == 4 && n.ignore == 3 && n.total == 7);
	CHECK(djc_jobs_list_ext(&rs, c, "Wh", "ignored", NULL) == 0 && djc_rowset_count(rs) == 3);
	djc_rowset_free(rs);
	CHECK(djc_jobs_list_ext(&rs, c, "Wh", "bogus", NULL) == DJC_EINVAL && !rs);
	CHECK(djc_jobs_cancel(&p, &r, c, "Wh", "{\"nope\": 1}") == DJC_EINVAL && strstr(djc_error_last(c), "nope"));
	CHECK(djc_jobs_clear_ext(&k, c, "Wh", "ignore", "{\"k\": 7}") == 0 && k == 1);
	CHECK(djc_jobs_clear_ext(&k, c, "Wh", NULL, "{\"k\": [1, 2]}") == 0 && k == 2);
	CHECK(djc_jobs_clear_ext(&k, c, "Wh", "bogus", NULL) == DJC_EINVAL);
	CHECK(djc_jobs_count(&n, c, "Wh", NULL) == 0 && n.total == 4 && n.pending == 3 && n.ignore == 1);
	/* only the due ones are taken: 3 and 4 wait an hour, 6 is due */
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.reserve_jobs = 1;
	o.refresh = 0;
	o.make = mk_sleepy;
	djc_populate_result *res = NULL;
	int rc = djc_populate(&res, c, "Wh", &o);
	CHECK_MSG(rc == 0 && res && res->success_count == 1, "populate Wh: %d %s", rc, djc_error_last(c));
	djc_populate_result_free(res);
	CHECK(t_count(c, "Wh", "{\"k\": 6}") == 1 && t_count(c, "Wh", NULL) == 1);
}

/* --------------------------------------- a jobs table of the last version */

static int exec_sql(djc_conn *c, const char *sql)
{
	int rc = db_exec(c->db, sql, NULL, 0, NULL);
	if (rc) fprintf(stderr, "%s: %s\n", sql, c->db->err);
	return rc;
}

static void test_upgrade(djc_conn *c)
{
	table *t = NULL;
	CHECK(conn_table(c, "Old", &t) == 0 && t);
	if (!t) return;
	/* the jobs table as the previous version made it: no attempts, no
	 * history columns, no history table; one pending job */
	sb_t q = SB_INIT, hn = SB_INIT;
	sb_add(&q, "DROP TABLE IF EXISTS ");
	db_qi(c->db, &q, jobs_hist_name(t, &hn));
	CHECK(exec_sql(c, sb_str(&q)) == 0);
	sb_reset(&q);
	sb_add(&q, "DROP TABLE IF EXISTS ");
	db_qi(c->db, &q, t->jobs_name);
	CHECK(exec_sql(c, sb_str(&q)) == 0);
	sb_reset(&q);
	sb_add(&q, "CREATE TABLE ");
	db_qi(c->db, &q, t->jobs_name);
	sb_add(&q, " (");
	db_qi(c->db, &q, "k");
	sb_add(&q, " INTEGER NOT NULL");
	for (size_t i = 0; i < NJOB_COLS; i++) {
		if (JOB_COLS[i].def) continue;   /* the columns added since */
		attr a = {.name = (char *)JOB_COLS[i].name, .type = {JOB_COLS[i].type, JOB_COLS[i].p, 0, NULL, 0}};
		sb_add(&q, ", ");
		ddl_column(c->db, &q, &a, JOB_COLS[i].not_null);
	}
	sb_add(&q, ", PRIMARY KEY (");
	db_qi(c->db, &q, "k");
	sb_add(&q, "))");
	sb_add(&q, c->db->table_suffix);
	CHECK(exec_sql(c, sb_str(&q)) == 0);
	sb_reset(&q);
	sb_add(&q, "INSERT INTO ");
	db_qi(c->db, &q, t->jobs_name);
	sb_add(&q, " (");
	const char *cols[] = {"k", "status", "priority", "created_time", "scheduled_time", "queue", "avail_time", "reservations"};
	for (size_t i = 0; i < 8; i++) {
		if (i) sb_add(&q, ", ");
		db_qi(c->db, &q, cols[i]);
	}
	sb_add(&q, ") VALUES (1, 'pending', 5, ");
	c->db->drv->now(&q);
	sb_add(&q, ", ");
	c->db->drv->now(&q);
	sb_add(&q, ", 1, ");
	c->db->drv->now(&q);
	sb_add(&q, ", 0)");
	CHECK(exec_sql(c, sb_str(&q)) == 0);
	sb_free(&q);
	sb_free(&hn);
	/* a new connection opens it: the columns and the history table appear */
	djc_conn *d = t_open(url, schema);
	djc_rowset *rs = NULL;
	CHECK_MSG(djc_jobs_list_ext(&rs, d, "Old", NULL, NULL) == 0, "list Old: %s", djc_error_last(d));
	CHECK(djc_rowset_count(rs) == 1 && int_of(rs, 0, "attempts") == 0 && int_of(rs, 0, "history") == 0);
	djc_rowset_free(rs);
	set("jobs.max_attempts", "2");
	set("jobs.keep_completed", "true");
	int until = 2;
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.reserve_jobs = 1;
	o.refresh = 0;
	o.make = mk_flaky;
	o.payload = &until;
	djc_populate_result *res = NULL;
	int rc = djc_populate(&res, d, "Old", &o);
	CHECK_MSG(rc == 0 && res && res->success_count == 1 && res->retried_count == 1, "populate Old: %d %s", rc, djc_error_last(d));
	djc_populate_result_free(res);
	char *h = outcomes(d, "Old", 1);
	CHECK_MSG(!strcmp(h, "error,success"), "history of Old: %s", h);
	free(h);
	djc_close(d);
	set("jobs.max_attempts", "1");
	set("jobs.keep_completed", "false");
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_lifecycle", "retries timeout cancel manual_retry lapsed where upgrade");
	url = getenv("DJC_TEST_URL");
	schema = getenv("DJC_TEST_SCHEMA");
	backend = getenv("DJC_BACKEND");
	if (!url) url = "sqlite:/tmp/djc-test-lifecycle.db";
	if (!backend) backend = "sqlite";
	set("jobs.lease_timeout", "1");
	djc_conn *c = t_open(url, schema);
	char *rep = NULL;
	int rc = djc_declare(&rep, c, PIPE, "lifecycle.djc");
	CHECK_MSG(rc == 0, "declare: %s", djc_error_last(c));
	free(rep);
	for (int k = 1; k <= 8; k++) {
		djc_row *r = key_of(k);
		const djc_row *rows[1] = {r};
		djc_insert_ext(NULL, c, "Key", rows, 1, NULL);
		djc_row_free(r);
	}
	if (t_want("retries")) test_retries(c);
	if (t_want("timeout")) test_timeout(c);
	if (t_want("cancel")) test_cancel(c);
	if (t_want("manual_retry")) test_manual_retry(c);
	if (t_want("lapsed")) test_lapsed(c);
	if (t_want("where")) test_where(c);
	if (t_want("upgrade")) test_upgrade(c);
	djc_close(c);
	return T_DONE("test_lifecycle");
}
