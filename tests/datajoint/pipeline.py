"""pipeline.py - the real DataJoint's half of `make check-datajoint` and
bench/dj-populate.sh: a small DataJoint 2.x pipeline declared, filled and
checked by DataJoint itself (import datajoint: build/realdj/bin/djpython, or
a python3 with `pip install datajoint`).

    pipeline.py declare  URL PREFIX [NSESSIONS]   drop and declare PREFIX_subject, PREFIX_main; insert upstream rows
    pipeline.py populate URL PREFIX [MAX [PROCESSES]]  DataJoint's own populate(reserve_jobs=True) of Stats
    pipeline.py check    URL PREFIX [MADE_BY_DJ]  the results as DataJoint reads them (exit 1 on a mismatch)
    pipeline.py drop     URL PREFIX

URL: mysql://user:pw@host:port/db (MariaDB) or postgresql://user@host:port/db
(the schemas go into that database). The pipeline:

    PREFIX_subject.Subject (manual)   subject_id : int32 | name : varchar(32)
    PREFIX_main.Session (manual)      -> subject.Subject, session_idx : int16 | samples : <blob>
    PREFIX_main.ParamSet (lookup)     paramset_idx : int16 | scale : float64     (2 rows)
    PREFIX_main.Settings (manual)     | threshold : float64   (a singleton: no key; no rows: DataJoint 2.3.2's
                                      len() of it fails, so a Lookup's contents cannot be given)
    PREFIX_main.Stats (computed)      -> Session, -> ParamSet.proj(paramset='paramset_idx')
                                      | mean : float64, scaled : <blob>   (+ job metadata columns)
    PREFIX_main.Stats.Peak (part)     -> master, peak_idx : int32 | value : float64

Stats' make is stats_rows() below: the same computation the djc serve make
(tests/datajoint/stats_make.py) runs, so whoever made a row, it is the same.
Nothing here copies DataJoint's code; it only uses its public API.
"""

import os
import sys
import urllib.parse
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import datajoint as dj  # noqa: E402
from datajoint.blob import pack, unpack  # noqa: E402,F401


def connect(url):
    u = urllib.parse.urlparse(url)
    backend = "postgresql" if u.scheme.startswith("postgres") else "mysql"
    dj.config["database.backend"] = backend
    dj.config["database.host"] = u.hostname
    dj.config["database.port"] = u.port
    dj.config["database.user"] = u.username
    dj.config["database.password"] = u.password or "unused"
    if backend == "postgresql":
        dj.config["database.name"] = u.path.lstrip("/")
    dj.config["safemode"] = False
    if backend == "postgresql" and "sslmode=require" not in url:
        dj.config["database.use_tls"] = False
    dj.config["jobs.add_job_metadata"] = True
    dj.logger.setLevel("WARNING")
    return backend


def samples_of(subject_id, session_idx):
    """A session's samples: deterministic, 50 values."""
    rng = np.random.default_rng(subject_id * 100 + session_idx)
    return rng.normal(subject_id, 1.0, 50)


def stats_rows(samples, scale):
    """What Stats' make computes from a session's samples and a scale:
    the master's (mean, scaled) and the peaks [(peak_idx, value)]."""
    samples = np.asarray(samples, dtype=float)
    mean = float(samples.mean() * scale)
    peaks = [(int(i), float(v * scale)) for i, v in enumerate(samples) if v > samples.mean() + 1.0]
    return mean, samples * scale, peaks


def tables(prefix):
    subject = dj.Schema(prefix + "_subject")
    main = dj.Schema(prefix + "_main")

    @subject
    class Subject(dj.Manual):
        definition = """
        subject_id : int32
        ---
        name : varchar(32)
        """

    @main
    class Session(dj.Manual):
        definition = """
        -> Subject
        session_idx : int16
        ---
        samples : <blob>
        """

    @main
    class ParamSet(dj.Lookup):
        definition = """
        paramset_idx : int16
        ---
        scale : float64
        """
        contents = [(1, 1.0), (2, 2.5)]

    @main
    class Settings(dj.Manual):
        definition = """
        # a singleton table (no key: DataJoint adds the hidden _singleton); djc adopt leaves it out
        ---
        threshold : float64
        """

    @main
    class Stats(dj.Computed):
        definition = """
        -> Session
        -> ParamSet.proj(paramset='paramset_idx')
        ---
        mean : float64
        scaled : <blob>
        """

        class Peak(dj.Part):
            definition = """
            -> master
            peak_idx : int32
            ---
            value : float64
            """

        def make(self, key):
            samples = (Session & key).fetch1("samples")
            scale = (ParamSet & {"paramset_idx": key["paramset"]}).fetch1("scale")
            mean, scaled, peaks = stats_rows(samples, scale)
            self.insert1(dict(key, mean=mean, scaled=scaled))
            self.Peak.insert([dict(key, peak_idx=i, value=v) for i, v in peaks])

    return subject, main, Subject, Session, ParamSet, Stats


def drop_schemas(*names):
    """Drop these schemas (children first), those that are there."""
    for name in names:
        try:
            dj.Schema(name, create_schema=False).drop(prompt=False)
        except Exception:
            pass


def drop(prefix):
    drop_schemas(prefix + "_main", prefix + "_subject")


def declare(prefix, nsessions):
    drop(prefix)
    _, _, Subject, Session, _, Stats = tables(prefix)
    Subject.insert([(1, "ann"), (2, "bob")])
    Session.insert(
        [{"subject_id": s, "session_idx": i, "samples": samples_of(s, i)} for s in (1, 2) for i in range(nsessions // 2 + nsessions % 2 * (s == 1))]
    )
    remaining, total = Stats.progress(display=False)
    print(f"declared {prefix}_subject, {prefix}_main: {len(Session())} sessions, Stats progress {remaining}/{total} to do")


def populate(prefix, max_calls, processes):
    *_, Stats = tables(prefix)
    r = Stats.populate(reserve_jobs=True, max_calls=max_calls or None, processes=processes, display_progress=False)
    print(f"DataJoint populate: {r['success_count']} made, {len(r['error_list'])} errors")
    return 0 if not r["error_list"] else 1


def fail(msg):
    print("check-datajoint: " + msg, file=sys.stderr)
    return 1


def check(prefix, made_by_dj=None):
    """DataJoint reads what was made: every key has its row, the blobs
    unpack to the arrays the make computes, the parts are there, progress
    is complete, populate(reserve_jobs=True) finds nothing to do, the job
    metadata is filled. Returns 0, or 1 naming the first mismatch."""
    _, _, _, Session, ParamSet, Stats = tables(prefix)
    keys = (Session.proj() * ParamSet.proj(paramset="paramset_idx")).fetch(as_dict=True)
    rows = Stats.fetch(as_dict=True)
    if len(rows) != len(keys):
        return fail(f"Stats has {len(rows)} rows, key source {len(keys)}")
    for key in keys:
        row = (Stats & key).fetch1()
        samples = (Session & key).fetch1("samples")
        scale = (ParamSet & {"paramset_idx": key["paramset"]}).fetch1("scale")
        mean, scaled, peaks = stats_rows(samples, scale)
        if not np.isclose(row["mean"], mean):
            return fail(f"Stats {key}: mean {row['mean']}, expected {mean}")
        if not isinstance(row["scaled"], np.ndarray) or row["scaled"].shape != scaled.shape or not np.allclose(row["scaled"], scaled):
            return fail(f"Stats {key}: scaled does not unpack to the expected array: {row['scaled']!r}")
        got = sorted(zip(*(Stats.Peak & key).fetch("peak_idx", "value")))
        if [(int(i), round(float(v), 9)) for i, v in got] != [(i, round(v, 9)) for i, v in peaks]:
            return fail(f"Stats.Peak {key}: {got}, expected {peaks}")
    remaining, total = Stats.progress(display=False)
    if (remaining, total) != (0, len(keys)):
        return fail(f"progress() is {(remaining, total)}, expected (0, {len(keys)})")
    r = Stats.populate(reserve_jobs=True, display_progress=False)
    if r["success_count"] != 0 or r["error_list"]:
        return fail(f"populate(reserve_jobs=True) still found work: {r}")
    meta = Stats.connection.query(
        f"SELECT COUNT(*) FROM {Stats.full_table_name} WHERE _job_start_time IS NOT NULL AND _job_duration IS NOT NULL"
    ).fetchone()[0]
    if meta != len(keys):
        return fail(f"{meta} of {len(keys)} Stats rows have job metadata")
    print(f"check-datajoint: DataJoint reads {len(rows)} Stats rows ({sum(len(Stats.Peak & k) for k in keys)} peaks), "
          f"blobs as arrays, progress (0, {total}), nothing left to populate")
    return 0


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, url, prefix = argv[0], argv[1], argv[2]
    connect(url)
    if cmd == "declare":
        declare(prefix, int(argv[3]) if len(argv) > 3 else 6)
        return 0
    if cmd == "populate":
        return populate(prefix, int(argv[3]) if len(argv) > 3 else 0, int(argv[4]) if len(argv) > 4 else 1)
    if cmd == "check":
        return check(prefix)
    if cmd == "drop":
        drop(prefix)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
