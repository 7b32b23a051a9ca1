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

# ------------------------------------------------- 2. --allow-direct-insert
# DataJoint's insert(..., allow_direct_insert=True): rows of computed,
# imported and part tables by hand, for a backfill or a repair. The jobs
# table needs nothing: refresh and populate skip keys whose row exists, and
# a pending job of such a key is closed as made when reserved.
echo '{"id": 2, "v": -2}' > calc2.jsonl
expect_fail 2 "insert into a computed table without the option" \
	"table Calc is computed: its rows come from populate, not insert \(--allow-direct-insert" djc insert Calc calc2.jsonl
expect_out "refresh adds the four keys" '{"added":4,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Calc --json
expect_out "insert --allow-direct-insert into a computed table" "inserted 1 row into Calc" \
	djc insert Calc calc2.jsonl --allow-direct-insert
expect_out "the hand-made row is there" '{"id":2,"v":-2}' djc fetch Calc --format json
expect_out "progress counts it as made" '{"table":"Calc","remaining":3,"total":4}' djc progress Calc --json
expect_out "a refresh adds nothing for it" '{"added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Calc --json
expect_out "populate --reserve-jobs skips its pending job" "Calc: 3 made, 0 errors, 1 skipped" \
	djc populate Calc --reserve-jobs --make ./mk.sh
expect_out "...and never made it again" '{"id":1,"v":10}
{"id":2,"v":-2}
{"id":3,"v":30}
{"id":4,"v":40}' djc fetch Calc --format json
expect_out "no job is left" '{"pending":0,"reserved":0,"success":0,"error":0,"ignore":0}' \
	sh -c '"$DJC" jobs Calc --json | jq -c "{pending,reserved,success,error,ignore}"'
expect_out "a repair: delete a wrong row" "" sh -c '"$DJC" delete Calc --where "{\"id\": 3}" --yes >/dev/null'
echo '{"id": 3, "v": 33}' > calc3.jsonl
expect_out "...and insert the right one by hand" "inserted 1 row into Calc" djc insert Calc calc3.jsonl --allow-direct-insert
expect_out "populate (direct) has nothing to make" "Calc: 0 made, 0 errors, 0 skipped" djc populate Calc --make ./mk.sh
expect_out "the repaired row stays" '{"id":3,"v":33}' djc fetch Calc --where '{"id": 3}' --format json
expect_fail 2 "a duplicate is refused as for any table" "duplicate primary key in Calc" \
	djc insert Calc calc3.jsonl --allow-direct-insert
expect_out "--skip-duplicates with --allow-direct-insert" "inserted 0 rows into Calc" \
	djc insert Calc calc3.jsonl --allow-direct-insert --skip-duplicates
echo '{"id": 9, "v": 90}' > calc9.jsonl
expect_fail 2 "a row without its upstream row is refused" "no matching row in a parent table of Calc" \
	djc insert Calc calc9.jsonl --allow-direct-insert
cat > mk2.sh <<'M'
#!/bin/sh
cat >/dev/null
v=$("$DJC" fetch Calc --key "$DJC_KEY" --format csv | tail -n 1 | cut -d, -f2)
echo "{\"v2\": $((v + 1))}"
M
chmod +x mk2.sh
expect_out "downstream of hand-made rows populates" "Calc2: 4 made, 0 errors, 0 skipped" djc populate Calc2 --make ./mk2.sh
expect_out "...from them" '-1,11,34,41' sh -c '"$DJC" fetch Calc2 --format csv | tail -n +2 | cut -d, -f2 | sort -n | paste -sd,'

# imported and part tables
echo '{"id": 1, "n": 2}' > load.jsonl
printf '{"id": 1, "u": 1, "x": 0.5}\n{"id": 1, "u": 2, "x": 1.5}\n' > unit.jsonl
echo '{"id": 2, "u": 1, "x": 0.5}' > orphan_unit.jsonl
expect_fail 2 "insert into a part table without the option" "table Load.Unit is a part table: its rows come from populate" \
	djc insert Load.Unit unit.jsonl
expect_out "insert --allow-direct-insert into an imported table" "inserted 1 row into Load" djc insert Load load.jsonl --allow-direct-insert
expect_out "...and into its part table" "inserted 2 rows into Load.Unit" djc insert Load.Unit unit.jsonl --allow-direct-insert
expect_fail 2 "a part row needs its master row" "no matching row in a parent table of Load.Unit" \
	djc insert Load.Unit orphan_unit.jsonl --allow-direct-insert
cat > mkload.sh <<'M'
#!/bin/sh
cat >/dev/null
echo '{"n": 1}'
echo '{"_part": "Unit", "u": 1, "x": 2.5}'
M
chmod +x mkload.sh
expect_out "populate of the imported table skips the hand-made key" "Load: 3 made, 0 errors, 0 skipped" \
	djc populate Load --reserve-jobs --make ./mkload.sh
expect_out "its part rows are the hand-made ones" '{"id":1,"u":1,"x":0.5}
{"id":1,"u":2,"x":1.5}' djc fetch Load.Unit --where '{"id": 1}' --format json

# ------------------------------------------------ 3. reads limited to ancestors
# DataJoint's self.upstream[T] refuses a table that is not an ancestor of the
# target. djc fetch run by a make program (DJC_TABLE, DJC_KEY set) does the
# same; djc_make_fetch / djc_make_fetch_key: tests/unit/test_parity.c.
cat > p3.djc <<'P'
Reader (computed)
    -> Calc2
    ---
    r : int32
P
expect_rc 0 "declare a grandchild" djc declare p3.djc
printf '{"id": 1, "w": 5}\n' > other.jsonl
expect_out "insert Other" "inserted 1 row into Other" djc insert Other other.jsonl
cat > mk_reader.sh <<'M'
#!/bin/sh
cat >/dev/null
# Item is an ancestor (Reader -> Calc2 -> Calc -> Item): allowed
n=$("$DJC" fetch Item --key "$DJC_KEY" --format json | grep -c .) || exit 3
[ "$n" = 1 ] || exit 4
if [ "$DJC_KEY_id" = 1 ]; then
	"$DJC" fetch Other --key "$DJC_KEY" --format json || exit 5
fi
echo '{"r": 1}'
M
chmod +x mk_reader.sh
expect_rc 1 "a make reading a non-ancestor fails" djc populate Reader --reserve-jobs --suppress-errors --make ./mk_reader.sh
expect_out "...only that key" "2,3,4" sh -c '"$DJC" fetch Reader --format csv | tail -n +2 | cut -d, -f1 | paste -sd,'
expect_out "...whose error names both tables" '1' sh -c '"$DJC" jobs Reader --status error --json | jq -r ".jobs[0].error_stack" | grep -c "make of Reader may read only its ancestors (the tables it depends on through ->): Other is not upstream of Reader"'
expect_fail 2 "djc fetch in a make's environment refuses a non-ancestor" \
	"^djc: make of Reader may read only its ancestors \(the tables it depends on through ->\): Other is not upstream of Reader$" \
	env DJC_TABLE=Reader DJC_KEY='{"id": 1}' "$DJC" fetch Other
expect_fail 2 "...and the target itself" "Reader is not upstream of Reader" \
	env DJC_TABLE=Reader DJC_KEY='{"id": 1}' "$DJC" fetch Reader
expect_out "...but reads a parent" '{"id":1,"v2":11}' env DJC_TABLE=Reader DJC_KEY='{"id": 1}' "$DJC" fetch Calc2 --key '{"id": 1}' --format json
expect_out "a part reads its master" '{"id":1,"n":2}' env DJC_TABLE=Load.Unit DJC_KEY='{"id": 1}' "$DJC" fetch Load --key '{"id": 1}' --format json
expect_out "outside a make, fetch reads any table" '{"id":1,"w":5}' djc fetch Other --format json
finish
