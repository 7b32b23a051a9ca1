#!/usr/bin/env bash
# test_djclass.sh - DataJoint table classes' own make() run by djc
# (python/djc_datajoint.py, issue 38; run by scripts/check-datajoint.sh on
# each of its servers, not by `make check`: it needs DataJoint).
#   1. DataJoint declares pipeline.py's pipeline and djclass_pipeline.py's
#      Tri (tripartite make), Boom (raises for one session), Stray (inserts
#      into another table), Picky (key_source overridden in Python);
#   2. djc adopts the schema; the overlay names the classes
#      (make_serve = PY -m djc_datajoint tests/datajoint/djclass_pipeline.py:Stats);
#   3. `djc worker --processes 2 --until-empty`: every Stats and Tri key made,
#      Boom's broken session an error job with DataJoint's message and the
#      traceback, every Stray key an error naming the other table, Picky's
#      keys outside its Python key_source errors naming it (no row made);
#   4. DataJoint reads it all: pipeline.py's check of Stats (arrays, parts,
#      progress complete, populate finds nothing, job metadata), Tri's
#      arrays, Boom's rows, nothing in Stray, ParamSet unchanged, Picky's
#      rows those of its key_source.
#   5. in-process (djc_datajoint.populate, python/djc_lib.py): Tri's rows
#      deleted and made again by the class's make in 2 forked worker
#      processes of a script; DataJoint reads them (step 4's check again).
# Usage: tests/datajoint/test_djclass.sh URL (a MariaDB or PostgreSQL server
# DataJoint can reach). DataJoint: scripts/datajoint-python.sh.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DJC=${DJC:-$ROOT/build/djc}
. "$ROOT/scripts/datajoint-python.sh"
djpy_find || { echo "test_djclass: $DJPY_WHY" >&2; exit 2; }
[ $# = 1 ] || { echo "usage: test_djclass.sh URL" >&2; exit 2; }
URL=$1
W=$(mktemp -d /tmp/djc-djclass.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
# DataJoint's credentials reach the classes' module through a file (as
# DataJoint's own datajoint.json and .secrets/ would): djc gives its serve
# programs no variable that holds its database password
echo "$URL" > "$W/dj.url"
export DJCL_URL_FILE=$W/dj.url DJCL_PREFIX=djcl
PASS=0 FAIL=0
check() {  # check DESCRIPTION CMD...
	local d=$1
	shift
	if "$@" >"$W/out" 2>&1; then PASS=$((PASS + 1)); echo "  ok   $d: $(grep -v 'WARNING\|Warning\|^ *warn' "$W/out" | tail -1)"
	else FAIL=$((FAIL + 1)); echo "  FAIL $d" >&2; sed 's/^/      /' "$W/out" | tail -15 >&2; fi
}
TD=$ROOT/tests/datajoint
D=("$DJC" --db "$URL" --schema djcl_djc)

check "DataJoint declares the pipeline" "$DJPY" "$TD/pipeline.py" declare "$URL" djcl 6
check "DataJoint declares Tri, Boom, Stray, Picky" "$DJPY" "$TD/djclass_pipeline.py" declare
: > overlay
for t in Stats Tri Boom Stray Picky; do
	printf '%s\n    make_serve = %s -m djc_datajoint %s/djclass_pipeline.py:%s\n    timeout = 5m\n' \
		"$t" "$DJPY" "$TD" "$t" >> overlay
done
check "djc adopt djcl_main" "${D[@]}" adopt djcl_main --overlay overlay
check "djc worker --processes 2 --until-empty" sh -c '"$@" worker --processes 2 --until-empty --json > worker.json; cat worker.json' _ "${D[@]}"
check "djc's counts: Stats 12 + Tri 6 + Boom 4 + Picky 4 made; 2 Boom, 6 Stray and 2 Picky errors" python3 -c '
import json
d = json.load(open("worker.json"))
assert (d["success_count"], d["error_count"], d["lost_count"]) == (26, 10, 0), d
print("made %d, errors %d" % (d["success_count"], d["error_count"]))'
jobs_has() {  # TABLE PATTERN: djc's error jobs of TABLE, with the stack
	"${D[@]}" jobs "$1" --status error --json > jobs.json &&
	python3 - "$2" "$3" <<'P'
import json, re, sys
rows = json.load(open("jobs.json"))
rows = rows if isinstance(rows, list) else rows.get("jobs", rows)
assert len(rows) == int(sys.argv[2]), rows
for r in rows:
    assert re.search(sys.argv[1], r["error_message"]), r["error_message"]
    assert "Traceback" in (r.get("error_stack") or ""), r
print("%d error jobs: %s" % (len(rows), rows[0]["error_message"]))
P
}
check "Boom: DataJoint's error message and the traceback" jobs_has Boom '^ValueError: session 1 is broken$' 2
check "Stray: refused, naming the other table" jobs_has Stray 'NotSupported: make inserts into .*param_set.*neither Stray ' 6
check "DataJoint reads Stats (pipeline.py check)" "$DJPY" "$TD/pipeline.py" check "$URL" djcl
check "Picky: keys outside its Python key_source refused, naming it" jobs_has Picky \
	"^NotSupported: key .* is not in Picky.key_source, which the class overrides in Python" 2
check "DataJoint reads Tri, Boom, Stray, Picky" "$DJPY" "$TD/djclass_pipeline.py" check
# the same classes in-process (djc_datajoint.populate: libdjc called from
# the lab's own script, no serve program): Tri's rows deleted by DataJoint
# and made again by 2 forked worker processes, each with a DataJoint
# connection of its own; the script's DataJoint connection works after
check "in-process: djc_datajoint.populate(Tri, reserve_jobs=True, processes=2) makes its 6 keys" \
	env PYTHONPATH="$ROOT/python" DJC_LIBRARY="${DJC_LIBRARY:-$(dirname "$DJC")/libdjc.so.0}" "$DJPY" -c '
import sys
sys.path.insert(0, sys.argv[3])
import djclass_pipeline as p, djc_datajoint
import os
p.dj.config["safemode"] = False
p.Tri().delete()
assert len(p.Tri()) == 0
ask = "SELECT pg_backend_pid()" if sys.argv[1].startswith("postgres") else "SELECT CONNECTION_ID()"
session = lambda: p.Tri().connection.query(ask).fetchone()[0]
mine, log = session(), []
insert = p.Tri.make_insert
def make_insert(self, key, *args):   # which process made it, on which DataJoint session
    with open("sessions.log", "a") as f:
        f.write("%d %d\n" % (os.getpid(), session()))
    return insert(self, key, *args)
p.Tri.make_insert = make_insert
r = djc_datajoint.populate(p.Tri, reserve_jobs=True, processes=2, url=sys.argv[1], schema=sys.argv[2])
assert (r["success_count"], r["error_count"], r["lost_count"]) == (6, 0, 0), r
assert len(p.Tri()) == 6, len(p.Tri())   # DataJoint reads after, on its connection opened again
pairs = {tuple(map(int, l.split())) for l in open("sessions.log")}
pids = {a for a, _ in pairs}
assert len(pairs) == len(pids) and len({b for _, b in pairs}) == len(pids) and mine not in {b for _, b in pairs}, (mine, pairs)
print("made %d in-process by %d processes, each on a DataJoint session of its own; DataJoint reads %d rows"
      % (r["success_count"], len(pids), len(p.Tri())))' "$URL" djcl_djc "$TD"
check "DataJoint reads Tri, Boom, Stray, Picky again" "$DJPY" "$TD/djclass_pipeline.py" check
"${D[@]}" unadopt djcl_main >/dev/null 2>&1
"$DJPY" "$TD/pipeline.py" drop "$URL" djcl >/dev/null 2>&1
echo "test_djclass: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
