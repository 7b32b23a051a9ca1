/* noop_serve.c - the no-op make of `make bench` as a serve program
 * (docs/serve-protocol.md): answers djc's hello, then for each key one row
 * `{}` (djc fills in the key) and its closing line, in one write; when
 * NOOP_LOG names a file, appends each key's id there (one line, O_APPEND)
 * so the benchmark can check that every key was made exactly once. Built
 * by bench/serve.sh without libdjc, like noop_make.c. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int put(const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(1, s, n);
		if (w <= 0) return -1;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* One line of the request stream: hello or a key. */
static int on_line(const char *l, int logfd)
{
	if (strstr(l, "\"_djc\":\"hello\"")) {
		static const char hello[] = "{\"_djc\":\"hello\",\"version\":1}\n";
		return put(hello, sizeof hello - 1);
	}
	if (logfd >= 0) {
		const char *id = strstr(l, "\"id\":");
		if (id) {
			char line[32];
			int n = snprintf(line, sizeof line, "%ld\n", strtol(id + 5, NULL, 10));
			if (write(logfd, line, (size_t)n) != n) return -1;
		}
	}
	static const char rows[] = "{}\n{\"_djc\":\"done\"}\n";
	return put(rows, sizeof rows - 1);
}

int main(void)
{
	const char *log = getenv("NOOP_LOG");
	int logfd = log && *log ? open(log, O_WRONLY | O_APPEND | O_CREAT, 0644) : -1;
	static char buf[1 << 16];
	size_t have = 0;
	for (;;) {
		ssize_t r = read(0, buf + have, sizeof buf - 1 - have);
		if (r <= 0) return 0;   /* end of input: djc is done with us */
		have += (size_t)r;
		buf[have] = 0;
		char *p = buf, *nl;
		while ((nl = strchr(p, '\n'))) {
			*nl = 0;
			if (on_line(p, logfd)) return 1;
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == sizeof buf - 1) return 1;   /* a line longer than the buffer: not djc */
	}
}
