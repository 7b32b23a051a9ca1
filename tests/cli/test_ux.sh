#!/bin/bash
# test_ux.sh - inspecting a pipeline from the command line: the text error
# listing with each error's stack, djc diagram (DOT, SVG through Graphviz),
# and djc progress without a table (every computed/imported table in
# dependency order, --watch).
. "$ROOT/tests/cli/lib.sh"
py() { python3 -c "$@"; }

cat > p.djc <<'P'
A (manual)
    id : int32
    ---
B (computed)
    -> A
    ---
    y : int32
P
expect_rc 0 "declare" djc declare p.djc
printf '{"id": 1}\n{"id": 2}\n' | djc insert A >/dev/null
cat > fail.sh <<'S'
#!/bin/sh
cat >/dev/null
echo "first line of stderr" >&2
printf 'second\tline\n\n' >&2
exit 3
S
chmod +x fail.sh
expect_rc 1 "populate with a failing make" djc populate B --reserve-jobs --suppress-errors --make ./fail.sh

case_error_listing() {
# ------------------------------------------------------ the error listing
run djc jobs B --status error
check "one line per job starts with its key" test "$(printf '%s\n' "$OUT" | grep -c '^{')" = 2
check "the message is on the job's line" eval 'printf "%s\n" "$OUT" | grep -q "^{\"id\": 1}.*error_message=make exited with status 3"'
check "the stack follows, indented, line by line" eval 'printf "%s\n" "$OUT" | grep -A3 "^{\"id\": 1}" | sed -n 2,4p | tr -d "\n" | grep -qx "    stack:      first line of stderr      second line"'
check "no stack lines for jobs without a stack" eval 'djc jobs B --status pending | grep -vc "^{" | grep -qx 0'
run djc jobs B --status error
key=$(printf '%s\n' "$OUT" | grep '^{' | head -1 | sed 's/}  .*/}/')
expect_rc 0 "the listed key pastes into jobs ignore" djc jobs ignore B "$key"
}
tcase error_listing

case_diagram() {
# ------------------------------------------------------------- diagram
cat > p2.djc <<'P'
L (lookup)
    l : int32
    ---
C (computed)
    -> B
    ---
    z : int32
C.Part (part)
    -> C
    k : int32
    ---
D (imported)
    -> A
    ---
    -> L
P
expect_rc 0 "declare more tables" djc declare p2.djc
run djc diagram
check "diagram: DOT text" eval 'printf "%s\n" "$OUT" | head -1 | grep -qx "digraph pipeline {" && printf "%s\n" "$OUT" | tail -1 | grep -qx "}"'
check "diagram: one node per table, styled by tier" eval 'test "$(printf "%s\n" "$OUT" | grep -c "tooltip=")" = 6 &&
	printf "%s\n" "$OUT" | grep -q "^	\"A\" \[shape=box.*tooltip=\"manual\"" &&
	printf "%s\n" "$OUT" | grep -q "^	\"L\" \[shape=plaintext.*tooltip=\"lookup\"" &&
	printf "%s\n" "$OUT" | grep -q "^	\"D\" \[shape=ellipse.*tooltip=\"imported\"" &&
	printf "%s\n" "$OUT" | grep -q "^	\"C\" \[shape=ellipse.*tooltip=\"computed\""'
check "diagram: edges (primary solid, secondary dashed, part tied to its master)" eval '
	printf "%s\n" "$OUT" | grep -qx "	\"A\" -> \"B\";" && printf "%s\n" "$OUT" | grep -qx "	\"B\" -> \"C\";" &&
	printf "%s\n" "$OUT" | grep -qx "	\"L\" -> \"D\" \[style=dashed\];" &&
	printf "%s\n" "$OUT" | grep -q "^	\"C\" -> \"C.Part\" \[color" && test "$(printf "%s\n" "$OUT" | grep -c -- "->")" = 5'
expect_out "diagram --format dot is the default" "$OUT" djc diagram --format=dot
run djc diagram --format svg
check "diagram --format svg: SVG from Graphviz, a node per table" eval 'printf "%s\n" "$OUT" | grep -q "^<svg" && test "$(printf "%s\n" "$OUT" | grep -c "<g id=\"node")" = 6'
expect_fail 1 "diagram --format svg without Graphviz says what to install" "^djc: diagram --format svg needs Graphviz's dot program.*install graphviz" \
	env PATH=/nonexistent "$DJC" diagram --format svg
expect_fail 2 "diagram --format png" "^djc: --format must be dot or svg, got 'png'$" djc diagram --format png
expect_fail 2 "diagram takes no table" "^djc: diagram takes no arguments" djc diagram B
}
tcase diagram

case_progress() {
# ------------------------------------------------ progress of everything
run djc progress
check "progress without a table: the computed and imported tables in dependency order" \
	eval 'test "$(printf "%s\n" "$OUT" | cut -d" " -f1 | tr "\n" " ")" = "B C D "'
check "progress: bar, counts, errors and ignored jobs" eval 'printf "%s\n" "$OUT" | grep -Eq "^B +\[\.+\] 0/2 +0\.0%  errors 1, ignored 1, reserved 0, pending 0$"'
check "progress: a table without keys has an empty bar and no percentage" \
	eval 'printf "%s\n" "$OUT" | grep -Eq "^C +\[\.+\] 0/0 +--  errors 0, ignored 0, reserved 0, pending 0$"'
expect_out "progress TABLE without keys" "C: Completed 0 of 0 (no keys in its key source)" djc progress C
run djc tables --json
check "tables --json: each table with its tier, key and parents" eval 'test "$(printf "%s" "$OUT" | jq -c "[.tables[] | [.name, .tier, .key, [.parents[].name]]]")" = "[[\"A\",\"manual\",[\"id\"],[]],[\"B\",\"computed\",[\"id\"],[\"A\"]],[\"L\",\"lookup\",[\"l\"],[]],[\"C\",\"computed\",[\"id\"],[\"B\"]],[\"C.Part\",\"part\",[\"id\",\"k\"],[\"C\"]],[\"D\",\"imported\",[\"id\"],[\"A\",\"L\"]]]"'
run djc progress --json
check "progress --json: the time of the snapshot, UTC" eval 'printf "%s" "$OUT" | jq -e ".time | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$\")" >/dev/null'
check "progress --json: every table" eval 'test "$(printf "%s" "$OUT" | jq -c "[.tables[] | [.table, .total, .remaining, .error]]")" = "[[\"B\",2,2,1],[\"C\",0,0,0],[\"D\",2,2,0]]"'
expect_fail 2 "progress --where without a table" "^djc: --where needs a TABLE" djc progress --where '{"id": 1}'
expect_fail 2 "progress TABLE --watch" "^djc: --watch follows every table" djc progress B --watch
expect_fail 2 "progress --interval without --watch" "^djc: --interval goes with --watch" djc progress --interval 1

# --watch, piped: a snapshot under a time line per interval, until SIGTERM;
# a change shows in a later snapshot (waits are for events, bounded)
"$DJC" progress --watch --interval 0.1 > watch.out 2>watch.err &
wpid=$!
wait_for() {  # CONDITION: polls up to 60 s
	for _ in $(seq 600); do eval "$1" && return 0; nap 0.1; done
	return 1
}
check "progress --watch: snapshots keep coming" wait_for 'test "$(grep -c "^== " watch.out)" -ge 2'
"$DJC" jobs clear B --status error >/dev/null
echo '{"l": 1}' | "$DJC" insert L >/dev/null
"$DJC" populate D --make sh -c 'cat >/dev/null; echo "{\"l\": 1}"' >/dev/null
check "progress --watch: a later snapshot shows the change" wait_for 'grep -Eq "^D +\[#+\] 2/2 100\.0%" watch.out'
kill -TERM $wpid; wait $wpid
wrc=$?
check "progress --watch ends on SIGTERM with status 0" test "$wrc" = 0
"$DJC" progress --watch --interval 0.1 --json > watchj.out 2>watchj.err &
wpid=$!
check "progress --watch --json: one object per snapshot, each with its time" \
	wait_for 'test "$(jq -c "select(.time and .tables) | 1" watchj.out 2>/dev/null | grep -c 1)" -ge 2'
kill -TERM $wpid; wait $wpid
check "progress --watch: every snapshot whole (3 lines each)" eval 'test "$(grep -vc "^== " watch.out)" = "$(( $(grep -c "^== " watch.out) * 3 ))"'

# --watch on a terminal: redrawn in place (cursor up over the last drawing)
cat > watchpty.py <<'PY'
import fcntl, os, pty, select, signal, struct, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    cols = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    os.execv(sys.argv[1], [sys.argv[1], "progress", "--watch", "--interval", "0.1"])
buf = b""
deadline = time.monotonic() + 60
while buf.count(b"\r\x1b[3A") < 2 and time.monotonic() < deadline:
    r, _, _ = select.select([fd], [], [], 1)
    if r:
        try:
            buf += os.read(fd, 4096)
        except OSError:
            break
os.kill(pid, signal.SIGINT)
os.waitpid(pid, 0)
sys.stdout.write(buf.decode("utf-8", "replace"))
PY
run python3 watchpty.py "$DJC" 30
pycheck "progress --watch on a 30-column terminal: no line wider than 29 columns" 'import re, sys
lines = re.sub(r"\x1b\[[0-9]*[AK]|\r", "", sys.argv[1]).split("\n")
sys.exit(0 if len(lines) >= 6 and max(len(l) for l in lines) <= 29 else 1)' "$OUT"
run python3 watchpty.py "$DJC"
check "progress --watch on a terminal: redrawn in place, no time lines" eval '
	test "$(printf "%s" "$OUT" | grep -c "$(printf "\r\033\\[3A")")" -ge 2 && ! printf "%s" "$OUT" | grep -q "^== "'
}
tcase progress diagram

case_grouped_errors() {
# ------------------------------------- every table's errors, grouped by message
cat > p3.djc <<'P'
E (computed)
    -> A
    ---
    y : int32
P
expect_rc 0 "declare E" djc declare p3.djc
cat > same.sh <<'S'
#!/bin/sh
cat >/dev/null
echo "Traceback: the same failure" >&2
exit 1
S
chmod +x same.sh
expect_rc 1 "E: two keys fail the same way" djc populate E --reserve-jobs --suppress-errors --make ./same.sh
expect_rc 1 "B: its error again" djc populate B --reserve-jobs --suppress-errors --make ./fail.sh
run djc jobs --status error
check "jobs --status error without a table: each table's errors grouped by message, no stack" test "$RC:$OUT" = '0:B: 1 error job, 1 message
       1  make exited with status 3: second line  (first {"id": 2})
E: 2 error jobs, 1 message
       2  make exited with status 1: Traceback: the same failure  (first {"id": 1})'
run djc jobs --status error --json
pycheck "...and as JSON" 'import json,sys; d = json.loads(sys.argv[1]); sys.exit(0 if d == {"status": "error", "tables": [
 {"table": "B", "count": 1, "messages": [{"message": "make exited with status 3: second\tline", "count": 1, "first": {"id": 2}}]},
 {"table": "E", "count": 2, "messages": [{"message": "make exited with status 1: Traceback: the same failure", "count": 2, "first": {"id": 1}}]}]} else 1)' "$OUT"
expect_out "jobs --status pending without a table: none" "no pending job in any table" djc jobs --status pending
expect_fail 2 "jobs without a table needs --status" "^djc: jobs needs a TABLE \(or --status STATUS alone" djc jobs --where '{"id": 1}'
}
tcase grouped_errors progress

case_empty_listing() {
# ------------------------------------- an empty listing says why, when it is not plain
run djc jobs E --status success
check "completed jobs are not kept: the empty listing says so" \
	test "$RC:$OUT:$ERR" = "0::djc: note: completed jobs are not kept (a job's row is deleted when its make commits) unless jobs.keep_completed is true"
run env DJC_JOBS_KEEP_COMPLETED=true "$DJC" jobs E --status success
check "...not when they are kept" test "$RC:$OUT:$ERR" = "0::"
run djc jobs D --status error
check "a table populated without --reserve-jobs: no job at all, and the note says why" \
	test "$RC:$OUT:$ERR" = "0::djc: note: D has no job at all: a job's row is deleted when its make commits (jobs.keep_completed is false), a populate without --reserve-jobs records no jobs (it printed its errors), and djc jobs refresh D adds the missing keys as jobs"
run env DJC_JOBS_KEEP_COMPLETED=true "$DJC" jobs D --status error
check "...with completed jobs kept, the note leaves that out" \
	test "$RC:$OUT:$ERR" = "0::djc: note: D has no job at all: a populate without --reserve-jobs records no jobs (it printed its errors), and djc jobs refresh D adds the missing keys as jobs"
run djc jobs E --status reserved
check "an empty listing of a table with jobs: no note" test "$RC:$OUT:$ERR" = "0::"
}
tcase empty_listing grouped_errors

finish
