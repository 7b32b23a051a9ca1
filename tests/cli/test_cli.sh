#!/bin/bash
# test_cli.sh - the command line's conventions: --opt=value and --opt value,
# global options anywhere, `--` ends the options, the closest command or
# option suggested on a typo (one line, exit 2), --make taking the rest of
# the line, help for every command.
. "$ROOT/tests/cli/lib.sh"
py() { python3 -c "$@"; }

cat > p.djc <<'P'
Src (manual)
    id : int32
    ---
    name : varchar(32)

Args (computed)
    -> Src
    ---
    args : varchar(200)
P
expect_rc 0 "declare" djc declare p.djc
printf '{"id": 1, "name": "a"}\n{"id": 2, "name": "b"}\n' > src.jsonl
expect_out "insert" "inserted 2 rows into Src" djc insert Src src.jsonl

case_opt_value() {
# ------------------------------------------------------------ --opt=value and --opt value
expect_out "--where VALUE" '{"id":2,"name":"b"}' djc fetch Src --where '{"id": 2}' --format json
expect_out "--where=VALUE" '{"id":2,"name":"b"}' djc fetch Src --where='{"id": 2}' --format=json
expect_out "options before the table" '{"id":2,"name":"b"}' djc fetch --format=json --where '{"id": 2}' Src
expect_out "--opt=VALUE holding '=' and spaces" "Args: Completed 0 of 1 (0.0%), 1 remaining" djc progress Args --where='{"id": {"=": 1}}'
expect_fail 2 "--opt VALUE takes a value that starts with '-'" "^djc: --priority expects an integer >= 0, got '-1'$" \
	djc populate Args --priority -1 --make /bin/true
expect_fail 2 "a flag given a value" '^djc: progress: --json takes no value$' djc progress Src --json=yes
expect_fail 2 "--opt= with an empty value is still the option's value" '^djc: --where is not valid JSON: ' djc fetch Src --where=
expect_fail 2 "--processes=0 is checked like --processes 0" "^djc: --processes expects an integer >= 1, got '0'$" \
	djc populate Args --processes=0 --make /bin/true
}
tcase opt_value

case_global_options() {
# ------------------------------------------------------------ global options anywhere
# a bogus URL proves where --db was applied: every position must reach it
for args in "--db bogus://x fetch Src" "fetch --db bogus://x Src" "fetch Src --db bogus://x" "fetch Src --db=bogus://x" \
	"jobs --db bogus://x refresh Args" "jobs refresh Args --db=bogus://x" "progress Src --json --db bogus://x"; do
	# shellcheck disable=SC2086
	expect_fail 2 "--db anywhere: djc $args" "^djc: unknown database URL scheme 'bogus'" djc $args
done
expect_fail 2 "--schema anywhere is checked" "^djc: invalid schema name 'a-b'" djc fetch Src --schema 'a-b'
expect_fail 2 "--schema= anywhere is checked" "^djc: invalid schema name 'a b'" djc tables --schema='a b'
expect_out "the last --db wins" '{"id":1,"name":"a"}' djc --db bogus://x fetch Src --where '{"id": 1}' --format json --db "$DJC_DATABASE_URL"
expect_fail 2 "--db without a value after the command" '^djc: fetch: unknown or incomplete option --db$' djc fetch Src --db
}
tcase global_options opt_value

case_double_dash() {
# ------------------------------------------------------------ -- ends the options
expect_fail 2 "after --, --frob is a table name" '^djc: unknown table "--frob" ' djc fetch -- --frob
expect_fail 2 "after --, --db is an argument, not the global option" '^djc: fetch takes one TABLE$' djc fetch Src -- --db
expect_out "-- before the table" '{"id":1,"name":"a"}' djc fetch --where '{"id": 1}' --format json -- Src
expect_out "a lone - is an argument (stdin)" "inserted 1 row into Src" sh -c 'printf "{\"id\": 3, \"name\": \"c\"}\n" | "$DJC" insert Src -'
}
tcase double_dash global_options

case_typos() {
# ------------------------------------------------------------ typos
expect_fail 2 "a mistyped command: the closest suggested" "^djc: unknown command 'popluate'; did you mean 'populate'\?$" djc popluate Args
expect_fail 2 "a command with a letter missing" "^djc: unknown command 'fetc'; did you mean 'fetch'\?$" djc fetc Src
expect_fail 2 "a command with a letter changed" "^djc: unknown command 'tablez'; did you mean 'tables'\?$" djc tablez
expect_fail 2 "a command far from any: the plain message" "^djc: unknown command 'frobnicate' \(see djc --help\)$" djc frobnicate
expect_fail 2 "a mistyped option: the closest suggested" "^djc: fetch: unknown option --wher; did you mean --where\?$" djc fetch Src --wher '{}'
expect_fail 2 "a mistyped option with =value" "^djc: fetch: unknown option --fromat; did you mean --format\?$" djc fetch Src --fromat=json
expect_fail 2 "an abbreviated option is not guessed but suggested" "^djc: populate: unknown option --reserve; did you mean --reserve-jobs\?$" \
	djc populate Args --reserve --make /bin/true
expect_fail 2 "a mistyped global option before the command" "^djc: unknown option --shcema; did you mean --schema\?$" djc --shcema x tables
expect_fail 2 "a mistyped global option after the command" "^djc: tables: unknown option --bd; did you mean --db\?$" djc tables --bd x
expect_fail 2 "a mistyped subcommand" "^djc: jobs: unknown subcommand 'refersh'; did you mean 'refresh'\?$" djc jobs refersh Args
expect_fail 2 "an unknown short option" '^djc: fetch: unknown or incomplete option -x$' djc fetch Src -x
expect_fail 2 "a typo in djc help" "^djc: unknown command 'jobs clera'; did you mean 'jobs clear'\?$" djc help jobs clera
check "nothing was written by all that" test "$(count Src)" = 3
}
tcase typos double_dash

case_make_rest() {
# ------------------------------------------------------------ --make takes the rest of the line
cat > mk.sh <<'P'
#!/bin/sh
# the arguments, as one string
printf '{"args": "%s"}\n' "$*"
P
chmod +x mk.sh
run djc populate Args --where '{"id": 1}' --make ./mk.sh --json -x --db nowhere --help -- --where
check "--make: its arguments may start with '-' and are not djc's" test "$RC:$OUT" = "0:Args: 1 made, 0 errors, 0 skipped"
expect_out "the make got them all, in order" '{"id":1,"args":"--json -x --db nowhere --help -- --where"}' \
	djc fetch Args --where '{"id": 1}' --format json
run djc populate Args --where '{"id": 2}' --make=./mk.sh -a=1 b
check "--make=PROG ARG...: PROG and then its arguments" test "$RC:$OUT" = "0:Args: 1 made, 0 errors, 0 skipped"
expect_out "the make got its arguments" '{"id":2,"args":"-a=1 b"}' djc fetch Args --where '{"id": 2}' --format json
expect_fail 2 "--make without a program" '^djc: populate: unknown or incomplete option --make$' djc populate Args --make
expect_fail 2 "--make before the table: the table is the make's" '^djc: populate needs a TABLE' djc populate --make ./mk.sh Args
}
tcase make_rest

case_only_declare_creates() {
# ------------------------------------------------------------ only declare creates a database or schema
# a mistyped --schema (or a missing SQLite file) is a one-line error, exit
# 2, and leaves nothing behind: the second try finds nothing either
if [ "$DJC_BACKEND" = sqlite ]; then
	missing() { test ! -e "$T/nope.db" && test ! -e "$T/djc.nope_$1.db"; }
else
	missing() { true; }
fi
n=0
for cmd in "tables" "fetch Src" "progress Src" "jobs Args" "jobs Args --status error" "jobs Args --json" \
	"insert Src src.jsonl" "delete Src" "populate Args --make /bin/true" "jobs refresh Args" \
	"jobs clear Args --status error" "jobs ignore Args {\"id\":1}"; do
	n=$((n + 1))
	for try in 1 2; do
		# shellcheck disable=SC2086
		expect_fail 2 "$cmd with a schema that does not exist ($try)" "^djc: no (SQLite database|schema) '[^']*nope_$n" \
			djc --schema "nope_$n" $cmd
	done
	check "$cmd created no schema" missing "$n"
	if [ "$DJC_BACKEND" = sqlite ]; then
		# shellcheck disable=SC2086
		expect_fail 2 "$cmd on a SQLite file that does not exist" "^djc: no SQLite database '$T/nope\.db' \(djc declare creates it; or give --db\)$" \
			djc --db "sqlite:$T/nope.db" $cmd
		check "$cmd created no file" missing "$n"
	fi
done
(mkdir -p empty && cd empty && env -u DJC_DATABASE_URL -u DJC_DATABASE_SCHEMA "$DJC" tables) >/dev/null 2>empty.err
check "djc tables in an empty directory: a one-line error, no djc.db" sh -c \
	'[ ! -e empty/djc.db ] && [ "$(cat empty.err)" = "djc: no SQLite database '"'djc.db'"' (djc declare creates it; or give --db)" ]'
expect_rc 0 "declare creates the schema" djc --schema "nope_1" declare p.djc
expect_out "...which then exists, empty" "" djc --schema "nope_1" fetch Src --format json
expect_out "...and the other commands use it" "" djc --schema "nope_1" jobs Args --status error
}
tcase only_declare_creates

case_help() {
# ------------------------------------------------------------ help
for c in declare tables insert fetch delete populate progress jobs "jobs refresh" "jobs clear" "jobs ignore" config help; do
	# shellcheck disable=SC2086
	expect_rc 0 "djc help $c exits 0" djc help $c
	check "djc help $c prints its usage" sh -c 'printf "%s" "$1" | grep -q "^usage: djc $2"' _ "$OUT" "$c"
	# shellcheck disable=SC2086
	run djc $c --help
	check "djc $c --help prints the same" test "$OUT" = "$(djc help $c)"
	# shellcheck disable=SC2086
	run djc $c -h
	check "djc $c -h prints the same" test "$OUT" = "$(djc help $c)"
done
run djc populate Args --db nowhere --help
check "--help anywhere before --make wins over the rest" sh -c 'test "$1" = 0 && printf "%s" "$2" | grep -q "^usage: djc populate"' _ "$RC" "$OUT"
expect_out "djc help: the list" "$(djc --help)" djc help
check "the list names every subcommand" sh -c 'printf "%s" "$1" | grep -q "^  jobs refresh TABLE " && printf "%s" "$1" | grep -q "^  jobs ignore TABLE KEY_JSON "' _ "$OUT"
}
tcase help @nodb

case_public_api() {
# ------------------------------------------------------------ the command uses only the public API
check "src/cli includes djc.h and its own headers only" sh -c \
	'! grep -h "^#include \"" "$1"/src/cli/*.[ch] | grep -v -e "\"cli.h\"" -e "\"commands.h\"" -e "\"djc.h\""' _ "$ROOT"
}
tcase public_api

finish
