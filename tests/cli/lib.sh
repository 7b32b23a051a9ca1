# lib.sh - helpers for the CLI behaviour suite. Each test file is run once per
# backend by scripts/run-tests.sh with:
#   DJC               the djc binary
#   DJC_DATABASE_URL  the backend (a fresh SQLite file, or a server URL)
#   DJC_DATABASE_SCHEMA  a fresh schema for this file (servers)
#   DJC_BACKEND       sqlite | postgresql | mysql
#   T                 a fresh temporary directory (the working directory)
# A test file calls the helpers below and ends with `finish`, which prints
# "N passed, N failed" and sets the exit status.
#
# Named cases. A file's sections are cases: a function case_NAME holding the
# section, followed at once by the line `tcase NAME [NEEDS...]` (at the start
# of a line, nothing else on it), which runs it unless DJC_CASE selects
# other cases:
#   case_retry() {
#   	...checks...
#   }
#   tcase retry declare
# Code between cases (outside the functions) is shared setup and always runs.
# DJC_CASE (scripts/run-tests.sh passes it through; `make check T=test_x
# CASE=name`) holds one name or several separated by commas (a space or '-'
# stands for '_'). THE RULE: a case must pass when it runs alone. A case that
# uses what an earlier case made (tables, rows, files, variables) names that
# case in NEEDS; selecting it runs its NEEDS first (and theirs), in file
# order. Helper functions used by several cases are defined outside the
# cases. DJC_CASE=list prints the case names and runs nothing; an unknown
# name is an error (exit 2) before anything runs. The `tcase` lines are read
# from the file when it starts, so they must be plain literal lines.
# A case that uses no database at all (the manual pages against the CLI's
# help, say) ends its line with `@nodb`: it runs once, in the file's SQLite
# run only (on every backend it would check the same thing four times), and
# with DJC_DATABASE_URL and DJC_DATABASE_SCHEMA set to what no driver
# accepts, so a command in it that opens a database fails its check.
# DJC_TEST_TRACE=1 prints "ok: DESCRIPTION" for every passing check (to compare
# two versions of a file: scripts/check-diff.sh). DJC_TEST_CASETIME=FILE
# appends one line per case run: its wall seconds and the CPU seconds
# (user+sys) of the file's shell and the processes it waited for.

PASS=0
FAIL=0
NAME=$(basename "$0" .sh)

# ------------------------------------------------------------- named cases
declare -A _CASE_ON=() _CASE_NEEDS=() _CASE_NODB=()
_CASES=()
_case_read() {  # the file's `tcase NAME NEEDS... [@nodb]` lines, into _CASES, _CASE_NEEDS, _CASE_NODB
	local line name
	while IFS= read -r line; do
		line=${line#tcase }
		[ "${line% @nodb}" != "$line" ] && line=${line% @nodb} && _CASE_NODB[${line%% *}]=1
		name=${line%% *}
		_CASES+=("$name")
		[ "$line" = "$name" ] && _CASE_NEEDS[$name]="" || _CASE_NEEDS[$name]=${line#* }
	done < <(grep -E '^tcase [A-Za-z0-9_]+( [A-Za-z0-9_ ]*)?( @nodb)?$' "$0")
}
_case_mark() {  # NAME: selects it and what it needs
	local n
	[ -n "${_CASE_ON[$1]:-}" ] && return 0
	_CASE_ON[$1]=1
	for n in ${_CASE_NEEDS[$1]}; do
		[ -n "${_CASE_NEEDS[$n]+x}" ] ||
			{ echo "$NAME: case $1 needs $n, which is not a case" >&2; exit 2; }
		_case_mark "$n"
	done
}
_case_select() {  # from DJC_CASE; exits on list or an unknown name
	local sel=${DJC_CASE:-} w
	_case_read
	[ -z "$sel" ] && return 0
	if [ "$sel" = list ]; then
		printf '%s\n' "${_CASES[@]}"
		exit 0
	fi
	local IFS=,
	for w in $sel; do
		w=${w// /_}; w=${w//-/_}
		[ -z "$w" ] && continue
		if [ -z "${_CASE_NEEDS[$w]+x}" ]; then
			echo "$NAME: no case named $w; cases:$(printf " %s" "${_CASES[@]}")" >&2
			exit 2
		fi
		_case_mark "$w"
	done
}
_case_select

# tcase NAME [NEEDS...]: runs case_NAME when DJC_CASE is empty or selects it
# (the NEEDS are read from the file at its start: see above)
tcase() {
	[ -z "${DJC_CASE:-}" ] || [ -n "${_CASE_ON[$1]:-}" ] || return 0
	if [ -n "${_CASE_NODB[$1]:-}" ]; then
		[ "$DJC_BACKEND" = sqlite ] || return 0
		local _nodb_url=$DJC_DATABASE_URL _nodb_schema=${DJC_DATABASE_SCHEMA-}
		DJC_DATABASE_URL="nodb://no-database-in-case-$1" DJC_DATABASE_SCHEMA=nodb
		_tcase_run "$1"
		DJC_DATABASE_URL=$_nodb_url DJC_DATABASE_SCHEMA=$_nodb_schema
		return 0
	fi
	_tcase_run "$1"
}
_tcase_run() {
	if [ -z "${DJC_TEST_CASETIME:-}" ]; then
		"case_$1"
		_pycheck_flush
		return
	fi
	local _tc_t0=$SECONDS _tc_c0
	_cpu; _tc_c0=$_CPU
	"case_$1"
	_pycheck_flush
	_cpu
	printf 'casetime: %s %s wall %s cpu\n' "$NAME[$DJC_BACKEND]:$1" $((SECONDS - _tc_t0)) \
		"$(awk -v a="$_tc_c0" -v b="$_CPU" 'BEGIN { printf "%.2f", b - a }')" >> "$DJC_TEST_CASETIME"
}
# _cpu: sets _CPU to the CPU seconds (user+sys) this shell and the processes
# it waited for used (`times` not in $(...): a subshell has its own counts)
_cpu() {
	times > "$T/.times"
	_CPU=$(awk '{ for (i = 1; i <= NF; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] } } END { printf "%.2f", s }' "$T/.times")
}

djc() { "$DJC" "$@"; }

# Under a sanitizer build of djc (DJC_BUILD=build-san): SAN_CFLAGS, the
# flags a program built against its libdjc needs too, and ASAN_PRELOAD, its
# AddressSanitizer runtime and a space, to go first in an LD_PRELOAD that
# names another library (libfaketime): ASan's runtime must come first among
# a program's libraries. Both empty for a plain build.
SAN_CFLAGS= ASAN_PRELOAD=
_san_needed=$(readelf -d "$DJC" 2>/dev/null | grep -o 'lib[a-z]*san\.so[.0-9]*')
case $_san_needed in
*libasan*)
	SAN_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer"
	ASAN_PRELOAD="$(cc -print-file-name="$(printf '%s\n' "$_san_needed" | grep libasan)") " ;;
*libubsan*) SAN_CFLAGS=-fsanitize=undefined ;;
esac
unset _san_needed

# matching PATTERN FILE: sets MATCHED to the number of FILE's lines that
# match PATTERN (an extended regular expression; 0 without the file),
# counted by the shell: a polling loop's $(grep -c ...) was two processes a
# turn
matching() {
	local l
	MATCHED=0
	{ while IFS= read -r l || [ -n "$l" ]; do [[ $l =~ $1 ]] && MATCHED=$((MATCHED + 1)); done < "$2"; } 2>/dev/null
	return 0
}

# running PID: the process is there and not a zombie (as `ps -o stat=` tells,
# read from /proc by the shell: polling loops called ps every 50 ms)
running() {
	local l
	{ read -r l < "/proc/$1/stat"; } 2>/dev/null || return 1
	l=${l##*) }
	[ "${l%% *}" != Z ]
}

# The polling loops, a turn every 50 ms (nap), starting no process:
# wait_gone PID TURNS: until PID no longer runs (a zombie awaiting its
# reaper counts as gone); 1 when it still runs after TURNS, or no PID given
wait_gone() {
	local i=0
	[ -n "$1" ] || return 1
	while [ $i -lt "$2" ]; do running "$1" || return 0; nap 0.05; i=$((i + 1)); done
	return 1
}
# wait_lines PATTERN FILE N TURNS: until FILE has N lines matching PATTERN
# (as `matching` counts them); 1 when it has fewer after TURNS
wait_lines() {
	local i=0
	while matching "$1" "$2" && [ "$MATCHED" -lt "$3" ] && [ $i -lt "$4" ]; do nap 0.05; i=$((i + 1)); done
	matching "$1" "$2"
	[ "$MATCHED" -ge "$3" ]
}

# nap SECONDS: waits SECONDS without starting a process (a polling loop's
# `sleep` started one a turn, about 5 ms of CPU each on a small VM): read -t
# on a FIFO nobody writes to, opened read-write (so the open cannot block)
# for each wait, so no descriptor is left to the programs a test starts
[ -p "$T/.nap" ] || mkfifo "$T/.nap"
nap() { read -r -t "$1" _ <>"$T/.nap" || :; }

# mariadb_cli ARGS...: the mariadb client on the server of $DJC_DATABASE_URL
# (mysql://user:password@host:port/db), as its user
mariadb_cli() {
	local u=${DJC_DATABASE_URL#mysql://} cred host port
	cred=${u%%@*}; u=${u#*@}; host=${u%%:*}; u=${u#*:}; port=${u%%/*}
	mariadb --no-defaults -h"$host" -P"$port" -u"${cred%%:*}" -p"${cred#*:}" "$@"
}

# server_sql SQL: run SQL on the test server (PostgreSQL or MariaDB) as its
# superuser, one row a line, columns tab-separated (nothing on sqlite)
server_sql() {
	case $DJC_BACKEND in
	postgresql) psql "${DJC_SERVER_URL:-$DJC_DATABASE_URL}" -qAt -v ON_ERROR_STOP=1 -c "$1" ;;
	mysql) mariadb_cli -N -B -e "$1" ;;
	esac
}
# server_sql_each SQL...: each statement as server_sql runs one (in its own
# transaction, its rows as server_sql prints them), in order, over one
# connection of one client, stopping at the first that fails: a client and
# a connection per statement cost a setup of several statements about 60 ms
# of CPU each on PostgreSQL (psql's start, the server's backend)
server_sql_each() {
	local st args=()
	case $DJC_BACKEND in
	postgresql)
		for st in "$@"; do args+=(-c "$st"); done
		psql "${DJC_SERVER_URL:-$DJC_DATABASE_URL}" -qAt -v ON_ERROR_STOP=1 "${args[@]}" ;;
	mysql) mariadb_cli -N -B -e "$(printf '%s;\n' "$@")" ;;
	esac
}

_report() {  # status description [details]
	if [ "$1" = ok ]; then
		PASS=$((PASS + 1))
		[ "${DJC_TEST_TRACE:-0}" != 0 ] && printf 'ok: %s\n' "$2"
	else
		FAIL=$((FAIL + 1))
		printf '  FAIL [%s/%s] %s\n' "$NAME" "$DJC_BACKEND" "$2" >&2
		[ -n "$3" ] && printf '%s\n' "$3" | sed 's/^/      /' >&2
	fi
	return 0
}

# run CMD...: runs it, capturing stdout in $OUT, stderr in $ERR, status in $RC.
# A program (djc, or any command that is neither a shell function nor a
# builtin) runs from this shell with its output in files, read back by
# $(< FILE), which bash does without a process: OUT=$(CMD) forked a
# subshell per check besides the program, about 3 ms of this machine's
# serialised process creation each (docs/testing.md). A function or a
# builtin still runs in a subshell, so what it changes (variables, the
# directory, an exit) stays there. The files are per shell ($BASHPID): a
# test's background subshells run checks too.
_BUILTIN=" $(enable -a | sed 's/^enable //' | tr '\n' ' ') "
run() {
	local o="$T/.stdout$BASHPID" e="$T/.stderr$BASHPID"
	[ "$1" = djc ] && set -- "$DJC" "${@:2}"
	if declare -F "$1" >/dev/null || [[ $_BUILTIN == *" $1 "* ]]; then
		OUT=$("$@" 2>"$e")
		RC=$?
	else
		"$@" >"$o" 2>"$e"
		RC=$?
		OUT=$(< "$o")
	fi
	ERR=$(< "$e")   # (as $(cat FILE), without starting cat, or a subshell)
	: >"$o"; : >"$e"   # (a large output is not kept on disk until the next check)
	return 0
}

# check DESC CONDITION-COMMAND...: passes when the command succeeds
check() {
	desc=$1; shift
	if "$@"; then _report ok "$desc"; else _report fail "$desc" "RC=$RC
OUT=$OUT
ERR=$ERR"; fi
}

# pycheck DESC CODE ARGS...: as `check DESC python3 -c CODE ARGS...` (passes
# when CODE ends, or calls sys.exit with 0 or None; fails on another status
# or an exception), but CODE runs at the end of the case, with the case's
# other pychecks, in one python3 (tcase calls _pycheck_flush; finish too):
# a python3 start is 60-75 ms of CPU here, and the suite had about 40 such
# one-liners per backend. Each runs in a fresh namespace, in the directory
# and with the arguments of its call; a file it opens must not change before
# the case ends (pass its contents, "$(< FILE)", when it does).
_PYQ="$T/.pycheck"
_PYQ_DESC=()
pycheck() {
	_PYQ_DESC+=("$1")
	shift
	printf '%s\0%s\0' "$(($# - 1))" "$PWD" >> "$_PYQ"
	printf '%s\0' "$@" >> "$_PYQ"
}
_PYQ_RUN='import os, sys, traceback
f = open(sys.argv[1], "rb").read().split(b"\0")[:-1]
out = open(sys.argv[2], "w")
i = 0
while i < len(f):
    n = int(f[i]); cwd = os.fsdecode(f[i + 1]); code = os.fsdecode(f[i + 2])
    args = [os.fsdecode(a) for a in f[i + 3:i + 3 + n]]
    i += 3 + n
    st, why = 0, ""
    try:
        os.chdir(cwd)
        sys.argv = ["-c"] + args
        exec(compile(code, "<pycheck>", "exec"), {"__name__": "__main__"})
    except SystemExit as e:
        if isinstance(e.code, int): st = int(e.code)
        elif e.code is not None: st, why = 1, str(e.code)
    except BaseException:
        st, why = 1, traceback.format_exc()
    sys.stdout.flush()
    out.write("%d\n%s\0" % (st, why))
out.close()'
_pycheck_flush() {
	local i st res=() n=${#_PYQ_DESC[@]}
	[ "$n" -gt 0 ] || return 0
	python3 -c "$_PYQ_RUN" "$_PYQ" "$_PYQ.res"
	[ -f "$_PYQ.res" ] && mapfile -d '' res < "$_PYQ.res"
	for ((i = 0; i < n; i++)); do
		st=${res[i]:-"(no result: the python3 running the checks ended early)"}
		if [ "$st" = $'0\n' ]; then _report ok "${_PYQ_DESC[i]}"
		else _report fail "${_PYQ_DESC[i]}" "python: exit $st"; fi
	done
	_PYQ_DESC=()
	rm -f "$_PYQ" "$_PYQ.res"
}

# jqcheck DESC [-p PREFIX] [-s SUFFIX] FILTER EXPECTED: as
# `check DESC test "PREFIX$(jq -r FILTER 2>&1 <<<"$OUT")SUFFIX" = EXPECTED`,
# but FILTER runs when the file ends (finish), with the file's other
# jqchecks, in one jq: a jq start is 30-40 ms of CPU here, and test_serve
# and test_serve2 started about 40 a backend, one a check. $OUT is taken
# when jqcheck is called; it must be one JSON text (populate --json, jobs
# --json): anything else fails the check. FILTER's outputs are printed as
# jq -r prints a string, a number, a boolean or null, one a line, trailing
# newlines cut as $(...) cuts them (for an array or an object, which jq -r
# prints indented, use jq itself). A FILTER that fails fails its check.
# Call it from the file's own shell, not in a subshell ( (...), $(...), a
# pipeline): the check is kept in the shell's variables.
_JQQ="$T/.jqcheck"
_JQQ_DESC=() _JQQ_F=() _JQQ_WANT=() _JQQ_PRE=() _JQQ_SUF=()
jqcheck() {
	local pre="" suf=""
	_JQQ_DESC+=("$1")
	shift
	while :; do
		case $1 in
		-p) pre=$2; shift 2 ;;
		-s) suf=$2; shift 2 ;;
		*) break ;;
		esac
	done
	_JQQ_F+=("$1") _JQQ_WANT+=("$2") _JQQ_PRE+=("$pre") _JQQ_SUF+=("$suf")
	printf '%s\0' "$OUT" >> "$_JQQ"
}
_jqcheck_flush() {
	local i n=${#_JQQ_DESC[@]} prog res=() got
	[ "$n" -gt 0 ] || return 0
	prog='def _jqc_r: if type == "string" then . else tojson end;
($_jqc_all | split("\u0000")) as $_jqc_d'
	for ((i = 0; i < n; i++)); do
		[ "$i" = 0 ] && prog+=' | ' || prog+=', '
		prog+="((\$_jqc_d[$i] | try ([fromjson | (${_JQQ_F[i]}
) | _jqc_r] | join(\"\\n\")) catch (\"jq: error: \" + tostring)) + \"\\u0000\")"
	done
	jq -jn --rawfile _jqc_all "$_JQQ" "$prog" > "$_JQQ.res" 2>&1
	mapfile -d '' res < "$_JQQ.res"
	for ((i = 0; i < n; i++)); do
		if [ "$i" -lt "${#res[@]}" ]; then
			got=${res[i]}
			got=${got%"${got##*[!$'\n']}"}   # the trailing newlines $(...) cuts
			got=${_JQQ_PRE[i]}$got${_JQQ_SUF[i]}
		else
			got="(no result: jq ended early: $(< "$_JQQ.res"))"
		fi
		if [ "$got" = "${_JQQ_WANT[i]}" ]; then _report ok "${_JQQ_DESC[i]}"
		else _report fail "${_JQQ_DESC[i]}" "wanted: ${_JQQ_WANT[i]}
got:    $got"; fi
	done
	_JQQ_DESC=() _JQQ_F=() _JQQ_WANT=() _JQQ_PRE=() _JQQ_SUF=()
	rm -f "$_JQQ" "$_JQQ.res"
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

# _nonempty_lines TEXT: sets lines to the number of its lines holding a
# character (as grep -c . counts them) and _nl_last to the last of them, in the
# shell: no process started
_nonempty_lines() {
	local l IFS=
	lines=0 _nl_last=
	while read -r l; do
		[ -n "$l" ] && lines=$((lines + 1)) _nl_last=$l
	done <<<"$1"
	return 0
}

# expect_fail N DESC PATTERN CMD...: exit N, stderr is ONE line matching
# PATTERN (an extended regular expression, as grep -E reads it: matched by
# the shell's [[ =~ ]], the same POSIX ERE of the C library, without
# starting grep; a pattern the C library cannot compile fails the check)
expect_fail() {
	want=$1; desc=$2; pat=$3; shift 3
	run "$@"
	_nonempty_lines "$ERR"
	if [ "$RC" = "$want" ] && [ "$lines" = 1 ] && [[ $_nl_last =~ $pat ]]; then
		_report ok "$desc"
	else
		_report fail "$desc (exit $RC, wanted $want; $lines stderr lines; pattern $pat)" "OUT=$OUT
ERR=$ERR"
	fi
}

# count TABLE [WHERE]: prints the number of rows
count() {
	# (the lines counted in the shell: no grep started; read whole by
	# mapfile, not line by line by read: test_faults' 20,000 rows of 1,000
	# characters cost 3.2 CPU-s through _nonempty_lines, 0.3 this way)
	local f="$T/.count$BASHPID" rows i
	if [ -n "$2" ]; then "$DJC" fetch "$1" --where "$2" --format json >"$f"; else "$DJC" fetch "$1" --format json >"$f"; fi
	mapfile -t rows < "$f"
	lines=0
	for i in "${!rows[@]}"; do [[ ${rows[i]} ]] && ((++lines)); done
	echo "$lines"
}

# A command bash does not find is a failure of the file, not a line on
# stderr: a case that called a helper defined further down its file ran
# none of its checks and passed (test_serve2 pyblob_raw, until 2026-12-07),
# and a program the runner's PATH does not offer (scripts/deps.txt) is
# named here. bash runs this handler in a subshell: the names go to a
# file, counted by finish.
command_not_found_handle() {
	printf '%s\n' "$1" >> "$T/.not-found"
	printf '%s: command not found\n' "$1" >&2
	return 127
}

finish() {
	local nf
	_pycheck_flush
	_jqcheck_flush
	if [ -s "$T/.not-found" ]; then
		while IFS= read -r nf; do _report fail "a command the test ran was not found: $nf"; done < "$T/.not-found"
	fi
	printf '%s [%s]: %d passed, %d failed\n' "$NAME" "$DJC_BACKEND" "$PASS" "$FAIL"
	[ "$FAIL" = 0 ]
}
