/* worker.h - one worker of a populate (this process, or a child of the
 * process pool) and what the workers of one populate share. Internal to
 * src/populate: populate.c drives, direct.c and reserved.c work, pool.c
 * runs N worker processes. */
#ifndef DJC_WORKER_H
#define DJC_WORKER_H
#include <stdatomic.h>
#include "lease.h"
#include "populate.h"
#include "progress.h"

/* Counters shared by the workers of one populate (in shared memory when
 * there are worker processes). */
typedef struct counters {
	atomic_long next;        /* direct mode: next key index */
	atomic_long calls;       /* makes started */
	atomic_long success, errors, skipped, lost;
	atomic_int stop;         /* stop taking work (an error without suppress_errors) */
} counters;

typedef struct worker {
	djc_conn *c;
	table *t;
	const djc_populate_options *o;
	char *const *argv;
	counters *sh;
	djc_populate_result *res;  /* errors of this process (outfd < 0) */
	int outfd;                 /* a pool child: reports to the parent, else -1 */
	progress *prog;            /* single-process progress bar, or NULL */
	lease lease;               /* reserved mode */
	make_watch watch;          /* what a running make asks */
	int serve;                 /* argv is a serve program (serve.h), else per key */
	struct serve *srv;         /* the serve program of this worker, once started */
	long attempt;              /* the attempt at the key being made (1: first) */
} worker;

/* A make failed (or a worker could not work): count it, report it (to
 * the parent, or into w->res), and stop the others unless suppress_errors. */
void worker_error(worker *w, const djc_row *key, const char *msg);
/* A pool child tells its parent which job it is making (key, token), so
 * that if it dies the parent fails that job and only it. */
void worker_making(worker *w, const djc_job *job);
void worker_tick(worker *w);
/* populate should stop taking work: a signal, or an error without suppress_errors. */
int worker_stopping(worker *w);
/* Take a make call under max_calls; 0 when the budget is spent. */
int worker_take_call(worker *w);
/* Run make (C callback or program) for key with w's watch. mr->fatal:
 * the key was not tried and the worker must stop (worker_fatal). */
int worker_make(worker *w, const djc_row *key, staged *st, make_result *mr);
/* The worker cannot make keys (its serve program cannot be run): report
 * msg and stop every worker of this populate. */
void worker_fatal(worker *w, const char *msg);
/* The worker is done: stop what it keeps running (its serve program). */
void worker_end(worker *w);

/* The two modes (direct.c, reserved.c). */
void work_direct(worker *w, djc_rowset *keys);
void work_reserved(worker *w);

/* The process pool (pool.c): run procs worker processes until the work is
 * done, collecting their errors into res. DJC_OK, or an error (message on
 * c) when no worker could be started. */
int pool_run(djc_conn *c, table *t, const djc_populate_options *o, char *const *argv, int serve, counters *sh,
	     djc_rowset *keys, int procs, djc_populate_result *res, progress *prog);

double mono_now(void);
#endif
