/* jobs.h - the per-table jobs table (~~name): its heading and DDL,
 * reservation (claim), heartbeat leases, completion with a fencing token,
 * errors, refresh. See docs/jobs.md for the state machine. */
#ifndef DJC_JOBS_H
#define DJC_JOBS_H
#include "table/table.h"

struct djc_job {
	table *t;
	djc_row *key;       /* typed key (source attributes) */
	int64_t token;      /* fencing token of this reservation */
	int commit_unknown; /* set by jobs_commit: COMMIT was sent, the connection
	                     * went, the outcome is unknown (see jobs_commit_outcome) */
};

/* Create the jobs table of t if missing. */
int jobs_ensure(djc_conn *c, table *t);
/* Reserve up to n jobs at once; *out receives an array of jobs. */
int jobs_claim(djc_conn *c, table *t, const char *where, long max_priority, double lease, long n,
	       djc_job ***out, size_t *nout);
/* Extend the lease of every job reserved under token; *held gets how many
 * jobs still hold it (0 means the reservation was lost). */
int jobs_renew(djc_conn *c, table *t, int64_t token, double lease, long *held);
/* Commit the make's rows (prepared rows for target and parts) and mark the
 * job done, in one transaction, fenced by the token. DJC_ELOST if the
 * reservation is gone; DJC_EDUPLICATE if the target row already existed
 * (made by another populate; the job is then closed as success). */
int jobs_commit(djc_conn *c, djc_job *job, table **tables, djc_row **rows, size_t n, double duration);
/* Insert a make's staged rows (tables[i] gets rows[i]; the target's row
 * first) in the caller's transaction. On failure: a one-line message
 * naming the row, and c->taken set when the target's key had already been
 * committed by someone else (counted as skipped, not as make's error). */
int make_rows_insert(djc_conn *c, const table *target, table **tables, djc_row **rows, size_t n);
/* After jobs_commit failed with job->commit_unknown set: find out (on a
 * fresh connection, the driver reconnects) whether that COMMIT took effect.
 * DJC_OK = committed; DJC_ELOST = not committed and no longer ours; 1 = not
 * committed and still ours (commit again); DJC_ECONN/DJC_EBUSY = ask again. */
int jobs_commit_outcome(djc_conn *c, djc_job *job);
/* Commit several finished jobs of one reservation (one token) at once: one
 * fenced DELETE of their job rows, their rows in multi-row INSERTs, one
 * COMMIT. On any failure nothing was committed (callers then commit the
 * jobs one by one, which sorts out lost and duplicate ones) — except
 * DJC_ECONN with *unknown set, when the COMMIT itself may have happened
 * (jobs_commit_outcome tells per job). DJC_EINVAL without trying when
 * jobs.keep_completed is on. */
int jobs_commit_many(djc_conn *c, djc_job **jobs, size_t k, table **tables, djc_row **rows, size_t n, int *unknown);
/* Record an error (fenced). */
int jobs_fail(djc_conn *c, djc_job *job, const char *message, const char *stack, double duration);
/* Mark every job still reserved by (host, pid) as an error: the
 * supervisor's answer to a worker child killed by a signal. */
int jobs_fail_pid(djc_conn *c, table *t, const char *host, long pid, const char *message);
/* Return jobs still reserved under token to pending (early stop). */
int jobs_release(djc_conn *c, table *t, int64_t token);
/* Renew the lease of one job if it is still reserved under its token
 * (*held 1) — proof that this worker still holds it — else *held 0. */
int jobs_hold(djc_conn *c, djc_job *job, double lease, long *held);
/* Return one job to pending if still reserved under its token. */
int jobs_release_job(djc_conn *c, djc_job *job);
/* Count takeable jobs matching where (progress totals). */
long jobs_ready_count(djc_conn *c, table *t, const char *where, long max_priority);
/* Truncate to DataJoint's 2047 characters, ending in "...truncated". */
char *jobs_truncate(const char *msg);
int64_t jobs_new_token(void);
const char *jobs_host(void);
const char *jobs_user(void);
const char *jobs_version(void);
#endif
