/* cmd_config.c - djc config: the effective settings and their sources. */
#include "cli.h"
#include <stdlib.h>
#include <string.h>

static int print_text(const djc_setting *s, void *payload)
{
	(void)payload;
	printf("%-22s %-24s (%s)\n", s->key, s->value, s->source);
	return 0;
}

/* A setting's value as the JSON of its kind: true/false, a number (an
 * integer when it is one), else text (choices, strings, a redacted
 * password). */
static json_t *typed_value(const djc_setting *s)
{
	if (!strcmp(s->kind, "bool")) {
		int b = 0;
		djc_config_get_bool(&b, s->key);
		return json_boolean(b);
	}
	if (!strcmp(s->kind, "int") || !strcmp(s->kind, "float")) {
		char *e;
		double x = strtod(s->value, &e);
		if (*s->value && !*e) {
			if (x == (double)(json_int_t)x && x > -9e15 && x < 9e15) return json_integer((json_int_t)x);
			return json_real(x);
		}
	}
	return cli_json_text(s->value);
}

static int add_json(const djc_setting *s, void *payload)
{
	json_object_set_new((json_t *)payload, s->key,
			    json_pack("{s:o,s:o}", "value", typed_value(s), "source", cli_json_text(s->source)));
	return 0;
}

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
	if (djc_config_load(&msg)) die_usage("%s", msg ? msg : "the configuration does not load");
	if ((cli_db && djc_config_set("database.url", cli_db, "command line", &msg)) ||
	    (cli_schema && djc_config_set("database.schema", cli_schema, "command line", &msg)))
		die_usage("%s", msg ? msg : "cannot set --db/--schema");
	if (json) {
		json_t *o = json_object();
		djc_config_foreach(add_json, o);
		cli_print_json(o);
	} else
		djc_config_foreach(print_text, NULL);
	cli_print_warnings();
	return 0;
}
