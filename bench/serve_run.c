/* serve_run.c - the djc side of bench/serve.sh (issue 16's targets), public
 * API only. The pipeline is bench/noop.c's (Src, Noop), set up and reset
 * by the noop program.
 *
 *   serve_run run URL SCHEMA MODE PROCS c|c-fetch|perkey|serve [PROGRAM ARG...]
 *       populate Noop (MODE reserve|direct, PROCS processes, no refresh:
 *       the jobs are added beforehand) with a no-op C callback (c-fetch:
 *       one that reads its key's Src row first), a per-key
 *       make program (make_argv) or a serve program (make_serve_argv);
 *       timed around djc_populate; prints one JSON object
 *   serve_run spawn URL SCHEMA N [PROGRAM]
 *       the cost of starting a program (default /bin/true) with
 *       posix_spawn and waiting for it, N times, from this process after
 *       it opened the database (its libraries loaded, as a worker's are);
 *       prints the mean and median in microseconds */
#define BENCH_NAME "serve_run"
#include "bench.h"
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static djc_conn *open_db(const char *url, const char *schema)
{
	return bench_open(url, schema, BENCH_NOOP_PIPELINE, "noop");
}

static long made_rows(djc_conn *c)
{
	long remaining = 0, total = 0;
	if (djc_progress(&remaining, &total, c, "Noop", NULL)) {
		fprintf(stderr, "serve_run: progress: %s\n", djc_error_last(c));
		exit(1);
	}
	return total - remaining;
}

static int noop(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)key;
	(void)payload;
	djc_row *r = djc_row_new();
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

/* The no-op make that reads its key's Src row first (as most makes read
 * their upstream): the read is checked at the commit. */
static int fetch_noop(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	djc_rowset *up = NULL;
	int rc = djc_make_fetch_key(&up, ctx, "Src", key);
	if (!rc && djc_rowset_count(up) != 1) rc = DJC_ENOTFOUND;
	djc_rowset_free(up);
	return rc ? rc : noop(ctx, key, payload);
}

static int cmd_run(const char *url, const char *schema, const char *mode, int procs, const char *kind, char **argv)
{
	djc_conn *c = open_db(url, schema);
	long before = made_rows(c);
	djc_populate_options o = DJC_POPULATE_OPTIONS_INIT;
	o.reserve_jobs = !strcmp(mode, "reserve");
	o.processes = procs;
	o.refresh = 0;
	if (!strcmp(kind, "c")) o.make = noop;
	else if (!strcmp(kind, "c-fetch")) o.make = fetch_noop;
	else if (!strcmp(kind, "perkey")) o.make_argv = (const char *const *)argv;
	else o.make_serve_argv = (const char *const *)argv;
	djc_populate_result *res = NULL;
	double t0 = now();
	int rc = djc_populate(&res, c, "Noop", &o);
	double dt = now() - t0;
	if (rc && rc != DJC_EMAKE) {
		fprintf(stderr, "serve_run: populate: %s\n", djc_error_last(c));
		return 1;
	}
	long made = made_rows(c) - before;
	/* the workers' own CPU (user + system): the pool's processes are
	 * this process's children, waited for; a serve program is not (its
	 * supervisor is forked twice), so it is not in it */
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	double wcpu = ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	printf("{\"mode\":\"%s\",\"procs\":%d,\"kind\":\"%s\",\"keys\":%ld,\"secs\":%.4f,\"keys_per_s\":%.1f,"
	       "\"us_per_key\":%.1f,\"errors\":%ld,\"lost\":%ld,\"worker_cpu_us_per_key\":%.1f,\"worker_faults\":%ld}\n",
	       mode, procs, kind, made, dt, made / dt, dt * 1e6 / (made ? made : 1), res ? res->error_count : -1,
	       res ? res->lost_count : -1, wcpu * 1e6 / (made ? made : 1), ru.ru_minflt + ru.ru_majflt);
	if (res && res->n_errors) fprintf(stderr, "serve_run: first error: %s %s\n", res->errors[0].key_json, res->errors[0].message);
	djc_populate_result_free(res);
	djc_close(c);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int cmd_spawn(const char *url, const char *schema, int n, char *prog)
{
	djc_conn *c = open_db(url, schema);
	char *argv[] = {prog, NULL};
	double *t = malloc((size_t)n * sizeof *t), sum = 0;
	for (int i = -20; i < n; i++) {   /* 20 to warm up */
		double a = now();
		pid_t pid;
		if (posix_spawn(&pid, prog, NULL, NULL, argv, environ)) { perror(prog); return 1; }
		int st;
		waitpid(pid, &st, 0);
		if (i >= 0) { t[i] = (now() - a) * 1e6; sum += t[i]; }
	}
	qsort(t, (size_t)n, sizeof *t, cmp);
	printf("{\"program\":\"%s\",\"runs\":%d,\"mean_us\":%.1f,\"median_us\":%.1f}\n", prog, n, sum / n, t[n / 2]);
	free(t);
	djc_close(c);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 7 && !strcmp(argv[1], "run"))
		return cmd_run(argv[2], *argv[3] ? argv[3] : NULL, argv[4], atoi(argv[5]), argv[6], argv + 7);
	if (argc >= 5 && !strcmp(argv[1], "spawn"))
		return cmd_spawn(argv[2], *argv[3] ? argv[3] : NULL, atoi(argv[4]), argc > 5 ? argv[5] : "/bin/true");
	fprintf(stderr, "usage: serve_run run URL SCHEMA reserve|direct PROCS c|c-fetch|perkey|serve [PROGRAM ARG...]\n"
			"       serve_run spawn URL SCHEMA N [PROGRAM]\n");
	return 2;
}
