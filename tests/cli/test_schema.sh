#!/bin/bash
# test_schema.sh - the life of a schema: declare all or nothing (issue 12),
# concurrent first declares, declare never taking over a table djc did not
# declare, drop, cascading delete, alter (issue 18), and a drop racing a
# running populate. Tables djc did not declare are made, and what exists is
# looked at, with the backend's own client (sqlite3, psql, mariadb).
. "$ROOT/tests/cli/lib.sh"

# sqlx SQL [SCHEMA]: run SQL in this test's schema with the backend's client
sqlx() {
	local schema=${2:-$DJC_DATABASE_SCHEMA}
	case $DJC_BACKEND in
	sqlite)
		local f=${DJC_DATABASE_URL#sqlite:}
		[ -n "$schema" ] && f="${f%.db}.$schema.db"
		sqlite3 -batch "$f" "$1" ;;
	postgresql)
		psql "$DJC_DATABASE_URL" -qAt -v ON_ERROR_STOP=1 -c "SET search_path TO $schema; $1" ;;
	mysql)
		local u=${DJC_DATABASE_URL#mysql://} cred host port
		cred=${u%%@*}; u=${u#*@}; host=${u%%:*}; u=${u#*:}; port=${u%%/*}
		mariadb --no-defaults -h"$host" -P"$port" -u"${cred%%:*}" -p"${cred#*:}" -N -B "$schema" -e "$1" ;;
	esac
}

# sql_tables [SCHEMA]: every table (and view) of the schema, sorted
sql_tables() {
	case $DJC_BACKEND in
	sqlite) sqlx "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'" "$1" ;;
	postgresql) sqlx "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()" "$1" ;;
	mysql) sqlx "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()" "$1" ;;
	esac | LC_ALL=C sort
}

lines() { printf '%s\n' "$@"; }

# ---------------------------------------------- declare: all or nothing
# A later table of the file is refused by the server (more columns than any
# backend allows: SQLite 2000, PostgreSQL 1600, InnoDB 1017): nothing of the
# file may remain, not the tables before it, their jobs tables, or their
# stored definitions.
wide() {  # NAME: a manual table with 2001 columns
	printf '%s (manual)\n    w : int32\n    ---\n' "$1"
	for i in $(seq 1 2000); do printf '    c%d : int8\n' "$i"; done
	printf '\n'
}
cat > base.djc <<'P'
Subject (manual)
    subject_id : int32
    ---
    name : varchar(32)

Session (manual)
    -> Subject
    session : int16
    ---
    note = "" : varchar(64)

Stats (computed)
    -> Session
    ---
    mean : float64

Stats.Unit (part)
    unit : int16
    ---
    rate : float32
P
{ cat base.djc; printf '\n'; wide Wide; } > fails.djc

djc tables >/dev/null   # the schema exists (servers), nothing in it
EMPTY=$(sql_tables)
expect_rc 1 "a table the server refuses fails the declare" djc declare fails.djc
check "the server's refusal is the message" sh -c 'printf "%s" "$1" | grep -Eq "^djc: Wide: (sqlite|postgresql|mysql): .*(columns|Too many)"' _ "$ERR"
expect_out "nothing is declared after it" "" djc tables
expect_out "no SQL table of the file is left (no jobs table, no stored pipeline)" "$EMPTY" sql_tables

# someone else's object already has the name of Stats's jobs table (an
# index on SQLite and PostgreSQL, where indexes and tables share names; a
# view on MariaDB): the jobs table cannot be made, and the tables made
# before it in the same declare go too
case $DJC_BACKEND in
mysql) sqlx 'CREATE TABLE other (x int); CREATE VIEW `~~stats` AS SELECT x FROM other' ;;
*) sqlx 'CREATE TABLE other (x int); CREATE INDEX "~~stats" ON other (x)' ;;
esac
OTHER=$(sql_tables)
run djc declare base.djc
check "a jobs table the server refuses fails the declare" test "$RC" = 1 -o "$RC" = 2
expect_out "nothing is declared after it" "" djc tables
expect_out "nothing of the file is left, the other objects are untouched" "$OTHER" sql_tables
case $DJC_BACKEND in
mysql) sqlx 'DROP VIEW `~~stats`; DROP TABLE other' ;;
*) sqlx 'DROP TABLE other' ;;
esac

# a second file that fails leaves the first one's tables as they were
expect_rc 0 "the base pipeline declares" djc declare base.djc
BASE=$(sql_tables)
cat > grow.djc <<'P'
Probe (manual)
    probe_id : int32
    ---

Quality (computed)
    -> Session
    -> Probe
    ---
    q : float64
P
{ cat grow.djc; printf '\n'; wide Wide2; } > grow_fails.djc
expect_rc 1 "a failing second file" djc declare grow_fails.djc
expect_out "the declared tables are the first file's" "$(lines Subject Session Stats Stats.Unit)" djc tables
expect_out "the SQL tables are the first file's" "$BASE" sql_tables
expect_out "the second file declares once fixed" "created Probe (manual) as probe
created Quality (computed) as __quality
created Quality jobs table ~~quality" djc declare grow.djc

# ------------------------------------ declare never takes over a table
# A table of that name that djc did not declare (here: as a DataJoint
# schema has it, with other columns), a declared table whose SQL table was
# changed by hand, or one whose SQL table is gone: exit 2 naming the table
# and the difference, and nothing is created.
qid() { if [ "$DJC_BACKEND" = mysql ]; then printf '`%s`' "$1"; else printf '"%s"' "$1"; fi; }
A="${DJC_DATABASE_SCHEMA:-c}adopt"
djca() { "$DJC" --schema "$A" "$@"; }
djca tables >/dev/null
sqlx "CREATE TABLE session (subject_id int, session int, extra int, PRIMARY KEY (subject_id, session))" "$A"
BEFORE=$(sql_tables "$A")
expect_fail 2 "a same-named table djc did not declare is refused, named" \
	"^djc: base\.djc:6: table Session: a table named 'session' already exists in the database, and djc did not declare it" \
	djca declare base.djc
expect_out "nothing is declared" "" djca tables
expect_out "nothing is created" "$BEFORE" sql_tables "$A"
sqlx "DROP TABLE session; CREATE TABLE $(qid '~~stats') (subject_id int)" "$A"
expect_fail 2 "a same-named jobs table is refused too" \
	"^djc: base\.djc:12: table Stats: a table named '~~stats' already exists" djca declare base.djc
expect_out "nothing is declared" "" djca tables
sqlx "DROP TABLE $(qid '~~stats')" "$A"
expect_rc 0 "declared once the names are free" djca declare base.djc
sqlx "ALTER TABLE subject ADD COLUMN extra int" "$A"
expect_fail 2 "a declared table changed by hand is refused, with the difference" \
	"^djc: base\.djc:1: table Subject: its SQL table 'subject' differs from its stored definition \(column 'extra' is not in the definition\)" \
	djca declare base.djc
sqlx "ALTER TABLE subject DROP COLUMN extra" "$A"
sqlx "ALTER TABLE subject DROP COLUMN name" "$A"
expect_fail 2 "a declared table missing a column is refused" \
	"table Subject: its SQL table 'subject' differs from its stored definition \(column 'name' is missing\)" \
	djca declare base.djc
sqlx "ALTER TABLE subject ADD COLUMN name varchar(32)" "$A"
expect_rc 0 "whole again: declare is a no-op" djca declare base.djc
sqlx "DROP TABLE $(qid __stats__unit)" "$A"
expect_fail 2 "a declared table whose SQL table is gone is refused" \
	"^djc: base\.djc:17: table Stats\.Unit is declared, but its SQL table '__stats__unit' is missing from the database; 'djc drop Stats' removes its stored definition \(with its master's\)" \
	djca declare base.djc

# ------------------------------------------- concurrent first declares
# Workers on a cluster all start with declare: on a new schema, many at
# once must all succeed (they are serialised), every time.
NDECL=8
ROUNDS=4
bad=0
msgs=""
for r in $(seq 1 $ROUNDS); do
	pids=""
	for i in $(seq 1 $NDECL); do
		"$DJC" --schema "${DJC_DATABASE_SCHEMA:-c}race$r" declare base.djc >"out.$r.$i" 2>"err.$r.$i" &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p" || bad=$((bad + 1)); done
	msgs="$msgs$(cat err.$r.* 2>/dev/null)"
	created=$(cat out.$r.* | grep -c '^created Stats (computed)')
	[ "$created" = 1 ] || msgs="$msgs
round $r: Stats created $created times"
done
check "$((NDECL * ROUNDS)) concurrent first declares ($NDECL at a time): all succeed, each table made once" \
	test "$bad" = 0 -a -z "$msgs"
[ -n "$msgs" ] && printf '%s\n' "$msgs" | sort | uniq -c | head -5 >&2
expect_out "after the race the pipeline is whole" "$(lines Subject Session Stats Stats.Unit)" \
	"$DJC" --schema "${DJC_DATABASE_SCHEMA:-c}race1" tables

# A concurrent declare of a different definition is a clear conflict: one
# definition wins; every declare of it succeeds; every other one exits 2
# with the conflict message.
sed 's/name : varchar(32)/name : varchar(40)/' base.djc > base_b.djc
for r in 1 2 3; do
	s="${DJC_DATABASE_SCHEMA:-c}conf$r"
	pids=""
	for i in 1 2 3 4 5 6; do
		f=base.djc; [ $((i % 2)) = 0 ] && f=base_b.djc
		( "$DJC" --schema "$s" declare "$f" >/dev/null 2>"cerr.$r.$i"; echo "$? $f" > "crc.$r.$i" ) &
		pids="$pids $!"
	done
	wait $pids
	ok_files=$(cat crc.$r.* | awk '$1 == 0 {print $2}' | sort -u)
	conflicts=$(cat crc.$r.* | awk '$1 == 2 {print $2}' | sort -u)
	others=$(cat crc.$r.* | awk '$1 != 0 && $1 != 2' | grep -c .)
	nconf_msgs=$(cat cerr.$r.* | grep -c 'table Subject is already declared with a different definition')
	nconf=$(cat crc.$r.* | awk '$1 == 2' | grep -c .)
	check "round $r: one definition wins, every declare of it succeeds" test "$(printf '%s\n' "$ok_files" | grep -c .)" = 1 -a "$others" = 0
	check "round $r: each declare of the other definition is a conflict (exit 2, the conflict message)" \
		test "$nconf" = 3 -a "$nconf_msgs" = 3 -a "$conflicts" != "$ok_files"
done

finish
