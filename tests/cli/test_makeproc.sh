#!/bin/bash
# test_makeproc.sh - a make program's whole process tree, and bounded waits
# for it (issue 12, item 4). Each make logs events to $LOG from outside the
# database and writes the pids of its processes to files, so the checks are
# about events ("survived" never logged, every pid gone), not durations.
#   1. a make that leaves a child holding its stdout (and one that left its
#      session with setsid) does not hold the worker: when its main process
#      exits, what it printed is its result and what it left is killed
#   2. a make that closes stdout and stderr and ignores SIGTERM is killed
#      jobs.stop_grace seconds after SIGTERM: when the worker is interrupted,
#      and when its lease was reset by `jobs refresh --orphan-timeout`
#   3. a worker killed by SIGKILL takes its make's whole tree with it
#      (one process, and a worker child of --processes 2)
#   4. jobs.stop_grace is validated like every setting
. "$ROOT/tests/cli/lib.sh"

cat > p.djc <<'P'
Item (manual)
    item_id : int32
    ---

Res (computed)
    -> Item
    ---
    v : int32
P
expect_rc 0 "declare" djc declare p.djc
for i in 1 2 3 4 5 6; do printf '{"item_id": %d}\n' $i; done | djc insert Item >/dev/null

lines() { matching "$1" "$2"; echo "$MATCHED"; }   # PATTERN FILE: its lines matching PATTERN
# gone PID: the process no longer runs (waits for it up to 20 s; a zombie counts as gone)
gone() { wait_gone "$1" 400; }
# wait_for PATTERN FILE N: until FILE has N lines matching PATTERN (up to 20 s)
wait_for() { wait_lines "$1" "$2" "$3" 400; }
pids_gone() {  # DESC FILE...: every pid written in FILE... is gone
	local desc=$1 f p ok=1 left=""
	shift
	for f in "$@"; do
		p=$(cat "$f" 2>/dev/null)
		if [ -z "$p" ]; then ok=0; left="$left $f:missing"; elif ! gone "$p"; then ok=0; left="$left $f:$p"; fi
	done
	[ $ok = 1 ] && _report ok "$desc" || _report fail "$desc" "still running or never written:$left"
}
stop_left() {  # end whatever a failed check left running, by pid
	local f p
	for f in "$@"; do p=$(cat "$f" 2>/dev/null); [ -n "$p" ] && running "$p" && kill -KILL "$p" 2>/dev/null; done
	return 0
}

case_leftovers() {
# ------------------------------------- 1. a make's leftovers do not hold the worker
# Prints its row, leaves a subshell holding stdout and a setsid'd process
# (stdout closed, its own session), then exits 0. Either, left alive, would
# log "survived" 20 s later.
cat > mkbg.sh <<'P'
#!/bin/sh
echo "{\"v\": $DJC_KEY_item_id}"
( sleep 20; echo "survived bg $DJC_KEY_item_id" >> "$LOG" ) &
echo $! > "bg.$DJC_KEY_item_id"
setsid sh -c 'echo $$ > "sid.$DJC_KEY_item_id"; sleep 20; echo "survived sid $DJC_KEY_item_id" >> "$LOG"' </dev/null >/dev/null 2>&1 &
while [ ! -s "sid.$DJC_KEY_item_id" ]; do sleep 0.01; done
echo "main exits $DJC_KEY_item_id" >> "$LOG"
exit 0
P
chmod +x mkbg.sh
export LOG=$T/bg.log
run djc populate Res --reserve-jobs --where '{"item_id": 1}' --make ./mkbg.sh
check "1: populate ends with the make's main process: 1 made" test "$RC/$OUT" = "0/Res: 1 made, 0 errors, 0 skipped"
check "1: its row is what it printed before exiting" test "$(djc fetch Res --where '{"item_id": 1}' --format csv | tail -1)" = "1,1"
check "1: the job is done, nothing left reserved" test "$(djc jobs Res)" = "Res jobs: pending 0, reserved 0, success 0, error 0, ignore 0, total 0"
pids_gone "1: the child holding stdout and the setsid'd process were killed" bg.1 sid.1
check "1: neither lived on to log" test "$(lines survived "$LOG")/$(lines 'main exits 1' "$LOG")" = "0/1"
stop_left bg.1 sid.1
# the same without reservation, and a make that fails: its leftovers go too
run djc populate Res --where '{"item_id": 2}' --make ./mkbg.sh
check "1: direct populate: 1 made" test "$RC/$OUT" = "0/Res: 1 made, 0 errors, 0 skipped"
pids_gone "1: direct populate: leftovers killed" bg.2 sid.2
cat > mkbgfail.sh <<'P'
#!/bin/sh
sleep 30 &
echo $! > "bgf.$DJC_KEY_item_id"
echo "it went wrong" >&2
exit 3
P
chmod +x mkbgfail.sh
run djc populate Res --reserve-jobs --where '{"item_id": 3}' --make ./mkbgfail.sh
check "1: a failing make with a child holding stdout: its error at once" \
	sh -c 'test "$1" = 1 && printf "%s" "$2" | grep -q "make exited with status 3: it went wrong"' _ "$RC" "$ERR"
pids_gone "1: ... and its child killed" bgf.3
djc jobs clear Res --status error >/dev/null
check "1: no leftover lived on to log" test "$(lines survived "$LOG")" = 0
stop_left bg.2 sid.2 bgf.3
}
tcase leftovers

case_closed_outputs() {
# ---------------------- 2. closes stdout/stderr, ignores SIGTERM: bounded waits
cat > mkstub.sh <<'P'
#!/bin/sh
k=$DJC_KEY_item_id
trap '' TERM
exec >&- 2>&-
echo $$ > "smain.$k"
sleep 30 &
echo $! > "sbg.$k"
echo "started $k" >> "$LOG"
wait
echo "survived main $k" >> "$LOG"
P
chmod +x mkstub.sh
export LOG=$T/stub.log
rm -f smain.* sbg.*
# interrupted worker: SIGTERM, the make ignores it, SIGKILL 1 s later
DJC_JOBS_STOP_GRACE=1 "$DJC" populate Res --reserve-jobs --where '{"item_id": 6}' --make ./mkstub.sh > w.out 2> w.err &
w=$!
check "2: the stubborn make started" wait_for '^started 6$' "$LOG" 1
kill -TERM "$w"
wait "$w"
wrc=$?
check "2: the interrupted worker exits 143" test "$wrc" = 143
check "2: ... naming SIGTERM" grep -q "interrupted by SIGTERM" w.err
pids_gone "2: the make that ignored SIGTERM was killed with its child" smain.6 sbg.6
check "2: the make never got to its end" test "$(lines survived "$LOG")" = 0
run djc jobs Res --status error --json
check "2: its job is an error naming the signal" sh -c 'printf "%s" "$1" | grep -q "\"error_message\": *\"interrupted by SIGTERM\""' _ "$OUT"
check "2: nothing committed for it" test "$(count Res '{"item_id": 6}')" = 0
stop_left smain.6 sbg.6
djc jobs clear Res --status error >/dev/null

# the lease reset by refresh --orphan-timeout: the worker notices the loss
# at its next renewal, stops the make (SIGTERM, ignored), kills it 1 s later
rm -f smain.* sbg.*
DJC_JOBS_LEASE_TIMEOUT=4 DJC_JOBS_STOP_GRACE=1 "$DJC" populate Res --reserve-jobs --json --max-calls 1 \
	--where '{"item_id": 6}' --make ./mkstub.sh > w.out 2> w.err &
w=$!
check "2: orphan: the stubborn make started" wait_for '^started 6$' "$LOG" 2
nap 1.2   # older than --orphan-timeout 1
run djc jobs refresh Res --where '{"item_id": 6}' --orphan-timeout 1 --json
check "2: orphan: refresh resets its reservation" test "$OUT" = '{"table":"Res","added":0,"removed":0,"orphaned":1,"re_pended":0}'
wait "$w"
wrc=$?
check "2: orphan: the worker goes on and ends (exit 0: a lost job is no error)" test "$wrc" = 0
check "2: orphan: it counts the job lost" grep -q '"success_count":0,"error_count":0,"skipped_count":0,"lost_count":1' w.out
pids_gone "2: orphan: the make that ignored SIGTERM was killed with its child" smain.6 sbg.6
check "2: orphan: the make never got to its end" test "$(lines survived "$LOG")" = 0
check "2: orphan: the job is pending for another worker" test "$(djc jobs Res --status pending --json | grep -c '"item_id": *6')" = 1
stop_left smain.6 sbg.6
}
tcase closed_outputs leftovers

case_sigkill() {
# ------------------------------------------ 3. a worker killed by SIGKILL
# A make with a background child and a setsid'd grandchild (each would live
# 300 s, far beyond the checks' bounds); it waits.
cat > mktree.sh <<'P'
#!/bin/sh
k=$DJC_KEY_item_id
echo $$ > "main.$k"
sleep 300 &
echo $! > "bg.$k"
setsid sh -c 'echo $$ > "sid.'$k'"; sleep 300; echo "survived sid '$k'" >> "$LOG"' </dev/null >/dev/null 2>&1 &
while [ ! -s "sid.$k" ]; do sleep 0.01; done
echo "started $k" >> "$LOG"
wait
echo "survived main $k" >> "$LOG"
echo '{"v": 0}'
P
chmod +x mktree.sh
export LOG=$T/kill.log
"$DJC" populate Res --reserve-jobs --where '{"item_id": 4}' --make ./mktree.sh > w.out 2>&1 &
w=$!
check "3: the make started its tree" wait_for '^started 4$' "$LOG" 1
check "3: all of it runs" sh -c 'for f in main.4 bg.4 sid.4; do kill -0 "$(cat $f)" || exit 1; done'
{ kill -KILL "$w"; wait "$w"; } 2>/dev/null
pids_gone "3: the killed worker's make, its child and its setsid'd grandchild are gone" main.4 bg.4 sid.4
check "3: none of it lived on to log" test "$(lines survived "$LOG")" = 0
stop_left main.4 bg.4 sid.4

# a worker child of --processes 2 killed by SIGKILL (its parent lives on).
# Its job is a lost worker's (pending again after a backoff, DESIGN
# invariant 3), so the parent would make it again with a new child, whose
# make waits 300 s: jobs.max_lost 1 makes this one death an error
DJC_JOBS_MAX_LOST=1 "$DJC" populate Res --reserve-jobs --processes 2 --where '{"item_id": 5}' --make ./mktree.sh > w.out 2>&1 &
w=$!
check "3: --processes 2: the make started its tree" wait_for '^started 5$' "$LOG" 1
kids=$(ps -o pid= --ppid "$w" | tr -d ' ')
check "3: --processes 2: the worker has children" test -n "$kids"
{ for k in $kids; do kill -KILL "$k"; done; wait "$w"; } 2>/dev/null
pids_gone "3: --processes 2: the killed worker child's make tree is gone" main.5 bg.5 sid.5
check "3: --processes 2: none of it lived on to log" test "$(lines survived "$LOG")" = 0
check "3: --processes 2: the death made the job an error (jobs.max_lost 1)" \
	test "$(djc jobs Res --status error --json | grep -c '"item_id": *5')" = 1
stop_left main.5 bg.5 sid.5
djc jobs clear Res --status error >/dev/null
}
tcase sigkill closed_outputs

case_stop_grace() {
# ------------------------------------------------------ 4. jobs.stop_grace
run djc config
check "4: jobs.stop_grace defaults to 5 s" sh -c 'printf "%s\n" "$1" | grep -Eq "^jobs\.stop_grace +5 +\(default\)$"' _ "$OUT"
for v in -1 3601 abc 1e400 0x10 nan; do
	expect_fail 2 "4: DJC_JOBS_STOP_GRACE=$v is refused" \
		"^djc: environment variable DJC_JOBS_STOP_GRACE \(jobs\.stop_grace\) must be a number of seconds from 0 to 3600, got '$v'$" \
		env DJC_JOBS_STOP_GRACE=$v "$DJC" populate Res --make ./mkbg.sh
done
printf '{"jobs": {"stop_grace": "soon"}}\n' > grace.json
expect_fail 2 "4: a bad stop_grace in the file is refused" \
	"^djc: grace\.json: setting 'jobs\.stop_grace' must be a number of seconds from 0 to 3600, got \"soon\"$" \
	env DJC_CONFIG=grace.json "$DJC" jobs Res
for v in 0 0.5 3600; do
	run env DJC_JOBS_STOP_GRACE=$v "$DJC" config
	check "4: DJC_JOBS_STOP_GRACE=$v is taken" sh -c 'printf "%s\n" "$1" | grep -Eq "^jobs\.stop_grace +$2 +\(environment\)$"' _ "$OUT" "$v"
done
}
tcase stop_grace sigkill

finish
