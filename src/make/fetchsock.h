/* fetchsock.h - a per-key make program's fetches through djc
 * (docs/serve-protocol.md, "Per-key programs: the fetch socket").
 *
 * While djc runs a make program for one key it listens on a UNIX socket
 * of Linux's abstract namespace, named to the program in DJC_FETCH_SOCKET
 * ("@djc-fetch-PID-RANDOM": '@' for the leading NUL byte), that only its
 * user (and root) may use. The program sends fetch requests on it,
 * one JSON line each, as a serve program does on its stdout, and reads the
 * same answers (fetch_answer, serve.h: JSON rows as `djc fetch --format
 * json` prints them, or with types and bytes values raw when the request
 * asks, as a serve program's hello does); {"_djc":"table"} gets the table
 * message of the table made (table_message). The reads go through the make's
 * context, so they follow the rules of every make's reads: ancestors
 * only, checked at commit. djc answers while it waits for the program
 * (proc_pump polls the socket beside the program's pipes), a bounded
 * number of requests a round, and reads no more requests of a connection
 * while 4 MiB of answers wait for it to read them.
 *
 * Internal to src/make; one handle per key, one thread. */
#ifndef DJC_FETCHSOCK_H
#define DJC_FETCHSOCK_H
#include "make.h"

typedef struct fetchsock fetchsock;

/* Listen for the make of rq's key. NULL when no socket can be made here
 * (the program then fetches with `djc fetch`, as before). */
fetchsock *fetchsock_open(const make_req *rq);

/* The socket's name (for DJC_FETCH_SOCKET). */
const char *fetchsock_path(const fetchsock *fs);

/* Poll it with the program (proc_poll_also). */
void fetchsock_attach(fetchsock *fs, proc *p);

/* What the program read through it (the caller owns it: make_succeeded),
 * NULL when nothing; fetchsock_close frees what is not taken. */
read_set *fetchsock_take_reads(fetchsock *fs);

/* Close every connection and the socket, free fs. NULL is fine. */
void fetchsock_close(fetchsock *fs);

#endif
