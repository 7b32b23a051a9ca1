/* opts.h - the one check of a public options struct's version field. */
#ifndef DJC_TABLE_OPTS_H
#define DJC_TABLE_OPTS_H
#include "djc.h"

/* DJC_OK when version is one this library reads (oldest to current, the
 * struct's DJC_*_OPTIONS_VERSION); else DJC_EINVAL with conn's message
 * "<what> options version V is not C (use <init>)" (or "is not O to C"
 * when older layouts are still read). what: "populate", "fetch", ...;
 * init: the struct's _INIT macro, named for the caller to use. */
int opts_version(djc_conn *c, const char *what, int version, int oldest, int current, const char *init);

/* The usual call: OPTS_VERSION(c, "fetch", opts, 1, FETCH). */
#define OPTS_VERSION(c, what, o, oldest, NAME) \
	opts_version((c), (what), (o)->version, (oldest), DJC_##NAME##_OPTIONS_VERSION, "DJC_" #NAME "_OPTIONS_INIT")
#endif
