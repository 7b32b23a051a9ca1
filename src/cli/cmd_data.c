/* cmd_data.c - tables and their rows: declare, tables, insert, fetch
 * (delete, drop and alter are in cmd_schema.c). */
#include "cli.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int cmd_declare(int argc, char **argv)
{
	static const char H[] = "usage: djc declare PIPELINE_FILE\n"
				"Declare every table of the pipeline file (and the jobs table of each computed\n"
				"or imported one). Idempotent; a changed definition is an error.\n";
	cli_args a;
	cli_args_init(&a, argc, argv, NULL, H);
	const char *file = NULL;
	int nargs = 0;
	for (int o; (o = cli_next(&a)) != CLI_END;)
		if (o == CLI_ARG && !nargs++) file = a.arg;
	if (nargs != 1) die_usage("declare takes one pipeline file (see djc declare --help)");
	char *text = cli_read_file(file);
	djc_conn *c = cli_connect(CLI_CREATE);
	char *report = NULL;
	int rc = djc_declare(&report, c, text, file);
	free(text);
	if (!rc && report) fputs(report, stdout);
	free(report);
	return cli_done(rc, c);
}

int cmd_tables(int argc, char **argv)
{
	enum { JSON = 1 };
	static const cli_option opts[] = {{"json", CLI_FLAG, JSON, 0}, {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts,
		      "usage: djc tables [--json]\nList the declared tables in declaration order. --json: one object,\n"
		      "{\"tables\": [{\"name\", \"tier\", \"master\", \"key\", \"parents\"}, ...]} (djc_pipeline_json).\n");
	int json = 0;
	for (int o; (o = cli_next(&a)) != CLI_END;) {
		if (o == JSON) json = 1;
		else die_usage("tables takes no arguments");
	}
	djc_conn *c = cli_connect(CLI_EXISTING);
	char *s = NULL;
	int rc = json ? djc_pipeline_json(&s, c) : djc_tables(&s, c);
	if (!rc && json) {
		json_t *j = json_loads(s, 0, NULL);
		if (j) cli_print_json(j);
		else fputs(s, stdout);
	} else if (!rc) fputs(s, stdout);
	free(s);
	return cli_done(rc, c);
}

int cmd_insert(int argc, char **argv)
{
	static const char H[] = "usage: djc insert TABLE [FILE] [--format json|csv] [--skip-duplicates] [--allow-direct-insert]\n"
				"Insert rows from FILE or stdin, all or none. json (the default): JSON Lines, one\n"
				"object per line, or one JSON array of objects; bytes are base64 strings, json\n"
				"attributes take any JSON value. csv (the default for a FILE named *.csv): a header\n"
				"line of attribute names, then one record per row (RFC 4180 quoting, as fetch\n"
				"--format csv writes); an empty field is no value (NULL, or the default), \"\" an\n"
				"empty text. --allow-direct-insert lets rows into a computed, imported or part\n"
				"table by hand (a backfill or a repair); populate then never makes those keys again.\n";
	enum { SKIP = 1, DIRECT, FORMAT };
	static const cli_option opts[] = {{"skip-duplicates", CLI_FLAG, SKIP, 0},
					  {"allow-direct-insert", CLI_FLAG, DIRECT, 0}, {"format", CLI_VALUE, FORMAT, 0},
					  {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, H);
	const char *table = NULL, *file = NULL, *format = NULL;
	djc_insert_options io = DJC_INSERT_OPTIONS_INIT;
	for (int o; (o = cli_next(&a)) != CLI_END;) {
		if (o == SKIP) io.skip_duplicates = 1;
		else if (o == DIRECT) io.allow_direct_insert = 1;
		else if (o == FORMAT) {
			if (strcmp(a.arg, "json") && strcmp(a.arg, "csv")) die_usage("--format must be json or csv, got '%s'", a.arg);
			format = a.arg;
		}
		else if (!table) table = a.arg;
		else if (!file) file = a.arg;
		else die_usage("insert takes TABLE [FILE]");
	}
	if (!table) die_usage("insert needs a TABLE (see djc insert --help)");
	FILE *in = stdin;
	if (file && strcmp(file, "-")) {
		in = fopen(file, "r");
		if (!in) die_usage("cannot read %s: %s", file, strerror(errno));
	}
	djc_conn *c = cli_connect(CLI_EXISTING);
	size_t n = 0, fl = file ? strlen(file) : 0;
	int csv = format ? !strcmp(format, "csv") : fl > 4 && !strcasecmp(file + fl - 4, ".csv");
	int rc = csv ? djc_insert_csv_ext(&n, c, table, in, file ? file : "<stdin>", &io)
		     : djc_insert_jsonl_ext(&n, c, table, in, file ? file : "<stdin>", &io);
	if (in != stdin) fclose(in);
	if (!rc) printf("inserted %zu row%s into %s\n", n, n == 1 ? "" : "s", table);
	return cli_done(rc, c);
}

int cmd_fetch(int argc, char **argv)
{
	static const char H[] = "usage: djc fetch TABLE [--where JSON | --key JSON] [--format table|json|csv] [--all-columns]\n"
				"Print rows ordered by primary key. --where takes {\"attr\": value}, {\"attr\": [v1, v2]},\n"
				"{\"attr\": {\">\": 3}} or a list of such objects (OR); every attribute must be TABLE's.\n"
				"--key takes a key object, e.g. a make program's $DJC_KEY, and matches TABLE's rows on the\n"
				"attributes they share, ignoring the rest (DataJoint's Table & key).\n"
				"Run by a make program (DJC_TABLE and DJC_KEY set by djc), it reads only ancestors of\n"
				"$DJC_TABLE, as DataJoint's self.upstream does.\n"
				"--all-columns also shows the hidden job metadata columns (_job_start_time,\n"
				"_job_duration, _job_version) of a table declared with jobs.add_job_metadata.\n";
	enum { WHERE = 1, KEY, FORMAT, ALL };
	static const cli_option opts[] = {
		{"where", CLI_VALUE, WHERE, 0}, {"key", CLI_VALUE, KEY, 0}, {"format", CLI_VALUE, FORMAT, 0},
		{"all-columns", CLI_FLAG, ALL, 0}, {NULL, 0, 0, 0}};
	djc_fetch_options fo = DJC_FETCH_OPTIONS_INIT;
	cli_args a;
	cli_args_init(&a, argc, argv, opts, H);
	a.unknown_fmt = a.missing_fmt = "unknown or incomplete option %s";
	const char *table = NULL, *where = NULL, *key = NULL;
	djc_format fmt = DJC_FORMAT_TABLE;
	for (int o; (o = cli_next(&a)) != CLI_END;) {
		switch (o) {
		case WHERE: where = a.arg; check_where("--where", where); break;
		case KEY: key = a.arg; check_json("--key", key); break;
		case ALL: fo.all_columns = 1; break;
		case FORMAT:
			if (!strcmp(a.arg, "table")) fmt = DJC_FORMAT_TABLE;
			else if (!strcmp(a.arg, "json")) fmt = DJC_FORMAT_JSON;
			else if (!strcmp(a.arg, "csv")) fmt = DJC_FORMAT_CSV;
			else die_usage("--format must be table, json or csv, got '%s'", a.arg);
			break;
		default:
			if (table) die_usage("fetch takes one TABLE");
			table = a.arg;
		}
	}
	if (!table) die_usage("fetch needs a TABLE (see djc fetch --help)");
	if (where && key) die_usage("fetch takes --where or --key, not both");
	djc_conn *c = cli_connect(CLI_EXISTING);
	char *kw = NULL;
	/* inside a make program: the make context's reads, ancestors only */
	const char *target = getenv("DJC_TABLE");
	int rc = target && *target && getenv("DJC_KEY") ? djc_upstream_check(c, target, table) : DJC_OK;
	if (!rc && key) rc = djc_key_restriction(&kw, c, table, key);
	if (!rc) rc = djc_fetch_print_ext(c, table, key ? kw : where, fmt, &fo, stdout);
	free(kw);
	return cli_done(rc, c);
}
