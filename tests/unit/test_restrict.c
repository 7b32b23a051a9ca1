/* test_restrict.c - restrictions through the C API (issue 36): an operator
 * takes exactly the operand it means, or the call is DJC_EINVAL naming the
 * attribute with nothing read or changed; a list longer than a statement's
 * parameters allow (100,000 values, 70,000 keys) works on every backend,
 * for fetch, delete, the jobs calls and a reserving populate, and matches
 * exactly the rows the same values match one by one, for every core type
 * a restriction can compare. Runs on the backend named by $DJC_TEST_URL /
 * $DJC_TEST_SCHEMA (default: a fresh SQLite file). */
#include "t.h"
#include "tdb.h"
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static const char PIPE[] =
	"Odd (manual)\n"
	"    i : int32\n"
	"    s : varchar(24)\n"
	"    ---\n"
	"    u : uint64\n"
	"    d : decimal(20,4)\n"
	"    t : datetime(3)\n"
	"    g : uuid\n"
	"    b : bool\n"
	"    f : float64\n"
	"    f32 : float32\n"
	"    c : char(4)\n"
	"    e : enum('x', 'y z')\n"
	"    dt : date\n"
	"    by : bytes\n"
	"\n"
	"Stat (computed)\n"
	"    -> Odd\n"
	"    ---\n"
	"    n : int32\n";

#define N 300

/* A growable text. */
typedef struct txt { char *s; size_t n, cap; } txt;

static void add(txt *b, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		size_t room = b->cap - b->n;
		int k = vsnprintf(b->s ? b->s + b->n : NULL, room, fmt, ap);
		va_end(ap);
		if (b->s && (size_t)k < room) { b->n += (size_t)k; return; }
		b->cap = b->cap * 2 + (size_t)k + 64;
		b->s = realloc(b->s, b->cap);
	}
}

static void b64(txt *b, const unsigned char *p, size_t n)
{
	static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	add(b, "\"");
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		add(b, "%c%c%c%c", A[v >> 18 & 63], A[v >> 12 & 63], i + 1 < n ? A[v >> 6 & 63] : '=', i + 2 < n ? A[v & 63] : '=');
	}
	add(b, "\"");
}

/* The JSON value of attribute a in row k (as inserted, as restricted by). */
static void val(txt *b, const char *a, int k)
{
	if (!strcmp(a, "i")) add(b, "%d", k);
	else if (!strcmp(a, "s")) add(b, "\"q\\\"u\\\\\xc3\xb6\xe2\x98\x83 '%d\"", k);   /* q"u\ö☃ 'k */
	else if (!strcmp(a, "u")) add(b, "\"%llu\"", (unsigned long long)(UINT64_MAX - (uint64_t)k));
	else if (!strcmp(a, "d")) add(b, "\"1234567890123456.%04d\"", k);
	else if (!strcmp(a, "t")) add(b, "\"2026-01-02 03:%02d:%02d.%03d\"", k / 60, k % 60, k);
	else if (!strcmp(a, "g")) add(b, "\"%08x-0000-4000-8000-%012x\"", 0xabc00000u + (unsigned)k, (unsigned)k);
	else if (!strcmp(a, "b")) add(b, "%s", k % 2 ? "true" : "false");
	else if (!strcmp(a, "f")) add(b, "%.17g", k / 7.0);
	else if (!strcmp(a, "f32")) add(b, "%.1f", k + 0.5);
	else if (!strcmp(a, "c")) add(b, "\"c%03d\"", k);
	else if (!strcmp(a, "e")) add(b, "\"%s\"", k % 2 ? "y z" : "x");
	else if (!strcmp(a, "dt")) add(b, "\"2020-%02d-%02d\"", 1 + k / 28, 1 + k % 28);
	else if (!strcmp(a, "by")) {
		unsigned char p[4] = {0, (unsigned char)(k >> 8), (unsigned char)k, 0xff};
		b64(b, p, sizeof p);
	}
}

static const char *const ATTRS[] = {"i", "s", "u", "d", "t", "g", "b", "f", "f32", "c", "e", "dt", "by"};
#define NATTRS (sizeof ATTRS / sizeof *ATTRS)

static void insert_rows(djc_conn *c)
{
	txt b = {0};
	for (int k = 0; k < N; k++) {
		add(&b, "{");
		for (size_t a = 0; a < NATTRS; a++) {
			add(&b, "%s\"%s\": ", a ? ", " : "", ATTRS[a]);
			val(&b, ATTRS[a], k);
		}
		add(&b, "}\n");
	}
	FILE *f = fmemopen(b.s, b.n, "r");
	size_t n = 0;
	int rc = djc_insert_jsonl_ext(&n, c, "Odd", f, "odd.jsonl", NULL);
	CHECK_MSG(rc == DJC_OK && n == N, "insert: %s", djc_error_last(c));
	fclose(f);
	free(b.s);
}

/* {"a": {"op": [the values of rows from..to-1]}} (op NULL: the bare list) */
static char *list_of(const char *a, const char *op, int from, int to)
{
	txt b = {0};
	add(&b, op ? "{\"%s\": {\"%s\": [" : "{\"%s\": [", a, op);
	for (int k = from; k < to; k++) {
		if (k > from) add(&b, ", ");
		val(&b, a, k);
	}
	add(&b, op ? "]}}" : "]}");
	return b.s;
}

/* [{"a1": .., "a2": ..}, ...] of rows from..to-1 of the attributes named */
static char *keys_of(const char *const *as, size_t na, int from, int to)
{
	txt b = {0};
	add(&b, "[");
	for (int k = from; k < to; k++) {
		add(&b, k > from ? ", {" : "{");
		for (size_t j = 0; j < na; j++) {
			add(&b, "%s\"%s\": ", j ? ", " : "", as[j]);
			val(&b, as[j], k);
		}
		add(&b, "}");
	}
	add(&b, "]");
	return b.s;
}

/* Every comparable type: a long list (one parameter) matches each of its
 * values, as short lists (one parameter per value) do; not in, the rest. */
static void long_lists(djc_conn *c)
{
	for (size_t a = 0; a < NATTRS; a++) {
		const char *at = ATTRS[a];
		int two = !strcmp(at, "b") || !strcmp(at, "e");   /* two values only */
		char *w = list_of(at, NULL, 0, N), *in = list_of(at, "in", 0, N);
		char *nin = list_of(at, "not in", 0, N - 50), *shrt = list_of(at, NULL, 0, 60);
		char *shrt2 = list_of(at, NULL, 60, 120), *sn = list_of(at, "not in", 0, 60);
		CHECK_MSG(t_count(c, "Odd", w) == N, "%s: a list of %d values", at, N);
		CHECK_MSG(t_count(c, "Odd", in) == N, "%s: \"in\" a list of %d values", at, N);
		CHECK_MSG(t_count(c, "Odd", nin) == (two ? 0 : 50), "%s: \"not in\" a list of %d values", at, N - 50);
		CHECK_MSG(t_count(c, "Odd", shrt) == (two ? N : 60), "%s: a short list (bound one by one)", at);
		CHECK_MSG(t_count(c, "Odd", shrt2) == (two ? N : 60), "%s: another short list", at);
		CHECK_MSG(t_count(c, "Odd", sn) == (two ? 0 : N - 60), "%s: \"not in\" a short list", at);
		free(w); free(in); free(nin); free(shrt); free(shrt2); free(sn);
	}
	/* the rows of the long list are those of the short lists, value for value */
	for (int k = 0; k < N; k += 37) {
		char *one = list_of("g", NULL, k, k + 1), *many = list_of("g", NULL, k, k + 150 < N ? k + 150 : N);
		djc_rowset *a = NULL, *b = NULL;
		CHECK(djc_fetch(&a, c, "Odd", one) == DJC_OK && djc_fetch(&b, c, "Odd", many) == DJC_OK);
		char *ja = a && djc_rowset_count(a) ? djc_row_to_json(djc_rowset_row(a, 0)) : NULL;
		char *jb = b && djc_rowset_count(b) ? djc_row_to_json(djc_rowset_row(b, 0)) : NULL;
		CHECK_MSG(ja && jb && !strcmp(ja, jb), "row %d: %s vs %s", k, ja ? ja : "-", jb ? jb : "-");
		free(ja); free(jb); free(one); free(many);
		djc_rowset_free(a);
		djc_rowset_free(b);
	}
	/* keys: lists of objects with the same attributes */
	const char *k2[] = {"i", "s"}, *k3[] = {"t", "u", "c"}, *k1[] = {"d"};
	char *w2 = keys_of(k2, 2, 0, N), *w3 = keys_of(k3, 3, 0, N), *w1 = keys_of(k1, 1, 0, N);
	CHECK_MSG(t_count(c, "Odd", w2) == N, "a list of %d keys (i, s)", N);
	CHECK_MSG(t_count(c, "Odd", w3) == N, "a list of %d keys (t, u, c)", N);
	CHECK_MSG(t_count(c, "Odd", w1) == N, "a list of %d keys (d)", N);
	free(w2); free(w3); free(w1);
	/* a key whose values come from two different rows matches nothing */
	txt b = {0};
	add(&b, "[");
	for (int k = 0; k < 200; k++) {
		add(&b, "%s{\"i\": %d, \"s\": ", k ? ", " : "", k);
		val(&b, "s", k + 1);
		add(&b, "}");
	}
	add(&b, "]");
	CHECK_MSG(t_count(c, "Odd", b.s) == 0, "mismatched keys match nothing");
	free(b.s);
}

/* Beyond every backend's limit on parameters: 100,000 values, 70,000 keys. */
static void huge_lists(djc_conn *c)
{
	txt b = {0};
	add(&b, "{\"i\": [");
	for (int k = 0; k < 100000; k++) add(&b, k ? ", %d" : "%d", k * 2);
	add(&b, "]}");
	CHECK_MSG(t_count(c, "Odd", b.s) == N / 2, "a list of 100000 values: %s", djc_error_last(c));
	b.n = 0;
	add(&b, "[");
	for (int k = 0; k < 70000; k++) {
		add(&b, "%s{\"i\": %d, \"s\": ", k ? ", " : "", k);
		val(&b, "s", k);
		add(&b, "}");
	}
	add(&b, "]");
	CHECK_MSG(t_count(c, "Odd", b.s) == N, "a list of 70000 keys: %s", djc_error_last(c));
	/* the jobs calls and a reserving populate take them too */
	djc_refresh_options ro = DJC_REFRESH_OPTIONS_INIT;
	djc_refresh_result rr;
	CHECK(djc_jobs_refresh(&rr, c, "Stat", &ro) == DJC_OK && rr.added == N);
	djc_jobs_set_options so = DJC_JOBS_SET_OPTIONS_INIT;
	so.priority = 3;
	long n = -1;
	CHECK_MSG(djc_jobs_set(&n, c, "Stat", b.s, &so) == DJC_OK && n == N, "jobs set by 70000 keys: %ld %s", n,
		  djc_error_last(c));
	free(b.s);
	b.s = NULL;
	b.n = b.cap = 0;
	add(&b, "{\"i\": {\"not in\": [");
	for (int k = 0; k < 100000; k++) add(&b, k ? ", %d" : "%d", k + 10);
	add(&b, "]}}");
	long np = -1, nr = -1;
	CHECK_MSG(djc_jobs_cancel(&np, &nr, c, "Stat", b.s) == DJC_OK && np == 10 && nr == 0, "jobs cancel: %ld %s", np,
		  djc_error_last(c));
	CHECK(djc_jobs_clear_ext(&n, c, "Stat", "ignore", b.s) == DJC_OK && n == 10);
	free(b.s);
}

static int mk(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "n", 1);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	(void)key;
	return rc;
}

static void huge_populate_delete(djc_conn *c)
{
	txt b = {0};
	add(&b, "{\"i\": [");
	for (int k = 0; k < 100000; k++) add(&b, k ? ", %d" : "%d", k < 150 ? k : k + N);
	add(&b, "]}");
	djc_populate_options po = DJC_POPULATE_OPTIONS_INIT;
	po.reserve_jobs = 1;
	po.make = mk;
	po.where_json = b.s;
	po.refresh = 0;   /* the 10 keys cleared above stay without a job */
	djc_populate_result *res = NULL;
	int rc = djc_populate(&res, c, "Stat", &po);
	CHECK_MSG(rc == DJC_OK && res && res->success_count == 140, "populate by 100000 values: %d %ld %s", rc,
		  res ? res->success_count : -1, djc_error_last(c));   /* 10 of the 150 were cleared, not pending */
	djc_populate_result_free(res);
	size_t del = 0;
	rc = djc_delete(&del, c, "Stat", b.s);
	CHECK_MSG(rc == DJC_OK && del == 140, "delete by 100000 values: %zu %s", del, djc_error_last(c));
	free(b.s);
}

/* Malformed restrictions: DJC_EINVAL naming the attribute, nothing done. */
static void malformed(djc_conn *c)
{
	static const char *const bad[][2] = {
		{"{\"i\": {\">\": [3]}}", "restriction on 'i': '>' takes one value, got a list"},
		{"{\"i\": {\"<\": [2]}}", "restriction on 'i': '<' takes one value, got a list"},
		{"{\"i\": {\"!=\": [2]}}", "restriction on 'i': '!=' takes one value, got a list"},
		{"{\"i\": {\"=\": {\"a\": 1}}}", "restriction on 'i': '=' takes one value, got an object"},
		{"{\"i\": {\"<=\": null}}", "restriction on 'i': '<=' cannot compare with null"},
		{"{\"i\": {\"in\": 3}}", "restriction on 'i': 'in' takes a list of values, got a number"},
		{"{\"i\": [1, null]}", "restriction on 'i': item 2 of its list is null"},
		{"[{\"i\": 1, \"s\": \"x\"}, {\"i\": [[2]]}]", "restriction on 'i': item 1 of its list is a list"},
		{"{\"ii\": 1}", "restriction names \"ii\", which is not an attribute of Odd (did you mean i? its attributes: i, s, u,"},
	};
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		const char *w = bad[k][0], *want = bad[k][1];
		djc_rowset *rs = NULL;
		int rc = djc_fetch(&rs, c, "Odd", w);
		CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), want), "fetch %s: %d %s", w, rc, djc_error_last(c));
		djc_rowset_free(rs);
		size_t del = 99;
		rc = djc_delete(&del, c, "Odd", w);
		CHECK_MSG(rc == DJC_EINVAL && del == 0 && strstr(djc_error_last(c), want), "delete %s: %d %s", w, rc,
			  djc_error_last(c));
		long n = 99, np = 99, nr = 99;
		rc = djc_jobs_clear_ext(&n, c, "Stat", NULL, w);
		CHECK_MSG(rc == DJC_EINVAL && n == 0, "jobs clear %s: %d %s", w, rc, djc_error_last(c));
		rc = djc_jobs_cancel(&np, &nr, c, "Stat", w);
		CHECK_MSG(rc == DJC_EINVAL && np == 0, "jobs cancel %s: %d %s", w, rc, djc_error_last(c));
	}
	CHECK(t_count(c, "Odd", NULL) == N);
	/* more values bound one by one than the limit: refused with the limit */
	txt b = {0};
	add(&b, "[");
	for (int k = 0; k < 30001; k++) add(&b, "%s{\"i\": {\">=\": %d}}", k ? ", " : "", k);
	add(&b, "]");
	djc_rowset *rs = NULL;
	int rc = djc_fetch(&rs, c, "Odd", b.s);
	CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), "restriction binds 30001 values one by one, more than the 30000"),
		  "30001 conditions: %d %s", rc, djc_error_last(c));
	djc_rowset_free(rs);
	free(b.s);
}

/* The same restriction text again renders what it rendered (a populate
 * renders its restriction for every claim and peek), but never for another
 * table, after a change of the pipeline, or after an error: a parent that
 * lost the attribute a child's job restriction names makes that
 * restriction an error, not a statement naming a column that is gone. */
static const char MPIPE[] =
	"MP (manual)\n"
	"    i : int32\n"
	"    ---\n"
	"    u : int32\n"
	"\n"
	"MC (computed)\n"
	"    -> MP\n"
	"    ---\n"
	"    n : int32\n";
static const char MPIPE_NO_U[] =
	"MP (manual)\n"
	"    i : int32\n"
	"    ---\n"
	"\n"
	"MC (computed)\n"
	"    -> MP\n"
	"    ---\n"
	"    n : int32\n";

static void memo(djc_conn *c)
{
	CHECK_MSG(djc_declare(NULL, c, MPIPE, "memo.djc") == DJC_OK, "declare: %s", djc_error_last(c));
	djc_job_counts k;
	const char *by_u = "{\"u\": 20}";
	for (int i = 0; i < 2; i++)
		CHECK_MSG(djc_jobs_count(&k, c, "MC", by_u) == DJC_OK, "MC's jobs by MP's u (%d): %s", i, djc_error_last(c));
	/* an error is not kept: the same message each time */
	for (int i = 0; i < 2; i++) {
		int rc = djc_jobs_count(&k, c, "MC", "{\"zz\": 1}");
		CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), "zz"), "MC's jobs by zz (%d): %d %s", i, rc,
			  djc_error_last(c));
	}
	/* the same text on another table is that table's restriction */
	djc_rowset *rs = NULL;
	CHECK_MSG(djc_fetch(&rs, c, "MC", "{\"n\": 1}") == DJC_OK, "fetch MC by n: %s", djc_error_last(c));
	djc_rowset_free(rs);
	rs = NULL;
	int rc = djc_fetch(&rs, c, "MP", "{\"n\": 1}");
	CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), "\"n\""), "fetch MP by n: %d %s", rc, djc_error_last(c));
	djc_rowset_free(rs);
	/* MP loses u; MC's definition is the same text (the same object) */
	CHECK_MSG(djc_jobs_count(&k, c, "MC", by_u) == DJC_OK, "MC's jobs by u: %s", djc_error_last(c));
	djc_alter_options ao;
	djc_alter_options_init(&ao);
	CHECK_MSG(djc_alter(NULL, c, MPIPE_NO_U, "memo.djc", &ao) == DJC_OK, "alter MP without u: %s", djc_error_last(c));
	rc = djc_jobs_count(&k, c, "MC", by_u);
	CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), "\"u\""), "MC's jobs by u after MP lost it: %d %s", rc,
		  djc_error_last(c));
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_restrict", "insert_rows long_lists:insert_rows huge_lists:insert_rows malformed:insert_rows huge_populate_delete:insert_rows:long_lists:huge_lists:malformed memo");
	char path[64];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-restrict-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_restrict";
	if (!strncmp(url, "sqlite:", 7)) schema = NULL;
	djc_conn *c = t_open(url, schema);
	CHECK_MSG(djc_declare(NULL, c, PIPE, "restrict.djc") == DJC_OK, "declare: %s", djc_error_last(c));
	if (t_want("insert_rows")) insert_rows(c);
	if (t_want("long_lists")) long_lists(c);
	if (t_want("huge_lists")) huge_lists(c);
	if (t_want("malformed")) malformed(c);
	if (t_want("huge_populate_delete")) huge_populate_delete(c);
	if (t_want("memo")) memo(c);
	djc_close(c);
	return T_DONE("test_restrict");
}
