/* sb.c - string builder and allocation helpers. */
#include "sb.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *xmalloc(size_t n) { void *p = malloc(n ? n : 1); if (!p) { fputs("djc: out of memory\n", stderr); abort(); } return p; }
void *xcalloc(size_t n, size_t m) { void *p = calloc(n ? n : 1, m ? m : 1); if (!p) { fputs("djc: out of memory\n", stderr); abort(); } return p; }
void *xrealloc(void *p, size_t n) { p = realloc(p, n ? n : 1); if (!p) { fputs("djc: out of memory\n", stderr); abort(); } return p; }
char *xstrdup(const char *s) { return xstrndup(s, strlen(s)); }

void *xgrow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap) return p;
	size_t c = *cap ? *cap : 4;
	while (c < n) {
		if (c > SIZE_MAX / 2 / size) { fputs("djc: out of memory\n", stderr); abort(); }
		c *= 2;
	}
	*cap = c;
	return xrealloc(p, c * size);
}
char *xstrndup(const char *s, size_t n) { char *p = xmalloc(n + 1); memcpy(p, s, n); p[n] = 0; return p; }

char *xasprintf(const char *fmt, ...)
{
	sb_t b = SB_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	if (!b.s) return xstrdup("");
	return b.s;
}

static void grow(sb_t *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap) return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < b->len + extra + 1) cap *= 2;
	b->s = xrealloc(b->s, cap);
	b->cap = cap;
}

void sb_addn(sb_t *b, const char *s, size_t n)
{
	grow(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

void sb_add(sb_t *b, const char *s) { sb_addn(b, s, strlen(s)); }
void sb_addc(sb_t *b, char c) { sb_addn(b, &c, 1); }

void sb_vprintf(sb_t *b, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0) return;
	grow(b, (size_t)n);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void sb_add_u64(sb_t *b, uint64_t v)
{
	char d[20];
	size_t n = 0;
	do {
		d[sizeof d - ++n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sb_addn(b, d + sizeof d - n, n);
}

void sb_add_i64(sb_t *b, int64_t v)
{
	if (v < 0) {
		sb_addc(b, '-');
		sb_add_u64(b, (uint64_t)0 - (uint64_t)v);   /* INT64_MIN too */
	} else
		sb_add_u64(b, (uint64_t)v);
}

void sb_printf(sb_t *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
}

void sb_reserve(sb_t *b, size_t extra)
{
	grow(b, extra);
	if (b->len == 0) b->s[0] = 0;
}
void sb_reset(sb_t *b) { b->len = 0; if (b->s) b->s[0] = 0; }
void sb_free(sb_t *b) { free(b->s); b->s = NULL; b->len = b->cap = 0; }
const char *sb_str(const sb_t *b) { return b->s ? b->s : ""; }
char *sb_steal(sb_t *b) { char *s = b->s ? b->s : xstrdup(""); b->s = NULL; b->len = b->cap = 0; return s; }
