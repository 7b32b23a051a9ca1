/* piecepool.h - the buffers a large value travels in, a piece at a time
 * (a MariaDB value streamed into a serve program's pipe), kept for the
 * next pieces instead of freed. */
#ifndef DJC_PIECEPOOL_H
#define DJC_PIECEPOOL_H
#include <stddef.h>

/* A buffer of size bytes: one given back earlier (piece_put) of that size
 * when one is kept, else a new one. Aborts on exhaustion, as xmalloc. */
char *piece_get(size_t size);

/* Give back buf (from piece_get; NULL is nothing): kept for the next
 * piece_get while the pool has room (PIECES_KEEP bytes), else freed. The
 * caller must be done with it: its pages are written again by the next
 * user (a piece lent to a pipe comes back only once the pipe was read past
 * it: proc.c). */
void piece_put(char *buf);

/* Free buf (from piece_get; NULL is nothing) without keeping it: its
 * pages may still be read (lent to a pipe djc no longer watches). */
void piece_free(char *buf);

/* What the pool keeps at most, in all: 2 MiB, 8 pieces of 256 KiB (a
 * streamed value has 1 MiB queued or unread in the pipe, and a piece on
 * its way, at most: serve.c STREAM_BACKLOG; a piece read is given back
 * at the next look at the backlog, proc_input_backlog). */
#define PIECES_KEEP (2u << 20)
#define PIECES_KEEP_N 16

/* The pool emptied (tests; and what leak checkers should not count). */
void pieces_drop(void);
#endif
