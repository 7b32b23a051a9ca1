/* cond.c - condition text to query nodes (cond.h says the grammar). A
 * hand-written lexer and recursive-descent parser: every literal becomes
 * a value bound as a parameter, every name an attribute the caller's
 * heading resolves; nothing of the text reaches the SQL. */
#include "cond.h"
#include "util/near.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nesting deeper than this (parentheses, not) is refused: the parser is
 * recursive. */
#define COND_DEPTH_MAX 64

typedef enum tk {
	TK_END, TK_NAME, TK_STR, TK_NUM, TK_OP, TK_LP, TK_RP, TK_COMMA,
	TK_AND, TK_OR, TK_NOT, TK_IN, TK_BETWEEN, TK_LIKE, TK_IS, TK_NULL, TK_TRUE, TK_FALSE
} tk;

static const char *const KW[] = {"and", "or", "not", "in", "between", "like", "is", "null", "true", "false", NULL};

typedef struct tok {
	tk k;
	size_t at;           /* byte offset in the text */
	char *s;             /* TK_NAME, TK_STR (decoded), TK_NUM, TK_OP: its text (malloc'd) */
	size_t n;
} tok;

typedef struct cp {
	const char *text;
	size_t pos;          /* where the lexer is */
	tok t;               /* the current token */
	q_arena *a;
	const cond_heading *h;
	char *msg;
	int depth;
} cp;

/* The 1-based character (not byte) position of offset at. */
static size_t col_of(const cp *p, size_t at)
{
	size_t c = 1;
	for (size_t i = 0; i < at && p->text[i]; i++)
		if (((unsigned char)p->text[i] & 0xC0) != 0x80) c++;
	return c;
}

/* Record the first error: "condition, column N: ...". */
__attribute__((format(printf, 3, 4))) static int fail(cp *p, size_t at, const char *fmt, ...)
{
	if (p->msg) return DJC_EINVAL;
	sb_t b = SB_INIT;
	sb_printf(&b, "condition, column %zu: ", col_of(p, at));
	va_list ap;
	va_start(ap, fmt);
	char *m = NULL;
	if (vasprintf(&m, fmt, ap) < 0) m = NULL;
	va_end(ap);
	sb_add(&b, m ? m : "out of memory");
	free(m);
	p->msg = sb_steal(&b);
	return DJC_EINVAL;
}

/* How a token is shown in messages. */
static const char *tk_show(const tok *t)
{
	switch (t->k) {
	case TK_END: return "the end";
	case TK_LP: return "'('";
	case TK_RP: return "')'";
	case TK_COMMA: return "','";
	case TK_STR: return "a string";
	case TK_NUM: return "a number";
	case TK_NAME: return "a name";
	case TK_OP: return "an operator";
	default: return "a keyword";
	}
}

static int is_ident(int c) { return isalnum(c) || c == '_'; }

/* A string literal at p->pos (its quote): decoded into t. */
static int lex_string(cp *p, tok *t)
{
	const char *s = p->text;
	char q = s[p->pos];
	size_t i = p->pos + 1;
	sb_t b = SB_INIT;
	for (;; i++) {
		char c = s[i];
		if (!c) { sb_free(&b); return fail(p, t->at, "unterminated string (its %c is not closed)", q); }
		if (c == q && s[i + 1] == q) {   /* doubled, as SQL writes a quote inside */
			sb_addc(&b, c);
			i++;
			continue;
		}
		if (c == q) break;
		if (c != '\\') { sb_addc(&b, c); continue; }
		char e = s[++i];
		const char *from = "\\'\"ntr", *to = "\\'\"\n\t\r";
		const char *f = e ? strchr(from, e) : NULL;
		if (!f) {
			sb_free(&b);
			return fail(p, i - 1, "unknown escape in a string (use \\\\ \\' \\\" \\n \\t \\r)");
		}
		sb_addc(&b, to[f - from]);
	}
	t->k = TK_STR;
	t->n = b.len;
	t->s = sb_steal(&b);
	p->pos = i + 1;
	return DJC_OK;
}

/* A number at p->pos: -?digits[.digits][e[+-]digits], not followed by a
 * letter. */
static int lex_number(cp *p, tok *t)
{
	const char *s = p->text;
	size_t i = p->pos;
	if (s[i] == '-') i++;
	size_t d0 = i;
	while (isdigit((unsigned char)s[i])) i++;
	size_t nd = i - d0;
	if (s[i] == '.') { i++; while (isdigit((unsigned char)s[i])) { i++; nd++; } }
	if (nd && (s[i] == 'e' || s[i] == 'E')) {
		size_t e = i + 1;
		if (s[e] == '+' || s[e] == '-') e++;
		if (isdigit((unsigned char)s[e])) { i = e; while (isdigit((unsigned char)s[i])) i++; }
	}
	if (!nd || is_ident((unsigned char)s[i]) || s[i] == '.') return fail(p, t->at, "malformed number");
	t->k = TK_NUM;
	t->s = xstrndup(s + p->pos, i - p->pos);
	t->n = i - p->pos;
	p->pos = i;
	return DJC_OK;
}

/* A name (bare or `backquoted`) or keyword at p->pos. */
static int lex_name(cp *p, tok *t)
{
	const char *s = p->text;
	size_t i = p->pos;
	if (s[i] == '`') {
		const char *e = strchr(s + i + 1, '`');
		if (!e) return fail(p, t->at, "unterminated `name` (its ` is not closed)");
		if (e == s + i + 1) return fail(p, t->at, "empty `name`");
		t->k = TK_NAME;
		t->s = xstrndup(s + i + 1, (size_t)(e - s - i - 1));
		t->n = strlen(t->s);
		p->pos = (size_t)(e - s) + 1;
		return DJC_OK;
	}
	while (is_ident((unsigned char)s[i])) i++;
	t->k = TK_NAME;
	t->s = xstrndup(s + p->pos, i - p->pos);
	t->n = i - p->pos;
	p->pos = i;
	for (int k = 0; KW[k]; k++)
		if (!strcasecmp(t->s, KW[k])) t->k = (tk)(TK_AND + k);
	return DJC_OK;
}

/* An operator at p->pos: = <> != < <= > >=. */
static int lex_op(cp *p, tok *t)
{
	const char *s = p->text + p->pos;
	static const char *const ops[] = {"<>", "!=", "<=", ">=", "=", "<", ">", NULL};
	if (s[0] == '=' && s[1] == '=') return fail(p, t->at, "'==' is not an operator (use =)");
	for (int k = 0; ops[k]; k++) {
		size_t n = strlen(ops[k]);
		if (strncmp(s, ops[k], n)) continue;
		t->k = TK_OP;
		t->s = xstrdup(!strcmp(ops[k], "<>") ? "!=" : ops[k]);
		t->n = strlen(t->s);
		p->pos += n;
		return DJC_OK;
	}
	return fail(p, t->at, "unexpected character '%c'", *s);
}

/* The next token into p->t (the previous one freed). */
static int next(cp *p)
{
	free(p->t.s);
	p->t = (tok){TK_END, 0, NULL, 0};
	const char *s = p->text;
	while (isspace((unsigned char)s[p->pos])) p->pos++;
	tok *t = &p->t;
	t->at = p->pos;
	unsigned char c = (unsigned char)s[p->pos];
	if (!c) return DJC_OK;
	if (c == '(' || c == ')' || c == ',') {
		t->k = c == '(' ? TK_LP : c == ')' ? TK_RP : TK_COMMA;
		p->pos++;
		return DJC_OK;
	}
	if (c == ';') return fail(p, t->at, "';' is not part of a condition (one condition, no statements)");
	if (c == '#' || (c == '-' && s[p->pos + 1] == '-') || (c == '/' && s[p->pos + 1] == '*'))
		return fail(p, t->at, "comments are not part of a condition");
	if (c == '\'' || c == '"') return lex_string(p, t);
	if (isdigit(c) || c == '.' || (c == '-' && (isdigit((unsigned char)s[p->pos + 1]) || s[p->pos + 1] == '.')))
		return lex_number(p, t);
	if (c == '`' || isalpha(c) || c == '_') return lex_name(p, t);
	if (strchr("=<>!", c)) return lex_op(p, t);
	if (c < 0x20 || c >= 0x7f) return fail(p, t->at, "unexpected character (byte 0x%02x)", c);
	return fail(p, t->at, "unexpected character '%c'", c);
}

/* -------------------------------------------------------------- names */

/* The name in token t resolved, or an error naming it with the nearest
 * valid name and the list of them. */
static int resolve(cp *p, const tok *t, cond_ref *r)
{
	if (!p->h->resolve(p->h->ctx, t->s, r)) return DJC_OK;
	size_t n = p->h->names(p->h->ctx, NULL, 0);
	const char **names = xcalloc(n + 1, sizeof(char *));
	p->h->names(p->h->ctx, names, n);
	sb_t all = SB_INIT, q = SB_INIT;
	for (size_t i = 0; i < n && i <= 30; i++)
		if (i < 30) sb_printf(&all, "%s%s", i ? ", " : "", names[i]);
		else sb_printf(&all, ", ... (%zu in all)", n);
	const char *near = near_name(t->s, names, n);
	json_quote(&q, t->s, strlen(t->s));
	fail(p, t->at, "%s is not %s (%s%s%sthe valid names: %s)", sb_str(&q), p->h->what, near ? "did you mean " : "",
	     near ? near : "", near ? "? " : "", n ? sb_str(&all) : "none");
	sb_free(&all);
	sb_free(&q);
	free(names);
	return DJC_EINVAL;
}

/* ------------------------------------------------------------- values */

static int is_value(tk k) { return k == TK_STR || k == TK_NUM || k == TK_TRUE || k == TK_FALSE || k == TK_NULL; }

/* Exponents beyond this are no decimal's (MySQL's have at most 65 digits). */
#define COND_EXP_MAX 100

/* A number -?digits[.digits]e[+-]digits written out in plain digits into
 * b, exactly (1.5e2 is 150, 25e-3 is 0.025): a decimal compares with it as
 * MySQL compares a decimal with that double. -1 when the exponent is beyond
 * COND_EXP_MAX either way. */
static int plain_digits(const char *s, sb_t *b)
{
	const char *e = strpbrk(s, "eE");
	if (*s == '-') sb_addc(b, *s++);
	long x = strtol(e + 1, NULL, 10);
	if (x > COND_EXP_MAX || x < -COND_EXP_MAX) return -1;
	sb_t d = SB_INIT;       /* the mantissa's digits, the point dropped */
	long point = -1;        /* how many of them are before the point */
	for (const char *q = s; q < e; q++)
		if (*q == '.') point = (long)d.len;
		else sb_addc(&d, *q);
	if (point < 0) point = (long)d.len;
	point += x;
	if (point <= 0) {
		sb_add(b, "0.");
		for (long i = point; i < 0; i++) sb_addc(b, '0');
		sb_addn(b, sb_str(&d), d.len);
	} else if ((size_t)point >= d.len) {
		sb_addn(b, sb_str(&d), d.len);
		for (size_t i = d.len; i < (size_t)point; i++) sb_addc(b, '0');
	} else {
		sb_addn(b, sb_str(&d), (size_t)point);
		sb_addc(b, '.');
		sb_addn(b, sb_str(&d) + point, d.len - (size_t)point);
	}
	sb_free(&d);
	return 0;
}

/* A number's text as the value an attribute of r's type is checked from. */
static val_t num_val(const attr *a, const char *s)
{
	if (a->type.t == T_DECIMAL || a->type.t == T_UINT64) {
		if (!strpbrk(s, "eE")) return val_text(s);
		sb_t b = SB_INIT;
		val_t v = plain_digits(s, &b) ? val_null() : val_textn(sb_str(&b), b.len);
		sb_free(&b);
		return v;   /* null: the exponent is out of range (lit_val says so) */
	}
	if (!strpbrk(s, ".eE")) {
		errno = 0;
		long long v = strtoll(s, NULL, 10);
		if (!errno) return val_int(v);
		if (*s != '-') {
			errno = 0;
			unsigned long long u = strtoull(s, NULL, 10);
			if (!errno) { val_t x = val_null(); x.t = VAL_UINT; x.u = u; return x; }
		}
	}
	return val_float(strtod(s, NULL));
}

int cond_date_of_datetime(const attr *a, const char *s, size_t n, val_t *out, int *after)
{
	attr dt = *a;
	dt.type.t = T_DATETIME;
	dt.type.p = 6;
	json_t *j = json_stringn(s, n);
	val_t v;
	char *m = NULL;
	int rc = j ? value_from_json(&dt, j, &v, &m) : DJC_EINVAL;
	json_decref(j);
	free(m);
	if (rc) return -1;
	*after = strspn(v.s + 10, " 0:.") != strlen(v.s + 10);   /* "YYYY-MM-DD HH:MM:SS.ffffff" */
	*out = val_textn(v.s, 10);
	val_free(&v);
	return 0;
}

/* The literal token t as a value of r's attribute, or an error at t.
 * *after: 0, or 1 when t is a datetime after midnight compared with a date
 * (*out its date; cmp_node compares so). */
static int lit_val(cp *p, const tok *t, const cond_ref *r, val_t *out, int *after)
{
	char *m = NULL;
	const char *date_more = "";
	int rc;
	*after = 0;
	if (t->k == TK_NUM) {
		val_t in = num_val(r->a, t->s);
		if (in.t == VAL_NULL)
			return fail(p, t->at, "attribute '%s' (%s): %s is out of its range (an exponent beyond +-%d)", r->a->name,
				    r->a->type_text, t->s, COND_EXP_MAX);
		if (in.t == DJC_FLOAT && isinf(in.f))   /* 1e400: beyond a double, not Infinity (as the servers say) */
			return fail(p, t->at, "attribute '%s' (%s): %s is out of a float64's range", r->a->name, r->a->type_text, t->s);
		rc = value_cmp(r->a, &in, out, &m);
		val_free(&in);
	} else {
		json_t *j = t->k == TK_STR ? json_stringn(t->s, t->n) : t->k == TK_TRUE ? json_true() : json_false();
		rc = j ? value_cmp_json(r->a, j, out, &m) : DJC_EINVAL;
		json_decref(j);
		if (rc && t->k == TK_STR && r->a->type.t == T_DATE) {
			if (!cond_date_of_datetime(r->a, t->s, t->n, out, after)) rc = DJC_OK;
			else if (m && strstr(m, "is not a date YYYY-MM-DD")) date_more = " or a datetime YYYY-MM-DD HH:MM[:SS[.ffffff]]";
		}
	}
	if (!rc) { free(m); return DJC_OK; }
	fail(p, t->at, "%s%s", m ? m : "not a valid string (invalid UTF-8)", date_more);
	free(m);
	return DJC_EINVAL;
}

/* The current token, a literal value (not null), taken: into *t. */
static int take_lit(cp *p, const cond_ref *r, tok *t, const char *what)
{
	if (p->t.k == TK_NULL)
		return fail(p, p->t.at, "null is not a value to compare with (test '%s is null' or '%s is not null')",
			    r->a->name, r->a->name);
	if (p->t.k == TK_NAME)
		return fail(p, p->t.at, "%s compares '%s' with a value, not with an attribute ('%s')", what, r->a->name,
			    p->t.s);
	if (!is_value(p->t.k)) return fail(p, p->t.at, "%s needs a value here, found %s", what, tk_show(&p->t));
	*t = p->t;
	p->t.s = NULL;
	return next(p);
}

q_node *cond_cmp(q_arena *a, q_col c, const coldef *ty, const char *op, val_t x, int after)
{
	if (!after) return q_cmp_t(a, c, op, x, ty);
	if (op[0] == '<') return q_cmp_t(a, c, "<=", x, ty);
	if (op[0] == '>') return q_cmp_t(a, c, ">", x, ty);
	val_t y;
	val_copy(&y, &x);
	q_node *never = q_and(a);   /* false for every date, null for a null (so that not keeps it null) */
	q_add(a, never, q_cmp_t(a, c, "<", x, ty));
	q_add(a, never, q_cmp_t(a, c, ">", y, ty));
	return op[0] == '=' ? never : q_not(a, never);
}

static q_node *cmp_node(cp *p, const cond_ref *r, const char *op, val_t x, int after)
{
	return cond_cmp(p->a, r->col, &r->a->type, op, x, after);
}

/* Whether r's type allows operator op (json: only is [not] null; like:
 * text). */
static int op_ok(cp *p, const cond_ref *r, size_t at, const char *op)
{
	const attr *a = r->a;
	if (a->type.t == T_JSON)
		return fail(p, at, "json attribute '%s' can only be tested with 'is null' or 'is not null'", a->name);
	int text = a->type.t == T_CHAR || a->type.t == T_VARCHAR || a->type.t == T_ENUM || a->type.t == T_TEXT;
	if (!strcmp(op, "like") && !text)
		return fail(p, at, "'like' matches text, and attribute '%s' is %s", a->name, a->type_text);
	return DJC_OK;
}

/* ---------------------------------------------------------- predicates */

static int parse_or(cp *p, q_node **out);

/* r op value (the operator the current token). */
static int pred_cmp(cp *p, const cond_ref *r, q_node **out)
{
	const char *op = p->t.s[0] == '!' ? "!=" : p->t.s[0] == '=' ? "=" : p->t.s[0] == '<' ?
		(p->t.s[1] == '=' ? "<=" : "<") : (p->t.s[1] == '=' ? ">=" : ">");   /* static: the node outlives the token */
	int rc = op_ok(p, r, p->t.at, op);
	if (!rc) rc = next(p);
	tok v = {0};
	val_t x;
	int after;
	if (!rc) rc = take_lit(p, r, &v, "a comparison");
	if (!rc) rc = lit_val(p, &v, r, &x, &after);
	free(v.s);
	if (rc) return rc;
	*out = cmp_node(p, r, op, x, after);
	return DJC_OK;
}

/* r [not] in (value, ...): the current token is after "in". A datetime
 * after midnight compared with a date (lit_val) equals none: it is left out
 * of the list (a list of only such is cmp_node's "never"). */
static int pred_in(cp *p, const cond_ref *r, int neg, size_t at, q_node **out)
{
	int rc = op_ok(p, r, at, "in");
	if (rc) return rc;
	if (p->t.k != TK_LP) return fail(p, p->t.at, "'in' takes a list in parentheses: %s in (1, 2)", r->a->name);
	size_t n = 0, cap = 8;
	val_t *vals = xcalloc(cap, sizeof(val_t)), never = val_null();
	int after;
	rc = next(p);
	if (!rc && p->t.k == TK_RP) rc = fail(p, p->t.at, "'in' takes at least one value");
	while (!rc) {
		tok v = {0};
		if (p->t.k == TK_NULL) rc = fail(p, p->t.at, "null in an 'in' list matches nothing (test '%s is null')", r->a->name);
		if (!rc) rc = take_lit(p, r, &v, "an 'in' list");
		if (n == cap) vals = realloc(vals, (cap *= 2) * sizeof(val_t));
		if (!rc && !(rc = lit_val(p, &v, r, &vals[n], &after)) && after && never.t == VAL_NULL) never = vals[n];
		else if (!rc && after) val_free(&vals[n]);
		else if (!rc) n++;
		free(v.s);
		if (rc || p->t.k == TK_RP) break;
		if (p->t.k != TK_COMMA) rc = fail(p, p->t.at, "expected ',' or ')' in the 'in' list, found %s", tk_show(&p->t));
		else rc = next(p);
	}
	if (!rc) rc = next(p);
	if (rc || n) val_free(&never);
	if (rc || !n) {
		if (!rc) *out = cmp_node(p, r, neg ? "!=" : "=", never, 1);
		for (size_t i = 0; i < n; i++) val_free(&vals[i]);
		free(vals);
		return rc;
	}
	q_col cs[1] = {r->col};
	const coldef **types = q_alloc(p->a, sizeof *types);
	types[0] = &r->a->type;
	*out = q_in(p->a, cs, types, 1, vals, n, neg);
	free(vals);
	return DJC_OK;
}

/* r [not] between lo and hi: lo <= r and r <= hi. */
static int pred_between(cp *p, const cond_ref *r, int neg, size_t at, q_node **out)
{
	tok lo = {0}, hi = {0};
	val_t vl, vh;
	int al, ah;
	int rc = op_ok(p, r, at, "between");
	if (!rc) rc = take_lit(p, r, &lo, "'between'");
	if (!rc && p->t.k != TK_AND) rc = fail(p, p->t.at, "'between' takes two values: %s between 1 and 5", r->a->name);
	if (!rc) rc = next(p);
	if (!rc) rc = take_lit(p, r, &hi, "'between'");
	if (!rc) rc = lit_val(p, &lo, r, &vl, &al);
	if (!rc && (rc = lit_val(p, &hi, r, &vh, &ah))) val_free(&vl);
	free(lo.s);
	free(hi.s);
	if (rc) return rc;
	q_node *x = q_and(p->a);
	q_add(p->a, x, cmp_node(p, r, ">=", vl, al));
	q_add(p->a, x, cmp_node(p, r, "<=", vh, ah));
	*out = neg ? q_not(p->a, x) : x;
	return DJC_OK;
}

/* r [not] like 'pattern' (% and _ the wildcards). */
static int pred_like(cp *p, const cond_ref *r, int neg, size_t at, q_node **out)
{
	int rc = op_ok(p, r, at, "like");
	if (rc) return rc;
	if (p->t.k != TK_STR) return fail(p, p->t.at, "'like' takes a string pattern: %s like \"m%%\"", r->a->name);
	if (memchr(p->t.s, '\\', p->t.n))
		return fail(p, p->t.at, "a 'like' pattern with a backslash matches differently on each backend");
	tok v = {0};
	val_t x;
	rc = take_lit(p, r, &v, "'like'");
	if (!rc) {
		/* the pattern as text (a char(n) value keeps its blanks: they match) */
		x = val_textn(v.s, v.n);
	}
	free(v.s);
	if (rc) return rc;
	*out = q_cmp_t(p->a, r->col, neg ? "NOT LIKE" : "LIKE", x, &r->a->type);
	return DJC_OK;
}

/* r is [not] null. */
static int pred_is(cp *p, const cond_ref *r, q_node **out)
{
	int neg = 0;
	int rc = next(p);
	if (!rc && p->t.k == TK_NOT) { neg = 1; rc = next(p); }
	if (!rc && p->t.k != TK_NULL)
		return fail(p, p->t.at, "'is' takes null: %s is null, %s is not null", r->a->name, r->a->name);
	if (!rc) rc = next(p);
	if (rc) return rc;
	*out = q_null(p->a, r->col, neg);
	return DJC_OK;
}

/* What follows a name: an operator, [not] in / between / like, is. */
static int pred_after_name(cp *p, const tok *name, const cond_ref *r, q_node **out)
{
	if (p->t.k == TK_OP) return pred_cmp(p, r, out);
	if (p->t.k == TK_IS) return pred_is(p, r, out);
	int neg = 0, rc;
	if (p->t.k == TK_NOT) {
		neg = 1;
		if ((rc = next(p))) return rc;
		if (p->t.k != TK_IN && p->t.k != TK_BETWEEN && p->t.k != TK_LIKE)
			return fail(p, p->t.at, "'not' after a name goes with in, between or like");
	}
	tk k = p->t.k;
	size_t at = p->t.at;
	if (k == TK_IN || k == TK_BETWEEN || k == TK_LIKE) {
		if ((rc = next(p))) return rc;
		return k == TK_IN ? pred_in(p, r, neg, at, out) : k == TK_BETWEEN ? pred_between(p, r, neg, at, out)
			: pred_like(p, r, neg, at, out);
	}
	if (k == TK_END || k == TK_RP || k == TK_AND || k == TK_OR)
		return fail(p, name->at, "'%s' alone is not a condition (compare it: %s = ...)", name->s, name->s);
	return fail(p, p->t.at, "expected an operator after '%s', found %s", name->s, tk_show(&p->t));
}

/* value op name: the comparison turned round (3 < x is x > 3). */
static int pred_value_first(cp *p, q_node **out)
{
	tok v = p->t;
	p->t.s = NULL;
	int rc = next(p);
	if (!rc && p->t.k != TK_OP) rc = fail(p, v.at, "a value alone is not a condition (compare an attribute with it)");
	tok op = {0};
	if (!rc) { op = p->t; p->t.s = NULL; rc = next(p); }
	if (!rc && is_value(p->t.k))
		rc = fail(p, v.at, "this compares two values: a condition compares an attribute with a value");
	if (!rc && p->t.k != TK_NAME) rc = fail(p, p->t.at, "expected an attribute after the operator, found %s", tk_show(&p->t));
	cond_ref r;
	if (!rc) rc = resolve(p, &p->t, &r);
	if (!rc && v.k == TK_NULL) rc = fail(p, v.at, "null is not a value to compare with (test '%s is null')", r.a->name);
	if (!rc) rc = next(p);
	if (!rc) {
		static const char *const from[] = {"=", "!=", "<", "<=", ">", ">="}, *const to[] = {"=", "!=", ">", ">=", "<", "<="};
		const char *flip = "=";
		for (int i = 0; i < 6; i++)
			if (!strcmp(op.s, from[i])) flip = to[i];
		val_t x;
		int after;
		if (!(rc = op_ok(p, &r, op.at, flip)) && !(rc = lit_val(p, &v, &r, &x, &after)))
			*out = cmp_node(p, &r, flip, x, after);
	}
	free(v.s);
	free(op.s);
	return rc;
}

/* unary := "not" unary | "(" or ")" | pred */
static int parse_unary(cp *p, q_node **out)
{
	int rc;
	if (++p->depth > COND_DEPTH_MAX) return fail(p, p->t.at, "nested more than %d deep", COND_DEPTH_MAX);
	if (p->t.k == TK_NOT) {
		q_node *x;
		if ((rc = next(p)) || (rc = parse_unary(p, &x))) return rc;
		*out = q_not(p->a, x);
	} else if (p->t.k == TK_LP) {
		size_t at = p->t.at;
		if ((rc = next(p)) || (rc = parse_or(p, out))) return rc;
		if (p->t.k != TK_RP) {
			if (p->t.k == TK_END) return fail(p, at, "unbalanced parentheses: this '(' is not closed");
			return fail(p, p->t.at, "expected ')' or and/or, found %s", tk_show(&p->t));
		}
		if ((rc = next(p))) return rc;
	} else if (p->t.k == TK_NAME) {
		tok name = p->t;
		cond_ref r;
		p->t.s = NULL;
		rc = resolve(p, &name, &r);
		if (!rc) rc = next(p);
		if (!rc) rc = pred_after_name(p, &name, &r, out);
		free(name.s);
		if (rc) return rc;
	} else if (is_value(p->t.k)) {
		if ((rc = pred_value_first(p, out))) return rc;
	} else if (p->t.k == TK_END)
		return fail(p, p->t.at, p->t.at ? "the condition ends where a condition is expected" : "empty condition");
	else
		return fail(p, p->t.at, "expected a condition, found %s", p->t.k == TK_RP ? "')' (unbalanced parentheses)" :
			    tk_show(&p->t));
	p->depth--;
	return DJC_OK;
}

/* and := unary ("and" unary)*; or := and ("or" and)* */
static int parse_list(cp *p, tk sep, q_node **out)
{
	q_node *x, *list = NULL;
	int rc = sep == TK_OR ? parse_list(p, TK_AND, &x) : parse_unary(p, &x);
	while (!rc && p->t.k == sep) {
		if (!list) { list = sep == TK_OR ? q_or(p->a) : q_and(p->a); q_add(p->a, list, x); }
		if ((rc = next(p))) break;
		rc = sep == TK_OR ? parse_list(p, TK_AND, &x) : parse_unary(p, &x);
		if (!rc) q_add(p->a, list, x);
	}
	if (!rc) *out = list ? list : x;
	return rc;
}

static int parse_or(cp *p, q_node **out) { return parse_list(p, TK_OR, out); }

int cond_compile(q_node **out, q_arena *a, const char *text, const cond_heading *h, char **msg)
{
	*out = NULL;
	*msg = NULL;
	cp p = {text ? text : "", 0, {TK_END, 0, NULL, 0}, a, h, NULL, 0};
	q_node *x = NULL;
	int rc = next(&p);
	if (!rc) rc = parse_or(&p, &x);
	if (!rc && p.t.k != TK_END)
		rc = fail(&p, p.t.at, p.t.k == TK_RP ? "unbalanced parentheses: this ')' closes nothing" :
			  "unexpected %s after a complete condition (join conditions with and/or)", tk_show(&p.t));
	free(p.t.s);
	if (rc) {
		*msg = p.msg ? p.msg : xstrdup("condition: invalid");
		return DJC_EINVAL;
	}
	*out = x;
	return DJC_OK;
}

int cond_is_text(const char *where)
{
	if (!where) return 0;
	while (isspace((unsigned char)*where)) where++;
	return *where && *where != '{' && *where != '[';
}
