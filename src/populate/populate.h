/* populate.h - running make (C callback or program) for one key, and the
 * populate drivers (direct and with job reservation). */
#ifndef DJC_POPULATE_H
#define DJC_POPULATE_H
#include <signal.h>
#include <stdatomic.h>
#include "jobs/jobs.h"
#include "proc.h"

/* Rows staged by one make: parallel arrays of target tables and prepared rows. */
typedef struct staged {
	table **tables;
	djc_row **rows;
	size_t n, cap;
} staged;
void staged_free(staged *s);

/* Why a running make must stop; MAKE_GO (0) lets it go on. */
typedef enum make_stop {
	MAKE_GO = 0,
	MAKE_STOP_LOST,       /* a renewal found the reservation taken or reset */
	MAKE_STOP_UNPROVEN,   /* no renewal proved the lease for a whole lease: it may be someone else's */
	MAKE_STOP_SIGNAL      /* SIGINT/SIGTERM: populate is stopping */
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
	const make_watch *watch;
	read_set *reads;   /* what make read through djc, checked at commit (table.h) */
};

/* What became of one make. */
typedef struct make_result {
	int ok;             /* rows staged and checked */
	char *message;      /* error message when !ok */
	char *stack;        /* stderr tail of a make program */
	int signal;         /* the make program died of this signal */
	make_stop stopped;  /* we stopped it, and why (MAKE_GO: we did not) */
} make_result;
void make_result_free(make_result *r);

/* The signal (SIGINT/SIGTERM) that asked populate to stop, or 0; set by
 * populate's handlers. */
extern volatile sig_atomic_t populate_signal;

/* Run the make program argv for key; stage and check its rows. watch (may
 * be NULL) is asked while it runs; when it says stop, the program is
 * stopped and res->stopped says why. */
int make_program(djc_conn *c, table *t, const djc_row *key, char *const *argv, const make_watch *watch,
		 staged *out, make_result *res);
/* Call a C make for key. Work it finished is kept even if a stop was asked
 * meanwhile (the caller commits it, then stops); a make that returns an
 * error after a stop was asked is recorded as stopped. */
int make_callback(djc_conn *c, table *t, const djc_row *key, djc_make_fn fn, void *payload, const make_watch *watch,
		  staged *out, make_result *res);
/* Check a row (JSON object) from make for t or one of its parts; stage it. */
int stage_json_row(djc_conn *c, table *t, const djc_row *key, json_t *obj, staged *out, char **msg);
#endif
