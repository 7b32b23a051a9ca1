/* test_cond.c - condition text (issue 39, src/table/cond.h): the grammar
 * selects the rows it says on every backend (comparisons either way round,
 * in, between, like, is null, not, and, or, parentheses, quotes and
 * escapes, typed by the attribute); every literal is a bound parameter,
 * never SQL text; each malformed or unsafe condition is DJC_EINVAL with
 * one line naming the problem and its column, nothing read or deleted;
 * a computed table's restriction may name its parents' (and their
 * ancestors') attributes. Runs on the backend named by $DJC_TEST_URL /
 * $DJC_TEST_SCHEMA (default: a fresh SQLite file). */
#include "t.h"
#include "tdb.h"
#include "table/cond.h"
#include "table/table.h"
#include <string.h>
#include <unistd.h>

static const char PIPE[] =
	"Subject (manual)\n"
	"    subject : varchar(16)\n"
	"    ---\n"
	"    species : varchar(16)\n"
	"    weight = null : float64\n"
	"    born : date\n"
	"    meta = null : json\n"
	"\n"
	"Session (manual)\n"
	"    -> Subject\n"
	"    session : int32\n"
	"    ---\n"
	"    duration : float64\n"
	"    note = null : varchar(64)\n"
	"\n"
	"Stats (computed)\n"
	"    -> Session\n"
	"    ---\n"
	"    n : int32\n"
	"\n"
	"Rig (manual)\n"
	"    rig : varchar(8)\n"
	"    ---\n"
	"    gain : float32\n"
	"    started = null : datetime\n";

static void fill(djc_conn *c)
{
	static const char *const rows[][2] = {
		{"Subject", "{\"subject\": \"m1\", \"species\": \"mouse\", \"weight\": 20.5, \"born\": \"2020-01-01\"}"},
		{"Subject", "{\"subject\": \"m2\", \"species\": \"mouse\", \"born\": \"2020-02-01\"}"},
		{"Subject", "{\"subject\": \"r1\", \"species\": \"rat\", \"weight\": 300, \"born\": \"2019-05-05\", \"meta\": {\"a\": 1}}"},
		{"Subject", "{\"subject\": \"o'q\\\"x\", \"species\": \"rat\", \"weight\": 1, \"born\": \"2021-03-03\"}"},
		{"Session", "{\"subject\": \"m1\", \"session\": 1, \"duration\": 3.5, \"note\": \"pilot a\"}"},
		{"Session", "{\"subject\": \"m1\", \"session\": 2, \"duration\": 4}"},
		{"Session", "{\"subject\": \"m2\", \"session\": 1, \"duration\": 2.25, \"note\": \"pilot b\"}"},
		{"Session", "{\"subject\": \"r1\", \"session\": 1, \"duration\": 10, \"note\": \"main\"}"},
		{"Session", "{\"subject\": \"r1\", \"session\": 2, \"duration\": 1.5}"},
	};
	for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) CHECK(t_insert_json(c, rows[i][0], rows[i][1]) == DJC_OK);
}

/* The rows of table where the condition holds: the rows it must select. */
static void selects(djc_conn *c, const char *tab, const char *cond, long want)
{
	long n = t_count(c, tab, cond);
	CHECK_MSG(n == want, "%s & '%s': %ld rows, want %ld", tab, cond, n, want);
}

static void grammar(djc_conn *c)
{
	selects(c, "Subject", "species = \"mouse\"", 2);
	selects(c, "Subject", "species = 'rat'", 2);
	selects(c, "Subject", "species <> \"rat\"", 2);
	selects(c, "Subject", "species != 'rat'", 2);
	selects(c, "Subject", "weight > 20 and weight < 301", 2);
	selects(c, "Subject", "weight >= 20.5", 2);
	selects(c, "Subject", "weight <= 20.5", 2);
	selects(c, "Subject", "weight is null", 1);
	selects(c, "Subject", "weight IS NOT NULL", 3);
	selects(c, "Subject", "meta is not null", 1);
	selects(c, "Subject", "born > \"2019-12-31\"", 3);
	selects(c, "Subject", "subject = \"o'q\\\"x\"", 1);        /* escapes: o'q"x */
	selects(c, "Subject", "subject = 'o\\'q\"x'", 1);
	selects(c, "Subject", "subject = 'o''q\"x'", 1);           /* a quote doubled, as in SQL */
	selects(c, "Subject", "subject = \"o'q\"\"x\"", 1);
	selects(c, "Subject", "subject = 'o''q' or subject = ''''", 0);
	selects(c, "Subject", "subject = 'a;b -- c'", 0);
	selects(c, "Session", "duration > 3.5", 2);
	selects(c, "Session", "duration >= 3.5", 3);
	selects(c, "Session", "3.5 < duration", 2);                  /* turned round */
	selects(c, "Session", "10 <= duration", 1);
	selects(c, "Session", "session in (2)", 2);
	selects(c, "Session", "session not in (1, 3)", 2);
	selects(c, "Session", "subject in ('m1', \"r1\") and session in (1)", 2);
	selects(c, "Session", "duration between 2.25 and 4", 3);
	selects(c, "Session", "duration not between 2.25 and 4", 2);
	selects(c, "Session", "note like \"pilot%\"", 2);
	selects(c, "Session", "note like \"_ain\"", 1);
	selects(c, "Session", "note not like 'pilot%'", 1);          /* null notes are neither */
	selects(c, "Session", "not (session = 1) or note is null", 2);
	selects(c, "Session", "not session = 1", 2);
	selects(c, "Session", "(subject = \"m1\" or subject = \"r1\") and session = 1", 2);
	selects(c, "Session", "subject = \"m1\" or subject = \"r1\" and session = 1", 3);   /* and binds tighter */
	selects(c, "Session", "NOT (session = 1 AND note Like 'pilot%') And duration < 5", 2);
	selects(c, "Session", "`session` = 1", 3);
	selects(c, "Session", "  session=1  ", 3);
	selects(c, "Session", "((((session = 2))))", 2);
	selects(c, "Session", "session = -1 or duration = -0.5", 0);
	CHECK(t_count(c, "Subject", NULL) == 4);
	CHECK(t_count(c, "Session", NULL) == 5);
}

/* Every literal is a bound value: the rendered SQL holds none of them. */
static void bound(djc_conn *c)
{
	table *t = NULL;
	CHECK(conn_table(c, "Subject", &t) == DJC_OK);
	if (!t) return;
	q_arena a = Q_ARENA_INIT;
	q_node *x = NULL;
	CHECK(restrict_node(&x, &a, c, t, "species = \"r'at\" and (weight > 1.5 or subject in ('a', 'b'))", NULL, 0) == DJC_OK);
	sb_t sql = SB_INIT;
	pvec p = {0};
	q_out o = {&sql, &p, 0};
	CHECK(x && q_cond_sql(c->db, x, &o) == DJC_OK);
	CHECK_MSG(!strstr(sb_str(&sql), "r'at") && !strstr(sb_str(&sql), "1.5") && !strchr(sb_str(&sql), '\''),
		  "values spliced: %s", sb_str(&sql));
	CHECK_MSG(p.n == 4, "%zu bound values", p.n);
	CHECK(p.n == 4 && p.v[0].t == VAL_TEXT && !strcmp(p.v[0].s, "r'at") && p.v[1].t == VAL_FLOAT && p.v[1].f == 1.5);
	sb_free(&sql);
	pvec_free(&p);
	q_arena_free(&a);
}

/* Each refused: DJC_EINVAL, one line, the problem and its column. */
static void refusals(djc_conn *c)
{
	static const char *const bad[][3] = {
		{"Subject", "1=1", "column 1: this compares two values"},
		{"Subject", "species = \"rat\" or 1=1", "column 20: this compares two values"},
		{"Subject", "species = 'rat' or 1", "column 20: a value alone is not a condition"},
		{"Subject", "true", "column 1: a value alone is not a condition"},
		{"Subject", "species", "column 1: 'species' alone is not a condition"},
		{"Subject", "species = \"rat\"; drop table Subject", "column 16: ';' is not part of a condition"},
		{"Subject", "species = \"rat\" -- x", "column 17: comments are not part of a condition"},
		{"Subject", "species = \"rat\" /* x */", "column 17: comments are not part of a condition"},
		{"Subject", "species = \"rat\" # x", "column 17: comments are not part of a condition"},
		{"Subject", "species = \"rat", "column 11: unterminated string (its \" is not closed)"},
		{"Subject", "species = 'rat\" or 1=1 --", "column 11: unterminated string (its ' is not closed)"},
		{"Subject", "(species = \"rat\"", "column 1: unbalanced parentheses: this '(' is not closed"},
		{"Subject", "species = \"rat\")", "column 16: unbalanced parentheses: this ')' closes nothing"},
		{"Subject", ")", "column 1: expected a condition, found ')' (unbalanced parentheses)"},
		{"Subject", "species = \"rat\" or", "column 19: the condition ends where a condition is expected"},
		{"Subject", "species = \"rat\" and and weight > 1", "column 21: expected a condition, found a keyword"},
		{"Subject", "not", "column 4: the condition ends where a condition is expected"},
		{"Subject", "spceies = \"rat\"", "column 1: \"spceies\" is not an attribute of Subject (did you mean species? "
					       "the valid names: subject, species, weight, born, meta)"},
		{"Subject", "zzz = 1", "column 1: \"zzz\" is not an attribute of Subject (the valid names: subject, species"},
		{"Subject", "weight = \"heavy\"", "column 10: attribute 'weight' (float64): expects a number, got a string"},
		{"Session", "session = 1.5", "column 11: attribute 'session' (int32): expects an integer"},
		{"Session", "session = \"1.5\"", "column 11: attribute 'session' (int32): expects an integer, got a string"},
		{"Subject", "species = 3", "column 11: attribute 'species' (varchar(16)): "},
		{"Subject", "born > \"2020-13-01\"", "column 8: attribute 'born' (date)"},
		{"Subject", "weight = null", "column 10: null is not a value to compare with (test 'weight is null'"},
		{"Subject", "null = weight", "column 1: null is not a value to compare with"},
		{"Subject", "meta = 1", "column 6: json attribute 'meta' can only be tested with 'is null' or 'is not null'"},
		{"Subject", "meta in (1)", "column 6: json attribute 'meta'"},
		{"Subject", "weight like \"1%\"", "column 8: 'like' matches text, and attribute 'weight' is float64"},
		{"Subject", "species like 3", "column 14: 'like' takes a string pattern"},
		{"Session", "note like \"a\\\\%\"", "column 11: a 'like' pattern with a backslash"},
		{"Session", "session in ()", "column 13: 'in' takes at least one value"},
		{"Session", "session in (1, null)", "column 16: null in an 'in' list matches nothing"},
		{"Session", "session in 1", "column 12: 'in' takes a list in parentheses"},
		{"Session", "session in (1 2)", "column 15: expected ',' or ')' in the 'in' list, found a number"},
		{"Session", "session between 1", "column 18: 'between' takes two values"},
		{"Session", "session is 1", "column 12: 'is' takes null"},
		{"Session", "session not = 1", "column 13: 'not' after a name goes with in, between or like"},
		{"Subject", "species == \"rat\"", "column 9: '==' is not an operator (use =)"},
		{"Subject", "species = weight", "column 11: a comparison compares 'species' with a value, not with an attribute ('weight')"},
		{"Subject", "species = \"rat\" weight > 1", "column 17: unexpected a name after a complete condition"},
		{"Subject", "species = \"rat\" && weight > 1", "column 17: unexpected character '&'"},
		{"Subject", "species = 'a\\q'", "column 13: unknown escape in a string"},
		{"Subject", "weight > 1.2.3", "column 10: malformed number"},
		{"Subject", "weight > 12abc", "column 10: malformed number"},
		{"Subject", "`weight = 1", "column 1: unterminated `name`"},
		{"Subject", "species = 'rat' or species = 'mouse' or sleep(5)", "column 41: \"sleep\" is not an attribute of Subject"},
		{"Subject", "species = \"\xc3\xb6\" or zz = 1", "column 18: \"zz\" is not an attribute of Subject"},
		{"Subject", "weight = 1 union select 1", "column 12: unexpected a name after a complete condition"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		djc_rowset *rs = NULL;
		int rc = djc_fetch(&rs, c, bad[i][0], bad[i][1]);
		const char *m = djc_error_last(c);
		CHECK_MSG(rc == DJC_EINVAL && !strncmp(m, "condition, ", 11) && strstr(m, bad[i][2]) && !strchr(m, '\n'),
			  "%s & '%s': %d %s (want ...%s...)", bad[i][0], bad[i][1], rc, m, bad[i][2]);
		djc_rowset_free(rs);
	}
	char deep[300];
	memset(deep, '(', 100);
	strcpy(deep + 100, "session = 1");
	memset(deep + 111, ')', 100);
	deep[211] = 0;
	djc_rowset *rs = NULL;
	CHECK_MSG(djc_fetch(&rs, c, "Session", deep) == DJC_EINVAL && strstr(djc_error_last(c), "column 65: nested more than 64 deep"),
		  "%s", djc_error_last(c));
	djc_rowset_free(rs);
	/* a refused delete deletes nothing */
	size_t n = 99;
	CHECK(djc_delete(&n, c, "Session", "session = 1 or 1=1") == DJC_EINVAL);
	CHECK(djc_delete(&n, c, "Session", "session = 1; delete from Session") == DJC_EINVAL);
	CHECK(t_count(c, "Session", NULL) == 5);
	CHECK(t_count(c, "Subject", NULL) == 4);
}

/* A computed table's restriction names its parents' and their ancestors'
 * attributes: its key source restricted by them (text and JSON alike). */
static void parents(djc_conn *c)
{
	long rem = -1, tot = -1;
	CHECK_MSG(djc_progress(&rem, &tot, c, "Stats", "species = \"rat\"") == DJC_OK && tot == 2 && rem == 2, "%ld %ld %s",
		  rem, tot, djc_error_last(c));
	CHECK(djc_progress(&rem, &tot, c, "Stats", "{\"species\": \"rat\"}") == DJC_OK && tot == 2);
	CHECK(djc_progress(&rem, &tot, c, "Stats", "[{\"species\": \"rat\"}, {\"note\": \"pilot b\"}]") == DJC_OK && tot == 3);
	CHECK(djc_progress(&rem, &tot, c, "Stats", "species = 'mouse' and duration > 3") == DJC_OK && tot == 2);
	CHECK(djc_progress(&rem, &tot, c, "Stats", "session = 2") == DJC_OK && tot == 2);   /* a key attribute: as before */
	CHECK(djc_progress(&rem, &tot, c, "Stats", "weight is null or note like 'main'") == DJC_OK && tot == 2);
	CHECK_MSG(djc_progress(&rem, &tot, c, "Stats", "specis = 'rat'") == DJC_EINVAL &&
		  strstr(djc_error_last(c), "\"specis\" is not an attribute of the key source of Stats (Session, Subject) (did "
			 "you mean species? the valid names: subject, session, duration, note, species, weight, born, meta)"),
		  "%s", djc_error_last(c));
	CHECK_MSG(djc_progress(&rem, &tot, c, "Stats", "{\"specis\": \"rat\"}") == DJC_EINVAL &&
		  strstr(djc_error_last(c), "restriction names \"specis\", which is not an attribute of the key source of Stats "
			 "(Session, Subject) (did you mean species? its attributes: subject, session, duration, note, species, "
			 "weight, born, meta)"),
		  "%s", djc_error_last(c));
	CHECK(djc_progress(&rem, &tot, c, "Stats", "{\"species\": 3}") == DJC_EINVAL);
}

/* A value compared with a float32 or a datetime compares as the servers
 * (and DataJoint) compare it: a float32 column, widened to a double, with
 * the number as given (0.1 is no float32: the stored 0.1 is
 * 0.100000001490116...); a datetime with more fractional digits than the
 * column keeps, exactly (equal to none, ordered after the value it starts
 * with). Inserting such a datetime is refused, as before. */
static void server_cmp(djc_conn *c)
{
	CHECK(t_insert_json(c, "Rig", "{\"rig\": \"A\", \"gain\": 1.5, \"started\": \"2024-01-02 10:30:01\"}") == DJC_OK);
	CHECK(t_insert_json(c, "Rig", "{\"rig\": \"B\", \"gain\": 0.1}") == DJC_OK);
	CHECK(t_insert_json(c, "Rig", "{\"rig\": \"c\", \"gain\": 2.0}") == DJC_OK);
	selects(c, "Rig", "gain = 0.1", 0);
	selects(c, "Rig", "{\"gain\": 0.1}", 0);
	selects(c, "Rig", "gain > 0.1", 3);
	selects(c, "Rig", "{\"gain\": {\">\": 0.1}}", 3);
	selects(c, "Rig", "gain <= 0.1", 0);
	selects(c, "Rig", "gain in (0.1, 2)", 1);
	selects(c, "Rig", "{\"gain\": [0.1, 2]}", 1);
	selects(c, "Rig", "gain = 0.10000000149011612", 1);   /* the stored value, as fetched */
	selects(c, "Rig", "{\"gain\": 0.10000000149011612}", 1);
	selects(c, "Rig", "gain < 1e39", 3);                  /* beyond float32: a comparison, not a value stored */
	selects(c, "Rig", "started = \"2024-01-02 10:30:01.123456\"", 0);
	selects(c, "Rig", "{\"started\": \"2024-01-02 10:30:01.123456\"}", 0);
	selects(c, "Rig", "{\"started\": \"2024-01-02 10:30:01.000\"}", 1);
	selects(c, "Rig", "started < \"2024-01-02 10:30:01.5\"", 1);
	selects(c, "Rig", "started > \"2024-01-02 10:30:00.999999\"", 1);
	selects(c, "Rig", "started > \"2024-01-02 10:30:01.000001\"", 0);
	CHECK(t_insert_json(c, "Rig", "{\"rig\": \"d\", \"gain\": 1e39}") == DJC_EINVAL);
	CHECK_MSG(t_insert_json(c, "Rig", "{\"rig\": \"d\", \"gain\": 1, \"started\": \"2024-01-02 10:30:01.5\"}") == DJC_EINVAL &&
		  strstr(djc_error_last(c), "has more fractional digits than the type keeps"), "%s", djc_error_last(c));
	selects(c, "Rig", NULL, 3);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_cond", "fill grammar:fill bound refusals:fill parents:fill server_cmp");
	char path[64];
	const char *url = getenv("DJC_TEST_URL");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-cond-%d.db", (int)getpid());
		url = path;
	}
	const char *schema = getenv("DJC_TEST_SCHEMA") ? getenv("DJC_TEST_SCHEMA") : "djc_test_cond";
	if (!strncmp(url, "sqlite:", 7)) schema = NULL;
	djc_conn *c = t_open(url, schema);
	CHECK_MSG(djc_declare(NULL, c, PIPE, "cond.djc") == DJC_OK, "declare: %s", djc_error_last(c));
	if (t_want("fill")) fill(c);
	if (t_want("grammar")) grammar(c);
	if (t_want("bound")) bound(c);
	if (t_want("refusals")) refusals(c);
	if (t_want("parents")) parents(c);
	if (t_want("server_cmp")) server_cmp(c);
	djc_close(c);
	if (!getenv("DJC_TEST_URL")) unlink(path + 7);
	return T_DONE("test_cond");
}
