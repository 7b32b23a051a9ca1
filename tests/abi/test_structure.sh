#!/bin/bash
# test_structure.sh - the structure docs/architecture.md promises, checked on
# the sources by scripts/structure.py (issue 37): includes go downward only,
# no layer above src/db reaches into a driver, SQL is written in its two
# homes only, no function over 80 lines or 7 parameters. Then the same
# script on a copy of src/ with one break of each rule planted: it must
# report each, so a rule that can no longer fail is noticed here.
. "$ROOT/tests/cli/lib.sh"

run python3 "$ROOT/scripts/structure.py" "$ROOT"
[ "$RC" = 0 ] || printf '%s\n' "$OUT" >&2
check "the sources keep every rule of scripts/structure.py" test "$RC" = 0
for rule in "every include goes" "no file above src/db" "SQL text only" "no function over 80 lines"; do
	check "rule checked: $rule" grep -q "^ok - $rule" <<<"$OUT"
done

# a copy with one break of each rule
copy=$(mktemp -d "${TMPDIR:-/tmp}/djc-structure.XXXXXX")
mkdir -p "$copy/scripts" && cp -r "$ROOT/src" "$copy/src" && cp "$ROOT/scripts/structure.py" "$copy/scripts/"
{
	echo '#include "populate/worker.h"'   # table includes a layer above it
} >>"$copy/src/table/graph.c"
{
	echo 'static int planted_drv(db_conn *d) { return d->drv->now != 0; }'
	echo 'static const char *planted_sql = "SELECT 1 FROM t WHERE 1";'
	echo 'static int planted_params(int a, int b, int c, int d, int e, int f, int g, int h)'
	echo '{'
	echo '	return a + b + c + d + e + f + g + h;'
	echo '}'
	echo 'static int planted_long(void)'
	echo '{'
	echo '	int x = 0;'
	for i in $(seq 1 85); do echo "	x += $i;"; done
	echo '	return x;'
	echo '}'
} >>"$copy/src/populate/direct.c"
run python3 "$copy/scripts/structure.py" "$copy"
check "the planted breaks fail the script" test "$RC" = 1
check "an include upward is reported" grep -q 'src/table/graph.c:[0-9]*: .*includes populate/worker.h of layer populate above it' <<<"$OUT"
check "->drv-> above src/db is reported" grep -q 'src/populate/direct.c:[0-9]*: static int planted_drv' <<<"$OUT"
check "SQL outside its homes is reported" grep -q 'src/populate/direct.c:[0-9]*: "SELECT 1 FROM t WHERE 1"' <<<"$OUT"
check "a function of 8 parameters is reported" grep -q 'planted_params takes 8 parameters' <<<"$OUT"
check "a function of 87 lines is reported" grep -q 'planted_long is 87 lines' <<<"$OUT"
rm -rf "$copy"
finish
