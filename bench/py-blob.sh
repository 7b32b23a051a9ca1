#!/usr/bin/env bash
# bench/py-blob.sh - issue 40: a make that reads a 10 MiB upstream <blob>
# (a DataJoint float64 vector) and writes a 1 MiB one (its first 131,072
# elements), made by a C make through the C API (bench/blob_run.c) and by
# the Python serve make bench/prog/blob_make.py (python/djc_make.py), on
# PostgreSQL and MariaDB, in one run: one worker process, reserved jobs,
# the kinds of a round alternating, rounds repeated. Python kinds:
#   py-raw     binary values (raw bytes on the pipe), DJC_BLOBS=raw: the
#              blob's bytes as a memoryview, the result's header written
#              by the make (the C make's work, in Python)
#   py-base64  the same with djc_make.run(make, binary=False): base64 in JSON
#   py-dj      binary values and DataJoint's format (numpy array in, array
#              out, decoded and packed by djc_blob.py as datajoint.blob
#              does, the result compressed at zlib level 1 as DataJoint
#              does: more work than the C make's): needs DataJoint
#   py-lib, py-lib-dj   py-raw's and py-dj's makes called in the worker's
#              own process by libdjc (python/djc_lib.py): no program, no
#              pipe; the worker is the Python process (its RSS and CPU are
#              the worker's, no program's)
#   c-glibc, py-raw-glibc   c and py-raw with the worker on glibc's malloc
#              defaults (BLOB_MALLOC=glibc): what keeping freed heap for
#              the next key gains (docs/workers.md, "Large values")
# Memory: the worker's max RSS (this process is the worker: getrusage)
# above its RSS before populate, and the program's own max RSS (it writes
# it at its end), against 2x the largest value (20 MiB). CPU: the worker's
# during populate (getrusage) and the program's over its life (it writes
# it at its end), ms a key; the worker's minor page faults a key.
# Prints a Markdown section on stdout.
#
# Environment: BUILD (default build), PG_URL / MY_URL (servers to use;
# default: throwaway ones), PYBLOB_KEYS (default 72: a worker's one-time
# costs are paid once per populate, a Python program's ~0.13 s more than
# the C make's (its start, its first value's buffers, its exit), and 24
# keys of ~22 ms measured them as a quarter of the run: see
# bench/results-2026-12-06.md, fifth section), PYBLOB_ROUNDS (default
# 2), PYBLOB_MB (default 10), DJPYTHON (an interpreter with datajoint and
# numpy; default: scripts/datajoint-python.sh's, else python3 and no py-dj),
# PYBLOB_DATA (noise, the default: uniform doubles, which a server's
# compression leaves as they are, as it does measured data's noisy digits
# or a blob DataJoint compressed; ramp: 0, 0.5, 1, ..., which
# PostgreSQL's lz4 halves: the data of the runs before 2026-12-06's
# seventh section), PYBLOB_KINDS (the kinds to run, of those above; c
# always runs, first: the ratios are against it), PYBLOB_BACKENDS
# (default "postgresql mariadb"), BENCH_QUICK=1 (2 keys, 1 round).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
RUN=$ROOT/$BUILD/bench/blob_run
N=${PYBLOB_KEYS:-72}
R=${PYBLOB_ROUNDS:-2}
MB=${PYBLOB_MB:-10}
export BLOB_DATA=${PYBLOB_DATA:-noise}
if [ "${BENCH_QUICK:-0}" = 1 ]; then N=2; R=1; fi
[ -x "$RUN" ] || { echo "py-blob.sh: build first (make BUILD=$BUILD all)" >&2; exit 2; }
. "$ROOT/scripts/datajoint-python.sh"
KINDS="c py-raw py-lib py-base64 py-dj py-lib-dj c-glibc py-raw-glibc"
if [ -n "${DJPYTHON:-}" ]; then PY=$DJPYTHON
elif djpy_find; then PY=$DJPY
else PY=$(command -v python3); KINDS="c py-raw py-lib py-base64 c-glibc py-raw-glibc"; echo "py-blob.sh: no py-dj ($DJPY_WHY)" >&2
fi
if [ -n "${PYBLOB_KINDS:-}" ]; then
	want=c
	for k in $PYBLOB_KINDS; do
		case " $KINDS " in *" $k "*) [ "$k" = c ] || want="$want $k" ;; *) echo "py-blob.sh: no kind $k here (kinds: $KINDS)" >&2; exit 2 ;; esac
	done
	KINDS=$want
fi
BACKENDS=${PYBLOB_BACKENDS:-postgresql mariadb}
. "$ROOT/scripts/throwaway-servers.sh"
tw_init pyblob
case " $BACKENDS " in *" postgresql "*) [ -n "${PG_URL:-}" ] || PG_URL=$(tw_start postgresql) ;; esac
# a MariaDB of our own holds the bench's arrays in its buffer pool (the
# default 128 MiB held 12 of them: the C make then read from disk and
# slowed by a third, which flattered the Python ratio)
case " $BACKENDS " in *" mariadb "*) [ -n "${MY_URL:-}" ] || MY_URL=$(MARIADB_OPTS="${MARIADB_OPTS:-} --innodb-buffer-pool-size=$((N * MB * 2 + 128))M" tw_start mysql) ;; esac
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
LOG=$WORK/runs.jsonl
: >"$LOG"
T0=$(date +%s)
# the interpreter's own max RSS with what each kind imports
base_raw=$("$PY" -c 'import djc_make, resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)')
# (py-dj's program imports djc_blob and numpy, which decode and pack its
# numeric arrays; datajoint itself only for other values)
base_dj=$("$PY" -c 'import djc_make, resource
try:
    import djc_blob, numpy
except Exception:
    pass
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)' 2>/dev/null)
for be in $BACKENDS; do
	U=${PG_URL:-}; [ $be = mariadb ] && U=$MY_URL
	S=pyblob_$$
	"$RUN" setup "$U" "$S" "$N" "$MB" >/dev/null
	# one run of the C make, not counted: the first run after the setup
	# was a third slower on MariaDB (the server still writing the new
	# arrays out), and it was always round 1's C make, which flattered
	# every Python kind's ratio (bench/results-2026-12-06.md, fifth section)
	"$RUN" reset "$U" "$S" >/dev/null
	"$RUN" run "$U" "$S" c >/dev/null
	for r in $(seq 1 "$R"); do
		for k in $KINDS; do
			"$RUN" reset "$U" "$S" >/dev/null
			rm -f "$WORK/rss" "$WORK/rss.cpu"
			case $k in
			c) out=$("$RUN" run "$U" "$S" c) ;;
			py-raw) out=$(BLOB_RSS=$WORK/rss DJC_BLOBS=raw BLOB_MODE=raw "$RUN" run "$U" "$S" serve "$PY" bench/prog/blob_make.py 2>/dev/null) ;;
			py-base64) out=$(BLOB_RSS=$WORK/rss DJC_BLOBS=raw BLOB_MODE=raw BLOB_BINARY=0 "$RUN" run "$U" "$S" serve "$PY" bench/prog/blob_make.py 2>/dev/null) ;;
			py-dj) out=$(BLOB_RSS=$WORK/rss BLOB_MODE=dj "$RUN" run "$U" "$S" serve "$PY" bench/prog/blob_make.py 2>/dev/null) ;;
			py-lib) out=$(DJC_LIBRARY="$ROOT/$BUILD/libdjc.so.0" DJC_BLOBS=raw BLOB_MODE=raw "$PY" bench/prog/blob_make.py lib "$U" "$S") ;;
			py-lib-dj) out=$(DJC_LIBRARY="$ROOT/$BUILD/libdjc.so.0" BLOB_MODE=dj "$PY" bench/prog/blob_make.py lib "$U" "$S") ;;
			c-glibc) out=$(BLOB_MALLOC=glibc "$RUN" run "$U" "$S" c) ;;
			py-raw-glibc) out=$(BLOB_MALLOC=glibc BLOB_RSS=$WORK/rss DJC_BLOBS=raw BLOB_MODE=raw "$RUN" run "$U" "$S" serve "$PY" bench/prog/blob_make.py 2>/dev/null) ;;
			esac
			prss=$(cat "$WORK/rss" 2>/dev/null || echo 0)
			pcpu=$(cat "$WORK/rss.cpu" 2>/dev/null || echo 0)
			printf '{"backend":"%s","round":%d,"kind":"%s","program_kb":%s,"program_cpu_s":%s,"r":%s}\n' "$be" "$r" "$k" "${prss:-0}" "${pcpu:-0}" "$out" >>"$LOG"
			echo "py-blob.sh: $be round $r $k: $out program ${prss:-0} KiB" >&2
		done
	done
done
python3 - "$LOG" "$(($(date +%s) - T0))" "$N" "$MB" "$PY" "$base_raw" "$base_dj" "$BLOB_DATA" <<'PYX'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
secs, n, mb, py, base_raw, base_dj, data = sys.argv[2:9]
n, mb = int(n), int(mb)
ok = all(r["r"]["errors"] == 0 and r["r"]["keys"] == n for r in rows)
print("### A 10 MiB <blob> in, a 1 MiB <blob> out: Python serve make vs the C make (bench/py-blob.sh, issue 40)\n")
print("One run, %s s: %d keys of %d MiB (%s data) per run, one worker process, reserved jobs, the kinds alternating in each"
      " round; keys/s, median of the rounds (rounds in brackets). Every run made all its keys with no error: %s."
      " Python: %s (max RSS with djc_make imported: %s KiB; with djc_blob and numpy too: %s KiB)."
      " Memory: the worker's max RSS above its RSS before populate, the program's own max RSS, both in MiB,"
      " largest of the rounds; the target is 2x the largest value, %d MiB. The worker keeps freed heap for the"
      " next key (docs/workers.md, \"Large values\"); the -glibc kinds run it with glibc's defaults, / C still"
      " against the C make with the worker's setting.\n"
      % (secs, n, mb, data, "yes" if ok else "NO", py, base_raw, base_dj, 2 * mb))
print("CPU: the worker's CPU (user + system) during populate and the program's over its life, ms a key, and the"
      " worker's minor page faults a key, median of the rounds (the server's CPU is in neither).\n")
print("| backend | make | keys/s | / C | worker RSS above start | program RSS | program RSS above its interpreter | worker CPU ms/key | program CPU ms/key | worker faults/key |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for be in ("postgresql", "mariadb"):
    c = None
    for k in ("c", "py-raw", "py-lib", "py-base64", "py-dj", "py-lib-dj", "c-glibc", "py-raw-glibc"):
        got = [r for r in rows if r["backend"] == be and r["kind"] == k]
        if not got:
            continue
        ks = [r["r"]["keys_per_s"] for r in got]
        med = statistics.median(ks)
        isc = k in ("c", "c-glibc", "py-lib", "py-lib-dj")   # no program
        if k == "c":
            c = med
        w = max(r["r"]["worker_rss_kb"] - r["r"]["worker_rss0_kb"] for r in got) / 1024
        p = max(r["program_kb"] for r in got) / 1024
        base = int(base_dj if k == "py-dj" else base_raw) / 1024
        wc = statistics.median(r["r"].get("worker_cpu_s", float("nan")) * 1000 / max(r["r"]["keys"], 1) for r in got)
        pc = statistics.median(r.get("program_cpu_s", 0) * 1000 / max(r["r"]["keys"], 1) for r in got)
        wf = statistics.median(r["r"].get("worker_faults", float("nan")) / max(r["r"]["keys"], 1) for r in got)
        print("| %s | %s | %.2f (%s) | %s | %.1f | %s | %s | %.1f | %s | %.0f |" % (
            be, k, med, " ".join("%.2f" % x for x in ks), "%.2fx" % (med / c) if c and k != "c" else "-", w,
            "%.1f" % p if not isc else "-", "%.1f" % (p - base) if not isc else "-", wc, "%.1f" % pc if not isc else "-", wf))
print()
PYX
