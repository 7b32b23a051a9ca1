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

/* The protocol version this djc speaks (the hello's "version"). */
#define SERVE_VERSION 1

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
 * kept. res->fatal: the key was not tried and the worker must stop. */
int serve_make(serve *s, const make_req *rq, staged *out, make_result *res);

/* Stop the program (end of its input; it should exit; after
 * jobs.stop_grace SIGTERM, then SIGKILL) and free s. NULL is fine. */
void serve_free(serve *s);

#endif
