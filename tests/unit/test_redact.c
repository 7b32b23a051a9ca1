/* test_redact.c - the one place passwords are kept out of what djc shows
 * (src/util/redact.c): the password of a URL as written, a URL for display,
 * a secret replaced in a text. Needs no database (DJC_TEST_URL is ignored). */
#include "t.h"
#include "util/redact.h"
#include <stdlib.h>
#include <string.h>

/* url_redacted(url) is want */
static void check_redacted(const char *url, const char *want)
{
	char *r = url_redacted(url);
	CHECK_STR(r, want);
	free(r);
}

/* url_password(url) is want (NULL: none) */
static void check_password(const char *url, const char *want)
{
	char *p = url_password(url);
	if (want) CHECK_STR(p, want);
	else CHECK(p == NULL);
	free(p);
}

/* redact_secret on text with secret and min_len gives want */
static void check_secret(const char *text, const char *secret, size_t min_len, const char *want)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", text);
	size_t n = redact_secret(buf, strlen(buf), secret, min_len);
	buf[n] = 0;
	CHECK_STR(buf, want);
	char s[256];
	snprintf(s, sizeof s, "%s", text);
	redact_str(s, secret, min_len);
	CHECK_STR(s, want);
}

int main(void)
{
	/* the password as written: the last '@' before the path ends the userinfo */
	check_password("postgresql://u:s%40cret@h/db", "s%40cret");
	check_password("postgresql://u:p@ss@h:5432/db", "p@ss");
	check_password("mysql://u:pw@h/db?x=a@b", "pw");
	check_password("postgresql://u@h/db", NULL);
	check_password("postgresql://u:@h/db", NULL);
	check_password("postgresql://h/db?user=u@x", NULL);
	check_password("sqlite:djc.db", NULL);
	check_password(NULL, NULL);
	size_t off = 0, len = 9;
	CHECK(url_password_span("postgresql://u:@h/db", &off, &len) == 1 && off == 15 && len == 0);

	/* a URL for display */
	check_redacted("postgresql://u:secret@h/db", "postgresql://u:***@h/db");
	check_redacted("postgresql://u:@h/db", "postgresql://u:***@h/db");
	check_redacted("postgresql://u@h/db?password=x&sslmode=require&sslpassword=y",
		       "postgresql://u@h/db?password=***&sslmode=require&sslpassword=***");
	check_redacted("mysql://u:p@ss@h/db?a=1", "mysql://u:***@h/db?a=1");
	check_redacted("postgresql://h/db", "postgresql://h/db");
	check_redacted("postgresql://h/db?password", "postgresql://h/db?password");

	/* a secret in a text */
	check_secret("password secret1 and secret1.", "secret1", 4, "password *** and ***.");
	check_secret("a pw b", "pw", 4, "a pw b");          /* too short for this caller */
	check_secret("a pw b", "pw", 1, "a ** b");          /* never longer than the secret */
	check_secret("xyz", "", 1, "xyz");
	check_secret("xyz", NULL, 1, "xyz");
	check_secret("ab", "abc", 1, "ab");

	sb_t b = SB_INIT;
	url_add_userinfo(&b, "alice", 1);
	url_add_userinfo(&b, "bob", 0);
	CHECK_STR(sb_str(&b), "alice:***@bob@");
	sb_free(&b);
	return T_DONE("test_redact");
}
