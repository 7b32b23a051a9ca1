#!/usr/bin/env bash
# bench/serve.sh - issue 16's measurements: make programs under the serve
# protocol against the per-key protocol and the C callback, and djc's own
# cost around a per-key program. Every figure of one report comes from one
# run, side by side (the machine is shared and noisy: compare ratios, not
# absolute rates). Prints a Markdown section on stdout (bench/run.sh
# appends it to its report); the raw measurements are JSON lines in
# $SERVE_JSONL when set.
#
#   A. a no-op Python make (bench/prog/noop_make.py, python/djc_make.py):
#      per key vs serve, 1 and 4 processes, reserved, SQLite and PostgreSQL.
#      Target: serve >= 20x the per-key keys/s.
#   B. a no-op compiled make as a serve program (bench/prog/noop_serve.c) vs
#      the C callback, reserved, 1 and 4 processes, SQLite and PostgreSQL.
#      Target: >= 0.7x the C callback with 4 processes on PostgreSQL.
#   C. djc's own cost per key around a per-key program: a no-op compiled
#      make (bench/prog/noop_make.c), 1 process, SQLite, reserved and
#      direct, minus posix_spawn + wait of /bin/true from a process that
#      opened the same database (bench/serve_run.c spawn); the best of
#      ROUNDS interleaved rounds of each. Target: under 1 ms.
#
# Environment: BUILD (default build), PG_URL (a PostgreSQL to use; default:
# start a throwaway one with scripts/pg-server.sh), BENCH_QUICK=1 (small
# sizes), SERVE_ROUNDS (default 3), SERVE_JSONL (keep the raw lines).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
NOOP=$ROOT/$BUILD/bench/noop
RUN=$ROOT/$BUILD/bench/serve_run
QUICK=${BENCH_QUICK:-0}
ROUNDS=${SERVE_ROUNDS:-3}
N_FAST=4000    # keys per serve / C-callback run
N_PYK=200      # keys per per-key Python run (an interpreter per key)
N_PK=1000      # keys per per-key compiled run (section C)
N_SPAWN=1000   # posix_spawn runs per round (section C)
if [ "$QUICK" = 1 ]; then N_FAST=300; N_PYK=20; N_PK=100; N_SPAWN=100; ROUNDS=1; fi

[ -x "$NOOP" ] && [ -x "$RUN" ] || { echo "serve.sh: build first (make BUILD=$BUILD all)" >&2; exit 2; }
. "$ROOT/scripts/throwaway-servers.sh"
tw_init serve-bench
say() { printf 'serve.sh: %s\n' "$*" >&2; }
LOG=$WORK/serve.jsonl
: >"$LOG"
rec() { printf '%s\n' "$1" >>"$LOG"; }
T0=$(date +%s)

cc -O2 -o "$WORK/noop_serve" bench/prog/noop_serve.c
cc -O2 -o "$WORK/noop_make" bench/prog/noop_make.c
PYMAKE=$ROOT/bench/prog/noop_make.py
# the interpreter itself, not a wrapper that finds it (pyenv's shims are
# shell scripts): both protocols start the same program
PY=$(python3 -c 'import sys; print(sys.executable)')
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
if [ -z "${PG_URL:-}" ]; then
	say "starting PostgreSQL in $WORK/pg"
	PG_URL=$(tw_start postgresql)
fi
SQ=sqlite:$WORK/serve.db
url_of() { case $1 in sqlite) echo "$SQ" ;; postgresql) echo "$PG_URL" ;; esac; }
# the upstream keys of each size, in their own schema (SQLite: one file)
for be in sqlite postgresql; do
	for n in $N_FAST $N_PYK $N_PK; do
		"$NOOP" setup "$(url_of $be)" "sv$n" "$n" >/dev/null
	done
done

# one timed populate: BACKEND SCHEMA MODE PROCS KIND [PROGRAM...] -> a JSON line
# (with "once": every key made once, per the make's own log, for programs
# that keep one)
bench_run() {
	local be=$1 sch=$2 mode=$3 procs=$4 kind=$5 u r once=""
	shift 5
	u=$(url_of "$be")
	"$NOOP" reset "$u" "$sch" >/dev/null
	[ "$mode" = reserve ] && "$NOOP" refresh "$u" "$sch" >/dev/null
	rm -f "$WORK/made.log"
	r=$(NOOP_LOG=${NOOP_LOG-$WORK/made.log} "$RUN" run "$u" "$sch" "$mode" "$procs" "$kind" "$@")
	if [ -f "$WORK/made.log" ]; then
		once=",\"made_log\":$(wc -l <"$WORK/made.log"),\"made_distinct\":$(sort -u "$WORK/made.log" | wc -l)"
	fi
	printf '{"backend":"%s","r":%s%s}' "$be" "$r" "$once"
}

# ------------------------------------------------ A. Python: per key vs serve
say "A. no-op Python make, per key ($N_PYK keys) vs serve ($N_FAST keys)"
for be in sqlite postgresql; do
	for p in 1 4; do
		rec "{\"s\":\"A\",\"proto\":\"perkey\",$(bench_run $be sv$N_PYK reserve $p perkey "$PY" "$PYMAKE" | cut -c2-)"
		rec "{\"s\":\"A\",\"proto\":\"serve\",$(bench_run $be sv$N_FAST reserve $p serve "$PY" "$PYMAKE" | cut -c2-)"
	done
	say "   $be done ($(($(date +%s) - T0)) s)"
done

# ------------------------------------------------ B. compiled: serve vs C callback
say "B. no-op compiled serve program vs C callback ($N_FAST keys)"
for be in sqlite postgresql; do
	for p in 1 4; do
		for rep in $(seq 1 "$ROUNDS"); do
			rec "{\"s\":\"B\",\"proto\":\"c\",\"rep\":$rep,$(bench_run $be sv$N_FAST reserve $p c | cut -c2-)"
			rec "{\"s\":\"B\",\"proto\":\"serve\",\"rep\":$rep,$(bench_run $be sv$N_FAST reserve $p serve "$WORK/noop_serve" | cut -c2-)"
		done
	done
	say "   $be done ($(($(date +%s) - T0)) s)"
done

# ------------------------------------------------ C. djc's own cost per key
say "C. per-key compiled make ($N_PK keys) vs posix_spawn of /bin/true ($N_SPAWN), $ROUNDS rounds"
for rep in $(seq 1 "$ROUNDS"); do
	rec "{\"s\":\"C\",\"what\":\"spawn\",\"rep\":$rep,\"r\":$("$RUN" spawn "$SQ" "sv$N_PK" "$N_SPAWN" /bin/true)}"
	for mode in reserve direct; do
		rec "{\"s\":\"C\",\"what\":\"perkey\",\"rep\":$rep,$(NOOP_LOG= bench_run sqlite sv$N_PK $mode 1 perkey "$WORK/noop_make" | cut -c2-)"
	done
done
say "   done ($(($(date +%s) - T0)) s)"

[ -n "${SERVE_JSONL:-}" ] && cp "$LOG" "$SERVE_JSONL"
python3 - "$LOG" "$(($(date +%s) - T0))" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
secs = sys.argv[2]

def fmt(x):
    return "{:,.1f}".format(x) if abs(x) < 10 else "{:,.0f}".format(x)

def once(r):
    res = r["r"]
    ok = res["errors"] == 0 and res["lost"] == 0
    if "made_log" in r:
        ok = ok and r["made_log"] == res["keys"] == r["made_distinct"]
    return ok

bad = [r for r in rows if "r" in r and "keys" in r["r"] and not once(r)]
print("## Make programs: the serve protocol (issue 16, bench/serve.sh)\n")
print("One run of bench/serve.sh, %s s; every figure below comes from it. keys/s (and wall time per key) of a whole" % secs)
print("burn-down with job reservation (jobs added beforehand, batch 1). Every run checked: no error, no lost job,")
print("each key made once (per the make's own log where it keeps one: %s).\n" % ("all runs passed" if not bad else "FAILED in %d runs" % len(bad)))

print("### A. No-op Python make (bench/prog/noop_make.py): per key vs serve\n")
print("| backend | processes | per key | serve | serve / per key | target >= 20x |")
print("|---|---:|---:|---:|---:|---|")
for be in ("sqlite", "postgresql"):
    for p in (1, 4):
        got = {}
        for r in rows:
            if r.get("s") == "A" and r["backend"] == be and r["r"]["procs"] == p:
                got[r["proto"]] = r["r"]
        if len(got) < 2:
            continue
        k, s = got["perkey"], got["serve"]
        ratio = s["keys_per_s"] / k["keys_per_s"]
        print("| %s | %d | %s (%s µs) | %s (%s µs) | %.1fx | %s |" % (be, p, fmt(k["keys_per_s"]), fmt(k["us_per_key"]),
              fmt(s["keys_per_s"]), fmt(s["us_per_key"]), ratio, "met" if ratio >= 20 else "NOT met"))

print("\n### B. No-op compiled make as a serve program (bench/prog/noop_serve.c) vs the C callback\n")
print("Best of the rounds of each (C and serve runs alternate).\n")
print("| backend | processes | C callback | serve program | serve / C | target |")
print("|---|---:|---:|---:|---:|---|")
for be in ("sqlite", "postgresql"):
    for p in (1, 4):
        best = {}
        for r in rows:
            if r.get("s") == "B" and r["backend"] == be and r["r"]["procs"] == p:
                if r["proto"] not in best or r["r"]["keys_per_s"] > best[r["proto"]]["keys_per_s"]:
                    best[r["proto"]] = r["r"]
        if len(best) < 2:
            continue
        c, s = best["c"], best["serve"]
        ratio = s["keys_per_s"] / c["keys_per_s"]
        target = ">= 0.7x: %s" % ("met" if ratio >= 0.7 else "NOT met") if (be, p) == ("postgresql", 4) else ""
        print("| %s | %d | %s (%s µs) | %s (%s µs) | %.2fx | %s |" % (be, p, fmt(c["keys_per_s"]), fmt(c["us_per_key"]),
              fmt(s["keys_per_s"]), fmt(s["us_per_key"]), ratio, target))

print("\n### C. djc's own cost per key around a per-key make program (SQLite, 1 process)\n")
spawn = [r["r"]["mean_us"] for r in rows if r.get("s") == "C" and r["what"] == "spawn"]
print("posix_spawn + wait of /bin/true from a process with the database open: best round %s µs (rounds: %s).\n"
      % (fmt(min(spawn)), ", ".join(fmt(x) for x in spawn)))
print("| mode | per key, best round | rounds | minus /bin/true | target < 1,000 µs |")
print("|---|---:|---|---:|---|")
for mode in ("reserve", "direct"):
    us = [r["r"]["us_per_key"] for r in rows if r.get("s") == "C" and r["what"] == "perkey" and r["r"]["mode"] == mode]
    if not us:
        continue
    own = min(us) - min(spawn)
    print("| %s | %s µs | %s | %s µs | %s |" % (mode, fmt(min(us)), ", ".join(fmt(x) for x in us), fmt(own),
          "met" if own < 1000 else "NOT met"))
print()
PY
