/* io.c - JSON Lines insert and formatted fetch output for the CLI (and any
 * caller that wants rows typed by the table's heading). */
#include "table.h"
#include "table/opts.h"
#include "table/algebra.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* An insert of rows into t, all or nothing. `direct` lets rows into a
 * computed, imported or part table (DataJoint's allow_direct_insert).
 * lines: the line (or position) each row came from in src, or NULL (rows
 * named by position). */
typedef struct ins_req {
	djc_conn *c;
	table *t;
	djc_row **rows;
	size_t n;
	int skip;      /* skip_duplicates */
	int direct;
	const long *lines;
	const char *src;
} ins_req;

static int insert_rows(const ins_req *q, size_t *inserted);

/* A set of key texts (open addressing). */
typedef struct kset { char **v; size_t cap, n; } kset;

static size_t khash(const char *s) { size_t h = 1469598103934665603ULL; for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL; return h; }

/* Add k (taken); 0 if it was already there (k is then freed). */
static int kset_add(kset *ks, char *k)
{
	if (2 * (ks->n + 1) > ks->cap) {
		kset big = {xcalloc(ks->cap ? ks->cap * 2 : 64, sizeof(char *)), ks->cap ? ks->cap * 2 : 64, 0};
		for (size_t i = 0; i < ks->cap; i++) if (ks->v[i]) kset_add(&big, ks->v[i]);
		free(ks->v);
		*ks = big;
	}
	size_t i = khash(k) & (ks->cap - 1);
	while (ks->v[i]) {
		if (!strcmp(ks->v[i], k)) { free(k); return 0; }
		i = (i + 1) & (ks->cap - 1);
	}
	ks->v[i] = k;
	ks->n++;
	return 1;
}

static void kset_free(kset *ks) { for (size_t i = 0; i < ks->cap; i++) free(ks->v[i]); free(ks->v); }

/* The rows of one attempt: all prepared rows, or (skip_duplicates) those
 * whose key is not stored yet, each with its line. */
typedef struct ins_set {
	djc_row **ins;
	size_t nins;
	const long *lines;
	djc_row **kept;   /* owned when skipping */
	long *klines;
} ins_set;

static void ins_set_free(ins_set *s)
{
	free(s->kept);
	free(s->klines);
	memset(s, 0, sizeof *s);
}

/* The stored keys among rows[0..n) of t, added to ks. */
static int stored_keys(djc_conn *c, table *t, djc_row **rows, size_t n, kset *ks)
{
	q_arena a = Q_ARENA_INIT;
	q_sel *s = q_select(&a);
	q_col *cols = q_alloc(&a, (t->nkey ? t->nkey : 1) * sizeof *cols);
	const coldef **types = q_alloc(&a, (t->nkey ? t->nkey : 1) * sizeof *types);
	val_t *vals = xcalloc(n * t->nkey + 1, sizeof(val_t));
	for (size_t i = 0; i < t->nkey; i++) {
		cols[i] = (q_col){NULL, NULL, t->attrs[i].name};
		types[i] = &t->attrs[i].type;
		q_col_item(&a, s, cols[i], NULL);
	}
	for (size_t r = 0; r < n; r++)
		for (size_t i = 0; i < t->nkey; i++) val_copy(&vals[r * t->nkey + i], row_get(rows[r], t->attrs[i].name));
	q_from_table(&a, s, table_sqlref(t), NULL, 0);
	q_node *in = q_in(&a, cols, types, t->nkey, vals, n, 0);
	in->by_value = 1;   /* the primary key's index serves each row */
	q_where(&a, s, in);
	djc_rowset *rs = NULL;
	int rc = rows_fetch(c, t, s, &rs);
	for (size_t i = 0; !rc && i < rs->n; i++) kset_add(ks, key_to_json(t, rs->rows[i], 0));
	djc_rowset_free(rs);
	free(vals);
	q_arena_free(&a);
	return rc;
}

/* skip_duplicates without INSERT IGNORE (which on MySQL also hides foreign
 * key errors): drop the rows whose key is already stored, or repeats an
 * earlier row of the input, inside the caller's transaction. Keeps the
 * order; s gets the survivors (pointers into rows) and their lines. */
static int drop_existing(const ins_req *q, djc_row **rows, ins_set *s)
{
	kset ks = {0};
	int rc = DJC_OK;
	size_t n = q->n;
	for (size_t at = 0; at < n && !rc; at += 200) rc = stored_keys(q->c, q->t, rows + at, n - at < 200 ? n - at : 200, &ks);
	ins_set_free(s);
	s->kept = xcalloc(n ? n : 1, sizeof(djc_row *));
	s->klines = xcalloc(n ? n : 1, sizeof(long));
	for (size_t i = 0; !rc && i < n; i++)
		if (kset_add(&ks, key_to_json(q->t, rows[i], 0))) {
			s->klines[s->nins] = q->lines ? q->lines[i] : (long)i + 1;
			s->kept[s->nins++] = rows[i];
		}
	s->ins = s->kept;
	s->lines = s->klines;
	kset_free(&ks);
	return rc;
}

/* After row r (as prepared) of t failed on a foreign key, and its
 * transaction was rolled back: "no row of Subject with {"subject_id": 7}"
 * for the first parent without the row r references (looked up now), or
 * NULL when each has it by now (a parent row deleted and inserted again
 * meanwhile). A foreign key with a NULL value references nothing. */
static char *missing_parent(djc_conn *c, const table *t, const djc_row *r)
{
	char *out = NULL;
	for (size_t f = 0; f < t->nfks && !out; f++) {
		const fkey *fk = &t->fks[f];
		q_arena a = Q_ARENA_INIT;
		q_sel *s = q_select(&a);
		sb_t key = SB_INIT;
		q_item_add(&a, s, QI_ONE, NULL);
		q_from_table(&a, s, table_sqlref(fk->ptable), NULL, 0);
		int null = 0;
		for (size_t k = 0; k < fk->nattrs && !null; k++) {
			const val_t *v = row_get(r, fk->cattrs[k]);   /* the child's name (a renamed reference) */
			const attr *at = table_attr(fk->ptable, fk->attrs[k]);
			if (!v || v->t == DJC_NULL || !at) { null = 1; break; }
			val_t x;
			val_copy(&x, v);
			q_where(&a, s, q_cmp(&a, (q_col){NULL, NULL, fk->attrs[k]}, "=", x));
			sb_add(&key, k ? ", " : "{");
			json_quote(&key, fk->attrs[k], strlen(fk->attrs[k]));
			sb_add(&key, ": ");
			value_to_json(&key, at, v);
		}
		sb_t q = SB_INIT;
		pvec p = {0};
		q_out o = {&q, &p, 0};
		db_res *res = NULL;
		if (!null && !q_select_sql(c->db, s, &o) && !db_exec(c->db, sb_str(&q), p.v, p.n, &res) && !res->nrows)
			out = xasprintf("no row of %s with %s}", fk->ptable->name, sb_str(&key));
		db_res_free(res);
		sb_free(&q);
		pvec_free(&p);
		sb_free(&key);
		q_arena_free(&a);
	}
	return out;
}

/* Each row checked against t's heading (row_prepare) into prep[]; the
 * first bad one's message, naming its line. */
static int prepare_rows(const ins_req *q, djc_row **prep)
{
	for (size_t i = 0; i < q->n; i++) {
		char *msg = NULL;
		int rc = row_prepare(q->c, q->t, q->rows[i], NULL, &prep[i], &msg);
		if (!rc) continue;
		char *k = key_to_json(q->t, q->rows[i], 0);
		if (q->lines) conn_fail(q->c, DJC_EINVAL, "%s:%ld: row %s: %s", q->src, q->lines[i], k, msg);
		else conn_fail(q->c, DJC_EINVAL, "row %zu %s: %s", i + 1, k, msg);
		free(k);
		free(msg);
		return rc;
	}
	return DJC_OK;
}

/* The message of an insert whose row s->ins[bad] failed with rc (the
 * transaction still open: a foreign key failure rolls it back to look the
 * parents up). Returns the code to report. */
static int insert_failed(const ins_req *q, const ins_set *s, size_t bad, int rc)
{
	djc_conn *c = q->c;
	table *t = q->t;
	char *k = key_to_json(t, s->ins[bad], 0);
	char where[600];
	if (q->lines) snprintf(where, sizeof where, "%s:%ld: row %s", q->src, s->lines[bad], k);
	else snprintf(where, sizeof where, "row %ld %s", s->lines ? s->lines[bad] : (long)bad + 1, k);
	if (rc == DJC_EFOREIGN) db_rollback(c->db);   /* to look the parents up */
	char *miss = rc == DJC_EFOREIGN ? missing_parent(c, t, s->ins[bad]) : NULL;
	if (rc == DB_EUNIQUE)
		conn_fail(c, rc, "%s: repeats a value of a unique index of %s (%s)", where, t->name, c->db->err);
	else if (rc == DJC_EDUPLICATE)
		conn_fail(c, rc, "%s: duplicate primary key in %s (set skip_duplicates in djc_insert_options to skip it)",
			  where, t->name);   /* djc insert says its --skip-duplicates instead */
	else if (miss)
		conn_fail(c, rc, "%s: %s (a parent of %s): insert it first", where, miss, t->name);
	else if (rc == DJC_EFOREIGN)
		conn_fail(c, rc, "%s: no matching row in a parent table of %s", where, t->name);
	else if (rc == DJC_EINVAL)
		conn_fail(c, rc, "%s: rejected by the database: %s", where, c->db->err);
	else
		conn_fail(c, rc, "%s: %s", where, c->db->err);
	free(k);
	free(miss);
	return rc == DB_EUNIQUE ? DJC_EDUPLICATE : rc;
}

/* How an attempt of insert_once ended, for conn_retry. */
enum { TRY_FINAL, TRY_AGAIN, TRY_AGAIN_COMMIT };

/* The rows of this attempt (s): all prepared rows, or the new ones. */
static int ins_rows(const ins_req *q, djc_row **prep, ins_set *s)
{
	if (q->skip) return drop_existing(q, prep, s);
	s->ins = prep;
	s->nins = q->n;
	s->lines = q->lines;
	return DJC_OK;
}

/* One transaction inserting the prepared rows: many rows go in multi-row
 * statements; if that fails, the one-by-one pass finds the row to name in
 * the message. *again says whether a failure may be retried. */
static int insert_once(const ins_req *q, djc_row **prep, size_t *inserted, int *again)
{
	djc_conn *c = q->c;
	ins_set s = {0};
	size_t bad = 0;
	int rc;
	*again = TRY_FINAL;
	if ((rc = db_begin(c->db))) { *again = TRY_AGAIN; return conn_dbfail(c, rc, "insert"); }
	if ((rc = ins_rows(q, prep, &s))) goto rollback;
	int one_by_one = s.nins <= 1;
	if (!one_by_one && (rc = rows_insert_many(c, q->t, s.ins, s.nins, 0, inserted)) && rc != DJC_ECONN) {
		db_rollback(c->db);
		if ((rc = db_begin(c->db))) { rc = conn_dbfail(c, rc, "insert"); goto out; }
		/* the rows checked before may have changed meanwhile: check again */
		if ((rc = ins_rows(q, prep, &s))) goto rollback;
		one_by_one = 1;
	}
	if (one_by_one) rc = rows_insert(c, q->t, s.ins, s.nins, 0, inserted, &bad);
	if (rc) {
		rc = insert_failed(q, &s, bad, rc);
		*again = TRY_AGAIN;
		goto rollback;
	}
	if ((rc = db_commit(c->db))) {
		rc = conn_dbfail(c, rc, "insert");
		*again = TRY_AGAIN_COMMIT;
		goto rollback;
	}
	goto out;
rollback:
	db_rollback(c->db);
	if (*again && inserted) *inserted = 0;
out:
	ins_set_free(&s);
	return rc;
}

/* Insert rows into t, all or nothing. The jobs table needs nothing when
 * `direct` lets rows into a computed table: a key with a target row is
 * skipped by refresh and populate and its job closed when reserved
 * (claim.made). A deadlock, serialization failure or busy database rolls
 * the whole insert back: it runs again (conn_retry's bounded backoff). */
static int insert_rows(const ins_req *q, size_t *inserted)
{
	djc_conn *c = q->c;
	table *t = q->t;
	if (inserted) *inserted = 0;
	/* a part of a manual or lookup table is filled by hand, as its master
	 * is (DataJoint's Part.insert); a computed or imported master's parts
	 * come from its make */
	if (!q->direct && (table_populated(t) || (t->tier == TIER_PART && (!t->master || table_populated(t->master)))))
		return conn_fail(c, DJC_EINVAL,
				 "table %s is %s: its rows come from populate, not insert (--allow-direct-insert, or the "
				 "option allow_direct_insert, inserts them by hand for a repair)",
				 t->name, t->tier == TIER_PART ? "a part table" : tier_name(t->tier));
	djc_row **prep = xcalloc(q->n ? q->n : 1, sizeof(djc_row *));
	int rc = prepare_rows(q, prep);
	for (int attempt = 0, again; !rc;) {
		rc = insert_once(q, prep, inserted, &again);
		if (!rc || !again || !conn_retry(c, rc, again == TRY_AGAIN_COMMIT, 0, &attempt)) break;
		rc = DJC_OK;
	}
	for (size_t i = 0; i < q->n; i++) djc_row_free(prep[i]);
	free(prep);
	return rc;
}

/* An options struct of this library's version (or NULL). */
static int insert_opts_ok(djc_conn *c, const djc_insert_options *opts)
{
	return !opts || !OPTS_VERSION(c, "insert", opts, 1, INSERT);
}

/* allow_direct_insert, which version 1 of the options does not have. */
static int opts_direct(const djc_insert_options *opts)
{
	return opts && opts->version >= 2 && opts->allow_direct_insert;
}

int djc_insert_ext(size_t *inserted, djc_conn *c, const char *name, const djc_row *const *rows, size_t n,
		   const djc_insert_options *opts)
{
	if (inserted) *inserted = 0;
	if (!insert_opts_ok(c, opts)) return DJC_EINVAL;
	if (n && !rows) return conn_fail(c, DJC_EINVAL, "%zu rows announced, none given (NULL)", n);
	for (size_t i = 0; i < n; i++)
		if (!rows[i]) return conn_fail(c, DJC_EINVAL, "row %zu is NULL", i + 1);
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc || (rc = adopted_insert_check(c, t))) return rc;
	ins_req q = {c, t, (djc_row **)rows, n, opts && opts->skip_duplicates, opts_direct(opts), NULL, NULL};
	return insert_rows(&q, inserted);
}

/* {"a": 1} of the key attributes present in a row object as written (for
 * messages about rows that did not convert); NULL when there are none. */
static char *raw_key(const table *t, json_t *obj)
{
	if (!json_is_object(obj)) return NULL;
	sb_t b = SB_INIT;
	int first = 1;
	for (size_t i = 0; i < t->nkey; i++) {
		json_t *v = json_object_get(obj, t->attrs[i].name);
		if (!v) continue;
		char *d = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		sb_add(&b, first ? "{" : ", ");
		first = 0;
		json_quote(&b, t->attrs[i].name, strlen(t->attrs[i].name));
		if (d && strlen(d) > 40) {
			int cut = 37;
			while (cut > 0 && ((unsigned char)d[cut] & 0xC0) == 0x80) cut--;   /* whole characters */
			sb_printf(&b, ": %.*s...", cut, d);
		} else
			sb_printf(&b, ": %s", d ? d : "?");
		free(d);
	}
	if (first) return NULL;
	sb_addc(&b, '}');
	return sb_steal(&b);
}

/* The rows read from an input, each with the line (or position) it came from. */
typedef struct rowbuf { djc_row **rows; long *lines; size_t n, cap; } rowbuf;

static void push_row(rowbuf *b, djc_row *r, long line)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->rows = xrealloc(b->rows, b->cap * sizeof(djc_row *));
		b->lines = xrealloc(b->lines, b->cap * sizeof(long));
	}
	b->rows[b->n] = r;
	b->lines[b->n++] = line;
}

static void rowbuf_free(rowbuf *b)
{
	for (size_t i = 0; i < b->n; i++) djc_row_free(b->rows[i]);
	free(b->rows);
	free(b->lines);
}

/* One JSON object as a row of t; where ("rows.jsonl:3") names it in the
 * message of a value the heading refuses. */
static int json_row(djc_conn *c, table *t, json_t *j, const char *where, djc_row **out)
{
	char *msg = NULL;
	if (!row_from_json_obj(t, j, out, &msg)) return DJC_OK;
	char *k = raw_key(t, j);
	if (k) conn_fail(c, DJC_EINVAL, "%s: row %s: %s", where, k, msg);
	else conn_fail(c, DJC_EINVAL, "%s: %s", where, msg);
	free(k);
	free(msg);
	return DJC_EINVAL;
}

/* The input as one JSON array of objects (what json.dump of a list, or jq
 * -s, writes): first is its first line, the rest is read from in. Each
 * row is named by its position in messages ("rows.json: element 3"). */
static int read_json_array(djc_conn *c, table *t, FILE *in, const char *first, const char *src, rowbuf *out)
{
	sb_t b = SB_INIT;
	sb_add(&b, first);
	sb_addc(&b, '\n');
	char buf[65536];
	size_t r;
	while ((r = fread(buf, 1, sizeof buf, in)) > 0) sb_addn(&b, buf, r);
	if (ferror(in)) { sb_free(&b); return conn_fail(c, DJC_EINVAL, "%s: read error", src); }
	if (strlen(sb_str(&b)) != b.len || !utf8_valid(sb_str(&b), b.len)) {
		sb_free(&b);
		return conn_fail(c, DJC_EINVAL, "%s: not valid UTF-8 text (or a NUL byte)", src);
	}
	json_error_t je;
	json_t *a = json_loadb(sb_str(&b), b.len, JSON_REJECT_DUPLICATES, &je);
	sb_free(&b);
	if (!a) return conn_fail(c, DJC_EINVAL, "%s:%d: malformed JSON array (column %d): %s", src, je.line, je.column, je.text);
	int rc = DJC_OK;
	size_t i;
	json_t *j;
	if (!json_is_array(a)) rc = conn_fail(c, DJC_EINVAL, "%s: expected a JSON array of objects", src);
	json_array_foreach(a, i, j) {
		if (rc) break;
		char *where = xasprintf("%s: element %zu", src, i + 1);
		djc_row *row = NULL;
		if (!json_is_object(j)) rc = conn_fail(c, DJC_EINVAL, "%s: expected a JSON object", where);
		else if (!(rc = json_row(c, t, j, where, &row))) push_row(out, row, (long)i + 1);
		free(where);
	}
	json_decref(a);
	return rc;
}

/* What an insert from a stream checks first: the stream, the options, the
 * table (*t). */
static int insert_open(djc_conn *c, const char *name, FILE *in, const djc_insert_options *opts, size_t *inserted, table **t)
{
	if (inserted) *inserted = 0;
	if (!in) return conn_fail(c, DJC_EINVAL, "no input stream (NULL)");
	if (!insert_opts_ok(c, opts)) return DJC_EINVAL;
	int rc = conn_table(c, name, t);
	return rc ? rc : adopted_insert_check(c, *t);
}

int djc_insert_jsonl_ext(size_t *inserted, djc_conn *c, const char *name, void *inp, const char *src,
			 const djc_insert_options *opts)
{
	FILE *in = inp;
	table *t;
	int rc = insert_open(c, name, in, opts, inserted, &t);
	if (rc) return rc;
	if (!src) src = "<stdin>";
	rowbuf rb = {0};
	char *line = NULL;
	size_t lcap = 0;
	ssize_t len;
	long lineno = 0;
	int array = 0;
	rc = DJC_OK;
	while ((len = getline(&line, &lcap, in)) >= 0) {
		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
		const char *p = line;
		while (*p == ' ' || *p == '\t') p++;
		if (!*p) continue;
		if ((size_t)len != strlen(line)) { rc = conn_fail(c, DJC_EINVAL, "%s:%ld: NUL byte in input", src, lineno); break; }
		if (!utf8_valid(line, (size_t)len)) { rc = conn_fail(c, DJC_EINVAL, "%s:%ld: not valid UTF-8 text", src, lineno); break; }
		if (*p == '[' && !rb.n) {   /* not JSON Lines: one JSON array of objects, the whole input */
			rc = read_json_array(c, t, in, line, src, &rb);
			array = 1;
			break;
		}
		json_error_t je;
		json_t *j = json_loadb(line, (size_t)len, JSON_REJECT_DUPLICATES, &je);
		if (!j) {
			/* a pretty-printed object spans lines: say what insert reads */
			int piece = *p != '{' || line[len - 1] != '}';
			rc = conn_fail(c, DJC_EINVAL, "%s:%ld: malformed JSON (column %d): %s%s", src, lineno, je.column, je.text,
				       piece ? " (insert reads one JSON object per line, or one JSON array of objects)" : "");
			break;
		}
		djc_row *r = NULL;
		char *where = xasprintf("%s:%ld", src, lineno);
		rc = json_row(c, t, j, where, &r);
		free(where);
		json_decref(j);
		if (rc) break;
		push_row(&rb, r, lineno);
	}
	free(line);
	if (!rc && ferror(in)) rc = conn_fail(c, DJC_EINVAL, "%s: read error", src);
	/* an array's rows are named by their position ("row 3"), not a line */
	ins_req q = {c, t, rb.rows, rb.n, opts && opts->skip_duplicates, opts_direct(opts), array ? NULL : rb.lines, src};
	if (!rc) rc = insert_rows(&q, inserted);
	rowbuf_free(&rb);
	return rc;
}

/* --------------------------------------------------------------- CSV */

/* One field of a CSV record: its text (unquoted) and whether it was
 * quoted ("" is an empty text; an empty unquoted field is no value). */
typedef struct csv_field { char *s; int quoted; } csv_field;

/* The next record of RFC 4180 CSV text (fields separated by commas,
 * records by LF or CRLF, a field quoted with '"' may hold commas, line
 * breaks and doubled quotes), into f (up to max fields, each allocated).
 * *nf: its fields; in->line: advanced over the record's line breaks.
 * Returns 1 for a record, 0 at the end, -1 for a quote that does not
 * close or text after a closing quote. */
/* CSV text being read: s[pos..len), pos at the start of line + 1. */
typedef struct csv_in { const char *s; size_t len, pos; long line; } csv_in;

/* csv_record's -1: the fields of the record read so far freed. */
static int csv_bad(csv_field *f, size_t max, size_t *nf, sb_t *b)
{
	for (size_t i = 0; i < *nf && i < max; i++) {
		free(f[i].s);
		f[i].s = NULL;
	}
	*nf = 0;
	sb_free(b);
	return -1;
}

static int csv_record(csv_in *in, csv_field *f, size_t max, size_t *nf)
{
	const char *s = in->s;
	size_t len = in->len, i = in->pos;
	long *line = &in->line;
	*nf = 0;
	if (i >= len) return 0;
	sb_t b = SB_INIT;
	for (;;) {
		int quoted = 0;
		sb_reset(&b);
		if (i < len && s[i] == '"') {
			quoted = 1;
			for (i++;; i++) {
				if (i >= len) return csv_bad(f, max, nf, &b);
				if (s[i] == '"') {
					if (i + 1 < len && s[i + 1] == '"') { sb_addc(&b, '"'); i++; continue; }
					i++;
					break;
				}
				if (s[i] == '\n') (*line)++;
				sb_addc(&b, s[i]);
			}
			if (i < len && s[i] != ',' && s[i] != '\n' && !(s[i] == '\r' && i + 1 < len && s[i + 1] == '\n'))
				return csv_bad(f, max, nf, &b);
		} else
			while (i < len && s[i] != ',' && s[i] != '\n' && !(s[i] == '\r' && (i + 1 == len || s[i + 1] == '\n')))
				sb_addc(&b, s[i++]);
		if (*nf < max) f[(*nf)++] = (csv_field){xstrdup(sb_str(&b)), quoted};
		else (*nf)++;
		if (i < len && s[i] == ',') { i++; continue; }
		if (i < len && s[i] == '\r') i++;
		if (i < len && s[i] == '\n') i++;
		(*line)++;
		break;
	}
	sb_free(&b);
	in->pos = i;
	return 1;
}

/* A CSV field as the JSON value a row of attribute a takes: numbers,
 * booleans and json attributes from their text, everything else a
 * string (bytes: base64; uint64 beyond int64: digits). Text that is not a
 * number where one is due stays a string: value_from_json names the
 * attribute and what it expects. */
static json_t *csv_value(const attr *a, const char *v)
{
	char *e;
	switch (a->type.t) {
	case T_INT8: case T_INT16: case T_INT32: case T_INT64: case T_UINT8: case T_UINT16: case T_UINT32: case T_UINT64: {
		if (*v && strspn(v, "+-0123456789") == strlen(v)) {
			errno = 0;
			long long x = strtoll(v, &e, 10);
			if (!*e && !errno) return json_integer(x);
		}
		return json_string(v);
	}
	case T_FLOAT32: case T_FLOAT64:
		if (*v && strspn(v, "+-0123456789.eE") == strlen(v)) {
			double x = strtod(v, &e);
			if (!*e) return json_real(x);
		}
		return json_string(v);
	case T_BOOL:
		if (!strcasecmp(v, "true") || !strcmp(v, "1")) return json_true();
		if (!strcasecmp(v, "false") || !strcmp(v, "0")) return json_false();
		return json_string(v);
	case T_JSON: {
		json_t *j = json_loads(v, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, NULL);
		return j ? j : json_string(v);   /* a bare word: stored as a JSON string */
	}
	default: return json_string(v);
	}
}

/* The header of a CSV input: each field an attribute of t, each once.
 * *cols (caller frees) the attributes in the header's order. */
static int csv_header(djc_conn *c, table *t, const csv_field *f, size_t nf, const char *src, const attr ***cols)
{
	*cols = xcalloc(nf ? nf : 1, sizeof(attr *));
	for (size_t i = 0; i < nf; i++) {
		const attr *a = table_attr(t, f[i].s);
		for (size_t k = 0; a && k < i; k++)
			if ((*cols)[k] == a) return conn_fail(c, DJC_EINVAL, "%s:1: column '%s' twice in the header", src, a->name);
		if (!a) {
			sb_t b = SB_INIT;
			json_quote(&b, f[i].s, strlen(f[i].s));
			conn_fail(c, DJC_EINVAL, "%s:1: header column %zu, %s, is not an attribute of %s (the first line names the "
				  "columns)", src, i + 1, sb_str(&b), t->name);
			sb_free(&b);
			return DJC_EINVAL;
		}
		(*cols)[i] = a;
	}
	return DJC_OK;
}

/* The records of a CSV text after its header, as rows of t. */
static int csv_rows(djc_conn *c, table *t, csv_in *in, const attr **cols, size_t ncol, const char *src, rowbuf *out)
{
	csv_field *f = xcalloc(ncol + 1, sizeof *f);
	size_t nf = 0;
	int rc = DJC_OK, r;
	for (long at = in->line + 1; !rc && (r = csv_record(in, f, ncol + 1, &nf)) != 0; at = in->line + 1) {
		if (r < 0) { rc = conn_fail(c, DJC_EINVAL, "%s:%ld: a quoted field does not close (or text follows its closing quote)", src, at); break; }
		if (nf == 1 && !f[0].quoted && !*f[0].s) { free(f[0].s); continue; }   /* a blank line */
		if (nf != ncol) rc = conn_fail(c, DJC_EINVAL, "%s:%ld: %zu field%s, the header has %zu", src, at, nf, nf == 1 ? "" : "s", ncol);
		json_t *obj = json_object();
		for (size_t i = 0; !rc && i < nf; i++)
			if (f[i].quoted || *f[i].s) json_object_set_new(obj, cols[i]->name, csv_value(cols[i], f[i].s));
		if (!rc) {
			char *where = xasprintf("%s:%ld", src, at);
			djc_row *row = NULL;
			if (!(rc = json_row(c, t, obj, where, &row))) push_row(out, row, at);
			free(where);
		}
		json_decref(obj);
		for (size_t i = 0; i < nf && i <= ncol; i++) free(f[i].s);
	}
	free(f);
	return rc;
}

int djc_insert_csv_ext(size_t *inserted, djc_conn *c, const char *name, void *inp, const char *src,
		       const djc_insert_options *opts)
{
	FILE *in = inp;
	table *t;
	int rc = insert_open(c, name, in, opts, inserted, &t);
	if (rc) return rc;
	if (!src) src = "<stdin>";
	sb_t b = SB_INIT;
	char buf[65536];
	size_t r;
	while ((r = fread(buf, 1, sizeof buf, in)) > 0) sb_addn(&b, buf, r);
	csv_in ci = {sb_str(&b), b.len, 0, 0};
	if (ci.len >= 3 && !memcmp(ci.s, "\xEF\xBB\xBF", 3)) ci.pos = 3;   /* a spreadsheet's byte order mark */
	size_t nh = 0;
	csv_field h[256];
	const attr **cols = NULL;
	rowbuf rb = {0};
	if (ferror(in)) rc = conn_fail(c, DJC_EINVAL, "%s: read error", src);
	else if (strlen(ci.s) != ci.len || !utf8_valid(ci.s, ci.len))
		rc = conn_fail(c, DJC_EINVAL, "%s: not valid UTF-8 text (or a NUL byte)", src);
	else if (csv_record(&ci, h, 256, &nh) != 1 || (nh == 1 && !*h[0].s))
		rc = conn_fail(c, DJC_EINVAL, "%s:1: no header line (CSV input starts with the attribute names)", src);
	else if (nh > 256) rc = conn_fail(c, DJC_EINVAL, "%s:1: more than 256 columns", src);
	else if (!(rc = csv_header(c, t, h, nh, src, &cols)))
		rc = csv_rows(c, t, &ci, cols, nh, src, &rb);
	for (size_t i = 0; i < nh && i < 256; i++) free(h[i].s);
	free(cols);
	sb_free(&b);
	ins_req q = {c, t, rb.rows, rb.n, opts && opts->skip_duplicates, opts_direct(opts), rb.lines, src};
	if (!rc) rc = insert_rows(&q, inserted);
	rowbuf_free(&rb);
	return rc;
}

char *djc_row_to_json_typed(djc_conn *c, const char *name, const djc_row *row)
{
	table *t;
	if (conn_table(c, name, &t)) return djc_row_to_json(row);
	sb_t b = SB_INIT;
	row_to_json(&b, t, row);
	return sb_steal(&b);
}

static void cell_text(sb_t *b, const attr *a, const val_t *v, int csv)
{
	if (v->t == DJC_NULL) { if (!csv) sb_add(b, "NULL"); return; }
	if (v->t == DJC_TEXT) { sb_addn(b, v->s, v->n); return; }
	value_to_json(b, a, v);
	if ((v->t == DJC_BYTES || v->t == DJC_UINT) && b->len >= 2 && b->s[b->len - 1] == '"') {   /* drop the JSON quotes */
		memmove(b->s, b->s + 1, b->len - 2);
		b->len -= 2;
		b->s[b->len] = 0;
	}
}

int djc_fetch_print(djc_conn *c, const char *name, const char *where, djc_format fmt, void *outp)
{
	return djc_fetch_print_ext(c, name, where, fmt, NULL, outp);
}

/* The fetched rows rs of t, ncol columns (the heading, then the hidden
 * ones), as JSON Lines. */
static void print_json(FILE *out, const table *t, const djc_rowset *rs, size_t ncol)
{
	sb_t b = SB_INIT;
	for (size_t i = 0; i < rs->n; i++) {
		sb_reset(&b);
		row_to_json(&b, t, rs->rows[i]);
		for (size_t k = t->nattrs; k < ncol; k++) {   /* "...}" -> "..., "_job_x": v}" */
			const val_t *v = row_get(rs->rows[i], t->attrs[k].name);
			b.s[--b.len] = 0;
			sb_add(&b, ",");
			json_quote(&b, t->attrs[k].name, strlen(t->attrs[k].name));
			sb_add(&b, ":");
			if (v) value_to_json(&b, &t->attrs[k], v);
			else sb_add(&b, "null");
			sb_addc(&b, '}');
		}
		fprintf(out, "%s\n", sb_str(&b));
	}
	sb_free(&b);
}

/* ... as CSV (RFC 4180) with a header line. */
static void print_csv(FILE *out, const table *t, const djc_rowset *rs, size_t ncol)
{
	sb_t b = SB_INIT;
	for (size_t k = 0; k < ncol; k++) fprintf(out, "%s%s", k ? "," : "", t->attrs[k].name);
	fputc('\n', out);
	for (size_t i = 0; i < rs->n; i++) {
		for (size_t k = 0; k < ncol; k++) {
			sb_reset(&b);
			const val_t *v = row_get(rs->rows[i], t->attrs[k].name);
			if (v) cell_text(&b, &t->attrs[k], v, 1);
			const char *s = sb_str(&b);
			if (k) fputc(',', out);
			if (v && v->t != DJC_NULL && !*s)
				fputs("\"\"", out);   /* an empty text, told apart from NULL (an empty field) */
			else if (strpbrk(s, ",\"\n\r")) {
				fputc('"', out);
				for (const char *p = s; *p; p++) { if (*p == '"') fputc('"', out); fputc(*p, out); }
				fputc('"', out);
			} else
				fputs(s, out);
		}
		fputc('\n', out);
	}
	sb_free(&b);
}

/* One cell of the table format: one line, long values cut (caller frees). */
static char *table_cell(const table *t, const djc_row *row, size_t k, size_t *width)
{
	sb_t b = SB_INIT;
	const val_t *v = row_get(row, t->attrs[k].name);
	if (v) cell_text(&b, &t->attrs[k], v, 0);
	char *s = xstrdup(sb_str(&b));
	sb_free(&b);
	for (char *p = s; *p; p++) if (*p == '\n' || *p == '\t' || *p == '\r') *p = ' ';
	size_t len = utf8_len(s, strlen(s));
	if (len > 48) {   /* long values are cut for display; --format json shows all */
		size_t cut = 0, ch = 0;
		while (s[cut] && ch < 45) { cut++; while (((unsigned char)s[cut] & 0xC0) == 0x80) cut++; ch++; }
		s[cut] = 0;
		char *t2 = xasprintf("%s...", s);
		free(s);
		s = t2;
		len = 48;
	}
	*width = len;
	return s;
}

/* ... as an aligned table: a header (key attributes starred), a rule,
 * the rows, and the count. */
static void print_table(FILE *out, const table *t, const djc_rowset *rs, size_t ncol)
{
	size_t nc = ncol;
	size_t *w = xcalloc(nc, sizeof(size_t));
	char **cells = xcalloc(nc * (rs->n + 1), sizeof(char *));
	for (size_t k = 0; k < nc; k++) {
		cells[k] = xasprintf("%s%s", t->attrs[k].in_key ? "*" : "", t->attrs[k].name);
		w[k] = utf8_len(cells[k], strlen(cells[k]));
	}
	for (size_t i = 0; i < rs->n; i++)
		for (size_t k = 0; k < nc; k++) {
			size_t len;
			cells[(i + 1) * nc + k] = table_cell(t, rs->rows[i], k, &len);
			if (len > w[k]) w[k] = len;
		}
	for (size_t i = 0; i <= rs->n; i++) {
		for (size_t k = 0; k < nc; k++) {
			const char *s = cells[i * nc + k];
			size_t len = utf8_len(s, strlen(s));
			fprintf(out, "%s%s", k ? "  " : "", s);
			if (k + 1 < nc) for (size_t p = len; p < w[k]; p++) fputc(' ', out);
		}
		fputc('\n', out);
		if (i == 0) {
			for (size_t k = 0; k < nc; k++) {
				if (k) fputs("  ", out);
				for (size_t p = 0; p < w[k]; p++) fputc('-', out);
			}
			fputc('\n', out);
		}
	}
	fprintf(out, "(%zu row%s)\n", rs->n, rs->n == 1 ? "" : "s");
	for (size_t i = 0; i < nc * (rs->n + 1); i++) free(cells[i]);
	free(cells);
	free(w);
}

int djc_fetch_print_ext(djc_conn *c, const char *name, const char *where, djc_format fmt, const djc_fetch_options *opts,
			void *outp)
{
	FILE *out = outp;
	if (!out) return conn_fail(c, DJC_EINVAL, "no output stream (NULL)");
	if (fmt != DJC_FORMAT_TABLE && fmt != DJC_FORMAT_JSON && fmt != DJC_FORMAT_CSV)
		return conn_fail(c, DJC_EINVAL, "unknown output format %d", (int)fmt);
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	djc_rowset *rs = NULL;
	if ((rc = djc_fetch_ext(&rs, c, name, where, opts))) return rc;
	/* the columns shown: the heading, then (all_columns) the hidden ones */
	size_t ncol = t->nattrs + (opts && opts->all_columns ? t->nhidden : 0);
	if (fmt == DJC_FORMAT_JSON) print_json(out, t, rs, ncol);
	else if (fmt == DJC_FORMAT_CSV) print_csv(out, t, rs, ncol);
	else print_table(out, t, rs, ncol);
	djc_rowset_free(rs);
	return DJC_OK;
}

/* ... as tab-separated values with a header line: a tab, newline, carriage
 * return or backslash in a value written \t \n \r \\; NULL as \N. */
static void print_tsv(FILE *out, const table *t, const djc_rowset *rs)
{
	sb_t b = SB_INIT;
	for (size_t k = 0; k < t->nattrs; k++) fprintf(out, "%s%s", k ? "\t" : "", t->attrs[k].name);
	fputc('\n', out);
	for (size_t i = 0; i < rs->n; i++) {
		for (size_t k = 0; k < t->nattrs; k++) {
			sb_reset(&b);
			const val_t *v = row_get(rs->rows[i], t->attrs[k].name);
			if (k) fputc('\t', out);
			if (!v || v->t == DJC_NULL) { fputs("\\N", out); continue; }
			cell_text(&b, &t->attrs[k], v, 1);
			for (const char *p = sb_str(&b); *p; p++) {
				const char *esc = *p == '\t' ? "\\t" : *p == '\n' ? "\\n" : *p == '\r' ? "\\r" : *p == '\\' ? "\\\\" : NULL;
				if (esc) fputs(esc, out);
				else fputc(*p, out);
			}
		}
		fputc('\n', out);
	}
	sb_free(&b);
}

/* The heading of e's fetched columns: all, or those of attrs ("a,b"; KEY:
 * the primary key's), which the fetch checked (algebra.c's narrow: each
 * attribute of e at most once). */
static void expr_view(const djc_expr *e, const char *attrs, table *v)
{
	*v = e->h;
	if (!attrs) return;
	v->attrs = xcalloc(e->h.nattrs + 1, sizeof(attr));
	v->nattrs = 0;
	for (const char *p = attrs; *p;) {
		size_t n = strcspn(p, ",");
		char *name = xstrndup(p, n);
		char *a = name, *z = name + n;
		while (*a == ' ') a++;
		while (z > a && z[-1] == ' ') *--z = 0;
		int i = strcmp(a, "KEY") ? alg_find(e, a) : -1;
		for (size_t j = 0; j < e->h.nattrs && v->nattrs < e->h.nattrs; j++)
			if (i >= 0 ? (size_t)i == j : !strcmp(a, "KEY") && e->h.attrs[j].in_key) v->attrs[v->nattrs++] = e->h.attrs[j];
		free(name);
		p += n + (p[n] == ',');
	}
}

int djc_fetch_expr_print(djc_conn *c, const djc_expr *e, const char *format, const djc_expr_fetch_options *opts, void *outp)
{
	FILE *out = outp;
	if (!c) return DJC_EINVAL;
	if (!out) return conn_fail(c, DJC_EINVAL, "no output stream (NULL)");
	const char *f = format ? format : "table";
	static const char *const fmts[] = {"table", "json", "jsonl", "csv", "tsv", NULL};
	int k = 0;
	while (fmts[k] && strcmp(fmts[k], f)) k++;
	if (!fmts[k]) return conn_fail(c, DJC_EINVAL, "unknown output format '%s' (table, json, jsonl, csv or tsv)", f);
	djc_rowset *rs = NULL;
	int rc = djc_fetch_expr(&rs, c, e, opts);
	if (rc) return rc;
	table v;
	expr_view(e, opts ? opts->attrs : NULL, &v);
	if (k == 1 || k == 2) print_json(out, &v, rs, v.nattrs);
	else if (k == 3) print_csv(out, &v, rs, v.nattrs);
	else if (k == 4) print_tsv(out, &v, rs);
	else print_table(out, &v, rs, v.nattrs);
	if (v.attrs != e->h.attrs) free(v.attrs);
	djc_rowset_free(rs);
	return DJC_OK;
}

/* The names before the API's convention (djc.h): deprecated, removed in 0.2. */
int djc_insert(djc_conn *c, const char *name, const djc_row *const *rows, size_t n, const djc_insert_options *opts,
	       size_t *inserted)
{
	return djc_insert_ext(inserted, c, name, rows, n, opts);
}

int djc_insert_jsonl(djc_conn *c, const char *name, void *inp, const char *src, const djc_insert_options *opts,
		     size_t *inserted)
{
	return djc_insert_jsonl_ext(inserted, c, name, inp, src, opts);
}

int djc_insert_csv(djc_conn *c, const char *name, void *inp, const char *src, const djc_insert_options *opts,
		   size_t *inserted)
{
	return djc_insert_csv_ext(inserted, c, name, inp, src, opts);
}
