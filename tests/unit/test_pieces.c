/* test_pieces.c - large bytes values read in pieces (rows.c fetch_rows,
 * db_driver.read_pieces; docs/workers.md "Large values"), on the backend
 * of $DJC_TEST_URL. With DJC_READ_PIECE at 1000 bytes:
 *   values    values of every size around the piece (none, empty, one
 *             byte, a piece less one, a piece, a piece and one, several
 *             pieces and some), noise and a compressible run, in two
 *             bytes attributes of one row, come back byte for byte, from
 *             djc_fetch and from a C make's djc_make_fetch_key; on
 *             PostgreSQL each value over a piece that the server stored
 *             as it is (noise) is read by read_pieces (counted through a
 *             wrapped driver), the rest (the compressed runs too) by the
 *             select; elsewhere nothing is read in pieces
 *   changed   the row written by another connection after the select and
 *             before its pieces: the fetch starts again and returns the
 *             new value whole, never a mix of the two
 *   deleted   the row deleted there: the fetch returns no row
 *   busy      a row that changes before every read of its pieces: the
 *             second fetch runs in a snapshot and returns the row its
 *             select saw; inside a transaction of the caller's, five
 *             tries, then DJC_EBUSY naming the table
 *   lossy_key two rows of one transaction whose keys read back alike (an
 *             adopted timestamp key with microseconds djc drops): each
 *             gets its own value
 *   whole     DJC_READ_PIECE=0: no value is read in pieces
 *   reserved  a populate with reserved jobs whose makes read a value in
 *             pieces makes and counts every key and leaves no job: on
 *             PostgreSQL the pieces' single-row mode, which libpq does not
 *             clear for the first query of its next pipeline, handed the
 *             commit's fence over a row at a time; taken as a failure of
 *             a commit the server had made, each job was counted lost and
 *             the next claim that went with it stayed reserved */
#include "t.h"
#include "tdb.h"
#include "djc.h"
#include "table/table.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PIECE 1000

static const char PIPE[] =
	"Big (manual)\n"
	"    id : int32\n"
	"    tag : varchar(8)\n"
	"    ---\n"
	"    a = null : bytes\n"
	"    b = null : bytes\n"
	"    note = '' : varchar(32)\n"
	"\n"
	"Use (computed)\n"
	"    -> Big\n"
	"    ---\n"
	"    same : int32\n";

static const char *url, *schema, *backend;
static djc_conn *other;   /* a second connection: the writer that comes in between */

/* ---- the wrapped driver: counts read_pieces, and may write first */

static db_driver wrapped;
static const db_driver *real;
static int calls;
static enum { PASS, CHANGE, DELETE, CHANGE_ALWAYS } mode;

static unsigned char *value_of(size_t n, unsigned seed, int run)
{
	unsigned char *v = malloc(n ? n : 1);
	uint32_t s = seed * 2654435761u + 1;
	for (size_t i = 0; i < n; i++) {
		s ^= s << 13, s ^= s >> 17, s ^= s << 5;
		v[i] = run ? (unsigned char)('a' + i % 3) : (unsigned char)s;
	}
	return v;
}

/* Big's row (id, tag "t") with a = a value of n bytes (seed), b = NULL. */
static int put_row(djc_conn *c, int id, size_t n, unsigned seed)
{
	unsigned char *v = value_of(n, seed, 0);
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "id", id);
	djc_row_set_text(r, "tag", "t");
	djc_row_set_bytes(r, "a", v, n);
	const djc_row *rows[1] = {r};
	int rc = djc_insert_ext(NULL, c, "Big", rows, 1, NULL);
	djc_row_free(r);
	free(v);
	return rc;
}

static void write_between(void)
{
	char where[64];
	snprintf(where, sizeof where, "{\"id\": 90}");
	size_t del = 0;
	if (djc_delete(&del, other, "Big", where) || del != 1) fprintf(stderr, "between: delete: %s\n", djc_error_last(other));
	/* as long as the value it replaces: only the row's version tells */
	if (mode != DELETE && put_row(other, 90, 4 * PIECE + 3, 1000 + (unsigned)calls))
		fprintf(stderr, "between: insert: %s\n", djc_error_last(other));
}

static int counting_read_pieces(db_conn *c, const db_pieces *req)
{
	calls++;
	if (mode == CHANGE_ALWAYS || ((mode == CHANGE || mode == DELETE) && calls == 1)) write_between();
	return real->read_pieces(c, req);
}

static void wrap(djc_conn *c)
{
	real = c->db->drv;
	wrapped = *real;
	if (real->read_pieces) wrapped.read_pieces = counting_read_pieces;
	c->db->drv = &wrapped;
}

/* ---- values */

static const size_t SIZES[] = {0, 1, PIECE - 1, PIECE, PIECE + 1, 3 * PIECE + 7, 20 * PIECE};
#define NSIZES (sizeof SIZES / sizeof *SIZES)

static int same_bytes(const djc_row *r, const char *name, const unsigned char *want, size_t n)
{
	const void *v = NULL;
	size_t got = 0;
	if (!want) return djc_row_is_null(r, name) == 1;
	return !djc_row_get_bytes(&v, &got, r, name) && got == n && (!n || !memcmp(v, want, n));
}

/* row i: a = SIZES[i] bytes of noise, b = SIZES[NSIZES-1-i] bytes of a
 * compressible run (PostgreSQL stores the long ones compressed: read
 * whole by the select), row NSIZES: both NULL */
static int row_ok(const djc_row *r, size_t i)
{
	if (i == NSIZES) return djc_row_is_null(r, "a") == 1 && djc_row_is_null(r, "b") == 1;
	size_t na = SIZES[i], nb = SIZES[NSIZES - 1 - i];
	unsigned char *a = value_of(na, (unsigned)i, 0), *b = value_of(nb, (unsigned)i, 1);
	int ok = same_bytes(r, "a", a, na) && same_bytes(r, "b", b, nb);
	free(a);
	free(b);
	return ok;
}

/* On PostgreSQL: Big's values over a piece stored as they are (read in
 * pieces: *plain) and stored compressed (read whole by the select:
 * *packed), as the server stored them. */
static void over_piece(djc_conn *c, long *plain, long *packed)
{
	*plain = *packed = -1;
	table *t = NULL;
	if (conn_table(c, "Big", &t)) return;
	for (int packed_too = 0; packed_too < 2; packed_too++) {
		sb_t s = SB_INIT;
		const char *cmp = packed_too ? "<" : ">=";
		sb_printf(&s, "SELECT sum(CASE WHEN octet_length(a) > %d AND pg_column_size(a) %s octet_length(a) THEN 1 ELSE 0 END"
			  " + CASE WHEN octet_length(b) > %d AND pg_column_size(b) %s octet_length(b) THEN 1 ELSE 0 END) FROM ",
			  PIECE, cmp, PIECE, cmp);
		db_qtable(c->db, &s, table_sqlref(t));
		db_res *r = NULL;
		if (!db_exec(c->db, sb_str(&s), NULL, 0, &r) && r->nrows == 1) {
			const val_t *v = db_cell(r, 0, 0);
			long n = v->t == VAL_INT ? (long)v->i : v->s ? atol(v->s) : 0;
			if (packed_too) *packed = n;
			else *plain = n;
		}
		db_res_free(r);
		sb_free(&s);
	}
}

static int make_use(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	djc_rowset *rs = NULL;
	int rc = djc_make_fetch_key(&rs, ctx, "Big", key);
	if (rc) return rc;
	int64_t id = 0;
	djc_row_get_int(&id, key, "id");
	djc_row *out = djc_row_new();
	djc_row_set_int(out, "same", djc_rowset_count(rs) == 1 && row_ok(djc_rowset_row(rs, 0), (size_t)id));
	rc = djc_make_insert(ctx, NULL, out);
	djc_row_free(out);
	djc_rowset_free(rs);
	return rc;
}

static void test_values(djc_conn *c)
{
	int pieced = !strcmp(backend, "postgresql");
	for (size_t i = 0; i <= NSIZES; i++) {
		djc_row *r = djc_row_new();
		djc_row_set_int(r, "id", (int64_t)i);
		djc_row_set_text(r, "tag", "t");
		djc_row_set_text(r, "note", "n");
		if (i < NSIZES) {
			size_t na = SIZES[i], nb = SIZES[NSIZES - 1 - i];
			unsigned char *a = value_of(na, (unsigned)i, 0), *b = value_of(nb, (unsigned)i, 1);
			djc_row_set_bytes(r, "a", a, na);
			djc_row_set_bytes(r, "b", b, nb);
			free(a);
			free(b);
		}
		const djc_row *rows[1] = {r};
		CHECK_MSG(djc_insert_ext(NULL, c, "Big", rows, 1, NULL) == 0, "insert %zu: %s", i, djc_error_last(c));
		djc_row_free(r);
	}
	calls = 0;
	mode = PASS;
	djc_rowset *rs = NULL;
	CHECK_MSG(djc_fetch(&rs, c, "Big", NULL) == 0, "fetch: %s", djc_error_last(c));
	size_t n = rs ? djc_rowset_count(rs) : 0, good = 0;
	for (size_t i = 0; i < n; i++) good += row_ok(djc_rowset_row(rs, i), i);
	CHECK_MSG(n == NSIZES + 1 && good == n, "%zu rows, %zu as inserted", n, good);
	/* the rows hold nothing else: no length column, no version column */
	const djc_row *r0 = n ? djc_rowset_row(rs, 0) : NULL;
	CHECK_MSG(r0 && djc_row_count(r0) == 5, "row 0 has %zu values", r0 ? djc_row_count(r0) : 0);
	djc_rowset_free(rs);
	long plain = 0, packed = 0;
	if (pieced) {
		over_piece(c, &plain, &packed);
		/* both kinds are there: noise is stored as it is, a long run compressed */
		CHECK_MSG(plain == 3 && packed >= 1, "%ld values over a piece stored plain, %ld compressed", plain, packed);
	}
	CHECK_MSG(calls == plain, "%s: read_pieces ran %d times (%ld plain values over a piece)", backend, calls, plain);

	/* a C make's fetch of its upstream row: the same function */
	calls = 0;
	djc_populate_options po = DJC_POPULATE_OPTIONS_INIT;
	po.make = make_use;
	djc_populate_result *pr = NULL;
	CHECK_MSG(djc_populate(&pr, c, "Use", &po) == 0, "populate: %s", djc_error_last(c));
	CHECK_MSG(pr && pr->success_count == NSIZES + 1 && pr->error_count == 0, "made %ld, failed %ld",
		  pr ? (long)pr->success_count : -1, pr ? (long)pr->error_count : -1);
	djc_populate_result_free(pr);
	long same = 0;
	djc_rowset *u = NULL;
	if (!djc_fetch(&u, c, "Use", "{\"same\": 1}")) same = (long)djc_rowset_count(u);
	djc_rowset_free(u);
	CHECK_MSG(same == (long)NSIZES + 1, "%ld of %zu makes saw their values whole", same, NSIZES + 1);
	CHECK_MSG(calls == plain, "%s: the makes' read_pieces ran %d times", backend, calls);
}

/* Big's row 90 written afresh (a = 4 pieces and 3 bytes of noise from
 * seed; seed 0: as it is), then fetched with the wrapped driver in mode
 * how. */
static int fetch_90(djc_conn *c, unsigned seed, int how, djc_rowset **rs)
{
	size_t del = 0;
	if (seed) djc_delete(&del, c, "Big", "{\"id\": 90}");
	if (seed) CHECK(put_row(c, 90, 4 * PIECE + 3, seed) == 0);
	calls = 0;
	mode = how;
	*rs = NULL;
	int rc = djc_fetch(rs, c, "Big", "{\"id\": 90}");
	mode = PASS;
	return rc;
}

static void test_changed(djc_conn *c)
{
	djc_rowset *rs = NULL;
	int rc = fetch_90(c, 7, CHANGE, &rs);
	CHECK_MSG(rc == 0, "fetch: %s", djc_error_last(c));
	unsigned char *want = value_of(4 * PIECE + 3, 1000 + 1, 0);
	if (!strcmp(backend, "postgresql")) {
		/* the first read of the pieces found the new version; the fetch
		 * started again and read the new value: one select, one read */
		CHECK_MSG(calls == 2, "read_pieces ran %d times", calls);
		CHECK(rs && djc_rowset_count(rs) == 1 && same_bytes(djc_rowset_row(rs, 0), "a", want, 4 * PIECE + 3));
	} else
		CHECK_MSG(calls == 0 && rs && djc_rowset_count(rs) == 1, "%s: read_pieces ran %d times", backend, calls);
	free(want);
	djc_rowset_free(rs);
}

static void test_deleted(djc_conn *c)
{
	djc_rowset *rs = NULL;
	int rc = fetch_90(c, 8, DELETE, &rs);
	CHECK_MSG(rc == 0, "fetch: %s", djc_error_last(c));
	if (!strcmp(backend, "postgresql"))
		CHECK_MSG(calls == 1 && rs && djc_rowset_count(rs) == 0, "read_pieces ran %d times, %zu rows", calls,
			  rs ? djc_rowset_count(rs) : 0);
	else
		CHECK(calls == 0 && rs && djc_rowset_count(rs) == 1);
	djc_rowset_free(rs);
}

static void test_busy(djc_conn *c)
{
	djc_rowset *rs = NULL;
	int rc = fetch_90(c, 9, CHANGE_ALWAYS, &rs);
	int pg = !strcmp(backend, "postgresql");
	if (pg) {
		/* the second fetch runs in a snapshot: the write before its
		 * pieces is not seen, and the value is the one its select saw
		 * (the first write's) */
		unsigned char *want = value_of(4 * PIECE + 3, 1000 + 1, 0);
		CHECK_MSG(rc == 0 && calls == 2, "rc %d after %d reads: %s", rc, calls, djc_error_last(c));
		CHECK(rs && djc_rowset_count(rs) == 1 && same_bytes(djc_rowset_row(rs, 0), "a", want, 4 * PIECE + 3));
		free(want);
	} else
		CHECK(rc == 0 && calls == 0);
	djc_rowset_free(rs);
	rs = NULL;
	/* inside a transaction of the caller's, whose reads see what others
	 * committed: five tries, then DJC_EBUSY */
	CHECK(db_begin(c->db) == 0);
	rc = fetch_90(c, 0, CHANGE_ALWAYS, &rs);
	CHECK(db_rollback(c->db) == 0);
	if (pg) {
		CHECK_MSG(rc == DJC_EBUSY && calls == 5, "rc %d after %d reads", rc, calls);
		CHECK_MSG(strstr(djc_error_last(c), "Big changed each of 5 times"), "%s", djc_error_last(c));
		CHECK(rs == NULL);
	} else
		CHECK(rc == 0 && calls == 0);
	djc_rowset_free(rs);
}

/* PostgreSQL: an adopted table whose timestamp key keeps microseconds
 * that djc's datetime drops: two rows of one INSERT (one xmin) whose keys
 * read back alike. Each value comes from its own row (the pieces are read
 * from where the select found the row, not by its key). */
static void test_lossy_key(djc_conn *c)
{
	if (strcmp(backend, "postgresql")) {
		CHECK_MSG(db_read_piece(c->db) == 0, "%s reads values whole", backend);
		return;
	}
	sb_t q = SB_INIT;
	const char *sch = c->db->schema;
	sb_add(&q, "CREATE TABLE ");
	db_qi(c->db, &q, sch);
	sb_add(&q, ".lossy (t timestamp PRIMARY KEY, v bytea NOT NULL)");
	CHECK_MSG(db_exec(c->db, sb_str(&q), NULL, 0, NULL) == 0, "%s", c->db->err);
	sb_free(&q);
	sb_add(&q, "INSERT INTO ");
	db_qi(c->db, &q, sch);
	sb_add(&q, ".lossy SELECT t, (SELECT string_agg(decode(md5(k || '.' || i), 'hex'), ''::bytea) "
		   "FROM generate_series(1, 300) i) FROM (VALUES (timestamp '2026-01-01 00:00:00', 'one'), "
		   "(timestamp '2026-01-01 00:00:00.5', 'two')) AS x(t, k)");
	CHECK_MSG(db_exec(c->db, sb_str(&q), NULL, 0, NULL) == 0, "%s", c->db->err);
	sb_free(&q);
	char pipe[256];
	snprintf(pipe, sizeof pipe, "Lossy (manual)\n    adopted = %s.lossy\n    t : datetime\n    ---\n    v : bytes\n", sch);
	char *rep = NULL;
	CHECK_MSG(djc_declare(&rep, c, pipe, "lossy.djc") == 0, "declare: %s", djc_error_last(c));
	free(rep);
	/* the values as the server has them, by their keys' order */
	sb_add(&q, "SELECT v FROM ");
	db_qi(c->db, &q, sch);
	sb_add(&q, ".lossy ORDER BY t");
	db_res *r = NULL;
	CHECK_MSG(db_exec(c->db, sb_str(&q), NULL, 0, &r) == 0 && r->nrows == 2, "%s", c->db->err);
	sb_free(&q);
	calls = 0;
	djc_rowset *rs = NULL;
	CHECK_MSG(djc_fetch(&rs, c, "Lossy", NULL) == 0, "fetch: %s", djc_error_last(c));
	size_t good = 0;
	for (size_t i = 0; r && rs && i < 2 && i < djc_rowset_count(rs); i++) {
		const val_t *v = db_cell(r, i, 0);
		good += same_bytes(djc_rowset_row(rs, i), "v", (const unsigned char *)v->s, v->n);
	}
	CHECK_MSG(rs && djc_rowset_count(rs) == 2 && good == 2 && calls == 2, "%zu rows, %zu their own values, %d reads",
		  rs ? djc_rowset_count(rs) : 0, good, calls);
	djc_rowset_free(rs);
	db_res_free(r);
}

static void test_whole(djc_conn *c)
{
	setenv("DJC_READ_PIECE", "0", 1);
	calls = 0;
	djc_rowset *rs = NULL;
	CHECK_MSG(djc_fetch(&rs, c, "Big", "{\"id\": [0, 1, 2, 3, 4, 5, 6, 7]}") == 0, "fetch: %s", djc_error_last(c));
	size_t n = rs ? djc_rowset_count(rs) : 0, good = 0;
	for (size_t i = 0; i < n; i++) good += row_ok(djc_rowset_row(rs, i), i);
	CHECK_MSG(n == NSIZES + 1 && good == n && calls == 0, "%zu rows, %zu as inserted, %d reads", n, good, calls);
	djc_rowset_free(rs);
	setenv("DJC_READ_PIECE", "1000", 1);
}

/* Wide's value for row id: 3 pieces and 7 bytes of noise */
#define WIDE_LEN (3 * PIECE + 7)

static int make_held(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	djc_rowset *rs = NULL;
	int rc = djc_make_fetch_key(&rs, ctx, "Wide", key);
	if (rc) return rc;
	int64_t id = 0;
	djc_row_get_int(&id, key, "id");
	unsigned char *want = value_of(WIDE_LEN, 500 + (unsigned)id, 0);
	int ok = djc_rowset_count(rs) == 1 && same_bytes(djc_rowset_row(rs, 0), "a", want, WIDE_LEN);
	free(want);
	djc_rowset_free(rs);
	if (!ok) {
		djc_make_error(ctx, "Wide %lld did not read back whole", (long long)id);
		return DJC_EMAKE;
	}
	djc_row *out = djc_row_new();
	djc_row_set_int(out, "n", WIDE_LEN);
	rc = djc_make_insert(ctx, NULL, out);
	djc_row_free(out);
	return rc;
}

static void test_reserved(djc_conn *c)
{
	static const char pipe[] =
		"Wide (manual)\n"
		"    id : int32\n"
		"    ---\n"
		"    a : bytes\n"
		"\n"
		"Held (computed)\n"
		"    -> Wide\n"
		"    ---\n"
		"    n : int64\n";
	enum { KEYS = 4 };
	char *rep = NULL;
	CHECK_MSG(djc_declare(&rep, c, pipe, "held.djc") == 0, "declare: %s", djc_error_last(c));
	free(rep);
	for (int id = 1; id <= KEYS; id++) {
		unsigned char *v = value_of(WIDE_LEN, 500 + (unsigned)id, 0);
		djc_row *r = djc_row_new();
		djc_row_set_int(r, "id", id);
		djc_row_set_bytes(r, "a", v, WIDE_LEN);
		const djc_row *rows[1] = {r};
		CHECK_MSG(djc_insert_ext(NULL, c, "Wide", rows, 1, NULL) == 0, "insert %d: %s", id, djc_error_last(c));
		djc_row_free(r);
		free(v);
	}
	calls = 0;
	mode = PASS;
	djc_populate_options po = DJC_POPULATE_OPTIONS_INIT;
	po.make = make_held;
	po.reserve_jobs = 1;
	djc_populate_result *pr = NULL;
	int rc = djc_populate(&pr, c, "Held", &po);
	CHECK_MSG(rc == 0, "populate: %s", djc_error_last(c));
	CHECK_MSG(pr && pr->success_count == KEYS && pr->error_count == 0 && pr->lost_count == 0 && pr->skipped_count == 0,
		  "%s: made %ld, failed %ld, lost %ld, skipped %ld of %d", backend, pr ? pr->success_count : -1,
		  pr ? pr->error_count : -1, pr ? pr->lost_count : -1, pr ? pr->skipped_count : -1, KEYS);
	djc_populate_result_free(pr);
	djc_rowset *rs = NULL;
	size_t made = djc_fetch(&rs, c, "Held", NULL) ? 0 : djc_rowset_count(rs);
	djc_rowset_free(rs);
	CHECK_MSG(made == KEYS, "%zu rows of Held", made);
	/* no job left: each one's row deleted by its commit, none still reserved */
	rs = NULL;
	CHECK_MSG(djc_jobs_list(&rs, c, "Held", NULL) == 0, "jobs: %s", djc_error_last(c));
	size_t left = rs ? djc_rowset_count(rs) : 0, reserved = 0;
	for (size_t i = 0; i < left; i++) {
		const char *st = NULL;
		reserved += !djc_row_get_text(&st, djc_rowset_row(rs, i), "status") && st && !strcmp(st, "reserved");
	}
	djc_rowset_free(rs);
	CHECK_MSG(left == 0, "%s: %zu jobs left, %zu of them reserved", backend, left, reserved);
	/* every make read its value in pieces where values are (PostgreSQL) */
	int pg = !strcmp(backend, "postgresql");
	CHECK_MSG(calls == (pg ? KEYS : 0), "%s: read_pieces ran %d times", backend, calls);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_pieces", "values changed deleted busy lossy_key whole:values reserved");
	url = getenv("DJC_TEST_URL");
	schema = getenv("DJC_TEST_SCHEMA");
	backend = getenv("DJC_BACKEND");
	if (!url) url = "sqlite:/tmp/djc-test-pieces.db";
	if (!backend) backend = "sqlite";
	setenv("DJC_READ_PIECE", "1000", 1);
	djc_conn *c = t_open(url, schema);
	char *rep = NULL;
	int rc = djc_declare(&rep, c, PIPE, "pieces.djc");
	CHECK_MSG(rc == 0, "declare: %s", djc_error_last(c));
	free(rep);
	other = t_open(url, schema);
	wrap(c);
	if (t_want("values")) test_values(c);
	if (t_want("changed")) test_changed(c);
	if (t_want("deleted")) test_deleted(c);
	if (t_want("busy")) test_busy(c);
	if (t_want("lossy_key")) test_lossy_key(c);
	if (t_want("whole")) test_whole(c);
	if (t_want("reserved")) test_reserved(c);
	djc_close(other);
	djc_close(c);
	return T_DONE("test_pieces");
}
