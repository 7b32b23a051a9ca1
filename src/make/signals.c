/* signals.c - the flags set by populate's signal handlers (signals.h). */
#include "signals.h"
#include <unistd.h>

volatile sig_atomic_t populate_signal;
volatile sig_atomic_t populate_drain;
pid_t populate_parent;
/* stop_catch calls not yet released: while one runs, SIGPIPE is ignored */
static _Atomic int pipe_ignoring;

void signals_pipe_ignoring(int delta)
{
	pipe_ignoring += delta;
}

int signals_pipe_ignored(void)
{
	return pipe_ignoring > 0;
}

int populate_orphaned(void)
{
	return populate_parent > 0 && getppid() != populate_parent;
}

void signals_stop(int sig)
{
	if (!populate_signal) populate_signal = sig;
}
