/* progress.h - a tqdm-like progress bar on stderr: redrawn in place on a
 * terminal, plain lines (at most one per second, plus the last) otherwise. */
#ifndef DJC_PROGRESS_H
#define DJC_PROGRESS_H
typedef struct progress {
	const char *label;
	long total;
	double start, last;
	int tty, on, drawn;
} progress;
void progress_start(progress *p, const char *label, long total, int on);
void progress_update(progress *p, long done, long errors, int final);
#endif
