/* cmd_data.c - tables and their rows: declare, tables, insert, fetch
 * (delete, drop and alter are in cmd_schema.c). */
#include "cli.h"
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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
	if (!rc) return cli_done(rc, c);
	/* a failed declare creates nothing: not the schema (database) its
	 * connection created either, or a mistyped --schema would be there
	 * for every later command (a SQLite file stays: djc_discard_created) */
	int code = exit_for(rc, c);
	if (djc_discard_created(c)) fprintf(stderr, "djc: %s\n", djc_error_last(c));
	djc_close(c);
	return code;
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

/* cli_done for an insert: a duplicate key's message names the option of the
 * command (--skip-duplicates), not the C API's field. */
static int insert_done(int rc, djc_conn *c)
{
	static const char API[] = "(set skip_duplicates in djc_insert_options to skip it)";
	const char *m = rc == DJC_EDUPLICATE ? djc_error_last(c) : NULL;
	const char *at = m ? strstr(m, API) : NULL;
	if (!at) return cli_done(rc, c);
	fprintf(stderr, "djc: %.*s(use --skip-duplicates to skip it)%s\n", (int)(at - m), m, at + strlen(API));
	djc_close(c);
	return exit_status(rc);
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
	return insert_done(rc, c);
}

int cli_plain_name(const char *s)
{
	for (const char *p = s; *p; p++) {
		if (strchr("(){}[]", *p)) return 0;
		if (*p == '*' || *p == '&' || *p == '+') {   /* A * B, A & {...}: an operand after it, or a space before */
			const char *a = p + 1;
			while (*a == ' ') a++;
			if (isalnum((unsigned char)*a) || (*a && strchr("_({['\"", *a)) || (p > s && p[-1] == ' ')) return 0;
		}
		if (*p != '-') continue;
		const char *b = p;   /* A - B: a name or a closing bracket before the '-' */
		while (b > s && b[-1] == ' ') b--;
		if (b > s && (isalnum((unsigned char)b[-1]) || strchr("_)}]", b[-1]))) return 0;
	}
	return 1;
}

/* A count option's value: a whole number >= 0, else exit 2. */
static long long count_arg(const char *opt, const char *v)
{
	char *end;
	errno = 0;
	long long n = strtoll(v, &end, 10);
	if (!*v || *end || errno || n < 0) die_usage("%s takes a whole number >= 0, got '%s'", opt, v);
	return n;
}

/* What fetch was asked beyond a table's rows. */
typedef struct fetch_req {
	const char *what, *where, *key, *format;
	djc_expr_fetch_options eo;
	djc_fetch_options fo;
	int explain, expr_only;   /* expr_only: an option only an expression fetch has */
} fetch_req;

/* Fetch an expression (or a table with the algebra's options). */
static int fetch_expr(djc_conn *c, const fetch_req *q)
{
	djc_expr *e = NULL, *r = NULL;
	char *kw = NULL, *sql = NULL;
	int rc = djc_expr_parse(&e, c, q->what);
	const char *target = getenv("DJC_TABLE");
	if (!rc && target && *target && getenv("DJC_KEY")) rc = djc_expr_upstream_check(c, target, e);
	if (!rc && q->key) rc = djc_key_restriction(&kw, c, q->what, q->key);
	if (!rc && (q->where || kw)) {
		rc = djc_expr_restrict(&r, c, e, kw ? kw : q->where);
		djc_expr_free(e);
		e = r;
	}
	if (!rc && q->explain) rc = djc_expr_sql(&sql, c, e, &q->eo);
	if (!rc && sql) printf("%s\n", sql);
	else if (!rc) rc = djc_fetch_expr_print(c, e, q->format, &q->eo, stdout);
	free(sql);
	free(kw);
	djc_expr_free(e);
	return rc;
}

/* A connection to the fetch socket of the make that runs this process
 * (DJC_FETCH_SOCKET: a per-key make program's, docs/serve-protocol.md),
 * or -1 (none, or not reachable from here: another network namespace). */
static int fetch_socket(void)
{
	const char *name = getenv("DJC_FETCH_SOCKET");
	struct sockaddr_un sa = {0};
	size_t n = name ? strlen(name) : 0;
	if (!n || n >= sizeof sa.sun_path) return -1;
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, name, n);
	if (name[0] == '@') sa.sun_path[0] = '\0';   /* Linux's abstract namespace */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)))
		return fd;
	if (fd >= 0) close(fd);
	return -1;
}

/* Inside a per-key make program, a fetch of a table by --key or --where
 * printed as JSON is asked of the worker over its fetch socket: read
 * through the make's context (ancestors and their parts only, checked at commit, as a C
 * make's or a serve program's fetches), with no connection of its own.
 * The exit status, or -1 when there is no socket to ask (the caller reads
 * the database itself). */
static int fetch_through_worker(const fetch_req *q)
{
	/* what the socket takes as the database path would: a JSON object
	 * key, a JSON restriction (not a text condition: --where 'x > 2'), a
	 * name that is text */
	const char *arg = q->key ? q->key : q->where;
	json_t *r = arg ? json_loads(arg, JSON_DECODE_ANY, NULL) : NULL;
	json_t *req = json_pack("{s:s,s:s}", "_djc", "fetch", "table", q->what);
	int fd = -1;
	if (req && (!arg || (r && (json_is_object(r) || (!q->key && json_is_array(r)))))) fd = fetch_socket();
	if (fd < 0) {
		json_decref(r);
		json_decref(req);
		return -1;
	}
	if (r) json_object_set_new(req, q->key ? "key" : "where", r);
	char *text = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	size_t len = text ? strlen(text) + 1 : 0, off = 0;
	char *line = malloc(len + 1);
	if (!line) len = 0;
	else if (len) snprintf(line, len + 1, "%s\n", text);
	free(text);
	while (off < len) {
		ssize_t w = send(fd, line + off, len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR) continue;
		if (w <= 0) break;
		off += (size_t)w;
	}
	free(line);
	shutdown(fd, SHUT_WR);   /* one request: djc answers it all the same */
	FILE *in = fdopen(fd, "r");
	char *l = NULL;
	size_t cap = 0;
	ssize_t got = in && len && off == len ? getline(&l, &cap, in) : -1;
	json_t *head = got > 0 ? json_loadb(l, (size_t)got, 0, NULL) : NULL;
	const char *err = json_string_value(json_object_get(head, "error"));
	json_int_t count = json_integer_value(json_object_get(head, "count"));
	int status = 0;
	if (got <= 0) {
		/* no answer at all (a worker that does not take this process: it
		 * runs as another user): read the database, as without a socket */
		free(l);
		if (in) fclose(in);
		else close(fd);
		return -1;
	}
	if (err) {
		json_int_t code = json_integer_value(json_object_get(head, "code"));
		fprintf(stderr, "djc: %s\n", err);
		status = code ? exit_status((int)code) : 1;
	} else if (!json_is_integer(json_object_get(head, "count")) || count < 0) {
		fprintf(stderr, "djc: the worker's fetch socket answered no rows\n");
		status = 1;
	}
	for (json_int_t i = 0; !status && i < count; i++) {
		got = getline(&l, &cap, in);
		if (got <= 0 || l[got - 1] != '\n') {
			fprintf(stderr, "djc: the worker's fetch socket closed after %lld of %lld rows\n", (long long)i,
				(long long)count);
			status = 1;
		} else
			fwrite(l, 1, (size_t)got, stdout);
	}
	json_decref(head);
	free(l);
	if (in) fclose(in);
	else close(fd);
	if (fflush(stdout)) status = 1;
	return status;
}

int cmd_fetch(int argc, char **argv)
{
	static const char H[] =
		"usage: djc fetch EXPR [--where JSON | --key JSON] [--format table|json|jsonl|csv|tsv] [--attrs a,b]\n"
		"                 [--order-by 'a desc, b'] [--limit N] [--offset N] [--fetch1] [--explain] [--all-columns]\n"
		"Print rows ordered by primary key. EXPR is a table or an expression of DataJoint's algebra\n"
		"(docs/queries.md): 'Session * Stats & {\"subject\": \"m1\"}', 'Session - Stats',\n"
		"'Session.proj(a, new=old)', 'Subject.aggr(Session, n=count(), m=avg(x))', parentheses;\n"
		"it is read with ONE SQL statement. --where takes {\"attr\": value}, {\"attr\": [v1, v2]},\n"
		"{\"attr\": {\">\": 3}} or a list of such objects (OR); every attribute must be EXPR's.\n"
		"--key takes a key object, e.g. a make program's $DJC_KEY, and matches TABLE's rows on the\n"
		"attributes they share, ignoring the rest (DataJoint's Table & key).\n"
		"--attrs: only these attributes, each once; --order-by: attributes, each asc or desc (KEY,\n"
		"in both: the primary key); --limit / --offset: a page of the rows; --fetch1: exactly one\n"
		"row, else an error; --explain: print the statement (with ? for the bound values) and run\n"
		"nothing.\n"
		"Run by a make program (DJC_TABLE and DJC_KEY set by djc), it reads only ancestors of\n"
		"$DJC_TABLE, as DataJoint's self.upstream does; a per-key program's fetch of a TABLE\n"
		"as json is read by the worker (DJC_FETCH_SOCKET), so the commit checks it.\n"
		"--all-columns also shows the hidden job metadata columns (_job_start_time,\n"
		"_job_duration, _job_version) of a table declared with jobs.add_job_metadata.\n";
	enum { WHERE = 1, KEY, FORMAT, ALL, ATTRS, ORDER, LIMIT, OFFSET, FETCH1, EXPLAIN };
	static const cli_option opts[] = {
		{"where", CLI_VALUE, WHERE, 0}, {"key", CLI_VALUE, KEY, 0}, {"format", CLI_VALUE, FORMAT, 0},
		{"all-columns", CLI_FLAG, ALL, 0}, {"attrs", CLI_VALUE, ATTRS, 0}, {"order-by", CLI_VALUE, ORDER, 0},
		{"limit", CLI_VALUE, LIMIT, 0}, {"offset", CLI_VALUE, OFFSET, 0}, {"fetch1", CLI_FLAG, FETCH1, 0},
		{"explain", CLI_FLAG, EXPLAIN, 0}, {NULL, 0, 0, 0}};
	fetch_req q = {NULL, NULL, NULL, "table", DJC_EXPR_FETCH_OPTIONS_INIT, DJC_FETCH_OPTIONS_INIT, 0, 0};
	cli_args a;
	cli_args_init(&a, argc, argv, opts, H);
	a.unknown_fmt = a.missing_fmt = "unknown or incomplete option %s";
	for (int o; (o = cli_next(&a)) != CLI_END;) {
		switch (o) {
		case WHERE: q.where = a.arg; check_where("--where", q.where); break;
		case KEY: q.key = a.arg; check_json("--key", q.key); break;
		case ALL: q.fo.all_columns = 1; break;
		case ATTRS: q.eo.attrs = a.arg; q.expr_only = 1; break;
		case ORDER: q.eo.order_by = a.arg; q.expr_only = 1; break;
		case LIMIT: q.eo.limit = count_arg("--limit", a.arg); q.expr_only = 1; break;
		case OFFSET: q.eo.offset = count_arg("--offset", a.arg); q.expr_only = 1; break;
		case FETCH1: q.eo.fetch1 = 1; q.expr_only = 1; break;
		case EXPLAIN: q.explain = 1; q.expr_only = 1; break;
		case FORMAT:
			if (strcmp(a.arg, "table") && strcmp(a.arg, "json") && strcmp(a.arg, "csv") && strcmp(a.arg, "jsonl") &&
			    strcmp(a.arg, "tsv"))
				die_usage("--format must be table, json, jsonl, csv or tsv, got '%s'", a.arg);
			q.format = a.arg;
			q.expr_only |= !strcmp(a.arg, "jsonl") || !strcmp(a.arg, "tsv");
			break;
		default:
			if (q.what) die_usage("fetch takes one TABLE");
			q.what = a.arg;
		}
	}
	if (!q.what) die_usage("fetch needs a TABLE or an expression (see djc fetch --help)");
	if (q.where && q.key) die_usage("fetch takes --where or --key, not both");
	int plain = cli_plain_name(q.what);
	if (q.key && !plain) die_usage("--key takes a TABLE, not an expression (restrict the expression by {...})");
	if (q.fo.all_columns && (!plain || q.expr_only)) die_usage("--all-columns takes a TABLE and no other option but --where, --key, --format");
	if (plain && !q.expr_only && !q.fo.all_columns && !strcmp(q.format, "json") && getenv("DJC_KEY")) {
		int status = fetch_through_worker(&q);
		if (status >= 0) return status;
	}
	djc_conn *c = cli_connect(CLI_EXISTING);
	if (!plain || q.expr_only) return cli_done(fetch_expr(c, &q), c);
	djc_format fmt = !strcmp(q.format, "json") ? DJC_FORMAT_JSON : !strcmp(q.format, "csv") ? DJC_FORMAT_CSV : DJC_FORMAT_TABLE;
	char *kw = NULL;
	/* inside a make program: the make context's reads, ancestors (and their parts) only */
	const char *target = getenv("DJC_TABLE");
	int rc = target && *target && getenv("DJC_KEY") ? djc_upstream_check(c, target, q.what) : DJC_OK;
	if (!rc && q.key) rc = djc_key_restriction(&kw, c, q.what, q.key);
	if (!rc) rc = djc_fetch_print_ext(c, q.what, q.key ? kw : q.where, fmt, &q.fo, stdout);
	free(kw);
	return cli_done(rc, c);
}
