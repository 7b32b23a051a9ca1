#!/bin/bash
# test_pymake.sh - the Python make module (python/djc_make.py) on its own:
# its unit tests (tests/python/test_djc_make.py, standard library unittest,
# no database) play djc's side of both make protocols. The module working
# with djc itself, on each backend, is test_serve.sh; here, a Python make
# finding the module and djc without PYTHONPATH or djc on PATH, and
# uint64 values above 2^63-1 made by one (wide_ints).
. "$ROOT/tests/cli/lib.sh"
export PYTHONPATH="$ROOT/python"

case_module() {
# the module's unit tests: no database, so once (the SQLite run): on every
# backend they started the same ~100 Python processes four times
run python3 "$ROOT/tests/python/test_djc_make.py" -v
ran=$(printf '%s\n' "$ERR" | sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p')
bad=$(printf '%s\n' "$ERR" | grep -cE ' \.\.\. (FAIL|ERROR)$')
check "the module's unit tests ran (${ran:-0} of them)" test "${ran:-0}" -ge 20
check "... and passed (exit $RC, $bad failed)" test "$RC/$bad" = 0/0
# each test is one check of this file
PASS=$((PASS + ${ran:-0} - bad))
FAIL=$((FAIL + bad))
[ "$RC" = 0 ] || printf '%s\n' "$ERR" | grep -vE ' \.\.\. ok$' | head -60 >&2
}
tcase module @nodb

case_no_pythonpath() {
# ------------------------------------------------- without PYTHONPATH or djc on PATH
# (issue 36.10) A Python make imports djc_make and, per key, fetches
# through $DJC, on a node whose PATH lacks djc and with no PYTHONPATH set:
# djc tells its make programs where it is (DJC, its own path) and puts the
# directory of its module first on PYTHONPATH, after which a user's
# PYTHONPATH still comes.
unset PYTHONPATH
cat > p.djc <<'P'
Item (manual)
    item_id : int32
    ---
    x : int32

Sq (computed)
    -> Item
    ---
    y : int32
P
expect_rc 0 "declare" djc declare p.djc
printf '{"item_id": 1, "x": 3}\n{"item_id": 2, "x": 4}\n' | "$DJC" insert Item > /dev/null
cat > sq.py <<'P'
import json, os
import djc_make

def make(key, fetch):
    with open("env.%d.json" % key["item_id"], "w") as f:
        json.dump({"DJC": os.environ.get("DJC"), "PYTHONPATH": os.environ.get("PYTHONPATH"),
                   "module": os.path.realpath(djc_make.__file__)}, f)
    return {"y": fetch("Item", key)[0]["x"] ** 2}

djc_make.run(make)
P
# this PATH without the directories that hold a djc
bin=$(printf '%s\n' "$PATH" | tr ':' '\n' | while read -r d; do [ -n "$d" ] && [ ! -x "$d/djc" ] && printf '%s:' "$d"; done)
bin=${bin%:}
check "the PATH of these runs has no djc" sh -c '! PATH="$1" command -v djc' _ "$bin"
real_djc=$(readlink -f "$DJC")
real_py=$(readlink -f "$ROOT/python")
run env -u PYTHONPATH -u DJC PATH="$bin" "$DJC" populate Sq --where '{"item_id": 1}' --make python3 sq.py
check "per key: imported djc_make and fetched through \$DJC (exit $RC)" test "$RC/$OUT" = "0/Sq: 1 made, 0 errors, 0 skipped"
check "... DJC is djc's own path, PYTHONPATH its module's directory" \
	test "$(jq -r '"\(.DJC) \(.PYTHONPATH) \(.module)"' env.1.json)" = "$real_djc $real_py $real_py/djc_make.py"
run env PYTHONPATH=/my/lib DJC=/not/this/djc PATH="$bin" "$DJC" populate Sq --where '{"item_id": 2}' --make-serve python3 sq.py
check "serve: imported djc_make (exit $RC)" test "$RC/$OUT" = "0/Sq: 1 made, 0 errors, 0 skipped"
check "... DJC is this djc whatever it was, the user's PYTHONPATH after djc's" \
	test "$(jq -r '"\(.DJC) \(.PYTHONPATH)"' env.2.json)" = "$real_djc $real_py:/my/lib"
expect_out "both rows made" "[9,16]" sh -c '"$DJC" fetch Sq --format json | jq -s -c "map(.y) | sort"'
# the README's first pipeline (examples/first: stats.py runs `$DJC fetch`),
# on a SQLite file of its own, with that PATH
mkdir -p first
cp "$ROOT"/examples/first/* first/
expect_rc 0 "the first pipeline declared, its sessions inserted" env DJC_DATABASE_URL="sqlite:$T/first/djc.db" DJC_DATABASE_SCHEMA= \
	sh -c 'cd first && "$1" declare pipeline.djc && "$1" insert Session sessions.jsonl' _ "$DJC"
run env -u PYTHONPATH -u DJC PATH="$bin" DJC_DATABASE_URL="sqlite:$T/first/djc.db" DJC_DATABASE_SCHEMA= \
	sh -c 'cd first && "$1" populate SessionStats' _ "$DJC"
check "the README's first pipeline, djc not on PATH: made" test "$RC/$OUT" = "0/SessionStats: 3 made, 0 errors, 0 skipped"
}
tcase no_pythonpath

case_wide_ints() {
# ------------------------------ uint64 above 2^63-1 from a Python make
# djc reads JSON integers as 64-bit signed, so a uint64 above 2^63-1 is a
# string in JSON (docs/types.md): djc_make sends Python ints beyond that
# range as decimal text, in rows (target and part) and in a fetch's where,
# under both protocols. A make that writes one as a number (djc_make's
# conversion turned off, as before) fails its key with a message naming
# the attribute, and a serve program is kept for the next key.
cat > w.djc <<'P'
Big (manual)
    big_id : int32
    ---
    seed : bigint unsigned

Wide (computed)
    -> Big
    ---
    big : bigint unsigned
    low : int64
    j = null : json

Wide.Bit (part)
    bit : int32
    ---
    v : uint64
P
expect_rc 0 "wide: declare" djc declare w.djc
printf '{"big_id": %d, "seed": "18446744073709551615"}\n' 1 2 3 4 > big.jsonl
expect_out "wide: insert" "inserted 4 rows into Big" djc insert Big big.jsonl
cat > wide.py <<'P'
import os, sys
import djc_make

def make(key, fetch):
    i = key["big_id"]
    if os.environ.get("RAW"):
        with open("pids", "a") as f:
            f.write("%d\n" % os.getpid())
    rows = fetch("Big", where={"big_id": i, "seed": 2 ** 64 - 1})   # the where's int as text too
    seed = int(rows[0]["seed"])
    if os.environ.get("RAW") and i == 2:
        djc_make._wide_ints = lambda r, types=None: r      # as djc_make wrote them before: numbers
        return {"big": seed, "low": 0}
    if os.environ.get("RAW") and i == 3:
        return {"big": 1, "low": 0, "j": {"x": 2 ** 64}}
    return [{"big": seed, "low": -2 ** 63}, {"_part": "Bit", "bit": 1, "v": 2 ** 63}, {"_part": "Bit", "bit": 2, "v": seed}]

djc_make.run(make)
P
run "$DJC" populate Wide --where '{"big_id": 1}' --make-serve python3 wide.py
check "wide: serve: made (exit $RC)" test "$RC/$OUT" = "0/Wide: 1 made, 0 errors, 0 skipped"
run "$DJC" populate Wide --where '{"big_id": 4}' --make python3 wide.py
check "wide: per key: made (exit $RC)" test "$RC/$OUT" = "0/Wide: 1 made, 0 errors, 0 skipped"
expect_out "wide: the values round-trip" '{"big_id":1,"big":"18446744073709551615","low":-9223372036854775808,"j":null}
{"big_id":4,"big":"18446744073709551615","low":-9223372036854775808,"j":null}' djc fetch Wide --format json
expect_out "wide: ... the parts' too" '{"big_id":1,"bit":1,"v":"9223372036854775808"}
{"big_id":1,"bit":2,"v":"18446744073709551615"}
{"big_id":4,"bit":1,"v":"9223372036854775808"}
{"big_id":4,"bit":2,"v":"18446744073709551615"}' djc fetch Wide.Bit --format json
# written as numbers: key 2's uint64, key 3's json value (line 2 of each
# key: its fetch is line 1); the serve program is kept (one process: key 1
# is made again after them)
djc delete Wide --where '{"big_id": 1}' --yes >/dev/null
run env RAW=1 DJC_JOBS_RESERVE_BATCH=1 "$DJC" populate Wide --reserve-jobs --suppress-errors --processes 1 --json \
	--where '{"big_id": [1, 2, 3]}' --make-serve python3 wide.py
check "wide: serve, numbers: two keys fail, one made (exit $RC)" test "$RC/$(jq -c '[.success_count, .error_count]' <<<"$OUT")" = "1/[1,2]"
check "wide: ... by one program, kept after each failure" test "$(wc -l < pids)/$(sort -u pids | wc -l)" = "3/1"
rm -f pids
expect_out "wide: ... the error names the attribute and says to write a string" \
	'serve program output line 2: attribute '"'"'big'"'"': 18446744073709551615 is too big for a JSON number (above 2^63-1); write a uint64 as a string: "18446744073709551615"' \
	sh -c '"$DJC" jobs Wide --status error --json | jq -r ".jobs[] | select(.big_id == 2) | .error_message"'
expect_out "wide: ... and the attribute whose json value holds one" \
	"serve program output line 2: attribute 'j': its value holds 18446744073709551616, too big for a JSON number (above 2^63-1)" \
	sh -c '"$DJC" jobs Wide --status error --json | jq -r ".jobs[] | select(.big_id == 3) | .error_message"'
djc delete Wide --where '{"big_id": 1}' --yes >/dev/null
"$DJC" jobs clear Wide --status error >/dev/null
run env RAW=1 "$DJC" populate Wide --suppress-errors --json --where '{"big_id": [1, 2]}' --make python3 wide.py
check "wide: per key, numbers: key 2 fails (exit $RC)" test "$RC/$(jq -c '[.success_count, .error_count]' <<<"$OUT")" = "1/[1,1]"
check "wide: ... naming the attribute" test "$(jq -r '.errors[0].message' <<<"$OUT")" = \
	'make output line 1: attribute '"'"'big'"'"': 18446744073709551615 is too big for a JSON number (above 2^63-1); write a uint64 as a string: "18446744073709551615"'
expect_out "wide: nothing of the failed keys was written" "1 4" sh -c '"$DJC" fetch Wide --format json | jq -r .big_id | tr "\n" " " | sed "s/ $//"'
}
tcase wide_ints

finish
