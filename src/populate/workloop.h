/* workloop.h - the loop of a `djc worker` process (workloop.c) and the
 * refreshes it coordinates with the other workers through ~djc_worker
 * (worker_refresh.c); djc_worker itself is worker_api.c. Internal to
 * src/populate. */
#ifndef DJC_WORKLOOP_H
#define DJC_WORKLOOP_H
#include "worker.h"
#include "worker_table.h"

/* One served table, in one worker process. */
typedef struct stab {
	table *t;
	char *const *argv;
	int serve;                  /* argv is a serve program (the table's make_serve line) */
	double next_refresh;        /* monotonic: when to try the refresh slot again */
	int64_t gen0;               /* a refresh started after this generation sees this worker's rows
	                             * upstream (and, --until-empty, must have committed); -1 unknown */
	int dirty;                  /* keys may be missing from the jobs table that no refresh started
	                             * after gen0 has seen: refresh now (flush_dirty) */
	long why;                   /* what made it dirty: the index of the upstream table worked on, or -1: the start */
	durations d;                /* its makes' durations (worker_table.h) */
	size_t idx;                 /* its index in wloop_params.names (and .left) */
	int gone;                   /* it left the stored pipeline (wloop_forgotten): left out at the next look */
} stab;

/* What every worker process of one djc_worker call shares (the parent's
 * memory, copied into each child by fork; stops is shared memory). */
typedef struct wloop_params {
	const djc_worker_options *o;
	char **names;               /* the served tables, upstream first */
	size_t n;
	char *const *argv;          /* --make or --make-serve, or NULL: each table's make line */
	int serve;                  /* argv is a serve program */
	double deadline;            /* monotonic; 0 = none */
	double interval;            /* refresh interval (s) */
	int refresh;                /* refresh at all */
	atomic_long *stops;         /* [DJC_WORKER_NSTOPS], shared */
	atomic_int *left;           /* [n], shared: the table left the stored pipeline (told once for all processes) */
} wloop_params;

/* One worker process's state. */
typedef struct wloop {
	worker *w;
	const wloop_params *p;
	stab *tabs;
	size_t n, cur;
	unsigned char *down;        /* down[i * n + j]: table j is downstream of table i (its rows can make j's keys) */
	double yield_at;
	long claimed;               /* jobs claimed since the loop last looked */
	int listening;
	char prefix[80];            /* "schema." of our notifications' payloads */
	unsigned seed;
	int stop;                   /* djc_worker_stop, or -1 */
} wloop;

/* A worker process (this one, or a child of the pool) serving the tables
 * of arg (a wloop_params): pool_work.run. */
void wloop_run(worker *w, void *arg);
/* After a step on s->tabs[i] failed for good (w->c's message, kept): 1
 * when its table left the stored pipeline (djc unadopt, or a drop,
 * forgot it): marked gone, told once on stderr for all the processes,
 * and left out by the loop at its next look; 0 when it is still there
 * (the failure stands) or that cannot be read. */
int wloop_forgotten(wloop *s, size_t i);

/* worker_refresh.c */
/* A number from lo to hi, spread per process. */
double wloop_jitter(wloop *s, double lo, double hi);
/* The refreshes due: each table's slot when its interval is over, and the
 * tables marked dirty at once. DJC_OK with *added the jobs they made
 * takeable, or a failure that stops the worker. */
int refresh_due(wloop *s, long *added);
/* Mark the tables that may have keys no refresh has seen: at the start
 * (from < 0) every served table; after work on table `from`, the served
 * tables downstream of it. */
void mark_dirty(wloop *s, long from);
/* Whether a table still waits for its refresh. */
int any_dirty(const wloop *s);
/* --until-empty: nothing pending or reserved is left in any served table,
 * and every refresh this worker's work asked for has committed. */
int queue_empty(wloop *s);
#endif
