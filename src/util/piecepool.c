/* piecepool.c - a small pool of the buffers large values travel in.
 *
 * Why: a MariaDB value streamed to a serve program goes 256 KiB at a time,
 * each piece a buffer handed to the pipe's queue and given back once the
 * program read it. With glibc's malloc defaults (a C program calling
 * djc_populate; the djc command raises the thresholds, the library must not
 * change a process's malloc settings) the first piece is mapped on its own;
 * its free raises glibc's mmap threshold to its size, so the later ones
 * come from the heap, but the trim threshold rises only to twice that
 * (512 KiB): freed pieces went back to the system and the next ones
 * faulted their pages in again (a fault costs 25-35 us on the reference
 * machine). Kept buffers keep their pages.
 *
 * Each buffer carries its size in a header before it, so piece_put needs
 * nothing but the pointer. A mutex guards the pool (a C program may run
 * populates in several threads); as the supervisors' pool in proc.c, it is
 * held only for a few instructions, never across a call out. */
#include "piecepool.h"
#include "sb.h"
#include <pthread.h>
#include <stdlib.h>

#define HEAD 64   /* bytes before each buffer: its size (64 keeps the buffer's alignment) */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char *kept[PIECES_KEEP_N];   /* the bases (header first) of the buffers kept, the last put last */
static size_t nkept, kept_bytes;

static size_t size_at(const char *base) { return *(const size_t *)base; }

char *piece_get(size_t size)
{
	char *base = NULL, *stale[PIECES_KEEP_N];
	size_t nstale = 0;
	pthread_mutex_lock(&mu);
	/* the last given back first: its pages are the likeliest in cache */
	for (size_t i = nkept; i-- > 0 && !base;)
		if (size_at(kept[i]) == size) {
			base = kept[i];
			kept[i] = kept[--nkept];
			kept_bytes -= size;
		}
	if (!base) {
		/* another size asked for (DJC_READ_PIECE changed): the others go */
		for (size_t i = 0; i < nkept; i++) stale[nstale++] = kept[i];
		nkept = kept_bytes = 0;
	}
	pthread_mutex_unlock(&mu);
	for (size_t i = 0; i < nstale; i++) free(stale[i]);
	if (!base) {
		base = xmalloc(HEAD + size);
		*(size_t *)base = size;
	}
	return base + HEAD;
}

void piece_put(char *buf)
{
	if (!buf) return;
	char *base = buf - HEAD;
	size_t size = size_at(base);
	pthread_mutex_lock(&mu);
	if (nkept < PIECES_KEEP_N && kept_bytes + size <= PIECES_KEEP) {
		kept[nkept++] = base;
		kept_bytes += size;
		base = NULL;
	}
	pthread_mutex_unlock(&mu);
	free(base);
}

void piece_free(char *buf)
{
	if (buf) free(buf - HEAD);
}

void pieces_drop(void)
{
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nkept; i++) free(kept[i]);
	nkept = kept_bytes = 0;
	pthread_mutex_unlock(&mu);
}
