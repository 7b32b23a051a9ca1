/* tdb.h - what the unit tests that talk to a database share (include it
 * after t.h): a connection or exit, rows counted, one row inserted from
 * JSON, a short sleep. Errors are printed with the library's message. */
#ifndef DJC_TDB_H
#define DJC_TDB_H
#include "djc.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define T_UNUSED __attribute__((unused))

/* A connection to url/schema; exits 2 (the suite reports it) when there is none. */
static T_UNUSED djc_conn *t_open(const char *url, const char *schema)
{
	djc_conn *c = NULL;
	if (djc_open(&c, url, schema)) {
		fprintf(stderr, "open: %s\n", djc_error_last(c));
		exit(2);
	}
	return c;
}

/* Rows of table matching where (JSON, NULL: all); -1 when the fetch fails. */
static T_UNUSED long t_count(djc_conn *c, const char *table, const char *where)
{
	djc_rowset *rs = NULL;
	if (djc_fetch(&rs, c, table, where)) {
		fprintf(stderr, "fetch %s: %s\n", table, djc_error_last(c));
		return -1;
	}
	long n = (long)djc_rowset_count(rs);
	djc_rowset_free(rs);
	return n;
}

/* Insert one row given as a JSON object; the library's status. */
static T_UNUSED int t_insert_json(djc_conn *c, const char *table, const char *json)
{
	djc_row *r = NULL;
	char *msg = NULL;
	if (djc_row_from_json(&r, json, &msg)) {
		fprintf(stderr, "row %s: %s\n", json, msg ? msg : "?");
		free(msg);
		return -1;
	}
	const djc_row *rows[1] = {r};
	int rc = djc_insert_ext(NULL, c, table, rows, 1, NULL);
	if (rc) fprintf(stderr, "insert %s %s: %s\n", table, json, djc_error_last(c));
	djc_row_free(r);
	return rc;
}

static T_UNUSED void t_nap(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	nanosleep(&ts, NULL);
}

#endif
