/* test_crash.c - C makes that crash their worker (issue 36.1), through the
 * public API:
 *  - a --processes 2 child (claims of 3 jobs) killed by its make once: the
 *    parent records that job, and only it, as a worker lost on it (lost 1,
 *    a "died" attempt, "make killed by signal 9"), as a lapsed lease would
 *    be: no attempt of jobs.max_attempts (1) used, the job pending again
 *    and made on its retry; it hands the rest of the child's claim back,
 *    starts a worker in its place, and every other key is made;
 *  - a make that kills its child every time: the job becomes an error
 *    "worker died 3 times on this job" after jobs.max_lost (3) deaths,
 *    none of them an attempt, instead of crashing a worker per retry;
 *  - single-process workers (no parent to see the death) whose make aborts
 *    on one key: the next worker finds the lapsed lease, sends the job back
 *    to pending behind the pending work (it makes the other keys first),
 *    with the backoff of a retry, and after 3 workers died on it the job
 *    is an error saying so; the rest is made;
 *  - the same with claims of 3 jobs: the first death is laid on none of the
 *    claim's jobs (not known which one was made), they come back as
 *    suspects, marked before their makes, and the job that kills is the
 *    only one counted (3 more deaths), its neighbours lose nothing;
 *  - a suspect last in a claim of several, committed alone: its commit
 *    claims the next jobs once, and the claim's other jobs, committed
 *    before it, claim none (they used to claim again, leaving the first
 *    next claim reserved by nobody);
 *  - and the other way round (issue 36.2): a C program whose populate runs
 *    2 worker processes is killed (SIGKILL): its workers' makes see
 *    djc_make_cancelled say DJC_EINTR at once, their jobs are recorded as
 *    interrupted, the rest of their claims go back to pending, and they
 *    exit.
 * Runs on $DJC_TEST_URL / $DJC_TEST_SCHEMA (default: a fresh SQLite file). */
#include "t.h"
#include "djc.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *url, *schema;

/* Every make call, in order, in memory shared with the forked workers
 * (a worker that crashes cannot report): calls[0] the count, then keys. */
static atomic_int *calls;
enum { MAX_CALLS = 4000 };

static int64_t key_id(const djc_row *key)
{
	int64_t id = 0;
	djc_row_int(&id, key, (size_t)djc_row_find(key, "id"));
	return id;
}

static void log_call(int64_t id)
{
	int n = atomic_fetch_add(&calls[0], 1) + 1;
	if (n < MAX_CALLS) atomic_store(&calls[n], (int)id);
}

static int put_row(djc_make_ctx *ctx, int64_t id)
{
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "y", id * 2);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

static int crash_on_5(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t id = key_id(key);
	log_call(id);
	if (id == 5) raise(SIGKILL);   /* an OOM kill, a segfault: the worker child dies */
	return put_row(ctx, id);
}

static int call_after(int id, int after);

/* crash_on_5 on the first make of key 5 only */
static int crash_once_on_5(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t id = key_id(key);
	int first = id == 5 && !call_after(5, 0);
	log_call(id);
	if (first) raise(SIGKILL);
	return put_row(ctx, id);
}

/* a make that ends its worker process with exit() on the first make of
 * key 5 (lab code's exit(1) on an error, or even exit(0)) */
static int exit_once_on_5(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	int64_t id = key_id(key);
	int first = id == 5 && !call_after(5, 0);
	log_call(id);
	if (first) exit(*(int *)payload);
	return put_row(ctx, id);
}

static int abort_on_2(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t id = key_id(key);
	log_call(id);
	if (id == 2) abort();   /* the whole worker process dies */
	return put_row(ctx, id);
}

static void set(const char *key, const char *value)
{
	CHECK_MSG(djc_config_set(key, value, "test_crash", NULL) == DJC_OK, "set %s", key);
}

static void insert_ids(djc_conn *c, const char *table, int n)
{
	djc_row *rows[32];
	for (int i = 0; i < n; i++) { rows[i] = djc_row_new(); djc_row_set_int(rows[i], "id", i + 1); }
	CHECK(djc_insert_ext(NULL, c, table, (const djc_row *const *)rows, (size_t)n, NULL) == DJC_OK);
	for (int i = 0; i < n; i++) djc_row_free(rows[i]);
}

/* Column name of key id's job of table, as text (NULL: no such job). */
static char *job_text(djc_conn *c, const char *table, int id, const char *name)
{
	char w[32];
	snprintf(w, sizeof w, "{\"id\": %d}", id);
	djc_rowset *rs = NULL;
	char *out = NULL;
	if (djc_jobs_list_ext(&rs, c, table, NULL, w) == DJC_OK && djc_rowset_count(rs) == 1) {
		const djc_row *r = djc_rowset_row(rs, 0);
		long k = djc_row_find(r, name);
		const char *s = NULL;
		int64_t v = 0;
		if (k >= 0 && djc_row_text(&s, r, (size_t)k) == DJC_OK) out = strdup(s);
		else if (k >= 0 && djc_row_int(&v, r, (size_t)k) == DJC_OK && asprintf(&out, "%lld", (long long)v) < 0) out = NULL;
	}
	djc_rowset_free(rs);
	return out;
}

static int job_int(djc_conn *c, const char *table, int id, const char *name)
{
	char *s = job_text(c, table, id, name);
	int v = s ? atoi(s) : -1;
	free(s);
	return v;
}

/* The outcomes of key id's history ("a,b,c"), and how many of its rows
 * have a backoff. */
static char *outcomes(djc_conn *c, const char *table, int id, int *with_backoff)
{
	djc_row *key = djc_row_new();
	djc_row_set_int(key, "id", id);
	djc_rowset *hs = NULL;
	char buf[512] = "";
	*with_backoff = 0;
	if (djc_jobs_history(&hs, c, table, key) == DJC_OK)
		for (size_t i = 0; i < djc_rowset_count(hs); i++) {
			const djc_row *r = djc_rowset_row(hs, i);
			const char *o = "?";
			djc_row_text(&o, r, (size_t)djc_row_find(r, "outcome"));
			strncat(buf, i ? "," : "", sizeof buf - strlen(buf) - 1);
			strncat(buf, o, sizeof buf - strlen(buf) - 1);
			long b = djc_row_find(r, "backoff");
			double f = 0;
			if (b >= 0 && djc_row_type(r, (size_t)b) != DJC_NULL && djc_row_float(&f, r, (size_t)b) == DJC_OK && f > 0) (*with_backoff)++;
		}
	djc_rowset_free(hs);
	djc_row_free(key);
	return strdup(buf);
}

/* The first index (1-based) of a call of id in the log after position
 * `after`, or 0. */
static int call_after(int id, int after)
{
	int n = atomic_load(&calls[0]);
	for (int i = after + 1; i <= n && i < MAX_CALLS; i++)
		if (atomic_load(&calls[i]) == id) return i;
	return 0;
}

/* A reserving populate of table by make in procs worker processes, errors
 * suppressed (the tests read them from *res and the jobs table). */
static int reserved_populate(djc_conn *c, const char *table, int procs, djc_make_fn make, djc_populate_result **res)
{
	djc_populate_options o;
	djc_populate_options_init(&o);
	o.reserve_jobs = 1;
	o.processes = procs;
	o.suppress_errors = 1;
	o.make = make;
	*res = NULL;
	return djc_populate(res, c, table, &o);
}

/* --------------------------------------------- a --processes child dies */

static void test_pool_child(djc_conn *c)
{
	set("jobs.retry_delay", "0");
	set("jobs.keep_completed", "true");   /* the job of key 5 stays, to be read */
	atomic_store(&calls[0], 0);
	djc_populate_result *res;
	int rc = reserved_populate(c, "CrOut", 2, crash_once_on_5, &res);
	CHECK_MSG(rc == DJC_OK, "rc %d: %s", rc, djc_error_last(c));
	CHECK_MSG(res && res->success_count == 12 && res->error_count == 0 && res->retried_count == 1 && res->n_errors == 0,
		  "success %ld errors %ld retried %ld", res ? res->success_count : -1, res ? res->error_count : -1,
		  res ? res->retried_count : -1);
	djc_populate_result_free(res);
	int fives = 0;
	for (int i = call_after(5, 0); i; i = call_after(5, i)) fives++;
	CHECK_MSG(fives == 2, "key 5 made %d times, not 2", fives);

	long n[5];
	CHECK(djc_jobs_counts(n, c, "CrOut") == DJC_OK);
	CHECK_MSG(n[0] == 0 && n[1] == 0 && n[2] == 12 && n[3] == 0, "pending %ld reserved %ld success %ld error %ld", n[0], n[1],
		  n[2], n[3]);
	djc_rowset *rs = NULL;
	CHECK(djc_fetch(&rs, c, "CrOut", NULL) == DJC_OK && djc_rowset_count(rs) == 12);
	djc_rowset_free(rs);
	/* a worker lost on it, no attempt used */
	CHECK_MSG(job_int(c, "CrOut", 5, "lost") == 1 && job_int(c, "CrOut", 5, "attempts") == 0, "lost %d attempts %d",
		  job_int(c, "CrOut", 5, "lost"), job_int(c, "CrOut", 5, "attempts"));
	int b = 0;
	char *h = outcomes(c, "CrOut", 5, &b);
	CHECK_MSG(!strcmp(h, "died,success"), "history of 5: %s", h);
	free(h);
	djc_row *key = djc_row_new();
	djc_row_set_int(key, "id", 5);
	djc_rowset *hs = NULL;
	const char *m = NULL;
	if (djc_jobs_history(&hs, c, "CrOut", key) == DJC_OK && djc_rowset_count(hs) == 2)
		djc_row_text(&m, djc_rowset_row(hs, 0), (size_t)djc_row_find(djc_rowset_row(hs, 0), "message"));
	CHECK_MSG(m && !strncmp(m, "make killed by signal 9 (worker process ", 40), "%s", m ? m : "(no message)");
	djc_rowset_free(hs);
	djc_row_free(key);
	set("jobs.keep_completed", "false");
}

/* A make that calls exit() in a --processes child: a worker lost on its
 * job, as one killed by a signal, not a worker that ended. Before, the
 * parent took the exit for the child's normal end: populate returned
 * DJC_OK with the key neither made nor failed, its job left reserved
 * (reserve_jobs), or without a word of it (direct). */
static void test_pool_child_exit(djc_conn *c)
{
	set("jobs.retry_delay", "0");
	set("jobs.keep_completed", "true");
	for (int code = 0; code <= 3; code += 3) {
		CHECK(djc_delete_ext(NULL, c, "CrExit", NULL, NULL) == DJC_OK);
		CHECK(djc_jobs_clear_ext(NULL, c, "CrExit", NULL, NULL) == DJC_OK);
		/* direct: the key is a failed make, the others are made */
		atomic_store(&calls[0], 0);
		djc_populate_options o;
		djc_populate_options_init(&o);
		o.processes = 2;
		o.suppress_errors = 1;
		o.make = exit_once_on_5;
		o.payload = &code;
		djc_populate_result *res = NULL;
		int rc = djc_populate(&res, c, "CrExit", &o);
		char want[64];
		snprintf(want, sizeof want, "make called exit(%d) (worker process ", code);
		CHECK_MSG(rc == DJC_EMAKE && res && res->success_count == 11 && res->error_count == 1 && res->n_errors == 1,
			  "exit(%d), direct: rc %d, made %ld, failed %ld: %s", code, rc, res ? res->success_count : -1,
			  res ? res->error_count : -1, djc_error_last(c));
		if (res && res->n_errors == 1)
			CHECK_MSG(!strncmp(res->errors[0].message, want, strlen(want)), "%s", res->errors[0].message);
		djc_populate_result_free(res);
		CHECK(djc_delete_ext(NULL, c, "CrExit", NULL, NULL) == DJC_OK);
		/* reserving: a worker lost on the job, which is made on its retry */
		atomic_store(&calls[0], 0);
		o.reserve_jobs = 1;
		res = NULL;
		rc = djc_populate(&res, c, "CrExit", &o);
		CHECK_MSG(rc == DJC_OK && res && res->success_count == 12 && res->error_count == 0 && res->retried_count == 1,
			  "exit(%d), reserving: rc %d, made %ld, failed %ld, retried %ld: %s", code, rc,
			  res ? res->success_count : -1, res ? res->error_count : -1, res ? res->retried_count : -1,
			  djc_error_last(c));
		djc_populate_result_free(res);
		long n[5];
		CHECK(djc_jobs_counts(n, c, "CrExit") == DJC_OK);
		CHECK_MSG(n[0] == 0 && n[1] == 0 && n[2] == 12 && n[3] == 0, "pending %ld reserved %ld success %ld error %ld",
			  n[0], n[1], n[2], n[3]);
		CHECK_MSG(job_int(c, "CrExit", 5, "lost") == 1, "lost %d", job_int(c, "CrExit", 5, "lost"));
		int b = 0;
		char *h = outcomes(c, "CrExit", 5, &b);
		CHECK_MSG(!strcmp(h, "died,success"), "history of 5: %s", h);
		free(h);
	}
	set("jobs.keep_completed", "false");
}

/* A make that kills its child each time: the job is an error once 3
 * children died on it (jobs.max_lost), none of the deaths an attempt of
 * jobs.max_attempts (1), retried after each of the first two. */
static void test_pool_child_lost(djc_conn *c)
{
	set("jobs.retry_delay", "0");
	atomic_store(&calls[0], 0);
	djc_populate_result *res;
	int rc = reserved_populate(c, "CrLost", 2, crash_on_5, &res);
	CHECK_MSG(rc == DJC_EMAKE, "rc %d: %s", rc, djc_error_last(c));
	CHECK_MSG(res && res->success_count == 11 && res->error_count == 1 && res->retried_count == 2,
		  "success %ld errors %ld retried %ld", res ? res->success_count : -1, res ? res->error_count : -1,
		  res ? res->retried_count : -1);
	if (res && res->n_errors == 1) {
		CHECK_MSG(!strncmp(res->errors[0].message, "worker died 3 times on this job; last: host ", 44) &&
			  strstr(res->errors[0].message, ", signal 9 (SIGKILL)"), "%s", res->errors[0].message);
		CHECK_MSG(strstr(res->errors[0].key_json, "5") != NULL, "%s", res->errors[0].key_json);
	} else
		CHECK(res && res->n_errors == 1);
	djc_populate_result_free(res);
	int fives = 0;
	for (int i = call_after(5, 0); i; i = call_after(5, i)) fives++;
	CHECK_MSG(fives == 3, "key 5 made %d times, not 3", fives);
	long n[5];
	CHECK(djc_jobs_counts(n, c, "CrLost") == DJC_OK);
	CHECK_MSG(n[0] == 0 && n[1] == 0 && n[3] == 1, "pending %ld reserved %ld error %ld", n[0], n[1], n[3]);
	djc_rowset *rs = NULL;
	CHECK(djc_fetch(&rs, c, "CrLost", "{\"id\": 5}") == DJC_OK && djc_rowset_count(rs) == 0);
	djc_rowset_free(rs);
	char *m = job_text(c, "CrLost", 5, "error_message");
	CHECK_MSG(m && !strncmp(m, "worker died 3 times on this job; last: host ", 44), "%s", m ? m : "(no job)");
	free(m);
	CHECK_MSG(job_int(c, "CrLost", 5, "lost") == 3 && job_int(c, "CrLost", 5, "attempts") == 0, "lost %d attempts %d",
		  job_int(c, "CrLost", 5, "lost"), job_int(c, "CrLost", 5, "attempts"));
	int b = 0;
	char *h = outcomes(c, "CrLost", 5, &b);
	CHECK_MSG(!strcmp(h, "died,died,died"), "history of 5: %s", h);
	free(h);
}

/* ------------------------------------------- a worker process dies */

/* Runs of a single-process populate of table, each in a process of its
 * own, until key 2's job is an error (at most `runs`): *crashed counts
 * the runs that died of SIGABRT; pids[k] is the k-th crashed run's pid. */
static void crash_runs(djc_conn *c, const char *table, int runs, int *crashed, pid_t *pids)
{
	*crashed = 0;
	for (int r = 0; r < runs; r++) {
		char *st = job_text(c, table, 2, "status");
		int done = st && !strcmp(st, "error");
		free(st);
		if (done) break;
		fflush(NULL);
		pid_t p = fork();
		if (p == 0) {
			struct rlimit no = {0, 0};
			setrlimit(RLIMIT_CORE, &no);
			djc_conn *cc = NULL;
			if (djc_open(&cc, url, schema)) _exit(3);
			djc_populate_result *res;
			int rc = reserved_populate(cc, table, 1, abort_on_2, &res);
			djc_populate_result_free(res);
			djc_close(cc);
			_exit(rc == DJC_OK ? 0 : 4);
		}
		int ws = 0;
		waitpid(p, &ws, 0);
		if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGABRT) pids[(*crashed)++] = p;
		else {
			CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "run %d: status %d", r, ws);
			struct timespec ts = {0, 200 * 1000 * 1000};   /* the lease (1 s) lapses */
			nanosleep(&ts, NULL);
		}
	}
}

static void test_worker_dies(djc_conn *c, const char *table, int batch)
{
	char b[16];
	snprintf(b, sizeof b, "%d", batch);
	set("jobs.reserve_batch", b);
	set("jobs.lease_timeout", "1");
	set("jobs.retry_delay", "0.3");
	set("jobs.keep_completed", "true");   /* the jobs of the other keys stay, to be read */
	atomic_store(&calls[0], 0);
	int crashed = 0;
	pid_t pids[64];
	crash_runs(c, table, 60, &crashed, pids);
	/* claims of several: the first death is laid on none of its jobs */
	int want = batch > 1 ? 4 : 3;
	CHECK_MSG(crashed == want, "%s: %d workers died, not %d (jobs.max_lost 3)", table, crashed, want);
	char *st = job_text(c, table, 2, "status"), *m = job_text(c, table, 2, "error_message");
	char pid[32];
	snprintf(pid, sizeof pid, "pid %d ", crashed ? (int)pids[crashed - 1] : -1);
	CHECK_MSG(st && !strcmp(st, "error") && m && !strncmp(m, "worker died 3 times on this job; last: host ", 44) && strstr(m, pid),
		  "%s: key 2 %s: %s (wanted %s)", table, st ? st : "(no job)", m ? m : "", pid);
	free(st);
	free(m);
	CHECK_MSG(job_int(c, table, 2, "lost") == 3, "%s: lost %d", table, job_int(c, table, 2, "lost"));
	/* every other key made, none of them counted as lost */
	djc_rowset *rs = NULL;
	CHECK(djc_fetch(&rs, c, table, NULL) == DJC_OK && djc_rowset_count(rs) == 7);
	djc_rowset_free(rs);
	for (int id = 1; id <= 8; id++)
		if (id != 2) CHECK_MSG(job_int(c, table, id, "lost") == 0, "%s: key %d lost %d", table, id, job_int(c, table, id, "lost"));
	/* after the first death on it, key 2 came back behind the pending
	 * work: every other key was made before its next make (with claims of
	 * one; a claim of several brings the jobs claimed with it back with it) */
	int first = call_after(2, 0), second = first ? call_after(2, first) : 0;
	CHECK_MSG(second > 0, "%s: key 2 made %s", table, first ? "once" : "never");
	for (int id = 1; batch == 1 && id <= 8; id++)
		if (id != 2) CHECK_MSG(call_after(id, 0) > 0 && call_after(id, 0) < second, "%s: key %d made at call %d, key 2 again at %d",
				       table, id, call_after(id, 0), second);
	/* its history: the deaths laid on it, retried after a backoff but the last */
	int with_backoff = 0;
	char *h = outcomes(c, table, 2, &with_backoff);
	const char *want_h = batch > 1 ? "lease expired,lease expired,lease expired,lease expired" : "lease expired,lease expired,lease expired";
	CHECK_MSG(!strcmp(h, want_h) && with_backoff == 2, "%s: history %s, %d with a backoff", table, h, with_backoff);
	free(h);
	set("jobs.reserve_batch", "1");
	set("jobs.keep_completed", "false");
}

/* A suspect as the last job of a claim of several (jobs.reserve_batch 3):
 * key 3 was held alone by a worker that vanished (djc_jobs_reserve, then
 * never renewed: its lease lapsed), so it comes back a suspect, behind
 * keys 1 and 2 and ahead of 4..12 (priority 6). The claim [1, 2, 3]: 1
 * and 2 wait to be committed together, 3 (a suspect) is committed alone,
 * and that commit, the claim's last, claims the next jobs. The commit of
 * 1 and 2 after it claimed the next jobs a second time, in place of the
 * first ones, which stayed reserved by nobody until their leases lapsed
 * (test_pool's children killed under load). Every key is made, none left
 * reserved. */
static int make_plain(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t id = key_id(key);
	log_call(id);
	return put_row(ctx, id);
}

static void test_suspect_last(djc_conn *c)
{
	int rc = djc_declare(NULL, c, "SuOut (computed)\n    -> CrSrc\n    ---\n    y : int64\n", "suspect.djc");
	CHECK_MSG(rc == DJC_OK, "declare: %s", djc_error_last(c));
	set("jobs.reserve_batch", "3");
	set("jobs.retry_delay", "0");
	set("jobs.lease_timeout", "1");
	djc_refresh_options ro = DJC_REFRESH_OPTIONS_INIT;
	djc_refresh_result rr;
	CHECK(djc_jobs_refresh(&rr, c, "SuOut", &ro) == DJC_OK && rr.added == 12);
	djc_jobs_set_options so = DJC_JOBS_SET_OPTIONS_INIT;
	so.priority = 6;
	long moved = 0;
	CHECK(djc_jobs_set(&moved, c, "SuOut", "{\"id\": [4, 5, 6, 7, 8, 9, 10, 11, 12]}", &so) == DJC_OK && moved == 9);
	/* a worker takes key 3 alone and vanishes */
	djc_job *j = NULL;
	CHECK(djc_jobs_reserve(&j, c, "SuOut", "{\"id\": 3}", -1) == DJC_OK && j);
	djc_job_free(j);
	struct timespec ts = {1, 500 * 1000 * 1000};   /* its lease (1 s) lapses */
	nanosleep(&ts, NULL);
	set("jobs.lease_timeout", "60");   /* from now on no lease lapses */
	atomic_store(&calls[0], 0);
	djc_populate_result *res;
	rc = reserved_populate(c, "SuOut", 1, make_plain, &res);
	CHECK_MSG(rc == DJC_OK && res && res->success_count == 12 && res->error_count == 0, "rc %d success %ld errors %ld: %s", rc,
		  res ? res->success_count : -1, res ? res->error_count : -1, djc_error_last(c));
	djc_populate_result_free(res);
	/* key 3 came back behind 1 and 2, ahead of the rest: the first claim's last */
	CHECK_MSG(call_after(3, 0) == 3, "key 3 made at call %d, not 3", call_after(3, 0));
	long n[5];
	CHECK(djc_jobs_counts(n, c, "SuOut") == DJC_OK);
	CHECK_MSG(n[0] == 0 && n[1] == 0 && n[3] == 0, "pending %ld reserved %ld error %ld", n[0], n[1], n[3]);
	djc_rowset *rs = NULL;
	CHECK(djc_fetch(&rs, c, "SuOut", NULL) == DJC_OK && djc_rowset_count(rs) == 12);
	djc_rowset_free(rs);
	for (int id = 1; id <= 12; id++) {
		int k = 0;
		for (int i = call_after(id, 0); i; i = call_after(id, i)) k++;
		CHECK_MSG(k == 1, "key %d made %d times", id, k);
	}
	set("jobs.reserve_batch", "1");
}

/* ------------------------------------------- the C program killed */

static int report_fd = -1;   /* the makes' reports to the test ("start PID", "stop PID RC") */

static void report(const char *what, int rc)
{
	char line[64];
	int n = snprintf(line, sizeof line, "%s %ld %d\n", what, (long)getpid(), rc);
	if (write(report_fd, line, (size_t)n) != n) _exit(9);
}

/* A make that waits (at most 60 s) to be told to stop, and says so. */
static int wait_for_stop(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)key;
	(void)payload;
	report("start", 0);
	for (int i = 0; i < 6000; i++) {
		int rc = djc_make_cancelled(ctx);
		if (rc) { report("stop", rc); return 1; }
		usleep(10000);
	}
	return 1;
}

/* The C program: populate OrOut with 2 worker processes, until killed. */
static void program(const char *db_url, const char *db_schema)
{
	djc_conn *c = NULL;
	if (djc_open(&c, db_url, db_schema)) _exit(3);
	djc_populate_result *res;
	reserved_populate(c, "OrOut", 2, wait_for_stop, &res);
	_exit(4);   /* not reached: it is killed first */
}

/* Read report lines from fd into buf (appending), waiting at most ms; at
 * the end of the pipe (every writer gone), sleep ms instead. */
static void read_reports(int fd, char *buf, size_t cap, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};
	if (poll(&p, 1, ms) <= 0) return;
	size_t len = strlen(buf);
	ssize_t n = read(fd, buf + len, cap - 1 - len);
	if (n > 0) buf[len + (size_t)n] = 0;
	else usleep((useconds_t)ms * 1000);
}

static int count_lines(const char *buf, const char *what)
{
	int n = 0;
	size_t k = strlen(what);
	for (const char *p = buf; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p))
		if (!strncmp(p, what, k) && p[k] == ' ') n++;
	return n;
}

static void test_program_killed(djc_conn *c)
{
	int rc = djc_declare(NULL, c, "OrOut (computed)\n    -> CrSrc\n    ---\n    y : int64\n", "orphan.djc");
	CHECK_MSG(rc == DJC_OK, "declare: %s", djc_error_last(c));
	/* the workers, orphaned, become this process's children: it reaps them */
	CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
	int fds[2];
	if (pipe(fds)) { CHECK(0); return; }
	pid_t prog = fork();
	if (prog == 0) {
		close(fds[0]);
		report_fd = fds[1];
		program(url, schema);
	}
	close(fds[1]);
	char buf[4096] = "";
	for (int i = 0; i < 1200 && count_lines(buf, "start") < 2; i++) read_reports(fds[0], buf, sizeof buf, 100);
	CHECK_MSG(count_lines(buf, "start") == 2, "makes started: %s", buf);
	kill(prog, SIGKILL);
	waitpid(prog, NULL, 0);
	/* the workers stop their makes and exit by themselves */
	long workers[2] = {0, 0};
	for (int k = 0, i = 0; k < 2 && buf[i]; i++)
		if ((i == 0 || buf[i - 1] == '\n') && !strncmp(buf + i, "start ", 6)) workers[k++] = strtol(buf + i + 6, NULL, 10);
	int ended = 0;
	for (int i = 0; i < 600 && ended < 2; i++) {
		read_reports(fds[0], buf, sizeof buf, 100);
		if (i) usleep(100000);   /* at least 60 s in all, however fast the pipe answers */
		for (int k = 0; k < 2; k++)
			if (workers[k] > 0 && waitpid((pid_t)workers[k], NULL, WNOHANG) == (pid_t)workers[k]) { workers[k] = -1; ended++; }
	}
	CHECK_MSG(ended == 2, "worker processes that ended by themselves: %d of 2 (%s)", ended, buf);
	read_reports(fds[0], buf, sizeof buf, 100);
	char want[32];
	snprintf(want, sizeof want, " %d\n", DJC_EINTR);
	CHECK_MSG(count_lines(buf, "stop") == 2 && strstr(strstr(buf, "stop ") ? strstr(buf, "stop ") : "", want), "%s", buf);
	for (int k = 0; k < 2; k++)
		if (workers[k] > 0) kill((pid_t)workers[k], SIGKILL);   /* not stopped: end them here */
	while (waitpid(-1, NULL, WNOHANG) > 0) {}
	close(fds[0]);
	long n[5];
	CHECK(djc_jobs_counts(n, c, "OrOut") == DJC_OK);
	CHECK_MSG(n[0] == 10 && n[1] == 0 && n[3] == 2, "pending %ld reserved %ld error %ld", n[0], n[1], n[3]);
	djc_rowset *rs = NULL;
	char msg[128];
	snprintf(msg, sizeof msg, "interrupted by SIGTERM: its worker's parent process (pid %ld) died", (long)prog);
	CHECK(djc_jobs_list(&rs, c, "OrOut", "error") == DJC_OK && djc_rowset_count(rs) == 2);
	for (size_t i = 0; rs && i < djc_rowset_count(rs); i++) {
		const char *m = "";
		djc_row_text(&m, djc_rowset_row(rs, i), (size_t)djc_row_find(djc_rowset_row(rs, i), "error_message"));
		CHECK_STR(m, msg);
	}
	djc_rowset_free(rs);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_crash", "pool_child pool_child_lost pool_child_exit worker_dies_one worker_dies_many suspect_last program_killed");
	char path[96];
	url = getenv("DJC_TEST_URL");
	schema = getenv("DJC_TEST_SCHEMA");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-crash-%d.db", (int)getpid());
		url = path;
	}
	calls = mmap(NULL, MAX_CALLS * sizeof *calls, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (calls == MAP_FAILED) return 1;
	setenv("DJC_JOBS_RESERVE_BATCH", "3", 1);
	setenv("DJC_JOBS_LEASE_TIMEOUT", "60", 1);   /* recovery must not wait for a lease */
	djc_conn *c = NULL;
	if (djc_open(&c, url, schema)) { fprintf(stderr, "open: %s\n", djc_error_last(c)); return 1; }
	int rc = djc_declare(NULL, c,
			     "CrSrc (manual)\n    id : int32\n    ---\n\n"
			     "CrOut (computed)\n    -> CrSrc\n    ---\n    y : int64\n\n"
			     "CrLost (computed)\n    -> CrSrc\n    ---\n    y : int64\n\n"
			     "CrExit (computed)\n    -> CrSrc\n    ---\n    y : int64\n\n"
			     "Ab (manual)\n    id : int32\n    ---\n\n"
			     "AbOne (computed)\n    -> Ab\n    ---\n    y : int64\n\n"
			     "AbMany (computed)\n    -> Ab\n    ---\n    y : int64\n", "crash.djc");
	CHECK_MSG(rc == DJC_OK, "declare: %s", djc_error_last(c));
	insert_ids(c, "CrSrc", 12);
	insert_ids(c, "Ab", 8);
	if (t_want("pool_child")) test_pool_child(c);
	if (t_want("pool_child_lost")) test_pool_child_lost(c);
	if (t_want("pool_child_exit")) test_pool_child_exit(c);
	if (t_want("worker_dies_one")) test_worker_dies(c, "AbOne", 1);
	if (t_want("worker_dies_many")) test_worker_dies(c, "AbMany", 3);
	if (t_want("suspect_last")) test_suspect_last(c);
	if (t_want("program_killed")) test_program_killed(c);
	djc_close(c);
	if (!getenv("DJC_TEST_URL")) {
		t_unlink_sqlite(path + 7);
	}
	munmap(calls, MAX_CALLS * sizeof *calls);
	return T_DONE("test_crash");
}
