/* worker_api.c - djc_worker (`djc worker`, include/djc.h): check the
 * options and the tables to serve, make sure of their jobs tables and of
 * ~djc_worker, then run the worker processes (wloop_run, workloop.c): this
 * one, or a pool of them (pool.c); and what comes back to the caller. */
#include "workloop.h"
#include "util/config.h"
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* ------------------------------------------------------------ the API */

void djc_worker_options_init(djc_worker_options *o)
{
	djc_worker_options d = DJC_WORKER_OPTIONS_INIT;
	*o = d;
}

void djc_worker_result_free(djc_worker_result *r)
{
	if (!r) return;
	populate_errors_free(r->errors, r->error_tables, r->n_errors);
	free(r->failure);
	for (size_t i = 0; i < r->n_tables; i++) free(r->tables[i]);
	free(r->tables);
	free(r);
}

const char *djc_worker_stop_name(int stop)
{
	static const char *const names[DJC_WORKER_NSTOPS] = {"idle", "max_jobs", "empty", "deadline", "signal", "failed", "drain"};
	return stop >= 0 && stop < DJC_WORKER_NSTOPS ? names[stop] : "unknown";
}


/* The tables to serve, upstream first (pipeline order), each once. */
/* t has its own make (a make = or make_serve = line). */
static int has_own_make(const table *t)
{
	return (t->make_argv && t->make_argv[0]) || (t->make_serve_argv && t->make_serve_argv[0]);
}

/* Adopted tables of v[0..*k) that DataJoint changed since they were
 * adopted are left out, each told on stderr (docs/adopt.md): the worker
 * serves the others. */
static int leave_out_stale(djc_conn *c, table **v, size_t *k)
{
	char **why = xcalloc(*k + 1, sizeof *why);
	int rc = adopt_stale(c, v, *k, why);
	size_t kept = 0;
	for (size_t i = 0; i < *k; i++) {
		if (!why[i]) {
			v[kept++] = v[i];
			continue;
		}
		fprintf(stderr, "djc: warning: worker leaves out table %s, which is not as adopted: %s\n", v[i]->name, why[i]);
		worker_event("leave out %s: not as adopted", v[i]->name);
		free(why[i]);
	}
	free(why);
	if (!rc) *k = kept;
	return rc;
}

/* The tables a worker serves: those named, else every computed and
 * imported table; with none named and no make given to the worker, an
 * adopted table without a make of its own is left out (it is DataJoint's:
 * its overlay did not hand it to djc, docs/adopt.md). */
static int served_tables(djc_conn *c, const char *const *names, size_t n, int make_given, table ***out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	int rc = pipe_load(c);
	if (rc) return rc;
	for (size_t i = 0; i < n; i++) {
		table *t;
		if ((rc = conn_table(c, names[i], &t))) return rc;
		if (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED)
			return conn_fail(c, DJC_EINVAL, "table %s is %s: only computed and imported tables are populated", t->name,
					 tier_name(t->tier));
		if ((rc = table_target_check(c, t)) || (rc = adopt_current_check(c, t))) return rc;
	}
	table **v = xcalloc(c->pipe->n + 1, sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < c->pipe->n; i++) {
		table *t = c->pipe->tables[i];
		if (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED) continue;
		int want = n == 0 && (make_given || !t->adopted || has_own_make(t));
		for (size_t j = 0; j < n && !want; j++) {
			table *u = NULL;
			conn_table(c, names[j], &u);
			want = u == t;
		}
		if (want) v[k++] = t;
	}
	if (!n && (rc = leave_out_stale(c, v, &k))) {
		free(v);
		return rc;
	}
	if (!k) {
		free(v);
		return conn_fail(c, DJC_EINVAL, "the pipeline has no computed or imported table to serve");
	}
	*out = v;
	*nout = k;
	return DJC_OK;
}

/* The options, checked: *o points to them, or to *copy (the defaults
 * for NULL; a version-1 caller's struct completed); *argv the make program
 * given, *serve whether it is a serve program. */
static int check_options(djc_conn *c, const djc_worker_options **o, djc_worker_options *copy, size_t nnames,
			 const char *const *names, char *const **argv, int *serve)
{
	if (!*o) *o = copy;
	if ((*o)->version == 1) {
		/* a caller built against version 1 (its struct ends before make_serve_argv) */
		memcpy(copy, *o, offsetof(djc_worker_options, make_serve_argv));
		copy->version = DJC_WORKER_OPTIONS_VERSION;
		*o = copy;
	} else if ((*o)->version != DJC_WORKER_OPTIONS_VERSION)
		return conn_fail(c, DJC_EINVAL, "worker options version %d is not %d (use DJC_WORKER_OPTIONS_INIT)", (*o)->version,
				 DJC_WORKER_OPTIONS_VERSION);
	if (nnames && !names) return conn_fail(c, DJC_EINVAL, "%zu tables announced, none given (NULL)", nnames);
	const djc_worker_options *w = *o;
	if (w->max_jobs < 0 || !(w->idle_exit >= 0) || !(w->deadline >= 0) || !(w->refresh_interval >= 0) ||
	    (w->timeout != DJC_TIMEOUT_NONE && config_limit("timeout", w->timeout)) ||
	    (w->priority != -1 && config_limit("priority", (double)w->priority)) || w->processes < 0 ||
	    w->processes > DJC_MAX_PROCESSES || w->refresh < -1 || w->refresh > 1)
		return conn_fail(c, DJC_EINVAL, "worker options out of range (max_jobs, idle_exit, deadline, refresh_interval >= 0; "
				 "timeout 0 to 1e9 or DJC_TIMEOUT_NONE; priority -1 or 0 to 2147483647; processes 1 to %d; "
				 "refresh -1, 0 or 1)", DJC_MAX_PROCESSES);
	char *const *a = (char *const *)w->make_argv, *const *sargv = (char *const *)w->make_serve_argv;
	if (a && !a[0]) a = NULL;
	if (sargv && !sargv[0]) sargv = NULL;
	if (!!w->make + !!a + !!sargv > 1)
		return conn_fail(c, DJC_EINVAL, "give the worker one make: a C make, make_argv or make_serve_argv");
	*serve = sargv != NULL;
	*argv = *serve ? sargv : a;
	return DJC_OK;
}

/* Each served table can be made (a make given, or its own), takes the
 * restriction, and has its jobs table; ~djc_worker has their rows. *at:
 * the table whose step failed (n: none of them, ~djc_worker's). */
static int check_tables(djc_conn *c, const djc_worker_options *o, char *const *argv, table **tabs, size_t n, size_t *at)
{
	*at = n;
	if ((o->make || argv) && n > 1)
		return conn_fail(c, DJC_EINVAL, "a make given to the worker serves one table, and %zu would be served (%s, %s%s): "
				 "name the table", n, tabs[0]->name, tabs[1]->name, n > 2 ? ", ..." : "");
	int rc = DJC_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		*at = i;
		if (!o->make && !argv && !has_own_make(tabs[i]))
			return conn_fail(c, DJC_EINVAL, "table %s has no make: give --make PROGRAM (or a 'make = ...' or "
					 "'make_serve = ...' line in its definition)", tabs[i]->name);
		if (o->where_json) {
			sb_t tmp = SB_INIT;
			pvec pv = {0};
			rc = where_build(c, tabs[i], o->where_json, NULL, 1, &tmp, &pv);
			sb_free(&tmp);
			pvec_free(&pv);
			if (rc) return rc;
		}
		rc = jobs_ensure(c, tabs[i]);
	}
	if (rc) return rc;
	*at = n == 1 ? 0 : n;
	return worker_table_ensure(c, tabs, n);
}

/* What work_reserved reads: populate's options, a failed make recorded
 * and passed. */
static void populate_options(const djc_worker_options *o, char *const *argv, int serve, djc_populate_options *po)
{
	djc_populate_options d = DJC_POPULATE_OPTIONS_INIT;
	*po = d;
	po->reserve_jobs = 1;
	po->max_calls = o->max_jobs;
	po->priority = o->priority;
	po->suppress_errors = 1;
	po->where_json = o->where_json;
	po->make = o->make;
	po->payload = o->payload;
	po->make_argv = serve ? NULL : (const char *const *)argv;
	po->make_serve_argv = serve ? (const char *const *)argv : NULL;
	po->timeout = o->timeout;
}

/* What the worker processes share: the parameters, with the deadline on
 * the monotonic clock (sp->names is the caller's to free). */
static void loop_params(const djc_worker_options *o, char *const *argv, int serve, table **tabs, size_t n,
			wloop_params *sp)
{
	*sp = (wloop_params){.o = o, .n = n, .argv = argv, .serve = serve};
	sp->names = xcalloc(n, sizeof(char *));
	for (size_t i = 0; i < n; i++) sp->names[i] = tabs[i]->name;
	sp->refresh = o->refresh >= 0 ? o->refresh : config_bool("jobs.auto_refresh");
	sp->interval = o->refresh_interval > 0 ? o->refresh_interval : 10;
	if (o->deadline > 0) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		sp->deadline = mono_now() + (o->deadline - ((double)now.tv_sec + now.tv_nsec / 1e9));
		if (sp->deadline <= 0) sp->deadline = 1e-9;   /* already past */
	}
}

/* Run the worker processes: this one, or a pool of o->processes. SIGINT
 * and SIGTERM stop them meanwhile (populate_signal); a drain (SIGUSR1,
 * caught since the start): no new job, the running makes finish and
 * commit (the --processes parent forwards it to every worker process). */
static int run_workers(djc_conn *c, table **tabs, const djc_populate_options *po, counters *sh, wloop_params *sp,
		       djc_populate_result *pres)
{
	stop_saved ss;
	stop_catch(&ss);
	int rc = DJC_OK, procs = sp->o->processes < 1 ? 1 : sp->o->processes;
	if (procs == 1) {
		worker w = {0};
		w.c = c; w.t = tabs[0]; w.o = po; w.argv = sp->argv; w.sh = sh; w.res = pres; w.outfd = -1;
		if (!(rc = lease_start(&w.lease, c, tabs[0]))) {
			wloop_run(&w, sp);
			lease_stop(&w.lease);
			worker_end(&w);
		}
	} else {
		progress prog;
		progress_start(&prog, tabs[0]->name, 0, 0);
		pool_work pw = {wloop_run, sp, tabs, sp->n};
		pool_opts po2 = {.argv = sp->argv, .procs = procs, .prog = &prog, .pw = &pw};
		rc = pool_run(c, tabs[0], po, sh, pres, &po2);
	}
	stop_release(&ss);
	return rc;
}

/* The result of the worker processes (pres's errors moved into it). */
static djc_worker_result *collect(counters *sh, const atomic_long *stops, djc_populate_result *pres, table **tabs,
				  size_t n)
{
	djc_worker_result *res = xcalloc(1, sizeof *res);
	res->success_count = atomic_load(&sh->success);
	res->error_count = atomic_load(&sh->errors);
	res->skipped_count = atomic_load(&sh->skipped);
	res->lost_count = atomic_load(&sh->lost);
	res->retried_count = atomic_load(&sh->retried);
	res->cancelled_count = atomic_load(&sh->cancelled);
	res->drained = populate_drain != 0;
	res->failure = worker_failure_text(sh);
	res->n_errors = pres->n_errors;
	res->errors = pres->errors;
	res->error_tables = pres->error_tables;
	res->interrupted = populate_signal;
	for (int i = 0; i < DJC_WORKER_NSTOPS; i++) res->stopped[i] = atomic_load(&stops[i]);
	res->tables = xcalloc(n, sizeof(char *));
	for (size_t i = 0; i < n; i++) res->tables[i] = xstrdup(tabs[i]->name);
	res->n_tables = n;
	return res;
}

/* The call's outcome: why it stopped, if that is a failure (locked: the
 * failure is a stop at a lock, worker_failure). */
static int outcome(djc_conn *c, const djc_worker_result *res, int locked)
{
	if (res->interrupted)
		return conn_fail(c, DJC_EINTR, "worker interrupted by %s", res->interrupted == SIGINT ? "SIGINT" : "SIGTERM");
	if (res->stopped[DJC_WORKER_FAILED] > 0 || res->failure)
		/* the worker's own failure, not a make's */
		return conn_fail(c, res->failure && locked ? DJC_ELOCKED : DJC_ERROR, "%s",
				 res->failure ? res->failure : "a worker process could not go on");
	if (res->error_count)
		return conn_fail(c, DJC_EMAKE, "%ld make call%s failed%s%s", res->error_count, res->error_count == 1 ? "" : "s",
				 res->n_errors ? ": " : "", res->n_errors ? res->errors[0].message : "");
	return DJC_OK;
}

/* Run the workers with their counters and stop counts in shared memory. */
static int serve_tables(djc_worker_result **out, djc_conn *c, table **tabs, size_t n, const djc_worker_options *o,
			char *const *argv, int serve)
{
	djc_populate_options po;
	populate_options(o, argv, serve, &po);
	/* the counters, the stop counts, and per table whether it left the
	 * stored pipeline (an unadopt meanwhile: told once, docs/adopt.md) */
	size_t shsz = sizeof(counters) + DJC_WORKER_NSTOPS * sizeof(atomic_long) + n * sizeof(atomic_int);
	void *mem = mmap(NULL, shsz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) return conn_fail(c, DJC_ERROR, "mmap: %s", strerror(errno));
	memset(mem, 0, shsz);
	counters *sh = mem;
	atomic_long *stops = (atomic_long *)((char *)mem + sizeof(counters));
	wloop_params sp;
	loop_params(o, argv, serve, tabs, n, &sp);
	sp.stops = stops;
	sp.left = (atomic_int *)(stops + DJC_WORKER_NSTOPS);
	djc_populate_result pres = {0};
	int rc = run_workers(c, tabs, &po, sh, &sp, &pres);
	*out = collect(sh, stops, &pres, tabs, n);
	int locked = atomic_load(&sh->failure_locked);
	munmap(mem, shsz);
	free(sp.names);
	return rc ? rc : outcome(c, *out, locked);
}

int djc_worker(djc_worker_result **out, djc_conn *c, const char *const *names, size_t nnames,
	       const djc_worker_options *o)
{
	if (!out) return c ? conn_fail(c, DJC_EINVAL, "djc_worker: out is NULL") : DJC_EINVAL;
	*out = NULL;
	djc_worker_options defo = DJC_WORKER_OPTIONS_INIT;
	char *const *argv = NULL;
	int serve = 0;
	int rc = check_options(c, &o, &defo, nnames, names, &argv, &serve);
	if (rc) return rc;
	/* SIGUSR1 from here on: a drain asked while the worker sets up stops it
	 * before its first job instead of ending the process */
	drain_saved ds;
	drain_catch(&ds);
	table **tabs = NULL;
	size_t n = 0, at = 0;
	/* a lock wait that reached its bound ends the statements of the setup
	 * and of this process (as populate's: db_lock_final) */
	if (c->db) db_lock_final(c->db, 1);
	if (!(rc = served_tables(c, names, nnames, o->make || argv, &tabs, &n)) && !(rc = check_tables(c, o, argv, tabs, n, &at)))
		rc = serve_tables(out, c, tabs, n, o, argv, serve);
	if (c->db) db_lock_final(c->db, 0);
	/* one that stopped the setup, worded as a worker's (worker_failure):
	 * the table whose step it was (the worker table's: ~djc_worker; before
	 * the tables were known: the pipeline's) */
	if (rc == DJC_ELOCKED && !*out) {
		sb_t b = SB_INIT;
		locked_words(&b, !n ? "the pipeline" : at < n ? tabs[at]->name : WORKER_TABLE, c->err);
		conn_fail(c, rc, "%s", sb_str(&b));
		sb_free(&b);
	}
	drain_release(&ds);
	free(tabs);
	return rc;
}
