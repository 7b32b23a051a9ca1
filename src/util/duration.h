/* duration.h - durations as people write them: "90" or "90s", "15m",
 * "2h", "1d", "1.5h", "1h30m" (a table's `timeout = 2h`, populate's
 * --timeout), and back to text for messages ("timed out after 2h"). */
#ifndef DJC_DURATION_H
#define DJC_DURATION_H
#include <stddef.h>

/* Parse s into seconds (*out >= 0, at most 1e9). Returns 0, or -1 for
 * anything else: empty text, an unknown unit, a negative or absurd value,
 * trailing text. */
int duration_parse(const char *s, double *out);
/* secs as short text into buf: "2h", "1h30m", "90s" -> "1m30s", "0.25s". */
const char *duration_text(double secs, char *buf, size_t n);
#endif
