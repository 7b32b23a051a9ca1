/* rows.c - insert and fetch rows; rows to and from JSON. */
#include "table.h"
#include "util/near.h"
#include "table/opts.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ----------------------------------------------------------------- rows */

static void now_text(char *buf, size_t n, int p)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	size_t k = strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm);
	if (p > 0) snprintf(buf + k, n - k, ".%06ld", ts.tv_nsec / 1000), buf[k + 1 + (size_t)p] = 0;
}

/* The value given for attribute a, checked, into r. A raw column takes
 * none, null neither (value_in takes null, for restrictions): djc's rows
 * leave it out, and the server's default would silently replace it. */
static int put_given(djc_row *r, const attr *a, val_t *in, int take, char **msg)
{
	if (a->raw && in->t == DJC_NULL) {
		*msg = xasprintf("attribute '%s' (%s): is a raw column of an adopted table: djc reads it but cannot write it",
				 a->name, a->type_text);
		return DJC_EINVAL;
	}
	val_t v;
	if (take ? value_in_take(a, in, &v, msg) : value_in(a, in, &v, msg)) return DJC_EINVAL;
	row_put(r, a->name, &v);
	return DJC_OK;
}

/* row_prepare; take: in's bytes values are moved (row_prepare_take), in
 * is otherwise read only. */
static int prepare(djc_conn *c, const table *t, djc_row *in, int take, const djc_row *key, djc_row **out, char **msg)
{
	*out = NULL;
	*msg = NULL;
	djc_row *r = djc_row_new();
	for (size_t i = 0; i < in->n; i++) {
		const attr *a = table_attr(t, in->names[i]);
		if (!a) {
			sb_t b = SB_INIT;
			sb_add(&b, "unknown attribute ");
			json_quote(&b, in->names[i], strlen(in->names[i]));
			sb_printf(&b, " for table %s", t->name);
			*msg = sb_steal(&b);
			djc_row_free(r);
			return DJC_EINVAL;
		}
		if (put_given(r, a, &in->vals[i], take, msg)) { djc_row_free(r); return DJC_EINVAL; }
	}
	if (key) {
		for (size_t i = 0; i < key->n; i++) {
			const attr *a = table_attr(t, key->names[i]);
			if (!a) continue;
			val_t v;
			if (value_in(a, &key->vals[i], &v, msg)) { djc_row_free(r); return DJC_EINVAL; }
			const val_t *have = row_get(r, a->name);
			if (have) {
				int same = have->t == v.t && have->i == v.i && have->u == v.u && have->f == v.f && have->n == v.n &&
					   (!have->s || !memcmp(have->s, v.s, v.n));
				if (!same) {
					*msg = xasprintf("row is for another key: attribute '%s' differs from the key being made", a->name);
					val_free(&v);
					djc_row_free(r);
					return DJC_EINVAL;
				}
				val_free(&v);
			} else
				row_put(r, a->name, &v);
		}
	}
	for (size_t i = 0; i < t->nattrs; i++) {
		const attr *a = &t->attrs[i];
		if (row_get(r, a->name) || attr_server_filled(a)) continue;   /* the server's to fill */
		if (a->has_def) {
			val_t in_v, v;
			if (!strcasecmp(a->def, "CURRENT_TIMESTAMP")) {
				char buf[64];
				now_text(buf, sizeof buf, a->type.p);
				in_v = val_text(buf);
			} else {
				json_t *j = a->type.t <= T_BOOL ? json_loads(a->def, JSON_DECODE_ANY, NULL) : NULL;
				if (j) {
					int rc = value_from_json(a, j, &v, msg);
					json_decref(j);
					if (rc) { djc_row_free(r); return rc; }
					row_put(r, a->name, &v);
					continue;
				}
				in_v = val_text(a->def);
			}
			int rc = value_in(a, &in_v, &v, msg);
			val_free(&in_v);
			if (rc) { djc_row_free(r); return rc; }
			row_put(r, a->name, &v);
		} else if (a->nullable) {
			val_t v = val_null();
			row_put(r, a->name, &v);
		} else {
			*msg = xasprintf("missing %sattribute '%s' of table %s", a->in_key ? "primary key " : "", a->name, t->name);
			djc_row_free(r);
			return DJC_EINVAL;
		}
	}
	*out = r;
	return DJC_OK;
}

int row_prepare(djc_conn *c, const table *t, const djc_row *in, const djc_row *key, djc_row **out, char **msg)
{
	return prepare(c, t, (djc_row *)in, 0, key, out, msg);
}

int row_prepare_take(djc_conn *c, const table *t, djc_row *in, const djc_row *key, djc_row **out, char **msg)
{
	return prepare(c, t, in, 1, key, out, msg);
}

int rows_insert(djc_conn *c, const table *t, djc_row *const *rows, size_t n, int skip_dup, size_t *inserted, size_t *bad)
{
	/* one statement per row, so a failure names its row */
	if (inserted) *inserted = 0;
	for (size_t r = 0; r < n; r++) {
		size_t one = 0;
		int rc = rows_insert_many(c, t, &rows[r], 1, skip_dup, &one);
		if (rc) {
			if (bad) *bad = r;
			return rc;
		}
		if (inserted) *inserted += one;
	}
	return DJC_OK;
}

void stmt_list_add(stmt_list *l, sb_t *sql, pvec *p, long expect)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 8;
		l->items = xrealloc(l->items, l->cap * sizeof *l->items);
		l->texts = xrealloc(l->texts, l->cap * sizeof *l->texts);
		l->params = xrealloc(l->params, l->cap * sizeof *l->params);
	}
	memset(&l->items[l->n], 0, sizeof *l->items);
	l->items[l->n].expect = expect;
	l->texts[l->n] = *sql;
	l->params[l->n] = *p;
	memset(sql, 0, sizeof *sql);
	memset(p, 0, sizeof *p);
	l->n++;
}

void stmt_list_claim(stmt_list *l, const db_claim *cl)
{
	sb_t none = SB_INIT;
	pvec nop = {0};
	stmt_list_add(l, &none, &nop, -1);
	l->items[l->n - 1].claim = cl;
}

db_item *stmt_list_items(stmt_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (l->items[i].claim) continue;
		l->items[i].sql = sb_str(&l->texts[i]);
		l->items[i].params = l->params[i].v;
		l->items[i].np = l->params[i].n;
	}
	return l->items;
}

void stmt_list_truncate(stmt_list *l, size_t n)
{
	for (; l->n > n; l->n--) { sb_free(&l->texts[l->n - 1]); pvec_free(&l->params[l->n - 1]); }
}

void stmt_list_free(stmt_list *l)
{
	for (size_t i = 0; i < l->n; i++) { sb_free(&l->texts[i]); pvec_free(&l->params[i]); }
	free(l->items);
	free(l->texts);
	free(l->params);
	memset(l, 0, sizeof *l);
}

void rows_insert_stmts(djc_conn *c, const table *t, djc_row *const *rows, size_t n, int skip_dup, stmt_list *l)
{
	/* make's rows carry the job metadata (the hidden columns, docs/parity.md)
	 * when the table has them; other rows leave them NULL */
	size_t ncol = t->nattrs + (t->nhidden && n && row_get(rows[0], t->attrs[t->nattrs].name) ? t->nhidden : 0);
	/* statements of at most 500 rows and ~30,000 parameters */
	size_t per = 30000 / (ncol ? ncol : 1);
	if (per > 500) per = 500;
	if (per < 1) per = 1;
	const char **cols = xcalloc(ncol ? ncol : 1, sizeof(char *));
	size_t nall = ncol;
	ncol = 0;
	/* a raw column the server fills (its default, or NULL) is left out */
	for (size_t i = 0; i < nall; i++)
		if (!attr_server_filled(&t->attrs[i])) cols[ncol++] = t->attrs[i].name;
	const val_t **vals = xcalloc(per * (ncol ? ncol : 1), sizeof(val_t *));
	for (size_t at = 0; at < n; at += per) {
		size_t k = n - at < per ? n - at : per;
		for (size_t r = 0; r < k; r++)
			for (size_t i = 0; i < ncol; i++) vals[r * ncol + i] = row_get(rows[at + r], cols[i]);
		sb_t q = SB_INIT;
		pvec p = {0};
		q_out o = {&q, &p, 0};
		q_insert ins = {table_sqlref(t), cols, ncol, vals, k, skip_dup};
		q_insert_sql(c->db, &ins, &o);
		stmt_list_add(l, &q, &p, -1);
	}
	free(vals);
	free(cols);
}

int rows_insert_many(djc_conn *c, const table *t, djc_row *const *rows, size_t n, int skip_dup, size_t *inserted)
{
	if (inserted) *inserted = 0;
	int rc = DJC_OK;
	/* a slice at a time: the statements hold copies of the values */
	for (size_t at = 0; at < n && !rc; at += 500) {
		stmt_list l = {0};
		rows_insert_stmts(c, t, rows + at, n - at < 500 ? n - at : 500, skip_dup, &l);
		db_item *it = stmt_list_items(&l);
		for (size_t i = 0; i < l.n && !rc; i++) {
			db_res *res = NULL;
			rc = db_exec(c->db, it[i].sql, it[i].params, it[i].np, &res);
			if (!rc && inserted) *inserted += (size_t)res->affected;
			db_res_free(res);
		}
		stmt_list_free(&l);
	}
	return rc;
}

/* rows_select, the result's bytes values of the columns dig names (dig[i]
 * nonzero, i < ndig) digested when longer than DIGEST_OVER (db.h,
 * exec_digest) where the driver can. */
#define DIGEST_OVER 65536
static int select_rows(djc_conn *c, const table *t, const char *sql, const pvec *params, const unsigned char *dig,
		       size_t ndig, djc_rowset **out)
{
	*out = NULL;
	db_res *r = NULL;
	db_digest d = {dig, ndig, DIGEST_OVER};
	int rc = dig ? db_exec_digest(c->db, sql, params ? params->v : NULL, params ? params->n : 0, &d, &r)
		     : db_exec(c->db, sql, params ? params->v : NULL, params ? params->n : 0, &r);
	if (rc) return conn_dbfail(c, rc, t->name);
	djc_rowset *rs = rowset_new();
	const attr **attrs = xcalloc(r->ncols, sizeof(attr *));
	for (size_t k = 0; k < r->ncols; k++) attrs[k] = table_attr_any(t, r->cols[k]);
	for (size_t i = 0; i < r->nrows; i++) {
		djc_row *row = djc_row_new();
		for (size_t k = 0; k < r->ncols; k++) {
			val_t v;
			if (attrs[k]) value_out_take(attrs[k], db_cell_mut(r, i, k), &v);
			else val_copy(&v, db_cell(r, i, k));
			row_put(row, r->cols[k], &v);
		}
		rowset_push(rs, row);
	}
	free(attrs);
	db_res_free(r);
	*out = rs;
	return DJC_OK;
}

int rows_select(djc_conn *c, const table *t, const char *sql, const pvec *params, djc_rowset **out)
{
	return select_rows(c, t, sql, params, NULL, 0, out);
}

static int fetch_sel(djc_conn *c, const table *t, const q_sel *s, const unsigned char *dig, size_t ndig,
		     djc_rowset **out)
{
	*out = NULL;
	sb_t q = SB_INIT;
	pvec p = {0};
	q_out o = {&q, &p, 0};
	int rc = restrict_fail(c, q_select_sql(c->db, s, &o), &o);
	if (!rc) rc = select_rows(c, t, sb_str(&q), &p, dig, ndig, out);
	sb_free(&q);
	pvec_free(&p);
	return rc;
}

int rows_fetch(djc_conn *c, const table *t, const q_sel *s, djc_rowset **out)
{
	return fetch_sel(c, t, s, NULL, 0, out);
}

enum {
	FETCH_HIDDEN = 1,         /* the job metadata columns too */
	FETCH_VERSION = 2,        /* the backend's row version column too (db_row_version) */
	FETCH_VERSION_ONLY = 4,   /* that column alone */
	FETCH_DIGEST = 8          /* large bytes values digested (select_rows): to compare, not to hand out */
};

/* Large bytes values in pieces (db_read_piece, docs/workers.md "Large
 * values"). The select reads each bytes attribute's value when it holds
 * at most a piece or is stored compressed (db_stored_size), else NULL,
 * and its length (as PIECE_LEN and the attribute's index: no attribute's
 * name starts with '~'), and the row's version and place (db_row_version,
 * db_row_id); a longer value then comes in pieces by the driver
 * (db_read_pieces) from that place. A piece of another version of the
 * row (a writer came in between), or a value that does not add up (the
 * row was deleted), starts the fetch again (fetch_rows). */
#define PIECE_LEN "~djc_len "
#define PIECE_AGAIN 1
#define PIECE_TRIES 5

static int piece_attr(const attr *a) { return a->type.t == T_BYTES && !a->raw; }

static int same_val(const val_t *x, const val_t *y)
{
	if (!x || !y || x->t != y->t) return 0;
	if (x->s || y->s) return x->s && y->s && x->n == y->n && !memcmp(x->s, y->s, x->n);
	return x->i == y->i && x->u == y->u;
}

typedef struct pieces {
	char *buf;
	size_t total, have;
	const val_t *version;
} pieces;

static int piece_put(void *ctx, size_t at, const val_t *bytes, const val_t *version)
{
	pieces *p = ctx;
	if (!same_val(version, p->version) || !bytes->s || at > p->total || bytes->n > p->total - at) return PIECE_AGAIN;
	/* allocated once the first piece is here: a value that comes whole
	 * (db_read_pieces) grew the driver's buffers before this, as a value
	 * read whole by the select did */
	if (!p->buf) p->buf = xmalloc(p->total + 1);
	memcpy(p->buf + at, bytes->s, bytes->n);
	p->have += bytes->n;
	return DJC_OK;
}

/* Row's value of a, total bytes long, read in pieces from the row of t
 * that lies where row's row id column says (db_row_id), of row's version:
 * DJC_OK, PIECE_AGAIN when that row is gone or changed, or an error. */
static int piece_complete(djc_conn *c, const table *t, djc_row *row, const attr *a, size_t total, size_t piece)
{
	const val_t *where = row_get(row, db_row_id(c->db)), *version = row_get(row, db_row_version(c->db));
	if (!where || !where->s) return PIECE_AGAIN;
	pieces got = {NULL, total, 0, version};
	db_pieces req = {table_sqlref(t), a->name, where, piece, piece_put, &got};
	int rc = db_read_pieces(c->db, &req);
	if (rc < 0) rc = conn_dbfail(c, rc, t->name);
	else if (!rc && got.have != total) rc = PIECE_AGAIN;
	if (!rc) {
		got.buf[total] = '\0';
		val_t v = {0};
		v.t = DJC_BYTES;
		v.s = got.buf;
		v.n = total;
		row_put(row, a->name, &v);
	} else
		free(got.buf);
	return rc;
}

/* The values of rs's rows that came in part (fetch_rows) made whole; the
 * length and row id columns gone, and the version column unless
 * want_version. */
static int pieces_complete(djc_conn *c, const table *t, djc_rowset *rs, size_t piece, int want_version)
{
	const char *version = db_row_version(c->db), *id = db_row_id(c->db);
	for (size_t j = 0; j < rs->n; j++) {
		djc_row *row = rs->rows[j];
		for (size_t i = 0; i < t->nattrs; i++) {
			if (!piece_attr(&t->attrs[i])) continue;
			char len[32];
			snprintf(len, sizeof len, PIECE_LEN "%zu", i);
			const val_t *n = row_get(row, len);
			const val_t *v = row_get(row, t->attrs[i].name);
			if (n && n->t == VAL_INT && v && !v->s && n->i > 0 && (size_t)n->i > piece) {
				int rc = piece_complete(c, t, row, &t->attrs[i], (size_t)n->i, piece);
				if (rc) return rc;
			}
			row_del(row, len);
		}
		row_del(row, id);
		if (!want_version) row_del(row, version);
	}
	return DJC_OK;
}

/* t's attributes (and what flags add) of the rows matching where_json, in
 * primary key order; piece > 0: bytes values in pieces of that size.
 * PIECE_AGAIN when a row changed while its pieces were read. */
static int fetch_rows_once(djc_conn *c, const table *t, const char *where_json, int flags, size_t piece,
			   djc_rowset **out)
{
	q_arena a = Q_ARENA_INIT;
	q_sel *s = q_select(&a);
	q_node *x;
	size_t n = flags & FETCH_VERSION_ONLY ? 0 : t->nattrs + (flags & FETCH_HIDDEN ? t->nhidden : 0);
	/* which result columns may come digested: bytes attributes' values */
	unsigned char *dig = flags & FETCH_DIGEST ? xcalloc(2 * n + 1, 1) : NULL;
	size_t ndig = 0;
	for (size_t i = 0; i < n; i++) {
		q_col col = {NULL, NULL, t->attrs[i].name};
		if (dig) dig[ndig] = i < t->nattrs && piece_attr(&t->attrs[i]);
		ndig += 1 + (piece && i < t->nattrs && piece_attr(&t->attrs[i]));   /* a value in pieces: and its length */
		if (!piece || i >= t->nattrs || !piece_attr(&t->attrs[i])) {
			q_col_item(&a, s, col, NULL);
			continue;
		}
		char len[32];
		snprintf(len, sizeof len, PIECE_LEN "%zu", i);
		q_upto_item(&a, s, col, piece, t->attrs[i].name);
		q_octets_item(&a, s, col, q_strdup(&a, len));
	}
	if (piece || flags & (FETCH_VERSION | FETCH_VERSION_ONLY))
		q_col_item(&a, s, (q_col){NULL, NULL, db_row_version(c->db)}, NULL);
	if (piece) q_col_item(&a, s, (q_col){NULL, NULL, db_row_id(c->db)}, NULL);
	q_from_table(&a, s, table_sqlref(t), NULL, 0);
	int rc = restrict_node(&x, &a, c, t, where_json, NULL, 0);
	if (!rc) {
		if (x) q_where(&a, s, x);
		for (size_t i = 0; i < t->nkey; i++) q_order(&a, s, (q_col){NULL, NULL, t->attrs[i].name});
		rc = fetch_sel(c, t, s, dig, ndig, out);
	}
	free(dig);
	q_arena_free(&a);
	if (!rc && piece) rc = pieces_complete(c, t, *out, piece, flags & FETCH_VERSION);
	if (rc && *out) {
		djc_rowset_free(*out);
		*out = NULL;
	}
	return rc;
}

static int fetch_rows(djc_conn *c, const table *t, const char *where_json, int flags, djc_rowset **out)
{
	size_t piece = 0;
	for (size_t i = 0; i < t->nattrs && !(flags & FETCH_VERSION_ONLY); i++)
		if (piece_attr(&t->attrs[i])) {
			piece = db_read_piece(c->db);
			break;
		}
	if (piece == DB_PIECE_BAD)
		return conn_fail(c, DJC_EINVAL, "DJC_READ_PIECE must be 0 (values whole) or a number of bytes from %d to %lu, got '%s'",
				 DB_PIECE_MIN, DB_PIECE_MAX, getenv("DJC_READ_PIECE"));
	/* A row written between the select and its pieces: once more, in a
	 * snapshot (the select and the pieces see the same rows) unless the
	 * caller's transaction is open (its reads see what others committed
	 * meanwhile: a few times more, then give up). */
	for (int tries = 1;; tries++) {
		int snap = tries > 1 && !c->db->in_tx, rc = DJC_OK;
		if (snap && (rc = db_begin_snapshot(c->db))) rc = conn_dbfail(c, rc, t->name);
		if (!rc) rc = fetch_rows_once(c, t, where_json, flags, piece, out);
		if (snap && c->db->in_tx) {
			int end = rc == DJC_OK ? db_commit(c->db) : db_rollback(c->db);
			if (!rc && end) {
				rc = conn_dbfail(c, end, t->name);
				djc_rowset_free(*out);
				*out = NULL;
			}
		}
		if (rc != PIECE_AGAIN) return rc;
		if (tries == PIECE_TRIES)
			return conn_fail(c, DJC_EBUSY, "the rows of %s changed each of %d times their large values were read",
					 t->name, PIECE_TRIES);
	}
}

/* ------------------------------------------------- rows streamed (serve) */

typedef struct stream_bridge {
	const table *t;
	const rows_sink *k;
	djc_rowset *rs;     /* the rows as read, large values digested */
	djc_row *row;       /* the row at hand */
	size_t count;       /* rows in all (the select's last column) */
} stream_bridge;

static int bridge_row(void *ctx, db_res *r)
{
	stream_bridge *sb = ctx;
	const table *t = sb->t;
	djc_row *row = djc_row_new();
	for (size_t k = 0; k < t->nattrs; k++) {
		val_t *cell = db_cell_mut(r, 0, k), v;
		if (cell->t == DJC_BYTES && !cell->s && cell->i == VAL_DIGESTED) {
			v = *cell;   /* comes in pieces: its length alone as yet */
			*cell = val_null();
		} else if (value_out_take(&t->attrs[k], cell, &v)) {
			v = val_null();
		}
		row_put(row, t->attrs[k].name, &v);
	}
	sb->count = (size_t)db_cell_int(r, 0, t->nattrs);
	sb->row = row;
	return sb->k->row(sb->k->ctx, row, sb->count);
}

static int bridge_each(void *ctx, size_t col, size_t at, char *buf, size_t n)
{
	stream_bridge *sb = ctx;
	return sb->k->each(sb->k->ctx, col, at, buf, n);
}

/* The row's streamed values get their digests (the read's record). */
static int bridge_end(void *ctx, db_res *r)
{
	stream_bridge *sb = ctx;
	for (size_t k = 0; k < sb->t->nattrs; k++) {
		const val_t *cell = db_cell(r, 0, k);
		long at = row_find(sb->row, sb->t->attrs[k].name);
		if (at >= 0 && cell->t == DJC_BYTES && !cell->s && cell->i == VAL_DIGESTED) sb->row->vals[at].u = cell->u;
	}
	rowset_push(sb->rs, sb->row);
	sb->row = NULL;
	return DJC_OK;
}

/* SELECT t's attributes, count FROM t, (SELECT count(*) FROM t WHERE w)
 * WHERE w ORDER BY its key: the count comes with every row, of the same
 * statement (one snapshot), so it is known before the first row's values
 * are handed on. */
static int stream_sql(djc_conn *c, const table *t, const char *where_json, sb_t *q, pvec *p)
{
	q_arena a = Q_ARENA_INIT;
	q_sel *s = q_select(&a), *n = q_select(&a);
	q_node *x = NULL, *y = NULL;
	int rc = restrict_node(&x, &a, c, t, where_json, NULL, 0);
	if (!rc) rc = restrict_node(&y, &a, c, t, where_json, NULL, 0);
	if (!rc) {
		q_agg_item(&a, n, "count", (q_col){NULL, NULL, NULL}, "~djc_n", NULL);
		q_from_table(&a, n, table_sqlref(t), NULL, 0);
		if (y) q_where(&a, n, y);
		for (size_t i = 0; i < t->nattrs; i++) q_col_item(&a, s, (q_col){NULL, NULL, t->attrs[i].name}, NULL);
		q_col_item(&a, s, (q_col){NULL, NULL, "~djc_n"}, NULL);
		q_from_table(&a, s, table_sqlref(t), NULL, 0);
		q_from_query(&a, s, n, "djc_c", 0);
		if (x) q_where(&a, s, x);
		for (size_t i = 0; i < t->nkey; i++) q_order(&a, s, (q_col){NULL, NULL, t->attrs[i].name});
		q_out o = {q, p, 0};
		rc = restrict_fail(c, q_select_sql(c->db, s, &o), &o);
	}
	q_arena_free(&a);
	return rc;
}

int rows_fetch_stream(djc_conn *c, const table *t, const char *where_json, const rows_sink *k, djc_rowset **out)
{
	*out = NULL;
	sb_t q = SB_INIT;
	pvec p = {0};
	int rc = stream_sql(c, t, where_json, &q, &p);
	unsigned char *cols = xcalloc(t->nattrs + 1, 1);
	for (size_t i = 0; i < t->nattrs; i++) cols[i] = piece_attr(&t->attrs[i]);
	stream_bridge sb = {t, k, rowset_new(), NULL, 0};
	db_stream ds = {cols, t->nattrs, k->over, k->piece, bridge_row, bridge_each, bridge_end, &sb};
	if (!rc) rc = db_exec_stream(c->db, sb_str(&q), p.v, p.n, &ds);
	djc_row_free(sb.row);
	free(cols);
	sb_free(&q);
	pvec_free(&p);
	if (rc < 0) rc = conn_dbfail(c, rc, t->name);
	if (rc) {
		djc_rowset_free(sb.rs);
		return rc;
	}
	*out = sb.rs;
	return DJC_OK;
}

/* ------------------------------------------------------------- public */

int djc_key_restriction(char **where_json, djc_conn *c, const char *name, const char *key_json)
{
	*where_json = NULL;
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	json_error_t je;
	json_t *j = key_json ? json_loads(key_json, JSON_REJECT_DUPLICATES, &je) : NULL;
	if (!j && !key_json) return conn_fail(c, DJC_EINVAL, "key is not valid JSON (none given)");
	if (!j) return conn_fail(c, DJC_EINVAL, "key is not valid JSON (column %d): %s", je.column, je.text);
	if (!json_is_object(j)) {
		json_decref(j);
		return conn_fail(c, DJC_EINVAL, "key must be a JSON object, e.g. {\"session_id\": 3}");
	}
	json_t *w = json_object();
	const char *k;
	json_t *v;
	json_object_foreach(j, k, v)
		if (table_attr(t, k)) json_object_set(w, k, v);
	if (!json_object_size(w)) {
		json_decref(w);
		json_decref(j);
		return conn_fail(c, DJC_EINVAL, "key shares no attribute with %s", t->name);
	}
	*where_json = json_dumps(w, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(w);
	json_decref(j);
	return DJC_OK;
}

void djc_fetch_options_init(djc_fetch_options *o)
{
	djc_fetch_options d = DJC_FETCH_OPTIONS_INIT;
	*o = d;
}

int djc_fetch_ext(djc_rowset **out, djc_conn *c, const char *name, const char *where_json, const djc_fetch_options *opts)
{
	*out = NULL;
	if (opts && OPTS_VERSION(c, "fetch", opts, 1, FETCH)) return DJC_EINVAL;
	table *t;
	int rc = conn_table(c, name, &t);
	if (rc) return rc;
	/* a table DataJoint dropped or changed: told as populate tells it */
	return adopt_failure_explain(c, t, fetch_rows(c, t, where_json, opts && opts->all_columns ? FETCH_HIDDEN : 0, out));
}

int djc_fetch(djc_rowset **out, djc_conn *c, const char *name, const char *where_json)
{
	return djc_fetch_ext(out, c, name, where_json, NULL);
}

int rows_fetch_read(djc_conn *c, const table *t, const char *where_json, read_what what, djc_rowset **out)
{
	*out = NULL;
	if (what == READ_DIGESTED) {
		table *ft;   /* found by name, as djc_fetch finds it */
		int rc = conn_table(c, t->name, &ft);
		if (rc) return rc;
		/* a table DataJoint dropped or changed: told as djc_fetch tells it */
		return adopt_failure_explain(c, ft, fetch_rows(c, ft, where_json, FETCH_DIGEST, out));
	}
	if (!db_row_version(c->db)) return what == READ_VERSION_ONLY ? DJC_EINVAL : fetch_rows(c, t, where_json, 0, out);
	return fetch_rows(c, t, where_json, what == READ_VERSION_ONLY ? FETCH_VERSION_ONLY : FETCH_VERSION, out);
}

/* Untyped JSON for the public row API. */
char *djc_row_to_json(const djc_row *r)
{
	sb_t b = SB_INIT;
	sb_addc(&b, '{');
	for (size_t i = 0; r && i < r->n; i++) {
		if (i) sb_addc(&b, ',');
		json_quote(&b, r->names[i], strlen(r->names[i]));
		sb_addc(&b, ':');
		value_to_json(&b, NULL, &r->vals[i]);
	}
	sb_addc(&b, '}');
	return sb_steal(&b);
}

int djc_row_from_json(djc_row **out, const char *text, char **msg)
{
	if (msg) *msg = NULL;
	if (!out) return DJC_EINVAL;
	*out = NULL;
	if (!text) {
		if (msg) *msg = xstrdup("no JSON text (NULL)");
		return DJC_EINVAL;
	}
	json_error_t je;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &je);
	if (!j || !json_is_object(j)) {
		if (msg) *msg = j ? xstrdup("expected a JSON object") : xasprintf("malformed JSON (column %d): %s", je.column, je.text);
		json_decref(j);
		return DJC_EINVAL;
	}
	const char *k;
	json_t *v;
	json_object_foreach(j, k, v)
		if (!*k) {   /* as the setters refuse an empty name */
			if (msg) *msg = xstrdup("an attribute name is empty");
			json_decref(j);
			return DJC_EINVAL;
		}
	djc_row *r = djc_row_new();
	json_object_foreach(j, k, v) {
		val_t x = {0};
		switch (json_typeof(v)) {
		case JSON_INTEGER: x = val_int(json_integer_value(v)); break;
		case JSON_REAL: x = val_float(json_real_value(v)); break;
		case JSON_TRUE: case JSON_FALSE: x.t = DJC_BOOL; x.i = json_is_true(v); break;
		case JSON_STRING: x = val_textn(json_string_value(v), json_string_length(v)); break;
		case JSON_NULL: break;
		default: {
			char *d = json_dumps(v, JSON_COMPACT);
			x = val_text(d);
			free(d);
		}
		}
		row_put(r, k, &x);
	}
	json_decref(j);
	*out = r;
	return DJC_OK;
}
