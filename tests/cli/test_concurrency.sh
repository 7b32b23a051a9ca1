#!/bin/bash
# test_concurrency.sh - many workers, one table (DESIGN section 3): 8 worker
# processes of one populate, and 8 separate populate commands started at
# once, over 500 keys whose make sleeps a few milliseconds. Every make start
# is logged (O_APPEND): every key is made exactly once, the target is full,
# nothing is left pending or reserved. Every make also logs its start and end
# in one event log per table: the makes of different workers overlap (the
# workers really run in parallel: no claim, commit or lock holds the others
# back for a whole make), and never more than 8 run at once.
. "$ROOT/tests/cli/lib.sh"

N=500
{
	printf 'K (manual)\n    k : int32\n    ---\n'
	for t in C8 CS CR CD CB; do
		printf '\n%s (computed)\n    -> K\n    ---\n    v : int64\n    who : int64\n' "$t"
	done
} > p.djc
# the make, tests/cli/helpers/stress_make.c: sleeps 1-7 ms (varying with
# its pid), logs its start (key, and "s" in the event log) and its end
# ("e"), prints v = k * 3 and who = its supervisor's pid (one per worker).
# A small static program: the 2,500 makes of this file started as a bash
# script cost a fifth of its CPU
ln -s "$BUILD/tests/stress_make" mk

expect_rc 0 "declare" djc declare p.djc
seq 1 $N | sed 's/.*/{"k":&}/' > keys.jsonl
expect_out "insert $N keys" "inserted $N rows into K" djc insert K keys.jsonl

# the most makes running at once: between their "s" and "e" lines
most_at_once() { awk '{ n += ($1 == "s") ? 1 : -1; if (n > m) m = n } END { print m + 0 }' "ev.$1"; }
verify() {  # table label
	check "$2: $N make starts logged" [ "$(grep -c . "log.$1")" = $N ]
	check "$2: $N distinct keys made" [ "$(sort -u "log.$1" | grep -c .)" = $N ]
	check "$2: exactly the keys 1..$N" [ "$(sort -n "log.$1" | md5sum)" = "$(seq 1 $N | md5sum)" ]
	check "$2: target has $N rows" [ "$(count "$1")" = $N ]
	check "$2: every row right" [ "$(djc fetch "$1" --format json | jq -s -c 'all(.v == .k * 3)')" = true ]
	check "$2: more than one worker did the work" [ "$(djc fetch "$1" --format json | jq -s -c 'map(.who) | unique | length > 1')" = true ]
	check "$2: every make logged its end" [ "$(grep -c '^e$' "ev.$1")" = $N ]
	local most
	most=$(most_at_once "$1")
	check "$2: makes of different workers overlapped, never more than 8 at once ($most)" test "$most" -ge 2 -a "$most" -le 8
	expect_out "$2: progress complete" "{\"table\":\"$1\",\"remaining\":0,\"total\":$N}" sh -c "\"\$DJC\" progress $1 --json | jq -c \"{table, remaining, total}\""
}

# one populate, 8 worker processes
expect_out "--processes 8 --reserve-jobs" "C8: $N made, 0 errors, 0 skipped" djc populate C8 --reserve-jobs --processes 8 --make ./mk
verify C8 "--processes 8"
check "--processes 8: nothing pending or reserved (jobs table empty)" \
	[ "$(djc jobs C8 --json)" = '{"table":"C8","pending":0,"reserved":0,"success":0,"error":0,"ignore":0,"total":0}' ]

# 8 separate commands started at once (each refreshes, then reserves); keep
# completed jobs to count successes too
export DJC_JOBS_KEEP_COMPLETED=true
pids=()
for i in 1 2 3 4 5 6 7 8; do
	"$DJC" populate CS --reserve-jobs --json --make ./mk > "out.$i" 2> "err.$i" &
	pids+=($!)
done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
check "8 commands: all exit 0" [ "$fail" = 0 ]
check "8 commands: no stderr" [ "$(cat err.*)" = "" ]
check "8 commands: success counts add up to $N" [ "$(cat out.* | jq -s 'map(.success_count) | add')" = $N ]
check "8 commands: no errors, skips or lost reservations" [ "$(cat out.* | jq -s -c 'map(.error_count + .skipped_count + .lost_count) | add')" = 0 ]
verify CS "8 commands"
check "8 commands: $N success jobs, nothing pending or reserved" \
	[ "$(djc jobs CS --json)" = "{\"table\":\"CS\",\"pending\":0,\"reserved\":0,\"success\":$N,\"error\":0,\"ignore\":0,\"total\":$N}" ]
check "8 commands: each job reserved exactly once" \
	[ "$(djc jobs CS --status success --json | jq -c '.jobs | map(.reservations) | unique')" = '[1]' ]

# the same beside 10 refreshes run meanwhile: a refresh never re-pends a
# job whose target row was just committed (issue 12.2: on MariaDB a
# re-pend read the fresh `success` but not the target row committed with
# it, and the key was made twice), and a refresh that meets a deadlock
# tries again instead of failing (12.3)
pids=()
for i in 1 2 3 4 5 6 7 8; do
	"$DJC" populate CR --reserve-jobs --json --make ./mk > "rout.$i" 2> "rerr.$i" &
	pids+=($!)
done
rfail=0
for i in 1 2 3 4 5 6 7 8 9 10; do djc jobs refresh CR > "ref.$i" 2>&1 || rfail=1; done
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
check "beside refreshes: all populates exit 0" [ "$fail" = 0 ]
check "beside refreshes: every refresh exits 0" [ "$rfail" = 0 ]
check "beside refreshes: no stderr" [ "$(cat rerr.* ref.* | grep -v '^CR: added')" = "" ]
verify CR "beside refreshes"
check "beside refreshes: each job reserved exactly once" \
	[ "$(djc jobs CR --status success --json | jq -c '.jobs | map(.reservations) | unique')" = '[1]' ]
unset DJC_JOBS_KEEP_COMPLETED

# claims of 7 jobs at a time, finished makes committed together in groups
expect_out "--processes 8, reserve_batch 7" "CB: $N made, 0 errors, 0 skipped" \
	env DJC_JOBS_RESERVE_BATCH=7 "$DJC" populate CB --reserve-jobs --processes 8 --make ./mk
verify CB "reserve_batch 7"
check "reserve_batch 7: nothing pending or reserved" \
	[ "$(djc jobs CB --json)" = '{"table":"CB","pending":0,"reserved":0,"success":0,"error":0,"ignore":0,"total":0}' ]

# direct mode, 8 processes
expect_out "--processes 8 direct" "CD: $N made, 0 errors, 0 skipped" djc populate CD --processes 8 --make ./mk
verify CD "direct --processes 8"

finish
