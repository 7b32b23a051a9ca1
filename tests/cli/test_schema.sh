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
	sqlite)   # python3's sqlite3 module: the sqlite3 program is not one the suite needs
		local f=${DJC_DATABASE_URL#sqlite:}
		[ -n "$schema" ] && f="${f%.db}.$schema.db"
		python3 - "$f" "$1" <<'PY' ;;
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
sql = sys.argv[2]
if sql.lstrip().upper().startswith("SELECT"):
    for row in db.execute(sql):
        print("\t".join("" if v is None else str(v) for v in row))
else:
    db.executescript(sql)
PY
	postgresql)
		psql "$DJC_DATABASE_URL" -qAt -v ON_ERROR_STOP=1 -c "SET search_path TO $schema; $1" ;;
	mysql) mariadb_cli -N -B "$schema" -e "$1" ;;
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

case_all_or_nothing() {
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

# the schema exists (servers), nothing in it: a failed declare removes a
# schema that it created itself (test_badinput), not one that was there
case $DJC_BACKEND in
postgresql) psql "$DJC_DATABASE_URL" -qAt -v ON_ERROR_STOP=1 -c "CREATE SCHEMA IF NOT EXISTS $DJC_DATABASE_SCHEMA" ;;
mysql) mariadb_cli -e "CREATE DATABASE IF NOT EXISTS \`$DJC_DATABASE_SCHEMA\`" ;;
esac
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
}
tcase all_or_nothing

case_no_takeover() {
# ------------------------------------ declare never takes over a table
# A table of that name that djc did not declare (here: as a DataJoint
# schema has it, with other columns), a declared table whose SQL table was
# changed by hand, or one whose SQL table is gone: exit 2 naming the table
# and the difference, and nothing is created.
qid() { if [ "$DJC_BACKEND" = mysql ]; then printf '`%s`' "$1"; else printf '"%s"' "$1"; fi; }
A="${DJC_DATABASE_SCHEMA:-c}adopt"
djca() { "$DJC" --schema "$A" "$@"; }
# the schema exists before djc ever sees it (djc tables never creates one)
case $DJC_BACKEND in
postgresql) psql "$DJC_DATABASE_URL" -qAt -v ON_ERROR_STOP=1 -c "CREATE SCHEMA IF NOT EXISTS \"$A\"" ;;
mysql) sqlx "CREATE DATABASE IF NOT EXISTS \`$A\`" "$DJC_DATABASE_SCHEMA" ;;
esac
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
}
tcase no_takeover all_or_nothing

case_concurrent_declares() {
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

# on_tty ANSWER CMD...: CMD with a terminal for stdin, stdout and stderr;
# ANSWER and Enter are typed at its "[y/N]" prompt. Prints what the
# terminal showed; exits with CMD's status.
on_tty() {
	python3 - "$@" <<'PY'
import os, pty, select, sys
answer = sys.argv[1].encode() + b"\n"
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
out, sent = b"", False
while True:
    r, _, _ = select.select([fd], [], [], 120)
    if not r:
        break
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    out += data
    if not sent and b"[y/N]" in out:
        os.write(fd, answer)
        sent = True
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace").replace("\r", ""))
sys.exit(os.waitstatus_to_exitcode(st))
PY
}
}
tcase concurrent_declares no_takeover

case_data() {
# ---------------------------------------------------------------- data
# (in this test's own schema: Subject, Session, Stats, Stats.Unit from
# base.djc, Probe and Quality from grow.djc)
cat > mk_stats.sh <<'M'
#!/bin/sh
# mean = session, two units
s=$DJC_KEY_session
echo "{\"mean\": $s}"
echo "{\"_part\": \"Unit\", \"unit\": 1, \"rate\": 0.5}"
echo "{\"_part\": \"Unit\", \"unit\": 2, \"rate\": 1.5}"
M
cat > mk_q.sh <<'M'
#!/bin/sh
echo '{"q": 1}'
M
chmod +x mk_stats.sh mk_q.sh
printf '{"subject_id": %d, "name": "s%d"}\n' 1 1 2 2 3 3 | djc insert Subject >/dev/null
for s in 1 2 3; do for n in 1 2; do printf '{"subject_id": %d, "session": %d}\n' $s $n; done; done | djc insert Session >/dev/null
printf '{"probe_id": 1}\n{"probe_id": 2}\n' | djc insert Probe >/dev/null
expect_rc 0 "populate Stats" djc populate Stats --reserve-jobs --make ./mk_stats.sh
expect_rc 0 "populate Quality" djc populate Quality --reserve-jobs --make ./mk_q.sh
expect_out "6 Stats rows" 6 count Stats
expect_out "12 Quality rows" 12 count Quality
}
tcase data concurrent_declares

case_delete() {
# -------------------------------------------------------------- delete
printf '{"subject_id": 9, "name": "s9"}\n' | djc insert Subject >/dev/null
expect_out "a delete that touches one table needs no confirmation (old output)" "deleted 1 row from Subject" \
	djc delete Subject --where '{"subject_id": 9}'
expect_out "--dry-run: the counts per table, dependents first" "would delete 2 rows from Quality
would delete 2 rows from Stats.Unit
would delete 1 row from Stats
would delete 1 row from Session" djc delete Session --where '{"subject_id": 1, "session": 1}' --dry-run
expect_out "--dry-run deleted nothing" 6 count Session
expect_fail 2 "a cascading delete without --yes is refused off a terminal" \
	"^djc: delete from Session: 5 rows of other tables would go too; run it with --yes" \
	djc delete Session --where '{"subject_id": 1, "session": 1}'
check "the refusal listed the counts first" test "$(printf '%s\n' "$OUT" | grep -c '^would delete')" = 4
expect_out "nothing deleted" "6 12" sh -c "echo \$($DJC fetch Session --format json | grep -c .) \$($DJC fetch Quality --format json | grep -c .)"
expect_fail 2 "--no-cascade keeps the old refusal, naming the first table whose rows reference them" \
	'^djc: cannot delete from Session: 1 row of Stats references them \(delete those first, or delete with cascade\)$' \
	djc delete Session --where '{"subject_id": 1, "session": 1}' --no-cascade
expect_fail 2 "rows of a part table go only with their master's" \
	"^djc: cannot delete 3 rows of part table Stats\.Unit without their master rows in Stats \(DataJoint's part integrity\)" \
	djc delete Stats.Unit --where '{"unit": 1, "session": 1}'
run on_tty n "$DJC" delete Session --where '{"subject_id": 1, "session": 1}'
check "on a terminal it asks; 'n' cancels (exit 1)" test "$RC" = 1
check "the terminal showed the counts and the question" sh -c 'printf "%s" "$1" | grep -q "would delete 2 rows from Quality" && printf "%s" "$1" | grep -q "Delete these rows? \[y/N\]"' _ "$OUT"
expect_out "cancelled: nothing deleted" 6 count Session
run on_tty y "$DJC" delete Session --where '{"subject_id": 1, "session": 1}'
check "'y' deletes (exit 0)" test "$RC" = 0
check "and says what went" sh -c 'printf "%s" "$1" | grep -q "^deleted 2 rows from Quality"' _ "$OUT"
expect_out "Session 1/1 is gone with what depends on it" "5 5 10 10" sh -c \
	"echo \$($DJC fetch Session --format json | grep -c .) \$($DJC fetch Stats --format json | grep -c .) \$($DJC fetch Stats.Unit --format json | grep -c .) \$($DJC fetch Quality --format json | grep -c .)"
# jobs: a pending job of a key whose upstream rows go is deleted with
# them; refresh adds back exactly the keys whose upstream rows exist
printf '{"subject_id": 3, "session": 3}\n' | djc insert Session >/dev/null
expect_out "one pending Stats job for 3/3" '{"table":"Stats","added":1,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Stats --json
expect_out "delete subject 3 with --yes: rows and the job go" "deleted 4 rows from Quality
deleted 4 rows from Stats.Unit
deleted 1 job of Stats
deleted 2 rows from Stats
deleted 3 rows from Session
deleted 1 row from Subject" djc delete Subject --where '{"subject_id": 3}' --yes
expect_out "no job is left for the gone keys" "Stats jobs: pending 0, reserved 0, success 0, error 0, ignore 0, total 0" djc jobs Stats
expect_out "refresh adds nothing: no upstream row is left for them" '{"table":"Stats","added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Stats --json

# The DataJoint way when computed results must be made again: delete them
# (their dependents go too) and populate; the keys come back, as their
# upstream rows are still there
expect_out "delete the Stats of subject 2" "deleted 4 rows from Stats.Unit
deleted 2 rows from Stats" djc delete Stats --where '{"subject_id": 2}' --yes
expect_out "refresh re-adds exactly those keys" '{"table":"Stats","added":2,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Stats --json
expect_rc 0 "populate again" djc populate Stats --reserve-jobs --make ./mk_stats.sh
expect_rc 0 "and downstream" djc populate Quality --reserve-jobs --make ./mk_q.sh
expect_out "all made again" "3 6 6" sh -c \
	"echo \$($DJC fetch Stats --format json | grep -c .) \$($DJC fetch Stats.Unit --format json | grep -c .) \$($DJC fetch Quality --format json | grep -c .)"
# with jobs.keep_completed the success jobs of deleted rows are re-pended
DJC_JOBS_KEEP_COMPLETED=true "$DJC" delete Stats --where '{"subject_id": 2, "session": 1}' --yes >/dev/null
printf '{"subject_id": 2, "session": 3}\n' | djc insert Session >/dev/null
DJC_JOBS_KEEP_COMPLETED=true "$DJC" populate Stats --reserve-jobs --make ./mk_stats.sh >/dev/null
expect_out "keep_completed: the made jobs are kept as success" "Stats jobs: pending 0, reserved 0, success 2, error 0, ignore 0, total 2" djc jobs Stats
DJC_JOBS_KEEP_COMPLETED=true "$DJC" delete Stats --where '{"session": 3}' --yes >/dev/null
expect_out "keep_completed: refresh re-pends the deleted row's success job" '{"table":"Stats","added":0,"removed":0,"orphaned":0,"re_pended":1}' \
	env DJC_JOBS_KEEP_COMPLETED=true "$DJC" jobs refresh Stats --json
expect_fail 2 "delete: unknown table" '^djc: unknown table "Nope"' djc delete Nope --yes
}
tcase delete data

case_alter() {
# ---------------------------------------------------------------- alter
cp base.djc alter.djc   # the base pipeline, changed below
sed -e 's/    name : varchar(32)/    full_name : varchar(48)    # {name} as written\n    weight = null : float32\n    sex = "U" : varchar(1)/' \
    -e 's/    note = "" : varchar(64)/    rig = 0 : int16/' alter.djc > alter2.djc
expect_out "alter --dry-run lists the changes" "would alter Subject: rename name to full_name
would alter Subject: widen full_name from varchar(32) to varchar(48)
would alter Subject: comment of full_name
would alter Subject: add weight = null : float32
would alter Subject: add sex = U : varchar(1)
would alter Session: drop note
would alter Session: add rig = 0 : int16" djc alter alter2.djc --dry-run
expect_fail 2 "--dry-run changed nothing" "already declared with a different definition" djc declare alter2.djc
run djc alter alter2.djc
check "alter: exit 0, one line per change" test "$RC" = 0 -a "$(printf '%s\n' "$OUT" | grep -c '^altered ')" = 7
expect_out "the rows have the new columns, with the defaults" '{"subject_id":1,"full_name":"s1","weight":null,"sex":"U"}' \
	djc fetch Subject --where '{"subject_id": 1}' --format json
expect_out "declare of the altered file: every table exists" "exists  Subject (manual) as subject
exists  Session (manual) as session
exists  Stats (computed) as __stats
exists  Stats.Unit (part) as __stats__unit" djc declare alter2.djc
expect_out "alter again: nothing to do" "nothing to alter: the declared tables are as alter2.djc defines them" djc alter alter2.djc
sed 's/    session : int16/    session : int32/' alter2.djc > alter3.djc
expect_fail 2 "a primary key change is refused, saying what to do" \
	"^djc: alter3\.djc:[0-9]+: table Session: the primary key changes from .* to .*; alter changes secondary attributes only; to change this, 'djc drop Session'" \
	djc alter alter3.djc
expect_fail 2 "alter of a missing file" '^djc: cannot read nope\.djc' djc alter nope.djc
}
tcase alter delete

case_drop() {
# ----------------------------------------------------------------- drop
expect_fail 2 "drop without --yes is refused off a terminal" \
	'^djc: drop Stats: not confirmed; run it with --yes to drop the 4 tables listed' djc drop Stats
check "the refusal listed the tables with their row counts" sh -c 'printf "%s" "$1" | grep -q "^would drop Stats: __stats (3 rows)$"' _ "$OUT"
expect_out "drop --dry-run lists every table that depends on it, dependents first" "would drop Quality: ~~quality (0 rows)
would drop Quality: ~~quality__history (0 rows)
would drop Quality: __quality (6 rows)
would drop Stats.Unit: __stats__unit (6 rows)
would drop Stats: ~~stats (2 rows)
would drop Stats: ~~stats__history (2 rows)
would drop Stats: __stats (3 rows)
would drop Session: session (4 rows)" djc drop Session --dry-run
expect_fail 2 "a part table is not dropped alone" '^djc: Stats\.Unit is a part table: it is dropped with its master \(djc drop Stats\)' \
	djc drop Stats.Unit --yes
run on_tty no "$DJC" drop Stats
check "on a terminal it asks; 'no' cancels (exit 1)" test "$RC" = 1
expect_out "nothing dropped" "$(lines Subject Session Stats Stats.Unit Probe Quality)" djc tables
run djc drop Stats --yes
check "drop --yes" test "$RC" = 0 -a "$(printf '%s\n' "$OUT" | grep -c '^dropped ')" = 4
expect_out "the stored pipeline lost them" "$(lines Subject Session Probe Quality)" djc tables
check "and so did the database" test -z "$(sql_tables | grep stats)"
expect_fail 2 "a dropped table is unknown" '^djc: unknown table "Stats"' djc fetch Stats
# the issue's case: a table under development is declared anew, changed
sed 's/    mean : float64/    mean : float64\n    sd = null : float64/' alter2.djc > base2.djc
expect_out "declared anew with another definition" "exists  Subject (manual) as subject
exists  Session (manual) as session
created Stats (computed) as __stats
created Stats.Unit (part) as __stats__unit
created Stats jobs table ~~stats" djc declare base2.djc
expect_rc 0 "and populated" djc populate Stats --reserve-jobs --make ./mk_stats.sh
expect_out "with every key" 4 count Stats
# a table dropped by hand: djc drop clears what is stored of it
sqlx "DROP TABLE $(qid __stats__unit); DROP TABLE $(qid __stats)"
expect_out "a table gone by hand is dropped from the stored pipeline" "dropped Stats.Unit: __stats__unit (missing)
dropped Stats: ~~stats (0 rows)
dropped Stats: ~~stats__history (0 rows)
dropped Stats: __stats (missing)" djc drop Stats --yes
expect_rc 0 "then declared again" djc declare base2.djc
run on_tty y "$DJC" drop Stats
check "drop on a terminal, 'y': dropped" test "$RC" = 0 -a "$(printf '%s\n' "$OUT" | grep -c '^dropped ')" = 4
expect_out "gone" "$(lines Subject Session Probe Quality)" djc tables
}
tcase drop alter

case_how_made() {
# ------------------------------------- how a table is made (issue 36, 11)
# make, make_serve and timeout lines say how the rows are made, not what
# the table is (in DataJoint, make is code): declare takes a change of
# them without an alter, stores it under the schema-change lock, and says
# so; alter --dry-run lists it as what it is. key_source is the table's
# definition (which keys it holds): declare refuses a change of it, naming
# it and alter.
H="${DJC_DATABASE_SCHEMA:-c}how"
djch() { "$DJC" --schema "$H" "$@"; }
printf '#!/bin/sh\necho "{\\"v\\": 1}"\n' > mk_a.sh
printf '#!/bin/sh\necho "{\\"v\\": 2}"\n' > mk_b.sh
chmod +x mk_a.sh mk_b.sh
cat > how.djc <<'P'
Hs (manual)
    id : int32
    ---

Hc (computed)
    -> Hs
    ---
    v : int64
    make = ./mk_a.sh
    timeout = 1h
P
sed -e 's/mk_a/mk_b/' -e 's/timeout = 1h/timeout = 2h/' how.djc > how2.djc
expect_rc 0 "how: declare" djch declare how.djc
printf '{"id": 1}\n{"id": 2}\n' | djch insert Hs >/dev/null
expect_out "alter --dry-run lists a make and a timeout change as what they are" "would alter Hc: make: ./mk_a.sh -> ./mk_b.sh
would alter Hc: timeout: 1h -> 2h" djch alter how2.djc --dry-run
expect_out "declare takes a changed make line, no alter needed, and says so" "exists  Hs (manual) as hs
updated Hc (computed) as __hc: make: ./mk_a.sh -> ./mk_b.sh, timeout: 1h -> 2h" djch declare how2.djc
expect_out "populate runs the new make" "Hc: 2 made, 0 errors, 0 skipped" djch populate Hc --reserve-jobs
expect_out "... its rows" "[2,2]" sh -c '"$DJC" --schema "$1" fetch Hc --format json | jq -s -c "map(.v)"' _ "$H"
expect_out "declare again: nothing to update" "exists  Hs (manual) as hs
exists  Hc (computed) as __hc" djch declare how2.djc
expect_out "alter: nothing to do" "nothing to alter: the declared tables are as how2.djc defines them" djch alter how2.djc
# many workers declaring a changed make line at once: one at a time, the
# first updates it, the others find it done, all succeed
for r in 1 2 3; do
	f=how.djc; [ $((r % 2)) = 0 ] && f=how2.djc
	pids=""
	for i in $(seq 1 $NDECL); do
		djch declare "$f" >"hout.$r.$i" 2>"herr.$r.$i" &
		pids="$pids $!"
	done
	hbad=0
	for p in $pids; do wait "$p" || hbad=$((hbad + 1)); done
	check "round $r: $NDECL concurrent declares of a changed make line ($f) all succeed" test "$hbad" = 0 -a -z "$(cat herr.$r.*)"
	check "round $r: one updated it, the others found it done" \
		test "$(cat hout.$r.* | grep -c '^updated Hc (computed) as __hc: make: ')/$(cat hout.$r.* | grep -c '^exists  Hc ')" = "1/$((NDECL - 1))"
done
expect_out "the stored make line is the last file's" "nothing to alter: the declared tables are as how.djc defines them" djch alter how.djc
sed 's/    v : int64/    v : int64\n    key_source = {"id": 1}/' how.djc > how3.djc
expect_fail 2 "a key_source change is one of the definition: declare names it and alter" \
	"^djc: how3\.djc:5: table Hc is already declared with a different definition \(key_source: none -> \{\"id\": 1\}\); 'djc alter how3\.djc' makes the change" \
	djch declare how3.djc
expect_out "alter makes it" 'altered Hc: key_source: none -> {"id": 1}' djch alter how3.djc
expect_out "then declare finds it declared" "exists  Hs (manual) as hs
exists  Hc (computed) as __hc" djch declare how3.djc
}
tcase how_made drop

case_own_key() {
# ------------------------- a key attribute of its own (issue 36, 15)
# DataJoint 2.x refuses a computed or imported table with a primary key
# attribute that comes from no parent unless
# jobs.allow_new_pk_fields_in_computed_tables is set; so does djc, except
# for a table whose key_source line names the tables a job's key comes
# from.
K="${DJC_DATABASE_SCHEMA:-c}ownkey"
djck() { "$DJC" --schema "$K" "$@"; }
cat > own.djc <<'P'
Session (manual)
    session_id : int32
    ---

Seg (computed)
    -> Session
    seg_id : int32
    ---
    v : int64
P
expect_fail 2 "a computed table with a key attribute of its own is refused, as in DataJoint" \
	"^djc: own\.djc:5: computed table Seg has primary key attribute seg_id from no parent: make is called once per key of its parents, so one job would make several rows; .*jobs\.allow_new_pk_fields_in_computed_tables set to true" \
	djck declare own.djc
expect_out "with the setting it is declared (and nothing was before)" "created Session (manual) as session
created Seg (computed) as __seg
created Seg jobs table ~~seg" env DJC_JOBS_ALLOW_NEW_PK_FIELDS_IN_COMPUTED_TABLES=true "$DJC" --schema "$K" declare own.djc
expect_out "declared, it is declared again without the setting" "exists  Session (manual) as session
exists  Seg (computed) as __seg" djck declare own.djc
printf '#!/bin/sh\nfor s in 1 2 3; do echo "{\\"seg_id\\": $s, \\"v\\": $s}"; done\n' > mk_seg.sh
chmod +x mk_seg.sh
printf '{"session_id": 1}\n{"session_id": 2}\n' | djck insert Session >/dev/null
expect_out "one job per parent key, several rows each" "Seg: 2 made, 0 errors, 0 skipped" djck populate Seg --reserve-jobs --make ./mk_seg.sh
expect_out "... all rows made" 6 sh -c '"$DJC" --schema "$1" fetch Seg --format json | grep -c .' _ "$K"
printf '\nSeg2 (computed)\n    -> Session\n    seg_id : int32\n    ---\n    v : int64\n    key_source = Session\n' >> own.djc
expect_out "a key_source line naming its tables needs no setting" "created Seg2 (computed) as __seg2" sh -c '"$DJC" --schema "$1" declare own.djc | grep "^created Seg2 ("' _ "$K"
}
tcase own_key how_made

case_long_names() {
# --------------------------------------- long table names (issue 36, 13)
# Any name DataJoint takes (a SQL name of up to 64 characters; PostgreSQL
# keeps 63) works: the names djc derives from it (jobs table, history,
# indexes, foreign keys) are shortened to 63 by the fixed rule of
# docs/schema.md, which derived() below implements again; a longer name
# is "too long".
derived() {  # STEM SUFFIX ...: the name derived from each pair, one a line
	# (one python3 for every name: one per name was 80 ms of CPU each)
	python3 - "$@" <<'PY'
import sys
a = sys.argv[1:]
for stem, suffix in zip(a[0::2], a[1::2]):
    if len(stem) + len(suffix) <= 63:
        print(stem + suffix)
    else:
        h = 0xcbf29ce484222325
        for ch in (stem + suffix).encode():
            h = ((h ^ ch) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
        print("%s_%09d%s" % (stem[:63 - len(suffix) - 10], h % 1000000000, suffix))
PY
}
L="${DJC_DATABASE_SCHEMA:-c}long"
djcl() { "$DJC" --schema "$L" "$@"; }
long_tables() { sql_tables "$L" | grep -e lxx; }
printf '#!/bin/sh\necho "{\\"v\\": $((DJC_KEY_id * 10))}"\n' > mk_long.sh
chmod +x mk_long.sh
printf 'Ls (manual)\n    id : int32\n    ---\n' > ls.djc
expect_rc 0 "long names: the upstream table" djcl declare ls.djc
printf '{"id": 1}\n{"id": 2}\n' | djcl insert Ls >/dev/null
# the jobs and history tables' names of each length's table, in order
pairs=()
for n in 40 50 60 63 64; do
	sql=__l$(printf 'x%.0s' $(seq 4 $n))
	pairs+=("~~${sql#__}" "" "~~${sql#__}" __history)
done
mapfile -t names < <(derived "${pairs[@]}")
k=0
for n in 40 50 60 63 64; do
	name=L$(printf 'x%.0s' $(seq 4 $n))   # SQL name __lxx...: n characters
	sql=__l$(printf 'x%.0s' $(seq 4 $n))
	jobs=${names[k]} hist=${names[k + 1]}
	k=$((k + 2))
	printf 'Ls (manual)\n    id : int32\n    ---\n\n%s (computed)\n    -> Ls\n    ---\n    v : int64\n    index(v)\n' "$name" > "l$n.djc"
	if [ "$n" = 64 ] && [ "$DJC_BACKEND" = postgresql ]; then
		expect_fail 2 "$n: too long for PostgreSQL, which keeps 63" \
			"^djc: l64\.djc:5: table name $name is too long for postgresql: its SQL name '$sql' has 64 characters, more than the 63 it keeps\$" \
			djcl declare "l$n.djc"
		continue
	fi
	expect_out "$n: declare" "exists  Ls (manual) as ls
created $name (computed) as $sql
created $name jobs table $jobs" djcl declare "l$n.djc"
	expect_out "$n: populate --reserve-jobs" "$name: 2 made, 0 errors, 0 skipped" \
		env DJC_JOBS_KEEP_COMPLETED=true "$DJC" --schema "$L" populate "$name" --reserve-jobs --make ./mk_long.sh
	expect_out "$n: the jobs listing" "$name jobs: pending 0, reserved 0, success 2, error 0, ignore 0, total 2" djcl jobs "$name"
	expect_out "$n: the rows" "[10,20]" sh -c '"$DJC" --schema "$1" fetch "$2" --format json | jq -s -c "map(.v)"' _ "$L" "$name"
	expect_out "$n: the SQL tables have the derived names" "$(lines "$jobs" "$hist" "$sql" | LC_ALL=C sort)" long_tables
	expect_out "$n: drop" "dropped $name: $jobs (2 rows)
dropped $name: $hist (2 rows)
dropped $name: $sql (2 rows)" djcl drop "$name" --yes
	check "$n: no SQL table of it is left" test -z "$(long_tables)"
done
xl=L$(printf 'x%.0s' $(seq 1 62))
printf 'Ls (manual)\n    id : int32\n    ---\n\n%s (computed)\n    -> Ls\n    ---\n    v : int64\n' "$xl" > l65.djc
expect_fail 2 "65: too long, on every backend" "^djc: l65\.djc:5: table name $xl is too long: its SQL name '__l$(printf 'x%.0s' $(seq 1 62))' has 65 characters, more than the 64 DataJoint allows\$" \
	djcl declare l65.djc
}
tcase long_names own_key

case_drop_race() {
# ------------------------------------------ drop racing a running populate
# Workers are making Stats (two processes, short makes) when Session is
# dropped with everything below it. The drop waits for the transactions
# running on its tables or fails cleanly; either way nothing is left half
# dropped, the workers stop (with an error, as their tables are gone), and
# the pipeline can be declared and populated again.
cat > mk_slow.sh <<'M'
#!/bin/sh
sleep 0.05
echo "{\"mean\": $DJC_KEY_session}"
echo "{\"_part\": \"Unit\", \"unit\": 1, \"rate\": 0.5}"
M
chmod +x mk_slow.sh
for r in 1 2 3; do
	S="${DJC_DATABASE_SCHEMA:-c}drop$r"
	djcr() { "$DJC" --schema "$S" "$@"; }
	djcr declare base.djc >/dev/null
	printf '{"subject_id": 1, "name": "a"}\n' | djcr insert Subject >/dev/null
	for n in $(seq 1 60); do printf '{"subject_id": 1, "session": %d}\n' "$n"; done | djcr insert Session >/dev/null
	djcr populate Stats --reserve-jobs --processes 2 --suppress-errors --make ./mk_slow.sh >"pop.$r" 2>&1 &
	pop=$!
	# an event, not a time: wait until the workers have committed some rows
	for i in $(seq 1 3000); do
		n=$(djcr fetch Stats --format json 2>/dev/null | grep -c .)
		[ "${n:-0}" -ge 4 ] && break
		nap 0.02
	done
	run djcr drop Session --yes
	drc=$RC
	derr=$ERR
	wait "$pop"
	prc=$?
	check "round $r: the populate ended by itself (exit 0 or 1, not a signal)" test "$prc" -le 1
	if [ "$drc" = 0 ]; then
		expect_out "round $r: dropped: the stored pipeline keeps only Subject" "Subject" djcr tables
		check "round $r: dropped: no SQL table of them is left" test -z "$(sql_tables "$S" | grep -E '^(session|__stats|__stats__unit|~~stats)$')"
	else
		check "round $r: the drop failed cleanly (one line)" test "$(printf '%s\n' "$derr" | grep -c .)" = 1
		expect_out "round $r: not dropped: all still declared" "$(lines Subject Session Stats Stats.Unit)" djcr tables
		check "round $r: not dropped: every SQL table is there" test "$(sql_tables "$S" | grep -cE '^(session|__stats|__stats__unit|~~stats)$')" = 4
		djcr drop Session --yes >/dev/null
	fi
	expect_rc 0 "round $r: declared again" djcr declare base.djc
	for n in $(seq 1 5); do printf '{"subject_id": 1, "session": %d}\n' "$n"; done | djcr insert Session >/dev/null
	expect_rc 0 "round $r: populated again" djcr populate Stats --reserve-jobs --make ./mk_slow.sh
	cnt_r() { djcr fetch "$1" --format json | grep -c .; }
	expect_out "round $r: every key made" 5 cnt_r Stats
done
}
tcase drop_race long_names

finish
