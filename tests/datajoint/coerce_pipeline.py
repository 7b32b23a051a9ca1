"""coerce_pipeline.py - values a DataJoint make inserts that DataJoint's
insert converts (tests/datajoint/test_djcoerce.sh; python/djc_datajoint.py).

The same make runs twice: DataJoint's own populate fills CoerceDJ, djc
(djc_datajoint) fills Coerce, one key per case of CASES (an attribute and
a value: NaN in a nullable float, "7" in an int32, 1.005 in a
decimal(6,2), a datetime with microseconds in a datetime, bytes in a
<blob>, ...). ``compare`` checks that both stored the same row for every
case, or both failed it (djc's error naming the attribute), except the
cases djc cannot store as DataJoint does on that backend (KNOWN). Halt's
make raises SystemExit(3) and KeyboardInterrupt for two keys.

    coerce_pipeline.py declare            declares Case, Coerce, CoerceDJ, HaltCase, Halt
    coerce_pipeline.py populate           DataJoint populates CoerceDJ
    coerce_pipeline.py compare JOBS.json  CoerceDJ against Coerce (JOBS: djc jobs Coerce --status error --json)
    coerce_pipeline.py drop

Environment: DJCO_URL_FILE (a file holding the database URL), DJCO_PREFIX.
"""

import datetime
import decimal
import json
import math
import os
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pipeline  # noqa: E402

dj = pipeline.dj
np = pipeline.np
D = decimal.Decimal
DT = datetime.datetime

with open(os.environ["DJCO_URL_FILE"]) as f:
    pipeline.connect(f.read().strip())
schema = dj.Schema(os.environ["DJCO_PREFIX"] + "_main")
BACKEND = dj.config["database.backend"]

CASES = [
    ("f", np.nan), ("f", float("nan")), ("f", D("2.5")), ("f", np.float32(0.1)), ("f", "3.25"),
    ("f", np.inf), ("f", 1), ("f", ""), ("f", None),
    ("fd", np.nan), ("fd", None), ("fnn", np.nan), ("fnn", None), ("fd", -np.inf), ("fnn", float("inf")),
    ("g", np.nan), ("g", np.inf), ("g", np.float32("-inf")),
    ("i", "7"), ("i", True), ("i", np.int64(3)), ("i", 3.0), ("i", 2.5), ("i", np.float64(-4.5)),
    ("i", "abc"), ("i", np.nan), ("i", " 12 "),
    ("b", "1"), ("b", "0"), ("b", True), ("b", np.bool_(False)), ("b", 2), ("b", "true"),
    ("d", 1.005), ("d", "1.005"), ("d", D("1.0049")), ("d", 2.675), ("d", -1.005), ("d", 7),
    ("d", "abc"), ("d", np.nan), ("d", np.float32(0.1)),
    ("dt", DT(2024, 1, 1, 10, 0, 0, 500000)), ("dt", DT(2024, 12, 31, 23, 59, 59, 999999)),
    ("dt", datetime.date(2024, 1, 1)), ("dt", "2024-01-01 10:00:00.7"), ("dt", np.datetime64("2024-01-01T10:00:00")),
    ("dt", DT(1999, 12, 31, 23, 59, 59, 999999)),
    ("dt3", DT(2024, 1, 1, 10, 0, 0, 123456)), ("dt3", DT(2024, 1, 1, 10, 0, 0, 999900)),
    ("dt3", DT(1990, 1, 1, 10, 0, 0, 122500)),
    ("dd", DT(2024, 1, 4, 13, 5)), ("dd", "2024-01-04 13:05:00"), ("dd", np.datetime64("2024-01-03")),
    ("s", 5), ("s", 2.5), ("s", True), ("s", D("1.50")), ("s", np.int64(4)),
    ("u", "00000000-0000-0000-0000-000000000008"), ("u", "0000000000000000000000000000000A"), ("u", "bad"),
    ("bl", b"\x00\x01raw"), ("bl", np.arange(3)), ("bl", "text"),
]

# case index -> (why djc's result differs from DataJoint's on this backend,
# what djc does: None for failing the key naming the attribute, else the
# value it stores)
KNOWN = {}
for n, (a, v) in enumerate(CASES):
    if BACKEND == "mysql" and a == "b" and v == 2 and not isinstance(v, str):
        KNOWN[n] = ("MariaDB's bool (tinyint) stores 2; djc's bool is true or false", None)
    if BACKEND == "postgresql" and a == "u" and v != "bad":
        KNOWN[n] = ("DataJoint 2.3.2 on PostgreSQL inserts a uuid as bytea, which PostgreSQL refuses", uuid.UUID(v))
    if BACKEND == "postgresql" and isinstance(v, np.datetime64):
        KNOWN[n] = ("DataJoint on PostgreSQL cannot send a numpy datetime64 (psycopg2 cannot adapt it)",
                    v.item() if a == "dd" else v.astype("datetime64[us]").item())


@schema
class Case(dj.Lookup):
    definition = """
    case_id : int32
    """
    contents = [(i,) for i in range(len(CASES))]


DEFINITION = """
-> Case
---
f = null : float64
fd = 2.5 : float64
fnn : float64
g = null : float32
i = null : int32
b = null : bool
d = null : decimal(6,2)
dt = null : datetime
dt3 = null : datetime(3)
dd = null : date
s = null : varchar(20)
u = null : uuid
bl = null : <blob>
"""


def _make(self, key):
    a, v = CASES[key["case_id"]]
    self.insert1(dict(key, **dict({"fnn": 1.0}, **{a: v})))


@schema
class Coerce(dj.Computed):
    definition = DEFINITION
    make = _make


@schema
class CoerceDJ(dj.Computed):
    definition = DEFINITION
    make = _make


@schema
class HaltCase(dj.Lookup):
    definition = """
    halt_id : int32
    """
    contents = [(i,) for i in range(5)]


@schema
class Halt(dj.Computed):
    definition = """
    -> HaltCase
    ---
    n : int32
    """

    def make(self, key):
        if key["halt_id"] == 1:
            sys.exit(3)
        if key["halt_id"] == 3:
            raise KeyboardInterrupt
        self.insert1(dict(key, n=key["halt_id"]))


def _same(x, y):
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return True
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        return type(x) is type(y) and x.dtype == y.dtype and x.shape == y.shape and bool(np.all(x == y))
    return type(x) is type(y) and x == y


def compare(jobs_file):
    with open(jobs_file) as f:
        jobs = json.load(f)
    jobs = jobs if isinstance(jobs, list) else jobs.get("jobs", jobs)
    errors = {j["key"]["case_id"] if "key" in j else j["case_id"]: j["error_message"] for j in jobs}
    # DataJoint 2.3.2 on PostgreSQL cannot read a uuid attribute (bytes for
    # its uuid column): read it as text there
    attrs = [a for a in Coerce.heading.names if not (BACKEND == "postgresql" and a == "u")]
    dj_rows = {r["case_id"]: r for r in CoerceDJ.proj(*attrs).fetch(as_dict=True)}
    djc_rows = {r["case_id"]: r for r in Coerce.proj(*attrs).fetch(as_dict=True)}
    if BACKEND == "postgresql":
        for rows, t in ((dj_rows, CoerceDJ), (djc_rows, Coerce)):
            q = "SELECT case_id, u::text FROM %s" % t.full_table_name
            for case_id, u in t.connection.query(q).fetchall():
                rows[case_id]["u"] = None if u is None else uuid.UUID(u)
    bad = 0
    same_rows = same_errors = known = 0
    for n, (a, v) in enumerate(CASES):
        mine, theirs = djc_rows.get(n), dj_rows.get(n)
        what = "case %d (%s = %r)" % (n, a, v)
        if n in KNOWN:
            why, want = KNOWN[n]
            if want is None and (mine is not None or n not in errors or "'%s'" % a not in errors[n]):
                print("%s: %s, so djc must fail it naming the attribute; djc: %r" % (what, why, mine or errors.get(n)))
                bad += 1
            elif want is not None and (mine is None or not _same(mine[a], want)):
                print("%s: %s; djc must store %r, got %r" % (what, why, want, mine[a] if mine else errors.get(n)))
                bad += 1
            known += 1
            continue
        if theirs is None:
            if mine is not None:
                print("%s: DataJoint refused it, djc stored %r" % (what, mine[a]))
                bad += 1
            elif n not in errors or ("'%s'" % a not in errors[n] and "`%s`" % a not in errors[n]):
                print("%s: djc's error does not name the attribute: %r" % (what, errors.get(n)))
                bad += 1
            else:
                same_errors += 1
            continue
        if mine is None:
            print("%s: DataJoint stored %r, djc failed: %s" % (what, theirs[a], errors.get(n)))
            bad += 1
            continue
        diff = [k for k in theirs if not _same(theirs[k], mine[k])]
        if diff:
            print("%s: differs in %s: DataJoint %r, djc %r" % (what, diff, [theirs[k] for k in diff], [mine[k] for k in diff]))
            bad += 1
        else:
            same_rows += 1
    print("%d cases: %d stored alike, %d refused by both, %d known differences (%s), %d mismatches"
          % (len(CASES), same_rows, same_errors, known, BACKEND, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "declare":
        print("declared Coerce, CoerceDJ (%d cases), Halt" % len(Case()))
    elif cmd == "populate":
        r = CoerceDJ.populate(reserve_jobs=True, suppress_errors=True, display_progress=False)
        print("DataJoint made %d, %d errors" % (r["success_count"], len(r["error_list"])))
        for k, e in r["error_list"]:
            print("  DataJoint refused case %d %r: %s" % (k["case_id"], CASES[k["case_id"]], e[:120]))
    elif cmd == "compare":
        sys.exit(compare(sys.argv[2]))
    elif cmd == "drop":
        schema.drop(prompt=False)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
