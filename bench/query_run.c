/* query_run.c - the djc side of bench/query-dj.sh (issue 39), public API
 * only: one connection, an expression of the query algebra parsed once and
 * fetched ROUNDS times (each time one SELECT, the rows read into a rowset),
 * as DataJoint's in-process fetch is timed on the other side.
 *
 *   query_run URL SCHEMA EXPR ROUNDS    prints "MEDIAN_MS ROWS" */
#include "djc.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: query_run URL SCHEMA EXPR ROUNDS\n");
		return 2;
	}
	int rounds = atoi(argv[4]);
	if (rounds < 1) rounds = 1;
	djc_conn *c = NULL;
	djc_expr *e = NULL;
	if (djc_open(&c, argv[1], argv[2]) || djc_expr_parse(&e, c, argv[3])) {
		fprintf(stderr, "query_run: %s\n", c ? djc_error_last(c) : "cannot connect");
		djc_close(c);
		return 1;
	}
	double *ms = calloc((size_t)rounds, sizeof *ms);
	size_t rows = 0;
	int rc = 0;
	for (int i = 0; i < rounds && !rc; i++) {
		djc_rowset *rs = NULL;
		double t0 = now_ms();
		rc = djc_fetch_expr(&rs, c, e, NULL);
		ms[i] = now_ms() - t0;
		if (!rc) rows = djc_rowset_count(rs);
		djc_rowset_free(rs);
	}
	if (rc) fprintf(stderr, "query_run: %s\n", djc_error_last(c));
	else {
		qsort(ms, (size_t)rounds, sizeof *ms, cmp_double);
		double med = rounds % 2 ? ms[rounds / 2] : (ms[rounds / 2 - 1] + ms[rounds / 2]) / 2;
		printf("%.3f %zu\n", med, rows);
	}
	free(ms);
	djc_expr_free(e);
	djc_close(c);
	return rc ? 1 : 0;
}
