#!/bin/bash
# test_install.sh - `make install` and what a user builds against it: the
# djc command, libdjc.a, djc.h and djc.pc land under PREFIX (in a DESTDIR);
# a program built with nothing but `pkg-config --cflags --libs djc` against
# that tree (tests/install/hello.c) declares, inserts and populates with job
# reservation on this backend; `make uninstall` removes every file again.
. "$ROOT/tests/cli/lib.sh"

D=$T/dest
PREFIX=/opt/djc-test
# the build directory relative to ROOT, as the Makefile names it
B=${BUILD#"$ROOT"/}
expect_rc 0 "make install into a DESTDIR" make --no-print-directory -C "$ROOT" BUILD="$B" DESTDIR="$D" PREFIX="$PREFIX" install
for f in bin/djc lib/libdjc.a include/djc.h lib/pkgconfig/djc.pc; do
	check "installed $f" test -f "$D$PREFIX/$f"
done
check "the installed djc is executable" test -x "$D$PREFIX/bin/djc"
expect_out "the installed djc runs" "djc $(sed -n 's/^#define DJC_VERSION "\(.*\)"/\1/p' "$ROOT/include/djc.h")" "$D$PREFIX/bin/djc" --version

pc() { PKG_CONFIG_SYSROOT_DIR="$D" PKG_CONFIG_PATH="$D$PREFIX/lib/pkgconfig" PKG_CONFIG_LIBDIR=/nonexistent pkg-config "$@"; }
expect_rc 0 "pkg-config knows djc" pc --exists djc
run pc --cflags --libs djc
check "pkg-config points into the install" sh -c 'printf "%s" "$1" | grep -q -- "-I$2$3/include" && printf "%s" "$1" | grep -q -- "-ldjc"' _ "$OUT" "$D" "$PREFIX"
FLAGS=$OUT
# shellcheck disable=SC2086  # FLAGS is a list of flags
expect_rc 0 "a program builds against the installed tree alone" cc -std=c11 -Wall -Wextra -Werror -o hello "$ROOT/tests/install/hello.c" $FLAGS
expect_out "...and declares, inserts and populates with job reservation" "hello: ok" ./hello
expect_out "its rows are there for the installed djc too" 5 sh -c '"$1" fetch Square --format json | grep -c .' _ "$D$PREFIX/bin/djc"

expect_rc 0 "make uninstall" make --no-print-directory -C "$ROOT" BUILD="$B" DESTDIR="$D" PREFIX="$PREFIX" uninstall
check "uninstall removed every file" sh -c 'test -z "$(find "$1" -type f)"' _ "$D"
finish
