/* signals.c - the flags set by populate's signal handlers (signals.h). */
#include "signals.h"
#include <unistd.h>

volatile sig_atomic_t populate_signal;
volatile sig_atomic_t populate_drain;
pid_t populate_parent;

int populate_orphaned(void)
{
	return populate_parent > 0 && getppid() != populate_parent;
}

void signals_stop(int sig)
{
	if (!populate_signal) populate_signal = sig;
}
