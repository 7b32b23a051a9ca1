#!/bin/bash
# test_readme.sh - the README cannot rot: every code block of README.md is
# run or checked as tests/cli/readme_blocks.py decides (its markers are
# documented in README.md, "Code blocks in this README"). The blocks run in
# a stand-in for a fresh checkout ($T/repo: the examples, and build/ linked to
# the build under test); `make` is checked to have nothing left to do in the
# real checkout. They run on the default SQLite file, as a new user's would,
# with DJC_DATABASE_URL unset;
# the `servers` blocks run on PostgreSQL and MariaDB with the suite's server.
# The extractor itself is tested first on a README that must fail.
. "$ROOT/tests/cli/lib.sh"
EX="$ROOT/tests/cli/readme_blocks.py"

case_extractor() {
# ---------------------------------------------- the extractor can fail
mkdir -p x/examples
printf 'a\nb\n' > x/examples/f.txt
cat > x/bad.md <<'MD'
<!-- readme-test: file examples/f.txt -->
```text
a
c
```

<!-- readme-test: excerpt examples/f.txt -->
```text
b
a
```

```
untagged
```

<!-- readme-test: skip -->
```sh
true
```
MD
run python3 "$EX" x/bad.md x x/out sqlite
check "a wrong file block, a wrong excerpt, an untagged block, a reasonless skip: 4 problems, exit 1" \
	test "$RC" = 1 -a "$(printf '%s\n' "$ERR" | grep -c '^bad.md:')" = 4
check "problems name the line" eval 'printf "%s\n" "$ERR" | grep -q "^bad.md:2: the block differs from examples/f.txt"'
cat > x/fail.md <<'MD'
```sh
echo first
false
echo never
```
MD
run python3 "$EX" x/fail.md x x/out2 sqlite
check "a runnable block is scheduled" test "$RC" = 0
run bash x/out2/run.sh
check "a failing command fails the run and names the README line" \
	eval 'test "$RC" != 0 && printf "%s" "$ERR" | grep -q "^fail.md:1: block failed" && ! printf "%s" "$OUT" | grep -q never'
}
tcase extractor

case_readme() {
# ---------------------------------------------------------- the README
mkdir -p repo
cp -r "$ROOT/examples" repo/
ln -s "$BUILD" repo/build
run python3 "$EX" "$ROOT/README.md" "$ROOT" "$T/readme" "$DJC_BACKEND"
check "every block of README.md is runnable or marked (readme_blocks.py)" test "$RC" = 0
nrun=$(printf '%s\n' "$OUT" | grep -c ': runs$')
check "README.md has runnable blocks ($nrun)" test "$nrun" -ge 3

SERVER_URL=$DJC_DATABASE_URL
# the adopt walk-through's DataJoint schema "ephys" (and its parent schema
# ephys_lab) as DataJoint declared them, from the fixtures of test_adopt;
# the overlay and its make programs where the README's commands run
readme_ephys() {
	local fx="$ROOT/tests/fixtures/datajoint-model" f
	case $DJC_BACKEND in
	mysql) f=dj014-mariadb
		server_sql 'DROP DATABASE IF EXISTS ephys; DROP DATABASE IF EXISTS ephys_lab; DROP DATABASE IF EXISTS ephys_djc' ;;
	postgresql) f=dj2-postgres ;;
	*) return 0 ;;
	esac
	sed -e 's/@UP@/ephys_lab/g' -e 's/@MAIN@/ephys/g' "$fx/$f.sql" > ephys.sql
	server_sql "$(cat ephys.sql)" >/dev/null
	# where the README's commands are by then (its first walk-through cd's into first/)
	mkdir -p repo/first
	cp "$ROOT/tests/fixtures/datajoint/overlay.djc" repo/first/ephys.djc
	cp "$ROOT/tests/fixtures/datajoint/mk_analysis.sh" "$ROOT/tests/fixtures/datajoint/mk_pair.py" repo/first/
}
check "the DataJoint schema ephys for the adopt walk-through ($DJC_BACKEND)" readme_ephys
# `make` as the README says, in the checkout: the build under test is current
# there, so it has nothing to do; the test checks that (make -q) rather than
# building, so that it never rebuilds the tree under a running suite
make() { command make -q --no-print-directory -C "$ROOT" "$@" || { echo "make: the build in $ROOT is not current: run make all first" >&2; return 1; }; }
export -f make
run env -u DJC_DATABASE_URL -u DJC_DATABASE_SCHEMA -u DJC_DATABASE_PASSWORD -u DJC_CONFIG \
	README_SERVER_URL="$SERVER_URL" HOME="$T/home" bash -c 'cd repo && . "$1"' readme "$T/readme/run.sh"
check "README.md's blocks run ($DJC_BACKEND)" test "$RC" = 0
check "they populated the first pipeline on the default SQLite file" \
	eval 'test "$(DJC_DATABASE_URL=sqlite:repo/first/djc.db DJC_DATABASE_SCHEMA= "$DJC" fetch SessionStats --format json | grep -c .)" = 4'
check "the first pipeline's mean rates" eval 'printf "%s\n" "$OUT" | grep -qx "2,4"'
if [ "$DJC_BACKEND" != sqlite ]; then
	check "the servers block populated the pipeline on $DJC_BACKEND" \
		eval 'test "$("$DJC" --schema first fetch SessionStats --format json | grep -c .)" = 3'
	"$DJC" --schema first drop Session --yes >/dev/null 2>&1
	# the adopt walk-through: djc's worker made the tables the overlay gave
	# it; the rows stay in DataJoint's tables after unadopt
	local ana pair
	ana=$(printf '%s\n' "$OUT" | sed -nE 's/^Analysis +\[#+\] +([0-9]+)\/\1 +100\.0%.*/\1/p')
	pair=$(printf '%s\n' "$OUT" | sed -nE 's/^Pair +\[#+\] +([0-9]+)\/\1 +100\.0%.*/\1/p')
	check "the adopt walk-through's progress: Analysis and Pair complete ($ana, $pair)" test -n "$ana" -a -n "$pair"
	check "... their rows in DataJoint's tables after unadopt" \
		test "$(server_sql 'SELECT COUNT(*) FROM ephys.__analysis')/$(server_sql 'SELECT COUNT(*) FROM ephys.__pair')" = "$ana/$pair"
fi
}
tcase readme extractor

finish
