/* populate.c - djc_populate: check the options, refresh (reserving) or
 * list the keys (direct), then run the workers, in this process or in a
 * pool of worker processes (pool.c), with a progress bar; and
 * djc_progress. The workers' modes are direct.c and reserved.c. */
#include "worker.h"
#include "db/db.h"
#include "util/config.h"
#include "table/opts.h"
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>


void djc_populate_options_init(djc_populate_options *o)
{
	djc_populate_options d = DJC_POPULATE_OPTIONS_INIT;
	*o = d;
}

void populate_errors_free(djc_populate_error *errors, char **error_tables, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(errors[i].key_json);
		free(errors[i].message);
		if (error_tables) free(error_tables[i]);
	}
	free(errors);
	free(error_tables);
}

void djc_populate_result_free(djc_populate_result *r)
{
	if (!r) return;
	populate_errors_free(r->errors, r->error_tables, r->n_errors);
	free(r->failure);
	free(r);
}

static void on_drain(int sig) { (void)sig; populate_drain = 1; }

void drain_catch(drain_saved *d)
{
	struct sigaction sa = {0};
	sa.sa_handler = on_drain;
	sigemptyset(&sa.sa_mask);
	populate_drain = 0;
	sigaction(SIGUSR1, &sa, &d->act);
	sigset_t u, old;
	sigemptyset(&u);
	sigaddset(&u, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &u, &old);
	d->was_blocked = sigismember(&old, SIGUSR1) == 1;
}

void stop_catch(stop_saved *s)
{
	struct sigaction sa = {0};
	sa.sa_handler = signals_stop;
	sigemptyset(&sa.sa_mask);
	populate_signal = 0;
	sigaction(SIGINT, &sa, &s->old_int);
	sigaction(SIGTERM, &sa, &s->old_term);
	struct sigaction ign = {0};
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &s->old_pipe);
}

/* (SIGPIPE's too: a host that handles it, or wants it to end the process,
 * got it ignored for good after its first populate) */
void stop_release(const stop_saved *s)
{
	sigaction(SIGINT, &s->old_int, NULL);
	sigaction(SIGTERM, &s->old_term, NULL);
	sigaction(SIGPIPE, &s->old_pipe, NULL);
}

void drain_release(const drain_saved *d)
{
	if (d->was_blocked) {
		sigset_t u;
		sigemptyset(&u);
		sigaddset(&u, SIGUSR1);
		pthread_sigmask(SIG_BLOCK, &u, NULL);
	}
	sigaction(SIGUSR1, &d->act, NULL);
}

/* t's key source as the derived table "ks", restricted by where: a new
 * query of a, into *out. */
static int keys_from(q_arena *a, djc_conn *c, table *t, const char *where, q_sel **out)
{
	q_sel *ks, *s = q_select(a);
	q_node *x;
	int rc = keysource_query(&ks, a, c, t);
	if (!rc) rc = restrict_node(&x, a, c, t, where, "ks", 1);
	if (rc) return rc;
	q_from_query(a, s, ks, "ks", 0);
	if (x) q_where(a, s, x);
	*out = s;
	return DJC_OK;
}

/* The keys of t's key source matching where without a row in t, in key
 * order (direct populate's work list). */
static int key_list(djc_conn *c, table *t, const char *where, djc_rowset **out)
{
	q_arena a = Q_ARENA_INIT;
	q_sel *s;
	int rc = keys_from(&a, c, t, where, &s);
	if (!rc) {
		q_where(&a, s, not_in_target(&a, t, "ks"));
		for (size_t i = 0; i < t->nsrc; i++) q_order(&a, s, (q_col){"ks", NULL, t->attrs[t->src[i]].name});
		rc = rows_fetch(c, t, s, out);
	}
	q_arena_free(&a);
	return rc;
}

/* The target's rows by key-source attributes, as the derived table "tg":
 * one per key. A target holds several rows of a key when its primary key
 * has more attributes, or when the key source is a secondary parent
 * (key_source = Topic: the rows' own key, several per topic); only when
 * the key-source attributes are the primary key is each row a key of its
 * own. Joined (left) to s's "ks" on them. */
static void join_target(q_arena *a, q_sel *s, table *t)
{
	int own_key = t->nkey == t->nsrc;
	for (size_t i = 0; i < t->nsrc; i++)
		if (!t->attrs[t->src[i]].in_key) own_key = 0;
	q_sel *tg = q_select(a);
	tg->distinct = !own_key;
	for (size_t i = 0; i < t->nsrc; i++) q_col_item(a, tg, (q_col){NULL, NULL, t->attrs[t->src[i]].name}, NULL);
	q_from_table(a, tg, table_sqlref(t), NULL, 0);
	q_node *on = q_from_query(a, s, tg, "tg", 1);
	for (size_t i = 0; i < t->nsrc; i++) {
		const char *n = t->attrs[t->src[i]].name;
		q_add(a, on, q_same(a, (q_col){"tg", NULL, n}, (q_col){"ks", NULL, n}));
	}
}

int djc_progress(long *remaining, long *total, djc_conn *c, const char *name, const char *where)
{
	*remaining = *total = 0;
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	/* (a computed or imported table has a key source: parse.c refuses one without) */
	if ((rc = table_populated_check(c, t))) return rc;
	/* one query: total keys, and those without a target row. An outer
	 * join, not a NOT EXISTS per row inside the aggregate: the planner can
	 * hash it, and a correlated subquery per key went quadratic on
	 * PostgreSQL with stale statistics (100,000 keys: ten minutes) */
	q_arena a = Q_ARENA_INIT;
	q_sel *s;
	db_res *r = NULL;
	sb_t q = SB_INIT;
	pvec p = {0};
	q_out o = {&q, &p, 0};
	if (!(rc = keys_from(&a, c, t, where, &s))) {
		s->nitems = 0;
		q_item_add(&a, s, QI_COUNT, NULL);
		q_item_add(&a, s, QI_COUNT_IF, q_null(&a, (q_col){"tg", NULL, t->attrs[t->src[0]].name}, 0));
		join_target(&a, s, t);
		rc = restrict_fail(c, q_select_sql(c->db, s, &o), &o);
	}
	/* a dropped table it reads (itself, a parent DataJoint dropped) is told
	 * as such, not as the server's message */
	if (!rc && (rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r))) rc = adopt_failure_explain(c, t, conn_dbfail(c, rc, "progress"));
	if (!rc) {
		*total = (long)db_cell_int(r, 0, 0);
		*remaining = (long)db_cell_int(r, 0, 1);
	}
	db_res_free(r);
	q_arena_free(&a);
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

/* The options' values, each by the one check of its kind (config_limit). */
static int options_check(djc_conn *c, const djc_populate_options *o)
{
	const char *what;
	if (o->timeout != DJC_TIMEOUT_NONE && (what = config_limit("timeout", o->timeout)))
		return conn_fail(c, DJC_EINVAL, "populate: timeout must be %s (or DJC_TIMEOUT_NONE: no limit), got %g", what, o->timeout);
	if (o->priority != -1 && (what = config_limit("priority", (double)o->priority)))
		return conn_fail(c, DJC_EINVAL, "populate: priority must be %s (or -1: any), got %ld", what, o->priority);
	/* the ranges djc_worker and `djc populate` take: clamping 1000 to
	 * DJC_MAX_PROCESSES, or reading -5 as "no limit", would run what the
	 * caller did not ask for */
	if (o->processes < 0 || o->processes > DJC_MAX_PROCESSES)
		return conn_fail(c, DJC_EINVAL, "populate: processes must be from 0 to %d (0 and 1: this process), got %d",
				 DJC_MAX_PROCESSES, o->processes);
	if (o->max_calls < 0)
		return conn_fail(c, DJC_EINVAL, "populate: max_calls must be 0 (no limit) or more, got %ld", o->max_calls);
	if (o->refresh < -1 || o->refresh > 1)
		return conn_fail(c, DJC_EINVAL, "populate: refresh must be -1 (jobs.auto_refresh), 0 (no) or 1 (yes), got %d",
				 o->refresh);
	return DJC_OK;
}

/* The bar's last line. A run that took everything it could (not stopped
 * by a signal, a drain, its own failure or a first error) ends it full:
 * what the total counted and this run did not do, another worker took. */
static void bar_final(progress *prog, counters *sh, const djc_populate_options *o, int rc)
{
	long done = atomic_load(&sh->success) + atomic_load(&sh->errors) + atomic_load(&sh->skipped);
	if (!rc && !populate_signal && !populate_drain && (o->suppress_errors || !atomic_load(&sh->errors)) && done < prog->total)
		prog->total = done;
	progress_update(prog, done, atomic_load(&sh->errors), 1);
}

/* Which make runs: the C callback, else a program given by the caller
 * (per key or serve), else the table's own line. *argv the program (NULL
 * for the callback), *serve whether it serves many keys. */
static int which_make(djc_conn *c, table *t, const djc_populate_options *o, char *const **argv_out, int *serve)
{
	char *const *argv = (char *const *)o->make_argv, *const *sargv = (char *const *)o->make_serve_argv;
	if (argv && !argv[0]) argv = NULL;
	if (sargv && !sargv[0]) sargv = NULL;
	if (argv && sargv)
		return conn_fail(c, DJC_EINVAL, "populate takes a per-key make program or a serve program, not both (--make or --make-serve)");
	*serve = 0;
	if (!o->make && !argv && !sargv) {
		argv = t->make_argv;
		sargv = t->make_serve_argv;
	}
	if (sargv) { argv = sargv; *serve = 1; }
	if (!o->make && (!argv || !argv[0]))
		return conn_fail(c, DJC_EINVAL, "table %s has no make: give --make PROGRAM or --make-serve PROGRAM "
				 "(or a 'make = ...' or 'make_serve = ...' line in its definition)", t->name);
	*argv_out = argv;
	return DJC_OK;
}

/* What this run works on: with reserve_jobs the jobs table (refreshed
 * first, as configured) and, for a bar, *total the jobs it could take
 * now; else the keys to make (*keys). */
static int work_list(djc_conn *c, table *t, const char *name, const djc_populate_options *o, djc_rowset **keys, long *total)
{
	int rc;
	*keys = NULL;
	*total = 0;
	if (!o->reserve_jobs) {
		if ((rc = key_list(c, t, o->where_json, keys))) return rc;
		*total = (long)(*keys)->n;
		return DJC_OK;
	}
	if ((rc = jobs_ensure(c, t))) return rc;
	int refresh = o->refresh >= 0 ? o->refresh : config_bool("jobs.auto_refresh");
	if (refresh) {
		djc_refresh_options ro = DJC_REFRESH_OPTIONS_INIT;
		ro.where_json = o->where_json;
		/* new jobs get populate's priority (DataJoint's populate does
		 * the same), so --priority P also runs the keys it adds */
		if (o->priority >= 0) ro.priority = o->priority;
		ro.delay = -1;   /* due at once whatever the clocks say (DataJoint's populate does the same) */
		/* stale jobs (their upstream row was deleted) go, with
		 * jobs.stale_timeout, as DataJoint's populate does: else they
		 * would be reserved and end as errors */
		djc_refresh_result rr;
		if ((rc = djc_jobs_refresh(&rr, c, name, &ro))) return rc;
	}
	/* the bar's total: the jobs this run could take now (not other
	 * workers' live reservations, not jobs due later); a count over the
	 * queue, so only for a bar */
	if (o->display_progress) return jobs_claimable_count(c, t, o->where_json, o->priority, total);
	return DJC_OK;
}

/* The counts of the run into res, and the code populate returns. */
static int populate_end(djc_conn *c, table *t, counters *sh, djc_populate_result *res, int rc)
{
	res->success_count = atomic_load(&sh->success);
	res->error_count = atomic_load(&sh->errors);
	res->skipped_count = atomic_load(&sh->skipped);
	res->lost_count = atomic_load(&sh->lost);
	res->retried_count = atomic_load(&sh->retried);
	res->cancelled_count = atomic_load(&sh->cancelled);
	res->interrupted = populate_signal;
	res->drained = populate_drain != 0;
	res->failure = worker_failure_text(sh);
	if (rc) return rc;
	if (res->interrupted) return conn_fail(c, DJC_EINTR, "populate of %s interrupted by %s", t->name,
					       res->interrupted == SIGINT ? "SIGINT" : "SIGTERM");
	/* the workers' own failure (not a make's) says why populate stopped
	 * (a stop at a lock: worded by worker_failure, DJC_ELOCKED) */
	if (res->failure) return conn_fail(c, atomic_load(&sh->failure_locked) ? DJC_ELOCKED : DJC_ERROR, "%s", res->failure);
	if (res->error_count) {
		return conn_fail(c, DJC_EMAKE, "%ld make call%s of %s failed%s%s", res->error_count, res->error_count == 1 ? "" : "s",
				 t->name, res->n_errors ? ": " : "", res->n_errors ? res->errors[0].message : "");
	}
	return DJC_OK;
}

/* djc_populate itself, with SIGUSR1 (drain) already handled. */
static int populate(djc_conn *c, const char *name, const djc_populate_options *o, djc_populate_result **out)
{
	table *t;
	char *const *argv = NULL;
	int serve = 0;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	if ((rc = table_target_check(c, t)) || (rc = adopt_current_check(c, t)) || (rc = which_make(c, t, o, &argv, &serve)) ||
	    (rc = options_check(c, o)))
		return rc;
	int procs = o->processes < 1 ? 1 : o->processes;   /* options_check: at most DJC_MAX_PROCESSES */
	if (o->where_json && (rc = restrict_check(c, t, o->where_json, 1))) return rc;

	djc_rowset *keys = NULL;
	long total = 0;
	if ((rc = work_list(c, t, name, o, &keys, &total))) return rc;
	if (o->max_calls > 0 && total > o->max_calls) total = o->max_calls;

	counters *sh = mmap(NULL, sizeof(counters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) { djc_rowset_free(keys); return conn_fail(c, DJC_ERROR, "mmap: %s", strerror(errno)); }
	memset(sh, 0, sizeof *sh);
	djc_populate_result *res = xcalloc(1, sizeof *res);
	progress prog;
	progress_start(&prog, t->name, total, o->display_progress);

	stop_saved ss;
	stop_catch(&ss);

	rc = DJC_OK;
	if (procs == 1) {
		worker w = {0};
		w.c = c; w.t = t; w.o = o; w.argv = argv; w.serve = serve; w.sh = sh; w.res = res; w.outfd = -1; w.prog = &prog;
		w.timeout = worker_timeout(o, t);
		if (o->reserve_jobs) {
			if (!(rc = lease_start(&w.lease, c, t))) {
				work_reserved(&w);
				lease_stop(&w.lease);
			}
		} else
			work_direct(&w, keys);
		worker_end(&w);
	} else
		rc = pool_run(c, t, o, sh, res, &(pool_opts){.argv = argv, .serve = serve, .keys = keys, .procs = procs, .prog = &prog});
	bar_final(&prog, sh, o, rc);
	stop_release(&ss);
	rc = populate_end(c, t, sh, res, rc);
	munmap(sh, sizeof *sh);
	djc_rowset_free(keys);
	*out = res;
	return rc;
}

int djc_populate(djc_populate_result **out, djc_conn *c, const char *name, const djc_populate_options *o)
{
	*out = NULL;
	djc_populate_options full = DJC_POPULATE_OPTIONS_INIT;
	if (!o) o = &full;
	if (OPTS_VERSION(c, "populate", o, 1, POPULATE)) return DJC_EINVAL;
	if (o->version == 1 || o->version == 2) {
		/* a caller built against version 1 (its struct ends before
		 * make_serve_argv) or 2 (before timeout) */
		memcpy(&full, o, o->version == 1 ? offsetof(djc_populate_options, make_serve_argv)
						 : offsetof(djc_populate_options, timeout));
		full.version = DJC_POPULATE_OPTIONS_VERSION;
		o = &full;
	}
	drain_saved ds;
	drain_catch(&ds);
	/* a lock wait that reached its bound ends the populate's statements:
	 * its setup (the jobs table's, the refresh, the list of keys) and
	 * without reservations its commits wait for a lock once, not once for
	 * each of their statements or keys (db_lock_final; each worker process
	 * does the same on its connection) */
	if (c->db) db_lock_final(c->db, 1);
	int rc = populate(c, name, o, out);
	if (c->db) db_lock_final(c->db, 0);
	/* one that stopped the setup (no result yet: the workers' is worded
	 * by worker_failure) */
	if (rc == DJC_ELOCKED && !*out) {
		sb_t b = SB_INIT;
		locked_words(&b, name, c->err);
		conn_fail(c, rc, "%s", sb_str(&b));
		sb_free(&b);
	}
	drain_release(&ds);
	return rc;
}
