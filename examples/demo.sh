#!/bin/sh
# demo.sh - `make demo`: the demo pipeline on a fresh SQLite file.
set -e
cd "$(dirname "$0")/.."
DB=${DJC_DEMO_DB:-build/demo.db}
rm -f "$DB" "$DB-wal" "$DB-shm"
export DJC_DATABASE_URL="sqlite:$DB"
# the Python make (examples/bursts.py) imports djc_make: djc puts python/
# (beside its build/) on its make programs' PYTHONPATH
djc=build/djc
echo "== declare the pipeline (examples/demo.djc)"
$djc declare examples/demo.djc
echo "== insert 3 subjects and 40 sessions"
printf '{"subject":"m1"}\n{"subject":"m2"}\n{"subject":"r1","species":"rat"}\n' | $djc insert Subject
i=0
for s in m1 m2 r1; do
	for k in $(seq 1 14); do
		i=$((i + 1)); [ $i -gt 40 ] && break
		printf '{"subject":"%s","session_id":%d,"duration_s":%d.5,"true_rate":%d.25,"recorded":"2026-11-%02d 09:30:00"}\n' \
			"$s" "$k" $((20 + k * 3)) $((4 + k)) "$k"
	done
done | $djc insert Session
echo "== populate SpikeTrain and SessionStats with C makes, 4 processes"
build/examples/spikes --processes 4
echo "== populate Bursts with a Python make (a serve program: one Python process per worker), 4 processes, job reservation"
$djc populate Bursts --reserve-jobs --processes 4 --display-progress
$djc progress SessionStats
echo "== results"
$djc fetch SessionStats --where '{"subject": "m1"}'
$djc fetch Bursts --where '{"session_id": {"<=": 5}}'
$djc jobs Bursts
