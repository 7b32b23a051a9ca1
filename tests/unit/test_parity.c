/* test_parity.c - DataJoint 2.x parity through the C API (docs/parity.md):
 * djc_insert with allow_direct_insert into computed and part tables and
 * the jobs table after it (refresh, reserve with keep_completed), options
 * version 1 still accepted; djc_make_fetch / djc_make_fetch_key limited to
 * the target's ancestors and their part tables, and checked at commit. Runs on the backend named by $DJC_TEST_URL /
 * $DJC_TEST_SCHEMA (default: a fresh SQLite file). */
#include "t.h"
#include "tdb.h"
#include "djc.h"
#include "table/table.h"   /* reads_grouped: the target rows' xmin (PostgreSQL) */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char PIPE[] =
	"Src (manual)\n"
	"    id : int32\n"
	"    ---\n"
	"    x : float64\n"
	"\n"
	"Side (manual)\n"
	"    id : int32\n"
	"    ---\n"
	"    s : int32\n"
	"\n"
	"Mid (computed)\n"
	"    -> Src\n"
	"    ---\n"
	"    y : float64\n"
	"\n"
	"Mid.Part (part)\n"
	"    p : int32\n"
	"    ---\n"
	"    z : int64\n"
	"\n"
	"Top (computed)\n"
	"    -> Mid\n"
	"    ---\n"
	"    w : float64\n";

static double get_float(const djc_row *r, const char *name)
{
	double v = -1;
	long i = djc_row_find(r, name);
	if (i >= 0) djc_row_float(&v, r, (size_t)i);
	return v;
}

static int mid_calls;

/* Mid: y = Src.x + 1 */
static int mk_mid(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	mid_calls++;
	djc_rowset *up = NULL;
	if (djc_make_fetch_key(&up, ctx, "Src", key) || djc_rowset_count(up) != 1) { djc_rowset_free(up); return 1; }
	djc_row *r = djc_row_new();
	djc_row_set_float(r, "y", get_float(djc_rowset_row(up, 0), "x") + 1);
	djc_rowset_free(up);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

/* what Top's make saw, per read */
static int rc_grand, rc_side, rc_self, rc_key_side;

/* Top reads its grandparent (allowed), then Side, itself and Side by key
 * (refused), and records the outcomes. */
static int mk_top(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	djc_rowset *rs = NULL;
	rc_grand = djc_make_fetch(&rs, ctx, "Src", NULL);
	djc_rowset_free(rs);
	rs = NULL;
	rc_side = djc_make_fetch(&rs, ctx, "Side", NULL);
	CHECK(rs == NULL);
	djc_rowset_free(rs);
	rs = NULL;
	rc_self = djc_make_fetch(&rs, ctx, "Top", NULL);
	djc_rowset_free(rs);
	rs = NULL;
	rc_key_side = djc_make_fetch_key(&rs, ctx, "Side", key);
	djc_rowset_free(rs);
	rs = NULL;
	if (rc_side) {
		/* the refusal is make's error message unless make sets another */
		return 3;
	}
	djc_row *r = djc_row_new();
	djc_row_set_float(r, "w", 1);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

/* 6. upstream checked at commit: Down's make reads Up by key; for the key
 * in *payload it has a second connection replace that Up row (delete, then
 * insert it with another x, or the same x when replace_same) before it
 * returns, as another user would while the make computes. */
static djc_conn *other;

/* make's row: y. */
static int insert_y(djc_make_ctx *ctx, double y)
{
	djc_row *r = djc_row_new();
	djc_row_set_float(r, "y", y);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

/* The other user replaces the row of table matching where (one) by r. */
static int replace_by_other(const char *name, const char *where, djc_row *r)
{
	size_t n = 0;
	return djc_delete(&n, other, name, where) == DJC_OK && n == 1 &&
	       djc_insert_ext(&n, other, name, (const djc_row *const *)&r, 1, NULL) == DJC_OK && n == 1;
}
static int replace_same;
static int mk_down(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	djc_rowset *up = NULL;
	if (djc_make_fetch_key(&up, ctx, "Up", key) || djc_rowset_count(up) != 1) { djc_rowset_free(up); return 1; }
	double x = get_float(djc_rowset_row(up, 0), "x");
	djc_rowset_free(up);
	int64_t id = -1;
	djc_row_int(&id, key, (size_t)djc_row_find(key, "id"));
	if (id == *(int64_t *)payload) {
		char where[64];
		snprintf(where, sizeof where, "{\"id\": %lld}", (long long)id);
		djc_row *r = djc_row_new();
		djc_row_set_int(r, "id", id);
		djc_row_set_float(r, "x", replace_same ? x : x + 0.5);
		int ok = replace_by_other("Up", where, r);
		CHECK_MSG(ok, "replacing Up %lld: %s", (long long)id, djc_error_last(other));
		djc_row_free(r);
	}
	return insert_y(ctx, 2 * x);
}

/* 2. allow_direct_insert */
static void test_allow_direct_insert(djc_conn *c, djc_row **src, const char *url, const char *schema)
{
	size_t n = 0;
	int rc;
	djc_row *m2 = djc_row_new();
	djc_row_set_int(m2, "id", 2);
	djc_row_set_float(m2, "y", -2);
	djc_insert_options io = DJC_INSERT_OPTIONS_INIT;
	CHECK(io.version == 2 && io.allow_direct_insert == 0);
	CHECK(djc_insert_ext(&n, c, "Mid", (const djc_row *const *)&m2, 1, &io) == DJC_EINVAL && n == 0);
	CHECK(strstr(djc_error_last(c), "table Mid is computed") != NULL);
	/* version 1 of the options (no allow_direct_insert) is still read */
	djc_insert_options v1 = {.version = 1, .skip_duplicates = 0, .allow_direct_insert = 1};
	CHECK(djc_insert_ext(&n, c, "Mid", (const djc_row *const *)&m2, 1, &v1) == DJC_EINVAL && n == 0);
	djc_insert_options v9 = {.version = 9};
	CHECK(djc_insert_ext(&n, c, "Src", (const djc_row *const *)&src[0], 1, &v9) == DJC_EINVAL);
	/* a pending job for every key, then key 2 made by hand */
	djc_refresh_result rr;
	CHECK(djc_jobs_refresh(&rr, c, "Mid", NULL) == DJC_OK && rr.added == 4);
	io.allow_direct_insert = 1;
	rc = djc_insert_ext(&n, c, "Mid", (const djc_row *const *)&m2, 1, &io);
	CHECK_MSG(rc == DJC_OK && n == 1, "%s", djc_error_last(c));
	djc_row *pp = djc_row_new();
	djc_row_set_int(pp, "id", 2);
	djc_row_set_int(pp, "p", 1);
	djc_row_set_int(pp, "z", 21);
	rc = djc_insert_ext(&n, c, "Mid.Part", (const djc_row *const *)&pp, 1, &io);
	CHECK_MSG(rc == DJC_OK && n == 1, "%s", djc_error_last(c));
	djc_row_set_int(pp, "id", 3);   /* no master row for 3 */
	CHECK(djc_insert_ext(&n, c, "Mid.Part", (const djc_row *const *)&pp, 1, &io) == DJC_EFOREIGN && n == 0);
	long rem = -1, tot = -1;
	CHECK(djc_progress(&rem, &tot, c, "Mid", NULL) == DJC_OK && rem == 3 && tot == 4);
	CHECK(djc_jobs_refresh(&rr, c, "Mid", NULL) == DJC_OK && rr.added == 0);
	/* with keep_completed, reserving key 2 closes its job as success */
	CHECK(djc_config_set("jobs.keep_completed", "true", "test", NULL) == DJC_OK);
	djc_job *j = NULL;
	CHECK(djc_jobs_reserve(&j, c, "Mid", "{\"id\": 2}", -1) == DJC_ENOTFOUND && !j);
	djc_rowset *jobs = NULL;
	CHECK(djc_jobs_list(&jobs, c, "Mid", "success") == DJC_OK && djc_rowset_count(jobs) == 1);
	djc_rowset_free(jobs);
	CHECK(djc_config_set("jobs.keep_completed", "false", "test", NULL) == DJC_OK);
	/* populate makes the other three, never key 2 */
	djc_populate_options po = DJC_POPULATE_OPTIONS_INIT;
	po.reserve_jobs = 1;
	po.make = mk_mid;
	djc_populate_result *pr = NULL;
	rc = djc_populate(&pr, c, "Mid", &po);
	CHECK_MSG(rc == DJC_OK && pr && pr->success_count == 3 && mid_calls == 3, "%s", djc_error_last(c));
	djc_populate_result_free(pr);
	djc_rowset *mid = NULL;
	CHECK(djc_fetch(&mid, c, "Mid", "{\"id\": 2}") == DJC_OK && djc_rowset_count(mid) == 1 &&
	      get_float(djc_rowset_row(mid, 0), "y") == -2);
	djc_rowset_free(mid);
	long counts[5] = {9, 9, 9, 9, 9};
	CHECK(djc_jobs_counts(counts, c, "Mid") == DJC_OK && counts[0] == 0 && counts[1] == 0 && counts[3] == 0);
	djc_row_free(m2);
	djc_row_free(pp);
}

/* 3. ancestors only */
static void test_ancestors_only(djc_conn *c, djc_row **src, const char *url, const char *schema)
{
	djc_populate_options po;
	djc_populate_result *pr;
	int rc;
	po = (djc_populate_options)DJC_POPULATE_OPTIONS_INIT;
	po.make = mk_top;
	po.suppress_errors = 1;
	po.where_json = "{\"id\": 1}";
	pr = NULL;
	rc = djc_populate(&pr, c, "Top", &po);
	CHECK(rc == DJC_EMAKE && pr && pr->error_count == 1 && pr->n_errors == 1);
	CHECK(rc_grand == DJC_OK);
	CHECK(rc_side == DJC_EINVAL && rc_self == DJC_EINVAL && rc_key_side == DJC_EINVAL);
	if (pr && pr->n_errors)
		CHECK_STR(pr->errors[0].message, "make of Top may read only its ancestors and their part tables (the tables it "
						 "depends on through ->): Side is not upstream of Top");
	djc_populate_result_free(pr);
	CHECK(t_count(c, "Top", NULL) == 0);
	CHECK(djc_upstream_check(c, "Top", "Src") == DJC_OK);
	CHECK(djc_upstream_check(c, "Mid.Part", "Mid") == DJC_OK);
	CHECK(djc_upstream_check(c, "Mid", "Mid.Part") == DJC_EINVAL);
	CHECK(djc_upstream_check(c, "Src", "Top") == DJC_EINVAL);
	CHECK(djc_upstream_check(c, "Top", "Nope") == DJC_ENOTFOUND);
}

/* 4. job metadata */
static void test_job_metadata(djc_conn *c, djc_row **src, const char *url, const char *schema)
{
	djc_populate_options po;
	djc_populate_result *pr;
	int rc;
	CHECK(djc_config_set("jobs.add_job_metadata", "true", "test", NULL) == DJC_OK);
	CHECK(djc_config_set("jobs.job_version", "cv-7", "test", NULL) == DJC_OK);
	rc = djc_declare(NULL, c, "Meta (computed)\n    -> Src\n    ---\n    y : float64\n", "meta.djc");
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(djc_config_set("jobs.add_job_metadata", "false", "test", NULL) == DJC_OK);
	po = (djc_populate_options)DJC_POPULATE_OPTIONS_INIT;
	po.make = mk_mid;   /* reads Src, an ancestor of Meta too */
	pr = NULL;
	mid_calls = 0;
	rc = djc_populate(&pr, c, "Meta", &po);
	CHECK_MSG(rc == DJC_OK && pr && pr->success_count == 4, "%s", djc_error_last(c));
	djc_populate_result_free(pr);
	djc_rowset *mr = NULL;
	CHECK(djc_fetch(&mr, c, "Meta", NULL) == DJC_OK && djc_rowset_count(mr) == 4);
	if (mr && djc_rowset_count(mr)) {
		const djc_row *r0 = djc_rowset_row(mr, 0);
		CHECK(djc_row_count(r0) == 2 && djc_row_find(r0, "_job_duration") < 0);
	}
	djc_rowset_free(mr);
	mr = NULL;
	djc_fetch_options fo = DJC_FETCH_OPTIONS_INIT;
	fo.all_columns = 1;
	CHECK(djc_fetch_ext(&mr, c, "Meta", "{\"id\": 3}", &fo) == DJC_OK && djc_rowset_count(mr) == 1);
	if (mr && djc_rowset_count(mr)) {
		const djc_row *r0 = djc_rowset_row(mr, 0);
		long iv = djc_row_find(r0, "_job_version"), id = djc_row_find(r0, "_job_duration"), is = djc_row_find(r0, "_job_start_time");
		const char *ver = NULL, *st = NULL;
		double dur = -1;
		CHECK(iv >= 0 && djc_row_text(&ver, r0, (size_t)iv) == DJC_OK && ver && !strcmp(ver, "cv-7"));
		CHECK(id >= 0 && djc_row_float(&dur, r0, (size_t)id) == DJC_OK && dur >= 0);
		CHECK(is >= 0 && djc_row_text(&st, r0, (size_t)is) == DJC_OK && st && strlen(st) == 23);
		CHECK(get_float(r0, "y") == 31);
	}
	djc_rowset_free(mr);
	fo.version = 5;
	mr = NULL;
	CHECK(djc_fetch_ext(&mr, c, "Meta", NULL, &fo) == DJC_EINVAL && !mr);
	CHECK(djc_fetch_ext(&mr, c, "Mid", NULL, NULL) == DJC_OK && djc_rowset_count(mr) == 4);
	djc_rowset_free(mr);
}

/* 6. upstream checked at commit */
static void test_upstream_at_commit(djc_conn *c, djc_row **src, const char *url, const char *schema)
{
	djc_populate_options po;
	djc_populate_result *pr;
	djc_rowset *mr;
	size_t n = 0;
	int rc;
	rc = djc_declare(NULL, c, "Up (manual)\n    id : int32\n    ---\n    x : float64\n\n"
			    "Down (computed)\n    -> Up\n    ---\n    y : float64\n", "up.djc");
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	rc = djc_open(&other, url, schema);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(other));
	for (int i = 0; i < 4; i++) djc_row_set_float(src[i], "x", i + 1);   /* Up: ids 1..4, x = id */
	CHECK(djc_insert_ext(&n, c, "Up", (const djc_row *const *)src, 4, NULL) == DJC_OK && n == 4);
	for (int direct = 0; direct <= 1; direct++) {
		/* reserved (jobs) first, then direct populate */
		int64_t victim = direct ? 4 : 2;
		po = (djc_populate_options)DJC_POPULATE_OPTIONS_INIT;
		po.reserve_jobs = !direct;
		po.make = mk_down;
		po.payload = &victim;
		po.suppress_errors = 1;
		po.where_json = direct ? "{\"id\": [3, 4]}" : "{\"id\": [1, 2]}";
		pr = NULL;
		rc = djc_populate(&pr, c, "Down", &po);
		CHECK_MSG(rc == DJC_EMAKE && pr && pr->success_count == 1 && pr->error_count == 1 && pr->n_errors == 1,
			  "direct=%d rc=%d %s", direct, rc, djc_error_last(c));
		if (pr && pr->n_errors) {
			char want[256];
			snprintf(want, sizeof want,
				 "upstream changed while make ran: the rows of Up that make of Down read (restricted by "
				 "{\"id\":%lld}, 1 row then, 1 now) are not the same at commit; nothing committed",
				 (long long)victim);
			CHECK_STR(pr->errors[0].message, want);
			CHECK(strstr(pr->errors[0].key_json, direct ? "4" : "2") != NULL);
		}
		djc_populate_result_free(pr);
		char where[64];
		snprintf(where, sizeof where, "{\"id\": %lld}", (long long)victim);
		CHECK(t_count(c, "Down", where) == 0);   /* nothing of the changed key committed */
	}
	CHECK(t_count(c, "Down", NULL) == 2);
	djc_rowset *errs = NULL;
	CHECK(djc_jobs_list(&errs, c, "Down", "error") == DJC_OK && djc_rowset_count(errs) == 1);
	if (errs && djc_rowset_count(errs)) {
		const djc_row *e = djc_rowset_row(errs, 0);
		const char *m = NULL;
		long im = djc_row_find(e, "error_message");
		CHECK(im >= 0 && djc_row_text(&m, e, (size_t)im) == DJC_OK && m && strstr(m, "the rows of Up that make of Down read"));
	}
	djc_rowset_free(errs);
	/* clear the error: the key is made from the new row */
	long cleared = 0;
	CHECK(djc_jobs_clear(&cleared, c, "Down", "error") == DJC_OK && cleared == 1);
	int64_t none = -1;
	po = (djc_populate_options)DJC_POPULATE_OPTIONS_INIT;
	po.make = mk_down;
	po.payload = &none;
	pr = NULL;
	rc = djc_populate(&pr, c, "Down", &po);
	CHECK_MSG(rc == DJC_OK && pr && pr->success_count == 2, "%s", djc_error_last(c));
	djc_populate_result_free(pr);
	mr = NULL;
	CHECK(djc_fetch(&mr, c, "Down", "{\"id\": 2}") == DJC_OK && djc_rowset_count(mr) == 1 &&
	      get_float(djc_rowset_row(mr, 0), "y") == 5);   /* 2 * 2.5, the replaced row */
	djc_rowset_free(mr);
	/* a row replaced by the same values is the same upstream: committed */
	CHECK(djc_delete(&n, c, "Down", "{\"id\": 1}") == DJC_OK && n == 1);
	replace_same = 1;
	int64_t one = 1;
	po.payload = &one;
	po.reserve_jobs = 1;
	pr = NULL;
	rc = djc_populate(&pr, c, "Down", &po);
	CHECK_MSG(rc == DJC_OK && pr && pr->success_count == 1 && pr->error_count == 0, "%s", djc_error_last(c));
	djc_populate_result_free(pr);
	djc_close(other);
}

/* 7. reads checked when makes commit together (jobs.reserve_batch > 1).
 * Gdown's make reads its Gup row by key and the Gup rows of id 1000 + id
 * (none); for the key whose id is gdown_change[k] it has the second
 * connection do gdown_how[k] before it returns: 'c' replace the Gup row
 * with another x, 's' replace it as it was (same values, new row
 * version), 'n' insert Gup 1000 + id (the read of no rows finds one),
 * 'b' replace Gup 2000 with another x (with gdown_all: a row only the
 * read of every row saw). */
static int64_t gdown_change[3];
static char gdown_how[3];
static int gdown_all;   /* the make reads every Gup row too */
static int mk_gdown(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t id = -1;
	djc_row_int(&id, key, (size_t)djc_row_find(key, "id"));
	djc_rowset *up = NULL, *none = NULL;
	char where[64];
	snprintf(where, sizeof where, "{\"id\": %lld}", (long long)(1000 + id));
	if (djc_make_fetch_key(&up, ctx, "Gup", key) || djc_rowset_count(up) != 1 || djc_make_fetch(&none, ctx, "Gup", where) ||
	    djc_rowset_count(none) != 0) {
		djc_rowset_free(up);
		djc_rowset_free(none);
		return 1;
	}
	djc_rowset_free(none);
	if (gdown_all) {
		none = NULL;
		int ok = djc_make_fetch(&none, ctx, "Gup", NULL) == DJC_OK && djc_rowset_count(none) > READ_CHECK_ROWS;
		djc_rowset_free(none);
		if (!ok) { djc_rowset_free(up); return 1; }
	}
	double x = get_float(djc_rowset_row(up, 0), "x");
	djc_rowset_free(up);
	for (int k = 0; k < 3; k++) {
		if (gdown_change[k] != id) continue;
		size_t n = 0;
		djc_row *r = djc_row_new();
		int ok;
		if (gdown_how[k] == 'n') {
			djc_row_set_int(r, "id", 1000 + id);
			djc_row_set_float(r, "x", 0);
			ok = djc_insert_ext(&n, other, "Gup", (const djc_row *const *)&r, 1, NULL) == DJC_OK && n == 1;
		} else if (gdown_how[k] == 'b') {
			/* a row only the read of every row saw: Gup 2000 */
			djc_row_set_int(r, "id", 2000);
			djc_row_set_float(r, "x", 2);
			ok = replace_by_other("Gup", "{\"id\": 2000}", r);
		} else {
			snprintf(where, sizeof where, "{\"id\": %lld}", (long long)id);
			djc_row_set_int(r, "id", id);
			djc_row_set_float(r, "x", gdown_how[k] == 's' ? x : x + 0.5);
			ok = replace_by_other("Gup", where, r);
		}
		CHECK_MSG(ok, "changing Gup %lld: %s", (long long)id, djc_error_last(other));
		djc_row_free(r);
	}
	return insert_y(ctx, 2 * x);
}

/* How many transactions wrote the rows of table name whose id is from lo
 * to hi (PostgreSQL: distinct xmin); -1 elsewhere or on failure. */
static long xacts_of(djc_conn *c, const char *name, int lo, int hi)
{
	if (!db_row_version(c->db)) return -1;
	table *t = NULL;
	if (conn_table(c, name, &t)) return -1;
	sb_t q = SB_INIT;
	sb_add(&q, "SELECT count(DISTINCT CAST(xmin AS text)) FROM ");
	db_qtable(c->db, &q, table_sqlref(t));
	sb_add(&q, " WHERE id BETWEEN ? AND ?");
	val_t p[2] = {val_int(lo), val_int(hi)};
	db_res *r = NULL;
	long n = -1;
	if (!db_exec(c->db, sb_str(&q), p, 2, &r) && r->nrows == 1) n = (long)db_cell_int(r, 0, 0);
	db_res_free(r);
	sb_free(&q);
	return n;
}

/* Declare a pair of tables (text), open the other user's connection, and
 * claim 8 jobs at a time (grouped commits); reads_done undoes the last two. */
static void reads_setup(djc_conn *c, const char *url, const char *schema, const char *text, const char *file)
{
	CHECK_MSG(djc_declare(NULL, c, text, file) == DJC_OK, "%s", djc_error_last(c));
	CHECK_MSG(djc_open(&other, url, schema) == DJC_OK, "%s", djc_error_last(other));
	CHECK(djc_config_set("jobs.reserve_batch", "8", "test", NULL) == 0);
}

static void reads_done(void)
{
	CHECK(djc_config_set("jobs.reserve_batch", "1", "test", NULL) == 0);
	djc_close(other);
}

/* Populate table name (make, where) with reservation, 8 jobs a claim, none
 * failing: all n made, in one transaction where the reads are checked by
 * row version (the rows of ids lo to hi; before: one each). The options
 * for the next populate of the case. */
static djc_populate_options grouped_all(djc_conn *c, const char *name, djc_make_fn make, const char *where, long n,
					int lo, int hi)
{
	djc_populate_options po = DJC_POPULATE_OPTIONS_INIT;
	po.reserve_jobs = 1;
	po.make = make;
	po.suppress_errors = 1;
	po.where_json = where;
	djc_populate_result *pr = NULL;
	int rc = djc_populate(&pr, c, name, &po);
	CHECK_MSG(rc == DJC_OK && pr && pr->success_count == n, "rc=%d %s", rc, djc_error_last(c));
	djc_populate_result_free(pr);
	/* grouped: fewer transactions than rows (one, unless a group was
	 * older than its 0.2 s hold before the claim's last make: a machine
	 * loaded enough, under ASan, splits it in two) */
	long x = xacts_of(c, name, lo, hi);
	CHECK_MSG(db_row_version(c->db) ? x >= 1 && x < n : x == -1, "%s: the %ld rows were written by %ld transactions", name,
		  n, x);
	return po;
}

static void test_reads_grouped(djc_conn *c, const char *url, const char *schema)
{
	reads_setup(c, url, schema, "Gup (manual)\n    id : int32\n    ---\n    x : float64\n\n"
				    "Gdown (computed)\n    -> Gup\n    ---\n    y : float64\n", "grouped.djc");
	for (int id = 1; id <= 18; id++) {
		char row[64];
		snprintf(row, sizeof row, "{\"id\": %d, \"x\": %d}", id, id);
		CHECK(t_insert_json(c, "Gup", row) == DJC_OK);
	}
	/* eight makes, nothing changed */
	djc_populate_options po = grouped_all(c, "Gdown", mk_gdown, "{\"id\": [11, 12, 13, 14, 15, 16, 17, 18]}", 8, 11, 18);
	djc_populate_result *pr = NULL;
	int rc;
	long x;
	/* eight more: one key's Gup row changed, one rewritten as it was, one
	 * read of no rows finds one: those two fail alone, the rest commit */
	gdown_change[0] = 3; gdown_how[0] = 'c';
	gdown_change[1] = 5; gdown_how[1] = 's';
	gdown_change[2] = 7; gdown_how[2] = 'n';
	po.where_json = "{\"id\": [1, 2, 3, 4, 5, 6, 7, 8]}";
	pr = NULL;
	rc = djc_populate(&pr, c, "Gdown", &po);
	CHECK_MSG(rc == DJC_EMAKE && pr && pr->success_count == 6 && pr->error_count == 2 && pr->n_errors == 2,
		  "rc=%d success=%ld errors=%ld %s", rc, pr ? (long)pr->success_count : -1, pr ? (long)pr->error_count : -1,
		  djc_error_last(c));
	for (size_t i = 0; pr && i < pr->n_errors; i++) {
		int three = strstr(pr->errors[i].key_json, "3") != NULL;
		CHECK_MSG(strstr(pr->errors[i].key_json, three ? "3" : "7") &&
			  strstr(pr->errors[i].message, "upstream changed while make ran: the rows of Gup that make of Gdown read") &&
			  strstr(pr->errors[i].message, three ? "3}, 1 row then, 1 now)" : "1007}, 0 rows then, 1 now)"),
			  "%s: %s", pr->errors[i].key_json, pr->errors[i].message);
	}
	djc_populate_result_free(pr);
	CHECK(t_count(c, "Gdown", "{\"id\": [3, 7]}") == 0);
	CHECK(t_count(c, "Gdown", "{\"id\": [1, 2, 4, 5, 6, 8]}") == 6);
	djc_rowset *mr = NULL;
	CHECK(djc_fetch(&mr, c, "Gdown", "{\"id\": 5}") == DJC_OK && djc_rowset_count(mr) == 1 &&
	      get_float(djc_rowset_row(mr, 0), "y") == 10);
	djc_rowset_free(mr);
	memset(gdown_change, 0, sizeof gdown_change);
	/* reads of more than READ_CHECK_ROWS rows are checked statement by
	 * statement (each key its own transaction), and still checked */
	enum { MORE = READ_CHECK_ROWS + 1 };
	djc_row **more = calloc(MORE, sizeof *more);
	for (int i = 0; i < MORE; i++) {
		more[i] = djc_row_new();
		djc_row_set_int(more[i], "id", 2000 + i);
		djc_row_set_float(more[i], "x", 1);
	}
	size_t n = 0;
	CHECK(djc_insert_ext(&n, c, "Gup", (const djc_row *const *)more, MORE, NULL) == DJC_OK && n == MORE);
	for (int i = 0; i < MORE; i++) djc_row_free(more[i]);
	free(more);
	gdown_all = 1;
	po.where_json = "{\"id\": [9, 10]}";
	pr = NULL;
	rc = djc_populate(&pr, c, "Gdown", &po);
	CHECK_MSG(rc == DJC_OK && pr && pr->success_count == 2, "rc=%d %s", rc, djc_error_last(c));
	djc_populate_result_free(pr);
	x = xacts_of(c, "Gdown", 9, 10);
	CHECK_MSG(x == (db_row_version(c->db) ? 2 : -1), "the two rows were written by %ld transactions", x);
	CHECK(djc_delete(&n, c, "Gdown", "{\"id\": 9}") == DJC_OK && n == 1);
	gdown_change[0] = 9; gdown_how[0] = 'b';
	po.where_json = "{\"id\": 9}";
	pr = NULL;
	rc = djc_populate(&pr, c, "Gdown", &po);
	CHECK_MSG(rc == DJC_EMAKE && pr && pr->error_count == 1 && pr->n_errors == 1 &&
		  strstr(pr->errors[0].message, "(all rows, 10020 rows then, 10020 now)"),
		  "rc=%d %s", rc, pr && pr->n_errors ? pr->errors[0].message : djc_error_last(c));
	djc_populate_result_free(pr);
	CHECK(t_count(c, "Gdown", "{\"id\": 9}") == 0);
	gdown_all = 0;
	memset(gdown_change, 0, sizeof gdown_change);
	reads_done();
}

/* 8. reads of a table PostgreSQL sends in binary (int, bytea, xmin: the
 * versions come as binary xids) are checked in the batch as in text */
static int64_t bdown_change;
static int mk_bdown(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t id = -1;
	djc_row_int(&id, key, (size_t)djc_row_find(key, "id"));
	djc_rowset *up = NULL;
	if (djc_make_fetch_key(&up, ctx, "Bup", key) || djc_rowset_count(up) != 1) { djc_rowset_free(up); return 1; }
	djc_rowset_free(up);
	if (bdown_change == id) {
		char where[64];
		snprintf(where, sizeof where, "{\"id\": %lld}", (long long)id);
		djc_row *r = djc_row_new();
		djc_row_set_int(r, "id", id);
		djc_row_set_bytes(r, "b", "zz", 2);
		CHECK(replace_by_other("Bup", where, r));
		djc_row_free(r);
	}
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "y", 1);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

static void test_reads_binary(djc_conn *c, const char *url, const char *schema)
{
	reads_setup(c, url, schema, "Bup (manual)\n    id : int32\n    ---\n    b : bytes\n\n"
				    "Bdown (computed)\n    -> Bup\n    ---\n    y : int32\n", "bin.djc");
	for (int id = 1; id <= 8; id++) {
		djc_row *r = djc_row_new();
		djc_row_set_int(r, "id", id);
		djc_row_set_bytes(r, "b", "ab", 2);
		size_t n = 0;
		CHECK(djc_insert_ext(&n, c, "Bup", (const djc_row *const *)&r, 1, NULL) == DJC_OK);
		djc_row_free(r);
	}
	djc_populate_options po = grouped_all(c, "Bdown", mk_bdown, "{\"id\": [1, 2, 3, 4]}", 4, 1, 4);
	bdown_change = 6;
	po.where_json = "{\"id\": [5, 6, 7, 8]}";
	djc_populate_result *pr = NULL;
	int rc = djc_populate(&pr, c, "Bdown", &po);
	CHECK_MSG(rc == DJC_EMAKE && pr && pr->success_count == 3 && pr->error_count == 1, "rc=%d %s", rc, djc_error_last(c));
	djc_populate_result_free(pr);
	CHECK(t_count(c, "Bdown", "{\"id\": 6}") == 0);
	reads_done();
}

/* 10. large bytes values read by a make are checked at commit by their
 * contents: read again, MariaDB's driver hashes a value over 64 KiB as it
 * comes, never holding a copy (db.h, exec_digest; other backends read it
 * whole or by row version). For the key lbig_change the other user
 * replaces the Lup row before make returns: lbig_how 'd' with a value
 * that differs in its last byte only (the same length), 'l' one byte
 * longer, 's' the same bytes (the same upstream: committed). */
#define LBIG (200 << 10)
static int64_t lbig_change;
static char lbig_how;
static char *lbig_value(int64_t id, size_t n, char last)
{
	char *v = malloc(n);
	for (size_t i = 0; i < n; i++) v[i] = (char)((i * 131 + (size_t)id) & 0xff);
	v[n - 1] = last;
	return v;
}
static int mk_ldown(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t id = -1;
	djc_row_int(&id, key, (size_t)djc_row_find(key, "id"));
	djc_rowset *up = NULL;
	const void *b = NULL;
	size_t n = 0;
	if (djc_make_fetch_key(&up, ctx, "Lup", key) || djc_rowset_count(up) != 1 ||
	    djc_row_get_bytes(&b, &n, djc_rowset_row(up, 0), "b") || n != LBIG) {
		djc_rowset_free(up);
		return 1;
	}
	int y = ((const unsigned char *)b)[n - 1];
	djc_rowset_free(up);
	if (lbig_change == id) {
		char where[64];
		snprintf(where, sizeof where, "{\"id\": %lld}", (long long)id);
		size_t len = lbig_how == 'l' ? LBIG + 1 : LBIG;
		char *v = lbig_value(id, len, lbig_how == 'd' ? 'y' : 'x');
		djc_row *r = djc_row_new();
		djc_row_set_int(r, "id", id);
		djc_row_set_bytes(r, "b", v, len);
		CHECK_MSG(replace_by_other("Lup", where, r), "replacing Lup %lld: %s", (long long)id, djc_error_last(other));
		djc_row_free(r);
		free(v);
	}
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "y", y);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

/* Populate Ldown for key id, with the other user's change how: made (1)
 * or failed with the check's message (0). */
static int lbig_populate(djc_conn *c, int64_t id, char how, int reserve)
{
	char where[64];
	snprintf(where, sizeof where, "{\"id\": %lld}", (long long)id);
	lbig_change = id;
	lbig_how = how;
	djc_populate_options po = DJC_POPULATE_OPTIONS_INIT;
	po.reserve_jobs = reserve;
	po.make = mk_ldown;
	po.suppress_errors = 1;
	po.where_json = where;
	djc_populate_result *pr = NULL;
	int rc = djc_populate(&pr, c, "Ldown", &po);
	int made = rc == DJC_OK && pr && pr->success_count == 1 && t_count(c, "Ldown", where) == 1;
	int failed = pr && pr->error_count == 1 && pr->n_errors == 1 &&
		     strstr(pr->errors[0].message, "upstream changed while make ran: the rows of Lup that make of Ldown read") &&
		     t_count(c, "Ldown", where) == 0;
	CHECK_MSG(made || failed, "key %lld (%c, reserve %d): rc=%d %s", (long long)id, how, reserve, rc,
		  pr && pr->n_errors ? pr->errors[0].message : djc_error_last(c));
	djc_populate_result_free(pr);
	return made;
}

static void test_reads_large(djc_conn *c, const char *url, const char *schema)
{
	reads_setup(c, url, schema, "Lup (manual)\n    id : int32\n    ---\n    b : bytes\n\n"
				    "Ldown (computed)\n    -> Lup\n    ---\n    y : int32\n", "large.djc");
	for (int id = 1; id <= 6; id++) {
		char *v = lbig_value(id, LBIG, 'x');
		djc_row *r = djc_row_new();
		djc_row_set_int(r, "id", id);
		djc_row_set_bytes(r, "b", v, LBIG);
		size_t n = 0;
		CHECK(djc_insert_ext(&n, c, "Lup", (const djc_row *const *)&r, 1, NULL) == DJC_OK);
		djc_row_free(r);
		free(v);
	}
	CHECK(lbig_populate(c, 1, 0, 1) == 1);     /* nothing changed */
	CHECK(lbig_populate(c, 2, 'd', 1) == 0);   /* one byte of 200 KiB */
	CHECK(lbig_populate(c, 3, 'l', 1) == 0);   /* one byte longer */
	CHECK(lbig_populate(c, 4, 's', 1) == 1);   /* the same bytes again */
	CHECK(lbig_populate(c, 5, 'd', 0) == 0);   /* direct populate checks as a reserved one */
	CHECK(lbig_populate(c, 6, 's', 0) == 1);
	lbig_change = 0;
	reads_done();
}

/* 9. a make reads the part tables of its ancestors (DataJoint's
 * `(Analysis.Unit & key).fetch()` in the make of Summary -> Analysis): a
 * master's parts are committed with its row, so they are read as it is,
 * and checked at commit as every read. Ana's make gives key id the parts
 * u = 1..id, amp = u; Summ's sums them, and for the key in *payload has
 * the other user raise the amp of one of them by 100 (raw SQL: a part's
 * rows are not deleted alone) before it returns. Aside (-> Rec, not Ana)
 * may not read them. */
static int mk_ana(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t id = -1;
	djc_row_int(&id, key, (size_t)djc_row_find(key, "id"));
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "n", id);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	for (int64_t u = 1; u <= id && !rc; u++) {
		r = djc_row_new();
		djc_row_set_int(r, "u", u);
		djc_row_set_float(r, "amp", (double)u);
		rc = djc_make_insert(ctx, "Ana.Unit", r);
		djc_row_free(r);
	}
	return rc;
}

static int rc_part;   /* what Summ's and Aside's reads of Ana.Unit returned */

/* The other user adds 100 to the amp of Ana.Unit (id, u = 1). */
static int raise_amp(int64_t id)
{
	table *t = NULL;
	if (conn_table(other, "Ana.Unit", &t)) return 0;
	sb_t q = SB_INIT;
	sb_add(&q, "UPDATE ");
	db_qtable(other->db, &q, table_sqlref(t));
	sb_add(&q, " SET amp = amp + 100 WHERE id = ? AND u = 1");
	val_t p[1] = {val_int(id)};
	int ok = db_exec(other->db, sb_str(&q), p, 1, NULL) == DJC_OK;
	sb_free(&q);
	return ok;
}

static int mk_summ(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	djc_rowset *units = NULL;
	rc_part = djc_make_fetch_key(&units, ctx, "Ana.Unit", key);
	if (rc_part) return 1;
	int64_t id = -1;
	djc_row_int(&id, key, (size_t)djc_row_find(key, "id"));
	double total = 0;
	for (size_t i = 0; i < djc_rowset_count(units); i++) total += get_float(djc_rowset_row(units, i), "amp");
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "n_units", (int64_t)djc_rowset_count(units));
	djc_row_set_float(r, "total", total);
	djc_rowset_free(units);
	if (payload && id == *(int64_t *)payload) CHECK_MSG(raise_amp(id), "raising Ana.Unit %lld: %s", (long long)id, djc_error_last(other));
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

static int mk_aside(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	djc_rowset *units = NULL;
	rc_part = djc_make_fetch_key(&units, ctx, "Ana.Unit", key);
	djc_rowset_free(units);
	return rc_part ? 3 : 0;
}

/* Summ's row of id: its n_units and total, as "n/total" ("-" when none). */
static void summ_of(djc_conn *c, int id, char *out, size_t n)
{
	char where[64];
	snprintf(where, sizeof where, "{\"id\": %d}", id);
	djc_rowset *rs = NULL;
	snprintf(out, n, "-");
	if (djc_fetch(&rs, c, "Summ", where) == DJC_OK && djc_rowset_count(rs) == 1) {
		const djc_row *r = djc_rowset_row(rs, 0);
		int64_t k = -1;
		djc_row_int(&k, r, (size_t)djc_row_find(r, "n_units"));
		snprintf(out, n, "%lld/%g", (long long)k, get_float(r, "total"));
	}
	djc_rowset_free(rs);
}

static void test_part_reads(djc_conn *c, const char *url, const char *schema)
{
	reads_setup(c, url, schema,
		    "Rec (manual)\n    id : int32\n    ---\n    k : int32\n\n"
		    "Ana (computed)\n    -> Rec\n    ---\n    n : int32\n\n"
		    "Ana.Unit (part)\n    u : int32\n    ---\n    amp : float64\n\n"
		    "Summ (computed)\n    -> Ana\n    ---\n    n_units : int32\n    total : float64\n\n"
		    "Aside (computed)\n    -> Rec\n    ---\n    a : int32\n",
		    "parts.djc");
	for (int id = 1; id <= 6; id++) {
		char row[64];
		snprintf(row, sizeof row, "{\"id\": %d, \"k\": %d}", id, id);
		CHECK(t_insert_json(c, "Rec", row) == DJC_OK);
	}
	djc_populate_options po = DJC_POPULATE_OPTIONS_INIT;
	po.make = mk_ana;
	djc_populate_result *pr = NULL;
	int rc = djc_populate(&pr, c, "Ana", &po);
	CHECK_MSG(rc == DJC_OK && pr && pr->success_count == 6, "rc=%d %s", rc, djc_error_last(c));
	djc_populate_result_free(pr);
	CHECK(t_count(c, "Ana.Unit", NULL) == 21);
	/* what may be read: an ancestor's parts, not the target's own, nor a part of a non-ancestor */
	CHECK(djc_upstream_check(c, "Summ", "Ana.Unit") == DJC_OK);
	CHECK(djc_upstream_check(c, "Top", "Mid.Part") == DJC_OK);
	CHECK(djc_upstream_check(c, "Ana", "Ana.Unit") == DJC_EINVAL);
	CHECK(djc_upstream_check(c, "Aside", "Ana.Unit") == DJC_EINVAL);
	CHECK(djc_upstream_check(c, "Rec", "Ana.Unit") == DJC_EINVAL);
	CHECK(djc_upstream_check(c, "Ana.Unit", "Ana.Unit") == DJC_EINVAL);
	/* reserved, 8 jobs a claim (one commit on PostgreSQL, its reads checked
	 * by row versions): key 2's part row changed after it was read */
	int64_t victim = 2;
	po = (djc_populate_options)DJC_POPULATE_OPTIONS_INIT;
	po.make = mk_summ;
	po.payload = &victim;
	po.reserve_jobs = 1;
	po.suppress_errors = 1;
	po.where_json = "{\"id\": [1, 2, 3]}";
	for (int direct = 0; direct <= 1; direct++) {
		pr = NULL;
		rc = djc_populate(&pr, c, "Summ", &po);
		CHECK_MSG(rc == DJC_EMAKE && pr && pr->success_count == 2 - direct && pr->error_count == 1 && pr->n_errors == 1,
			  "direct=%d rc=%d %s", direct, rc, pr && pr->n_errors ? pr->errors[0].message : djc_error_last(c));
		if (pr && pr->n_errors) {
			char want[256];
			snprintf(want, sizeof want,
				 "upstream changed while make ran: the rows of Ana.Unit that make of Summ read (restricted by "
				 "{\"id\":%lld}, %lld rows then, %lld now) are not the same at commit; nothing committed",
				 (long long)victim, (long long)victim, (long long)victim);
			CHECK_STR(pr->errors[0].message, want);
		}
		djc_populate_result_free(pr);
		/* then direct populate: key 5's */
		victim = 5;
		po.reserve_jobs = 0;
		po.where_json = "{\"id\": [4, 5]}";
	}
	char got[64];
	const char *want[] = {"1/1", "-", "3/6", "4/10", "-"};
	for (int id = 1; id <= 5; id++) {
		summ_of(c, id, got, sizeof got);
		CHECK_MSG(!strcmp(got, want[id - 1]), "Summ %d: %s, not %s", id, got, want[id - 1]);
	}
	/* the error cleared: both keys made from the rows as they are now */
	long cleared = 0;
	CHECK(djc_jobs_clear(&cleared, c, "Summ", "error") == DJC_OK && cleared == 1);
	po.payload = NULL;
	po.where_json = NULL;
	pr = NULL;
	rc = djc_populate(&pr, c, "Summ", &po);
	CHECK_MSG(rc == DJC_OK && pr && pr->success_count == 3, "rc=%d %s", rc, djc_error_last(c));
	djc_populate_result_free(pr);
	summ_of(c, 2, got, sizeof got);
	CHECK_MSG(!strcmp(got, "2/103"), "Summ 2: %s", got);
	summ_of(c, 5, got, sizeof got);
	CHECK_MSG(!strcmp(got, "5/115"), "Summ 5: %s", got);
	/* a part of a table that is not an ancestor: refused, naming both */
	po = (djc_populate_options)DJC_POPULATE_OPTIONS_INIT;
	po.make = mk_aside;
	po.suppress_errors = 1;
	po.where_json = "{\"id\": 1}";
	pr = NULL;
	rc = djc_populate(&pr, c, "Aside", &po);
	CHECK(rc == DJC_EMAKE && pr && pr->error_count == 1 && pr->n_errors == 1 && rc_part == DJC_EINVAL);
	if (pr && pr->n_errors)
		CHECK_STR(pr->errors[0].message, "make of Aside may read only its ancestors and their part tables (the tables "
						 "it depends on through ->): Ana.Unit is not upstream of Aside");
	djc_populate_result_free(pr);
	CHECK(t_count(c, "Aside", NULL) == 0);
	reads_done();
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_parity", "allow_direct_insert ancestors_only:allow_direct_insert job_metadata:allow_direct_insert upstream_at_commit reads_grouped reads_binary part_reads reads_large");
	char path[64];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-parity-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_parity";
	if (!strncmp(url, "sqlite:", 7)) schema = NULL;
	djc_conn *c = NULL;
	int rc = djc_open(&c, url, schema);
	if (rc) { fprintf(stderr, "djc_open: %s\n", djc_error_last(c)); return 1; }
	rc = djc_declare(NULL, c, PIPE, "parity.djc");
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));

	djc_row *src[4], *side = djc_row_new();
	for (int i = 0; i < 4; i++) {
		src[i] = djc_row_new();
		djc_row_set_int(src[i], "id", i + 1);
		djc_row_set_float(src[i], "x", 10 * (i + 1));
	}
	djc_row_set_int(side, "id", 1);
	djc_row_set_int(side, "s", 7);
	size_t n = 0;
	CHECK(djc_insert_ext(&n, c, "Src", (const djc_row *const *)src, 4, NULL) == DJC_OK && n == 4);
	CHECK(djc_insert_ext(&n, c, "Side", (const djc_row *const *)&side, 1, NULL) == DJC_OK && n == 1);
	if (t_want("allow_direct_insert")) test_allow_direct_insert(c, src, url, schema);
	if (t_want("ancestors_only")) test_ancestors_only(c, src, url, schema);
	if (t_want("job_metadata")) test_job_metadata(c, src, url, schema);
	if (t_want("upstream_at_commit")) test_upstream_at_commit(c, src, url, schema);
	if (t_want("reads_grouped")) test_reads_grouped(c, url, schema);
	if (t_want("reads_binary")) test_reads_binary(c, url, schema);
	if (t_want("part_reads")) test_part_reads(c, url, schema);
	if (t_want("reads_large")) test_reads_large(c, url, schema);
	for (int i = 0; i < 4; i++) djc_row_free(src[i]);
	djc_row_free(side);
	djc_close(c);
	if (!strncmp(url, "sqlite:/tmp/djc-test-parity-", 28)) unlink(url + 7);
	return T_DONE("test_parity");
}
