/* expand.c - the one expander of statements of fixed shape (expand.h). */
#include "expand.h"
#include "djc.h"
#include <stdio.h>
#include <string.h>

int sql_bad(sql_exp *e, const char *what, const sql_frag *f)
{
	snprintf(e->err, sizeof e->err, "%s %s: %s {%.*s}", e->kind, e->s->name, what, (int)f->n, f->text);
	return DJC_ERROR;
}

int sql_take_arg(sql_exp *e, const sql_frag *f)
{
	if (e->ai >= e->nargs) {
		if (f) return sql_bad(e, "no argument for", f);
		snprintf(e->err, sizeof e->err, "%s %s: more ? than the %zu arguments", e->kind, e->s->name, e->nargs);
		return DJC_ERROR;
	}
	val_t v;
	val_copy(&v, &e->args[e->ai++]);
	sql_push(e, v);
	return DJC_OK;
}

/* The fragments every domain shares (expand.h); SQL_FRAG_UNKNOWN for
 * the others. */
static int common_frag(sql_exp *e, const sql_frag *f)
{
	if (SQL_FRAG_IS(f, "now")) db_now(e->db, e->q);
	else if (SQL_FRAG_IS(f, "now+?")) {
		if (e->ai >= e->nargs) return sql_bad(e, "no argument for", f);
		db_now_plus(e->db, e->q);
		return sql_take_arg(e, f);
	} else if (SQL_FRAG_IS(f, "insert_ignore")) sb_add(e->q, db_insert_ignore_head(e->db));
	else if (SQL_FRAG_IS(f, "insert_ignore_tail")) sb_add(e->q, db_insert_ignore_tail(e->db));
	else if (SQL_FRAG_IS(f, "table_suffix")) sb_add(e->q, e->db->table_suffix);
	else return SQL_FRAG_UNKNOWN;
	return DJC_OK;
}

/* The fragment that starts at *p (just after its '{'): its expansion, and
 * *p moved past its '}'. */
static int fragment(sql_exp *e, const char **p)
{
	sql_frag f = {.text = *p};
	const char *end = strchr(f.text, '}');
	if (!end) {
		f.n = strlen(f.text);
		return sql_bad(e, "unterminated", &f);
	}
	f.n = (size_t)(end - f.text);
	*p = end + 1;
	const char *colon = memchr(f.text, ':', f.n);
	f.head = colon ? (size_t)(colon - f.text) : f.n;
	if (colon) {
		f.arg = colon + 1;
		f.an = f.n - f.head - 1;
	}
	int rc = common_frag(e, &f);
	if (rc == SQL_FRAG_UNKNOWN && e->frag) rc = e->frag(e, &f);
	if (rc == SQL_FRAG_UNKNOWN) rc = sql_bad(e, "unknown fragment", &f);
	return rc;
}

int sql_expand(sql_exp *e)
{
	e->ai = 0;
	e->err[0] = 0;
	int rc = DJC_OK;
	for (const char *s0 = e->s->sql; *s0 && !rc;) {
		if (*s0 == '\'') {
			/* a literal: copied as is */
			const char *end = strchr(s0 + 1, '\'');
			size_t n = end ? (size_t)(end - s0) + 1 : strlen(s0);
			sb_addn(e->q, s0, n);
			s0 += n;
		} else if (*s0 == '?') {
			rc = sql_take_arg(e, NULL);
			if (!rc) sb_addc(e->q, '?');
			s0++;
		} else if (*s0 == '{') {
			s0++;
			rc = fragment(e, &s0);
		} else
			sb_addc(e->q, *s0++);
	}
	if (!rc && e->ai != e->nargs) {
		snprintf(e->err, sizeof e->err, "%s %s: %zu arguments given, %zu used", e->kind, e->s->name, e->nargs, e->ai);
		rc = DJC_ERROR;
	}
	return rc;
}
