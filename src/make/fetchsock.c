/* fetchsock.c - a per-key make program's fetches through djc (contract in
 * fetchsock.h). The socket is in Linux's abstract namespace: no file, so
 * nothing is left behind by a worker that is killed, and no $TMPDIR or
 * path length to depend on; an abstract socket has no permissions, so each
 * connection's peer must be this user (or root), else it is closed. */
#include "fetchsock.h"
#include "serve.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define CLIENTS 32                 /* connections served at once; more wait to be accepted */
#define BACKLOG 64                 /* ... in the listen queue */
#define REQUEST_MAX (1 << 20)      /* a request line, at most (bytes) */
#define OUT_MAX (4 << 20)          /* answers queued for one connection before its requests wait */
#define TURN_MAX 32                /* requests answered per connection per poll round */

typedef struct client {
	int fd;          /* -1: a free slot */
	sb_t in;         /* what it sent that is not yet a whole line */
	size_t scanned;  /* bytes of in known to hold no newline */
	sb_t out;        /* answers not yet written */
	size_t outpos;
	int eof;         /* it shut its end: what it sent is answered, then it is closed */
	int skipping;    /* a request over REQUEST_MAX: dropped up to its newline */
} client;

struct fetchsock {
	char name[64];      /* "@djc-fetch-...": its abstract name, as DJC_FETCH_SOCKET gives it */
	int lfd;
	int paused;         /* accept failed (out of descriptors): not listened to until a slot frees */
	client cl[CLIENTS];
	djc_make_ctx ctx;   /* the make's: its reads are recorded in ctx.reads */
};

fetchsock *fetchsock_open(const make_req *rq)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) return NULL;
	fetchsock *fs = xcalloc(1, sizeof *fs);
	for (int tries = 0;; tries++) {
		unsigned char r[12];
		if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r || tries == 8) {
			close(fd);
			free(fs);
			return NULL;
		}
		int n = snprintf(fs->name, sizeof fs->name, "@djc-fetch-%ld-", (long)getpid());
		for (size_t i = 0; i < sizeof r; i++) n += snprintf(fs->name + n, sizeof fs->name - (size_t)n, "%02x", r[i]);
		struct sockaddr_un a;
		memset(&a, 0, sizeof a);
		a.sun_family = AF_UNIX;
		memcpy(a.sun_path + 1, fs->name + 1, (size_t)n - 1);   /* sun_path[0] = 0: abstract */
		socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n);
		if (!bind(fd, (struct sockaddr *)&a, len)) break;
		if (errno != EADDRINUSE) {
			close(fd);
			free(fs);
			return NULL;
		}
	}
	if (listen(fd, BACKLOG)) {
		close(fd);
		free(fs);
		return NULL;
	}
	fs->lfd = fd;
	for (int i = 0; i < CLIENTS; i++) fs->cl[i].fd = -1;
	fs->ctx.c = rq->c;
	fs->ctx.t = rq->t;
	fs->ctx.key = rq->key;
	fs->ctx.watch = rq->watch;
	fs->ctx.attempt = rq->attempt;
	return fs;
}

const char *fetchsock_path(const fetchsock *fs) { return fs->name; }

static void drop(fetchsock *fs, client *k)
{
	if (k->fd >= 0) close(k->fd);
	sb_free(&k->in);
	sb_free(&k->out);
	memset(k, 0, sizeof *k);
	k->fd = -1;
	fs->paused = 0;   /* a descriptor is free again */
}

static size_t queued(const client *k) { return k->out.len - k->outpos; }

/* Write what the socket takes; a connection whose peer is gone is dropped. */
static void flush_client(fetchsock *fs, client *k)
{
	while (queued(k)) {
		ssize_t w = send(k->fd, k->out.s + k->outpos, queued(k), MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			k->outpos += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR) continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
		drop(fs, k);
		return;
	}
	if (k->out.cap > OUT_MAX) sb_free(&k->out);   /* a large answer's buffer is not kept */
	k->out.len = k->outpos = 0;
}

/* One request line, answered by request_answer (serve.h). Any other line
 * than a fetch or a table request gets an error answer (the program's
 * fetch fails, not djc's make of the key). */
static void on_request(fetchsock *fs, client *k, const char *l, size_t n)
{
	size_t i = 0;
	while (i < n && (l[i] == ' ' || l[i] == '\t' || l[i] == '\r')) i++;
	if (i == n) return;
	json_t *j = request_parse(l, n);
	request_answer(&fs->ctx, j, &k->out, NULL, "the fetch socket takes fetch requests only, one JSON line each: "
		       "{\"_djc\": \"fetch\", \"table\": \"Name\", \"key\": {...}} (or \"where\")");
	json_decref(j);
}

/* Answer the whole request lines it sent, TURN_MAX at most and only while
 * its unread answers are under OUT_MAX (so a program that asks and does
 * not read holds a bounded queue, and a burst of requests does not keep
 * djc from its lease and stop checks). At its end (eof) a last line
 * without a newline counts too. 1 when whole lines are left for later. */
static int answer_lines(fetchsock *fs, client *k)
{
	if (!k->in.s) return 0;   /* nothing came yet */
	size_t start = 0;
	int turns = 0, left = 0;
	for (;;) {
		char *nl = memchr(k->in.s + k->scanned, '\n', k->in.len - k->scanned);
		if (!nl) {
			k->scanned = k->in.len;
			break;
		}
		if (turns == TURN_MAX || queued(k) >= OUT_MAX) {
			left = 1;
			k->scanned = start;
			break;
		}
		size_t end = (size_t)(nl - k->in.s);
		if (k->skipping) k->skipping = 0;   /* the end of the line that was too long */
		else {
			on_request(fs, k, k->in.s + start, end - start);
			turns++;
		}
		start = k->scanned = end + 1;
	}
	if (!left && k->eof && start < k->in.len && !k->skipping) {
		on_request(fs, k, k->in.s + start, k->in.len - start);
		start = k->in.len;
	}
	if (start) {
		memmove(k->in.s, k->in.s + start, k->in.len - start + 1);
		k->in.len -= start;
		k->scanned -= start;
	}
	if (!left && k->in.len > REQUEST_MAX) {
		/* no newline in 1 MiB: answered with an error, the rest of the
		 * line skipped, the connection kept */
		if (!k->skipping) fetch_error_line(&k->out, "a fetch request of more than 1 MiB", DJC_EINVAL);
		k->skipping = 1;
		k->in.len = k->scanned = 0;
		k->in.s[0] = 0;
	}
	return left;
}

static void read_client(fetchsock *fs, client *k)
{
	char buf[65536];
	while (!k->eof && queued(k) < OUT_MAX) {
		ssize_t r = recv(k->fd, buf, sizeof buf, MSG_DONTWAIT);
		if (r < 0 && errno == EINTR) continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
		if (r < 0) {
			drop(fs, k);
			return;
		}
		if (r == 0) k->eof = 1;   /* it shut its end: answer what it sent, then close */
		else if (k->skipping && !memchr(buf, '\n', (size_t)r)) continue;
		else sb_addn(&k->in, buf, (size_t)r);
		if (answer_lines(fs, k) || (size_t)r < sizeof buf) break;
	}
}

static void accept_clients(fetchsock *fs)
{
	for (;;) {
		int slot = -1;
		for (int i = 0; i < CLIENTS && slot < 0; i++)
			if (fs->cl[i].fd < 0) slot = i;
		if (slot < 0) return;   /* the others wait in the listen queue */
		int fd = accept4(fs->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED)) continue;
		if (fd < 0) {
			/* out of descriptors (EMFILE, ENFILE, ENOBUFS, ENOMEM): not
			 * listened to until a connection ends, else poll would say
			 * readable again at once */
			if (errno != EAGAIN && errno != EWOULDBLOCK) fs->paused = 1;
			return;
		}
		struct ucred cr;
		socklen_t len = sizeof cr;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || (cr.uid != geteuid() && cr.uid != 0)) {
			close(fd);   /* another user's */
			continue;
		}
		fs->cl[slot].fd = fd;
	}
}

/* A connection's turn: write what it may take, then read and answer. */
static void turn(fetchsock *fs, client *k, short revents)
{
	if (revents & POLLOUT) flush_client(fs, k);
	if (k->fd >= 0 && queued(k) < OUT_MAX) {
		if (revents & (POLLIN | POLLHUP | POLLERR)) read_client(fs, k);
		else answer_lines(fs, k);   /* lines left from its last turn */
	}
	if (k->fd >= 0) flush_client(fs, k);
	if (k->fd >= 0 && k->eof && !queued(k) && !memchr(k->in.s ? k->in.s : "", '\n', k->in.len)) drop(fs, k);
}

static int fill(void *arg, struct pollfd *pf, int max)
{
	fetchsock *fs = arg;
	int n = 0, free_slot = 0;
	for (int i = 0; i < CLIENTS && n < max; i++) {
		client *k = &fs->cl[i];
		if (k->fd < 0) {
			free_slot = 1;
			continue;
		}
		short ev = 0;
		if (!k->eof && queued(k) < OUT_MAX) ev |= POLLIN;
		/* POLLOUT also for whole lines left from its last turn: a socket
		 * with room says so at once, and their turn comes */
		if (queued(k) || memchr(k->in.s ? k->in.s : "", '\n', k->in.len)) ev |= POLLOUT;
		pf[n++] = (struct pollfd){.fd = k->fd, .events = ev};
	}
	if (free_slot && !fs->paused && n < max) pf[n++] = (struct pollfd){.fd = fs->lfd, .events = POLLIN};
	return n;
}

static void ready(void *arg, const struct pollfd *pf, int n)
{
	fetchsock *fs = arg;
	for (int j = 0; j < n; j++) {
		if (!pf[j].revents) continue;
		if (pf[j].fd == fs->lfd) {
			accept_clients(fs);
			continue;
		}
		for (int i = 0; i < CLIENTS; i++)
			if (fs->cl[i].fd == pf[j].fd) {
				turn(fs, &fs->cl[i], pf[j].revents);
				break;
			}
	}
}

void fetchsock_attach(fetchsock *fs, proc *p)
{
	proc_also a = {fill, ready, fs};
	proc_poll_also(p, &a);
}

read_set *fetchsock_take_reads(fetchsock *fs)
{
	if (!fs) return NULL;
	read_set *r = fs->ctx.reads;
	fs->ctx.reads = NULL;
	return r;
}

void fetchsock_close(fetchsock *fs)
{
	if (!fs) return;
	for (int i = 0; i < CLIENTS; i++) drop(fs, &fs->cl[i]);
	close(fs->lfd);
	read_set_free(fs->ctx.reads);
	free(fs->ctx.err);
	free(fs);
}
