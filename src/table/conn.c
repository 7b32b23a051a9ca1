/* conn.c - connections, error messages, the stored pipeline and declare. */
#include "table.h"
#include "util/config.h"
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
	default: return "error";
	}
}

int conn_fail(djc_conn *c, int code, const char *fmt, ...)
{
	if (code == DB_EUNIQUE) code = DJC_EDUPLICATE;   /* internal detail, public class */
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

int djc_open(djc_conn **out, const char *url, const char *schema)
{
	djc_conn *c = xcalloc(1, sizeof *c);
	*out = c;
	char *msg = NULL;
	if (config_load(&msg)) {
		int rc = conn_fail(c, DJC_EINVAL, "%s", msg);
		free(msg);
		return rc;
	}
	if (!url || !*url) url = config_get("database.url");
	if (!schema || !*schema) {
		const char *s = config_get("database.schema");
		schema = *s ? s : NULL;
	}
	const char *pw = config_get("database.password");
	if (*pw && !getenv("DJC_DATABASE_PASSWORD")) setenv("DJC_DATABASE_PASSWORD", pw, 1);
	c->url = xstrdup(url);
	c->schema = schema ? xstrdup(schema) : NULL;
	char err[1024];
	/* database.pooler: the URL's pooler= parameter, when given, decides */
	int flags = !strcmp(config_get("database.pooler"), "transaction") ? DB_OPEN_POOLED : 0;
	int rc = db_open_ext(&c->db, url, schema, flags, err, sizeof err);
	if (rc) return conn_fail(c, rc, "%s", err);
	return DJC_OK;
}

void djc_close(djc_conn *c)
{
	if (!c) return;
	db_close(c->db);
	if (c->jobs_free) c->jobs_free(c->jobs);
	pipeline_free(c->pipe);
	free(c->url);
	free(c->schema);
	free(c);
}

/* Add the tables of np that c->pipe lacks to c->pipe, and free the rest
 * of np. The tables c->pipe already has stay where they are: jobs, make
 * contexts and populate hold pointers to them for as long as the
 * connection lives, and a declared table's definition never changes. */
static void pipe_merge(djc_conn *c, pipeline *np)
{
	if (!c->pipe) { c->pipe = np; return; }
	size_t n0 = c->pipe->n;
	for (size_t i = 0; i < np->n; i++) {
		if (pipeline_find(c->pipe, np->tables[i]->name)) continue;
		c->pipe->tables = xrealloc(c->pipe->tables, (c->pipe->n + 1) * sizeof(table *));
		c->pipe->tables[c->pipe->n++] = np->tables[i];
		np->tables[i] = NULL;
	}
	/* the added tables refer to their parents and masters in np: point
	 * them at the copies c->pipe keeps */
	for (size_t i = n0; i < c->pipe->n; i++) {
		table *t = c->pipe->tables[i];
		for (size_t k = 0; k < t->nfks; k++) t->fks[k].ptable = pipeline_find(c->pipe, t->fks[k].parent);
		if (t->master) t->master = pipeline_find(c->pipe, t->master->name);
	}
	size_t w = 0;
	for (size_t i = 0; i < np->n; i++)
		if (np->tables[i]) np->tables[w++] = np->tables[i];
	np->n = w;
	pipeline_free(np);
}

int pipe_load(djc_conn *c)
{
	if (!c->db) return conn_fail(c, DJC_ECONN, "not connected");
	sb_t q = SB_INIT;
	sb_add(&q, "SELECT definition FROM ");
	db_qtable(c->db, &q, META_TABLE);
	sb_add(&q, " ORDER BY position");
	db_res *r = NULL;
	int rc = db_exec(c->db, sb_str(&q), NULL, 0, &r);
	sb_free(&q);
	if (rc == DJC_ECONN) return conn_dbfail(c, rc, "cannot read the pipeline");
	if (rc) {
		/* no pipeline declared yet */
		if (c->db->in_tx) return conn_dbfail(c, rc, "cannot read the pipeline");
		if (!c->pipe) c->pipe = xcalloc(1, sizeof(pipeline));
		return DJC_OK;
	}
	sb_t all = SB_INIT;
	for (size_t i = 0; i < r->nrows; i++) {
		const char *d = db_cell_text(r, i, 0);
		sb_add(&all, d ? d : "");
		sb_addc(&all, '\n');
	}
	db_res_free(r);
	char *msg = NULL;
	pipeline *np = NULL;
	rc = pipeline_parse(&np, sb_str(&all), "<stored pipeline>", NULL, &msg);
	sb_free(&all);
	if (rc) {
		rc = conn_fail(c, DJC_ERROR, "the pipeline stored in the database does not parse: %s", msg);
		free(msg);
		return rc;
	}
	pipe_merge(c, np);
	return DJC_OK;
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
		int rc = conn_fail(c, DJC_ENOTFOUND, "unknown table %s (declared tables: %s)", sb_str(&b),
				   c->pipe->n ? "see djc tables" : "none yet; run djc declare");
		sb_free(&b);
		return rc;
	}
	*out = t;
	return DJC_OK;
}

int djc_tables(djc_conn *c, char **out)
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

void ddl_column(djc_conn *c, sb_t *b, const attr *a, int not_null)
{
	db_qi(c->db, b, a->name);
	sb_addc(b, ' ');
	c->db->drv->column_type(b, &a->type);
	if (not_null) sb_add(b, " NOT NULL");
}

static void cols_list(djc_conn *c, sb_t *b, char **names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i) sb_add(b, ", ");
		db_qi(c->db, b, names[i]);
	}
}

static int create_table(djc_conn *c, const table *t)
{
	sb_t q = SB_INIT;
	sb_add(&q, "CREATE TABLE IF NOT EXISTS ");
	db_qtable(c->db, &q, t->sql_name);
	sb_add(&q, " (");
	for (size_t i = 0; i < t->nattrs; i++) {
		if (i) sb_add(&q, ", ");
		ddl_column(c, &q, &t->attrs[i], !t->attrs[i].nullable);
	}
	sb_add(&q, ", PRIMARY KEY (");
	for (size_t i = 0; i < t->nkey; i++) {
		if (i) sb_add(&q, ", ");
		db_qi(c->db, &q, t->attrs[i].name);
	}
	sb_addc(&q, ')');
	for (size_t i = 0; i < t->nfks; i++) {
		const fkey *f = &t->fks[i];
		sb_add(&q, ", FOREIGN KEY (");
		cols_list(c, &q, f->attrs, f->nattrs);
		sb_add(&q, ") REFERENCES ");
		db_qtable(c->db, &q, f->ptable->sql_name);
		sb_add(&q, " (");
		cols_list(c, &q, f->attrs, f->nattrs);
		sb_add(&q, ") ON UPDATE CASCADE ON DELETE RESTRICT");
	}
	for (size_t i = 0; i < t->nidx; i++)
		if (t->idx[i].unique) {
			sb_add(&q, ", UNIQUE (");
			cols_list(c, &q, t->idx[i].attrs, t->idx[i].nattrs);
			sb_addc(&q, ')');
		}
	sb_addc(&q, ')');
	sb_add(&q, c->db->table_suffix);
	int rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
	if (rc) {
		rc = conn_dbfail(c, rc, t->name);
		sb_free(&q);
		return rc;
	}
	for (size_t i = 0; i < t->nidx; i++) {
		if (t->idx[i].unique) continue;
		sb_t cols = SB_INIT, name = SB_INIT;
		cols_list(c, &cols, t->idx[i].attrs, t->idx[i].nattrs);
		sb_printf(&name, "%s_i%zu", t->sql_name, i);
		sb_reset(&q);
		db_create_index(c->db, &q, t->sql_name, sb_str(&name), sb_str(&cols), 0);
		rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL);
		sb_free(&cols);
		sb_free(&name);
		if (rc) { rc = conn_dbfail(c, rc, t->name); break; }
	}
	sb_free(&q);
	return rc;
}

int tbl_declare(djc_conn *c, const char *text, const char *filename, char **report, table ***created, size_t *ncreated)
{
	*created = NULL;
	*ncreated = 0;
	if (report) *report = NULL;
	int rc = pipe_load(c);
	if (rc) return rc;
	pipeline *np = NULL;
	char *msg = NULL;
	rc = pipeline_parse(&np, text, filename, c->pipe, &msg);
	if (rc) {
		rc = conn_fail(c, rc, "%s", msg);
		free(msg);
		return rc;
	}
	if (!np->n) {
		pipeline_free(np);
		return conn_fail(c, DJC_EINVAL, "%s: no tables declared (a table starts with 'Name (tier)')", filename ? filename : "<pipeline>");
	}
	/* check every table against the stored ones before creating anything */
	for (size_t i = 0; i < np->n; i++) {
		table *old = pipeline_find(c->pipe, np->tables[i]->name);
		if (old && strcmp(old->canon, np->tables[i]->canon)) {
			rc = conn_fail(c, DJC_ECONFLICT,
				       "%s:%d: table %s is already declared with a different definition; djc never alters or drops "
				       "tables (drop it yourself, or declare into another --schema)",
				       filename ? filename : "<pipeline>", np->tables[i]->line, np->tables[i]->name);
			pipeline_free(np);
			return rc;
		}
	}
	sb_t rep = SB_INIT;
	sb_add(&rep, "");
	table **made = xcalloc(np->n, sizeof(table *));
	size_t nmade = 0;
	sb_t q = SB_INIT;
	if ((rc = db_begin(c->db))) { rc = conn_dbfail(c, rc, "declare"); goto out; }
	sb_add(&q, "CREATE TABLE IF NOT EXISTS ");
	db_qtable(c->db, &q, META_TABLE);
	sb_add(&q, " (");
	{
		attr name = {.name = "name", .type = {T_VARCHAR, 255, 0, NULL, 0}};
		attr pos = {.name = "position", .type = {T_INT32, 0, 0, NULL, 0}};
		attr tiera = {.name = "tier", .type = {T_VARCHAR, 16, 0, NULL, 0}};
		attr def = {.name = "definition", .type = {T_TEXT, 0, 0, NULL, 0}};
		ddl_column(c, &q, &name, 1); sb_add(&q, ", ");
		ddl_column(c, &q, &pos, 1); sb_add(&q, ", ");
		ddl_column(c, &q, &tiera, 1); sb_add(&q, ", ");
		ddl_column(c, &q, &def, 1);
		sb_add(&q, ", PRIMARY KEY (");
		db_qi(c->db, &q, "name");
		sb_add(&q, "))");
		sb_add(&q, c->db->table_suffix);
	}
	if ((rc = db_exec(c->db, sb_str(&q), NULL, 0, NULL))) { rc = conn_dbfail(c, rc, "declare"); goto fail; }
	long base = (long)c->pipe->n;
	for (size_t i = 0; i < np->n; i++) {
		table *t = np->tables[i];
		if (pipeline_find(c->pipe, t->name)) {
			sb_printf(&rep, "exists  %s (%s) as %s\n", t->name, tier_name(t->tier), t->sql_name);
			continue;
		}
		if ((rc = create_table(c, t))) goto fail;
		sb_reset(&q);
		sb_add(&q, "INSERT INTO ");
		db_qtable(c->db, &q, META_TABLE);
		sb_add(&q, " (");
		db_qi(c->db, &q, "name"); sb_add(&q, ", ");
		db_qi(c->db, &q, "position"); sb_add(&q, ", ");
		db_qi(c->db, &q, "tier"); sb_add(&q, ", ");
		db_qi(c->db, &q, "definition");
		sb_add(&q, ") VALUES (?, ?, ?, ?)");
		val_t p[4] = {val_text(t->name), val_int(base + (long)nmade), val_text(tier_name(t->tier)), val_text(t->text)};
		rc = db_exec(c->db, sb_str(&q), p, 4, NULL);
		for (int k = 0; k < 4; k++) val_free(&p[k]);
		if (rc == DJC_EDUPLICATE) {
			rc = conn_fail(c, DJC_ECONFLICT, "table %s was declared by another process at the same time; run declare again", t->name);
			goto fail;
		}
		if (rc) { rc = conn_dbfail(c, rc, t->name); goto fail; }
		made[nmade++] = t;
		sb_printf(&rep, "created %s (%s) as %s\n", t->name, tier_name(t->tier), t->sql_name);
	}
	if ((rc = db_commit(c->db))) { rc = conn_dbfail(c, rc, "declare"); goto fail; }
	/* the stored pipeline now holds the new tables: reload it and hand back
	 * the created ones from the reloaded copy */
	if ((rc = pipe_load(c))) goto out;
	for (size_t i = 0; i < nmade; i++) made[i] = pipeline_find(c->pipe, made[i]->name);
	*created = made;
	*ncreated = nmade;
	made = NULL;
	if (report) *report = sb_steal(&rep);
	goto out;
fail:
	db_rollback(c->db);
out:
	free(made);
	sb_free(&rep);
	sb_free(&q);
	pipeline_free(np);
	return rc;
}
