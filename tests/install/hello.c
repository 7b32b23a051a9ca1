/* hello.c - a program built only against an installed djc (`make install`,
 * then `cc hello.c $(pkg-config --cflags --libs djc)`): declares a two-table
 * pipeline, inserts five rows, populates the computed table with a C make
 * and job reservation, and checks the result. Run by tests/cli/test_install.sh
 * on every backend; the database is $DJC_DATABASE_URL, the schema
 * $DJC_DATABASE_SCHEMA. Prints "hello: ok" and exits 0 when all is right.
 * `hello PROGRAM ARG...` populates with that make program instead (per key,
 * the same squares): test_install.sh runs a Python make so, one that finds
 * djc and djc_make.py through the library (djc.h: djc_populate). */
#include <djc.h>
#include <stdio.h>
#include <stdlib.h>

static const char *pipeline =
	"Item (manual)\n"
	"    item_id : int32\n"
	"    ---\n"
	"    x : float64\n"
	"\n"
	"Square (computed)\n"
	"    -> Item\n"
	"    ---\n"
	"    y : float64\n";

static int fail(djc_conn *c, const char *what)
{
	fprintf(stderr, "hello: %s: %s\n", what, djc_error_last(c));
	return 1;
}

static int make_square(djc_make_ctx *ctx, const djc_row *key, void *payload)
{
	(void)payload;
	char *where = djc_row_to_json(key);
	djc_rowset *rs = NULL;
	int rc = djc_make_fetch(&rs, ctx, "Item", where);
	free(where);
	double x = 0;
	if (rc || djc_rowset_count(rs) != 1 || djc_row_float(&x, djc_rowset_row(rs, 0), (size_t)djc_row_find(djc_rowset_row(rs, 0), "x"))) {
		djc_rowset_free(rs);
		djc_make_error(ctx, "item not found");
		return 1;
	}
	djc_rowset_free(rs);
	djc_row *row = djc_row_new();
	djc_row_set_float(row, "y", x * x);
	rc = djc_make_insert(ctx, NULL, row);
	djc_row_free(row);
	return rc;
}

int main(int argc, char **argv)
{
	djc_conn *c = NULL;
	if (djc_open(&c, NULL, getenv("DJC_DATABASE_SCHEMA"))) return fail(c, "open");
	if (djc_declare(NULL, c, pipeline, "hello.djc")) return fail(c, "declare");
	djc_row *rows[5];
	for (int i = 0; i < 5; i++) {
		rows[i] = djc_row_new();
		djc_row_set_int(rows[i], "item_id", i + 1);
		djc_row_set_float(rows[i], "x", i + 1);
	}
	int rc = djc_insert_ext(NULL, c, "Item", (const djc_row *const *)rows, 5, NULL);
	for (int i = 0; i < 5; i++) djc_row_free(rows[i]);
	if (rc) return fail(c, "insert");
	djc_populate_options o;
	djc_populate_options_init(&o);
	o.reserve_jobs = 1;
	if (argc > 1) o.make_argv = (const char *const *)(argv + 1);
	else o.make = make_square;
	djc_populate_result *res = NULL;
	rc = djc_populate(&res, c, "Square", &o);
	if (rc || !res || res->success_count != 5) {
		djc_populate_result_free(res);
		return fail(c, "populate");
	}
	djc_populate_result_free(res);
	djc_rowset *rs = NULL;
	if (djc_fetch(&rs, c, "Square", NULL)) return fail(c, "fetch");
	double sum = 0, y;
	for (size_t i = 0; i < djc_rowset_count(rs); i++)
		if (!djc_row_float(&y, djc_rowset_row(rs, i), (size_t)djc_row_find(djc_rowset_row(rs, i), "y"))) sum += y;
	size_t n = djc_rowset_count(rs);
	djc_rowset_free(rs);
	djc_close(c);
	if (n != 5 || sum != 55) {
		fprintf(stderr, "hello: expected 5 rows summing to 55, got %zu summing to %g\n", n, sum);
		return 1;
	}
	printf("hello: ok\n");
	return 0;
}
