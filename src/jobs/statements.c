/* statements.c - every statement djc runs on a jobs table, written once,
 * whole, named, each with the reason it is safe. The invariants cited are
 * DESIGN.md section 3: (1) one reservation at a time, (2) one commit per
 * key, fenced by the token, (3) no lost work: a dead worker's job comes
 * back after its lease, a live one renews, (4) no long transactions,
 * (5) work scales with the work, not the queue. Templates are expanded per
 * connection and table by jsql_expand() (sql.h lists the fragments). */
#include "sql.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ columns */

/* The jobs table's columns after the target's key-source attributes:
 * DataJoint's, then djc's lease and attempt columns (docs/jobs.md). A jobs
 * table made before a column existed gets it when first opened (ddl.c,
 * jobs_ensure): such columns have a default. */
const jcol JOB_COLS[] = {
	{"status", T_VARCHAR, 10, 1, NULL},
	{"priority", T_INT32, 0, 1, NULL},
	{"created_time", T_DATETIME, 3, 1, NULL},
	{"scheduled_time", T_DATETIME, 3, 1, NULL},
	{"reserved_time", T_DATETIME, 3, 0, NULL},
	{"completed_time", T_DATETIME, 3, 0, NULL},
	{"duration", T_FLOAT64, 0, 0, NULL},
	{"error_message", T_VARCHAR, 2047, 0, NULL},
	{"error_stack", T_TEXT, 0, 0, NULL},
	{"user", T_VARCHAR, 255, 0, NULL},
	{"host", T_VARCHAR, 255, 0, NULL},
	{"pid", T_INT64, 0, 0, NULL},
	{"connection_id", T_INT64, 0, 0, NULL},
	{"version", T_VARCHAR, 255, 0, NULL},
	{"token", T_INT64, 0, 0, NULL},
	{"queue", T_INT8, 0, 1, NULL},
	{"avail_time", T_DATETIME, 3, 0, NULL},
	{"reservations", T_INT32, 0, 1, NULL},
	{"last_end", T_VARCHAR, 255, 0, NULL},
	{"attempts", T_INT32, 0, 1, "0"},   /* failed attempts, counted against jobs.max_attempts */
	{"history", T_INT32, 0, 1, "0"},    /* history rows written for this job (the last HISTORY_KEEP are kept) */
	{"lost", T_INT32, 0, 1, "0"},       /* worker deaths laid on this job, counted against jobs.max_lost */
	/* whom a lapse of the current reservation is laid on: BLAME_ALONE set
	 * when its holder makes this job alone under it (a claim of one job,
	 * or a suspect marked before its make); BLAME_SUSPECT set when a
	 * worker died holding it with other jobs of one claim, none known to
	 * be the one it made (statements lapsed.*, make.alone) */
	{"blame", T_INT8, 0, 1, "0"},
};
const size_t NJOB_COLS = sizeof JOB_COLS / sizeof *JOB_COLS;

const jcol *jcol_named(const char *name)
{
	for (size_t i = 0; i < NJOB_COLS; i++)
		if (!strcmp(JOB_COLS[i].name, name)) return &JOB_COLS[i];
	abort();   /* only ever asked for a column of the list above */
}

/* The history table beside each jobs table ({H}, `~~name__history`): one
 * row per attempt that did not end in success (and, with
 * jobs.keep_completed, the success too), after the key-source attributes;
 * its primary key is (key, attempt). attempt is the job's reservation
 * number (`reservations` when it was claimed). */
const jcol HIST_COLS[] = {
	{"attempt", T_INT32, 0, 1, NULL},
	/* error, timeout, interrupted, died, cancelled, released, lease expired, orphaned, success */
	{"outcome", T_VARCHAR, 32, 1, NULL},
	{"host", T_VARCHAR, 255, 0, NULL},
	{"pid", T_INT64, 0, 0, NULL},
	{"user", T_VARCHAR, 255, 0, NULL},
	{"start_time", T_DATETIME, 3, 0, NULL},
	{"end_time", T_DATETIME, 3, 1, NULL},
	{"duration", T_FLOAT64, 0, 0, NULL},
	{"backoff", T_FLOAT64, 0, 0, NULL},   /* seconds until the retry was due; NULL: not retried */
	{"message", T_VARCHAR, 2047, 0, NULL},
	{"stack", T_TEXT, 0, 0, NULL},
	{"token", T_INT64, 0, 0, NULL},
};
const size_t NHIST_COLS = sizeof HIST_COLS / sizeof *HIST_COLS;

/* ---------------------------------------------------------- state encodings
 *
 * How each status is stored; these macros are the only place the values
 * are written, so a statement that moves a job to a status cannot forget a
 * column of it.
 *   pending    queue = 1, token NULL, avail_time = when it is due
 *   reserved   queue = 1, token = the holder's, avail_time = lease expiry
 *              (only the claim makes a job reserved: JS_CLAIM_SET)
 *   success, error, ignore
 *              queue = 0, avail_time NULL; the token stays (who closed it)
 * `queue = 1 AND avail_time <= now` is therefore exactly "can be taken now":
 * pending and due, or reserved with a lapsed lease.
 *   marked     queue = MARK_RESERVED, MARK_PENDING or MARK_STALE (or 2,
 *              refresh.repend.mark):
 *              a value that exists only inside one transaction, which marks
 *              (and so locks) the rows it is about to end before it records
 *              their history, then moves every marked row to its new status.
 *              Never committed; never takeable (queue is not 1). */
#define SET_PENDING(due) "{status} = 'pending', {queue} = 1, {token} = NULL, {avail_time} = " due
#define PENDING_COLS "{status}, {queue}, {avail_time}"
#define PENDING_VALS(due) "'pending', 1, " due
#define SET_CLOSED(st) "{status} = " st ", {queue} = 0, {avail_time} = NULL"
#define CLOSED_COLS "{status}, {queue}, {avail_time}"
#define CLOSED_VALS(st) st ", 0, NULL"
#define MARK_RESERVED "3"
/* blame: bit 0 (BLAME_ALONE) and bit 1 (BLAME_SUSPECT), see JOB_COLS; a
 * claim sets bit 0 for a claim of one job and clears it for a claim of
 * several, and keeps bit 1 (so what the claim reads of it is the same
 * before and after the claim's update) */
#define BLAME_SUSPECT "2"
#define BLAME_KEEP_SUSPECT "CASE WHEN {blame} >= " BLAME_SUSPECT " THEN " BLAME_SUSPECT " ELSE 0 END"
#define MARK_PENDING "4"
#define MARK_STALE "5"

/* The history columns an attempt's row is written with (history.*). */
#define HIST_INTO "{insert_ignore} {H} ({keys}, {attempt}, {outcome}, {host}, {pid}, {user}, {start_time}, {end_time}"

/* The fence: this key, still reserved under the token its holder got from
 * the claim. Every statement a holder runs on its job carries it, so once
 * the job was reset or taken (a new token) the holder's statements match
 * nothing (invariant 2). */
#define FENCE "{key} AND {token} = ? AND {status} = 'reserved'"

/* -------------------------------------------------------------------- claim */

/* claim.due - the condition of a claim: the most urgent pending job that
 * can be taken now (see the encodings above). The driver claims
 * atomically (SKIP LOCKED on the servers; on SQLite a read and an update
 * under its single writer's lock), so two workers never hold the same key
 * (invariant 1: no check-then-update outside such a lock). The index
 * (queue, priority, avail_time) serves this condition and JS_CLAIM_ORDER
 * whatever the depth of the queue (invariant 5); of the reserved rows it
 * meets, only lapsed ones pass avail_time, and those are lapsed.*'s: no
 * claim takes a reserved job.
 * The restriction limits what is reserved, not only what refresh adds
 * (DataJoint issue 1413). */
const jsql JS_CLAIM_DUE = {"claim.due",
	"{queue} = 1 AND {avail_time} <= {now} AND {status} = 'pending'{prio}{where}"};

/* claim.peek - is anything takeable at all: a pending job that is due, or
 * a reserved one whose lease lapsed (both have queue = 1 and avail_time
 * <= now: claim.due takes the first, lapsed.* end the others)? A
 * plain read, no lock and no transaction. A connection whose last claim of
 * the table found nothing asks it first (claim.c), so an idle worker's
 * poll costs the server this one statement; the claim and the look for
 * lapsed leases follow only when it finds a row. It can only say "maybe"
 * too often (a row another claim has locked), never miss what a claim
 * would take. It reads the `next` index in the claim's order, so it reads
 * the head of the queue, never the table: with a plain LIMIT 1, PostgreSQL
 * planned a sequential scan whenever its counts said most rows were
 * takeable (just after a refresh), and then read every row of a table
 * whose jobs had all ended since (deleted, or in error). */
const jsql JS_CLAIM_PEEK = {"claim.peek",
	"SELECT 1 FROM {J}{by:next} WHERE {queue} = 1 AND {avail_time} <= {now}{prio}{where} ORDER BY {priority}, {avail_time} LIMIT 1"};

/* claim.set - what a claim writes: a fresh random token (the fence of
 * every later statement of this holder), the lease (avail_time = now +
 * lease), who holds it, and the count of reservations; then claim.alone
 * or claim.many (claim.c appends the one that fits the claim's size).
 * Arguments: token, lease, host, pid, user, connection id, version. */
const jsql JS_CLAIM_SET = {"claim.set",
	"{reservations} = {reservations} + 1, {status} = 'reserved', {token} = ?, {reserved_time} = {now}, "
	"{avail_time} = {now+?}, {host} = ?, {pid} = ?, {user} = ?, {connection_id} = ?, {version} = ?"};

/* claim.alone, claim.many - whom a lapse of this reservation will be laid
 * on (blame): a claim of one job makes it at once, alone, so its lapse is
 * that job's (BLAME_ALONE); a claim of several holds jobs it has not
 * started, so none is blamed until a suspect is marked (make.alone). Both
 * keep BLAME_SUSPECT. */
const jsql JS_CLAIM_ALONE = {"claim.alone", "{blame} = " BLAME_KEEP_SUSPECT " + 1"};
const jsql JS_CLAIM_MANY = {"claim.many", "{blame} = " BLAME_KEEP_SUSPECT};

/* claim.order - most urgent first: lowest priority, then earliest due.
 * (claim.c gives the drivers these columns' types, in this order.) */
const jsql JS_CLAIM_ORDER = {"claim.order", "{priority}, {avail_time}"};

/* claim.keys, claim.made, claim.info - what a claim returns: the claimed
 * keys, and about each job one integer, claim.made + claim.info (the driver
 * returns one extra expression):
 * bit 0, the target row already exists (made directly, or by another
 * route): such a job is closed at once instead of running make for
 * nothing, as DataJoint checks before make; bit 1, the job has history
 * rows (its commit deletes them; a job that never failed costs no
 * statement for it); bit 2, it is a suspect (BLAME_SUSPECT: a worker died
 * holding it with other jobs of one claim; a claim of several marks it
 * before its make, make.alone); the bits above, its failed attempts
 * (DJC_ATTEMPT is one more; jobs.max_attempts decides a failure). Read by
 * the claim
 * itself, so it costs no round trip. The claim changes neither count, so
 * it does not matter whether the driver reads them before the update
 * (MariaDB) or after (RETURNING). Bit 0 (claim.made) is a scalar subquery
 * by the target's primary key, not EXISTS: PostgreSQL may run an EXISTS as
 * a hashed subplan, which reads the whole target table per claim when it
 * misjudges the table (no statistics yet). It takes one row (LIMIT 1): a
 * target with key attributes of its own holds several rows per job, and a
 * scalar subquery that found two failed the claim. A driver that holds the
 * claimed key in variables (MariaDB's compound statement) looks the key up
 * in the target by value instead (db_claim.made_in): there a correlated
 * subquery costs a temporary table per claim (MariaDB's subquery cache),
 * about 8% of the server's time per job. */
const jsql JS_CLAIM_KEYS = {"claim.keys", "{keys}"};
const jsql JS_CLAIM_MADE = {"claim.made", "coalesce((SELECT 1 FROM {T} tg WHERE {join:tg:J} LIMIT 1), 0)"};
const jsql JS_CLAIM_INFO = {"claim.info",
	"CASE WHEN {history} > 0 THEN 2 ELSE 0 END + CASE WHEN {blame} >= " BLAME_SUSPECT " THEN 4 ELSE 0 END + 8 * {attempts}"};

/* lapsed.list - reserved jobs whose holder's lease lapsed (it died, hung
 * or was cut off), and who held them. Every claiming worker looks, at
 * most every min(1 s, lease/4) per connection (claim.c), before its claim:
 * the others are found within a lease and a second even behind a deep
 * queue (invariant 3), and no claim takes a reserved job. What it finds,
 * lapsed.retry or lapsed.fail ends, one job at a time, and history.lapsed
 * records (its worker, gone, never could). A read that finds nothing
 * (nearly always) costs that one statement. It reads the reserved rows'
 * index (SQLite's planner, without statistics, took `next` for its order
 * and read the whole queue). */
const jsql JS_LAPSED_LIST = {"lapsed.list",
	"SELECT {keys}, {reservations}, {host}, {pid}, {user}, {reserved_time}, {avail_time}, {token}, {lost}, {blame} "
	"FROM {J}{by:lease} WHERE {queue} = 1 AND {avail_time} <= {now} AND {status} = 'reserved'{prio}{where} "
	"ORDER BY {priority}, {avail_time} LIMIT 1000"};

/* The fence of a lapsed reservation: the holder's token, still reserved,
 * the lease still lapsed (a holder that renewed meanwhile keeps it). Two
 * workers that find the same lapse: the row lock orders them, and the
 * second matches nothing. */
#define LAPSED_FENCE FENCE " AND {avail_time} <= {now}"

/* lapsed.retry - a lapsed job goes back to pending, due after the backoff
 * of a retry (jobs_backoff of its lost count) when the lapse was laid on
 * it (BLAME_ALONE: its worker died making it), at once when not (a claim
 * of several whose unstarted jobs lapsed with the one it made); either way
 * behind the pending work due before it, never ahead of it, and a
 * suspect (BLAME_SUSPECT), which a claim of several marks before its
 * make. Arguments: lost increment (1 when laid on it, else 0), delay,
 * delay, message, token. */
const jsql JS_LAPSED_RETRY = {"lapsed.retry",
	"UPDATE {J} SET {lost} = {lost} + ?, {history} = {history} + 1, " SET_PENDING("{now+?}") ", "
	"{scheduled_time} = {now+?}, {blame} = " BLAME_SUSPECT ", {completed_time} = {now}, {error_message} = ?, "
	"{last_end} = 'lease expired' WHERE " LAPSED_FENCE};

/* lapsed.fail - a lapsed job that has now killed jobs.max_lost workers
 * (the lapse was laid on it, and its lost count reaches the limit)
 * becomes an error saying so, and is not taken again (clear it to retry).
 * Arguments: message, token. */
const jsql JS_LAPSED_FAIL = {"lapsed.fail",
	"UPDATE {J} SET {lost} = {lost} + 1, {history} = {history} + 1, " SET_CLOSED("'error'") ", {completed_time} = {now}, "
	"{error_message} = ?, {error_stack} = NULL, {last_end} = 'lease expired' WHERE " LAPSED_FENCE};

/* -------------------------------------------------------------- leases */

/* renew - the heartbeat: extend every lease still held under the token,
 * found by the keys of the claim (the primary key: the jobs table has no
 * index on token, which every claim would write; a token only ever holds
 * the keys its claim took). No row matched proves the reservation was
 * taken or reset: the worker stops the make (its commit would be refused
 * anyway). One UPDATE per running claim every lease/4 (invariant 3). */
const jsql JS_RENEW = {"renew",
	"UPDATE {J} SET {avail_time} = {now+?} WHERE {token} = ? AND {status} = 'reserved' AND {keyin}"};

/* hold - renew one job of a claim, fenced: the proof, before starting the
 * next make of a batch, that this worker still holds it. */
const jsql JS_HOLD = {"hold",
	"UPDATE {J} SET {avail_time} = {now+?} WHERE " FENCE};

/* make.alone - a suspect of a claim of several (BLAME_SUSPECT), renewed
 * and marked BLAME_ALONE before its make starts, fenced: should its worker
 * die now, the lapse is laid on it alone (its make is the one running; the
 * worker commits it by itself, not with others, so no finished job of the
 * claim waits blamed). One write, only for suspects. Argument: lease,
 * token. */
const jsql JS_MAKE_ALONE = {"make.alone",
	"UPDATE {J} SET {blame} = " BLAME_SUSPECT " + 1, {avail_time} = {now+?} WHERE " FENCE};

/* held.count, held - how many, and which, of the jobs of a claim (the
 * keys) are still held under its token: plain reads by primary key, before
 * the next make of a claim of several (at most every few milliseconds:
 * reserved.c), so that a job cancelled meanwhile (ignore) is not started.
 * The count comes first and nearly always says all: the keys are read back
 * only when it does not. Argument: token. */
const jsql JS_HELD_COUNT = {"held.count",
	"SELECT count(*) FROM {J} WHERE {token} = ? AND {status} = 'reserved' AND {keyin}"};
const jsql JS_HELD = {"held",
	"SELECT {keys} FROM {J} WHERE {token} = ? AND {status} = 'reserved' AND {keyin}"};

/* release - an early stop hands the unstarted jobs of a claim back,
 * pending and due at once; only those still held under its token, found
 * by the claim's keys (as renew). */
const jsql JS_RELEASE = {"release",
	"UPDATE {J} SET " SET_PENDING("{now}") ", {last_end} = 'released' WHERE {token} = ? AND {status} = 'reserved' AND {keyin}"};

/* release.pid - a worker process died: the jobs it still holds and never
 * started (the rest of its claim) go back to pending at once, without
 * waiting for their leases to lapse. Host and pid name one process; the
 * job whose make was running, if one was, has been recorded first (fail);
 * otherwise all it holds goes back. Arguments: host, pid. */
const jsql JS_RELEASE_PID = {"release.pid",
	"UPDATE {J} SET " SET_PENDING("{now}") ", {last_end} = 'released: worker died' "
	"WHERE {status} = 'reserved' AND {host} = ? AND {pid} = ?"};

/* release.claim - the jobs of a next claim that went with a commit whose
 * reply was lost (the connection went during its COMMIT, and the commit
 * was found done): reserved under a token only that reply would have
 * handed the worker, none of them started. Back to pending at once, as
 * release does, rather than left reserved by nobody until their leases
 * lapse, each lapse then laid on a job that never ran (a worker lost on
 * it). Found by the token alone (the claim's keys never reached the
 * worker) among the reserved rows (the lease index: status = 'reserved');
 * a token no worker holds, so nothing held is touched; a claim that did
 * not happen matches no row. Argument: token. */
const jsql JS_RELEASE_CLAIM = {"release.claim",
	"UPDATE {J} SET " SET_PENDING("{now}") ", {last_end} = 'released' WHERE {status} = 'reserved' AND {token} = ?"};

/* release.one - one job handed back (its make was stopped because the
 * lease could not be proved), fenced; history.add recorded the stopped
 * attempt first. */
const jsql JS_RELEASE_ONE = {"release.one",
	"UPDATE {J} SET {history} = {history} + 1, " SET_PENDING("{now}") ", {last_end} = 'released' WHERE " FENCE};

/* ------------------------------------------------------------- endings */

/* close.delete - the first statement of a commit (jobs.keep_completed
 * off): the job row goes, fenced. It runs in the transaction that inserts
 * make's rows and rolls back unless exactly one row matched, so a worker
 * that lost its reservation commits nothing (invariant 2); on the servers
 * it also locks the row until COMMIT, so no claim slips in between. */
const jsql JS_CLOSE_DELETE = {"close.delete",
	"DELETE FROM {J} WHERE " FENCE};

/* close.success - the same with jobs.keep_completed: the row stays as a
 * success record (and history.add recorded the attempt: history is 1).
 * Arguments: history rows added, duration. */
const jsql JS_CLOSE_SUCCESS = {"close.success",
	"UPDATE {J} SET {history} = {history} + ?, " SET_CLOSED("'success'") ", {completed_time} = {now}, {duration} = ?, "
	"{error_message} = NULL, {error_stack} = NULL, {last_end} = 'success' WHERE " FENCE};

/* close.many - a grouped commit (jobs.reserve_batch > 1): the rows of
 * several finished jobs of one claim go in one fenced DELETE; the caller
 * rolls back unless every one matched, then commits them one by one. */
const jsql JS_CLOSE_MANY = {"close.many",
	"DELETE FROM {J} WHERE {token} = ? AND {status} = 'reserved' AND {keyin}"};

/* fail - make failed with no attempt left (jobs.max_attempts), or was
 * interrupted without jobs.retry_interrupted: the job becomes an error with
 * its message and stack, fenced like a commit (a holder that lost the job
 * records nothing); history.add recorded the attempt first, in the same
 * transaction. A worker process that died making it (a --processes
 * child) the jobs.max_lost-th time: a lost one, no attempt used (as
 * lapsed.fail). Arguments: attempts increment, lost increment, duration,
 * message, stack. */
const jsql JS_FAIL = {"fail",
	"UPDATE {J} SET {attempts} = {attempts} + ?, {lost} = {lost} + ?, {history} = {history} + 1, " SET_CLOSED("'error'") ", "
	"{completed_time} = {now}, {duration} = ?, "
	"{error_message} = ?, {error_stack} = ?, {last_end} = 'error' WHERE " FENCE};

/* retry - make failed (error, timeout) with attempts left: the job goes
 * back to pending by itself, due after its backoff (scheduled_time =
 * avail_time = now + delay), and any worker's claim takes it again, no
 * refresh needed (invariant 3's "by itself"). An interruption with
 * jobs.retry_interrupted comes back the same way at once and does not use
 * up an attempt (increment 0); so does a --processes child that died
 * making it (fewer than jobs.max_lost times), after the backoff of its
 * lost count, as a lapsed lease laid on it does (lapsed.retry). A make
 * that ended by itself did not kill its worker: the job is no suspect any
 * more (blame 0); one whose worker died is a lost one and a suspect
 * (BLAME_SUSPECT, as lapsed.retry: a claim of several marks it before its
 * make). Fenced; history.add recorded the attempt first. Arguments:
 * attempts increment, lost increment, suspect (1 or 0), delay, delay,
 * duration, message, stack, last_end ('retry', 'interrupted' or 'worker
 * died'). */
const jsql JS_RETRY = {"retry",
	"UPDATE {J} SET {attempts} = {attempts} + ?, {lost} = {lost} + ?, {blame} = " BLAME_SUSPECT " * ?, {history} = {history} + 1, "
	SET_PENDING("{now+?}") ", "
	"{scheduled_time} = {now+?}, {completed_time} = {now}, {duration} = ?, {error_message} = ?, {error_stack} = ?, "
	"{last_end} = ? WHERE " FENCE};

/* ------------------------------------------------------------- history */

/* history.add - the end of one attempt, written beside the jobs table in
 * the transaction of the transition that ends it (fail, retry,
 * release.one, close.success) and fenced like it: a holder that lost the
 * job writes nothing, and the caller rolls the row back unless the
 * transition matched too. attempt is the job's reservation number, start
 * its reserved_time; who held it comes from the job row. Arguments:
 * outcome, duration, backoff (-1: not retried), message, stack. */
const jsql JS_HISTORY_ADD = {"history.add",
	HIST_INTO ", {duration}, {backoff}, {message}, {stack}, {token}) "
	"SELECT {keys}, {reservations}, ?, {host}, {pid}, {user}, {reserved_time}, {now}, ?, NULLIF(?, -1), ?, ?, {token} "
	"FROM {J} WHERE " FENCE "{insert_ignore_tail}"};

/* history.marked - the marked reserved jobs (MARK_RESERVED: cancelled,
 * orphaned, their worker died), recorded before the statement that ends
 * them, in its transaction. Arguments: outcome, message. */
const jsql JS_HISTORY_MARKED = {"history.marked",
	HIST_INTO ", {message}, {token}) "
	"SELECT {keys}, {reservations}, ?, {host}, {pid}, {user}, {reserved_time}, {now}, ?, {token} "
	"FROM {J} WHERE {queue} = " MARK_RESERVED "{insert_ignore_tail}"};

/* history.lapsed - an attempt whose worker vanished (its lease lapsed),
 * recorded by the worker that found it (lapsed.list told who held it)
 * just after lapsed.retry or lapsed.fail, when that matched. Arguments:
 * attempt, host, pid, user, start, backoff (-1: none), message, token. */
const jsql JS_HISTORY_LAPSED = {"history.lapsed",
	HIST_INTO ", {backoff}, {message}, {token}) VALUES ({keyvals}, ?, 'lease expired', ?, ?, ?, ?, {now}, NULLIF(?, -1), ?, ?)"
	"{insert_ignore_tail}"};

/* lost.count - how many workers died on the job: read by the transaction
 * that records a --processes child's death, before it decides between an
 * error and a retry (jobs.max_lost). Argument: token. */
const jsql JS_LOST_COUNT = {"lost.count",
	"SELECT {lost} FROM {J} WHERE " FENCE};

/* history.trim - at most the last few attempts per job (the argument):
 * the older rows of the key go. Run with every history.add (only ever on
 * a job that did not succeed). Arguments: how many to keep. */
const jsql JS_HISTORY_TRIM = {"history.trim",
	"DELETE FROM {H} WHERE {key} AND {attempt} <= (SELECT {reservations} FROM {J} WHERE {key}) - ?"};

/* history.sweep - history rows whose job row is gone and whose target row
 * is missing too: the history of the jobs that clear and stale removal
 * delete, run after them in their transaction; and at the start of every
 * refresh, for jobs deleted by a cascading delete of upstream rows
 * (src/table/rows.c), before their keys are added again (a key is added
 * only while its target row is missing, so a new job never meets an old
 * job's attempts). One set-based statement over the history table, not
 * the queue. The history of a job whose target row is there (completed,
 * its row deleted at commit without jobs.keep_completed, or cleared)
 * stays: history.expire's. */
const jsql JS_HISTORY_SWEEP = {"history.sweep",
	"DELETE FROM {H} WHERE NOT EXISTS (SELECT 1 FROM {J} jj WHERE {join:jj:H}) "
	"AND NOT EXISTS (SELECT 1 FROM {T} tg WHERE {join:tg:H})"};

/* history.expire - the kept history of a completed job (no job row) goes
 * once its newest attempt ended jobs.history_retention ago, all of the
 * key's rows together; at the start of every refresh. The newest attempts
 * are read through a derived table (DISTINCT: materialized): MySQL
 * refuses a DELETE whose subquery reads the table it deletes from.
 * Argument: -retention. */
const jsql JS_HISTORY_EXPIRE = {"history.expire",
	"DELETE FROM {H} WHERE NOT EXISTS (SELECT 1 FROM {J} jj WHERE {join:jj:H}) "
	"AND NOT EXISTS (SELECT 1 FROM (SELECT DISTINCT {keys} FROM {H} WHERE {end_time} >= {now+?}) hr WHERE {join:hr:H})"};

/* history.list - one job's attempts, oldest first. */
const jsql JS_HISTORY_LIST = {"history.list",
	"SELECT {keys}, {hcols} FROM {H} WHERE {key} ORDER BY {attempt}"};

/* outcome.job, outcome.target - after the connection went during COMMIT,
 * whether that COMMIT took effect: the job row with our token still
 * reserved (not committed), as success (committed, keep_completed), gone
 * with the target row present (committed), or another token (lost). */
const jsql JS_OUTCOME_JOB = {"outcome.job",
	"SELECT {status}, {token} FROM {J} WHERE {key}"};
const jsql JS_OUTCOME_TARGET = {"outcome.target",
	"SELECT count(*) FROM {T} WHERE {key}"};
/* outcome.ended - when the job row is gone and the target row is there:
 * whether someone else ended our attempt (history rows carry the token
 * of the attempt they record: a lapse found by another worker, an
 * orphan reset, a cancel), so that the target row is another worker's.
 * Argument: token. */
const jsql JS_OUTCOME_ENDED = {"outcome.ended",
	"SELECT count(*) FROM {H} WHERE {key} AND {token} = ? AND {outcome} <> 'success'"};

/* --------------------------------------------------------------- admin */

/* ready.count - jobs that can be taken, for populate's progress total. */
const jsql JS_READY_COUNT = {"ready.count",
	"SELECT count(*) FROM {J} WHERE {queue} = 1{prio}{where}"};

/* ready.now - jobs a claim could take now (pending and due, or reserved
 * with a lapsed lease): populate's progress total, which leaves out the
 * live reservations of other workers and the jobs not due yet. */
const jsql JS_READY_NOW = {"ready.now",
	"SELECT count(*) FROM {J} WHERE {queue} = 1 AND {avail_time} <= {now}{prio}{where}"};

/* not.due - the pending jobs not due yet, when the first is due, and the
 * database's now: why a populate found nothing to take (djc_jobs_waiting). */
const jsql JS_NOT_DUE = {"not.due",
	"SELECT count(*), min({avail_time}), {now} FROM {J} WHERE {status} = 'pending' AND {avail_time} > {now}{prio}{where}"};

/* cancel.mark, cancel - `jobs cancel` (and `jobs ignore` of pending and
 * reserved jobs): in one transaction the pending and reserved jobs of the
 * restriction are marked (MARK_RESERVED, MARK_PENDING: locked, so no claim
 * or commit slips in between), history.marked records the reserved ones,
 * and all become ignore, never reserved again, with a message naming who
 * cancelled them. A reserved job keeps its holder's token (as every closed
 * status does): the holder's next renewal matches nothing, so its make is
 * stopped within one heartbeat, its commit is refused by the fence
 * (nothing of it is written), and it reads the job as ignore under its own
 * token: cancelled, not lost. Arguments of cancel: message, last_end. */
const jsql JS_CANCEL_MARK = {"cancel.mark",
	"{update} SET {queue} = CASE WHEN {status} = 'reserved' THEN " MARK_RESERVED " ELSE " MARK_PENDING " END "
	"WHERE {status} IN ('pending', 'reserved'){where}"};
const jsql JS_CANCEL = {"cancel",
	"UPDATE {J} SET {history} = {history} + CASE WHEN {queue} = " MARK_RESERVED " THEN 1 ELSE 0 END, "
	SET_CLOSED("'ignore'") ", {completed_time} = {now}, {error_message} = ?, {last_end} = ? "
	"WHERE {queue} IN (" MARK_RESERVED ", " MARK_PENDING ")"};

/* ignore.update, ignore.add, ignore.insert - `jobs ignore`: the keys are
 * never reserved again. ignore.update turns the restriction's error and
 * success jobs to ignore (and counts those already ignored), then cancel
 * does the pending and reserved ones;
 * ignore.add adds the keys of (key_source & where) - target that have no
 * job yet, as ignore; ignore.insert adds one key that has no job (DataJoint
 * ignores any key). One transaction. Arguments of ignore.add: priority,
 * user, host; of ignore.insert: priority, user, host. */
const jsql JS_IGNORE_UPDATE = {"ignore.update",
	"{update} SET " SET_CLOSED("'ignore'") " WHERE {status} IN ('error', 'success', 'ignore'){where}"};
const jsql JS_IGNORE_ADD = {"ignore.add",
	"{insert_ignore} {J} ({keys}, " CLOSED_COLS ", {priority}, {created_time}, {scheduled_time}, {reservations}, {user}, {host}) "
	"SELECT {keys:ks}, " CLOSED_VALS("'ignore'") ", ?, {now}, {now}, 0, ?, ? FROM ({keysource}) ks WHERE 1=1{where:ks} "
	"AND NOT EXISTS (SELECT 1 FROM {T} tg WHERE {join:tg:ks}) "
	"AND NOT EXISTS (SELECT 1 FROM {J} jj WHERE {join:jj:ks}){insert_ignore_tail}"};
const jsql JS_IGNORE_INSERT = {"ignore.insert",
	"INSERT INTO {J} ({keys}, " CLOSED_COLS ", {priority}, {created_time}, {scheduled_time}, {reservations}, "
	"{user}, {host}) VALUES ({keyvals}, " CLOSED_VALS("'ignore'") ", ?, {now}, {now}, 0, ?, ?)"};

/* ignore.adopted - `djc adopt` (docs/adopt.md): the keys that DataJoint
 * 2.x's own jobs table of an adopted table marks ignore ({N}, `~~name` in
 * the DataJoint schema, dj) become ignore jobs, as ignore.insert makes
 * them, the message saying where they came from. Only keys without a job:
 * a job djc has (an error, an ignore, a pending or a running one) stays as
 * it is ({insert_ignore}: the primary key decides, so no comparison
 * between the two tables' columns, whose collations may differ). Runs in
 * the adopt's change, whole or not at all. Arguments: error_message,
 * priority, user, host. */
const jsql JS_IGNORE_ADOPTED = {"ignore.adopted",
	"{insert_ignore} {J} ({keys}, " CLOSED_COLS ", {error_message}, {priority}, {created_time}, {scheduled_time}, "
	"{reservations}, {user}, {host}) SELECT {keys:dj}, " CLOSED_VALS("'ignore'") ", ?, ?, {now}, {now}, 0, ?, ? "
	"FROM {N} dj WHERE dj.status = 'ignore'{insert_ignore_tail}"};

/* clear - delete the jobs of one status, or of any, in the restriction
 * (errors to retry: the next refresh adds their keys again; ignore to
 * un-ignore). A reserved job's holder then finds nothing to commit to
 * (fenced). history.sweep follows in the transaction. */
const jsql JS_CLEAR = {"clear",
	"{delete} WHERE 1=1{ifstatus}{where}"};

/* set.priority, set.delay - `jobs set`: re-prioritise or reschedule
 * pending jobs of the restriction (due now + delay). Only pending ones: a
 * reserved job's lease is its holder's. Arguments: priority; delay, delay. */
const jsql JS_SET_PRIORITY = {"set.priority",
	"{update} SET {priority} = ? WHERE {status} = 'pending'{where}"};
const jsql JS_SET_DELAY = {"set.delay",
	"{update} SET " SET_PENDING("{now+?}") ", {scheduled_time} = {now+?} WHERE {status} = 'pending'{where}"};

/* lost.why - a holder's renewal or commit found its job gone: the job row
 * as it is now. `ignore` under the holder's own token means it was
 * cancelled (cancel, ignore); anything else, that it was lost. */
const jsql JS_LOST_WHY = {"lost.why",
	"SELECT {status}, {token}, {error_message} FROM {J} WHERE {key}"};

/* counts, list - reading the jobs table; a list in a fixed order (the key
 * last), so that jobs due at the same millisecond list the same way on
 * every backend and every time. */
const jsql JS_COUNTS = {"counts",
	"SELECT {status}, count(*) FROM {J} WHERE 1=1{where} GROUP BY {status}"};
const jsql JS_LIST = {"list",
	"SELECT {keys}, {cols} FROM {J} WHERE 1=1{where} ORDER BY {priority}, {scheduled_time}, {keys}"};
const jsql JS_LIST_STATUS = {"list.status",
	"SELECT {keys}, {cols} FROM {J} WHERE {status} = ?{where} ORDER BY {priority}, {scheduled_time}, {keys}"};

/* ------------------------------------------------------------- refresh
 * Four steps in one short transaction, each one set-based statement whose
 * cost follows the rows it changes (invariant 5). */

/* refresh.add - new keys: (key_source & where) - target - jobs, pending,
 * due after the delay. INSERT-or-skip, so refreshes racing each other add
 * each key once. Arguments: delay, priority, delay. */
const jsql JS_REFRESH_ADD = {"refresh.add",
	"{insert_ignore} {J} ({keys}, " PENDING_COLS ", {priority}, {created_time}, {scheduled_time}, {reservations}) "
	"SELECT {keys:ks}, " PENDING_VALS("{now+?}") ", ?, {now}, {now+?}, 0 FROM ({keysource}) ks WHERE 1=1{where:ks} "
	"AND NOT EXISTS (SELECT 1 FROM {T} tg WHERE {join:tg:ks}) "
	"AND NOT EXISTS (SELECT 1 FROM {J} jj WHERE {join:jj:ks}){insert_ignore_tail}"};

/* refresh.repend.mark - with jobs.keep_completed (as DataJoint), success
 * jobs whose target row is gone go back to pending. In three steps,
 * because under READ COMMITTED an UPDATE on MySQL/MariaDB reads each jobs
 * row as last committed but its subquery on the target in the snapshot of
 * the statement's start: one UPDATE could see a worker's fresh `success`
 * yet miss the target row committed with it, and re-pend a job just made
 * (invariant 2). This step marks the candidates (queue = 2, a value that
 * exists only inside this transaction) and thereby locks them: whatever
 * commit made them success has completed. */
const jsql JS_REFRESH_REPEND_MARK = {"refresh.repend.mark",
	"UPDATE {J} SET {queue} = 2 WHERE {status} = 'success' AND NOT EXISTS (SELECT 1 FROM {T} tg WHERE {join:tg:J})"};

/* refresh.repend - a new statement, so a snapshot that includes those
 * commits: of the marked rows (locked since the mark), those whose target
 * row is still missing and whose key is still in (key_source & where) go
 * back to pending with this refresh's priority. Argument: priority. */
const jsql JS_REFRESH_REPEND = {"refresh.repend",
	"UPDATE {J} SET " SET_PENDING("{now}") ", {priority} = ?, {scheduled_time} = {now}, "
	"{last_end} = 're-pended: target row deleted' WHERE {queue} = 2 "
	"AND NOT EXISTS (SELECT 1 FROM {T} tg WHERE {join:tg:J}) "
	"AND EXISTS (SELECT 1 FROM ({keysource}) ks WHERE {join:ks:J}{where:ks})"};

/* refresh.repend.unmark - the marked rows not re-pended are success again
 * (queue = 0), before the transaction commits. */
const jsql JS_REFRESH_REPEND_UNMARK = {"refresh.repend.unmark",
	"UPDATE {J} SET {queue} = 0 WHERE {queue} = 2"};

/* refresh.stale.mark, refresh.stale - jobs older than stale_timeout
 * whose key left the key source; never ignore (the user's decision) or
 * reserved (a live make's: its fenced commit decides). Marked by an
 * UPDATE, then the marked rows deleted. Not one DELETE: its scan reads
 * every jobs row, and under READ COMMITTED InnoDB makes a DELETE wait for
 * each row another transaction holds (a job being claimed or committed)
 * and, once it waited for a row, keeps that row locked to the end of the
 * statement, matched or not (MariaDB 10.11). On a busy table such a scan
 * held the rows of live jobs for over a minute: their renewals and fenced
 * commits waited, and leases lapsed under running makes (docs/jobs.md).
 * An UPDATE reads a row another transaction holds as last committed, and
 * passes it without waiting when that does not match (a semi-consistent
 * read); it waits only for a row that was stale when last committed.
 * PostgreSQL's DELETE would not wait for rows that do not match, and
 * SQLite has one writer: the same two statements serve all three. The
 * DELETE reads the marked rows with the index `next` (whose first column
 * is the mark): once most of the table was marked, MariaDB's planner
 * scanned all of it instead, and met the rows of live jobs the mark had
 * passed. Argument of the mark: -stale_timeout. */
const jsql JS_REFRESH_STALE_MARK = {"refresh.stale.mark",
	"UPDATE {J} SET {queue} = " MARK_STALE " WHERE {status} NOT IN ('ignore', 'reserved') AND {created_time} < {now+?} "
	"AND NOT EXISTS (SELECT 1 FROM ({keysource}) ks WHERE {join:ks:J})"};
const jsql JS_REFRESH_STALE = {"refresh.stale",
	"{delete:next} WHERE {queue} = " MARK_STALE};

/* refresh.orphans.mark, refresh.orphans - DataJoint's orphan_timeout:
 * reservations older than it are marked, recorded by history.marked, and
 * go back to pending, live or not (their holders' commits are then
 * refused by the fence). Argument of the mark: -orphan_timeout. */
const jsql JS_REFRESH_ORPHANS_MARK = {"refresh.orphans.mark",
	"UPDATE {J} SET {queue} = " MARK_RESERVED " WHERE {status} = 'reserved' AND {reserved_time} < {now+?}"};
const jsql JS_REFRESH_ORPHANS = {"refresh.orphans",
	"UPDATE {J} SET {history} = {history} + 1, " SET_PENDING("{now}") ", {last_end} = 'orphan timeout' "
	"WHERE {queue} = " MARK_RESERVED};

/* ------------------------------------------------------------------ DDL */

/* jobs.create - a table's jobs table, when missing (ddl.c, jobs_ensure):
 * the target's key-source attributes, then JOB_COLS, keyed by the key.
 * Its indexes come after (ddl.c, index_on: db_create_index). */
const jsql JS_JOBS_CREATE = {"jobs.create",
	"CREATE TABLE IF NOT EXISTS {J} ({srcdefs}, {coldefs}, PRIMARY KEY ({keys})){table_suffix}"};

/* history.create - the attempts of each job beside the jobs table, keyed
 * by (key, attempt) (history.*). */
const jsql JS_HISTORY_CREATE = {"history.create",
	"CREATE TABLE IF NOT EXISTS {H} ({srcdefs}, {hcoldefs}, PRIMARY KEY ({keys}, {attempt})){table_suffix}"};

/* jobs.columns, history.columns - no row, only the columns: an empty
 * SELECT works the same on every backend, takes no lock a worker waits
 * for, and fails on none (ddl.c, missing_cols and jobs_complete). */
const jsql JS_JOBS_COLUMNS = {"jobs.columns", "SELECT * FROM {J} WHERE 1=0"};
const jsql JS_HISTORY_COLUMNS = {"history.columns", "SELECT * FROM {H} WHERE 1=0"};

/* jobs.add_column - a column of JOB_COLS that a jobs table of an earlier
 * djc lacks (jctx.col: one with a default, so its rows stay valid). */
const jsql JS_JOBS_ADD_COLUMN = {"jobs.add_column", "ALTER TABLE {J} ADD COLUMN {coldef}"};

const jsql *const JS_ALL[] = {
	&JS_CLAIM_DUE, &JS_CLAIM_SET, &JS_CLAIM_ALONE, &JS_CLAIM_MANY, &JS_CLAIM_ORDER, &JS_CLAIM_KEYS, &JS_CLAIM_MADE,
	&JS_CLAIM_INFO, &JS_CLAIM_PEEK, &JS_LAPSED_LIST, &JS_LAPSED_RETRY, &JS_LAPSED_FAIL,
	&JS_RENEW, &JS_HOLD, &JS_MAKE_ALONE, &JS_HELD_COUNT, &JS_HELD, &JS_RELEASE, &JS_RELEASE_PID, &JS_RELEASE_CLAIM, &JS_RELEASE_ONE,
	&JS_CLOSE_DELETE, &JS_CLOSE_SUCCESS, &JS_CLOSE_MANY, &JS_FAIL, &JS_RETRY,
	&JS_HISTORY_ADD, &JS_HISTORY_MARKED, &JS_HISTORY_LAPSED, &JS_LOST_COUNT, &JS_HISTORY_TRIM,
	&JS_HISTORY_SWEEP, &JS_HISTORY_EXPIRE, &JS_HISTORY_LIST,
	&JS_OUTCOME_JOB, &JS_OUTCOME_TARGET, &JS_OUTCOME_ENDED,
	&JS_READY_COUNT, &JS_READY_NOW, &JS_NOT_DUE, &JS_CANCEL_MARK, &JS_CANCEL, &JS_IGNORE_UPDATE, &JS_IGNORE_ADD, &JS_IGNORE_INSERT,
	&JS_IGNORE_ADOPTED, &JS_CLEAR, &JS_SET_PRIORITY, &JS_SET_DELAY, &JS_LOST_WHY, &JS_COUNTS, &JS_LIST, &JS_LIST_STATUS,
	&JS_REFRESH_ADD, &JS_REFRESH_REPEND_MARK, &JS_REFRESH_REPEND, &JS_REFRESH_REPEND_UNMARK,
	&JS_REFRESH_STALE_MARK, &JS_REFRESH_STALE, &JS_REFRESH_ORPHANS_MARK, &JS_REFRESH_ORPHANS,
	NULL,
};
