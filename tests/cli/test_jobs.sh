#!/bin/bash
# test_jobs.sh - populate with job reservation and the jobs table (DESIGN
# section 2): refresh and its counts, priorities, order, delay,
# keep_completed, re-pend, stale and orphan handling, errors, ignore,
# truncation, restrictions on reservation (DataJoint issue 1413), listing,
# config, version, SIGTERM/SIGINT during make, and a --processes child
# killed in its make (a lost worker, as a lapsed lease: no attempt used).
. "$ROOT/tests/cli/lib.sh"

{
	echo 'Src (manual)'
	echo '    id : int32'
	echo '    ---'
	echo '    name : varchar(64)'
	echo
	echo 'St (manual)'
	echo '    sid : int32'
	echo '    ---'
	for t in J JP JU JD JK JR JE JI JT JG JS2 JX JX2 JX3 JW; do
		echo
		echo "$t (computed)"
		echo '    -> Src'
		echo '    ---'
		echo '    v : int64'
	done
	echo
	echo 'JS (computed)'
	echo '    -> St'
	echo '    ---'
	echo '    v : int64'
} > p.djc

cat > mk.sh <<'P'
#!/bin/sh
echo "$DJC_KEY_id" >> "$T/log.$DJC_TABLE"
echo "{\"v\": $((DJC_KEY_id * 10))}"
P
cat > mk_fail4.sh <<'P'
#!/bin/sh
echo "$DJC_KEY_id" >> "$T/log.$DJC_TABLE"
if [ "$DJC_KEY_id" = 4 ]; then echo "boom for $DJC_KEY_id" >&2; exit 3; fi
echo "{\"v\": $((DJC_KEY_id * 10))}"
P
# prints a row, records its pid, then sleeps (as the same process)
cat > mk_sleep.sh <<'P'
#!/bin/sh
echo "{\"v\": 1}"
echo $$ > "$T/mkpid.$DJC_TABLE.$DJC_KEY_id"
exec sleep 60
P
# kills the worker process making its job (SIGKILL: an OOM kill, a crash)
# while the file die.TABLE exists and the key is DIE_KEY, logging "died
# KEY ATTEMPT PID" first; one-shot when DIE_ONCE is set (removes the file);
# else logs "made KEY ATTEMPT" and prints its row
cat > mk_die.sh <<'P'
#!/bin/sh
if [ "$DJC_KEY_id" = "$DIE_KEY" ] && [ -e "$T/die.$DJC_TABLE" ]; then
	[ -n "$DIE_ONCE" ] && rm -f "$T/die.$DJC_TABLE"
	w=$("$DJC" jobs "$DJC_TABLE" --key "$DJC_KEY" --json | jq .job.pid)
	echo "died $DJC_KEY_id $DJC_ATTEMPT $w" >> "$T/log.$DJC_TABLE"
	kill -KILL "$w"; sleep 60
fi
echo "made $DJC_KEY_id $DJC_ATTEMPT" >> "$T/log.$DJC_TABLE"
echo "{\"v\": $((DJC_KEY_id * 10))}"
P
chmod +x mk*.sh

expect_rc 0 "declare" djc declare p.djc
for i in 1 2 3 4 5 6 7 8 9 10; do echo "{\"id\":$i,\"name\":\"n$i\"}"; done > src.jsonl
expect_out "insert Src" "inserted 10 rows into Src" djc insert Src src.jsonl
for i in 1 2 3 4 5; do echo "{\"sid\":$i}"; done | djc insert St >/dev/null

lines() { if [ -f "$1" ]; then grep -c . "$1"; else echo 0; fi; }
made() { if [ -f "$1" ]; then sort -n "$1" | tr '\n' ' '; fi; }
counts() { djc jobs "$1" --json | jq -c '[.pending,.reserved,.success,.error,.ignore]'; }
wait_file() {  # wait up to 20 s for a file
	for _ in $(seq 200); do [ -s "$1" ] && return 0; nap 0.1; done
	return 1
}
gone() { ! kill -0 "$1" 2>/dev/null; }

case_refresh_counts() {
# ---------------------------------------------------------------- refresh counts
expect_out "refresh adds 10 pending" '{"table":"J","added":10,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh J --json
expect_out "refresh text" "J: added 0, removed 0, orphaned 0, re_pended 0" djc jobs refresh J
expect_out "jobs counts text" "J jobs: pending 10, reserved 0, success 0, error 0, ignore 0, total 10" djc jobs J
expect_out "jobs counts json" '{"table":"J","pending":10,"reserved":0,"success":0,"error":0,"ignore":0,"total":10}' djc jobs J --json
check "jobs --status pending lists 10" [ "$(djc jobs J --status pending | grep -c .)" = 10 ]
check "jobs --status pending --json: 10 rows, default priority 5" \
	[ "$(djc jobs J --status pending --json | jq -c '.jobs | [length, (map(.priority) | unique)]')" = '[10,[5]]' ]
check "jobs --status pending --json: key and status" \
	[ "$(djc jobs J --status pending --json | jq -c '.jobs | map(.id) | sort')" = '[1,2,3,4,5,6,7,8,9,10]' ]
expect_out "jobs --status error is empty" "" djc jobs J --status error
expect_fail 2 "jobs --status bogus" "status" djc jobs J --status bogus
expect_fail 2 "jobs of a manual table" "Src" djc jobs Src

# keep_completed off (default): success rows are deleted
expect_out "reserve-jobs populate" "J: 10 made, 0 errors, 0 skipped" djc populate J --reserve-jobs --make ./mk.sh
check "each key made once" [ "$(made log.J)" = "1 2 3 4 5 6 7 8 9 10 " ]
check "keep_completed off: jobs table empty" [ "$(counts J)" = '[0,0,0,0,0]' ]
check "target has 10 rows" [ "$(count J)" = 10 ]
expect_out "populate again: nothing" "J: 0 made, 0 errors, 0 skipped" djc populate J --reserve-jobs --make ./mk.sh
check "no make the second time" [ "$(lines log.J)" = 10 ]
}
tcase refresh_counts

case_keep_completed() {
# ---------------------------------------------------------------- keep_completed on, re-pend
export DJC_JOBS_KEEP_COMPLETED=true
expect_out "keep_completed: populate" "JG: 10 made, 0 errors, 0 skipped" djc populate JG --reserve-jobs --make ./mk.sh
check "keep_completed: 10 success rows" [ "$(counts JG)" = '[0,0,10,0,0]' ]
check "success rows have completed_time and duration" \
	[ "$(djc jobs JG --status success --json | jq -c '.jobs | [length, all(.completed_time != null and .duration != null and .duration >= 0 and .reserved_time != null)]')" = '[10,true]' ]
expect_out "delete a target row" "deleted 1 row from JG" djc delete JG --where '{"id":5}'
expect_out "refresh re-pends it" '{"table":"JG","added":0,"removed":0,"orphaned":0,"re_pended":1}' djc jobs refresh JG --json
check "one pending again" [ "$(counts JG)" = '[1,0,9,0,0]' ]
expect_out "re-pended key made again" "JG: 1 made, 0 errors, 0 skipped" djc populate JG --reserve-jobs --make ./mk.sh
check "key 5 made twice in all, others once" [ "$(made log.JG)" = "1 2 3 4 5 5 6 7 8 9 10 " ]
unset DJC_JOBS_KEEP_COMPLETED
}
tcase keep_completed refresh_counts

case_priorities() {
# ---------------------------------------------------------------- priorities
expect_out "refresh 1-3 at priority 1" '{"table":"JP","added":3,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh JP --priority 1 --where '{"id":[1,2,3]}' --json
expect_out "refresh the rest at priority 8" '{"table":"JP","added":7,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh JP --priority 8 --json
check "priorities stored" [ "$(djc jobs JP --status pending --json | jq -c '.jobs | map([.id,.priority]) | sort')" = '[[1,1],[2,1],[3,1],[4,8],[5,8],[6,8],[7,8],[8,8],[9,8],[10,8]]' ]
expect_out "--priority 3 reserves only priority <= 3" "JP: 3 made, 0 errors, 0 skipped" djc populate JP --reserve-jobs --priority 3 --make ./mk.sh
check "--priority: keys 1 2 3" [ "$(made log.JP)" = "1 2 3 " ]
expect_out "--priority 7: none" "JP: 0 made, 0 errors, 0 skipped" djc populate JP --reserve-jobs --priority 7 --make ./mk.sh
expect_out "--priority 8: the rest" "JP: 7 made, 0 errors, 0 skipped" djc populate JP --reserve-jobs --priority 8 --make ./mk.sh
# populate's own refresh adds jobs at populate's --priority (DataJoint's
# populate does the same), so they are made; a plain refresh adds at 5
expect_out "delete 2 JP rows" "deleted 2 rows from JP" djc delete JP --where '{"id":[9,10]}'
expect_out "populate --priority 4 adds the missing keys at 4 and makes them" "JP: 2 made, 0 errors, 0 skipped" djc populate JP --reserve-jobs --priority 4 --make ./mk.sh
check "--priority 4: keys 9 10 again" [ "$(made log.JP)" = "1 2 3 4 5 6 7 8 9 9 10 10 " ]
expect_out "delete them again" "deleted 2 rows from JP" djc delete JP --where '{"id":[9,10]}'
expect_rc 0 "refresh at the default priority" djc jobs refresh JP
check "the 2 jobs pending at priority 5" [ "$(djc jobs JP --status pending --json | jq -c '.jobs | map([.id,.priority]) | sort')" = '[[9,5],[10,5]]' ]
expect_out "populate --priority 4 --no-refresh reserves none of them" "JP: 0 made, 0 errors, 0 skipped" djc populate JP --reserve-jobs --priority 4 --no-refresh --make ./mk.sh
}
tcase priorities keep_completed

case_most_urgent() {
# ---------------------------------------------------------------- the most urgent first
djc jobs refresh JU --priority 2 --where '{"id":7}' >/dev/null
nap 0.1
djc jobs refresh JU --priority 2 --where '{"id":3}' >/dev/null
nap 0.1
djc jobs refresh JU --priority 2 --where '{"id":1}' >/dev/null
djc jobs refresh JU --priority 1 --where '{"id":9}' >/dev/null
djc jobs refresh JU --priority 3 >/dev/null
for order in "9 " "9 7 " "9 7 3 " "9 7 3 1 "; do
	expect_out "--max-calls 1 makes the most urgent" "JU: 1 made, 0 errors, 0 skipped" djc populate JU --reserve-jobs --no-refresh --max-calls 1 --make ./mk.sh
	check "order so far: $order" [ "$(tr '\n' ' ' < log.JU)" = "$order" ]
done
check "exact order 9 7 3 1" [ "$(tr '\n' ' ' < log.JU)" = "9 7 3 1 " ]
check "6 left pending" [ "$(counts JU)" = '[6,0,0,0,0]' ]
}
tcase most_urgent priorities

case_delay() {
# ---------------------------------------------------------------- delay
# Keys 1-5 wait an hour, keys 6-10 one second. Once a second has passed (the
# sleep only ever lasts longer) a populate takes exactly keys 6-10, however
# slow the machine: a claim that ignored scheduled_time would take 1-5 too,
# one that misread the delay would take none.
expect_out "refresh --delay 3600 for keys 1-5" '{"table":"JD","added":5,"removed":0,"orphaned":0,"re_pended":0}' \
	djc jobs refresh JD --delay 3600 --where '{"id":{"<=":5}}' --json
expect_out "refresh --delay 1 for the rest" '{"table":"JD","added":5,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh JD --delay 1 --json
# seconds from created_time to scheduled_time, by key (database times)
delays() {
	djc jobs JD --status pending --json | jq -c 'def t: (.[0:19] | strptime("%Y-%m-%d %H:%M:%S") | mktime)
		+ (if length > 20 then ("0" + .[19:]) | tonumber else 0 end);
		[.jobs[] | [.id, ((.scheduled_time | t) - (.created_time | t) | round)]] | sort'
}
check "scheduled_time is created_time plus each key's delay" [ "$(delays)" = '[[1,3600],[2,3600],[3,3600],[4,3600],[5,3600],[6,1],[7,1],[8,1],[9,1],[10,1]]' ]
nap 1.2
expect_out "due jobs are reserved, delayed ones are not" "JD: 5 made, 0 errors, 0 skipped" djc populate JD --reserve-jobs --no-refresh --make ./mk.sh
check "exactly keys 6-10 were made" [ "$(made log.JD)" = "6 7 8 9 10 " ]
check "keys 1-5 still pending" [ "$(counts JD)" = '[5,0,0,0,0]' ]
}
tcase delay most_urgent

case_restrictions() {
# ---------------------------------------------------------------- restrictions restrict reservation (issue 1413)
expect_out "refresh everything" '{"table":"JR","added":10,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh JR --json
expect_out "--no-refresh --where makes only matching keys" "JR: 2 made, 0 errors, 0 skipped" \
	djc populate JR --reserve-jobs --no-refresh --where '{"id":[2,4]}' --make ./mk.sh
check "issue 1413: only 2 and 4 made" [ "$(made log.JR)" = "2 4 " ]
check "8 still pending" [ "$(counts JR)" = '[8,0,0,0,0]' ]
expect_out "--where with refresh" "JR: 3 made, 0 errors, 0 skipped" djc populate JR --reserve-jobs --where '{"id":{">":7}}' --make ./mk.sh
check "then 8 9 10" [ "$(made log.JR)" = "2 4 8 9 10 " ]
expect_out "--where --max-calls --processes 2" "JR: 1 made, 0 errors, 0 skipped" \
	djc populate JR --reserve-jobs --processes 2 --max-calls 1 --where '{"id":[1,3]}' --make ./mk.sh
check "one of 1, 3" grep -Eqx '1 2 4 8 9 10 |2 3 4 8 9 10 ' <<< "$(made log.JR)"
}
tcase restrictions delay

case_errors() {
# ---------------------------------------------------------------- errors
run djc populate JE --reserve-jobs --suppress-errors --make ./mk_fail4.sh
check "errors: exit 1, 9 made 1 error" [ "$RC" = 1 ]
check "errors: summary" [ "$(printf '%s\n' "$OUT" | head -1)" = "JE: 9 made, 1 error, 0 skipped" ]
check "error job recorded" [ "$(counts JE)" = '[0,0,0,1,0]' ]
check "error row: message and stack" \
	[ "$(djc jobs JE --status error --json | jq -c '.jobs[] | [.id, .error_message, (.error_stack | test("boom for 4"))]')" = '[4,"make exited with status 3: boom for 4",true]' ]
check "text listing shows the error" grep -q 'error_message=make exited with status 3: boom for 4' <<< "$(djc jobs JE --status error)"
expect_out "error jobs are not reserved" "JE: 0 made, 0 errors, 0 skipped" djc populate JE --reserve-jobs --make ./mk.sh
check "no make for the error job" [ "$(lines log.JE)" = 10 ]
expect_out "jobs clear --status error" "JE: cleared 1 error job" djc jobs clear JE --status error
check "cleared" [ "$(counts JE)" = '[0,0,0,0,0]' ]
expect_out "eligible after the next refresh" "JE: 1 made, 0 errors, 0 skipped" djc populate JE --reserve-jobs --make ./mk.sh
check "key 4 made again" [ "$(lines log.JE)" = 11 ]
expect_fail 2 "jobs clear: bad status" "status" djc jobs clear JE --status bogus
# without --suppress-errors the first error stops (a make that always fails;
# jobs of equal priority and time are taken in no particular order)
printf '#!/bin/sh\necho "$DJC_KEY_id" >> "$T/log.$DJC_TABLE"\necho "no luck" >&2\nexit 1\n' > mk_never.sh
chmod +x mk_never.sh
run djc populate JX3 --reserve-jobs --make ./mk_never.sh
check "reserve: first error stops" [ "$RC" = 1 ]
check "reserve: first error stops (0 made, 1 error)" [ "$(printf '%s\n' "$OUT" | head -1)" = "JX3: 0 made, 1 error, 0 skipped" ]
check "reserve: one make started" [ "$(lines log.JX3)" = 1 ]
check "reserve: the rest left pending" [ "$(counts JX3)" = '[9,0,0,1,0]' ]
}
tcase errors restrictions

case_ignore() {
# ---------------------------------------------------------------- ignore
expect_out "ignore a key not yet in the jobs table" 'JI: ignoring {"id":3}' djc jobs ignore JI '{"id":3}'
check "inserted as ignore" [ "$(counts JI)" = '[0,0,0,0,1]' ]
expect_out "refresh does not add an ignored key" '{"table":"JI","added":9,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh JI --json
expect_out "ignore a pending key" 'JI: ignoring {"id":6}' djc jobs ignore JI '{"id":6}'
check "updated to ignore" [ "$(counts JI)" = '[8,0,0,0,2]' ]
check "the ignored keys" [ "$(djc jobs JI --status ignore --json | jq -c '.jobs | map(.id) | sort')" = '[3,6]' ]
expect_out "ignored keys are not made" "JI: 8 made, 0 errors, 0 skipped" djc populate JI --reserve-jobs --make ./mk.sh
check "not 3, not 6" [ "$(made log.JI)" = "1 2 4 5 7 8 9 10 " ]
expect_fail 2 "ignore: key attribute missing" "id" djc jobs ignore JI '{}'
expect_fail 2 "ignore: unknown attribute" "nope" djc jobs ignore JI '{"id":1,"nope":2}'
expect_fail 2 "ignore: not JSON" "KEY_JSON" djc jobs ignore JI '{id'
}
tcase ignore errors

case_truncation() {
# ---------------------------------------------------------------- truncation
cat > mk_long.sh <<'P'
#!/bin/sh
echo "first line" >&2
head -c 5000 /dev/zero | tr '\0' 'x' >&2
echo >&2
exit 1
P
chmod +x mk_long.sh
run djc populate JT --reserve-jobs --where '{"id":1}' --make ./mk_long.sh
check "long error: exit 1" [ "$RC" = 1 ]
msg=$(djc jobs JT --status error --json | jq -r '.jobs[] | .error_message')
check "error_message is exactly 2047 characters" [ "${#msg}" = 2047 ]
check "error_message ends in ...truncated" [ "${msg: -12}" = "...truncated" ]
check "error_message starts with the status" [ "${msg:0:30}" = "make exited with status 1: xxx" ]
# the stack: stderr's last 4,000 bytes (of 5,012), its first line saying
# how many came before
stack=$(djc jobs JT --status error --json | jq -r '.jobs[] | select(.id == 1) | .error_stack')
check "a cut stack starts with a line saying so (1012 bytes cut)" \
	[ "$stack" = "... (1012 bytes cut)
$(head -c 3999 /dev/zero | tr '\0' 'x')" ]
check "... and the attempt's history has the same stack" \
	[ "$(djc jobs JT --key '{"id": 1}' --json | jq -r '.history[0].stack')" = "$stack" ]
cat > mk_short.sh <<'P'
#!/bin/sh
head -c 2000 /dev/zero | tr '\0' 'y' >&2
exit 1
P
chmod +x mk_short.sh
run djc populate JT --reserve-jobs --where '{"id":2}' --make ./mk_short.sh
msg=$(djc jobs JT --status error --json | jq -r '.jobs[] | select(.id == 2) | .error_message')
check "a message under 2047 characters is kept whole" [ "$msg" = "make exited with status 1: $(head -c 2000 /dev/zero | tr '\0' 'y')" ]
check "a stack under 4,000 bytes is kept whole, with no cut line" \
	[ "$(djc jobs JT --status error --json | jq -r '.jobs[] | select(.id == 2) | .error_stack')" = "$(head -c 2000 /dev/zero | tr '\0' 'y')" ]
cat > mk_4000.sh <<'P'
#!/bin/sh
head -c 3999 /dev/zero | tr '\0' 'z' >&2
echo >&2
exit 1
P
chmod +x mk_4000.sh
run djc populate JT --reserve-jobs --where '{"id":3}' --make ./mk_4000.sh
check "a stack of exactly 4,000 bytes is whole, with no cut line" \
	[ "$(djc jobs JT --status error --json | jq -r '.jobs[] | select(.id == 3) | .error_stack')" = "$(head -c 3999 /dev/zero | tr '\0' 'z')" ]
}
tcase truncation ignore

case_stale_removal() {
# ---------------------------------------------------------------- stale removal
expect_out "JS refresh" '{"table":"JS","added":5,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh JS --json
djc jobs ignore JS '{"sid":4}' >/dev/null
expect_out "remove 2 keys from the key source" "deleted 2 rows from St" djc delete St --no-cascade --where '{"sid":[4,5]}'
expect_out "default stale timeout (3600 s): nothing removed" '{"table":"JS","added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh JS --json
expect_out "--stale-timeout 30: jobs too young" '{"table":"JS","added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh JS --stale-timeout 30 --json
nap 1.2
expect_out "--stale-timeout 1 removes the gone key, not the ignored one" '{"table":"JS","added":0,"removed":1,"orphaned":0,"re_pended":0}' djc jobs refresh JS --stale-timeout 1 --json
check "3 pending, 1 ignore" [ "$(counts JS)" = '[3,0,0,0,1]' ]
check "the ignored gone key stays" [ "$(djc jobs JS --status ignore --json | jq -c '.jobs[] | .sid')" = 4 ]
}
tcase stale_removal truncation

case_orphans() {
# ---------------------------------------------------------------- orphans (SIGKILLed worker)
DJC_JOBS_LEASE_TIMEOUT=300 "$DJC" populate JK --reserve-jobs --where '{"id":1}' --make ./mk_sleep.sh >/dev/null 2>&1 &
wpid=$!
check "worker started its make" wait_file mkpid.JK.1
kill -9 "$wpid"
wait "$wpid" 2>/dev/null
mk=$(cat mkpid.JK.1)
kill -9 "$mk" 2>/dev/null
check "killed worker leaves the job reserved" [ "$(counts JK)" = '[0,1,0,0,0]' ]
expect_out "a held lease is not taken" "JK: 0 made, 0 errors, 0 skipped" djc populate JK --reserve-jobs --no-refresh --where '{"id":1}' --make ./mk.sh
expect_out "--orphan-timeout 300: too young" '{"table":"JK","added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh JK --where '{"id":1}' --orphan-timeout 300 --json
nap 1.2
expect_out "--orphan-timeout 1 resets it" '{"table":"JK","added":0,"removed":0,"orphaned":1,"re_pended":0}' djc jobs refresh JK --where '{"id":1}' --orphan-timeout 1 --json
check "pending again" [ "$(counts JK)" = '[1,0,0,0,0]' ]
expect_out "and made" "JK: 1 made, 0 errors, 0 skipped" djc populate JK --reserve-jobs --no-refresh --make ./mk.sh
check "JK row 1" [ "$(count JK '{"id":1}')" = 1 ]
}
tcase orphans stale_removal

case_sigterm() {
# ---------------------------------------------------------------- SIGTERM / SIGINT during make
sigtest() {  # table signal want_rc processes
	tb=$1; sig=$2; wantrc=$3; procs=$4
	rm -f mkpid.$tb.*
	"$DJC" populate "$tb" --reserve-jobs --processes "$procs" --where '{"id":[1,2]}' --make ./mk_sleep.sh >"out.$tb" 2>"err.$tb" &
	wpid=$!
	ok=1
	wait_file "mkpid.$tb.1" || ok=0
	[ "$procs" = 2 ] && { wait_file "mkpid.$tb.2" || ok=0; }
	check "$tb: make running before the signal" [ "$ok" = 1 ]
	kill -"$sig" "$wpid"
	wait "$wpid"
	rc=$?
	check "$tb: $sig exits $wantrc" [ "$rc" = "$wantrc" ]
	check "$tb: stderr names the signal" grep -q "interrupted by SIG$sig" "err.$tb"
	# the running make(s) recorded as error; with one process key 2 never started
	check "$tb: $procs job(s) recorded as error" [ "$(counts "$tb")" = "[$((2 - procs)),0,0,$procs,0]" ]
	check "$tb: error message names $sig" \
		[ "$(djc jobs "$tb" --status error --json | jq -r '.jobs[] | .error_message' | sort -u)" = "interrupted by SIG$sig" ]
	check "$tb: its rows rolled back" [ "$(count "$tb")" = 0 ]
	for f in mkpid.$tb.*; do
		check "$tb: make program $f stopped" gone "$(cat "$f")"
	done
}
sigtest JX TERM 143 1
sigtest JX2 INT 130 1
sigtest JS2 TERM 143 2
}
tcase sigterm orphans

case_child_killed() {
# ---------------------------------------------------------------- a --processes child killed in its make
# A child of populate --processes 2 SIGKILLed while it makes key 3 is a lost
# worker, as when its lease lapses (DESIGN invariant 3): lost + 1, no
# attempt of jobs.max_attempts (1) used, the job pending again (counted as
# retried, not as an error); --max-calls 1 ends the populate with it
# pending (jobs.retry_delay 0: due at once), a later populate makes it.
jw() { djc jobs JW --key "{\"id\": $1}" --json | jq -c "$2"; }
touch die.JW
run env DIE_KEY=3 DIE_ONCE=1 DJC_JOBS_RETRY_DELAY=0 "$DJC" populate JW --reserve-jobs --processes 2 --where '{"id":3}' --max-calls 1 --json --make ./mk_die.sh
check "child killed: the make ran and killed its worker" [ "$(grep -c '^died 3 1 ' log.JW)" = 1 ]
check "child killed: exit 0, no error, counted as retried" \
	[ "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count,.retried_count]')" = '0/[0,0,1]' ]
pid=$(awk '$1 == "died" { print $4 }' log.JW)
check "child killed: the job is pending, lost 1, no attempt used" \
	[ "$(jw 3 '.job | [.status, .lost, .attempts, .last_end]')" = '["pending",1,0,"worker died"]' ]
check "child killed: its message names the signal and the worker's pid" \
	[ "$(jw 3 '.job.error_message')" = "\"make killed by signal 9 (worker process $pid died)\"" ]
check "child killed: the attempt's history row says it died" \
	[ "$(jw 3 '[.history[] | [.attempt, .outcome, .message]]')" = "[[1,\"died\",\"make killed by signal 9 (worker process $pid died)\"]]" ]
run djc populate JW --reserve-jobs --processes 2 --where '{"id":3}' --json --make ./mk_die.sh
check "child killed: a later populate makes it" \
	[ "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count,.retried_count]')" = '0/[1,0,0]' ]
check "... as its first attempt still (DJC_ATTEMPT 1)" [ "$(grep '^made 3 ' log.JW)" = "made 3 1" ]
check "... its row is there, its job gone" [ "$(count JW)/$(counts JW)" = '1/[0,0,0,0,0]' ]

# A make that kills its worker every time: each death a lost worker, none an
# attempt; the jobs.max_lost-th (3) makes the job an error saying so,
# naming the last dead worker
touch die.JW
run env DIE_KEY=4 DJC_JOBS_RETRY_DELAY=0 "$DJC" populate JW --reserve-jobs --processes 2 --where '{"id":4}' --suppress-errors --json --make ./mk_die.sh
check "killed 3 times: three workers died on it, each on attempt 1" \
	[ "$(awk '$1 == "died" && $2 == 4 { print $3 }' log.JW | tr '\n' ' ')" = "1 1 1 " ]
check "killed 3 times: 2 retried, then 1 error" \
	[ "$RC/$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count,.retried_count]')" = '1/[0,1,2]' ]
last=$(awk '$1 == "died" && $2 == 4 { p = $4 } END { print p }' log.JW)
check "killed 3 times: the job is an error, lost 3, no attempt used" \
	[ "$(jw 4 '.job | [.status, .lost, .attempts]')" = '["error",3,0]' ]
check "killed 3 times: its message says so, naming the last worker" \
	sh -c 'printf "%s" "$1" | grep -q "^\"worker died 3 times on this job; last: host .*, pid $2, signal 9 (SIGKILL)\"$"' _ "$(jw 4 .job.error_message)" "$last"
check "killed 3 times: the summary's error says so too" \
	sh -c 'printf "%s" "$1" | grep -q "^worker died 3 times on this job; last: host .*, pid $2, signal 9 (SIGKILL)$"' _ "$(printf '%s' "$OUT" | jq -r '.errors[0].message')" "$last"
check "killed 3 times: history died, died, died" [ "$(jw 4 '[.history[] | .outcome] | join(",")')" = '"died,died,died"' ]
rm -f die.JW
}
tcase child_killed

case_version_git() {
# ---------------------------------------------------------------- version_method=git
mkdir -p repo
( cd repo && git init -q . && echo x > f && git add f && git -c user.name=t -c user.email=t@example.com commit -q -m init ) >/dev/null 2>&1
sha=$(cd repo && git rev-parse --short HEAD)
check "git repository made" [ -n "$sha" ]
(cd repo && DJC_JOBS_VERSION_METHOD=git DJC_JOBS_KEEP_COMPLETED=true "$DJC" populate J --reserve-jobs --no-refresh --make "$T/mk.sh" >/dev/null)
djc delete J --where '{"id":1}' >/dev/null
(cd repo && DJC_JOBS_VERSION_METHOD=git DJC_JOBS_KEEP_COMPLETED=true "$DJC" populate J --reserve-jobs --make "$T/mk.sh" >/dev/null)
check "version records the short commit" [ "$(djc jobs J --status success --json | jq -r '.jobs[] | .version')" = "$sha" ]
}
tcase version_git sigterm

case_config() {
# ---------------------------------------------------------------- djc config
mkdir -p cfg
cat > cfg/djc.json <<'P'
{"jobs": {"keep_completed": true, "stale_timeout": 100}}
P
(cd cfg && DJC_JOBS_DEFAULT_PRIORITY=3 "$DJC" config) > cfg.out 2>&1
check "config: file setting and its source" grep -Eq '^jobs\.keep_completed +true +\(djc\.json\)$' cfg.out
check "config: file number" grep -Eq '^jobs\.stale_timeout +100 +\(djc\.json\)$' cfg.out
check "config: environment" grep -Eq '^jobs\.default_priority +3 +\(environment\)$' cfg.out
check "config: default" grep -Eq '^jobs\.auto_refresh +true +\(default\)$' cfg.out
run bash -c "cd cfg && DJC_JOBS_KEEP_COMPLETED=false \"$DJC\" config --json"
check "config --json: environment overrides the file" [ "$(printf '%s' "$OUT" | jq -c '.["jobs.keep_completed"]')" = '{"value":false,"source":"environment"}' ]
check "config --json: database.url from the environment" [ "$(printf '%s' "$OUT" | jq -r '.["database.url"].source')" = environment ]
# and the file's settings take effect: keep_completed from djc.json
(cd cfg && "$DJC" populate JX --reserve-jobs --where '{"id":3}' --make "$T/mk.sh" >/dev/null)
check "djc.json keep_completed applies" [ "$(djc jobs JX --status success --json | jq -c '.jobs[] | .id')" = 3 ]
echo '{"jobs": {"nope": 1}}' > cfg/djc.json
run bash -c "cd cfg && \"$DJC\" config"
check "config: unknown setting is an error" [ "$RC" = 2 ]
}
tcase config version_git

case_status_json() {
# ---------------------------------------------------------------- jobs --status --json: one object
{ cat p.djc; printf '\nJO (computed)\n    -> Src\n    ---\n    v : int64\n'; } > p2.djc
expect_rc 0 "declare one more table" djc declare p2.djc
expect_out "JO refresh" '{"table":"JO","added":10,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh JO --json
run djc jobs JO --status pending --json
check "--status --json is one JSON object (one line, one value)" \
	[ "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')/$(printf '%s' "$OUT" | jq -s length)" = 1/1 ]
check "--status --json: table, status and the jobs array" \
	[ "$(printf '%s' "$OUT" | jq -c '[.table, .status, (.jobs | length), (.jobs | map(.id) | sort)]')" = '["JO","pending",10,[1,2,3,4,5,6,7,8,9,10]]' ]
expect_out "--status --json with no such job: an empty array" '{"table":"JO","status":"reserved","jobs":[]}' djc jobs JO --status reserved --json
run djc populate JO --reserve-jobs --suppress-errors --make ./mk_fail4.sh
run djc jobs JO --status error --json
check "--status error --json: the job objects keep their fields" \
	[ "$(printf '%s' "$OUT" | jq -c '[.status, (.jobs | length), (.jobs[0] | [.id, .status, .priority, .error_message, (.error_stack | test("boom for 4")), has("reserved_time"), has("host"), has("reservations")])]')" = '["error",1,[4,"error",5,"make exited with status 3: boom for 4",true,true,true,true]]' ]
expect_out "--status success --json without keep_completed: no jobs" '{"table":"JO","status":"success","jobs":[]}' djc jobs JO --status success --json
expect_out "jobs --json (counts) is unchanged" '{"table":"JO","pending":0,"reserved":0,"success":0,"error":1,"ignore":0,"total":1}' djc jobs JO --json
}
tcase status_json config

finish
