"""dj_blob.py - the real DataJoint's half of bench/dj-blob.sh (issue 40):
the make of bench/py-blob.sh (a 10 MiB float64 <blob> in, its first 131,072
elements, 1 MiB, out) as a DataJoint pipeline, populated by DataJoint's
own populate(reserve_jobs=True), and by djc on the same tables (adopted,
with bench/prog/blob_make.py as the serve make, BLOB_MODE=dj).

    dj_blob.py declare  URL SCHEMA N MB   drop and declare SCHEMA; N arrays of MB MiB
    dj_blob.py populate URL SCHEMA        Head.populate(reserve_jobs=True); prints the seconds
    dj_blob.py check    URL SCHEMA N      every key's row, as DataJoint reads it (exit 1 if not)
    dj_blob.py clear    URL SCHEMA        delete Head's rows (DataJoint's delete)

SCHEMA.Arr (manual): id : int32 | data : <blob>
SCHEMA.Head (computed): -> Arr | n : int64, head : <blob>
Head's make is blob_make.py's make_dj: the same work whoever runs it.
It uses DataJoint's public API only."""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "datajoint"))
from pipeline import connect, dj  # noqa: E402

OUT = 131072


def tables(schema_name):
    schema = dj.Schema(schema_name)

    @schema
    class Arr(dj.Manual):
        definition = """
        id : int32
        ---
        data : <blob>
        """

    @schema
    class Head(dj.Computed):
        definition = """
        -> Arr
        ---
        n : int64
        head : <blob>
        """

        def make(self, key):
            a = (Arr & key).fetch1("data")
            self.insert1(dict(key, n=a.size, head=a[:OUT]))

    return Arr, Head


def array_of(i, mb):
    return np.arange(mb * 131072, dtype=np.float64) + i


def main(argv):
    cmd, url, name = argv[0], argv[1], argv[2]
    connect(url)
    if cmd == "declare":
        try:
            dj.Schema(name, create_schema=False).drop(prompt=False)
        except Exception:
            pass
        Arr, _ = tables(name)
        n, mb = int(argv[3]), int(argv[4])
        for i in range(n):
            Arr.insert1({"id": i, "data": array_of(i, mb)})
        return 0
    Arr, Head = tables(name)
    if cmd == "populate":
        t0 = time.perf_counter()
        r = Head.populate(reserve_jobs=True, display_progress=False)
        s = time.perf_counter() - t0
        print("%.3f %d %d" % (s, r["success_count"], len(r["error_list"])))
        return 0 if not r["error_list"] else 1
    if cmd == "check":
        n = int(argv[3])
        rows = Head.fetch(as_dict=True, order_by="id")
        mb = Arr.fetch("data", limit=1)[0].size // 131072
        ok = len(rows) == n and all(
            r["n"] == mb * 131072 and np.array_equal(r["head"], array_of(r["id"], mb)[:OUT]) for r in rows)
        print("check: %d rows %s" % (len(rows), "right" if ok else "WRONG"))
        return 0 if ok else 1
    if cmd == "clear":
        Head.delete(prompt=False)
        return 0
    print("dj_blob.py: unknown command " + cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
