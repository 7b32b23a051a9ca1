/* mysql.c - the MariaDB/MySQL driver (MariaDB Connector/C). Every statement
 * runs as a server-side prepared statement with bound parameters (values
 * never enter SQL text), kept in a small LRU cache keyed by SQL text. The
 * session is strict (sql_mode), UTC, READ COMMITTED, waits at most
 * LOCK_WAIT_S for a row lock, utf8mb4 with a binary
 * NO PAD collation so text keys compare byte for byte as on the other
 * backends (db_mysql_collation), and
 * CLIENT_FOUND_ROWS so `affected` counts matched rows. A claim is SELECT ...
 * FOR UPDATE SKIP LOCKED then UPDATE of the keys it got, in one transaction
 * (MariaDB has no UPDATE ... RETURNING). A connection lost between
 * transactions (server restart, wait_timeout) is re-established once on the
 * next statement; inside a transaction the loss is reported as DJC_ECONN. */
#include "db.h"
#include "catalog.h"
#include "djc.h"
#include "util/clock.h"
#include "util/piecepool.h"
#include <mysql.h>
#include <errmsg.h>
#include <mysqld_error.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "dl.h"
#define XXH_INLINE_ALL   /* libxxhash compiled in from its header: nothing to link */
#include <xxhash.h>

/* The library is loaded on first connect (dl.c); every call goes through
 * this table. */
static struct {
	__typeof__(mysql_affected_rows) *mysql_affected_rows;
	__typeof__(mysql_close) *mysql_close;
	__typeof__(mysql_errno) *mysql_errno;
	__typeof__(mysql_error) *mysql_error;
	__typeof__(mysql_fetch_fields) *mysql_fetch_fields;
	__typeof__(mysql_fetch_lengths) *mysql_fetch_lengths;
	__typeof__(mysql_fetch_row) *mysql_fetch_row;
	__typeof__(mysql_field_count) *mysql_field_count;
	__typeof__(mysql_free_result) *mysql_free_result;
	__typeof__(mysql_get_server_info) *mysql_get_server_info;
	__typeof__(mysql_get_socket) *mysql_get_socket;
	__typeof__(mysql_get_ssl_cipher) *mysql_get_ssl_cipher;
	__typeof__(mysql_init) *mysql_init;
	__typeof__(mysql_server_init) *mysql_library_init;
	__typeof__(mysql_more_results) *mysql_more_results;
	__typeof__(mysql_next_result) *mysql_next_result;
	__typeof__(mysql_num_fields) *mysql_num_fields;
	__typeof__(mysql_num_rows) *mysql_num_rows;
	__typeof__(mysql_optionsv) *mysql_optionsv;
	__typeof__(mysql_ping) *mysql_ping;
	__typeof__(mysql_real_connect) *mysql_real_connect;
	__typeof__(mysql_real_query) *mysql_real_query;
	__typeof__(mysql_select_db) *mysql_select_db;
	__typeof__(mysql_stmt_affected_rows) *mysql_stmt_affected_rows;
	__typeof__(mysql_stmt_bind_param) *mysql_stmt_bind_param;
	__typeof__(mysql_stmt_bind_result) *mysql_stmt_bind_result;
	__typeof__(mysql_stmt_close) *mysql_stmt_close;
	__typeof__(mysql_stmt_errno) *mysql_stmt_errno;
	__typeof__(mysql_stmt_error) *mysql_stmt_error;
	__typeof__(mysql_stmt_execute) *mysql_stmt_execute;
	__typeof__(mysql_stmt_fetch) *mysql_stmt_fetch;
	__typeof__(mysql_stmt_fetch_column) *mysql_stmt_fetch_column;
	__typeof__(mysql_stmt_field_count) *mysql_stmt_field_count;
	__typeof__(mysql_stmt_free_result) *mysql_stmt_free_result;
	__typeof__(mysql_stmt_init) *mysql_stmt_init;
	__typeof__(mysql_stmt_more_results) *mysql_stmt_more_results;
	__typeof__(mysql_stmt_next_result) *mysql_stmt_next_result;
	__typeof__(mysql_stmt_param_count) *mysql_stmt_param_count;
	__typeof__(mysql_stmt_prepare) *mysql_stmt_prepare;
	__typeof__(mysql_stmt_result_metadata) *mysql_stmt_result_metadata;
	__typeof__(mysql_store_result) *mysql_store_result;
	__typeof__(mysql_thread_id) *mysql_thread_id;
} my_api;
static const char *const my_api_names[] = {
	"mysql_affected_rows",
	"mysql_close",
	"mysql_errno",
	"mysql_error",
	"mysql_fetch_fields",
	"mysql_fetch_lengths",
	"mysql_fetch_row",
	"mysql_field_count",
	"mysql_free_result",
	"mysql_get_server_info",
	"mysql_get_socket",
	"mysql_get_ssl_cipher",
	"mysql_init",
	"mysql_server_init",
	"mysql_more_results",
	"mysql_next_result",
	"mysql_num_fields",
	"mysql_num_rows",
	"mysql_optionsv",
	"mysql_ping",
	"mysql_real_connect",
	"mysql_real_query",
	"mysql_select_db",
	"mysql_stmt_affected_rows",
	"mysql_stmt_bind_param",
	"mysql_stmt_bind_result",
	"mysql_stmt_close",
	"mysql_stmt_errno",
	"mysql_stmt_error",
	"mysql_stmt_execute",
	"mysql_stmt_fetch",
	"mysql_stmt_fetch_column",
	"mysql_stmt_field_count",
	"mysql_stmt_free_result",
	"mysql_stmt_init",
	"mysql_stmt_more_results",
	"mysql_stmt_next_result",
	"mysql_stmt_param_count",
	"mysql_stmt_prepare",
	"mysql_stmt_result_metadata",
	"mysql_store_result",
	"mysql_thread_id",
};
static const char *const my_api_sonames[] = {"libmariadb.so.3", "libmariadb.so", NULL};
static dl_lib my_lib = {0, "MariaDB/MySQL", my_api_sonames, my_api_names, (void **)&my_api,
			sizeof my_api_names / sizeof *my_api_names};
static int my_api_load(char *err, size_t errlen)
{
	return dl_load(&my_lib, err, errlen);
}
#define mysql_affected_rows (*my_api.mysql_affected_rows)
#define mysql_close (*my_api.mysql_close)
#define mysql_errno (*my_api.mysql_errno)
#define mysql_error (*my_api.mysql_error)
#define mysql_fetch_fields (*my_api.mysql_fetch_fields)
#define mysql_fetch_lengths (*my_api.mysql_fetch_lengths)
#define mysql_fetch_row (*my_api.mysql_fetch_row)
#define mysql_field_count (*my_api.mysql_field_count)
#define mysql_free_result (*my_api.mysql_free_result)
#define mysql_get_server_info (*my_api.mysql_get_server_info)
#define mysql_get_socket (*my_api.mysql_get_socket)
#define mysql_get_ssl_cipher (*my_api.mysql_get_ssl_cipher)
#define mysql_init (*my_api.mysql_init)
#undef mysql_library_init
#define mysql_library_init (*my_api.mysql_server_init)
#define mysql_more_results (*my_api.mysql_more_results)
#define mysql_next_result (*my_api.mysql_next_result)
#define mysql_num_fields (*my_api.mysql_num_fields)
#define mysql_num_rows (*my_api.mysql_num_rows)
#define mysql_optionsv (*my_api.mysql_optionsv)
#define mysql_ping (*my_api.mysql_ping)
#define mysql_real_connect (*my_api.mysql_real_connect)
#define mysql_real_query (*my_api.mysql_real_query)
#define mysql_select_db (*my_api.mysql_select_db)
#define mysql_stmt_affected_rows (*my_api.mysql_stmt_affected_rows)
#define mysql_stmt_bind_param (*my_api.mysql_stmt_bind_param)
#define mysql_stmt_bind_result (*my_api.mysql_stmt_bind_result)
#define mysql_stmt_close (*my_api.mysql_stmt_close)
#define mysql_stmt_errno (*my_api.mysql_stmt_errno)
#define mysql_stmt_error (*my_api.mysql_stmt_error)
#define mysql_stmt_execute (*my_api.mysql_stmt_execute)
#define mysql_stmt_fetch (*my_api.mysql_stmt_fetch)
#define mysql_stmt_fetch_column (*my_api.mysql_stmt_fetch_column)
#define mysql_stmt_field_count (*my_api.mysql_stmt_field_count)
#define mysql_stmt_free_result (*my_api.mysql_stmt_free_result)
#define mysql_stmt_init (*my_api.mysql_stmt_init)
#define mysql_stmt_more_results (*my_api.mysql_stmt_more_results)
#define mysql_stmt_next_result (*my_api.mysql_stmt_next_result)
#define mysql_stmt_param_count (*my_api.mysql_stmt_param_count)
#define mysql_stmt_prepare (*my_api.mysql_stmt_prepare)
#define mysql_stmt_result_metadata (*my_api.mysql_stmt_result_metadata)
#define mysql_store_result (*my_api.mysql_store_result)
#define mysql_thread_id (*my_api.mysql_thread_id)


#define STMT_CACHE 64
#define FETCH_BUF 256          /* first buffer per text/blob column; longer cells are fetched apart */
#define DIGEST_PIECE 65536     /* a digested cell (db.h, exec_digest) is hashed this many bytes at a time */
#define CLAIM_BATCH 500        /* keys per UPDATE of a claim */
/* How long a statement of djc waits for a row lock before it fails as
 * DJC_EBUSY (innodb_lock_wait_timeout, per session; the server's default
 * is 50 s). The caller rolls back and retries after a backoff (a commit:
 * populate/reserved.c; a renewal: the next period, lease/4). A bound on
 * any wait that keeps a heartbeat from renewing: its renewal waits for the
 * row locks of its jobs, and for the worker's statement ahead of it on the
 * shared connection (db.c, conn_lock). At 1,000 workers a refresh's stale
 * DELETE held the rows of live jobs it had waited for to the end of its
 * scan, about 70 s, and leases (60 s) lapsed under running makes; refresh
 * marks with an UPDATE now (statements.c, refresh.stale.mark), and this
 * bound stays for whatever else holds a row (docs/jobs.md). Five seconds
 * is well within a renewal period of the default lease, and still a
 * hundred times longer than any lock djc holds for its own statements. */
#define LOCK_WAIT_S 5

#define SESSION_SQL_MODE "STRICT_ALL_TABLES,NO_ZERO_DATE,NO_ZERO_IN_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

typedef struct cached { char *sql; MYSQL_STMT *st; unsigned long used; } cached;

/* The position in claim order (the order's columns, then the key's) of the
 * last job a connection claimed from a table with a condition, and when it
 * last read the queue from its head (my_claim). */
#define CLAIM_POS 4
#define CLAIM_POS_AGE 1.0      /* seconds a position is used before the claim reads the head again */
typedef struct claim_pos {
	char *table, *where;   /* the claim's table and condition */
	val_t *w;              /* the condition's parameters (nw) */
	size_t nw;
	val_t *v;              /* the position (n values) */
	size_t n;
	double head;           /* when a claim last read from the head (mono) */
} claim_pos;

typedef struct my_conn {
	db_conn base;
	MYSQL *db;              /* NULL after a failed reconnect */
	int broken;             /* the connection was lost: reconnect before the next statement */
	unsigned long thread_id;
	cached cache[STMT_CACHE];
	unsigned long tick;
	/* what (re)connecting needs, copied from the URL */
	char *host, *user, *password, *socket, *redacted;
	unsigned port, timeout;
	int ssl_enforce, ssl_verify;
	char collation[32];     /* binary NO PAD collation of this server (db_mysql_collation) */
	int compound;           /* batches run as one compound statement (my_batch) */
	int json_table;         /* the server has JSON_TABLE (MariaDB 10.6+, MySQL 8.0.4+): my_in_rows */
	char suffix[96];        /* after CREATE TABLE (...) */
	char *ssl_ca, *ssl_capath, *ssl_cert, *ssl_key, *ssl_cipher, *ssl_crl, *ssl_crlpath;
	claim_pos pos[CLAIM_POS];   /* where this connection's last claims were (my_claim) */
	unsigned pos_next;          /* the entry replaced next */
} my_conn;

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static void lib_init(void) { mysql_library_init(0, NULL, NULL); }

static int is_conn_error(unsigned e)
{
	switch (e) {
	case CR_CONNECTION_ERROR: case CR_CONN_HOST_ERROR: case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST: case 2055 /* CR_SERVER_LOST_EXTENDED */:
	case 1927 /* ER_CONNECTION_KILLED */: case ER_SERVER_SHUTDOWN:
	case 4031 /* ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8) */:
		return 1;
	default:
		return 0;
	}
}

static int classify_code(unsigned e)
{
	switch (e) {
	case ER_DUP_ENTRY: return DJC_EDUPLICATE;
	case ER_ROW_IS_REFERENCED_2: case ER_NO_REFERENCED_ROW_2:
	case ER_NO_REFERENCED_ROW: case ER_ROW_IS_REFERENCED: return DJC_EFOREIGN;
	case ER_LOCK_DEADLOCK: case ER_LOCK_WAIT_TIMEOUT: return DJC_EBUSY;
	case ER_WARN_DATA_OUT_OF_RANGE: case ER_TRUNCATED_WRONG_VALUE_FOR_FIELD:
	case ER_DATA_TOO_LONG: case ER_BAD_NULL_ERROR: case ER_TRUNCATED_WRONG_VALUE:
	case ER_NO_DEFAULT_FOR_FIELD:
	case 3140 /* ER_INVALID_JSON_TEXT (MySQL) */: case 4025 /* ER_CONSTRAINT_FAILED */:
	case WARN_DATA_TRUNCATED:
		return DJC_EINVAL;
	case ER_DBACCESS_DENIED_ERROR: case ER_TABLEACCESS_DENIED_ERROR: case ER_COLUMNACCESS_DENIED_ERROR:
		return DB_EACCESS;
	default:
		return is_conn_error(e) ? DJC_ECONN : DJC_ERROR;
	}
}

/* Record a server/client error: "mysql: <message>" on one line in c->err;
 * marks the connection lost for connection errors. Returns the class. */
static int fail(my_conn *c, unsigned e, const char *msg)
{
	snprintf(c->base.err, sizeof c->base.err, "mysql: %s", msg && *msg ? msg : "unknown error");
	for (char *p = c->base.err; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
	if (is_conn_error(e)) c->broken = 1;
	/* the same error for a metadata lock's wait (lock_wait_timeout, the
	 * bound) and a row lock's (innodb_lock_wait_timeout, LOCK_WAIT_S,
	 * retried): the bound is the one that waited as long as it says */
	if (e == ER_LOCK_WAIT_TIMEOUT && db_lock_bound_reached(&c->base))
		return db_locked(&c->base, "mysql", "lock_wait_timeout");
	/* "Duplicate entry 'x' for key 'PRIMARY'" (MySQL 8: 'tbl.PRIMARY'),
	 * otherwise the unique index's name; only the end of the message is
	 * looked at, as the value itself may hold anything */
	if (e == ER_DUP_ENTRY) {
		size_t n = msg ? strlen(msg) : 0;
		int pk = (n >= 18 && !strcmp(msg + n - 18, " for key 'PRIMARY'")) ||
			 (n >= 9 && !strcmp(msg + n - 9, ".PRIMARY'"));
		return pk ? DJC_EDUPLICATE : DB_EUNIQUE;
	}
	return classify_code(e);
}

static int fail_db(my_conn *c) { return fail(c, mysql_errno(c->db), mysql_error(c->db)); }
/* A statement's error; some (a deadlock found while fetching rows) are only
 * recorded on the connection. */
static int fail_st(my_conn *c, MYSQL_STMT *st)
{
	if (!mysql_stmt_errno(st) && mysql_errno(c->db)) return fail_db(c);
	return fail(c, mysql_stmt_errno(st), mysql_stmt_error(st));
}

static void drop_cache(my_conn *c)
{
	for (int i = 0; i < STMT_CACHE; i++) {
		if (c->cache[i].st) mysql_stmt_close(c->cache[i].st);
		free(c->cache[i].sql);
		c->cache[i].st = NULL;
		c->cache[i].sql = NULL;
		c->cache[i].used = 0;
	}
}

/* Statements are closed before their connection: mysql_stmt_close on a
 * dead connection only frees memory. */
static void close_db(my_conn *c)
{
	drop_cache(c);
	if (c->db) mysql_close(c->db);
	c->db = NULL;
}

static void pos_clear(claim_pos *p)
{
	free(p->table);
	free(p->where);
	for (size_t i = 0; i < p->nw; i++) val_free(&p->w[i]);
	free(p->w);
	for (size_t i = 0; i < p->n; i++) val_free(&p->v[i]);
	free(p->v);
	memset(p, 0, sizeof *p);
}

static void my_close(db_conn *bc)
{
	my_conn *c = (my_conn *)bc;
	if (!c) return;
	close_db(c);
	for (int i = 0; i < CLAIM_POS; i++) pos_clear(&c->pos[i]);
	free(c->host); free(c->user); free(c->password); free(c->socket); free(c->redacted);
	free(c->ssl_ca); free(c->ssl_capath); free(c->ssl_cert); free(c->ssl_key);
	free(c->ssl_cipher); free(c->ssl_crl); free(c->ssl_crlpath);
	free(c->base.schema);
	free(c);
}

/* Run SQL without parameters through the text protocol, discarding any result. */
static int simple(my_conn *c, const char *sql)
{
	if (mysql_real_query(c->db, sql, strlen(sql))) return fail_db(c);
	do {
		MYSQL_RES *res = mysql_store_result(c->db);
		if (res) mysql_free_result(res);
		else if (mysql_field_count(c->db)) return fail_db(c);
	} while (mysql_more_results(c->db) && mysql_next_result(c->db) == 0);
	if (mysql_errno(c->db)) return fail_db(c);
	return DJC_OK;
}

static void my_qi(sb_t *b, const char *name)
{
	sb_addc(b, '`');
	for (const char *p = name; *p; p++) {
		if (*p == '`') sb_addc(b, '`');
		sb_addc(b, *p);
	}
	sb_addc(b, '`');
}

/* The server's kind and version from mysql_get_server_info; 0 when it
 * cannot be read. */
static int server_version(const char *info, int *mariadb, int *major, int *minor, int *patch)
{
	*mariadb = info && strstr(info, "MariaDB") != NULL;
	if (info && *mariadb && !strncmp(info, "5.5.5-", 6)) info += 6;
	*major = *minor = *patch = 0;
	return info && sscanf(info, "%d.%d.%d", major, minor, patch) >= 2;
}

/* The binary collation that compares text byte for byte as SQLite and
 * PostgreSQL do. utf8mb4_bin is PAD SPACE: 'ab' and 'ab  ' are equal, so
 * they could not both be keys. MariaDB 10.2+ has utf8mb4_nopad_bin, MySQL
 * 8.0.17+ utf8mb4_0900_bin (both NO PAD); older servers keep utf8mb4_bin.
 * info: mysql_get_server_info, e.g. "10.11.6-MariaDB-0+deb12u1" or
 * "8.0.36" (MariaDB may prefix "5.5.5-"). */
const char *db_mysql_collation(const char *info)
{
	int mariadb, major, minor, patch;
	if (!server_version(info, &mariadb, &major, &minor, &patch)) return "utf8mb4_bin";
	if (mariadb) return major > 10 || (major == 10 && minor >= 2) ? "utf8mb4_nopad_bin" : "utf8mb4_bin";
	return major > 8 || (major == 8 && (minor > 0 || patch >= 17)) ? "utf8mb4_0900_bin" : "utf8mb4_bin";
}

/* The client options of a connection (before it connects): utf8mb4, the
 * connect timeout, no automatic reconnect, no LOCAL INFILE, TLS as asked. */
static void client_options(const my_conn *c, MYSQL *m)
{
	unsigned timeout = c->timeout;
	my_bool off = 0, on = 1;
	unsigned no = 0;
	unsigned long maxpkt = 1UL << 30;
	mysql_optionsv(m, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	mysql_optionsv(m, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_optionsv(m, MYSQL_OPT_RECONNECT, &off);            /* we reconnect ourselves */
	mysql_optionsv(m, MYSQL_OPT_LOCAL_INFILE, &no);
	mysql_optionsv(m, MYSQL_OPT_MAX_ALLOWED_PACKET, &maxpkt);
	if (c->ssl_enforce) mysql_optionsv(m, MYSQL_OPT_SSL_ENFORCE, &on);
	if (c->ssl_verify) mysql_optionsv(m, MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &on);
	if (c->ssl_ca) mysql_optionsv(m, MYSQL_OPT_SSL_CA, c->ssl_ca);
	if (c->ssl_capath) mysql_optionsv(m, MYSQL_OPT_SSL_CAPATH, c->ssl_capath);
	if (c->ssl_cert) mysql_optionsv(m, MYSQL_OPT_SSL_CERT, c->ssl_cert);
	if (c->ssl_key) mysql_optionsv(m, MYSQL_OPT_SSL_KEY, c->ssl_key);
	if (c->ssl_cipher) mysql_optionsv(m, MYSQL_OPT_SSL_CIPHER, c->ssl_cipher);
	if (c->ssl_crl) mysql_optionsv(m, MYSQL_OPT_SSL_CRL, c->ssl_crl);
	if (c->ssl_crlpath) mysql_optionsv(m, MYSQL_OPT_SSL_CRLPATH, c->ssl_crlpath);
	/* the bound on each wait for the server (db_set_wait_bound): each
	 * read or write that waits longer fails the statement as a lost
	 * connection (CR_SERVER_LOST), where a frozen server held it for
	 * ever (keepalives and TCP_USER_TIMEOUT never fire: its kernel still
	 * acknowledges) */
	if (c->base.wait_bound > 0) {
		unsigned wt = (unsigned)c->base.wait_bound + (c->base.wait_bound > (unsigned)c->base.wait_bound);
		mysql_optionsv(m, MYSQL_OPT_READ_TIMEOUT, &wt);
		mysql_optionsv(m, MYSQL_OPT_WRITE_TIMEOUT, &wt);
	}
}

/* TCP only (a unix socket refuses these): keepalives find a dead peer of
 * an idle connection, and data unacknowledged for 10 s (a network cut)
 * fails the statement instead of hanging for the kernel's ~15 minutes; a
 * long query is unaffected. */
static void socket_options(MYSQL *m)
{
	int fd = (int)mysql_get_socket(m), on = 1, idle = 10, intvl = 5, cnt = 3;
	unsigned ut = 10000;
	if (fd >= 0 && !setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on)) {
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
		setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
		setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof ut);
	}
}

/* What the server offers, read once connected: the collation (chosen once
 * per connection object: keep_schema_collation may have changed it; a
 * reconnect keeps it) and the table suffix with it; MariaDB 10.3+ runs a
 * batch as one compound statement (my_batch): one round trip per job
 * (DJC_MYSQL_COMPOUND=0 turns it off: the statements one by one, as on
 * MySQL); JSON_TABLE (in_rows). */
static void server_features(my_conn *c, MYSQL *m)
{
	if (!c->collation[0]) snprintf(c->collation, sizeof c->collation, "%s", db_mysql_collation(mysql_get_server_info(m)));
	int mariadb, major, minor, patch;
	const char *env = getenv("DJC_MYSQL_COMPOUND");
	int known = server_version(mysql_get_server_info(m), &mariadb, &major, &minor, &patch);
	c->compound = known && mariadb && (major > 10 || (major == 10 && minor >= 3)) && !(env && !strcmp(env, "0"));
	c->json_table = known && (mariadb ? major > 10 || (major == 10 && minor >= 6)
				  : major > 8 || (major == 8 && (minor > 0 || patch >= 4)));
	snprintf(c->suffix, sizeof c->suffix, " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=%s", c->collation);
	c->base.table_suffix = c->suffix;
}

/* Connect, apply the session settings and select db (may be NULL). On
 * failure err holds a message without the password. */
static int my_connect(my_conn *c, const char *db, char *err, size_t errlen)
{
	pthread_once(&lib_once, lib_init);
	MYSQL *m = mysql_init(NULL);
	if (!m) { snprintf(err, errlen, "mysql: out of memory"); return DJC_ECONN; }
	client_options(c, m);
	if (!mysql_real_connect(m, c->host, c->user, c->password, db, c->port, c->socket, CLIENT_FOUND_ROWS)) {
		snprintf(err, errlen, "cannot connect to %s: mysql: %s", c->redacted, mysql_error(m));
		mysql_close(m);
		return DJC_ECONN;
	}
	/* Connector/C 3.3 quietly goes on in plain text when the server offers
	 * no TLS and only ssl-mode=REQUIRED was asked for: refuse that here.
	 * (A local socket needs no TLS.) */
	int local = c->socket || !c->host || !strcmp(c->host, "localhost");
	if (c->ssl_enforce && !local && !mysql_get_ssl_cipher(m)) {
		snprintf(err, errlen, "cannot connect to %s: mysql: TLS is required (ssl-mode) but the server does not offer it",
			 c->redacted);
		mysql_close(m);
		return DJC_ECONN;
	}
	c->db = m;
	c->broken = 0;
	c->thread_id = mysql_thread_id(m);
	socket_options(m);
	server_features(c, m);
	char set[360];
	/* the bound on a lock wait (db_conn.lock_wait): a table's metadata
	 * lock (LOCK TABLES ... WRITE, ALTER TABLE) falls under
	 * lock_wait_timeout (the server's default is a day); a row lock under
	 * innodb_lock_wait_timeout, at most LOCK_WAIT_S, retried above */
	double bound = c->base.lock_wait;
	int row_wait = bound > 0 && bound < LOCK_WAIT_S ? (int)ceil(bound) : LOCK_WAIT_S;
	int n = snprintf(set, sizeof set, "SET SESSION sql_mode='" SESSION_SQL_MODE "', time_zone='+00:00', "
			 "collation_connection='%s', innodb_lock_wait_timeout=%d", c->collation, row_wait);
	if (bound > 0) snprintf(set + n, sizeof set - (size_t)n, ", lock_wait_timeout=%.0f", ceil(bound));
	if (simple(c, set) ||
	    simple(c, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")) {
		snprintf(err, errlen, "%s", c->base.err);
		close_db(c);
		return DJC_ECONN;
	}
	db_session_changed(&c->base);   /* a pool child publishes its new session */
	return DJC_OK;
}

static int reconnect(my_conn *c)
{
	char err[768];
	close_db(c);
	if (my_connect(c, c->base.schema, err, sizeof err)) {
		snprintf(c->base.err, sizeof c->base.err, "mysql: connection lost, reconnecting failed: %s", err);
		return DJC_ECONN;
	}
	return DJC_OK;
}

/* 1 if an idle connection has something to read: the server closed it (or
 * sent a final error) while we were not looking. */
static int looks_dead(my_conn *c)
{
	struct pollfd pf = {.fd = (int)mysql_get_socket(c->db), .events = POLLIN};
	if (pf.fd < 0) return 1;
	if (poll(&pf, 1, 0) <= 0) return 0;
	return mysql_ping(c->db) != 0;   /* readable but alive (e.g. a TLS ticket) is fine */
}

/* Make sure there is a live connection before a statement: outside a
 * transaction a lost one is replaced; inside one it is an error. */
static int ensure(my_conn *c)
{
	if (c->base.in_tx) {
		if (c->db && !c->broken) return DJC_OK;
		snprintf(c->base.err, sizeof c->base.err, "mysql: connection lost inside a transaction");
		return DJC_ECONN;
	}
	if (c->db && !c->broken && !looks_dead(c)) return DJC_OK;
	return reconnect(c);
}

/* db_driver.wait_bound_changed: Connector/C takes its read and write
 * timeouts at connect only (client_options), so the session at hand is
 * replaced before the next statement outside a transaction (inside one,
 * at the reconnect that follows its end, if any). */
static void my_wait_bound_changed(db_conn *bc)
{
	my_conn *c = (my_conn *)bc;
	if (c->db && !bc->in_tx) c->broken = 1;
}

static int set_opt(char **dst, const char *v) { free(*dst); *dst = *v ? xstrdup(v) : NULL; return 0; }

/* URL query parameters: ssl-mode, ssl-ca, ssl-capath, ssl-cert, ssl-key,
 * ssl-cipher, ssl-crl, ssl-crlpath, connect-timeout, socket (also with _ for
 * -, and the PostgreSQL spellings sslmode, sslrootcert, sslcert, sslkey). */
static int parse_opts(my_conn *c, const db_url *u, char *err, size_t errlen)
{
	for (size_t i = 0; i < u->nopts; i++) {
		char k[64];
		snprintf(k, sizeof k, "%s", u->opt_keys[i]);
		for (char *p = k; *p; p++) *p = *p == '_' ? '-' : (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
		const char *v = u->opt_vals[i];
		if (!strcmp(k, "ssl-mode") || !strcmp(k, "sslmode")) {
			if (!strcasecmp(v, "DISABLED") || !strcasecmp(v, "disable") ||
			    !strcasecmp(v, "PREFERRED") || !strcasecmp(v, "prefer") || !strcasecmp(v, "allow")) {
				c->ssl_enforce = c->ssl_verify = 0;
			} else if (!strcasecmp(v, "REQUIRED") || !strcasecmp(v, "require")) {
				c->ssl_enforce = 1; c->ssl_verify = 0;
			} else if (!strcasecmp(v, "VERIFY_CA") || !strcasecmp(v, "verify-ca") ||
				   !strcasecmp(v, "VERIFY_IDENTITY") || !strcasecmp(v, "verify-full") ||
				   !strcasecmp(v, "verify-identity")) {
				/* Connector/C checks the chain and the host name together */
				c->ssl_enforce = c->ssl_verify = 1;
			} else {
				snprintf(err, errlen, "bad ssl-mode '%s' (DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY)", v);
				return DJC_EINVAL;
			}
		} else if (!strcmp(k, "ssl-ca") || !strcmp(k, "sslrootcert")) set_opt(&c->ssl_ca, v);
		else if (!strcmp(k, "ssl-capath")) set_opt(&c->ssl_capath, v);
		else if (!strcmp(k, "ssl-cert") || !strcmp(k, "sslcert")) set_opt(&c->ssl_cert, v);
		else if (!strcmp(k, "ssl-key") || !strcmp(k, "sslkey")) set_opt(&c->ssl_key, v);
		else if (!strcmp(k, "ssl-cipher")) set_opt(&c->ssl_cipher, v);
		else if (!strcmp(k, "ssl-crl")) set_opt(&c->ssl_crl, v);
		else if (!strcmp(k, "ssl-crlpath")) set_opt(&c->ssl_crlpath, v);
		else if (!strcmp(k, "socket")) set_opt(&c->socket, v);
		else if (!strcmp(k, "connect-timeout")) {
			char *e;
			long t = strtol(v, &e, 10);
			if (*e || t <= 0 || t > 3600) {
				snprintf(err, errlen, "bad connect-timeout '%s' (seconds)", v);
				return DJC_EINVAL;
			}
			c->timeout = (unsigned)t;
		} else {
			snprintf(err, errlen, "unknown mysql URL parameter '%s' (known: ssl-mode, ssl-ca, ssl-capath, "
				 "ssl-cert, ssl-key, ssl-cipher, ssl-crl, ssl-crlpath, connect-timeout, socket)", u->opt_keys[i]);
			return DJC_EINVAL;
		}
	}
	return DJC_OK;
}

static int my_exec(db_conn *bc, const char *sql, const val_t *params, size_t np, db_res **out);

/* A schema that already holds tables declared with utf8mb4_bin (by a djc
 * from before NO PAD collations) keeps that collation: InnoDB forms a
 * foreign key on text columns only between equal collations, so a new
 * child of such a table must match it. */
static int keep_schema_collation(my_conn *c)
{
	if (!strcmp(c->collation, "utf8mb4_bin")) return DJC_OK;
	db_res *r = NULL;
	int rc = my_exec(&c->base, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
			 "AND TABLE_COLLATION = 'utf8mb4_bin'", NULL, 0, &r);
	if (rc) return rc;
	int old = r->nrows && db_cell_int(r, 0, 0) > 0;
	db_res_free(r);
	if (!old) return DJC_OK;
	snprintf(c->collation, sizeof c->collation, "utf8mb4_bin");
	snprintf(c->suffix, sizeof c->suffix, " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=%s", c->collation);
	return simple(c, "SET SESSION collation_connection='utf8mb4_bin'");
}

static int my_open(db_conn **out, const db_url *u, const char *schema, char *err, size_t errlen)
{
	*out = NULL;
	if (my_api_load(err, errlen)) return DJC_ECONN;
	const char *s = schema && *schema ? schema : u->dbname;
	if (!s || !*s) {
		snprintf(err, errlen, "no schema: give one or name a database in the URL (%s/DBNAME)", u->redacted);
		return DJC_EINVAL;
	}
	my_conn *c = xcalloc(1, sizeof *c);
	c->host = u->host ? xstrdup(u->host) : NULL;
	c->user = u->user ? xstrdup(u->user) : NULL;
	c->password = u->password ? xstrdup(u->password) : NULL;
	c->redacted = xstrdup(u->redacted);
	c->port = (unsigned)u->port;
	c->timeout = 10;
	c->base.lock_wait = u->lock_wait;
	int rc = parse_opts(c, u, err, errlen);
	if (rc) { my_close(&c->base); return rc; }
	/* A schema of our own is created on demand; the URL's database must exist. */
	int own = schema && *schema;
	if ((rc = my_connect(c, own ? NULL : s, err, errlen))) { my_close(&c->base); return rc; }
	c->base.schema = xstrdup(s);
	if (own) {
		int crc = DJC_OK;
		if (!(u->flags & DB_OPEN_NO_CREATE)) {
			sb_t q = SB_INIT;
			sb_add(&q, "CREATE DATABASE IF NOT EXISTS ");
			my_qi(&q, s);
			sb_printf(&q, " CHARACTER SET utf8mb4 COLLATE %s", c->collation);
			crc = simple(c, sb_str(&q));
			/* 1 row: made now (0 with a warning: it was there) */
			if (!crc && mysql_affected_rows(c->db) == 1) c->base.created = 1;
			sb_free(&q);
		}
		/* without the CREATE privilege an existing database still works */
		if (mysql_select_db(c->db, s)) {
			if ((u->flags & DB_OPEN_NO_CREATE) && mysql_errno(c->db) == 1049 /* ER_BAD_DB_ERROR */) {
				snprintf(err, errlen, "no schema '%s' on %s (djc declare creates it)", s, c->redacted);
				my_close(&c->base);
				return DJC_ENOTFOUND;
			}
			if (crc == DJC_OK) fail_db(c);
			snprintf(err, errlen, "cannot use schema '%s' on %s: %s", s, c->redacted, c->base.err);
			my_close(&c->base);
			return DJC_ECONN;
		}
	}
	if ((rc = keep_schema_collation(c))) {
		snprintf(err, errlen, "cannot read schema '%s' on %s: %s", s, c->redacted, c->base.err);
		my_close(&c->base);
		return rc;
	}
	c->base.err[0] = 0;
	*out = &c->base;
	return DJC_OK;
}

/* The database this connection's open created, dropped when it holds no
 * table (db_drop_created). The count and the drop hold the schema-change
 * lock (my_ddl's, named by the database): a declare of another process
 * into the same database either made its tables before (kept) or finds
 * the database gone (its CREATE fails), never loses them to the drop. */
static int my_drop_created(db_conn *bc)
{
	my_conn *c = (my_conn *)bc;
	val_t s = val_text(c->base.schema);
	db_res *r = NULL;
	int rc = my_exec(bc, "SELECT GET_LOCK(CONCAT('djc_ddl_', MD5(?)), 120)", &s, 1, &r);
	int locked = !rc && r->nrows == 1 && db_cell(r, 0, 0)->t != DJC_NULL && db_cell_int(r, 0, 0) == 1;
	db_res_free(r);
	r = NULL;
	if (!rc && !locked) {
		snprintf(c->base.err, sizeof c->base.err, "mysql: the schema-change lock of %s did not come in time", c->base.schema);
		rc = DJC_EBUSY;
	}
	if (!rc) rc = my_exec(bc, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", &s, 1, &r);
	int empty = !rc && r->nrows == 1 && db_cell_int(r, 0, 0) == 0;
	db_res_free(r);
	if (!rc && empty) {
		sb_t q = SB_INIT;
		sb_add(&q, "DROP DATABASE ");
		my_qi(&q, c->base.schema);
		rc = simple(c, sb_str(&q));
		sb_free(&q);
	}
	if (locked) {
		r = NULL;
		int urc = my_exec(bc, "SELECT RELEASE_LOCK(CONCAT('djc_ddl_', MD5(?)))", &s, 1, &r);
		db_res_free(r);
		if (!rc) rc = urc;
	}
	val_free(&s);
	return rc;
}

/* 1 if sql starts with one of the words kw (case-insensitive). */
static int starts_with(const char *sql, const char *const *kw, size_t n)
{
	while (*sql == ' ' || *sql == '\t' || *sql == '\n' || *sql == '\r' || *sql == '(') sql++;
	for (size_t i = 0; i < n; i++) {
		size_t k = strlen(kw[i]);
		if (!strncasecmp(sql, kw[i], k) && !((sql[k] >= 'A' && sql[k] <= 'Z') || (sql[k] >= 'a' && sql[k] <= 'z') || sql[k] == '_'))
			return 1;
	}
	return 0;
}

/* Schema changes: cached statements may describe old columns afterwards. */
static int is_ddl(const char *sql)
{
	static const char *const kw[] = {"CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE"};
	return starts_with(sql, kw, sizeof kw / sizeof *kw);
}

/* Queries that may safely run twice. */
static int is_read(const char *sql)
{
	static const char *const kw[] = {"SELECT", "WITH"};
	return starts_with(sql, kw, sizeof kw / sizeof *kw);
}

#define COMPOUND_HEAD "BEGIN NOT ATOMIC "

/* Statements worth caching: DML and queries, not one-off DDL; and the
 * compound statements of batches (my_batch), which repeat. */
static int cacheable(const char *sql)
{
	static const char *const kw[] = {"SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH"};
	return starts_with(sql, kw, sizeof kw / sizeof *kw) || !strncmp(sql, COMPOUND_HEAD, strlen(COMPOUND_HEAD));
}

/* DML that returns no rows: what a compound statement may hold. */
static int is_dml(const char *sql)
{
	static const char *const kw[] = {"INSERT", "UPDATE", "DELETE", "REPLACE"};
	return starts_with(sql, kw, sizeof kw / sizeof *kw);
}

/* A prepared statement for sql, from the cache when possible. Returns 0, or
 * the server's error number with c->err set. *slot is the cache slot or -1
 * for an uncached statement the caller closes. */
static unsigned prepare(my_conn *c, const char *sql, int cache, MYSQL_STMT **out, int *slot)
{
	*out = NULL;
	*slot = -1;
	int lru = 0;
	if (cache)
		for (int i = 0; i < STMT_CACHE; i++) {
			if (c->cache[i].sql && !strcmp(c->cache[i].sql, sql)) {
				c->cache[i].used = ++c->tick;
				*out = c->cache[i].st;
				*slot = i;
				return 0;
			}
			if (c->cache[i].used < c->cache[lru].used) lru = i;
		}
	MYSQL_STMT *st = mysql_stmt_init(c->db);
	if (!st) {
		unsigned e = mysql_errno(c->db) ? mysql_errno(c->db) : CR_OUT_OF_MEMORY;
		fail(c, e, mysql_errno(c->db) ? mysql_error(c->db) : "out of memory");
		return e;
	}
	if (mysql_stmt_prepare(st, sql, (unsigned long)strlen(sql))) {
		unsigned e = mysql_stmt_errno(st);
		fail_st(c, st);
		mysql_stmt_close(st);
		return e;
	}
	if (cache) {
		if (c->cache[lru].st) mysql_stmt_close(c->cache[lru].st);
		free(c->cache[lru].sql);
		c->cache[lru].sql = xstrdup(sql);
		c->cache[lru].st = st;
		c->cache[lru].used = ++c->tick;
		*slot = lru;
	}
	*out = st;
	return 0;
}

/* Done with a statement: a cached one stays (discarded when it failed
 * midway, so no stale state is reused), an uncached one is closed. */
static void release(my_conn *c, MYSQL_STMT *st, int slot, int ok)
{
	if (slot < 0) { mysql_stmt_close(st); return; }
	if (ok) { mysql_stmt_free_result(st); return; }
	mysql_stmt_close(st);
	free(c->cache[slot].sql);
	c->cache[slot].sql = NULL;
	c->cache[slot].st = NULL;
	c->cache[slot].used = 0;
}

static int is_binary_field(const MYSQL_FIELD *f)
{
	if (f->charsetnr != 63) return 0;
	switch (f->type) {
	case MYSQL_TYPE_TINY_BLOB: case MYSQL_TYPE_MEDIUM_BLOB: case MYSQL_TYPE_LONG_BLOB:
	case MYSQL_TYPE_BLOB: case MYSQL_TYPE_VAR_STRING: case MYSQL_TYPE_STRING:
	case MYSQL_TYPE_VARCHAR: case MYSQL_TYPE_BIT: case MYSQL_TYPE_GEOMETRY:
		return 1;
	default:
		return 0;
	}
}

enum kind { K_TEXT, K_BYTES, K_INT, K_DOUBLE, K_FLOAT, K_TIME };

static enum kind field_kind(const MYSQL_FIELD *f)
{
	if (is_binary_field(f)) return K_BYTES;
	switch (f->type) {
	case MYSQL_TYPE_TINY: case MYSQL_TYPE_SHORT: case MYSQL_TYPE_INT24:
	case MYSQL_TYPE_LONG: case MYSQL_TYPE_LONGLONG:
		return K_INT;
	case MYSQL_TYPE_DOUBLE: return K_DOUBLE;
	case MYSQL_TYPE_FLOAT: return K_FLOAT;
	case MYSQL_TYPE_DATE: case MYSQL_TYPE_NEWDATE: case MYSQL_TYPE_DATETIME:
	case MYSQL_TYPE_TIMESTAMP: case MYSQL_TYPE_TIME:
		return K_TIME;
	default:
		return K_TEXT;
	}
}

/* One result column's fetch buffers. */
typedef struct colbuf {
	enum kind k;
	enum enum_field_types type;
	unsigned decimals;
	int is_unsigned;
	long long ll;
	double d;
	float fl;
	MYSQL_TIME tm;
	char *buf;
	unsigned long cap, len;
	my_bool isnull, error;
} colbuf;

static val_t owned_text(char *s, size_t n, djc_type t)
{
	val_t v = val_null();
	v.t = t;
	v.s = s;
	v.n = n;
	return v;
}

/* 'YYYY-MM-DD', 'YYYY-MM-DD HH:MM:SS[.fff]' or '[-]HH:MM:SS[.fff]' (by the
 * column's type: the protocol sends a midnight datetime as a bare date) with
 * as many fractional digits as the column declares. */
static val_t time_text(const MYSQL_TIME *t, enum enum_field_types type, unsigned decimals)
{
	char b[64];
	int n;
	if (type == MYSQL_TYPE_DATE || type == MYSQL_TYPE_NEWDATE)
		return val_textn(b, (size_t)snprintf(b, sizeof b, "%04u-%02u-%02u", t->year, t->month, t->day));
	if (type == MYSQL_TYPE_TIME)   /* hour holds the whole hours (up to 838) */
		n = snprintf(b, sizeof b, "%s%02u:%02u:%02u", t->neg ? "-" : "", t->hour, t->minute, t->second);
	else
		n = snprintf(b, sizeof b, "%04u-%02u-%02u %02u:%02u:%02u", t->year, t->month, t->day,
			     t->hour, t->minute, t->second);
	char frac[8];
	snprintf(frac, sizeof frac, "%06lu", t->second_part % 1000000);
	if (decimals >= 1 && decimals <= 6)
		n += snprintf(b + n, sizeof b - (size_t)n, ".%.*s", (int)decimals, frac);
	else if (decimals > 6 && t->second_part) {   /* not fixed: trim trailing zeros */
		int d = 6;
		while (d > 1 && frac[d - 1] == '0') d--;
		n += snprintf(b + n, sizeof b - (size_t)n, ".%.*s", d, frac);
	}
	return val_textn(b, (size_t)n);
}

/* The result buffer of column f: cb (what the column is) and b (where
 * the client library puts its value). */
static void bind_column(const MYSQL_FIELD *f, colbuf *cb, MYSQL_BIND *b)
{
	cb->k = field_kind(f);
	cb->type = f->type;
	cb->decimals = f->decimals;
	cb->is_unsigned = (f->flags & UNSIGNED_FLAG) != 0;
	b->is_null = &cb->isnull;
	b->error = &cb->error;
	b->length = &cb->len;
	switch (cb->k) {
	case K_INT:
		b->buffer_type = MYSQL_TYPE_LONGLONG;
		b->buffer = &cb->ll;
		b->is_unsigned = (my_bool)cb->is_unsigned;
		break;
	case K_DOUBLE: b->buffer_type = MYSQL_TYPE_DOUBLE; b->buffer = &cb->d; break;
	case K_FLOAT: b->buffer_type = MYSQL_TYPE_FLOAT; b->buffer = &cb->fl; break;
	case K_TIME:
		b->buffer_type = MYSQL_TYPE_DATETIME;
		b->buffer = &cb->tm;
		b->buffer_length = sizeof cb->tm;
		break;
	default:
		cb->cap = FETCH_BUF;
		cb->buf = xmalloc(cb->cap);
		b->buffer_type = cb->k == K_BYTES ? MYSQL_TYPE_BLOB : MYSQL_TYPE_STRING;
		b->buffer = cb->buf;
		b->buffer_length = cb->cap;
	}
}

/* A text or bytes cell longer than its buffer: column i fetched whole
 * into *out (buffer type as b). */
static int fetch_long_cell(my_conn *c, MYSQL_STMT *st, const colbuf *k, const MYSQL_BIND *b, unsigned i, val_t *out)
{
	char *big = xmalloc((size_t)k->len + 1);
	unsigned long blen = 0;
	my_bool bnull = 0, berr = 0;
	MYSQL_BIND one = {0};
	one.buffer_type = b->buffer_type;
	one.buffer = big;
	one.buffer_length = k->len;
	one.length = &blen;
	one.is_null = &bnull;
	one.error = &berr;
	if (mysql_stmt_fetch_column(st, &one, i, 0)) {
		free(big);
		return fail_st(c, st);
	}
	if (blen > k->len) blen = k->len;
	big[blen] = 0;
	*out = owned_text(big, blen, k->k == K_BYTES ? DJC_BYTES : DJC_TEXT);
	return DJC_OK;
}

/* A bytes cell longer than its buffer, column i, as its digest (value.h,
 * VAL_DIGESTED): XXH3 over its bytes copied out of the client library's
 * row a piece at a time, never whole. The row itself is the library's
 * (its connection buffer holds the packet whole); this only keeps djc
 * from holding a second copy beside it. With s (db_stream), each piece
 * (of s->piece bytes at most, a buffer of its own: piece_get, reused once
 * given back) is handed to s->each after it was hashed; a nonzero return
 * of it is returned at once. */
static int digest_long_cell(my_conn *c, MYSQL_STMT *st, const colbuf *k, unsigned i, const db_stream *s, val_t *out)
{
	size_t size = s ? s->piece : DIGEST_PIECE;
	char *piece = s ? NULL : xmalloc(size);
	XXH3_state_t h;
	XXH3_64bits_reset(&h);
	unsigned long at = 0;
	int rc = DJC_OK;
	while (at < k->len && !rc) {
		unsigned long blen = 0;
		my_bool bnull = 0, berr = 0;
		MYSQL_BIND one = {0};
		if (s) piece = piece_get(size);
		one.buffer_type = MYSQL_TYPE_BLOB;
		one.buffer = piece;
		one.buffer_length = size;
		one.length = &blen;
		one.is_null = &bnull;
		one.error = &berr;
		if (mysql_stmt_fetch_column(st, &one, i, at)) {
			rc = fail_st(c, st);
			break;
		}
		/* blen: the whole value's length; this piece is what is left of it, up to the buffer */
		unsigned long n = k->len - at < size ? k->len - at : size;
		if (blen != k->len) {
			snprintf(c->base.err, sizeof c->base.err, "mysql: a value of %lu bytes read back as %lu", k->len, blen);
			rc = DJC_ERROR;
			break;
		}
		XXH3_64bits_update(&h, piece, n);
		if (s) {
			rc = s->each(s->ctx, i, at, piece, n);
			piece = NULL;
		}
		at += n;
	}
	if (s) piece_put(piece);
	else free(piece);
	if (rc) return rc;
	*out = val_null();
	out->t = DJC_BYTES;
	out->n = k->len;
	out->u = XXH3_64bits_digest(&h);
	out->i = VAL_DIGESTED;
	return DJC_OK;
}

/* The value of fetched column i (not NULL) from its buffer k into *out. */
static int cell_value(my_conn *c, MYSQL_STMT *st, const colbuf *k, const MYSQL_BIND *b, unsigned i, const db_digest *dig,
		      val_t *out)
{
	switch (k->k) {
	case K_INT:
		if (k->is_unsigned && (unsigned long long)k->ll > (unsigned long long)INT64_MAX) {
			char t[32];
			snprintf(t, sizeof t, "%llu", (unsigned long long)k->ll);
			*out = val_text(t);
		} else
			*out = val_int((int64_t)k->ll);
		return DJC_OK;
	case K_DOUBLE: *out = val_float(k->d); return DJC_OK;
	case K_FLOAT:
		/* the float's own value, as a double: bound again (a job's key
		 * read back and compared with the column) it equals the stored
		 * float32, where its shortest text ("0.1") would be compared as
		 * the double 0.1, which is no float32 (a reservation of such a key
		 * was lost at every commit) */
		*out = val_float((double)k->fl);
		return DJC_OK;
	case K_TIME: *out = time_text(&k->tm, k->type, k->decimals); return DJC_OK;
	default:
		if (k->len > k->cap) {   /* longer than the buffer */
			if (dig && k->k == K_BYTES && i < dig->ncols && dig->cols[i] && k->len > dig->over)
				return digest_long_cell(c, st, k, i, NULL, out);
			return fetch_long_cell(c, st, k, b, i, out);
		}
		*out = val_textn(k->buf, k->len);
		out->t = k->k == K_BYTES ? DJC_BYTES : DJC_TEXT;
		return DJC_OK;
	}
}

/* How a result is read: its large bytes values digested (dig), or its
 * rows streamed (stream), or neither (both NULL). */
typedef struct my_how {
	const db_digest *dig;
	const db_stream *stream;
} my_how;

/* Whether column i's value (k) comes in pieces to s (db_stream). */
static int streamed(const db_stream *s, const colbuf *k, unsigned i)
{
	return s && k->k == K_BYTES && !k->isnull && k->len > k->cap && i < s->ncols && s->cols[i] && k->len > s->over;
}

/* The row just fetched (its cells, row[0..nf), set) to s: row, each
 * value in pieces, row_end (db_stream); r holds the one row. */
static int stream_row(my_conn *c, MYSQL_STMT *st, const colbuf *cb, const db_stream *s, db_res *r)
{
	unsigned nf = (unsigned)r->ncols;
	for (unsigned i = 0; i < nf; i++)
		if (streamed(s, &cb[i], i)) {
			val_t *v = &r->cells[i];
			*v = val_null();
			v->t = DJC_BYTES;
			v->n = cb[i].len;
			v->i = VAL_DIGESTED;
		}
	int rc = s->row(s->ctx, r);
	for (unsigned i = 0; i < nf && !rc; i++)
		if (streamed(s, &cb[i], i)) rc = digest_long_cell(c, st, &cb[i], i, s, &r->cells[i]);
	return rc ? rc : s->row_end(s->ctx, r);
}

/* Read every row of an executed statement into r (how->dig: cells that
 * come digested), or hand each to how->stream as it comes (r then holds
 * one row at a time, and none at the end). */
static int fetch_rows(my_conn *c, MYSQL_STMT *st, MYSQL_RES *meta, const my_how *how, db_res *r)
{
	static const my_how whole = {NULL, NULL};
	if (!how) how = &whole;   /* (run's callers inside the driver: values whole) */
	const db_stream *s = how->stream;
	unsigned nf = mysql_num_fields(meta);
	MYSQL_FIELD *f = mysql_fetch_fields(meta);
	r->ncols = nf;
	r->cols = xcalloc(nf ? nf : 1, sizeof(char *));
	colbuf *cb = xcalloc(nf ? nf : 1, sizeof *cb);
	MYSQL_BIND *b = xcalloc(nf ? nf : 1, sizeof *b);
	for (unsigned i = 0; i < nf; i++) {
		r->cols[i] = xstrdup(f[i].name ? f[i].name : "");
		bind_column(&f[i], &cb[i], &b[i]);
	}
	int rc = DJC_OK, told = DJC_OK;   /* told: a callback's stop (the rest is read and dropped) */
	if (nf && mysql_stmt_bind_result(st, b)) rc = fail_st(c, st);
	size_t cap = 0;
	while (rc == DJC_OK) {
		int fr = mysql_stmt_fetch(st);
		if (fr == MYSQL_NO_DATA) break;
		if (fr == 1) { rc = fail_st(c, st); break; }
		if (s && told) continue;
		if (s) { for (size_t k = 0; k < r->nrows * nf; k++) val_free(&r->cells[k]); r->nrows = 0; }
		if (r->nrows == cap) {
			cap = cap ? cap * 2 : 16;
			r->cells = xrealloc(r->cells, cap * (nf ? nf : 1) * sizeof(val_t));
		}
		val_t *row = r->cells + r->nrows * nf;
		for (unsigned i = 0; i < nf; i++) row[i] = val_null();
		r->nrows++;
		for (unsigned i = 0; i < nf && rc == DJC_OK; i++)
			if (!cb[i].isnull && !streamed(s, &cb[i], i)) rc = cell_value(c, st, &cb[i], &b[i], i, how->dig, &row[i]);
		if (s && !rc) told = stream_row(c, st, cb, s, r);
	}
	for (unsigned i = 0; i < nf; i++) free(cb[i].buf);
	free(cb);
	free(b);
	return rc ? rc : told;
}

/* Statements the server cannot prepare: the text protocol, no parameters. */
static int run_text(my_conn *c, const char *sql, size_t np, db_res **out)
{
	if (np) {
		snprintf(c->base.err, sizeof c->base.err, "mysql: statement cannot be prepared, so it takes no parameters (got %zu)", np);
		return DJC_ERROR;
	}
	if (mysql_real_query(c->db, sql, strlen(sql))) return fail_db(c);
	db_res *r = xcalloc(1, sizeof *r);
	MYSQL_RES *res = mysql_store_result(c->db);
	if (res) {
		unsigned nf = mysql_num_fields(res);
		MYSQL_FIELD *f = mysql_fetch_fields(res);
		r->ncols = nf;
		r->cols = xcalloc(nf ? nf : 1, sizeof(char *));
		for (unsigned i = 0; i < nf; i++) r->cols[i] = xstrdup(f[i].name ? f[i].name : "");
		r->nrows = (size_t)mysql_num_rows(res);
		r->cells = xcalloc(r->nrows * nf + 1, sizeof(val_t));
		MYSQL_ROW row;
		for (size_t k = 0; (row = mysql_fetch_row(res)) && k < r->nrows; k++) {
			unsigned long *len = mysql_fetch_lengths(res);
			for (unsigned i = 0; i < nf; i++) {
				val_t *v = &r->cells[k * nf + i];
				if (!row[i]) { *v = val_null(); continue; }
				*v = val_textn(row[i], len[i]);
				if (is_binary_field(&f[i])) v->t = DJC_BYTES;
			}
		}
		r->affected = (long long)r->nrows;
		mysql_free_result(res);
	} else if (mysql_field_count(c->db)) {
		db_res_free(r);
		return fail_db(c);
	} else
		r->affected = (long long)mysql_affected_rows(c->db);
	while (mysql_more_results(c->db) && mysql_next_result(c->db) == 0) {
		MYSQL_RES *more = mysql_store_result(c->db);
		if (more) mysql_free_result(more);
	}
	if (out) *out = r; else db_res_free(r);
	return DJC_OK;
}

/* Bind p[0..np) to st as parameters: DJC_OK, or the failure's code. */
static int bind_params(my_conn *c, MYSQL_STMT *st, const val_t *p, size_t np)
{
	MYSQL_BIND *b = xcalloc(np, sizeof *b);
	for (size_t i = 0; i < np; i++) {
		switch (p[i].t) {
		case DJC_NULL: b[i].buffer_type = MYSQL_TYPE_NULL; break;
		case DJC_INT: case DJC_BOOL:
			b[i].buffer_type = MYSQL_TYPE_LONGLONG;
			b[i].buffer = (void *)&p[i].i;
			break;
		case DJC_UINT:
			b[i].buffer_type = MYSQL_TYPE_LONGLONG;
			b[i].buffer = (void *)&p[i].u;
			b[i].is_unsigned = 1;
			break;
		case DJC_FLOAT:
			b[i].buffer_type = MYSQL_TYPE_DOUBLE;
			b[i].buffer = (void *)&p[i].f;
			break;
		default:
			b[i].buffer_type = p[i].t == DJC_TEXT ? MYSQL_TYPE_STRING : MYSQL_TYPE_BLOB;
			b[i].buffer = p[i].s ? (void *)p[i].s : (void *)"";
			b[i].buffer_length = p[i].s ? (unsigned long)p[i].n : 0;
			break;
		}
	}
	int bad = mysql_stmt_bind_param(st, b) != 0;
	free(b);   /* the library copies the bind array */
	return bad ? fail_st(c, st) : DJC_OK;
}

/* The result of the executed statement st into r: its rows, or how many
 * rows it changed; further result sets (CALL) discarded. */
static int stmt_result(my_conn *c, MYSQL_STMT *st, const my_how *how, db_res *r)
{
	int rc = DJC_OK;
	MYSQL_RES *meta = mysql_stmt_result_metadata(st);
	if (meta) {
		rc = fetch_rows(c, st, meta, how, r);
		mysql_free_result(meta);
		r->affected = (long long)r->nrows;
	} else if (mysql_stmt_field_count(st)) {
		rc = fail_st(c, st);
	} else {
		my_ulonglong a = mysql_stmt_affected_rows(st);
		r->affected = a == (my_ulonglong)-1 ? 0 : (long long)a;
	}
	while (rc == DJC_OK && mysql_stmt_more_results(st) && mysql_stmt_next_result(st) == 0)
		mysql_stmt_free_result(st);
	return rc;
}

/* One attempt at a statement. *retry is set when the failure happened before
 * the server could have run it (the connection was already gone), so running
 * it again on a new connection is safe. */
static int run(my_conn *c, const char *sql, const val_t *p, size_t np, const my_how *how, db_res **out, int *retry)
{
	*retry = 0;
	int cache = cacheable(sql), reprepared = 0, rc;
	MYSQL_STMT *st;
	int slot;
again:;
	unsigned e = prepare(c, sql, cache, &st, &slot);
	if (e == ER_MAX_PREPARED_STMT_COUNT_REACHED && c->tick) {
		drop_cache(c);   /* the server-wide limit: give ours back and try once more */
		e = prepare(c, sql, cache, &st, &slot);
	}
	if (e == ER_UNSUPPORTED_PS) return run_text(c, sql, np, out);
	if (e) {
		*retry = is_conn_error(e);   /* preparing has no effect on data */
		return classify_code(e);
	}
	if ((size_t)mysql_stmt_param_count(st) != np) {
		snprintf(c->base.err, sizeof c->base.err, "mysql: statement wants %lu parameters, got %zu",
			 mysql_stmt_param_count(st), np);
		release(c, st, slot, 1);
		return DJC_ERROR;
	}
	if (np && (rc = bind_params(c, st, p, np))) {
		release(c, st, slot, 0);
		return rc;
	}
	if (mysql_stmt_execute(st)) {
		e = mysql_stmt_errno(st);
		/* A stale cached statement: prepare afresh, once. CR_NEW_STMT_METADATA
		 * (the table changed its columns) comes after the server ran it, so
		 * only a query is run again. */
		if (slot >= 0 && !reprepared && (e == ER_NEED_REPREPARE || e == ER_UNKNOWN_STMT_HANDLER ||
						 (e == CR_NEW_STMT_METADATA && is_read(sql)))) {
			release(c, st, slot, 0);
			reprepared = 1;
			goto again;
		}
		*retry = e == CR_SERVER_GONE_ERROR;   /* the request could not be sent */
		rc = fail_st(c, st);
		release(c, st, slot, !is_conn_error(e));
		return rc;
	}
	db_res *r = xcalloc(1, sizeof *r);
	rc = stmt_result(c, st, how, r);
	release(c, st, slot, rc == DJC_OK);
	if (is_ddl(sql)) drop_cache(c);   /* cached statements may describe the old columns */
	if (rc) { db_res_free(r); return rc; }
	r->cols = r->cols ? r->cols : xcalloc(1, sizeof(char *));
	if (out) *out = r; else db_res_free(r);
	return DJC_OK;
}

static int exec_how(db_conn *bc, const char *sql, const val_t *params, size_t np, const my_how *how, db_res **out)
{
	my_conn *c = (my_conn *)bc;
	if (out) *out = NULL;
	int rc = ensure(c), retry = 0;
	if (rc) return rc;
	rc = run(c, sql, params, np, how, out, &retry);
	if (rc == DJC_ECONN && retry && !bc->in_tx) {
		if (reconnect(c)) return DJC_ECONN;
		rc = run(c, sql, params, np, how, out, &retry);
	}
	return rc;
}

static int my_exec(db_conn *bc, const char *sql, const val_t *params, size_t np, db_res **out)
{
	my_how how = {NULL, NULL};
	return exec_how(bc, sql, params, np, &how, out);
}

static int my_exec_digest(db_conn *bc, const char *sql, const val_t *params, size_t np, const db_digest *d,
			  db_res **out)
{
	my_how how = {d, NULL};
	return exec_how(bc, sql, params, np, &how, out);
}

/* (run's retry is safe: a failure before the server ran the statement
 * has sent no row to s) */
static int my_exec_stream(db_conn *bc, const char *sql, const val_t *params, size_t np, const db_stream *s)
{
	my_how how = {NULL, s};
	return exec_how(bc, sql, params, np, &how, NULL);
}

static int my_begin(db_conn *bc)
{
	my_conn *c = (my_conn *)bc;
	if (bc->in_tx) {
		snprintf(bc->err, sizeof bc->err, "mysql: a transaction is already open");
		return DJC_ERROR;
	}
	int rc = ensure(c);
	if (rc) return rc;
	rc = simple(c, "START TRANSACTION");
	if (rc == DJC_ECONN) {   /* starting has no effect yet: retry on a new connection */
		if (reconnect(c)) return DJC_ECONN;
		rc = simple(c, "START TRANSACTION");
	}
	if (!rc) bc->in_tx = 1;
	return rc;
}

static int my_commit(db_conn *bc)
{
	my_conn *c = (my_conn *)bc;
	if (!c->db || c->broken) {
		bc->in_tx = 0;
		snprintf(bc->err, sizeof bc->err, "mysql: connection lost; the transaction was rolled back");
		return DJC_ECONN;
	}
	int rc = simple(c, "COMMIT");
	if (!rc || rc == DJC_ECONN) bc->in_tx = 0;
	return rc;
}

static int my_rollback(db_conn *bc)
{
	my_conn *c = (my_conn *)bc;
	bc->in_tx = 0;
	if (!c->db || c->broken) return DJC_OK;   /* the server rolled back when the connection went */
	int rc = simple(c, "ROLLBACK");
	return rc == DJC_ECONN ? DJC_OK : rc;
}

/* "k IN (?,..)" or "(a = ? AND b = ?) OR ..." for n keys named by cols. */
static void key_match(sb_t *q, char **cols, size_t nk, size_t n)
{
	if (nk == 1) {
		my_qi(q, cols[0]);
		sb_add(q, " IN (");
		for (size_t i = 0; i < n; i++) sb_add(q, i ? ",?" : "?");
		sb_addc(q, ')');
		return;
	}
	sb_addc(q, '(');
	for (size_t i = 0; i < n; i++) {
		sb_add(q, i ? " OR (" : "(");
		for (size_t j = 0; j < nk; j++) {
			if (j) sb_add(q, " AND ");
			my_qi(q, cols[j]);
			sb_add(q, " = ?");
		}
		sb_addc(q, ')');
	}
	sb_addc(q, ')');
}

/* Run sql with the params a (na of them) followed by b (nb). */
static int exec2(db_conn *bc, const char *sql, const val_t *a, size_t na, const val_t *b, size_t nb, db_res **out)
{
	val_t *p = xcalloc(na + nb + 1, sizeof(val_t));
	if (na) memcpy(p, a, na * sizeof(val_t));   /* shallow: nothing here is freed */
	if (nb) memcpy(p + na, b, nb * sizeof(val_t));
	int rc = my_exec(bc, sql, p, na + nb, out);
	free(p);
	return rc;
}

static size_t split_cols(const char *s, char ***out);

/* A claim's order as columns: the order's (claim.order), then the key's;
 * n = 0 when they are not plain quoted names (then no position is kept). */
typedef struct claim_cols { char **oc, **kc; size_t no, nk, n; } claim_cols;

static void cols_free(claim_cols *o)
{
	for (size_t j = 0; j < o->no; j++) free(o->oc[j]);
	for (size_t j = 0; j < o->nk; j++) free(o->kc[j]);
	free(o->oc);
	free(o->kc);
	memset(o, 0, sizeof *o);
}

static void cols_of(const db_claim *cl, claim_cols *o)
{
	memset(o, 0, sizeof *o);
	int ordered = cl->order && *cl->order;
	if (ordered && !(o->no = split_cols(cl->order, &o->oc))) return;
	if (!(o->nk = split_cols(cl->key_cols, &o->kc))) { cols_free(o); return; }
	o->n = o->no + o->nk;
}

static int val_same(const val_t *a, const val_t *b)
{
	return a->t == b->t && a->i == b->i && a->u == b->u && !memcmp(&a->f, &b->f, sizeof a->f) && a->n == b->n &&
	       (!a->s || !b->s ? a->s == b->s : !memcmp(a->s, b->s, a->n));
}

/* The position kept for cl's table, condition and its parameters, or NULL. */
static claim_pos *pos_of(my_conn *c, const db_claim *cl)
{
	for (int i = 0; i < CLAIM_POS; i++) {
		claim_pos *p = &c->pos[i];
		if (!p->table || strcmp(p->table, cl->table) || strcmp(p->where, cl->where) || p->nw != cl->nw) continue;
		size_t j = 0;
		while (j < p->nw && val_same(&p->w[j], &cl->wparams[j])) j++;
		if (j == p->nw) return p;
	}
	return NULL;
}

/* This connection's position for cl when it may be used now (kept, and
 * read from the head less than CLAIM_POS_AGE ago). */
static claim_pos *pos_usable(my_conn *c, const db_claim *cl, const claim_cols *o, double now)
{
	claim_pos *p = o->n ? pos_of(c, cl) : NULL;
	return p && p->n == o->n && now - p->head < CLAIM_POS_AGE ? p : NULL;
}

/* Keep where a claim ended: ord, the last claimed row's order columns, and
 * key, its keys (o->no and o->nk values); head, whether it read from the
 * head (now). A NULL among them keeps no position: from the head next. */
static void pos_keep(my_conn *c, const db_claim *cl, const claim_cols *o, const val_t *ord, const val_t *key, int head, double now)
{
	if (!o->n) return;
	claim_pos *p = pos_of(c, cl);
	if (!p) {
		p = &c->pos[c->pos_next++ % CLAIM_POS];   /* in place of the oldest made */
		pos_clear(p);
		p->table = xstrdup(cl->table);
		p->where = xstrdup(cl->where);
		p->w = xcalloc(cl->nw + 1, sizeof *p->w);
		for (size_t j = 0; j < cl->nw; j++) val_copy(&p->w[j], &cl->wparams[j]);
		p->nw = cl->nw;
	}
	for (size_t j = 0; j < p->n; j++) val_free(&p->v[j]);
	p->n = 0;
	for (size_t j = 0; j < o->n; j++)
		if ((j < o->no ? ord[j] : key[j - o->no]).t == DJC_NULL) return;
	p->v = xrealloc(p->v, o->n * sizeof *p->v);
	for (size_t j = 0; j < o->n; j++) val_copy(&p->v[j], j < o->no ? &ord[j] : &key[j - o->no]);
	p->n = o->n;
	if (head) p->head = now;
}

/* " AND (o1, .., k1, ..) > the position", as nested comparisons the range
 * optimizer turns into ranges that start there; its parameters (shallow
 * copies of p->v, 2n - 1 of them) go to pp. Returns their count. */
static size_t pos_cond(sb_t *q, const claim_cols *o, const claim_pos *p, val_t *pp)
{
	size_t np = 0;
	sb_add(q, " AND ");
	for (size_t j = 0; j < o->n; j++) {
		const char *col = j < o->no ? o->oc[j] : o->kc[j - o->no];
		pp[np++] = p->v[j];
		if (j + 1 < o->n) {
			sb_printf(q, "(%s > ? OR %s = ? AND ", col, col);
			pp[np++] = p->v[j];
		} else
			sb_printf(q, "%s > ?", col);
	}
	for (size_t j = 0; j + 1 < o->n; j++) sb_addc(q, ')');
	return np;
}

/* A claim under way (my_claim). */
typedef struct my_claiming {
	db_conn *bc;
	const db_claim *cl;
	sb_t q, t, ord;      /* scratch; the table, quoted; the order, made total by the keys */
	long want;
	db_res *got;         /* the claimed keys */
	val_t *extra;        /* cl->extra of each row of got */
	claim_cols o;        /* the position's columns (the single path) */
	val_t *npos;         /* where this claim ended, kept once it stands */
	int npos_head;       /* ... read from the head */
	double now;
} my_claiming;

/* The one locking read of the single path: from the position pos when
 * given, else (or when that finds nothing) from the head. *lk: its rows,
 * the keys, extra, then the order columns; *pass 0 when read from pos. */
static int single_read(my_claiming *m, const claim_pos *pos, db_res **lk, int *pass)
{
	const db_claim *cl = m->cl;
	int rc;
	for (*pass = pos ? 0 : 1;; (*pass)++) {
		sb_t ix = SB_INIT;
		my_qi(&ix, cl->index);
		sb_reset(&m->q);
		sb_printf(&m->q, "SELECT %s%s%s", cl->key_cols, cl->extra ? ", " : "", cl->extra ? cl->extra : "");
		for (size_t j = 0; m->o.n && j < m->o.no; j++) sb_printf(&m->q, ", %s", m->o.oc[j]);
		sb_printf(&m->q, " FROM %s FORCE INDEX (%s) WHERE (%s)", sb_str(&m->t), sb_str(&ix), cl->where);
		sb_free(&ix);
		val_t *pp = *pass == 0 ? xcalloc(2 * m->o.n, sizeof *pp) : NULL;
		size_t npp = *pass == 0 ? pos_cond(&m->q, &m->o, pos, pp) : 0;
		sb_printf(&m->q, " ORDER BY %s LIMIT %ld FOR UPDATE SKIP LOCKED", sb_str(&m->ord), m->want);
		rc = exec2(m->bc, sb_str(&m->q), cl->wparams, cl->nw, pp, npp, lk);
		free(pp);
		if (rc || (*lk)->nrows || *pass > 0) break;
		db_res_free(*lk);   /* nothing from there: from the head */
		*lk = NULL;
	}
	return rc;
}

/* The rows single_read locked into got (keys) and extra, the order
 * columns dropped; where a claim of one job ended into npos. */
static void single_take(my_claiming *m, db_res *lk, int pass)
{
	size_t ncol = lk->ncols - (m->o.n ? m->o.no : 0);   /* keys and extra */
	size_t nk = ncol - (m->cl->extra ? 1 : 0);
	if (m->want == 1 && lk->nrows && m->o.n) {
		/* where it ended, kept once the claim stands (my_claim) */
		const val_t *row = lk->cells;
		m->npos = xcalloc(m->o.n, sizeof *m->npos);
		for (size_t j = 0; j < m->o.n; j++) val_copy(&m->npos[j], j < m->o.no ? &row[ncol + j] : &row[j - m->o.no]);
		m->npos_head = pass > 0;
	}
	db_res *got = m->got = xcalloc(1, sizeof *got);
	got->ncols = nk;
	got->cols = xcalloc(nk ? nk : 1, sizeof(char *));
	for (size_t j = 0; j < nk; j++) got->cols[j] = xstrdup(lk->cols[j]);
	got->cells = xcalloc(lk->nrows * nk + 1, sizeof(val_t));
	if (m->cl->extra) m->extra = xcalloc(lk->nrows + 1, sizeof(val_t));
	for (size_t i = 0; i < lk->nrows; i++) {
		val_t *row = lk->cells + i * lk->ncols;
		memcpy(got->cells + i * nk, row, nk * sizeof(val_t));
		if (m->cl->extra) m->extra[i] = row[nk];
		for (size_t j = ncol; j < lk->ncols; j++) val_free(&row[j]);   /* the order columns */
	}
	got->nrows = lk->nrows;
	lk->nrows = 0;   /* the cells moved to got */
}

/* The single path: one locking read when an index serves both the
 * condition and the order (the jobs table's (queue, priority,
 * avail_time), with the key at the end of every entry): InnoDB then reads
 * the candidates in claim order, skips those another claimer holds, and
 * stops after `want`; under READ COMMITTED the rows it reads and does not
 * take are not kept locked.
 *
 * A claim of one job reads from where this connection's last such claim
 * of the same queue ended (kept once that claim stood), not from the head,
 * for up to CLAIM_POS_AGE seconds: the head of a busy queue is a run of
 * index entries of jobs already taken, delete-marked until InnoDB's purge
 * removes them, and a locking read checks each one against the clustered
 * index. At 4 workers that was about 900 pages read per claim (the slow
 * log's Pages_accessed), most of the server's work per job. When the read
 * from there finds nothing, the claim reads from the head at once; and it
 * does at least every CLAIM_POS_AGE seconds, so a job that went in before
 * that position (a more urgent one, one released) waits at most that long
 * behind later ones (docs/jobs.md). The position only orders the claim:
 * what it takes is still only what the condition and SKIP LOCKED let it
 * take. (A batched claim reads from the head: one that came back short
 * from the position could not tell whether jobs were left before it.) */
static int claim_single(my_claiming *m)
{
	cols_of(m->cl, &m->o);
	claim_pos *pos = m->want == 1 ? pos_usable((my_conn *)m->bc, m->cl, &m->o, m->now) : NULL;
	db_res *lk = NULL;
	int pass;
	int rc = single_read(m, pos, &lk, &pass);
	if (!rc) single_take(m, lk, pass);
	db_res_free(lk);
	return rc;
}

/* The next w candidates in claim order, without locking, the ntried keys
 * looked at before excluded (not skipped by OFFSET: rows other claimers
 * take meanwhile leave the eligible set and an OFFSET would then pass over
 * free rows). got gets its columns (the keys), no rows, the first time. */
static int page_candidates(my_claiming *m, const val_t *tried, size_t ntried, long w, db_res **cand)
{
	const db_claim *cl = m->cl;
	sb_reset(&m->q);
	sb_printf(&m->q, "SELECT %s FROM %s WHERE (%s)", cl->key_cols, sb_str(&m->t), cl->where);
	if (ntried) {
		sb_add(&m->q, " AND NOT (");
		key_match(&m->q, m->got->cols, m->got->ncols, ntried);
		sb_addc(&m->q, ')');
	}
	sb_printf(&m->q, " ORDER BY %s LIMIT %ld", sb_str(&m->ord), w);
	int rc = exec2(m->bc, sb_str(&m->q), cl->wparams, cl->nw, tried, ntried * (m->got ? m->got->ncols : 0), cand);
	if (rc || m->got) return rc;
	db_res *got = m->got = xcalloc(1, sizeof *got);
	got->ncols = (*cand)->ncols;
	got->cols = xcalloc(got->ncols ? got->ncols : 1, sizeof(char *));
	for (size_t j = 0; j < got->ncols; j++) got->cols[j] = xstrdup((*cand)->cols[j]);
	return DJC_OK;
}

/* Lock those of cand that are free and still eligible, by key (FOR UPDATE
 * SKIP LOCKED: never waits, never takes a row another claimer holds):
 * their keys go to got (nk per row), the extra column beside them. */
static int page_lock(my_claiming *m, const db_res *cand)
{
	const db_claim *cl = m->cl;
	db_res *got = m->got, *lk = NULL;
	size_t nk = cand->ncols;
	sb_reset(&m->q);
	sb_printf(&m->q, "SELECT %s%s%s FROM %s WHERE ", cl->key_cols, cl->extra ? ", " : "", cl->extra ? cl->extra : "",
		  sb_str(&m->t));
	key_match(&m->q, cand->cols, nk, cand->nrows);
	sb_printf(&m->q, " AND (%s) ORDER BY %s FOR UPDATE SKIP LOCKED", cl->where, sb_str(&m->ord));
	int rc = exec2(m->bc, sb_str(&m->q), cand->cells, cand->nrows * nk, cl->wparams, cl->nw, &lk);
	if (!rc && lk->nrows) {
		got->cells = xrealloc(got->cells, (got->nrows + lk->nrows) * nk * sizeof(val_t));
		if (cl->extra) m->extra = xrealloc(m->extra, (got->nrows + lk->nrows) * sizeof(val_t));
		for (size_t i = 0; i < lk->nrows; i++) {
			memcpy(got->cells + (got->nrows + i) * nk, lk->cells + i * lk->ncols, nk * sizeof(val_t));
			if (cl->extra) m->extra[got->nrows + i] = lk->cells[i * lk->ncols + nk];
		}
		got->nrows += lk->nrows;
	}
	if (!rc) lk->nrows = 0;   /* the cells moved to got */
	db_res_free(lk);
	return rc;
}

/* The paged path: read candidates (page_candidates), lock the free ones
 * (page_lock), and go on with the next candidates while short. */
static int claim_paged(my_claiming *m)
{
	val_t *tried = NULL;   /* the keys looked at */
	size_t ntried = 0, tcap = 0;
	db_res *cand = NULL;
	int rc = DJC_OK;
	for (int page = 0; page < 32; page++) {
		long w = m->want - (m->got ? (long)m->got->nrows : 0);
		if (w > CLAIM_BATCH) w = CLAIM_BATCH;
		if ((rc = page_candidates(m, tried, ntried, w, &cand))) break;
		if (!cand->nrows || !cand->ncols) break;
		if ((rc = page_lock(m, cand))) break;
		if ((long)m->got->nrows >= m->want || (long)cand->nrows < w) break;
		size_t nk = cand->ncols;
		if (ntried + cand->nrows > tcap) {
			tcap = (ntried + cand->nrows) * 2;
			tried = xrealloc(tried, tcap * nk * sizeof(val_t));
		}
		for (size_t i = 0; i < cand->nrows * nk; i++) val_copy(&tried[ntried * nk + i], &cand->cells[i]);
		ntried += cand->nrows;
		db_res_free(cand);
		cand = NULL;
	}
	for (size_t i = 0; m->got && i < ntried * m->got->ncols; i++) val_free(&tried[i]);
	free(tried);
	db_res_free(cand);
	return rc;
}

/* UPDATE the locked keys with cl->set, CLAIM_BATCH keys a statement. */
static int claim_update(my_claiming *m)
{
	int rc = DJC_OK;
	db_res *got = m->got;
	size_t nk = got ? got->ncols : 0;
	for (size_t done = 0; rc == DJC_OK && got && done < got->nrows; done += CLAIM_BATCH) {
		size_t n = got->nrows - done < CLAIM_BATCH ? got->nrows - done : CLAIM_BATCH;
		sb_reset(&m->q);
		sb_printf(&m->q, "UPDATE %s SET %s WHERE ", sb_str(&m->t), m->cl->set);
		key_match(&m->q, got->cols, nk, n);
		rc = exec2(m->bc, sb_str(&m->q), m->cl->sparams, m->cl->ns, got->cells + done * nk, n * nk, NULL);
	}
	return rc;
}

/* The claim's result: the key columns then the extra one, row by row. */
static db_res *claim_result(my_claiming *m)
{
	db_res *got = m->got ? m->got : xcalloc(1, sizeof *got);
	size_t nk = got->ncols;
	if (m->cl->extra) {
		size_t nc = nk + 1;
		val_t *cells = xcalloc(got->nrows * nc + 1, sizeof(val_t));
		for (size_t i = 0; i < got->nrows; i++) {
			memcpy(cells + i * nc, got->cells + i * nk, nk * sizeof(val_t));
			cells[i * nc + nk] = m->extra[i];
		}
		free(got->cells);
		got->cells = cells;
		got->cols = xrealloc(got->cols, nc * sizeof(char *));
		got->cols[nk] = xstrdup("extra");
		got->ncols = nc;
	}
	free(m->extra);
	got->affected = (long long)got->nrows;
	return got;
}

/* A failed claim: its own transaction rolled back (the failure's message
 * kept), what it had read freed. */
static void claim_undo(my_claiming *m, int own)
{
	db_conn *bc = m->bc;
	if (own && bc->in_tx) {
		char keep[sizeof bc->err];
		memcpy(keep, bc->err, sizeof keep);
		my_rollback(bc);
		memcpy(bc->err, keep, sizeof keep);
	}
	for (size_t i = 0; m->extra && m->got && i < m->got->nrows; i++) val_free(&m->extra[i]);
	free(m->extra);
	db_res_free(m->got);
}

/* A claim in three steps, all in one transaction. A single SELECT ... ORDER
 * BY ... LIMIT n FOR UPDATE SKIP LOCKED is not enough on InnoDB: unless an
 * index serves both the condition and the order, it locks every eligible row
 * it reads before sorting, and every other claimer then skips them all and
 * sees an empty queue. So: (1) read the next candidates without locking;
 * (2) lock those of them that are free and still eligible, by key (FOR
 * UPDATE SKIP LOCKED: never waits, never takes a row another claimer holds);
 * go on with the next candidates while short; (3) UPDATE the locked keys. */
static int my_claim(db_conn *bc, const db_claim *cl, db_res **out)
{
	*out = NULL;
	int own = !bc->in_tx;
	int rc = own ? my_begin(bc) : DJC_OK;
	if (rc) return rc;
	my_claiming m = {.bc = bc, .cl = cl, .q = SB_INIT, .t = SB_INIT, .ord = SB_INIT, .want = cl->limit > 0 ? cl->limit : 0};
	db_qtable(bc, &m.t, cl->table);
	/* the keys make the order total */
	if (cl->order && *cl->order) sb_printf(&m.ord, "%s, ", cl->order);
	sb_add(&m.ord, cl->key_cols);
	m.now = mono_now();
	rc = cl->index && m.want <= CLAIM_BATCH ? claim_single(&m) : claim_paged(&m);
	if (!rc) rc = claim_update(&m);
	sb_free(&m.q);
	sb_free(&m.t);
	sb_free(&m.ord);
	if (rc == DJC_OK && own) rc = my_commit(bc);
	if (rc == DJC_OK && m.npos) pos_keep((my_conn *)bc, cl, &m.o, m.npos, m.npos + m.o.no, m.npos_head, m.now);
	for (size_t j = 0; m.npos && j < m.o.n; j++) val_free(&m.npos[j]);
	free(m.npos);
	cols_free(&m.o);
	if (rc) {
		claim_undo(&m, own);
		return rc;
	}
	*out = claim_result(&m);
	return DJC_OK;
}

/* Split "`a`, `b`" (claim key_cols) into its quoted names; 0 when it is not
 * such a list. */
static size_t split_cols(const char *s, char ***out)
{
	*out = NULL;
	size_t n = 0;
	char **v = NULL;
	const char *p = s;
	for (;;) {
		if (*p != '`') goto bad;
		const char *q = p + 1;
		for (;;) {
			if (!*q) goto bad;
			if (*q == '`' && q[1] == '`') { q += 2; continue; }
			if (*q == '`') break;
			q++;
		}
		v = xrealloc(v, (n + 1) * sizeof *v);
		v[n++] = xstrndup(p, (size_t)(q + 1 - p));
		p = q + 1;
		if (!*p) break;
		if (strncmp(p, ", ", 2)) goto bad;
		p += 2;
	}
	*out = v;
	return n;
bad:
	for (size_t i = 0; i < n; i++) free(v[i]);
	free(v);
	return 0;
}

/* A name quoted by my_qi, unquoted. */
static char *unquote(const char *q)
{
	size_t n = strlen(q);
	char *s = xmalloc(n + 1), *o = s;
	for (size_t i = 1; i + 1 < n; i++) {
		*o++ = q[i];
		if (q[i] == '`') i++;
	}
	*o = 0;
	return s;
}

/* The type of a compound statement's variable that holds a value of
 * column qcol of qtable: a number or a time as the column was declared
 * (db_claim.types), for the server resolves `TYPE OF` afresh on every
 * execution (some 4% of its time per job at batch 1, bench/results-
 * 2026-12-04.md); text by `TYPE OF`, which keeps the column's collation
 * (comparisons and the key's own bytes depend on it). */
static void my_column_type(sb_t *b, const coldef *t);

static void var_type(sb_t *q, const coldef *ty, const char *qtable, const char *qcol)
{
	if (ty) switch (ty->t) {
	case T_INT8: case T_INT16: case T_INT32: case T_INT64:
	case T_UINT8: case T_UINT16: case T_UINT32: case T_UINT64:
	case T_FLOAT32: case T_FLOAT64: case T_BOOL: case T_DECIMAL:
	case T_DATE: case T_DATETIME:
		my_column_type(q, ty);
		sb_add(q, "; ");
		return;
	default:
		break;
	}
	sb_printf(q, "TYPE OF %s.%s; ", qtable, qcol);
}

/* A batch as one statement: on MariaDB 10.3+, when the items are DML and at
 * most one claim of a single job (with the index that serves its order, the
 * last item, as a commit's next claim is), all of them run in one anonymous
 * compound statement (BEGIN NOT ATOMIC ... END) that starts the transaction,
 * runs the items, checks each `expect` against ROW_COUNT(), claims (the
 * locking read of my_claim's single path into variables, then the UPDATE of
 * what it locked), commits, and returns one row: each item's row count, then
 * the claimed key and its extra (claim.made + claim.info). One round trip and one statement from the
 * client per commit, as a PostgreSQL pipeline; the statements inside are the
 * same ones db_batch_each would send. It is prepared once per shape and
 * cached like any statement. On an error the exit handler leaves the
 * failing item's index in @djc_item and re-raises the error as it was (its
 * number and message); the transaction is then rolled back here. An item
 * that matched other than `expect` rows raises SQLSTATE 45000 with the
 * message db_batch_each gives, read back as DB_EEXPECT. A lost connection
 * is an unknown outcome (*failed = n), as a lost COMMIT is. Anything else
 * (MySQL, a batched claim, an item that returns rows, DJC_MYSQL_COMPOUND=0):
 * db_batch_each. The claim's extra expression must be an integer; when it comes in two
 * parts (db_claim.extra_rest, made_in), the target is looked up by the
 * claimed key's value after the read (claim.made, statements.c). The local
 * variables are named djc$...: a stored program's variable shadows a
 * column of the same name, and no attribute name holds a $. */
/* A compound statement under way (my_batch). */
typedef struct my_compound {
	my_conn *c;
	const db_item *items;
	size_t n;
	const db_claim *cl;      /* the claim (the last item), or NULL */
	char **kq;               /* its key columns, quoted, nk of them */
	size_t nk;
	claim_cols o;            /* its order columns */
	claim_pos *pos;          /* where this connection's last claim ended, or NULL */
	double now;
	const char *extra, *made_in;   /* the claim's extra, in two parts when it has them */
	sb_t q, t, mt;           /* the statement; the claim's table and made_in, quoted */
	val_t *p;                /* its parameters (shallow: nothing here is freed) */
	size_t np, k;            /* how many; how many written */
} my_compound;

/* The most parameters one prepared statement may have (MariaDB's and
 * MySQL's limit: a larger one fails "Prepared statement contains too many
 * placeholders"). */
#define MY_MAX_PARAMS 65535

/* 1 when items[0..n) can run as one compound statement (my_batch): DML
 * without ';', and at most one claim, of one job, with an index, last;
 * *cl that claim. The compound statement binds the parameters of every
 * item: a commit whose rows need more than one statement may have
 * (statements of a make's rows are cut at ~30,000 parameters each, and a
 * make may return 200,000 part rows) runs its items one by one. */
static int compound_fits(const my_conn *c, const db_item *items, size_t n, const db_claim **cl)
{
	int fits = c->compound && n > 0;
	size_t np = 0;
	*cl = NULL;
	for (size_t i = 0; i < n && fits; i++) {
		if (items[i].claim) {
			*cl = items[i].claim;
			fits = i == n - 1 && (*cl)->limit == 1 && (*cl)->index && items[i].expect < 0;
			/* the claim's own and its read from a position (compound_write: at
			 * most twice its conditions, plus the order columns) */
			np += 2 * ((*cl)->nw + (*cl)->ns) + 256;
		} else {
			fits = items[i].sql && is_dml(items[i].sql) && !strchr(items[i].sql, ';');
			np += items[i].np;
		}
	}
	return fits && np <= MY_MAX_PARAMS;
}

/* The head: the variables (per item its row count; the claimed key, extra
 * and order columns, typed as their columns), the exit handler, and START
 * TRANSACTION. */
static void compound_head(my_compound *m)
{
	sb_t *q = &m->q;
	sb_add(q, COMPOUND_HEAD "DECLARE djc$i INT DEFAULT 0; DECLARE djc$m VARCHAR(255); ");
	for (size_t i = 0; i < m->n; i++) sb_printf(q, "DECLARE djc$c%zu BIGINT DEFAULT 0; ", i);
	if (m->cl) {
		const db_claim *cl = m->cl;
		db_qtable(&m->c->base, &m->t, cl->table);
		const coldef *ty = cl->types && cl->ntypes == m->nk + m->o.no ? cl->types : NULL;
		for (size_t j = 0; j < m->nk; j++) {
			sb_printf(q, "DECLARE djc$k%zu ", j);
			var_type(q, ty ? &ty[j] : NULL, sb_str(&m->t), m->kq[j]);
		}
		if (m->extra) sb_add(q, "DECLARE djc$x BIGINT; ");
		for (size_t j = 0; j < m->o.no; j++) {
			sb_printf(q, "DECLARE djc$o%zu ", j);
			var_type(q, ty ? &ty[m->nk + j] : NULL, sb_str(&m->t), m->o.oc[j]);
		}
		sb_add(q, "DECLARE djc$h INT DEFAULT 0; ");
	}
	sb_add(q, "DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN SET @djc_item = djc$i; RESIGNAL; END; START TRANSACTION; ");
}

/* Item i, a statement: run, its row count kept, checked against expect. */
static void compound_stmt(my_compound *m, size_t i)
{
	const db_item *it = &m->items[i];
	sb_printf(&m->q, "%s; SET djc$c%zu = ROW_COUNT(); ", it->sql, i);
	if (it->expect >= 0)
		sb_printf(&m->q, "IF djc$c%zu <> %ld THEN SET djc$m = CONCAT('batch item %zu changed ', djc$c%zu, ' rows, not %ld'); "
			  "SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = djc$m; END IF; ",
			  i, it->expect, i, i, it->expect);
	if (it->np) memcpy(m->p + m->k, it->params, it->np * sizeof *m->p);
	m->k += it->np;
}

/* The claim's locking read into variables: from this connection's
 * position when it has one (my_claim), and from the head when that finds
 * nothing. */
static void compound_read(my_compound *m)
{
	const db_claim *cl = m->cl;
	sb_t *q = &m->q, ix = SB_INIT;
	my_qi(&ix, cl->index);
	for (int from = m->pos ? 0 : 1; from < 2; from++) {
		if (from == 1 && m->pos) sb_add(q, "IF djc$k0 IS NULL THEN ");
		sb_printf(q, "SELECT %s%s%s", cl->key_cols, m->extra ? ", " : "", m->extra ? m->extra : "");
		for (size_t j = 0; j < m->o.no; j++) sb_printf(q, ", %s", m->o.oc[j]);
		sb_add(q, " INTO ");
		for (size_t j = 0; j < m->nk; j++) sb_printf(q, "%sdjc$k%zu", j ? ", " : "", j);
		if (m->extra) sb_add(q, ", djc$x");
		for (size_t j = 0; j < m->o.no; j++) sb_printf(q, ", djc$o%zu", j);
		sb_printf(q, " FROM %s FORCE INDEX (%s) WHERE (%s)", sb_str(&m->t), sb_str(&ix), cl->where);
		if (cl->nw) memcpy(m->p + m->k, cl->wparams, cl->nw * sizeof *m->p);
		m->k += cl->nw;
		if (from == 0) m->k += pos_cond(q, &m->o, m->pos, m->p + m->k);
		sb_printf(q, " ORDER BY %s%s%s LIMIT 1 FOR UPDATE SKIP LOCKED; ", cl->order && *cl->order ? cl->order : "",
			  cl->order && *cl->order ? ", " : "", cl->key_cols);
		if (from == 1) sb_add(q, m->pos ? "SET djc$h = 1; END IF; " : "SET djc$h = 1; ");
	}
	sb_free(&ix);
}

/* Item i, the claim: the locking read, the target looked up by the key's
 * value (made_in), then the UPDATE of what it locked. */
static void compound_claim(my_compound *m, size_t i)
{
	const db_claim *cl = m->cl;
	sb_t *q = &m->q;
	compound_read(m);
	if (m->made_in) {
		db_qtable(&m->c->base, &m->mt, m->made_in);
		sb_printf(q, "IF djc$k0 IS NOT NULL AND EXISTS (SELECT 1 FROM %s WHERE ", sb_str(&m->mt));
		for (size_t j = 0; j < m->nk; j++) sb_printf(q, "%s%s = djc$k%zu", j ? " AND " : "", m->kq[j], j);
		sb_add(q, ") THEN SET djc$x = djc$x + 1; END IF; ");
	}
	sb_printf(q, "IF djc$k0 IS NOT NULL THEN UPDATE %s SET %s WHERE ", sb_str(&m->t), cl->set);
	for (size_t j = 0; j < m->nk; j++) sb_printf(q, "%s%s = djc$k%zu", j ? " AND " : "", m->kq[j], j);
	sb_printf(q, "; SET djc$c%zu = 1; END IF; ", i);
	if (cl->ns) memcpy(m->p + m->k, cl->sparams, cl->ns * sizeof *m->p);
	m->k += cl->ns;
}

/* The whole statement into m->q, its parameters into m->p. */
static void compound_write(my_compound *m)
{
	for (size_t i = 0; i < m->n; i++) m->np += m->items[i].claim ? m->cl->nw + m->cl->ns : m->items[i].np;
	if (m->pos) m->np += m->cl->nw + 2 * m->o.n - 1;   /* the read from the position, then from the head */
	m->p = xcalloc(m->np + 1, sizeof *m->p);
	compound_head(m);
	for (size_t i = 0; i < m->n; i++) {
		sb_printf(&m->q, "SET djc$i = %zu; ", i);
		if (m->items[i].claim) compound_claim(m, i);
		else compound_stmt(m, i);
	}
	sb_printf(&m->q, "SET djc$i = %zu; COMMIT; SELECT ", m->n);
	for (size_t i = 0; i < m->n; i++) sb_printf(&m->q, "%sdjc$c%zu", i ? ", " : "", i);
	for (size_t j = 0; j < m->nk; j++) sb_printf(&m->q, ", djc$k%zu", j);
	if (m->extra) sb_add(&m->q, ", djc$x");
	for (size_t j = 0; j < m->o.no; j++) sb_printf(&m->q, ", djc$o%zu", j);
	if (m->cl) sb_add(&m->q, ", djc$h");
	sb_add(&m->q, "; END");
}

/* Run the statement; one that was never sent (the connection was gone)
 * runs again on a new connection. */
static int compound_run(my_compound *m, db_res **r)
{
	my_conn *c = m->c;
	int retry = 0, rc = ensure(c);
	if (rc) return rc;
	c->base.in_tx = 1;   /* from here a lost connection is not retried blindly */
	rc = run(c, sb_str(&m->q), m->p, m->np, NULL, r, &retry);
	if (rc == DJC_ECONN && retry) {   /* never sent: nothing happened */
		c->base.in_tx = 0;
		if (!(rc = reconnect(c))) {
			c->base.in_tx = 1;
			rc = run(c, sb_str(&m->q), m->p, m->np, NULL, r, &retry);
		}
	}
	return rc;
}

/* A failed compound statement (rc): rolled back, *failed the item the
 * handler named in @djc_item (n: unknown), an `expect` not met as
 * DB_EEXPECT worded as db_batch_each words it. */
static int compound_failed(my_conn *c, size_t n, int rc, size_t *failed)
{
	db_conn *bc = &c->base;
	*failed = n;
	if (rc == DJC_ECONN) return rc;   /* the COMMIT inside may have run: unknown */
	char keep[sizeof bc->err];
	memcpy(keep, bc->err, sizeof keep);
	if (!simple(c, "ROLLBACK")) {
		db_res *w = NULL;
		int retry2 = 0;
		if (!run(c, "SELECT @djc_item", NULL, 0, NULL, &w, &retry2) && w->nrows == 1 && w->ncols == 1 &&
		    w->cells[0].t == DJC_INT && w->cells[0].i >= 0 && (size_t)w->cells[0].i <= n)
			*failed = (size_t)w->cells[0].i;
		db_res_free(w);
		simple(c, "SET @djc_item = NULL");   /* a later failure before the handler ran must not read it */
	}
	memcpy(bc->err, keep, sizeof keep);
	static const char expect_msg[] = "mysql: batch item ";
	if (*failed < n && !strncmp(bc->err, expect_msg, sizeof expect_msg - 1)) {
		memmove(bc->err, bc->err + 7, strlen(bc->err + 7) + 1);   /* as db_batch_each words it */
		rc = DB_EEXPECT;
	}
	return rc;
}

/* Each item's result from the statement's one row r: its row count; the
 * claim's, the claimed key and extra (moved out of r). */
static void compound_results(my_compound *m, db_res *r, db_res **res)
{
	size_t n = m->n, nk = m->nk, nx = m->extra ? 1 : 0;
	for (size_t i = 0; res && i < n; i++) {
		db_res *e = xcalloc(1, sizeof *e);
		e->affected = db_cell_int(r, 0, i);
		if (m->items[i].claim) {
			size_t nc = nk + nx;
			e->ncols = nc;
			e->cols = xcalloc(nc, sizeof(char *));
			for (size_t j = 0; j < nk; j++) e->cols[j] = unquote(m->kq[j]);
			if (nx) e->cols[nk] = xstrdup("extra");
			e->nrows = e->affected ? 1 : 0;
			e->cells = xcalloc(nc, sizeof(val_t));
			for (size_t j = 0; e->nrows && j < nc; j++) {
				e->cells[j] = r->cells[n + j];
				r->cells[n + j] = val_null();   /* moved */
			}
		} else
			e->cols = xcalloc(1, sizeof(char *));
		res[i] = e;
	}
}

static int my_batch(db_conn *bc, const db_item *items, size_t n, db_res **res, size_t *failed)
{
	my_conn *c = (my_conn *)bc;
	*failed = 0;
	my_compound m = {.c = c, .items = items, .n = n, .q = SB_INIT, .t = SB_INIT, .mt = SB_INIT};
	int fits = compound_fits(c, items, n, &m.cl);
	const db_claim *cl = m.cl;
	if (fits && cl && !(m.nk = split_cols(cl->key_cols, &m.kq))) fits = 0;
	if (!fits) return db_batch_each(bc, items, n, res, failed);
	m.now = mono_now();
	if (cl) {
		cols_of(cl, &m.o);
		m.pos = pos_usable(c, cl, &m.o, m.now);
	}
	/* the claim's extra in two parts when it has them: the row's part read
	 * with the key, the target looked up by the key's value after it (a
	 * correlated subquery would cost a temporary table per claim: the
	 * server's subquery cache) */
	m.extra = cl ? cl->extra : NULL;
	if (m.extra && cl->extra_rest && cl->made_in) {
		m.extra = cl->extra_rest;
		m.made_in = cl->made_in;
	}
	compound_write(&m);
	db_res *r = NULL;
	int rc = compound_run(&m, &r);
	free(m.p);
	sb_free(&m.q);
	sb_free(&m.t);
	sb_free(&m.mt);
	size_t nk = m.nk, nx = m.extra ? 1 : 0;   /* then the order columns, then djc$h */
	size_t ncol = n + nk + nx + (cl ? m.o.no + 1 : 0);
	if (!rc && (r->nrows != 1 || r->ncols != ncol)) {
		snprintf(bc->err, sizeof bc->err, "mysql: a batch returned %zu rows of %zu columns, not 1 of %zu", r->nrows,
			 r->ncols, ncol);
		rc = DJC_ERROR;
		*failed = n;
	} else if (rc)
		rc = compound_failed(c, n, rc, failed);
	bc->in_tx = 0;
	if (!rc && cl && db_cell_int(r, 0, n - 1))   /* claimed: where it was, and whether read from the head */
		pos_keep(c, cl, &m.o, r->cells + n + nk + nx, r->cells + n, db_cell_int(r, 0, n + nk + nx + m.o.no) != 0, m.now);
	if (!rc) compound_results(&m, r, res);
	db_res_free(r);
	for (size_t j = 0; j < nk; j++) free(m.kq[j]);
	free(m.kq);
	cols_free(&m.o);
	return rc;
}

static int my_sock(db_conn *bc)
{
	my_conn *c = (my_conn *)bc;
	return c->db && !c->broken ? (int)mysql_get_socket(c->db) : -1;
}

static int64_t my_connection_id(db_conn *bc)
{
	my_conn *c = (my_conn *)bc;
	return (int64_t)(c->db ? mysql_thread_id(c->db) : c->thread_id);
}

/* This connection's own session: CONNECTION_ID() when the server lists it
 * with the TCP port of our socket (not so through a proxy such as ProxySQL
 * or MaxScale, or over a unix socket: 0). One read, only for a connection
 * that publishes its session (db_publish_session). */
static int64_t my_session_id(db_conn *bc)
{
	my_conn *c = (my_conn *)bc;
	if (!c->db || c->broken) return 0;
	db_res *r = NULL;
	int retry = 0;
	int64_t id = 0;
	if (!run(c, "SELECT CONNECTION_ID(), HOST FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()", NULL, 0,
		 NULL, &r, &retry) &&
	    r->nrows == 1) {
		const char *host = db_cell_text(r, 0, 1), *colon = host ? strrchr(host, ':') : NULL;
		if (colon && db_socket_port_is((int)mysql_get_socket(c->db), strtol(colon + 1, NULL, 10)))
			id = db_cell_int(r, 0, 0);
	}
	db_res_free(r);
	return id;
}

static void my_column_type(sb_t *b, const coldef *t)
{
	switch (t->t) {
	case T_INT8: sb_add(b, "tinyint"); break;
	case T_INT16: sb_add(b, "smallint"); break;
	case T_INT32: sb_add(b, "int"); break;
	case T_INT64: sb_add(b, "bigint"); break;
	case T_UINT8: sb_add(b, "tinyint unsigned"); break;
	case T_UINT16: sb_add(b, "smallint unsigned"); break;
	case T_UINT32: sb_add(b, "int unsigned"); break;
	case T_UINT64: sb_add(b, "bigint unsigned"); break;
	case T_FLOAT32: sb_add(b, "float"); break;
	case T_FLOAT64: sb_add(b, "double"); break;
	case T_BOOL: sb_add(b, "tinyint"); break;
	case T_DECIMAL: sb_printf(b, "decimal(%d,%d)", t->p, t->s); break;
	case T_CHAR: sb_printf(b, "char(%d)", t->p > 0 ? t->p : 1); break;
	case T_VARCHAR: sb_printf(b, "varchar(%d)", t->p > 0 ? t->p : 255); break;
	case T_ENUM: sb_add(b, "varchar(255)"); break;
	case T_DATE: sb_add(b, "date"); break;
	case T_DATETIME:
		if (t->p > 0) sb_printf(b, "datetime(%d)", t->p > 6 ? 6 : t->p);
		else sb_add(b, "datetime");
		break;
	case T_UUID: sb_add(b, "char(36)"); break;
	case T_BYTES: sb_add(b, "longblob"); break;
	case T_JSON: /* text kept verbatim (MariaDB's json is longtext anyway) */
	case T_TEXT: sb_add(b, "longtext"); break;
	}
}

/* The JSON_TABLE column type for column q of in, typed as my_exec binds
 * its values one by one (text as the column's type, in the connection's
 * collation); 0 when they are not of one type or cannot travel as text
 * (bytes, json). */
static int my_in_type(my_conn *c, const db_in *in, size_t q, sb_t *b)
{
	djc_type vt = in->vals[q].t;
	for (size_t r = 1; r < in->n; r++)
		if (in->vals[r * in->k + q].t != vt) return 0;
	const coldef *t = in->types[q];
	if (vt == DJC_INT || vt == DJC_BOOL) sb_add(b, "bigint");
	else if (vt == DJC_UINT) sb_add(b, "bigint unsigned");
	else if (vt == DJC_FLOAT) sb_add(b, "double");
	else if (vt != DJC_TEXT || t->t == T_JSON || t->t == T_BYTES || t->t == T_TEXT) return 0;
	else if (t->t == T_DATETIME) sb_add(b, "datetime(6)");   /* a restriction's value may have more digits than the column keeps (value_cmp) */
	else if (t->t == T_DECIMAL || t->t == T_DATE) my_column_type(b, t);
	else
		sb_printf(b, "varchar(%d) CHARACTER SET utf8mb4 COLLATE %s",
			  t->t == T_UUID ? 36 : t->t == T_ENUM || t->p <= 0 ? 255 : t->p, c->collation);
	return 1;
}

/* in_rows (db.h): the rows as one JSON text (every value a string, as
 * text converts exactly to every type), read by JSON_TABLE: "(a, b) IN
 * (SELECT djc_jt.j0, djc_jt.j1 FROM JSON_TABLE(?, '$[*]' COLUMNS (j0 bigint
 * PATH '$[0]' ERROR ON ERROR, ...)) AS djc_jt)". Not on a server without
 * JSON_TABLE. */
static int my_in_rows(db_conn *bc, const db_in *in, sb_t *sql, val_t *out, size_t *nout)
{
	my_conn *c = (my_conn *)bc;
	if (!c->json_table) return 0;
	sb_t cols = SB_INIT, j = SB_INIT;
	for (size_t q = 0; q < in->k; q++) {
		sb_printf(&cols, "%sj%zu ", q ? ", " : "", q);
		if (!my_in_type(c, in, q, &cols)) { sb_free(&cols); return 0; }
		sb_printf(&cols, " PATH '$[%zu]' ERROR ON ERROR", q);
	}
	char num[40];
	sb_addc(&j, '[');
	for (size_t i = 0; i < in->n * in->k; i++) {
		const val_t *v = &in->vals[i];
		sb_add(&j, i ? (i % in->k == 0 ? "],[" : ",") : "[");
		if (v->t == DJC_INT || v->t == DJC_BOOL) snprintf(num, sizeof num, "%" PRId64, v->i);
		else if (v->t == DJC_UINT) snprintf(num, sizeof num, "%" PRIu64, v->u);
		else if (v->t == DJC_FLOAT) snprintf(num, sizeof num, "%.17g", v->f);
		if (v->t == DJC_TEXT) db_json_str(&j, v->s, v->n);
		else db_json_str(&j, num, strlen(num));
	}
	sb_add(&j, "]]");
	sb_add(sql, "(");
	for (size_t q = 0; q < in->k; q++) sb_printf(sql, "%s%s", q ? ", " : "", in->cols[q]);
	sb_printf(sql, ") %sIN (SELECT ", in->neg ? "NOT " : "");
	for (size_t q = 0; q < in->k; q++) sb_printf(sql, "%sdjc_jt.j%zu", q ? ", " : "", q);
	sb_printf(sql, " FROM JSON_TABLE(?, '$[*]' COLUMNS (%s)) AS djc_jt)", sb_str(&cols));
	sb_free(&cols);
	out[0] = val_textn(sb_str(&j), j.len);
	sb_free(&j);
	*nout = 1;
	return 1;
}

static void my_now(sb_t *b) { sb_add(b, "UTC_TIMESTAMP(3)"); }
static void my_now_plus(sb_t *b) { sb_add(b, "TIMESTAMPADD(MICROSECOND, ROUND(? * 1000000), UTC_TIMESTAMP(3))"); }

/* A DELETE that reads the table with index (db.h, delete_using): the
 * multiple-table form, the one DELETE that takes an index hint. */
static void my_delete_using(db_conn *bc, sb_t *q, const char *table, const char *index)
{
	sb_add(q, "DELETE djc_d FROM ");
	db_qtable(bc, q, table);
	sb_add(q, " djc_d FORCE INDEX (");
	my_qi(q, index);
	sb_addc(q, ')');
}

/* Schema changes (db.h, ddl_dialect): MariaDB/MySQL commit DDL
 * implicitly, so no transaction can hold anything across a CREATE TABLE: a
 * named session lock (GET_LOCK, freed when the connection ends) serialises
 * instead, and the caller undoes its own steps on failure. */
static const ddl_dialect my_ddl = {
	.driver = "mysql",
	.transactional = 0,
	/* -- name: SchemaLock: 1 when taken, 0 after 120 s, NULL on error;
	 * the name is per database (at most 64 characters) */
	.lock = "SELECT GET_LOCK(CONCAT('djc_ddl_', MD5(DATABASE())), 120)",
	.lock_returns_1 = 1,
	.unlock = "SELECT RELEASE_LOCK(CONCAT('djc_ddl_', MD5(DATABASE())))",
	.columns = "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() "
		   "AND table_name = ? ORDER BY ordinal_position",
	.drop_many = 1,
	.alter_combined = 1,
	.backslash_escapes = 1,   /* the session's sql_mode has no NO_BACKSLASH_ESCAPES */
	.max_name = 64,
};

static const db_catalog_sql my_catalog;   /* at the end of this file */

const db_driver db_mysql_driver = {
	.version = DB_DRIVER_VERSION,
	.name = "mysql",
	.open = my_open,
	.close = my_close,
	.exec = my_exec,
	.exec_digest = my_exec_digest,
	.exec_stream = my_exec_stream,
	.begin = my_begin,
	.commit = my_commit,
	.rollback = my_rollback,
	.claim = my_claim,
	.batch = my_batch,
	.connection_id = my_connection_id,
	.session_id = my_session_id,
	.socket = my_sock,
	.wait_bound_changed = my_wait_bound_changed,
	.quote_ident = my_qi,
	.delete_using = my_delete_using,
	/* single-table UPDATE/DELETE: no semi-join (MariaDB 10.11), so a
	 * JSON_TABLE key list was read once per row (db.h) */
	.write_join = ", (SELECT 1) AS djc_one",
	.in_rows = my_in_rows,
	.column_type = my_column_type,
	.now = my_now,
	.now_plus = my_now_plus,
	.insert_ignore_head = "INSERT IGNORE INTO",
	.insert_ignore_tail = "",
	.ddl = &my_ddl,
	.table_suffix = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",   /* per server: my_conn.suffix */
	.session_sql = "SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ?",
	.session_end_sql = "KILL CONNECTION ?",
	.catalog = &my_catalog,
	.drop_created = my_drop_created,
	.index_count_sql = "SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? "
			   "AND INDEX_NAME IN (?, ?) AND SEQ_IN_INDEX = 1",
};

/* ------------------------------------------------------------ catalog
 * The catalog of a DataJoint schema (catalog.h, `djc adopt`):
 * information_schema, the schema bound. Foreign keys in the order they
 * were declared: MariaDB names unnamed ones <table>_ibfk_<n>. */
static const db_catalog_sql my_catalog = {
	.exists = "SELECT 1 FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
	.tables = "SELECT TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES "
		  "WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
	.columns = "SELECT c.TABLE_NAME, c.COLUMN_NAME, c.COLUMN_TYPE, c.COLUMN_COMMENT, c.IS_NULLABLE = 'YES', "
		   "c.COLUMN_DEFAULT, c.COLLATION_NAME, NULL, EXISTS (SELECT 1 FROM information_schema.CHECK_CONSTRAINTS k "
		   "WHERE k.CONSTRAINT_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME "
		   "AND k.CHECK_CLAUSE = CONCAT('json_valid(`', c.COLUMN_NAME, '`)')) "
		   "FROM information_schema.COLUMNS c WHERE c.TABLE_SCHEMA = ? ORDER BY c.TABLE_NAME, c.ORDINAL_POSITION",
	.pk = "SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE "
	      "WHERE TABLE_SCHEMA = ? AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY TABLE_NAME, ORDINAL_POSITION",
	.fks = "SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, "
	       "REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE "
	       "WHERE TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME IS NOT NULL "
	       "ORDER BY TABLE_NAME, LENGTH(CONSTRAINT_NAME), CONSTRAINT_NAME, ORDINAL_POSITION",
};
