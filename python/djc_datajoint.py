"""djc_datajoint - run a DataJoint table class's own make() under djc.

A lab that adopted its DataJoint schema (``djc adopt``, docs/adopt.md)
keeps its Python classes as they are. The overlay names the class
instead of a djc make::

    Stats
        make_serve = python3 -m djc_datajoint mypipeline.analysis:Stats

(``MODULE:CLASS``: MODULE a dotted module name importable from the
worker's directory, or a path to a ``.py`` file; several ``MODULE:CLASS``
for a program that serves several tables.) The module is imported as
DataJoint would be: it connects with its own ``dj.config`` (datajoint.json,
DJ_HOST/DJ_USER/DJ_PASS, or whatever the module sets), and what the make
reads (``(Session & key).fetch1("samples")``) DataJoint reads itself.

What the make writes is not written by DataJoint: ``insert1``/``insert``
into the table being made and into its part tables are captured and
returned to djc as the key's result rows (parts with ``"_part"``), so djc
commits them in one transaction, fenced by its reservation, with the
job's metadata; values of ``<blob>`` attributes are packed by DataJoint's
own codec (djc_make.py does it, as DataJoint's insert would; bytes are
packed here, as DataJoint packs them). Values are converted as DataJoint's
insert and then the server convert them, by the table's DataJoint heading
(NaN in a float as NULL or the default, "7" in an int, 1.005 in a
decimal(6,2) as 1.01, a datetime's extra digits of a second truncated on
MariaDB, rounded on PostgreSQL: docs/adopt-interop.md); what they refuse
fails the key naming the attribute. A make that raises (SystemExit and
KeyboardInterrupt too) fails the key with its traceback in djc's jobs
table, as DataJoint records it.

Or in the lab's own script, in-process, as DataJoint's populate is
called (libdjc through djc_lib.py, no program between)::

    import djc_datajoint
    from mypipeline.analysis import Stats
    djc_datajoint.populate(Stats, reserve_jobs=True, processes=4,
                           url="postgresql://...", schema="analysis_djc")

The key reaches the make as DataJoint would pass it: a dict of the
primary key, dates and datetimes as ``datetime`` objects, decimals as
``Decimal``, uuids as ``UUID``. The tripartite make of DataJoint 2.x
(``make_fetch``/``make_compute``/``make_insert``) runs as DataJoint runs
it: fetch, compute, fetch again, and the key fails ("the make_fetch data
changed") when the two fetches differ.

Refused, each failing the key with a message naming it (docs/adopt-interop.md):
an insert into any other table; ``replace=True``; a key that the class's
own ``key_source`` (overridden in Python, which djc does not read) leaves
out, before make runs (give the restriction in the overlay's
``key_source =``); inserting from a query
expression of another schema's server connection is allowed (its rows
are fetched first). Not covered by djc's commit-time upstream check: the
reads go through DataJoint, not through djc's ``fetch``.
"""

import datetime
import decimal
import importlib
import importlib.util
import inspect
import math
import os
import pickle
import sys
import uuid

import djc_make

__all__ = ["main", "serve_classes", "populate", "worker", "NotSupported"]


class NotSupported(Exception):
    """A make did something djc cannot commit for it."""


def _camel(snake):
    """DataJoint's class name of a table name (``peak_trace`` -> ``PeakTrace``),
    the name djc's adopt gives the table."""
    return "".join(w[:1].upper() + w[1:] for w in snake.split("_") if w)


def _bare(full_name):
    """`schema`.`table` or "schema"."table" -> (schema, table)."""
    parts = [p.strip('`"') for p in full_name.split(".")]
    return parts[0], parts[-1]


# ------------------------------------------------------------ capture


class _Capture:
    """The rows one make inserted, by target: "" for the table being made,
    a part's class name for its part."""

    def __init__(self, target):
        self.schema, self.table = _bare(target.full_table_name)
        self.name = "%s (%s)" % (type(target).__name__, target.full_table_name)
        self.rows = []
        self.keys = set()   # (part, primary key) of the rows kept: skip_duplicates across inserts

    def route(self, full_name):
        schema, table = _bare(full_name)
        if schema == self.schema and table == self.table:
            return None
        master = self.table + "__"
        if schema == self.schema and table.startswith(master):
            return _camel(table[len(master):])
        raise NotSupported(
            "make inserts into %s, which is neither %s nor one of its parts: "
            "djc commits only the table being made and its parts" % (full_name, self.name))


_current = None          # the capture of the make in progress, or None
_original_insert = None  # DataJoint's Table.insert


def _as_dicts(tbl, rows):
    """DataJoint's row forms as dicts: mappings, numpy records, sequences
    in heading order, a query expression (its rows fetched), a DataFrame."""
    from datajoint.expression import QueryExpression
    if inspect.isclass(rows) and issubclass(rows, QueryExpression):
        rows = rows()
    if isinstance(rows, QueryExpression):
        return rows.fetch(as_dict=True)
    if type(rows).__name__ == "DataFrame" and hasattr(rows, "to_dict"):
        return rows.reset_index(drop=len(rows.index.names) == 1 and not rows.index.names[0]).to_dict("records")
    names = tbl.heading.names
    out = []
    for r in rows:
        if hasattr(r, "keys"):
            out.append({k: r[k] for k in r.keys()})
        elif getattr(getattr(r, "dtype", None), "names", None):
            out.append({k: r[k] for k in r.dtype.names})
        else:
            r = list(r)
            if len(r) != len(names):
                raise NotSupported("a row of %d values for %s, whose heading has %d attributes"
                                   % (len(r), tbl.full_table_name, len(names)))
            out.append(dict(zip(names, r)))
    return out


def _insert(self, rows, replace=False, skip_duplicates=False, ignore_extra_fields=False,
            allow_direct_insert=None, chunk_size=None):
    """Table.insert while a make runs under djc: the rows are kept for the
    key's answer. Outside a make: DataJoint's own insert."""
    cap = _current
    if cap is None:
        return _original_insert(self, rows, replace=replace, skip_duplicates=skip_duplicates,
                                ignore_extra_fields=ignore_extra_fields,
                                allow_direct_insert=allow_direct_insert, chunk_size=chunk_size)
    part = cap.route(self.full_table_name)
    if replace:
        raise NotSupported("insert(replace=True) into %s: djc commits new rows only" % self.full_table_name)
    heading = set(self.heading.names)
    pk = self.primary_key
    for r in _as_dicts(self, rows):
        extra = [k for k in r if k not in heading]
        if extra and not ignore_extra_fields:
            raise NotSupported("attribute %s not found in %s (ignore_extra_fields=True to drop it)"
                               % (extra[0], self.full_table_name))
        r = _coerce_row(self, {k: v for k, v in r.items() if k in heading})
        ident = (part, tuple(repr(r.get(k)) for k in pk))
        if skip_duplicates and ident in cap.keys:
            continue
        cap.keys.add(ident)
        if part:
            r["_part"] = part
        cap.rows.append(r)


# ------------------------------------------------------------ values


_DEFAULT = object()   # DataJoint's "DEFAULT" placeholder: the column's default


class _Refused(ValueError):
    pass


def _server(tbl):
    """(backend, datetime rounding) of tbl's connection: "round" or
    "truncate" for the fraction of a second a datetime(n) cannot keep, as
    that server does it (MariaDB truncates unless its sql_mode has
    TIME_ROUND_FRACTIONAL; MySQL rounds unless TIME_TRUNCATE_FRACTIONAL;
    PostgreSQL rounds)."""
    conn = tbl.connection
    got = _servers.get(id(conn))
    if got is None:
        backend = tbl.adapter.backend
        how = "round"
        if backend == "mysql":
            version, mode = conn.query("SELECT VERSION(), @@SESSION.sql_mode").fetchone()
            mode = (mode or "").upper()
            if "mariadb" in (version or "").lower():
                how = "round" if "TIME_ROUND_FRACTIONAL" in mode else "truncate"
            else:
                how = "truncate" if "TIME_TRUNCATE_FRACTIONAL" in mode else "round"
        got = _servers[id(conn)] = (backend, how)
    return got


_servers = {}
_INT_TEXT = None   # re of the integer text PostgreSQL's int types take
_Y2K = datetime.datetime(2000, 1, 1)


def _kind(attr):
    """int, decimal, float, bool, datetime, date, string or None (any
    other): by the DataJoint type of attr, else by its SQL type."""
    t = (getattr(attr, "original_type", None) or attr.type or "").lower()
    if t.startswith("bool"):
        return "bool"
    if t.startswith(("int", "uint", "tinyint", "smallint", "mediumint", "bigint", "serial")):
        return "int"
    if t.startswith(("decimal", "numeric")):
        return "decimal"
    if t.startswith(("float", "double", "real")):
        return "float"
    if t.startswith(("datetime", "timestamp")):
        return "datetime"
    if t.startswith("date"):
        return "date"
    if t.startswith(("varchar", "char", "text", "tinytext", "mediumtext", "longtext", "character")):
        return "string"
    return None


def _precision(attr, backend):
    """The digits of a second's fraction a datetime attribute keeps."""
    import re
    for t in (getattr(attr, "original_type", None), attr.type):
        m = re.search(r"\(\s*(\d+)\s*\)", t or "")
        if m:
            return int(m.group(1))
    return 6 if backend == "postgresql" else 0   # PostgreSQL's timestamp keeps microseconds


def _fraction(v, digits, how):
    """The datetime v with digits of its fraction of a second, the rest
    rounded (half away from 2000-01-01, as PostgreSQL and MySQL round) or
    truncated."""
    step = 10 ** (6 - digits)
    if step == 1 or v.microsecond % step == 0:
        return v
    if how == "truncate":
        return v.replace(microsecond=v.microsecond - v.microsecond % step)
    us = (v - _Y2K) // datetime.timedelta(microseconds=1)
    q, r = divmod(abs(us), step)
    q += 2 * r >= step
    return _Y2K + datetime.timedelta(microseconds=q * step if us >= 0 else -q * step)


def _coerce(tbl, attr, v):
    """A value of attr as DataJoint's insert would send it (its
    Table.__make_placeholder: codecs, NULL for None and for NaN or "" in a
    numeric attribute, the text of a number), converted as the server
    converts what DataJoint sends, into a value djc takes: _DEFAULT for
    the column's default; _Refused where DataJoint or the server refuses."""
    if attr.codec:
        if v is None:
            return _DEFAULT
        if attr.codec.name == "blob" and isinstance(v, (bytes, bytearray, memoryview)):
            # DataJoint packs every <blob> value (bytes too); djc_make takes bytes
            # that start as a packed value does as packed
            attr.codec.validate(v)
            return attr.codec.encode(v, key=None)
        return v
    if v is None:
        return _DEFAULT
    backend, how = _server(tbl)
    kind = _kind(attr)
    if attr.numeric:
        if isinstance(v, str) and v == "":
            return _DEFAULT
        try:
            if math.isnan(float(v)):
                return _DEFAULT
        except (TypeError, ValueError) as e:
            raise _Refused("%s (DataJoint's insert refuses it)" % e)
        v = str(int(v) if isinstance(v, bool) or type(v).__name__ == "bool_" else v)
        if kind == "float":
            f = float(v)
            if not math.isfinite(f) and backend != "postgresql":   # PostgreSQL's real takes 'inf'
                raise _Refused("%s is not a finite number (the server refuses it)" % v)
            return f
        try:
            d = decimal.Decimal(v.strip())
        except decimal.InvalidOperation:
            raise _Refused("%r is not a number" % v)
        if not d.is_finite():
            raise _Refused("%s is not a finite number (the server refuses it)" % v)
        if kind == "decimal":
            import re
            m = re.search(r"\(\s*\d+\s*,\s*(\d+)\s*\)", attr.type or "")
            scale = int(m.group(1)) if m else 0
            return str(d.quantize(decimal.Decimal(1).scaleb(-scale), rounding=decimal.ROUND_HALF_UP))
        if kind in ("int", "bool"):
            if backend == "postgresql":
                global _INT_TEXT
                if _INT_TEXT is None:
                    import re
                    _INT_TEXT = re.compile(r"\s*[+-]?\d+\s*\Z")
                if not _INT_TEXT.match(v):
                    raise _Refused("%r is not an integer (PostgreSQL refuses it, as DataJoint's insert sends it)" % v)
            n = int(d.to_integral_value(rounding=decimal.ROUND_HALF_UP))   # as MySQL rounds
            if kind == "bool" and n in (0, 1):
                return bool(n)
            return n
        return v
    if getattr(attr, "uuid", False) or getattr(attr, "json", False):
        if getattr(attr, "uuid", False) and not isinstance(v, uuid.UUID):
            try:
                v = uuid.UUID(v)
            except (AttributeError, TypeError, ValueError):
                raise _Refused("badly formed UUID value %s" % (v,))
        return v
    # DataJoint sends the value itself: its driver writes it, the server converts it
    if kind == "float":   # PostgreSQL's double precision, real
        if isinstance(v, bool) or type(v).__name__ == "bool_":
            return v
        try:
            f = float(v.strip() if isinstance(v, str) else v)
        except ValueError:
            return v
        return f   # NaN and infinities too: PostgreSQL's double precision keeps them, so does djc (as float8)
    if kind == "bool" and isinstance(v, str):   # PostgreSQL's boolean takes text
        t = v.strip().lower()
        if t in ("t", "true", "y", "yes", "on", "1"):
            return True
        if t in ("f", "false", "n", "no", "off", "0"):
            return False
        return v
    if type(v).__name__ == "datetime64":
        v = v.astype("datetime64[us]").item()
    if kind in ("date", "datetime") and isinstance(v, str):
        try:
            v = datetime.datetime.fromisoformat(v.strip())
        except ValueError:
            return v   # the server's to refuse, as DataJoint's insert leaves it
    if kind == "date":
        return v.date() if isinstance(v, datetime.datetime) else v
    if kind == "datetime":
        if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime):
            v = datetime.datetime(v.year, v.month, v.day)
        if isinstance(v, datetime.datetime):
            if v.tzinfo is not None:
                return v
            v = _fraction(v, _precision(attr, backend), how)
            text = v.isoformat(" ", "microseconds" if v.microsecond else "seconds")
            return text.rstrip("0") if v.microsecond else text
        return v
    if kind == "string" and not isinstance(v, str):
        if isinstance(v, bool) or type(v).__name__ == "bool_":
            return ("1" if v else "0") if backend == "mysql" else ("true" if v else "false")
        if isinstance(v, (int, float, decimal.Decimal)) or type(v).__name__.startswith(("int", "uint", "float")):
            return str(v)
    return v


def _coerce_row(tbl, r):
    """Row r's values as DataJoint's insert into tbl would store them
    (_coerce); a value that is to take the column's default left out
    (djc fills it in), but for a key attribute (djc refuses the NULL, as
    the server does)."""
    attrs = tbl.heading.attributes
    out = {}
    for a, v in r.items():
        try:
            c = _coerce(tbl, attrs[a], v)
        except (ValueError, TypeError, ArithmeticError) as e:
            raise NotSupported("attribute '%s' (%s) of %s: %s" % (
                a, getattr(attrs[a], "original_type", None) or attrs[a].type, tbl.full_table_name,
                " ".join(str(e).split())))
        if c is _DEFAULT:
            default = attrs[a].default
            if attrs[a].in_key or default is None or str(default).lower() == "null":
                c = None
            else:
                continue
        out[a] = c
    return out


def _install():
    global _original_insert
    from datajoint.table import Table
    if _original_insert is None:
        _original_insert = Table.insert
        Table.insert = _insert


# ------------------------------------------------------------ keys


def _typed(attr, v, backend=None):
    """A key value from djc's JSON as DataJoint's fetch gives it (backend:
    "mysql" or "postgresql", of the table's connection)."""
    if isinstance(v, bool):
        # a bool on MySQL/MariaDB is a tinyint: DataJoint's key holds 0 or 1
        # (an int), and a make naming files by str(key[...]) or
        # dj.hash.key_hash(key) must get DataJoint's text; PostgreSQL's
        # boolean is a bool
        return int(v) if (attr.type or "").lower().startswith("tinyint") else v
    if v is None or not isinstance(v, str):
        return v
    t = (attr.type or "").lower()
    orig = (getattr(attr, "original_type", None) or "").lower()
    if getattr(attr, "uuid", False) or orig == "uuid" or t == "uuid":
        return uuid.UUID(v)
    if t.startswith("date") and not t.startswith("datetime"):
        return datetime.date.fromisoformat(v)
    if t.startswith(("datetime", "timestamp")):
        return datetime.datetime.fromisoformat(v.replace("T", " "))
    if t.startswith(("decimal", "numeric")):
        return decimal.Decimal(v)
    if backend == "postgresql" and t.startswith(("char(", "character(")):
        # PostgreSQL's char(n) gives its value padded with spaces to n, and so
        # does DataJoint's key there; djc reads char without them (docs/types.md)
        import re
        m = re.match(r"(?:char|character)\(\s*(\d+)\s*\)", t)
        return v.ljust(int(m.group(1))) if m else v
    return v


def _key_of(target, key):
    attrs = target.heading.attributes
    backend = getattr(getattr(target, "adapter", None), "backend", None)
    return {k: _typed(attrs[k], v, backend) if k in attrs else v for k, v in key.items()}


# ------------------------------------------------------------ make


def _tripartite(target, key):
    """DataJoint 2.x's make_fetch / make_compute / make_insert, run as its
    populate runs them: the fetch is repeated before the insert and must
    give the same data."""
    make = target.make
    gen = make(dict(key))
    fetched = next(gen)
    first = pickle.dumps(fetched, protocol=4)
    computed = next(gen)
    gen = make(dict(key))
    again = next(gen)
    if pickle.dumps(again, protocol=4) != first:
        raise NotSupported("the make_fetch data changed between the fetch and the insert of %r" % (key,))
    try:
        gen.send(computed)
    except StopIteration:
        pass


def _own_key_source(cls):
    """Whether the lab's class (or a base of its own) overrides DataJoint's
    key_source property."""
    for klass in cls.__mro__:
        if "key_source" in vars(klass):
            return not (klass.__module__ or "").split(".")[0] == "datajoint"
    return False


def _runner(cls):
    """The djc make (key, fetch) -> rows that runs cls's make."""
    own_ks = _own_key_source(cls)

    def make(key, fetch):
        global _current
        target = cls()
        key = _key_of(target, key)
        # djc makes the keys of its own key source (the parents', restricted
        # by the overlay's key_source =): a key the class's Python key_source
        # leaves out is one DataJoint's populate would never make, and a make
        # written for the others may well make a wrong row of it
        if own_ks and not len(target.key_source & key):
            raise NotSupported(
                "key %r is not in %s.key_source, which the class overrides in Python; djc does not read "
                "it: give the same restriction in the overlay (key_source = ...; docs/adopt-interop.md)"
                % (dict(key), cls.__name__))
        cap = _Capture(target)
        _current = cap
        target._upstream_key = dict(key)   # DataJoint's self.upstream, as in its populate
        target._upstream = None
        try:
            m = target._make_tuples if hasattr(target, "_make_tuples") else target.make
            if inspect.isgeneratorfunction(m):
                _tripartite(target, key)
            else:
                m(dict(key))
        finally:
            _current = None
            target._upstream_key = None
            target._upstream = None
        return cap.rows
    return make


def _load(spec):
    """MODULE:CLASS -> the class (MODULE a dotted name or a .py path)."""
    mod, sep, name = spec.rpartition(":")
    if not sep or not mod or not name:
        raise SystemExit("djc_datajoint: %r is not MODULE:CLASS" % spec)
    if mod.endswith(".py") or os.sep in mod:
        path = os.path.abspath(mod)
        s = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
        if s is None:
            raise SystemExit("djc_datajoint: cannot import %s" % mod)
        module = importlib.util.module_from_spec(s)
        sys.modules[s.name] = module
        s.loader.exec_module(module)
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        module = importlib.import_module(mod)
    cls = module
    for part in name.split("."):
        cls = getattr(cls, part, None)
        if cls is None:
            raise SystemExit("djc_datajoint: %s has no class %s" % (mod, name))
    if not hasattr(cls, "make") and not hasattr(cls, "_make_tuples"):
        raise SystemExit("djc_datajoint: %s.%s has no make()" % (mod, name))
    return cls


def serve_classes(classes):
    """djc_make.run over DataJoint classes: one class serves whichever table
    djc sends; several are chosen by djc's table name (the class name)."""
    _install()
    if len(classes) == 1:
        return djc_make.run(_runner(classes[0]))
    return djc_make.run({c.__name__: _runner(c) for c in classes})


def _in_process(cls, run, options):
    """run(table, make, **options) (djc_lib.populate or worker) with cls's
    make in this process. With processes > 1 the worker processes are
    forks of this one: DataJoint's connection is closed first and each
    process opens its own at its first key (a connection shared by forks
    is one session spoken to by several processes), and this one's is
    opened again after, as DataJoint's own populate does."""
    _install()
    make = _runner(cls)
    conn = cls().connection
    if options.get("processes", 1) <= 1:
        return run(cls.__name__, make, **options)
    parent = os.getpid()
    opened = []

    def own(key, fetch):
        if not opened and os.getpid() != parent:
            conn.connect()
            opened.append(True)
        return make(key, fetch)

    conn.close()
    try:
        return run(cls.__name__, own, **options)
    finally:
        conn.connect()


def populate(cls, restriction=None, **options):
    """DataJoint's ``cls.populate(...)`` with djc's job reservation: cls's
    own make() (as ``make_serve = python3 -m djc_datajoint``, above)
    called in this process by libdjc (djc_lib.populate, docs/python-lib.md),
    on cls's table as djc adopted it (its class name): options and return
    value as djc_lib.populate's (reserve_jobs, processes, max_calls,
    suppress_errors, display_progress, priority, refresh, timeout, url,
    schema: djc's database, the adopted schema's companion)."""
    import djc_lib

    return _in_process(cls, lambda t, m, **o: djc_lib.populate(t, m, restriction, **o), options)


def worker(cls, restriction=None, **options):
    """`djc worker` for cls's table with cls's own make() in this process
    (djc_lib.worker's options and return value)."""
    import djc_lib

    return _in_process(cls, lambda t, m, **o: djc_lib.worker(t, m, restriction, **o), options)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    # the user's module prints at import (DataJoint's connection banner):
    # stdout is djc's pipe, so it goes to stderr until djc_make takes over
    out, sys.stdout = sys.stdout, sys.stderr
    try:
        classes = [_load(s) for s in argv]
    finally:
        sys.stdout = out
    return serve_classes(classes)


if __name__ == "__main__":
    sys.exit(main())
