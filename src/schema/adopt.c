/* adopt.c - a DataJoint schema's catalog as djc definitions (adopt.h,
 * docs/adopt.md). Tiers and class names from DataJoint's table-name rules,
 * types from the column-comment markers (2.x: every core type; 0.14: uuid
 * and the external/adapted types) or the server's native type, foreign
 * keys as `->` lines (renamed ones with .proj). */
#include "adopt.h"
#include "../util/sb.h"
#include "djc.h"
#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { AT_MANUAL, AT_LOOKUP, AT_IMPORTED, AT_COMPUTED, AT_PART };
static const char *const tier_names[] = {"manual", "lookup", "imported", "computed", "part"};

/* One DataJoint table being adopted. */
typedef struct at {
	const db_catalog *cat;
	const db_ctable *t;
	int ci;            /* index of its catalog */
	int tier;
	int dj;            /* DataJoint version of its schema: 14 or 2 */
	char *cls;         /* name in djc: Class, Master.Part, schema.Class */
	int master;        /* index of the master (parts), else -1 */
	int need, done;
	int has_raw;       /* a column djc cannot write (raw(...)) */
	char *raw_col, *raw_why;
} at;

typedef struct gen {
	const adopt_in *in;
	at *v;
	size_t n;
	char **msg;
} gen;

static int fail(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(gen *g, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_t b = SB_INIT;
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	if (g->msg && !*g->msg) *g->msg = sb_steal(&b);
	sb_free(&b);
	return DJC_EINVAL;
}

/* DataJoint's base name: [a-z][a-z0-9]*(_[a-z][a-z0-9]*)* over s[0..n). */
static int is_base(const char *s, size_t n)
{
	if (!n || !islower((unsigned char)s[0])) return 0;
	for (size_t i = 1; i < n; i++) {
		if (s[i] == '_') {
			if (i + 1 >= n || !islower((unsigned char)s[i + 1])) return 0;
		} else if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i])) return 0;
	}
	return 1;
}

/* The tier of a table name by DataJoint's regexes; the part's master's
 * name length in *mlen. -1: no tier (not DataJoint's). */
static int tier_of(const char *name, size_t *mlen)
{
	size_t pre = !strncmp(name, "__", 2) ? 2 : (name[0] == '_' || name[0] == '#') ? 1 : 0;
	int tier = pre == 2 ? AT_COMPUTED : name[0] == '_' ? AT_IMPORTED : name[0] == '#' ? AT_LOOKUP : AT_MANUAL;
	const char *rest = name + pre, *dd = strstr(rest, "__");
	if (!dd) return is_base(rest, strlen(rest)) ? tier : -1;
	if (!is_base(rest, (size_t)(dd - rest)) || !is_base(dd + 2, strlen(dd + 2))) return -1;
	*mlen = (size_t)(dd - name);
	return AT_PART;
}

/* CamelCase of a base name (param_set -> ParamSet). */
static void camel(sb_t *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '_') continue;
		sb_addc(b, (char)(i == 0 || s[i - 1] == '_' ? toupper((unsigned char)s[i]) : s[i]));
	}
}

/* The class name of table `name` (tier known) in schema `prefix` (NULL:
 * the pipeline's own). */
static char *class_name(const char *name, int tier, size_t mlen, const char *prefix)
{
	sb_t b = SB_INIT;
	if (prefix) sb_printf(&b, "%s.", prefix);
	const char *s = name + strspn(name, "_#");
	if (tier == AT_PART) {
		size_t ms = (size_t)(s - name);
		camel(&b, s, mlen - ms);
		sb_addc(&b, '.');
		camel(&b, name + mlen + 2, strlen(name + mlen + 2));
	} else camel(&b, s, strlen(s));
	return sb_steal(&b);
}

/* A column comment's type marker: 1 with the type in type[] and the rest
 * of the comment in *rest, when it starts :type: (DataJoint's
 * `:(?P<type>[^:]+):(?P<comment>.*)`). */
static int marker(const char *comment, char *type, size_t cap, const char **rest)
{
	if (!comment || comment[0] != ':') return 0;
	const char *e = strchr(comment + 1, ':');
	if (!e || e == comment + 1 || (size_t)(e - comment) >= cap) return 0;
	memcpy(type, comment + 1, (size_t)(e - comment - 1));
	type[e - comment - 1] = 0;
	*rest = e + 1;
	return 1;
}

static int word_is(const char *s, const char *w)
{
	size_t n = strlen(w);
	return !strncasecmp(s, w, n) && (!s[n] || s[n] == '(');
}

/* A 2.x core type marker (declare.py CORE_TYPES). */
static int core_marker(const char *m)
{
	static const char *const w[] = {"int8", "int16", "int32", "int64", "float32", "float64", "bool", "uuid", "json",
					"jsonb", "bytes", "date", "datetime", "char", "varchar", "enum", "decimal"};
	for (size_t i = 0; i < sizeof w / sizeof *w; i++)
		if (word_is(m, w[i])) return 1;
	return 0;
}

/* DataJoint version of a schema: its internal tables (~log, ~jobs,
 * ~external_*: 0.14; ~lineage, ~~x: 2.x), else its markers (2.x marks
 * every column of a core type). */
static int dj_version(const db_catalog *cat, char quote)
{
	if (quote == '"') return 2;   /* 0.14 has no PostgreSQL backend */
	int old = 0, nw = 0, marks = 0;
	for (size_t i = 0; i < cat->n; i++) {
		const char *n = cat->tables[i].name;
		if (!strcmp(n, "~log") || !strcmp(n, "~jobs") || !strncmp(n, "~external_", 10)) old = 1;
		if (!strcmp(n, "~lineage") || !strncmp(n, "~~", 2)) nw = 1;
		for (size_t k = 0; k < cat->tables[i].ncols && n[0] != '~'; k++) {
			char m[256];
			const char *r;
			if (marker(cat->tables[i].cols[k].comment, m, sizeof m, &r) && core_marker(m) && strcasecmp(m, "uuid")) marks = 1;
		}
	}
	return nw ? 2 : old ? 14 : marks ? 2 : 14;
}

/* MySQL's enum('a','b') as djc writes it: enum('a', 'b'). */
static void enum_text(sb_t *b, const char *t)
{
	int q = 0;
	for (const char *p = t; *p; p++) {
		sb_addc(b, *p);
		if (*p == '\'' && q && p[1] == '\'') sb_addc(b, *++p);   /* '' inside a label */
		else if (*p == '\'') q = !q;
		else if (*p == ',' && !q && p[1] != ' ') sb_addc(b, ' ');
	}
}

/* A MySQL integer type without its display width: "int(11) unsigned" ->
 * djc's int32 / uint32; 0 when it is not one djc has. */
static int my_int(sb_t *b, const char *t)
{
	static const char *const my[] = {"tinyint", "smallint", "int", "bigint"};
	static const char *const dj[] = {"int8", "int16", "int32", "int64"};
	for (int i = 0; i < 4; i++) {
		size_t n = strlen(my[i]);
		if (strncasecmp(t, my[i], n) || (t[n] && t[n] != '(' && t[n] != ' ')) continue;
		const char *r = t + n;
		if (*r == '(') r = strchr(r, ')') + 1;
		if (!*r) sb_add(b, dj[i]);
		else if (!strcasecmp(r, " unsigned")) sb_printf(b, "u%s", dj[i]);
		else return 0;
		return 1;
	}
	return 0;
}

/* The djc type of a column by its server type alone (no marker, or a
 * marker that only confirms it). 0: none (the caller makes it raw). */
static int native_type(sb_t *b, const db_ccol *c, int dj)
{
	const char *t = c->sql_type;
	static const char *const same[] = {"date", "datetime", "uuid", "json"};
	static const char *const pg[][2] = {{"smallint", "int16"}, {"integer", "int32"}, {"bigint", "int64"},
		{"real", "float32"}, {"double precision", "float64"}, {"boolean", "bool"}, {"float", "float32"},
		{"double", "float64"}, {"jsonb", "json"}, {"bytea", "bytes"},
		/* PostgreSQL's timestamp without a precision keeps microseconds
		 * (DataJoint 2.x's datetime): so does its djc type, or a value with
		 * a fraction is refused, and a key cut to whole seconds on its way
		 * through the jobs table no longer matches its row */
		{"timestamp without time zone", "datetime(6)"}};
	if (my_int(b, t)) return 1;
	for (size_t i = 0; i < sizeof pg / sizeof *pg; i++)
		if (!strcasecmp(t, pg[i][0])) return sb_add(b, pg[i][1]), 1;
	for (size_t i = 0; i < sizeof same / sizeof *same; i++)
		if (!strcasecmp(t, same[i])) return sb_add(b, same[i]), 1;
	if (!strcasecmp(t, "longtext") && c->json_check) return sb_add(b, "json"), 1;
	if (!strcasecmp(t, "longblob") || !strcasecmp(t, "mediumblob") || !strcasecmp(t, "blob") || !strcasecmp(t, "tinyblob"))
		return sb_add(b, dj == 14 ? "<blob>" : "bytes"), 1;
	unsigned p, s;
	char tail[32];
	if (sscanf(t, "datetime(%u)%31s", &p, tail) == 1 || sscanf(t, "timestamp(%u) without time zone%31s", &p, tail) == 1)
		return sb_printf(b, "datetime(%u)", p), 1;
	if (sscanf(t, "decimal(%u,%u)%31s", &p, &s, tail) == 2 || sscanf(t, "numeric(%u,%u)%31s", &p, &s, tail) == 2)
		return sb_printf(b, "decimal(%u,%u)", p, s), 1;
	if (sscanf(t, "varchar(%u)%31s", &p, tail) == 1 || sscanf(t, "character varying(%u)%31s", &p, tail) == 1)
		return sb_printf(b, "varchar(%u)", p), 1;
	if (sscanf(t, "char(%u)%31s", &p, tail) == 1 || sscanf(t, "character(%u)%31s", &p, tail) == 1)
		return sb_printf(b, "char(%u)", p), 1;
	if (!strncasecmp(t, "enum(", 5)) return enum_text(b, t), 1;
	if (c->nlabels && t[0] == '"') {   /* a PostgreSQL enum type */
		sb_add(b, "enum(");
		for (size_t i = 0; i < c->nlabels; i++) {
			sb_add(b, i ? ", '" : "'");
			for (const char *q = c->labels[i]; *q; q++) {
				if (*q == '\'') sb_addc(b, '\'');
				sb_addc(b, *q);
			}
			sb_addc(b, '\'');
		}
		sb_printf(b, ") as %s", t);
		return 1;
	}
	return 0;
}

/* Why a marker names a type djc cannot write (an external store, an
 * attachment, an adapted type), or NULL when djc has it. */
static int marked_type(sb_t *b, const char *m, const db_ccol *c, int dj)
{
	if (!strcasecmp(m, "uuid")) return sb_add(b, "uuid"), 1;
	if (dj == 14) return 0;
	if (!strcmp(m, "<blob>")) return sb_add(b, "<blob>"), 1;
	static const char *const v[] = {"bool", "bytes", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
					"uint64", "float32", "float64"};
	/* DataJoint 2.x on PostgreSQL declares int8 as smallint (no tinyint
	 * there) and checks no range: the column holds, and DataJoint inserts,
	 * -32768..32767. djc's int8 would refuse such a key, a make's value and
	 * a restriction by it (DataJoint's rows of 200 could not be made) */
	if (!strcasecmp(m, "int8") && !strcasecmp(c->sql_type, "smallint")) return sb_add(b, "int16"), 1;
	for (size_t i = 0; i < sizeof v / sizeof *v; i++)
		if (!strcasecmp(m, v[i])) return sb_add(b, v[i]), 1;
	if (!strcasecmp(m, "json") || !strcasecmp(m, "jsonb")) return sb_add(b, "json"), 1;
	return m[0] != '<' && native_type(b, c, dj);
}

static int col_has_default(const db_ccol *c, char quote);

/* The djc type text of column c of table a into b, its comment without
 * the marker in *comment; raw(<sql type>) (a->raw_* set) for what djc
 * cannot represent. DJC_EINVAL for a marker 0.14 does not have. */
static int col_type(gen *g, at *a, const db_ccol *c, sb_t *b, const char **comment)
{
	char m[256];
	const char *rest;
	int has = marker(c->comment, m, sizeof m, &rest);
	*comment = has ? rest : c->comment;
	size_t at0 = b->len;
	int ok = has ? marked_type(b, m, c, a->dj) : native_type(b, c, a->dj);
	if (has && a->dj == 14 && !ok && strcmp(m, "attach") && strncmp(m, "blob@", 5) && strncmp(m, "attach@", 7) &&
	    strncmp(m, "filepath@", 9) && m[0] != '<')
		return fail(g, "table %s.%s: column %s: unknown DataJoint 0.14 attribute type :%s: (djc adopts DataJoint 0.14 "
			    "and 2.x schemas)", a->cat->schema, a->t->name, c->name, m);
	if (!ok) {
		b->len = at0;
		if (b->s) b->s[at0] = 0;
		sb_printf(b, "raw(%s)", c->sql_type);
		/* one the server fills (a default, NULL) does not stop a make:
		 * djc's rows leave it out (attr_server_filled) */
		if (!a->raw_col && !col_has_default(c, g->in->quote)) {
			a->raw_col = xstrdup(c->name);
			a->raw_why = xstrdup(has ? m : c->sql_type);
		}
		return DJC_OK;
	}
	if (!strcmp(b->s + at0, "uuid") && !strcasecmp(c->sql_type, "binary(16)")) sb_add(b, " as binary(16)");
	/* PostgreSQL's floats keep NaN and infinities, which DataJoint stores there */
	if (!strcmp(b->s + at0, "float64") && !strcasecmp(c->sql_type, "double precision")) sb_add(b, " as float8");
	if (!strcmp(b->s + at0, "float32") && !strcasecmp(c->sql_type, "real")) sb_add(b, " as float4");
	const char *ty = b->s + at0;
	if (c->collation && (!strncmp(ty, "varchar", 7) || !strncmp(ty, "char", 4) || !strncmp(ty, "enum", 4)))
		sb_printf(b, " collate %s", c->collation);
	return DJC_OK;
}

/* The value of a quoted default as the server reports it (d at its
 * opening quote) into v: PostgreSQL's 'it''s'::type (a standard string:
 * backslashes are themselves), MariaDB's 'it''s' with backslash escapes
 * (\\ \n \r \0: append_unescaped in its sql_show.cc). -1 for a NUL,
 * which no C string holds. */
static int quoted_value(sb_t *v, const char *d, char quote)
{
	const char *p = d + 1;
	for (; *p; p++) {
		if (*p == '\'' && p[1] == '\'') sb_addc(v, *p++);
		else if (*p == '\'') break;
		else if (*p == '\\' && quote == '`' && p[1]) {
			char e = *++p;
			if (e == '0') return -1;
			sb_addc(v, e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e == 'b' ? '\b' : e == 'Z' ? 26 : e);
		} else sb_addc(v, *p);
	}
	return 0;
}

/* A string default in djc's syntax: "..." with \\ and \" for a backslash
 * and a quote (src/schema/parse.c); NULL in *why when it fits, else why
 * not (a definition is one line a column). */
static void string_default(sb_t *b, const char *s, const char **why)
{
	if (strpbrk(s, "\n\r")) { *why = "it holds a line break, which a djc definition line cannot hold"; return; }
	sb_add(b, " = \"");
	for (; *s; s++) {
		if (*s == '\\' || *s == '"') sb_addc(b, '\\');
		sb_addc(b, *s);
	}
	sb_addc(b, '"');
}

/* " = <default>" for a column whose default djc can write: null, a
 * number, a string (exactly the server's value), CURRENT_TIMESTAMP;
 * nothing for none (or an expression the server computes). quote: the
 * server's identifier quote (` MariaDB/MySQL, " PostgreSQL). -1 with *why
 * for a string djc's syntax cannot hold. */
static int col_default(sb_t *b, const db_ccol *c, char quote, const char **why)
{
	*why = NULL;
	if (c->nullable) { sb_add(b, " = null"); return 0; }
	const char *d = c->def;
	if (!d || !strcasecmp(d, "NULL")) return 0;
	if (!strncasecmp(d, "current_timestamp", 17)) { sb_add(b, " = CURRENT_TIMESTAMP"); return 0; }
	sb_t v = SB_INIT;
	if (d[0] == '\'') {
		/* a string literal, however number-like (' 5' stays ' 5') */
		if (quoted_value(&v, d, quote)) *why = "it holds a NUL character";
		else string_default(b, sb_str(&v), why);
		sb_free(&v);
		return *why ? -1 : 0;
	}
	sb_addn(&v, d, strcspn(d, ":"));   /* PostgreSQL's ::type */
	const char *s = sb_str(&v);
	char *e;
	(void)strtod(s, &e);
	if ((*s && !*e) || !strcasecmp(s, "true") || !strcasecmp(s, "false")) sb_printf(b, " = %s", s);
	sb_free(&v);
	return 0;
}

/* 1 when the definition gives column c a default (col_default writes
 * one: NULL too), so that a raw column of it is the server's to fill. */
static int col_has_default(const db_ccol *c, char quote)
{
	sb_t b = SB_INIT;
	const char *why;
	int has = !col_default(&b, c, quote, &why) && b.len > 0;
	sb_free(&b);
	return has;
}

/* An attribute line: name [= default] : type [# comment]. */
static int attr_line(gen *g, at *a, const db_ccol *c, const db_ccol *typed_by, at *ta, sb_t *out)
{
	sb_t ty = SB_INIT;
	const char *comment = NULL, *unused;
	int rc = col_type(g, ta, typed_by, &ty, ta == a ? &comment : &unused);
	if (ta != a) {
		char m[256];
		comment = marker(c->comment, m, sizeof m, &unused) ? unused : c->comment;
	}
	const char *why = NULL;
	if (!rc) {
		sb_printf(out, "    %s", c->name);
		if (col_default(out, c, g->in->quote, &why))
			rc = fail(g, "table %s.%s: column %s: its default cannot be adopted: %s", a->cat->schema, a->t->name,
				  c->name, why);
		sb_printf(out, " : %s", sb_str(&ty));
		if (comment && *comment) {
			sb_add(out, "   # ");
			for (const char *p = comment; *p; p++) sb_addc(out, *p == '\n' || *p == '\r' ? ' ' : *p);
		}
		sb_addc(out, '\n');
	}
	sb_free(&ty);
	return rc;
}

/* 1 for DataJoint 2.x's singleton table: declared without a key, it has
 * the hidden key column _singleton (bool, always true) and one row at most.
 * djc has no keyless tables; adopt leaves such a table out. */
static int singleton(const db_ctable *t)
{
	return t->npk == 1 && !strcmp(t->pk[0], "_singleton");
}

static int find_at(const gen *g, const char *schema, const char *table)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->v[i].cat->schema, schema) && !strcmp(g->v[i].t->name, table)) return (int)i;
	return -1;
}

static int in_list(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s)) return 1;
	return 0;
}

/* 1 when a foreign key counts for djc: not one to 0.14's ~external_ tables. */
static int fk_counts(const db_cfk *f)
{
	return f->ref_table[0] != '~';
}

/* A reference line: -> Parent, -> master, -> Parent.proj(child='parent'),
 * -> [nullable] Parent... (nullable). */
static int ref_line(gen *g, at *a, const db_cfk *f, int nullable, sb_t *out)
{
	int p = find_at(g, f->ref_schema, f->ref_table);
	if (p < 0) return fail(g, "table %s.%s: references %s.%s, which is not a DataJoint table", a->cat->schema, a->t->name,
			      f->ref_schema, f->ref_table);
	const at *pa = &g->v[p];
	if (f->n != pa->t->npk)
		return fail(g, "table %s.%s: a foreign key to %s.%s that is not its primary key", a->cat->schema, a->t->name,
			    f->ref_schema, f->ref_table);
	if (a->master == p && !nullable) { sb_add(out, "    -> master\n"); return DJC_OK; }
	sb_printf(out, "    -> %s%s", nullable ? "[nullable] " : "", pa->cls);
	int renamed = 0;
	for (size_t k = 0; k < f->n; k++) {
		if (!strcmp(f->cols[k], f->ref_cols[k])) continue;
		sb_printf(out, "%s%s='%s'", renamed++ ? ", " : ".proj(", f->cols[k], f->ref_cols[k]);
	}
	sb_add(out, renamed ? ")\n" : "\n");
	return DJC_OK;
}

/* 1 when every column of f is in the table's primary key. */
static int fk_primary(const db_ctable *t, const db_cfk *f)
{
	for (size_t k = 0; k < f->n; k++)
		if (!in_list(t->pk, t->npk, f->cols[k])) return 0;
	return 1;
}

static int fk_nullable(const db_ctable *t, const db_cfk *f)
{
	for (size_t k = 0; k < f->n; k++) {
		const db_ccol *c = db_ctable_col(t, f->cols[k]);
		if (c && c->nullable) return 1;
	}
	return 0;
}

/* The nullable reference holding column c whose parent is adopted too,
 * or -1. Written `-> [nullable] Parent...`: djc's attributes for it are
 * plain nullable ones typed by the parent's, the reference kept for their
 * lineage only (schema.h, nullrefs). */
static int nullable_ref(gen *g, at *a, const db_ccol *c)
{
	const db_ctable *t = a->t;
	for (size_t f = 0; f < t->nfks; f++) {
		const db_cfk *fk = &t->fks[f];
		if (!fk_counts(fk) || !fk_nullable(t, fk) || !in_list(fk->cols, fk->n, c->name)) continue;
		return find_at(g, fk->ref_schema, fk->ref_table) < 0 ? -1 : (int)f;
	}
	return -1;
}

/* One column of the heading (key: in the primary key): nothing when a
 * written reference holds it, else the first reference holding it (of
 * the primary key's references for a key column, the others for a
 * secondary one) as a -> line, else the attribute. */
static int heading_col(gen *g, at *a, const db_ccol *c, char *written, int key, sb_t *out)
{
	const db_ctable *t = a->t;
	int nf = nullable_ref(g, a, c);
	if (nf >= 0) {
		if (written[nf]) return DJC_OK;
		written[nf] = 1;
		return ref_line(g, a, &t->fks[nf], 1, out);
	}
	for (size_t f = 0; f < t->nfks; f++)
		if (written[f] && in_list(t->fks[f].cols, t->fks[f].n, c->name)) return DJC_OK;
	for (size_t f = 0; f < t->nfks; f++) {
		const db_cfk *fk = &t->fks[f];
		if (!fk_counts(fk) || fk_nullable(t, fk) || fk_primary(t, fk) != key || !in_list(fk->cols, fk->n, c->name))
			continue;
		written[f] = 1;
		return ref_line(g, a, fk, 0, out);
	}
	return attr_line(g, a, c, c, a, out);
}

static int plain_ident(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_') return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_') return 0;
	return 1;
}

static void quoted(sb_t *b, char q, const char *s)
{
	sb_addc(b, q);
	for (; *s; s++) {
		if (*s == q) sb_addc(b, q);
		sb_addc(b, *s);
	}
	sb_addc(b, q);
}

/* The adopted = line's schema.table, quoted when either needs it. */
static void adopted_name(sb_t *b, char q, const char *schema, const char *table)
{
	if (plain_ident(schema) && plain_ident(table)) { sb_printf(b, "%s.%s", schema, table); return; }
	quoted(b, q, schema);
	sb_addc(b, '.');
	quoted(b, q, table);
}

/* The hidden columns DataJoint 2.x adds for job metadata. */
static int job_meta_col(const char *name)
{
	return !strcmp(name, "_job_start_time") || !strcmp(name, "_job_duration") || !strcmp(name, "_job_version");
}

/* The heading of table a: key columns, ---, secondary ones (hidden
 * columns left out; job_metadata = true when the _job_* ones are all
 * there, but for a part: DataJoint 2.3.2 also gives the parts of an
 * imported table (`_master__part`) these columns, never fills them, and a
 * djc part has no job metadata; they are left out as other hidden
 * columns are, and the server fills them with their defaults). */
static int heading(gen *g, at *a, sb_t *out)
{
	const db_ctable *t = a->t;
	char *written = xcalloc(t->nfks + 1, 1);
	int rc = DJC_OK, meta = 0;
	for (size_t i = 0; i < t->npk && !rc; i++) {
		const db_ccol *c = db_ctable_col(t, t->pk[i]);
		if (c->name[0] == '_')
			rc = fail(g, "table %s.%s: hidden primary key column %s (djc adopts tables whose key DataJoint "
				  "shows)", a->cat->schema, t->name, c->name);
		else rc = heading_col(g, a, c, written, 1, out);
	}
	if (!rc) sb_add(out, "    ---\n");
	for (size_t i = 0; i < t->ncols && !rc; i++) {
		const db_ccol *c = &t->cols[i];
		if (in_list(t->pk, t->npk, c->name)) continue;
		if (c->name[0] == '_') meta += job_meta_col(c->name);
		else rc = heading_col(g, a, c, written, 0, out);
	}
	if (!rc && meta == 3 && a->tier != AT_PART) sb_add(out, "    job_metadata = true\n");
	free(written);
	return rc;
}

static const ov_block *ov_find(const adopt_overlay *ov, const char *name)
{
	for (size_t i = 0; ov && i < ov->n; i++)
		if (!strcmp(ov->blocks[i].table, name)) return &ov->blocks[i];
	return NULL;
}

/* Table a's definition text. */
static int emit_table(gen *g, at *a, sb_t *out)
{
	if (a->t->comment && *a->t->comment) {
		sb_add(out, "# ");
		for (const char *p = a->t->comment; *p; p++) sb_addc(out, *p == '\n' ? ' ' : *p);
		sb_addc(out, '\n');
	}
	sb_printf(out, "%s (%s)\n    adopted = ", a->cls, tier_names[a->tier]);
	adopted_name(out, g->in->quote, a->cat->schema, a->t->name);
	sb_addc(out, '\n');
	int rc = heading(g, a, out);
	const ov_block *ob = a->ci < (int)g->in->nmain ? ov_find(g->in->ov, a->cls) : NULL;
	for (size_t i = 0; ob && i < ob->n; i++) sb_printf(out, "    %s\n", ob->lines[i].text);
	sb_addc(out, '\n');
	return rc;
}

const char *adopt_missing_schema(db_catalog *const *cats, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < cats[i]->n; k++)
			for (size_t f = 0; f < cats[i]->tables[k].nfks; f++) {
				const char *s = cats[i]->tables[k].fks[f].ref_schema;
				size_t j = 0;
				while (j < n && strcmp(cats[j]->schema, s)) j++;
				if (j == n) return s;
			}
	return NULL;
}

/* Every DataJoint table of the catalogs into g->v (internal `~` tables
 * and, in the adopted schemas, names of no tier refused). */
static int collect(gen *g)
{
	const adopt_in *in = g->in;
	size_t cap = 0;
	for (size_t i = 0; i < in->ncats; i++) cap += in->cats[i]->n;
	g->v = xcalloc(cap + 1, sizeof *g->v);
	for (size_t i = 0; i < in->ncats; i++) {
		const db_catalog *cat = in->cats[i];
		int dj = dj_version(cat, in->quote);
		for (size_t k = 0; k < cat->n; k++) {
			const db_ctable *t = &cat->tables[k];
			size_t mlen = 0;
			int tier = t->name[0] == '~' ? -2 : tier_of(t->name, &mlen);
			if (tier == -2) continue;
			if (tier < 0 && i < in->nmain)
				return fail(g, "table %s.%s: not a DataJoint table name (no tier: lower_case words, prefixed "
					    "#, _ or __, or master__part); djc does not recognise this layout", cat->schema, t->name);
			if (tier < 0) continue;
			if (singleton(t)) {   /* left out (a table referencing it has _singleton in its key: refused) */
				if (i < in->nmain && in->left_out) {
					char *cls = class_name(t->name, tier, mlen, NULL);
					sb_printf(in->left_out, "left out %s.%s (%s): a singleton table (no key but DataJoint "
						  "2.x's hidden _singleton), which djc does not adopt\n", cat->schema, t->name, cls);
					free(cls);
				}
				continue;
			}
			if (!t->npk) return fail(g, "table %s.%s: no primary key", cat->schema, t->name);
			at *a = &g->v[g->n++];
			a->cat = cat, a->t = t, a->ci = (int)i, a->tier = tier, a->dj = dj, a->master = -1;
			a->cls = class_name(t->name, tier, mlen, i ? cat->schema : NULL);
			a->need = i < in->nmain;
			if (tier == AT_PART) a->need = -(int)mlen - 1;   /* master's name length, resolved below */
		}
	}
	return DJC_OK;
}

/* Masters of parts; then which tables are needed: every table of the
 * adopted schemas and, transitively, what they reference. */
static int resolve(gen *g)
{
	for (size_t i = 0; i < g->n; i++) {
		at *a = &g->v[i];
		if (a->tier != AT_PART) continue;
		size_t mlen = (size_t)(-a->need - 1);
		char *mn = xstrndup(a->t->name, mlen);
		a->master = find_at(g, a->cat->schema, mn);
		free(mn);
		if (a->master < 0)
			return fail(g, "table %s.%s: part table whose master is not a DataJoint table", a->cat->schema, a->t->name);
		a->need = a->ci < (int)g->in->nmain;
	}
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = 0; i < g->n; i++) {
			if (!g->v[i].need) continue;
			for (size_t f = 0; f < g->v[i].t->nfks; f++) {
				int p = find_at(g, g->v[i].t->fks[f].ref_schema, g->v[i].t->fks[f].ref_table);
				if (p >= 0 && !g->v[p].need) g->v[p].need = changed = 1;
			}
		}
	}
	return DJC_OK;
}

/* 1 when every table a references is written. */
static int parents_done(const gen *g, const at *a)
{
	for (size_t f = 0; f < a->t->nfks; f++) {
		int p = find_at(g, a->t->fks[f].ref_schema, a->t->fks[f].ref_table);
		if (p >= 0 && !g->v[p].done) return 0;
	}
	return 1;
}

/* The tables in an order that has every parent before its children:
 * passes over them (other schemas' first), each writing what it can. */
static int emit_all(gen *g, sb_t *out)
{
	size_t left = 0;
	for (size_t i = 0; i < g->n; i++) left += g->v[i].need != 0;
	while (left) {
		size_t before = left;
		for (int pass = 0; pass < 2; pass++)
			for (size_t i = 0; i < g->n; i++) {
				at *a = &g->v[i];
				if (!a->need || a->done || (a->ci < (int)g->in->nmain) != pass || !parents_done(g, a)) continue;
				int rc = emit_table(g, a, out);
				if (rc) return rc;
				a->done = 1;
				left--;
			}
		if (left == before) return fail(g, "schema %s: its foreign keys form a cycle", g->in->cats[0]->schema);
	}
	return DJC_OK;
}

/* The overlay's blocks name computed or imported tables of the adopted
 * schemas that djc can write (no raw column in them or their parts). */
static int check_overlay(gen *g)
{
	const adopt_overlay *ov = g->in->ov;
	for (size_t b = 0; ov && b < ov->n; b++) {
		const ov_block *ob = &ov->blocks[b];
		size_t i = 0;
		while (i < g->n && (g->v[i].ci >= (int)g->in->nmain || strcmp(g->v[i].cls, ob->table))) i++;
		if (i == g->n)
			return fail(g, "%s:%d: no table %s in the adopted schemas (the overlay names their computed and imported "
				    "tables by class name)", ov->file, ob->line, ob->table);
		const at *a = &g->v[i];
		if (a->tier != AT_COMPUTED && a->tier != AT_IMPORTED)
			return fail(g, "%s:%d: %s is a %s table: djc makes only computed and imported tables", ov->file, ob->line,
				    ob->table, tier_names[a->tier]);
		for (size_t k = 0; k < g->n; k++) {
			const at *w = &g->v[k];
			if ((k != i && w->master != (int)i) || !w->raw_col) continue;
			for (size_t l = 0; l < ob->n; l++)
				if (!strcmp(ob->lines[l].key, "make") || !strcmp(ob->lines[l].key, "make_serve"))
					return fail(g, "%s:%d: %s.column %s: %s (%s) cannot be written by djc", ov->file,
						    ob->lines[l].line, w->cls, w->raw_col,
						    strchr(w->raw_why, '@') ? "external store column" : "a column of a type djc does not have",
						    w->raw_why);
		}
	}
	return DJC_OK;
}

int adopt_generate(char **out, char **msg, const adopt_in *in)
{
	*out = NULL;
	if (msg) *msg = NULL;
	gen g = {in, NULL, 0, msg};
	sb_t b = SB_INIT;
	int rc = collect(&g);
	if (!rc) rc = resolve(&g);
	if (!rc) rc = emit_all(&g, &b);
	if (!rc) rc = check_overlay(&g);
	for (size_t i = 0; i < g.n; i++) {
		free(g.v[i].cls);
		free(g.v[i].raw_col);
		free(g.v[i].raw_why);
	}
	free(g.v);
	if (!rc) *out = sb_steal(&b);
	sb_free(&b);
	return rc;
}

/* Line n (1-based) of text, trimmed, into b; 0 when text has fewer. */
static int text_line(const char *text, int n, sb_t *b)
{
	const char *p = text;
	for (int i = 1; i < n && p; i++) {
		p = strchr(p, '\n');
		if (p) p++;
	}
	if (!p || !*p) return 0;
	size_t len = strcspn(p, "\n");
	while (len && (*p == ' ' || *p == '\t')) p++, len--;
	while (len && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r')) len--;
	sb_reset(b);
	sb_addn(b, p, len);
	return 1;
}

char *adopt_where(const char *text, const adopt_overlay *ov, const char *file, const char *msg)
{
	size_t fl = strlen(file);
	if (!text || !msg || strncmp(msg, file, fl) || msg[fl] != ':') return NULL;
	char *end;
	long n = strtol(msg + fl + 1, &end, 10);
	if (n < 1 || end == msg + fl + 1 || strncmp(end, ": ", 2)) return NULL;
	const char *rest = end + 2;
	/* the block holding line n: its header (an unindented line that is
	 * not a comment) and its adopted = line */
	sb_t l = SB_INIT, cls = SB_INIT, dj = SB_INIT;
	int header = 0;
	const char *p = text;
	for (long i = 1; i <= n && *p; i++) {
		size_t len = strcspn(p, "\n");
		if (len && *p != ' ' && *p != '\t' && *p != '#') {
			header = (int)i;
			sb_reset(&cls);
			sb_addn(&cls, p, strcspn(p, " ("));
			sb_reset(&dj);
		} else if (header && !dj.len && text_line(text, (int)i, &l) && !strncmp(sb_str(&l), "adopted = ", 10)) {
			sb_add(&dj, sb_str(&l) + 10);
		}
		p += len + (p[len] == '\n');
	}
	char *out = NULL;
	if (!header || !text_line(text, (int)n, &l) || n == header || !dj.len || !strncmp(sb_str(&l), "adopted = ", 10)) {
		out = xstrdup(rest);   /* a message about the table names it */
		goto done;
	}
	/* a line the overlay gave the block: the overlay's file:line */
	for (size_t b = 0; ov && b < ov->n; b++) {
		if (strcmp(ov->blocks[b].table, sb_str(&cls))) continue;
		for (size_t k = 0; k < ov->blocks[b].n; k++)
			if (!strcmp(ov->blocks[b].lines[k].text, sb_str(&l))) {
				out = xasprintf("%s:%d: %s", ov->file, ov->blocks[b].lines[k].line, rest);
				goto done;
			}
	}
	const char *s = sb_str(&l);
	if (!strncmp(s, "->", 2)) out = xasprintf("table %s (%s), reference '%s': %s", sb_str(&dj), sb_str(&cls), s, rest);
	else {
		size_t an = strcspn(s, "=:#");
		while (an && (s[an - 1] == ' ' || s[an - 1] == '\t')) an--;
		if (an) out = xasprintf("table %s (%s), column %.*s: %s", sb_str(&dj), sb_str(&cls), (int)an, s, rest);
		else out = xasprintf("table %s (%s): %s", sb_str(&dj), sb_str(&cls), rest);
	}
done:
	sb_free(&l);
	sb_free(&cls);
	sb_free(&dj);
	return out;
}
