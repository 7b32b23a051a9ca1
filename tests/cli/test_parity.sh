#!/bin/bash
# test_parity.sh - DataJoint 2.x parity (issue 20, docs/parity.md):
# refresh --delay with negative seconds; direct inserts into computed,
# imported and part tables for repair, with the jobs table left consistent;
# make-context reads limited to the target's ancestors; job metadata
# columns.
. "$ROOT/tests/cli/lib.sh"

cat > mk.sh <<'M'
#!/bin/sh
cat >/dev/null
echo "{\"v\": $(( DJC_KEY_id * 10 ))}"
M
chmod +x mk.sh
cat > p.djc <<'P'
Item (manual)
    id : int32
    ---
    name : varchar(16)

Other (manual)
    id : int32
    ---
    w : int32

Calc (computed)
    -> Item
    ---
    v : int32

Calc2 (computed)
    -> Calc
    ---
    v2 : int32

Load (imported)
    -> Item
    ---
    n : int32

Load.Unit (part)
    u : int16
    ---
    x : float64
P
expect_rc 0 "declare" djc declare p.djc
printf '{"id": %d, "name": "i%d"}\n' 1 1 2 2 3 3 4 4 > items.jsonl
expect_out "insert items" "inserted 4 rows into Item" djc insert Item items.jsonl

# ---------------------------------------------------------------- 1. --delay
# DataJoint's populate refreshes with delay=-1: jobs due at once whatever the
# clocks say. A job added with --delay -1 is due one second before one added
# with --delay 0 at the same priority, so it is reserved first.
expect_out "refresh --delay 0 adds item 1" '{"added":1,"removed":0,"orphaned":0,"re_pended":0}' \
	djc jobs refresh Calc --where '{"id": 1}' --delay 0 --json
expect_out "refresh --delay -1 adds item 2" '{"added":1,"removed":0,"orphaned":0,"re_pended":0}' \
	djc jobs refresh Calc --where '{"id": 2}' --delay -1 --json
expect_out "refresh --delay=-2.5 adds item 3" '{"added":1,"removed":0,"orphaned":0,"re_pended":0}' \
	djc jobs refresh Calc --where '{"id": 3}' --delay=-2.5 --json
expect_out "the earliest scheduled job is made first" "Calc: 1 made, 0 errors, 0 skipped" \
	djc populate Calc --reserve-jobs --no-refresh --max-calls 1 --make ./mk.sh
expect_out "...it is item 3 (delay -2.5)" '{"id":3,"v":30}' djc fetch Calc --format json
expect_out "then item 2 (delay -1)" "Calc: 1 made, 0 errors, 0 skipped" \
	djc populate Calc --reserve-jobs --no-refresh --max-calls 1 --make ./mk.sh
expect_out "...item 2" '{"id":2,"v":20}
{"id":3,"v":30}' djc fetch Calc --format json
expect_fail 2 "--delay takes a number" "--delay expects a number of seconds, got 'soon'" \
	djc jobs refresh Calc --delay soon
expect_fail 2 "--delay refuses nan" "--delay expects a number of seconds, got 'nan'" \
	djc jobs refresh Calc --delay nan
expect_fail 2 "--stale-timeout stays >= 0" "--stale-timeout expects a number of seconds >= 0" \
	djc jobs refresh Calc --stale-timeout -1
expect_rc 0 "clean up Calc" djc delete Calc --yes
expect_rc 0 "clear Calc's jobs" djc jobs clear Calc --status pending
finish
