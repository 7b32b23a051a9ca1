/* redact.c - the one place that finds a password in a database URL and
 * replaces secrets by "***" (the configuration's display, the drivers'
 * messages, a make program's stderr kept in the jobs table). */
#include "redact.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int url_password_span(const char *url, size_t *off, size_t *len)
{
	const char *a = url ? strstr(url, "://") : NULL;
	if (!a) return 0;
	a += 3;
	const char *end = a + strcspn(a, "/?"), *at = NULL;
	for (const char *p = a; p < end; p++)
		if (*p == '@') at = p;
	const char *colon = at ? memchr(a, ':', (size_t)(at - a)) : NULL;
	if (!colon) return 0;
	*off = (size_t)(colon + 1 - url);
	*len = (size_t)(at - colon - 1);
	return 1;
}

char *url_password(const char *url)
{
	size_t off, len;
	return url_password_span(url, &off, &len) && len ? xstrndup(url + off, len) : NULL;
}

/* Add the query of a URL (from its '?') to b, the value of every
 * parameter whose name holds "password" replaced by "***". */
static void add_query_redacted(sb_t *b, const char *q)
{
	for (const char *p = q; *p;) {
		sb_addc(b, *p++);   /* '?' or '&' */
		size_t n = strcspn(p, "&"), k = strcspn(p, "=&");
		sb_addn(b, p, k);
		if (p[k] == '=') {
			int secret = memmem(p, k, "password", 8) != NULL;
			sb_addc(b, '=');
			if (secret) sb_add(b, "***");
			else sb_addn(b, p + k + 1, n - k - 1);
		}
		p += n;
	}
}

char *url_redacted(const char *url)
{
	sb_t b = SB_INIT;
	size_t off, len;
	const char *rest = url;
	if (url_password_span(url, &off, &len)) {
		sb_addn(&b, url, off);
		sb_add(&b, "***");
		rest = url + off + len;
	}
	const char *q = strchr(rest, '?');
	if (!q) q = rest + strlen(rest);
	sb_addn(&b, rest, (size_t)(q - rest));
	add_query_redacted(&b, q);
	return b.s ? sb_steal(&b) : xstrdup("");
}

void url_add_userinfo(sb_t *b, const char *user, int has_password)
{
	sb_printf(b, "%s%s@", user, has_password ? ":***" : "");
}

size_t redact_secret(char *buf, size_t n, const char *secret, size_t min_len)
{
	size_t k = secret ? strlen(secret) : 0;
	if (!k || k < min_len || k > n) return n;
	size_t w = 0;
	for (size_t r = 0; r < n;) {
		if (r + k <= n && !memcmp(buf + r, secret, k)) {
			size_t m = k < 3 ? k : 3;
			memset(buf + w, '*', m);
			w += m;
			r += k;
		} else
			buf[w++] = buf[r++];
	}
	return w;
}

/* A character of a database name in a URL as djc's messages print it
 * (anything else ends it: "/djc: cannot ...", "/djc?sslmode=..."). */
static int db_name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
	       ch == '$' || ch == '-' || ch == '%';
}

static int blank(char ch) { return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\'' || ch == '"' || ch == '`'; }

/* Whether s[pos, pos + k) is the whole user name or the whole database
 * name of a database URL in s[0..n) whose password field is secret (k
 * bytes) or "***" (redact_secret_text). */
static int url_name_at(const char *s, size_t n, size_t pos, size_t k, const char *secret)
{
	/* the "://" this word's URL starts with: nothing blank between */
	size_t a = pos;
	while (a >= 3 && memcmp(s + a - 3, "://", 3)) {
		if (blank(s[a - 1])) return 0;
		a--;
	}
	if (a < 3) return 0;
	size_t sc = a - 3, st = sc;
	while (st > 0 && ((s[st - 1] >= 'a' && s[st - 1] <= 'z') || (s[st - 1] >= 'A' && s[st - 1] <= 'Z'))) st--;
	static const char *const schemes[] = {"mysql", "mariadb", "postgresql", "postgres"};
	int db = 0;
	for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++)
		if (sc - st == strlen(schemes[i]) && !strncasecmp(s + st, schemes[i], sc - st)) db = 1;
	if (!db) return 0;
	/* the authority (as url_password_span reads it): up to '/' or '?';
	 * its userinfo up to its last '@', the password after the first ':' */
	size_t e = a;
	while (e < n && s[e] != '/' && s[e] != '?' && !blank(s[e])) e++;
	size_t at = 0, colon = 0;
	for (size_t i = a; i < e; i++)
		if (s[i] == '@') at = i;
	for (size_t i = a; i < at && !colon; i++)
		if (s[i] == ':') colon = i;
	if (!at || !colon) return 0;
	size_t plen = at - colon - 1;
	if (!((plen == 3 && !memcmp(s + colon + 1, "***", 3)) || (plen == k && !memcmp(s + colon + 1, secret, k))))
		return 0;
	if (pos == a && pos + k == colon) return 1;   /* the user name */
	if (e < n && s[e] == '/' && pos == e + 1) {   /* the database name */
		size_t d = e + 1;
		while (d < n && db_name_char(s[d])) d++;
		return pos + k == d;
	}
	return 0;
}

size_t redact_secret_text(char *buf, size_t n, const char *secret, size_t min_len)
{
	size_t k = secret ? strlen(secret) : 0;
	if (!k || k < min_len || k > n) return n;
	char *src = xstrndup(buf, n);
	size_t w = 0;
	for (size_t r = 0; r < n;) {
		if (r + k <= n && !memcmp(src + r, secret, k)) {
			if (url_name_at(src, n, r, k, secret)) {
				memcpy(buf + w, src + r, k);
				w += k;
			} else {
				size_t m = k < 3 ? k : 3;
				memset(buf + w, '*', m);
				w += m;
			}
			r += k;
		} else
			buf[w++] = src[r++];
	}
	free(src);
	return w;
}

void redact_str(char *s, const char *secret, size_t min_len)
{
	size_t n = redact_secret(s, strlen(s), secret, min_len);
	s[n] = 0;
}
