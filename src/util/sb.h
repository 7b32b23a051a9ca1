/* sb.h - growable NUL-terminated string builder for SQL text and messages. */
#ifndef DJC_SB_H
#define DJC_SB_H
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>

typedef struct sb {
	char *s;      /* always NUL-terminated once anything was added; NULL before */
	size_t len;
	size_t cap;
} sb_t;

#define SB_INIT {NULL, 0, 0}

void sb_add(sb_t *b, const char *s);
void sb_addn(sb_t *b, const char *s, size_t n);
void sb_addc(sb_t *b, char c);
void sb_printf(sb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(sb_t *b, const char *fmt, va_list ap);
/* A whole number in decimal, as "%" PRId64 / PRIu64 prints it, without
 * printf's two passes over its format (sb_printf): a key's line and every
 * integer of a row's JSON are written this way. */
void sb_add_i64(sb_t *b, int64_t v);
void sb_add_u64(sb_t *b, uint64_t v);
void sb_reset(sb_t *b);               /* length 0, keeps memory */
void sb_reserve(sb_t *b, size_t extra); /* room for extra more bytes (and the NUL) without a move */
void sb_free(sb_t *b);
const char *sb_str(const sb_t *b);    /* "" when empty; owned by b */
char *sb_steal(sb_t *b);              /* caller frees; b is reset to empty */

/* Memory helpers that abort on exhaustion: djc treats OOM as fatal. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
/* p (an array with room for *cap elements of size bytes) with room for at
 * least n: doubled when it must grow, so that adding one element at a time
 * costs amortised O(1) instead of a copy of the whole array each time. */
void *xgrow(void *p, size_t *cap, size_t n, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
