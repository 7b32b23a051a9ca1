/* worker_statements.c - every statement `djc worker` runs on its table
 * ~djc_worker, written once, whole, named, each with the reason it is
 * safe; expanded by jsql_expand() (jobs/sql.h) with {N} = the worker
 * table. The table has one row per served table (name = the table's name):
 *   refresh_at     when the last refresh by a worker started (database clock)
 *   refresh_gen    how many refreshes were started by workers (0: none yet)
 *   refreshed_gen  the generation of the last one that committed
 *   refresh_host, refresh_pid  who started the last one
 *   d0 .. d47      how many makes took a duration in each bucket
 *                  (worker_table.c: durations_bucket)
 * Its columns are W_COLUMNS below (worker.create writes them with
 * {attrdefs}, as jobs.create writes a jobs table's from JOB_COLS). Values
 * are bound parameters, never text. */
#include "worker_table.h"

/* The duration buckets' columns, written out by the preprocessor: WB(X)
 * is X(1) ... X(47); bucket 0 is spelled first, without a comma. */
#define WB(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) \
	X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31) X(32) X(33) X(34) \
	X(35) X(36) X(37) X(38) X(39) X(40) X(41) X(42) X(43) X(44) X(45) X(46) X(47)
#define WB_ONE(b) +1
_Static_assert(1 WB(WB_ONE) == NBUCKET, "one column per duration bucket");
#define DCOL(b) ", d" #b
#define DZERO(b) ", 0"
#define DADD(b) ", d" #b " = d" #b " + ?"
#define DHALF(b) ", d" #b " = (d" #b " - d" #b " % 2) / 2"
#define DCOLS "d0" WB(DCOL)                        /* d0, d1, ..., d47 */
#define DZEROS "0" WB(DZERO)                       /* 0, 0, ..., 0 */
#define DADDS "d0 = d0 + ?" WB(DADD)               /* d0 = d0 + ?, ... */
#define DHALVES "d0 = (d0 - d0 % 2) / 2" WB(DHALF) /* integer halves in every dialect */

#define DDEF(b) , {.name = "d" #b, .type = {T_INT64, 0, 0, NULL, 0}}
/* The key (name), the slot's columns (refresh_host and refresh_pid
 * nullable), then the buckets (NOT NULL, BIGINT), named d0 ... d47. */
const attr W_COLUMNS[] = {
	{.name = "name", .type = {T_VARCHAR, 255, 0, NULL, 0}},
	{.name = "refresh_at", .type = {T_DATETIME, 3, 0, NULL, 0}},
	{.name = "refresh_gen", .type = {T_INT64, 0, 0, NULL, 0}},
	{.name = "refreshed_gen", .type = {T_INT64, 0, 0, NULL, 0}},
	{.name = "refresh_host", .type = {T_VARCHAR, 255, 0, NULL, 0}, .nullable = 1},
	{.name = "refresh_pid", .type = {T_INT64, 0, 0, NULL, 0}, .nullable = 1},
	{.name = "d0", .type = {T_INT64, 0, 0, NULL, 0}} WB(DDEF)
};
const size_t NW_COLUMNS = sizeof W_COLUMNS / sizeof *W_COLUMNS;
_Static_assert(sizeof W_COLUMNS / sizeof *W_COLUMNS == 6 + NBUCKET, "the slot's columns and one per bucket");

/* worker.create - the table, when missing (read first with worker.exists;
 * two workers creating it at once: the loser finds it made). Its columns
 * are W_COLUMNS, given as jctx.attrs. */
const jsql WS_CREATE = {"worker.create", "CREATE TABLE IF NOT EXISTS {N} ({attrdefs}, PRIMARY KEY (name)){table_suffix}"};

/* worker.exists - is the table there? Read before any CREATE: a thousand
 * workers starting together create nothing when it exists. */
const jsql WS_EXISTS = {"worker.exists", "SELECT count(*) FROM {N}"};

/* worker.add - the row of a served table, when missing: its slot open
 * (refresh_gen 0); a row already there is left alone. Argument: name. */
const jsql WS_ADD = {"worker.add", "{insert_ignore} {N} (name, refresh_at, refresh_gen, refreshed_gen, " DCOLS ") "
				   "VALUES (?, {now}, 0, 0, " DZEROS "){insert_ignore_tail}"};

/* worker.slot - take the refresh slot of a table: only a row whose last
 * refresh started at least an interval ago (the caller's interval: workers
 * with different ones coexist) matches, and the UPDATE sets that time to
 * now, so of any number of workers trying at once exactly one changes the
 * row (the others see the new time, or wait for its lock and then see it)
 * and refreshes. Arguments: host, pid, name, -interval. */
const jsql WS_SLOT = {"worker.slot",
		      "UPDATE {N} SET refresh_at = {now}, refresh_gen = refresh_gen + 1, refresh_host = ?, refresh_pid = ? "
		      "WHERE name = ? AND (refresh_gen = 0 OR refresh_at <= {now+?})"};

/* worker.slot.now - take the refresh slot of a table at once, whatever the
 * interval, if no refresh started since generation G (read by the caller
 * after its commits, or at its start): of workers trying together with the
 * same G exactly one changes the row; for the others a refresh started
 * after G, which sees what they committed. Arguments: host, pid, name, G. */
const jsql WS_SLOT_NOW = {"worker.slot.now",
			  "UPDATE {N} SET refresh_at = {now}, refresh_gen = refresh_gen + 1, refresh_host = ?, refresh_pid = ? "
			  "WHERE name = ? AND refresh_gen = ?"};

/* worker.gen - the generation of the slot just taken (with who took it,
 * to be sure it is ours), or the generations a worker compares before
 * --until-empty lets it go. Argument: name. */
const jsql WS_GEN = {"worker.gen", "SELECT refresh_gen, refreshed_gen, refresh_host, refresh_pid FROM {N} WHERE name = ?"};

/* worker.refreshed - the refresh of generation G committed; never moves
 * the mark back (a slower refresh of an older generation ends later).
 * Arguments: G, name, G. */
const jsql WS_REFRESHED = {"worker.refreshed", "UPDATE {N} SET refreshed_gen = ? WHERE name = ? AND refreshed_gen < ?"};

/* worker.durations - the shared histogram. Argument: name. */
const jsql WS_DURATIONS = {"worker.durations", "SELECT " DCOLS " FROM {N} WHERE name = ?"};

/* worker.durations.add - a process adds the durations it counted since
 * its last flush (0 in the buckets it did not use): one UPDATE of the
 * table's row, relative to what is there, so concurrent flushes add up.
 * Arguments: the NBUCKET counts, name. */
const jsql WS_DURATIONS_ADD = {"worker.durations.add", "UPDATE {N} SET " DADDS " WHERE name = ?"};

/* worker.durations.halve - old makes count half as much: done by whoever
 * reads more than STATS_HALVE of them, so the estimate follows a table
 * whose makes got slower or faster. Two halvings at once only age it
 * faster. Argument: name. */
const jsql WS_DURATIONS_HALVE = {"worker.durations.halve", "UPDATE {N} SET " DHALVES " WHERE name = ?"};

const jsql *const WS_ALL[] = {&WS_CREATE, &WS_EXISTS, &WS_ADD, &WS_SLOT, &WS_SLOT_NOW, &WS_GEN, &WS_REFRESHED,
			      &WS_DURATIONS, &WS_DURATIONS_ADD, &WS_DURATIONS_HALVE, NULL};
