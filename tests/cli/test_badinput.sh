#!/bin/bash
# test_badinput.sh - bad input as a new user writes it. Each case: exit status
# 2, exactly one line on stderr naming the problem and where (file:line in a
# pipeline, line and key of a row), and nothing written.
. "$ROOT/tests/cli/lib.sh"

rows() { count "$@" || true; }   # grep -c exits 1 on 0 rows
# nothing declared: no table, or (servers) not even the schema, which a
# failed first declare removes again
no_tables() { OUT=$("$DJC" tables 2>&1); [ -z "$OUT" ] || printf '%s\n' "$OUT" | grep -q "^djc: no schema '"; }

case_pipeline_files() {
# ------------------------------------------------------------ pipeline files
# each bad file also holds a good table above the bad one: nothing at all is created
bad_pipe() {  # file-name line-of-bad-text
	{ printf 'Good (manual)\n    good_id : int32\n    ---\n\n'; cat; } > "$1"
}
bad_pipe typo.djc <<'P'
Session (manual)
    session_id : int32
    ---
    n_spikes : int33
P
expect_fail 2 "type typo" "^djc: typo\.djc:8: unknown type 'int33' for attribute 'n_spikes'" djc declare typo.djc
check "type typo: no stdout" test -z "$OUT"
check "type typo: nothing created" no_tables

bad_pipe nosep.djc <<'P'
Session (manual)
    session_id : int32
    subject : varchar(64)
P
expect_fail 2 "missing ---" "^djc: nosep\.djc:5: table Session has no '---' line separating the primary key" djc declare nosep.djc
check "missing ---: nothing created" no_tables

bad_pipe parent.djc <<'P'
Session (manual)
    -> Subjcet
    session_id : int32
    ---
P
expect_fail 2 "unknown parent" "^djc: parent\.djc:6: unknown parent table 'Subjcet'" djc declare parent.djc
check "unknown parent: nothing created" no_tables

bad_pipe dupattr.djc <<'P'
Session (manual)
    session_id : int32
    ---
    rate : float64
    rate : float32
P
expect_fail 2 "duplicate attribute" "^djc: dupattr\.djc:9: duplicate attribute 'rate' in table Session$" djc declare dupattr.djc
check "duplicate attribute: nothing created" no_tables

bad_pipe dupkey.djc <<'P'
Session (manual)
    -> Good
    good_id : int32
    ---
P
expect_fail 2 "attribute duplicating a parent's key" "^djc: dupkey\.djc:7: duplicate attribute 'good_id' in table Session$" djc declare dupkey.djc

bad_pipe nullkey.djc <<'P'
Session (manual)
    session_id = null : int32
    ---
P
expect_fail 2 "nullable primary key" "^djc: nullkey\.djc:6: primary key attribute 'session_id' cannot be nullable$" djc declare nullkey.djc

bad_pipe jsonkey.djc <<'P'
Session (manual)
    session_id : int32
    params : json
    ---
P
expect_fail 2 "json in the primary key" "^djc: jsonkey\.djc:7: attribute 'params' of type json cannot be in the primary key" djc declare jsonkey.djc
check "json key: nothing created" no_tables

bad_pipe baddef.djc <<'P'
Session (manual)
    session_id : int32
    ---
    level = 1000 : uint8
P
expect_fail 2 "default out of range" "^djc: baddef\.djc:8: bad default for 'level': attribute 'level' \(uint8\): 1000 is out of range 0\.\.255$" \
	djc declare baddef.djc

bad_pipe badenum.djc <<'P'
Session (manual)
    session_id : int32
    ---
    kind : enum(awake, asleep)
P
expect_fail 2 "unquoted enum labels" "^djc: badenum\.djc:8: enum labels of attribute 'kind' must be quoted" djc declare badenum.djc

bad_pipe quote.djc <<'P'
Session'; DROP TABLE good; -- (manual)
    session_id : int32
    ---
P
expect_fail 2 "table name with a quote and semicolons" \
	"^djc: quote\.djc:5: invalid table name 'Session'; DROP TABLE good; --' \(letters and digits, starting with a letter\)$" djc declare quote.djc
bad_pipe semi.djc <<'P'
Session;x (manual)
    session_id : int32
    ---
P
expect_fail 2 "table name with a semicolon" "^djc: semi\.djc:5: invalid table name 'Session;x'" djc declare semi.djc
bad_pipe dq.djc <<'P'
Ses"sion (manual)
    session_id : int32
    ---
P
expect_fail 2 "table name with a double quote" "^djc: dq\.djc:5: invalid table name 'Ses\"sion'" djc declare dq.djc

printf '  stray : int32\nSession (manual)\n    session_id : int32\n    ---\n' > indent.djc
expect_fail 2 "indented line outside a table" "^djc: indent\.djc:1: indented line outside any table" djc declare indent.djc

bad_pipe tier.djc <<'P'
Session (manaul)
    session_id : int32
    ---
P
expect_fail 2 "unknown tier" "^djc: tier\.djc:5: unknown tier 'manaul' \(expected manual, lookup, imported, computed or part\)$" djc declare tier.djc

bad_pipe utf8.djc <<'P'
Session (manual)
    session_id : int32
    ---
P
printf '    name : varchar(8)   # caf\351\n' >> utf8.djc
expect_fail 2 "invalid UTF-8 in a pipeline" "^djc: utf8\.djc:8: not valid UTF-8 text$" djc declare utf8.djc

bad_pipe self.djc <<'P'
Session (manual)
    -> Session
    session_id : int32
    ---
P
expect_fail 2 "table referencing itself" "^djc: self\.djc:6: table Session cannot reference itself$" djc declare self.djc

bad_pipe case.djc <<'P'
good (manual)
    x : int32
    ---
P
expect_fail 2 "two names for one SQL table" "^djc: case\.djc:5: table good has the same SQL name 'good' as table Good$" djc declare case.djc

bad_pipe nokey.djc <<'P'
Stats (computed)
    stat_id : int32
    ---
P
expect_fail 2 "computed table without a parent in its key" "^djc: nokey\.djc:5: computed table Stats needs a parent in its primary key" djc declare nokey.djc
printf '# only comments\n\n' > empty.djc
expect_fail 2 "a file with no tables" "^djc: empty\.djc: no tables declared" djc declare empty.djc
printf 'A (manual)\n    a : int32\n    ---\n\0\n' > nul.djc
expect_fail 2 "a NUL byte in a pipeline" "^djc: nul\.djc: contains a NUL byte$" djc declare nul.djc
check "after all the bad pipelines: nothing created" no_tables
# a bad pipeline declared into a schema that does not exist yet leaves none
# behind: the next command still says the schema is missing (a SQLite
# file, as djc_discard_created says, stays)
if [ "$DJC_BACKEND" != sqlite ]; then
	fresh="badnew_$$"
	expect_fail 2 "a bad pipeline into a new schema" "^djc: typo\.djc:8: unknown type 'int33'" djc --schema "$fresh" declare typo.djc
	expect_fail 2 "...leaves no schema behind" "^djc: no schema '$fresh' on " djc --schema "$fresh" tables
fi
}
tcase pipeline_files

case_good_pipeline() {
# ------------------------------------------------------------ the good pipeline
cat > p.djc <<'P'
Subject (manual)
    subject_id : int32
    ---
    name : varchar(8)
    level = 0 : uint8
    born = null : date

Session (manual)
    -> Subject
    session : int16
    ---
    blob = null : bytes
    info = null : json

Stats (computed)
    -> Session
    ---
    mean : float64
P
expect_rc 0 "declare the good pipeline" djc declare p.djc
printf '{"subject_id": 1, "name": "Ann"}\n' > seed.jsonl
expect_out "seed one subject" "inserted 1 row into Subject" djc insert Subject seed.jsonl

# the same definition again with a bad table after it: nothing new
cat p.djc > grow.djc
printf '\nMore (manual)\n    m : int32\n    ---\n    x : int33\n' >> grow.djc
expect_fail 2 "good tables then a bad one" "^djc: grow\.djc:23: unknown type 'int33'" djc declare grow.djc
expect_fail 2 "the bad file created nothing" 'unknown table "More"' djc fetch More
}
tcase good_pipeline pipeline_files

case_rows() {
# ------------------------------------------------------------ rows
# every bad file: two good rows, then the bad one on line 3; nothing is inserted
bad_rows() {  # file bad-line
	printf '{"subject_id": 10, "name": "Bea"}\n{"subject_id": 11, "name": "Cid"}\n%s\n{"subject_id": 12, "name": "Dan"}\n' "$2" > "$1"
}
rows_unchanged() { [ "$(count Subject)" = 1 ]; }

bad_rows wrongtype.jsonl '{"subject_id": 13, "name": 42}'
expect_fail 2 "row with a wrong type" \
	"^djc: wrongtype\.jsonl:3: row \{\"subject_id\": 13\}: attribute 'name' \(varchar\(8\)\): expects a string, got an integer$" \
	djc insert Subject wrongtype.jsonl
check "wrong type: no stdout" test -z "$OUT"
check "wrong type: nothing inserted" rows_unchanged
bad_rows wrongkey.jsonl '{"subject_id": "13", "name": "Eve"}'
expect_fail 2 "row with a key of the wrong type" \
	"^djc: wrongkey\.jsonl:3: row \{\"subject_id\": \"13\"\}: attribute 'subject_id' \(int32\): expects an integer, got a string$" \
	djc insert Subject wrongkey.jsonl
check "wrong key type: nothing inserted" rows_unchanged
bad_rows float.jsonl '{"subject_id": 13.5, "name": "Eve"}'
expect_fail 2 "row with a fractional integer" "^djc: float\.jsonl:3: row \{\"subject_id\": 13\.5\}: attribute 'subject_id' \(int32\): expects an integer, got a number$" \
	djc insert Subject float.jsonl
bad_rows nokey.jsonl '{"name": "Eve"}'
expect_fail 2 "row missing a key attribute" "^djc: nokey\.jsonl:3: row \{\}: missing primary key attribute 'subject_id' of table Subject$" \
	djc insert Subject nokey.jsonl
check "missing key: nothing inserted" rows_unchanged
bad_rows noattr.jsonl '{"subject_id": 13}'
expect_fail 2 "row missing a required attribute" "^djc: noattr\.jsonl:3: row \{\"subject_id\": 13\}: missing attribute 'name' of table Subject$" \
	djc insert Subject noattr.jsonl
bad_rows unknown.jsonl '{"subject_id": 13, "name": "Eve", "nmae": "Eve"}'
expect_fail 2 "row with an unknown attribute" "^djc: unknown\.jsonl:3: row \{\"subject_id\": 13\}: unknown attribute \"nmae\" for table Subject$" \
	djc insert Subject unknown.jsonl
check "unknown attribute: nothing inserted" rows_unchanged
bad_rows malformed.jsonl '{"subject_id": 13, "name": "Eve"'
expect_fail 2 "malformed JSON in a row" "^djc: malformed\.jsonl:3: malformed JSON \(column [0-9]+\): " djc insert Subject malformed.jsonl
check "malformed JSON: nothing inserted" rows_unchanged
bad_rows notobj.jsonl '[13, "Eve"]'
expect_fail 2 "a row that is not an object" "^djc: notobj\.jsonl:3: expected a JSON object$" djc insert Subject notobj.jsonl
bad_rows dupname.jsonl '{"subject_id": 13, "name": "Eve", "name": "Eva"}'
expect_fail 2 "an attribute twice in a row" "^djc: dupname\.jsonl:3: malformed JSON \(column [0-9]+\): duplicate object key" djc insert Subject dupname.jsonl
bad_rows nan.jsonl '{"subject_id": 13, "name": "Eve", "level": NaN}'
expect_fail 2 "NaN in a row" "^djc: nan\.jsonl:3: malformed JSON" djc insert Subject nan.jsonl
for v in -1 256 1e3; do
	bad_rows range.jsonl "{\"subject_id\": 13, \"name\": \"Eve\", \"level\": $v}"
	expect_fail 2 "uint8 out of range: $v" "^djc: range\.jsonl:3: row \{\"subject_id\": 13\}: attribute 'level' \(uint8\): (-1|256|1000) is out of range 0\.\.255$" \
		djc insert Subject range.jsonl
done
bad_rows range32.jsonl '{"subject_id": 2147483648, "name": "Eve"}'
expect_fail 2 "int32 key out of range" \
	"^djc: range32\.jsonl:3: row \{\"subject_id\": 2147483648\}: attribute 'subject_id' \(int32\): 2147483648 is out of range -2147483648\.\.2147483647$" \
	djc insert Subject range32.jsonl
bad_rows range64.jsonl '{"subject_id": 9223372036854775808, "name": "Eve"}'
expect_fail 2 "integer beyond int64" "^djc: range64\.jsonl:3: malformed JSON \(column [0-9]+\): too big integer" djc insert Subject range64.jsonl
check "out of range: nothing inserted" rows_unchanged
bad_rows long.jsonl '{"subject_id": 13, "name": "Evangeline"}'
expect_fail 2 "oversized varchar" "^djc: long\.jsonl:3: row \{\"subject_id\": 13\}: attribute 'name' \(varchar\(8\)\): 10 characters do not fit in 8$" \
	djc insert Subject long.jsonl
bad_rows longu.jsonl '{"subject_id": 13, "name": "ÉÉÉÉÉÉÉÉÉ"}'
expect_fail 2 "oversized varchar counted in characters" "^djc: longu\.jsonl:3: row \{\"subject_id\": 13\}: attribute 'name' \(varchar\(8\)\): 9 characters do not fit in 8$" \
	djc insert Subject longu.jsonl
bad_rows fits.jsonl '{"subject_id": 13, "name": "ÉÉÉÉÉÉÉÉ"}'
expect_out "8 two-byte characters fit in varchar(8)" "inserted 4 rows into Subject" djc insert Subject fits.jsonl
expect_out "clean up" "deleted 4 rows from Subject" djc delete Subject --where '{"subject_id": {">": 1}}'
bad_rows utf8.jsonl "$(printf '{"subject_id": 13, "name": "caf\351"}')"
expect_fail 2 "invalid UTF-8 in a row" "^djc: utf8\.jsonl:3: not valid UTF-8 text$" djc insert Subject utf8.jsonl
bad_rows nul.jsonl '{"subject_id": 13, "name": "a\u0000b"}'
expect_fail 2 "NUL escape in a string" "^djc: nul\.jsonl:3: malformed JSON" djc insert Subject nul.jsonl
printf '{"subject_id": 13, "name": "a\0b"}\n' > rawnul.jsonl
expect_fail 2 "raw NUL byte in a row" "^djc: rawnul\.jsonl:1: NUL byte in input$" djc insert Subject rawnul.jsonl
bad_rows date.jsonl '{"subject_id": 13, "name": "Eve", "born": "2023-02-30"}'
expect_fail 2 "impossible date" "^djc: date\.jsonl:3: row \{\"subject_id\": 13\}: attribute 'born' \(date\): '2023-02-30' is not a date YYYY-MM-DD$" \
	djc insert Subject date.jsonl
deep=$(printf '%*s' 3000 '' | tr ' ' '['; printf '%*s' 3000 '' | tr ' ' ']')
printf '{"subject_id": 1, "session": 1}\n{"subject_id": 1, "session": 2, "info": %s}\n' "$deep" > deep.jsonl
expect_fail 2 "JSON nested very deep" "^djc: deep\.jsonl:2: malformed JSON \(column [0-9]+\): maximum parsing depth reached" djc insert Session deep.jsonl
expect_out "deep JSON: nothing inserted" 0 rows Session
printf '{"subject_id": 1, "session": 1, "blob": "not base64!"}\n' > b64.jsonl
expect_fail 2 "bytes that are not base64" "^djc: b64\.jsonl:1: row \{\"subject_id\": 1, \"session\": 1\}: attribute 'blob' \(bytes\): expects bytes as a base64 string$" \
	djc insert Session b64.jsonl
printf '{"subject_id": 1, "session": 1}\n{"subject_id": 99, "session": 1}\n' > orphan.jsonl
expect_fail 2 "row without its parent row: names the parent and the key" \
	"^djc: orphan\.jsonl:2: row \{\"subject_id\": 99, \"session\": 1\}: no row of Subject with \{\"subject_id\": 99\} \(a parent of Session\): insert it first$" \
	djc insert Session orphan.jsonl
expect_out "no parent: nothing inserted" 0 rows Session
check "row errors: the table still holds only the seed" rows_unchanged

# duplicates among good rows: the whole insert is refused
printf '{"subject_id": 20, "name": "A"}\n{"subject_id": 21, "name": "B"}\n{"subject_id": 20, "name": "C"}\n' > dupin.jsonl
expect_fail 2 "duplicate key within the file" \
	"^djc: dupin\.jsonl:3: row \{\"subject_id\": 20\}: duplicate primary key in Subject \(use --skip-duplicates to skip it\)$" \
	djc insert Subject dupin.jsonl
check "duplicate within the file: nothing inserted" rows_unchanged
printf '{"subject_id": 20, "name": "A"}\n{"subject_id": 1, "name": "Ann2"}\n{"subject_id": 21, "name": "B"}\n' > dupold.jsonl
expect_fail 2 "duplicate of a stored row" \
	"^djc: dupold\.jsonl:2: row \{\"subject_id\": 1\}: duplicate primary key in Subject \(use --skip-duplicates to skip it\)$" \
	djc insert Subject dupold.jsonl
check "duplicate of a stored row: nothing inserted" rows_unchanged
expect_out "the stored row is unchanged" '{"subject_id":1,"name":"Ann","level":0,"born":null}' djc fetch Subject --format json

# bad rows on stdin name <stdin>
ins_stdin() { printf '%s\n' "$2" | djc insert "$1"; }
expect_fail 2 "bad row on stdin" "^djc: <stdin>:1: row \{\"subject_id\": 5\}: attribute 'level' \(uint8\): 300 is out of range 0\.\.255$" \
	ins_stdin Subject '{"subject_id": 5, "name": "x", "level": 300}'

# computed tables are filled by populate only
expect_fail 2 "insert into a computed table" "^djc: table Stats is computed: its rows come from populate, not insert \\(--allow-direct-insert, or the option allow_direct_insert, inserts them by hand for a repair\\)$" \
	ins_stdin Stats '{"subject_id": 1, "session": 1, "mean": 0.5}'
expect_out "computed table still empty" 0 rows Stats
}
tcase rows good_pipeline

case_cli_names() {
# ------------------------------------------------------------ names and restrictions on the command line
expect_fail 2 "table name with SQL on the command line" '^djc: unknown table "x;drop table session" ' djc fetch 'x;drop table session'
expect_fail 2 "table name with a quote" '^djc: unknown table "Subject\\"; --" ' djc fetch 'Subject"; --'
expect_fail 2 "insert into a name with SQL" "^djc: unknown table \"Subject'; DROP TABLE subject; --\" " \
	ins_stdin "Subject'; DROP TABLE subject; --" '{"subject_id": 7, "name": "x"}'
expect_fail 2 "delete from a name with SQL" '^djc: unknown table "Subject;" ' djc delete 'Subject;'
check "the tables survived" test "$(count Subject)" = 1
expect_fail 2 "malformed JSON in --where" '^djc: --where is not valid JSON: ' djc fetch Subject --where '{"subject_id": 1'
expect_fail 2 "--where that is not an object" '^djc: restriction must be a JSON object or a list of objects$' djc fetch Subject --where '[5]'
expect_fail 2 "--where with SQL in the attribute name" '^djc: restriction names "subject_id = 1 OR 1=1 --", which is not an attribute of Subject \(its attributes: subject_id, name, level, born\)$' \
	djc fetch Subject --where '{"subject_id = 1 OR 1=1 --": 1}'
expect_fail 2 "--where with a value out of range" "^djc: restriction: attribute 'level' \(uint8\): 300 is out of range 0\.\.255$" \
	djc fetch Subject --where '{"level": 300}'
expect_fail 2 "--where nested very deep" '^djc: --where is not valid JSON: maximum parsing depth reached' djc fetch Subject --where "$deep"
expect_fail 2 "delete with malformed --where" '^djc: --where is not valid JSON: ' djc delete Subject --where '{'
check "bad deletes deleted nothing" test "$(count Subject)" = 1
}
tcase cli_names rows

case_connection() {
# ------------------------------------------------------------ connection and configuration
expect_fail 2 "unknown URL scheme" "^djc: unknown database URL scheme 'mongodb' \(expected sqlite, postgresql or mysql\)$" \
	djc --db 'mongodb://localhost/x' tables
expect_fail 2 "URL without a scheme" '^djc: database URL has no scheme' djc --db 'nonsense' tables
expect_fail 2 "URL with a bad port" "^djc: database URL has a bad port 'abc'$" djc --db 'postgresql://u@127.0.0.1:abc/db' tables
expect_fail 2 "sqlite URL without a file" "^djc: database URL 'sqlite:' names no file$" djc --db 'sqlite:' tables
# a parameter is refused, not made part of the file's name (before: a file
# named "q.db?x=1"); an explicitly empty --db is not the default database
expect_fail 2 "sqlite URL with a parameter" \
	"^djc: database URL 'sqlite:q\.db\?x=1': a SQLite URL takes no parameters \(got '\?x=1'; sqlite:PATH names the file\)$" \
	sh -c 'printf "Q (manual)\n    q : int32\n    ---\n" > q.djc && "$DJC" --db "sqlite:q.db?x=1" declare q.djc'
check "sqlite URL with a parameter: no file made" test ! -e 'q.db?x=1' -a ! -e q.db
expect_fail 2 "an empty --db" '^djc: database URL is empty \(leave it out for the default: \$DJC_DATABASE_URL, then database\.url, then sqlite:djc\.db\)$' \
	djc --db '' tables
expect_fail 2 "bad URL in the environment" "^djc: unknown database URL scheme 'bogus'" env DJC_DATABASE_URL='bogus://x' "$DJC" tables
printf '{"jobs": {"keep_completed": true,\n' > bad.json
expect_fail 2 "malformed config file" '^djc: bad\.json:2: malformed JSON: ' env DJC_CONFIG=bad.json "$DJC" tables
printf '{"jobs": {"keep_completed": "maybe"}}\n' > badval.json
expect_fail 2 "config setting of the wrong type" "^djc: badval\.json: setting 'jobs\.keep_completed' must be true or false \(or 1/0, yes/no\), got \"maybe\"$" env DJC_CONFIG=badval.json "$DJC" tables
printf '{"jobs": {"keep_complete": true}}\n' > badkey.json
expect_fail 2 "unknown config setting" "^djc: badkey\.json: unknown setting 'jobs\.keep_complete'" env DJC_CONFIG=badkey.json "$DJC" tables
expect_fail 2 "missing config file" '^djc: cannot read config file nope\.json: No such file or directory$' env DJC_CONFIG=nope.json "$DJC" tables
# a section (or a setting) twice: the second would silently replace the
# first, keep_completed lost without a word
printf '{"jobs": {"keep_completed": true},\n "jobs": {"lease_timeout": 30}}\n' > dupsec.json
expect_fail 2 "a config section given twice" "^djc: dupsec\.json:2: malformed JSON: duplicate object key near '\"jobs\"'$" \
	env DJC_CONFIG=dupsec.json "$DJC" tables
printf '{"jobs": {"lease_timeout": 30, "lease_timeout": 40}}\n' > dupkey.json
expect_fail 2 "a config setting given twice" "^djc: dupkey\.json:1: malformed JSON: duplicate object key near '\"lease_timeout\"'$" \
	env DJC_CONFIG=dupkey.json "$DJC" tables
# a byte order mark (some editors write one) is skipped, as insert skips it
printf '\357\273\277{"jobs": {"keep_completed": true}}\n' > bom.json
expect_out "a config file starting with a UTF-8 byte order mark" \
	'jobs.keep_completed    true                     (bom.json)' \
	sh -c 'DJC_CONFIG=bom.json "$DJC" config | grep "^jobs.keep_completed "'
mkdir -p dir.json
expect_fail 2 "a config file that is a directory" '^djc: cannot read config file dir\.json: Is a directory$' \
	env DJC_CONFIG=dir.json "$DJC" tables
printf '[1]\n' > notobj.json
expect_fail 2 "config that is not an object" '^djc: notobj\.json: the config must be a JSON object$' env DJC_CONFIG=notobj.json "$DJC" tables
printf '{"jobs": {"keep_completed": true' > bad2.json
cp bad2.json djc.json
expect_fail 2 "malformed djc.json in the working directory" '^djc: djc\.json:1: malformed JSON: ' djc tables
rm -f djc.json
expect_fail 2 "a bad config stops insert before writing" '^djc: bad\.json:2: malformed JSON' \
	env DJC_CONFIG=bad.json sh -c 'printf "{\"subject_id\": 30, \"name\": \"x\"}\n" | "$DJC" insert Subject'
check "in the end: only the seed row" test "$(count Subject)" = 1
}
tcase connection cli_names

case_config_values() {
# ------------------------------------------------------------ djc config: usage and every checked setting
# (no database: djc config opens none, and a bad setting stops any other
# command before it opens one; run once, in the SQLite run)
expect_fail 2 "config with an unknown option" '^djc: config: unknown option --bogus \(see djc config --help\)$' djc config --bogus
expect_fail 2 "config with an argument" "^djc: config takes no arguments, only --json \(got 'extra'\)$" djc config extra --json
expect_fail 2 "config --json with an argument after it" "^djc: config takes no arguments, only --json \(got 'extra'\)$" djc config --json extra
expect_fail 2 "a usage error holding a newline is one line" "^djc: config takes no arguments, only --json \(got 'a b'\)$" djc config "$(printf 'a\nb')"
run djc config --json
check "config --json alone: exit 0, one JSON object" sh -c '[ "$1" = 0 ] && printf "%s" "$2" | jq -e "type == \"object\"" >/dev/null' _ "$RC" "$OUT"
# environment: "environment variable NAME (key) must be WHAT, got 'VALUE'"
bad_env() {  # VAR=VALUE key what
	expect_fail 2 "config: $1 refused" "^djc: environment variable ${1%%=*} \($2\) must be $3, got '.*'$" env "$1" "$DJC" config
}
bad_env DJC_JOBS_VERSION_METHOD=svn 'jobs\.version_method' 'none or git'
bad_env DJC_JOBS_VERSION_METHOD=GIT 'jobs\.version_method' 'none or git'
bad_env DJC_JOBS_AUTO_REFRESH=maybe 'jobs\.auto_refresh' 'true or false \(or 1/0, yes/no\)'
bad_env DJC_JOBS_KEEP_COMPLETED=2 'jobs\.keep_completed' 'true or false \(or 1/0, yes/no\)'
bad_env DJC_JOBS_STALE_TIMEOUT=-1 'jobs\.stale_timeout' 'a number of seconds from 0 to 1e9'
bad_env DJC_JOBS_STALE_TIMEOUT=1h 'jobs\.stale_timeout' 'a number of seconds from 0 to 1e9'
bad_env DJC_JOBS_LEASE_TIMEOUT=0 'jobs\.lease_timeout' 'a number of seconds greater than 0 and at most 1e9'
bad_env DJC_JOBS_LEASE_TIMEOUT=1e300 'jobs\.lease_timeout' 'a number of seconds greater than 0 and at most 1e9'
bad_env DJC_JOBS_LEASE_TIMEOUT=nan 'jobs\.lease_timeout' 'a number of seconds greater than 0 and at most 1e9'
bad_env DJC_JOBS_LEASE_TIMEOUT=0x10 'jobs\.lease_timeout' 'a number of seconds greater than 0 and at most 1e9'
bad_env DJC_JOBS_DEFAULT_PRIORITY=-1 'jobs\.default_priority' 'an integer from 0 to 2147483647'
bad_env DJC_JOBS_DEFAULT_PRIORITY=2.5 'jobs\.default_priority' 'an integer from 0 to 2147483647'
bad_env DJC_JOBS_RESERVE_BATCH=0 'jobs\.reserve_batch' 'an integer from 1 to 1000'
bad_env DJC_JOBS_RESERVE_BATCH=1001 'jobs\.reserve_batch' 'an integer from 1 to 1000'
bad_env DJC_JOBS_MAX_LOST=0 'jobs\.max_lost' 'an integer from 1 to 1000000'
bad_env DJC_JOBS_HISTORY_RETENTION=-1 'jobs\.history_retention' 'a number of seconds from 0 to 1e9'
bad_env DJC_DISPLAY_PROGRESS=often 'display\.progress' 'true or false \(or 1/0, yes/no\)'
expect_fail 2 "a value holding a newline is still one line" "must be none or git, got 'svn\?x'$" env "DJC_JOBS_VERSION_METHOD=$(printf 'svn\nx')" "$DJC" config
for kv in DJC_JOBS_VERSION_METHOD=git DJC_JOBS_VERSION_METHOD=none DJC_JOBS_RESERVE_BATCH=1000 DJC_JOBS_LEASE_TIMEOUT=0.5 \
	  DJC_JOBS_STALE_TIMEOUT=0 DJC_JOBS_DEFAULT_PRIORITY=0 DJC_JOBS_KEEP_COMPLETED=yes; do
	expect_rc 0 "config: $kv accepted" env "$kv" "$DJC" config
done
# the file: "FILE: setting 'key' must be WHAT, got JSON"
bad_file() {  # json pattern
	printf '%s\n' "$1" > badset.json
	expect_fail 2 "config file $1 refused" "^djc: badset\.json: setting $2" env DJC_CONFIG=badset.json "$DJC" config
}
bad_file '{"jobs": {"version_method": "svn"}}' "'jobs\.version_method' must be none or git, got \"svn\"$"
bad_file '{"jobs": {"lease_timeout": 0}}' "'jobs\.lease_timeout' must be a number of seconds greater than 0 and at most 1e9, got 0$"
bad_file '{"jobs": {"reserve_batch": 2.5}}' "'jobs\.reserve_batch' must be an integer from 1 to 1000, got 2\.5$"
bad_file '{"jobs": {"default_priority": "high"}}' "'jobs\.default_priority' must be an integer from 0 to 2147483647, got \"high\"$"
bad_file '{"jobs": {"stale_timeout": null}}' "'jobs\.stale_timeout' must be a number of seconds from 0 to 1e9, got null$"
bad_file '{"jobs": {"auto_refresh": [true]}}' "'jobs\.auto_refresh' must be true or false, got \[true\]$"
printf '{"jobs": {"version_method": "svn"}}\n' > djc.json
expect_fail 2 "djc.json in the working directory: named in the message" "^djc: djc\.json: setting 'jobs\.version_method' must be none or git, got \"svn\"$" djc config --json
expect_fail 2 "a bad djc.json value stops other commands too" "^djc: djc\.json: setting 'jobs\.version_method'" djc tables
rm -f djc.json
}
tcase config_values @nodb

case_config_usage() {
# ------------------------------------------------------------ a bad setting stops populate before any make
printf '{"subject_id": 1, "session": 1}\n' | djc insert Session >/dev/null
printf '#!/bin/sh\ntouch "$T/made.marker"\necho "{\\"mean\\": 1.5}"\n' > mkcfg.sh
chmod +x mkcfg.sh
expect_fail 2 "populate with a bad version_method in the environment" \
	"^djc: environment variable DJC_JOBS_VERSION_METHOD \(jobs\.version_method\) must be none or git, got 'svn'$" \
	env DJC_JOBS_VERSION_METHOD=svn "$DJC" populate Stats --reserve-jobs --make ./mkcfg.sh
expect_fail 2 "populate with a bad reserve_batch in the environment" "^djc: environment variable DJC_JOBS_RESERVE_BATCH" \
	env DJC_JOBS_RESERVE_BATCH=0 "$DJC" populate Stats --reserve-jobs --make ./mkcfg.sh
printf '{"jobs": {"lease_timeout": -5}}\n' > badlease.json
expect_fail 2 "populate with a bad lease_timeout in the file" "^djc: badlease\.json: setting 'jobs\.lease_timeout'" \
	env DJC_CONFIG=badlease.json "$DJC" populate Stats --reserve-jobs --make ./mkcfg.sh
check "no make ran, nothing stored" test "$(if [ -e "$T/made.marker" ]; then echo ran; else echo none; fi)/$(rows Stats)" = none/0
expect_out "with a good value populate runs" "Stats: 1 made, 0 errors, 0 skipped" env DJC_JOBS_VERSION_METHOD=none "$DJC" populate Stats --reserve-jobs --make ./mkcfg.sh
}
tcase config_usage connection

case_not_settings() {
# ------------------------------------------------------------ DJC_* variables that are not settings
# a typo in djc.json stops the command; the same typo in the environment
# is a warning naming the closest setting (the command runs: a make
# program inherits its worker's DJC_* variables, which a djc of another
# version may not know)
expect_fail 2 "a misspelt setting in the file names the closest one" \
	"^djc: badkey\.json: unknown setting 'jobs\.keep_complete'; did you mean 'jobs\.keep_completed'\?$" env DJC_CONFIG=badkey.json "$DJC" tables
run env DJC_JOBS_LEASE_TIMOUT=5 "$DJC" tables
check "a misspelt DJC_* variable: the command runs, with one warning naming the closest setting" \
	test "$RC:$ERR" = "0:djc: warning: environment variable DJC_JOBS_LEASE_TIMOUT is not a djc setting and changes nothing; did you mean DJC_JOBS_LEASE_TIMEOUT (jobs.lease_timeout)?"
run env DJC_LEASE_TIMEOUT=5 "$DJC" config
check "...a setting's variable without its section (djc config warns too)" \
	test "$RC:$ERR" = "0:djc: warning: environment variable DJC_LEASE_TIMEOUT is not a djc setting and changes nothing; did you mean DJC_JOBS_LEASE_TIMEOUT (jobs.lease_timeout)?"
run env DJC_SOMETHING_ELSE=1 "$DJC" tables
check "...a name close to none" test "$RC:$ERR" = "0:djc: warning: environment variable DJC_SOMETHING_ELSE is not a djc setting and changes nothing (djc config lists them)"
run env DJC_KEY='{"subject_id": 1}' DJC_KEY_subject_id=1 DJC_TABLE=Stats DJC_SCHEMA="${DJC_DATABASE_SCHEMA-}" DJC_ATTEMPT=1 DJC_SERVE=1 DJC_CONFIG= \
	DJC_MYSQL_COMPOUND=1 DJC_WORKER_LOG= DJC_TEST_ANY=1 DJC_BACKENDS=sqlite DJC_TESTS=x DJC_BUILD=b DJC_SAN_BUILD= \
	DJC_BLOBS=raw DJC_BLOB_ZLIB=1 DJC_DATAJOINT_PYTHON=/usr/bin/python3 "$DJC" tables
check "the variables djc sets for make programs, those its Python makes read (DJC_BLOBS), and those of its scripts and tests: no warning" test "$RC:$ERR" = "0:"
# DJC_SCHEMA is what djc tells a make program; set by hand (not the same as
# DJC_DATABASE_SCHEMA, as djc sets them) it chooses nothing: said, not
# ignored without a word as before
run env DJC_SCHEMA=lab "$DJC" tables
check "DJC_SCHEMA set by hand: the command runs, with one warning naming DJC_DATABASE_SCHEMA" \
	test "$RC:$ERR" = "0:djc: warning: environment variable DJC_SCHEMA (lab) does not choose the schema (djc sets it for make programs); use DJC_DATABASE_SCHEMA (database.schema) or --schema"
printf '{"subject_id": 1, "session": 2}\n' | djc insert Session >/dev/null
cat > mkenv.sh <<'P'
#!/bin/sh
"$DJC" fetch Session --key "$DJC_KEY" --format json >/dev/null 2>> "$T/make.stderr"
echo '{"mean": 2.5}'
P
chmod +x mkenv.sh
: > "$T/make.stderr"
expect_out "a make program that runs djc" "Stats: 1 made, 0 errors, 0 skipped" djc populate Stats --reserve-jobs --make ./mkenv.sh
check "...gets no warning for the variables its worker set" test ! -s "$T/make.stderr"
}
tcase not_settings config_usage

case_one_check() {
# ------------------------------------------------------------ one check per kind of value, every command
# a priority, a delay, a timeout: what one command or the configuration
# refuses, every command refuses, with the same words
n_jobs=$(djc jobs Stats --json | jq .total)
prio="must be an integer from 0 to 2147483647, got '99999999999'$"
expect_fail 2 "jobs refresh --priority beyond an int32" "^djc: --priority $prio" djc jobs refresh Stats --priority 99999999999
expect_fail 2 "jobs set --priority: the same" "^djc: --priority $prio" djc jobs set Stats --all --priority 99999999999
expect_fail 2 "populate --priority: the same" "^djc: --priority $prio" djc populate Stats --reserve-jobs --priority 99999999999 --make ./mkcfg.sh
expect_fail 2 "worker --priority: the same" "^djc: --priority $prio" djc worker --priority 99999999999 --until-empty
expect_fail 2 "jobs.default_priority: the same" "^djc: environment variable DJC_JOBS_DEFAULT_PRIORITY \(jobs\.default_priority\) $prio" \
	env DJC_JOBS_DEFAULT_PRIORITY=99999999999 "$DJC" jobs refresh Stats
delay="must be a number of seconds from -1e9 to 1e9, got"
expect_fail 2 "jobs refresh --delay 1e12 (due in the year 33715)" "^djc: --delay $delay '1e12'$" djc jobs refresh Stats --delay 1e12
expect_fail 2 "jobs refresh --delay -1e12" "^djc: --delay $delay '-1e12'$" djc jobs refresh Stats --delay=-1e12
expect_fail 2 "jobs set --delay: the same" "^djc: --delay $delay '1e12'$" djc jobs set Stats --all --delay 1e12
expect_fail 2 "jobs refresh --stale-timeout: as jobs.stale_timeout" "^djc: --stale-timeout must be a number of seconds from 0 to 1e9, got '1e12'$" \
	djc jobs refresh Stats --stale-timeout 1e12
expect_fail 2 "jobs refresh --orphan-timeout: the same" "^djc: --orphan-timeout must be a number of seconds from 0 to 1e9, got '1e12'$" \
	djc jobs refresh Stats --orphan-timeout 1e12
check "nothing was added or changed" test "$(djc jobs Stats --json | jq .total)/$(djc jobs Stats --status pending --json | jq '[.jobs[] | .priority] | max // 0')" = "$n_jobs/0"
}
tcase one_check not_settings

case_json_csv() {
# ------------------------------------------------------------ JSON arrays and CSV
# one JSON array of objects is read whole; a pretty-printed object gets a
# message saying what insert reads
printf '[\n  {"subject_id": 20, "name": "Fay"},\n  {"subject_id": 21, "name": "Gus", "level": 3}\n]\n' > arr.json
expect_out "a JSON array of objects" "inserted 2 rows into Subject" djc insert Subject arr.json
printf '[{"subject_id": 22, "name": "Hal"}, {"subject_id": 23, "name": 5}]' > badarr.json
expect_fail 2 "a bad element of an array names it" "^djc: badarr\.json: element 2: row \{\"subject_id\": 23\}: attribute 'name' \(varchar\(8\)\): expects a string" \
	djc insert Subject badarr.json
printf '[{"subject_id": 22, "name": "Hal"}, 7]' > badarr2.json
expect_fail 2 "an array element that is not an object" "^djc: badarr2\.json: element 2: expected a JSON object$" djc insert Subject badarr2.json
printf '{\n  "subject_id": 22,\n  "name": "Hal"\n}\n' > pretty.json
expect_fail 2 "a pretty-printed object: what insert reads" \
	"^djc: pretty\.json:1: malformed JSON \(column [0-9]+\): .*\(insert reads one JSON object per line, or one JSON array of objects\)$" djc insert Subject pretty.json
check "no row of the bad inputs" test "$(count Subject '{"subject_id": [22, 23]}' || true)" = 0
# CSV: a header of attribute names, RFC 4180 quoting, an empty field is no value
printf 'name,subject_id,born\r\n"Ivy, Jr.",30,2020-02-29\r\nJo,31,\r\n"a\nb ""q""",32,\r\n\r\n' > ok.csv
expect_out "CSV (by the file name): header, quoting, CRLF, a blank line" "inserted 3 rows into Subject" djc insert Subject ok.csv
expect_out "...values read as written" '{"subject_id":30,"name":"Ivy, Jr.","level":0,"born":"2020-02-29"}
{"subject_id":31,"name":"Jo","level":0,"born":null}
{"subject_id":32,"name":"a\nb \"q\"","level":0,"born":null}' djc fetch Subject --where '{"subject_id": {">=": 30}}' --format json
printf 'subject_id,nmae\n40,Kim\n' > badhead.csv
expect_fail 2 "CSV: a header column that is no attribute" '^djc: badhead\.csv:1: header column 2, "nmae", is not an attribute of Subject' djc insert Subject badhead.csv
printf 'subject_id,name,name\n40,Kim,Kim\n' > twice.csv
expect_fail 2 "CSV: a column twice" "^djc: twice\.csv:1: column 'name' twice in the header$" djc insert Subject twice.csv
printf 'subject_id,name\n40,Kim\n41\n' > short.csv
expect_fail 2 "CSV: a record with too few fields" "^djc: short\.csv:3: 1 field, the header has 2$" djc insert Subject short.csv
printf 'subject_id,name\n40,Kim\n41,"Lu\n' > open.csv
expect_fail 2 "CSV: a quoted field that does not close" "^djc: open\.csv:3: a quoted field does not close" djc insert Subject open.csv
printf 'subject_id,name\n40,Kim\n41,\n' > empty.csv
expect_fail 2 "CSV: an empty field for a required attribute" "^djc: empty\.csv:3: row \{\"subject_id\": 41\}: missing attribute 'name' of table Subject$" djc insert Subject empty.csv
printf 'subject_id,name,level\n40,Kim,high\n' > nan.csv
expect_fail 2 "CSV: a number that is not one" "^djc: nan\.csv:2: row \{\"subject_id\": 40\}: attribute 'level' \(uint8\): expects an integer, got a string$" djc insert Subject nan.csv
: > none.csv
expect_fail 2 "CSV: no header" "^djc: none\.csv:1: no header line" djc insert Subject none.csv
expect_fail 2 "insert --format: json or csv" "^djc: --format must be json or csv, got 'xml'$" djc insert Subject ok.csv --format xml
check "nothing of the bad CSV files" test "$(count Subject '{"subject_id": [40, 41]}' || true)" = 0
printf 'subject_id,name\n50,Max\n' | djc insert Subject --format csv >/dev/null
check "CSV from stdin with --format csv" test "$(count Subject '{"subject_id": 50}')" = 1

expect_out "clean up the rows of the JSON and CSV cases" "deleted 6 rows from Subject" djc delete Subject --where '{"subject_id": {">": 1}}' --yes
}
tcase json_csv one_check

case_malformed_restrictions() {
# ------------------------------------------------------------ malformed restrictions (issue 36)
# An operator takes exactly the operand it means: a comparison one value,
# "in" and "not in" a list of values; anything else is exit 2 naming the
# attribute, and nothing is read, deleted or changed. (Before, a list given
# to a comparison was read as IN: fetch --where '{"id": {">": [3]}}' printed
# id 3, and delete --where '{"id": {"<": [2]}}' deleted id 2.)
cat > r.djc <<'P'
Src (manual)
    id : int32
    ---
    v = null : float64

Note (manual)
    -> Src
    note_id : int32
    ---

Sq (computed)
    -> Src
    ---
    sq : float64

Dec (manual)
    k : int32
    ---
    d : decimal(20,4)
P
expect_rc 0 "restrictions: declare Src, Note, Sq, Dec" djc declare r.djc
for i in 1 2 3 4; do printf '{"id": %d, "v": %d}\n' "$i" "$i"; done > src.jsonl
expect_out "restrictions: four rows" "inserted 4 rows into Src" djc insert Src src.jsonl
expect_rc 0 "restrictions: four pending jobs" djc jobs refresh Sq
jobs_intact() { [ "$("$DJC" jobs Sq)" = "Sq jobs: pending 4, reserved 0, success 0, error 0, ignore 0, total 4" ]; }
src_intact() { [ "$("$DJC" fetch Src --format csv | tr '\n' ' ')" = "id,v 1,1 2,2 3,3 4,4 " ]; }
while IFS='|' read -r w wpat; do
	[ -n "$w" ] || continue
	for cmd in "fetch Src" "delete Src --yes" "delete Src --no-cascade --yes" "jobs Sq" "jobs cancel Sq" "jobs ignore Sq" \
		"jobs clear Sq" "jobs set Sq --priority 1" "progress Sq" "jobs refresh Sq"; do
		# shellcheck disable=SC2086
		expect_fail 2 "restriction $w: $cmd refuses it" "^djc: $wpat" djc $cmd --where "$w"
	done
	expect_fail 2 "restriction $w: populate refuses it" "^djc: $wpat" djc populate Sq --reserve-jobs --where "$w" --make true
	expect_fail 2 "restriction $w: direct populate refuses it" "^djc: $wpat" djc populate Sq --where "$w" --make true
done <<'W'
{"id": {">": [3]}}|restriction on 'id': '>' takes one value, got a list \(a list goes with "in" or "not in"\)$
{"id": {"<": [2]}}|restriction on 'id': '<' takes one value, got a list
{"id": {"=": [2]}}|restriction on 'id': '=' takes one value, got a list
{"id": {"!=": [2]}}|restriction on 'id': '!=' takes one value, got a list
{"id": {">=": {"in": [1]}}}|restriction on 'id': '>=' takes one value, got an object$
{"id": {"<": null}}|restriction on 'id': '<' cannot compare with null \(null goes with = or !=\)$
{"id": {"in": 3}}|restriction on 'id': 'in' takes a list of values, got a number$
{"id": {"not in": "3"}}|restriction on 'id': 'not in' takes a list of values, got a string$
{"id": [1, [2]]}|restriction on 'id': item 2 of its list is a list \(a list holds values\)$
{"id": {"in": [1, null]}}|restriction on 'id': item 2 of its list is null \(a list holds values; to match null, restrict to null alone\)$
{"id": {"not in": [{"=": 1}]}}|restriction on 'id': item 1 of its list is an object
{"id": {">": 1, "<": 3}}|restriction on 'id' must have one operator
W
check "malformed restrictions deleted nothing" src_intact
check "malformed restrictions changed no job" jobs_intact
# the well-formed spellings do what they say
expect_out "{\"in\": [3]} is id 3" "3,3" sh -c "$DJC fetch Src --where '{\"id\": {\"in\": [3]}}' --format csv | tail -n +2"
expect_out "{\">\": 3} is id 4" "4,4" sh -c "$DJC fetch Src --where '{\"id\": {\">\": 3}}' --format csv | tail -n +2"
expect_out "{\"not in\": [1, 2]} is ids 3 and 4" "3 4" sh -c "$DJC fetch Src --where '{\"id\": {\"not in\": [1, 2]}}' --format csv | tail -n +2 | cut -d, -f1 | tr '\n' ' ' | sed 's/ \$//'"
expect_out "{\"!=\": null} on a nullable attribute: every row" "4" sh -c "$DJC fetch Src --where '{\"v\": {\"!=\": null}}' --format csv | tail -n +2 | wc -l"
# a typo lists the attributes, with the nearest one
expect_fail 2 "a --where typo names the attributes and the nearest" \
	'^djc: restriction names "idd", which is not an attribute of Src \(did you mean id\? its attributes: id, v\)$' djc fetch Src --where '{"idd": 3}'
expect_fail 2 "a --where typo on a jobs command names the key source's attributes" \
	'^djc: restriction names "iid", which is not an attribute of the key source of Sq \(Src\) \(did you mean id\? its attributes: id, v\)$' \
	djc jobs cancel Sq --where '{"iid": 3}'
expect_fail 2 "a --where name without a near one lists the attributes only" \
	'^djc: restriction names "zzz", which is not an attribute of Src \(its attributes: id, v\)$' djc delete Src --where '{"zzz": 3}' --yes
# an unknown table: the nearest declared one
expect_fail 2 "an unknown table names the nearest declared one" \
	'^djc: unknown table "Scr" \(did you mean Src\? declared tables: see djc tables\)$' djc fetch Scr
expect_fail 2 "... in insert and jobs too" '^djc: unknown table "sq" \(did you mean Sq\? ' djc jobs cancel sq --all

# an empty restriction is never "everything" where --all is what says so
for w in '{}' '[{}]' '[{"id": 1}, {}]'; do
	for cmd in "jobs clear Sq" "jobs cancel Sq" "jobs ignore Sq" "jobs set Sq --priority 1"; do
		sub=${cmd#jobs }
		# shellcheck disable=SC2086
		expect_fail 2 "$cmd --where $w is refused, naming --all" \
			"^djc: jobs ${sub%% *}: --where .* restricts nothing; to act on every job give --all \(an empty restriction never means all\)$" \
			djc $cmd --where "$w"
	done
	expect_fail 2 "delete --where $w is refused" "^djc: delete: --where .* restricts nothing; to delete every row of Src leave --where out" \
		djc delete Src --where "$w" --yes
done
check "empty restrictions deleted nothing" src_intact
check "empty restrictions changed no job" jobs_intact
expect_out "an empty list still restricts to nothing" "Sq: cleared 0 jobs" djc jobs clear Sq --where '[]'

# a list longer than 100 values (one database parameter; unlimited)
long=$(seq 0 149 | tr '\n' , | sed 's/,$//')
expect_out "a list of 150 values" "1 2 3 4" sh -c "$DJC fetch Src --where '{\"id\": [$long]}' --format csv | tail -n +2 | cut -d, -f1 | tr '\n' ' ' | sed 's/ $//'"
expect_out "not in a list of 150 values" "1" sh -c "$DJC fetch Src --where '{\"id\": {\"not in\": [$(seq 2 151 | tr '\n' , | sed 's/,$//')]}}' --format csv | tail -n +2 | cut -d, -f1"
keys=$(seq 0 149 | sed 's/.*/{"id": &}/' | tr '\n' , | sed 's/,$//')
expect_out "a list of 150 keys" "1 2 3 4" sh -c "$DJC fetch Src --where '[$keys]' --format csv | tail -n +2 | cut -d, -f1 | tr '\n' ' ' | sed 's/ $//'"
expect_out "jobs of a list of 150 keys" "Sq: updated 4 pending jobs" djc jobs set Sq --where "[$keys]" --priority 5
expect_fail 2 "a long list with a bad value names it" "^djc: restriction: attribute 'id' \(int32\): expects an integer, got a string$" \
	djc fetch Src --where "{\"id\": [$long, \"x\"]}"

# a list of decimals matches exactly (before, MariaDB compared a decimal
# column with a list of text values as doubles: ...0001 matched ...0002)
printf '{"k": 1, "d": "1234567890123456.0001"}\n{"k": 2, "d": "1234567890123456.0002"}\n' > dec.jsonl
expect_out "two decimals 0.0001 apart" "inserted 2 rows into Dec" djc insert Dec dec.jsonl
expect_out "a list of decimals matches its values only" "1" \
	sh -c "$DJC fetch Dec --where '{\"d\": [\"1234567890123456.0001\", \"1\"]}' --format csv | tail -n +2 | cut -d, -f1 | tr '\n' ' ' | sed 's/ $//'"
expect_out "not in a list of decimals" "would delete 1 row from Dec" \
	djc delete Dec --where '{"d": {"not in": ["1234567890123456.0001", "5"]}}' --dry-run
long=$(seq 0 149 | sed 's/.*/"&"/' | tr '\n' , | sed 's/,$//')
expect_out "a long list of decimals matches its values only" "1" \
	sh -c "$DJC fetch Dec --where '{\"d\": {\"in\": [\"1234567890123456.0001\", $long]}}' --format csv | tail -n +2 | cut -d, -f1 | tr '\n' ' ' | sed 's/ $//'"

# a missing parent and a referencing child: which table, which key
printf '{"id": 1, "note_id": 1}\n{"id": 9, "note_id": 1}\n' > notes.jsonl
expect_fail 2 "a row without its parent names the parent and the key" \
	'^djc: notes\.jsonl:2: row \{"id": 9, "note_id": 1\}: no row of Src with \{"id": 9\} \(a parent of Note\): insert it first$' djc insert Note notes.jsonl
head -1 notes.jsonl > note1.jsonl
expect_out "one note" "inserted 1 row into Note" djc insert Note note1.jsonl
expect_fail 2 "delete --no-cascade names the table whose rows reference" \
	'^djc: cannot delete from Src: 1 row of Note references them \(delete those first, or delete with cascade\)$' \
	djc delete Src --no-cascade --where '{"id": [1, 2]}'
check "the refused delete deleted nothing" src_intact
# every job is --all (jobs ignore takes it as cancel and set do)
expect_out "jobs ignore --all ignores every job" "Sq: ignoring 4 jobs" djc jobs ignore Sq --all
expect_out "... and they are ignore" "Sq jobs: pending 0, reserved 0, success 0, error 0, ignore 4, total 4" djc jobs Sq
}
tcase malformed_restrictions json_csv

finish
