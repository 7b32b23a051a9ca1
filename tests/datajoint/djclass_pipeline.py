"""djclass_pipeline.py - DataJoint classes whose own make() djc runs
(python/djc_datajoint.py; tests/datajoint/test_djclass.sh).

The module a lab would have: importing it connects (here from the
file named by DJCL_URL_FILE, and DJCL_PREFIX) and declares the classes. Stats is
pipeline.py's Stats, unchanged (make: fetch1 of two parents, numpy, insert1
into itself and insert into its part). Besides it:

    Tri    (computed) -> Session | mean : float64, trace : <blob>
           the tripartite make of DataJoint 2.x (make_fetch/make_compute/make_insert)
    Boom   (computed) -> Session | n : int32
           raises ValueError for session_idx 1 (an error job with a traceback);
           inserts its row twice, the second time with skip_duplicates=True
    Stray  (computed) -> Session | n : int32
           also inserts into ParamSet: djc refuses (not the table being made)
    Picky  (computed) -> Session | n : int32
           key_source overridden in Python (session_idx != 1), make trusting it:
           djc's key source has every session, the others fail naming key_source

    djclass_pipeline.py declare   declares these tables (after `pipeline.py declare URL PREFIX N`)
    djclass_pipeline.py check     DataJoint reads Tri, Boom and Stray (exit 1 on a mismatch)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pipeline  # noqa: E402

dj = pipeline.dj
np = pipeline.np

# the URL from a file (DJCL_URL_FILE), as DataJoint's datajoint.json and
# .secrets/ would give it: djc's serve programs get no variable holding
# djc's database password
with open(os.environ["DJCL_URL_FILE"]) as f:
    pipeline.connect(f.read().strip())
_prefix = os.environ["DJCL_PREFIX"]
subject, main, Subject, Session, ParamSet, Stats = pipeline.tables(_prefix)


@main
class Tri(dj.Computed):
    definition = """
    -> Session
    ---
    mean : float64
    trace : <blob>
    """

    def make_fetch(self, key):
        return ((Session & key).fetch1("samples"),)

    def make_compute(self, key, samples):
        return float(np.mean(samples)), np.cumsum(samples)

    def make_insert(self, key, mean, trace):
        self.insert1(dict(key, mean=mean, trace=trace))


@main
class Boom(dj.Computed):
    definition = """
    -> Session
    ---
    n : int32
    """

    def make(self, key):
        if key["session_idx"] == 1:
            raise ValueError("session %d is broken" % key["session_idx"])
        row = dict(key, n=len((Session & key).fetch1("samples")))
        self.insert1(row)
        self.insert1(row, skip_duplicates=True)   # the same row again: skipped, as DataJoint does


@main
class Stray(dj.Computed):
    definition = """
    -> Session
    ---
    n : int32
    """

    def make(self, key):
        self.insert1(dict(key, n=1))
        ParamSet.insert1((100 + key["session_idx"], 9.0))


@main
class Picky(dj.Computed):
    definition = """
    -> Session
    ---
    n : int32
    """

    @property
    def key_source(self):
        return Session & "session_idx != 1"

    def make(self, key):
        self.insert1(dict(key, n=1))   # trusts key_source: no check of its own


def check():
    keys = Session.fetch("KEY")
    for key in keys:
        samples = (Session & key).fetch1("samples")
        mean, trace = (Tri & key).fetch1("mean", "trace")
        if not np.isclose(mean, np.mean(samples)) or not np.allclose(trace, np.cumsum(samples)):
            print("Tri %r: %r %r" % (key, mean, trace), file=sys.stderr)
            return 1
    bad = [k for k in keys if k["session_idx"] == 1]
    if len(Boom()) != len(keys) - len(bad) or len(Boom & bad):
        print("Boom has %d rows, expected %d" % (len(Boom()), len(keys) - len(bad)), file=sys.stderr)
        return 1
    if len(Stray()) or len(ParamSet()) != 2:
        print("Stray has %d rows, ParamSet %d" % (len(Stray()), len(ParamSet())), file=sys.stderr)
        return 1
    if len(Picky & bad) or len(Picky()) != len(keys) - len(bad) or Picky().progress(display=False)[0]:
        print("Picky has %d rows, %d of sessions its key_source leaves out" % (len(Picky()), len(Picky & bad)),
              file=sys.stderr)
        return 1
    print("DataJoint reads Tri (%d rows, arrays), Boom (%d rows), Stray (none), ParamSet unchanged, "
          "Picky (%d rows: its key_source's)" % (len(Tri()), len(Boom()), len(Picky())))
    return 0


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "declare":
        # importing declared them (after pipeline.py's declare made the rest)
        print("declared Tri, Boom, Stray, Picky beside Stats; %d sessions" % len(Session()))
    elif cmd == "check":
        sys.exit(check())
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
