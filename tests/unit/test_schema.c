/* test_schema.c - the schema life cycle through the C API: djc_drop,
 * djc_delete_ext (cascade, part integrity, jobs left consistent)
 * and djc_alter, on the backend named by $DJC_TEST_URL / $DJC_TEST_SCHEMA
 * (default: a fresh SQLite file). */
#include "t.h"
#include "djc.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char PIPE[] =
	"Subject (manual)\n"
	"    subject_id : int32\n"
	"    ---\n"
	"    name : varchar(16)\n"
	"\n"
	"Session (manual)\n"
	"    -> Subject\n"
	"    session : int16\n"
	"    ---\n"
	"    note = \"\" : varchar(20)\n"
	"\n"
	"Stats (computed)\n"
	"    -> Session\n"
	"    ---\n"
	"    mean : float64\n"
	"\n"
	"Stats.Unit (part)\n"
	"    unit : int16\n"
	"    ---\n"
	"    rate : float32\n"
	"\n"
	"Summary (computed)\n"
	"    -> Stats\n"
	"    ---\n"
	"    total : float64\n"
	"\n"
	"Other (manual)\n"
	"    other_id : int32\n"
	"    ---\n";

static long nrows(djc_conn *c, const char *table, const char *where)
{
	djc_rowset *rs = NULL;
	if (djc_fetch(&rs, c, table, where)) return -1;
	long n = (long)djc_rowset_count(rs);
	djc_rowset_free(rs);
	return n;
}

static int64_t geti(const djc_row *r, const char *name)
{
	int64_t v = -1;
	long i = djc_row_find(r, name);
	if (i >= 0) djc_row_int(&v, r, (size_t)i);
	return v;
}

/* Stats: mean = session, two units; fails for subject 2 session 2 */
static int mk_stats(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t s = geti(key, "subject_id"), n = geti(key, "session");
	if (s == 2 && n == 2) {
		djc_make_error(ctx, "no data for 2/2");
		return 1;
	}
	djc_row *r = djc_row_new();
	djc_row_set_float(r, "mean", (double)n);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	for (int u = 1; u <= 2 && !rc; u++) {
		djc_row *p = djc_row_new();
		djc_row_set_int(p, "unit", u);
		djc_row_set_float(p, "rate", u * 0.5);
		rc = djc_make_insert(ctx, "Unit", p);
		djc_row_free(p);
	}
	return rc;
}

static int mk_summary(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)key;
	(void)payload;
	djc_row *r = djc_row_new();
	djc_row_set_float(r, "total", 1.0);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

static long populate(djc_conn *c, const char *table, djc_make_fn fn)
{
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.make = fn;
	o.reserve_jobs = 1;
	o.suppress_errors = 1;
	djc_populate_result *res = NULL;
	int rc = djc_populate(&res, c, table, &o);
	long n = res ? res->success_count : -1;
	if (rc && rc != DJC_EMAKE) fprintf(stderr, "populate %s: %s\n", table, djc_error_last(c));
	djc_populate_result_free(res);
	return n;
}

static long refresh_added(djc_conn *c, const char *table)
{
	djc_refresh_options o = DJC_REFRESH_OPTIONS_INIT;
	djc_refresh_result r = {0};
	if (djc_jobs_refresh(&r, c, table, &o)) {
		fprintf(stderr, "refresh %s: %s\n", table, djc_error_last(c));
		return -1;
	}
	return r.added;
}

static long jobs_total(djc_conn *c, const char *table)
{
	long k[5] = {0};
	if (djc_jobs_counts(k, c, table)) return -1;
	return k[0] + k[1] + k[2] + k[3] + k[4];
}

/* The entry of changes for (sql_name, action), or NULL. */
static const djc_change *entry(const djc_changes *ch, const char *sql_name, const char *action)
{
	for (size_t i = 0; ch && i < ch->n; i++)
		if (!strcmp(ch->items[i].sql_name, sql_name) && !strcmp(ch->items[i].action, action)) return &ch->items[i];
	return NULL;
}

static long long rows_of(const djc_changes *ch, const char *sql_name, const char *action)
{
	const djc_change *e = entry(ch, sql_name, action);
	return e ? e->rows : -99;
}

static void insert_json(djc_conn *c, const char *table, const char *const *json, size_t n)
{
	djc_row **rows = calloc(n, sizeof *rows);
	for (size_t i = 0; i < n; i++) djc_row_from_json(&rows[i], json[i], NULL);
	int rc = djc_insert_ext(NULL, c, table, (const djc_row *const *)rows, n, NULL);
	CHECK_MSG(rc == DJC_OK, "insert into %s: %s", table, djc_error_last(c));
	for (size_t i = 0; i < n; i++) djc_row_free(rows[i]);
	free(rows);
}

static int has_table(djc_conn *c, const char *name)
{
	char *t = NULL;
	if (djc_tables(&t, c)) return -1;
	int found = 0;
	for (char *p = t, *e; p && *p; p = e + 1) {
		e = strchr(p, '\n');
		if (!e) break;
		if ((size_t)(e - p) == strlen(name) && !strncmp(p, name, strlen(name))) found = 1;
	}
	free(t);
	return found;
}

static void test_delete(djc_conn *c)
{
	const char *subj[] = {"{\"subject_id\": 1, \"name\": \"a\"}", "{\"subject_id\": 2, \"name\": \"b\"}"};
	insert_json(c, "Subject", subj, 2);
	const char *sess[] = {"{\"subject_id\": 1, \"session\": 1}", "{\"subject_id\": 1, \"session\": 2}",
			      "{\"subject_id\": 2, \"session\": 1}", "{\"subject_id\": 2, \"session\": 2}"};
	insert_json(c, "Session", sess, 4);
	CHECK(populate(c, "Stats", mk_stats) == 3);   /* 2/2 is an error job */
	CHECK(populate(c, "Summary", mk_summary) == 3);
	CHECK(nrows(c, "Stats.Unit", NULL) == 6);

	/* dry run: counts per table, dependents first, nothing deleted */
	djc_delete_options o = DJC_DELETE_OPTIONS_INIT;
	o.dry_run = 1;
	djc_changes *ch = NULL;
	int rc = djc_delete_ext(&ch, c, "Subject", "{\"subject_id\": 2}", &o);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(ch && !ch->applied && ch->n == 6);
	if (ch && ch->n == 6) {
		CHECK_STR(ch->items[0].table, "Summary");
		CHECK_STR(ch->items[5].table, "Subject");
	}
	CHECK(rows_of(ch, "~~stats", "delete jobs") == 1);   /* 2/2's error job */
	CHECK(rows_of(ch, "__summary", "delete") == 1);
	CHECK(rows_of(ch, "__stats__unit", "delete") == 2);
	CHECK(rows_of(ch, "__stats", "delete") == 1);
	CHECK(rows_of(ch, "session", "delete") == 2);
	CHECK(rows_of(ch, "subject", "delete") == 1);
	djc_changes_free(ch);
	CHECK(nrows(c, "Subject", NULL) == 2 && nrows(c, "Summary", NULL) == 3);

	/* without cascade: the old refusal, nothing deleted */
	djc_delete_options nc = DJC_DELETE_OPTIONS_INIT;
	nc.cascade = 0;
	ch = NULL;
	rc = djc_delete_ext(&ch, c, "Subject", "{\"subject_id\": 2}", &nc);
	CHECK(rc == DJC_EFOREIGN && strstr(djc_error_last(c), "reference"));
	djc_changes_free(ch);
	CHECK(nrows(c, "Session", NULL) == 4);

	/* a part's rows go only with their master's */
	ch = NULL;
	rc = djc_delete_ext(&ch, c, "Stats.Unit", "{\"unit\": 1}", NULL);
	CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), "part integrity"), "%d %s", rc, djc_error_last(c));
	djc_changes_free(ch);
	CHECK(nrows(c, "Stats.Unit", NULL) == 6);

	/* the delete: rows downstream go, and so do the jobs of keys whose
	 * upstream rows went (2/2's error job) */
	CHECK(jobs_total(c, "Stats") == 1);
	ch = NULL;
	rc = djc_delete_ext(&ch, c, "Subject", "{\"subject_id\": 2}", NULL);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(ch && ch->applied);
	CHECK(rows_of(ch, "__summary", "delete") == 1);
	CHECK(rows_of(ch, "__stats", "delete") == 1);
	CHECK(rows_of(ch, "~~stats", "delete jobs") == 1);
	djc_changes_free(ch);
	CHECK(nrows(c, "Subject", NULL) == 1 && nrows(c, "Session", NULL) == 2 && nrows(c, "Stats", NULL) == 2 &&
	      nrows(c, "Stats.Unit", NULL) == 4 && nrows(c, "Summary", NULL) == 2);
	CHECK(jobs_total(c, "Stats") == 0);
	CHECK(refresh_added(c, "Stats") == 0);   /* nothing upstream is left for subject 2 */

	/* deleting computed rows: their own jobs stay as they are, refresh
	 * adds the key back (its upstream row is still there); downstream
	 * jobs of the gone rows go */
	const char *s13[] = {"{\"subject_id\": 1, \"session\": 3}"};
	insert_json(c, "Session", s13, 1);
	CHECK(populate(c, "Stats", mk_stats) == 1);
	CHECK(refresh_added(c, "Summary") == 1);   /* 1/3 pending for Summary */
	ch = NULL;
	rc = djc_delete_ext(&ch, c, "Stats", "{\"session\": [1, 3]}", NULL);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(rows_of(ch, "__stats", "delete") == 2);
	CHECK(rows_of(ch, "__summary", "delete") == 1);
	CHECK(rows_of(ch, "~~summary", "delete jobs") == 1);
	CHECK(!entry(ch, "~~stats", "delete jobs"));
	djc_changes_free(ch);
	CHECK(jobs_total(c, "Summary") == 0);
	CHECK(refresh_added(c, "Stats") == 2);     /* 1/1 and 1/3 again */
	CHECK(refresh_added(c, "Summary") == 0);   /* their Stats rows are gone */
	CHECK(populate(c, "Stats", mk_stats) == 2);
	CHECK(populate(c, "Summary", mk_summary) == 2);
	CHECK(nrows(c, "Summary", NULL) == 3);

	/* restriction errors are the usual ones; unknown tables too */
	ch = NULL;
	CHECK(djc_delete_ext(&ch, c, "Subject", "{\"nope\": 1}", NULL) == DJC_EINVAL);
	djc_changes_free(ch);
	ch = NULL;
	CHECK(djc_delete_ext(&ch, c, "Nope", NULL, NULL) == DJC_ENOTFOUND);
	djc_changes_free(ch);
	djc_delete_options bad = DJC_DELETE_OPTIONS_INIT;
	bad.version = 99;
	CHECK(djc_delete_ext(NULL, c, "Subject", NULL, &bad) == DJC_EINVAL);
}

static void test_drop(djc_conn *c, djc_conn *c2)
{
	djc_changes *ch = NULL;
	int rc = djc_drop(&ch, c, "Stats.Unit", NULL);
	CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), "drop Stats"), "%s", djc_error_last(c));
	djc_changes_free(ch);

	/* dry run: what goes, dependents first, with row counts */
	djc_drop_options o = DJC_DROP_OPTIONS_INIT;
	o.dry_run = 1;
	ch = NULL;
	rc = djc_drop(&ch, c, "Stats", &o);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	/* each jobs table with the attempt history beside it */
	CHECK(ch && !ch->applied && ch->n == 7);
	if (ch && ch->n == 7) {
		CHECK_STR(ch->items[0].sql_name, "~~summary");
		CHECK_STR(ch->items[1].sql_name, "~~summary__history");
		CHECK_STR(ch->items[2].sql_name, "__summary");
		CHECK_STR(ch->items[3].sql_name, "__stats__unit");
		CHECK_STR(ch->items[4].sql_name, "~~stats");
		CHECK_STR(ch->items[5].sql_name, "~~stats__history");
		CHECK_STR(ch->items[6].sql_name, "__stats");
	}
	CHECK(rows_of(ch, "__summary", "drop") == 3);
	CHECK(rows_of(ch, "__stats__unit", "drop") == 6);
	CHECK(rows_of(ch, "__stats", "drop") == 3);
	CHECK(rows_of(ch, "~~stats", "drop") == 0);
	djc_changes_free(ch);
	CHECK(has_table(c, "Stats") == 1 && nrows(c, "Stats", NULL) == 3);

	/* the other connection knows Stats already */
	CHECK(nrows(c2, "Summary", NULL) == 3);
	ch = NULL;
	rc = djc_drop(&ch, c, "Stats", NULL);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(ch && ch->applied);
	djc_changes_free(ch);
	CHECK(has_table(c, "Stats") == 0 && has_table(c, "Stats.Unit") == 0 && has_table(c, "Summary") == 0);
	CHECK(has_table(c, "Session") == 1 && has_table(c, "Other") == 1);
	djc_rowset *rs = NULL;
	CHECK(djc_fetch(&rs, c, "Stats", NULL) == DJC_ENOTFOUND);
	/* a connection that had loaded it fails cleanly too */
	CHECK(djc_fetch(&rs, c2, "Summary", NULL) != DJC_OK);
	CHECK(has_table(c2, "Summary") == 0);
	CHECK(djc_fetch(&rs, c2, "Summary", NULL) == DJC_ENOTFOUND);

	/* declared anew, with another definition */
	char *rep = NULL;
	rc = djc_declare(&rep, c, "Stats (computed)\n    -> Session\n    ---\n    mean : float32\n    n = 0 : int32\n", "new.djc");
	CHECK_MSG(rc == DJC_OK && rep && strstr(rep, "created Stats (computed)") && strstr(rep, "jobs table ~~stats"), "%s",
		  djc_error_last(c));
	free(rep);
	CHECK(nrows(c, "Stats", NULL) == 0);
	CHECK(refresh_added(c, "Stats") == 3);
	/* and c2 sees the new one */
	CHECK(nrows(c2, "Stats", NULL) == 0);

	/* dropping the top drops everything below it, and leaves Other */
	ch = NULL;
	rc = djc_drop(&ch, c, "Subject", NULL);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(rows_of(ch, "subject", "drop") == 1 && rows_of(ch, "session", "drop") == 3);
	CHECK(rows_of(ch, "~~stats", "drop") == 3);
	djc_changes_free(ch);
	char *t = NULL;
	CHECK(djc_tables(&t, c) == DJC_OK && t && !strcmp(t, "Other\n"));
	free(t);
	CHECK(djc_drop(NULL, c, "Subject", NULL) == DJC_ENOTFOUND);
	djc_drop_options bad = DJC_DROP_OPTIONS_INIT;
	bad.version = 7;
	CHECK(djc_drop(NULL, c, "Other", &bad) == DJC_EINVAL);
	CHECK(has_table(c, "Other") == 1);
}

static const char ALT0[] =
	"Probe (manual)\n"
	"    probe_id : int32\n"
	"    ---\n"
	"    depth : int16           # in micrometres\n"
	"    label : varchar(10)\n"
	"    gain : float64\n"
	"    index(label)\n"
	"\n"
	"Trace (manual)\n"
	"    -> Probe\n"
	"    trace : int32\n"
	"    ---\n"
	"    v : float64\n";

static const char ALT1[] =
	"Probe (manual)\n"
	"    probe_id : int32\n"
	"    ---\n"
	"    depth : int32           # in micrometres, from the top\n"
	"    name : varchar(24)      # {label} the probe's name\n"
	"    n_sites = 32 : int32\n"
	"    maker = null : varchar(20)\n"
	"    note = \"it's c:\\x\" : varchar(30)\n"
	"    index(name)\n"
	"\n"
	"Trace (manual)\n"
	"    -> Probe\n"
	"    trace : int32\n"
	"    ---\n"
	"    v : float64\n";

static void test_alter(djc_conn *c)
{
	int rc = djc_declare(NULL, c, ALT0, "alt.djc");
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	const char *pr[] = {"{\"probe_id\": 1, \"depth\": 100, \"label\": \"p1\", \"gain\": 2.5}",
			    "{\"probe_id\": 2, \"depth\": -5, \"label\": \"p2\", \"gain\": 0}"};
	insert_json(c, "Probe", pr, 2);
	const char *tr[] = {"{\"probe_id\": 1, \"trace\": 1, \"v\": 0.5}"};
	insert_json(c, "Trace", tr, 1);

	/* refused changes: nothing happens, the message names the table and
	 * says what to do */
	static const struct { const char *find, *repl, *msg; } refuse[] = {
		{"    probe_id : int32\n", "    probe_id : int64\n", "primary key"},
		{"    v : float64\n", "    -> Other\n    v : float64\n", "dependency '-> Other' (below ---) is new"},
		{"    index(label)\n", "", "indexes"},
		{"    depth : int16", "    depth : int8", "only widens"},
		{"    label : varchar(10)", "    label : varchar(5)", "only widens"},
		{"    gain : float64\n", "    gain : float64\n    extra : int32\n", "needs a default"},
		{"    gain : float64\n", "    gain = null : float64\n", "nullable"},
		{"Probe (manual)", "Probe (lookup)", "tier"},
		{"    gain : float64\n", "    g2 : float64   # {nope} renamed\n", "no attribute 'nope'"},
	};
	for (size_t i = 0; i < sizeof refuse / sizeof *refuse; i++) {
		const char *at = strstr(ALT0, refuse[i].find);
		char buf[2048];
		snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - ALT0), ALT0, refuse[i].repl, at + strlen(refuse[i].find));
		djc_changes *ch = NULL;
		rc = djc_alter(&ch, c, buf, "alt.djc", NULL);
		CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), refuse[i].msg) && strstr(djc_error_last(c), "alt.djc:"),
			  "case %zu: %d %s", i, rc, djc_error_last(c));
		CHECK(!ch || !ch->applied);
		djc_changes_free(ch);
	}
	CHECK(djc_declare(NULL, c, ALT0, "alt.djc") == DJC_OK);   /* still the old definition */

	/* dry run: the list, nothing changed */
	djc_alter_options o = DJC_ALTER_OPTIONS_INIT;
	o.dry_run = 1;
	djc_changes *ch = NULL;
	rc = djc_alter(&ch, c, ALT1, "alt.djc", &o);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(ch && !ch->applied);
	CHECK(entry(ch, "probe", "drop gain") && entry(ch, "probe", "rename label to name") &&
	      entry(ch, "probe", "add n_sites = 32 : int32") && entry(ch, "probe", "add maker = null : varchar(20)") &&
	      entry(ch, "probe", "widen depth from int16 to int32") &&
	      entry(ch, "probe", "widen name from varchar(10) to varchar(24)") && entry(ch, "probe", "comment of depth"));
	CHECK(!entry(ch, "trace", "definition text"));
	djc_changes_free(ch);
	CHECK(djc_declare(NULL, c, ALT0, "alt.djc") == DJC_OK);

	ch = NULL;
	rc = djc_alter(&ch, c, ALT1, "alt.djc", NULL);
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(ch && ch->applied);
	djc_changes_free(ch);
	/* the stored definition is the new one */
	CHECK(djc_declare(NULL, c, ALT1, "alt.djc") == DJC_OK);
	CHECK(djc_declare(NULL, c, ALT0, "alt.djc") == DJC_ECONFLICT);
	/* the rows kept their values, under the new names and with the defaults */
	djc_rowset *rs = NULL;
	rc = djc_fetch(&rs, c, "Probe", "{\"probe_id\": 1}");
	CHECK_MSG(rc == DJC_OK && djc_rowset_count(rs) == 1, "%s", djc_error_last(c));
	if (rs && djc_rowset_count(rs) == 1) {
		const djc_row *r = djc_rowset_row(rs, 0);
		const char *name = NULL, *note = NULL;
		long i = djc_row_find(r, "name");
		if (i >= 0) djc_row_text(&name, r, (size_t)i);
		i = djc_row_find(r, "note");
		if (i >= 0) djc_row_text(&note, r, (size_t)i);
		CHECK(name && !strcmp(name, "p1"));
		CHECK(note && !strcmp(note, "it's c:\\x"));
		CHECK(geti(r, "n_sites") == 32 && geti(r, "depth") == 100);
		i = djc_row_find(r, "maker");
		CHECK(i >= 0 && djc_row_type(r, (size_t)i) == DJC_NULL);
		CHECK(djc_row_find(r, "gain") < 0 && djc_row_find(r, "label") < 0);
	}
	djc_rowset_free(rs);
	/* the wider types take what the old ones could not */
	const char *wide[] = {"{\"probe_id\": 3, \"depth\": 100000, \"name\": \"a name of 24 characters\"}"};
	insert_json(c, "Probe", wide, 1);
	CHECK(nrows(c, "Probe", "{\"name\": \"p2\"}") == 1);   /* the index was renamed with the column */
	CHECK(nrows(c, "Trace", NULL) == 1);

	/* a comment-only change is stored too; the same file again changes nothing */
	ch = NULL;
	rc = djc_alter(&ch, c, ALT1, "alt.djc", NULL);
	CHECK(rc == DJC_OK && ch && ch->n == 0);
	djc_changes_free(ch);

	/* tables not declared yet are left to declare */
	char more[4096];
	snprintf(more, sizeof more, "%s\nFresh (manual)\n    f : int32\n    ---\n", ALT1);
	ch = NULL;
	rc = djc_alter(&ch, c, more, "alt.djc", NULL);
	CHECK(rc == DJC_OK && entry(ch, "fresh", "not declared (djc declare creates it)"));
	djc_changes_free(ch);
	CHECK(has_table(c, "Fresh") == 0);
	djc_alter_options bad = DJC_ALTER_OPTIONS_INIT;
	bad.version = 3;
	CHECK(djc_alter(NULL, c, ALT1, "alt.djc", &bad) == DJC_EINVAL);
	CHECK(djc_alter(NULL, c, "Probe (manual\n", "alt.djc", NULL) == DJC_EINVAL);
}

/* A declare that fails half way, then the same tables again on the same
 * connection: all or nothing, and the second one makes the jobs tables
 * (the jobs layer must not think they exist from the first attempt). */
static void test_declare_again(djc_conn *c)
{
	static const char good[] = "Fa (manual)\n    a : int32\n    ---\n\nFc (computed)\n    -> Fa\n    ---\n    v : float64\n";
	size_t n = sizeof good + 2001 * 20 + 100;
	char *bad = malloc(n);
	int k = snprintf(bad, n, "%s\nWide (manual)\n    w : int32\n    ---\n", good);
	for (int i = 1; i <= 2000; i++) k += snprintf(bad + k, n - (size_t)k, "    c%d : int8\n", i);
	for (int round = 0; round < 3; round++) {
		int rc = djc_declare(NULL, c, bad, "bad.djc");
		CHECK_MSG(rc != DJC_OK && strstr(djc_error_last(c), "Wide"), "%d %s", rc, djc_error_last(c));
		CHECK(has_table(c, "Fa") == 0 && has_table(c, "Fc") == 0);
		rc = djc_declare(NULL, c, good, "good.djc");
		CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
		CHECK(refresh_added(c, "Fc") == 0);   /* its jobs table exists */
		djc_changes *ch = NULL;
		CHECK(djc_drop(&ch, c, "Fa", NULL) == DJC_OK && ch && ch->applied);
		djc_changes_free(ch);
	}
	free(bad);
}


/* Issue 36, item 11: how a table's rows are made is not its definition.
 * A declare whose make, make_serve or timeout lines differ updates the
 * stored lines (no alter), says so, and is idempotent; every process sees
 * them. key_source is the definition: declare refuses it, naming the
 * change and djc alter. */
static void test_how_lines(djc_conn *c, djc_conn *c2)
{
	static const char H0[] = "Hs (manual)\n    id : int32\n    ---\n\n"
				 "Hc (computed)\n    -> Hs\n    ---\n    v : int64\n    make = ./a.sh\n    timeout = 1h\n";
	static const char H1[] = "Hs (manual)\n    id : int32\n    ---\n\n"
				 "Hc (computed)\n    -> Hs\n    ---\n    v : int64\n    make = ./b.sh 'x y'\n    timeout = 2h\n";
	static const char H2[] = "Hs (manual)\n    id : int32\n    ---\n\n"
				 "Hc (computed)\n    -> Hs\n    ---\n    v : int64\n    make_serve = ./serve.sh\n    timeout = 2h\n"
				 "    key_source = {\"id\": 1}\n";
	char *rep = NULL;
	int rc = djc_declare(&rep, c, H0, "h.djc");
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	free(rep);
	rep = NULL;
	rc = djc_declare(&rep, c, H1, "h.djc");
	CHECK_MSG(rc == DJC_OK && rep && strstr(rep, "exists  Hs (manual) as hs\n") &&
		  strstr(rep, "updated Hc (computed) as __hc: make: ./a.sh -> ./b.sh \"x y\", timeout: 1h -> 2h\n"),
		  "%d %s %s", rc, djc_error_last(c), rep ? rep : "");
	free(rep);
	/* stored: another connection declares it as it is, and alter finds it so */
	rep = NULL;
	rc = djc_declare(&rep, c2, H1, "h.djc");
	CHECK_MSG(rc == DJC_OK && rep && strstr(rep, "exists  Hc (computed) as __hc\n"), "%d %s %s", rc, djc_error_last(c2), rep ? rep : "");
	free(rep);
	djc_alter_options o = DJC_ALTER_OPTIONS_INIT;
	o.dry_run = 1;
	djc_changes *ch = NULL;
	CHECK(djc_alter(&ch, c2, H1, "h.djc", &o) == DJC_OK && ch && ch->n == 0);
	djc_changes_free(ch);
	/* alter --dry-run lists such changes as what they are */
	ch = NULL;
	CHECK(djc_alter(&ch, c2, H0, "h.djc", &o) == DJC_OK && ch && ch->n == 2 && entry(ch, "__hc", "make: ./b.sh \"x y\" -> ./a.sh") &&
	      entry(ch, "__hc", "timeout: 2h -> 1h"));
	djc_changes_free(ch);
	/* a key_source change is one of the definition */
	rc = djc_declare(NULL, c, H2, "h.djc");
	CHECK_MSG(rc == DJC_ECONFLICT &&
		  !strcmp(djc_error_last(c), "h.djc:5: table Hc is already declared with a different definition (key_source: "
					     "none -> {\"id\": 1}, make: ./b.sh \"x y\" -> none, make_serve: none -> ./serve.sh); "
					     "'djc alter h.djc' makes the change, 'djc drop Hc' drops it (and what depends on it) "
					     "to declare it anew, or declare into another --schema"),
		  "%d %s", rc, djc_error_last(c));
	ch = NULL;
	CHECK(djc_alter(&ch, c, H2, "h.djc", NULL) == DJC_OK && ch && ch->applied);
	djc_changes_free(ch);
	rep = NULL;
	CHECK(djc_declare(&rep, c2, H2, "h.djc") == DJC_OK && rep && strstr(rep, "exists  Hc (computed) as __hc\n"));
	free(rep);
	ch = NULL;
	CHECK(djc_drop(&ch, c, "Hs", NULL) == DJC_OK);
	djc_changes_free(ch);
}

/* Issue 36, item 15: as DataJoint 2.x, a computed or imported table with a
 * primary key attribute of its own is declared only with
 * jobs.allow_new_pk_fields_in_computed_tables; a key_source line naming
 * its tables declares what a job is and needs no setting. */
static void test_own_key(djc_conn *c)
{
	static const char K[] = "Ks (manual)\n    id : int32\n    ---\n\n"
				"Kseg (computed)\n    -> Ks\n    seg_id : int32\n    ---\n    v : int64\n";
	static const char KI[] = "Ks (manual)\n    id : int32\n    ---\n\n"
				 "Kimp (imported)\n    -> Ks\n    a : int32\n    b : int32\n    ---\n";
	static const char KS[] = "Ks (manual)\n    id : int32\n    ---\n\n"
				 "Kjoin (computed)\n    -> Ks\n    seg_id : int32\n    ---\n    v : int64\n    key_source = Ks\n";
	int rc = djc_declare(NULL, c, K, "k.djc");
	CHECK_MSG(rc == DJC_EINVAL &&
		  !strcmp(djc_error_last(c), "k.djc:5: computed table Kseg has primary key attribute seg_id from no parent: make is "
					     "called once per key of its parents, so one job would make several rows; as DataJoint does, "
					     "djc declares such a table only with jobs.allow_new_pk_fields_in_computed_tables set to true "
					     "(jobs are then the parents' keys); a part table holds several rows per key"),
		  "%d %s", rc, djc_error_last(c));
	CHECK(has_table(c, "Ks") == 0);   /* nothing of the file */
	rc = djc_declare(NULL, c, KI, "k.djc");
	CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), "imported table Kimp has primary key attributes a, b from no parent"),
		  "%d %s", rc, djc_error_last(c));
	rc = djc_declare(NULL, c, KS, "k.djc");
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(djc_config_set("jobs.allow_new_pk_fields_in_computed_tables", "true", "test", NULL) == DJC_OK);
	rc = djc_declare(NULL, c, K, "k.djc");
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	CHECK(djc_config_set("jobs.allow_new_pk_fields_in_computed_tables", "false", "test", NULL) == DJC_OK);
	/* declared: declaring it again needs no setting */
	rc = djc_declare(NULL, c, K, "k.djc");
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	const char *ks[] = {"{\"id\": 1}", "{\"id\": 2}"};
	insert_json(c, "Ks", ks, 2);
	CHECK(refresh_added(c, "Kseg") == 2);   /* a job per parent key */
	djc_changes *ch = NULL;
	CHECK(djc_drop(&ch, c, "Ks", NULL) == DJC_OK);
	djc_changes_free(ch);
}

static int mk_long(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "v", geti(key, "id") * 10);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

/* Issue 36, item 13: tables whose SQL names have 40 to 64 characters
 * (DataJoint's limit; PostgreSQL's is 63) are declared with their jobs
 * tables, indexes and foreign keys, populated with reserved jobs and
 * dropped; on PostgreSQL 64 is "too long". */
static void test_long_names(djc_conn *c)
{
	const char *be = getenv("DJC_BACKEND") ? getenv("DJC_BACKEND") : "sqlite";
	static const int len[] = {40, 50, 60, 63, 64};
	for (size_t i = 0; i < sizeof len / sizeof *len; i++) {
		char name[80], text[512];
		snprintf(name, sizeof name, "L%0*d", len[i] - 3, 0);   /* __l000...: len[i] characters */
		snprintf(text, sizeof text, "Ls (manual)\n    id : int32\n    ---\n\n%s (computed)\n    -> Ls\n    ---\n"
			 "    v : int64\n    index(v)\n", name);
		int rc = djc_declare(NULL, c, text, "long.djc");
		if (len[i] == 64 && !strcmp(be, "postgresql")) {
			CHECK_MSG(rc == DJC_EINVAL && strstr(djc_error_last(c), "long.djc:5: table name L000") &&
				  strstr(djc_error_last(c), " is too long for postgresql: its SQL name '__l000") &&
				  strstr(djc_error_last(c), "' has 64 characters, more than the 63 it keeps"),
				  "%d %s", rc, djc_error_last(c));
			CHECK(has_table(c, "Ls") == 0);
			continue;
		}
		CHECK_MSG(rc == DJC_OK, "%d: %s", len[i], djc_error_last(c));
		const char *ks[] = {"{\"id\": 1}", "{\"id\": 2}", "{\"id\": 3}"};
		insert_json(c, "Ls", ks, 3);
		CHECK_MSG(populate(c, name, mk_long) == 3, "%d", len[i]);
		CHECK(nrows(c, name, "{\"v\": 20}") == 1);
		const char *more[] = {"{\"id\": 4}"};
		insert_json(c, "Ls", more, 1);
		CHECK(refresh_added(c, name) == 1 && jobs_total(c, name) == 1);
		djc_changes *ch = NULL;
		CHECK_MSG(djc_drop(&ch, c, "Ls", NULL) == DJC_OK && ch && ch->n == 4, "%d: %s", len[i], djc_error_last(c));
		djc_changes_free(ch);
		CHECK(has_table(c, name) == 0);
	}
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_schema", "declare_again delete drop:declare_again:delete alter how_lines own_key long_names");
	char path[64];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-schema-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_schema";
	if (!strncmp(url, "sqlite:", 7)) schema = NULL;
	djc_conn *c = NULL, *c2 = NULL;
	if (djc_open(&c, url, schema) || djc_open(&c2, url, schema)) {
		fprintf(stderr, "djc_open: %s\n", djc_error_last(c));
		return 1;
	}
	int rc = djc_declare(NULL, c, PIPE, "schema.djc");
	CHECK_MSG(rc == DJC_OK, "%s", djc_error_last(c));
	if (t_want("declare_again")) test_declare_again(c);
	if (t_want("delete")) test_delete(c);
	if (t_want("drop")) test_drop(c, c2);
	if (t_want("alter")) test_alter(c);
	if (t_want("how_lines")) test_how_lines(c, c2);
	if (t_want("own_key")) test_own_key(c);
	if (t_want("long_names")) test_long_names(c);
	djc_close(c);
	djc_close(c2);
	if (!getenv("DJC_TEST_URL")) {
		t_unlink_sqlite(path + 7);
	}
	return T_DONE("test_schema");
}
