/* fuzz_common.h - the shared entry points of the fuzz targets. Each
 * djcfz_<target>() runs one input through the library and must never crash,
 * leak or trip a sanitizer; tests/unit/test_fuzz_regress.c replays the saved
 * inputs of tests/fuzz/regress/ through the same functions. */
#ifndef DJC_FUZZ_COMMON_H
#define DJC_FUZZ_COMMON_H
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "djc.h"
#include "schema/schema.h"
#include "table/table.h"

/* NUL-terminated copy of the input. */
static char *djcfz_text(const uint8_t *d, size_t n)
{
	char *s = malloc(n + 1);
	if (n) memcpy(s, d, n);
	s[n] = 0;
	return s;
}

/* Exercise the output side of every parsed table. */
static void djcfz_touch_pipeline(const pipeline *p)
{
	for (size_t i = 0; p && i < p->n; i++) {
		table *t = p->tables[i];
		(void)pipeline_lookup(p, t->name);
		(void)pipeline_lookup(p, t->sql_name);
		for (size_t k = 0; k < t->nattrs; k++) (void)table_attr(t, t->attrs[k].name);
	}
}

/* ---------------------------------------------------------- definition */
static int djcfz_definition(const uint8_t *d, size_t n)
{
	char *s = djcfz_text(d, n);
	pipeline *p = NULL;
	char *msg = NULL;
	if (pipeline_parse(&p, s, "fuzz.djc", NULL, &msg) == DJC_OK) {
		djcfz_touch_pipeline(p);
		/* declaring the same text again on top of itself must not crash */
		pipeline *p2 = NULL;
		char *msg2 = NULL;
		pipeline_parse(&p2, s, "fuzz.djc", p, &msg2);
		pipeline_free(p2);
		free(msg2);
	}
	pipeline_free(p);
	free(msg);
	free(s);
	return 0;
}

/* ------------------------------------------------------------ pipeline */
static const char djcfz_prev_text[] =
	"Subject (manual)\n"
	"    subject_id : int32\n"
	"    ---\n"
	"    name = 'x' : varchar(16)\n"
	"    sex = null : enum('F', 'M', 'U')\n"
	"\n"
	"Session (manual)\n"
	"    -> Subject\n"
	"    session : uint16\n"
	"    ---\n"
	"    when = CURRENT_TIMESTAMP : datetime(3)\n"
	"    day = '2024-01-01' : date\n"
	"\n"
	"Kind (lookup)\n"
	"    kind : char(4)\n"
	"    ---\n"
	"\n"
	"Stats (computed)\n"
	"    -> Session\n"
	"    -> Kind\n"
	"    ---\n"
	"    mean = 0.5 : float64\n"
	"    price : decimal(8,3)\n"
	"    make = ./mk.sh 'a b' \"c\\\"d\"\n"
	"    key_source = {\"subject_id\": [1, 2]}\n"
	"\n"
	"Stats.Unit (part)\n"
	"    unit : int64\n"
	"    ---\n"
	"    blob = null : bytes\n"
	"    meta = null : json\n"
	"    id = null : uuid\n";

static pipeline *djcfz_prev(void)
{
	static pipeline *prev;
	if (!prev) {
		char *msg = NULL;
		if (pipeline_parse(&prev, djcfz_prev_text, "prev.djc", NULL, &msg)) abort();
	}
	return prev;
}

/* Every value check of every attribute of p on the value text v. */
static void djcfz_values(const pipeline *p, const char *v, size_t vn)
{
	json_error_t je;
	json_t *j = json_loadb(v, vn, JSON_DECODE_ANY, &je);
	for (size_t i = 0; p && i < p->n; i++) {
		table *t = p->tables[i];
		for (size_t k = 0; k < t->nattrs; k++) {
			const attr *a = &t->attrs[k];
			val_t in = val_textn(v, vn), out;
			char *msg = NULL;
			value_in(a, &in, &out, &msg);
			val_free(&out);
			free(msg);
			in.t = DJC_BYTES;
			value_in(a, &in, &out, &msg);
			val_free(&out);
			free(msg);
			val_free(&in);
			if (j) {
				if (!value_from_json(a, j, &out, &msg)) {
					/* a stored value reads back and prints */
					val_t back;
					value_out(a, &out, &back);
					sb_t b = SB_INIT;
					value_to_json(&b, a, &back);
					sb_free(&b);
					val_free(&back);
				}
				val_free(&out);
				free(msg);
			}
		}
	}
	json_decref(j);
}

/* Input: a pipeline text, optionally followed by a NUL byte and a value
 * text checked against every attribute of the new and previous tables. */
static int djcfz_pipeline(const uint8_t *d, size_t n)
{
	const pipeline *prev = djcfz_prev();
	const uint8_t *nul = memchr(d, 0, n);
	size_t dn = nul ? (size_t)(nul - d) : n;
	char *s = djcfz_text(d, dn);
	pipeline *p = NULL;
	char *msg = NULL;
	if (pipeline_parse(&p, s, "fuzz.djc", prev, &msg) == DJC_OK) djcfz_touch_pipeline(p);
	if (nul) {
		const char *v = (const char *)nul + 1;
		size_t vn = n - dn - 1;
		djcfz_values(prev, v, vn);
		djcfz_values(p, v, vn);
	}
	pipeline_free(p);
	free(msg);
	free(s);
	return 0;
}

/* ----------------------------------------------------------------- row */
static const char djcfz_row_text[] =
	"Parent (manual)\n"
	"    pid : int64\n"
	"    ---\n"
	"\n"
	"Every (manual)\n"
	"    -> Parent\n"
	"    k8 : int8\n"
	"    ---\n"
	"    i16 = null : int16\n"
	"    i32 = null : int32\n"
	"    i64 = null : int64\n"
	"    u8 = null : uint8\n"
	"    u16 = null : uint16\n"
	"    u32 = null : uint32\n"
	"    u64 = null : uint64\n"
	"    f32 = null : float32\n"
	"    f64 = 1.5 : float64\n"
	"    b = null : bool\n"
	"    dec = null : decimal(10,3)\n"
	"    dec0 = null : decimal(38,0)\n"
	"    c = null : char(3)\n"
	"    vc = 'd' : varchar(8)\n"
	"    e = null : enum('a', 'B', 'c d')\n"
	"    dt = null : date\n"
	"    ts = null : datetime\n"
	"    ts3 = CURRENT_TIMESTAMP : datetime(3)\n"
	"    ts6 = null : datetime(6)\n"
	"    id = null : uuid\n"
	"    js = null : json\n"
	"    raw = null : bytes\n";

static table *djcfz_every(void)
{
	static pipeline *p;
	if (!p) {
		char *msg = NULL;
		if (pipeline_parse(&p, djcfz_row_text, "row.djc", NULL, &msg)) abort();
	}
	return pipeline_find(p, "Every");
}

/* Input: JSON text (a row object, or any value). */
static int djcfz_row(const uint8_t *d, size_t n)
{
	table *t = djcfz_every();
	json_error_t je;
	json_t *j = json_loadb((const char *)d, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (j) {
		djc_row *r = NULL;
		char *msg = NULL;
		if (row_from_json_obj(t, j, &r, &msg) == DJC_OK) {
			sb_t b = SB_INIT;
			row_to_json(&b, t, r);
			sb_free(&b);
			free(key_to_json(t, r, 0));
			free(key_to_json(t, r, 1));
			/* the insert path's check: defaults, nullability, key */
			djc_row *prep = NULL;
			char *m2 = NULL;
			djc_row *key = djc_row_new();
			djc_row_set_int(key, "pid", 7);
			if (row_prepare(NULL, t, r, key, &prep, &m2) == DJC_OK) {
				sb_t b2 = SB_INIT;
				row_to_json(&b2, t, prep);
				sb_free(&b2);
			}
			djc_row_free(key);
			djc_row_free(prep);
			free(m2);
		}
		djc_row_free(r);
		free(msg);
		/* each attribute alone, and each member of an object or array */
		for (size_t k = 0; k < t->nattrs; k++) {
			val_t out;
			char *m = NULL;
			value_from_json(&t->attrs[k], j, &out, &m);
			val_free(&out);
			free(m);
		}
		json_decref(j);
	}
	/* the untyped public parser, and the typed check of its result */
	char *s = djcfz_text(d, n);
	djc_row *r = NULL;
	char *msg = NULL;
	if (djc_row_from_json(&r, s, &msg) == DJC_OK) {
		free(djc_row_to_json(r));
		djc_row *dup = djc_row_dup(r);
		djc_row *prep = NULL;
		char *m2 = NULL;
		if (row_prepare(NULL, t, dup, NULL, &prep, &m2) == DJC_OK) djc_row_free(prep);
		free(m2);
		djc_row_free(dup);
		for (size_t i = 0; i < djc_row_count(r); i++) {
			int64_t iv; uint64_t uv; double fv; const char *tv; const void *bv; size_t bn;
			djc_row_int(&iv, r, i);
			djc_row_uint(&uv, r, i);
			djc_row_float(&fv, r, i);
			djc_row_text(&tv, r, i);
			djc_row_bytes(&bv, &bn, r, i);
		}
	}
	djc_row_free(r);
	free(msg);
	free(s);
	return 0;
}

#endif
