#!/bin/bash
# valgrind.sh - run the djc CLI's main paths under valgrind (memcheck, full
# leak check) on a throwaway SQLite database. Any memory error or definite /
# indirect leak fails the run (exit 1) and its report is printed.
#   DJC_BUILD=build   the build directory holding djc (built with -O2 -g)
#   VG_URL=URL        run against this database instead (a PostgreSQL or
#                     MariaDB server: the driver paths); VG_SCHEMA names a
#                     fresh schema there (default djc_vg_PID)
# Takes about 30-60 s; not part of `make check`.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${DJC_BUILD:-build}
DJC="$ROOT/$BUILD/djc"
[ -x "$DJC" ] || { echo "valgrind.sh: $DJC not built (make BUILD=$BUILD)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
W=$(mktemp -d /tmp/djc-valgrind.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
unset DJC_DATABASE_SCHEMA DJC_CONFIG
export DJC_DATABASE_URL="${VG_URL:-sqlite:$W/vg.db}"
if [ -n "${VG_URL:-}" ]; then export DJC_DATABASE_SCHEMA="${VG_SCHEMA:-djc_vg_$$}"; fi
VG="valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=99 --trace-children=no"
fails=0
n=0
vg() {  # EXPECTED-EXIT DESC CMD...
	local want=$1 desc=$2; shift 2
	n=$((n + 1))
	$VG "$DJC" "$@" >"out.$n" 2>"err.$n"
	local rc=$?
	if [ "$rc" = 99 ] || grep -q '^==[0-9]*==' "err.$n" || [ "$rc" != "$want" ]; then
		fails=$((fails + 1))
		echo "FAIL: $desc (exit $rc, wanted $want): djc $*"
		sed 's/^/    /' "err.$n" | head -60
	else
		echo "ok:   $desc"
	fi
}
cat > p.djc <<'P'
Session (manual)
    session_id : int32
    ---
    subject : varchar(64)
    when = CURRENT_TIMESTAMP : datetime(3)
    meta = null : json
    raw = null : bytes
    kind = 'a' : enum('a', 'b')
    price = 1.5 : decimal(6,2)

Stats (computed)
    -> Session
    ---
    n : int64
    mean = null : float64

Stats.Unit (part)
    unit : int32
    ---
    w : float32

Other (computed)
    -> Session
    ---
    x : int32
    make = ./mk.sh

Fetched (computed)
    -> Session
    ---
    y : int64

Big (manual)
    big_id : int32
    ---
    data : bytes

BigCopy (computed)
    -> Big
    ---
    n : int64
P
# Python makes: per key, fetching through djc's fetch socket; served, sent
# values of 300 KB (lent to the program's pipe)
export PYTHONPATH="$ROOT/python"
cat > mkf.py <<'M'
import djc_make
djc_make.run(lambda key, fetch: {"y": len(fetch("Session", key)[0]["subject"])})
M
cat > mkbig.py <<'M'
import djc_make
djc_make.run(lambda key, fetch: {"n": len(fetch("Big", key)[0]["data"])})
M
python3 -c '
import base64, json
for i in (1, 2, 3):
    print(json.dumps({"big_id": i, "data": base64.b64encode(bytes([i]) * 300000).decode()}))' > big.jsonl
cat > mk.sh <<'M'
#!/bin/sh
echo "{\"n\": $((DJC_KEY_session_id * 10)), \"mean\": 0.5}"
echo "{\"_part\": \"Unit\", \"unit\": 1, \"w\": 2.5}"
echo "{\"_part\": \"Unit\", \"unit\": 2, \"w\": 3.5}"
echo "{\"x\": 1}" >/dev/null
M
cat > mkx.sh <<'M'
#!/bin/sh
[ "$DJC_KEY_session_id" = 3 ] && { echo "boom on 3" >&2; exit 3; }
echo '{"x": 1}'
M
chmod +x mk.sh mkx.sh
for i in $(seq 1 8); do echo "{\"session_id\": $i, \"subject\": \"s$i\", \"meta\": {\"a\": [1, 2]}, \"raw\": \"AAEC\"}"; done > rows.jsonl
vg 0 "declare" declare p.djc
vg 0 "declare again (idempotent)" declare p.djc
vg 2 "declare a bad file" declare mk.sh
vg 0 "insert" insert Session rows.jsonl
vg 2 "insert a duplicate" insert Session rows.jsonl
vg 2 "insert a bad row" insert Session mk.sh
vg 0 "fetch table" fetch Session
vg 0 "fetch json --where" fetch Session --where '[{"session_id": {">": 2}}, {"subject": ["s1"]}]' --format json
vg 0 "fetch csv" fetch Session --format csv
vg 2 "fetch unknown table" fetch Nope
vg 2 "fetch bad --where" fetch Session --where '{"nope": 1}'
vg 0 "progress" progress Stats
vg 0 "populate direct" populate Stats --max-calls 3 --make ./mk.sh
vg 0 "populate direct --json" populate Stats --max-calls 1 --json --make ./mk.sh
vg 0 "jobs refresh" jobs refresh Stats
vg 0 "jobs refresh --json" jobs refresh Other --json
vg 0 "populate --reserve-jobs" populate Stats --reserve-jobs --make ./mk.sh
vg 1 "populate --reserve-jobs with a failing make" populate Other --reserve-jobs --suppress-errors --make ./mkx.sh
vg 0 "jobs counts" jobs Other
vg 0 "jobs --status error" jobs Other --status error
vg 0 "jobs --status error --json" jobs Other --status error --json
vg 0 "jobs clear" jobs clear Other --status error
vg 0 "jobs ignore" jobs ignore Other '{"session_id": 3}'
vg 2 "jobs ignore a bad key" jobs ignore Other '{"nope": 3}'
vg 0 "populate by the make line" populate Other --reserve-jobs
vg 0 "populate --processes 2" populate Stats --reserve-jobs --processes 2 --make ./mk.sh
vg 0 "populate, a per-key Python make fetching through the fetch socket" populate Fetched --make python3 mkf.py
vg 0 "insert 300 KB values" insert Big big.jsonl
vg 0 "populate, a Python serve make sent 300 KB values" populate BigCopy --reserve-jobs --make-serve python3 mkbig.py
# values read from the server in pieces (PostgreSQL, VG_URL; elsewhere whole)
DJC_READ_PIECE=100000 vg 0 "fetch 300 KB values, in pieces of 100,000 bytes" fetch Big --format json
DJC_READ_PIECE=100000 vg 0 "populate, a serve make fetching 300 KB values in pieces" populate BigCopy --reserve-jobs --make-serve python3 mkbig.py
# a shell make's djc fetch through the worker's fetch socket, itself under valgrind
cat > mkvg.sh <<M
#!/bin/sh
cat >/dev/null
$VG "\$DJC" fetch Session --key "\$DJC_KEY" --format json >/dev/null 2>"vgfetch.\$DJC_KEY_session_id"
echo "{\"y\": \$?}"
M
chmod +x mkvg.sh
"$DJC" delete Fetched --yes >/dev/null
vg 0 "populate, a shell make whose djc fetch asks the fetch socket" populate Fetched --make ./mkvg.sh
n=$((n + 1))
made=$("$DJC" fetch Fetched --format json | grep -c '"y":0')
if [ "$made" = 8 ] && [ "$(ls vgfetch.* | wc -l)" = 8 ] && ! grep -q '^==[0-9]*==' vgfetch.*; then
	echo "ok:   djc fetch through the fetch socket, in each make"
else
	fails=$((fails + 1))
	echo "FAIL: djc fetch through the fetch socket, in a make:"
	"$DJC" fetch Fetched --format json | head -3
	head -20 vgfetch.* | sed 's/^/    /'
fi
vg 0 "progress --json" progress Stats --json
vg 0 "fetch part table" fetch Stats.Unit --format json
vg 2 "delete of a part table alone (refused: part integrity)" delete Stats.Unit --where '{"session_id": 1}'
vg 0 "delete (the master and its parts)" delete Stats --where '{"session_id": 1}' --yes
vg 0 "delete restricted by its own dependents (its keys read first)" delete 'Session & (Stats & {"session_id": 2})' --yes
vg 0 "config" config
vg 0 "config --json" config --json
vg 0 "tables" tables
vg 1 "a refused connection" --db "postgresql://u:pw@127.0.0.1:1/db" tables
echo
echo "valgrind: $((n - fails)) of $n runs clean"
[ "$fails" = 0 ]
