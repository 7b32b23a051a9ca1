#!/bin/bash
# run.sh - build the libFuzzer targets (clang, ASan+UBSan) into build-fuzz/
# and run each for a bounded time.
#   FUZZ_SECONDS=300        seconds per target (default 300)
#   FUZZ_TARGETS="row"      run only these (definition pipeline row)
#   FUZZ_JOBS=2             targets run in parallel (default: number of CPUs, at most 3)
#   FUZZ_BUILD_ONLY=1       build and replay the corpus once, no fuzzing
# New crashes are written to build-fuzz/crashes/<target>/; copy one to
# tests/fuzz/regress/<target>-<name> after fixing it so that `make check`
# (tests/unit/test_fuzz_regress.c) replays it for ever.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
OUT=build-fuzz
SECONDS_PER=${FUZZ_SECONDS:-300}
TARGETS=${FUZZ_TARGETS:-definition pipeline row}
JOBS=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
[ "$JOBS" -gt 3 ] && JOBS=3

# clang (needed only for make fuzz) and the rest: group fuzz of scripts/deps.txt
scripts/install-deps.sh fuzz || { echo "fuzz: could not install what it needs" >&2; exit 2; }
CC=${FUZZ_CC:-clang}
FLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all"
MARIADB_PC=libmariadb
pkg-config --exists libmariadb || MARIADB_PC=mariadb
CPPFLAGS="-Iinclude -Isrc $(pkg-config --cflags jansson sqlite3 libpq $MARIADB_PC) -D_GNU_SOURCE" || exit 2
LIBS="$(pkg-config --libs jansson) -lpthread -ldl"
mkdir -p "$OUT/obj"

# library objects with coverage instrumentation (rebuilt when a source is newer)
objs=""
for src in src/util/*.c src/db/*.c src/schema/*.c src/table/*.c src/jobs/*.c src/make/*.c src/populate/*.c; do
	o="$OUT/obj/$(echo "${src%.c}" | tr / _).o"
	objs="$objs $o"
	if [ ! -e "$o" ] || [ "$src" -nt "$o" ] || [ -n "$(find include src -name '*.h' -newer "$o" 2>/dev/null | head -1)" ]; then
		$CC -std=c11 $FLAGS -fsanitize=fuzzer-no-link $CPPFLAGS -c -o "$o" "$src" || exit 2
	fi
done
for t in $TARGETS; do
	$CC -std=c11 $FLAGS -fsanitize=fuzzer $CPPFLAGS -o "$OUT/fuzz_$t" "tests/fuzz/fuzz_$t.c" $objs $LIBS || exit 2
done

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fail=0
run_one() {
	t=$1
	work="$OUT/corpus/$t"          # grown corpus (not committed)
	crashes="$OUT/crashes/$t"
	mkdir -p "$work" "$crashes"
	log="$OUT/fuzz_$t.log"
	if [ -n "${FUZZ_BUILD_ONLY:-}" ]; then
		"$OUT/fuzz_$t" -runs=0 -artifact_prefix="$crashes/" tests/fuzz/corpus/$t tests/fuzz/regress >"$log" 2>&1
	else
		"$OUT/fuzz_$t" -max_total_time="$SECONDS_PER" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 -artifact_prefix="$crashes/" -dict=tests/fuzz/djc.dict \
			"$work" tests/fuzz/corpus/$t >"$log" 2>&1
	fi
	rc=$?
	stats=$(grep -E '^(#[0-9]+.*(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" | tail -3 | tr '\n' ' ')
	if [ $rc = 0 ]; then
		echo "fuzz_$t: ok $stats"
	else
		echo "fuzz_$t: FAILED (exit $rc; see $log, inputs in $crashes/)"
		grep -E 'ERROR|SUMMARY|runtime error' "$log" | head -5
	fi
	return $rc
}
pids=()
names=()
for t in $TARGETS; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	run_one "$t" > "$OUT/fuzz_$t.result" &
	pids+=($!)
	names+=("$t")
done
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || fail=1
	cat "$OUT/fuzz_${names[$i]}.result"
done
exit $fail
