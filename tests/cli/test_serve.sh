#!/bin/bash
# test_serve.sh - the serve protocol (issue 16, docs/serve-protocol.md): one
# make program per worker process makes many keys and reads upstream rows
# from djc over its pipe. Each make logs events to $LOG from outside the
# database ("start PID" when a program starts, "make ID PID" per key), so
# the checks count events, never durations.
#   1. every key made exactly once, direct and reserved, 1 and 4 processes;
#      one program per worker process
#   2. a fetch over the pipe answers exactly what `djc fetch` prints, for
#      restrictions and keys, errors included
#   3. a program that crashes on one key fails only that key (its stderr as
#      the stack) and a new program serves the next
#   4. garbage and oversize output insert nothing for the key; a row that
#      does not fit fails the key and keeps the program; a raised error; a
#      program that closes its stdout and runs on is stopped
#   5. no password (and no database URL) in a serve program's environment
#   6. restarts are bounded (jobs.serve_restarts); a program that cannot be
#      run, ends before its hello, or speaks another version, stops the
#      worker and fails no job
#   7. SIGTERM and a lost lease stop the program (its whole tree) and the
#      next key gets a new one
#   8. `make_serve =` in a table's block; `--make` beside it runs the same
#      Python file under the per-key protocol
#   9. a program that exits with status 0 between keys is started again
#      without counting as a failure
#  10. the attempt reaches the program
#  11. reserved jobs whose makes read a value the worker reads in pieces
#      (PostgreSQL: libpq's single-row mode): every key made and counted,
#      no job left
. "$ROOT/tests/cli/lib.sh"
export PYTHONPATH="$ROOT/python"
py() { python3 -c "$@"; }
# jget FILTER: jq -r FILTER of $OUT (populate --json, jobs --json)
jget() { jq -r "$1" 2>&1 <<<"$OUT"; }

cat > p.djc <<'P'
Item (manual)
    item_id : int32
    ---
    name : varchar(64)
    blob = null : bytes
    doc = null : json
    big = null : uint64
    at = null : datetime
    ratio = null : float64

Res (computed)
    -> Item
    ---
    v : int32

Res.Part (part)
    n : int32
    ---
    w : varchar(64)

Tagged (computed)
    -> Item
    ---
    tag : varchar(64)
    mode : varchar(16)
    make_serve = python3 mk_tag.py   # the same file under either protocol

Unrelated (manual)
    other_id : int32
    ---
P
expect_rc 0 "declare" djc declare p.djc
N=12
{
	for i in $(seq 1 $N); do printf '{"item_id": %d, "name": "n%d"}\n' "$i" "$i"; done
} > items.jsonl
expect_out "insert $N items" "inserted $N rows into Item" djc insert Item items.jsonl
# odd values in a few columns, for the fetch comparison (bytes, json, uint64,
# datetime, float, quotes and non-ASCII text)
printf '{"item_id": 100, "name": "q\\"uo\\u00fcte\\\\ \\u2603", "blob": "AAEC/w==", "doc": {"a": [1, 2.5, null], "b": "x"}, "big": "18446744073709551615", "at": "2026-11-01 09:30:00", "ratio": 0.1}\n' > odd.jsonl
expect_out "insert the odd row" "inserted 1 row into Item" djc insert Item odd.jsonl
N=$((N + 1))

# The make (python/djc_make.py): logs, reads its Item over the pipe, makes
# a row and a part row; misbehaves on the item named in the environment.
cat > mk.py <<'P'
import json, os, signal, sys, time
import djc_make

LOG = os.environ["LOG"]
def log(line):
    with open(LOG, "a") as f:
        f.write(line + "\n")
log("start %d" % os.getpid())
if os.environ.get("ENVDUMP"):
    with open(os.environ["ENVDUMP"], "w") as f:
        json.dump(dict(os.environ), f)
def on(name, i):
    v = os.environ.get(name, "")
    return v == "all" or v == str(i)

def make(key, fetch):
    i = key["item_id"]
    log("make %d %d" % (i, os.getpid()))
    print("making %d" % i, file=sys.stderr)
    print("a print to stdout for %d goes to stderr" % i)
    if on("CRASH_ON", i):
        print("about to crash on %d" % i, file=sys.stderr)
        sys.stderr.flush()
        os.kill(os.getpid(), signal.SIGSEGV)
    if on("EXIT_ON", i):
        sys.stderr.write("leaving on %d\n" % i)
        sys.stderr.flush()
        os._exit(7)
    if on("SLEEP_ON", i) and not os.path.exists("slept.%d" % i):
        open("slept.%d" % i, "w").close()   # once: made again, it goes through
        log("sleeping %d %d" % (i, os.getpid()))
        time.sleep(300)
        log("survived %d" % i)
    if on("RAISE_ON", i):
        raise ValueError("boom %d" % i)
    if on("BADROW_ON", i):
        return {"v": "ten"}
    item = fetch("Item", key)
    assert len(item) == 1, item
    return [{"v": i * 10}, {"_part": "Part", "n": 1, "w": item[0]["name"]}]

djc_make.run(make)
P
export LOG=$T/log
# made ID: how many times ID was made (per the log)
# (counted by the shell, as grep -c would: no grep started)
made() { matching "^make $1 " "$LOG"; echo "$MATCHED"; }
starts() { matching '^start ' "$LOG"; echo "$MATCHED"; }
# dupes: how many keys were made more than once; distinct: how many keys
# were made (read by the shell: an awk, a sort, a uniq and a wc each before)
_made_ids() {  # sets MADE_N[ID] to the times the log says ID was made
	local l lines
	declare -gA MADE_N=()
	mapfile -t lines < "$LOG"
	for l in "${lines[@]}"; do
		[[ $l =~ ^[[:space:]]*make[[:space:]]+([^[:space:]]+) ]] && MADE_N[${BASH_REMATCH[1]}]=$((${MADE_N[${BASH_REMATCH[1]}]:-0} + 1))
	done
}
dupes() { local id n=0; _made_ids; for id in "${!MADE_N[@]}"; do [ "${MADE_N[$id]}" -gt 1 ] && n=$((n + 1)); done; echo "$n"; }
distinct() { _made_ids; echo "${#MADE_N[@]}"; }
clean() {  # no rows, no jobs, an empty log
	djc delete Res --yes >/dev/null || echo "test_serve: clean: cannot delete Res" >&2   # its parts with it
	: > "$LOG"
	for st in error pending; do djc jobs clear Res --status $st >/dev/null 2>&1; done
	return 0
}

case_every_key_once() {
# ------------------------------------- 1. every key exactly once
for mode in direct reserved; do
	for procs in 1 4; do
		clean
		opt=""
		[ $mode = reserved ] && opt=--reserve-jobs
		run djc populate Res $opt --processes $procs --make-serve python3 mk.py
		check "1: $mode, $procs process(es): all $N made" test "$RC/$OUT" = "0/Res: $N made, 0 errors, 0 skipped"
		check "1: $mode, $procs: each key made once" test "$(dupes)/$(distinct)" = "0/$N"
		check "1: $mode, $procs: $N rows and $N part rows" test "$(count Res)/$(count Res.Part)" = "$N/$N"
		s=$(starts)
		check "1: $mode, $procs: one program per worker process ($s started)" test "$s" -ge 1 -a "$s" -le $procs
		if [ $procs = 1 ]; then
			check "1: $mode, 1 process: one program made every key" test "$(awk '$1 == "make" {print $3}' "$LOG" | sort -u | wc -l)" = 1
		fi
	done
done
check "1: the part rows hold what the program fetched over the pipe" \
	test "$(djc fetch Res.Part --where '{"item_id": 7}' --format csv | tail -1)" = "7,1,n7"
run djc jobs Res
check "1: no job left" test "$OUT" = "Res jobs: pending 0, reserved 0, success 0, error 0, ignore 0, total 0"
# the same program: a second populate finds nothing to make
: > "$LOG"
run djc populate Res --reserve-jobs --make-serve python3 mk.py
check "1: nothing left to make: no program started" test "$RC/$OUT/$(starts)" = "0/Res: 0 made, 0 errors, 0 skipped/0"
}
tcase every_key_once

case_fetch_pipe() {
# ------------------------------------- 2. fetch over the pipe = djc fetch
# A raw program (no module): for its one key, sends each request of
# $FETCHES and writes the answer lines as they came (header, then rows)
# to ans.N; then makes its row.
cat > fetcher.py <<'P'
import json, os, sys
rd, wr = sys.stdin.buffer, sys.stdout.buffer
def send(o):
    wr.write(json.dumps(o).encode() + b"\n"); wr.flush()
reqs = [json.loads(l) for l in open(os.environ["FETCHES"])]
assert json.loads(rd.readline())["_djc"] == "hello"
send({"_djc": "hello", "version": 1})
for line in rd:
    m = json.loads(line)
    assert m["_djc"] == "key", m
    for i, r in enumerate(reqs):
        send(dict(r, _djc="fetch"))
        head = rd.readline()
        with open("ans.%d" % i, "wb") as f:
            f.write(head)
            for _ in range(json.loads(head).get("count", 0)):
                f.write(rd.readline())
    send({"tag": "fetched", "mode": "raw"})
    send({"_djc": "done"})
P
cat > fetches.jsonl <<'P'
{"table": "Item"}
{"table": "Item", "where": {"item_id": {"<=": 3}}}
{"table": "Item", "where": [{"item_id": 1}, {"name": "n5"}, {"item_id": 100}]}
{"table": "Item", "key": {"item_id": 100, "not_an_item_attribute": 5}}
{"table": "Item", "where": {"big": "18446744073709551615"}}
{"table": "Item", "where": {"item_id": {">": 10}}}
{"table": "Item", "key": {"item_id": 4}}
{"table": "Item", "where": {"item_id": []}}
{"table": "Item", "where": {"no_such_attribute": 1}}
{"table": "NoSuchTable"}
{"table": "Item", "key": {"zzz": 1}}
{"table": "Item", "where": {"item_id": 1}, "key": {"item_id": 1}}
P
djc delete Tagged >/dev/null
run env FETCHES=fetches.jsonl "$DJC" populate Tagged --where '{"item_id": 1}' --make-serve python3 fetcher.py
check "2: the fetcher made its key" test "$RC/$OUT" = "0/Tagged: 1 made, 0 errors, 0 skipped"
# compare each answer with djc fetch (each request's table, where and key,
# as compact JSON or an empty line, read by one jq for all: three per
# request were 36 jq starts)
jq -r '.table, (if has("where") then (.where | tojson) else "" end), (if has("key") then (.key | tojson) else "" end)' \
	fetches.jsonl > fetches.fields
i=0
while IFS= read -r req && IFS= read -r tbl <&3 && IFS= read -r where <&3 && IFS= read -r key <&3; do
	args=()
	[ -n "$where" ] && args+=(--where "$where")
	[ -n "$key" ] && args+=(--key "$key")
	# as run by a make of Tagged's key 1 (DJC_TABLE, DJC_KEY): ancestors only,
	# so Res and Res.Part are refused by both (docs/parity.md)
	DJC_TABLE=Tagged DJC_KEY='{"item_id": 1}' "$DJC" fetch "$tbl" "${args[@]}" --format json > want.$i 2> want.err
	wrc=$?
	if [ $wrc = 0 ]; then
		{ printf '{"_djc":"rows","count":%d}\n' "$(grep -c . want.$i)"; cat want.$i; } > want.$i.full
		if cmp -s want.$i.full ans.$i; then _report ok "2: fetch $req: the same bytes as djc fetch"
		else _report fail "2: fetch $req: the same bytes as djc fetch" "want: $(cat want.$i.full)
got:  $(cat ans.$i 2>&1)"; fi
	elif [ -n "$key" ] && [ -n "$where" ]; then
		check "2: fetch with key and where is refused" test "$(jq -r .error ans.$i)" = 'a fetch takes "key" or "where", not both'
	else
		werr=$(sed 's/^djc: //' want.err)
		got=$(jq -r .error ans.$i 2>&1)
		check "2: fetch $req: the error djc fetch gives ($werr)" test "$got" = "$werr"
	fi
	i=$((i + 1))
done < fetches.jsonl 3< fetches.fields
check "2: every request was answered" test -s ans.11
# only ancestors of the target may be read (DataJoint's self.upstream; issue 20)
printf '%s\n' '{"table": "Res"}' '{"table": "Res.Part", "key": {"item_id": 4}}' '{"table": "Unrelated", "key": {"item_id": 4}}' > fetches.jsonl
rm -f ans.*
djc delete Tagged >/dev/null
run env FETCHES=fetches.jsonl "$DJC" populate Tagged --where '{"item_id": 1}' --make-serve python3 fetcher.py
check "2: a fetch of a table that is not upstream is refused, naming both" \
	test "$(jq -r .error ans.0)" = "make of Tagged may read only its ancestors and their part tables (the tables it depends on through ->): Res is not upstream of Tagged"
check "2: ... a part table's too" \
	test "$(jq -r .error ans.1)" = "make of Tagged may read only its ancestors and their part tables (the tables it depends on through ->): Res.Part is not upstream of Tagged"
# a key that shares no attribute with the table: still the ancestors rule
# first, as djc fetch --key and a C make (issue 36; DataJoint's
# test_upstream_rejects_non_ancestor)
check "2: ... a table sharing no attribute with the key, by key too" \
	test "$(jq -r .error ans.2)" = "make of Tagged may read only its ancestors and their part tables (the tables it depends on through ->): Unrelated is not upstream of Tagged"
check "2: ... as djc fetch --key run by a make says" test "$(DJC_TABLE=Tagged DJC_KEY='{"item_id": 1}' "$DJC" fetch Unrelated \
	--key '{"item_id": 1}' 2>&1)" = "djc: $(jq -r .error ans.2)"
# long lists: beyond every backend's limit on a statement's parameters
# (before: "number of parameters must be between 0 and 65535" on
# PostgreSQL, "too many placeholders" on MariaDB)
python3 -c '
import json
print(json.dumps({"table": "Item", "where": {"item_id": list(range(100000))}}))
print(json.dumps({"table": "Item", "where": [{"item_id": i, "name": "n%d" % i} for i in range(70000)]}))
print(json.dumps({"table": "Item", "where": {"item_id": {"not in": list(range(3, 100003))}}}))
print(json.dumps({"table": "Item", "where": {"item_id": {">": [3]}}}))
' > fetches.jsonl
rm -f ans.*
djc delete Tagged >/dev/null
run env FETCHES=fetches.jsonl "$DJC" populate Tagged --where '{"item_id": 1}' --make-serve python3 fetcher.py
check "2: the fetcher with long lists made its key" test "$RC/$OUT" = "0/Tagged: 1 made, 0 errors, 0 skipped"
check "2: a fetch by 100000 values answers every row" \
	test "$(head -1 ans.0)/$(tail -n +2 ans.0 | jq -r .item_id | tr '\n' ' ' | sed 's/ $//')" = '{"_djc":"rows","count":13}/1 2 3 4 5 6 7 8 9 10 11 12 100'
check "2: a fetch by 70000 keys answers the 12 whose name matches" \
	test "$(head -1 ans.1)/$(tail -n +2 ans.1 | jq -r .item_id | tr '\n' ' ' | sed 's/ $//')" = '{"_djc":"rows","count":12}/1 2 3 4 5 6 7 8 9 10 11 12'
check "2: not in 100000 values" test "$(head -1 ans.2)/$(tail -n +2 ans.2 | jq -r .item_id | tr '\n' ' ' | sed 's/ $//')" = '{"_djc":"rows","count":2}/1 2'
check "2: a malformed restriction is an error naming the attribute" \
	test "$(jq -r .error ans.3)" = "restriction on 'item_id': '>' takes one value, got a list (a list goes with \"in\" or \"not in\")"
}
tcase fetch_pipe every_key_once

case_crash_one_key() {
# ------------------------------------- 3. a crash fails only that key
clean
djc jobs refresh Res --where '{"item_id": 2}' --priority 0 >/dev/null   # key 2 first, then 3
djc jobs refresh Res --where '{"item_id": 3}' --priority 1 >/dev/null
run env CRASH_ON=3 "$DJC" populate Res --reserve-jobs --suppress-errors --json --make-serve python3 mk.py
jqcheck "3: populate exits 1: $((N - 1)) made, 1 error" -p "$RC/" '"\(.success_count)/\(.error_count)"' "1/$((N - 1))/1"
jqcheck "3: the error is key 3's crash, naming the signal" \
	'"\(.errors[0].key.item_id) \(.errors[0].message)"' "3 serve program killed by signal 11 (SIGSEGV) while making the key"
check "3: nothing stored for key 3" test "$(count Res '{"item_id": 3}')/$(count Res.Part '{"item_id": 3}')" = "0/0"
check "3: every other key made" test "$(count Res)" = $((N - 1))
check "3: two programs: the second served the keys after the crash" test "$(starts)" = 2
p3=$(awk '$1 == "make" && $2 == 3 {print $3}' "$LOG")
check "3: every key after it was made by the new program" \
	test "$(awk -v p="$p3" '$1 == "make" && $2 != 3 && $2 != 2 && $3 != p' "$LOG" | wc -l)" = $((N - 2))
run djc jobs Res --status error --json
stack=$(jget '.jobs[0].error_stack')
check "3: the stack is key 3's stderr, and only key 3's (what it printed to stdout too)" \
	test "$stack" = "making 3
a print to stdout for 3 goes to stderr
about to crash on 3"
# a program that exits on a key (status 7): the same, with its last stderr line
clean
run env EXIT_ON=5 "$DJC" populate Res --suppress-errors --json --make-serve python3 mk.py
jqcheck "3: an exit on key 5 fails key 5 only, with its last stderr line" \
	'"\(.success_count)/\(.error_count)/\(.errors[0].key.item_id) \(.errors[0].message)"' \
	"$((N - 1))/1/5 serve program exited with status 7 while making the key: leaving on 5"
}
tcase crash_one_key fetch_pipe

case_garbage_output() {
# ------------------------------------- 4. garbage and oversize output
# raw programs (sh) that speak the protocol, then misbehave on key 3
cat > raw.sh <<'P'
#!/bin/sh
# serve: hello, then per key a row ({"v": id}) and done; on $BAD_ON, $BAD instead
echo "start $$" >> "$LOG"
read -r hello
echo '{"_djc": "hello", "version": 1}'
while read -r line; do
	# (the key's item_id by the shell's own expansions: a sed and two forks
	# a key were most of this program's cost)
	id=${line##*\"item_id\":}; id=${id%%[!0-9]*}
	echo "make $id $$" >> "$LOG"
	if [ "$id" = "$BAD_ON" ]; then
		echo "bad output for $id" >&2
		case $BAD in
		text) echo '{"v": 1}'; echo 'this is not json' ;;
		blanktext) printf '\n\n{"v": 1}\n\n\nthis is not json\n' ;;
		array) echo '[1, 2, 3]' ;;
		binary) printf '{"v": 1}\n\377\376\n' ;;
		tag) echo '{"_djc": "shrug"}' ;;
		hello) echo '{"_djc": "hello", "version": 1}' ;;
		longline) echo '{"v": 1}'; printf '{"v": 1, "w": "'; head -c "$BIG" /dev/zero | tr '\0' x ;;
		blanks) echo '{"v": 1}'; head -c "$BIG" /dev/zero | tr '\0' '\n' ;;
		badrow) echo '{"v": "ten"}'; echo '{"v": 2}'; echo '{"_djc": "done"}'; continue ;;
		norow) echo '{"_djc": "done"}'; continue ;;
		error) printf '%s\n' '{"_djc": "error", "message": "it went wrong", "stack": "frame 1\nframe 2"}'; continue ;;
		longerror) head -c 5000 /dev/zero | tr '\0' e >&2
			printf '%s\n' '{"_djc": "error", "message": "it went wrong", "stack": "frame 1"}'; continue ;;
		after) printf '{"v": %s}\n{"_djc": "done"}\n\n{"v": 99}\n' "$id"; continue ;;   # one write: a line after done
		blankafter) printf '{"v": %s}\n{"_djc": "done"}\n\n \n' "$id"; continue ;;
		closedout) exec >&-; sleep 300 ;;   # can never answer, and runs on
		partialexit) printf '{"v": %s' "$id"; exit 0 ;;   # part of a row, then status 0
		esac
		echo '{"_djc": "done"}'
		continue
	fi
	echo "{\"v\": $id}"
	echo '{"_djc": "done"}'
done
P
chmod +x raw.sh
# res_rows: RESN, the rows of Res, and RES3, those of key 3, counted from
# one djc fetch (as count counts: a djc fetch, and a subshell, each before)
res_rows() {
	local rows l
	"$DJC" fetch Res --format json > res_rows.json
	mapfile -t rows < res_rows.json
	RESN=0 RES3=0
	for l in "${rows[@]}"; do
		[[ $l ]] || continue
		RESN=$((RESN + 1))
		[[ $l =~ ^\{\"item_id\":3[,}] ]] && RES3=$((RES3 + 1))
	done
	return 0
}
bad() {  # KIND PATTERN STARTS DESC (direct: keys in order, 3 in the middle)
	clean
	run env BAD_ON=3 BAD=$1 BIG="${BIG:-300000000}" ${MAXOUT:+DJC_JOBS_MAX_OUTPUT=$MAXOUT} \
		"$DJC" populate Res --suppress-errors --json --where '{"item_id": {"<=": 5}}' --make-serve ./raw.sh
	local msg counts
	# (the counts on the first line, then the message: one jq for both)
	msg=$(jget '"\(.success_count)/\(.error_count)/\(.errors[0].key.item_id)", .errors[0].message')
	counts=${msg%%$'\n'*} msg=${msg#*$'\n'}
	if [ "$RC/$counts" = "1/4/1/3" ] &&
		printf '%s' "$msg" | grep -Eq -- "$2"; then _report ok "4: $4: key 3 fails ($2)"
	else _report fail "4: $4: key 3 fails ($2)" "RC=$RC OUT=$OUT ERR=$ERR"; fi
	res_rows
	check "4: $4: nothing stored for key 3" test "$RES3" = 0
	check "4: $4: the other keys made" test "$RESN" = 4
	check "4: $4: program started $3 time(s)" test "$(starts)" = "$3"
}
bad text "line 2: malformed JSON" 2 "text that is not JSON after a row"
bad blanktext "line 6: malformed JSON" 2 "text that is not JSON after runs of empty lines (counted as lines)"
bad array "expected a JSON object" 2 "a JSON array"
bad binary "not valid UTF-8" 2 "bytes that are not UTF-8"
bad tag 'unknown message "_djc": "shrug"' 2 "an unknown message"
bad hello "a second hello" 2 "a second hello"
# the output limit: the default (256 MiB) once, as it does not depend on the
# backend (SQLite); a lowered jobs.max_output on every backend
if [ "$DJC_BACKEND" = sqlite ]; then
	bad longline "more than 256 MiB for one key" 2 "a 300 MB line"
	bad blanks "more than 256 MiB for one key" 2 "300 MB of lines"
fi
MAXOUT=3 BIG=4000000 bad longline "more than 3 MiB for one key" 2 "a 4 MB line over jobs.max_output (3 MiB)"
MAXOUT=3 BIG=4000000 bad blanks "more than 3 MiB for one key" 2 "4 MB of lines over jobs.max_output (3 MiB)"
# a program that closes its stdout and runs on is stopped (after
# jobs.stop_grace, for one that is ending), not waited for forever
DJC_JOBS_STOP_GRACE=1 bad closedout "^serve program closed its stdout while making the key and ran on: it is stopped$" 2 \
	"stdout closed, the program running on"
# status 0 with part of a line written for the key: it saw the key, so the
# key fails (only a program that wrote nothing for it is given it again)
bad partialexit "^serve program exited with status 0 while making the key: bad output for 3$" 2 "part of a row, then exit status 0"
bad badrow "line 1: .*expects an integer" 1 "a row that does not fit (the program is kept)"
# the first key of a program: its hello is not one of the key's lines
for k in 1 2; do
	clean
	run env BAD_ON=1 BAD=$([ $k = 1 ] && echo badrow || echo text) "$DJC" populate Res --suppress-errors --json \
		--where '{"item_id": {"<=": 2}}' --make-serve ./raw.sh
	check "4: the first key's line $k, after the program's hello, is its line $k" \
		test "$(jget '.errors[0].message' | sed 's/: .*//; s/^serve program output //')" = "line $k"
done
bad norow "make produced no row for Res" 1 "no row (the program is kept)"
bad error "^it went wrong$" 1 "an error it reports (the program is kept)"
clean
run env BAD_ON=3 BAD=error "$DJC" populate Res --reserve-jobs --where '{"item_id": 3}' --make-serve ./raw.sh
run djc jobs Res --status error --json
jqcheck "4: a reported error's message, its stack, then the key's stderr" \
	'.jobs[0].error_message + "|" + .jobs[0].error_stack' "it went wrong|frame 1
frame 2
bad output for 3"
# a key's stderr over the 4,000 bytes kept: its first line says how many
# came before (17 + 5,000 written)
clean
run env BAD_ON=3 BAD=longerror "$DJC" populate Res --reserve-jobs --where '{"item_id": 3}' --make-serve ./raw.sh
run djc jobs Res --status error --json
jqcheck "4: a key's stderr cut to its last 4,000 bytes says so" \
	'.jobs[0].error_message + "|" + .jobs[0].error_stack' "it went wrong|frame 1
... (1017 bytes cut)
$(head -c 4000 /dev/zero | tr '\0' e)"
# output after a closing line: the next key fails (that output would
# otherwise pass for its rows) and gets a new program; blank lines are no output
clean
run env BAD_ON=3 BAD=after "$DJC" populate Res --suppress-errors --json --where '{"item_id": {"<=": 5}}' --make-serve ./raw.sh
jqcheck "4: a line after key 3's closing line: key 4 fails, saying so" \
	'"\(.success_count)/\(.error_count)/\(.errors[0].key.item_id) \(.errors[0].message)"' \
	'4/1/4 serve program wrote after its last closing line ("{"v": 99}"): it is restarted'
check "4: ... key 3 as it closed it, key 5 by a new program" test "$(count Res '{"item_id": 3}')/$(count Res '{"item_id": 5}')/$(starts)" = "1/1/2"
check "4: ... key 4 is not made (99 went nowhere)" test "$(count Res '{"item_id": 4}')/$(count Res '{"v": 99}')" = "0/0"
clean
run env BAD_ON=3 BAD=blankafter "$DJC" populate Res --suppress-errors --json --where '{"item_id": {"<=": 5}}' --make-serve ./raw.sh
jqcheck "4: blank lines after a closing line are harmless" -p "$RC/" -s "/$(starts)" '"\(.success_count)/\(.error_count)"' "0/5/0/1"
clean
run env RAISE_ON=4 "$DJC" populate Res --suppress-errors --json --make-serve python3 mk.py
jqcheck "4: an exception in a Python make fails its key with its message" \
	'"\(.success_count)/\(.error_count)/\(.errors[0].message)"' "$((N - 1))/1/ValueError: boom 4"
check "4: ... and one program made every key" test "$(starts)" = 1
clean
run env BADROW_ON=4 "$DJC" populate Res --suppress-errors --json --make-serve python3 mk.py
check "4: a Python make's row that does not fit fails its key" \
	sh -c 'printf "%s" "$1" | grep -q "^1/serve program output line 1: .*expects an integer"' _ "$(jget '"\(.error_count)/\(.errors[0].message)"')"
}
tcase garbage_output crash_one_key

case_no_password() {
# ------------------------------------- 5. no password in a serve program's environment
PW="s3rve-pw-$$-$RANDOM"
URL=$DJC_DATABASE_URL
case $DJC_BACKEND in
postgresql) URL=$(printf '%s' "$DJC_DATABASE_URL" | sed -E "s#^postgresql://([^:@/]+)@#postgresql://\\1:$PW@#") ;;   # trust: the password is not checked
esac
URLPW=$(printf '%s' "$URL" | sed -nE 's#^[a-z]+://[^:/@]+:([^@]*)@.*#\1#p')
clean
run env DJC_DATABASE_URL="$URL" DJC_DATABASE_PASSWORD="$PW" PGPASSWORD="$PW" MYSQL_PWD="$PW" MY_COPY="$PW" \
	MY_URL="postgresql://someone:$PW@example.org/db" ENVDUMP=$T/env.serve \
	"$DJC" populate Res --where '{"item_id": 1}' --make-serve python3 mk.py
check "5: the serve program ran" test "$RC/$OUT" = "0/Res: 1 made, 0 errors, 0 skipped"
check "5: its environment was dumped" test -s env.serve
if grep -qF "$PW" env.serve; then _report fail "5: the password is nowhere in a serve program's environment" "$(cat env.serve)"
else _report ok "5: the password is nowhere in a serve program's environment"; fi
pycheck "5: no DJC_DATABASE_URL, DJC_DATABASE_PASSWORD, PGPASSWORD or MYSQL_PWD" \
	'import json,sys; e=json.load(open(sys.argv[1])); sys.exit(1 if {"DJC_DATABASE_URL","DJC_DATABASE_PASSWORD","PGPASSWORD","MYSQL_PWD","MY_COPY","MY_URL"} & set(e) else 0)' env.serve
if [ -n "$URLPW" ]; then
	pycheck "5: no value holds the URL's own password (:$URLPW@)" 'import json,sys; e=json.load(open(sys.argv[1])); sys.exit(1 if any(":" + sys.argv[2] + "@" in v or v == sys.argv[2] for v in e.values()) else 0)' env.serve "$URLPW"
fi
pycheck "5: it was told the protocol (DJC_SERVE=1)" 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("DJC_SERVE") == "1" else 1)' env.serve
# the check can fail: the same file as a per-key program gets the URL and the password
clean
run env DJC_DATABASE_URL="$URL" DJC_DATABASE_PASSWORD="$PW" ENVDUMP=$T/env.perkey DJC="$DJC" \
	"$DJC" populate Res --where '{"item_id": 1}' --make python3 mk.py
check "5: (the same make as a per-key program)" test "$RC/$OUT" = "0/Res: 1 made, 0 errors, 0 skipped"
pycheck "5: (a per-key program does get DJC_DATABASE_URL and the password)" \
	'import json,sys; e=json.load(open(sys.argv[1])); sys.exit(0 if "DJC_DATABASE_URL" in e and e.get("DJC_DATABASE_PASSWORD") == sys.argv[2] else 1)' env.perkey "$PW"
}
tcase no_password garbage_output

case_restarts() {
# ------------------------------------- 6. restarts bounded; programs that cannot serve
clean
run env CRASH_ON=all DJC_JOBS_SERVE_RESTARTS=2 "$DJC" populate Res --reserve-jobs --suppress-errors --json --make-serve python3 mk.py
check "6: a program crashing on every key: populate exits 1" test "$RC" = 1
# the limit is no make's failure: counted and listed apart (issue 36.7:
# it used to be a fourth error, of key {})
jqcheck "6: three keys failed (a start and 2 restarts), then the worker stopped" \
	'"\(.success_count)/\(.error_count)/\(.errors | length)/\([.errors[].key.item_id | numbers] | length)"' "0/3/3/3"
jqcheck "6: ... saying why, as the failure" '.failure' \
	"serve program 'python3' failed and was restarted 2 times in the last minute (jobs.serve_restarts is 2): this worker stops"
check "6: ... the one stderr line" test "$ERR" = \
	"djc: serve program 'python3' failed and was restarted 2 times in the last minute (jobs.serve_restarts is 2): this worker stops"
check "6: 3 programs started" test "$(starts)" = 3
check "6: 3 jobs are errors, the key not tried is pending again" test "$(djc jobs Res)" = "Res jobs: pending $((N - 3)), reserved 0, success 0, error 3, ignore 0, total $N"
djc jobs clear Res --status error >/dev/null
# the same under djc worker: 3 errors of table Res and the failure apart
clean
run env CRASH_ON=all DJC_JOBS_SERVE_RESTARTS=2 "$DJC" worker Res --until-empty --json --make-serve python3 mk.py
jqcheck "6: worker: 3 errors of Res, the limit as its failure, stopped: failed" \
	-p "$RC/" '"\(.error_count)/\([.errors[].table] | unique)/\(.failure)/\(.stopped)"' \
	"1/3/[\"Res\"]/serve program 'python3' failed and was restarted 2 times in the last minute (jobs.serve_restarts is 2): this worker stops/{\"failed\":1}"
check "6: worker: ... the one stderr line is the failure" test "$ERR" = \
	"djc: serve program 'python3' failed and was restarted 2 times in the last minute (jobs.serve_restarts is 2): this worker stops"
djc jobs clear Res --status error >/dev/null
expect_fail 2 "6: jobs.serve_restarts is checked" "DJC_JOBS_SERVE_RESTARTS.*integer from 0 to 10000" env DJC_JOBS_SERVE_RESTARTS=-1 "$DJC" populate Res --make-serve python3 mk.py
expect_fail 2 "6: --make-serve without a program" '^djc: populate: unknown or incomplete option --make-serve$' "$DJC" populate Res --make-serve
# everything after --make-serve is the program's: --help and --json included
clean
run "$DJC" populate Res --where '{"item_id": 1}' --make-serve python3 mk.py --help --json
check "6: words after --make-serve go to the program" test "$RC/$OUT" = "0/Res: 1 made, 0 errors, 0 skipped"
clean
run "$DJC" populate Res --reserve-jobs --json --make-serve ./no-such-program
jqcheck "6: a serve program that cannot be run: exit 1, saying so (no make failed)" \
	-p "$RC/" '"\(.success_count)/\(.error_count)/\(.errors | length)/\(.failure)"' "1/0/0/0/cannot run serve program './no-such-program': No such file or directory"
check "6: ... and no job failed" test "$(djc jobs Res)" = "Res jobs: pending $N, reserved 0, success 0, error 0, ignore 0, total $N"
# a program that ends before its hello (an import that fails) cannot
# serve: no job fails (it turned a key into an error per start, up to
# jobs.serve_restarts a minute per worker), the worker stops saying why
cat > nohello.sh <<'P'
#!/bin/sh
echo "start $$" >> "$LOG"
printf 'Traceback (most recent call last):\nModuleNotFoundError: No module named %s\n' "'nosuch'" >&2
exit 1
P
chmod +x nohello.sh
for mode in --reserve-jobs --processes=2; do
	clean
	run "$DJC" populate Res $mode --suppress-errors --json --make-serve ./nohello.sh
	jqcheck "6: $mode: a program that exits before its hello: exit 1, its last stderr line the failure, no make failed" \
		-p "$RC/" '"\(.success_count)/\(.error_count)/\(.failure)"' \
		"1/0/0/serve program './nohello.sh' exited with status 1 before its hello: ModuleNotFoundError: No module named 'nosuch'"
	# (not started again: at most one start per worker process)
	check "6: $mode: ... started $(starts) time(s), not again" test "$(starts)" -ge 1 -a "$(starts)" -le "$([ "$mode" = --reserve-jobs ] && echo 1 || echo 2)"
	[ "$mode" = --reserve-jobs ] &&
		check "6: ... and no job failed (the key it had is pending again)" test "$(djc jobs Res)" = "Res jobs: pending $N, reserved 0, success 0, error 0, ignore 0, total $N"
done
cat > v3.sh <<'P'
#!/bin/sh
read -r hello
echo '{"_djc": "hello", "version": 3}'
read -r key
P
chmod +x v3.sh
run "$DJC" populate Res --reserve-jobs --json --make-serve ./v3.sh
jqcheck "6: a program speaking version 3: exit 1, naming the versions" \
	-p "$RC/" '"\(.error_count)/\(.errors | length)/\(.failure)"' "1/0/0/serve program './v3.sh' speaks serve protocol version 3; this djc speaks versions 1 and 2"
check "6: ... and no job failed" test "$(djc jobs Res)" = "Res jobs: pending $N, reserved 0, success 0, error 0, ignore 0, total $N"
}
tcase restarts no_password

case_sigterm_lease() {
# ------------------------------------- 7. SIGTERM and a lost lease stop the program
clean
DJC_JOBS_STOP_GRACE=1 SLEEP_ON=2 "$DJC" populate Res --reserve-jobs --where '{"item_id": 2}' --make-serve python3 mk.py > w.out 2> w.err &
w=$!
wait_log() { wait_lines "$1" "$LOG" 1 400; }
gone() { wait_gone "$1" 400; }
check "7: the make is running" wait_log '^sleeping 2 '
sp=$(awk '$1 == "sleeping" {print $3}' "$LOG")
kill -TERM $w
wait $w
check "7: SIGTERM: the worker exits 143" test $? = 143
check "7: the serve program is gone" gone "$sp"
check "7: it never got to its end" test "$(grep -c survived "$LOG")" = 0
run djc jobs Res --status error --json
jqcheck "7: the job is an error naming the signal" '.jobs[0].error_message' "interrupted by SIGTERM"
djc jobs clear Res --status error >/dev/null
# a lost lease (refresh --orphan-timeout resets it): the key is stopped, the
# next key gets a new program; key 6 goes first (priority 1), and again
# when it is pending again (then it goes through)
clean
djc jobs refresh Res --where '{"item_id": 6}' --priority 1 >/dev/null
DJC_JOBS_LEASE_TIMEOUT=4 DJC_JOBS_STOP_GRACE=1 SLEEP_ON=6 "$DJC" populate Res --reserve-jobs --json \
	--where '{"item_id": [6, 7]}' --make-serve python3 mk.py > w.out 2> w.err &
w=$!
check "7: lease: key 6 is being made" wait_log '^sleeping 6 '
sp=$(awk '$1 == "sleeping" {print $3}' "$LOG")
nap 1.2   # older than --orphan-timeout 1
run djc jobs refresh Res --where '{"item_id": 6}' --orphan-timeout 1 --json
check "7: lease: refresh resets its reservation" test "$OUT" = '{"table":"Res","added":0,"removed":0,"orphaned":1,"re_pended":0}'
wait $w
wrc=$?
check "7: lease: the worker goes on and ends (exit 0)" test $wrc = 0
check "7: lease: key 6 lost once, then 6 and 7 made" grep -q '"success_count":2,"error_count":0,"skipped_count":0,"lost_count":1' w.out
check "7: lease: the stopped program is gone" gone "$sp"
check "7: lease: a new program made the next keys" \
	test "$(starts)/$(awk -v p="$sp" '$1 == "make" && $3 != p' "$LOG" | wc -l)" = "2/2"
}
tcase sigterm_lease restarts

case_make_serve_block() {
# ------------------------------------- 8. make_serve = in the block; the same file per key
cat > mk_tag.py <<'P'
import os
import djc_make

def make(key, fetch):
    with open(os.environ["LOG"], "a") as f:
        f.write("make %d %d\n" % (key["item_id"], os.getpid()))
    item = fetch("Item", where={"item_id": key["item_id"]})[0]
    return {"tag": "<%s>" % item["name"], "mode": "serve" if os.environ.get("DJC_SERVE") else "per-key"}

djc_make.run(make)
P
djc delete Tagged >/dev/null
: > "$LOG"
run djc populate Tagged --where '{"item_id": {"<=": 6}}' --processes 2 --reserve-jobs
check "8: make_serve = in the block: 6 made" test "$RC/$OUT" = "0/Tagged: 6 made, 0 errors, 0 skipped"
check "8: ... under the serve protocol" test "$(djc fetch Tagged --where '{"mode": "serve"}' --format json | grep -c .)" = 6
check "8: ... by at most 2 programs" test "$(awk '{print $3}' "$LOG" | sort -u | wc -l)" -le 2
run env DJC="$DJC" "$DJC" populate Tagged --make python3 mk_tag.py
check "8: --make runs the same file per key (fetch through djc fetch)" test "$RC/$OUT" = "0/Tagged: $((N - 6)) made, 0 errors, 0 skipped"
check "8: ... under the per-key protocol" test "$(djc fetch Tagged --where '{"mode": "per-key"}' --format json | grep -c .)" = $((N - 6))
check "8: both made the same tags" test "$(djc fetch Tagged --where '{"item_id": [5, 100]}' --format csv | cut -d, -f2 | tr '\n' ' ')" = 'tag <n5> "<q""uoüte\ ☃>" '
printf 'A (manual)\n    a : int32\n    ---\n\nB (computed)\n    -> A\n    ---\n    b : int32\n    make = ./x\n    make_serve = ./y\n' > two.djc
expect_fail 2 "8: a block with make = and make_serve = is refused" "two.djc:10: second make line \('make_serve ='\) in table B" djc declare two.djc
printf 'A (manual)\n    a : int32\n    ---\n    make_serve = ./y\n' > man.djc
expect_fail 2 "8: make_serve = on a manual table is refused" "man.djc:4: 'make_serve =' belongs to computed and imported tables" djc declare man.djc
printf 'A (manual)\n    a : int32\n    ---\n\nB (computed)\n    -> A\n    ---\n    make_serve =  # nothing\n' > empty.djc
expect_fail 2 "8: make_serve = without a program is refused" "empty.djc:8: 'make_serve =' names no program" djc declare empty.djc
}
tcase make_serve_block sigterm_lease

case_exits_between() {
# ------------------------------------- 9. a program that exits 0 between keys
cat > once.sh <<'P'
#!/bin/sh
# serves one key, then exits with status 0
echo "start $$" >> "$LOG"
read -r hello
echo '{"_djc": "hello", "version": 1}'
read -r line
id=${line##*\"item_id\":}; id=${id%%[!0-9]*}
echo "make $id $$" >> "$LOG"
echo "{\"v\": $id}"
echo '{"_djc": "done"}'
exit 0
P
chmod +x once.sh
clean
run env DJC_JOBS_SERVE_RESTARTS=0 "$DJC" populate Res --reserve-jobs --where '{"item_id": {"<=": 6}}' --make-serve ./once.sh
check "9: one key per program, no restart allowed after a failure: all 6 made" test "$RC/$OUT" = "0/Res: 6 made, 0 errors, 0 skipped"
check "9: six programs" test "$(starts)/$(dupes)/$(distinct)" = "6/0/6"
}
tcase exits_between make_serve_block

case_attempt() {
# ------------------------------------- 10. the attempt reaches the program
cat > retry.py <<'P'
import os
import djc_make

def make(key, fetch):
    with open(os.environ["LOG"], "a") as f:
        f.write("attempt %d %d %d\n" % (key["item_id"], fetch.attempt, os.getpid()))
    if fetch.attempt < 2:
        raise ValueError("attempt %d of %d" % (fetch.attempt, key["item_id"]))
    return {"v": key["item_id"]}

djc_make.run(make)
P
clean
run env DJC_JOBS_MAX_ATTEMPTS=2 DJC_JOBS_RETRY_DELAY=0 "$DJC" populate Res --reserve-jobs --suppress-errors --where '{"item_id": {"<=": 2}}' --make-serve python3 retry.py
check "10: jobs.max_attempts 2: both keys made (on their second attempt)" test "$(count Res '{"item_id": {"<=": 2}}')" = 2
check "10: the program was told attempt 1, then attempt 2, of each key" \
	test "$(awk '$1 == "attempt" {print $2 ":" $3}' "$LOG" | sort | tr '\n' ' ')" = "1:1 1:2 2:1 2:2 "
check "10: one program served the four attempts (a raised error keeps it)" \
	test "$(awk '$1 == "attempt" {print $4}' "$LOG" | sort -u | wc -l)" = 1
}
tcase attempt exits_between

case_pieces_reserved() {
# ------------------------------------- 11. values read in pieces, reserved jobs
# Four items with 4000 bytes of noise in their blob, which the worker reads
# for the program's fetch in pieces of 1000 bytes on PostgreSQL (elsewhere
# whole), its last read before each commit. libpq left the pieces'
# single-row mode on for the first query of the commit's pipeline: a commit
# the server made was counted lost and the claim of the next key that went
# with it stayed reserved (bench/py-blob.sh: 2-12 of 24 keys made).
clean
python3 -c 'import base64, json, os
for i in range(301, 305):
    print(json.dumps({"item_id": i, "name": "w%d" % i, "blob": base64.b64encode(os.urandom(4000)).decode()}))' > wide.jsonl
expect_out "11: insert 4 items with a blob of 4000 bytes" "inserted 4 rows into Item" djc insert Item wide.jsonl
run env DJC_READ_PIECE=1000 "$DJC" populate Res --reserve-jobs --where '{"item_id": {">": 300}}' --make-serve python3 mk.py
check "11: all 4 made and counted" test "$RC/$OUT" = "0/Res: 4 made, 0 errors, 0 skipped"
check "11: each key made once" test "$(dupes)/$(distinct)" = "0/4"
check "11: 4 rows and 4 part rows" test "$(count Res)/$(count Res.Part)" = "4/4"
run djc jobs Res
check "11: no job left" test "$OUT" = "Res jobs: pending 0, reserved 0, success 0, error 0, ignore 0, total 0"
expect_rc 0 "11: the items go (their rows with them)" djc delete Item --where '{"item_id": {">": 300}}' --yes
}
tcase pieces_reserved

finish
