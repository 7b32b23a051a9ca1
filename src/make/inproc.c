/* inproc.c - a make in another language that runs in the worker's own
 * process, calling this library (python/djc_lib.py's populate and
 * worker): the serve protocol's messages as function calls (contract in
 * djc.h, djc_make_request and djc_make_insert_json), answered and staged
 * by the code that serves a serve program's pipe (serve.c, make.c), so
 * such a make sees what a serve program sees, without the pipe's hop. */
#include "make.h"
#include "serve.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int djc_make_request(char **out, size_t *len, void ***raw, size_t *nraw, djc_make_ctx *ctx, const char *req,
		     size_t n)
{
	if (out) *out = NULL;
	if (len) *len = 0;
	if (raw) *raw = NULL;
	if (nraw) *nraw = 0;
	if (!out || !len || !ctx || !req || !raw != !nraw) return DJC_EINVAL;
	sb_t b = SB_INIT;
	raw_parts parts = {0};
	json_t *j = request_parse(req, n);
	const char *tag = json_string_value(json_object_get(j, "_djc"));
	if (json_is_object(j) && tag && !strcmp(tag, "key"))
		key_line_add(&b, ctx->t, ctx->key, djc_make_attempt(ctx));
	else
		request_answer(ctx, j, &b, raw ? &parts : NULL, "a make's request is one JSON object: {\"_djc\": \"key\"}, "
			       "{\"_djc\": \"table\"} or {\"_djc\": \"fetch\", \"table\": \"Name\", ...}");
	json_decref(j);
	*len = b.len;
	*out = sb_steal(&b);
	if (raw) {
		*raw = (void **)parts.bufs;
		*nraw = parts.n;
	}
	return DJC_OK;
}

/* The raw values a row's "_bin" names into b, their data from
 * raw[0..nraw): NULL, or what is wrong (caller frees). */
static char *bins_of(json_t *bin, const void *const *raw, size_t nraw, row_bins *b)
{
	size_t total;
	if (row_bins_parse(bin, SIZE_MAX, b, &total))
		return xstrdup("a row's \"_bin\" must be a list of [\"attribute\", length]");
	if (b->n != nraw) return xasprintf("the row's \"_bin\" names %zu raw values, %zu given", b->n, nraw);
	for (size_t i = 0; i < nraw; i++) {
		if (!raw[i] && b->lens[i]) return xasprintf("raw value %zu (\"%s\") is NULL", i, b->names[i]);
		b->data[i] = raw[i];
	}
	return NULL;
}

int djc_make_insert_json(djc_make_ctx *ctx, const char *json, size_t n, const void *const *raw, size_t nraw)
{
	if (!ctx) return DJC_EINVAL;
	if (!json || (nraw && !raw)) {
		djc_make_error(ctx, "djc_make_insert_json: no row (NULL) for %s", ctx->t->name);
		return DJC_EINVAL;
	}
	json_error_t je;
	int utf8 = utf8_valid(json, n);
	json_t *j = utf8 ? json_loadb(json, n, JSON_REJECT_DUPLICATES, &je) : NULL;
	char *m = NULL;
	row_bins b = {0};
	int rc = DJC_EINVAL;
	if (!j && utf8 && (m = make_wide_int_message(json, n, &je, "attribute")))
		;   /* a number too big for JSON's integers, named as a serve program's row's is */
	else if (!j)
		m = utf8 ? xasprintf("a row must be one JSON object: %s", je.text) : xstrdup("a row must be UTF-8 text");
	else if (!json_is_object(j))
		m = xstrdup("expected a JSON object per row");
	else {
		json_t *bin = json_object_get(j, "_bin");
		if (bin) m = bins_of(bin, raw, nraw, &b);
		else if (nraw) m = xasprintf("%zu raw values given, but the row has no \"_bin\" naming them", nraw);
		if (!m) {
			json_object_del(j, "_bin");
			rc = stage_json_row_bins(ctx->c, ctx->t, ctx->key, j, &b, &ctx->out, &m);
		}
	}
	if (m) {
		djc_make_error(ctx, "%s", m);
		rc = rc ? rc : DJC_EINVAL;
	}
	row_bins_free(&b);
	free(m);
	json_decref(j);
	return rc;
}
