/* noop.c - the djc side of `make bench` (see bench/README.md). Everything
 * goes through the public API (include/djc.h).
 *
 *   noop setup   URL SCHEMA N         declare the pipeline, insert N upstream keys
 *   noop refresh URL SCHEMA           djc_jobs_refresh, timed
 *   noop run     URL SCHEMA MODE PROCS c|PROGRAM [ARG...]
 *                                     MODE reserve|direct; populate with a no-op
 *                                     make (C callback, or a program), timed;
 *                                     counts make calls per key (exactly once)
 *   noop reserve URL SCHEMA M         reserve + complete M jobs one at a time in
 *                                     this process (per-job reservation cost)
 *   noop reset   URL SCHEMA           delete the computed rows and the jobs
 *
 * Each command prints one JSON object on stdout. Reservation uses the
 * config (e.g. DJC_JOBS_RESERVE_BATCH) like any djc program. The upstream
 * keys are 0..N-1; the computed table has only the key, so a make commits
 * one row holding the key. */
#define BENCH_NAME "noop"
#include "bench.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>

static djc_conn *open_db(const char *url, const char *schema)
{
	return bench_open(url, schema, BENCH_NOOP_PIPELINE, "noop");
}

/* ------------------------------------------------------------- make */

typedef struct shared {
	atomic_long calls;
	long n;
	atomic_int per_key[];   /* make calls per key id */
} shared;

static int noop_make(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	shared *sh = payload;
	int64_t id = -1;
	long i = djc_row_find(key, "id");
	if (i >= 0) djc_row_int(&id, key, (size_t)i);
	atomic_fetch_add(&sh->calls, 1);
	if (id >= 0 && id < sh->n) atomic_fetch_add(&sh->per_key[id], 1);
	djc_row *r = djc_row_new();   /* {} : the key is filled in */
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

/* Rows of Src (total) and how many of them have a Noop row (made). */
static void counts_of(djc_conn *c, long *total, long *made)
{
	long remaining = 0;
	int rc = djc_progress(&remaining, total, c, "Noop", NULL);
	if (rc) die(c, rc, "progress");
	*made = *total - remaining;
}

/* ---------------------------------------------------------- commands */

static int cmd_setup(const char *url, const char *schema, long n)
{
	djc_conn *c = open_db(url, schema);
	long have, made0;
	counts_of(c, &have, &made0);
	double t0 = now();
	const long B = 20000;
	djc_row **rows = calloc((size_t)B, sizeof *rows);
	for (long i = 0; i < B; i++) rows[i] = djc_row_new();
	for (long base = have; base < n; base += B) {
		long m = n - base < B ? n - base : B;
		for (long i = 0; i < m; i++) djc_row_set_int(rows[i], "id", base + i);
		int rc = djc_insert_ext(NULL, c, "Src", (const djc_row *const *)rows, (size_t)m, NULL);
		if (rc) die(c, rc, "insert");
	}
	double dt = now() - t0;
	for (long i = 0; i < B; i++) djc_row_free(rows[i]);
	free(rows);
	printf("{\"upstream\":%ld,\"inserted\":%ld,\"insert_s\":%.3f}\n", n, n > have ? n - have : 0, dt);
	djc_close(c);
	return 0;
}

static int cmd_refresh(const char *url, const char *schema)
{
	djc_conn *c = open_db(url, schema);
	djc_refresh_options ro = DJC_REFRESH_OPTIONS_INIT;
	djc_refresh_result rr;
	double t0 = now();
	int rc = djc_jobs_refresh(&rr, c, "Noop", &ro);
	double dt = now() - t0;
	if (rc) die(c, rc, "refresh");
	printf("{\"added\":%ld,\"refresh_s\":%.3f}\n", rr.added, dt);
	djc_close(c);
	return 0;
}

static int cmd_reset(const char *url, const char *schema)
{
	djc_conn *c = open_db(url, schema);
	size_t del = 0;
	int rc = djc_delete(&del, c, "Noop", NULL);
	if (rc) die(c, rc, "delete");
	long cleared = 0, n;
	const char *st[] = {"pending", "reserved", "success", "error", "ignore"};
	for (int i = 0; i < 5; i++) {
		if ((rc = djc_jobs_clear(&n, c, "Noop", st[i]))) die(c, rc, "clear");
		cleared += n;
	}
	printf("{\"deleted\":%zu,\"jobs_cleared\":%ld}\n", del, cleared);
	djc_close(c);
	return 0;
}

static int cmd_run(const char *url, const char *schema, const char *mode, int procs, char **make)
{
	djc_conn *c = open_db(url, schema);
	long n, before;
	counts_of(c, &n, &before);
	size_t sz = sizeof(shared) + (size_t)n * sizeof(atomic_int);
	shared *sh = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) { perror("mmap"); return 1; }
	sh->n = n;
	djc_populate_options o;
	djc_populate_options_init(&o);
	o.reserve_jobs = !strcmp(mode, "reserve");
	o.processes = procs;
	o.refresh = 0;   /* refreshed (and timed) beforehand */
	int cmake = !strcmp(make[0], "c");
	if (cmake) { o.make = noop_make; o.payload = sh; }
	else o.make_argv = (const char *const *)make;
	djc_populate_result *res = NULL;
	double t0 = now();
	int rc = djc_populate(&res, c, "Noop", &o);
	double dt = now() - t0;
	if (rc && rc != DJC_EMAKE) die(c, rc, "populate");
	long total_after, after;
	counts_of(c, &total_after, &after);
	long made = after - before;
	long counts[5] = {0};
	if (o.reserve_jobs) djc_jobs_counts(counts, c, "Noop");
	long once = 0, twice = 0;
	for (long i = 0; i < n; i++) {
		int k = atomic_load(&sh->per_key[i]);
		if (k == 1) once++;
		else if (k > 1) twice++;
	}
	struct rusage self, kids;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	printf("{\"mode\":\"%s\",\"procs\":%d,\"make\":\"%s\",\"keys\":%ld,\"secs\":%.4f,\"keys_per_s\":%.1f,"
	       "\"us_per_key\":%.1f,\"success\":%ld,\"errors\":%ld,\"skipped\":%ld,\"lost\":%ld,"
	       "\"rows_committed\":%ld,\"make_calls\":%ld,\"keys_once\":%ld,\"keys_more\":%ld,"
	       "\"jobs_left\":%ld,\"maxrss_self_kb\":%ld,\"maxrss_children_kb\":%ld}\n",
	       mode, procs, cmake ? "c" : "program", made, dt, made / dt, dt * 1e6 / (made ? made : 1),
	       res ? res->success_count : 0, res ? res->error_count : 0, res ? res->skipped_count : 0,
	       res ? res->lost_count : 0, made, cmake ? (long)atomic_load(&sh->calls) : -1, cmake ? once : -1,
	       cmake ? twice : -1, counts[0] + counts[1] + counts[3], self.ru_maxrss, kids.ru_maxrss);
	if (res && res->n_errors) fprintf(stderr, "noop: first error: %s %s\n", res->errors[0].key_json, res->errors[0].message);
	djc_populate_result_free(res);
	munmap(sh, sz);
	djc_close(c);
	return 0;
}

static int cmd_reserve(const char *url, const char *schema, long m)
{
	djc_conn *c = open_db(url, schema);
	long counts[5];
	djc_jobs_counts(counts, c, "Noop");
	long pending = counts[0];
	/* warm up (statement caches) */
	double t0 = 0;
	long done = 0;
	for (long i = 0; i < m + 20; i++) {
		if (i == 20) t0 = now();
		djc_job *job = NULL;
		int rc = djc_jobs_reserve(&job, c, "Noop", NULL, -1);
		if (rc == DJC_ENOTFOUND) break;
		if (rc) die(c, rc, "reserve");
		djc_row *r = djc_row_new();
		rc = djc_jobs_complete(c, job, (const djc_row *const *)&r, 1, 0);
		djc_row_free(r);
		djc_job_free(job);
		if (rc) die(c, rc, "complete");
		if (i >= 20) done++;
	}
	double dt = now() - t0;
	printf("{\"pending\":%ld,\"jobs\":%ld,\"secs\":%.4f,\"us_per_job\":%.1f}\n", pending, done, dt,
	       dt * 1e6 / (done ? done : 1));
	djc_close(c);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: noop setup|refresh|run|reserve|reset URL SCHEMA ...\n");
		return 2;
	}
	const char *cmd = argv[1], *url = argv[2], *schema = *argv[3] ? argv[3] : NULL;
	if (!strcmp(cmd, "setup") && argc == 5) return cmd_setup(url, schema, atol(argv[4]));
	if (!strcmp(cmd, "refresh")) return cmd_refresh(url, schema);
	if (!strcmp(cmd, "reset")) return cmd_reset(url, schema);
	if (!strcmp(cmd, "reserve") && argc == 5) return cmd_reserve(url, schema, atol(argv[4]));
	if (!strcmp(cmd, "run") && argc >= 7) return cmd_run(url, schema, argv[4], atoi(argv[5]), argv + 6);
	fprintf(stderr, "noop: bad usage\n");
	return 2;
}
