/* value.h - the internal value (one cell) and the row behind djc_row. */
#ifndef DJC_VALUE_H
#define DJC_VALUE_H
#include <stddef.h>
#include <stdint.h>
#include "djc.h"

typedef struct val {
	djc_type t;
	int64_t i;      /* DJC_INT, DJC_BOOL (0/1) */
	uint64_t u;     /* DJC_UINT */
	double f;       /* DJC_FLOAT */
	char *s;        /* DJC_TEXT, DJC_BYTES: owned, NUL-terminated */
	size_t n;       /* length of s in bytes */
} val_t;

struct djc_row {
	size_t n, cap;
	char **names;
	val_t *vals;
};

struct djc_rowset {
	size_t n, cap;
	djc_row **rows;
};

void val_free(val_t *v);                  /* frees s; leaves t = DJC_NULL */
void val_copy(val_t *dst, const val_t *src);
val_t val_int(int64_t i);
val_t val_text(const char *s);            /* copies */
val_t val_textn(const char *s, size_t n); /* copies */
val_t val_float(double f);
val_t val_null(void);

/* Set by name, taking ownership of *v (v is cleared). */
void row_put(djc_row *r, const char *name, val_t *v);
const val_t *row_get(const djc_row *r, const char *name);
void rowset_push(djc_rowset *rs, djc_row *r);   /* takes r */
djc_rowset *rowset_new(void);

/* base64 (standard alphabet, padded). decode returns -1 on bad input. */
char *b64_encode(const void *p, size_t n);
int b64_decode(const char *s, char **out, size_t *n);
/* 1 if s[0..n) is valid UTF-8 without NUL bytes. */
int utf8_valid(const char *s, size_t n);
size_t utf8_len(const char *s, size_t n);
#endif
