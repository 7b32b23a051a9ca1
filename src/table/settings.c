/* settings.c - the public configuration API (djc.h: djc_config_*,
 * djc_option_check) and djc_duration_parse over util's config and
 * duration, which know nothing of djc.h: their statuses become djc.h's. */
#include "djc.h"
#include "util/config.h"
#include "util/duration.h"
#include <stdlib.h>
#include <string.h>

/* util/config's status as djc.h's */
static int status(int rc)
{
	return rc == CONFIG_OK ? DJC_OK : rc == CONFIG_ENOTFOUND ? DJC_ENOTFOUND : DJC_EINVAL;
}

int djc_config_load(char **msg)
{
	char *m = NULL;
	if (msg) *msg = NULL;
	if (!config_load(&m)) return DJC_OK;
	if (msg) *msg = m;
	else free(m);
	return DJC_EINVAL;
}

int djc_config_get(const char **out, const char *key)
{
	if (out) *out = NULL;
	if (!out || !key) return DJC_EINVAL;
	if (djc_config_load(NULL)) return DJC_EINVAL;
	const config_item *i = config_find(key);
	if (!i) return DJC_ENOTFOUND;
	*out = i->value;
	return DJC_OK;
}

int djc_config_get_bool(int *out, const char *key)
{
	const char *v;
	if (out) *out = 0;
	if (!out) return DJC_EINVAL;
	int rc = djc_config_get(&v, key);
	if (rc) return rc;
	if (strcmp(config_find(key)->kind, "bool")) return DJC_EINVAL;
	*out = config_bool(key);
	return DJC_OK;
}

int djc_config_set(const char *key, const char *value, const char *source, char **msg)
{
	return status(config_set_checked(key, value, source, msg));
}

int djc_config_foreach(int (*cb)(const djc_setting *setting, void *payload), void *payload)
{
	if (!cb) return DJC_EINVAL;
	if (djc_config_load(NULL)) return DJC_EINVAL;
	for (const config_item *i = config_items(); i->key; i++) {
		char *v = config_display(i);
		djc_setting s = {i->key, v, i->source ? i->source : "default", i->env, i->kind};
		int rc = cb(&s, payload);
		free(v);
		if (rc) return rc;
	}
	return DJC_OK;
}

const char *djc_config_warning(void) { return config_warning(); }

int djc_option_check(const char *name, double value, char **msg)
{
	return status(config_check(name, value, msg));
}

int djc_duration_parse(double *seconds, const char *text)
{
	double v = 0;
	if (duration_parse(text, &v)) return DJC_EINVAL;
	if (seconds) *seconds = v;
	return DJC_OK;
}
