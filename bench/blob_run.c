/* blob_run.c - the djc side of bench/py-blob.sh (issue 40), public API
 * only: a make that reads a large <blob> of its upstream row (a DataJoint
 * float64 vector, header mYm) and writes a smaller one (its first elements
 * as a vector of their own), made by a C callback or by a serve program.
 *
 *   blob_run setup URL SCHEMA N MB   declare the pipeline; N rows of Arr,
 *                                    each a blob of MB MiB of doubles:
 *                                    BLOB_DATA=noise (the default) uniform
 *                                    in [0, 1), which a server's compression
 *                                    leaves as they are (as it does a
 *                                    measurement's noisy digits, or a blob
 *                                    DataJoint compressed); ramp: 0, 0.5,
 *                                    1, ... (PostgreSQL's lz4 halves it)
 *   blob_run reset URL SCHEMA        delete Part's rows, clear its jobs, refresh them
 *   blob_run run URL SCHEMA c|serve [PROGRAM ARG...]
 *       populate Part (reserved jobs, one process: the worker is this
 *       process) with the C make or the serve program; prints one JSON
 *       object: keys, seconds, keys/s, the worker's max RSS before and
 *       after (KiB) and the largest of its children's (the program) */
#define BENCH_NAME "blob_run"
#include "bench.h"
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static const char *PIPELINE =
	"Arr (manual)\n"
	"    id : int64\n"
	"    ---\n"
	"    data : <blob>\n"
	"\n"
	"Part (computed)\n"
	"    -> Arr\n"
	"    ---\n"
	"    n : int64\n"
	"    head : <blob>\n";

#define OUT_ELEMS 131072   /* the result: 1 MiB of doubles */
#define HDR 29             /* "mYm\0" 'A' ndim(8) shape(8) class(4) complex(4), then the data */

static djc_conn *open_db(const char *url, const char *schema)
{
	return bench_open(url, schema, PIPELINE, "blob");
}

/* The header of a DataJoint (mYm) 1-D float64 array of n elements. */
static void header(unsigned char *b, uint64_t n)
{
	uint64_t ndim = 1;
	uint32_t cls = 6, cplx = 0;   /* MATLAB's double class, real */
	memcpy(b, "mYm\0A", 5);
	memcpy(b + 5, &ndim, 8);
	memcpy(b + 13, &n, 8);
	memcpy(b + 21, &cls, 4);
	memcpy(b + 25, &cplx, 4);
}

static int cmd_setup(const char *url, const char *schema, long n, long mb)
{
	const char *kind = getenv("BLOB_DATA");
	int ramp = kind && !strcmp(kind, "ramp");
	if (kind && !ramp && strcmp(kind, "noise")) {
		fprintf(stderr, "blob_run: BLOB_DATA must be noise or ramp, not %s\n", kind);
		return 2;
	}
	djc_conn *c = open_db(url, schema);
	uint64_t elems = (uint64_t)mb * 131072;
	size_t len = HDR + elems * 8;
	unsigned char *b = malloc(len);
	header(b, elems);
	double *d = (double *)(void *)(b + HDR);
	uint64_t s = 0x9e3779b97f4a7c15u;   /* xorshift64: the same values every setup */
	for (uint64_t i = 0; i < elems; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		double x = ramp ? (double)i * 0.5 : (double)(s >> 11) * 0x1p-53;
		memcpy((unsigned char *)d + i * 8, &x, 8);
	}
	for (long i = 1; i <= n; i++) {
		djc_row *r = djc_row_new();
		djc_row_set_int(r, "id", i);
		djc_row_set_bytes(r, "data", b, len);
		int rc = djc_insert_ext(NULL, c, "Arr", (const djc_row *const *)&r, 1, NULL);
		djc_row_free(r);
		if (rc) die(c, rc, "insert");
	}
	free(b);
	printf("{\"rows\":%ld,\"bytes\":%zu}\n", n, len);
	djc_close(c);
	return 0;
}

static int cmd_reset(const char *url, const char *schema)
{
	djc_conn *c = open_db(url, schema);
	size_t del = 0;
	long n;
	int rc = djc_delete(&del, c, "Part", NULL);
	if (rc) die(c, rc, "delete");
	const char *st[] = {"pending", "reserved", "success", "error", "ignore"};
	for (int i = 0; i < 5; i++)
		if ((rc = djc_jobs_clear(&n, c, "Part", st[i]))) die(c, rc, "clear");
	djc_refresh_options ro = DJC_REFRESH_OPTIONS_INIT;
	djc_refresh_result rr;
	if ((rc = djc_jobs_refresh(&rr, c, "Part", &ro))) die(c, rc, "refresh");
	printf("{\"deleted\":%zu,\"added\":%ld}\n", del, rr.added);
	djc_close(c);
	return 0;
}

/* The C make: Arr's blob for the key, its first OUT_ELEMS doubles as a
 * blob of their own (what bench/prog/blob_make.py does in Python). */
static int make_head(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	djc_rowset *rs = NULL;
	int rc = djc_make_fetch_key(&rs, ctx, "Arr", key);
	if (rc) return rc;
	const void *v = NULL;
	size_t n = 0;
	if (djc_rowset_count(rs) != 1 || djc_row_get_bytes(&v, &n, djc_rowset_row(rs, 0), "data") || n < HDR + OUT_ELEMS * 8) {
		djc_rowset_free(rs);
		return DJC_EINVAL;
	}
	size_t len = HDR + OUT_ELEMS * 8;
	unsigned char *out = malloc(len);
	header(out, OUT_ELEMS);
	memcpy(out + HDR, (const unsigned char *)v + HDR, OUT_ELEMS * 8);
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "n", (int64_t)((n - HDR) / 8));
	djc_row_set_bytes(r, "head", out, len);
	rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	free(out);
	djc_rowset_free(rs);
	return rc;
}

static long maxrss(int who)
{
	struct rusage u;
	getrusage(who, &u);
	return u.ru_maxrss;
}

/* This process's CPU seconds so far (user + system), and its minor page
 * faults (*flt). */
static double cpu_self(long *flt)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	*flt = u.ru_minflt;
	return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static int cmd_run(const char *url, const char *schema, const char *kind, char **argv)
{
	djc_conn *c = open_db(url, schema);
	long rss0 = maxrss(RUSAGE_SELF);
	long flt0, flt;
	double cpu0 = cpu_self(&flt0);
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.reserve_jobs = 1;
	o.processes = 1;
	o.refresh = 0;
	if (!strcmp(kind, "c")) o.make = make_head;
	else o.make_serve_argv = (const char *const *)argv;
	djc_populate_result *res = NULL;
	double t0 = now();
	int rc = djc_populate(&res, c, "Part", &o);
	double dt = now() - t0, cpu = cpu_self(&flt) - cpu0;
	if (rc && rc != DJC_EMAKE) die(c, rc, "populate");
	long made = res ? res->success_count : 0;
	printf("{\"kind\":\"%s\",\"keys\":%ld,\"secs\":%.4f,\"keys_per_s\":%.2f,\"errors\":%ld,"
	       "\"worker_rss0_kb\":%ld,\"worker_rss_kb\":%ld,\"program_rss_kb\":%ld,\"worker_cpu_s\":%.3f,\"worker_faults\":%ld}\n",
	       kind, made, dt, made / dt, res ? res->error_count : -1, rss0, maxrss(RUSAGE_SELF),
	       maxrss(RUSAGE_CHILDREN), cpu, flt - flt0);
	if (res && res->n_errors) fprintf(stderr, "blob_run: first error: %s %s\n", res->errors[0].key_json, res->errors[0].message);
	djc_populate_result_free(res);
	djc_close(c);
	return 0;
}

/* What docs/workers.md ("Large values") asks of a C program whose makes move large
 * values, as the djc command does in its main (src/cli/main.c): blocks up
 * to 64 MiB from the heap, 256 MiB of freed heap kept for the next key.
 * BLOB_MALLOC=glibc keeps glibc's defaults (to compare, in one run). */
static void tune_malloc(void)
{
	const char *m = getenv("BLOB_MALLOC");
	if (m && !strcmp(m, "glibc")) return;
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

int main(int argc, char **argv)
{
	tune_malloc();
	if (argc == 6 && !strcmp(argv[1], "setup")) return cmd_setup(argv[2], argv[3], atol(argv[4]), atol(argv[5]));
	if (argc == 4 && !strcmp(argv[1], "reset")) return cmd_reset(argv[2], argv[3]);
	if (argc >= 5 && !strcmp(argv[1], "run")) return cmd_run(argv[2], argv[3], argv[4], argv + 5);
	fprintf(stderr, "usage: blob_run setup URL SCHEMA N MB | reset URL SCHEMA | run URL SCHEMA c|serve [PROGRAM ARG...]\n");
	return 2;
}
