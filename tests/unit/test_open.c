/* test_open.c - many processes opening one brand-new SQLite file at the same
 * moment (issue 12: about 1 in 560 such opens failed with "database is
 * locked", as the first PRAGMA journal_mode=WAL may be refused with
 * SQLITE_BUSY without the busy handler being asked). Each round forks
 * NPROC children that wait on one pipe, so that they all open at once,
 * then open a fresh file and read from it; every open must succeed. Only
 * SQLite: on a server there is no file to create (skipped with a note).
 * The sanitizer build runs a quarter of the rounds: it is there to check
 * the open path's memory, which every round does alike, and each of its
 * forks costs four times a plain one; the plain build keeps the 960 opens
 * that the race needed to show itself. */
#include "t.h"
#include "djc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NPROC 24
#if defined(__SANITIZE_ADDRESS__)
#define ROUNDS 10
#else
#define ROUNDS 40
#endif

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_open", "new_file_at_once");
	if (!t_want("new_file_at_once"))
		return T_DONE("test_open");
	const char *backend = getenv("DJC_BACKEND");
	if (backend && strcmp(backend, "sqlite")) {
		printf("test_open: skipped on %s (a brand-new SQLite file is what is opened)\n", backend);
		return T_DONE("test_open");
	}
	char dir[] = "/tmp/djc-open.XXXXXX";
	if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
	int failed = 0, opened = 0;
	char first[512] = "";
	for (int r = 0; r < ROUNDS; r++) {
		char url[256], path[200];
		snprintf(path, sizeof path, "%s/r%d.db", dir, r);
		snprintf(url, sizeof url, "sqlite:%s", path);
		int go[2], res[2];
		if (pipe(go) || pipe(res)) { perror("pipe"); return 1; }
		for (int i = 0; i < NPROC; i++) {
			pid_t pid = fork();
			if (pid == 0) {
				close(go[1]);
				close(res[0]);
				char b;
				if (read(go[0], &b, 1) < 0) _exit(3);   /* EOF: everyone starts now */
				djc_conn *c = NULL;
				int rc = djc_open(&c, url, NULL);
				char *tables = NULL;
				if (!rc) rc = djc_tables(&tables, c);
				free(tables);
				char msg[300];
				int n = snprintf(msg, sizeof msg, "%d %.280s\n", rc, rc ? djc_error_last(c) : "");
				if (write(res[1], msg, (size_t)n) < 0) _exit(4);
				djc_close(c);
				_exit(rc ? 1 : 0);
			}
		}
		close(go[0]);
		close(res[1]);
		close(go[1]);
		for (int i = 0; i < NPROC; i++) {
			int st = 0;
			wait(&st);
			if (WIFEXITED(st) && WEXITSTATUS(st) == 0) opened++;
			else failed++;
		}
		FILE *f = fdopen(res[0], "r");
		char line[400];
		while (f && fgets(line, sizeof line, f))
			if (line[0] != '0' && !first[0]) snprintf(first, sizeof first, "%s", line);
		if (f) fclose(f);
		t_unlink_sqlite(path);
	}
	rmdir(dir);
	printf("test_open: %d opens, %d failed%s%s", opened + failed, failed, first[0] ? "; first: " : "\n", first);
	CHECK_MSG(failed == 0, "%d of %d simultaneous opens of a new SQLite file failed", failed, opened + failed);
	CHECK(opened == NPROC * ROUNDS);
	return T_DONE("test_open");
}
