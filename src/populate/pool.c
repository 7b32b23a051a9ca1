/* pool.c - populate --processes N: N worker processes, each with its own
 * connection (its heartbeat shares it), taking work as they go. Each child
 * reports errors as JSON lines on a pipe, and the job it is making in a
 * slot of shared memory (worker.h: making_slot), so a job neither costs
 * the parent anything nor wakes it. The parent records the job of a child
 * that dies of a signal (a crashing C make, an OOM kill) as that make's
 * failure, hands the rest of its claim back, and starts a new worker in
 * its place. The parent holds one connection: a node with --processes N
 * uses N + 1. */
#include "worker.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* A dead child whose server session could not be watched (through a
 * pooler or a proxy; session_ended) may have left a transaction for the
 * server to run: its jobs are handed back at once and again this many
 * seconds later. A claim that commits later still waits for its lease to
 * lapse. */
#define ZOMBIE_GRACE 2.0

typedef struct making { char *key; int64_t token; long attempts; int history; char *table; } making;

/* The pool, in the parent: its children i < n (pids[i] -1 once ended),
 * the read ends of their pipes (fds[i], -1 once closed) with what was read
 * of an unfinished line (bufs[i]), the job each said it makes (mk[i], from
 * its pipe or its slot in shared memory, slots[i]). */
typedef struct pool {
	djc_conn *c;
	table *t;
	const djc_populate_options *o;
	counters *sh;
	djc_populate_result *res;
	const pool_opts *po;
	int procs, n, alive, respawns;
	int forwarded;   /* populate_signal was sent to the children */
	int drained;     /* populate_drain was */
	int bounded;     /* the parent's connection has a worker's wait bound (parent_bound), bound0 its own */
	double bound0;
	int unreachable; /* the parent's statements on a dead child outlasted their retries: the server is
			  * gone or frozen, and no worker is started in its place */
	pid_t pids[DJC_MAX_PROCESSES];
	int fds[DJC_MAX_PROCESSES];
	sb_t bufs[DJC_MAX_PROCESSES];
	making mk[DJC_MAX_PROCESSES];
	making_slot *slots;
	/* dead children whose session end was not seen (session_ended: through
	 * a pooler or a proxy, an error, a signal): not reaped (their pids stay
	 * theirs) until their jobs have been handed back once more,
	 * ZOMBIE_GRACE seconds later, signal or not */
	struct { pid_t pid; double due; } zombies[DJC_MAX_PROCESSES * 5];
	size_t nz;
} pool;

/* A line of a child (t: the populated table): which job it makes, or a
 * failed make (key, message and its table). */
static void gather_line(djc_populate_result *res, const table *t, char *line, making *mk)
{
	json_t *j = json_loads(line, 0, NULL);
	if (!j) return;
	json_t *mkey = json_object_get(j, "making");
	if (json_is_string(mkey)) {
		free(mk->key);
		mk->key = xstrdup(json_string_value(mkey));
		const char *tok = json_string_value(json_object_get(j, "token"));
		mk->token = strtoll(tok ? tok : "0", NULL, 10);
		const char *tab = json_string_value(json_object_get(j, "table"));
		free(mk->table);
		mk->table = tab ? xstrdup(tab) : NULL;
		mk->attempts = (long)json_integer_value(json_object_get(j, "attempts"));
		mk->history = json_is_true(json_object_get(j, "history"));
	} else {
		json_t *k = json_object_get(j, "key"), *m = json_object_get(j, "message"), *tb = json_object_get(j, "table");
		result_add_error(res, json_is_string(tb) ? json_string_value(tb) : t->name, json_is_string(k) ? json_string_value(k) : "{}",
				 json_is_string(m) ? json_string_value(m) : "make failed");
	}
	json_decref(j);
}

/* A dead child's slot: the job whose make was running, unless that one's
 * key went on the pipe (gather_line has it); none when the child died
 * while writing the slot or with no make running (between makes, or
 * committing one). The child may have scribbled on the slot as it died:
 * its strings are cut at their size. */
static void slot_read(making_slot *s, making *mk)
{
	unsigned long long q = atomic_load_explicit(&s->seq, memory_order_acquire);
	if (q == 0 || (!(q & 1) && s->in_pipe)) return;
	free(mk->key);
	free(mk->table);
	mk->key = mk->table = NULL;
	s->key[sizeof s->key - 1] = 0;
	s->table[sizeof s->table - 1] = 0;
	if ((q & 1) || !s->key[0]) return;
	mk->key = xstrdup(s->key);
	mk->table = xstrdup(s->table);
	mk->token = (int64_t)s->token;
	mk->attempts = s->attempts;
	mk->history = s->history;
}

/* Read what a child wrote to its (non-blocking) pipe and handle each whole
 * line. At end of file the pipe is closed and *fd set to -1. */
static void drain(int *fd, sb_t *buf, djc_populate_result *res, const table *t, making *mk)
{
	char tmp[8192];
	for (;;) {
		if (*fd < 0) break;
		ssize_t r = read(*fd, tmp, sizeof tmp);
		if (r > 0) { sb_addn(buf, tmp, (size_t)r); continue; }
		if (r < 0 && errno == EINTR) continue;
		if (r == 0 || errno != EAGAIN) { close(*fd); *fd = -1; }
		break;
	}
	char *nl;
	while (buf->s && (nl = strchr(buf->s, '\n'))) {
		*nl = 0;
		gather_line(res, t, buf->s, mk);
		size_t used = (size_t)(nl - buf->s) + 1;
		memmove(buf->s, buf->s + used, buf->len - used + 1);
		buf->len -= used;
	}
}

/* Hand back the jobs a dead child still held (release.pid), retried while
 * the server is busy or the connection goes (retry_wait: as a worker
 * retries its own statements). A row the dead child held stays locked
 * until the server has rolled its transaction back, and MariaDB waits only
 * 5 s for it (mysql.c): one busy try left the job reserved by a dead
 * process until its lease lapsed, with no worker left to take it. The
 * statement is idempotent, so a retry after a lost connection is safe.
 * (jobs_fail retries inside its own transaction, conn_tx, and must not be
 * repeated after a lost COMMIT.) */
static int release_dead(djc_conn *c, table *t, pid_t pid)
{
	retry r = {0, 0};
	int rc;
	while (retryable(rc = jobs_release_pid(c, t, jobs_host(), (long)pid)) && retry_wait(&r, lease_seconds())) {}
	return rc;
}

/* Everything a dead child may hold: pw->tables' jobs for djc worker's
 * children, t's for populate's. The last failure's code, or DJC_OK. */
static int release_all(djc_conn *c, table *t, pid_t pid, const pool_work *pw)
{
	int rc = DJC_OK, r;
	for (size_t i = 0; pw && i < pw->ntables; i++)
		if ((r = release_dead(c, pw->tables[i], pid))) rc = r;
	if (!pw && (r = release_dead(c, t, pid))) rc = r;
	return rc;
}

/* Before the parent's own statements while the children work (on a dead
 * child: the end of its session, its job, what it held): its connection
 * bounded as a worker's (lease_wait_bound), so a frozen server fails them
 * as a lost session within the window of their retries. Until 2026-12-07
 * the parent's connection had no bound: a child that died while the server
 * was frozen left the parent waiting for a reply for ever, after every
 * other child had stopped by itself. Set on the first need only (MariaDB
 * replaces its session at a change of the bound), lifted at pool_run's
 * end. */
static void parent_bound(pool *p)
{
	if (p->bounded) return;
	p->bounded = 1;
	p->bound0 = p->c->db->wait_bound;
	db_set_wait_bound(p->c->db, lease_wait_bound(p->c, lease_seconds()));
}

/* Wait until a dead child's server session has ended (sid: the session
 * it published in its slot). A child killed just after it sent a
 * transaction (a claim, or a commit with the next claim in it) leaves the
 * server to run that transaction to its COMMIT: a claim that commits after
 * release.pid ran stays reserved by a dead process until its lease lapses.
 * Once the session is gone, nothing it sent can still commit. Usually the
 * server ends it within milliseconds, as soon as it reads the end of the
 * connection; one that lives on for a second (a long statement, a wait for
 * a lock, a socket a forked grandchild still holds) is ended by the parent
 * (db_session_end: its owner is dead, so this only rolls back sooner what
 * the server would roll back). Polled as a fault is retried (retry_wait).
 * 1: ended, or nothing to wait for (the child never connected: sid -1;
 * SQLite, where a transaction ends with its process); 0: not known (no
 * session of its own was published: through a pooler or a proxy, sid 0;
 * an error; a signal; the window), and the caller hands the child's jobs
 * back once more later; -1: the server did not answer for the window of
 * the retries (gone, or frozen: the parent_bound). */
static int session_ended(djc_conn *c, long long sid)
{
	if (sid < 0) return 1;
	retry r = {0, 0};
	double start = mono_now();
	int rc, ended_it = 0;
	while ((rc = db_session_alive(c->db, (int64_t)sid)) == 1 || retryable(rc)) {
		if (rc == 1 && !ended_it && mono_now() - start >= 1.0) {
			ended_it = 1;
			db_session_end(c->db, (int64_t)sid);
			continue;
		}
		if (!retry_wait(&r, lease_seconds())) return retryable(rc) && !populate_signal ? -1 : 0;
	}
	return rc == 0;
}

/* A worker child died of a signal: the job it said it was making lost a
 * worker (fenced by key and token: jobs_died), as when its lease lapses
 * (lapsed.c): no attempt used, pending again after the backoff of its
 * lost count, an error once jobs.max_lost workers died on it; whatever
 * else it still holds (the rest of its claim, or a job
 * claimed after its last report) goes back to pending. A child says which
 * job it makes before the make starts, and that the make ended once it
 * returns, so one that said nothing, or died between makes or committing
 * one, was running no make: all it holds goes back to pending, and its
 * death is no failure. Both wait for the end of its server session first
 * (session_ended), so they see whatever it sent before it died as
 * committed or not; *ended says whether that wait succeeded (if not, the
 * caller hands its jobs back once more later). Returns 1 when a job was
 * recorded as an error (d->error: its message when the deaths made it
 * one), 2 when it went back to pending for a retry; 0 when the child had
 * already ended its job (committed it or recorded its error: the fence
 * finds it no longer reserved) or was running none, so its death costs
 * nothing. pw: djc worker's children hold jobs of pw->tables (NULL:
 * populate, t only). */
static int child_died(pool *p, int i, pid_t pid, jobs_death *d, double *retry_in, int *ended)
{
	djc_conn *c = p->c;
	table *t = p->t, *root = p->t;
	const making *mk = &p->mk[i];
	const pool_work *pw = p->po->pw;
	long long sid = atomic_load(&p->slots[i].session);
	int failed = 0;
	parent_bound(p);
	int se = p->unreachable ? -1 : session_ended(c, sid);
	if (se < 0) {
		/* the server is gone or frozen (a window without an answer):
		 * nothing is written, as a worker stops writing then
		 * (reserved.c, database_gone); what the child held goes back to
		 * pending when its lease lapses, and no worker is started in its
		 * place. Before, the death's record and the hand-back each waited
		 * a window more */
		p->unreachable = 1;
		*ended = 1;
		return 0;
	}
	*ended = se;
	/* djc worker's children say which table they are making a job of (one
	 * the parent cannot open: that job goes back to pending with the rest) */
	int known = !mk->table || !conn_table(c, mk->table, &t);
	json_t *kj = known && mk->key ? json_loads(mk->key, 0, NULL) : NULL;
	djc_row *key = NULL;
	char *err = NULL;
	if (kj && !row_from_json_obj(t, kj, &key, &err)) {
		djc_job job = {.t = t, .key = key, .token = mk->token, .attempts = mk->attempts, .history = mk->history};
		fail_result fr = FAILED_ERROR;
		double delay = 0;
		if (jobs_died(c, &job, d, &fr, &delay) == DJC_OK) failed = fr == FAILED_ERROR ? 1 : 2;
		if (failed == 2) *retry_in = delay;
	}
	/* its jobs could not be handed back for the server (gone, frozen):
	 * a worker started in its place could not connect either */
	if (retryable(release_all(c, root, pid, pw))) p->unreachable = 1;
	json_decref(kj);
	djc_row_free(key);
	free(err);
	return failed;
}

/* In a worker child just forked from parent: stop as on SIGTERM when the
 * parent dies (kill -9, the OOM killer), rather than go on claiming jobs
 * with nobody to report to. The kernel sends the signal on the death of
 * the thread that forked the child (PR_SET_PDEATHSIG), which is the one in
 * pool_run until every child has ended: so on the parent process's death
 * only. Populate's handler (signals_stop) is inherited: the running make is
 * stopped and recorded as interrupted, the rest of the claim handed back,
 * nothing more claimed. A parent that died before the request was made is
 * seen by getppid. */
static void watch_parent(pid_t parent)
{
	populate_parent = parent;
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent) raise(SIGTERM);
}

/* The life of a worker child with the write end of its pipe wfd (the
 * other children's pipes are closed): its own connection, its work (pw's,
 * or populate's), then _exit. */
static void __attribute__((noreturn)) child_main(pool *p, making_slot *slot, int wfd, pid_t parent)
{
	const djc_populate_options *o = p->o;
	/* a fresh connection: never touch the parent's */
	djc_conn *cc = NULL;
	int crc = djc_open(&cc, p->c->url, p->c->schema);
	/* the parent waits for the end of this server session before it
	 * hands back what the child held, should it die (child_died) */
	if (!crc) {
		db_publish_session(cc->db, &slot->session);
		/* say so when the server's session could not be vouched
		 * for (a pooler, a proxy, NAT, a unix socket): a death is
		 * then handed back at once and again 2 s later */
		if (atomic_load(&slot->session) == 0 && db_session_checkable(cc->db))
			worker_event("session unverified: a death is handed back twice");
	}
	worker w = {0};
	djc_populate_result cres = {0};
	w.c = cc; w.o = o; w.argv = p->po->argv; w.serve = p->po->serve; w.sh = p->sh; w.res = &cres; w.outfd = wfd; w.slot = slot;
	/* a lock wait that reached its bound ends the child's statements, with
	 * reservations or without (lease_start says so again) */
	if (!crc) db_lock_final(cc->db, 1);
	if (!crc) crc = conn_table(cc, p->t->name, &w.t);
	if (!crc) w.timeout = worker_timeout(o, w.t);
	if (!crc && o->reserve_jobs) crc = lease_start(&w.lease, cc, w.t);
	if (crc) {
		w.t = p->t;
		worker_error(&w, NULL, djc_error_last(cc));
		/* one that could not connect (a server's connection limit, say):
		 * the children that did work on without it, and the populate
		 * says so at its end (pool_run) and exits 1. Claimed nothing,
		 * holds nothing */
		if (!cc || !cc->db) atomic_fetch_add(&p->sh->noconn, 1);
		else atomic_store(&p->sh->stop, 1);
		atomic_store(&slot->ended, 1);
		_exit(3);
	}
	if (p->po->pw) p->po->pw->run(&w, p->po->pw->arg);
	else if (o->reserve_jobs) work_reserved(&w);
	else work_direct(&w, p->po->keys);
	if (o->reserve_jobs) lease_stop(&w.lease);
	worker_end(&w);
	djc_close(cc);
	if (populate_orphaned()) {
		/* nobody reads the pipe any more: say it where a person may */
		worker_event("orphaned parent=%ld", (long)parent);
		fprintf(stderr, "djc: worker process %ld stopped as on SIGTERM: its parent process %ld died\n", (long)getpid(),
			(long)parent);
	}
	atomic_store(&slot->ended, 1);
	_exit(populate_signal ? 4 : 0);
}

/* Fork worker child i with its own connection; its reports go to a pipe
 * whose read end goes to *fd. The pipes of children 0..n are closed in the
 * child. Returns the child's pid, or -1. */
static pid_t spawn_worker(pool *p, int i, int *fd)
{
	making_slot *slot = &p->slots[i];
	memset(slot, 0, sizeof *slot);
	atomic_store(&slot->session, -1);   /* no session yet */
	int pf[2];
	if (pipe(pf)) return -1;
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) { close(pf[0]); close(pf[1]); return -1; }
	if (pid == 0) {
		watch_parent(parent);
		close(pf[0]);
		fcntl(pf[1], F_SETFD, FD_CLOEXEC);   /* make programs must not hold it open */
		for (int k = 0; k < p->n; k++) if (p->fds[k] >= 0) close(p->fds[k]);
		child_main(p, slot, pf[1], parent);
	}
	close(pf[1]);
	fcntl(pf[0], F_SETFL, O_NONBLOCK);
	*fd = pf[0];
	return pid;
}

/* Pass a signal (populate_signal) and a drain (SIGUSR1) on to every
 * child, once each. A drain is said on stderr once forwarded, so whoever
 * sent it (a batch script, a test) knows every worker has it: each
 * finishes its make and takes no new job. */
static void forward_signals(pool *p)
{
	if (populate_signal && !p->forwarded) {
		for (int i = 0; i < p->n; i++) if (p->pids[i] > 0) kill(p->pids[i], populate_signal);
		p->forwarded = 1;
	}
	if (populate_drain && !p->drained) {
		int k = 0;
		for (int i = 0; i < p->n; i++) if (p->pids[i] > 0 && kill(p->pids[i], SIGUSR1) == 0) k++;
		p->drained = 1;
		fprintf(stderr, "djc: draining on SIGUSR1: %d worker process%s finish their makes and take no new job\n", k,
			k == 1 ? "" : "es");
		fflush(stderr);
	}
}

/* Child i ended: start a new one in its place (the rest of the work, and
 * the jobs handed back, need a worker), a bounded number of times so a
 * make that always crashes ends. */
static void respawn(pool *p, int i)
{
	if (atomic_load(&p->sh->stop) || populate_signal || populate_drain || p->unreachable || p->respawns >= 4 * p->procs) return;
	int fd;
	if (p->fds[i] >= 0) close(p->fds[i]);
	p->fds[i] = -1;
	sb_reset(&p->bufs[i]);
	free(p->mk[i].key);
	free(p->mk[i].table);
	p->mk[i].key = p->mk[i].table = NULL;
	pid_t npid = spawn_worker(p, i, &fd);
	if (npid > 0) { p->pids[i] = npid; p->fds[i] = fd; p->alive++; p->respawns++; }
}

/* Child i (pid) died of signal sig, of its own (a crash in a C make, an
 * OOM kill), or (sig 0) exited with status code from inside a make (a C
 * make that called exit()): its job lost a worker, recorded now (retried,
 * or an error once jobs.max_lost workers died on it), unless it had
 * already ended that job (then its death costs nothing). */
static void died_of_signal(pool *p, int i, pid_t pid, int sig, int code)
{
	char msg[160], how[64];
	if (sig) {
		snprintf(msg, sizeof msg, "make killed by signal %d (worker process %d died)", sig, (int)pid);
		snprintf(how, sizeof how, "signal %d (%s)", sig, make_signame(sig));
	} else {
		snprintf(msg, sizeof msg, "make called exit(%d) (worker process %d ended; a make returns non-zero to fail)",
			 code, (int)pid);
		snprintf(how, sizeof how, "exit(%d) inside make", code);
	}
	jobs_death d = {jobs_host(), (long)pid, how, msg, NULL};
	double retry_in = 0;
	int ended = 1;
	int failed = p->o->reserve_jobs ? child_died(p, i, pid, &d, &retry_in, &ended) : 1;
	if (ended || p->nz == sizeof p->zombies / sizeof *p->zombies) waitpid(pid, NULL, 0);
	else { p->zombies[p->nz].pid = pid; p->zombies[p->nz].due = mono_now() + ZOMBIE_GRACE; p->nz++; }
	if (failed == 2) {
		atomic_fetch_add(&p->sh->retried, 1);
		worker_retry_due(p->sh, retry_in);
	} else if (failed) {
		making *mk = &p->mk[i];
		result_add_error(p->res, mk->table ? mk->table : p->t->name, mk->key ? mk->key : "{}", d.error ? d.error : msg);
		atomic_fetch_add(&p->sh->errors, 1);
		if (!p->o->suppress_errors) atomic_store(&p->sh->stop, 1);
	}
	free(d.error);
}

/* Look at every child that ended (not reaped yet: until its jobs are
 * handed back, no other process can have its pid, which release.pid goes
 * by). */
static void reap(pool *p)
{
	for (int i = 0; i < p->n; i++) {
		siginfo_t si;
		si.si_pid = 0;
		if (p->pids[i] <= 0 || waitid(P_PID, (id_t)p->pids[i], &si, WEXITED | WNOHANG | WNOWAIT) || si.si_pid != p->pids[i])
			continue;
		pid_t pid = p->pids[i];
		p->pids[i] = -1;
		p->alive--;
		int sig = si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED ? si.si_status : 0;
		/* a child that exited without passing child_main's end left
		 * from inside a make (a C make's exit()): a death as by a signal,
		 * not a worker that finished (its key was neither made nor
		 * failed, its job stayed reserved) */
		int exited_in_make = !sig && !atomic_load(&p->slots[i].ended);
		/* what it wrote last may still be in the pipe; its slot says
		 * which job it was making */
		drain(&p->fds[i], &p->bufs[i], p->res, p->t, &p->mk[i]);
		slot_read(&p->slots[i], &p->mk[i]);
		if ((!sig && !exited_in_make) || (p->forwarded && (sig == SIGINT || sig == SIGTERM))) {
			waitpid(pid, NULL, 0);
			continue;
		}
		died_of_signal(p, i, pid, sig, si.si_status);
		respawn(p, i);
	}
	for (size_t z = 0; z < p->nz;) {
		if (mono_now() < p->zombies[z].due) { z++; continue; }
		parent_bound(p);
		if (!p->unreachable && retryable(release_all(p->c, p->t, p->zombies[z].pid, p->po->pw))) p->unreachable = 1;
		waitpid(p->zombies[z].pid, NULL, 0);
		p->zombies[z] = p->zombies[--p->nz];
	}
}

/* Read what the children wrote, at most 100 ms. */
static void gather(pool *p)
{
	struct pollfd pfd[DJC_MAX_PROCESSES];
	int map[DJC_MAX_PROCESSES], np = 0;
	for (int i = 0; i < p->n; i++) if (p->fds[i] >= 0) { pfd[np].fd = p->fds[i]; pfd[np].events = POLLIN; map[np++] = i; }
	if (np) poll(pfd, (nfds_t)np, 100); else usleep(50000);
	for (int k = 0; k < np; k++) {
		if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
		int i = map[k];
		drain(&p->fds[i], &p->bufs[i], p->res, p->t, &p->mk[i]);
	}
}

int pool_run(djc_conn *c, table *t, const djc_populate_options *o, counters *sh, djc_populate_result *res,
	     const pool_opts *po)
{
	pool *p = xcalloc(1, sizeof *p);   /* some 40 kB: not on the stack */
	p->c = c; p->t = t; p->o = o; p->sh = sh; p->res = res; p->po = po;
	p->procs = po->procs > DJC_MAX_PROCESSES ? DJC_MAX_PROCESSES : po->procs;
	size_t slots_size = (size_t)p->procs * sizeof *p->slots;
	p->slots = mmap(NULL, slots_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p->slots == MAP_FAILED) {
		free(p);
		return conn_fail(c, DJC_ERROR, "cannot start worker processes: %s", strerror(errno));
	}
	fflush(NULL);
	for (int i = 0; i < p->procs; i++) {
		int fd;
		pid_t pid = spawn_worker(p, i, &fd);
		if (pid < 0) break;
		p->pids[p->n] = pid;
		p->fds[p->n] = fd;
		p->bufs[p->n] = (sb_t)SB_INIT;
		p->n++;
	}
	if (p->n == 0) {
		int e = errno;
		munmap(p->slots, slots_size);
		free(p);
		return conn_fail(c, DJC_ERROR, "cannot start worker processes: %s", strerror(e));
	}
	p->alive = p->n;
	while (p->alive > 0 || p->nz > 0) {
		gather(p);
		forward_signals(p);
		reap(p);
		progress_update(po->prog, atomic_load(&sh->success) + atomic_load(&sh->errors) + atomic_load(&sh->skipped),
				atomic_load(&sh->errors), 0);
	}
	if (p->bounded) db_set_wait_bound(c->db, p->bound0);
	/* children that could not connect: one line, with how many (the first
	 * one's message, when it is the failure kept) */
	int noconn = atomic_load(&sh->noconn);
	char *first = noconn ? worker_failure_text(sh) : NULL;
	if (first && strstr(first, "cannot connect")) {
		if (noconn < p->n)
			snprintf(sh->failure, sizeof sh->failure, "%d of %d worker processes could not connect (the others worked on): %s",
				 noconn, p->n, first);
		else
			snprintf(sh->failure, sizeof sh->failure, "no worker process could connect: %s", first);
	}
	free(first);
	/* the children are gone: read what they wrote last (the loop above may
	 * have reaped the last one before reading its pipe to the end) */
	for (int i = 0; i < p->n; i++) {
		drain(&p->fds[i], &p->bufs[i], res, t, &p->mk[i]);
		if (p->fds[i] >= 0) close(p->fds[i]);
		sb_free(&p->bufs[i]);
		free(p->mk[i].key);
		free(p->mk[i].table);
	}
	munmap(p->slots, slots_size);
	free(p);
	return DJC_OK;
}
