/* db.c - URL parsing, driver registry and dispatch, result helpers. */
#include "db.h"
#include "djc.h"
#include "util/clock.h"
#include "util/redact.h"
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static const db_driver *const drivers[] = {
	&db_sqlite_driver, &db_postgres_driver, &db_mysql_driver,
};

static char *pct_decode(const char *s, size_t n)
{
	char *o = xmalloc(n + 1);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2])) {
			char h[3] = {s[i + 1], s[i + 2], 0};
			o[k++] = (char)strtol(h, NULL, 16);
			i += 2;
		} else
			o[k++] = s[i];
	}
	o[k] = 0;
	return o;
}

void db_url_free(db_url *u)
{
	free(u->scheme); free(u->path); free(u->user); free(u->password);
	free(u->host); free(u->dbname); free(u->redacted); free(u->conninfo);
	for (size_t i = 0; i < u->nopts; i++) { free(u->opt_keys[i]); free(u->opt_vals[i]); }
	free(u->opt_keys); free(u->opt_vals);
	memset(u, 0, sizeof *u);
}

/* The query parameters p (after the '?') into u's options. */
static void url_opts(db_url *u, const char *p)
{
	while (*p) {
		const char *amp = strchr(p, '&');
		const char *e = amp ? amp : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(e - p));
		if (e > p) {
			u->opt_keys = xrealloc(u->opt_keys, (u->nopts + 1) * sizeof(char *));
			u->opt_vals = xrealloc(u->opt_vals, (u->nopts + 1) * sizeof(char *));
			u->opt_keys[u->nopts] = pct_decode(p, (size_t)((eq ? eq : e) - p));
			u->opt_vals[u->nopts] = eq ? pct_decode(eq + 1, (size_t)(e - eq - 1)) : xstrdup("");
			u->nopts++;
		}
		p = amp ? amp + 1 : e;
	}
}

/* The authority rest[0..end) of a URL, user:password@host:port, into u
 * (host "localhost" when empty). DJC_EINVAL with err for a bad host or port. */
static int url_authority(db_url *u, const char *rest, const char *end, char *err, size_t errlen)
{
	const char *at = NULL;
	for (const char *p = rest; p < end; p++)
		if (*p == '@') at = p;   /* last @: passwords may contain @ only percent-encoded, be lenient */
	const char *hostp = rest;
	if (at) {
		const char *c = memchr(rest, ':', (size_t)(at - rest));
		if (c) {
			u->user = pct_decode(rest, (size_t)(c - rest));
			u->password = pct_decode(c + 1, (size_t)(at - c - 1));
		} else
			u->user = pct_decode(rest, (size_t)(at - rest));
		hostp = at + 1;
	}
	const char *pc = NULL;
	if (*hostp == '[') {
		const char *rb = memchr(hostp, ']', (size_t)(end - hostp));
		if (!rb) { snprintf(err, errlen, "database URL has an unclosed '[' in the host"); return DJC_EINVAL; }
		u->host = xstrndup(hostp + 1, (size_t)(rb - hostp - 1));
		if (rb + 1 < end && rb[1] == ':') pc = rb + 1;
	} else {
		pc = memchr(hostp, ':', (size_t)(end - hostp));
		u->host = xstrndup(hostp, (size_t)((pc ? pc : end) - hostp));
	}
	if (pc) {
		char *e;
		long port = strtol(pc + 1, &e, 10);
		if (e != end || port <= 0 || port > 65535) {
			snprintf(err, errlen, "database URL has a bad port '%.*s'", (int)(end - pc - 1), pc + 1);
			return DJC_EINVAL;
		}
		u->port = (int)port;
	}
	if (!*u->host) { free(u->host); u->host = xstrdup("localhost"); }
	return DJC_OK;
}

/* The password from DJC_DATABASE_PASSWORD when the URL gave none. */
static void url_env_password(db_url *u)
{
	if (u->password) return;
	const char *pw = getenv("DJC_DATABASE_PASSWORD");
	if (pw && *pw) u->password = xstrdup(pw);
}

/* A server URL scheme://user:password@host:port/dbname?k=v into u (its
 * scheme set), rest just after the ':'. */
static int url_server(db_url *u, const char *rest, char *err, size_t errlen)
{
	if (strncmp(rest, "//", 2)) {
		snprintf(err, errlen, "database URL must look like %s://user:password@host:port/dbname", u->scheme);
		return DJC_EINVAL;
	}
	rest += 2;
	const char *q = strchr(rest, '?');
	const char *end = q ? q : rest + strlen(rest);
	const char *slash = memchr(rest, '/', (size_t)(end - rest));
	int rc = url_authority(u, rest, slash ? slash : end, err, errlen);
	if (rc) return rc;
	if (slash && slash + 1 < end) u->dbname = pct_decode(slash + 1, (size_t)(end - slash - 1));
	if (q) url_opts(u, q + 1);
	url_env_password(u);
	sb_t r = SB_INIT;
	sb_printf(&r, "%s://", u->scheme);
	if (u->user) url_add_userinfo(&r, u->user, u->password != NULL);
	sb_add(&r, u->host);
	if (u->port) sb_printf(&r, ":%d", u->port);
	if (u->dbname) sb_printf(&r, "/%s", u->dbname);
	u->redacted = sb_steal(&r);
	return DJC_OK;
}

int db_url_parse(db_url *u, const char *url, char *err, size_t errlen)
{
	memset(u, 0, sizeof *u);
	const char *colon = strchr(url, ':');
	if (!colon || colon == url) {
		snprintf(err, errlen, "database URL has no scheme (expected sqlite:PATH, postgresql://... or mysql://...)");
		return DJC_EINVAL;
	}
	u->scheme = xstrndup(url, (size_t)(colon - url));
	for (char *p = u->scheme; *p; p++) *p = (char)tolower((unsigned char)*p);
	if (!strcmp(u->scheme, "postgres")) { free(u->scheme); u->scheme = xstrdup("postgresql"); }
	if (!strcmp(u->scheme, "mariadb")) { free(u->scheme); u->scheme = xstrdup("mysql"); }
	const char *rest = colon + 1;
	if (!strcmp(u->scheme, "sqlite")) {
		if (!strncmp(rest, "//", 2)) rest += 2;   /* sqlite:///abs/path or sqlite://rel */
		if (!*rest) {
			snprintf(err, errlen, "database URL '%s' names no file", url);
			db_url_free(u);
			return DJC_EINVAL;
		}
		const char *q = strchr(rest, '?');
		if (q) {   /* before, the file was named "f.db?x=1" */
			snprintf(err, errlen, "database URL '%s': a SQLite URL takes no parameters (got '%s'; sqlite:PATH "
				 "names the file)", url, q);
			db_url_free(u);
			return DJC_EINVAL;
		}
		u->path = xstrdup(rest);
		u->redacted = xstrdup(url);
		return DJC_OK;
	}
	if (strcmp(u->scheme, "postgresql") && strcmp(u->scheme, "mysql")) {
		snprintf(err, errlen, "unknown database URL scheme '%s' (expected sqlite, postgresql or mysql)", u->scheme);
		db_url_free(u);
		return DJC_EINVAL;
	}
	int rc = DJC_OK, own = 0;
	/* a driver that parses its own URLs (PostgreSQL: libpq's parser) */
	for (size_t i = 0; i < sizeof drivers / sizeof *drivers && !own; i++)
		if (!strcmp(drivers[i]->name, u->scheme) && drivers[i]->url_parse) {
			own = 1;
			if (!(rc = drivers[i]->url_parse(u, url, err, errlen))) url_env_password(u);
		}
	if (!own) rc = url_server(u, rest, err, errlen);
	if (rc) db_url_free(u);
	return rc;
}

int db_open(db_conn **out, const char *url, const char *schema, char *err, size_t errlen)
{
	return db_open_ext(out, url, schema, 0, 0, err, errlen);
}

int db_open_ext(db_conn **out, const char *url, const char *schema, int flags, double lock_wait, char *err,
		size_t errlen)
{
	*out = NULL;
	db_url u;
	int rc = db_url_parse(&u, url, err, errlen);
	if (rc) return rc;
	u.flags = flags;
	u.lock_wait = lock_wait > 0 ? lock_wait : 0;
	if (schema && !db_ident_ok(schema)) {
		snprintf(err, errlen, "invalid schema name '%s' (letters, digits and _ only, at most 64)", schema);
		db_url_free(&u);
		return DJC_EINVAL;
	}
	rc = DJC_EINVAL;
	for (size_t i = 0; i < sizeof drivers / sizeof *drivers; i++)
		if (!strcmp(drivers[i]->name, u.scheme)) {
			rc = drivers[i]->open(out, &u, schema, err, errlen);
			if (rc == DJC_OK) {
				pthread_mutexattr_t ma;
				pthread_mutexattr_init(&ma);
				pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
				pthread_mutex_init(&(*out)->mu, &ma);
				pthread_mutexattr_destroy(&ma);
				(*out)->drv = drivers[i];
				(*out)->lock_wait = u.lock_wait;
				if (!(*out)->table_suffix) (*out)->table_suffix = drivers[i]->table_suffix;
			}
			break;
		}
	db_url_free(&u);
	return rc;
}

int db_drop_created(db_conn *c)
{
	if (!c || !c->created || !c->drv->drop_created) return DJC_OK;
	int rc = c->drv->drop_created(c);
	if (!rc) c->created = 0;
	return rc;
}

void db_close(db_conn *c)
{
	if (!c) return;
	pthread_mutex_destroy(&c->mu);
	c->drv->close(c);
}

/* Taking turns on a shared connection. An urgent thread (the heartbeat)
 * waits for the mutex like any other, but while it waits, the others let
 * it go first: a thread that took the mutex for a new statement (not
 * inside its own transaction, not nested) gives it back and waits until
 * the urgent one is through. A mutex alone is not fair: a worker whose
 * statements followed one another (a histogram update, then its commit)
 * kept it for 65-76 s at 1,000 workers on an overloaded server while its
 * heartbeat waited, and the lease (60 s) lapsed under a live job. */
static _Thread_local int urgent_thread;

void db_thread_urgent(int on) { urgent_thread = on; }

static void conn_lock(db_conn *c)
{
	if (urgent_thread) {
		atomic_fetch_add(&c->urgent, 1);
		pthread_mutex_lock(&c->mu);
		atomic_fetch_sub(&c->urgent, 1);
		c->depth++;
		c->stmt_t0 = mono_now();
		return;
	}
	for (;;) {
		pthread_mutex_lock(&c->mu);
		/* depth > 0: this thread holds it already (nested, or its open
		 * transaction, which holds it at depth 1 or more): going on is the
		 * only way to let it go */
		if (c->depth > 0 || !atomic_load(&c->urgent)) {
			c->depth++;
			c->stmt_t0 = mono_now();
			return;
		}
		pthread_mutex_unlock(&c->mu);
		while (atomic_load(&c->urgent)) {
			struct timespec ts = {0, 200000};   /* 0.2 ms */
			nanosleep(&ts, NULL);
		}
	}
}

static void conn_unlock(db_conn *c)
{
	c->depth--;
	pthread_mutex_unlock(&c->mu);
}

void db_set_wait_bound(db_conn *c, double seconds)
{
	if (!c || seconds < 0) return;
	conn_lock(c);
	c->wait_bound = seconds;
	if (c->drv->wait_bound_changed) c->drv->wait_bound_changed(c);
	conn_unlock(c);
}

/* the process's, not a thread's: the round trip that gave up may have
 * been the heartbeat's, while the worker waited for the connection. A
 * run of failures, each starting within 5 s of the last one's end (a
 * COMMIT the bound gave up on, then the look for its outcome failing to
 * reconnect), counts from the first one's start. */
static pthread_mutex_t stalled_mu = PTHREAD_MUTEX_INITIALIZER;
static double fail_since, fail_end;

void db_stalled(double t0, double t1)
{
	pthread_mutex_lock(&stalled_mu);
	if (!(fail_end > 0 && t0 - fail_end < 5)) fail_since = t0;
	fail_end = t1;
	pthread_mutex_unlock(&stalled_mu);
}

double db_stalled_take(void)
{
	pthread_mutex_lock(&stalled_mu);
	double now = mono_now();
	/* one that failed over 5 s ago was no fault of this retry's */
	double s = fail_end > 0 && now - fail_end < 5 ? now - fail_since : 0;
	pthread_mutex_unlock(&stalled_mu);
	return s;
}

/* The bound of c's next call: c->wait_bound, or while a run of failures
 * is in progress what is left of that much from the run's start (1 s at
 * least). Calls one after another with no retry_wait between them (a
 * COMMIT the bound gave up on, then the look for its outcome, which
 * waited as long again in pgbouncer's queue) end within about one bound
 * of the run's start, as the retries do. */
static double bound_now(db_conn *c)
{
	pthread_mutex_lock(&stalled_mu);
	double b = c->wait_bound, now = mono_now();
	if (fail_end > 0 && now - fail_end < 5) {
		double left = c->wait_bound - (now - fail_since);
		b = left < 1 ? 1 : left;
	}
	pthread_mutex_unlock(&stalled_mu);
	return b;
}

/* When a bounded connection's call that began at t0 failed as a lost
 * session: when it began and ended, waiting for the connection (behind a
 * heartbeat's renewal that hung) included (db_stalled_take). */
#define T0(c) ((c)->wait_bound > 0 ? mono_now() : 0)
static int timed(db_conn *c, double t0, int rc)
{
	if (c->wait_bound <= 0) return rc;
	if (rc == DJC_ECONN) db_stalled(t0, mono_now());
	else {
		/* the server answered: the run of failures is over */
		pthread_mutex_lock(&stalled_mu);
		fail_end = 0;
		pthread_mutex_unlock(&stalled_mu);
	}
	return rc;
}

/* Around a driver call, under the connection's lock: the bound of this
 * call (bound_now) in c->wait_now. */
#define BOUND_IN(c) ((c)->wait_now = (c)->wait_bound > 0 ? bound_now(c) : 0)
#define BOUND_OUT(c) ((c)->wait_now = 0)

void db_lock_final(db_conn *c, int on)
{
	atomic_store(&c->lock_final, on);
	if (!on) atomic_store(&c->locked_out, 0);
}

int db_lock_bound_reached(const db_conn *c)
{
	return c->lock_wait > 0 && mono_now() - c->stmt_t0 >= c->lock_wait - 0.5;
}

int db_locked(db_conn *c, const char *driver, const char *setting)
{
	atomic_store(&c->locked_out, 1);
	snprintf(c->err, sizeof c->err, "%s: waited %.0f s for a lock another session holds (%s)", driver,
		 mono_now() - c->stmt_t0, setting);
	return DB_ELOCKED;
}

/* conn_lock, unless c is a worker's connection after a lock wait that
 * reached the bound (db_lock_final): then its statements fail at once,
 * c->err unchanged (DB_ELOCKED, not holding the lock). Asked once c is
 * held: a statement that waited for the heartbeat's renewal, which
 * waited out the bound, is refused too. */
static int conn_enter(db_conn *c)
{
	conn_lock(c);
	if (!atomic_load(&c->lock_final) || !atomic_load(&c->locked_out)) return DJC_OK;
	conn_unlock(c);
	return DB_ELOCKED;
}

/* A driver call's start: the connection held (conn_enter) with the call's
 * bound set, *t0 when it began; DB_ELOCKED: refused, not held. */
static int call_enter(db_conn *c, double *t0)
{
	*t0 = T0(c);
	if (conn_enter(c)) return DB_ELOCKED;
	BOUND_IN(c);
	return DJC_OK;
}

/* Its end: the bound lifted, the connection given back, the call counted
 * in a run of failures or ending one (timed). */
static int call_leave(db_conn *c, double t0, int rc)
{
	BOUND_OUT(c);
	conn_unlock(c);
	return timed(c, t0, rc);
}

int db_exec(db_conn *c, const char *sql, const val_t *p, size_t n, db_res **out)
{
	if (out) *out = NULL;
	double t0;
	if (call_enter(c, &t0)) return DB_ELOCKED;
	return call_leave(c, t0, c->drv->exec(c, sql, p, n, out));
}

int db_exec_digest(db_conn *c, const char *sql, const val_t *p, size_t n, const db_digest *d, db_res **out)
{
	if (!c->drv->exec_digest) return db_exec(c, sql, p, n, out);
	double t0;
	if (call_enter(c, &t0)) return DB_ELOCKED;
	return call_leave(c, t0, c->drv->exec_digest(c, sql, p, n, d, out));
}

int db_exec_stream(db_conn *c, const char *sql, const val_t *p, size_t n, const db_stream *s)
{
	if (!c->drv->exec_stream) {
		snprintf(c->err, sizeof c->err, "%s: rows cannot be streamed", c->drv->name);
		return DJC_EINVAL;
	}
	double t0;
	if (call_enter(c, &t0)) return DB_ELOCKED;
	return call_leave(c, t0, c->drv->exec_stream(c, sql, p, n, s));
}

int db_can_stream(db_conn *c) { return c->drv->exec_stream != NULL; }

static long long own_session(db_conn *c)
{
	return (long long)(c->drv->session_id ? c->drv->session_id(c) : c->drv->connection_id(c));
}

void db_publish_session(db_conn *c, _Atomic long long *out)
{
	conn_lock(c);
	c->session_out = out;
	atomic_store(out, own_session(c));
	conn_unlock(c);
}

void db_session_changed(db_conn *c)
{
	if (c->session_out) atomic_store(c->session_out, own_session(c));
}

int db_socket_port_is(int fd, long port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof ss;
	if (fd < 0 || port <= 0 || getsockname(fd, (struct sockaddr *)&ss, &len)) return 0;
	if (ss.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&ss)->sin_port) == port;
	if (ss.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port) == port;
	return 0;
}

int db_session_end(db_conn *c, int64_t id)
{
	if (!c->drv->session_end_sql || id <= 0) return DJC_EINVAL;
	val_t v = val_int(id);
	return db_exec(c, c->drv->session_end_sql, &v, 1, NULL);
}

int db_session_alive(db_conn *c, int64_t id)
{
	if (!c->drv->session_sql) return 0;
	if (id == 0) return DJC_EINVAL;
	val_t v = val_int(id);
	db_res *r = NULL;
	int rc = db_exec(c, c->drv->session_sql, &v, 1, &r);
	if (rc == DJC_OK) rc = r->nrows > 0;
	db_res_free(r);
	return rc;
}

static int begin_with(db_conn *c, int (*begin)(db_conn *))
{
	double t0;
	if (call_enter(c, &t0)) return DB_ELOCKED;
	int rc = begin(c);
	BOUND_OUT(c);
	if (rc == DJC_OK && !c->tx_held) c->tx_held = 1;   /* kept until the transaction ends */
	else conn_unlock(c);
	return timed(c, t0, rc);
}

int db_begin(db_conn *c) { return begin_with(c, c->drv->begin); }

int db_begin_snapshot(db_conn *c) { return begin_with(c, c->drv->begin_snapshot); }

int db_read_pieces(db_conn *c, const db_pieces *req)
{
	double t0;
	if (call_enter(c, &t0)) return DB_ELOCKED;
	return call_leave(c, t0, c->drv->read_pieces(c, req));
}

/* The transaction ended: give back the hold db_begin kept. */
static void tx_release(db_conn *c)
{
	if (c->tx_held && !c->in_tx) {
		c->tx_held = 0;
		conn_unlock(c);
	}
}

int db_commit(db_conn *c)
{
	double t0 = T0(c);
	conn_lock(c);
	BOUND_IN(c);
	int rc = c->drv->commit(c);
	BOUND_OUT(c);
	tx_release(c);
	conn_unlock(c);
	return timed(c, t0, rc);
}

int db_rollback(db_conn *c)
{
	conn_lock(c);
	int rc = c->drv->rollback(c);
	c->in_tx = 0;
	tx_release(c);
	conn_unlock(c);
	return rc;
}

int db_claim_run(db_conn *c, const db_claim *cl, db_res **out)
{
	if (out) *out = NULL;
	double t0;
	if (call_enter(c, &t0)) return DB_ELOCKED;
	return call_leave(c, t0, c->drv->claim(c, cl, out));
}

/* A batch as a plain transaction: BEGIN, the items one by one, COMMIT. */
int db_batch_each(db_conn *c, const db_item *items, size_t n, db_res **res, size_t *failed)
{
	*failed = 0;
	int rc = c->drv->begin(c);
	if (rc) return rc;
	size_t i = 0;
	for (; i < n; i++) {
		db_res *r = NULL;
		rc = items[i].claim ? c->drv->claim(c, items[i].claim, &r)
				    : c->drv->exec(c, items[i].sql, items[i].params, items[i].np, &r);
		if (!rc && items[i].expect >= 0 && r->affected != items[i].expect) {
			snprintf(c->err, sizeof c->err, "batch item %zu changed %lld rows, not %ld", i, r->affected, items[i].expect);
			rc = DB_EEXPECT;
		}
		if (rc) {
			db_res_free(r);
			break;
		}
		if (res) res[i] = r;
		else db_res_free(r);
	}
	if (!rc && (rc = c->drv->commit(c)) == DJC_OK) return DJC_OK;
	*failed = i;
	char keep[sizeof c->err];
	memcpy(keep, c->err, sizeof keep);
	c->drv->rollback(c);
	memcpy(c->err, keep, sizeof keep);
	c->in_tx = 0;
	for (size_t k = 0; res && k < i; k++) { db_res_free(res[k]); res[k] = NULL; }
	return rc;
}

int (*db_batch_fault)(db_conn *c, const db_item *items, size_t n, int done);

/* db_batch_fault said so: the batch ends as one whose connection went
 * during its COMMIT (postgres.c, pg_batch: "connection lost during a
 * pipeline"). */
static int batch_cut(db_conn *c, size_t n, db_res **res, size_t *failed)
{
	for (size_t k = 0; res && k < n; k++) { db_res_free(res[k]); res[k] = NULL; }
	*failed = n;
	snprintf(c->err, sizeof c->err, "connection lost during a batch's COMMIT (db_batch_fault)");
	return DJC_ECONN;
}

int db_batch(db_conn *c, const db_item *items, size_t n, db_res **res, size_t *failed)
{
	double t0;
	if (res) memset(res, 0, n * sizeof *res);
	if (call_enter(c, &t0)) {
		*failed = 0;
		return DB_ELOCKED;
	}
	int rc;
	if (db_batch_fault && !c->in_tx && db_batch_fault(c, items, n, 0)) rc = batch_cut(c, n, res, failed);
	else {
		int in_tx = c->in_tx;
		rc = c->drv->batch && !in_tx ? c->drv->batch(c, items, n, res, failed) : db_batch_each(c, items, n, res, failed);
		if (!rc && db_batch_fault && !in_tx && db_batch_fault(c, items, n, 1)) rc = batch_cut(c, n, res, failed);
	}
	return call_leave(c, t0, rc);
}
void db_qi(db_conn *c, sb_t *b, const char *name) { c->drv->quote_ident(b, name); }

int db_in_rows(db_conn *c, const db_in *in, sb_t *sql, val_t *out, size_t *nout)
{
	*nout = 0;
	return c->drv->in_rows && in->k && c->drv->in_rows(c, in, sql, out, nout);
}

void db_json_str(sb_t *b, const char *s, size_t n)
{
	sb_addc(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') { sb_addc(b, '\\'); sb_addc(b, (char)ch); }
		else if (ch < 0x20) sb_printf(b, "\\u%04x", ch);
		else sb_addc(b, (char)ch);
	}
	sb_addc(b, '"');
}

void db_qtable(db_conn *c, sb_t *b, const char *name)
{
	/* "schema\x1fname": a table of another schema (an adopted DataJoint
	 * table, src/schema/names.c table_sqlref), always qualified */
	const char *us = strchr(name, '\x1f');
	if (us) {
		sb_t s = SB_INIT;
		sb_addn(&s, name, (size_t)(us - name));
		c->drv->quote_ident(b, sb_str(&s));
		sb_free(&s);
		sb_addc(b, '.');
		c->drv->quote_ident(b, us + 1);
		return;
	}
	if (c->qualify && c->schema) {
		c->drv->quote_ident(b, c->schema);
		sb_addc(b, '.');
	}
	c->drv->quote_ident(b, name);
}

int db_listen(db_conn *c, const char *channel)
{
	if (!c->drv->listen) {
		snprintf(c->err, sizeof c->err, "%s: no notifications (LISTEN) on this backend", c->drv->name);
		return DJC_EINVAL;
	}
	conn_lock(c);
	int rc = c->drv->listen(c, channel);
	conn_unlock(c);
	return rc;
}

int db_notify(db_conn *c, const char *channel, const char *payload)
{
	if (!c->drv->notify) return DJC_OK;
	conn_lock(c);
	int rc = c->drv->notify(c, channel, payload);
	conn_unlock(c);
	return rc;
}

int db_wait_notify(db_conn *c, double seconds, char **payload)
{
	*payload = NULL;
	if (!c->drv->notified || !c->drv->socket) return 0;
	double end = mono_now() + (seconds > 0 ? seconds : 0);
	for (;;) {
		/* what arrived (a statement of another thread sharing the
		 * connection may have read it off the socket already) */
		conn_lock(c);
		int rc = c->drv->notified(c, payload);
		int fd = c->drv->socket(c);
		conn_unlock(c);
		if (rc) return rc;
		double left = end - mono_now();
		if (left <= 0 || fd < 0) return 0;
		/* the socket turning readable ends the wait early; at most a
		 * second at a time, so a wake-up another thread consumed costs
		 * at most that */
		struct pollfd pf = {fd, POLLIN, 0};
		int ms = left > 1 ? 1000 : (int)(left * 1000) + 1;
		if (poll(&pf, 1, ms) < 0 && errno != EINTR) return 0;
	}
}

void db_create_index(db_conn *c, sb_t *b, const char *table, const char *index, const char *cols, int unique,
		     const char *where)
{
	sb_t qt = SB_INIT;
	db_qtable(c, &qt, table);
	/* the same in every dialect: the index lives in the table's schema,
	 * so its own name is not qualified */
	sb_printf(b, "CREATE %sINDEX IF NOT EXISTS ", unique ? "UNIQUE " : "");
	c->drv->quote_ident(b, index);
	sb_add(b, " ON ");
	sb_add(b, sb_str(&qt));
	sb_printf(b, " (%s)", cols);
	if (where && c->drv->partial_index) sb_printf(b, " WHERE %s", where);
	sb_free(&qt);
}

const char *db_decimal_order_cast(db_conn *c) { return c->drv->decimal_order_cast; }
const char *db_enum_like_cast(db_conn *c) { return c->drv->enum_like_cast; }
const char *db_bool_agg_cast(db_conn *c) { return c->drv->bool_agg_cast; }

int db_piece_env(size_t *n)
{
	const char *e = getenv("DJC_READ_PIECE");
	if (!e || !*e) return 0;
	unsigned long long v = 0;
	for (const char *p = e; *p; p++) {
		if (!isdigit((unsigned char)*p) || v > DB_PIECE_MAX) return -1;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v && (v < DB_PIECE_MIN || v > DB_PIECE_MAX)) return -1;
	*n = (size_t)v;
	return 1;
}

size_t db_read_piece(db_conn *c)
{
	const db_driver *d = c->drv;
	int can = d->read_piece && d->read_pieces && d->row_version && d->row_id && d->begin_snapshot;
	size_t n = d->read_piece;
	int env = db_piece_env(&n);
	/* a bad value is one on every backend, read in pieces or not */
	if (env < 0) return DB_PIECE_BAD;
	return can ? n : 0;
}

void db_index_hint(db_conn *c, sb_t *q, const char *index)
{
	if (!c->drv->index_hint) return;
	sb_add(q, c->drv->index_hint);
	c->drv->quote_ident(q, index);
}

void db_delete_from(db_conn *c, sb_t *q, const char *table, const char *index)
{
	if (c->drv->delete_using) {
		c->drv->delete_using(c, q, table, index);
		return;
	}
	sb_add(q, "DELETE FROM ");
	db_qtable(c, q, table);
}

void db_update_head(db_conn *c, sb_t *q, const char *table)
{
	sb_add(q, "UPDATE ");
	db_qtable(c, q, table);
	if (c->drv->write_join) sb_add(q, c->drv->write_join);
}

void db_delete_head(db_conn *c, sb_t *q, const char *table)
{
	sb_add(q, "DELETE ");
	if (c->drv->write_join) {
		db_qtable(c, q, table);
		sb_addc(q, ' ');
	}
	sb_add(q, "FROM ");
	db_qtable(c, q, table);
	if (c->drv->write_join) sb_add(q, c->drv->write_join);
}

int db_analyze(db_conn *c, const char *table)
{
	if (!c->drv->analyze_head) return DJC_OK;
	sb_t q = SB_INIT;
	sb_add(&q, c->drv->analyze_head);
	db_qtable(c, &q, table);
	int rc = db_exec(c, sb_str(&q), NULL, 0, NULL);
	sb_free(&q);
	return rc;
}

int db_ident_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 64) return 0;
	if (!(isalpha((unsigned char)*s) || *s == '_')) return 0;
	for (const char *p = s; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_')) return 0;
	return 1;
}

void db_res_free(db_res *r)
{
	if (!r) return;
	for (size_t i = 0; i < r->ncols; i++) free(r->cols[i]);
	free(r->cols);
	for (size_t i = 0; i < r->ncols * r->nrows; i++) val_free(&r->cells[i]);
	free(r->cells);
	free(r);
}

const val_t *db_cell(const db_res *r, size_t row, size_t col) { return &r->cells[row * r->ncols + col]; }

val_t *db_cell_mut(db_res *r, size_t row, size_t col) { return &r->cells[row * r->ncols + col]; }

int64_t db_cell_int(const db_res *r, size_t row, size_t col)
{
	const val_t *v = db_cell(r, row, col);
	switch (v->t) {
	case DJC_INT: case DJC_BOOL: return v->i;
	case DJC_UINT: return (int64_t)v->u;
	case DJC_FLOAT: return (int64_t)v->f;
	case DJC_TEXT: return strtoll(v->s, NULL, 10);
	default: return 0;
	}
}

const char *db_cell_text(db_res *r, size_t row, size_t col)
{
	val_t *v = &r->cells[row * r->ncols + col];
	char buf[64];
	switch (v->t) {
	case DJC_NULL: return NULL;
	case DJC_INT: case DJC_BOOL: snprintf(buf, sizeof buf, "%" PRId64, v->i); break;
	case DJC_UINT: snprintf(buf, sizeof buf, "%" PRIu64, v->u); break;
	case DJC_FLOAT: snprintf(buf, sizeof buf, "%.17g", v->f); break;
	default: return v->s;
	}
	free(v->s);
	v->s = xstrdup(buf);
	v->n = strlen(buf);
	return v->s;
}
