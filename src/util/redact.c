/* redact.c - the one place that finds a password in a database URL and
 * replaces secrets by "***" (the configuration's display, the drivers'
 * messages, a make program's stderr kept in the jobs table). */
#include "redact.h"
#include <string.h>

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

void redact_str(char *s, const char *secret, size_t min_len)
{
	size_t n = redact_secret(s, strlen(s), secret, min_len);
	s[n] = 0;
}
