#!/bin/bash
# test_keysource.sh - the key source and how the jobs table follows it:
# a `key_source =` restriction in every path that reads the key source
# (progress, refresh, populate direct and reserved, stale removal), with one
# and two parents; re-pending of completed jobs (DataJoint's rule: only with
# keep_completed, only keys still in the key source); populate --priority on
# a fresh queue; `# comments` on `make =` and `key_source =` lines; the
# README's own pipeline; `-> master` in part tables.
. "$ROOT/tests/cli/lib.sh"

cat > mk.sh <<'M'
#!/bin/sh
cat >/dev/null
echo '{"v": 1}'
M
chmod +x mk.sh
cat > p.djc <<'P'
Session (manual)
    session_id : int32
    ---
    subject : varchar(16)

Param (lookup)
    param_id : int16
    ---
    k : float64

Stats (computed)
    -> Session
    ---
    v : int32
    key_source = {"session_id": {">": 2}}   # only the later sessions

Fit (computed)
    -> Session
    -> Param
    ---
    v : int32
    key_source = [{"session_id": [1, 5], "param_id": 1}, {"param_id": 2}]
P
expect_rc 0 "declare with key_source lines and a comment" djc declare p.djc
printf '{"session_id": %d, "subject": "s%d"}\n' 1 1 2 2 3 3 4 4 5 5 > s.jsonl
expect_out "insert sessions" "inserted 5 rows into Session" djc insert Session s.jsonl
printf '{"param_id": 1, "k": 0.5}\n{"param_id": 2, "k": 1.5}\n{"param_id": 3, "k": 2.5}\n' > prm.jsonl
expect_out "insert params" "inserted 3 rows into Param" djc insert Param prm.jsonl

# one parent
expect_out "progress follows key_source" "Stats: Completed 0 of 3 (0.0%), 3 remaining" djc progress Stats
expect_out "progress --json follows key_source" '{"table":"Stats","remaining":3,"total":3}' sh -c '"$DJC" progress Stats --json | jq -c "{table, remaining, total}"'
expect_out "refresh adds only key_source's keys" '{"table":"Stats","added":3,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Stats --json
expect_out "a second refresh adds nothing" '{"table":"Stats","added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Stats --json
expect_out "refresh with --where inside key_source" '{"table":"Stats","added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Stats --where '{"session_id": 1}' --json
expect_out "populate --reserve-jobs makes key_source's keys" "Stats: 3 made, 0 errors, 0 skipped" djc populate Stats --reserve-jobs --make ./mk.sh
expect_out "...exactly those" '{"session_id":3,"v":1}
{"session_id":4,"v":1}
{"session_id":5,"v":1}' djc fetch Stats --format json
expect_out "progress after populate" '{"table":"Stats","remaining":0,"total":3}' sh -c '"$DJC" progress Stats --json | jq -c "{table, remaining, total}"'
expect_out "stale removal keeps key_source's keys" '{"table":"Stats","added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Stats --stale-timeout 0.001 --json

# two parents, key_source an OR of restrictions on both
expect_out "progress of a two-parent key_source" '{"table":"Fit","remaining":7,"total":7}' sh -c '"$DJC" progress Fit --json | jq -c "{table, remaining, total}"'
expect_out "populate direct with a two-parent key_source" "Fit: 2 made, 0 errors, 0 skipped" djc populate Fit --where '{"param_id": 1}' --make ./mk.sh
expect_out "refresh of the rest" '{"table":"Fit","added":5,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Fit --json
expect_out "populate --reserve-jobs --processes 2 with a two-parent key_source" "Fit: 5 made, 0 errors, 0 skipped" djc populate Fit --reserve-jobs --processes 2 --make ./mk.sh
expect_out "Fit's keys" '1,1
1,2
2,2
3,2
4,2
5,1
5,2' sh -c '"$DJC" fetch Fit --format csv | tail -n +2 | cut -d, -f1,2 | sort'

# a make program reading both parents with its whole key (fetch --key)
cat > mk_key.sh <<'M'
#!/bin/sh
cat >/dev/null
s=$("$DJC" fetch Session --key "$DJC_KEY" --format json) || exit 3
p=$("$DJC" fetch Param --key "$DJC_KEY" --format json) || exit 4
[ "$(printf '%s\n' "$s" | grep -c .)" = 1 ] && [ "$(printf '%s\n' "$p" | grep -c .)" = 1 ] || exit 5
echo '{"v": 2}'
M
chmod +x mk_key.sh
expect_rc 0 "delete Fit's rows" djc delete Fit
expect_out "a two-parent make reads each parent with fetch --key" "Fit: 7 made, 0 errors, 0 skipped" env DJC="$DJC" "$DJC" populate Fit --make ./mk_key.sh
expect_out "fetch --key ignores the attributes the table lacks" '{"session_id":3,"subject":"s3"}' djc fetch Session --key '{"session_id": 3, "param_id": 2}' --format json
expect_fail 2 "fetch --where does not" 'param_id' djc fetch Session --where '{"session_id": 3, "param_id": 2}' --format json
expect_fail 2 "fetch --key sharing nothing with the table" '^djc: key shares no attribute with Session$' djc fetch Session --key '{"param_id": 2}'
expect_fail 2 "fetch --key with a value of the wrong type" 'session_id' djc fetch Session --key '{"session_id": "three"}'
expect_fail 2 "fetch --key and --where together" '^djc: fetch takes --where or --key, not both$' djc fetch Session --key '{"session_id": 3}' --where '{"session_id": 3}'
printf 'Two (computed)\n    -> Session\n    ---\n    v : int32\n    key_source = {"session_id": 1}\n    key_source = {"session_id": 2}\n' > two.djc
expect_fail 2 "a second key_source line" "^djc: two\.djc:6: second 'key_source =' line in table Two$" djc declare two.djc

case_repending() {
# ------------------------------------------------ re-pending completed jobs
cat > q.djc <<'P'
Src (manual)
    src_id : int32
    ---

Out (computed)
    -> Src
    ---
    v : int32
P
expect_rc 0 "declare Src/Out" djc declare q.djc
printf '{"src_id": %d}\n' 1 2 3 > src.jsonl
expect_out "insert Src" "inserted 3 rows into Src" djc insert Src src.jsonl
export DJC_JOBS_KEEP_COMPLETED=true
expect_out "populate keeping completed jobs" "Out: 3 made, 0 errors, 0 skipped" djc populate Out --reserve-jobs --make ./mk.sh
expect_rc 0 "delete one computed row" djc delete Out --where '{"src_id": 1}'
expect_out "its job is re-pended" '{"table":"Out","added":0,"removed":0,"orphaned":0,"re_pended":1}' djc jobs refresh Out --json
expect_out "and made again" "Out: 1 made, 0 errors, 0 skipped" djc populate Out --reserve-jobs --make ./mk.sh
expect_rc 0 "delete another computed row" djc delete Out --where '{"src_id": 2}'
expect_rc 0 "...and its upstream row: the key leaves the key source" djc delete Src --where '{"src_id": 2}'
expect_out "a key gone from the key source is not re-pended" '{"table":"Out","added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Out --json
expect_out "populate finds nothing to make (and no error)" "Out: 0 made, 0 errors, 0 skipped" djc populate Out --reserve-jobs --make ./mk.sh
expect_out "a refresh restricted elsewhere does not re-pend" '{"table":"Out","added":0,"removed":0,"orphaned":0,"re_pended":0}' sh -c '"$DJC" delete Out --where "{\"src_id\": 3}" >/dev/null && "$DJC" jobs refresh Out --where "{\"src_id\": 1}" --json'
export DJC_JOBS_KEEP_COMPLETED=false
expect_out "without keep_completed nothing is re-pended" '{"table":"Out","added":0,"removed":0,"orphaned":0,"re_pended":0}' djc jobs refresh Out --json
unset DJC_JOBS_KEEP_COMPLETED
}
tcase repending

case_priority_fresh() {
# ------------------------------------------------ populate --priority on a fresh queue
cat > r.djc <<'P'
Job (manual)
    job_id : int32
    ---

Done (computed)
    -> Job
    ---
    v : int32
P
expect_rc 0 "declare Job/Done" djc declare r.djc
printf '{"job_id": %d}\n' 1 2 3 > j.jsonl
expect_out "insert jobs" "inserted 3 rows into Job" djc insert Job j.jsonl
expect_out "populate --priority 3 adds its keys with priority 3 and makes them" "Done: 3 made, 0 errors, 0 skipped" djc populate Done --reserve-jobs --priority 3 --make ./mk.sh
printf '{"job_id": %d}\n' 4 5 > j2.jsonl
expect_out "insert more" "inserted 2 rows into Job" djc insert Job j2.jsonl
expect_rc 0 "refresh at the default priority (5)" djc jobs refresh Done
expect_out "populate --priority 3 --no-refresh leaves priority-5 jobs" "Done: 0 made, 0 errors, 0 skipped" djc populate Done --reserve-jobs --priority 3 --no-refresh --make ./mk.sh
expect_out "populate --priority 5 makes them" "Done: 2 made, 0 errors, 0 skipped" djc populate Done --reserve-jobs --priority 5 --make ./mk.sh
}
tcase priority_fresh repending

case_comments() {
# ------------------------------------------------ comments, the README pipeline, -> master
cat > args.sh <<'M'
#!/bin/sh
cat >/dev/null
printf '%s|' "$@" > "$T/args.$DJC_KEY_src_id"
echo '{"v": 1}'
M
chmod +x args.sh
cat > c.djc <<'P'
Cmt (computed)
    -> Src
    ---
    v : int32
    make = ./args.sh a#b '# quoted' "it's"   # the table's make program, with a comment
P
expect_rc 0 "declare a make line with a trailing comment" djc declare c.djc
expect_out "populate by the make line" "Cmt: 2 made, 0 errors, 0 skipped" djc populate Cmt
check "the comment is not passed, quoted and inner # are" [ "$(cat args.1)" = "a#b|# quoted|it's|" ]
printf 'Bad (computed)\n    -> Src\n    ---\n    v : int32\n    key_source = {"src_id": 1} trailing\n' > bad.djc
expect_fail 2 "text after key_source's JSON that is not a comment" '^djc: bad\.djc:5: key_source must be a JSON restriction object' djc declare bad.djc

# the pipeline shown in README.md declares as printed (test_readme checks
# that the README shows examples/first/pipeline.djc exactly)
cp "$ROOT/examples/first/pipeline.djc" readme.djc
check "the README's pipeline was extracted" grep -q 'SessionStats (computed)' readme.djc
RS="${DJC_DATABASE_SCHEMA:-t}_readme"
expect_rc 0 "the README's pipeline declares" djc --schema "$RS" declare readme.djc
expect_out "...both of its tables" "Session
SessionStats" djc --schema "$RS" tables

cat > parts.djc <<'P'
Rec (manual)
    rec_id : int32
    ---

Seg (computed)
    -> Rec
    ---
    n : int32

Seg.Piece (part)
    -> master
    piece : int16
    ---
    w : float64

Seg.Other (part)
    -> Seg
    other : int16
    ---
P
expect_out "declare parts with '-> master' and '-> Master'" "created Rec (manual) as rec
created Seg (computed) as __seg
created Seg.Piece (part) as __seg__piece
created Seg.Other (part) as __seg__other
created Seg jobs table ~~seg" sh -c '"$DJC" declare parts.djc | grep "^created"'
printf 'Rec2 (manual)\n    rec_id : int32\n    ---\n\nSeg2 (computed)\n    -> Rec2\n    ---\n    n : int32\n\nSeg2.P (part)\n    -> master\n    -> master\n    p : int16\n    ---\n' > twice.djc
expect_fail 2 "'-> master' twice" '^djc: twice\.djc:12: part table Seg2\.P refers to its master twice$' djc declare twice.djc
printf 'Rec3 (manual)\n    rec_id : int32\n    ---\n\nSeg3 (computed)\n    -> Rec3\n    ---\n    n : int32\n\nSeg3.P (part)\n    p : int16\n    ---\n    -> master\n' > below.djc
expect_fail 2 "'-> master' below ---" "^djc: below\.djc:13: '-> master' in part table Seg3\.P belongs above '---'" djc declare below.djc
}
tcase comments priority_fresh

case_every_key() {
# ------------------------------------------------ every kind of key through the jobs table
# a key of numbers, times and text: each claimed, made once, committed
# under its own values; by populate one job per claim, and by a worker in
# batches (test_jobs_core's test_commit_next_kinds proves that a commit's
# own claim, on MariaDB a compound statement, takes such keys); mk.sh
# (above) makes each
cat > kinds.djc <<'P'
Kinds (manual)
    i8 : int8
    u64 : uint64
    dec : decimal(12,3)
    d : date
    dt : datetime(3)
    b : bool
    s : varchar(20)
    ---

KindMade (computed)
    -> Kinds
    ---
    v : int32
P
expect_rc 0 "declare a key of every kind" djc declare kinds.djc
cat > kinds.jsonl <<'J'
{"i8": -128, "u64": "18446744073709551615", "dec": "-123456789.125", "d": "2024-02-29", "dt": "2024-01-02 03:04:05.500", "b": true, "s": "Ünïcode 'q'"}
{"i8": 127, "u64": 0, "dec": "0.001", "d": "1970-01-01", "dt": "1999-12-31 23:59:59.999", "b": false, "s": "a"}
{"i8": 0, "u64": 9007199254740993, "dec": "999999999.999", "d": "2038-01-19", "dt": "2038-01-19 03:14:08.000", "b": true, "s": "A"}
{"i8": 1, "u64": 1, "dec": "1.000", "d": "2000-01-01", "dt": "2000-01-01 00:00:00.001", "b": false, "s": "a "}
J
expect_out "insert four keys" "inserted 4 rows into Kinds" djc insert Kinds kinds.jsonl
expect_out "populate --reserve-jobs makes every kind of key" "KindMade: 4 made, 0 errors, 0 skipped" djc populate KindMade --reserve-jobs --make ./mk.sh
expect_out "... each under its own key" "$(djc fetch Kinds --format json | sed 's/}$/,"v":1}/')" djc fetch KindMade --format json
expect_out "... no job left" '{"table":"KindMade","remaining":0,"total":4}' sh -c '"$DJC" progress KindMade --json | jq -c "{table, remaining, total}"'
expect_out "delete the made rows" "deleted 4 rows from KindMade" djc delete KindMade
expect_out "a worker in batches makes them again" "worker: 4 made, 0 errors, 0 skipped; stopped: empty (1)" sh -c 'DJC_JOBS_RESERVE_BATCH=3 "$DJC" worker KindMade --until-empty --make ./mk.sh 2>&1 | tail -1'
expect_out "... each under its own key" "$(djc fetch Kinds --format json | sed 's/}$/,"v":1}/')" djc fetch KindMade --format json
}
tcase every_key comments

finish
