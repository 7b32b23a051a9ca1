/* redact.h - keeping passwords out of what djc shows: the one place that
 * finds a password in a database URL and replaces secrets by "***". */
#ifndef DJC_REDACT_H
#define DJC_REDACT_H
#include "sb.h"
#include <stddef.h>

/* The password of scheme://user:password@host... as written (not decoded):
 * where its text starts in url (*off) and how long it is (*len, may be 0
 * for "user:@host"). The userinfo ends at the last '@' before the path or
 * query. 1 when url has a "user:...@" part, else 0. */
int url_password_span(const char *url, size_t *off, size_t *len);
/* That password as written, or NULL when there is none or it is empty;
 * caller frees. */
char *url_password(const char *url);
/* url for display: the userinfo's password and the value of every query
 * parameter whose name holds "password" (?password=, &sslpassword=) shown
 * as "***". Caller frees. */
char *url_redacted(const char *url);
/* Append "user@" or, when there is a password, "user:***@" to b: the
 * userinfo of a URL a driver rebuilds for its messages. */
void url_add_userinfo(sb_t *b, const char *user, int has_password);

/* Replace every occurrence of secret in buf[0..n) by "***" (a secret of one
 * or two characters by as many '*': never longer than what it replaces);
 * secrets shorter than min_len (and NULL or empty ones) are left alone.
 * Returns the new length; buf is not NUL-terminated by this. */
size_t redact_secret(char *buf, size_t n, const char *secret, size_t min_len);
/* The same on a NUL-terminated string, in place. */
void redact_str(char *s, const char *secret, size_t min_len);
#endif
