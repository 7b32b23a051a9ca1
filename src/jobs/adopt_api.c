/* adopt_api.c - djc_adopt and djc_unadopt (djc.h, docs/adopt.md): a
 * DataJoint schema's catalog (db/catalog.h) as djc definitions
 * (schema/adopt.h), declared into the companion schema like any pipeline
 * text (djc_declare: it makes the jobs tables, so this is the jobs layer). */
#include "jobs.h"
#include "sql.h"
#include "db/catalog.h"
#include "util/config.h"
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

/* The name the adopted definitions are parsed under; a message naming a
 * line of them is told in the user's terms (adopt_where). */
static const char ADOPTED_FILE[] = "adopted definitions";

/* What carry_ignored needs and reports. */
typedef struct carry {
	db_catalog **cats;
	size_t nc;
	sb_t rep;   /* "ignored N keys of T ..." lines */
} carry;

/* The definitions of the adopted tables into *text; the catalogs read
 * into k->cats, k->nc (caller frees with free_cats); a line per table
 * left out appended to left_out (NULL: not wanted). */
static int generate(djc_conn *c, const char *const *schemas, size_t n, const adopt_overlay *ov, char **text, carry *k,
		    sb_t *left_out)
{
	int rc = read_catalogs(c, schemas, n, &k->cats, &k->nc);
	if (rc) return rc;
	sb_t q = SB_INIT;
	db_qi(c->db, &q, "a");
	adopt_in in = {k->cats, k->nc, n, sb_str(&q)[0], ov, left_out};
	char *msg = NULL;
	rc = adopt_generate(text, &msg, &in);
	if (rc) conn_fail(c, rc, "adopt: %s", msg ? msg : "failed");
	free(msg);
	sb_free(&q);
	return rc;
}

/* ---------------------------------------- DataJoint's ignored keys */

/* DataJoint 2.x keeps the jobs of a computed or imported table in a table
 * of its schema named `~~` and the table's name without its leading `_`s
 * (datajoint/jobs.py), keyed by the table's primary-key attributes that
 * come from its parents (the attributes djc's jobs are keyed by), with a
 * `status` column; a key it marks `ignore` becomes an ignore job of djc's
 * at adopt (docs/adopt.md, "Keys DataJoint ignores"). 0.14's one `~jobs`
 * table per schema keeps the key as a blob djc does not read: not
 * carried. */

/* The catalog's table of DataJoint's jobs of adopted table t (its name
 * into *name), or NULL when there is none. */
static const db_ctable *dj_jobs_table(const table *t, db_catalog *const *cats, size_t nc, sb_t *name)
{
	sb_reset(name);
	if (!t->adopted || !t->jobs_name || t->master || !t->schema) return NULL;
	sb_printf(name, "~~%s", t->sql_name + strspn(t->sql_name, "_"));
	for (size_t i = 0; i < nc; i++)
		if (!strcmp(cats[i]->schema, t->schema)) return db_catalog_table(cats[i], sb_str(name));
	return NULL;
}

/* 1 when DataJoint's jobs table d is keyed as t's jobs are, with a status
 * column apart from the key. */
static int dj_jobs_layout(const table *t, const db_ctable *d)
{
	if (d->npk != t->nsrc || !db_ctable_col(d, "status")) return 0;
	for (size_t i = 0; i < t->nsrc; i++) {
		const char *k = t->attrs[t->src[i]].name;
		if (!strcmp(k, "status")) return 0;
		size_t j = 0;
		while (j < d->npk && strcmp(d->pk[j], k)) j++;
		if (j == d->npk) return 0;
	}
	return 1;
}

/* Refuse a DataJoint jobs table of a table of np that is not keyed as
 * djc's jobs are: its ignored keys cannot be told (the adopt stores
 * nothing; a dry run refuses it too). */
static int dj_jobs_check(djc_conn *c, const pipeline *np, db_catalog *const *cats, size_t nc)
{
	sb_t name = SB_INIT, b = SB_INIT;
	int rc = DJC_OK;
	for (size_t i = 0; i < np->n && !rc; i++) {
		const table *t = np->tables[i];
		const db_ctable *d = dj_jobs_table(t, cats, nc, &name);
		if (!d || dj_jobs_layout(t, d)) continue;
		sb_reset(&b);
		if (!db_ctable_col(d, "status")) sb_add(&b, "it has no status column");
		else {
			sb_add(&b, "its primary key is (");
			for (size_t k = 0; k < d->npk; k++) sb_printf(&b, "%s%s", k ? ", " : "", d->pk[k]);
			sb_printf(&b, "), %s's jobs are keyed by (", t->name);
			for (size_t k = 0; k < t->nsrc; k++) sb_printf(&b, "%s%s", k ? ", " : "", t->attrs[t->src[k]].name);
			sb_add(&b, ")");
		}
		rc = conn_fail(c, DJC_EINVAL, "adopt: table %s: DataJoint's jobs table %s.%s is not the jobs table DataJoint 2.x "
			       "makes for %s.%s (%s): the keys it marks ignore cannot be told; drop it with DataJoint "
			       "(%s.jobs.drop(), after noting its ignored keys) and adopt again", t->name, t->schema,
			       sb_str(&name), t->schema, t->sql_name, sb_str(&b), t->name);
	}
	sb_free(&name);
	sb_free(&b);
	return rc;
}

/* The then step of adopt's declare (tbl_declare_ways, in its change): the keys DataJoint's
 * jobs table of each adopted computed or imported table of np marks
 * ignore, as ignore jobs of djc's where djc has no job of the key. */
static int carry_ignored(djc_conn *c, const pipeline *np, void *arg)
{
	carry *k = arg;
	sb_reset(&k->rep);
	sb_t name = SB_INIT, ref = SB_INIT;
	int rc = DJC_OK;
	for (size_t i = 0; i < np->n && !rc; i++) {
		const table *t = np->tables[i];
		const db_ctable *d = dj_jobs_table(t, k->cats, k->nc, &name);
		if (!d || !dj_jobs_layout(t, d)) continue;   /* a bad one was refused before */
		sb_reset(&ref);
		sb_printf(&ref, "%s%c%s", t->schema, '\x1f', sb_str(&name));
		jctx x = JCTX(t);
		x.named = sb_str(&ref);
		char *msg = xasprintf("ignored in DataJoint (%s.%s), carried by djc adopt", t->schema, sb_str(&name));
		val_t v[4] = {val_text(msg), val_int(config_long("jobs.default_priority")), val_text(jobs_user()),
			      val_text(jobs_host())};
		long added = 0;
		rc = jsql_count(c, &JS_IGNORE_ADOPTED, &x, v, 4, &added);
		for (int j = 0; j < 4; j++) val_free(&v[j]);
		free(msg);
		if (!rc && added > 0)
			sb_printf(&k->rep, "ignored %ld key%s of %s that DataJoint's %s.%s marks ignore\n", added,
				  added == 1 ? "" : "s", t->name, t->schema, sb_str(&name));
	}
	sb_free(&name);
	sb_free(&ref);
	return rc;
}


static int explain(djc_conn *c, int rc, const char *text, const adopt_overlay *ov)
{
	char *m = adopt_where(text, ov, ADOPTED_FILE, djc_error_last(c));
	if (m) rc = conn_fail(c, rc, "adopt: %s", m);
	free(m);
	return rc;
}

/* The adopted definitions' tables checked against DataJoint's jobs
 * tables (dj_jobs_check), before anything is written; a definition that
 * does not parse is refused as declare refuses it (explain). */
static int dj_jobs_precheck(djc_conn *c, const char *text, const adopt_overlay *ov, db_catalog *const *cats, size_t nc)
{
	pipeline *np = NULL;
	int rc = pipe_parse_text(c, text, ADOPTED_FILE, &np);
	if (rc) return explain(c, rc, text, ov);
	rc = dj_jobs_check(c, np, cats, nc);
	pipeline_free(np);
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
	sb_t kept = SB_INIT, left = SB_INIT;
	carry k = {NULL, 0, SB_INIT};
	int rc = o.overlay ? DJC_OK : stored_overlay(c, schemas, n, o.accept_changes, &stored, &kept);
	const char *ovt = o.overlay ? o.overlay : stored;
	if (!rc && ovt && adopt_overlay_parse(&ov, ovt, o.overlay ? o.overlay_file : "the stored overlay", &msg)) {
		rc = conn_fail(c, DJC_EINVAL, "%s", msg);
		free(msg);
	}
	free(stored);
	if (!rc && !o.accept_changes) rc = stale_refuse(c, schemas, n);
	if (!rc) rc = generate(c, schemas, n, ov, &text, &k, &left);
	/* a dry run refuses what adopting refuses: declare's checks, those of
	 * its lock too, without writing anything */
	if (!rc && o.dry_run && (rc = tbl_declare_check(c, text, ADOPTED_FILE, NULL, o.accept_changes ? 2 : 1)))
		rc = explain(c, rc, text, ov);
	if (!rc) rc = dj_jobs_precheck(c, text, ov, k.cats, k.nc);
	/* the tables, their jobs tables and the keys DataJoint ignores: one
	 * change (nothing stored when it fails) */
	if (!rc && !o.dry_run) {
		tbl_declare_ways w = {.aux = jobs_ensure, .then = carry_ignored, .then_arg = &k};
		rc = o.accept_changes ? adopt_accept_declare(out, c, schemas, n, text, ADOPTED_FILE, &w)
				      : tbl_declare_with(c, text, ADOPTED_FILE, &w, out);
		if (rc) rc = explain(c, rc, text, ov);
	}
	if (!rc && !o.dry_run && out && k.rep.len) {
		sb_t r = SB_INIT;
		sb_printf(&r, "%s%s", *out ? *out : "", sb_str(&k.rep));
		free(*out);
		*out = sb_steal(&r);
	}
	free_cats(k.cats, k.nc);
	sb_free(&k.rep);
	adopt_overlay_free(ov);
	if (!rc && o.dry_run && out && left.len) {
		/* as comments before the definitions, which stay a pipeline text */
		sb_t r = SB_INIT;
		for (const char *p = sb_str(&left); *p;) {
			size_t len = strcspn(p, "\n");
			sb_printf(&r, "# %.*s\n", (int)len, p);
			p += len + (p[len] == '\n');
		}
		sb_add(&r, text);
		free(text);
		text = sb_steal(&r);
	}
	if (!rc && o.dry_run && out) *out = text, text = NULL;
	if (!rc && !o.dry_run && out && left.len) {
		sb_t r = SB_INIT;
		sb_printf(&r, "%s%s", *out ? *out : "", sb_str(&left));
		free(*out);
		*out = sb_steal(&r);
	}
	if (!rc && !o.dry_run && out && kept.len) {
		/* said, so that a re-adopt is not taken for one that dropped them */
		sb_t r = SB_INIT;
		sb_printf(&r, "%skept the makes the stored overlay gave %s (no --overlay given; --overlay FILE replaces "
			  "them)\n", *out ? *out : "", sb_str(&kept));
		free(*out);
		*out = sb_steal(&r);
	}
	sb_free(&kept);
	sb_free(&left);
	free(text);
	return rc;
}

/* 1 when t is still needed: adopted from `schema`'s side and not gone, or
 * referenced by a table that stays. gone[i] marks c->pipe's tables. */
static int referenced_by_kept(const pipeline *p, const char *gone, const table *t)
{
	for (size_t i = 0; i < p->n; i++)
		if (!gone[i] && table_references(p->tables[i], t)) return 1;
	return 0;
}

/* 1 when a table gone[] marks references t: t is a parent of what goes. */
static int parent_of_gone(const pipeline *p, const char *gone, const table *t)
{
	for (size_t i = 0; i < p->n; i++)
		if (gone[i] && table_references(p->tables[i], t)) return 1;
	return 0;
}

/* Which tables of c->pipe unadopt takes: those adopted from schema, then
 * the adopted tables of other schemas they reference (their parents, and
 * theirs) that no remaining table references. Not another schema's own
 * tables: a table nothing references is a parent of nothing that goes. */
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
			if (gone[i] || !t->adopted || !parent_of_gone(p, gone, t) || referenced_by_kept(p, gone, t)) continue;
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
	if (!c) return DJC_EINVAL;
	if (!schema) return conn_fail(c, DJC_EINVAL, "unadopt: no DataJoint schema named (NULL)");
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
