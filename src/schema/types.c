/* types.c - checking and converting values per attribute type: user input
 * to bound parameter (value_in), database cell to typed value (value_out),
 * and JSON in and out. Exactness rules are in docs/types.md. */
#include "schema.h"
#include "djc.h"
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int bad(char **msg, const attr *a, const char *fmt, const char *detail)
{
	sb_t b = SB_INIT;
	sb_printf(&b, "attribute '%s' (%s): ", a->name, a->type_text);
	sb_printf(&b, fmt, detail);
	*msg = sb_steal(&b);
	return DJC_EINVAL;
}

static const char *tname(djc_type t)
{
	static const char *n[] = {"null", "an integer", "an integer", "a number", "a boolean", "a string", "bytes"};
	return n[t];
}

static int int_range(coltype t, int64_t *lo, int64_t *hi)
{
	switch (t) {
	case T_INT8: *lo = INT8_MIN; *hi = INT8_MAX; return 1;
	case T_INT16: *lo = INT16_MIN; *hi = INT16_MAX; return 1;
	case T_INT32: *lo = INT32_MIN; *hi = INT32_MAX; return 1;
	case T_INT64: *lo = INT64_MIN; *hi = INT64_MAX; return 1;
	case T_UINT8: *lo = 0; *hi = UINT8_MAX; return 1;
	case T_UINT16: *lo = 0; *hi = UINT16_MAX; return 1;
	case T_UINT32: *lo = 0; *hi = UINT32_MAX; return 1;
	default: return 0;
	}
}

/* The shortest decimal text that reads back as exactly f: the fewest
 * significant digits that round-trip (correctly rounded, so the closest such
 * text), in plain notation when 10^lo <= |f| < 10^hi and in exponent notation
 * ("1e+16", "1.5e-10") otherwise. buf holds at least 32 bytes, or 400 for
 * plain notation over the whole double range. */
static void fmt_float(char *buf, size_t n, double f, int lo, int hi)
{
	if (!isfinite(f)) { snprintf(buf, n, "%g", f); return; }
	if (f == 0) { snprintf(buf, n, "%s", signbit(f) ? "-0" : "0"); return; }
	char e[40];
	for (int p = 1; p <= 17; p++) {   /* 17 significant digits always round-trip */
		snprintf(e, sizeof e, "%.*e", p - 1, f);
		if (strtod(e, NULL) == f) break;
	}
	/* e is [-]d[.ddd]e(+|-)x: take the digits and the exponent */
	char dig[20];
	int nd = 0;
	const char *q = e;
	int neg = *q == '-';
	if (neg) q++;
	for (; *q && *q != 'e'; q++)
		if (isdigit((unsigned char)*q) && nd < (int)sizeof dig - 1) dig[nd++] = *q;
	int x = *q == 'e' ? atoi(q + 1) : 0;
	while (nd > 1 && dig[nd - 1] == '0') nd--;
	char out[400];
	size_t k = 0;
	if (neg) out[k++] = '-';
	if (x >= lo && x < hi) {
		if (x < 0) {   /* 0.000ddd */
			out[k++] = '0';
			out[k++] = '.';
			for (int i = 0; i < -x - 1; i++) out[k++] = '0';
			for (int i = 0; i < nd; i++) out[k++] = dig[i];
		} else {       /* ddd[000][.ddd] */
			for (int i = 0; i <= x; i++) out[k++] = i < nd ? dig[i] : '0';
			if (nd > x + 1) {
				out[k++] = '.';
				for (int i = x + 1; i < nd; i++) out[k++] = dig[i];
			}
		}
		out[k] = 0;
	} else {
		out[k++] = dig[0];
		if (nd > 1) {
			out[k++] = '.';
			for (int i = 1; i < nd; i++) out[k++] = dig[i];
		}
		snprintf(out + k, sizeof out - k, "e%c%d", x < 0 ? '-' : '+', x < 0 ? -x : x);
	}
	snprintf(buf, n, "%s", out);
}

/* How floats are written everywhere (docs/types.md): the shortest text that
 * reads back exactly, plain for 1e-7 <= |f| < 1e16 ("10", "120", "0.1",
 * "123456789", "0.0000001"), exponent notation outside ("1e+16", "1e-8",
 * "1e+300"). The upper bound keeps an integral value's plain digits inside
 * int64, which JSON readers such as jansson need to read it back. */
static void fmt_double(char *buf, size_t n, double f) { fmt_float(buf, n, f, -7, 16); }

static int digits_only(const char *s) { if (!*s) return 0; for (; *s; s++) if (!isdigit((unsigned char)*s)) return 0; return 1; }

static int leap(int y) { return (y % 4 == 0 && y % 100) || y % 400 == 0; }

static int check_date(const char *s, int *y, int *m, int *d)
{
	if (strlen(s) < 10 || s[4] != '-' || s[7] != '-') return -1;
	for (int i = 0; i < 10; i++) if (i != 4 && i != 7 && !isdigit((unsigned char)s[i])) return -1;
	*y = atoi(s); *m = atoi(s + 5); *d = atoi(s + 8);
	static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	if (*y < 1 || *m < 1 || *m > 12 || *d < 1) return -1;
	if (*d > mdays[*m - 1] + (*m == 2 && leap(*y))) return -1;
	return 0;
}

/* "YYYY-MM-DD HH:MM[:SS[.f]]" (or T) to canonical text with p fractional digits. */
static int norm_datetime(const char *s, int p, sb_t *out, int strict)
{
	int y, mo, d;
	if (check_date(s, &y, &mo, &d)) return -1;
	size_t n = strlen(s);
	char full[20];
	if (n == 16) {   /* "YYYY-MM-DD HH:MM": seconds 00, as the servers read it */
		snprintf(full, sizeof full, "%s:00", s);
		s = full;
		n = 19;
	}
	if (n == 10) {   /* a date alone means midnight */
		sb_printf(out, "%.10s 00:00:00", s);
	} else {
		if (n < 19 || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':') return -1;
		for (int i = 11; i < 19; i++) if (i != 13 && i != 16 && !isdigit((unsigned char)s[i])) return -1;
		int hh = atoi(s + 11), mm = atoi(s + 14), ss = atoi(s + 17);
		if (hh > 23 || mm > 59 || ss > 59) return -1;
		sb_printf(out, "%.10s %.8s", s, s + 11);
	}
	char digits[8] = "000000";
	if (n > 19) {
		const char *frac = s + 19;
		if (*frac != '.' || !digits_only(frac + 1) || strlen(frac + 1) > 6) return -1;
		size_t k = strlen(frac + 1);
		memcpy(digits, frac + 1, k);
		for (size_t i = (size_t)p; i < k; i++)
			if (strict && frac[1 + i] != '0') return -2;   /* more precision than the type keeps */
	}
	if (p > 0) sb_printf(out, ".%.*s", p, digits);
	return 0;
}

static int norm_decimal(const char *s, int p, int sc, sb_t *out)
{
	const char *q = s;
	int neg = 0;
	if (*q == '+' || *q == '-') neg = *q++ == '-';
	const char *ip = q;
	while (isdigit((unsigned char)*q)) q++;
	size_t ni = (size_t)(q - ip);
	const char *fp = "";
	size_t nf = 0;
	if (*q == '.') { fp = ++q; while (isdigit((unsigned char)*q)) q++; nf = (size_t)(q - fp); }
	if (*q || (ni == 0 && nf == 0)) return -1;
	while (ni > 1 && *ip == '0') { ip++; ni--; }
	if (nf > (size_t)sc) {
		for (size_t i = (size_t)sc; i < nf; i++) if (fp[i] != '0') return -2;
		nf = (size_t)sc;
	}
	if (ni == 1 && *ip == '0') ni = 0;
	if ((int)ni > p - sc) return -3;
	int zero = 1;
	for (size_t i = 0; i < ni; i++) if (ip[i] != '0') zero = 0;
	for (size_t i = 0; i < nf; i++) if (fp[i] != '0') zero = 0;
	if (neg && !zero) sb_addc(out, '-');
	if (ni) sb_addn(out, ip, ni); else sb_addc(out, '0');
	if (sc) {
		sb_addc(out, '.');
		sb_addn(out, fp, nf);
		for (size_t i = nf; i < (size_t)sc; i++) sb_addc(out, '0');
	}
	return 0;
}

static void json_dump_value(sb_t *b, json_t *j);

/* value_in of the integer types but uint64 (their range: lo..hi). cmp (a
 * restriction's value): also a string of an integer ("1", "-3"), which the
 * servers compare as the number (DataJoint's {'id': '1'} finds id 1); an
 * insert keeps JSON's types. */
static int in_int(const attr *a, const val_t *in, val_t *out, char **msg, int64_t lo, int64_t hi, int cmp)
{
	int64_t v;
	const char *dig = in->t == DJC_TEXT ? in->s + (in->s[0] == '-' || in->s[0] == '+') : NULL;
	if (in->t == DJC_INT) v = in->i;
	else if (cmp && dig && digits_only(dig) && strlen(dig) <= 19) {
		errno = 0;
		long long x = strtoll(in->s, NULL, 10);
		if (errno) return bad(msg, a, "%s", "value out of range");
		v = x;
	}
	else if (in->t == DJC_UINT) {
		if (in->u > (uint64_t)hi) return bad(msg, a, "%s", "value out of range");
		v = (int64_t)in->u;
	} else if (in->t == DJC_FLOAT && isfinite(in->f) && in->f >= -9.2e18 && in->f <= 9.2e18 &&
		   in->f == (double)(int64_t)in->f)
		v = (int64_t)in->f;
	else return bad(msg, a, "expects an integer, got %s", tname(in->t));
	if (v < lo || v > hi) {
		char d[64];
		snprintf(d, sizeof d, "%" PRId64 " is out of range %" PRId64 "..%" PRId64, v, lo, hi);
		return bad(msg, a, "%s", d);
	}
	*out = val_int(v);
	return DJC_OK;
}

/* value_in of uint64: an unsigned integer, a non-negative int, or its
 * digits as text (beyond int64, JSON gives them as strings). */
static int in_uint64(const attr *a, const val_t *in, val_t *out, char **msg)
{
	uint64_t u;
	if (in->t == DJC_UINT) u = in->u;
	else if (in->t == DJC_INT) { if (in->i < 0) return bad(msg, a, "%s", "value out of range (negative)"); u = (uint64_t)in->i; }
	else if (in->t == DJC_TEXT && digits_only(in->s) && strlen(in->s) <= 20) {
		errno = 0;
		unsigned long long x = strtoull(in->s, NULL, 10);
		if (errno) return bad(msg, a, "%s", "value out of range");
		u = x;
	} else return bad(msg, a, "expects an unsigned integer, got %s", tname(in->t));
	out->t = DJC_UINT;
	out->u = u;
	return DJC_OK;
}

/* The non-finite float a text names ("NaN", "Infinity", "-Infinity", as
 * JSON carries them: docs/types.md), or 0 (finite: none). */
static double nonfinite_text(const val_t *in)
{
	if (in->t != DJC_TEXT) return 0;
	if (!strcmp(in->s, "NaN")) return NAN;
	if (!strcmp(in->s, "Infinity")) return INFINITY;
	if (!strcmp(in->s, "-Infinity")) return -INFINITY;
	return 0;
}

/* A number written as JSON writes one ("2.5", "-1e-3", "3"): the text a
 * restriction may give for a float attribute, as the servers (and
 * DataJoint's {'weight': '2.5'}) compare it as that number. */
static int number_text(const char *s)
{
	if (*s == '-' || *s == '+') s++;
	if (!isdigit((unsigned char)*s)) return 0;
	while (isdigit((unsigned char)*s)) s++;
	if (*s == '.') {
		if (!isdigit((unsigned char)*++s)) return 0;
		while (isdigit((unsigned char)*s)) s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+') s++;
		if (!isdigit((unsigned char)*s)) return 0;
		while (isdigit((unsigned char)*s)) s++;
	}
	return *s == 0;
}

/* value_in of float32 and float64: finite (or, `as float8`/`as float4`,
 * NaN and infinities too, also as text), within float32's range for it.
 * cmp (value_cmp: a value a restriction compares the column with): a
 * float32's value is the double as given, not rounded to float32, as the
 * servers (and DataJoint) compare a float32 column with a number: the
 * stored float32, widened to a double, with the double; and a number's
 * text ("2.5") is that number (an insert keeps JSON's types). */
static int in_float(const attr *a, const val_t *in, val_t *out, char **msg, int cmp)
{
	double f;
	if (in->t == DJC_FLOAT) f = in->f;
	else if (in->t == DJC_INT) f = (double)in->i;
	else if (in->t == DJC_UINT) f = (double)in->u;
	else if (cmp && in->t == DJC_TEXT && number_text(in->s)) {
		errno = 0;
		f = strtod(in->s, NULL);
		if (errno == ERANGE && fabs(f) > 1) return bad(msg, a, "'%s' is out of a float64's range", in->s);
	}
	else if ((f = nonfinite_text(in)) == 0) return bad(msg, a, "expects a number, got %s", tname(in->t));
	if (!isfinite(f) && !a->nonfinite)   /* also "NaN" (a Python make's NaN) for a table of djc's own */
		return bad(msg, a, "%s", "NaN and infinities are not stored (the backends disagree on them)");
	if (a->type.t == T_FLOAT32 && isfinite(f) && !cmp) {
		if (fabs(f) > FLT_MAX) return bad(msg, a, "%s", "value out of float32 range");
		f = (double)(float)f;
	}
	/* -0.0 is 0: PostgreSQL keeps the sign, SQLite and MariaDB drop it,
	 * and a value reads back the same from every backend (an adopted
	 * PostgreSQL float8, which keeps NaN too, keeps it as DataJoint does) */
	if (f == 0 && !a->nonfinite) f = 0.0;
	*out = val_float(f);
	return DJC_OK;
}

/* value_in of decimal(p,s): its digits as text, never rounded. */
static int in_decimal(const attr *a, const val_t *in, val_t *out, char **msg)
{
	sb_t b = SB_INIT;
	char buf[400], shown[64];
	const char *s, *say;
	if (in->t == DJC_TEXT) s = in->s;
	else if (in->t == DJC_INT) { snprintf(buf, sizeof buf, "%" PRId64, in->i); s = buf; }
	else if (in->t == DJC_UINT) { snprintf(buf, sizeof buf, "%" PRIu64, in->u); s = buf; }
	else if (in->t == DJC_FLOAT && isfinite(in->f)) {
		/* the float's digits in plain notation, checked like text: never rounded */
		fmt_float(buf, sizeof buf, in->f, -400, 400);
		s = buf;
	} else return bad(msg, a, "expects a decimal number, got %s", tname(in->t));
	say = s;
	if (s == buf && in->t == DJC_FLOAT) { fmt_double(shown, sizeof shown, in->f); say = shown; }
	int r = norm_decimal(s, a->type.p, a->type.s, &b);
	if (r) {
		sb_free(&b);
		return bad(msg, a, r == -1 ? "'%s' is not a decimal number" : r == -2 ? "'%s' has more decimal places than the type keeps" : "'%s' has too many digits", say);
	}
	*out = val_textn(sb_str(&b), b.len);
	sb_free(&b);
	return DJC_OK;
}

/* value_in of json: text is parsed (and written back compact), any other
 * value is its JSON. An object with the same key twice is refused, as the
 * command line's JSON input refuses it (the parser would keep the last). */
static int in_json(const attr *a, const val_t *in, val_t *out, char **msg)
{
	sb_t b = SB_INIT;
	if (in->t == DJC_TEXT) {
		json_error_t je;
		json_t *j = json_loadb(in->s, in->n, JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &je);
		if (!j) return bad(msg, a, "is not valid JSON text: %s", je.text);
		json_dump_value(&b, j);
		json_decref(j);
	} else
		value_to_json(&b, NULL, in);
	*out = val_textn(sb_str(&b), b.len);
	sb_free(&b);
	return DJC_OK;
}

/* value_in of char(n) (trailing blanks dropped) and varchar(n): at most n
 * characters. */
static int in_chars(const attr *a, const val_t *in, val_t *out, char **msg)
{
	size_t n = in->n;
	if (a->type.t == T_CHAR) while (n && in->s[n - 1] == ' ') n--;
	size_t chars = utf8_len(in->s, n);
	if (chars > (size_t)a->type.p) {
		char d[64];
		snprintf(d, sizeof d, "%zu characters do not fit in %d", chars, a->type.p);
		return bad(msg, a, "%s", d);
	}
	*out = val_textn(in->s, n);
	return DJC_OK;
}

/* value_in of datetime(p): normalised, at most p fractional digits. cmp
 * (value_cmp): more digits are kept, up to the last that is not 0 (at
 * most 6), as the servers compare the column with such a value: exactly
 * (equal to no value the column holds, ordered as it is); with p digits
 * when those beyond p are 0s, so that it is the text SQLite holds. */
static int in_datetime(const attr *a, const val_t *in, val_t *out, char **msg, int cmp)
{
	sb_t b = SB_INIT;
	int r = norm_datetime(in->s, a->type.p, &b, 1);
	if (r == -2 && cmp) {   /* norm_datetime said the digits are valid: s[19] is '.', digits after */
		int k = (int)strlen(in->s + 20);
		while (k > a->type.p && in->s[20 + k - 1] == '0') k--;
		sb_free(&b);
		r = norm_datetime(in->s, k, &b, 1);
	}
	if (r == -2) {   /* a Python make's datetime.now() has 6: say how to cut it */
		sb_free(&b);
		int p = a->type.p;
		const char *spec = p == 0 ? "seconds" : p == 3 ? "milliseconds" : NULL;
		char *d = spec ? xasprintf("'%s' has more fractional digits than the type keeps (%d; cut the value first, e.g. "
					   "Python's dt.isoformat(sep=' ', timespec='%s'))", in->s, p, spec)
			       : xasprintf("'%s' has more fractional digits than the type keeps (%d; cut the value first)", in->s, p);
		int rc = bad(msg, a, "%s", d);
		free(d);
		return rc;
	}
	if (r) {
		sb_free(&b);
		return bad(msg, a, "'%s' is not a datetime YYYY-MM-DD HH:MM[:SS[.fff]]", in->s);
	}
	*out = val_textn(sb_str(&b), b.len);
	sb_free(&b);
	return DJC_OK;
}

/* value_in of uuid: 32 hex digits, with or without the dashes, into the
 * dashed lower-case form. */
static int in_uuid(const attr *a, const val_t *in, val_t *out, char **msg)
{
	char u[37];
	size_t k = 0;
	const char *s = in->s;
	int ok = in->n == 36 || in->n == 32;
	for (size_t i = 0; ok && i < in->n; i++) {
		if (in->n == 36 && (i == 8 || i == 13 || i == 18 || i == 23)) { ok = s[i] == '-'; continue; }
		if (!isxdigit((unsigned char)s[i])) { ok = 0; break; }
		if (k == 8 || k == 13 || k == 18 || k == 23) u[k++] = '-';
		u[k++] = (char)tolower((unsigned char)s[i]);
	}
	if (!ok || k != 36) return bad(msg, a, "'%s' is not a UUID", in->s);
	u[36] = 0;
	*out = val_textn(u, 36);
	return DJC_OK;
}

/* value_in of enum: one of its labels. cmp (a restriction's value): also a
 * label in another case ("alpha" for 'Alpha'), as the one label it names
 * (MariaDB compares enums so; PostgreSQL refuses such a value: djc finds
 * the rows on every backend); two labels that differ in case only are
 * named exactly. */
static int in_enum(const attr *a, const val_t *in, val_t *out, char **msg, int cmp)
{
	const char *hit = NULL;
	int n = 0;
	for (size_t i = 0; i < a->type.nenums; i++) {
		if (!strcmp(in->s, a->type.enums[i])) { hit = a->type.enums[i]; n = 1; break; }
		if (cmp && !strcasecmp(in->s, a->type.enums[i]) && n++ == 0) hit = a->type.enums[i];
	}
	if (n == 1) {
		*out = val_text(hit);
		return DJC_OK;
	}
	if (n > 1) return bad(msg, a, "'%s' is more than one of the enum's labels in another case: give one exactly", in->s);
	return bad(msg, a, "'%s' is not one of the enum's labels", in->s);
}

/* value_in of the text types: valid UTF-8, then the type's own check. */
static int in_text(const attr *a, const val_t *in, val_t *out, char **msg, int cmp)
{
	if (in->t != DJC_TEXT) return bad(msg, a, "expects a string, got %s", tname(in->t));
	if (!utf8_valid(in->s, in->n)) return bad(msg, a, "%s", "is not valid UTF-8 (or contains a NUL byte)");
	switch (a->type.t) {
	case T_CHAR: case T_VARCHAR: return in_chars(a, in, out, msg);
	case T_ENUM: return in_enum(a, in, out, msg, cmp);
	case T_DATE: {
		int y, m, d;
		if (in->n != 10 || check_date(in->s, &y, &m, &d)) return bad(msg, a, "'%s' is not a date YYYY-MM-DD", in->s);
		*out = val_textn(in->s, in->n);
		return DJC_OK;
	}
	case T_DATETIME: return in_datetime(a, in, out, msg, cmp);
	case T_UUID: return in_uuid(a, in, out, msg);
	default:
		val_copy(out, in);
		return DJC_OK;
	}
}

/* 1 if b[0..n) starts as a DataJoint blob does (docs/types.md, <blob>):
 * "mYm\0" or "dj0\0", or "ZL123\0" (compressed). */
static int dj_blob_header(const char *b, size_t n)
{
	return (n >= 4 && (!memcmp(b, "mYm\0", 4) || !memcmp(b, "dj0\0", 4))) || (n >= 6 && !memcmp(b, "ZL123\0", 6));
}

/* A uuid stored as 16 bytes (`as binary(16)`, DataJoint on MySQL): the
 * checked text form in, its bytes out. The 16 bytes themselves (what
 * value_in gave before: a row checked once as it is staged, again as it is
 * written) stay as they are, as every other type's checked value does. */
static int in_uuid16(const attr *a, const val_t *in, val_t *out, char **msg)
{
	if (in->t == DJC_BYTES && in->n == 16) {
		val_copy(out, in);
		return DJC_OK;
	}
	val_t u;
	int rc = in_text(a, in, &u, msg, 0);
	if (rc) return rc;
	char b[16];
	for (size_t i = 0, k = 0; i < 36 && k < 16; i++) {
		if (u.s[i] == '-') continue;
		int hi = isdigit((unsigned char)u.s[i]) ? u.s[i] - '0' : u.s[i] - 'a' + 10;
		int lo = isdigit((unsigned char)u.s[i + 1]) ? u.s[i + 1] - '0' : u.s[i + 1] - 'a' + 10;
		b[k++] = (char)(hi * 16 + lo);
		i++;
	}
	val_free(&u);
	out->t = DJC_BYTES;
	out->s = xmalloc(17);
	memcpy(out->s, b, 16);
	out->s[16] = 0;
	out->n = 16;
	return DJC_OK;
}

/* move: in itself, writable (value_in_take): a bytes value is moved from
 * it, not copied; NULL: in is only read. */
static int check_value(const attr *a, const val_t *in, val_t *out, char **msg, int cmp, val_t *move)
{
	memset(out, 0, sizeof *out);
	*msg = NULL;
	if (in->t == DJC_NULL) {
		if (a->nullable) return DJC_OK;
		return bad(msg, a, "%s", "cannot be null");
	}
	if (a->raw) return bad(msg, a, "%s", "is a raw column of an adopted table: djc reads it but cannot write it");
	if (a->bin16) return in_uuid16(a, in, out, msg);
	int64_t lo, hi;
	if (int_range(a->type.t, &lo, &hi)) return in_int(a, in, out, msg, lo, hi, cmp);
	switch (a->type.t) {
	case T_UINT64: return in_uint64(a, in, out, msg);
	case T_FLOAT32: case T_FLOAT64: return in_float(a, in, out, msg, cmp);
	case T_BOOL:
		if (in->t == DJC_BOOL || (in->t == DJC_INT && (in->i == 0 || in->i == 1))) {
			out->t = DJC_BOOL;
			out->i = in->i;
			return DJC_OK;
		}
		return bad(msg, a, "expects true or false, got %s", tname(in->t));
	case T_DECIMAL: return in_decimal(a, in, out, msg);
	case T_BYTES:
		if (in->t != DJC_BYTES) return bad(msg, a, "expects bytes, got %s", tname(in->t));
		if (a->dj_blob && !dj_blob_header(in->s, in->n))
			return bad(msg, a, "%s", "not a DataJoint blob (no mYm/dj0/ZL123 header)");
		if (move) {
			*out = *move;
			*move = val_null();
		} else
			val_copy(out, in);
		return DJC_OK;
	case T_JSON: return in_json(a, in, out, msg);
	default:
		return in_text(a, in, out, msg, cmp);   /* the rest are text types */
	}
}

int value_in(const attr *a, const val_t *in, val_t *out, char **msg)
{
	return check_value(a, in, out, msg, 0, NULL);
}

int value_in_take(const attr *a, val_t *in, val_t *out, char **msg)
{
	return check_value(a, in, out, msg, 0, in);
}

int value_cmp(const attr *a, const val_t *in, val_t *out, char **msg)
{
	return check_value(a, in, out, msg, 1, NULL);
}

void value_stored(const attr *a, const val_t *v, val_t *out)
{
	char *msg = NULL;
	if (a->bin16 && v->t == DJC_TEXT && in_uuid16(a, v, out, &msg) == DJC_OK) return;
	free(msg);
	val_copy(out, v);
}

/* value_out of the adopted columns' storage: a uuid stored as 16 bytes
 * into its text form, a raw column's binary value as bytes (base64 in
 * JSON). 1 when done. */
static int out_stored(const attr *a, const val_t *cell, val_t *out)
{
	if (a->bin16 && cell->t == DJC_BYTES && cell->n == 16) {
		char u[37];
		const unsigned char *p = (const unsigned char *)cell->s;
		snprintf(u, sizeof u, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", p[0], p[1],
			 p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15]);
		*out = val_textn(u, 36);
		return 1;
	}
	if (a->raw && cell->t == DJC_BYTES && !utf8_valid(cell->s, cell->n)) {
		val_copy(out, cell);
		return 1;
	}
	return 0;
}

int value_out(const attr *a, const val_t *cell, val_t *out)
{
	memset(out, 0, sizeof *out);
	if (cell->t == DJC_NULL) return DJC_OK;
	coltype t = a->type.t;
	int64_t lo, hi;
	if (int_range(t, &lo, &hi)) {
		if (cell->t == DJC_INT || cell->t == DJC_BOOL) *out = val_int(cell->i);
		else if (cell->t == DJC_FLOAT) *out = val_int((int64_t)cell->f);
		else *out = val_int(strtoll(cell->s, NULL, 10));
		return DJC_OK;
	}
	switch (t) {
	case T_UINT64:
		out->t = DJC_UINT;
		out->u = cell->t == DJC_INT ? (uint64_t)cell->i : cell->t == DJC_UINT ? cell->u : strtoull(cell->s, NULL, 10);
		return DJC_OK;
	case T_FLOAT32: case T_FLOAT64: {
		double f = cell->t == DJC_FLOAT ? cell->f : cell->t == DJC_INT ? (double)cell->i : strtod(cell->s, NULL);
		if (t == T_FLOAT32) f = (double)(float)f;
		*out = val_float(f);
		return DJC_OK;
	}
	case T_BOOL:
		out->t = DJC_BOOL;
		if (cell->t == DJC_INT || cell->t == DJC_BOOL) out->i = cell->i != 0;
		else out->i = cell->s[0] == 't' || cell->s[0] == '1' || cell->s[0] == 'T';
		return DJC_OK;
	case T_BYTES:
		val_copy(out, cell);
		out->t = DJC_BYTES;
		return DJC_OK;
	default:
		if (out_stored(a, cell, out)) return DJC_OK;
		break;
	}
	const char *s = cell->t == DJC_TEXT || cell->t == DJC_BYTES ? cell->s : NULL;
	char buf[64];
	if (!s) {
		if (cell->t == DJC_INT) snprintf(buf, sizeof buf, "%" PRId64, cell->i);
		else fmt_double(buf, sizeof buf, cell->f);
		s = buf;
	}
	size_t n = strlen(s);
	switch (t) {
	case T_CHAR:
		while (n && s[n - 1] == ' ') n--;
		*out = val_textn(s, n);
		return DJC_OK;
	case T_DATETIME: {
		sb_t b = SB_INIT;
		if (norm_datetime(s, a->type.p, &b, 0)) *out = val_textn(s, n);
		else *out = val_textn(sb_str(&b), b.len);
		sb_free(&b);
		return DJC_OK;
	}
	case T_DECIMAL: {
		sb_t b = SB_INIT;
		if (norm_decimal(s, 38, a->type.s, &b)) *out = val_textn(s, n);
		else *out = val_textn(sb_str(&b), b.len);
		sb_free(&b);
		return DJC_OK;
	}
	case T_UUID:
		*out = val_textn(s, n);
		for (char *p = out->s; *p; p++) *p = (char)tolower((unsigned char)*p);
		return DJC_OK;
	default:
		*out = val_textn(s, n);
		return DJC_OK;
	}
}

int value_out_take(const attr *a, val_t *cell, val_t *out)
{
	if (a->type.t == T_BYTES && cell->s) {
		/* value_out's bytes, moved rather than copied (a large value) */
		*out = *cell;
		out->t = DJC_BYTES;
		*cell = val_null();
		return DJC_OK;
	}
	return value_out(a, cell, out);
}

static int from_json(const attr *a, json_t *j, val_t *out, char **msg, int cmp)
{
	val_t v = {0};
	*msg = NULL;
	memset(out, 0, sizeof *out);   /* a NULL value on every error path, safe to val_free */
	if (a->type.t == T_JSON && !json_is_null(j)) {
		sb_t b = SB_INIT;
		json_dump_value(&b, j);
		*out = val_textn(sb_str(&b), b.len);
		sb_free(&b);
		return DJC_OK;
	}
	switch (json_typeof(j)) {
	case JSON_NULL: break;
	case JSON_INTEGER: v = val_int(json_integer_value(j)); break;
	case JSON_REAL: v = val_float(json_real_value(j)); break;
	case JSON_TRUE: case JSON_FALSE: v.t = DJC_BOOL; v.i = json_is_true(j); break;
	case JSON_STRING:
		if (a->type.t == T_BYTES) {
			char *raw;
			size_t n;
			if (b64_decode(json_string_value(j), &raw, &n))
				return bad(msg, a, "%s", "expects bytes as a base64 string");
			v.t = DJC_BYTES;
			v.s = raw;
			v.n = n;
		} else
			v = val_textn(json_string_value(j), json_string_length(j));
		break;
	default:
		return bad(msg, a, "%s", "does not take an object or array");
	}
	int rc = check_value(a, &v, out, msg, cmp, NULL);
	val_free(&v);
	return rc;
}

int value_from_json(const attr *a, json_t *j, val_t *out, char **msg)
{
	return from_json(a, j, out, msg, 0);
}

int value_cmp_json(const attr *a, json_t *j, val_t *out, char **msg)
{
	return from_json(a, j, out, msg, 1);
}

/* JSON string of s[0..n): always valid UTF-8, a byte that does not start a
 * valid UTF-8 sequence written as U+FFFD (as the command line's JSON). */
void json_quote(sb_t *b, const char *s, size_t n)
{
	sb_addc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		size_t k;
		switch (c) {
		case '"': sb_add(b, "\\\""); break;
		case '\\': sb_add(b, "\\\\"); break;
		case '\n': sb_add(b, "\\n"); break;
		case '\r': sb_add(b, "\\r"); break;
		case '\t': sb_add(b, "\\t"); break;
		default:
			if (c < 0x20) sb_printf(b, "\\u%04x", c);
			else if (c < 0x80) sb_addc(b, (char)c);
			else if ((k = utf8_seq(s + i, n - i)) > 0) {
				sb_addn(b, s + i, k);
				i += k - 1;
			} else
				sb_add(b, "\xEF\xBF\xBD");
		}
	}
	sb_addc(b, '"');
}

size_t quoted_text(const char *s, size_t n, sb_t *out)
{
	for (size_t i = 1; i < n && s[i]; i++) {
		if (s[i] == '\\' && i + 1 < n && s[i + 1] == s[0]) i++;
		else if (s[i] == s[0]) return i;
		if (out) sb_addc(out, s[i]);
	}
	return 0;
}

size_t json_single_quotes(sb_t *b, const char *s, int one, char *open)
{
	char q = 0;   /* the JSON string's quote, when in one */
	int depth = 0;
	size_t i = 0;
	for (; s[i]; i++) {
		char ch = s[i];
		if (!q && ch == '\'') {
			sb_t t = SB_INIT;
			size_t e = quoted_text(s + i, (size_t)-1, &t);
			if (e) json_quote(b, sb_str(&t), t.len);
			sb_free(&t);
			if (!e) {   /* unterminated: as written (a JSON parse refuses it) */
				sb_add(b, s + i);
				*open = '\'';
				return i + strlen(s + i);
			}
			i += e;
			continue;
		}
		sb_addc(b, ch);
		if (q) {   /* in a JSON string */
			if (ch == '\\' && s[i + 1]) sb_addc(b, s[++i]);
			else if (ch == q) q = 0;
		} else if (ch == '"') q = ch;
		else if (ch == '{' || ch == '[') depth++;
		else if ((ch == '}' || ch == ']') && --depth == 0 && one) { i++; break; }
	}
	*open = q ? q : depth ? '[' : 0;
	return i;
}

static void json_dump_value(sb_t *b, json_t *j)
{
	char buf[64];
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *v;
		int first = 1;
		sb_addc(b, '{');
		json_object_foreach(j, k, v) {
			if (!first) sb_addc(b, ',');
			first = 0;
			json_quote(b, k, strlen(k));
			sb_addc(b, ':');
			json_dump_value(b, v);
		}
		sb_addc(b, '}');
		break;
	}
	case JSON_ARRAY:
		sb_addc(b, '[');
		for (size_t i = 0; i < json_array_size(j); i++) {
			if (i) sb_addc(b, ',');
			json_dump_value(b, json_array_get(j, i));
		}
		sb_addc(b, ']');
		break;
	case JSON_STRING: json_quote(b, json_string_value(j), json_string_length(j)); break;
	case JSON_INTEGER: sb_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(j)); break;
	case JSON_REAL:
		fmt_double(buf, sizeof buf, json_real_value(j));
		sb_add(b, buf);
		if (!strpbrk(buf, ".eEni")) sb_add(b, ".0");
		break;
	case JSON_TRUE: sb_add(b, "true"); break;
	case JSON_FALSE: sb_add(b, "false"); break;
	default: sb_add(b, "null"); break;
	}
}

void value_to_json(sb_t *b, const attr *a, const val_t *v)
{
	char buf[64];
	val_t u;
	if (a && a->bin16 && out_stored(a, v, &u)) {   /* a uuid's 16 bytes as stored: its text */
		json_quote(b, u.s, u.n);
		val_free(&u);
		return;
	}
	switch (v->t) {
	case DJC_NULL: sb_add(b, "null"); break;
	case DJC_INT: sb_add_i64(b, v->i); break;
	case DJC_UINT:
		/* above INT64_MAX as a string: JSON readers (jansson, jq) cannot take the
		 * number exactly, and uint64 input accepts the string */
		if (v->u > (uint64_t)INT64_MAX) {
			sb_addc(b, '"');
			sb_add_u64(b, v->u);
			sb_addc(b, '"');
		} else
			sb_add_u64(b, v->u);
		break;
	case DJC_BOOL: sb_add(b, v->i ? "true" : "false"); break;
	case DJC_FLOAT:   /* JSON has no NaN: as text, which a float attribute takes back (in_float) */
		if (isnan(v->f)) { sb_add(b, "\"NaN\""); break; }
		if (isinf(v->f)) { sb_add(b, v->f > 0 ? "\"Infinity\"" : "\"-Infinity\""); break; }
		fmt_double(buf, sizeof buf, v->f);
		sb_add(b, buf);
		break;
	case DJC_BYTES: {
		char *e = b64_encode(v->s, v->n);
		json_quote(b, e, strlen(e));
		free(e);
		break;
	}
	case DJC_TEXT:
		if (a && a->type.t == T_JSON) sb_addn(b, v->s, v->n);
		else json_quote(b, v->s, v->n);
		break;
	}
}

int row_from_json_obj(const table *t, json_t *obj, djc_row **out, char **msg)
{
	*out = NULL;
	*msg = NULL;
	if (!json_is_object(obj)) { *msg = xstrdup("expected a JSON object"); return DJC_EINVAL; }
	djc_row *r = row_new();
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v) {
		attr *a = table_attr(t, k);
		if (!a) {
			sb_t b = SB_INIT;
			sb_add(&b, "unknown attribute ");
			json_quote(&b, k, strlen(k));
			sb_printf(&b, " for table %s", t->name);
			*msg = sb_steal(&b);
			row_free(r);
			return DJC_EINVAL;
		}
		val_t x;
		if (value_from_json(a, v, &x, msg)) { row_free(r); return DJC_EINVAL; }
		row_put(r, a->name, &x);
	}
	*out = r;
	return DJC_OK;
}

void row_to_json(sb_t *b, const table *t, const djc_row *r)
{
	int first = 1;
	sb_addc(b, '{');
	for (size_t i = 0; i < t->nattrs; i++) {
		const val_t *v = row_get(r, t->attrs[i].name);
		if (!v) continue;
		if (!first) sb_addc(b, ',');
		first = 0;
		json_quote(b, t->attrs[i].name, strlen(t->attrs[i].name));
		sb_addc(b, ':');
		value_to_json(b, &t->attrs[i], v);
	}
	sb_addc(b, '}');
}

char *key_to_json(const table *t, const djc_row *r, int source_only)
{
	sb_t b = SB_INIT;
	int first = 1;
	sb_addc(&b, '{');
	size_t n = source_only ? t->nsrc : t->nkey;
	for (size_t i = 0; i < n; i++) {
		const attr *a = &t->attrs[source_only ? t->src[i] : i];
		const val_t *v = row_get(r, a->name);
		if (!v) continue;
		if (!first) sb_add(&b, ", ");
		first = 0;
		json_quote(&b, a->name, strlen(a->name));
		sb_add(&b, ": ");
		value_to_json(&b, a, v);
	}
	sb_addc(&b, '}');
	return sb_steal(&b);
}
