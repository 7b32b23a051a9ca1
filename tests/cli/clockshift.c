/* clockshift.c - an LD_PRELOAD shim for tests/cli/test_clocks.sh: the wall
 * clock this process reads (clock_gettime CLOCK_REALTIME, gettimeofday,
 * time) is shifted by the number of seconds in the file $CLOCKSHIFT_FILE,
 * re-read on every call, while everything the kernel times itself
 * (pthread_cond_timedwait on CLOCK_REALTIME, sleeps) keeps the true clock.
 * That is what a step of the system clock does to a process that computed
 * a deadline before the step: writing 3600 to the file makes every
 * deadline computed from the wall clock an hour too late. Unlike
 * libfaketime, it does not translate the deadlines of pthread waits. Built
 * by the test itself: cc -shared -fPIC -o clockshift.so clockshift.c -ldl */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

static double shift(void)
{
	const char *f = getenv("CLOCKSHIFT_FILE");
	FILE *fp = f ? fopen(f, "r") : NULL;
	double s = 0;
	if (fp) {
		if (fscanf(fp, "%lf", &s) != 1) s = 0;
		fclose(fp);
	}
	return s;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	int rc = real(id, ts);
	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
		double t = (double)ts->tv_sec + ts->tv_nsec / 1e9 + shift();
		ts->tv_sec = (time_t)t;
		ts->tv_nsec = (long)((t - (double)ts->tv_sec) * 1e9);
	}
	return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;
	(void)tz;
	int rc = clock_gettime(CLOCK_REALTIME, &ts);
	struct timeval *out = tv;
	if (rc == 0 && out) { out->tv_sec = ts.tv_sec; out->tv_usec = ts.tv_nsec / 1000; }
	return rc;
}

time_t time(time_t *out)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (out) *out = ts.tv_sec;
	return ts.tv_sec;
}
