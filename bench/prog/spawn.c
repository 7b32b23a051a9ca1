/* spawn.c - what creating a process costs, for `make bench`: a make program
 * is one process per key, so djc's own share of a program key is its time
 * per key minus this. From a process of the size of a djc worker (libpq
 * loaded, MIB MiB of its own memory touched), start PROGRAM N times with its
 * stdin and stdout on pipes (as djc starts a make program) and wait for it,
 * by fork+execv, vfork+execv and posix_spawn. Prints one JSON object with
 * the microseconds per process of each (the best of three rounds).
 *
 *   spawn MIB N [PROGRAM]        PROGRAM defaults to /bin/true
 *
 * Built by bench/run.sh without libdjc. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

enum { FORK, VFORK, SPAWN };

static void one(int how, const char *prog)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC)) { perror("pipe"); exit(1); }
	char *argv[] = {(char *)prog, NULL};
	pid_t pid = -1;
	if (how == SPAWN) {
		posix_spawn_file_actions_t fa;
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
		posix_spawn_file_actions_adddup2(&fa, out[1], 1);
		if (posix_spawn(&pid, prog, &fa, NULL, argv, environ)) { perror("posix_spawn"); exit(1); }
		posix_spawn_file_actions_destroy(&fa);
	} else {
		pid = how == FORK ? fork() : vfork();
		if (pid < 0) { perror("fork"); exit(1); }
		if (pid == 0) {
			dup2(in[0], 0);
			dup2(out[1], 1);
			execv(prog, argv);
			_exit(127);
		}
	}
	close(in[0]);
	close(out[1]);
	close(in[1]);   /* the key would be written here */
	char buf[256];
	while (read(out[0], buf, sizeof buf) > 0) {}
	close(out[0]);
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "spawn: %s failed\n", prog);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: spawn MIB N [PROGRAM]\n");
		return 2;
	}
	long mib = atol(argv[1]), n = atol(argv[2]);
	const char *prog = argc == 4 ? argv[3] : "/bin/true";
	if (mib < 0 || n < 1) { fprintf(stderr, "spawn: MIB >= 0 and N >= 1\n"); return 2; }
	/* the shape of a djc worker: libpq mapped, some memory of its own */
	void *pq = dlopen("libpq.so.5", RTLD_NOW);
	size_t sz = (size_t)mib << 20;
	char *mem = sz ? malloc(sz) : NULL;
	if (sz && !mem) { perror("malloc"); return 1; }
	if (sz) memset(mem, 1, sz);
	const char *name[] = {"fork_exec", "vfork_exec", "posix_spawn"};
	double best[3] = {1e30, 1e30, 1e30};
	for (int round = 0; round < 3; round++) {
		for (int how = 0; how < 3; how++) {
			one(how, prog);   /* warm up */
			double t0 = now();
			for (long i = 0; i < n; i++) one(how, prog);
			double us = (now() - t0) * 1e6 / (double)n;
			if (us < best[how]) best[how] = us;
		}
	}
	FILE *st = fopen("/proc/self/status", "r");
	long rss = -1;
	char line[256];
	while (st && fgets(line, sizeof line, st))
		if (!strncmp(line, "VmRSS:", 6)) rss = atol(line + 6);
	if (st) fclose(st);
	printf("{\"program\":\"%s\",\"libpq\":%s,\"own_mib\":%ld,\"rss_kb\":%ld,\"n\":%ld", prog, pq ? "true" : "false", mib, rss, n);
	for (int how = 0; how < 3; how++) printf(",\"%s_us\":%.1f", name[how], best[how]);
	printf("}\n");
	free(mem);
	return 0;
}
