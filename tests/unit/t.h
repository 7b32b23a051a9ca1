/* t.h - a minimal unit test harness: CHECK records a failure and goes on;
 * T_DONE() prints the closing "N passed, N failed" line and sets the exit
 * status.
 *
 * Named cases. A test file lists its cases in main and hands them to
 * t_main, which runs them in the listed order and closes with T_DONE:
 *
 *	T_CASE(insert) { ... CHECKs ... }
 *	int main(void) {
 *		static const struct t_case cases[] = {
 *			T_CASE_ITEM(open),
 *			T_CASE_NEEDS(insert, "open"),	(runs open first when alone)
 *		};
 *		return t_main("test_x", cases, T_NCASES(cases), setup);
 *	}
 *
 * DJC_CASE (scripts/run-tests.sh passes it through; `make check T=test_x
 * CASE=name`) selects cases: one name or several separated by commas; in a
 * name a space or '-' stands for '_'. A selected case runs the cases it
 * needs first (its `needs`, a space-separated list of earlier cases, and
 * theirs). DJC_CASE=list (or the argument --list) prints the case names,
 * one a line, and runs nothing; a name the file does not have is an error:
 * "no case named X; cases: ..." and exit status 2.
 *
 * DJC_TEST_TRACE=1 prints "ok: CONDITION" for every check that passes (the
 * check descriptions, to compare two versions of a file:
 * scripts/check-diff.sh). */
#ifndef DJC_T_H
#define DJC_T_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_pass, t_fail, t_trace = -1;

/* t_ok DESC: counts a passed check (and prints it under DJC_TEST_TRACE) */
static inline void t_ok(const char *desc)
{
	if (t_trace < 0) {
		const char *e = getenv("DJC_TEST_TRACE");
		t_trace = e && *e && strcmp(e, "0");
	}
	t_pass++;
	if (t_trace)
		printf("ok: %s\n", desc);
}

#define CHECK(cond) do { if (cond) t_ok(#cond); else { t_fail++; \
	fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_MSG(cond, ...) do { if (cond) t_ok(#cond); else { t_fail++; \
	fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__, __LINE__, #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define CHECK_STR(a, b) do { const char *t_a = (a), *t_b = (b); \
	if (t_a && t_b && !strcmp(t_a, t_b)) t_ok(#a " == " #b); else { t_fail++; \
	fprintf(stderr, "%s:%d: FAIL: %s == %s (\"%s\" vs \"%s\")\n", __FILE__, __LINE__, #a, #b, \
		t_a ? t_a : "(null)", t_b ? t_b : "(null)"); } } while (0)
#define T_DONE(name) (printf("%s: %d passed, %d failed\n", name, t_pass, t_fail), t_fail ? 1 : 0)

/* ------------------------------------------------------------ named cases */
struct t_case {
	const char *name;
	void (*fn)(void);
	const char *needs;	/* earlier cases it runs after, or NULL */
};
#define T_CASE(id) static void t_case_##id(void)
#define T_CASE_ITEM(id) { #id, t_case_##id, NULL }
#define T_CASE_NEEDS(id, needs) { #id, t_case_##id, needs }
#define T_NCASES(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* t_same WANT(len) NAME: the selector word equals the case name, a space or
 * '-' in the word standing for '_' */
static inline int t_same(const char *w, size_t len, const char *name)
{
	size_t i;
	for (i = 0; i < len; i++) {
		char c = w[i] == ' ' || w[i] == '-' ? '_' : w[i];
		if (c != name[i])
			return 0;
	}
	return name[len] == '\0';
}

static inline int t_find(const struct t_case *cases, int n, const char *w, size_t len)
{
	int i;
	for (i = 0; i < n; i++)
		if (t_same(w, len, cases[i].name))
			return i;
	return -1;
}

/* t_mark: marks case i and, before it, what it needs (recursively); 0, or
 * -1 after printing the error for a need the file does not have */
static inline int t_mark(const char *file, const struct t_case *cases, int n, int i, char *on)
{
	const char *p = cases[i].needs;
	if (on[i])
		return 0;
	on[i] = 1;
	while (p && *p) {
		size_t len = strcspn(p, " ");
		if (len) {
			int j = t_find(cases, n, p, len);
			if (j < 0) {
				fprintf(stderr, "%s: case %s needs %.*s, which is not a case\n",
					file, cases[i].name, (int)len, p);
				return -1;
			}
			if (t_mark(file, cases, n, j, on))
				return -1;
		}
		p += len;
		p += strspn(p, " ");
	}
	return 0;
}

/* t_main FILE CASES N SETUP: runs the cases DJC_CASE selects (all when it is
 * unset or empty) in their listed order, SETUP (may be NULL) once before
 * the first; returns T_DONE's status, or 2 for an unknown name */
static inline int t_main(const char *file, const struct t_case *cases, int n, void (*setup)(void))
{
	const char *sel = getenv("DJC_CASE");
	char on[256];
	int i;
	if (n > (int)sizeof on) {
		fprintf(stderr, "%s: more than %d cases\n", file, (int)sizeof on);
		return 2;
	}
	if (sel && !strcmp(sel, "list")) {
		for (i = 0; i < n; i++)
			printf("%s\n", cases[i].name);
		return 0;
	}
	memset(on, !(sel && *sel), sizeof on);
	while (sel && *sel) {
		size_t len = strcspn(sel, ",");
		if (len) {
			i = t_find(cases, n, sel, len);
			if (i < 0) {
				fprintf(stderr, "%s: no case named %.*s; cases:", file, (int)len, sel);
				for (i = 0; i < n; i++)
					fprintf(stderr, " %s", cases[i].name);
				fputc('\n', stderr);
				return 2;
			}
			if (t_mark(file, cases, n, i, on))
				return 2;
		}
		sel += len;
		sel += strspn(sel, ",");
	}
	if (setup)
		setup();
	for (i = 0; i < n; i++)
		if (on[i])
			cases[i].fn();
	return T_DONE(file);
}

/* T_MAIN(file, cases, setup): main's body, with --list as DJC_CASE=list */
#define T_MAIN(file, cases, setup) int main(int argc, char **argv) { \
	if (argc > 1 && !strcmp(argv[1], "--list")) setenv("DJC_CASE", "list", 1); \
	return t_main(file, cases, T_NCASES(cases), setup); }
#endif
