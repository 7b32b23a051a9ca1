/* declare.c - djc_declare: the tables of a pipeline text, then the jobs
 * table of each computed and imported one. */
#include "jobs.h"
#include <stdlib.h>
#include <string.h>

int djc_declare(djc_conn *c, const char *text, const char *filename, char **report)
{
	if (report) *report = NULL;
	if (!text) return conn_fail(c, DJC_EINVAL, "no pipeline text (NULL)");
	table **made = NULL;
	size_t n = 0;
	char *rep = NULL;
	int rc = tbl_declare(c, text, filename, &rep, &made, &n);
	if (rc) { free(rep); return rc; }
	sb_t b = SB_INIT;
	sb_add(&b, rep ? rep : "");
	free(rep);
	for (size_t i = 0; i < c->pipe->n; i++) {
		table *t = c->pipe->tables[i];
		if (!t->jobs_name) continue;
		if ((rc = jobs_ensure(c, t))) break;
		for (size_t k = 0; k < n; k++)
			if (made[k] == t) sb_printf(&b, "created %s jobs table %s\n", t->name, t->jobs_name);
	}
	free(made);
	if (report && !rc) *report = sb_steal(&b);
	sb_free(&b);
	return rc;
}
