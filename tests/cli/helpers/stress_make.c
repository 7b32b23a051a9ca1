/* stress_make.c - the make of tests/cli/test_concurrency.sh, as a small
 * static program: that file starts it 2,500 times per backend, and a bash
 * script's start cost four times this one's on a small VM (perf stat: bash
 * 7.5 ms of CPU, dash 4.2, this 1.7), a fifth of the whole file's CPU.
 *
 * For the key DJC_KEY_k of table DJC_TABLE it appends the key to
 * $T/log.TABLE and "s" to $T/ev.TABLE, sleeps 1-7 ms (by its pid), appends
 * "e" to $T/ev.TABLE and prints {"v": k * 3, "who": its parent's pid}: its
 * parent is the worker's supervisor, one per worker process. Each append is
 * one write(2) to a file opened O_APPEND, as the shell's `>>` does. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void append(const char *dir, const char *file, const char *table, const char *line)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.%s", dir, file, table);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
		perror(path);
		exit(1);
	}
	close(fd);
}

int main(void)
{
	const char *k = getenv("DJC_KEY_k"), *table = getenv("DJC_TABLE"), *dir = getenv("T");
	if (!k || !table || !dir) {
		fputs("stress_make: DJC_KEY_k, DJC_TABLE and T must be set\n", stderr);
		return 1;
	}
	char line[64];
	snprintf(line, sizeof line, "%s\n", k);
	append(dir, "log", table, line);
	append(dir, "ev", table, "s\n");
	struct timespec ts = {0, (getpid() % 7 + 1) * 1000000L};
	nanosleep(&ts, NULL);
	append(dir, "ev", table, "e\n");
	printf("{\"v\": %lld, \"who\": %ld}\n", atoll(k) * 3, (long)getppid());
	return 0;
}
