#!/bin/bash
# test_parity.sh - DataJoint 2.x parity (issue 20, docs/parity.md):
# refresh --delay with negative seconds; direct inserts into computed,
# imported and part tables for repair, with the jobs table left consistent;
# make-context reads limited to the target's ancestors and their part
# tables (part_reads) and checked at commit (C makes, serve programs,
# per-key programs through their fetch socket, which fetch_socket,
# fetch_socket_py and fetch_socket_cli test on its own); job metadata
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

case_delay() {
# ---------------------------------------------------------------- 1. --delay
# DataJoint's populate refreshes with delay=-1: jobs due at once whatever the
# clocks say. A job added with --delay -1 is due one second before one added
# with --delay 0 at the same priority, so it is reserved first.
expect_out "refresh --delay 0 adds item 1" '{"table":"Calc","added":1,"removed":0,"orphaned":0,"re_pended":0}' \
	djc jobs refresh Calc --where '{"id": 1}' --delay 0 --json
expect_out "refresh --delay -1 adds item 2" '{"table":"Calc","added":1,"removed":0,"orphaned":0,"re_pended":0}' \
	djc jobs refresh Calc --where '{"id": 2}' --delay -1 --json
expect_out "refresh --delay=-2.5 adds item 3" '{"table":"Calc","added":1,"removed":0,"orphaned":0,"re_pended":0}' \
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
}
tcase delay

case_direct_insert() {
# ------------------------------------------------- 2. --allow-direct-insert
# DataJoint's insert(..., allow_direct_insert=True): rows of computed,
# imported and part tables by hand, for a backfill or a repair. The jobs
# table needs nothing: refresh and populate skip keys whose row exists, and
# a pending job of such a key is closed as made when reserved.
echo '{"id": 2, "v": -2}' > calc2.jsonl
expect_fail 2 "insert into a computed table without the option" \
	"table Calc is computed: its rows come from populate, not insert \(--allow-direct-insert" djc insert Calc calc2.jsonl
expect_out "refresh adds the four keys" '{"table":"Calc","added":4,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Calc --json
expect_out "insert --allow-direct-insert into a computed table" "inserted 1 row into Calc" \
	djc insert Calc calc2.jsonl --allow-direct-insert
expect_out "the hand-made row is there" '{"id":2,"v":-2}' djc fetch Calc --format json
expect_out "progress counts it as made" '{"table":"Calc","remaining":3,"total":4}' sh -c '"$DJC" progress Calc --json | jq -c "{table, remaining, total}"'
expect_out "a refresh adds nothing for it" '{"table":"Calc","added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Calc --json
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
expect_fail 2 "a row without its upstream row is refused, naming it" 'no row of Item with \{"id": 9\} \(a parent of Calc\)' \
	djc insert Calc calc9.jsonl --allow-direct-insert
cat > mk2.sh <<'M'
#!/bin/sh
cat >/dev/null
v=$("$DJC" fetch Calc --key "$DJC_KEY" --format csv | tail -n 1 | cut -d, -f2)
echo "{\"v2\": $((v + 1))}"
M
chmod +x mk2.sh
expect_out "downstream of hand-made rows populates" "Calc2: 4 made, 0 errors, 0 skipped" djc populate Calc2 --make ./mk2.sh
expect_out "...from them" '-1,11,34,41' sh -c '"$DJC" fetch Calc2 --format csv | tail -n +2 | cut -d, -f2 | sort -n | tr "\n" , | sed "s/,$//"'

# imported and part tables
echo '{"id": 1, "n": 2}' > load.jsonl
printf '{"id": 1, "u": 1, "x": 0.5}\n{"id": 1, "u": 2, "x": 1.5}\n' > unit.jsonl
echo '{"id": 2, "u": 1, "x": 0.5}' > orphan_unit.jsonl
expect_fail 2 "insert into a part table without the option" "table Load.Unit is a part table: its rows come from populate" \
	djc insert Load.Unit unit.jsonl
expect_out "insert --allow-direct-insert into an imported table" "inserted 1 row into Load" djc insert Load load.jsonl --allow-direct-insert
expect_out "...and into its part table" "inserted 2 rows into Load.Unit" djc insert Load.Unit unit.jsonl --allow-direct-insert
expect_fail 2 "a part row needs its master row, named" 'no row of Load with \{"id": 2\} \(a parent of Load\.Unit\)' \
	djc insert Load.Unit orphan_unit.jsonl --allow-direct-insert
# a part of a manual table is filled by hand, as its master is (DataJoint's
# Part.insert): no option needed; its master row still must be there
printf 'Trialset (manual)\n    ts : int32\n    ---\nTrialset.Trial (part)\n    -> master\n    trial : int32\n    ---\n    ok : bool\n' > tset.djc
expect_rc 0 "a manual table with a part declares" djc declare tset.djc
expect_out "its row" "inserted 1 row into Trialset" djc insert Trialset <<< '{"ts": 1}'
expect_out "the part of a manual table takes rows by insert" "inserted 2 rows into Trialset.Trial" \
	djc insert Trialset.Trial <<< $'{"ts": 1, "trial": 1, "ok": true}\n{"ts": 1, "trial": 2, "ok": false}'
expect_fail 2 "... each needing its master row, named" 'no row of Trialset with \{"ts": 2\} \(a parent of Trialset\.Trial\)' \
	djc insert Trialset.Trial <<< '{"ts": 2, "trial": 1, "ok": true}'
expect_out "nothing of that one" 2 count Trialset.Trial
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
}
tcase direct_insert delay

case_ancestors() {
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
expect_out "...only that key" "2,3,4" sh -c '"$DJC" fetch Reader --format csv | tail -n +2 | cut -d, -f1 | tr "\n" , | sed "s/,$//"'
expect_out "...whose error names both tables" '1' sh -c '"$DJC" jobs Reader --status error --json | jq -r ".jobs[0].error_stack" | grep -c "make of Reader may read only its ancestors and their part tables (the tables it depends on through ->): Other is not upstream of Reader"'
expect_fail 2 "djc fetch in a make's environment refuses a non-ancestor" \
	"^djc: make of Reader may read only its ancestors and their part tables \(the tables it depends on through ->\): Other is not upstream of Reader$" \
	env DJC_TABLE=Reader DJC_KEY='{"id": 1}' "$DJC" fetch Other
expect_fail 2 "...and the target itself" "Reader is not upstream of Reader" \
	env DJC_TABLE=Reader DJC_KEY='{"id": 1}' "$DJC" fetch Reader
expect_out "...but reads a parent" '{"id":1,"v2":11}' env DJC_TABLE=Reader DJC_KEY='{"id": 1}' "$DJC" fetch Calc2 --key '{"id": 1}' --format json
expect_out "a part reads its master" '{"id":1,"n":2}' env DJC_TABLE=Load.Unit DJC_KEY='{"id": 1}' "$DJC" fetch Load --key '{"id": 1}' --format json
expect_out "outside a make, fetch reads any table" '{"id":1,"w":5}' djc fetch Other --format json
}
tcase ancestors direct_insert

case_job_metadata() {
# --------------------------------------------------------- 4. job metadata
# jobs.add_job_metadata (default off): computed and imported tables declared
# while it is on get hidden columns _job_start_time, _job_duration and
# _job_version, filled when make's rows are committed, left out of fetches,
# restrictions and key sources; djc fetch --all-columns shows them.
cat > p4a.djc <<'P'
Plain (computed)
    -> Item
    ---
    v : int32
P
expect_rc 0 "declare a computed table with the setting off" djc declare p4a.djc
cat > p4.djc <<'P'
Meta (computed)
    -> Item
    ---
    v : int32

MetaD (imported)
    -> Item
    ---
    v : int32

Child (computed)
    -> Meta
    ---
    c : int32
P
expect_out "declare with jobs.add_job_metadata on" "created Meta (computed) as __meta
created MetaD (imported) as _meta_d
created Child (computed) as __child
created Meta jobs table ~~meta
created MetaD jobs table ~~meta_d
created Child jobs table ~~child" env DJC_JOBS_ADD_JOB_METADATA=true "$DJC" declare p4.djc
expect_out "declaring again with the setting off changes nothing" "exists  Meta (computed) as __meta
exists  MetaD (imported) as _meta_d
exists  Child (computed) as __child" djc declare p4.djc
expect_out "a table declared without them is left as is, and says so" \
	"exists  Plain (computed) as __plain (left without job metadata columns: it was declared without them; 'djc drop' it and declare again to add them)" \
	env DJC_JOBS_ADD_JOB_METADATA=true "$DJC" declare p4a.djc
expect_out "populate --reserve-jobs" "Meta: 4 made, 0 errors, 0 skipped" \
	env DJC_JOBS_JOB_VERSION=v-test "$DJC" populate Meta --reserve-jobs --make ./mk.sh
expect_out "populate (direct)" "MetaD: 4 made, 0 errors, 0 skipped" djc populate MetaD --make ./mk.sh
expect_out "a default fetch hides the metadata" '{"id":1,"v":10}
{"id":2,"v":20}
{"id":3,"v":30}
{"id":4,"v":40}' djc fetch Meta --format json
expect_out "...so does csv" "id,v" sh -c '"$DJC" fetch Meta --format csv | head -1'
expect_out "--all-columns shows them, filled at commit" '4 true true v-test' \
	sh -c '"$DJC" fetch Meta --all-columns --format json | jq -s -r "[length, all(._job_duration >= 0), all(._job_start_time | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:]{8}\")), (map(._job_version) | unique | join(\",\"))] | join(\" \")"'
expect_out "the version defaults to \"\", as DataJoint's" "" \
	sh -c '"$DJC" fetch MetaD --all-columns --format json | jq -r "._job_version" | sort -u'
expect_out "--all-columns csv header" "id,v,_job_start_time,_job_duration,_job_version" \
	sh -c '"$DJC" fetch Meta --all-columns --format csv | head -1'
expect_out "--all-columns of a table without them" '{"id":1,"name":"i1"}' djc fetch Item --where '{"id": 1}' --all-columns --format json
expect_fail 2 "restrictions do not see them" 'restriction names "_job_version", which is not an attribute of Meta' \
	djc fetch Meta --where '{"_job_version": "v-test"}'
echo '{"id": 1, "v": 1, "_job_version": "x"}' > metarow.jsonl
expect_fail 2 "rows cannot set them" "_job_version" djc insert Meta metarow.jsonl --allow-direct-insert
expect_out "a downstream key source ignores them" '{"table":"Child","remaining":4,"total":4}' sh -c '"$DJC" progress Child --json | jq -c "{table, remaining, total}"'
cat > mkc.sh <<'M'
#!/bin/sh
cat >/dev/null
echo '{"c": 1}'
M
chmod +x mkc.sh
expect_out "...and its populate joins on the key only" "Child: 4 made, 0 errors, 0 skipped" djc populate Child --reserve-jobs --make ./mkc.sh
expect_out "a repair by hand leaves them NULL" "inserted 1 row into Meta" sh -c '"$DJC" delete Meta --where "{\"id\": 4}" --yes >/dev/null && echo "{\"id\": 4, \"v\": 44}" | "$DJC" insert Meta --allow-direct-insert'
expect_out "...NULL" '{"id":4,"v":44,"_job_start_time":null,"_job_duration":null,"_job_version":null}' \
	djc fetch Meta --where '{"id": 4}' --all-columns --format json
sed 's/^    v : int32$/    v : int32\n    note = "" : varchar(8)/' p4.djc > p4b.djc
expect_rc 0 "alter adds an attribute to a table with metadata" djc alter p4b.djc
expect_out "...which keeps its metadata columns" 'id,v,note,_job_start_time,_job_duration,_job_version' \
	sh -c '"$DJC" fetch Meta --all-columns --format csv | head -1'
expect_out "...and declares as it is" "exists  Meta (computed) as __meta" sh -c '"$DJC" declare p4b.djc | head -1'
printf 'Plain (computed)\n    -> Item\n    ---\n    v : int32\n    job_metadata = true\n' > p4c.djc
expect_fail 2 "alter does not add them" "alter does not add job metadata columns" djc alter p4c.djc
printf 'Man (manual)\n    id : int32\n    ---\n    job_metadata = true\n' > p4d.djc
expect_fail 2 "job_metadata on a manual table" "'job_metadata =' belongs to computed and imported tables" djc declare p4d.djc
printf 'Expl (computed)\n    -> Item\n    ---\n    v : int32\n    job_metadata = true\n' > p4e.djc
expect_rc 0 "job_metadata = true in the definition (setting off)" djc declare p4e.djc
expect_out "...gives the table the columns" "id,v,_job_start_time,_job_duration,_job_version" \
	sh -c '"$DJC" fetch Expl --all-columns --format csv | head -1'
expect_out "populate in batches of 3 jobs per commit" "Expl: 4 made, 0 errors, 0 skipped" \
	env DJC_JOBS_RESERVE_BATCH=3 "$DJC" populate Expl --reserve-jobs --make ./mk.sh
expect_out "...fills every row's metadata" "4" \
	sh -c '"$DJC" fetch Expl --all-columns --format json | jq -s "map(select(._job_duration != null and ._job_start_time != null and ._job_version != null)) | length"'
expect_rc 0 "drop a table with metadata" djc drop Meta --yes
}
tcase job_metadata ancestors

case_key_source() {
# ------------------------------------------------------------ 5. key_source
# key_source = a table or a join of upstream tables, optionally restricted,
# projected on the target's attributes; checked at declare; used by
# progress, refresh and populate (direct and reserved) alike. A secondary
# parent (-> Topic below ---) as the key source.
cat > p5.djc <<'P'
Topic (manual)
    topic_id : int32
    ---
    title : varchar(16)

Param (lookup)
    param_id : int16
    ---
    note : varchar(16)

Summary (computed)
    summary_id : int32
    ---
    -> Topic
    words : int32
    key_source = Topic

Fit (computed)
    -> Item
    -> Param
    ---
    f : int32
    key_source = Item * Param & {"param_id": [1, 2]}   # two of the params

Deep (computed)
    -> Calc2
    ---
    d : int32
    key_source = Item & {"id": {"<": 3}}
P
expect_rc 0 "declare key sources: a secondary parent, a restricted join, a grandparent" djc declare p5.djc
expect_out "declaring again is idempotent" "3" sh -c '"$DJC" declare p5.djc | grep -c "^exists.*\(Summary\|Fit\|Deep\)"'
printf '{"topic_id": %d, "title": "t"}\n' 1 2 3 > topics.jsonl
expect_out "insert topics" "inserted 3 rows into Topic" djc insert Topic topics.jsonl
printf '{"param_id": %d, "note": "p"}\n' 1 2 3 > params.jsonl
expect_out "insert params (note is also Param's, not a join attribute)" "inserted 3 rows into Param" djc insert Param params.jsonl
expect_out "progress of a secondary parent key source" '{"table":"Summary","remaining":3,"total":3}' sh -c '"$DJC" progress Summary --json | jq -c "{table, remaining, total}"'
cat > mks.sh <<'M'
#!/bin/sh
cat >/dev/null
echo "{\"summary_id\": $((DJC_KEY_topic_id * 100)), \"words\": 7}"
M
chmod +x mks.sh
expect_out "refresh adds one job per topic" '{"table":"Summary","added":3,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Summary --json
expect_out "populate --reserve-jobs makes them" "Summary: 3 made, 0 errors, 0 skipped" djc populate Summary --reserve-jobs --make ./mks.sh
expect_out "...one row per topic, with the make's own key" '100,1,7
200,2,7
300,3,7' sh -c '"$DJC" fetch Summary --format csv | tail -n +2'
expect_out "...and nothing remains" '{"table":"Summary","remaining":0,"total":3}' sh -c '"$DJC" progress Summary --json | jq -c "{table, remaining, total}"'
expect_out "a refresh adds nothing more" '{"table":"Summary","added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Summary --json
# several rows per key-source key (DataJoint's test_uuid_dependencies: an
# Item per word of each Topic): progress counts the distinct keys of the key
# source, remaining those without a row, as DataJoint's progress does
cat > p5w.djc <<'P'
Word (computed)
    word_id : int32
    ---
    -> Topic
    word : varchar(16)
    key_source = Topic
P
expect_rc 0 "declare a table with several rows per key-source key" djc declare p5w.djc
cat > mkw.sh <<'M'
#!/bin/sh
cat >/dev/null
for w in 1 2 3 4; do echo "{\"word_id\": $((DJC_KEY_topic_id * 10 + w)), \"word\": \"w$w\"}"; done
M
chmod +x mkw.sh
expect_out "progress before any row" '{"table":"Word","remaining":3,"total":3}' sh -c '"$DJC" progress Word --json | jq -c "{table, remaining, total}"'
expect_out "populate one topic: four rows" "Word: 1 made, 0 errors, 0 skipped" djc populate Word --where '{"topic_id": 1}' --make ./mkw.sh
expect_out "midway: the distinct keys, not the rows" '{"table":"Word","remaining":2,"total":3}' sh -c '"$DJC" progress Word --json | jq -c "{table, remaining, total}"'
expect_out "populate the rest" "Word: 2 made, 0 errors, 0 skipped" djc populate Word --make ./mkw.sh
expect_out "...12 rows" "12" count Word
expect_out "done: (0, 3), not (0, 12)" '{"table":"Word","remaining":0,"total":3}' sh -c '"$DJC" progress Word --json | jq -c "{table, remaining, total}"'
expect_out "progress of a restricted join" '{"table":"Fit","remaining":8,"total":8}' sh -c '"$DJC" progress Fit --json | jq -c "{table, remaining, total}"'
printf '#!/bin/sh\ncat >/dev/null\necho "{\\"f\\": $DJC_KEY_param_id}"\n' > mkf.sh
chmod +x mkf.sh
expect_out "populate (direct) of one item" "Fit: 2 made, 0 errors, 0 skipped" djc populate Fit --where '{"id": 1}' --make ./mkf.sh
expect_out "refresh of the rest" '{"table":"Fit","added":6,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Fit --json
expect_out "populate --reserve-jobs of the rest" "Fit: 6 made, 0 errors, 0 skipped" djc populate Fit --reserve-jobs --make ./mkf.sh
expect_out "...only params 1 and 2" "1,2" sh -c '"$DJC" fetch Fit --format csv | tail -n +2 | cut -d, -f2 | sort -u | tr "\n" , | sed "s/,$//"'
expect_out "a grandparent as key source, restricted" '{"table":"Deep","remaining":2,"total":2}' sh -c '"$DJC" progress Deep --json | jq -c "{table, remaining, total}"'
printf '#!/bin/sh\ncat >/dev/null\necho "{\\"d\\": 1}"\n' > mkd.sh
chmod +x mkd.sh
expect_out "populate of it" "Deep: 2 made, 0 errors, 0 skipped" djc populate Deep --reserve-jobs --make ./mkd.sh
expect_out "...the keys it gives" "1,2" sh -c '"$DJC" fetch Deep --format csv | tail -n +2 | cut -d, -f1 | tr "\n" , | sed "s/,$//"'
# checked at declare
printf 'B1 (computed)\n    -> Item\n    -> Param\n    ---\n    v : int32\n    key_source = Item\n' > b1.djc
expect_fail 2 "a key source that lacks a key attribute" \
	"^djc: b1\.djc:1: key_source of B1 does not give its primary key attribute 'param_id' \(Item lacks it\); join the parent that has it$" djc declare b1.djc
printf 'B2 (computed)\n    -> Item\n    ---\n    v : int32\n    key_source = Other\n' > b2.djc
expect_fail 2 "a key source that is not upstream" "^djc: b2\.djc:1: key_source of B2 joins Other, which is not upstream of it" djc declare b2.djc
printf 'B3 (computed)\n    -> Item\n    ---\n    v : int32\n    key_source = Nope * Item\n' > b3.djc
expect_fail 2 "an unknown table" "^djc: b3\.djc:5: key_source names unknown table 'Nope'" djc declare b3.djc
printf 'B4 (computed)\n    -> Item\n    ---\n    v : int32\n    key_source = Item & {"nope": "i1"}\n' > b4.djc
expect_fail 2 "a restriction on an attribute no table of the key source has" \
	"^djc: b4\.djc:5: key_source of B4 restricts \"nope\", which is not an attribute of its tables \(Item\)" djc declare b4.djc
printf 'B5 (computed)\n    -> Item\n    ---\n    v : int32\n    key_source = Item &\n' > b5.djc
expect_fail 2 "'&' without a restriction" "^djc: b5\.djc:5: key_source has '&' but no restriction" djc declare b5.djc
printf 'B6 (computed)\n    b_id : int32\n    ---\n    v : int32\n' > b6.djc
expect_fail 2 "no parent and no key source" "needs a parent in its primary key .* or a key_source" djc declare b6.djc
expect_out "nothing of them was declared" "0" sh -c '"$DJC" tables | grep -c "^B[0-9]" || true'
sed 's/key_source = Item & {"id": {"<": 3}}/key_source = Calc \& {"id": {"<": 3}}/' p5.djc > p5b.djc
expect_fail 2 "alter does not change key_source's tables" "alter does not change the tables of key_source" djc alter p5b.djc
sed 's/key_source = Item \* Param & {"param_id": \[1, 2\]}.*/key_source = Item * Param \& {"param_id": [1, 2, 3]}/' p5.djc > p5c.djc
expect_rc 0 "alter changes its restriction" djc alter p5c.djc
expect_out "...which progress follows" '{"table":"Fit","remaining":4,"total":12}' sh -c '"$DJC" progress Fit --json | jq -c "{table, remaining, total}"'
}
tcase key_source job_metadata

# reads_checked N LABEL OPTION Y: SrcN -> DstN (declared with the job
# metadata columns) made by a Python make run with OPTION (--make-serve,
# --make): its fetches go through the make context, ancestors only,
# checked at commit. Key 1 fetches a table that is not upstream (refused);
# key 2 reads the rows after it and waits while another user adds one (a
# delete would take the job with it: djc delete keeps jobs consistent; the
# program has no database URL to do it itself); key 3 is made, y = Y. The
# program sets DJC=/bin/false (djc sets DJC to itself for its programs),
# so no `djc fetch` process can read for it.
reads_checked() {
local n=$1 label=$2 opt=$3 y=$4
export PYTHONPATH="$ROOT/python"
printf 'Src%s (manual)\n    id : int32\n    ---\n    x : int32\n\nDst%s (computed)\n    -> Src%s\n    ---\n    y : int32\n' \
	"$n" "$n" "$n" > "p$n.djc"
expect_rc 0 "$label: declare a pair" env DJC_JOBS_ADD_JOB_METADATA=true "$DJC" declare "p$n.djc"
printf '{"id": %d, "x": %d}\n' 1 1 2 2 3 3 > "src$n.jsonl"
expect_out "$label: insert" "inserted 3 rows into Src$n" djc insert "Src$n" "src$n.jsonl"
sed "s/@N@/$n/g" > "mk$n.py" <<'P'
import os, time
os.environ["DJC"] = "/bin/false"
import djc_make

def make(key, fetch):
    i = key["id"]
    row = fetch("Src@N@", key)[0]
    if i == 1:
        fetch("Other", key)          # not upstream of Dst@N@: refused
    if i == 2:
        later = fetch("Src@N@", where={"id": {">": 1}})
        open("ready@N@", "w").close()
        while not os.path.exists("done@N@"):
            time.sleep(0.05)
        return {"y": len(later)}
    return {"y": row["x"] * 10 + ("DJC_FETCH_SOCKET" in os.environ)}

djc_make.run(make)
P
"$DJC" populate "Dst$n" --reserve-jobs --suppress-errors "$opt" python3 "mk$n.py" >"pop$n.out" 2>"pop$n.err" &
local pop=$!
for _ in $(seq 1 1200); do [ -e "ready$n" ] && break; nap 0.05; done
check "$label: the make of key 2 has read" [ -e "ready$n" ]
echo '{"id": 9, "x": 9}' > "src${n}b.jsonl"
expect_out "$label: another user adds a row it read" "inserted 1 row into Src$n" djc insert "Src$n" "src${n}b.jsonl"
touch "done$n"
wait $pop
check "$label: populate: exit 1 (failed keys)" [ $? = 1 ]
expect_out "$label: only the key that read its own upstream, unchanged, is made" "{\"id\":3,\"y\":$y}" djc fetch "Dst$n" --format json
expect_out "$label: a fetch of a non-ancestor failed its key" "1" \
	sh -c "\"\$DJC\" jobs Dst$n --status error --json | jq -r '.jobs[] | select(.id == 1) | .error_message' | grep -c 'FetchError: .*Other is not upstream of Dst$n'"
expect_out "$label: a row added to what it read failed its key at commit" "true" \
	sh -c "\"\$DJC\" jobs Dst$n --status error --json | jq -r '.jobs[] | select(.id == 2) | .error_message | startswith(\"upstream changed while make ran: the rows of Src$n that make of Dst$n read\") and contains(\"2 rows then, 3 now) are not the same at commit; nothing committed\")'"
expect_out "$label: its row has the job metadata" "true" \
	sh -c "\"\$DJC\" fetch Dst$n --all-columns --format json | jq -c '._job_duration != null and ._job_version != null'"
}

case_serve_programs() {
# ------------------------------------------- serve programs (docs/parity.md)
# A serve program's fetches go over its pipe; its rows get the job metadata.
reads_checked 6 serve --make-serve 30
}
tcase serve_programs key_source

case_per_key_programs() {
# --------------------------- per-key programs' fetches (docs/serve-protocol.md)
# A per-key Python make's fetches go to djc over its fetch socket
# (DJC_FETCH_SOCKET); y = 31 says the program saw it.
reads_checked 7 per_key --make 31
}
tcase per_key_programs key_source

case_fetch_socket() {
# ---------------------------------------- the fetch socket, spoken by hand
# A program (no djc_make) on DJC_FETCH_SOCKET, an abstract UNIX socket: a
# line that is not a fetch gets an error answer and the connection goes on;
# a fetch is answered as a serve program's is; a client that shuts its
# sending end gets every answer still (4 MB of base64); forty connections
# at once, eight of them waiting in the listen queue until others close; a
# request over 1 MiB gets an error answer and the connection goes on; a
# connection closed with answers unread, and one that never reads, hold
# nothing up; a djc run by the program warns of none of djc's variables.
# Each make logs what it saw to sock.log.
cat > p8.djc <<'P'
Src8 (manual)
    id : int32
    ---
    raw : bytes

Dst8 (computed)
    -> Src8
    ---
    n : int32
P
expect_rc 0 "fetch_socket: declare" djc declare p8.djc
python3 -c '
import base64, json
for i, raw in ((1, b"\x00\x01\x02\xff"), (2, b""), (3, bytes(range(256)) * 11719)):
    print(json.dumps({"id": i, "raw": base64.b64encode(raw).decode()}))' > src8.jsonl
expect_out "fetch_socket: insert" "inserted 3 rows into Src8" djc insert Src8 src8.jsonl
cat > mk8.py <<'P'
import json, os, socket, subprocess
path = os.environ["DJC_FETCH_SOCKET"]
me = int(os.environ["DJC_KEY_id"])
log = open("sock.log", "a", buffering=1)
log.write("name %s\n" % path.startswith("@djc-fetch-"))
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0" + path[1:])
    return s, s.makefile("rb")
def by_key(i):
    return (json.dumps({"_djc": "fetch", "table": "Src8", "key": {"id": i}}) + "\n").encode()
s, f = conn()
s.sendall(b"not json\n")
log.write("garbage %s\n" % json.loads(f.readline())["error"].split(":")[0])
s.sendall(b'{"_djc": "hello", "version": 2}\n')
log.write("other %s\n" % ("error" in json.loads(f.readline())))
s.sendall(by_key(me))
head = json.loads(f.readline())
row = json.loads(f.readline())
log.write("fetch %d %d\n" % (head["count"], len(row["raw"])))
# every row, the sending end shut at once: every answer still comes
h, hf = conn()
h.sendall(b'{"_djc": "fetch", "table": "Src8"}\n')
h.shutdown(socket.SHUT_WR)
lines = hf.read().split(b"\n")
log.write("halfclose %d %d %d\n" % (json.loads(lines[0])["count"], len([l for l in lines[1:] if l]),
                                    sum(len(json.loads(l)["raw"]) for l in lines[1:] if l)))
hf.close()
h.close()
# forty at once: the last eight wait to be accepted until others close
cs = [conn() for _ in range(40)]
for c, _ in cs:
    c.sendall(by_key(1))
got = 0
for c, cf in cs:
    got += json.loads(cf.readline())["count"] + (json.loads(cf.readline())["raw"] == "AAEC/w==")
    cf.close()
    c.close()
log.write("ten %d\n" % got)
# a request over 1 MiB: an error answer, and the connection goes on
s.sendall(b'{"_djc": "fetch", "table": "Src8", "where": {"id": [' + b"1," * 700000 + b'1]}}\n')
log.write("long %s\n" % json.loads(f.readline())["error"])
s.sendall(by_key(2))
log.write("after long %d\n" % json.loads(f.readline())["count"])
f.readline()
# asks and leaves without reading; another asks and never reads
s2, _ = conn()
s2.sendall(by_key(3) * 50)
s2.close()
s3, _ = conn()
s3.sendall(by_key(3) * 200)
# djc run by the program (the fallback's djc fetch) knows djc's variables
p = subprocess.run([os.environ["DJC"], "fetch", "Src8", "--format", "json", "--where", '{"id": 1}'],
                   capture_output=True, env=dict(os.environ, DJC_PG_PIPELINE="1"))
log.write("djc fetch %d %r\n" % (p.returncode, p.stderr.decode()))
print(json.dumps({"n": len(row["raw"])}))
P
: > sock.log
run "$DJC" populate Dst8 --json --make python3 mk8.py
check "fetch_socket: the 3 keys made" test "$RC/$(jq -r '"\(.success_count)/\(.error_count)"' <<<"$OUT")" = "0/3/0"
check "fetch_socket: DJC_FETCH_SOCKET names an abstract socket" test "$(grep -c '^name True$' sock.log)" = 3
check "fetch_socket: a line that is not a fetch gets an error answer" \
	test "$(grep -c '^garbage the fetch socket takes fetch requests only, one JSON line each$' sock.log)" = 3
check "fetch_socket: ... and so does any other message, on the same connection" test "$(grep -c '^other True$' sock.log)" = 3
check "fetch_socket: a fetch is answered as djc fetch prints its rows" \
	test "$(grep '^fetch ' sock.log | sort | tr '\n' ' ')" = "fetch 1 0 fetch 1 4000088 fetch 1 8 "
check "fetch_socket: a client that shut its sending end got every row (3, 4 MB of base64)" \
	test "$(grep -c '^halfclose 3 3 4000096$' sock.log)" = 3
check "fetch_socket: forty connections at once, each answered" test "$(grep -c '^ten 80$' sock.log)" = 3
check "fetch_socket: a request over 1 MiB gets an error answer" \
	test "$(grep -c '^long a fetch request of more than 1 MiB$' sock.log)" = 3
check "fetch_socket: ... and the connection goes on" test "$(grep -c '^after long 1$' sock.log)" = 3
check "fetch_socket: djc run by the program warns of none of the variables it was given" \
	test "$(grep -c "^djc fetch 0 ''$" sock.log)" = 3
expect_out "fetch_socket: the rows it made" '{"id":1,"n":8}|{"id":2,"n":0}|{"id":3,"n":4000088}' \
	sh -c '"$DJC" fetch Dst8 --format json | tr "\n" "|" | sed "s/|$//"'
}
tcase fetch_socket

case_fetch_socket_py() {
# djc_make's fetch on the socket from threads and forked children: one
# connection per process, one request at a time on it; a request over 1
# MiB fails that fetch (FetchError) and the next one works. DJC=/bin/false
# in the program: the `djc fetch` fallback would fail every fetch.
export PYTHONPATH="$ROOT/python"
cat > mk9.py <<'P'
import os, threading
os.environ["DJC"] = "/bin/false"
import djc_make

def make(key, fetch):
    me = key["id"]
    want = fetch("Src8", key)[0]["raw"]
    bad = []
    def many():
        for _ in range(10):
            if fetch("Src8", {"id": me})[0]["raw"] != want:
                bad.append(1)
    ts = [threading.Thread(target=many) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    kids = []
    for _ in range(10):
        pid = os.fork()
        if pid == 0:
            ok = all(fetch("Src8", {"id": me})[0]["raw"] == want for _ in range(5))
            os._exit(0 if ok else 1)
        kids.append(pid)
    forks = sum(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) == 0 for p in kids)
    try:
        fetch("Src8", where={"id": list(range(300000))})
        long = "no error"
    except djc_make.FetchError as e:
        long = str(e)
    after = fetch("Src8", key)[0]["raw"] == want
    with open("py9.log", "a") as f:
        f.write("%d threads %d forks %d long %s after %s\n" % (me, 4 - len(bad), forks, long, after))
    return {"n": len(want)}

djc_make.run(make)
P
: > py9.log
djc delete Dst8 --yes >/dev/null
run "$DJC" populate Dst8 --json --make python3 mk9.py
check "fetch_socket_py: the 3 keys made" test "$RC/$(jq -r '"\(.success_count)/\(.error_count)"' <<<"$OUT")" = "0/3/0"
check "fetch_socket_py: threads and forked children fetch the right rows, a long request fails alone" \
	test "$(grep -c '^[123] threads 4 forks 10 long a fetch request of more than 1 MiB after True$' py9.log)" = 3
}
tcase fetch_socket_py fetch_socket

case_fetch_socket_cli() {
# ------------------------ a shell make's `djc fetch --format json`, per key
# Run by a per-key program, `djc fetch T --key/--where --format json` asks
# the worker over DJC_FETCH_SOCKET: the program points djc at a database
# that does not exist, and still reads (and prints exactly what the same
# fetch prints from the database, bytes as base64); a non-ancestor is
# refused with the same message and exit status 2; a row added to what
# key 2 read fails it at commit; a --format table fetch and one by a text
# condition (--where 'x > 2'), which read the database themselves, fail
# there.
cat > p10.djc <<'P'
Src10 (manual)
    id : int32
    ---
    x : int32
    raw = null : bytes

Dst10 (computed)
    -> Src10
    ---
    y : int32
P
expect_rc 0 "fetch_socket_cli: declare" djc declare p10.djc
printf '{"id": %d, "x": %d, "raw": "AAH/"}\n' 1 1 2 2 3 3 > src10.jsonl
expect_out "fetch_socket_cli: insert" "inserted 3 rows into Src10" djc insert Src10 src10.jsonl
cat > mk10.sh <<'M'
#!/bin/bash
cat >/dev/null
export DJC_DATABASE_URL=postgresql://nobody@127.0.0.1:1/none   # no database from here
i=$DJC_KEY_id
"$DJC" fetch Src10 --key "$DJC_KEY" --format json > "row10.$i" 2> "err10.$i"
echo "$?" > "rc10.$i"
"$DJC" fetch Other --format json > /dev/null 2> "other10.$i"
echo "$?" >> "rc10.$i"
"$DJC" fetch Src10 --key "$DJC_KEY" > /dev/null 2> "table10.$i"
echo "$?" >> "rc10.$i"
"$DJC" fetch Src10 --where 'x > 2' --format json > /dev/null 2> "text10.$i"
echo "$?" >> "rc10.$i"
if [ "$i" = 2 ]; then
	"$DJC" fetch Src10 --where '{"id": {">": 1}}' --format json > later10
	touch ready10
	while [ ! -e done10 ]; do sleep 0.05; done
fi
x=$(sed -n 's/.*"x":\([0-9]*\).*/\1/p' "row10.$i")
echo "{\"y\": $(( x * 10 ))}"
M
chmod +x mk10.sh
"$DJC" populate Dst10 --reserve-jobs --suppress-errors --make ./mk10.sh >pop10.out 2>pop10.err &
local pop=$!
for _ in $(seq 1 1200); do [ -e ready10 ] && break; nap 0.05; done
check "fetch_socket_cli: the make of key 2 has read" [ -e ready10 ]
echo '{"id": 9, "x": 9}' > src10b.jsonl
expect_out "fetch_socket_cli: another user adds a row it read" "inserted 1 row into Src10" djc insert Src10 src10b.jsonl
touch done10
wait $pop
check "fetch_socket_cli: populate: exit 1 (key 2 failed)" [ $? = 1 ]
expect_out "fetch_socket_cli: keys 1 and 3 made from what they read, with no database" \
	'{"id":1,"y":10}
{"id":3,"y":30}' djc fetch Dst10 --format json
check "fetch_socket_cli: the socket's rows are the database's, byte for byte" \
	test "$(cat row10.1 row10.3)" = "$("$DJC" fetch Src10 --where '{"id": [1, 3]}' --format json)"
check "fetch_socket_cli: exits: 0 through the socket, 2 for a non-ancestor, 1 for --format table and a text condition (their own database)" \
	test "$(tr '\n' ' ' < rc10.1)" = "0 2 1 1 "
check "fetch_socket_cli: the non-ancestor's message" grep -q '^djc: .*Other is not upstream of Dst10' other10.1
expect_out "fetch_socket_cli: key 2 read rows 2 and 3, then failed at commit" "2 true" \
	sh -c "echo \$(wc -l < later10) \$(\"\$DJC\" jobs Dst10 --status error --json | jq -r '.jobs[] | select(.id == 2) | .error_message | startswith(\"upstream changed while make ran: the rows of Src10\")')"
}
tcase fetch_socket_cli key_source

case_part_reads() {
# ---------------- reads of an ancestor's part tables (docs/parity.md)
# DataJoint's `(Analysis.Unit & key).fetch()` in the make of Summary ->
# Analysis. Ana${n}'s make gives key id the parts u = 1..id, amp = u; the
# make of Sum${n} (a Python make, serve and per key; a shell make's `djc
# fetch`) reads them by the key: key 1 also reads a part of a table that
# is not upstream (Load.Unit: refused); key 2 waits after its read while
# another user raises the amp of one of its part rows (raw SQL: a part's
# rows are not changed alone through djc): refused at commit; keys 3 and 4
# are made, total = the sum of the amps (+ 1000 when a Python make's reads
# went through the fetch socket). The shell make's reads by `djc fetch
# --format json` go through the socket (key 2's fails at commit), by
# --format csv to the database (not recorded).
cat > mk_ana.sh <<'M'
#!/bin/sh
cat >/dev/null
echo "{\"n\": $DJC_KEY_id}"
u=1
while [ "$u" -le "$DJC_KEY_id" ]; do
	echo "{\"_part\": \"Unit\", \"u\": $u, \"amp\": $u}"
	u=$((u + 1))
done
M
chmod +x mk_ana.sh
part_reads 11 serve "--make-serve python3 mkpart11.py" 0
part_reads 12 per_key "--make python3 mkpart12.py" 1000
part_reads 13 djc_fetch "--make ./mkpart13.sh" 0
expect_fail 2 "part_reads: djc fetch in a make's environment refuses a part of a non-ancestor" \
	"^djc: make of Sum11 may read only its ancestors and their part tables \(the tables it depends on through ->\): Load\.Unit is not upstream of Sum11$" \
	env DJC_TABLE=Sum11 DJC_KEY='{"id": 1}' "$DJC" fetch Load.Unit
expect_fail 2 "part_reads: ...and the target's own part" "Ana11\.Unit is not upstream of Ana11$" \
	env DJC_TABLE=Ana11 DJC_KEY='{"id": 1}' "$DJC" fetch Ana11.Unit
expect_out "part_reads: ...but reads an ancestor's part" '{"id":2,"u":1,"amp":101}
{"id":2,"u":2,"amp":2}' env DJC_TABLE=Sum11 DJC_KEY='{"id": 2}' "$DJC" fetch Ana11.Unit --key '{"id": 2}' --format json
}
# part_reads N LABEL "OPTIONS" PLUS: Rec$N, Ana$N with its parts, Sum$N made
# by OPTIONS (the program written here); PLUS: what the make adds to its
# totals when its reads went through the fetch socket
part_reads() {
local n=$1 label=$2 opt=$3 plus=$4
export PYTHONPATH="$ROOT/python"
cat > "pp$n.djc" <<P
Rec$n (manual)
    id : int32
    ---

Ana$n (computed)
    -> Rec$n
    ---
    n : int32

Ana$n.Unit (part)
    u : int32
    ---
    amp : int32

Sum$n (computed)
    -> Ana$n
    ---
    n_units : int32
    total : int32
P
expect_rc 0 "part_reads $label: declare" djc declare "pp$n.djc"
printf '{"id": %d}\n' 1 2 3 4 > "rec$n.jsonl"
expect_out "part_reads $label: insert" "inserted 4 rows into Rec$n" djc insert "Rec$n" "rec$n.jsonl"
expect_rc 0 "part_reads $label: make the masters and their parts" djc populate "Ana$n" --make ./mk_ana.sh
sed "s/@N@/$n/g" > "mkpart$n.py" <<'P'
import os, time
os.environ["DJC"] = "/bin/false"
import djc_make

def make(key, fetch):
    i = key["id"]
    units = fetch("Ana@N@.Unit", key)
    if i == 1:
        fetch("Load.Unit", key)          # a part of a table that is not upstream of Sum@N@: refused
    if i == 2:
        open("ready@N@", "w").close()
        while not os.path.exists("done@N@"):
            time.sleep(0.05)
    return {"n_units": len(units), "total": sum(u["amp"] for u in units) + 1000 * ("DJC_FETCH_SOCKET" in os.environ)}

djc_make.run(make)
P
sed "s/@N@/$n/g" > "mkpart$n.sh" <<'M'
#!/bin/bash
cat >/dev/null
# --format json: through the fetch socket (recorded, checked at commit);
# --format csv: the database itself, ancestors' parts allowed too
units=$("$DJC" fetch Ana@N@.Unit --key "$DJC_KEY" --format json) || exit 3
csv=$("$DJC" fetch Ana@N@.Unit --key "$DJC_KEY" --format csv | tail -n +2 | wc -l) || exit 4
if [ "$DJC_KEY_id" = 1 ]; then
	"$DJC" fetch Load.Unit --key "$DJC_KEY" --format json || exit 5
fi
if [ "$DJC_KEY_id" = 2 ]; then
	touch ready@N@
	while [ ! -e done@N@ ]; do sleep 0.05; done
fi
total=$(printf '%s\n' "$units" | jq -s 'map(.amp) | add')
echo "{\"n_units\": $csv, \"total\": $total}"
M
chmod +x "mkpart$n.sh"
# shellcheck disable=SC2086 # opt: the populate options, split
"$DJC" populate "Sum$n" --reserve-jobs --suppress-errors $opt >"poppart$n.out" 2>"poppart$n.err" &
local pop=$!
for _ in $(seq 1 1200); do [ -e "ready$n" ] && break; nap 0.05; done
check "part_reads $label: the make of key 2 has read" [ -e "ready$n" ]
local ut="__ana${n}__unit"   # Ana$n.Unit's SQL table
case $DJC_BACKEND in
sqlite) python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=30); c.execute(sys.argv[2]); c.commit()' \
	"${DJC_DATABASE_URL#sqlite:}" "UPDATE $ut SET amp = amp + 100 WHERE id = 2 AND u = 1" ;;
mysql) server_sql "UPDATE \`$DJC_DATABASE_SCHEMA\`.$ut SET amp = amp + 100 WHERE id = 2 AND u = 1" ;;
*) server_sql "UPDATE \"$DJC_DATABASE_SCHEMA\".$ut SET amp = amp + 100 WHERE id = 2 AND u = 1" ;;
esac
touch "done$n"
wait $pop
check "part_reads $label: populate: exit 1 (failed keys)" [ $? = 1 ]
expect_out "part_reads $label: the keys that read their parts, unchanged, are made from them" \
	"{\"id\":3,\"n_units\":3,\"total\":$((6 + plus))} {\"id\":4,\"n_units\":4,\"total\":$((10 + plus))}" \
	sh -c "\"\$DJC\" fetch Sum$n --format json | tr '\n' ' ' | sed 's/ \$//'"
expect_out "part_reads $label: a read of a non-ancestor's part failed its key" "true" \
	sh -c "\"\$DJC\" jobs Sum$n --status error --json | jq -r '.jobs[] | select(.id == 1) | [.error_message, .error_stack] | join(\" \") | contains(\"Load.Unit is not upstream of Sum$n\")'"
expect_out "part_reads $label: a part row changed after it was read failed its key at commit" "true" \
	sh -c "\"\$DJC\" jobs Sum$n --status error --json | jq -r '.jobs[] | select(.id == 2) | .error_message == \"upstream changed while make ran: the rows of Ana$n.Unit that make of Sum$n read (restricted by {\\\"id\\\":2}, 2 rows then, 2 now) are not the same at commit; nothing committed\"'"
}
tcase part_reads

case_pieces_heartbeat() {
# ---------------- values read in pieces while the lease heartbeat renews
# On PostgreSQL a large value comes in pieces over the worker's connection
# (docs/workers.md, "Large values"), which the lease heartbeat shares: a
# per-key program fetching 300 KB rows six times each in pieces of 1000
# bytes, a heartbeat every 25 ms (jobs.lease_timeout 0.1): every key is
# made (the
# heartbeat's statements wait for the pieces; run between them, they broke
# the connection). Elsewhere values are read whole: the same outcome.
printf 'Src11 (manual)\n    id : int32\n    ---\n    raw : bytes\n\nDst11 (computed)\n    -> Src11\n    ---\n    n : int32\n' > p11.djc
expect_rc 0 "pieces_heartbeat: declare" djc declare p11.djc
python3 -c '
import base64, json, random
r = random.Random(11)
for i in range(1, 7):
    print(json.dumps({"id": i, "raw": base64.b64encode(bytes(r.getrandbits(8) for _ in range(300000))).decode()}))' > src11.jsonl
expect_out "pieces_heartbeat: insert" "inserted 6 rows into Src11" djc insert Src11 src11.jsonl
cat > mk11.sh <<'M'
#!/bin/bash
cat >/dev/null
for k in 1 2 3 4 5 6; do "$DJC" fetch Src11 --key "$DJC_KEY" --format json > f11.$DJC_KEY_id || exit 1; done
echo "{\"n\": $(wc -c < f11.$DJC_KEY_id)}"
M
chmod +x mk11.sh
expect_rc 0 "pieces_heartbeat: populate made every key" env DJC_JOBS_LEASE_TIMEOUT=0.1 DJC_READ_PIECE=1000 \
	"$DJC" populate Dst11 --reserve-jobs --make ./mk11.sh
expect_out "pieces_heartbeat: each read its whole row" "6 1" \
	sh -c "\"\$DJC\" fetch Dst11 --format json | jq -s -c '[length, (map(.n) | unique | length)] | join(\" \")' | tr -d '\"'"
}
tcase pieces_heartbeat key_source

case_parents_ride() {
# ---------------- a key's parents' rows ride with it (docs/serve-protocol.md)
# A Python serve make (djc_make) reading its key's Srcpar row. djc sends a
# key's parents that the make read by the key for the key before: the
# first key of a program, and one after a key that read none, fetch over
# the pipe; the others take the rows sent with them. Key 3 reads its
# parent, which another user changes meanwhile (raw SQL: djc has no
# update): refused at commit. Key 4 does not read its parent, changed
# meanwhile too: made. Then keys 11-16 at jobs.reserve_batch 3 (keys sent
# ahead carry their parents too).
export PYTHONPATH="$ROOT/python"
printf 'Srcpar (manual)\n    id : int32\n    ---\n    x : int32\n    b : bytes\n\nDstpar (computed)\n    -> Srcpar\n    ---\n    y : int32\n' > par.djc
expect_rc 0 "parents: declare" "$DJC" declare par.djc
for i in 1 2 3 4 5 6 11 12 13 14 15 16; do printf '{"id": %d, "x": %d, "b": "YWJj"}\n' "$i" "$i"; done > srcpar.jsonl
expect_out "parents: insert" "inserted 12 rows into Srcpar" djc insert Srcpar srcpar.jsonl
cat > mkpar.py <<'P'
import os, time
os.environ["DJC"] = "/bin/false"
import djc_make

def make(key, fetch):
    i = key["id"]
    sent = "sent" if fetch.parents and "Srcpar" in fetch.parents else "none"
    if i != 4:
        row = fetch("Srcpar", key)[0]
    with open("paths", "a") as f:
        f.write("%d %s %s %s\n" % (i, sent, "unused" if i == 4 else "used", "rode" if "Srcpar" in fetch.used else "-"))
    if i in (3, 4):
        open("ready%d" % i, "w").close()
        while not os.path.exists("done%d" % i):
            time.sleep(0.05)
    if i == 4:
        return {"y": 0}
    return {"y": row["x"] * 10 + len(bytes(row["b"]))}

djc_make.run(make)
P
change() {  # ID: another user sets Srcpar's x of that row to 99
	case $DJC_BACKEND in
	sqlite) python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1], timeout=30); c.execute(sys.argv[2]); c.commit()' \
		"${DJC_DATABASE_URL#sqlite:}" "UPDATE srcpar SET x = 99 WHERE id = $1" ;;
	mysql) server_sql "UPDATE \`$DJC_DATABASE_SCHEMA\`.srcpar SET x = 99 WHERE id = $1" ;;
	*) server_sql "UPDATE \"$DJC_DATABASE_SCHEMA\".srcpar SET x = 99 WHERE id = $1" ;;
	esac
}
DJC_JOBS_RESERVE_BATCH=1 "$DJC" populate Dstpar --reserve-jobs --suppress-errors --where '{"id": [1, 2, 3, 4, 5, 6]}' \
	--make-serve python3 mkpar.py >poppar.out 2>poppar.err &
local pop=$! seen=""
for _ in $(seq 1 1200); do
	for i in 3 4; do
		case " $seen " in *" $i "*) continue ;; esac
		if [ -e "ready$i" ]; then change "$i"; touch "done$i"; seen="$seen $i"; fi
	done
	case $seen in *3*4* | *4*3*) break ;; esac
	nap 0.05
done
check "parents: keys 3 and 4 waited, their parents changed" [ -e done3 ] && [ -e done4 ]
wait $pop
check "parents: populate: exit 1 (a failed key)" [ $? = 1 ]
# each line: id, sent or none, used or unused, rode (the make's fetch was
# answered from the rows sent) or -
expect_out "parents: sent with a key iff the key before read them; used when sent" "ok 6" \
	awk 'NR == 1 { ok = $2 == "none" } NR > 1 { ok = ok && (($2 == "sent") == (prev == "used")) }
	     { ok = ok && (($4 == "rode") == ($2 == "sent" && $3 == "used")); prev = $3 }
	     END { print (ok ? "ok " : "NOT ok ") NR }' paths
expect_out "parents: the keys made, with their parents' values" '{"id":1,"y":13} {"id":2,"y":23} {"id":4,"y":0} {"id":5,"y":53} {"id":6,"y":63}' \
	sh -c "\"\$DJC\" fetch Dstpar --format json | tr '\n' ' ' | sed 's/ \$//'"
expect_out "parents: the parent a make used, changed meanwhile, failed its key at commit" "true" \
	sh -c "\"\$DJC\" jobs Dstpar --status error --json | jq -r '.jobs[] | select(.id == 3) | .error_message | startswith(\"upstream changed while make ran: the rows of Srcpar that make of Dstpar read\")'"
rm -f paths
expect_rc 0 "parents: keys sent ahead" env DJC_JOBS_RESERVE_BATCH=3 "$DJC" populate Dstpar --reserve-jobs \
	--where '{"id": [11, 12, 13, 14, 15, 16]}' --make-serve python3 mkpar.py
expect_out "parents: all but the program's first key took the rows sent with them" "1 5" \
	awk '$2 == "none" { n++ } $4 == "rode" { r++ } END { print n + 0, r + 0 }' paths
}
tcase parents_ride key_source

# djc_make's fetch(T, where="condition text"): the text as djc fetch
# --where takes it, through the serve pipe, the fetch socket and the
# `djc fetch` fallback (a JSON string was read as the text of a value
# alone: "a value alone is not a condition"); the read is checked at commit
case_where_text() {
export PYTHONPATH="$ROOT/python"
cat > wt.djc <<'P'
Wsrc (manual)
    id : int32
    ---
    name : varchar(16)
Wout (computed)
    -> Wsrc
    ---
    n : int32
P
expect_rc 0 "where_text: declare" djc declare wt.djc
printf '{"id": %d, "name": "n%d"}\n' 1 1 2 2 3 3 4 4 | djc insert Wsrc >/dev/null
cat > mkw.py <<'P'
import os, sys
if len(sys.argv) > 1:
    os.environ["DJC_FETCH_SOCKET"] = "/nonexistent/fetch"   # the djc fetch fallback
import djc_make

def make(key, fetch):
    rows = fetch("Wsrc", where="id <= %d AND name LIKE 'n%%'" % key["id"])
    return {"n": len(rows)}

djc_make.run(make)
P
local how
for how in serve socket cli; do
	djc delete Wout --yes >/dev/null
	case $how in
	serve) run "$DJC" populate Wout --make-serve python3 mkw.py ;;
	socket) run "$DJC" populate Wout --make python3 mkw.py ;;
	cli) run "$DJC" populate Wout --make python3 mkw.py x ;;
	esac
	check "where_text: $how: the 4 keys made (exit $RC: $OUT$ERR)" test "$RC/$OUT" = "0/Wout: 4 made, 0 errors, 0 skipped"
	expect_out "where_text: $how: each restricted by its text" "1,2,3,4" \
		sh -c '"$DJC" fetch Wout --format csv | tail -n +2 | sort -n | cut -d, -f2 | tr "\n" , | sed "s/,$//"'
done
}
tcase where_text

finish
