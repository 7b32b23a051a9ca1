/* noop_make.c - the no-op make program of `make bench`: reads the key from
 * stdin, prints one row `{}` (djc fills in the key), and, when NOOP_LOG
 * names a file, appends its key id there (one line, O_APPEND) so the
 * benchmark can check that every key was made exactly once. Built by
 * bench/run.sh without libdjc so that its own start-up cost stays minimal. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char buf[4096];
	while (read(0, buf, sizeof buf) > 0) {}
	const char *log = getenv("NOOP_LOG"), *id = getenv("DJC_KEY_id");
	if (log && *log && id) {
		int fd = open(log, O_WRONLY | O_APPEND | O_CREAT, 0644);
		if (fd >= 0) {
			char line[64];
			int n = snprintf(line, sizeof line, "%s\n", id);
			if (write(fd, line, (size_t)n) != n) return 1;
			close(fd);
		}
	}
	if (write(1, "{}\n", 3) != 3) return 1;
	return 0;
}
