#!/bin/bash
# test_faults.sh - faults around djc (issue 8, docs/bad-input.md): make
# programs that print garbage, gigabytes or huge stderr, lost database
# connections in the middle of a populate (killed from the server side), and
# a full disk under SQLite. Nothing is half-written, no reservation is left
# stuck, every failure is reported on one line.
. "$ROOT/tests/cli/lib.sh"
py() { python3 -c "$@"; }
cnt() { count "$@"; return 0; }
# cnt_keys TABLE ATTRS: the number of TABLE's rows, fetched as ATTRS (its
# key) alone, counted as count counts them
cnt_keys() {
	local rows i n=0
	"$DJC" fetch "$1" --attrs "$2" --format json > cnt_keys.json
	mapfile -t rows < cnt_keys.json
	for i in "${!rows[@]}"; do [[ ${rows[i]} ]] && ((++n)); done
	echo "$n"
}

cat > p.djc <<'P'
Src (manual)
    id : int32
    ---
    pad = '' : varchar(4000)

Out (computed)
    -> Src
    ---
    v : int64

Out.Item (part)
    item : int32
    ---
    w : varchar(4000)
P
expect_rc 0 "declare" djc declare p.djc
seq 1 12 | sed 's/.*/{"id": &}/' > src.jsonl
expect_out "insert 12 keys" "inserted 12 rows into Src" djc insert Src src.jsonl

case_make_output() {
# ------------------------------------------------- make output faults
# garbage DESC PATTERN PROGRAM...: one key made by PROGRAM fails, nothing
# stored. Its populate's JSON report is kept in garbage.N.json, and
# garbage_messages checks every kept report's first error message against
# its PATTERN with one python3 for all of them (one per call was 80 ms of
# CPU each, most of this case's own)
GARBAGE_DESC=() GARBAGE_PAT=() GARBAGE_RC=() GARBAGE_ERR=()
garbage() {
	local desc=$1 pat=$2 i=${#GARBAGE_DESC[@]}; shift 2
	run djc populate Out --reserve-jobs --max-calls 1 --json --make "$@"
	printf '%s' "$OUT" > "garbage.$i.json"
	GARBAGE_DESC+=("$desc") GARBAGE_PAT+=("$pat") GARBAGE_RC+=("$RC") GARBAGE_ERR+=("$ERR")
	local n
	n=$(cnt Out)
	check "$desc: nothing stored" test "$n" = 0
	djc jobs clear Out --status error >/dev/null
}
garbage_messages() {  # checks the reports garbage kept: exit 1, the message matching
	local i msg
	py 'import json, sys
for i in range(int(sys.argv[1])):
    try:
        d = json.load(open("garbage.%d.json" % i, encoding="utf-8", errors="surrogateescape"))
        msg = d["errors"][0]["message"] if d["errors"] else ""
    except Exception:
        msg = ""
    with open("garbage.%d.msg" % i, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(msg + "\n")' "${#GARBAGE_DESC[@]}" 2>/dev/null
	for i in "${!GARBAGE_DESC[@]}"; do
		msg=$(< "garbage.$i.msg")
		if [ "${GARBAGE_RC[i]}" = 1 ] && grep -Eq -- "${GARBAGE_PAT[i]}" "garbage.$i.msg"; then _report ok "${GARBAGE_DESC[i]}"
		else _report fail "${GARBAGE_DESC[i]} (exit ${GARBAGE_RC[i]}; message '$msg'; wanted ${GARBAGE_PAT[i]})" "OUT=$(< "garbage.$i.json")
ERR=${GARBAGE_ERR[i]}"; fi
	done
	GARBAGE_DESC=() GARBAGE_PAT=() GARBAGE_RC=() GARBAGE_ERR=()
}
garbage "binary output" "UTF-8" sh -c 'printf "\377\376\000\001garbage"'
garbage "text that is not JSON" "malformed JSON" sh -c 'echo hello world'
garbage "a JSON array instead of an object" "object" sh -c 'echo "[1, 2, 3]"'
garbage "a row then garbage" "line 2" sh -c 'echo "{\"v\": 1}"; echo "{oops"'
garbage "an unknown attribute" "unknown attribute" sh -c 'echo "{\"v\": 1, \"x; DROP TABLE src\": 2}"'
garbage "a row for another key" "another key" sh -c 'echo "{\"id\": 999, \"v\": 1}"'
garbage "a value of the wrong type" "expects an integer" sh -c 'echo "{\"v\": \"ten\"}"'
garbage "an out-of-range value" "out of range|too big" sh -c 'echo "{\"v\": 9223372036854775808}"'
garbage "NaN" "malformed JSON|NaN" sh -c 'echo "{\"v\": NaN}"'
garbage "a real beyond a double (jansson's own message, not the uint64 hint)" "^make output line 1: malformed JSON \(column [0-9]+\): real number overflow" sh -c 'echo "{\"v\": 1e400}"'
garbage "a duplicate attribute" "duplicate" sh -c 'echo "{\"v\": 1, \"v\": 2}"'
garbage "JSON nested too deep" "malformed|deep|nest" sh -c 'python3 -c "print(\"{\\\"v\\\": \" + \"[\" * 100000 + \"]\" * 100000 + \"}\")"'
garbage "a part row with a bad _part" "_part" sh -c 'echo "{\"v\": 1}"; echo "{\"_part\": \"Src\", \"item\": 1, \"w\": \"x\"}"'
garbage "a part row violating its heading (whole key rolled back)" "Item|w|attribute" sh -c 'echo "{\"v\": 1}"; echo "{\"_part\": \"Item\", \"item\": 1}"'
garbage "no row at all" "no row" true
garbage "a signal" "signal" sh -c 'kill -SEGV $$'
garbage "a program that does not exist" "cannot run" ./no-such-make
# the output limit (jobs.max_output, in MiB): the default of 256 MiB once
# (which backend holds the jobs does not matter to it: SQLite), a lowered
# one on every backend
if [ "$DJC_BACKEND" = sqlite ]; then
	garbage "more than 256 MiB of output is stopped" "more than 256 MiB to stdout" sh -c 'exec head -c 300000000 /dev/zero'
fi
DJC_JOBS_MAX_OUTPUT=4 garbage "more than jobs.max_output (4 MiB) is stopped" "more than 4 MiB to stdout" \
	sh -c 'exec head -c 5000000 /dev/zero'
expect_fail 2 "jobs.max_output is checked" "DJC_JOBS_MAX_OUTPUT.*MiB from 1 to 65536" \
	env DJC_JOBS_MAX_OUTPUT=0 "$DJC" populate Out --make true
# a large but legal output is taken whole: 20000 part rows of 1000 chars (20 MB)
cat > mkbig.sh <<'M'
#!/bin/sh
python3 -c '
import json, os
print(json.dumps({"v": 1}))
w = "x" * 1000
for i in range(20000): print(json.dumps({"_part": "Item", "item": i, "w": w}))
'
M
chmod +x mkbig.sh
DJC_JOBS_MAX_OUTPUT=16 garbage "the 20 MB output over a jobs.max_output of 16 MiB fails" "more than 16 MiB to stdout" ./mkbig.sh
garbage_messages
expect_out "a 20 MB make output is inserted" "Out: 1 made, 0 errors, 0 skipped" djc populate Out --max-calls 1 --make ./mkbig.sh
# (counted on their key attributes: the 20 MB of w once more through djc
# fetch and the shell, for a count, were a fifth of this case's CPU)
expect_out "...all 20000 part rows" "20000" cnt_keys Out.Item id,item
# stderr of any size: the message is one bounded line, the stack the tail
cat > mkerr.sh <<'M'
#!/bin/sh
python3 -c '
import sys
sys.stderr.write(("e" * 999 + "\n") * 10000)
sys.stderr.write("Z" * 100000 + "\n")
sys.stderr.write("the last line\n")
sys.exit(4)'
M
chmod +x mkerr.sh
run djc populate Out --reserve-jobs --max-calls 1 --make ./mkerr.sh
check "10 MB of stderr: populate exits 1" test "$RC" = 1
run djc jobs Out --status error --json
check "the error message is the last stderr line" sh -c "printf '%s' \"\$1\" | grep -q 'make exited with status 4: the last line'" _ "$OUT"
pycheck "message and stack are bounded" 'import json,sys
r=json.loads(sys.argv[1])["jobs"][0]
sys.exit(0 if len(r["error_message"]) <= 2047 and 0 < len(r.get("error_stack") or "x") <= 65536 else 1)' "$OUT"
djc jobs clear Out --status error >/dev/null
cat > mkmsg.sh <<'M'
#!/bin/sh
python3 -c 'import sys; sys.stderr.write("\u00e9" * 5000 + "\xff"); sys.exit(2)' 2>&1 >/dev/null | cat >&2
printf "\377\376 invalid UTF-8 on stderr\n" >&2
exit 2
M
chmod +x mkmsg.sh
run djc populate Out --reserve-jobs --max-calls 1 --json --make ./mkmsg.sh
pycheck "stderr with invalid UTF-8 is recorded (exit 1, valid JSON)" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["error_count"] == 1 else 1)' "$OUT"
run djc jobs Out --status error --json
pycheck "jobs --json stays valid JSON" 'import json,sys; json.loads(sys.argv[1])["jobs"]' "$OUT"
djc jobs clear Out --status error >/dev/null
expect_out "after all those faults only the good key is stored" "1" cnt Out
expect_out "no job is left reserved" "Out jobs: pending 11, reserved 0, success 0, error 0, ignore 0, total 11" djc jobs Out
}
tcase make_output

case_lost_connections() {
# ------------------------------------------------- lost connections
killconns() {  # terminate every other client connection of this file's database (PostgreSQL) or schema (MariaDB)
	case $DJC_BACKEND in
	postgresql)
		psql "$DJC_DATABASE_URL" -qAt -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE pid <> pg_backend_pid() AND datname = current_database() AND backend_type = 'client backend'" 2>&1 ;;
	mysql)
		local ids
		ids=$(mariadb_cli -N -e "SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID()
			AND user = SUBSTRING_INDEX(USER(), '@', 1) AND command <> 'Daemon'
			AND db = '$DJC_DATABASE_SCHEMA'" 2>&1)
		for id in $ids; do
			mariadb_cli -e "KILL CONNECTION $id" 2>/dev/null
		done
		echo "$ids" | grep -c . ;;
	esac
}
if [ "$DJC_BACKEND" != sqlite ]; then
	cat > mkslow.sh <<'M'
#!/bin/sh
sleep 0.4
echo "{\"v\": $((DJC_KEY_id * 10))}"
M
	chmod +x mkslow.sh
	export DJC_JOBS_LEASE_TIMEOUT=2
	for round in 1 2 3; do
		"$DJC" populate Out --reserve-jobs --suppress-errors --make ./mkslow.sh >pop.out 2>pop.err &
		pid=$!
		nap 1.3
		killed=$(killconns)
		nap 0.6
		killconns >/dev/null
		wait $pid
		prc=$?
		check "round $round: populate whose connections were killed ($killed) ends with exit 0 or 1, one-line error" \
			sh -c "[ $prc = 0 -o $prc = 1 ] && [ \$(grep -c . pop.err) -le 1 ]"
		[ "$prc" -le 1 ] || cat pop.out pop.err >&2
	done
	# whatever was committed is whole: every stored row is right
	run djc fetch Out --format json
	pycheck "every committed row is whole and right" 'import json,sys
rows=[json.loads(l) for l in sys.argv[1].splitlines() if l.strip()]
sys.exit(0 if all(r["v"] == r["id"] * 10 or r["id"] == 1 for r in rows) else 1)' "$OUT"
	nap 2.5   # any reservation of a dead connection lapses with the lease
	expect_rc 0 "a new populate finishes the rest" djc populate Out --reserve-jobs --make ./mkslow.sh
	expect_out "no key lost: all 12 made" "12" cnt Out
	run djc jobs Out
	check "no stuck reservation, no error" sh -c "printf '%s' \"\$1\" | grep -q 'reserved 0, success 0, error 0'" _ "$OUT"
	unset DJC_JOBS_LEASE_TIMEOUT
	# a direct populate killed likewise
	expect_out "delete the rows again" "deleted 12 rows from Out" sh -c "$DJC delete Out.Item --no-cascade >/dev/null && $DJC delete Out --no-cascade"
	"$DJC" populate Out --suppress-errors --make ./mkslow.sh >pop.out 2>pop.err &
	pid=$!
	nap 1.3
	killconns >/dev/null
	wait $pid
	prc=$?
	# the driver may reconnect and finish (exit 0) or report the loss (exit 1)
	check "direct populate with its connection killed: exit 0 or 1, at most one line" sh -c "[ $prc -le 1 ] && [ \$(grep -c . pop.err) -le 1 ]"
	[ "$prc" -le 1 ] || cat pop.out pop.err >&2
	expect_rc 0 "the rerun completes" djc populate Out --make ./mkslow.sh
	expect_out "all 12 made once" "12" cnt Out
fi
}
tcase lost_connections make_output

case_full_disk() {
# ------------------------------------------------------- full disk
# A fresh SQLite file whose process may not grow any file past a limit
# (ulimit -f, SIGXFSZ ignored: writes fail with EFBIG like on a full disk).
if [ "$DJC_BACKEND" = sqlite ]; then
	export DJC_DATABASE_URL="sqlite:$T/full.db"
	DB=$T/full.db
	expect_rc 0 "declare on a fresh file" djc declare p.djc
	expect_rc 0 "insert its keys" djc insert Src src.jsonl
	py 'import json
with open("big.jsonl", "w") as f:
    for i in range(1000, 3000): f.write(json.dumps({"id": i, "pad": "p" * 4000}) + "\n")'
	limit() { echo $(( ( $(stat -c %s "$DB") + $(stat -c %s "$DB-wal" 2>/dev/null || echo 0) ) / 1024 + $1 )); }
	run bash -c "trap '' XFSZ; ulimit -f $(limit 100); exec \"$DJC\" insert Src big.jsonl"
	lines=$(printf '%s\n' "$ERR" | grep -c .)
	check "insert on a full disk fails with one line (exit $RC)" sh -c "[ $RC = 1 -o $RC = 2 ] && [ $lines = 1 ]"
	check "...naming the problem" sh -c "printf '%s' \"\$1\" | grep -Eiq 'full|disk|large|I/O|write'" _ "$ERR"
	expect_out "...and nothing of it was written" "12" cnt Src
	expect_rc 0 "the database is fine afterwards" djc insert Src src.jsonl --skip-duplicates
	# a populate whose commits cannot be written
	cat > mkpad.sh <<'M'
#!/bin/sh
python3 -c '
import json
print(json.dumps({"v": 1}))
for i in range(300): print(json.dumps({"_part": "Item", "item": i, "w": "w" * 3999}))'
M
	chmod +x mkpad.sh
	export DJC_JOBS_LEASE_TIMEOUT=2
	run bash -c "trap '' XFSZ; ulimit -f $(limit 400); exec \"$DJC\" populate Out --reserve-jobs --suppress-errors --make ./mkpad.sh"
	check "populate on a full disk fails (exit $RC)" test "$RC" != 0
	[ "$RC" != 0 ] || printf '%s\n%s\n' "$OUT" "$ERR" >&2
	check "...with a one-line message" test "$(printf '%s\n' "$ERR" | grep -c .)" -le 1
	run djc fetch Out --format json
	n=$(printf '%s\n' "$OUT" | grep -c .)
	ni=$(cnt Out.Item)
	check "every stored key is whole ($n keys, $ni part rows)" test "$ni" = "$((n * 300))"
	nap 2.5    # a reservation that could not be written back lapses with its lease
	djc jobs clear Out --status error >/dev/null
	expect_rc 0 "with space again, populate finishes" djc populate Out --reserve-jobs --make ./mkpad.sh
	expect_out "all keys made" "12" cnt Out
	expect_out "with all their part rows" "3600" cnt Out.Item
	run djc jobs Out
	check "no job left reserved or failed" sh -c "printf '%s' \"\$1\" | grep -q 'reserved 0, success 0, error 0'" _ "$OUT"
	unset DJC_JOBS_LEASE_TIMEOUT
fi
}
tcase full_disk lost_connections

# ---------------------------------------------- a table locked for ever
# lock_take TABLE: another session takes TABLE (SQL name) locked and keeps
# it until lock_drop (PostgreSQL LOCK TABLE ... ACCESS EXCLUSIVE, MariaDB
# LOCK TABLES ... WRITE, SQLite BEGIN EXCLUSIVE on the file); returns once
# the lock is held (1 if it never came)
lock_take() {
	local i=0 n=0
	case $DJC_BACKEND in
	postgresql)
		psql "${DJC_SERVER_URL:-$DJC_DATABASE_URL}" -qAt -c "BEGIN; LOCK TABLE \"$DJC_DATABASE_SCHEMA\".\"$1\" IN ACCESS EXCLUSIVE MODE;
			SELECT pg_sleep(900) /* djc-test-locker */" >/dev/null 2>&1 & ;;
	mysql)   # (a string, not a comment, marks it: the client strips comments)
		mariadb_cli -e "LOCK TABLES \`$DJC_DATABASE_SCHEMA\`.\`$1\` WRITE; SELECT SLEEP(900), 'djc-test-locker $DJC_DATABASE_SCHEMA'" >/dev/null 2>&1 & ;;
	sqlite)
		rm -f locker.out
		python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(900)' "${DJC_DATABASE_URL#sqlite:}" >locker.out 2>&1 & ;;
	esac
	LOCKER=$!
	while [ $i -lt 400 ]; do
		case $DJC_BACKEND in
		postgresql) n=$(server_sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			WHERE c.relname = '$1' AND l.mode = 'AccessExclusiveLock' AND l.granted AND l.database =
			(SELECT oid FROM pg_database WHERE datname = current_database())") ;;
		mysql) n=$(server_sql "SELECT count(*) FROM information_schema.processlist
			WHERE info LIKE 'SELECT SLEEP(900), _djc-test-locker $DJC_DATABASE_SCHEMA_%'") ;;
		sqlite) matching '^locked$' locker.out; n=$MATCHED ;;
		esac
		[ "$n" = 1 ] && return 0
		running "$LOCKER" || return 1
		nap 0.05
		i=$((i + 1))
	done
	return 1
}
# lock_drop: the locking session ends (its server session too: a client
# gone does not end a server's sleep)
lock_drop() {
	case $DJC_BACKEND in
	postgresql) server_sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE query LIKE '%djc-test-locker%' AND pid <> pg_backend_pid() AND datname = current_database()" >/dev/null ;;
	mysql)
		local id
		for id in $(server_sql "SELECT id FROM information_schema.processlist
			WHERE info LIKE 'SELECT SLEEP(900), _djc-test-locker $DJC_DATABASE_SCHEMA_%'"); do
			server_sql "KILL CONNECTION $id" 2>/dev/null
		done ;;
	esac
	kill "$LOCKER" 2>/dev/null
	wait "$LOCKER" 2>/dev/null
	return 0
}
# lock_waiters: how many other sessions wait for a lock now (SQLite: none
# to be seen)
lock_waiters() {
	case $DJC_BACKEND in
	postgresql) server_sql "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
		AND datname = current_database() AND query NOT LIKE '%djc-test-locker%'" ;;
	mysql) server_sql "SELECT count(*) FROM information_schema.processlist
		WHERE state LIKE 'Waiting for table metadata lock%' AND db = '$DJC_DATABASE_SCHEMA'" ;;
	*) echo 0 ;;
	esac
}

# lock_case NAME: the tables NameSrc (40 keys) and NameOut (computed), a
# make mk_NAME.sh logging each start to mk_NAME.log, and the short bounds
# of locked_table
lock_case() {
	printf '%sSrc (manual)\n    id : int32\n    ---\n\n%sOut (computed)\n    -> %sSrc\n    ---\n    v : int64\n' "$1" "$1" "$1" > "$1.djc"
	expect_rc 0 "declare $1Src, $1Out" djc declare "$1.djc"
	seq 1 40 | sed 's/.*/{"id": &}/' | "$DJC" insert "$1Src" >/dev/null
	cat > "mk_$1.sh" <<M
#!/bin/sh
echo start >> mk_$1.log
sleep 0.2
echo "{\\"v\\": \$((DJC_KEY_id * 10))}"
M
	chmod +x "mk_$1.sh"
	: > "mk_$1.log"
	export DJC_JOBS_LEASE_TIMEOUT=1 DJC_JOBS_LOCK_TIMEOUT=2 DJC_JOBS_RETRY_DELAY=0
}

# refused_when_locked NAME LOCK WHAT REGEX CMD...: LOCK taken before CMD
# (a populate or a djc worker of NAME's tables) starts; CMD fails (exit 1)
# with REGEX's line (expect_fail), having started no make.
refused_when_locked() {
	local name=$1 lock=$2 what=$3 re=$4
	shift 4
	check "$lock is locked by another session" lock_take "$lock"
	expect_fail 1 "$what" "$re" timeout 120 "$@"
	lock_drop
	matching '^start$' "mk_$name.log"
	check "...having made nothing ($MATCHED makes)" test "$MATCHED" = 0
}

# stops_under_lock NAME LOCK WHAT REGEX CMD...: CMD (a populate or a djc
# worker of NAME's tables, with --json) runs in the background; once two
# makes have started, LOCK is taken (lock_take) and held; CMD must stop by
# itself: exit 1, one line matching REGEX, no make counted as failed.
# NAME.json and NAME.err hold what it wrote.
stops_under_lock() {
	local name=$1 lock=$2 what=$3 re=$4 pid
	shift 4
	timeout 120 "$@" >"$name.json" 2>"$name.err" &
	pid=$!
	check "the workers have started makes" wait_lines '^start$' "mk_$name.log" 2 2400
	check "$lock is locked under the running workers" lock_take "$lock"
	wait $pid
	RC=$? ERR=$(< "$name.err")
	check "$what stops by itself (exit 1, not 124: a hang)" test "$RC" = 1
	_nonempty_lines "$ERR"
	check "...with one line naming the table and the lock ($ERR)" eval '[ "$lines" = 1 ] && [[ $_nl_last =~ $re ]]'
	check "...no make reported failed" test "$(jq -r .error_count "$name.json" 2>/dev/null)" = 0
}

case_locked_table() {
# Another session holds the jobs table locked and never lets go: each
# statement of a populate waits for it at most jobs.lock_timeout (its
# setup, its claims, renewals and commits alike; docs/leases.md), then the
# populate stops with one line naming the table and the lock, exit 1,
# committing nothing more; the jobs it held go back to pending when their
# leases lapse, and nothing is made twice. Until 2026-12-07 it waited for
# ever (MariaDB: a day, lock_wait_timeout); `timeout 120` bounds the old
# code here. A lock released while djc waits for it is just waited for.
lock_case Lk
# locked before the populate starts: its jobs table's setup waits, gives up
refused_when_locked Lk "~~lk_out" "a populate of a locked table stops: one line naming the table and the lock" \
	'LkOut is locked by another session: .*waited [0-9]+ s for a lock another session holds' \
	"$DJC" populate LkOut --reserve-jobs --make ./mk_Lk.sh
# locked while the workers run: claims, renewals and commits wait, give up
stops_under_lock Lk "~~lk_out" "the populate" 'LkOut is locked by another session: .*waited [0-9]+ s for a lock' \
	"$DJC" populate LkOut --reserve-jobs --processes 2 --json --make ./mk_Lk.sh
check "...also in --json's failure" sh -c 'jq -e ".failure | test(\"LkOut is locked by another session\")" Lk.json >/dev/null'
made=$(jq -r .success_count Lk.json 2>/dev/null)
lock_drop
# what it held lapses with its lease (1 s): populates make the rest, each
# what it finds claimable (a lapsed job is taken by the first look after)
rest=0 n=0 prc=0
while [ $n -lt 40 ] && [ "$(cnt LkOut)" != 40 ]; do
	timeout 120 "$DJC" populate LkOut --reserve-jobs --json --make ./mk_Lk.sh >Lk.json 2>lk.err || prc=1
	v=$(jq -r '.success_count // 0' Lk.json 2>/dev/null)
	rest=$((rest + ${v:-0}))
	nap 0.2
	n=$((n + 1))
done
check "after the lock: populates make the rest, each exit 0" test "$prc" = 0
check "every key made and counted once ($made + $rest commits for 40 keys)" test "$((made + rest))" = 40
expect_out "...40 rows" "40" cnt LkOut
run djc jobs LkOut
check "...no job left reserved or failed" sh -c "printf '%s' \"\$1\" | grep -q 'reserved 0, success 0, error 0'" _ "$OUT"
# a lock let go while djc waits for it: waited for, no failure
seq 41 50 | sed 's/.*/{"id": &}/' | "$DJC" insert LkSrc >/dev/null
check "the jobs table locked again" lock_take "~~lk_out"
timeout 120 "$DJC" populate LkOut --reserve-jobs --make ./mk_Lk.sh >lk.out 2>lk.err &
pid=$!
n=0
if [ "$DJC_BACKEND" = sqlite ]; then nap 0.5
else while [ $n -lt 400 ] && [ "$(lock_waiters)" = 0 ]; do nap 0.05; n=$((n + 1)); done; fi
lock_drop
wait $pid
RC=$? ERR=$(< lk.err)
check "a lock released while the populate waits: it goes on (exit 0)" test "$RC" = 0
expect_out "...and makes the new keys" "50" cnt LkOut
unset DJC_JOBS_LEASE_TIMEOUT DJC_JOBS_LOCK_TIMEOUT DJC_JOBS_RETRY_DELAY
}
tcase locked_table

case_locked_direct() {
# populate without --reserve-jobs (direct) under a lock held for ever on
# its target table: the first statement that waited jobs.lock_timeout
# stops every worker process, as with reservations: one line naming the
# table and the lock (and the key whose make was not committed), exit 1,
# no make counted as failed, no make started after it. Until 2026-12-07
# each key's commit waited the whole bound and was counted as a failed
# make ("40 make calls of LdOut failed"), so N keys waited N bounds.
lock_case Ld
# locked while its two worker processes make keys; the line names the key
# whose make was not committed too
stops_under_lock Ld __ld_out "a direct populate" \
	'^djc: LdOut is locked by another session: .*waited [0-9]+ s for a lock.*; the make of LdOut \{.*\} was not committed$' \
	"$DJC" populate LdOut --processes 2 --suppress-errors --json --make ./mk_Ld.sh
check "...the failure in --json" sh -c 'jq -e ".failure | test(\"LdOut is locked by another session\")" Ld.json >/dev/null'
local made starts
made=$(jq -r .success_count Ld.json 2>/dev/null)
matching '^start$' mk_Ld.log
starts=$MATCHED
check "...no make started once the lock was reached ($starts makes, $made committed: at most one in flight per process)" \
	test "$starts" -le "$((made + 2))"
lock_drop
: > mk_Ld.log
# locked before it starts: its list of keys (PostgreSQL, MariaDB) or its
# first commit (SQLite, whose readers a writer's lock does not stop) waits
# once, and nothing more
check "the target table locked again" lock_take "__ld_out"
expect_fail 1 "a direct populate of a locked table stops at the first lock: one line" \
	'^djc: LdOut is locked by another session: .*waited [0-9]+ s for a lock another session holds' \
	timeout 120 "$DJC" populate LdOut --suppress-errors --make ./mk_Ld.sh
matching '^start$' mk_Ld.log
check "...having started at most one make ($MATCHED)" test "$MATCHED" -le 1
lock_drop
expect_rc 0 "the lock gone: a direct populate makes the rest" djc populate LdOut --make ./mk_Ld.sh
expect_out "...40 rows" "40" cnt LdOut
unset DJC_JOBS_LEASE_TIMEOUT DJC_JOBS_LOCK_TIMEOUT DJC_JOBS_RETRY_DELAY
}
tcase locked_direct

case_locked_worker() {
# djc worker under a lock held for ever says what populate says, with the
# same one line "T is locked by another session: ..." whichever statement
# reached the bound (its setup, a claim, a commit, a refresh of its own
# loop), exit 1. Until 2026-12-07 a lock reached outside a claim or a
# commit (the setup; the refresh, ~djc_worker's worker.slot) said only
# "worker.slot: sqlite: waited 2 s for a lock ...".
lock_case Lw
expect_rc 0 "its jobs table" djc jobs refresh LwOut
refused_when_locked Lw "~~lw_out" "djc worker on a locked table stops: one line naming the table and the lock" \
	'^djc: LwOut is locked by another session: .*waited [0-9]+ s for a lock another session holds' \
	"$DJC" worker LwOut --until-empty --make ./mk_Lw.sh
# locked while two worker processes run (claims, commits and refreshes
# each interval of 1 s): they stop by themselves
stops_under_lock Lw "~~lw_out" "djc worker --processes 2" \
	'^djc: LwOut is locked by another session: .*waited [0-9]+ s for a lock' \
	"$DJC" worker LwOut --processes 2 --refresh-interval 1 --idle-exit 100 --json --make ./mk_Lw.sh
lock_drop
unset DJC_JOBS_LEASE_TIMEOUT DJC_JOBS_LOCK_TIMEOUT DJC_JOBS_RETRY_DELAY
}
tcase locked_worker

case_child_no_connection() {
# --------------------------------- populate --processes N, one child refused
# A refused connection reads the same on every server: "cannot connect to
# URL: DRIVER: the server's words" (until 2026-12-07 PostgreSQL's began
# "postgresql: cannot connect to").
case $DJC_BACKEND in
postgresql) bad_url=postgresql://djc@127.0.0.1:1/x ;;
mysql) bad_url=mysql://djc:pw@127.0.0.1:1/x ;;
*) bad_url= ;;
esac
[ -n "$bad_url" ] && expect_fail 1 "a refused connection: where, then the server's words" \
	"^djc: cannot connect to ${DJC_BACKEND}://[^ ]*: ${DJC_BACKEND}: " djc --db "$bad_url" tables
# One worker process of --processes 3 cannot connect (a login the server
# admits 3 times at once: the parent and two children): the two that did
# make every key, and the populate says in one line that one could not
# connect, exit 1 (docs/workers.md). Until 2026-12-07 every child stopped
# when one could not connect: nothing made. SQLite has no connection
# limit; a pooler (pgbouncer) queues its clients instead of refusing them.
if [ "$DJC_BACKEND" = sqlite ] || [ "${DJC_POOLER:-}" = pgbouncer ]; then
	echo "test_faults child_no_connection: skipped on ${DJC_POOLER:-$DJC_BACKEND}: no connection limit to reach" >&2
	return 0
fi
printf 'CnSrc (manual)\n    id : int32\n    ---\n\nCnOut (computed)\n    -> CnSrc\n    ---\n    v : int64\n' > cn.djc
expect_rc 0 "declare" djc declare cn.djc
seq 1 30 | sed 's/.*/{"id": &}/' | "$DJC" insert CnSrc >/dev/null
expect_rc 0 "its jobs table" djc jobs refresh CnOut
printf '#!/bin/sh\necho "{\\"v\\": $DJC_KEY_id}"\n' > mkcn.sh
chmod +x mkcn.sh
lim=lim_$DJC_DATABASE_SCHEMA
case $DJC_BACKEND in
postgresql)
	server_sql_each "DROP ROLE IF EXISTS $lim" "CREATE ROLE $lim LOGIN CONNECTION LIMIT 3" \
		"GRANT ALL ON SCHEMA \"$DJC_DATABASE_SCHEMA\" TO $lim" "GRANT ALL ON ALL TABLES IN SCHEMA \"$DJC_DATABASE_SCHEMA\" TO $lim" >/dev/null 2>&1
	lim_url=${DJC_DATABASE_URL/:\/\/djc@/://$lim@} ;;
mysql)
	server_sql_each "DROP USER IF EXISTS '$lim'@'%'" "CREATE USER '$lim'@'%' IDENTIFIED BY 'lim' WITH MAX_USER_CONNECTIONS 3" \
		"GRANT ALL ON \`$DJC_DATABASE_SCHEMA\`.* TO '$lim'@'%'" >/dev/null
	lim_url=${DJC_DATABASE_URL/:\/\/djc:djc@/://$lim:lim@} ;;
esac
check "a login limited to 3 connections ($lim_url)" test "$lim_url" != "$DJC_DATABASE_URL"
expect_fail 1 "one of 3 worker processes cannot connect: one line saying so, exit 1" \
	"^djc: 1 of 3 worker processes could not connect \(the others worked on\): cannot connect to ${DJC_BACKEND}://[^ ]*: ${DJC_BACKEND}: .*(too many connections|max_user_connections)" \
	timeout 120 "$DJC" --db "$lim_url" populate CnOut --reserve-jobs --processes 3 --json --make ./mkcn.sh
check "...the other two made every key" test "$(jq -r .success_count <<<"$OUT")" = 30
check "...the failure in --json" sh -c 'printf "%s" "$1" | jq -e ".failure | test(\"could not connect\")" >/dev/null' _ "$OUT"
expect_out "...30 rows" "30" cnt CnOut
run djc jobs CnOut
check "...no job left reserved or failed" sh -c "printf '%s' \"\$1\" | grep -q 'reserved 0, success 0, error 0'" _ "$OUT"
case $DJC_BACKEND in
postgresql) server_sql_each "DROP OWNED BY $lim" "DROP ROLE $lim" >/dev/null ;;
mysql) server_sql "DROP USER '$lim'@'%'" >/dev/null ;;
esac
}
tcase child_no_connection

finish
