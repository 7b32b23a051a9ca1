"""queries.py - DataJoint's queries against djc's on one database, for
`make check-datajoint-queries` (scripts/check-datajoint-queries.sh) and
bench/query-dj.sh. Needs the real DataJoint (2.x) and numpy.

    queries.py declare URL PREFIX NSESSIONS TRIALS  drop and declare PREFIX_lab, PREFIX_q; fill them
    queries.py compare URL PREFIX DJC COMPANION     every query both ways; exit 1 on a mismatch
    queries.py bench   URL PREFIX ROUNDS            DataJoint's time for the bench query: "median_ms rows"
    queries.py bench-expr URL PREFIX                the same query as djc's expression
    queries.py drop    URL PREFIX

The pipeline (deterministic rows; NSESSIONS sessions spread over 40
subjects, each with TRIALS/2..TRIALS*3/2 trials):

    PREFIX_lab.Subject (manual)  subject_id : int32 | species : varchar(16), sex : enum('F','M','U'), dob : date
    PREFIX_q.Session (manual)    -> Subject, session_idx : int16 | session_date : date, duration : decimal(7,2),
                                 rig : varchar(8), notes = null : varchar(64)
    PREFIX_q.Trial (manual)      -> Session, trial_idx : int32 | outcome : varchar(8), rt : float64
    PREFIX_q.Excluded (manual)   -> Subject | reason : varchar(32)

`compare` runs each query as DataJoint's Python expression
(``fetch(as_dict=True, order_by=...)``) and as djc's expression (``djc
fetch EXPR --format json --order-by ...``) and compares the rows exactly,
in order, after these normalisations of representation only:

- dates and datetimes: ISO text on both sides (DataJoint gives
  ``datetime.date``, djc's JSON gives text);
- decimals: compared as numbers (DataJoint gives ``Decimal("12.50")``, djc
  the text ``"12.5"`` or ``"12.50"``: same value);
- numbers (int, float, numpy scalars, Decimal, numeric text on the other
  side): equal when equal as Python numbers, or for non-integers within
  1e-9 relative (an ``avg`` of a float column is summed in a different order
  by nobody here, but MariaDB's ``avg`` of an integer is a decimal with 4
  places: that is the server's rounding, the same on both sides);
- attribute names and the set of attributes must match exactly; rows must
  come in the same order (each query fixes one).

Queries whose results DataJoint and djc define differently on purpose
(docs/queries.md, "Where djc differs") are not in the list: ``A - B`` with
NULLs, ``aggr`` over a restricted table with unmatched rows, count(*) of
no rows.
"""

import datetime
import decimal
import json
import os
import subprocess
import sys
import time
import types
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import datajoint as dj  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pipeline import connect, drop_schemas  # noqa: E402  (the same connection settings as make check-datajoint's)

SPECIES = ["mouse", "rat", "marmoset", "macaque"]
RIGS = ["A", "B", "C"]
OUTCOMES = ["hit", "miss", "early"]


def tables(prefix):
    lab = dj.Schema(prefix + "_lab")
    q = dj.Schema(prefix + "_q")

    @lab
    class Subject(dj.Manual):
        definition = """
        subject_id : int32
        ---
        species : varchar(16)
        sex : enum('F', 'M', 'U')
        dob : date
        """

    @q
    class Session(dj.Manual):
        definition = """
        -> Subject
        session_idx : int16
        ---
        session_date : date
        duration : decimal(7,2)
        rig : varchar(8)
        notes = null : varchar(64)
        """

    @q
    class Trial(dj.Manual):
        definition = """
        -> Session
        trial_idx : int32
        ---
        outcome : varchar(8)
        rt : float64
        """

    @q
    class Excluded(dj.Manual):
        definition = """
        -> Subject
        ---
        reason : varchar(32)
        """

    return Subject, Session, Trial, Excluded


def drop(prefix):
    drop_schemas(prefix + "_q", prefix + "_lab")


def declare(prefix, nsessions, trials):
    drop(prefix)
    Subject, Session, Trial, Excluded = tables(prefix)
    rng = np.random.default_rng(7)
    nsubj = 40
    Subject.insert(
        [(s, SPECIES[s % 4], "FMU"[s % 3], datetime.date(2020, 1, 1) + datetime.timedelta(days=s * 11)) for s in range(1, nsubj + 1)]
    )
    sessions, trial_rows = [], []
    for g in range(nsessions):
        s, idx = g % nsubj + 1, g // nsubj
        # durations unique (so orders and tops have no ties): 5.00 + g*0.37 + a per-session jitter < 0.37
        dur = decimal.Decimal("5.00") + decimal.Decimal(g) * decimal.Decimal("0.37") + decimal.Decimal(int(rng.integers(0, 37))) / 100
        sessions.append(
            dict(subject_id=s, session_idx=idx, session_date=datetime.date(2024, 1, 1) + datetime.timedelta(days=g % 300),
                 duration=dur, rig=RIGS[(g * 7) % 3], notes=None if g % 5 == 0 else "note %d" % (g % 17))
        )
        for t in range(int(rng.integers(trials // 2, trials * 3 // 2 + 1))):
            trial_rows.append(dict(subject_id=s, session_idx=idx, trial_idx=t, outcome=OUTCOMES[int(rng.integers(0, 3))],
                                   rt=float(rng.random()) + g * 1e-7 + t * 1e-11))
    Session.insert(sessions)
    for i in range(0, len(trial_rows), 20000):
        Trial.insert(trial_rows[i:i + 20000])
    Excluded.insert([(s, "health") for s in range(1, nsubj + 1, 6)])
    # statistics for the planner, as a database that has lived with its data
    # has them (without, the first queries after the load get poor plans)
    for t in (Subject, Session, Trial, Excluded):
        if dj.config["database.backend"] == "postgresql":
            dj.conn().query("ANALYZE " + t.full_table_name)
        else:
            dj.conn().query("ANALYZE TABLE " + t.full_table_name).fetchall()
    print("declared %s_lab, %s_q: %d subjects, %d sessions, %d trials, %d excluded"
          % (prefix, prefix, nsubj, len(sessions), len(trial_rows), len(Excluded())))


def query_list(Subject, Session, Trial, Excluded):
    """(name, DataJoint expression, its fetch spec, djc expression, djc spec
    [, {backend: why DataJoint itself cannot run it there}])."""
    U = dj.U
    K = "subject_id, session_idx"
    KT = "subject_id, session_idx, trial_idx"
    return [
        ("table", Subject, "subject_id", "Subject", "subject_id"),
        ("json", Subject & {"species": "rat"}, "subject_id", 'Subject & {"species": "rat"}', "subject_id"),
        ("json_list", Subject & [{"species": "rat"}, {"sex": "U"}], "subject_id", 'Subject & [{"species": "rat"}, {"sex": "U"}]', "subject_id"),
        ("and", Subject & "species='rat' and sex='F'", "subject_id", "Subject & 'species = \"rat\" and sex = \"F\"'", "subject_id"),
        ("decimal_gt", Session & "duration > 30.5", K, "Session & 'duration > 30.5'", K),
        ("between", Session & "duration between 20 and 40", K, "Session & 'duration between 20 and 40'", K),
        ("in", Subject & "species in ('rat', 'macaque')", "subject_id", "Subject & 'species in (\"rat\", \"macaque\")'", "subject_id"),
        ("like", Subject & "species like 'ma%'", "subject_id", "Subject & 'species like \"ma%\"'", "subject_id"),
        ("is_null", Session & "notes is null", K, "Session & 'notes is null'", K),
        ("not_or", Session & "not (rig = 'A') or duration < 10", K, "Session & 'not (rig = \"A\") or duration < 10'", K),
        ("date", Session & "session_date >= '2024-06-01'", K, "Session & 'session_date >= \"2024-06-01\"'", K),
        ("join_parent", Session * Subject & "species='rat'", K, "Session * Subject & 'species = \"rat\"'", K),
        ("semijoin", Session & (Subject & "sex='M'"), K, "Session & (Subject & 'sex = \"M\"')", K),
        ("antijoin", Subject - Excluded, "subject_id", "Subject - Excluded", "subject_id"),
        ("anti_child", Session - Excluded, K, "Session - Excluded", K),
        ("chain", Trial & (Session & "rig='B'") & "rt > 0.5", KT, "Trial & (Session & 'rig = \"B\"') & 'rt > 0.5'", KT),
        ("anti_cond", Subject - "species='mouse'", "subject_id", "Subject - 'species = \"mouse\"'", "subject_id"),
        ("proj", Subject.proj("species"), "subject_id", "Subject.proj(species)", "subject_id"),
        ("proj_rename", Subject.proj(kind="species"), "subject_id", "Subject.proj(kind=species)", "subject_id"),
        ("proj_all_rename", Session.proj(..., when="session_date"), K, "Session.proj(..., when=session_date)", K),
        ("proj_key", (Session & "duration < 12").proj(), K, "(Session & 'duration < 12').proj()", K),
        ("aggr_count", Subject.aggr(Session, n="count(*)"), "subject_id", "Subject.aggr(Session, n=count())", "subject_id"),
        ("aggr_stats", Session.aggr(Trial, n="count(*)", mean_rt="avg(rt)", max_rt="max(rt)", min_rt="min(rt)", total="sum(rt)"),
         K, "Session.aggr(Trial, n=count(), mean_rt=avg(rt), max_rt=max(rt), min_rt=min(rt), total=sum(rt))", K),
        ("aggr_join", Subject.aggr(Session * Trial, n="count(*)"), "subject_id", "Subject.aggr(Session * Trial, n=count())", "subject_id"),
        ("aggr_keep", Subject.aggr(Session, "species", d="max(duration)"), "subject_id", "Subject.aggr(Session, species, d=max(duration))", "subject_id",
         {"mysql": "MariaDB error 1055: DataJoint groups by the key only"}),
        ("aggr_having", Session.aggr(Trial, n="count(*)") & "n > 12", K, "Session.aggr(Trial, n=count()) & 'n > 12'", K),
        ("u_aggr", U("species").aggr(Subject, n="count(*)"), "species", "U(species).aggr(Subject, n=count())", "species"),
        ("u_aggr_dec", U("rig").aggr(Session, n="count(*)", d="sum(duration)"), "rig", "U(rig).aggr(Session, n=count(), d=sum(duration))", "rig"),
        ("u_restrict", U("species") & (Subject - Excluded), "species", "U(species) & (Subject - Excluded)", "species"),
        # DataJoint 2.3.2 cannot order a union (its ORDER BY lands inside the
        # derived table's alias: a syntax error on both servers): sorted here
        ("union", (Subject & "species='rat'").proj() + (Subject & "species='mouse'").proj(), "sort:subject_id",
         "(Subject & 'species = \"rat\"').proj() + (Subject & 'species = \"mouse\"').proj()", "subject_id"),
        ("order_limit", Trial, dict(order_by="rt desc", limit=5, offset=3), "Trial", ("rt desc", 5, 3)),
        ("order_two", Session, dict(order_by=("rig", "duration desc"), limit=10), "Session", ("rig, duration desc", 10, None)),
        ("top", Session & dj.Top(5, "duration desc"), K, "Session.top(5, duration desc)", K),
        ("top_in", Subject & (Session & dj.Top(3, "duration")), "subject_id", "Subject & Session.top(3, duration)", "subject_id",
         {"mysql": "MariaDB error 1235: DataJoint puts a LIMIT inside IN (...)"}),
        ("three_way", Trial * Session * Subject & "species='mouse' and outcome='hit'", KT,
         "Trial * Session * Subject & 'species = \"mouse\" and outcome = \"hit\"'", KT),
        ("join_proj", (Session * Subject).proj("species", "duration") & "duration < 20", K,
         "(Session * Subject).proj(species, duration) & 'duration < 20'", K),
        ("join_excluded", Subject * Excluded, "subject_id", "Subject * Excluded", "subject_id"),
        ("key_join", Excluded.proj() * Session.proj("rig"), K, "Excluded.proj() * Session.proj(rig)", K),
        ("fetch1", Subject & {"subject_id": 3}, "fetch1", 'Subject & {"subject_id": 3}', "fetch1"),
        # December 2026 (an outside tester's gaps): more of the condition
        # grammar, empty and no-common-attribute restrictions, lists of
        # condition text, nesting, precedence
        ("like_enum", Subject & "sex like 'F%'", "subject_id", "Subject & 'sex like \"F%\"'", "subject_id",
         {"postgresql": "DataJoint's enum is a PostgreSQL enum type, which LIKE does not take"}),
        ("not_like", Session & "notes not like 'note 1%'", K, "Session & 'notes not like \"note 1%\"'", K),
        ("in_num", Session & "session_idx in (0, 2)", K, "Session & 'session_idx in (0, 2)'", K),
        ("not_between", Trial & "rt not between 0.2 and 0.8", KT, "Trial & 'rt not between 0.2 and 0.8'", KT),
        ("dict_null", Session & {"notes": None}, K, 'Session & {"notes": null}', K),
        ("list_empty", Session & [], K, "Session & []", K),
        ("anti_list_empty", Subject - [], "subject_id", "Subject - []", "subject_id"),
        ("dict_empty", Subject & {}, "subject_id", "Subject & {}", "subject_id"),
        ("anti_list", Subject - [{"species": "rat"}, {"sex": "F"}], "subject_id", 'Subject - [{"species": "rat"}, {"sex": "F"}]', "subject_id"),
        ("list_strings", Session & ["rig='A'", "duration < 10"], K, "Session & ['rig = \"A\"', 'duration < 10']", K),
        ("semi_nocommon_empty", Subject & (Excluded & "reason='none'").proj(x="subject_id"), "subject_id",
         "Subject & (Excluded & 'reason = \"none\"').proj(x=subject_id)", "subject_id"),
        ("anti_nocommon", Subject - Excluded.proj(x="subject_id"), "subject_id", "Subject - Excluded.proj(x=subject_id)", "subject_id"),
        ("prec_anti_and", Session - Excluded & "rig='A'", K, "Session - Excluded & 'rig = \"A\"'", K),
        ("semi_by_aggr", Session & (Session.aggr(Trial, n="count(*)") & "n > 25"), K,
         "Session & (Session.aggr(Trial, n=count()) & 'n > 25')", K),
        ("aggr_nested", Subject.aggr(Session.aggr(Trial, n="count(*)"), tot="sum(n)", mx="max(n)"), "subject_id",
         "Subject.aggr(Session.aggr(Trial, n=count()), tot=sum(n), mx=max(n))", "subject_id"),
        ("u_two", U("species", "sex") & Subject, "species, sex", "U(species, sex) & Subject", "species, sex"),
        ("order_key_desc", Session.proj("rig"), dict(order_by="KEY DESC", limit=7), "Session.proj(rig)", ("KEY desc", 7, None)),
        ("proj_of_proj", Session.proj("rig", d="duration").proj(dd="d"), K, "Session.proj(rig, d=duration).proj(dd=d)", K,
         {"postgresql": "DataJoint writes the renamed attribute in MySQL's backticks: a syntax error"}),
        # (a function: DataJoint fails when it builds the expression)
        ("anti_union", lambda: Session - ((Session & "rig='A'").proj() + (Session & "rig='B'").proj()), K,
         "Session - ((Session & 'rig = \"A\"').proj() + (Session & 'rig = \"B\"').proj())", K,
         {"mysql": "DataJoint's Union.make_sql() takes no argument (TypeError)",
          "postgresql": "DataJoint's Union.make_sql() takes no argument (TypeError)"}),
    ]


BENCH_DJC = "(Subject & 'species = \"rat\"').aggr(Session * Trial & 'outcome = \"hit\"', n=count(), mean_rt=avg(rt))"


def bench_query(Subject, Session, Trial):
    """The benchmark: a join, a restriction by a parent's attribute, an
    aggregation (the same rows both ways: the restriction is on the
    aggregation's receiver, where DataJoint and djc agree)."""
    dj_expr = (Subject & "species='rat'").aggr(Session * Trial & "outcome='hit'", n="count(*)", mean_rt="avg(rt)")
    return dj_expr, BENCH_DJC


def norm(v):
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat().replace("T", " ")
    if isinstance(v, np.generic):
        return v.item()
    return v


def same(a, b):
    a, b = norm(a), norm(b)
    if a == b:
        return True
    try:
        if isinstance(a, bool) or isinstance(b, bool):
            return False
        fa, fb = decimal.Decimal(str(a)), decimal.Decimal(str(b))
    except (decimal.InvalidOperation, ValueError, TypeError):
        return False
    if fa == fb:
        return True
    return abs(fa - fb) <= abs(fa) * decimal.Decimal("1e-9") if isinstance(a, float) or isinstance(b, float) else False


def dj_rows(expr, spec):
    if isinstance(expr, types.FunctionType):
        expr = expr()
    if spec == "fetch1":
        return [expr.fetch1()]
    if isinstance(spec, str) and spec.startswith("sort:"):
        keys = [k.strip() for k in spec[5:].split(",")]
        return sorted(expr.fetch(as_dict=True), key=lambda r: [r[k] for k in keys])
    kw = spec if isinstance(spec, dict) else dict(order_by=spec)
    return expr.fetch(as_dict=True, **kw)


def djc_rows(djc, url, companion, expr, spec):
    cmd = [djc, "--db", url, "--schema", companion, "fetch", expr, "--format", "json"]
    if spec == "fetch1":
        cmd.append("--fetch1")
    elif isinstance(spec, tuple):
        order, limit, offset = spec
        cmd += ["--order-by", order]
        if limit is not None:
            cmd += ["--limit", str(limit)]
        if offset is not None:
            cmd += ["--offset", str(offset)]
    else:
        cmd += ["--order-by", spec]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("djc fetch %r: exit %d: %s" % (expr, p.returncode, p.stderr.strip()))
    text = p.stdout.strip()
    if not text:
        return []
    try:
        got = json.loads(text)
        return got if isinstance(got, list) else [got]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def diff(a, b):
    """None when the rows are the same, else what differs."""
    if len(a) != len(b):
        return "%d rows from DataJoint, %d from djc" % (len(a), len(b))
    for i, (ra, rb) in enumerate(zip(a, b)):
        if set(ra) != set(rb):
            return "row %d: attributes %s (DataJoint) vs %s (djc)" % (i, sorted(ra), sorted(rb))
        for k in ra:
            if not same(ra[k], rb[k]):
                return "row %d: %s = %r (DataJoint) vs %r (djc)\n      DataJoint row: %r\n      djc row:       %r" % (
                    i, k, ra[k], rb[k], ra, rb)
    return None


def compare(prefix, url, djc, companion, only=None):
    """Every query both ways. Where DataJoint itself cannot run a query on
    this backend (a known DataJoint failure, named in the list), DataJoint's
    error is shown and djc must still answer; if DataJoint answers after
    all, the rows are compared as for any query."""
    backend = "postgresql" if url.startswith("postgres") else "mysql"
    Subject, Session, Trial, Excluded = tables(prefix)
    bad = n = djfail = 0
    for name, dj_expr, spec, djc_expr, djc_spec, *known in query_list(Subject, Session, Trial, Excluded):
        if only and name not in only:
            continue
        n += 1
        why = known[0].get(backend) if known else None
        a, note = [], ""
        try:
            b = djc_rows(djc, url, companion, djc_expr, djc_spec)
            try:
                a = dj_rows(dj_expr, spec)
            except Exception as e:  # noqa: BLE001 - DataJoint's own failure, reported
                if not why:
                    raise
                djfail += 1
                a, note = b, "  (DataJoint fails here: %s: %s)" % (why, type(e).__name__)
            d = diff(a, b)
        except Exception as e:  # noqa: BLE001 - reported as the query's failure
            d = "%s: %s" % (type(e).__name__, e)
        if d:
            bad += 1
            print("  FAIL %-16s %s\n      djc: %s" % (name, d, djc_expr))
        else:
            print("  ok   %-16s %d rows  %s%s" % (name, len(a), djc_expr, note))
    print("queries: %d of %d queries give the same rows in DataJoint and djc (%s; %d that DataJoint cannot run here answered by djc)"
          % (n - bad - djfail, n - djfail, backend, djfail))
    return 1 if bad else 0


def bench(prefix, rounds):
    Subject, Session, Trial, _ = tables(prefix)
    expr, _ = bench_query(Subject, Session, Trial)
    rows = None
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        rows = expr.fetch(as_dict=True)
        times.append(time.perf_counter() - t0)
    times.sort()
    print("%.3f %d" % (times[len(times) // 2] * 1000, len(rows)))


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, url, prefix = argv[0], argv[1], argv[2]
    connect(url)
    if cmd == "declare":
        declare(prefix, int(argv[3]), int(argv[4]))
        return 0
    if cmd == "compare":
        return compare(prefix, url, argv[3], argv[4], set(argv[5:]) or None)
    if cmd == "bench":
        bench(prefix, int(argv[3]))
        return 0
    if cmd == "bench-expr":
        print(BENCH_DJC)
        return 0
    if cmd == "drop":
        drop(prefix)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
