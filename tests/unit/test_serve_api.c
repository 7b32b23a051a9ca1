/* test_serve_api.c - the serve protocol through the public C API
 * (djc_populate_options.make_serve_argv): a serve program makes every key,
 * reading each key's upstream row over its pipe; a per-key and a serve
 * program together are refused; options of version 1 (before
 * make_serve_argv) are still taken; the same for djc_worker
 * (djc_worker_options.make_serve_argv, version 1 still taken); a serve
 * program's restart limit is the failure of populate and of the worker,
 * apart from the failed makes; a make program gets the caller's DJC and
 * PYTHONPATH. Runs on the backend named by
 * $DJC_TEST_URL / $DJC_TEST_SCHEMA (default: a fresh SQLite file). */
#include "t.h"
#include "djc.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char PIPE[] =
	"Src (manual)\n"
	"    id : int32\n"
	"    ---\n"
	"    x : int32\n"
	"\n"
	"Out (computed)\n"
	"    -> Src\n"
	"    ---\n"
	"    y : int32\n";

/* A serve program in sh: per key, fetch its Src row over the pipe and
 * answer y = that row's x + 1 (the row is {"id":N,"x":M}). */
static const char PROG[] =
	"#!/bin/sh\n"
	"read -r hello\n"
	"echo '{\"_djc\":\"hello\",\"version\":1}'\n"
	"while read -r req; do\n"
	"  key=$(printf '%s' \"$req\" | sed 's/.*\"key\":\\({[^}]*}\\).*/\\1/')\n"
	"  echo \"{\\\"_djc\\\":\\\"fetch\\\",\\\"table\\\":\\\"Src\\\",\\\"key\\\":$key}\"\n"
	"  read -r head\n"
	"  read -r row\n"
	"  x=$(printf '%s' \"$row\" | sed 's/.*\"x\":\\([0-9]*\\).*/\\1/')\n"
	"  echo \"{\\\"y\\\":$((x + 1))}\"\n"
	"  echo '{\"_djc\":\"done\"}'\n"
	"done\n";

/* The layout of djc_populate_options version 1: a caller built then. */
typedef struct options_v1 {
	int version;
	int reserve_jobs;
	int processes;
	long max_calls;
	long priority;
	int suppress_errors;
	int display_progress;
	int refresh;
	const char *where_json;
	djc_make_fn make;
	void *payload;
	const char *const *make_argv;
} options_v1;

/* The layout of djc_worker_options version 1. */
typedef struct worker_options_v1 {
	int version;
	int processes;
	long max_jobs;
	double idle_exit;
	int until_empty;
	double deadline;
	long priority;
	const char *where_json;
	int refresh;
	double refresh_interval;
	djc_make_fn make;
	void *payload;
	const char *const *make_argv;
} worker_options_v1;

/* Insert Src rows id = from..to with x = 3 id; what the serve program
 * makes of them adds up to the sum returned (y = x + 1 each). */
static long add_src(djc_conn *c, int from, int to)
{
	long sum = 0;
	for (int i = from; i <= to; i++) {
		djc_row *r = djc_row_new();
		djc_row_set_int(r, "id", i);
		djc_row_set_int(r, "x", i * 3);
		sum += i * 3 + 1;
		const djc_row *rows[1] = {r};
		CHECK(djc_insert_ext(NULL, c, "Src", rows, 1, NULL) == DJC_OK);
		djc_row_free(r);
	}
	return sum;
}

static long sum_y(djc_conn *c, long *n)
{
	djc_rowset *rs = NULL;
	*n = -1;
	if (djc_fetch(&rs, c, "Out", NULL)) return -1;
	long s = 0;
	*n = (long)djc_rowset_count(rs);
	for (size_t i = 0; i < djc_rowset_count(rs); i++) {
		const djc_row *r = djc_rowset_row(rs, i);
		int64_t y = 0;
		long k = djc_row_find(r, "y");
		if (k >= 0) djc_row_int(&y, r, (size_t)k);
		s += y;
	}
	djc_rowset_free(rs);
	return s;
}

/* the sum of the y values made so far should come to (keys added by add_src) */
static long want;

/* a serve program makes every key, reading Src over its pipe */
static void test_serve_makes(djc_conn *c, const char *prog, const char *dir)
{
	int rc;
	const char *argv[] = {prog, NULL};
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.reserve_jobs = 1;
	o.max_calls = 12;
	o.make_serve_argv = argv;
	djc_populate_result *res = NULL;
	rc = djc_populate(&res, c, "Out", &o);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(res && res->success_count == 12 && res->error_count == 0);
	djc_populate_result_free(res);
	res = NULL;
	o.reserve_jobs = 0;
	o.max_calls = 0;
	o.processes = 2;
	rc = djc_populate(&res, c, "Out", &o);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(res && res->success_count == 8 && res->error_count == 0);
	djc_populate_result_free(res);
	res = NULL;
	long n = 0;
	CHECK_MSG(sum_y(c, &n) == want && n == 20, "n=%ld", n);
}

/* a per-key and a serve program together are refused */
static void test_refused_both(djc_conn *c, const char *prog, const char *dir)
{
	const char *argv[] = {prog, NULL};
	djc_populate_result *res = NULL;
	int rc;
	const char *perkey[] = {"/bin/true", NULL};
	djc_populate_options both = DJC_POPULATE_OPTIONS_INIT;
	both.make_argv = perkey;
	both.make_serve_argv = argv;
	rc = djc_populate(&res, c, "Out", &both);
	CHECK(rc == DJC_EINVAL && res == NULL);
	CHECK_MSG(strstr(djc_error_last(c), "not both") != NULL, "%s", djc_error_last(c));
}

/* version 1 options (no make_serve_argv field) still work */
static void test_options_v1(djc_conn *c, const char *prog, const char *dir)
{
	const char *perkey[] = {"/bin/true", NULL};
	djc_populate_result *res = NULL;
	int rc;
	options_v1 v1 = {.version = 1, .processes = 1, .priority = -1, .refresh = -1, .make_argv = perkey};
	rc = djc_populate(&res, c, "Out", (const djc_populate_options *)&v1);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(res && res->success_count == 0);   /* nothing left to make */
	djc_populate_result_free(res);
	res = NULL;
	djc_populate_options v9 = DJC_POPULATE_OPTIONS_INIT;
	v9.version = 9;
	CHECK(djc_populate(&res, c, "Out", &v9) == DJC_EINVAL);
}

/* djc_worker with a serve program: keys 21-24 */
static void test_worker_serve(djc_conn *c, const char *prog, const char *dir)
{
	const char *argv[] = {prog, NULL};
	const char *perkey[] = {"/bin/true", NULL};
	long n = 0;
	int rc;
	want += add_src(c, 21, 24);
	const char *outs[] = {"Out"};
	djc_worker_options wo = DJC_WORKER_OPTIONS_INIT;
	wo.until_empty = 1;
	wo.refresh = 1;
	wo.make_serve_argv = argv;
	wo.make_argv = perkey;
	djc_worker_result *wr = NULL;
	CHECK(djc_worker(&wr, c, outs, 1, &wo) == DJC_EINVAL && wr == NULL);
	CHECK_MSG(strstr(djc_error_last(c), "one make") != NULL, "%s", djc_error_last(c));
	wo.make_argv = NULL;
	rc = djc_worker(&wr, c, outs, 1, &wo);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(wr && wr->success_count == 4 && wr->error_count == 0 && wr->stopped[DJC_WORKER_EMPTY] == 1);
	djc_worker_result_free(wr);
	wr = NULL;
	CHECK_MSG(sum_y(c, &n) == want && n == 24, "n=%ld", n);
	/* version 1 worker options (no make_serve_argv, timeout) still work */
	worker_options_v1 w1 = {.version = 1, .processes = 1, .priority = -1, .refresh = 1, .until_empty = 1,
				.make_argv = perkey};
	rc = djc_worker(&wr, c, outs, 1, (const djc_worker_options *)&w1);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(wr && wr->success_count == 0 && wr->stopped[DJC_WORKER_EMPTY] == 1);
	djc_worker_result_free(wr);
	wr = NULL;
	djc_worker_options w9 = DJC_WORKER_OPTIONS_INIT;
	w9.version = 9;
	CHECK(djc_worker(&wr, c, outs, 1, &w9) == DJC_EINVAL);
}

/* a serve program that fails every key, allowed one restart: two keys
 * fail, then the restart limit stops the worker; that is its failure,
 * not a third error (issue 36.7: it was an error of key {}) */
static void test_crash_restart(djc_conn *c, const char *prog, const char *dir)
{
	FILE *f;
	int rc;
	djc_populate_result *res = NULL;
	const char *outs[] = {"Out"};
	djc_worker_options wo = DJC_WORKER_OPTIONS_INIT;
	wo.refresh = 1;
	djc_worker_result *wr = NULL;
	add_src(c, 25, 30);
	char crash[160];
	snprintf(crash, sizeof crash, "%s/crash.sh", dir);
	f = fopen(crash, "w");
	if (f) {
		fputs("#!/bin/sh\nread -r hello\necho '{\"_djc\":\"hello\",\"version\":1}'\nread -r key\nexit 3\n", f);
		fclose(f);
	}
	chmod(crash, 0755);
	char *msg = NULL;
	CHECK_MSG(djc_config_set("jobs.serve_restarts", "1", "test_serve_api", &msg) == DJC_OK, "%s", msg ? msg : "");
	free(msg);
	const char *crash_argv[] = {crash, NULL};
	djc_populate_options co = DJC_POPULATE_OPTIONS_INIT;
	co.reserve_jobs = 1;
	co.suppress_errors = 1;
	co.make_serve_argv = crash_argv;
	rc = djc_populate(&res, c, "Out", &co);
	CHECK_MSG(rc == DJC_ERROR, "populate: %d %s", rc, djc_error_last(c));
	CHECK_MSG(res && res->error_count == 2 && res->n_errors == 2 && res->failure, "errors %ld, listed %zu, failure %s",
		  res ? res->error_count : -1, res ? res->n_errors : 0, res && res->failure ? res->failure : "(none)");
	if (res && res->failure) {
		CHECK_MSG(strstr(res->failure, "jobs.serve_restarts is 1") != NULL, "%s", res->failure);
		CHECK_STR(djc_error_last(c), res->failure);
	}
	for (size_t i = 0; res && res->error_tables && i < res->n_errors; i++) {
		CHECK_STR(res->error_tables[i], "Out");
		CHECK(strcmp(res->errors[i].key_json, "{}") != 0);
	}
	djc_populate_result_free(res);
	res = NULL;
	/* djc_worker: the same, and populate's counts besides */
	wo.make_serve_argv = crash_argv;
	wo.until_empty = 0;
	wo.idle_exit = 30;
	rc = djc_worker(&wr, c, outs, 1, &wo);
	CHECK_MSG(rc == DJC_ERROR, "worker: %d %s", rc, djc_error_last(c));
	CHECK_MSG(wr && wr->error_count == 2 && wr->n_errors == 2 && wr->stopped[DJC_WORKER_FAILED] == 1 && wr->failure &&
			  wr->retried_count == 0 && wr->cancelled_count == 0 && !wr->drained,
		  "errors %ld, listed %zu, failed %ld, failure %s", wr ? wr->error_count : -1, wr ? wr->n_errors : 0,
		  wr ? wr->stopped[DJC_WORKER_FAILED] : -1, wr && wr->failure ? wr->failure : "(none)");
	if (wr && wr->failure) CHECK_STR(djc_error_last(c), wr->failure);
	for (size_t i = 0; wr && wr->error_tables && i < wr->n_errors; i++) CHECK_STR(wr->error_tables[i], "Out");
	CHECK(wr && wr->error_tables);
	djc_worker_result_free(wr);
	wr = NULL;
	unlink(crash);
}

/* a C program's make programs (issue 36.10): DJC as the program's
 * environment has it (the library finds one only where it was
 * installed), and its PYTHONPATH kept, after djc_make.py's directory
 * when the library finds one */
static void test_env_kept(djc_conn *c, const char *prog, const char *dir)
{
	FILE *f;
	int rc;
	djc_populate_result *res = NULL;
	char envf[160], script[400];
	snprintf(envf, sizeof envf, "%s/env.txt", dir);
	snprintf(script, sizeof script, "printf '%%s\\n%%s\\n' \"$DJC\" \"$PYTHONPATH\" > '%s'; echo '{\"y\": 1}'", envf);
	setenv("DJC", "/opt/elsewhere/djc", 1);
	setenv("PYTHONPATH", "/my/lib", 1);
	const char *env_argv[] = {"/bin/sh", "-c", script, NULL};
	add_src(c, 31, 31);
	djc_populate_options eo = DJC_POPULATE_OPTIONS_INIT;
	eo.make_argv = env_argv;
	eo.where_json = "{\"id\": 31}";
	rc = djc_populate(&res, c, "Out", &eo);
	CHECK_MSG(rc == DJC_OK && res && res->success_count == 1, "%d %s", rc, djc_error_last(c));
	djc_populate_result_free(res);
	res = NULL;
	char line1[256] = "", line2[512] = "";
	f = fopen(envf, "r");
	if (f) {
		if (!fgets(line1, sizeof line1, f)) line1[0] = 0;
		if (!fgets(line2, sizeof line2, f)) line2[0] = 0;
		fclose(f);
	}
	CHECK_STR(line1, "/opt/elsewhere/djc\n");
	size_t l2 = strlen(line2);
	CHECK_MSG(!strcmp(line2, "/my/lib\n") || (l2 > 9 && !strcmp(line2 + l2 - 9, ":/my/lib\n")), "PYTHONPATH %s", line2);
	unsetenv("DJC");
	unsetenv("PYTHONPATH");
	unlink(envf);
}

static void on_pipe(int sig) { (void)sig; }

/* populate and worker ignore SIGPIPE while they run (a serve program may
 * close its stdin) and give the caller's disposition back, as they do
 * SIGINT's, SIGTERM's and SIGUSR1's */
static int pipe_is_ours(void)
{
	struct sigaction now;
	return sigaction(SIGPIPE, NULL, &now) == 0 && now.sa_handler == on_pipe;
}

static void test_signals_kept(djc_conn *c, const char *prog, const char *dir)
{
	struct sigaction mine = {0}, old;
	mine.sa_handler = on_pipe;
	sigemptyset(&mine.sa_mask);
	sigaction(SIGPIPE, &mine, &old);
	add_src(c, 41, 42);   /* (no sum is checked after this case) */
	const char *argv[] = {prog, NULL};
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.reserve_jobs = 1;
	o.max_calls = 1;
	o.make_serve_argv = argv;
	djc_populate_result *res = NULL;
	CHECK_MSG(djc_populate(&res, c, "Out", &o) == DJC_OK, "%s", djc_error_last(c));
	djc_populate_result_free(res);
	CHECK_MSG(pipe_is_ours(), "djc_populate left SIGPIPE's disposition changed");
	const char *outs[] = {"Out"};
	djc_worker_options wo = DJC_WORKER_OPTIONS_INIT;
	wo.until_empty = 1;
	wo.max_jobs = 1;
	wo.make_serve_argv = argv;
	djc_worker_result *wr = NULL;
	CHECK_MSG(djc_worker(&wr, c, outs, 1, &wo) == DJC_OK, "%s", djc_error_last(c));
	djc_worker_result_free(wr);
	CHECK_MSG(pipe_is_ours(), "djc_worker left SIGPIPE's disposition changed");
	sigaction(SIGPIPE, &old, NULL);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_serve_api", "serve_makes refused_both options_v1:serve_makes worker_serve:serve_makes crash_restart:worker_serve env_kept signals_kept:serve_makes");
	char path[64], dir[] = "/tmp/djc-serve-api-XXXXXX", prog[128];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-serve-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_serve";
	if (!strncmp(url, "sqlite:", 7)) schema = NULL;
	if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
	snprintf(prog, sizeof prog, "%s/serve.sh", dir);
	FILE *f = fopen(prog, "w");
	if (!f) { perror(prog); return 1; }
	fputs(PROG, f);
	fclose(f);
	chmod(prog, 0755);

	djc_conn *c = NULL;
	int rc = djc_open(&c, url, schema);
	if (rc) { fprintf(stderr, "djc_open: %s\n", djc_error_last(c)); return 1; }
	rc = djc_declare(NULL, c, PIPE, "serve.djc");
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	want = add_src(c, 1, 20);
	if (t_want("serve_makes")) test_serve_makes(c, prog, dir);
	if (t_want("refused_both")) test_refused_both(c, prog, dir);
	if (t_want("options_v1")) test_options_v1(c, prog, dir);
	if (t_want("worker_serve")) test_worker_serve(c, prog, dir);
	if (t_want("crash_restart")) test_crash_restart(c, prog, dir);
	if (t_want("env_kept")) test_env_kept(c, prog, dir);
	if (t_want("signals_kept")) test_signals_kept(c, prog, dir);
	djc_close(c);
	unlink(prog);
	rmdir(dir);
	if (url == path) unlink(path + 7);
	return T_DONE("test_serve_api");
}
