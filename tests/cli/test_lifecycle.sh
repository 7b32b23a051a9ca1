#!/bin/bash
# test_lifecycle.sh - a job's life on a real cluster (issue 15), through the
# CLI: retries with backoff (jobs.max_attempts, jobs.retry_delay,
# DJC_ATTEMPT), timeouts (--timeout, `timeout =`, jobs.make_timeout: the
# make's process group stopped, the job retried), graceful drain (SIGUSR1,
# also through the --processes parent), cancel (a running make stopped,
# nothing of it committed), interruptions with jobs.retry_interrupted,
# attempt history (--key), and the per-key operations (--where on every
# jobs command, --all, aliases, total, jobs set).
# Every make start is logged outside the database by the make program; no
# check measures a duration: waits for an event are bounded by $WAIT
# seconds only so that a defect ends the test instead of hanging it.
. "$ROOT/tests/cli/lib.sh"
WAIT=120

{
	echo 'Src (manual)'
	echo '    id : int32'
	echo '    ---'
	echo '    name : varchar(16)'
	for t in Re Rx Bo To Tc Dr Dp Ca In Wh Pd Dd Hd Cb; do
		printf '\n%s (computed)\n    -> Src\n    ---\n    v : int64\n    att : int32\n' "$t"
	done
	printf '\nTt (computed)\n    -> Src\n    ---\n    v : int64\n    att : int32\n    timeout = 1   # seconds\n'
} > p.djc

# The make program. Logs "start KEY ATTEMPT" (DJC_ATTEMPT), then by the
# environment: MK_SLEEP_ATTEMPT=a: on attempt a, waits on a child that
# sleeps an hour (its pid in child.TABLE.KEY); MK_SLEEP_SECS=s: sleeps s
# seconds; MK_KILL_PARENT_ONCE=file: while the file exists, removes it and
# kills its worker process (SIGKILL); MK_HOLD=file: waits until the file exists (only key
# MK_HOLD_KEY, when set); MK_FAIL_UNTIL=n:
# fails while the attempt is below n. SIGTERM logs "term KEY ATTEMPT".
cat > mk.sh <<'P'
#!/bin/sh
k=$DJC_KEY_id
a=$DJC_ATTEMPT
echo "start $k $a" >> "$T/log.$DJC_TABLE"
trap 'echo "term $k $a" >> "$T/log.$DJC_TABLE"; exit 143' TERM
if [ -n "$MK_SLEEP_ATTEMPT" ] && [ "$a" = "$MK_SLEEP_ATTEMPT" ]; then
	sleep 3600 &
	echo $! > "$T/child.$DJC_TABLE.$k"
	wait $!
fi
[ -n "$MK_SLEEP_SECS" ] && sleep "$MK_SLEEP_SECS"
if [ -n "$MK_KILL_PARENT_ONCE" ] && [ -e "$MK_KILL_PARENT_ONCE" ]; then
	rm -f "$MK_KILL_PARENT_ONCE"
	# the worker process holding the job (the make's parent is its supervisor)
	kill -KILL "$("$DJC" jobs "$DJC_TABLE" --key "$DJC_KEY" --json | jq .job.pid)"; sleep 60
fi
if [ -n "$MK_HOLD" ] && { [ -z "$MK_HOLD_KEY" ] || [ "$k" = "$MK_HOLD_KEY" ]; }; then while [ ! -e "$MK_HOLD" ]; do sleep 0.05; done; fi
if [ -n "$MK_FAIL_UNTIL" ] && [ "$a" -lt "$MK_FAIL_UNTIL" ]; then echo "fail $k on attempt $a" >&2; exit 1; fi
echo "{\"v\": $((k * 10)), \"att\": $a}"
echo "end $k $a" >> "$T/log.$DJC_TABLE"
P
chmod +x mk.sh
export MK_SLEEP_ATTEMPT= MK_SLEEP_SECS= MK_KILL_PARENT_ONCE= MK_HOLD= MK_HOLD_KEY= MK_FAIL_UNTIL=
# short backoffs, kept success rows (so a finished job's history can be read)
export DJC_JOBS_RETRY_DELAY=0.2 DJC_JOBS_KEEP_COMPLETED=true

expect_rc 0 "declare" djc declare p.djc
for i in 1 2 3 4 5 6 7 8 9 10; do echo "{\"id\":$i,\"name\":\"n$i\"}"; done | djc insert Src >/dev/null

log() { cat "log.$1" 2>/dev/null; }
starts() { grep -c "^start $2 " "log.$1" 2>/dev/null || true; }
counts() { djc jobs "$1" --json | jq -c '[.pending,.reserved,.success,.error,.ignore,.total]'; }
hist() { djc jobs "$1" --key "$2" --json | jq -c "$3"; }
att_of() { djc fetch "$1" --where "{\"id\": $2}" --format json | jq -r .att; }
# gone PID: the process no longer runs (a zombie awaiting its reaper counts as gone)
gone() { wait_gone "$1" $((WAIT * 20)); }
# wait_for PATTERN FILE N: until FILE has N lines matching PATTERN
wait_for() { wait_lines "$1" "$2" "$3" $((WAIT * 20)); }
# handled PID SIG: the process has no signal SIG pending any more (its handler ran)
handled() {
	local bit=$((1 << ($2 - 1))) i=0 p s
	while [ $i -lt $((WAIT * 20)) ]; do
		p=$(awk '/^SigPnd:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
		s=$(awk '/^ShdPnd:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
		[ -z "$p" ] && return 0
		if [ $(( 0x$p & bit )) = 0 ] && [ $(( 0x$s & bit )) = 0 ]; then return 0; fi
		nap 0.05; i=$((i + 1))
	done
	return 1
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

case_retries() {
# ------------------------------------------------------------------ retries
# A make that fails on its first two attempts and succeeds on the third:
# with max_attempts 3 one populate, without any refresh, ends with the job a
# success, the make having seen DJC_ATTEMPT 1, 2, 3, and three attempts in
# the job's history.
expect_out "refresh Re key 1" '{"table":"Re","added":1,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Re --where '{"id":1}' --json
run env DJC_JOBS_MAX_ATTEMPTS=3 MK_FAIL_UNTIL=3 "$DJC" populate Re --reserve-jobs --no-refresh --json --make ./mk.sh
check "retries: populate exits 0" [ "$RC" = 0 ]
check "retries: 1 made, no error, 2 retried" [ "$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count,.retried_count]')" = '[1,0,2]' ]
check "retries: the make saw DJC_ATTEMPT 1, 2, 3" [ "$(grep '^start 1 ' log.Re | cut -d' ' -f3 | tr '\n' ' ')" = "1 2 3 " ]
check "retries: the committed row is the third attempt's" [ "$(att_of Re 1)" = 3 ]
check "retries: the job is a success with 2 failed attempts" [ "$(djc jobs Re --status success --json | jq -c '.jobs[] | [.id, .attempts, .reservations]')" = '[1,2,3]' ]
check "retries: three attempts in its history (error, error, success)" \
	[ "$(hist Re '{"id":1}' '[.history[] | [.attempt, .outcome]]')" = '[[1,"error"],[2,"error"],[3,"success"]]' ]
check "retries: each failed attempt keeps its message and stderr" \
	[ "$(hist Re '{"id":1}' '[.history[] | select(.outcome == "error") | [.message, (.stack | test("fail 1 on attempt"))]]')" = '[["make exited with status 1: fail 1 on attempt 1",true],["make exited with status 1: fail 1 on attempt 2",true]]' ]
run djc jobs Re --key '{"id":1}'
check "retries: --key text shows the job and its 3 attempts" sh -c 'printf "%s\n" "$1" | grep -q "^{\"id\": 1}  status=success .*attempts=2" && printf "%s\n" "$1" | grep -q "^history (3 attempts):" && [ "$(printf "%s\n" "$1" | grep -c "^  attempt [0-9]*:")" = 3 ]' _ "$OUT"
# the last attempt fails: an error as today, after max_attempts attempts
expect_out "refresh Rx keys 1-2" '{"table":"Rx","added":2,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Rx --where '{"id":[1,2]}' --json
run env DJC_JOBS_MAX_ATTEMPTS=2 MK_FAIL_UNTIL=9 "$DJC" populate Rx --reserve-jobs --no-refresh --suppress-errors --json --make ./mk.sh
check "attempts used up: exit 1" [ "$RC" = 1 ]
check "attempts used up: 2 errors, 2 retried, nothing made" [ "$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count,.retried_count]')" = '[0,2,2]' ]
check "attempts used up: each key made twice" [ "$(starts Rx 1)/$(starts Rx 2)" = "2/2" ]
check "attempts used up: errors with 2 attempts, the last message" \
	[ "$(djc jobs Rx --status error --json | jq -c '[.jobs[] | [.id, .attempts, .error_message]] | sort')" = '[[1,2,"make exited with status 1: fail 1 on attempt 2"],[2,2,"make exited with status 1: fail 2 on attempt 2"]]' ]
check "attempts used up: error rows are not reserved again" [ "$(counts Rx)" = '[0,0,0,2,0,2]' ]
# jobs clear --status errors (DataJoint's view name) clears them and their history
expect_out "clear --status errors" "Rx: cleared 2 error jobs" djc jobs clear Rx --status errors
expect_rc 0 "refresh again" djc jobs refresh Rx --where '{"id":1}'
check "a cleared job starts over: no history" [ "$(hist Rx '{"id":1}' '[.job.attempts, (.history | length)]')" = '[0,0]' ]
# without keep_completed the job row goes at commit; the history of a job
# that needed retries is kept (jobs.history_retention), so --key still
# tells why it took two attempts
expect_out "refresh Re key 2" '{"table":"Re","added":1,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Re --where '{"id":2}' --json
run env DJC_JOBS_MAX_ATTEMPTS=2 MK_FAIL_UNTIL=2 DJC_JOBS_KEEP_COMPLETED=false "$DJC" populate Re --reserve-jobs --no-refresh --make ./mk.sh
check "keep_completed off: made after one retry" [ "$OUT" = "Re: 1 made, 0 errors, 0 skipped, 1 retried" ]
check "keep_completed off: the job row is gone, its history kept (--key --json)" \
	[ "$(hist Re '{"id":2}' '[.job, [.history[] | [.attempt, .outcome, .message]]]')" = '[null,[[1,"error","make exited with status 1: fail 2 on attempt 1"],[2,"success",null]]]' ]
run djc jobs Re --key '{"id":2}'
check "keep_completed off: --key text shows the key, no job row, 2 attempts" sh -c 'printf "%s\n" "$1" | grep -q "^{\"id\": 2}  (no job row: made and deleted" && printf "%s\n" "$1" | grep -q "^history (2 attempts):" && [ "$(printf "%s\n" "$1" | grep -c "^  attempt [0-9]*:")" = 2 ]' _ "$OUT"
expect_rc 0 "a refresh within the retention keeps it" djc jobs refresh Re --where '{"id":2}'
check "... kept" [ "$(hist Re '{"id":2}' '[.history[] | .outcome]')" = '["error","success"]' ]
# a job made at its first attempt leaves no history (and its commit wrote none)
expect_rc 0 "refresh Re key 3" djc jobs refresh Re --where '{"id":3}'
expect_out "key 3 made at once" "Re: 1 made, 0 errors, 0 skipped" env DJC_JOBS_KEEP_COMPLETED=false "$DJC" populate Re --reserve-jobs --no-refresh --make ./mk.sh
expect_fail 2 "a job made at once leaves nothing (--key)" "Re has no job with key" djc jobs Re --key '{"id":3}'
# its target row deleted, the key gets a new job: the kept history goes,
# and the new job's attempts are its own
expect_rc 0 "delete Re key 2's row" djc delete Re --where '{"id":2}' --yes
expect_rc 0 "refresh adds key 2 again" djc jobs refresh Re --where '{"id":2}'
check "a new job of the key starts without the old history" [ "$(hist Re '{"id":2}' '[.job.status, (.history | length)]')" = '["pending",0]' ]
run env DJC_JOBS_MAX_ATTEMPTS=2 MK_FAIL_UNTIL=2 DJC_JOBS_KEEP_COMPLETED=false "$DJC" populate Re --reserve-jobs --no-refresh --make ./mk.sh
check "... made again after one retry, its history its own" [ "$(hist Re '{"id":2}' '[.job, [.history[] | [.attempt, .outcome]]]')" = '[null,[[1,"error"],[2,"success"]]]' ]
# the retention over (0 s here), a refresh sweeps the kept history
expect_rc 0 "a refresh after the retention" env DJC_JOBS_HISTORY_RETENTION=0 "$DJC" jobs refresh Re --where '{"id":2}'
expect_fail 2 "... swept it (--key)" "Re has no job with key" djc jobs Re --key '{"id":2}'
}
tcase retries

case_backoff() {
# ------------------------------------------------------------------ backoff
# Four failing attempts: each retry is due after a backoff (recorded in the
# history) that grows (jobs.retry_delay 0.2 s doubling, jittered into
# [d/2, d)), and the next attempt never starts before it is due.
expect_rc 0 "refresh Bo key 1" djc jobs refresh Bo --where '{"id":1}'
run env DJC_JOBS_MAX_ATTEMPTS=4 MK_FAIL_UNTIL=9 "$DJC" populate Bo --reserve-jobs --no-refresh --json --make ./mk.sh
check "backoff: one error after 3 retries" [ "$(printf '%s' "$OUT" | jq -c '[.error_count,.retried_count]')" = '[1,3]' ]
B=$(hist Bo '{"id":1}' '[.history[] | .backoff]')
check "backoff: three backoffs, the last attempt none ($B)" [ "$(printf '%s' "$B" | jq -c '[length, (.[0:3] | map(. != null) | all), .[3]]')" = '[4,true,null]' ]
check "backoff: the delays grow within their bounds ($B)" \
	[ "$(printf '%s' "$B" | jq -c '[.[0] >= 0.1, .[0] < 0.2, .[1] >= 0.2, .[1] < 0.4, .[2] >= 0.4, .[2] < 0.8, .[0] < .[1], .[1] < .[2]] | all')" = true ]
# database times: attempt n+1 starts no earlier than attempt n ended plus its backoff
# (1 ms for the stored times' rounding)
G=$(hist Bo '{"id":1}' 'def t: (.[0:19] | strptime("%Y-%m-%d %H:%M:%S") | mktime) + (if length > 20 then ("0" + .[19:]) | tonumber else 0 end);
	[.history as $h | range(0; 3) | ($h[. + 1].start_time | t) - (($h[.].end_time | t) + $h[.].backoff)] | map(. >= -0.002) | all')
check "backoff: no retry started before it was due" [ "$G" = true ]
}
tcase backoff retries

case_timeouts() {
# ------------------------------------------------------------------ timeouts
# --timeout: the first attempt waits on a child that sleeps an hour; it is
# stopped (SIGTERM to its process group: the child goes too), recorded
# "timed out after 1s" and retried; the second attempt succeeds.
expect_rc 0 "refresh To key 1" djc jobs refresh To --where '{"id":1}'
run env DJC_JOBS_MAX_ATTEMPTS=2 MK_SLEEP_ATTEMPT=1 "$DJC" populate To --reserve-jobs --no-refresh --timeout 1 --json --make ./mk.sh
check "timeout: exit 0, made on the retry" [ "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count,.retried_count]')" = '0/[1,0,1]' ]
check "timeout: the make got SIGTERM" grep -q '^term 1 1$' log.To
check "timeout: the make's child was stopped with it" gone "$(cat child.To.1)"
check "timeout: the history says so" \
	[ "$(hist To '{"id":1}' '[.history[] | [.attempt, .outcome, .message]]')" = '[[1,"timeout","timed out after 1s"],[2,"success",null]]' ]
check "timeout: the second attempt's row" [ "$(att_of To 1)" = 2 ]
# `timeout = 1` in the table's block, jobs.make_timeout: the same, an error without attempts left
expect_rc 0 "refresh Tt" djc jobs refresh Tt --where '{"id":1}'
run env MK_SLEEP_SECS=3 "$DJC" populate Tt --reserve-jobs --no-refresh --make ./mk.sh
check "table timeout: exit 1" [ "$RC" = 1 ]
check "table timeout: the error names it" grep -q '^error {"id": 1}: timed out after 1s$' <<< "$OUT"
expect_rc 0 "refresh Tt key 2" djc jobs refresh Tt --where '{"id":2}'
run env MK_SLEEP_SECS=3 "$DJC" populate Tt --reserve-jobs --no-refresh --timeout 1h --json --make ./mk.sh
check "--timeout overrides the table's timeout" [ "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count]')" = '0/[1,0]' ]
# --timeout 0: no limit for this run, whatever the table's line and
# jobs.make_timeout say (the make outlives both)
expect_rc 0 "refresh Tt key 4" djc jobs refresh Tt --where '{"id":4}'
run env MK_SLEEP_SECS=3 DJC_JOBS_MAKE_TIMEOUT=1 "$DJC" populate Tt --reserve-jobs --no-refresh --timeout 0 --json --make ./mk.sh
check "--timeout 0 lifts the table's timeout for one run" [ "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count]')" = '0/[1,0]' ]
expect_rc 0 "refresh Tt key 3" djc jobs refresh Tt --where '{"id":3}'
run env MK_SLEEP_SECS=3 DJC_JOBS_MAKE_TIMEOUT=3600 "$DJC" populate Tt --reserve-jobs --no-refresh --make ./mk.sh
check "the table's timeout overrides jobs.make_timeout" grep -q '^error {"id": 3}: timed out after 1s$' <<< "$OUT"
expect_rc 0 "refresh Tc" djc jobs refresh Tc --where '{"id":1}'
run env MK_SLEEP_SECS=3 DJC_JOBS_MAKE_TIMEOUT=1 "$DJC" populate Tc --reserve-jobs --no-refresh --make ./mk.sh
check "jobs.make_timeout: exit 1" [ "$RC" = 1 ]
check "jobs.make_timeout: the error names it" grep -q '^error {"id": 1}: timed out after 1s$' <<< "$OUT"
check "jobs.make_timeout: recorded as a timeout" [ "$(hist Tc '{"id":1}' '[.job.status, .history[0].outcome]')" = '["error","timeout"]' ]
run env MK_SLEEP_SECS=3 "$DJC" populate Tc --where '{"id":2}' --timeout 1 --make ./mk.sh
check "--timeout without reservation: an error too" grep -q '^error {"id": 2}: timed out after 1s$' <<< "$OUT"
check "... and its make saw DJC_ATTEMPT 1" grep -q '^start 2 1$' log.Tc
}
tcase timeouts backoff

case_drain() {
# ------------------------------------------------------------------ drain
# SIGUSR1 while a make runs: it finishes and commits, nothing more is
# claimed, populate exits 0.
expect_rc 0 "refresh Dr keys 1-3" djc jobs refresh Dr --where '{"id":[1,2,3]}'
MK_HOLD=$T/go.Dr "$DJC" populate Dr --reserve-jobs --no-refresh --make ./mk.sh > dr.out 2> dr.err &
w=$!
check "drain: a make runs" wait_for '^start ' log.Dr 1
kill -USR1 $w
check "drain: the worker took the signal" handled $w 10
touch go.Dr
wait $w
rc=$?
check "drain: exit 0" [ "$rc" = 0 ]
check "drain: the running make committed, nothing more" [ "$(cat dr.out)" = "Dr: 1 made, 0 errors, 0 skipped; drained (SIGUSR1)" ]
check "drain: one make started" [ "$(grep -c '^start ' log.Dr)" = 1 ]
check "drain: 1 success, 2 still pending" [ "$(counts Dr)" = '[2,0,1,0,0,3]' ]
check "drain: its row" [ "$(count Dr)" = 1 ]
# the --processes parent forwards it to its workers
expect_rc 0 "refresh Dp keys 1-6" djc jobs refresh Dp --where '{"id":{"<=":6}}'
MK_HOLD=$T/go.Dp "$DJC" populate Dp --reserve-jobs --no-refresh --processes 2 --json --make ./mk.sh > dp.out 2> dp.err &
w=$!
check "drain --processes 2: two makes run" wait_for '^start ' log.Dp 2
kill -USR1 $w
check "drain --processes 2: the parent forwarded it" wait_for '^djc: draining on SIGUSR1: 2 worker processes' dp.err 1
touch go.Dp
wait $w
rc=$?
check "drain --processes 2: exit 0" [ "$rc" = 0 ]
check "drain --processes 2: the two makes committed, drained" [ "$(jq -c '[.success_count,.error_count,.drained]' dp.out)" = '[2,0,true]' ]
check "drain --processes 2: two makes started" [ "$(grep -c '^start ' log.Dp)" = 2 ]
check "drain --processes 2: 4 still pending" [ "$(counts Dp)" = '[4,0,2,0,0,6]' ]
}
tcase drain timeouts

case_cancel() {
# ------------------------------------------------------------------ cancel
# A running make's job is cancelled: its worker stops the make within a
# heartbeat (lease 2 s: every 0.5 s), commits nothing of it, counts it
# cancelled; the job is ignore with a message naming who cancelled it, and
# the stopped attempt is in its history. A pending job of the restriction
# becomes ignore; the others are left alone.
expect_rc 0 "refresh Ca keys 1-3" djc jobs refresh Ca --where '{"id":[1,2,3]}'
DJC_JOBS_LEASE_TIMEOUT=2 MK_HOLD=$T/never "$DJC" populate Ca --reserve-jobs --no-refresh --where '{"id":1}' --json \
	--make ./mk.sh > ca.out 2> ca.err &
w=$!
check "cancel: the make runs" wait_for '^start 1 ' log.Ca 1
expect_out "cancel: one pending and one reserved" "Ca: cancelled 1 pending and 1 reserved jobs" djc jobs cancel Ca --where '{"id":[1,2]}'
wait $w
rc=$?
check "cancel: the worker exits 0" [ "$rc" = 0 ]
check "cancel: the make was stopped (SIGTERM)" grep -q '^term 1 1$' log.Ca
check "cancel: nothing committed, counted cancelled, not lost" \
	[ "$(count Ca)/$(jq -c '[.success_count,.error_count,.lost_count,.cancelled_count]' ca.out)" = '0/[0,0,0,1]' ]
check "cancel: the job is ignore, the message names who cancelled it" \
	[ "$(hist Ca '{"id":1}' '[.job.status, .job.last_end, (.job.error_message | test("^cancelled by .+@.+ \\(pid [0-9]+\\)$"))]')" = '["ignore","cancelled",true]' ]
check "cancel: the stopped attempt is in the history" \
	[ "$(hist Ca '{"id":1}' '[.history[] | [.attempt, .outcome, (.message | test("^cancelled by"))]]')" = '[[1,"cancelled",true]]' ]
check "cancel: the pending one is ignore, without history" [ "$(hist Ca '{"id":2}' '[.job.status, (.history | length)]')" = '["ignore",0]' ]
check "cancel: key 3 still pending" [ "$(counts Ca)" = '[1,0,0,0,2,3]' ]
expect_out "cancel: nothing left to cancel" "Ca: cancelled 0 pending and 0 reserved jobs" djc jobs cancel Ca --where '{"id":[1,2]}'
# clearing an ignore job un-ignores it: the next populate makes it
expect_out "clear the cancelled key 1 (status ignore)" "Ca: cleared 1 ignore job" djc jobs clear Ca --status ignored --where '{"id":1}'
expect_out "populate after un-ignoring: makes 1 and 3" "Ca: 2 made, 0 errors, 0 skipped" djc populate Ca --reserve-jobs --where '{"id":[1,2,3]}' --make ./mk.sh
check "cancel: key 2 stays ignored" [ "$(counts Ca)" = '[0,0,2,0,1,3]' ]

# one job of a claim of two (jobs.reserve_batch 2): a renewal by token still
# matches the other one, so the heartbeat also holds the job being made by
# key, and sees it cancelled; the other job is made
expect_rc 0 "refresh Dd keys 1-2" djc jobs refresh Dd --where '{"id":[1,2]}'
DJC_JOBS_RESERVE_BATCH=2 DJC_JOBS_LEASE_TIMEOUT=2 MK_HOLD=$T/hold.Dd MK_HOLD_KEY=1 "$DJC" populate Dd --reserve-jobs --no-refresh \
	--json --make ./mk.sh > dd.out 2> dd.err &
w=$!
check "cancel in a batch: the make of key 1 runs" wait_for '^start 1 ' log.Dd 1
expect_out "cancel in a batch: one reserved job" "Dd: cancelled 0 pending and 1 reserved job" djc jobs cancel Dd --where '{"id":1}'
check "cancel in a batch: key 1 stopped" wait_for '^term 1 1$' log.Dd 1
touch "$T/hold.Dd"   # lets a make that was not stopped end, so a failure cannot hang the test
wait $w
rc=$?
check "cancel in a batch: exit 0" [ "$rc" = 0 ]
check "cancel in a batch: 1 made, 1 cancelled, none lost" [ "$(jq -c '[.success_count,.cancelled_count,.lost_count]' dd.out)" = '[1,1,0]' ]
check "cancel in a batch: only key 2's row" [ "$(djc fetch Dd --format json | jq -c .id)" = 2 ]

# a job claimed in a batch (jobs.reserve_batch 3) and cancelled before its
# turn: its make never starts (with the default lease the heartbeat would
# see the cancel only 15 s later, after a short make ran to its end); the
# rest of the claim goes on
expect_rc 0 "refresh Cb keys 1-3" djc jobs refresh Cb --where '{"id":[1,2,3]}'
DJC_JOBS_RESERVE_BATCH=3 MK_HOLD=$T/hold.Cb "$DJC" populate Cb --reserve-jobs --no-refresh --json --make ./mk.sh > cb.out 2> cb.err &
w=$!
check "cancel before its turn: the first make of the claim runs" wait_for '^start ' log.Cb 1
check "cancel before its turn: all three claimed" [ "$(counts Cb)" = '[0,3,0,0,0,3]' ]
x=$(sed -n 1p log.Cb | cut -d' ' -f2)
y=$((x % 3 + 1))   # another job of the claim, not started
expect_out "cancel before its turn: the claimed job $y" "Cb: cancelled 0 pending and 1 reserved job" djc jobs cancel Cb --where "{\"id\":$y}"
touch "$T/hold.Cb"
wait $w
rc=$?
check "cancel before its turn: exit 0" [ "$rc" = 0 ]
check "cancel before its turn: the cancelled job's make never started" [ "$(grep -c "^start $y " log.Cb)" = 0 ]
check "cancel before its turn: the other two made" [ "$(grep -c '^end ' log.Cb)/$(count Cb)" = "2/2" ]
check "cancel before its turn: 2 made, 1 cancelled, none lost" [ "$(jq -c '[.success_count,.cancelled_count,.lost_count]' cb.out)" = '[2,1,0]' ]
check "cancel before its turn: the job is ignore, its attempt cancelled" \
	[ "$(hist Cb "{\"id\":$y}" '[.job.status, [.history[] | .outcome]]')" = '["ignore",["cancelled"]]' ]
}
tcase cancel drain

case_interruptions() {
# ------------------------------------------------------------------ interruptions
# With jobs.retry_interrupted, SIGTERM during a make sends the job back to
# pending at once, kept in its history and not counted against
# max_attempts (1 here): two interruptions, then a populate makes it as its
# first attempt.
expect_rc 0 "refresh In key 1" djc jobs refresh In --where '{"id":1}'
for n in 1 2; do
	DJC_JOBS_RETRY_INTERRUPTED=true MK_HOLD=$T/never "$DJC" populate In --reserve-jobs --no-refresh --make ./mk.sh > in.out 2> in.err &
	w=$!
	check "interrupt $n: the make runs" wait_for '^start 1 ' log.In $n
	kill -TERM $w
	wait $w
	rc=$?
	check "interrupt $n: exit 143" [ "$rc" = 143 ]
	check "interrupt $n: the job is pending again, no attempt used" \
		[ "$(djc jobs In --status pending --json | jq -c '.jobs[] | [.id, .attempts, .last_end, .error_message]')" = '[1,0,"interrupted","interrupted by SIGTERM"]' ]
done
expect_out "after two interruptions: made" "In: 1 made, 0 errors, 0 skipped" djc populate In --reserve-jobs --no-refresh --make ./mk.sh
check "interruptions: every attempt was attempt 1" [ "$(grep '^start 1 ' log.In | cut -d' ' -f3 | tr '\n' ' ')" = "1 1 1 " ]
check "interruptions: the history keeps them" \
	[ "$(hist In '{"id":1}' '[.history[] | [.attempt, .outcome, .message]]')" = '[[1,"interrupted","interrupted by SIGTERM"],[2,"interrupted","interrupted by SIGTERM"],[3,"success",null]]' ]
}
tcase interruptions cancel

case_worker_dies() {
# ------------------------------------------------------------------ a worker process dies
# With --processes, a make that kills its worker process once: the parent
# records the job's attempt ("died") as a lost worker, as a lapsed lease:
# no attempt of jobs.max_attempts (1) used, and it is retried.
expect_rc 0 "refresh Pd key 1" djc jobs refresh Pd --where '{"id":1}'
touch kill.Pd
run env MK_KILL_PARENT_ONCE="$T/kill.Pd" "$DJC" populate Pd --reserve-jobs --no-refresh --processes 2 --json --make ./mk.sh
check "worker died: made on the retry" [ "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count,.retried_count]')" = '0/[1,0,1]' ]
check "worker died: history" [ "$(hist Pd '{"id":1}' '[.history[] | [.attempt, .outcome]]')" = '[[1,"died"],[2,"success"]]' ]
check "worker died: both makes were attempt 1" [ "$(grep '^start 1 ' log.Pd | cut -d' ' -f3 | tr '\n' ' ')" = "1 1 " ]
check "worker died: lost 1, no attempt used" [ "$(djc jobs Pd --key '{"id":1}' --json | jq -c '.job | [.lost, .attempts]')" = '[1,0]' ]
}
tcase worker_dies interruptions

case_cascade_delete() {
# ------------------------------------------------------------------ a job deleted by a cascading delete
# `djc delete` of an upstream row deletes the downstream jobs of its key; a
# later refresh that adds the key again must not find the old job's history
# (its new first attempt would not be recorded beside the old first one)
expect_rc 0 "refresh Hd key 10" djc jobs refresh Hd --where '{"id":10}'
run env MK_FAIL_UNTIL=2 "$DJC" populate Hd --reserve-jobs --no-refresh --suppress-errors --make ./mk.sh
check "cascade: key 10 failed once" [ "$(hist Hd '{"id":10}' '[.history[] | [.attempt, .outcome]]')" = '[[1,"error"]]' ]
expect_rc 0 "cascade: delete Src key 10 with its downstream jobs" djc delete Src --where '{"id":10}' --yes
expect_rc 0 "cascade: insert it again" sh -c 'echo "{\"id\":10,\"name\":\"n10\"}" | "$DJC" insert Src'
expect_out "cascade: made again" "Hd: 1 made, 0 errors, 0 skipped" djc populate Hd --reserve-jobs --where '{"id":10}' --make ./mk.sh
check "cascade: the new job's history is its own" [ "$(hist Hd '{"id":10}' '[.history[] | [.attempt, .outcome]]')" = '[[1,"success"]]' ]
}
tcase cascade_delete worker_dies

case_where_everywhere() {
# ------------------------------------------------------------------ --where on every jobs command
expect_out "refresh Wh keys 1-6" '{"table":"Wh","added":6,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Wh --where '{"id":{"<=":6}}' --json
check "jobs --where lists the matching jobs" [ "$(djc jobs Wh --where '{"id":[1,2]}' | grep -c '^{"id": [12]}  status=pending')" = 2 ]
check "jobs --where --json" [ "$(djc jobs Wh --where '{"id":[2,5]}' --json | jq -c '[.status, (.jobs | map(.id) | sort)]')" = '[null,[2,5]]' ]
expect_out "jobs --counts --where" "Wh jobs: pending 3, reserved 0, success 0, error 0, ignore 0, total 3" djc jobs Wh --counts --where '{"id":{">=":4}}'
check "jobs --all lists every job" [ "$(djc jobs Wh --all | grep -c .)" = 6 ]
expect_out "ignore --where" "Wh: ignoring 2 jobs" djc jobs ignore Wh --where '{"id":[1,2]}'
expect_out "ignore --where adds a key of the key source that has no job" "Wh: ignoring 1 job" djc jobs ignore Wh --where '{"id":7}'
check "--status ignored (alias) lists them" [ "$(djc jobs Wh --status ignored --json | jq -c '[.status, (.jobs | map(.id) | sort)]')" = '["ignore",[1,2,7]]' ]
expect_out "set --priority" "Wh: updated 1 pending job" djc jobs set Wh --where '{"id":3}' --priority 1
check "the priority is set" [ "$(djc jobs Wh --where '{"id":3}' --json | jq -c '.jobs[] | .priority')" = 1 ]
expect_out "set --delay" "Wh: updated 2 pending jobs" djc jobs set Wh --where '{"id":[4,5]}' --delay 3600
expect_out "set touches only pending jobs" "Wh: updated 0 pending jobs" djc jobs set Wh --where '{"id":[1,2]}' --priority 2
run djc populate Wh --reserve-jobs --no-refresh --max-calls 1 --make ./mk.sh
check "the re-prioritised job goes first" [ "$OUT/$(grep '^start ' log.Wh | head -1 | cut -d' ' -f2)" = "Wh: 1 made, 0 errors, 0 skipped/3" ]
expect_out "then the rest that is due" "Wh: 1 made, 0 errors, 0 skipped" djc populate Wh --reserve-jobs --no-refresh --make ./mk.sh
check "the rescheduled ones wait" [ "$(djc jobs Wh --status pending --json | jq -c '.jobs | map(.id) | sort')" = '[4,5]' ]
expect_out "set --delay 0: due now" "Wh: updated 1 pending job" djc jobs set Wh --where '{"id":4}' --delay 0
expect_out "and made" "Wh: 1 made, 0 errors, 0 skipped" djc populate Wh --reserve-jobs --no-refresh --make ./mk.sh
check "--status completed (alias)" [ "$(djc jobs Wh --status completed --json | jq -c '.jobs | map(.id) | sort')" = '[3,4,6]' ]
expect_out "counts with total" "Wh jobs: pending 1, reserved 0, success 3, error 0, ignore 3, total 7" djc jobs Wh
expect_out "clear --where, any status" "Wh: cleared 2 jobs" djc jobs clear Wh --where '{"id":[1,3]}'
expect_out "clear --status --where" "Wh: cleared 1 success job" djc jobs clear Wh --status success --where '{"id":[4,5]}'
expect_out "clear --all" "Wh: cleared 4 jobs" djc jobs clear Wh --all
expect_out "nothing left" '{"table":"Wh","pending":0,"reserved":0,"success":0,"error":0,"ignore":0,"total":0}' djc jobs Wh --json
}
tcase where_everywhere cascade_delete

case_bad_input() {
# ------------------------------------------------------------------ bad input
expect_fail 2 "--timeout not a duration" "--timeout expects a duration" djc populate Wh --timeout 5x --make ./mk.sh
expect_fail 2 "--timeout -1" "--timeout expects a duration" djc populate Wh --timeout -1 --make ./mk.sh
expect_fail 2 "--timeout beyond 1e9 s" "^djc: --timeout expects a duration such as 90, 30s, 15m or 2h \(0: no limit\), got '20000d'$" djc populate Wh --timeout 20000d --make ./mk.sh
expect_fail 2 "--status bogus" "--status must be" djc jobs Wh --status bogus
expect_fail 2 "jobs clear needs a selection" "--status STATUS, --where JSON or --all" djc jobs clear Wh
expect_fail 2 "jobs cancel needs --where" "jobs cancel needs --where" djc jobs cancel Wh
expect_fail 2 "jobs set needs a change" "--priority P and/or --delay S" djc jobs set Wh --where '{"id":1}'
expect_fail 2 "jobs set needs --where" "jobs set needs --where" djc jobs set Wh --priority 1
expect_fail 2 "--where and --all" "not both" djc jobs cancel Wh --where '{"id":1}' --all
expect_fail 2 "--where names an unknown attribute" "nope" djc jobs cancel Wh --where '{"nope":1}'
expect_fail 2 "--where names a non-key attribute" "v" djc jobs clear Wh --where '{"v":1}'
expect_fail 2 "--where is not JSON" "--where is not valid JSON" djc jobs Wh --where '{id'
expect_fail 2 "--key with a missing attribute" "id" djc jobs Wh --key '{}'
expect_fail 2 "--key and --where" "--key shows one job" djc jobs Wh --key '{"id":1}' --where '{"id":1}'
expect_fail 2 "ignore --where with a bad restriction" "nope" djc jobs ignore Wh --where '{"nope":1}'
expect_fail 2 "jobs.max_attempts 0" "jobs.max_attempts" env DJC_JOBS_MAX_ATTEMPTS=0 "$DJC" jobs Wh
expect_fail 2 "jobs.retry_delay negative" "jobs.retry_delay" env DJC_JOBS_RETRY_DELAY=-1 "$DJC" jobs Wh
for bad in 'timeout = 0' 'timeout = 2x' 'timeout = -3s' 'timeout = 1h30'; do
	printf 'Bad (computed)\n    -> Src\n    ---\n    v : int64\n    %s\n' "$bad" > bad.djc
	expect_fail 2 "declare: $bad" "bad.djc:5: timeout must be a duration" djc declare bad.djc
done
printf 'M (manual)\n    id : int32\n    ---\n    timeout = 2h\n' > bad.djc
expect_fail 2 "declare: timeout on a manual table" "bad.djc:4: 'timeout =' belongs to computed and imported tables" djc declare bad.djc
# a computed table's name that leaves its history table's SQL name over 63
# characters (the longest both servers keep) was refused at declare
# (MariaDB refused the CREATE at its first populate). Since issue 36 the
# history table's name is shortened (docs/schema.md); the longest name an
# earlier djc accepted keeps the names it had, and a name whose own SQL
# name is over 64 characters (DataJoint's limit) is refused.
long=$(printf 'Ab%.0s' $(seq 1 17))cd   # ab_ab_..._abcd: a snake name of 52 characters, ~~...__history has 63
printf 'Src (manual)\n    id : int32\n    ---\n    name : varchar(16)\n\n%s (computed)\n    -> Src\n    ---\n    v : int64\n' "$long" > long.djc
expect_out "declare: the longest name an earlier djc took" "created $long (computed) as __$(printf 'ab_%.0s' $(seq 1 16))abcd" sh -c '"$DJC" declare long.djc | grep "^created $1 (computed)"' _ "$long"
expect_out "... its jobs table works" "$long: added 2, removed 0, orphaned 0, re_pended 0" djc jobs refresh "$long" --where '{"id":[1,2]}'
expect_out "... and its history table" "[0,2]" sh -c '"$DJC" jobs "$1" --key "{\"id\": 1}" --json | jq -c "[(.history | length), (.job.reservations + 2)]"' _ "$long"
expect_out "... a cancel goes through both" "$long: cancelled 2 pending and 0 reserved jobs" djc jobs cancel "$long" --all
expect_out "... whose names are as they were" "would drop $long: ~~$(printf 'ab_%.0s' $(seq 1 16))abcd (2 rows)
would drop $long: ~~$(printf 'ab_%.0s' $(seq 1 16))abcd__history (0 rows)
would drop $long: __$(printf 'ab_%.0s' $(seq 1 16))abcd (0 rows)" djc drop "$long" --dry-run
printf 'Src (manual)\n    id : int32\n    ---\n    name : varchar(16)\n\n%s (computed)\n    -> Src\n    ---\n    v : int64\n' "${long}e" > long2.djc
expect_out "declare: one character more" "created ${long}e (computed) as __$(printf 'ab_%.0s' $(seq 1 16))abcde" sh -c '"$DJC" declare long2.djc | grep "^created $1 (computed)"' _ "${long}e"
expect_out "... its jobs table works" "${long}e: added 2, removed 0, orphaned 0, re_pended 0" djc jobs refresh "${long}e" --where '{"id":[1,2]}'
expect_out "... and its history table, whose name is shortened" "would drop ${long}e: ~~$(printf 'ab_%.0s' $(seq 1 16))abcde (2 rows)
would drop ${long}e: ~~$(printf 'ab_%.0s' $(seq 1 14))_854610078__history (0 rows)
would drop ${long}e: __$(printf 'ab_%.0s' $(seq 1 16))abcde (0 rows)" djc drop "${long}e" --dry-run
xl=L$(printf 'x%.0s' $(seq 1 62))
printf 'Src (manual)\n    id : int32\n    ---\n    name : varchar(16)\n\n%s (computed)\n    -> Src\n    ---\n    v : int64\n' "$xl" > long3.djc
expect_fail 2 "declare: a table whose SQL name is over 64 characters" "^djc: long3\.djc:6: table name $xl is too long: its SQL name '__l$(printf 'x%.0s' $(seq 1 62))' has 65 characters, more than the 64 DataJoint allows\$" djc declare long3.djc
# an attribute called timeout with a default is an attribute
printf 'Tm (manual)\n    id : int32\n    ---\n    timeout = 30 : float64\n' > tm.djc
expect_rc 0 "declare: an attribute called timeout with a default" djc declare tm.djc
expect_out "... is an attribute" "inserted 1 row into Tm" sh -c 'echo "{\"id\": 1}" | "$DJC" insert Tm'
check "... with its default" [ "$(djc fetch Tm --format json | jq -c .timeout)" = 30 ]
}
tcase bad_input where_everywhere

finish
