#!/bin/bash
# test_pymake.sh - the Python make module (python/djc_make.py) on its own:
# its unit tests (tests/python/test_djc_make.py, standard library unittest,
# no database) play djc's side of both make protocols. The module working
# with djc itself, on each backend, is test_serve.sh; here, a Python make
# finding the module and djc without PYTHONPATH or djc on PATH.
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

finish
