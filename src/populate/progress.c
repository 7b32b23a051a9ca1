/* progress.c - the progress bar (progress.h says what it shows where). */
#include "progress.h"
#include "util/clock.h"
#include "util/config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* Columns of the terminal on stderr: the kernel's idea, else $COLUMNS,
 * else 80. */
static int term_width(void)
{
	struct winsize ws;
	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
	const char *c = getenv("COLUMNS");
	int n = c ? atoi(c) : 0;
	return n > 0 ? n : 80;
}

void progress_start(progress *p, const char *label, long total, int on)
{
	p->label = label;
	p->total = total;
	p->start = p->last = mono_now();
	p->tty = isatty(2);
	p->on = on;
	p->drawn = 0;
	p->shown = 0;
	p->interval = p->tty ? 0.1 : config_double("display.interval");
}

static void hms(char *b, size_t n, double s)
{
	long t = (long)(s + 0.5);
	if (t >= 3600) snprintf(b, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else snprintf(b, n, "%02ld:%02ld", t / 60, t % 60);
}

/* label cut to n characters, keeping both ends: "SessionSt...Channel". */
static void shorten(char *out, size_t cap, const char *label, size_t n)
{
	size_t len = strlen(label);
	if (len <= n) { snprintf(out, cap, "%s", label); return; }
	if (n <= 3) { snprintf(out, cap, "%.*s", (int)n, label); return; }
	size_t head = (n - 3 + 1) / 2, tail = n - 3 - head;
	snprintf(out, cap, "%.*s...%s", (int)head, label, label + len - tail);
}

/* The line for these counts in at most width characters (width <= 0: no
 * limit). From the richest layout to the plainest, the first that fits:
 * a long label is shortened (to 16 characters at the least) before the
 * bar narrows, the bar goes before the rate, the times before the counts. */
/* What a line shows: keys done of total, errors, seconds elapsed. */
typedef struct bar_counts {
	long done, total, errors;
	double el;
} bar_counts;

static void format_line(char *out, size_t cap, int width, const char *label, const bar_counts *n)
{
	long done = n->done, total = n->total, errors = n->errors;
	double el = n->el;
	double rate = el > 0 ? done / el : 0;
	/* no keys at all: no percentage, an empty bar (0/0 is not "done") */
	int pct = total ? (int)(100.0 * done / total) : -1;
	char e[32], r[32], counts[64], times[96], errs[48], pcts[16];
	if (pct >= 0) snprintf(pcts, sizeof pcts, "%3d%%", pct);
	else snprintf(pcts, sizeof pcts, " --%%");
	hms(e, sizeof e, el);
	if (rate > 0) hms(r, sizeof r, (total - done) / rate); else snprintf(r, sizeof r, "?");
	snprintf(counts, sizeof counts, "%ld/%ld", done, total);
	snprintf(errs, sizeof errs, "%ld error%s", errors, errors == 1 ? "" : "s");
	snprintf(times, sizeof times, "%s<%s, %.1f keys/s, ", e, r, rate);
	static const struct layout {
		int bar;       /* bar width, 0 = none */
		int rate;      /* [elapsed<remaining, rate, errors] or [errors] */
		int shorten;   /* the label may be shortened */
	} layouts[] = {
		{20, 1, 0}, {20, 1, 1}, {10, 1, 1}, {0, 1, 1}, {0, 0, 1}, {0, -1, 1},
	};
	size_t ll = strlen(label), min_label = ll < 16 ? ll : 16;
	for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++) {
		const struct layout *L = &layouts[i];
		char bar[32] = "", tailbuf[320];
		if (L->bar) {
			int fill = total ? (int)((double)L->bar * done / total) : 0;
			bar[0] = '|';
			for (int k = 0; k < L->bar; k++) bar[1 + k] = k < fill ? '#' : ' ';
			bar[1 + L->bar] = '|';
			bar[2 + L->bar] = 0;
		}
		if (L->rate > 0) snprintf(tailbuf, sizeof tailbuf, "%s%s %s [%s%s]", pcts, bar, counts, times, errs);
		else if (L->rate == 0) snprintf(tailbuf, sizeof tailbuf, "%s%s %s [%s]", pcts, bar, counts, errs);
		else snprintf(tailbuf, sizeof tailbuf, "%s%s %s", pcts, bar, counts);
		size_t fixed = strlen(tailbuf) + 2;   /* ": " */
		size_t room = width > 0 ? (size_t)width : (size_t)-1;
		if (fixed + ll <= room) { snprintf(out, cap, "%s: %s", label, tailbuf); return; }
		if (L->shorten && fixed + min_label <= room) {
			char lab[128];
			shorten(lab, sizeof lab, label, room - fixed < sizeof lab - 1 ? room - fixed : sizeof lab - 1);
			snprintf(out, cap, "%s: %s", lab, tailbuf);
			return;
		}
	}
	/* narrower than "SixteenCharacter: 100% 3/10": the counts, and what
	 * fits of the label before them */
	char tail[96], lab[128];
	snprintf(tail, sizeof tail, "%s %s", pcts, counts);
	size_t fixed = strlen(tail) + 2;
	if ((size_t)width >= fixed + 4) {
		shorten(lab, sizeof lab, label, (size_t)width - fixed < sizeof lab - 1 ? (size_t)width - fixed : sizeof lab - 1);
		snprintf(out, cap, "%s: %s", lab, tail);
	} else
		snprintf(out, cap, "%.*s", width, tail);
}

void progress_update(progress *p, long done, long errors, int final)
{
	if (!p->on) return;
	double t = mono_now();
	if (!final && t - p->last < p->interval) return;
	/* with a short interval in a log: a line when the counts change */
	if (!final && !p->tty && p->interval < 1 && p->drawn && done == p->last_done && errors == p->last_errors) return;
	/* in a log, the last line already showing the final counts is the
	 * final line: not written twice */
	if (final && !p->tty && p->drawn && done == p->last_done && errors == p->last_errors) return;
	p->last = t;
	p->last_done = done;
	p->last_errors = errors;
	long total = p->total > done ? p->total : done;
	char line[512];
	bar_counts bc = {done, total, errors, t - p->start};
	if (!p->tty) {
		format_line(line, sizeof line, 0, p->label, &bc);
		fprintf(stderr, "%s\n", line);
	} else {
		/* one column spare: a line as wide as the terminal wraps on some */
		int w = term_width() - 1;
		if (w < 1) w = 1;
		format_line(line, sizeof line, w, p->label, &bc);
		size_t n = strlen(line);
		/* spaces over what is left of a longer previous line */
		size_t prev = p->shown < (size_t)w ? p->shown : (size_t)w;
		fprintf(stderr, "\r%s%*s%s", line, prev > n ? (int)(prev - n) : 0, "", final ? "\n" : "");
		p->shown = final ? 0 : n;
	}
	fflush(stderr);
	p->drawn = 1;
}
