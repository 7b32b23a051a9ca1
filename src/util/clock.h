/* clock.h - the monotonic clock, in seconds: for timeouts, leases,
 * backoffs and rates, never for what is written to a database (that is
 * the server's clock, or the wall clock where a row records a time). */
#ifndef DJC_CLOCK_H
#define DJC_CLOCK_H

/* Seconds since an arbitrary point (CLOCK_MONOTONIC): only differences
 * mean anything. */
double mono_now(void);
#endif
