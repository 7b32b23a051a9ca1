/* progress.c - the progress bar. */
#include "progress.h"
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void progress_start(progress *p, const char *label, long total, int on)
{
	p->label = label;
	p->total = total;
	p->start = p->last = now_s();
	p->tty = isatty(2);
	p->on = on;
	p->drawn = 0;
}

static void hms(char *b, size_t n, double s)
{
	long t = (long)(s + 0.5);
	if (t >= 3600) snprintf(b, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else snprintf(b, n, "%02ld:%02ld", t / 60, t % 60);
}

void progress_update(progress *p, long done, long errors, int final)
{
	if (!p->on) return;
	double t = now_s();
	if (!final && t - p->last < (p->tty ? 0.1 : 1.0)) return;
	p->last = t;
	double el = t - p->start;
	double rate = el > 0 ? done / el : 0;
	long total = p->total > done ? p->total : done;
	int pct = total ? (int)(100.0 * done / total) : 100;
	char bar[32];
	int w = 20, fill = total ? (int)((double)w * done / total) : w;
	for (int i = 0; i < w; i++) bar[i] = i < fill ? '#' : ' ';
	bar[w] = 0;
	char e[64], r[64];
	hms(e, sizeof e, el);
	if (rate > 0) hms(r, sizeof r, (total - done) / rate); else snprintf(r, sizeof r, "?");
	fprintf(stderr, "%s%s: %3d%%|%s| %ld/%ld [%s<%s, %.1f keys/s%s%ld errors]%s", p->tty ? "\r" : "", p->label, pct, bar,
		done, total, e, r, rate, ", ", errors, p->tty && !final ? "\033[K" : "\n");
	if (p->tty && final) fputs("", stderr);
	fflush(stderr);
	p->drawn = 1;
}
