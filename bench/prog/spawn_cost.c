/* spawn_cost.c - what starting one make program costs, from a process
 * shaped like a djc worker (a touched heap of HEAP_MB, a second thread, the
 * database client libraries loaded when present), for each way of doing it:
 *
 *   fork+exec        fork, execve, waitpid (the bare minimum with fork)
 *   posix_spawn      posix_spawn, waitpid (issue 16's reference cost)
 *   fork+pipes       as make.c did before proc.c: three pipes, fork,
 *                    setpgid, PR_SET_PDEATHSIG, execvpe; read to EOF, waitpid
 *   spawn+pipes      the same with posix_spawn (POSIX_SPAWN_SETPGROUP)
 *   proc             proc.c: proc_spawn, input, proc_wait, proc_free (through
 *                    the supervisor, which also looks for leftovers)
 *
 * Each is timed N times for /bin/true (or PROG); the mean and median per
 * program are printed on stderr, in microseconds. The supervisor's start (once per
 * worker process) is timed on its own. Not part of `make bench` (no
 * database); build and run after `make all`:
 *
 *   cc -O2 -Iinclude -Isrc -D_GNU_SOURCE -o /tmp/spawn_cost bench/prog/spawn_cost.c \
 *      build/libdjc-internal.a -ljansson -lpthread -ldl
 *   /tmp/spawn_cost [N=2000] [HEAP_MB=64] [PROG=/bin/true]
 */
#include "make/proc.h"
#include "util/clock.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static char *prog = "/bin/true";

static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;) pause();
	return NULL;
}

static void drain_wait(pid_t pid, int in, int out, int err)
{
	close(in);
	char buf[4096];
	struct pollfd pf[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
	int open_n = 2;
	while (open_n) {
		poll(pf, 2, -1);
		for (int i = 0; i < 2; i++)
			if (pf[i].fd >= 0 && pf[i].revents) {
				if (read(pf[i].fd, buf, sizeof buf) <= 0) { close(pf[i].fd); pf[i].fd = -1; open_n--; }
			}
	}
	waitpid(pid, NULL, 0);
}

static void fork_exec(void)
{
	char *argv[] = {prog, NULL};
	pid_t pid = fork();
	if (pid == 0) { execve(prog, argv, environ); _exit(127); }
	waitpid(pid, NULL, 0);
}

static void spawn_bare(void)
{
	char *argv[] = {prog, NULL};
	pid_t pid;
	if (posix_spawn(&pid, prog, NULL, NULL, argv, environ) == 0) waitpid(pid, NULL, 0);
}

static void fork_pipes(void)
{
	char *argv[] = {prog, NULL};
	int in[2], out[2], err[2];
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) abort();
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) _exit(127);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		execvpe(prog, argv, environ);
		_exit(127);
	}
	setpgid(pid, pid);
	close(in[0]); close(out[1]); close(err[1]);
	drain_wait(pid, in[1], out[0], err[0]);
}

static void spawn_pipes(void)
{
	char *argv[] = {prog, NULL};
	int in[2], out[2], err[2];
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) abort();
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	posix_spawnattr_t at;
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&at, 0);
	pid_t pid;
	int r = posix_spawnp(&pid, prog, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(in[0]); close(out[1]); close(err[1]);
	if (r) { close(in[1]); close(out[0]); close(err[0]); return; }
	drain_wait(pid, in[1], out[0], err[0]);
}

static void via_proc(void)
{
	char *argv[] = {prog, NULL};
	proc_spec spec = {argv, environ, 256UL << 20, 4000};
	proc_status st;
	proc *p;
	if (proc_spawn(&p, &spec, &st)) { fprintf(stderr, "proc_spawn failed: %d\n", st.spawn_errno); exit(1); }
	proc_input(p, "{\"id\": 1}\n", 10, 1);
	proc_wait(p, NULL, NULL, 5, &st);
	proc_free(p);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void measure(const char *name, void (*fn)(void), int n)
{
	double *t = malloc((size_t)n * sizeof *t), sum = 0;
	for (int i = 0; i < 20; i++) fn();   /* warm up */
	for (int i = 0; i < n; i++) {
		double a = mono_now();
		fn();
		t[i] = (mono_now() - a) * 1e6;
		sum += t[i];
	}
	qsort(t, (size_t)n, sizeof *t, cmp);
	fprintf(stderr, "%-14s mean %7.1f us   median %7.1f us   p90 %7.1f us\n", name, sum / n, t[n / 2], t[n * 9 / 10]);
	free(t);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	long heap_mb = argc > 2 ? atol(argv[2]) : 64;
	if (argc > 3) prog = argv[3];
	/* shaped like a worker: client libraries mapped, a heap, a second thread */
	const char *libs[] = {"libpq.so.5", "libmariadb.so.3", NULL};
	int loaded = 0;
	for (int i = 0; libs[i]; i++) loaded += dlopen(libs[i], RTLD_NOW) != NULL;
	char *heap = malloc((size_t)heap_mb << 20);
	for (long i = 0; i < heap_mb << 20; i += 4096) heap[i] = (char)i;
	pthread_t th;
	pthread_create(&th, NULL, idle_thread, NULL);
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long rss = 0;
	while (f && fgets(line, sizeof line, f)) if (!strncmp(line, "VmRSS:", 6)) rss = atol(line + 6);
	if (f) fclose(f);
	/* results on stderr; what PROG prints goes to /dev/null in every mode */
	int dn = open("/dev/null", O_WRONLY);
	if (dn >= 0) dup2(dn, 1);
	fprintf(stderr, "spawn_cost: %d runs of %s each; RSS %ld MiB (heap %ld MiB, %d client libraries), 2 threads\n", n, prog,
	       rss >> 10, heap_mb, loaded);
	double a = mono_now();
	via_proc();   /* starts this process's supervisor */
	fprintf(stderr, "%-14s %7.1f us (once per worker process)\n", "supervisor", (mono_now() - a) * 1e6);
	measure("fork+exec", fork_exec, n);
	measure("posix_spawn", spawn_bare, n);
	measure("fork+pipes", fork_pipes, n);
	measure("spawn+pipes", spawn_pipes, n);
	measure("proc", via_proc, n);
	return 0;
}
