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
own codec (djc_make.py does it, as DataJoint's insert would). A make that
raises fails the key with its traceback in djc's jobs table, as DataJoint
records it.

The key reaches the make as DataJoint would pass it: a dict of the
primary key, dates and datetimes as ``datetime`` objects, decimals as
``Decimal``, uuids as ``UUID``. The tripartite make of DataJoint 2.x
(``make_fetch``/``make_compute``/``make_insert``) runs as DataJoint runs
it: fetch, compute, fetch again, and the key fails ("the make_fetch data
changed") when the two fetches differ.

Refused, each failing the key with a message naming it (docs/adopt-interop.md):
an insert into any other table; ``replace=True``; inserting from a query
expression of another schema's server connection is allowed (its rows
are fetched first). Not covered by djc's commit-time upstream check: the
reads go through DataJoint, not through djc's ``fetch``.
"""

import datetime
import decimal
import importlib
import importlib.util
import inspect
import os
import pickle
import sys
import uuid

import djc_make

__all__ = ["main", "serve_classes", "NotSupported"]


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
        r = {k: v for k, v in r.items() if k in heading}
        ident = (part, tuple(repr(r.get(k)) for k in pk))
        if skip_duplicates and ident in cap.keys:
            continue
        cap.keys.add(ident)
        if part:
            r["_part"] = part
        cap.rows.append(r)


def _install():
    global _original_insert
    from datajoint.table import Table
    if _original_insert is None:
        _original_insert = Table.insert
        Table.insert = _insert


# ------------------------------------------------------------ keys


def _typed(attr, v):
    """A key value from djc's JSON as DataJoint's fetch gives it."""
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
    return v


def _key_of(target, key):
    attrs = target.heading.attributes
    return {k: _typed(attrs[k], v) if k in attrs else v for k, v in key.items()}


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


def _runner(cls):
    """The djc make (key, fetch) -> rows that runs cls's make."""
    def make(key, fetch):
        global _current
        target = cls()
        key = _key_of(target, key)
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
