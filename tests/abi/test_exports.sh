#!/bin/bash
# test_exports.sh - libdjc exports its public API and nothing else (issue 13).
# Run once by scripts/run-tests.sh on the plain build ($BUILD):
#   - every global symbol defined in libdjc.a, and every dynamic symbol
#     libdjc.so exports (its version nodes DJC_* aside), starts with djc_
#     (undefined symbols, which the library uses, are not its exports);
#   - both export exactly the functions include/djc.h declares, the .so's in
#     version node DJC_0;
#   - a program that defines every internal name of the library itself (read
#     from build/libdjc-internal.a, so renamed internals stay covered; each
#     definition aborts when called) builds against libdjc.a and against
#     libdjc.so and runs: djc's internal calls never reach the user's
#     functions. The same program linked against the plain objects fails,
#     which shows it really collides.
. "$ROOT/tests/cli/lib.sh"
B=$BUILD

# defined global symbols not starting with djc_ (an archive's member headers
# and blank lines have fewer than 3 fields)
bad_a() { nm -g --defined-only "$B/libdjc.a" | awk 'NF == 3 && $3 !~ /^djc_/ { print $2, $3 }'; }
bad_so() { nm -D --defined-only "$B/libdjc.so" | awk 'NF == 3 && $3 !~ /^djc_/ && !($2 == "A" && $3 ~ /^DJC_/) { print $2, $3 }'; }
run bad_a
check "libdjc.a: every defined global symbol starts with djc_" test -z "$OUT"
[ -n "$OUT" ] && printf 'exported by libdjc.a:\n%s\n' "$OUT" | head -20 >&2
run bad_so
check "libdjc.so: every exported symbol starts with djc_" test -z "$OUT"
[ -n "$OUT" ] && printf 'exported by libdjc.so:\n%s\n' "$OUT" | head -20 >&2
run sh -c 'nm -g --defined-only "$1/libdjc.a" | grep -c " djc_"' _ "$B"
check "libdjc.a: the check looked at real symbols ($OUT djc_ symbols)" test "${OUT:-0}" -gt 20

# the functions djc.h declares: prototypes start a line with their type
grep -oE '^[a-z_][a-z0-9_ *]*[ *]djc_[a-z0-9_]+\(' "$ROOT/include/djc.h" | sed -E 's/.*[ *](djc_[a-z0-9_]+)\($/\1/' | sort -u > declared
nm -g --defined-only "$B/libdjc.a" | awk 'NF == 3 && $2 == "T" { print $3 }' | sort -u > in_a
nm -D --defined-only "$B/libdjc.so" | awk 'NF == 3 && $2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u > in_so
check "libdjc.a defines exactly the functions djc.h declares" cmp -s declared in_a
cmp -s declared in_a || diff declared in_a | head -20 >&2
check "libdjc.so exports exactly the functions djc.h declares" cmp -s declared in_so
cmp -s declared in_so || diff declared in_so | head -20 >&2
run sh -c 'nm -D --defined-only "$1/libdjc.so" | awk '"'"'$2 == "T" && $3 !~ /@@DJC_0$/'"'"'' _ "$B"
check "libdjc.so: every function is in version node DJC_0" test -z "$OUT"

# a user's program with functions named like every internal symbol of djc
nm -g --defined-only "$B/libdjc-internal.a" | awk 'NF == 3 && $3 !~ /^djc_/ { print $3 }' | sort -u > internal
check "the internal archive has internal names to collide with ($(grep -c . internal))" test -s internal
{
	echo '#include <stdlib.h>'
	sed 's/.*/void &(void); void &(void) { abort(); }/' internal
} > collide.c
CF="-std=c11 -I$ROOT/include"
LIBS=$(pkg-config --libs jansson)
run cc $CF -o user_static "$ROOT/tests/install/hello.c" collide.c "$B/libdjc.a" $LIBS -lpthread -ldl
check "a program defining djc's internal names links against libdjc.a" test "$RC" = 0
run cc $CF -o user_shared "$ROOT/tests/install/hello.c" collide.c -L"$B" -ldjc -Wl,-rpath,"$B"
check "... and against libdjc.so" test "$RC" = 0
export DJC_DATABASE_URL="sqlite:$T/static.db"
expect_out "... runs with libdjc.a (no internal call reaches the user's functions)" "hello: ok" ./user_static
export DJC_DATABASE_URL="sqlite:$T/shared.db"
expect_out "... runs with libdjc.so" "hello: ok" ./user_shared
export DJC_DATABASE_URL="sqlite:$T/internal.db"
run sh -c 'cc $1 -o user_internal "$2" collide.c "$3" $4 -lpthread -ldl 2>/dev/null && ./user_internal' _ "$CF" \
	"$ROOT/tests/install/hello.c" "$B/libdjc-internal.a" "$LIBS"
check "the same program with the plain objects fails (it does collide)" test "$RC" != 0
finish
