/* bench.h - what the bench programs (one .c file each under bench/) share: a
 * monotonic clock, the exit on an error, and opening the database with the
 * program's pipeline declared. Each program defines BENCH_NAME (its name in
 * error messages) before including this. */
#ifndef DJC_BENCH_H
#define DJC_BENCH_H

#include "djc.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef BENCH_NAME
#error "define BENCH_NAME (the program's name in its error messages) before including bench.h"
#endif

/* The pipeline of bench/noop.c, which bench/serve_run.c populates too (the
 * same text, so either program declares it). */
#define BENCH_NOOP_PIPELINE \
	"Src (manual)\n" \
	"    id : int64\n" \
	"    ---\n" \
	"\n" \
	"Noop (computed)\n" \
	"    -> Src\n" \
	"    ---\n" \
	"    v = 0 : int32\n"

/* seconds on the monotonic clock */
static inline double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* "NAME: WHAT: the connection's last error (the code's text)", exit 1 */
static inline void die(djc_conn *c, int rc, const char *what)
{
	fprintf(stderr, "%s: %s: %s (%s)\n", BENCH_NAME, what, c ? djc_error_last(c) : "", djc_strerror(rc));
	exit(1);
}

/* the connection to URL/SCHEMA with PIPELINE declared (as source NAME) */
static inline djc_conn *bench_open(const char *url, const char *schema, const char *pipeline, const char *name)
{
	djc_conn *c = NULL;
	int rc = djc_open(&c, url, schema);
	if (rc) die(c, rc, "open");
	if ((rc = djc_declare(NULL, c, pipeline, name))) die(c, rc, "declare");
	return c;
}

#endif
