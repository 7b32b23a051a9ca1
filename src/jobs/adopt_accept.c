/* adopt_accept.c - djc adopt --accept-changes (jobs.h, docs/adopt.md "When
 * DataJoint changes an adopted table"): adopting again takes DataJoint's
 * current definitions of the adopted tables it changed, instead of
 * refusing them, without unadopt (which drops the jobs of every table of
 * the schema). Declared as any adopt is (tbl_declare), with three hooks
 * under its schema-change lock (tbl_accept):
 * - before: the adopted tables DataJoint dropped (and their parts) are
 *   forgotten as unadopt forgets them, their jobs tables dropped (last);
 * - renew, per changed table: its stored text is the new one; its jobs
 *   and history tables are kept, rows and all, when the jobs table's DDL
 *   is the same for the new definition (the key source's attribute names,
 *   order and column types: jobs are keyed by them, statements.c), their
 *   datetime key columns widened in place when only those gain digits,
 *   else made anew (the old ones dropped last);
 * - after: the drops, in one statement where DDL is not transactional.
 * All or nothing: where DDL is transactional (PostgreSQL) it is one
 * transaction; on MariaDB/MySQL a jobs table made anew is first renamed
 * out of the way (undone by renaming it back) and every drop is the last
 * step, so a failure before it changes nothing. */
#include "jobs.h"
#include "sql.h"
#include "table/statements.h"
#include "sql/ddl.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct accept_ctx {
	const char *const *schemas;
	size_t n;
	const char **drops;   /* SQL tables dropped last (names owned by tables or by moved) */
	size_t ndrops;
	char **moved;         /* names the renamed tables took */
	size_t nmoved;
	char **renewed;       /* the tables given a new definition */
	size_t nrenewed;
	table **gone;         /* the tables forgotten */
	size_t ngone;
} accept_ctx;

static void ctx_reset(accept_ctx *a)
{
	for (size_t i = 0; i < a->nmoved; i++) free(a->moved[i]);
	for (size_t i = 0; i < a->nrenewed; i++) free(a->renewed[i]);
	free(a->moved);
	free(a->renewed);
	free(a->drops);
	free(a->gone);
	a->moved = a->renewed = NULL;
	a->drops = NULL;
	a->gone = NULL;
	a->nmoved = a->nrenewed = a->ndrops = a->ngone = 0;
}

static void drop_later(accept_ctx *a, const char *name)
{
	a->drops = xrealloc(a->drops, (a->ndrops + 1) * sizeof *a->drops);
	a->drops[a->ndrops++] = name;
}

static int named_schema(const accept_ctx *a, const char *s)
{
	for (size_t i = 0; s && i < a->n; i++)
		if (!strcmp(a->schemas[i], s)) return 1;
	return 0;
}

/* How many rows the SQL table has (-1: it is not there). */
static int rows_of(djc_conn *c, const char *sql_name, long long *n)
{
	int rc = sql_count(c, sql_name, n);
	return rc ? conn_dbfail(c, rc, sql_name) : DJC_OK;
}

/* The tables adopted from the named schemas that DataJoint dropped, and
 * their parts: forgotten (their stored definitions, undone on failure),
 * their auxiliary tables dropped last. A table djc declared itself that
 * references one is refused: djc drop it first. */
static int accept_before(djc_conn *c, schema_tx *x, void *ctx, sb_t *rep)
{
	accept_ctx *a = ctx;
	ctx_reset(a);   /* a retried attempt starts again */
	const pipeline *p = c->pipe;
	char *gone = NULL;
	int rc = adopt_missing(c, &gone);
	p = c->pipe;
	for (size_t i = 0; !rc && i < p->n; i++)
		if (!named_schema(a, p->tables[i]->adopted)) gone[i] = 0;
	for (size_t i = 0; !rc && i < p->n; i++)   /* a part goes with its master */
		for (size_t k = 0; k < p->n; k++)
			if (gone[k] && p->tables[i]->master == p->tables[k]) gone[i] = 1;
	for (size_t i = 0; !rc && i < p->n; i++) {
		const table *t = p->tables[i];
		if (gone[i] || t->adopted) continue;   /* an adopted one is checked in after */
		for (size_t f = 0; f < t->nfks && !rc; f++)
			for (size_t k = 0; k < p->n && !rc; k++)
				if (gone[k] && t->fks[f].ptable == p->tables[k])
					rc = conn_fail(c, DJC_ECONFLICT,
						       "adopt: table %s references %s, which DataJoint dropped: djc forgets "
						       "%s only when nothing djc declared depends on it (djc drop %s first)",
						       t->name, p->tables[k]->name, p->tables[k]->name, t->name);
	}
	for (size_t i = 0; !rc && i < p->n; i++) {
		if (!gone[i]) continue;
		table *t = p->tables[i];
		a->gone = xrealloc(a->gone, (a->ngone + 1) * sizeof *a->gone);
		a->gone[a->ngone++] = t;
		sb_printf(rep, "forgot %s (%s) as %s: DataJoint dropped %s.%s", t->name, tier_name(t->tier), t->sql_name,
			  t->schema, t->sql_name);
		const char *aux[TABLE_AUX_MAX];
		size_t na = table_aux_tables(t, aux, TABLE_AUX_MAX);
		for (size_t k = 0; k < na && !rc; k++) {
			long long rows;
			if ((rc = rows_of(c, aux[k], &rows)) || rows < 0) continue;
			drop_later(a, aux[k]);
			if (k == 0) sb_printf(rep, "; its jobs table %s dropped (%lld jobs)", aux[k], rows);
		}
		sb_addc(rep, '\n');
	}
	if (!rc && a->ngone) rc = pipe_forget_stored(c, x, a->gone, a->ngone);
	free(gone);
	return rc;
}

/* The DDL of t's jobs table and of its history table, into b. */
static int jobs_ddl(djc_conn *c, const table *t, sb_t *b)
{
	jctx j = JCTX(t);
	pvec p = {0};
	int rc = jsql_expand(c, &JS_JOBS_CREATE, &j, NULL, 0, b, &p);
	sb_addc(b, '\n');
	if (!rc) rc = jsql_expand(c, &JS_HISTORY_CREATE, &j, NULL, 0, b, &p);
	pvec_free(&p);
	return rc;
}

/* t's jobs key, "(k1 int32, k2 datetime(6))", into b. */
static void key_desc(const table *t, sb_t *b)
{
	sb_addc(b, '(');
	for (size_t i = 0; i < t->nsrc; i++) {
		const attr *k = &t->attrs[t->src[i]];
		sb_printf(b, "%s%s ", i ? ", " : "", k->name);
		adopt_attr_desc(b, k);
	}
	sb_addc(b, ')');
}

/* What changed between the definitions old and nt: columns added,
 * removed, of another type, into d. */
static void heading_diff(const table *old, const table *nt, sb_t *d)
{
	for (size_t i = 0; i < old->nattrs; i++)
		if (!table_attr(nt, old->attrs[i].name)) sb_printf(d, "%scolumn '%s' removed", d->len ? ", " : "", old->attrs[i].name);
	for (size_t i = 0; i < nt->nattrs; i++) {
		const attr *b = &nt->attrs[i], *a = table_attr(old, b->name);
		if (!a) {
			sb_printf(d, "%scolumn '%s' added", d->len ? ", " : "", b->name);
			continue;
		}
		sb_t was = SB_INIT, is = SB_INIT;
		adopt_attr_desc(&was, a);
		adopt_attr_desc(&is, b);
		if (strcmp(sb_str(&was), sb_str(&is)))
			sb_printf(d, "%scolumn '%s' %s -> %s", d->len ? ", " : "", b->name, sb_str(&was), sb_str(&is));
		sb_free(&was);
		sb_free(&is);
	}
	/* the overlay's key_source is part of the definition too */
	const char *ow = old->key_source_where, *nw = nt->key_source_where;
	const char *oj = old->key_source_join, *nj = nt->key_source_join;
	if (strcmp(oj ? oj : "", nj ? nj : "") || strcmp(ow ? ow : "", nw ? nw : "")) {
		sb_printf(d, "%skey_source: ", d->len ? ", " : "");
		if (!oj && !ow) sb_add(d, "none");
		else sb_printf(d, "%s%s%s", oj ? oj : "", oj && ow ? " & " : "", ow ? ow : "");
		sb_add(d, " -> ");
		if (!nj && !nw) sb_add(d, "none");
		else sb_printf(d, "%s%s%s", nj ? nj : "", nj && nw ? " & " : "", nw ? nw : "");
	}
	if (!d->len) sb_add(d, "its definition");
}

/* Move the SQL table name out of the way (it is dropped last): dropped
 * now where DDL is transactional (the rollback brings it back), else
 * renamed (renamed back if the change is undone). */
static int move_away(djc_conn *c, schema_tx *x, accept_ctx *a, const char *name)
{
	if (x->d->transactional) {
		int rc = tsql_run(c, &TS_DROP, &(tctx){.table = name}, NULL, 0, NULL);
		return rc ? conn_dbfail(c, rc, name) : DJC_OK;
	}
	char to[40];
	snprintf(to, sizeof to, "~djc_accept_%zu", a->nmoved);
	a->moved = xrealloc(a->moved, (a->nmoved + 1) * sizeof *a->moved);
	char *mv = a->moved[a->nmoved++] = xstrdup(to);
	/* one a killed adopt left behind is nobody's */
	int rc = tsql_run(c, &TS_DROP, &(tctx){.table = mv}, NULL, 0, NULL);
	const char *tov[1] = {mv}, *fromv[1] = {name};
	if (!rc) rc = tsql_run(c, &TS_RENAME, &(tctx){.table = name, .names = tov, .n = 1}, NULL, 0, NULL);
	if (rc) return conn_dbfail(c, rc, name);
	tsql_undo(c, x, &TS_RENAME, &(tctx){.table = mv, .names = fromv, .n = 1}, NULL, 0);
	drop_later(a, mv);
	return DJC_OK;
}

/* Whether old's and nt's jobs tables differ only in datetime key columns
 * that nt keeps at more fractional digits (a PostgreSQL timestamp an
 * older djc adopted as datetime, now datetime(6)): then ops[0..*n) widen
 * them in place, rows kept (a key stored at fewer digits names the same
 * row at more). The rest of the jobs tables' DDL follows from the key
 * attributes' names, which are the same. */
static int widen_only(djc_conn *c, const table *old, const table *nt, alt_op *ops, size_t *n)
{
	*n = 0;
	if (old->nsrc != nt->nsrc || !nt->jobs_name || strcmp(old->jobs_name, nt->jobs_name)) return 0;
	int ok = 1;
	for (size_t i = 0; i < old->nsrc && ok; i++) {
		const attr *a = &old->attrs[old->src[i]], *b = &nt->attrs[nt->src[i]];
		sb_t da = SB_INIT, db = SB_INIT;
		ddl_column(c->db, &da, a, 1);
		ddl_column(c->db, &db, b, 1);
		if (strcmp(a->name, b->name)) ok = 0;
		else if (strcmp(sb_str(&da), sb_str(&db))) {
			ok = a->type.t == T_DATETIME && b->type.t == T_DATETIME && b->type.p > a->type.p;
			ops[(*n)++] = (alt_op){ALT_RETYPE, a->name, b, a};
		}
		sb_free(&da);
		sb_free(&db);
	}
	return ok && *n;
}

/* ALTER the SQL table name by ops[0..n) (widen_only); where DDL is not
 * transactional, each statement's undo (the old types) recorded. */
static int widen(djc_conn *c, schema_tx *x, const char *name, const alt_op *ops, size_t n)
{
	alt_op *back = xcalloc(n + 1, sizeof *back);
	for (size_t i = 0; i < n; i++) back[i] = (alt_op){ALT_RETYPE, ops[i].col, ops[i].old, ops[i].a};
	char **st = NULL, **un = NULL, *msg = NULL;
	sb_t q = SB_INIT;
	db_qtable(c->db, &q, name);
	int rc = ddl_alter(&st, c->db, sb_str(&q), ops, n, &msg);
	if (!rc) rc = ddl_alter(&un, c->db, sb_str(&q), back, n, &msg);
	if (rc) rc = conn_fail(c, rc, "%s: %s", name, msg);
	for (size_t k = 0; !rc && st[k]; k++) {
		if ((rc = db_exec(c->db, st[k], NULL, 0, NULL))) rc = conn_dbfail(c, rc, name);
		else if (!x->d->transactional && un[k]) stx_undo(x, xstrdup(un[k]), NULL, 0);
	}
	for (size_t k = 0; st && st[k]; k++) free(st[k]);
	for (size_t k = 0; un && un[k]; k++) free(un[k]);
	free(st);
	free(un);
	free(msg);
	free(back);
	sb_free(&q);
	return rc;
}

/* old takes nt's definition (its text is stored): its jobs and history
 * tables are kept when their DDL is the same, their datetime key columns
 * widened in place when only those differ (widen_only), else made anew. */
static int accept_renew(djc_conn *c, schema_tx *x, void *ctx, const table *old, table *nt, sb_t *rep)
{
	accept_ctx *a = ctx;
	a->renewed = xrealloc(a->renewed, (a->nrenewed + 1) * sizeof *a->renewed);
	a->renewed[a->nrenewed++] = xstrdup(nt->name);
	sb_t d = SB_INIT, was = SB_INIT, is = SB_INIT;
	heading_diff(old, nt, &d);
	sb_printf(rep, "changed %s (%s) as %s: took DataJoint's definition (%s)", nt->name, tier_name(nt->tier), nt->sql_name,
		  sb_str(&d));
	int rc = DJC_OK;
	if (old->jobs_name) {
		long long rows = -1;
		if (!(rc = jobs_ddl(c, old, &was)) && nt->jobs_name) rc = jobs_ddl(c, nt, &is);
		if (!rc) rc = rows_of(c, old->jobs_name, &rows);
		alt_op ops[64];
		size_t nops = 0;
		if (!rc && nt->jobs_name && !strcmp(sb_str(&was), sb_str(&is)))
			sb_printf(rep, "; its jobs kept (%lld in %s)", rows < 0 ? 0 : rows, old->jobs_name);
		else if (!rc && old->nsrc <= 64 && widen_only(c, old, nt, ops, &nops)) {
			const char *aux[TABLE_AUX_MAX];
			size_t na = table_aux_tables(old, aux, TABLE_AUX_MAX);
			for (size_t k = 0; k < na && !rc; k++) rc = widen(c, x, aux[k], ops, nops);
			sb_t k1 = SB_INIT;
			key_desc(nt, &k1);
			sb_printf(rep, "; its jobs kept (%lld in %s), its key columns widened to %s", rows < 0 ? 0 : rows,
				  old->jobs_name, sb_str(&k1));
			sb_free(&k1);
		} else if (!rc) {
			sb_t k0 = SB_INIT, k1 = SB_INIT;
			key_desc(old, &k0);
			if (nt->jobs_name) key_desc(nt, &k1);
			sb_printf(rep, "; its jobs table %s made anew, its key %s -> %s: %lld jobs dropped", old->jobs_name,
				  sb_str(&k0), nt->jobs_name ? sb_str(&k1) : "none", rows < 0 ? 0 : rows);
			sb_free(&k0);
			sb_free(&k1);
			const char *aux[TABLE_AUX_MAX];
			size_t na = table_aux_tables(old, aux, TABLE_AUX_MAX);
			for (size_t k = 0; k < na && !rc; k++) {
				long long r;
				if (!(rc = rows_of(c, aux[k], &r)) && r >= 0) rc = move_away(c, x, a, aux[k]);
			}
			if (!rc && nt->jobs_name) {
				na = table_aux_tables(nt, aux, TABLE_AUX_MAX);
				for (size_t k = na; k-- > 0;) tsql_undo(c, x, &TS_DROP, &(tctx){.table = aux[k]}, NULL, 0);
				rc = jobs_ensure(c, nt);
			}
		}
	}
	sb_addc(rep, '\n');
	sb_free(&d);
	sb_free(&was);
	sb_free(&is);
	return rc;
}

static int renewed(const accept_ctx *a, const char *name)
{
	for (size_t i = 0; i < a->nrenewed; i++)
		if (!strcmp(a->renewed[i], name)) return 1;
	return 0;
}

/* Every adopted table that referenced a forgotten one (a nullable
 * reference too) took a new definition (DataJoint drops what depends on
 * a table it drops). Before the rows of the declare's then step and the
 * drops: a refusal here leaves nothing behind. */
static int accept_verify(djc_conn *c, schema_tx *x, void *ctx)
{
	(void)x;
	accept_ctx *a = ctx;
	const pipeline *p = c->pipe;
	for (size_t i = 0; i < p->n; i++) {
		const table *t = p->tables[i];
		int forgotten = 0;
		for (size_t g = 0; g < a->ngone; g++) forgotten |= a->gone[g] == t;
		if (forgotten || renewed(a, t->name)) continue;
		for (size_t g = 0; g < a->ngone; g++)
			if (table_references(t, a->gone[g]))
				return conn_fail(c, DJC_ECONFLICT,
						 "adopt: table %s references %s, which DataJoint dropped, and is not "
						 "adopted again: djc unadopt %s, then djc adopt it again",
						 t->name, a->gone[g]->name, t->adopted ? t->adopted : a->gone[g]->adopted);
	}
	return DJC_OK;
}

/* The drops, last. */
static int accept_after(djc_conn *c, schema_tx *x, void *ctx)
{
	accept_ctx *a = ctx;
	if (!a->ndrops) return DJC_OK;
	int rc = DJC_OK;
	if (x->d->drop_many) {
		if ((rc = tsql_run(c, &TS_DROP_MANY, &(tctx){.names = a->drops, .n = a->ndrops}, NULL, 0, NULL)))
			rc = conn_dbfail(c, rc, "adopt");
	} else
		for (size_t i = 0; i < a->ndrops && !rc; i++)
			if ((rc = tsql_run(c, &TS_DROP, &(tctx){.table = a->drops[i]}, NULL, 0, NULL))) rc = conn_dbfail(c, rc, a->drops[i]);
	return rc;
}

int adopt_accept_declare(char **report, djc_conn *c, const char *const *schemas, size_t n, const char *text,
			 const char *file, const tbl_declare_ways *ways)
{
	accept_ctx a = {.schemas = schemas, .n = n};
	tbl_accept acc = {accept_before, accept_renew, accept_verify, accept_after, &a};
	tbl_declare_ways w = *ways;
	w.acc = &acc;
	/* (the forgotten tables leave c->pipe as declare loads it again) */
	int rc = tbl_declare_with(c, text, file, &w, report);
	ctx_reset(&a);
	return rc;
}
