#!/bin/bash
# test_output.sh - the text djc writes: floats in fetch (json, csv, table) as
# the shortest decimal text that reads back exactly, plain for ordinary
# magnitudes (docs/types.md), and read back by insert; the one stderr line of
# a populate whose makes failed, naming the first failed key; every --json
# output is JSON whatever the keys hold, and the keys of the text job
# listing paste back into `djc jobs ignore`; the progress bar fits the
# terminal and, in a log, writes a line at most every display.interval.
. "$ROOT/tests/cli/lib.sh"
py() { python3 -c "$@"; }

cat > p.djc <<'P'
F (manual)
    id : int32
    ---
    x : float64
    f : float32

F2 (manual)
    id : int32
    ---
    x : float64
    f : float32

Made (computed)
    -> F
    ---
    y : float64
P
expect_rc 0 "declare" djc declare p.djc

case_floats() {
# ---------------------------------------------------------------- floats
cat > f.jsonl <<'R'
{"id": 1, "x": 10, "f": 10}
{"id": 2, "x": 100, "f": 0.5}
{"id": 3, "x": 120, "f": 1.5}
{"id": 4, "x": 0.1, "f": -3.25}
{"id": 5, "x": 123456789.0, "f": 120}
{"id": 6, "x": 1e300, "f": 1e30}
{"id": 7, "x": 1e-10, "f": 0.1}
{"id": 8, "x": -3.25, "f": 0}
{"id": 9, "x": 1e16, "f": 1e15}
{"id": 10, "x": 0.0000001, "f": 1e-10}
{"id": 11, "x": 1e15, "f": 16777216}
{"id": 12, "x": 1.5, "f": 1e2}
R
expect_out "insert floats" "inserted 12 rows into F" djc insert F f.jsonl
expect_out "fetch --format json: plain for ordinary magnitudes, exponent for very large/small" \
'{"id":1,"x":10,"f":10}
{"id":2,"x":100,"f":0.5}
{"id":3,"x":120,"f":1.5}
{"id":4,"x":0.1,"f":-3.25}
{"id":5,"x":123456789,"f":120}
{"id":6,"x":1e+300,"f":1.0000000150474662e+30}
{"id":7,"x":1e-10,"f":0.10000000149011612}
{"id":8,"x":-3.25,"f":0}
{"id":9,"x":1e+16,"f":999999986991104}
{"id":10,"x":0.0000001,"f":1.000000013351432e-10}
{"id":11,"x":1000000000000000,"f":16777216}
{"id":12,"x":1.5,"f":100}' djc fetch F --format json
expect_out "fetch --format csv" \
'id,x,f
1,10,10
2,100,0.5
3,120,1.5
4,0.1,-3.25
5,123456789,120
6,1e+300,1.0000000150474662e+30
7,1e-10,0.10000000149011612
8,-3.25,0
9,1e+16,999999986991104
10,0.0000001,1.000000013351432e-10
11,1000000000000000,16777216
12,1.5,100' djc fetch F --format csv
run djc fetch F --where '{"id": [1, 3, 5]}'
pycheck "fetch --format table: plain numbers" 'import sys
rows = [l.split() for l in sys.argv[1].splitlines()[2:5]]
sys.exit(0 if rows == [["1", "10", "10"], ["3", "120", "1.5"], ["5", "123456789", "120"]] else 1)' "$OUT"
# what fetch writes, insert reads back to the same bits
run sh -c '"$DJC" fetch F --format json | "$DJC" insert F2'
check "fetch --format json | insert reads every float back" test "$RC" = 0
check "the copy prints the same" test "$(djc fetch F2 --format json)" = "$(djc fetch F --format json)"
pycheck "the copy holds the same doubles" 'import json,sys
a = [json.loads(l) for l in sys.argv[1].splitlines()]
b = [json.loads(l) for l in sys.argv[2].splitlines()]
sys.exit(0 if a == b and len(a) == 12 else 1)' "$(djc fetch F --format json)" "$(djc fetch F2 --format json)"
pycheck "python reads 10 and 1e+16 as the stored numbers" 'import json,sys
r = {json.loads(l)["id"]: json.loads(l) for l in sys.argv[1].splitlines()}
sys.exit(0 if r[1]["x"] == 10.0 and r[9]["x"] == 1e16 and r[6]["x"] == 1e300 and r[10]["x"] == 1e-7 else 1)' "$(djc fetch F --format json)"
check "--where matches a float written in plain text" test "$(count F '{"x": 120}')" = 1

# what fetch --format csv writes, insert reads back: every type, NULL apart
# from an empty text, quotes, commas and line breaks
cat > csv.djc <<'P'
Every (manual)
    id : int32
    ---
    name : varchar(32)
    note = null : varchar(64)
    score = 1.5 : float64
    ok : bool
    big : uint64
    amount = null : decimal(8,3)
    params = null : json
    raw = null : bytes
    day = null : date
    at = null : datetime(3)
    uid = null : uuid

Every2 (manual)
    id : int32
    ---
    name : varchar(32)
    note = null : varchar(64)
    score = 1.5 : float64
    ok : bool
    big : uint64
    amount = null : decimal(8,3)
    params = null : json
    raw = null : bytes
    day = null : date
    at = null : datetime(3)
    uid = null : uuid
P
expect_rc 0 "declare tables of every kind of value" djc declare csv.djc
cat > every.jsonl <<'R'
{"id": 1, "name": "Smith, J.", "note": "says \"hi\"", "score": 0.1, "ok": true, "big": "18446744073709551615", "amount": "12.340", "params": {"a": [1, 2.5], "b": "x,y"}, "raw": "AAEC/w==", "day": "2026-02-28", "at": "2026-02-28 12:34:56.789", "uid": "0f0e0d0c-0b0a-0908-0706-050403020100"}
{"id": 2, "name": "", "note": "", "score": -1e+300, "ok": false, "big": 0, "params": "just text", "raw": ""}
{"id": 3, "name": "two\nlines", "note": null, "ok": true, "big": 5, "params": [1, "two"]}
R
expect_out "insert them" "inserted 3 rows into Every" djc insert Every every.jsonl
run sh -c '"$DJC" fetch Every --format csv > every.csv && "$DJC" insert Every2 every.csv'
check "fetch --format csv | insert: read back" test "$RC:$OUT" = "0:inserted 3 rows into Every2"
check "...the same rows, as JSON" test "$(djc fetch Every2 --format json)" = "$(djc fetch Every --format json)"
check "...an empty text is \"\" in CSV, NULL an empty field" grep -q '^2,"","",' every.csv
run sh -c '"$DJC" fetch Every --format csv | "$DJC" insert Every2 --format csv --skip-duplicates'
check "CSV on stdin with --format csv" test "$RC:$OUT" = "0:inserted 0 rows into Every2"
}
tcase floats

case_failure_line() {
# ---------------------------------------------------------------- populate: the failure line names the key
cat > mk.sh <<'P'
#!/bin/sh
case $DJC_KEY_id in
3|4|5) echo "first line" >&2; echo "boom for $DJC_KEY_id" >&2; exit 3 ;;
esac
echo '{"y": 1.5}'
P
chmod +x mk.sh
run djc populate Made --suppress-errors --make ./mk.sh
check "three failed makes: exit 1" test "$RC" = 1
check "three failed makes: one stderr line naming the first key and how many more" \
	test "$ERR" = 'djc: 3 make calls of Made failed; first {"id": 3} (2 more): make exited with status 3: boom for 3'
check "stdout still lists every error" test "$(printf '%s\n' "$OUT" | grep -c '^error {"id": [345]}: make exited with status 3: boom for [345]$')" = 3
run djc populate Made --where '{"id": 4}' --make ./mk.sh
check "one failed make: exit 1" test "$RC" = 1
check "one failed make: the line names its key" \
	test "$ERR" = 'djc: 1 make call of Made failed; key {"id": 4}: make exited with status 3: boom for 4'
run djc populate Made --reserve-jobs --suppress-errors --json --make ./mk.sh
pycheck "with --reserve-jobs --json: stdout is one JSON object" 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d["error_count"] == 3 else 1)' "$OUT"
# the order jobs are reserved in is the server's: any of the three keys may be first, with its own message
check "with --reserve-jobs --json: one stderr line naming the first key" sh -c '[ "$(printf "%s\n" "$1" | wc -l)" = 1 ] &&
	printf "%s" "$1" | grep -Eq "^djc: 3 make calls of Made failed; first \{\"id\": ([345])\} \(2 more\): make exited with status 3: boom for \1\$"' _ "$ERR"
check "made rows print plain floats" test "$(djc fetch Made --where '{"id": 1}' --format json)" = '{"id":1,"y":1.5}'
}
tcase failure_line floats

case_error_lines() {
# ---------------------------------------------------------------- populate: one stdout line per failed make
# A make's message may hold a newline (a serve program's error message),
# a tab or a terminal escape (a make program's last stderr line): the
# error lines on stdout stay one line each, as `djc worker` prints them.
cat > esc.sh <<'P'
#!/bin/sh
printf 'red\t\033[31mboom\n' >&2
exit 3
P
cat > nl.py <<'P'
import json, sys
sys.stdin.readline()
print(json.dumps({"_djc": "hello", "version": 1}), flush=True)
for line in sys.stdin:
    print(json.dumps({"_djc": "error", "message": "line one\nline two"}), flush=True)
P
chmod +x esc.sh
run djc populate Made --where '{"id": 4}' --make ./esc.sh
check "a tab and an escape in the message: exit 1" test "$RC" = 1
check "...its stdout error line has neither" test "$(printf '%s\n' "$OUT" | grep -c '^error {"id": 4}: make exited with status 3: red  \[31mboom$')" = 1
run djc populate Made --where '{"id": 4}' --make-serve python3 nl.py
check "a newline in a serve program's message: exit 1" test "$RC" = 1
check "...stays on its error line" test "$(printf '%s\n' "$OUT" | grep -c '^error {"id": 4}: line one line two$'):$(printf '%s\n' "$OUT" | wc -l)" = 1:2
}
tcase error_lines failure_line

case_write_errors() {
# ---------------------------------------------------------------- output that cannot be written
# A full disk is a failure, not a success with a short file: exit 1 and
# one line naming it. A reader that went away (| head) ends djc as
# SIGPIPE ends any program, on every backend (MariaDB's client library
# ignores SIGPIPE in its process).
run sh -c '"$DJC" fetch F --format csv > /dev/full'
check "fetch to a full disk: exit 1" test "$RC" = 1
check "...with one line naming it" test "$ERR" = "djc: cannot write the output: No space left on device"
run sh -c '"$DJC" progress Made --json > /dev/full'
check "progress --json to a full disk: exit 1" test "$RC" = 1
run py 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run([os.environ["DJC"], "fetch", "F", "--format", "csv"], stdout=w)
print(p.returncode)'
check "fetch into a pipe nobody reads: ended by SIGPIPE" test "$OUT" = -13
run py 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run([os.environ["DJC"], "populate", "Made", "--json", "--make", "true"], stdout=w)
print(p.returncode)'
check "populate into a pipe nobody reads: ended by SIGPIPE too" test "$OUT" = -13
}
tcase write_errors error_lines

case_json_escaping() {
# ---------------------------------------------------------------- JSON output, keys that need escaping
cat > q.djc <<'P'
Q (manual)
    k : varchar(32)
    ---

QMade (computed)
    -> Q
    ---
    v : int32
P
expect_rc 0 "declare Q" djc declare q.djc
cat > q.jsonl <<'R'
{"k": "a\"b"}
{"k": "back\\slash"}
{"k": "tab\there"}
{"k": "new\nline"}
{"k": "ünï {}"}
R
expect_out "insert keys that need escaping" "inserted 5 rows into Q" djc insert Q q.jsonl
cat > qmk.sh <<'P'
#!/bin/sh
printf 'first line\nbad "quote" \\ back\n' >&2
exit 3
P
chmod +x qmk.sh
keys_ok='import json,sys
want = {"a\"b", "back\\slash", "tab\there", "new\nline", "ünï {}"}'
run djc populate QMade --reserve-jobs --suppress-errors --json --make ./qmk.sh
pycheck "populate --json: one JSON object with every failed key" "$keys_ok"'
d = json.loads(sys.argv[1])
sys.exit(0 if d["table"] == "QMade" and d["error_count"] == 5 and {e["key"]["k"] for e in d["errors"]} == want
         and all(e["message"].startswith("make exited with status 3: ") for e in d["errors"]) else 1)' "$OUT"
run djc progress QMade --json
pycheck "progress TABLE --json: the fields of progress --json" 'import json,sys; d = json.loads(sys.argv[1]); sys.exit(0 if d == {"table": "QMade", "remaining": 5, "total": 5, "pending": 0, "reserved": 0, "success": 0, "error": 5, "ignore": 0} else 1)' "$OUT"
run djc progress --json
pycheck "...as each table of progress --json has" 'import json,sys; d = json.loads(sys.argv[1]); sys.exit(0 if [t for t in d["tables"] if t["table"] == "QMade"] == [{"table": "QMade", "remaining": 5, "total": 5, "pending": 0, "reserved": 0, "success": 0, "error": 5, "ignore": 0}] else 1)' "$OUT"
run djc jobs QMade --json
pycheck "jobs --json: the counts" 'import json,sys; d = json.loads(sys.argv[1]); sys.exit(0 if d == {"table": "QMade", "pending": 0, "reserved": 0, "success": 0, "error": 5, "ignore": 0, "total": 5} else 1)' "$OUT"
run djc jobs QMade --status error --json
pycheck "jobs --status error --json: every job, its key and message" "$keys_ok"'
d = json.loads(sys.argv[1])
sys.exit(0 if d["table"] == "QMade" and d["status"] == "error" and {j["k"] for j in d["jobs"]} == want
         and all(j["error_message"] == "make exited with status 3: bad \"quote\" \\ back" and j["error_stack"].startswith("first line\n") for j in d["jobs"]) else 1)' "$OUT"
run djc jobs refresh QMade --json
pycheck "jobs refresh --json" 'import json,sys; d = json.loads(sys.argv[1]); sys.exit(0 if list(d) == ["table", "added", "removed", "orphaned", "re_pended"] and d["table"] == "QMade" else 1)' "$OUT"
run djc config --json
pycheck "config --json: values typed by their setting" 'import json,sys; d = json.loads(sys.argv[1]); sys.exit(0 if d["jobs.lease_timeout"] == {"value": 60, "source": "default"}
and d["jobs.keep_completed"]["value"] is False and d["jobs.version_method"]["value"] == "none" and d["database.schema"]["value"] == (sys.argv[2] or "") else 1)' "$OUT" "$DJC_DATABASE_SCHEMA"
run env DJC_JOBS_RETRY_DELAY=0.5 DJC_JOBS_AUTO_REFRESH=no "$DJC" config --json
pycheck "config --json: a fraction and a bool written as no" 'import json,sys; d = json.loads(sys.argv[1]); sys.exit(0 if d["jobs.retry_delay"]["value"] == 0.5 and d["jobs.auto_refresh"]["value"] is False else 1)' "$OUT"
expect_fail 2 "a table name with a quote: one error line" '^djc: unknown table "Q\\"x" ' djc progress 'Q"x' --json
check "...and nothing on stdout" test -z "$OUT"

# the text listing: one line per job, its key first as JSON to paste back;
# an error's stack below it on indented lines (here "stack:" and two lines)
run djc jobs QMade --status error
check "text listing: one line per job, newlines in messages and keys escaped" test "$(printf '%s\n' "$OUT" | grep -c '^{')" = 5
check "text listing: each job's stack on 3 indented lines, nothing else" \
	test "$(printf '%s\n' "$OUT" | grep -c '^    ')" = 15 -a "$(printf '%s\n' "$OUT" | grep -c .)" = 20
pycheck "text listing: each job line starts with its key as JSON" "$keys_ok"'
dec = json.JSONDecoder()
keys = [dec.raw_decode(l)[0] for l in sys.argv[1].splitlines() if not l.startswith(" ")]
sys.exit(0 if {k["k"] for k in keys} == want and all(list(k) == ["k"] for k in keys) else 1)' "$OUT"
printf '%s\n' "$OUT" | python3 -c 'import json,sys
dec = json.JSONDecoder()
for l in sys.stdin.read().splitlines():
    if l.startswith(" "): continue   # a stack line
    k, end = dec.raw_decode(l)
    print(l[:end])' > listed-keys
while IFS= read -r key; do
	run djc jobs ignore QMade "$key"
	check "the listed key $key pastes into jobs ignore" test "$RC:$OUT" = "0:QMade: ignoring $key"
done < listed-keys
expect_out "every listed key is now ignored" '{"table":"QMade","pending":0,"reserved":0,"success":0,"error":0,"ignore":5,"total":5}' djc jobs QMade --json

# keys named like the jobs table's own columns (status, host) and the
# history's (attempt, outcome): the text shows the key whole, then the
# job's values, as --json does
cat > n.djc <<'P'
N (manual)
    status : int32
    host : varchar(8)
    attempt : int32
    outcome : varchar(8)
    ---

NMade (computed)
    -> N
    ---
    v : int32
P
expect_rc 0 "declare keys named status, host, attempt and outcome" djc declare n.djc
echo '{"status": 7, "host": "h1", "attempt": 9, "outcome": "o"}' | djc insert N >/dev/null
expect_rc 1 "populate NMade with a failing make" djc populate NMade --reserve-jobs --suppress-errors --make ./qmk.sh
jhost=$(djc jobs NMade --status error --json | jq -r '.jobs[0]._host')
nkey='{"status": 7, "host": "h1", "attempt": 9, "outcome": "o"}'
run djc jobs NMade --status error
check "a key named status: the job line starts with the whole key, then the job's status" \
	eval 'printf "%s\n" "$OUT" | head -1 | grep -qF "$nkey  status=error  "'
check "...and the job's host, not the key's" eval 'printf "%s\n" "$OUT" | head -1 | grep -qF "  host=$jhost  "'
run djc jobs NMade --key "$nkey"
check "jobs --key: the job line as in the listing" eval 'printf "%s\n" "$OUT" | head -1 | grep -qF "$nkey  status=error  "'
check "jobs --key: the history line shows the attempt's number, outcome and host, not the key's" \
	eval 'printf "%s\n" "$OUT" | grep -qF "  attempt 1:  outcome=error  host=$jhost  "'
run djc jobs NMade --key "$nkey" --json
check "jobs --key --json: fencing tokens as strings of digits (jq would round a 63-bit number)" \
	eval 'printf "%s" "$OUT" | jq -e "(.job.token | test(\"^[0-9]+\$\")) and ([.history[].token | type] == [\"string\"])" >/dev/null'
run djc jobs NMade --status error --json
check "jobs --status --json: the token as a string" eval 'printf "%s" "$OUT" | jq -e ".jobs[0].token | type == \"string\"" >/dev/null'
key=$(djc jobs NMade --status error | head -1 | python3 -c 'import json,sys; l = sys.stdin.read(); print(l[:json.JSONDecoder().raw_decode(l)[1]])')
expect_out "the listed key pastes into jobs ignore" "NMade: ignoring $nkey" djc jobs ignore NMade "$key"
}
tcase json_escaping failure_line

case_progress_bar() {
# ---------------------------------------------------------------- the progress bar
cat > long.djc <<'P'
AVeryLongComputedTableNameForTheProgressBar (computed)
    -> F
    ---
    z : int32
P
expect_rc 0 "declare a table with a long name" djc declare long.djc
cat > slow.sh <<'P'
#!/bin/sh
sleep 0.1
echo '{"z": 1}'
P
chmod +x slow.sh
# on a terminal (a pty of a given width): never wider than the terminal
# less one column, so it never wraps; no escape sequences (no colour)
cat > onpty.py <<'P'
import os, pty, sys, struct, fcntl, termios
cols, out = int(sys.argv[1]), sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(2, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
    os.environ.pop("COLUMNS", None)
    os.execvp(sys.argv[3], sys.argv[3:])
data = b""
while True:
    try:
        b = os.read(fd, 4096)
    except OSError:
        break
    if not b:
        break
    data += b
_, st = os.waitpid(pid, 0)
sys.stdout.buffer.write(data)
sys.exit(os.WEXITSTATUS(st))
P
fits='import re,sys
cols, data = int(sys.argv[1]), sys.argv[2]
segs = [s for s in re.split("[\r\n]", data) if s]
ok = segs and "\x1b" not in data and all(len(s) <= cols - 1 for s in segs)
last = [s for s in segs if s.strip()][-1] if segs else ""
ok = ok and "100%" in last and "12/12" in last
full = "AVeryLongComputedTableNameForTheProgressBar"
if cols < 20: ok = ok and full not in data
elif cols < 100: ok = ok and "..." in last and full not in data
else: ok = ok and last.startswith(full + ": 100%|" + "#" * 20 + "| 12/12 [")
sys.exit(0 if ok else 1)'
for cols in 200 80 45 24 12; do
	djc delete AVeryLongComputedTableNameForTheProgressBar > /dev/null
	run python3 onpty.py "$cols" pty.out "$DJC" populate AVeryLongComputedTableNameForTheProgressBar --display-progress --make ./slow.sh
	check "progress on a $cols-column terminal: populate ran" test "$RC:$(cat pty.out)" = "0:AVeryLongComputedTableNameForTheProgressBar: 12 made, 0 errors, 0 skipped"
	pycheck "progress on a $cols-column terminal: every line fits, the name shortened" "$fits" "$cols" "$OUT"
done
# in a log: the final line, and a line at most every display.interval seconds
run djc config --json
pycheck "display.interval is 30 s by default" 'import json,sys; d = json.loads(sys.argv[1]); sys.exit(0 if d["display.interval"] == {"value": 30, "source": "default"} else 1)' "$OUT"
djc delete AVeryLongComputedTableNameForTheProgressBar > /dev/null
run env DJC_DISPLAY_INTERVAL=86400 "$DJC" populate AVeryLongComputedTableNameForTheProgressBar --display-progress --make ./slow.sh
check "piped, a long interval: only the final line" test "$(printf '%s\n' "$ERR" | grep -c .)" = 1
check "...which is the whole bar, name unshortened" grep -Eq '^AVeryLongComputedTableNameForTheProgressBar: 100%\|#{20}\| 12/12 \[[0-9:]+<[0-9:?]+, [0-9.]+ keys/s, 0 errors\]$' <<< "$ERR"
djc delete AVeryLongComputedTableNameForTheProgressBar > /dev/null
run env DJC_DISPLAY_INTERVAL=0 "$DJC" populate AVeryLongComputedTableNameForTheProgressBar --display-progress --make ./slow.sh
n=$(printf '%s\n' "$ERR" | grep -c .)
check "piped, interval 0: a line per change of the counts (got $n)" test "$n" -ge 3 -a "$n" -le 13
check "...no carriage returns in a log" sh -c '! printf "%s" "$1" | grep -q "$(printf "\r")"' _ "$ERR"
check "...ending with the final line" sh -c 'printf "%s\n" "$1" | tail -1 | grep -q " 100%|#*| 12/12 \["' _ "$ERR"
check "...written once (it was repeated when the last change had shown it)" test "$(printf '%s\n' "$ERR" | grep -c ' 12/12 \[')" = 1
expect_fail 2 "display.interval is checked" "^djc: environment variable DJC_DISPLAY_INTERVAL \(display\.interval\) must be a number of seconds from 0 to 86400, got '-1'$" \
	env DJC_DISPLAY_INTERVAL=-1 "$DJC" populate AVeryLongComputedTableNameForTheProgressBar --make ./slow.sh
# the bar's total: the jobs this run can take now, not another worker's
# reservation nor jobs due later; a run that took all it could ends full
cat > tot.djc <<'P'
Tot (computed)
    -> F
    ---
    z : int32
P
expect_rc 0 "declare Tot" djc declare tot.djc
expect_out "12 jobs" "Tot: added 12, removed 0, orphaned 0, re_pended 0" djc jobs refresh Tot
expect_out "2 of them due in an hour" "Tot: updated 2 pending jobs" djc jobs set Tot --where '{"id": [1, 2]}' --delay 3600
cat > hold.sh <<'P'
#!/bin/sh
cat >/dev/null
touch held
while [ ! -e release ]; do sleep 0.1; done
echo '{"z": 1}'
P
chmod +x hold.sh
"$DJC" populate Tot --reserve-jobs --no-refresh --where '{"id": 3}' --make ./hold.sh > hold.out 2>&1 &
hpid=$!
wait_for() { for _ in $(seq 600); do eval "$1" && return 0; nap 0.1; done; return 1; }
check "another worker holds one job" wait_for 'test -e held'
run env DJC_DISPLAY_INTERVAL=0 "$DJC" populate Tot --reserve-jobs --no-refresh --display-progress --make ./slow.sh
check "the other 9 are made" test "$RC:$OUT" = "0:Tot: 9 made, 0 errors, 0 skipped"
check "every line of the bar counts 9 jobs, not the 12 of the queue" \
	eval 'test "$(printf "%s\n" "$ERR" | grep -c " [0-9]*/9 \[")" = "$(printf "%s\n" "$ERR" | grep -c .)"'
check "...and it ends full" sh -c 'printf "%s\n" "$1" | tail -1 | grep -q "^Tot: 100%|#*| 9/9 \["' _ "$ERR"
touch release
wait $hpid
check "the other worker made its job" grep -q "^Tot: 1 made" hold.out
# two runs share the queue: each total counted what the other then took;
# each bar still ends full, as each run took all it could
cat > tot2.djc <<'P'
Tot2 (computed)
    -> F
    ---
    z : int32
P
expect_rc 0 "declare Tot2" djc declare tot2.djc
cat > both.sh <<'P'
#!/bin/sh
cat >/dev/null
touch "s.$DJC_KEY_id"
i=0
while [ "$(ls s.* | wc -l)" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.05
echo '{"z": 1}'
P
chmod +x both.sh
DJC_DISPLAY_INTERVAL=86400 "$DJC" populate Tot2 --reserve-jobs --display-progress --make ./both.sh > r1.out 2> r1.err &
p1=$!
check "the first run started a make" wait_for 'ls s.* >/dev/null 2>&1'
DJC_DISPLAY_INTERVAL=86400 "$DJC" populate Tot2 --reserve-jobs --display-progress --make ./both.sh > r2.out 2> r2.err
wait $p1
n1=$(sed -n 's/^Tot2: \([0-9]*\) made.*/\1/p' r1.out); n2=$(sed -n 's/^Tot2: \([0-9]*\) made.*/\1/p' r2.out)
check "the two runs made the 12 keys between them ($n1 + $n2)" test "$((n1 + n2))" = 12
check "each run's bar ends full (at its own count)" \
	eval 'tail -1 r1.err | grep -Eq "^Tot2: 100%\|#{20}\| ([0-9]+)/\1 \[" && tail -1 r2.err | grep -Eq "^Tot2: 100%\|#{20}\| ([0-9]+)/\1 \["'
# nothing due: populate says why it made nothing, and when the first is due
run djc populate Tot --reserve-jobs --no-refresh --make ./slow.sh
check "all jobs delayed: 0 made" test "$RC:$OUT" = "0:Tot: 0 made, 0 errors, 0 skipped"
check "...and a note: how many wait and when the first is due" \
	grep -Eq '^djc: note: no job of Tot was due: 2 pending jobs wait \(.*\); the first is due in ([0-9]+m[0-9]+s|1h00m) \([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8} UTC\)$' <<< "$ERR"
expect_out "due now, at priority 7" "Tot: updated 2 pending jobs" djc jobs set Tot --all --delay 0 --priority 7
run djc populate Tot --reserve-jobs --no-refresh --priority 3 --make ./slow.sh
check "above --priority: 0 made, and a note says so" \
	test "$RC:$OUT:$ERR" = "0:Tot: 0 made, 0 errors, 0 skipped:djc: note: 2 jobs of Tot are due but above --priority 3"
expect_out "made at their priority" "Tot: 2 made, 0 errors, 0 skipped" djc populate Tot --reserve-jobs --no-refresh --make ./slow.sh
run djc populate Tot --reserve-jobs --make ./slow.sh
check "nothing left: no note" test "$RC:$OUT:$ERR" = "0:Tot: 0 made, 0 errors, 0 skipped:"
# no keys: no percentage, an empty bar
run env DJC_DISPLAY_INTERVAL=0 "$DJC" populate Tot --display-progress --make ./slow.sh
check "a populate with no key: an empty bar at 0/0, no percentage" \
	sh -c 'printf "%s\n" "$1" | tail -1 | grep -Eq "^Tot:  --%\| {20}\| 0/0 \["' _ "$ERR"
}
tcase progress_bar json_escaping

finish
