#!/usr/bin/env bash
# bench/py-serve.sh - issue 40: a no-op Python make under the serve protocol
# (bench/prog/noop_make.py, python/djc_make.py) against the C make
# (bench/serve_run.c's callback), and the same two makes reading their
# key's Src row first (bench/prog/fetch_make.py, serve_run's c-fetch: the
# read is checked at the commit), 7 worker processes, jobs.reserve_batch 1
# and 50, PostgreSQL and MariaDB, in one run: the runs of one round
# alternate the kinds, rounds repeat (the machine is shared: compare the
# ratios of one run). Prints a Markdown section on stdout.
#
# Environment: BUILD (default build), PG_URL / MY_URL (servers to use;
# default: throwaway ones of scripts/pg-server.sh and
# scripts/mariadb-server.sh), PYSERVE_KEYS (default 20000), PYSERVE_ROUNDS
# (default 3), PYSERVE_PROCS (default 7), PYSERVE_BATCHES (default "1 50":
# the jobs.reserve_batch values measured), PYSERVE_KINDS (default "c python
# python-lib c-fetch python-fetch python-lib-fetch"; the python-lib kinds:
# the same Python makes called in-process by libdjc through
# python/djc_lib.py, bench/prog/lib_make.py), PYTHON (default: Debian's /usr/bin/python3, the
# interpreter make check installs python3-numpy for, else python3 on PATH;
# see below), PYSERVE_SCHEMA (default pys: another for each run sharing a
# server), BENCH_QUICK=1 (2,000 keys, 1 round).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
NOOP=$ROOT/$BUILD/bench/noop
RUN=$ROOT/$BUILD/bench/serve_run
N=${PYSERVE_KEYS:-20000}
R=${PYSERVE_ROUNDS:-3}
P=${PYSERVE_PROCS:-7}
SCHEMA=${PYSERVE_SCHEMA:-pys}
if [ "${BENCH_QUICK:-0}" = 1 ]; then N=2000; R=1; fi
# Not the python3 on PATH by default: on this workplace's machines that is a
# pyenv interpreter whose site-packages holds a .pth the sandbox writes (it
# imports certifi at every start: 68 ms against Debian's 27 ms with
# djc_make imported), a cost no user's interpreter has; each worker's
# program pays its start inside the run (bench/results-2026-12-07.md,
# "The interpreter py-serve.sh runs": 0.65x against 0.72x on PostgreSQL at
# batch 1, the same quiet machine within minutes).
if [ -n "${PYTHON:-}" ]; then PY=$PYTHON
elif [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3
else PY=$(python3 -c 'import sys; print(sys.executable)')
fi
[ -x "$NOOP" ] && [ -x "$RUN" ] || { echo "py-serve.sh: build first (make BUILD=$BUILD all)" >&2; exit 2; }
. "$ROOT/scripts/throwaway-servers.sh"
tw_init pyserve
OWN_MY=0
[ -n "${PG_URL:-}" ] || PG_URL=$(tw_start postgresql)
[ -n "${MY_URL:-}" ] || { MY_URL=$(tw_start mysql); OWN_MY=1; }
# Every run starts from the same state (as bench/run.sh's settle): the
# reset's deleted rows vacuumed on PostgreSQL (VACUUM (ANALYZE), then
# CHECKPOINT), purged on MariaDB (innodb_max_purge_lag_wait=0 waits for
# it; on a server of this script's own, where it is root). Without it the
# dead rows of the run before were vacuumed at a moment of autovacuum's
# choosing, sometimes during the next run, and a claim reads past the dead
# index entries at the head of the queue until then: the same C make went
# from 31,818 to 13,355 keys/s within four runs of one minute.
settle() {
	case $1 in
	postgresql) psql -X -q "$PG_URL" -c "VACUUM (ANALYZE)" -c "CHECKPOINT" >/dev/null ||
		echo "py-serve.sh: VACUUM or CHECKPOINT failed on PG_URL: this run starts unsettled" >&2 ;;
	mariadb) [ "$OWN_MY" = 0 ] || "$ROOT/scripts/mariadb-server.sh" client "$WORK/my" -e "SET GLOBAL innodb_max_purge_lag_wait=0" ;;
	esac
}
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
LOG=$WORK/runs.jsonl
: >"$LOG"
T0=$(date +%s)
# the interpreter's own start, with djc_make imported (paid once per worker)
start_ms=$(python3 - "$PY" <<'PYX'
import subprocess, sys, time
t = []
for _ in range(7):
    a = time.perf_counter()
    subprocess.run([sys.argv[1], "-c", "import djc_make"], check=True)
    t.append((time.perf_counter() - a) * 1000)
print("%.0f" % sorted(t)[3])
PYX
)
for be in postgresql mariadb; do
	U=$PG_URL; [ $be = mariadb ] && U=$MY_URL
	"$NOOP" setup "$U" "$SCHEMA" "$N" >/dev/null
	for b in ${PYSERVE_BATCHES:-1 50}; do
		for r in $(seq 1 "$R"); do
			for k in ${PYSERVE_KINDS:-c python python-lib c-fetch python-fetch python-lib-fetch}; do
				"$NOOP" reset "$U" "$SCHEMA" >/dev/null
				settle $be
				"$NOOP" refresh "$U" "$SCHEMA" >/dev/null
				case $k in
				c | c-fetch) out=$(DJC_JOBS_RESERVE_BATCH=$b "$RUN" run "$U" "$SCHEMA" reserve "$P" $k) ;;
				python) out=$(DJC_JOBS_RESERVE_BATCH=$b "$RUN" run "$U" "$SCHEMA" reserve "$P" serve "$PY" bench/prog/noop_make.py) ;;
				python-fetch) out=$(DJC_JOBS_RESERVE_BATCH=$b "$RUN" run "$U" "$SCHEMA" reserve "$P" serve "$PY" bench/prog/fetch_make.py) ;;
				python-lib) out=$(DJC_JOBS_RESERVE_BATCH=$b DJC_LIBRARY="$ROOT/$BUILD/libdjc.so.0" "$PY" bench/prog/lib_make.py "$U" "$SCHEMA" "$P") ;;
				python-lib-fetch) out=$(DJC_JOBS_RESERVE_BATCH=$b DJC_LIBRARY="$ROOT/$BUILD/libdjc.so.0" "$PY" bench/prog/lib_make.py "$U" "$SCHEMA" "$P" fetch) ;;
				*) echo "py-serve.sh: unknown kind $k (c, python, python-lib, c-fetch, python-fetch, python-lib-fetch)" >&2; exit 2 ;;
				esac
				printf '{"backend":"%s","batch":%d,"round":%d,"kind":"%s","r":%s}\n' "$be" "$b" "$r" "$k" "$out" >>"$LOG"
				echo "py-serve.sh: $be batch $b round $r $k: $out" >&2
			done
		done
	done
done
python3 - "$LOG" "$(($(date +%s) - T0))" "$N" "$P" "$start_ms" "$PY" <<'PYX'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
secs, n, p, start_ms, py = sys.argv[2:7]
ok = all(r["r"]["errors"] == 0 and r["r"]["lost"] == 0 and r["r"]["keys"] == int(n) for r in rows)
print("### Python serve makes vs C makes: no-op, and reading the key's Src row (bench/py-serve.sh, issue 40)\n")
print("One run, %s s: %s keys per run, %s processes, C and Python runs alternating, each round; keys/s, median of the"
      " rounds (rounds in brackets). Every run made all %s keys with no error and no lost job: %s. Python: %s; its start"
      " with djc_make imported: %s ms (paid once per worker process, inside each Python run). Before each run: PostgreSQL"
      " VACUUM (ANALYZE) and CHECKPOINT, MariaDB's purge waited for (its own server only).\n"
      % (secs, n, p, n, "yes" if ok else "NO", py, start_ms, ))
print("| backend | jobs.reserve_batch | make | C make | Python serve make | / C | Python in-process (djc_lib) | / C | target (0.8x) |")
print("|---|---:|---|---:|---:|---:|---:|---:|---|")
f = lambda xs: " ".join("{:,.0f}".format(x) for x in xs)
for be in ("postgresql", "mariadb"):
    for b in sorted({r["batch"] for r in rows}):
        for what, ck, pk, lk in (("no-op", "c", "python", "python-lib"),
                                 ("reads its Src row", "c-fetch", "python-fetch", "python-lib-fetch")):
            got = {k: [r["r"]["keys_per_s"] for r in rows if r["backend"] == be and r["batch"] == b and r["kind"] == k]
                   for k in (ck, pk, lk)}
            if not got[ck]:
                continue
            c = statistics.median(got[ck])
            cells, met = [], []
            for k in (pk, lk):
                if not got[k]:
                    cells += ["-", "-"]
                    continue
                y = statistics.median(got[k])
                cells += ["%s (%s)" % ("{:,.0f}".format(y), f(got[k])), "%.2fx" % (y / c)]
                if ck == "c":
                    met.append("%s %s" % ("serve" if k == pk else "in-process", "met" if y / c >= 0.8 else "NOT met"))
            print("| %s | %d | %s | %s (%s) | %s | %s | %s | %s | %s |" % (be, b, what, "{:,.0f}".format(c), f(got[ck]),
                  cells[0], cells[1], cells[2], cells[3], ", ".join(met) or "-"))
print()
PYX
