/* cond.h - condition text: a small, safe restriction grammar parsed by djc
 * and compiled to query nodes (sql/query.h), every value a bound
 * parameter (docs/conditions.md):
 *
 *	subject = "m1" and duration > 3.5
 *	session in (1, 2, 3) or not (note like "pilot%")
 *	weight between 20 and 30 and species is not null
 *
 * cond    := or
 * or      := and ("or" and)*
 * and     := unary ("and" unary)*
 * unary   := "not" unary | "(" or ")" | pred
 * pred    := NAME op value | value op NAME
 *          | NAME ["not"] "in" "(" value ("," value)* ")"
 *          | NAME ["not"] "between" value "and" value
 *          | NAME ["not"] "like" STRING
 *          | NAME "is" ["not"] "null"
 * op      := = | <> | != | < | <= | > | >=
 * value   := STRING ('...' or "...", backslash escapes \\ \' \" \n \t \r)
 *          | NUMBER (-?digits[.digits][e[+-]digits]) | true | false
 * NAME    := [A-Za-z_][A-Za-z0-9_]* or `backquoted` (keywords are
 *            case-insensitive; a name that is a keyword needs the quotes)
 *
 * Every NAME is resolved by the caller's heading (a table's attributes, a
 * key source's, a join's: cond_heading), which gives its column and its
 * attribute (the value is checked and converted by the attribute's type,
 * value_in; an operator must suit the type: json only "is [not] null",
 * like only text). Refused, each with the column (1-based character
 * position) of the problem: an unknown name (with the nearest name and
 * the valid ones), a bare value or a bare name as a condition, a
 * comparison of two values ("1 = 1"), null in a comparison (use is null),
 * an unterminated string, unbalanced parentheses, ";", comments ("--",
 * "#", slash-star), a dangling "and"/"or", anything left over. */
#ifndef DJC_TABLE_COND_H
#define DJC_TABLE_COND_H
#include "schema/schema.h"
#include "sql/query.h"

/* What a name of the condition is: its column (as the statement refers to
 * it; the strings must outlive the rendering) and its attribute (type). */
typedef struct cond_ref {
	q_col col;
	const attr *a;
} cond_ref;

/* The names a condition may use. resolve: 0 with *out set when name is
 * one of them, else nonzero. names: up to max of the valid names into
 * names[], returns how many there are in all (for "did you mean" and the
 * list in the message). what: the end of "... is not <what>", e.g.
 * "an attribute of Stats". */
typedef struct cond_heading {
	int (*resolve)(void *ctx, const char *name, cond_ref *out);
	size_t (*names)(void *ctx, const char **names, size_t max);
	void *ctx;
	const char *what;
} cond_heading;

/* text compiled to one condition node of arena a (values taken by it).
 * DJC_OK with *out set, or DJC_EINVAL with *out NULL and *msg (caller
 * frees) one line: "condition, column N: problem". An empty (or blank)
 * text is DJC_EINVAL too: a condition restricts something. */
int cond_compile(q_node **out, q_arena *a, const char *text, const cond_heading *h, char **msg);

/* A string s[0..n) that is not a date, compared with date attribute a
 * (condition text or JSON): a datetime "D T" compares as MySQL compares
 * it, the date being D at midnight (docs/conditions.md, "Dates and
 * datetimes"). 0 with *out the date D and *after 1 when T is after
 * midnight (0 when it is midnight: then it is the date D); -1 when s is no
 * datetime either. */
int cond_date_of_datetime(const attr *a, const char *s, size_t n, val_t *out, int *after);

/* c op x (op static: = != < <= > >=), x of type ty (taken). after: x is
 * the date of a datetime after midnight (cond_date_of_datetime), which no
 * date equals: c < it is c <= x, c > it is c > x, c = it is false for
 * every date and c != it true (null for a null c, under not too). */
q_node *cond_cmp(q_arena *a, q_col c, const coldef *ty, const char *op, val_t x, int after);

/* 1 when a restriction string is condition text, 0 when it is JSON (its
 * first non-blank character is '{' or '[') or empty/NULL. */
int cond_is_text(const char *where);

#endif
