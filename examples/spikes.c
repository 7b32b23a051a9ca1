/* spikes.c - the demo's C makes: SpikeTrain (simulate a Poisson spike train
 * for a session) and SessionStats (rate and ISI variability from it),
 * populated with worker processes and a progress bar.
 *
 *   build/examples/spikes [--processes N] [--reserve-jobs]
 *
 * The database comes from $DJC_DATABASE_URL (default sqlite:djc.db). */
#include "djc.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A tiny deterministic generator so each session's train is reproducible. */
static double uniform(uint64_t *s)
{
	*s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
	return ((*s >> 11) + 0.5) / 9007199254740992.0;
}

static int get_float(const djc_row *r, const char *name, double *out)
{
	long i = djc_row_find(r, name);
	return i < 0 ? DJC_EINVAL : djc_row_float(out, r, (size_t)i);
}

static int make_spikes(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	char *where = djc_row_to_json(key);
	djc_rowset *rs = NULL;
	int rc = djc_make_fetch(&rs, ctx, "Session", where);
	free(where);
	if (rc || djc_rowset_count(rs) != 1) { djc_rowset_free(rs); djc_make_error(ctx, "session not found"); return 1; }
	double dur = 0, rate = 0;
	get_float(djc_rowset_row(rs, 0), "duration_s", &dur);
	get_float(djc_rowset_row(rs, 0), "true_rate", &rate);
	djc_rowset_free(rs);
	int64_t sid = 0;
	const char *subject = "";
	djc_row_int(&sid, key, (size_t)djc_row_find(key, "session_id"));
	djc_row_text(&subject, key, (size_t)djc_row_find(key, "subject"));
	uint64_t seed = 0x9E3779B97F4A7C15ULL ^ (uint64_t)sid * 1000003ULL;
	for (const char *p = subject; *p; p++) seed = (seed ^ (unsigned char)*p) * 0x100000001B3ULL;
	size_t cap = 1024, n = 0;
	double *t = malloc(cap * sizeof *t), now = 0;
	for (;;) {
		now += -log(uniform(&seed)) / rate;   /* exponential inter-spike intervals */
		if (now >= dur) break;
		if (n == cap) t = realloc(t, (cap *= 2) * sizeof *t);
		t[n++] = now;
	}
	djc_row *row = djc_row_new();
	djc_row_set_int(row, "n_spikes", (int64_t)n);
	djc_row_set_bytes(row, "spikes", t, n * sizeof *t);   /* little-endian on x86 and arm */
	rc = djc_make_insert(ctx, NULL, row);
	djc_row_free(row);
	free(t);
	return rc;
}

static int make_stats(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	char *where = djc_row_to_json(key);
	djc_rowset *rs = NULL, *ss = NULL;
	int rc = djc_make_fetch(&rs, ctx, "SpikeTrain", where);
	if (!rc) rc = djc_make_fetch(&ss, ctx, "Session", where);
	free(where);
	if (rc || djc_rowset_count(rs) != 1 || djc_rowset_count(ss) != 1) {
		djc_rowset_free(rs); djc_rowset_free(ss);
		djc_make_error(ctx, "upstream rows missing");
		return 1;
	}
	const void *raw; size_t nb;
	const djc_row *sp = djc_rowset_row(rs, 0);
	djc_row_bytes(&raw, &nb, sp, (size_t)djc_row_find(sp, "spikes"));
	size_t n = nb / sizeof(double);
	const double *t = raw;
	double dur = 0;
	get_float(djc_rowset_row(ss, 0), "duration_s", &dur);
	double mean = 0, var = 0;
	for (size_t i = 1; i < n; i++) mean += t[i] - t[i - 1];
	mean = n > 1 ? mean / (double)(n - 1) : 0;
	for (size_t i = 1; i < n; i++) var += (t[i] - t[i - 1] - mean) * (t[i] - t[i - 1] - mean);
	var = n > 2 ? var / (double)(n - 2) : 0;
	djc_row *row = djc_row_new();
	djc_row_set_float(row, "mean_rate", dur > 0 ? (double)n / dur : 0);
	djc_row_set_float(row, "cv_isi", mean > 0 ? sqrt(var) / mean : 0);
	rc = djc_make_insert(ctx, NULL, row);
	djc_row_free(row);
	djc_rowset_free(rs);
	djc_rowset_free(ss);
	return rc;
}

static int populate(djc_conn *c, const char *table, djc_make_fn fn, int procs, int reserve)
{
	djc_populate_options o;
	djc_populate_options_init(&o);
	o.make = fn;
	o.processes = procs;
	o.reserve_jobs = reserve;
	o.display_progress = 1;
	o.suppress_errors = 1;
	djc_populate_result *r = NULL;
	int rc = djc_populate(&r, c, table, &o);
	if (r) printf("%s: %ld made, %ld errors\n", table, r->success_count, r->error_count);
	if (rc) fprintf(stderr, "spikes: %s\n", djc_error_last(c));
	djc_populate_result_free(r);
	return rc;
}

int main(int argc, char **argv)
{
	int procs = 4, reserve = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--processes") && i + 1 < argc) procs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--reserve-jobs")) reserve = 1;
		else { fprintf(stderr, "usage: spikes [--processes N] [--reserve-jobs]\n"); return 2; }
	}
	djc_conn *c = NULL;
	if (djc_open(&c, NULL, NULL)) { fprintf(stderr, "spikes: %s\n", djc_error_last(c)); djc_close(c); return 1; }
	int rc = populate(c, "SpikeTrain", make_spikes, procs, reserve);
	if (!rc) rc = populate(c, "SessionStats", make_stats, procs, reserve);
	djc_close(c);
	return rc ? 1 : 0;
}
