# lib.sh - helpers for the CLI behaviour suite. Each test file is run once per
# backend by scripts/run-tests.sh with:
#   DJC               the djc binary
#   DJC_DATABASE_URL  the backend (a fresh SQLite file, or a server URL)
#   DJC_DATABASE_SCHEMA  a fresh schema for this file (servers)
#   DJC_BACKEND       sqlite | postgresql | mysql
#   T                 a fresh temporary directory (the working directory)
# A test file calls the helpers below and ends with `finish`, which prints
# "N passed, N failed" and sets the exit status.

PASS=0
FAIL=0
NAME=$(basename "$0" .sh)

djc() { "$DJC" "$@"; }

# mariadb_cli ARGS...: the mariadb client on the server of $DJC_DATABASE_URL
# (mysql://user:password@host:port/db), as its user
mariadb_cli() {
	local u=${DJC_DATABASE_URL#mysql://} cred host port
	cred=${u%%@*}; u=${u#*@}; host=${u%%:*}; u=${u#*:}; port=${u%%/*}
	mariadb --no-defaults -h"$host" -P"$port" -u"${cred%%:*}" -p"${cred#*:}" "$@"
}

_report() {  # status description [details]
	if [ "$1" = ok ]; then
		PASS=$((PASS + 1))
	else
		FAIL=$((FAIL + 1))
		printf '  FAIL [%s/%s] %s\n' "$NAME" "$DJC_BACKEND" "$2" >&2
		[ -n "$3" ] && printf '%s\n' "$3" | sed 's/^/      /' >&2
	fi
	return 0
}

# run CMD...: runs it, capturing stdout in $OUT, stderr in $ERR, status in $RC
run() {
	OUT=$("$@" 2>"$T/.stderr")
	RC=$?
	ERR=$(cat "$T/.stderr")
	return 0
}

# check DESC CONDITION-COMMAND...: passes when the command succeeds
check() {
	desc=$1; shift
	if "$@"; then _report ok "$desc"; else _report fail "$desc" "RC=$RC
OUT=$OUT
ERR=$ERR"; fi
}

# expect_rc N DESC CMD...: the command exits with status N
expect_rc() {
	want=$1; desc=$2; shift 2
	run "$@"
	if [ "$RC" = "$want" ]; then _report ok "$desc"; else _report fail "$desc (exit $RC, wanted $want)" "OUT=$OUT
ERR=$ERR"; fi
}

# expect_out DESC EXPECTED CMD...: exit 0 and stdout equals EXPECTED
expect_out() {
	desc=$1; want=$2; shift 2
	run "$@"
	if [ "$RC" = 0 ] && [ "$OUT" = "$want" ]; then _report ok "$desc"; else _report fail "$desc" "RC=$RC
wanted: $want
got:    $OUT
ERR=$ERR"; fi
}

# expect_fail N DESC PATTERN CMD...: exit N, stderr is ONE line matching PATTERN (grep -E)
expect_fail() {
	want=$1; desc=$2; pat=$3; shift 3
	run "$@"
	lines=$(printf '%s\n' "$ERR" | grep -c .)
	if [ "$RC" = "$want" ] && [ "$lines" = 1 ] && printf '%s' "$ERR" | grep -Eq -- "$pat"; then
		_report ok "$desc"
	else
		_report fail "$desc (exit $RC, wanted $want; $lines stderr lines; pattern $pat)" "OUT=$OUT
ERR=$ERR"
	fi
}

# count TABLE [WHERE]: prints the number of rows
count() {
	if [ -n "$2" ]; then "$DJC" fetch "$1" --where "$2" --format json | grep -c . ; else "$DJC" fetch "$1" --format json | grep -c . ; fi
}

finish() {
	printf '%s [%s]: %d passed, %d failed\n' "$NAME" "$DJC_BACKEND" "$PASS" "$FAIL"
	[ "$FAIL" = 0 ]
}
