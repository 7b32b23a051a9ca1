/* lease.h - keeping a worker's reservation alive while make runs
 * (docs/leases.md). A heartbeat thread renews the lease every lease/4 on
 * the worker's own connection (the connection serialises it with the
 * worker's statements: one connection per worker process); a renewal that
 * finds no row proves the job was taken or reset. A lease that no renewal
 * has proved for a whole lease may already be someone else's (the renewal
 * hangs on a cut network, the database is down): that is read off the
 * clock whenever asked, so it needs no thread that could hang too. All
 * timers use CLOCK_MONOTONIC: a wall clock stepping back or forth changes
 * nothing here; lease times themselves are the database's clock. */
#ifndef DJC_LEASE_H
#define DJC_LEASE_H
#include <pthread.h>
#include <stdint.h>
#include "jobs/jobs.h"

typedef enum lease_state {
	LEASE_HELD = 0,     /* proved within the last lease (or nothing held) */
	LEASE_LOST,         /* a renewal found the reservation gone */
	LEASE_UNPROVEN,     /* no renewal proved it for a whole lease */
	LEASE_CANCELLED     /* a renewal found the job being made cancelled (ignore under our token) */
} lease_state;

typedef struct lease {
	djc_conn *c;
	table *t;
	double lease;           /* jobs.lease_timeout, seconds */
	pthread_t hb;
	int on;
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* on CLOCK_MONOTONIC */
	int quit;
	int64_t token;          /* the claim held now, 0 for none */
	djc_job *const *jobs;   /* its jobs (the worker's: valid until the next lease_hold) */
	long njobs;             /* how many jobs the claim took */
	djc_row *making;        /* the key of the job being made (a copy), or NULL */
	unsigned gen;           /* counts changes of `making` */
	int lost;               /* a renewal of token found no row */
	int job_lost;           /* the job being made was not found held */
	int cancelled;          /* ... because it was cancelled */
	double proved;          /* when the last renewal that proved token began (or the claim) */
} lease;

/* Start the heartbeat for worker connection c. On failure the message is
 * on c and nothing runs. */
int lease_start(lease *l, djc_conn *c, table *t);
void lease_stop(lease *l);
double lease_seconds(void);
/* The bound on each wait for the server of a worker's connection c, with
 * leases of lease_s seconds (db_set_wait_bound): the window of its
 * retries (lease_window), or the lock bound (db_conn.lock_wait) and 5 s
 * when longer. lease_start sets it on a worker's connection, pool_run on
 * the --processes parent's. */
double lease_wait_bound(const djc_conn *c, double lease_s);
/* (lease_window, the window of a worker's retries: table/table.h) */
/* The worker now holds the claim `token` of the njobs jobs (just
 * claimed: proved now), or nothing (0, NULL, 0). The array stays the
 * worker's and must live until the next lease_hold: the heartbeat copies
 * the keys it renews under the lock. */
void lease_hold(lease *l, int64_t token, djc_job *const *jobs, long njobs);
/* The worker starts making the job `key` of its claim (copied), or has
 * finished it (NULL). While a job is being made, a renewal that finds it
 * gone tells whether it was cancelled (LEASE_CANCELLED) or lost; with a
 * claim of several jobs the heartbeat also holds that job by key, since
 * a renewal by token still matches the others. */
void lease_making(lease *l, const djc_row *key);
lease_state lease_get(lease *l);
/* The worker proved the lease itself (jobs_hold found the job ours). */
void lease_proved(lease *l);
/* Not proved for half a lease: prove it before starting another make
 * under this claim. */
int lease_stale(lease *l);
#endif
