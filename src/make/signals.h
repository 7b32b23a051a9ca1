/* signals.h - what the signals sent to populate or djc worker asked, as
 * flags that every layer running work reads (make's watch, the worker
 * loop, the pool). Set by populate's handlers (populate.c, the worker's
 * own in src/populate/worker_api.c) and read everywhere else; plain
 * sig_atomic_t, so a handler may set them. */
#ifndef DJC_SIGNALS_H
#define DJC_SIGNALS_H
#include <signal.h>
#include <sys/types.h>

/* The signal (SIGINT/SIGTERM) that asked populate to stop, or 0; set by
 * populate's handlers (signals_stop). */
extern volatile sig_atomic_t populate_signal;
/* SIGUSR1 asked populate to drain: take no more work, finish what runs. */
extern volatile sig_atomic_t populate_drain;
/* In a worker process of the pool (pool.c): its parent's pid, which it
 * watches (a SIGTERM when the parent dies); 0 in any other process. */
extern pid_t populate_parent;
/* 1 when this is a pool's worker process whose parent died. */
int populate_orphaned(void);
/* SIGUSR1 caught (populate_drain cleared, then set by it) from the start of
 * djc_populate and djc_worker, so a drain asked while they set up is not
 * the signal's default, the end of the process. A SIGUSR1 the caller
 * blocked is unblocked meanwhile, so one that came while it was blocked
 * (the CLI blocks it from its start) drains at once. drain_release puts
 * back the caller's handler and mask. (Defined in src/populate/populate.c,
 * which uses them with djc_worker; they belong in signals.c.) */
typedef struct drain_saved {
	struct sigaction act;
	int was_blocked;
} drain_saved;
void drain_catch(drain_saved *d);
void drain_release(const drain_saved *d);
/* SIGINT and SIGTERM set populate_signal (the workers stop taking keys)
 * and SIGPIPE is ignored, until stop_release puts back the caller's
 * dispositions of all three (defined in src/populate/populate.c; djc_worker
 * uses the same). */
typedef struct stop_saved {
	struct sigaction old_int, old_term, old_pipe;
} stop_saved;
void stop_catch(stop_saved *s);
void stop_release(const stop_saved *s);
/* The handler of SIGINT and SIGTERM: the first signal is kept in
 * populate_signal. */
void signals_stop(int sig);
#endif
