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

# sqlx SQL: run SQL in this test's schema with the backend's client (as
# test_schema.sh does)
sqlx() {
	local schema=$DJC_DATABASE_SCHEMA
	case $DJC_BACKEND in
	sqlite)   # python3's sqlite3 module: the sqlite3 program is not one the suite needs
		local f=${DJC_DATABASE_URL#sqlite:}
		[ -n "$schema" ] && f="${f%.db}.$schema.db"
		python3 - "$f" "$1" <<'PY' ;;
import sqlite3, sys
sqlite3.connect(sys.argv[1], isolation_level=None).executescript(sys.argv[2])
PY
	postgresql)
		psql "$DJC_DATABASE_URL" -qAt -v ON_ERROR_STOP=1 -c "SET search_path TO $schema; $1" ;;
	mysql) mariadb_cli -N -B "$schema" -e "$1" ;;
	esac
}

case_secondary() {
# ------------------------------------------------ a key_source restricted by a secondary attribute
# DataJoint's `key_source = Sess & 'rig="r1"'`: the restriction names any
# attribute of the tables the key source joins (key or secondary; their
# ancestors' when they lack it), applied inside the join, before the
# projection on the key-source attributes; every reader of the key source
# follows it (progress, refresh incl. stale removal, direct and reserved
# populate)
cat > sec.djc <<'P'
Subj (manual)
    subj : int32
    ---
    species : varchar(16)

Sess (manual)
    -> Subj
    sess : int32
    ---
    rig : varchar(8)
    note = null : varchar(16)

Par (lookup)
    par : int16
    ---
    k : float64
    note = null : varchar(16)

RigStats (computed)
    -> Sess
    ---
    v : int32
    key_source = {"rig": "r1"}          # a parent's secondary attribute

RigFit (computed)
    -> Sess
    -> Par
    ---
    v : int32
    key_source = Sess * Par & {"rig": "r1", "k": {">": 1}}   # the named tables' secondary attributes

RigText (computed)
    -> Sess
    -> Par
    ---
    v : int32
    key_source = Sess * Par & rig = "r2" and k < 1

RigQuoted (computed)
    -> Sess
    -> Par
    ---
    v : int32
    key_source = Sess * Par & 'rig = "r2" and k < 1'   # quoted, as DataJoint and djc fetch write it

RigList (computed)
    -> Sess
    ---
    v : int32
    key_source = [{"rig": "r1"}, 'subj = 1 and sess = 2']   # a list with condition text, as DataJoint writes it

RatSess (computed)
    -> Sess
    ---
    v : int32
    key_source = {"species": "rat", "sess": [1, 2]}   # a grandparent's secondary attribute, and a key

SubjCalc (computed)
    -> Subj
    ---
    v : int32

Deep (computed)
    -> SubjCalc
    ---
    v : int32
    key_source = Subj & {"species": "mouse"}   # a grandparent as the key source
P
expect_rc 0 "declare key sources restricted by secondary attributes" djc declare sec.djc
printf '{"subj": 1, "species": "rat"}\n{"subj": 2, "species": "mouse"}\n' > subj.jsonl
expect_out "insert subjects" "inserted 2 rows into Subj" djc insert Subj subj.jsonl
printf '{"subj": %d, "sess": %d, "rig": "%s"}\n' 1 1 r1 1 2 r2 2 1 r1 2 2 r2 2 3 r1 > sess.jsonl
expect_out "insert sessions" "inserted 5 rows into Sess" djc insert Sess sess.jsonl
printf '{"par": 1, "k": 0.5}\n{"par": 2, "k": 1.5}\n' > par.jsonl
expect_out "insert params" "inserted 2 rows into Par" djc insert Par par.jsonl

# the default key source, restricted by a parent's secondary attribute
expect_out "progress counts the keys whose parent matches" '{"table":"RigStats","remaining":3,"total":3}' \
	sh -c '"$DJC" progress RigStats --json | jq -c "{table, remaining, total}"'
expect_out "refresh adds only those" '{"table":"RigStats","added":3,"removed":0,"orphaned":0,"re_pended":0}' \
	djc jobs refresh RigStats --json
expect_out "... exactly those keys" "1/1 2/1 2/3" \
	sh -c '"$DJC" jobs RigStats --all --json | jq -r "[.jobs[] | \"\(.subj)/\(.sess)\"] | sort | join(\" \")"'
# (an UPDATE by SQL: DataJoint's update1; deleting the row would delete its jobs)
expect_rc 0 "a session's rig changes: it leaves the key source" sqlx "UPDATE sess SET rig = 'r2' WHERE subj = 2 AND sess = 3"
expect_out "progress follows" '{"table":"RigStats","remaining":2,"total":2}' \
	sh -c '"$DJC" progress RigStats --json | jq -c "{table, remaining, total}"'
nap 0.1
expect_out "refresh removes its pending job as stale" '{"table":"RigStats","added":0,"removed":1,"orphaned":0,"re_pended":0}' \
	djc jobs refresh RigStats --stale-timeout 0.05 --json
expect_out "... and keeps the others" "1/1 2/1" \
	sh -c '"$DJC" jobs RigStats --all --json | jq -r "[.jobs[] | \"\(.subj)/\(.sess)\"] | sort | join(\" \")"'
expect_out "populate --reserve-jobs makes only those" "RigStats: 2 made, 0 errors, 0 skipped" \
	djc populate RigStats --reserve-jobs --make ./mk.sh
expect_out "... rows of those keys" "1/1 2/1" \
	sh -c '"$DJC" fetch RigStats --format json | jq -r "\"\(.subj)/\(.sess)\"" | sort | tr "\n" " " | sed "s/ \$//"'

# a named join restricted by both tables' secondary attributes (JSON and condition text)
expect_out "progress of a restricted join" "RigFit: Completed 0 of 2 (0.0%), 2 remaining" djc progress RigFit
expect_out "populate direct makes only its keys" "RigFit: 2 made, 0 errors, 0 skipped" djc populate RigFit --make ./mk.sh
expect_out "... those" "1/1/2 2/1/2" \
	sh -c '"$DJC" fetch RigFit --format json | jq -r "\"\(.subj)/\(.sess)/\(.par)\"" | sort | tr "\n" " " | sed "s/ \$//"'
expect_out "condition text on a join's secondary attributes" '{"table":"RigText","added":3,"removed":0,"orphaned":0,"re_pended":0}' \
	djc jobs refresh RigText --json
expect_out "... those keys" "1/2/1 2/2/1 2/3/1" \
	sh -c '"$DJC" jobs RigText --all --json | jq -r "[.jobs[] | \"\(.subj)/\(.sess)/\(.par)\"] | sort | join(\" \")"'
# the same condition in quotes, as DataJoint writes key_source = Sess & 'rig="r1"'
# (before December 2026 the quotes were kept: "a value alone is not a condition")
expect_out "condition text in quotes" '{"table":"RigQuoted","added":3,"removed":0,"orphaned":0,"re_pended":0}' \
	djc jobs refresh RigQuoted --json
expect_out "... the same keys" "1/2/1 2/2/1 2/3/1" \
	sh -c '"$DJC" jobs RigQuoted --all --json | jq -r "[.jobs[] | \"\(.subj)/\(.sess)/\(.par)\"] | sort | join(\" \")"'
# a list of an object and condition text (README, "Restrictions"), the text
# in DataJoint's single quotes (before December 2026 refused: "key_source
# list items must be objects", and single quotes were not JSON)
expect_out "a key_source list with condition text" '{"table":"RigList","added":3,"removed":0,"orphaned":0,"re_pended":0}' \
	djc jobs refresh RigList --json
expect_out "... the OR of its items" "1/1 1/2 2/1" \
	sh -c '"$DJC" jobs RigList --all --json | jq -r "[.jobs[] | \"\(.subj)/\(.sess)\"] | sort | join(\" \")"'
expect_out "... progress agrees" '{"table":"RigList","remaining":3,"total":3}' \
	sh -c '"$DJC" progress RigList --json | jq -c "{table, remaining, total}"'
printf 'BadList (computed)\n    -> Sess\n    ---\n    v : int32\n    key_source = [{"rig": "r1"}, "nope = 1"]\n' > badlist.djc
expect_fail 2 "... an unknown name in its condition text is refused at declare" \
	'^djc: badlist\.djc:5: key_source of BadList: condition, column 1: "nope" is not an attribute of its tables \(Sess\)' \
	djc declare badlist.djc

# a grandparent's attribute (the default key source), a grandparent as the key source
expect_out "the default key source restricted by a grandparent's attribute" "RatSess: Completed 0 of 2 (0.0%), 2 remaining" \
	djc progress RatSess
expect_out "... populate --reserve-jobs makes those" "RatSess: 2 made, 0 errors, 0 skipped" \
	djc populate RatSess --reserve-jobs --make ./mk.sh
expect_out "... 1/1 1/2" "1/1 1/2" \
	sh -c '"$DJC" fetch RatSess --format json | jq -r "\"\(.subj)/\(.sess)\"" | sort | tr "\n" " " | sed "s/ \$//"'
expect_out "make SubjCalc" "SubjCalc: 2 made, 0 errors, 0 skipped" djc populate SubjCalc --make ./mk.sh
expect_out "key_source = Grandparent & {secondary}" '{"table":"Deep","remaining":1,"total":1}' \
	sh -c '"$DJC" progress Deep --json | jq -c "{table, remaining, total}"'
expect_out "... populate makes that key" "Deep: 1 made, 0 errors, 0 skipped" djc populate Deep --reserve-jobs --make ./mk.sh
expect_out "... subject 2" '{"subj":2,"v":1}' djc fetch Deep --format json

# djc alter changes the restriction
sed 's/key_source = {"rig": "r1"} .*/key_source = {"rig": "r2"}/' sec.djc > sec2.djc
expect_rc 0 "alter the restriction to another rig" djc alter sec2.djc
expect_out "progress follows the altered restriction" '{"table":"RigStats","remaining":3,"total":3}' \
	sh -c '"$DJC" progress RigStats --json | jq -c "{table, remaining, total}"'
sed 's/key_source = {"rig": "r1"} .*/key_source = {"rgi": "r2"}/' sec.djc > sec3.djc
expect_fail 2 "alter to an unknown attribute is refused" \
	'^djc: sec3\.djc:23: key_source of RigStats restricts "rgi", which is not an attribute of its tables \(Sess\) or their ancestors \(Subj\)$' \
	djc alter sec3.djc
expect_out "... and changes nothing" '{"table":"RigStats","remaining":3,"total":3}' \
	sh -c '"$DJC" progress RigStats --json | jq -c "{table, remaining, total}"'

# refused at declare: a name no joined table has (JSON and condition text), an ambiguous one
printf 'Unk (computed)\n    -> Sess\n    ---\n    v : int32\n    key_source = {"nope": 1}\n' > unk.djc
expect_fail 2 "an unknown attribute is refused at declare" \
	'^djc: unk\.djc:5: key_source of Unk restricts "nope", which is not an attribute of its tables \(Sess\) or their ancestors \(Subj\)$' \
	djc declare unk.djc
printf 'UnkJ (computed)\n    -> Sess\n    -> Par\n    ---\n    v : int32\n    key_source = Sess * Par & {"rig": "r1", "nope": 1}\n' > unkj.djc
expect_fail 2 "... in a join's restriction" \
	'^djc: unkj\.djc:6: key_source of UnkJ restricts "nope", which is not an attribute of its tables \(Sess, Par\) or their ancestors \(Subj\)$' \
	djc declare unkj.djc
printf 'UnkT (computed)\n    -> Sess\n    ---\n    v : int32\n    key_source = Sess & rig = "r1" and nope = 1\n' > unkt.djc
expect_fail 2 "... in condition text" \
	'^djc: unkt\.djc:5: key_source of UnkT: condition, column 16: "nope" is not an attribute of its tables \(Sess\) or their ancestors \(Subj\) ' \
	djc declare unkt.djc
printf 'Amb (computed)\n    -> Sess\n    -> Par\n    ---\n    v : int32\n    key_source = Sess * Par & {"note": "x"}\n' > amb.djc
expect_fail 2 "a secondary attribute of two joined tables is ambiguous" \
	"^djc: amb\.djc:6: key_source of Amb restricts 'note', which is ambiguous: Sess and Par both have it, as a secondary attribute that the join does not match$" \
	djc declare amb.djc
expect_out "... nothing declared" "0" sh -c '"$DJC" tables | grep -c -E "^(Unk|UnkJ|UnkT|Amb)$" || :'
}
tcase secondary

# Ancestors reached by two paths (two renamed references to one parent, a
# diamond through a renamed one): each path is its own row of the
# ancestor. Joined as one, their values were made equal and keys were
# lost without a word (4 pairs, 2 in the key source); a name two paths
# give is ambiguous, refused at declare; --where (refresh) takes the first
# path's, as documented, and loses no key.
case_two_paths() {
cat > tp.djc <<'P'
Tlab (manual)
    lab_id : int32
    ---
    country : varchar(8)
Tsubj (manual)
    -> Tlab
    subject_id : int32
    ---
    sex : varchar(1)
Tpair (computed)
    -> Tsubj.proj(lab_a='lab_id', subj_a='subject_id')
    -> Tsubj.proj(lab_b='lab_id', subj_b='subject_id')
    ---
    v : int32
P
expect_rc 0 "two_paths: declare" djc declare tp.djc
printf '{"lab_id": 1, "country": "US"}\n{"lab_id": 2, "country": "US"}\n' | djc insert Tlab >/dev/null
printf '{"lab_id": 1, "subject_id": 1, "sex": "f"}\n{"lab_id": 2, "subject_id": 1, "sex": "m"}\n' | djc insert Tsubj >/dev/null
expect_out "two_paths: 4 pairs" "Tpair: Completed 0 of 4" sh -c '"$DJC" progress Tpair | sed "s/ (.*//"'
expect_out "two_paths: a refresh by the first path's lab country adds every pair (both labs are US)" \
	"Tpair: added 4, removed 0, orphaned 0, re_pended 0" djc jobs refresh Tpair --where '{"country": "US"}'
expect_out "two_paths: by the first path's sex, the pairs whose first subject is f" 2 \
	sh -c '"$DJC" jobs clear Tpair --status pending >/dev/null; "$DJC" jobs refresh Tpair --where "{\"sex\": \"f\"}" >/dev/null; "$DJC" jobs Tpair --status pending | grep -c "\"lab_a\": 1, \"subj_a\": 1"'
cat > tp2.djc <<'P'
Tpair2 (computed)
    -> Tsubj.proj(lab_a='lab_id', subj_a='subject_id')
    -> Tsubj.proj(lab_b='lab_id', subj_b='subject_id')
    ---
    v : int32
    key_source = {"country": "US"}
P
expect_fail 2 "two_paths: a key source restricted by an ancestor's attribute two paths give is refused" \
	"^djc: tp2\.djc:6: key_source of Tpair2 restricts 'country', which is ambiguous: Tlab, which has it, is reached by two paths" \
	djc declare tp2.djc
sed 's/{"country": "US"}/{"sex": "f"}/; s/Tpair2/Tpair3/' tp2.djc > tp3.djc
expect_fail 2 "two_paths: so is one by a parent's attribute, the parent referenced twice" \
	"^djc: tp3\.djc:6: key_source of Tpair3 restricts 'sex', which is ambiguous: Tsubj, which has it, is reached by two paths" \
	djc declare tp3.djc
sed 's/{"country": "US"}/{"lab_a": 1}/; s/Tpair2/Tpair4/' tp2.djc > tp4.djc
expect_rc 0 "two_paths: by a key-source attribute it declares" djc declare tp4.djc
expect_out "two_paths: ... and holds the pairs of its first lab" "Tpair4: Completed 0 of 2" sh -c '"$DJC" progress Tpair4 | sed "s/ (.*//"'
expect_out "two_paths: none of the refused declared" "" sh -c '"$DJC" tables | grep -E "^Tpair[23]$"; true'
}
tcase two_paths

finish
