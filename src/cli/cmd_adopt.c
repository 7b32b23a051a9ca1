/* cmd_adopt.c - djc adopt and djc unadopt (docs/adopt.md): a DataJoint
 * schema's tables as djc's pipeline, declared into djc's own schema (the
 * companion, --schema). */
#include "cli.h"
#include <stdlib.h>
#include <string.h>

/* 1 when every line of a declare report says "exists" (or that the
 * stored makes were kept, or a table was left out). */
static int unchanged(const char *report)
{
	if (!report || !*report) return 1;
	for (const char *p = report; *p;) {
		if (strncmp(p, "exists ", 7) && strncmp(p, "kept ", 5) && strncmp(p, "left out ", 9)) return 0;
		const char *e = strchr(p, '\n');
		if (!e) break;
		p = e + 1;
	}
	return 1;
}

int cmd_adopt(int argc, char **argv)
{
	enum { OVERLAY = 1, DRY, ACCEPT };
	static const cli_option opts[] = {{"overlay", CLI_VALUE, OVERLAY, 0}, {"dry-run", CLI_FLAG, DRY, 0},
					  {"accept-changes", CLI_FLAG, ACCEPT, 0}, {NULL, 0, 0, 0}};
	static const char H[] = "usage: djc adopt SCHEMA... [--overlay FILE] [--dry-run] [--accept-changes]\n"
				"Adopt DataJoint schemas (MySQL/MariaDB or PostgreSQL): their tables become djc's\n"
				"pipeline in djc's own schema (--schema, the companion), read where DataJoint keeps\n"
				"them; the overlay FILE gives computed tables their make. Idempotent. --dry-run:\n"
				"print the definitions, store nothing. --accept-changes: take DataJoint's current\n"
				"definitions of adopted tables it changed (their jobs kept while the key is the\n"
				"same, else made anew) and forget those it dropped (docs/adopt.md).\n";
	cli_args a;
	cli_args_init(&a, argc, argv, opts, H);
	const char **schemas = calloc((size_t)argc + 1, sizeof *schemas);
	if (!schemas) return 1;
	size_t n = 0;
	djc_adopt_options o = DJC_ADOPT_OPTIONS_INIT;
	for (int k; (k = cli_next(&a)) != CLI_END;) {
		if (k == OVERLAY) o.overlay_file = a.arg;
		else if (k == DRY) o.dry_run = 1;
		else if (k == ACCEPT) o.accept_changes = 1;
		else schemas[n++] = a.arg;
	}
	if (!n) die_usage("adopt takes the DataJoint schemas to adopt (see djc adopt --help)");
	char *text = o.overlay_file ? cli_read_file(o.overlay_file) : NULL;
	o.overlay = text;
	djc_conn *c = cli_connect(CLI_CREATE);
	char *out = NULL;
	int rc = djc_adopt(&out, c, (const char *const *)schemas, n, &o);
	if (!rc && o.dry_run) fputs(out, stdout);
	else if (!rc && unchanged(out)) {
		printf("unchanged: %s already adopted\n", n > 1 ? "the schemas are" : "the schema is");
		for (const char *p = out ? out : ""; *p;) {   /* what it says beside "exists" */
			size_t len = strcspn(p, "\n");
			if (strncmp(p, "exists ", 7)) printf("%.*s\n", (int)len, p);
			p += len + (p[len] == '\n');
		}
	}
	else if (!rc) fputs(out, stdout);
	free(out);
	free(text);
	free(schemas);
	int code = exit_for(rc, c);
	/* a failed adopt, or a dry run, leaves no companion it created (an
	 * empty database or SQLite file): nothing stored */
	if ((rc || o.dry_run) && djc_discard_created(c)) {
		fprintf(stderr, "djc: %s\n", djc_error_last(c));
		if (!code) code = 1;
	}
	djc_close(c);
	return code;
}

int cmd_unadopt(int argc, char **argv)
{
	static const char H[] = "usage: djc unadopt SCHEMA\n"
				"Forget the tables adopted from DataJoint schema SCHEMA and drop djc's jobs and\n"
				"history tables of them; DataJoint's tables are left as they are.\n";
	cli_args a;
	cli_args_init(&a, argc, argv, NULL, H);
	const char *schema = NULL;
	int nargs = 0;
	for (int k; (k = cli_next(&a)) != CLI_END;)
		if (k == CLI_ARG && !nargs++) schema = a.arg;
	if (nargs != 1) die_usage("unadopt takes one DataJoint schema (see djc unadopt --help)");
	djc_conn *c = cli_connect(CLI_EXISTING);
	char *out = NULL;
	int rc = djc_unadopt(&out, c, schema);
	if (!rc && out) fputs(out, stdout);
	free(out);
	return cli_done(rc, c);
}
