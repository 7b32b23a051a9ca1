/* test_api_input.c - what the public C API takes as input and gives back
 * as text: restrictions (blank ones, duplicate keys, values as a
 * DataJoint user writes them), JSON text of rows, messages that name the C
 * option. Runs on the backend named by $DJC_TEST_URL / $DJC_TEST_SCHEMA
 * (default: a fresh SQLite file). */
#include "t.h"
#include "tdb.h"
#include "djc.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char PIPE[] =
	"In (manual)\n"
	"    id : int32\n"
	"    ---\n"
	"    s : varchar(20)\n"
	"    d : datetime\n"
	"    e : enum('Alpha', 'beta')\n"
	"    meta = null : json\n"
	"    w = null : float64\n";

static void test_declare(djc_conn *c)
{
	char *rep = NULL;
	int rc = djc_declare(&rep, c, PIPE, "test_api_input");
	CHECK_MSG(rc == DJC_OK, "declare: %s", djc_error_last(c));
	free(rep);
	CHECK(t_insert_json(c, "In", "{\"id\": 1, \"s\": \"one\", \"d\": \"2024-01-02 10:30:00\", \"e\": \"Alpha\", \"w\": 2.5}") == 0);
	CHECK(t_insert_json(c, "In", "{\"id\": 2, \"s\": \"two\", \"d\": \"2024-01-02 10:31:00\", \"e\": \"beta\", \"w\": -0.125}") == 0);
}

/* fetch's status for where (the rows in *n) */
static int fetch_n(djc_conn *c, const char *where, long *n)
{
	djc_rowset *rs = NULL;
	int rc = djc_fetch(&rs, c, "In", where);
	*n = rc ? -1 : (long)djc_rowset_count(rs);
	djc_rowset_free(rs);
	return rc;
}

/* "" and "   " are the same: no restriction at all would be NULL; an
 * empty or blank text is refused, as --where "" is (before, "" was every
 * row and "   " invalid JSON). */
static void test_blank_where(djc_conn *c)
{
	long n;
	CHECK(fetch_n(c, NULL, &n) == DJC_OK && n == 2);
	const char *blank[] = {"", "   ", " \t\n"};
	for (size_t i = 0; i < sizeof blank / sizeof *blank; i++) {
		int rc = fetch_n(c, blank[i], &n);
		CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), "give NULL for every row"), "fetch '%s': %d %s",
			  blank[i], rc, djc_error_last(c));
		size_t del = 99;
		rc = djc_delete(&del, c, "In", blank[i]);
		CHECK_MSG(rc == DJC_EINVAL && del == 0, "delete '%s': %d %zu %s", blank[i], rc, del, djc_error_last(c));
	}
	CHECK(fetch_n(c, NULL, &n) == DJC_OK && n == 2);
}

/* djc_row_to_json (and _typed) write valid JSON whatever bytes a text
 * holds: a byte that is not UTF-8 becomes U+FFFD, as in the command line's
 * JSON; valid UTF-8 (2, 3 and 4 bytes) is kept as it is. */
static void test_row_json_utf8(djc_conn *c)
{
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "id", 9);
	djc_row_set_text(r, "s", "a\xff\xfe" "b\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xe2\x82" "c\xc3");
	const char *want = "a\xef\xbf\xbd\xef\xbf\xbd" "b\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbd\xef\xbf\xbd"
			   "c\xef\xbf\xbd";
	for (int typed = 0; typed < 2; typed++) {
		char *j = typed ? djc_row_to_json_typed(c, "In", r) : djc_row_to_json(r);
		djc_row *back = NULL;
		char *msg = NULL;
		int rc = djc_row_from_json(&back, j, &msg);
		const char *s = NULL;
		CHECK_MSG(rc == DJC_OK && djc_row_get_text(&s, back, "s") == DJC_OK && !strcmp(s, want),
			  "typed %d: %s reads back: %d %s", typed, j, rc, msg ? msg : "");
		free(msg);
		free(j);
		djc_row_free(back);
	}
	djc_row_free(r);
}

/* JSON text with the same key twice is refused everywhere the C API takes
 * JSON, naming the key, as the command line refuses it: a json
 * attribute's text (before: stored with the last value), a key for
 * djc_key_restriction (before: a message without the key), a restriction,
 * a row. */
static void test_dup_keys(djc_conn *c)
{
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "id", 7);
	djc_row_set_text(r, "s", "seven");
	djc_row_set_text(r, "d", "2024-01-02 10:30:00");
	djc_row_set_text(r, "e", "beta");
	djc_row_set_text(r, "meta", "{\"a\": 1, \"b\": {\"a\": 1, \"a\": 2}}");
	const djc_row *rows[1] = {r};
	size_t n = 99;
	int rc = djc_insert_ext(&n, c, "In", rows, 1, NULL);
	CHECK_MSG(rc == DJC_EINVAL && n == 0 && strstr(djc_error_last(c), "duplicate object key near '\"a\"'") &&
			  strstr(djc_error_last(c), "'meta'"),
		  "insert: %d %s", rc, djc_error_last(c));
	CHECK(t_count(c, "In", "{\"id\": 7}") == 0);
	djc_row_set_text(r, "meta", "{\"a\": 1, \"b\": {\"a\": 2}}");
	CHECK_MSG(djc_insert_ext(&n, c, "In", rows, 1, NULL) == DJC_OK && n == 1, "%s", djc_error_last(c));
	djc_row_free(r);
	CHECK(djc_delete(&n, c, "In", "{\"id\": 7}") == DJC_OK && n == 1);   /* the rows of declare again */
	char *w = NULL;
	rc = djc_key_restriction(&w, c, "In", "{\"id\": 1, \"id\": 2}");
	CHECK_MSG(rc == DJC_EINVAL && !w && strstr(djc_error_last(c), "duplicate object key near '\"id\"'"), "key: %d %s",
		  rc, djc_error_last(c));
	long k;
	rc = fetch_n(c, "[{\"id\": 1}, {\"s\": \"x\", \"s\": \"y\"}]", &k);
	CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), "duplicate object key near '\"s\"'"), "fetch: %d %s", rc,
		  djc_error_last(c));
	djc_row *x = NULL;
	char *msg = NULL;
	rc = djc_row_from_json(&x, "{\"id\": 1, \"meta\": {\"q\": 1, \"q\": 1}}", &msg);
	CHECK_MSG(rc == DJC_EINVAL && !x && msg && strstr(msg, "'\"q\"'"), "row: %d %s", rc, msg ? msg : "");
	free(msg);
}

/* A duplicate key through the C API names the C option (skip_duplicates of
 * djc_insert_options), not the command line's --skip-duplicates; with it
 * set the row is skipped. */
static void test_dup_message(djc_conn *c)
{
	djc_row *r = NULL;
	char *msg = NULL;
	CHECK(djc_row_from_json(&r, "{\"id\": 1, \"s\": \"x\", \"d\": \"2024-01-02 10:30:00\", \"e\": \"beta\"}", &msg) == 0);
	const djc_row *rows[1] = {r};
	size_t n = 99;
	int rc = djc_insert_ext(&n, c, "In", rows, 1, NULL);
	const char *m = djc_error_last(c);
	CHECK_MSG(rc == DJC_EDUPLICATE && n == 0 && strstr(m, "skip_duplicates in djc_insert_options") &&
			  !strstr(m, "--skip-duplicates"),
		  "insert: %d %s", rc, m);
	static const char line[] = "{\"id\": 2, \"s\": \"x\", \"d\": \"2024-01-02 10:30:00\", \"e\": \"beta\"}\n";
	FILE *f = fmemopen((void *)line, strlen(line), "r");
	rc = djc_insert_jsonl_ext(&n, c, "In", f, "rows.jsonl", NULL);
	fclose(f);
	m = djc_error_last(c);
	CHECK_MSG(rc == DJC_EDUPLICATE && strstr(m, "rows.jsonl:1:") && strstr(m, "skip_duplicates in djc_insert_options") &&
			  !strstr(m, "--skip-duplicates"),
		  "jsonl: %d %s", rc, m);
	djc_insert_options io = DJC_INSERT_OPTIONS_INIT;
	io.skip_duplicates = 1;
	CHECK_MSG(djc_insert_ext(&n, c, "In", rows, 1, &io) == DJC_OK && n == 0, "%s", djc_error_last(c));
	djc_row_free(r);
}

/* djc_open: an empty URL is an error, not the default database (NULL is
 * the default); a SQLite URL with a parameter is refused, and no file is
 * made (before: djc.db opened, a file named "f.db?x=1" created). */
static void test_open_urls(void)
{
	char dir[] = "/tmp/djc-api-input-XXXXXX", cwd[4096], url[128], file[128];
	if (!mkdtemp(dir) || !getcwd(cwd, sizeof cwd) || chdir(dir)) {
		CHECK(!"a directory to work in");
		return;
	}
	djc_conn *o = NULL;
	int rc = djc_open(&o, "", NULL);
	CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(o), "database URL is empty"), "open '': %d %s", rc,
		  djc_error_last(o));
	djc_close(o);
	CHECK(access("djc.db", F_OK) != 0);
	snprintf(url, sizeof url, "sqlite:%s/f.db?mode=ro", dir);
	o = NULL;
	rc = djc_open(&o, url, NULL);
	CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(o), "a SQLite URL takes no parameters (got '?mode=ro'"),
		  "open %s: %d %s", url, rc, djc_error_last(o));
	djc_close(o);
	const char *made[] = {"f.db?mode=ro", "f.db"};
	for (int i = 0; i < 2; i++) {
		snprintf(file, sizeof file, "%s/%s", dir, made[i]);
		CHECK_MSG(access(file, F_OK) != 0, "%s made", file);
		unlink(file);
	}
	unlink("djc.db");
	CHECK(chdir(cwd) == 0);
	rmdir(dir);
}

/* Values in a restriction as a DataJoint user writes them and the servers
 * take them: a datetime without seconds, an integer as a string, an enum
 * label in another case; the same rows on every backend. An insert keeps
 * JSON's types and the labels as declared, but takes the datetime. */
static void test_query_values(djc_conn *c)
{
	static const struct { const char *where; long n; } ok[] = {
		{"{\"d\": \"2024-01-02 10:30\"}", 1},
		{"{\"d\": \"2024-01-02T10:31\"}", 1},
		{"{\"d\": {\">\": \"2024-01-02 10:30\"}}", 1},
		{"{\"d\": [\"2024-01-02 10:30\", \"2024-01-02 10:31\"]}", 2},
		{"{\"id\": \"1\"}", 1},
		{"{\"id\": \"+2\"}", 1},
		{"{\"id\": [\"1\", 2, \"-5\"]}", 2},
		{"{\"id\": {\">=\": \"2\"}}", 1},
		{"{\"e\": \"alpha\"}", 1},
		{"{\"e\": \"BETA\"}", 1},
		{"{\"e\": [\"ALPHA\", \"beta\"]}", 2},
		{"d = \"2024-01-02 10:30\" and id = \"1\" and e = \"ALPHA\"", 1},
		{"id in (\"1\", \"2\")", 2},
		{"{\"w\": \"2.5\"}", 1},
		{"{\"w\": [\"2.50\", \"-1.25e-1\"]}", 2},
		{"{\"w\": {\"<\": \"0\"}}", 1},
		{"w = \"25e-1\"", 1},
	};
	for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
		long n;
		int rc = fetch_n(c, ok[i].where, &n);
		CHECK_MSG(rc == DJC_OK && n == ok[i].n, "%s: %d, %ld rows (want %ld) %s", ok[i].where, rc, n, ok[i].n,
			  rc ? djc_error_last(c) : "");
	}
	static const struct { const char *where, *msg; } bad[] = {
		{"{\"id\": \"one\"}", "expects an integer, got a string"},
		{"{\"id\": \"1.5\"}", "expects an integer, got a string"},
		{"{\"w\": \"heavy\"}", "expects a number, got a string"},
		{"{\"w\": \"2.5kg\"}", "expects a number, got a string"},
		{"{\"w\": \".5\"}", "expects a number, got a string"},
		{"{\"w\": \"1e400\"}", "out of a float64's range"},
		{"{\"id\": \"99999999999\"}", "out of range"},
		{"{\"e\": \"gamma\"}", "'gamma' is not one of the enum's labels"},
		{"{\"d\": \"2024-01-02 10\"}", "is not a datetime YYYY-MM-DD HH:MM[:SS[.fff]]"},
		{"{\"d\": \"2024-01-02 10:3x\"}", "is not a datetime"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		long n;
		int rc = fetch_n(c, bad[i].where, &n);
		CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), bad[i].msg), "%s: %d %s", bad[i].where, rc,
			  djc_error_last(c));
	}
	CHECK(t_insert_json(c, "In", "{\"id\": 3, \"s\": \"x\", \"d\": \"2024-01-02 11:00\", \"e\": \"beta\"}") == 0);
	djc_rowset *rs = NULL;
	const char *d = NULL;
	CHECK(djc_fetch(&rs, c, "In", "{\"id\": 3}") == DJC_OK && djc_rowset_count(rs) == 1 &&
	      djc_row_get_text(&d, djc_rowset_row(rs, 0), "d") == DJC_OK && !strcmp(d, "2024-01-02 11:00:00"));
	djc_rowset_free(rs);
	size_t del = 0;
	CHECK(djc_delete(&del, c, "In", "{\"id\": 3}") == DJC_OK && del == 1);
	static const char *refused[] = {
		"{\"id\": \"4\", \"s\": \"x\", \"d\": \"2024-01-02 11:00\", \"e\": \"beta\"}",
		"{\"id\": 4, \"s\": \"x\", \"d\": \"2024-01-02 11:00\", \"e\": \"BETA\"}",
		"{\"id\": 4, \"s\": \"x\", \"d\": \"2024-01-02 11:00\", \"e\": \"beta\", \"w\": \"2.5\"}",
	};
	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		djc_row *r = NULL;
		char *msg = NULL;
		CHECK(djc_row_from_json(&r, refused[i], &msg) == DJC_OK);
		const djc_row *rows[1] = {r};
		CHECK_MSG(djc_insert_ext(NULL, c, "In", rows, 1, NULL) == DJC_EINVAL, "insert %s", refused[i]);
		djc_row_free(r);
	}
	CHECK(t_count(c, "In", "{\"id\": 4}") == 0);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_api_input", "declare blank_where:declare row_json_utf8:declare dup_keys:declare dup_message:declare open_urls query_values:declare");
	char path[64];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-api-input-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_api_input";
	if (!strncmp(url, "sqlite:", 7)) schema = NULL;
	djc_conn *c = t_open(url, schema);
	if (t_want("declare")) test_declare(c);
	if (t_want("blank_where")) test_blank_where(c);
	if (t_want("row_json_utf8")) test_row_json_utf8(c);
	if (t_want("dup_keys")) test_dup_keys(c);
	if (t_want("dup_message")) test_dup_message(c);
	if (t_want("open_urls")) test_open_urls();
	if (t_want("query_values")) test_query_values(c);
	djc_close(c);
	if (!getenv("DJC_TEST_URL")) t_unlink_sqlite(path + 7);
	return T_DONE("test_api_input");
}
