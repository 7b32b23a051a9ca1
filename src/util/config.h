/* config.h - effective settings: defaults, then djc.json (or $DJC_CONFIG),
 * then DJC_* environment variables; command-line options are applied by
 * the caller with config_set(). Each value remembers where it came from. */
#ifndef DJC_CONFIG_H
#define DJC_CONFIG_H

typedef struct config_item {
	const char *key;       /* "jobs.keep_completed" */
	const char *env;       /* "DJC_JOBS_KEEP_COMPLETED" */
	const char *def;       /* default text */
	const char *kind;      /* "bool", "int", "float", "choice", "string", "secret" */
	char *value;           /* effective text (owned) */
	char *source;          /* "default", "djc.json", "environment", "command line" */
} config_item;

/* Load once per process; returns 0, or -1 with a one-line message in
 * *msg (caller frees) for an unreadable or malformed file, an unknown
 * setting, or a value that is not valid for its setting (a bool, a number
 * in its range, one of its choices), naming the file or the environment
 * variable it came from. A failed load fails every later call the same way. */
int config_load(char **msg);
const char *config_get(const char *key);
int config_bool(const char *key);
long config_long(const char *key);
double config_double(const char *key);
void config_set(const char *key, const char *value, const char *source);
/* What a value x of the option or setting `name` must be when it is not
 * one ("an integer from 0 to 2147483647"), or NULL when it is (also for a
 * name without a check). Names: "priority" (a job's priority, as
 * jobs.default_priority), "delay" (seconds from now, -1e9 to 1e9),
 * "timeout" (one make's, as jobs.make_timeout), "stale_timeout",
 * "orphan_timeout" (as jobs.stale_timeout), or a numeric setting's key.
 * Every check of such a value, in the configuration, the library's
 * options and the command line (djc_option_check), is this one. */
const char *config_limit(const char *name, double x);
/* Whether config_limit checks name. */
int config_limit_known(const char *name);
/* All items, NULL-key terminated. */
const config_item *config_items(void);
/* Statuses of the calls below (the public API, table/settings.c, gives
 * them djc.h's codes). */
enum { CONFIG_OK = 0, CONFIG_EINVAL = -1, CONFIG_ENOTFOUND = -2 };
/* The item of key, or NULL (also for key NULL). */
const config_item *config_find(const char *key);
/* Set key to value as djc_config_set does: the value checked as one from
 * a file would be; CONFIG_EINVAL (bad value, NULL argument, configuration
 * that does not load) or CONFIG_ENOTFOUND (unknown key) leave everything
 * as it was, with *msg (if msg; caller frees) saying why. */
int config_set_checked(const char *key, const char *value, const char *source, char **msg);
/* An item's effective value for display, a password in it as "***"
 * (util/redact); caller frees. */
char *config_display(const config_item *i);
/* djc_option_check: CONFIG_OK, CONFIG_EINVAL with *msg what value must be,
 * CONFIG_ENOTFOUND for a name without a check (*msg says so). */
int config_check(const char *name, double value, char **msg);
/* Warnings found while loading (e.g. a file readable by others that holds
 * a password), or NULL. */
const char *config_warning(void);
#endif
