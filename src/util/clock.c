/* clock.c - see clock.h. */
#include "clock.h"

#include <time.h>

double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
