/* commit_loop.c - the commit limit of a MariaDB server, for `make bench`:
 * CLIENTS processes, each on its own connection, run a single-row UPDATE in
 * autocommit (one statement, one commit) in a loop for SECONDS, like
 * pgbench's one-row update script on PostgreSQL. Each client updates its own
 * row (`own`: row id = client number, so commits do not wait on each other's
 * row locks and the server can group them) or all update row 0 (`same`).
 *
 *   commit_loop HOST PORT USER PASSWORD DB CLIENTS SECONDS own|same
 *
 * Creates the table djc_commit_loop if needed. Prints one JSON object:
 * {"clients":4,"mode":"own","commits":N,"secs":S,"tps":T}. Built by
 * bench/run.sh against MariaDB Connector/C; it does not use libdjc. */
#define _GNU_SOURCE
#define PROG "commit_loop"
#include "mysql_client.h"
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 9 || (strcmp(argv[8], "own") && strcmp(argv[8], "same"))) {
		fprintf(stderr, "usage: commit_loop HOST PORT USER PASSWORD DB CLIENTS SECONDS own|same\n");
		return 2;
	}
	int clients = atoi(argv[6]);
	double secs = atof(argv[7]);
	int own = !strcmp(argv[8], "own");
	if (clients < 1 || clients > 256 || secs <= 0) {
		fprintf(stderr, "commit_loop: CLIENTS must be 1..256 and SECONDS > 0\n");
		return 2;
	}
	MYSQL *m = conn(argv);
	q(m, "CREATE TABLE IF NOT EXISTS djc_commit_loop (id INT PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB");
	q(m, "DELETE FROM djc_commit_loop");
	char sql[128];
	for (int i = 0; i < clients; i++) {
		snprintf(sql, sizeof sql, "INSERT INTO djc_commit_loop VALUES (%d, 0)", i);
		q(m, sql);
	}
	long *done = mmap(NULL, sizeof(long) * (size_t)clients, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	volatile int *go = mmap(NULL, sizeof(int), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (done == MAP_FAILED || go == MAP_FAILED) { perror("mmap"); return 1; }
	*go = 0;
	for (int i = 0; i < clients; i++) {
		pid_t pid = fork();
		if (pid < 0) { perror("fork"); return 1; }
		if (pid == 0) {
			MYSQL *c = conn(argv);
			char upd[128];
			snprintf(upd, sizeof upd, "UPDATE djc_commit_loop SET n = n + 1 WHERE id = %d", own ? i : 0);
			while (!*go) usleep(1000);
			double end = now() + secs;
			long k = 0;
			while (now() < end) {
				q(c, upd);
				k++;
			}
			done[i] = k;
			mysql_close(c);
			_exit(0);
		}
	}
	usleep(200000);   /* let every client connect */
	*go = 1;
	int bad = 0;
	for (int i = 0; i < clients; i++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) bad = 1;
	}
	if (bad) { fprintf(stderr, "commit_loop: a client failed\n"); return 1; }
	long total = 0;
	for (int i = 0; i < clients; i++) total += done[i];
	/* the rows must add up to the commits counted */
	q(m, "SELECT CAST(SUM(n) AS SIGNED) FROM djc_commit_loop");
	MYSQL_RES *r = mysql_store_result(m);
	MYSQL_ROW row = r ? mysql_fetch_row(r) : NULL;
	long sum = row && row[0] ? atol(row[0]) : -1;
	if (r) mysql_free_result(r);
	mysql_close(m);
	if (sum != total) {
		fprintf(stderr, "commit_loop: the table holds %ld updates, the clients counted %ld\n", sum, total);
		return 1;
	}
	printf("{\"clients\":%d,\"mode\":\"%s\",\"commits\":%ld,\"secs\":%.3f,\"tps\":%.1f}\n", clients, argv[8], total, secs,
	       total / secs);
	return 0;
}
