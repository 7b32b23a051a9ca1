/* graph.c - the declared pipeline as a graph (djc_pipeline_json): what
 * diagrams and pipeline-wide progress need, tables with their tier, master
 * and parents, without a caller having to parse definitions. */
#include "table.h"
#include <jansson.h>
#include <stdlib.h>

int djc_pipeline_json(char **out, djc_conn *c)
{
	if (!out) return conn_fail(c, DJC_EINVAL, "djc_pipeline_json: out is NULL");
	*out = NULL;
	int rc = pipe_load(c);
	if (rc) return rc;
	json_t *tables = json_array();
	for (size_t i = 0; i < c->pipe->n; i++) {
		const table *t = c->pipe->tables[i];
		json_t *parents = json_array(), *key = json_array();
		for (size_t f = 0; f < t->nfks; f++)
			json_array_append_new(parents, json_pack("{s:s,s:b}", "name", t->fks[f].parent, "primary", t->fks[f].in_key));
		for (size_t a = 0; a < t->nkey; a++) json_array_append_new(key, json_string(t->attrs[a].name));
		json_array_append_new(tables, json_pack("{s:s,s:s,s:o,s:o,s:o}", "name", t->name, "tier", tier_name(t->tier), "master",
							t->master ? json_string(t->master->name) : json_null(), "key", key,
							"parents", parents));
	}
	json_t *root = json_pack("{s:o}", "tables", tables);
	*out = root ? json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(root);
	if (!*out) return conn_fail(c, DJC_ERROR, "out of memory describing the pipeline");
	return DJC_OK;
}

int table_populated(const table *t) { return t->tier == TIER_COMPUTED || t->tier == TIER_IMPORTED; }

int table_populated_check(djc_conn *c, const table *t)
{
	if (table_populated(t)) return DJC_OK;
	return conn_fail(c, DJC_EINVAL, "table %s is %s: only computed and imported tables are populated", t->name,
			 tier_name(t->tier));
}

int table_target_check(djc_conn *c, const table *t)
{
	int rc = table_populated_check(c, t);
	if (rc) return rc;
	for (size_t i = 0; c->pipe && i <= c->pipe->n; i++) {
		const table *x = i < c->pipe->n ? c->pipe->tables[i] : t;
		if (x != t && x->master != t) continue;
		const attr *a = table_raw_attr(x);
		if (a)
			return conn_fail(c, DJC_EINVAL, "table %s: column '%s' (%s) cannot be written by djc, so %s cannot be "
					 "populated by djc", x->name, a->name, a->type_text, t->name);
	}
	return DJC_OK;
}
