/* value.c - values, rows and rowsets; base64 and UTF-8 helpers. */
#include "value.h"
#include "sb.h"
#include <stdlib.h>
#include <string.h>

void val_free(val_t *v) { free(v->s); memset(v, 0, sizeof *v); }

void val_copy(val_t *dst, const val_t *src)
{
	*dst = *src;
	if (src->s) {
		dst->s = xmalloc(src->n + 1);
		memcpy(dst->s, src->s, src->n);
		dst->s[src->n] = 0;
	}
}

val_t val_int(int64_t i) { val_t v = {0}; v.t = VAL_INT; v.i = i; return v; }
val_t val_float(double f) { val_t v = {0}; v.t = VAL_FLOAT; v.f = f; return v; }
val_t val_null(void) { val_t v = {0}; return v; }
val_t val_textn(const char *s, size_t n) { val_t v = {0}; v.t = VAL_TEXT; v.s = xstrndup(s, n); v.n = n; return v; }
val_t val_text(const char *s) { return val_textn(s, strlen(s)); }

djc_row *row_new(void) { return xcalloc(1, sizeof(djc_row)); }

void row_free(djc_row *r)
{
	if (!r) return;
	for (size_t i = 0; i < r->n; i++) { free(r->names[i]); val_free(&r->vals[i]); }
	free(r->names);
	free(r->vals);
	free(r);
}

djc_row *row_dup(const djc_row *r)
{
	djc_row *d = row_new();
	for (size_t i = 0; r && i < r->n; i++) {
		val_t v;
		val_copy(&v, &r->vals[i]);
		row_put(d, r->names[i], &v);
	}
	return d;
}

long row_find(const djc_row *r, const char *name)
{
	for (size_t i = 0; r && name && i < r->n; i++)
		if (strcmp(r->names[i], name) == 0) return (long)i;
	return -1;
}

void row_put(djc_row *r, const char *name, val_t *v)
{
	long k = row_find(r, name);
	if (k >= 0) {
		val_free(&r->vals[k]);
		r->vals[k] = *v;
	} else {
		if (r->n == r->cap) {
			r->cap = r->cap ? r->cap * 2 : 8;
			r->names = xrealloc(r->names, r->cap * sizeof(char *));
			r->vals = xrealloc(r->vals, r->cap * sizeof(val_t));
		}
		r->names[r->n] = xstrdup(name);
		r->vals[r->n++] = *v;
	}
	memset(v, 0, sizeof *v);
}

const val_t *row_get(const djc_row *r, const char *name)
{
	long k = row_find(r, name);
	return k < 0 ? NULL : &r->vals[k];
}


void row_del(djc_row *r, const char *name)
{
	long k = row_find(r, name);
	if (k < 0) return;
	free(r->names[k]);
	val_free(&r->vals[k]);
	r->n--;
	memmove(&r->names[k], &r->names[k + 1], (r->n - (size_t)k) * sizeof *r->names);
	memmove(&r->vals[k], &r->vals[k + 1], (r->n - (size_t)k) * sizeof *r->vals);
}

djc_rowset *rowset_new(void) { return xcalloc(1, sizeof(djc_rowset)); }

void rowset_push(djc_rowset *rs, djc_row *r)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 16;
		rs->rows = xrealloc(rs->rows, rs->cap * sizeof(djc_row *));
	}
	rs->rows[rs->n++] = r;
}

void rowset_free(djc_rowset *rs)
{
	if (!rs) return;
	for (size_t i = 0; i < rs->n; i++) row_free(rs->rows[i]);
	free(rs->rows);
	free(rs);
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *b64_encode(const void *p, size_t n)
{
	const unsigned char *s = p;
	char *o = xmalloc((n + 2) / 3 * 4 + 1), *q = o;
	size_t i = 0;
	for (; i + 2 < n; i += 3) {
		*q++ = B64[s[i] >> 2];
		*q++ = B64[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
		*q++ = B64[((s[i + 1] & 15) << 2) | (s[i + 2] >> 6)];
		*q++ = B64[s[i + 2] & 63];
	}
	if (i < n) {
		*q++ = B64[s[i] >> 2];
		if (i + 1 < n) {
			*q++ = B64[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
			*q++ = B64[(s[i + 1] & 15) << 2];
		} else {
			*q++ = B64[(s[i] & 3) << 4];
			*q++ = '=';
		}
		*q++ = '=';
	}
	*q = 0;
	return o;
}

static int b64v(char c)
{
	const char *p = c ? strchr(B64, c) : NULL;
	return p ? (int)(p - B64) : -1;
}

int b64_decode(const char *s, char **out, size_t *n)
{
	size_t len = strlen(s);
	if (len % 4) return -1;
	char *o = xmalloc(len / 4 * 3 + 1);
	size_t k = 0;
	for (size_t i = 0; i < len; i += 4) {
		int a = b64v(s[i]), b = b64v(s[i + 1]);
		int pad2 = s[i + 2] == '=', pad3 = s[i + 3] == '=';
		int c = pad2 ? 0 : b64v(s[i + 2]), d = pad3 ? 0 : b64v(s[i + 3]);
		if (a < 0 || b < 0 || c < 0 || d < 0 || (pad2 && !pad3) || ((pad2 || pad3) && i + 4 != len)) {
			free(o);
			return -1;
		}
		o[k++] = (char)((a << 2) | (b >> 4));
		if (!pad2) o[k++] = (char)(((b & 15) << 4) | (c >> 2));
		if (!pad3) o[k++] = (char)(((c & 3) << 6) | d);
	}
	o[k] = 0;
	*out = o;
	*n = k;
	return 0;
}

int utf8_valid(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i];
		if (c == 0) return 0;
		if (c < 0x80) { i++; continue; }
		size_t k;
		unsigned min;
		if ((c & 0xE0) == 0xC0) { k = 1; min = 0x80; c &= 0x1F; }
		else if ((c & 0xF0) == 0xE0) { k = 2; min = 0x800; c &= 0x0F; }
		else if ((c & 0xF8) == 0xF0) { k = 3; min = 0x10000; c &= 0x07; }
		else return 0;
		for (size_t j = 1; j <= k; j++) {
			if (i + j >= n || (s[i + j] & 0xC0) != 0x80) return 0;
			c = (c << 6) | (s[i + j] & 0x3F);
		}
		if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
		i += k + 1;
	}
	return 1;
}

char *utf8_clean_dup(const char *s)
{
	if (!s) return NULL;
	char *o = xstrdup(s);
	utf8_clean(o, strlen(o));
	return o;
}

size_t utf8_seq(const char *s, size_t n)
{
	unsigned char c = (unsigned char)s[0];
	size_t k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	return k <= n && utf8_valid(s, k) ? k : 0;
}

void utf8_clean(char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = utf8_seq(s + i, n - i);
		if (!k) { s[i++] = '?'; continue; }
		i += k;
	}
}

size_t utf8_len(const char *s, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80) k++;
	return k;
}
