/* populate.c - djc_populate: check the options, refresh (reserving) or
 * list the keys (direct), then run the workers, in this process or in a
 * pool of worker processes (pool.c), with a progress bar; and
 * djc_progress. The workers' modes are direct.c and reserved.c. */
#include "worker.h"
#include "util/config.h"
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

void djc_populate_result_free(djc_populate_result *r)
{
	if (!r) return;
	for (size_t i = 0; i < r->n_errors; i++) {
		free(r->errors[i].key_json);
		free(r->errors[i].message);
		if (r->error_tables) free(r->error_tables[i]);
	}
	free(r->errors);
	free(r->error_tables);
	free(r->failure);
	free(r);
}

static void on_signal(int sig) { if (!populate_signal) populate_signal = sig; }
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

static int key_list(djc_conn *c, table *t, const char *where, djc_rowset **out)
{
	sb_t q = SB_INIT;
	pvec p = {0};
	sb_add(&q, "SELECT * FROM (");
	int rc = keysource_sql(c, t, &q, &p);
	if (!rc) {
		sb_add(&q, ") ks WHERE 1=1");
		rc = where_build(c, t, where, "ks", 1, &q, &p);
	}
	if (!rc) {
		not_in_target_sql(c, t, "ks", &q);
		sb_add(&q, " ORDER BY ");
		for (size_t i = 0; i < t->nsrc; i++) {
			if (i) sb_add(&q, ", ");
			sb_add(&q, "ks.");
			db_qi(c->db, &q, t->attrs[t->src[i]].name);
		}
		rc = rows_select(c, t, sb_str(&q), &p, out);
	}
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

int djc_progress(long *remaining, long *total, djc_conn *c, const char *name, const char *where)
{
	*remaining = *total = 0;
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	if (!t->nsrc || (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED))
		return conn_fail(c, DJC_EINVAL, "table %s is %s: only computed and imported tables are populated", t->name, tier_name(t->tier));
	sb_t q = SB_INIT;
	pvec p = {0};
	/* one query: total keys, and those without a target row. An outer
	 * join, not a NOT EXISTS per row inside the aggregate: the planner can
	 * hash it, and a correlated subquery per key went quadratic on
	 * PostgreSQL with stale statistics (100,000 keys: ten minutes) */
	sb_add(&q, "SELECT count(*), coalesce(sum(CASE WHEN tg.");
	db_qi(c->db, &q, t->attrs[t->src[0]].name);
	sb_add(&q, " IS NULL THEN 1 ELSE 0 END), 0) FROM (");
	if (!(rc = keysource_sql(c, t, &q, &p))) {
		/* the target's rows by key-source attributes: one per key. A
		 * target holds several rows of a key when its primary key has
		 * more attributes, or when the key source is a secondary parent
		 * (key_source = Topic: the rows' own key, several per topic);
		 * only when the key-source attributes are the primary key is
		 * each row a key of its own */
		int own_key = t->nkey == t->nsrc;
		for (size_t i = 0; i < t->nsrc; i++)
			if (!t->attrs[t->src[i]].in_key) own_key = 0;
		sb_add(&q, ") ks LEFT JOIN (SELECT ");
		if (!own_key) sb_add(&q, "DISTINCT ");
		for (size_t i = 0; i < t->nsrc; i++) {
			if (i) sb_add(&q, ", ");
			db_qi(c->db, &q, t->attrs[t->src[i]].name);
		}
		sb_add(&q, " FROM ");
		db_qtable(c->db, &q, t->sql_name);
		sb_add(&q, ") tg ON ");
		for (size_t i = 0; i < t->nsrc; i++) {
			const char *n = t->attrs[t->src[i]].name;
			if (i) sb_add(&q, " AND ");
			sb_add(&q, "tg.");
			db_qi(c->db, &q, n);
			sb_add(&q, " = ks.");
			db_qi(c->db, &q, n);
		}
		sb_add(&q, " WHERE 1=1");
		rc = where_build(c, t, where, "ks", 1, &q, &p);
	}
	db_res *r = NULL;
	if (!rc && (rc = db_exec(c->db, sb_str(&q), p.v, p.n, &r))) rc = conn_dbfail(c, rc, "progress");
	if (!rc) {
		*total = (long)db_cell_int(r, 0, 0);
		*remaining = (long)db_cell_int(r, 0, 1);
	}
	db_res_free(r);
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

/* djc_populate itself, with SIGUSR1 (drain) already handled. */
static int populate(djc_conn *c, const char *name, const djc_populate_options *o, djc_populate_result **out)
{
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	if (t->tier != TIER_COMPUTED && t->tier != TIER_IMPORTED)
		return conn_fail(c, DJC_EINVAL, "table %s is %s: only computed and imported tables are populated", t->name, tier_name(t->tier));
	/* which make: the C callback, else a program given by the caller (per
	 * key or serve), else the table's own line */
	char *const *argv = (char *const *)o->make_argv, *const *sargv = (char *const *)o->make_serve_argv;
	if (argv && !argv[0]) argv = NULL;
	if (sargv && !sargv[0]) sargv = NULL;
	if (argv && sargv)
		return conn_fail(c, DJC_EINVAL, "populate takes a per-key make program or a serve program, not both (--make or --make-serve)");
	int serve = 0;
	if (!o->make && !argv && !sargv) {
		argv = t->make_argv;
		sargv = t->make_serve_argv;
	}
	if (sargv) { argv = sargv; serve = 1; }
	if (!o->make && (!argv || !argv[0]))
		return conn_fail(c, DJC_EINVAL, "table %s has no make: give --make PROGRAM or --make-serve PROGRAM "
				 "(or a 'make = ...' or 'make_serve = ...' line in its definition)", t->name);
	if ((rc = options_check(c, o))) return rc;
	int procs = o->processes < 1 ? 1 : o->processes > DJC_MAX_PROCESSES ? DJC_MAX_PROCESSES : o->processes;
	if (o->where_json) {
		sb_t tmp = SB_INIT;
		pvec p = {0};
		rc = where_build(c, t, o->where_json, NULL, 1, &tmp, &p);
		sb_free(&tmp);
		pvec_free(&p);
		if (rc) return rc;
	}

	djc_rowset *keys = NULL;
	long total = 0;
	if (o->reserve_jobs) {
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
		 * workers' live reservations, not jobs due later); a count over
		 * the queue, so only for a bar */
		if (o->display_progress && (rc = jobs_claimable_count(c, t, o->where_json, o->priority, &total))) return rc;
	} else {
		if ((rc = key_list(c, t, o->where_json, &keys))) return rc;
		total = (long)keys->n;
	}
	if (o->max_calls > 0 && total > o->max_calls) total = o->max_calls;

	counters *sh = mmap(NULL, sizeof(counters), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) { djc_rowset_free(keys); return conn_fail(c, DJC_ERROR, "mmap: %s", strerror(errno)); }
	memset(sh, 0, sizeof *sh);
	djc_populate_result *res = xcalloc(1, sizeof *res);
	progress prog;
	progress_start(&prog, t->name, total, o->display_progress);

	struct sigaction sa = {0}, old_int, old_term;
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	populate_signal = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	signal(SIGPIPE, SIG_IGN);

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
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);

	res->success_count = atomic_load(&sh->success);
	res->error_count = atomic_load(&sh->errors);
	res->skipped_count = atomic_load(&sh->skipped);
	res->lost_count = atomic_load(&sh->lost);
	res->retried_count = atomic_load(&sh->retried);
	res->cancelled_count = atomic_load(&sh->cancelled);
	res->interrupted = populate_signal;
	res->drained = populate_drain != 0;
	res->failure = worker_failure_text(sh);
	munmap(sh, sizeof *sh);
	djc_rowset_free(keys);
	*out = res;
	if (rc) return rc;
	if (res->interrupted) return conn_fail(c, DJC_EINTR, "populate of %s interrupted by %s", t->name,
					       res->interrupted == SIGINT ? "SIGINT" : "SIGTERM");
	/* the workers' own failure (not a make's) says why populate stopped */
	if (res->failure) return conn_fail(c, DJC_ERROR, "%s", res->failure);
	if (res->error_count) {
		return conn_fail(c, DJC_EMAKE, "%ld make call%s of %s failed%s%s", res->error_count, res->error_count == 1 ? "" : "s",
				 t->name, res->n_errors ? ": " : "", res->n_errors ? res->errors[0].message : "");
	}
	return DJC_OK;
}

int djc_populate(djc_populate_result **out, djc_conn *c, const char *name, const djc_populate_options *o)
{
	*out = NULL;
	djc_populate_options full = DJC_POPULATE_OPTIONS_INIT;
	if (!o) o = &full;
	if (o->version == 1 || o->version == 2) {
		/* a caller built against version 1 (its struct ends before
		 * make_serve_argv) or 2 (before timeout) */
		memcpy(&full, o, o->version == 1 ? offsetof(djc_populate_options, make_serve_argv)
						 : offsetof(djc_populate_options, timeout));
		full.version = DJC_POPULATE_OPTIONS_VERSION;
		o = &full;
	} else if (o->version != DJC_POPULATE_OPTIONS_VERSION)
		return conn_fail(c, DJC_EINVAL, "populate options version %d is not %d (use DJC_POPULATE_OPTIONS_INIT)", o->version,
				 DJC_POPULATE_OPTIONS_VERSION);
	drain_saved ds;
	drain_catch(&ds);
	int rc = populate(c, name, o, out);
	drain_release(&ds);
	return rc;
}
