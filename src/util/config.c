/* config.c - djc.json / environment / defaults, and the public djc_config_*
 * API over them. */
#include "config.h"
#include "near.h"
#include "redact.h"
#include "sb.h"
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static config_item items[] = {
	{"jobs.auto_refresh", "DJC_JOBS_AUTO_REFRESH", "true", "bool", NULL, NULL},
	{"jobs.keep_completed", "DJC_JOBS_KEEP_COMPLETED", "false", "bool", NULL, NULL},
	{"jobs.stale_timeout", "DJC_JOBS_STALE_TIMEOUT", "3600", "float", NULL, NULL},
	{"jobs.default_priority", "DJC_JOBS_DEFAULT_PRIORITY", "5", "int", NULL, NULL},
	{"jobs.version_method", "DJC_JOBS_VERSION_METHOD", "none", "choice", NULL, NULL},
	{"jobs.lease_timeout", "DJC_JOBS_LEASE_TIMEOUT", "60", "float", NULL, NULL},
	{"jobs.lock_timeout", "DJC_JOBS_LOCK_TIMEOUT", "0", "float", NULL, NULL},
	{"jobs.reserve_batch", "DJC_JOBS_RESERVE_BATCH", "1", "int", NULL, NULL},
	{"jobs.max_attempts", "DJC_JOBS_MAX_ATTEMPTS", "1", "int", NULL, NULL},
	{"jobs.max_lost", "DJC_JOBS_MAX_LOST", "3", "int", NULL, NULL},
	{"jobs.history_retention", "DJC_JOBS_HISTORY_RETENTION", "604800", "float", NULL, NULL},
	{"jobs.retry_delay", "DJC_JOBS_RETRY_DELAY", "10", "float", NULL, NULL},
	{"jobs.retry_delay_max", "DJC_JOBS_RETRY_DELAY_MAX", "3600", "float", NULL, NULL},
	{"jobs.retry_interrupted", "DJC_JOBS_RETRY_INTERRUPTED", "false", "bool", NULL, NULL},
	{"jobs.make_timeout", "DJC_JOBS_MAKE_TIMEOUT", "0", "float", NULL, NULL},
	{"jobs.stop_grace", "DJC_JOBS_STOP_GRACE", "5", "float", NULL, NULL},
	{"jobs.serve_restarts", "DJC_JOBS_SERVE_RESTARTS", "10", "int", NULL, NULL},
	{"jobs.max_output", "DJC_JOBS_MAX_OUTPUT", "256", "int", NULL, NULL},
	{"jobs.add_job_metadata", "DJC_JOBS_ADD_JOB_METADATA", "false", "bool", NULL, NULL},
	{"jobs.job_version", "DJC_JOBS_JOB_VERSION", "", "string", NULL, NULL},
	{"jobs.allow_new_pk_fields_in_computed_tables", "DJC_JOBS_ALLOW_NEW_PK_FIELDS_IN_COMPUTED_TABLES", "false", "bool", NULL,
	 NULL},
	{"database.url", "DJC_DATABASE_URL", "sqlite:djc.db", "string", NULL, NULL},
	{"database.schema", "DJC_DATABASE_SCHEMA", "", "string", NULL, NULL},
	{"database.password", "DJC_DATABASE_PASSWORD", "", "secret", NULL, NULL},
	{"database.pooler", "DJC_DATABASE_POOLER", "none", "choice", NULL, NULL},
	{"display.progress", "DJC_DISPLAY_PROGRESS", "false", "bool", NULL, NULL},
	{"display.interval", "DJC_DISPLAY_INTERVAL", "30", "float", NULL, NULL},
	{NULL, NULL, NULL, NULL, NULL, NULL},
};

/* DJC_* environment variables that are not settings: every name djc, its
 * make programs, its scripts and its test suite use, in this one list (a
 * name ending in '_' is a prefix). Any other DJC_* variable earns a
 * warning naming the closest setting (env_typos): a warning, not an error
 * as a typo in djc.json is, because a make program inherits its worker's
 * DJC_* variables, so a djc of another version, or a script of the lab,
 * may set names this djc does not know, and a pipeline must not stop for
 * a variable that changes nothing. */
static const char *const not_settings[] = {
	"DJC_CONFIG",                                   /* the configuration file */
	"DJC_KEY", "DJC_KEY_", "DJC_TABLE", "DJC_SCHEMA", "DJC_ATTEMPT", "DJC_SERVE",   /* set for make programs */
	"DJC_FETCH_SOCKET",                             /* ... per key: its fetches through djc (fetchsock.h) */
	"DJC_MYSQL_COMPOUND",                           /* the MariaDB driver's commit form (docs/jobs.md) */
	"DJC_PG_PIPELINE",                              /* 0: no libpq pipelines (docs/jobs.md) */
	"DJC_SERVE_LEND",                               /* 0: large values copied into a serve program's pipe (docs/workers.md) */
	"DJC_READ_PIECE",                               /* bytes: large values read in pieces of this size (docs/workers.md) */
	"DJC_WORKER_LOG",                               /* a worker's event log (tests) */
	"DJC_BLOBS", "DJC_BLOB_ZLIB",                   /* read by python/djc_make.py's makes (docs/serve-protocol.md) */
	"DJC_LIBRARY",                                  /* the libdjc python/djc_lib.py loads (docs/python-lib.md) */
	/* scripts/ and the test suite */
	"DJC_BACKEND", "DJC_BACKENDS", "DJC_TESTS", "DJC_CASE", "DJC_KINDS", "DJC_PARALLEL", "DJC_TEST_", "DJC_BUILD",
	"DJC_SAN_BUILD", "DJC_POOLER",
	"DJC_SERVER_URL", "DJC_LISTEN_EXTRA", "DJC_DEPS_PATH", "DJC_ROOT", "DJC_DEMO_DB", "DJC_DATAJOINT_",
	NULL,
};

static int loaded;
static char *warning;
static char *load_error;   /* a failed load fails every later call the same way */

static config_item *find(const char *key)
{
	for (config_item *i = items; i->key; i++)
		if (!strcmp(i->key, key)) return i;
	return NULL;
}

void config_set(const char *key, const char *value, const char *source)
{
	config_item *i = find(key);
	if (!i) return;
	free(i->value);
	free(i->source);
	i->value = xstrdup(value);
	i->source = xstrdup(source);
}

/* What each checked setting accepts. Numbers are bounded so that a typo
 * cannot reach the database or a timer as an absurd value (a lease of
 * 1e300 s would overflow the heartbeat's clock arithmetic). */
static const struct limit {
	const char *key;
	double lo, hi;
	int lo_open;          /* lo itself is not allowed */
	const char *choices;  /* "choice": the values, '|'-separated */
	const char *what;     /* for the error message */
} limits[] = {
	{"jobs.stale_timeout", 0, 1e9, 0, NULL, "a number of seconds from 0 to 1e9"},
	{"jobs.lease_timeout", 0, 1e9, 1, NULL, "a number of seconds greater than 0 and at most 1e9"},
	{"jobs.lock_timeout", 0, 1e6, 0, NULL, "a number of seconds from 0 (max(60, 4 leases)) to 1e6"},
	{"jobs.default_priority", 0, 2147483647.0, 0, NULL, "an integer from 0 to 2147483647"},
	{"jobs.reserve_batch", 1, 1000, 0, NULL, "an integer from 1 to 1000"},
	{"jobs.max_attempts", 1, 1000000, 0, NULL, "an integer from 1 to 1000000"},
	{"jobs.max_lost", 1, 1000000, 0, NULL, "an integer from 1 to 1000000"},
	{"jobs.history_retention", 0, 1e9, 0, NULL, "a number of seconds from 0 to 1e9"},
	{"jobs.retry_delay", 0, 1e6, 0, NULL, "a number of seconds from 0 to 1e6"},
	{"jobs.retry_delay_max", 0, 1e9, 0, NULL, "a number of seconds from 0 to 1e9"},
	{"jobs.make_timeout", 0, 1e9, 0, NULL, "a number of seconds from 0 (none) to 1e9"},
	{"jobs.stop_grace", 0, 3600, 0, NULL, "a number of seconds from 0 to 3600"},
	{"jobs.serve_restarts", 0, 10000, 0, NULL, "an integer from 0 to 10000"},
	{"jobs.max_output", 1, 65536, 0, NULL, "a number of MiB from 1 to 65536"},
	{"jobs.version_method", 0, 0, 0, "none|git", "none or git"},
	{"database.pooler", 0, 0, 0, "none|transaction", "none or transaction"},
	{"display.interval", 0, 86400, 0, NULL, "a number of seconds from 0 to 86400"},
	{NULL, 0, 0, 0, NULL, NULL},
};

static const struct limit *limit_of(const char *key)
{
	for (const struct limit *l = limits; l->key; l++)
		if (!strcmp(l->key, key)) return l;
	return NULL;
}

/* Values that options of the C API and of the command line take: each is
 * a setting's (checked by the setting's row of limits) or one of its own
 * (a row here). One check per kind of value, so that a value one command
 * or the configuration refuses, every command refuses the same way. */
static const struct limit option_own[] = {
	{"delay", -1e9, 1e9, 0, NULL, "a number of seconds from -1e9 to 1e9"},
	{NULL, 0, 0, 0, NULL, NULL},
};
static const struct { const char *name, *setting; } option_setting[] = {
	{"priority", "jobs.default_priority"},   /* a job's priority, a bound on it */
	{"timeout", "jobs.make_timeout"},        /* one make's timeout */
	{"stale_timeout", "jobs.stale_timeout"},
	{"orphan_timeout", "jobs.stale_timeout"},
	{NULL, NULL},
};

const char *config_limit(const char *name, double x)
{
	const struct limit *l = NULL;
	const char *kind = "float";
	for (size_t i = 0; option_setting[i].name && !l; i++)
		if (!strcmp(option_setting[i].name, name)) name = option_setting[i].setting;
	for (const struct limit *o = option_own; o->key && !l; o++)
		if (!strcmp(o->key, name)) l = o;
	if (!l) {
		const config_item *i = find(name);
		if (!i || !(l = limit_of(name)) || l->choices) return NULL;
		kind = i->kind;
	}
	if (!(x >= l->lo && x <= l->hi) || (l->lo_open && x == l->lo)) return l->what;
	if (!strcmp(kind, "int") && x != floor(x)) return l->what;
	return NULL;
}

int config_limit_known(const char *name)
{
	for (size_t i = 0; option_setting[i].name; i++)
		if (!strcmp(option_setting[i].name, name)) return 1;
	for (const struct limit *o = option_own; o->key; o++)
		if (!strcmp(o->key, name)) return 1;
	const struct limit *l = limit_of(name);
	return l && !l->choices && find(name);
}

static int is_bool(const char *v)
{
	return !strcasecmp(v, "true") || !strcasecmp(v, "false") || !strcmp(v, "1") || !strcmp(v, "0") ||
	       !strcasecmp(v, "yes") || !strcasecmp(v, "no");
}

/* NULL when v is a valid value of i, else what it must be ("none or git"). */
static const char *check_value(const config_item *i, const char *v)
{
	const struct limit *l = limit_of(i->key);
	if (!strcmp(i->kind, "bool")) return is_bool(v) ? NULL : "true or false (or 1/0, yes/no)";
	if (!strcmp(i->kind, "choice")) {
		size_t n = strlen(v);
		for (const char *c = l->choices; *c;) {
			size_t k = strcspn(c, "|");
			if (k == n && !strncmp(c, v, n)) return NULL;
			c += k + (c[k] == '|');
		}
		return l->what;
	}
	if (!strcmp(i->kind, "int") || !strcmp(i->kind, "float")) {
		const char *what = l ? l->what : !strcmp(i->kind, "int") ? "an integer" : "a number";
		/* plain decimal text only: no spaces, hex, inf or nan */
		if (!*v || strspn(v, !strcmp(i->kind, "int") ? "+-0123456789" : "+-0123456789.eE") != strlen(v)) return what;
		char *e;
		errno = 0;
		double x;
		if (!strcmp(i->kind, "int")) {
			long long y = strtoll(v, &e, 10);
			if (*e || errno) return what;
			x = (double)y;
		} else {
			x = strtod(v, &e);
			if (*e || errno || !isfinite(x)) return what;
		}
		if (config_limit(i->key, x)) return what;   /* the check options share */
		return NULL;
	}
	return NULL;
}

/* v for an error message: at most 60 characters, control characters as '?'. */
static char *shown(const char *v)
{
	size_t n = strlen(v);
	char *s = xstrndup(v, n > 60 ? 60 : n);
	for (char *p = s; *p; p++) if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
	if (n > 60) { char *t = xasprintf("%s...", s); free(s); s = t; }
	return s;
}

static int load(char **msg);

/* The setting a mistyped name most likely meant, or NULL: by its
 * environment variable (env 1) or its key, within two edits (one in a
 * short name), or whose last part the name is with its section left out
 * (DJC_LEASE_TIMEOUT, lease_timeout). */
static const config_item *closest_setting(const char *name, int env)
{
	const config_item *best = NULL;
	size_t bestd = (size_t)-1;
	for (const config_item *i = items; i->key; i++) {
		const char *cand = env ? i->env : i->key;
		size_t d = near_distance(name, cand), limit = strlen(cand) <= 8 ? 1 : 2;
		if (d <= limit && d < bestd) { best = i; bestd = d; }
	}
	if (best) return best;
	const char *tail = env && !strncmp(name, "DJC_", 4) ? name + 4 : name;
	for (const config_item *i = items; i->key; i++) {
		const char *leaf = strchr(i->key, '.') + 1;
		if (strlen(leaf) == strlen(tail) && !strncasecmp(leaf, tail, strlen(leaf))) return i;
	}
	return NULL;
}

/* Add a line to the warnings. */
static void warn(char *line)
{
	if (!warning) warning = line;
	else {
		char *w = xasprintf("%s\n%s", warning, line);
		free(warning);
		free(line);
		warning = w;
	}
}

/* DJC_SCHEMA is what djc tells a make program (the schema it runs in,
 * beside DJC_DATABASE_SCHEMA, the setting, which djc sets to the same);
 * set by hand it chooses nothing: a warning when it is not the setting's
 * variable too (before, it was ignored without a word). */
static void schema_var(void)
{
	const char *s = getenv("DJC_SCHEMA"), *d = getenv("DJC_DATABASE_SCHEMA");
	if (!s || !*s || (d && !strcmp(s, d))) return;
	char *shn = shown(s);
	warn(xasprintf("warning: environment variable DJC_SCHEMA (%s) does not choose the schema (djc sets it for make "
		       "programs); use DJC_DATABASE_SCHEMA (database.schema) or --schema",
		       shn));
	free(shn);
}

/* A warning for each DJC_* environment variable that is neither a setting
 * nor one of not_settings (a typo of a setting is otherwise silently
 * ignored), naming the closest setting. */
static void env_typos(void)
{
	extern char **environ;
	for (char **e = environ; e && *e; e++) {
		size_t n = strcspn(*e, "=");
		if (n < 5 || n > 120 || strncmp(*e, "DJC_", 4)) continue;
		char name[128];
		snprintf(name, sizeof name, "%.*s", (int)n, *e);
		int known = 0;
		for (const config_item *i = items; i->key && !known; i++) known = !strcmp(i->env, name);
		for (const char *const *k = not_settings; *k && !known; k++) {
			size_t kl = strlen(*k);
			known = (*k)[kl - 1] == '_' ? !strncmp(name, *k, kl) : !strcmp(name, *k);
		}
		if (known) continue;
		char *shn = shown(name);
		const config_item *c = closest_setting(name, 1);
		if (c) warn(xasprintf("warning: environment variable %s is not a djc setting and changes nothing; did you mean %s (%s)?",
				      shn, c->env, c->key));
		else warn(xasprintf("warning: environment variable %s is not a djc setting and changes nothing (djc config lists them)", shn));
		free(shn);
	}
	schema_var();
}

int config_load(char **msg)
{
	*msg = NULL;
	if (loaded) {
		if (load_error) { *msg = xstrdup(load_error); return -1; }
		return 0;
	}
	loaded = 1;
	if (load(msg)) {
		load_error = xstrdup(*msg);
		return -1;
	}
	return 0;
}

/* The text of a setting's JSON value (a string, true/false, a number; a
 * real as the shortest text that reads back: 0.1, not
 * 0.10000000000000001), in buf when made; NULL for any other value. */
static const char *json_setting_text(json_t *v, char buf[64])
{
	if (json_is_string(v)) return json_string_value(v);
	if (json_is_true(v)) return "true";
	if (json_is_false(v)) return "false";
	if (json_is_integer(v)) {
		snprintf(buf, 64, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	if (json_is_real(v)) {
		for (int p = 1; p <= 17; p++) {
			snprintf(buf, 64, "%.*g", p, json_real_value(v));
			if (strtod(buf, NULL) == json_real_value(v)) break;
		}
		return buf;
	}
	return NULL;
}

/* The file being read: its path, whether others can read it, and whether
 * that was warned about. */
typedef struct config_file {
	const char *path;
	int world, warned_world;
} config_file;

/* One setting of the file, key = value: known, a value it takes; set. */
static int file_setting(config_file *cf, const char *key, json_t *v, char **msg)
{
	const char *path = cf->path;
	config_item *it = find(key);
	if (!it) {
		const config_item *near = closest_setting(key, 0);
		char *ks = shown(key);
		if (near) *msg = xasprintf("%s: unknown setting '%s'; did you mean '%s'?", path, ks, near->key);
		else *msg = xasprintf("%s: unknown setting '%s' (see djc config)", path, ks);
		free(ks);
		return -1;
	}
	char buf[64];
	const char *txt = json_setting_text(v, buf);
	const char *want = txt ? check_value(it, txt) : NULL;
	if (!txt && !strcmp(it->kind, "bool")) want = "true or false";
	else if (!txt && (!strcmp(it->kind, "string") || !strcmp(it->kind, "secret"))) want = "a string";
	else if (!txt) want = check_value(it, "");
	if (want) {
		/* the value is shown, except where it may hold a password */
		int quiet = !strcmp(it->kind, "string") || !strcmp(it->kind, "secret");
		char *got = quiet ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		char *g = quiet ? NULL : shown(got ? got : "?");
		*msg = xasprintf("%s: setting '%s' must be %s%s%s", path, key, want, g ? ", got " : "", g ? g : "");
		free(g);
		free(got);
		return -1;
	}
	config_set(key, txt, path);
	size_t off, len;
	int secret = (!strcmp(it->kind, "secret") && *txt) ||
		     /* a URL's user:password@ is a password too */
		     (!strcmp(key, "database.url") && url_password_span(txt, &off, &len));
	if (secret && cf->world && !cf->warned_world) {
		warn(xasprintf("warning: %s holds a password and is readable by other users (chmod 600 %s)", path, path));
		cf->warned_world = 1;
	}
	return 0;
}

/* The settings of the config file f (at path): a JSON object of sections,
 * each an object of settings. */
static int load_file(FILE *f, const char *path, char **msg)
{
	struct stat st;
	config_file cf = {path, fstat(fileno(f), &st) == 0 && (st.st_mode & 0044), 0};
	/* read whole (a config is small): a read error (a directory) is
	 * told as one, and a UTF-8 byte order mark, which some editors
	 * write, is skipped as djc insert skips it */
	sb_t b = SB_INIT;
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) sb_addn(&b, buf, n);
	int err = ferror(f) ? errno : 0;
	fclose(f);
	if (err) {
		*msg = xasprintf("cannot read config file %s: %s", path, strerror(err));
		sb_free(&b);
		return -1;
	}
	size_t skip = b.len >= 3 && !memcmp(b.s, "\xef\xbb\xbf", 3) ? 3 : 0;
	json_error_t je;
	/* a key twice would silently drop one of the two (a second "jobs"
	 * section, all of the first): refused, as in a row */
	json_t *root = json_loadb(b.s ? b.s + skip : "", b.len - skip, JSON_REJECT_DUPLICATES, &je);
	sb_free(&b);
	if (!root || !json_is_object(root)) {
		*msg = root ? xasprintf("%s: the config must be a JSON object", path)
			    : xasprintf("%s:%d: malformed JSON: %s", path, je.line, je.text);
		json_decref(root);
		return -1;
	}
	const char *sec;
	json_t *sv;
	int rc = 0;
	json_object_foreach(root, sec, sv) {
		if (!json_is_object(sv)) {
			*msg = xasprintf("%s: '%s' must be an object, e.g. {\"jobs\": {\"keep_completed\": true}}", path, sec);
			rc = -1;
			break;
		}
		const char *k;
		json_t *v;
		json_object_foreach(sv, k, v) {
			char key[160];
			snprintf(key, sizeof key, "%s.%s", sec, k);
			if ((rc = file_setting(&cf, key, v, msg))) break;
		}
		if (rc) break;
	}
	json_decref(root);
	return rc;
}

/* The DJC_* environment variables of the settings. */
static int load_env(char **msg)
{
	for (config_item *i = items; i->key; i++) {
		const char *v = getenv(i->env);
		if (v && *v) {
			const char *want = check_value(i, v);
			if (want) {
				char *g = shown(v);
				*msg = xasprintf("environment variable %s (%s) must be %s, got '%s'", i->env, i->key, want, g);
				free(g);
				return -1;
			}
			config_set(i->key, v, "environment");
		}
	}
	return 0;
}

static int load(char **msg)
{
	for (config_item *i = items; i->key; i++) config_set(i->key, i->def, "default");
	const char *path = getenv("DJC_CONFIG");
	int explicit = path && *path;
	if (!explicit) path = "djc.json";
	FILE *f = fopen(path, "r");
	if (!f && explicit) { *msg = xasprintf("cannot read config file %s: %s", path, strerror(errno)); return -1; }
	if (f && load_file(f, path, msg)) return -1;
	if (load_env(msg)) return -1;
	env_typos();
	return 0;
}

const char *config_get(const char *key)
{
	config_item *i = find(key);
	if (!loaded) { char *m = NULL; config_load(&m); free(m); }
	return i && i->value ? i->value : (i ? i->def : "");
}

int config_bool(const char *key)
{
	const char *v = config_get(key);
	return !strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes");
}

long config_long(const char *key) { return strtol(config_get(key), NULL, 10); }
double config_double(const char *key) { return strtod(config_get(key), NULL); }
const config_item *config_items(void) { return items; }
const char *config_warning(void) { return warning; }

/* ------------------------------------------- for the public API (table/settings.c) */

const config_item *config_find(const char *key) { return key ? find(key) : NULL; }

int config_set_checked(const char *key, const char *value, const char *source, char **msg)
{
	if (msg) *msg = NULL;
	char *m = NULL;
	int rc = CONFIG_OK;
	const config_item *i = key ? find(key) : NULL;
	if (!key || !value || !source) {
		m = xstrdup("djc_config_set: key, value and source must not be NULL");
		rc = CONFIG_EINVAL;
	} else if (config_load(&m))
		rc = CONFIG_EINVAL;
	else if (!i) {
		char *k = shown(key);
		m = xasprintf("unknown setting '%s' (see djc config)", k);
		free(k);
		rc = CONFIG_ENOTFOUND;
	} else {
		const char *want = check_value(i, value);
		if (want) {
			int quiet = !strcmp(i->kind, "string") || !strcmp(i->kind, "secret");
			char *g = quiet ? NULL : shown(value);
			m = xasprintf("setting '%s' must be %s%s%s%s", key, want, g ? ", got '" : "", g ? g : "", g ? "'" : "");
			free(g);
			rc = CONFIG_EINVAL;
		} else
			config_set(key, value, source);
	}
	if (msg) *msg = m;
	else free(m);
	return rc;
}

char *config_display(const config_item *i)
{
	const char *v = i->value ? i->value : i->def;
	if (!strcmp(i->kind, "secret") && *v) return xstrdup("***");
	if (!strcmp(i->key, "database.url") && strstr(v, "://")) return url_redacted(v);
	return xstrdup(v);
}

int config_check(const char *name, double value, char **msg)
{
	if (msg) *msg = NULL;
	if (!name || !config_limit_known(name)) {
		if (msg) {
			char *n = shown(name ? name : "(NULL)");
			*msg = xasprintf("no check for a value called '%s'", n);
			free(n);
		}
		return CONFIG_ENOTFOUND;
	}
	const char *what = config_limit(name, value);
	if (!what) return CONFIG_OK;
	if (msg) *msg = xstrdup(what);
	return CONFIG_EINVAL;
}
