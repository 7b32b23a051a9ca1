/* test_proc.c - the process module (src/make/proc.c) alone: spawning
 * without a shell, pipes, exit codes and signals, output cap and stderr
 * tail, stopping (SIGTERM, SIGKILL after the grace), a long-lived program
 * fed line by line, and the process tree: what a program leaves running
 * when it ends is killed (even after setsid), and nothing of it outlives
 * its caller killed by SIGKILL. Needs no database. Every wait is for an
 * event (bounded), never a duration. */
#include "t.h"
#include "make/proc.h"
#include "util/clock.h"
#include "util/piecepool.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern int proc_test_scan_proc;
static char dir[64];
static char *env_path[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", NULL};

static char *path_of(const char *name)
{
	static char buf[4][128];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
	return buf[k];
}

/* Run argv to its end with input `in`; st filled, stdout copied to *out. */
static int run(char *const *argv, char *const *envp, const char *in, proc_status *st, char **out, char **err)
{
	proc_spec spec = {argv, envp ? envp : env_path, 1 << 20, 4000};
	proc *p;
	if (proc_spawn(&p, &spec, st)) return -1;
	if (in) proc_input(p, in, strlen(in), 1);
	proc_wait(p, NULL, NULL, 1, st);
	size_t n;
	const char *o = proc_out(p, &n);
	if (out) *out = strndup(o, n);
	const char *e = proc_err(p, &n);
	if (err) *err = strndup(e ? e : "", n);
	proc_free(p);
	return 0;
}

/* The process no longer exists (waits up to 10 s for it to be killed and reaped). */
static int gone(pid_t pid)
{
	for (int i = 0; i < 1000; i++) {
		if (kill(pid, 0) < 0 && errno == ESRCH) return 1;
		usleep(10000);
	}
	return 0;
}

static int alive(pid_t pid) { return pid > 0 && kill(pid, 0) == 0; }

/* Wait (up to 10 s) for a file holding a number; return it. */
static long read_num(const char *path)
{
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "r");
		long v = 0;
		if (f) {
			int ok = fscanf(f, "%ld", &v) == 1;
			fclose(f);
			if (ok && v > 0) return v;
		}
		usleep(10000);
	}
	return -1;
}

static int count_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d) return -1;
	while (readdir(d)) n++;
	closedir(d);
	return n;
}

static void test_basics(void)
{
	proc_status st;
	char *out = NULL, *err = NULL;
	char *a1[] = {"sh", "-c", "printf hello; printf 'warn\\nlast line\\n' >&2; exit 3", NULL};
	CHECK(run(a1, NULL, NULL, &st, &out, &err) == 0);
	CHECK(st.exited && st.code == 3 && st.signal == 0 && st.stop == PROC_RUN && !st.termed && !st.killed);
	CHECK(st.leftovers == 0 && !st.abandoned && !st.too_big);
	CHECK_STR(out, "hello");
	CHECK_STR(err, "warn\nlast line\n");
	free(out); free(err);

	/* stdin, and no shell: the argument reaches the program as given */
	char *a2[] = {"cat", NULL};
	CHECK(run(a2, NULL, "{\"id\": 1}\n$(touch x)\n", &st, &out, NULL) == 0);
	CHECK(st.exited && st.code == 0);
	CHECK_STR(out, "{\"id\": 1}\n$(touch x)\n");
	free(out);
	char *a3[] = {"printf", "%s|", "; rm -rf /", "$HOME", NULL};
	CHECK(run(a3, NULL, NULL, &st, &out, NULL) == 0);
	CHECK_STR(out, "; rm -rf /|$HOME|");
	free(out);

	/* the environment is the one given, not the caller's */
	setenv("PROC_TEST_LEAK", "leaked", 1);
	char *env[] = {"PATH=/usr/bin:/bin", "FOO=bar baz", NULL};
	char *a4[] = {"sh", "-c", "echo \"$FOO|$PROC_TEST_LEAK|$PATH\"", NULL};
	CHECK(run(a4, env, NULL, &st, &out, NULL) == 0);
	CHECK_STR(out, "bar baz||/usr/bin:/bin\n");
	free(out);

	/* died of a signal */
	char *a5[] = {"sh", "-c", "kill -SEGV $$", NULL};
	CHECK(run(a5, NULL, NULL, &st, NULL, NULL) == 0);
	CHECK(st.exited && st.signal == SIGSEGV && st.stop == PROC_RUN);

	/* a program that never reads a big input: EPIPE, not SIGPIPE for us
	 * (SIGPIPE has its default disposition here: it would end this test) */
	signal(SIGPIPE, SIG_DFL);
	char *big = malloc(4 << 20);
	memset(big, 'x', (4 << 20) - 1);
	big[(4 << 20) - 1] = 0;
	char *a6[] = {"true", NULL};
	CHECK(run(a6, NULL, big, &st, NULL, NULL) == 0);
	CHECK(st.exited && st.code == 0);
	free(big);
}

static void test_spawn_errors(void)
{
	proc_status st;
	char *a1[] = {"/no/such/program", NULL};
	CHECK(run(a1, NULL, NULL, &st, NULL, NULL) == -1);
	CHECK(st.spawn_failed == PROC_SPAWN_EXEC && st.spawn_errno == ENOENT && st.pid == 0);
	char *a2[] = {"no-such-program-djc", NULL};
	CHECK(run(a2, NULL, NULL, &st, NULL, NULL) == -1);
	CHECK(st.spawn_failed == PROC_SPAWN_EXEC && st.spawn_errno == ENOENT);
	/* not executable */
	int fd = open(path_of("noexec"), O_WRONLY | O_CREAT, 0644);
	CHECK(fd >= 0 && write(fd, "#!/bin/sh\necho hi\n", 18) == 18);
	close(fd);
	char *a3[] = {path_of("noexec"), NULL};
	CHECK(run(a3, NULL, NULL, &st, NULL, NULL) == -1);
	CHECK(st.spawn_failed == PROC_SPAWN_EXEC && st.spawn_errno == EACCES);

	/* looked up in the PATH of the program's environment; a script
	 * without "#!" runs under /bin/sh, as execvpe does */
	fd = open(path_of("djc-proc-tool"), O_WRONLY | O_CREAT, 0755);
	CHECK(fd >= 0 && write(fd, "echo \"tool $1\"\n", 15) == 15);
	close(fd);
	char pathvar[128];
	snprintf(pathvar, sizeof pathvar, "PATH=/nonexistent:%s:/usr/bin:/bin", dir);
	char *env[] = {pathvar, NULL};
	char *a4[] = {"djc-proc-tool", "arg", NULL};
	char *out = NULL;
	CHECK(run(a4, env, NULL, &st, &out, NULL) == 0);
	CHECK(st.exited && st.code == 0);
	CHECK_STR(out, "tool arg\n");
	free(out);
	CHECK(run(a4, NULL, NULL, &st, NULL, NULL) == -1);   /* not in the default PATH */
	CHECK(st.spawn_errno == ENOENT);
}

static void test_caps(void)
{
	proc_status st;
	char *a1[] = {"head", "-c", "3000000", "/dev/zero", NULL};
	CHECK(run(a1, NULL, NULL, &st, NULL, NULL) == 0);
	CHECK(st.too_big && st.stop == PROC_STOP_TOO_BIG && st.exited);
	/* a tail of stderr: the last 4000 bytes */
	char *out = NULL, *err = NULL;
	char *a2[] = {"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' e >&2; printf END >&2", NULL};
	CHECK(run(a2, NULL, NULL, &st, &out, &err) == 0);
	CHECK(st.exited && st.code == 0 && strlen(err) == 4000 && !strcmp(err + 3997, "END") && err[0] == 'e');
	free(out); free(err);
}

/* should_stop: stop with `reason` once the file `arg` exists. */
static int stop_when_file(void *arg)
{
	return access((const char *)arg, F_OK) == 0 ? PROC_STOP_LOST : PROC_RUN;
}

static void test_stop(void)
{
	proc_status st;
	proc *p;
	/* SIGTERM is enough */
	char s1[256];
	snprintf(s1, sizeof s1, "touch %s; exec sleep 100", path_of("started1"));
	char *a1[] = {"sh", "-c", s1, NULL};
	proc_spec spec = {a1, env_path, 1 << 20, 4000};
	CHECK(proc_spawn(&p, &spec, &st) == 0);
	proc_wait(p, stop_when_file, path_of("started1"), 5, &st);
	proc_free(p);
	CHECK(st.exited && st.stop == PROC_STOP_LOST && st.termed && !st.killed && st.signal == SIGTERM);

	/* closes stdout and stderr and ignores SIGTERM: SIGKILL after the grace,
	 * and its child goes with it */
	char s2[512];
	snprintf(s2, sizeof s2, "trap '' TERM; exec >&- 2>&-; sleep 100 & echo $! > %s; touch %s; wait; wait; wait",
		 path_of("child2"), path_of("started2"));
	char *a2[] = {"sh", "-c", s2, NULL};
	spec.argv = a2;
	CHECK(proc_spawn(&p, &spec, &st) == 0);
	pid_t main2 = st.pid;
	proc_wait(p, stop_when_file, path_of("started2"), 0.3, &st);
	proc_free(p);
	CHECK(st.exited && st.stop == PROC_STOP_LOST && st.termed && st.killed && st.signal == SIGKILL && !st.abandoned);
	pid_t c2 = (pid_t)read_num(path_of("child2"));
	CHECK(c2 > 0 && gone(c2) && gone(main2));

	/* proc_free of a running program kills it */
	char *a3[] = {"sleep", "100", NULL};
	spec.argv = a3;
	CHECK(proc_spawn(&p, &spec, &st) == 0);
	pid_t p3 = st.pid;
	CHECK(alive(p3));
	proc_free(p);
	CHECK(gone(p3));
}

/* What a program leaves running when its main process ends is killed: a
 * background child holding its stdout, one that left the process group
 * with setsid, a double-forked daemon. Its output up to then is kept. */
static void test_leftovers(const char *tag)
{
	proc_status st;
	char *out = NULL;
	char s[1024], f1[128], f2[128], f3[128];
	snprintf(f1, sizeof f1, "%s", path_of("bg"));
	snprintf(f2, sizeof f2, "%s", path_of("sid"));
	snprintf(f3, sizeof f3, "%s", path_of("daemon"));
	unlink(f1); unlink(f2); unlink(f3);
	snprintf(s, sizeof s,
		 "echo row1; sleep 100 & echo $! > %s; "
		 "setsid sh -c 'echo $$ > %s; exec sleep 100' </dev/null >/dev/null 2>&1 & "
		 "(setsid sh -c 'echo $$ > %s; exec sleep 100' </dev/null >/dev/null 2>&1 &); "
		 "while [ ! -s %s ] || [ ! -s %s ]; do sleep 0.01; done; echo row2; exit 0",
		 f1, f2, f3, f2, f3);
	char *a[] = {"sh", "-c", s, NULL};
	CHECK(run(a, NULL, NULL, &st, &out, NULL) == 0);
	CHECK_MSG(st.exited && st.code == 0 && st.stop == PROC_RUN && !st.abandoned, "%s", tag);
	CHECK_MSG(st.leftovers == 3, "%s: %d leftovers", tag, st.leftovers);
	CHECK_STR(out, "row1\nrow2\n");
	free(out);
	pid_t bg = (pid_t)read_num(f1), sid = (pid_t)read_num(f2), dm = (pid_t)read_num(f3);
	CHECK_MSG(bg > 0 && gone(bg), "%s: background child", tag);
	CHECK_MSG(sid > 0 && gone(sid), "%s: setsid child", tag);
	CHECK_MSG(dm > 0 && gone(dm), "%s: double-forked daemon", tag);
}

/* A long-lived program fed line by line through pipes kept open. */
static void test_long_lived(void)
{
	proc_status st;
	proc *p;
	char *a[] = {"cat", NULL};
	proc_spec spec = {a, env_path, 1 << 20, 4000};
	CHECK(proc_spawn(&p, &spec, &st) == 0);
	const char *lines[] = {"first\n", "second\n", "third\n"};
	for (int i = 0; i < 3; i++) {
		proc_input(p, lines[i], strlen(lines[i]), 0);
		size_t n = 0;
		int over = 0;
		for (int k = 0; k < 1000 && !over; k++) {
			over = proc_pump(p, 100);
			if (memchr(proc_out(p, &n), '\n', n)) break;
		}
		char *o = proc_out(p, &n);
		CHECK(!over && n == strlen(lines[i]) && !memcmp(o, lines[i], n));
		proc_out_consume(p, n);
		CHECK(proc_out(p, &n) && n == 0);
	}
	proc_input(p, "", 0, 1);   /* EOF: cat ends */
	proc_wait(p, NULL, NULL, 1, &st);
	CHECK(st.exited && st.code == 0 && st.stop == PROC_RUN);
	proc_free(p);
}

/* The pool of pieces (util/piecepool.c): a piece given back is the next
 * one got of its size; another size lets the kept ones go; no more than
 * PIECES_KEEP bytes are kept. */
static void test_piece_pool(void)
{
	pieces_drop();
	char *a = piece_get(1000), *b = piece_get(1000);
	CHECK(a && b && a != b);
	memset(a, 'a', 1000);
	memset(b, 'b', 1000);
	piece_put(a);
	piece_put(b);
	char *c = piece_get(1000), *d = piece_get(1000);
	CHECK(c == b && d == a);   /* the last given back first */
	piece_put(c);
	piece_put(d);
	char *e = piece_get(2000);   /* a new size: the 1000-byte ones go (freed) */
	CHECK(e != NULL);
	piece_put(e);
	CHECK(piece_get(2000) == e);
	piece_put(e);
	size_t n = PIECES_KEEP / (512 * 1024) + 2;
	char *big[16];
	for (size_t i = 0; i < n; i++) big[i] = piece_get(512 * 1024);
	for (size_t i = 0; i < n; i++) piece_put(big[i]);
	/* the kept ones come back, the last kept first (the ones over
	 * PIECES_KEEP were freed: the sanitizer build's leak check) */
	size_t kept = PIECES_KEEP / (512 * 1024), back = 0;
	for (size_t i = 0; i < kept; i++) back += piece_get(512 * 1024) == big[kept - 1 - i];
	CHECK_MSG(back == kept, "%zu of the %zu pieces kept came back", back, kept);
	for (size_t i = 0; i < kept; i++) piece_free(big[i]);
	piece_put(NULL);
	piece_free(NULL);
	pieces_drop();
}

/* A piece lent to the program's pipe (proc_input_piece: vmsplice, the pipe
 * holds its pages) goes back to the pool only once the program read it:
 * until then the pool hands out another buffer, after it this one. */
static void test_lent_piece(void)
{
	pieces_drop();
	const size_t n = 256 * 1024;
	char *go = path_of("go");
	CHECK(mkfifo(go, 0600) == 0);
	char *a[] = {"sh", "-c", "read x < \"$0\"; head -c 262144; exec cat", go, NULL};
	proc_spec spec = {a, env_path, 1 << 20, 4000};
	proc_status st;
	proc *p;
	CHECK(proc_spawn(&p, &spec, &st) == 0);
	char *piece = piece_get(n);
	memset(piece, 'x', n);
	proc_input_piece(p, piece, n);
	CHECK(proc_pump(p, 0) == 0);   /* written: the pipe (grown to 1 MiB) takes it whole */
	CHECK(proc_input_backlog(p) == n);   /* in the pipe, unread */
	char *other = piece_get(n);
	CHECK_MSG(other != piece, "a piece the program has not read was handed out again");
	memset(other, 'y', n);
	piece_put(other);
	int fd = open(go, O_WRONLY);   /* the program reads on */
	CHECK(fd >= 0 && write(fd, "\n", 1) == 1);
	close(fd);
	size_t got = 0;
	for (int k = 0; k < 1000 && got < n; k++) {
		CHECK(proc_pump(p, 100) == 0);
		proc_out(p, &got);
	}
	size_t on = 0;
	const char *o = proc_out(p, &on);
	int same = on == n;
	for (size_t i = 0; same && i < n; i++) same = o[i] == 'x';
	CHECK_MSG(same, "the program read %zu bytes, not the piece's %zu 'x'", on, n);
	CHECK(proc_input_backlog(p) == 0);
	CHECK_MSG(piece_get(n) == piece, "the piece read is given back to the pool");
	piece_put(piece);
	proc_input(p, "", 0, 1);
	proc_wait(p, NULL, NULL, 5, &st);
	CHECK(st.exited && st.code == 0);
	proc_free(p);
	pieces_drop();
}

/* Spawned from a thread that then exits, a program keeps running (unlike
 * PR_SET_PDEATHSIG, which fires on the death of the forking thread). */
static void *spawn_thread(void *arg)
{
	char **argv = arg;
	proc_spec spec = {argv, env_path, 1 << 20, 4000};
	proc_status st;
	proc *p = NULL;
	proc_spawn(&p, &spec, &st);
	return p;
}

static void test_thread_exit(void)
{
	pid_t w = fork();
	if (w == 0) {
		/* in a fresh process: its first spawn starts its supervisor from the thread */
		char *a[] = {"sleep", "100", NULL};
		pthread_t th;
		void *p = NULL;
		pthread_create(&th, NULL, spawn_thread, a);
		pthread_join(th, &p);
		if (!p) _exit(2);
		proc_status st;
		usleep(200000);   /* a PDEATHSIG would have fired by now */
		proc_get_status(p, &st);
		pid_t pid = st.pid;
		int was_alive = alive(pid);
		proc_stop(p, PROC_STOP_INTERRUPT, 5);
		proc_wait(p, NULL, NULL, 5, &st);
		proc_free(p);
		_exit(was_alive && st.signal == SIGTERM && st.stop == PROC_STOP_INTERRUPT ? 0 : 1);
	}
	int ws = 0;
	waitpid(w, &ws, 0);
	CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "status %d", ws);
}

/* A caller killed by SIGKILL takes its program's whole tree with it. */
static void test_caller_killed(int scan)
{
	int ready[2];
	CHECK(pipe(ready) == 0);
	char s[1024], f0[128], f1[128], f2[128];
	snprintf(f0, sizeof f0, "%s", path_of("k0"));
	snprintf(f1, sizeof f1, "%s", path_of("k1"));
	snprintf(f2, sizeof f2, "%s", path_of("k2"));
	unlink(f0); unlink(f1); unlink(f2);
	snprintf(s, sizeof s,
		 "echo $$ > %s; sleep 100 & echo $! > %s; "
		 "setsid sh -c 'echo $$ > %s; exec sleep 100' </dev/null >/dev/null 2>&1 & "
		 "while [ ! -s %s ]; do sleep 0.01; done; echo ready; wait",
		 f0, f1, f2, f2);
	pid_t w = fork();
	if (w == 0) {
		close(ready[0]);
		proc_test_scan_proc = scan;
		char *a[] = {"sh", "-c", s, NULL};
		proc_spec spec = {a, env_path, 1 << 20, 4000};
		proc_status st;
		proc *p;
		if (proc_spawn(&p, &spec, &st)) _exit(1);
		size_t n = 0;
		while (!proc_pump(p, 100) && !strstr(proc_out(p, &n), "ready\n")) {}
		if (write(ready[1], "r", 1) != 1) _exit(1);
		for (;;) pause();   /* killed here */
	}
	close(ready[1]);
	char c;
	CHECK(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	pid_t p0 = (pid_t)read_num(f0), p1 = (pid_t)read_num(f1), p2 = (pid_t)read_num(f2);
	CHECK(alive(p0) && alive(p1) && alive(p2));
	kill(w, SIGKILL);
	int ws;
	waitpid(w, &ws, 0);
	CHECK_MSG(gone(p0), "scan=%d: main process", scan);
	CHECK_MSG(gone(p1), "scan=%d: its background child", scan);
	CHECK_MSG(gone(p2), "scan=%d: its setsid child", scan);
}

/* the leftovers case again with children found by scanning /proc, in a
 * fresh process (whose supervisor is started with the hook set) */
static void test_leftovers_scan(void)
{
	pid_t w = fork();
	if (w == 0) {
		proc_test_scan_proc = 1;
		test_leftovers("scan of /proc");
		_exit(t_fail ? 1 : 0);
	}
	int ws = 0;
	waitpid(w, &ws, 0);
	CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "leftovers with the /proc scan: status %d", ws);
}

/* many programs, one after another: no descriptor is left behind */
static void test_no_fd_left(void)
{
	char *a[] = {"true", NULL};
	proc_status st;
	run(a, NULL, NULL, &st, NULL, NULL);
	int fds = count_fds(), ok = 1;
	for (int i = 0; i < 100; i++) ok &= run(a, NULL, "x", &st, NULL, NULL) == 0 && st.exited && st.code == 0;
	CHECK(ok);
	CHECK_MSG(count_fds() == fds, "%d fds before, %d after", fds, count_fds());
}

int main(int argc, char **argv)
{
	t_cases(argc, argv, "test_proc", "basics spawn_errors caps stop leftovers long_lived thread_exit caller_killed caller_killed_scan leftovers_scan no_fd_left piece_pool lent_piece");
	snprintf(dir, sizeof dir, "/tmp/djc-proc.XXXXXX");
	if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
	double t0 = mono_now();
	CHECK(t0 > 0 && mono_now() >= t0);
	if (t_want("basics")) test_basics();
	if (t_want("spawn_errors")) test_spawn_errors();
	if (t_want("caps")) test_caps();
	if (t_want("stop")) test_stop();
	if (t_want("leftovers")) test_leftovers("children file");
	if (t_want("long_lived")) test_long_lived();
	if (t_want("thread_exit")) test_thread_exit();
	if (t_want("caller_killed")) test_caller_killed(0);
	if (t_want("caller_killed_scan")) test_caller_killed(1);
	if (t_want("leftovers_scan")) test_leftovers_scan();
	if (t_want("no_fd_left")) test_no_fd_left();
	if (t_want("piece_pool")) test_piece_pool();
	if (t_want("lent_piece")) test_lent_piece();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd)) {}
	return T_DONE("test_proc");
}
