/* config.c - djc.json / environment / defaults. */
#include "config.h"
#include "sb.h"
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static config_item items[] = {
	{"jobs.auto_refresh", "DJC_JOBS_AUTO_REFRESH", "true", "bool", NULL, NULL},
	{"jobs.keep_completed", "DJC_JOBS_KEEP_COMPLETED", "false", "bool", NULL, NULL},
	{"jobs.stale_timeout", "DJC_JOBS_STALE_TIMEOUT", "3600", "float", NULL, NULL},
	{"jobs.default_priority", "DJC_JOBS_DEFAULT_PRIORITY", "5", "int", NULL, NULL},
	{"jobs.version_method", "DJC_JOBS_VERSION_METHOD", "none", "string", NULL, NULL},
	{"jobs.lease_timeout", "DJC_JOBS_LEASE_TIMEOUT", "60", "float", NULL, NULL},
	{"jobs.reserve_batch", "DJC_JOBS_RESERVE_BATCH", "1", "int", NULL, NULL},
	{"database.url", "DJC_DATABASE_URL", "sqlite:djc.db", "string", NULL, NULL},
	{"database.schema", "DJC_DATABASE_SCHEMA", "", "string", NULL, NULL},
	{"database.password", "DJC_DATABASE_PASSWORD", "", "secret", NULL, NULL},
	{"display.progress", "DJC_DISPLAY_PROGRESS", "false", "bool", NULL, NULL},
	{NULL, NULL, NULL, NULL, NULL, NULL},
};

static int loaded;
static char *warning;

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

static int check_kind(const config_item *i, const char *v)
{
	char *e;
	if (!strcmp(i->kind, "bool"))
		return !strcasecmp(v, "true") || !strcasecmp(v, "false") || !strcmp(v, "1") || !strcmp(v, "0") ||
		       !strcasecmp(v, "yes") || !strcasecmp(v, "no");
	if (!strcmp(i->kind, "int")) { strtol(v, &e, 10); return *v && !*e; }
	if (!strcmp(i->kind, "float")) { strtod(v, &e); return *v && !*e; }
	return 1;
}

int config_load(char **msg)
{
	*msg = NULL;
	if (loaded) return 0;
	loaded = 1;
	for (config_item *i = items; i->key; i++) config_set(i->key, i->def, "default");
	const char *path = getenv("DJC_CONFIG");
	int explicit = path && *path;
	if (!explicit) path = "djc.json";
	FILE *f = fopen(path, "r");
	if (!f && explicit) { *msg = xasprintf("cannot read config file %s: %s", path, strerror(errno)); return -1; }
	if (f) {
		json_error_t je;
		json_t *root = json_loadf(f, 0, &je);
		struct stat st;
		int world = fstat(fileno(f), &st) == 0 && (st.st_mode & 0044);
		fclose(f);
		if (!root || !json_is_object(root)) {
			*msg = root ? xasprintf("%s: the config must be a JSON object", path)
				    : xasprintf("%s:%d: malformed JSON: %s", path, je.line, je.text);
			json_decref(root);
			return -1;
		}
		const char *sec;
		json_t *sv;
		json_object_foreach(root, sec, sv) {
			if (!json_is_object(sv)) {
				*msg = xasprintf("%s: '%s' must be an object, e.g. {\"jobs\": {\"keep_completed\": true}}", path, sec);
				json_decref(root);
				return -1;
			}
			const char *k;
			json_t *v;
			json_object_foreach(sv, k, v) {
				char key[160];
				snprintf(key, sizeof key, "%s.%s", sec, k);
				config_item *it = find(key);
				if (!it) {
					*msg = xasprintf("%s: unknown setting '%s' (see djc config)", path, key);
					json_decref(root);
					return -1;
				}
				char buf[64];
				const char *txt;
				if (json_is_string(v)) txt = json_string_value(v);
				else if (json_is_true(v)) txt = "true";
				else if (json_is_false(v)) txt = "false";
				else if (json_is_integer(v)) { snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); txt = buf; }
				else if (json_is_real(v)) { snprintf(buf, sizeof buf, "%.17g", json_real_value(v)); txt = buf; }
				else txt = NULL;
				if (!txt || !check_kind(it, txt)) {
					*msg = xasprintf("%s: setting '%s' must be a %s", path, key, it->kind);
					json_decref(root);
					return -1;
				}
				config_set(key, txt, path);
				int secret = !strcmp(it->kind, "secret") && *txt;
				if (!strcmp(key, "database.url") && strstr(txt, "://")) {
					/* a URL's user:password@ is a password too */
					const char *s = strstr(txt, "://") + 3;
					const char *at = strchr(s, '@'), *sl = strchr(s, '/');
					if (at && (!sl || at < sl) && memchr(s, ':', (size_t)(at - s))) secret = 1;
				}
				if (secret && world)
					warning = xasprintf("warning: %s holds a password and is readable by other users (chmod 600 %s)", path, path);
			}
		}
		json_decref(root);
	}
	for (config_item *i = items; i->key; i++) {
		const char *v = getenv(i->env);
		if (v && *v) {
			if (!check_kind(i, v)) {
				*msg = xasprintf("environment variable %s must be a %s, got '%s'", i->env, i->kind, v);
				return -1;
			}
			config_set(i->key, v, "environment");
		}
	}
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
