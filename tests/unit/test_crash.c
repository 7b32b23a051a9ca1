/* test_crash.c - a C make that crashes its worker child (--processes 2,
 * claims of 3 jobs): the parent records that job, and only it, as an error
 * at once ("make killed by signal 9"), hands the rest of the child's claim
 * back, starts a worker in its place, and every other key is made. Runs on
 * $DJC_TEST_URL / $DJC_TEST_SCHEMA (default: a fresh SQLite file). */
#include "t.h"
#include "djc.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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
	djc_close(c);
	if (!getenv("DJC_TEST_URL")) {
		unlink(path + 7);
		char p2[128];
		snprintf(p2, sizeof p2, "%s-wal", path + 7); unlink(p2);
		snprintf(p2, sizeof p2, "%s-shm", path + 7); unlink(p2);
	}
	return T_DONE("test_crash");
}
