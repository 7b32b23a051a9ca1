/* make.c - make for one key: a C callback with a staging context, or a
 * program run without a shell (key as JSON on stdin and in DJC_KEY, rows as
 * JSON Lines on stdout, stderr's tail kept for the error stack; the process
 * itself is proc.c's). Nothing here writes to the database: rows are only
 * staged and checked. */
#include "make.h"
#include "fetchsock.h"
#include "util/config.h"
#include "util/redact.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STDERR_TAIL 4000

void staged_free(staged *s)
{
	for (size_t i = 0; i < s->n; i++) djc_row_free(s->rows[i]);
	free(s->rows);
	free(s->tables);
	read_set_free(s->reads);
	memset(s, 0, sizeof *s);
}

void make_result_free(make_result *r)
{
	free(r->message);
	free(r->stack);
	memset(r, 0, sizeof *r);
}

static void stage(staged *s, table *t, djc_row *r)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 8;
		s->rows = xrealloc(s->rows, s->cap * sizeof(djc_row *));
		s->tables = xrealloc(s->tables, s->cap * sizeof(table *));
	}
	s->tables[s->n] = t;
	s->rows[s->n++] = r;
}

/* The message for a "_part" that names no part table of t: its parts'
 * own names, the form a make gives. */
static char *bad_part_msg(djc_conn *c, table *t)
{
	sb_t b = SB_INIT;
	size_t n = 0;
	sb_printf(&b, "\"_part\" must name a part table of %s", t->name);
	for (size_t i = 0; i < c->pipe->n; i++) {
		table *p = c->pipe->tables[i];
		if (p->master != t) continue;
		sb_add(&b, n++ ? ", " : " (");
		json_quote(&b, strrchr(p->name, '.') + 1, strlen(strrchr(p->name, '.') + 1));
	}
	sb_add(&b, n ? ")" : ", which has none");
	if (t->adopted)   /* a part DataJoint declared since is not one until adopted */
		sb_printf(&b, "; a part DataJoint declared since the adoption needs: djc adopt %s --accept-changes",
			  t->adopted);
	return sb_steal(&b);
}

/* The part table of t named `name` ("Part", "Master.Part" or
 * "schema.Master.Part"), or NULL. */
static table *part_of(djc_conn *c, table *t, const char *name)
{
	for (size_t i = 0; i < c->pipe->n; i++) {
		table *p = c->pipe->tables[i];
		if (p->master != t) continue;
		/* its whole name, its own (after the last dot: "Bit" of
		 * e3_b.Feat.Bit) or its name without the schema (Feat.Bit) */
		const char *dot = strchr(p->name, '.'), *last = strrchr(p->name, '.');
		if (!strcmp(p->name, name) || (dot && !strcmp(dot + 1, name)) || (last && !strcmp(last + 1, name)))
			return p;
	}
	return NULL;
}

/* Put the raw values of bins into r (a row of dest): each a bytes or
 * <blob> attribute of dest not in r yet, checked as any value is. */
static int put_bins(table *dest, djc_row *r, const row_bins *bins, char **msg)
{
	for (size_t i = 0; bins && i < bins->n; i++) {
		attr *a = table_attr(dest, bins->names[i]);
		if (!a) {
			sb_t b = SB_INIT;
			sb_add(&b, "unknown attribute ");
			json_quote(&b, bins->names[i], strlen(bins->names[i]));
			sb_printf(&b, " for table %s", dest->name);
			*msg = sb_steal(&b);
			return DJC_EINVAL;
		}
		if (row_get(r, a->name)) {
			*msg = xasprintf("attribute '%s' given twice (in the row and in its raw values)", a->name);
			return DJC_EINVAL;
		}
		if (a->type.t != T_BYTES || a->raw) {
			*msg = xasprintf("attribute '%s' (%s): raw values are for bytes and <blob> attributes only", a->name,
					 a->type_text);
			return DJC_EINVAL;
		}
		val_t in = {.t = DJC_BYTES, .s = (char *)bins->data[i], .n = bins->lens[i]}, x;
		if (value_in(a, &in, &x, msg)) return DJC_EINVAL;
		row_put(r, a->name, &x);
	}
	return DJC_OK;
}

int row_bins_parse(json_t *bin, size_t max, row_bins *b, size_t *total)
{
	size_t i, n = json_array_size(bin);
	json_t *e;
	*total = 0;
	if (!json_is_array(bin)) return -1;
	b->names = xcalloc(n + 1, sizeof(char *));
	b->lens = xcalloc(n + 1, sizeof(size_t));
	b->data = xcalloc(n + 1, sizeof(char *));
	json_array_foreach(bin, i, e) {
		json_t *nm = json_array_get(e, 0), *ln = json_array_get(e, 1);
		if (!json_is_array(e) || json_array_size(e) != 2 || !json_is_string(nm) || !json_is_integer(ln) ||
		    json_integer_value(ln) < 0 || (size_t)json_integer_value(ln) > max)
			return -1;
		b->names[b->n] = xstrdup(json_string_value(nm));
		b->lens[b->n++] = (size_t)json_integer_value(ln);
		*total += (size_t)json_integer_value(ln);
	}
	return 0;
}

void row_bins_free(row_bins *b)
{
	for (size_t i = 0; i < b->n; i++) free(b->names[i]);
	free(b->names);
	free(b->lens);
	free(b->data);
	memset(b, 0, sizeof *b);
}

int stage_json_row(djc_conn *c, table *t, const djc_row *key, json_t *obj, staged *out, char **msg)
{
	return stage_json_row_bins(c, t, key, obj, NULL, out, msg);
}

int stage_json_row_bins(djc_conn *c, table *t, const djc_row *key, json_t *obj, const row_bins *bins, staged *out,
			char **msg)
{
	*msg = NULL;
	if (!json_is_object(obj)) { *msg = xstrdup("expected a JSON object per line"); return DJC_EINVAL; }
	table *dest = t;
	json_t *part = json_object_get(obj, "_part");
	json_t *copy = NULL;
	if (part) {
		if (!json_is_string(part) || !(dest = part_of(c, t, json_string_value(part)))) {
			*msg = bad_part_msg(c, t);
			return DJC_EINVAL;
		}
		copy = json_copy(obj);
		json_object_del(copy, "_part");
		obj = copy;
	}
	djc_row *r = NULL;
	int rc = row_from_json_obj(dest, obj, &r, msg);
	json_decref(copy);
	if (!rc && (rc = put_bins(dest, r, bins, msg))) djc_row_free(r);
	return rc ? rc : stage_row_take(c, dest, key, r, out, msg);
}

int stage_row_take(djc_conn *c, table *t, const djc_row *key, djc_row *r, staged *out, char **msg)
{
	djc_row *prep = NULL;
	*msg = NULL;
	/* r goes next: its values (a large one the program wrote) move */
	int rc = row_prepare_take(c, t, r, key, &prep, msg);
	djc_row_free(r);
	if (rc) return rc;
	stage(out, t, prep);
	return DJC_OK;
}

int make_need_target_row(table *t, staged *out, make_result *res)
{
	for (size_t i = 0; i < out->n; i++)
		if (out->tables[i] == t) {
			/* target rows first (stable), so part rows find their master row
			 * whatever order make produced them in */
			size_t k = 0;
			for (size_t j = 0; j < out->n; j++) {
				if (out->tables[j] != t) continue;
				djc_row *r = out->rows[j];
				memmove(&out->rows[k + 1], &out->rows[k], (j - k) * sizeof *out->rows);
				memmove(&out->tables[k + 1], &out->tables[k], (j - k) * sizeof *out->tables);
				out->rows[k] = r;
				out->tables[k++] = t;
			}
			return 1;
		}
	res->message = xasprintf("make produced no row for %s", t->name);
	return 0;
}

/* ------------------------------------------------------- job metadata */

/* What _job_version records, as DataJoint 2.3.2's: jobs.job_version when
 * set, else the code version of the jobs table (jobs.version_method git:
 * the commit, `git rev-parse --short HEAD`), else "" (docs/parity.md). */
static const char *job_version(void)
{
	const char *v = config_get("jobs.job_version");
	if (v && *v) return v;
	v = jobs_version();
	return v ? v : "";
}

/* When a make started: the worker's wall clock for _job_start_time (shown
 * in the worker's local time zone, as DataJoint's), a monotonic clock for
 * _job_duration. */
void make_clock_start(make_clock *k)
{
	clock_gettime(CLOCK_REALTIME, &k->wall);
	clock_gettime(CLOCK_MONOTONIC, &k->mono);
}

/* A make of t (declared with job metadata) succeeded: its target rows get
 * the hidden columns, written with them by whichever commit follows
 * (reserved or direct). Part rows do not have them. */
static void stamp_job_meta(djc_conn *c, table *t, staged *out, const make_clock *k)
{
	if (!t->job_meta || !t->nhidden) return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double dur = (double)(now.tv_sec - k->mono.tv_sec) + (double)(now.tv_nsec - k->mono.tv_nsec) / 1e9;
	struct tm tm;
	static pthread_once_t tz_once = PTHREAD_ONCE_INIT;
	pthread_once(&tz_once, tzset);   /* localtime_r need not read TZ itself */
	localtime_r(&k->wall.tv_sec, &tm);   /* DataJoint: datetime.fromtimestamp, naive local */
	char when[64], ver[65];
	size_t w = strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(when + w, sizeof when - w, ".%03ld", k->wall.tv_nsec / 1000000);
	snprintf(ver, sizeof ver, "%s", job_version());
	while (!utf8_valid(ver, strlen(ver))) ver[strlen(ver) - 1] = 0;   /* a cut character */
	val_t in[3] = {val_text(when), val_float(dur), val_text(ver)};
	for (size_t i = 0; i < out->n; i++) {
		if (out->tables[i] != t) continue;
		for (size_t h = 0; h < 3 && h < t->nhidden; h++) {
			val_t v = {0};
			char *msg = NULL;
			if (value_in(&t->attrs[t->nattrs + h], &in[h], &v, &msg) == DJC_OK) row_put(out->rows[i], t->attrs[t->nattrs + h].name, &v);
			free(msg);
		}
	}
	for (int h = 0; h < 3; h++) val_free(&in[h]);
	(void)c;
}

void make_succeeded(djc_conn *c, table *t, staged *out, const make_clock *k, read_set *reads)
{
	stamp_job_meta(c, t, out, k);
	/* what make read goes with its rows to their commit */
	read_set_free(out->reads);
	out->reads = reads;
}

/* --------------------------------------------------------- C callbacks */

int djc_make_insert(djc_make_ctx *ctx, const char *name, const djc_row *row)
{
	if (!ctx) return DJC_EINVAL;
	if (!row) {
		djc_make_error(ctx, "djc_make_insert: no row (NULL) for %s", name && *name ? name : ctx->t->name);
		return DJC_EINVAL;
	}
	table *dest = ctx->t;
	if (name && *name && strcmp(name, ctx->t->name)) {
		dest = part_of(ctx->c, ctx->t, name);
		if (!dest) {
			djc_make_error(ctx, "djc_make_insert: '%s' is not %s or one of its part tables", name, ctx->t->name);
			return DJC_EINVAL;
		}
	}
	djc_row *prep = NULL;
	char *msg = NULL;
	int rc = row_prepare(ctx->c, dest, row, ctx->key, &prep, &msg);
	if (rc) {
		djc_make_error(ctx, "%s: %s", dest->name, msg);
		free(msg);
		return rc;
	}
	stage(&ctx->out, dest, prep);
	return DJC_OK;
}

/* make may read its target's ancestors (DataJoint's self.upstream) and
 * their part tables only. */
static int make_reads(djc_make_ctx *ctx, const char *name, table **a)
{
	int rc = conn_table(ctx->c, name, a);
	if (!rc) rc = table_upstream_check(ctx->c, ctx->t, *a);
	if (rc) djc_make_error(ctx, "%s", djc_error_last(ctx->c));
	return rc;
}

/* Read a restricted by where, and remember what was read: the commit
 * checks it is still the same (upstream.c). */
static int make_read(djc_make_ctx *ctx, table *a, const char *where, djc_rowset **out)
{
	if (!ctx->reads) ctx->reads = read_set_new();
	return read_set_fetch(ctx->c, ctx->reads, a, where, out);
}

/* Every read of a make goes through here: C makes (djc_make_fetch,
 * djc_make_fetch_key) and serve programs (serve.c) alike, so a rule on
 * what a make may read (ancestors and their parts) and the record of what it read
 * (checked at commit) are kept in one place. */
int djc_make_fetch(djc_rowset **out, djc_make_ctx *ctx, const char *name, const char *where)
{
	if (!out || !ctx) {
		if (ctx) djc_make_error(ctx, "djc_make_fetch: no place for the rows (out is NULL)");
		return DJC_EINVAL;
	}
	*out = NULL;
	table *a;
	int rc = make_reads(ctx, name, &a);
	if (rc) return rc;
	return make_read(ctx, a, where, out);
}

int make_fetch_stream(djc_make_ctx *ctx, const char *name, const char *where, const rows_sink *k, djc_rowset **out)
{
	*out = NULL;
	table *a;
	int rc = make_reads(ctx, name, &a);
	if (rc) return rc;
	rc = rows_fetch_stream(ctx->c, a, where, k, out);
	if (rc) return rc;
	if (!ctx->reads) ctx->reads = read_set_new();
	read_set_add(ctx->reads, a, where, *out);
	return DJC_OK;
}

int djc_make_fetch_key(djc_rowset **out, djc_make_ctx *ctx, const char *name, const djc_row *key)
{
	if (!out || !ctx) {
		if (ctx) djc_make_error(ctx, "djc_make_fetch_key: no place for the rows (out is NULL)");
		return DJC_EINVAL;
	}
	*out = NULL;
	table *a;
	int rc = make_reads(ctx, name, &a);
	if (rc) return rc;
	char *kj = djc_row_to_json(key), *where = NULL;
	rc = djc_key_restriction(&where, ctx->c, name, kj);
	if (!rc) rc = make_read(ctx, a, where, out);
	free(where);
	free(kj);
	return rc;
}

void djc_make_error(djc_make_ctx *ctx, const char *fmt, ...)
{
	if (!ctx || !fmt) return;
	sb_t b = SB_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	free(ctx->err);
	ctx->err = sb_steal(&b);
}

void djc_make_error_stack(djc_make_ctx *ctx, const char *stack)
{
	if (!ctx) return;
	free(ctx->stack);
	ctx->stack = stack ? xstrdup(stack) : NULL;
}

make_stop make_watch_check(const make_watch *w)
{
	if (w && w->check) return w->check(w->arg);
	return populate_signal ? MAKE_STOP_SIGNAL : MAKE_GO;
}

/* (a timeout's message, which names the timeout, is the worker's) */
char *make_stop_message(make_stop why)
{
	switch (why) {
	case MAKE_STOP_SIGNAL:
		if (populate_signal == SIGTERM && populate_orphaned())
			return xasprintf("interrupted by SIGTERM: its worker's parent process (pid %ld) died", (long)populate_parent);
		return xasprintf("interrupted by %s", populate_signal == SIGINT ? "SIGINT" : "SIGTERM");
	case MAKE_STOP_UNPROVEN: return xstrdup("make stopped: the lease could not be renewed for a whole lease");
	case MAKE_STOP_TIMEOUT: return xstrdup("timed out");
	case MAKE_STOP_CANCELLED: return xstrdup("make stopped: the job was cancelled");
	default: return xstrdup("make stopped: the reservation was lost (lease lapsed)");
	}
}

int djc_make_cancelled(const djc_make_ctx *ctx)
{
	if (!ctx) return DJC_OK;
	switch (make_watch_check(ctx->watch)) {
	case MAKE_GO: return DJC_OK;
	case MAKE_STOP_SIGNAL: return DJC_EINTR;
	case MAKE_STOP_TIMEOUT: return DJC_ETIMEDOUT;
	case MAKE_STOP_CANCELLED: return DJC_ECANCELED;
	default: return DJC_ELOST;
	}
}

int djc_make_attempt(const djc_make_ctx *ctx)
{
	return ctx && ctx->attempt > 0 ? ctx->attempt : 1;
}

int make_callback(const make_req *rq, djc_make_fn fn, void *payload, staged *out, make_result *res)
{
	djc_conn *c = rq->c;
	table *t = rq->t;
	const djc_row *key = rq->key;
	const make_watch *watch = rq->watch;
	memset(res, 0, sizeof *res);
	djc_make_ctx ctx = {.c = c, .t = t, .key = key, .watch = watch, .attempt = rq->attempt};
	make_clock clk;
	make_clock_start(&clk);
	int rc = fn(&ctx, key, payload);
	if (rc) {
		/* a make that gave up because it was asked to stop was stopped,
		 * not failed */
		make_stop why = make_watch_check(watch);
		if (why != MAKE_GO) {
			res->stopped = why;
			res->message = make_stop_message(why);
			free(ctx.err);
			free(ctx.stack);
		} else {
			res->message = ctx.err ? ctx.err : xasprintf("make returned %d", rc);
			res->stack = ctx.stack;
		}
		ctx.err = ctx.stack = NULL;
		staged_free(&ctx.out);
		read_set_free(ctx.reads);
		return DJC_EMAKE;
	}
	free(ctx.err);
	free(ctx.stack);
	if (!make_need_target_row(t, &ctx.out, res)) { staged_free(&ctx.out); read_set_free(ctx.reads); return DJC_EMAKE; }
	make_succeeded(c, t, &ctx.out, &clk, ctx.reads);
	*out = ctx.out;
	res->ok = 1;
	return DJC_OK;
}

/* ----------------------------------------------------------- programs */

/* The forms of the database password a program could be given: decoded
 * from the URL, as written in the URL, DJC_DATABASE_PASSWORD (which also
 * carries database.password of djc.json: djc_open sets it). Each is
 * malloc'ed or NULL. */
static void password_forms(const djc_conn *c, char *forms[3])
{
	forms[0] = forms[1] = forms[2] = NULL;
	db_url u;
	char err[256];
	if (c->url && !db_url_parse(&u, c->url, err, sizeof err)) {
		if (u.password && *u.password) forms[0] = xstrdup(u.password);
		db_url_free(&u);
	}
	forms[1] = url_password(c->url);
	const char *e = getenv("DJC_DATABASE_PASSWORD");
	if (e && *e) forms[2] = xstrdup(e);
}

/* Whether an environment value holds a password: it is one, or has one
 * as a URL holds it (":password@"). */
static int holds_password(const char *value, char *const forms[3])
{
	for (int i = 0; i < 3; i++) {
		const char *f = forms[i];
		if (!f) continue;
		if (!strcmp(value, f)) return 1;
		size_t k = strlen(f);
		for (const char *p = strchr(value, ':'); p; p = strchr(p + 1, ':'))
			if (!strncmp(p + 1, f, k) && p[1 + k] == '@') return 1;
	}
	return 0;
}

char **make_env_base(const djc_conn *c, int without_secrets, size_t *n, char **own)
{
	extern char **environ;
	size_t ne = 0;
	for (char **e = environ; *e; e++) ne++;
	char **env = xcalloc(ne + 3, sizeof(char *));
	const char *dj = getenv("DJC"), *py = make_py_dir(), *pp = NULL;
	*own = NULL;
	char *forms[3] = {NULL, NULL, NULL};
	if (without_secrets) password_forms(c, forms);
	size_t k = 0;
	for (char **e = environ; *e; e++) {
		const char *v = *e;
		/* ours (added by the caller) describe the database this populate uses */
		if (!strncmp(v, "DJC_KEY", 7) || !strncmp(v, "DJC_TABLE=", 10) || !strncmp(v, "DJC_DATABASE_URL=", 17) ||
		    !strncmp(v, "DJC_SCHEMA=", 11) || !strncmp(v, "DJC_DATABASE_SCHEMA=", 20) || !strncmp(v, "DJC_SERVE=", 10) ||
		    !strncmp(v, "DJC_ATTEMPT=", 12) || !strncmp(v, "DJC_FETCH_SOCKET=", 17))
			continue;
		if (without_secrets) {
			const char *eq = strchr(v, '=');
			if (!strncmp(v, "DJC_DATABASE_PASSWORD=", 22) || !strncmp(v, "PGPASSWORD=", 11) ||
			    !strncmp(v, "MYSQL_PWD=", 10) || (eq && holds_password(eq + 1, forms)))
				continue;
		}
		if (py && !strncmp(v, "PYTHONPATH=", 11)) { pp = v + 11; continue; }   /* composed below */
		if (!strcmp(v, "DJC=")) continue;   /* empty: as if unset */
		env[k++] = *e;   /* borrowed: only the array is ours */
	}
	/* where djc is: the process's DJC (the djc command sets it to itself),
	 * else one found beside this library; its Python module first */
	if ((!dj || !*dj) && make_djc_env()) env[k++] = (char *)make_djc_env();
	if (py) env[k++] = *own = pp && *pp ? xasprintf("PYTHONPATH=%s:%s", py, pp) : xasprintf("PYTHONPATH=%s", py);
	env[k] = NULL;
	for (int i = 0; i < 3; i++) free(forms[i]);
	*n = k;
	return env;
}

void make_env_free(char **env)
{
	free(env);
}

/* The per-key protocol's variables: DJC_KEY (the key's JSON, given),
 * DJC_TABLE, DJC_DATABASE_URL, the schema and DJC_KEY_<attr>. Appended to
 * env[0..*n) (whose entries are borrowed); *own receives the added
 * strings, to be freed. */
static char **env_key(const make_req *rq, const char *keyjson, char **env, size_t *n, char ***own)
{
	djc_conn *c = rq->c;
	table *t = rq->t;
	const djc_row *key = rq->key;
	int attempt = rq->attempt;
	sb_t b = SB_INIT;
	env = xrealloc(env, (*n + key->n + 7) * sizeof(char *));
	char **o = xcalloc(key->n + 7, sizeof(char *));
	size_t k = 0;
	o[k++] = xasprintf("DJC_KEY=%s", keyjson);
	o[k++] = xasprintf("DJC_TABLE=%s", t->name);
	o[k++] = xasprintf("DJC_ATTEMPT=%d", attempt > 0 ? attempt : 1);
	o[k++] = xasprintf("DJC_DATABASE_URL=%s", c->url);
	if (c->schema) {
		o[k++] = xasprintf("DJC_SCHEMA=%s", c->schema);
		o[k++] = xasprintf("DJC_DATABASE_SCHEMA=%s", c->schema);   /* so `djc fetch` in the make finds it */
	}
	for (size_t i = 0; i < key->n; i++) {
		sb_reset(&b);
		const attr *a = table_attr(t, key->names[i]);
		const val_t *v = &key->vals[i];
		if (v->t == DJC_TEXT) sb_addn(&b, v->s, v->n);
		else value_to_json(&b, a, v);
		if ((v->t == DJC_BYTES || v->t == DJC_UINT) && b.len >= 2 && b.s[0] == '"') { memmove(b.s, b.s + 1, b.len - 2); b.len -= 2; b.s[b.len] = 0; }
		o[k++] = xasprintf("DJC_KEY_%s=%s", key->names[i], sb_str(&b));
	}
	for (size_t i = 0; i < k; i++) env[(*n)++] = o[i];
	env[*n] = NULL;
	*own = o;
	sb_free(&b);
	return env;
}

/* Make a stderr tail safe to store: drop a partial character at its start
 * (only when cut: else its bytes are the program's first and replaced
 * below) and replace bytes that are not valid UTF-8 (or NUL) with '?'.
 * The bytes dropped: added to *cut. */
static void clean_utf8(char *s, size_t *n, size_t *cut)
{
	size_t skip = 0;
	while (*cut && skip < *n && skip < 3 && ((unsigned char)s[skip] & 0xC0) == 0x80) skip++;
	*cut += skip;
	memmove(s, s + skip, *n - skip);
	*n -= skip;
	utf8_clean(s, *n);
}

size_t make_max_output(void)
{
	return (size_t)config_long("jobs.max_output") << 20;
}

const char *make_signame(int s)
{
	switch (s) {
	case SIGKILL: return "SIGKILL";
	case SIGTERM: return "SIGTERM";
	case SIGINT: return "SIGINT";
	case SIGSEGV: return "SIGSEGV";
	case SIGABRT: return "SIGABRT";
	case SIGBUS: return "SIGBUS";
	case SIGFPE: return "SIGFPE";
	case SIGPIPE: return "SIGPIPE";
	case SIGHUP: return "SIGHUP";
	default: return "signal";
	}
}

char *make_stderr_text(const djc_conn *c, const char *tail, size_t n, size_t cut)
{
	if (!n) return NULL;
	char *t = xstrndup(tail, n);
	clean_utf8(t, &n, &cut);
	/* the password, as the make program got it (decoded in the URL, as
	 * written in the URL, DJC_DATABASE_PASSWORD), never reaches the jobs
	 * table or populate's output through what the program printed */
	char *forms[3];
	password_forms(c, forms);
	for (int i = 0; i < 3; i++) {
		n = redact_secret(t, n, forms[i], 1);
		free(forms[i]);
	}
	t[n] = 0;
	if (!n) { free(t); return NULL; }
	if (cut) {
		/* what was kept is the end: say so (docs/jobs.md, error_stack) */
		char *m = xasprintf("... (%zu bytes cut)\n%s", cut, t);
		free(t);
		t = m;
	}
	return t;
}

int make_proc_reason(make_stop why)
{
	switch (why) {
	case MAKE_STOP_SIGNAL: return PROC_STOP_INTERRUPT;
	case MAKE_STOP_TIMEOUT: return PROC_STOP_TIMEOUT;
	case MAKE_STOP_CANCELLED: return PROC_STOP_CANCELLED;
	default: return PROC_STOP_LOST;
	}
}

/* A make_watch asked by the process module: it maps the reason to the
 * module's (its stop and kill) and keeps ours for the message. */
typedef struct watch_ask { const make_watch *watch; make_stop why; } watch_ask;

static int watch_proc_check(void *arg)
{
	watch_ask *a = arg;
	make_stop why = make_watch_check(a->watch);
	if (why == MAKE_GO) return PROC_RUN;
	a->why = why;
	return make_proc_reason(why);
}

/* "make exited with status 3: boom": the last stderr line is the most
 * useful message (whole: the jobs table truncates error_message to 2047
 * characters). */
static char *exit_message(int code, const char *tail, size_t tlen)
{
	size_t e = tlen, s = 0;
	if (tlen) {
		while (e && (tail[e - 1] == '\n' || tail[e - 1] == '\r')) e--;
		s = e;
		while (s && tail[s - 1] != '\n') s--;
	}
	return xasprintf("make exited with status %d%s%.*s", code, e > s ? ": " : "", (int)(e - s), tail + s);
}

char *make_wide_int_message(const char *l, size_t n, const json_error_t *je, const char *noun)
{
	if (json_error_code(je) != json_error_numeric_overflow || je->position <= 0 || (size_t)je->position > n) return NULL;
	/* the number: the token that ends where jansson stopped */
	size_t end = (size_t)je->position, at = end;
	while (at && ((l[at - 1] >= '0' && l[at - 1] <= '9') || l[at - 1] == '-')) at--;
	if (at == end) return NULL;
	/* an integer: not a real's digits (jansson's overflow of 1e400 too,
	 * whose message stays its own) */
	if (at && (l[at - 1] == '.' || l[at - 1] == 'e' || l[at - 1] == 'E' || l[at - 1] == '+')) return NULL;
	if (end < n && (l[end] == '.' || l[end] == 'e' || l[end] == 'E')) return NULL;
	/* the member of the top-level object whose value holds it: the last
	 * name at depth 1 before it (strings skipped whole: a name may hold
	 * any bracket) */
	int depth = 0;
	size_t ks = 0, ke = 0;
	for (size_t i = 0; i < at; i++) {
		char ch = l[i];
		if (ch == '"') {
			size_t s = i++;
			while (i < at && l[i] != '"') i += l[i] == '\\' ? 2 : 1;
			size_t j = i + 1;
			while (j < at && (l[j] == ' ' || l[j] == '\t' || l[j] == '\r')) j++;
			if (depth == 1 && j < at && l[j] == ':') ks = s, ke = i + 1;
		} else if (ch == '{' || ch == '[')
			depth++;
		else if (ch == '}' || ch == ']')
			depth--;
	}
	int inner = depth > 1;   /* in a json attribute's value */
	if (!ke || depth < 1 || l[0] != '{') return NULL;
	json_t *name = json_loadb(l + ks, ke - ks, JSON_DECODE_ANY, NULL);
	if (!json_is_string(name)) {
		json_decref(name);
		return NULL;
	}
	int neg = l[at] == '-';
	int len = (int)(end - at);
	char *m;
	if (inner)
		m = xasprintf("%s '%s': its value holds %.*s, %s for a JSON number (%s)", noun, json_string_value(name), len,
			      l + at, neg ? "too small" : "too big", neg ? "below -2^63" : "above 2^63-1");
	else if (neg)
		m = xasprintf("%s '%s': %.*s is too small for any integer type (below -2^63)", noun, json_string_value(name), len,
			      l + at);
	else
		m = xasprintf("%s '%s': %.*s is too big for a JSON number (above 2^63-1); write a uint64 as a string: "
			      "\"%.*s\"",
			      noun, json_string_value(name), len, l + at, len, l + at);
	json_decref(name);
	return m;
}

/* Stage the JSON Lines a make printed (buf is changed in place). */
static void parse_rows(djc_conn *c, table *t, const djc_row *key, char *buf, size_t n, staged *out, make_result *res)
{
	if (!utf8_valid(buf, n)) {
		res->message = xstrdup("make output is not valid UTF-8 (or contains NUL bytes)");
		return;
	}
	char *p = buf;
	long line = 0;
	while (p && *p) {
		char *e = strchr(p, '\n');
		if (e) *e = 0;
		line++;
		char *q = p;
		while (*q == ' ' || *q == '\t' || *q == '\r') q++;
		if (*q) {
			json_error_t je;
			json_t *j = json_loads(p, JSON_REJECT_DUPLICATES, &je);
			char *msg = NULL;
			if (!j) {
				msg = make_wide_int_message(p, strlen(p), &je, "attribute");
				if (!msg) msg = xasprintf("malformed JSON (column %d): %s", je.column, je.text);
			} else {
				stage_json_row(c, t, key, j, out, &msg);
				json_decref(j);
			}
			if (msg) {
				res->message = xasprintf("make output line %ld: %s", line, msg);
				free(msg);
				return;
			}
		}
		p = e ? e + 1 : NULL;
	}
	if (make_need_target_row(t, out, res)) res->ok = 1;
}

int make_program(const make_req *rq, char *const *argv, staged *out, make_result *res)
{
	djc_conn *c = rq->c;
	table *t = rq->t;
	const djc_row *key = rq->key;
	memset(res, 0, sizeof *res);
	sb_t keyjson = SB_INIT;
	row_to_json(&keyjson, t, key);
	size_t ne = 0;
	char **own = NULL, *own_env = NULL;
	char **env = make_env_base(c, 0, &ne, &own_env);
	env = env_key(rq, sb_str(&keyjson), env, &ne, &own);
	sb_addc(&keyjson, '\n');
	/* its fetches through djc (fetchsock.h); without a socket, djc fetch */
	fetchsock *fs = fetchsock_open(rq);
	char *sock_env = NULL;
	if (fs) {
		env = xrealloc(env, (ne + 2) * sizeof *env);
		env[ne++] = sock_env = xasprintf("DJC_FETCH_SOCKET=%s", fetchsock_path(fs));
		env[ne] = NULL;
	}

	size_t max_out = make_max_output();
	proc_spec spec = {argv, env, max_out, STDERR_TAIL};
	proc_status ps;
	proc *p = NULL;
	make_clock clk;
	make_clock_start(&clk);
	if (proc_spawn(&p, &spec, &ps)) {
		if (ps.spawn_failed == PROC_SPAWN_EXEC)
			res->message = xasprintf("cannot run make program '%s': %s", argv[0], strerror(ps.spawn_errno));
		else
			res->message = xasprintf("cannot start make program '%s': %s: %s", argv[0],
						 ps.spawn_failed == PROC_SPAWN_PIPES ? "cannot create pipes" : "cannot start its supervisor",
						 strerror(ps.spawn_errno));
		goto done_env;
	}
	proc_input(p, keyjson.s, keyjson.len, 1);
	if (fs) fetchsock_attach(fs, p);
	watch_ask ask = {rq->watch, MAKE_GO};
	proc_wait(p, watch_proc_check, &ask, config_double("jobs.stop_grace"), &ps);

	size_t tlen;
	const char *tail = proc_err(p, &tlen);
	res->stack = make_stderr_text(c, tail, tlen, proc_err_cut(p));
	tlen = res->stack ? strlen(res->stack) : 0;
	if (ps.stop == PROC_STOP_LOST || ps.stop == PROC_STOP_INTERRUPT || ps.stop == PROC_STOP_TIMEOUT ||
	    ps.stop == PROC_STOP_CANCELLED) {
		res->stopped = ask.why;
		res->message = make_stop_message(ask.why);
	} else if (ps.stop == PROC_STOP_TOO_BIG) {
		res->message = xasprintf("make program wrote more than %zu MiB to stdout", max_out >> 20);
	} else if (ps.stop) {
		res->stopped = ask.why != MAKE_GO ? ask.why : MAKE_STOP_LOST;
		res->message = xasprintf("make stopped (reason %d)", ps.stop);
	} else if (!ps.exited) {
		res->message = xstrdup("make program lost: its supervisor died and its end was not seen");
	} else if (ps.signal) {
		res->signal = ps.signal;
		res->message = xasprintf("make killed by signal %d (%s)", ps.signal, make_signame(ps.signal));
	} else if (ps.code) {
		res->message = exit_message(ps.code, res->stack, tlen);
	} else {
		size_t n;
		char *o = proc_out(p, &n);
		parse_rows(c, t, key, o, n, out, res);
		if (res->ok) make_succeeded(c, t, out, &clk, fetchsock_take_reads(fs));
	}
	proc_free(p);
	if (!res->ok) staged_free(out);
done_env:
	fetchsock_close(fs);
	free(sock_env);
	for (size_t i = 0; own && own[i]; i++) free(own[i]);
	free(own);
	make_env_free(env);
	free(own_env);
	sb_free(&keyjson);
	return res->ok ? DJC_OK : DJC_EMAKE;
}
