#!/usr/bin/env bash
# check-datajoint.sh - `make check-datajoint` (not part of `make check`):
# djc on a pipeline that the real DataJoint Python declared, on MariaDB and
# on PostgreSQL (issue 38). Per backend, on a throwaway server:
#   1. DataJoint declares the pipeline of tests/datajoint/pipeline.py (a
#      manual Subject in a second schema, Session with a <blob>, a lookup
#      ParamSet, a computed Stats with a part table, a blob attribute, a
#      renamed FK and the job metadata columns) and inserts the upstream rows;
#   2. DataJoint's own populate(reserve_jobs=True) makes 2 keys first;
#   3. `djc --schema PREFIX_djc adopt PREFIX_main --overlay F` adopts it
#      (the overlay gives Stats a Python serve make, tests/datajoint/stats_make.py,
#      which packs and unpacks blobs with DataJoint's codec);
#   4. `djc worker --processes 3 --until-empty` populates the rest while a
#      DataJoint populate(reserve_jobs=True) runs on the same table (a mixed
#      fleet: keys made twice are skipped by djc, docs/adopt-interop.md);
#   5. DataJoint fetches every result (blobs unpack to the expected arrays,
#      the part rows are there), progress() is complete, populate finds
#      nothing to do, every row has its job metadata (pipeline.py check);
#   6. `djc unadopt` removes djc's companion schema, and DataJoint's check
#      still passes;
#   7. tests/datajoint/test_djclass.sh: DataJoint table classes' own make()
#      run by djc workers (python/djc_datajoint.py);
#   8. tests/datajoint/test_djcoerce.sh: values DataJoint's insert converts
#      (NaN, "7" in an int, 1.005 in a decimal(6,2), bytes in a <blob>, ...)
#      stored by djc as by DataJoint's own populate; SystemExit in a make.
#
# DataJoint: $DJC_DATAJOINT_PYTHON (an interpreter that can `import
# datajoint`), else python3 when it can (a user's `pip install datajoint`),
# else the copy set up by ../shared/realdj/setup.sh (REALDJ_SETUP) into
# build/realdj. DJC_DATAJOINT_BACKENDS (default "mysql postgresql").
# DJC_DATAJOINT_HALF_ONLY=1: only DataJoint's half (steps 1, 2, DataJoint
# populating everything itself, 5): for a djc build without `djc adopt`.
# Exit 0 when every step passed on every backend.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DJC=${DJC:-$ROOT/build/djc}
HALF=${DJC_DATAJOINT_HALF_ONLY:-0}
BACKENDS=${DJC_DATAJOINT_BACKENDS:-mysql postgresql}

# ------------------------------------------------------------- DataJoint
. "$ROOT/scripts/datajoint-python.sh"
djpy_find || { echo "check-datajoint: $DJPY_WHY" >&2; exit 2; }
if [ "$HALF" != 1 ] && ! "$DJC" adopt --help >/dev/null 2>&1; then
	echo "check-datajoint: $DJC has no 'adopt' command; DJC_DATAJOINT_HALF_ONLY=1 runs DataJoint's half alone" >&2
	exit 2
fi
PL="$DJPY $ROOT/tests/datajoint/pipeline.py"

. "$ROOT/scripts/throwaway-servers.sh"
tw_init checkdj

PASS=0 FAIL=0
step() {  # step BACKEND DESCRIPTION CMD...: runs CMD, its output to the log
	local be=$1 desc=$2
	shift 2
	if "$@" >"$WORK/out" 2>&1; then
		PASS=$((PASS + 1))
		echo "  ok   [$be] $desc: $(grep -v WARNING "$WORK/out" | grep -v 'Falling back\|^)' | tail -1)"
	else
		FAIL=$((FAIL + 1))
		echo "  FAIL [$be] $desc" >&2
		sed 's/^/      /' "$WORK/out" | tail -20 >&2
	fi
}

# djc's half on one server: adopt, workers beside a DataJoint populate
djc_half() {  # BACKEND URL PREFIX
	local be=$1 url=$2 p=$3 dj wrc
	local D=("$DJC" --db "$url" --schema "${p}_djc")
	printf 'Stats\n    make_serve = %s %s/tests/datajoint/stats_make.py\n    timeout = 5m\n' "$DJPY" "$ROOT" > "$WORK/$p.djc"
	step "$be" "djc adopt ${p}_main --overlay" "${D[@]}" adopt "${p}_main" --overlay "$WORK/$p.djc"
	step "$be" "djc adopt again (idempotent)" "${D[@]}" adopt "${p}_main" --overlay "$WORK/$p.djc"
	step "$be" "adopt leaves the singleton Settings out, and says so" sh -c \
		'"$@" | grep -x "left out .*\.settings (Settings): a singleton table .*"' _ "${D[@]}" adopt "${p}_main"
	# djc's workers start first; DataJoint's populate joins once djc has made
	# a key (14 of 16 remain after DataJoint's first 2; djc's interpreters
	# take a while to start), so djc does a share of the work on every backend
	"${D[@]}" worker --processes 3 --until-empty --json > "$WORK/worker.json" 2> "$WORK/worker.err" &
	local djcw=$!
	step "$be" "djc's workers make a first key" sh -c 'for i in $(seq 600); do
		"$@" progress Stats --json | grep -qE "\"remaining\":([0-9]|1[0-3])," && { echo "djc made a key"; exit 0; }
		sleep 0.1; done; echo "djc made no key in 60 s"; exit 1' _ "${D[@]}"
	$PL populate "$url" "$p" 0 1 >"$WORK/dj.out" 2>&1 &
	dj=$!
	wait "$djcw"
	wrc=$?
	step "$be" "djc worker --processes 3 beside a DataJoint populate" \
		sh -c 'cat "$1" >&2; cat "$2"; exit "$3"' _ "$WORK/worker.err" "$WORK/worker.json" "$wrc"
	step "$be" "DataJoint's populate beside djc's workers" wait $dj
	step "$be" "djc's counts: no errors, every key made or skipped, djc made some" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["error_count"] == 0 and d["lost_count"] == 0, d
assert d["success_count"] > 0, d
print("djc made %d, skipped %d (made by DataJoint first)" % (d["success_count"], d["skipped_count"]))' "$WORK/worker.json"
	step "$be" "djc progress Stats" "${D[@]}" progress Stats
}

for be in $BACKENDS; do
	url=$(tw_start "$be") || { echo "check-datajoint: $be: no server" >&2; exit 1; }
	p=djck
	step "$be" "DataJoint declares the pipeline and inserts upstream rows" $PL declare "$url" $p 8
	step "$be" "DataJoint populates 2 keys itself first" $PL populate "$url" $p 2
	if [ "$HALF" = 1 ]; then
		step "$be" "DataJoint populates the rest (DJC_DATAJOINT_HALF_ONLY)" $PL populate "$url" $p 0 2
	else
		djc_half "$be" "$url" $p
	fi
	step "$be" "DataJoint reads the results" $PL check "$url" $p
	if [ "$HALF" != 1 ]; then
		step "$be" "djc unadopt ${p}_main" "$DJC" --db "$url" --schema ${p}_djc unadopt ${p}_main
		step "$be" "DataJoint's tables untouched by unadopt" $PL check "$url" $p
	fi
	[ "$HALF" = 1 ] || step "$be" "DataJoint classes' own make() under djc (tests/datajoint/test_djclass.sh)" \
		tests/datajoint/test_djclass.sh "$url"
	[ "$HALF" = 1 ] || step "$be" "values DataJoint's insert converts, converted alike under djc (tests/datajoint/test_djcoerce.sh)" \
		tests/datajoint/test_djcoerce.sh "$url"
done
echo "check-datajoint: $PASS passed, $FAIL failed$([ "$HALF" = 1 ] && echo ' (DataJoint half only)')"
[ "$FAIL" = 0 ]
