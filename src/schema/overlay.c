/* overlay.c - the overlay file of `djc adopt` (adopt.h, docs/adopt.md):
 * how djc makes the computed tables of an adopted DataJoint schema, whose
 * make() lives in Python, not in the database.
 *
 *   # ephys.djc
 *   SpikeSorting
 *       make_serve = python3 sort.py
 *       timeout = 2h
 */
#include "adopt.h"
#include "../util/sb.h"
#include "djc.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const keys[] = {"make", "make_serve", "timeout", "key_source"};

/* The overlay key a line (trimmed) starts with, or NULL. */
static const char *line_key(const char *s)
{
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
		size_t n = strlen(keys[i]);
		if (strncmp(s, keys[i], n)) continue;
		const char *p = s + n;
		while (*p == ' ' || *p == '\t') p++;
		if (*p == '=') return keys[i];
	}
	return NULL;
}

static int class_ok(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_') return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '.') return 0;
	return 1;
}

/* One non-blank line: a table (not indented) or a key line of the
 * current block. */
static int ov_line_add(adopt_overlay *ov, char *s, int indented, int line, char **msg)
{
	if (!indented) {
		if (!class_ok(s)) {
			*msg = xasprintf("%s:%d: '%s' is not a table name (a block starts with the table's class name)", ov->file, line, s);
			return DJC_EINVAL;
		}
		for (size_t i = 0; i < ov->n; i++)
			if (!strcmp(ov->blocks[i].table, s)) {
				*msg = xasprintf("%s:%d: second block for table %s", ov->file, line, s);
				return DJC_EINVAL;
			}
		ov->blocks = xrealloc(ov->blocks, (ov->n + 1) * sizeof *ov->blocks);
		ov->blocks[ov->n++] = (ov_block){xstrdup(s), line, NULL, 0};
		return DJC_OK;
	}
	const char *k = line_key(s);
	if (!ov->n || !k) {
		*msg = xasprintf(ov->n ? "%s:%d: '%s': an overlay block has only make, make_serve, timeout and key_source lines"
				       : "%s:%d: '%s' before the first table name", ov->file, line, s);
		return DJC_EINVAL;
	}
	ov_block *b = &ov->blocks[ov->n - 1];
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->lines[i].key, k)) {
			*msg = xasprintf("%s:%d: second '%s =' line for table %s", ov->file, line, k, b->table);
			return DJC_EINVAL;
		}
	b->lines = xrealloc(b->lines, (b->n + 1) * sizeof *b->lines);
	b->lines[b->n++] = (ov_line){xstrdup(k), xstrdup(s), line};
	return DJC_OK;
}

int adopt_overlay_parse(adopt_overlay **out, const char *text, const char *file, char **msg)
{
	*out = NULL;
	*msg = NULL;
	adopt_overlay *ov = xcalloc(1, sizeof *ov);
	ov->file = xstrdup(file ? file : "overlay");
	int line = 0, rc = DJC_OK;
	for (const char *p = text; *p && !rc;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *s = xstrndup(p, n), *t = s;
		line++;
		int indented = *t == ' ' || *t == '\t';
		while (*t == ' ' || *t == '\t') t++;
		size_t l = strlen(t);
		while (l && isspace((unsigned char)t[l - 1])) t[--l] = 0;
		if (*t && *t != '#') rc = ov_line_add(ov, t, indented, line, msg);
		free(s);
		p = e ? e + 1 : p + n;
	}
	if (rc) adopt_overlay_free(ov);
	else *out = ov;
	return rc;
}

void adopt_overlay_free(adopt_overlay *ov)
{
	if (!ov) return;
	for (size_t i = 0; i < ov->n; i++) {
		for (size_t k = 0; k < ov->blocks[i].n; k++) {
			free(ov->blocks[i].lines[k].key);
			free(ov->blocks[i].lines[k].text);
		}
		free(ov->blocks[i].lines);
		free(ov->blocks[i].table);
	}
	free(ov->blocks);
	free(ov->file);
	free(ov);
}
