/* declare.c - djc_declare: the tables of a pipeline text, each computed and
 * imported one with its jobs table, all or nothing (tbl_declare). */
#include "jobs.h"
#include <stdlib.h>
#include <string.h>

int djc_declare(char **report, djc_conn *c, const char *text, const char *filename)
{
	if (report) *report = NULL;
	if (!text) return conn_fail(c, DJC_EINVAL, "no pipeline text (NULL)");
	return tbl_declare(c, text, filename, jobs_ensure, report);
}
