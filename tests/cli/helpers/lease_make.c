/* lease_make.c - the make of tests/cli/test_leases.sh, as a small static
 * program (that file starts it over 1,000 times per backend; each start of
 * the shell script it replaces also started a `sleep`).
 *
 * For the key DJC_KEY_item_id, with A = "KEY-PID": appends "start KEY A"
 * to $MK_LOG; writes its pid to $MK_PIDFILE (anew) when that is set; waits until
 * the file $MK_HOLD exists when that is set; sleeps $MK_SLEEP seconds;
 * prints {"attempt": "A"}; appends "end KEY A". On SIGTERM, at any point
 * after the first line, it appends "term KEY A" and exits 143. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *log_path;
static char term_line[128];

static void put(const char *path, int how, const char *line)   /* how: O_APPEND or O_TRUNC */
{
	int fd = open(path, O_WRONLY | O_CREAT | how, 0644);
	if (fd < 0) _exit(1);
	ssize_t n = write(fd, line, strlen(line));
	close(fd);
	if (n != (ssize_t)strlen(line)) _exit(1);
}

static void on_term(int sig)
{
	(void)sig;
	put(log_path, O_APPEND, term_line);   /* open, write, close: async-signal-safe */
	_exit(143);
}

static void nap(double s)
{
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

int main(void)
{
	const char *key = getenv("DJC_KEY_item_id"), *pidfile = getenv("MK_PIDFILE"), *hold = getenv("MK_HOLD");
	const char *sl = getenv("MK_SLEEP");
	log_path = getenv("MK_LOG");
	if (!key || !log_path) {
		fputs("lease_make: DJC_KEY_item_id and MK_LOG must be set\n", stderr);
		return 1;
	}
	char a[64], line[160];
	snprintf(a, sizeof a, "%s-%ld", key, (long)getpid());
	snprintf(term_line, sizeof term_line, "term %s %s\n", key, a);
	snprintf(line, sizeof line, "start %s %s\n", key, a);
	put(log_path, O_APPEND, line);
	if (pidfile && *pidfile) {
		snprintf(line, sizeof line, "%ld\n", (long)getpid());
		put(pidfile, O_TRUNC, line);
	}
	struct sigaction sa = {.sa_handler = on_term};
	sigaction(SIGTERM, &sa, NULL);
	while (hold && *hold && access(hold, F_OK) != 0) nap(0.05);
	double s = sl ? atof(sl) : 0;
	if (s > 0) nap(s);
	printf("{\"attempt\": \"%s\"}\n", a);
	fflush(stdout);
	snprintf(line, sizeof line, "end %s %s\n", key, a);
	put(log_path, O_APPEND, line);
	return 0;
}
