/* names.c - the SQL names djc derives from a table's SQL name: its jobs
 * table, the attempt history beside it, their indexes, the table's own
 * indexes and foreign keys. Each is the natural name (DataJoint's and
 * earlier djc's: `~~name`, `~~name__history`, `~~name_next`, ...) while it
 * fits 63 characters (PostgreSQL keeps 63, MariaDB 64); a longer one is
 * shortened to exactly 63 by a rule that never changes (docs/schema.md):
 *
 *     stem cut + "_" + 9 decimal digits + suffix
 *
 * the digits being FNV-1a (64 bits) of the whole natural name, modulo 10^9.
 * A pure function of the table's name, so every process and every later
 * version finds the same tables. No natural name has "_" followed by a
 * digit (snake case puts "_" before a letter only), so a shortened name is
 * never another table's natural one; two shortened names that happen to be
 * equal are refused at declare (parse.c). */
#include "schema.h"
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

int sql_derived_name(sb_t *b, const char *stem, const char *suffix)
{
	size_t ns = strlen(stem), nx = strlen(suffix);
	if (ns + nx <= SQL_DERIVED_MAX) {
		sb_add(b, stem);
		sb_add(b, suffix);
		return 0;
	}
	uint64_t h = 0xcbf29ce484222325ULL;   /* FNV-1a over stem, then suffix */
	for (const char *s = stem; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	for (const char *s = suffix; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	size_t keep = SQL_DERIVED_MAX - nx - 10;
	sb_printf(b, "%.*s_%09u%s", (int)keep, stem, (unsigned)(h % 1000000000u), suffix);
	return 1;
}

/* "~~" and the table's SQL name without its tier's leading underscores
 * (DataJoint's rule: "~~" + table_name.lstrip("_")); qualified,
 * "~~" + schema + "__" + that. No table's natural stem has "__" (a
 * DataJoint name with "__" is a part's, which has no jobs table), so a
 * qualified stem is never another table's natural one. */
static void jobs_stem(sb_t *b, const table *t)
{
	const char *s = t->sql_name;
	while (*s == '_') s++;
	sb_add(b, "~~");
	if (t->jobs_qual) sb_printf(b, "%s__", t->adopted);
	sb_add(b, s);
}

void table_jobs_names(table *t)
{
	sb_t stem = SB_INIT, b = SB_INIT;
	jobs_stem(&stem, t);
	sql_derived_name(&b, sb_str(&stem), "");
	t->jobs_name = sb_steal(&b);
	sql_derived_name(&b, sb_str(&stem), "__history");
	t->hist_name = sb_steal(&b);
	sb_free(&stem);
}

void table_jobs_qualify(table *t)
{
	free(t->jobs_name);
	free(t->hist_name);
	t->jobs_qual = 1;
	table_jobs_names(t);
}

int table_jobs_index(sb_t *b, const table *t, const char *suffix)
{
	sb_t stem = SB_INIT, sx = SB_INIT;
	jobs_stem(&stem, t);
	sb_printf(&sx, "_%s", suffix);
	int cut = sql_derived_name(b, sb_str(&stem), sb_str(&sx));
	sb_free(&stem);
	sb_free(&sx);
	return cut;
}

int table_index_name(sb_t *b, const table *t, size_t i)
{
	char sx[32];
	snprintf(sx, sizeof sx, "_i%zu", i);
	return sql_derived_name(b, t->sql_name, sx);
}

int table_fk_name(sb_t *b, const table *t, size_t i)
{
	char sx[32];
	snprintf(sx, sizeof sx, "_ibfk_%zu", i + 1);
	return sql_derived_name(b, t->sql_name, sx);
}

/* Every derived name of t that was shortened; *n of them, caller frees. */
static char **shortened(const table *t, size_t *n)
{
	char **v = xcalloc(4 + t->nidx + t->nfks, sizeof(char *));
	sb_t b = SB_INIT, stem = SB_INIT;
	*n = 0;
#define KEEP(expr) do { sb_reset(&b); if (expr) v[(*n)++] = xstrdup(sb_str(&b)); } while (0)
	if (t->jobs_name) {
		jobs_stem(&stem, t);
		KEEP(sql_derived_name(&b, sb_str(&stem), ""));
		KEEP(sql_derived_name(&b, sb_str(&stem), "__history"));
		KEEP(table_jobs_index(&b, t, "next"));
		KEEP(table_jobs_index(&b, t, "lease"));
	}
	/* an adopted table's indexes and foreign keys are DataJoint's: djc
	 * names none of them */
	for (size_t i = 0; !t->adopted && i < t->nidx; i++) KEEP(table_index_name(&b, t, i));
	for (size_t i = 0; !t->adopted && i < t->nfks; i++) KEEP(table_fk_name(&b, t, i));
#undef KEEP
	sb_free(&b);
	sb_free(&stem);
	return v;
}

const char *table_names_clash(const table *a, const table *b, char *buf, size_t n)
{
	size_t na, nb;
	char **va = shortened(a, &na), **vb = shortened(b, &nb);
	const char *hit = NULL;
	for (size_t i = 0; i < na && !hit; i++)
		for (size_t k = 0; k < nb && !hit; k++)
			if (!strcmp(va[i], vb[k])) {
				snprintf(buf, n, "%s", va[i]);
				hit = buf;
			}
	for (size_t i = 0; i < na; i++) free(va[i]);
	for (size_t k = 0; k < nb; k++) free(vb[k]);
	free(va);
	free(vb);
	return hit;
}

const char *table_sqlref(const table *t)
{
	return t->sqlref ? t->sqlref : t->sql_name;
}

void table_qname(db_conn *db, sb_t *b, const table *t)
{
	db_qtable(db, b, table_sqlref(t));
}

char *table_adopted_refusal(const table *t)
{
	return xasprintf("%s is adopted from DataJoint schema %s: djc does not change its definition", t->name, t->adopted);
}

int attr_server_filled(const attr *a)
{
	return a->raw && (a->has_def || a->nullable);
}

const attr *table_raw_attr(const table *t)
{
	for (size_t i = 0; i < t->nattrs; i++)
		if (t->attrs[i].raw && !attr_server_filled(&t->attrs[i])) return &t->attrs[i];
	return NULL;
}

size_t table_aux_tables(const table *t, const char **names, size_t max)
{
	size_t n = 0;
	/* the jobs table of a computed or imported table, and the attempt
	 * history of its jobs beside it */
	if (t->jobs_name && n < max) names[n++] = t->jobs_name;
	if (t->hist_name && n < max) names[n++] = t->hist_name;
	return n;
}
