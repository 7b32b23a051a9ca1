/* make.h - running make for one key: a C callback (make.c), a program
 * per key (make.c over proc.c), or a serve program making many keys
 * (serve.h). The layer between populate and the jobs/table layers:
 * populate (src/populate) decides which key to make and commits what make
 * staged; make runs the user's code, stages and checks its rows, and
 * writes nothing to the database. It calls the table layer (staging,
 * reads for the make) and the jobs layer only for the job metadata
 * (jobs_version). */
#ifndef DJC_MAKE_H
#define DJC_MAKE_H
#include <stdatomic.h>
#include <time.h>
#include "jobs/jobs.h"
#include "proc.h"
#include "signals.h"

/* Rows staged by one make: parallel arrays of target tables and prepared rows. */
typedef struct staged {
	table **tables;
	djc_row **rows;
	size_t n, cap;
	read_set *reads;   /* what the make read through djc (NULL: nothing), for its commit to check */
} staged;
void staged_free(staged *s);

/* Why a running make must stop; MAKE_GO (0) lets it go on. Reasons are
 * only ever appended, never renumbered (make_result stores them). A drain
 * (SIGUSR1) is no reason: it lets running makes finish. */
typedef enum make_stop {
	MAKE_GO = 0,
	MAKE_STOP_LOST,       /* a renewal found the reservation taken or reset */
	MAKE_STOP_UNPROVEN,   /* no renewal proved the lease for a whole lease: it may be someone else's */
	MAKE_STOP_SIGNAL,     /* SIGINT/SIGTERM: populate is stopping */
	MAKE_STOP_TIMEOUT,    /* it ran past its timeout (--timeout, timeout =, jobs.make_timeout) */
	MAKE_STOP_CANCELLED   /* its job was cancelled (jobs cancel, jobs ignore): a renewal found it ignore */
} make_stop;

/* Asked while a make runs (a program: every poll; a C make: through
 * djc_make_cancelled). */
typedef struct make_watch {
	make_stop (*check)(void *arg);
	void *arg;
} make_watch;

struct djc_make_ctx {
	djc_conn *c;
	table *t;
	const djc_row *key;
	staged out;
	char *err;
	char *stack;        /* djc_make_error_stack's, or NULL */
	const make_watch *watch;
	int attempt;        /* 1 for a job's first attempt (djc_make_attempt) */
	read_set *reads;   /* what make read through djc, checked at commit (table.h) */
};

/* djc_make_fetch, its rows handed to k as they come (rows_fetch_stream:
 * a backend that streams, db_can_stream), recorded as read (a large value
 * by its digest) in ctx->reads; *out: the rows as read (freed by the
 * caller). */
int make_fetch_stream(djc_make_ctx *ctx, const char *name, const char *where, const rows_sink *k, djc_rowset **out);

/* What became of one make. */
typedef struct make_result {
	int ok;             /* rows staged and checked */
	char *message;      /* error message when !ok */
	char *stack;        /* stderr tail of a make program */
	int signal;         /* the make program died of this signal */
	make_stop stopped;  /* we stopped it, and why (MAKE_GO: we did not) */
	int fatal;          /* make could not be tried at all and the worker must
	                       stop (a serve program that cannot be started, speaks
	                       another protocol version, or was restarted too often):
	                       the key was not attempted, message says why */
} make_result;
void make_result_free(make_result *r);


/* One key to make, whatever makes it: the key of t on connection c, its
 * attempt-th attempt (DJC_ATTEMPT, djc_make_attempt, the serve request's
 * "attempt"), and the watch asked while it runs (may be NULL). */
typedef struct make_next {
	const djc_row *key;
	int attempt;
} make_next;
typedef struct make_req {
	djc_conn *c;
	table *t;
	const djc_row *key;
	int attempt;
	const make_watch *watch;
	/* the keys of t that come next, in order (NULL/0: none known): a serve
	 * program that asked for keys ahead (protocol version 2) may be
	 * given them before this key's answer (serve.h); the caller checked
	 * that each may start (held, not cancelled) */
	const make_next *next;
	size_t nnext;
} make_req;

/* Run the make program argv for key (its attempt number in DJC_ATTEMPT);
 * stage and check its rows. watch (may be NULL) is asked while it runs;
 * when it says stop, the program is stopped and res->stopped says why. */
int make_program(const make_req *rq, char *const *argv, staged *out, make_result *res);
/* Call a C make for key. Work it finished is kept even if a stop was asked
 * meanwhile (the caller commits it, then stops); a make that returns an
 * error after a stop was asked is recorded as stopped. */
int make_callback(const make_req *rq, djc_make_fn fn, void *payload, staged *out, make_result *res);
/* Check a row (JSON object) from make for t or one of its parts; stage it. */
int stage_json_row(djc_conn *c, table *t, const djc_row *key, json_t *obj, staged *out, char **msg);
/* For a line l[0..n) that jansson refused (je) because of an integer
 * beyond 64 bits signed, which it cannot read: a one-line message naming
 * the member of the line's object whose value holds it (noun: "attribute"
 * for a row), the number, and, for one above 2^63-1, that a uint64 is
 * written as a string (docs/types.md). NULL for any other error, or when
 * no member holds it. Caller frees. */
char *make_wide_int_message(const char *l, size_t n, const json_error_t *je, const char *noun);
/* Values of a row given as raw bytes beside its JSON (the serve protocol's
 * binary values, docs/serve-protocol.md): names[i] holds data[0..lens[i]),
 * for a bytes or <blob> attribute the JSON object does not hold. */
typedef struct row_bins {
	size_t n;
	char **names;
	const char **data;
	size_t *lens;
} row_bins;
/* A row's "_bin" ([["attribute", length], ...]) into b's names and
 * lengths (its data left to the caller), each length at most max, their
 * sum in *total: 0, or -1 when it is not such a list (b then holds what
 * was read: row_bins_free). */
int row_bins_parse(json_t *bin, size_t max, row_bins *b, size_t *total);
void row_bins_free(row_bins *b);
/* stage_json_row with the row's raw values (bins may be NULL: none). */
int stage_json_row_bins(djc_conn *c, table *t, const djc_row *key, json_t *obj, const row_bins *bins, staged *out,
			char **msg);
/* Check row r of t (taken: freed either way), its key attributes filled
 * from key, and stage it: stage_json_row once its JSON was read. */
int stage_row_take(djc_conn *c, table *t, const djc_row *key, djc_row *r, staged *out, char **msg);

/* Shared by the two make-program protocols (make.c, serve.c). */
/* What the watch says now (no watch: the signal flag only). */
make_stop make_watch_check(const make_watch *w);
/* The process module's stop reason for a make_stop (not MAKE_GO). */
int make_proc_reason(make_stop why);
/* "interrupted by SIGTERM", "make stopped: ..." (caller frees). */
char *make_stop_message(make_stop why);
/* The target's rows first; 0 with res->message set when make produced no
 * row for the target. */
int make_need_target_row(table *t, staged *out, make_result *res);

/* When a make started (docs/parity.md: job metadata). */
typedef struct make_clock { struct timespec wall, mono; } make_clock;
void make_clock_start(make_clock *k);
/* A make of t succeeded with rows out (target rows first): its target rows
 * get the job metadata columns (a table declared with them), and reads
 * (taken; NULL: none, else not empty) go with them (out->reads) to the
 * commit of that key, which checks them (make_rows_insert). */
void make_succeeded(djc_conn *c, table *t, staged *out, const make_clock *k, read_set *reads);
/* A make program's stderr tail made fit for the jobs table: valid UTF-8
 * and the database password redacted, its first line "... (N bytes cut)"
 * when cut bytes (> 0) of stderr came before it (N: those, and a partial
 * character dropped at its start); NULL when empty (caller frees). */
char *make_stderr_text(const djc_conn *c, const char *tail, size_t n, size_t cut);
/* What a make program may write for one key, in bytes (jobs.max_output,
 * in MiB): beyond it the key fails and the program is stopped. */
size_t make_max_output(void);
/* "SIGSEGV" for SIGSEGV, ... ("signal" for the rarer ones). */
const char *make_signame(int sig);
/* The environment of the current process, without the variables that
 * describe djc's database (DJC_DATABASE_URL, DJC_KEY..., DJC_TABLE, the
 * schema variables); with without_secrets also without those that hold
 * its password (docs/serve-protocol.md). Plus where djc is: DJC as the
 * process has it (the djc command sets it to itself), else a djc found
 * beside this library or in its BINDIR (make_djc_env); and the directory
 * of djc_make.py first on PYTHONPATH (make_py_dir), the caller's
 * PYTHONPATH after it. NULL-terminated, with *n entries; its strings are
 * borrowed but for *own (the composed PYTHONPATH or NULL), which the
 * caller frees after make_env_free. */
char **make_env_base(const djc_conn *c, int without_secrets, size_t *n, char **own);
void make_env_free(char **env);
/* locate.c: "DJC=/path/to/djc" for a djc found beside this code (the
 * djc command itself; PREFIX/bin/djc beside PREFIX/lib/libdjc.so) or in
 * the BINDIR it was built for, else NULL; the directory of djc_make.py
 * (PREFIX/share/djc/python, a build tree's python/, the PYDIR it was
 * built for), else NULL. Looked for once per process; static. */
const char *make_djc_env(void);
const char *make_py_dir(void);
#endif
