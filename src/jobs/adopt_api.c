/* adopt_api.c - djc_adopt and djc_unadopt (djc.h, docs/adopt.md): a
 * DataJoint schema's catalog (db/catalog.h) as djc definitions
 * (schema/adopt.h), declared into the companion schema like any pipeline
 * text (djc_declare: it makes the jobs tables, so this is the jobs layer). */
#include "jobs.h"
#include "db/catalog.h"
#include "schema/adopt.h"
#include "table/opts.h"
#include "table/statements.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void free_cats(db_catalog **v, size_t n)
{
	for (size_t i = 0; i < n; i++) db_catalog_free(v[i]);
	free(v);
}

/* The catalogs of schemas[0..n), then of every schema their tables
 * reference (until none is missing). */
static int read_catalogs(djc_conn *c, const char *const *schemas, size_t n, db_catalog ***out, size_t *nout)
{
	db_catalog **v = NULL;
	size_t nv = 0;
	int rc = DJC_OK;
	char *msg = NULL;
	for (size_t i = 0; !rc; i++) {
		const char *s = i < n ? schemas[i] : adopt_missing_schema(v, nv);
		if (!s) break;
		if (c->db->schema && !strcmp(s, c->db->schema)) {
			rc = conn_fail(c, DJC_EINVAL, "%s is djc's own schema (--schema, the companion): adopt a DataJoint schema "
				       "from another one (djc --schema %s_djc adopt %s)", s, s, s);
			break;
		}
		v = xrealloc(v, (nv + 1) * sizeof *v);
		if ((rc = db_catalog_read(&v[nv], c->db, s, &msg))) break;
		nv++;
	}
	if (rc && msg) conn_fail(c, rc, "adopt: %s", msg);
	free(msg);
	if (rc) {
		free_cats(v, nv);
		return rc;
	}
	*out = v;
	*nout = nv;
	return DJC_OK;
}

/* The definitions of the adopted tables into *text. */
static int generate(djc_conn *c, const char *const *schemas, size_t n, const adopt_overlay *ov, char **text)
{
	db_catalog **cats = NULL;
	size_t nc = 0;
	int rc = read_catalogs(c, schemas, n, &cats, &nc);
	if (rc) return rc;
	sb_t q = SB_INIT;
	db_qi(c->db, &q, "a");
	adopt_in in = {cats, nc, n, sb_str(&q)[0], ov};
	char *msg = NULL;
	rc = adopt_generate(text, &msg, &in);
	if (rc) conn_fail(c, rc, "adopt: %s", msg ? msg : "failed");
	free(msg);
	sb_free(&q);
	free_cats(cats, nc);
	return rc;
}

/* The name the adopted definitions are parsed under; a message naming a
 * line of them is told in the user's terms (adopt_where). */
static const char ADOPTED_FILE[] = "adopted definitions";

static int explain(djc_conn *c, int rc, const char *text, const adopt_overlay *ov)
{
	char *m = adopt_where(text, ov, ADOPTED_FILE, djc_error_last(c));
	if (m) rc = conn_fail(c, rc, "adopt: %s", m);
	free(m);
	return rc;
}

/* Refuse to adopt again over tables adopted from schemas[0..n) that
 * DataJoint dropped or changed since (a dropped one is in no definition
 * adopt makes now: declare would find nothing changed). */
static int stale_refuse(djc_conn *c, const char *const *schemas, size_t n)
{
	int rc = pipe_load(c);
	if (rc) return rc;
	table **v = xcalloc(c->pipe->n + 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < c->pipe->n; i++) {
		table *t = c->pipe->tables[i];
		for (size_t j = 0; t->adopted && !t->master && j < n; j++)
			if (!strcmp(t->adopted, schemas[j])) {
				v[k++] = t;
				break;
			}
	}
	char **why = xcalloc(k + 1, sizeof *why);
	rc = adopt_stale(c, v, k, why);
	for (size_t i = 0; i < k; i++) {
		if (!rc && why[i]) rc = conn_fail(c, DJC_ECONFLICT, "adopt: table %s is not as adopted: %s", v[i]->name, why[i]);
		free(why[i]);
	}
	free(why);
	free(v);
	return rc;
}

/* 1 when line s (trimmed) of a stored adopted definition is one an
 * overlay gave it: make, make_serve, key_source, or timeout (a duration:
 * an attribute named timeout has a type after ':'). */
static int overlay_line(const char *s)
{
	static const char *const keys[] = {"make", "make_serve", "timeout", "key_source"};
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		size_t n = strlen(keys[i]);
		if (strncmp(s, keys[i], n)) continue;
		const char *p = s + n + strspn(s + n, " \t");
		if (*p == '=') return i != 2 || !strchr(p, ':');
	}
	return 0;
}

/* Adopting again without --overlay keeps what the earlier overlay gave
 * (docs/adopt.md): the make, make_serve, timeout and key_source lines of
 * the stored definitions of tables adopted from schemas, as an overlay
 * into *text (NULL: none), the tables' names into *kept. */
static int stored_overlay(djc_conn *c, const char *const *schemas, size_t n, int accepting, char **text, sb_t *kept)
{
	*text = NULL;
	/* --accept-changes forgets the tables DataJoint dropped: not theirs */
	char *gone = NULL;
	int rc = accepting ? adopt_missing(c, &gone) : pipe_load(c);
	if (rc) return rc;
	sb_t b = SB_INIT, l = SB_INIT;
	for (size_t i = 0; i < c->pipe->n; i++) {
		const table *t = c->pipe->tables[i];
		size_t k = 0;
		while (k < n && (!t->adopted || strcmp(t->adopted, schemas[k]))) k++;
		if (k == n || t->master || !t->text || (gone && gone[i])) continue;
		size_t at = b.len;
		for (const char *p = strchr(t->text, '\n'); p && *++p; p = strchr(p, '\n')) {
			sb_reset(&l);
			sb_addn(&l, p + strspn(p, " \t"), strcspn(p + strspn(p, " \t"), "\n"));
			while (l.len && strchr(" \t\r", l.s[l.len - 1])) l.s[--l.len] = 0;
			if (!overlay_line(sb_str(&l))) continue;
			if (b.len == at) sb_printf(&b, "%s\n", t->name);
			sb_printf(&b, "    %s\n", sb_str(&l));
		}
		if (b.len > at) sb_printf(kept, "%s%s", kept->len ? ", " : "", t->name);
	}
	sb_free(&l);
	free(gone);
	if (b.len) *text = sb_steal(&b);
	sb_free(&b);
	return DJC_OK;
}

int djc_adopt(char **out, djc_conn *c, const char *const *schemas, size_t n, const djc_adopt_options *opts)
{
	if (out) *out = NULL;
	if (!c) return DJC_EINVAL;
	djc_adopt_options o = DJC_ADOPT_OPTIONS_INIT;
	if (opts) {
		if (OPTS_VERSION(c, "adopt", opts, 1, ADOPT)) return DJC_EINVAL;
		/* version 1 has no accept_changes */
		memcpy(&o, opts, opts->version == 1 ? offsetof(djc_adopt_options, accept_changes) : sizeof o);
	}
	if (!schemas || !n) return conn_fail(c, DJC_EINVAL, "adopt: no DataJoint schema named");
	if (!c->db) return conn_fail(c, DJC_ECONN, "not connected");
	adopt_overlay *ov = NULL;
	char *msg = NULL, *text = NULL, *stored = NULL;
	sb_t kept = SB_INIT;
	int rc = o.overlay ? DJC_OK : stored_overlay(c, schemas, n, o.accept_changes, &stored, &kept);
	const char *ovt = o.overlay ? o.overlay : stored;
	if (!rc && ovt && adopt_overlay_parse(&ov, ovt, o.overlay ? o.overlay_file : "the stored overlay", &msg)) {
		rc = conn_fail(c, DJC_EINVAL, "%s", msg);
		free(msg);
	}
	free(stored);
	if (!rc && !o.accept_changes) rc = stale_refuse(c, schemas, n);
	if (!rc) rc = generate(c, schemas, n, ov, &text);
	/* a dry run refuses what adopting refuses: declare's checks, those of
	 * its lock too, without writing anything */
	if (!rc && o.dry_run && (rc = tbl_declare_check(c, text, ADOPTED_FILE, NULL, o.accept_changes ? 2 : 1)))
		rc = explain(c, rc, text, ov);
	if (!rc && !o.dry_run &&
	    (rc = o.accept_changes ? adopt_accept_declare(out, c, schemas, n, text, ADOPTED_FILE) : djc_declare(out, c, text, ADOPTED_FILE)))
		rc = explain(c, rc, text, ov);
	adopt_overlay_free(ov);
	if (!rc && o.dry_run && out) *out = text, text = NULL;
	if (!rc && !o.dry_run && out && kept.len) {
		/* said, so that a re-adopt is not taken for one that dropped them */
		sb_t r = SB_INIT;
		sb_printf(&r, "%skept the makes the stored overlay gave %s (no --overlay given; --overlay FILE replaces "
			  "them)\n", *out ? *out : "", sb_str(&kept));
		free(*out);
		*out = sb_steal(&r);
	}
	sb_free(&kept);
	free(text);
	return rc;
}

/* 1 when t is still needed: adopted from `schema`'s side and not gone, or
 * referenced by a table that stays. gone[i] marks c->pipe's tables. */
static int referenced_by_kept(const pipeline *p, const char *gone, const table *t)
{
	for (size_t i = 0; i < p->n; i++) {
		if (gone[i]) continue;
		for (size_t f = 0; f < p->tables[i]->nfks; f++)
			if (p->tables[i]->fks[f].ptable == t) return 1;
	}
	return 0;
}

/* Which tables of c->pipe unadopt takes: those adopted from schema, then
 * adopted tables of other schemas that no remaining table references. */
static size_t unadopt_set(const pipeline *p, const char *schema, char *gone)
{
	size_t n = 0;
	for (size_t i = 0; i < p->n; i++)
		if (p->tables[i]->adopted && !strcmp(p->tables[i]->adopted, schema)) gone[i] = 1, n++;
	if (!n) return 0;
	for (int changed = 1; changed;) {
		changed = 0;
		for (size_t i = p->n; i-- > 0;) {
			const table *t = p->tables[i];
			if (gone[i] || !t->adopted || referenced_by_kept(p, gone, t)) continue;
			if (t->master) continue;   /* goes with its master */
			gone[i] = 1, n++, changed = 1;
			for (size_t k = 0; k < p->n; k++)
				if (p->tables[k]->master == t && !gone[k]) gone[k] = 1, n++;
		}
	}
	return n;
}

/* Forget the definitions of the tables gone[] marks, drop their
 * auxiliary tables (in the companion), report them. */
static int unadopt_apply(djc_conn *c, schema_tx *x, const char *gone, sb_t *rep)
{
	const pipeline *p = c->pipe;
	const char **names = xcalloc(p->n + 1, sizeof *names);
	size_t nn = 0;
	for (size_t i = 0; i < p->n; i++)
		if (gone[i]) names[nn++] = p->tables[i]->name;
	int rc = tsql_run(c, &TS_PIPE_FORGET_MANY, &(tctx){.names = names, .n = nn}, NULL, 0, NULL);
	if (rc) rc = conn_dbfail(c, rc, "unadopt");
	for (size_t i = p->n; !rc && i-- > 0;) {
		if (!gone[i]) continue;
		const char *aux[TABLE_AUX_MAX];
		size_t na = table_aux_tables(p->tables[i], aux, TABLE_AUX_MAX);
		for (size_t k = 0; k < na && !rc; k++) {
			long long rows;
			if ((rc = sql_count(c, aux[k], &rows))) rc = conn_dbfail(c, rc, aux[k]);
			else if (rows >= 0 && (rc = tsql_run(c, &TS_DROP, &(tctx){.table = aux[k]}, NULL, 0, NULL)))
				rc = conn_dbfail(c, rc, aux[k]);
		}
		sb_printf(rep, "unadopted %s\n", p->tables[i]->name);
	}
	(void)x;
	free((void *)names);
	return rc;
}

int djc_unadopt(char **out, djc_conn *c, const char *schema)
{
	if (out) *out = NULL;
	if (!c || !schema) return DJC_EINVAL;
	schema_tx x;
	int rc = stx_begin(c, &x);
	if (rc) return rc;
	char *gone = NULL;
	sb_t rep = SB_INIT;
	if ((rc = pipe_load(c))) goto fail;
	gone = xcalloc(c->pipe->n + 1, 1);
	if (!unadopt_set(c->pipe, schema, gone)) {
		rc = conn_fail(c, DJC_ENOTFOUND, "unadopt: no table is adopted from DataJoint schema %s", schema);
		goto fail;
	}
	if ((rc = unadopt_apply(c, &x, gone, &rep))) goto fail;
	if ((rc = stx_commit(c, &x))) goto out;
	for (size_t i = c->pipe->n; i-- > 0;)
		if (gone[i]) pipe_retire(c, c->pipe->tables[i]);
	if (out) *out = sb_steal(&rep);
	goto out;
fail:
	stx_abort(c, &x);
out:
	free(gone);
	sb_free(&rep);
	return rc;
}
