#!/bin/bash
# test_pymake.sh - the Python make module (python/djc_make.py) on its own:
# its unit tests (tests/python/test_djc_make.py, standard library unittest,
# no database) play djc's side of both make protocols. The module working
# with djc itself, on each backend, is test_serve.sh.
. "$ROOT/tests/cli/lib.sh"
export PYTHONPATH="$ROOT/python"
run python3 "$ROOT/tests/python/test_djc_make.py" -v
ran=$(printf '%s\n' "$ERR" | sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p')
bad=$(printf '%s\n' "$ERR" | grep -cE ' \.\.\. (FAIL|ERROR)$')
check "the module's unit tests ran (${ran:-0} of them)" test "${ran:-0}" -ge 20
check "... and passed (exit $RC, $bad failed)" test "$RC/$bad" = 0/0
# each test is one check of this file
PASS=$((PASS + ${ran:-0} - bad))
FAIL=$((FAIL + bad))
[ "$RC" = 0 ] || printf '%s\n' "$ERR" | grep -vE ' \.\.\. ok$' | head -60 >&2
finish
