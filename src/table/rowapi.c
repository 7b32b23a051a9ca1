/* rowapi.c - the public rows and rowsets (djc.h: djc_row_*, djc_rowset_*)
 * over util/value's rows: setters and getters with their status codes. */
#include "djc.h"
#include "util/value.h"
#include <stdlib.h>
#include <string.h>

/* util/value's kinds are djc.h's djc_type, number for number */
_Static_assert((int)VAL_NULL == (int)DJC_NULL && (int)VAL_INT == (int)DJC_INT && (int)VAL_UINT == (int)DJC_UINT &&
		       (int)VAL_FLOAT == (int)DJC_FLOAT && (int)VAL_BOOL == (int)DJC_BOOL &&
		       (int)VAL_TEXT == (int)DJC_TEXT && (int)VAL_BYTES == (int)DJC_BYTES,
	       "value kinds and djc_type differ");

djc_row *djc_row_new(void) { return row_new(); }
void djc_row_free(djc_row *r) { row_free(r); }
djc_row *djc_row_dup(const djc_row *r) { return row_dup(r); }
long djc_row_find(const djc_row *r, const char *name) { return row_find(r, name); }

static int put(djc_row *r, const char *name, val_t v)
{
	if (!r || !name || !*name) { val_free(&v); return DJC_EINVAL; }
	row_put(r, name, &v);
	return DJC_OK;
}

int djc_row_set_null(djc_row *r, const char *name) { return put(r, name, val_null()); }
int djc_row_set_int(djc_row *r, const char *name, int64_t x) { return put(r, name, val_int(x)); }
int djc_row_set_uint(djc_row *r, const char *name, uint64_t x) { val_t v = {0}; v.t = DJC_UINT; v.u = x; return put(r, name, v); }
int djc_row_set_float(djc_row *r, const char *name, double x) { return put(r, name, val_float(x)); }
int djc_row_set_bool(djc_row *r, const char *name, int x) { val_t v = {0}; v.t = DJC_BOOL; v.i = !!x; return put(r, name, v); }
int djc_row_set_text(djc_row *r, const char *name, const char *x) { if (!x) return DJC_EINVAL; return put(r, name, val_text(x)); }
int djc_row_set_bytes(djc_row *r, const char *name, const void *x, size_t n)
{
	if (!x && n) return DJC_EINVAL;
	val_t v = val_textn(n ? x : "", n);
	v.t = DJC_BYTES;
	return put(r, name, v);
}

size_t djc_row_count(const djc_row *r) { return r ? r->n : 0; }
const char *djc_row_name(const djc_row *r, size_t i) { return r && i < r->n ? r->names[i] : NULL; }
djc_type djc_row_type(const djc_row *r, size_t i) { return r && i < r->n ? r->vals[i].t : DJC_NULL; }

int djc_row_int(int64_t *out, const djc_row *r, size_t i)
{
	if (!r || i >= r->n) return DJC_EINVAL;
	const val_t *v = &r->vals[i];
	if (v->t == DJC_INT || v->t == DJC_BOOL) { *out = v->i; return DJC_OK; }
	if (v->t == DJC_UINT && v->u <= INT64_MAX) { *out = (int64_t)v->u; return DJC_OK; }
	return DJC_EINVAL;
}

int djc_row_uint(uint64_t *out, const djc_row *r, size_t i)
{
	if (!r || i >= r->n) return DJC_EINVAL;
	const val_t *v = &r->vals[i];
	if (v->t == DJC_UINT) { *out = v->u; return DJC_OK; }
	if ((v->t == DJC_INT || v->t == DJC_BOOL) && v->i >= 0) { *out = (uint64_t)v->i; return DJC_OK; }
	return DJC_EINVAL;
}

int djc_row_float(double *out, const djc_row *r, size_t i)
{
	if (!r || i >= r->n) return DJC_EINVAL;
	const val_t *v = &r->vals[i];
	if (v->t == DJC_FLOAT) { *out = v->f; return DJC_OK; }
	/* integers only where the double holds them exactly */
	if (v->t == DJC_INT) {
		double d = (double)v->i;
		if (d >= 9223372036854775808.0 || (int64_t)d != v->i) return DJC_EINVAL;
		*out = d;
		return DJC_OK;
	}
	if (v->t == DJC_UINT) {
		double d = (double)v->u;
		if (d >= 18446744073709551616.0 || (uint64_t)d != v->u) return DJC_EINVAL;
		*out = d;
		return DJC_OK;
	}
	return DJC_EINVAL;
}

int djc_row_text(const char **out, const djc_row *r, size_t i)
{
	if (!r || i >= r->n || r->vals[i].t != DJC_TEXT) return DJC_EINVAL;
	*out = r->vals[i].s;
	return DJC_OK;
}

int djc_row_bytes(const void **out, size_t *n, const djc_row *r, size_t i)
{
	if (!r || i >= r->n || (r->vals[i].t != DJC_BYTES && r->vals[i].t != DJC_TEXT)) return DJC_EINVAL;
	*out = r->vals[i].s;
	*n = r->vals[i].n;
	return DJC_OK;
}

/* ----------------------------------------------------- getters by name */

int djc_row_get_int(int64_t *out, const djc_row *r, const char *name)
{
	long k = row_find(r, name);
	return k < 0 ? DJC_ENOTFOUND : djc_row_int(out, r, (size_t)k);
}

int djc_row_get_uint(uint64_t *out, const djc_row *r, const char *name)
{
	long k = row_find(r, name);
	return k < 0 ? DJC_ENOTFOUND : djc_row_uint(out, r, (size_t)k);
}

int djc_row_get_float(double *out, const djc_row *r, const char *name)
{
	long k = row_find(r, name);
	return k < 0 ? DJC_ENOTFOUND : djc_row_float(out, r, (size_t)k);
}

int djc_row_get_bool(int *out, const djc_row *r, const char *name)
{
	long k = row_find(r, name);
	if (k < 0) return DJC_ENOTFOUND;
	const val_t *v = &r->vals[k];
	if ((v->t == DJC_BOOL || v->t == DJC_INT) && (v->i == 0 || v->i == 1)) { *out = (int)v->i; return DJC_OK; }
	return DJC_EINVAL;
}

int djc_row_get_text(const char **out, const djc_row *r, const char *name)
{
	long k = row_find(r, name);
	return k < 0 ? DJC_ENOTFOUND : djc_row_text(out, r, (size_t)k);
}

int djc_row_get_bytes(const void **out, size_t *n, const djc_row *r, const char *name)
{
	long k = row_find(r, name);
	return k < 0 ? DJC_ENOTFOUND : djc_row_bytes(out, n, r, (size_t)k);
}

int djc_row_is_null(const djc_row *r, const char *name)
{
	long k = row_find(r, name);
	return k < 0 ? DJC_ENOTFOUND : r->vals[k].t == DJC_NULL;
}

size_t djc_rowset_count(const djc_rowset *rs) { return rs ? rs->n : 0; }
const djc_row *djc_rowset_row(const djc_rowset *rs, size_t i) { return rs && i < rs->n ? rs->rows[i] : NULL; }

void djc_rowset_free(djc_rowset *rs) { rowset_free(rs); }
