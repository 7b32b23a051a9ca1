/* test_conventions.c - the API's conventions (djc.h):
 *  - the names the convention replaced (output parameters first, one suffix
 *    `_ext` for a fuller form) still work for one release and do what their
 *    new names do: djc_insert, djc_insert_jsonl and djc_insert_csv (count
 *    last), djc_delete_with_options, djc_jobs_*_where. Built as a user's
 *    program that silences the deprecation warnings by defining
 *    DJC_DEPRECATED empty, as djc.h documents;
 *  - every options struct's version is checked by one check with one
 *    message: "<what> options version V is not C (use DJC_..._INIT)". */
#define DJC_DEPRECATED(use)
#include "djc.h"
#include "t.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *PIPE = "A (manual)\n"
			  "    id : int32\n"
			  "    ---\n"
			  "    x : float64\n"
			  "\n"
			  "B (computed)\n"
			  "    -> A\n"
			  "    ---\n"
			  "    y : float64\n";

/* A stream holding text, rewound. */
static FILE *text_stream(const char *text)
{
	FILE *f = tmpfile();
	if (!f) return NULL;
	fputs(text, f);
	rewind(f);
	return f;
}

int main(void)
{
	char path[64];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-conventions-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_conventions";
	if (!strncmp(url, "sqlite:", 7)) schema = NULL;
	djc_conn *c = NULL;
	if (djc_open(&c, url, schema)) {
		fprintf(stderr, "cannot open %s: %s\n", url, djc_error_last(c));
		return 1;
	}
	CHECK(djc_declare(NULL, c, PIPE, "deprecated.djc") == DJC_OK);

	/* djc_insert: the count last */
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "id", 1);
	djc_row_set_float(r, "x", 1.5);
	size_t n = 99;
	CHECK(djc_insert(c, "A", (const djc_row *const *)&r, 1, NULL, &n) == DJC_OK && n == 1);
	djc_insert_options io = DJC_INSERT_OPTIONS_INIT;
	io.skip_duplicates = 1;
	n = 99;
	CHECK(djc_insert(c, "A", (const djc_row *const *)&r, 1, &io, &n) == DJC_OK && n == 0);
	djc_row_free(r);

	FILE *f = text_stream("{\"id\": 2, \"x\": 2}\n{\"id\": 3, \"x\": 3}\n");
	n = 0;
	CHECK(f && djc_insert_jsonl(c, "A", f, "a.jsonl", NULL, &n) == DJC_OK && n == 2);
	if (f) fclose(f);
	f = text_stream("id,x\n4,4\n");
	n = 0;
	CHECK(f && djc_insert_csv(c, "A", f, "a.csv", NULL, &n) == DJC_OK && n == 1);
	if (f) fclose(f);

	/* the jobs' _where forms */
	djc_refresh_result rr;
	CHECK(djc_jobs_refresh(&rr, c, "B", NULL) == DJC_OK && rr.added == 4);
	djc_rowset *rs = NULL;
	CHECK(djc_jobs_list_where(&rs, c, "B", "pending", "{\"id\": 2}") == DJC_OK && djc_rowset_count(rs) == 1);
	djc_rowset_free(rs);
	long k = 0;
	CHECK(djc_jobs_ignore_where(&k, c, "B", "{\"id\": 3}") == DJC_OK && k == 1);
	k = 0;
	CHECK(djc_jobs_clear_where(&k, c, "B", "ignore", NULL) == DJC_OK && k == 1);

	/* djc_delete_with_options */
	djc_changes *ch = NULL;
	djc_delete_options dopt = DJC_DELETE_OPTIONS_INIT;
	CHECK(djc_delete_with_options(&ch, c, "A", "{\"id\": 4}", &dopt) == DJC_OK && ch && ch->applied);
	djc_changes_free(ch);
	rs = NULL;
	CHECK(djc_fetch(&rs, c, "A", NULL) == DJC_OK && djc_rowset_count(rs) == 3);
	djc_rowset_free(rs);

	/* one version check, one message */
	djc_fetch_options fo = DJC_FETCH_OPTIONS_INIT;
	fo.version = 99;
	rs = NULL;
	CHECK(djc_fetch_ext(&rs, c, "A", NULL, &fo) == DJC_EINVAL && !rs);
	CHECK_STR(djc_error_last(c), "fetch options version 99 is not 1 (use DJC_FETCH_OPTIONS_INIT)");
	djc_populate_options po = DJC_POPULATE_OPTIONS_INIT;
	po.version = 0;
	djc_populate_result *pr = NULL;
	CHECK(djc_populate(&pr, c, "B", &po) == DJC_EINVAL);
	CHECK_STR(djc_error_last(c), "populate options version 0 is not 1 to 3 (use DJC_POPULATE_OPTIONS_INIT)");
	djc_populate_result_free(pr);
	io.version = 3;
	CHECK(djc_insert_ext(&n, c, "A", NULL, 0, &io) == DJC_EINVAL);
	CHECK_STR(djc_error_last(c), "insert options version 3 is not 1 to 2 (use DJC_INSERT_OPTIONS_INIT)");
	djc_delete_options bad = {.version = 2};
	CHECK(djc_delete_ext(NULL, c, "A", NULL, &bad) == DJC_EINVAL);
	CHECK_STR(djc_error_last(c), "delete options version 2 is not 1 (use DJC_DELETE_OPTIONS_INIT)");

	djc_close(c);
	return T_DONE("test_conventions");
}
