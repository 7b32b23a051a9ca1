/* serve.c - the serve protocol (contract in serve.h, messages in
 * docs/serve-protocol.md): a make program kept for many keys. djc writes
 * one JSON line per message to its stdin (hello, key, rows); it answers
 * with JSON lines on stdout (hello, result rows, fetch requests, a closing
 * done or error per key). Its stderr is kept per key for the error stack.
 * The program runs through the process module (proc.c), so its whole tree
 * is stopped with it. Nothing here writes to the database: rows are only
 * staged and checked, as for the per-key protocol (make.c). */
#include "serve.h"
#include "util/clock.h"
#include "util/config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STDERR_TAIL 4000           /* its stderr kept per key */
#define STACK_MAX 65536            /* its own stack (an error's "stack"), at most */
#define RESTART_WINDOW 60.0        /* jobs.serve_restarts counts restarts in this many seconds */
#define AHEAD_MAX 1000             /* keys ahead a program may ask for, at most (jobs.reserve_batch's cap) */
#define GO_LINE "{\"_djc\":\"go\"}\n"
#define SKIP_LINE "{\"_djc\":\"skip\"}\n"
#define DONE_LINE "{\"_djc\":\"done\"}"   /* without its newline */
#define NEXT_LINE "{\"_djc\":\"next\"}"   /* without its newline */
#define AHEAD_QUICK 0.005          /* keys go ahead only after a key that took less (seconds) */
#define PARENTS_AHEAD_MAX (1 << 20) /* parents go with keys sent ahead only while those of the keys
                                     * in flight hold less (bytes) */

/* What was read of one key's parents to send before it (parents): the
 * tables, in order, and per table the read recorded (NULL when its fetch
 * failed), checked at the commit only when the program says it used them
 * (its closing line's "parents"). */
typedef struct sent_parents {
	char **names;
	read_set **reads;
	size_t n;
	size_t bytes;   /* what was written of them */
} sent_parents;

static void names_free(char ***v, size_t *n)
{
	for (size_t i = 0; i < *n; i++) free((*v)[i]);
	free(*v);
	*v = NULL;
	*n = 0;
}

/* Add name to v[0..n) unless it is there. */
static void names_add(char ***v, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], name)) return;
	*v = xrealloc(*v, (*n + 1) * sizeof(char *));
	(*v)[(*n)++] = xstrdup(name);
}

static int names_have(char *const *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], name)) return 1;
	return 0;
}

static void sent_parents_free(sent_parents *sp)
{
	for (size_t i = 0; i < sp->n; i++) {
		free(sp->names[i]);
		read_set_free(sp->reads[i]);
	}
	free(sp->names);
	free(sp->reads);
	memset(sp, 0, sizeof *sp);
}

struct serve {
	char **argv;
	proc *p;           /* the program; NULL before the first key and once it ended */
	int hello;         /* its hello was read */
	long served;       /* keys it closed (done or error) */
	int counted;       /* its next start is a restart that counts (it failed or was stopped) */
	long starts;
	double *restarts;  /* when counted restarts happened (monotonic seconds) */
	size_t nrestarts;
	int version;       /* the protocol version of its hello */
	long ahead;        /* keys it takes beyond the one in flight (a version 2 hello's "ahead") */
	char **sent;       /* the key lines it was sent and has not closed, oldest first */
	sent_parents *pre; /* per key in sent: its parents' rows sent before it (parents) */
	size_t pre_bytes;  /* their bytes in all (the parents of keys in flight) */
	size_t nsent, capsent;
	double last;       /* seconds its last key took, from its turn to its closing line */
	int binary;        /* its hello asked for binary values: raw bytes beside the JSON lines */
	int types;         /* its hello asked for attribute types (table messages, rows headers) */
	int parents;       /* its hello asked for each key's parents' rows before the key */
	char **want;       /* the parents its last closed key read by the key: those sent with the next */
	size_t nwant;
	char **described;  /* the tables whose types it was sent (a table message) */
	size_t ndescribed;
	size_t max_out;    /* what it may write for one key (jobs.max_output) */
};

serve *serve_new(char *const *argv)
{
	serve *s = xcalloc(1, sizeof *s);
	size_t n = 0;
	while (argv[n]) n++;
	s->argv = xcalloc(n + 1, sizeof(char *));
	s->last = RESTART_WINDOW;
	s->max_out = make_max_output();
	for (size_t i = 0; i < n; i++) s->argv[i] = xstrdup(argv[i]);
	return s;
}

/* Stop the program now (its whole tree: SIGTERM, SIGKILL after grace),
 * wait for its end (bounded: proc.c) and keep its status; its stderr
 * stays readable until proc_free. */
static void stop_program(serve *s, int reason, double grace, proc_status *st)
{
	proc_stop(s->p, reason, grace);
	proc_wait(s->p, NULL, NULL, grace, st);
}

static void drop_program(serve *s)
{
	proc_free(s->p);
	s->p = NULL;
	s->hello = 0;
	s->served = 0;
	s->version = 0;
	s->ahead = 0;
	s->binary = s->types = s->parents = 0;
	names_free(&s->want, &s->nwant);
	for (size_t i = 0; i < s->ndescribed; i++) free(s->described[i]);
	free(s->described);
	s->described = NULL;
	s->ndescribed = 0;
	s->last = RESTART_WINDOW;   /* a new program is not known to be quick */
	for (size_t i = 0; i < s->nsent; i++) {
		free(s->sent[i]);
		sent_parents_free(&s->pre[i]);
	}
	s->nsent = 0;
	s->pre_bytes = 0;
}

/* Send a key line (taken) and remember it as in flight. */
static void send_line(serve *s, char *line)
{
	if (s->nsent == s->capsent) {
		s->capsent = s->capsent ? 2 * s->capsent : 8;
		s->sent = xrealloc(s->sent, s->capsent * sizeof(char *));
		s->pre = xrealloc(s->pre, s->capsent * sizeof *s->pre);
	}
	proc_input(s->p, line, strlen(line), 0);
	memset(&s->pre[s->nsent], 0, sizeof *s->pre);
	s->sent[s->nsent++] = line;
}

/* t's attributes and their types as a JSON object ({"a":"int32",...}). */
static void types_json(sb_t *b, const table *t)
{
	sb_addc(b, '{');
	for (size_t i = 0; i < t->nattrs; i++) {
		if (i) sb_addc(b, ',');
		json_quote(b, t->attrs[i].name, strlen(t->attrs[i].name));
		sb_addc(b, ':');
		json_quote(b, t->attrs[i].type_text, strlen(t->attrs[i].type_text));
	}
	sb_addc(b, '}');
}

void table_message(sb_t *b, djc_conn *c, const table *t)
{
	sb_add(b, "{\"_djc\":\"table\",\"table\":");
	json_quote(b, t->name, strlen(t->name));
	sb_add(b, ",\"types\":");
	types_json(b, t);
	sb_add(b, ",\"parts\":{");
	int first = 1;
	for (size_t i = 0; i < c->pipe->n; i++) {
		const table *p = c->pipe->tables[i];
		if (p->master != t) continue;
		const char *dot = strrchr(p->name, '.');
		const char *nm = dot ? dot + 1 : p->name;
		if (!first) sb_addc(b, ',');
		first = 0;
		json_quote(b, nm, strlen(nm));
		sb_addc(b, ':');
		types_json(b, p);
	}
	sb_add(b, "}}\n");
}

/* Before the first key of t a program that asked for types is sent t's
 * table message (table_message). */
static void describe(serve *s, djc_conn *c, const table *t)
{
	if (!s->types) return;
	for (size_t i = 0; i < s->ndescribed; i++)
		if (!strcmp(s->described[i], t->name)) return;
	s->described = xrealloc(s->described, (s->ndescribed + 1) * sizeof(char *));
	s->described[s->ndescribed++] = xstrdup(t->name);
	sb_t b = SB_INIT;
	table_message(&b, c, t);
	proc_input(s->p, b.s, b.len, 0);
	sb_free(&b);
}

/* The oldest key in flight was closed. */
static void pop_sent(serve *s)
{
	if (!s->nsent) return;
	free(s->sent[0]);
	s->pre_bytes -= s->pre[0].bytes;
	sent_parents_free(&s->pre[0]);
	memmove(s->sent, s->sent + 1, (s->nsent - 1) * sizeof(char *));
	memmove(s->pre, s->pre + 1, (s->nsent - 1) * sizeof *s->pre);
	s->nsent--;
}

void serve_free(serve *s)
{
	if (!s) return;
	if (s->p) {
		/* end of its input: a serve program exits then; one that does
		 * not gets jobs.stop_grace to do so, then SIGTERM and SIGKILL.
		 * One that holds keys sent ahead that djc will not take is
		 * stopped at once (their rows would go nowhere) */
		double grace = config_double("jobs.stop_grace");
		proc_input(s->p, "", 0, 1);
		if (s->nsent) {
			proc_status st;
			stop_program(s, PROC_STOP_INTERRUPT, grace, &st);
		}
		double until = mono_now() + grace;
		while (!proc_pump(s->p, PROC_POLL_MS))
			if (mono_now() >= until) {
				proc_status st;
				stop_program(s, PROC_STOP_INTERRUPT, grace, &st);
				break;
			}
		drop_program(s);
	}
	for (char **a = s->argv; *a; a++) free(*a);
	free(s->argv);
	free(s->restarts);
	free(s->sent);
	free(s->pre);
	free(s);
}

/* Start the program and send djc's hello. A restart that counts is
 * refused beyond jobs.serve_restarts in the last minute. -1 with
 * res->fatal and res->message when it cannot (or may not) be started. */
static int start(serve *s, djc_conn *c, make_result *res)
{
	if (s->counted) {
		double now = mono_now();
		size_t k = 0;
		for (size_t i = 0; i < s->nrestarts; i++)
			if (now - s->restarts[i] < RESTART_WINDOW) s->restarts[k++] = s->restarts[i];
		s->nrestarts = k;
		long limit = config_long("jobs.serve_restarts");
		if ((long)k >= limit) {
			res->fatal = 1;
			res->message = xasprintf("serve program '%s' failed and was restarted %zu time%s in the last minute "
						 "(jobs.serve_restarts is %ld): this worker stops",
						 s->argv[0], k, k == 1 ? "" : "s", limit);
			return -1;
		}
		s->restarts = xrealloc(s->restarts, (k + 1) * sizeof(double));
		s->restarts[s->nrestarts++] = now;
	}
	size_t ne = 0;
	char *own_env = NULL;
	char **env = make_env_base(c, 1, &ne, &own_env);
	env = xrealloc(env, (ne + 2) * sizeof(char *));
	char ver[] = "DJC_SERVE=1";   /* the serve protocol (its version is in the hellos) */
	env[ne++] = ver;
	env[ne] = NULL;
	/* the cap of the process module is a backstop: a key's output is
	 * counted here, line by line, and stopped at s->max_out first */
	proc_spec spec = {s->argv, env, s->max_out + (1UL << 20), STDERR_TAIL};
	proc_status ps;
	int rc = proc_spawn(&s->p, &spec, &ps);
	make_env_free(env);
	free(own_env);
	if (rc) {
		res->fatal = 1;
		if (ps.spawn_failed == PROC_SPAWN_EXEC)
			res->message = xasprintf("cannot run serve program '%s': %s", s->argv[0], strerror(ps.spawn_errno));
		else
			res->message = xasprintf("cannot start serve program '%s': %s: %s", s->argv[0],
						 ps.spawn_failed == PROC_SPAWN_PIPES ? "cannot create pipes" : "cannot start its supervisor",
						 strerror(ps.spawn_errno));
		return -1;
	}
	s->starts++;
	s->hello = 0;
	s->served = 0;
	s->counted = 1;   /* until it ends well */
	/* "ahead": the most keys this djc will send beyond the one in
	 * flight (a claim's other keys): 0 tells a program that nothing will
	 * ever wait in its pipe, so it need not look (a system call a key) */
	char hello[128];
	int n = snprintf(hello, sizeof hello,
			 "{\"_djc\":\"hello\",\"version\":%d,\"binary\":true,\"types\":true,\"parents\":true,\"ahead\":%ld}\n",
			 SERVE_VERSION,
			 config_long("jobs.reserve_batch") - 1);
	proc_input(s->p, hello, (size_t)n, 0);
	return 0;
}

/* ------------------------------------------------------------ one key */

/* How the lines of one key ended. */
typedef enum line_end {
	L_MORE = 0,   /* not yet */
	L_DONE,       /* {"_djc":"done"} */
	L_ERROR,      /* {"_djc":"error",...} */
	L_GARBAGE,    /* not the protocol: the program is stopped */
	L_FATAL,      /* a program this djc cannot talk to: the worker stops */
	L_TOO_BIG,    /* more than jobs.max_output for the key */
	L_DIED,       /* the program ended */
	L_STOPPED     /* the watch said stop */
} line_end;

typedef struct keyrun {
	serve *s;
	djc_conn *c;
	table *t;
	const djc_row *key;
	const make_watch *watch;
	staged *out;
	int begun;      /* it wrote a row or a fetch for this key */
	long line;      /* lines read for this key */
	size_t bytes;   /* bytes read for this key */
	char *bad;      /* the first row that did not fit: the key fails, the program is kept */
	char *msg;      /* why it ended (garbage, fatal, the program's error) */
	char *stack;    /* the program's own stack */
	read_set *reads;  /* what it fetched, checked at commit (docs/parity.md) */
	char **wanted;    /* the key's parents it read by the key (sent rows it used, or fetches) */
	size_t nwanted;
	make_clock clk;   /* when it was given the key (job metadata) */
	json_t *binrow;   /* a row whose raw values (its "_bin") have not all come yet */
	row_bins bins;    /* their names and lengths (data: filled when they came) */
	size_t binlen;    /* their bytes in all */
	size_t scanned;   /* bytes of the unfinished line read so far, known to hold no newline */
	double out_eof;   /* when its stdout was found closed while it ran on (0: not yet) */
} keyrun;

/* Forget a row's raw values (staged, or the key ended first). */
static void bins_clear(keyrun *kr)
{
	row_bins_free(&kr->bins);
	json_decref(kr->binrow);
	kr->binrow = NULL;
	kr->binlen = 0;
}

static line_end garbage(keyrun *kr, const char *fmt, const char *arg)
{
	sb_t b = SB_INIT;
	sb_printf(&b, "serve program output line %ld: ", kr->line);
	sb_printf(&b, fmt, arg);
	kr->msg = sb_steal(&b);
	return L_GARBAGE;
}

/* A row of t for a program that takes binary values: its JSON line,
 * added to b, without the bytes values, which "_bin" names with their
 * lengths ([["a", n], ...], in the order of t's attributes). Returns how
 * many it names. */
static int row_bin_line(sb_t *b, const table *t, const djc_row *r)
{
	int first = 1, nbin = 0;
	sb_addc(b, '{');
	for (size_t i = 0; i < t->nattrs; i++) {
		const val_t *v = row_get(r, t->attrs[i].name);
		if (!v) continue;
		if (v->t == DJC_BYTES) { nbin++; continue; }
		if (!first) sb_addc(b, ',');
		first = 0;
		json_quote(b, t->attrs[i].name, strlen(t->attrs[i].name));
		sb_addc(b, ':');
		value_to_json(b, &t->attrs[i], v);
	}
	if (nbin) {
		sb_add(b, first ? "\"_bin\":[" : ",\"_bin\":[");
		first = 1;
		for (size_t i = 0; i < t->nattrs; i++) {
			const val_t *v = row_get(r, t->attrs[i].name);
			if (!v || v->t != DJC_BYTES) continue;
			if (!first) sb_addc(b, ',');
			first = 0;
			sb_addc(b, '[');
			json_quote(b, t->attrs[i].name, strlen(t->attrs[i].name));
			sb_printf(b, ",%zu]", v->n);
		}
		sb_addc(b, ']');
	}
	sb_add(b, "}\n");
	return nbin;
}

/* row_bin_line, added to b. With bytes values, b (the line) is put to o,
 * then the values raw, each handed over from the row as it is (not
 * copied: the row is left without them), and b is emptied. */
static void send_row_bin(const fetch_out *o, sb_t *b, const table *t, djc_row *r)
{
	if (!row_bin_line(b, t, r)) return;
	o->put(o->to, b->s, b->len);
	b->len = 0;
	b->s[0] = 0;
	for (size_t i = 0; i < t->nattrs; i++) {
		long k = row_find(r, t->attrs[i].name);
		if (k < 0 || r->vals[k].t != DJC_BYTES) continue;
		o->take(o->to, r->vals[k].s, r->vals[k].n);
		r->vals[k] = val_null();
	}
}

void fetch_error_line(sb_t *b, const char *why, int code)
{
	json_t *e = json_pack("{s:s,s:s,s:i}", "_djc", "rows", "error", why, "code", code);
	char *t = e ? json_dumps(e, JSON_COMPACT) : NULL;
	if (t) sb_add(b, t);
	else   /* why was not UTF-8 */
		sb_printf(b, "{\"_djc\":\"rows\",\"error\":\"fetch failed\",\"code\":%d}", code);
	sb_addc(b, '\n');
	free(t);
	json_decref(e);
}

/* The answer's first line, added to b. */
static void rows_header(sb_t *b, const fetch_out *o, const table *ft, size_t n)
{
	sb_printf(b, "{\"_djc\":\"rows\",\"count\":%zu", n);
	if (o->types) {
		sb_add(b, ",\"types\":");
		types_json(b, ft);
	}
	sb_add(b, "}\n");
}

/* ------------------------------------------------ a fetch's rows streamed
 *
 * A bytes value over STREAM_OVER goes from the driver's row into the
 * program's stdin STREAM_PIECE bytes at a time (rows_fetch_stream), never
 * whole in djc: the worker holds the driver's copy of the value (MariaDB:
 * Connector/C's row) and at most STREAM_BACKLOG of it on its way, not a
 * copy of its own (bench/py-blob.sh, issue 40). DJC_READ_PIECE sets both
 * sizes (tests); 0: values whole. The rows' count is read with them (one
 * statement), so the header goes before the first row. */
#define STREAM_OVER (256 * 1024)
#define STREAM_PIECE (256 * 1024)
#define STREAM_BACKLOG (1024 * 1024)

typedef struct streamer {
	const fetch_out *o;
	const table *t;
	const make_watch *watch;
	size_t count;       /* rows sent */
	const djc_row *row; /* the row whose values go */
	size_t next;        /* its attribute whose raw value goes next */
	int headed;         /* the header went */
} streamer;

static int is_streamed(const val_t *v) { return v->t == DJC_BYTES && !v->s && v->i == VAL_DIGESTED; }

/* Wait (the program reading, its output read meanwhile) until what djc
 * holds for it is small: STREAM_GONE when it ended or must stop. */
static int stream_wait(streamer *st)
{
	proc *p = st->o->stream;
	while (proc_input_backlog(p) > STREAM_BACKLOG) {
		if (proc_pump(p, 100) || make_watch_check(st->watch) != MAKE_GO) return STREAM_GONE;
	}
	return DJC_OK;
}

/* The row's raw values from st->next on, up to the first that streams. */
static void stream_whole(streamer *st)
{
	const table *t = st->t;
	for (; st->next < t->nattrs; st->next++) {
		const val_t *v = row_get(st->row, t->attrs[st->next].name);
		if (!v || v->t != DJC_BYTES) continue;
		if (is_streamed(v)) return;
		st->o->put(st->o->to, v->s ? v->s : "", v->n);
	}
}

static int stream_row(void *ctx, const djc_row *r, size_t count)
{
	streamer *st = ctx;
	sb_t b = SB_INIT;
	if (!st->headed) rows_header(&b, st->o, st->t, count);
	st->headed = 1;
	st->count++;
	row_bin_line(&b, st->t, r);
	st->o->put(st->o->to, b.s, b.len);
	sb_free(&b);
	st->row = r;
	st->next = 0;
	size_t big = 0;
	for (size_t i = 0; i < r->n; i++)
		if (is_streamed(&r->vals[i])) big += r->vals[i].n;
	proc_input_expect(st->o->stream, big);
	stream_whole(st);
	return stream_wait(st);
}

static int stream_each(void *ctx, size_t col, size_t at, char *buf, size_t n)
{
	streamer *st = ctx;
	st->o->piece(st->o->to, buf, n);
	const val_t *v = row_get(st->row, st->t->attrs[col].name);
	if (v && at + n == v->n) {
		st->next = col + 1;
		stream_whole(st);
	}
	return stream_wait(st);
}

/* The piece size of a streamed fetch of ft, 0 when its rows are read
 * whole (not a program's pipe, no binary values, a driver that does not
 * stream, no bytes attribute, DJC_READ_PIECE=0 or not a size). */
static size_t stream_piece(djc_conn *c, const fetch_out *o, const table *ft)
{
	size_t n = STREAM_PIECE;
	int env = db_piece_env(&n);
	if (!o->stream || !o->binary || !db_can_stream(c->db) || env < 0 || !n) return 0;
	for (size_t i = 0; i < ft->nattrs; i++)
		if (ft->attrs[i].type.t == T_BYTES && !ft->attrs[i].raw) return n;
	return 0;
}

/* The answer to a fetch of ft by w, streamed (stream_piece): 0, or 1 when
 * it broke off after its header went (the program cannot read on). */
static int fetch_streamed(djc_make_ctx *ctx, const char *name, const char *w, const table *ft, const fetch_out *o)
{
	size_t piece = stream_piece(ctx->c, o, ft);
	streamer st = {o, ft, ctx->watch, 0, NULL, 0, 0};
	rows_sink k = {piece == STREAM_PIECE ? STREAM_OVER : piece, piece, stream_row, stream_each, &st};
	djc_rowset *rs = NULL;
	int rc = make_fetch_stream(ctx, name, w, &k, &rs);
	djc_rowset_free(rs);
	sb_t b = SB_INIT;
	if (rc && !st.headed) fetch_error_line(&b, djc_error_last(ctx->c), rc);
	else if (!st.headed) rows_header(&b, o, ft, 0);
	o->put(o->to, b.s, b.len);
	sb_free(&b);
	free(ctx->err);
	ctx->err = NULL;
	return rc && st.headed;
}

/* The restriction a fetch request j asks for (*w: JSON text or condition
 * text, NULL: all rows) and its table (*ft): DJC_OK, or a code with the
 * message in *err. */
static int fetch_where(djc_make_ctx *ctx, json_t *j, char **w, table **ft, char **err)
{
	const char *name = json_string_value(json_object_get(j, "table"));
	json_t *key = json_object_get(j, "key"), *where = json_object_get(j, "where");
	if (key && json_is_null(key)) key = NULL;
	if (where && json_is_null(where)) where = NULL;
	djc_conn *c = ctx->c;
	*w = NULL;
	*ft = NULL;
	if (!name) *err = xstrdup("a fetch names its table: {\"_djc\": \"fetch\", \"table\": \"Name\", ...}");
	else if (key && where) *err = xstrdup("a fetch takes \"key\" or \"where\", not both");
	else if (key && !json_is_object(key)) *err = xstrdup("a fetch's \"key\" must be a JSON object");
	if (*err) return DJC_EINVAL;
	int rc = conn_table(c, name, ft);
	if (key) {
		/* the ancestors rule first, as djc_make_fetch_key and djc fetch --key */
		char *kj = json_dumps(key, JSON_COMPACT);
		if (!rc) rc = table_upstream_check(c, ctx->t, *ft);
		if (!rc) rc = djc_key_restriction(w, c, name, kj);
		free(kj);
	} else if (json_is_string(where))
		*w = xstrdup(json_string_value(where));   /* condition text, as djc fetch --where 'x > 2' */
	else if (where)
		*w = json_dumps(where, JSON_COMPACT | JSON_ENCODE_ANY);
	if (rc) *err = xstrdup(djc_error_last(c));
	return rc;
}

int fetch_answer(djc_make_ctx *ctx, json_t *j, const fetch_out *o)
{
	const char *name = json_string_value(json_object_get(j, "table"));
	sb_t b = SB_INIT;
	char *err = NULL, *w = NULL;
	table *ft = NULL;
	int code = fetch_where(ctx, j, &w, &ft, &err);
	if (!code && stream_piece(ctx->c, o, ft)) {
		int broke = fetch_streamed(ctx, name, w, ft, o);
		free(w);
		return broke;
	}
	djc_rowset *rs = NULL;
	if (!code) {
		code = djc_make_fetch(&rs, ctx, name, w);
		if (!code) code = conn_table(ctx->c, name, &ft);
		if (code) err = xstrdup(djc_error_last(ctx->c));
		free(ctx->err);
		ctx->err = NULL;
	}
	free(w);
	if (err) {
		fetch_error_line(&b, err, code);
		free(err);
	} else {
		rows_header(&b, o, ft, rs->n);
		for (size_t i = 0; i < rs->n; i++) {
			if (o->binary) {
				send_row_bin(o, &b, ft, rs->rows[i]);
				continue;
			}
			row_to_json(&b, ft, rs->rows[i]);
			sb_addc(&b, '\n');
		}
	}
	djc_rowset_free(rs);
	o->put(o->to, b.s, b.len);
	sb_free(&b);
	return 0;
}

/* Where request_answer's answer goes: its text, and the raw values taken
 * apart (parts) or into the text (parts NULL). */
typedef struct answer_to {
	sb_t *text;
	raw_parts *parts;
} answer_to;

static void put_answer(void *to, const char *s, size_t n) { sb_addn(((answer_to *)to)->text, s, n); }
static void take_answer(void *to, char *buf, size_t n)
{
	answer_to *a = to;
	if (!a->parts) {
		sb_addn(a->text, buf, n);
		free(buf);
		return;
	}
	raw_parts *p = a->parts;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 4;
		p->bufs = xrealloc(p->bufs, p->cap * sizeof *p->bufs);
	}
	p->bufs[p->n++] = buf;   /* handed over as it is, not copied */
}

json_t *request_parse(const char *l, size_t n)
{
	json_error_t je;
	return utf8_valid(l, n) ? json_loadb(l, n, JSON_REJECT_DUPLICATES, &je) : NULL;
}

void request_answer(djc_make_ctx *ctx, json_t *j, sb_t *out, raw_parts *parts, const char *refusal)
{
	const char *tag = json_string_value(json_object_get(j, "_djc"));
	if (j && json_is_object(j) && tag && !strcmp(tag, "table"))
		table_message(out, ctx->c, ctx->t);
	else if (!j || !json_is_object(j) || !tag || strcmp(tag, "fetch"))
		fetch_error_line(out, refusal, DJC_EINVAL);
	else {
		answer_to to = {out, parts};
		fetch_out o = {put_answer, take_answer, &to, json_is_true(json_object_get(j, "binary")),
			       json_is_true(json_object_get(j, "types")), NULL, NULL};
		fetch_answer(ctx, j, &o);
	}
}

/* The parents of t a key of t names one row of: the tables it
 * references (->) in its primary key, by their own attribute names. */
static size_t key_parents(const table *t, const table **out)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nfks; i++) {
		const fkey *f = &t->fks[i];
		int dup = 0;
		for (size_t k = 0; k < n && !dup; k++) dup = out[k] == f->ptable;
		if (f->in_key && !f->renamed && f->ptable && !dup) out[n++] = f->ptable;
	}
	return n;
}

static void put_program(void *p, const char *s, size_t n) { proc_input(p, s, n, 0); }
static void take_program(void *p, char *buf, size_t n) { proc_input_take(p, buf, n); }
static void piece_program(void *p, char *buf, size_t n) { proc_input_piece(p, buf, n); }

/* Answer a fetch request on the pipe: the reads are the key's, kept
 * across its fetches. */
static line_end answer_fetch(keyrun *kr, json_t *j)
{
	serve *s = kr->s;
	const char *name = json_string_value(json_object_get(j, "table"));
	json_t *key = json_object_get(j, "key");
	if (s->parents && name && json_is_object(key) && !names_have(kr->wanted, kr->nwanted, name)) {
		/* a parent read by the key: its rows go with the next keys */
		const table **ps = xcalloc(kr->t->nfks ? kr->t->nfks : 1, sizeof *ps);
		size_t n = key_parents(kr->t, ps), i = 0;
		while (i < n && strcmp(ps[i]->name, name)) i++;
		if (i < n) {
			sb_t b = SB_INIT;
			row_to_json(&b, kr->t, kr->key);
			json_t *mine = json_loadb(b.s, b.len, 0, NULL);
			if (mine && json_equal(mine, key)) names_add(&kr->wanted, &kr->nwanted, name);
			json_decref(mine);
			sb_free(&b);
		}
		free(ps);
	}
	djc_make_ctx ctx = {.c = kr->c, .t = kr->t, .key = kr->key, .watch = kr->watch, .reads = kr->reads};
	fetch_out o = {put_program, take_program, kr->s->p, kr->s->binary, kr->s->types, kr->s->p, piece_program};
	int rc = fetch_answer(&ctx, j, &o);
	kr->reads = ctx.reads;
	/* gone: it ended, or the make stops (the caller sees either next) */
	if (rc < 0) return garbage(kr, "its fetch's answer broke off (the read failed): %s", djc_error_last(kr->c));
	return L_MORE;
}

/* Before a key line sent once the program's hello was read, to a program
 * that asked for parents, when the make read some of the key's parents
 * (key_parents) by the key for the last key the program closed (s->want):
 * {"_djc":"parents","tables":[...]} naming them, then for each the answer
 * to a fetch of it by the key, exactly as fetch_answer gives it (nothing
 * for a make that reads none: it costs such a make nothing; nothing for a
 * key sent ahead while the parents of the keys in flight hold
 * PARENTS_AHEAD_MAX or more: the make asks, as without parents). The reads go
 * to *sp, kept with the key (s->pre), checked at its commit only if its
 * closing line says they were used. */
/* A program's input, counting what is written to it. */
typedef struct counted {
	proc *p;
	size_t n;
} counted;
static void put_counted(void *to, const char *str, size_t n)
{
	counted *c = to;
	c->n += n;
	proc_input(c->p, str, n, 0);
}
static void take_counted(void *to, char *buf, size_t n)
{
	counted *c = to;
	c->n += n;
	proc_input_take(c->p, buf, n);
}
static void piece_counted(void *to, char *buf, size_t n)
{
	counted *c = to;
	c->n += n;
	proc_input_piece(c->p, buf, n);
}

static void send_parents(serve *s, const make_req *rq, const djc_row *key, sent_parents *sp)
{
	memset(sp, 0, sizeof *sp);
	if (!s->parents || !s->hello || !s->nwant) return;
	/* a key sent ahead: only while the parents in flight are small */
	if (s->nsent && s->pre_bytes >= PARENTS_AHEAD_MAX) return;
	const table *t = rq->t;
	const table **ps = xcalloc(t->nfks ? t->nfks : 1, sizeof *ps);
	size_t n = 0, all = key_parents(t, ps);
	for (size_t i = 0; i < all; i++)
		if (names_have(s->want, s->nwant, ps[i]->name)) ps[n++] = ps[i];
	if (!n) { free(ps); return; }
	sb_t b = SB_INIT;
	sb_add(&b, "{\"_djc\":\"parents\",\"tables\":[");
	for (size_t i = 0; i < n; i++) {
		if (i) sb_addc(&b, ',');
		json_quote(&b, ps[i]->name, strlen(ps[i]->name));
	}
	sb_add(&b, "]}\n");
	counted out = {s->p, 0};
	put_counted(&out, b.s, b.len);
	sp->names = xcalloc(n, sizeof(char *));
	sp->reads = xcalloc(n, sizeof(read_set *));
	sp->n = n;
	b.len = 0;
	row_to_json(&b, t, key);
	json_t *kj = json_loadb(b.s, b.len, 0, NULL);
	for (size_t i = 0; i < n; i++) {
		sp->names[i] = xstrdup(ps[i]->name);
		json_t *req = kj ? json_pack("{s:s,s:O}", "table", ps[i]->name, "key", kj) : NULL;
		if (!req) {
			b.len = 0;
			fetch_error_line(&b, "the key could not be given as JSON", DJC_ERROR);
			put_counted(&out, b.s, b.len);
			continue;
		}
		djc_make_ctx ctx = {.c = rq->c, .t = rq->t, .key = key, .watch = rq->watch};
		/* streamed only to a program that waits for its next key (none
		 * in flight): one making a key reads nothing before its end */
		fetch_out o = {put_counted, take_counted, &out, s->binary, s->types, s->nsent ? NULL : s->p, piece_counted};
		if (fetch_answer(&ctx, req, &o) < 0) proc_stop(s->p, PROC_STOP_PROTOCOL, 0);   /* it cannot read on */
		sp->reads[i] = ctx.reads;
		json_decref(req);
	}
	sp->bytes = out.n;
	json_decref(kj);
	sb_free(&b);
	free(ps);
}

/* Send a key (its parents first: send_parents) and remember it as in
 * flight; line is taken. */
static void send_key(serve *s, const make_req *rq, const djc_row *key, char *line)
{
	sent_parents sp;
	send_parents(s, rq, key, &sp);
	send_line(s, line);
	s->pre[s->nsent - 1] = sp;
	s->pre_bytes += sp.bytes;
}

/* A closing line's "parents": the parents sent with the key whose rows
 * the make used; their reads join the key's, checked at its commit. */
static line_end used_parents(keyrun *kr, json_t *used)
{
	serve *s = kr->s;
	const sent_parents *sp = s->nsent ? &s->pre[0] : NULL;
	if (!json_is_array(used)) return garbage(kr, "a closing line's \"parents\" must be a list of table names%s", "");
	for (size_t i = 0; i < json_array_size(used); i++) {
		const char *name = json_string_value(json_array_get(used, i));
		if (!name) return garbage(kr, "a closing line's \"parents\" must be a list of table names%s", "");
		size_t k = 0;
		while (sp && k < sp->n && strcmp(sp->names[k], name)) k++;
		if (!sp || k == sp->n) return garbage(kr, "a closing line's \"parents\" names %s, whose rows were not sent with the key", name);
		names_add(&kr->wanted, &kr->nwanted, name);
		if (!sp->reads[k]) continue;   /* its fetch failed: nothing was read */
		const read_set *both[2] = {kr->reads, sp->reads[k]};
		read_set *m = read_set_join(both, 2);
		read_set_free(kr->reads);
		kr->reads = m;
	}
	return L_DONE;
}

/* The program's hello: the version it speaks (1 or 2) and, in version 2,
 * how many keys it takes ahead ("ahead", default 0). */
static line_end on_hello(keyrun *kr, json_t *j)
{
	serve *s = kr->s;
	json_t *v = json_object_get(j, "version"), *a = json_object_get(j, "ahead");
	if (s->hello) return garbage(kr, "a second hello%s", "");
	if (!json_is_integer(v)) return garbage(kr, "a hello without an integer \"version\"%s", "");
	json_int_t ver = json_integer_value(v);
	if (ver < SERVE_VERSION_MIN || ver > SERVE_VERSION) {
		kr->msg = xasprintf("serve program '%s' speaks serve protocol version %lld; this djc speaks versions %d and %d",
				    s->argv[0], (long long)ver, SERVE_VERSION_MIN, SERVE_VERSION);
		return L_FATAL;
	}
	if (ver >= 2 && a && !(json_is_integer(a) && json_integer_value(a) >= 0))
		return garbage(kr, "a hello's \"ahead\" must be a whole number of keys, 0 or more%s", "");
	json_t *bin = json_object_get(j, "binary"), *ty = json_object_get(j, "types"), *par = json_object_get(j, "parents");
	if (ver >= 2 && ((bin && !json_is_boolean(bin)) || (ty && !json_is_boolean(ty)) || (par && !json_is_boolean(par))))
		return garbage(kr, "a hello's \"binary\", \"types\" and \"parents\" must be true or false%s", "");
	s->binary = ver >= 2 && json_is_true(bin);
	s->types = ver >= 2 && json_is_true(ty);
	s->parents = ver >= 2 && json_is_true(par);
	/* the key it has was sent with djc's hello, before its answer said
	 * it wants types: they follow now */
	describe(s, kr->c, kr->t);
	s->version = (int)ver;
	s->ahead = ver >= 2 && a ? (long)(json_integer_value(a) < AHEAD_MAX ? json_integer_value(a) : AHEAD_MAX) : 0;
	s->hello = 1;
	/* the hello (and blank lines before it) is the program's, not the
	 * key's: a key's lines are counted from the first after it (a row's
	 * "output line N" is what the program wrote for the key) */
	kr->line = 0;
	return L_MORE;
}

/* A row with raw values ("_bin": [["a", n], ...]): checked, and kept
 * until its n bytes in all have come (read_answer), then staged. Bad
 * framing is garbage: what follows cannot be read. */
static line_end on_bin_row(keyrun *kr, json_t *j, json_t *bin)
{
	size_t total = 0;
	if (!kr->s->binary) return garbage(kr, "a row with \"_bin\", but the program's hello did not ask for binary values%s", "");
	if (row_bins_parse(bin, kr->s->max_out, &kr->bins, &total))
		return garbage(kr, "a row's \"_bin\" must be a list of [\"attribute\", length]%s", "");
	if (total > kr->s->max_out) return L_TOO_BIG;
	kr->bytes += total;
	if (kr->bytes > kr->s->max_out) return L_TOO_BIG;
	json_object_del(j, "_bin");
	kr->binrow = json_incref(j);
	kr->binlen = total;
	return L_MORE;
}

/* The raw values of kr->binrow came (data[0..kr->binlen)): stage the row. */
static void on_bin_values(keyrun *kr, const char *data)
{
	row_bins *b = &kr->bins;
	for (size_t i = 0, at = 0; i < b->n; at += b->lens[i++]) b->data[i] = data + at;
	if (!kr->bad) {
		char *m = NULL;
		if (stage_json_row_bins(kr->c, kr->t, kr->key, kr->binrow, b, kr->out, &m)) {
			kr->bad = xasprintf("serve program output line %ld: %s", kr->line, m);
			free(m);
		}
	}
	bins_clear(kr);
}

/* The JSON of line l[0..n) of the program, or NULL with *end what its
 * fault makes of the key (garbage: the program goes). */
static json_t *parse_line(keyrun *kr, const char *l, size_t n, line_end *end)
{
	json_error_t je;
	json_t *j = json_loadb(l, n, JSON_REJECT_DUPLICATES, &je);
	if (!j && json_error_code(&je) == json_error_numeric_overflow) {
		/* a number jansson cannot read (a uint64 above 2^63-1 not written
		 * as a string): the line is whole, so a row fails its key and the
		 * program is kept, as for any value that does not fit; a message
		 * (or a row whose raw values follow, their lengths now unknown) is
		 * garbage. Either way the message names the member holding it. */
		json_t *r = json_loadb(l, n, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, NULL);
		int tagged = !json_is_object(r) || json_object_get(r, "_djc");
		int row = !tagged && !json_object_get(r, "_bin");
		char *wide = make_wide_int_message(l, n, &je, tagged ? "member" : "attribute");
		if (wide && row) {
			j = r;
			if (!kr->bad) kr->bad = xasprintf("serve program output line %ld: %s", kr->line, wide);
			free(wide);
		} else {
			json_decref(r);
			if (wide) {
				*end = garbage(kr, "%s", wide);
				free(wide);
				return NULL;
			}
		}
	}
	if (!j) {
		char col[32];
		snprintf(col, sizeof col, "%d", je.column);
		*end = garbage(kr, "malformed JSON (column %s): ", col);
		char *m = xasprintf("%s%s", kr->msg, je.text);
		free(kr->msg);
		kr->msg = m;
	}
	return j;
}

/* One line the program wrote (l[0..n), no newline). */
static line_end on_line(keyrun *kr, const char *l, size_t n)
{
	kr->line++;
	size_t i = 0;
	while (i < n && (l[i] == ' ' || l[i] == '\t' || l[i] == '\r')) i++;
	if (i == n) return L_MORE;   /* blank lines are skipped, as in the per-key protocol */
	serve *s = kr->s;
	/* the closing line as djc_make.py writes it, every key: what parsing
	 * it would find, without building its JSON */
	if (n == sizeof DONE_LINE - 1 && s->hello && !memcmp(l, DONE_LINE, n)) return L_DONE;
	/* so is an empty row (a make whose row is its key alone, djc filling
	 * the key in): the row parsing it would give, staged */
	if (n == 2 && l[0] == '{' && l[1] == '}' && s->hello) {
		kr->begun = 1;
		char *m = NULL;
		if (!kr->bad && stage_row_take(kr->c, kr->t, kr->key, row_new(), kr->out, &m)) {
			kr->bad = xasprintf("serve program output line %ld: %s", kr->line, m);
			free(m);
		}
		return L_MORE;
	}
	if (!utf8_valid(l, n)) return garbage(kr, "not valid UTF-8 (or holds a NUL byte)%s", "");
	line_end end = L_MORE;
	json_t *j = parse_line(kr, l, n, &end);
	if (!j) return end;
	json_t *tag = json_object_get(j, "_djc");
	if (!json_is_object(j)) end = garbage(kr, "expected a JSON object (a row or a message)%s", "");
	else if (!tag) {
		/* a result row */
		kr->begun = 1;
		json_t *bin = json_object_get(j, "_bin");
		if (!s->hello) end = garbage(kr, "a row before the program's hello%s", "");
		else if (bin) end = on_bin_row(kr, j, bin);
		else if (!kr->bad) {
			char *m = NULL;
			if (stage_json_row(kr->c, kr->t, kr->key, j, kr->out, &m)) {
				kr->bad = xasprintf("serve program output line %ld: %s", kr->line, m);
				free(m);
			}
		}
	} else if (!json_is_string(tag))
		end = garbage(kr, "\"_djc\" must be a string naming the message%s", "");
	else {
		const char *k = json_string_value(tag);
		if (!strcmp(k, "hello"))
			end = on_hello(kr, j);
		else if (!s->hello)
			end = garbage(kr, "\"%s\" before the program's hello", k);
		else if (!strcmp(k, "fetch")) {
			kr->begun = 1;
			end = answer_fetch(kr, j);
		} else if (!strcmp(k, "next")) {
			/* version 2: may it start this key, sent ahead? It may: the
			 * caller asked for it (drop_skipped answers the others) */
			if (s->version < 2 || kr->begun) end = garbage(kr, "\"next\" %s", s->version < 2 ? "in protocol version 1" : "after the key's first row or fetch");
			else proc_input(s->p, GO_LINE, sizeof GO_LINE - 1, 0);
		}
		else if (!strcmp(k, "done")) {
			json_t *used = json_object_get(j, "parents");
			end = used ? used_parents(kr, used) : L_DONE;
		}
		else if (!strcmp(k, "error")) {
			const char *m = json_string_value(json_object_get(j, "message"));
			const char *st = json_string_value(json_object_get(j, "stack"));
			kr->msg = xstrdup(m && *m ? m : "serve program reported an error");
			if (st && *st) kr->stack = xstrndup(st, strnlen(st, STACK_MAX));
			end = L_ERROR;
		} else
			end = garbage(kr, "unknown message \"_djc\": \"%s\"", k);
	}
	json_decref(j);
	return end;
}

/* The stack of a failed key: the program's own, then its stderr while it
 * made the key (cleaned, the password redacted). */
static char *key_stack(keyrun *kr)
{
	size_t n;
	const char *tail = proc_err(kr->s->p, &n);
	char *err = make_stderr_text(kr->c, tail, n, proc_err_cut(kr->s->p));
	if (!kr->stack) return err;
	if (!err) { char *st = kr->stack; kr->stack = NULL; return st; }
	char *both = xasprintf("%s\n%s", kr->stack, err);
	free(err);
	return both;
}

/* The message of a program that ended while it made a key. */
static char *died_message(serve *s, const proc_status *st, const char *stack)
{
	const char *when = s->hello ? "while making the key" : "before its hello";
	if (!st->exited) return xasprintf("serve program lost %s: its supervisor died and its end was not seen", when);
	if (st->signal) return xasprintf("serve program killed by signal %d (%s) %s", st->signal, make_signame(st->signal), when);
	/* the last stderr line says most */
	size_t e = stack ? strlen(stack) : 0, b;
	while (e && (stack[e - 1] == '\n' || stack[e - 1] == '\r')) e--;
	b = e;
	while (b && stack[b - 1] != '\n') b--;
	return xasprintf("serve program exited with status %d %s%s%.*s", st->code, when, e > b ? ": " : "", (int)(e - b),
			 stack ? stack + b : "");
}

/* Between keys: a program that ended, or wrote after its last closing
 * line, is not given another key. -1 (res->message says why) when the
 * program wrote after its closing line: it is stopped and this key
 * fails; else 0, the program dropped when it ended. */
static int between_keys(serve *s, make_result *res)
{
	int over = proc_pump(s->p, 0);
	size_t n;
	const char *o = proc_out(s->p, &n);
	size_t blank = 0;
	while (blank < n && (o[blank] == ' ' || o[blank] == '\t' || o[blank] == '\r' || o[blank] == '\n')) blank++;
	if (blank == n) proc_out_consume(s->p, n);   /* blank lines are no output */
	else {
		/* the first line that is not blank */
		const char *l = o + blank;
		while (l > o && l[-1] != '\n') l--;
		const char *nl = memchr(l, '\n', n - (size_t)(l - o));
		size_t k = nl ? (size_t)(nl - l) : n - (size_t)(l - o);
		char *excerpt = xstrndup(l, k > 200 ? 200 : k);
		size_t el = strlen(excerpt);
		res->message = xasprintf("serve program wrote after its last closing line (\"%s\"%s): it is restarted",
					 utf8_valid(excerpt, el) ? excerpt : "(not UTF-8)", k > 200 ? "..." : "");
		free(excerpt);
		proc_status st;
		stop_program(s, PROC_STOP_PROTOCOL, 0, &st);
		drop_program(s);
		return -1;
	}
	if (over) {
		proc_status st;
		proc_get_status(s->p, &st);
		/* a program that served and exited with status 0 between keys
		 * ended well: starting it again is no failure */
		s->counted = !(st.exited && !st.signal && !st.code && s->served > 0);
		drop_program(s);
	}
	return 0;
}

void key_line_add(sb_t *b, const table *t, const djc_row *key, int attempt)
{
	sb_add(b, "{\"_djc\":\"key\",\"table\":");
	json_quote(b, t->name, strlen(t->name));
	sb_add(b, ",\"key\":");
	row_to_json(b, t, key);
	sb_add(b, ",\"attempt\":");
	sb_add_i64(b, attempt);
	sb_add(b, "}\n");
}

/* The request line for a key of t (caller frees). */
static char *key_line(table *t, const djc_row *key, int attempt)
{
	sb_t b = SB_INIT;
	key_line_add(&b, t, key, attempt);
	return sb_steal(&b);
}

/* Read the program's lines for the key until they end it (its closing
 * line, an error, garbage, too much) or the program ends, or the watch
 * says stop (*why). */
static line_end read_answer(keyrun *kr, make_stop *why)
{
	serve *s = kr->s;
	line_end end = L_MORE;
	int over = 0;
	for (;;) {
		size_t n, used = 0;
		char *o = proc_out(s->p, &n);
		while (end == L_MORE) {
			if (kr->binrow) {
				/* a row's raw values: all of them, or wait for more */
				if (n - used < kr->binlen) break;
				size_t len = kr->binlen;
				on_bin_values(kr, o + used);
				used += len;
				continue;
			}
			if (used < n && o[used] == '\n') {
				/* a run of empty lines, skipped at once as on_line
				 * skips each (a program printing newlines by the
				 * million cost a call per line) */
				size_t k = used;
				while (k < n && o[k] == '\n') k++;
				kr->line += (long)(k - used);
				kr->bytes += k - used;
				used = k;
				if (kr->bytes > s->max_out) { end = L_TOO_BIG; break; }
				continue;
			}
			/* a long line comes in many reads: each is searched once */
			char *nl = memchr(o + used + kr->scanned, '\n', n - used - kr->scanned);
			if (!nl) { kr->scanned = n - used; break; }
			kr->scanned = 0;
			size_t len = (size_t)(nl - (o + used));
			kr->bytes += len + 1;
			if (kr->bytes > s->max_out) { end = L_TOO_BIG; break; }
			end = on_line(kr, o + used, len);
			used += len + 1;
		}
		proc_out_consume(s->p, used);
		if (end != L_MORE) return end;
		/* a row's raw values come: room for them in one step (not
		 * doubled up to them, each step a copy) */
		if (kr->binrow) proc_out_expect(s->p, kr->binlen);
		proc_status ps;
		proc_get_status(s->p, &ps);
		if (kr->bytes + (kr->binrow ? 0 : n - used) > s->max_out || ps.too_big) return L_TOO_BIG;
		if (over) return L_DIED;
		if (proc_out_closed(s->p)) {
			/* its stdout is closed and it runs on: it can never answer.
			 * A program that ends closes stdout first, so it gets
			 * jobs.stop_grace (1 s at least) to end, then it is stopped
			 * (a wait on a make is bounded) */
			double now = mono_now(), grace = config_double("jobs.stop_grace");
			if (!kr->out_eof) kr->out_eof = now;
			else if (now >= kr->out_eof + (grace > 1 ? grace : 1)) {
				free(kr->msg);
				kr->msg = xasprintf("serve program closed its stdout %s and ran on: it is stopped",
						    s->hello ? "while making the key" : "before its hello");
				return L_GARBAGE;
			}
		}
		if ((*why = make_watch_check(kr->watch)) != MAKE_GO) return L_STOPPED;
		over = proc_pump(s->p, PROC_POLL_MS);
	}
}

/* The key was answered (its closing line, or the program's error): the
 * program is kept. */
static void answered(keyrun *kr, line_end end, make_result *res)
{
	serve *s = kr->s;
	s->served++;
	if (end == L_ERROR) {
		proc_pump(s->p, 0);
		res->message = kr->msg;
		kr->msg = NULL;
		res->stack = key_stack(kr);
	} else if (kr->bad) {
		proc_pump(s->p, 0);   /* its stderr up to its closing line */
		res->message = kr->bad;
		kr->bad = NULL;
		res->stack = key_stack(kr);
	} else if (make_need_target_row(kr->t, kr->out, res)) {
		res->ok = 1;
		make_succeeded(kr->c, kr->t, kr->out, &kr->clk, kr->reads);
		kr->reads = NULL;
	}
}

/* The key was not answered: the program is stopped (or ended) and
 * dropped, and res says why. */
static void unanswered(keyrun *kr, line_end end, make_stop why, make_result *res)
{
	serve *s = kr->s;
	proc_status st;
	switch (end) {
	case L_DIED:
		proc_get_status(s->p, &st);
		res->stack = key_stack(kr);
		res->signal = st.signal;
		res->message = died_message(s, &st, res->stack);
		if (!s->hello && st.exited) {
			/* it ended before its hello (an import that fails, a
			 * typo in its module's name): it cannot serve, as one that
			 * cannot be run; the key was not tried, and failing key
			 * after key (up to jobs.serve_restarts a minute, per
			 * worker) would only turn pending jobs into errors */
			char *m = res->message;
			res->message = xasprintf("serve program '%s' %s", s->argv[0], m + strlen("serve program "));
			free(m);
			res->fatal = 1;
		}
		break;
	case L_STOPPED:
		/* djc stopped it (a signal, a lost lease, ...): not the program's
		 * failure, so its restart does not count */
		stop_program(s, make_proc_reason(why), config_double("jobs.stop_grace"), &st);
		s->counted = 0;
		res->stopped = why;
		res->message = make_stop_message(why);
		res->stack = key_stack(kr);
		break;
	case L_TOO_BIG:
		stop_program(s, PROC_STOP_TOO_BIG, 0, &st);
		res->message = xasprintf("serve program wrote more than %zu MiB for one key", s->max_out >> 20);
		res->stack = key_stack(kr);
		break;
	case L_FATAL:
	case L_GARBAGE:
	default:
		stop_program(s, PROC_STOP_PROTOCOL, 0, &st);
		res->fatal = end == L_FATAL;
		res->message = kr->msg;
		kr->msg = NULL;
		res->stack = key_stack(kr);
		break;
	}
	drop_program(s);
}

/* It ended between keys and never saw this one (it exited with status 0
 * after its last closing line, and wrote nothing for this key, not even
 * part of a line): worth once more, with a fresh program. */
static int ended_unseen(serve *s, const keyrun *kr)
{
	proc_status st;
	proc_get_status(s->p, &st);
	size_t left;
	proc_out(s->p, &left);
	return st.exited && !st.signal && !st.code && kr->line == 0 && kr->bytes == 0 && left == 0 && s->served > 0;
}

static void keyrun_free(keyrun *kr)
{
	bins_clear(kr);
	names_free(&kr->wanted, &kr->nwanted);
	free(kr->bad);
	free(kr->msg);
	free(kr->stack);
	read_set_free(kr->reads);
}

/* Whether the program's next line (read already, or in the pipe now) is
 * {"_djc":"next"}: it asks before starting a key sent ahead; it is
 * consumed. */
static int asks_next(serve *s)
{
	for (int pass = 0; pass < 2; pass++) {
		size_t n;
		char *o = proc_out(s->p, &n);
		size_t b = 0;
		while (b < n && (o[b] == ' ' || o[b] == '\t' || o[b] == '\r' || o[b] == '\n')) b++;
		char *nl = memchr(o + b, '\n', n - b);
		if (nl) {
			/* as djc_make.py writes it, known without parsing */
			size_t len = (size_t)(nl - (o + b));
			int yes = len == sizeof NEXT_LINE - 1 && !memcmp(o + b, NEXT_LINE, len);
			if (!yes) {
				json_t *j = json_loadb(o + b, len, 0, NULL);
				const char *k = json_string_value(json_object_get(j, "_djc"));
				yes = k && !strcmp(k, "next");
				json_decref(j);
			}
			if (yes) proc_out_consume(s->p, (size_t)(nl - o) + 1);
			return yes;
		}
		if (pass == 0 && proc_pump(s->p, 0)) return 0;
	}
	return 0;
}

/* Keys sent ahead that no call asked for (the caller skipped them at
 * their turn: found cancelled or gone, or their claim was left): a
 * program that asked before starting one ("next") is told to skip it;
 * one that may be making it is stopped as a running make of a cancelled
 * job is (not counted as its failure), with whatever else it held, and
 * the next key goes to a new program. */
static void drop_skipped(serve *s, const char *line)
{
	while (s->p && s->nsent && strcmp(s->sent[0], line)) {
		if (asks_next(s)) {
			proc_input(s->p, SKIP_LINE, sizeof SKIP_LINE - 1, 0);
			pop_sent(s);
			continue;
		}
		proc_status st;
		stop_program(s, make_proc_reason(MAKE_STOP_CANCELLED), config_double("jobs.stop_grace"), &st);
		s->counted = 0;
		drop_program(s);
	}
}

/* Send the keys that come after rq's (rq->next) that are not in flight
 * yet, as many as the program asked for ahead of the one it makes.
 * Those in flight (sent[1..]) are the first of rq->next when the last of
 * them is: both are runs of one claim's keys in its order (the caller's
 * next keys stop at the first key it will not make), so one line is
 * compared, not each one at each key (a batch of 50 built 1,225 lines
 * for that). They may not be only where a claim stopped early (its lease
 * unproved) with keys in flight and the next claim holds some of them in
 * another order: then a key may be sent once too often, never made under
 * another's line: drop_skipped reconciles every key in flight, by its
 * line, at its turn, before its answer is read. */
static void send_ahead(serve *s, const make_req *rq)
{
	/* only while its makes are quick: a key sent ahead starts when the
	 * one in flight ends, and should start soon after the caller found
	 * it held (a job cancelled before its key is sent never starts) */
	if (!s->p || !s->hello || s->ahead <= 0 || s->last >= AHEAD_QUICK) return;
	size_t have = s->nsent ? s->nsent - 1 : 0;   /* keys ahead in flight */
	if (have >= rq->nnext) return;
	if (have) {
		char *l = key_line(rq->t, rq->next[have - 1].key, rq->next[have - 1].attempt);
		int same = !strcmp(s->sent[have], l);
		free(l);
		if (!same) return;   /* the keys changed: the ones sent are drained at their turn */
	}
	for (size_t j = have; j < rq->nnext && (long)j < s->ahead; j++) {
		describe(s, rq->c, rq->t);
		send_key(s, rq, rq->next[j].key, key_line(rq->t, rq->next[j].key, rq->next[j].attempt));
	}
}

int serve_make(serve *s, const make_req *rq, staged *out, make_result *res)
{
	memset(res, 0, sizeof *res);
	char *line = key_line(rq->t, rq->key, rq->attempt);
	int rc = DJC_EMAKE;
	for (int retried = 0;; retried = 1) {
		drop_skipped(s, line);
		if (!s->nsent) {
			if (s->p && between_keys(s, res)) break;
			if (!s->p && start(s, rq->c, res)) break;
			proc_err_clear(s->p);
			describe(s, rq->c, rq->t);
			send_key(s, rq, rq->key, xstrdup(line));
		}
		send_ahead(s, rq);
		keyrun kr = {.s = s, .c = rq->c, .t = rq->t, .key = rq->key, .watch = rq->watch, .out = out};
		make_clock_start(&kr.clk);
		make_stop why = MAKE_GO;
		line_end end = read_answer(&kr, &why);
		/* how long it took counts only for keys ahead (send_ahead) */
		if (s->ahead > 0)
			s->last = mono_now() - ((double)kr.clk.mono.tv_sec + kr.clk.mono.tv_nsec / 1e9);
		if (end == L_DIED && !retried && ended_unseen(s, &kr)) {
			s->counted = 0;
			drop_program(s);
			staged_free(out);
			keyrun_free(&kr);
			continue;
		}
		if (end == L_DONE || end == L_ERROR) {
			answered(&kr, end, res);
			pop_sent(s);
			/* the parents this key read by the key go with the next keys */
			names_free(&s->want, &s->nwant);
			s->want = kr.wanted;
			s->nwant = kr.nwanted;
			kr.wanted = NULL;
			kr.nwanted = 0;
		} else
			unanswered(&kr, end, why, res);
		keyrun_free(&kr);
		if (!res->ok) staged_free(out);
		rc = res->ok ? DJC_OK : DJC_EMAKE;
		break;
	}
	free(line);
	return rc;
}
