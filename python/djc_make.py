"""djc_make - write a djc make in Python (standard library only).

A make is a function ``make(key, fetch) -> rows``::

    import djc_make

    def make(key, fetch):
        train = fetch("SpikeTrain", key)[0]        # the upstream row of this key
        return {"n_spikes": train["n_spikes"]}     # one row (or a list of rows)

    if __name__ == "__main__":
        djc_make.run(make)

The same file runs under both of djc's make protocols (docs/serve-protocol.md):

- serve (``djc populate T --make-serve python3 file.py`` or a
  ``make_serve = python3 file.py`` line): djc starts the program once per
  worker process and sends it one key after another; ``fetch`` asks djc for
  rows over the same pipe, so the program needs no database driver, URL or
  password (docs/serve-protocol.md);
- per key (``--make`` or ``make =``): one process per key; ``fetch`` asks
  djc over the socket it names in DJC_FETCH_SOCKET (no process started, no
  database connection made), else (an older djc, or a program run where
  that socket cannot be reached) runs ``djc fetch`` (the program named by
  $DJC, which djc sets to itself for its make programs, else ``djc`` on
  PATH) with the database djc passed in DJC_DATABASE_URL.

djc puts the directory of this module first on its make programs'
PYTHONPATH, so ``import djc_make`` works without setting it.

``key`` is the key as a dict (as ``djc fetch --format json`` writes rows).
``fetch(table, key=None, where=None)`` returns the rows of ``table`` as a
list of dicts, exactly as ``djc fetch TABLE --format json`` prints them
(bytes and <blob> values: below): restricted by ``key`` (the
attributes ``table`` shares with it, DataJoint's ``Table & key``), by
``where`` (a djc restriction: ``{"attr": value}``, ``{"attr": {">": 3}}``,
a list of those for OR, or condition text: ``"attr > 3 AND name LIKE 'a%'"``),
or all rows. A failed fetch raises FetchError.
As every make's reads, a fetch reads only tables upstream of the one
being made; one through djc (the serve pipe, the fetch socket) is also
checked at commit: djc refuses to commit rows made from reads that
changed meanwhile (docs/parity.md). The ``djc fetch`` fallback is not.
``fetch.table`` is the table being made, ``fetch.attempt`` the attempt.

Under the serve protocol (with a djc that offers them: protocol version
2) and per key through djc's fetch socket, bytes values come as read-only memoryviews, read from the pipe without
base64 (``run(make, binary=False)``: base64 text as before), and values of
``<blob>`` attributes come decoded as DataJoint's ``datajoint.blob.unpack``
decodes them: numeric arrays by djc_blob.py beside this module (numpy
only: no import of DataJoint, which costs a program about a second), other
values (dicts, strings, cells, structs, ...) by DataJoint's codec itself,
imported when the first of them comes; without numpy, or such a value
without DataJoint, as raw bytes (environment ``DJC_BLOBS=raw``: raw bytes
always). A result value for a ``<blob>`` attribute that is not bytes is
packed in DataJoint's format the same way (numeric numpy arrays and numpy
scalars by djc_blob.py, others by ``datajoint.blob.pack``; a TypeError when
that needs DataJoint and it is not there), compressed when over 1000 bytes
and that makes it smaller as DataJoint does, but by zlib at level 1, not 6
(DataJoint reads any level: the 1 MiB result of bench/py-blob.sh packs in
10 ms instead of 54, to the same size; environment ``DJC_BLOB_ZLIB``: the
level, 0 to store uncompressed, 6 for DataJoint's own choice). A
compressed ``<blob>`` value is inflated into a buffer of its stated size,
and a numeric array is made over that buffer (no copy). ``b64(v)`` gives the bytes of a bytes
value in either form. Per key, the types of the table made are asked of
the socket for every key that returns rows. Only the ``djc fetch`` fallback
(no socket) gives bytes and ``<blob>`` values as base64 text, and takes
``<blob>`` results as packed bytes only.

``make`` returns a row (dict), a list or any iterable of rows, or None for
no row; key attributes may be left out (djc fills them in), ``"_part":
"Name"`` sends a row to a part table. Values: what ``json`` writes, plus
bytes (sent as base64), datetime/date (ISO text), Decimal and UUID (text)
and anything with ``tolist()`` (numpy). A whole number beyond 64 bits
signed (a ``uint64`` above 2**63 - 1: ``2**64 - 1``, ``numpy.uint64``) is
sent as decimal text, as djc takes such values (docs/types.md), in a
row's values and in a fetch's ``key`` and ``where`` (not inside a json
attribute's value: djc refuses that one). A NaN or infinite float (Python's
or numpy's) is sent as "NaN", "Infinity" or "-Infinity", which a float
attribute of a table adopted on PostgreSQL takes (docs/types.md) and any
other refuses, naming the attribute; inside a json attribute's value NaN
and infinities are errors. An
exception fails the key: its message is recorded as the job's error and
its traceback as the stack; ``SystemExit`` and ``KeyboardInterrupt`` too
(``SystemExit: 3``, as DataJoint's populate records them), after which a
serve program ends (status 0 after the key's closing line: djc starts it
again for the next key), as DataJoint's populate stops. ``run`` may be given a dict of table name to
make function, for a program that serves several tables.

Anything the make prints (``print``, a library writing to stdout) goes to
stderr, which djc keeps per key for the error stack; stdin is empty.
"""

import os
import select
import sys
import time

# Imported only when used (a per-key make starts an interpreter per key):
# socket by the per-key fetch, subprocess and shutil by its fallback; djc_blob (numpy) at the first
# <blob> value, datajoint.blob at the first that is not a numeric array;
# datetime, decimal and uuid values can only come from a make that imported
# those modules itself.

__all__ = ["run", "FetchError", "ProtocolError", "b64", "PROTOCOL_VERSION"]

PROTOCOL_VERSION = 2
AHEAD = 64          # keys djc may send before the answer of the one being made (version 2)
_HOLD_BYTES = 1 << 16   # answers held back while more keys wait, at most (bytes)
_HOLD_KEYS = 32         # ... and keys
_HOLD_SECS = 0.0005     # ... and only after makes quicker than this
_FRESH = 0.05           # a key sent ahead starts without asking djc only if sent this recently (seconds)
_SLOW = 0.005           # ... and only after a make quicker than this (djc's AHEAD_QUICK)
_LOOK_EVERY = _FRESH / 2    # waiting for djc, the pipe is looked at this often (seconds) ...
_LOOKS = 8                  # ... this many times at most, then waited on (see _Conn._fill)
_NEXT = b'{"_djc":"next"}\n'
_KEY = b'{"_djc":"key",'           # how djc writes a key's line (serve's quick way)
_EMPTY_DONE = b'{}\n{"_djc":"done"}\n'   # an empty row and its closing line
_REUSE_MIN = 1 << 16    # binary values this large are read into buffers used again
_SPARES = 2             # such buffers kept, at most


class FetchError(Exception):
    """djc could not fetch the rows asked for (the message says why)."""


class ProtocolError(Exception):
    """djc sent something this module does not understand."""


def b64(text):
    """The bytes of a bytes attribute as djc gives it: base64 text (the
    per-key protocol, a serve program without binary values), or the raw
    value itself (a memoryview or bytearray: binary values)."""
    if isinstance(text, (memoryview, bytearray)):
        return bytes(text)
    import base64

    return base64.b64decode(text)


_BYTES = (bytes, bytearray, memoryview)
_NONFINITE = ("NaN", "Infinity", "-Infinity")
_codec_cache = []


def _codec():
    """The <blob> codec, (pack, unpack), or None: DJC_BLOBS=raw, or numpy
    cannot be imported. Numeric arrays are djc_blob's (numpy only), other
    values DataJoint's (datajoint.blob), imported when the first of them
    comes; both give None for such a value when datajoint cannot be
    imported. Set up once, when a <blob> value is first seen."""
    if not _codec_cache:
        codec = None
        if os.environ.get("DJC_BLOBS", "") != "raw":
            import djc_blob

            if djc_blob.np is not None:   # else no numpy, and so no DataJoint: raw bytes
                codec = (lambda v: _pack_value(djc_blob, v), lambda v: _unpack_value(djc_blob, v))
        _codec_cache.append(codec)
    return _codec_cache[0]


_dj_cache = []


def _dj_codec():
    """DataJoint's (pack, unpack), or None when datajoint cannot be
    imported; imported once."""
    if not _dj_cache:
        try:
            from datajoint.blob import pack, unpack

            _dj_cache.append((pack, unpack))
        except Exception:   # not installed, or it cannot start here
            _dj_cache.append(None)
    return _dj_cache[0]


def _pack_value(djc_blob, v):
    """A <blob> result value in DataJoint's format: djc_blob's for a
    numeric array, else DataJoint's pack, compressed at zlib level
    DJC_BLOB_ZLIB (default 1) when over 1000 bytes and smaller so, as
    DataJoint compresses at level 6. None: the value needs DataJoint, and
    datajoint cannot be imported."""
    level = int(os.environ.get("DJC_BLOB_ZLIB", "1"))
    packed = djc_blob.pack(v, level)
    if packed is not None:
        return packed
    dj = _dj_codec()
    return None if dj is None else djc_blob.compress(dj[0](v, compress=False), level)


def _unpack_value(djc_blob, v):
    """A <blob> value decoded: a numeric array by djc_blob, anything else
    by DataJoint's unpack; None when that needs DataJoint and datajoint
    cannot be imported."""
    raw = djc_blob.inflate(v)
    a = djc_blob.unpack(raw)
    if a is not None:
        return a
    dj = _dj_codec()
    # bytes, not the bytearray a value was read into: DataJoint's unpack
    # takes its bytes values and UUIDs from it as they are, and
    # uuid.UUID(bytes=...) refuses a bytearray
    return None if dj is None else dj[1](raw if type(raw) is bytes else bytes(raw))


def _decode_row(row, types):
    """A float attribute's NaN and infinities (JSON's "NaN", "Infinity",
    "-Infinity") as floats, and values of <blob> attributes (types:
    attribute -> type text) as DataJoint's unpack makes them, when the codec is there; else (no numpy,
    DJC_BLOBS=raw, or a value that needs DataJoint without it) as they came
    (raw bytes, or base64 text without binary values)."""
    if not types:
        return row
    for a, t in types.items():
        v = row.get(a)
        if type(v) is str and t.startswith("float") and v in _NONFINITE:
            row[a] = float(v)   # NaN and infinities, as JSON carries them (docs/types.md)
    for a, t in types.items():
        if t != "<blob>" or row.get(a) is None:
            continue
        codec = _codec()
        if codec is None:
            return row
        v = row[a]
        if isinstance(v, str):
            v = b64(v)
        elif isinstance(v, memoryview) and isinstance(v.obj, bytearray) and len(v.obj) == v.nbytes:
            v = v.obj   # the buffer it was read into: no copy for the codec
        d = codec[1](v)
        if d is not None:
            row[a] = d
    return row


def _default(v):
    if isinstance(v, (bytes, bytearray, memoryview)):
        import base64

        return base64.b64encode(bytes(v)).decode("ascii")
    mods = sys.modules
    dt = mods.get("datetime")
    if dt and isinstance(v, dt.datetime):
        return v.isoformat(" ")
    if dt and isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    if (mods.get("decimal") and isinstance(v, mods["decimal"].Decimal)) or (mods.get("uuid") and isinstance(v, mods["uuid"].UUID)):
        return str(v)
    if hasattr(v, "tolist"):
        return v.tolist()
    raise TypeError("a value of type %s cannot be sent to djc" % type(v).__name__)


# JSON through CPython's accelerator module _json, which is what json
# itself calls: importing json imports re and enum, 11 of the 38 ms a
# program with djc_make takes to start here, paid by every per-key make.
# Built once and checked against known text; anywhere _json is missing or
# behaves otherwise (another Python), the json module does the work.
def _constant(name):
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


class _ScanContext:
    """What _json.make_scanner reads of a json.JSONDecoder (its defaults)."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_constant)


def _accelerated():
    """(scan, dumps) through _json, or None."""
    try:
        import _json

        scan = _json.make_scanner(_ScanContext())
        make_encoder, quote = _json.make_encoder, _json.encode_basestring

        def dumps(obj):
            # a new encoder each time, as json.dumps makes: its markers (the
            # containers being written, against cycles) start empty
            return "".join(make_encoder({}, _default, quote, None, ":", ",", False, False, False)(obj, 0))

        probe = {"a": [1, -2.5, None, True, "\u00e9\"\n"], "b": {}}
        text = '{"a":[1,-2.5,null,true,"\u00e9\\"\\n"],"b":{}}'
        if dumps(probe) != text or scan(text, 0) != (probe, len(text)):
            return None
        try:
            dumps([float("nan")])
            return None   # NaN must be refused, as json.dumps(allow_nan=False) does
        except ValueError:
            pass
        return scan, dumps
    except Exception:
        return None


_fast = _accelerated()


def _json_module():
    import json

    return json


def _dumps(obj):
    if _fast:
        return _fast[1](obj)
    return _json_module().dumps(obj, default=_default, allow_nan=False, ensure_ascii=False, separators=(",", ":"))


def _loads_text(s):
    """s (str) as json.loads reads it: the same values, a ValueError
    (json.JSONDecodeError) for what it refuses."""
    if not _fast or s[:1].isspace():
        return _json_module().loads(s)
    try:
        obj, end = _fast[0](s, 0)
    except StopIteration as e:
        raise _json_module().JSONDecodeError("Expecting value", s, e.value) from None
    if end != len(s) and not s[end:].isspace():
        raise _json_module().JSONDecodeError("Extra data", s, end)
    return obj


def _loads(line):
    """A line from djc (bytes) as JSON, as json.loads reads it, in a third
    of its time for a key's line (json.loads guesses the encoding and
    matches white space around the value on every call; djc's lines are
    UTF-8)."""
    return _loads_text(line.decode("utf-8"))


_I64 = 1 << 63   # JSON readers of 64-bit integers (djc's) read -_I64 .. _I64 - 1


def _wide_int(v):
    """v as decimal text when it is a whole number beyond 64 bits signed (a
    Python int, a numpy integer scalar), else None."""
    t = type(v)
    if t is int:
        return None if -_I64 <= v < _I64 else str(v)
    if t.__module__ == "numpy" and getattr(v, "ndim", None) == 0 and hasattr(v, "tolist"):
        v = v.tolist()
        if type(v) is int and not -_I64 <= v < _I64:
            return str(v)
        if type(v) is float:
            return _nonfinite(v)
    return None


def _nonfinite(f):
    """The text JSON carries a NaN or infinite float as (docs/types.md:
    "NaN", "Infinity", "-Infinity"; a float attribute of an adopted
    PostgreSQL table takes it), else None."""
    if f - f == 0:
        return None
    return "NaN" if f != f else "Infinity" if f > 0 else "-Infinity"


def _row_types(r, info):
    """The types of the table a row r goes to (info: the table message of
    the table made; a part row's by its "_part"), or None when unknown."""
    if not info:
        return None
    types = info.get("types") or {}
    part = r.get("_part")
    if isinstance(part, str):
        parts = info.get("parts") or {}
        types = parts.get(part) or parts.get(part.rpartition(".")[2]) or {}
    return types


def _wide_ints(r, types=None):
    """r with its values that are whole numbers beyond 64 bits signed as
    decimal text, the form docs/types.md gives a uint64 above 2^63 - 1
    (djc reads JSON integers as 64-bit signed: 18446744073709551615 as a
    number is an error, as text the uint64 it is). Only a row's own values,
    and not a json attribute's (types: the row's table's, when known): its
    value is JSON, where text is not the number (djc refuses a number too
    big, naming the attribute, rather than store text for it)."""
    wide = None
    for a, v in r.items():
        if types and types.get(a) == "json":
            continue
        t = type(v)
        if t is int:
            if -_I64 <= v < _I64:
                continue
        elif t is float:
            if v - v == 0:
                continue
        elif t is str or v is None or t.__module__ != "numpy":
            continue
        s = _wide_int(v) if t is not float else _nonfinite(v)
        if s is not None:
            if wide is None:
                wide = dict(r)
            wide[a] = s
    return wide or r


def _wide_req(v):
    """A fetch's key or restriction with every whole number beyond 64 bits
    signed in it as decimal text (as _wide_ints; djc reads such text as
    the uint64 it is), and every NaN or infinite float as JSON carries it
    ("NaN": a row fetched from a table that keeps them, given back as a
    key)."""
    if isinstance(v, dict):
        return {k: _wide_req(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_wide_req(x) for x in v]
    s = _nonfinite(v) if type(v) is float else _wide_int(v)
    return v if s is None else s


def _packed(v):
    """v (bytes, bytearray or memoryview) starts as a packed <blob> value
    does: DataJoint's mYm or dj0 header, or ZL123 (compressed)."""
    mv = memoryview(v)
    head = (mv.cast("B")[:6] if mv.c_contiguous else mv).tobytes()[:6]
    return head[:4] in (b"mYm\0", b"dj0\0") or head == b"ZL123\0"


def _pack_blobs(r, info):
    """r with its <blob> attributes' values that are not packed yet packed
    by DataJoint's codec (info: the table message of the table
    made). Bytes that do not start as a packed value are a bytes object
    to pack, as DataJoint's insert packs them (a make that gives back a
    <blob> it fetched holding bytes); when that needs DataJoint and it
    cannot be imported they go as they are, and djc refuses them."""
    types = _row_types(r, info)
    packed = None
    for a, v in r.items():
        if v is None or types.get(a) != "<blob>":
            continue
        if isinstance(v, _BYTES):
            if _packed(v) or _codec() is None:
                continue
            mine = _codec()[0](bytes(v))
            if mine is not None:
                if packed is None:
                    packed = dict(r)
                packed[a] = mine
            continue
        codec = _codec()
        if codec is None:
            why = "DJC_BLOBS=raw" if os.environ.get("DJC_BLOBS") == "raw" else "numpy cannot be imported"
            raise TypeError("attribute %r is a <blob>: its value must be bytes (%s to pack a %s)" % (a, why, type(v).__name__))
        if packed is None:
            packed = dict(r)
        packed[a] = codec[0](v)
        if packed[a] is None:
            raise TypeError("attribute %r is a <blob>: its value must be bytes (datajoint cannot be imported "
                            "to pack a %s; numeric numpy arrays need numpy only)" % (a, type(v).__name__))
    return packed or r


def _row_items(rows, info=None, binary=False):
    """The rows make returned, each as (line, values): its JSON line
    (bytes, with a newline) and, with binary values, its bytes values
    (byte memoryviews, named with their lengths in the line's "_bin"),
    else (). info: the table message of the table made (its types), else
    None. The first large value sets up _keep_heap."""
    if rows is None:
        return
    if isinstance(rows, dict):
        rows = [rows]
    for r in rows:
        if not isinstance(r, dict):
            raise TypeError("make must return a dict (a row), a list of dicts or None, not %s" % type(r).__name__)
        if not r:
            yield b"{}\n", ()   # an empty row (djc fills in the key): nothing to encode
            continue
        if info:
            r = _pack_blobs(r, info)
        r = _wide_ints(r, _row_types(r, info))
        bins = [(a, v) for a, v in r.items() if isinstance(v, _BYTES)] if binary and r else None
        if not bins:
            yield _dumps(r).encode("utf-8") + b"\n", ()
            continue
        rest = {a: v for a, v in r.items() if not isinstance(v, _BYTES)}
        vals = [v if isinstance(v, memoryview) else memoryview(v) for a, v in bins]
        if any(v.nbytes >= _REUSE_MIN for v in vals):
            _keep_heap_once()
        rest["_bin"] = [[a, v.nbytes] for (a, _), v in zip(bins, vals)]
        yield _dumps(rest).encode("utf-8") + b"\n", [v.cast("B") if v.ndim != 1 or v.itemsize != 1 else v for v in vals]


def _row_lines(rows, info=None, binary=False):
    """The lines of what make returned (bytes chunks, one row per line;
    with binary values, a row's bytes values follow its line raw, named in
    its "_bin"). info: the table message of the table made (its types),
    else None."""
    out = []
    for line, vals in _row_items(rows, info, binary):
        out.append(line)
        out.extend(vals)
    return out


def _error_text(e):
    text = str(e)
    return "%s: %s" % (type(e).__name__, text) if text else type(e).__name__


def _make_of(make, table):
    if isinstance(make, dict):
        if table not in make:
            raise LookupError("this program makes %s, not %s" % (", ".join(sorted(make)), table))
        return make[table]
    return make


class _Fetch:
    table = None
    attempt = 1

    def cancelled(self):
        """Whether the make should stop now: False here, where djc stops a
        make program itself (a timeout, a cancel, a signal); a make
        called in-process by djc_lib is told why (docs/python-lib.md)."""
        return False

    def __call__(self, table, key=None, where=None):
        if not isinstance(table, str) or not table:
            raise TypeError("fetch(table, key=None, where=None): table must be a table name")
        if key is not None and where is not None:
            raise TypeError("fetch takes key or where, not both")
        if key is not None and not isinstance(key, dict):
            raise TypeError("fetch's key must be a dict")
        return self._fetch(table, key, where)


class _PipeFetch(_Fetch):
    """fetch under the serve protocol: ask djc on the pipe, or, for a
    fetch of a parent by the key being made, take the rows djc sent with
    the key (parents: the closing line then names it in "parents")."""

    def __init__(self, conn):
        self._conn = conn
        self.key = None       # the key being made
        self.parents = None   # its parents' rows sent with it (_Conn._parents), or None
        self.used = []        # the parents whose rows the make was given

    def start(self, msg):
        self.parents = msg.get("_parents")
        self.key = dict(msg["key"]) if self.parents else None   # as it came (the make may change its own)
        self.used = []

    def closing(self):
        """The key's closing line: done, with the parents whose rows the
        make was given."""
        if not self.used:
            return b'{"_djc":"done"}\n'
        return _dumps({"_djc": "done", "parents": self.used}).encode("utf-8") + b"\n"

    def _fetch(self, table, key, where):
        pre = self.parents
        if pre and where is None and table in pre and key == self.key:
            # the rows sent are given once, as they came (a fetch's rows
            # are the make's own: a second fetch of them asks djc); a
            # parent whose read failed when it was sent is asked for now
            got = pre.pop(table)
            if not isinstance(got, FetchError):
                if table not in self.used:
                    self.used.append(table)
                types, rows = got
                return [_decode_row(r, types) for r in rows] if types else rows
        req = {"_djc": "fetch", "table": table}
        if key is not None:
            req["key"] = _wide_req(key)
        elif where is not None:
            req["where"] = _wide_req(where)
        self._conn.send([_dumps(req).encode("utf-8") + b"\n"])
        self._conn.flush()
        head = self._conn.receive()
        while head.get("_djc") == "key":   # sent ahead meanwhile
            self._conn.stash.append(head)
            head = self._conn.receive()
        if head.get("_djc") != "rows":
            raise ProtocolError("expected the rows of a fetch, got %r" % (head,))
        if "error" in head:
            raise FetchError(head["error"])
        types = head.get("types")
        return [_decode_row(self._conn.row(), types) for _ in range(head["count"])]


class _CliFetch(_Fetch):
    """fetch under the per-key protocol: run `djc fetch`."""

    def _fetch(self, table, key, where):
        import shutil
        import subprocess

        djc = os.environ.get("DJC") or shutil.which("djc")
        if not djc:
            raise FetchError("cannot find the djc program: set DJC to its path (or put djc on PATH)")
        cmd = [djc, "fetch", table, "--format", "json"]
        if key is not None:
            cmd += ["--key", _dumps(_wide_req(key))]
        elif where is not None:
            cmd += ["--where", where if isinstance(where, str) else _dumps(_wide_req(where))]
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            msg = p.stderr.decode("utf-8", "replace").strip()
            raise FetchError(msg[5:] if msg.startswith("djc: ") else msg or "djc fetch exited with status %d" % p.returncode)
        return [_loads_text(line) for line in p.stdout.decode("utf-8").splitlines() if line.strip()]


class _SocketFetch(_Fetch):
    """fetch under the per-key protocol through djc itself: the socket djc
    named in $DJC_FETCH_SOCKET (docs/serve-protocol.md; "@name": Linux's
    abstract namespace), which answers as a serve program's fetches are
    answered (types, bytes values raw) with no process started and no
    database connection made; it also tells the types of the table made
    (info). One that cannot be reached (the program runs
    elsewhere) leaves fetch to `djc fetch`. One connection per process
    (a forked child makes its own), one request at a time on it (threads
    take turns)."""

    def __init__(self, path):
        self._addr = "\0" + path[1:] if path.startswith("@") else path
        self._sock = None
        self._pid = None
        self._buf = bytearray()
        self._cli = None
        self._lock = None
        self._info = None   # the table message (info); False: asked, none

    def _line(self):
        buf = self._buf
        while True:
            i = buf.find(b"\n")
            if i >= 0:
                line = bytes(buf[:i])
                del buf[:i + 1]
                return line
            data = self._sock.recv(65536)
            if not data:
                raise OSError("djc closed the fetch socket")
            buf += data

    def _connect(self):
        try:
            import _socket as socket   # the C module: `import socket` imports enum, 9 ms a key
        except ImportError:
            import socket
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(self._addr)
        except OSError:
            s.close()
            raise
        self._sock, self._pid, self._buf = s, os.getpid(), bytearray()

    def _read(self, n):
        """The next n bytes from djc (a value that came raw), as a read-only
        memoryview of a buffer of their own, as the serve protocol gives them."""
        out = bytearray(n)
        view = memoryview(out)
        have = min(n, len(self._buf))
        view[:have] = self._buf[:have]
        del self._buf[:have]
        while have < n:
            got = self._sock.recv_into(view[have:])
            if not got:
                raise OSError("djc closed the fetch socket")
            have += got
        return view.toreadonly()

    def _row(self):
        row = _loads(self._line())
        bins = row.pop("_bin", None) if isinstance(row, dict) else None
        for a, n in bins or ():
            row[a] = self._read(n)
        return row

    def _ask(self, req, answer):
        """Send req and read its answer with answer(); None when the
        socket cannot be reached (fetches go to `djc fetch` from then on)."""
        if self._lock is None:
            import _thread   # (threading costs 8 ms to import)

            self._lock = _thread.allocate_lock()
        with self._lock:
            if self._sock is None or self._pid != os.getpid():
                try:
                    self._connect()
                except OSError:
                    if self._pid is None:   # never reached: djc fetch from now on
                        self._cli = _CliFetch()
                        return None
                    raise FetchError("cannot reach djc's fetch socket any more") from None
            try:
                self._sock.sendall(_dumps(req).encode("utf-8") + b"\n")
                return answer()
            except FetchError:
                raise
            except BaseException as e:
                # the connection is gone or out of step (an interrupt in the
                # middle of an answer too): the next fetch starts a new one
                self._sock.close()
                self._sock = None
                if isinstance(e, OSError):
                    raise FetchError("the fetch socket failed: %s" % e) from None
                raise

    def _fetch(self, table, key, where):
        if self._cli is not None:
            return self._cli._fetch(table, key, where)
        # types and bytes values raw: rows as the serve protocol gives them
        req = {"_djc": "fetch", "table": table, "types": True, "binary": True}
        if key is not None:
            req["key"] = _wide_req(key)
        elif where is not None:
            req["where"] = _wide_req(where)
        got = self._ask(req, self._rows)
        return self._cli._fetch(table, key, where) if got is None else got

    def _rows(self):
        head = _loads(self._line())
        if not isinstance(head, dict) or head.get("_djc") != "rows":
            raise ProtocolError("expected the rows of a fetch, got %r" % (head,))
        if "error" in head:
            raise FetchError(head["error"])
        types = head.get("types")
        return [_decode_row(self._row(), types) for _ in range(head["count"])]

    def info(self):
        """The table message of the table made (its types and its parts'),
        asked once; None when djc cannot tell (no socket, an older djc)."""
        if self._info is None:
            self._info = False
            if self._cli is None:
                self._info = self._ask({"_djc": "table"}, self._table) or False
        return self._info or None

    def _table(self):
        msg = _loads(self._line())
        if isinstance(msg, dict) and msg.get("_djc") == "table":
            return msg
        if isinstance(msg, dict) and msg.get("_djc") == "rows" and "error" in msg:
            return None   # a djc that answers fetches only
        raise ProtocolError("expected a table message, got %r" % (msg,))


class _Conn:
    """The protocol's end of the pipe: djc's messages in, ours out. Input
    is read in chunks of whatever is there (so keys sent ahead come in one
    read); output is queued by send and written by flush."""

    def __init__(self, rfile, wfile):
        try:
            self._fd = rfile.fileno()
        except (AttributeError, OSError, ValueError):
            self._fd = None   # not a pipe (a test's BytesIO)
        self._read1 = getattr(rfile, "read1", None) or rfile.read
        self._w = wfile
        try:
            # written with os.write, past wfile's buffer (a copy and a
            # flush a write: half a microsecond a key at jobs.reserve_batch 1)
            wfile.flush()
            self._wfd = wfile.fileno()
        except (AttributeError, OSError, ValueError):
            self._wfd = None   # not a pipe (a test's BytesIO)
        self._buf = bytearray()
        self._pos = 0
        self._out = []
        self.stash = []     # keys sent ahead, read while waiting for something else
        self.held = 0       # bytes queued, not yet written
        self.held_keys = 0  # closing lines among them
        self._last = time.monotonic()   # when the last read returned
        self._stamp = self._last        # nothing in the buffer was sent before this
        self._readinto = getattr(rfile, "readinto", None)
        self.binary = False   # bytes values come and go raw beside the lines (the hellos agreed)
        self.types = False    # djc sends the types of tables (table messages, rows headers)
        self.tables = {}      # table name -> its table message (types of it and its parts)
        self._spares = []     # buffers of large values, used again once nothing refers to them
        self.sends_ahead = True   # djc may send keys ahead (its hello says "ahead": 0 when it never will)
        self.parents = False  # djc may send a key's parents' rows before it (the hellos agreed)
        self._pending = None  # parents' rows read, for the key that follows them

    def _fill(self):
        if self._pos:
            del self._buf[:self._pos]
            self._pos = 0
        empty = 0.0   # a moment the pipe was seen empty, after the last read
        if self._fd is not None and self.sends_ahead and not self._buf:
            # Waiting for djc (its next keys come after its commit and
            # claim, often tens of ms): a look every _LOOK_EVERY that finds
            # the pipe empty tells that what comes next was sent after it.
            # Stamped by the last read alone, keys that came after such a
            # wait were all older than _FRESH and each cost a round trip
            # ("next"): 0.6 a key at jobs.reserve_batch 50 on MariaDB
            # (bench/results-2026-12-07.md). After _LOOKS looks, wait.
            for _ in range(_LOOKS):
                t = time.monotonic()
                if select.select([self._fd], [], [], _LOOK_EVERY)[0]:
                    break
                empty = t   # empty from t until the look ended
        data = os.read(self._fd, 65536) if self._fd is not None else self._read1(65536)
        if not data:
            raise EOFError
        if not self._buf:
            # what this read brought was not there at the last one, nor
            # at the last look that found the pipe empty
            self._stamp = max(self._last, empty)
        self._last = time.monotonic()
        self._buf += data

    def readline(self):
        buf = self._buf
        while True:
            i = buf.find(b"\n", self._pos)
            if i >= 0:
                line = bytes(buf[self._pos:i + 1])
                self._pos = i + 1
                return line
            self._fill()

    def _value_buffer(self, n):
        """A bytearray of exactly n bytes for a binary value. A large one is
        a buffer of an earlier value when nothing refers to it any more (no
        view of it, no array over one, nothing of it queued to write: its
        reference count is the list's and the call's): one of n bytes, else
        the smallest larger one, cut to n; else a new one, kept for later
        values while fewer than _SPARES are (a free one too small makes
        room). Without this every large value cost a new buffer, zeroed,
        its pages faulted in afresh. Exactly n: the codec is handed the
        buffer itself (_decode_row), and no byte of an earlier value shows."""
        spares = self._spares
        if n < _REUSE_MIN:
            return bytearray(n)
        _keep_heap_once()
        best = -1
        for i in range(len(spares)):
            if len(spares[i]) >= n and sys.getrefcount(spares[i]) == 2 and (best < 0 or len(spares[i]) < len(spares[best])):
                best = i
        if best >= 0:
            buf = spares[best]
            del buf[n:]
            return buf
        if len(spares) >= _SPARES:
            for i in range(len(spares)):
                if sys.getrefcount(spares[i]) == 2:
                    del spares[i]
                    break
        buf = bytearray(n)
        if len(spares) < _SPARES:
            spares.append(buf)
        return buf

    def read_exact(self, n):
        """The next n bytes from djc (a binary value), read into a buffer of
        their own (_value_buffer): a read-only memoryview of it."""
        view = memoryview(self._value_buffer(n))
        have = min(n, len(self._buf) - self._pos)
        view[:have] = self._buf[self._pos:self._pos + have]
        self._pos += have
        while have < n:
            if self._fd is not None:
                got = os.readv(self._fd, [view[have:]])
            else:
                got = self._readinto(view[have:])
            if not got:
                raise EOFError
            have += got
        return view.toreadonly()

    def row(self):
        """A row of a fetch's answer: its line and, with binary values, the
        values that follow it."""
        row = _loads(self.readline())
        bins = row.pop("_bin", None) if isinstance(row, dict) else None
        for a, n in bins or ():
            row[a] = self.read_exact(n)
        return row

    def more_waiting(self):
        """A whole line from djc is there already (a key sent ahead): read
        what the pipe holds, without waiting."""
        if self._buf.find(b"\n", self._pos) >= 0:
            return True
        # (a djc that sends no key ahead writes nothing before our answer:
        # no look at the pipe, a system call a key at jobs.reserve_batch 1)
        if not self.sends_ahead or self._fd is None or not select.select([self._fd], [], [], 0)[0]:
            return False
        try:
            self._fill()
        except EOFError:
            return False
        return self._buf.find(b"\n", self._pos) >= 0

    def fresh(self):
        """What is waiting was sent less than _FRESH seconds ago."""
        return time.monotonic() - self._stamp < _FRESH

    def _message(self):
        while True:
            line = self.readline()
            msg = _loads(line)
            if not isinstance(msg, dict) or "_djc" not in msg:
                raise ProtocolError("expected a message from djc, got %r" % line[:200])
            if msg["_djc"] != "parents" or not self.parents:
                break
            self._pending = self._parents(msg)   # for the key that follows
        if msg["_djc"] == "table":
            self.tables[msg.get("table")] = msg   # types, before the keys of that table
        elif msg["_djc"] == "key" and self._pending is not None:
            msg["_parents"] = self._pending
            self._pending = None
        return msg

    def _parents(self, head):
        """The rows of a key's parents (head: the parents message; the
        answers follow it): table -> (types, rows as they came) or the
        FetchError of a fetch that failed."""
        if not isinstance(head.get("tables"), list):
            raise ProtocolError("expected the parents of a key, got %r" % (head,))
        got = {}
        for name in head["tables"]:
            rows = _loads(self.readline())
            if not isinstance(rows, dict) or rows.get("_djc") != "rows":
                raise ProtocolError("expected the rows of parent %r, got %r" % (name, rows))
            if "error" in rows:
                got[name] = FetchError(rows["error"])
            else:
                got[name] = (rows.get("types"), [self.row() for _ in range(rows["count"])])
        return got

    def receive(self):
        """djc's next message (table messages are kept, not returned)."""
        while True:
            msg = self._message()
            if msg["_djc"] != "table":
                return msg

    def table(self, name):
        """The table message of table name (djc sends it before that
        table's first key, or right after this program's hello for the
        first key): read on (keeping keys) until it is there."""
        while name not in self.tables:
            msg = self._message()
            if msg["_djc"] != "table":
                self.stash.append(msg)
        return self.tables[name]

    def send(self, chunks, close=False):
        """Queue lines (bytes, bytearrays, memoryviews of bytes: _row_lines
        casts others, so len() is the size of each); flush writes them."""
        self._out.extend(chunks)
        self.held += sum(map(len, chunks))
        self.held_keys += close

    def flush(self):
        # what the make printed goes first, so that djc finds it on stderr
        # when it reads the closing line (sys.stdout is sys.stderr unless the
        # make put another there: one flush then)
        out = sys.stdout
        out.flush()
        if sys.stderr is not out:
            sys.stderr.flush()
        chunks = self._out
        if chunks:
            write = self._w.write if self._wfd is None else self._write
            if len(chunks) == 1:
                write(chunks[0])
            elif self.held < _HOLD_BYTES:
                write(b"".join(chunks))
            else:
                for c in chunks:   # large values go as they are, not copied into one
                    write(c)
            del chunks[:]   # the same list: serve holds it
        if self._wfd is None:
            self._w.flush()
        self.held = self.held_keys = 0

    def _write(self, data):
        """All of data (bytes, or a memoryview of bytes) to the pipe."""
        done = os.write(self._wfd, data)
        if done < len(data):   # a pipe takes a large write in parts
            view = memoryview(data)
            while done < len(data):
                done += os.write(self._wfd, view[done:])


def _take_stdio():
    """The real stdin and stdout for the protocol; fd 0 becomes /dev/null
    and fd 1 goes to stderr, so nothing the make does can corrupt them."""
    sys.stdout.flush()
    rfile = os.fdopen(os.dup(0), "rb")
    wfile = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = sys.stderr   # in order with stderr, and not lost in a buffer if the make crashes
    sys.stdin = open(os.devnull)
    return rfile, wfile


def _hello(conn, ahead, binary=True, parents=True):
    """Read djc's hello and answer it: version 2 (keys ahead) with a djc
    that speaks it, else 1; binary values (when binary) and types when djc
    offers them. The version, or 0 when djc closed the pipe first."""
    try:
        hello = conn.receive()
    except EOFError:
        return 0
    if hello.get("_djc") != "hello" or not isinstance(hello.get("version"), int):
        raise ProtocolError("expected djc's hello, got %r" % (hello,))
    if hello["version"] < 1:
        raise ProtocolError("djc speaks serve protocol version %d; this module needs 1 or 2" % hello["version"])
    mine = {"_djc": "hello", "version": 1}
    if type(hello.get("ahead")) is int and hello["ahead"] == 0:
        conn.sends_ahead = False
    if hello["version"] >= 2:
        mine = {"_djc": "hello", "version": 2, "ahead": ahead}
        if binary and hello.get("binary") is True:
            mine["binary"] = conn.binary = True
        if hello.get("types") is True:
            mine["types"] = conn.types = True
        if parents and hello.get("parents") is True:
            mine["parents"] = conn.parents = True
    conn.send([_dumps(mine).encode("utf-8") + b"\n"])
    conn.flush()
    return mine["version"]


class _Keys:
    """The keys djc sends, in order, and its word (go or skip) on a key
    sent ahead that this program asked about before starting it."""

    def __init__(self, conn, version):
        self._conn = conn
        self._v2 = version >= 2
        self._stash = conn.stash   # keys read while waiting for djc's word (or a fetch's rows)
        self.ask = False    # the next key waits for djc's word

    def next(self):
        """The next key to make (a message), or None at the end."""
        while True:
            try:
                msg = self._stash.pop(0) if self._stash else self._conn.receive()
            except EOFError:
                return None
            if msg.get("_djc") != "key":
                raise ProtocolError("expected a key, got %r" % (msg,))
            if not self.ask:
                return msg
            word = None
            while word is None:
                try:
                    m = self._conn.receive()
                except EOFError:
                    return None
                if m.get("_djc") == "key":
                    self._stash.append(m)
                elif m.get("_djc") in ("go", "skip"):
                    word = m["_djc"]
                else:
                    raise ProtocolError("expected djc's go or skip, got %r" % (m,))
            self.ask = False
            if word == "go":
                return msg
            self.after(0.0)   # skipped: not made, nothing answered

    def after(self, took):
        """A key was answered (in took seconds): ask djc about the next one
        if it was sent ahead and may have waited (it may have been
        cancelled meanwhile): behind a make of _SLOW or more, or more than
        _FRESH in all (a round trip a key, when 7 programs share 2 cores and
        each key's wait counted from 5 ms, halved the keys/s); else hold
        quick answers while more keys wait, else write them."""
        conn = self._conn
        waiting = bool(self._stash) or conn.more_waiting()
        if waiting and self._v2 and (self._stash or took >= _SLOW or not conn.fresh()):
            conn.send([_NEXT])
            conn.flush()
            self.ask = True
        elif not (waiting and took < _HOLD_SECS and conn.held < _HOLD_BYTES and conn.held_keys < _HOLD_KEYS):
            conn.flush()


def serve(make, rfile, wfile, ahead=AHEAD, binary=True, parents=True):
    """The serve protocol on rfile/wfile (binary files) until djc closes
    rfile. Returns the process exit status (0). ahead: how many keys djc
    may send before the answer of the one being made (0: one at a time).
    binary: bytes values as raw bytes beside the lines, when djc offers it
    (else base64 text). parents: djc sends each key's parents' rows with
    it, when it offers to (a fetch of a parent by the key is then answered
    without asking)."""
    conn = _Conn(rfile, wfile)
    fetch = _PipeFetch(conn)
    version = _hello(conn, ahead, binary, parents)
    if not version:
        return 0
    keys = _Keys(conn, version)
    # The usual key costs few Python calls besides the make's (issue 40):
    # a key line already in the buffer (or read into it) is scanned here,
    # not through _Keys.next, _Conn.receive, _message, readline and _loads;
    # an empty row and its plain closing line are one constant chunk; and
    # the usual end of a key (the next one waiting, fresh, this one quick:
    # hold the answer; or nothing waiting, at jobs.reserve_batch 1: write
    # it) is told here, not by _Keys.after. Anything else (keys stashed, a
    # word awaited, parents, another message, a line the scanner does not
    # take whole) goes the general way, which reads that line again.
    clock = time.monotonic
    buf, stash, out, tables = conn._buf, conn.stash, conn._out, conn.tables
    find = buf.find
    scan = _fast[0] if _fast else None
    one = None if isinstance(make, dict) else make
    hold_secs, fresh_secs, hold_bytes, hold_keys = _HOLD_SECS, _FRESH, _HOLD_BYTES, _HOLD_KEYS
    empty_done, empty_done_len = _EMPTY_DONE, len(_EMPTY_DONE)
    i = -1   # where the next line ends in the buffer, when the last key's end found it
    while True:
        msg = None
        if scan is not None and not stash and not keys.ask and conn._pending is None:
            try:
                pos = conn._pos
                if i < 0:
                    i = find(b"\n", pos)
                while i < 0:
                    conn._fill()
                    pos = conn._pos
                    i = find(b"\n", pos)
            except EOFError:
                conn.flush()
                return 0
            if buf.startswith(_KEY, pos):
                try:
                    text = buf[pos:i].decode("utf-8")
                    m, end = scan(text, 0)
                    if end == len(text) and m["_djc"] == "key":
                        msg = m
                        conn._pos = i + 1
                except (ValueError, LookupError, TypeError, StopIteration):
                    pass   # the general way says what is wrong with it
        if msg is None:
            msg = keys.next()
            if msg is None:
                conn.flush()
                return 0
        table = fetch.table = msg.get("table")
        fetch.attempt = msg.get("attempt", 1)
        if fetch.parents is not None or fetch.used or "_parents" in msg:
            fetch.start(msg)
        t0 = clock()
        try:
            info = (tables.get(table) or conn.table(table)) if conn.types else None
            rows = (one or _make_of(make, table))(msg["key"], fetch)
            if type(rows) is dict and not rows and not fetch.used:
                lines = None   # an empty row (djc fills in the key), closed by a plain done
            else:
                lines = _row_lines(rows, info, conn.binary)
        except (ProtocolError, EOFError):
            raise
        except BaseException as e:
            # SystemExit and KeyboardInterrupt too: the key's error, as
            # DataJoint's populate records them; then this program ends
            # (status 0 after the key's closing line: djc starts it again
            # for the next key), as that populate stops
            import traceback

            err = {"_djc": "error", "message": _error_text(e), "stack": traceback.format_exc()}
            conn.send([_dumps(err).encode("utf-8") + b"\n"], close=True)
            if not isinstance(e, Exception):
                conn.flush()
                return 0
        else:
            if lines is None:
                out.append(empty_done)
                conn.held += empty_done_len
                conn.held_keys += 1
            else:
                lines.append(fetch.closing())
                conn.send(lines, close=True)
        t1 = clock()
        took = t1 - t0
        i = -1 if stash else find(b"\n", conn._pos)
        if i >= 0:
            # a key waiting: hold this answer if it was quick and the key
            # fresh (_Keys.after, with the clock read once)
            if (took < hold_secs and t1 - conn._stamp < fresh_secs and conn.held < hold_bytes
                    and conn.held_keys < hold_keys):
                continue
        elif not stash and not conn.sends_ahead:
            conn.flush()   # nothing can be waiting (_Keys.after: write it)
            continue
        i = -1
        keys.after(took)


def per_key(make, rfile, wfile):
    """The per-key protocol: the key from rfile (else $DJC_KEY), rows to
    wfile. Returns the exit status: 0, or 1 after a traceback on stderr."""
    text = rfile.read().decode("utf-8")
    key = _loads_text(text if text.strip() else os.environ["DJC_KEY"])
    sock = os.environ.get("DJC_FETCH_SOCKET")
    fetch = _SocketFetch(sock) if sock else _CliFetch()
    fetch.table = os.environ.get("DJC_TABLE")
    fetch.attempt = int(os.environ.get("DJC_ATTEMPT", "1"))
    try:
        rows = _make_of(make, fetch.table)(key, fetch)
        if rows is not None and not isinstance(rows, (dict, list, tuple)):
            rows = list(rows)   # any iterable of rows (a generator: looked at twice)
        # the types of the table made, as under serve: a value's form
        # depends on them (a <blob> packed from any value, a json
        # attribute's left alone); one round trip on the socket, beside
        # the process a key costs
        info = fetch.info() if isinstance(fetch, _SocketFetch) and rows else None
        lines = _row_lines(rows, info)
    except BaseException:   # SystemExit and KeyboardInterrupt too: the key's error
        import traceback

        traceback.print_exc()   # its last line, "Error: message", is djc's error message
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    wfile.write(b"".join(lines))
    wfile.flush()
    return 0


_heap_kept = []


def _keep_heap_once():
    """_keep_heap, at the first large value a serve program reads or
    writes: a make that moves none (most) does not import ctypes (5 ms of
    every program's start)."""
    if not _heap_kept:
        _heap_kept.append(True)
        _keep_heap()


def _keep_heap():
    """What the djc command does for its workers (docs/workers.md, "Large
    values"): glibc's malloc keeps freed heap for the next key instead of
    mapping every large value afresh and faulting its pages in again (about
    1.2x the keys/s of a make moving 10 MiB arrays). Only in a serve
    program or a djc_lib worker (one process for many keys), only with glibc, and never over a
    setting of the user's own (GLIBC_TUNABLES naming malloc, or
    MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_)."""
    env = os.environ
    if ("glibc.malloc." in env.get("GLIBC_TUNABLES", "") or "MALLOC_MMAP_THRESHOLD_" in env
            or "MALLOC_TRIM_THRESHOLD_" in env):
        return
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):
            return
        libc.mallopt(-3, 64 << 20)   # M_MMAP_THRESHOLD
        libc.mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD
    except (ImportError, OSError, AttributeError):
        pass


def run(make, ahead=AHEAD, binary=True, parents=True):
    """Run make under the protocol djc started this program with (serve
    when $DJC_SERVE is set, else per key) and exit. ahead: under the serve
    protocol, how many keys djc may send before the answer of the one
    being made (protocol version 2; 0: one key at a time). binary: bytes
    values cross the pipe raw (False: as base64 text in the JSON).
    parents: djc sends each key's parents' rows with the key (False: a
    make that does not read them saves djc those reads)."""
    if not callable(make) and not isinstance(make, dict):
        raise TypeError("run(make): make must be a function make(key, fetch) or a dict of them")
    rfile, wfile = _take_stdio()
    if os.environ.get("DJC_SERVE"):
        status = serve(make, rfile, wfile, ahead, binary, parents)
    else:
        status = per_key(make, rfile, wfile)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(status)
