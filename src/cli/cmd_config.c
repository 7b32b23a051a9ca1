/* cmd_config.c - djc config: the effective settings and their sources. */
#include "cli.h"
#include "util/config.h"
#include <stdlib.h>
#include <string.h>

int cmd_config(int argc, char **argv)
{
	enum { JSON = 1 };
	static const cli_option opts[] = {{"json", CLI_FLAG, JSON, 0}, {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts,
		      "usage: djc config [--json]\nEffective settings: defaults < djc.json ($DJC_CONFIG) < DJC_* environment < options.\n");
	a.unknown_fmt = "unknown option %s (see djc config --help)";
	int json = 0;
	for (int k; (k = cli_next(&a)) != CLI_END;) {
		if (k == JSON) json = 1;
		else die_usage("config takes no arguments, only --json (got '%s')", a.arg);
	}
	char *msg = NULL;
	if (config_load(&msg)) { fprintf(stderr, "djc: %s\n", msg); free(msg); return 2; }
	if (cli_db) config_set("database.url", cli_db, "command line");
	if (cli_schema) config_set("database.schema", cli_schema, "command line");
	if (json) printf("{");
	int first = 1;
	for (const config_item *i = config_items(); i->key; i++) {
		const char *v = i->value;
		if (!strcmp(i->kind, "secret") && *v) v = "***";
		if (!strcmp(i->key, "database.url") && strstr(v, "@") && strstr(v, "://")) {
			/* hide a password in the URL */
			const char *s = strstr(v, "://") + 3, *at = strrchr(v, '@'), *colon = memchr(s, ':', (size_t)(at - s));
			if (colon) {
				static char red[1024];
				snprintf(red, sizeof red, "%.*s:***%s", (int)(colon - v), v, at);
				v = red;
			}
		}
		if (json) {
			json_t *o = json_pack("{s:s,s:s}", "value", v, "source", i->source);
			char *s = json_dumps(o, JSON_COMPACT);
			printf("%s\"%s\":%s", first ? "" : ",", i->key, s);
			free(s);
			json_decref(o);
		} else
			printf("%-22s %-24s (%s)\n", i->key, v, i->source);
		first = 0;
	}
	if (json) printf("}\n");
	const char *w = config_warning();
	if (w) fprintf(stderr, "djc: %s\n", w);
	return 0;
}
