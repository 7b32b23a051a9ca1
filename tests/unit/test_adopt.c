/* test_adopt.c - djc adopt's generation (src/schema/adopt.c, overlay.c):
 * catalogs built in memory (as db_catalog_read fills them from MariaDB's
 * information_schema or PostgreSQL's pg_catalog) turned into definitions,
 * which model's parser must read back. Needs no database: adopting real
 * schemas on the servers is tests/cli/test_adopt.sh. */
#include "t.h"
#include "schema/adopt.h"
#include "schema/schema.h"
#include "util/sb.h"
#include "djc.h"
#include <stdlib.h>
#include <string.h>

static db_catalog *cat_new(const char *schema)
{
	db_catalog *c = xcalloc(1, sizeof *c);
	c->schema = xstrdup(schema);
	c->tables = xcalloc(32, sizeof *c->tables);
	return c;
}

static char **split(const char *s, size_t *n)
{
	char **v = xcalloc(16, sizeof *v);
	*n = 0;
	for (const char *p = s; *p;) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);
		v[(*n)++] = xstrndup(p, l);
		if (!e) break;
		p = e + 1;
	}
	return v;
}

/* A table with its primary key "a,b". */
static db_ctable *tab(db_catalog *c, const char *name, const char *pk)
{
	db_ctable *t = &c->tables[c->n++];
	t->name = xstrdup(name);
	t->comment = xstrdup("");
	t->cols = xcalloc(32, sizeof *t->cols);
	t->fks = xcalloc(8, sizeof *t->fks);
	t->pk = split(pk, &t->npk);
	return t;
}

static db_ccol *col(db_ctable *t, const char *name, const char *type, const char *comment)
{
	db_ccol *c = &t->cols[t->ncols++];
	c->name = xstrdup(name);
	c->sql_type = xstrdup(type);
	c->comment = xstrdup(comment);
	return c;
}

static void fk(db_ctable *t, const char *rs, const char *rt, const char *cols, const char *rcols)
{
	db_cfk *f = &t->fks[t->nfks++];
	size_t n2;
	f->ref_schema = xstrdup(rs);
	f->ref_table = xstrdup(rt);
	f->cols = split(cols, &f->n);
	f->ref_cols = split(rcols, &n2);
}

static char *gen(db_catalog **cats, size_t n, size_t nmain, char quote, const adopt_overlay *ov, char **msg)
{
	adopt_in in = {cats, n, nmain, quote, ov, NULL};
	char *out = NULL;
	*msg = NULL;
	adopt_generate(&out, msg, &in);
	return out;
}

/* The 0.14 MariaDB schema of tests/fixtures/datajoint-model (in part), a
 * parent schema "up" with a table nothing references. */
static void mk014(db_catalog **up, db_catalog **dj)
{
	*up = cat_new("up");
	db_ctable *t = tab(*up, "subject", "subject_id");
	col(t, "subject_id", "int(11)", "subject number");
	col(t, "sex", "enum('M','F','U')", "sex")->collation = xstrdup("utf8mb4_general_ci");
	t = tab(*up, "unrelated", "u");
	col(t, "u", "int(11)", "");
	*dj = cat_new("dj");
	t = tab(*dj, "~log", "id");
	col(t, "id", "int(10) unsigned", "event order id");
	t = tab(*dj, "#param_set", "param_id");
	col(t, "param_id", "smallint(6)", "");
	col(t, "threshold", "double", "detection threshold");
	col(t, "method", "varchar(16)", "")->def = xstrdup("'fast'");
	t = tab(*dj, "session", "subject_id,session_idx");
	col(t, "subject_id", "int(11)", "subject number");
	col(t, "session_idx", "tinyint(3) unsigned", "session number");
	col(t, "uid", "binary(16)", ":uuid:recording id");
	col(t, "raw_data", "longblob", "recorded trace");
	col(t, "at", "time", "");
	fk(t, "up", "subject", "subject_id", "subject_id");
	t = tab(*dj, "__pair", "subject_id,session_idx,prev_idx");
	col(t, "subject_id", "int(11)", "subject number");
	col(t, "session_idx", "tinyint(3) unsigned", "session number");
	col(t, "prev_idx", "tinyint(3) unsigned", "session number");
	col(t, "gap", "int(11)", "");
	col(t, "note", "varchar(16)", "")->nullable = 1;
	col(t, "param_id", "smallint(6)", "")->nullable = 1;
	fk(t, "dj", "session", "subject_id,session_idx", "subject_id,session_idx");
	fk(t, "dj", "session", "subject_id,prev_idx", "subject_id,session_idx");
	fk(t, "dj", "#param_set", "param_id", "param_id");
	t = tab(*dj, "__pair__part", "subject_id,session_idx,prev_idx,k");
	col(t, "subject_id", "int(11)", "");
	col(t, "session_idx", "tinyint(3) unsigned", "");
	col(t, "prev_idx", "tinyint(3) unsigned", "");
	col(t, "k", "bigint(20) unsigned", "");
	fk(t, "dj", "__pair", "subject_id,session_idx,prev_idx", "subject_id,session_idx,prev_idx");
}

static const char *const want014 =
	"up.Subject (manual)\n"
	"    adopted = up.subject\n"
	"    subject_id : int32   # subject number\n"
	"    ---\n"
	"    sex : enum('M', 'F', 'U') collate utf8mb4_general_ci   # sex\n"
	"\n"
	"ParamSet (lookup)\n"
	"    adopted = `dj`.`#param_set`\n"
	"    param_id : int16\n"
	"    ---\n"
	"    threshold : float64   # detection threshold\n"
	"    method = \"fast\" : varchar(16)\n"
	"\n"
	"Session (manual)\n"
	"    adopted = dj.session\n"
	"    -> up.Subject\n"
	"    session_idx : uint8   # session number\n"
	"    ---\n"
	"    uid : uuid as binary(16)   # recording id\n"
	"    raw_data : <blob>   # recorded trace\n"
	"    at : raw(time)\n"
	"\n"
	"Pair (computed)\n"
	"    adopted = dj.__pair\n"
	"    -> Session\n"
	"    -> Session.proj(prev_idx='session_idx')\n"
	"    ---\n"
	"    gap : int32\n"
	"    note = null : varchar(16)\n"
	"    -> [nullable] ParamSet\n"
	"    make = ./pair.sh\n"
	"\n"
	"Pair.Part (part)\n"
	"    adopted = dj.__pair__part\n"
	"    -> master\n"
	"    k : uint64\n"
	"    ---\n"
	"\n";

static adopt_overlay *ov_ok(const char *text)
{
	adopt_overlay *ov = NULL;
	char *msg = NULL;
	CHECK_MSG(adopt_overlay_parse(&ov, text, "ov.djc", &msg) == DJC_OK, "%s", msg ? msg : "");
	free(msg);
	return ov;
}

/* 0.14 on MariaDB: tiers, class names, native types, the :uuid: marker,
 * unmarked longblob as <blob>, references renamed and nullable, a parent
 * of another schema (and not its unrelated table), parts, the overlay's
 * lines; the text parses. */
static void test_dj014(void)
{
	db_catalog *c[2];
	mk014(&c[1], &c[0]);
	adopt_overlay *ov = ov_ok("# makes\nPair\n    make = ./pair.sh\n");
	char *msg;
	char *out = gen(c, 2, 1, '`', ov, &msg);
	CHECK_MSG(out != NULL, "%s", msg ? msg : "");
	CHECK_STR(out, want014);
	if (out) {
		pipeline *p = NULL;
		char *pm = NULL;
		CHECK_MSG(pipeline_parse(&p, out, "adopted", NULL, &pm) == DJC_OK, "%s", pm ? pm : "");
		table *t = p ? pipeline_find(p, "Pair") : NULL;
		CHECK(t && t->adopted && !strcmp(t->adopted, "dj") && t->tier == TIER_COMPUTED);
		CHECK(t && t->nfks >= 2 && t->fks[1].renamed);
		/* the nullable reference: a plain nullable attribute, the reference
		 * kept for its lineage */
		const attr *pid = t ? table_attr(t, "param_id") : NULL;
		CHECK(t && t->nnullrefs == 1 && !strcmp(t->nullrefs[0].parent, "ParamSet"));
		CHECK(pid && pid->nullable && !pid->in_key && !pid->from_parent && !strcmp(pid->type_text, "int16"));
		pipeline_free(p);
		free(pm);
	}
	free(out);
	free(msg);
	adopt_overlay_free(ov);
	db_catalog_free(c[0]);
	db_catalog_free(c[1]);
}

/* 2.x: the markers decide (int8 and bool on tinyint, json on longtext,
 * <blob>, an unmarked longblob is bytes, a store codec is raw), _job_*
 * columns are job_metadata = true, PostgreSQL enum labels. */
static void test_dj2(void)
{
	db_catalog *c = cat_new("m");
	db_ctable *t = tab(c, "~lineage", "table_name");
	col(t, "table_name", "varchar(64)", "");
	t = tab(c, "thing", "id");
	col(t, "id", "tinyint(4)", ":int8:");
	col(t, "flag", "tinyint(4)", ":bool:a flag");
	col(t, "js", "longtext", ":json:")->json_check = 1;
	col(t, "bl", "longblob", ":<blob>:");
	col(t, "raw", "longblob", "");
	col(t, "ext", "longtext", ":<blob@store>:")->json_check = 1;
	t = tab(c, "__made", "id");
	col(t, "id", "tinyint(4)", "");
	col(t, "v", "double", ":float64:");
	col(t, "_job_start_time", "datetime(3)", "")->nullable = 1;
	col(t, "_job_duration", "float", "")->nullable = 1;
	col(t, "_job_version", "varchar(64)", "")->nullable = 1;
	fk(t, "m", "thing", "id", "id");
	char *msg;
	db_catalog *cs[1] = {c};
	char *out = gen(cs, 1, 1, '`', NULL, &msg);
	CHECK_MSG(out != NULL, "%s", msg ? msg : "");
	CHECK(out && strstr(out, "    id : int8\n    ---\n    flag : bool   # a flag\n    js : json\n    bl : <blob>\n"
				 "    raw : bytes\n    ext : raw(longtext)\n"));
	CHECK(out && strstr(out, "Made (computed)\n    adopted = m.__made\n    -> Thing\n    ---\n    v : float64\n"
				 "    job_metadata = true\n"));
	free(out);
	free(msg);
	/* a store column in a table the overlay gives a make: refused */
	t = &c->tables[2];
	col(t, "store", "longtext", ":<blob@store>:")->json_check = 1;
	adopt_overlay *ov = ov_ok("Made\n    make_serve = python3 made.py\n");
	out = gen(cs, 1, 1, '`', ov, &msg);
	CHECK(!out && msg && !strcmp(msg, "ov.djc:2: Made.column store: external store column (<blob@store>) cannot be "
					 "written by djc"));
	free(out);
	free(msg);
	adopt_overlay_free(ov);
	db_catalog_free(c);
	/* PostgreSQL: an enum type with its labels, uuid, bytea <blob>, "" quotes */
	c = cat_new("pg");
	t = tab(c, "#level", "level");
	db_ccol *e = col(t, "level", "\"pg\".\"enum_1\"", ":enum('lo', 'it''s'):");
	e->labels = xcalloc(2, sizeof *e->labels);
	e->labels[0] = xstrdup("lo");
	e->labels[1] = xstrdup("it's");
	e->nlabels = 2;
	col(t, "u", "uuid", ":uuid:");
	col(t, "when", "timestamp(3) without time zone", ":datetime(3):");
	col(t, "n", "numeric(10,3)", ":decimal(10,3):");
	cs[0] = c;
	out = gen(cs, 1, 1, '"', NULL, &msg);
	CHECK(out && strstr(out, "Level (lookup)\n    adopted = \"pg\".\"#level\"\n    level : enum('lo', 'it''s') as "
				 "\"pg\".\"enum_1\"\n    ---\n    u : uuid\n    when : datetime(3)\n    n : decimal(10,3)\n"));
	free(out);
	free(msg);
	db_catalog_free(c);
}

/* The version fingerprint: ~log or no 2.x marker is 0.14 (an unmarked
 * longblob holds a DataJoint blob); a core-type marker is 2.x (bytes). */
static void test_fingerprint(void)
{
	for (int v = 0; v < 2; v++) {
		db_catalog *c = cat_new("f");
		db_ctable *t = tab(c, "x", "id");
		col(t, "id", "int(11)", v ? ":int32:" : ":uuid:");
		col(t, "b", "longblob", "");
		db_catalog *cs[1] = {c};
		char *msg, *out = gen(cs, 1, 1, '`', NULL, &msg);
		CHECK(out && strstr(out, v ? "    b : bytes\n" : "    b : <blob>\n"));
		free(out);
		free(msg);
		db_catalog_free(c);
	}
}

/* What djc does not recognise is refused, naming the table and what. */
static void test_refusals(void)
{
	static const char *const cases[][3] = {
		{"Odd", "", "table s.Odd: not a DataJoint table name"},
		{"x", ":graph2:", "table s.x: column v: unknown DataJoint 0.14 attribute type :graph2:"},
		{"nomaster__part", "", "table s.nomaster__part: part table whose master is not a DataJoint table"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		db_catalog *c = cat_new("s");
		db_ctable *t = tab(c, cases[i][0], "v");
		col(t, "v", "int(11)", cases[i][1]);
		db_catalog *cs[1] = {c};
		char *msg, *out = gen(cs, 1, 1, '`', NULL, &msg);
		CHECK_MSG(!out && msg && !strncmp(msg, cases[i][2], strlen(cases[i][2])), "%s", msg ? msg : "(none)");
		free(out);
		free(msg);
		db_catalog_free(c);
	}
}

/* The overlay: its syntax (file:line) and its fit to the adopted tables. */
static void test_overlay(void)
{
	static const char *const bad[][2] = {
		{"    make = ./x\n", "ov.djc:1: 'make = ./x' before the first table name"},
		{"Pair\n    threads = 4\n", "ov.djc:2: 'threads = 4': an overlay block has only make"},
		{"Pair\n    make = a\n    make = b\n", "ov.djc:3: second 'make =' line for table Pair"},
		{"Pair\nPair\n", "ov.djc:2: second block for table Pair"},
		{"Pair Part\n", "ov.djc:1: 'Pair Part' is not a table name"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		adopt_overlay *ov = NULL;
		char *msg = NULL;
		CHECK(adopt_overlay_parse(&ov, bad[i][0], "ov.djc", &msg) == DJC_EINVAL && !ov);
		CHECK_MSG(msg && !strncmp(msg, bad[i][1], strlen(bad[i][1])), "%s", msg ? msg : "(none)");
		free(msg);
	}
	static const char *const misfit[][2] = {
		{"Nope\n  make = x\n", "ov.djc:1: no table Nope in the adopted schemas"},
		{"Session\n  make = x\n", "ov.djc:1: Session is a manual table: djc makes only computed and imported tables"},
		{"up.Subject\n  make = x\n", "ov.djc:1: no table up.Subject in the adopted schemas"},
		/* a key_source's attributes are declare's to check (its parents'
		 * and ancestors' too): test_adopt.sh overlay_key_source */
	};
	for (size_t i = 0; i < sizeof misfit / sizeof *misfit; i++) {
		db_catalog *c[2];
		mk014(&c[1], &c[0]);
		adopt_overlay *ov = ov_ok(misfit[i][0]);
		char *msg, *out = gen(c, 2, 1, '`', ov, &msg);
		CHECK_MSG(!out && msg && !strncmp(msg, misfit[i][1], strlen(misfit[i][1])), "%s", msg ? msg : "(none)");
		free(out);
		free(msg);
		adopt_overlay_free(ov);
		db_catalog_free(c[0]);
		db_catalog_free(c[1]);
	}
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_adopt", "dj014 dj2 fingerprint refusals overlay");
	if (t_want("dj014")) test_dj014();
	if (t_want("dj2")) test_dj2();
	if (t_want("fingerprint")) test_fingerprint();
	if (t_want("refusals")) test_refusals();
	if (t_want("overlay")) test_overlay();
	return T_DONE("test_adopt");
}
