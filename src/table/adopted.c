/* adopted.c - tables adopted from a DataJoint schema (docs/adopt.md): djc
 * never writes DDL for them, so declare checks that the SQL table is there
 * with the columns the definition names, by reading none of its rows. */
#include "table.h"
#include "sql/query.h"
#include <stdlib.h>
#include <string.h>

/* SELECT of t's columns [from, to) (none: SELECT 1) WHERE false: DJC_OK
 * when the server can run it. */
static int probe(djc_conn *c, const table *t, size_t from, size_t to)
{
	q_arena a = Q_ARENA_INIT;
	q_sel *s = q_select(&a);
	if (from == to) q_item_add(&a, s, QI_ONE, NULL);
	for (size_t i = from; i < to; i++) q_col_item(&a, s, (q_col){NULL, NULL, t->attrs[i].name}, NULL);
	q_from_table(&a, s, table_sqlref(t), NULL, 0);
	q_where(&a, s, q_false(&a));
	sb_t q = SB_INIT;
	pvec p = {0};
	q_out o = {&q, &p, 0};
	int rc = q_select_sql(c->db, s, &o);
	db_res *r = NULL;
	if (!rc) rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r);
	db_res_free(r);
	sb_free(&q);
	pvec_free(&p);
	q_arena_free(&a);
	return rc;
}

int adopted_probe(djc_conn *c, const table *t, const char *file)
{
	size_t n = t->nattrs + t->nhidden;
	if (!probe(c, t, 0, n)) return DJC_OK;
	if (c->db->in_tx) return conn_dbfail(c, DJC_ERROR, t->name);   /* the transaction is spoilt: say why */
	if (probe(c, t, 0, 0))
		return conn_fail(c, DJC_ECONFLICT, "%s:%d: table %s is adopted from DataJoint table %s.%s, which is missing "
				 "(or this user cannot read it): %s", file, t->line, t->name, t->schema, t->sql_name, c->db->err);
	for (size_t i = 0; i < n; i++)
		if (probe(c, t, i, i + 1))
			return conn_fail(c, DJC_ECONFLICT, "%s:%d: table %s: DataJoint table %s.%s has no column '%s' (%s)", file,
					 t->line, t->name, t->schema, t->sql_name, t->attrs[i].name, c->db->err);
	return conn_dbfail(c, DJC_ERROR, t->name);
}

int adopted_drop_refuse(djc_conn *c, const table *t, const table *dropped)
{
	if (dropped == t)
		return conn_fail(c, DJC_EINVAL, "%s is adopted from DataJoint schema %s: djc does not drop it (djc unadopt %s "
				 "forgets djc's side of that schema; DataJoint's tables are DataJoint's to drop)", t->name, t->adopted,
				 t->adopted);
	return conn_fail(c, DJC_EINVAL, "%s is adopted from DataJoint schema %s and depends on %s: djc does not drop it "
			 "(djc unadopt %s first forgets djc's side of that schema)", t->name, t->adopted, dropped->name, t->adopted);
}

int adopted_delete_refuse(djc_conn *c, const table *t)
{
	return conn_fail(c, DJC_EINVAL, "%s is adopted from DataJoint schema %s: djc does not delete its rows (delete them "
			 "with DataJoint, whose delete follows its whole schema)", t->name, t->adopted);
}

int adopted_insert_check(djc_conn *c, const table *t)
{
	if (!t->adopted || (t->tier != TIER_MANUAL && t->tier != TIER_LOOKUP)) return DJC_OK;
	return conn_fail(c, DJC_EINVAL, "%s is adopted from DataJoint schema %s: djc inserts only into the computed and "
			 "imported tables it populates (insert its rows with DataJoint)", t->name, t->adopted);
}
