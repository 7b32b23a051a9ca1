/* postgres.c - the PostgreSQL driver (libpq). One schema per djc schema
 * (every table named "schema"."table"), `?` placeholders rewritten to $n,
 * parameters typed so the server coerces text to the column's type, an LRU
 * cache of prepared statements, SKIP LOCKED claims, LISTEN/NOTIFY, and a
 * transparent reconnect between transactions so a server restart does not
 * kill a long-running worker.
 *
 * Through a transaction pooler (pgbouncer with pool_mode = transaction,
 * chosen by the URL parameter pooler=transaction or the setting
 * database.pooler) each transaction may run on another server connection,
 * so the driver keeps nothing on the server between transactions: no
 * prepared statements (every statement is an unnamed one, PQexecParams),
 * no search_path (names are qualified anyway), no LISTEN; only the
 * settings pgbouncer itself carries from one server connection to the
 * next (TimeZone, DateStyle) are SET. */
#include "db.h"
#include "catalog.h"
#include "djc.h"
#include <libpq-fe.h>
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/socket.h>
#include "dl.h"
#include "util/clock.h"
#include "util/redact.h"

/* The library is loaded on first connect (dl.c); every call goes through
 * this table. */
static struct {
	__typeof__(PQclear) *PQclear;
	__typeof__(PQcmdStatus) *PQcmdStatus;
	__typeof__(PQcmdTuples) *PQcmdTuples;
	__typeof__(PQconnectdbParams) *PQconnectdbParams;
	__typeof__(PQconninfoFree) *PQconninfoFree;
	__typeof__(PQconninfoParse) *PQconninfoParse;
	__typeof__(PQconsumeInput) *PQconsumeInput;
	__typeof__(PQcopyResult) *PQcopyResult;
	__typeof__(PQerrorMessage) *PQerrorMessage;
	__typeof__(PQexec) *PQexec;
	__typeof__(PQexecParams) *PQexecParams;
	__typeof__(PQexecPrepared) *PQexecPrepared;
	__typeof__(PQfformat) *PQfformat;
	__typeof__(PQfinish) *PQfinish;
	__typeof__(PQfmod) *PQfmod;
	__typeof__(PQfname) *PQfname;
	__typeof__(PQfreemem) *PQfreemem;
	__typeof__(PQftype) *PQftype;
	__typeof__(PQgetisnull) *PQgetisnull;
	__typeof__(PQgetlength) *PQgetlength;
	__typeof__(PQgetvalue) *PQgetvalue;
	__typeof__(PQgetResult) *PQgetResult;
	__typeof__(PQnfields) *PQnfields;
	__typeof__(PQnotifies) *PQnotifies;
	__typeof__(PQntuples) *PQntuples;
	__typeof__(PQprepare) *PQprepare;
	__typeof__(PQreset) *PQreset;
	__typeof__(PQresultErrorField) *PQresultErrorField;
	__typeof__(PQresultErrorMessage) *PQresultErrorMessage;
	__typeof__(PQresultStatus) *PQresultStatus;
	__typeof__(PQsendDescribePrepared) *PQsendDescribePrepared;
	__typeof__(PQsendPrepare) *PQsendPrepare;
	__typeof__(PQsendQueryParams) *PQsendQueryParams;
	__typeof__(PQsendQueryPrepared) *PQsendQueryPrepared;
	__typeof__(PQserverVersion) *PQserverVersion;
	__typeof__(PQsetNoticeProcessor) *PQsetNoticeProcessor;
	__typeof__(PQsetSingleRowMode) *PQsetSingleRowMode;
	__typeof__(PQsetvalue) *PQsetvalue;
	__typeof__(PQsocket) *PQsocket;
	__typeof__(PQstatus) *PQstatus;
	__typeof__(PQtransactionStatus) *PQtransactionStatus;
	__typeof__(PQunescapeBytea) *PQunescapeBytea;
	__typeof__(PQflush) *PQflush;
	__typeof__(PQisBusy) *PQisBusy;
	__typeof__(PQsendQuery) *PQsendQuery;
	__typeof__(PQsetnonblocking) *PQsetnonblocking;
} pq;
static const char *const pq_names[] = {
	"PQclear",
	"PQcmdStatus",
	"PQcmdTuples",
	"PQconnectdbParams",
	"PQconninfoFree",
	"PQconninfoParse",
	"PQconsumeInput",
	"PQcopyResult",
	"PQerrorMessage",
	"PQexec",
	"PQexecParams",
	"PQexecPrepared",
	"PQfformat",
	"PQfinish",
	"PQfmod",
	"PQfname",
	"PQfreemem",
	"PQftype",
	"PQgetisnull",
	"PQgetlength",
	"PQgetvalue",
	"PQgetResult",
	"PQnfields",
	"PQnotifies",
	"PQntuples",
	"PQprepare",
	"PQreset",
	"PQresultErrorField",
	"PQresultErrorMessage",
	"PQresultStatus",
	"PQsendDescribePrepared",
	"PQsendPrepare",
	"PQsendQueryParams",
	"PQsendQueryPrepared",
	"PQserverVersion",
	"PQsetNoticeProcessor",
	"PQsetSingleRowMode",
	"PQsetvalue",
	"PQsocket",
	"PQstatus",
	"PQtransactionStatus",
	"PQunescapeBytea",
	"PQflush",
	"PQisBusy",
	"PQsendQuery",
	"PQsetnonblocking",
};
static const char *const pq_sonames[] = {"libpq.so.5", "libpq.so", NULL};
static dl_lib pq_lib = {0, "PostgreSQL", pq_sonames, pq_names, (void **)&pq, sizeof pq_names / sizeof *pq_names};
/* Debian's libpq brings libldap, which brings GnuTLS, whose constructor
 * initialises itself when loaded (~0.7 MiB of a worker's memory). Neither
 * libpq nor djc uses GnuTLS (libpq's TLS is OpenSSL; libldap initialises
 * GnuTLS itself before an LDAP TLS session), so the implicit start is
 * skipped for the load, and the environment is put back so that make
 * programs do not inherit the setting. Changing the environment is safe
 * only while no other thread may read it: a process that already runs
 * threads (a program embedding libdjc) loads libpq as it is. */
static int single_threaded(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f) return 0;
	char line[128];
	int n = 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Threads: %d", &n) == 1) break;
	fclose(f);
	return n == 1;
}

static int pq_load(char *err, size_t errlen)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&mu);
	int set = pq_lib.state == 0 && !getenv("GNUTLS_NO_IMPLICIT_INIT") && single_threaded();
	if (set) setenv("GNUTLS_NO_IMPLICIT_INIT", "1", 0);
	int rc = dl_load(&pq_lib, err, errlen);
	if (set) unsetenv("GNUTLS_NO_IMPLICIT_INIT");
	pthread_mutex_unlock(&mu);
	return rc;
}
#define PQclear (*pq.PQclear)
#define PQcmdStatus (*pq.PQcmdStatus)
#define PQcmdTuples (*pq.PQcmdTuples)
#define PQconnectdbParams (*pq.PQconnectdbParams)
#define PQconninfoFree (*pq.PQconninfoFree)
#define PQconninfoParse (*pq.PQconninfoParse)
#define PQconsumeInput (*pq.PQconsumeInput)
#define PQcopyResult (*pq.PQcopyResult)
#define PQerrorMessage (*pq.PQerrorMessage)
#define PQexec (*pq.PQexec)
#define PQexecParams (*pq.PQexecParams)
#define PQexecPrepared (*pq.PQexecPrepared)
#define PQfformat (*pq.PQfformat)
#define PQfinish (*pq.PQfinish)
#define PQfmod (*pq.PQfmod)
#define PQfname (*pq.PQfname)
#define PQfreemem (*pq.PQfreemem)
#define PQftype (*pq.PQftype)
#define PQgetisnull (*pq.PQgetisnull)
#define PQgetlength (*pq.PQgetlength)
#define PQgetvalue (*pq.PQgetvalue)
#define PQgetResult (*pq.PQgetResult)
#define PQnfields (*pq.PQnfields)
#define PQnotifies (*pq.PQnotifies)
#define PQntuples (*pq.PQntuples)
#define PQprepare (*pq.PQprepare)
#define PQreset (*pq.PQreset)
#define PQresultErrorField (*pq.PQresultErrorField)
#define PQresultErrorMessage (*pq.PQresultErrorMessage)
#define PQresultStatus (*pq.PQresultStatus)
#define PQsendDescribePrepared (*pq.PQsendDescribePrepared)
#define PQsendPrepare (*pq.PQsendPrepare)
#define PQsendQueryParams (*pq.PQsendQueryParams)
#define PQsetSingleRowMode (*pq.PQsetSingleRowMode)
#define PQsetvalue (*pq.PQsetvalue)
#define PQsendQueryPrepared (*pq.PQsendQueryPrepared)
#define PQserverVersion (*pq.PQserverVersion)
#define PQsetNoticeProcessor (*pq.PQsetNoticeProcessor)
#define PQsocket (*pq.PQsocket)
#define PQstatus (*pq.PQstatus)
#define PQtransactionStatus (*pq.PQtransactionStatus)
#define PQunescapeBytea (*pq.PQunescapeBytea)
#define PQflush (*pq.PQflush)
#define PQisBusy (*pq.PQisBusy)
#define PQsendQuery (*pq.PQsendQuery)
#define PQsetnonblocking (*pq.PQsetnonblocking)


#define STMT_CACHE 64

/* OIDs of the built-in types we bind or read (pg_type.h is server-side). */
#define OID_BOOL 16
#define OID_BYTEA 17
#define OID_NAME 19
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_TEXT 25
#define OID_TID 27
#define OID_XID 28
#define OID_BPCHAR 1042
#define OID_VARCHAR 1043
#define OID_FLOAT8 701
#define OID_TIMESTAMP 1114
#define OID_NUMERIC 1700

/* A server-side prepared statement: key is the parameter types then the
 * rewritten SQL (the types are fixed when a statement is prepared).
 *
 * runs counts its executions since it was prepared; at replan it is
 * prepared afresh, and the next replan is twice as far (REPLAN_FIRST, then
 * 32, 64, ...). The server keeps a prepared statement's generic plan until
 * a table it reads is analyzed, and it plans for the sizes the tables have
 * when it plans: a claim planned while the target table was empty (as a
 * VACUUM left it: no pages, no rows) looked for each claimed key's target
 * row with a sequential scan of the target, and kept doing so as the
 * target grew to 100,000 rows, until autovacuum analyzed it up to a
 * minute later: every claim then read the whole target, and a run of
 * 100,000 jobs went from 40,000-60,000 to 1,800-6,400 jobs/s
 * (test_jobs_core "a claim reads the target by key"). Remade at every doubling of its executions,
 * a plan made for a small table serves while the table is at most about
 * twice that size (a statement adds at most a batch of rows per
 * execution), and the cost is a few plans per doubling. */
/* binary: the statement's rows come in binary format (binary_worth, from
 * its Describe when it was prepared) */
typedef struct pcached { char *key; char name[24]; unsigned long used, runs, replan; int binary; } pcached;
#define REPLAN_FIRST 16

typedef struct pg_conn {
	db_conn base;
	PGconn *pg;
	pcached cache[STMT_CACHE];
	unsigned long tick, seq;
	int64_t pid;
	int pooled;         /* through a transaction pooler: no server-side state */
	int bounding;       /* batch_bounded is running the batch (its bound is in it) */
	int pipeline;       /* libpq's pipeline API is there, and not turned off (pipe_ready) */
	int own;            /* pid is our own server session (session_setup) */
	int unset;          /* reconnected, session_setup not yet done (ensure) */
	int ended;          /* a FATAL error ended the session while libpq still reports the
			     * connection good (classify): reconnected before the next statement */
	char *channel;      /* LISTENed to (again after a reconnect), or NULL */
	double stalled;     /* the wait bound gave the session up after that many seconds
			     * (await): what classify says; 0 again at the reconnect */
} pg_conn;

static void quiet(void *arg, const char *msg) { (void)arg; (void)msg; }

/* Copy msg into out as one line: newlines and tabs become single spaces,
 * trailing blanks go. */
static void one_line(char *out, size_t outlen, const char *prefix, const char *msg)
{
	size_t k = (size_t)snprintf(out, outlen, "%s", prefix);
	if (k >= outlen) return;
	int space = 0;
	for (const char *p = msg ? msg : ""; *p && k + 1 < outlen; p++) {
		if (*p == '\n' || *p == '\r' || *p == '\t' || *p == ' ') { space = 1; continue; }
		if (space && k > strlen(prefix) && k + 2 < outlen) out[k++] = ' ';
		space = 0;
		out[k++] = *p;
	}
	out[k] = 0;
}

/* Replace every occurrence of secret in s (in place) with "***". libpq does
 * not echo passwords; this is a guard. Passwords under 4 bytes would
 * mangle the message and are left alone. */
static void redact(char *s, const char *secret)
{
	redact_str(s, secret, 4);
}

static void set_conn_err(pg_conn *c, const char *what)
{
	char msg[900];
	one_line(msg, sizeof msg, "", PQerrorMessage(c->pg));
	snprintf(c->base.err, sizeof c->base.err, "postgresql: %s%s%s", what, *msg ? ": " : "", msg);
}

/* Map a failed result (or a failed connection) to a djc error class and
 * put "postgresql: <primary message>" in c->err. */
static int classify(pg_conn *c, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *prim = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	char local[600];
	if (!prim) {
		/* libpq's own message, e.g. "server closed the connection
		 * unexpectedly" and a hint on further lines: keep the first */
		const char *m = res && *PQresultErrorMessage(res) ? PQresultErrorMessage(res) : PQerrorMessage(c->pg);
		/* a pooler's FATAL before it closed the connection (pgbouncer's
		 * "server login has been failing ...", "query_wait_timeout")
		 * says more than libpq's "server closed the connection
		 * unexpectedly" that follows it */
		const char *fatal = strstr(PQerrorMessage(c->pg), "FATAL:");
		if (fatal && (fatal == PQerrorMessage(c->pg) || fatal[-1] == '\n')) m = fatal;
		snprintf(local, sizeof local, "%.*s", (int)strcspn(m, "\n"), m);
		prim = *local ? local : "unknown error";
	}
	one_line(c->base.err, sizeof c->base.err, "postgresql: ", prim);
	if (c->stalled > 0) {
		snprintf(c->base.err, sizeof c->base.err,
			 "postgresql: no reply from the server for %g s; the session is given up", c->stalled);
		return DJC_ECONN;
	}
	if (PQstatus(c->pg) == CONNECTION_BAD) return DJC_ECONN;
	/* FATAL (or PANIC): the server or a pooler ends the session. pgbouncer
	 * says "FATAL: server conn crashed?" to the clients of a server that
	 * crashed, with no SQLSTATE libpq passes on, and closes the client's
	 * connection, which libpq may still report as good: every later
	 * statement failed with the same message, as DJC_ERROR, so a database
	 * restart behind pgbouncer was no lost connection to retry (a commit's
	 * outcome could not be asked; the make was recorded as failed) */
	const char *sev = res ? PQresultErrorField(res, PG_DIAG_SEVERITY_NONLOCALIZED) : NULL;
	if (!sev && res) sev = PQresultErrorField(res, PG_DIAG_SEVERITY);
	if ((sev && (!strcmp(sev, "FATAL") || !strcmp(sev, "PANIC"))) || !strncmp(prim, "FATAL:", 6) ||
	    !strncmp(prim, "PANIC:", 6)) {
		c->ended = 1;
		return DJC_ECONN;
	}
	if (!state) return DJC_ERROR;
	if (!strcmp(state, "23505")) {
		/* the primary key's constraint is <table>_pkey, or <table>_pkeyN
		 * when that name was taken; a unique index's is
		 * <table>_<columns>_key[N] */
		const char *cons = PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME);
		const char *p = cons ? cons + strlen(cons) : NULL;
		while (p && p > cons && isdigit((unsigned char)p[-1])) p--;
		int unique = cons && *cons && !(p - cons >= 5 && !strncmp(p - 5, "_pkey", 5));
		return unique ? DB_EUNIQUE : DJC_EDUPLICATE;
	}
	if (!strcmp(state, "23503")) return DJC_EFOREIGN;
	if (!strcmp(state, "42501")) return DB_EACCESS;
	/* lock_timeout (db_conn.lock_wait, or a schema change's own) ran out:
	 * another session holds a lock as long; not a deadlock to retry */
	if (!strcmp(state, "55P03") && strstr(prim, "lock timeout")) return db_locked(&c->base, "postgresql", "lock_timeout");
	if (!strcmp(state, "40001") || !strcmp(state, "40P01") || !strcmp(state, "55P03")) return DJC_EBUSY;
	if (!strncmp(state, "08", 2) || !strcmp(state, "57P01") || !strcmp(state, "57P02") ||
	    !strcmp(state, "57P03")) return DJC_ECONN;
	if (!strncmp(state, "22", 2) || !strcmp(state, "23502") || !strcmp(state, "23514")) return DJC_EINVAL;
	return DJC_ERROR;
}

/* ------------------------------------------------------------ bounded waits
 * With c->base.wait_bound set (db_set_wait_bound: a worker's connection)
 * the connection is non-blocking and every wait for the server goes
 * through await, bounded: libpq's own calls wait in poll() without end,
 * and a frozen server (SIGSTOP: its kernel still acknowledges TCP, so
 * neither keepalives nor tcp_user_timeout fire) or pgbouncer queueing a
 * statement for a crashed server (until its query_wait_timeout, 120 s by
 * default) held a worker that long, or for ever. Without a bound every
 * call is libpq's blocking one, as before. */

/* Until libpq has a whole result to hand (PQisBusy false) and has sent
 * all it holds: send and read as the socket allows, each wait at most
 * wait_bound seconds with no byte moving. 0, or -1 when a wait ran out:
 * the session is given up (its socket shut down, so that libpq finds the
 * connection lost: the next result is an error, classify says
 * DJC_ECONN, the next statement outside a transaction reconnects). */
static int await(pg_conn *c)
{
	double bound = c->base.wait_now > 0 ? c->base.wait_now : c->base.wait_bound;
	for (;;) {
		int f = PQflush(c->pg);
		if (f < 0 || (!f && !PQisBusy(c->pg))) return 0;   /* a failure: libpq's result says it */
		int fd = PQsocket(c->pg);
		if (fd < 0) return 0;
		struct pollfd pf = {fd, (short)(POLLIN | (f ? POLLOUT : 0)), 0};
		double until = mono_now() + bound;
		int n;
		do {
			double left = until - mono_now();
			n = left > 0 ? poll(&pf, 1, (int)(left * 1000) + 1) : 0;
		} while (n < 0 && errno == EINTR);
		if (n == 0) {
			c->stalled = bound;
			shutdown(fd, SHUT_RDWR);
			PQconsumeInput(c->pg);   /* reads the end: CONNECTION_BAD */
			return -1;
		}
		if (n > 0 && (pf.revents & (POLLIN | POLLERR | POLLHUP)) && !PQconsumeInput(c->pg)) return 0;
	}
}

/* PQgetResult, bounded (await) */
static PGresult *pq_get(pg_conn *c)
{
	if (c->base.wait_bound > 0) await(c);
	return PQgetResult(c->pg);
}

/* As PQexec does: the last result of what was sent (sent: the PQsend*
 * call's return), or NULL when nothing could be sent (libpq's message
 * says why). */
static PGresult *pq_last(pg_conn *c, int sent)
{
	if (!sent) return NULL;
	PGresult *last = NULL, *r;
	while ((r = pq_get(c))) {
		PQclear(last);
		last = r;
		if (PQstatus(c->pg) == CONNECTION_BAD) break;
	}
	return last;
}

/* PQexec, PQexecParams, PQprepare and PQexecPrepared, bounded */
static PGresult *pq_exec(pg_conn *c, const char *sql)
{
	if (c->base.wait_bound <= 0) return PQexec(c->pg, sql);
	return pq_last(c, PQsendQuery(c->pg, sql));
}

/* (results as text: every caller reads them so) */
static PGresult *pq_exec_params(pg_conn *c, const char *sql, int n, const Oid *types, const char *const *vals,
				const int *lens, const int *fmts)
{
	if (c->base.wait_bound <= 0) return PQexecParams(c->pg, sql, n, types, vals, lens, fmts, 0);
	return pq_last(c, PQsendQueryParams(c->pg, sql, n, types, vals, lens, fmts, 0));
}

static PGresult *pq_prepare(pg_conn *c, const char *name, const char *sql, int n, const Oid *types)
{
	if (c->base.wait_bound <= 0) return PQprepare(c->pg, name, sql, n, types);
	return pq_last(c, PQsendPrepare(c->pg, name, sql, n, types));
}

static PGresult *pq_exec_prepared(pg_conn *c, const char *name, int n, const char *const *vals, const int *lens,
				  const int *fmts, int binary)
{
	if (c->base.wait_bound <= 0) return PQexecPrepared(c->pg, name, n, vals, lens, fmts, binary);
	return pq_last(c, PQsendQueryPrepared(c->pg, name, n, vals, lens, fmts, binary));
}

/* db_driver.wait_bound_changed: non-blocking exactly while bounded (so a
 * send to a server that reads nothing cannot block either) */
static void pg_wait_bound_changed(db_conn *bc)
{
	pg_conn *c = (pg_conn *)bc;
	if (c->pg) PQsetnonblocking(c->pg, bc->wait_bound > 0);
}

static int is_ok(const PGresult *res)
{
	ExecStatusType st = PQresultStatus(res);
	return st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_EMPTY_QUERY;
}

/* Run one parameterless statement; DJC_OK or an error class. */
static int simple(pg_conn *c, const char *sql)
{
	PGresult *res = pq_exec(c, sql);
	int rc = is_ok(res) ? DJC_OK : classify(c, res);
	PQclear(res);
	return rc;
}

/* Forget every cached statement (deallocate: 0 after a reconnect, when the
 * server has already forgotten them). */
static void cache_clear(pg_conn *c, int deallocate)
{
	int any = 0;
	for (int i = 0; i < STMT_CACHE; i++) {
		if (c->cache[i].key) any = 1;
		free(c->cache[i].key);
		c->cache[i].key = NULL;
		c->cache[i].used = 0;
		c->cache[i].runs = 0;
	}
	if (any && deallocate) {
		PGresult *res = pq_exec(c, "DEALLOCATE ALL");
		PQclear(res);
	}
}

static void pg_close(db_conn *bc)
{
	pg_conn *c = (pg_conn *)bc;
	if (!c) return;
	cache_clear(c, 0);
	if (c->pg) PQfinish(c->pg);
	free(c->base.schema);
	free(c->channel);
	free(c);
}

static void pg_qi(sb_t *b, const char *name)
{
	sb_addc(b, '"');
	for (const char *p = name; *p; p++) {
		if (*p == '"') sb_addc(b, '"');
		sb_addc(b, *p);
	}
	sb_addc(b, '"');
}

/* The schema (quoted: its name as SQL) created when missing. Looked at
 * first: CREATE SCHEMA checks the CREATE privilege even when the schema
 * exists, and concurrent creators race on pg_namespace. Without IF NOT
 * EXISTS, so that c->base.created says that this connection made it
 * (db_drop_created): another creator's is an error, taken as "there". */
static int schema_ensure(pg_conn *c, const char *quoted)
{
	const char *v[1] = {c->base.schema};
	PGresult *res = pq_exec_params(c, "SELECT 1 FROM pg_namespace WHERE nspname = $1", 1, NULL, v, NULL, NULL);
	int exists = PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) > 0;
	int rc = PQresultStatus(res) == PGRES_TUPLES_OK ? DJC_OK : classify(c, res);
	PQclear(res);
	if (rc || exists) return rc;
	sb_t q = SB_INIT;
	sb_printf(&q, "CREATE SCHEMA %s", quoted);
	res = pq_exec(c, sb_str(&q));
	sb_free(&q);
	if (!is_ok(res)) {
		const char *st = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		/* lost a race with another connection creating it: fine */
		if (!st || (strcmp(st, "23505") && strcmp(st, "42P06"))) rc = classify(c, res);
	} else
		c->base.created = 1;
	PQclear(res);
	return rc;
}

/* The schema this connection's open created, dropped when it holds
 * nothing (RESTRICT, the default: refused, and so kept, when a table or
 * type is in it). */
static int pg_drop_created(db_conn *bc)
{
	pg_conn *c = (pg_conn *)bc;
	sb_t q = SB_INIT;
	sb_add(&q, "DROP SCHEMA ");
	pg_qi(&q, c->base.schema);
	PGresult *res = pq_exec(c, sb_str(&q));
	sb_free(&q);
	int rc = DJC_OK;
	if (!is_ok(res)) {
		const char *st = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		/* 2BP01: not empty (kept); 3F000: gone already */
		if (!st || (strcmp(st, "2BP01") && strcmp(st, "3F000"))) rc = classify(c, res);
	}
	PQclear(res);
	return rc;
}

/* libpq 14's pipeline API, when the loaded libpq has it and
 * DJC_PG_PIPELINE=0 does not turn it off for the connections opened
 * since (as an older libpq would: a batch statement by statement, a
 * statement's first run read in text; the suite runs both ways) */
static struct {
	int (*enter)(PGconn *);
	int (*exit)(PGconn *);
	int (*sync)(PGconn *);
	int loaded;
} pipe_api;

static int pipe_ready(void)
{
	if (!pipe_api.loaded) {
		pipe_api.enter = (int (*)(PGconn *))dl_optional(pq_sonames, "PQenterPipelineMode");
		pipe_api.exit = (int (*)(PGconn *))dl_optional(pq_sonames, "PQexitPipelineMode");
		pipe_api.sync = (int (*)(PGconn *))dl_optional(pq_sonames, "PQpipelineSync");
		pipe_api.loaded = 1;
	}
	const char *env = getenv("DJC_PG_PIPELINE");
	return pipe_api.enter && pipe_api.exit && pipe_api.sync && !(env && !strcmp(env, "0"));
}

/* Session settings, run at open and after every reconnect: UTC, ISO dates,
 * exact floats, the schema (created when missing) on the search_path, and
 * the backend pid for connection_id. Through a transaction pooler only
 * what the pooler carries to every server connection it lends us (TimeZone
 * and DateStyle: pgbouncer re-applies them) is SET; nothing else may be,
 * since a SET would stay behind on a server connection other clients
 * borrow next. Nothing depends on the rest: every table name is qualified,
 * floats print shortest-exact by default since PostgreSQL 12, and notices
 * are dropped by the notice processor. The settings go in two round trips
 * (a simple query may hold several statements): the SETs, then the
 * search_path, LISTEN and the backend pid; a new session costs its server
 * process a few statements, not seven. */
#define SESSION_SETS \
	"SET TIME ZONE 'UTC'; SET datestyle TO 'ISO, YMD'; SET intervalstyle TO 'postgres'; " \
	"SET client_min_messages TO warning; SET extra_float_digits TO 1"
#define LZ4_SETTING \
	"; SELECT pg_catalog.set_config(name, 'lz4', false) FROM pg_catalog.pg_settings WHERE name = " \
	"'default_toast_compression' AND source = 'default' AND 'lz4' = ANY(enumvals)"

static int session_setup(pg_conn *c, int create_schema)
{
	int rc, v = PQserverVersion(c->pg);
	if (c->pooled && v < 120000) {
		snprintf(c->base.err, sizeof c->base.err,
			 "postgresql: pooler=transaction needs PostgreSQL 12 or later (the server is %d.%d)", v / 10000,
			 v / 100 % 100);
		return DJC_EINVAL;
	}
	/* 12+ prints shortest-exact floats whenever extra_float_digits > 0 (the
	 * default 1); older servers need 3 for a round trip. 14+ may compress
	 * large values with lz4 instead of pglz (TOAST_LZ4): chosen where
	 * the server has it and nobody chose otherwise (the setting's source
	 * is the built-in default, not a configuration file, ALTER DATABASE
	 * or ROLE, or PGOPTIONS). bench/blob_run's C make, 10 MiB in and 1 MiB
	 * out a key: 14 -> 25 keys/s, pglz's compression of the result and
	 * decompression of the array being most of a key's time. */
	if (c->pooled)
		rc = simple(c, "SET TIME ZONE 'UTC'; SET datestyle TO 'ISO, YMD'");
	else if (v >= 120000) {
		/* a failure of the lz4 part (pg_settings unreadable to this role)
		 * undoes the SETs with it: then they go alone */
		rc = simple(c, v >= 140000 ? SESSION_SETS LZ4_SETTING : SESSION_SETS);
		if (rc && v >= 140000 && PQstatus(c->pg) == CONNECTION_OK) rc = simple(c, SESSION_SETS);
	} else
		rc = simple(c, "SET TIME ZONE 'UTC'; SET datestyle TO 'ISO, YMD'; SET intervalstyle TO 'postgres'; "
			       "SET client_min_messages TO warning; SET extra_float_digits TO 3");
	if (rc) return rc;
	sb_t q = SB_INIT;
	pg_qi(&q, c->base.schema);
	char *quoted = sb_steal(&q);
	if (create_schema && strcmp(c->base.schema, "public")) rc = schema_ensure(c, quoted);
	sb_reset(&q);
	if (!c->pooled)
		/* not needed by djc's own statements (db_qtable qualifies every
		 * table), but raw SQL on a djc connection finds the tables */
		sb_printf(&q, "SET search_path TO %s; ", quoted);
	/* the bound on a lock wait (db_conn.lock_wait); through a pooler
	 * each transaction sets it (begin_as) */
	if (!c->pooled && c->base.lock_wait > 0) sb_printf(&q, "SET lock_timeout = %.0f; ", c->base.lock_wait * 1000);
	if (c->channel) {
		sb_add(&q, "LISTEN ");
		pg_qi(&q, c->channel);
		sb_add(&q, "; ");
	}
	free(quoted);
	/* through a pooler no server process is ours: connection_id is 0 */
	c->own = 0;
	if (c->pooled) {
		if (!rc && q.len) rc = simple(c, sb_str(&q));
		sb_free(&q);
		c->pid = 0;
		if (!rc) db_session_changed(&c->base);
		return rc;
	}
	if (rc) {
		sb_free(&q);
		return rc;
	}
	/* the session is our own (not a proxy's, such as pgbouncer in session
	 * mode) when the server saw our socket's TCP port (the result of the
	 * last statement is PQexec's) */
	sb_add(&q, "SELECT pg_backend_pid(), inet_client_port()");
	PGresult *res = pq_exec(c, sb_str(&q));
	sb_free(&q);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		rc = classify(c, res);
		PQclear(res);
		return rc;
	}
	c->pid = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	c->own = !PQgetisnull(res, 0, 1) && db_socket_port_is(PQsocket(c->pg), strtol(PQgetvalue(res, 0, 1), NULL, 10));
	PQclear(res);
	db_session_changed(&c->base);   /* a pool child publishes its new session */
	return DJC_OK;
}

/* ------------------------------------------------------------ URLs */

/* Percent-decode s[0..n) (a djc_* parameter of the query). */
static char *pct_decode_n(const char *s, size_t n)
{
	char *o = xstrndup(s, n), *w = o;
	for (const char *p = o; *p; p++) {
		if (*p == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
			char h[3] = {p[1], p[2], 0};
			*w++ = (char)strtol(h, NULL, 16);
			p += 2;
		} else
			*w++ = *p;
	}
	*w = 0;
	return o;
}

/* A postgresql:// (or postgres://) URL, parsed by libpq's own parser
 * (PQconninfoParse), so that every URL libpq accepts works: several hosts
 * (host1:5432,host2:5433, tried in turn), unix socket directories,
 * ?service= with a service file, and every libpq parameter. Query
 * parameters named djc_* are djc's own: taken out (into opt_keys/opt_vals)
 * before libpq sees the URL. Fills user, password, host, port (when one),
 * dbname, conninfo (what pg_open hands to libpq) and redacted
 * (postgresql://user:***@hosts/dbname?non-secret parameters). On failure
 * DJC_EINVAL with libpq's reason in err, the password kept out of it. */
/* url into *clean without its djc's own query parameters (djc_* and
 * pooler=, docs/workers.md), which go to u's options. */
static void pg_url_own_opts(db_url *u, const char *url, sb_t *clean)
{
	const char *q = strchr(url, '?');
	sb_addn(clean, url, q ? (size_t)(q - url) : strlen(url));
	if (!q) return;
	int first = 1;
	for (const char *p = q + 1; *p;) {
		size_t n = strcspn(p, "&");
		if ((n >= 4 && !strncmp(p, "djc_", 4)) || (n >= 7 && !strncmp(p, "pooler=", 7))) {
			const char *eq = memchr(p, '=', n);
			u->opt_keys = xrealloc(u->opt_keys, (u->nopts + 1) * sizeof(char *));
			u->opt_vals = xrealloc(u->opt_vals, (u->nopts + 1) * sizeof(char *));
			u->opt_keys[u->nopts] = pct_decode_n(p, eq ? (size_t)(eq - p) : n);
			u->opt_vals[u->nopts] = eq ? pct_decode_n(eq + 1, (size_t)(p + n - eq - 1)) : xstrdup("");
			u->nopts++;
		} else if (n) {
			sb_addc(clean, first ? '?' : '&');
			sb_addn(clean, p, n);
			first = 0;
		}
		p += n;
		if (*p == '&') p++;
	}
}

/* A port list ("5432,5433") each of whose ports can be one, or DJC_EINVAL
 * with err: bad input now, not a failed connection later. */
static int pg_ports_ok(const char *port, char *err, size_t errlen)
{
	for (const char *pt = port; pt && *pt;) {
		size_t n = strcspn(pt, ",");
		long v = 0;
		int ok = n > 0 && n <= 5 && strspn(pt, "0123456789") >= n;
		if (ok) { v = strtol(pt, NULL, 10); ok = v >= 1 && v <= 65535; }
		if (!ok) {
			snprintf(err, errlen, "database URL has a bad port '%.*s'", (int)(n > 64 ? 64 : n), pt);
			return DJC_EINVAL;
		}
		pt += n + (pt[n] == ',');
	}
	return DJC_OK;
}

/* u->redacted: postgresql://user:***@h1:p1,h2:p2/dbname?k=v, a socket
 * directory shown as [socket], extra the non-secret parameters. */
static void pg_url_redacted(db_url *u, const char *host, const char *port, const char *extra)
{
	sb_t r = SB_INIT;
	sb_add(&r, "postgresql://");
	if (u->user) url_add_userinfo(&r, u->user, u->password != NULL);
	const char *h = host ? host : "", *pt = port ? port : "";
	for (int i = 0; *h || *pt; i++) {
		size_t hn = strcspn(h, ","), pn = strcspn(pt, ",");
		if (i) sb_addc(&r, ',');
		if (memchr(h, '/', hn)) sb_add(&r, "[socket]");   /* a directory: not URL text */
		else sb_addn(&r, h, hn);
		if (pn) { sb_addc(&r, ':'); sb_addn(&r, pt, pn); }
		h += hn + (h[hn] == ',');
		pt += pn + (pt[pn] == ',');
	}
	if (u->dbname) sb_printf(&r, "/%s", u->dbname);
	sb_add(&r, extra);
	u->redacted = sb_steal(&r);
}

/* libpq's reason for refusing url, on one line, its password kept out. */
static int pg_url_refused(const char *url, char *msg, char *err, size_t errlen)
{
	char line[700];
	one_line(line, sizeof line, "", msg ? msg : "out of memory");
	char *pw = url_password(url);   /* as written: libpq could not parse the URL */
	redact(line, pw);
	free(pw);
	snprintf(err, errlen, "database URL: postgresql: %s", line);
	if (msg) PQfreemem(msg);
	return DJC_EINVAL;
}

static int pg_url_parse(db_url *u, const char *url, char *err, size_t errlen)
{
	if (pq_load(err, errlen)) return DJC_ECONN;
	sb_t clean = SB_INIT;
	pg_url_own_opts(u, url, &clean);
	char *msg = NULL;
	PQconninfoOption *opts = PQconninfoParse(sb_str(&clean), &msg);
	if (!opts) {
		sb_free(&clean);
		return pg_url_refused(url, msg, err, errlen);
	}
	const char *host = NULL, *hostaddr = NULL, *port = NULL;
	sb_t extra = SB_INIT;
	for (PQconninfoOption *o = opts; o->keyword; o++) {
		if (!o->val) continue;
		if (!strcmp(o->keyword, "user")) u->user = xstrdup(o->val);
		else if (!strcmp(o->keyword, "password")) u->password = xstrdup(o->val);
		else if (!strcmp(o->keyword, "host")) host = o->val;
		else if (!strcmp(o->keyword, "hostaddr")) hostaddr = o->val;
		else if (!strcmp(o->keyword, "port")) port = o->val;
		else if (!strcmp(o->keyword, "dbname")) u->dbname = xstrdup(o->val);
		else if (!strstr(o->keyword, "password") && !strchr(o->dispchar, '*'))   /* secrets never shown */
			sb_printf(&extra, "%s%s=%s", extra.len ? "&" : "?", o->keyword, o->val);
	}
	int rc = pg_ports_ok(port, err, errlen);
	if (!rc) {
		if (host || hostaddr) u->host = xstrdup(host ? host : hostaddr);
		if (port && strspn(port, "0123456789") == strlen(port) && *port) u->port = atoi(port);
		pg_url_redacted(u, host ? host : hostaddr, port, sb_str(&extra));
		u->conninfo = sb_steal(&clean);
	}
	sb_free(&extra);
	sb_free(&clean);
	PQconninfoFree(opts);
	return rc;
}

/* Keyword/value pairs for PQconnectdbParams: our defaults, then the URL's
 * query options, which replace a default of the same name. */
typedef struct kv { const char *k[64]; const char *v[64]; int n; } kv;

static void kv_set(kv *a, const char *k, const char *v)
{
	for (int i = 0; i < a->n; i++)
		if (!strcmp(a->k[i], k)) { a->v[i] = v; return; }
	if (a->n < 63) { a->k[a->n] = k; a->v[a->n] = v; a->n++; }
}

/* The keyword/value pairs libpq connects with (djc's defaults, then the
 * URL's), NULL-terminated in a, and whether the connection goes through a
 * transaction pooler (*pooled). DJC_EINVAL with a message for a bad
 * pooler= parameter. */
static int pg_params(kv *a, const db_url *u, int *pooled, char *err, size_t errlen)
{
	kv_set(a, "application_name", "djc");
	kv_set(a, "client_encoding", "UTF8");
	kv_set(a, "connect_timeout", "10");
	kv_set(a, "keepalives", "1");
	kv_set(a, "keepalives_idle", "10");
	kv_set(a, "keepalives_interval", "5");
	kv_set(a, "keepalives_count", "3");
	/* data unacknowledged for 10 s (a network cut) fails the statement
	 * instead of hanging for the kernel's ~15 minutes; a long query is
	 * unaffected (the server acknowledges the request at once) */
	kv_set(a, "tcp_user_timeout", "10000");
	/* GSSAPI encryption is off unless asked for (URL ?gssencmode=, or
	 * PGGSSENCMODE): libpq's default "prefer" looks for a Kerberos
	 * credential cache on every connection, which costs ~0.6 MiB per
	 * process and a file lookup; Kerberos authentication still works */
	if (!getenv("PGGSSENCMODE")) kv_set(a, "gssencmode", "disable");
	/* then the URL, expanded by libpq (expand_dbname): its parameters
	 * replace the defaults above; only this first dbname is expanded, so
	 * the URL's own database name stays a name */
	kv_set(a, "dbname", u->conninfo);
	/* a password from DJC_DATABASE_PASSWORD / djc.json when the URL has none */
	if (u->password) kv_set(a, "password", u->password);
	/* pooler=transaction (djc's own parameter, not libpq's): see the top */
	*pooled = (u->flags & DB_OPEN_POOLED) != 0;
	for (size_t i = 0; i < u->nopts; i++) {
		if (strcmp(u->opt_keys[i], "pooler")) continue;   /* other djc_* parameters are not libpq's */
		if (!strcmp(u->opt_vals[i], "transaction")) *pooled = 1;
		else if (!strcmp(u->opt_vals[i], "none")) *pooled = 0;
		else {
			snprintf(err, errlen, "database URL parameter pooler must be none or transaction, got '%s'", u->opt_vals[i]);
			return DJC_EINVAL;
		}
	}
	a->k[a->n] = NULL;
	a->v[a->n] = NULL;
	return DJC_OK;
}

static int pg_open(db_conn **out, const db_url *u, const char *schema, char *err, size_t errlen)
{
	*out = NULL;
	if (pq_load(err, errlen)) return DJC_ECONN;
	kv a = {{0}, {0}, 0};
	int pooled = 0;
	if (pg_params(&a, u, &pooled, err, errlen)) return DJC_EINVAL;
	pg_conn *c = xcalloc(1, sizeof *c);
	c->base.schema = xstrdup(schema && *schema ? schema : "public");
	c->base.qualify = 1;   /* "schema"."table" in every statement (db_qtable) */
	c->base.lock_wait = u->lock_wait;
	c->pooled = pooled;
	c->pipeline = pipe_ready();
	c->pg = PQconnectdbParams(a.k, a.v, 1);
	if (!c->pg || PQstatus(c->pg) != CONNECTION_OK) {
		char msg[900];
		one_line(msg, sizeof msg, "", c->pg ? PQerrorMessage(c->pg) : "out of memory");
		redact(msg, u->password);
		/* the form of every driver: where, then the server's words */
		snprintf(err, errlen, "cannot connect to %s: postgresql: %s", u->redacted, msg);
		pg_close(&c->base);
		return DJC_ECONN;
	}
	PQsetNoticeProcessor(c->pg, quiet, NULL);
	int no_create = u->flags & DB_OPEN_NO_CREATE;
	int rc = session_setup(c, !no_create);
	/* The session ended under the setup statements (DJC_ECONN), which
	 * change nothing a retry could make twice (SETs; a schema created is
	 * found there by the next look): new sessions are tried, after 0.1 s
	 * doubling to 1 s, for 16 s at most. pgbouncer does this after a
	 * server restart: while its last login to the server failed and it
	 * holds no server connection, it fails each new client's first
	 * statement ("server login has been failing, try again later
	 * (server_login_retry)") and logs in again only server_login_retry
	 * (15 s by default) after the last failure; every djc command run in
	 * that time failed once. Only when the connection itself was made: a
	 * server that refuses it or never answers fails at once, as before. */
	double t_end = mono_now() + 16, pause = 0.1;
	while (rc == DJC_ECONN && mono_now() + pause < t_end) {
		struct timespec ts = {(time_t)pause, (long)((pause - (double)(time_t)pause) * 1e9)};
		nanosleep(&ts, NULL);
		pause = pause * 2 > 1 ? 1 : pause * 2;
		c->ended = 0;
		cache_clear(c, 0);
		PQreset(c->pg);
		if (PQstatus(c->pg) != CONNECTION_OK) {
			set_conn_err(c, "connection lost, reconnect failed");
			break;
		}
		rc = session_setup(c, !no_create);
	}
	if (rc) {
		snprintf(err, errlen, "%s", c->base.err);
		redact(err, u->password);
		pg_close(&c->base);
		return rc;
	}
	if (no_create) {
		/* search_path accepts a schema that does not exist: look */
		const char *v[1] = {c->base.schema};
		PGresult *res = pq_exec_params(c, "SELECT 1 FROM pg_namespace WHERE nspname = $1", 1, NULL, v, NULL, NULL);
		int ok = PQresultStatus(res) == PGRES_TUPLES_OK, exists = ok && PQntuples(res) > 0;
		rc = ok ? DJC_OK : classify(c, res);
		PQclear(res);
		if (rc || !exists) {
			if (rc) snprintf(err, errlen, "%s", c->base.err);
			else snprintf(err, errlen, "no schema '%s' on %s (djc declare creates it)", c->base.schema, u->redacted);
			redact(err, u->password);
			pg_close(&c->base);
			return rc ? rc : DJC_ENOTFOUND;
		}
	}
	*out = &c->base;
	return DJC_OK;
}

/* Before a statement: notice a connection the server closed while we were
 * idle (restart, admin kill), and outside a transaction reconnect once.
 * Inside a transaction a lost connection is DJC_ECONN: the work is gone. */
static int ensure(pg_conn *c)
{
	if (PQstatus(c->pg) == CONNECTION_OK && !c->base.in_tx &&
	    PQtransactionStatus(c->pg) == PQTRANS_IDLE) {
		struct pollfd pf = {PQsocket(c->pg), POLLIN, 0};
		/* an idle socket with input: a goodbye message and/or EOF */
		for (int i = 0; i < 4 && pf.fd >= 0 && poll(&pf, 1, 0) > 0; i++)
			if (!PQconsumeInput(c->pg)) break;
	}
	if (PQstatus(c->pg) == CONNECTION_OK && !c->unset && !c->ended) return DJC_OK;
	if (c->base.in_tx) {
		set_conn_err(c, "connection lost inside a transaction");
		return DJC_ECONN;
	}
	if (PQstatus(c->pg) != CONNECTION_OK || c->ended) {
		c->ended = 0;
		c->stalled = 0;
		cache_clear(c, 0);
		PQreset(c->pg);
		if (PQstatus(c->pg) != CONNECTION_OK) {
			set_conn_err(c, "connection lost, reconnect failed");
			return DJC_ECONN;
		}
		pg_wait_bound_changed(&c->base);
	}
	/* until the new session is set up (UTC, search_path, LISTEN, its
	 * published id), no statement of ours runs on it: a setup that failed
	 * is tried again before the next statement */
	c->unset = 1;
	int rc = session_setup(c, 0);
	if (rc == DJC_OK) c->unset = 0;
	return rc == DJC_OK ? DJC_OK : DJC_ECONN;
}

/* Rewrite `?` placeholders to $1..$n, leaving alone any inside '...' (and
 * E'...' with backslash escapes), "..." identifiers, $tag$...$tag$ strings,
 * -- and nested block comments. Returns the number of placeholders. */
static int rewrite(sb_t *o, const char *s)
{
	int n = 0;
	const char *p = s;
	while (*p) {
		const char *start = p;
		if (*p == '\'') {
			int esc = p > s && (p[-1] == 'E' || p[-1] == 'e') &&
				  (p - 1 == s || !(isalnum((unsigned char)p[-2]) || p[-2] == '_' || p[-2] == '$'));
			for (p++; *p; p++) {
				if (esc && *p == '\\' && p[1]) { p++; continue; }
				if (*p == '\'') {
					if (p[1] == '\'') { p++; continue; }
					p++;
					break;
				}
			}
		} else if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {}
			if (*p) p++;   /* a doubled "" closes and reopens: same result */
		} else if (p[0] == '-' && p[1] == '-') {
			while (*p && *p != '\n') p++;
		} else if (p[0] == '/' && p[1] == '*') {
			int depth = 1;
			for (p += 2; *p && depth; ) {
				if (p[0] == '/' && p[1] == '*') { depth++; p += 2; }
				else if (p[0] == '*' && p[1] == '/') { depth--; p += 2; }
				else p++;
			}
		} else if (*p == '$' && !(p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '$')) &&
			   (p[1] == '$' || isalpha((unsigned char)p[1]) || p[1] == '_')) {
			/* a dollar quote $tag$ (not $1, not part of an identifier) */
			const char *q = p + 1;
			while (isalnum((unsigned char)*q) || *q == '_') q++;
			if (*q == '$') {
				size_t tl = (size_t)(q - p) + 1;
				const char *end;
				for (end = q + 1; *end; end++)
					if (*end == '$' && !strncmp(end, p, tl)) break;
				p = *end ? end + tl : end;
			} else
				p++;
		} else if (*p == '?') {
			sb_printf(o, "$%d", ++n);
			p++;
			continue;
		} else
			p++;
		sb_addn(o, start, (size_t)(p - start));
	}
	return n;
}

/* sql rewritten into q (rewrite) when it has np placeholders; else
 * DJC_ERROR, q freed. */
static int rewrite_for(pg_conn *c, sb_t *q, const char *sql, size_t np)
{
	int want = rewrite(q, sql);
	if ((size_t)want == np) return DJC_OK;
	snprintf(c->base.err, sizeof c->base.err, "postgresql: statement wants %d parameters, got %zu", want, np);
	sb_free(q);
	return DJC_ERROR;
}

/* The statement's first keyword (skipping blanks, comments and '('),
 * upper-cased into kw. */
static void first_word(const char *s, char *kw, size_t n)
{
	for (;;) {
		while (isspace((unsigned char)*s) || *s == '(') s++;
		if (s[0] == '-' && s[1] == '-') { while (*s && *s != '\n') s++; continue; }
		if (s[0] == '/' && s[1] == '*') {
			const char *e = strstr(s + 2, "*/");
			s = e ? e + 2 : s + strlen(s);
			continue;
		}
		break;
	}
	size_t k = 0;
	while (k + 1 < n && isalpha((unsigned char)s[k])) { kw[k] = (char)toupper((unsigned char)s[k]); k++; }
	kw[k] = 0;
}

/* Count an execution of the cached statement i: 0 when it is due to be
 * prepared afresh instead (*replan: when the new one is due). */
static int cache_run(pg_conn *c, int i, unsigned long *replan)
{
	pcached *e = &c->cache[i];
	e->used = ++c->tick;
	if (e->runs >= e->replan) {
		*replan = e->replan < ULONG_MAX / 2 ? 2 * e->replan : e->replan;
		return 0;
	}
	e->runs++;
	return 1;
}

/* A statement's parameters as libpq takes them (bind_init). */
typedef struct pg_bind {
	Oid *types;
	const char **vals;
	int *lens, *fmts;
	char (*num)[32];
	sb_t key;
} pg_bind;

/* Whether the rows of the statement res describes (PQdescribePrepared's
 * result, or the rows of its run) are worth reading in binary format: one
 * of its columns is bytea (whose text is hex, twice the value: the server
 * encodes it, libpq holds it twice, djc decodes it), and every column is
 * of a type whose binary form binary_val reads to the value the text form
 * gives. libpq's result format is one for all columns, so any other type
 * keeps the statement in text. */
static int binary_worth(const PGresult *res)
{
	int bytea = 0;
	for (int i = 0, n = PQnfields(res); i < n; i++) {
		switch (PQftype(res, i)) {
		case OID_BYTEA: bytea = 1; break;
		case OID_INT2: case OID_INT4: case OID_INT8: case OID_BOOL:
		case OID_TEXT: case OID_VARCHAR: case OID_BPCHAR: case OID_NAME: case OID_XID: case OID_TID: break;
		default: return 0;
		}
	}
	return bytea;
}

static uint64_t be_uint(const unsigned char *p, size_t n)
{
	uint64_t v = 0;
	for (size_t k = 0; k < n; k++) v = v << 8 | p[k];
	return v;
}

/* A cell in binary format (binary_worth's types) as the text path reads
 * it (materialise): integers and booleans as DJC_INT, an xid as its
 * decimal text, a tid as "(block,item)", text types and bytea as their
 * bytes. */
static val_t binary_val(Oid type, const char *t, size_t len)
{
	const unsigned char *p = (const unsigned char *)t;
	char num[16];
	val_t v;
	switch (type) {
	case OID_INT2: return val_int((int16_t)be_uint(p, len < 2 ? len : 2));
	case OID_INT4: return val_int((int32_t)be_uint(p, len < 4 ? len : 4));
	case OID_INT8: return val_int((int64_t)be_uint(p, len < 8 ? len : 8));
	case OID_BOOL: return val_int(len && p[0]);
	case OID_XID:
		snprintf(num, sizeof num, "%u", (unsigned)be_uint(p, len < 4 ? len : 4));
		return val_text(num);
	case OID_TID: {   /* a block (4 bytes) and an item (2), as "(block,item)" */
		char tid[32];
		snprintf(tid, sizeof tid, "(%u,%u)", len == 6 ? (unsigned)be_uint(p, 4) : 0u,
			 len == 6 ? (unsigned)be_uint(p + 4, 2) : 0u);
		return val_text(tid);
	}
	case OID_BYTEA:
		v = val_textn(t, len);
		v.t = DJC_BYTES;
		return v;
	default:   /* text, varchar, bpchar, name: the same bytes in either format */
		return val_textn(t, len);
	}
}

/* Prepare sql under name and learn the columns of its rows in the same
 * round trip (Parse, Describe and Sync as one pipeline), so that *binary
 * says from its first run whether its rows are read in binary
 * (binary_worth). Read in text, a 10 MiB bytea came as 20 MiB of hex,
 * into libpq's buffer (grown to 32 MiB) and its result, then decoded: a
 * worker's memory went 50 MiB above its start for a 10 MiB value, the
 * first time each statement ran. Without libpq 14's pipeline API: a
 * plain Prepare, *binary -1 (the first run, in text, tells). The
 * Prepare's result, or NULL when libpq refused or the connection failed
 * (PQerrorMessage says why). */
static PGresult *prepare_described(pg_conn *c, const char *name, const char *sql, int np, const Oid *types, int *binary)
{
	*binary = 0;
	if (!c->pipeline || !pipe_api.enter(c->pg)) {
		*binary = -1;
		return pq_prepare(c, name, sql, np, types);
	}
	PGresult *prep = NULL, *desc = NULL, *r;
	int synced = 0;
	/* per command its result and a NULL; then the Sync's */
	if (PQsendPrepare(c->pg, name, sql, np, types) && PQsendDescribePrepared(c->pg, name) && pipe_api.sync(c->pg) &&
	    (prep = pq_get(c))) {
		while ((r = pq_get(c))) PQclear(r);
		if ((desc = pq_get(c))) {
			while ((r = pq_get(c))) PQclear(r);
			r = pq_get(c);
			synced = r && PQresultStatus(r) == PGRES_PIPELINE_SYNC;
			PQclear(r);
		}
	}
	if (!pipe_api.exit(c->pg) || !synced) {
		PQclear(prep);
		PQclear(desc);
		return NULL;
	}
	if (is_ok(prep) && PQresultStatus(desc) == PGRES_COMMAND_OK) *binary = binary_worth(desc);
	PQclear(desc);
	return prep;
}

/* Run sql (np parameters bound as b says) as a prepared statement of
 * c's cache, found by key, preparing it first when it is not there or is
 * due to be prepared afresh (the least recently used one makes room). */
static PGresult *prepare_and_run(pg_conn *c, const char *key, const char *sql, int np, const pg_bind *b)
{
	const Oid *types = b->types;
	const char *const *vals = b->vals;
	const int *lens = b->lens, *fmts = b->fmts;
	int lru = 0;
	unsigned long replan = REPLAN_FIRST;
	for (int i = 0; i < STMT_CACHE; i++) {
		if (c->cache[i].key && !strcmp(c->cache[i].key, key)) {
			if (!cache_run(c, i, &replan)) {
				/* due: prepared afresh below, in its place; the old one
				 * is deallocated once the new one exists */
				lru = i;
				break;
			}
			PGresult *res = pq_exec_prepared(c, c->cache[i].name, np, vals, lens, fmts, c->cache[i].binary);
			if (is_ok(res)) return res;
			/* "cached plan must not change result type" after a table was
			 * recreated elsewhere, or the statement was deallocated behind
			 * our back: forget it; outside a transaction prepare afresh. */
			const char *st = PQresultErrorField(res, PG_DIAG_SQLSTATE);
			if (!st || (strcmp(st, "0A000") && strcmp(st, "26000"))) return res;
			free(c->cache[i].key);
			c->cache[i].key = NULL;
			c->cache[i].used = 0;
			if (PQtransactionStatus(c->pg) != PQTRANS_IDLE || c->base.in_tx) return res;
			if (!strcmp(st, "0A000")) {
				char dq[48];
				snprintf(dq, sizeof dq, "DEALLOCATE %s", c->cache[i].name);
				PQclear(pq_exec(c, dq));
			}
			PQclear(res);
			lru = i;
			break;
		}
		if (c->cache[i].used < c->cache[lru].used) lru = i;
	}
	char name[24];
	snprintf(name, sizeof name, "djc_%lu", ++c->seq);
	int binary;
	PGresult *res = prepare_described(c, name, sql, np, types, &binary);
	if (!is_ok(res)) return res;
	PQclear(res);
	/* evict only once the new statement exists (a failed prepare inside a
	 * transaction would leave the DEALLOCATE unable to run) */
	if (c->cache[lru].key) {
		char dq[48];
		snprintf(dq, sizeof dq, "DEALLOCATE %s", c->cache[lru].name);
		PQclear(pq_exec(c, dq));
		free(c->cache[lru].key);
	}
	c->cache[lru].key = xstrdup(key);
	memcpy(c->cache[lru].name, name, sizeof name);
	c->cache[lru].used = ++c->tick;
	c->cache[lru].runs = 1;
	c->cache[lru].replan = replan;
	c->cache[lru].binary = binary > 0;
	res = pq_exec_prepared(c, name, np, vals, lens, fmts, binary > 0);
	if (binary < 0 && PQresultStatus(res) == PGRES_TUPLES_OK) c->cache[lru].binary = binary_worth(res);
	return res;
}

/* A timestamp(p) value with all p fractional digits ("05.1" -> "05.100" for
 * p = 3; the server drops trailing zeros), like MySQL's DATETIME(p). Values
 * that are not plain 'YYYY-MM-DD HH:MM:SS[.f]' (infinity, BC) stay as is. */
static val_t timestamp_text(const char *t, size_t n, int prec)
{
	const char *colon = strrchr(t, ':');
	if (prec <= 0 || prec > 6 || n > 40 || !colon || !isdigit((unsigned char)colon[1]) || !isdigit((unsigned char)colon[2]))
		return val_textn(t, n);
	const char *f = colon + 3;
	size_t have = 0;
	if (*f == '.') {
		for (have = 0; isdigit((unsigned char)f[1 + have]); have++) {}
		if (f[1 + have]) return val_textn(t, n);
	} else if (*f)
		return val_textn(t, n);
	if (have >= (size_t)prec) return val_textn(t, n);
	char buf[64];
	snprintf(buf, sizeof buf, "%.*s%s%.*s", (int)n, t, have ? "" : ".", (int)((size_t)prec - have), "000000");
	return val_text(buf);
}

/* A bytea cell's text as a value. The server's hex format ("\\x" and two
 * digits a byte, bytea_output's default since PostgreSQL 9.0) is decoded
 * straight into the value: a 10 MiB array is one allocation and one pass,
 * not PQunescapeBytea's buffer copied again. Anything else (the escape
 * format) goes through PQunescapeBytea. HEX holds a digit's value + 1. */
static const unsigned char HEX[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static val_t bytea_val(const char *t, size_t len)
{
	val_t v = {0};
	v.t = DJC_BYTES;
	if (len >= 2 && t[0] == '\\' && t[1] == 'x' && len % 2 == 0) {
		const unsigned char *h = (const unsigned char *)t + 2;
		size_t n = (len - 2) / 2, k = 0;
		char *b = xmalloc(n + 1);
		for (; k < n; k++) {
			unsigned hi = HEX[h[2 * k]], lo = HEX[h[2 * k + 1]];
			if (!hi || !lo) break;
			b[k] = (char)((hi - 1) << 4 | (lo - 1));
		}
		if (k == n) {
			b[n] = '\0';
			v.s = b;
			v.n = n;
			return v;
		}
		free(b);
	}
	size_t n = 0;
	unsigned char *b = PQunescapeBytea((const unsigned char *)t, &n);
	v = val_textn(b ? (const char *)b : "", b ? n : 0);
	v.t = DJC_BYTES;
	PQfreemem(b);
	return v;
}

/* Fill a db_res from a successful result. Bytea cells come back as bytes,
 * integer and boolean cells as DJC_INT, timestamps with all their declared
 * fractional digits, everything else as the server's text (exact floats,
 * ISO dates, numeric digits). */
static db_res *materialise(const PGresult *res)
{
	db_res *r = xcalloc(1, sizeof *r);
	r->ncols = (size_t)PQnfields(res);
	r->nrows = (size_t)PQntuples(res);
	r->cols = xcalloc(r->ncols ? r->ncols : 1, sizeof(char *));
	Oid *types = xcalloc(r->ncols ? r->ncols : 1, sizeof(Oid));
	for (size_t i = 0; i < r->ncols; i++) {
		r->cols[i] = xstrdup(PQfname(res, (int)i));
		types[i] = PQftype(res, (int)i);
	}
	size_t ncells = r->nrows * r->ncols;
	r->cells = xcalloc(ncells ? ncells : 1, sizeof(val_t));
	for (size_t j = 0; j < r->nrows; j++) {
		val_t *row = r->cells + j * r->ncols;
		for (size_t i = 0; i < r->ncols; i++) {
			int rj = (int)j, ci = (int)i;
			if (PQgetisnull(res, rj, ci)) { row[i] = val_null(); continue; }
			const char *t = PQgetvalue(res, rj, ci);
			if (PQfformat(res, ci) == 1) {
				row[i] = binary_val(types[i], t, (size_t)PQgetlength(res, rj, ci));
				continue;
			}
			switch (types[i]) {
			case OID_BYTEA:
				row[i] = bytea_val(t, (size_t)PQgetlength(res, rj, ci));
				break;
			case OID_INT2: case OID_INT4: case OID_INT8:
				row[i] = val_int(strtoll(t, NULL, 10));
				break;
			case OID_BOOL:
				row[i] = val_int(*t == 't');
				break;
			case OID_TIMESTAMP:
				row[i] = timestamp_text(t, (size_t)PQgetlength(res, rj, ci), PQfmod(res, ci));
				break;
			default:
				row[i] = val_textn(t, (size_t)PQgetlength(res, rj, ci));
			}
		}
	}
	free(types);
	const char *aff = PQcmdTuples((PGresult *)res);
	r->affected = aff && *aff ? strtoll(aff, NULL, 10) : 0;
	return r;
}

/* Parameters as libpq takes them, typed so that the server coerces text to
 * the column's type; key: the types, the start of a prepared statement's
 * cache key. */
static void bind_init(pg_bind *b, const val_t *params, size_t np)
{
	b->types = xcalloc(np + 1, sizeof(Oid));
	b->vals = xcalloc(np + 1, sizeof(char *));
	b->lens = xcalloc(np + 1, sizeof(int));
	b->fmts = xcalloc(np + 1, sizeof(int));
	b->num = xcalloc(np + 1, 32);
	sb_t z = SB_INIT;
	b->key = z;
	for (size_t i = 0; i < np; i++) {
		const val_t *v = &params[i];
		switch (v->t) {
		case DJC_NULL: b->vals[i] = NULL; break;
		case DJC_INT:
			b->types[i] = OID_INT8;
			snprintf(b->num[i], 32, "%" PRId64, v->i);
			b->vals[i] = b->num[i];
			break;
		case DJC_UINT:
			b->types[i] = OID_NUMERIC;
			snprintf(b->num[i], 32, "%" PRIu64, v->u);
			b->vals[i] = b->num[i];
			break;
		case DJC_FLOAT:
			b->types[i] = OID_FLOAT8;
			if (isnan(v->f)) snprintf(b->num[i], 32, "NaN");
			else if (isinf(v->f)) snprintf(b->num[i], 32, "%s", v->f > 0 ? "Infinity" : "-Infinity");
			else snprintf(b->num[i], 32, "%.17g", v->f);
			b->vals[i] = b->num[i];
			break;
		case DJC_BOOL:
			b->types[i] = OID_BOOL;
			b->vals[i] = v->i ? "true" : "false";
			break;
		case DJC_BYTES:
			b->types[i] = OID_BYTEA;
			b->vals[i] = v->s ? v->s : "";
			b->lens[i] = (int)v->n;
			b->fmts[i] = 1;
			break;
		default:   /* text: type unknown, so the server reads it as the column's type */
			b->vals[i] = v->s ? v->s : "";
			break;
		}
		sb_printf(&b->key, "%u,", (unsigned)b->types[i]);
	}
}

static void bind_free(pg_bind *b)
{
	free(b->types); free(b->vals); free(b->lens); free(b->fmts); free(b->num);
	sb_free(&b->key);
}

static int pg_batch(db_conn *bc, const db_item *items, size_t n, db_res **res, size_t *failed);

/* A statement outside a transaction through a pooler, with the bound on
 * its lock wait: as a batch of one (pg_batch puts the bound first). */
static int exec_bounded(db_conn *bc, const char *sql, const val_t *params, size_t np, db_res **out)
{
	db_item it = {.sql = sql, .params = params, .np = np, .expect = -1};
	db_res *r = NULL;
	size_t failed = 0;
	int rc = pg_batch(bc, &it, 1, &r, &failed);
	if (out && !rc) *out = r;
	else db_res_free(r);
	return rc;
}

/* A batch through a pooler with the bound on its lock waits: no session
 * setting stays there, so set_config(..., true) goes first in the same
 * pipeline (one Sync: one transaction, one round trip), or in its
 * transaction where there is no pipeline. *failed and res as pg_batch's
 * for items. */
static int batch_bounded(db_conn *bc, const db_item *items, size_t n, db_res **res, size_t *failed)
{
	pg_conn *c = (pg_conn *)bc;
	char ms[32];
	snprintf(ms, sizeof ms, "%.0f", bc->lock_wait * 1000);
	val_t v = val_text(ms);
	db_item *all = xcalloc(n + 1, sizeof *all);
	all[0] = (db_item){.sql = "SELECT set_config('lock_timeout', ?, true)", .params = &v, .np = 1, .expect = -1};
	memcpy(all + 1, items, n * sizeof *items);
	db_res **r = xcalloc(n + 1, sizeof *r);
	size_t f = 0;
	c->bounding = 1;
	int rc = pg_batch(bc, all, n + 1, r, &f);
	c->bounding = 0;
	*failed = f > 0 ? f - 1 : 0;
	db_res_free(r[0]);
	for (size_t k = 0; k < n; k++) {
		if (res) res[k] = r[k + 1];
		else db_res_free(r[k + 1]);
	}
	free(r);
	free(all);
	val_free(&v);
	return rc;
}

static int pg_exec(db_conn *bc, const char *sql, const val_t *params, size_t np, db_res **out)
{
	pg_conn *c = (pg_conn *)bc;
	if (out) *out = NULL;
	if (c->pooled && !bc->in_tx && bc->lock_wait > 0) return exec_bounded(bc, sql, params, np, out);
	int rc = ensure(c);
	if (rc) return rc;
	sb_t q = SB_INIT;
	if ((rc = rewrite_for(c, &q, sql, np))) return rc;
	pg_bind b;
	bind_init(&b, params, np);
	Oid *types = b.types;
	const char **vals = b.vals;
	int *lens = b.lens, *fmts = b.fmts;
	sb_t key = b.key;
	char kw[16];
	first_word(q.s ? q.s : "", kw, sizeof kw);
	/* a prepared statement lives on one server connection: not through a pooler */
	int cacheable = !c->pooled && (!strcmp(kw, "SELECT") || !strcmp(kw, "INSERT") || !strcmp(kw, "UPDATE") ||
			!strcmp(kw, "DELETE") || !strcmp(kw, "WITH") || !strcmp(kw, "VALUES"));
	PGresult *res;
	if (cacheable) {
		sb_addc(&key, '\n');
		sb_add(&key, sb_str(&q));
		res = prepare_and_run(c, sb_str(&key), sb_str(&q), (int)np, &b);
	} else
		res = pq_exec_params(c, sb_str(&q), (int)np, types, vals, lens, fmts);
	b.key = key;
	bind_free(&b);
	sb_free(&q);
	if (!is_ok(res)) {
		rc = classify(c, res);
		PQclear(res);
		return rc;
	}
	/* DDL may change what cached statements return: start afresh */
	if (!strcmp(kw, "ALTER") || !strcmp(kw, "DROP")) cache_clear(c, 1);
	if (out) *out = materialise(res);
	PQclear(res);
	return DJC_OK;
}

/* db_driver.read_pieces. A value stored uncompressed is cut by substring
 * where it lies (the subquery's OFFSET 0 keeps its column a reference to
 * the stored value, so each piece reads only its own TOAST chunks). A
 * compressed one (its stored size below its length: the select read it,
 * unless it was written since) comes whole, in one row: a piece of it is
 * decompressed from the value's start (lz4 and pglz decompress a prefix),
 * and a copy made on the server to cut from cost it more than the
 * transfer (measured: bench/results-2026-12-06.md, seventh section).
 * Rows come one at a time (single-row mode) and in binary: libpq's
 * buffer and result hold one piece, raw, handed to each as libpq holds
 * it. Each piece carries its offset, so that no ORDER BY (a sort of the
 * whole value) is needed. */
static int pg_read_pieces(db_conn *bc, const db_pieces *req)
{
	pg_conn *c = (pg_conn *)bc;
	const char *col = req->col;
	size_t piece = req->piece;
	int rc = ensure(c);
	if (rc) return rc;
	sb_t sql = SB_INIT, q = SB_INIT;
	sb_printf(&sql, "SELECT CASE WHEN v.z THEN v.d ELSE substring(v.d FROM g FOR %zu) END, g, v.x FROM (SELECT ",
		  piece);
	pg_qi(&sql, col);
	sb_add(&sql, " AS d, xmin AS x, pg_column_size(");
	pg_qi(&sql, col);
	sb_add(&sql, ") < octet_length(");
	pg_qi(&sql, col);
	sb_add(&sql, ") AS z FROM ");
	db_qtable(bc, &sql, req->table);
	sb_printf(&sql, " WHERE ctid = ? OFFSET 0) v, generate_series(1, octet_length(v.d), "
		  "CASE WHEN v.z THEN octet_length(v.d) ELSE %zu END) g", piece);
	rc = rewrite_for(c, &q, sb_str(&sql), 1);
	sb_free(&sql);
	if (rc) return rc;
	pg_bind b;
	bind_init(&b, req->at, 1);
	int sent = PQsendQueryParams(c->pg, sb_str(&q), 1, b.types, b.vals, b.lens, b.fmts, 1);
	bind_free(&b);
	sb_free(&q);
	if (!sent) return classify(c, NULL);
	if (!PQsetSingleRowMode(c->pg)) {
		snprintf(c->base.err, sizeof c->base.err, "postgresql: libpq refused single-row mode for the pieces of %s", col);
		rc = DJC_ERROR;
	}
	PGresult *res;
	/* every result is read, also after a failure: the connection is
	 * ready for the next statement only then */
	while ((res = pq_get(c))) {
		ExecStatusType st = PQresultStatus(res);
		if (st == PGRES_SINGLE_TUPLE && !rc) {
			/* the piece as libpq holds it, not copied: each copies it */
			int ok = PQnfields(res) == 3 && PQfformat(res, 0) == 1 && PQftype(res, 1) == OID_INT4 &&
				 PQftype(res, 2) == OID_XID && !PQgetisnull(res, 0, 0) && !PQgetisnull(res, 0, 1);
			long at = ok ? (int32_t)be_uint((const unsigned char *)PQgetvalue(res, 0, 1), 4) : 0;
			if (at < 1) {
				snprintf(c->base.err, sizeof c->base.err, "postgresql: a piece of %s came not as asked", col);
				rc = DJC_ERROR;
			} else {
				val_t bytes = {0};
				bytes.t = DJC_BYTES;
				bytes.s = PQgetvalue(res, 0, 0);
				bytes.n = (size_t)PQgetlength(res, 0, 0);
				val_t version = binary_val(OID_XID, PQgetvalue(res, 0, 2), (size_t)PQgetlength(res, 0, 2));
				rc = req->each(req->ctx, (size_t)(at - 1), &bytes, &version);
				val_free(&version);
			}
		} else if (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK && !rc)
			rc = classify(c, res);
		PQclear(res);
	}
	return rc;
}

static int begin_as(db_conn *bc, const char *sql)
{
	pg_conn *c = (pg_conn *)bc;
	int rc = ensure(c);
	char q[128];
	/* through a pooler no session setting stays: the bound on a lock
	 * wait goes with each transaction, in the same round trip */
	if (c->pooled && bc->lock_wait > 0) {
		snprintf(q, sizeof q, "%s; SET LOCAL lock_timeout = %.0f", sql, bc->lock_wait * 1000);
		sql = q;
	}
	if (!rc) rc = simple(c, sql);
	if (!rc) bc->in_tx = 1;
	return rc;
}

static int pg_begin(db_conn *bc) { return begin_as(bc, "BEGIN"); }

static int pg_begin_snapshot(db_conn *bc) { return begin_as(bc, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); }

static int pg_commit(db_conn *bc)
{
	pg_conn *c = (pg_conn *)bc;
	if (PQstatus(c->pg) != CONNECTION_OK) {
		set_conn_err(c, "connection lost before COMMIT");
		bc->in_tx = 0;
		return DJC_ECONN;
	}
	PGresult *res = pq_exec(c, "COMMIT");
	int rc = DJC_OK;
	if (!is_ok(res))
		rc = classify(c, res);
	else if (!strcmp(PQcmdStatus(res), "ROLLBACK")) {
		/* COMMIT of a transaction a failed statement aborted rolls back */
		snprintf(c->base.err, sizeof c->base.err,
			 "postgresql: transaction was aborted by an earlier error and rolled back");
		rc = DJC_ERROR;
	}
	PQclear(res);
	/* success or failure, the server has ended the transaction */
	if (rc == DJC_OK || PQtransactionStatus(c->pg) != PQTRANS_INTRANS) bc->in_tx = 0;
	return rc;
}

static int pg_rollback(db_conn *bc)
{
	pg_conn *c = (pg_conn *)bc;
	bc->in_tx = 0;
	/* nothing open, or the connection is gone (and the transaction with it) */
	if (PQstatus(c->pg) != CONNECTION_OK) return DJC_OK;
	PGTransactionStatusType ts = PQtransactionStatus(c->pg);
	if (ts != PQTRANS_INTRANS && ts != PQTRANS_INERROR) return DJC_OK;
	int rc = simple(c, "ROLLBACK");
	return PQstatus(c->pg) != CONNECTION_OK ? DJC_OK : rc;
}

/* The claim as one statement, and its parameters (*p, a shallow copy:
 * caller frees the array only). SKIP LOCKED: concurrent claimers lock
 * disjoint rows and never wait; the outer UPDATE touches only rows this
 * statement has locked. The locked rows' ctids come from a materialized
 * CTE joined on ctid: the planner then reaches each row by a TID scan
 * whatever it believes about the table. The form `ctid = ANY(ARRAY(...))`
 * let it choose a sequential scan of the whole jobs table on every claim
 * while the table had no statistics yet (a fresh jobs table, until
 * autoanalyze: test_jobs_core "a claim reads the head"). */
static void claim_sql(db_conn *bc, const db_claim *cl, sb_t *q, val_t **p)
{
	sb_add(q, "WITH djc_claimed AS MATERIALIZED (SELECT ctid AS djc_ctid FROM ");
	db_qtable(bc, q, cl->table);
	sb_printf(q, " WHERE %s ORDER BY %s", cl->where, cl->order);
	if (cl->limit >= 0) sb_printf(q, " LIMIT %ld", cl->limit);
	sb_add(q, " FOR UPDATE SKIP LOCKED) UPDATE ");
	db_qtable(bc, q, cl->table);
	sb_printf(q, " SET %s FROM djc_claimed WHERE ", cl->set);
	db_qtable(bc, q, cl->table);
	sb_printf(q, ".ctid = djc_claimed.djc_ctid RETURNING %s", cl->key_cols);
	if (cl->extra) sb_printf(q, ", %s", cl->extra);
	/* the parameters in the order of their `?`: the condition's, then SET's */
	*p = xcalloc(cl->ns + cl->nw + 1, sizeof(val_t));
	if (cl->nw) memcpy(*p, cl->wparams, cl->nw * sizeof(val_t));
	if (cl->ns) memcpy(*p + cl->nw, cl->sparams, cl->ns * sizeof(val_t));
}

static int pg_claim(db_conn *bc, const db_claim *cl, db_res **out)
{
	sb_t q = SB_INIT;
	val_t *p = NULL;
	claim_sql(bc, cl, &q, &p);
	int rc = pg_exec(bc, sb_str(&q), p, cl->ns + cl->nw, out);
	free(p);
	sb_free(&q);
	return rc;
}

/* ----------------------------------------------------------- pipelines */

/* The cached prepared statement of key, or -1: none, or one due to be
 * prepared afresh (cache_run; *replan: when the new one is due). */
static int cache_find(pg_conn *c, const char *key, unsigned long *replan)
{
	*replan = REPLAN_FIRST;
	for (int i = 0; i < STMT_CACHE; i++)
		if (c->cache[i].key && !strcmp(c->cache[i].key, key)) return cache_run(c, i, replan) ? i : -1;
	return -1;
}

/* Remember a statement prepared under name, in the place of the one of the
 * same key (prepared afresh) or else of the least recently used; the one it
 * replaces is given back by DEALLOCATE (outside any pipeline: the caller's
 * business, later). */
static void cache_add(pg_conn *c, const char *key, const char *name, unsigned long replan, char evicted[24])
{
	int lru = 0;
	evicted[0] = 0;
	for (int i = 0; i < STMT_CACHE; i++) {
		if (c->cache[i].key && !strcmp(c->cache[i].key, key)) {
			lru = i;
			break;
		}
		if (c->cache[i].used < c->cache[lru].used) lru = i;
	}
	if (c->cache[lru].key) {
		memcpy(evicted, c->cache[lru].name, 24);
		free(c->cache[lru].key);
	}
	c->cache[lru].key = xstrdup(key);
	snprintf(c->cache[lru].name, sizeof c->cache[lru].name, "%s", name);
	c->cache[lru].used = ++c->tick;
	c->cache[lru].runs = 1;
	c->cache[lru].replan = replan;
	c->cache[lru].binary = 0;   /* pipelines read in text (pipe_send) */
}

static void cache_forget(pg_conn *c, const char *name)
{
	for (int i = 0; i < STMT_CACHE; i++)
		if (c->cache[i].key && !strcmp(c->cache[i].name, name)) {
			free(c->cache[i].key);
			c->cache[i].key = NULL;
			c->cache[i].used = 0;
		}
}

/* A batch as one pipeline: every item sent at once, then one Sync. With no
 * BEGIN, the statements up to the Sync are one implicit transaction: the
 * server commits it at the Sync, or rolls all of it back when one fails
 * (the rest are then skipped). So a job's commit (fence, rows, next claim)
 * costs one round trip and one commit. An item's `expect` becomes part of
 * its statement: WITH x AS (... RETURNING 1) SELECT 1 / (1 when it changed
 * exactly that many rows, else 0), so a fence that matched nothing fails
 * with division_by_zero inside the transaction and nothing is committed.
 * Statements are prepared (in the pipeline itself the first time) and
 * kept in the connection's cache, as pg_exec does; through a transaction
 * pooler they are unnamed ones (Parse, Bind, Execute per item, one Sync:
 * the pipeline is one transaction, so the pooler lends one server
 * connection for all of it). */
/* A batch's pipeline under way (pg_batch): per item its text, its
 * parameters, its result and its prepared statement. */
typedef struct pg_pipe {
	size_t n;
	sb_t *texts;
	pg_bind *binds;
	int *nps;
	PGresult **got;
	char (*names)[24];
	char **keys;
	int *fresh;              /* prepared in this pipeline */
	unsigned long *replan;
} pg_pipe;

static void pipe_alloc(pg_pipe *pp, size_t n)
{
	pp->n = n;
	pp->texts = xcalloc(n, sizeof *pp->texts);
	pp->binds = xcalloc(n, sizeof *pp->binds);
	pp->nps = xcalloc(n, sizeof *pp->nps);
	pp->got = xcalloc(n, sizeof *pp->got);
	pp->names = xcalloc(n, 24);
	pp->keys = xcalloc(n, sizeof *pp->keys);
	pp->fresh = xcalloc(n, sizeof *pp->fresh);
	pp->replan = xcalloc(n, sizeof *pp->replan);
}

static void pipe_free(pg_pipe *pp)
{
	for (size_t k = 0; k < pp->n; k++) {
		PQclear(pp->got[k]);
		sb_free(&pp->texts[k]);
		bind_free(&pp->binds[k]);
		free(pp->keys[k]);
	}
	free(pp->got);
	free(pp->names);
	free(pp->keys);
	free(pp->fresh);
	free(pp->replan);
	free(pp->texts);
	free(pp->binds);
	free(pp->nps);
}

/* Each item's text (a claim's statement, an `expect` made part of it) and
 * parameters into pp; DJC_ERROR with *failed for a parameter count that
 * does not match. */
static int pipe_texts(pg_conn *c, const db_item *items, pg_pipe *pp, size_t *failed)
{
	int rc = DJC_OK;
	for (size_t i = 0; i < pp->n && !rc; i++) {
		sb_t raw = SB_INIT;
		val_t *cp = NULL;
		const val_t *p = items[i].params;
		size_t np = items[i].np;
		if (items[i].claim) {
			claim_sql(&c->base, items[i].claim, &raw, &cp);
			p = cp;
			np = items[i].claim->ns + items[i].claim->nw;
		} else
			sb_add(&raw, items[i].sql);
		sb_t q = SB_INIT;
		if (items[i].expect >= 0) sb_add(&q, "WITH x AS (");
		int want = rewrite(&q, sb_str(&raw));
		if (items[i].expect >= 0)
			sb_printf(&q, " RETURNING 1) SELECT 1 / (CASE WHEN count(*) = %ld THEN 1 ELSE 0 END) FROM x", items[i].expect);
		if ((size_t)want != np) {
			snprintf(c->base.err, sizeof c->base.err, "postgresql: statement wants %d parameters, got %zu", want, np);
			rc = DJC_ERROR;
			*failed = i;
		}
		pp->texts[i] = q;
		bind_init(&pp->binds[i], p, np);
		pp->nps[i] = (int)np;
		free(cp);
		sb_free(&raw);
	}
	return rc;
}

/* Send every item (in pipeline mode): a cached statement by name, a new
 * one prepared in the pipeline first, through a pooler unnamed. 0 when
 * sending failed. */
static int pipe_send(pg_conn *c, pg_pipe *pp)
{
	int sent = 1;
	for (size_t i = 0; i < pp->n && sent; i++) {
		const pg_bind *b = &pp->binds[i];
		sb_t key = SB_INIT;
		sb_printf(&key, "%s\n%s", sb_str(&b->key), sb_str(&pp->texts[i]));
		pp->keys[i] = sb_steal(&key);
		if (c->pooled) {
			sent = PQsendQueryParams(c->pg, sb_str(&pp->texts[i]), pp->nps[i], b->types, b->vals, b->lens, b->fmts, 0);
			continue;
		}
		int slot = cache_find(c, pp->keys[i], &pp->replan[i]);
		if (slot >= 0)
			memcpy(pp->names[i], c->cache[slot].name, 24);
		else {
			snprintf(pp->names[i], 24, "djc_%lu", ++c->seq);
			pp->fresh[i] = 1;
			sent = PQsendPrepare(c->pg, pp->names[i], sb_str(&pp->texts[i]), pp->nps[i], b->types);
		}
		if (sent) sent = PQsendQueryPrepared(c->pg, pp->names[i], pp->nps[i], b->vals, b->lens, b->fmts, 0);
	}
	return sent && pipe_api.sync(c->pg);
}

/* The result of one item of a pipeline, up to the NULL that ends it (NULL
 * when nothing came: the connection went). Its rows may come one at a
 * time (PGRES_SINGLE_TUPLE), then a TUPLES_OK of none or an error: they
 * are put together into one TUPLES_OK result. libpq clears single-row
 * mode (pg_read_pieces sets it) when the next query is sent outside a
 * pipeline, or when a pipeline moves on to its next query, but not for
 * the first query of a pipeline (libpq 15 here; 17's source is the
 * same), which then comes a row at a time though nobody asked (a make
 * whose last read was a value in pieces, then its commit). Taken as a failed item, that failed a
 * commit the server had made (its fence came first): counted as lost,
 * and the next claim that went with it stayed reserved by nobody. */
static PGresult *item_result(pg_conn *c)
{
	PGresult *r = pq_get(c);
	if (!r || PQresultStatus(r) != PGRES_SINGLE_TUPLE) {
		for (PGresult *m; r && (m = pq_get(c));) PQclear(m);
		return r;
	}
	PGresult *all = PQcopyResult(r, PG_COPYRES_ATTRS);
	if (!all) { fputs("djc: out of memory\n", stderr); abort(); }
	while (r && PQresultStatus(r) == PGRES_SINGLE_TUPLE) {
		int row = PQntuples(all);
		for (int f = 0; f < PQnfields(r); f++) {
			int null = PQgetisnull(r, 0, f);
			if (!PQsetvalue(all, row, f, null ? NULL : PQgetvalue(r, 0, f), null ? -1 : PQgetlength(r, 0, f))) {
				fputs("djc: out of memory\n", stderr);
				abort();
			}
		}
		PQclear(r);
		r = pq_get(c);
	}
	if (!r) return all;   /* no last result: the connection went, and the Sync that does not come tells */
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {   /* an error after some rows: the error */
		PQclear(all);
		all = r;
	} else
		PQclear(r);
	for (PGresult *m; (m = pq_get(c));) PQclear(m);
	return all;
}

/* The results: per item the Prepare's (when sent) and the query's, each
 * followed by a NULL; then the Sync's. Leaves pipeline mode. 1 when the
 * Sync came back (the implicit transaction ended); *first_error: the
 * first item that failed, or -1. */
static int pipe_collect(pg_conn *c, pg_pipe *pp, int sent, int *first_error)
{
	*first_error = -1;
	size_t i = 0;
	char evicted[24];
	sb_t dealloc = SB_INIT;
	for (; sent && i < pp->n; i++) {
		PGresult *r;
		if (pp->fresh[i]) {
			if (!(r = pq_get(c))) break;
			if (PQresultStatus(r) == PGRES_COMMAND_OK) {
				cache_add(c, pp->keys[i], pp->names[i], pp->replan[i], evicted);
				if (*evicted) sb_printf(&dealloc, "DEALLOCATE %s;", evicted);
			}
			PQclear(r);
			while ((r = pq_get(c))) PQclear(r);
		}
		if (!(pp->got[i] = item_result(c))) break;
		ExecStatusType st = PQresultStatus(pp->got[i]);
		if (*first_error < 0 && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) *first_error = (int)i;
	}
	PGresult *syncr = sent && i == pp->n ? pq_get(c) : NULL;
	int synced = syncr && PQresultStatus(syncr) == PGRES_PIPELINE_SYNC;
	PQclear(syncr);
	pipe_api.exit(c->pg);
	if (dealloc.len && PQstatus(c->pg) == CONNECTION_OK) PQclear(pq_exec(c, sb_str(&dealloc)));
	sb_free(&dealloc);
	return synced;
}

/* The code of the batch whose item i failed (nothing was committed). */
static int pipe_failed(pg_conn *c, const db_item *items, const pg_pipe *pp, int i)
{
	PGresult *e = pp->got[i];
	const char *state = PQresultErrorField(e, PG_DIAG_SQLSTATE);
	if (items[i].expect >= 0 && state && !strcmp(state, "22012")) {
		snprintf(c->base.err, sizeof c->base.err, "batch item %d changed other than %ld rows", i, items[i].expect);
		return DB_EEXPECT;
	}
	if (!pp->fresh[i] && state && (!strcmp(state, "0A000") || !strcmp(state, "26000"))) {
		/* a cached statement gone or stale (a table recreated elsewhere):
		 * forget it; nothing was committed, so the batch can run again */
		cache_forget(c, pp->names[i]);
		classify(c, e);
		return DJC_EBUSY;
	}
	return classify(c, e);
}

static int pg_batch(db_conn *bc, const db_item *items, size_t n, db_res **res, size_t *failed)
{
	pg_conn *c = (pg_conn *)bc;
	*failed = 0;
	if (c->pooled && bc->lock_wait > 0 && !c->bounding && !bc->in_tx) return batch_bounded(bc, items, n, res, failed);
	if (!c->pipeline) return db_batch_each(bc, items, n, res, failed);
	int rc = ensure(c);
	if (rc) return rc;
	pg_pipe pp;
	pipe_alloc(&pp, n);
	if ((rc = pipe_texts(c, items, &pp, failed))) goto out;
	if (!pipe_api.enter(c->pg)) {
		rc = db_batch_each(bc, items, n, res, failed);
		goto out;
	}
	int first_error;
	int synced = pipe_collect(c, &pp, pipe_send(c, &pp), &first_error);
	if (!synced || PQstatus(c->pg) != CONNECTION_OK) {
		/* the connection went: the Sync (the COMMIT) may have been done */
		set_conn_err(c, "connection lost during a pipeline");
		/* an item the server itself failed (an error with its SQLSTATE)
		 * aborted the transaction: nothing was committed. One that
		 * failed only as libpq lost the connection (no SQLSTATE: the
		 * end read, or the wait bound giving up on a frozen server, which
		 * holds the whole pipeline, Sync and all, in its socket's buffer
		 * and runs it when it thaws) leaves the COMMIT's fate unknown,
		 * as when no item failed (it counted as failed before the COMMIT,
		 * and a worker said "not committed" of a make that did commit) */
		const char *st = first_error >= 0 ? PQresultErrorField(pp.got[first_error], PG_DIAG_SQLSTATE) : NULL;
		/* (a session ended by the server or a pooler, 08xxx and 57P0x,
		 * may have ended after the COMMIT: not known either) */
		int server_said = st && strncmp(st, "08", 2) && strncmp(st, "57P0", 4);
		*failed = server_said ? (size_t)first_error : n;
		if (c->stalled > 0) classify(c, NULL);
		rc = DJC_ECONN;
		goto out;
	}
	if (first_error >= 0) {
		*failed = (size_t)first_error;
		rc = pipe_failed(c, items, &pp, first_error);
		goto out;
	}
	for (size_t k = 0; res && k < n; k++) {
		res[k] = materialise(pp.got[k]);
		if (items[k].expect >= 0) res[k]->affected = items[k].expect;
	}
out:
	pipe_free(&pp);
	return rc;
}

static int64_t pg_connection_id(db_conn *bc) { return ((pg_conn *)bc)->pid; }
static int64_t pg_session_id(db_conn *bc) { return ((pg_conn *)bc)->own ? ((pg_conn *)bc)->pid : 0; }

/* LISTEN on this connection (again after every reconnect). A transaction
 * pooler hands each transaction to any server connection, so a LISTEN
 * would be heard by whoever borrows that one next: refused. */
static int pg_listen(db_conn *bc, const char *channel)
{
	pg_conn *c = (pg_conn *)bc;
	if (c->pooled) {
		snprintf(c->base.err, sizeof c->base.err, "postgresql: no LISTEN through a transaction pooler (pooler=transaction)");
		return DJC_EINVAL;
	}
	int rc = ensure(c);
	if (rc) return rc;
	sb_t q = SB_INIT;
	sb_add(&q, "LISTEN ");
	pg_qi(&q, channel);
	rc = simple(c, sb_str(&q));
	sb_free(&q);
	if (!rc) {
		free(c->channel);
		c->channel = xstrdup(channel);
	}
	return rc;
}

/* NOTIFY, as a function call with bound values: delivered when the
 * transaction commits (at once outside one). Works through a pooler too. */
static int pg_notify(db_conn *bc, const char *channel, const char *payload)
{
	val_t p[2] = {val_text(channel), val_text(payload ? payload : "")};
	int rc = pg_exec(bc, "SELECT pg_notify(?, ?)", p, 2, NULL);
	val_free(&p[0]);
	val_free(&p[1]);
	return rc;
}

/* A notification that arrived (reading what the socket holds, without
 * waiting): 1 and its payload, 0 when none, DJC_ECONN when the connection
 * is gone (the next statement reconnects). */
static int pg_notified(db_conn *bc, char **payload)
{
	pg_conn *c = (pg_conn *)bc;
	*payload = NULL;
	if (PQstatus(c->pg) != CONNECTION_OK || (!c->base.in_tx && !PQconsumeInput(c->pg))) {
		set_conn_err(c, "connection lost while waiting for notifications");
		return DJC_ECONN;
	}
	PGnotify *n = PQnotifies(c->pg);
	if (!n) return 0;
	*payload = xstrdup(n->extra ? n->extra : "");
	PQfreemem(n);
	return 1;
}

static int pg_socket(db_conn *bc) { return PQsocket(((pg_conn *)bc)->pg); }

static void pg_column_type(sb_t *b, const coldef *t)
{
	switch (t->t) {
	case T_INT8: case T_INT16: case T_UINT8: sb_add(b, "smallint"); break;
	case T_INT32: case T_UINT16: sb_add(b, "integer"); break;
	case T_INT64: case T_UINT32: sb_add(b, "bigint"); break;
	case T_UINT64: sb_add(b, "numeric(20,0)"); break;
	case T_FLOAT32: sb_add(b, "real"); break;
	case T_FLOAT64: sb_add(b, "double precision"); break;
	case T_BOOL: sb_add(b, "boolean"); break;
	case T_DECIMAL:
		if (t->p > 0) sb_printf(b, "numeric(%d,%d)", t->p, t->s);
		else sb_add(b, "numeric");
		break;
	case T_CHAR: sb_printf(b, "char(%d)", t->p > 0 ? t->p : 1); break;
	case T_VARCHAR:
		if (t->p > 0) sb_printf(b, "varchar(%d)", t->p);
		else sb_add(b, "varchar");
		break;
	case T_DATE: sb_add(b, "date"); break;
	case T_DATETIME: sb_printf(b, "timestamp(%d)", t->p < 0 ? 0 : t->p > 6 ? 6 : t->p); break;
	case T_UUID: sb_add(b, "uuid"); break;
	case T_JSON: sb_add(b, "json"); break;   /* json, not jsonb: the text verbatim */
	case T_BYTES: sb_add(b, "bytea"); break;
	case T_ENUM: case T_TEXT: default: sb_add(b, "text"); break;
	}
}

/* The type of an array of the values of column q of in, typed as
 * bind_init types each of them (text as the column's type, as the server
 * reads an untyped parameter compared with it); NULL when they are not of
 * one type or cannot be compared (json). */
static const char *pg_in_type(const db_in *in, size_t q)
{
	djc_type vt = in->vals[q].t;
	for (size_t r = 1; r < in->n; r++)
		if (in->vals[r * in->k + q].t != vt) return NULL;
	switch (vt) {
	case DJC_INT: return "int8";
	case DJC_UINT: return "numeric";
	case DJC_FLOAT: return "float8";
	case DJC_BOOL: return "bool";
	case DJC_BYTES: return "bytea";
	case DJC_TEXT: break;
	default: return NULL;
	}
	switch (in->types[q]->t) {
	case T_DECIMAL: return "numeric";
	case T_CHAR: return "bpchar";
	case T_VARCHAR: return "varchar";
	case T_DATE: return "date";
	case T_DATETIME: return "timestamp";
	case T_UUID: return "uuid";
	case T_JSON: return NULL;
	default: return "text";
	}
}

/* One value as an element of an array literal: "...", escaped. */
static void pg_array_elem(sb_t *b, const val_t *v)
{
	char num[40];
	const char *s = num;
	size_t n;
	switch (v->t) {
	case DJC_INT: snprintf(num, sizeof num, "%" PRId64, v->i); break;
	case DJC_UINT: snprintf(num, sizeof num, "%" PRIu64, v->u); break;
	case DJC_FLOAT: snprintf(num, sizeof num, "%.17g", v->f); break;
	case DJC_BOOL: snprintf(num, sizeof num, "%s", v->i ? "true" : "false"); break;
	case DJC_BYTES:
		sb_add(b, "\"\\\\x");
		for (size_t i = 0; i < v->n; i++) sb_printf(b, "%02x", (unsigned char)v->s[i]);
		sb_addc(b, '"');
		return;
	default: s = v->s ? v->s : ""; break;
	}
	n = s == num ? strlen(num) : v->n;
	sb_addc(b, '"');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\') sb_addc(b, '\\');
		sb_addc(b, s[i]);
	}
	sb_addc(b, '"');
}

/* in_rows (db.h): each column's values as one array parameter, typed as
 * their one-by-one parameters would be: "c = ANY(?::int8[])" (NOT IN:
 * "c <> ALL(...)"), or for several columns "(a, b) IN (SELECT * FROM
 * unnest(?::int8[], ?::text[]))". */
static int pg_in_rows(db_conn *bc, const db_in *in, sb_t *sql, val_t *out, size_t *nout)
{
	const char *ty[8];
	if (in->k > 8) return 0;
	for (size_t q = 0; q < in->k; q++)
		if (!(ty[q] = pg_in_type(in, q))) return 0;
	for (size_t q = 0; q < in->k; q++) {
		sb_t a = SB_INIT;
		sb_addc(&a, '{');
		for (size_t r = 0; r < in->n; r++) {
			if (r) sb_addc(&a, ',');
			pg_array_elem(&a, &in->vals[r * in->k + q]);
		}
		sb_addc(&a, '}');
		out[q] = val_textn(sb_str(&a), a.len);
		sb_free(&a);
	}
	*nout = in->k;
	if (in->k == 1) {
		sb_printf(sql, "%s %s(?::%s[])", in->cols[0], in->neg ? "<> ALL" : "= ANY", ty[0]);
		return 1;
	}
	sb_addc(sql, '(');
	for (size_t q = 0; q < in->k; q++) sb_printf(sql, "%s%s", q ? ", " : "", in->cols[q]);
	sb_printf(sql, ") %sIN (SELECT * FROM unnest(", in->neg ? "NOT " : "");
	for (size_t q = 0; q < in->k; q++) sb_printf(sql, "%s?::%s[]", q ? ", " : "", ty[q]);
	sb_add(sql, "))");
	return 1;
}

/* now() is the transaction's start, like CURRENT_TIMESTAMP elsewhere. */
static void pg_now(sb_t *b) { sb_add(b, "(now() AT TIME ZONE 'UTC')::timestamp(3)"); }
static void pg_now_plus(sb_t *b)
{
	sb_add(b, "((now() AT TIME ZONE 'UTC') + make_interval(secs => ?))::timestamp(3)");
}

/* Schema changes (db.h, ddl_dialect): a transaction-scoped advisory lock
 * keyed by the schema serialises them (released by COMMIT or ROLLBACK, so
 * a transaction pooler in front of the server is no problem), with a
 * bounded wait. */
static const ddl_dialect pg_ddl = {
	.driver = "postgresql",
	.transactional = 1,
	/* -- name: SchemaLock: the wait is bounded; a lock not had in
	 * time is 55P03 (DJC_EBUSY), and so is a DROP TABLE that waits
	 * too long for a running transaction on the table */
	.lock_setup = "SET LOCAL lock_timeout = '120s'",
	.lock = "SELECT pg_advisory_xact_lock(6580835, hashtext(?))",
	.columns = "SELECT column_name FROM information_schema.columns WHERE table_schema = ? "
		   "AND table_name = ? ORDER BY ordinal_position",
	.by_schema = 1,
	.drop_many = 0,
	.alter_combined = 0,
	.retype_head = "ALTER COLUMN ",
	.retype_mid = " TYPE ",
	.backslash_escapes = 0,
	.max_name = 63,   /* NAMEDATALEN - 1: a longer name is cut, silently */
};

static const db_catalog_sql pg_catalog_q;   /* at the end of this file */

const db_driver db_postgres_driver = {
	.version = DB_DRIVER_VERSION,
	.name = "postgresql",
	.open = pg_open,
	.url_parse = pg_url_parse,
	.close = pg_close,
	.exec = pg_exec,
	.begin = pg_begin,
	.commit = pg_commit,
	.rollback = pg_rollback,
	.claim = pg_claim,
	.connection_id = pg_connection_id,
	.session_id = pg_session_id,
	.batch = pg_batch,
	.quote_ident = pg_qi,
	.column_type = pg_column_type,
	.in_rows = pg_in_rows,
	.now = pg_now,
	.now_plus = pg_now_plus,
	.partial_index = 1,
	.analyze_head = "ANALYZE ",
	.session_sql = "SELECT 1 FROM pg_stat_activity WHERE pid = ?",
	.session_end_sql = "SELECT pg_terminate_backend(CAST(? AS integer))",
	.insert_ignore_head = "INSERT INTO",
	.insert_ignore_tail = " ON CONFLICT DO NOTHING",
	.ddl = &pg_ddl,
	.table_suffix = "",
	.catalog = &pg_catalog_q,
	.drop_created = pg_drop_created,
	/* a system column: no user column may take the name */
	.row_version = "xmin",
	.enum_like_cast = "text",   /* an adopted enum is "s"."enum_<hash>": no LIKE */
	.bool_agg_cast = "integer",   /* boolean has no sum, avg, min, max */
	.read_piece = 1 << 20,
	.read_pieces = pg_read_pieces,
	.stored_size = "pg_column_size",
	/* system columns too: no user column may take these names */
	.row_id = "ctid",
	.begin_snapshot = pg_begin_snapshot,
	.index_count_sql = "SELECT count(*) FROM pg_indexes WHERE schemaname = ? AND tablename = ? AND indexname IN (?, ?)",
	.listen = pg_listen,
	.notify = pg_notify,
	.notified = pg_notified,
	.socket = pg_socket,
	.wait_bound_changed = pg_wait_bound_changed,
};

/* ------------------------------------------------------------ catalog
 * The catalog of a DataJoint schema (catalog.h, `djc adopt`): pg_catalog,
 * the schema bound. An enum column's type is "schema"."type" with its
 * labels from pg_enum; a collation only when it is not the type's.
 * Foreign keys in the order they were made (constraint oid). */
static const db_catalog_sql pg_catalog_q = {
	.exists = "SELECT 1 FROM pg_namespace WHERE nspname = ?",
	.tables = "SELECT c.relname, obj_description(c.oid, 'pg_class') FROM pg_class c "
		  "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND c.relkind IN ('r', 'p') "
		  "ORDER BY c.relname",
	.columns = "SELECT c.relname, a.attname, CASE WHEN t.typtype = 'e' THEN "
		   "'\"' || replace(tn.nspname, '\"', '\"\"') || '\".\"' || replace(t.typname, '\"', '\"\"') || '\"' "
		   "ELSE format_type(a.atttypid, a.atttypmod) END, col_description(c.oid, a.attnum), "
		   "CASE WHEN a.attnotnull THEN 0 ELSE 1 END, pg_get_expr(d.adbin, d.adrelid), "
		   "CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation THEN co.collname END, "
		   "(SELECT string_agg(e.enumlabel, chr(31) ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid), 0 "
		   "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
		   "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
		   "JOIN pg_type t ON t.oid = a.atttypid JOIN pg_namespace tn ON tn.oid = t.typnamespace "
		   "LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum "
		   "LEFT JOIN pg_collation co ON co.oid = a.attcollation "
		   "WHERE n.nspname = ? AND c.relkind IN ('r', 'p') ORDER BY c.relname, a.attnum",
	.pk = "SELECT c.relname, a.attname FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid "
	      "JOIN pg_namespace n ON n.oid = c.relnamespace CROSS JOIN LATERAL unnest(k.conkey) WITH ORDINALITY u(attnum, ord) "
	      "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = u.attnum "
	      "WHERE n.nspname = ? AND k.contype = 'p' ORDER BY c.relname, u.ord",
	.fks = "SELECT c.relname, k.conname, a.attname, rn.nspname, rc.relname, ra.attname FROM pg_constraint k "
	       "JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
	       "JOIN pg_class rc ON rc.oid = k.confrelid JOIN pg_namespace rn ON rn.oid = rc.relnamespace "
	       "CROSS JOIN LATERAL unnest(k.conkey, k.confkey) WITH ORDINALITY u(a1, a2, ord) "
	       "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = u.a1 "
	       "JOIN pg_attribute ra ON ra.attrelid = rc.oid AND ra.attnum = u.a2 "
	       "WHERE n.nspname = ? AND k.contype = 'f' ORDER BY c.relname, k.oid, u.ord",
};
