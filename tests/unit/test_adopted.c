/* test_adopted.c - adopted DataJoint tables (issue 38, docs/adopt.md): the
 * `adopted = schema.table` line, schema-qualified names, renamed references
 * (-> P.proj(child='parent')), the adopted column options (`as binary(16)`,
 * `collate`, raw(...)), the <blob> type and its header check, through the
 * internal schema API. Needs no database: the tables' life on a server is
 * tests/cli/test_adopted.sh. */
#include "t.h"
#include "schema/schema.h"
#include "djc.h"
#include <stdlib.h>
#include <string.h>

static pipeline *pipes[64];
static size_t npipes;
static char *msgs[64];
static size_t nmsgs;

static pipeline *ok_parse(const char *text)
{
	pipeline *p = NULL;
	char *msg = NULL;
	int rc = pipeline_parse(&p, text, "p.djc", NULL, &msg);
	CHECK_MSG(rc == DJC_OK && p && !msg, "unexpected parse error: %s", msg ? msg : "(none)");
	free(msg);
	if (p && npipes < 64) pipes[npipes++] = p;
	return p;
}

static const char *err_parse(const char *text)
{
	pipeline *p = NULL;
	char *msg = NULL;
	int rc = pipeline_parse(&p, text, "p.djc", NULL, &msg);
	CHECK(rc == DJC_EINVAL && !p);
	if (p) pipeline_free(p);
	if (!msg) return "(parsed without error)";
	if (nmsgs < 64) msgs[nmsgs++] = msg;
	return msg;
}

static val_t bytes_val(const char *s, size_t n)
{
	val_t v = {0};
	v.t = DJC_BYTES;
	v.s = malloc(n + 1);
	memcpy(v.s, s, n);
	v.s[n] = 0;
	v.n = n;
	return v;
}

#define HAS(s, sub) CHECK_MSG(strstr((s), (sub)) != NULL, "'%s' lacks '%s'", (s), (sub))

/* The stored form adopt writes (docs/adopt.md), shaped as a 0.14 schema
 * with a parent in a second schema. */
static const char *PIPE =
	"dj14_up.Subject (manual)\n"
	"    adopted = dj14_up.subject\n"
	"    subject_id : int32   # subject number\n"
	"    ---\n"
	"    subject_name : varchar(64) collate utf8mb4_general_ci\n"
	"    sex : enum('M', 'F', 'U')\n"
	"ParamSet (lookup)\n"
	"    adopted = `dj14_main`.`#param_set`   # quoted: '#' would start a comment\n"
	"    param_id : int16\n"
	"    ---\n"
	"    threshold : float64\n"
	"Session (manual)\n"
	"    adopted = dj14_main.session\n"
	"    -> dj14_up.Subject\n"
	"    session_idx : uint8\n"
	"    ---\n"
	"    uid : uuid as binary(16)\n"
	"    t : raw(time)\n"
	"Follow (computed)\n"
	"    adopted = dj14_main.__follow\n"
	"    -> Session\n"
	"    -> Session.proj(prev_idx='session_idx')\n"
	"    ---\n"
	"    out : <blob>\n"
	"    make = ./follow\n"
	"Follow.Item (part)\n"
	"    adopted = dj14_main.__follow__item\n"
	"    -> master\n"
	"    item : int16\n"
	"    ---\n"
	"    value : float32\n";

static void test_stored_form(void)
{
	pipeline *p = ok_parse(PIPE);
	if (!p) return;
	table *s = pipeline_find(p, "dj14_up.Subject");
	CHECK(s && s->adopted && !strcmp(s->adopted, "dj14_up") && !strcmp(s->schema, "dj14_up"));
	CHECK(s && !strcmp(s->sql_name, "subject") && !strcmp(table_sqlref(s), "dj14_up\x1fsubject"));
	CHECK(s && !strcmp(table_attr(s, "subject_name")->collate, "utf8mb4_general_ci"));
	table *ps = pipeline_find(p, "ParamSet");
	CHECK(ps && !strcmp(ps->sql_name, "#param_set") && !strcmp(ps->schema, "dj14_main"));
	table *se = pipeline_find(p, "Session");
	CHECK(se && se->nkey == 2 && se->fks[0].ptable == s);
	CHECK(se && table_attr(se, "uid")->bin16 && table_attr(se, "uid")->type.t == T_UUID);
	CHECK(se && table_attr(se, "t")->raw && !strcmp(table_attr(se, "t")->type_text, "raw(time)"));
	CHECK(se && table_raw_attr(se) == table_attr(se, "t"));
	table *f = pipeline_find(p, "Follow");
	CHECK(f && f->nfks == 2 && f->nkey == 3 && f->nsrc == 3);
	if (f && f->nfks == 2) {
		CHECK(!f->fks[0].renamed && f->fks[1].renamed);
		CHECK_STR(f->fks[1].attrs[1], "session_idx");
		CHECK_STR(f->fks[1].cattrs[1], "prev_idx");
		CHECK_STR(f->fks[1].cattrs[0], "subject_id");
	}
	CHECK(f && table_attr(f, "out")->dj_blob && table_attr(f, "out")->type.t == T_BYTES);
	CHECK(f && f->jobs_name && !strcmp(f->jobs_name, "~~follow"));
	HAS(f->canon, "adopted = dj14_main.__follow\n");
	HAS(f->canon, "->Session.proj(subject_id='subject_id',prev_idx='session_idx')\n");
	HAS(se->canon, "uid:uuid as binary(16)\n");
	table *it = pipeline_find(p, "Follow.Item");
	CHECK(it && it->master == f && !strcmp(it->sql_name, "__follow__item"));
	/* the stored text parses back to the same canonical form */
	sb_t all = SB_INIT;
	for (size_t i = 0; i < p->n; i++) sb_add(&all, p->tables[i]->text);
	pipeline *q = ok_parse(sb_str(&all));
	sb_free(&all);
	for (size_t i = 0; q && i < p->n && i < q->n; i++) CHECK_STR(q->tables[i]->canon, p->tables[i]->canon);
	/* one SQL name in two schemas: two tables; two jobs tables of one name: refused */
	CHECK(ok_parse("a.T (manual)\n    adopted = a.session\n    k : int32\n    ---\n"
		       "b.T (manual)\n    adopted = b.session\n    k : int32\n    ---\n") != NULL);
	/* ... of other schemas than the first: each qualified by its schema */
	pipeline *two = ok_parse("P (manual)\n    k : int32\n    ---\n"
				 "a.C (computed)\n    adopted = a.__c\n    -> P\n    ---\n"
				 "b.C (computed)\n    adopted = b.__c\n    -> P\n    ---\n"
				 "C (computed)\n    adopted = m.__c\n    -> P\n    ---\n");
	CHECK(two && !strcmp(pipeline_find(two, "a.C")->jobs_name, "~~a__c") &&
	      !strcmp(pipeline_find(two, "b.C")->hist_name, "~~b__c__history") &&
	      !strcmp(pipeline_find(two, "C")->jobs_name, "~~c"));
	HAS(err_parse("P (manual)\n    k : int32\n    ---\n"
		      "C (computed)\n    adopted = a.__c\n    -> P\n    ---\n"
		      "D (computed)\n    adopted = b.__c\n    -> P\n    ---\n"),
	    "p.djc:8: table D has the same SQL name '~~c' as table C");
	/* an attribute called adopted is still an attribute */
	pipeline *a = ok_parse("T (manual)\n    k : int32\n    ---\n    adopted = 0 : int32  # a: b\n");
	CHECK(a && !a->tables[0]->adopted && table_attr(a->tables[0], "adopted"));
}

static void test_adopted_errors(void)
{
	HAS(err_parse("T (manual)\n    adopted = s\n    k : int32\n    ---\n"), "p.djc:2: expected adopted = schema.table");
	HAS(err_parse("T (manual)\n    adopted = s.t x\n    k : int32\n    ---\n"), "p.djc:2: unexpected text");
	HAS(err_parse("T (manual)\n    adopted = s.t\n    adopted = s.u\n    k : int32\n    ---\n"), "p.djc:3: second 'adopted ='");
	HAS(err_parse("T (manual)\n    k : int32\n    ---\n    v : raw(time)\n"), "p.djc:4: attribute 'v': raw(...) columns belong to adopted tables only");
	HAS(err_parse("T (manual)\n    k : int32\n    ---\n    v : varchar(3) collate x\n"), "for adopted tables only");
	HAS(err_parse("T (manual)\n    adopted = s.t\n    k : int32 as binary(16)\n    ---\n"), "expected 'as binary(16)' for a uuid");
	HAS(err_parse("s.T (manual)\n    adopted = r.t\n    k : int32\n    ---\n"), "invalid table name 's.T'");
	/* renames */
	const char *P = "P (manual)\n    a : int32\n    b : int32\n    ---\n";
	char buf[512];
	snprintf(buf, sizeof buf, "%sC (manual)\n    -> P.proj(x='zz')\n    ---\n", P);
	HAS(err_parse(buf), "p.djc:6: P.proj(x='zz'): 'zz' is not a primary key attribute of P");
	snprintf(buf, sizeof buf, "%sC (manual)\n    -> P.proj(x=b)\n    ---\n", P);
	HAS(err_parse(buf), "must be quoted");
	snprintf(buf, sizeof buf, "%sC (manual)\n    -> P\n    -> P\n    ---\n", P);
	HAS(err_parse(buf), "p.djc:7: parent P is referenced twice");
	snprintf(buf, sizeof buf, "%sC (manual)\n    -> P\n    -> P.proj(c=\"b\")\n    ---\n", P);
	pipeline *p = ok_parse(buf);
	table *c = p ? pipeline_find(p, "C") : NULL;
	CHECK(c && c->nkey == 3 && table_attr(c, "c") && table_attr(c, "c")->from_parent);
	/* DataJoint's nullable references: an adopted table's, below '---', as
	 * plain nullable attributes (no key source, cascade or insert check)
	 * with the reference kept for their lineage; refused elsewhere */
	snprintf(buf, sizeof buf, "%sC (manual)\n    k : int32\n    ---\n    -> [nullable] P.proj(x='a')\n", P);
	HAS(err_parse(buf), "p.djc:8: nullable references are not supported");
	snprintf(buf, sizeof buf, "%sC (manual)\n    adopted = s.c\n    -> [nullable] P\n    ---\n", P);
	HAS(err_parse(buf), "p.djc:7: nullable references are not supported");
	snprintf(buf, sizeof buf, "%sC (manual)\n    adopted = s.c\n    k : int32\n    ---\n    -> [nullable] P.proj(x='a')\n", P);
	p = ok_parse(buf);
	c = p ? pipeline_find(p, "C") : NULL;
	const attr *x = c ? table_attr(c, "x") : NULL, *b = c ? table_attr(c, "b") : NULL;
	CHECK(c && c->nkey == 1 && c->nattrs == 3 && c->nfks == 0 && c->nnullrefs == 1 && c->nullrefs[0].renamed);
	CHECK(x && x->nullable && !x->in_key && !x->from_parent && b && b->nullable && !b->from_parent);
	CHECK(c && !strcmp(c->nullrefs[0].cattrs[0], "x") && !strcmp(c->nullrefs[0].attrs[0], "a"));
}

/* <blob>: a DataJoint blob header, else a clear error (w3-common.md). */
static void test_blob(void)
{
	pipeline *p = ok_parse("T (manual)\n    k : int32\n    ---\n    b : <blob>\n    r : bytes\n");
	if (!p) return;
	const attr *b = table_attr(p->tables[0], "b"), *r = table_attr(p->tables[0], "r");
	static const char *good[] = {"mYm\0M", "dj0\0P", "ZL123\0"};
	static const size_t glen[] = {5, 5, 6};
	for (size_t i = 0; i < 3; i++) {
		val_t in = bytes_val(good[i], glen[i]), out = {0};
		char *msg = NULL;
		CHECK(value_in(b, &in, &out, &msg) == DJC_OK && out.t == DJC_BYTES && out.n == glen[i]);
		free(msg);
		val_free(&in); val_free(&out);
	}
	val_t in = bytes_val("abcdef", 6), out = {0};
	char *msg = NULL;
	CHECK(value_in(b, &in, &out, &msg) == DJC_EINVAL);
	CHECK_MSG(msg && strstr(msg, "attribute 'b' (<blob>): not a DataJoint blob (no mYm/dj0/ZL123 header)"), "%s", msg ? msg : "");
	free(msg); msg = NULL;
	val_free(&out);
	CHECK(value_in(r, &in, &out, &msg) == DJC_OK);
	free(msg);
	val_free(&in); val_free(&out);
	HAS(err_parse("T (manual)\n    k : <blob>\n    ---\n"), "cannot be in the primary key");
}

/* uuid `as binary(16)`: 16 bytes bound, the text form read back. */
static void test_uuid16(void)
{
	pipeline *p = ok_parse("T (manual)\n    adopted = s.t\n    k : uuid as binary(16)\n    ---\n");
	if (!p) return;
	const attr *k = table_attr(p->tables[0], "k");
	val_t in = val_text("0F2D4C1E7B8A4D3C9E1F20A1B2C3D4E5"), out = {0}, back = {0};
	char *msg = NULL;
	CHECK(value_in(k, &in, &out, &msg) == DJC_OK && out.t == DJC_BYTES && out.n == 16);
	CHECK(out.n == 16 && !memcmp(out.s, "\x0f\x2d\x4c\x1e\x7b\x8a\x4d\x3c\x9e\x1f\x20\xa1\xb2\xc3\xd4\xe5", 16));
	CHECK(value_out(k, &out, &back) == DJC_OK);
	CHECK_STR(back.s, "0f2d4c1e-7b8a-4d3c-9e1f-20a1b2c3d4e5");
	free(msg);
	msg = NULL;
	val_free(&in); val_free(&out); val_free(&back);
	in = val_text("not-a-uuid");
	CHECK(value_in(k, &in, &out, &msg) == DJC_EINVAL && msg && strstr(msg, "is not a UUID"));
	free(msg);
	val_free(&in); val_free(&out);
	/* a raw column is read, never written */
	pipeline *r = ok_parse("T (manual)\n    adopted = s.t\n    k : int32\n    ---\n    at : raw(time)\n");
	const attr *at = r ? table_attr(r->tables[0], "at") : NULL;
	if (!at) return;
	in = val_text("12:30:00");
	msg = NULL;
	CHECK(value_in(at, &in, &out, &msg) == DJC_EINVAL && msg && strstr(msg, "djc reads it but cannot write it"));
	free(msg);
	CHECK(value_out(at, &in, &back) == DJC_OK && back.t == DJC_TEXT && !strcmp(back.s, "12:30:00"));
	val_free(&in); val_free(&out); val_free(&back);
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_adopted", "stored_form adopted_errors blob uuid16");
	if (t_want("stored_form")) test_stored_form();
	if (t_want("adopted_errors")) test_adopted_errors();
	if (t_want("blob")) test_blob();
	if (t_want("uuid16")) test_uuid16();
	for (size_t i = 0; i < npipes; i++) pipeline_free(pipes[i]);
	for (size_t i = 0; i < nmsgs; i++) free(msgs[i]);
	return T_DONE("test_adopted");
}
