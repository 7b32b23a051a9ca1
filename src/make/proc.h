/* proc.h - run a program as a process tree that never outlives its
 * caller: spawn it (argv and environment, no shell) with pipes on its
 * stdin, stdout and stderr, in a process group of its own; pump the pipes
 * (write its input, collect stdout up to a cap, keep a bounded tail of
 * stderr); stop it (SIGTERM to its group, SIGKILL after a grace period);
 * and report what became of it in a proc_status.
 *
 * Programs are started by a supervisor: a small process forked from the
 * caller on first use and kept for the next program (one per program
 * running at the same time, idle ones pooled), that is a child subreaper
 * (PR_SET_CHILD_SUBREAPER), so every process a program starts, even one
 * that left its process group or session, is its descendant. When a
 * program's main process ends, the supervisor kills whatever that program
 * left running before it reports the exit; when the caller process dies
 * (even by SIGKILL), the supervisor kills the whole tree and exits. The
 * supervisor spawns with posix_spawn (clone with CLONE_VM|CLONE_VFORK),
 * so the cost per program is an exec and two small socket messages, not a
 * fork of a large threaded caller.
 *
 * One program per proc handle, one thread at a time per handle; several
 * handles may run at once (each has its own supervisor). Nothing here
 * changes process-wide state of the caller (signal dispositions, the
 * environment): a write to a program that closed its stdin is EPIPE, not
 * SIGPIPE. */
#ifndef DJC_PROC_H
#define DJC_PROC_H
#include <poll.h>
#include <stddef.h>
#include <sys/types.h>

/* Why a program was stopped. A stop check returns one of these (PROC_RUN:
 * keep going). Append new reasons at the end; never renumber (make_result
 * stores them, populate compares them). */
typedef enum proc_stop_reason {
	PROC_RUN = 0,            /* not stopped: it ended by itself */
	PROC_STOP_LOST = 1,      /* the job's reservation was lost */
	PROC_STOP_INTERRUPT = 2, /* the caller got SIGINT or SIGTERM */
	PROC_STOP_TOO_BIG = 3,   /* its stdout went over the cap (set by proc itself) */
	PROC_STOP_PROTOCOL = 4,  /* it broke its protocol with the caller (a serve program's garbage) */
	PROC_STOP_TIMEOUT = 5,   /* it ran past its timeout */
	PROC_STOP_CANCELLED = 6  /* its job was cancelled */
} proc_stop_reason;

/* Polled while a program runs (at least every PROC_POLL_MS): returns a
 * proc_stop_reason to stop it, PROC_RUN (0) to let it run. */
typedef int (*proc_check)(void *arg);
#define PROC_POLL_MS 100

/* Why a program could not be started (proc_status.spawn_failed). */
typedef enum proc_spawn_step {
	PROC_SPAWN_OK = 0,
	PROC_SPAWN_EXEC,         /* posix_spawn/exec failed: no such program, not executable, ... */
	PROC_SPAWN_PIPES,        /* out of file descriptors */
	PROC_SPAWN_SUPERVISOR    /* the supervisor could not be started or died */
} proc_spawn_step;

/* What became of a program. */
typedef struct proc_status {
	pid_t pid;            /* its main process, which leads its process group; 0 if not started */
	int spawn_failed;     /* proc_spawn_step; spawn_errno says why */
	int spawn_errno;
	int exited;           /* its main process ended and was reaped */
	int code;             /* exit status when it exited normally (not by a signal) */
	int signal;           /* the signal that ended its main process, else 0 */
	int stop;             /* proc_stop_reason: why we stopped it; PROC_RUN if not */
	int termed;           /* SIGTERM was sent to its group */
	int killed;           /* the grace period ran out: SIGKILL was sent to its group */
	int too_big;          /* stdout went over the cap; what came after was dropped */
	int leftovers;        /* processes of its tree still running when its main
	                         process ended: all killed then */
	int abandoned;        /* its end was not seen within the bounds (SIGKILL did not
	                         take, or the supervisor died): its supervisor was discarded */
} proc_status;

typedef struct proc_spec {
	char *const *argv;    /* argv[0] is looked up in the PATH of envp (as execvpe does) */
	char *const *envp;    /* the whole environment of the program */
	size_t out_cap;       /* stdout beyond this many bytes sets too_big; 0 = no cap */
	size_t err_tail;      /* keep the last this many bytes of stderr (at most PROC_TAIL_MAX) */
} proc_spec;
#define PROC_TAIL_MAX 65536

typedef struct proc proc;

/* Start spec->argv. On success *out is a running program (the caller owns
 * it: proc_free) and st->pid is set; returns 0. On failure *out is NULL,
 * st says why (spawn_failed, spawn_errno) and -1 is returned; nothing is
 * left running. st is reset either way. */
int proc_spawn(proc **out, const proc_spec *spec, proc_status *st);

/* Queue n bytes for the program's stdin (copied); close_after closes its
 * stdin once everything queued was written. Written by proc_pump. */
void proc_input(proc *p, const char *buf, size_t n, int close_after);

/* Queue buf[0..n) for the program's stdin, after what is queued, without a
 * copy: buf (malloc'd) is the queue's, freed once written (or at once when
 * stdin is closed). For large values: one of 256 KiB or more goes into the
 * pipe by reference (vmsplice), and is freed only once the program read it
 * (or at proc_free). */
void proc_input_take(proc *p, char *buf, size_t n);

/* proc_input_take of a buffer from piece_get (util/piecepool.h): given back
 * with piece_put where proc_input_take frees, so a piece lent to the pipe
 * is reused only once the program read past it. */
void proc_input_piece(proc *p, char *buf, size_t n);

/* n bytes are about to be queued for stdin, a piece at a time: the pipe
 * grows as proc_input_take grows it for a value of n bytes. */
void proc_input_expect(proc *p, size_t n);

/* Bytes of stdin djc still holds for the program: queued and not yet
 * written, and (while large values are in the pipe by reference) those
 * the pipe holds unread. 0 once stdin is closed. */
size_t proc_input_backlog(proc *p);

/* One round of I/O: write queued input, read what stdout and stderr have,
 * notice the end of the program, escalate a stop whose grace ran out.
 * Waits at most timeout_ms for something to happen (0: does not wait). Returns 1 once the
 * program is over (its main process ended and its pipes were read to their
 * end, or it was abandoned), else 0. */
int proc_pump(proc *p, int timeout_ms);

/* More descriptors for proc_pump to wait on beside the program's (a
 * per-key program's fetch socket, fetchsock.h): fill writes at most max
 * pollfds (events set) and returns how many; after a poll that found
 * anything, ready gets them back with their revents. NULL: none. */
#define PROC_ALSO_MAX 40
typedef struct proc_also {
	int (*fill)(void *arg, struct pollfd *pf, int max);
	void (*ready)(void *arg, const struct pollfd *pf, int n);
	void *arg;
} proc_also;
void proc_poll_also(proc *p, const proc_also *also);

/* Stop the program for `reason` (a proc_stop_reason): SIGTERM to its group now,
 * SIGKILL once `grace` seconds pass without its end (proc_pump escalates).
 * Only the first stop counts; a program already over is left alone. */
void proc_stop(proc *p, int reason, double grace);

/* Pump until the program is over, polling should_stop (may be NULL) and
 * stopping it with that reason (and `grace`) when it asks; a stdout over
 * the cap stops it too (PROC_STOP_TOO_BIG). Every wait is bounded once a
 * stop began: grace, then as long again for SIGKILL to take, then the
 * program is abandoned. Fills *st. */
void proc_wait(proc *p, proc_check should_stop, void *arg, double grace, proc_status *st);

/* What the program wrote to stdout so far (NUL-terminated, owned by p;
 * the caller may change it in place),
 * and what is left of stderr (its last err_tail bytes, not NUL-terminated). */
char *proc_out(proc *p, size_t *n);
const char *proc_err(const proc *p, size_t *n);
/* How many bytes of stderr came before that tail (not kept). */
size_t proc_err_cut(const proc *p);
/* Drop the first n bytes of collected stdout (a long-lived program's
 * answers are consumed as they come). */
void proc_out_consume(proc *p, size_t n);
/* Room for n bytes of stdout in all (what is collected counts) made at
 * once: a raw value of n bytes is coming. proc_out's pointer changes. For
 * 256 KiB or more to come, stdout's pipe grows to 1 MiB as stdin's does,
 * and back once proc_out_consume emptied what was collected. */
void proc_out_expect(proc *p, size_t n);
/* Forget the stderr tail kept so far (a long-lived program's stderr is
 * kept per request). */
void proc_err_clear(proc *p);
/* Its status so far (final once proc_pump returned 1). */
void proc_get_status(const proc *p, proc_status *st);
/* Whether its stdout reached its end (all its writers closed it): 1 once
 * read to EOF, whether or not the program still runs. */
int proc_out_closed(const proc *p);

/* Free p. A program still running is killed first (SIGKILL to its whole
 * tree), with a bounded wait. NULL is fine. */
void proc_free(proc *p);
#endif
