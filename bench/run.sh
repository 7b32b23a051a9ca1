#!/usr/bin/env bash
# bench/run.sh - `make bench`: djc's job throughput, reservation cost,
# refresh, memory and round trips on SQLite, PostgreSQL and MariaDB, and the
# same burn-down with graphile-worker and pg-boss on the same PostgreSQL
# server. Starts (and stops) its own throwaway servers, prints one table and
# writes it to bench/results.md. See bench/README.md.
#
# Environment: BUILD (build dir, default build), BENCH_OUT (results file,
# default bench/results.md), BENCH_QUICK=1 (small sizes, for a smoke run),
# BENCH_BIG (default 1000000: the large queue of sections 3 and 4).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build}
NOOP=$ROOT/$BUILD/bench/noop
DJC=$ROOT/$BUILD/djc
OUT=${BENCH_OUT:-bench/results.md}
QUICK=${BENCH_QUICK:-0}
BIG=${BENCH_BIG:-1000000}
N_C=4000          # keys per C-make throughput run
N_PROG=1000       # keys per make-program run
N_PEER=4000       # graphile-worker jobs per run
N_BOSS=2000       # pg-boss (batch) jobs per run
M_RES=250         # reserve+complete calls timed per queue depth (x3)
PROCS="1 2 4 8"
if [ "$QUICK" = 1 ]; then N_C=400; N_PROG=100; N_PEER=400; N_BOSS=200; M_RES=50; BIG=${BENCH_BIG:-20000}; PROCS="1 4"; fi

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

# ------------------------------------------------------------ setup
cc -O2 -o "$WORK/noop_make" bench/prog/noop_make.c
cc -O2 -o "$WORK/pq_connect" bench/prog/pq_connect.c -ldl
say "bench: starting PostgreSQL and MariaDB in $WORK"
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

PEERS=1
if [ ! -d bench/peers/node_modules/graphile-worker ] || [ ! -d bench/peers/node_modules/pg-boss ]; then
	say "bench: installing graphile-worker and pg-boss into bench/peers (npm)"
	mkdir -p bench/peers
	[ -f bench/peers/package.json ] || echo '{ "name": "djc-bench-peers", "private": true, "version": "0.0.0" }' >bench/peers/package.json
	(cd bench/peers && npm install --no-audit --no-fund --loglevel=error pg-boss@10.4.2 graphile-worker@0.17.3 pg@8 >&2) ||
		{ say "bench: npm install failed; skipping the peers"; PEERS=0; }
fi

url_of() { case $1 in sqlite) echo "$SQ" ;; postgresql) echo "$PG" ;; mariadb) echo "$MY" ;; esac; }
rec() { printf '%s\n' "$1" >>"$LOG"; }   # one JSON line per measurement

# ------------------------------------------------ 1. throughput
say "bench: 1. no-op throughput (djc)"
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

# ------------------------------------------------ 2. peers on PostgreSQL
if [ "$PEERS" = 1 ]; then
	say "bench: 2. graphile-worker and pg-boss on the same PostgreSQL"
	for p in $PROCS; do
		r=$(node bench/peers.mjs graphile "$PG" "$N_PEER" "$p" basic) && rec "{\"s\":\"peer\",\"r\":$r}"
		r=$(node bench/peers.mjs graphile "$PG" "$N_PEER" "$p" batch) && rec "{\"s\":\"peer\",\"r\":$r}"
		# pg-boss polls: one fetch per pollingInterval (0.5 s minimum) per worker
		r=$(node bench/peers.mjs pgboss "$PG" $((10 * p)) "$p" basic) && rec "{\"s\":\"peer\",\"r\":$r}"
		r=$(node bench/peers.mjs pgboss "$PG" "$N_BOSS" "$p" batch) && rec "{\"s\":\"peer\",\"r\":$r}"
	done
	say "bench:    peers done ($(($(date +%s) - T_START)) s)"
fi

# ------------------------------------------------ 5. round trips per job
say "bench: 5. statements per job (server counters) and worker RSS"
stmts_pg() { pgq "SELECT coalesce(sum(calls),0) FROM pg_stat_statements"; }
stat_my() { myq "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions','Com_stmt_execute','Com_commit','Com_begin')" | awk '{printf "%s=%s ", $1, $2}'; }
for batch in 1 50; do
	for p in 1 4; do
		"$NOOP" reset "$PG" tp >/dev/null; "$NOOP" refresh "$PG" tp >/dev/null
		a=$(stmts_pg)
		DJC_JOBS_RESERVE_BATCH=$batch "$NOOP" run "$PG" tp reserve "$p" c >/dev/null
		b=$(stmts_pg)
		rec "{\"s\":\"rt\",\"backend\":\"postgresql\",\"batch\":$batch,\"procs\":$p,\"keys\":$N_C,\"stmts\":$((b - a - 1))}"   # -1: the counter query itself
		"$NOOP" reset "$MY" tp >/dev/null; "$NOOP" refresh "$MY" tp >/dev/null
		a=$(stat_my)
		DJC_JOBS_RESERVE_BATCH=$batch "$NOOP" run "$MY" tp reserve "$p" c >/dev/null
		b=$(stat_my)
		rec "{\"s\":\"rt\",\"backend\":\"mariadb\",\"batch\":$batch,\"procs\":$p,\"keys\":$N_C,\"before\":\"$a\",\"after\":\"$b\"}"
	done
done
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

# ------------------------------------------------ 3+4. queue depth and refresh
say "bench: 3/4. reservation cost at 1k vs $BIG pending; refresh of 100k and $BIG keys"
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

# ------------------------------------------------ serve protocol (issue 16)
# bench/serve.sh on the same PostgreSQL; its own section of the report
say "bench: make programs, serve vs per key (bench/serve.sh)"
PG_URL=$PG BUILD=$BUILD bench/serve.sh >"$WORK/serve.md" || say "bench: bench/serve.sh failed"

# ------------------------------------------------ report
say "bench: writing $OUT"
MACHINE="nproc $(nproc), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, $(uname -sr)"
VERSIONS="djc $(sed -n 's/#define DJC_VERSION "\(.*\)"/\1/p' include/djc.h) ($(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- src include 2>/dev/null || echo '+changes')), SQLite $(pgq 'SELECT 1' >/dev/null; sqlite3 --version 2>/dev/null | cut -d' ' -f1 || echo '?'), PostgreSQL $(pgq 'SHOW server_version'), MariaDB $(myq 'SELECT VERSION()'), Node $(node --version)"
if [ "$PEERS" = 1 ]; then
	VERSIONS="$VERSIONS, graphile-worker $(node -p "require('./bench/peers/node_modules/graphile-worker/package.json').version"), pg-boss $(node -p "require('./bench/peers/node_modules/pg-boss/package.json').version")"
fi
cp "$LOG" "${BENCH_JSONL:-/dev/null}" 2>/dev/null || true
node bench/report.mjs "$LOG" "$MACHINE" "$VERSIONS" "$(($(date +%s) - T_START))" >"$WORK/results.md"
cat "$WORK/serve.md" >>"$WORK/results.md"
cp "$WORK/results.md" "$OUT"
cat "$OUT"
