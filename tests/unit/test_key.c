/* test_key.c - a key as a restriction (DataJoint's `Table & key`):
 * djc_key_restriction and djc_make_fetch_key, with a computed table whose
 * key comes from two parents, so each upstream table shares only part of
 * the key. Runs on the backend named by $DJC_TEST_URL / $DJC_TEST_SCHEMA
 * (default: a fresh SQLite file). */
#include "t.h"
#include "djc.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char PIPE[] =
	"Session (manual)\n"
	"    session_id : int32\n"
	"    ---\n"
	"    rate : float64\n"
	"\n"
	"Param (lookup)\n"
	"    param_id : int16\n"
	"    ---\n"
	"    gain : float64\n"
	"\n"
	"Fit (computed)\n"
	"    -> Session\n"
	"    -> Param\n"
	"    ---\n"
	"    y : float64\n";

static int get_float(const djc_row *r, const char *name, double *out)
{
	long i = djc_row_find(r, name);
	return i < 0 ? DJC_EINVAL : djc_row_float(out, r, (size_t)i);
}

/* y = rate * gain, each read with the whole key */
static int mk(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	djc_rowset *s = NULL, *p = NULL;
	double rate = 0, gain = 0;
	int rc = djc_make_fetch_key(&s, ctx, "Session", key);
	if (!rc) rc = djc_make_fetch_key(&p, ctx, "Param", key);
	if (!rc && (djc_rowset_count(s) != 1 || djc_rowset_count(p) != 1)) rc = DJC_ENOTFOUND;
	if (!rc) rc = get_float(djc_rowset_row(s, 0), "rate", &rate) || get_float(djc_rowset_row(p, 0), "gain", &gain);
	djc_rowset_free(s);
	djc_rowset_free(p);
	if (rc) {
		djc_make_error(ctx, "upstream rows not found");
		return 1;
	}
	djc_row *r = djc_row_new();
	djc_row_set_float(r, "y", rate * gain);
	rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

/* djc_key_restriction: a key cut to a table's attributes */
static void test_restriction(djc_conn *c)
{
	/* the attributes a table lacks are dropped; order is kept */
	char *w = NULL;
	CHECK(djc_key_restriction(&w, c, "Session", "{\"param_id\": 2, \"session_id\": 3}") == DJC_OK);
	CHECK_STR(w, "{\"session_id\":3}");
	free(w);
	w = NULL;
	CHECK(djc_key_restriction(&w, c, "Fit", "{\"session_id\": 1, \"param_id\": 2, \"other\": \"x\"}") == DJC_OK);
	CHECK_STR(w, "{\"session_id\":1,\"param_id\":2}");
	free(w);
	/* non-key attributes count too (DataJoint matches on shared names) */
	w = NULL;
	CHECK(djc_key_restriction(&w, c, "Session", "{\"rate\": 20}") == DJC_OK);
	CHECK_STR(w, "{\"rate\":20}");
	djc_rowset *rs = NULL;
	CHECK(djc_fetch(&rs, c, "Session", w) == DJC_OK && djc_rowset_count(rs) == 1);
	djc_rowset_free(rs);
	free(w);
	/* nothing shared, not an object, not JSON, unknown table: errors */
	w = (char *)"unchanged";
	CHECK(djc_key_restriction(&w, c, "Session", "{\"param_id\": 1}") == DJC_EINVAL);
	CHECK(w == NULL);
	CHECK_STR(djc_error_last(c), "key shares no attribute with Session");
	CHECK(djc_key_restriction(&w, c, "Session", "[1]") == DJC_EINVAL && w == NULL);
	CHECK(djc_key_restriction(&w, c, "Session", "{") == DJC_EINVAL && w == NULL);
	CHECK(djc_key_restriction(&w, c, "NoSuch", "{\"a\": 1}") == DJC_ENOTFOUND && w == NULL);
	/* values are still checked against the heading */
	CHECK(djc_key_restriction(&w, c, "Session", "{\"session_id\": \"one\"}") == DJC_OK);
	rs = NULL;
	CHECK(djc_fetch(&rs, c, "Session", w) == DJC_EINVAL);
	djc_rowset_free(rs);
	free(w);
}

/* a make reading both parents with its whole key */
static void test_populate_both(djc_conn *c)
{
	djc_populate_options o;
	djc_populate_options_init(&o);
	o.reserve_jobs = 1;
	o.make = mk;
	djc_populate_result *res = NULL;
	int rc = djc_populate(&res, c, "Fit", &o);
	CHECK_MSG(rc == DJC_OK && res && res->success_count == 6, "rc %d: %s", rc, djc_error_last(c));
	djc_populate_result_free(res);
	djc_rowset *rs = NULL;
	CHECK(djc_fetch(&rs, c, "Fit", "{\"session_id\": 3, \"param_id\": 2}") == DJC_OK && djc_rowset_count(rs) == 1);
	double y = 0;
	if (rs && djc_rowset_count(rs) == 1) get_float(djc_rowset_row(rs, 0), "y", &y);
	CHECK(y == 60);
	djc_rowset_free(rs);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_key", "restriction populate_both");
	char path[64];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-key-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_key";
	if (!strncmp(url, "sqlite:", 7)) schema = NULL;
	djc_conn *c = NULL;
	if (djc_open(&c, url, schema)) {
		fprintf(stderr, "cannot open %s: %s\n", url, djc_error_last(c));
		return 1;
	}
	CHECK(djc_declare(NULL, c, PIPE, "key.djc") == DJC_OK);
	for (int i = 1; i <= 3; i++) {
		djc_row *r = djc_row_new();
		djc_row_set_int(r, "session_id", i);
		djc_row_set_float(r, "rate", 10 * i);
		CHECK(djc_insert_ext(NULL, c, "Session", (const djc_row *const *)&r, 1, NULL) == DJC_OK);
		djc_row_free(r);
	}
	for (int i = 1; i <= 2; i++) {
		djc_row *r = djc_row_new();
		djc_row_set_int(r, "param_id", i);
		djc_row_set_float(r, "gain", i == 1 ? 0.5 : 2);
		CHECK(djc_insert_ext(NULL, c, "Param", (const djc_row *const *)&r, 1, NULL) == DJC_OK);
		djc_row_free(r);
	}

	if (t_want("restriction")) test_restriction(c);
	if (t_want("populate_both")) test_populate_both(c);
	djc_close(c);
	return T_DONE("test_key");
}
