#!/usr/bin/env bash
# bench/py-perkey.sh - issue 40: a per-key Python make (one interpreter per
# key, python/djc_make.py) that fetches its key's upstream row, its fetch
# through djc's fetch socket against a `djc fetch` process (the socket
# forgotten: bench/prog/perkey_make.py) and a `djc fetch --format json`
# process that asks the socket (as a shell make's does), with the make
# that fetches nothing as the floor; on SQLite and PostgreSQL, one worker, the kinds
# alternating in each round. Prints a Markdown section on stdout.
# Environment: BUILD (default build), PG_URL (default: a throwaway
# server), PYTHON (default: python3 on PATH), PERKEY_KEYS (default 100), PERKEY_ROUNDS (default 3),
# BENCH_QUICK=1 (5 keys, 1 round).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
DJC=$ROOT/$BUILD/djc
N=${PERKEY_KEYS:-100}
R=${PERKEY_ROUNDS:-3}
if [ "${BENCH_QUICK:-0}" = 1 ]; then N=5; R=1; fi
[ -x "$DJC" ] || { echo "py-perkey.sh: build first (make BUILD=$BUILD all)" >&2; exit 2; }
PY=${PYTHON:-$(command -v python3)}
. "$ROOT/scripts/throwaway-servers.sh"
tw_init perkey
[ -n "${PG_URL:-}" ] || PG_URL=$(tw_start postgresql)
LOG=$WORK/runs.jsonl
: >"$LOG"
T0=$(date +%s)
cd "$WORK"
printf 'Src (manual)\n    id : int32\n    ---\n    x : int32\n\nDst (computed)\n    -> Src\n    ---\n    y : int32\n' > p.djc
for i in $(seq 1 "$N"); do printf '{"id": %d, "x": %d}\n' "$i" "$i"; done > src.jsonl
for be in sqlite postgresql; do
	if [ $be = sqlite ]; then export DJC_DATABASE_URL="sqlite:$WORK/perkey.db"; unset DJC_DATABASE_SCHEMA
	else export DJC_DATABASE_URL=$PG_URL DJC_DATABASE_SCHEMA=perkey_$$; fi
	"$DJC" declare p.djc >/dev/null
	"$DJC" insert Src src.jsonl >/dev/null
	for r in $(seq 1 "$R"); do
		for k in socket cli cli-socket none; do
			"$DJC" delete Dst --yes >/dev/null
			t0=$(date +%s.%N)
			PERKEY_FETCH=$k "$DJC" populate Dst --make "$PY" "$ROOT/bench/prog/perkey_make.py" >/dev/null
			t1=$(date +%s.%N)
			made=$("$DJC" progress Dst --json | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d["total"] - d["remaining"])')
			printf '{"backend":"%s","round":%d,"kind":"%s","secs":%s,"made":%s}\n' "$be" "$r" "$k" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')" "$made" >>"$LOG"
			echo "py-perkey.sh: $be round $r $k: $(tail -1 "$LOG")" >&2
		done
	done
done
python3 - "$LOG" "$(($(date +%s) - T0))" "$N" "$PY" <<'PYX'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
secs, n, py = sys.argv[2], int(sys.argv[3]), sys.argv[4]
ok = all(r["made"] == n for r in rows)
print("### A per-key Python make that fetches its upstream row: the fetch socket vs `djc fetch` (bench/py-perkey.sh, issue 40)\n")
print("One run, %s s: %d keys per populate, one worker, no reservation, the kinds alternating in each round; ms a key,"
      " median of the rounds (rounds in brackets). Every populate made all its keys: %s. Python: %s. `none` fetches"
      " nothing: the interpreter's start and djc's cost a key, the floor.\n" % (secs, n, "yes" if ok else "NO", py))
print("| backend | fetch | ms a key | fetch's own ms a key (above none) | / djc fetch (its own connection) |")
print("|---|---|---:|---:|---:|")
for be in ("sqlite", "postgresql"):
    med = {}
    for k in ("socket", "cli", "cli-socket", "none"):
        got = [1000 * r["secs"] / n for r in rows if r["backend"] == be and r["kind"] == k]
        med[k] = (statistics.median(got), got)
    for k in ("socket", "cli", "cli-socket", "none"):
        m, got = med[k]
        own = "%.2f" % (m - med["none"][0]) if k != "none" else "-"
        ratio = "%.2fx" % (med["cli"][0] / m) if k in ("socket", "cli-socket") else "-"
        name = {"cli": "djc fetch (its own connection)", "cli-socket": "djc fetch (through the socket)"}.get(k, k)
        print("| %s | %s | %.2f (%s) | %s | %s |" % (be, name, m,
              " ".join("%.2f" % x for x in got), own, ratio))
print()
PYX
