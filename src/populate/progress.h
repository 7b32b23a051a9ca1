/* progress.h - a tqdm-like progress bar on stderr. On a terminal, one line
 * redrawn in place at most ten times a second, fitted to the terminal's
 * width so it never wraps (a long table name is shortened in the middle).
 * Otherwise (a log file, a batch system's output) a plain line at most every
 * display.interval seconds (30 by default; 0 is every update), plus the last
 * line. No colour, no escape sequences. */
#ifndef DJC_PROGRESS_H
#define DJC_PROGRESS_H
#include <stddef.h>

typedef struct progress {
	const char *label;
	long total;
	double start, last, interval;
	int tty, on, drawn;
	size_t shown;     /* length of the line on the terminal (for redraws) */
	long last_done, last_errors;   /* the counts of the last line */
} progress;

void progress_start(progress *p, const char *label, long total, int on);
void progress_update(progress *p, long done, long errors, int final);

#endif
