/* serve.h - the serve protocol (docs/serve-protocol.md): one make program
 * per worker process that makes many keys, one at a time, over its stdin
 * and stdout, and reads upstream rows from djc over the same pipe.
 *
 * A serve handle belongs to one worker process and one thread. The
 * program is started on the first key (and after it died or was stopped),
 * kept between keys, and stopped by serve_free. Restarts are bounded:
 * more than jobs.serve_restarts in a minute and serve_make refuses, with
 * make_result.fatal set. Internal to src/make and its caller src/populate. */
#ifndef DJC_SERVE_H
#define DJC_SERVE_H
#include "make.h"

/* The protocol versions this djc speaks: its hello says the highest, the
 * program's hello the one it speaks (version 2: keys sent ahead). */
#define SERVE_VERSION 2
#define SERVE_VERSION_MIN 1

typedef struct serve serve;

/* A handle for the program argv (copied); nothing is started yet. */
serve *serve_new(char *const *argv);

/* Make key of t with the program: send the key, answer its fetches on
 * connection c, stage and check its rows (make_req: rq->attempt is the
 * request's "attempt"). watch (may be NULL) is asked while the key is in flight;
 * when it says stop, the program is stopped (its whole tree) and
 * res->stopped says why. DJC_OK with the rows in *out, else DJC_EMAKE with
 * res->message (and res->stack: the program's own stack and its stderr
 * while it made this key); nothing is staged then. A program that died,
 * wrote something that is not the protocol or more than the output cap
 * fails this key and is started again for the next; one that reported an
 * error (or a row that does not fit the table) fails this key and is
 * kept. res->fatal: the key was not tried and the worker must stop.
 * rq->next: the keys that come next; a program that asked for keys ahead
 * (version 2) is sent as many of them as it asked for before this key's
 * answer is read (only while its keys take less than 5 ms each), and
 * later calls find them in flight. A program that holds a key sent ahead
 * that no call asks for (the caller skipped it at its turn: cancelled,
 * gone) is stopped at the next call, as a running make of a cancelled job
 * is, and serve_free stops one that still holds such keys. */
int serve_make(serve *s, const make_req *rq, staged *out, make_result *res);

/* Where the answer to a fetch request goes: put copies, take is handed a
 * malloc'd value (a binary value, raw) it then owns. binary and types: as
 * the program's hello asked (docs/serve-protocol.md). */
typedef struct fetch_out {
	void (*put)(void *to, const char *s, size_t n);
	void (*take)(void *to, char *buf, size_t n);
	void *to;
	int binary, types;
	/* the program whose stdin put and take feed, when a large value
	 * may go to it in pieces as it is read (fetch_answer pumps it while
	 * it reads them); NULL: rows are read whole first */
	struct proc *stream;
	/* with stream: take of a buffer from piece_get (util/piecepool.h),
	 * given back with piece_put, not freed */
	void (*piece)(void *to, char *buf, size_t n);
} fetch_out;

/* Answer the fetch request j ({"_djc": "fetch", "table": ..., "key" or
 * "where"}) to o: a header line ({"_djc":"rows","count":N}, or with an
 * "error"), then each row as `djc fetch --format json` prints it (with
 * binary values: its line without them, then the values raw). Every read
 * goes through ctx (djc_make_fetch: ancestors only, and recorded in
 * ctx->reads for the commit to check). The serve protocol's fetches, and
 * a per-key program's through its fetch socket (fetchsock.h). Returns 0;
 * with o->stream, STREAM_GONE when the program read no more or the
 * make must stop (make_watch_check) while its rows went, or an error
 * code when the read failed after the header went: either way the
 * answer broke off, and the program cannot read on. */
#define STREAM_GONE 1
int fetch_answer(djc_make_ctx *ctx, json_t *j, const fetch_out *o);

/* t's table message, added to b: {"_djc":"table","table":"T","types":
 * {...},"parts":{"P":{...}}}, the types of t's attributes and of its
 * parts' (by the name after the dot), and a newline
 * (docs/serve-protocol.md). */
void table_message(sb_t *b, djc_conn *c, const table *t);

/* A request line l[0..n) as JSON, or NULL when it is not valid UTF-8 or
 * not JSON (request_answer refuses NULL). */
json_t *request_parse(const char *l, size_t n);
/* Raw values of an answer, apart from its text: malloc'd buffers, in the
 * order the answer's lines name them ("_bin"). */
typedef struct raw_parts {
	char **bufs;
	size_t n, cap;
} raw_parts;
/* Answer request j (NULL: one that could not be read) of a make to out,
 * as the fetch socket (fetchsock.h) and the library's djc_make_request
 * answer it: a fetch ({"_djc": "fetch", ...}: fetch_answer, with types
 * and bytes values raw when it asks: "types", "binary": true, as a serve
 * program's hello does) or {"_djc": "table"} (the table message of the
 * table made); anything else an error answer saying `refusal`. Raw values
 * go into out after their line, or with parts, each into parts as it was
 * read (not copied). */
void request_answer(djc_make_ctx *ctx, json_t *j, sb_t *out, raw_parts *parts, const char *refusal);
/* The serve protocol's line for a key of t ({"_djc":"key","table":...,
 * "key":{...},"attempt":N} and a newline), added to b. */
void key_line_add(sb_t *b, const table *t, const djc_row *key, int attempt);

/* The answer to a fetch that failed, added to b:
 * {"_djc":"rows","error":"why","code":code} (code: djc's status, DJC_E*)
 * and a newline. */
void fetch_error_line(sb_t *b, const char *why, int code);

/* Stop the program (end of its input; it should exit; after
 * jobs.stop_grace SIGTERM, then SIGKILL) and free s. NULL is fine. */
void serve_free(serve *s);

#endif
