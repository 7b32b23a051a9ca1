/* test_inproc_api.c - a make in another language through the library in
 * the worker's own process (python/djc_lib.py's way), by the public C API
 * only: djc_make_request answers the key, the table message and fetches as
 * the serve pipe does (types, bytes values raw after their row's line),
 * djc_make_insert_json stages rows as a serve program writes them (raw
 * values named in "_bin", part rows), bad rows and requests fail with a
 * message, djc_make_error_stack's text is the job's error stack. Runs on
 * the backend named by $DJC_TEST_URL / $DJC_TEST_SCHEMA (default: a fresh
 * SQLite file).
 *   makes    every key made from its Src row (its bytes value raw), with a
 *            raw result value and a part row, populate with 2 processes
 *   bad      a row that is not JSON, "_bin" that does not match the raw
 *            values, an unknown attribute, an unknown request, a fetch of
 *            a table that is not an ancestor: each says what is wrong
 *   stack    a failed make's message and stack are the job's */
#include "t.h"
#include "djc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char PIPE[] =
	"Src (manual)\n"
	"    id : int32\n"
	"    ---\n"
	"    x : int32\n"
	"    b : longblob\n"
	"\n"
	"Other (manual)\n"
	"    oid : int32\n"
	"    ---\n"
	"\n"
	"Out (computed)\n"
	"    -> Src\n"
	"    ---\n"
	"    y : int32\n"
	"    raw : longblob\n"
	"\n"
	"Out.P (part)\n"
	"    -> Out\n"
	"    k : int32\n"
	"    ---\n";

/* The answer to request req (a C string), or NULL after a failed check. */
static char *ask(djc_make_ctx *ctx, const char *req, size_t *len)
{
	char *out = NULL;
	int rc = djc_make_request(&out, len, NULL, NULL, ctx, req, strlen(req));
	CHECK_MSG(rc == DJC_OK && out && *len && out[*len] == 0, "%s: rc %d", req, rc);
	return rc ? NULL : out;
}

/* The number after "name": in s, or -1. */
static long num_after(const char *s, const char *name)
{
	const char *p = s ? strstr(s, name) : NULL;
	return p ? strtol(p + strlen(name), NULL, 10) : -1;
}

static int made;

/* Out's make: the key, the table message, the key's Src row by fetch (its
 * bytes value b raw: 3 bytes "\0\n" id), then y = x + 1, raw = "r\0" id,
 * and a part row. */
static int make_out(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)key;
	(void)payload;
	size_t n = 0;
	char *k = ask(ctx, "{\"_djc\":\"key\"}", &n);
	long id = num_after(k, "\"id\":");
	CHECK_MSG(k && !strncmp(k, "{\"_djc\":\"key\",\"table\":\"Out\",\"key\":{\"id\":", 39) && strstr(k, ",\"attempt\":1}\n"),
		  "%s", k ? k : "");
	char *tm = ask(ctx, "{\"_djc\":\"table\"}", &n);
	CHECK_MSG(tm && strstr(tm, "\"types\":{\"id\":\"int32\",\"y\":\"int32\",\"raw\":\"bytes\"}") &&
		  strstr(tm, "\"parts\":{\"P\":{\"id\":\"int32\",\"k\":\"int32\"}}"), "%s", tm ? tm : "");
	char req[160];
	snprintf(req, sizeof req, "{\"_djc\":\"fetch\",\"table\":\"Src\",\"key\":{\"id\":%ld},\"types\":true,\"binary\":true}", id);
	char *rows = ask(ctx, req, &n);
	char *nl = rows ? strchr(rows, '\n') : NULL;
	char *nl2 = nl ? strchr(nl + 1, '\n') : NULL;
	CHECK_MSG(nl && !strncmp(rows, "{\"_djc\":\"rows\",\"count\":1,\"types\":{", 34), "%s", rows ? rows : "");
	CHECK_MSG(nl2 && strstr(nl + 1, "\"_bin\":[[\"b\",3]]") && (size_t)(nl2 + 1 + 3 - rows) == n &&
		  !memcmp(nl2 + 1, "\0\n", 2) && nl2[3] == (char)id, "%s", nl ? nl + 1 : "");
	/* the same fetch with the raw values apart: the text ends with the
	 * row's line, its value is the one buffer */
	void **raw_parts = NULL;
	size_t nparts = 0;
	char *text = NULL;
	int prc = djc_make_request(&text, &n, &raw_parts, &nparts, ctx, req, strlen(req));
	CHECK_MSG(prc == DJC_OK && text && nparts == 1 && n == strlen(text) && text[n - 1] == '\n' &&
		  strstr(text, "\"_bin\":[[\"b\",3]]") && !memcmp(raw_parts[0], "\0\n", 2) &&
		  ((char *)raw_parts[0])[2] == (char)id, "rc %d, %zu parts: %s", prc, nparts, text ? text : "");
	for (size_t i = 0; i < nparts; i++) free(raw_parts[i]);
	free(raw_parts);
	free(text);
	CHECK(djc_make_request(&text, &n, &raw_parts, NULL, ctx, req, strlen(req)) == DJC_EINVAL && !text);
	long x = nl ? num_after(nl + 1, "\"x\":") : -1;
	char row[96], raw[3] = {'r', 0, (char)id};
	const void *vals[1] = {raw};
	int len = snprintf(row, sizeof row, "{\"y\": %ld, \"_bin\": [[\"raw\", 3]]}", x + 1);
	int rc = djc_make_insert_json(ctx, row, (size_t)len, vals, 1);
	if (!rc) rc = djc_make_insert_json(ctx, "{\"_part\":\"P\",\"k\":7}", 19, NULL, 0);
	free(k);
	free(tm);
	free(rows);
	if (!rc) __atomic_add_fetch(&made, 1, __ATOMIC_RELAXED);
	return rc;
}

static void add_src(djc_conn *c, int from, int to)
{
	for (int i = from; i <= to; i++) {
		djc_row *r = djc_row_new();
		char b[3] = {0, '\n', (char)i};
		djc_row_set_int(r, "id", i);
		djc_row_set_int(r, "x", i * 10);
		djc_row_set_bytes(r, "b", b, 3);
		const djc_row *rows[1] = {r};
		CHECK(djc_insert_ext(NULL, c, "Src", rows, 1, NULL) == DJC_OK);
		djc_row_free(r);
	}
}

static void test_makes(djc_conn *c)
{
	add_src(c, 1, 6);
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.make = make_out;
	o.reserve_jobs = 1;
	djc_populate_result *res = NULL;
	int rc = djc_populate(&res, c, "Out", &o);
	CHECK_MSG(rc == DJC_OK && res && res->success_count == 6, "%s", djc_error_last(c));
	CHECK(made == 6);
	djc_populate_result_free(res);
	res = NULL;
	add_src(c, 7, 10);
	o.processes = 2;
	rc = djc_populate(&res, c, "Out", &o);
	CHECK_MSG(rc == DJC_OK && res && res->success_count == 4, "%s", djc_error_last(c));
	djc_populate_result_free(res);
	djc_rowset *rs = NULL;
	CHECK(djc_fetch(&rs, c, "Out", NULL) == DJC_OK && djc_rowset_count(rs) == 10);
	for (size_t i = 0; rs && i < djc_rowset_count(rs); i++) {
		const djc_row *r = djc_rowset_row(rs, i);
		int64_t id = 0, y = 0;
		const void *raw = NULL;
		size_t n = 0;
		djc_row_get_int(&id, r, "id");
		djc_row_get_int(&y, r, "y");
		djc_row_get_bytes(&raw, &n, r, "raw");
		CHECK_MSG(y == id * 10 + 1 && n == 3 && !memcmp(raw, "r\0", 2) && ((const char *)raw)[2] == (char)id,
			  "id %lld: y %lld, raw %zu bytes", (long long)id, (long long)y, n);
	}
	djc_rowset_free(rs);
	rs = NULL;
	CHECK(djc_fetch(&rs, c, "Out.P", NULL) == DJC_OK && djc_rowset_count(rs) == 10);
	djc_rowset_free(rs);
}

static char failures[6][300];

/* Key id (11-16) tries one bad thing and records what it was told. */
static int make_bad(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t id = 0;
	djc_row_get_int(&id, key, "id");
	char *a = NULL;
	size_t n = 0;
	int rc = DJC_OK, i = (int)id - 11;
	const void *raw[1] = {"xy"};
	switch (id) {
	case 11: rc = djc_make_insert_json(ctx, "{\"y\": 1,", 8, NULL, 0); break;
	case 12: rc = djc_make_insert_json(ctx, "{\"y\": 1, \"_bin\": [[\"raw\", 2]]}", 30, raw, 0); break;
	case 13: rc = djc_make_insert_json(ctx, "{\"y\": 1, \"zz\": 2}", 17, NULL, 0); break;
	case 14: djc_make_request(&a, &n, NULL, NULL, ctx, "{\"_djc\":\"hello\"}", 16); break;
	case 15: djc_make_request(&a, &n, NULL, NULL, ctx, "{\"_djc\":\"fetch\",\"table\":\"Other\"}", 32); break;
	default: rc = djc_make_insert_json(ctx, "{\"y\": 1}", 8, raw, 1); break;
	}
	if (a) {
		snprintf(failures[i], sizeof failures[i], "%s", a);
		free(a);
		djc_make_error(ctx, "told");
		return -1;
	}
	return rc;
}

static void test_bad(djc_conn *c)
{
	add_src(c, 11, 16);
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.make = make_bad;
	o.suppress_errors = 1;
	djc_populate_result *res = NULL;
	djc_populate(&res, c, "Out", &o);
	CHECK(res && res->error_count == 6 && res->success_count == 0 && res->n_errors == 6);
	for (size_t i = 0; res && i < res->n_errors; i++) {
		const char *k = res->errors[i].key_json, *m = res->errors[i].message;
		long id = num_after(k, "\"id\":");
		if (id >= 14 && id <= 15) m = failures[id - 11];
		const char *want[] = {"a row must be one JSON object", "names 1 raw values, 0 given",
				      "unknown attribute \"zz\"", "a make's request is one JSON object",
				      "Other", "raw values given, but the row has no \"_bin\""};
		CHECK_MSG(id >= 11 && id <= 16 && strstr(m, want[id - 11]), "%s: %s", k, m);
		if (id == 15) CHECK_MSG(strstr(m, "{\"_djc\":\"rows\",\"error\":") && strstr(m, "Out"), "%s", m);
	}
	djc_populate_result_free(res);
}

/* A make that fails with a message and a stack of its own. */
static int make_stack(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)key;
	(void)payload;
	djc_make_error(ctx, "ValueError: no");
	djc_make_error_stack(ctx, "Traceback (most recent call last):\n  line 1\nValueError: no\n");
	return -1;
}

static void test_stack(djc_conn *c)
{
	add_src(c, 17, 17);
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.make = make_stack;
	o.reserve_jobs = 1;
	o.suppress_errors = 1;
	o.where_json = "{\"id\": 17}";
	djc_populate_result *res = NULL;
	djc_populate(&res, c, "Out", &o);
	CHECK(res && res->error_count == 1 && res->n_errors == 1 && !strcmp(res->errors[0].message, "ValueError: no"));
	djc_populate_result_free(res);
	djc_rowset *rs = NULL;
	CHECK(djc_jobs_list(&rs, c, "Out", "error") == DJC_OK && djc_rowset_count(rs) == 1);
	const char *stack = NULL;
	if (rs && djc_rowset_count(rs) == 1) djc_row_get_text(&stack, djc_rowset_row(rs, 0), "error_stack");
	CHECK_STR(stack, "Traceback (most recent call last):\n  line 1\nValueError: no\n");
	djc_rowset_free(rs);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_inproc_api", "makes bad stack");
	char path[64];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-inproc-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_inproc";
	if (!strncmp(url, "sqlite:", 7)) schema = NULL;
	djc_conn *c = NULL;
	int rc = djc_open(&c, url, schema);
	if (rc) { fprintf(stderr, "djc_open: %s\n", djc_error_last(c)); return 1; }
	char *report = NULL;
	rc = djc_declare(&report, c, PIPE, "inproc.djc");
	free(report);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	if (t_want("makes")) test_makes(c);
	if (t_want("bad")) test_bad(c);
	if (t_want("stack")) test_stack(c);
	djc_close(c);
	if (url == path) unlink(path + 7);
	return T_DONE("test_inproc_api");
}
