/* value.h - the internal value (one cell) and the row behind djc_row. */
#ifndef DJC_VALUE_H
#define DJC_VALUE_H
#include <stddef.h>
#include <stdint.h>

/* The kind of a value: the numbers of djc.h's djc_type (DJC_NULL, ...),
 * which the public API hands out (table/rowapi.c checks they agree). util/
 * is the bottom layer and does not include the public header. */
enum { VAL_NULL = 0, VAL_INT, VAL_UINT, VAL_FLOAT, VAL_BOOL, VAL_TEXT, VAL_BYTES };

/* the public handles (djc.h) are these structs */
typedef struct djc_row djc_row;
typedef struct djc_rowset djc_rowset;

/* In i of a VAL_BYTES whose s is NULL: the value stands for n bytes whose
 * XXH3_64 is u, digested where they were read and never held whole (a
 * commit's check of a make's reads compares values: db_exec_digest,
 * upstream.c). Never handed out of the library. */
#define VAL_DIGESTED 0x64696765

typedef struct val {
	unsigned t;     /* VAL_* (= DJC_*: djc_type, which is unsigned) */
	int64_t i;      /* VAL_INT, VAL_BOOL (0/1) */
	uint64_t u;     /* VAL_UINT */
	double f;       /* VAL_FLOAT */
	char *s;        /* VAL_TEXT, VAL_BYTES: owned, NUL-terminated */
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

void val_free(val_t *v);                  /* frees s; leaves t = VAL_NULL */
void val_copy(val_t *dst, const val_t *src);
val_t val_int(int64_t i);
val_t val_text(const char *s);            /* copies */
val_t val_textn(const char *s, size_t n); /* copies */
val_t val_float(double f);
val_t val_null(void);

djc_row *row_new(void);
void row_free(djc_row *r);                /* NULL-safe */
djc_row *row_dup(const djc_row *r);
long row_find(const djc_row *r, const char *name);   /* index or -1 */
/* Set by name, taking ownership of *v (v is cleared). */
void row_put(djc_row *r, const char *name, val_t *v);
const val_t *row_get(const djc_row *r, const char *name);
void row_del(djc_row *r, const char *name);   /* the value of name, if any, and its name */
void rowset_push(djc_rowset *rs, djc_row *r);   /* takes r */
djc_rowset *rowset_new(void);
void rowset_free(djc_rowset *rs);            /* and its rows; NULL-safe */

/* base64 (standard alphabet, padded). decode returns -1 on bad input. */
char *b64_encode(const void *p, size_t n);
int b64_decode(const char *s, char **out, size_t *n);
/* 1 if s[0..n) is valid UTF-8 without NUL bytes. */
int utf8_valid(const char *s, size_t n);
size_t utf8_len(const char *s, size_t n);
/* The length (1..4) of the valid UTF-8 character s[0..n) starts with
 * (n > 0), 0 when it starts none (a NUL byte neither). */
size_t utf8_seq(const char *s, size_t n);
/* A copy of the NUL-terminated s (NULL: NULL) with every byte that is not
 * part of a valid UTF-8 character replaced by '?': text a server's UTF-8
 * column takes (a make's error message, which may quote anything). */
char *utf8_clean_dup(const char *s);
/* The same in place on s[0..n) (a NUL byte becomes '?' too). */
void utf8_clean(char *s, size_t n);
#endif
