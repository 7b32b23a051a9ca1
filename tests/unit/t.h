/* t.h - a minimal unit test harness: CHECK records a failure and goes on;
 * T_DONE() prints the closing "N passed, N failed" line and sets the exit
 * status. */
#ifndef DJC_T_H
#define DJC_T_H
#include <stdio.h>
#include <string.h>

static int t_pass, t_fail;
#define CHECK(cond) do { if (cond) t_pass++; else { t_fail++; \
	fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_MSG(cond, ...) do { if (cond) t_pass++; else { t_fail++; \
	fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__, __LINE__, #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define CHECK_STR(a, b) do { const char *t_a = (a), *t_b = (b); \
	if (t_a && t_b && !strcmp(t_a, t_b)) t_pass++; else { t_fail++; \
	fprintf(stderr, "%s:%d: FAIL: %s == %s (\"%s\" vs \"%s\")\n", __FILE__, __LINE__, #a, #b, \
		t_a ? t_a : "(null)", t_b ? t_b : "(null)"); } } while (0)
#define T_DONE(name) (printf("%s: %d passed, %d failed\n", name, t_pass, t_fail), t_fail ? 1 : 0)
#endif
