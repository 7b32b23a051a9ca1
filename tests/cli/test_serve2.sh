#!/bin/bash
# test_serve2.sh - serve protocol version 2 (issue 40, docs/serve-protocol.md):
# keys sent ahead of the answer in flight with jobs.reserve_batch > 1, the
# "next"/"go"/"skip" exchange, and version 1 programs unchanged. Each make
# logs events to $LOG ("make ID BUFFERED PID": BUFFERED is how many further
# keys the program had read already when it started this one), so the checks
# count events, never durations.
#   ahead        a version 2 program that asks for 3 keys ahead is sent keys
#                before its answers, never more than 3, every key made once
#   v1_compat    the same program speaking version 1 is sent one key at a time
#   ahead_zero   version 2 with "ahead": 0 is sent one key at a time
#   pymake       python/djc_make.py (version 2) with fetches over the pipe,
#                batch 20: every key made once with the fetched value
#   cancel_batch jobs of a claim cancelled while an earlier key is made
#                are never started by a version 2 program
#   bad_hello    a version 2 hello with a bad "ahead" is not the protocol
#   binary       a program that asks for binary values and types gets the
#                fetched bytes and <blob> values raw after their row's line
#                (empty, 1.5 MB with newlines and NUL bytes, null), the
#                types in the rows header and a table message, and its raw
#                result values are stored byte for byte
#   binary_rows  a fetch of every row: each row's raw values after its line
#   binary_lent  a value of 600 KB (lent to the pipe, not copied: vmsplice)
#                that the program reads only after djc wrote all of it and
#                answered another fetch arrives intact: djc keeps its
#                buffer until it was read; and copied (DJC_SERVE_LEND=0);
#                and read from the server in pieces (DJC_READ_PIECE)
#   binary_stream  values over a piece (DJC_READ_PIECE) streamed from the
#                server's row into the pipe (MariaDB): exact bytes at and
#                around piece boundaries, several rows in one answer, a row
#                changed after it was streamed fails its key at commit
#   binary_not_asked  the same program not asking gets base64 text, no "_bin"
#   binary_bad   "_bin" without having asked is not the protocol; raw values
#                for an int attribute, or a <blob> without its header, fail
#                the key and the program is kept
#   parents_bad  a closing line's "parents" that is not a list of names, or
#                names a table whose rows were not sent with the key, is
#                not the protocol
#   pyblob_raw   djc_make.py without DataJoint's codec (or DJC_BLOBS=raw):
#                bytes and <blob> values reach the make as memoryviews, its
#                bytes results are stored exactly, a value for a <blob> that
#                is not bytes fails the key naming the attribute
#   pyblob_per_key  the same make per key: its fetches through the fetch
#                socket give the same values, types and messages
. "$ROOT/tests/cli/lib.sh"
export PYTHONPATH="$ROOT/python"
jget() { jq -r "$1" 2>&1 <<<"$OUT"; }

cat > p.djc <<'P'
Item (manual)
    item_id : int32
    ---
    name : varchar(64)

Res (computed)
    -> Item
    ---
    v : int32

Src (manual)
    id : int32
    ---
    raw : bytes
    blob = null : <blob>

Bin (computed)
    -> Src
    ---
    n : int64
    copy : bytes
    out = null : <blob>
P
expect_rc 0 "declare" djc declare p.djc
N=40
x=; for ((i = 1; i <= N; i++)); do x+=x; printf '{"item_id": %d, "name": "%s"}\n' "$i" "$x"; done > items.jsonl
expect_out "insert $N items" "inserted $N rows into Item" djc insert Item items.jsonl
# Src: 1: one byte; 2: empty bytes; 3: 1.5 MB holding newlines and NUL
# bytes; 4: a null blob. Each blob is mYm\0 and id's byte, id+1 times.
python3 - > src.jsonl <<'P'
import base64, json
def raw(i):
    return [b"\n", b"", (bytes(range(256)) * 6144)[:1572864], b'\x00{"a":1}\n'][i - 1]
for i in (1, 2, 3, 4):
    blob = None if i == 4 else base64.b64encode(b"mYm\0" + bytes([i]) * (i + 1)).decode()
    print(json.dumps({"id": i, "raw": base64.b64encode(raw(i)).decode(), "blob": blob}))
P
expect_out "insert 4 Src rows" "inserted 4 rows into Src" djc insert Src src.jsonl
export LOG=$T/log

# A version 2 program in plain Python (no djc_make): reads its stdin in
# chunks, starts every key at once (it never asks "next"), answers {"v": id}.
cat > raw.py <<'P'
import json, os, sys
LOG = os.environ["LOG"]
VER = int(os.environ.get("HELLO_VERSION", "2"))
AHEAD = int(os.environ.get("AHEAD", "3"))
buf = b""
def line():
    global buf
    while b"\n" not in buf:
        d = os.read(0, 65536)
        if not d:
            sys.exit(0)
        buf += d
    l, buf = buf.split(b"\n", 1)
    return json.loads(l)
def log(s):
    with open(LOG, "a") as f:
        f.write(s + "\n")
h = line()
log("djc %d ahead %s" % (h["version"], h.get("ahead")))
hello = {"_djc": "hello", "version": VER}
if VER >= 2:
    hello["ahead"] = AHEAD
os.write(1, (json.dumps(hello) + "\n").encode())
while True:
    k = line()
    i = k["key"]["item_id"]
    log("make %d %d %d" % (i, buf.count(b"\n"), os.getpid()))
    os.write(1, (json.dumps({"v": i}) + '\n{"_djc": "done"}\n').encode())
P

clean() {
	djc delete Res --yes >/dev/null || echo "test_serve2: clean: cannot delete Res" >&2
	: > "$LOG"
	for st in error pending ignore; do djc jobs clear Res --status $st >/dev/null 2>&1; done
	return 0
}
made() { awk '$1 == "make" { n++ } END { print n + 0 }' "$LOG"; }
distinct() { awk '$1 == "make" && !seen[$2]++ { n++ } END { print n + 0 }' "$LOG"; }
maxbuf() { awk 'BEGIN {m = 0} $1 == "make" && $3 > m {m = $3} END {print m}' "$LOG"; }
progs() { awk '$1 == "make" && !seen[$4]++ { n++ } END { print n + 0 }' "$LOG"; }
right() { djc fetch Res --format json | jq -s -c '[.[] | select(.v != .item_id)] | length'; }

case_ahead() {
clean
run env DJC_JOBS_RESERVE_BATCH=$N "$DJC" populate Res --reserve-jobs --json --make-serve python3 raw.py
jqcheck "ahead: populate made every key" -p "$RC/" '"\(.success_count)/\(.error_count)"' "0/$N/0"
check "ahead: each key made once, by one program" test "$(made)/$(distinct)/$(progs)" = "$N/$N/1"
check "ahead: every row holds its key" test "$(right)" = 0
check "ahead: djc's hello says version 2, and that it may send jobs.reserve_batch - 1 keys ahead" grep -qx "djc 2 ahead $((N - 1))" "$LOG"
check "ahead: keys came before the answers of earlier ones" test "$(maxbuf)" -ge 1
check "ahead: never more than the 3 asked for" test "$(maxbuf)" -le 3
}
tcase ahead

case_v1_compat() {
clean
run env DJC_JOBS_RESERVE_BATCH=$N HELLO_VERSION=1 "$DJC" populate Res --reserve-jobs --json --make-serve python3 raw.py
jqcheck "v1_compat: populate made every key" -p "$RC/" '"\(.success_count)/\(.error_count)"' "0/$N/0"
check "v1_compat: each key made once, by one program" test "$(made)/$(distinct)/$(progs)" = "$N/$N/1"
check "v1_compat: one key at a time" test "$(maxbuf)" = 0
}
tcase v1_compat

case_ahead_zero() {
clean
run env DJC_JOBS_RESERVE_BATCH=$N AHEAD=0 "$DJC" populate Res --reserve-jobs --json --make-serve python3 raw.py
jqcheck "ahead_zero: populate made every key" -p "$RC/" '"\(.success_count)/\(.error_count)"' "0/$N/0"
check "ahead_zero: one key at a time" test "$(made)/$(distinct)/$(maxbuf)" = "$N/$N/0"
clean
run env AHEAD=64 "$DJC" populate Res --reserve-jobs --json --make-serve python3 raw.py
check "ahead_zero: at jobs.reserve_batch 1 djc's hello says it sends no key ahead" grep -qx "djc 2 ahead 0" "$LOG"
check "ahead_zero: ... and sends none, however many the program asks for" test "$RC/$(made)/$(distinct)/$(maxbuf)" = "0/$N/$N/0"
}
tcase ahead_zero

case_pymake() {
cat > mk.py <<'P'
import os
import djc_make

def make(key, fetch):
    with open(os.environ["LOG"], "a") as f:
        f.write("make %d 0 %d\n" % (key["item_id"], os.getpid()))
    item = fetch("Item", key)
    assert len(item) == 1, item
    return {"v": len(item[0]["name"])}   # the name holds item_id letters

djc_make.run(make)
P
clean
run env DJC_JOBS_RESERVE_BATCH=20 "$DJC" populate Res --reserve-jobs --json --make-serve python3 mk.py
jqcheck "pymake: populate made every key" -p "$RC/" '"\(.success_count)/\(.error_count)"' "0/$N/0"
check "pymake: each key made once, by one program" test "$(made)/$(distinct)/$(progs)" = "$N/$N/1"
check "pymake: every row holds the value fetched for its key" test "$(right)" = 0
}
tcase pymake

case_cancel_batch() {
# keys 1 to 6 of one claim (batch 6); the program's fourth make waits for
# a file while the two keys it has not started are cancelled: the quick
# makes before it let djc send keys ahead, yet neither make starts
cat > hold.py <<'P'
import os, time
import djc_make
n = 0

def make(key, fetch):
    global n
    n += 1
    with open(os.environ["LOG"], "a") as f:
        f.write("make %d 0 %d\n" % (key["item_id"], os.getpid()))
    if n == 4:
        while not os.path.exists(os.environ["HOLD"]):
            time.sleep(0.02)
    return {"v": key["item_id"]}

djc_make.run(make)
P
clean
expect_rc 0 "cancel_batch: refresh keys 1-6" djc jobs refresh Res --where '{"item_id": {"<=": 6}}'
rm -f "$T/hold"
DJC_JOBS_RESERVE_BATCH=6 HOLD=$T/hold "$DJC" populate Res --reserve-jobs --no-refresh --json --make-serve python3 hold.py > cb.out 2> cb.err &
w=$!
i=0
while [ "$(made)" -lt 4 ] && [ $i -lt 600 ]; do nap 0.05; i=$((i + 1)); done
check "cancel_batch: the fourth make runs" test "$(made)" = 4
started=$(awk '$1 == "make" {print $2}' "$LOG" | sort -n | tr '\n' ' ')
rest=$(for k in 1 2 3 4 5 6; do case " $started" in *" $k "*) ;; *) printf '%s,' "$k" ;; esac; done)
expect_out "cancel_batch: the two keys not started cancelled" "Res: cancelled 0 pending and 2 reserved jobs" \
	djc jobs cancel Res --where "{\"item_id\": [${rest%,}]}"
touch "$T/hold"
wait $w
rc=$?
check "cancel_batch: exit 0" [ "$rc" = 0 ]
check "cancel_batch: 4 made, 2 cancelled, none lost" [ "$(jq -c '[.success_count,.cancelled_count,.lost_count]' cb.out)" = '[4,2,0]' ]
OUT=$(cat "$LOG" cb.err)
check "cancel_batch: the cancelled keys' makes never started" test "$(awk '$1 == "make" {print $2}' "$LOG" | sort -n | tr '\n' ' ')" = "$started"
check "cancel_batch: rows of the four made" test "$(djc fetch Res --format json | jq -r '.item_id' | sort -n | tr '\n' ' ')" = "$started"
}
tcase cancel_batch

case_bad_hello() {
cat > badhello.sh <<'P'
#!/bin/sh
read -r hello
echo '{"_djc": "hello", "version": 2, "ahead": -1}'
while read -r key; do :; done
P
chmod +x badhello.sh
clean
run "$DJC" populate Res --reserve-jobs --suppress-errors --json --where '{"item_id": 1}' --make-serve ./badhello.sh
jqcheck "bad_hello: the key fails, naming the member" \
	'"\(.success_count)/\(.error_count)/\(.errors[0].message)"' "0/1/serve program output line 1: a hello's \"ahead\" must be a whole number of keys, 0 or more"
}
tcase bad_hello

# A serve program in plain Python that speaks binary values (BIN=0: asks
# for types only): fetches its Src row, returns n = len(raw), copy = raw
# reversed, out = blob. MODE=garbage writes "_bin" without having asked;
# MODE=intbin gives n as raw bytes for key 1; MODE=notblob gives out
# without a blob header for key 1.
cat > binraw.py <<'P'
import base64, fcntl, hashlib, json, os, sys, time
F_GETPIPE_SZ = getattr(fcntl, "F_GETPIPE_SZ", 1032)   # (Linux's; Python 3.10 names it)
LOG, BIN, MODE = os.environ["LOG"], os.environ.get("BIN", "1") == "1", os.environ.get("MODE", "")
buf = bytearray()
def fill():
    d = os.read(0, 1 << 20)
    if not d:
        sys.exit(0)
    buf.extend(d)
def line():
    while b"\n" not in buf:
        fill()
    i = buf.index(b"\n")
    m = json.loads(bytes(buf[:i]))
    del buf[:i + 1]
    return m
def exact(n):
    while len(buf) < n:
        fill()
    b = bytes(buf[:n])
    del buf[:n]
    return b
def log(s):
    with open(LOG, "a") as f:
        f.write(s + "\n")
def waiting(n):
    # until the pipe holds n bytes for us (20 s at most)
    import struct, termios
    for _ in range(400):
        if struct.unpack("i", fcntl.ioctl(0, termios.FIONREAD, b"\0\0\0\0"))[0] >= n:
            return
        time.sleep(0.05)
def message():
    while True:
        m = line()
        if m.get("_djc") != "table":
            return m
        log("table %s copy=%s out=%s" % (m["table"], m["types"]["copy"], m["types"]["out"]))
h = line()
log("djc hello binary=%s types=%s" % (h.get("binary"), h.get("types")))
hello = {"_djc": "hello", "version": 2, "ahead": 0, "types": True, "binary": BIN}
os.write(1, (json.dumps(hello) + "\n").encode())
while True:
    k = message()["key"]
    os.write(1, (json.dumps({"_djc": "fetch", "table": "Src", "key": k}) + "\n").encode())
    log("pipe at key %d: %d" % (k["id"], fcntl.fcntl(0, F_GETPIPE_SZ)))
    if MODE == "late":
        # once djc has written the whole answer into the pipe, a second
        # fetch, of another value as large, makes it allocate as much
        # (and write some of it) before this one is read
        waiting(600000)
        log("pipe late %d: %d" % (k["id"], fcntl.fcntl(0, F_GETPIPE_SZ)))
        os.write(1, b'{"_djc": "fetch", "table": "Src", "key": {"id": 6}}\n')
        waiting(700000)
    head = message()
    row = line()
    log("pipe at value %d: %d" % (k["id"], fcntl.fcntl(0, F_GETPIPE_SZ)))
    bins = row.pop("_bin", [])
    for a, n in bins:
        row[a] = exact(n)
    log("fetched %d bin=%s raw=%s types=%s" % (k["id"], ",".join("%s:%d" % (a, n) for a, n in bins),
        type(row["raw"]).__name__, head.get("types", {}).get("blob")))
    if MODE == "change" and k["id"] == 15:
        # the test changes the row it read before it answers
        open("ready15", "w").close()
        while not os.path.exists("done15"):
            time.sleep(0.05)
    if MODE == "late":
        message()
        for a, n in line().pop("_bin", []):
            exact(n)
    if MODE == "all":
        # every row of Src in one answer, each with its raw values
        os.write(1, b'{"_djc": "fetch", "table": "Src"}\n')
        rows = []
        for _ in range(message()["count"]):
            r = line()
            for a, n in r.pop("_bin", []):
                r[a] = exact(n).hex()
            rows.append(r)
        rows = json.dumps(sorted(rows, key=lambda r: r["id"]), sort_keys=True)
        log("all %d %s" % (k["id"], hashlib.sha256(rows.encode()).hexdigest()))
    raw = row["raw"] if BIN else base64.b64decode(row["raw"])
    blob = row["blob"] if BIN or row["blob"] is None else base64.b64decode(row["blob"])
    res, vals = {"n": len(raw)}, [("copy", raw[::-1]), ("out", blob)]
    if MODE == "intbin" and k["id"] == 1:
        del res["n"]
        vals[0] = ("n", b"12345678")
    if MODE == "notblob" and k["id"] == 1:
        vals[1] = ("out", b"no header")
    if BIN or MODE == "garbage":
        vals = [(a, v) for a, v in vals if v is not None]
        res["_bin"] = [[a, len(v)] for a, v in vals]
        out = json.dumps(res).encode() + b"\n" + b"".join(v for a, v in vals)
    else:
        res.update({a: None if v is None else base64.b64encode(v).decode() for a, v in vals})
        out = json.dumps(res).encode() + b"\n"
    os.write(1, out + b'{"_djc": "done"}\n')
P
# every Bin row as Src's row predicts it: the number of rows that differ
bin_wrong() {
	{ djc fetch Src --format json; echo '---'; djc fetch Bin --format json; } | python3 -c '
import base64, json, sys
src, b = sys.stdin.read().split("---\n")
src = {r["id"]: r for r in (json.loads(l) for l in src.split("\n") if l)}
bad = 0
for r in (json.loads(l) for l in b.split("\n") if l):
    s = src[r["id"]]
    raw = base64.b64decode(s["raw"])
    bad += (r["n"], base64.b64decode(r["copy"]), r["out"]) != (len(raw), raw[::-1], s["blob"])
print(bad)'
}
bclean() {
	djc delete Bin --yes >/dev/null || echo "test_serve2: bclean: cannot delete Bin" >&2
	: > "$LOG"
	djc jobs clear Bin --status error >/dev/null 2>&1
	return 0
}

case_binary() {
bclean
run "$DJC" populate Bin --reserve-jobs --json --make-serve python3 binraw.py
jqcheck "binary: populate made the 4 keys" -p "$RC/" '"\(.success_count)/\(.error_count)"' "0/4/0"
check "binary: djc's hello offers binary values and types" grep -qx 'djc hello binary=True types=True' "$LOG"
check "binary: a table message gave Bin's types" grep -qx 'table Bin copy=bytes out=<blob>' "$LOG"
check "binary: key 1's values came raw (1 byte, a 6-byte blob), types in the rows header" \
	grep -qx 'fetched 1 bin=raw:1,blob:6 raw=bytes types=<blob>' "$LOG"
check "binary: key 2: an empty value" grep -qx 'fetched 2 bin=raw:0,blob:7 raw=bytes types=<blob>' "$LOG"
check "binary: key 3: 1.5 MB" grep -qx 'fetched 3 bin=raw:1572864,blob:8 raw=bytes types=<blob>' "$LOG"
# (the program reads the rows line before the value: djc has queued more
# than the pipe holds, so it cannot have shrunk it yet)
check "binary: a value of 256 KiB or more is written through a stdin pipe grown to 1 MiB" grep -qx 'pipe at value 3: 1048576' "$LOG"
check "binary: ... which is back to its size when the next key comes" \
	test "$(awk '/^pipe at key/ { print $NF }' "$LOG" | sort -u)" = "$(awk '/^pipe at key 1:/ { print $NF }' "$LOG")"
check "binary: key 4: a null blob stays null in the line" grep -qx 'fetched 4 bin=raw:9 raw=bytes types=<blob>' "$LOG"
check "binary: every stored value is the one sent, byte for byte" test "$(bin_wrong)" = 0
}
tcase binary

# src_digest: the digest binraw.py's MODE=all logs for Src's rows (its
# values as hex, the rows in id order)
src_digest() {
	djc fetch Src --format json | python3 -c '
import base64, hashlib, json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip()]
for r in rows:
    for a in ("raw", "blob"):
        if r[a] is not None:
            r[a] = base64.b64decode(r[a]).hex()
print(hashlib.sha256(json.dumps(sorted(rows, key=lambda r: r["id"]), sort_keys=True).encode()).hexdigest())'
}

# every row of a fetch, in one answer, each followed by its raw values: as
# djc fetch gives them
case_binary_rows() {
bclean
run env MODE=all "$DJC" populate Bin --reserve-jobs --json --make-serve python3 binraw.py
jqcheck "binary_rows: populate made the 4 keys" -p "$RC/" '"\(.success_count)/\(.error_count)"' "0/4/0"
want=$(src_digest)
check "binary_rows: each key read all 4 rows of Src, every value in its place" \
	test "$(grep -c "^all [1-4] $want\$" "$LOG")" = 4
}
tcase binary_rows

# A value that fits the grown pipe is lent to it whole (vmsplice: the pipe
# holds djc's pages, not a copy), so djc must not free or reuse its buffer
# before the program read it: freed at once, the allocations of the
# program's next fetch (another 600 KB value) would overwrite it. The
# program reads it only once the pipe holds all of it and part of the
# answer to its next fetch.
case_binary_lent() {
bclean
python3 -c '
import base64, json
for i in (5, 6):
    raw = bytes((j * i + j // 251) % 256 for j in range(600000))
    print(json.dumps({"id": i, "raw": base64.b64encode(raw).decode(), "blob": None}))' > src56.jsonl
expect_out "binary_lent: insert Src 5 and 6 (600 KB each)" "inserted 2 rows into Src" djc insert Src src56.jsonl
run env MODE=late "$DJC" populate Bin --reserve-jobs --json --where '{"id": 5}' --make-serve python3 binraw.py
jqcheck "binary_lent: populate made key 5" -p "$RC/" '"\(.success_count)/\(.error_count)"' "0/1/0"
check "binary_lent: it read the whole value, late" grep -qx 'fetched 5 bin=raw:600000 raw=bytes types=<blob>' "$LOG"
check "binary_lent: ... through a pipe grown to hold all of it" grep -qx 'pipe late 5: 1048576' "$LOG"
check "binary_lent: the stored copy is the value reversed, byte for byte" test "$(bin_wrong)" = 0
# DJC_SERVE_LEND=0: the same value copied into the pipe (write, not vmsplice)
bclean
run env MODE=late DJC_SERVE_LEND=0 "$DJC" populate Bin --reserve-jobs --json --where '{"id": 5}' --make-serve python3 binraw.py
jqcheck "binary_lent: with DJC_SERVE_LEND=0 too" -p "$RC/" -s "/$(bin_wrong)" '"\(.success_count)/\(.error_count)"' "0/1/0/0"
# DJC_READ_PIECE=100000: on PostgreSQL the worker reads the value from the
# server in six pieces (docs/workers.md, "Large values"); elsewhere whole
bclean
run env MODE=late DJC_READ_PIECE=100000 "$DJC" populate Bin --reserve-jobs --json --where '{"id": 5}' --make-serve python3 binraw.py
jqcheck "binary_lent: read from the server in pieces too" -p "$RC/" -s "/$(bin_wrong)" '"\(.success_count)/\(.error_count)"' "0/1/0/0"
djc delete Bin --yes >/dev/null && djc delete Src --where '{"id": [5, 6]}' --yes >/dev/null ||
	echo "test_serve2: binary_lent: cannot delete Src 5 and 6" >&2
}
tcase binary_lent

# Large values streamed from the server's row into the program's pipe a
# piece at a time (docs/serve-protocol.md, "Large values": MariaDB; the
# other backends give the same answers, read whole). With DJC_READ_PIECE=1000
# values of 999 and 1000 bytes come whole, those of 1001, 2000 (two pieces
# exactly), 2001, 3000 and 4096 bytes in pieces; rows 13-15 have two such
# values, row 16 a whole one before a streamed one. Each key reads its row
# and every row of Src (one answer: the count before the first row), and
# copies its values byte for byte. A row changed after its values were
# streamed fails its key at commit: the read's record holds the streamed
# values' digests.
case_binary_stream() {
bclean
python3 - > src7.jsonl <<'P'
import base64, json
def val(n, seed):
    return bytes((j * seed + j // 7) % 256 for j in range(n))
sizes = {11: (1000, 0), 12: (1001, 0), 13: (2000, 2000), 14: (2001, 1999), 15: (3000, 4096), 16: (999, 5000)}
for i, (r, b) in sizes.items():
    blob = base64.b64encode(b"mYm\0" + val(b - 4, i + 1)).decode() if b else None
    print(json.dumps({"id": i, "raw": base64.b64encode(val(r, i)).decode(), "blob": blob}))
P
expect_out "binary_stream: insert Src 11-16" "inserted 6 rows into Src" djc insert Src src7.jsonl
run env MODE=all DJC_READ_PIECE=1000 "$DJC" populate Bin --reserve-jobs --json --where '{"id": {">": 10}}' --make-serve python3 binraw.py
jqcheck "binary_stream: populate made the 6 keys" -p "$RC/" '"\(.success_count)/\(.error_count)"' "0/6/0"
check "binary_stream: each value came with its length" test "$(grep '^fetched 1[1-6] ' "$LOG" | sort | tr '\n' ' ')" = \
	"fetched 11 bin=raw:1000 raw=bytes types=<blob> fetched 12 bin=raw:1001 raw=bytes types=<blob> fetched 13 bin=raw:2000,blob:2000 raw=bytes types=<blob> fetched 14 bin=raw:2001,blob:1999 raw=bytes types=<blob> fetched 15 bin=raw:3000,blob:4096 raw=bytes types=<blob> fetched 16 bin=raw:999,blob:5000 raw=bytes types=<blob> "
check "binary_stream: every stored value is the one sent, byte for byte" test "$(bin_wrong)" = 0
want=$(src_digest)
check "binary_stream: each key read all 10 rows of Src in one answer, every value in its place" \
	test "$(grep -c "^all 1[1-6] $want\$" "$LOG")" = 6
# key 15 again: its row changes (same lengths, one byte rotated) after its
# values went to the program
bclean
rm -f ready15 done15
env MODE=change DJC_READ_PIECE=1000 "$DJC" populate Bin --reserve-jobs --suppress-errors --json --where '{"id": 15}' --make-serve python3 binraw.py > change.out 2> change.err &
local pop=$!
for _ in $(seq 1 1200); do [ -e ready15 ] && break; nap 0.05; done
check "binary_stream: the make of key 15 has read its row" [ -e ready15 ]
case $DJC_BACKEND in
sqlite) python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1], timeout=30)
r = c.execute("SELECT raw FROM src WHERE id = 15").fetchone()[0]
c.execute("UPDATE src SET raw = ? WHERE id = 15", (r[1:] + r[:1],))
c.commit()' "${DJC_DATABASE_URL#sqlite:}" ;;
mysql) server_sql "UPDATE \`$DJC_DATABASE_SCHEMA\`.src SET raw = CONCAT(SUBSTRING(raw, 2), LEFT(raw, 1)) WHERE id = 15" ;;
*) server_sql "UPDATE \"$DJC_DATABASE_SCHEMA\".src SET raw = substring(raw from 2) || substring(raw from 1 for 1) WHERE id = 15" ;;
esac
touch done15
wait $pop
OUT=$(cat change.out)
jqcheck "binary_stream: a row changed after its values were streamed fails its key at commit" \
	'"\(.success_count)/\(.error_count)/\(.errors[0].message | startswith("upstream changed while make ran: the rows of Src that make of Bin read"))"' "0/1/true"
check "binary_stream: ... nothing of it committed" test "$(djc fetch Bin --format json | wc -l)" = 0
djc delete Bin --yes >/dev/null && djc delete Src --where '{"id": {">": 10}}' --yes >/dev/null ||
	echo "test_serve2: binary_stream: cannot delete Src 11-16" >&2
djc jobs clear Bin --status error >/dev/null 2>&1
}
tcase binary_stream

case_binary_not_asked() {
bclean
run env BIN=0 "$DJC" populate Bin --reserve-jobs --json --make-serve python3 binraw.py
jqcheck "binary_not_asked: populate made the 4 keys" -p "$RC/" '"\(.success_count)/\(.error_count)"' "0/4/0"
check "binary_not_asked: base64 text, no raw values" test "$(grep -c '^fetched [1-4] bin= raw=str types=<blob>$' "$LOG")" = 4
check "binary_not_asked: every stored value is the one sent" test "$(bin_wrong)" = 0
}
tcase binary_not_asked

case_binary_bad() {
bclean
run env BIN=0 MODE=garbage "$DJC" populate Bin --reserve-jobs --suppress-errors --json --where '{"id": 1}' --make-serve python3 binraw.py
jqcheck "binary_bad: \"_bin\" without asking is not the protocol" \
	'"\(.error_count)/\(.errors[0].message)"' '1/serve program output line 2: a row with "_bin", but the program'"'"'s hello did not ask for binary values'
bclean
run env MODE=intbin "$DJC" populate Bin --reserve-jobs --suppress-errors --json --make-serve python3 binraw.py
# (line N counts this key's lines: 2, after its fetch, whether key 1 came
# first or not: the program's hello is not one of them)
jqcheck "binary_bad: raw bytes for an int64 attribute fail key 1; the program made the others" \
	'"\(.success_count)/\(.error_count)/\(.errors[0].key.id)/\(.errors[0].message)"' "3/1/1/serve program output line 2: attribute 'n' (int64): raw values are for bytes and <blob> attributes only"
check "binary_bad: ... one program for the 4 keys" test "$(grep -c '^fetched' "$LOG")/$(grep -c '^djc hello' "$LOG")" = 4/1
bclean
run env MODE=notblob "$DJC" populate Bin --reserve-jobs --suppress-errors --json --where '{"id": 1}' --make-serve python3 binraw.py
jqcheck "binary_bad: a raw <blob> value without a blob header fails the key" \
	'"\(.error_count)/\(.errors[0].message)"' "1/serve program output line 2: attribute 'out' (<blob>): not a DataJoint blob (no mYm/dj0/ZL123 header)"
}
tcase binary_bad

case_parents_bad() {
printf '{"item_id": %d, "name": "p"}\n' 901 902 > items9.jsonl
expect_out "parents_bad: two more items" "inserted 2 rows into Item" djc insert Item items9.jsonl
cat > parbad.py <<'P'
import json, os, sys
hello = json.loads(sys.stdin.readline())
print(json.dumps({"_djc": "hello", "version": 2, "parents": hello.get("parents") is True}), flush=True)
for line in sys.stdin:
    m = json.loads(line)
    if m.get("_djc") != "key":
        continue
    print(json.dumps({"v": 1}))
    print(json.dumps({"_djc": "done", "parents": json.loads(os.environ["USED"])}), flush=True)
P
run env USED='"Item"' "$DJC" populate Res --reserve-jobs --suppress-errors --json --where '{"item_id": 901}' --make-serve python3 parbad.py
jqcheck "parents_bad: \"parents\" must be a list" \
	'"\(.error_count)/\(.errors[0].message)"' '1/serve program output line 2: a closing line'"'"'s "parents" must be a list of table names'
run env USED='["Item"]' "$DJC" populate Res --reserve-jobs --suppress-errors --json --where '{"item_id": 902}' --make-serve python3 parbad.py
jqcheck "parents_bad: naming a parent whose rows were not sent (a program's first key has none)" \
	'"\(.error_count)/\(.errors[0].message)"' '1/serve program output line 2: a closing line'"'"'s "parents" names Item, whose rows were not sent with the key'
}
tcase parents_bad

# pyblob_run CASE MAKEFLAG PREFIX: populate Bin with pyblob.py without a
# codec (python3 without numpy nor datajoint, else DJC_BLOBS=raw), make
# flag MAKEFLAG; its error message for key 4 after PREFIX
pyblob_run() {
bclean
local raw= r
python3 -c 'import numpy' >/dev/null 2>&1 && raw=raw
run env ${raw:+DJC_BLOBS=raw} "$DJC" populate Bin --reserve-jobs --suppress-errors --json "$2" python3 pyblob.py
jqcheck "$1: 3 made, key 4 failed" '"\(.success_count)/\(.error_count)"' "3/1"
check "$1: bytes and <blob> values reached the make as memoryviews" \
	test "$(grep -c '^make [1-3] memoryview memoryview$' "$LOG")/$(grep -c '^make 4 memoryview NoneType$' "$LOG")" = 3/1
case "$(jget '.errors[0].message')" in
"$3TypeError: attribute 'out' is a <blob>: its value must be bytes ("*" to pack a list)") r=ok ;;
*) r="$(jget '.errors[0].message')" ;;
esac
check "$1: a list for a <blob> fails the key, naming it ($r)" test "$r" = ok
check "$1: every stored value is the one fetched, byte for byte" test "$(bin_wrong)" = 0
}

case_pyblob_raw() {
cat > pyblob.py <<'P'
import os
import djc_make

def make(key, fetch):
    r = fetch("Src", key)[0]
    with open(os.environ["LOG"], "a") as f:
        f.write("make %d %s %s\n" % (key["id"], type(r["raw"]).__name__, type(r["blob"]).__name__))
    if key["id"] == 4:
        return {"n": 0, "copy": b"", "out": [1, 2]}   # not bytes: the codec would pack it
    return {"n": len(r["raw"]), "copy": bytes(r["raw"])[::-1], "out": r["blob"]}

djc_make.run(make)
P
pyblob_run pyblob_raw --make-serve ""
}
tcase pyblob_raw

case_pyblob_per_key() {
# The same make per key (one process a key, fetches through djc's fetch
# socket): its rows come as under serve (types, values raw), and a value
# for a <blob> that is not bytes fails the key with serve's message (the
# socket told the program the types of the table made)
pyblob_run pyblob_per_key --make "make exited with status 1: "
}
tcase pyblob_per_key pyblob_raw

finish
