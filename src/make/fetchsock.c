/* fetchsock.c - a per-key make program's fetches through djc (contract in
 * fetchsock.h). The socket lives in a directory of its own, mode 0700, so
 * only its user (and root) can connect, and each connection's peer is
 * checked to be this user besides. */
#include "fetchsock.h"
#include "serve.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define CLIENTS 8                  /* connections at once; one more is closed at once */
#define REQUEST_MAX (1 << 20)      /* a request line, at most (bytes) */

typedef struct client {
	int fd;          /* -1: a free slot */
	sb_t in;         /* what it sent that is not yet a whole line */
	size_t scanned;  /* bytes of in known to hold no newline */
	sb_t out;        /* answers not yet written */
	size_t outpos;
	int closing;     /* read no more; close once out is written */
} client;

struct fetchsock {
	char *dir, *path;
	int lfd;
	client cl[CLIENTS];
	djc_make_ctx ctx;   /* the make's: its reads are recorded in ctx.reads */
};

fetchsock *fetchsock_open(const make_req *rq)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || tmp[0] != '/') tmp = "/tmp";   /* a relative one would name another place for the program */
	char *dir = xasprintf("%s/djc-XXXXXX", tmp), *path = NULL;
	if (!mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	path = xasprintf("%s/fetch", dir);
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	int fd = -1;
	if (strlen(path) < sizeof a.sun_path) {
		memcpy(a.sun_path, path, strlen(path) + 1);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	}
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, CLIENTS))) {
		close(fd);
		unlink(path);
		fd = -1;
	}
	if (fd < 0) {
		rmdir(dir);
		free(dir);
		free(path);
		return NULL;
	}
	fetchsock *fs = xcalloc(1, sizeof *fs);
	fs->dir = dir;
	fs->path = path;
	fs->lfd = fd;
	for (int i = 0; i < CLIENTS; i++) fs->cl[i].fd = -1;
	fs->ctx.c = rq->c;
	fs->ctx.t = rq->t;
	fs->ctx.key = rq->key;
	fs->ctx.watch = rq->watch;
	fs->ctx.attempt = rq->attempt;
	return fs;
}

const char *fetchsock_path(const fetchsock *fs) { return fs->path; }

static void drop(client *k)
{
	if (k->fd >= 0) close(k->fd);
	sb_free(&k->in);
	sb_free(&k->out);
	memset(k, 0, sizeof *k);
	k->fd = -1;
}

static void put_client(void *to, const char *s, size_t n)
{
	client *k = to;
	sb_addn(&k->out, s, n);
}

static void take_client(void *to, char *buf, size_t n)
{
	put_client(to, buf, n);
	free(buf);
}

/* Write what the socket takes; a connection whose peer is gone is dropped. */
static void flush_client(client *k)
{
	while (k->outpos < k->out.len) {
		ssize_t w = send(k->fd, k->out.s + k->outpos, k->out.len - k->outpos, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			k->outpos += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR) continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
		drop(k);
		return;
	}
	k->out.len = k->outpos = 0;
	if (k->closing) drop(k);
}

static void refuse(client *k, const char *why)
{
	json_t *e = json_pack("{s:s,s:s}", "_djc", "rows", "error", why);
	char *t = e ? json_dumps(e, JSON_COMPACT) : NULL;
	sb_add(&k->out, t ? t : "{\"_djc\":\"rows\",\"error\":\"not a fetch request\"}");
	sb_addc(&k->out, '\n');
	free(t);
	json_decref(e);
}

/* One request line: a fetch is answered through the make's context; any
 * other line gets an error answer (the program's fetch fails, not djc's
 * make of the key). */
static void on_request(fetchsock *fs, client *k, const char *l, size_t n)
{
	size_t i = 0;
	while (i < n && (l[i] == ' ' || l[i] == '\t' || l[i] == '\r')) i++;
	if (i == n) return;
	json_error_t je;
	json_t *j = utf8_valid(l, n) ? json_loadb(l, n, JSON_REJECT_DUPLICATES, &je) : NULL;
	const char *tag = json_string_value(json_object_get(j, "_djc"));
	if (!j || !json_is_object(j) || !tag || strcmp(tag, "fetch"))
		refuse(k, "the fetch socket takes fetch requests only, one JSON line each: "
			  "{\"_djc\": \"fetch\", \"table\": \"Name\", \"key\": {...}} (or \"where\")");
	else {
		fetch_out o = {put_client, take_client, k, 0, 0};
		fetch_answer(&fs->ctx, j, &o);
	}
	json_decref(j);
}

static void read_client(fetchsock *fs, client *k)
{
	char buf[65536];
	for (int round = 0; round < 16 && !k->closing; round++) {
		ssize_t r = recv(k->fd, buf, sizeof buf, MSG_DONTWAIT);
		if (r < 0 && errno == EINTR) continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
		if (r <= 0) {
			drop(k);   /* it closed its end (or failed): what it asked and did not read is dropped */
			return;
		}
		sb_addn(&k->in, buf, (size_t)r);
		size_t start = 0;
		for (;;) {
			char *nl = memchr(k->in.s + k->scanned, '\n', k->in.len - k->scanned);
			if (!nl) break;
			size_t end = (size_t)(nl - k->in.s);
			on_request(fs, k, k->in.s + start, end - start);
			start = k->scanned = end + 1;
		}
		if (start) {
			memmove(k->in.s, k->in.s + start, k->in.len - start + 1);
			k->in.len -= start;
			k->scanned -= start;
		}
		k->scanned = k->in.len;
		if (k->in.len > REQUEST_MAX) {
			refuse(k, "a fetch request of more than 1 MiB");
			k->closing = 1;
		}
		if ((size_t)r < sizeof buf) break;
	}
	flush_client(k);
}

static void accept_clients(fetchsock *fs)
{
	for (;;) {
		int fd = accept4(fs->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && errno == EINTR) continue;
		if (fd < 0) return;
		struct ucred cr;
		socklen_t len = sizeof cr;
		int slot = -1;
		if (!getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) && (cr.uid == geteuid() || cr.uid == 0))
			for (int i = 0; i < CLIENTS && slot < 0; i++)
				if (fs->cl[i].fd < 0) slot = i;
		if (slot < 0) {
			close(fd);   /* another user, or too many at once */
			continue;
		}
		fs->cl[slot].fd = fd;
	}
}

static int fill(void *arg, struct pollfd *pf, int max)
{
	fetchsock *fs = arg;
	int n = 0;
	if (n < max) pf[n++] = (struct pollfd){.fd = fs->lfd, .events = POLLIN};
	for (int i = 0; i < CLIENTS && n < max; i++) {
		client *k = &fs->cl[i];
		if (k->fd < 0) continue;
		short ev = k->closing ? 0 : POLLIN;
		if (k->outpos < k->out.len) ev |= POLLOUT;
		pf[n++] = (struct pollfd){.fd = k->fd, .events = ev};
	}
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
		for (int i = 0; i < CLIENTS; i++) {
			client *k = &fs->cl[i];
			if (k->fd != pf[j].fd) continue;
			if (pf[j].revents & POLLOUT) flush_client(k);
			if (k->fd >= 0 && (pf[j].revents & (POLLIN | POLLHUP | POLLERR))) {
				if (k->closing) drop(k);
				else read_client(fs, k);
			}
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
	for (int i = 0; i < CLIENTS; i++) drop(&fs->cl[i]);
	close(fs->lfd);
	unlink(fs->path);
	rmdir(fs->dir);
	read_set_free(fs->ctx.reads);
	free(fs->ctx.err);
	free(fs->path);
	free(fs->dir);
	free(fs);
}
