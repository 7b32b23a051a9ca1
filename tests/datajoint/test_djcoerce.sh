#!/usr/bin/env bash
# test_djcoerce.sh - values a DataJoint make inserts, converted by djc as
# DataJoint's insert converts them (python/djc_datajoint.py; run by
# scripts/check-datajoint.sh on each of its servers, not by `make check`).
#   1. DataJoint declares tests/datajoint/coerce_pipeline.py: Coerce and
#      CoerceDJ (the same make: one key per case, an attribute and a value
#      such as NaN in a nullable float64, "7" in an int32, 1.005 in a
#      decimal(6,2), a datetime with microseconds, bytes in a <blob>), Halt
#      (its make raises SystemExit(3) and KeyboardInterrupt for two keys);
#   2. DataJoint's own populate fills CoerceDJ; djc adopts the schema and
#      populates Coerce and Halt with the classes' make (djc_datajoint);
#   3. every case stored alike by both, or refused by both (djc's error
#      naming the attribute), but for the few coerce_pipeline.py's KNOWN
#      lists (djc must then fail the key naming the attribute);
#   4. Halt: the two keys are error jobs "SystemExit: 3" and
#      "KeyboardInterrupt" with their traceback, the others made.
# Usage: tests/datajoint/test_djcoerce.sh URL (MariaDB or PostgreSQL).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DJC=${DJC:-$ROOT/build/djc}
. "$ROOT/scripts/datajoint-python.sh"
djpy_find || { echo "test_djcoerce: $DJPY_WHY" >&2; exit 2; }
[ $# = 1 ] || { echo "usage: test_djcoerce.sh URL" >&2; exit 2; }
URL=$1
W=$(mktemp -d /tmp/djc-djcoerce.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
echo "$URL" > "$W/dj.url"   # DataJoint's credentials, from a file (test_djclass.sh says why)
export DJCO_URL_FILE=$W/dj.url DJCO_PREFIX=djco
PASS=0 FAIL=0
check() {  # check DESCRIPTION CMD...
	local d=$1
	shift
	if "$@" >"$W/out" 2>&1; then PASS=$((PASS + 1)); echo "  ok   $d: $(grep -v 'WARNING\|Warning\|^ *warn' "$W/out" | tail -1)"
	else FAIL=$((FAIL + 1)); echo "  FAIL $d" >&2; sed 's/^/      /' "$W/out" | tail -25 >&2; fi
}
TD=$ROOT/tests/datajoint
PL=("$DJPY" "$TD/coerce_pipeline.py")
D=("$DJC" --db "$URL" --schema djco_djc)

check "DataJoint declares Coerce, CoerceDJ, Halt" "${PL[@]}" declare
: > overlay
for t in Coerce Halt; do
	printf '%s\n    make_serve = %s -m djc_datajoint %s/coerce_pipeline.py:%s\n    timeout = 5m\n' \
		"$t" "$DJPY" "$TD" "$t" >> overlay
done
check "djc adopt djco_main" "${D[@]}" adopt djco_main --overlay overlay
check "DataJoint populates CoerceDJ itself" "${PL[@]}" populate
populated() {  # TABLE: djc populates it; some keys fail by design, so its exit status is 1: no failure, none lost
	"${D[@]}" populate "$1" --reserve-jobs --suppress-errors --json > "$1.json"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["failure"] is None and d["lost_count"] == 0 and d["success_count"] > 0, d
print("made %d, %d errors" % (d["success_count"], d["error_count"]))' "$1.json"
}
check "djc populates Coerce (djc_datajoint)" populated Coerce
check "djc's error jobs of Coerce" sh -c '"$@" jobs Coerce --status error --json > coerce-jobs.json' _ "${D[@]}"
check "Coerce (djc) and CoerceDJ (DataJoint) hold the same rows" "${PL[@]}" compare coerce-jobs.json
check "djc populates Halt" populated Halt
check "Halt: SystemExit and KeyboardInterrupt are the keys' errors, with their traceback" sh -c '
"$@" jobs Halt --status error --json > halt-jobs.json && python3 - halt-jobs.json Halt.json <<"P"
import json, sys
rows = json.load(open(sys.argv[1]))
rows = rows if isinstance(rows, list) else rows.get("jobs", rows)
got = sorted(r["error_message"] for r in rows)
assert got == ["KeyboardInterrupt", "SystemExit: 3"], got
for r in rows:
    assert "Traceback" in (r.get("error_stack") or "") and "coerce_pipeline.py" in r["error_stack"], r
d = json.load(open(sys.argv[2]))
assert (d["success_count"], d["error_count"]) == (3, 2), d
print("made %d; errors: %s" % (d["success_count"], ", ".join(got)))
P' _ "${D[@]}"
"${D[@]}" unadopt djco_main >/dev/null 2>&1
"${PL[@]}" drop >/dev/null 2>&1
echo "test_djcoerce: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
