/* dl.h - load a client library on first use (dlopen), so a process maps
 * libpq (and OpenSSL, GSSAPI, LDAP with it) or MariaDB Connector/C only
 * when it connects to that kind of server: a SQLite worker stays small. */
#ifndef DJC_DL_H
#define DJC_DL_H
#include <stddef.h>

/* Open the first loadable of `sonames` (NULL-terminated) and resolve the
 * n symbols `names` into `slots` (function pointers, in order). Done once
 * per process (*state remembers: 0 not tried, 1 loaded, -1 failed);
 * thread-safe. On failure returns -1 with a one-line message in err. */
/* A function the library may lack (a newer API): NULL when it does. The
 * library must have been loaded by dl_load first. */
void *dl_optional(const char *const *sonames, const char *name);
int dl_load(int *state, const char *what, const char *const *sonames, const char *const *names, void **slots,
	    size_t n, char *err, size_t errlen);
#endif
