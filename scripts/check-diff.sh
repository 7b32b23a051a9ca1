#!/bin/bash
# check-diff.sh OLD_DIR NEW_DIR - proves that a change to the tests dropped
# no check: both directories hold the outputs of scripts/run-tests.sh runs
# made with DJC_TEST_TRACE=1 DJC_TEST_OUT=DIR (one file per job, NAME[BACKEND]).
# For every job of OLD_DIR, the passing check descriptions ("ok: ..." lines,
# counted with their repeats) must be the same in NEW_DIR; prints one line
# per job and a total, and exits 1 on any difference or missing job.
set -u
old=${1:?usage: check-diff.sh OLD_DIR NEW_DIR}
new=${2:?usage: check-diff.sh OLD_DIR NEW_DIR}
bad=0 jobs=0 total=0
oks() { grep '^ok: ' "$1" | LC_ALL=C sort; }
for f in "$old"/*; do
	job=$(basename "$f")
	jobs=$((jobs + 1))
	if [ ! -e "$new/$job" ]; then
		echo "$job: missing in $new"; bad=1; continue
	fi
	a=$(oks "$f" | grep -c .) b=$(oks "$new/$job" | grep -c .)
	if d=$(diff <(oks "$f") <(oks "$new/$job")); then
		echo "$job: $a checks, the same"
		total=$((total + a))
	else
		echo "$job: $a checks before, $b after; differences:"
		printf '%s\n' "$d" | head -20 | sed 's/^/    /'
		bad=1
	fi
done
echo "check-diff: $jobs jobs, $total checks the same$([ $bad = 0 ] || echo '; DIFFERENCES above')"
exit $bad
