#!/bin/bash
# test_populate.sh - populate without job reservation (DESIGN sections 1, 2):
# every missing key made exactly once, restrictions, max-calls, errors and
# their reporting, the make program protocol (output checking, environment,
# no shell), the table's make line, several processes, progress.
. "$ROOT/tests/cli/lib.sh"

cat > p.djc <<'P'
Src (manual)
    id : int32
    ---
    name : varchar(64)

Out (computed)
    -> Src
    ---
    v : int64

Out2 (computed)
    -> Src
    ---
    v : int64

WithPart (computed)
    -> Src
    ---
    v : int64

WithPart.Item (part)
    item : int32
    ---
    w : int64

Txt (manual)
    name : varchar(64)
    ---

TxtOut (computed)
    -> Txt
    ---
    n : int64

Auto (computed)
    -> Src
    ---
    v : int64
    make = ./mk_auto.sh "first arg" second

Many (manual)
    mid : int32
    ---

ManyOne (computed)
    -> Many
    ---
    sq : int64
    tag : varchar(32)

ManyFour (computed)
    -> Many
    ---
    sq : int64
    tag : varchar(32)
P

# the standard make: logs each start (O_APPEND), prints v = id * 10 (key omitted)
cat > mk.sh <<'P'
#!/bin/sh
echo "$DJC_KEY_id" >> "$T/log.$DJC_TABLE"
echo "{\"v\": $((DJC_KEY_id * 10))}"
P
# fails for id 4 with a message on stderr
cat > mk_fail4.sh <<'P'
#!/bin/sh
echo "$DJC_KEY_id" >> "$T/log.$DJC_TABLE"
if [ "$DJC_KEY_id" = 4 ]; then echo "some noise" >&2; echo "boom for $DJC_KEY_id" >&2; exit 3; fi
echo "{\"v\": $((DJC_KEY_id * 10))}"
P
cat > mk_auto.sh <<'P'
#!/bin/sh
echo "$DJC_KEY_id $1|$2" >> "$T/log.auto"
echo "{\"v\": $((DJC_KEY_id + 1000))}"
P
cat > mk_many.sh <<'P'
#!/bin/sh
echo "$DJC_KEY_mid" >> "$T/log.$DJC_TABLE"
echo "{\"sq\": $((DJC_KEY_mid * DJC_KEY_mid)), \"tag\": \"m$DJC_KEY_mid\"}"
P
chmod +x mk*.sh

expect_rc 0 "declare" djc declare p.djc
for i in 1 2 3 4 5 6 7 8 9 10; do echo "{\"id\":$i,\"name\":\"n$i\"}"; done > src.jsonl
expect_out "insert Src" "inserted 10 rows into Src" djc insert Src src.jsonl

lines() { if [ -f "$1" ]; then grep -c . "$1"; else echo 0; fi; }
distinct() { if [ -f "$1" ]; then sort -u "$1" | grep -c .; else echo 0; fi; }

case_progress_before() {
# ---------------------------------------------------------------- progress before
expect_out "progress before" "Out: Completed 0 of 10 (0.0%), 10 remaining" djc progress Out
expect_out "progress --json before" '{"table":"Out","remaining":10,"total":10}' sh -c '"$DJC" progress Out --json | jq -c "{table, remaining, total}"'
}
tcase progress_before

case_every_key_once() {
# ---------------------------------------------------------------- every key exactly once
expect_out "populate makes all 10" "Out: 10 made, 0 errors, 0 skipped" djc populate Out --make ./mk.sh
check "10 make starts logged" [ "$(lines log.Out)" = 10 ]
check "10 distinct keys made" [ "$(sort -n log.Out | tr '\n' ' ')" = "1 2 3 4 5 6 7 8 9 10 " ]
expect_out "Out rows (key attributes filled from the key)" "$(for i in 1 2 3 4 5 6 7 8 9 10; do echo "{\"id\":$i,\"v\":$((i * 10))}"; done)" \
	djc fetch Out --format json
expect_out "second populate makes nothing" "Out: 0 made, 0 errors, 0 skipped" djc populate Out --make ./mk.sh
check "no make started the second time" [ "$(lines log.Out)" = 10 ]
expect_out "progress after" "Out: Completed 10 of 10 (100.0%), 0 remaining" djc progress Out
expect_out "progress --json after" '{"table":"Out","remaining":0,"total":10}' sh -c '"$DJC" progress Out --json | jq -c "{table, remaining, total}"'

# only missing keys: delete 3 rows, populate makes exactly those
rm -f log.Out
expect_out "delete 3 rows" "deleted 3 rows from Out" djc delete Out --where '{"id":[2,5,9]}'
expect_out "progress partial" "Out: Completed 7 of 10 (70.0%), 3 remaining" djc progress Out
expect_out "populate makes only the 3 missing" "Out: 3 made, 0 errors, 0 skipped" djc populate Out --make ./mk.sh
check "only keys 2 5 9 made" [ "$(sort -n log.Out | tr '\n' ' ')" = "2 5 9 " ]
}
tcase every_key_once progress_before

case_restrictions() {
# ---------------------------------------------------------------- restrictions
rm -f log.Out2
expect_out "populate --where list" "Out2: 3 made, 0 errors, 0 skipped" djc populate Out2 --where '{"id":[1,3,7]}' --make ./mk.sh
check "only 1 3 7 made" [ "$(sort -n log.Out2 | tr '\n' ' ')" = "1 3 7 " ]
expect_out "Out2 has exactly 1 3 7" '{"id":1,"v":10}
{"id":3,"v":30}
{"id":7,"v":70}' djc fetch Out2 --format json
expect_out "populate --where comparison" "Out2: 2 made, 0 errors, 0 skipped" djc populate Out2 --where '{"id":{">":8}}' --make ./mk.sh
expect_out "progress --where" "Out2: Completed 2 of 3 (66.7%), 1 remaining" djc progress Out2 --where '{"id":{">":7}}'
expect_fail 2 "--where on an unknown attribute is bad input" "nope" djc populate Out2 --where '{"nope":1}' --make ./mk.sh
expect_fail 2 "--where that is not JSON" "JSON" djc populate Out2 --where '{id' --make ./mk.sh
check "no make ran for bad restrictions" [ "$(lines log.Out2)" = 5 ]
}
tcase restrictions every_key_once

case_max_calls() {
# ---------------------------------------------------------------- --max-calls
rm -f log.Out2
expect_out "--max-calls 2" "Out2: 2 made, 0 errors, 0 skipped" djc populate Out2 --max-calls 2 --make ./mk.sh
check "--max-calls: 2 make starts" [ "$(lines log.Out2)" = 2 ]
check "--max-calls: 7 rows in all" [ "$(count Out2)" = 7 ]
expect_out "--max-calls with --processes 3" "Out2: 2 made, 0 errors, 0 skipped" djc populate Out2 --max-calls 2 --processes 3 --make ./mk.sh
check "--max-calls with processes: 4 make starts in all" [ "$(lines log.Out2)" = 4 ]
check "--max-calls with processes: 9 rows" [ "$(count Out2)" = 9 ]
expect_out "finish Out2" "Out2: 1 made, 0 errors, 0 skipped" djc populate Out2 --make ./mk.sh
}
tcase max_calls restrictions

case_failing_make() {
# ---------------------------------------------------------------- a failing make
djc delete Out2 >/dev/null
rm -f log.Out2
run djc populate Out2 --make ./mk_fail4.sh
check "failing make: exit 1" [ "$RC" = 1 ]
check "failing make: first error stops (3 made, 1 error)" [ "$(printf '%s\n' "$OUT" | head -1)" = "Out2: 3 made, 1 error, 0 skipped" ]
check "failing make: error line names key and message" [ "$(printf '%s\n' "$OUT" | sed -n 2p)" = 'error {"id": 4}: make exited with status 3: boom for 4' ]
check "failing make: one stderr line with the message" [ "$ERR" = "djc: 1 make call of Out2 failed; key {\"id\": 4}: make exited with status 3: boom for 4" ]
check "failing make: no key after 4 was started" [ "$(sort -n log.Out2 | tr '\n' ' ')" = "1 2 3 4 " ]
check "failing make: rows 1-3 only" [ "$(count Out2)" = 3 ]
check "failing make: rows 1-3 only (2)" [ "$(count Out2 '{"id":4}')" = 0 ]
rm -f log.Out2
run djc populate Out2 --suppress-errors --json --make ./mk_fail4.sh
check "--suppress-errors: exit 1" [ "$RC" = 1 ]
check "--suppress-errors --json: counts" [ "$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count,.skipped_count,.lost_count,.interrupted]')" = '[6,1,0,0,null]' ]
check "--suppress-errors --json: the error" [ "$(printf '%s' "$OUT" | jq -c '.errors')" = '[{"key":{"id":4},"message":"make exited with status 3: boom for 4"}]' ]
check "--suppress-errors: went on (7 starts: 4..10)" [ "$(sort -n log.Out2 | tr '\n' ' ')" = "4 5 6 7 8 9 10 " ]
check "--suppress-errors: 9 rows, none for 4" [ "$(count Out2)" = 9 ]
check "--suppress-errors: 9 rows, none for 4 (2)" [ "$(count Out2 '{"id":4}')" = 0 ]
}
tcase failing_make max_calls

case_bad_output() {
# ---------------------------------------------------------------- bad output is an error, never a partial insert
badmake() {  # name body: write mk_NAME.sh
	printf '#!/bin/sh\n%s\n' "$2" > "mk_$1.sh"
	chmod +x "mk_$1.sh"
}
badmake malformed 'echo "{\"v\": "'
badmake wrongtype 'echo "{\"v\": \"abc\"}"'
badmake otherkey 'echo "{\"id\": 99, \"v\": 1}"'
badmake killed 'echo "{\"v\": 1}"; kill -9 $$'
badmake norow 'exit 0'
badmake extra 'echo "{\"v\": 1, \"zzz\": 2}"'
badmake tworows 'echo "{\"v\": 1}"; echo "{\"v\": 2}"'
djc delete Out2 >/dev/null
declare -A msgs
for m in malformed wrongtype otherkey killed norow extra tworows; do
	run djc populate Out2 --where '{"id":1}' --json --make "./mk_$m.sh"
	check "bad output ($m): exit 1, 1 error, 0 made" [ "$RC" = 1 ]
	check "bad output ($m): exit 1, 1 error, 0 made (2)" [ "$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count]')" = '[0,1]' ]
	msgs["$m"]=$(printf '%s' "$OUT" | jq -r '.errors[0].message')
	check "bad output ($m): nothing inserted" [ "$(count Out2)" = 0 ]
done
check "malformed JSON named" grep -q "malformed JSON" <<< "${msgs[malformed]}"
check "wrong type named" grep -qi "v" <<< "${msgs[wrongtype]}"
check "another key named" grep -Eq "id|key" <<< "${msgs[otherkey]}"
check "signal named" [ "${msgs[killed]}" = "make killed by signal 9 (SIGKILL)" ]
check "no row named" [ "${msgs[norow]}" = "make produced no row for Out2" ]
check "unknown attribute named" grep -q "zzz" <<< "${msgs[extra]}"

# part tables: a good part row then a bad one inserts nothing anywhere
badmake partbad 'echo "{\"v\": 1}"; echo "{\"_part\":\"Item\",\"item\":1,\"w\":5}"; echo "{\"_part\":\"Item\",\"item\":2,\"w\":\"x\"}"'
badmake partmalformed 'echo "{\"v\": 1}"; echo "{\"_part\":\"Item\",\"item\":1,\"w\":5}"; echo "{oops"'
badmake partdup 'echo "{\"v\": 1}"; echo "{\"_part\":\"Item\",\"item\":1,\"w\":5}"; echo "{\"_part\":\"Item\",\"item\":1,\"w\":6}"'
badmake partunknown 'echo "{\"v\": 1}"; echo "{\"_part\":\"Nope\",\"item\":1,\"w\":5}"'
badmake partfirst 'echo "{\"_part\":\"Item\",\"item\":1,\"w\":7}"; echo "{\"v\": $DJC_KEY_id}"'
badmake partgood 'echo "{\"v\": $DJC_KEY_id}"; echo "{\"_part\":\"Item\",\"item\":1,\"w\":5}"; echo "{\"_part\":\"WithPart.Item\",\"item\":2,\"w\":6}"'
for m in partbad partmalformed partdup partunknown; do
	run djc populate WithPart --where '{"id":2}' --make "./mk_$m.sh"
	check "$m: exit 1" [ "$RC" = 1 ]
	check "$m: 0 made, 1 error" [ "$(printf '%s\n' "$OUT" | head -1)" = "WithPart: 0 made, 1 error, 0 skipped" ]
	check "$m: no master row" [ "$(count WithPart)" = 0 ]
	check "$m: no part row" [ "$(count WithPart.Item)" = 0 ]
done
expect_out "good part rows" "WithPart: 1 made, 0 errors, 0 skipped" djc populate WithPart --where '{"id":2}' --make ./mk_partgood.sh
expect_out "part rows inserted with the master's key" '{"id":2,"item":1,"w":5}
{"id":2,"item":2,"w":6}' djc fetch WithPart.Item --format json
expect_out "part row printed before the master row" "WithPart: 1 made, 0 errors, 0 skipped" djc populate WithPart --where '{"id":3}' --make ./mk_partfirst.sh
expect_out "its part row" '{"id":3,"item":1,"w":7}' djc fetch WithPart.Item --where '{"id":3}' --format json
}
tcase bad_output failing_make

case_environment() {
# ---------------------------------------------------------------- environment and no shell
cat > mk_env.sh <<'P'
#!/bin/sh
stdin=$(cat)
printf '%s\n' "$DJC_KEY" >> "$T/env.key"
printf '%s\n' "$stdin" >> "$T/env.stdin"
printf '%s\n' "$DJC_KEY_name" >> "$T/env.name"
printf '%s\n' "$DJC_TABLE" >> "$T/env.table"
printf '%s\n' "$DJC_DATABASE_URL" >> "$T/env.url"
printf '%s\n' "${GNUTLS_NO_IMPLICIT_INIT-unset}" >> "$T/env.gnutls"
cat "/proc/$PPID/maps" >> "$T/env.maps"
printf '{"n": %d}\n' "${#DJC_KEY_name}"
P
chmod +x mk_env.sh
# key values with shell metacharacters, inserted as JSON
cat > txt.jsonl <<'P'
{"name":"$(touch pwned)"}
{"name":"a;touch pwned2"}
{"name":"it's \"quoted\" `touch pwned3`"}
P
expect_out "insert awkward keys" "inserted 3 rows into Txt" djc insert Txt txt.jsonl
expect_out "populate with awkward keys" "TxtOut: 3 made, 0 errors, 0 skipped" djc populate TxtOut --make ./mk_env.sh
check "no command in a key was executed" [ ! -e pwned ]
check "no command in a key was executed (2)" [ ! -e pwned2 ]
check "no command in a key was executed (3)" [ ! -e pwned3 ]
check "no command in a key was executed (4)" [ ! -e "$ROOT/pwned" ]
check "DJC_KEY_name verbatim" [ "$(sort env.name)" = "$(printf '%s\n' '$(touch pwned)' 'a;touch pwned2' "it's \"quoted\" \`touch pwned3\`" | sort)" ]
check "DJC_KEY is the key as JSON" [ "$(sort env.key)" = "$(sort txt.jsonl)" ]
check "stdin is the key as JSON" [ "$(sort env.stdin)" = "$(sort txt.jsonl)" ]
check "DJC_TABLE" [ "$(sort -u env.table)" = "TxtOut" ]
check "DJC_DATABASE_URL" [ "$(sort -u env.url)" = "$DJC_DATABASE_URL" ]
# the setting djc uses while loading libpq is not passed on to makes
check "make programs do not inherit GNUTLS_NO_IMPLICIT_INIT" [ "$(sort -u env.gnutls)" = "unset" ]
# a worker maps only its own backend's client library (memory: bench/README.md)
case $DJC_BACKEND in
sqlite) own=libsqlite3 others='libpq\.|libmariadb' ;;
postgresql) own=libpq others='libsqlite3|libmariadb|libm\.so' ;;
mysql) own=libmariadb others='libsqlite3|libpq\.|libm\.so' ;;
esac
# (a sanitizer build's runtime maps libm itself)
if [ -n "$SAN_CFLAGS" ]; then others=${others%|libm\\.so}; fi
check "the worker maps $own" grep -q "$own" env.maps
check "the worker maps no other backend's library" sh -c "! grep -Eq '$others' env.maps"
expect_out "row computed from the verbatim key" '{"name":"$(touch pwned)","n":14}' djc fetch TxtOut --where '{"name":"$(touch pwned)"}' --format json
# --make arguments are passed as given, not through a shell
cat > mk_args.sh <<'P'
#!/bin/sh
printf '%s|' "$@" >> "$T/args"
echo >> "$T/args"
echo "{\"v\": $DJC_KEY_id}"
P
chmod +x mk_args.sh
djc delete Out2 >/dev/null
expect_out "--make with arguments" "Out2: 1 made, 0 errors, 0 skipped" djc populate Out2 --where '{"id":1}' --make ./mk_args.sh 'a b' '$HOME' '--json' ';'
check "arguments verbatim" [ "$(cat args)" = 'a b|$HOME|--json|;|' ]
expect_fail 1 "a missing make program is an error" "cannot run make program './nope.sh'" djc populate Out2 --where '{"id":2}' --make ./nope.sh
check "missing program: nothing inserted" [ "$(count Out2)" = 1 ]
}
tcase environment bad_output

case_make_line() {
# ---------------------------------------------------------------- the make = line
expect_out "make line used without --make" "Auto: 10 made, 0 errors, 0 skipped" djc populate Auto
check "make line: 10 starts with its arguments" [ "$(lines log.auto)" = 10 ]
check "make line: 10 starts with its arguments (2)" [ "$(sort -u log.auto | cut -d' ' -f2- | sort -u)" = "first arg|second" ]
expect_out "make line rows" '{"id":10,"v":1010}' djc fetch Auto --where '{"id":10}' --format json
expect_fail 2 "no make anywhere is bad input" "has no make" djc populate Out2
}
tcase make_line environment

case_make_line_words() {
# ---------------------------------------------------------------- the make = line's words, as sh splits them
# A backslash outside quotes takes the next character as it is (a path
# with a space: my\ dir); in double quotes it does so only before " \ $ `
# and is itself elsewhere ("a\nb" stays a, backslash, n, b); in single
# quotes it is itself.
cat > mk_words.py <<'P'
#!/usr/bin/env python3
import json, os, sys
with open(os.path.join(os.environ["T"], "log.words"), "w") as f:
    f.write(json.dumps(sys.argv[1:]))
print(json.dumps({"v": 1}))
P
chmod +x mk_words.py
cat > words.djc <<'P'
Words (computed)
    -> Src
    ---
    v : int64
    make = ./mk_words.py my\ dir "a\nb" "q\" \\ \$" 'c\d' x\\y tail\
P
expect_rc 0 "declare a make line with backslashes" djc declare words.djc
expect_rc 0 "populate by it" djc populate Words --where '{"id": 1}'
check "its words are sh's" test "$(cat log.words)" = '["my dir", "a\\nb", "q\" \\ $", "c\\d", "x\\y", "tail\\"]'
run djc declare words.djc
check "declared again: nothing changed" test "$RC:$OUT" = "0:exists  Words (computed) as __words"
}
tcase make_line_words make_line

case_processes_4() {
# ---------------------------------------------------------------- --processes 4 == 1
for i in $(seq 1 60); do echo "{\"mid\":$i}"; done | djc insert Many >/dev/null
expect_out "populate 1 process" "ManyOne: 60 made, 0 errors, 0 skipped" djc populate ManyOne --make ./mk_many.sh
expect_out "populate 4 processes" "ManyFour: 60 made, 0 errors, 0 skipped" djc populate ManyFour --processes 4 --make ./mk_many.sh
check "4 processes: 60 starts, 60 distinct" [ "$(lines log.ManyFour)" = 60 ]
check "4 processes: 60 starts, 60 distinct (2)" [ "$(distinct log.ManyFour)" = 60 ]
one=$(djc fetch ManyOne --format json)
four=$(djc fetch ManyFour --format json)
check "--processes 4 fills the same table as 1" [ "$one" = "$four" ]
check "--processes 4 fills the same table as 1 (2)" [ "$(printf '%s\n' "$one" | grep -c .)" = 60 ]
# errors from workers reach the parent
cat > mk_many_fail.sh <<'P'
#!/bin/sh
if [ $((DJC_KEY_mid % 20)) = 0 ]; then echo "bad $DJC_KEY_mid" >&2; exit 1; fi
echo "{\"sq\": 0, \"tag\": \"x\"}"
P
chmod +x mk_many_fail.sh
djc delete ManyFour >/dev/null
run djc populate ManyFour --processes 4 --suppress-errors --json --make ./mk_many_fail.sh
check "4 processes with errors: exit 1, 57 made, 3 errors" [ "$RC" = 1 ]
check "4 processes with errors: exit 1, 57 made, 3 errors (2)" [ "$(printf '%s' "$OUT" | jq -c '[.success_count,.error_count]')" = '[57,3]' ]
check "4 processes: each error reported with its key" \
	[ "$(printf '%s' "$OUT" | jq -c '[.errors[] | [.key.mid, .message]] | sort')" = '[[20,"make exited with status 1: bad 20"],[40,"make exited with status 1: bad 40"],[60,"make exited with status 1: bad 60"]]' ]
}
tcase processes_4 make_line

case_display_progress() {
# ---------------------------------------------------------------- --display-progress
djc delete Out2 >/dev/null
run djc populate Out2 --display-progress --make ./mk.sh
check "--display-progress: stdout unchanged" [ "$RC" = 0 ]
check "--display-progress: stdout unchanged (2)" [ "$OUT" = "Out2: 10 made, 0 errors, 0 skipped" ]
check "--display-progress: a bar on stderr" grep -Eq '^Out2: 100%\|#{20}\| 10/10 \[' <<< "$ERR"
run djc populate Out2 --make ./mk.sh
check "no bar without --display-progress" [ -z "$ERR" ]
djc delete Out2 >/dev/null
run env DJC_DISPLAY_PROGRESS=true "$DJC" populate Out2 --make ./mk.sh
check "display.progress=true: the bar without the option" grep -Eq '^Out2: 100%\|#{20}\| 10/10 \[' <<< "$ERR"
}
tcase display_progress processes_4

case_completed_meanwhile() {
# ---------------------------------------------------------------- completed meanwhile = skipped
# the make for key 3 has another populate complete key 3 first
cat > mk_race.sh <<'P'
#!/bin/sh
"$DJC" populate Out2 --where "{\"id\":$DJC_KEY_id}" --make "$T/mk_neg.sh" >/dev/null || exit 9
echo "{\"v\": 1}"
P
printf '#!/bin/sh\necho "{\\"v\\": -1}"\n' > mk_neg.sh
chmod +x mk_race.sh mk_neg.sh
djc delete Out2 --where '{"id":3}' >/dev/null
expect_out "a key completed meanwhile is skipped" "Out2: 0 made, 0 errors, 1 skipped" djc populate Out2 --make ./mk_race.sh
expect_out "the other process's row stays" '{"id":3,"v":-1}' djc fetch Out2 --where '{"id":3}' --format json
check "Out2 still 10 rows" [ "$(count Out2)" = 10 ]
}
tcase completed_meanwhile display_progress

# A make whose rows need more parameters than one statement may have: 25,000
# part rows of 3 attributes (75,000 values; MariaDB's and MySQL's limit is
# 65,535 a prepared statement). djc cuts them into statements of ~30,000
# each, but on MariaDB a commit ran all its statements as one compound
# statement, which bound them all: "commit: mysql: Prepared statement
# contains too many placeholders", and the key failed (DataJoint's populate
# makes it). Made now, with and without reservation.
case_many_part_rows() {
	cat > big.djc <<'P'
BigSrc (manual)
    bid : int32
    ---

BigOut (computed)
    -> BigSrc
    ---
    n : int64

BigOut.Item (part)
    item : int32
    ---
    w : int64
P
	cat > mk_big.sh <<'P'
#!/bin/sh
echo '{"n": 22000}'
awk 'BEGIN { for (i = 0; i < 22000; i++) printf "{\"_part\": \"Item\", \"item\": %d, \"w\": %d}\n", i, i * 3 }'
P
	chmod +x mk_big.sh
	expect_rc 0 "declare BigSrc, BigOut" djc declare big.djc
	printf '{"bid": 1}\n{"bid": 2}\n' > big.jsonl
	expect_rc 0 "insert BigSrc" djc insert BigSrc big.jsonl
	expect_rc 0 "populate 22,000 part rows with reservation" djc populate BigOut --reserve-jobs --where '{"bid": 1}' --make ./mk_big.sh
	check "made" grep -q "^BigOut: 1 made, 0 errors" <<< "$OUT"
	expect_rc 0 "and without" djc populate BigOut --make ./mk_big.sh
	check "made" grep -q "^BigOut: 1 made, 0 errors" <<< "$OUT"
	check "every part row" [ "$(count BigOut.Item)" = 44000 ]
}
tcase many_part_rows

finish
