#!/bin/bash
# test_mixed.sh - mixed fleets (issue 38): another writer (a DataJoint
# Python worker, a manual insert) commits a key's rows between djc's claim
# and djc's commit. djc's commit then closes the job as already made: the
# key is skipped and counted, the rows are the first writer's, nothing of
# djc's make is committed, the populate or worker exits 0. A make's own
# duplicate rows stay its error (a unique index other than the primary key:
# test_core.sh unique_indexes).
# The first writer here is the make program itself: for key 2 it inserts
# the key's rows through `djc insert --allow-direct-insert` (another
# connection, committed) before it prints its own.
. "$ROOT/tests/cli/lib.sh"

export DJC_JOBS_ALLOW_NEW_PK_FIELDS_IN_COMPUTED_TABLES=true
py() { python3 -c "$@"; }
# counts JSON S E K: populate's or worker's --json has S made, E errors, K skipped
counts() {
	py 'import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if (d["success_count"], d["error_count"], d["skipped_count"]) == tuple(map(int, sys.argv[2:5])) else 1)' "$@"
}

cat > p.djc <<'P'
Session (manual)
    session_id : int32
    ---
    v : float64

Stats (computed)
    -> Session
    ---
    m : float64
    make = ./mk.sh

Multi (computed)
    -> Session
    n : int32
    ---
    m : float64
    make = ./mk_multi.sh

Rec (computed)
    -> Session
    ---
    m : float64
    make = ./mk_rec.sh

Rec.Peak (part)
    -> Rec
    peak : int32
    ---
    value : float64
P
# key 2: someone else commits the row (m = 99) while make runs
cat > mk.sh <<'P'
#!/bin/sh
cat >/dev/null
if [ "$DJC_KEY_session_id" = 2 ]; then
	echo '{"session_id": 2, "m": 99}' | "$DJC" insert Stats --allow-direct-insert >/dev/null || exit 9
fi
echo "{\"m\": $DJC_KEY_session_id.5}"
P
# two rows per key (a DataJoint table with its own key attribute, n); key
# 2: the first writer made the row that comes second in djc's output
cat > mk_multi.sh <<'P'
#!/bin/sh
cat >/dev/null
if [ "$DJC_KEY_session_id" = 2 ]; then
	printf '{"session_id": 2, "n": 1, "m": 98}\n{"session_id": 2, "n": 2, "m": 99}\n' | "$DJC" insert Multi --allow-direct-insert >/dev/null || exit 9
fi
[ "${MK_TWICE:-}" = "$DJC_KEY_session_id" ] && echo '{"n": 7, "m": 1}'
echo "{\"n\": 7, \"m\": $DJC_KEY_session_id.5}"
echo "{\"n\": 2, \"m\": $DJC_KEY_session_id.5}"
P
# a master row and its part rows; key 2: the first writer made both
cat > mk_rec.sh <<'P'
#!/bin/sh
cat >/dev/null
if [ "$DJC_KEY_session_id" = 2 ]; then
	echo '{"session_id": 2, "m": 99}' | "$DJC" insert Rec --allow-direct-insert >/dev/null || exit 9
	echo '{"session_id": 2, "peak": 5, "value": 55}' | "$DJC" insert Rec.Peak --allow-direct-insert >/dev/null || exit 9
fi
echo "{\"m\": $DJC_KEY_session_id.5}"
echo '{"_part": "Peak", "peak": 1, "value": 1}'
echo '{"_part": "Peak", "peak": 2, "value": 2}'
P
chmod +x mk.sh mk_multi.sh mk_rec.sh
expect_rc 0 "declare" djc declare p.djc
printf '{"session_id": 1, "v": 1}\n{"session_id": 2, "v": 2}\n{"session_id": 3, "v": 3}\n' > s.jsonl
expect_rc 0 "insert sessions" djc insert Session s.jsonl

# rows RESULT: the table's rows as compact JSON lines, sorted
rows() { "$DJC" fetch "$@" --format json | sort; }

case_reserved() {
# ------------------------------------ populate --reserve-jobs, one row per key
run djc populate Stats --reserve-jobs --json
check "populate --reserve-jobs: exit 0" test "$RC" = 0
check "...2 made, 0 errors, 1 skipped (--json)" counts "$OUT" 2 0 1
expect_out "...the row of key 2 is the first writer's" '{"session_id":1,"m":1.5}
{"session_id":2,"m":99}
{"session_id":3,"m":3.5}' rows Stats
expect_out "...no job left" "Stats jobs: pending 0, reserved 0, success 0, error 0, ignore 0, total 0" djc jobs Stats
}
tcase reserved

case_keep_completed() {
# --------------------------- with jobs.keep_completed: the job closes as success
"$DJC" delete Stats --yes >/dev/null
run env DJC_JOBS_KEEP_COMPLETED=true "$DJC" populate Stats --reserve-jobs --json
check "keep_completed: exit 0, 2 made, 1 skipped" counts "$OUT" 2 0 1
expect_out "...the row of key 2 is the first writer's" '{"session_id":2,"m":99}' djc fetch Stats --where '{"session_id": 2}' --format json
expect_out "...every job closed as success" "Stats jobs: pending 0, reserved 0, success 3, error 0, ignore 0, total 3" djc jobs Stats
"$DJC" jobs clear Stats --status success >/dev/null
}
tcase keep_completed reserved

case_worker() {
# -------------------------------------------------------------- djc worker
"$DJC" delete Stats --yes >/dev/null
run djc worker Stats --until-empty --json
check "worker: exit 0" test "$RC" = 0
check "...2 made, 0 errors, 1 skipped (--json)" counts "$OUT" 2 0 1
expect_out "...the row of key 2 is the first writer's" '{"session_id":2,"m":99}' djc fetch Stats --where '{"session_id": 2}' --format json
expect_out "...no job left" "Stats jobs: pending 0, reserved 0, success 0, error 0, ignore 0, total 0" djc jobs Stats
}
tcase worker

case_direct() {
# ------------------------------------------------ populate without reservation
"$DJC" delete Stats --yes >/dev/null
run djc populate Stats --json
check "direct populate: exit 0, 2 made, 1 skipped" counts "$OUT" 2 0 1
expect_out "...the row of key 2 is the first writer's" '{"session_id":2,"m":99}' djc fetch Stats --where '{"session_id": 2}' --format json
}
tcase direct

case_later_row() {
# ------------- several rows per key: the first writer's row is not djc's first
run djc populate Multi --reserve-jobs --json
check "rows of another writer among make's later rows: exit 0" test "$RC" = 0
check "...2 made, 0 errors, 1 skipped (--json)" counts "$OUT" 2 0 1
expect_out "...the rows of key 2 are the first writer's, none of djc's" '{"session_id":2,"n":1,"m":98}
{"session_id":2,"n":2,"m":99}' rows Multi --where '{"session_id": 2}'
expect_out "...no job left" "Multi jobs: pending 0, reserved 0, success 0, error 0, ignore 0, total 0" djc jobs Multi
expect_out "...the other keys have make's rows" 4 count Multi '{"session_id": {"in": [1, 3]}}'
}
tcase later_row

case_own_duplicate() {
# ------------------------------ make's own repeated row is still make's error
"$DJC" delete Multi --where '{"session_id": 3}' --yes >/dev/null
run env MK_TWICE=3 "$DJC" populate Multi --reserve-jobs --json --suppress-errors
check "a make repeating its own row: exit 1" test "$RC" = 1
check "...0 made, 1 error, 0 skipped" counts "$OUT" 0 1 0
check "...named as make's duplicate" sh -c 'printf "%s" "$1" | grep -q "make produced a duplicate row"' _ "$OUT"
check "...nothing of it committed" test "$(count Multi '{"session_id": 3}')" = 0
"$DJC" jobs clear Multi --status error >/dev/null
}
tcase own_duplicate later_row

case_parts() {
# ------------------------------------------- a master row and its part rows
run djc populate Rec --reserve-jobs --json
check "master and parts made by another writer: exit 0, 2 made, 1 skipped" counts "$OUT" 2 0 1
expect_out "...key 2's master row is the first writer's" '{"session_id":2,"m":99}' djc fetch Rec --where '{"session_id": 2}' --format json
expect_out "...and so are its part rows, none of djc's" '{"session_id":2,"peak":5,"value":55}' djc fetch Rec.Peak --where '{"session_id": 2}' --format json
expect_out "...the other keys have make's parts" 4 count Rec.Peak '{"session_id": {"in": [1, 3]}}'
}
tcase parts

case_job_metadata() {
# ---------------- the hidden job metadata columns mean what DataJoint's mean
# (docs/parity.md): _job_start_time in the worker's local time zone (a
# naive datetime, DataJoint's datetime.fromtimestamp), _job_version "" when
# no version is configured (DataJoint's jobs.version_method none)
printf 'Timed (computed)\n    -> Session\n    ---\n    m : float64\n    job_metadata = true\n    make = ./mk.sh\n' > timed.djc
sed 's/insert Stats/insert Timed/' mk.sh > mk_t.sh && chmod +x mk_t.sh && sed -i 's#make = ./mk.sh#make = ./mk_t.sh#' timed.djc
expect_rc 0 "declare a table with job metadata" djc declare timed.djc
# local time 5 hours behind UTC (a POSIX TZ rule: no zone files needed)
before=$(TZ=XXX+5 date '+%Y-%m-%d %H:%M:%S')
run env TZ=XXX+5 "$DJC" populate Timed --reserve-jobs --json
after=$(TZ=XXX+5 date '+%Y-%m-%d %H:%M:%S')
check "populate: 2 made, 1 skipped" counts "$OUT" 2 0 1
run sh -c '"$DJC" fetch Timed --all-columns --format json | jq -r "select(._job_start_time != null) | ._job_start_time[0:19]"'
check "_job_start_time of both made keys is the worker's local time (between $before and $after)" \
	py 'import sys; b, a, t = sys.argv[1], sys.argv[2], sys.argv[3].splitlines(); sys.exit(0 if len(t) == 2 and all(b <= x <= a for x in t) else 1)' "$before" "$after" "$OUT"
expect_out "_job_version is empty without a configured version" '""' \
	sh -c '"$DJC" fetch Timed --all-columns --format json --where "{\"session_id\": 1}" | jq -c "._job_version"'
expect_out "...the row of the first writer has none" 'null' \
	sh -c '"$DJC" fetch Timed --all-columns --format json --where "{\"session_id\": 2}" | jq -c "._job_start_time"'
}
tcase job_metadata

finish
