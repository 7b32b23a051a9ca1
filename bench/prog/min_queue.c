/* min_queue.c - the floor under djc's one-job transaction on MariaDB: the
 * least a SKIP LOCKED queue with djc's guarantees does per job, in plain
 * SQL, for comparing with djc and the commit loop on the same server
 * (bench/results-2026-12-02.md, run 7). Not part of `make bench`:
 *
 *   cc -O2 -I/usr/include/mariadb -o min_queue bench/prog/min_queue.c -lmariadb
 *   min_queue HOST PORT USER PASSWORD DB CLIENTS JOBS
 *
 * The queue table has djc's jobs row shape (its columns, the claim order's
 * index and the lapsed leases' index, the claim's SET list; like djc's
 * since 2026-12-03, no index on token); CLIENTS
 * processes each run one prepared compound statement per job, under READ
 * COMMITTED as djc's sessions do: the fenced DELETE of the job it made,
 * the INSERT of its result row, the locking read of the next job from
 * where its last one was (djc's three-column position), or from the head
 * when that finds nothing, the UPDATE that reserves it, COMMIT. None of
 * djc's bookkeeping: no row-count checks, no made/attempts info, no
 * error attribution. Prints {"clients":C,"jobs":N,"secs":S,"jobs_per_s":R};
 * fails unless every job's result row is there exactly once. */
#define _GNU_SOURCE
#define PROG "min_queue"
#include "mysql_client.h"
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static const char JOB[] =
	"BEGIN NOT ATOMIC DECLARE v BIGINT; DECLARE p INT; DECLARE a DATETIME(3); START TRANSACTION; "
	"IF ? >= 0 THEN DELETE FROM mq WHERE id = ? AND token = ? AND status = 'reserved'; "
	"INSERT INTO mq_done VALUES (?, 0); END IF; "
	"SELECT id, priority, avail_time INTO v, p, a FROM mq FORCE INDEX (nx) WHERE queue = 1 "
	"AND avail_time <= UTC_TIMESTAMP(3) AND status = 'pending' "
	"AND (priority > ? OR priority = ? AND (avail_time > ? OR avail_time = ? AND id > ?)) "
	"ORDER BY priority, avail_time, id LIMIT 1 FOR UPDATE SKIP LOCKED; "
	"IF v IS NULL THEN SELECT id, priority, avail_time INTO v, p, a FROM mq FORCE INDEX (nx) WHERE queue = 1 "
	"AND avail_time <= UTC_TIMESTAMP(3) AND status = 'pending' "
	"ORDER BY priority, avail_time, id LIMIT 1 FOR UPDATE SKIP LOCKED; END IF; "
	"IF v IS NOT NULL THEN UPDATE mq SET last_end = CASE WHEN status = 'reserved' THEN 'lease expired' ELSE last_end END, "
	"reservations = reservations + 1, status = 'reserved', token = ?, reserved_time = UTC_TIMESTAMP(3), "
	"avail_time = TIMESTAMPADD(MICROSECOND, 60000000, UTC_TIMESTAMP(3)), host = 'node01.cluster.example.org', "
	"pid = 12345, user = 'djc@localhost', connection_id = 77, version = 'djc 0.1.0' WHERE id = v; END IF; "
	"COMMIT; SELECT v, p, a; END";

/* One client: jobs until the queue is empty; the count in *done. */
static void client(char **argv, volatile int *go, long *done)
{
	MYSQL *c = conn(argv);
	q(c, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	MYSQL_STMT *st = mysql_stmt_init(c);
	if (!st || mysql_stmt_prepare(st, JOB, sizeof JOB - 1)) {
		fprintf(stderr, "min_queue: prepare: %s\n", st ? mysql_stmt_error(st) : "out of memory");
		exit(1);
	}
	long long prev = -1, tok = getpid(), prio = 0;
	MYSQL_TIME at = {.year = 2000, .month = 1, .day = 1, .time_type = MYSQL_TIMESTAMP_DATETIME};
	MYSQL_BIND b[10];
	memset(b, 0, sizeof b);
	/* prev, prev, token, prev; the position: prio, prio, at, at, prev; token */
	long long *ll[10] = {&prev, &prev, &tok, &prev, &prio, &prio, NULL, NULL, &prev, &tok};
	for (int i = 0; i < 10; i++) {
		b[i].buffer_type = ll[i] ? MYSQL_TYPE_LONGLONG : MYSQL_TYPE_DATETIME;
		b[i].buffer = ll[i] ? (void *)ll[i] : (void *)&at;
	}
	long long v = 0, p = 0;
	MYSQL_TIME a;
	my_bool vnull = 0, pnull = 0, anull = 0;
	MYSQL_BIND r[3];
	memset(r, 0, sizeof r);
	r[0].buffer_type = MYSQL_TYPE_LONGLONG; r[0].buffer = &v; r[0].is_null = &vnull;
	r[1].buffer_type = MYSQL_TYPE_LONGLONG; r[1].buffer = &p; r[1].is_null = &pnull;
	r[2].buffer_type = MYSQL_TYPE_DATETIME; r[2].buffer = &a; r[2].is_null = &anull;
	while (!*go) usleep(1000);
	long n = 0;
	for (;;) {
		if (mysql_stmt_bind_param(st, b) || mysql_stmt_execute(st) || mysql_stmt_bind_result(st, r) ||
		    mysql_stmt_fetch(st)) {
			fprintf(stderr, "min_queue: job: %s\n", mysql_stmt_error(st));
			exit(1);
		}
		mysql_stmt_free_result(st);
		while (mysql_stmt_next_result(st) == 0) {}
		if (prev >= 0) n++;
		if (vnull) break;
		prev = v;
		prio = p;
		at = a;
	}
	*done = n;
	mysql_stmt_close(st);
	mysql_close(c);
}

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: min_queue HOST PORT USER PASSWORD DB CLIENTS JOBS\n");
		return 2;
	}
	int clients = atoi(argv[6]);
	long jobs = atol(argv[7]);
	if (clients < 1 || clients > 256 || jobs < 1) {
		fprintf(stderr, "min_queue: CLIENTS must be 1..256 and JOBS at least 1\n");
		return 2;
	}
	MYSQL *m = conn(argv);
	q(m, "DROP TABLE IF EXISTS mq, mq_done");
	q(m, "CREATE TABLE mq (id BIGINT PRIMARY KEY, status VARCHAR(10) NOT NULL, priority INT NOT NULL, "
	     "created_time DATETIME(3) NOT NULL, scheduled_time DATETIME(3) NOT NULL, reserved_time DATETIME(3), "
	     "completed_time DATETIME(3), duration DOUBLE, error_message VARCHAR(2047), error_stack LONGTEXT, "
	     "user VARCHAR(255), host VARCHAR(255), pid BIGINT, connection_id BIGINT, version VARCHAR(255), token BIGINT, "
	     "queue TINYINT NOT NULL, avail_time DATETIME(3), reservations INT NOT NULL, last_end VARCHAR(255), "
	     "attempts INT NOT NULL DEFAULT 0, history INT NOT NULL DEFAULT 0, KEY nx (queue, priority, avail_time), "
	     "KEY ls (status, avail_time)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin");
	q(m, "CREATE TABLE mq_done (id BIGINT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB");
	char sql[512];
	snprintf(sql, sizeof sql,
		 "INSERT INTO mq (id, status, priority, created_time, scheduled_time, queue, avail_time, reservations) "
		 "SELECT seq, 'pending', 0, '2000-01-01', '2000-01-01', 1, '2000-01-01', 0 FROM seq_0_to_%ld", jobs - 1);
	q(m, sql);
	long *done = mmap(NULL, sizeof(long) * (size_t)clients, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	volatile int *go = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (done == MAP_FAILED || go == MAP_FAILED) { perror("mmap"); return 1; }
	*go = 0;
	for (int i = 0; i < clients; i++) {
		pid_t pid = fork();
		if (pid < 0) { perror("fork"); return 1; }
		if (pid == 0) {
			client(argv, go, &done[i]);
			_exit(0);
		}
	}
	usleep(300000);   /* let every client connect and prepare */
	double t0 = now();
	*go = 1;
	int bad = 0;
	for (int i = 0; i < clients; i++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) bad = 1;
	}
	double secs = now() - t0;
	if (bad) { fprintf(stderr, "min_queue: a client failed\n"); return 1; }
	long total = 0;
	for (int i = 0; i < clients; i++) total += done[i];
	/* every job's result row exactly once (its primary key forbids a second),
	 * and no job left */
	q(m, "SELECT (SELECT COUNT(*) FROM mq_done), (SELECT COUNT(*) FROM mq)");
	MYSQL_RES *r = mysql_store_result(m);
	MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
	long made = row && row[0] ? atol(row[0]) : -1, left = row && row[1] ? atol(row[1]) : -1;
	if (r) mysql_free_result(r);
	mysql_close(m);
	if (made != jobs || total != jobs || left != 0) {
		fprintf(stderr, "min_queue: %ld result rows, %ld jobs counted, %ld left, of %ld\n", made, total, left, jobs);
		return 1;
	}
	printf("{\"clients\":%d,\"jobs\":%ld,\"secs\":%.3f,\"jobs_per_s\":%.1f}\n", clients, jobs, secs, jobs / secs);
	return 0;
}
