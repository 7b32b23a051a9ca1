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
	"    meta = null : json\n";

static void test_declare(djc_conn *c)
{
	char *rep = NULL;
	int rc = djc_declare(&rep, c, PIPE, "test_api_input");
	CHECK_MSG(rc == DJC_OK, "declare: %s", djc_error_last(c));
	free(rep);
	CHECK(t_insert_json(c, "In", "{\"id\": 1, \"s\": \"one\", \"d\": \"2024-01-02 10:30:00\", \"e\": \"Alpha\"}") == 0);
	CHECK(t_insert_json(c, "In", "{\"id\": 2, \"s\": \"two\", \"d\": \"2024-01-02 10:31:00\", \"e\": \"beta\"}") == 0);
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

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_api_input", "declare blank_where:declare");
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
	djc_close(c);
	if (!getenv("DJC_TEST_URL")) t_unlink_sqlite(path + 7);
	return T_DONE("test_api_input");
}
