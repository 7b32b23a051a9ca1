/* dl.h - load a client library on first use (dlopen), so a process maps
 * libpq (and OpenSSL, GSSAPI, LDAP with it) or MariaDB Connector/C only
 * when it connects to that kind of server: a SQLite worker stays small. */
#ifndef DJC_DL_H
#define DJC_DL_H
#include <stddef.h>

/* A client library: where to find it and what it must have. */
typedef struct dl_lib {
	int state;                    /* 0 not tried, 1 loaded, -1 failed (dl_load's) */
	const char *what;             /* for messages: "PostgreSQL" */
	const char *const *sonames;   /* the files to try, in order, NULL-terminated */
	const char *const *names;     /* the functions it must have */
	void **slots;                 /* where their addresses go, in order */
	size_t n;                     /* how many names */
} dl_lib;

/* Open the first loadable of lib->sonames and resolve lib->names into
 * lib->slots (function pointers, in order). Done once per process
 * (lib->state remembers); thread-safe. On failure returns -1 with a
 * one-line message in err. */
int dl_load(dl_lib *lib, char *err, size_t errlen);
/* A function the library may lack (a newer API): NULL when it does. The
 * library must have been loaded by dl_load first. */
void *dl_optional(const char *const *sonames, const char *name);
#endif
