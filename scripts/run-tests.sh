#!/bin/bash
# run-tests.sh - the whole suite: unit tests (plain and ASan+UBSan builds) and
# the CLI behaviour suite, each on every backend, several at a time. Starts
# throwaway PostgreSQL and MariaDB servers and always stops them.
#   DJC_BACKENDS="sqlite postgresql mysql pgbouncer"  (default: all four; CI requires all)
#     pgbouncer: the CLI suite through pgbouncer in transaction pooling mode
#     in front of the PostgreSQL server (scripts/pgbouncer.sh), with
#     DJC_DATABASE_POOLER=transaction; the test files see DJC_BACKEND=postgresql
#     (everything that passes on PostgreSQL must pass through the pooler),
#     DJC_POOLER=pgbouncer, and the server's own URL in DJC_SERVER_URL
#   DJC_TESTS="core jobs_core"   run only these test files (CLI, unit or abi;
#                                the test_ prefix may be given or left out)
#   DJC_CASE="name"              passed to each test file run: a file that
#                                knows cases runs only the named one (t.h,
#                                tests/cli/lib.sh)
#   DJC_KINDS="abi unit cli"     which kinds of test files to run (default all)
#   DJC_BUILD=build DJC_SAN_BUILD=build-san  (build directories to test; "" skips one)
#   DJC_SAN_MAKE="make ... BUILD=build-san unit-bins"  builds DJC_SAN_BUILD in the
#                                background while the servers start and the
#                                other files run (its files wait for it; a
#                                failed build fails the run, with its log):
#                                compiling uses the cores that starting
#                                processes leaves (docs/testing.md)
#   DJC_PARALLEL=N               test files run at once (default: 2 per core);
#                                more (up to DJC_PARALLEL_MAX, default 2N)
#                                while the machine stays a third idle
#   DJC_CASE=list                prints each selected file's case names and
#                                runs nothing (no server is started)
#   DJC_TEST_OUT=DIR                  keeps every file's output in DIR/NAME[BACKEND]
#                                (with DJC_TEST_TRACE=1: one "ok:" line per check;
#                                scripts/check-diff.sh compares two versions)
#   DJC_FILE_TIMEOUT=SECONDS          a CLI file still running after it fails (default 900)
#   DJC_TEST_RECORD=FILE              writes how long each file took to FILE, in
#                                the form of tests/durations.txt
# `make check T=... CASE=...` sets DJC_TESTS and DJC_CASE; `make check-quick`
# and `make unit` are this script on SQLite alone.
#
# Every test file runs alone in its own directory, with its own SQLite file
# or server schema; on PostgreSQL (and through pgbouncer) each CLI file also
# gets a database of its own, so what one file does to the sessions of its
# database (terminating them, counting them) cannot touch another's. A CLI
# file whose first lines hold `# run-tests: alone` runs after all others,
# with nothing beside it.
#
# Every program the suite uses is declared in scripts/deps.txt (group check):
# the runner stops at once, naming what is missing, when any is absent, and
# runs everything (servers, unit tests, test files) with a PATH holding only
# links to the declared programs, so a test that uses an undeclared program
# fails here as it would on a fresh machine.
set -u
# forks VAR: the machine's count of processes and threads started since boot
forks() { local k v; while read -r k v; do [ "$k" = processes ] && printf -v "$1" %s "$v"; done < /proc/stat; }
forks PROCS0
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BACKENDS=${DJC_BACKENDS:-sqlite postgresql mysql pgbouncer}
BUILD=${DJC_BUILD-build}
SAN_BUILD=${DJC_SAN_BUILD-build-san}
KINDS=" ${DJC_KINDS:-abi unit cli} "
JOBS=${DJC_PARALLEL:-$(( $(nproc 2>/dev/null || echo 2) * 2 ))}
WORK=$(mktemp -d /tmp/djc-tests.XXXXXX)
chmod 755 "$WORK"
if ! scripts/install-deps.sh --bin "$WORK/bin" check; then
	rm -rf "$WORK"
	echo "run-tests: not running the suite: programs or libraries it needs are missing (above)" >&2
	exit 2
fi
# the sanitizer build, in the background, with the caller's PATH (the
# compiler's programs are not the tests' declared ones); its status lands in
# WORK/san.rc
# (the runner's own settings are not passed on: djc warns of a DJC_
# variable it does not know)
SAN_MAKE=${DJC_SAN_MAKE:-} MAX_JOBS=${DJC_PARALLEL_MAX:-} FILE_TIMEOUT=${DJC_FILE_TIMEOUT:-900}
unset DJC_SAN_MAKE DJC_PARALLEL_MAX DJC_FILE_TIMEOUT
SAN_PENDING=0
if [ -n "$SAN_MAKE" ] && [ -n "$SAN_BUILD" ] && [[ $KINDS == *" unit "* ]]; then
	SAN_PENDING=1
	( eval "$SAN_MAKE" >"$WORK/san.log" 2>&1; echo $? >"$WORK/san.rc" ) &
	SAN_PID=$!
fi
export PATH="$WORK/bin"
# Python programs keep their compiled modules, as on a user's machine, where
# the checkout stays untouched (a caller's PYTHONDONTWRITEBYTECODE made every
# make program compile djc_make.py again: 12 ms of each of a thousand starts)
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$WORK/pycache"
cleanup() {
	[ "$SAN_PENDING" = 1 ] && [ ! -e "$WORK/san.rc" ] && kill "$SAN_PID" 2>/dev/null
	# test files still running (interrupted run) go first
	jobs -p | xargs -r kill 2>/dev/null
	[ -d "$WORK/pgb" ] && scripts/pgbouncer.sh stop "$WORK/pgb" >/dev/null 2>&1
	[ -d "$WORK/pg" ] && scripts/pg-server.sh stop "$WORK/pg" >/dev/null 2>&1
	[ -d "$WORK/my" ] && scripts/mariadb-server.sh stop "$WORK/my" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# selected NAME: 0 when DJC_TESTS is empty or names NAME (with or without test_)
selected() {
	[ -z "${DJC_TESTS:-}" ] && return 0
	local want
	for want in $DJC_TESTS; do
		[ "test_${want#test_}" = "$1" ] && return 0
	done
	return 1
}

# DJC_CASE=list: the case names of each selected file, nothing run
if [ "${DJC_CASE:-}" = list ]; then
	for f in tests/cli/test_*.sh; do
		selected "$(basename "$f" .sh)" || continue
		[[ $KINDS == *" cli "* ]] || break
		echo "$(basename "$f" .sh):"
		grep -E '^tcase [A-Za-z0-9_]+' "$f" | sed -E 's/^tcase ([A-Za-z0-9_]+).*/  \1/'
	done
	for t in ${BUILD:+"$BUILD"/tests/test_*}; do
		[ -x "$t" ] && selected "$(basename "$t")" && [[ $KINDS == *" unit "* ]] || continue
		echo "$(basename "$t"):"
		"$t" --list | sed 's/^/  /'
	done
	exit 0
fi

# ---------------------------------------------------------------- the jobs
# Each job is one test file on one backend (and build): its name, the
# command (a string for eval, quoted with %q), whether it runs alone.
JNAME=() JCMD=() JALONE=() JSAN=() PGDBS=()
add_job() {  # name alone command...
	local name=$1 alone=$2 cmd
	shift 2
	printf -v cmd '%q ' "$@"
	JNAME+=("$name") JALONE+=("$alone") JCMD+=("$cmd") JSAN+=(0)
}

# The slowest files start first, so that the last minutes are not one long
# file running alone: tests/durations.txt holds how long each job took in a
# full run ("SECONDS NAME[BACKEND]" lines; DJC_TEST_RECORD=tests/durations.txt
# writes it anew). A job it does not name counts as slow (60 s). How long a
# file takes is only ever used for the order, never checked.
declare -A DUR=()
if [ -r tests/durations.txt ]; then
	while read -r secs job; do
		case $secs in ''|*[!0-9]*) continue ;; esac
		DUR[$job]=$secs
	done < tests/durations.txt
fi

n=0
# checks of the library as built (tests/abi: no database): once, on the plain build
if [ -n "$BUILD" ] && [[ $KINDS == *" abi "* ]]; then
	for f in tests/abi/test_*.sh; do
		[ -e "$f" ] || continue
		name=$(basename "$f" .sh)
		selected "$name" || continue
		n=$((n + 1))
		add_job "$name[abi]" 0 cli_job "$n" "$f" abi "" ""
	done
fi
for b in $BACKENDS; do
	[[ $KINDS == *" unit "* ]] || break
	[ "$b" = pgbouncer ] && continue  # unit tests drive the drivers with raw SQL and session state
	for build in $BUILD $SAN_BUILD; do
		pending=0
		[ "$build" = "$SAN_BUILD" ] && [ "$SAN_PENDING" = 1 ] && pending=1
		# a build still being made: its binaries are the unit tests' sources
		if [ "$pending" = 1 ]; then set -- tests/unit/test_*.c; else set -- "$build"/tests/test_*; fi
		for t in "$@"; do
			[ "$pending" = 1 ] && t=$build/tests/$(basename "$t" .c)
			[ "$pending" = 1 ] || [ -x "$t" ] || continue
			selected "$(basename "$t")" || continue
			n=$((n + 1))
			add_job "$(basename "$t")[$b,$build]" 0 unit_job "$n" "$t" "$b" ""
			JSAN[-1]=$pending
			# MariaDB: the statements one by one instead of its one-statement
			# commit (DJC_MYSQL_COMPOUND=0, as on MySQL; docs/jobs.md): the
			# tests that commit through the driver's batch, once more;
			# PostgreSQL: without libpq's pipelines (DJC_PG_PIPELINE=0, as
			# with a libpq before 14): the driver's conformance and the reads
			# checked inside a commit's batch (test_parity), once more
			case $b/$(basename "$t") in
			mysql/test_db|mysql/test_jobs_core)
				n=$((n + 1))
				add_job "$(basename "$t")[$b+separate,$build]" 0 unit_job "$n" "$t" "$b" DJC_MYSQL_COMPOUND=0
				JSAN[-1]=$pending ;;
			postgresql/test_db|postgresql/test_parity)
				n=$((n + 1))
				add_job "$(basename "$t")[$b+nopipeline,$build]" 0 unit_job "$n" "$t" "$b" DJC_PG_PIPELINE=0
				JSAN[-1]=$pending ;;
			esac
		done
	done
done
for f in tests/cli/test_*.sh; do
	[[ $KINDS == *" cli "* ]] || break
	name=$(basename "$f" .sh)
	selected "$name" || continue
	alone=0
	head -n 5 "$f" | grep -q '^# run-tests: alone' && alone=1
	for b in $BACKENDS; do
		n=$((n + 1))
		add_job "$name[$b]" "$alone" cli_job "$n" "$f" "$b" "" ""
		case $b in postgresql|pgbouncer) PGDBS+=("djct_$n") ;; esac
	done
done

# unit_job N BINARY BACKEND [NAME=VALUE]: one unit test binary (with
# that in its environment)
unit_job() {
	local url
	[ "$3" = sqlite ] && url="sqlite:$WORK/u$1.db" || url=${URL[$3]}
	env ${4:+"$4"} DJC_TEST_URL="$url" DJC_TEST_SCHEMA="djct_u$1" DJC_BACKEND="$3" \
		ASAN_OPTIONS=detect_leaks=1 timeout 600 "$2"
}

# cli_job N FILE BACKEND: one CLI test file in a fresh directory
cli_job() {
	local dir="$WORK/t$1" name url schema backend=$3 extra=()
	name=$(basename "$2" .sh)
	mkdir -p "$dir" && chmod 777 "$dir"
	case $3 in
	abi) url=""; schema="" ;;
	sqlite) url="sqlite:$dir/djc.db"; schema="" ;;
	mysql) url=${URL[mysql]}; schema="djct_${name#test_}_$1" ;;
	postgresql)
		url=${URL[postgresql]%/*}/djct_$1; schema="djct_${name#test_}_$1" ;;
	pgbouncer)
		url=${URL[pgbouncer]%/*}/djct_$1; schema="djct_${name#test_}_$1"; backend=postgresql
		extra=(DJC_DATABASE_POOLER=transaction DJC_POOLER=pgbouncer DJC_SERVER_URL="${URL[postgresql]%/*}/djct_$1") ;;
	esac
	(cd "$dir" && env "${extra[@]}" DJC="$ROOT/$BUILD/djc" BUILD="$ROOT/$BUILD" ROOT="$ROOT" T="$dir" \
		DJC_DATABASE_URL="$url" DJC_DATABASE_SCHEMA="$schema" DJC_BACKEND="$backend" \
		timeout "$FILE_TIMEOUT" bash "$ROOT/$2")
}

declare -A URL
# The servers start side by side (PostgreSQL, then pgbouncer in front of it;
# MariaDB), each writing its URL to WORK/url.BACKEND, or nothing on failure.
#
# pg_dbs: the databases of the CLI files on PostgreSQL and pgbouncer (PGDBS),
# made at once in one session while MariaDB starts: a psql and a connection
# per file cost the server about 45 ms each, and PostgreSQL 15's default way
# to make a database (WAL_LOG: the template's pages written through the WAL)
# about 200 ms of its CPU where copying the template's files (FILE_COPY,
# its checkpoint cheap before any test ran) costs about 90
pg_dbs() {
	[ ${#PGDBS[@]} -gt 0 ] || return 0
	local v strat=""
	v=$(scripts/pg-server.sh psql "$WORK/pg" -qAt -c "SHOW server_version_num") || return 1
	[ "${v:-0}" -ge 150000 ] && strat=" STRATEGY FILE_COPY"
	printf "CREATE DATABASE \"%s\"$strat;\n" "${PGDBS[@]}" |
		scripts/pg-server.sh psql "$WORK/pg" -qAt -v ON_ERROR_STOP=1 >/dev/null ||
		{ echo "run-tests: cannot create the test files' databases on PostgreSQL" >&2; return 1; }
}
pg_chain() {  # with_pgbouncer
	scripts/pg-server.sh start "$WORK/pg" > "$WORK/url.postgresql" || { rm -f "$WORK/url.postgresql"; return; }
	pg_dbs || { rm -f "$WORK/url.postgresql"; return; }
	[ "$1" = 1 ] || return 0
	scripts/pgbouncer.sh start "$WORK/pgb" "$(cat "$WORK/url.postgresql")" > "$WORK/url.pgbouncer" ||
		rm -f "$WORK/url.pgbouncer"
}
want_pg=0 want_pgb=0 want_my=0
for b in $BACKENDS; do
	case $b in
	sqlite) ;;
	postgresql) want_pg=1 ;;
	mysql) want_my=1 ;;
	pgbouncer) want_pg=1 want_pgb=1 ;;  # the same server as the postgresql backend
	*) echo "run-tests: unknown backend $b" >&2; exit 2 ;;
	esac
done
SERVERS=()
[ "$want_pg" = 1 ] && { pg_chain "$want_pgb" & SERVERS+=($!); }
[ "$want_my" = 1 ] && { { scripts/mariadb-server.sh start "$WORK/my" > "$WORK/url.mysql" || rm -f "$WORK/url.mysql"; } & SERVERS+=($!); }
[ ${#SERVERS[@]} -gt 0 ] && wait "${SERVERS[@]}"
# url_of BACKEND LABEL: the URL a started server wrote, or stop naming it
url_of() {
	[ -s "$WORK/url.$1" ] || { echo "run-tests: $2 did not start" >&2; exit 1; }
	URL[$1]=$(cat "$WORK/url.$1")
}
[ "$want_pg" = 1 ] && url_of postgresql PostgreSQL
[ "$want_my" = 1 ] && url_of mysql MariaDB
[ "$want_pgb" = 1 ] && url_of pgbouncer pgbouncer

# ---------------------------------------------------------- run and tally
PASSED=0
FAILED=0
SUITES_FAILED=""
RECORD=""
T0=() DONE=()
[ -n "${DJC_TEST_OUT:-}" ] && mkdir -p "$DJC_TEST_OUT"

cpu_of() {  # job index: the user+sys seconds of the job's processes
	awk 'NR == 2 { for (i = 1; i <= NF; i++) { split($i, p, "m"); s += p[1] * 60 + p[2] } } END { printf "%.1f", s }' "$WORK/cpu.$1"
}
CPU_SUM=0
# server_cpu PIDFILE: the CPU seconds a server used so far (its own, and its
# ended children's: PostgreSQL's finished sessions), from /proc
server_cpu() {
	local pid
	[ -r "$1" ] && read -r pid < "$1" && [ -r "/proc/$pid/stat" ] || { echo 0; return; }
	awk -v hz=100 '{ sub(/.*\) /, ""); printf "%.0f", ($12 + $13 + $14 + $15) / hz }' "/proc/$pid/stat"
}

tally() {  # job index
	local i=$1 out="$WORK/out.$i" rc line p f
	rc=$(cat "$WORK/rc.$i")
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$out" | tail -1)
	p=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')
	f=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	[ -z "$line" ] && { p=0; f=1; }
	[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
	PASSED=$((PASSED + p))
	FAILED=$((FAILED + f))
	# how long it took is reported, never checked
	[ -n "${DJC_TEST_OUT:-}" ] && cp "$out" "$DJC_TEST_OUT/${JNAME[i]}"
	CPU_SUM=$(awk -v a="$CPU_SUM" -v b="$(cpu_of "$i")" 'BEGIN { print a + b }')
	RECORD="$RECORD$((SECONDS - T0[i])) ${JNAME[i]}
"
	if [ "$f" != 0 ]; then
		SUITES_FAILED="$SUITES_FAILED ${JNAME[i]}"
		echo "== ${JNAME[i]}: FAILED"; cat "$out"; echo "  (${JNAME[i]}: $((SECONDS - T0[i])) s)"
	else
		printf '%s: %d passed, %d failed  (%d s, %s s cpu)\n' "${JNAME[i]}" "$p" "$f" $((SECONDS - T0[i])) "$(cpu_of "$i")"
	fi
}

start() {  # job index: in the background; its status lands in rc.N, then done.N
	T0[$1]=$SECONDS
	# (shell builtins only: the PATH holds just the declared programs)
	# (times: the CPU seconds of the job's processes, reported beside its wall time)
	( exec {DONE_FD}>&-
	  eval "${JCMD[$1]}" >"$WORK/out.$1" 2>&1; echo $? >"$WORK/rc.$1"; times >"$WORK/cpu.$1"; : >"$WORK/done.$1"
	  echo "$1" >"$WORK/done.fifo" ) &
}

# How busy the machine is: the share of CPU time idle since the last call
# (/proc/stat's first line), in percent, in IDLE_PCT. A file waiting on a
# lease or a timeout holds a slot without using a core: when the machine
# stays idle with every slot taken, one more file starts (up to MAX_JOBS),
# so the waits of some files are filled with the work of others.
IDLE_PREV=0 TOTAL_PREV=0 IDLE_PCT=0
sample_idle() {
	local f total=0 idle
	read -r -a f < /proc/stat || { IDLE_PCT=0; return; }
	for v in "${f[@]:1:8}"; do total=$((total + v)); done
	idle=$((f[4] + f[5]))
	if [ "$total" -gt "$TOTAL_PREV" ] && [ "$TOTAL_PREV" -gt 0 ]; then
		IDLE_PCT=$(( 100 * (idle - IDLE_PREV) / (total - TOTAL_PREV) ))
	else
		IDLE_PCT=0
	fi
	IDLE_PREV=$idle TOTAL_PREV=$total
}
MAX_JOBS=${MAX_JOBS:-$((JOBS * 2))}
[ "$MAX_JOBS" -lt "$JOBS" ] && MAX_JOBS=$JOBS
IDLE_TICKS=0   # consecutive seconds the machine was more than a third idle
# wait_slot: returns when another file may start (a slot is free, or the
# machine has been idle for two seconds with fewer than MAX_JOBS running)
wait_slot() {
	while [ "$RUNNING" -ge "$JOBS" ]; do
		[ "$RUNNING" -lt "$MAX_JOBS" ] && [ "$IDLE_TICKS" -ge 2 ] && { IDLE_TICKS=0; return; }
		# a finished file writes a line to the FIFO: wake at once for it
		read -r -t 1 -u "$DONE_FD" _ 2>/dev/null
		reap
		sample_idle
		if [ "$IDLE_PCT" -gt 33 ]; then IDLE_TICKS=$((IDLE_TICKS + 1)); else IDLE_TICKS=0; fi
	done
}

mkfifo "$WORK/done.fifo" && exec {DONE_FD}<>"$WORK/done.fifo" || { echo "run-tests: cannot make $WORK/done.fifo" >&2; exit 2; }
RUNNING=0
EXTRA=0   # files started beyond JOBS because the machine was idle
reap() {  # tally every started job that has finished
	local i
	for i in "${!T0[@]}"; do
		[ -z "${DONE[i]:-}" ] && [ -e "$WORK/done.$i" ] || continue
		DONE[$i]=1
		RUNNING=$((RUNNING - 1))
		tally "$i"
	done
}

# the jobs' indices, the longest first (stable: equal ones keep their order)
ORDER=$(for i in "${!JNAME[@]}"; do echo "${DUR[${JNAME[i]}]:-60} $i"; done | sort -s -k1,1nr | sed 's/.* //')

# san_state: once the background sanitizer build ended, SAN_PENDING=0; a
# failed build fails the run (its log's end printed) and its files are skipped
SAN_FAILED=0
san_state() {
	local rc
	[ "$SAN_PENDING" = 1 ] && [ -s "$WORK/san.rc" ] || return 0
	SAN_PENDING=0
	read -r rc < "$WORK/san.rc"
	if [ "$rc" = 0 ]; then
		echo "run-tests: the sanitizer build ($SAN_BUILD) is done, $SECONDS s in"
	else
		SAN_FAILED=1 FAILED=$((FAILED + 1)) SUITES_FAILED="$SUITES_FAILED build:$SAN_BUILD"
		echo "== the sanitizer build failed (exit $rc): $SAN_MAKE"
		tail -n 40 "$WORK/san.log"
	fi
}

echo "run-tests: ${#JNAME[@]} test files on $BACKENDS, $JOBS at a time"
QUEUE=()
for i in $ORDER; do [ "${JALONE[i]}" = 1 ] || QUEUE+=("$i"); done
while [ ${#QUEUE[@]} -gt 0 ]; do
	wait_slot
	san_state
	# the first file in order that can start: one of a build still being
	# made waits for it
	pick=-1
	for k in "${!QUEUE[@]}"; do
		i=${QUEUE[k]}
		if [ "${JSAN[i]}" = 1 ]; then
			[ "$SAN_PENDING" = 1 ] && continue
			[ "$SAN_FAILED" = 1 ] && { unset 'QUEUE[k]'; continue; }
		fi
		pick=$k
		break
	done
	if [ "$pick" = -1 ]; then
		[ ${#QUEUE[@]} -gt 0 ] && { read -r -t 1 -u "$DONE_FD" _ 2>/dev/null; reap; }
		continue
	fi
	i=${QUEUE[pick]}
	unset 'QUEUE[pick]'
	[ "$RUNNING" -ge "$JOBS" ] && EXTRA=$((EXTRA + 1))
	start "$i"
	RUNNING=$((RUNNING + 1))
done
while [ "$RUNNING" -gt 0 ]; do wait -n 2>/dev/null || sleep 0.2; reap; done
for i in $ORDER; do
	[ "${JALONE[i]}" = 1 ] || continue
	start "$i"
	RUNNING=$((RUNNING + 1))
	while [ "$RUNNING" -gt 0 ]; do wait -n 2>/dev/null || sleep 0.2; reap; done
done

# a build no selected file needed still ends (and is reported) before the run does
if [ "$SAN_PENDING" = 1 ]; then wait "$SAN_PID"; san_state; fi
[ -n "${DJC_TEST_RECORD:-}" ] && printf '%s' "$RECORD" | sort -k1,1nr -k2 > "$DJC_TEST_RECORD"
echo
forks PROCS1
echo "run-tests: $SECONDS s in all ($EXTRA files started beside $JOBS busy ones on an idle machine); CPU seconds: test files $CPU_SUM, PostgreSQL $(server_cpu "$WORK/pg/data/postmaster.pid"), MariaDB $(server_cpu "$WORK/my/pid"); $((PROCS1 - PROCS0)) processes and threads started on the machine"
[ -n "$SUITES_FAILED" ] && echo "failing:$SUITES_FAILED"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
