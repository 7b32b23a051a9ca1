/* test_api.c - the public C API (include/djc.h): tables and rows, populate
 * with a C make callback, and the jobs API (refresh, reserve, complete with
 * its fence, error, ignore, clear, counts, list). Runs on the backend named by
 * $DJC_TEST_URL / $DJC_TEST_SCHEMA (default: a fresh SQLite file). */
#include "t.h"
#include "tdb.h"
#include "djc.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char PIPE[] =
	"Src (manual)\n"
	"    id : int32\n"
	"    ---\n"
	"    x : float64\n"
	"\n"
	"Out (computed)\n"
	"    -> Src\n"
	"    ---\n"
	"    y : float64\n"
	"\n"
	"Out.Part (part)\n"
	"    p : int32\n"
	"    ---\n"
	"    z : int64\n"
	"\n"
	"Jb (computed)\n"
	"    -> Src\n"
	"    ---\n"
	"    y : float64\n";

static int64_t key_id(const djc_row *key)
{
	int64_t v = -1;
	long i = djc_row_find(key, "id");
	if (i >= 0) djc_row_int(&v, key, (size_t)i);
	return v;
}

static int calls;

/* y = 2 * Src.x (fetched), two part rows; fails for the id in payload */
static int mk(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	calls++;
	int64_t id = key_id(key);
	char where[64];
	snprintf(where, sizeof where, "{\"id\": %lld}", (long long)id);
	djc_rowset *up = NULL;
	if (djc_make_fetch(&up, ctx, "Src", where) || djc_rowset_count(up) != 1) {
		djc_rowset_free(up);
		djc_make_error(ctx, "no upstream row for %lld", (long long)id);
		return 1;
	}
	double x = 0;
	const djc_row *u = djc_rowset_row(up, 0);
	djc_row_float(&x, u, (size_t)djc_row_find(u, "x"));
	djc_rowset_free(up);
	djc_row *r = djc_row_new();
	djc_row_set_float(r, "y", 2 * x);   /* key omitted: filled from the key */
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	for (int p = 1; p <= 2 && !rc; p++) {
		djc_row *pr = djc_row_new();
		djc_row_set_int(pr, "p", p);
		djc_row_set_int(pr, "z", id * 100 + p);
		rc = djc_make_insert(ctx, p == 1 ? "Part" : "Out.Part", pr);
		djc_row_free(pr);
	}
	if (rc) return rc;
	if (payload && id == *(int64_t *)payload) {
		djc_make_error(ctx, "bad key %lld", (long long)id);
		return 7;
	}
	return 0;
}

/* Jb: y = id, fails for the id in payload after staging its row */
static int mkj(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	calls++;
	int64_t id = key_id(key);
	djc_row *r = djc_row_new();
	djc_row_set_float(r, "y", (double)id);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	if (rc) return rc;
	if (id == *(int64_t *)payload) {
		djc_make_error(ctx, "bad key %lld", (long long)id);
		return 1;
	}
	return 0;
}

static int mk_badpart(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "p", 1);
	int rc = djc_make_insert(ctx, "Nope", r);
	CHECK(rc == DJC_EINVAL);
	/* a row of the wrong type is refused too */
	djc_row_set_text(r, "z", "not a number");
	rc = djc_make_insert(ctx, "Part", r);
	CHECK(rc == DJC_EINVAL);
	djc_row_free(r);
	return 1;
}

static djc_row *yrow(double y)
{
	djc_row *r = djc_row_new();
	djc_row_set_float(r, "y", y);
	return r;
}

static void counts_are(djc_conn *c, const char *t, long p, long r, long s, long e, long i, int line)
{
	long n[5];
	int rc = djc_jobs_counts(n, c, t);
	CHECK_MSG(rc == 0 && n[0] == p && n[1] == r && n[2] == s && n[3] == e && n[4] == i,
		  "line %d: counts %ld %ld %ld %ld %ld, wanted %ld %ld %ld %ld %ld (%s)", line, n[0], n[1], n[2], n[3], n[4],
		  p, r, s, e, i, djc_error_last(c));
}
#define COUNTS(c, t, p, r, s, e, i) counts_are(c, t, p, r, s, e, i, __LINE__)

static const char *text_of(const djc_row *r, const char *name)
{
	const char *s = NULL;
	long i = djc_row_find(r, name);
	if (i < 0 || djc_row_text(&s, r, (size_t)i)) return NULL;
	return s;
}

/* declare */
static void test_declare(djc_conn *c, djc_conn *c2, const char *url, const char *schema)
{
	int rc;
	char *report = NULL;
	rc = djc_declare(&report, c, PIPE, "api.djc");
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(report && strstr(report, "created Out.Part"));
	free(report);
	report = NULL;
	rc = djc_declare(&report, c, PIPE, "api.djc");
	CHECK(rc == DJC_OK && report && strstr(report, "exists") && !strstr(report, "created"));
	free(report);
	CHECK(djc_declare(NULL, c, "Src (manual)\n    id : int64\n    ---\n", "x.djc") == DJC_ECONFLICT);
}

/* insert / fetch / delete */
static void test_insert_fetch_delete(djc_conn *c, djc_conn *c2, const char *url, const char *schema)
{
	int rc;
	{
		djc_row *rows[6];
		for (int i = 0; i < 6; i++) {
			rows[i] = djc_row_new();
			djc_row_set_int(rows[i], "id", i + 1);
			djc_row_set_float(rows[i], "x", (i + 1) * 1.5);
		}
		size_t ins = 0;
		rc = djc_insert_ext(&ins, c, "Src", (const djc_row *const *)rows, 6, NULL);
		CHECK_MSG(rc == DJC_OK && ins == 6, "%s", djc_error_last(c));
		/* all or nothing: a new row with a duplicate inserts neither */
		djc_row_set_int(rows[0], "id", 100);
		rc = djc_insert_ext(&ins, c, "Src", (const djc_row *const *)rows, 2, NULL);
		CHECK(rc == DJC_EDUPLICATE);
		CHECK(t_count(c, "Src", NULL) == 6);
		djc_insert_options io = DJC_INSERT_OPTIONS_INIT;
		io.skip_duplicates = 1;
		rc = djc_insert_ext(&ins, c, "Src", (const djc_row *const *)rows, 2, &io);
		CHECK(rc == DJC_OK && ins == 1);
		for (int i = 0; i < 6; i++) djc_row_free(rows[i]);
		djc_row *bad = djc_row_new();
		djc_row_set_int(bad, "id", 50);
		djc_row_set_text(bad, "x", "nope");
		const djc_row *bp = bad;
		CHECK(djc_insert_ext(NULL, c, "Src", &bp, 1, NULL) == DJC_EINVAL);
		djc_row_set_int(bad, "id", 1);
		djc_row_set_float(bad, "y", 1);
		djc_row_free(bad);
		bad = djc_row_new();
		djc_row_set_int(bad, "id", 1);
		djc_row_set_float(bad, "y", 1);
		bp = bad;
		CHECK(djc_insert_ext(NULL, c, "Out", &bp, 1, NULL) == DJC_EINVAL);   /* computed rows come from populate */
		djc_row_free(bad);

		djc_rowset *rs = NULL;
		rc = djc_fetch(&rs, c, "Src", "{\"id\": {\">\": 4}}");
		CHECK(rc == DJC_OK && djc_rowset_count(rs) == 3);
		if (rs && djc_rowset_count(rs) == 3) {
			const djc_row *r = djc_rowset_row(rs, 0);
			int64_t id = 0;
			double x = 0;
			djc_row_int(&id, r, (size_t)djc_row_find(r, "id"));
			djc_row_float(&x, r, (size_t)djc_row_find(r, "x"));
			CHECK(id == 5 && x == 7.5);
		}
		djc_rowset_free(rs);
		size_t del = 0;
		rc = djc_delete(&del, c, "Src", "{\"id\": [6, 100]}");
		CHECK(rc == DJC_OK && del == 2);
		CHECK(t_count(c, "Src", NULL) == 5);
		CHECK(djc_fetch(&rs, c, "Nope", NULL) == DJC_ENOTFOUND);
	}
}

/* populate with a C make */
static void test_populate_c_make(djc_conn *c, djc_conn *c2, const char *url, const char *schema)
{
	int rc;
	{
		djc_populate_options o;
		djc_populate_options_init(&o);
		int64_t failing = 3;
		o.make = mk;
		o.payload = &failing;
		o.suppress_errors = 1;
		djc_populate_result *res = NULL;
		calls = 0;
		rc = djc_populate(&res, c, "Out", &o);
		CHECK_MSG(rc == DJC_EMAKE, "rc %d: %s", rc, djc_error_last(c));
		CHECK(res && res->success_count == 4 && res->error_count == 1 && res->skipped_count == 0 && res->n_errors == 1);
		CHECK(calls == 5);
		if (res && res->n_errors == 1) {
			CHECK_STR(res->errors[0].message, "bad key 3");
			CHECK(strstr(res->errors[0].key_json, "3") != NULL);
		}
		djc_populate_result_free(res);
		CHECK(t_count(c, "Out", NULL) == 4);
		CHECK(t_count(c, "Out", "{\"id\": 3}") == 0);
		CHECK(t_count(c, "Out.Part", NULL) == 8);
		CHECK(t_count(c, "Out.Part", "{\"id\": 3}") == 0);   /* a failing make leaves nothing */
		djc_rowset *rs = NULL;
		if (djc_fetch(&rs, c, "Out", "{\"id\": 2}") == DJC_OK && djc_rowset_count(rs) == 1) {
			double y = 0;
			const djc_row *r = djc_rowset_row(rs, 0);
			djc_row_float(&y, r, (size_t)djc_row_find(r, "y"));
			CHECK(y == 6.0);
		} else
			CHECK(!"Out row 2");
		djc_rowset_free(rs);
		rs = NULL;
		if (djc_fetch(&rs, c, "Out.Part", "{\"id\": 4, \"p\": 2}") == DJC_OK && djc_rowset_count(rs) == 1) {
			int64_t z = 0;
			const djc_row *r = djc_rowset_row(rs, 0);
			djc_row_int(&z, r, (size_t)djc_row_find(r, "z"));
			CHECK(z == 402);
		} else
			CHECK(!"Out.Part row 4/2");
		djc_rowset_free(rs);
		long rem = -1, tot = -1;
		CHECK(djc_progress(&rem, &tot, c, "Out", NULL) == DJC_OK && rem == 1 && tot == 5);

		/* bad part name and bad row type inside a make: refused, nothing written */
		o.make = mk_badpart;
		o.payload = NULL;
		rc = djc_populate(&res, c, "Out", &o);
		CHECK(rc == DJC_EMAKE && res && res->error_count == 1 && res->success_count == 0);
		djc_populate_result_free(res);
		CHECK(t_count(c, "Out.Part", NULL) == 8);

		o.make = mk;
		calls = 0;
		rc = djc_populate(&res, c, "Out", &o);
		CHECK(rc == DJC_OK && res && res->success_count == 1 && res->error_count == 0 && calls == 1);
		djc_populate_result_free(res);
		CHECK(t_count(c, "Out", NULL) == 5 && t_count(c, "Out.Part", NULL) == 10);
		CHECK(djc_populate(&res, c, "Src", &o) == DJC_EINVAL);
		djc_populate_result_free(res);
	}
}

/* jobs */
static void test_jobs(djc_conn *c, djc_conn *c2, const char *url, const char *schema)
{
	int rc;
	{
		djc_refresh_result rr;
		rc = djc_jobs_refresh(&rr, c, "Jb", NULL);
		CHECK_MSG(rc == DJC_OK && rr.added == 5 && rr.removed == 0 && rr.orphaned == 0 && rr.re_pended == 0,
			  "rc %d added %ld: %s", rc, rr.added, djc_error_last(c));
		rc = djc_jobs_refresh(&rr, c, "Jb", NULL);
		CHECK(rc == DJC_OK && rr.added == 0);
		COUNTS(c, "Jb", 5, 0, 0, 0, 0);

		/* one pending job, reserved twice: the second finds nothing */
		djc_job *j1 = NULL, *j1b = NULL;
		rc = djc_jobs_reserve(&j1, c, "Jb", "{\"id\": 1}", -1);
		CHECK_MSG(rc == DJC_OK && j1 && key_id(djc_job_key(j1)) == 1, "%s", djc_error_last(c));
		rc = djc_jobs_reserve(&j1b, c2, "Jb", "{\"id\": 1}", -1);
		CHECK(rc == DJC_ENOTFOUND && j1b == NULL);
		COUNTS(c, "Jb", 4, 1, 0, 0, 0);
		djc_row *r = yrow(1.25);
		const djc_row *rp = r;
		rc = djc_jobs_complete(c, j1, &rp, 1, 0.5);
		CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
		djc_row_free(r);
		djc_job_free(j1);
		CHECK(t_count(c, "Jb", "{\"id\": 1}") == 1);
		COUNTS(c, "Jb", 4, 0, 0, 0, 0);   /* keep_completed is off: the row is gone */

		/* priority filter: all are at 5 */
		djc_job *jp = NULL;
		CHECK(djc_jobs_reserve(&jp, c, "Jb", NULL, 4) == DJC_ENOTFOUND && !jp);

		/* a reservation reset by refresh --orphan-timeout cannot complete */
		djc_job *j2 = NULL, *j2b = NULL;
		rc = djc_jobs_reserve(&j2, c, "Jb", "{\"id\": 2}", -1);
		CHECK(rc == DJC_OK && j2);
		sleep(2);
		djc_refresh_options ro = DJC_REFRESH_OPTIONS_INIT;
		ro.orphan_timeout = 1;
		rc = djc_jobs_refresh(&rr, c2, "Jb", &ro);
		CHECK_MSG(rc == DJC_OK && rr.orphaned == 1, "orphaned %ld: %s", rr.orphaned, djc_error_last(c2));
		COUNTS(c, "Jb", 4, 0, 0, 0, 0);
		rc = djc_jobs_reserve(&j2b, c2, "Jb", "{\"id\": 2}", -1);
		CHECK(rc == DJC_OK && j2b && djc_job_token(j2b) != djc_job_token(j2));
		r = yrow(-1);
		rp = r;
		rc = djc_jobs_complete(c, j2, &rp, 1, 0.1);
		CHECK_MSG(rc == DJC_ELOST, "rc %d", rc);
		djc_row_free(r);
		CHECK(t_count(c, "Jb", "{\"id\": 2}") == 0);   /* nothing committed */
		CHECK(djc_jobs_error(c, j2, "late", NULL) == DJC_ELOST);
		COUNTS(c, "Jb", 3, 1, 0, 0, 0);
		r = yrow(2.5);
		rp = r;
		rc = djc_jobs_complete(c2, j2b, &rp, 1, 0.1);
		CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c2));
		djc_row_free(r);
		djc_job_free(j2);
		djc_job_free(j2b);
		djc_rowset *rs = NULL;
		if (djc_fetch(&rs, c, "Jb", "{\"id\": 2}") == DJC_OK && djc_rowset_count(rs) == 1) {
			double y = 0;
			const djc_row *row = djc_rowset_row(rs, 0);
			djc_row_float(&y, row, (size_t)djc_row_find(row, "y"));
			CHECK(y == 2.5);
		} else
			CHECK(!"Jb row 2");
		djc_rowset_free(rs);

		/* errors: truncation at 2047 characters, exact length kept whole */
		djc_job *j3 = NULL, *j4 = NULL;
		CHECK(djc_jobs_reserve(&j3, c, "Jb", "{\"id\": 3}", -1) == DJC_OK);
		CHECK(djc_jobs_reserve(&j4, c, "Jb", "{\"id\": 4}", -1) == DJC_OK);
		char *big = malloc(5001), *exact = malloc(2048);
		memset(big, 'a', 5000);
		big[5000] = 0;
		memset(exact, 'b', 2047);
		exact[2047] = 0;
		CHECK(j3 && djc_jobs_error(c, j3, big, "the stack") == DJC_OK);
		CHECK(j4 && djc_jobs_error(c, j4, exact, NULL) == DJC_OK);
		djc_job_free(j3);
		djc_job_free(j4);
		COUNTS(c, "Jb", 1, 0, 0, 2, 0);
		rs = NULL;
		rc = djc_jobs_list(&rs, c, "Jb", "error");
		CHECK(rc == DJC_OK && djc_rowset_count(rs) == 2);
		for (size_t i = 0; rs && i < djc_rowset_count(rs); i++) {
			const djc_row *row = djc_rowset_row(rs, i);
			const char *m = text_of(row, "error_message");
			CHECK_STR(text_of(row, "status"), "error");
			if (key_id(row) == 3) {
				CHECK(m && strlen(m) == 2047 && !strcmp(m + 2047 - 12, "...truncated") && !strncmp(m, "aaaa", 4));
				CHECK_STR(text_of(row, "error_stack"), "the stack");
			} else {
				CHECK(m && !strcmp(m, exact));
			}
		}
		djc_rowset_free(rs);
		free(big);
		free(exact);
		/* error jobs are not reserved */
		djc_job *jx = NULL;
		CHECK(djc_jobs_reserve(&jx, c, "Jb", "{\"id\": [3, 4]}", -1) == DJC_ENOTFOUND);

		/* ignore: updates a pending job, inserts a missing one */
		djc_row *k = djc_row_new();
		djc_row_set_int(k, "id", 5);
		CHECK(djc_jobs_ignore(c, "Jb", k) == DJC_OK);
		djc_row_set_int(k, "id", 1);   /* done and gone from the jobs table */
		CHECK(djc_jobs_ignore(c, "Jb", k) == DJC_OK);
		djc_row_set_int(k, "nope", 1);
		CHECK(djc_jobs_ignore(c, "Jb", k) == DJC_EINVAL);
		djc_row_free(k);
		COUNTS(c, "Jb", 0, 0, 0, 2, 2);
		CHECK(djc_jobs_reserve(&jx, c, "Jb", NULL, -1) == DJC_ENOTFOUND);

		/* clear errors: eligible again at the next refresh */
		long n = -1;
		CHECK(djc_jobs_clear(&n, c, "Jb", "error") == DJC_OK && n == 2);
		CHECK(djc_jobs_clear(&n, c, "Jb", "bogus") == DJC_EINVAL);
		COUNTS(c, "Jb", 0, 0, 0, 0, 2);
		rc = djc_jobs_refresh(&rr, c, "Jb", NULL);
		CHECK(rc == DJC_OK && rr.added == 2);
		rs = NULL;
		CHECK(djc_jobs_list(&rs, c, "Jb", "pending") == DJC_OK && djc_rowset_count(rs) == 2);
		for (size_t i = 0; rs && i < djc_rowset_count(rs); i++) {
			const djc_row *row = djc_rowset_row(rs, i);
			int64_t prio = -1;
			djc_row_int(&prio, row, (size_t)djc_row_find(row, "priority"));
			CHECK(prio == 5 && (key_id(row) == 3 || key_id(row) == 4));
		}
		djc_rowset_free(rs);
		rs = NULL;
		CHECK(djc_jobs_list(&rs, c, "Jb", NULL) == DJC_OK && djc_rowset_count(rs) == 4);
		djc_rowset_free(rs);

		/* populate with reservation and a C make: a failing key is an error job, nothing inserted */
		djc_populate_options o;
		djc_populate_options_init(&o);
		o.reserve_jobs = 1;
		o.suppress_errors = 1;
		int64_t failing = 4;
		o.make = mkj;
		o.payload = &failing;
		djc_populate_result *res = NULL;
		calls = 0;
		rc = djc_populate(&res, c, "Jb", &o);
		CHECK_MSG(rc == DJC_EMAKE, "rc %d: %s", rc, djc_error_last(c));
		CHECK(res && res->success_count == 1 && res->error_count == 1 && calls == 2);
		if (res && res->n_errors == 1) CHECK_STR(res->errors[0].message, "bad key 4");
		djc_populate_result_free(res);
		CHECK(t_count(c, "Jb", NULL) == 3 && t_count(c, "Jb", "{\"id\": 4}") == 0);
		COUNTS(c, "Jb", 0, 0, 0, 1, 2);
		rs = NULL;
		CHECK(djc_jobs_list(&rs, c, "Jb", "error") == DJC_OK && djc_rowset_count(rs) == 1);
		if (rs && djc_rowset_count(rs) == 1) CHECK_STR(text_of(djc_rowset_row(rs, 0), "error_message"), "bad key 4");
		djc_rowset_free(rs);
	}
}

/* values by attribute name */
static void test_values_by_name(djc_conn *c, djc_conn *c2, const char *url, const char *schema)
{
	{
		djc_rowset *rs = NULL;
		CHECK(djc_fetch(&rs, c, "Src", "{\"id\": 2}") == DJC_OK && djc_rowset_count(rs) == 1);
		const djc_row *r = rs ? djc_rowset_row(rs, 0) : NULL;
		int64_t id = 0;
		double x = 0;
		CHECK(djc_row_get_int(&id, r, "id") == DJC_OK && id == 2);
		CHECK(djc_row_get_float(&x, r, "x") == DJC_OK && x == 3.0);
		CHECK(djc_row_get_int(&id, r, "nope") == DJC_ENOTFOUND);
		CHECK(djc_row_is_null(r, "x") == 0 && djc_row_is_null(r, "nope") == DJC_ENOTFOUND);
		djc_rowset_free(rs);
		djc_row *v = djc_row_new();
		djc_row_set_bool(v, "b", 1);
		djc_row_set_text(v, "t", "hi");
		djc_row_set_bytes(v, "raw", "\0\1\2", 3);
		djc_row_set_uint(v, "u", UINT64_MAX);
		djc_row_set_null(v, "n");
		int b = -1;
		const char *t = NULL;
		const void *raw = NULL;
		size_t nraw = 0;
		uint64_t u = 0;
		CHECK(djc_row_get_bool(&b, v, "b") == DJC_OK && b == 1);
		CHECK(djc_row_get_text(&t, v, "t") == DJC_OK && t && !strcmp(t, "hi"));
		CHECK(djc_row_get_bytes(&raw, &nraw, v, "raw") == DJC_OK && nraw == 3 && !memcmp(raw, "\0\1\2", 3));
		CHECK(djc_row_get_uint(&u, v, "u") == DJC_OK && u == UINT64_MAX);
		CHECK(djc_row_get_int(&id, v, "u") == DJC_EINVAL);   /* beyond int64: as djc_row_int */
		CHECK(djc_row_get_text(&t, v, "b") == DJC_EINVAL && djc_row_get_bool(&b, v, "t") == DJC_EINVAL);
		CHECK(djc_row_is_null(v, "n") == 1 && djc_row_get_int(&id, v, "n") == DJC_EINVAL);
		djc_row_free(v);
	}
}

/* one check per kind of value */
static void test_value_kinds(djc_conn *c, djc_conn *c2, const char *url, const char *schema)
{
	{
		char *msg = NULL;
		CHECK(djc_option_check("priority", 2147483647.0, &msg) == DJC_OK && !msg);
		CHECK(djc_option_check("priority", 99999999999.0, &msg) == DJC_EINVAL && msg &&
		      !strcmp(msg, "an integer from 0 to 2147483647"));
		free(msg);
		CHECK(djc_option_check("priority", 2.5, NULL) == DJC_EINVAL);
		CHECK(djc_option_check("delay", -1, NULL) == DJC_OK && djc_option_check("delay", 1e12, NULL) == DJC_EINVAL);
		CHECK(djc_option_check("timeout", 0, NULL) == DJC_OK && djc_option_check("timeout", 2e9, NULL) == DJC_EINVAL);
		CHECK(djc_option_check("jobs.lease_timeout", 0, NULL) == DJC_EINVAL);
		CHECK(djc_option_check("jobs.version_method", 0, &msg) == DJC_ENOTFOUND && msg);
		free(msg);
		djc_refresh_options ro = DJC_REFRESH_OPTIONS_INIT;
		djc_refresh_result rr;
		ro.priority = 99999999999L;
		CHECK(djc_jobs_refresh(&rr, c, "Jb", &ro) == DJC_EINVAL && strstr(djc_error_last(c), "priority must be an integer"));
		ro.priority = -1;
		ro.delay = 1e12;
		CHECK(djc_jobs_refresh(&rr, c, "Jb", &ro) == DJC_EINVAL && strstr(djc_error_last(c), "delay must be"));
		djc_jobs_set_options so = DJC_JOBS_SET_OPTIONS_INIT;
		so.priority = 99999999999L;
		CHECK(djc_jobs_set(NULL, c, "Jb", NULL, &so) == DJC_EINVAL);
		djc_populate_options po;
		djc_populate_options_init(&po);
		po.make = mkj;
		po.timeout = -2;
		CHECK(djc_populate(&(djc_populate_result *){NULL}, c, "Jb", &po) == DJC_EINVAL);
		/* the ranges djc_worker and the command line take: a process
		 * count beyond DJC_MAX_PROCESSES or below 0, a negative max_calls
		 * are refused, not clamped or read as "no limit" */
		po.timeout = 0;
		po.processes = DJC_MAX_PROCESSES + 1;
		djc_populate_result *pres = NULL;
		CHECK(djc_populate(&pres, c, "Jb", &po) == DJC_EINVAL && !pres);
		CHECK_STR(djc_error_last(c), "populate: processes must be from 0 to 256 (0 and 1: this process), got 257");
		djc_populate_result_free(pres);
		pres = NULL;
		po.processes = -1;
		CHECK(djc_populate(&pres, c, "Jb", &po) == DJC_EINVAL && !pres);
		djc_populate_result_free(pres);
		pres = NULL;
		po.processes = 1;
		po.max_calls = -5;
		CHECK(djc_populate(&pres, c, "Jb", &po) == DJC_EINVAL && !pres);
		CHECK_STR(djc_error_last(c), "populate: max_calls must be 0 (no limit) or more, got -5");
		djc_populate_result_free(pres);
	}
}

/* why nothing can be taken */
static void test_nothing_taken(djc_conn *c, djc_conn *c2, const char *url, const char *schema)
{
	{
		djc_row *n = djc_row_new();
		djc_row_set_int(n, "id", 200);
		djc_row_set_float(n, "x", 1);
		const djc_row *np = n;
		CHECK(djc_insert_ext(NULL, c, "Src", &np, 1, NULL) == DJC_OK);
		djc_row_free(n);
		djc_refresh_options ro = DJC_REFRESH_OPTIONS_INIT;
		djc_refresh_result rr;
		ro.delay = 3600;
		CHECK(djc_jobs_refresh(&rr, c, "Jb", &ro) == DJC_OK && rr.added == 1);
		djc_jobs_wait w;
		CHECK_MSG(djc_jobs_waiting(&w, c, "Jb", NULL, -1) == DJC_OK, "%s", djc_error_last(c));
		CHECK_MSG(w.later == 1 && w.first_due_in > 3000 && w.first_due_in <= 3600 && strlen(w.first_due) >= 19 &&
			  w.above_priority == 0, "later %ld in %g at '%s'", w.later, w.first_due_in, w.first_due);
		djc_jobs_set_options so = DJC_JOBS_SET_OPTIONS_INIT;
		so.priority = 9;
		so.delay = 0;
		long upd = 0;
		CHECK(djc_jobs_set(&upd, c, "Jb", "{\"id\": 200}", &so) == DJC_OK && upd == 1);
		CHECK(djc_jobs_waiting(&w, c, "Jb", NULL, 3) == DJC_OK && w.later == 0 && w.first_due[0] == 0 && w.above_priority == 1);
		CHECK(djc_jobs_waiting(&w, c, "Jb", NULL, 9) == DJC_OK && w.later == 0 && w.above_priority == 0);
	}
}

/* DJC_TIMEOUT_NONE: no limit for one run (--timeout 0) */
static void test_timeout_none(djc_conn *c, djc_conn *c2, const char *url, const char *schema)
{
	int rc;
	{
		const char *names[] = {"Jb"};
		int64_t none = -1;
		djc_worker_options wo = DJC_WORKER_OPTIONS_INIT;
		wo.make = mkj;
		wo.payload = &none;
		wo.until_empty = 1;
		wo.timeout = -2;
		djc_worker_result *wr = NULL;
		CHECK(djc_worker(&wr, c, names, 1, &wo) == DJC_EINVAL);
		djc_worker_result_free(wr);
		wr = NULL;
		wo.timeout = DJC_TIMEOUT_NONE;
		rc = djc_worker(&wr, c, names, 1, &wo);
		CHECK_MSG(rc == DJC_OK && wr && wr->success_count == 1, "rc %d: %s", rc, djc_error_last(c));
		djc_worker_result_free(wr);
		CHECK(t_count(c, "Jb", "{\"id\": 200}") == 1);
	}
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_api", "declare insert_fetch_delete:declare populate_c_make:insert_fetch_delete jobs:populate_c_make values_by_name:insert_fetch_delete value_kinds:declare nothing_taken:declare timeout_none:jobs:nothing_taken");
	char path[64];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-api-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_api";
	if (!strncmp(url, "sqlite:", 7)) schema = NULL;

	djc_conn *c = NULL, *c2 = NULL;
	int rc = djc_open(&c, url, schema);
	if (rc) { fprintf(stderr, "djc_open: %s\n", djc_error_last(c)); return 1; }
	rc = djc_open(&c2, url, schema);
	if (rc) { fprintf(stderr, "djc_open: %s\n", djc_error_last(c2)); return 1; }
	if (t_want("declare")) test_declare(c, c2, url, schema);
	if (t_want("insert_fetch_delete")) test_insert_fetch_delete(c, c2, url, schema);
	if (t_want("populate_c_make")) test_populate_c_make(c, c2, url, schema);
	if (t_want("jobs")) test_jobs(c, c2, url, schema);
	if (t_want("values_by_name")) test_values_by_name(c, c2, url, schema);
	if (t_want("value_kinds")) test_value_kinds(c, c2, url, schema);
	if (t_want("nothing_taken")) test_nothing_taken(c, c2, url, schema);
	if (t_want("timeout_none")) test_timeout_none(c, c2, url, schema);
	djc_close(c2);
	djc_close(c);
	if (!getenv("DJC_TEST_URL")) {
		t_unlink_sqlite(path + 7);
	}
	return T_DONE("test_api");
}
