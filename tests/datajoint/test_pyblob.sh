#!/usr/bin/env bash
# test_pyblob.sh - python/djc_make.py with the real DataJoint's blob codec
# (issue 40; hooked into `make check-datajoint`, not `make check`: it
# needs DataJoint and numpy). A Python serve make run by an interpreter
# that can `import datajoint`:
#   decode   <blob> values reach the make as what datajoint.blob.unpack
#            makes of them (numpy arrays, a dict), raw bytes as memoryviews
#   pack     numpy results for <blob> attributes (target and part) are
#            packed with datajoint.blob.pack: DataJoint unpacks what djc
#            stored to the expected arrays; bytes results are stored as given
#   raw      DJC_BLOBS=raw: the same make gets the blobs' raw bytes
#   base64   djc_make.run(make, binary=False): blobs still decoded (from
#            base64 text, the types come all the same)
#   nodj     `import datajoint` fails in the program (NODJ=1): the numeric arrays
#            still come decoded and their results packed (djc_blob.py, numpy
#            only), the dict blob comes raw; DataJoint reads what was stored
#   codec    djc_blob.py against datajoint.blob, value by value
#            (tests/datajoint/blob_codec.py)
# Usage: tests/datajoint/test_pyblob.sh [URL...] (default: a temporary
# SQLite database). DataJoint: scripts/datajoint-python.sh. Exit 0 when
# every check passed.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DJC=${DJC:-$ROOT/build/djc}
. "$ROOT/scripts/datajoint-python.sh"
djpy_find || { echo "test_pyblob: $DJPY_WHY" >&2; exit 2; }
W=$(mktemp -d /tmp/djc-pyblob.XXXXXX)
trap 'rm -rf "$W"' EXIT
cd "$W"
URLS=("$@")
[ ${#URLS[@]} -gt 0 ] || URLS=("sqlite:///$W/t.db")
PASS=0 FAIL=0
check() {  # check DESCRIPTION CMD...
	local d=$1
	shift
	if "$@" >"$W/out" 2>&1; then PASS=$((PASS + 1)); echo "  ok   $d"
	else FAIL=$((FAIL + 1)); echo "  FAIL $d" >&2; sed 's/^/      /' "$W/out" | tail -15 >&2; fi
}

cat > p.djc <<'P'
Src (manual)
    id : int32
    ---
    blob : <blob>
    raw : bytes

Res (computed)
    -> Src
    ---
    mean : float64
    doubled : <blob>
    first : bytes

Res.Row (part)
    r : int32
    ---
    row : <blob>
P
# Src: 1: a 3x4 float array; 2: a dict; 3: a 2 MB int64 vector (compressed by pack)
"$DJPY" - > src.jsonl 2>/dev/null <<'P'
import base64, json, numpy as np
from datajoint.blob import pack
vals = {1: np.arange(12.0).reshape(3, 4), 2: {"a": np.array([1.5, 2.5]), "b": "text"}, 3: np.arange(262144, dtype=np.int64)}
for i, v in vals.items():
    print(json.dumps({"id": i, "blob": base64.b64encode(pack(v)).decode(), "raw": base64.b64encode(bytes([i]) * 5).decode()}))
P
cat > mk.py <<'P'
import os, sys
import numpy as np
import djc_make

if os.environ.get("NODJ"):   # `import datajoint` fails (mode nodj)
    sys.modules["datajoint"] = None

def make(key, fetch):
    s = fetch("Src", key)[0]
    b = s["blob"]
    with open(os.environ["LOG"], "a") as f:
        f.write("make %d %s %s\n" % (key["id"], type(b).__name__, type(s["raw"]).__name__))
    if isinstance(b, dict):
        b = b["a"]
    elif not isinstance(b, np.ndarray):   # DJC_BLOBS=raw: the packed bytes as they are
        return {"mean": 0.0, "doubled": b, "first": djc_make.b64(s["raw"])[:1]}
    rows = [{"mean": float(np.mean(b)), "doubled": b * 2, "first": djc_make.b64(s["raw"])[:1]}]
    rows += [{"_part": "Row", "r": i, "row": r} for i, r in enumerate(np.atleast_2d(b)[:2])]
    return rows

djc_make.run(make, binary=os.environ.get("BINARY", "1") == "1")
P
# DataJoint reads what djc stored: the number of values that differ
cat > verify.py <<'P'
import base64, json, subprocess, sys
import numpy as np
from datajoint.blob import unpack
djc, mode = sys.argv[1], sys.argv[2]
def rows(t):
    out = subprocess.run([djc, "fetch", t, "--format", "json"], check=True, stdout=subprocess.PIPE).stdout
    return [json.loads(l) for l in out.decode().splitlines() if l]
src = {r["id"]: r for r in rows("Src")}
bad = 0
for r in rows("Res"):
    s = src[r["id"]]
    v = unpack(base64.b64decode(s["blob"]))
    a = v["a"] if isinstance(v, dict) else v
    if mode == "raw" or (mode == "nodj" and isinstance(v, dict)):
        bad += r["doubled"] != s["blob"]
        continue
    bad += not np.array_equal(unpack(base64.b64decode(r["doubled"])), a * 2)
    bad += abs(r["mean"] - float(np.mean(a))) > 1e-9
    bad += base64.b64decode(r["first"]) != bytes([r["id"]])
parts = [p for p in rows("Res.Row")]
for p in parts:
    v = unpack(base64.b64decode(src[p["id"]]["blob"]))
    a = np.atleast_2d(v["a"] if isinstance(v, dict) else v)
    bad += not np.array_equal(unpack(base64.b64decode(p["row"])), a[p["r"]])
want = {"raw": 0, "decoded": 4, "nodj": 3}[mode]   # parts: 2 rows of key 1, 1 of 2 (a vector), 1 of 3
print("%d wrong, %d part rows (want %d)" % (bad, len(parts), want))
sys.exit(bad != 0 or len(parts) != want)
P
check "codec: djc_blob.py packs and unpacks numeric arrays as datajoint.blob does" \
	env PYTHONPATH="$ROOT/python" "$DJPY" -W ignore "$ROOT/tests/datajoint/blob_codec.py"
export LOG=$W/log
for url in "${URLS[@]}"; do
	export DJC_DATABASE_URL=$url
	be=${url%%:*}
	check "[$be] declare" "$DJC" declare p.djc
	check "[$be] insert the DataJoint blobs" "$DJC" insert Src src.jsonl
	for mode in decode raw base64 nodj; do
		"$DJC" delete Res --yes >/dev/null 2>&1
		: > "$LOG"
		env=()
		[ $mode = raw ] && env=(DJC_BLOBS=raw)
		[ $mode = base64 ] && env=(BINARY=0)
		[ $mode = nodj ] && env=(NODJ=1)
		check "[$be] $mode: populate with $DJPY" env "${env[@]}" "$DJC" populate Res --reserve-jobs --make-serve "$DJPY" mk.py
		case $mode in
		raw) want='make 1 memoryview memoryview|make 2 memoryview memoryview|make 3 memoryview memoryview' ;;
		base64) want='make 1 ndarray str|make 2 dict str|make 3 ndarray str' ;;
		nodj) want='make 1 ndarray memoryview|make 2 memoryview memoryview|make 3 ndarray memoryview' ;;
		*) want='make 1 ndarray memoryview|make 2 dict memoryview|make 3 ndarray memoryview' ;;
		esac
		check "[$be] $mode: what the make got ($want)" test "$(sort "$LOG" | tr '\n' '|')" = "$want|"
		check "[$be] $mode: DataJoint reads the results" "$DJPY" verify.py "$DJC" "$(case $mode in raw | nodj) echo $mode ;; *) echo decoded ;; esac)"
	done
	"$DJC" drop Res.Row Res Src --yes >/dev/null 2>&1 || "$DJC" drop --all --yes >/dev/null 2>&1
done
echo "test_pyblob: $PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
