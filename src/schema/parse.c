/* parse.c - the pipeline file and DataJoint 2.x definition parser.
 *
 *   Name (tier)                     unindented header; tier is manual,
 *       -> Parent                   lookup, imported, computed or part
 *       attr = default : type  # comment
 *       ---
 *       index(a, b) / unique index(a)
 *       make = program arg ...      (djc: the make command of the table)
 *       make_serve = program arg ...  (djc: its serve program, instead)
 *       timeout = 2h                (djc: how long one make may run)
 *       key_source = {"a": 1}       (djc: a standing key-source restriction)
 *       key_source = A * B & {"a": 1}  (a join of upstream tables, restricted,
 *                                   projected on the target's attributes)
 *       job_metadata = true         (djc: hidden job metadata columns)
 *       adopted = ephys.__x         (djc: a DataJoint table adopted as it is,
 *                                   docs/adopt.md; its name may then be
 *                                   schema.Class, its references renamed,
 *                                   -> P.proj(child='parent'), its columns
 *                                   carry `as binary(16)`, `collate X`,
 *                                   raw(<sql type>): docs/types.md)
 *
 * Every error names the file and line. */
#include "schema.h"
#include "djc.h"
#include "util/duration.h"
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct pctx {
	const char *file;
	char *msg;
	const pipeline *prev;
	pipeline *cur;
} pctx;

static int fail(pctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(pctx *c, int line, const char *fmt, ...)
{
	sb_t b = SB_INIT;
	sb_printf(&b, "%s:%d: ", c->file, line);
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	free(c->msg);
	c->msg = sb_steal(&b);
	return DJC_EINVAL;
}

const char *tier_name(tier t)
{
	static const char *n[] = {"manual", "lookup", "imported", "computed", "part"};
	return n[t];
}

static void free_table(table *t)
{
	if (!t) return;
	free(t->name); free(t->sql_name); free(t->jobs_name); free(t->hist_name);
	free(t->adopted); free(t->schema); free(t->sqlref);
	for (size_t i = 0; i < t->nattrs + t->nhidden; i++) {
		attr *a = &t->attrs[i];
		free(a->name); free(a->type_text); free(a->def); free(a->comment); free(a->collate); free(a->store_type);
		for (size_t k = 0; k < a->type.nenums; k++) free(a->type.enums[k]);
		free(a->type.enums);
	}
	free(t->attrs);
	for (size_t i = 0; i < t->nfks; i++) {
		free(t->fks[i].parent);
		for (size_t k = 0; k < t->fks[i].nattrs; k++) {
			free(t->fks[i].attrs[k]);
			if (t->fks[i].cattrs) free(t->fks[i].cattrs[k]);
		}
		free(t->fks[i].attrs);
		free(t->fks[i].cattrs);
	}
	free(t->fks);
	for (size_t i = 0; i < t->nnullrefs; i++) {
		free(t->nullrefs[i].parent);
		for (size_t k = 0; k < t->nullrefs[i].nattrs; k++) {
			free(t->nullrefs[i].attrs[k]);
			free(t->nullrefs[i].cattrs[k]);
		}
		free(t->nullrefs[i].attrs);
		free(t->nullrefs[i].cattrs);
	}
	free(t->nullrefs);
	for (size_t i = 0; i < t->nidx; i++) {
		for (size_t k = 0; k < t->idx[i].nattrs; k++) free(t->idx[i].attrs[k]);
		free(t->idx[i].attrs);
	}
	free(t->idx);
	for (char **p = t->make_argv; p && *p; p++) free(*p);
	free(t->make_argv);
	for (char **p = t->make_serve_argv; p && *p; p++) free(*p);
	free(t->make_serve_argv);
	free(t->key_source_where);
	free(t->key_source_join);
	free(t->ks_tables);
	free(t->text); free(t->canon); free(t->how); free(t->src);
	free(t);
}

void pipeline_free(pipeline *p)
{
	if (!p) return;
	for (size_t i = 0; i < p->n; i++) free_table(p->tables[i]);
	free(p->tables);
	free(p);
}

table *pipeline_find(const pipeline *p, const char *name)
{
	for (size_t i = 0; p && i < p->n; i++)
		if (!strcmp(p->tables[i]->name, name)) return p->tables[i];
	return NULL;
}

table *pipeline_lookup(const pipeline *p, const char *name)
{
	table *t = pipeline_find(p, name);
	if (t) return t;
	table *hit = NULL;
	int nhit = 0;
	for (size_t i = 0; p && i < p->n; i++) {
		table *x = p->tables[i];
		if (!strcmp(x->sql_name, name)) return x;
		const char *dot = strchr(x->name, '.');
		if (dot && !strcmp(dot + 1, name)) { hit = x; nhit++; }
	}
	return nhit == 1 ? hit : NULL;
}

attr *table_attr(const table *t, const char *name)
{
	for (size_t i = 0; i < t->nattrs; i++)
		if (!strcmp(t->attrs[i].name, name)) return &t->attrs[i];
	return NULL;
}

int table_references(const table *x, const table *p)
{
	for (size_t f = 0; f < x->nfks; f++)
		if (x->fks[f].ptable == p) return 1;
	for (size_t f = 0; f < x->nnullrefs; f++)
		if (x->nullrefs[f].ptable == p) return 1;
	return 0;
}

attr *table_attr_any(const table *t, const char *name)
{
	for (size_t i = 0; i < t->nattrs + t->nhidden; i++)
		if (!strcmp(t->attrs[i].name, name)) return &t->attrs[i];
	return NULL;
}

/* The hidden attributes, with DataJoint's names: when make started (UTC,
 * the worker's clock), how long it ran (seconds), which code made it. */
static void add_job_meta_attrs(table *t)
{
	static const struct { const char *name; coltype ty; int n; const char *text; } H[] = {
		{"_job_start_time", T_DATETIME, 3, "datetime(3)"},
		{"_job_duration", T_FLOAT64, 0, "float64"},
		{"_job_version", T_VARCHAR, 64, "varchar(64)"},
	};
	size_t n = sizeof H / sizeof *H;
	t->attrs = xgrow(t->attrs, &t->attrs_cap, t->nattrs + n, sizeof(attr));
	for (size_t i = 0; i < n; i++) {
		attr *a = &t->attrs[t->nattrs + i];
		memset(a, 0, sizeof *a);
		a->name = xstrdup(H[i].name);
		a->type.t = H[i].ty;
		a->type.p = H[i].n;   /* varchar length, datetime's fractional digits */
		a->type_text = xstrdup(H[i].text);
		a->nullable = 1;
	}
	t->nhidden = n;
	t->job_meta = 1;
}

void table_enable_job_meta(table *t)
{
	if (t->job_meta || (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED)) return;
	add_job_meta_attrs(t);
	char *nt = xasprintf("%s%s" JOB_META_LINE, t->text,
			     *t->text && t->text[strlen(t->text) - 1] != '\n' ? "\n" : "");
	free(t->text);
	t->text = nt;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t') s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) s[--n] = 0;
	return s;
}

/* Cut a trailing "# comment" outside quotes; returns the comment or NULL. */
static char *cut_comment(char *s)
{
	char q = 0;
	for (char *p = s; *p; p++) {
		if (q) { if (*p == '\\' && p[1]) p++; else if (*p == q) q = 0; }
		else if (*p == '\'' || *p == '"') q = *p;
		else if (*p == '#') { *p = 0; return trim(p + 1); }
	}
	return NULL;
}

static int valid_table_name(const char *s)
{
	if (!isalpha((unsigned char)*s)) return 0;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p)) return 0;
	return 1;   /* its length is its SQL name's (pipeline_parse) */
}

/* DataJoint's rule: a lowercase letter first. Names starting with '_' are
 * djc's own (hidden columns, a jobs-table column beside a key attribute of
 * the same name: src/jobs/sql.c). */
static int valid_attr_name(const char *s)
{
	if (!islower((unsigned char)*s)) return 0;
	for (const char *p = s; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_')) return 0;
	return strlen(s) <= 64;
}

static int adopted_line(const char *s);

static void snake(sb_t *b, const char *s)
{
	for (const char *p = s; *p; p++) {
		if (isupper((unsigned char)*p)) {
			if (p != s) sb_addc(b, '_');
			sb_addc(b, (char)tolower((unsigned char)*p));
		} else
			sb_addc(b, *p);
	}
}

/* ------------------------------------------------------------ types */

static const struct { const char *name; coltype t; } simple_types[] = {
	{"int8", T_INT8}, {"int16", T_INT16}, {"int32", T_INT32}, {"int64", T_INT64},
	{"uint8", T_UINT8}, {"uint16", T_UINT16}, {"uint32", T_UINT32}, {"uint64", T_UINT64},
	{"float32", T_FLOAT32}, {"float64", T_FLOAT64}, {"bool", T_BOOL}, {"date", T_DATE},
	{"uuid", T_UUID}, {"json", T_JSON}, {"bytes", T_BYTES},
	/* MySQL-style names DataJoint 0.x users write */
	{"tinyint", T_INT8}, {"smallint", T_INT16}, {"int", T_INT32}, {"bigint", T_INT64},
	{"tinyint unsigned", T_UINT8}, {"smallint unsigned", T_UINT16}, {"int unsigned", T_UINT32},
	{"bigint unsigned", T_UINT64}, {"float", T_FLOAT32}, {"double", T_FLOAT64},
	{"boolean", T_BOOL}, {"longblob", T_BYTES}, {"blob", T_BYTES}, {"mediumblob", T_BYTES},
};

static const char *canon_simple(coltype t)
{
	static const char *n[] = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
				  "float32", "float64", "bool", "decimal", "char", "varchar", "enum",
				  "date", "datetime", "uuid", "json", "bytes", "text"};
	return n[t];
}

static int parse_int_arg(const char *s, int *out)
{
	char *e;
	long v = strtol(s, &e, 10);
	while (*e == ' ') e++;
	if (e == s || *e || v < 0 || v > 65535) return -1;
	*out = (int)v;
	return 0;
}

/* The labels of an enum type, taken from the original text to keep their
 * case: quoted, separated by ',', none empty or repeated. */
static int parse_enum(pctx *c, int line, const char *text, attr *a)
{
	/* labels are taken from the original text to keep their case */
	const char *o = strchr(text, '(') + 1;
	const char *end = strrchr(text, ')');
	sb_t canon = SB_INIT;
	sb_add(&canon, "enum(");
	const char *p = o;
	while (p < end) {
		while (p < end && (*p == ' ' || *p == ',')) p++;
		if (p >= end) break;
		if (*p != '\'' && *p != '"') {
			sb_free(&canon);
			return fail(c, line, "enum labels of attribute '%s' must be quoted, e.g. enum('a', 'b')", a->name);
		}
		char q = *p++;
		const char *s = p;
		while (p < end && *p != q) p++;
		if (p >= end) { sb_free(&canon); return fail(c, line, "unterminated enum label for attribute '%s'", a->name); }
		if (p == s) { sb_free(&canon); return fail(c, line, "empty enum label for attribute '%s'", a->name); }
		a->type.enums = xrealloc(a->type.enums, (a->type.nenums + 1) * sizeof(char *));
		a->type.enums[a->type.nenums++] = xstrndup(s, (size_t)(p - s));
		sb_printf(&canon, "%s'%.*s'", a->type.nenums > 1 ? "," : "", (int)(p - s), s);
		p++;
		while (p < end && *p == ' ') p++;
		if (p < end && *p != ',') { sb_free(&canon); return fail(c, line, "expected ',' between enum labels of attribute '%s'", a->name); }
	}
	if (!a->type.nenums) { sb_free(&canon); return fail(c, line, "enum of attribute '%s' has no labels", a->name); }
	for (size_t i = 0; i < a->type.nenums; i++)
		for (size_t k = i + 1; k < a->type.nenums; k++)
			if (!strcmp(a->type.enums[i], a->type.enums[k])) {
				sb_free(&canon);
				return fail(c, line, "enum label '%s' repeats in attribute '%s'", a->type.enums[i], a->name);
			}
	sb_addc(&canon, ')');
	a->type.t = T_ENUM;
	a->type.p = 255;
	a->type_text = sb_steal(&canon);
	return 0;
}

/* A type with arguments, base(args): char(n), varchar(n), datetime(p),
 * decimal(p,s), enum(...). text: as written, for messages. */
static int parse_type_args(pctx *c, int line, const char *text, const char *base, char *args, attr *a)
{
	if (!strcmp(base, "varchar") || !strcmp(base, "char")) {
		if (parse_int_arg(args, &a->type.p) || a->type.p < 1 || a->type.p > 16383)
			return fail(c, line, "bad length in '%s' for attribute '%s' (expected 1..16383)", text, a->name);
		a->type.t = base[0] == 'v' ? T_VARCHAR : T_CHAR;
		if (a->type.t == T_CHAR && a->type.p > 255)
			return fail(c, line, "char(%d) of attribute '%s' is longer than 255; use varchar", a->type.p, a->name);
		a->type_text = xasprintf("%s(%d)", base, a->type.p);
		return 0;
	}
	if (!strcmp(base, "datetime") || !strcmp(base, "timestamp")) {
		if (parse_int_arg(args, &a->type.p) || a->type.p > 6)
			return fail(c, line, "bad precision in '%s' for attribute '%s' (expected 0..6)", text, a->name);
		a->type.t = T_DATETIME;
		a->type_text = a->type.p ? xasprintf("datetime(%d)", a->type.p) : xstrdup("datetime");
		return 0;
	}
	if (!strcmp(base, "decimal") || !strcmp(base, "numeric")) {
		char *comma = strchr(args, ',');
		if (comma) *comma = 0;
		if (parse_int_arg(args, &a->type.p) || a->type.p < 1 || a->type.p > 38 ||
		    (comma && parse_int_arg(trim(comma + 1), &a->type.s)) || a->type.s > a->type.p)
			return fail(c, line, "bad precision in '%s' for attribute '%s' (expected decimal(p,s) with 1 <= p <= 38, 0 <= s <= p)",
				    text, a->name);
		a->type.t = T_DECIMAL;
		a->type_text = xasprintf("decimal(%d,%d)", a->type.p, a->type.s);
		return 0;
	}
	if (!strcmp(base, "enum")) return parse_enum(c, line, text, a);
	return fail(c, line, "unknown type '%s' for attribute '%s'", text, a->name);
}

/* raw(<sql type>): a column of an adopted table djc cannot represent,
 * kept as the server's type text (docs/types.md). */
static int parse_raw(pctx *c, int line, const char *text, attr *a)
{
	const char *o = strchr(text, '(') + 1, *e = strrchr(text, ')');
	while (o < e && *o == ' ') o++;
	while (e > o && e[-1] == ' ') e--;
	if (e <= o) return fail(c, line, "raw() of attribute '%s' names no SQL type, e.g. raw(mediumint)", a->name);
	a->type.t = T_TEXT;
	a->raw = 1;
	a->type_text = xasprintf("raw(%.*s)", (int)(e - o), o);
	return 0;
}

static int parse_type(pctx *c, int line, const char *text, attr *a)
{
	char low[256];
	size_t n = strlen(text);
	if (n == 0) return fail(c, line, "attribute '%s' has no type after ':'", a->name);
	if (!strncasecmp(text, "raw", 3) && text[3 + strspn(text + 3, " ")] == '(' && text[n - 1] == ')') {
		memset(&a->type, 0, sizeof a->type);
		return parse_raw(c, line, text, a);
	}
	if (!strcasecmp(text, "<blob>")) {
		memset(&a->type, 0, sizeof a->type);
		a->type.t = T_BYTES;
		a->dj_blob = 1;
		a->type_text = xstrdup("<blob>");
		return 0;
	}
	if (n >= sizeof low) return fail(c, line, "type of attribute '%s' is too long", a->name);
	for (size_t i = 0; i <= n; i++) low[i] = (char)tolower((unsigned char)text[i]);
	/* collapse runs of spaces */
	char *w = low;
	for (char *r = low; *r; r++)
		if (!(*r == ' ' && (w == low || w[-1] == ' '))) *w++ = *r;
	*w = 0;
	char *t = trim(low);
	memset(&a->type, 0, sizeof a->type);
	for (size_t i = 0; i < sizeof simple_types / sizeof *simple_types; i++)
		if (!strcmp(t, simple_types[i].name)) {
			a->type.t = simple_types[i].t;
			a->type_text = xstrdup(canon_simple(a->type.t));
			return 0;
		}
	char *lp = strchr(t, '(');
	char *rp = strrchr(t, ')');
	if (!lp || !rp || rp < lp || trim(rp + 1)[0]) {
		if (!strcmp(t, "datetime") || !strcmp(t, "timestamp")) {
			a->type.t = T_DATETIME;
			a->type_text = xstrdup("datetime");
			return 0;
		}
		if (!strcmp(t, "varchar") || !strcmp(t, "char") || !strcmp(t, "decimal") || !strcmp(t, "enum"))
			return fail(c, line, "type '%s' of attribute '%s' needs its size, e.g. %s", text, a->name,
				    !strcmp(t, "enum") ? "enum('a', 'b')" : !strcmp(t, "decimal") ? "decimal(8,3)" : "varchar(64)");
		return fail(c, line, "unknown type '%s' for attribute '%s' (core types: int8..int64, uint8..uint64, "
			    "float32, float64, bool, decimal(p,s), char(n), varchar(n), enum(...), date, datetime, "
			    "datetime(3), uuid, json, bytes)", text, a->name);
	}
	*lp = 0;
	char *base = trim(t);
	*rp = 0;
	return parse_type_args(c, line, text, base, lp + 1, a);
}

/* --------------------------------------------------------- tables */

static attr *add_attr(table *t)
{
	t->attrs = xgrow(t->attrs, &t->attrs_cap, t->nattrs + 1, sizeof(attr));
	attr *a = &t->attrs[t->nattrs++];
	memset(a, 0, sizeof *a);
	return a;
}

static table *resolve(pctx *c, const char *name)
{
	table *t = pipeline_find(c->cur, name);
	return t ? t : pipeline_find(c->prev, name);
}

/* The renames of a reference, -> P.proj(child='parent', ...). */
typedef struct renames {
	char *child[64], *parent[64];
	size_t n;
} renames;

/* The child attribute for parent attribute pa of a reference with renames
 * r (pa itself when not renamed). */
static const char *renamed(const renames *r, const char *pa)
{
	for (size_t i = 0; r && i < r->n; i++)
		if (!strcmp(r->parent[i], pa)) return r->child[i];
	return pa;
}

/* A rename naming no key attribute of the parent is an error. */
static int renames_check(pctx *c, int line, const table *p, const renames *r)
{
	for (size_t i = 0; r && i < r->n; i++) {
		const attr *pa = table_attr(p, r->parent[i]);
		if (!pa || !pa->in_key)
			return fail(c, line, "%s.proj(%s='%s'): '%s' is not a primary key attribute of %s", p->name, r->child[i],
				    r->parent[i], r->parent[i], p->name);
		if (!valid_attr_name(r->child[i]))
			return fail(c, line, "invalid attribute name '%s' in %s.proj(...)", r->child[i], p->name);
	}
	return 0;
}

/* A reference to p that gives t the same attributes as one t has. */
static int same_reference(const table *t, const table *p, const renames *r)
{
	for (size_t i = 0; i < t->nfks; i++) {
		if (t->fks[i].ptable != p) continue;
		int same = 1;
		for (size_t k = 0; k < t->fks[i].nattrs && same; k++)
			same = !strcmp(t->fks[i].cattrs[k], renamed(r, t->fks[i].attrs[k]));
		if (same) return 1;
	}
	return 0;
}

/* The child attribute cname from parent attribute pa: new, or already
 * there with the same type. */
static int inherit_attr(pctx *c, int line, table *t, const attr *pa, const char *cname, const char *pname, int in_key)
{
	attr *ex = table_attr(t, cname);
	if (ex) {
		if (strcmp(ex->type_text, pa->type_text))
			return fail(c, line, "attribute '%s' from parent %s has type %s but is already %s", cname,
				    pname, pa->type_text, ex->type_text);
		return 0;
	}
	attr *a = add_attr(t);
	a->name = xstrdup(cname);
	a->type = pa->type;
	a->type.enums = NULL;
	a->type.nenums = 0;
	if (pa->type.nenums) {
		a->type.enums = xcalloc(pa->type.nenums, sizeof(char *));
		for (size_t k = 0; k < pa->type.nenums; k++) a->type.enums[k] = xstrdup(pa->type.enums[k]);
		a->type.nenums = pa->type.nenums;
	}
	a->type_text = xstrdup(pa->type_text);
	a->dj_blob = pa->dj_blob;
	a->raw = pa->raw;
	a->bin16 = pa->bin16;
	a->nonfinite = pa->nonfinite;
	if (pa->store_type) a->store_type = xstrdup(pa->store_type);
	if (pa->collate) a->collate = xstrdup(pa->collate);
	a->in_key = in_key;
	a->from_parent = 1;
	return 0;
}

/* The parent table pname a `->` line of t names, checked (not t itself,
 * known, renames of its key attributes), into *out. */
static int ref_parent(pctx *c, int line, const table *t, const char *pname, const renames *r, table **out)
{
	if (!*pname) return fail(c, line, "'->' names no parent table");
	/* checked before resolving: the table being parsed is already in c->cur */
	if (!strcmp(pname, t->name)) return fail(c, line, "table %s cannot reference itself", t->name);
	table *p = *out = resolve(c, pname);
	if (!p) return fail(c, line, "unknown parent table '%s' (declare it above this table, or check the spelling)", pname);
	return renames_check(c, line, p, r) ? DJC_EINVAL : 0;
}

/* A new reference to p at the end of *v (t->fks or t->nullrefs). */
static fkey *ref_new(fkey **v, size_t *n, table *p)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(fkey));
	fkey *f = &(*v)[(*n)++];
	memset(f, 0, sizeof *f);
	f->parent = xstrdup(p->name);
	f->ptable = p;
	f->attrs = xcalloc(p->nkey ? p->nkey : 1, sizeof(char *));
	f->cattrs = xcalloc(p->nkey ? p->nkey : 1, sizeof(char *));
	return f;
}

/* The parent's key attribute pa in reference f, under the name r gives it
 * in the child (returned). */
static const char *ref_attr(fkey *f, const attr *pa, const renames *r)
{
	const char *cname = renamed(r, pa->name);
	f->attrs[f->nattrs] = xstrdup(pa->name);
	f->cattrs[f->nattrs++] = xstrdup(cname);
	if (strcmp(cname, pa->name)) f->renamed = 1;
	return cname;
}

static int add_parent(pctx *c, int line, table *t, const char *pname, int in_key, const renames *r)
{
	table *p;
	if (ref_parent(c, line, t, pname, r, &p)) return DJC_EINVAL;
	if (same_reference(t, p, r))
		return fail(c, line, "parent %s is referenced twice", pname);
	fkey *f = ref_new(&t->fks, &t->nfks, p);
	f->in_key = in_key;
	for (size_t i = 0; i < p->nkey; i++)
		if (inherit_attr(c, line, t, &p->attrs[i], ref_attr(f, &p->attrs[i], r), pname, in_key)) return DJC_EINVAL;
	return 0;
}

/* An adopted table's nullable reference `-> [nullable] P[.proj(...)]`
 * below '---': P's key attributes (renamed) as plain nullable attributes,
 * the reference kept in t->nullrefs for their lineage only. */
static int add_nullable(pctx *c, int line, table *t, const char *pname, const renames *r)
{
	table *p;
	if (ref_parent(c, line, t, pname, r, &p)) return DJC_EINVAL;
	fkey *f = ref_new(&t->nullrefs, &t->nnullrefs, p);
	for (size_t i = 0; i < p->nkey; i++) {
		const char *cname = ref_attr(f, &p->attrs[i], r);
		int had = table_attr(t, cname) != NULL;
		if (inherit_attr(c, line, t, &p->attrs[i], cname, pname, 0)) return DJC_EINVAL;
		if (!had) {
			attr *a = table_attr(t, cname);
			a->nullable = 1;
			a->from_parent = 0;
		}
	}
	return 0;
}

/* Split "prog 'a b' c" into argv without any shell, with sh's quoting: an
 * unquoted '#' starting a word begins a comment (so `make = prog  # the
 * program` is one word; inside a word or in quotes it is an ordinary
 * character); a backslash outside quotes takes the next character as it is
 * (`my\ dir` is one word); in double quotes it does so only before
 * " \ $ ` and is itself elsewhere ("a\nb" keeps its backslash); in single
 * quotes it is itself. Nothing is expanded. */
static int split_argv(pctx *c, int line, const char *what, const char *s, char ***out)
{
	char **v = NULL;
	size_t n = 0;
	const char *p = s;
	for (;;) {
		while (*p == ' ' || *p == '\t') p++;
		if (!*p || *p == '#') break;
		sb_t w = SB_INIT;
		sb_add(&w, "");
		while (*p && *p != ' ' && *p != '\t') {
			if (*p == '\\') {
				if (p[1]) p++;   /* a backslash at the end of the line is itself */
				sb_addc(&w, *p++);
			} else if (*p == '\'' || *p == '"') {
				char q = *p++;
				while (*p && *p != q) {
					if (q == '"' && *p == '\\' && p[1] && strchr("\"\\$`", p[1])) p++;
					sb_addc(&w, *p++);
				}
				if (!*p) {
					sb_free(&w);
					for (size_t i = 0; i < n; i++) free(v[i]);
					free(v);
					return fail(c, line, "unterminated quote in %s command", what);
				}
				p++;
			} else
				sb_addc(&w, *p++);
		}
		v = xrealloc(v, (n + 2) * sizeof(char *));
		v[n++] = sb_steal(&w);
		v[n] = NULL;
	}
	if (!n) return fail(c, line, "'%s =' names no program", what);
	*out = v;
	return 0;
}

static int parse_index(pctx *c, int line, table *t, char *s, int unique)
{
	s = trim(s);
	size_t n = strlen(s);
	if (s[0] != '(' || n < 2 || s[n - 1] != ')') return fail(c, line, "expected %sindex(attr, ...)", unique ? "unique " : "");
	s[n - 1] = 0;
	t->idx = xrealloc(t->idx, (t->nidx + 1) * sizeof(tindex));
	tindex *ix = &t->idx[t->nidx++];
	memset(ix, 0, sizeof *ix);
	ix->unique = unique;
	char *save = NULL;
	for (char *tok = strtok_r(s + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *a = trim(tok);
		const attr *ia = table_attr(t, a);
		if (!ia) return fail(c, line, "index names unknown attribute '%s'", a);
		if (ia->type.t == T_JSON || ia->type.t == T_BYTES || ia->raw)
			return fail(c, line, "attribute '%s' of type %s cannot be indexed", a, ia->type_text);
		ix->attrs = xrealloc(ix->attrs, (ix->nattrs + 1) * sizeof(char *));
		ix->attrs[ix->nattrs++] = xstrdup(a);
	}
	if (!ix->nattrs) return fail(c, line, "index lists no attributes");
	return 0;
}

/* The first storage option word (" as ", " collate ") of a type text,
 * outside quotes and parentheses, or NULL. */
static char *type_opt_start(char *ty)
{
	char q = 0;
	int depth = 0;
	for (char *p = ty; *p; p++) {
		if (q) { if (*p == q) q = 0; continue; }
		if (*p == '\'' || *p == '"') q = *p;
		else if (*p == '(') depth++;
		else if (*p == ')') depth--;
		else if (!depth && *p == ' ' && (!strncasecmp(p, " as ", 4) || !strncasecmp(p, " collate ", 9))) return p;
	}
	return NULL;
}

/* `as TYPE`: binary(16) for a uuid, a type name (PostgreSQL's enum type,
 * "schema"."enum_x") for an enum, float8 / float4 for a float64 / float32
 * (PostgreSQL's double precision / real, which keep NaN and infinities). */
static int store_type_ok(const attr *a, const char *ty)
{
	if (a->type.t == T_UUID) return !strcasecmp(ty, "binary(16)");
	if (a->type.t == T_FLOAT64) return !strcasecmp(ty, "float8");
	if (a->type.t == T_FLOAT32) return !strcasecmp(ty, "float4");
	if (a->type.t != T_ENUM || !*ty) return 0;
	return strspn(ty, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.\"") == strlen(ty);
}

/* The storage options after an adopted column's type (docs/types.md):
 * `as binary(16)` (a uuid DataJoint stores as 16 bytes) and `collate NAME`
 * (the column's collation, which its jobs table copies). */
static int type_opts(pctx *c, int line, const table *t, char *o, attr *a)
{
	if (!t->adopted)
		return fail(c, line, "'%s' after the type of attribute '%s' is for adopted tables only (adopted = ...)", trim(o), a->name);
	char *save = NULL, *w = strtok_r(o, " ", &save);
	while (w) {
		char *arg = strtok_r(NULL, " ", &save);
		if (!strcasecmp(w, "as") && arg && !a->store_type && store_type_ok(a, arg)) {
			a->store_type = xstrdup(arg);
			a->bin16 = a->type.t == T_UUID;
			a->nonfinite = a->type.t == T_FLOAT64 || a->type.t == T_FLOAT32;
		}
		else if (!strcasecmp(w, "collate") && arg && !a->collate && strspn(arg, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(arg))
			a->collate = xstrdup(arg);
		else
			return fail(c, line, "cannot read '%s%s%s' after the type of attribute '%s' (expected 'as binary(16)' "
				    "for a uuid, 'as schema.type' for an enum, 'as float8' or 'as float4' for a float, or 'collate name')", w, arg ? " " : "", arg ? arg : "",
				    a->name);
		w = strtok_r(NULL, " ", &save);
	}
	return 0;
}

/* A quoted default's value (the n characters inside its quotes): \\,
 * \" and \' stand for a backslash and the quotes, as in DataJoint's
 * (MySQL's) literals, so any one-line string can be written (adopt writes
 * DataJoint's defaults so: src/schema/adopt.c); any other backslash is
 * itself. */
static char *unquote_default(const char *d, size_t n)
{
	char *v = xmalloc(n + 1), *o = v;
	for (size_t i = 0; i < n; i++) {
		if (d[i] == '\\' && i + 1 < n && strchr("\\\"'", d[i + 1])) i++;
		*o++ = d[i];
	}
	*o = 0;
	return v;
}

static int parse_attr_line(pctx *c, int line, table *t, char *s, int in_key)
{
	char *comment = cut_comment(s);
	s = trim(s);
	/* name [= default] : type */
	char *colon = NULL;
	char q = 0;
	char *eq = NULL;
	for (char *p = s; *p; p++) {
		if (q) { if (*p == '\\' && p[1]) p++; else if (*p == q) q = 0; continue; }
		if (*p == '\'' || *p == '"') { if (eq) q = *p; continue; }
		if (*p == '=' && !eq) eq = p;
		if (*p == ':') { colon = p; break; }
	}
	if (!colon) return fail(c, line, "cannot read '%s': expected 'name : type' (or 'name = default : type')", s);
	*colon = 0;
	if (eq) *eq = 0;
	char *name = trim(s);
	if (!*name) return fail(c, line, "attribute has no name before ':'");
	if (!valid_attr_name(name))
		return fail(c, line, "invalid attribute name '%s' (lowercase letters, digits and _; starting with a letter)", name);
	if (table_attr(t, name)) return fail(c, line, "duplicate attribute '%s' in table %s", name, t->name);
	if (!strcmp(name, "make") || !strcmp(name, "make_serve") || !strcmp(name, "key_source") || !strcmp(name, "job_metadata"))
		return fail(c, line, "'%s' is reserved for the make directive; choose another attribute name", name);
	attr *a = add_attr(t);
	a->name = xstrdup(name);
	a->in_key = in_key;
	if (comment) a->comment = xstrdup(comment);
	char *ty = trim(colon + 1), *opt = type_opt_start(ty);
	if (opt) *opt++ = 0;
	if (parse_type(c, line, trim(ty), a) || (opt && type_opts(c, line, t, opt, a))) return DJC_EINVAL;
	if (a->raw && !t->adopted)
		return fail(c, line, "attribute '%s': raw(...) columns belong to adopted tables only", name);
	if (in_key && (a->type.t == T_JSON || a->type.t == T_BYTES))
		return fail(c, line, "attribute '%s' of type %s cannot be in the primary key (put it below '---')", name, a->type_text);
	if (eq) {
		char *d = trim(eq + 1);
		size_t n = strlen(d);
		if (!n) return fail(c, line, "attribute '%s' has '=' but no default value", name);
		if ((d[0] == '"' || d[0] == '\'') && n >= 2 && d[n - 1] == d[0]) {
			a->def = unquote_default(d + 1, n - 2);
			a->has_def = 1;
		} else if (!strcasecmp(d, "null")) {
			a->nullable = 1;
		} else {
			a->def = xstrdup(d);
			a->has_def = 1;
		}
		if (in_key && a->nullable) return fail(c, line, "primary key attribute '%s' cannot be nullable", name);
		if (in_key && a->has_def) return fail(c, line, "primary key attribute '%s' cannot have a default", name);
		if (a->has_def && a->raw) {
			/* a raw column of an adopted table: djc never writes it, so
			 * its default (CURRENT_TIMESTAMP of a MySQL timestamp, a
			 * time's '12:00:00') is the server's, kept as written */
		} else if (a->has_def && strcasecmp(a->def, "CURRENT_TIMESTAMP")) {
			/* check the default against its type now, not at first insert */
			val_t in = val_text(a->def), out = {0};
			char *msg = NULL;
			json_error_t je;
			json_t *j = NULL;
			int rc;
			if (a->type.t <= T_BOOL && (j = json_loads(a->def, JSON_DECODE_ANY, &je)))
				rc = value_from_json(a, j, &out, &msg);
			else
				rc = value_in(a, &in, &out, &msg);
			json_decref(j);
			val_free(&in);
			val_free(&out);
			if (rc) {
				int r = fail(c, line, "bad default for '%s': %s", name, msg);
				free(msg);
				return r;
			}
		} else if (a->has_def && a->type.t != T_DATETIME)
			return fail(c, line, "CURRENT_TIMESTAMP is a default for datetime attributes only");
	}
	return 0;
}

static void build_canon(table *t)
{
	sb_t b = SB_INIT;
	sb_printf(&b, "%s (%s)\n", t->name, tier_name(t->tier));
	for (size_t i = 0; i < t->nattrs; i++) {
		attr *a = &t->attrs[i];
		if (i == t->nkey) sb_add(&b, "---\n");
		sb_printf(&b, "%s%s:%s%s%s%s%s%s%s\n", a->name, a->nullable ? "=null" : "", a->type_text,
			  a->store_type ? " as " : "", a->store_type ? a->store_type : "", a->collate ? " collate " : "",
			  a->collate ? a->collate : "",
			  a->has_def ? "=" : "", a->has_def ? a->def : "");
	}
	if (t->nkey == t->nattrs) sb_add(&b, "---\n");
	if (t->adopted) sb_printf(&b, "adopted = %s.%s\n", t->schema, t->sql_name);
	for (size_t i = 0; i < t->nfks; i++) {
		const fkey *f = &t->fks[i];
		sb_printf(&b, "->%s", f->parent);
		for (size_t k = 0; f->renamed && k < f->nattrs; k++)
			sb_printf(&b, "%s%s='%s'", k ? "," : ".proj(", f->cattrs[k], f->attrs[k]);
		sb_printf(&b, "%s%s\n", f->renamed ? ")" : "", f->in_key ? "" : " (dep)");
	}
	for (size_t i = 0; i < t->nidx; i++) {
		sb_add(&b, t->idx[i].unique ? "unique index(" : "index(");
		for (size_t k = 0; k < t->idx[i].nattrs; k++) sb_printf(&b, "%s%s", k ? "," : "", t->idx[i].attrs[k]);
		sb_add(&b, ")\n");
	}
	/* which keys the table holds is its definition */
	if (t->key_source_join) sb_printf(&b, "key_source join = %s\n", t->key_source_join);
	if (t->key_source_where) sb_printf(&b, "key_source = %s\n", t->key_source_where);
	t->canon = sb_steal(&b);
	/* how they are made is not (make is code, as in DataJoint) */
	sb_add(&b, "");
	if (t->make_argv) {
		sb_add(&b, "make =");
		for (char **p = t->make_argv; *p; p++) sb_printf(&b, " [%s]", *p);
		sb_addc(&b, '\n');
	}
	if (t->make_serve_argv) {
		sb_add(&b, "make_serve =");
		for (char **p = t->make_serve_argv; *p; p++) sb_printf(&b, " [%s]", *p);
		sb_addc(&b, '\n');
	}
	if (t->timeout > 0) sb_printf(&b, "timeout = %.17g\n", t->timeout);
	t->how = sb_steal(&b);
}

/* key_source = A * B ...: upstream tables to join (checked against the
 * target's ancestors and heading at the end of the block). A trailing
 * # comment ends the list. */
static int parse_ks_join(pctx *c, int line, table *t, char *s)
{
	cut_comment(s);
	sb_t canon = SB_INIT;
	char *save = NULL;
	for (char *w = strtok_r(s, "*", &save); w; w = strtok_r(NULL, "*", &save)) {
		char *name = trim(w);
		if (!*name) { sb_free(&canon); return fail(c, line, "key_source: empty table name in the join (write A * B)"); }
		if (!strcmp(name, t->name)) { sb_free(&canon); return fail(c, line, "key_source of %s cannot be %s itself", t->name, name); }
		table *k = resolve(c, name);
		if (!k) {
			int r = fail(c, line, "key_source names unknown table '%s' (a table declared above %s)", name, t->name);
			sb_free(&canon);
			return r;
		}
		for (size_t i = 0; i < t->nks; i++)
			if (t->ks_tables[i] == k) { sb_free(&canon); return fail(c, line, "key_source joins %s twice", name); }
		t->ks_tables = xrealloc(t->ks_tables, (t->nks + 1) * sizeof(table *));
		t->ks_tables[t->nks++] = k;
		sb_printf(&canon, "%s%s", canon.len ? " * " : "", k->name);
	}
	if (!t->nks) { sb_free(&canon); return fail(c, line, "key_source names no table"); }
	t->key_source_join = sb_steal(&canon);
	return 0;
}

/* a is t's parent, a parent's parent, ... (through ->; a part's master is
 * its parent). */
static int is_upstream(const table *t, const table *a)
{
	if (t->master == a) return 1;
	for (size_t i = 0; i < t->nfks; i++)
		if (t->fks[i].ptable == a || is_upstream(t->fks[i].ptable, a)) return 1;
	return t->master && is_upstream(t->master, a);
}

static int directive(const char *s, const char *word)
{
	size_t n = strlen(word);
	if (strncmp(s, word, n)) return 0;
	const char *p = s + n;
	while (*p == ' ' || *p == '\t') p++;
	return *p == '=';
}

/* 1 if the line (of a table's text, header included) says how the rows
 * are made: `make =`, `make_serve =`, `timeout =` (parse_block's test). */
static int how_line(const char *line, size_t n)
{
	if (!n || (*line != ' ' && *line != '\t')) return 0;   /* the header */
	char *s = xstrndup(line, n), *p = trim(s);
	int how = directive(p, "make") || directive(p, "make_serve") || (directive(p, "timeout") && !strchr(p, ':'));
	free(s);
	return how;
}

char *table_text_with_how(const table *old, const table *nt)
{
	sb_t how = SB_INIT, out = SB_INIT;
	sb_add(&how, "");
	for (const char *l = nt->text, *e; *l; l = *e ? e + 1 : e) {
		e = l + strcspn(l, "\n");
		if (how_line(l, (size_t)(e - l))) sb_printf(&how, "%.*s\n", (int)(e - l), l);
	}
	/* old's lines, its how lines replaced by nt's where the first was */
	int put = 0;
	size_t last = 0;   /* the end of old's last line with text */
	sb_add(&out, "");
	for (const char *l = old->text, *e; *l; l = *e ? e + 1 : e) {
		e = l + strcspn(l, "\n");
		if (how_line(l, (size_t)(e - l))) {
			if (!put++) sb_add(&out, sb_str(&how));
			last = out.len;
			continue;
		}
		sb_printf(&out, "%.*s\n", (int)(e - l), l);
		if (l + strspn(l, " \t\r") < e) last = out.len;
	}
	/* none before: after the last line with text; the blank lines after
	 * it go (a stored text read back has one more each time) */
	sb_t b = SB_INIT;
	sb_printf(&b, "%.*s%s", (int)last, sb_str(&out), put ? "" : sb_str(&how));
	sb_free(&out);
	sb_free(&how);
	return sb_steal(&b);
}

/* The command line of argv as one would write it ("none" without one). */
static void argv_text(sb_t *b, char *const *argv)
{
	if (!argv) { sb_add(b, "none"); return; }
	for (char *const *p = argv; *p; p++) {
		if (p != argv) sb_addc(b, ' ');
		if (**p && !strpbrk(*p, " \t'\"#\\")) { sb_add(b, *p); continue; }
		sb_addc(b, '"');
		for (const char *s = *p; *s; s++) {
			if (*s == '"' || *s == '\\') sb_addc(b, '\\');
			sb_addc(b, *s);
		}
		sb_addc(b, '"');
	}
}

static int same_argv(char *const *a, char *const *b)
{
	if (!a || !b) return a == b;
	for (; *a && *b; a++, b++)
		if (strcmp(*a, *b)) return 0;
	return !*a && !*b;
}

size_t table_how_changes(const table *old, const table *nt, char **v)
{
	size_t n = 0;
	sb_t b = SB_INIT;
	if (!same_argv(old->make_argv, nt->make_argv)) {
		sb_add(&b, "make: ");
		argv_text(&b, old->make_argv);
		sb_add(&b, " -> ");
		argv_text(&b, nt->make_argv);
		v[n++] = sb_steal(&b);
	}
	if (!same_argv(old->make_serve_argv, nt->make_serve_argv)) {
		sb_add(&b, "make_serve: ");
		argv_text(&b, old->make_serve_argv);
		sb_add(&b, " -> ");
		argv_text(&b, nt->make_serve_argv);
		v[n++] = sb_steal(&b);
	}
	if (old->timeout != nt->timeout) {
		char x[64], y[64];
		sb_printf(&b, "timeout: %s -> %s", old->timeout > 0 ? duration_text(old->timeout, x, sizeof x) : "none",
			  nt->timeout > 0 ? duration_text(nt->timeout, y, sizeof y) : "none");
		v[n++] = sb_steal(&b);
	}
	sb_free(&b);
	return n;
}

/* What parse_block has seen of a table's lines so far. */
typedef struct block_state {
	int in_key;        /* still above '---' */
	int seen_sep, seen_master, seen_meta, want_meta;
} block_state;

/* A '---' line: the primary key ends. */
static int block_sep(pctx *c, table *t, char *s, int line, block_state *st)
{
	char *p = s;
	while (*p == '-') p++;
	if (*trim(p) && *trim(p) != '#') return fail(c, line, "unexpected text after '---'");
	if (st->seen_sep) return fail(c, line, "second '---' in table %s (only one separates the primary key)", t->name);
	st->seen_sep = 1;
	st->in_key = 0;
	t->nkey = 0;
	return 0;
}

static void renames_free(renames *r)
{
	for (size_t i = 0; i < r->n; i++) { free(r->child[i]); free(r->parent[i]); }
	r->n = 0;
}

/* One `child='parent'` of a .proj(...) (trimmed) into r. */
static int proj_item(pctx *c, int line, char *it, renames *r)
{
	char *eq = strchr(it, '=');
	if (!eq) return fail(c, line, "expected child='parent' in .proj(...), got '%s'", it);
	*eq = 0;
	char *ch = trim(it), *pa = trim(eq + 1);
	size_t n = strlen(pa);
	if (n < 3 || (pa[0] != '\'' && pa[0] != '"') || pa[n - 1] != pa[0])
		return fail(c, line, "in .proj(%s=...), the parent attribute must be quoted: %s='parent'", ch, ch);
	if (r->n == sizeof r->child / sizeof *r->child) return fail(c, line, "too many renames in .proj(...)");
	pa[n - 1] = 0;
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->child[i], ch) || !strcmp(r->parent[i], pa + 1))
			return fail(c, line, ".proj(...) renames '%s' twice", !strcmp(r->child[i], ch) ? ch : pa + 1);
	r->child[r->n] = xstrdup(ch);
	r->parent[r->n++] = xstrdup(pa + 1);
	return 0;
}

/* A renamed reference, DataJoint's `Parent.proj(child='parent', ...)`:
 * pn cut to the parent's name, the renames into r. */
static int parse_proj(pctx *c, int line, char *pn, renames *r)
{
	char *pj = strstr(pn, ".proj(");
	r->n = 0;
	if (!pj) return 0;
	size_t n = strlen(pj);
	if (pj[n - 1] != ')') return fail(c, line, "expected ')' at the end of %s", pn);
	pj[n - 1] = 0;
	*pj = 0;
	char *save = NULL;
	for (char *it = strtok_r(pj + 6, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
		if (!*trim(it)) continue;
		if (proj_item(c, line, trim(it), r)) { renames_free(r); return DJC_EINVAL; }
	}
	return 0;
}

/* A '-> Parent' line. */
static int block_ref(pctx *c, table *t, char *s, int line, block_state *st)
{
	cut_comment(s);
	char *pn = trim(s + 2);
	renames r;
	/* DataJoint's nullable reference: an adopted table's only (adopt writes
	 * it for its lineage; djc's own references are not nullable) */
	int nullable = !strncmp(pn, "[nullable]", 10);
	if (nullable && (!t->adopted || st->in_key))
		return fail(c, line, "nullable references are not supported; reference the parent below '---' without [nullable]");
	if (nullable) pn = trim(pn + 10);
	if (parse_proj(c, line, pn, &r)) return DJC_EINVAL;
	pn = trim(pn);
	if (nullable) {
		int rc = add_nullable(c, line, t, pn, &r);
		renames_free(&r);
		return rc ? DJC_EINVAL : 0;
	}
	if (r.n) {
		int rc = add_parent(c, line, t, pn, st->in_key, &r);
		renames_free(&r);
		return rc ? DJC_EINVAL : 0;
	}
	if (!strncmp(pn, "[nullable]", 10)) return fail(c, line, "nullable references are not supported; reference the parent below '---' without [nullable]");
	/* a part table always has its master's key (added above);
	 * DataJoint spells that `-> master`, which is accepted once,
	 * in the key, as is the master's own name */
	if (t->tier == TIER_PART && (!strcmp(pn, "master") || !strcmp(pn, t->master->name))) {
		if (!st->in_key) return fail(c, line, "'-> %s' in part table %s belongs above '---' (the master's key is the part's key)", pn, t->name);
		if (st->seen_master++) return fail(c, line, "part table %s refers to its master twice", t->name);
		return 0;
	}
	return add_parent(c, line, t, pn, st->in_key, NULL) ? DJC_EINVAL : 0;
}

/* A 'make =' or 'make_serve =' line. */
static int block_make(pctx *c, table *t, char *s, int line)
{
	int serve = directive(s, "make_serve");
	const char *what = serve ? "make_serve" : "make";
	if (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED)
		return fail(c, line, "'%s =' belongs to computed and imported tables, not %s ones", what, tier_name(t->tier));
	if (t->make_argv || t->make_serve_argv)
		return fail(c, line, "second make line ('%s =') in table %s: a table has one 'make =' or one 'make_serve ='",
			    what, t->name);
	return split_argv(c, line, what, strchr(s, '=') + 1, serve ? &t->make_serve_argv : &t->make_argv) ? DJC_EINVAL : 0;
}

/* A 'timeout = 2h' line. */
static int block_timeout(pctx *c, table *t, char *s, int line)
{
	if (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED)
		return fail(c, line, "'timeout =' belongs to computed and imported tables, not %s ones", tier_name(t->tier));
	if (t->timeout > 0) return fail(c, line, "second 'timeout =' line in table %s", t->name);
	char *v = strchr(s, '=') + 1;
	cut_comment(v);
	v = trim(v);
	if (duration_parse(v, &t->timeout) || t->timeout <= 0)
		return fail(c, line, "timeout must be a duration greater than 0 such as 90, 30s, 15m, 2h or 1h30m, got '%s'", v);
	return 0;
}

/* A 'job_metadata = true|false' line. */
static int block_meta(pctx *c, table *t, char *s, int line, block_state *st)
{
	if (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED)
		return fail(c, line, "'job_metadata =' belongs to computed and imported tables");
	cut_comment(s);
	const char *v = trim(strchr(s, '=') + 1);
	if (strcmp(v, "true") && strcmp(v, "false"))
		return fail(c, line, "job_metadata must be true or false, got '%s'", v);
	if (st->seen_meta++) return fail(c, line, "second 'job_metadata =' line in table %s", t->name);
	st->want_meta = !strcmp(v, "true");
	return 0;
}

/* Condition text wholly in quotes, as DataJoint writes it and as `djc
 * fetch` takes it (`Session & 'rig = "r1"'`): the text inside
 * (quoted_text). Anything else (unquoted text, `"r1" = rig and ...`,
 * whose first quote closes before the end) is the condition as written. */
static char *unquote_cond(const char *s)
{
	if (s[0] != '\'' && s[0] != '"') return xstrdup(s);
	sb_t b = SB_INIT;
	size_t e = quoted_text(s, (size_t)-1, &b);
	if (!e || s[e + 1]) { sb_free(&b); return xstrdup(s); }
	return sb_steal(&b);
}

/* A 'key_source = ...' line: a JSON restriction, or a join of upstream
 * tables (A * B) optionally restricted (& {...}, or condition text, bare
 * or in quotes). */
static int block_key_source(pctx *c, table *t, char *s, int line)
{
	if (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED)
		return fail(c, line, "'key_source =' belongs to computed and imported tables");
	if (t->key_source_where || t->key_source_join) return fail(c, line, "second 'key_source =' line in table %s", t->name);
	t->ks_line = line;
	char *js = trim(strchr(s, '=') + 1);
	if (*js != '{' && *js != '[') {
		/* A * B ... [& restriction]: the tables now, the rest below */
		char *amp = strchr(js, '&');
		if (amp) *amp = 0;
		if (parse_ks_join(c, line, t, js)) return DJC_EINVAL;
		if (!amp) return 0;
		js = trim(amp + 1);
		if (!*js || *js == '#')
			return fail(c, line, "key_source has '&' but no restriction after it (a JSON object, e.g. {\"a\": 1})");
		if (*js != '{' && *js != '[') {
			/* a condition (table/cond.h; checked where the key source is read), up to a # outside quotes */
			char q = 0, *e = js;
			for (; *e && (q || *e != '#'); e++)
				if (q && *e == '\\' && e[1]) e++;
				else if (q ? *e == q : *e == '"' || *e == '\'') q = q ? 0 : *e;
			*e = 0;
			js = trim(js);
			t->key_source_where = unquote_cond(js);
			return 0;
		}
	}
	json_error_t je;
	/* a list's condition text in single quotes, as DataJoint writes it
	 * ([{"rig": "r1"}, 'rig is null']): as JSON strings */
	char *dq = NULL;
	if (*js == '[' && strchr(js, '\'')) {
		sb_t b = SB_INIT;
		char open;
		json_single_quotes(&b, js, 0, &open);
		js = dq = sb_steal(&b);
	}
	/* the JSON value, then nothing or a # comment */
	json_t *j = json_loads(js, JSON_DISABLE_EOF_CHECK, &je);
	const char *rest = j ? js + je.position : js;
	while (j && (*rest == ' ' || *rest == '\t')) rest++;
	if (!j || !(json_is_object(j) || json_is_array(j)) || (*rest && *rest != '#')) {
		json_decref(j);
		free(dq);
		return fail(c, line, "key_source must be a JSON restriction object, e.g. {\"session_id\": [1, 2]}");
	}
	json_decref(j);
	t->key_source_where = xstrndup(js, je.position);
	free(dq);
	return 0;
}

/* One non-blank line of a table's block (s trimmed). */
static int block_line(pctx *c, table *t, char *s, int line, block_state *st)
{
	if (s[0] == '-' && s[1] == '-' && s[2] == '-') return block_sep(c, t, s, line, st);
	if (s[0] == '-' && s[1] == '>') return block_ref(c, t, s, line, st);
	if (!strncmp(s, "unique index", 12) && (s[12] == '(' || s[12] == ' ')) {
		cut_comment(s);
		return parse_index(c, line, t, s + 12, 1) ? DJC_EINVAL : 0;
	}
	if (!strncmp(s, "index", 5) && (s[5] == '(' || s[5] == ' ')) {
		cut_comment(s);
		return parse_index(c, line, t, s + 5, 0) ? DJC_EINVAL : 0;
	}
	if (directive(s, "make") || directive(s, "make_serve")) return block_make(c, t, s, line);
	/* `timeout = 2h`; an attribute called timeout with a default has a
	 * type after ':' (a duration never holds one) */
	if (directive(s, "timeout") && !strchr(s, ':')) return block_timeout(c, t, s, line);
	if (directive(s, "job_metadata")) return block_meta(c, t, s, line, st);
	if (adopted_line(s)) return 0;   /* read before the header (block_adopted) */
	if (directive(s, "key_source")) return block_key_source(c, t, s, line);
	if (parse_attr_line(c, line, t, s, st->in_key)) return DJC_EINVAL;
	if (st->in_key) t->nkey = t->nattrs;
	return 0;
}

/* Primary key attributes first (a stable partition); the indexes name
 * attributes of the table. */
static int block_key_first(pctx *c, table *t)
{
	attr *sorted = xcalloc(t->nattrs, sizeof(attr));
	size_t k = 0;
	for (size_t i = 0; i < t->nattrs; i++) if (t->attrs[i].in_key) sorted[k++] = t->attrs[i];
	t->nkey = k;
	for (size_t i = 0; i < t->nattrs; i++) if (!t->attrs[i].in_key) sorted[k++] = t->attrs[i];
	free(t->attrs);
	t->attrs = sorted;
	t->attrs_cap = t->nattrs;
	if (!t->nkey) return fail(c, t->line, "table %s has no primary key attributes above '---'", t->name);
	for (size_t i = 0; i < t->nidx; i++)
		for (size_t j = 0; j < t->idx[i].nattrs; j++)
			if (!table_attr(t, t->idx[i].attrs[j]))
				return fail(c, t->line, "index names unknown attribute '%s'", t->idx[i].attrs[j]);
	return 0;
}

/* With key_source = A * B: the target's attributes from its parents (in
 * the key or below '---') that the join gives (t->src), which must include
 * every key attribute that comes from a parent. */
static int block_ks_join_src(pctx *c, table *t)
{
	for (size_t q = 0; q < t->nks; q++) {
		const table *u = t->ks_tables[q];
		if (!is_upstream(t, u))
			return fail(c, t->line, "key_source of %s joins %s, which is not upstream of it (a parent through ->, "
				    "or a parent's parent)", t->name, u->name);
	}
	for (size_t i = 0; i < t->nattrs; i++) {
		const attr *a = &t->attrs[i];
		int has = 0;
		for (size_t q = 0; q < t->nks && !has; q++) has = table_attr(t->ks_tables[q], a->name) != NULL;
		if (has && a->from_parent) t->src[t->nsrc++] = i;
		else if (a->in_key && a->from_parent) {
			sb_t all = SB_INIT;
			for (size_t q = 0; q < t->nks; q++) sb_printf(&all, "%s%s", q ? " * " : "", t->ks_tables[q]->name);
			int r = fail(c, t->line, "key_source of %s does not give its primary key attribute '%s' (%s lacks it); "
				    "join the parent that has it", t->name, a->name, sb_str(&all));
			sb_free(&all);
			return r;
		}
	}
	if (!t->nsrc)
		return fail(c, t->line, "key_source of %s gives none of its attributes from a parent (%s): join a parent of %s",
			    t->name, t->key_source_join, t->name);
	return 0;
}

/* The key source's attributes (t->src): key attributes inherited from
 * parents in the key, or those a key_source join gives. */
static int block_key_source_attrs(pctx *c, table *t)
{
	t->src = xcalloc(t->nattrs ? t->nattrs : 1, sizeof(size_t));
	if (t->nks) {
		if (block_ks_join_src(c, t)) return DJC_EINVAL;
	} else
		for (size_t i = 0; i < t->nkey; i++)
			if (t->attrs[i].from_parent) t->src[t->nsrc++] = i;
	if ((t->tier == TIER_COMPUTED || t->tier == TIER_IMPORTED) && !t->nsrc)
		return fail(c, t->line, "%s table %s needs a parent in its primary key ('-> Parent' above '---') to define its keys, "
			    "or a key_source (e.g. key_source = Parent for a parent below '---')",
			    tier_name(t->tier), t->name);
	return 0;
}

/* A key_source restriction's shape: an object, or a list of objects
 * and condition texts (README, "Restrictions": [{"a": 1}, "b > 2"]).
 * Its names may be any attribute of the key source's tables (or their
 * ancestors): the table layer checks them where it has the joined
 * heading (keysource_check, at declare and alter). */
static int block_ks_where(pctx *c, table *t)
{
	json_t *j = json_loads(t->key_source_where, 0, NULL);
	json_t *objs = json_is_array(j) ? j : NULL;
	size_t cnt = objs ? json_array_size(objs) : 1;
	for (size_t i = 0; i < cnt; i++) {
		json_t *o = objs ? json_array_get(objs, i) : j;
		if (!json_is_object(o) && !(objs && json_is_string(o))) {
			json_decref(j);
			return fail(c, t->ks_line, "key_source list items must be objects or condition text");
		}
	}
	json_decref(j);
	return 0;
}

/* The lines of table t's block (after its header): its attributes,
 * references, indexes and directives, then what the whole block must
 * satisfy (a primary key, a key source, ...). */
static int parse_block(pctx *c, table *t, char **lines, int *lineno, size_t n)
{
	block_state st = {.in_key = 1};
	if (t->tier == TIER_PART && add_parent(c, t->line, t, t->master->name, 1, NULL)) return DJC_EINVAL;
	for (size_t i = 0; i < n; i++) {
		char *s = trim(lines[i]);
		if (!*s || *s == '#') continue;
		if (block_line(c, t, s, lineno[i], &st)) return DJC_EINVAL;
	}
	if (!st.seen_sep)
		return fail(c, t->line, "table %s has no '---' line separating the primary key from other attributes "
			    "(write '---' after the key, even if nothing follows)", t->name);
	if (block_key_first(c, t) || block_key_source_attrs(c, t)) return DJC_EINVAL;
	if (t->key_source_where && t->nsrc && (*t->key_source_where == '{' || *t->key_source_where == '[') &&
	    block_ks_where(c, t))
		return DJC_EINVAL;
	/* after the canonical form: the hidden columns are not part of the
	 * definition a declare compares */
	build_canon(t);
	if (st.want_meta) add_job_meta_attrs(t);
	return 0;
}

/* No shortened SQL name of t (names.c) is one of another table's: the
 * hash of two long names may, however rarely, be the same. */
static int names_distinct(pctx *c, const table *t)
{
	char buf[128];
	for (int pass = 0; pass < 2; pass++) {
		const pipeline *pp = pass ? c->prev : c->cur;
		for (size_t k = 0; pp && k < pp->n; k++) {
			const table *o = pp->tables[k];
			if (o == t || !strcmp(o->name, t->name)) continue;
			if (table_names_clash(t, o, buf, sizeof buf))
				return fail(c, t->line, "table %s: the SQL name '%s' that djc derives from its name (shortened to fit "
					    "%d characters) is also one of table %s's; rename one of the two tables", t->name, buf,
					    SQL_DERIVED_MAX, o->name);
		}
	}
	return 0;
}

/* The line of the first byte of text that is not valid UTF-8. */
static int bad_utf8_line(const char *text, size_t tlen)
{
	int line = 1;
	for (size_t i = 0; i < tlen; i++) {
		size_t end = i;
		while (end < tlen && text[end] != '\n') end++;
		if (!utf8_valid(text + i, end - i)) break;
		line++;
		i = end;
	}
	return line;
}

/* buf cut into its lines (in place: each '\n' becomes a NUL); *nl of them.
 * Caller frees the array. */
static char **split_lines(char *buf, size_t *nl)
{
	char **lines = NULL;
	size_t n = 0, cap = 0;
	for (char *p = buf, *e; p; p = e ? e + 1 : NULL) {
		e = strchr(p, '\n');
		if (e) *e = 0;
		lines = xgrow(lines, &cap, n + 1, sizeof(char *));
		lines[n++] = p;
		if (!e) break;
	}
	*nl = n;
	return lines;
}

/* The tier named in a header, or -1. */
static int tier_of(const char *s)
{
	static const struct { const char *name; tier t; } tiers[] = {
		{"manual", TIER_MANUAL}, {"lookup", TIER_LOOKUP}, {"imported", TIER_IMPORTED},
		{"computed", TIER_COMPUTED}, {"part", TIER_PART},
	};
	for (size_t i = 0; i < sizeof tiers / sizeof *tiers; i++)
		if (!strcmp(s, tiers[i].name)) return (int)tiers[i].t;
	return -1;
}

/* The name of a header (a part's Master.Part): valid, new in this text,
 * and for a part its master declared above; *mst that master. An adopted
 * table (adopted: its schema, else NULL) may be named schema.Class or
 * schema.Master.Part (a table of another DataJoint schema, docs/adopt.md):
 * a first segment equal to its own schema is the schema. */
static int header_name(pctx *c, int line, char *full, tier tr, const char *adopted, table **mst)
{
	size_t ns = adopted ? strlen(adopted) : 0;
	char *name = adopted && !strncmp(full, adopted, ns) && full[ns] == '.' ? full + ns + 1 : full;
	char *dot = strchr(name, '.');
	*mst = NULL;
	if (tr == TIER_PART) {
		if (!dot) return fail(c, line, "a part table is named Master.Part, got '%s'", full);
		*dot = 0;
		if (!valid_table_name(name) || !valid_table_name(dot + 1)) {
			*dot = '.';
			return fail(c, line, "invalid table name '%s' (letters and digits, starting with a letter)", full);
		}
		*mst = resolve(c, full);
		*dot = '.';
		if (!*mst || (*mst)->tier == TIER_PART) {
			int r = (int)(dot - full);
			return fail(c, line, "part table %s needs its master %.*s declared above it", full, r, full);
		}
		if (adopted && !(*mst)->adopted)
			return fail(c, line, "part table %s is adopted but its master %s is not", full, (*mst)->name);
	} else if (dot || !valid_table_name(name))
		return fail(c, line, "invalid table name '%s' (letters and digits, starting with a letter)", full);
	if (resolve(c, full) && pipeline_find(c->cur, full)) return fail(c, line, "table %s is declared twice in this file", full);
	return 0;
}

/* One name of `adopted = schema.name`: `quoted` (`` doubled inside), "quoted"
 * or bare (up to '.', a blank or the end); *p moves past it. */
static char *adopted_part(const char **p)
{
	sb_t b = SB_INIT;
	sb_add(&b, "");
	const char *s = *p;
	if (*s == '`' || *s == '"') {
		char q = *s++;
		for (; *s; s++) {
			if (*s == q && s[1] == q) { sb_addc(&b, q); s++; continue; }
			if (*s == q) { s++; break; }
			sb_addc(&b, *s);
		}
	} else
		while (*s && *s != '.' && *s != ' ' && *s != '\t') sb_addc(&b, *s++);
	*p = s;
	return sb_steal(&b);
}

/* The value of an `adopted = schema.sql_name  # comment` line. */
static int parse_adopted(pctx *c, int line, const char *v, char **schema, char **name)
{
	const char *p = v + strspn(v, " \t");
	*schema = adopted_part(&p);
	*name = NULL;
	if (*p == '.') {
		p++;
		*name = adopted_part(&p);
	}
	p += strspn(p, " \t");
	const char *bad = !**schema || !*name || !**name ? "expected adopted = schema.table (quote names with `...`)"
			  : *p && *p != '#' ? "unexpected text after the table's name"
			  : strchr(*schema, '\x1f') || strchr(*name, '\x1f') || strchr(*name, '.') ? "a name holds a character djc does not allow"
			  : strlen(*name) > SQL_NAME_MAX ? "the table's name is longer than 64 characters" : NULL;
	if (!bad) return 0;
	free(*schema); free(*name);
	*schema = *name = NULL;
	return fail(c, line, "%s", bad);
}

/* A block line `adopted = ...` (trimmed): the directive, not an attribute
 * called adopted (which has a ':' before any comment). */
static int adopted_line(const char *s)
{
	if (!directive(s, "adopted")) return 0;
	char q = 0;
	for (const char *p = strchr(s, '=') + 1; *p; p++) {
		if (q) { if (*p == q) q = 0; continue; }
		if (*p == '`' || *p == '"' || *p == '\'') q = *p;
		else if (*p == '#' && (p[-1] == ' ' || p[-1] == '\t')) return 1;
		else if (*p == ':') return 0;
	}
	return 1;
}

/* A header line 'Name (tier)' (trimmed) into a new table, *out. */
static int parse_header(pctx *c, int line, const char *text, const char *adopted, table **out)
{
	*out = NULL;
	char *hdr = xstrdup(text);
	cut_comment(hdr);
	char *h = trim(hdr);
	char *lp = strchr(h, '(');
	char *rp = strrchr(h, ')');
	int rc = 0, tr = -1;
	table *mst = NULL;
	if (!lp || !rp || rp < lp || *trim(rp + 1))
		rc = fail(c, line, "expected a table header 'Name (tier)', got '%s'", h);
	else {
		*lp = 0;
		*rp = 0;
		if ((tr = tier_of(trim(lp + 1))) < 0)
			rc = fail(c, line, "unknown tier '%s' (expected manual, lookup, imported, computed or part)", trim(lp + 1));
		else
			rc = header_name(c, line, trim(h), (tier)tr, adopted, &mst);
	}
	if (!rc) {
		table *t = xcalloc(1, sizeof(table));
		t->name = xstrdup(trim(h));
		t->tier = (tier)tr;
		t->line = line;
		t->master = mst;
		*out = t;
	}
	free(hdr);
	return rc;
}

/* 1 when a and b, both with jobs tables, have one natural jobs name
 * (~~stats: e7_a.__stats and e7_b.__stats). */
static int same_jobs_stem(const table *a, const table *b)
{
	if (!a->jobs_name || !b->jobs_name) return 0;
	const char *x = a->sql_name, *y = b->sql_name;
	while (*x == '_') x++;
	while (*y == '_') y++;
	return !strcmp(x, y);
}

/* 1 when t is an adopted table of another schema than the first adopted
 * (its name schema.Class). */
static int schema_qualified(const table *t)
{
	return t->adopted && strchr(t->name, '.');
}

/* t and o would have one jobs table (docs/adopt.md): the one of them of
 * another schema (schema.Class) gets ~~schema__name; the first adopted
 * schema's and djc's own keep ~~name. A table declared before (stored)
 * keeps its jobs table: that its name would change is refused. */
static int jobs_apart(pctx *c, int line, table *t, table *o, int stored)
{
	int tq = schema_qualified(t), oq = schema_qualified(o);
	if (!tq && !oq)
		return fail(c, line, "table %s has the same SQL name '%s' as table %s", t->name, t->jobs_name, o->name);
	if (oq && !o->jobs_qual) {
		if (stored)
			return fail(c, line, "table %s would take the jobs table '%s' of table %s, adopted before, which "
				    "cannot be renamed without losing its jobs (docs/adopt.md: adopt the schemas in one call)",
				    t->name, o->jobs_name, o->name);
		table_jobs_qualify(o);
	}
	if (tq && !t->jobs_qual) table_jobs_qualify(t);
	return 0;
}

/* t's SQL name (DataJoint's: a tier prefix, the name in snake case; a
 * part's after its master's and "__") and its jobs table's; neither may be
 * too long nor another table's (names differing only in case, "Session"
 * and "session", map to one SQL table). */
static int table_sql_names(pctx *c, int line, table *t)
{
	sb_t sq = SB_INIT;
	tier tr = t->tier;
	if (t->sql_name) sb_add(&sq, t->sql_name);   /* adopted: DataJoint's */
	else if (tr == TIER_PART) {
		sb_add(&sq, t->master->sql_name);
		sb_add(&sq, "__");
		snake(&sq, strchr(t->name, '.') + 1);
	} else {
		sb_add(&sq, tr == TIER_LOOKUP ? "#" : tr == TIER_IMPORTED ? "_" : tr == TIER_COMPUTED ? "__" : "");
		snake(&sq, t->name);
	}
	free(t->sql_name);
	t->sql_name = sb_steal(&sq);
	if (strlen(t->sql_name) > SQL_NAME_MAX)
		return fail(c, line, "table name %s is too long: its SQL name '%s' has %zu characters, more than the %d "
			    "DataJoint allows", t->name, t->sql_name, strlen(t->sql_name), SQL_NAME_MAX);
	/* the jobs table and the rest: shortened when too long (names.c) */
	if (tr == TIER_COMPUTED || tr == TIER_IMPORTED) table_jobs_names(t);
	for (int pass = 0; pass < 2; pass++) {
		const pipeline *pp = pass ? c->prev : c->cur;
		for (size_t k = 0; pp && k < pp->n; k++) {
			const table *o = pp->tables[k];
			if (!strcmp(o->name, t->name)) continue;
			int same_schema = !o->schema == !t->schema && (!t->schema || !strcmp(o->schema, t->schema));
			if (same_schema && !strcmp(o->sql_name, t->sql_name) && t->adopted && o->adopted)
				return fail(c, line, "table %s is DataJoint's %s.%s, adopted before as %s (its schema named first "
					    "then): adopt schemas that reference each other in one call, naming every schema "
					    "(docs/adopt.md)", t->name, t->adopted, t->sql_name, o->name);
			if (same_schema && !strcmp(o->sql_name, t->sql_name))
				return fail(c, line, "table %s has the same SQL name '%s' as table %s", t->name, t->sql_name,
					    o->name);
			if (same_jobs_stem(o, t)) {
				if (jobs_apart(c, line, t, (table *)o, pass)) return DJC_EINVAL;
			} else if (o->jobs_name && t->jobs_name && !strcmp(o->jobs_name, t->jobs_name))
				return fail(c, line, "table %s has the same SQL name '%s' as table %s", t->name, t->jobs_name,
					    o->name);   /* two long names shortened alike */
		}
	}
	return 0;
}

/* The text's lines, as cut for parsing and as written (for a table's
 * stored text). */
typedef struct text_lines {
	char **lines, **orig;
	size_t n;
} text_lines;

/* The `adopted =` line of the block of lines [start+1, end) of tl, if
 * any: its schema and SQL name (caller frees). */
static int block_adopted(pctx *c, const text_lines *tl, size_t start, size_t end, char **schema, char **name)
{
	int seen = 0;
	for (size_t k = start + 1; k < end; k++) {
		char *s = xstrdup(tl->lines[k]), *p = trim(s);
		int rc = 0;
		if (adopted_line(p)) {
			if (seen++) rc = fail(c, (int)k + 1, "second 'adopted =' line in one table");
			else rc = parse_adopted(c, (int)k + 1, strchr(p, '=') + 1, schema, name);
		}
		free(s);
		if (rc) { free(*schema); free(*name); *schema = *name = NULL; return rc; }
	}
	return 0;
}

/* The table whose header is line *i of tl, with its block (the lines up to
 * the next unindented one); *i moves past them. */
static int parse_table(pctx *c, const text_lines *tl, size_t *i)
{
	size_t start = *i;
	int line = (int)start + 1;
	table *t;
	size_t end = start + 1;
	for (; end < tl->n; end++) {
		char *l = tl->lines[end];
		if (l[0] != ' ' && l[0] != '\t') {
			char *tt = trim(l);
			if (*tt && *tt != '#') break;
		}
	}
	*i = end;
	char *asch = NULL, *aname = NULL;
	if (block_adopted(c, tl, start, end, &asch, &aname)) return DJC_EINVAL;
	if (parse_header(c, line, trim(tl->lines[start]), asch, &t)) {
		free(asch); free(aname);
		return DJC_EINVAL;
	}
	if (asch) {
		t->adopted = asch;
		t->schema = xstrdup(asch);
		t->sql_name = aname;
		t->sqlref = xasprintf("%s\x1f%s", asch, aname);
	}
	if (table_sql_names(c, line, t)) {
		free_table(t);
		return DJC_EINVAL;
	}
	sb_t tb = SB_INIT;
	for (size_t k = start; k < end; k++) { sb_add(&tb, tl->orig[k]); sb_addc(&tb, '\n'); }
	t->text = sb_steal(&tb);
	c->cur->tables = xrealloc(c->cur->tables, (c->cur->n + 1) * sizeof(table *));
	c->cur->tables[c->cur->n++] = t;
	size_t nb = end - start - 1;
	int *nums = xcalloc(nb ? nb : 1, sizeof(int));
	for (size_t k = 0; k < nb; k++) nums[k] = (int)(start + 2 + k);
	int rc = parse_block(c, t, tl->lines + start + 1, nums, nb);
	free(nums);
	return rc ? rc : names_distinct(c, t);
}

int pipeline_parse(pipeline **out, const char *text, const char *filename, const pipeline *prev, char **msg)
{
	*out = NULL;
	*msg = NULL;
	pctx c = {filename ? filename : "<pipeline>", NULL, prev, xcalloc(1, sizeof(pipeline))};
	size_t tlen = strlen(text);
	if (!utf8_valid(text, tlen)) {
		fail(&c, bad_utf8_line(text, tlen), "not valid UTF-8 text");
		pipeline_free(c.cur);
		*msg = c.msg;
		return DJC_EINVAL;
	}
	char *buf = xstrdup(text), *orig = xstrdup(text);
	text_lines tl;
	size_t no;
	tl.lines = split_lines(buf, &tl.n);
	tl.orig = split_lines(orig, &no);   /* keep the lines as written for the stored text */
	int rc = 0;
	size_t i = 0;
	while (i < tl.n && !rc) {
		char *s = tl.lines[i];
		char *t0 = trim(s);
		if (!*t0 || *t0 == '#') { i++; continue; }
		if (s[0] == ' ' || s[0] == '\t')
			rc = fail(&c, (int)i + 1, "indented line outside any table (a table starts with an unindented 'Name (tier)' line)");
		else
			rc = parse_table(&c, &tl, &i);
	}
	free(tl.lines); free(tl.orig); free(buf); free(orig);
	if (rc) {
		pipeline_free(c.cur);
		*msg = c.msg;
		return rc;
	}
	*out = c.cur;
	return DJC_OK;
}
