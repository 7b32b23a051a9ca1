/* test_contract.c - what include/djc.h promises at its edges: a job or a
 * make context stays valid while the connection looks up unknown tables or
 * declares again (the definitions it points to are never freed under it);
 * NULL arguments are DJC_EINVAL, not a crash; options structs of another
 * version are refused; getters convert only where exact. Found by an audit
 * of the header against the library (the first item was a use-after-free).
 * Runs on $DJC_TEST_URL / $DJC_TEST_SCHEMA (default: a fresh SQLite file);
 * meant to run under ASan too. */
#include "t.h"
#include "djc.h"
#include <stdint.h>
#include <stdio.h>
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
	"    y : float64\n";

/* reads an unknown table first (the connection reloads its definitions),
 * then stages its row */
static int mk_lookup(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	djc_rowset *rs = NULL;
	if (djc_make_fetch(&rs, ctx, "NoSuchTable", NULL) != DJC_ENOTFOUND) return 1;
	if (djc_make_fetch_key(&rs, ctx, "NoSuchTable", key) != DJC_ENOTFOUND) return 1;
	djc_row *r = djc_row_new();
	djc_row_set_float(r, "y", 1.5);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

/* a held job survives lookups of unknown tables and a repeated declare */
static void test_held_job(djc_conn *c)
{
	djc_job *j = NULL;
	djc_refresh_result r0;
	CHECK(djc_jobs_refresh(&r0, c, "Out", NULL) == DJC_OK && r0.added == 6);
	CHECK(djc_jobs_reserve(&j, c, "Out", "{\"id\": 1}", -1) == DJC_OK && j);
	djc_rowset *rs = NULL;
	CHECK(djc_fetch(&rs, c, "NoSuchTable", NULL) == DJC_ENOTFOUND && !rs);
	CHECK(djc_declare(NULL, c, PIPE, "c.djc") == DJC_OK);
	CHECK(djc_fetch(&rs, c, "AlsoMissing", NULL) == DJC_ENOTFOUND);
	djc_row *y = djc_row_new();
	djc_row_set_float(y, "y", 2.5);
	CHECK_MSG(djc_jobs_complete(c, j, (const djc_row *const *)&y, 1, 0.1) == DJC_OK, "%s", djc_error_last(c));
	djc_row_free(y);
	djc_job_free(j);
}

/* a make that looks up an unknown table, with one and with two processes */
static void test_make_lookup(djc_conn *c)
{
	for (int procs = 1; procs <= 2; procs++) {
		djc_populate_options o;
		djc_populate_options_init(&o);
		o.reserve_jobs = 1;
		o.processes = procs;
		o.max_calls = procs == 1 ? 2 : 0;
		o.make = mk_lookup;
		djc_populate_result *res = NULL;
		int rc = djc_populate(&res, c, "Out", &o);
		CHECK_MSG(rc == DJC_OK && res && res->success_count == (procs == 1 ? 2 : 3) && res->error_count == 0,
			  "processes %d: rc %d, made %ld: %s", procs, rc, res ? res->success_count : -1, djc_error_last(c));
		djc_populate_result_free(res);
	}
}

/* NULL table names: DJC_EINVAL from every function that takes one */
static void test_null_args(djc_conn *c)
{
	djc_rowset *rs = NULL;
	djc_job *j = NULL;
	djc_row *k = djc_row_new();
	djc_row_set_int(k, "id", 1);
	const djc_row *kr[1] = {k};
	char *s = NULL;
	long a = 0, b = 0, counts[5];
	size_t n = 0;
	djc_populate_result *pr = NULL;
	djc_refresh_result rr;
	CHECK(djc_insert_ext(NULL, c, NULL, kr, 1, NULL) == DJC_EINVAL);
	CHECK(djc_fetch(&rs, c, NULL, NULL) == DJC_EINVAL);
	CHECK(djc_key_restriction(&s, c, NULL, "{\"id\": 1}") == DJC_EINVAL && !s);
	CHECK(djc_insert_jsonl_ext(&n, c, NULL, stdin, "x", NULL) == DJC_EINVAL);
	CHECK(djc_fetch_print(c, NULL, NULL, DJC_FORMAT_JSON, stdout) == DJC_EINVAL);
	CHECK(djc_delete(&n, c, NULL, NULL) == DJC_EINVAL);
	CHECK(djc_populate(&pr, c, NULL, NULL) == DJC_EINVAL);
	djc_populate_result_free(pr);
	CHECK(djc_progress(&a, &b, c, NULL, NULL) == DJC_EINVAL);
	CHECK(djc_jobs_refresh(&rr, c, NULL, NULL) == DJC_EINVAL);
	CHECK(djc_jobs_reserve(&j, c, NULL, NULL, -1) != DJC_OK);
	CHECK(djc_jobs_ignore(c, NULL, k) == DJC_EINVAL);
	CHECK(djc_jobs_clear(&a, c, NULL, "error") == DJC_EINVAL);
	CHECK(djc_jobs_counts(counts, c, NULL) == DJC_EINVAL);
	CHECK(djc_jobs_list(&rs, c, NULL, NULL) == DJC_EINVAL);
	CHECK(!strcmp(djc_error_last(c), "no table named (NULL)"));
	/* other NULL arguments */
	CHECK(djc_declare(&s, c, NULL, "x.djc") == DJC_EINVAL && !s);
	CHECK(djc_jobs_complete(c, NULL, NULL, 0, 0) == DJC_EINVAL);
	CHECK(djc_jobs_ignore(c, "Out", NULL) == DJC_EINVAL);
	CHECK(djc_jobs_refresh(NULL, c, "Out", NULL) == DJC_OK);
	CHECK(djc_fetch_print(c, "Src", NULL, DJC_FORMAT_JSON, NULL) == DJC_EINVAL);
	CHECK(djc_fetch_print(c, "Src", NULL, (djc_format)7, stdout) == DJC_EINVAL);
	CHECK(djc_insert_ext(NULL, c, "Src", NULL, 2, NULL) == DJC_EINVAL);
	const djc_row *holes[2] = {k, NULL};
	CHECK(djc_insert_ext(NULL, c, "Src", holes, 2, NULL) == DJC_EINVAL);
	CHECK(djc_insert_jsonl_ext(&n, c, "Src", NULL, "x", NULL) == DJC_EINVAL);
	CHECK(djc_row_find(k, NULL) == -1);
	char *msg = NULL;
	CHECK(djc_row_from_json(NULL, "{}", &msg) == DJC_EINVAL);
	djc_row *out = NULL;
	CHECK(djc_row_from_json(&out, NULL, &msg) == DJC_EINVAL && !out && msg);
	free(msg);
	msg = NULL;
	CHECK(djc_row_from_json(&out, "{\"\": 1}", &msg) == DJC_EINVAL && !out && msg);
	free(msg);
	rs = NULL;
	CHECK(djc_jobs_list(&rs, c, "Out", "bogus") == DJC_EINVAL && !rs);
	CHECK(djc_jobs_list(&rs, c, "Out", "pending") == DJC_OK);
	djc_rowset_free(rs);
	djc_row_free(k);
}

/* options of another version are refused, not misread */
static void test_other_version(djc_conn *c)
{
	size_t n = 0;
	djc_populate_result *pr = NULL;
	djc_refresh_result rr;
	djc_insert_options io = {.version = 99};
	djc_row *r7 = djc_row_new();
	djc_row_set_int(r7, "id", 7);
	djc_row_set_float(r7, "x", 7);
	CHECK(djc_insert_ext(&n, c, "Src", (const djc_row *const *)&r7, 1, &io) == DJC_EINVAL && n == 0);
	djc_row_free(r7);
	djc_populate_options po;
	djc_populate_options_init(&po);
	po.version = 42;
	pr = NULL;
	CHECK(djc_populate(&pr, c, "Out", &po) == DJC_EINVAL);
	djc_populate_result_free(pr);
	djc_refresh_options ro = DJC_REFRESH_OPTIONS_INIT;
	ro.version = 77;
	CHECK(djc_jobs_refresh(&rr, c, "Out", &ro) == DJC_EINVAL);
}

/* a make that passes NULL where the header wants an object: DJC_EINVAL
 * (djc_make_insert's message names it), not a crash; a NULL context or
 * format makes djc_make_error do nothing */
static int mk_nulls(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	int *bad = payload;
	djc_rowset *rs = NULL;
	djc_row *r = djc_row_new();
	djc_make_error(NULL, "nothing to set");
	djc_make_error(ctx, NULL);
	if (djc_make_insert(NULL, NULL, r) != DJC_EINVAL) (*bad)++;
	if (djc_make_fetch(&rs, NULL, "Src", NULL) != DJC_EINVAL) (*bad)++;
	if (djc_make_fetch(NULL, ctx, "Src", NULL) != DJC_EINVAL) (*bad)++;
	if (djc_make_fetch_key(NULL, ctx, "Src", key) != DJC_EINVAL) (*bad)++;
	if (djc_make_fetch_key(&rs, NULL, "Src", key) != DJC_EINVAL) (*bad)++;
	int rc = djc_make_insert(ctx, NULL, NULL);
	if (rc != DJC_EINVAL) (*bad)++;
	djc_row_free(r);
	return rc;
}

/* Out's row and job of id 2 gone (earlier cases made every key) */
static void unmake_2(djc_conn *c)
{
	CHECK(djc_delete_ext(NULL, c, "Out", "{\"id\": 2}", NULL) == DJC_OK);
	CHECK(djc_jobs_clear_ext(NULL, c, "Out", NULL, "{\"id\": 2}") == DJC_OK);
}

static void test_make_null_args(djc_conn *c)
{
	unmake_2(c);
	for (int reserve = 0; reserve <= 1; reserve++) {
		int bad = 0;
		djc_populate_options o;
		djc_populate_options_init(&o);
		o.reserve_jobs = reserve;
		o.max_calls = 1;
		o.where_json = "{\"id\": 2}";
		o.make = mk_nulls;
		o.payload = &bad;
		djc_populate_result *res = NULL;
		int rc = djc_populate(&res, c, "Out", &o);
		CHECK_MSG(rc == DJC_EMAKE && res && res->error_count == 1 && res->n_errors == 1 && bad == 0,
			  "reserve %d: rc %d, bad %d: %s", reserve, rc, bad, djc_error_last(c));
		if (res && res->n_errors)
			CHECK_MSG(strstr(res->errors[0].message, "djc_make_insert: no row (NULL)") != NULL, "%s",
				  res->errors[0].message);
		djc_populate_result_free(res);
		CHECK(djc_jobs_clear_ext(NULL, c, "Out", NULL, "{\"id\": 2}") == DJC_OK);
	}
}

/* an error message or stack that is not UTF-8 (a C make quoting raw bytes)
 * is recorded, its bad bytes as '?', on every backend: PostgreSQL and
 * MariaDB refused the whole error row, and the job stayed reserved */
static int mk_badutf8(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)key;
	(void)payload;
	djc_make_error(ctx, "raw bytes \xff\xfe here, then \xc3");
	return 1;
}

static void test_bad_utf8_error(djc_conn *c)
{
	unmake_2(c);
	djc_populate_options o;
	djc_populate_options_init(&o);
	o.reserve_jobs = 1;
	o.max_calls = 1;
	o.where_json = "{\"id\": 2}";
	o.make = mk_badutf8;
	djc_populate_result *res = NULL;
	int rc = djc_populate(&res, c, "Out", &o);
	CHECK_MSG(rc == DJC_EMAKE && res && res->error_count == 1, "rc %d: %s", rc, djc_error_last(c));
	djc_populate_result_free(res);
	djc_job_counts jc;
	CHECK(djc_jobs_count(&jc, c, "Out", "{\"id\": 2}") == DJC_OK);
	CHECK_MSG(jc.error + jc.pending == 1 && jc.reserved == 0, "pending %ld reserved %ld error %ld", jc.pending,
		  jc.reserved, jc.error);
	djc_rowset *rs = NULL;
	CHECK(djc_jobs_history(&rs, c, "Out", (const djc_row *)NULL) == DJC_EINVAL);
	djc_row *k = djc_row_new();
	djc_row_set_int(k, "id", 2);
	CHECK(djc_jobs_history(&rs, c, "Out", k) == DJC_OK && djc_rowset_count(rs) == 1);
	const char *m = NULL;
	if (djc_rowset_count(rs) == 1) {
		CHECK(djc_row_get_text(&m, djc_rowset_row(rs, 0), "message") == DJC_OK);
		CHECK_STR(m, "raw bytes ?? here, then ?");
	}
	djc_rowset_free(rs);
	/* the same through djc_jobs_error, its stack too */
	djc_job *j = NULL;
	CHECK(djc_jobs_clear_ext(NULL, c, "Out", NULL, "{\"id\": 2}") == DJC_OK);
	CHECK(djc_jobs_refresh(NULL, c, "Out", &(djc_refresh_options){.version = DJC_REFRESH_OPTIONS_VERSION,
		.priority = -1, .stale_timeout = -1, .where_json = "{\"id\": 2}"}) == DJC_OK);
	CHECK(djc_jobs_reserve(&j, c, "Out", "{\"id\": 2}", -1) == DJC_OK && j);
	if (j) {
		rc = djc_jobs_error(c, j, "bad \x80", "stack \xff\n");
		CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
		djc_job_free(j);
	}
	rs = NULL;
	CHECK(djc_jobs_history(&rs, c, "Out", k) == DJC_OK && djc_rowset_count(rs) == 1);
	if (djc_rowset_count(rs) == 1) {
		const char *st = NULL;
		CHECK(djc_row_get_text(&m, djc_rowset_row(rs, 0), "message") == DJC_OK);
		CHECK_STR(m, "bad ?");
		CHECK(djc_row_get_text(&st, djc_rowset_row(rs, 0), "stack") == DJC_OK);
		CHECK_STR(st, "stack ?\n");
	}
	djc_rowset_free(rs);
	CHECK(djc_jobs_clear_ext(NULL, c, "Out", NULL, "{\"id\": 2}") == DJC_OK);
	djc_row_free(k);
}

/* every option out of its range is refused, naming it, before anything
 * runs: populate's and the worker's refresh (2 was read as yes), the
 * priority bound of djc_jobs_reserve and djc_jobs_waiting (-5 was read as
 * "any", where populate refuses -2) */
static int mk_never(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)ctx;
	(void)key;
	(*(int *)payload)++;
	return 1;
}

static void test_option_ranges(djc_conn *c)
{
	int calls = 0;
	djc_populate_options o;
	djc_populate_options_init(&o);
	o.make = mk_never;
	o.payload = &calls;
	djc_populate_result *res = NULL;
	for (int r = -2; r <= 2; r += 4) {
		o.refresh = r;
		CHECK(djc_populate(&res, c, "Out", &o) == DJC_EINVAL);
		CHECK_MSG(strstr(djc_error_last(c), "refresh must be -1") != NULL, "%s", djc_error_last(c));
		djc_populate_result_free(res);
		res = NULL;
	}
	djc_worker_options wo = DJC_WORKER_OPTIONS_INIT;
	wo.make = mk_never;
	wo.payload = &calls;
	wo.refresh = 2;
	wo.until_empty = 1;
	const char *names[1] = {"Out"};
	djc_worker_result *wr = NULL;
	CHECK(djc_worker(&wr, c, names, 1, &wo) == DJC_EINVAL);
	CHECK_MSG(strstr(djc_error_last(c), "refresh -1, 0 or 1") != NULL, "%s", djc_error_last(c));
	djc_worker_result_free(wr);
	CHECK(calls == 0);
	djc_job *j = NULL;
	CHECK(djc_jobs_reserve(&j, c, "Out", NULL, -5) == DJC_EINVAL && !j);
	CHECK_MSG(strstr(djc_error_last(c), "max_priority must be an integer from 0 to 2147483647") != NULL, "%s",
		  djc_error_last(c));
	CHECK(djc_jobs_reserve(&j, c, "Out", NULL, 3000000000L) == DJC_EINVAL && !j);
	CHECK(djc_jobs_reserve(NULL, c, "Out", NULL, -1) == DJC_EINVAL);
	djc_jobs_wait w;
	CHECK(djc_jobs_waiting(&w, c, "Out", NULL, -2) == DJC_EINVAL);
	CHECK(djc_jobs_waiting(NULL, c, "Out", NULL, -1) == DJC_EINVAL);
	CHECK(djc_jobs_waiting(&w, c, "Out", NULL, 7) == DJC_OK);
}

/* a count of attributes with no array: DJC_EINVAL, as djc_worker and
 * djc_adopted_check say it ("announced, none given"); proj read the NULL
 * array and crashed */
static void test_expr_null_arrays(djc_conn *c)
{
	djc_expr *t = NULL, *e = NULL;
	CHECK(djc_expr_table(&t, c, "Src") == DJC_OK && t);
	CHECK(djc_expr_proj(&e, c, t, NULL, 2) == DJC_EINVAL && !e);
	CHECK_MSG(strstr(djc_error_last(c), "2 attributes announced, none given") != NULL, "%s", djc_error_last(c));
	CHECK(djc_expr_aggr(&e, c, t, t, NULL, 1) == DJC_EINVAL && !e);
	CHECK(djc_expr_group(&e, c, t, NULL, 1, NULL, 0) == DJC_EINVAL && !e);
	const char *by[1] = {"x"};
	CHECK(djc_expr_group(&e, c, t, by, 1, NULL, 3) == DJC_EINVAL && !e);
	CHECK(djc_expr_proj(&e, c, t, NULL, 0) == DJC_OK && e);
	djc_expr_free(e);
	djc_expr_free(t);
	/* and a NULL name says so too (the message was empty) */
	char *rep = NULL;
	CHECK(djc_unadopt(&rep, c, NULL) == DJC_EINVAL && !rep);
	CHECK_MSG(strstr(djc_error_last(c), "unadopt: no DataJoint schema named (NULL)") != NULL, "%s", djc_error_last(c));
}

/* getters convert only where exact */
static void test_getters_exact(djc_conn *c)
{
	djc_row *v = djc_row_new();
	double d = 0;
	djc_row_set_int(v, "a", INT64_MAX);
	djc_row_set_int(v, "b", (INT64_C(1) << 53) + 1);
	djc_row_set_int(v, "c", -12);
	djc_row_set_uint(v, "d", (UINT64_C(1) << 63) + 7);
	djc_row_set_uint(v, "e", UINT64_C(1) << 63);
	CHECK(djc_row_float(&d, v, 0) == DJC_EINVAL);
	CHECK(djc_row_float(&d, v, 1) == DJC_EINVAL);
	CHECK(djc_row_float(&d, v, 2) == DJC_OK && d == -12);
	CHECK(djc_row_float(&d, v, 3) == DJC_EINVAL);
	CHECK(djc_row_float(&d, v, 4) == DJC_OK && d == 9223372036854775808.0);
	djc_row_free(v);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_contract", "held_job make_lookup:held_job null_args other_version getters_exact make_null_args bad_utf8_error option_ranges expr_null_arrays");
	char path[64];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-contract-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_contract";
	if (!strncmp(url, "sqlite:", 7)) schema = NULL;
	djc_conn *c = NULL;
	if (djc_open(&c, url, schema)) {
		fprintf(stderr, "cannot open %s: %s\n", url, djc_error_last(c));
		return 1;
	}
	CHECK(djc_declare(NULL, c, PIPE, "c.djc") == DJC_OK);
	djc_row *rows[6];
	for (int i = 0; i < 6; i++) {
		rows[i] = djc_row_new();
		djc_row_set_int(rows[i], "id", i + 1);
		djc_row_set_float(rows[i], "x", i);
	}
	CHECK(djc_insert_ext(NULL, c, "Src", (const djc_row *const *)rows, 6, NULL) == DJC_OK);
	for (int i = 0; i < 6; i++) djc_row_free(rows[i]);
	if (t_want("held_job")) test_held_job(c);
	if (t_want("make_lookup")) test_make_lookup(c);
	if (t_want("null_args")) test_null_args(c);
	if (t_want("other_version")) test_other_version(c);
	if (t_want("getters_exact")) test_getters_exact(c);
	if (t_want("make_null_args")) test_make_null_args(c);
	if (t_want("bad_utf8_error")) test_bad_utf8_error(c);
	if (t_want("option_ranges")) test_option_ranges(c);
	if (t_want("expr_null_arrays")) test_expr_null_arrays(c);
	djc_close(c);
	if (!getenv("DJC_TEST_URL")) unlink(path + 7);
	return T_DONE("test_contract");
}
