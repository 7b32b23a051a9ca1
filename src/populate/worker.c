/* worker.c - what every worker of a populate does the same way: count and
 * report, take make calls under max_calls, run make with a watch that says
 * when to stop (worker.h). */
#include "worker.h"
#include "db/db.h"
#include "make/serve.h"
#include "util/clock.h"
#include "util/config.h"
#include "util/duration.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int retry_wait(retry *r, double lease_s)
{
	double now = mono_now(), window = lease_window(lease_s);
	/* the window runs from the start of the fault: when the wait bound
	 * gave up on the server, from the start of that wait */
	double stalled = db_stalled_take();
	if (r->start == 0) { r->start = now - stalled; r->delay = 0.05; }
	if (now - r->start > window || populate_signal) return 0;
	struct timespec ts = {(time_t)r->delay, (long)((r->delay - (double)(time_t)r->delay) * 1e9)};
	nanosleep(&ts, NULL);
	r->delay = r->delay * 2 > 2 ? 2 : r->delay * 2;
	return 1;
}

/* $DJC_WORKER_LOG (a file name): one line per event of each worker process
 * ("<pid> start listen=yes tables=A,B", "<pid> refresh B gen=3 added=5
 * why=after:A" (why: interval, start, after:TABLE), "<pid> idle" when it
 * starts waiting for work, "<pid> wake A", "<pid> stop idle"; populate's
 * workers: "<pid> leave A looks=1" when they leave an empty queue, after
 * that many empty claims; a pool child whose server session could not be
 * vouched for: "<pid> session unverified: ..."; a pool child whose parent
 * died: "<pid> orphaned parent=PID"), appended with
 * O_APPEND, for diagnosis and for the tests. Nothing is written per job. */
void worker_event(const char *fmt, ...)
{
	const char *path = getenv("DJC_WORKER_LOG");
	if (!path || !*path) return;
	char line[512];
	int k = snprintf(line, sizeof line, "%ld ", (long)getpid());
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + k, sizeof line - (size_t)k - 1, fmt, ap);
	va_end(ap);
	size_t n = strlen(line);
	line[n++] = '\n';
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) return;
	ssize_t wr = write(fd, line, n);
	(void)wr;
	close(fd);
}

/* A line to the parent: a pipe write of a whole line, retried on EINTR. */
static void write_all(int fd, const sb_t *b)
{
	size_t off = 0;
	while (off < b->len) {
		ssize_t n = write(fd, b->s + off, b->len - off);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) break;
		off += (size_t)n;
	}
}

/* One JSON object as a line to the parent (j is released). */
static void write_json_line(int fd, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (s) {
		sb_t b = SB_INIT;
		sb_add(&b, s);
		sb_addc(&b, '\n');
		write_all(fd, &b);
		sb_free(&b);
	}
	free(s);
	json_decref(j);
}

void result_add_error(djc_populate_result *r, const char *tname, const char *key, const char *msg)
{
	r->errors = xrealloc(r->errors, (r->n_errors + 1) * sizeof *r->errors);
	r->error_tables = xrealloc(r->error_tables, (r->n_errors + 1) * sizeof *r->error_tables);
	r->errors[r->n_errors].key_json = xstrdup(key);
	r->errors[r->n_errors].message = xstrdup(msg ? msg : "make failed");
	r->error_tables[r->n_errors] = xstrdup(tname ? tname : "");
	r->n_errors++;
}

void worker_error(worker *w, const djc_row *key, const char *msg)
{
	if (!key) { worker_failure(w, msg); return; }
	char *k = key_to_json(w->t, key, 1);
	if (!msg) msg = "make failed";
	atomic_fetch_add(&w->sh->errors, 1);
	if (w->outfd >= 0)
		write_json_line(w->outfd, json_pack("{s:s,s:s,s:s}", "key", k, "message", msg, "table", w->t->name));
	else
		result_add_error(w->res, w->t->name, k, msg);
	free(k);
	if (!w->o->suppress_errors) atomic_store(&w->sh->stop, 1);
}

void locked_words(sb_t *b, const char *tname, const char *msg)
{
	sb_printf(b, "%s is locked by another session: %s", tname, msg && *msg ? msg : "a lock wait reached its bound (jobs.lock_timeout)");
}

void worker_failure(worker *w, const char *msg)
{
	counters *sh = w->sh;
	int none = 0;
	if (!atomic_compare_exchange_strong(&sh->failure_state, &none, 1)) return;   /* the first one is kept */
	if (!msg || !*msg) msg = "a worker process could not go on";
	if (worker_locked(w) && w->t) {
		sb_t b = SB_INIT;
		locked_words(&b, w->t->name, msg);
		snprintf(sh->failure, sizeof sh->failure, "%s", sb_str(&b));
		sb_free(&b);
		atomic_store(&sh->failure_locked, 1);
	} else
		snprintf(sh->failure, sizeof sh->failure, "%s", msg);
	atomic_store(&sh->failure_state, 2);
}

char *worker_failure_text(counters *sh)
{
	if (atomic_load(&sh->failure_state) != 2) return NULL;
	sh->failure[sizeof sh->failure - 1] = 0;
	return xstrdup(sh->failure);
}

/* The slot's seqlock (worker.h): odd, the fields, even. Only the compiler
 * could reorder the plain stores across the odd one for a reader that
 * looks once the writer is dead: the signal fence keeps them after it. */
static unsigned long long slot_open(making_slot *s)
{
	unsigned long long q = atomic_load_explicit(&s->seq, memory_order_relaxed);
	atomic_store_explicit(&s->seq, q + 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	return q;
}

static void slot_close(making_slot *s, unsigned long long q)
{
	atomic_store_explicit(&s->seq, q + 2, memory_order_release);
}

void worker_making(worker *w, const djc_job *job)
{
	char *k = key_to_json(w->t, job->key, 1);
	making_slot *s = w->slot;
	size_t kl = strlen(k), tl = strlen(w->t->name);
	int fits = kl < sizeof s->key && tl < sizeof s->table;
	unsigned long long q = slot_open(s);
	s->in_pipe = !fits;
	s->key[0] = 0;
	if (fits) {
		memcpy(s->key, k, kl + 1);
		memcpy(s->table, w->t->name, tl + 1);
		s->token = (long long)job->token;
		s->attempts = job->attempts;
		s->history = job->history;
	} else {
		char tok[32];
		snprintf(tok, sizeof tok, "%lld", (long long)job->token);
		write_json_line(w->outfd, json_pack("{s:s,s:s,s:I,s:b,s:s}", "making", k, "token", tok, "attempts",
						    (json_int_t)job->attempts, "history", job->history, "table", w->t->name));
	}
	slot_close(s, q);
	free(k);
}

void worker_made(worker *w)
{
	making_slot *s = w->slot;
	unsigned long long q = slot_open(s);
	s->in_pipe = 0;
	s->key[0] = 0;
	slot_close(s, q);
}

void worker_tick(worker *w)
{
	if (w->prog)
		progress_update(w->prog, atomic_load(&w->sh->success) + atomic_load(&w->sh->errors) + atomic_load(&w->sh->skipped),
				atomic_load(&w->sh->errors), 0);
}

int worker_stopping(worker *w)
{
	return populate_signal || populate_drain || atomic_load(&w->sh->stop);
}

int worker_take_call(worker *w)
{
	long prev = atomic_fetch_add(&w->sh->calls, 1);
	return !(w->o->max_calls > 0 && prev >= w->o->max_calls);
}

void worker_retry_due(counters *sh, double delay)
{
	long long due = (long long)((mono_now() + delay) * 1e6), cur = atomic_load(&sh->retry_due);
	while (due > cur && !atomic_compare_exchange_weak(&sh->retry_due, &cur, due)) {}
}

double worker_timeout(const djc_populate_options *o, const table *t)
{
	if (o->timeout > 0) return o->timeout;   /* djc_populate made o a version 3 struct */
	if (o->timeout == DJC_TIMEOUT_NONE) return 0;   /* lifted for this run */
	if (t->timeout > 0) return t->timeout;
	return config_double("jobs.make_timeout");
}

/* The watch of a worker's makes: a signal; then the lease (reserved mode):
 * the job cancelled, lost, or not proved (it may be someone else's: a
 * timeout would be recorded for nothing); then the timeout. A drain is
 * not asked here: running makes finish. */
static make_stop watch_check(void *arg)
{
	worker *w = arg;
	if (populate_signal) return MAKE_STOP_SIGNAL;
	if (w->lease.on) {
		switch (lease_get(&w->lease)) {
		case LEASE_CANCELLED: return MAKE_STOP_CANCELLED;
		case LEASE_LOST: return MAKE_STOP_LOST;
		case LEASE_UNPROVEN: return MAKE_STOP_UNPROVEN;
		default: break;
		}
	}
	if (w->timeout > 0 && mono_now() - w->make_start > w->timeout) return MAKE_STOP_TIMEOUT;
	return MAKE_GO;
}

int worker_make(worker *w, const djc_row *key, int attempt, staged *st, make_result *mr)
{
	w->watch.check = watch_check;
	w->watch.arg = w;
	w->make_start = mono_now();
	int rc;
	make_req rq = {.c = w->c, .t = w->t, .key = key, .attempt = attempt, .watch = &w->watch, .next = w->next, .nnext = w->nnext};
	if (w->o->make) rc = make_callback(&rq, w->o->make, w->o->payload, st, mr);
	else if (w->serve) {
		if (!w->srv) w->srv = serve_new(w->argv);
		rc = serve_make(w->srv, &rq, st, mr);
	} else rc = make_program(&rq, w->argv, st, mr);
	if (rc && mr->stopped == MAKE_STOP_TIMEOUT) {
		char d[64];
		free(mr->message);
		mr->message = xasprintf("timed out after %s", duration_text(w->timeout, d, sizeof d));
	}
	return rc;
}

void worker_fatal(worker *w, const char *msg)
{
	atomic_store(&w->sh->stop, 1);
	worker_failure(w, msg);
}

int worker_locked(const worker *w)
{
	return w->c && w->c->db && atomic_load(&w->c->db->locked_out);
}

void worker_end(worker *w)
{
	serve_free(w->srv);
	w->srv = NULL;
}
