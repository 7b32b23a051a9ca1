/* proc.c - run a program as a process tree that never outlives its caller
 * (contract in proc.h).
 *
 * Two halves talk over a unix stream socket:
 *  - the caller side (proc_spawn, proc_pump, ...) owns the program's pipes
 *    and does all the I/O;
 *  - the supervisor, one process per running program (kept in a small
 *    per-process pool between programs), spawns the program, signals its
 *    group on request, reaps it, kills what it left behind, and reports.
 *
 * The supervisor is forked (twice, so it is nobody's zombie) from a
 * process that may be large and multi-threaded, so it runs only system
 * calls and posix_spawn: no malloc, no stdio, no locks. It is a child
 * subreaper: every descendant of a program that is orphaned, including one
 * that called setsid(), becomes its child, so "the program's tree" is
 * exactly "the supervisor's children". It notices the caller's death by a
 * pidfd (the whole process, not the thread that forked it, unlike
 * PR_SET_PDEATHSIG) and by EOF on the socket only the caller holds. */
#include "proc.h"
#include "util/clock.h"
#include "util/piecepool.h"
#include "util/sb.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* After SIGKILL, how long the end of a program may take to be reported
 * before it is abandoned; after its end, how long its pipes may stay open
 * (a descriptor passed out of its tree) before they are closed unread. */
#define KILL_WAIT 5.0
#define DRAIN_WAIT 1.0
#define SPAWN_WAIT 60.0   /* for the supervisor's answer to a spawn (an exec) */
#define POOL_MAX 4        /* idle supervisors kept per process */
#define KILLED_MAX 1024   /* distinct processes one tree kill counts */

/* ------------------------------------------------------------ the wire */

enum {
	M_READY = 1,   /* sup -> caller: a = supervisor pid */
	M_SPAWN,       /* caller -> sup: a = argc, b = envc, len = bytes of argv then envp
	                  strings (each NUL-terminated); stdin, stdout, stderr attached */
	M_SPAWNED,     /* sup -> caller: a = pid, or 0 and b = errno */
	M_SIGNAL,      /* caller -> sup: a = signal for the running program's group */
	M_EXITED       /* sup -> caller: a = pid, b = wait status, c = leftovers killed */
};
typedef struct wire {
	int32_t type, a, b, c;
	uint64_t len;
} wire;

/* Test hook (tests/unit/test_proc.c): list a supervisor's children by
 * scanning /proc, as on a kernel without /proc/PID/task/TID/children. */
int proc_test_scan_proc;

/* ------------------------------------------------------- the supervisor */

/* Everything below up to the caller side runs in the supervisor: system
 * calls only (see the file comment). */

static ssize_t read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) return r < 0 ? -1 : (ssize_t)got;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

static void sup_send(int sock, int type, int a, int b, int c)
{
	wire w = {type, a, b, c, 0};
	while (send(sock, &w, sizeof w, MSG_NOSIGNAL) < 0 && errno == EINTR) {}
}

static long parse_pids(const char *s, size_t n, pid_t *out, long max)
{
	long k = 0;
	for (size_t i = 0; i < n && k < max;) {
		while (i < n && (s[i] < '0' || s[i] > '9')) i++;
		long v = 0;
		int any = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9') { v = v * 10 + (s[i++] - '0'); any = 1; }
		if (any && v > 0) out[k++] = (pid_t)v;
	}
	return k;
}

/* The children of process `self` by scanning /proc/PID/stat for PPid:
 * for kernels without CONFIG_PROC_CHILDREN. */
static long scan_children(pid_t self, pid_t *out, long max)
{
	struct linux_dirent64 {
		uint64_t d_ino;
		int64_t d_off;
		unsigned short d_reclen;
		unsigned char d_type;
		char d_name[];
	};
	int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) return 0;
	long k = 0;
	char buf[8192];
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, sizeof buf);
		if (n <= 0) break;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + off);
			off += d->d_reclen;
			if (d->d_name[0] < '1' || d->d_name[0] > '9') continue;
			char path[64] = "/proc/";
			size_t l = 6, nl = strlen(d->d_name);
			if (nl > 20) continue;
			memcpy(path + l, d->d_name, nl);
			memcpy(path + l + nl, "/stat", 6);
			int fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0) continue;
			char st[512];
			ssize_t r = read(fd, st, sizeof st - 1);
			close(fd);
			if (r <= 0) continue;
			st[r] = 0;
			/* "pid (comm) S ppid ...": comm may hold anything, so after its last ')' */
			char *p = NULL;
			for (char *q = st; *q; q++) if (*q == ')') p = q;
			if (!p || p[1] != ' ' || !p[2] || p[3] != ' ') continue;
			pid_t pp;
			if (parse_pids(p + 4, strlen(p + 4), &pp, 1) == 1 && pp == self && k < max)
				parse_pids(d->d_name, nl, &out[k++], 1);
		}
	}
	close(dfd);
	return k;
}

static long list_children(pid_t self, pid_t *out, long max)
{
	if (!proc_test_scan_proc) {
		char path[64];
		/* single-threaded: the supervisor's one thread has its pid as tid */
		char num[16];
		int nn = 0;
		for (pid_t v = self; v; v /= 10) num[nn++] = (char)('0' + v % 10);
		size_t l = 0;
		memcpy(path, "/proc/self/task/", 16);
		l = 16;
		while (nn) path[l++] = num[--nn];
		memcpy(path + l, "/children", 10);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			char buf[8192];
			ssize_t r = read(fd, buf, sizeof buf);
			close(fd);
			return r > 0 ? parse_pids(buf, (size_t)r, out, max) : 0;
		}
	}
	return scan_children(self, out, max);
}

/* Kill every child of the supervisor, and every process that becomes one
 * as its parent dies, until none is left; reap them all. Returns how many
 * distinct processes were killed (up to KILLED_MAX). Zombies already on
 * hand are reaped first and not counted. */
static int kill_tree(pid_t self)
{
	pid_t killed[KILLED_MAX];
	int nk = 0, empty_rounds = 0;
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, WNOHANG);
		if (r > 0) continue;
		if (r < 0 && errno == EINTR) continue;
		if (r < 0) break;   /* ECHILD: nothing of the tree is left */
		pid_t kids[512];
		long n = list_children(self, kids, 512);
		for (long i = 0; i < n; i++) {
			int seen = 0;
			for (int j = 0; j < nk; j++) if (killed[j] == kids[i]) { seen = 1; break; }
			kill(kids[i], SIGKILL);
			if (!seen && nk < KILLED_MAX) killed[nk++] = kids[i];
		}
		if (n > 0) {
			empty_rounds = 0;
			/* one of them dies (SIGKILL cannot be caught): reap it, orphaning its children to us */
			while (waitpid(-1, &st, 0) < 0 && errno == EINTR) {}
		} else {
			/* children exist but none was listed: the listing raced with a
			 * reparenting; look again shortly (bounded: 2 s) */
			if (++empty_rounds > 2000) break;
			struct timespec ms = {0, 1000000};
			nanosleep(&ms, NULL);
		}
	}
	return nk;
}

typedef struct sup_state {
	int sock;
	pid_t self;
	pid_t cur;                 /* the running program's main process, or 0 */
	int devnull;               /* on 0, 1 and 2 between programs */
	char *buf;                 /* request buffer (mmap) */
	size_t cap;
	posix_spawnattr_t attr;
} sup_state;

/* The value of NAME in envp, or NULL. */
static const char *env_of(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; *envp; envp++)
		if (!strncmp(*envp, name, n) && (*envp)[n] == '=') return *envp + n + 1;
	return NULL;
}

/* Spawn path; a file without "#!" that the kernel will not run (ENOEXEC)
 * goes to /bin/sh, as execvpe does. sh_argv has room for argc + 2. */
static int spawn_one(sup_state *s, pid_t *pid, const char *path, char *const *argv, char *const *envp, char **sh_argv)
{
	int r = posix_spawn(pid, path, NULL, &s->attr, argv, envp);
	if (r != ENOEXEC) return r;
	size_t k = 0;
	sh_argv[k++] = (char *)"/bin/sh";
	sh_argv[k++] = (char *)path;
	for (size_t i = 1; argv[i]; i++) sh_argv[k++] = argv[i];
	sh_argv[k] = NULL;
	return posix_spawn(pid, "/bin/sh", NULL, &s->attr, sh_argv, envp);
}

/* Look argv[0] up as execvpe(3) does (PATH of the program's environment,
 * "/bin:/usr/bin" without one; a denied candidate is skipped but reported
 * if nothing else is found) and spawn it. Returns 0 or an errno. */
static int spawn_path(sup_state *s, pid_t *pid, char *const *argv, char *const *envp, char **sh_argv)
{
	const char *file = argv[0];
	if (!file || !*file) return ENOENT;
	if (strchr(file, '/')) return spawn_one(s, pid, file, argv, envp, sh_argv);
	const char *path = env_of(envp, "PATH");
	if (!path) path = "/bin:/usr/bin";
	size_t fl = strlen(file);
	int denied = 0, toolong = 0;
	for (const char *p = path;; ) {
		const char *e = strchr(p, ':');
		size_t dl = e ? (size_t)(e - p) : strlen(p);
		char cand[4096];
		if (dl + 1 + fl + 1 > sizeof cand) toolong = 1;
		else {
			size_t l = 0;
			if (dl) { memcpy(cand, p, dl); l = dl; } else cand[l++] = '.';
			cand[l++] = '/';
			memcpy(cand + l, file, fl + 1);
			struct stat sb;
			if (stat(cand, &sb) == 0) {
				int r = spawn_one(s, pid, cand, argv, envp, sh_argv);
				if (r == 0) return 0;
				if (r == EACCES) denied = 1;
				else if (r != ENOENT && r != ENOTDIR) return r;
			} else if (errno == EACCES)
				denied = 1;
		}
		if (!e) break;
		p = e + 1;
	}
	return denied ? EACCES : toolong ? ENAMETOOLONG : ENOENT;
}

static void sup_spawn(sup_state *s, const wire *w, const int *fds)
{
	int err = 0;
	pid_t pid = 0;
	size_t argc = (size_t)w->a, envc = (size_t)w->b;
	/* strings, then argv, envp and the /bin/sh argv, pointer-aligned */
	size_t soff = (w->len + 15) & ~(size_t)15;
	size_t need = soff + (argc + 1 + envc + 1 + argc + 3) * sizeof(char *);
	if (w->a < 1 || w->b < 0 || w->len > ((size_t)1 << 32) || argc > (1 << 24) || envc > (1 << 24)) err = E2BIG;
	else if (need > s->cap) {
		size_t cap = (need + 65535) & ~(size_t)65535;
		void *nb = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (nb == MAP_FAILED) err = ENOMEM;
		else {
			if (s->buf) munmap(s->buf, s->cap);
			s->buf = nb;
			s->cap = cap;
		}
	}
	/* the strings follow the header on the socket: read them even if refused */
	size_t left = (size_t)w->len;
	while (left) {
		char sink[4096];
		char *dst = err ? sink : s->buf + (w->len - left);
		size_t chunk = err ? (left < sizeof sink ? left : sizeof sink) : left;
		ssize_t r = read_full(s->sock, dst, chunk);
		if (r <= 0) _exit(0);   /* the caller is gone: the loop would notice too */
		left -= (size_t)r;
	}
	char **argv = NULL, **envp = NULL, **sh_argv = NULL;
	if (!err) {
		argv = (char **)(s->buf + soff);
		envp = argv + argc + 1;
		sh_argv = envp + envc + 1;
		size_t k = 0, i = 0;
		for (size_t off = 0; off < w->len && k < argc + envc; k++) {
			char *str = s->buf + off;
			size_t l = strnlen(str, (size_t)w->len - off);
			if (off + l >= w->len) break;   /* not NUL-terminated */
			if (k < argc) argv[k] = str; else envp[k - argc] = str;
			off += l + 1;
			i = off;
		}
		if (k != argc + envc || i != w->len) err = EINVAL;
		argv[argc] = NULL;
		envp[envc] = NULL;
	}
	if (!err && s->cur) err = EBUSY;
	if (!err) {
		/* the program's stdin, stdout and stderr: posix_spawn without file
		 * actions (which would allocate) inherits 0, 1 and 2 */
		int saved = 0;
		for (int i = 0; i < 3 && !err; i++)
			if (dup2(fds[i], i) < 0) err = errno; else saved = i + 1;
		if (!err) err = spawn_path(s, &pid, argv, envp, sh_argv);
		for (int i = 0; i < saved; i++) dup2(s->devnull, i);
	}
	for (int i = 0; i < 3; i++) if (fds[i] > 2) close(fds[i]);
	if (err) pid = 0;
	s->cur = pid;
	sup_send(s->sock, M_SPAWNED, pid, err, 0);
}

/* Reap; when the running program's main process ended, kill what it left
 * and report its end. */
static void sup_reap(sup_state *s)
{
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, WNOHANG);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) return;
		if (s->cur && r == s->cur) {
			int left = kill_tree(s->self);
			sup_send(s->sock, M_EXITED, r, st, left);
			s->cur = 0;
		}
	}
}

/* The caller is gone (or hung up): nothing of its program may outlive it. */
static void sup_quit(sup_state *s)
{
	if (s->cur) kill(-s->cur, SIGKILL);
	kill_tree(s->self);
	_exit(0);
}

/* The supervisor's descriptors: /dev/null on 0, 1 and 2, the socket on
 * 3, /dev/null again on 4 (s->devnull), nothing else of the caller's open
 * (database connections, other programs' pipes, a worker's report pipe). */
static void sup_fds(sup_state *s, int sock)
{
	int hi = fcntl(sock, F_DUPFD_CLOEXEC, 3);   /* the socket may be 0, 1 or 2 */
	int dn = open("/dev/null", O_RDWR);
	if (hi < 0 || dn < 0) _exit(1);
	for (int i = 0; i < 3; i++) if (dn != i) dup2(dn, i);
	if (hi != 3 && dup2(hi, 3) < 0) _exit(1);
	s->sock = 3;
	if (dup2(0, 4) < 0) _exit(1);
	s->devnull = 4;
	if (syscall(SYS_close_range, 5, ~0U, 0) < 0) {
		long max = sysconf(_SC_OPEN_MAX);
		for (long fd = 5; fd < (max > 0 && max < 65536 ? max : 65536); fd++) close((int)fd);
	}
	fcntl(s->sock, F_SETFD, FD_CLOEXEC);
	fcntl(s->devnull, F_SETFD, FD_CLOEXEC);
}

/* Programs start in a process group of their own, with no signal
 * blocked and every disposition default (the caller's SIG_IGN, SIGPIPE
 * and others, stays here). */
static void sup_spawn_attr(sup_state *s)
{
	sigset_t none, all;
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_init(&s->attr);
	posix_spawnattr_setflags(&s->attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setpgroup(&s->attr, 0);
	posix_spawnattr_setsigmask(&s->attr, &none);
	posix_spawnattr_setsigdefault(&s->attr, &all);
}

/* One message of the caller (with up to 3 descriptors: a spawn's stdin,
 * stdout and stderr) and what it asks. A hang-up or a protocol error ends
 * the supervisor (sup_quit). */
static void sup_message(sup_state *s)
{
	wire w;
	int fds[3] = {-1, -1, -1};
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	struct iovec iov = {&w, sizeof w};
	struct msghdr mh = {0};
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof cbuf;
	ssize_t r = recvmsg(s->sock, &mh, MSG_CMSG_CLOEXEC);
	if (r < 0 && errno == EINTR) return;
	if (r <= 0) sup_quit(s);   /* EOF: the caller hung up or died */
	int nfd = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			int got[8];
			memcpy(got, CMSG_DATA(c), (size_t)(n < 8 ? n : 8) * sizeof(int));
			for (int i = 0; i < n && i < 8; i++) { if (nfd < 3) fds[nfd++] = got[i]; else close(got[i]); }
		}
	if ((size_t)r < sizeof w && read_full(s->sock, (char *)&w + r, sizeof w - (size_t)r) != (ssize_t)(sizeof w - (size_t)r))
		sup_quit(s);
	if (w.type == M_SPAWN && nfd == 3) sup_spawn(s, &w, fds);
	else {
		for (int i = 0; i < nfd; i++) close(fds[i]);
		if (w.type == M_SPAWN) sup_quit(s);   /* a protocol error: trust nothing */
		if (w.type == M_SIGNAL && s->cur) kill(-s->cur, w.a);
	}
}

static void sup_main(int sock, pid_t caller) __attribute__((noreturn));
static void sup_main(int sock, pid_t caller)
{
	sup_state s = {0};
	s.sock = sock;
	s.self = getpid();
	/* out of the caller's process group: a group kill of the caller (or the
	 * terminal's ^C) must leave it to clean up. It stays in the caller's
	 * session, so programs keep the caller's controlling terminal. */
	setpgid(0, 0);
	prctl(PR_SET_NAME, "djc-supervise");
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);   /* SIGTERM & co. do nothing; SIGCHLD comes by signalfd */
	sup_fds(&s, sock);
	int pfd = -1;
#ifdef SYS_pidfd_open
	pfd = (int)syscall(SYS_pidfd_open, caller, 0);
	if (pfd < 0 && errno == ESRCH) _exit(0);
	if (pfd >= 0) fcntl(pfd, F_SETFD, FD_CLOEXEC);
#endif
	(void)caller;
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) _exit(1);
	sup_spawn_attr(&s);
	sup_send(s.sock, M_READY, s.self, 0, 0);
	for (;;) {
		struct pollfd pf[3] = {{s.sock, POLLIN, 0}, {sfd, POLLIN, 0}, {pfd, POLLIN, 0}};
		if (poll(pf, pfd >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR) continue;
			sup_quit(&s);
		}
		if (pfd >= 0 && pf[2].revents) sup_quit(&s);   /* the caller process ended */
		if (pf[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof si) > 0) {}
			sup_reap(&s);
		}
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) sup_message(&s);
	}
}

/* -------------------------------------------------------- caller side */

typedef struct sup {
	pid_t pid;          /* the supervisor (not our child: it was double-forked) */
	pid_t owner;        /* the process that started it */
	int sock;
	struct sup *next;
} sup;

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static sup *pool;
static int pool_n;

static void sup_discard(sup *s)
{
	if (!s) return;
	/* it sees EOF, kills whatever it still runs, and exits */
	close(s->sock);
	free(s);
}

/* Wait until sock is readable or `until` passes. */
static int wait_readable(int fd, double until)
{
	for (;;) {
		double left = until - mono_now();
		if (left <= 0) return 0;
		struct pollfd pf = {fd, POLLIN, 0};
		int r = poll(&pf, 1, left > 1000 ? 1000000 : (int)(left * 1000) + 1);
		if (r > 0) return 1;
		if (r < 0 && errno != EINTR) return -1;
	}
}

/* Start a supervisor for this process. NULL with errno set on failure. */
static sup *sup_start(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) return NULL;
	pid_t caller = getpid();
	pid_t mid = fork();
	if (mid < 0) { int e = errno; close(sv[0]); close(sv[1]); errno = e; return NULL; }
	if (mid == 0) {
		/* double fork: the supervisor is not our child, so it is never our
		 * zombie and never reaped by a waitpid(-1) of the caller's own */
		pid_t p = fork();
		if (p == 0) sup_main(sv[1], caller);
		_exit(p < 0 ? 1 : 0);
	}
	close(sv[1]);
	int st;
	while (waitpid(mid, &st, 0) < 0 && errno == EINTR) {}
	wire w;
	if (wait_readable(sv[0], mono_now() + SPAWN_WAIT) <= 0 || read_full(sv[0], &w, sizeof w) != (ssize_t)sizeof w ||
	    w.type != M_READY) {
		close(sv[0]);
		errno = ECHILD;
		return NULL;
	}
	sup *s = xcalloc(1, sizeof *s);
	s->pid = w.a;
	s->owner = caller;
	s->sock = sv[0];
	return s;
}

/* An idle supervisor of this process, or a new one. */
static sup *sup_get(void)
{
	pid_t me = getpid();
	sup *s = NULL;
	pthread_mutex_lock(&pool_mu);
	/* after a fork the pool belongs to the parent: let go of our copies */
	while (pool && pool->owner != me) {
		sup *x = pool;
		pool = x->next;
		pool_n--;
		sup_discard(x);
	}
	if (pool) { s = pool; pool = s->next; pool_n--; }
	pthread_mutex_unlock(&pool_mu);
	return s ? s : sup_start();
}

static void sup_put(sup *s)
{
	pthread_mutex_lock(&pool_mu);
	if (s->owner == getpid() && pool_n < POOL_MAX) {
		s->next = pool;
		pool = s;
		pool_n++;
		s = NULL;
	}
	pthread_mutex_unlock(&pool_mu);
	sup_discard(s);
}

/* A large value vmspliced into the program's stdin: the pipe holds its
 * pages, not a copy, until the program reads them, so its buffer is kept
 * (not freed, not written) until then: the pipe's bytes sent up to its
 * end. */
typedef struct {
	char *s;
	uint64_t end;
	int piece;   /* s is a piece_get buffer: piece_put, not free */
} lent;

/* Input queued for stdin: copied (b.cap nonzero: appended to), or handed
 * over (b.cap 0: proc_input_take, or proc_input_piece with piece set). */
typedef struct {
	sb_t b;
	int piece;
} inq_ent;

/* Let go of a queued buffer (written, or never to be). */
static void ent_free(inq_ent *e)
{
	if (e->piece) piece_put(e->b.s);
	else sb_free(&e->b);
	*e = (inq_ent){SB_INIT, 0};
}

/* DJC_SERVE_LEND=0: large values are copied into the pipe like the rest,
 * for a program (or something between djc and it) that moves its stdin on
 * with splice(2) or tee(2) instead of reading it: the pages lent would
 * travel on after djc saw them read, and djc reuses its memory. */
static int lend_off(void)
{
	const char *e = getenv("DJC_SERVE_LEND");
	return e && !strcmp(e, "0");
}

struct proc {
	sup *s;
	int in, out, err;          /* our ends of its pipes, -1 once closed */
	inq_ent *inq;              /* input not yet written, in order: each piece */
	size_t inq_n, inq_cap;     /* its own buffer (copied, or handed over) */
	size_t inq_head, inpos;    /* the first piece not all written, and how much of it is */
	int in_close;              /* close stdin once inq is written */
	int in_size;               /* stdin's pipe size before grow_input grew it, 0 when not grown */
	int out_size;              /* stdout's before proc_out_expect grew it, 0 when not grown */
	int no_lend;               /* stdin took no vmsplice (not a pipe): large values are copied too */
	uint64_t in_sent;          /* bytes put into stdin's pipe, in all */
	lent *held;                /* large values in the pipe by reference, not yet read (release_lent) */
	size_t nheld, held_cap;
	proc_also also;            /* the caller's descriptors, polled with ours (fill NULL: none) */
	sb_t outb;
	size_t out_cap;
	char *tail;                /* stderr tail */
	size_t tail_cap, tail_len;
	size_t err_total;          /* bytes read from stderr (since proc_err_clear) */
	char rbuf[8 * sizeof(wire)];   /* the supervisor's messages, as they come */
	size_t rlen;
	proc_status st;
	int over;
	double grace, term_at, kill_at, drain_until;
};

static void close_fd(int *fd)
{
	if (*fd >= 0) close(*fd);
	*fd = -1;
}

/* Receive what the supervisor sent (without blocking); 0 on EOF/error. */
static int sup_recv(proc *p)
{
	for (;;) {
		if (p->rlen == sizeof p->rbuf) return 1;
		ssize_t r = recv(p->s->sock, p->rbuf + p->rlen, sizeof p->rbuf - p->rlen, MSG_DONTWAIT);
		if (r > 0) { p->rlen += (size_t)r; continue; }
		if (r < 0 && errno == EINTR) continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 1;
		return 0;
	}
}

static int sup_take(proc *p, wire *w)
{
	if (p->rlen < sizeof *w) return 0;
	memcpy(w, p->rbuf, sizeof *w);
	memmove(p->rbuf, p->rbuf + sizeof *w, p->rlen - sizeof *w);
	p->rlen -= sizeof *w;
	return 1;
}

static void on_wire(proc *p, const wire *w)
{
	if (w->type != M_EXITED || w->a != p->st.pid || p->st.exited) return;
	p->st.exited = 1;
	if (WIFEXITED(w->b)) p->st.code = WEXITSTATUS(w->b);
	else if (WIFSIGNALED(w->b)) p->st.signal = WTERMSIG(w->b);
	p->st.leftovers = w->c;
	p->drain_until = mono_now() + DRAIN_WAIT;
	close_fd(&p->in);
}

static int sup_signal(proc *p, int sig)
{
	wire w = {M_SIGNAL, sig, 0, 0, 0};
	ssize_t r;
	while ((r = send(p->s->sock, &w, sizeof w, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
	return r == (ssize_t)sizeof w ? 0 : -1;
}

/* We cannot see the program's end (the supervisor died or SIGKILL did not
 * take): stop waiting. Its supervisor is discarded: it kills the tree on
 * EOF if it still can. */
static void abandon(proc *p)
{
	if (!p->st.exited && p->st.pid > 0) kill(-p->st.pid, SIGKILL);   /* in case the supervisor is gone */
	p->st.abandoned = 1;
	close_fd(&p->in);
	close_fd(&p->out);
	close_fd(&p->err);
	p->over = 1;
}

static int send_spawn(sup *s, const proc_spec *spec, const int fds[3])
{
	size_t argc = 0, envc = 0;
	sb_t b = SB_INIT;
	wire w = {M_SPAWN, 0, 0, 0, 0};
	sb_addn(&b, (const char *)&w, sizeof w);
	for (; spec->argv[argc]; argc++) sb_addn(&b, spec->argv[argc], strlen(spec->argv[argc]) + 1);
	for (; spec->envp && spec->envp[envc]; envc++) sb_addn(&b, spec->envp[envc], strlen(spec->envp[envc]) + 1);
	w.a = (int32_t)argc;
	w.b = (int32_t)envc;
	w.len = b.len - sizeof w;
	memcpy(b.s, &w, sizeof w);
	char cbuf[CMSG_SPACE(3 * sizeof(int))];
	memset(cbuf, 0, sizeof cbuf);
	struct iovec iov = {b.s, b.len};
	struct msghdr mh = {0};
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cbuf;
	mh.msg_controllen = sizeof cbuf;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(3 * sizeof(int));
	memcpy(CMSG_DATA(c), fds, 3 * sizeof(int));
	size_t off = 0;
	int rc = 0;
	while (off < b.len) {
		ssize_t r = off ? send(s->sock, b.s + off, b.len - off, MSG_NOSIGNAL) : sendmsg(s->sock, &mh, MSG_NOSIGNAL);
		if (r < 0 && errno == EINTR) continue;
		if (r <= 0) { rc = -1; break; }
		off += (size_t)r;
	}
	sb_free(&b);
	return rc;
}

int proc_spawn(proc **out, const proc_spec *spec, proc_status *st)
{
	*out = NULL;
	memset(st, 0, sizeof *st);
	int pin[2] = {-1, -1}, pout[2] = {-1, -1}, perr[2] = {-1, -1};
	if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC)) {
		st->spawn_failed = PROC_SPAWN_PIPES;
		st->spawn_errno = errno;
		for (int i = 0; i < 2; i++) { close_fd(&pin[i]); close_fd(&pout[i]); close_fd(&perr[i]); }
		return -1;
	}
	int fds[3] = {pin[0], pout[1], perr[1]};
	/* a pooled supervisor may have died since (killed by someone): then
	 * its socket fails at once, and a fresh one is tried */
	sup *s = NULL;
	wire w = {0};
	proc *p = NULL;
	for (int attempt = 0; attempt < 2; attempt++) {
		s = sup_get();
		if (!s) { st->spawn_errno = errno; break; }
		p = xcalloc(1, sizeof *p);
		p->s = s;
		p->no_lend = lend_off();
		if (send_spawn(s, spec, fds) == 0) {
			int got = 0;
			while (!got && wait_readable(s->sock, mono_now() + SPAWN_WAIT) > 0 && sup_recv(p))
				while (!got && sup_take(p, &w)) got = w.type == M_SPAWNED;
			if (got) break;
		}
		st->spawn_errno = ECHILD;
		sup_discard(s);
		s = NULL;
		free(p);
		p = NULL;
	}
	close_fd(&fds[0]);
	close_fd(&fds[1]);
	close_fd(&fds[2]);
	if (!s || w.a <= 0) {
		close_fd(&pin[1]);
		close_fd(&pout[0]);
		close_fd(&perr[0]);
		if (s) {
			st->spawn_failed = PROC_SPAWN_EXEC;
			st->spawn_errno = w.b;
			sup_put(s);
			free(p);
		} else
			st->spawn_failed = PROC_SPAWN_SUPERVISOR;
		return -1;
	}
	p->in = pin[1];
	p->out = pout[0];
	p->err = perr[0];
	fcntl(p->in, F_SETFL, O_NONBLOCK);
	fcntl(p->out, F_SETFL, O_NONBLOCK);
	fcntl(p->err, F_SETFL, O_NONBLOCK);
	p->out_cap = spec->out_cap;
	p->tail_cap = spec->err_tail > PROC_TAIL_MAX ? PROC_TAIL_MAX : spec->err_tail;
	p->tail = p->tail_cap ? xmalloc(p->tail_cap) : NULL;
	p->st.pid = w.a;
	*st = p->st;
	*out = p;
	return 0;
}

/* The last piece of the queue, to append copies to: a new one unless the
 * last was copied into (a handed-over buffer stays as it came). */
static sb_t *inq_tail(proc *p, int copied)
{
	if (p->inq_n > p->inq_head && copied && p->inq[p->inq_n - 1].b.cap) return &p->inq[p->inq_n - 1].b;
	if (p->inq_head && p->inq_n == p->inq_cap) {
		/* the written pieces' places are taken by the rest */
		memmove(p->inq, p->inq + p->inq_head, (p->inq_n - p->inq_head) * sizeof *p->inq);
		p->inq_n -= p->inq_head;
		p->inq_head = 0;
	}
	if (p->inq_n == p->inq_cap) {
		p->inq_cap = p->inq_cap ? 2 * p->inq_cap : 4;
		p->inq = xrealloc(p->inq, p->inq_cap * sizeof *p->inq);
	}
	inq_ent *e = &p->inq[p->inq_n++];
	*e = (inq_ent){SB_INIT, 0};
	return &e->b;
}

void proc_input(proc *p, const char *buf, size_t n, int close_after)
{
	if (p->in >= 0 && n) sb_addn(inq_tail(p, 1), buf, n);
	if (close_after) p->in_close = 1;
}

/* A value of PIPE_GROW_AT bytes or more to write: the program's stdin
 * pipe grows from the kernel's 64 KiB to PIPE_BIG (the most
 * /proc/sys/fs/pipe-max-size lets a user ask by default) while it is
 * written. A 10 MiB value crossed a 64 KiB pipe in 160 turns, each a switch
 * to the reader and back: a third of what a Python make of such values
 * cost beyond the C make (bench/py-blob.sh, MariaDB). The kernel charges a
 * pipe's size, not the data in it, to the user's pipe pages
 * (pipe-user-pages-soft, 64 MiB by default; past it every new pipe of the
 * user gets 8 KiB), so the pipe goes back to its size (fit_input) once
 * nothing large is left to write and it holds no more than that size: a
 * host charges 1 MiB only per program with a large value in flight. Where
 * the pages are spent the kernel refuses to grow it, and it stays as it
 * is. */
#define PIPE_GROW_AT (256 * 1024)
#define PIPE_BIG (1024 * 1024)
static void grow_input(proc *p)
{
	int was = fcntl(p->in, F_GETPIPE_SZ);
	if (was > 0 && was < PIPE_BIG && fcntl(p->in, F_SETPIPE_SZ, PIPE_BIG) >= 0) p->in_size = was;
}

/* Back to its size once what is queued is small (the kernel refuses with
 * EBUSY while the pipe holds more than that: tried again at the next
 * write). */
static void fit_input(proc *p)
{
	size_t left = 0;
	for (size_t i = p->inq_head; i < p->inq_n && left < PIPE_GROW_AT; i++)
		left += p->inq[i].b.len - (i == p->inq_head ? p->inpos : 0);
	if (left >= PIPE_GROW_AT) return;
	if (fcntl(p->in, F_SETPIPE_SZ, p->in_size) >= 0 || errno != EBUSY) p->in_size = 0;
}

void proc_input_expect(proc *p, size_t n)
{
	if (n >= PIPE_GROW_AT && p->in >= 0 && !p->in_size) grow_input(p);
}

/* proc_input_take and proc_input_piece: buf (piece: from piece_get) queued. */
static void input_take(proc *p, char *buf, size_t n, int piece)
{
	if (n >= PIPE_GROW_AT && p->in >= 0 && !p->in_size) grow_input(p);
	if (p->in < 0 || !n) {
		if (piece) piece_put(buf);
		else free(buf);
		return;
	}
	sb_t *b = inq_tail(p, 0);
	b->s = buf;
	b->len = n;
	b->cap = 0;   /* not to be appended to */
	p->inq[p->inq_n - 1].piece = piece;
}

void proc_input_take(proc *p, char *buf, size_t n) { input_take(p, buf, n, 0); }
void proc_input_piece(proc *p, char *buf, size_t n) { input_take(p, buf, n, 1); }

static int inq_pending(const proc *p) { return p->inq_head < p->inq_n; }

/* A piece written by reference (vmsplice) rather than copied into the
 * pipe: a large value handed over (proc_input_take). The pipe took a 10
 * MiB value in 3.0-3.2 ms so, 5.5-8.3 ms by write(2) (a C writer and a
 * Python reader, 24 values of 10 MiB, alternating): the kernel neither
 * allocates the pipe's pages nor copies into them. */
static int lends(const proc *p, const inq_ent *e) { return !p->no_lend && !e->b.cap && e->b.len >= PIPE_GROW_AT; }

/* Keep a lent value's buffer until the program read it (its end is what
 * the pipe was sent so far: the caller counted it in in_sent). */
static void hold(proc *p, char *buf, int piece)
{
	if (p->nheld == p->held_cap) {
		p->held_cap = p->held_cap ? 2 * p->held_cap : 4;
		p->held = xrealloc(p->held, p->held_cap * sizeof *p->held);
	}
	p->held[p->nheld++] = (lent){buf, p->in_sent, piece};
}

/* Free the lent values the program has read: what the pipe still holds
 * (FIONREAD, on either end) is the last of what was sent. With stdin
 * closed nothing tells, and they wait for proc_free. */
static void release_lent(proc *p)
{
	int unread;
	if (!p->nheld || p->in < 0 || ioctl(p->in, FIONREAD, &unread) < 0 || unread < 0) return;
	uint64_t done = p->in_sent - (uint64_t)unread;
	size_t k = 0;
	for (; k < p->nheld && p->held[k].end <= done; k++) {
		if (p->held[k].piece) piece_put(p->held[k].s);
		else free(p->held[k].s);
	}
	memmove(p->held, p->held + k, (p->nheld - k) * sizeof *p->held);
	p->nheld -= k;
}

size_t proc_input_backlog(proc *p)
{
	/* what the program read is given back first: a streamed value's
	 * pieces go back to their pool as it reads, not at the next pump */
	release_lent(p);
	size_t left = 0;
	for (size_t i = p->inq_head; i < p->inq_n; i++) left += p->inq[i].b.len - (i == p->inq_head ? p->inpos : 0);
	int unread;
	if (p->nheld && p->in >= 0 && ioctl(p->in, FIONREAD, &unread) == 0 && unread > 0) left += (size_t)unread;
	return left;
}

/* The pieces written (w bytes from inq_head/inpos on) are freed. */
static void inq_consume(proc *p, size_t w)
{
	while (w && inq_pending(p)) {
		inq_ent *e = &p->inq[p->inq_head];
		size_t left = e->b.len - p->inpos;
		if (w < left) {
			p->inpos += w;
			return;
		}
		w -= left;
		if (lends(p, e)) hold(p, e->b.s, e->piece);
		else ent_free(e);
		p->inq_head++;
		p->inpos = 0;
	}
}

static void inq_clear(proc *p)
{
	/* a lent value partly in the pipe may still be read: kept (to
	 * proc_free, as stdin is closed next) */
	if (inq_pending(p) && p->inpos && lends(p, &p->inq[p->inq_head])) {
		hold(p, p->inq[p->inq_head].b.s, p->inq[p->inq_head].piece);
		p->inq[p->inq_head++] = (inq_ent){SB_INIT, 0};
	}
	while (inq_pending(p)) ent_free(&p->inq[p->inq_head++]);
	p->inq_head = p->inq_n = p->inpos = 0;
}

/* Write queued input, several pieces a call (a key's line and the values
 * after it). A program that closed its stdin makes the write
 * EPIPE. Where SIGPIPE is ignored (djc_populate and djc_worker ignore it
 * while they run: signals.h) the write just fails, and one look at the
 * disposition is all it costs; else
 * SIGPIPE is blocked in this thread around the write and a SIGPIPE it
 * raised is taken back, so the caller's disposition is never touched (three
 * system calls more per write: a serve program gets a write per key). */
static void write_input(proc *p)
{
	struct sigaction now;
	int guard = sigaction(SIGPIPE, NULL, &now) != 0 || now.sa_handler != SIG_IGN;
	sigset_t pipe_set, old, pending;
	int was_pending = 0;
	if (guard) {
		sigemptyset(&pipe_set);
		sigaddset(&pipe_set, SIGPIPE);
		pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
		sigpending(&pending);
		was_pending = sigismember(&pending, SIGPIPE);
	}
	if (p->in_size) fit_input(p);
	ssize_t w;
	for (;;) {
		/* as much as the pipe takes: a fetch of many rows with small
		 * values queues two pieces a row; the pieces copied go by
		 * writev, the large values lent by vmsplice, each run of
		 * pieces alike in one call */
		struct iovec iov[64];
		int niov = 0, lend = lends(p, &p->inq[p->inq_head]);
		size_t want = 0;
		for (size_t i = p->inq_head; i < p->inq_n && niov < 64 && lends(p, &p->inq[i]) == lend; i++, niov++) {
			size_t off = i == p->inq_head ? p->inpos : 0;
			iov[niov].iov_base = p->inq[i].b.s + off;
			iov[niov].iov_len = p->inq[i].b.len - off;
			want += iov[niov].iov_len;
		}
		w = lend ? vmsplice(p->in, iov, (unsigned long)niov, SPLICE_F_NONBLOCK) : writev(p->in, iov, niov);
		if (w < 0 && lend && !p->inpos && (errno == EBADF || errno == EINVAL || errno == ENOSYS || errno == EPERM)) {
			p->no_lend = 1;   /* not a pipe (or no vmsplice here): copied like the rest */
			continue;
		}
		if (w > 0) {
			p->in_sent += (uint64_t)w;
			inq_consume(p, (size_t)w);
		}
		if (w <= 0 || (size_t)w < want || !inq_pending(p)) break;
	}
	if (w < 0 && errno != EAGAIN && errno != EINTR) {
		if (guard && errno == EPIPE && !was_pending) {
			struct timespec zero = {0, 0};
			sigtimedwait(&pipe_set, NULL, &zero);
		}
		inq_clear(p);   /* it will not read the rest */
		p->in_close = 1;
	}
	if (guard) pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!inq_pending(p)) {
		p->inq_head = p->inq_n = p->inpos = 0;
		if (p->in_close) close_fd(&p->in);
	}
}

#define READ_OUT 65536   /* the least read_out reads stdout in */

/* The readers below stop at a read shorter than their buffer: the pipe
 * held no more then, and poll says when it does (a further read would
 * mostly fail with EAGAIN: one system call per answer for nothing). */
static void read_out(proc *p)
{
	for (int i = 0; i < 16; i++) {   /* bounded, so stderr and the supervisor get their turn */
		/* straight into outb, not through a buffer of its own (a
		 * program's 1 MiB value was copied twice) */
		sb_reserve(&p->outb, READ_OUT);
		size_t room = p->outb.cap - p->outb.len - 1;
		ssize_t r = read(p->out, p->outb.s + p->outb.len, room);
		if (r > 0) {
			if (p->st.too_big || (p->out_cap && p->outb.len + (size_t)r > p->out_cap)) p->st.too_big = 1;
			else p->outb.len += (size_t)r;
			p->outb.s[p->outb.len] = 0;
			if ((size_t)r < room) return;
			continue;
		}
		if (r < 0 && errno == EINTR) continue;
		if (r < 0 && errno == EAGAIN) return;
		close_fd(&p->out);
		return;
	}
}

static void read_err(proc *p)
{
	char buf[65536];
	for (int i = 0; i < 16; i++) {
		ssize_t r = read(p->err, buf, sizeof buf);
		if (r > 0) {
			size_t n = (size_t)r, cap = p->tail_cap;
			p->err_total += n;
			if (cap && n >= cap) {
				memcpy(p->tail, buf + n - cap, cap);
				p->tail_len = cap;
			} else if (cap) {
				if (p->tail_len + n > cap) {
					size_t drop = p->tail_len + n - cap;
					memmove(p->tail, p->tail + drop, p->tail_len - drop);
					p->tail_len -= drop;
				}
				memcpy(p->tail + p->tail_len, buf, n);
				p->tail_len += n;
			}
			if (n < sizeof buf) return;
			continue;
		}
		if (r < 0 && errno == EINTR) continue;
		if (r < 0 && errno == EAGAIN) return;
		close_fd(&p->err);
		return;
	}
}

int proc_pump(proc *p, int timeout_ms)
{
	if (p->over) return 1;
	release_lent(p);
	wire w;
	while (sup_take(p, &w)) on_wire(p, &w);   /* what came with the spawn's answer */
	/* the clock is read only for a deadline (a stop's, the drain's after
	 * the end): a running program's pump, twice a key, reads none (a
	 * read cost 0.23 us under kvm-clock) */
	int timed = p->st.stop || p->st.exited;
	double now = timed ? mono_now() : 0;
	/* deadlines: a stop's grace, SIGKILL's, the pipes' after the end */
	if (!p->st.exited && p->st.stop) {
		if (!p->st.killed && now >= p->term_at + p->grace) {
			p->st.killed = 1;
			p->kill_at = now;
			if (sup_signal(p, SIGKILL)) { abandon(p); return 1; }
		} else if (p->st.killed && now >= p->kill_at + KILL_WAIT) {
			abandon(p);
			return 1;
		}
	}
	if (p->st.exited && ((p->out < 0 && p->err < 0) || now >= p->drain_until)) {
		close_fd(&p->out);
		close_fd(&p->err);
		p->over = 1;
		return 1;
	}
	double next = now + timeout_ms / 1000.0;
	if (!p->st.exited && p->st.stop) {
		double d = p->st.killed ? p->kill_at + KILL_WAIT : p->term_at + p->grace;
		if (d < next) next = d;
	}
	if (p->st.exited && p->drain_until < next) next = p->drain_until;
	/* input is written at once where the pipe takes it (it mostly
	 * does: a key's line), so poll waits for the answer alone; what the
	 * pipe did not take waits for POLLOUT */
	if (p->in >= 0 && inq_pending(p)) write_input(p);
	struct pollfd pf[4 + PROC_ALSO_MAX];
	int np = 0, ii = -1, io = -1, ie = -1, is = -1, ia = 0, na = 0;
	if (p->in >= 0 && (inq_pending(p) || p->in_close)) { ii = np; pf[np].fd = p->in; pf[np++].events = POLLOUT; }
	if (p->out >= 0) { io = np; pf[np].fd = p->out; pf[np++].events = POLLIN; }
	if (p->err >= 0) { ie = np; pf[np].fd = p->err; pf[np++].events = POLLIN; }
	if (!p->st.exited) { is = np; pf[np].fd = p->s->sock; pf[np++].events = POLLIN; }
	if (p->also.fill) {
		ia = np;
		na = p->also.fill(p->also.arg, pf + np, PROC_ALSO_MAX);
		np += na;
	}
	/* timeout_ms 0 is a look without waiting (a serve loop asks between
	 * keys); else round up so a deadline is not polled for in a busy loop */
	int ms = timeout_ms <= 0 ? 0 : timed ? (int)((next - now) * 1000) + 1 : timeout_ms;
	if (ms < 0) ms = 0;
	int r = np ? poll(pf, (nfds_t)np, ms) : 0;
	if (!np) { struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L}; nanosleep(&ts, NULL); }
	if (r <= 0) return 0;
	if (ii >= 0 && pf[ii].revents) {
		if (inq_pending(p)) write_input(p);
		else if (p->in_close) close_fd(&p->in);
	}
	if (io >= 0 && pf[io].revents) {
		read_out(p);
		release_lent(p);   /* it answers after reading what it was sent */
	}
	if (ie >= 0 && pf[ie].revents) read_err(p);
	if (is >= 0 && pf[is].revents) {
		int alive = sup_recv(p);
		while (sup_take(p, &w)) on_wire(p, &w);
		if (!alive && !p->st.exited) abandon(p);   /* the supervisor died under it */
	}
	if (na) p->also.ready(p->also.arg, pf + ia, na);
	return p->over;
}

void proc_poll_also(proc *p, const proc_also *also)
{
	p->also = also ? *also : (proc_also){NULL, NULL, NULL};
}

void proc_stop(proc *p, int reason, double grace)
{
	if (p->over || p->st.exited || p->st.stop || !reason) return;
	p->st.stop = reason;
	p->st.termed = 1;
	p->grace = grace < 0 ? 0 : grace;
	p->term_at = mono_now();
	if (sup_signal(p, SIGTERM)) abandon(p);
}

void proc_wait(proc *p, proc_check should_stop, void *arg, double grace, proc_status *st)
{
	while (!p->over) {
		if (!p->st.stop && !p->st.exited) {
			int r = p->st.too_big ? PROC_STOP_TOO_BIG : should_stop ? should_stop(arg) : PROC_RUN;
			if (r) proc_stop(p, r, grace);
		}
		proc_pump(p, PROC_POLL_MS);
	}
	*st = p->st;
}

char *proc_out(proc *p, size_t *n)
{
	*n = p->outb.len;
	if (!p->outb.s) sb_addn(&p->outb, "", 0);
	return p->outb.s;
}

const char *proc_err(const proc *p, size_t *n)
{
	*n = p->tail_len;
	return p->tail;
}

size_t proc_err_cut(const proc *p)
{
	return p->err_total - p->tail_len;
}

void proc_err_clear(proc *p)
{
	p->tail_len = 0;
	p->err_total = 0;
}

/* The most of its output buffer a program keeps once all of it was
 * consumed. */
#define OUT_KEEP (256 << 10)

/* A large raw value coming grows stdout's pipe as grow_input grows
 * stdin's: a 1 MiB answer crossed the 64 KiB pipe in 16 reads, each a
 * switch to the program and back (bench/py-blob.sh); it goes back to its
 * size once the answer was consumed (proc_out_consume). */
void proc_out_expect(proc *p, size_t n)
{
	if (n <= p->outb.len) return;
	sb_reserve(&p->outb, n - p->outb.len);
	if (n - p->outb.len >= PIPE_GROW_AT && p->out >= 0 && !p->out_size) {
		int was = fcntl(p->out, F_GETPIPE_SZ);
		if (was > 0 && was < PIPE_BIG && fcntl(p->out, F_SETPIPE_SZ, PIPE_BIG) >= 0) p->out_size = was;
	}
}

void proc_out_consume(proc *p, size_t n)
{
	if (n > p->outb.len) n = p->outb.len;
	memmove(p->outb.s, p->outb.s + n, p->outb.len - n + 1);
	p->outb.len -= n;
	/* A large answer's buffer (a 1 MiB value grew it to 2 MiB) given
	 * back once read, not kept for the next answer: kept, it stayed in
	 * the heap where the key's 10 MiB value had been, the next key's
	 * value went above it, and the worker's memory grew by its size
	 * (bench/results-2026-12-07.md, last section). */
	if (!p->outb.len && p->outb.cap > OUT_KEEP) sb_free(&p->outb);
	/* stdout's pipe back to its size (the kernel refuses with EBUSY
	 * while it holds more: tried again at the next consume) */
	if (!p->outb.len && p->out_size && p->out >= 0 &&
	    (fcntl(p->out, F_SETPIPE_SZ, p->out_size) >= 0 || errno != EBUSY))
		p->out_size = 0;
}

void proc_get_status(const proc *p, proc_status *st)
{
	*st = p->st;
}

int proc_out_closed(const proc *p)
{
	return p->out < 0;
}

void proc_free(proc *p)
{
	if (!p) return;
	if (!p->over) {
		/* still running: no grace, SIGKILL now (bounded by KILL_WAIT) */
		if (!p->st.exited && !p->st.stop) proc_stop(p, PROC_STOP_INTERRUPT, 0);
		p->grace = 0;
		while (!proc_pump(p, PROC_POLL_MS)) {}
	}
	close_fd(&p->in);
	close_fd(&p->out);
	close_fd(&p->err);
	if (p->st.abandoned) sup_discard(p->s);
	else sup_put(p->s);
	inq_clear(p);
	free(p->inq);
	/* our end of its pipe is closed: a value lent to it may still be in
	 * it (a program that left stdin to a child of its own): freed, not
	 * kept for reuse */
	for (size_t i = 0; i < p->nheld; i++) {
		if (p->held[i].piece) piece_free(p->held[i].s);
		else free(p->held[i].s);
	}
	free(p->held);
	sb_free(&p->outb);
	free(p->tail);
	free(p);
}
