/* test_parse.c - the pipeline parser (DataJoint 2.x definition syntax), SQL
 * names, and value typing per core type, through the internal schema API.
 * Needs no database (DJC_TEST_URL is ignored). */
#include "t.h"
#include "schema/schema.h"
#include "djc.h"
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ helpers */

/* everything allocated for checks is kept here and freed at the end, so the
 * sanitizer build also checks for leaks in the code under test */
static char *pool[4096];
static size_t npool;
static char *keep(char *s) { if (npool < sizeof pool / sizeof *pool) pool[npool++] = s; return s; }

static pipeline *pipes[4096];
static size_t npipes;

/* Parse text (file "p.djc") that must parse; NULL and a failure otherwise. */
static pipeline *ok_parse_prev(const char *text, const pipeline *prev)
{
	pipeline *p = NULL;
	char *msg = NULL;
	int rc = pipeline_parse(&p, text, "p.djc", prev, &msg);
	CHECK_MSG(rc == DJC_OK && p && !msg, "unexpected parse error: %s", msg ? msg : "(none)");
	free(msg);
	if (p && npipes < sizeof pipes / sizeof *pipes) pipes[npipes++] = p;
	return p;
}
static pipeline *ok_parse(const char *text) { return ok_parse_prev(text, NULL); }

/* The message of a parse that must fail (DJC_EINVAL, *out NULL). */
static const char *err_parse_prev(const char *text, const pipeline *prev)
{
	pipeline *p = (pipeline *)1;
	char *msg = NULL;
	int rc = pipeline_parse(&p, text, "p.djc", prev, &msg);
	CHECK(rc == DJC_EINVAL);
	CHECK(p == NULL);
	if (p && p != (pipeline *)1) pipeline_free(p);
	return msg ? keep(msg) : "(parsed without error)";
}
static const char *err_parse(const char *text) { return err_parse_prev(text, NULL); }

/* An attribute "v" of the given type (a secondary attribute, nullable when
 * asked) in a table of its own. */
static const attr *typed_n(const char *type, int nullable)
{
	char text[512];
	snprintf(text, sizeof text, "T (manual)\n    k : int32\n    ---\n    v%s : %s\n", nullable ? " = null" : "", type);
	pipeline *p = ok_parse(text);
	if (!p) return NULL;
	return table_attr(p->tables[0], "v");
}
static const attr *typed(const char *type) { return typed_n(type, 0); }

/* value_in(in) then value_to_json; "ERR <message>" on failure. Takes in. */
static const char *vin(const char *type, val_t in)
{
	const attr *a = typed(type);
	if (!a) { val_free(&in); return "(no attribute)"; }
	val_t out;
	char *msg = NULL;
	int rc = value_in(a, &in, &out, &msg);
	val_free(&in);
	sb_t b = SB_INIT;
	if (rc) {
		CHECK(rc == DJC_EINVAL);
		sb_printf(&b, "ERR %s", msg ? msg : "(no message)");
	} else {
		CHECK(msg == NULL);
		value_to_json(&b, a, &out);
	}
	free(msg);
	val_free(&out);
	return keep(sb_steal(&b));
}

/* value_from_json(JSON text) then value_to_json; "ERR <message>" on failure. */
static const char *fj(const char *type, const char *json)
{
	const attr *a = typed(type);
	if (!a) return "(no attribute)";
	json_error_t je;
	json_t *j = json_loads(json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (!j) return keep(xasprintf("BADJSON %s", je.text));
	val_t out;
	char *msg = NULL;
	int rc = value_from_json(a, j, &out, &msg);
	json_decref(j);
	sb_t b = SB_INIT;
	if (rc) sb_printf(&b, "ERR %s", msg ? msg : "(no message)");
	else value_to_json(&b, a, &out);
	free(msg);
	val_free(&out);
	return keep(sb_steal(&b));
}

/* value_out of a database cell then value_to_json. Takes cell. */
static const char *vout(const char *type, val_t cell)
{
	const attr *a = typed(type);
	if (!a) { val_free(&cell); return "(no attribute)"; }
	val_t out;
	int rc = value_out(a, &cell, &out);
	CHECK(rc == DJC_OK);
	val_free(&cell);
	sb_t b = SB_INIT;
	value_to_json(&b, a, &out);
	val_free(&out);
	return keep(sb_steal(&b));
}

static val_t vuint(uint64_t u) { val_t v = {0}; v.t = DJC_UINT; v.u = u; return v; }
static val_t vbool(int x) { val_t v = {0}; v.t = DJC_BOOL; v.i = x; return v; }
static val_t vbytes(const char *s, size_t n) { val_t v = val_textn(s, n); v.t = DJC_BYTES; return v; }

static uint64_t bits(double d) { uint64_t u; memcpy(&u, &d, sizeof u); return u; }

/* ------------------------------------------------------------- parser */

static const char PIPE[] =
	"# a pipeline with every tier\n"                        /* 1 */
	"Subject (manual)   # the animals\n"                    /* 2 */
	"    subject_id : int32          # one animal\n"        /* 3 */
	"    ---\n"                                             /* 4 */
	"    name : varchar(64)\n"                              /* 5 */
	"    sex = 'U' : enum('F', 'M', 'U')\n"                 /* 6 */
	"    weight = null : float64     # grams\n"             /* 7 */
	"    note = \"a # b: c\" : varchar(32)\n"               /* 8 */
	"\n"                                                    /* 9 */
	"Rig (lookup)\n"                                        /* 10 */
	"    rig : char(4)\n"                                   /* 11 */
	"    ---\n"                                             /* 12 */
	"\n"                                                    /* 13 */
	"Session (manual)\n"                                    /* 14 */
	"    -> Subject\n"                                      /* 15 */
	"    session : int16\n"                                 /* 16 */
	"    ---\n"                                             /* 17 */
	"    -> Rig\n"                                          /* 18 */
	"    started = CURRENT_TIMESTAMP : datetime(3)\n"       /* 19 */
	"    index(rig, started)\n"                             /* 20 */
	"    unique index(started)\n"                           /* 21 */
	"\n"                                                    /* 22 */
	"Scan (imported)\n"                                     /* 23 */
	"    -> Session\n"                                      /* 24 */
	"    ---\n"                                             /* 25 */
	"    n_frames : int64\n"                                /* 26 */
	"    make = python3 'scan reader.py' --fast \"a b\"\n"  /* 27 */
	"\n"                                                    /* 28 */
	"SessionStats (computed)\n"                             /* 29 */
	"    -> Scan\n"                                         /* 30 */
	"    -> Rig\n"                                          /* 31 */
	"    ---\n"                                             /* 32 */
	"    mean_rate : float64\n"                             /* 33 */
	"    key_source = {\"subject_id\": [1, 2]}\n"           /* 34 */
	"\n"                                                    /* 35 */
	"SessionStats.Unit (part)\n"                            /* 36 */
	"    unit : uint16\n"                                   /* 37 */
	"    ---\n"                                             /* 38 */
	"    rate : float32\n";                                 /* 39 */

static void test_pipeline(void)
{
	pipeline *p = ok_parse(PIPE);
	if (!p) return;
	CHECK(p->n == 6);
	table *subj = pipeline_find(p, "Subject"), *rig = pipeline_find(p, "Rig"), *ses = pipeline_find(p, "Session"),
	      *scan = pipeline_find(p, "Scan"), *st = pipeline_find(p, "SessionStats"),
	      *unit = pipeline_find(p, "SessionStats.Unit");
	CHECK(subj && rig && ses && scan && st && unit);
	if (!(subj && rig && ses && scan && st && unit)) return;

	/* tiers and SQL names */
	CHECK(subj->tier == TIER_MANUAL && rig->tier == TIER_LOOKUP && scan->tier == TIER_IMPORTED &&
	      st->tier == TIER_COMPUTED && unit->tier == TIER_PART);
	CHECK_STR(subj->sql_name, "subject");
	CHECK_STR(rig->sql_name, "#rig");
	CHECK_STR(ses->sql_name, "session");
	CHECK_STR(scan->sql_name, "_scan");
	CHECK_STR(st->sql_name, "__session_stats");
	CHECK_STR(unit->sql_name, "__session_stats__unit");
	CHECK(subj->jobs_name == NULL && rig->jobs_name == NULL && ses->jobs_name == NULL && unit->jobs_name == NULL);
	CHECK_STR(scan->jobs_name, "~~scan");
	CHECK_STR(st->jobs_name, "~~session_stats");
	CHECK(unit->master == st);
	CHECK_STR(tier_name(TIER_LOOKUP), "lookup");
	CHECK_STR(tier_name(TIER_PART), "part");
	CHECK(subj->line == 2 && rig->line == 10 && ses->line == 14 && unit->line == 36);

	/* Subject: key, defaults, nullable, comments */
	CHECK(subj->nattrs == 5 && subj->nkey == 1 && subj->nfks == 0);
	CHECK_STR(subj->attrs[0].name, "subject_id");
	CHECK_STR(subj->attrs[0].type_text, "int32");
	CHECK_STR(subj->attrs[0].comment, "one animal");
	CHECK(subj->attrs[0].in_key && !subj->attrs[0].nullable && !subj->attrs[0].has_def && !subj->attrs[0].from_parent);
	attr *a = table_attr(subj, "sex");
	CHECK(a && a->has_def && !a->nullable && a->type.t == T_ENUM && a->type.nenums == 3);
	if (a) {
		CHECK_STR(a->def, "U");
		CHECK_STR(a->type_text, "enum('F','M','U')");
		CHECK(a->comment == NULL);
	}
	a = table_attr(subj, "weight");
	CHECK(a && a->nullable && !a->has_def && a->type.t == T_FLOAT64);
	if (a) CHECK_STR(a->comment, "grams");
	a = table_attr(subj, "note");   /* '#' and ':' inside a quoted default */
	CHECK(a && a->has_def && a->type.t == T_VARCHAR && a->type.p == 32);
	if (a) { CHECK_STR(a->def, "a # b: c"); CHECK(a->comment == NULL); }
	CHECK(table_attr(subj, "nope") == NULL);

	/* Session: parent in the key, parent below the key, indexes */
	CHECK(ses->nattrs == 4 && ses->nkey == 2 && ses->nfks == 2 && ses->nidx == 2);
	CHECK_STR(ses->attrs[0].name, "subject_id");
	CHECK_STR(ses->attrs[1].name, "session");
	CHECK(ses->attrs[0].from_parent && ses->attrs[0].in_key && !ses->attrs[1].from_parent);
	a = table_attr(ses, "rig");
	CHECK(a && !a->in_key && a->from_parent && a->type.t == T_CHAR && a->type.p == 4);
	CHECK(ses->fks[0].ptable == subj && ses->fks[0].in_key && ses->fks[0].nattrs == 1);
	CHECK(ses->fks[1].ptable == rig && !ses->fks[1].in_key && ses->fks[1].nattrs == 1);
	CHECK_STR(ses->fks[1].parent, "Rig");
	CHECK(ses->nsrc == 1 && ses->src[0] == 0);
	CHECK(!ses->idx[0].unique && ses->idx[0].nattrs == 2 && ses->idx[1].unique && ses->idx[1].nattrs == 1);
	CHECK_STR(ses->idx[0].attrs[1], "started");
	a = table_attr(ses, "started");
	CHECK(a && a->type.t == T_DATETIME && a->type.p == 3);
	if (a) { CHECK_STR(a->type_text, "datetime(3)"); CHECK_STR(a->def, "CURRENT_TIMESTAMP"); }

	/* Scan: make argv without a shell */
	CHECK(scan->make_argv != NULL);
	if (scan->make_argv) {
		CHECK_STR(scan->make_argv[0], "python3");
		CHECK_STR(scan->make_argv[1], "scan reader.py");
		CHECK_STR(scan->make_argv[2], "--fast");
		CHECK_STR(scan->make_argv[3], "a b");
		CHECK(scan->make_argv[4] == NULL);
	}
	CHECK(scan->nkey == 2 && scan->nsrc == 2);

	/* SessionStats: two parents sharing nothing; rig joins the key */
	CHECK(st->nkey == 3 && st->nattrs == 4 && st->nsrc == 3);
	CHECK_STR(st->attrs[2].name, "rig");
	CHECK_STR(st->key_source_where, "{\"subject_id\": [1, 2]}");
	CHECK(st->make_argv == NULL);

	/* the part table inherits its master's key */
	CHECK(unit->nkey == 4 && unit->nattrs == 5 && unit->nfks == 1 && unit->fks[0].ptable == st);
	CHECK_STR(unit->attrs[3].name, "unit");
	CHECK_STR(unit->attrs[4].name, "rate");
	CHECK(unit->nsrc == 3);

	/* lookups by name, SQL name and part name */
	CHECK(pipeline_lookup(p, "SessionStats") == st);
	CHECK(pipeline_lookup(p, "__session_stats") == st);
	CHECK(pipeline_lookup(p, "#rig") == rig);
	CHECK(pipeline_lookup(p, "Unit") == unit);
	CHECK(pipeline_lookup(p, "SessionStats.Unit") == unit);
	CHECK(pipeline_lookup(p, "session_stats") == NULL);
	CHECK(pipeline_lookup(p, "x;drop table session") == NULL);

	/* the stored text is the block as written */
	CHECK_STR(rig->text, "Rig (lookup)\n    rig : char(4)\n    ---\n\n");

	/* canonical form: comments and spacing do not matter, types do */
	CHECK_STR(subj->canon, "Subject (manual)\nsubject_id:int32\n---\nname:varchar(64)\nsex:enum('F','M','U')=U\n"
			       "weight=null:float64\nnote:varchar(32)=a # b: c\n");
	pipeline *q = ok_parse("Subject   (manual)\n\tsubject_id:INT32\n\t----  # key ends\n\tname : varchar( 64 ) # x\n"
			       "\tsex = \"U\" : enum( 'F','M' , 'U' )\n\tweight = NULL : float64\n"
			       "\tnote = 'a # b: c' : varchar(32)\n");
	if (q) CHECK_STR(q->tables[0]->canon, subj->canon);
	q = ok_parse("Subject (manual)\n    subject_id : int32\n    ---\n    name : varchar(65)\n");
	if (q) CHECK(strcmp(q->tables[0]->canon, subj->canon) != 0);
	/* Windows line endings */
	q = ok_parse("A (manual)\r\n    a : int32\r\n    ---\r\n    b : varchar(3)\r\n");
	if (q) { CHECK(q->tables[0]->nattrs == 2); CHECK_STR(q->tables[0]->attrs[1].type_text, "varchar(3)"); }
}

static void test_names_and_refs(void)
{
	pipeline *p = ok_parse("ABTest (manual)\n    x : int8\n    ---\nLongCamelCaseName (lookup)\n    y : int8\n    ---\n"
			       "Proc2 (imported)\n    -> ABTest\n    ---\n");
	if (p) {
		CHECK_STR(p->tables[0]->sql_name, "a_b_test");
		CHECK_STR(p->tables[1]->sql_name, "#long_camel_case_name");
		CHECK_STR(p->tables[2]->sql_name, "_proc2");
		CHECK_STR(p->tables[2]->jobs_name, "~~proc2");
	}

	/* diamond: D reaches A through B and C; a_id appears once */
	p = ok_parse("A (manual)\n    a_id : int32\n    ---\n"
		     "B (manual)\n    -> A\n    b_id : int32\n    ---\n"
		     "C (manual)\n    -> A\n    c_id : int32\n    ---\n"
		     "D (computed)\n    -> B\n    -> C\n    ---\n    x : float64\n");
	if (p) {
		table *d = pipeline_find(p, "D");
		CHECK(d && d->nkey == 3 && d->nattrs == 4 && d->nfks == 2 && d->nsrc == 3);
		if (d) {
			CHECK_STR(d->attrs[0].name, "a_id");
			CHECK_STR(d->attrs[1].name, "b_id");
			CHECK_STR(d->attrs[2].name, "c_id");
			CHECK(d->fks[0].nattrs == 2 && d->fks[1].nattrs == 2);
			CHECK_STR(d->fks[1].attrs[0], "a_id");
			CHECK_STR(d->fks[1].attrs[1], "c_id");
		}
	}

	/* a text may reference tables declared before (prev) */
	pipeline *base = ok_parse("Subject (manual)\n    subject_id : int32\n    ---\n");
	p = ok_parse_prev("Later (computed)\n    -> Subject\n    ---\n    v : int8\n", base);
	if (p) { CHECK(p->n == 1); CHECK(p->tables[0]->nkey == 1 && p->tables[0]->fks[0].ptable == base->tables[0]); }
	CHECK_STR(err_parse("Later (computed)\n    -> Subject\n    ---\n"),
		  "p.djc:2: unknown parent table 'Subject' (declare it above this table, or check the spelling)");

	/* an attribute of the same name and type as the parent's key is shared */
	p = ok_parse("A (manual)\n    a_id : int32\n    ---\nE (manual)\n    a_id : int32\n    -> A\n    ---\n");
	if (p) CHECK(p->tables[1]->nattrs == 1 && p->tables[1]->nfks == 1);
	CHECK_STR(err_parse("A (manual)\n    a_id : int32\n    ---\nE (manual)\n    a_id : int64\n    -> A\n    ---\n"),
		  "p.djc:6: attribute 'a_id' from parent A has type int32 but is already int64");
	CHECK_STR(err_parse("A (manual)\n    a_id : int32\n    ---\nE (manual)\n    -> A\n    -> A\n    ---\n"),
		  "p.djc:6: parent A is referenced twice");
	CHECK_STR(err_parse("A (manual)\n    -> A\n    a : int32\n    ---\n"), "p.djc:2: table A cannot reference itself");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    -> \n"), "p.djc:4: '->' names no parent table");
	/* two tables whose SQL names collide */
	CHECK_STR(err_parse("Session (manual)\n    a : int32\n    ---\nsession (manual)\n    b : int32\n    ---\n"),
		  "p.djc:4: table session has the same SQL name 'session' as table Session");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\nFoo (computed)\n    -> A\n    ---\nfoo (imported)\n    -> A\n    ---\n"),
		  "p.djc:7: table foo has the same SQL name '~~foo' as table Foo");
	pipeline *prev = ok_parse("Session (manual)\n    a : int32\n    ---\n");
	CHECK_STR(err_parse_prev("session (manual)\n    a : int32\n    ---\n", prev),
		  "p.djc:1: table session has the same SQL name 'session' as table Session");
	p = ok_parse_prev("Session (manual)\n    a : int32\n    ---\n", prev);   /* declaring it again is fine */
	if (p) CHECK(p->n == 1);
}

static void test_types_parse(void)
{
	static const struct { const char *in, *canon; coltype t; int p, s; } ty[] = {
		{"int8", "int8", T_INT8, 0, 0}, {"int16", "int16", T_INT16, 0, 0}, {"int32", "int32", T_INT32, 0, 0},
		{"int64", "int64", T_INT64, 0, 0}, {"uint8", "uint8", T_UINT8, 0, 0}, {"uint16", "uint16", T_UINT16, 0, 0},
		{"uint32", "uint32", T_UINT32, 0, 0}, {"uint64", "uint64", T_UINT64, 0, 0},
		{"float32", "float32", T_FLOAT32, 0, 0}, {"float64", "float64", T_FLOAT64, 0, 0},
		{"bool", "bool", T_BOOL, 0, 0}, {"decimal(10,3)", "decimal(10,3)", T_DECIMAL, 10, 3},
		{"decimal(5)", "decimal(5,0)", T_DECIMAL, 5, 0}, {"char(8)", "char(8)", T_CHAR, 8, 0},
		{"varchar(255)", "varchar(255)", T_VARCHAR, 255, 0}, {"date", "date", T_DATE, 0, 0},
		{"datetime", "datetime", T_DATETIME, 0, 0}, {"datetime(3)", "datetime(3)", T_DATETIME, 3, 0},
		{"datetime(0)", "datetime", T_DATETIME, 0, 0}, {"uuid", "uuid", T_UUID, 0, 0},
		{"json", "json", T_JSON, 0, 0}, {"bytes", "bytes", T_BYTES, 0, 0},
		{"enum('a', \"B c\")", "enum('a','B c')", T_ENUM, 255, 0},
		/* spelled as DataJoint 0.x users write them */
		{"INT UNSIGNED", "uint32", T_UINT32, 0, 0}, {"bigint", "int64", T_INT64, 0, 0},
		{"double", "float64", T_FLOAT64, 0, 0}, {"longblob", "bytes", T_BYTES, 0, 0},
		{"VarChar(12)", "varchar(12)", T_VARCHAR, 12, 0},
	};
	for (size_t i = 0; i < sizeof ty / sizeof *ty; i++) {
		const attr *a = typed(ty[i].in);
		CHECK_MSG(a != NULL, "type %s", ty[i].in);
		if (!a) continue;
		CHECK_STR(a->type_text, ty[i].canon);
		CHECK_MSG(a->type.t == ty[i].t && a->type.p == ty[i].p && a->type.s == ty[i].s, "type %s", ty[i].in);
	}
	const attr *e = typed("enum('a', \"B c\")");
	if (e) { CHECK(e->type.nenums == 2); CHECK_STR(e->type.enums[1], "B c"); }
	e = typed("enum('x,y', 'z')");
	if (e) { CHECK(e->type.nenums == 2); CHECK_STR(e->type.enums[0], "x,y"); }
}

static void test_parse_errors(void)
{
	CHECK_STR(err_parse("Session (manual)\n    session_id : int32\n    ---\n    n : int33\n"),
		  "p.djc:4: unknown type 'int33' for attribute 'n' (core types: int8..int64, uint8..uint64, float32, float64, "
		  "bool, decimal(p,s), char(n), varchar(n), enum(...), date, datetime, datetime(3), uuid, json, bytes)");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : varchr(3)\n"),
		  "p.djc:4: unknown type 'varchr(3)' for attribute 'b'");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : varchar\n"),
		  "p.djc:4: type 'varchar' of attribute 'b' needs its size, e.g. varchar(64)");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b :\n"), "p.djc:4: attribute 'b' has no type after ':'");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : varchar(0)\n"),
		  "p.djc:4: bad length in 'varchar(0)' for attribute 'b' (expected 1..16383)");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : char(256)\n"),
		  "p.djc:4: char(256) of attribute 'b' is longer than 255; use varchar");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : decimal(3,4)\n"),
		  "p.djc:4: bad precision in 'decimal(3,4)' for attribute 'b' (expected decimal(p,s) with 1 <= p <= 38, 0 <= s <= p)");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : datetime(7)\n"),
		  "p.djc:4: bad precision in 'datetime(7)' for attribute 'b' (expected 0..6)");
	/* missing --- : reported on the table's header line */
	CHECK_STR(err_parse("\nSession (manual)\n    session_id : int32\n    subject : varchar(64)\n"),
		  "p.djc:2: table Session has no '---' line separating the primary key from other attributes "
		  "(write '---' after the key, even if nothing follows)");
	CHECK_STR(err_parse("A (manual)\n    ---\n    b : int32\n"), "p.djc:1: table A has no primary key attributes above '---'");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    ---\n"),
		  "p.djc:4: second '---' in table A (only one separates the primary key)");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    -> Nope   # typo\n"),
		  "p.djc:4: unknown parent table 'Nope' (declare it above this table, or check the spelling)");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : int32\n    a : int16\n"),
		  "p.djc:5: duplicate attribute 'a' in table A");
	CHECK_STR(err_parse("P (manual)\n    a : int32\n    ---\nA (manual)\n    -> P\n    a : int32\n    ---\n"),
		  "p.djc:6: duplicate attribute 'a' in table A");
	CHECK_STR(err_parse("A (manual)\n    a = null : int32\n    ---\n"),
		  "p.djc:2: primary key attribute 'a' cannot be nullable");
	CHECK_STR(err_parse("A (manual)\n    a = 1 : int32\n    ---\n"),
		  "p.djc:2: primary key attribute 'a' cannot have a default");
	/* json and bytes cannot be compared alike on every backend: no keys, no indexes */
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    j : json\n    ---\n"),
		  "p.djc:3: attribute 'j' of type json cannot be in the primary key (put it below '---')");
	CHECK_STR(err_parse("A (manual)\n    b : bytes\n    ---\n"),
		  "p.djc:2: attribute 'b' of type bytes cannot be in the primary key (put it below '---')");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    j : json\n    unique index(a, j)\n"),
		  "p.djc:5: attribute 'j' of type json cannot be indexed");
	/* bad defaults */
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b = 300 : int8\n"),
		  "p.djc:4: bad default for 'b': attribute 'b' (int8): 300 is out of range -128..127");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b = abc : int32\n"),
		  "p.djc:4: bad default for 'b': attribute 'b' (int32): expects an integer, got a string");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b = 'x' : enum('y', 'z')\n"),
		  "p.djc:4: bad default for 'b': attribute 'b' (enum('y','z')): 'x' is not one of the enum's labels");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    d = '2023-02-29' : date\n"),
		  "p.djc:4: bad default for 'd': attribute 'd' (date): '2023-02-29' is not a date YYYY-MM-DD");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b = : int32\n"),
		  "p.djc:4: attribute 'b' has '=' but no default value");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b = CURRENT_TIMESTAMP : int64\n"),
		  "p.djc:4: CURRENT_TIMESTAMP is a default for datetime attributes only");
	/* bad enums */
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : enum(x, y)\n"),
		  "p.djc:4: enum labels of attribute 'b' must be quoted, e.g. enum('a', 'b')");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : enum()\n"), "p.djc:4: enum of attribute 'b' has no labels");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : enum('x', 'x')\n"),
		  "p.djc:4: enum label 'x' repeats in attribute 'b'");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : enum('x', '')\n"),
		  "p.djc:4: empty enum label for attribute 'b'");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : enum('x' 'y')\n"),
		  "p.djc:4: expected ',' between enum labels of attribute 'b'");
	/* table names with quotes or semicolons never reach SQL */
	CHECK_STR(err_parse("Session'; DROP TABLE x; -- (manual)\n    a : int32\n    ---\n"),
		  "p.djc:1: invalid table name 'Session'; DROP TABLE x; --' (letters and digits, starting with a letter)");
	CHECK_STR(err_parse("A\"b (manual)\n    a : int32\n    ---\n"),
		  "p.djc:1: invalid table name 'A\"b' (letters and digits, starting with a letter)");
	CHECK_STR(err_parse("A;B (lookup)\n    a : int32\n    ---\n"),
		  "p.djc:1: invalid table name 'A;B' (letters and digits, starting with a letter)");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\nA.B;x (part)\n    b : int32\n    ---\n"),
		  "p.djc:4: invalid table name 'A.B;x' (letters and digits, starting with a letter)");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    Bad-Name : int32\n"),
		  "p.djc:4: invalid attribute name 'Bad-Name' (lowercase letters, digits and _; starting with a letter)");
	/* structure */
	CHECK_STR(err_parse("# comment\n    a : int32\nA (manual)\n    a : int32\n    ---\n"),
		  "p.djc:2: indented line outside any table (a table starts with an unindented 'Name (tier)' line)");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\nb : int32\n"),
		  "p.djc:4: expected a table header 'Name (tier)', got 'b : int32'");
	CHECK_STR(err_parse("A (table)\n    a : int32\n    ---\n"),
		  "p.djc:1: unknown tier 'table' (expected manual, lookup, imported, computed or part)");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\nA (manual)\n    a : int32\n    ---\n"),
		  "p.djc:4: table A is declared twice in this file");
	CHECK_STR(err_parse("Unit (part)\n    a : int32\n    ---\n"), "p.djc:1: a part table is named Master.Part, got 'Unit'");
	CHECK_STR(err_parse("M.Unit (part)\n    a : int32\n    ---\n"),
		  "p.djc:1: part table M.Unit needs its master M declared above it");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\nC (computed)\n    a2 : int32\n    ---\n    -> A\n"),
		  "p.djc:4: computed table C needs a parent in its primary key ('-> Parent' above '---') to define its keys, "
		  "or a key_source (e.g. key_source = Parent for a parent below '---')");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    make = ./prog\n"),
		  "p.djc:4: 'make =' belongs to computed and imported tables, not manual ones");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\nC (computed)\n    -> A\n    ---\n    make = 'unterminated\n"),
		  "p.djc:7: unterminated quote in make command");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\nC (computed)\n    -> A\n    ---\n    key_source = {a: 1}\n"),
		  "p.djc:7: key_source must be a JSON restriction object, e.g. {\"session_id\": [1, 2]}");
	/* a parent's secondary attribute is the key source's to restrict (DataJoint's
	 * key_source = A & 'x=1'); the names are checked at declare (keysource_check) */
	CHECK(ok_parse("A (manual)\n    a : int32\n    ---\n    x : int8\nC (computed)\n    -> A\n    ---\n    key_source = {\"x\": 1}\n") != NULL);
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\nC (computed)\n    -> A\n    ---\n    key_source = [{\"a\": 1}, 2]\n"),
		  "p.djc:7: key_source list items must be objects or condition text");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    index(nope)\n"), "p.djc:4: index names unknown attribute 'nope'");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    unique index a\n"), "p.djc:4: expected unique index(attr, ...)");
	/* invalid UTF-8, reported on its line */
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n    b : int32 # caf\xc3\n    c : int32\n"),
		  "p.djc:4: not valid UTF-8 text");
	CHECK_STR(err_parse("A (manual)\n    a : int32\n    ---\n\n\n    b : varchar(3) = '\xed\xa0\x80'\n"),
		  "p.djc:6: not valid UTF-8 text");
	/* the file name given is the one in the message */
	pipeline *p = NULL;
	char *msg = NULL;
	CHECK(pipeline_parse(&p, "A (manual)\n    a : int33\n    ---\n", "dir/my pipeline.djc", NULL, &msg) == DJC_EINVAL);
	CHECK(msg && !strncmp(msg, "dir/my pipeline.djc:2: unknown type 'int33'", 43));
	free(msg);
	/* an empty text parses to no tables */
	p = ok_parse("# nothing here\n\n");
	if (p) CHECK(p->n == 0);
	/* good defaults of every kind */
	p = ok_parse("A (manual)\n    a : int32\n    ---\n    i = -5 : int8\n    f = 0.5 : float32\n    b = true : bool\n"
		     "    d = '1.5' : decimal(4,2)\n    s = \"it's\" : varchar(8)\n    dt = '2024-01-02 03:04:05.123' : datetime(3)\n"
		     "    j = '{\"a\": [1]}' : json\n    u = 18446744073709551615 : uint64\n");
	if (p) {
		CHECK(p->tables[0]->nattrs == 9);
		CHECK_STR(table_attr(p->tables[0], "s")->def, "it's");
		CHECK_STR(table_attr(p->tables[0], "j")->def, "{\"a\": [1]}");
		CHECK_STR(table_attr(p->tables[0], "u")->def, "18446744073709551615");
	}
}

/* ------------------------------------------------------------- values */

static void test_ints(void)
{
	CHECK_STR(vin("int64", val_int(INT64_MIN)), "-9223372036854775808");
	CHECK_STR(vin("int64", val_int(INT64_MAX)), "9223372036854775807");
	CHECK_STR(fj("int64", "-9223372036854775808"), "-9223372036854775808");
	CHECK_STR(fj("int64", "9223372036854775807"), "9223372036854775807");
	/* written by sb_add_i64, not printf: each digit count and sign */
	CHECK_STR(fj("int64", "0"), "0");
	CHECK_STR(fj("int64", "-1"), "-1");
	CHECK_STR(fj("int64", "-10"), "-10");
	CHECK_STR(fj("int64", "1000000007"), "1000000007");
	CHECK_STR(fj("int32", "-2147483648"), "-2147483648");
	CHECK_STR(vin("int64", vuint((uint64_t)INT64_MAX + 1)), "ERR attribute 'v' (int64): value out of range");
	static const struct { const char *t; const char *lo, *hi, *below, *above, *range; } r[] = {
		{"int8", "-128", "127", "-129", "128", "-128..127"},
		{"int16", "-32768", "32767", "-32769", "32768", "-32768..32767"},
		{"int32", "-2147483648", "2147483647", "-2147483649", "2147483648", "-2147483648..2147483647"},
		{"uint8", "0", "255", "-1", "256", "0..255"},
		{"uint16", "0", "65535", "-1", "65536", "0..65535"},
		{"uint32", "0", "4294967295", "-1", "4294967296", "0..4294967295"},
	};
	for (size_t i = 0; i < sizeof r / sizeof *r; i++) {
		CHECK_STR(fj(r[i].t, r[i].lo), r[i].lo);
		CHECK_STR(fj(r[i].t, r[i].hi), r[i].hi);
		char want[160];
		snprintf(want, sizeof want, "ERR attribute 'v' (%s): %s is out of range %s", r[i].t, r[i].below, r[i].range);
		CHECK_STR(fj(r[i].t, r[i].below), want);
		snprintf(want, sizeof want, "ERR attribute 'v' (%s): %s is out of range %s", r[i].t, r[i].above, r[i].range);
		CHECK_STR(fj(r[i].t, r[i].above), want);
	}
	/* an integral number is an integer; anything else is not */
	CHECK_STR(fj("int32", "7.0"), "7");
	CHECK_STR(fj("int32", "1e3"), "1000");
	CHECK_STR(fj("int32", "7.5"), "ERR attribute 'v' (int32): expects an integer, got a number");
	CHECK_STR(fj("int32", "\"7\""), "ERR attribute 'v' (int32): expects an integer, got a string");
	CHECK_STR(fj("int32", "true"), "ERR attribute 'v' (int32): expects an integer, got a boolean");
	CHECK_STR(fj("int32", "[1]"), "ERR attribute 'v' (int32): does not take an object or array");
	CHECK_STR(fj("int32", "null"), "ERR attribute 'v' (int32): cannot be null");
	const attr *n = typed_n("int32", 1);
	if (n) {
		val_t in = val_null(), out;
		char *msg = NULL;
		CHECK(value_in(n, &in, &out, &msg) == DJC_OK && out.t == DJC_NULL && !msg);
	}
	/* uint64: the whole range, as a number or a string */
	/* above INT64_MAX it is written as a string, which reads back */
	CHECK_STR(vin("uint64", vuint(UINT64_MAX)), "\"18446744073709551615\"");
	CHECK_STR(fj("uint64", "\"18446744073709551615\""), "\"18446744073709551615\"");
	CHECK_STR(fj("uint64", "\"9223372036854775808\""), "\"9223372036854775808\"");
	CHECK_STR(fj("uint64", "\"9223372036854775807\""), "9223372036854775807");
	CHECK_STR(fj("uint64", "9223372036854775807"), "9223372036854775807");
	CHECK_STR(fj("uint64", "0"), "0");
	CHECK_STR(fj("uint64", "\"18446744073709551616\""), "ERR attribute 'v' (uint64): value out of range");
	CHECK_STR(fj("uint64", "-1"), "ERR attribute 'v' (uint64): value out of range (negative)");
	CHECK_STR(fj("uint64", "\"12a\""), "ERR attribute 'v' (uint64): expects an unsigned integer, got a string");
	/* database cells back to typed values */
	CHECK_STR(vout("int64", val_text("-9223372036854775808")), "-9223372036854775808");
	CHECK_STR(vout("int8", val_int(-128)), "-128");
	CHECK_STR(vout("uint64", val_text("18446744073709551615")), "\"18446744073709551615\"");
	CHECK_STR(vout("uint64", val_int(-1)), "\"18446744073709551615\"");   /* SQLite keeps the 64 bits */
	CHECK_STR(vout("uint32", val_int(4294967295LL)), "4294967295");
}

static void test_floats(void)
{
	/* float64: every value survives value_in -> JSON text -> JSON -> value, bit for bit */
	double xs[] = {0.1, 0.2, 0.30000000000000004, 1e-300, 5e-324, 2.2250738585072014e-308, DBL_MAX, -DBL_MAX,
		       9007199254740993.0 /* 2^53+1 rounds to 2^53 */, 9007199254740992.0, 123456789.123456789,
		       -0.0, 1.0 / 3.0, 6.02214076e23, 1e22, 1e23, 4.35, 100.0};
	uint64_t seed = 88172645463325252ULL;
	const attr *a = typed("float64");
	for (int i = 0; a && i < 2000 + (int)(sizeof xs / sizeof *xs); i++) {
		double x;
		if (i < (int)(sizeof xs / sizeof *xs)) x = xs[i];
		else {
			do {   /* xorshift64 over all bit patterns, finite only */
				seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
				memcpy(&x, &seed, sizeof x);
			} while (!isfinite(x));
		}
		val_t in = val_float(x), out;
		char *msg = NULL;
		int rc = value_in(a, &in, &out, &msg);
		sb_t b = SB_INIT;
		value_to_json(&b, a, &out);
		double back = strtod(sb_str(&b), NULL);
		json_t *j = json_loads(sb_str(&b), JSON_DECODE_ANY, NULL);
		val_t out2 = {0};
		char *msg2 = NULL;
		int rc2 = j ? value_from_json(a, j, &out2, &msg2) : -1;
		val_t cell = val_text(sb_str(&b)), out3;
		value_out(a, &cell, &out3);
		int same = rc == 0 && bits(back) == bits(x == 0 ? back : x) && back == x && rc2 == 0 && out2.f == x &&
			   out3.t == DJC_FLOAT && out3.f == x;
		CHECK_MSG(same, "float64 %.17g -> %s", x, sb_str(&b));
		if (!same) { free(msg); free(msg2); json_decref(j); sb_free(&b); val_free(&cell); break; }
		free(msg); free(msg2); json_decref(j); sb_free(&b); val_free(&cell); val_free(&out); val_free(&out2); val_free(&out3);
	}
	CHECK_STR(fj("float64", "0.1"), "0.1");
	CHECK_STR(fj("float64", "1e-300"), "1e-300");
	CHECK_STR(fj("float64", "9007199254740993.0"), "9007199254740992");
	CHECK_STR(fj("float64", "9007199254740993"), "9007199254740992");   /* an integer beyond 2^53 is rounded */
	CHECK_STR(fj("float64", "1.7976931348623157e308"), "1.7976931348623157e+308");
	CHECK_STR(fj("float64", "\"0.1\""), "ERR attribute 'v' (float64): expects a number, got a string");
	/* NaN as JSON carries it (a Python make's): said so, where no adopted float takes it */
	CHECK_STR(fj("float64", "\"NaN\""),
		  "ERR attribute 'v' (float64): NaN and infinities are not stored (the backends disagree on them)");
	CHECK_STR(fj("float32", "\"-Infinity\""),
		  "ERR attribute 'v' (float32): NaN and infinities are not stored (the backends disagree on them)");
	CHECK_STR(fj("float64", "\"nan\""), "ERR attribute 'v' (float64): expects a number, got a string");
	CHECK_STR(vin("float64", val_float(NAN)),
		  "ERR attribute 'v' (float64): NaN and infinities are not stored (the backends disagree on them)");
	CHECK_STR(vin("float64", val_float(INFINITY)),
		  "ERR attribute 'v' (float64): NaN and infinities are not stored (the backends disagree on them)");
	CHECK_STR(vin("float32", val_float(-INFINITY)),
		  "ERR attribute 'v' (float32): NaN and infinities are not stored (the backends disagree on them)");
	/* float32: rounded to the nearest float32 on the way in and out */
	CHECK_STR(fj("float32", "0.1"), "0.10000000149011612");
	CHECK_STR(fj("float32", "16777217"), "16777216");
	CHECK_STR(fj("float32", "0.5"), "0.5");
	CHECK_STR(fj("float32", "1e39"), "ERR attribute 'v' (float32): value out of float32 range");
	CHECK_STR(vout("float32", val_text("0.1")), "0.10000000149011612");
	CHECK_STR(vout("float32", val_float(0.1)), "0.10000000149011612");
	CHECK_STR(vout("float64", val_text("0.1")), "0.1");
	CHECK_STR(vout("float64", val_int(3)), "3");
}

/* digits of a float's text that matter: without sign, point, exponent,
 * leading zeros and trailing zeros */
static int sig_digits(const char *s)
{
	char d[64];
	int n = 0;
	for (; *s && *s != 'e'; s++)
		if (*s >= '0' && *s <= '9' && (n || *s != '0') && n < 63) d[n++] = *s;
	while (n > 1 && d[n - 1] == '0') n--;
	return n ? n : 1;
}

/* fewest significant digits that read back as x */
static int shortest_digits(double x)
{
	char e[40];
	for (int p = 1; p < 17; p++) {
		snprintf(e, sizeof e, "%.*e", p - 1, x);
		if (strtod(e, NULL) == x) return p;
	}
	return 17;
}

static void test_float_text(void)
{
	/* plain notation for 1e-7 <= |x| < 1e16, exponent notation outside */
	static const struct { double x; const char *text; } c[] = {
		{10, "10"}, {100, "100"}, {120, "120"}, {0.1, "0.1"}, {1.5, "1.5"}, {-3.25, "-3.25"},
		{123456789.0, "123456789"}, {100.5, "100.5"}, {1234.5e-3, "1.2345"}, {1.0 / 3.0, "0.3333333333333333"},
		{0.30000000000000004, "0.30000000000000004"}, {9007199254740992.0, "9007199254740992"},
		{1e15, "1000000000000000"}, {9999999999999998.0, "9999999999999998"}, {-1e15, "-1000000000000000"},
		{1e16, "1e+16"}, {1.5e16, "1.5e+16"}, {1e21, "1e+21"}, {6.02214076e23, "6.02214076e+23"}, {1e300, "1e+300"},
		{DBL_MAX, "1.7976931348623157e+308"}, {1e-7, "0.0000001"}, {1.5e-7, "0.00000015"}, {0.000123, "0.000123"},
		{9.99e-8, "9.99e-8"}, {1e-8, "1e-8"}, {1e-10, "1e-10"}, {-1e-10, "-1e-10"}, {1.5e-10, "1.5e-10"},
		{5e-324, "5e-324"}, {2.2250738585072014e-308, "2.2250738585072014e-308"}, {0.0, "0"}, {-0.0, "0"},   /* -0.0 is stored as 0 (docs/types.md) */
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) CHECK_STR(vin("float64", val_float(c[i].x)), c[i].text);
	CHECK_STR(fj("float64", "10"), "10");
	CHECK_STR(fj("float64", "1e2"), "100");
	CHECK_STR(fj("float64", "1.2e2"), "120");
	CHECK_STR(fj("float64", "123456789.0"), "123456789");
	CHECK_STR(fj("float32", "120"), "120");
	CHECK_STR(fj("float32", "1.5"), "1.5");
	CHECK_STR(fj("float32", "1e-10"), "1.000000013351432e-10");
	CHECK_STR(fj("float32", "3.4028234663852886e38"), "3.4028234663852886e+38");
	CHECK_STR(vout("float32", val_text("1e+01")), "10");
	CHECK_STR(vout("float64", val_text("1.2e+02")), "120");
	CHECK_STR(vout("float64", val_float(1e-300)), "1e-300");
	/* json attributes keep a real a real; decimals from a float are never rounded */
	CHECK_STR(fj("json", "[1e2, 10.0, 0.5, 1e-10, 1e16, 7]"), "[100.0,10.0,0.5,1e-10,1e+16,7]");
	CHECK_STR(fj("decimal(10,3)", "1e2"), "\"100.000\"");
	CHECK_STR(fj("decimal(10,3)", "1e-5"), "ERR attribute 'v' (decimal(10,3)): '0.00001' has more decimal places than the type keeps");
	CHECK_STR(fj("decimal(10,3)", "1e-10"), "ERR attribute 'v' (decimal(10,3)): '1e-10' has more decimal places than the type keeps");
	CHECK_STR(fj("decimal(10,3)", "1e20"), "ERR attribute 'v' (decimal(10,3)): '1e+20' has too many digits");
	CHECK_STR(fj("decimal(38,0)", "1e20"), "\"100000000000000000000\"");
	CHECK_STR(fj("decimal(38,12)", "1.5e-10"), "\"0.000000000150\"");

	/* every magnitude: the text reads back exactly (strtod, and jansson then
	 * value_from_json), uses the fewest digits, and the notation follows the rule */
	const attr *a = typed("float64"), *a32 = typed("float32");
	uint64_t seed = 0x9E3779B97F4A7C15ULL;
	int bad = 0;
	for (int k = -330; a && a32 && k <= 310 && !bad; k++) {
		for (int r = 0; r < 40 && !bad; r++) {
			seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
			double m = 1.0 + (double)(seed >> 11) / 9007199254740992.0 * 9.0;   /* [1, 10) */
			if (r < 3) m = (double)(r + 1);                                     /* round numbers too */
			if (r == 3) m = 1.2;
			char num[48];
			snprintf(num, sizeof num, "%.17ge%d", m, k);   /* m * 10^k without libm */
			double x = strtod(num, NULL);
			if (r & 1) x = -x;
			if (!isfinite(x) || x == 0) continue;
			for (int w = 0; w < 2 && !bad; w++) {   /* as float64, then rounded to float32 */
				const attr *t = w ? a32 : a;
				if (w && (fabs(x) > FLT_MAX || (double)(float)x == 0)) continue;
				double want = w ? (double)(float)x : x;
				val_t in = val_float(x), out = {0}, back = {0};
				char *msg = NULL;
				int rc = value_in(t, &in, &out, &msg);
				sb_t b = SB_INIT;
				if (!rc) value_to_json(&b, t, &out);
				const char *s = sb_str(&b);
				double ax = fabs(want);
				int expo = strchr(s, 'e') != NULL;
				json_t *j = json_loads(s, JSON_DECODE_ANY, NULL);
				int rc2 = j ? value_from_json(t, j, &back, &msg) : -1;
				int ok = rc == 0 && strtod(s, NULL) == want && rc2 == 0 && back.t == DJC_FLOAT && back.f == want &&
					 expo == (ax < 1e-7 || ax >= 1e16) && sig_digits(s) == shortest_digits(want) && strlen(s) <= 26;
				CHECK_MSG(ok, "%s %.17g -> %s", w ? "float32" : "float64", want, s);
				if (!ok) bad = 1;
				json_decref(j);
				free(msg);
				sb_free(&b);
				val_free(&out);
				val_free(&back);
			}
		}
	}
}

static void test_text_types(void)
{
	/* bool */
	CHECK_STR(fj("bool", "true"), "true");
	CHECK_STR(fj("bool", "false"), "false");
	CHECK_STR(fj("bool", "1"), "true");
	CHECK_STR(fj("bool", "2"), "ERR attribute 'v' (bool): expects true or false, got an integer");
	CHECK_STR(fj("bool", "\"yes\""), "ERR attribute 'v' (bool): expects true or false, got a string");
	CHECK_STR(vout("bool", val_text("t")), "true");
	CHECK_STR(vout("bool", val_text("f")), "false");
	CHECK_STR(vout("bool", val_int(1)), "true");
	CHECK_STR(vout("bool", val_int(0)), "false");

	/* decimal: normalised to the scale; never rounded */
	CHECK_STR(fj("decimal(10,3)", "\"1.5\""), "\"1.500\"");
	CHECK_STR(fj("decimal(10,3)", "\"-0001234567.125\""), "\"-1234567.125\"");
	CHECK_STR(fj("decimal(10,3)", "\"+.5\""), "\"0.500\"");
	CHECK_STR(fj("decimal(10,3)", "\"-0.000\""), "\"0.000\"");
	CHECK_STR(fj("decimal(10,3)", "\"2.1000\""), "\"2.100\"");
	CHECK_STR(fj("decimal(10,3)", "0.1"), "\"0.100\"");
	CHECK_STR(fj("decimal(10,3)", "42"), "\"42.000\"");
	CHECK_STR(fj("decimal(10,3)", "1e3"), "\"1000.000\"");
	CHECK_STR(fj("decimal(10,0)", "\"9999999999\""), "\"9999999999\"");
	CHECK_STR(fj("decimal(38,10)", "\"1234567890123456789012345678.0123456789\""),
		  "\"1234567890123456789012345678.0123456789\"");
	CHECK_STR(fj("decimal(3,3)", "\"0.999\""), "\"0.999\"");
	CHECK_STR(fj("decimal(10,3)", "\"1.2345\""), "ERR attribute 'v' (decimal(10,3)): '1.2345' has more decimal places than the type keeps");
	CHECK_STR(fj("decimal(10,3)", "\"12345678.5\""), "ERR attribute 'v' (decimal(10,3)): '12345678.5' has too many digits");
	CHECK_STR(fj("decimal(10,0)", "\"99999999999\""), "ERR attribute 'v' (decimal(10,0)): '99999999999' has too many digits");
	CHECK_STR(fj("decimal(10,3)", "\"1.2.3\""), "ERR attribute 'v' (decimal(10,3)): '1.2.3' is not a decimal number");
	CHECK_STR(fj("decimal(10,3)", "\"\""), "ERR attribute 'v' (decimal(10,3)): '' is not a decimal number");
	CHECK_STR(fj("decimal(10,3)", "\"1e3\""), "ERR attribute 'v' (decimal(10,3)): '1e3' is not a decimal number");
	CHECK_STR(vout("decimal(10,3)", val_text("1.50")), "\"1.500\"");
	CHECK_STR(vout("decimal(10,3)", val_text("-0012.100")), "\"-12.100\"");
	CHECK_STR(vout("decimal(10,0)", val_int(12)), "\"12\"");

	/* char and varchar: lengths in characters, not bytes */
	CHECK_STR(fj("varchar(4)", "\"h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""), "\"h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	CHECK_STR(fj("varchar(3)", "\"h\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""),
		  "ERR attribute 'v' (varchar(3)): 4 characters do not fit in 3");
	CHECK_STR(fj("varchar(3)", "\"ab \""), "\"ab \"");
	CHECK_STR(fj("varchar(2)", "\"ab \""), "ERR attribute 'v' (varchar(2)): 3 characters do not fit in 2");
	CHECK_STR(fj("char(2)", "\"ab   \""), "\"ab\"");   /* char drops trailing spaces */
	CHECK_STR(fj("char(2)", "\"abc\""), "ERR attribute 'v' (char(2)): 3 characters do not fit in 2");
	CHECK_STR(vout("char(4)", val_text("ab  ")), "\"ab\"");
	CHECK_STR(fj("varchar(8)", "\"a\\u0000b\""), "ERR attribute 'v' (varchar(8)): is not valid UTF-8 (or contains a NUL byte)");
	CHECK_STR(vin("varchar(8)", val_text("caf\xe9")), "ERR attribute 'v' (varchar(8)): is not valid UTF-8 (or contains a NUL byte)");
	CHECK_STR(vin("varchar(8)", val_text("\xc0\x80")), "ERR attribute 'v' (varchar(8)): is not valid UTF-8 (or contains a NUL byte)");
	CHECK_STR(fj("varchar(8)", "5"), "ERR attribute 'v' (varchar(8)): expects a string, got an integer");
	CHECK_STR(fj("varchar(12)", "\"tab\\there\\n\""), "\"tab\\there\\n\"");

	/* enum */
	CHECK_STR(fj("enum('red', 'green')", "\"green\""), "\"green\"");
	CHECK_STR(fj("enum('red', 'green')", "\"Green\""), "ERR attribute 'v' (enum('red','green')): 'Green' is not one of the enum's labels");

	/* date and datetime */
	CHECK_STR(fj("date", "\"2024-02-29\""), "\"2024-02-29\"");
	CHECK_STR(fj("date", "\"2023-02-29\""), "ERR attribute 'v' (date): '2023-02-29' is not a date YYYY-MM-DD");
	CHECK_STR(fj("date", "\"2024-1-2\""), "ERR attribute 'v' (date): '2024-1-2' is not a date YYYY-MM-DD");
	CHECK_STR(fj("date", "\"2024-01-02 00:00:00\""), "ERR attribute 'v' (date): '2024-01-02 00:00:00' is not a date YYYY-MM-DD");
	CHECK_STR(fj("datetime", "\"2024-01-02 03:04:05\""), "\"2024-01-02 03:04:05\"");
	CHECK_STR(fj("datetime", "\"2024-01-02T03:04:05\""), "\"2024-01-02 03:04:05\"");
	CHECK_STR(fj("datetime", "\"2024-01-02\""), "\"2024-01-02 00:00:00\"");
	CHECK_STR(fj("datetime", "\"2024-01-02 03:04:05.000\""), "\"2024-01-02 03:04:05\"");
	CHECK_STR(fj("datetime", "\"2024-01-02 03:04:05.5\""),
		  "ERR attribute 'v' (datetime): '2024-01-02 03:04:05.5' has more fractional digits than the type keeps (0; cut "
		  "the value first, e.g. Python's dt.isoformat(sep=' ', timespec='seconds'))");
	CHECK_STR(fj("datetime(3)", "\"2024-01-02 03:04:05.5\""), "\"2024-01-02 03:04:05.500\"");
	CHECK_STR(fj("datetime(3)", "\"2024-01-02 03:04:05\""), "\"2024-01-02 03:04:05.000\"");
	CHECK_STR(fj("datetime(3)", "\"2024-01-02 03:04:05.123000\""), "\"2024-01-02 03:04:05.123\"");
	CHECK_STR(fj("datetime(3)", "\"2024-01-02 03:04:05.1234\""),
		  "ERR attribute 'v' (datetime(3)): '2024-01-02 03:04:05.1234' has more fractional digits than the type keeps (3; "
		  "cut the value first, e.g. Python's dt.isoformat(sep=' ', timespec='milliseconds'))");
	CHECK_STR(fj("datetime(3)", "\"2024-01-02 24:00:00\""),
		  "ERR attribute 'v' (datetime(3)): '2024-01-02 24:00:00' is not a datetime YYYY-MM-DD HH:MM[:SS[.fff]]");
	CHECK_STR(fj("datetime(3)", "\"2024-01-02 03:04:05Z\""),
		  "ERR attribute 'v' (datetime(3)): '2024-01-02 03:04:05Z' is not a datetime YYYY-MM-DD HH:MM[:SS[.fff]]");
	CHECK_STR(vout("datetime(3)", val_text("2024-01-02 03:04:05.678000")), "\"2024-01-02 03:04:05.678\"");
	CHECK_STR(vout("datetime(3)", val_text("2024-01-02 03:04:05")), "\"2024-01-02 03:04:05.000\"");
	CHECK_STR(vout("datetime", val_text("2024-01-02 03:04:05")), "\"2024-01-02 03:04:05\"");

	/* uuid: lowercase with dashes */
	CHECK_STR(fj("uuid", "\"6BA7B810-9DAD-11D1-80B4-00C04FD430C8\""), "\"6ba7b810-9dad-11d1-80b4-00c04fd430c8\"");
	CHECK_STR(fj("uuid", "\"6ba7b8109dad11d180b400c04fd430c8\""), "\"6ba7b810-9dad-11d1-80b4-00c04fd430c8\"");
	CHECK_STR(fj("uuid", "\"6ba7b810-9dad-11d1-80b4-00c04fd430cg\""),
		  "ERR attribute 'v' (uuid): '6ba7b810-9dad-11d1-80b4-00c04fd430cg' is not a UUID");
	CHECK_STR(fj("uuid", "\"6ba7b8109-dad-11d1-80b4-00c04fd430c8\""),
		  "ERR attribute 'v' (uuid): '6ba7b8109-dad-11d1-80b4-00c04fd430c8' is not a UUID");
	CHECK_STR(vout("uuid", val_text("6BA7B810-9DAD-11D1-80B4-00C04FD430C8")), "\"6ba7b810-9dad-11d1-80b4-00c04fd430c8\"");

	/* json: compact canonical text, key order kept, any JSON value */
	CHECK_STR(fj("json", "{ \"b\" : [1, 2.50, \"x\"], \"a\" : null }"), "{\"b\":[1,2.5,\"x\"],\"a\":null}");
	CHECK_STR(fj("json", "[1.0, 1e300, -0.5, true]"), "[1.0,1e+300,-0.5,true]");
	CHECK_STR(fj("json", "\"just a string\""), "\"just a string\"");
	CHECK_STR(fj("json", "\"\\u00e9\\n\""), "\"\xc3\xa9\\n\"");
	CHECK_STR(fj("json", "42"), "42");
	CHECK_STR(fj("json", "null"), "ERR attribute 'v' (json): cannot be null");
	CHECK_STR(vin("json", val_text(" {\"k\" : [ 1 ,2 ] } ")), "{\"k\":[1,2]}");
	CHECK_STR(vin("json", val_text("{bad")), "ERR attribute 'v' (json): is not valid JSON text: string or '}' expected near 'bad'");
	CHECK_STR(vout("json", val_text("{\"k\":[1,2]}")), "{\"k\":[1,2]}");

	/* bytes: base64 in JSON, any bytes including NUL */
	CHECK_STR(fj("bytes", "\"AAEC/w==\""), "\"AAEC/w==\"");
	CHECK_STR(fj("bytes", "\"\""), "\"\"");
	CHECK_STR(fj("bytes", "\"AA\""), "ERR attribute 'v' (bytes): expects bytes as a base64 string");
	CHECK_STR(fj("bytes", "\"A===\""), "ERR attribute 'v' (bytes): expects bytes as a base64 string");
	CHECK_STR(fj("bytes", "\"AA=A\""), "ERR attribute 'v' (bytes): expects bytes as a base64 string");
	CHECK_STR(fj("bytes", "12"), "ERR attribute 'v' (bytes): expects bytes, got an integer");
	CHECK_STR(vin("bytes", vbytes("\0\1\2\377", 4)), "\"AAEC/w==\"");
	CHECK_STR(vin("bytes", vbytes("\0", 1)), "\"AA==\"");
	CHECK_STR(vin("bytes", vbytes("ab", 2)), "\"YWI=\"");
	CHECK_STR(vout("bytes", vbytes("\0\0x", 3)), "\"AAB4\"");
	CHECK_STR(vin("bytes", val_text("AAEC")), "ERR attribute 'v' (bytes): expects bytes, got a string");
	{
		const attr *a = typed("bytes");
		json_t *j = json_string("AAEC/w==");
		val_t out;
		char *msg = NULL;
		if (a && j && value_from_json(a, j, &out, &msg) == DJC_OK) {
			CHECK(out.t == DJC_BYTES && out.n == 4 && !memcmp(out.s, "\0\1\2\377", 4));
			val_free(&out);
		} else
			CHECK(!"bytes from base64");
		free(msg);
		json_decref(j);
	}
	/* a bool value for a bool attribute via the C API */
	CHECK_STR(vin("bool", vbool(1)), "true");
	CHECK_STR(vin("bool", val_float(1.0)), "ERR attribute 'v' (bool): expects true or false, got a number");
}

static void test_rows(void)
{
	pipeline *p = ok_parse("S (manual)\n    id : int32\n    ---\n    name : varchar(8)\n    b = null : bytes\n");
	if (!p) return;
	table *t = p->tables[0];
	json_t *o = json_loads("{\"name\": \"x\", \"id\": 3, \"b\": \"AAE=\"}", 0, NULL);
	djc_row *r = NULL;
	char *msg = NULL;
	CHECK(row_from_json_obj(t, o, &r, &msg) == DJC_OK && r && !msg);
	json_decref(o);
	if (r) {
		sb_t b = SB_INIT;
		row_to_json(&b, t, r);   /* heading order, not input order */
		CHECK_STR(sb_str(&b), "{\"id\":3,\"name\":\"x\",\"b\":\"AAE=\"}");
		sb_free(&b);
		char *k = key_to_json(t, r, 0);
		CHECK_STR(k, "{\"id\": 3}");
		free(k);
		djc_row_free(r);
	}
	o = json_loads("{\"id\": 3, \"nmae\": \"x\"}", 0, NULL);
	CHECK(row_from_json_obj(t, o, &r, &msg) == DJC_EINVAL && r == NULL);
	CHECK_STR(msg, "unknown attribute \"nmae\" for table S");
	free(msg);
	json_decref(o);
	o = json_loads("[1]", 0, NULL);
	CHECK(row_from_json_obj(t, o, &r, &msg) == DJC_EINVAL);
	CHECK_STR(msg, "expected a JSON object");
	free(msg);
	json_decref(o);
	o = json_loads("{\"id\": 2147483648}", 0, NULL);
	CHECK(row_from_json_obj(t, o, &r, &msg) == DJC_EINVAL);
	CHECK_STR(msg, "attribute 'id' (int32): 2147483648 is out of range -2147483648..2147483647");
	free(msg);
	json_decref(o);
}


/* n copies of s, kept */
static const char *rep(const char *s, int n)
{
	size_t k = strlen(s);
	char *o = keep(calloc(k * (size_t)n + 1, 1));
	for (int i = 0; i < n; i++) memcpy(o + k * (size_t)i, s, k);
	return o;
}

/* Issue 36, item 13: a table's SQL name may have 64 characters, as in
 * DataJoint; the names djc derives from it (jobs table, history, their
 * indexes, the table's indexes and foreign keys) fit 63, shortened by a
 * fixed rule (cut + "_" + 9 digits of FNV-1a + suffix; docs/schema.md) that
 * leaves every name an earlier djc made as it was. The expected names
 * were computed by a separate implementation of that rule. */
static void test_long_names(void)
{
	sb_t b = SB_INIT;
	CHECK(sql_derived_name(&b, "~~session_stats", "__history") == 0);
	CHECK_STR(sb_str(&b), "~~session_stats__history");
	sb_reset(&b);
	char stem[80];
	snprintf(stem, sizeof stem, "~~%s", rep("x", 70));
	CHECK(sql_derived_name(&b, stem, "") == 1);
	CHECK_STR(sb_str(&b), keep(xasprintf("~~%s_071497573", rep("x", 51))));
	CHECK(strlen(sb_str(&b)) == 63);
	sb_free(&b);

	/* every name an earlier djc accepted (a computed table's snake name
	 * of at most 52 characters) keeps its derived names */
	for (int n = 1; n <= 52; n++) {
		const char *name = keep(xasprintf("A%s", rep("b", n - 1))), *sn = keep(xasprintf("a%s", rep("b", n - 1)));
		pipeline *p = ok_parse(keep(xasprintf("S (manual)\n    id : int32\n    ---\n%s (computed)\n    -> S\n    ---\n"
						      "    v : int32\n    index(v)\n", name)));
		const table *t = p ? p->tables[1] : NULL;
		if (!t) continue;
		sb_t x = SB_INIT;
		int cut = table_jobs_index(&x, t, "next") + table_jobs_index(&x, t, "lease") + table_index_name(&x, t, 0) +
			  table_fk_name(&x, t, 0);
		CHECK_MSG(!strcmp(t->jobs_name, keep(xasprintf("~~%s", sn))) && !strcmp(t->hist_name, keep(xasprintf("~~%s__history", sn))) &&
			  !cut && !strcmp(sb_str(&x), keep(xasprintf("~~%s_next~~%s_lease__%s_i0__%s_ibfk_1", sn, sn, sn, sn))),
			  "snake name of %d characters: %s %s %s", n, t->jobs_name, t->hist_name, sb_str(&x));
		sb_free(&x);
	}

	/* 53 characters: refused before (its history's name had 64); now the
	 * history's name is shortened, the others are as they were */
	const char *n53 = keep(xasprintf("%scde", rep("Ab", 17)));
	pipeline *p = ok_parse(keep(xasprintf("S (manual)\n    id : int32\n    ---\n%s (computed)\n    -> S\n    ---\n    v : int32\n", n53)));
	if (p) {
		const table *t = p->tables[1];
		CHECK_STR(t->sql_name, "__ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_abcde");
		CHECK_STR(t->jobs_name, "~~ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_abcde");
		CHECK_STR(t->hist_name, "~~ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab_ab__854610078__history");
	}

	/* SQL names of 64 characters: a computed and an imported table, with an
	 * index and a foreign key */
	const char *lx = keep(xasprintf("L%s", rep("x", 61))), *my = keep(xasprintf("M%s", rep("y", 62)));
	p = ok_parse(keep(xasprintf("S (manual)\n    id : int32\n    ---\n%s (computed)\n    -> S\n    ---\n    v : int32\n    index(v)\n"
				    "%s (imported)\n    -> S\n    ---\n    v : int32\n    index(v)\n", lx, my)));
	static const char *const want[2][7] = {
		{"__lxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		 "~~lxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_197496897",
		 "~~lxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_699502209__history",
		 "~~lxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_268041015_next",
		 "~~lxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_779206456_lease",
		 "__lxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_971520593_i0",
		 "__lxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_545858832_ibfk_1"},
		{"_myyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy",
		 "~~myyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy_458167450",
		 "~~myyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy_312390648__history",
		 "~~myyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy_214747646_next",
		 "~~myyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy_423125971_lease",
		 "_myyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy_873286201_i0",
		 "_myyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy_154813304_ibfk_1"},
	};
	for (int k = 0; p && k < 2; k++) {
		const table *t = p->tables[1 + k];
		sb_t x[4] = {SB_INIT, SB_INIT, SB_INIT, SB_INIT};
		CHECK(table_jobs_index(&x[0], t, "next") && table_jobs_index(&x[1], t, "lease") && table_index_name(&x[2], t, 0) &&
		      table_fk_name(&x[3], t, 0));
		const char *got[7] = {t->sql_name, t->jobs_name, t->hist_name, sb_str(&x[0]), sb_str(&x[1]), sb_str(&x[2]), sb_str(&x[3])};
		for (int i = 0; i < 7; i++) CHECK_STR(got[i], want[k][i]);
		for (int i = 0; i < 4; i++) sb_free(&x[i]);
	}
	/* names are letters and digits of any length; 65 SQL characters is too long */
	p = ok_parse(keep(xasprintf("A%s (manual)\n    id : int32\n    ---\n", rep("b", 63))));
	CHECK(p && strlen(p->tables[0]->sql_name) == 64);
	CHECK_STR(err_parse(keep(xasprintf("S (manual)\n    id : int32\n    ---\n%sx (computed)\n    -> S\n    ---\n", lx))),
		  keep(xasprintf("p.djc:4: table name %sx is too long: its SQL name '__l%sx' has 65 characters, more than the 64 "
				 "DataJoint allows", lx, rep("x", 61))));
	CHECK_STR(err_parse(keep(xasprintf("S (manual)\n    id : int32\n    ---\nS.P%s (part)\n    v : int32\n    ---\n", rep("q", 61)))),
		  keep(xasprintf("p.djc:4: table name S.P%s is too long: its SQL name 's__p%s' has 65 characters, more than the 64 "
				 "DataJoint allows", rep("q", 61), rep("q", 61))));

	/* two long names whose shortened names meet (found by search: the same
	 * cut, the same 9 digits) are refused, not mixed up: their jobs tables
	 * ... */
	const char *ja = keep(xasprintf("A%svdigrhsxmrg", rep("b", 50))), *jb = keep(xasprintf("A%stptqcckxeku", rep("b", 50)));
	CHECK_STR(err_parse(keep(xasprintf("S (manual)\n    id : int32\n    ---\n%s (computed)\n    -> S\n    ---\n"
					   "%s (computed)\n    -> S\n    ---\n", ja, jb))),
		  keep(xasprintf("p.djc:7: table %s has the same SQL name '~~a%s_513446165' as table %s", jb, rep("b", 50), ja)));
	/* ... their history tables (here a table declared before) */
	const char *ha = keep(xasprintf("A%sxqsnzdwnqt", rep("b", 45))), *hb = keep(xasprintf("A%srecpeknjdn", rep("b", 45)));
	pipeline *prev = ok_parse(keep(xasprintf("S (manual)\n    id : int32\n    ---\n%s (computed)\n    -> S\n    ---\n", ha)));
	CHECK_STR(err_parse_prev(keep(xasprintf("%s (computed)\n    -> S\n    ---\n", hb)), prev),
		  keep(xasprintf("p.djc:1: table %s: the SQL name '~~a%s_580295844__history' that djc derives from its name "
				 "(shortened to fit 63 characters) is also one of table %s's; rename one of the two tables",
				 hb, rep("b", 41), ha)));
	/* declaring the same table again is no clash */
	CHECK(ok_parse_prev(keep(xasprintf("%s (computed)\n    -> S\n    ---\n", ha)), prev) != NULL);
}


/* Issue 36, item 11: how a table's rows are made (make, make_serve,
 * timeout) is not its definition: canon leaves it out, how holds it, and
 * a declare replaces only those lines of the stored text. key_source stays
 * in the definition (which keys the table holds). */
static void test_how(void)
{
	static const char A[] = "S (manual)\n    id : int32\n    ---\n\n"
				"C (computed)   # calc\n    -> S\n    ---\n    v : int32   # value\n    make = ./a.sh x\n    timeout = 1h\n"
				"    w = 0 : int32\n\n";
	static const char B[] = "S (manual)\n    id : int32\n    ---\n\n"
				"C (computed)   # calc, changed\n    -> S\n    ---\n    v : int32   # the value\n    make = './b 2.sh' \"q\\\"\"\n"
				"    timeout = 90m\n    w = 0 : int32\n";
	static const char N[] = "S (manual)\n    id : int32\n    ---\n\nC (computed)\n    -> S\n    ---\n    v : int32\n"
				"    w = 0 : int32\n";
	static const char K[] = "S (manual)\n    id : int32\n    ---\n\nC (computed)\n    -> S\n    ---\n    v : int32\n"
				"    w = 0 : int32\n    key_source = {\"id\": 1}\n";
	pipeline *a = ok_parse(A), *b = ok_parse(B), *n = ok_parse(N), *k = ok_parse(K);
	if (!a || !b || !n || !k) return;
	const table *ta = a->tables[1], *tb = b->tables[1], *tn = n->tables[1], *tk = k->tables[1];
	CHECK_STR(ta->canon, tb->canon);
	CHECK_STR(ta->canon, tn->canon);
	CHECK(strcmp(ta->canon, tk->canon) != 0);   /* key_source is the definition */
	CHECK_STR(ta->how, "make = [./a.sh] [x]\ntimeout = 3600\n");
	CHECK(strcmp(ta->how, tb->how) != 0);
	CHECK_STR(tn->how, "");
	/* the stored text keeps everything but those lines (comments too) */
	CHECK_STR(keep(table_text_with_how(ta, tb)), "C (computed)   # calc\n    -> S\n    ---\n    v : int32   # value\n"
						     "    make = './b 2.sh' \"q\\\"\"\n    timeout = 90m\n    w = 0 : int32\n");
	CHECK_STR(keep(table_text_with_how(ta, tn)), "C (computed)   # calc\n    -> S\n    ---\n    v : int32   # value\n"
						     "    w = 0 : int32\n");
	CHECK_STR(keep(table_text_with_how(tn, ta)), "C (computed)\n    -> S\n    ---\n    v : int32\n    w = 0 : int32\n"
						     "    make = ./a.sh x\n    timeout = 1h\n");
	/* an attribute called timeout with a default is an attribute */
	pipeline *t2 = ok_parse("S (manual)\n    id : int32\n    ---\nC (computed)\n    -> S\n    ---\n    timeout = 5 : int32\n");
	if (t2) CHECK_STR(keep(table_text_with_how(t2->tables[1], tn)), "C (computed)\n    -> S\n    ---\n    timeout = 5 : int32\n");
	char *v[3];
	size_t nv = table_how_changes(ta, tb, v);
	CHECK(nv == 2);
	if (nv == 2) {
		CHECK_STR(keep(v[0]), "make: ./a.sh x -> \"./b 2.sh\" \"q\\\"\"");
		CHECK_STR(keep(v[1]), "timeout: 1h -> 1h30m");
	}
	nv = table_how_changes(ta, tn, v);
	CHECK(nv == 2);
	if (nv == 2) {
		CHECK_STR(keep(v[0]), "make: ./a.sh x -> none");
		CHECK_STR(keep(v[1]), "timeout: 1h -> none");
	}
	CHECK(table_how_changes(ta, ta, v) == 0);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_parse", "pipeline names_and_refs long_names how types_parse parse_errors ints floats float_text text_types rows");
	if (t_want("pipeline")) test_pipeline();
	if (t_want("names_and_refs")) test_names_and_refs();
	if (t_want("long_names")) test_long_names();
	if (t_want("how")) test_how();
	if (t_want("types_parse")) test_types_parse();
	if (t_want("parse_errors")) test_parse_errors();
	if (t_want("ints")) test_ints();
	if (t_want("floats")) test_floats();
	if (t_want("float_text")) test_float_text();
	if (t_want("text_types")) test_text_types();
	if (t_want("rows")) test_rows();
	for (size_t i = 0; i < npool; i++) free(pool[i]);
	for (size_t i = 0; i < npipes; i++) pipeline_free(pipes[i]);
	return T_DONE("test_parse");
}
