#!/bin/bash
# test_worker.sh - a thousand workers on one server (issue 14), in the small:
#   - connections: populate --reserve-jobs --processes 4 and djc worker
#     --processes 4 hold at most 5 connections, a single process 1, counted
#     by the server (pg_stat_activity, information_schema.processlist) or,
#     through pgbouncer, by the pooler's admin console;
#   - the pooler: pooler=transaction in the URL, database.pooler, bad values;
#   - djc worker: every table upstream first, keeps going while work may
#     appear, stops on --until-empty, --max-jobs, --idle-exit, --deadline
#     (claiming only jobs that fit) and signals, one refresh per table per
#     interval among workers started together, woken by NOTIFY on
#     PostgreSQL without a pooler, goes on after a failed make;
#   - bad input, one line and exit 2.
# Waits are for events (files, log lines, exits), bounded; nothing asserts
# how long anything took.
. "$ROOT/tests/cli/lib.sh"

export DJC_WORKER_LOG=$T/worker.log
export DJC_JOBS_LEASE_TIMEOUT=10

# wait_until SECONDS CMD...: until CMD succeeds (0), or SECONDS passed (1)
wait_until() {
	local lim=$(($1 * 10)) i=0
	shift
	while ! "$@"; do
		i=$((i + 1))
		[ $i -ge $lim ] && return 1
		nap 0.1
	done
}
nfiles() { ls "$@" 2>/dev/null | wc -l; }
# in_range N MIN MAX: N is a number from MIN to MAX
in_range() { [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
count_is() { [ "$(count "$1")" = "$2" ]; }
py() { python3 -c "$@"; }

cat > p.djc <<'P'
Session (manual)
    session_id : int32
    ---
    v : float64

Stats (computed)
    -> Session
    ---
    m : float64
    make = ./mk.sh

Summary (computed)
    -> Stats
    ---
    s : float64
    make = ./mk2.sh
P
cat > mk.sh <<'P'
#!/bin/sh
echo "Stats $DJC_KEY_session_id" >> made.log
[ -n "${MK_FAIL:-}" ] && [ "$DJC_KEY_session_id" = "$MK_FAIL" ] && { echo "boom $DJC_KEY_session_id" >&2; exit 3; }
[ -n "${MK_SLEEP:-}" ] && sleep "$MK_SLEEP"
echo "{\"m\": $DJC_KEY_session_id.5}"
P
cat > mk2.sh <<'P'
#!/bin/sh
echo "Summary $DJC_KEY_session_id" >> made.log
echo '{"s": 2.5}'
P
# a make that waits for ./go (bounded): the workers stay busy while connections are counted
cat > mkwait.sh <<'P'
#!/bin/sh
touch "started.$DJC_KEY_session_id"
i=0
while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
echo '{"m": 1.5}'
P
chmod +x mk.sh mk2.sh mkwait.sh
expect_rc 0 "declare" djc declare p.djc
sessions() { for i in $(seq "$1" "$2"); do echo "{\"session_id\": $i, \"v\": 1}"; done | "$DJC" insert Session >/dev/null; }

# workers started together, with an interval of an hour (they also create
# ~djc_worker together): one interval refresh per table (the slot, open
# since no worker served these tables yet); a worker whose start no
# refresh followed refreshes at once (why=start: issue 36.3, before it
# waited for the next interval); each refresh is one generation of the
# slot, taken by exactly one worker
refreshes() { grep -c " refresh $1 .*why=$2\$" "$DJC_WORKER_LOG"; }
# no generation twice (0: a worker that could not tell which it started)
gens_distinct() { [ -z "$(grep " refresh $1 " "$DJC_WORKER_LOG" | sed 's/.* gen=\([0-9]*\) .*/\1/' | grep -v '^0$' | sort | uniq -d)" ]; }
: > "$DJC_WORKER_LOG"
for i in 1 2 3 4 5 6; do "$DJC" worker --idle-exit 1 --refresh-interval 3600 > /dev/null 2>&1 & done
wait
check "6 workers started together: 6 started" [ "$(grep -c ' start ' "$DJC_WORKER_LOG")" = 6 ]
check "... one refreshed Stats for the interval" [ "$(refreshes Stats interval)" = 1 ]
check "... one refreshed Summary for the interval" [ "$(refreshes Summary interval)" = 1 ]
check "... at most one refresh per worker and table, none for another reason" \
	[ "$(grep -c ' refresh ' "$DJC_WORKER_LOG")" = "$(($(grep -c ' refresh .*why=interval$' "$DJC_WORKER_LOG") + $(grep -c ' refresh .*why=start$' "$DJC_WORKER_LOG")))" -a "$(grep -c ' refresh Stats ' "$DJC_WORKER_LOG")" -le 6 ]
check "... each refresh of Stats its own generation" gens_distinct Stats
check "... each refresh of Summary its own generation" gens_distinct Summary
check "... all stopped idle" [ "$(grep -c ' stop idle' "$DJC_WORKER_LOG")" = 6 ]

case_connections() {
# ------------------------------------------------------ connections
# djc's connections, counted where they arrive
conns() {
	case $DJC_BACKEND in
	postgresql)
		if [ -n "${DJC_POOLER:-}" ]; then
			# through pgbouncer: its clients on this database (the admin console)
			local admin=${DJC_DATABASE_URL%/*}/pgbouncer db=${DJC_DATABASE_URL##*/}
			psql "$admin" -qA -F '|' -c "SHOW CLIENTS" 2>/dev/null | awk -F'|' -v db="$db" '
				NR == 1 { for (i = 1; i <= NF; i++) if ($i == "database") c = i; next }
				c && $c == db { n++ } END { print n + 0 }'
		else
			psql "$DJC_DATABASE_URL" -qAt -c "SELECT count(*) FROM pg_stat_activity
				WHERE application_name = 'djc' AND datname = current_database()" 2>/dev/null
		fi ;;
	mysql)
		mariadb_cli -N -e \
			"SELECT count(*) FROM information_schema.processlist WHERE db = '$DJC_DATABASE_SCHEMA' AND id <> CONNECTION_ID()" 2>/dev/null ;;
	esac
}
# conns_during N DESC MAX MIN CMD...: run CMD in the background with makes that
# wait; once N makes started, count the connections; let them go
conns_during() {
	local n=$1 desc=$2 max=$3 min=$4 pid got
	shift 4
	rm -f started.* go
	"$@" > during.out 2> during.err &
	pid=$!
	if wait_until 120 sh -c "[ \$(ls started.* 2>/dev/null | wc -l) -ge $n ]"; then
		got=$(conns)
		touch go
		wait "$pid"
		check "$desc: at most $max connections (counted $got)" in_range "$got" "$min" "$max"
	else
		touch go
		wait "$pid"
		_report fail "$desc: $n makes did not start" "$(cat during.out during.err)"
	fi
	rm -f started.* go
}
if [ "$DJC_BACKEND" = sqlite ]; then
	echo "  (connections: SQLite has no server to count them; skipped)"
else
	sessions 1 10
	conns_during 4 "populate --reserve-jobs --processes 4" 5 4 "$DJC" populate Stats --reserve-jobs --processes 4 --make ./mkwait.sh
	expect_out "... all 10 made" "10" count Stats
	djc delete Stats >/dev/null
	conns_during 1 "populate --reserve-jobs, one process" 1 1 "$DJC" populate Stats --reserve-jobs --max-calls 1 --make ./mkwait.sh
	djc delete Stats >/dev/null
	conns_during 4 "djc worker --processes 4" 5 4 "$DJC" worker Stats --processes 4 --until-empty --make ./mkwait.sh
	expect_out "... all 10 made by the worker" "10" count Stats
	djc delete Stats >/dev/null
	djc delete Session >/dev/null
fi
}
tcase connections

case_pooler() {
# -------------------------------------------------------------- pooler
if [ "$DJC_BACKEND" = postgresql ]; then
	expect_fail 2 "a bad pooler= in the URL" "^djc: database URL parameter pooler must be none or transaction, got 'bogus'$" \
		djc --db "$DJC_DATABASE_URL?pooler=bogus" tables
	expect_fail 2 "a bad database.pooler" "DJC_DATABASE_POOLER.*none or transaction" env DJC_DATABASE_POOLER=bogus "$DJC" tables
	if [ -n "${DJC_POOLER:-}" ]; then
		# the URL parameter alone (not the setting the runner gives) makes djc work through the pooler
		sessions 1 40
		run env -u DJC_DATABASE_POOLER "$DJC" --db "$DJC_DATABASE_URL?pooler=transaction" populate Stats --reserve-jobs --processes 4 --json
		check "pooler=transaction in the URL: 4 processes populate through pgbouncer" [ "$RC" = 0 ]
		check "... every key made once" [ "$(env -u DJC_DATABASE_POOLER "$DJC" --db "$DJC_DATABASE_URL?pooler=transaction" fetch Stats --format json | grep -c .)" = 40 ]
		expect_rc 0 "... and a new connection (another server connection) finds the tables" \
			env -u DJC_DATABASE_POOLER "$DJC" --db "$DJC_DATABASE_URL?pooler=transaction" fetch Summary
		djc delete Stats >/dev/null
		djc delete Session >/dev/null
	fi
else
	echo "  (pooler: PostgreSQL only; skipped on $DJC_BACKEND)"
fi
}
tcase pooler connections

case_worker() {
# ------------------------------------------------------- djc worker
sessions 1 8
: > made.log
: > "$DJC_WORKER_LOG"
run djc worker --until-empty --refresh-interval 1 --json
check "worker --until-empty exits 0" [ "$RC" = 0 ]
pycheck "... made 16 jobs (Stats and Summary)" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["success_count"] == 16 and d["error_count"] == 0 else 1)' "$OUT"
pycheck "... served both tables, upstream first" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["tables"] == ["Stats", "Summary"] else 1)' "$OUT"
pycheck "... stopped: empty" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["stopped"] == {"empty": 1} else 1)' "$OUT"
expect_out "every Summary row made" "8" count Summary
check "each key made once per table (no line twice, 16 lines)" test "$(sort made.log | uniq -d | wc -l)/$(wc -l < made.log)" = "0/16"
pycheck "each Stats make came before its Summary make" '
import sys
seen = {}
for i, l in enumerate(sys.argv[1].splitlines()):
    t, k = l.split(); seen[(t, k)] = i
sys.exit(0 if all(seen[("Stats", k)] < seen[("Summary", k)] for (t, k) in seen if t == "Summary") else 1)' "$(< made.log)"
case $DJC_BACKEND in
postgresql)
	if [ -n "${DJC_POOLER:-}" ]; then
		check "through the pooler the worker polls (no LISTEN)" grep -q "start listen=no" "$DJC_WORKER_LOG"
	else
		check "on PostgreSQL the worker LISTENs" grep -q "start listen=yes" "$DJC_WORKER_LOG"
	fi ;;
*) check "on $DJC_BACKEND the worker polls" grep -q "start listen=no" "$DJC_WORKER_LOG" ;;
esac

# nothing to do: --idle-exit
run djc worker --idle-exit 0.5 --refresh-interval 1
check "worker --idle-exit with nothing to do: exit 0" [ "$RC" = 0 ]
check "... says it stopped idle, having made nothing" sh -c "printf '%s' \"\$1\" | grep -q '^worker: 0 made, 0 errors, 0 skipped; stopped: idle (1)$'" _ "$OUT"

# keeps going while work may appear: started with nothing to do, it makes
# what is inserted later (a refresh of the slot adds the jobs) and stops
# at --max-jobs
: > "$DJC_WORKER_LOG"
"$DJC" worker --max-jobs 6 --refresh-interval 1 --json > late.json 2> late.err &
wpid=$!
wait_until 60 grep -q "^$wpid idle" "$DJC_WORKER_LOG"   # it found nothing and waits
sessions 9 11
wait_until 120 sh -c "! kill -0 $wpid 2>/dev/null"
wait "$wpid"
pycheck "a worker started before the data makes it (exit $?)" 'import json,sys; d=json.loads(open("late.json").read()); sys.exit(0 if d["success_count"] == 6 and d["stopped"] == {"max_jobs": 1} else 1)'
expect_out "... Summary of the late keys made" "11" count Summary

# woken by the refresh's notification (PostgreSQL, no pooler), else by polling:
# the worker waits with a refresh interval of an hour; an outside refresh adds jobs
: > "$DJC_WORKER_LOG"
"$DJC" worker Stats --max-jobs 2 --refresh-interval 3600 > woken.out 2>&1 &
wpid=$!
wait_until 60 grep -q "^$wpid idle" "$DJC_WORKER_LOG"   # it found nothing and waits
# its looks grow apart (0.1 s, doubling): after 2 s the next one is about a
# second or more away, so the notification, not a look, finds the new jobs
nap 2
sessions 12 13
expect_rc 0 "an outside refresh adds the new keys" djc jobs refresh Stats
wait_until 120 sh -c "! kill -0 $wpid 2>/dev/null"
wait "$wpid"
check "the waiting worker made them and stopped (max_jobs)" grep -q "^worker: 2 made, 0 errors, 0 skipped; stopped: max_jobs (1)$" woken.out
if [ "$DJC_BACKEND" = postgresql ] && [ -z "${DJC_POOLER:-}" ]; then
	check "... woken by the notification" grep -q " wake Stats$" "$DJC_WORKER_LOG"
else
	check "... found by polling (no notification here)" sh -c "! grep -q ' wake ' \"$DJC_WORKER_LOG\""
fi

# a failed make is recorded, the worker goes on; exit 1 with the one-line summary
sessions 14 16
run env MK_FAIL=15 "$DJC" worker Stats --until-empty --refresh-interval 1
check "a failing make: worker exits 1" [ "$RC" = 1 ]
check "... the others made" [ "$(count Stats)" = 15 ]
# the closing line and the error line name the table (issue 36.7)
check "... one stderr line naming the table and the key" sh -c "[ \$(printf '%s\n' \"\$1\" | wc -l) = 1 ] && printf '%s' \"\$1\" | grep -q '^djc: 1 make call of Stats failed; key {\"session_id\": *15}: make exited with status 3'" _ "$ERR"
check "... the error line names the table" sh -c "printf '%s\n' \"\$1\" | grep -q '^error Stats {\"session_id\": *15}: make exited with status 3'" _ "$OUT"
check "... recorded as an error" sh -c "\"$DJC\" jobs Stats --json | grep -q '\"error\":1'"
djc jobs clear Stats --status error > /dev/null
# --json has populate's counts (retried, cancelled, drained) and each
# error's table, from worker processes too (their errors come over a pipe);
# with jobs.max_attempts 2 the failed make is retried after its backoff,
# which --until-empty waits for, then fails for good
run env MK_FAIL=15 DJC_JOBS_MAX_ATTEMPTS=2 DJC_JOBS_RETRY_DELAY=0.5 "$DJC" worker Stats --processes 2 --until-empty --refresh-interval 1 --json
check "worker --json: a make failing twice (max_attempts 2): exit 1" [ "$RC" = 1 ]
check "... retried once, then one error, of table Stats; no failure, not drained" \
	test "$(printf '%s' "$OUT" | jq -c '[.retried_count, .error_count, .cancelled_count, .drained, .failure, [.errors[] | [.table, .key.session_id]], .stopped]')" = \
	'[1,1,0,false,null,[["Stats",15]],{"empty":2}]'
djc jobs clear Stats --status error > /dev/null

# several processes
sessions 17 30
run djc worker --processes 3 --until-empty --refresh-interval 1 --json
check "worker --processes 3 --until-empty: exit 0" [ "$RC" = 0 ]
pycheck "... three processes stopped empty" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["stopped"] == {"empty": 3} else 1)' "$OUT"
expect_out "... everything made (key 15 too, after its error was cleared)" "30" count Summary

# between pipeline levels (issue 36.3): with an interval of an hour (and
# the tables refreshed by the workers above moments ago), a worker makes
# the keys inserted before it started (it refreshes at its start, as no
# refresh followed it) and, after committing Stats rows, refreshes Summary
# at once instead of at the next interval; --until-empty and --idle-exit
# decide only after that. Before, it refreshed nothing within the interval
# (--idle-exit, the safety net here, stopped it with nothing made).
sessions 31 38
: > "$DJC_WORKER_LOG"
run djc worker --until-empty --idle-exit 5 --refresh-interval 3600 --json
check "levels, --until-empty: exit 0, 16 made, stopped empty" \
	test "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count, .error_count, .stopped]')" = '0/[16,0,{"empty":1}]'
expect_out "... Summary of keys 31-38 made" "8" count Summary '{"session_id": {">=": 31}}'
check "... it refreshed Stats at its start (8 keys)" grep -q " refresh Stats gen=[0-9]* added=8 why=start$" "$DJC_WORKER_LOG"
check "... and Summary after committing Stats rows (8 keys)" grep -q " refresh Summary gen=[0-9]* added=8 why=after:Stats$" "$DJC_WORKER_LOG"
check "... no refresh waited for the interval" sh -c '! grep -q "why=interval" "$1"' _ "$DJC_WORKER_LOG"
sessions 39 42
: > "$DJC_WORKER_LOG"
run djc worker --idle-exit 0.5 --refresh-interval 3600 --json
check "levels, --idle-exit: 8 made before it stopped idle" \
	test "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count, .stopped]')" = '0/[8,{"idle":1}]'
check "... Summary refreshed after Stats (4 keys)" grep -q " refresh Summary gen=[0-9]* added=4 why=after:Stats$" "$DJC_WORKER_LOG"
# 45 keys over two levels, 3 processes: every process stops empty only
# once both levels are done
sessions 43 87
: > "$DJC_WORKER_LOG"
run djc worker --processes 3 --until-empty --idle-exit 10 --refresh-interval 3600 --json
check "levels, 3 processes: 90 made, all three stopped empty" \
	test "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count, .stopped]')" = '0/[90,{"empty":3}]'
expect_out "... every Summary row made" "87" count Summary
check "... Summary refreshed after Stats" grep -q " refresh Summary gen=[0-9]* added=[1-9][0-9]* why=after:Stats$" "$DJC_WORKER_LOG"

# --until-empty waits for jobs pending but not due yet (a delay, a retry's
# backoff): they are work still to do. Two keys delayed 2 s, no refresh
sessions 88 89
expect_rc 0 "two jobs delayed 2 s" djc jobs refresh Stats --delay 2
run djc worker Stats --until-empty --no-refresh --json
check "--until-empty with delayed jobs: waits, makes both, stops empty" \
	test "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count, .stopped]')" = '0/[2,{"empty":1}]'

# --deadline: a worker learns how long a make takes (the shared histogram)
# and claims only what fits. A table of its own (Slow, declared now): its
# makes sleep 1.5 s (estimate: the top of their bucket, 2 s). Keys 1-12.
printf 'Slow (computed)\n    -> Session\n    ---\n    m : float64\n    make = ./mk.sh\n' > slow.djc
expect_rc 0 "declare Slow" djc declare slow.djc
W12='{"session_id": {"<=": 12}}'
expect_rc 0 "learn: one slow make" env MK_SLEEP=1.5 "$DJC" worker Slow --max-jobs 1 --refresh-interval 1
run env MK_SLEEP=1.5 "$DJC" worker Slow --where "$W12" --deadline +2.5 --refresh-interval 1 --json
pycheck "a deadline nothing fits before: exit 0, nothing made" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["success_count"] == 0 and d["stopped"] == {"deadline": 1} else 1)' "$OUT"
check "... nothing left reserved" sh -c "\"$DJC\" jobs Slow --json | grep -q '\"reserved\":0'"
run env MK_SLEEP=1.5 "$DJC" worker Slow --where "$W12" --deadline +9 --refresh-interval 1 --json
pycheck "a deadline some jobs fit before: some made, then stopped (deadline)" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if 1 <= d["success_count"] < 11 and d["stopped"] == {"deadline": 1} else 1)' "$OUT"
check "... it drained: nothing left reserved" sh -c "\"$DJC\" jobs Slow --json | grep -q '\"reserved\":0'"
deadline=$(date -d '+1 hour' '+%Y-%m-%dT%H:%M:%S')
run env MK_SLEEP=1.5 "$DJC" worker Slow --where "$W12" --deadline "$deadline" --until-empty --refresh-interval 1 --json
pycheck "a deadline an hour away (local time $deadline): the rest made, stopped empty" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["stopped"] == {"empty": 1} else 1)' "$OUT"
expect_out "... keys 1-12 made" "12" count Slow "$W12"

# a signal while waiting
"$DJC" worker --refresh-interval 3600 > sig.out 2> sig.err &
wpid=$!
wait_until 60 grep -q "^$wpid start" "$DJC_WORKER_LOG"
kill -TERM "$wpid"
wait "$wpid"
rc=$?
check "SIGTERM to a waiting worker: exit 143" [ "$rc" = 143 ]
check "... it reports stopped: signal" grep -q "stopped: signal (1)" sig.out
}
tcase worker pooler

case_serve_program() {
# ------------------------------------------ a serve program (make_serve =)
# A table whose block says `make_serve = ...`: each worker process keeps one
# serve program for that table and sends it key after key
# (docs/serve-protocol.md); the program logs each key with its pid.
S="${DJC_DATABASE_SCHEMA:-w}srv"
cat > s.djc <<'P'
Item (manual)
    item_id : int32
    ---

Tag (computed)
    -> Item
    ---
    tag : varchar(32)
    make_serve = python3 mk_serve.py
P
cat > mk_serve.py <<'P'
import os
import djc_make

def make(key, fetch):
    with open(os.environ["SERVE_LOG"], "a") as f:
        f.write("make %d %d\n" % (key["item_id"], os.getpid()))
    return {"tag": "t%d" % key["item_id"]}

djc_make.run(make)
P
expect_rc 0 "serve: declare" djc --schema "$S" declare s.djc
for i in $(seq 1 20); do printf '{"item_id": %d}\n' "$i"; done > sitems.jsonl
expect_rc 0 "serve: insert 20 items" djc --schema "$S" insert Item sitems.jsonl
: > serve.log
run env PYTHONPATH="$ROOT/python" SERVE_LOG="$T/serve.log" "$DJC" --schema "$S" worker --processes 2 --until-empty --json
pycheck "serve: 2 worker processes until empty: 20 made, both stopped empty" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["success_count"] == 20 and d["error_count"] == 0 and d["stopped"] == {"empty": 2} else 1)' "$OUT"
check "serve: every key made once (20 lines, 20 keys)" test "$(wc -l < serve.log)/$(awk '{print $2}' serve.log | sort -u | wc -l)" = "20/20"
check "serve: by at most 2 programs (one per worker process)" [ "$(awk '{print $3}' serve.log | sort -u | wc -l)" -le 2 ]
expect_out "serve: the rows are the program's" "t7" sh -c "\"$DJC\" --schema \"$S\" fetch Tag --where '{\"item_id\": 7}' --format csv | tail -n 1 | cut -d, -f2"
}
tcase serve_program worker

case_drain() {
# ------------------------------------------------------ a drain (SIGUSR1)
# Two worker processes each in a make that waits for the file "go": SIGUSR1
# to the parent, which passes it on (its stderr says so); then the makes
# finish: both commit, neither takes another job, exit 0.
D="${DJC_DATABASE_SCHEMA:-w}drain"
expect_rc 0 "drain: declare" djc --schema "$D" declare p.djc
for i in 1 2 3 4 5 6; do echo "{\"session_id\": $i, \"v\": 1}"; done > dsessions.jsonl
expect_rc 0 "drain: 6 sessions" djc --schema "$D" insert Session dsessions.jsonl
rm -f started.* go
"$DJC" --schema "$D" worker Stats --processes 2 --json --make ./mkwait.sh > drain.out 2> drain.err &
wpid=$!
wait_until 120 sh -c '[ $(ls started.* 2>/dev/null | wc -l) -ge 2 ]'
kill -USR1 "$wpid"
wait_until 60 grep -q "draining on SIGUSR1: 2 worker processes" drain.err
touch go
wait "$wpid"
rc=$?
check "drain: exit 0" [ "$rc" = 0 ]
pycheck "drain: both processes stopped for the drain, 2 made" 'import json,sys; d=json.loads(open(sys.argv[1]).read()); sys.exit(0 if d["stopped"] == {"drain": 2} and d["success_count"] == 2 else 1)' drain.out
pycheck "drain: --json says drained (issue 36.7)" 'import json,sys; d=json.loads(open(sys.argv[1]).read()); sys.exit(0 if d["drained"] is True else 1)' drain.out
check "drain: no other make started (2)" [ "$(nfiles started.*)" = 2 ]
expect_out "drain: the 2 running makes committed" "2" sh -c "\"$DJC\" --schema \"$D\" fetch Stats --format json | grep -c ."
rm -f started.* go

# A drain asked while the process starts (reading its settings, connecting)
# drains it before its first job instead of ending it: the settings file is
# a FIFO, so start-up waits until it is written; SIGUSR1 comes once the CLI
# has blocked it (SigBlk in /proc, bounded), before djc_populate/djc_worker
# catch it.
usr1_blocked() { b=$(awk '/^SigBlk:/ {print $2}' "/proc/$1/status" 2>/dev/null) && [ -n "$b" ] && [ $((0x$b & 0x200)) != 0 ]; }
early_drain() {   # early_drain OUTFILE djc-args...
	rm -f early.cfg
	mkfifo early.cfg
	local out=$1
	shift
	DJC_CONFIG=early.cfg "$DJC" --schema "$D" "$@" > "$out" 2> "$out.err" &
	local pid=$!
	wait_until 20 usr1_blocked "$pid"
	kill -USR1 "$pid"
	timeout 20 sh -c 'echo "{}" > early.cfg'
	wait "$pid"
	rc=$?
	rm -f early.cfg
}
echo '{"session_id": 7, "v": 1}' | "$DJC" --schema "$D" insert Session > /dev/null
early_drain early.out worker Stats --idle-exit 30 --json --make ./mk.sh
check "SIGUSR1 while the worker starts: exit 0 (not killed: $rc)" [ "$rc" = 0 ]
pycheck "... stopped for the drain before any job" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["stopped"] == {"drain": 1} and d["success_count"] == 0 else 1)' "$(< early.out)"
early_drain early.out populate Stats --reserve-jobs --json --make ./mk.sh
check "SIGUSR1 while populate starts: exit 0 (not killed: $rc)" [ "$rc" = 0 ]
pycheck "... drained before any make" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["drained"] and d["success_count"] == 0 else 1)' "$(< early.out)"
check "... key 7 still to be made" sh -c "[ \"\$(\"$DJC\" --schema \"$D\" fetch Stats --where '{\"session_id\": 7}' --format json | grep -c .)\" = 0 ]"
}
tcase drain serve_program

case_timeout_serve() {
# ------------------------------------------ --timeout and --make-serve
# --timeout: a make that outlives it is stopped and recorded as an error
run env MK_SLEEP=60 "$DJC" --schema "$D" worker Stats --max-jobs 1 --timeout 1 --json --make ./mk.sh
check "worker --timeout 1, a make sleeping 60 s: exit 1" [ "$RC" = 1 ]
pycheck "... recorded as timed out" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["error_count"] == 1 and d["errors"][0]["message"].startswith("timed out after 1s") else 1)' "$OUT"
check "... the job is an error" sh -c "\"$DJC\" --schema \"$D\" jobs Stats --json | grep -q '\"error\":1'"
"$DJC" --schema "$D" jobs clear Stats --status error > /dev/null
# a cancel stops the running make: --json counts it cancelled (issue 36.7)
rm -f started.* go
"$DJC" --schema "$D" worker Stats --max-jobs 1 --json --make ./mkwait.sh > cancel.out 2> cancel.err &
wpid=$!
wait_until 120 sh -c '[ $(ls started.* 2>/dev/null | wc -l) -ge 1 ]'
k=$(ls started.* | head -n 1)
expect_rc 0 "cancel the running job" djc --schema "$D" jobs cancel Stats --where "{\"session_id\": ${k#started.}}"
wait "$wpid"
check "... the worker counts it cancelled, nothing made" \
	test "$(jq -c '[.cancelled_count, .success_count, .error_count]' cancel.out 2>&1)" = '[1,0,0]'
rm -f started.* go
# --make-serve: a serve program given on the command line instead of the
# table's line (it tags its rows "cli")
sed 's/"tag": "t%d"/"tag": "cli%d"/' mk_serve.py > mk_serve_cli.py
for i in 21 22 23 24; do printf '{"item_id": %d}\n' "$i"; done > sitems2.jsonl
expect_rc 0 "serve: insert 4 more items" djc --schema "$S" insert Item sitems2.jsonl
: > serve.log
run env PYTHONPATH="$ROOT/python" SERVE_LOG="$T/serve.log" "$DJC" --schema "$S" worker Tag --until-empty --json --make-serve python3 mk_serve_cli.py
pycheck "worker --make-serve: 4 made by one program" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["success_count"] == 4 and d["stopped"] == {"empty": 1} else 1)' "$OUT"
check "... one program (one pid) for the 4 keys" test "$(wc -l < serve.log)/$(awk '{print $3}' serve.log | sort -u | wc -l)" = "4/1"
expect_out "... its rows" "cli23" sh -c "\"$DJC\" --schema \"$S\" fetch Tag --where '{\"item_id\": 23}' --format csv | tail -n 1 | cut -d, -f2"
}
tcase timeout_serve drain

case_bad_input() {
# ----------------------------------------------------------- bad input
expect_fail 2 "an unknown table" '^djc: unknown table "Nope"' djc worker Nope --idle-exit 1
expect_fail 2 "a manual table" "^djc: table Session is manual: only computed and imported tables are populated$" djc worker Session --idle-exit 1
expect_fail 2 "--make with three tables served" "^djc: a make given to the worker serves one table, and 3 would be served \(Stats, Summary, \.\.\.\): name the table$" \
	djc worker --idle-exit 1 --make ./mk.sh
expect_fail 2 "a bad --deadline" "^djc: --deadline must be a time" djc worker --deadline tomorrow
expect_fail 2 "a --deadline in the past" "^djc: --deadline '2001-01-01T00:00' is in the past$" djc worker --deadline 2001-01-01T00:00
expect_fail 2 "a --where on an attribute a served table lacks" "restriction names" djc worker --where '{"nope": 1}' --idle-exit 1
expect_fail 2 "--processes 0" "^djc: --processes expects an integer >= 1, got '0'$" djc worker --processes 0
expect_fail 2 "--idle-exit -1" "^djc: --idle-exit expects a number of seconds" djc worker --idle-exit -1
expect_fail 2 "an unknown option" "^djc: worker: unknown or incomplete option --bogus" djc worker --bogus
expect_fail 2 "--timeout -1" "^djc: --timeout expects a duration such as 90, 30s, 15m or 2h \(0: no limit\), got '-1'$" djc worker --timeout -1
expect_fail 2 "--make-serve with three tables served" "^djc: a make given to the worker serves one table, and 3 would be served" \
	djc worker --idle-exit 1 --make-serve ./mk.sh
}
tcase bad_input timeout_serve

# A table dropped (djc drop) while a worker serves it: the worker's next
# step on it fails, and the worker, finding it gone from the stored
# pipeline, leaves it out with one line on stderr, never commits the make
# it had in flight (counted lost, not an error) and serves the others, as
# for an unadopted table (test_adopt.sh, case unadopt_worker, on the
# servers). Here on every backend, SQLite too. (The worker stopped with
# the server's message, exit 1, the make in flight an error.)
case_dropped_table() {
	local S="${DJC_DATABASE_SCHEMA:-c}_wdrop" pid
	djs() { "$DJC" --schema "$S" "$@"; }
	printf 'Src (manual)\n    k : int32\n    ---\n\nSlow (computed)\n    -> Src\n    ---\n    x : float64\n    make = ./mk_gate.sh\n\nFast (computed)\n    -> Src\n    ---\n    z : float64\n    make = ./mk_fast.sh\n' > wd.djc
	cat > mk_gate.sh <<'P'
#!/bin/sh
echo "$DJC_KEY_k" >> slow.started
i=0
while [ ! -e go ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done
echo '{"x": 1.5}'
P
	printf '#!/bin/sh\necho "{\\"z\\": 2.5}"\n' > mk_fast.sh
	chmod +x mk_gate.sh mk_fast.sh
	rm -f go slow.started
	expect_rc 0 "declare Src, Slow and Fast" djs declare wd.djc
	printf '{"k": 1}\n{"k": 2}\n{"k": 3}\n' | djs insert Src > /dev/null
	DJC_WORKER_LOG="$T/wd.log" "$DJC" --schema "$S" worker --until-empty --json > wd.out 2> wd.err &
	pid=$!
	check "the worker makes a key of Slow" wait_until 120 test -s slow.started
	expect_rc 0 "drop Slow meanwhile" djs drop Slow --yes
	: > go
	wait "$pid"
	RC=$? OUT=$(< wd.out) ERR=$(< wd.err)
	check "the worker goes on and stops as asked (exit 0)" [ "$RC" = 0 ]
	_nonempty_lines "$ERR"
	check "... one line on stderr" [ "$lines" = 1 ]
	check "... naming Slow, dropped" grep -qx "djc: warning: worker leaves out table Slow, which was dropped (it is no longer in the stored pipeline): its job in hand is not committed, the other tables are served" <<< "$ERR"
	check "... Fast's keys made, no error, Slow's make lost" \
		test "$(jq -c '[.success_count, .error_count, .lost_count]' <<< "$OUT")" = '[3,0,1]'
	check "... stopped: empty" test "$(jq -c '.stopped' <<< "$OUT")" = '{"empty":1}'
	matching "^[0-9]+ leave out Slow: dropped$" wd.log
	check "... the log says it left Slow" [ "$MATCHED" = 1 ]
	expect_out "... Fast's rows" 3 sh -c "'$DJC' --schema '$S' fetch Fast --format json | grep -c ."
}
tcase dropped_table

finish
