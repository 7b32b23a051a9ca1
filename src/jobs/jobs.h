/* jobs.h - the per-table jobs table (~~name): one function per transition
 * of a job (docs/architecture.md has the state diagram), each running the
 * named statements of statements.c. Functions named jobs_tx_* run inside
 * the caller's transaction; the others run their own (retrying deadlocks
 * and the like with bounded backoff, table.h conn_tx). */
#ifndef DJC_JOBS_H
#define DJC_JOBS_H
#include "table/table.h"
#include "table/make_rows.h"

/* The notification channel (db_notify/db_listen) on which a refresh that
 * made jobs takeable says so, with the payload "schema.Table": waiting
 * `djc worker` processes wake up (src/populate/workloop.c). */
#define JOBS_CHANNEL "djc"

struct djc_job {
	table *t;
	djc_row *key;       /* typed key (the key-source attributes) */
	int64_t token;      /* fencing token of this reservation */
	int made;           /* the claim found the target row already there */
	long attempts;      /* failed attempts before this one (this is attempt attempts + 1) */
	int history;        /* the job has history rows (its commit records its success beside them) */
	int suspect;        /* of a claim of several, a worker died holding it with others: mark it
	                     * with jobs_make_alone before its make, and commit it alone */
};

/* ------------------------------------------------------------ identity */

int64_t jobs_new_token(void);
/* getpid(), read once per process (and again in a forked child). */
long jobs_pid(void);
const char *jobs_host(void);
const char *jobs_user(void);
const char *jobs_version(void);
/* DataJoint's 2047 characters, ending in "...truncated" (caller frees). */
char *jobs_truncate(const char *msg);

/* ----------------------------------------------------------------- ddl */

/* Create t's jobs table and its indexes if missing (once per table per
 * connection). DJC_EINVAL for a table that has no jobs. */
int jobs_ensure(djc_conn *c, table *t);

/* djc adopt --accept-changes (adopt_accept.c): declare the adopted
 * definitions text (file in messages), taking DataJoint's current
 * definitions of the tables adopted from schemas[0..n) that changed
 * (their jobs kept while the jobs table's key is the same, else made
 * anew) and forgetting those DataJoint dropped, all or nothing. *report
 * as djc_declare's, with a line per table changed or forgotten. ways:
 * how the tables are declared (its acc is adopt_accept_declare's own). */
int adopt_accept_declare(char **report, djc_conn *c, const char *const *schemas, size_t n, const char *text,
			 const char *file, const tbl_declare_ways *ways);

/* ------------------------------------------------- claim, lease, release */

/* Reserve up to n jobs in one atomic claim (statements claim.*): the most
 * urgent due pending ones. First, at most once a second, the reserved
 * jobs whose holder's lease lapsed (matching where and max_priority) end
 * their attempts (lapsed.c): back to pending after a backoff, or an error
 * once they killed jobs.max_lost workers; no claim takes a reserved job.
 * *out receives an array of *nout jobs (caller frees each and the array);
 * none is not an error. A job with ->made set already has its target row:
 * close it with jobs_close_made instead of running make. After a claim
 * that found nothing, the next one on the connection first asks whether
 * anything is takeable at all (claim.peek, one plain read) and claims only
 * then: an idle poll costs one statement. */
typedef struct claim_want {
	const char *where;   /* a restriction on key attributes (JSON), or NULL */
	long max_priority;   /* only jobs with priority <= this; -1: any */
	double lease;        /* seconds (jobs.lease_timeout) */
	long n;              /* at most this many jobs */
} claim_want;
int jobs_claim(djc_conn *c, table *t, const claim_want *w, djc_job ***out, size_t *nout);
/* Whether anything matching where and max_priority is takeable now, by a
 * plain read that skips nothing (claim.peek): a due pending job, or a
 * reserved one whose lease lapsed, including rows a claim or commit in
 * flight holds. *any 0 after an empty claim: the queue is empty now. */
int jobs_peek(djc_conn *c, table *t, const char *where, long max_priority, int *any);
/* The heartbeat: extend every lease held under token, the claim of the
 * jobs keys[0..n) (the token is checked, the keys find the rows); *held =
 * how many jobs still hold it (0: the reservation was lost). */
int jobs_renew(djc_conn *c, table *t, int64_t token, const djc_row *const *keys, size_t n, double lease, long *held);
/* Renew one job, fenced; *held 1 if it is still ours, else 0. */
int jobs_hold(djc_conn *c, djc_job *job, double lease, long *held);
/* Hand back to pending every job of keys[0..n) still held under token
 * (early stop). */
int jobs_release(djc_conn *c, table *t, int64_t token, const djc_row *const *keys, size_t n);
/* Before the make of a suspect of a claim of several (job->suspect):
 * renew it, fenced, and mark it as the job whose make runs, so that the
 * lapse of the claim, should its worker die now, is laid on it; *held 1
 * if it is still ours, else 0. */
int jobs_make_alone(djc_conn *c, djc_job *job, double lease, long *held);
/* Which jobs of a claim, keys[0..n) under token, are still held: held[i]
 * 1 or 0 (a plain read; a job cancelled or taken meanwhile is 0). */
int jobs_held(djc_conn *c, table *t, int64_t token, const djc_row *const *keys, size_t n, char *held);
/* Seconds until the last job this connection sent back to pending from a
 * lapsed lease (with a backoff: jobs_claim) is due; 0 or less: none
 * waits. */
double jobs_lapsed_due(djc_conn *c, const table *t);
/* Hand back every job still reserved by the process (host, pid): it died. */
int jobs_release_pid(djc_conn *c, table *t, const char *host, long pid);
/* The jobs still reserved under token, pending and due at once (release.claim):
 * a next claim whose commit's reply was lost (next_claim.token). *n: how many
 * (may be NULL). */
int jobs_release_claim(djc_conn *c, table *t, int64_t token, long *n);
/* Hand back one job whose make was stopped (its lease could not be
 * proved), fenced, recording the attempt ("released", message). DJC_ELOST
 * when it is no longer ours. */
int jobs_release_job(djc_conn *c, djc_job *job, const char *message);
/* Jobs that can be taken now or later (pending or reserved), matching
 * where and max_priority: populate's progress total. */
int jobs_ready_count(djc_conn *c, table *t, const char *where, long max_priority, long *n);
/* Jobs a claim could take now, matching where and max_priority: pending
 * and due, or reserved with a lapsed lease (not other workers' live
 * reservations, not jobs due later). */
int jobs_claimable_count(djc_conn *c, table *t, const char *where, long max_priority, long *n);

/* ------------------------------------------------------------- endings */

/* What became of a fenced commit. */
typedef enum commit_result {
	COMMIT_DONE = 0,   /* the rows and the job's success are committed */
	COMMIT_TAKEN,      /* the target row already existed (made by another route): the
	                    * job was closed as success, nothing of ours written */
	COMMIT_LOST,       /* the reservation was no longer ours: nothing written */
	COMMIT_UNKNOWN,    /* the connection went during COMMIT: ask jobs_commit_outcome */
	COMMIT_FAILED      /* see the return code and the connection's message */
} commit_result;

/* A claim of the next jobs made inside the transaction that commits the
 * finished ones, so that a steady worker pays one commit per job (or per
 * batch): the claimed leases start when that transaction commits. When the
 * commit does not happen (lost, taken, failed) nothing is claimed. */
typedef struct next_claim {
	const char *where;   /* in: as jobs_claim */
	long max_priority;
	double lease;
	long n;              /* in: how many to claim (0: none) */
	djc_job **jobs;      /* out: the claimed jobs (caller frees), or NULL */
	size_t njobs;
	/* out: the claim's token when the commit carried it and ended DONE
	 * or UNKNOWN, else 0. After UNKNOWN the claim took effect exactly when
	 * the commit did, and its jobs were never read back: jobs_release_claim
	 * hands them back. */
	int64_t token;
} next_claim;

/* Free the jobs of a next claim (and forget them: they come back to
 * pending when their leases lapse, or release them first). */
void next_claim_drop(next_claim *next);

/* What a make staged, for its commit (table/make_rows.h): the rows, and
 * the read set checked again in the commit's transaction. */
typedef made_rows commit_rows;
/* Commit make's rows and the job's success in one transaction, fenced by
 * the token (invariant 2). Returns DJC_OK with *res DONE, TAKEN or LOST;
 * or an error code with *res UNKNOWN (the COMMIT itself may have happened)
 * or FAILED (nothing committed; DJC_EBUSY / DJC_ECONN are worth retrying).
 * next (may be NULL): claim the next jobs in the same transaction (DONE
 * only; a failed claim is rolled back and the commit made without it;
 * after UNKNOWN, next->token names the claim, which took effect exactly
 * when the commit did: jobs_release_claim). */
int jobs_commit(djc_conn *c, djc_job *job, const commit_rows *rows, double duration, next_claim *next,
		commit_result *res);
/* After COMMIT_UNKNOWN: did that COMMIT take effect? DJC_OK with *res
 * DONE (committed), LOST (not committed, no longer ours) or FAILED (not
 * committed, still ours: commit again); or an error to ask again later. */
int jobs_commit_outcome(djc_conn *c, djc_job *job, commit_result *res);
/* Commit several finished jobs of one claim (one token) at once: one fenced
 * DELETE of their rows, their rows in multi-row INSERTs, one COMMIT.
 * DONE, or FAILED with nothing committed (callers then commit one by one,
 * which sorts out lost and duplicate jobs), or UNKNOWN. DJC_EINVAL without
 * trying when jobs.keep_completed is on (per-job durations), or when the
 * makes' reads cannot be checked in the batch (no row versions, a read of
 * more than READ_CHECK_ROWS rows); DJC_ECONFLICT when a read's check
 * failed (a row changed, or only rewritten: one by one tells). */
int jobs_commit_many(djc_conn *c, djc_job **jobs, size_t k, const commit_rows *rows, next_claim *next,
		     commit_result *res);
/* The claim found the target row (job->made): close the job as success
 * without make (it counts as skipped). *res DONE or LOST. */
int jobs_close_made(djc_conn *c, djc_job *job, commit_result *res);
/* How an attempt failed (its history row's outcome). */
typedef enum fail_kind {
	FAIL_ERROR = 0,     /* make failed */
	FAIL_TIMEOUT,       /* make ran past its timeout and was stopped */
	FAIL_INTERRUPTED,   /* SIGINT/SIGTERM: the worker is stopping */
	FAIL_DIED           /* the worker process making it died */
} fail_kind;
/* A failed attempt: how, its message (NULL: "make failed") and stack
 * (may be NULL), how long make ran (s). */
typedef struct jobs_failure {
	fail_kind kind;
	const char *message;
	const char *stack;
	double duration;
} jobs_failure;
/* What became of a failed job. */
typedef enum fail_result {
	FAILED_ERROR = 0,   /* an error: no attempt left, or an interruption (retry_interrupted off) */
	FAILED_RETRY,       /* back to pending, due after its backoff (jobs.max_attempts) */
	FAILED_REPENDED     /* an interruption, back to pending at once (jobs.retry_interrupted) */
} fail_result;
/* Record a failed attempt, fenced, with its history row, in one
 * transaction: a failure with attempts left (jobs.max_attempts; the job's
 * attempts as the claim read them) goes back to pending after
 * jobs_backoff; an interruption with jobs.retry_interrupted at once,
 * without using an attempt; anything else becomes an error. *res (may be
 * NULL) says which, *delay (may be NULL) after how many seconds a retry is
 * due. DJC_ELOST when the job is no longer ours (nothing written). */
int jobs_fail(djc_conn *c, djc_job *job, const jobs_failure *f, fail_result *res, double *delay);
/* A worker process that died (of a signal) while making a job, as its
 * parent saw it. */
typedef struct jobs_death {
	const char *host;      /* where it ran */
	long pid;              /* the dead process */
	const char *how;       /* e.g. "signal 9 (SIGKILL)" */
	const char *message;   /* the attempt's message */
	char *error;           /* out: the error message recorded, when it became an error (caller frees) */
} jobs_death;
/* Record that job's attempt ("died", d->message) in one transaction,
 * fenced, as a lapsed lease laid on the job is (lapsed.c): a worker lost
 * on it (lost + 1), no attempt of jobs.max_attempts used; the job becomes
 * an error saying "worker died N times on this job" once N reaches
 * jobs.max_lost, else it is pending again after jobs_backoff(N)
 * (FAILED_RETRY). */
int jobs_died(djc_conn *c, djc_job *job, jobs_death *d, fail_result *res, double *delay);
/* Seconds until the retry after the n-th failure: jobs.retry_delay doubled
 * n - 1 times, at most jobs.retry_delay_max, then a random part of it in
 * [d/2, d) (so a delay is never shorter than the previous one's whole). */
double jobs_backoff(long failures);
/* After a renewal or a commit found the job no longer held: *cancelled = 1
 * when it was cancelled (ignore under this holder's own token; *message,
 * may be NULL, caller frees: who cancelled it), 0 when it was lost. */
int jobs_lost_why(djc_conn *c, djc_job *job, int *cancelled, char **message);
#endif
