/* cmd_schema.c - the schema commands of djc: drop, delete (cascading) and
 * alter (docs/schema.md). Uses only the public API. */
#include "cli.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Ask on the terminal: 1 for yes. Only called when stdin is a terminal. */
static int confirm(const char *question)
{
	fprintf(stderr, "%s [y/N] ", question);
	fflush(stderr);
	char line[64];
	if (!fgets(line, sizeof line, stdin)) return 0;
	line[strcspn(line, "\r\n")] = 0;
	return !strcasecmp(line, "y") || !strcasecmp(line, "yes");
}

static const char *plural(long long n) { return n == 1 ? "" : "s"; }

/* ---------------------------------------------------------------- drop */

static void print_drop(const djc_changes *ch, const char *verb)
{
	for (size_t i = 0; i < ch->n; i++) {
		const djc_change *e = &ch->items[i];
		if (e->rows < 0) printf("%s %s: %s (missing)\n", verb, e->table, e->sql_name);
		else printf("%s %s: %s (%lld row%s)\n", verb, e->table, e->sql_name, e->rows, plural(e->rows));
	}
}

int cmd_drop(int argc, char **argv)
{
	static const char H[] =
		"usage: djc drop TABLE [--dry-run] [--yes]\n"
		"Drop TABLE, its part tables, every table that depends on it and their jobs tables,\n"
		"and remove their stored definitions, all or nothing. The tables are listed with\n"
		"their row counts first; without --yes djc asks on a terminal and refuses otherwise.\n"
		"--dry-run lists them and drops nothing. A part table goes with its master.\n";
	enum { DRY = 1, YES };
	static const cli_option opts[] = {{"dry-run", CLI_FLAG, DRY, 0}, {"yes", CLI_FLAG, YES, 'y'}, {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, H);
	const char *table = NULL;
	int dry = 0, yes = 0;
	for (int o; (o = cli_next(&a)) != CLI_END;) {
		if (o == DRY) dry = 1;
		else if (o == YES) yes = 1;
		else if (!table) table = a.arg;
		else die_usage("drop takes one TABLE");
	}
	if (!table) die_usage("drop needs a TABLE (see djc drop --help)");
	djc_conn *c = cli_connect(CLI_EXISTING);
	djc_drop_options o = DJC_DROP_OPTIONS_INIT;
	djc_changes *ch = NULL;
	int rc;
	if (!yes || dry) {
		o.dry_run = 1;
		rc = djc_drop(&ch, c, table, &o);
		if (rc) goto done;
		print_drop(ch, "would drop");
		fflush(stdout);
		if (dry) goto done;
		if (!isatty(STDIN_FILENO)) {
			size_t n = ch->n;
			djc_changes_free(ch);
			djc_close(c);
			die_usage("drop %s: not confirmed; run it with --yes to drop the %zu table%s listed (or --dry-run to look)",
				      table, n, n == 1 ? "" : "s");
		}
		if (!confirm("Drop these tables and their rows?")) {
			fprintf(stderr, "djc: drop %s cancelled; nothing dropped\n", table);
			djc_changes_free(ch);
			djc_close(c);
			return 1;
		}
		djc_changes_free(ch);
		ch = NULL;
	}
	o.dry_run = 0;
	rc = djc_drop(&ch, c, table, &o);
	if (!rc) print_drop(ch, "dropped");
done:
	djc_changes_free(ch);
	return cli_done(rc, c);
}

/* -------------------------------------------------------------- delete */

/* Lines for the tables with rows to delete (and the table deleted from,
 * always): "VERB N rows from T", "VERB N jobs of T". */
static void print_delete(const djc_changes *ch, const char *table, const char *verb)
{
	for (size_t i = 0; i < ch->n; i++) {
		const djc_change *e = &ch->items[i];
		int jobs = !strcmp(e->action, "delete jobs");
		if (e->rows <= 0 && (jobs || i + 1 < ch->n)) continue;
		if (jobs) printf("%s %lld job%s of %s\n", verb, e->rows, plural(e->rows), e->table);
		else printf("%s %lld row%s from %s\n", verb, e->rows < 0 ? 0 : e->rows, plural(e->rows), e->table);
	}
	(void)table;
}

/* djc_delete_ext of a TABLE, or djc_delete_expr of an expression (issue 39)
 * restricted by where too. */
static int delete_any(djc_changes **ch, djc_conn *c, const char *what, const char *where, const djc_delete_options *o)
{
	if (cli_plain_name(what))
		return djc_delete_ext(ch, c, what, where, o);
	djc_expr *e = NULL, *r = NULL;
	int rc = djc_expr_parse(&e, c, what);
	if (!rc && where) rc = djc_expr_restrict(&r, c, e, where);
	if (!rc) rc = djc_delete_expr(ch, c, r ? r : e, o);
	djc_expr_free(r);
	djc_expr_free(e);
	return rc;
}

int cmd_delete(int argc, char **argv)
{
	static const char H[] =
		"usage: djc delete TABLE|EXPR [--where JSON] [--dry-run] [--yes] [--no-cascade]\n"
		"Delete the matching rows (all, without --where) and every row downstream that depends\n"
		"on them, in one transaction (DataJoint's delete). When rows of other tables would go\n"
		"too, the counts per table are listed first; without --yes djc asks on a terminal and\n"
		"refuses otherwise. --dry-run shows the counts only. --no-cascade deletes nothing when a\n"
		"row of another table references a matching row. Jobs of downstream tables whose keys\n"
		"lose their upstream rows go too; a later refresh adds back keys whose upstream rows exist.\n"
		"EXPR: a table restricted by anything (docs/queries.md), e.g. 'Session - Stats' or\n"
		"'Session & (Subject & {\"species\": \"rat\"})'.\n";
	enum { WHERE = 1, DRY, YES, NOCASCADE };
	static const cli_option opts[] = {{"where", CLI_VALUE, WHERE, 0}, {"dry-run", CLI_FLAG, DRY, 0},
					  {"yes", CLI_FLAG, YES, 'y'}, {"no-cascade", CLI_FLAG, NOCASCADE, 0},
					  {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, H);
	a.unknown_fmt = a.missing_fmt = "unknown or incomplete option %s";
	const char *table = NULL, *where = NULL;
	int dry = 0, yes = 0;
	djc_delete_options o = DJC_DELETE_OPTIONS_INIT;
	for (int op; (op = cli_next(&a)) != CLI_END;) {
		if (op == WHERE) { where = a.arg; check_where("--where", where); }
		else if (op == DRY) dry = 1;
		else if (op == YES) yes = 1;
		else if (op == NOCASCADE) o.cascade = 0;
		else if (!table) table = a.arg;
		else die_usage("delete takes one TABLE");
	}
	if (!table) die_usage("delete needs a TABLE");
	if (where && where_is_empty(where))
		die_usage("delete: --where %s restricts nothing; to delete every row of %s leave --where out (an empty "
			  "restriction never means all)", where, table);
	djc_conn *c = cli_connect(CLI_EXISTING);
	djc_changes *ch = NULL;
	int rc;
	if (dry || (!yes && o.cascade)) {
		o.dry_run = 1;
		rc = delete_any(&ch, c, table, where, &o);
		if (rc) goto done;
		if (dry) {
			print_delete(ch, table, "would delete");
			goto done;
		}
		/* confirmation only when rows of other tables would go too */
		long long others = 0;
		for (size_t i = 0; i + 1 < ch->n; i++)
			if (strcmp(ch->items[i].action, "delete jobs")) others += ch->items[i].rows > 0 ? ch->items[i].rows : 0;
		if (others) {
			print_delete(ch, table, "would delete");
			fflush(stdout);
			if (!isatty(STDIN_FILENO)) {
				djc_changes_free(ch);
				djc_close(c);
				die_usage("delete from %s: %lld row%s of other tables would go too; run it with --yes to delete "
					      "what is listed (--dry-run to look, --no-cascade to refuse instead)",
					      table, others, plural(others));
			}
			if (!confirm("Delete these rows?")) {
				fprintf(stderr, "djc: delete from %s cancelled; nothing deleted\n", table);
				djc_changes_free(ch);
				djc_close(c);
				return 1;
			}
		}
		djc_changes_free(ch);
		ch = NULL;
	}
	o.dry_run = 0;
	rc = delete_any(&ch, c, table, where, &o);
	if (!rc) print_delete(ch, table, "deleted");
done:
	djc_changes_free(ch);
	return cli_done(rc, c);
}

/* --------------------------------------------------------------- alter */

int cmd_alter(int argc, char **argv)
{
	static const char H[] =
		"usage: djc alter PIPELINE_FILE [--dry-run]\n"
		"Change the declared tables to their definitions in the file, for secondary attributes:\n"
		"add one (with a default, or nullable), drop one, rename one (new : type  # {old} ...),\n"
		"widen a varchar or an integer type, change a comment or a default. Other changes\n"
		"(primary key, dependencies, indexes) are refused: drop the table and declare it again.\n"
		"--dry-run lists the changes and makes none.\n";
	enum { DRY = 1 };
	static const cli_option opts[] = {{"dry-run", CLI_FLAG, DRY, 0}, {NULL, 0, 0, 0}};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, H);
	const char *file = NULL;
	djc_alter_options o = DJC_ALTER_OPTIONS_INIT;
	for (int op; (op = cli_next(&a)) != CLI_END;) {
		if (op == DRY) o.dry_run = 1;
		else if (!file) file = a.arg;
		else die_usage("alter takes one pipeline file (see djc alter --help)");
	}
	if (!file) die_usage("alter takes one pipeline file (see djc alter --help)");
	char *text = cli_read_file(file);
	djc_conn *c = cli_connect(CLI_EXISTING);
	djc_changes *ch = NULL;
	int rc = djc_alter(&ch, c, text, file, &o);
	free(text);
	if (!rc) {
		size_t n = 0;
		for (size_t i = 0; i < ch->n; i++) {
			const djc_change *e = &ch->items[i];
			if (!strncmp(e->action, "not declared", 12)) {
				printf("skipped %s: %s\n", e->table, e->action);
				continue;
			}
			printf("%s %s: %s\n", o.dry_run ? "would alter" : "altered", e->table, e->action);
			n++;
		}
		if (!n) printf("nothing to alter: the declared tables are as %s defines them\n", file);
	}
	djc_changes_free(ch);
	return cli_done(rc, c);
}
