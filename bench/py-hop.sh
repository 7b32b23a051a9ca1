#!/usr/bin/env bash
# bench/py-hop.sh - issue 40: what the pipe's hop costs a key, in CPU and
# system calls rather than keys/s (which a shared machine's load moves by
# 2x from run to run): the no-op C make and the no-op Python serve make of
# bench/py-serve.sh (7 processes, bench/serve_run), each run measured by
#   perf stat on serve_run's tree: CPU (task-clock), system calls, context
#     switches, per key; the workers are the tree less the programs
#   /usr/bin/time on each Python program: its CPU (start included) and
#     context switches, per key
#   the database server's CPU over the run (/proc: the postmaster with its
#     ended backends, mariadbd with its threads)
# One line per run. The trees given run side by side, each with its own
# build and python/ (an old and a new checkout, built), alternating.
#
# Environment: HOP_TREES (default: this tree; checkouts with BUILD built),
# HOP_RUNS (default "postgresql:1 postgresql:50 mariadb:1 mariadb:50"),
# HOP_KINDS (default "c python"; c runs in the first tree only; cserve:
# bench/prog/noop_serve.c, a minimal C serve program, in every tree, so
# the hop is measured without Python's cost), HOP_SCHEMA (default pyh),
# HOP_ROUNDS (default 2), HOP_KEYS (default 20000), BUILD (default build),
# PYTHON (default /usr/bin/python3), HOP_EVENTS (more perf events, counted
# per key: e.g. syscalls:sys_enter_writev), PG_DIR / MY_DIR (server
# directories of scripts/pg-server.sh and scripts/mariadb-server.sh to use;
# default: throwaway ones). Needs perf (tracepoints readable: root).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
N=${HOP_KEYS:-20000}
SCHEMA=${HOP_SCHEMA:-pyh}
PY=${PYTHON:-/usr/bin/python3}
TREES=${HOP_TREES:-$ROOT}
unset PYTHONDONTWRITEBYTECODE PYTHONUNBUFFERED
. "$ROOT/scripts/throwaway-servers.sh"
tw_init pyhop
if [ -z "${PG_DIR:-}" ]; then tw_start postgresql >/dev/null; PG_DIR=$WORK/pg; fi
if [ -z "${MY_DIR:-}" ]; then tw_start mysql >/dev/null; MY_DIR=$WORK/my; fi
NOOP_SERVE=$(mktemp "${TMPDIR:-/tmp}/pyhop-serve.XXXXXX")
trap 'rm -f "$NOOP_SERVE"' EXIT
cc -O2 -o "$NOOP_SERVE" bench/prog/noop_serve.c
EV=raw_syscalls:sys_enter,context-switches,task-clock${HOP_EVENTS:+,$HOP_EVENTS}
declare -A SETUP
run() {   # TREE BACKEND BATCH KIND
	local tree=$1 be=$2 b=$3 k=$4 U SP D out s0 s1
	if [ "$be" = postgresql ]; then U=$(cat "$PG_DIR/url"); SP=$(head -1 "$PG_DIR/data/postmaster.pid")
	else U=$(cat "$MY_DIR/url"); SP=$(cat "$MY_DIR/pid"); fi
	[ -n "${SETUP[$be]:-}" ] || { "$tree/$BUILD/bench/noop" setup "$U" "$SCHEMA" "$N" >/dev/null; SETUP[$be]=1; }
	"$tree/$BUILD/bench/noop" reset "$U" "$SCHEMA" >/dev/null
	# settled as bench/py-serve.sh settles each run
	if [ "$be" = postgresql ]; then psql -X -q "$U" -c "VACUUM (ANALYZE)" -c "CHECKPOINT" >/dev/null
	else "$ROOT/scripts/mariadb-server.sh" client "$MY_DIR" -e "SET GLOBAL innodb_max_purge_lag_wait=0"; fi
	"$tree/$BUILD/bench/noop" refresh "$U" "$SCHEMA" >/dev/null
	D=$(mktemp -d "${TMPDIR:-/tmp}/pyhop.XXXXXX")
	s0=$(awk '{print $14+$15+$16+$17}' "/proc/$SP/stat")
	case $k in
	c) out=$(cd "$tree" && DJC_JOBS_RESERVE_BATCH=$b perf stat -x, -e "$EV" -o "$D/tree" "$BUILD/bench/serve_run" run "$U" "$SCHEMA" reserve 7 c) ;;
	python) out=$(cd "$tree" && PYTHONPATH="$tree/python" DJC_JOBS_RESERVE_BATCH=$b perf stat -x, -e "$EV" -o "$D/tree" \
		"$BUILD/bench/serve_run" run "$U" "$SCHEMA" reserve 7 serve \
		sh -c "exec /usr/bin/time -o $D/prog.\$\$ -f '%U %S %w %c' $PY bench/prog/noop_make.py") ;;
	cserve) out=$(cd "$tree" && DJC_JOBS_RESERVE_BATCH=$b perf stat -x, -e "$EV" -o "$D/tree" \
		"$BUILD/bench/serve_run" run "$U" "$SCHEMA" reserve 7 serve \
		sh -c "exec /usr/bin/time -o $D/prog.\$\$ -f '%U %S %w %c' $NOOP_SERVE") ;;
	esac
	s1=$(awk '{print $14+$15+$16+$17}' "/proc/$SP/stat")
	python3 - "$out" "$D" "$s0" "$s1" "$be" "$b" "$k" "$tree" "$(getconf CLK_TCK)" <<'PYX'
import glob, json, sys
r = json.loads(sys.argv[1]); D = sys.argv[2]
t = {}
for l in open(D + "/tree"):
    p = l.split(",")
    if len(p) > 3 and p[0] and not l.startswith("#"):
        try: t[p[2]] = float(p[0])
        except ValueError: pass
pc = pcs = 0.0; n = 0
for f in glob.glob(D + "/prog.*"):
    u, s, w, c = map(float, open(f).read().split()[-4:])
    pc += (u + s) * 1e3; pcs += w + c; n += 1
keys = r["keys"]; srv = (int(sys.argv[4]) - int(sys.argv[3])) / float(sys.argv[9]) * 1e6 / keys
wk = (t["task-clock"] - pc) * 1e3 / keys
more = " ".join("%s %.3f" % (e.split(":")[-1].replace("sys_enter_", ""), v / keys) for e, v in t.items()
                if e not in ("raw_syscalls:sys_enter", "context-switches", "task-clock"))
print("%s %s batch %s %s: %.0f keys/s | CPU us/key: workers %.1f, programs %.1f (%d), server %.1f, all %.1f | "
      "system calls/key (workers and programs) %.2f | context switches/key: workers %.2f, programs %.2f %s" % (
      sys.argv[8], sys.argv[5], sys.argv[6], sys.argv[7], r["keys_per_s"], wk, pc / keys * 1e3 if n else 0, n, srv,
      t["task-clock"] * 1e3 / keys + srv, t["raw_syscalls:sys_enter"] / keys,
      (t["context-switches"] - pcs) / keys, pcs / keys, more))
PYX
	rm -rf "$D"
}
for r in $(seq 1 "${HOP_ROUNDS:-2}"); do
	for spec in ${HOP_RUNS:-postgresql:1 postgresql:50 mariadb:1 mariadb:50}; do
		be=${spec%%:*} b=${spec#*:}
		for k in ${HOP_KINDS:-c python}; do
			if [ "$k" = c ]; then run "${TREES%% *}" "$be" "$b" c; continue; fi
			for tree in $TREES; do run "$tree" "$be" "$b" "$k"; done
		done
	done
done
