#!/usr/bin/env bash
# check-datajoint-queries.sh - `make check-datajoint-queries` (not part of
# `make check`: it needs DataJoint): the real DataJoint and djc run the same
# queries on one database and must give the same rows (issue 39). Per
# backend, on a throwaway server:
#   1. DataJoint declares and fills tests/datajoint/queries.py's pipeline
#      (Subject in a second schema; Session, Trial, Excluded; 400 sessions,
#      ~8,000 trials, deterministic);
#   2. `djc adopt` both schemas into a companion;
#   3. queries.py compare: each of its queries (joins, restrictions by JSON,
#      condition text and expressions, anti-joins, proj, aggr, U, union,
#      top, order/limit/offset, fetch1) as DataJoint's Python expression and
#      as `djc fetch EXPR`; the rows must be the same, in the same order
#      (normalisations of representation only, listed in queries.py). A
#      query DataJoint itself cannot run on a backend (listed, with why) must
#      still be answered by djc.
# DJC_DATAJOINT_BACKENDS (default "mysql postgresql"); DataJoint as in
# scripts/datajoint-python.sh. Exit 0 when every query agreed on every backend.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DJC=${DJC:-$ROOT/build/djc}
BACKENDS=${DJC_DATAJOINT_BACKENDS:-mysql postgresql}
. "$ROOT/scripts/datajoint-python.sh"
djpy_find || { echo "check-datajoint-queries: $DJPY_WHY" >&2; exit 2; }
Q="$DJPY $ROOT/tests/datajoint/queries.py"

. "$ROOT/scripts/throwaway-servers.sh"
tw_init checkdjq

FAIL=0
for be in $BACKENDS; do
	url=$(tw_start "$be") || { echo "check-datajoint-queries: $be: no server" >&2; exit 1; }
	echo "[$be]"
	$Q declare "$url" djq 400 20 2>&1 | grep -v -i warn || { echo "  FAIL DataJoint's declare" >&2; FAIL=1; continue; }
	"$DJC" --db "$url" --schema djq_djc adopt djq_lab djq_q > "$WORK/adopt.out" 2>&1 ||
		{ echo "  FAIL djc adopt" >&2; cat "$WORK/adopt.out" >&2; FAIL=1; continue; }
	$Q compare "$url" djq "$DJC" djq_djc || FAIL=1
done
[ "$FAIL" = 0 ] && echo "check-datajoint-queries: DataJoint and djc agree on every query on: $BACKENDS"
[ "$FAIL" = 0 ]
