"""djc_lib - populate a djc table with a Python make in this process.

The make is the one djc_make runs (``make(key, fetch) -> rows``, see
djc_make's documentation); here it is called by libdjc itself, in this
interpreter, with no make program, no pipe and no process between djc and
the make::

    import djc_lib

    def make(key, fetch):
        train = fetch("SpikeTrain", key)[0]
        return {"n_spikes": train["n_spikes"]}

    res = djc_lib.populate("SpikeCount", make, reserve_jobs=True, processes=7)
    print(res["success_count"], res["error_list"])

as DataJoint's ``SpikeCount.populate(reserve_jobs=True, processes=7)``
runs its ``make``. ``worker`` is the long-running form (``djc worker``).
Claims, leases, commits, retries and signals are djc's, as for any make
(docs/python.md, "In-process makes"): the same jobs table, the same
fence at commit, so these workers and ``djc populate`` / ``djc worker``
processes (or DataJoint's own) share one queue.

The library: $DJC_LIBRARY when set, else libdjc.so.0 where an installed
tree or a build tree puts it beside this module (PREFIX/lib for
PREFIX/share/djc/python, build/ for python/), else where `make install`
put it (LIBDIR), else the dynamic linker's search path.
"""

import ctypes
import os
import sys
import weakref

import djc_make
from djc_make import FetchError, ProtocolError, _decode_row, _dumps, _error_text, _loads, _row_items, _wide_req

__all__ = ["populate", "worker", "MakeError", "PopulateError", "FetchError"]

_c = ctypes
_MAKE = _c.CFUNCTYPE(_c.c_int, _c.c_void_p, _c.c_void_p, _c.c_void_p)
_WORKER_STOPS = ("idle", "max_jobs", "empty", "deadline", "signal", "failed", "drain")


class PopulateError(Exception):
    """populate or worker could not run or go on (a bad option, a table
    that does not exist, the database gone); not a make's failure."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


class MakeError(Exception):
    """A make failed and errors were not suppressed: raised by populate
    when the make failed in a worker process of its own (processes > 1);
    in this process the make's own exception is raised instead."""

    def __init__(self, key, message):
        super().__init__("make of %s failed: %s" % (_dumps(key), message))
        self.key = key
        self.message = message


class _PopulateOptions(_c.Structure):
    _fields_ = [("version", _c.c_int), ("reserve_jobs", _c.c_int), ("processes", _c.c_int),
                ("max_calls", _c.c_long), ("priority", _c.c_long), ("suppress_errors", _c.c_int),
                ("display_progress", _c.c_int), ("refresh", _c.c_int), ("where_json", _c.c_char_p),
                ("make", _MAKE), ("payload", _c.c_void_p), ("make_argv", _c.c_void_p),
                ("make_serve_argv", _c.c_void_p), ("timeout", _c.c_double)]


class _WorkerOptions(_c.Structure):
    _fields_ = [("version", _c.c_int), ("processes", _c.c_int), ("max_jobs", _c.c_long),
                ("idle_exit", _c.c_double), ("until_empty", _c.c_int), ("deadline", _c.c_double),
                ("priority", _c.c_long), ("where_json", _c.c_char_p), ("refresh", _c.c_int),
                ("refresh_interval", _c.c_double), ("make", _MAKE), ("payload", _c.c_void_p),
                ("make_argv", _c.c_void_p), ("make_serve_argv", _c.c_void_p), ("timeout", _c.c_double)]


class _OpenOptions(_c.Structure):
    _fields_ = [("version", _c.c_int), ("no_create", _c.c_int)]


class _Error(_c.Structure):
    _fields_ = [("key_json", _c.c_char_p), ("message", _c.c_char_p)]


_COUNTS = [("success_count", _c.c_long), ("error_count", _c.c_long), ("skipped_count", _c.c_long),
           ("lost_count", _c.c_long), ("n_errors", _c.c_size_t), ("errors", _c.POINTER(_Error)),
           ("interrupted", _c.c_int)]


class _PopulateResult(_c.Structure):
    _fields_ = _COUNTS + [("retried_count", _c.c_long), ("cancelled_count", _c.c_long), ("drained", _c.c_int),
                          ("error_tables", _c.POINTER(_c.c_char_p)), ("failure", _c.c_char_p)]


class _WorkerResult(_c.Structure):
    _fields_ = _COUNTS + [("stopped", _c.c_long * len(_WORKER_STOPS)), ("tables", _c.POINTER(_c.c_char_p)),
                          ("n_tables", _c.c_size_t), ("retried_count", _c.c_long), ("cancelled_count", _c.c_long),
                          ("drained", _c.c_int), ("error_tables", _c.POINTER(_c.c_char_p)),
                          ("failure", _c.c_char_p)]


# the library `make install` installed beside this module (LIBDIR/libdjc.so.0;
# this line is rewritten then), else None
_INSTALLED_LIB = None
_POPULATE_VERSION = 3
_WORKER_VERSION = 2
_OK, _EMAKE, _EINTR = 0, -9, -11
_lib_cache = []


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("DJC_LIBRARY")
    if env:
        return [env]
    # the tree this module is in (a DESTDIR of `make install` too), then
    # where it was installed for, then the linker's search path
    return [os.path.join(here, "..", "..", "..", "lib", "libdjc.so.0"),   # PREFIX/share/djc/python
            os.path.join(here, "..", "build", "libdjc.so.0"),              # a build tree's python/
            _INSTALLED_LIB or "libdjc.so.0", "libdjc.so.0"]


def _load():
    """libdjc, its functions' types declared; loaded once."""
    if _lib_cache:
        return _lib_cache[0]
    tried = []
    lib = None
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            lib = _c.CDLL(path)
            break
        except OSError as e:
            tried.append(str(e))
    if lib is None:
        raise OSError("djc_lib: cannot load libdjc (set DJC_LIBRARY to the path of libdjc.so.0)%s"
                      % ("; " + "; ".join(tried) if tried else ""))
    vp, cp, sz, i = _c.c_void_p, _c.c_char_p, _c.c_size_t, _c.c_int
    sig = {
        "djc_open_ext": (i, [_c.POINTER(vp), cp, cp, _c.POINTER(_OpenOptions)]),
        "djc_close": (None, [vp]),
        "djc_error_last": (cp, [vp]),
        "djc_populate": (i, [_c.POINTER(_c.POINTER(_PopulateResult)), vp, cp, _c.POINTER(_PopulateOptions)]),
        "djc_populate_result_free": (None, [_c.POINTER(_PopulateResult)]),
        "djc_worker": (i, [_c.POINTER(_c.POINTER(_WorkerResult)), vp, _c.POINTER(cp), sz,
                           _c.POINTER(_WorkerOptions)]),
        "djc_worker_result_free": (None, [_c.POINTER(_WorkerResult)]),
        "djc_make_request": (i, [_c.POINTER(vp), _c.POINTER(sz), _c.POINTER(_c.POINTER(vp)), _c.POINTER(sz), vp,
                                 cp, sz]),
        "djc_make_insert_json": (i, [vp, cp, sz, _c.POINTER(vp), sz]),
        "djc_make_error_stack": (None, [vp, cp]),
        "djc_make_cancelled": (i, [vp]),
        "djc_strerror": (cp, [i]),
        "djc_config_load": (i, [_c.POINTER(cp)]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    lib.djc_make_error.restype = None   # variadic: (ctx, "%s", text)
    libc = _c.CDLL(None)
    libc.free.restype, libc.free.argtypes = None, [vp]
    _lib_cache.append((lib, libc.free))
    return _lib_cache[0]


def _address(v):
    """The address of byte memoryview v's bytes and the object that holds
    them (kept alive by the caller until the call returns): no copy for a
    writable buffer (bytearray, numpy) or a whole bytes object."""
    try:
        return _c.addressof((_c.c_char * v.nbytes).from_buffer(v)), v
    except TypeError:   # read-only
        b = v.obj if type(v.obj) is bytes and v.c_contiguous and len(v.obj) == v.nbytes else v.tobytes()
        return _c.cast(_c.c_char_p(b), _c.c_void_p).value, b


class _LibFetch(djc_make._Fetch):
    """fetch in this process: djc_make_request answers as djc answers a
    serve program's fetch (types, bytes values raw)."""

    def __init__(self, lib, free):
        self._lib, self._free = lib, free
        self.ctx = None
        self.told = False   # what cancelled() last said this key: a make told to stop is not committed
        self._info = {}   # table made -> its table message

    def request(self, req, parts=None):
        """The answer's text (bytes); with parts (a list), its raw values
        are not in the text but appended to parts, each the buffer libdjc
        read it into, freed when no view of it is left."""
        out, n = _c.c_void_p(), _c.c_size_t()
        if parts is None:
            rc = self._lib.djc_make_request(_c.byref(out), _c.byref(n), None, None, self.ctx, req, len(req))
        else:
            raw, nraw = _c.POINTER(_c.c_void_p)(), _c.c_size_t()
            rc = self._lib.djc_make_request(_c.byref(out), _c.byref(n), _c.byref(raw), _c.byref(nraw), self.ctx,
                                            req, len(req))
        if rc:
            raise ProtocolError("djc_make_request: %s" % self._lib.djc_strerror(rc).decode())
        try:
            return _c.string_at(out, n.value)
        finally:
            self._free(out)
            if parts is not None and raw:
                parts.extend(raw[i] for i in range(nraw.value))
                self._free(_c.cast(raw, _c.c_void_p))

    def _fetch(self, table, key, where):
        req = {"_djc": "fetch", "table": table, "types": True, "binary": True}
        if key is not None:
            req["key"] = _wide_req(key)
        elif where is not None:
            req["where"] = _wide_req(where)
        parts = []
        try:
            data = self.request(_dumps(req).encode("utf-8"), parts)
        except BaseException:
            for p in parts:
                self._free(p)
            raise
        try:
            return self._rows(data, parts)
        finally:
            for p in parts:
                if p is not None:   # not made a view of (an answer that went wrong)
                    self._free(p)

    def _rows(self, data, parts):
        """The rows of a fetch's answer: its text, its raw values apart
        (parts: their addresses, each set to None once a view owns it)."""
        i = data.index(b"\n")
        head = _loads(data[:i])
        if head.get("_djc") != "rows":
            raise ProtocolError("expected the rows of a fetch, got %r" % (head,))
        if "error" in head:
            raise FetchError(head["error"])
        types = head.get("types")
        rows = []
        pos = i + 1
        k = 0
        for _ in range(head["count"]):
            i = data.index(b"\n", pos)
            row = _loads(data[pos:i])
            pos = i + 1
            for a, n in row.pop("_bin", None) or ():
                row[a] = self._view(parts, k, n)
                k += 1
            rows.append(_decode_row(row, types))
        return rows

    def _view(self, parts, k, n):
        """A read-only memoryview of raw value k (n bytes), over the buffer
        libdjc read it into: freed when the last view of it goes."""
        p = parts[k]
        parts[k] = None
        if not n:
            if p:
                self._free(p)
            return memoryview(b"")
        if n >= djc_make._REUSE_MIN:
            djc_make._keep_heap_once()   # as a serve program does: freed heap kept for the next key
        buf = (_c.c_char * n).from_address(p)
        # freed when the last view goes, and never at the interpreter's
        # exit, when views may still be read (an atexit handler's)
        weakref.finalize(buf, self._free, p).atexit = False
        return memoryview(buf).cast("B").toreadonly()

    def info(self):
        """The table message of the table made (its types and its parts')."""
        got = self._info.get(self.table)
        if got is None:
            got = self._info[self.table] = _loads(self.request(b'{"_djc":"table"}'))
        return got

    def cancelled(self):
        """Whether the make should stop now (djc_make_cancelled): False to
        go on, else why ("interrupted", "lost", "timed out",
        "cancelled"); a long make asks now and then and returns (or
        raises) when told. Nothing it made is committed then."""
        rc = self._lib.djc_make_cancelled(self.ctx)
        why = {0: False, -11: "interrupted", -8: "lost", -12: "timed out", -13: "cancelled"}.get(rc, rc != 0)
        if why:
            self.told = why
        return why


class _Run:
    """One populate or worker call: the callback libdjc calls for each key."""

    def __init__(self, make):
        if not callable(make):
            raise TypeError("make must be a function make(key, fetch)")
        self.make = make
        self.lib, free = _load()
        self.fetch = _LibFetch(self.lib, free)
        self.pid = self.parent = os.getpid()   # pid: of the process the last key was made in
        self.raised = None   # the first exception a make raised in this process
        self.insert = self.lib.djc_make_insert_json
        self.callback = _MAKE(self._call)

    def _call(self, ctx, key, payload):
        """The callback: _one, from which nothing may escape (ctypes would
        return whatever its return slot held: maybe 0, a make that
        succeeded)."""
        try:
            return self._one(ctx, key, payload)
        except BaseException:
            return -1

    def _forked(self):
        """In a worker process's first key (libdjc forked it, past Python's
        fork hooks): what os.fork's hooks would have done that a make may
        see, the random module reseeded (else every worker process draws
        the same numbers)."""
        self.pid = os.getpid()
        rnd = sys.modules.get("random")
        if rnd is not None:
            rnd.seed()

    def _one(self, ctx, _key, _payload):
        lib, fetch = self.lib, self.fetch
        fetch.ctx = ctx
        try:
            if os.getpid() != self.pid:
                self._forked()
            msg = _loads(fetch.request(b'{"_djc":"key"}'))
            fetch.table = msg["table"]
            fetch.attempt = msg["attempt"]
            fetch.told = False
            rows = self.make(msg["key"], fetch)
            if rows is not None and not isinstance(rows, (dict, list, tuple)):
                rows = list(rows)   # a generator runs now: what it asks of fetch counts below
            if fetch.told:
                # it asked, was told to stop, and returned: stopped, as a
                # serve program's make is (djc records why), not committed
                lib.djc_make_error(_c.c_void_p(ctx), b"%s", b"make stopped: " + fetch.told.encode())
                return -1
            if type(rows) is dict and not rows:
                rc = self.insert(ctx, b"{}", 2, None, 0)
            else:
                rc = 0
                info = fetch.info()
                for line, vals in _row_items(rows, info, True):
                    held = [_address(v) for v in vals]
                    raw = (_c.c_void_p * len(held))(*[a for a, _ in held]) if held else None
                    rc = lib.djc_make_insert_json(ctx, line, len(line), raw, len(held))
                    if rc:
                        break
            return rc
        except BaseException as e:
            # SystemExit and KeyboardInterrupt too: the key's error, as
            # under djc_make.run
            import traceback

            if self.raised is None and os.getpid() == self.parent:
                self.raised = e
            try:
                text = _error_text(e)
            except BaseException:   # a __str__ that raises
                text = type(e).__name__
            lib.djc_make_error(_c.c_void_p(ctx), b"%s", text.encode("utf-8", "replace"))
            lib.djc_make_error_stack(ctx, traceback.format_exc().encode("utf-8", "replace"))
            return -1
        finally:
            fetch.ctx = None
            try:   # (_flush, inline: every key's)
                sys.stdout.flush()
                sys.stderr.flush()
            except Exception:
                _flush()


def _flush():
    """What the make printed, written now: a worker process ends with
    _exit. Nothing may leave a callback (ctypes would print it and return
    0: a make that succeeded): a stream that cannot be written is left."""
    for f in (sys.stdout, sys.stderr):
        try:
            if f is not None:
                f.flush()
        except Exception:
            pass


def _connect(lib, url, schema):
    """A connection as the djc command opens one: url None: DJC_DATABASE_URL,
    then djc.json's database.url, then sqlite:djc.db; schema None:
    database.schema (DJC_DATABASE_SCHEMA, djc.json), else the URL's."""
    msg = _c.c_char_p()
    if lib.djc_config_load(_c.byref(msg)):
        raise PopulateError(msg.value.decode("utf-8", "replace"), -2)
    conn = _c.c_void_p()
    # nothing created: a database that is not there is an error, as for djc populate
    opts = _OpenOptions(version=1, no_create=1)
    rc = lib.djc_open_ext(_c.byref(conn), url.encode() if url else None, schema.encode() if schema else None,
                          _c.byref(opts))
    if rc:
        why = lib.djc_error_last(conn).decode("utf-8", "replace")
        lib.djc_close(conn)
        raise PopulateError(why, rc)
    return conn


def _whole(name, v, bits):
    """v for a C integer field of that many bits: a value that does not
    fit is refused (ctypes would keep its low bits: 2**32 + 1 processes
    would be 1)."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError("%s must be a whole number, not %s" % (name, type(v).__name__))
    if not -(1 << (bits - 1)) <= v < (1 << (bits - 1)):
        raise PopulateError("%s: %d is out of range" % (name, v), -2)
    return v


def _check(table, processes):
    """The table's name, and processes > 1 only where forking is sound."""
    if not isinstance(table, str) or not table:
        raise TypeError("table must be a table name (a str), not %r" % (table,))
    th = sys.modules.get("threading")
    n = th.active_count() if th is not None else 1
    if processes > 1 and n > 1:
        # libdjc forks from C, past Python's fork handling: a thread that
        # holds the interpreter's lock (or any other) at that moment
        # holds it in every worker process for ever
        raise PopulateError("processes=%d forks this process, which runs %d threads: only the calling thread goes on "
                            "in a fork, and the locks the others hold (the interpreter's own among them) stay held "
                            "there; start the threads after populate, or use processes=1 (or djc populate "
                            "--processes)" % (processes, n), -2)


def _where(restriction):
    if restriction is None:
        return None
    text = restriction if isinstance(restriction, str) else _dumps(_wide_req(restriction))
    return text.encode("utf-8")


def _tristate(v, name):
    if v is None:
        return -1
    if v not in (True, False):
        raise TypeError("%s must be True, False or None" % name)
    return 1 if v else 0


def _errors(res):
    out = []
    for k in range(res.n_errors):
        e = res.errors[k]
        key = _loads(e.key_json) if e.key_json else None
        table = res.error_tables[k].decode() if res.error_tables and res.error_tables[k] else None
        out.append((key, e.message.decode("utf-8", "replace") if e.message else "", table))
    return out


def _finish(run, lib, conn, rc, res, out):
    """The result dict, or the exception populate / worker ends with."""
    if res:
        r = res.contents
        out.update(success_count=r.success_count, error_count=r.error_count, skipped_count=r.skipped_count,
                   lost_count=r.lost_count, retried_count=r.retried_count, cancelled_count=r.cancelled_count,
                   interrupted=r.interrupted, drained=bool(r.drained),
                   failure=r.failure.decode("utf-8", "replace") if r.failure else None)
        errors = _errors(r)
        out["error_list"] = [(k, m) for k, m, _ in errors]
        out["error_tables"] = [t for _, _, t in errors]
    if rc in (_OK, _EMAKE, _EINTR) and res:
        return None
    return PopulateError(lib.djc_error_last(conn).decode("utf-8", "replace") or lib.djc_strerror(rc).decode(), rc)


def _invoke(make, url, schema, go):
    run = _Run(make)
    lib = run.lib
    conn = _connect(lib, url, schema)
    # worker processes are forks of this one and end with _exit: nothing
    # printed before is left in the buffers they copy
    _flush()
    try:
        rc, out, err = go(run, lib, conn)
    finally:
        lib.djc_close(conn)
    if err is not None:
        raise err
    if out.get("interrupted"):
        # djc recorded the running makes as interrupted; the signal now
        # ends this program as it would have without djc
        if out["interrupted"] == 2:
            raise KeyboardInterrupt
        raise SystemExit(128 + out["interrupted"])
    if rc == _EMAKE and out.get("raise"):
        if run.raised is not None:
            raise run.raised
        key, message = out["error_list"][0] if out["error_list"] else (None, out.get("failure") or "")
        raise MakeError(key, message)
    out.pop("raise", None)
    return out


def populate(table, make, restriction=None, *, url=None, schema=None, reserve_jobs=False, processes=1,
             max_calls=None, priority=None, suppress_errors=False, display_progress=False, refresh=None,
             timeout=None):
    """Call make for every key of table's key source (restricted by
    restriction: a djc restriction, as djc_make's fetch takes) that table
    lacks, as `djc populate` does, in this process (processes > 1: forks of
    it). url, schema: the database (None: as djc finds it: DJC_DATABASE_URL,
    djc.json, sqlite:djc.db). timeout: seconds a make may run (None: the
    table's or jobs.make_timeout; 0: none). Returns a dict as DataJoint's
    populate: "success_count", "error_list" ([(key, message), ...]), and
    djc's counts ("error_count", "skipped_count", "lost_count",
    "retried_count", "cancelled_count", "interrupted", "drained",
    "failure"). A failed make without suppress_errors raises its exception
    (MakeError from a worker process); SIGINT or SIGTERM during populate
    stop it as they stop `djc populate`, then raise KeyboardInterrupt or
    SystemExit; PopulateError when populate cannot run."""
    _check(table, _whole("processes", processes, 32))
    if timeout == 0:
        timeout = -1.0   # DJC_TIMEOUT_NONE
    opts = _PopulateOptions(version=_POPULATE_VERSION, reserve_jobs=1 if reserve_jobs else 0,
                            processes=processes, max_calls=_whole("max_calls", max_calls or 0, 64),
                            priority=-1 if priority is None else _whole("priority", priority, 64),
                            suppress_errors=1 if suppress_errors else 0,
                            display_progress=1 if display_progress else 0,
                            refresh=_tristate(refresh, "refresh"), where_json=_where(restriction),
                            timeout=float(timeout or 0))

    def go(run, lib, conn):
        opts.make = run.callback
        res = _c.POINTER(_PopulateResult)()
        rc = lib.djc_populate(_c.byref(res), conn, table.encode("utf-8"), _c.byref(opts))
        out = {"raise": not suppress_errors}
        try:
            err = _finish(run, lib, conn, rc, res, out)
        finally:
            lib.djc_populate_result_free(res)
        return rc, out, err

    return _invoke(make, url, schema, go)


def worker(table, make, restriction=None, *, url=None, schema=None, processes=1, max_jobs=None, idle_exit=None,
           until_empty=False, deadline=None, priority=None, refresh=None, refresh_interval=None, timeout=None):
    """Serve table for as long as work may appear, as `djc worker TABLE`
    does, with make in this process (processes > 1: forks of it): claim,
    make, commit; wait when nothing can be claimed. Stops on idle_exit
    (seconds without a job), max_jobs, until_empty, deadline (Unix time)
    or a signal (SIGUSR1: drain). A failed make is recorded and the worker
    goes on. Returns the dict populate returns, with "stopped": {reason:
    processes}; PopulateError when the worker cannot start or go on."""
    _check(table, _whole("processes", processes, 32))
    if timeout == 0:
        timeout = -1.0
    opts = _WorkerOptions(version=_WORKER_VERSION, processes=processes, max_jobs=_whole("max_jobs", max_jobs or 0, 64),
                          idle_exit=float(idle_exit or 0), until_empty=1 if until_empty else 0,
                          deadline=float(deadline or 0), priority=-1 if priority is None else _whole("priority", priority, 64),
                          where_json=_where(restriction), refresh=_tristate(refresh, "refresh"),
                          refresh_interval=float(refresh_interval or 0), timeout=float(timeout or 0))

    def go(run, lib, conn):
        opts.make = run.callback
        res = _c.POINTER(_WorkerResult)()
        names = (_c.c_char_p * 1)(table.encode("utf-8"))
        rc = lib.djc_worker(_c.byref(res), conn, names, 1, _c.byref(opts))
        out = {}
        try:
            err = _finish(run, lib, conn, rc, res, out)
            if res:
                out["stopped"] = {n: res.contents.stopped[i] for i, n in enumerate(_WORKER_STOPS) if res.contents.stopped[i]}
        finally:
            lib.djc_worker_result_free(res)
        return rc, out, err

    return _invoke(make, url, schema, go)
