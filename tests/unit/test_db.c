/* test_db.c - driver conformance: the same checks for every backend.
 * The URL comes from $DJC_TEST_URL (default: a fresh SQLite file). */
#include "t.h"
#include "db/db.h"
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static db_conn *open_or_die(const char *url, const char *schema)
{
	char err[512];
	db_conn *c = NULL;
	int rc = db_open(&c, url, schema, err, sizeof err);
	if (rc) { fprintf(stderr, "cannot open %s: %s\n", url, err); exit(1); }
	return c;
}

static void ddl(db_conn *c, const char *sql)
{
	int rc = db_exec(c, sql, NULL, 0, NULL);
	CHECK_MSG(rc == 0, "%s -> %s", sql, c->err);
}

static void q(db_conn *c, sb_t *b, const char *name) { sb_reset(b); db_qi(c, b, name); }

/* The heartbeat's side of the urgent-thread test: one statement, marked
 * urgent. */
static void *urgent_insert(void *arg)
{
	db_conn *c = arg;
	db_thread_urgent(1);
	int rc = db_exec(c, "INSERT INTO t_urgent (k) VALUES (1)", NULL, 0, NULL);
	CHECK_MSG(rc == 0, "urgent insert -> %s", c->err);
	return NULL;
}

/* URL parsing */
static void test_url_parsing(void)
{
	db_url u;
	char err[256];
	CHECK(db_url_parse(&u, "postgresql://al%40ice:p%3Aw@db.example:6543/lab?sslmode=require", err, sizeof err) == 0);
	CHECK_STR(u.user, "al@ice");
	CHECK_STR(u.password, "p:w");
	CHECK_STR(u.host, "db.example");
	CHECK(u.port == 6543);
	CHECK_STR(u.dbname, "lab");
	CHECK(u.nopts == 0);   /* libpq's parameters go to libpq with the URL */
	CHECK_STR(u.conninfo, "postgresql://al%40ice:p%3Aw@db.example:6543/lab?sslmode=require");
	CHECK_STR(u.redacted, "postgresql://al@ice:***@db.example:6543/lab?sslmode=require");
	db_url_free(&u);
	/* PostgreSQL URLs are parsed by libpq (PQconninfoParse): every URL it takes */
	CHECK(db_url_parse(&u, "postgresql://u:pw1234@h1:5432,h2:5433/lab?target_session_attrs=read-write", err, sizeof err) == 0);
	CHECK_STR(u.host, "h1,h2");
	CHECK(u.port == 0);
	CHECK_STR(u.password, "pw1234");
	CHECK_STR(u.redacted, "postgresql://u:***@h1:5432,h2:5433/lab?target_session_attrs=read-write");
	db_url_free(&u);
	CHECK(db_url_parse(&u, "postgres://h/lab?user=bob&password=Secr3tPw&sslpassword=KeyPw123", err, sizeof err) == 0);
	CHECK_STR(u.user, "bob");
	CHECK_STR(u.password, "Secr3tPw");
	CHECK_STR(u.redacted, "postgresql://bob:***@h/lab");
	db_url_free(&u);
	CHECK(db_url_parse(&u, "postgresql://?service=lab", err, sizeof err) == 0);
	CHECK_STR(u.redacted, "postgresql://?service=lab");
	db_url_free(&u);
	CHECK(db_url_parse(&u, "postgresql://%2Fvar%2Frun%2Fpostgresql/lab", err, sizeof err) == 0);
	CHECK_STR(u.host, "/var/run/postgresql");
	CHECK_STR(u.redacted, "postgresql://[socket]/lab");
	db_url_free(&u);
	CHECK(db_url_parse(&u, "postgresql://h/db?djc_mode=x%20y&sslmode=require", err, sizeof err) == 0);
	CHECK(u.nopts == 1 && !strcmp(u.opt_keys[0], "djc_mode") && !strcmp(u.opt_vals[0], "x y"));
	CHECK_STR(u.conninfo, "postgresql://h/db?sslmode=require");
	db_url_free(&u);
	/* refused as libpq refuses them, the password never in the message */
	static const struct { const char *url, *msg; } bad[] = {
		{"postgresql://u:Secr3tPw@h/db?bogus=1", "database URL: postgresql: invalid URI query parameter: \"bogus\""},
		{"postgresql://u:Secr3tPw@h:abc/db", "database URL has a bad port 'abc'"},
		{"postgresql://u:Secr3tPw@h1:5432,h2:0/db", "database URL has a bad port '0'"},
		{"postgresql://u:Secr3tPw@h/db?sslmode=%zz", "database URL: postgresql: invalid percent-encoded token: \"%zz\""},
		{"postgresql://u:Secr3t%zz@h/db", NULL},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		CHECK(db_url_parse(&u, bad[i].url, err, sizeof err) == DJC_EINVAL);
		if (bad[i].msg) CHECK_STR(err, bad[i].msg);
		CHECK(strstr(err, "Secr3t") == NULL);
	}
	CHECK(db_url_parse(&u, "mysql://root@127.0.0.1:99999/x", err, sizeof err) == DJC_EINVAL);
	CHECK(strstr(err, "port") != NULL);
	CHECK(db_url_parse(&u, "oracle://x", err, sizeof err) == DJC_EINVAL);
	CHECK(db_url_parse(&u, "sqlite:", err, sizeof err) == DJC_EINVAL);
	CHECK(db_url_parse(&u, "sqlite:/tmp/x.db", err, sizeof err) == 0 && !strcmp(u.path, "/tmp/x.db"));
	db_url_free(&u);
	CHECK(db_ident_ok("session_2"));
	CHECK(!db_ident_ok("a;drop"));
	CHECK(!db_ident_ok("a\"b"));
	CHECK(!db_ident_ok("9a"));
	/* MariaDB/MySQL: a NO PAD binary collation where the server has one */
	CHECK_STR(db_mysql_collation("10.11.6-MariaDB-0+deb12u1"), "utf8mb4_nopad_bin");
	CHECK_STR(db_mysql_collation("5.5.5-10.2.44-MariaDB"), "utf8mb4_nopad_bin");
	CHECK_STR(db_mysql_collation("11.4.2-MariaDB"), "utf8mb4_nopad_bin");
	CHECK_STR(db_mysql_collation("10.1.48-MariaDB"), "utf8mb4_bin");
	CHECK_STR(db_mysql_collation("8.0.36"), "utf8mb4_0900_bin");
	CHECK_STR(db_mysql_collation("8.0.17"), "utf8mb4_0900_bin");
	CHECK_STR(db_mysql_collation("8.0.16"), "utf8mb4_bin");
	CHECK_STR(db_mysql_collation("8.4.0"), "utf8mb4_0900_bin");
	CHECK_STR(db_mysql_collation("5.7.44-log"), "utf8mb4_bin");
	CHECK_STR(db_mysql_collation("garbage"), "utf8mb4_bin");
	CHECK_STR(db_mysql_collation(NULL), "utf8mb4_bin");
}

/* a table with every column type */
/* PostgreSQL's bytea comes back in the server's bytea_output format: hex
 * (the default, decoded by the driver itself) and escape (PQunescapeBytea):
 * every byte value, and the empty value, the same in both. */
static void pg_bytea_formats(db_conn *c)
{
	char all[256];
	for (int i = 0; i < 256; i++) all[i] = (char)i;
	for (int f = 0; f < 2; f++) {
		const char *fmt = f ? "escape" : "hex";
		char set[64];
		snprintf(set, sizeof set, "SET bytea_output = '%s'", fmt);
		CHECK_MSG(db_exec(c, set, NULL, 0, NULL) == 0, "%s: %s", set, c->err);
		val_t pb[2] = {val_textn(all, sizeof all), val_textn("", 0)};
		pb[0].t = pb[1].t = DJC_BYTES;
		db_res *r = NULL;
		/* a statement of its own for each format, read in text: a float8
		 * column keeps it so (rows of bytea and the types binary_val
		 * reads come in binary, where bytea_output plays no part) */
		char sel[96];
		snprintf(sel, sizeof sel, "SELECT CAST(? AS bytea) AS %s_a, CAST(? AS bytea) AS %s_e, 0.5::float8", fmt, fmt);
		int rc = db_exec(c, sel, pb, 2, &r);
		CHECK_MSG(rc == 0 && r && r->nrows == 1, "bytea as %s: %s", fmt, c->err);
		if (!rc && r && r->nrows == 1) {
			const val_t *a = db_cell(r, 0, 0), *e = db_cell(r, 0, 1);
			CHECK_MSG(a->t == DJC_BYTES && a->n == sizeof all && !memcmp(a->s, all, sizeof all),
				  "every byte value as %s: type %u, %zu bytes", fmt, a->t, a->n);
			CHECK_MSG(e->t == DJC_BYTES && e->n == 0, "the empty value as %s: type %u, %zu bytes", fmt, e->t, e->n);
		}
		db_res_free(r);
		val_free(&pb[0]);
		val_free(&pb[1]);
	}
	CHECK(db_exec(c, "SET bytea_output = 'hex'", NULL, 0, NULL) == 0);
}

/* Whether two results hold the same cells in their first ncols columns
 * (all of a's when 0): types, values, lengths. */
static int same_cells(const db_res *a, const db_res *b, size_t ncols, char *why, size_t n)
{
	if (!ncols) ncols = a->ncols;
	if (a->nrows != b->nrows || a->ncols < ncols || b->ncols < ncols) {
		snprintf(why, n, "%zux%zu against %zux%zu", a->nrows, a->ncols, b->nrows, b->ncols);
		return 0;
	}
	for (size_t j = 0; j < a->nrows; j++)
		for (size_t i = 0; i < ncols; i++) {
			const val_t *x = db_cell(a, j, i), *y = db_cell(b, j, i);
			int same = x->t == y->t && x->i == y->i && x->n == y->n && (!x->n || !memcmp(x->s, y->s, x->n)) &&
				   (x->s == NULL) == (y->s == NULL);
			if (!same) {
				snprintf(why, n, "row %zu column %s: type %u/%u, %lld/%lld, %zu/%zu bytes", j, a->cols[i], x->t, y->t,
					 (long long)x->i, (long long)y->i, x->n, y->n);
				return 0;
			}
		}
	return 1;
}

/* A statement whose rows hold bytea and only types the driver reads in
 * binary (integers, bool, text types, xid) is read in binary from its
 * first run (its Describe, in the Prepare's round trip, says the types):
 * every run gives the cells the same columns read in text give (a float8
 * column keeps a statement in text), edge values included, NULLs too. */
static void pg_binary_rows(db_conn *c)
{
	ddl(c, "CREATE TABLE t_bin (id BIGINT PRIMARY KEY, a SMALLINT, b INTEGER, c BOOLEAN, t TEXT, v VARCHAR(10), "
	       "ch CHAR(4), bn BYTEA, f DOUBLE PRECISION)");
	char big[70000];
	for (size_t k = 0; k < sizeof big; k++) big[k] = (char)(k * 7 + 3);
	val_t r1[9] = {val_int(INT64_MIN), val_int(-32768), val_int(INT32_MIN), val_int(1), val_text("\xc3\xa9t\xc3\xa9 'x'"),
		       val_text(""), val_text("ab"), val_textn(big, sizeof big), val_float(0.1)};
	val_t r2[9] = {val_int(INT64_MAX), val_int(32767), val_int(INT32_MAX), val_int(0), val_text("x"), val_text("0123456789"),
		       val_text("abcd"), val_textn("", 0), val_float(-2.5e300)};
	val_t r3[9] = {val_int(0), val_null(), val_null(), val_null(), val_null(), val_null(), val_null(), val_null(), val_null()};
	r1[7].t = r2[7].t = DJC_BYTES;
	r1[3].t = r2[3].t = DJC_BOOL;
	const char *ins = "INSERT INTO t_bin VALUES (?,?,?,?,?,?,?,?,?)";
	CHECK_MSG(db_exec(c, ins, r1, 9, NULL) == 0, "%s", c->err);
	CHECK_MSG(db_exec(c, ins, r2, 9, NULL) == 0, "%s", c->err);
	CHECK_MSG(db_exec(c, ins, r3, 9, NULL) == 0, "%s", c->err);
	/* per pair: the statement, the same columns and f (read in text) */
	const char *sel[][2] = {{"SELECT id, a, b, c, t, v, ch, bn, xmin FROM t_bin ORDER BY id",
				 "SELECT id, a, b, c, t, v, ch, bn, xmin, f FROM t_bin ORDER BY id"},
				{"SELECT id, bn FROM t_bin ORDER BY id", "SELECT id, bn, f FROM t_bin ORDER BY id"}};
	for (size_t q = 0; q < 2; q++) {
		db_res *first = NULL, *text = NULL;
		CHECK_MSG(db_exec(c, sel[q][0], NULL, 0, &first) == 0 && first && first->nrows == 3, "%s: %s", sel[q][0],
			  c->err);
		CHECK_MSG(db_exec(c, sel[q][1], NULL, 0, &text) == 0 && text && text->nrows == 3, "%s: %s", sel[q][1],
			  c->err);
		if (!first || first->nrows != 3 || !text) { db_res_free(first); db_res_free(text); continue; }
		for (int run = 1; run <= 4; run++) {
			db_res *r = NULL;
			char why[200] = "";
			if (run > 1) CHECK_MSG(db_exec(c, sel[q][0], NULL, 0, &r) == 0 && r, "%s: %s", sel[q][0], c->err);
			CHECK_MSG(same_cells(r ? r : first, text, first->ncols, why, sizeof why),
				  "%s, run %d against the text reading: %s", sel[q][0], run, why);
			db_res_free(r);
		}
		db_res_free(text);
		/* and the first run's cells are the values inserted (ordered by id:
		 * r1, r3, r2) */
		const val_t *bn = db_cell(first, 0, q ? 1 : 7);
		CHECK(bn->t == DJC_BYTES && bn->n == sizeof big && !memcmp(bn->s, big, sizeof big));
		CHECK(db_cell_int(first, 0, 0) == INT64_MIN && db_cell_int(first, 2, 0) == INT64_MAX);
		if (!q) {
			CHECK(db_cell_int(first, 0, 1) == -32768 && db_cell_int(first, 2, 1) == 32767);
			CHECK(db_cell_int(first, 0, 2) == INT32_MIN && db_cell_int(first, 2, 2) == INT32_MAX);
			CHECK(db_cell(first, 0, 3)->t == DJC_INT && db_cell_int(first, 0, 3) == 1 && db_cell_int(first, 2, 3) == 0);
			CHECK_STR(db_cell_text(first, 0, 4), "\xc3\xa9t\xc3\xa9 'x'");
			CHECK_STR(db_cell_text(first, 0, 5), "");
			CHECK_STR(db_cell_text(first, 0, 6), "ab  ");
			CHECK_STR(db_cell_text(first, 2, 5), "0123456789");
			CHECK(db_cell(first, 2, 7)->t == DJC_BYTES && db_cell(first, 2, 7)->n == 0);
			for (int k = 1; k < 8; k++) CHECK(db_cell(first, 1, (size_t)k)->t == DJC_NULL);
			const char *x = db_cell_text(first, 0, 8);
			CHECK_MSG(x && *x >= '1' && *x <= '9' && strspn(x, "0123456789") == strlen(x), "xmin %s", x ? x : "null");
		}
		db_res_free(first);
	}
	for (int k = 0; k < 9; k++) { val_free(&r1[k]); val_free(&r2[k]); }
	ddl(c, "DROP TABLE t_bin");
}

/* A slot of the statement cache given to a statement prepared in a
 * pipeline (db_batch) forgets how the slot's earlier statement was read:
 * the least recently used slot, held by one read in binary, goes to a
 * batch's float8 statement, whose later runs must stay in text (in binary
 * its cell would be the double's 8 raw bytes). */
static void pg_cache_slot_reused(db_conn *c)
{
	db_res *r = NULL;
	/* 64 statements read in binary (the cache holds 64): every slot the
	 * batch's statement may take held one of them */
	for (int k = 0; k < 64; k++) {
		char q[64];
		snprintf(q, sizeof q, "SELECT CAST('ab' AS bytea) AS slot_%d", k);
		CHECK_MSG(db_exec(c, q, NULL, 0, NULL) == 0, "%s: %s", q, c->err);
	}
	const char *sql = "SELECT CAST(? AS float8) AS slot_f";
	val_t p = val_float(0.25);
	db_item it = {sql, &p, 1, -1, NULL};
	size_t failed = 0;
	CHECK_MSG(db_batch(c, &it, 1, &r, &failed) == 0 && r, "batch: %s", c->err);
	if (r) CHECK_STR(db_cell_text(r, 0, 0), "0.25");
	db_res_free(r);
	r = NULL;
	for (int run = 1; run <= 2; run++) {
		CHECK_MSG(db_exec(c, sql, &p, 1, &r) == 0 && r, "%s: %s", sql, c->err);
		if (r) CHECK_MSG(r->nrows == 1 && db_cell_text(r, 0, 0) && !strcmp(db_cell_text(r, 0, 0), "0.25"),
				 "run %d of the batch's statement: %zu bytes", run, r->nrows ? db_cell(r, 0, 0)->n : 0);
		db_res_free(r);
		r = NULL;
	}
}

/* A large value that djc writes is compressed with lz4 where the server
 * has it (PostgreSQL 14+ built with it) and nothing chose otherwise; a
 * client's own choice (PGOPTIONS) stays, and through a transaction pooler
 * djc sets nothing (the server's pglz). */
static void pg_toast_lz4(db_conn *c, const char *url, const char *schema)
{
	db_res *r = NULL;
	CHECK_MSG(db_exec(c, "SELECT current_setting('server_version_num')::int >= 140000, 'lz4' = ANY(enumvals) "
			     "FROM pg_settings WHERE name = 'default_toast_compression'", NULL, 0, &r) == 0, "%s", c->err);
	int v14 = r && r->nrows == 1 && db_cell_int(r, 0, 0), offers = v14 && db_cell_int(r, 0, 1);
	db_res_free(r);
	if (!v14) return;   /* pg_column_compression is 14's; before it pglz alone */
	int pooled = strstr(url, "pooler=transaction") != NULL;
	const char *had = getenv("PGOPTIONS");
	char *saved = had ? strdup(had) : NULL;
	ddl(c, "CREATE TABLE t_toast (id BIGINT PRIMARY KEY, b BYTEA)");
	size_t n = 1 << 20;
	char *big = malloc(n);
	for (size_t k = 0; k < n; k++) big[k] = "abcdefgh"[k % 8];
	for (int k = 0; k < (pooled ? 1 : 2); k++) {
		db_conn *w = c;
		if (k) {
			setenv("PGOPTIONS", "-c default_toast_compression=pglz", 1);
			w = open_or_die(url, schema);
			if (saved) setenv("PGOPTIONS", saved, 1);
			else unsetenv("PGOPTIONS");
		}
		val_t p[2] = {val_int(k), val_textn(big, n)};
		p[1].t = DJC_BYTES;
		CHECK_MSG(db_exec(w, "INSERT INTO t_toast VALUES (?, ?)", p, 2, NULL) == 0, "%s", w->err);
		val_free(&p[1]);
		if (k) db_close(w);
	}
	free(big);
	free(saved);
	CHECK_MSG(db_exec(c, "SELECT id, pg_column_compression(b) FROM t_toast ORDER BY id", NULL, 0, &r) == 0 && r,
		  "%s", c->err);
	if (r && r->nrows >= 1) {
		CHECK_STR(db_cell_text(r, 0, 1), offers && !pooled ? "lz4" : "pglz");   /* djc's own choice */
		if (r->nrows > 1) CHECK_STR(db_cell_text(r, 1, 1), "pglz");           /* PGOPTIONS' */
	}
	CHECK(r && r->nrows == (pooled ? 1u : 2u));
	db_res_free(r);
	ddl(c, "DROP TABLE t_toast");
}

static void test_every_type(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	sb_t b = SB_INIT;
	coldef defs[] = {
		{T_INT64, 0, 0, NULL, 0}, {T_INT8, 0, 0, NULL, 0}, {T_UINT64, 0, 0, NULL, 0},
		{T_FLOAT64, 0, 0, NULL, 0}, {T_FLOAT32, 0, 0, NULL, 0}, {T_BOOL, 0, 0, NULL, 0},
		{T_DECIMAL, 10, 3, NULL, 0}, {T_VARCHAR, 20, 0, NULL, 0}, {T_DATE, 0, 0, NULL, 0},
		{T_DATETIME, 3, 0, NULL, 0}, {T_UUID, 0, 0, NULL, 0}, {T_JSON, 0, 0, NULL, 0},
		{T_BYTES, 0, 0, NULL, 0}, {T_TEXT, 0, 0, NULL, 0}, {T_UINT32, 0, 0, NULL, 0},
	};
	const char *names[] = {"id", "i8", "u64", "f64", "f32", "flag", "dec", "vc", "d", "dt", "uid", "js", "raw", "txt", "u32"};
	size_t ncol = sizeof defs / sizeof *defs;
	sb_add(&b, "CREATE TABLE t_vals (");
	for (size_t i = 0; i < ncol; i++) {
		if (i) sb_add(&b, ", ");
		db_qi(c, &b, names[i]);
		sb_addc(&b, ' ');
		c->drv->column_type(&b, &defs[i]);
		if (i == 0) sb_add(&b, " NOT NULL");
	}
	sb_add(&b, ", PRIMARY KEY (id))");
	sb_add(&b, c->drv->table_suffix);
	ddl(c, sb_str(&b));

	val_t p[15];
	p[0] = val_int(INT64_MIN);
	p[1] = val_int(-128);
	p[2] = val_null(); p[2].t = DJC_UINT; p[2].u = UINT64_MAX;
	p[3] = val_float(0.1 + 0.2);
	p[4] = val_float(1.5);
	p[5] = val_null(); p[5].t = DJC_BOOL; p[5].i = 1;
	p[6] = val_text("1234567.125");
	p[7] = val_text("it's \"q\"; --x\\");
	p[8] = val_text("2024-02-29");
	p[9] = val_text("2024-02-29 23:59:59.123");
	p[10] = val_text("123e4567-e89b-12d3-a456-426614174000");
	p[11] = val_text("{\"a\":[1,2]}");
	p[12] = val_textn("\0\1\2\xff", 4); p[12].t = DJC_BYTES;
	p[13] = val_text("long text");
	p[14] = val_int(4294967295LL);
	sb_reset(&b);
	sb_add(&b, "INSERT INTO t_vals VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
	db_res *r = NULL;
	int rc = db_exec(c, sb_str(&b), p, ncol, &r);
	CHECK_MSG(rc == 0, "%s", c->err);
	CHECK(r && r->affected == 1);
	db_res_free(r);
	rc = db_exec(c, sb_str(&b), p, ncol, NULL);
	CHECK_MSG(rc == DJC_EDUPLICATE, "duplicate -> %d %s", rc, c->err);
	p[0] = val_int(INT64_MAX);
	p[2].u = 0;
	CHECK(db_exec(c, sb_str(&b), p, ncol, NULL) == 0);
	p[0] = val_int(INT64_MIN);

	rc = db_exec(c, "SELECT * FROM t_vals ORDER BY id", NULL, 0, &r);
	CHECK_MSG(rc == 0, "%s", c->err);
	if (rc == 0) {
		CHECK(r->nrows == 2 && r->ncols == ncol);
		CHECK(db_cell_int(r, 0, 0) == INT64_MIN);
		CHECK(db_cell_int(r, 1, 0) == INT64_MAX);
		CHECK(db_cell_int(r, 0, 1) == -128);
		CHECK_STR(db_cell_text(r, 0, 2), c->drv == &db_sqlite_driver ? "-1" : "18446744073709551615");
		const char *f = db_cell_text(r, 0, 3);
		CHECK_MSG(f && strtod(f, NULL) == 0.1 + 0.2, "float64 %s", f ? f : "null");
		CHECK(strtod(db_cell_text(r, 0, 4), NULL) == 1.5);
		const char *fl = db_cell_text(r, 0, 5);
		CHECK_MSG(fl && (!strcmp(fl, "1") || !strcmp(fl, "t") || !strcmp(fl, "true")), "bool %s", fl ? fl : "null");
		CHECK_STR(db_cell_text(r, 0, 6), "1234567.125");
		CHECK_STR(db_cell_text(r, 0, 7), "it's \"q\"; --x\\");
		CHECK_STR(db_cell_text(r, 0, 8), "2024-02-29");
		CHECK_STR(db_cell_text(r, 0, 9), "2024-02-29 23:59:59.123");
		CHECK_STR(db_cell_text(r, 0, 10), "123e4567-e89b-12d3-a456-426614174000");
		const val_t *raw = db_cell(r, 0, 12);
		CHECK(raw->t == DJC_BYTES && raw->n == 4 && !memcmp(raw->s, "\0\1\2\xff", 4));
		CHECK(db_cell_int(r, 0, 14) == 4294967295LL);
		db_res_free(r);
	}
	for (size_t i = 0; i < ncol; i++) val_free(&p[i]);
	sb_free(&b);
	if (c->drv == &db_postgres_driver) {
		pg_bytea_formats(c);
		pg_binary_rows(c);
		pg_cache_slot_reused(c);
		pg_toast_lz4(c, url, schema);
	}
}

/* foreign keys */
static void test_foreign_keys(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	int rc;
	ddl(c, c->drv == &db_mysql_driver
		? "CREATE TABLE t_child (id BIGINT NOT NULL, k INT NOT NULL, PRIMARY KEY (id, k), FOREIGN KEY (id) REFERENCES t_vals (id)) ENGINE=InnoDB"
		: "CREATE TABLE t_child (id BIGINT NOT NULL, k INT NOT NULL, PRIMARY KEY (id, k), FOREIGN KEY (id) REFERENCES t_vals (id))");
	val_t fk[2] = {val_int(42), val_int(1)};
	rc = db_exec(c, "INSERT INTO t_child (id, k) VALUES (?, ?)", fk, 2, NULL);
	CHECK_MSG(rc == DJC_EFOREIGN, "missing parent -> %d %s", rc, c->err);
	fk[0] = val_int(INT64_MAX);
	CHECK(db_exec(c, "INSERT INTO t_child (id, k) VALUES (?, ?)", fk, 2, NULL) == 0);
	val_t del = val_int(INT64_MAX);
	rc = db_exec(c, "DELETE FROM t_vals WHERE id = ?", &del, 1, NULL);
	CHECK_MSG(rc == DJC_EFOREIGN, "referenced parent -> %d %s", rc, c->err);
}

/* transactions: rollback discards, commit keeps */
static void test_transactions(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	val_t fk[2] = {val_int(INT64_MAX), val_int(1)};
	db_res *r = NULL;
	CHECK(db_begin(c) == 0);
	fk[1] = val_int(2);
	CHECK(db_exec(c, "INSERT INTO t_child (id, k) VALUES (?, ?)", fk, 2, NULL) == 0);
	CHECK(db_rollback(c) == 0);
	CHECK(db_exec(c, "SELECT count(*) FROM t_child", NULL, 0, &r) == 0);
	CHECK(r && db_cell_int(r, 0, 0) == 1);
	db_res_free(r);
	/* a failed statement inside a transaction, then rollback, leaves the connection usable */
	CHECK(db_begin(c) == 0);
	CHECK(db_exec(c, "INSERT INTO t_child (id, k) VALUES (?, ?)", fk, 2, NULL) == 0);
	fk[0] = val_int(7);
	CHECK(db_exec(c, "INSERT INTO t_child (id, k) VALUES (?, ?)", fk, 2, NULL) == DJC_EFOREIGN);
	CHECK(db_rollback(c) == 0);
	CHECK(db_exec(c, "SELECT count(*) FROM t_child", NULL, 0, &r) == 0);
	CHECK(r && db_cell_int(r, 0, 0) == 1);
	db_res_free(r);
}

/* insert-ignore fragments */
static void test_insert_ignore(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	sb_t b = SB_INIT;
	val_t fk[2];
	db_res *r = NULL;
	int rc;
	sb_reset(&b);
	sb_printf(&b, "%s t_child (id, k) VALUES (?, ?)%s", c->drv->insert_ignore_head, c->drv->insert_ignore_tail);
	fk[0] = val_int(INT64_MAX); fk[1] = val_int(1);
	rc = db_exec(c, sb_str(&b), fk, 2, &r);
	CHECK_MSG(rc == 0 && r->affected == 0, "insert ignore -> %d %s", rc, c->err);
	db_res_free(r);
	sb_free(&b);
}

/* quoting: names built to break SQL are just names */
static void test_quoting(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	sb_t b = SB_INIT, n = SB_INIT;
	q(c, &n, "we\"ird`; DROP TABLE t_vals; --");
	sb_reset(&b);
	sb_printf(&b, "CREATE TABLE %s (x INT)", sb_str(&n));
	ddl(c, sb_str(&b));
	sb_reset(&b);
	sb_printf(&b, "DROP TABLE %s", sb_str(&n));
	ddl(c, sb_str(&b));
	CHECK(db_exec(c, "SELECT count(*) FROM t_vals", NULL, 0, NULL) == 0);
	sb_free(&b);
	sb_free(&n);
}

/* clock fragments: now_plus(+60) > now > now_plus(-60) */
static void test_clock(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	sb_t b = SB_INIT;
	db_res *r = NULL;
	int rc;
	sb_reset(&b);
	sb_add(&b, "SELECT CASE WHEN ");
	c->drv->now_plus(&b);
	sb_add(&b, " > ");
	c->drv->now(&b);
	sb_add(&b, " AND ");
	c->drv->now_plus(&b);
	sb_add(&b, " < ");
	c->drv->now(&b);
	sb_add(&b, " THEN 1 ELSE 0 END");
	val_t secs[2] = {val_float(60.5), val_float(-60.5)};
	rc = db_exec(c, sb_str(&b), secs, 2, &r);
	CHECK_MSG(rc == 0 && db_cell_int(r, 0, 0) == 1, "clock -> %d %s", rc, c->err);
	db_res_free(r);
	sb_free(&b);
}

/* claim: two connections never get the same row; order respected */
static void test_claim(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	sb_t n = SB_INIT;
	db_res *r = NULL;
	int rc;
	ddl(c, c->drv == &db_mysql_driver
		? "CREATE TABLE t_queue (k INT NOT NULL, prio INT NOT NULL, owner INT NOT NULL, PRIMARY KEY (k)) ENGINE=InnoDB"
		: "CREATE TABLE t_queue (k INT NOT NULL, prio INT NOT NULL, owner INT NOT NULL, PRIMARY KEY (k))");
	for (int i = 0; i < 10; i++) {
		val_t a[2] = {val_int(i), val_int(10 - i)};
		CHECK(db_exec(c, "INSERT INTO t_queue (k, prio, owner) VALUES (?, ?, 0)", a, 2, NULL) == 0);
	}
	sb_reset(&n);
	db_qi(c, &n, "k");
	val_t own1 = val_int(1), own2 = val_int(2), zero = val_int(0);
	db_claim cl = {.table = "t_queue", .key_cols = sb_str(&n), .where = "owner = ?", .wparams = &zero, .nw = 1,
		       .order = "prio, k", .limit = 3, .set = "owner = ?", .sparams = &own1, .ns = 1};
	rc = c->drv->claim(c, &cl, &r);
	CHECK_MSG(rc == 0 && r && r->nrows == 3, "claim -> %d %s", rc, c->err);
	if (r) {
		int64_t got[3] = {0};
		for (size_t i = 0; i < r->nrows && i < 3; i++) got[i] = db_cell_int(r, i, 0);
		int has9 = 0, has8 = 0, has7 = 0;
		for (int i = 0; i < 3; i++) { has9 |= got[i] == 9; has8 |= got[i] == 8; has7 |= got[i] == 7; }
		CHECK(has9 && has8 && has7);
		db_res_free(r);
	}
	cl.sparams = &own2;
	cl.limit = 100;
	rc = c2->drv->claim(c2, &cl, &r);
	CHECK_MSG(rc == 0 && r && r->nrows == 7, "second claim -> %d %s", rc, c2->err);
	db_res_free(r);
	rc = c2->drv->claim(c2, &cl, &r);
	CHECK(rc == 0 && r && r->nrows == 0);
	db_res_free(r);
	CHECK(db_exec(c, "SELECT count(*) FROM t_queue WHERE owner = 1", NULL, 0, &r) == 0 && db_cell_int(r, 0, 0) == 3);
	db_res_free(r);
	sb_free(&n);
}

/* batch: the items in one transaction, all or nothing; an item that
 * changes other than `expect` rows fails as DB_EEXPECT and names its
 * index, so does a statement's error; the claim's rows come back. On
 * MariaDB (10.3+) a batch with a claim of one job is one statement
 * (my_batch) unless DJC_MYSQL_COMPOUND=0; the suite runs this test
 * both ways. */
static void test_batch(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	sb_t n = SB_INIT;
	db_qi(c, &n, "k");
	val_t zero = val_int(0);
	db_res *r = NULL;
	int rc;
	{
		int my = c->drv == &db_mysql_driver;
		ddl(c, "UPDATE t_queue SET owner = 0");
		ddl(c, "CREATE INDEX t_queue_next ON t_queue (owner, prio)");
		ddl(c, my ? "CREATE TABLE t_made (k INT NOT NULL, PRIMARY KEY (k)) ENGINE=InnoDB"
			  : "CREATE TABLE t_made (k INT NOT NULL, PRIMARY KEY (k))");
		val_t k9 = val_int(9), k7 = val_int(7), k0 = val_int(0), own6 = val_int(6), none = val_int(99);
		const char *fence = "UPDATE t_queue SET owner = 5 WHERE k = ? AND owner = 0";
		db_claim one = {.table = "t_queue", .key_cols = sb_str(&n), .extra = "prio * 10", .where = "owner = ?",
				.wparams = &zero, .nw = 1, .order = "prio", .index = "t_queue_next", .limit = 1,
				.set = "owner = ?", .sparams = &own6, .ns = 1};
		db_item it[3] = {{.sql = fence, .params = &k9, .np = 1, .expect = 1},
				 {.sql = "INSERT INTO t_made (k) VALUES (?)", .params = &k9, .np = 1, .expect = -1},
				 {.claim = &one, .expect = -1}};
		db_res *out[3] = {0}, *qa = NULL, *qb = NULL;
		size_t failed = 99;
		const char *questions = "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'QUESTIONS'";
		const char *cenv = getenv("DJC_MYSQL_COMPOUND");
		db_res *ver = NULL;
		/* the driver's compound needs MariaDB 10.3 or later */
		int mariadb = my && db_exec(c, "SELECT VERSION()", NULL, 0, &ver) == 0 && strstr(db_cell_text(ver, 0, 0), "MariaDB");
		int major = 0, minor = 0;
		if (mariadb) sscanf(db_cell_text(ver, 0, 0), "%d.%d", &major, &minor);
		db_res_free(ver);
		int compound = mariadb && (major > 10 || (major == 10 && minor >= 3)) && !(cenv && !strcmp(cenv, "0"));
		if (mariadb) CHECK_MSG(major >= 10, "MariaDB version %d.%d", major, minor);
		if (compound) CHECK(db_exec(c, questions, NULL, 0, &qa) == 0);
		rc = db_batch(c, it, 3, out, &failed);
		if (compound) {
			/* the statement that reads the count, and the batch */
			CHECK(db_exec(c, questions, NULL, 0, &qb) == 0);
			long before = qa ? atol(db_cell_text(qa, 0, 0)) : 0, after = qb ? atol(db_cell_text(qb, 0, 0)) : 0;
			CHECK_MSG(after - before == 2, "a batch sent %ld statements, not 1", after - before - 1);
			db_res_free(qa);
			db_res_free(qb);
		}
		CHECK_MSG(rc == 0, "batch -> %d %s", rc, c->err);
		CHECK(out[0] && out[0]->affected == 1 && out[1] && out[1]->affected == 1);
		/* k = 9 (prio 1) left the queue in the batch itself: the claim takes k = 8 (prio 2) */
		CHECK_MSG(out[2] && out[2]->nrows == 1 && db_cell_int(out[2], 0, 0) == 8 && db_cell_int(out[2], 0, 1) == 20,
			  "claimed %zu rows", out[2] ? out[2]->nrows : 0);
		for (int i = 0; i < 3; i++) { db_res_free(out[i]); out[i] = NULL; }
		CHECK(db_exec(c, "SELECT count(*) FROM t_made WHERE k = 9", NULL, 0, &r) == 0 && db_cell_int(r, 0, 0) == 1);
		db_res_free(r);
		CHECK(db_exec(c, "SELECT owner FROM t_queue WHERE k = 8", NULL, 0, &r) == 0 && db_cell_int(r, 0, 0) == 6);
		db_res_free(r);
		/* the fence (item 1) matches nothing now: nothing of the batch stays */
		db_item lost[3] = {{.sql = "INSERT INTO t_made (k) VALUES (?)", .params = &k7, .np = 1, .expect = -1},
				   {.sql = fence, .params = &k9, .np = 1, .expect = 1},
				   {.claim = &one, .expect = -1}};
		rc = db_batch(c, lost, 3, out, &failed);
		CHECK_MSG(rc == DB_EEXPECT && failed == 1, "lost fence -> %d, item %zu: %s", rc, failed, c->err);
		CHECK_MSG(strstr(c->err, "batch item 1 changed ") != NULL, "%s", c->err);   /* PostgreSQL: "other than 1 rows" */
		CHECK(!c->in_tx);
		/* a duplicate row (item 1) after a change (item 0): neither stays */
		db_item dup[2] = {{.sql = fence, .params = &k0, .np = 1, .expect = 1},
				  {.sql = "INSERT INTO t_made (k) VALUES (?)", .params = &k9, .np = 1, .expect = -1}};
		rc = db_batch(c, dup, 2, out, &failed);
		CHECK_MSG(rc == DJC_EDUPLICATE && failed == 1, "duplicate -> %d, item %zu: %s", rc, failed, c->err);
		CHECK(db_exec(c, "SELECT count(*) FROM t_made", NULL, 0, &r) == 0 && db_cell_int(r, 0, 0) == 1);
		db_res_free(r);
		CHECK(db_exec(c, "SELECT count(*) FROM t_queue WHERE owner <> 0", NULL, 0, &r) == 0 && db_cell_int(r, 0, 0) == 2);
		db_res_free(r);
		/* a claim that finds nothing: the rest commits, the claim returns no row */
		one.wparams = &none;
		db_item empty[2] = {{.sql = "INSERT INTO t_made (k) VALUES (?)", .params = &k7, .np = 1, .expect = 1},
				    {.claim = &one, .expect = -1}};
		rc = db_batch(c, empty, 2, out, &failed);
		CHECK_MSG(rc == 0 && out[1] && out[1]->nrows == 0, "empty claim -> %d %s", rc, c->err);
		for (int i = 0; i < 2; i++) { db_res_free(out[i]); out[i] = NULL; }
		CHECK(db_exec(c, "SELECT count(*) FROM t_made", NULL, 0, &r) == 0 && db_cell_int(r, 0, 0) == 2);
		db_res_free(r);
		ddl(c, "DROP TABLE t_made");
		/* columns named as a compound statement's variables could be
		 * (attribute names are lowercase letters, digits and _): the
		 * statements still read the columns */
		ddl(c, my ? "CREATE TABLE t_shadow (djc_k0 INT NOT NULL, djc_i INT NOT NULL, PRIMARY KEY (djc_k0)) ENGINE=InnoDB"
			  : "CREATE TABLE t_shadow (djc_k0 INT NOT NULL, djc_i INT NOT NULL, PRIMARY KEY (djc_k0))");
		ddl(c, "CREATE INDEX t_shadow_next ON t_shadow (djc_i)");
		ddl(c, "INSERT INTO t_shadow (djc_k0, djc_i) VALUES (1, 0), (2, 0)");
		sb_t kc = SB_INIT;
		db_qi(c, &kc, "djc_k0");
		val_t k1 = val_int(1), two = val_int(2);
		db_claim sh = {.table = "t_shadow", .key_cols = sb_str(&kc), .where = "djc_i = ?", .wparams = &zero, .nw = 1,
			       .order = "djc_i", .index = "t_shadow_next", .limit = 1, .set = "djc_i = ?", .sparams = &two, .ns = 1};
		db_item shadow[2] = {{.sql = "UPDATE t_shadow SET djc_i = 1 WHERE djc_k0 = ?", .params = &k1, .np = 1, .expect = 1},
				     {.claim = &sh, .expect = -1}};
		rc = db_batch(c, shadow, 2, out, &failed);
		CHECK_MSG(rc == 0 && out[1] && out[1]->nrows == 1 && db_cell_int(out[1], 0, 0) == 2,
			  "batch on columns named djc_k0, djc_i -> %d %s", rc, c->err);
		for (int i = 0; i < 2; i++) { db_res_free(out[i]); out[i] = NULL; }
		CHECK(db_exec(c, "SELECT sum(djc_i) FROM t_shadow", NULL, 0, &r) == 0 && db_cell_int(r, 0, 0) == 3);
		db_res_free(r);
		sb_free(&kc);
		ddl(c, "DROP TABLE t_shadow");
	}
	sb_free(&n);
}

/* MariaDB/MySQL: a statement waits at most 5 s for a row lock
 * (mysql.c, LOCK_WAIT_S), not the server's 50: it then fails as busy,
 * names its item, and nothing of its batch stays */
static void test_lock_wait(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	db_res *r = NULL;
	int rc;
	if (c->drv == &db_mysql_driver) {
		CHECK(db_exec(c, "SELECT @@session.innodb_lock_wait_timeout", NULL, 0, &r) == 0 && db_cell_int(r, 0, 0) == 5);
		db_res_free(r);
		CHECK(db_begin(c2) == 0);
		CHECK(db_exec(c2, "UPDATE t_queue SET owner = 7 WHERE k = 1", NULL, 0, NULL) == 0);
		db_item w[2] = {{.sql = "UPDATE t_queue SET owner = 8 WHERE k = 2", .expect = 1},
				{.sql = "UPDATE t_queue SET owner = 8 WHERE k = 1", .expect = 1}};
		db_res *wo[2] = {0};
		size_t wf = 99;
		rc = db_batch(c, w, 2, wo, &wf);
		CHECK_MSG(rc == DJC_EBUSY && wf == 1, "a batch behind a row lock -> %d, item %zu: %s", rc, wf, c->err);
		CHECK(!c->in_tx);
		for (int i = 0; i < 2; i++) db_res_free(wo[i]);
		CHECK(db_rollback(c2) == 0);
		CHECK(db_exec(c, "SELECT count(*) FROM t_queue WHERE owner IN (7, 8)", NULL, 0, &r) == 0 && db_cell_int(r, 0, 0) == 0);
		db_res_free(r);
	}
}

/* two threads on one connection (a worker and its heartbeat): the
 * urgent one, waiting while the other's transaction runs, goes before
 * that thread's next statement, though the other asks at once */
static void test_threads(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	db_res *r = NULL;
	{
		ddl(c, c->drv == &db_mysql_driver ? "CREATE TABLE t_urgent (k INT NOT NULL, PRIMARY KEY (k)) ENGINE=InnoDB"
						  : "CREATE TABLE t_urgent (k INT NOT NULL, PRIMARY KEY (k))");
		CHECK(db_begin(c) == 0);
		pthread_t th;
		CHECK(pthread_create(&th, NULL, urgent_insert, c) == 0);
		while (atomic_load(&c->urgent) == 0) usleep(1000);   /* it waits for the transaction */
		CHECK(db_commit(c) == 0);
		CHECK(db_exec(c, "SELECT count(*) FROM t_urgent", NULL, 0, &r) == 0);
		CHECK_MSG(r && db_cell_int(r, 0, 0) == 1, "the next statement ran before the urgent one");
		db_res_free(r);
		pthread_join(th, NULL);
		ddl(c, "DROP TABLE t_urgent");
	}
}

/* db_set_wait_bound: a round trip that hears nothing from the server for
 * the bound gives the session up as lost (DJC_ECONN), where it waited for
 * ever on a frozen server (docs/leases.md); the next statement outside a
 * transaction is served by a new session; inside one the transaction is
 * lost and ends; with the bound lifted a slow statement is waited for.
 * A statement the server answers only after 3 s stands for the frozen
 * server here (the client cannot tell them apart). SQLite has no server
 * to wait for: skipped. */
static void test_wait_bound(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	if (!c2->drv->wait_bound_changed) {
		printf("test_db wait_bound: skipped: %s has no server to wait for\n", c2->drv->name);
		return;
	}
	int my = c2->drv == &db_mysql_driver;
	const char *slow = my ? "SELECT SLEEP(3)" : "SELECT pg_sleep(3)";
	db_res *r = NULL;
	int rc;
	db_set_wait_bound(c2, 1);
	CHECK(db_exec(c2, "SELECT 1", NULL, 0, &r) == 0 && r && db_cell_int(r, 0, 0) == 1);
	db_res_free(r);
	r = NULL;
	db_stalled_take();
	rc = db_exec(c2, slow, NULL, 0, &r);
	CHECK_MSG(rc == DJC_ECONN, "a statement answered after 3 s with a bound of 1 s -> %d: %s", rc, c2->err);
	CHECK(!r);
	if (!my) CHECK_MSG(strstr(c2->err, "no reply from the server for 1 s"), "message: %s", c2->err);
	double took = db_stalled_take();
	CHECK_MSG(took >= 1 && took < 3, "the failed call took %g s", took);
	CHECK_MSG(db_exec(c2, "SELECT 2", NULL, 0, &r) == 0 && r && db_cell_int(r, 0, 0) == 2, "after: %s", c2->err);
	CHECK(db_stalled_take() == 0);   /* answered: the run of failures ended */
	db_res_free(r);
	r = NULL;
	/* in a transaction: lost with it; the next one is served */
	CHECK(db_begin(c2) == 0);
	rc = db_exec(c2, slow, NULL, 0, NULL);
	CHECK_MSG(rc == DJC_ECONN, "in a transaction -> %d: %s", rc, c2->err);
	CHECK(db_commit(c2) == DJC_ECONN);
	CHECK(db_rollback(c2) == 0);
	CHECK(!c2->in_tx);
	CHECK_MSG(db_exec(c2, "SELECT 3", NULL, 0, &r) == 0 && r && db_cell_int(r, 0, 0) == 3, "after: %s", c2->err);
	db_res_free(r);
	r = NULL;
	/* lifted: waited for */
	db_set_wait_bound(c2, 0);
	rc = db_exec(c2, my ? "SELECT SLEEP(1.5)" : "SELECT pg_sleep(1.5)", NULL, 0, NULL);
	CHECK_MSG(rc == 0, "no bound -> %d: %s", rc, c2->err);
}

/* every connection has an id of its own (SQLite's may be equal) */
static void test_connection_ids(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	CHECK(c->drv->connection_id(c) != 0);
	CHECK(c->drv->connection_id(c) != c2->drv->connection_id(c2) || c->drv == &db_sqlite_driver);
}

/* the tables of the cases before are dropped */
static void test_drop_tables(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	ddl(c, "DROP TABLE t_queue");
	ddl(c, "DROP TABLE t_child");
	ddl(c, "DROP TABLE t_vals");
}

/* MariaDB/MySQL: a new schema's tables use a NO PAD binary collation;
 * a schema already holding utf8mb4_bin tables (declared by an older
 * djc) keeps utf8mb4_bin, so a new child's foreign key can be formed */
static void test_collation(db_conn *c, db_conn *c2, const char *url, const char *schema)
{
	if (!strcmp(c->drv->name, "mysql")) {
		CHECK_MSG(strstr(c->table_suffix, "COLLATE=utf8mb4_bin") == NULL, "%s", c->table_suffix);
		ddl(c, "DROP TABLE IF EXISTS t_old_child");
		ddl(c, "DROP TABLE IF EXISTS t_old");
		ddl(c, "CREATE TABLE t_old (k varchar(8) NOT NULL, PRIMARY KEY (k)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin");
		db_conn *c3 = open_or_die(url, schema);
		CHECK_MSG(strstr(c3->table_suffix, "COLLATE=utf8mb4_bin") != NULL, "%s", c3->table_suffix);
		sb_t q3 = SB_INIT;
		sb_printf(&q3, "CREATE TABLE t_old_child (k varchar(8) NOT NULL, j int NOT NULL, PRIMARY KEY (k, j), "
			  "FOREIGN KEY (k) REFERENCES t_old (k))%s", c3->table_suffix);
		ddl(c3, sb_str(&q3));
		sb_free(&q3);
		ddl(c3, "DROP TABLE t_old_child");
		ddl(c3, "DROP TABLE t_old");
		db_close(c3);
	}
	/* db_session_alive: another connection's server session exists while
	 * that connection is open and not once it is closed or ended
	 * (db_session_end); a pool parent waits for a dead child's session to
	 * end before it hands back the child's jobs, and ends one that lives on
	 * (pool.c). On SQLite a session ends with its process, so never
	 * "alive". db_publish_session publishes the connection's own session
	 * (the test servers are reached over TCP, directly: its connection id)
	 * at once, and again after a reconnect, before djc's first statement
	 * on the new session. */
	{
		db_conn *c4 = open_or_die(url, schema);
		_Atomic long long pub = -1;
		db_publish_session(c4, &pub);
		int64_t id = c4->drv->connection_id(c4);
		CHECK_MSG(atomic_load(&pub) == id, "published %lld, connection id %lld", (long long)atomic_load(&pub), (long long)id);
		if (c->drv->session_sql) {
			CHECK(id != 0);
			CHECK_MSG(db_session_alive(c, id) == 1, "an open connection's session (%lld) is not alive: %s", (long long)id, c->err);
			CHECK_MSG(db_session_end(c, id) == 0, "ending session %lld: %s", (long long)id, c->err);
			int gone = 0;
			for (int i = 0; i < 500 && !(gone = db_session_alive(c, id) == 0); i++) usleep(10000);
			CHECK_MSG(gone, "session %lld still exists 5 s after it was ended", (long long)id);
			/* c4 reconnects: a new session, published */
			int64_t id2 = id;
			for (int i = 0; i < 5 && id2 == id; i++) {
				if (db_exec(c4, "SELECT 1", NULL, 0, NULL)) usleep(100000);
				id2 = c4->drv->connection_id(c4);
			}
			CHECK_MSG(id2 != id && atomic_load(&pub) == id2, "after a reconnect: published %lld, old %lld, new %lld",
				  (long long)atomic_load(&pub), (long long)id, (long long)id2);
			CHECK(db_exec(c4, "SELECT 1", NULL, 0, NULL) == 0);
			db_close(c4);
			for (int i = 0; i < 500 && !(gone = db_session_alive(c, id2) == 0); i++) usleep(10000);
			CHECK_MSG(gone, "session %lld still exists 5 s after its connection closed", (long long)id2);
			CHECK(db_session_alive(c, 0) == DJC_EINVAL);
			CHECK(db_session_end(c, 0) == DJC_EINVAL);
		} else {
			CHECK(db_session_alive(c, id) == 0);
			CHECK(db_session_end(c, id) == DJC_EINVAL);
			db_close(c4);
		}
	}
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_db", "url_parsing every_type foreign_keys:every_type transactions:foreign_keys insert_ignore:foreign_keys quoting:every_type clock claim batch:claim lock_wait:claim threads wait_bound connection_ids drop_tables:foreign_keys:claim collation");
	char path[64];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-db-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_db";

	if (t_want("url_parsing")) test_url_parsing();

	db_conn *c = open_or_die(url, schema);
	db_conn *c2 = open_or_die(url, schema);
	ddl(c, "DROP TABLE IF EXISTS t_child");
	ddl(c, "DROP TABLE IF EXISTS t_vals");
	ddl(c, "DROP TABLE IF EXISTS t_queue");

	if (t_want("every_type")) test_every_type(c, c2, url, schema);
	if (t_want("foreign_keys")) test_foreign_keys(c, c2, url, schema);
	if (t_want("transactions")) test_transactions(c, c2, url, schema);
	if (t_want("insert_ignore")) test_insert_ignore(c, c2, url, schema);
	if (t_want("quoting")) test_quoting(c, c2, url, schema);
	if (t_want("clock")) test_clock(c, c2, url, schema);
	if (t_want("claim")) test_claim(c, c2, url, schema);
	if (t_want("batch")) test_batch(c, c2, url, schema);
	if (t_want("lock_wait")) test_lock_wait(c, c2, url, schema);
	if (t_want("threads")) test_threads(c, c2, url, schema);
	if (t_want("wait_bound")) test_wait_bound(c, c2, url, schema);
	if (t_want("connection_ids")) test_connection_ids(c, c2, url, schema);
	if (t_want("drop_tables")) test_drop_tables(c, c2, url, schema);
	if (t_want("collation")) test_collation(c, c2, url, schema);
	db_close(c2);
	db_close(c);
	if (!getenv("DJC_TEST_URL")) {
		t_unlink_sqlite(path + 7);
	}
	return T_DONE("test_db");
}
