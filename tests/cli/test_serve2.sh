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
. "$ROOT/tests/cli/lib.sh"
export PYTHONPATH="$ROOT/python"
jget() { printf '%s' "$OUT" | jq -r "$1" 2>&1; }

cat > p.djc <<'P'
Item (manual)
    item_id : int32
    ---
    name : varchar(64)

Res (computed)
    -> Item
    ---
    v : int32
P
expect_rc 0 "declare" djc declare p.djc
N=40
for i in $(seq 1 $N); do printf '{"item_id": %d, "name": "%s"}\n' "$i" "$(printf 'x%.0s' $(seq 1 $i))"; done > items.jsonl
expect_out "insert $N items" "inserted $N rows into Item" djc insert Item items.jsonl
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
log("djc %d" % h["version"])
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
made() { awk '$1 == "make"' "$LOG" | wc -l | tr -d ' '; }
distinct() { awk '$1 == "make" {print $2}' "$LOG" | sort -u | wc -l | tr -d ' '; }
maxbuf() { awk 'BEGIN {m = 0} $1 == "make" && $3 > m {m = $3} END {print m}' "$LOG"; }
progs() { awk '$1 == "make" {print $4}' "$LOG" | sort -u | wc -l | tr -d ' '; }
right() { djc fetch Res --format json | jq -s -c '[.[] | select(.v != .item_id)] | length'; }

case_ahead() {
clean
run env DJC_JOBS_RESERVE_BATCH=$N "$DJC" populate Res --reserve-jobs --json --make-serve python3 raw.py
check "ahead: populate made every key" test "$RC/$(jget '"\(.success_count)/\(.error_count)"')" = "0/$N/0"
check "ahead: each key made once, by one program" test "$(made)/$(distinct)/$(progs)" = "$N/$N/1"
check "ahead: every row holds its key" test "$(right)" = 0
check "ahead: djc's hello says version 2" grep -qx 'djc 2' "$LOG"
check "ahead: keys came before the answers of earlier ones" test "$(maxbuf)" -ge 1
check "ahead: never more than the 3 asked for" test "$(maxbuf)" -le 3
}
tcase ahead

case_v1_compat() {
clean
run env DJC_JOBS_RESERVE_BATCH=$N HELLO_VERSION=1 "$DJC" populate Res --reserve-jobs --json --make-serve python3 raw.py
check "v1_compat: populate made every key" test "$RC/$(jget '"\(.success_count)/\(.error_count)"')" = "0/$N/0"
check "v1_compat: each key made once, by one program" test "$(made)/$(distinct)/$(progs)" = "$N/$N/1"
check "v1_compat: one key at a time" test "$(maxbuf)" = 0
}
tcase v1_compat

case_ahead_zero() {
clean
run env DJC_JOBS_RESERVE_BATCH=$N AHEAD=0 "$DJC" populate Res --reserve-jobs --json --make-serve python3 raw.py
check "ahead_zero: populate made every key" test "$RC/$(jget '"\(.success_count)/\(.error_count)"')" = "0/$N/0"
check "ahead_zero: one key at a time" test "$(made)/$(distinct)/$(maxbuf)" = "$N/$N/0"
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
check "pymake: populate made every key" test "$RC/$(jget '"\(.success_count)/\(.error_count)"')" = "0/$N/0"
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
while [ "$(made)" -lt 4 ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
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
check "bad_hello: the key fails, naming the member" \
	test "$(jget '"\(.success_count)/\(.error_count)/\(.errors[0].message)"')" = "0/1/serve program output line 1: a hello's \"ahead\" must be a whole number of keys, 0 or more"
}
tcase bad_hello

finish
