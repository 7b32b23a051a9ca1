#!/usr/bin/env bash
# query-dj.sh - a join + restriction + aggregation over ~100k rows, djc
# against the real DataJoint on the same server (issue 39; part of `make
# bench`). Per backend, on a throwaway server (default durability):
# DataJoint declares tests/datajoint/queries.py's pipeline with
# BENCH_Q_SESSIONS sessions (default 1,000) of 50-150 trials (~100k Trial
# rows), djc adopts it, and the query
#     (Subject & species="rat").aggr(Session * Trial & outcome="hit", n=count(), mean_rt=avg(rt))
# is timed BENCH_Q_ROUNDS times (default 15) each way:
#   fetch      in a connected process, the fetch alone: djc_fetch_expr (the
#              C API, build/bench/query_run) against DataJoint's
#              fetch(as_dict=True) (queries.py bench), both reading every row
#   process    a whole process each: `djc fetch EXPR --format json` (start,
#              connect, one statement, print) against a Python process
#              doing the same with DataJoint (import, connect, fetch)
# and the medians are printed with the ratios (DataJoint / djc: above 1, djc is
# faster). Both must give the same number of rows. BENCH_Q_OUT: append the
# Markdown table to that file. DataJoint as in scripts/datajoint-python.sh;
# without it, says so and exits 0 (a benchmark, not a check).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DJC=${DJC:-$ROOT/build/djc}
SESSIONS=${BENCH_Q_SESSIONS:-1000}
ROUNDS=${BENCH_Q_ROUNDS:-15}
BACKENDS=${BENCH_Q_BACKENDS:-mysql postgresql}
. "$ROOT/scripts/datajoint-python.sh"
djpy_find || { echo "query-dj: skipped ($DJPY_WHY)"; exit 0; }
Q="$DJPY $ROOT/tests/datajoint/queries.py"

. "$ROOT/scripts/throwaway-servers.sh"
tw_init benchq

# median of the numbers on stdin
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
now_ms() { date +%s%N | awk '{printf "%.3f", $1 / 1e6}'; }

TABLE="| backend | trials | rows | fetch: djc ms | fetch: DataJoint ms | DataJoint / djc | process: djc ms | process: DataJoint ms | DataJoint / djc |
|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for be in $BACKENDS; do
	url=$(tw_start "$be") || { echo "query-dj: $be: no server" >&2; exit 1; }
	decl=$($Q declare "$url" djq "$SESSIONS" 100 2>/dev/null) || { echo "query-dj: DataJoint's declare failed on $be" >&2; exit 1; }
	trials=$(printf '%s' "$decl" | sed -n 's/.* \([0-9]*\) trials.*/\1/p')
	"$DJC" --db "$url" --schema djq_djc adopt djq_lab djq_q >/dev/null || { echo "query-dj: djc adopt failed on $be" >&2; exit 1; }
	expr=$($Q bench-expr "$url" djq 2>/dev/null)
	djc_rows=$("$DJC" --db "$url" --schema djq_djc fetch "$expr" --format jsonl | wc -l)
	: > "$WORK/djc.ms"
	: > "$WORK/djp.ms"
	for _ in $(seq "$ROUNDS"); do
		t0=$(now_ms)
		"$DJC" --db "$url" --schema djq_djc fetch "$expr" --format json > /dev/null
		t1=$(now_ms)
		awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}' >> "$WORK/djc.ms"
		t0=$(now_ms)
		$Q bench "$url" djq 1 > /dev/null 2>&1
		t1=$(now_ms)
		awk -v a="$t0" -v b="$t1" 'BEGIN {print b - a}' >> "$WORK/djp.ms"
	done
	read -r djf dj_rows < <($Q bench "$url" djq "$ROUNDS" 2>/dev/null)
	read -r cf cf_rows < <("$ROOT/build/bench/query_run" "$url" djq_djc "$expr" "$ROUNDS")
	djc_ms=$(median < "$WORK/djc.ms")
	djp_ms=$(median < "$WORK/djp.ms")
	[ "$djc_rows/$cf_rows" = "$dj_rows/$dj_rows" ] || { echo "query-dj: $be: djc gave $djc_rows/$cf_rows rows, DataJoint $dj_rows" >&2; exit 1; }
	line=$(awk -v b="$be" -v t="$trials" -v r="$djc_rows" -v cf="$cf" -v f="$djf" -v c="$djc_ms" -v p="$djp_ms" \
		'BEGIN {printf "| %s | %s | %s | %.2f | %.2f | %.2fx | %.1f | %.1f | %.2fx |", b, t, r, cf, f, f / cf, c, p, p / c}')
	echo "$line"
	TABLE="$TABLE
$line"
done
echo
echo "$TABLE"
[ -n "${BENCH_Q_OUT:-}" ] && printf '\n%s\n' "$TABLE" >> "$BENCH_Q_OUT"
exit 0
