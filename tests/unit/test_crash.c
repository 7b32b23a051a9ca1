/* test_crash.c - a C make that crashes its worker child (--processes 2,
 * claims of 3 jobs): the parent records that job, and only it, as an error
 * at once ("make killed by signal 9"), hands the rest of the child's claim
 * back, starts a worker in its place, and every other key is made. And the
 * other way round (issue 36.2): a C program whose populate runs 2 worker
 * processes is killed (SIGKILL): its workers' makes see djc_make_cancelled
 * say DJC_EINTR at once, their jobs are recorded as interrupted, the rest
 * of their claims go back to pending, and they exit. Runs on
 * $DJC_TEST_URL / $DJC_TEST_SCHEMA (default: a fresh SQLite file). */
#include "t.h"
#include "djc.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int crash_on_5(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t id = 0;
	djc_row_int(&id, key, (size_t)djc_row_find(key, "id"));
	if (id == 5) raise(SIGKILL);   /* an OOM kill, a segfault: the worker child dies */
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "y", id * 2);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
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
static void program(const char *url, const char *schema)
{
	djc_conn *c = NULL;
	if (djc_open(&c, url, schema)) _exit(3);
	djc_populate_options o;
	djc_populate_options_init(&o);
	o.reserve_jobs = 1;
	o.processes = 2;
	o.suppress_errors = 1;
	o.make = wait_for_stop;
	djc_populate_result *res = NULL;
	djc_populate(&res, c, "OrOut", &o);
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

static void test_program_killed(djc_conn *c, const char *url, const char *schema)
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

int main(void)
{
	char path[96];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-crash-%d.db", (int)getpid());
		url = path;
	}
	setenv("DJC_JOBS_RESERVE_BATCH", "3", 1);
	setenv("DJC_JOBS_LEASE_TIMEOUT", "60", 1);   /* recovery must not wait for a lease */
	djc_conn *c = NULL;
	if (djc_open(&c, url, getenv("DJC_TEST_SCHEMA"))) { fprintf(stderr, "open: %s\n", djc_error_last(c)); return 1; }
	int rc = djc_declare(NULL, c,
			     "CrSrc (manual)\n    id : int32\n    ---\n\nCrOut (computed)\n    -> CrSrc\n    ---\n    y : int64\n", "crash.djc");
	CHECK_MSG(rc == DJC_OK, "declare: %s", djc_error_last(c));
	djc_row *rows[12];
	for (int i = 0; i < 12; i++) { rows[i] = djc_row_new(); djc_row_set_int(rows[i], "id", i + 1); }
	CHECK(djc_insert(c, "CrSrc", (const djc_row *const *)rows, 12, NULL, NULL) == DJC_OK);
	for (int i = 0; i < 12; i++) djc_row_free(rows[i]);

	djc_populate_options o;
	djc_populate_options_init(&o);
	o.reserve_jobs = 1;
	o.processes = 2;
	o.suppress_errors = 1;
	o.make = crash_on_5;
	djc_populate_result *res = NULL;
	rc = djc_populate(&res, c, "CrOut", &o);
	CHECK_MSG(rc == DJC_EMAKE, "rc %d: %s", rc, djc_error_last(c));
	CHECK_MSG(res && res->success_count == 11 && res->error_count == 1, "success %ld errors %ld",
		  res ? res->success_count : -1, res ? res->error_count : -1);
	if (res && res->n_errors == 1) {
		CHECK_MSG(strstr(res->errors[0].message, "make killed by signal 9") != NULL, "%s", res->errors[0].message);
		CHECK_MSG(strstr(res->errors[0].key_json, "5") != NULL, "%s", res->errors[0].key_json);
	} else
		CHECK(res && res->n_errors == 1);
	djc_populate_result_free(res);

	long n[5];
	CHECK(djc_jobs_counts(n, c, "CrOut") == DJC_OK);
	CHECK_MSG(n[0] == 0 && n[1] == 0 && n[3] == 1, "pending %ld reserved %ld error %ld", n[0], n[1], n[3]);
	djc_rowset *rs = NULL;
	CHECK(djc_fetch(&rs, c, "CrOut", NULL) == DJC_OK && djc_rowset_count(rs) == 11);
	djc_rowset_free(rs);
	rs = NULL;
	CHECK(djc_fetch(&rs, c, "CrOut", "{\"id\": 5}") == DJC_OK && djc_rowset_count(rs) == 0);
	djc_rowset_free(rs);
	rs = NULL;
	CHECK(djc_jobs_list(&rs, c, "CrOut", "error") == DJC_OK && djc_rowset_count(rs) == 1);
	if (rs && djc_rowset_count(rs) == 1) {
		const djc_row *r = djc_rowset_row(rs, 0);
		int64_t id = 0;
		const char *m = "";
		djc_row_int(&id, r, (size_t)djc_row_find(r, "id"));
		djc_row_text(&m, r, (size_t)djc_row_find(r, "error_message"));
		CHECK(id == 5);
		CHECK_MSG(strstr(m, "make killed by signal 9") != NULL, "%s", m);
	}
	djc_rowset_free(rs);
	test_program_killed(c, url, getenv("DJC_TEST_SCHEMA"));
	djc_close(c);
	if (!getenv("DJC_TEST_URL")) {
		unlink(path + 7);
		char p2[128];
		snprintf(p2, sizeof p2, "%s-wal", path + 7); unlink(p2);
		snprintf(p2, sizeof p2, "%s-shm", path + 7); unlink(p2);
	}
	return T_DONE("test_crash");
}
