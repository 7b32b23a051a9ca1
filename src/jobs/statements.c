/* statements.c - every statement djc runs on a jobs table, written once,
 * whole, named, each with the reason it is safe. The invariants cited are
 * DESIGN.md section 3: (1) one reservation at a time, (2) one commit per
 * key, fenced by the token, (3) no lost work: a dead worker's job comes
 * back after its lease, a live one renews, (4) no long transactions,
 * (5) work scales with the work, not the queue. Templates are expanded per
 * connection and table by jsql_expand() (sql.h lists the fragments). */
#include "sql.h"

/* ------------------------------------------------------------------ columns */

/* The jobs table's columns after the target's key-source attributes:
 * DataJoint's, then djc's lease columns (docs/jobs.md). */
const jcol JOB_COLS[] = {
	{"status", T_VARCHAR, 10, 1},
	{"priority", T_INT32, 0, 1},
	{"created_time", T_DATETIME, 3, 1},
	{"scheduled_time", T_DATETIME, 3, 1},
	{"reserved_time", T_DATETIME, 3, 0},
	{"completed_time", T_DATETIME, 3, 0},
	{"duration", T_FLOAT64, 0, 0},
	{"error_message", T_VARCHAR, 2047, 0},
	{"error_stack", T_TEXT, 0, 0},
	{"user", T_VARCHAR, 255, 0},
	{"host", T_VARCHAR, 255, 0},
	{"pid", T_INT64, 0, 0},
	{"connection_id", T_INT64, 0, 0},
	{"version", T_VARCHAR, 255, 0},
	{"token", T_INT64, 0, 0},
	{"queue", T_INT8, 0, 1},
	{"avail_time", T_DATETIME, 3, 0},
	{"reservations", T_INT32, 0, 1},
	{"last_end", T_VARCHAR, 255, 0},
};
const size_t NJOB_COLS = sizeof JOB_COLS / sizeof *JOB_COLS;

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
 * pending and due, or reserved with a lapsed lease. */
#define SET_PENDING(due) "{status} = 'pending', {queue} = 1, {token} = NULL, {avail_time} = " due
#define PENDING_COLS "{status}, {queue}, {avail_time}"
#define PENDING_VALS(due) "'pending', 1, " due
#define SET_CLOSED(st) "{status} = " st ", {queue} = 0, {avail_time} = NULL"
#define CLOSED_COLS "{status}, {queue}, {avail_time}"
#define CLOSED_VALS(st) st ", 0, NULL"

/* The fence: this key, still reserved under the token its holder got from
 * the claim. Every statement a holder runs on its job carries it, so once
 * the job was reset or taken (a new token) the holder's statements match
 * nothing (invariant 2). */
#define FENCE "{key} AND {token} = ? AND {status} = 'reserved'"

/* -------------------------------------------------------------------- claim */

/* claim.due - the condition of a claim: the most urgent job that can be
 * taken now (see the encodings above). The driver claims in one atomic
 * statement (SKIP LOCKED on the servers, the single writer on SQLite), so
 * two workers never hold the same key (invariant 1: no check-then-update).
 * The index (queue, priority, avail_time) serves this condition and
 * JS_CLAIM_ORDER whatever the depth of the queue (invariant 5). The
 * restriction limits what is reserved, not only what refresh adds
 * (DataJoint issue 1413). */
const jsql JS_CLAIM_DUE = {"claim.due",
	"{queue} = 1 AND {avail_time} <= {now}{prio}{where}"};

/* claim.lapsed - the same, only jobs whose holder's lease lapsed (it died,
 * hung or was cut off). Looked for first, at most every min(1 s, lease/4)
 * per process: such a job was due before anything pending now, and taking
 * it first bounds its takeover by about one lease even behind a deep queue
 * (invariant 3). The reserved rows are few, and the index (status,
 * avail_time) finds them. */
const jsql JS_CLAIM_LAPSED = {"claim.lapsed",
	"{queue} = 1 AND {avail_time} <= {now} AND {status} = 'reserved'{prio}{where}"};

/* claim.set - what a claim writes: a fresh random token (the fence of
 * every later statement of this holder), the lease (avail_time = now +
 * lease), who holds it, and the count of reservations; a job taken over
 * from a lapsed holder records why its previous reservation ended. The
 * first two assignments come first because MySQL evaluates SET left to
 * right and they read the old status. Arguments: token, lease, host, pid,
 * user, connection id, version. */
const jsql JS_CLAIM_SET = {"claim.set",
	"{last_end} = CASE WHEN {status} = 'reserved' THEN 'lease expired' ELSE {last_end} END, "
	"{reservations} = {reservations} + 1, {status} = 'reserved', {token} = ?, {reserved_time} = {now}, "
	"{avail_time} = {now+?}, {host} = ?, {pid} = ?, {user} = ?, {connection_id} = ?, {version} = ?"};

/* claim.order - most urgent first: lowest priority, then earliest due. */
const jsql JS_CLAIM_ORDER = {"claim.order", "{priority}, {avail_time}"};

/* claim.keys, claim.made - what a claim returns: the claimed keys, and
 * whether the target row already exists (made directly, or by another
 * route): such a job is closed at once instead of running make for
 * nothing, as DataJoint checks before make. Read by the claim itself, so
 * it costs no round trip. */
const jsql JS_CLAIM_KEYS = {"claim.keys", "{keys}"};
const jsql JS_CLAIM_MADE = {"claim.made",
	"CASE WHEN EXISTS (SELECT 1 FROM {T} tg WHERE {join:tg:J}) THEN 1 ELSE 0 END"};

/* -------------------------------------------------------------- leases */

/* renew - the heartbeat: extend every lease still held under the token.
 * No row matched proves the reservation was taken or reset: the worker
 * stops the make (its commit would be refused anyway). One indexed UPDATE
 * by token per running claim every lease/4 (invariant 3). */
const jsql JS_RENEW = {"renew",
	"UPDATE {J} SET {avail_time} = {now+?} WHERE {token} = ? AND {status} = 'reserved'"};

/* hold - renew one job of a claim, fenced: the proof, before starting the
 * next make of a batch, that this worker still holds it. */
const jsql JS_HOLD = {"hold",
	"UPDATE {J} SET {avail_time} = {now+?} WHERE " FENCE};

/* release - an early stop hands the unstarted jobs of a claim back,
 * pending and due at once; only those still held under its token. */
const jsql JS_RELEASE = {"release",
	"UPDATE {J} SET " SET_PENDING("{now}") ", {last_end} = 'released' WHERE {token} = ? AND {status} = 'reserved'"};

/* release.pid - a worker process died: the jobs it still holds and never
 * started (the rest of its claim) go back to pending at once, without
 * waiting for their leases to lapse. Host and pid name one process; the
 * job it was making has been recorded first (fail). Arguments: host, pid. */
const jsql JS_RELEASE_PID = {"release.pid",
	"UPDATE {J} SET " SET_PENDING("{now}") ", {last_end} = 'released: worker died' "
	"WHERE {status} = 'reserved' AND {host} = ? AND {pid} = ?"};

/* release.one - one job handed back (its make was stopped because the
 * lease could not be proved), fenced. */
const jsql JS_RELEASE_ONE = {"release.one",
	"UPDATE {J} SET " SET_PENDING("{now}") ", {last_end} = 'released' WHERE " FENCE};

/* ------------------------------------------------------------- endings */

/* close.delete - the first statement of a commit (jobs.keep_completed
 * off): the job row goes, fenced. It runs in the transaction that inserts
 * make's rows and rolls back unless exactly one row matched, so a worker
 * that lost its reservation commits nothing (invariant 2); on the servers
 * it also locks the row until COMMIT, so no claim slips in between. */
const jsql JS_CLOSE_DELETE = {"close.delete",
	"DELETE FROM {J} WHERE " FENCE};

/* close.success - the same with jobs.keep_completed: the row stays as a
 * success record. Argument: duration. */
const jsql JS_CLOSE_SUCCESS = {"close.success",
	"UPDATE {J} SET " SET_CLOSED("'success'") ", {completed_time} = {now}, {duration} = ?, "
	"{error_message} = NULL, {error_stack} = NULL, {last_end} = 'success' WHERE " FENCE};

/* close.many - a grouped commit (jobs.reserve_batch > 1): the rows of
 * several finished jobs of one claim go in one fenced DELETE; the caller
 * rolls back unless every one matched, then commits them one by one. */
const jsql JS_CLOSE_MANY = {"close.many",
	"DELETE FROM {J} WHERE {token} = ? AND {status} = 'reserved' AND {keyin}"};

/* fail - make failed: the job becomes an error with its message and
 * stack, fenced like a commit (a holder that lost the job records
 * nothing). Arguments: duration, message, stack. */
const jsql JS_FAIL = {"fail",
	"UPDATE {J} SET " SET_CLOSED("'error'") ", {completed_time} = {now}, {duration} = ?, "
	"{error_message} = ?, {error_stack} = ?, {last_end} = 'error' WHERE " FENCE};

/* fail.pid - a worker child died without saying which job it was making:
 * every job still reserved by that process becomes an error. Host and pid
 * name one live process at a time; a job already taken over has another
 * holder's host and pid. Arguments: message, host, pid. */
const jsql JS_FAIL_PID = {"fail.pid",
	"UPDATE {J} SET " SET_CLOSED("'error'") ", {completed_time} = {now}, {error_message} = ?, "
	"{last_end} = 'error' WHERE {status} = 'reserved' AND {host} = ? AND {pid} = ?"};

/* outcome.job, outcome.target - after the connection went during COMMIT,
 * whether that COMMIT took effect: the job row with our token still
 * reserved (not committed), as success (committed, keep_completed), gone
 * with the target row present (committed), or another token (lost). */
const jsql JS_OUTCOME_JOB = {"outcome.job",
	"SELECT {status}, {token} FROM {J} WHERE {key}"};
const jsql JS_OUTCOME_TARGET = {"outcome.target",
	"SELECT count(*) FROM {T} WHERE {key}"};

/* --------------------------------------------------------------- admin */

/* ready.count - jobs that can be taken, for populate's progress total. */
const jsql JS_READY_COUNT = {"ready.count",
	"SELECT count(*) FROM {J} WHERE {queue} = 1{prio}{where}"};

/* ignore.update, ignore.insert - `jobs ignore`: the key is never reserved
 * again. A reserved job becomes ignore too; its holder's commit is then
 * refused by the fence. One transaction: update, or insert when the key
 * has no job yet. Arguments of insert: priority, user, host. */
const jsql JS_IGNORE_UPDATE = {"ignore.update",
	"UPDATE {J} SET " SET_CLOSED("'ignore'") " WHERE {key}"};
const jsql JS_IGNORE_INSERT = {"ignore.insert",
	"INSERT INTO {J} ({keys}, " CLOSED_COLS ", {priority}, {created_time}, {scheduled_time}, {reservations}, "
	"{user}, {host}) VALUES ({keyvals}, " CLOSED_VALS("'ignore'") ", ?, {now}, {now}, 0, ?, ?)"};

/* clear - delete the jobs of one status (errors to retry: the next refresh
 * adds their keys again). Argument: the status. */
const jsql JS_CLEAR = {"clear",
	"DELETE FROM {J} WHERE {status} = ?"};

/* counts, list - reading the jobs table. */
const jsql JS_COUNTS = {"counts",
	"SELECT {status}, count(*) FROM {J} GROUP BY {status}"};
const jsql JS_LIST = {"list",
	"SELECT {keys}, {cols} FROM {J} WHERE 1=1{where} ORDER BY {priority}, {scheduled_time}"};
const jsql JS_LIST_STATUS = {"list.status",
	"SELECT {keys}, {cols} FROM {J} WHERE {status} = ?{where} ORDER BY {priority}, {scheduled_time}"};

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

/* refresh.stale - jobs older than stale_timeout whose key left the key
 * source; never ignore (the user's decision) or reserved (a live make's:
 * its fenced commit decides). Argument: -stale_timeout. */
const jsql JS_REFRESH_STALE = {"refresh.stale",
	"DELETE FROM {J} WHERE {status} NOT IN ('ignore', 'reserved') AND {created_time} < {now+?} "
	"AND NOT EXISTS (SELECT 1 FROM ({keysource}) ks WHERE {join:ks:J})"};

/* refresh.orphans - DataJoint's orphan_timeout: reservations older than it
 * go back to pending, live or not (their holders' commits are then
 * refused by the fence). Argument: -orphan_timeout. */
const jsql JS_REFRESH_ORPHANS = {"refresh.orphans",
	"UPDATE {J} SET " SET_PENDING("{now}") ", {last_end} = 'orphan timeout' "
	"WHERE {status} = 'reserved' AND {reserved_time} < {now+?}"};

const jsql *const JS_ALL[] = {
	&JS_CLAIM_DUE, &JS_CLAIM_LAPSED, &JS_CLAIM_SET, &JS_CLAIM_ORDER, &JS_CLAIM_KEYS, &JS_CLAIM_MADE,
	&JS_RENEW, &JS_HOLD, &JS_RELEASE, &JS_RELEASE_PID, &JS_RELEASE_ONE,
	&JS_CLOSE_DELETE, &JS_CLOSE_SUCCESS, &JS_CLOSE_MANY, &JS_FAIL, &JS_FAIL_PID,
	&JS_OUTCOME_JOB, &JS_OUTCOME_TARGET,
	&JS_READY_COUNT, &JS_IGNORE_UPDATE, &JS_IGNORE_INSERT, &JS_CLEAR, &JS_COUNTS, &JS_LIST, &JS_LIST_STATUS,
	&JS_REFRESH_ADD, &JS_REFRESH_REPEND_MARK, &JS_REFRESH_REPEND, &JS_REFRESH_REPEND_UNMARK,
	&JS_REFRESH_STALE, &JS_REFRESH_ORPHANS,
	NULL,
};
