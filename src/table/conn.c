/* conn.c - connections, error messages, the stored pipeline and declare. */
#include "table.h"
#include "statements.h"
#include "sql/ddl.h"
#include "util/near.h"
#include "util/config.h"
#include "table/opts.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *djc_strerror(int code)
{
	switch (code) {
	case DJC_OK: return "success";
	case DJC_EINVAL: return "invalid input";
	case DJC_ENOTFOUND: return "not found";
	case DJC_EDUPLICATE: return "duplicate primary key";
	case DJC_EFOREIGN: return "foreign key violation";
	case DJC_EBUSY: return "database busy (retryable)";
	case DJC_ECONN: return "database connection failed";
	case DJC_ELOST: return "reservation lost";
	case DJC_EMAKE: return "make failed";
	case DJC_ECONFLICT: return "definition conflicts with the declared one";
	case DJC_EINTR: return "interrupted";
	case DJC_ETIMEDOUT: return "make timed out";
	case DJC_ECANCELED: return "job cancelled";
	case DJC_ELOCKED: return "a lock wait reached its bound (jobs.lock_timeout)";
	default: return "error";
	}
}

int conn_fail(djc_conn *c, int code, const char *fmt, ...)
{
	if (code == DB_EUNIQUE) code = DJC_EDUPLICATE;   /* internal details, public classes */
	if (code == DB_EACCESS) code = DJC_ERROR;
	if (code == DB_ELOCKED) code = DJC_ELOCKED;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof c->err, fmt, ap);
	va_end(ap);
	return code;
}

int conn_dbfail(djc_conn *c, int code, const char *context)
{
	return conn_fail(c, code, "%s: %s", context, c->db ? c->db->err : "not connected");
}

const char *djc_error_last(const djc_conn *c) { return c ? c->err : "no connection"; }

void djc_open_options_init(djc_open_options *o)
{
	djc_open_options d = DJC_OPEN_OPTIONS_INIT;
	*o = d;
}

int djc_open(djc_conn **out, const char *url, const char *schema)
{
	return djc_open_ext(out, url, schema, NULL);
}

double lease_window(double lease_s)
{
	return 4 * lease_s > 60 ? 4 * lease_s : 60;
}

double conn_lock_wait(void)
{
	double s = config_double("jobs.lock_timeout");
	/* else a lock is waited for as long as a worker retries its writes
	 * through a server restart */
	return s > 0 ? s : lease_window(config_double("jobs.lease_timeout"));
}

int djc_open_ext(djc_conn **out, const char *url, const char *schema, const djc_open_options *opts)
{
	if (!out) return DJC_EINVAL;
	djc_conn *c = xcalloc(1, sizeof *c);
	*out = c;
	djc_open_options def = DJC_OPEN_OPTIONS_INIT;
	if (!opts) opts = &def;
	if (OPTS_VERSION(c, "open", opts, 1, OPEN)) return DJC_EINVAL;
	char *msg = NULL;
	if (config_load(&msg)) {
		int rc = conn_fail(c, DJC_EINVAL, "%s", msg);
		free(msg);
		return rc;
	}
	if (url && !*url)   /* before, the default (sqlite:djc.db) was opened */
		return conn_fail(c, DJC_EINVAL, "database URL is empty (leave it out for the default: $DJC_DATABASE_URL, "
				 "then database.url, then sqlite:djc.db)");
	if (!url) url = config_get("database.url");
	if (!schema || !*schema) {
		const char *s = config_get("database.schema");
		schema = *s ? s : NULL;
	}
	const char *pw = config_get("database.password");
	if (*pw && !getenv("DJC_DATABASE_PASSWORD")) setenv("DJC_DATABASE_PASSWORD", pw, 1);
	c->url = xstrdup(url);
	c->schema = schema ? xstrdup(schema) : NULL;
	char err[1024];
	int flags = opts->no_create ? DB_OPEN_NO_CREATE : 0;
	/* database.pooler: the URL's pooler= parameter, when given, decides */
	if (!strcmp(config_get("database.pooler"), "transaction")) flags |= DB_OPEN_POOLED;
	int rc = db_open_ext(&c->db, url, schema, flags, conn_lock_wait(), err, sizeof err);
	if (rc) return conn_fail(c, rc, "%s", err);
	return DJC_OK;
}

int djc_discard_created(djc_conn *c)
{
	if (!c) return DJC_EINVAL;
	if (!c->db) return DJC_OK;
	int rc = db_drop_created(c->db);
	return rc ? conn_dbfail(c, rc, "cannot remove the schema this command created") : DJC_OK;
}

void djc_close(djc_conn *c)
{
	if (!c) return;
	db_close(c->db);
	if (c->jobs_free) c->jobs_free(c->jobs);
	pipeline_free(c->pipe);
	pipeline_free(c->retired);
	where_memo_free(c);
	free(c->url);
	free(c->schema);
	free(c);
}

/* Move table i of p to the end of c->retired. */
static void retire_at(djc_conn *c, pipeline *p, size_t i)
{
	c->pipe_gen++;
	if (!c->retired) c->retired = xcalloc(1, sizeof(pipeline));
	c->retired->tables = xrealloc(c->retired->tables, (c->retired->n + 1) * sizeof(table *));
	c->retired->tables[c->retired->n++] = p->tables[i];
	memmove(p->tables + i, p->tables + i + 1, (p->n - i - 1) * sizeof(table *));
	p->n--;
}

void pipe_retire(djc_conn *c, table *t)
{
	for (size_t i = 0; c->pipe && i < c->pipe->n; i++)
		if (c->pipe->tables[i] == t) { retire_at(c, c->pipe, i); return; }
}

/* Make c->pipe the stored pipeline np (freshly parsed; freed here). A
 * table whose stored text is unchanged keeps its object: jobs, make
 * contexts and populate hold pointers to it for as long as the connection
 * lives. A table dropped or redefined since (by this or another process)
 * is retired: out of c->pipe, but alive until djc_close. */
static void pipe_merge(djc_conn *c, pipeline *np)
{
	/* pipe_gen counts a table new or redefined here; retire_at the ones gone */
	if (!c->pipe) { c->pipe = np; c->pipe_gen++; return; }
	pipeline *old = c->pipe;
	table **v = xcalloc(np->n + 1, sizeof(table *));
	for (size_t i = 0; i < np->n; i++) {
		table *o = pipeline_find(old, np->tables[i]->name);
		if (o && !strcmp(o->text, np->tables[i]->text)) {
			v[i] = o;
			for (size_t k = 0; k < old->n; k++)
				if (old->tables[k] == o) { memmove(old->tables + k, old->tables + k + 1, (old->n - k - 1) * sizeof(table *)); old->n--; break; }
		} else {
			v[i] = np->tables[i];
			np->tables[i] = NULL;
			c->pipe_gen++;
		}
	}
	/* what is left of the old pipeline is gone or redefined */
	while (old->n) retire_at(c, old, 0);
	free(old->tables);
	old->tables = v;
	old->n = np->n;
	/* parents and masters by name, within the new set */
	for (size_t i = 0; i < old->n; i++) {
		table *t = old->tables[i];
		for (size_t k = 0; k < t->nfks; k++) t->fks[k].ptable = pipeline_find(old, t->fks[k].parent);
		for (size_t k = 0; k < t->nnullrefs; k++) t->nullrefs[k].ptable = pipeline_find(old, t->nullrefs[k].parent);
		if (t->master) t->master = pipeline_find(old, t->master->name);
	}
	size_t w = 0;
	for (size_t i = 0; i < np->n; i++)
		if (np->tables[i]) np->tables[w++] = np->tables[i];
	np->n = w;
	pipeline_free(np);
}

table **pipe_descendants(djc_conn *c, table *t, size_t *n)
{
	/* the stored order is a topological one: a parent or master is always
	 * declared before the tables that refer to it */
	table **v = xcalloc(c->pipe->n + 1, sizeof(table *));
	size_t k = 0;
	v[k++] = t;
	for (size_t i = 0; i < c->pipe->n; i++) {
		table *x = c->pipe->tables[i];
		if (x == t) continue;
		int dep = 0;
		for (size_t j = 0; j < k && !dep; j++) dep = x->master == v[j] || table_references(x, v[j]);
		if (dep) v[k++] = x;
	}
	*n = k;
	return v;
}

/* The stored definitions, in their order, parsed into *np (nothing
 * stored: NULL and DJC_OK, *none set); a parse failure's message into
 * *msg (caller frees). */
static int stored_read(djc_conn *c, pipeline **np, char **msg, int *none)
{
	*np = NULL;
	*msg = NULL;
	*none = 0;
	db_res *r = NULL;
	int rc = tsql_run(c, &TS_PIPE_LOAD, NULL, NULL, 0, &r);
	if (rc == DJC_ECONN) return conn_dbfail(c, rc, "cannot read the pipeline");
	if (rc == DB_EACCESS)
		/* not "no table declared yet": the tables are there, this user may not see them */
		return conn_fail(c, rc, "permission denied: this database user cannot read djc's pipeline table %s%s%s "
				 "(grant it SELECT on that table): %s", META_TABLE, c->db->schema ? " in schema " : "",
				 c->db->schema ? c->db->schema : "", c->db->err);
	if (rc) {
		/* no pipeline declared yet */
		if (c->db->in_tx) return conn_dbfail(c, rc, "cannot read the pipeline");
		*none = 1;
		return DJC_OK;
	}
	sb_t all = SB_INIT;
	for (size_t i = 0; i < r->nrows; i++) {
		const char *d = db_cell_text(r, i, 0);
		sb_add(&all, d ? d : "");
		sb_addc(&all, '\n');
	}
	db_res_free(r);
	rc = pipeline_parse(np, sb_str(&all), "<stored pipeline>", NULL, msg);
	sb_free(&all);
	return rc ? DJC_ERROR : DJC_OK;
}

int pipe_load(djc_conn *c)
{
	if (!c->db) return conn_fail(c, DJC_ECONN, "not connected");
	pipeline *np = NULL;
	char *msg = NULL;
	int none, rc = stored_read(c, &np, &msg, &none);
	if (rc == DJC_ERROR && msg) {
		rc = conn_fail(c, DJC_ERROR, "the pipeline stored in the database does not parse: %s", msg);
		free(msg);
		return rc;
	}
	if (rc) return rc;
	if (none) {
		if (!c->pipe) c->pipe = xcalloc(1, sizeof(pipeline));
		return DJC_OK;
	}
	pipe_merge(c, np);
	return DJC_OK;
}

/* Inside a declare's change, before it is committed: the stored
 * definitions as they now are still parse (DJC_ECONFLICT naming why: the
 * change is then undone, nothing stored). */
static int stored_parses(djc_conn *c)
{
	pipeline *np = NULL;
	char *msg = NULL;
	int none, rc = stored_read(c, &np, &msg, &none);
	pipeline_free(np);
	if (rc == DJC_ERROR && msg)
		rc = conn_fail(c, DJC_ECONFLICT, "this change would leave the stored pipeline unreadable (%s); nothing changed",
			       msg);
	free(msg);
	return rc;
}

int pipe_has(djc_conn *c, const char *name, int *has)
{
	*has = 1;
	if (!c->db) return conn_fail(c, DJC_ECONN, "not connected");
	val_t v = val_text(name);
	db_res *r = NULL;
	int rc = tsql_run(c, &TS_PIPE_HAS, NULL, &v, 1, &r);
	val_free(&v);
	if (rc) rc = conn_dbfail(c, rc, "reading the stored pipeline");
	else *has = db_cell_int(r, 0, 0) > 0;
	db_res_free(r);
	return rc;
}

int pipe_parse_text(djc_conn *c, const char *text, const char *file, pipeline **np)
{
	*np = NULL;
	int rc = pipe_load(c);
	if (rc) return rc;
	char *msg = NULL;
	if ((rc = pipeline_parse(np, text, file, c->pipe, &msg))) {
		rc = conn_fail(c, rc, "%s", msg);
		free(msg);
	}
	return rc;
}

int conn_table(djc_conn *c, const char *name, table **out)
{
	*out = NULL;
	if (!name) return conn_fail(c, DJC_EINVAL, "no table named (NULL)");
	if (!c->pipe) {
		int rc = pipe_load(c);
		if (rc) return rc;
	}
	table *t = pipeline_lookup(c->pipe, name);
	if (!t) {
		/* another process may have declared it since */
		int rc = pipe_load(c);
		if (rc) return rc;
		t = pipeline_lookup(c->pipe, name);
	}
	if (!t) {
		sb_t b = SB_INIT;
		json_quote(&b, name, strlen(name));
		const char **names = xcalloc(c->pipe->n + 1, sizeof(char *));
		for (size_t i = 0; i < c->pipe->n; i++) names[i] = c->pipe->tables[i]->name;
		const char *near = near_name(name, names, c->pipe->n);
		int rc = conn_fail(c, DJC_ENOTFOUND, "unknown table %s (%s%s%sdeclared tables: %s)", sb_str(&b),
				   near ? "did you mean " : "", near ? near : "", near ? "? " : "",
				   c->pipe->n ? "see djc tables" : "none yet; run djc declare");
		free(names);
		sb_free(&b);
		return rc;
	}
	*out = t;
	return DJC_OK;
}

int djc_tables(char **out, djc_conn *c)
{
	*out = NULL;
	int rc = pipe_load(c);
	if (rc) return rc;
	sb_t b = SB_INIT;
	sb_add(&b, "");
	for (size_t i = 0; i < c->pipe->n; i++) sb_printf(&b, "%s\n", c->pipe->tables[i]->name);
	*out = sb_steal(&b);
	return DJC_OK;
}

static int create_table(djc_conn *c, const table *t)
{
	sb_t q = SB_INIT;
	ddl_create_table(c->db, &q, t);
	int rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
	if (rc) {
		rc = conn_dbfail(c, rc, t->name);
		sb_free(&q);
		return rc;
	}
	for (size_t i = 0; i < t->nidx; i++) {
		if (t->idx[i].unique) continue;
		sb_t cols = SB_INIT, name = SB_INIT;
		ddl_names(c->db, &cols, t->idx[i].attrs, t->idx[i].nattrs);
		table_index_name(&name, t, i);
		sb_reset(&q);
		db_create_index(c->db, &q, t->sql_name, sb_str(&name), sb_str(&cols), 0, NULL);
		rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
		sb_free(&cols);
		sb_free(&name);
		if (rc) { rc = conn_dbfail(c, rc, t->name); break; }
	}
	sb_free(&q);
	return rc;
}

/* CREATE TABLE IF NOT EXISTS for the stored pipeline (under the schema
 * lock, so concurrent first declares do not race on it). */
static int create_meta(djc_conn *c, schema_tx *x)
{
	char **cols = NULL;
	size_t ncols = 0;
	int rc = sql_columns(c, META_TABLE, &cols, &ncols);
	strv_free(cols, ncols);
	if (rc) return conn_dbfail(c, rc, "declare");
	if (ncols) return DJC_OK;
	if ((rc = tsql_run(c, &TS_PIPE_CREATE, NULL, NULL, 0, NULL))) return conn_dbfail(c, rc, "declare");
	/* a first declare that fails leaves no empty catalogue behind either */
	tsql_undo(c, x, &TS_DROP, &(tctx){.table = META_TABLE}, NULL, 0);
	return DJC_OK;
}

/* djc never takes over a table it did not declare. A new table: no table
 * of its name (or of its auxiliary tables' names) may exist. A declared
 * table: its SQL table must exist with the columns of its stored
 * definition. DJC_ECONFLICT naming the table and the difference. */
static int check_sql_table(djc_conn *c, const table *nt, const table *old, const char *file)
{
	char **cols = NULL;
	size_t ncols = 0;
	int rc;
	if (!old) {
		const char *names[TABLE_AUX_MAX + 1];
		names[0] = nt->sql_name;
		size_t n = 1 + table_aux_tables(nt, names + 1, TABLE_AUX_MAX);
		/* an adopted table is DataJoint's (probed by tbl_declare): only
		 * its jobs tables are djc's, in the connection's schema */
		for (size_t i = nt->adopted ? 1 : 0; i < n; i++) {
			if ((rc = sql_columns(c, names[i], &cols, &ncols))) return conn_dbfail(c, rc, nt->name);
			strv_free(cols, ncols);
			if (ncols)
				return conn_fail(c, DJC_ECONFLICT,
						 "%s:%d: table %s: a table named '%s' already exists in the database, and djc did not "
						 "declare it (it is not in the stored pipeline); djc never takes over a table it did not "
						 "create: drop or rename that table, or declare into another --schema",
						 file, nt->line, nt->name, names[i]);
		}
		return DJC_OK;
	}
	if (old->adopted) return DJC_OK;
	if ((rc = sql_columns(c, old->sql_name, &cols, &ncols))) return conn_dbfail(c, rc, nt->name);
	if (!ncols)
		return conn_fail(c, DJC_ECONFLICT,
				 "%s:%d: table %s is declared, but its SQL table '%s' is missing from the database; "
				 "'djc drop %s' removes its stored definition%s, then declare it again",
				 file, nt->line, nt->name, old->sql_name, old->master ? old->master->name : nt->name,
				 old->master ? " (with its master's)" : "");
	sb_t diff = SB_INIT;
	for (size_t i = 0; i < old->nattrs + old->nhidden; i++) {
		int have = 0;
		for (size_t k = 0; k < ncols && !have; k++) have = !strcmp(cols[k], old->attrs[i].name);
		if (!have) sb_printf(&diff, "%scolumn '%s' is missing", diff.len ? ", " : "", old->attrs[i].name);
	}
	for (size_t k = 0; k < ncols; k++)
		if (!table_attr_any(old, cols[k])) sb_printf(&diff, "%scolumn '%s' is not in the definition", diff.len ? ", " : "", cols[k]);
	strv_free(cols, ncols);
	rc = DJC_OK;
	if (diff.len)
		rc = conn_fail(c, DJC_ECONFLICT,
			       "%s:%d: table %s: its SQL table '%s' differs from its stored definition (%s); djc never takes "
			       "over a table it did not create: 'djc drop %s' removes it with its rows, then declare it again",
			       file, nt->line, nt->name, old->sql_name, sb_str(&diff), nt->name);
	sb_free(&diff);
	return rc;
}

/* A declared table is never changed by declare: when the text (its
 * job_metadata line) or jobs.add_job_metadata asks for job metadata columns
 * that the declared table lacks, the "exists" line says so and how to get
 * them (docs/parity.md). */
static const char *job_meta_note(const table *old, const table *nt)
{
	if (!old || old->job_meta || (old->tier != TIER_COMPUTED && old->tier != TIER_IMPORTED)) return "";
	if (!nt->job_meta && !config_bool("jobs.add_job_metadata")) return "";
	return " (left without job metadata columns: it was declared without them; 'djc drop' it and declare "
	       "again to add them)";
}

/* Without the lock: 1 when the text has a table that is not declared yet
 * (or whose SQL table, or an auxiliary table of it, is not as stored), so
 * that the locked path must decide (a conflicting definition too: it is
 * refused there, after the latest stored pipeline was read); 0 with the
 * "exists" report when every table is declared and whole; a code when
 * the database failed. */
static int declare_declared(djc_conn *c, const char *text, const char *file, sb_t *tabs)
{
	pipeline *np = NULL;
	char *msg = NULL;
	int rc = pipeline_parse(&np, text, file, c->pipe, &msg);
	if (rc) {
		rc = conn_fail(c, rc, "%s", msg);
		free(msg);
		return rc;
	}
	sb_reset(tabs);
	for (size_t i = 0; i < np->n && !rc; i++) {
		table *t = np->tables[i], *old = pipeline_find(c->pipe, t->name);
		if (!old || strcmp(old->canon, t->canon) || strcmp(old->how, t->how)) { rc = 1; break; }
		char **cols = NULL;
		size_t ncols = 0;
		int whole = 1;
		if (!old->adopted) {   /* an adopted one was probed by tbl_declare */
			if ((rc = sql_columns(c, old->sql_name, &cols, &ncols))) { rc = conn_dbfail(c, rc, t->name); break; }
			whole = ncols == old->nattrs + old->nhidden;
			for (size_t k = 0; k < ncols && whole; k++) whole = table_attr_any(old, cols[k]) != NULL;
			strv_free(cols, ncols);
		}
		const char *names[TABLE_AUX_MAX];
		size_t na = table_aux_tables(old, names, TABLE_AUX_MAX);
		for (size_t k = 0; k < na && whole && !rc; k++) {
			if ((rc = sql_columns(c, names[k], &cols, &ncols))) rc = conn_dbfail(c, rc, t->name);
			strv_free(cols, ncols);
			whole = ncols > 0;
		}
		if (!rc && !whole) rc = 1;
		if (!rc) sb_printf(tabs, "exists  %s (%s) as %s%s\n", t->name, tier_name(t->tier), t->sql_name, job_meta_note(old, t));
	}
	pipeline_free(np);
	return rc;
}

/* DataJoint 2.x refuses to declare a computed or imported table with a
 * primary key attribute that comes from no parent (make is called once
 * per key of the parents, so one job would make several rows), unless
 * jobs.allow_new_pk_fields_in_computed_tables is true; so does djc, for
 * a table whose key source is its parents (a key_source line naming its
 * tables says what a job is). DataJoint checks the setting only when it
 * declares a table, never when it populates one: an adopted table was
 * declared by DataJoint (whatever its setting then), so it is not
 * checked; its jobs are its parents' keys, as in DataJoint's populate.
 * DJC_EINVAL naming the attributes. */
static int own_key_check(djc_conn *c, const table *t, const char *file)
{
	if ((t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED) || t->key_source_join || t->adopted ||
	    config_bool("jobs.allow_new_pk_fields_in_computed_tables"))
		return DJC_OK;
	sb_t own = SB_INIT;
	size_t n = 0;
	for (size_t i = 0; i < t->nkey; i++)
		if (!t->attrs[i].from_parent) sb_printf(&own, "%s%s", n++ ? ", " : "", t->attrs[i].name);
	int rc = DJC_OK;
	if (n)
		rc = conn_fail(c, DJC_EINVAL,
			       "%s:%d: %s table %s has primary key attribute%s %s from no parent: make is called once per key of "
			       "its parents, so one job would make several rows; as DataJoint does, djc declares such a table "
			       "only with jobs.allow_new_pk_fields_in_computed_tables set to true (jobs are then the parents' "
			       "keys); a part table holds several rows per key",
			       file, t->line, tier_name(t->tier), t->name, n > 1 ? "s" : "", sb_str(&own));
	sb_free(&own);
	return rc;
}

/* DJC_ECONFLICT: the declared table old is not as the text t defines it;
 * the message says what differs and what to do (alter, or drop). */
static int declare_conflict(djc_conn *c, const table *old, const table *t, const char *file)
{
	sb_t why = SB_INIT;
	int rc;
	if (tbl_declare_diff(c, old, t, file, &why))
		rc = conn_fail(c, DJC_ECONFLICT, "%s:%d: table %s is already declared with a different definition: %s", file,
			       t->line, t->name, sb_str(&why));
	else
		rc = conn_fail(c, DJC_ECONFLICT,
			       "%s:%d: table %s is already declared with a different definition (%s); 'djc alter %s' makes %s, "
			       "'djc drop %s' drops it (and what depends on it) to declare it anew, or declare into another "
			       "--schema",
			       file, t->line, t->name, why.len ? sb_str(&why) : "its text", file, "the change", t->name);
	sb_free(&why);
	return rc;
}

/* The declared table old and t differ only in how their rows are made
 * (make, make_serve, timeout): not the table's definition (in DataJoint,
 * make is code). Its stored text gets t's lines (table_text_with_how),
 * under the schema-change lock; the report says what changed. */
static int declare_how(djc_conn *c, schema_tx *x, const table *old, const table *t, sb_t *tabs)
{
	char *text = table_text_with_how(old, t);
	int rc = pipe_set_text(c, x, old->name, text, old->text);
	free(text);
	if (rc) return rc;
	char *how[3];
	size_t n = table_how_changes(old, t, how);
	sb_printf(tabs, "updated %s (%s) as %s:", t->name, tier_name(t->tier), t->sql_name);
	for (size_t i = 0; i < n; i++) {
		sb_printf(tabs, "%s %s", i ? "," : "", how[i]);
		free(how[i]);
	}
	sb_printf(tabs, "%s\n", job_meta_note(old, t));
	return DJC_OK;
}

/* Everything checked before anything is created: no stored table of the
 * text changes (that is alter's; an adopted one's new definition is
 * taken when accept is set: tbl_accept), a new table's own key holds,
 * and each SQL table is as its stored definition says (check_sql_table). */
/* The index of the stored table named name in c->pipe, or -1. */
static long stored_at(const djc_conn *c, const char *name)
{
	for (size_t i = 0; name && i < c->pipe->n; i++)
		if (!strcmp(c->pipe->tables[i]->name, name)) return (long)i;
	return -1;
}

/* accept: t, the new definition of the stored adopted table old, takes
 * old's place in the stored order, which is read in order: every table it
 * depends on (its references, nullable ones too, its key source's tables,
 * its master) must be stored before it. DJC_ECONFLICT naming the first
 * that is not (adopted only now, or stored after it). */
static int accepted_order(djc_conn *c, const table *old, const table *t)
{
	long at = stored_at(c, old->name);
	size_t n = t->nfks + t->nnullrefs + t->nks + 1;
	for (size_t k = 0; k < n; k++) {
		const char *dep = k < t->nfks                 ? t->fks[k].parent
				  : k < t->nfks + t->nnullrefs ? t->nullrefs[k - t->nfks].parent
				  : k < n - 1                  ? t->ks_tables[k - t->nfks - t->nnullrefs]->name
				  : t->master                  ? t->master->name
							       : NULL;
		if (!dep) continue;
		long i = stored_at(c, dep);
		if (i >= 0 && i < at) continue;
		return conn_fail(c, DJC_ECONFLICT,
				 "adopt: table %s now depends on %s, which is %s: its new definition cannot take the place of "
				 "the stored one; djc unadopt %s, then djc adopt it again",
				 t->name, dep, i < 0 ? "adopted only now" : "stored after it", old->adopted);
	}
	return DJC_OK;
}

static int declare_check(djc_conn *c, const pipeline *np, const char *file, int accept)
{
	int rc = DJC_OK;
	for (size_t i = 0; i < np->n && !rc; i++) {
		table *t = np->tables[i], *old = pipeline_find(c->pipe, t->name);
		if (old && old->adopted && strcmp(old->canon, t->canon)) {
			/* (a dry run's: declare refuses it under its lock, half way) */
			if (accept == 2 && (rc = accepted_order(c, old, t))) return rc;
			if (accept) continue;
			char *m = table_adopted_refusal(old);
			rc = conn_fail(c, DJC_ECONFLICT, "%s:%d: %s (its stored definition differs from this text; djc adopt %s "
				       "--accept-changes takes the new one, keeping its jobs)", file, t->line, m, old->adopted);
			free(m);
			return rc;
		}
		if (old && strcmp(old->canon, t->canon)) return declare_conflict(c, old, t, file);
		if (!old && (rc = own_key_check(c, t, file))) break;
		rc = check_sql_table(c, t, old, file);
	}
	return rc;
}

/* The position the first table declared now takes: after every stored one. */
static int pipe_next(djc_conn *c, long *base)
{
	db_res *r = NULL;
	*base = 0;
	int rc = tsql_run(c, &TS_PIPE_NEXT, NULL, NULL, 0, &r);
	if (rc) return conn_dbfail(c, rc, "declare");
	if (r->nrows && db_cell(r, 0, 0)->t != DJC_NULL) *base = (long)db_cell_int(r, 0, 0) + 1;
	db_res_free(r);
	return DJC_OK;
}

/* Make the new table t at position pos: the stored definition first, then
 * the table, then its auxiliary tables (aux); each undo step is recorded
 * before its step (a CREATE TABLE whose index then fails has made the
 * table all the same). Where DDL is not transactional, a declare killed
 * half way so leaves a stored definition that djc drop can clean up,
 * never a table that no stored definition owns. */
static int declare_new(djc_conn *c, schema_tx *x, table *t, long pos, tbl_aux_fn aux, sb_t *jobs)
{
	val_t name = val_text(t->name);
	tsql_undo(c, x, &TS_PIPE_FORGET, NULL, &name, 1);
	val_t p[4] = {name, val_int(pos), val_text(tier_name(t->tier)), val_text(t->text)};
	int rc = tsql_run(c, &TS_PIPE_INSERT, NULL, p, 4, NULL);
	for (int k = 0; k < 4; k++) val_free(&p[k]);
	if (rc) return conn_dbfail(c, rc, t->name);
	if (!t->adopted) {   /* never DDL on DataJoint's tables */
		tsql_undo(c, x, &TS_DROP, &(tctx){.table = t->sql_name}, NULL, 0);
		if ((rc = create_table(c, t))) return rc;
	}
	if (!t->jobs_name) return DJC_OK;
	const char *names[TABLE_AUX_MAX];
	size_t na = table_aux_tables(t, names, TABLE_AUX_MAX);
	/* undone in reverse: these go before the table */
	for (size_t k = na; k-- > 0;) tsql_undo(c, x, &TS_DROP, &(tctx){.table = names[k]}, NULL, 0);
	if ((rc = aux(c, t))) return rc;
	sb_printf(jobs, "created %s jobs table %s\n", t->name, t->jobs_name);
	return DJC_OK;
}

/* The stored adopted table old, whose definition differs from t's, takes
 * t's (djc adopt --accept-changes): its text, then acc->renew for its
 * auxiliary tables. Its position stays: a table it now references must
 * be stored before it (the stored pipeline is parsed in order). */
static int declare_accepted(djc_conn *c, schema_tx *x, const table *old, table *t, const tbl_accept *acc, sb_t *tabs)
{
	int rc = accepted_order(c, old, t);
	if (!rc) rc = pipe_set_text(c, x, old->name, t->text, old->text);
	if (!rc) rc = acc->renew(c, x, acc->ctx, old, t, tabs);
	return rc;
}

/* The tables of np, stored, updated or made, in their order, the new
 * ones from position base on (the lock held): the report lines into tabs
 * and jobs. */
static int declare_tables(djc_conn *c, schema_tx *x, const pipeline *np, long base, const tbl_declare_ways *h, sb_t *tabs,
			  sb_t *jobs)
{
	tbl_aux_fn aux = h->aux;
	const tbl_accept *acc = h->acc;
	long made = 0;
	int rc = DJC_OK;
	for (size_t i = 0; i < np->n && !rc; i++) {
		table *t = np->tables[i], *old = pipeline_find(c->pipe, t->name);
		if (acc && old && old->adopted && strcmp(old->canon, t->canon)) rc = declare_accepted(c, x, old, t, acc, tabs);
		else if (old && strcmp(old->how, t->how)) rc = declare_how(c, x, old, t, tabs);
		else if (old)
			sb_printf(tabs, "exists  %s (%s) as %s%s\n", t->name, tier_name(t->tier), t->sql_name, job_meta_note(old, t));
		else {
			/* jobs.add_job_metadata: the hidden columns on the tables made now */
			if (config_bool("jobs.add_job_metadata")) table_enable_job_meta(t);
			if ((rc = declare_new(c, x, t, base + made, aux, jobs))) break;
			made++;
			sb_printf(tabs, "created %s (%s) as %s\n", t->name, tier_name(t->tier), t->sql_name);
		}
	}
	return rc;
}

/* np's tables went through the jobs layer, which keeps state per table
 * object: they stay allocated until djc_close (retired), so that no later
 * table object takes the address of one and its state. Frees np. */
static void retire_parsed(djc_conn *c, pipeline *np)
{
	for (size_t i = 0; np && i < np->n; i++) {
		if (!c->retired) c->retired = xcalloc(1, sizeof(pipeline));
		c->retired->tables = xrealloc(c->retired->tables, (c->retired->n + 1) * sizeof(table *));
		c->retired->tables[c->retired->n++] = np->tables[i];
	}
	if (np) np->n = 0;
	pipeline_free(np);
}

/* The jobs layer remembers per table object that its jobs table exists;
 * for a jobs table made in a change that was undone that is no longer
 * true. The stored tables ran[0..n) get fresh objects (c->err kept). */
static void declare_undone(djc_conn *c, table **ran, size_t n)
{
	if (!n) return;
	char keep[sizeof c->err];
	snprintf(keep, sizeof keep, "%s", c->err);
	for (size_t i = 0; i < n; i++) pipe_retire(c, ran[i]);
	pipe_load(c);
	snprintf(c->err, sizeof c->err, "%s", keep);
}

/* w->then on the text's tables p, as conn_tx's body. */
typedef struct then_call {
	const tbl_declare_ways *w;
	const pipeline *p;
} then_call;

static int then_body(djc_conn *c, void *arg)
{
	const then_call *t = arg;
	return t->w->then(c, t->p, t->w->then_arg);
}

/* w->then's rows, written in the schema change x (the lock held, the DDL
 * done): in x's transaction where DDL is transactional, else in one of
 * their own, rolled back when it fails (x is then undone by the caller). */
static int declare_then_run(djc_conn *c, const schema_tx *x, const tbl_declare_ways *w, const pipeline *np)
{
	if (!w->then) return DJC_OK;
	if (x->d->transactional) return w->then(c, np, w->then_arg);
	int rc = db_begin(c->db);
	if (rc) return conn_dbfail(c, rc, "declare");
	if (!(rc = w->then(c, np, w->then_arg)) && (rc = db_commit(c->db))) rc = conn_dbfail(c, rc, "declare");
	if (rc) db_rollback(c->db);
	return rc;
}

/* One attempt at declaring. *locked is set once the schema-change lock
 * was had (tbl_declare retries a DJC_EBUSY after that: a deadlock, not a
 * lock that did not come in time). */
static int declare_once(djc_conn *c, const char *text, const char *file, const tbl_declare_ways *h, sb_t *tabs,
			sb_t *jobs, int *locked)
{
	tbl_aux_fn aux = h->aux;
	const tbl_accept *acc = h->acc;
	sb_reset(tabs);
	sb_reset(jobs);
	schema_tx x;
	*locked = 0;
	int rc = stx_begin(c, &x);
	if (rc) return rc;
	*locked = 1;
	pipeline *np = NULL;
	table **ran = NULL;   /* stored tables whose aux ran in this change */
	size_t nran = 0;
	if ((rc = create_meta(c, &x))) goto fail;
	/* what is stored now, under the lock: another declare may just have
	 * stored the very tables of this text */
	if ((rc = pipe_parse_text(c, text, file, &np))) goto fail;
	long base;
	if ((rc = declare_check(c, np, file, acc != NULL)) || (rc = pipe_next(c, &base))) goto fail;
	ran = xcalloc(c->pipe->n + 1, sizeof(table *));
	for (size_t i = 0; i < c->pipe->n; i++) {
		/* jobs tables of the declared tables (made again if lost) */
		table *t = c->pipe->tables[i];
		if (!t->jobs_name) continue;
		ran[nran++] = t;
		if ((rc = aux(c, t))) goto fail;
	}
	if (acc && acc->before && (rc = acc->before(c, &x, acc->ctx, tabs))) goto fail;
	if ((rc = declare_tables(c, &x, np, base, h, tabs, jobs))) goto fail;
	if (acc && acc->verify && (rc = acc->verify(c, &x, acc->ctx))) goto fail;
	/* the stored pipeline must still read: it is parsed in order, every
	 * table after what it depends on */
	if ((rc = stored_parses(c))) goto fail;
	/* rows before acc->after, whose drops come last (not undone where DDL
	 * is not transactional) */
	if ((rc = declare_then_run(c, &x, h, np))) goto fail;
	if (acc && acc->after && (rc = acc->after(c, &x, acc->ctx))) goto fail;
	if ((rc = stx_commit(c, &x))) goto undone;
	/* the stored pipeline now holds the new tables */
	rc = pipe_load(c);
	goto out;
fail:
	stx_abort(c, &x);
undone:
	declare_undone(c, ran, nran);
out:
	free(ran);
	retire_parsed(c, np);
	return rc;
}

int tbl_declare_check(djc_conn *c, const char *text, const char *file, size_t *ntables, int stored)
{
	if (ntables) *ntables = 0;
	pipeline *np;
	int rc = pipe_parse_text(c, text, file, &np);
	if (rc) return rc;
	if (ntables) *ntables = np->n;
	/* a dry run's: what declare checks under its lock (reads only) */
	if ((stored && (rc = declare_check(c, np, file, stored == 2 ? 2 : 0))) || (rc = keysource_check(c, np, file))) {
		pipeline_free(np);
		return rc;
	}
	/* DataJoint's limit is the backend's: PostgreSQL keeps 63 characters */
	const ddl_dialect *d = c->db ? db_ddl(c->db) : NULL;
	for (size_t i = 0; d && i < np->n; i++) {
		const table *t = np->tables[i];
		if (t->adopted && (rc = adopted_probe(c, t, file))) {
			pipeline_free(np);
			return rc;
		}
		if (strlen(t->sql_name) > (size_t)d->max_name) {
			rc = conn_fail(c, DJC_EINVAL, "%s:%d: table name %s is too long for %s: its SQL name '%s' has %zu characters, "
				       "more than the %d it keeps", file, t->line, t->name, d->driver, t->sql_name,
				       strlen(t->sql_name), d->max_name);
			pipeline_free(np);
			return rc;
		}
	}
	pipeline_free(np);
	return DJC_OK;
}

int tbl_declare(djc_conn *c, const char *text, const char *filename, tbl_aux_fn aux, char **report)
{
	return tbl_declare_with(c, text, filename, &(tbl_declare_ways){.aux = aux}, report);
}

/* Every table of the text declared already: w->then alone, in a
 * transaction, on the text's tables. */
static int declared_then(djc_conn *c, const char *text, const char *file, const tbl_declare_ways *w)
{
	pipeline *np = NULL;
	int rc = pipe_parse_text(c, text, file, &np);
	if (rc) return rc;
	then_call t = {w, np};
	rc = conn_tx(c, "declare", TX_IDEMPOTENT, then_body, &t);
	retire_parsed(c, np);
	return rc;
}

int tbl_declare_with(djc_conn *c, const char *text, const char *filename, const tbl_declare_ways *w, char **report)
{
	const tbl_accept *acc = w->acc;
	if (report) *report = NULL;
	const char *file = filename ? filename : "<pipeline>";
	/* bad input is refused before any lock is taken or anything written */
	size_t n;
	int rc = tbl_declare_check(c, text, file, &n, 0);
	if (rc) return rc;
	if (!n) return conn_fail(c, DJC_EINVAL, "%s: no tables declared (a table starts with 'Name (tier)')", file);
	sb_t tabs = SB_INIT, jobs = SB_INIT;
	/* Every worker of a cluster may start with declare: when every table
	 * of the text is declared already, as it is, and whole, nothing needs
	 * the lock (which would make a thousand workers queue for it) */
	if (!acc && (rc = declare_declared(c, text, file, &tabs)) != 1) {
		if (!rc && w->then) rc = declared_then(c, text, file, w);
		if (!rc && report) *report = sb_steal(&tabs);
		sb_free(&tabs);
		return rc;
	}
	/* a deadlock with other sessions' DDL is retried as every transaction
	 * is (conn_retry); a lock that did not come in time is not */
	for (int attempt = 0;;) {
		int locked;
		rc = declare_once(c, text, file, w, &tabs, &jobs, &locked);
		if (!locked || !conn_retry(c, rc, 1, 0, &attempt)) break;
	}
	if (!rc && report) {
		sb_add(&tabs, sb_str(&jobs));
		if (!tabs.len) sb_add(&tabs, "");
		*report = sb_steal(&tabs);
	}
	sb_free(&tabs);
	sb_free(&jobs);
	return rc;
}
