/* test_commit_reply.c - a connection lost during the COMMIT of a commit
 * that carries the next claim (reserved.c: the commit of a claim's last job
 * claims the next jobs in its transaction), through djc_populate with
 * reserved jobs, on the backend of $DJC_TEST_URL. The fault is acted out in
 * the db layer (db_batch_fault): the batch carrying a claim commits, then
 * its socket is shut down and its reply is lost (DJC_ECONN, the outcome
 * unknown); or the connection goes before it, and nothing is committed.
 *  - one: claims of one job; the commit of key 1 (claiming key 2) is found
 *    done (jobs_commit_outcome), and key 2, claimed under a token whose
 *    reply never came, goes back to pending at once and is made by the
 *    same populate: every key made once, none left reserved, no worker
 *    counted lost (the claim used to stay reserved by nobody until its
 *    lease lapsed, then count a lost worker on a job that never started);
 *  - group: claims of 3, whose finished jobs commit together
 *    (jobs_commit_many) with the claim of the next 3: the same;
 *  - before: the connection goes before the COMMIT: nothing committed,
 *    nothing claimed; the commit is made again, with a claim, once;
 *  - taken: the same, but while the connection is down (a server crash
 *    longer than the lease) the worker's lease lapses and a second worker
 *    ends its attempt, takes the job and commits it before the first asks
 *    what became of its COMMIT: the first finds the job row gone and the
 *    target row there, and must count the job lost, not made (the
 *    history row of its attempt, with its token, says someone else ended
 *    it); one commit reported per key. Until 2026-12-07 both counted it.
 * SQLite has no connection to lose (an embedded file): there only the
 * reply is lost; the servers (PostgreSQL, MariaDB, pgbouncer) lose the
 * socket too, and the worker's next statements reconnect. */
#include "t.h"
#include "tdb.h"
#include "djc.h"
#include "db/db.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { NKEYS = 6, NO_FAULT = 0, FAULT_AFTER, FAULT_BEFORE };

static atomic_int fault_mode;   /* the next batch carrying a claim: NO_FAULT, FAULT_AFTER, FAULT_BEFORE */
static atomic_int faults;       /* faults acted out */
static atomic_int cuts;         /* sockets shut down with them */
static int server;              /* a backend with a connection to lose (not SQLite) */
static int made[NKEYS + 1];     /* makes per key */

static const char *take_url, *take_schema;   /* taken: the second worker's database */
static int take_rc = -1;                     /* taken: its populate's code, ... */
static long take_made = -1;                  /* ... and what it made */
static atomic_int last_id;                   /* the key the first worker made last */
static atomic_int taking;                    /* the second worker is at work */

static int make(djc_make_ctx *ctx, const djc_row *key, void *payload);

/* taken: as the first worker's COMMIT would go out, its lease lapses and
 * a second worker (a connection of its own) takes the job over and
 * commits it */
static void take_over(void)
{
	djc_conn *c2 = t_open(take_url, take_schema);
	struct timespec ts = {2, 0};   /* past the first worker's lease (1 s) */
	nanosleep(&ts, NULL);
	char where[32];
	snprintf(where, sizeof where, "{\"id\": %d}", atomic_load(&last_id));
	djc_populate_options o;
	djc_populate_options_init(&o);
	o.reserve_jobs = 1;
	o.make = make;
	o.where_json = where;
	djc_populate_result *res = NULL;
	atomic_store(&taking, 1);
	take_rc = djc_populate(&res, c2, "RpTaken", &o);
	atomic_store(&taking, 0);
	take_made = res ? res->success_count : -1;
	if (take_rc) fprintf(stderr, "the second worker: %s\n", djc_error_last(c2));
	djc_populate_result_free(res);
	djc_close(c2);
}

static int fault(db_conn *c, const db_item *items, size_t n, int done)
{
	int mode = atomic_load(&fault_mode);
	if (atomic_load(&taking)) return 0;
	if (mode != (done ? FAULT_AFTER : FAULT_BEFORE)) return 0;
	int claims = 0;
	for (size_t i = 0; i < n; i++) claims |= items[i].claim != NULL;
	if (!claims) return 0;
	atomic_store(&fault_mode, NO_FAULT);
	atomic_fetch_add(&faults, 1);
	if (take_url) take_over();
	int fd = c->drv->socket ? c->drv->socket(c) : -1;
	if (fd >= 0 && !shutdown(fd, SHUT_RDWR)) atomic_fetch_add(&cuts, 1);   /* the connection is gone (SQLite: none) */
	return 1;
}

static int make(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	int64_t id = 0;
	djc_row_int(&id, key, (size_t)djc_row_find(key, "id"));
	if (id >= 1 && id <= NKEYS) made[id]++;
	if (!atomic_load(&taking)) atomic_store(&last_id, (int)id);
	djc_row *r = djc_row_new();
	djc_row_set_int(r, "y", id * 2);
	int rc = djc_make_insert(ctx, NULL, r);
	djc_row_free(r);
	return rc;
}

static void set(const char *key, const char *value)
{
	CHECK_MSG(djc_config_set(key, value, "test_commit_reply", NULL) == DJC_OK, "set %s", key);
}

/* populate table with reserved jobs in claims of batch, the next batch
 * carrying a claim faulted as mode says, the counts of makes and faults
 * reset first; the fault is off again after it */
static int populate_faulted(djc_conn *c, const char *table, const char *batch, int mode, djc_populate_result **res)
{
	set("jobs.reserve_batch", batch);
	memset(made, 0, sizeof made);
	atomic_store(&faults, 0);
	atomic_store(&cuts, 0);
	atomic_store(&fault_mode, mode);
	db_batch_fault = fault;
	djc_populate_options o;
	djc_populate_options_init(&o);
	o.reserve_jobs = 1;
	o.suppress_errors = 1;
	o.make = make;
	int rc = djc_populate(res, c, table, &o);
	db_batch_fault = NULL;
	atomic_store(&fault_mode, NO_FAULT);
	return rc;
}

/* populate table with reserved jobs in claims of batch, the next batch
 * carrying a claim faulted as mode says; then every key made once, and
 * nothing reserved, pending or lost */
static void run(djc_conn *c, const char *table, const char *batch, int mode)
{
	djc_populate_result *res = NULL;
	int rc = populate_faulted(c, table, batch, mode, &res);
	CHECK_MSG(atomic_load(&faults) == 1, "%s: %d faults acted out, not 1", table, atomic_load(&faults));
	CHECK_MSG(atomic_load(&cuts) == server, "%s: %d connections cut, not %d", table, atomic_load(&cuts), server);
	CHECK_MSG(rc == DJC_OK && res && res->success_count == NKEYS && res->lost_count == 0 && res->error_count == 0,
		  "%s: rc %d success %ld lost %ld errors %ld: %s", table, rc, res ? res->success_count : -1,
		  res ? res->lost_count : -1, res ? res->error_count : -1, djc_error_last(c));
	djc_populate_result_free(res);
	for (int id = 1; id <= NKEYS; id++) CHECK_MSG(made[id] == 1, "%s: key %d made %d times", table, id, made[id]);
	long n[5];
	CHECK(djc_jobs_counts(n, c, table) == DJC_OK);
	CHECK_MSG(n[0] == 0 && n[1] == 0 && n[3] == 0, "%s: pending %ld reserved %ld error %ld", table, n[0], n[1], n[3]);
	CHECK_MSG(t_count(c, table, NULL) == NKEYS, "%s: %ld rows", table, t_count(c, table, NULL));
}

/* taken: see the top of this file */
static void run_taken(djc_conn *c, const char *url, const char *schema)
{
	set("jobs.lease_timeout", "1");
	set("jobs.retry_delay", "0");   /* the lapsed job is due again at once */
	take_url = url;
	take_schema = schema;
	djc_populate_result *res = NULL;
	int rc = populate_faulted(c, "RpTaken", "1", FAULT_BEFORE, &res);
	take_url = NULL;
	set("jobs.lease_timeout", "60");
	CHECK_MSG(atomic_load(&faults) == 1, "taken: %d faults acted out, not 1", atomic_load(&faults));
	CHECK_MSG(take_rc == DJC_OK && take_made == 1, "taken: the second worker: rc %d, made %ld", take_rc, take_made);
	/* the key taken over: made by both, committed by the second, and
	 * counted by it alone */
	CHECK_MSG(rc == DJC_OK && res && res->success_count == NKEYS - 1 && res->lost_count == 1 && res->error_count == 0,
		  "taken: rc %d success %ld lost %ld errors %ld (the second worker made 1): %s", rc, res ? res->success_count : -1,
		  res ? res->lost_count : -1, res ? res->error_count : -1, djc_error_last(c));
	djc_populate_result_free(res);
	long twice = 0;
	for (int id = 1; id <= NKEYS; id++) twice += made[id] == 2;
	CHECK_MSG(twice == 1, "taken: %ld keys made twice, not 1", twice);
	long n[5];
	CHECK(djc_jobs_counts(n, c, "RpTaken") == DJC_OK);
	CHECK_MSG(n[0] == 0 && n[1] == 0 && n[3] == 0, "taken: pending %ld reserved %ld error %ld", n[0], n[1], n[3]);
	CHECK_MSG(t_count(c, "RpTaken", NULL) == NKEYS, "taken: %ld rows", t_count(c, "RpTaken", NULL));
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_commit_reply", "one group before taken");
	char path[96];
	const char *url = getenv("DJC_TEST_URL"), *schema = getenv("DJC_TEST_SCHEMA");
	if (!url) {
		snprintf(path, sizeof path, "sqlite:/tmp/djc-test-commit-reply-%d.db", (int)getpid());
		url = path;
	}
	server = strncmp(url, "sqlite:", 7) != 0;
	set("jobs.lease_timeout", "60");   /* no lease lapses during the test: what is left reserved stays so */
	djc_conn *c = t_open(url, schema);
	int rc = djc_declare(NULL, c,
			     "RpSrc (manual)\n    id : int32\n    ---\n\n"
			     "RpOne (computed)\n    -> RpSrc\n    ---\n    y : int64\n\n"
			     "RpGroup (computed)\n    -> RpSrc\n    ---\n    y : int64\n\n"
			     "RpBefore (computed)\n    -> RpSrc\n    ---\n    y : int64\n\n"
			     "RpTaken (computed)\n    -> RpSrc\n    ---\n    y : int64\n", "reply.djc");
	CHECK_MSG(rc == DJC_OK, "declare: %s", djc_error_last(c));
	for (int id = 1; id <= NKEYS; id++) {
		char row[32];
		snprintf(row, sizeof row, "{\"id\": %d}", id);
		CHECK(t_insert_json(c, "RpSrc", row) == DJC_OK);
	}
	if (t_want("one")) run(c, "RpOne", "1", FAULT_AFTER);
	if (t_want("group")) run(c, "RpGroup", "3", FAULT_AFTER);
	if (t_want("before")) run(c, "RpBefore", "1", FAULT_BEFORE);
	if (t_want("taken")) run_taken(c, url, schema);
	djc_close(c);
	if (!getenv("DJC_TEST_URL")) {
		t_unlink_sqlite(path + 7);
	}
	return T_DONE("test_commit_reply");
}
