/* worker_table.h - the table ~djc_worker that the processes of `djc
 * worker` share, never their own memory (docs/workers.md): per served
 * table, its refresh slot (at most one refresh per interval among all
 * workers) and the histogram of its makes' durations (so a worker with a
 * deadline claims only what it can finish). The statements are
 * worker_statements.c's; worker_table.c runs them. Internal to
 * src/populate (workloop.c, worker_refresh.c, worker_api.c). */
#ifndef DJC_WORKER_TABLE_H
#define DJC_WORKER_TABLE_H
#include <stdint.h>
#include "jobs/sql.h"

#define WORKER_TABLE "~djc_worker"
#define NBUCKET 48   /* duration buckets: below 1/16 s, then a factor sqrt(2) each */

/* worker_statements.c: the table's columns (the key first), and its statements. */
extern const attr W_COLUMNS[];
extern const size_t NW_COLUMNS;
extern const jsql WS_CREATE, WS_EXISTS, WS_ADD, WS_SLOT, WS_SLOT_NOW, WS_GEN, WS_REFRESHED, WS_DURATIONS, WS_DURATIONS_ADD,
	WS_DURATIONS_HALVE;
/* Every statement above, NULL-terminated. */
extern const jsql *const WS_ALL[];

/* The table and the rows of the served tables tabs[0..n), when missing. */
int worker_table_ensure(djc_conn *c, table *const *tabs, size_t n);

/* ---- the refresh slot of the table `name` */
/* Take the slot if its last refresh started an interval ago or more:
 * *got 1 when this worker took it, and then *gen the generation it
 * started (0: not known to be ours). */
int slot_take(djc_conn *c, const char *name, double interval, int *got, int64_t *gen);
/* Take it at once if no refresh started since generation gen0: *got 1
 * when this worker took it (its generation is gen0 + 1). */
int slot_take_after(djc_conn *c, const char *name, int64_t gen0, int *got);
/* The generations started (*gen) and committed (*done). */
int slot_gens(djc_conn *c, const char *name, int64_t *gen, int64_t *done);
/* The refresh of generation gen committed. */
int slot_refreshed(djc_conn *c, const char *name, int64_t gen);

/* ---- the durations of the makes of one table */
typedef struct durations {
	long shared[NBUCKET];   /* the histogram as last read */
	long local[NBUCKET];    /* this process's makes, not yet added to it */
	long nlocal;
	double read_at, flushed_at;   /* monotonic */
} durations;
/* Read the shared histogram (a failure keeps the old one); halve it when
 * it holds many makes. */
void durations_read(djc_conn *c, const char *name, durations *d);
/* Add this process's counts to the shared histogram (one UPDATE). */
void durations_flush(djc_conn *c, const char *name, durations *d);
/* Count a make that ran `seconds`; flushed every few makes or seconds. */
void durations_add(djc_conn *c, const char *name, durations *d, double seconds);
/* The 90th percentile of the durations (the top of its bucket), or -1
 * when none is known yet; the shared histogram is read again when old. */
double durations_p90(djc_conn *c, const char *name, durations *d);
#endif
