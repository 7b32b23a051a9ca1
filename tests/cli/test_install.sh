#!/bin/bash
# test_install.sh - `make install` and what a user builds against it: the
# djc command, libdjc.a, libdjc.so (SONAME libdjc.so.0, symbols in version
# DJC_0), djc.h and djc.pc land under PREFIX (in a DESTDIR); the program
# tests/install/hello.c, built with nothing but pkg-config against that tree,
# once against the shared library and once against the static one, declares,
# inserts and populates with job reservation on this backend; the Python
# make module (share/djc/python/djc_make.py) serves a populate of the
# installed djc with PYTHONPATH, and without it (djc, and a program linked
# with the installed libdjc.so, put it on their make programs' PYTHONPATH
# and tell them DJC); its djc_lib.py populates in-process with the library
# installed beside it; `make uninstall` removes every file again.
. "$ROOT/tests/cli/lib.sh"

D=$T/dest
PREFIX=/opt/djc-test
L=$D$PREFIX/lib
VERSION=$(sed -n 's/^#define DJC_VERSION "\(.*\)"/\1/p' "$ROOT/include/djc.h")
# the build directory relative to ROOT, as the Makefile names it
B=${BUILD#"$ROOT"/}
expect_rc 0 "make install into a DESTDIR" make --no-print-directory -C "$ROOT" BUILD="$B" DESTDIR="$D" PREFIX="$PREFIX" install
for f in bin/djc lib/libdjc.a "lib/libdjc.so.$VERSION" include/djc.h lib/pkgconfig/djc.pc share/djc/python/djc_make.py share/djc/python/djc_blob.py share/djc/python/djc_datajoint.py share/djc/python/djc_lib.py; do
	check "installed $f" test -f "$D$PREFIX/$f"
done
check "the Python modules are byte-compiled at install" sh -c 'ls "$1"/__pycache__/djc_make.*.pyc "$1"/__pycache__/djc_datajoint.*.pyc' _ "$D$PREFIX/share/djc/python"
check "lib/libdjc.so.0 links to libdjc.so.$VERSION" test "$(readlink "$L/libdjc.so.0")" = "libdjc.so.$VERSION"
check "lib/libdjc.so links to libdjc.so.0" test "$(readlink "$L/libdjc.so")" = libdjc.so.0
check "the installed djc is executable" test -x "$D$PREFIX/bin/djc"
expect_out "the installed djc runs" "djc $VERSION" "$D$PREFIX/bin/djc" --version
run sh -c 'readelf -d "$1" | grep "(SONAME)"' _ "$L/libdjc.so.$VERSION"
check "the shared library's SONAME is libdjc.so.0" sh -c 'printf "%s" "$1" | grep -q "\[libdjc\.so\.0\]"' _ "$OUT"

pc() { PKG_CONFIG_SYSROOT_DIR="$D" PKG_CONFIG_PATH="$L/pkgconfig" PKG_CONFIG_LIBDIR=/nonexistent pkg-config "$@"; }
expect_rc 0 "pkg-config knows djc" pc --exists djc
run pc --cflags --libs djc
check "pkg-config points into the install" sh -c 'printf "%s" "$1" | grep -q -- "-I$2$3/include" && printf "%s" "$1" | grep -q -- "-ldjc"' _ "$OUT" "$D" "$PREFIX"
FLAGS=$OUT

# shared: the usual `cc prog.c $(pkg-config --cflags --libs djc)`
# shellcheck disable=SC2086  # FLAGS is a list of flags
expect_rc 0 "a program builds against the installed shared library" cc -std=c11 -Wall -Wextra -Werror $SAN_CFLAGS -o hello "$ROOT/tests/install/hello.c" $FLAGS
run sh -c 'readelf -d hello | grep "(NEEDED)"'
check "...it needs libdjc.so.0" sh -c 'printf "%s" "$1" | grep -q "\[libdjc\.so\.0\]"' _ "$OUT"
run sh -c 'readelf -V hello | grep -A3 "File: libdjc.so.0"'
check "...in version DJC_0" sh -c 'printf "%s" "$1" | grep -q "Name: DJC_0"' _ "$OUT"
run ./hello
check "...and does not start without it on the library path" sh -c 'test "$1" != 0 && printf "%s" "$2" | grep -q libdjc.so.0' _ "$RC" "$ERR"
expect_out "...with it: declares, inserts and populates with job reservation" "hello: ok" env LD_LIBRARY_PATH="$L" ./hello
# a prefix of one's own, as README.md says: pkg-config's libdir as the rpath
# shellcheck disable=SC2086
expect_rc 0 "a program built with the library's directory as its rpath" cc -std=c11 -Wall -Wextra -Werror $SAN_CFLAGS -o hello_rpath \
	"$ROOT/tests/install/hello.c" $FLAGS -Wl,-rpath,"$(pc --variable=libdir djc)"
if [ "$DJC_BACKEND" = sqlite ]; then rdb="DJC_DATABASE_URL=sqlite:$T/rpath.db"; else rdb="DJC_DATABASE_SCHEMA=${DJC_DATABASE_SCHEMA}_r"; fi
expect_out "...runs without LD_LIBRARY_PATH" "hello: ok" env -u LD_LIBRARY_PATH "$rdb" ./hello_rpath
expect_out "its rows are there for the installed djc too" 5 sh -c '"$1" fetch Square --format json | grep -c .' _ "$D$PREFIX/bin/djc"

# static: libdjc.a and the private libraries pkg-config names with --static;
# --as-needed keeps the -ldjc of that list from adding the shared library
run pc --static --libs djc
check "pkg-config --static adds the libraries libdjc.a needs" sh -c 'printf "%s" "$1" | grep -q -- "-ljansson"' _ "$OUT"
SFLAGS=$OUT
# shellcheck disable=SC2086
expect_rc 0 "a program builds against the installed static library" cc -std=c11 -Wall -Wextra -Werror $SAN_CFLAGS -o hello_static "$ROOT/tests/install/hello.c" $(pc --cflags djc) "$L/libdjc.a" -Wl,--as-needed $SFLAGS
run sh -c 'readelf -d hello_static | grep "(NEEDED)"'
check "...it does not need libdjc.so" sh -c '! printf "%s" "$1" | grep -q libdjc' _ "$OUT"
if [ "$DJC_BACKEND" = sqlite ]; then export DJC_DATABASE_URL="sqlite:$T/static.db"; else export DJC_DATABASE_SCHEMA="${DJC_DATABASE_SCHEMA}_s"; fi
expect_out "...and declares, inserts and populates with job reservation" "hello: ok" ./hello_static

# the Python module, found with PYTHONPATH, serves a populate of the installed djc
cat > sq.py <<'P'
import djc_make
def make(key, fetch):
    return {"y": fetch("Item", key)[0]["x"] ** 2}
djc_make.run(make)
P
expect_rc 0 "delete Square's rows" "$D$PREFIX/bin/djc" delete Square
run env PYTHONPATH="$D$PREFIX/share/djc/python" "$D$PREFIX/bin/djc" populate Square --reserve-jobs --make-serve python3 sq.py
check "the installed Python module serves a populate of the installed djc" test "$RC/$OUT" = "0/Square: 5 made, 0 errors, 0 skipped"
expect_rc 0 "the installed Python module imports" env PYTHONPATH="$D$PREFIX/share/djc/python" python3 -c 'import djc_make; djc_make.b64("")'
check "... from its compiled file, not compiled again" sh -c 'env -u PYTHONDONTWRITEBYTECODE -u PYTHONPYCACHEPREFIX PYTHONPATH="$1" python3 -v -c "import djc_make" 2>&1 | grep -q "code object from .*__pycache__/djc_make\.cpython"' _ "$D$PREFIX/share/djc/python"

# djc_lib.py (a Python make called in-process by libdjc): installed with the
# path of the library installed beside it, and populating Square from the
# installed tree, the library found beside the module (this DESTDIR's lib/;
# under AddressSanitizer its runtime preloaded, as a Python program loading
# an instrumented library needs)
check "the installed djc_lib.py names the library installed with it" \
	grep -qx "_INSTALLED_LIB = \"$PREFIX/lib/libdjc.so.0\"" "$D$PREFIX/share/djc/python/djc_lib.py"
cat > sqlib.py <<'P'
import os
import djc_lib
def make(key, fetch):
    return {"y": fetch("Item", key)[0]["x"] ** 2}
r = djc_lib.populate("Square", make, reserve_jobs=True, processes=2)
print(r["success_count"], r["error_count"], os.path.realpath(djc_lib._load()[0]._name))
P
expect_rc 0 "delete Square's rows again" "$D$PREFIX/bin/djc" delete Square
run env PYTHONPATH="$D$PREFIX/share/djc/python" LD_PRELOAD="$ASAN_PRELOAD" ASAN_OPTIONS=detect_leaks=0 python3 sqlib.py
check "the installed djc_lib populates with the library beside it (exit $RC)" \
	test "$RC/$OUT" = "0/5 0 $(readlink -f "$L/libdjc.so.0")"
expect_out "... its rows are the installed djc's" "[1,4,9,16,25]" sh -c '"$1" fetch Square --format json | jq -s -c "map(.y) | sort"' _ "$D$PREFIX/bin/djc"

# (issue 36.10) without PYTHONPATH and with no djc on PATH: the installed
# djc puts its module's directory (share/djc/python beside its bin/) first
# on a make's PYTHONPATH and tells it DJC, its own path, which a per-key
# make's fetch runs; a C program linked with the installed libdjc.so gets
# the djc and the module installed beside the library
nodjc=$(printf '%s\n' "$PATH" | tr ':' '\n' | while read -r d; do [ -n "$d" ] && [ ! -x "$d/djc" ] && printf '%s:' "$d"; done)
nodjc=${nodjc%:}
cat > sqenv.py <<'P'
import json, os
import djc_make
def make(key, fetch):
    with open("env.json", "w") as f:
        json.dump({"DJC": os.environ.get("DJC"), "PYTHONPATH": os.environ.get("PYTHONPATH")}, f)
    return {"y": fetch("Item", key)[0]["x"] ** 2}
djc_make.run(make)
P
inst_djc=$(readlink -f "$D$PREFIX/bin/djc")
inst_py=$(readlink -f "$D$PREFIX/share/djc/python")
expect_rc 0 "delete Square's rows" "$D$PREFIX/bin/djc" delete Square
run env -u PYTHONPATH -u DJC PATH="$nodjc" "$D$PREFIX/bin/djc" populate Square --reserve-jobs --make-serve python3 sq.py
check "no PYTHONPATH: the installed djc's serve make imports its module" test "$RC/$OUT" = "0/Square: 5 made, 0 errors, 0 skipped"
expect_rc 0 "delete Square's rows" "$D$PREFIX/bin/djc" delete Square
run env -u PYTHONPATH -u DJC PATH="$nodjc" "$D$PREFIX/bin/djc" populate Square --reserve-jobs --make python3 sqenv.py
check "no PYTHONPATH, no djc on PATH: a per-key make imports the module and fetches through \$DJC" \
	test "$RC/$OUT" = "0/Square: 5 made, 0 errors, 0 skipped"
check "... DJC is the installed djc, PYTHONPATH its module's directory" \
	test "$(jq -r '"\(.DJC) \(.PYTHONPATH)"' env.json)" = "$inst_djc $inst_py"
if [ "$DJC_BACKEND" = sqlite ]; then export DJC_DATABASE_URL="sqlite:$T/pymake.db"; else export DJC_DATABASE_SCHEMA="${DJC_DATABASE_SCHEMA}_p"; fi
rm -f env.json
expect_out "a C program (installed libdjc.so) populates with a per-key Python make, no PYTHONPATH, no djc on PATH" "hello: ok" \
	env -u PYTHONPATH -u DJC PATH="$nodjc" LD_LIBRARY_PATH="$L" ./hello python3 sqenv.py
check "... its make got the djc and the module installed beside the library" \
	test "$(jq -r '"\(.DJC) \(.PYTHONPATH)"' env.json 2>&1)" = "$inst_djc $inst_py"

expect_rc 0 "make uninstall" make --no-print-directory -C "$ROOT" BUILD="$B" DESTDIR="$D" PREFIX="$PREFIX" uninstall
check "uninstall removed every file and link" sh -c 'test -z "$(find "$1" ! -type d)"' _ "$D"
finish
