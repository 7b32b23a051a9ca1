/* algebra.c - expressions of DataJoint's query algebra: building them
 * (headings, DataJoint's compatibility checks) and compiling them to one
 * query of sql/query.h (algebra.h). */
#include "algebra.h"
#include "util/near.h"
#include "cond.h"
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- headings */

static djc_expr *expr_new(alg_kind k, size_t nattrs)
{
	djc_expr *e = xcalloc(1, sizeof *e);
	e->refs = 1;
	e->k = k;
	e->h.attrs = xcalloc(nattrs ? nattrs : 1, sizeof(attr));
	e->x = xcalloc(nattrs ? nattrs : 1, sizeof(alg_attr));
	return e;
}

static djc_expr *expr_ref(djc_expr *e) { e->refs++; return e; }

void djc_expr_free(djc_expr *e)
{
	if (!e || --e->refs > 0) return;
	for (size_t i = 0; i < e->h.nattrs; i++) {
		free(e->h.attrs[i].name);
		free(e->x[i].src);
		free(e->x[i].lineage);
	}
	free(e->h.attrs);
	free(e->x);
	free(e->text);
	free(e->repr);
	djc_expr_free(e->l);
	djc_expr_free(e->r);
	free(e);
}

const char *djc_expr_text(const djc_expr *e) { return e ? e->repr : NULL; }

/* Append attribute a (its type and comment; named name) to e's heading. */
static alg_attr *hd_add(djc_expr *e, const attr *a, const char *name, int in_key, const char *lineage)
{
	size_t i = e->h.nattrs++;
	e->h.attrs[i] = *a;
	e->h.attrs[i].name = xstrdup(name);
	e->h.attrs[i].in_key = in_key;
	if (in_key) e->h.nkey++;
	e->x[i].lineage = lineage ? xstrdup(lineage) : NULL;
	return &e->x[i];
}

/* Append attribute i of expression f, as it is. */
static void hd_copy(djc_expr *e, const djc_expr *f, size_t i, int in_key)
{
	hd_add(e, &f->h.attrs[i], f->h.attrs[i].name, in_key, f->x[i].lineage);
}

static void set_repr(djc_expr *e, const char *fmt, const char *a, const char *b)
{
	e->repr = xasprintf(fmt, a, b ? b : "");
	e->h.name = e->repr;
}

int alg_find(const djc_expr *e, const char *name)
{
	for (size_t i = 0; i < e->h.nattrs; i++)
		if (!strcmp(e->h.attrs[i].name, name)) return (int)i;
	return -1;
}

int alg_unknown(djc_conn *c, const djc_expr *e, const char *what, const char *name)
{
	size_t n = e->h.nattrs;
	const char **names = xcalloc(n + 1, sizeof(char *));
	sb_t all = SB_INIT, q = SB_INIT;
	for (size_t i = 0; i < n; i++) {
		names[i] = e->h.attrs[i].name;
		sb_printf(&all, "%s%s", i ? ", " : "", names[i]);
	}
	const char *near = near_name(name, names, n);
	json_quote(&q, name, strlen(name));
	int rc = conn_fail(c, DJC_EINVAL, "%s names %s, which is not an attribute of %s (%s%s%sits attributes: %s)", what,
			   sb_str(&q), e->repr, near ? "did you mean " : "", near ? near : "", near ? "? " : "", sb_str(&all));
	free(names);
	sb_free(&all);
	sb_free(&q);
	return rc;
}

/* The parent whose attribute *name of a child (one of fks[0..n)) refers
 * to, *name then the parent's name of it; NULL when none does. */
static const table *ref_up(const fkey *fks, size_t n, const char **name)
{
	for (size_t f = 0; f < n; f++)
		for (size_t k = 0; k < fks[f].nattrs; k++) {
			const char *child = fks[f].cattrs ? fks[f].cattrs[k] : fks[f].attrs[k];
			if (strcmp(child, *name)) continue;
			if (!fks[f].ptable) return NULL;
			*name = fks[f].attrs[k];   /* the parent's name of it */
			return fks[f].ptable;
		}
	return NULL;
}

/* The lineage of attribute name of t: the table attribute it comes from
 * through -> references ("Table.attr"), for a primary key attribute or an
 * inherited one (primary or secondary, nullable too); NULL for another
 * secondary attribute. A renamed reference (-> P.proj(child='parent'))
 * is followed by the parent's name: child has the lineage of P's parent,
 * as DataJoint's declare gives it (the ~lineage row of child is P.parent's;
 * table.py _populate_lineage, declare.py compile_foreign_key's
 * fk_attribute_map). Caller frees. */
static char *lineage_of(const table *t, const char *name)
{
	for (int depth = 0; t && depth < 64; depth++) {
		/* an adopted table's nullable references count too (DataJoint's
		 * ~lineage gives their attributes the parent's) */
		const table *up = ref_up(t->fks, t->nfks, &name);
		if (!up) up = ref_up(t->nullrefs, t->nnullrefs, &name);
		if (!up) {
			const attr *a = table_attr(t, name);
			return a && a->in_key ? xasprintf("%s.%s", t->name, name) : NULL;
		}
		t = up;
	}
	return NULL;
}

int djc_expr_table(djc_expr **out, djc_conn *c, const char *name)
{
	*out = NULL;
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	djc_expr *e = expr_new(A_TABLE, t->nattrs);
	e->t = t;
	set_repr(e, "%s%s", t->name, NULL);
	for (size_t i = 0; i < t->nattrs; i++) {
		char *lin = lineage_of(t, t->attrs[i].name);
		hd_add(e, &t->attrs[i], t->attrs[i].name, t->attrs[i].in_key, lin);
		free(lin);
	}
	*out = e;
	return DJC_OK;
}

/* DataJoint's join compatibility: every attribute a and b share must have
 * the same lineage on both sides (a secondary attribute that is not
 * inherited has none: such a namesake is a coincidence, not a link). */
static int compatible(djc_conn *c, const djc_expr *a, const djc_expr *b, const char *op)
{
	for (size_t i = 0; i < a->h.nattrs; i++) {
		int j = alg_find(b, a->h.attrs[i].name);
		if (j < 0) continue;
		const char *la = a->x[i].lineage, *lb = b->x[j].lineage;
		if (la && lb && !strcmp(la, lb)) continue;
		const char *n = a->h.attrs[i].name;
		if (!la || !lb)
			return conn_fail(c, DJC_EINVAL, "cannot %s %s and %s on attribute '%s': it is not a key attribute or "
					 "one inherited through -> in %s (namesakes are not a link; rename one with .proj(new=%s))",
					 op, a->repr, b->repr, n, !la ? a->repr : b->repr, n);
		return conn_fail(c, DJC_EINVAL, "cannot %s %s and %s on attribute '%s': it comes from %s in one and from %s in "
				 "the other (rename one with .proj(new=%s))", op, a->repr, b->repr, n, la, lb, n);
	}
	return DJC_OK;
}

/* 1 when every primary key attribute of b is an attribute of a. */
static int determines(const djc_expr *a, const djc_expr *b)
{
	for (size_t j = 0; j < b->h.nattrs; j++)
		if (b->h.attrs[j].in_key && alg_find(a, b->h.attrs[j].name) < 0) return 0;
	return 1;
}

/* The heading of a * b, as DataJoint orders it: when a determines b, a's
 * key and a's attributes then b's others; when b determines a, the same
 * from b; else a's key, b's key, a's others, b's others. */
static void join_heading(djc_expr *e, const djc_expr *a, const djc_expr *b)
{
	int ab = determines(a, b), ba = !ab && determines(b, a);
	const djc_expr *p = ba ? b : a, *q = ba ? a : b;
	if (ab || ba) {
		for (size_t i = 0; i < p->h.nattrs; i++) hd_copy(e, p, i, p->h.attrs[i].in_key);
		for (size_t j = 0; j < q->h.nattrs; j++)
			if (alg_find(p, q->h.attrs[j].name) < 0) hd_copy(e, q, j, 0);
		return;
	}
	for (size_t i = 0; i < a->h.nattrs; i++)
		if (a->h.attrs[i].in_key) hd_copy(e, a, i, 1);
	for (size_t j = 0; j < b->h.nattrs; j++)
		if (b->h.attrs[j].in_key && alg_find(e, b->h.attrs[j].name) < 0) hd_copy(e, b, j, 1);
	for (size_t i = 0; i < a->h.nattrs; i++)
		if (alg_find(e, a->h.attrs[i].name) < 0) hd_copy(e, a, i, 0);
	for (size_t j = 0; j < b->h.nattrs; j++)
		if (alg_find(e, b->h.attrs[j].name) < 0) hd_copy(e, b, j, 0);
}

int djc_expr_join(djc_expr **out, djc_conn *c, djc_expr *a, djc_expr *b)
{
	*out = NULL;
	if (!a || !b) return conn_fail(c, DJC_EINVAL, "join: an operand is NULL");
	int rc = compatible(c, a, b, "join");
	if (rc) return rc;
	djc_expr *e = expr_new(A_JOIN, a->h.nattrs + b->h.nattrs);
	e->l = expr_ref(a);
	e->r = expr_ref(b);
	set_repr(e, "%s * %s", a->repr, b->repr);
	join_heading(e, a, b);
	*out = e;
	return DJC_OK;
}

/* A restriction's expression: a's heading, kind k. */
static djc_expr *restricted(djc_expr *a, alg_kind k, int neg)
{
	djc_expr *e = expr_new(k, a->h.nattrs);
	e->l = expr_ref(a);
	e->neg = neg;
	for (size_t i = 0; i < a->h.nattrs; i++) hd_copy(e, a, i, a->h.attrs[i].in_key);
	return e;
}

static int where_json(djc_expr **out, djc_conn *c, djc_expr *a, const char *json, int neg)
{
	*out = NULL;
	if (!a) return conn_fail(c, DJC_EINVAL, "restriction of a NULL expression");
	int rc = restrict_check(c, &a->h, json, 0);
	if (rc) return rc;
	djc_expr *e = restricted(a, A_WHERE_JSON, neg);
	e->text = json ? xstrdup(json) : NULL;
	if (json && cond_is_text(json)) {   /* condition text, shown quoted */
		char *q = xasprintf(strchr(json, '\'') ? "\"%s\"" : "'%s'", json);
		set_repr(e, neg ? "%s - %s" : "%s & %s", a->repr, q);
		free(q);
	} else
		set_repr(e, neg ? "%s - %s" : "%s & %s", a->repr, json && *json ? json : "{}");
	*out = e;
	return DJC_OK;
}

int djc_expr_restrict(djc_expr **out, djc_conn *c, djc_expr *a, const char *json) { return where_json(out, c, a, json, 0); }
int djc_expr_anti(djc_expr **out, djc_conn *c, djc_expr *a, const char *json) { return where_json(out, c, a, json, 1); }

static int where_expr(djc_expr **out, djc_conn *c, djc_expr *a, djc_expr *b, int neg)
{
	*out = NULL;
	if (!a || !b) return conn_fail(c, DJC_EINVAL, "restriction: an operand is NULL");
	int rc = compatible(c, a, b, "restrict");
	if (rc) return rc;
	djc_expr *e = restricted(a, A_WHERE_EXPR, neg);
	e->r = expr_ref(b);
	int paren = b->k == A_JOIN || (b->k >= A_WHERE_JSON && b->k <= A_WHERE_EXPR);
	char *rb = paren ? xasprintf("(%s)", b->repr) : xstrdup(b->repr);
	set_repr(e, neg ? "%s - %s" : "%s & %s", a->repr, rb);
	free(rb);
	*out = e;
	return DJC_OK;
}

int djc_expr_restrict_expr(djc_expr **out, djc_conn *c, djc_expr *a, djc_expr *b) { return where_expr(out, c, a, b, 0); }
int djc_expr_anti_expr(djc_expr **out, djc_conn *c, djc_expr *a, djc_expr *b) { return where_expr(out, c, a, b, 1); }

/* An identifier: a letter or _, then letters, digits, _. */
static int is_ident(const char *s, size_t n)
{
	if (!n || !(s[0] == '_' || ((s[0] | 32) >= 'a' && (s[0] | 32) <= 'z'))) return 0;
	for (size_t i = 1; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || ((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z'))) return 0;
	return 1;
}

/* Split "new=old" (spaces allowed) into its two names; 0 when it is not
 * such an item. */
static int split_eq(const char *s, char *lhs, char *rhs, size_t cap)
{
	const char *eq = strchr(s, '=');
	if (!eq) return 0;
	const char *l0 = s, *l1 = eq, *r0 = eq + 1, *r1 = s + strlen(s);
	while (*l0 == ' ') l0++;
	while (l1 > l0 && l1[-1] == ' ') l1--;
	while (*r0 == ' ') r0++;
	while (r1 > r0 && r1[-1] == ' ') r1--;
	if ((size_t)(l1 - l0) >= cap || (size_t)(r1 - r0) >= cap) return 0;
	memcpy(lhs, l0, (size_t)(l1 - l0));
	lhs[l1 - l0] = 0;
	memcpy(rhs, r0, (size_t)(r1 - r0));
	rhs[r1 - r0] = 0;
	return 1;
}

/* What a projection keeps of a: flags per attribute, renames new=old. */
typedef struct proj_spec {
	int *keep;
	char (*rn)[2][128];   /* [k][0] new, [k][1] old */
	size_t nrn;
} proj_spec;

/* "...": every secondary attribute of a that no rename takes (DataJoint's
 * proj(..., new='old') drops old); the key is proj_heading's. */
static void proj_ellipsis(const djc_expr *a, proj_spec *p)
{
	for (size_t i = 0; i < a->h.nattrs; i++) {
		int renamed = 0;
		for (size_t k = 0; k < p->nrn; k++) renamed |= !strcmp(p->rn[k][1], a->h.attrs[i].name);
		if (!a->h.attrs[i].in_key && !renamed) p->keep[i] = 1;
	}
}

/* An exclusion item "-attr" (DataJoint 2's proj(..., '-attr')): the
 * attribute of a it names, whose index goes to *i; the leading dashes and
 * spaces are skipped, as DataJoint's lstrip("-").strip(). 0 when s is not
 * one; else DJC_OK, or an error for a name a lacks (DataJoint ignores it)
 * or a key attribute (DataJoint: "Cannot exclude primary key attribute"). */
static int exclusion(djc_conn *c, const djc_expr *a, const char *op, const char *s, int *i, int *rc)
{
	if (*s != '-') return 0;
	while (*s == '-' || *s == ' ') s++;
	*i = alg_find(a, s);
	if (*i < 0) {
		char *what = xasprintf("%s: an exclusion", op);
		*rc = alg_unknown(c, a, what, s);
		free(what);
	} else if (a->h.attrs[*i].in_key) {
		*rc = conn_fail(c, DJC_EINVAL, "%s: cannot exclude primary key attribute '%s' of %s (the key is always kept)",
				op, s, a->repr);
	} else
		*rc = DJC_OK;
	return 1;
}

static int proj_parse(djc_conn *c, const djc_expr *a, const char *const *items, size_t n, proj_spec *p)
{
	int ellipsis = 0, rc, x;
	for (size_t k = 0; k < n; k++) {
		const char *s = items[k] ? items[k] : "";
		char l[128], r[128];
		if (!strcmp(s, "...")) {
			ellipsis = 1;
		} else if (exclusion(c, a, "proj", s, &x, &rc)) {
			if (rc) return rc;
		} else if (split_eq(s, l, r, sizeof l)) {
			if (!is_ident(l, strlen(l)))
				return conn_fail(c, DJC_EINVAL, "proj: '%s' is not a valid attribute name (in %s)", l, s);
			if (alg_find(a, r) < 0) return alg_unknown(c, a, "proj: a rename", r);
			memcpy(p->rn[p->nrn][0], l, sizeof l);
			memcpy(p->rn[p->nrn++][1], r, sizeof r);
		} else {
			int i = alg_find(a, s);
			if (i < 0) return alg_unknown(c, a, "proj", s);
			p->keep[i] = 1;
		}
	}
	if (ellipsis) proj_ellipsis(a, p);
	/* "-attr" drops attr wherever it stands: it was kept by "..." or by name */
	for (size_t k = 0; k < n; k++)
		if (items[k] && exclusion(c, a, "proj", items[k], &x, &rc)) p->keep[x] = 0;
	return DJC_OK;
}

/* The heading of a.proj(spec): a's attributes in order, those kept (the
 * key unless renamed), each followed by its new names. */
static int proj_heading(djc_conn *c, djc_expr *e, const djc_expr *a, const proj_spec *p)
{
	for (size_t i = 0; i < a->h.nattrs; i++) {
		const attr *at = &a->h.attrs[i];
		int renamed = 0;
		for (size_t k = 0; k < p->nrn; k++) renamed |= !strcmp(p->rn[k][1], at->name);
		if (p->keep[i] || (at->in_key && !renamed)) hd_add(e, at, at->name, at->in_key, a->x[i].lineage)->src = xstrdup(at->name);
		for (size_t k = 0; k < p->nrn; k++) {
			if (strcmp(p->rn[k][1], at->name)) continue;
			if (alg_find(e, p->rn[k][0]) >= 0)
				return conn_fail(c, DJC_EINVAL, "proj: attribute '%s' already exists in %s", p->rn[k][0], e->repr);
			hd_add(e, at, p->rn[k][0], at->in_key, a->x[i].lineage)->src = xstrdup(at->name);
		}
	}
	for (size_t i = 0; i < e->h.nattrs; i++)
		for (size_t j = i + 1; j < e->h.nattrs; j++)
			if (!strcmp(e->h.attrs[i].name, e->h.attrs[j].name))
				return conn_fail(c, DJC_EINVAL, "proj: attribute '%s' already exists in %s", e->h.attrs[i].name,
						 e->repr);
	return DJC_OK;
}

/* "A.op(items...)" for messages. */
static char *call_repr(const djc_expr *a, const char *op, const djc_expr *b, const char *const *items, size_t n)
{
	sb_t s = SB_INIT;
	int paren = a->k != A_TABLE && a->k != A_PROJ && a->k != A_AGGR;
	sb_printf(&s, paren ? "(%s).%s(" : "%s.%s(", a->repr, op);
	if (b) sb_add(&s, b->repr);
	for (size_t k = 0; k < n; k++) sb_printf(&s, "%s%s", k || b ? ", " : "", items[k] ? items[k] : "");
	sb_addc(&s, ')');
	return sb_steal(&s);
}

int djc_expr_proj(djc_expr **out, djc_conn *c, djc_expr *a, const char *const *items, size_t n)
{
	*out = NULL;
	if (!a) return conn_fail(c, DJC_EINVAL, "proj of a NULL expression");
	if (n && !items) return conn_fail(c, DJC_EINVAL, "proj: %zu attributes announced, none given (NULL)", n);
	proj_spec p = {xcalloc(a->h.nattrs + 1, sizeof(int)), xcalloc(n + 1, sizeof *p.rn), 0};
	djc_expr *e = expr_new(A_PROJ, a->h.nattrs + n);
	e->l = expr_ref(a);
	e->repr = call_repr(a, "proj", NULL, items, n);
	e->h.name = e->repr;
	int rc = proj_parse(c, a, items, n, &p);
	if (!rc) rc = proj_heading(c, e, a, &p);
	free(p.keep);
	free(p.rn);
	if (rc) { djc_expr_free(e); return rc; }
	*out = e;
	return DJC_OK;
}

/* ------------------------------------------------------------ aggregation */

static const attr AT_COUNT = {.name = "count", .type = {T_INT64, 0, 0, NULL, 0}, .type_text = "int64"};
static const attr AT_FLOAT = {.name = "avg", .type = {T_FLOAT64, 0, 0, NULL, 0}, .type_text = "float64", .nullable = 1};

/* The SQL function of each alg_fn, as q_agg_item takes it. */
static const char *const AGG_FNS[] = {"", "count", "sum", "avg", "min", "max", "count distinct"};

/* The type of fn over attribute a (NULL: rows). */
static const attr *agg_type(alg_fn fn, const attr *a, attr *tmp)
{
	if (fn == F_COUNT || fn == F_COUNT_DISTINCT) return &AT_COUNT;
	if (fn == F_AVG) return &AT_FLOAT;
	*tmp = *a;
	tmp->in_key = 0;
	tmp->nullable = 1;
	tmp->has_def = 0;
	tmp->def = NULL;
	if (fn == F_SUM && tmp->type.t <= T_UINT32) {   /* sums of integers as int64 */
		tmp->type = AT_COUNT.type;
		tmp->type_text = "int64";
	} else if (fn == F_SUM && tmp->type.t == T_BOOL)
		return &AT_COUNT;
	else if (fn == F_SUM && tmp->type.t != T_DECIMAL && tmp->type.t != T_UINT64)
		return &AT_FLOAT;
	return tmp;
}

/* "name=fn(arg)" of an aggregation into e: arg an attribute of group b. */
static int agg_item(djc_conn *c, djc_expr *e, const djc_expr *b, const char *name, const char *call)
{
	const char *open = strchr(call, '('), *close = strrchr(call, ')');
	alg_fn fn = F_NONE;
	for (int f = 1; f <= 5 && open; f++)
		if ((size_t)(open - call) == strlen(AGG_FNS[f]) && !strncmp(call, AGG_FNS[f], strlen(AGG_FNS[f]))) fn = (alg_fn)f;
	if (!fn || !close || close[1])
		return conn_fail(c, DJC_EINVAL, "aggr: '%s=%s' is not one of count() count(x) count(distinct x) sum(x) avg(x) min(x) max(x)", name, call);
	char arg[128];
	size_t n = (size_t)(close - open - 1);
	while (n && open[1] == ' ') { open++; n--; }
	while (n && open[n] == ' ') n--;
	if (n >= sizeof arg) return conn_fail(c, DJC_EINVAL, "aggr: '%s' is too long", call);
	memcpy(arg, open + 1, n);
	arg[n] = 0;
	const char *x = arg;   /* count(distinct X): X's values, each once */
	if (fn == F_COUNT && !strncasecmp(x, "distinct", 8) && (!x[8] || x[8] == ' ' || x[8] == '(')) {
		fn = F_COUNT_DISTINCT;
		for (x += 8; *x == ' '; x++) {}
		size_t xn = strlen(x);
		if (xn >= 2 && x[0] == '(' && x[xn - 1] == ')') {   /* count(distinct(X)), as SQL writes it too */
			arg[xn - 1 + (size_t)(x - arg)] = 0;
			for (x++; *x == ' '; x++) {}
			for (char *end = arg + strlen(arg); end > x && end[-1] == ' ';) *--end = 0;
		}
	}
	int rows = !*x || !strcmp(x, "*");
	if (rows && fn != F_COUNT)
		return conn_fail(c, DJC_EINVAL, "aggr: %s%s needs an attribute of %s", fn == F_COUNT_DISTINCT ? "count(distinct X)" :
				 AGG_FNS[fn], fn == F_COUNT_DISTINCT ? "" : "()", b->repr);
	if (fn == F_COUNT_DISTINCT && strchr(x, ','))
		return conn_fail(c, DJC_EINVAL, "aggr: count(distinct X) counts one attribute ('%s=%s')", name, call);
	/* one function of one attribute: 'max(x) - min(x)' would otherwise be
	 * max of an attribute "x) - min(x", and 'sum(x * 2)' of "x * 2" */
	for (const char *q = rows ? "" : x; *q; q++)
		if (!isalnum((unsigned char)*q) && *q != '_')
			return conn_fail(c, DJC_EINVAL, "aggr: '%s=%s' is not one of count() count(x) count(distinct x) sum(x) avg(x) "
					 "min(x) max(x) (one function of one attribute: no arithmetic, no nested calls)", name, call);
	int j = rows ? -1 : alg_find(b, x);
	if (!rows && j < 0) return alg_unknown(c, b, "aggr", x);
	if (fn == F_COUNT_DISTINCT && b->h.attrs[j].type.t == T_JSON)
		return conn_fail(c, DJC_EINVAL, "aggr: count(distinct %s): json values are not compared (PostgreSQL cannot)", x);
	if (alg_find(e, name) >= 0) return conn_fail(c, DJC_EINVAL, "aggr: attribute '%s' already exists in %s", name, e->repr);
	attr tmp;
	alg_attr *y = hd_add(e, agg_type(fn, j < 0 ? NULL : &b->h.attrs[j], &tmp), name, 0, NULL);
	y->fn = fn;
	y->src = rows ? NULL : xstrdup(x);
	return DJC_OK;
}

/* The heading of a.aggr(b, items): a's key, the attributes of a named,
 * the computed ones. */
static int aggr_heading(djc_conn *c, djc_expr *e, const djc_expr *a, const djc_expr *b, const char *const *items, size_t n,
			int *drop)
{
	int rc, x;
	for (size_t k = 0; k < n; k++)   /* "-attr": never kept (DataJoint's aggr is a proj) */
		if (items[k] && exclusion(c, a, "aggr", items[k], &x, &rc)) {
			if (rc) return rc;
			drop[x] = 1;
		}
	for (size_t i = 0; i < a->h.nattrs; i++)
		if (a->h.attrs[i].in_key) hd_copy(e, a, i, 1);
	for (size_t k = 0; k < n; k++) {
		const char *s = items[k] ? items[k] : "";
		char l[128], r[128];
		if (*s == '-') continue;
		if (split_eq(s, l, r, sizeof l)) {
			if (!is_ident(l, strlen(l))) return conn_fail(c, DJC_EINVAL, "aggr: '%s' is not a valid attribute name", l);
			rc = agg_item(c, e, b, l, r);
			if (rc) return rc;
			continue;
		}
		for (size_t i = 0; i < a->h.nattrs; i++)
			if (!strcmp(s, "...") ? !a->h.attrs[i].in_key : !strcmp(s, a->h.attrs[i].name)) {
				if (!drop[i] && alg_find(e, a->h.attrs[i].name) < 0) hd_copy(e, a, i, 0);
				if (strcmp(s, "...")) break;
			}
		if (strcmp(s, "...") && alg_find(a, s) < 0) return alg_unknown(c, a, "aggr", s);
	}
	return DJC_OK;
}

int djc_expr_aggr(djc_expr **out, djc_conn *c, djc_expr *a, djc_expr *b, const char *const *items, size_t n)
{
	*out = NULL;
	if (!a || !b) return conn_fail(c, DJC_EINVAL, "aggr: an operand is NULL");
	if (n && !items) return conn_fail(c, DJC_EINVAL, "aggr: %zu attributes announced, none given (NULL)", n);
	for (size_t i = 0; i < a->h.nattrs; i++)
		if (a->h.attrs[i].in_key && alg_find(b, a->h.attrs[i].name) < 0)
			return conn_fail(c, DJC_EINVAL, "aggr: the group %s must have every primary key attribute of %s; it has "
					 "no '%s'", b->repr, a->repr, a->h.attrs[i].name);
	int rc = compatible(c, a, b, "aggregate");
	if (rc) return rc;
	djc_expr *e = expr_new(A_AGGR, a->h.nattrs + n);
	e->l = expr_ref(a);
	e->r = expr_ref(b);
	e->repr = call_repr(a, "aggr", b, items, n);
	e->h.name = e->repr;
	int *drop = xcalloc(a->h.nattrs + 1, sizeof(int));
	rc = aggr_heading(c, e, a, b, items, n, drop);
	free(drop);
	if (rc) { djc_expr_free(e); return rc; }
	*out = e;
	return DJC_OK;
}

/* U(by...).aggr(b, items): the attributes by of b as the key, then the
 * computed items (aggr's "name=f(x)"). */
int djc_expr_group(djc_expr **out, djc_conn *c, djc_expr *b, const char *const *by, size_t nby, const char *const *items,
		   size_t n)
{
	*out = NULL;
	if (!b) return conn_fail(c, DJC_EINVAL, "U(...).aggr: the group is NULL");
	if ((nby && !by) || (n && !items))
		return conn_fail(c, DJC_EINVAL, "U(...).aggr: %zu attributes announced, none given (NULL)", nby && !by ? nby : n);
	djc_expr *e = expr_new(A_GROUP, nby + n);
	e->r = expr_ref(b);
	sb_t s = SB_INIT;
	sb_add(&s, "U(");
	for (size_t k = 0; k < nby; k++) sb_printf(&s, "%s%s", k ? ", " : "", by[k] ? by[k] : "");
	sb_printf(&s, ").aggr(%s", b->repr);
	for (size_t k = 0; k < n; k++) sb_printf(&s, ", %s", items[k] ? items[k] : "");
	sb_addc(&s, ')');
	e->repr = e->h.name = sb_steal(&s);
	int rc = DJC_OK;
	for (size_t k = 0; k < nby && !rc; k++) {
		int j = by[k] ? alg_find(b, by[k]) : -1;
		if (j < 0) rc = alg_unknown(c, b, "U", by[k] ? by[k] : "(null)");
		else if (alg_find(e, by[k]) >= 0) rc = conn_fail(c, DJC_EINVAL, "U: '%s' is named twice", by[k]);
		else hd_copy(e, b, (size_t)j, 1);
	}
	for (size_t k = 0; k < n && !rc; k++) {
		char l[128], v[128];
		if (!items[k] || !split_eq(items[k], l, v, sizeof l) || !is_ident(l, strlen(l)))
			rc = conn_fail(c, DJC_EINVAL, "U(...).aggr: '%s' is not name=f(x) (f: count sum avg min max)",
				       items[k] ? items[k] : "(null)");
		else rc = agg_item(c, e, b, l, v);
	}
	if (rc) { djc_expr_free(e); return rc; }
	*out = e;
	return DJC_OK;
}

int djc_expr_union(djc_expr **out, djc_conn *c, djc_expr *a, djc_expr *b)
{
	*out = NULL;
	if (!a || !b) return conn_fail(c, DJC_EINVAL, "union: an operand is NULL");
	for (int side = 0; side < 2; side++) {
		const djc_expr *p = side ? b : a, *q = side ? a : b;
		for (size_t i = 0; i < p->h.nattrs; i++) {
			int j = alg_find(q, p->h.attrs[i].name);
			int pk = p->h.attrs[i].in_key, qk = j >= 0 && q->h.attrs[j].in_key;
			if (pk != qk && (pk || j >= 0))
				return conn_fail(c, DJC_EINVAL, "union: %s and %s must have the same primary key ('%s' is in the key of "
						 "one only)", a->repr, b->repr, p->h.attrs[i].name);
			if (!pk && j >= 0)
				return conn_fail(c, DJC_EINVAL, "union: %s and %s share the secondary attribute '%s' (project it away "
						 "or rename it)", a->repr, b->repr, p->h.attrs[i].name);
		}
	}
	djc_expr *e = expr_new(A_UNION, a->h.nattrs + b->h.nattrs);
	e->l = expr_ref(a);
	e->r = expr_ref(b);
	set_repr(e, "%s + %s", a->repr, b->repr);
	for (size_t i = 0; i < a->h.nattrs; i++) hd_copy(e, a, i, a->h.attrs[i].in_key);
	for (size_t j = 0; j < b->h.nattrs; j++)
		if (!b->h.attrs[j].in_key) hd_copy(e, b, j, 0);
	*out = e;
	return DJC_OK;
}

/* ---------------------------------------------------------------- compile */

/* A compilation: the arena, the connection (messages), the aliases used. */
typedef struct cc {
	q_arena *a;
	djc_conn *c;
	int n;
} cc;

/* An expression compiled: its query (items = the heading, in order) and
 * whether it takes more FROM operands, conditions and other items as it
 * is (open), or must be a derived table first (grouped). */
typedef struct cq {
	q_sel *s;
	int open;
} cq;

/* The column of attribute name of e in its compiled query's items. */
static q_col icol(const q_item *items, const djc_expr *e, const char *name) { return items[alg_find(e, name)].col; }

static void item(cc *k, q_sel *s, q_col col, const char *name)
{
	q_col_item(k->a, s, col, strcmp(col.name, name) ? q_strdup(k->a, name) : NULL);
}

/* x as a derived table of a new query selecting e's heading from it. */
static void wrap(cc *k, const djc_expr *e, cq *x)
{
	q_sel *w = q_select(k->a);
	const char *al = q_printf(k->a, "d%d", k->n++);
	q_from_query(k->a, w, x->s, al, 0);
	for (size_t i = 0; i < e->h.nattrs; i++) q_col_item(k->a, w, (q_col){al, NULL, e->h.attrs[i].name}, NULL);
	x->s = w;
	x->open = 1;
}

/* Take the items of s away (returned) for the caller to set new ones. */
static q_item *take_items(q_sel *s)
{
	q_item *old = s->items;
	s->items = NULL;
	s->nitems = s->capitems = 0;
	return old;
}

static int comp(cc *k, const djc_expr *e, cq *out);

/* Compile e and make it open. */
static int comp_open(cc *k, const djc_expr *e, cq *out)
{
	int rc = comp(k, e, out);
	if (!rc && !out->open) wrap(k, e, out);
	return rc;
}

static void comp_table(cc *k, const djc_expr *e, cq *out)
{
	q_sel *s = q_select(k->a);
	const char *al = q_printf(k->a, "t%d", k->n++);
	q_from_table(k->a, s, table_sqlref(e->t), al, 0);
	for (size_t i = 0; i < e->h.nattrs; i++) q_col_item(k->a, s, (q_col){al, NULL, e->h.attrs[i].name}, NULL);
	*out = (cq){s, 1};
}

/* l * r: r's FROM operands joined to l's, the first on the shared
 * attributes, r's conditions ANDed into l's WHERE. */
static int comp_join(cc *k, const djc_expr *e, cq *out)
{
	cq x, y;
	int rc = comp_open(k, e->l, &x);
	if (!rc) rc = comp_open(k, e->r, &y);
	if (rc) return rc;
	for (size_t j = 0; j < y.s->nfrom; j++) {
		const q_from *f = &y.s->from[j];
		q_node *on = f->sub ? q_from_query(k->a, x.s, f->sub, f->alias, f->left)
				    : q_from_table(k->a, x.s, f->table, f->alias, f->left);
		if (j) { q_add(k->a, on, f->on); continue; }
		for (size_t i = 0; i < e->r->h.nattrs; i++) {
			const char *n = e->r->h.attrs[i].name;
			if (alg_find(e->l, n) >= 0) q_add(k->a, on, q_same(k->a, icol(x.s->items, e->l, n), icol(y.s->items, e->r, n)));
		}
	}
	if (y.s->where->nkids) q_where(k->a, x.s, y.s->where);
	q_item *xi = take_items(x.s);
	for (size_t i = 0; i < e->h.nattrs; i++) {
		const char *n = e->h.attrs[i].name;
		item(k, x.s, alg_find(e->l, n) >= 0 ? icol(xi, e->l, n) : icol(y.s->items, e->r, n), n);
	}
	*out = x;
	return DJC_OK;
}

/* The placeholder alias restrict.c's nodes are built with, then pointed
 * at the columns of the query they restrict (remap). */
static const char PH[] = "?";

static void remap1(q_col *col, const q_item *items, const djc_expr *e)
{
	if (col->alias == PH) *col = icol(items, e, col->name);
}

static void remap(q_node *x, const q_item *items, const djc_expr *e)
{
	remap1(&x->a, items, e);
	remap1(&x->b, items, e);
	if (x->k == Q_IN)
		for (size_t j = 0; j < x->k_cols; j++) remap1((q_col *)&x->cols[j], items, e);
	for (size_t i = 0; i < x->nkids; i++) remap(x->kids[i], items, e);
}

/* l & json, l - json. A missing or empty restriction is true (so l - {}
 * has no rows, as DataJoint's). */
static int comp_where_json(cc *k, const djc_expr *e, cq *out)
{
	int rc = comp_open(k, e->l, out);
	q_node *x = NULL;
	if (!rc) rc = restrict_node(&x, k->a, k->c, &e->l->h, e->text, PH, 0);
	if (rc) return rc;
	if (x) remap(x, out->s->items, e->l);
	if (!x) x = e->neg ? q_false(k->a) : NULL;
	else if (e->neg) x = q_not(k->a, x);
	if (x) q_where(k->a, out->s, x);
	return DJC_OK;
}

/* l & r, l - r: [NOT] EXISTS (r's rows equal to l's on the shared
 * attributes); with none shared, whether r has a row at all. */
static int comp_where_expr(cc *k, const djc_expr *e, cq *out)
{
	cq y;
	int rc = comp_open(k, e->l, out);
	if (!rc) rc = comp_open(k, e->r, &y);
	if (rc) return rc;
	for (size_t i = 0; i < e->r->h.nattrs; i++) {
		const char *n = e->r->h.attrs[i].name;
		if (alg_find(e->l, n) >= 0)
			q_where(k->a, y.s, q_same(k->a, icol(y.s->items, e->r, n), icol(out->s->items, e->l, n)));
	}
	take_items(y.s);
	q_item_add(k->a, y.s, QI_ONE, NULL);
	q_where(k->a, out->s, q_exists(k->a, y.s, e->neg));
	return DJC_OK;
}

static int comp_proj(cc *k, const djc_expr *e, cq *out)
{
	int rc = comp_open(k, e->l, out);
	if (rc) return rc;
	q_item *xi = take_items(out->s);
	for (size_t i = 0; i < e->h.nattrs; i++) item(k, out->s, icol(xi, e->l, e->x[i].src), e->h.attrs[i].name);
	return DJC_OK;
}

/* The type of attribute name of the group r (NULL: none, count(*)). */
static const coldef *src_type(const djc_expr *r, const char *name)
{
	int j = name ? alg_find(r, name) : -1;
	return j < 0 ? NULL : &r->h.attrs[j].type;
}

/* l.aggr(r, ...): l LEFT JOIN (r) on the shared attributes, grouped by
 * every attribute of l kept (each follows from l's key; MariaDB wants
 * them all named). r is always a derived table, so a restricted group
 * keeps l's rows without a match (unlike DataJoint 2.3's). */
static int comp_aggr(cc *k, const djc_expr *e, cq *out)
{
	cq y;
	int rc = comp_open(k, e->l, out);
	if (!rc) rc = comp(k, e->r, &y);
	if (rc) return rc;
	const char *g = q_printf(k->a, "g%d", k->n++);
	q_node *on = q_from_query(k->a, out->s, y.s, g, 1);
	const char *key = NULL;
	for (size_t i = 0; i < e->r->h.nattrs; i++) {
		const char *n = e->r->h.attrs[i].name;
		if (alg_find(e->l, n) < 0) continue;
		q_add(k->a, on, q_same(k->a, icol(out->s->items, e->l, n), (q_col){g, NULL, n}));
		if (!key && e->l->h.attrs[alg_find(e->l, n)].in_key) key = n;
	}
	q_item *xi = take_items(out->s);
	for (size_t i = 0; i < e->h.nattrs; i++) {
		const char *n = e->h.attrs[i].name;
		if (e->x[i].fn == F_NONE) {
			q_col col = icol(xi, e->l, n);
			item(k, out->s, col, n);
			q_group(k->a, out->s, col);
		} else   /* count(): the group's rows, by a key attribute (NULL when none matched) */
			q_agg_item(k->a, out->s, AGG_FNS[e->x[i].fn], (q_col){g, NULL, e->x[i].src ? e->x[i].src : key},
				   q_strdup(k->a, n), src_type(e->r, e->x[i].src));
	}
	out->open = 0;
	return DJC_OK;
}

/* U(by).aggr(r, ...): r as a derived table, grouped by the key. */
static int comp_group(cc *k, const djc_expr *e, cq *out)
{
	cq y;
	int rc = comp(k, e->r, &y);
	if (rc) return rc;
	const char *g = q_printf(k->a, "g%d", k->n++);
	q_sel *s = q_select(k->a);
	q_from_query(k->a, s, y.s, g, 0);
	for (size_t i = 0; i < e->h.nattrs; i++) {
		q_col col = {g, NULL, e->h.attrs[i].name};
		if (e->x[i].fn == F_NONE) {
			q_col_item(k->a, s, col, NULL);
			q_group(k->a, s, col);
		} else {
			col.name = e->x[i].src;   /* NULL: count(*), the group's rows */
			q_agg_item(k->a, s, AGG_FNS[e->x[i].fn], col, q_strdup(k->a, e->h.attrs[i].name), src_type(e->r, col.name));
		}
	}
	*out = (cq){s, 0};
	return DJC_OK;
}

/* NOT EXISTS (a row of e with the key of the row cols name). */
static int absent(cc *k, const djc_expr *e, const q_item *items, const djc_expr *of, q_node **out)
{
	cq x;
	int rc = comp_open(k, e, &x);
	if (rc) return rc;
	for (size_t i = 0; i < e->h.nattrs; i++)
		if (e->h.attrs[i].in_key)
			q_where(k->a, x.s, q_same(k->a, x.s->items[i].col, icol(items, of, e->h.attrs[i].name)));
	take_items(x.s);
	q_item_add(k->a, x.s, QI_ONE, NULL);
	*out = q_exists(k->a, x.s, 1);
	return DJC_OK;
}

/* l + r: l's rows with r's attributes where r has the key (LEFT JOIN),
 * UNION ALL r's rows whose key l has not, with NULL for l's attributes
 * (DataJoint's outer union; the two parts share no key). */
static int comp_union(cc *k, const djc_expr *e, cq *out)
{
	cq x, y, z;
	int rc = comp_open(k, e->l, &x);
	if (!rc) rc = comp(k, e->r, &y);
	if (!rc) rc = comp_open(k, e->r, &z);
	if (rc) return rc;
	const char *g = q_printf(k->a, "g%d", k->n++);
	q_node *on = q_from_query(k->a, x.s, y.s, g, 1);
	for (size_t i = 0; i < e->r->h.nattrs; i++)
		if (e->r->h.attrs[i].in_key)
			q_add(k->a, on, q_same(k->a, icol(x.s->items, e->l, e->r->h.attrs[i].name), (q_col){g, NULL, e->r->h.attrs[i].name}));
	q_node *none;
	if ((rc = absent(k, e->l, z.s->items, e->r, &none))) return rc;
	q_where(k->a, z.s, none);
	q_item *xi = take_items(x.s), *zi = take_items(z.s);
	for (size_t i = 0; i < e->h.nattrs; i++) {
		const char *n = e->h.attrs[i].name;
		int in_l = alg_find(e->l, n) >= 0, in_r = alg_find(e->r, n) >= 0;
		item(k, x.s, in_l ? icol(xi, e->l, n) : (q_col){g, NULL, n}, n);
		if (in_r) item(k, z.s, icol(zi, e->r, n), n);
		else {
			q_item_add(k->a, z.s, QI_NULL, NULL);
			z.s->items[z.s->nitems - 1].as = q_strdup(k->a, n);
		}
	}
	x.s->union_all = z.s;
	*out = (cq){x.s, 0};
	return DJC_OK;
}

static int order(cc *k, const djc_expr *e, cq *x, const char *order_by);

/* l's rows in e's order, LIMIT, OFFSET: a derived table before anything
 * else is applied to it. */
static int comp_top(cc *k, const djc_expr *e, cq *out)
{
	int rc = comp_open(k, e->l, out);
	if (!rc) rc = order(k, e->l, out, e->text);
	if (!rc && e->text) rc = order(k, e->l, out, "KEY");   /* ties: in key order on every backend */
	if (rc) return rc;
	out->s->limit = (long)e->lim;
	if (e->off > 0) out->s->offset = (long)e->off;
	out->open = 0;
	return DJC_OK;
}

static int comp(cc *k, const djc_expr *e, cq *out)
{
	switch (e->k) {
	case A_TABLE: comp_table(k, e, out); return DJC_OK;
	case A_JOIN: return comp_join(k, e, out);
	case A_WHERE_JSON: return comp_where_json(k, e, out);
	case A_WHERE_EXPR: return comp_where_expr(k, e, out);
	case A_PROJ: return comp_proj(k, e, out);
	case A_AGGR: return comp_aggr(k, e, out);
	case A_GROUP: return comp_group(k, e, out);
	case A_UNION: return comp_union(k, e, out);
	case A_TOP: return comp_top(k, e, out);
	case A_WHERE_TEXT: break;
	}
	return conn_fail(k->c, DJC_EINVAL, "condition text is not supported yet");
}

int alg_compile(q_sel **out, q_arena *a, djc_conn *c, const djc_expr *e)
{
	cc k = {a, c, 0};
	cq x;
	int rc = comp(&k, e, &x);
	*out = rc ? NULL : x.s;
	return rc;
}

int djc_expr_top(djc_expr **out, djc_conn *c, djc_expr *a, long long limit, const char *order_by, long long offset)
{
	*out = NULL;
	if (!a) return conn_fail(c, DJC_EINVAL, "top of a NULL expression");
	if (limit < 0 || offset < 0)
		return conn_fail(c, DJC_EINVAL, "top: the limit (%lld) and the offset (%lld) cannot be negative", limit, offset);
	djc_expr *e = restricted(a, A_TOP, 0);
	e->text = order_by && *order_by ? xstrdup(order_by) : NULL;
	e->lim = limit;
	e->off = offset;
	sb_t args = SB_INIT;
	sb_printf(&args, "%lld", limit);
	if (e->text) sb_printf(&args, ", %s", e->text);
	if (offset) sb_printf(&args, ", offset=%lld", offset);
	set_repr(e, "%s.top(%s)", a->repr, sb_str(&args));
	sb_free(&args);
	q_arena t = Q_ARENA_INIT;   /* the order's names checked now, as every builder checks */
	q_sel *s;
	int rc = alg_compile(&s, &t, c, e);
	q_arena_free(&t);
	if (rc) { djc_expr_free(e); return rc; }
	*out = e;
	return DJC_OK;
}

/* ------------------------------------------------------------------ fetch */

/* One word of text at *p (letters, digits, _), into w; its length. */
static size_t word(const char **p, char *w, size_t cap)
{
	while (**p == ' ' || **p == '\t') (*p)++;
	size_t n = 0;
	while (((**p | 32) >= 'a' && (**p | 32) <= 'z') || (**p >= '0' && **p <= '9') || **p == '_') {
		if (n + 1 < cap) w[n++] = **p;
		(*p)++;
	}
	w[n] = 0;
	while (**p == ' ' || **p == '\t') (*p)++;
	return n;
}

/* ORDER BY of order_by ("a desc, b", "KEY [DESC]") on x's items. */
static int order(cc *k, const djc_expr *e, cq *x, const char *order_by)
{
	const char *p = order_by && *order_by ? order_by : "KEY";
	while (*p) {
		char name[128], dir[16];
		if (!word(&p, name, sizeof name))
			return conn_fail(k->c, DJC_EINVAL, "order by '%s': expected an attribute name at column %d", order_by,
					 (int)(p - order_by) + 1);
		int desc = 0;
		if (word(&p, dir, sizeof dir)) {
			desc = !strcasecmp(dir, "desc");
			if (!desc && strcasecmp(dir, "asc"))
				return conn_fail(k->c, DJC_EINVAL, "order by '%s': '%s' after '%s' is not asc or desc", order_by, dir, name);
		}
		if (*p && *p != ',') return conn_fail(k->c, DJC_EINVAL, "order by '%s': expected ',' at column %d", order_by, (int)(p - order_by) + 1);
		if (*p) p++;
		if (!strcmp(name, "KEY")) {
			for (size_t i = 0; i < e->h.nattrs; i++)
				if (e->h.attrs[i].in_key) q_order_desc(k->a, x->s, x->s->items[i].col, desc);
		} else if (alg_find(e, name) < 0)
			return alg_unknown(k->c, e, "order by", name);
		else
			q_order_desc(k->a, x->s, icol(x->s->items, e, name), desc);
	}
	return DJC_OK;
}

/* Only the attributes of attrs ("a,b"), in that order; KEY: the primary
 * key's attributes, in their order (DataJoint's fetch('KEY')). Each at
 * most once (the printed heading, io.c's expr_view, has room for each
 * attribute once). */
static int narrow(cc *k, const djc_expr *e, cq *x, const char *attrs)
{
	q_item *xi = take_items(x->s);
	char *seen = q_alloc(k->a, e->h.nattrs + 1);   /* zeroed */
	for (const char *p = attrs; *p;) {
		char name[128];
		if (!word(&p, name, sizeof name) || (*p && *p != ','))
			return conn_fail(k->c, DJC_EINVAL, "attributes '%s': expected names separated by commas (column %d)", attrs,
					 (int)(p - attrs) + 1);
		if (*p) p++;
		int key = !strcmp(name, "KEY");
		int i = key ? -1 : alg_find(e, name);
		if (!key && i < 0) return alg_unknown(k->c, e, "attributes", name);
		for (size_t j = 0; j < e->h.nattrs; j++) {
			if (key ? !e->h.attrs[j].in_key : (size_t)i != j) continue;
			if (seen[j])
				return conn_fail(k->c, DJC_EINVAL, "attributes '%s': '%s' is named twice%s", attrs, e->h.attrs[j].name,
						 key ? " (KEY holds it)" : "");
			seen[j] = 1;
			q_col_item(k->a, x->s, xi[j].col, xi[j].as);   /* open: plain columns */
		}
	}
	return DJC_OK;
}

int alg_query(q_sel **out, q_arena *a, djc_conn *c, const djc_expr *e, const alg_fetch *f)
{
	*out = NULL;
	cc k = {a, c, 0};
	cq x;
	int rc = comp(&k, e, &x);
	if (rc) return rc;
	if (!x.open) wrap(&k, e, &x);
	if ((rc = order(&k, e, &x, f->order_by))) return rc;
	if (f->limit >= 0 || f->offset > 0) x.s->limit = f->limit >= 0 ? (long)f->limit : 9223372036854775807L;
	if (f->offset > 0) x.s->offset = (long)f->offset;
	if (f->attrs && (rc = narrow(&k, e, &x, f->attrs))) return rc;
	*out = x.s;
	return DJC_OK;
}

/* ----------------------------------------------------------------- delete */

const table *alg_base(const djc_expr *e)
{
	while (e && (e->k == A_WHERE_JSON || e->k == A_WHERE_EXPR || e->k == A_WHERE_TEXT)) e = e->l;
	return e && e->k == A_TABLE ? e->t : NULL;
}

/* The restrictions of e (restrictions of a table) on the row ref names. */
static int cond_at(cc *k, const djc_expr *e, q_col ref, q_node *and)
{
	if (e->k == A_TABLE) return DJC_OK;
	int rc = cond_at(k, e->l, ref, and);
	if (rc) return rc;
	q_node *x = NULL;
	if (e->k == A_WHERE_JSON) {
		if ((rc = restrict_node_at(&x, k->a, k->c, &e->l->h, e->text, ref, 0))) return rc;
		if (!x) x = e->neg ? q_false(k->a) : NULL;
		else if (e->neg) x = q_not(k->a, x);
	} else if (e->k == A_WHERE_EXPR) {
		cq y;
		if ((rc = comp_open(k, e->r, &y))) return rc;
		for (size_t i = 0; i < e->r->h.nattrs; i++) {
			q_col col = ref;
			col.name = e->r->h.attrs[i].name;
			if (alg_find(e->l, col.name) >= 0) q_where(k->a, y.s, q_same(k->a, icol(y.s->items, e->r, col.name), col));
		}
		take_items(y.s);
		q_item_add(k->a, y.s, QI_ONE, NULL);
		x = q_exists(k->a, y.s, e->neg);
	} else
		return conn_fail(k->c, DJC_EINVAL, "condition text is not supported yet");
	if (x) q_add(k->a, and, x);
	return DJC_OK;
}

int alg_delete_cond(q_node **out, q_arena *a, djc_conn *c, const djc_expr *e, q_col ref)
{
	cc k = {a, c, 1000};   /* aliases apart from the cascade's d1, d2, ... */
	*out = q_and(a);
	return cond_at(&k, e, ref, *out);
}

/* -------------------------------------------- an expression as --where */

static void expr_drop(void *e) { djc_expr_free(e); }

/* The conditions of y (e's query) equating e's attributes with the
 * columns ref names of t's attributes of the same name (source_only: t's
 * key attributes from its parents), each shared name checked as a join's
 * is: the same lineage on both sides. */
static int where_shared(cc *k, const table *t, int source_only, const djc_expr *e, q_sel *y, q_col ref)
{
	size_t n = source_only ? t->nsrc : t->nattrs;
	for (size_t i = 0; i < n; i++) {
		const char *name = t->attrs[source_only ? t->src[i] : i].name;
		int j = alg_find(e, name);
		if (j < 0) continue;
		char *la = lineage_of(t, name);
		const char *lb = e->x[j].lineage;
		int ok = la && lb && !strcmp(la, lb);
		int rc = ok ? DJC_OK
			    : conn_fail(k->c, DJC_EINVAL, "cannot restrict %s by %s on attribute '%s': it comes from %s in one "
					"and from %s in the other (rename one with .proj(new=%s))", t->name, e->repr, name,
					la ? la : "no table key", lb ? lb : "no table key", name);
		free(la);
		if (rc) return rc;
		q_col col = ref;
		col.name = name;
		q_where(k->a, y, q_same(k->a, icol(y->items, e, name), col));
	}
	return DJC_OK;
}

int alg_where_node(q_node **out, q_arena *a, djc_conn *c, const table *t, const char *text, q_col ref, int source_only)
{
	*out = NULL;
	djc_expr *e;
	int rc = alg_parse(&e, c, text);
	if (rc) return rc;
	q_arena_own(a, e, expr_drop);   /* the tree borrows its heading's names */
	if (!ref.alias && !ref.table) ref.table = t->jobs_name ? t->jobs_name : t->sql_name;   /* as keysource_exists */
	cc k = {a, c, 2000};   /* aliases apart from the statement's own */
	cq y;
	if ((rc = comp_open(&k, e, &y)) || (rc = where_shared(&k, t, source_only, e, y.s, ref))) return rc;
	take_items(y.s);
	q_item_add(a, y.s, QI_ONE, NULL);
	*out = q_exists(a, y.s, 0);
	return DJC_OK;
}
