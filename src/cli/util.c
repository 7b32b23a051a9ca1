/* util.c - what every command needs: usage errors, exit statuses,
 * connecting, option values, JSON output. */
#include "cli.h"
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* "djc: " (with prefix), s with each control character as a space (all
 * of them, or only CR and LF) and a newline (with nl), written to f in one
 * piece (up to 4 KiB): on stderr, which is unbuffered, one write instead of
 * one a character, so a message is one line that another process writing
 * to the same stderr (a worker's, a make program's) cannot cut into. */
static void put_clean(const char *s, FILE *f, int prefix, int nl, int all_controls)
{
	char b[4096 + 1];   /* + the newline */
	size_t k = 0;
	if (prefix) { memcpy(b, "djc: ", 5); k = 5; }
	for (const char *p = s; *p; p++) {
		if (k == sizeof b - 1) { fwrite(b, 1, k, f); k = 0; }
		unsigned char c = (unsigned char)*p;
		b[k++] = (all_controls ? c < 0x20 || c == 0x7f : c == '\n' || c == '\r') ? ' ' : (char)c;
	}
	if (nl) b[k++] = '\n';
	if (k) fwrite(b, 1, k, f);
}

void put_line(const char *s, FILE *f)
{
	put_clean(s, f, 0, 0, 1);
}

void die_usage(const char *fmt, ...)
{
	va_list ap;
	char *m = NULL;
	va_start(ap, fmt);
	int n = vasprintf(&m, fmt, ap);
	va_end(ap);
	if (n < 0) m = NULL;
	put_clean(m ? m : fmt, stderr, 1, 1, 1);   /* one line, whatever the arguments hold */
	free(m);
	exit(2);
}

int exit_for(int rc, djc_conn *c)
{
	if (rc == DJC_OK) return 0;
	const char *m = c ? djc_error_last(c) : djc_strerror(rc);
	put_clean(m, stderr, 1, 1, 0);
	return exit_status(rc);
}

int exit_status(int rc)
{
	switch (rc) {
	case DJC_OK: return 0;
	case DJC_EINVAL: case DJC_ENOTFOUND: case DJC_ECONFLICT: case DJC_EDUPLICATE: case DJC_EFOREIGN: return 2;
	default: return 1;
	}
}

int cli_done(int rc, djc_conn *c)
{
	int code = exit_for(rc, c);
	djc_close(c);
	return code;
}

djc_conn *cli_connect(int create)
{
	djc_conn *c = NULL;
	djc_open_options o = DJC_OPEN_OPTIONS_INIT;
	o.no_create = create != CLI_CREATE;
	int rc = djc_open_ext(&c, cli_db, cli_schema, &o);
	if (rc) {
		int code = exit_for(rc, c);
		djc_close(c);
		exit(code);
	}
	cli_print_warnings();
	return c;
}

void cli_print_warnings(void)
{
	const char *w = djc_config_warning();
	while (w && *w) {
		size_t n = strcspn(w, "\n");
		fprintf(stderr, "djc: %.*s\n", (int)n, w);
		w += n + (w[n] == '\n');
	}
}

void cli_block_drain(void)
{
	sigset_t u;
	sigemptyset(&u);
	sigaddset(&u, SIGUSR1);
	sigprocmask(SIG_BLOCK, &u, NULL);
}

long parse_long(const char *opt, const char *v, long min)
{
	char *e;
	errno = 0;
	long x = strtol(v, &e, 10);
	if (!*v || *e || errno || x < min) die_usage("%s expects an integer >= %ld, got '%s'", opt, min, v);
	return x;
}

double parse_double(const char *opt, const char *v)
{
	char *e;
	double x = strtod(v, &e);
	if (!*v || *e || x != x || x < 0) die_usage("%s expects a number of seconds >= 0, got '%s'", opt, v);
	return x;
}

void check_value(const char *opt, const char *name, double x, const char *v)
{
	char *what = NULL;
	if (djc_option_check(name, x, &what) == DJC_EINVAL) die_usage("%s must be %s, got '%s'", opt, what, v);
	free(what);
}

long parse_priority(const char *opt, const char *v)
{
	long x = parse_long(opt, v, 0);
	check_value(opt, "priority", (double)x, v);
	return x;
}

double parse_timeout(const char *opt, const char *v)
{
	double x;
	if (djc_duration_parse(&x, v)) die_usage("%s expects a duration such as 90, 30s, 15m or 2h (0: no limit), got '%s'", opt, v);
	check_value(opt, "timeout", x, v);
	return x > 0 ? x : DJC_TIMEOUT_NONE;
}

void check_json(const char *opt, const char *v)
{
	json_error_t je;
	json_t *j = json_loads(v, 0, &je);
	if (!j) die_usage("%s is not valid JSON: %s", opt, je.text);
	json_decref(j);
}

int where_is_empty(const char *v)
{
	json_t *j = json_loads(v, 0, NULL);
	int empty = json_is_object(j) && !json_object_size(j);
	for (size_t i = 0; json_is_array(j) && i < json_array_size(j); i++) {
		json_t *o = json_array_get(j, i);
		if (json_is_object(o) && !json_object_size(o)) empty = 1;
	}
	json_decref(j);
	return empty;
}

json_t *cli_json_text(const char *s)
{
	json_t *j = json_string(s);
	if (j) return j;
	size_t n = strlen(s), k = 0;
	char *o = malloc(n * 3 + 1);
	if (!o) return json_string("");
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
		size_t m = 1;
		while (len && m < len && i + m < n && ((unsigned char)s[i + m] & 0xC0) == 0x80) m++;
		char tmp[5] = {0};
		if (len && m == len) memcpy(tmp, s + i, len);
		json_t *t = len && m == len ? json_string(tmp) : NULL;   /* rejects overlongs and surrogates */
		if (t) { memcpy(o + k, s + i, len); k += len; i += len; json_decref(t); }
		else { memcpy(o + k, "\xEF\xBF\xBD", 3); k += 3; i++; }
	}
	o[k] = 0;
	j = json_string(o);
	free(o);
	return j ? j : json_string("");
}

/* The fewest significant digits (1..17) that write every real of j so it
 * reads back exactly; 0 when j holds no real. */
static int real_digits(json_t *j)
{
	int p = 0, d;
	const char *k;
	size_t i;
	json_t *v;
	if (json_is_real(j)) {
		double x = json_real_value(j);
		char b[40];
		for (p = 1; p < 17; p++) {
			snprintf(b, sizeof b, "%.*g", p, x);
			if (strtod(b, NULL) == x) break;
		}
	} else if (json_is_object(j)) {
		json_object_foreach(j, k, v) if ((d = real_digits(v)) > p) p = d;
	} else if (json_is_array(j)) {
		json_array_foreach(j, i, v) if ((d = real_digits(v)) > p) p = d;
	}
	return p;
}

char *cli_json_dumps(json_t *j, size_t flags)
{
	int p = j ? real_digits(j) : 0;
	return j ? json_dumps(j, flags | JSON_ENCODE_ANY | JSON_REAL_PRECISION(p ? p : 17)) : NULL;
}

void cli_print_json(json_t *j)
{
	char *s = cli_json_dumps(j, JSON_COMPACT);
	if (!s) {
		fputs("djc: out of memory\n", stderr);
		exit(1);
	}
	fputs(s, stdout);
	fputc('\n', stdout);
	free(s);
	json_decref(j);
}

char *cli_read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) die_usage("cannot read %s: %s", path, strerror(errno));
	size_t cap = 1 << 16, n = 0, r;
	char *text = malloc(cap);
	while (text && (r = fread(text + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 >= cap) {
			cap *= 2;
			char *t = realloc(text, cap);
			if (!t) free(text);
			text = t;
		}
	}
	fclose(f);
	if (!text) die_usage("out of memory");
	text[n] = 0;
	if (strlen(text) != n) { free(text); die_usage("%s: contains a NUL byte", path); }
	return text;
}
