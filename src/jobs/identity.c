/* identity.c - who holds a job (host, user, pid), the fencing tokens
 * that tell reservations apart, the code version a job ran, and
 * DataJoint's truncation of error messages. */
#include "jobs.h"
#include "util/config.h"
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ERR_LEN 2047
#define TRUNC "...truncated"

/* Tokens come from a generator of this process: a random seed read once
 * (a system call per claim cost a worker a tenth of its time at batch 1),
 * then seed + n * an odd constant through splitmix64's mixing steps, all
 * taken mod 2^63 (a xorshift and a multiplication by an odd number are
 * each a permutation of the 63-bit numbers), so one process never repeats
 * a token (0, which no token is, is skipped), and two processes share one
 * only by the chance that two random tokens are equal. A forked child
 * reads a seed of its own (id_forked), and knows its own pid. */
static _Atomic uint64_t tok_seed, tok_n;
static _Atomic long self_pid;
static pthread_once_t id_once = PTHREAD_ONCE_INIT;

static void id_forked(void)
{
	atomic_store(&tok_seed, 0);
	atomic_store(&self_pid, 0);
}

static void id_register(void) { pthread_atfork(NULL, NULL, id_forked); }

static uint64_t token_seed(void)
{
	uint64_t s = atomic_load(&tok_seed);
	if (s) return s;
	pthread_once(&id_once, id_register);
	if (getrandom(&s, sizeof s, 0) != sizeof s) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		s = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40);
	}
	s |= 1;   /* never 0, which means "not read yet" */
	uint64_t want = 0;
	return atomic_compare_exchange_strong(&tok_seed, &want, s) ? s : want;
}

#define M63 0x7fffffffffffffffULL

int64_t jobs_new_token(void)
{
	for (;;) {
		uint64_t x = (token_seed() + (atomic_fetch_add(&tok_n, 1) + 1) * 0x9E3779B97F4A7C15ULL) & M63;
		x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL) & M63;
		x = ((x ^ (x >> 27)) * 0x94D049BB133111EBULL) & M63;
		x ^= x >> 31;
		if (x) return (int64_t)x;
	}
}

long jobs_pid(void)
{
	long p = atomic_load(&self_pid);
	if (p) return p;
	pthread_once(&id_once, id_register);
	p = (long)getpid();
	atomic_store(&self_pid, p);
	return p;
}

const char *jobs_host(void)
{
	static char host[256];
	if (!host[0] && gethostname(host, sizeof host - 1)) strcpy(host, "unknown");
	return host;
}

const char *jobs_user(void)
{
	static char user[128];
	if (!user[0]) {
		struct passwd *pw = getpwuid(getuid());
		const char *u = pw ? pw->pw_name : getenv("USER");
		snprintf(user, sizeof user, "%s", u ? u : "unknown");
	}
	return user;
}

const char *jobs_version(void)
{
	static char ver[64];
	static int done;
	if (done) return ver;
	done = 1;
	if (strcmp(config_get("jobs.version_method"), "git")) return ver;
	int fd[2];
	if (pipe(fd)) return ver;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		int dn = open("/dev/null", O_WRONLY);
		if (dn >= 0) dup2(dn, 2);
		close(fd[0]);
		execlp("git", "git", "rev-parse", "--short", "HEAD", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	ssize_t n = pid > 0 ? read(fd[0], ver, sizeof ver - 1) : -1;
	close(fd[0]);
	int st = 0;
	if (pid > 0) waitpid(pid, &st, 0);
	if (n <= 0 || !WIFEXITED(st) || WEXITSTATUS(st)) { ver[0] = 0; return ver; }
	ver[n] = 0;
	ver[strcspn(ver, "\r\n")] = 0;
	return ver;
}

char *jobs_truncate(const char *text)
{
	if (!text) return NULL;
	/* a message may quote anything (a C make's djc_make_error, a
	 * djc_jobs_error caller's): bytes that are not UTF-8 would make
	 * PostgreSQL and MariaDB refuse the whole error row, leaving the job
	 * reserved, where SQLite stores them */
	char *msg = utf8_clean_dup(text);
	/* count characters, not bytes, so multibyte text is cut whole */
	size_t len = strlen(msg), chars = utf8_len(msg, len);
	if (chars <= ERR_LEN) return msg;
	size_t keep = ERR_LEN - strlen(TRUNC), i = 0, ch = 0;
	while (i < len && ch < keep) {
		i++;
		while (i < len && ((unsigned char)msg[i] & 0xC0) == 0x80) i++;
		ch++;
	}
	char *o = xmalloc(i + strlen(TRUNC) + 1);
	memcpy(o, msg, i);
	strcpy(o + i, TRUNC);
	free(msg);
	return o;
}

