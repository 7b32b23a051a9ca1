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

struct djc_make_ctx {
	djc_conn *c;
	table *t;
	const djc_row *key;
	staged out;
	char *err;
};

/* What became of one make. */
typedef struct make_result {
	int ok;             /* rows staged and checked */
	char *message;      /* error message when !ok */
	char *stack;        /* stderr tail of a make program */
	int signal;         /* the make program died of this signal */
	int stopped;        /* stopped by us: a proc_stop_reason (PROC_STOP_LOST = 1,
	                       PROC_STOP_INTERRUPT = 2, ...), 0 if not */
} make_result;
void make_result_free(make_result *r);

/* Flags polled while a make program runs (set from signal handlers or the
 * heartbeat thread). */
extern volatile sig_atomic_t populate_signal;   /* SIGINT/SIGTERM received */

/* Run the make program argv for key; stage and check its rows.
 * should_stop(arg) (may be NULL) is polled while it runs: a proc_stop_reason
 * stops it (SIGTERM to its group, SIGKILL after jobs.stop_grace
 * seconds) and is returned in res->stopped. When its main process ends,
 * whatever it left running is killed; nothing of it outlives the caller. */
int make_program(djc_conn *c, table *t, const djc_row *key, char *const *argv, proc_check should_stop, void *arg,
		 staged *out, make_result *res);
/* The stop check populate uses: PROC_STOP_INTERRUPT once SIGINT/SIGTERM
 * was received, PROC_STOP_LOST once *(atomic_int *)lost is non-zero. */
int make_stop_check(void *lost);
/* Call a C make for key. */
int make_callback(djc_conn *c, table *t, const djc_row *key, djc_make_fn fn, void *payload, staged *out,
		  make_result *res);
/* Check a row (JSON object) from make for t or one of its parts; stage it. */
int stage_json_row(djc_conn *c, table *t, const djc_row *key, json_t *obj, staged *out, char **msg);
#endif
