/* t.h - a minimal unit test harness: CHECK records a failure and goes on;
 * T_DONE() prints the closing "N passed, N failed" line and sets the exit
 * status.
 *
 * Named cases. main declares its cases first, then runs each one it is
 * asked for; code outside the cases is shared setup and always runs:
 *
 *	int main(int argc, char **argv) {
 *		t_cases(argc, argv, "test_x", "open insert:open fetch:insert");
 *		c = setup();
 *		if (t_want("open")) test_open(c);
 *		if (t_want("insert")) test_insert(c);
 *		...
 *		return T_DONE("test_x");
 *	}
 *
 * The declaration lists the case names in the order main runs them; NAME:A:B
 * says the case uses what the earlier cases A and B leave behind. DJC_CASE
 * (scripts/run-tests.sh passes it through; `make check T=test_x CASE=name`)
 * selects cases: one name or several separated by commas (in a name, a
 * space or '-' stands for '_'); a selected case runs the cases it needs
 * first (and theirs). DJC_CASE=list (or the argument --list) prints the
 * names, one a line, and runs nothing; a name the file does not have is an
 * error: "no case named X; cases: ..." and exit status 2. t_want of a name
 * not declared, and a declared case main never asked for, fail the file.
 *
 * DJC_TEST_TRACE=1 prints "ok: CONDITION" for every check that passes (the
 * check descriptions, to compare two versions of a file:
 * scripts/check-diff.sh). */
#ifndef DJC_T_H
#define DJC_T_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ------------------------------------------------------------ named cases */
#define T_MAX_CASES 128
static struct { char name[64]; char needs[256]; int on, asked; } t_case[T_MAX_CASES];
static int t_ncases;

/* t_find WORD LEN: the declared case the word names ('-' and ' ' as '_') */
static inline int t_find(const char *w, size_t len)
{
	for (int i = 0; i < t_ncases; i++) {
		const char *n = t_case[i].name;
		size_t k;
		for (k = 0; k < len; k++)
			if ((w[k] == ' ' || w[k] == '-' ? '_' : w[k]) != n[k])
				break;
		if (k == len && n[len] == '\0')
			return i;
	}
	return -1;
}

static inline void t_mark(int i)
{
	const char *p = t_case[i].needs;
	if (t_case[i].on)
		return;
	t_case[i].on = 1;
	while (*p) {
		size_t len = strcspn(p, ":");
		int j = len ? t_find(p, len) : -1;
		if (len && j < 0) {
			fprintf(stderr, "t.h: case %s needs %.*s, which is not declared\n", t_case[i].name, (int)len, p);
			exit(2);
		}
		if (j >= 0)
			t_mark(j);
		p += len;
		p += strspn(p, ":");
	}
}

/* t_cases ARGC ARGV FILE NAMES: declares the cases (see above) and selects
 * them from DJC_CASE; prints them and exits for a listing; exits 2 for an
 * unknown name */
static inline void t_cases(int argc, char **argv, const char *file, const char *names)
{
	const char *sel = getenv("DJC_CASE"), *p = names;
	int list = (argc > 1 && !strcmp(argv[1], "--list")) || (sel && !strcmp(sel, "list"));
	while (*p) {
		size_t len = strcspn(p, " "), nl = strcspn(p, ": ");
		if (len) {
			if (t_ncases == T_MAX_CASES || nl >= sizeof t_case[0].name || len - nl >= sizeof t_case[0].needs) {
				fprintf(stderr, "%s: too many cases or too long a name\n", file);
				exit(2);
			}
			memcpy(t_case[t_ncases].name, p, nl);
			if (len > nl)
				memcpy(t_case[t_ncases].needs, p + nl + 1, len - nl - 1);
			t_case[t_ncases++].on = !(sel && *sel);
		}
		p += len;
		p += strspn(p, " ");
	}
	if (list) {
		for (int i = 0; i < t_ncases; i++)
			printf("%s\n", t_case[i].name);
		exit(0);
	}
	while (sel && *sel) {
		size_t len = strcspn(sel, ",");
		if (len) {
			int i = t_find(sel, len);
			if (i < 0) {
				fprintf(stderr, "%s: no case named %.*s; cases:", file, (int)len, sel);
				for (i = 0; i < t_ncases; i++)
					fprintf(stderr, " %s", t_case[i].name);
				fputc('\n', stderr);
				exit(2);
			}
			t_mark(i);
		}
		sel += len;
		sel += strspn(sel, ",");
	}
}

/* t_want NAME: whether to run the declared case NAME */
static inline int t_want(const char *name)
{
	int i = t_find(name, strlen(name));
	if (i < 0) {
		fprintf(stderr, "t.h: t_want(\"%s\"): no such case declared in t_cases\n", name);
		exit(2);
	}
	t_case[i].asked = 1;
	return t_case[i].on;
}

/* t_done NAME: the closing line; a declared case never asked for fails */
static inline int t_done(const char *name)
{
	for (int i = 0; i < t_ncases; i++)
		if (!t_case[i].asked) {
			t_fail++;
			fprintf(stderr, "%s: case %s is declared but main never runs it\n", name, t_case[i].name);
		}
	printf("%s: %d passed, %d failed\n", name, t_pass, t_fail);
	return t_fail ? 1 : 0;
}
#define T_DONE(name) t_done(name)

/* An SQLite database file removed with its -wal and -shm files. */
static inline void t_unlink_sqlite(const char *file)
{
	char side[4096];
	unlink(file);
	snprintf(side, sizeof side, "%s-wal", file);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", file);
	unlink(side);
}
#endif
