/* mysql_client.h - what the MariaDB bench programs (commit_loop.c,
 * min_queue.c) share: a monotonic clock, a connection from their
 * HOST PORT USER PASSWORD DB arguments (argv[1..5]), and a statement that
 * must succeed. Each program defines PROG (its name, for messages) before
 * including it. */
#ifndef DJC_BENCH_MYSQL_CLIENT_H
#define DJC_BENCH_MYSQL_CLIENT_H
#include <mysql.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static MYSQL *conn(char **a)
{
	MYSQL *m = mysql_init(NULL);
	if (!m || !mysql_real_connect(m, a[1], a[3], a[4], a[5], (unsigned)atoi(a[2]), NULL, 0)) {
		fprintf(stderr, PROG ": connect: %s\n", m ? mysql_error(m) : "out of memory");
		exit(1);
	}
	return m;
}

static void q(MYSQL *m, const char *sql)
{
	if (mysql_query(m, sql)) {
		fprintf(stderr, PROG ": %s: %s\n", sql, mysql_error(m));
		exit(1);
	}
}
#endif
