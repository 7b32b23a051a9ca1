#!/bin/bash
# test_core.sh - the core through the djc command: declare (idempotent,
# conflicts), tables, insert (file, stdin, --skip-duplicates), fetch in every
# format with restrictions, delete, a second process, every core type's round
# trip, and the usage surface (--help, --version, bad commands).
. "$ROOT/tests/cli/lib.sh"

cat > p.djc <<'P'
# the core pipeline: every tier, several parents
Subject (manual)   # the animals
    subject_id : int32          # one animal
    ---
    name : varchar(32)
    sex = 'U' : enum('F', 'M', 'U')

Rig (lookup)
    rig : varchar(8)
    ---
    room = null : varchar(16)

Session (manual)
    -> Subject
    session : int16
    ---
    -> Rig
    note = "" : varchar(64)     # free text
    index(rig)

Scan (imported)
    -> Session
    ---
    n_frames : int64

Stats (computed)
    -> Scan
    -> Rig
    ---
    mean : float64

Stats.Unit (part)
    unit : int16
    ---
    rate : float32
P

DECLARED='created Subject (manual) as subject
created Rig (lookup) as #rig
created Session (manual) as session
created Scan (imported) as _scan
created Stats (computed) as __stats
created Stats.Unit (part) as __stats__unit
created Scan jobs table ~~scan
created Stats jobs table ~~stats'
EXISTS='exists  Subject (manual) as subject
exists  Rig (lookup) as #rig
exists  Session (manual) as session
exists  Scan (imported) as _scan
exists  Stats (computed) as __stats
exists  Stats.Unit (part) as __stats__unit'
TABLES='Subject
Rig
Session
Scan
Stats
Stats.Unit'

# only declare creates the database (or schema): before it, tables says so
expect_fail 2 "tables before declare: no database yet" "^djc: no (SQLite database|schema) '.*' .*djc declare creates it" djc tables
expect_out "declare prints what it created" "$DECLARED" djc declare p.djc
check "declare wrote nothing on stderr" test -z "$ERR"
expect_out "declare again is a no-op" "$EXISTS" djc declare p.djc
expect_out "tables lists them in order" "$TABLES" djc tables

# the same definitions with other comments and spacing are the same tables
sed -e 's/# one animal/# renamed comment/' -e 's/name : varchar(32)/name:varchar( 32 )/' p.djc > p_same.djc
expect_out "comments and spacing are not changes" "$EXISTS" djc declare p_same.djc

# a changed definition: exit 2, one line naming the file, line and table; nothing created
sed -e 's/name : varchar(32)/name : varchar(33)/' p.djc > p_changed.djc
printf '\nExtra (manual)\n    x : int32\n    ---\n' >> p_changed.djc
expect_fail 2 "changed definition is refused" \
	'^djc: p_changed\.djc:2: table Subject is already declared with a different definition' djc declare p_changed.djc
check "changed definition: no stdout" test -z "$OUT"
expect_out "changed definition: nothing created" "$TABLES" djc tables
expect_fail 2 "changed definition: Extra does not exist" 'unknown table "Extra"' djc fetch Extra

# a second file extends the pipeline with tables that reference the first
cat > more.djc <<'P'
Note (manual)
    -> Subject
    note_id : int8
    ---
    text : varchar(100)
P
expect_out "declare a second file" "created Note (manual) as note" djc declare more.djc
TABLES="$TABLES
Note"
expect_out "tables after the second file" "$TABLES" djc tables

case_insert() {
# ------------------------------------------------------------ insert
cat > subjects.jsonl <<'R'
{"subject_id": 1, "name": "Ann", "sex": "F"}

{"subject_id": 3, "name": "Émile"}
{"name": "Bob, \"the\" cat", "subject_id": 2, "sex": "M"}
R
expect_out "insert from a file" "inserted 3 rows into Subject" djc insert Subject subjects.jsonl
ins_stdin() { printf '%s\n' "$2" | djc insert "$1" "${@:3}"; }
expect_out "insert from stdin" "inserted 2 rows into Rig" ins_stdin Rig '{"rig": "r1"}
{"rig": "r2", "room": "B 12"}'
expect_out "insert from stdin given as -" "inserted 1 row into Rig" ins_stdin Rig '{"rig": "r3", "room": null}' -
expect_out "insert into a table with two parents" "inserted 4 rows into Session" ins_stdin Session \
	'{"subject_id": 1, "session": 1, "rig": "r1", "note": "first"}
{"subject_id": 1, "session": 2, "rig": "r2"}
{"subject_id": 2, "session": 1, "rig": "r1", "note": "a, b"}
{"subject_id": 3, "session": 7, "rig": "r3"}'
expect_out "insert into the second file's table" "inserted 1 row into Note" ins_stdin Note '{"subject_id": 3, "note_id": 1, "text": "x"}'
expect_out "empty input inserts nothing" "inserted 0 rows into Subject" ins_stdin Subject ''
}
tcase insert

case_fetch() {
# ------------------------------------------------------------ fetch
expect_out "fetch --format table" '*subject_id  name            sex
-----------  --------------  ---
1            Ann             F
2            Bob, "the" cat  M
3            Émile           U
(3 rows)' djc fetch Subject
expect_out "fetch is table by default and --format table is the same" "$OUT" djc fetch Subject --format table
expect_out "fetch --format json" '{"subject_id":1,"name":"Ann","sex":"F"}
{"subject_id":2,"name":"Bob, \"the\" cat","sex":"M"}
{"subject_id":3,"name":"Émile","sex":"U"}' djc fetch Subject --format json
expect_out "fetch --format csv" 'subject_id,name,sex
1,Ann,F
2,"Bob, ""the"" cat",M
3,Émile,U' djc fetch Subject --format csv
expect_out "fetch table with NULL and a default" '*rig  room
----  ----
r1    NULL
r2    B 12
r3    NULL
(3 rows)' djc fetch Rig
expect_out "fetch csv: NULL is empty" 'rig,room
r1,
r2,B 12
r3,' djc fetch Rig --format csv
expect_out "fetch json: defaults filled" '{"subject_id":1,"session":1,"rig":"r1","note":"first"}
{"subject_id":1,"session":2,"rig":"r2","note":""}
{"subject_id":2,"session":1,"rig":"r1","note":"a, b"}
{"subject_id":3,"session":7,"rig":"r3","note":""}' djc fetch Session --format json
expect_out "fetch an empty table" '*subject_id  *session  n_frames
-----------  --------  --------
(0 rows)' djc fetch Scan
expect_out "fetch an empty table as json" '' djc fetch Scan --format json
expect_out "fetch an empty table as csv" 'subject_id,session,n_frames' djc fetch Scan --format csv
expect_out "fetch a table by its SQL name" '{"rig":"r2","room":"B 12"}' djc fetch '#rig' --where '{"rig": "r2"}' --format json

# restrictions
expect_out "where equality" '{"subject_id":2,"name":"Bob, \"the\" cat","sex":"M"}' \
	djc fetch Subject --where '{"subject_id": 2}' --format json
expect_out "where two attributes (AND)" '{"subject_id":1,"session":2,"rig":"r2","note":""}' \
	djc fetch Session --where '{"subject_id": 1, "rig": "r2"}' --format json
expect_out "where a list (IN)" '{"subject_id":1,"name":"Ann","sex":"F"}
{"subject_id":3,"name":"Émile","sex":"U"}' djc fetch Subject --where '{"subject_id": [1, 3, 99]}' --format json
expect_out "where an empty list matches nothing" '' djc fetch Subject --where '{"subject_id": []}' --format json
expect_out "where {\">\": 1}" '{"subject_id":2,"name":"Bob, \"the\" cat","sex":"M"}
{"subject_id":3,"name":"Émile","sex":"U"}' djc fetch Subject --where '{"subject_id": {">": 1}}' --format json
expect_out "where {\"<=\": 2} and {\"!=\": 1}" '{"subject_id":2,"name":"Bob, \"the\" cat","sex":"M"}' \
	djc fetch Subject --where '{"subject_id": {"<=": 2}, "name": {"!=": "Ann"}}' --format json
expect_out "where {\"not in\": [...]}" '{"subject_id":3,"name":"Émile","sex":"U"}' \
	djc fetch Subject --where '{"subject_id": {"not in": [1, 2]}}' --format json
expect_out "where null" '{"rig":"r1","room":null}
{"rig":"r3","room":null}' djc fetch Rig --where '{"room": null}' --format json
expect_out "where not null" '{"rig":"r2","room":"B 12"}' djc fetch Rig --where '{"room": {"!=": null}}' --format json
expect_out "where a list of objects (OR)" '{"subject_id":1,"session":1,"rig":"r1","note":"first"}
{"subject_id":3,"session":7,"rig":"r3","note":""}' \
	djc fetch Session --where '[{"subject_id": 1, "session": 1}, {"rig": "r3"}]' --format json
expect_out "where an empty list of objects matches nothing" '' djc fetch Session --where '[]' --format json
expect_out "where {} matches everything" 4 count Session '{}'
expect_out "where on a non-ASCII value" '{"subject_id":3,"name":"Émile","sex":"U"}' \
	djc fetch Subject --where '{"name": "Émile"}' --format json
expect_out "where with a table format" '*rig  room
----  ----
r2    B 12
(1 row)' djc fetch Rig --where '{"room": "B 12"}'
expect_fail 2 "where: unknown attribute" 'restriction names "nmae", which is not an attribute of Subject' \
	djc fetch Subject --where '{"nmae": "Ann"}'
expect_fail 2 "where: unknown operator" "unknown operator '~' in restriction on 'subject_id'" \
	djc fetch Subject --where '{"subject_id": {"~": 1}}'
expect_fail 2 "where: value of the wrong type" "restriction: attribute 'subject_id' \(int32\): expects an integer, got a string" \
	djc fetch Subject --where '{"subject_id": "one"}'

# --skip-duplicates
printf '{"subject_id": 2, "name": "Other"}\n{"subject_id": 4, "name": "Dee"}\n{"subject_id": 4, "name": "Dee again"}\n' > dup.jsonl
expect_fail 2 "duplicate without --skip-duplicates" \
	'^djc: dup\.jsonl:1: row \{"subject_id": 2\}: duplicate primary key in Subject \(use --skip-duplicates to skip it\)$' \
	djc insert Subject dup.jsonl
expect_out "nothing inserted by the refused insert" 3 count Subject
expect_out "--skip-duplicates inserts only the new row" "inserted 1 row into Subject" djc insert Subject dup.jsonl --skip-duplicates
expect_out "--skip-duplicates kept the first row of each key" '{"subject_id":2,"name":"Bob, \"the\" cat","sex":"M"}
{"subject_id":4,"name":"Dee","sex":"U"}' djc fetch Subject --where '{"subject_id": [2, 4]}' --format json
expect_out "--skip-duplicates before the table" "inserted 0 rows into Subject" djc insert --skip-duplicates Subject dup.jsonl

# --skip-duplicates skips duplicates only: a missing parent is still an error
# (MySQL's INSERT IGNORE would have hidden it)
n_before=$(count Session)
printf '{"subject_id": 1, "session": 901, "rig": "r1"}\n{"subject_id": 77, "session": 1, "rig": "r1"}\n' > orphan.jsonl
expect_fail 2 "--skip-duplicates still refuses a missing parent" \
	'^djc: orphan\.jsonl:2: row \{"subject_id": 77, "session": 1\}: no row of Subject with \{"subject_id": 77\} \(a parent of Session\): insert it first$' \
	djc insert Session orphan.jsonl --skip-duplicates
expect_out "nothing inserted by it" "$n_before" count Session
}
tcase fetch insert

case_delete() {
# ------------------------------------------------------------ delete
expect_out "delete an unreferenced row" "deleted 1 row from Subject" djc delete Subject --where '{"subject_id": 4}'
expect_out "deleted row is gone" 3 count Subject
expect_out "delete matching nothing" "deleted 0 rows from Subject" djc delete Subject --where '{"subject_id": 99}'
expect_fail 2 "delete --no-cascade of referenced rows is refused, naming the table whose rows reference them" \
	'^djc: cannot delete from Subject: 3 rows of Session reference them \(delete those first, or delete with cascade\)$' \
	djc delete Subject --no-cascade --where '{"subject_id": [1, 2]}'
check "refused delete: no stdout" test -z "$OUT"
expect_out "refused delete left every row" 3 count Subject
expect_fail 2 "delete --no-cascade of all rows of a referenced table is refused" 'cannot delete from Rig' djc delete Rig --no-cascade
expect_out "refused delete left Rig" 3 count Rig
expect_out "delete a child row" "deleted 1 row from Note" djc delete Note
expect_out "delete the child's sessions" "deleted 1 row from Session" djc delete Session --where '{"subject_id": 3}'
expect_out "then the parent row goes" "deleted 1 row from Subject" djc delete Subject --where '{"subject_id": 3}'
expect_out "delete with a list restriction" "deleted 1 row from Rig" djc delete Rig --where '{"rig": ["r3", "nope"]}'
expect_fail 2 "delete: bad restriction" 'restriction names "x", which is not an attribute of Rig' djc delete Rig --where '{"x": 1}'
expect_out "bad restriction deleted nothing" 2 count Rig
}
tcase delete fetch

case_second_process() {
# ------------------------------------------------------------ a second process elsewhere
mkdir -p "$T/elsewhere"
second() { (cd "$T/elsewhere" && "$DJC" "$@"); }
expect_out "a fresh process in another directory sees the pipeline" "$TABLES" second tables
expect_out "a fresh process fetches the rows" '{"subject_id":1,"name":"Ann","sex":"F"}
{"subject_id":2,"name":"Bob, \"the\" cat","sex":"M"}' second fetch Subject --format json
expect_out "a fresh process declares: all exist" "$EXISTS" second declare "$T/p.djc"
check "the other directory got no database file" test ! -e "$T/elsewhere/djc.db"
}
tcase second_process delete

case_core_types() {
# ------------------------------------------------------------ every core type round trip
cat > types.djc <<'P'
AllTypes (manual)
    id : int32
    ---
    i8 = null : int8
    i16 = null : int16
    i32 = null : int32
    i64 = null : int64
    u8 = null : uint8
    u16 = null : uint16
    u32 = null : uint32
    u64 = null : uint64
    f32 = null : float32
    f64 = null : float64
    b = null : bool
    dec = null : decimal(12,3)
    ch = null : char(6)
    vc = null : varchar(6)
    en = null : enum('red', 'green')
    d = null : date
    dt = null : datetime
    dt3 = null : datetime(3)
    uid = null : uuid
    js = null : json
    by = null : bytes
P
expect_out "declare the all-types table" "created AllTypes (manual) as all_types" djc declare types.djc
cat > types.jsonl <<'R'
{"id": 1, "i8": -128, "i16": -32768, "i32": -2147483648, "i64": -9223372036854775808, "u8": 0, "u16": 0, "u32": 0, "u64": 0, "f32": -0.5, "f64": 0.1, "b": false, "dec": "-123456789.125", "ch": "", "vc": "", "en": "red", "d": "0001-01-01", "dt": "1970-01-01 00:00:00", "dt3": "2024-02-29 23:59:59.999", "uid": "00000000-0000-0000-0000-000000000000", "js": {"b": [1, 2.5, "x", null, true], "a": {"nested": "yes"}}, "by": "AAEA/wA="}
{"id": 2, "i8": 127, "i16": 32767, "i32": 2147483647, "i64": 9223372036854775807, "u8": 255, "u16": 65535, "u32": 4294967295, "u64": "18446744073709551615", "f32": 16777217, "f64": 1e-300, "b": true, "dec": 0.5, "ch": "ab  ", "vc": "héllo€", "en": "green", "d": "2024-02-29", "dt": "2024-01-02T03:04:05", "dt3": "2024-01-02 03:04:05.5", "uid": "6BA7B8109DAD11D180B400C04FD430C8", "js": [1, "two", [3]], "by": ""}
{"id": 3, "u64": 9223372036854775807, "f32": 0.1, "f64": 9007199254740993.0, "dec": "99999999.999", "js": "just a string", "by": "AA=="}
{"id": 4, "f64": 5e-324, "js": 42}
{"id": 5, "f64": 1.7976931348623157e308}
{"id": 6, "f64": -0.30000000000000004}
{"id": 7, "f64": 123456789.12345679}
{"id": 8}
R
expect_out "insert every type" "inserted 8 rows into AllTypes" djc insert AllTypes types.jsonl
expect_out "every type round-trips exactly" '{"id":1,"i8":-128,"i16":-32768,"i32":-2147483648,"i64":-9223372036854775808,"u8":0,"u16":0,"u32":0,"u64":0,"f32":-0.5,"f64":0.1,"b":false,"dec":"-123456789.125","ch":"","vc":"","en":"red","d":"0001-01-01","dt":"1970-01-01 00:00:00","dt3":"2024-02-29 23:59:59.999","uid":"00000000-0000-0000-0000-000000000000","js":{"b":[1,2.5,"x",null,true],"a":{"nested":"yes"}},"by":"AAEA/wA="}
{"id":2,"i8":127,"i16":32767,"i32":2147483647,"i64":9223372036854775807,"u8":255,"u16":65535,"u32":4294967295,"u64":"18446744073709551615","f32":16777216,"f64":1e-300,"b":true,"dec":"0.500","ch":"ab","vc":"héllo€","en":"green","d":"2024-02-29","dt":"2024-01-02 03:04:05","dt3":"2024-01-02 03:04:05.500","uid":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","js":[1,"two",[3]],"by":""}
{"id":3,"i8":null,"i16":null,"i32":null,"i64":null,"u8":null,"u16":null,"u32":null,"u64":9223372036854775807,"f32":0.10000000149011612,"f64":9007199254740992,"b":null,"dec":"99999999.999","ch":null,"vc":null,"en":null,"d":null,"dt":null,"dt3":null,"uid":null,"js":"just a string","by":"AA=="}
{"id":4,"i8":null,"i16":null,"i32":null,"i64":null,"u8":null,"u16":null,"u32":null,"u64":null,"f32":null,"f64":5e-324,"b":null,"dec":null,"ch":null,"vc":null,"en":null,"d":null,"dt":null,"dt3":null,"uid":null,"js":42,"by":null}
{"id":5,"i8":null,"i16":null,"i32":null,"i64":null,"u8":null,"u16":null,"u32":null,"u64":null,"f32":null,"f64":1.7976931348623157e+308,"b":null,"dec":null,"ch":null,"vc":null,"en":null,"d":null,"dt":null,"dt3":null,"uid":null,"js":null,"by":null}
{"id":6,"i8":null,"i16":null,"i32":null,"i64":null,"u8":null,"u16":null,"u32":null,"u64":null,"f32":null,"f64":-0.30000000000000004,"b":null,"dec":null,"ch":null,"vc":null,"en":null,"d":null,"dt":null,"dt3":null,"uid":null,"js":null,"by":null}
{"id":7,"i8":null,"i16":null,"i32":null,"i64":null,"u8":null,"u16":null,"u32":null,"u64":null,"f32":null,"f64":123456789.12345679,"b":null,"dec":null,"ch":null,"vc":null,"en":null,"d":null,"dt":null,"dt3":null,"uid":null,"js":null,"by":null}
{"id":8,"i8":null,"i16":null,"i32":null,"i64":null,"u8":null,"u16":null,"u32":null,"u64":null,"f32":null,"f64":null,"b":null,"dec":null,"ch":null,"vc":null,"en":null,"d":null,"dt":null,"dt3":null,"uid":null,"js":null,"by":null}' \
	djc fetch AllTypes --format json
# what fetch printed goes back in unchanged (ids 1..8 become 11..18)
djc fetch AllTypes --format json | sed -e 's/^{"id":\([0-9]*\)/{"id":1\1/' > again.jsonl
expect_out "fetched rows insert again" "inserted 8 rows into AllTypes" djc insert AllTypes again.jsonl
fetch_again() { djc fetch AllTypes --where '{"id": {">": 10}}' --format json; }
expect_out "and fetch back the same" "$(cat again.jsonl)" fetch_again
# exact matches on typed values
expect_out "where on uint64 max" 2 count AllTypes '{"u64": "18446744073709551615"}'
expect_out "uint64 max in csv and table" 'id,u64
2,18446744073709551615
12,18446744073709551615' sh -c '"$DJC" fetch AllTypes --where "{\"u64\": [\"18446744073709551615\", 1]}" --format csv | cut -d, -f1,9'
expect_out "where on int64 min" 2 count AllTypes '{"i64": -9223372036854775808}'
expect_out "where on a float64" 2 count AllTypes '{"f64": 0.1}'
expect_out "where on a uuid in another spelling" 2 count AllTypes '{"uid": "6BA7B810-9DAD-11D1-80B4-00C04FD430C8"}'
expect_out "where on a datetime(3)" 2 count AllTypes '{"dt3": "2024-01-02 03:04:05.500"}'
expect_out "where on a decimal" 2 count AllTypes '{"dec": "0.5"}'
expect_out "where on a bool" 2 count AllTypes '{"b": true}'
expect_out "where on bytes with NUL" 2 count AllTypes '{"by": "AAEA/wA="}'
expect_out "where on a date" 2 count AllTypes '{"d": "2024-02-29"}'
expect_out "where on an enum" 2 count AllTypes '{"en": "green"}'
expect_out "where on a char with trailing spaces" 2 count AllTypes '{"ch": "ab   "}'
expect_out "where a json attribute is null" 8 count AllTypes '{"js": null}'
expect_out "where a json attribute is not null" 8 count AllTypes '{"js": {"!=": null}}'
expect_fail 2 "json attributes are not compared by value" \
	"^djc: json attribute 'js' can only be restricted to null or \{\"!=\": null\}$" djc fetch AllTypes --where '{"js": 42}'
cat > view.djc <<'P'
View (manual)
    id : int32
    ---
    b = null : bool
    f = null : float32
    by = null : bytes
    js = null : json
    s = null : varchar(60)
P
expect_out "declare a table to view" "created View (manual) as view" djc declare view.djc
expect_out "insert rows to view" "inserted 3 rows into View" ins_stdin View '{"id": 1, "b": true, "f": 0.25, "by": "AAEA/wA=", "js": {"a": [1, "x,y"]}, "s": "line\nbreak\ttab"}
{"id": 2, "b": false, "js": "q\"uote", "s": "Ünïcödé ok"}
{"id": 3, "s": "0123456789012345678901234567890123456789012345678901234567"}'
expect_out "table view of typed values" '*id  b      f     by        js               s
---  -----  ----  --------  ---------------  ------------------------------------------------
1    true   0.25  AAEA/wA=  {"a":[1,"x,y"]}  line break tab
2    false  NULL  NULL      "q\"uote"        Ünïcödé ok
3    NULL   NULL  NULL      NULL             012345678901234567890123456789012345678901234...
(3 rows)' djc fetch View
expect_out "csv view of typed values" 'id,b,f,by,js,s
1,true,0.25,AAEA/wA=,"{""a"":[1,""x,y""]}","line
break	tab"
2,false,,,"""q\""uote""",Ünïcödé ok
3,,,,,0123456789012345678901234567890123456789012345678901234567' djc fetch View --format csv
# -0.0 reads back as 0 on every backend (PostgreSQL kept the sign, SQLite
# and MariaDB did not), from insert and from a make's rows alike
cat > zero.djc <<'P'
Zero (manual)
    id : int32
    ---
    f4 : float32
    f8 : float64
P
expect_out "declare a table of floats" "created Zero (manual) as zero" djc declare zero.djc
expect_out "insert -0.0" "inserted 2 rows into Zero" ins_stdin Zero '{"id": 1, "f4": -0.0, "f8": -0.0}
{"id": 2, "f4": -0, "f8": -0e5}'
expect_out "-0.0 reads back as 0" 'id,f4,f8
1,0,0
2,0,0' djc fetch Zero --format csv
expect_out "and matches 0" 2 count Zero '{"f8": 0}'
expect_out "json view of typed values" '{"id":1,"b":true,"f":0.25,"by":"AAEA/wA=","js":{"a":[1,"x,y"]},"s":"line\nbreak\ttab"}
{"id":2,"b":false,"f":null,"by":null,"js":"q\"uote","s":"Ünïcödé ok"}
{"id":3,"b":null,"f":null,"by":null,"js":null,"s":"0123456789012345678901234567890123456789012345678901234567"}' djc fetch View --format json
}
tcase core_types second_process

case_usage() {
# ------------------------------------------------------------ usage
for cmd in declare tables insert fetch delete populate progress jobs config; do
	expect_rc 0 "djc $cmd --help exits 0" djc "$cmd" --help
	check "djc $cmd --help prints its usage" sh -c "printf '%s' \"\$1\" | grep -q '^usage: djc $cmd'" _ "$OUT"
done
expect_rc 0 "djc --help exits 0" djc --help
check "djc --help lists the commands" sh -c 'printf "%s" "$1" | grep -q "^  declare PIPELINE_FILE"' _ "$OUT"
expect_out "djc --version" "djc 0.1.0" djc --version
expect_fail 2 "unknown command" "^djc: unknown command 'frobnicate' \(see djc --help\)$" djc frobnicate
expect_fail 2 "unknown global option" '^djc: unknown option --frob \(see djc --help\)$' djc --frob tables
expect_fail 2 "unknown fetch option" '^djc: fetch: unknown or incomplete option --frob$' djc fetch Subject --frob
expect_fail 2 "unknown insert option" '^djc: insert: unknown option --frob$' djc insert Subject --frob
expect_fail 2 "unknown delete option" '^djc: delete: unknown or incomplete option --frob$' djc delete Subject --frob
expect_fail 2 "bad --format" "^djc: --format must be table, json, jsonl, csv or tsv, got 'xml'$" djc fetch Subject --format xml
expect_fail 2 "--where without a value" '^djc: fetch: unknown or incomplete option --where$' djc fetch Subject --where
expect_fail 2 "--db without a value" '^djc: --db needs a value' djc --db
expect_fail 2 "declare without a file" '^djc: declare takes one pipeline file' djc declare
expect_fail 2 "declare of a missing file" '^djc: cannot read nope\.djc: No such file or directory$' djc declare nope.djc
expect_fail 2 "insert of a missing file" '^djc: cannot read nope\.jsonl: No such file or directory$' djc insert Subject nope.jsonl
expect_fail 2 "fetch without a table" '^djc: fetch needs a TABLE' djc fetch
expect_fail 2 "fetch of two tables" '^djc: fetch takes one TABLE$' djc fetch Subject Rig
expect_fail 2 "fetch of an unknown table (and the nearest declared one)" '^djc: unknown table "Nope" \(did you mean Note\? declared tables: see djc tables\)$' djc fetch Nope
expect_fail 2 "tables takes no arguments" '^djc: tables takes no arguments$' djc tables extra
expect_rc 2 "no command at all" djc
check "no command prints the usage on stderr" sh -c 'printf "%s" "$1" | grep -q "^usage: djc"' _ "$ERR"
expect_out "nothing changed by all that" 2 count Subject
}
tcase usage core_types

case_text_keys() {
# ------------------------------------------- text keys compare byte for byte
# 'ab', 'ab ' and 'ab  ' are three keys on every backend (MariaDB's
# utf8mb4_bin would compare them equal: djc declares NO PAD collations)
cat > tags.djc <<'P'
Tag (manual)
    tag : varchar(16)
    ---
    n = 0 : int32

TagLen (computed)
    -> Tag
    ---
    len : int32
P
expect_rc 0 "declare Tag" djc declare tags.djc
printf '{"tag": "ab"}\n{"tag": "ab "}\n{"tag": "ab  "}\n' > tags.jsonl
expect_out "keys differing only in trailing spaces are distinct" "inserted 3 rows into Tag" djc insert Tag tags.jsonl
expect_out "a restriction matches one of them exactly" '{"tag":"ab ","n":0}' djc fetch Tag --where '{"tag": "ab "}' --format json
printf '{"tag": "ab "}\n{"tag": "ab   "}\n' > tags2.jsonl
expect_out "--skip-duplicates skips only the exact key" "inserted 1 row into Tag" djc insert Tag tags2.jsonl --skip-duplicates
cat > mk_len.sh <<'M'
#!/bin/sh
cat >/dev/null
printf '{"len": %d}\n' "${#DJC_KEY_tag}"
M
chmod +x mk_len.sh
expect_out "each of them is its own job" "TagLen: 4 made, 0 errors, 0 skipped" djc populate TagLen --reserve-jobs --make ./mk_len.sh
expect_out "and its own row" '{"tag":"ab","len":2}
{"tag":"ab ","len":3}
{"tag":"ab  ","len":4}
{"tag":"ab   ","len":5}' djc fetch TagLen --format json
}
tcase text_keys usage

case_unique_indexes() {
# ------------------------------------------- unique indexes
# a unique index violation is not a duplicate primary key: insert says so
# (and --skip-duplicates does not hide it); a make whose row repeats a
# unique value is an error, not "made by someone else"
cat > uniq.djc <<'P'
Animal (manual)
    name : varchar(16)
    ---
    code : varchar(8)
    unique index(code)

Badge (computed)
    -> Animal
    ---
    badge : varchar(8)
    unique index(badge)
P
expect_rc 0 "declare a unique index" djc declare uniq.djc
printf '{"name": "a", "code": "X1"}\n' | "$DJC" insert Animal >/dev/null
expect_fail 2 "a repeated unique value is named as such" '^djc: <stdin>:1: row \{"name": "b"\}: repeats a value of a unique index of Animal \(.*\)$' \
	sh -c 'printf "{\"name\": \"b\", \"code\": \"X1\"}\n" | "$1" insert Animal' _ "$DJC"
expect_fail 2 "...also with --skip-duplicates" 'repeats a value of a unique index of Animal' \
	sh -c 'printf "{\"name\": \"b\", \"code\": \"X1\"}\n" | "$1" insert Animal --skip-duplicates' _ "$DJC"
# a key holding the words of the "already committed" message, and a value
# holding MariaDB's primary-key index name, change nothing
printf '{"name": "b", "code": "X2"}\n{"name": "already exists", "code": "X3"}\n' | "$DJC" insert Animal >/dev/null
cat > mk_badge.sh <<'M'
#!/bin/sh
cat >/dev/null
echo '{"badge": "PRIMARY'"'"'"}'
M
chmod +x mk_badge.sh
for mode in direct reserved; do
	flag=; [ $mode = reserved ] && flag=--reserve-jobs
	"$DJC" delete Badge >/dev/null 2>&1
	run "$DJC" populate Badge $flag --suppress-errors --json --make ./mk_badge.sh
	check "populate ($mode): one make commits, the other two are errors, none skipped" \
		python3 -c 'import json,sys; r=json.loads(sys.argv[1]); sys.exit(not (r["success_count"]==1 and r["error_count"]==2 and r["skipped_count"]==0))' "$OUT"
	check "populate ($mode): the error names the unique index" sh -c 'printf "%s" "$1" | grep -q "repeats a value of a unique index"' _ "$OUT"
	expect_out "populate ($mode): one row" 1 count Badge
	[ $mode = reserved ] && expect_out "populate ($mode): nothing left pending or reserved" "Badge jobs: pending 0, reserved 0, success 0, error 2, ignore 0, total 2" djc jobs Badge
	"$DJC" jobs clear Badge --status error >/dev/null 2>&1
done
# a primary key whose constraint name was taken (PostgreSQL: <t>_pkey1)
printf 'APkey (manual)\n    a_id : int32\n    ---\n\nA (manual)\n    a_id : int32\n    ---\n' > pk.djc
expect_rc 0 "declare a_pkey and a" djc declare pk.djc
printf '{"a_id": 1}\n' | "$DJC" insert A >/dev/null
expect_fail 2 "a duplicate key is a duplicate primary key whatever its constraint's name" 'duplicate primary key in A' \
	sh -c 'printf "{\"a_id\": 1}\n" | "$1" insert A' _ "$DJC"
}
tcase unique_indexes text_keys

finish
