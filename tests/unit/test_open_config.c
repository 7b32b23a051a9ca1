/* test_open_config.c - djc_open_ext (no_create opens nothing it would have
 * to create) and the public configuration API (djc_config_*). Runs on the
 * backend named by $DJC_TEST_URL / $DJC_TEST_SCHEMA (default: a SQLite file
 * in /tmp). */
#include "t.h"
#include "djc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int count_cb(const djc_setting *s, void *payload)
{
	int *n = payload;
	(*n)++;
	if (!s->key || !s->value || !s->source || !s->env || !s->kind) return -100;
	return 0;
}

static int stop_cb(const djc_setting *s, void *payload)
{
	(void)s;
	int *n = payload;
	return ++*n == 3 ? 42 : 0;
}

struct find { const char *key; char value[256], source[64]; };

static int find_cb(const djc_setting *s, void *payload)
{
	struct find *f = payload;
	if (strcmp(s->key, f->key)) return 0;
	snprintf(f->value, sizeof f->value, "%s", s->value);
	snprintf(f->source, sizeof f->source, "%s", s->source);
	return 1;
}

/* djc_open_ext */
static void test_open_ext(const char *url, const char *schema)
{
	djc_open_options o;
	memset(&o, 0x55, sizeof o);
	djc_open_options_init(&o);
	CHECK(o.version == DJC_OPEN_OPTIONS_VERSION && o.no_create == 0);
	o.no_create = 1;
	djc_conn *c = NULL;
	int rc = djc_open_ext(&c, url, schema, &o);
	CHECK_MSG(rc == DJC_ENOTFOUND, "no_create on a missing schema: %d %s", rc, djc_error_last(c));
	CHECK_MSG(strstr(djc_error_last(c), schema) && strstr(djc_error_last(c), "djc declare creates it"), "%s",
		  djc_error_last(c));
	CHECK(strchr(djc_error_last(c), '\n') == NULL);
	djc_close(c);
	c = NULL;
	rc = djc_open_ext(&c, url, schema, &o);
	CHECK_MSG(rc == DJC_ENOTFOUND, "...and it still does not exist: %d %s", rc, djc_error_last(c));
	djc_close(c);

	djc_open_options bad = DJC_OPEN_OPTIONS_INIT;
	bad.version = 99;
	c = NULL;
	rc = djc_open_ext(&c, url, schema, &bad);
	CHECK(rc == DJC_EINVAL && strstr(djc_error_last(c), "DJC_OPEN_OPTIONS_INIT"));
	djc_close(c);
	CHECK(djc_open_ext(NULL, url, schema, NULL) == DJC_EINVAL);
}

/* djc_open (and opts NULL) creates it; then no_create opens it */
static void test_open_creates(const char *url, const char *schema)
{
	djc_open_options o = DJC_OPEN_OPTIONS_INIT;
	o.no_create = 1;
	djc_conn *c = NULL;
	int rc = djc_open_ext(&c, url, schema, NULL);
	CHECK_MSG(rc == DJC_OK, "opts NULL creates: %s", djc_error_last(c));
	if (!rc) CHECK_MSG(djc_declare(NULL, c, "T (manual)\n    id : int32\n    ---\n", "t.djc") == DJC_OK, "%s", djc_error_last(c));
	djc_close(c);
	c = NULL;
	rc = djc_open_ext(&c, url, schema, &o);
	CHECK_MSG(rc == DJC_OK, "no_create on an existing schema: %s", djc_error_last(c));
	char *tables = NULL;
	if (!rc) CHECK(djc_tables(&tables, c) == DJC_OK && tables && !strcmp(tables, "T\n"));
	free(tables);
	djc_close(c);
}

/* djc_config_* */
static void test_config_set(const char *url, const char *schema)
{
	char *msg = NULL;
	CHECK(djc_config_load(&msg) == DJC_OK && msg == NULL);
	const char *v = NULL;
	CHECK(djc_config_get(&v, "jobs.lease_timeout") == DJC_OK && v && *v);
	CHECK(djc_config_get(&v, "jobs.nope") == DJC_ENOTFOUND && v == NULL);
	CHECK(djc_config_get(NULL, "jobs.lease_timeout") == DJC_EINVAL);
	int b = -1;
	CHECK(djc_config_get_bool(&b, "jobs.auto_refresh") == DJC_OK && (b == 0 || b == 1));
	CHECK(djc_config_get_bool(&b, "jobs.lease_timeout") == DJC_EINVAL);

	CHECK(djc_config_set("jobs.lease_timeout", "7.5", "test", &msg) == DJC_OK && msg == NULL);
	CHECK(djc_config_get(&v, "jobs.lease_timeout") == DJC_OK && !strcmp(v, "7.5"));
	struct find f = {"jobs.lease_timeout", "", ""};
	CHECK(djc_config_foreach(find_cb, &f) == 1 && !strcmp(f.value, "7.5") && !strcmp(f.source, "test"));
	CHECK(djc_config_set("jobs.keep_completed", "yes", "test", NULL) == DJC_OK);
	CHECK(djc_config_get_bool(&b, "jobs.keep_completed") == DJC_OK && b == 1);
}

/* a value the setting does not take changes nothing */
static void test_bad_value(const char *url, const char *schema)
{
	char *msg = NULL;
	const char *v = NULL;
	int rc = djc_config_set("jobs.lease_timeout", "0", "test", &msg);
	CHECK(rc == DJC_EINVAL);
	CHECK_STR(msg, "setting 'jobs.lease_timeout' must be a number of seconds greater than 0 and at most 1e9, got '0'");
	free(msg);
	CHECK(djc_config_get(&v, "jobs.lease_timeout") == DJC_OK && !strcmp(v, "7.5"));
	rc = djc_config_set("jobs.version_method", "svn", "test", &msg);
	CHECK(rc == DJC_EINVAL && msg && strstr(msg, "none or git"));
	free(msg);
	rc = djc_config_set("display.interval", "-1", "test", &msg);
	CHECK(rc == DJC_EINVAL && msg && strstr(msg, "from 0 to 86400"));
	free(msg);
	rc = djc_config_set("jobs.nope", "1", "test", &msg);
	CHECK(rc == DJC_ENOTFOUND && msg && strstr(msg, "unknown setting 'jobs.nope'"));
	free(msg);
	CHECK(djc_config_set(NULL, "1", "test", NULL) == DJC_EINVAL);
}

/* every setting once, in order; a callback's non-zero return stops the walk */
static void test_walk(const char *url, const char *schema)
{
	int n = 0;
	CHECK(djc_config_foreach(count_cb, &n) == DJC_OK && n >= 11);
	int m = 0;
	CHECK(djc_config_foreach(stop_cb, &m) == 42 && m == 3);
	CHECK(djc_config_foreach(NULL, NULL) == DJC_EINVAL);
}

/* passwords: the walk shows "***", djc_config_get the value */
static void test_passwords(const char *url, const char *schema)
{
	CHECK(djc_config_set("database.url", "postgresql://u:s3cret@h:5/db", "test", NULL) == DJC_OK);
	CHECK(djc_config_set("database.password", "hunter2", "test", NULL) == DJC_OK);
	const char *v = NULL;
	struct find fu = {"database.url", "", ""}, fp = {"database.password", "", ""};
	djc_config_foreach(find_cb, &fu);
	djc_config_foreach(find_cb, &fp);
	CHECK_STR(fu.value, "postgresql://u:***@h:5/db");
	CHECK_STR(fp.value, "***");
	CHECK(djc_config_get(&v, "database.url") == DJC_OK && !strcmp(v, "postgresql://u:s3cret@h:5/db"));
	CHECK(djc_config_get(&v, "database.password") == DJC_OK && !strcmp(v, "hunter2"));
	CHECK(djc_config_warning() == NULL);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_open_config", "open_ext open_creates:open_ext config_set bad_value:config_set walk passwords");
	char dflt[64];
	snprintf(dflt, sizeof dflt, "sqlite:/tmp/djc-open-config-%d.db", (int)getpid());
	const char *url = getenv("DJC_TEST_URL");
	if (!url || !*url) url = dflt;
	const char *base = getenv("DJC_TEST_SCHEMA");
	char schema[96];
	snprintf(schema, sizeof schema, "%s_nc%d", base && *base ? base : "djct", (int)getpid() % 10000);
	if (t_want("open_ext")) test_open_ext(url, schema);
	if (t_want("open_creates")) test_open_creates(url, schema);
	if (t_want("config_set")) test_config_set(url, schema);
	if (t_want("bad_value")) test_bad_value(url, schema);
	if (t_want("walk")) test_walk(url, schema);
	if (t_want("passwords")) test_passwords(url, schema);
	if (!strncmp(url, "sqlite:/tmp/djc-open-config-", 28)) {
		char path[128];
		snprintf(path, sizeof path, "/tmp/djc-open-config-%d.%s.db", (int)getpid(), schema);
		t_unlink_sqlite(path);
	}
	return T_DONE("test_open_config");
}
