/* claim.c - the transitions of a held job's lease: claim (-> reserved),
 * renew and hold (reserved, lease extended), release (-> pending). */
#include "jobs.h"
#include "jobs_state.h"
#include "sql.h"
#include "util/clock.h"
#include "util/config.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Expand a parameterless fragment statement into b. */
static int frag(djc_conn *c, const jsql *s, const jctx *x, sb_t *b)
{
	pvec p = {0};
	int rc = jsql_expand(c, s, x, NULL, 0, b, &p);
	pvec_free(&p);
	return rc;
}

void claim_text_free(claim_text *ct)
{
	if (!ct) return;
	free(ct->where);
	sb_free(&ct->due); sb_free(&ct->set); sb_free(&ct->order);
	sb_free(&ct->keys); sb_free(&ct->info); sb_free(&ct->rest); sb_free(&ct->index);
	pvec_free(&ct->dp);
	free(ct->types);
	free(ct);
}

void claim_build_free(claim_build *b)
{
	for (int i = 0; i < 7; i++) val_free(&b->sargs[i]);
	memset(b, 0, sizeof *b);
}

/* The text of t's claims on c for this restriction, priority bound and
 * size: the one kept from the last claim when they are the same, else
 * expanded afresh. claim.set takes the claim's 7 arguments in order
 * (token, lease, host, pid, user, connection id, version), followed by
 * claim.alone (a claim of one job) or claim.many. */
static int claim_text_of(djc_conn *c, table *t, const char *where, long max_priority, long n, claim_text **out)
{
	jobs_tab *jt = jobs_tab_of(c, t);
	claim_text *ct = jt->claims;
	if (ct && ct->max_priority == max_priority && ct->n == n &&
	    (ct->where ? where && !strcmp(ct->where, where) : !where)) {
		*out = ct;
		return DJC_OK;
	}
	claim_text_free(ct);
	jt->claims = NULL;
	ct = xcalloc(1, sizeof *ct);
	ct->where = where ? xstrdup(where) : NULL;
	ct->max_priority = max_priority;
	ct->n = n;
	jctx x = {.t = t, .where = where, .max_priority = max_priority};
	val_t a[7] = {val_int(0), val_float(0), val_text(""), val_int(0), val_text(""), val_int(0), val_text("")};
	pvec sp = {0};
	int rc;
	sb_t blame = SB_INIT;
	if ((rc = jsql_expand(c, &JS_CLAIM_DUE, &x, NULL, 0, &ct->due, &ct->dp)) ||
	    (rc = jsql_expand(c, &JS_CLAIM_SET, &x, a, 7, &ct->set, &sp)) ||
	    (rc = frag(c, n == 1 ? &JS_CLAIM_ALONE : &JS_CLAIM_MANY, &x, &blame)) ||
	    (rc = frag(c, &JS_CLAIM_ORDER, &x, &ct->order)) || (rc = frag(c, &JS_CLAIM_KEYS, &x, &ct->keys)) ||
	    (rc = frag(c, &JS_CLAIM_MADE, &x, &ct->info)) || (rc = frag(c, &JS_CLAIM_INFO, &x, &ct->rest))) {
		sb_free(&blame);
		pvec_free(&sp);
		for (int i = 0; i < 7; i++) val_free(&a[i]);
		claim_text_free(ct);
		return rc;
	}
	sb_printf(&ct->info, " + %s", sb_str(&ct->rest));
	sb_printf(&ct->set, ", %s", sb_str(&blame));
	sb_free(&blame);
	size_t nset = sp.n;
	pvec_free(&sp);
	for (int i = 0; i < 7; i++) val_free(&a[i]);
	if (nset != 7) {
		claim_text_free(ct);
		return conn_fail(c, DJC_ERROR, "jobs statement %s takes %zu arguments, not 7", JS_CLAIM_SET.name, nset);
	}
	/* the types of the claim's columns: the key's as declared (no enum
	 * labels: no driver declares a variable of them), then claim.order's */
	static const char *const order_cols[] = {"priority", "avail_time"};
	ct->ntypes = t->nsrc + 2;
	ct->types = xcalloc(ct->ntypes, sizeof *ct->types);
	for (size_t i = 0; i < t->nsrc; i++) {
		ct->types[i] = t->attrs[t->src[i]].type;
		ct->types[i].enums = NULL;
		ct->types[i].nenums = 0;
	}
	for (size_t i = 0; i < 2; i++) {
		const jcol *jc = jcol_named(order_cols[i]);
		ct->types[t->nsrc + i] = (coldef){.t = jc->type, .p = jc->p};
	}
	table_jobs_index(&ct->index, t, "next");         /* ddl.c: (queue, priority, avail_time) */
	/* (re-read: expanding may have added entries, and they may have moved) */
	jobs_tab_of(c, t)->claims = ct;
	*out = ct;
	return DJC_OK;
}

int claim_build_init(djc_conn *c, table *t, const char *where, long max_priority, double lease, long n, claim_build *b)
{
	memset(b, 0, sizeof *b);
	claim_text *ct = NULL;
	int rc = claim_text_of(c, t, where, max_priority, n > 0 ? n : 1, &ct);
	if (rc) return rc;
	b->t = t;
	b->n = ct->n;
	b->token = jobs_new_token();
	val_t a[7] = {val_int(b->token), val_float(lease), val_text(jobs_host()), val_int(jobs_pid()),
		      val_text(jobs_user()), val_int(db_connection_id(c->db)), val_text(jobs_version())};
	memcpy(b->sargs, a, sizeof a);
	db_claim cl = {.table = t->jobs_name, .key_cols = sb_str(&ct->keys), .extra = sb_str(&ct->info),
		       .extra_rest = sb_str(&ct->rest), .made_in = table_sqlref(t),
		       .index = sb_str(&ct->index), .where = sb_str(&ct->due), .wparams = ct->dp.v, .nw = ct->dp.n,
		       .order = sb_str(&ct->order), .limit = ct->n, .set = sb_str(&ct->set), .sparams = b->sargs, .ns = 7,
		       .types = ct->types, .ntypes = ct->ntypes};
	b->due_claim = cl;
	return DJC_OK;
}

int claim_lapsed_due(djc_conn *c, const table *t, double lease)
{
	/* at most every min(1 s, lease/4) per connection: that keeps the
	 * bound on a dead worker's job (back to pending within a lease plus a
	 * second) without a second statement per job on the hot path */
	jobs_tab *jt = jobs_tab_of(c, t);
	double now = mono_now(), every = lease / 4 < 1.0 ? lease / 4 : 1.0;
	if (jt->lapsed_check && now - jt->lapsed_check < every) return 0;
	jt->lapsed_check = now;
	return 1;
}

void claim_parse(const claim_build *b, const db_res *r, djc_job ***out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	table *t = b->t;
	if (!r || !r->nrows) return;
	djc_job **jobs = xcalloc(r->nrows, sizeof(djc_job *));
	for (size_t i = 0; i < r->nrows; i++) {
		djc_job *j = xcalloc(1, sizeof *j);
		j->t = t;
		j->token = b->token;
		j->key = djc_row_new();
		for (size_t k = 0; k < t->nsrc; k++) {
			val_t v;
			value_out(&t->attrs[t->src[k]], db_cell(r, i, k), &v);
			row_put(j->key, t->attrs[t->src[k]].name, &v);
		}
		/* claim.made + claim.info: bit 0 made, bit 1 has history, bit 2
		 * a suspect, the rest the failed attempts */
		int64_t info = r->ncols > t->nsrc ? db_cell_int(r, i, t->nsrc) : 0;
		j->made = (info & 1) != 0;
		j->history = (info & 2) != 0;
		j->suspect = (info & 4) != 0 && b->n > 1;   /* a claim of one blames it anyway */
		j->attempts = (long)(info >> 3);
		jobs[i] = j;
	}
	*out = jobs;
	*nout = r->nrows;
}

int jobs_peek(djc_conn *c, table *t, const char *where, long max_priority, int *any)
{
	jctx x = {.t = t, .where = where, .max_priority = max_priority};
	db_res *pk = NULL;
	int rc = jsql_run(c, &JS_CLAIM_PEEK, &x, NULL, 0, &pk);
	*any = !rc && pk->nrows > 0;
	db_res_free(pk);
	return rc;
}

int jobs_claim(djc_conn *c, table *t, const claim_want *w, djc_job ***out, size_t *nout)
{
	const char *where = w->where;
	long max_priority = w->max_priority;
	double lease = w->lease;
	*out = NULL;
	*nout = 0;
	/* an idle poll (the last claim of this table here found nothing):
	 * first one plain read, claim.peek; nothing takeable, no claim */
	jobs_tab *jt = jobs_tab_of(c, t);
	if (jt->idle && !c->db->in_tx) {
		int any = 0;
		int rc = jobs_peek(c, t, where, max_priority, &any);
		if (rc || !any) return rc;
		/* what it saw may be a lease that lapsed since this connection
		 * last looked: look for those now, not up to a second later */
		jt->lapsed_check = 0;
	}
	/* reserved jobs whose holder's lease lapsed first (lapsed.c): back
	 * to pending or in error before this claim, which takes only pending
	 * work; at most once a second */
	int rc;
	if (claim_lapsed_due(c, t, lease) && (rc = jobs_lapsed(c, t, where, max_priority))) {
		jobs_tab_of(c, t)->lapsed_check = 0;   /* the caller's retry looks again */
		return rc;
	}
	claim_build b;
	if ((rc = claim_build_init(c, t, where, max_priority, lease, w->n, &b))) return rc;
	db_res *r = NULL;
	if ((rc = db_claim_run(c->db, &b.due_claim, &r))) rc = conn_dbfail(c, rc, JS_CLAIM_DUE.name);
	else claim_parse(&b, r, out, nout);
	db_res_free(r);
	claim_build_free(&b);
	jobs_tab_of(c, t)->idle = !rc && *nout == 0;   /* (re-read: the entries may have moved) */
	return rc;
}

/* How many keys one renew or release names: its parameters stay under
 * 999, the least limit of any SQLite build (a claim holds up to 1,000
 * jobs, and a key may have several columns). */
static size_t keys_per_statement(const table *t)
{
	size_t k = 900 / (t->nsrc ? t->nsrc : 1);
	return k ? k : 1;
}

/* Run s for the keys[0..n) of a claim, keys_per_statement at a time;
 * *rows = the rows changed in all. */
static int by_keys(djc_conn *c, const jsql *s, const jctx *all, const val_t *args, size_t nargs, long *rows)
{
	jctx x = *all;
	const djc_row *const *keys = all->keys;
	size_t n = all->nkeys, step = keys_per_statement(all->t);
	int rc = DJC_OK;
	*rows = 0;
	for (size_t i = 0; !rc && i < n; i += step) {
		long k = 0;
		x.keys = keys + i;
		x.nkeys = n - i < step ? n - i : step;
		if (!(rc = jsql_count(c, s, &x, args, nargs, &k))) *rows += k;
	}
	return rc;
}

int jobs_renew(djc_conn *c, table *t, int64_t token, const djc_row *const *keys, size_t n, double lease, long *held)
{
	val_t a[2] = {val_float(lease), val_int(token)};
	return by_keys(c, &JS_RENEW, &(jctx){.t = t, .max_priority = -1, .keys = keys, .nkeys = n}, a, 2, held);
}

int jobs_hold(djc_conn *c, djc_job *job, double lease, long *held)
{
	jctx x = JCTX(job->t);
	x.key = job->key;
	val_t a[2] = {val_float(lease), val_int(job->token)};
	return jsql_count(c, &JS_HOLD, &x, a, 2, held);
}

int jobs_make_alone(djc_conn *c, djc_job *job, double lease, long *held)
{
	jctx x = JCTX(job->t);
	x.key = job->key;
	val_t a[2] = {val_float(lease), val_int(job->token)};
	return jsql_count(c, &JS_MAKE_ALONE, &x, a, 2, held);
}

/* A key as text, for matching held's result to the claim's keys. */
typedef struct keyed { char *json; size_t i; } keyed;

static int keyed_cmp(const void *a, const void *b)
{
	return strcmp(((const keyed *)a)->json, ((const keyed *)b)->json);
}

/* jobs_held for keys[0..n), n at most keys_per_statement: one read. */
static int held_some(djc_conn *c, table *t, int64_t token, const djc_row *const *keys, size_t n, char *held)
{
	jctx x = JCTX(t);
	x.keys = keys;
	x.nkeys = n;
	val_t tok = val_int(token);
	db_res *r = NULL;
	int rc = jsql_run(c, &JS_HELD_COUNT, &x, &tok, 1, &r);
	int all = !rc && r->nrows == 1 && db_cell_int(r, 0, 0) == (int64_t)n;
	db_res_free(r);
	r = NULL;
	memset(held, all, n);
	if (rc || all) return rc;
	if ((rc = jsql_run(c, &JS_HELD, &x, &tok, 1, &r))) return rc;
	keyed *ks = xcalloc(n, sizeof *ks);
	for (size_t i = 0; i < n; i++) ks[i] = (keyed){key_to_json(t, keys[i], 1), i};
	qsort(ks, n, sizeof *ks, keyed_cmp);
	for (size_t i = 0; i < r->nrows; i++) {
		djc_row *k = djc_row_new();
		for (size_t a = 0; a < t->nsrc; a++) {
			val_t v;
			value_out(&t->attrs[t->src[a]], db_cell(r, i, a), &v);
			row_put(k, t->attrs[t->src[a]].name, &v);
		}
		keyed want = {key_to_json(t, k, 1), 0};
		keyed *hit = bsearch(&want, ks, n, sizeof *ks, keyed_cmp);
		if (hit) held[hit->i] = 1;
		free(want.json);
		djc_row_free(k);
	}
	for (size_t i = 0; i < n; i++) free(ks[i].json);
	free(ks);
	db_res_free(r);
	return DJC_OK;
}

int jobs_held(djc_conn *c, table *t, int64_t token, const djc_row *const *keys, size_t n, char *held)
{
	size_t step = keys_per_statement(t);
	int rc = DJC_OK;
	for (size_t i = 0; !rc && i < n; i += step) rc = held_some(c, t, token, keys + i, n - i < step ? n - i : step, held + i);
	return rc;
}

int jobs_release(djc_conn *c, table *t, int64_t token, const djc_row *const *keys, size_t n)
{
	val_t a = val_int(token);
	long rows = 0;
	return by_keys(c, &JS_RELEASE, &(jctx){.t = t, .max_priority = -1, .keys = keys, .nkeys = n}, &a, 1, &rows);
}

int jobs_release_pid(djc_conn *c, table *t, const char *host, long pid)
{
	jctx x = JCTX(t);
	val_t a[2] = {val_text(host), val_int(pid)};
	int rc = jsql_run(c, &JS_RELEASE_PID, &x, a, 2, NULL);
	val_free(&a[0]);
	return rc;
}

int jobs_release_claim(djc_conn *c, table *t, int64_t token, long *n)
{
	long rows = 0;
	val_t a = val_int(token);
	int rc = jsql_count(c, &JS_RELEASE_CLAIM, &(jctx){.t = t, .max_priority = -1}, &a, 1, &rows);
	if (n) *n = rows;
	return rc;
}

int jobs_ready_count(djc_conn *c, table *t, const char *where, long max_priority, long *n)
{
	jctx x = {.t = t, .where = where, .max_priority = max_priority};
	db_res *r = NULL;
	*n = 0;
	int rc = jsql_run(c, &JS_READY_COUNT, &x, NULL, 0, &r);
	if (!rc) *n = (long)db_cell_int(r, 0, 0);
	db_res_free(r);
	return rc;
}

int jobs_claimable_count(djc_conn *c, table *t, const char *where, long max_priority, long *n)
{
	jctx x = {.t = t, .where = where, .max_priority = max_priority};
	db_res *r = NULL;
	*n = 0;
	int rc = jsql_run(c, &JS_READY_NOW, &x, NULL, 0, &r);
	if (!rc) *n = (long)db_cell_int(r, 0, 0);
	db_res_free(r);
	return rc;
}
