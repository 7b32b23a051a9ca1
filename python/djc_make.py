"""djc_make - write a djc make in Python (standard library only).

A make is a function ``make(key, fetch) -> rows``::

    import djc_make

    def make(key, fetch):
        train = fetch("SpikeTrain", key)[0]        # the upstream row of this key
        return {"n_spikes": train["n_spikes"]}     # one row (or a list of rows)

    if __name__ == "__main__":
        djc_make.run(make)

The same file runs under both of djc's make protocols:

- serve (``djc populate T --make-serve python3 file.py`` or a
  ``make_serve = python3 file.py`` line): djc starts the program once per
  worker process and sends it one key after another; ``fetch`` asks djc for
  rows over the same pipe, so the program needs no database driver, URL or
  password (docs/serve-protocol.md);
- per key (``--make`` or ``make =``): one process per key; ``fetch`` runs
  ``djc fetch`` (the program named by $DJC, which djc sets to itself for
  its make programs, else ``djc`` on PATH) with the database djc passed in
  DJC_DATABASE_URL.

djc puts the directory of this module first on its make programs'
PYTHONPATH, so ``import djc_make`` works without setting it.

``key`` is the key as a dict (as ``djc fetch --format json`` writes rows).
``fetch(table, key=None, where=None)`` returns the rows of ``table`` as a
list of dicts, exactly as ``djc fetch TABLE --format json`` prints them
(bytes attributes as base64 text: see ``b64``): restricted by ``key`` (the
attributes ``table`` shares with it, DataJoint's ``Table & key``), by
``where`` (a djc restriction: ``{"attr": value}``, ``{"attr": {">": 3}}``,
a list of those for OR), or all rows. A failed fetch raises FetchError.
``fetch.table`` is the table being made, ``fetch.attempt`` the attempt.

``make`` returns a row (dict), a list or any iterable of rows, or None for
no row; key attributes may be left out (djc fills them in), ``"_part":
"Name"`` sends a row to a part table. Values: what ``json`` writes, plus
bytes (sent as base64), datetime/date (ISO text), Decimal and UUID (text)
and anything with ``tolist()`` (numpy). NaN and infinities are errors. An
exception fails the key: its message is recorded as the job's error and
its traceback as the stack. ``run`` may be given a dict of table name to
make function, for a program that serves several tables.

Anything the make prints (``print``, a library writing to stdout) goes to
stderr, which djc keeps per key for the error stack; stdin is empty.
"""

import base64
import json
import os
import sys
import traceback

# Imported only when used (a per-key make starts an interpreter per key):
# subprocess and shutil by the per-key fetch; datetime, decimal and uuid
# values can only come from a make that imported those modules itself.

__all__ = ["run", "FetchError", "ProtocolError", "b64", "PROTOCOL_VERSION"]

PROTOCOL_VERSION = 1


class FetchError(Exception):
    """djc could not fetch the rows asked for (the message says why)."""


class ProtocolError(Exception):
    """djc sent something this module does not understand."""


def b64(text):
    """The bytes of a bytes attribute as djc gives it (base64 text)."""
    return base64.b64decode(text)


def _default(v):
    if isinstance(v, (bytes, bytearray, memoryview)):
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


def _dumps(obj):
    return json.dumps(obj, default=_default, allow_nan=False, ensure_ascii=False, separators=(",", ":"))


def _row_lines(rows):
    """The JSON lines of what make returned (bytes, one row per line)."""
    if rows is None:
        return []
    if isinstance(rows, dict):
        rows = [rows]
    out = []
    for r in rows:
        if not isinstance(r, dict):
            raise TypeError("make must return a dict (a row), a list of dicts or None, not %s" % type(r).__name__)
        out.append(_dumps(r).encode("utf-8") + b"\n")
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

    def __call__(self, table, key=None, where=None):
        if not isinstance(table, str) or not table:
            raise TypeError("fetch(table, key=None, where=None): table must be a table name")
        if key is not None and where is not None:
            raise TypeError("fetch takes key or where, not both")
        if key is not None and not isinstance(key, dict):
            raise TypeError("fetch's key must be a dict")
        return self._fetch(table, key, where)


class _PipeFetch(_Fetch):
    """fetch under the serve protocol: ask djc on the pipe."""

    def __init__(self, conn):
        self._conn = conn

    def _fetch(self, table, key, where):
        req = {"_djc": "fetch", "table": table}
        if key is not None:
            req["key"] = key
        elif where is not None:
            req["where"] = where
        self._conn.send([_dumps(req).encode("utf-8") + b"\n"])
        head = self._conn.receive()
        if head.get("_djc") != "rows":
            raise ProtocolError("expected the rows of a fetch, got %r" % (head,))
        if "error" in head:
            raise FetchError(head["error"])
        return [json.loads(self._conn.readline()) for _ in range(head["count"])]


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
            cmd += ["--key", _dumps(key)]
        elif where is not None:
            cmd += ["--where", _dumps(where)]
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if p.returncode != 0:
            msg = p.stderr.decode("utf-8", "replace").strip()
            raise FetchError(msg[5:] if msg.startswith("djc: ") else msg or "djc fetch exited with status %d" % p.returncode)
        return [json.loads(line) for line in p.stdout.decode("utf-8").splitlines() if line.strip()]


class _Conn:
    """The protocol's end of the pipe: djc's messages in, ours out."""

    def __init__(self, rfile, wfile):
        self._r = rfile
        self._w = wfile

    def readline(self):
        line = self._r.readline()
        if not line:
            raise EOFError
        return line.decode("utf-8")

    def receive(self):
        line = self.readline()
        msg = json.loads(line)
        if not isinstance(msg, dict) or "_djc" not in msg:
            raise ProtocolError("expected a message from djc, got %r" % line[:200])
        return msg

    def send(self, chunks):
        # what the make printed goes first, so that djc finds it on stderr
        # when it reads the closing line
        sys.stdout.flush()
        sys.stderr.flush()
        self._w.write(b"".join(chunks))
        self._w.flush()


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


def serve(make, rfile, wfile):
    """The serve protocol on rfile/wfile (binary files) until djc closes
    rfile. Returns the process exit status (0)."""
    conn = _Conn(rfile, wfile)
    fetch = _PipeFetch(conn)
    try:
        hello = conn.receive()
    except EOFError:
        return 0
    if hello.get("_djc") != "hello" or not isinstance(hello.get("version"), int):
        raise ProtocolError("expected djc's hello, got %r" % (hello,))
    if hello["version"] < PROTOCOL_VERSION:
        raise ProtocolError("djc speaks serve protocol version %d; this module needs %d" % (hello["version"], PROTOCOL_VERSION))
    conn.send([_dumps({"_djc": "hello", "version": PROTOCOL_VERSION}).encode("utf-8") + b"\n"])
    while True:
        try:
            msg = conn.receive()
        except EOFError:
            return 0
        if msg.get("_djc") != "key":
            raise ProtocolError("expected a key, got %r" % (msg,))
        fetch.table = msg.get("table")
        fetch.attempt = msg.get("attempt", 1)
        try:
            lines = _row_lines(_make_of(make, fetch.table)(msg["key"], fetch))
        except (ProtocolError, EOFError):
            raise
        except Exception as e:
            err = {"_djc": "error", "message": _error_text(e), "stack": traceback.format_exc()}
            conn.send([_dumps(err).encode("utf-8") + b"\n"])
            continue
        conn.send(lines + [b'{"_djc":"done"}\n'])


def per_key(make, rfile, wfile):
    """The per-key protocol: the key from rfile (else $DJC_KEY), rows to
    wfile. Returns the exit status: 0, or 1 after a traceback on stderr."""
    text = rfile.read().decode("utf-8")
    key = json.loads(text) if text.strip() else json.loads(os.environ["DJC_KEY"])
    fetch = _CliFetch()
    fetch.table = os.environ.get("DJC_TABLE")
    fetch.attempt = int(os.environ.get("DJC_ATTEMPT", "1"))
    try:
        lines = _row_lines(_make_of(make, fetch.table)(key, fetch))
    except Exception:
        traceback.print_exc()   # its last line, "Error: message", is djc's error message
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    wfile.write(b"".join(lines))
    wfile.flush()
    return 0


def run(make):
    """Run make under the protocol djc started this program with (serve
    when $DJC_SERVE is set, else per key) and exit."""
    if not callable(make) and not isinstance(make, dict):
        raise TypeError("run(make): make must be a function make(key, fetch) or a dict of them")
    rfile, wfile = _take_stdio()
    if os.environ.get("DJC_SERVE"):
        status = serve(make, rfile, wfile)
    else:
        status = per_key(make, rfile, wfile)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(status)
