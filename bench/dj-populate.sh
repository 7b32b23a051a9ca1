#!/usr/bin/env bash
# dj-populate.sh - part of `make bench` (issue 38): DataJoint's own
# populate(reserve_jobs=True, processes=N) against `djc worker --processes N`
# on the same adopted table, same server, same Python make work.
#
# Per backend (BENCH_DJ_BACKENDS, default "mysql postgresql"), on a
# throwaway server: the real DataJoint declares tests/datajoint/pipeline.py
# with BENCH_DJ_SESSIONS sessions (default 200: twice as many Stats keys),
# then, for each N in BENCH_DJ_PROCS (default "1 4"):
#   datajoint  Stats.populate(reserve_jobs=True, processes=N): its make
#              (fetch the session's blob, compute, insert the row and its
#              part rows) in DataJoint's transaction per key;
#   djc        the results deleted by DataJoint, `djc adopt` (once), then
#              `djc worker --processes N --until-empty` with the same
#              computation as a Python serve make (tests/datajoint/stats_make.py,
#              DataJoint's blob codec), committed by djc.
# Wall-clock seconds from start to the last worker's exit, keys per second,
# and DataJoint's check of the result after each run (pipeline.py check).
# Prints one line per run and a Markdown table (BENCH_DJ_OUT: append it to
# that file). DataJoint as in scripts/check-datajoint.sh (DJC_DATAJOINT_PYTHON,
# python3 with datajoint, or ../shared/realdj); without it, or without
# `djc adopt`, says what it skipped and exits 0 (a benchmark, not a check).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DJC=${DJC:-$ROOT/build/djc}
SESSIONS=${BENCH_DJ_SESSIONS:-200}
PROCS=${BENCH_DJ_PROCS:-1 4}
BACKENDS=${BENCH_DJ_BACKENDS:-mysql postgresql}

. "$ROOT/scripts/datajoint-python.sh"
djpy_find || { echo "dj-populate: skipped ($DJPY_WHY)"; exit 0; }
HAVE_ADOPT=1
"$DJC" adopt --help >/dev/null 2>&1 || HAVE_ADOPT=0
[ "$HAVE_ADOPT" = 1 ] || echo "dj-populate: $DJC has no 'adopt' command: the djc runs are skipped"
PL="$DJPY -W ignore $ROOT/tests/datajoint/pipeline.py"

. "$ROOT/scripts/throwaway-servers.sh"
tw_init djbench

now() { date +%s.%N; }
TABLE="| backend | who | processes | keys | seconds | keys/s | DataJoint's check |
|---|---|---|---|---|---|---|"
row() {  # BACKEND WHO N KEYS T0 T1 CHECK
	local s kps
	s=$(python3 -c 'import sys; print("%.2f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$5" "$6")
	kps=$(python3 -c 'import sys; print("%.1f" % (int(sys.argv[1]) / max(float(sys.argv[2]), 1e-9)))' "$4" "$s")
	echo "dj-populate: $1 $2 --processes $3: $4 keys in $s s ($kps keys/s), check $7"
	TABLE="$TABLE
| $1 | $2 | $3 | $4 | $s | $kps | $7 |"
}

for be in $BACKENDS; do
	url=$(tw_start "$be") || { echo "dj-populate: $be: no server" >&2; exit 1; }
	p=djbench
	$PL declare "$url" $p "$SESSIONS" >"$WORK/decl" 2>&1 || { cat "$WORK/decl" >&2; exit 1; }
	keys=$((SESSIONS * 2))
	adopted=0
	for n in $PROCS; do
		t0=$(now)
		$PL populate "$url" $p 0 "$n" >"$WORK/dj.out" 2>&1
		t1=$(now)
		ck=failed; $PL check "$url" $p >/dev/null 2>&1 && ck=passed
		row "$be" datajoint "$n" $keys "$t0" "$t1" $ck
		# the results go (DataJoint's delete), for the next run
		$DJPY -W ignore -c 'import sys; sys.path.insert(0, sys.argv[3]); import pipeline as P; P.connect(sys.argv[1]); P.tables(sys.argv[2])[-1].delete(prompt=False)' \
			"$url" $p "$ROOT/tests/datajoint" >/dev/null 2>&1
		[ "$HAVE_ADOPT" = 1 ] || continue
		D=("$DJC" --db "$url" --schema ${p}_djc)
		if [ $adopted = 0 ]; then
			printf 'Stats\n    make_serve = %s %s/tests/datajoint/stats_make.py\n' "$DJPY" "$ROOT" > "$WORK/o.djc"
			"${D[@]}" adopt ${p}_main --overlay "$WORK/o.djc" >/dev/null || { echo "dj-populate: djc adopt failed" >&2; continue; }
			adopted=1
		fi
		t0=$(now)
		"${D[@]}" worker --processes "$n" --until-empty >"$WORK/djc.out" 2>&1
		t1=$(now)
		ck=failed; $PL check "$url" $p >/dev/null 2>&1 && ck=passed
		row "$be" djc "$n" $keys "$t0" "$t1" $ck
		$DJPY -W ignore -c 'import sys; sys.path.insert(0, sys.argv[3]); import pipeline as P; P.connect(sys.argv[1]); P.tables(sys.argv[2])[-1].delete(prompt=False)' \
			"$url" $p "$ROOT/tests/datajoint" >/dev/null 2>&1
	done
	tw_stop "$be"
done
printf '%s\n' "$TABLE"
[ -n "${BENCH_DJ_OUT:-}" ] && printf '\n%s\n' "$TABLE" >> "$BENCH_DJ_OUT"
exit 0
