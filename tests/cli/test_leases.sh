#!/bin/bash
# test_leases.sh - leases, heartbeats and fencing, short versions (a few
# seconds each, jobs.lease_timeout of 1-2 s). Every make start is logged
# outside the database (O_APPEND writes from the make program), so the
# assertions count exactly how often each key was made and committed.
#   1. a worker killed outright (SIGKILL of its process group) has its job
#      reclaimed by another worker without refresh once its lease lapsed and
#      not before: the lease it left ends at most one lease past its last
#      renewal and nothing renews it; the reclaim's reserved_time is not
#      before that end (database times); the reclaimed job keeps a trace
#      (reservations, last_end)
#   2. a live worker's long make (several leases) is never taken away
#   3. fencing: a worker stopped (SIGSTOP) past its lease while another
#      takes and finishes the key cannot commit after SIGCONT
#   4. a make program killed by a signal is recorded as an error at once:
#      without waiting for the lease or for the make's child that still
#      holds its output open (both an hour)
#   5. a claim of several jobs (jobs.reserve_batch) is kept whole while
#      its makes run one by one for several leases: the heartbeat renews
#      the unstarted jobs too; 6. the same for a claim of 1,000 jobs
#      (the heartbeat's statement split in two)
# No check measures a duration: waits for an event are bounded only by
# $WAIT seconds, so that a defect ends the test instead of hanging it.
. "$ROOT/tests/cli/lib.sh"
WAIT=120
# a job whose lease lapsed goes back to pending due after the backoff of a
# retry (docs/jobs.md, "Lost workers"): none here, where what is tested is
# that another worker takes it at all, and when
export DJC_JOBS_RETRY_DELAY=0

cat > p.djc <<'P'
Item (manual)
    item_id : int32
    ---
    label : varchar(16)

Res (computed)
    -> Item
    ---
    attempt : varchar(64)
P
# The make program (tests/cli/helpers/lease_make.c): logs "start KEY
# ATTEMPT", writes its pid to MK_PIDFILE (when set), waits until the file
# MK_HOLD exists (when set), sleeps MK_SLEEP seconds (SIGTERM interrupts it
# at once, logging "term"), prints its row, logs "end". A small static
# program: this file starts it over 1,000 times per backend.
ln -s "$BUILD/tests/lease_make" mk
export MK_PIDFILE= MK_HOLD=
expect_rc 0 "declare" djc declare p.djc

le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
# a database time (UTC, as the jobs table shows it) in seconds since 1970
secs() { date -u -d "$1 UTC" +%s.%N; }
# job_field STATUS FIELD: FIELD of the (one) job of Res with STATUS
job_field() { djc jobs Res --status "$1" --json | jq -r ".jobs[0].$2"; }
lines() { matching "$1" "$2"; echo "$MATCHED"; }   # PATTERN FILE: its lines matching PATTERN
# gone PID: the process no longer runs (a zombie awaiting its reaper counts as gone)
gone() { wait_gone "$1" $((WAIT * 20)); }
# wait_for PATTERN FILE N SECONDS: until FILE has N lines matching PATTERN
wait_for() { wait_lines "$1" "$2" "$3" $(($4 * 20)); }
pgid_of() { ps -o pgid= -p "$1" | tr -d ' '; }
add_item() { printf '{"item_id":%d,"label":"k%d"}\n' "$1" "$1" | djc insert Item >/dev/null; }
# others N SECS: N tries of a second worker, SECS apart, their outputs each
# followed by "|"; nothing N: what N tries that took nothing print
others() { local i out=""; for i in $(seq "$1"); do nap "$2"; out="$out$(MK_SLEEP=0 "$DJC" populate Res --reserve-jobs --make ./mk 2>&1)|"; done; printf '%s' "$out"; }
nothing() { local i; for i in $(seq "$1"); do printf 'Res: 0 made, 0 errors, 0 skipped|'; done; }
attempt_of() { djc fetch Res --where "{\"item_id\": $1}" --format json | sed -E 's/.*"attempt":"([^"]*)".*/\1/'; }

case_sigkill() {
# ------------------------------------------------------------ 1. SIGKILL
export MK_LOG=$T/m1.log DJC_JOBS_LEASE_TIMEOUT=2
add_item 1
MK_SLEEP=30 MK_PIDFILE=$T/m1.pid setsid "$DJC" populate Res --reserve-jobs --make ./mk > w1.out 2>&1 &
w1=$!
check "1: first worker starts the make" wait_for '^start 1 ' m1.log 1 $WAIT
pg=$(pgid_of $w1)
mk1=$(cat m1.pid)
check "1: the worker leads its own process group" test "$pg" = "$w1"
{ kill -KILL -- "-$pg"; wait $w1; } 2>/dev/null
run djc populate Res --reserve-jobs --no-refresh --make ./mk
check "1: before the lease lapses nobody takes the job" test "$OUT" = "Res: 0 made, 0 errors, 0 skipped"
check "1: the job is still reserved (no live holder, no refresh)" test "$(djc jobs Res)" = "Res jobs: pending 0, reserved 1, success 0, error 0, ignore 0, total 1"
check "1: the killed worker's make program died with it" gone "$mk1"
kill -KILL -- "-$mk1" 2>/dev/null   # its own background sleep, left to us
# The lease the dead worker left: every renewal sets it to (database) now +
# lease, so it ends at most one lease after now; read again after more than
# a renewal interval (lease/4), it has not moved: nothing renews it.
end1=$(job_field reserved avail_time)
now1=$(date +%s.%N)
check "1: the dead worker's lease ($end1) ends at most one lease (2 s) from now" le "$(secs "$end1")" "$(awk -v n="$now1" 'BEGIN { printf "%.3f", n + 2.001 }')"
nap 0.6
check "1: ... and nothing renews it after the kill" test "$(job_field reserved avail_time)" = "$end1"
# a second worker, no refresh: it loops until it gets the job; its make
# waits for go1, so the reclaimed job can be read while it is reserved
(
	while :; do
		o=$(MK_HOLD=$T/go1 "$DJC" populate Res --reserve-jobs --no-refresh --make ./mk)
		case $o in *"1 made"*) echo "$o"; break ;; esac
		nap 0.1
	done
) > w2.out 2>&1 &
w2=$!
check "1: a second worker reclaims the job without refresh" wait_for '^start 1 ' m1.log 2 $WAIT
r2=$(job_field reserved reserved_time)
check "1: ... not before the dead worker's lease ended (reserved $r2, lease ended $end1)" le "$(secs "$end1")" "$(secs "$r2")"
run djc jobs Res --status reserved
check "1: the reclaimed job shows its trace while reserved" sh -c 'printf "%s" "$1" | grep -q "reservations=2 .*last_end=lease expired"' _ "$OUT"
touch go1
wait $w2
check "1: the second worker made it" test "$(cat w2.out)" = "Res: 1 made, 0 errors, 0 skipped"
check "1: committed exactly once" test "$(count Res '{"item_id": 1}')" = 1
check "1: made twice, the first killed (2 starts, 1 end)" test "$(lines '^start 1 ' m1.log)/$(lines '^end 1 ' m1.log)/$(lines '^term' m1.log)" = "2/1/0"
second=$(grep '^start 1 ' m1.log | sed -n 2p | cut -d' ' -f3)
check "1: the committed row is the reclaiming worker's" test "$(attempt_of 1)" = "$second"
check "1: nothing reserved or in error afterwards" test "$(djc jobs Res)" = "Res jobs: pending 0, reserved 0, success 0, error 0, ignore 0, total 0"
}
tcase sigkill

case_long_make() {
# -------------------------------------------------- 2. long make is kept
export MK_LOG=$T/m2.log DJC_JOBS_LEASE_TIMEOUT=1
add_item 2
MK_SLEEP=4.5 "$DJC" populate Res --reserve-jobs --json --make ./mk > w1.out 2>&1 &
w1=$!
check "2: first worker starts a make of 4.5 leases" wait_for '^start 2 ' m2.log 1 $WAIT
tries=$(others 5 0.7)
wait $w1
check "2: five attempts by a second worker during the make take nothing" test "$tries" = "$(nothing 5)"
check "2: the first worker made and committed it" sh -c 'grep -q "\"success_count\":1,\"error_count\":0,\"skipped_count\":0,\"lost_count\":0" w1.out'
check "2: made exactly once (1 start, 1 end)" test "$(lines '^start 2 ' m2.log)/$(lines '^end 2 ' m2.log)" = "1/1"
check "2: committed exactly once" test "$(count Res '{"item_id": 2}')" = 1
}
tcase long_make sigkill

case_fencing_token() {
# ------------------------------------------------------ 3. fencing token
export MK_LOG=$T/m3.log DJC_JOBS_LEASE_TIMEOUT=1
add_item 3
MK_SLEEP=1.5 setsid "$DJC" populate Res --reserve-jobs --json --make ./mk > w1.out 2>&1 &
w1=$!
check "3: first worker starts the make" wait_for '^start 3 ' m3.log 1 $WAIT
pg=$(pgid_of $w1)
kill -STOP -- "-$pg"          # the worker and its heartbeat freeze; its make runs on
nap 1.4                      # past the lease
run env MK_SLEEP=0.3 "$DJC" populate Res --reserve-jobs --no-refresh --make ./mk
check "3: a second worker takes the lapsed job and commits it" test "$OUT" = "Res: 1 made, 0 errors, 0 skipped"
check "3: the stopped worker's make finished meanwhile" wait_for '^end 3 ' m3.log 2 $WAIT
kill -CONT -- "-$pg"
wait $w1
w1rc=$?
check "3: the resumed worker commits nothing and counts the job lost" sh -c 'grep -q "\"success_count\":0,\"error_count\":0,\"skipped_count\":0,\"lost_count\":1" w1.out'
check "3: ... and exits 0 (a lost reservation is no error)" test "$w1rc" = 0
second=$(grep '^start 3 ' m3.log | sed -n 2p | cut -d' ' -f3)
check "3: exactly one row, the second worker's" test "$(count Res '{"item_id": 3}')/$(attempt_of 3)" = "1/$second"
check "3: made twice, committed once" test "$(lines '^start 3 ' m3.log)/$(lines '^end 3 ' m3.log)" = "2/2"
check "3: nothing reserved or in error afterwards" test "$(djc jobs Res)" = "Res jobs: pending 0, reserved 0, success 0, error 0, ignore 0, total 0"
}
tcase fencing_token long_make

case_make_killed() {
# ------------------------------------------ 4. make killed by a signal
# The lease and the make's own child (its sleep, which keeps the make's
# output open) both last an hour, beyond the $WAIT s bound: a worker that
# waited for either never exits within it.
export MK_LOG=$T/m4.log DJC_JOBS_LEASE_TIMEOUT=3600
add_item 4
rm -f m4.pid
MK_SLEEP=3600 MK_PIDFILE=$T/m4.pid "$DJC" populate Res --reserve-jobs --make ./mk > w1.out 2> w1.err &
w1=$!
check "4: the make starts" wait_for '^start 4 ' m4.log 1 $WAIT
i=0; while [ ! -s m4.pid ] && [ $i -lt $((WAIT * 20)) ]; do nap 0.05; i=$((i + 1)); done
mk4=$(cat m4.pid)
kill -KILL "$mk4"
check "4: the worker records the error and exits without waiting for the lease or the make's child" gone $w1
kill -KILL $w1 2>/dev/null
wait $w1
w1rc=$?
kill -KILL -- "-$mk4" 2>/dev/null   # the make's sleep, if the worker left it
unset DJC_JOBS_LEASE_TIMEOUT
check "4: populate exits 1" test "$w1rc" = 1
check "4: one error line on stderr naming the signal" test "$(cat w1.err)" = "djc: 1 make call of Res failed; key {\"item_id\": 4}: make killed by signal 9 (SIGKILL)"
run djc jobs Res --status error
check "4: the job is an error with that message" sh -c 'printf "%s" "$1" | grep -q "^{\"item_id\": 4}  status=error .*error_message=make killed by signal 9 (SIGKILL)$"' _ "$OUT"
check "4: nothing committed, made once" test "$(count Res '{"item_id": 4}')/$(lines '^start 4 ' m4.log)" = "0/1"
check "4: job counts" test "$(djc jobs Res)" = "Res jobs: pending 0, reserved 0, success 0, error 1, ignore 0, total 1"
}
tcase make_killed fencing_token

case_claim_whole() {
# ------------------------- 5. a claim of several jobs is kept whole
# jobs.reserve_batch 3: one claim takes all three; their makes run one
# after the other for 4.5 leases. The heartbeat renews every job of the
# claim (the unstarted ones too), so a second worker polling meanwhile
# finds nothing to take.
export MK_LOG=$T/m5.log DJC_JOBS_LEASE_TIMEOUT=1
add_item 51; add_item 52; add_item 53
MK_SLEEP=1.5 DJC_JOBS_RESERVE_BATCH=3 "$DJC" populate Res --reserve-jobs --json --make ./mk > w1.out 2>&1 &
w1=$!
check "5: first worker starts the first make of its claim" wait_for '^start 5' m5.log 1 $WAIT
check "5: ... having claimed all three (the error is case 4's)" test "$(djc jobs Res)" = "Res jobs: pending 0, reserved 3, success 0, error 1, ignore 0, total 4"
tries=$(others 5 0.7)
wait $w1
check "5: five attempts by a second worker during the claim take nothing" test "$tries" = "$(nothing 5)"
check "5: the first worker made and committed all three" sh -c 'grep -q "\"success_count\":3,\"error_count\":0,\"skipped_count\":0,\"lost_count\":0" w1.out'
check "5: each made exactly once (3 starts, 3 ends)" test "$(lines '^start 5' m5.log)/$(lines '^end 5' m5.log)" = "3/3"
check "5: each committed exactly once" test "$(count Res '{"item_id": 51}')$(count Res '{"item_id": 52}')$(count Res '{"item_id": 53}')" = 111
}
tcase claim_whole make_killed

case_claim_1000() {
# --------------------- 6. a claim of 1,000 jobs is kept whole as well
# The heartbeat names at most 900 keys per statement (the least SQLite
# limit of bound parameters): a claim of 1,000 takes two, and both count.
export MK_LOG=$T/m6.log DJC_JOBS_LEASE_TIMEOUT=1
seq 1000 1999 | awk '{ printf "{\"item_id\":%d,\"label\":\"k%d\"}\n", $1, $1 }' | djc insert Item >/dev/null
MK_SLEEP=0.003 DJC_JOBS_RESERVE_BATCH=1000 "$DJC" populate Res --reserve-jobs --json --make ./mk > w1.out 2>&1 &
w1=$!
check "6: first worker starts the first make of its claim" wait_for '^start 1' m6.log 1 $WAIT
tries=$(others 3 0.8)
check "6: the claim outlasted three leases (the first worker is still making)" kill -0 $w1
wait $w1
check "6: three attempts by a second worker during the claim take nothing" test "$tries" = "$(nothing 3)"
check "6: the first worker made and committed all 1,000" sh -c 'grep -q "\"success_count\":1000,\"error_count\":0,\"skipped_count\":0,\"lost_count\":0" w1.out'
check "6: each made exactly once" test "$(grep -c '^start 1' m6.log)/$(grep '^start 1' m6.log | cut -d' ' -f2 | sort -u | wc -l)" = "1000/1000"
}
tcase claim_1000 claim_whole

finish
