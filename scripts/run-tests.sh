#!/bin/bash
# run-tests.sh - the whole suite: unit tests (plain and ASan+UBSan builds) and
# the CLI behaviour suite, each on every backend. Starts throwaway PostgreSQL
# and MariaDB servers and always stops them.
#   DJC_BACKENDS="sqlite postgresql mysql pgbouncer"  (default: all four; CI requires all)
#     pgbouncer: the CLI suite through pgbouncer in transaction pooling mode
#     in front of the PostgreSQL server (scripts/pgbouncer.sh), with
#     DJC_DATABASE_POOLER=transaction; the test files see DJC_BACKEND=postgresql
#     (everything that passes on PostgreSQL must pass through the pooler),
#     DJC_POOLER=pgbouncer, and the server's own URL in DJC_SERVER_URL
#   DJC_TESTS="core populate"               (run only these CLI test files)
#   DJC_BUILD=build DJC_SAN_BUILD=build-san  (build directories to test; "" skips one)
# Every program the suite uses is declared in scripts/deps.txt (group check):
# the runner stops at once, naming what is missing, when any is absent, and
# runs everything (servers, unit tests, test files) with a PATH holding only
# links to the declared programs, so a test that uses an undeclared program
# fails here as it would on a fresh machine.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BACKENDS=${DJC_BACKENDS:-sqlite postgresql mysql pgbouncer}
BUILD=${DJC_BUILD-build}
SAN_BUILD=${DJC_SAN_BUILD-build-san}
WORK=$(mktemp -d /tmp/djc-tests.XXXXXX)
chmod 755 "$WORK"
if ! scripts/install-deps.sh --bin "$WORK/bin" check; then
	rm -rf "$WORK"
	echo "run-tests: not running the suite: programs or libraries it needs are missing (above)" >&2
	exit 2
fi
export PATH="$WORK/bin"
cleanup() {
	[ -d "$WORK/pgb" ] && scripts/pgbouncer.sh stop "$WORK/pgb" >/dev/null 2>&1
	[ -d "$WORK/pg" ] && scripts/pg-server.sh stop "$WORK/pg" >/dev/null 2>&1
	[ -d "$WORK/my" ] && scripts/mariadb-server.sh stop "$WORK/my" >/dev/null 2>&1
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A URL
PASSED=0
FAILED=0
SUITES_FAILED=""

for b in $BACKENDS; do
	case $b in
	sqlite) URL[sqlite]="sqlite:$WORK/unit.db" ;;
	postgresql)
		URL[postgresql]=$(scripts/pg-server.sh start "$WORK/pg") || { echo "run-tests: PostgreSQL did not start" >&2; exit 1; } ;;
	mysql)
		URL[mysql]=$(scripts/mariadb-server.sh start "$WORK/my") || { echo "run-tests: MariaDB did not start" >&2; exit 1; } ;;
	pgbouncer)
		# the same PostgreSQL server as the postgresql backend (one is started
		# when that is not run), but a database of its own: test files that
		# use fixed schema names (djc --schema nope_1) must not find what the
		# postgresql run left in the server's database
		SERVER_URL=$(scripts/pg-server.sh start "$WORK/pg") || { echo "run-tests: PostgreSQL did not start" >&2; exit 1; }
		scripts/pg-server.sh psql "$WORK/pg" -qAt -c "CREATE DATABASE djc_pgb" >/dev/null ||
			{ echo "run-tests: cannot create the database djc_pgb for pgbouncer" >&2; exit 1; }
		SERVER_URL=${SERVER_URL%/*}/djc_pgb
		URL[pgbouncer]=$(scripts/pgbouncer.sh start "$WORK/pgb" "$SERVER_URL") || { echo "run-tests: pgbouncer did not start" >&2; exit 1; } ;;
	*) echo "run-tests: unknown backend $b" >&2; exit 2 ;;
	esac
done

tally() {  # name output-file status
	local line p f
	line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$2" | tail -1)
	p=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')
	f=$(printf '%s' "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	[ -z "$line" ] && { p=0; f=1; }
	[ "$3" != 0 ] && [ "$f" = 0 ] && f=1
	PASSED=$((PASSED + p))
	FAILED=$((FAILED + f))
	# how long it took is reported, never checked
	if [ "$f" != 0 ]; then SUITES_FAILED="$SUITES_FAILED $1"; cat "$2"; echo "  ($1: $((SECONDS - T0)) s)"
	else printf '%s  (%d s)\n' "$line" $((SECONDS - T0)); fi
}

n=0
# checks of the library as built (tests/abi: no database): once, on the plain build
if [ -n "$BUILD" ]; then
	echo "== library checks"
	for f in tests/abi/test_*.sh; do
		[ -e "$f" ] || continue
		name=$(basename "$f" .sh)
		if [ -n "${DJC_TESTS:-}" ] && ! printf ' %s ' "$DJC_TESTS" | grep -q " ${name#test_} "; then continue; fi
		n=$((n + 1))
		dir="$WORK/t$n"
		mkdir -p "$dir"
		out="$WORK/out.$n"
		T0=$SECONDS
		(cd "$dir" && DJC="$ROOT/$BUILD/djc" BUILD="$ROOT/$BUILD" ROOT="$ROOT" T="$dir" DJC_BACKEND=abi \
			timeout 900 bash "$ROOT/$f") >"$out" 2>&1
		tally "$name" "$out" $?
	done
fi
for b in $BACKENDS; do
	# through the pooler: the CLI suite, as PostgreSQL with DJC_DATABASE_POOLER=transaction
	pooler_env=""
	backend=$b
	if [ "$b" = pgbouncer ]; then
		pooler_env="DJC_DATABASE_POOLER=transaction DJC_POOLER=pgbouncer DJC_SERVER_URL=$SERVER_URL"
		backend=postgresql
		echo "== unit tests on $b: not run (they drive the drivers with raw SQL and session state; the CLI suite runs through the pooler)"
	else
	echo "== unit tests on $b"
	for build in $BUILD $SAN_BUILD; do
		for t in "$build"/tests/test_*; do
			[ -x "$t" ] || continue
			n=$((n + 1))
			out="$WORK/out.$n"
			schema="djct_u$n"
			[ "$b" = sqlite ] && url="sqlite:$WORK/u$n.db" || url=${URL[$b]}
			T0=$SECONDS
			DJC_TEST_URL=$url DJC_TEST_SCHEMA=$schema DJC_BACKEND=$b ASAN_OPTIONS=detect_leaks=1 \
				timeout 600 "$t" >"$out" 2>&1
			tally "$(basename "$t")[$b,$build]" "$out" $?
		done
	done
	if [ "$b" = mysql ]; then
		# the statements one by one instead of MariaDB's one-statement
		# commit (DJC_MYSQL_COMPOUND=0, as on MySQL; docs/jobs.md): the
		# tests that commit through the driver's batch, once more
		for build in $BUILD $SAN_BUILD; do
			for t in "$build"/tests/test_db "$build"/tests/test_jobs_core; do
				[ -x "$t" ] || continue
				n=$((n + 1))
				out="$WORK/out.$n"
				T0=$SECONDS
				DJC_MYSQL_COMPOUND=0 DJC_TEST_URL=${URL[$b]} DJC_TEST_SCHEMA="djct_u$n" DJC_BACKEND=$b ASAN_OPTIONS=detect_leaks=1 \
					timeout 600 "$t" >"$out" 2>&1
				tally "$(basename "$t")[$b+separate,$build]" "$out" $?
			done
		done
	fi
	fi
	echo "== CLI suite on $b"
	for f in tests/cli/test_*.sh; do
		name=$(basename "$f" .sh)
		if [ -n "${DJC_TESTS:-}" ] && ! printf ' %s ' "$DJC_TESTS" | grep -q " ${name#test_} "; then continue; fi
		n=$((n + 1))
		dir="$WORK/t$n"
		mkdir -p "$dir"
		chmod 777 "$dir"
		out="$WORK/out.$n"
		if [ "$b" = sqlite ]; then url="sqlite:$dir/djc.db"; schema=""; else url=${URL[$b]}; schema="djct_${name#test_}_$n"; fi
		T0=$SECONDS
		(cd "$dir" && env $pooler_env DJC="$ROOT/$BUILD/djc" BUILD="$ROOT/$BUILD" ROOT="$ROOT" T="$dir" DJC_DATABASE_URL="$url" \
			DJC_DATABASE_SCHEMA="$schema" DJC_BACKEND=$backend timeout 900 bash "$ROOT/$f") >"$out" 2>&1
		tally "$name[$b]" "$out" $?
	done
done

echo
echo "run-tests: $SECONDS s in all"
[ -n "$SUITES_FAILED" ] && echo "failing:$SUITES_FAILED"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
