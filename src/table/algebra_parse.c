/* algebra_parse.c - the expression text of the command line
 * (docs/queries.md), with Python's precedence as DataJoint users write it:
 *
 *	expr    := sub ('&' (sub | cond))*
 *	sub     := product ('-' (product | cond) | '+' product)*
 *	product := post ('*' post)*
 *	post    := primary ('.' ('proj' | 'aggr') '(' args ')')*
 *	primary := TABLE | '(' expr ')' | 'U(' attrs ').aggr(' expr ',' items ')'
 *	cond    := a JSON object or list (a JSON restriction), or condition
 *	           text in quotes ('subject = "m1"', table/cond.h)
 *
 * TABLE is a declared table's name (Master.Part too). Every error names
 * its column; nothing is run while parsing (the builders check names). */
#include "algebra.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef struct ps {
	djc_conn *c;
	const char *s;
	size_t i;
} ps;

static void ws(ps *p) { while (isspace((unsigned char)p->s[p->i])) p->i++; }

static int err(ps *p, const char *what)
{
	return conn_fail(p->c, DJC_EINVAL, "expression: %s at column %zu of: %s", what, p->i + 1, p->s);
}

static int ident_char(char ch) { return isalnum((unsigned char)ch) || ch == '_'; }

/* An identifier at p (no spaces skipped), its length (0: none). */
static size_t ident_len(const ps *p, size_t at)
{
	size_t n = 0;
	if (isdigit((unsigned char)p->s[at])) return 0;
	while (ident_char(p->s[at + n])) n++;
	return n;
}

/* 1 when ".proj(" or ".aggr(" follows at p->i (spaces allowed before '('). */
static int method_next(const ps *p, const char **name)
{
	if (p->s[p->i] != '.') return 0;
	size_t n = ident_len(p, p->i + 1), j = p->i + 1 + n;
	while (isspace((unsigned char)p->s[j])) j++;
	if (p->s[j] != '(') return 0;
	if (n == 4 && !strncmp(p->s + p->i + 1, "proj", 4)) *name = "proj";
	else if (n == 4 && !strncmp(p->s + p->i + 1, "aggr", 4)) *name = "aggr";
	else if (n == 3 && !strncmp(p->s + p->i + 1, "top", 3)) *name = "top";
	else return -1;
	return 1;
}

static int expr(ps *p, djc_expr **out);

static int table_name(ps *p, djc_expr **out)
{
	size_t at = p->i, n = ident_len(p, at);
	if (!n) return err(p, "expected a table name or '('");
	p->i += n;
	const char *m;
	while (p->s[p->i] == '.' && !method_next(p, &m) && ident_len(p, p->i + 1)) p->i += 1 + ident_len(p, p->i + 1);
	char *name = xstrndup(p->s + at, p->i - at);
	int rc = djc_expr_table(out, p->c, name);
	free(name);
	return rc;
}

static int group_by(ps *p, djc_expr **out);
static int sub(ps *p, djc_expr **out);

static int primary(ps *p, djc_expr **out)
{
	*out = NULL;   /* on every error too: the callers free what they got */
	ws(p);
	if (p->s[p->i] == 'U' && ident_len(p, p->i) == 1) {
		size_t j = p->i + 1;
		while (isspace((unsigned char)p->s[j])) j++;
		if (p->s[j] == '(') { p->i = j + 1; return group_by(p, out); }
	}
	if (p->s[p->i] != '(') return table_name(p, out);
	p->i++;
	int rc = expr(p, out);
	if (rc) return rc;
	ws(p);
	if (p->s[p->i] != ')') { djc_expr_free(*out); *out = NULL; return err(p, "expected ')'"); }
	p->i++;
	return DJC_OK;
}

/* An item of a call as DataJoint writes it, in Python's quotes, made
 * djc's: 'x' -> x, '-x' -> -x, '...' -> ..., new='old' -> new=old,
 * n='count(*)' -> n=count(*), 'v desc' -> v desc. Other text as it is. */
static char *call_item(const char *s, size_t n)
{
	size_t v = 0, e;
	if (n && (s[0] == '\'' || s[0] == '"')) v = 0;
	else {
		while (v < n && ident_char(s[v])) v++;
		size_t eq = v;
		while (eq < n && isspace((unsigned char)s[eq])) eq++;
		if (!v || eq >= n || s[eq] != '=') return xstrndup(s, n);
		for (v = eq + 1; v < n && isspace((unsigned char)s[v]); v++) {}
		if (v >= n || (s[v] != '\'' && s[v] != '"')) return xstrndup(s, n);
	}
	if (!(e = quoted_text(s + v, n - v, NULL)) || v + e + 1 != n) return xstrndup(s, n);
	sb_t b = SB_INIT;
	if (v) {   /* new= */
		size_t k = 0;
		while (ident_char(s[k])) k++;
		sb_addn(&b, s, k);
		sb_addc(&b, '=');
	}
	quoted_text(s + v, e + 1, &b);
	return sb_steal(&b);
}

/* The items of a call up to its ')': each the text up to ',' or ')' at
 * depth 0 outside quotes, trimmed, DataJoint's quotes taken off
 * (call_item). */
static int call_items(ps *p, char ***items, size_t *n)
{
	*items = NULL;
	*n = 0;
	for (;;) {
		ws(p);
		if (p->s[p->i] == ')' && !*n) { p->i++; return DJC_OK; }
		size_t at = p->i;
		int depth = 0;
		while (p->s[p->i] && !(depth == 0 && (p->s[p->i] == ',' || p->s[p->i] == ')'))) {
			if (p->s[p->i] == '\'' || p->s[p->i] == '"') {
				size_t q = quoted_text(p->s + p->i, strlen(p->s + p->i), NULL);
				if (!q) return err(p, "unterminated quote in the call");
				p->i += q + 1;
				continue;
			}
			depth += p->s[p->i] == '(' ? 1 : p->s[p->i] == ')' ? -1 : 0;
			p->i++;
		}
		if (!p->s[p->i]) return err(p, "expected ')' to close the call");
		size_t e = p->i;
		while (e > at && isspace((unsigned char)p->s[e - 1])) e--;
		if (e == at) return err(p, "expected an attribute");
		*items = xrealloc(*items, (*n + 1) * sizeof(char *));
		(*items)[(*n)++] = call_item(p->s + at, e - at);
		if (p->s[p->i++] == ')') return DJC_OK;
	}
}

/* .proj(...) or .aggr(group, ...) applied to *e. */
/* A count of .top(...) (digits only) into *v; 0 when it is not one. */
static int count_of(const char *s, long long *v)
{
	char *end;
	if (!isdigit((unsigned char)*s)) return 0;
	*v = strtoll(s, &end, 10);
	return !*end && *v >= 0;
}

/* .top(N [, ORDER TERM ...] [, offset=M]): DataJoint's dj.Top(N, order_by, offset). */
static int top(ps *p, char **items, size_t n, djc_expr **r, djc_expr *e)
{
	long long lim, off = 0;
	if (!n || !count_of(items[0], &lim)) return err(p, "top: expected .top(N[, ORDER][, offset=M]) with N a count");
	sb_t ord = SB_INIT;
	int rc = DJC_OK;
	for (size_t k = 1; k < n && !rc; k++) {
		if (!strncmp(items[k], "offset", 6) && strchr(items[k], '=')) {
			const char *v = strchr(items[k], '=') + 1;
			while (isspace((unsigned char)*v)) v++;
			if (!count_of(v, &off)) rc = err(p, "top: offset= takes a count");
		} else
			sb_printf(&ord, "%s%s", ord.len ? ", " : "", items[k]);
	}
	if (!rc) rc = djc_expr_top(r, p->c, e, lim, ord.len ? sb_str(&ord) : NULL, off);
	sb_free(&ord);
	return rc;
}

static int method(ps *p, const char *m, djc_expr **e)
{
	while (p->s[p->i] != '(') p->i++;
	p->i++;
	djc_expr *g = NULL, *r = NULL;
	int rc = DJC_OK;
	if (!strcmp(m, "aggr")) {
		if ((rc = expr(p, &g))) return rc;
		ws(p);
		if (p->s[p->i] == ',') p->i++;
		else if (p->s[p->i] != ')') { djc_expr_free(g); return err(p, "expected ',' or ')' after aggr's group"); }
	}
	char **items;
	size_t n;
	rc = call_items(p, &items, &n);
	if (!rc && !strcmp(m, "top")) rc = top(p, items, n, &r, *e);
	else if (!rc) rc = g ? djc_expr_aggr(&r, p->c, *e, g, (const char *const *)items, n)
			: djc_expr_proj(&r, p->c, *e, (const char *const *)items, n);
	for (size_t k = 0; k < n; k++) free(items[k]);
	free(items);
	djc_expr_free(g);
	djc_expr_free(*e);
	*e = r;
	return rc;
}

/* U(a, b).aggr(group, name=f(x), ...), after "U(". */
static int group_by(ps *p, djc_expr **out)
{
	char **by, **items = NULL;
	size_t nby, n = 0;
	djc_expr *g = NULL;
	const char *m = NULL;
	int rc = call_items(p, &by, &nby), semi = 0;
	if (!rc) {
		ws(p);
		/* U(a) & B: the distinct values of a in B (U(a).aggr(B) without items) */
		if ((semi = p->s[p->i] == '&')) { p->i++; rc = sub(p, &g); }
		else if (method_next(p, &m) != 1 || strcmp(m, "aggr")) rc = err(p, "expected .aggr( or & after U(...)");
	}
	if (!rc && !semi) {
		while (p->s[p->i] != '(') p->i++;
		p->i++;
		rc = expr(p, &g);
	}
	if (!rc && !semi) {
		ws(p);
		if (p->s[p->i] == ',') p->i++;
		else if (p->s[p->i] != ')') rc = err(p, "expected ',' or ')' after aggr's group");
	}
	if (!rc && !semi) rc = call_items(p, &items, &n);
	if (!rc) rc = djc_expr_group(out, p->c, g, (const char *const *)by, nby, (const char *const *)items, n);
	for (size_t k = 0; k < nby; k++) free(by[k]);
	for (size_t k = 0; k < n; k++) free(items[k]);
	free(by);
	free(items);
	djc_expr_free(g);
	return rc;
}

static int post(ps *p, djc_expr **out)
{
	int rc = primary(p, out);
	for (;;) {
		if (rc) return rc;
		ws(p);
		const char *m = NULL;
		int k = method_next(p, &m);
		if (k < 0) { p->i++; rc = err(p, "expected .proj( or .aggr("); }
		else if (!k) return DJC_OK;
		else rc = method(p, m, out);
		if (rc) { djc_expr_free(*out); *out = NULL; }
	}
}

/* A JSON restriction at p: the text of a balanced {...} or [...]. A
 * string in single quotes in it is condition text as DataJoint writes it
 * in a list (Subject & [{"species": "rat"}, 'weight > 50']): it becomes
 * the JSON string of that text (a backslash before the quote keeps the
 * quote, other backslashes are the condition's own, as in quoted()). */
static int json_cond(ps *p, char **out)
{
	sb_t b = SB_INIT;
	char open;
	size_t n = json_single_quotes(&b, p->s + p->i, 1, &open);
	if (open) {
		sb_free(&b);
		return err(p, open == '\'' ? "unterminated condition text in a JSON restriction" : "unbalanced JSON restriction");
	}
	p->i += n;
	*out = sb_steal(&b);
	return DJC_OK;
}

/* Condition text at p: '...' or "..." (quoted_text), unquoted. */
static int quoted(ps *p, char **out)
{
	sb_t b = SB_INIT;
	size_t e = quoted_text(p->s + p->i, (size_t)-1, &b);
	if (!e) {
		sb_free(&b);
		return err(p, "unterminated condition text");
	}
	p->i += e + 1;
	*out = sb_steal(&b);
	return DJC_OK;
}

/* l op r for op '&' or '-': r a JSON restriction or an expression (lower
 * is what r may be: a product for '-', a sub for '&'). */
static int restrict_by(ps *p, djc_expr **l, int neg, int (*lower)(ps *, djc_expr **))
{
	ws(p);
	djc_expr *r = NULL;
	int rc;
	if (p->s[p->i] == '{' || p->s[p->i] == '[') {
		char *j = NULL;
		if ((rc = json_cond(p, &j))) return rc;
		rc = neg ? djc_expr_anti(&r, p->c, *l, j) : djc_expr_restrict(&r, p->c, *l, j);
		free(j);
	} else if (p->s[p->i] == '\'' || p->s[p->i] == '"') {
		char *t = NULL;
		if ((rc = quoted(p, &t))) return rc;
		rc = neg ? djc_expr_anti(&r, p->c, *l, t) : djc_expr_restrict(&r, p->c, *l, t);
		free(t);
	} else {
		djc_expr *b;
		if ((rc = lower(p, &b))) return rc;
		rc = neg ? djc_expr_anti_expr(&r, p->c, *l, b) : djc_expr_restrict_expr(&r, p->c, *l, b);
		djc_expr_free(b);
	}
	djc_expr_free(*l);
	*l = r;
	return rc;
}

static int product(ps *p, djc_expr **out)
{
	int rc = post(p, out);
	while (!rc) {
		ws(p);
		if (p->s[p->i] != '*') return DJC_OK;
		p->i++;
		djc_expr *b, *j = NULL;
		if ((rc = post(p, &b))) break;
		rc = djc_expr_join(&j, p->c, *out, b);
		djc_expr_free(b);
		djc_expr_free(*out);
		*out = j;
	}
	djc_expr_free(*out);
	*out = NULL;
	return rc;
}

static int sub(ps *p, djc_expr **out)
{
	int rc = product(p, out);
	while (!rc) {
		ws(p);
		char op = p->s[p->i];
		if (op != '-' && op != '+') return DJC_OK;
		p->i++;
		if (op == '-') { rc = restrict_by(p, out, 1, product); continue; }
		djc_expr *b, *u = NULL;
		if ((rc = product(p, &b))) break;
		rc = djc_expr_union(&u, p->c, *out, b);
		djc_expr_free(b);
		djc_expr_free(*out);
		*out = u;
	}
	djc_expr_free(*out);
	*out = NULL;
	return rc;
}

static int expr(ps *p, djc_expr **out)
{
	*out = NULL;
	int rc = sub(p, out);
	while (!rc) {
		ws(p);
		/* a '-' here follows a JSON restriction: (A & {...}) - ... */
		char op = p->s[p->i];
		if (op != '&' && op != '-') return DJC_OK;
		p->i++;
		rc = op == '&' ? restrict_by(p, out, 0, sub) : restrict_by(p, out, 1, product);
	}
	djc_expr_free(*out);
	*out = NULL;
	return rc;
}

int alg_is_expr(djc_conn *c, const char *text)
{
	ps p = {c, text, 0};
	const char *m;
	for (ws(&p); p.s[p.i] == '('; ws(&p)) p.i++;
	size_t at = p.i, n = ident_len(&p, at);
	if (!n) return 0;
	p.i += n;
	while (p.s[p.i] == '.' && !method_next(&p, &m) && ident_len(&p, p.i + 1)) p.i += 1 + ident_len(&p, p.i + 1);
	size_t end = p.i;
	ws(&p);
	char ch = p.s[p.i];
	if (end - at == 1 && text[at] == 'U' && ch == '(') return 1;
	if (ch && strchr("&-*+", ch)) return 1;
	if (ch == '.') return method_next(&p, &m) == 1;
	if (ch && ch != ')') return 0;
	char *name = xstrndup(text + at, end - at);
	int is = c->pipe && pipeline_lookup(c->pipe, name);
	free(name);
	return is;
}

int alg_parse(djc_expr **out, djc_conn *c, const char *text)
{
	*out = NULL;
	ps p = {c, text ? text : "", 0};
	int rc = expr(&p, out);
	ws(&p);
	if (!rc && p.s[p.i]) {
		djc_expr_free(*out);
		*out = NULL;
		rc = err(&p, "unexpected text");
	}
	return rc;
}

int djc_expr_parse(djc_expr **out, djc_conn *c, const char *text)
{
	if (!c) return DJC_EINVAL;
	return alg_parse(out, c, text);
}
