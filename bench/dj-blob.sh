#!/usr/bin/env bash
# dj-blob.sh - part of `make bench` (issue 40): the 10 MiB-in, 1 MiB-out
# make of bench/py-blob.sh on a pipeline the real DataJoint declared
# (bench/prog/dj_blob.py), populated on the same server, by turns, by
#   datajoint  Head.populate(reserve_jobs=True) with its Python make, timed
#              around the command (python3 dj_blob.py populate: its import of
#              DataJoint and connection are in it) and inside it (the
#              populate call alone)
#   djc        `djc populate Head --reserve-jobs` on the adopted schema, the
#              same make as a serve program (bench/prog/blob_make.py,
#              BLOB_MODE=dj: arrays decoded and packed in DataJoint's format
#              by python/djc_make.py and djc_blob.py, numpy only; timed
#              around the command: its start and the program's are in it)
#   djc_lib    the same make in-process: `python3 blob_make.py lib` calls
#              djc_lib.populate("Head", make, reserve_jobs=True) on the
#              adopted schema (python/djc_lib.py: libdjc in the Python
#              process, no program; timed around the command: the
#              interpreter's start and imports are in it)
# DataJoint checks the rows after each run (dj_blob.py check). Per backend
# (DJBLOB_BACKENDS, default "postgresql mysql"): DJBLOB_KEYS keys (default
# 24) of DJBLOB_MB MiB (default 10), DJBLOB_ROUNDS rounds (default 3); the
# median keys/s of each and their ratio. Prints a Markdown table (DJBLOB_OUT:
# appends it to that file). The servers run at their default durability.
# Without DataJoint it says so and exits 0.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DJC=${DJC:-$ROOT/build/djc}
N=${DJBLOB_KEYS:-24}
MB=${DJBLOB_MB:-10}
R=${DJBLOB_ROUNDS:-3}
BACKENDS=${DJBLOB_BACKENDS:-postgresql mysql}
if [ "${BENCH_QUICK:-0}" = 1 ]; then N=3; R=1; fi
. "$ROOT/scripts/datajoint-python.sh"
djpy_find || { echo "dj-blob: skipped ($DJPY_WHY)"; exit 0; }
DB="$DJPY -W ignore $ROOT/bench/prog/dj_blob.py"
. "$ROOT/scripts/throwaway-servers.sh"
# the servers' default durability (fsync, synchronous_commit; InnoDB's
# flush at each commit), as every headline figure of make bench
export PG_DURABLE=1 MARIADB_DURABLE=1
tw_init djblob
now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
TABLE="| backend | DataJoint keys/s | (its populate call alone) | djc keys/s | djc / DataJoint | djc_lib keys/s | djc_lib / DataJoint | checks |
|---|---|---|---|---|---|---|---|"
for be in $BACKENDS; do
	url=$(tw_start "$be") || { echo "dj-blob: $be: no server" >&2; exit 1; }
	S=djblob
	$DB declare "$url" $S "$N" "$MB" || { echo "dj-blob: $be: declare failed" >&2; exit 1; }
	D=("$DJC" --db "$url" --schema ${S}_djc)
	printf 'Head\n    make_serve = %s %s/bench/prog/blob_make.py\n' "$DJPY" "$ROOT" > "$WORK/o.djc"
	"${D[@]}" adopt $S --overlay "$WORK/o.djc" >/dev/null || { echo "dj-blob: $be: djc adopt failed" >&2; exit 1; }
	: > "$WORK/dj.$be"; : > "$WORK/djcall.$be"; : > "$WORK/djc.$be"; : > "$WORK/lib.$be"
	checks=passed
	for r in $(seq 1 "$R"); do
		t0=$(now)
		s=$($DB populate "$url" $S | tail -1 | cut -d" " -f1)   # (DataJoint warns on stdout)
		t1=$(now)
		awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", n / (b - a) }' >> "$WORK/dj.$be"
		awk -v n="$N" -v s="$s" 'BEGIN { printf "%.3f\n", n / s }' >> "$WORK/djcall.$be"
		$DB check "$url" $S "$N" >/dev/null || checks=FAILED
		$DB clear "$url" $S
		t0=$(now)
		BLOB_MODE=dj "${D[@]}" populate Head --reserve-jobs >"$WORK/djc.out" 2>&1 || { cat "$WORK/djc.out" >&2; checks=FAILED; }
		t1=$(now)
		awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", n / (b - a) }' >> "$WORK/djc.$be"
		$DB check "$url" $S "$N" >/dev/null || checks=FAILED
		$DB clear "$url" $S
		t0=$(now)
		BLOB_MODE=dj BLOB_TABLE=Head BLOB_REFRESH=1 DJC_LIBRARY="$ROOT/build/libdjc.so.0" PYTHONPATH="$ROOT/python" \
			$DJPY "$ROOT/bench/prog/blob_make.py" lib "$url" ${S}_djc >"$WORK/lib.out" 2>&1 || { cat "$WORK/lib.out" >&2; checks=FAILED; }
		t1=$(now)
		grep -q '"errors": 0' "$WORK/lib.out" && grep -q "\"keys\": $N," "$WORK/lib.out" || { cat "$WORK/lib.out" >&2; checks=FAILED; }
		awk -v n="$N" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", n / (b - a) }' >> "$WORK/lib.$be"
		$DB check "$url" $S "$N" >/dev/null || checks=FAILED
		$DB clear "$url" $S
		echo "dj-blob: $be round $r: DataJoint $(tail -1 "$WORK/dj.$be") keys/s ($(tail -1 "$WORK/djcall.$be") in the populate call), djc $(tail -1 "$WORK/djc.$be") keys/s, djc_lib $(tail -1 "$WORK/lib.$be") keys/s" >&2
	done
	a=$(median < "$WORK/dj.$be"); b=$(median < "$WORK/djc.$be"); c=$(median < "$WORK/djcall.$be"); l=$(median < "$WORK/lib.$be")
	TABLE="$TABLE
| $be | $a | $c | $b | $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2fx", b / a }') | $l | $(awk -v a="$a" -v b="$l" 'BEGIN { printf "%.2fx", b / a }') | $checks |"
	tw_stop "$be"
done
printf '%s keys of %s MiB, %s rounds, medians:\n\n%s\n' "$N" "$MB" "$R" "$TABLE"
[ -n "${DJBLOB_OUT:-}" ] && printf '\n%s\n' "$TABLE" >> "$DJBLOB_OUT"
exit 0
