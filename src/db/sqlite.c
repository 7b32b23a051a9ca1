/* sqlite.c - the SQLite driver: the embedded default. WAL mode so readers
 * never block the writer (so a file on a network file system is refused),
 * a busy timeout so many local processes take turns, IMMEDIATE write transactions so a transaction never fails halfway
 * on a lock upgrade, and a small prepared-statement cache. */
#include "db.h"
#include "djc.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "dl.h"

/* Like the other client libraries, libsqlite3 is loaded on first open
 * (dl.c): a worker on PostgreSQL or MariaDB does not map it, nor the
 * libm it brings. Every call goes through this table. */
static struct {
	__typeof__(sqlite3_bind_blob) *sqlite3_bind_blob;
	__typeof__(sqlite3_bind_double) *sqlite3_bind_double;
	__typeof__(sqlite3_bind_int64) *sqlite3_bind_int64;
	__typeof__(sqlite3_bind_null) *sqlite3_bind_null;
	__typeof__(sqlite3_bind_parameter_count) *sqlite3_bind_parameter_count;
	__typeof__(sqlite3_bind_text) *sqlite3_bind_text;
	__typeof__(sqlite3_busy_timeout) *sqlite3_busy_timeout;
	__typeof__(sqlite3_changes) *sqlite3_changes;
	__typeof__(sqlite3_clear_bindings) *sqlite3_clear_bindings;
	__typeof__(sqlite3_close_v2) *sqlite3_close_v2;
	__typeof__(sqlite3_column_blob) *sqlite3_column_blob;
	__typeof__(sqlite3_column_bytes) *sqlite3_column_bytes;
	__typeof__(sqlite3_column_count) *sqlite3_column_count;
	__typeof__(sqlite3_column_double) *sqlite3_column_double;
	__typeof__(sqlite3_column_int64) *sqlite3_column_int64;
	__typeof__(sqlite3_column_name) *sqlite3_column_name;
	__typeof__(sqlite3_column_text) *sqlite3_column_text;
	__typeof__(sqlite3_column_type) *sqlite3_column_type;
	__typeof__(sqlite3_create_function_v2) *sqlite3_create_function_v2;
	__typeof__(sqlite3_errmsg) *sqlite3_errmsg;
	__typeof__(sqlite3_errstr) *sqlite3_errstr;
	__typeof__(sqlite3_exec) *sqlite3_exec;
	__typeof__(sqlite3_extended_errcode) *sqlite3_extended_errcode;
	__typeof__(sqlite3_extended_result_codes) *sqlite3_extended_result_codes;
	__typeof__(sqlite3_finalize) *sqlite3_finalize;
	__typeof__(sqlite3_free) *sqlite3_free;
	__typeof__(sqlite3_get_autocommit) *sqlite3_get_autocommit;
	__typeof__(sqlite3_open_v2) *sqlite3_open_v2;
	__typeof__(sqlite3_prepare_v2) *sqlite3_prepare_v2;
	__typeof__(sqlite3_reset) *sqlite3_reset;
	__typeof__(sqlite3_result_text) *sqlite3_result_text;
	__typeof__(sqlite3_step) *sqlite3_step;
	__typeof__(sqlite3_value_double) *sqlite3_value_double;
} sq;
static const char *const sq_names[] = {
	"sqlite3_bind_blob",
	"sqlite3_bind_double",
	"sqlite3_bind_int64",
	"sqlite3_bind_null",
	"sqlite3_bind_parameter_count",
	"sqlite3_bind_text",
	"sqlite3_busy_timeout",
	"sqlite3_changes",
	"sqlite3_clear_bindings",
	"sqlite3_close_v2",
	"sqlite3_column_blob",
	"sqlite3_column_bytes",
	"sqlite3_column_count",
	"sqlite3_column_double",
	"sqlite3_column_int64",
	"sqlite3_column_name",
	"sqlite3_column_text",
	"sqlite3_column_type",
	"sqlite3_create_function_v2",
	"sqlite3_errmsg",
	"sqlite3_errstr",
	"sqlite3_exec",
	"sqlite3_extended_errcode",
	"sqlite3_extended_result_codes",
	"sqlite3_finalize",
	"sqlite3_free",
	"sqlite3_get_autocommit",
	"sqlite3_open_v2",
	"sqlite3_prepare_v2",
	"sqlite3_reset",
	"sqlite3_result_text",
	"sqlite3_step",
	"sqlite3_value_double",
};
static const char *const sq_sonames[] = {"libsqlite3.so.0", "libsqlite3.so", NULL};
static dl_lib sq_lib = {0, "SQLite", sq_sonames, sq_names, (void **)&sq, sizeof sq_names / sizeof *sq_names};
#define sqlite3_bind_blob (*sq.sqlite3_bind_blob)
#define sqlite3_bind_double (*sq.sqlite3_bind_double)
#define sqlite3_bind_int64 (*sq.sqlite3_bind_int64)
#define sqlite3_bind_null (*sq.sqlite3_bind_null)
#define sqlite3_bind_parameter_count (*sq.sqlite3_bind_parameter_count)
#define sqlite3_bind_text (*sq.sqlite3_bind_text)
#define sqlite3_busy_timeout (*sq.sqlite3_busy_timeout)
#define sqlite3_changes (*sq.sqlite3_changes)
#define sqlite3_clear_bindings (*sq.sqlite3_clear_bindings)
#define sqlite3_close_v2 (*sq.sqlite3_close_v2)
#define sqlite3_column_blob (*sq.sqlite3_column_blob)
#define sqlite3_column_bytes (*sq.sqlite3_column_bytes)
#define sqlite3_column_count (*sq.sqlite3_column_count)
#define sqlite3_column_double (*sq.sqlite3_column_double)
#define sqlite3_column_int64 (*sq.sqlite3_column_int64)
#define sqlite3_column_name (*sq.sqlite3_column_name)
#define sqlite3_column_text (*sq.sqlite3_column_text)
#define sqlite3_column_type (*sq.sqlite3_column_type)
#define sqlite3_create_function_v2 (*sq.sqlite3_create_function_v2)
#define sqlite3_errmsg (*sq.sqlite3_errmsg)
#define sqlite3_errstr (*sq.sqlite3_errstr)
#define sqlite3_exec (*sq.sqlite3_exec)
#define sqlite3_extended_errcode (*sq.sqlite3_extended_errcode)
#define sqlite3_extended_result_codes (*sq.sqlite3_extended_result_codes)
#define sqlite3_finalize (*sq.sqlite3_finalize)
#define sqlite3_free (*sq.sqlite3_free)
#define sqlite3_get_autocommit (*sq.sqlite3_get_autocommit)
#define sqlite3_open_v2 (*sq.sqlite3_open_v2)
#define sqlite3_prepare_v2 (*sq.sqlite3_prepare_v2)
#define sqlite3_reset (*sq.sqlite3_reset)
#define sqlite3_result_text (*sq.sqlite3_result_text)
#define sqlite3_step (*sq.sqlite3_step)
#define sqlite3_value_double (*sq.sqlite3_value_double)

#define STMT_CACHE 48

typedef struct cached { char *sql; sqlite3_stmt *st; unsigned long used; } cached;

typedef struct sq_conn {
	db_conn base;
	sqlite3 *db;
	cached cache[STMT_CACHE];
	unsigned long tick;
	int json;   /* json_each is there: 1 yes, -1 no, 0 not asked yet (sq_in_rows) */
} sq_conn;

static int classify(sq_conn *c, int rc)
{
	int ext = sqlite3_extended_errcode(c->db);
	snprintf(c->base.err, sizeof c->base.err, "sqlite: %s", sqlite3_errmsg(c->db));
	switch (rc & 0xff) {
	case SQLITE_CONSTRAINT:
		if (ext == SQLITE_CONSTRAINT_PRIMARYKEY) return DJC_EDUPLICATE;
		if (ext == SQLITE_CONSTRAINT_UNIQUE) return DB_EUNIQUE;
		/* ON DELETE RESTRICT reports itself as a trigger constraint */
		if (ext == SQLITE_CONSTRAINT_FOREIGNKEY ||
		    (ext == SQLITE_CONSTRAINT_TRIGGER && strstr(sqlite3_errmsg(c->db), "FOREIGN KEY")))
			return DJC_EFOREIGN;
		return DJC_EINVAL;
	case SQLITE_BUSY:
		/* the busy handler waited the whole bound (db_conn.lock_wait,
		 * busy_timeout) for another connection's lock: not a momentary
		 * busy (a WAL snapshot, answered at once) to retry */
		if (db_lock_bound_reached(&c->base))
			return db_locked(&c->base, "sqlite", "busy_timeout");
		return DJC_EBUSY;
	case SQLITE_LOCKED: return DJC_EBUSY;
	case SQLITE_MISMATCH: case SQLITE_RANGE: case SQLITE_TOOBIG: return DJC_EINVAL;
	case SQLITE_CANTOPEN: case SQLITE_NOTADB: return DJC_ECONN;
	default: return DJC_ERROR;
	}
}

static void sq_close(db_conn *bc)
{
	sq_conn *c = (sq_conn *)bc;
	if (!c) return;
	for (int i = 0; i < STMT_CACHE; i++) {
		if (c->cache[i].st) sqlite3_finalize(c->cache[i].st);
		free(c->cache[i].sql);
	}
	if (c->db) sqlite3_close_v2(c->db);
	free(c->base.schema);
	free(c);
}

static int simple(sq_conn *c, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(c->db, sql, NULL, NULL, &msg);
	sqlite3_free(msg);
	return rc == SQLITE_OK ? DJC_OK : classify(c, rc);
}

/* djc_now(seconds): the kernel's UTC clock plus seconds, as datetime(3)
 * text ('YYYY-MM-DD HH:MM:SS.fff', what strftime('%Y-%m-%d %H:%M:%f')
 * writes). Leases compare times written by one process with "now" read by
 * another; on a server both are the server's clock. An SQLite database has
 * no server, so every process reads the one clock of the machine, by the
 * system call itself: a process whose C library reports another time (a
 * preloaded time shim such as libfaketime) still agrees with the others,
 * and cannot steal or block their leases. (A Linux time namespace cannot
 * shift CLOCK_REALTIME.) tests/cli/test_clocks.sh proves it. */
static void fn_now(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	double off = argc > 0 ? sqlite3_value_double(argv[0]) : 0;
	struct timespec ts;
	if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts)) clock_gettime(CLOCK_REALTIME, &ts);
	long long ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + (long long)(off * 1000 + (off < 0 ? -0.5 : 0.5));
	time_t secs = (time_t)(ms / 1000);
	int frac = (int)(ms % 1000);
	if (frac < 0) { frac += 1000; secs--; }
	struct tm tm;
	gmtime_r(&secs, &tm);
	char buf[40];
	size_t k = strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf + k, sizeof buf - k, ".%03d", frac);
	sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
}

/* Bound of the retries of an open that found the file busy (50 ms apart
 * after the first few): about a minute. */
#define OPEN_BUSY_RETRIES 1200

/* Network and cluster file systems by statfs f_type (linux/magic.h and the
 * file systems' own sources): on all of them SQLite's locks and WAL shared
 * memory are unsafe between machines (and often within one). A FUSE mount
 * (sshfs, GlusterFS, but also local ones) cannot be told apart and passes. */
static const struct { unsigned long magic; const char *name; } netfs[] = {
	{0x6969, "NFS"},
	{0x517B, "SMB"},
	{0xFF534D42, "CIFS"},
	{0xFE534D42, "SMB2"},
	{0x564C, "NCP"},
	{0x0BD00BD0, "Lustre"},
	{0x47504653, "GPFS"},
	{0x00C36400, "CephFS"},
	{0x19830326, "BeeGFS"},
	{0xAAD7AAEA, "PanFS"},
	{0x20030528, "OrangeFS"},
	{0x01161970, "GFS2"},
	{0x7461636F, "OCFS2"},
	{0x5346414F, "AFS"},
	{0x6B414653, "AFS"},
	{0x73757245, "Coda"},
	{0x01021997, "9P"},
};

const char *db_netfs_name(unsigned long f_type)
{
	f_type &= 0xFFFFFFFFul;   /* f_type is signed on some ABIs: CIFS's magic reads negative */
	for (size_t i = 0; i < sizeof netfs / sizeof *netfs; i++)
		if (netfs[i].magic == f_type) return netfs[i].name;
	return NULL;
}

static long statfs_type(const char *path)
{
	struct statfs sf;
	return statfs(path, &sf) ? -1 : (long)(unsigned long)sf.f_type;
}

long (*db_fs_type)(const char *path) = statfs_type;

/* DJC_EINVAL with a message when the database file (or, before it exists,
 * its directory) is on a network file system; else DJC_OK. */
static int refuse_netfs(const char *path, char *err, size_t errlen)
{
	long t = db_fs_type(path);
	if (t == -1) {
		/* not there yet: the directory it will be created in */
		const char *slash = strrchr(path, '/');
		char *dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
		t = db_fs_type(dir);
		free(dir);
	}
	const char *fs = t == -1 ? NULL : db_netfs_name((unsigned long)t);
	if (!fs) return DJC_OK;
	snprintf(err, errlen,
		 "SQLite database '%s' is on a network file system (%s), where SQLite's WAL mode and locks are unsafe: "
		 "use PostgreSQL or MariaDB for a shared database (--db postgresql://...), or put the file on a local disk",
		 path, fs);
	return DJC_EINVAL;
}

static int sq_open(db_conn **out, const db_url *u, const char *schema, char *err, size_t errlen)
{
	*out = NULL;
	if (dl_load(&sq_lib, err, errlen))
		return DJC_ECONN;
	sb_t path = SB_INIT;
	if (schema && *schema && strcmp(schema, "main")) {
		/* One SQLite file is one schema: --schema lab with sqlite:dir/djc.db
		 * is the file dir/djc.lab.db beside it. */
		size_t n = strlen(u->path);
		if (n > 3 && !strcmp(u->path + n - 3, ".db")) {
			sb_addn(&path, u->path, n - 3);
			sb_printf(&path, ".%s.db", schema);
		} else
			sb_printf(&path, "%s.%s", u->path, schema);
	} else
		sb_add(&path, u->path);
	struct stat st;
	if ((u->flags & DB_OPEN_NO_CREATE) && stat(sb_str(&path), &st) && errno == ENOENT) {
		snprintf(err, errlen, "no SQLite database '%s' (djc declare creates it; or give --db)", sb_str(&path));
		sb_free(&path);
		return DJC_ENOTFOUND;
	}
	if (strcmp(sb_str(&path), ":memory:") && refuse_netfs(sb_str(&path), err, errlen)) {
		sb_free(&path);
		return DJC_EINVAL;
	}
	sq_conn *c = xcalloc(1, sizeof *c);
	c->base.schema = xstrdup(schema && *schema ? schema : "main");
	int create = u->flags & DB_OPEN_NO_CREATE ? 0 : SQLITE_OPEN_CREATE;
	int rc = sqlite3_open_v2(sb_str(&path), &c->db, SQLITE_OPEN_READWRITE | create | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		snprintf(err, errlen, "cannot open SQLite database '%s': %s", sb_str(&path),
			 c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
		sb_free(&path);
		sq_close(&c->base);
		return DJC_ECONN;
	}
	sb_free(&path);
	sqlite3_extended_result_codes(c->db, 1);
	/* the bound on a lock wait (db_url.lock_wait; db_conn.lock_wait is set
	 * after the open, so that a busy answer of the open's own steps is
	 * retried below) */
	sqlite3_busy_timeout(c->db, u->lock_wait > 0 ? (int)ceil(u->lock_wait * 1000) : 60000);
	if (sqlite3_create_function_v2(c->db, "djc_now", 1, SQLITE_UTF8, NULL, fn_now, NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "sqlite: cannot register djc_now: %s", sqlite3_errmsg(c->db));
		sq_close(&c->base);
		return DJC_ECONN;
	}
	/* Switching a brand-new file to WAL takes an exclusive lock, and when
	 * other processes are opening the same new file at that moment SQLite
	 * may answer SQLITE_BUSY at once, without asking the busy handler
	 * (about 1 in 560 opens failed so when many workers started together).
	 * So that step is retried, with a growing pause, within a bound
	 * (about a minute, as the busy timeout). */
	int rc2 = DJC_OK;
	for (int attempt = 0;; attempt++) {
		rc2 = simple(c, "PRAGMA journal_mode=WAL");
		if (rc2 != DJC_EBUSY || attempt >= OPEN_BUSY_RETRIES) break;
		usleep((useconds_t)(attempt < 6 ? 1000u << attempt : 50000u) + (useconds_t)(getpid() % 997));
	}
	if (rc2 || simple(c, "PRAGMA foreign_keys=ON") || simple(c, "PRAGMA synchronous=NORMAL")) {
		snprintf(err, errlen, "%s", c->base.err);
		sq_close(&c->base);
		return DJC_ECONN;
	}
	*out = &c->base;
	return DJC_OK;
}

static sqlite3_stmt *prepare(sq_conn *c, const char *sql, int *rc)
{
	int lru = 0;
	for (int i = 0; i < STMT_CACHE; i++) {
		if (c->cache[i].sql && !strcmp(c->cache[i].sql, sql)) {
			c->cache[i].used = ++c->tick;
			sqlite3_reset(c->cache[i].st);
			sqlite3_clear_bindings(c->cache[i].st);
			*rc = SQLITE_OK;
			return c->cache[i].st;
		}
		if (c->cache[i].used < c->cache[lru].used) lru = i;
	}
	sqlite3_stmt *st = NULL;
	*rc = sqlite3_prepare_v2(c->db, sql, -1, &st, NULL);
	if (*rc != SQLITE_OK) return NULL;
	if (c->cache[lru].st) sqlite3_finalize(c->cache[lru].st);
	free(c->cache[lru].sql);
	c->cache[lru].sql = xstrdup(sql);
	c->cache[lru].st = st;
	c->cache[lru].used = ++c->tick;
	return st;
}

static int bind(sqlite3_stmt *st, const val_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int k = (int)i + 1, rc;
		switch (p[i].t) {
		case DJC_NULL: rc = sqlite3_bind_null(st, k); break;
		case DJC_INT: case DJC_BOOL: rc = sqlite3_bind_int64(st, k, p[i].i); break;
		/* uint64 above INT64_MAX is stored as the same 64 bits (see docs/types.md) */
		case DJC_UINT: rc = sqlite3_bind_int64(st, k, (sqlite3_int64)p[i].u); break;
		case DJC_FLOAT: rc = sqlite3_bind_double(st, k, p[i].f); break;
		case DJC_TEXT: rc = sqlite3_bind_text(st, k, p[i].s, (int)p[i].n, SQLITE_STATIC); break;
		default: rc = sqlite3_bind_blob(st, k, p[i].s ? p[i].s : "", (int)p[i].n, SQLITE_STATIC); break;
		}
		if (rc != SQLITE_OK) return rc;
	}
	return SQLITE_OK;
}

static int sq_exec(db_conn *bc, const char *sql, const val_t *params, size_t np, db_res **out)
{
	sq_conn *c = (sq_conn *)bc;
	if (out) *out = NULL;
	int rc;
	sqlite3_stmt *st = prepare(c, sql, &rc);
	if (!st) return classify(c, rc);
	if ((size_t)sqlite3_bind_parameter_count(st) != np) {
		snprintf(c->base.err, sizeof c->base.err, "sqlite: statement wants %d parameters, got %zu",
			 sqlite3_bind_parameter_count(st), np);
		return DJC_ERROR;
	}
	if ((rc = bind(st, params, np)) != SQLITE_OK) { sqlite3_reset(st); return classify(c, rc); }
	db_res *r = xcalloc(1, sizeof *r);
	r->ncols = (size_t)sqlite3_column_count(st);
	r->cols = xcalloc(r->ncols, sizeof(char *));
	for (size_t i = 0; i < r->ncols; i++) r->cols[i] = xstrdup(sqlite3_column_name(st, (int)i));
	size_t cap = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (r->nrows == cap) {
			cap = cap ? cap * 2 : 16;
			r->cells = xrealloc(r->cells, cap * (r->ncols ? r->ncols : 1) * sizeof(val_t));
		}
		val_t *row = r->cells + r->nrows * r->ncols;
		for (size_t i = 0; i < r->ncols; i++) {
			int ci = (int)i;
			switch (sqlite3_column_type(st, ci)) {
			case SQLITE_NULL: row[i] = val_null(); break;
			case SQLITE_INTEGER: row[i] = val_int(sqlite3_column_int64(st, ci)); break;
			case SQLITE_FLOAT: row[i] = val_float(sqlite3_column_double(st, ci)); break;
			case SQLITE_TEXT: {
				const char *t = (const char *)sqlite3_column_text(st, ci);
				row[i] = val_textn(t, (size_t)sqlite3_column_bytes(st, ci));
				break;
			}
			default: {
				const void *b = sqlite3_column_blob(st, ci);
				size_t n = (size_t)sqlite3_column_bytes(st, ci);
				row[i] = val_textn(b ? b : "", n);
				row[i].t = DJC_BYTES;
			}
			}
		}
		r->nrows++;
	}
	if (rc != SQLITE_DONE) {
		int e = classify(c, rc);
		sqlite3_reset(st);
		db_res_free(r);
		return e;
	}
	r->affected = sqlite3_changes(c->db);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (out) *out = r; else db_res_free(r);
	return DJC_OK;
}

/* BEGIN and COMMIT run as cached statements like any other: every job's
 * transaction has them, and sqlite3_exec would parse them each time */
static int sq_begin(db_conn *bc)
{
	int rc = sq_exec(bc, "BEGIN IMMEDIATE", NULL, 0, NULL);
	if (!rc) bc->in_tx = 1;
	return rc;
}
static int sq_commit(db_conn *bc)
{
	int rc = sq_exec(bc, "COMMIT", NULL, 0, NULL);
	if (!rc) bc->in_tx = 0;
	return rc;
}
static int sq_rollback(db_conn *bc)
{
	sq_conn *c = (sq_conn *)bc;
	bc->in_tx = 0;
	if (sqlite3_get_autocommit(c->db)) return DJC_OK;
	return simple(c, "ROLLBACK");
}

static void sq_qi(sb_t *b, const char *name)
{
	sb_addc(b, '"');
	for (const char *p = name; *p; p++) {
		if (*p == '"') sb_addc(b, '"');
		sb_addc(b, *p);
	}
	sb_addc(b, '"');
}

/* The claim in two steps under the write lock (BEGIN IMMEDIATE: the
 * caller's transaction, or one of its own): read the candidates in claim
 * order, then mark each by its rowid. SQLite has one writer at a time, so
 * nothing can take a row between the read and the update (invariant 1).
 * Not one UPDATE ... WHERE rowid IN (SELECT ...) RETURNING: SQLite keeps a
 * RETURNING statement's rows in a temporary b-tree and opens a statement
 * journal for a statement that may change several rows, and allocating and
 * freeing those for every job cost more than the claim itself (about half
 * of djc's CPU per reserved job: 620 -> 330 us, bench/serve.sh section C). claim.info is read
 * before the update, which changes neither of its counts (statements.c). */
static int sq_claim(db_conn *bc, const db_claim *cl, db_res **out)
{
	*out = NULL;
	sb_t q = SB_INIT, u = SB_INIT;
	sb_add(&q, "SELECT rowid, ");
	sb_add(&q, cl->key_cols);
	if (cl->extra) sb_printf(&q, ", %s", cl->extra);
	sb_add(&q, " FROM ");
	db_qtable(bc, &q, cl->table);
	/* the index whose order is the claim's: without statistics SQLite's
	 * planner prefers the index with more equalities, and read every
	 * pending row and sorted them on each claim (invariant 5;
	 * test_jobs_core "a claim reads the head") */
	if (cl->index) {
		sb_add(&q, bc->drv->index_hint);
		sq_qi(&q, cl->index);
	}
	sb_printf(&q, " WHERE %s ORDER BY %s LIMIT %ld", cl->where, cl->order, cl->limit);
	sb_add(&u, "UPDATE ");
	db_qtable(bc, &u, cl->table);
	sb_printf(&u, " SET %s WHERE rowid = ?", cl->set);
	int own = !bc->in_tx;
	int rc = own ? sq_begin(bc) : DJC_OK;
	db_res *cand = NULL;
	if (!rc) rc = sq_exec(bc, sb_str(&q), cl->wparams, cl->nw, &cand);
	val_t *p = xcalloc(cl->ns + 1, sizeof(val_t));
	if (cl->ns) memcpy(p, cl->sparams, cl->ns * sizeof(val_t));
	for (size_t i = 0; !rc && i < cand->nrows; i++) {
		db_res *r = NULL;
		p[cl->ns] = *db_cell(cand, i, 0);
		rc = sq_exec(bc, sb_str(&u), p, cl->ns + 1, &r);
		if (!rc && r->affected != 1) {
			snprintf(bc->err, sizeof bc->err, "sqlite: claim updated %lld rows of one", r->affected);
			rc = DJC_ERROR;
		}
		db_res_free(r);
	}
	free(p);
	if (!rc && own) rc = sq_commit(bc);
	if (rc) {
		if (own) {
			char keep[sizeof bc->err];
			memcpy(keep, bc->err, sizeof keep);
			sq_rollback(bc);
			memcpy(bc->err, keep, sizeof keep);
		}
		db_res_free(cand);
	} else {
		/* the result: the candidates without their rowid */
		free(cand->cols[0]);
		size_t nc = cand->ncols - 1;
		for (size_t i = 0; i < cand->nrows; i++) {
			/* (row i's rowid is still in place: rows before it moved to
			 * lower cells only) */
			val_free(&cand->cells[i * cand->ncols]);
			memmove(cand->cells + i * nc, cand->cells + i * cand->ncols + 1, nc * sizeof(val_t));
		}
		memmove(cand->cols, cand->cols + 1, nc * sizeof(char *));
		cand->ncols = nc;
		cand->affected = (long long)cand->nrows;
		*out = cand;
	}
	sb_free(&q);
	sb_free(&u);
	return rc;
}

static int64_t sq_connection_id(db_conn *bc) { (void)bc; return (int64_t)getpid(); }

static void sq_column_type(sb_t *b, const coldef *t)
{
	switch (t->t) {
	case T_INT8: case T_INT16: case T_INT32: case T_INT64:
	case T_UINT8: case T_UINT16: case T_UINT32: case T_UINT64: case T_BOOL:
		sb_add(b, "INTEGER"); break;
	case T_FLOAT32: case T_FLOAT64: sb_add(b, "REAL"); break;
	case T_BYTES: sb_add(b, "BLOB"); break;
	default: sb_add(b, "TEXT"); break;   /* exact text: decimal, dates, uuid, json */
	}
}

/* in_rows (db.h): the rows as one JSON text, read back by json_each:
 * "c IN (SELECT value FROM json_each(?))", or for several columns
 * "(a, b) IN (SELECT json_extract(value, '$[0]'), ... FROM json_each(?))".
 * They compare as parameters do: json_each's values have no affinity, so
 * the column's applies to them, and each is written as sq_exec binds it
 * (a uint64 as its 64 bits). Bytes cannot travel in JSON (SQLite before
 * 3.41 has no unhex), nor anything where json_each is missing. */
static int sq_in_rows(db_conn *bc, const db_in *in, sb_t *sql, val_t *out, size_t *nout)
{
	sq_conn *c = (sq_conn *)bc;
	if (!c->json) c->json = sqlite3_exec(c->db, "SELECT 1 FROM json_each('[1]')", NULL, NULL, NULL) == SQLITE_OK ? 1 : -1;
	if (c->json < 0) return 0;
	for (size_t i = 0; i < in->n * in->k; i++) {
		const val_t *v = &in->vals[i];
		if (v->t == DJC_NULL || v->t == DJC_BYTES || (v->t == DJC_FLOAT && !isfinite(v->f))) return 0;
	}
	sb_t j = SB_INIT;
	sb_addc(&j, '[');
	for (size_t i = 0; i < in->n * in->k; i++) {
		const val_t *v = &in->vals[i];
		sb_add(&j, i ? (in->k > 1 && i % in->k == 0 ? "],[" : ",") : in->k > 1 ? "[" : "");
		if (v->t == DJC_INT || v->t == DJC_BOOL) sb_printf(&j, "%" PRId64, v->i);
		else if (v->t == DJC_UINT) sb_printf(&j, "%" PRId64, (int64_t)v->u);
		else if (v->t == DJC_FLOAT) sb_printf(&j, "%.17g", v->f);
		else db_json_str(&j, v->s, v->n);
	}
	sb_add(&j, in->k > 1 ? "]]" : "]");
	sb_add(sql, in->k > 1 ? "(" : "");
	for (size_t q = 0; q < in->k; q++) sb_printf(sql, "%s%s", q ? ", " : "", in->cols[q]);
	sb_add(sql, in->k > 1 ? ")" : "");
	sb_add(sql, in->neg ? " NOT IN (SELECT " : " IN (SELECT ");
	for (size_t q = 0; q < in->k; q++)
		if (in->k > 1) sb_printf(sql, "%sjson_extract(value, '$[%zu]')", q ? ", " : "", q);
		else sb_add(sql, "value");
	sb_add(sql, " FROM json_each(?))");
	out[0] = val_textn(sb_str(&j), j.len);
	sb_free(&j);
	*nout = 1;
	return 1;
}

static void sq_now(sb_t *b) { sb_add(b, "djc_now(0)"); }
static void sq_now_plus(sb_t *b) { sb_add(b, "djc_now(?)"); }

/* Schema changes (db.h, ddl_dialect): SQLite has one writer, so its
 * IMMEDIATE write transaction already excludes every other schema change. */
static const ddl_dialect sq_ddl = {
	.driver = "sqlite",
	.transactional = 1,
	.columns = "SELECT name FROM pragma_table_info(?) ORDER BY cid",
	.drop_many = 0,
	.alter_combined = 0,
	.backslash_escapes = 0,
	.max_name = 64,   /* none of its own: DataJoint's (MariaDB's), so a pipeline moves */
};

const db_driver db_sqlite_driver = {
	.version = DB_DRIVER_VERSION,
	.name = "sqlite",
	.open = sq_open,
	.close = sq_close,
	.exec = sq_exec,
	.begin = sq_begin,
	.commit = sq_commit,
	.rollback = sq_rollback,
	.claim = sq_claim,
	.connection_id = sq_connection_id,
	.quote_ident = sq_qi,
	.column_type = sq_column_type,
	.in_rows = sq_in_rows,
	.now = sq_now,
	.now_plus = sq_now_plus,
	.partial_index = 1,
	.index_hint = " INDEXED BY ",
	.decimal_order_cast = "REAL",   /* decimals are TEXT: "9.5" > "10.25" */
	.insert_ignore_head = "INSERT OR IGNORE INTO",
	.insert_ignore_tail = "",
	.ddl = &sq_ddl,
	.table_suffix = "",
	.index_count_sql = "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND (? IS NULL OR 1) AND tbl_name = ? "
			   "AND name IN (?, ?)",
};
