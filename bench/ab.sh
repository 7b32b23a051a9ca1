#!/bin/bash
# ab.sh - djc's no-op bench of two builds side by side (AB_OLD, AB_NEW: their
# bench/noop), interleaved rounds, on one PostgreSQL and one MariaDB server
# (throwaway, fsync as scripts/pg-server.sh sets it). Each run: 4 processes,
# a C no-op make, batch 1 and 50; prints one line per run.
#   ab.sh N ROUNDS
set -u
N=${1:-20000}; R=${2:-3}
OLD=${AB_OLD:?AB_OLD: the noop binary of the build to compare with}
NEW=${AB_NEW:-$(cd "$(dirname "$0")/.." && pwd)/build/bench/noop}
W=$(mktemp -d /tmp/ab.XXXXXX); chmod 755 "$W"
cd "$(dirname "$0")/.."
PG=$(scripts/pg-server.sh start "$W/pg" | tail -1)
MY=$(scripts/mariadb-server.sh start "$W/my" | tail -1)
echo "pg=$PG my=$MY" >&2
for be in PG MY; do
	U=${!be}
	$OLD setup "$U" abold "$N" >/dev/null; $NEW setup "$U" abnew "$N" >/dev/null
	for batch in 1 50; do
		for r in $(seq 1 "$R"); do
			for v in old new; do
				bin=$OLD; [ $v = new ] && bin=$NEW
				$bin reset "$U" ab$v >/dev/null
				$bin refresh "$U" ab$v >/dev/null
				out=$(DJC_JOBS_RESERVE_BATCH=$batch $bin run "$U" ab$v reserve 4 c)
				echo "$be batch=$batch round=$r $v $out"
			done
		done
	done
done
scripts/pg-server.sh stop "$W/pg" >/dev/null 2>&1
scripts/mariadb-server.sh stop "$W/my" >/dev/null 2>&1
rm -rf "$W"
