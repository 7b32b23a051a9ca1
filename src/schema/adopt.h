/* adopt.h - a DataJoint schema's catalog as djc definitions (issue 38,
 * docs/adopt.md): the stored form of adopted tables (parse.c reads it) and
 * the overlay file that gives their computed tables a make. Pure: no
 * database; src/table/adopt_api.c reads the catalogs and declares. */
#ifndef DJC_ADOPT_H
#define DJC_ADOPT_H
#include <stddef.h>
#include "../db/catalog.h"
#include "../util/sb.h"

/* One `key = value` line of an overlay block. */
typedef struct ov_line {
	char *key;    /* make, make_serve, timeout or key_source */
	char *text;   /* the whole line, trimmed */
	int line;
} ov_line;

typedef struct ov_block {
	char *table;  /* the class name the block names */
	int line;
	ov_line *lines;
	size_t n;
} ov_block;

typedef struct adopt_overlay {
	char *file;
	ov_block *blocks;
	size_t n;
} adopt_overlay;

/* Parse an overlay file (docs/adopt.md): blocks of a table name followed
 * by indented make / make_serve / timeout / key_source lines; `#` lines
 * and blank lines are ignored. DJC_EINVAL with *msg "file:line: ..." on
 * anything else. The table names are checked by adopt_generate. */
int adopt_overlay_parse(adopt_overlay **out, const char *text, const char *file, char **msg);
void adopt_overlay_free(adopt_overlay *ov);

typedef struct adopt_in {
	db_catalog **cats;   /* [0, nmain): the schemas adopted; then the schemas of their parents */
	size_t ncats, nmain;
	char quote;          /* the backend's identifier quote: '`' MySQL, '"' PostgreSQL */
	const adopt_overlay *ov;   /* NULL: none */
	sb_t *left_out;      /* NULL, or gets a line per table of the adopted
	                      * schemas left out ("left out S.T (Class): why") */
} adopt_in;

/* The schema named by a foreign key of a loaded catalog's table that no
 * catalog of cats holds (to be read next), or NULL when all are there. */
const char *adopt_missing_schema(db_catalog *const *cats, size_t n);

/* Definition texts (djc's pipeline syntax, adopted = lines) for every
 * DataJoint table of the adopted schemas and the tables of other schemas
 * they reference (directly or not), parents first, with the overlay's
 * lines in their blocks. The first adopted schema's tables are named by
 * their class names (Session, Analysis.Item), every other schema's as
 * schema.Class. DJC_EINVAL with *msg (caller frees) for a layout djc does
 * not recognise (naming the table and what) or an overlay that does not
 * fit the tables (file:line). */
int adopt_generate(char **out, char **msg, const adopt_in *in);

/* A message "file:N: ..." about line N of the definitions text that
 * adopt_generate wrote (file: the name they were parsed under) in the
 * terms the user knows (caller frees): "ov.djc:L: ..." for a line the
 * overlay gave, "table schema.table (Class), column c: ..." for a
 * column's line (", reference '-> P'" for a reference's), the message
 * alone for a table's first lines (it names the table). NULL when msg is
 * not of that form. */
char *adopt_where(const char *text, const adopt_overlay *ov, const char *file, const char *msg);

#endif
