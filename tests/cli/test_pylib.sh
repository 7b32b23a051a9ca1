#!/bin/bash
# test_pylib.sh - python/djc_lib.py: a Python make run in the worker's own
# process through libdjc (ctypes: djc_make_request, djc_make_insert_json,
# djc_make_error_stack), no make program, no pipe. Each Python run prints one
# JSON line (its result dict, what its makes saw), and makes log events to
# files, so the checks count events and compare values, never durations.
#   basic        populate: target and part rows committed; bytes values
#                (with NUL and newline, empty, 76,800 bytes) reach the make as
#                read-only memoryviews and come back stored byte for byte,
#                returned as bytes, bytearray, memoryview or the fetched
#                view itself; `djc populate` afterwards has nothing to make
#   errors       a make that raises: its own exception type in Python
#                (processes=1), MakeError with key and message (processes=3);
#                with suppress_errors and reserve_jobs the dict counts it,
#                error_list holds (key, "Boom: ..."), and the job is an
#                error with the Python traceback as its stack
#   procs        200 keys, processes=4, reserve_jobs: every key made once,
#                by more than one process; nothing remains
#   mixed        djc_lib.populate (processes=2) beside a `djc populate
#                --reserve-jobs --make-serve` worker on one table: both make
#                keys, every key made once in all
#   worker       djc_lib.worker(until_empty=True) makes the pending jobs and
#                stops for "empty"
#   bad_rows     a fetch of a table that is not upstream raises FetchError
#                naming both tables; a row with an unknown attribute, or text
#                for an int attribute, fails its key naming the attribute
#   interrupted  a make that sends its own process SIGINT is told
#                "interrupted" by fetch.cancelled(); it stops (raises, or
#                returns its row all the same: not committed); populate
#                raises KeyboardInterrupt; the job is an error "interrupted by
#                SIGINT" (history: interrupted), nothing of it committed, the
#                next key not started, Python's SIGINT handler back; SIGTERM:
#                SystemExit(143)
#   fence        a make's reads are checked at its commit, as every make's:
#                a row added by another session to what it read fails its
#                key ("upstream changed while make ran"), nothing committed
#   guards       what a sceptical review found: options a C field cannot
#                hold refused (not wrapped), a table name that is not a
#                str, an exception whose text cannot be had fails its key by
#                its type (a generator's row not committed), processes > 1
#                with a thread running refused (it hung), random reseeded in
#                each worker process, a fetched view kept to the exit reads
#                its bytes in an atexit handler, a too-big number in a json
#                attribute named as under serve, fetch.cancelled() under
#                djc_make.run too, a SQLite file that is not there refused
#                and not created
#   blob         <blob> attributes with numpy: the make gets ndarrays, returns
#                ndarrays, which are stored packed and read back equal
# The library is the djc under test's libdjc.so.0 (DJC_LIBRARY): under a
# sanitizer build (make check-san) Python loads that ASan library with the
# ASan runtime preloaded (lib.sh's ASAN_PRELOAD), leak checks off (the
# interpreter's own allocations at exit are not djc's).
. "$ROOT/tests/cli/lib.sh"
export PYTHONPATH="$ROOT/python"
PYENV=(DJC_LIBRARY="$(dirname "$DJC")/libdjc.so.0")
[ -n "$ASAN_PRELOAD" ] && PYENV+=(LD_PRELOAD="${ASAN_PRELOAD% }" ASAN_OPTIONS=detect_leaks=0)
# pyrun FILE ARGS...: run FILE with the Python of the suite (scripts/deps.txt:
# Debian's python3, which has numpy) and djc's library, as `run` runs a command
pyrun() { run env "${PYENV[@]}" python3 "$@"; }
jget() { jq -r "$1" 2>&1 <<<"$OUT"; }

cat > p.djc <<'P'
Item (manual)
    item_id : int32
    ---
    x : int32
    raw : longblob

Sq (computed)
    -> Item
    ---
    y : int32
    copy : longblob
    same : longblob

Sq.Part (part)
    j : int32
    ---
    z : int32

Err (computed)
    -> Item
    ---
    v : int32

Chk (computed)
    -> Item
    ---
    v : int32

Other (computed)
    -> Item
    ---
    w : int32

Intr (computed)
    -> Item
    ---
    v : int32

Wk (computed)
    -> Item
    ---
    v : int32

Many (manual)
    n : int32
    ---

Par (computed)
    -> Many
    ---
    pid : int32

Mix (computed)
    -> Many
    ---
    side : varchar(8)

Arr (manual)
    arr_id : int32
    ---
    a : <blob>

Dbl (computed)
    -> Arr
    ---
    d : <blob>
    s : float64

Gd (computed)
    -> Item
    ---
    v : int32

Kp (computed)
    -> Item
    ---
    v : int32

Js (computed)
    -> Item
    ---
    j : json

Cn (computed)
    -> Item
    ---
    v : int32

Rnd (computed)
    -> Many
    ---
    pid : int32
    f : float64

Fs (manual)
    id : int32
    ---
    x : int32

Fd (computed)
    -> Fs
    ---
    y : int32
P
expect_rc 0 "declare" djc declare p.djc
# Item's raw values: 1: NUL, newline and JSON-looking bytes; 2: empty; 3:
# 76,800 bytes (over djc_make's 64 KiB buffer reuse)
cat > raws.py <<'P'
def raw(i):
    return [b'\x00\n\xff{"a":1}\n', b"", bytes(range(256)) * 300][i - 1]
P
python3 -c 'import base64, json, raws
for i in (1, 2, 3):
    print(json.dumps({"item_id": i, "x": i + 1, "raw": base64.b64encode(raws.raw(i)).decode()}))' > items.jsonl
expect_out "insert 3 items" "inserted 3 rows into Item" djc insert Item items.jsonl
for ((i = 1; i <= 200; i++)); do printf '{"n": %d}\n' "$i"; done > many.jsonl
expect_out "insert 200 keys" "inserted 200 rows into Many" djc insert Many many.jsonl

case_basic() {
cat > basic.py <<'P'
import json, djc_lib
seen = {}
def make(key, fetch):
    i = key["item_id"]
    it = fetch("Item", key)
    assert len(it) == 1, it
    raw = it[0]["raw"]
    seen[i] = "%s %s %d" % (type(raw).__name__, raw.readonly, raw.nbytes)
    rev = bytes(raw)[::-1] + b"\x00\n"
    # bytes; a view over bytes backwards (strided: its bytes in its own
    # order); a view into a bytearray past its start (no copy)
    copy = [rev, memoryview(rev[::-1])[::-1], memoryview(bytearray(b"--" + rev))[2:]][i - 1]
    return [{"y": it[0]["x"] ** 2, "copy": copy, "same": raw}] + \
        [{"_part": "Part", "j": j, "z": 10 * i + j} for j in range(i)]
r = djc_lib.populate("Sq", make)
print(json.dumps({"r": r, "seen": seen}))
P
pyrun basic.py
check "basic: populate ran (exit $RC)" test "$RC" = 0
jqcheck "basic: 3 made, nothing else counted" \
	'.r | "\(.success_count) \(.error_count) \(.skipped_count) \(.lost_count) \(.interrupted) \(.error_list)"' "3 0 0 0 0 []"
jqcheck "basic: the make got bytes values as read-only memoryviews" '.seen | [.["1"], .["2"], .["3"]] | join(",")' \
	"memoryview True 11,memoryview True 0,memoryview True 76800"
expect_out "basic: target rows" "1 4
2 9
3 16" sh -c '"$DJC" fetch Sq --format json | jq -r "\"\(.item_id) \(.y)\""'
expect_out "basic: part rows" '[[1,0,10],[2,0,20],[2,1,21],[3,0,30],[3,1,31],[3,2,32]]' \
	sh -c '"$DJC" fetch Sq.Part --format json | jq -s -c "map([.item_id, .j, .z])"'
"$DJC" fetch Sq --format json > sq.json
pycheck "basic: bytes values stored byte for byte (bytes, a backwards view of bytes, a view into a bytearray, the fetched view)" '
import base64, json, raws
rows = [json.loads(l) for l in open("sq.json")]
assert [r["item_id"] for r in rows] == [1, 2, 3], rows
for r in rows:
    raw = raws.raw(r["item_id"])
    assert base64.b64decode(r["copy"]) == raw[::-1] + b"\x00\n", r["item_id"]
    assert base64.b64decode(r["same"]) == raw, r["item_id"]'
expect_out "basic: djc populate afterwards has nothing to make" "Sq: 0 made, 0 errors, 0 skipped" djc populate Sq --make true
}
tcase basic

case_errors() {
cat > err.py <<'P'
import json, sys, djc_lib
class Boom(ValueError):
    pass
def make(key, fetch):
    if key["item_id"] == 2:
        raise Boom("no good %d" % key["item_id"])
    return {"v": key["item_id"]}
out = {}
try:
    if sys.argv[1] == "one":
        out["r"] = djc_lib.populate("Err", make)
    elif sys.argv[1] == "three":
        out["r"] = djc_lib.populate("Err", make, processes=3)
    else:
        out["r"] = djc_lib.populate("Err", make, suppress_errors=True, reserve_jobs=True)
except Exception as e:
    out.update(raised=type(e).__name__, text=str(e), key=getattr(e, "key", None), message=getattr(e, "message", None))
print(json.dumps(out))
P
pyrun err.py one
check "errors: processes=1: populate ended (exit $RC)" test "$RC" = 0
jqcheck "errors: processes=1: the make's own exception is raised" '"\(.raised): \(.text)"' "Boom: no good 2"
djc delete Err --yes >/dev/null
pyrun err.py three
jqcheck "errors: processes=3: MakeError with the key and the message" \
	'"\(.raised) \(.key | tojson) \(.message)"' 'MakeError {"item_id":2} Boom: no good 2'
djc delete Err --yes >/dev/null
pyrun err.py suppress
jqcheck "errors: suppress_errors: counted, error_list holds (key, message)" \
	'.r | "\(.success_count) \(.error_count) \(.error_list | tojson)"' '2 1 [[{"item_id":2},"Boom: no good 2"]]'
expect_out "errors: ... the other keys committed" "1 3" sh -c '"$DJC" fetch Err --format json | jq -r .item_id | tr "\n" " " | sed "s/ $//"'
run djc jobs Err --key '{"item_id": 2}' --json
jqcheck "errors: the job is an error with the make's message" '.job | "\(.status) \(.error_message)"' "error Boom: no good 2"
jqcheck "errors: ... and the Python traceback as its stack" \
	'.job.error_stack | startswith("Traceback (most recent call last):") and contains("raise Boom(\"no good %d\"") and endswith("Boom: no good 2\n")' true
}
tcase errors

case_procs() {
cat > par.py <<'P'
import json, os, time, djc_lib
fd = os.open("par.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
first = [True]
def make(key, fetch):
    os.write(fd, b"%d %d\n" % (os.getpid(), key["n"]))
    if first[0]:
        # a process's first make waits until another process made a key
        # (20 s at most): however quickly one process alone could make
        # them all, each takes part
        first[0] = False
        for _ in range(2000):
            with open("par.log") as f:
                if len({l.split()[0] for l in f}) > 1:
                    break
            time.sleep(0.01)
    return {"pid": os.getpid()}
r = djc_lib.populate("Par", make, reserve_jobs=True, processes=4)
print(json.dumps({"r": r, "me": os.getpid()}))
P
rm -f par.log
pyrun par.py
check "procs: populate ran (exit $RC)" test "$RC" = 0
jqcheck "procs: 200 made, no error" '.r | "\(.success_count) \(.error_count) \(.lost_count)"' "200 0 0"
check "procs: every key made exactly once" test "$(wc -l < par.log)/$(awk '{print $2}' par.log | sort -u | wc -l)" = "200/200"
check "procs: by more than one process ($(awk '{print $1}' par.log | sort -u | wc -l))" \
	test "$(awk '{print $1}' par.log | sort -u | wc -l)" -gt 1
check "procs: each row holds the pid that made it" \
	diff <("$DJC" fetch Par --format json | jq -r '"\(.pid) \(.n)"' | sort) <(sort par.log)
run djc progress Par --json
jqcheck "procs: nothing remains, no job left" '"\(.remaining) \(.total) \(.pending) \(.reserved) \(.error)"' "0 200 0 0 0"
}
tcase procs

case_mixed() {
# each side's first make waits (20 s at most) until the other side made a
# key: both take part however the claims fall
cat > mixmake.py <<'P'
import os, sys, time
fd = os.open("mix.log", os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
first = [True]
def make_as(side):
    def make(key, fetch):
        os.write(fd, ("%s %d %d\n" % (side, os.getpid(), key["n"])).encode())
        if first[0]:
            first[0] = False
            for _ in range(2000):
                with open("mix.log") as f:
                    if any(not l.startswith(side + " ") for l in f):
                        break
                time.sleep(0.01)
        return {"side": side}
    return make
P
cat > mixcli.py <<'P'
import djc_make, mixmake
djc_make.run(mixmake.make_as("cli"))
P
cat > mixlib.py <<'P'
import json, djc_lib, mixmake
print(json.dumps(djc_lib.populate("Mix", mixmake.make_as("lib"), reserve_jobs=True, processes=2)))
P
rm -f mix.log
"$DJC" populate Mix --reserve-jobs --make-serve python3 mixcli.py > cli.out 2> cli.err &
cli=$!
pyrun mixlib.py
wait "$cli"
crc=$?
check "mixed: both populates ran (exit $RC and $crc)" test "$RC/$crc" = 0/0
nlib=$(jget .success_count)
[[ $nlib =~ ^[0-9]+$ ]] || nlib=0
# (a key made by one side can be refreshed as a job by the other before the
# commit shows, then claimed and skipped: skipped counts are free)
ncli=$(sed -n 's/^Mix: \([0-9]*\) made, 0 errors, [0-9]* skipped$/\1/p' cli.out)
jqcheck "mixed: djc_lib: no error, no key lost" '"\(.error_count) \(.lost_count)"' "0 0"
check "mixed: both sides made keys (djc_lib $nlib, djc $ncli), 200 in all" \
	test "$((nlib > 0 && ${ncli:-0} > 0))/$((nlib + ${ncli:-0}))" = 1/200
check "mixed: every key made exactly once in all" test "$(wc -l < mix.log)/$(awk '{print $3}' mix.log | sort -u | wc -l)" = "200/200"
check "mixed: the log agrees with the counts" \
	test "$(grep -c '^lib ' mix.log)/$(grep -c '^cli ' mix.log)" = "$nlib/${ncli:-0}"
check "mixed: 200 rows, each by the side that logged it" \
	diff <("$DJC" fetch Mix --format json | jq -r '"\(.side) \(.n)"' | sort) <(awk '{print $1, $3}' mix.log | sort)
}
tcase mixed

case_worker() {
run djc jobs refresh Wk
check "worker: 3 jobs pending" test "$RC/$OUT" = "0/Wk: added 3, removed 0, orphaned 0, re_pended 0"
cat > wk.py <<'P'
import json, djc_lib
made = []
def make(key, fetch):
    made.append(key["item_id"])
    return {"v": fetch("Item", key)[0]["x"]}
r = djc_lib.worker("Wk", make, until_empty=True)
print(json.dumps({"r": r, "made": made}))
P
pyrun wk.py
check "worker: ran (exit $RC)" test "$RC" = 0
jqcheck "worker: made the 3 jobs and stopped for empty" \
	'"\(.made | sort) \(.r.success_count) \(.r.error_count) \(.r.stopped | tojson)"' '[1,2,3] 3 0 {"empty":1}'
expect_out "worker: the rows" "[[1,2],[2,3],[3,4]]" sh -c '"$DJC" fetch Wk --format json | jq -s -c "map([.item_id, .v])"'
run djc progress Wk --json
jqcheck "worker: nothing remains, no job left" '"\(.remaining) \(.pending) \(.reserved) \(.error)"' "0 0 0 0"
}
tcase worker

case_bad_rows() {
cat > chk.py <<'P'
import json, djc_lib, djc_make
caught = []
def make(key, fetch):
    i = key["item_id"]
    if i == 1:
        try:
            fetch("Other", key)
        except djc_make.FetchError as e:
            caught.append("%s: %s" % (type(e).__name__, e))
        return {"v": 1}
    if i == 2:
        return {"v": 2, "nosuch": 3}
    return {"v": "abc"}
r = djc_lib.populate("Chk", make, suppress_errors=True, reserve_jobs=True)
print(json.dumps({"r": r, "caught": caught}))
P
pyrun chk.py
check "bad_rows: populate ran (exit $RC)" test "$RC" = 0
jqcheck "bad_rows: fetch of a table not upstream: FetchError naming both tables" '.caught[0]' \
	"FetchError: make of Chk may read only its ancestors and their part tables (the tables it depends on through ->): Other is not upstream of Chk"
jqcheck "bad_rows: key 1 made, keys 2 and 3 failed" '.r | "\(.success_count) \(.error_count) \([.error_list[][0].item_id])"' "1 2 [2,3]"
jqcheck "bad_rows: an unknown attribute fails the key, named" '.r.error_list[0][1]' 'unknown attribute "nosuch" for table Chk'
jqcheck "bad_rows: text for an int attribute fails the key, named" '.r.error_list[1][1]' "attribute 'v' (int32): expects an integer, got a string"
expect_out "bad_rows: only key 1's row" '{"item_id":1,"v":1}' djc fetch Chk --format json
}
tcase bad_rows

case_guards() {
rm -f rnd.pids
cat > guards.py <<'P'
import atexit, json, os, random, sys, threading
kept = []
# registered before any view over libdjc's buffers exists: it runs after
# their finalizers would at exit (atexit runs last registered first)
def at_exit():
    with open("atexit.txt", "w") as f:
        f.write(bytes(kept[0]).hex() if kept else "none")
atexit.register(at_exit)
import djc_lib
out = {"range": []}
for bad in ({"processes": 2 ** 32 + 1}, {"max_calls": 2 ** 64 + 1}):
    try:
        djc_lib.populate("Gd", lambda k, f: {}, **bad)
        out["range"].append("ran")
    except djc_lib.PopulateError as e:
        out["range"].append(str(e))
try:
    djc_lib.populate(b"Gd", lambda k, f: {})
    out["table"] = "ran"
except TypeError as e:
    out["table"] = str(e)
class Bad(Exception):
    def __str__(self):
        raise RuntimeError("no text")
def gen(key, fetch):   # yields its row, then raises what cannot be told
    yield {"v": 1}
    raise Bad()
r = djc_lib.populate("Gd", gen, "item_id = 1", suppress_errors=True)
out["bad"] = [r["success_count"], r["error_list"]]
stop = threading.Event()
t = threading.Thread(target=stop.wait)
t.start()
try:
    djc_lib.populate("Gd", lambda k, f: {"v": 2}, processes=2)
    out["thread"] = "ran"
except djc_lib.PopulateError as e:
    out["thread"] = str(e)
stop.set()
t.join()
r = djc_lib.populate("Gd", lambda k, f: {"v": 2}, "item_id = 2")
out["one"] = r["success_count"]
import time
def rnd(key, fetch):
    # a process's first key waits (20 s at most) for another process to
    # start: two of them draw, whatever the claims' timing
    with open("rnd.pids", "a") as f:
        f.write("%d\n" % os.getpid())
    for _ in range(200):
        if len(set(open("rnd.pids").read().split())) > 1:
            break
        time.sleep(0.1)
    return {"pid": os.getpid(), "f": random.random()}
random.random()   # seeded in this process, before the fork
r = djc_lib.populate("Rnd", rnd, "n <= 60", processes=3, reserve_jobs=True)
out["rnd"] = r["success_count"]
def keep(key, fetch):
    kept.append(fetch("Item", key)[0]["raw"])
    return {"v": 3}
out["kept"] = djc_lib.populate("Kp", keep, "item_id = 1")["success_count"]
r = djc_lib.populate("Js", lambda k, f: {"j": {"n": 2 ** 70}}, "item_id = 1", suppress_errors=True)
out["wide"] = r["error_list"]
print(json.dumps(out))
P
pyrun guards.py
check "guards: the program ran (exit $RC)" test "$RC" = 0
jqcheck "guards: an option a C field cannot hold is refused, not wrapped" '.range | join(" / ")' \
	"processes: 4294967297 is out of range / max_calls: 18446744073709551617 is out of range"
jqcheck "guards: a table name that is not a str" '.table' "table must be a table name (a str), not b'Gd'"
jqcheck "guards: an exception that cannot be told fails its key by its type; its row is not committed" '.bad | tojson' \
	'[0,[[{"item_id":1},"Bad"]]]'
jqcheck "guards: processes > 1 with a thread running is refused (no fork past the interpreter's lock); processes=1 runs" \
	'"\(.thread | startswith("processes=2 forks this process, which runs 2 threads: only the calling thread goes on in a fork")) \(.one)"' "true 1"
jqcheck "guards: 60 keys made by 3 processes" '.rnd' 60
jqcheck "guards: a whole number too big in a json attribute: the serve protocol's message" '.wide[0][1]' \
	"attribute 'j': its value holds 1180591620717411303424, too big for a JSON number (above 2^63-1)"
expect_out "guards: Gd holds key 2's row only" '{"item_id":2,"v":2}' djc fetch Gd --format json
pycheck "guards: each worker process draws its own random numbers (random reseeded after the fork)" '
import json, subprocess, sys
rows = [json.loads(l) for l in subprocess.run([sys.argv[1], "fetch", "Rnd", "--format", "json"], capture_output=True, text=True).stdout.split()]
by = {}
for r in rows:
    by.setdefault(r["pid"], set()).add(r["f"])
assert len(rows) == 60 and len(by) > 1 and len({r["f"] for r in rows}) == 60, (len(by), rows)
print("%d processes, 60 distinct draws" % len(by))' "$DJC"
check "guards: a view of a fetched value kept to the interpreter's exit reads its bytes there" \
	test "$(cat atexit.txt)" = "$(printf '\x00\n\xff{"a":1}\n' | od -An -tx1 | tr -d ' \n')"
# fetch.cancelled() under djc_make.run too: False (djc stops a program itself)
cat > cn.py <<'P'
import djc_make
djc_make.run(lambda key, fetch: {"v": 1 if fetch.cancelled() is False else 0})
P
expect_out "guards: a serve program's make asks fetch.cancelled()" "Cn: 1 made, 0 errors, 0 skipped" djc populate Cn --where '{"item_id": 1}' --make-serve python3 cn.py
expect_out "guards: a per-key program's too" "Cn: 1 made, 0 errors, 0 skipped" djc populate Cn --where '{"item_id": 2}' --make python3 cn.py
expect_out "guards: ... told False" '[1,1]' sh -c '"$DJC" fetch Cn --format json | jq -s -c "map(.v)"'
# no database: refused as djc populate refuses it, nothing created
mkdir -p nodb
cd nodb
pyrun -c 'import djc_lib
try:
    djc_lib.populate("Gd", lambda k, f: {}, url="sqlite:nodb.db")
except djc_lib.PopulateError as e:
    print(e)'
cd ..
# (the file's name holds the schema where the suite sets one: nodb.SCHEMA.db)
check "guards: a SQLite file that is not there: PopulateError, as djc populate's (exit $RC)" \
	sh -c 'test "$1" = 0 && printf "%s" "$2" | grep -q "^no SQLite database '"'"'nodb\.\(.*\.\)\{0,1\}db'"'"' (djc declare creates it; or give --db)$"' _ "$RC" "$OUT"
check "guards: ... and nothing created" test -z "$(ls -A nodb)"
}
tcase guards

case_fence() {
printf '{"id": %d, "x": %d}\n' 1 1 2 2 > fs.jsonl
expect_out "fence: insert" "inserted 2 rows into Fs" djc insert Fs fs.jsonl
cat > fence.py <<'P'
import json, subprocess, sys, djc_lib
def make(key, fetch):
    if key["id"] == 1:   # (claims come in any order: key 1 reads its own row only)
        return {"y": len(fetch("Fs", key))}
    rows = fetch("Fs", where={"id": {">": 0}})
    if key["id"] == 2:   # another session adds a row to what this make read
        subprocess.run([sys.argv[1], "insert", "Fs"], input=b'{"id": 9, "x": 9}', check=True, capture_output=True)
    return {"y": len(rows)}
r = djc_lib.populate("Fd", make, "id <= 2", reserve_jobs=True, suppress_errors=True)
print(json.dumps(r))
P
pyrun fence.py "$DJC"
check "fence: populate ran (exit $RC)" test "$RC" = 0
jqcheck "fence: key 1 made; key 2, whose read changed before its commit, failed at commit" \
	'"\(.success_count) \(.error_count) \(.error_list[0][0].id) \(.error_list[0][1] | startswith("upstream changed while make ran: the rows of Fs that make of Fd read"))"' "1 1 2 true"
expect_out "fence: only key 1's row" '{"id":1,"y":1}' djc fetch Fd --format json
}
tcase fence

case_interrupted() {
# the second key made (in whatever order the claims come) sends the signal
cat > intr.py <<'P'
import json, os, signal, sys, djc_lib
sig = getattr(signal, sys.argv[1])
made, log = [], []
def make(key, fetch):
    made.append(key["item_id"])
    log.append("make")
    if len(made) == 2:
        os.kill(os.getpid(), sig)
        told = fetch.cancelled()
        log.append("told %s" % told)
        if told and sys.argv[2] == "raise":
            raise RuntimeError("stopped: %s" % told)
        # "return": it returns its row all the same, which is not committed
    return {"v": key["item_id"]}
out = {"made": made, "log": log}
try:
    djc_lib.populate("Intr", make, reserve_jobs=True)
    out["raised"] = None
except (KeyboardInterrupt, SystemExit) as e:
    out["raised"] = "%s %s" % (type(e).__name__, e.code if isinstance(e, SystemExit) else "")
out["handler"] = signal.getsignal(signal.SIGINT) is signal.default_int_handler
try:
    os.kill(os.getpid(), signal.SIGINT)
    out["after"] = "no KeyboardInterrupt"
except KeyboardInterrupt:
    out["after"] = "KeyboardInterrupt"
print(json.dumps(out))
P
for run in "SIGINT raise" "SIGTERM raise" "SIGINT return"; do
	set -- $run
	sig=$1
	djc delete Intr --yes >/dev/null
	djc jobs clear Intr --all >/dev/null
	pyrun intr.py $run
	sig="$sig, make that ${2}s"
	check "interrupted: $sig: the program ran on (exit $RC)" test "$RC" = 0
	first=$(jget '.made[0]') second=$(jget '.made[1]')
	third=$((6 - first - second))
	[ $1 = SIGINT ] && want="KeyboardInterrupt " || want="SystemExit 143"
	jqcheck "interrupted: $sig: the second make was told, stopped; populate raised $want" \
		'"\(.made | length) \(.log | join(",")) / \(.raised)"' "2 make,make,told interrupted / $want"
	jqcheck "interrupted: $sig: Python's own SIGINT handler is back, and works" '"\(.handler) \(.after)"' "true KeyboardInterrupt"
	expect_out "interrupted: $sig: only the first key made committed" "{\"item_id\":$first,\"v\":$first}" djc fetch Intr --format json
	run djc jobs Intr --key "{\"item_id\": $second}" --json
	jqcheck "interrupted: $sig: the second key's job is an error naming the signal, its attempt interrupted" \
		'"\(.job.status) \(.job.error_message) / \([.history[].outcome])"' "error interrupted by $1 / [\"interrupted\"]"
	run djc jobs Intr --status pending --json
	jqcheck "interrupted: $sig: the third key was not started: pending" '[.jobs[].item_id] | tojson' "[$third]"
done
}
tcase interrupted

case_blob() {
# (numpy: scripts/deps.txt requires it of the suite's python3)
cat > arrs.py <<'P'
import numpy as np
def arr(i):
    return [np.arange(12, dtype=np.float64).reshape(3, 4) / 4, np.array([-5, 0, 7], dtype=np.int32),
            (np.arange(5000) % 7).astype(np.uint8)][i - 1]
P
python3 -c 'import base64, json, arrs, djc_blob
for i in (1, 2, 3):
    print(json.dumps({"arr_id": i, "a": base64.b64encode(djc_blob.pack(arrs.arr(i), 1)).decode()}))' > arr.jsonl
expect_out "blob: insert 3 arrays" "inserted 3 rows into Arr" djc insert Arr arr.jsonl
cat > dbl.py <<'P'
import json, djc_lib
seen = {}
def make(key, fetch):
    a = fetch("Arr", key)[0]["a"]
    seen[key["arr_id"]] = "%s %s %s" % (type(a).__name__, a.dtype, list(a.shape))
    return {"d": a * 2, "s": float(a.sum())}
r = djc_lib.populate("Dbl", make)
print(json.dumps({"r": r, "seen": seen}))
P
pyrun dbl.py
check "blob: populate ran (exit $RC)" test "$RC" = 0
jqcheck "blob: 3 made" '.r | "\(.success_count) \(.error_count)"' "3 0"
jqcheck "blob: the make got ndarrays of their dtype and shape" '.seen | [.["1"], .["2"], .["3"]] | join(",")' \
	"ndarray float64 [3, 4],ndarray int32 [3],ndarray uint8 [5000]"
"$DJC" fetch Dbl --format json > dbl.json
pycheck "blob: the ndarrays returned are stored packed and read back equal" '
import base64, json, arrs, djc_blob
import numpy as np
rows = [json.loads(l) for l in open("dbl.json")]
assert [r["arr_id"] for r in rows] == [1, 2, 3], rows
for r in rows:
    a = arrs.arr(r["arr_id"])
    d = djc_blob.unpack(djc_blob.inflate(base64.b64decode(r["d"])))
    assert d.dtype == a.dtype and d.shape == a.shape and np.array_equal(d, a * 2), (r["arr_id"], d)
    assert r["s"] == float(a.sum()), r'
}
tcase blob

finish
