/* worker.h - one worker of a populate (this process, or a child of the
 * process pool) and what the workers of one populate share. Internal to
 * src/populate: populate.c drives, direct.c and reserved.c work, pool.c
 * runs N worker processes. */
#ifndef DJC_WORKER_H
#define DJC_WORKER_H
#include <stdatomic.h>
#include "lease.h"
#include "make/make.h"
#include "progress.h"
#include "../util/clock.h"

/* Counters shared by the workers of one populate (in shared memory when
 * there are worker processes). */
typedef struct counters {
	atomic_long next;        /* direct mode: next key index */
	atomic_long calls;       /* makes started */
	atomic_long success, errors, skipped, lost;
	atomic_long retried;     /* failed attempts whose job went back to pending */
	atomic_long cancelled;   /* makes stopped (or commits refused) because their job was cancelled */
	atomic_llong retry_due;  /* when the last retry scheduled by this populate is due (monotonic us) */
	atomic_int stop;         /* stop taking work (an error without suppress_errors) */
	atomic_int noconn;       /* pool children that could not connect (pool.c) */
	/* why a worker could not go on (worker_failure): the first one only;
	 * failure_state 0 none, 1 being written, 2 written */
	atomic_int failure_state;
	atomic_int failure_locked;   /* the failure is a stop at a lock (worker_failure, DJC_ELOCKED) */
	char failure[1024];
} counters;

/* Which job a pool child is making, in memory it shares with its parent
 * (pool.c): written before each make starts and emptied when it ends, so
 * the parent learns it without a system call or a wakeup per job, and read
 * by the parent only once the child is dead. seq is odd while the child
 * writes (a child that died then was running no make); an empty key: no
 * make is running (the child died between makes, or committing one). A key
 * or table name that does not fit goes as a "making" line on the pipe
 * instead (in_pipe), written before seq is even again. */
typedef struct making_slot {
	atomic_ullong seq;
	_Atomic long long session;  /* the child's own server session (db_publish_session): -1 none yet,
	                             * 0 not known to be its own (pooler, proxy) */
	int in_pipe;
	int history;
	atomic_int ended;           /* 1: the child leaves by its own _exit (pool.c child_main); a
	                             * child that exits without it left from inside a make (exit()) */
	long long token;
	long attempts;
	char table[128];
	char key[3968];
} making_slot;
/* The slot is shared between processes: its atomics must not be locks. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2, "making_slot needs lock-free 64-bit atomics");

/* What `djc worker` (workloop.c) asks of work_reserved, which otherwise
 * behaves as populate's: how many jobs to claim now (at most batch, with
 * `ahead` makes of this worker still to run before the claimed ones could
 * start; 0: claim nothing and return, e.g. nothing fits before the
 * deadline), that a claim got n jobs, and how long each make ran (not
 * counting makes that were stopped). With hooks, an empty claim returns at
 * once (the caller waits as it sees fit) instead of looking twice more. */
typedef struct work_hooks {
	long (*claim_size)(void *arg, long batch, long ahead);
	void (*claimed)(void *arg, size_t n);
	void (*made)(void *arg, double seconds);
	/* a step on the table failed for good (w->c's message): 1 when the
	 * worker no longer serves it (it left the stored pipeline: unadopted
	 * or dropped), then nothing more of it is committed or counted as an
	 * error, and work_reserved returns */
	int (*gone)(void *arg);
} work_hooks;

typedef struct worker {
	djc_conn *c;
	table *t;
	const djc_populate_options *o;
	char *const *argv;
	counters *sh;
	djc_populate_result *res;  /* errors of this process (outfd < 0) */
	int outfd;                 /* a pool child: reports to the parent, else -1 */
	making_slot *slot;         /* a pool child: says which job it makes, else NULL */
	progress *prog;            /* single-process progress bar, or NULL */
	lease lease;               /* reserved mode */
	make_watch watch;          /* what a running make asks */
	const work_hooks *hooks;   /* djc worker's, or NULL (populate) */
	void *hooks_arg;
	int serve;                 /* argv is a serve program (serve.h), else per key */
	struct serve *srv;         /* the serve program of this worker, once started */
	double timeout;            /* seconds a make may run, 0: no limit (worker_timeout) */
	double make_start;         /* when the running make started (monotonic) */
	const make_next *next;     /* the keys after the one worker_make makes (a serve program's keys ahead), or NULL */
	size_t nnext;
	int gone;                  /* t left the stored pipeline (work_hooks.gone said so) */
	int down;                  /* a database fault outlasted its retries (reserved.c, database_gone):
				    * nothing more is written, the worker stops */
} worker;

/* A retry of this populate is due `delay` seconds from now: its workers
 * wait for it before they leave. */
void worker_retry_due(counters *sh, double delay);

/* A make of key failed: count it, report it with w->t's name (to the
 * parent, or into w->res), and stop the others unless suppress_errors.
 * Without a key it is the worker's own failure: worker_failure. */
void worker_error(worker *w, const djc_row *key, const char *msg);
/* The worker cannot go on, which is no make's failure (a claim that failed
 * for longer than its retries, a serve program that cannot be run): keep
 * msg as the failure of this populate or djc_worker (the first one of all
 * its processes, in w->sh), counting no error and stopping nobody (the
 * caller decides). On a connection a lock wait ended (worker_locked) it is
 * worded as a stop at a lock (locked_words) and marked so
 * (failure_locked: the call returns DJC_ELOCKED). */
void worker_failure(worker *w, const char *msg);
/* The failure of all the processes, or NULL (for the result, once they are
 * done). */
char *worker_failure_text(counters *sh);
/* A pool child tells its parent which job it is making (key, token, its
 * attempts; in w->slot), so that if it dies the parent fails that job and
 * only it. */
void worker_making(worker *w, const djc_job *job);
/* ... and that the make has ended (whatever comes of it, the commit or
 * the error's record, is no longer that make's crash). */
void worker_made(worker *w);
void worker_tick(worker *w);
/* populate should stop taking work: a signal, a drain (SIGUSR1), or an
 * error without suppress_errors. */
int worker_stopping(worker *w);
/* Take a make call under max_calls; 0 when the budget is spent. */
int worker_take_call(worker *w);
/* The timeout of t's makes: populate's option, else the table's
 * `timeout =`, else jobs.make_timeout; 0 for none. */
double worker_timeout(const djc_populate_options *o, const table *t);
/* Run make (C callback, program or serve program) for key, its attempt-th
 * attempt, with w's watch: a signal, the lease, the timeout. A make stopped
 * by its timeout gets the message "timed out after ...". mr->fatal: the key
 * was not tried and the worker must stop (worker_fatal). */
int worker_make(worker *w, const djc_row *key, int attempt, staged *st, make_result *mr);
/* The worker cannot make keys (its serve program cannot be run): keep msg
 * as the failure (worker_failure) and stop every worker of this populate. */
void worker_fatal(worker *w, const char *msg);
/* A statement of the worker waited for a lock as long as its bound
 * (jobs.lock_timeout, DJC_ELOCKED): its connection takes no more. */
int worker_locked(const worker *w);
/* The one wording of a stop at a lock wait that reached its bound
 * (DJC_ELOCKED), into b: "T is locked by another session: MSG", MSG the
 * statement's own ("claim: postgresql: waited 60 s for a lock another
 * session holds (lock_timeout)"). A worker's failure on a locked
 * connection (worker_failure: populate's workers, direct or reserved, in
 * this process or a pool's, and djc worker's) and populate's setup
 * (djc_populate) say it so. */
void locked_words(sb_t *b, const char *tname, const char *msg);
/* Append an error (key_json of table tname: msg) to r, with copies. */
void result_add_error(djc_populate_result *r, const char *tname, const char *key, const char *msg);
/* The worker is done: stop what it keeps running (its serve program). */
void worker_end(worker *w);

/* The two modes (direct.c, reserved.c). */
void work_direct(worker *w, djc_rowset *keys);
void work_reserved(worker *w);

/* What the worker processes of a pool do: NULL runs populate's work on t
 * (work_reserved or work_direct); djc worker runs its loop over several
 * tables. tables[0..ntables) are the tables a child may hold jobs of, for
 * the parent to clean up after a child that died before saying which job
 * it was making. */
typedef struct pool_work {
	void (*run)(worker *w, void *arg);
	void *arg;
	table *const *tables;
	size_t ntables;
} pool_work;

/* How a pool runs: procs worker processes (at most DJC_MAX_PROCESSES),
 * making with argv (a serve program when serve), populate's keys in
 * direct mode, a progress bar (may be NULL), and pw (NULL: populate's
 * work). */
typedef struct pool_opts {
	char *const *argv;
	int serve;
	djc_rowset *keys;
	int procs;
	progress *prog;
	const pool_work *pw;
} pool_opts;

/* The process pool (pool.c): run the worker processes until the work is
 * done, collecting their errors into res. DJC_OK, or an error (message on
 * c) when no worker could be started. */
int pool_run(djc_conn *c, table *t, const djc_populate_options *o, counters *sh, djc_populate_result *res,
	     const pool_opts *po);

/* Retrying a database fault (busy: a lock wait that ran out, a deadlock, a
 * serialization failure; or a lost connection, which the drivers reconnect
 * between transactions): back off 50 ms doubling to 2 s, for at most
 * max(60 s, 4 leases of lease_s seconds) from the first wait, so a worker
 * outlives a database restart. retry_wait sleeps and returns 1, or returns
 * 0 when the budget is spent or a signal came. Start with {0, 0}. */
typedef struct retry { double start, delay; } retry;
static inline int retryable(int rc) { return rc == DJC_EBUSY || rc == DJC_ECONN; }
int retry_wait(retry *r, double lease_s);
/* One line to $DJC_WORKER_LOG, if set (worker.c says which). */
void worker_event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Free n errors and their tables (either may be NULL): the error lists of
 * djc_populate_result and djc_worker_result (populate.c). */
void populate_errors_free(djc_populate_error *errors, char **error_tables, size_t n);
#endif
