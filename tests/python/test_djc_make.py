"""Tests of python/djc_make.py alone (no database): each runs a small make
program in a subprocess, playing djc's side of the serve protocol on its
pipes, or feeding it a key under the per-key protocol (with a stand-in for
the djc program that `fetch` runs). Run by tests/cli/test_pymake.sh (make
check); by hand: PYTHONPATH=python python3 -m unittest tests/python/test_djc_make.py
"""
import atexit
import base64
import datetime
import decimal
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import tempfile
import textwrap
import unittest
import uuid
import unittest.mock
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE_DIR = os.path.join(HERE, "..", "..", "python")
sys.path.insert(0, MODULE_DIR)
import djc_blob  # noqa: E402
import djc_make  # noqa: E402

# the make programs of these tests: make() is given as its body
PROGRAM = """
import base64, datetime, decimal, json, os, sys, uuid
import djc_make

def make(key, fetch):
    i = key.get("id")
{body}
{extra}
if __name__ == "__main__":
    djc_make.run({target})
"""


class Program:
    """A make program written to a temporary file."""

    def __init__(self, body, target="make", extra=""):
        self.dir = tempfile.mkdtemp(prefix="djc-pymake-")
        atexit.register(shutil.rmtree, self.dir, True)   # at exit: a program may still run until then
        self.path = os.path.join(self.dir, "mk.py")
        with open(self.path, "w") as f:
            f.write(PROGRAM.format(body=textwrap.indent(textwrap.dedent(body), "    "), target=target, extra=extra))

    def env(self, serve, **more):
        env = {k: v for k, v in os.environ.items() if not k.startswith("DJC_")}
        env["PYTHONPATH"] = os.path.abspath(MODULE_DIR)
        if serve:
            env["DJC_SERVE"] = "1"
        env.update(more)
        return env


class Served:
    """A program under the serve protocol, djc's side played here."""

    def __init__(self, prog, hello=True, **env):
        self.p = subprocess.Popen([sys.executable, prog.path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=prog.env(True, **env))
        if hello:
            self.send({"_djc": "hello", "version": 1})
            self.hello = self.read()

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def readline(self):
        return self.p.stdout.readline().decode()

    def read(self):
        line = self.readline()
        return json.loads(line) if line else None

    def key(self, key, table="T", attempt=1):
        """Send a key; return (rows, closing message)."""
        self.send({"_djc": "key", "table": table, "key": key, "attempt": attempt})
        rows = []
        while True:
            m = self.read()
            if m is None or "_djc" in m:
                return rows, m
            rows.append(m)

    def close(self):
        """End of input: the program exits; its status and stderr."""
        self.p.stdin.close()
        rest = self.p.stdout.read()
        err = self.p.stderr.read().decode()
        self.p.wait(timeout=60)
        self.p.stdout.close()
        self.p.stderr.close()
        return self.p.returncode, rest, err


def per_key(prog, key, **env):
    """Run prog under the per-key protocol: (status, rows, stderr)."""
    p = subprocess.run([sys.executable, prog.path], input=json.dumps(key).encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=prog.env(False, **env), timeout=60)
    rows = [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]
    return p.returncode, rows, p.stderr.decode()


class ServeProtocol(unittest.TestCase):
    def test_hello_then_rows_and_done_per_key(self):
        s = Served(Program("return {'v': i * 10}"))
        self.assertEqual(s.hello, {"_djc": "hello", "version": 1})
        for i in (1, 2, 3):
            rows, end = s.key({"id": i})
            self.assertEqual(rows, [{"v": i * 10}])
            self.assertEqual(end, {"_djc": "done"})
        status, rest, err = s.close()
        self.assertEqual((status, rest), (0, b""))

    def test_one_process_for_every_key(self):
        s = Served(Program("return {'pid': os.getpid()}"))
        pids = {s.key({"id": i})[0][0]["pid"] for i in range(5)}
        self.assertEqual(len(pids), 1)
        self.assertEqual(s.close()[0], 0)

    def test_what_make_may_return(self):
        body = """
        if i == 1: return None
        if i == 2: return [{"v": 1}, {"_part": "P", "w": 2}]
        if i == 3: return ({"v": k} for k in range(3))
        if i == 4: return [{"v": 1}, 5]
        return "text"
        """
        s = Served(Program(body))
        self.assertEqual(s.key({"id": 1}), ([], {"_djc": "done"}))
        self.assertEqual(s.key({"id": 2}), ([{"v": 1}, {"_part": "P", "w": 2}], {"_djc": "done"}))
        self.assertEqual(s.key({"id": 3}), ([{"v": 0}, {"v": 1}, {"v": 2}], {"_djc": "done"}))
        rows, end = s.key({"id": 4})
        self.assertEqual(rows, [])   # nothing of a key that fails is sent
        self.assertEqual(end["_djc"], "error")
        self.assertIn("must return a dict", end["message"])
        rows, end = s.key({"id": 5})
        self.assertEqual(end["_djc"], "error")
        self.assertEqual(s.close()[0], 0)

    def test_values_are_converted(self):
        body = """
        return {"b": b"\\x00\\x01\\xff", "ba": bytearray(b"ab"), "d": datetime.date(2026, 1, 2),
                "t": datetime.datetime(2026, 1, 2, 3, 4, 5), "dec": decimal.Decimal("1.50"),
                "u": uuid.UUID(int=1), "s": "\\u2603 \\"q\\"", "n": None, "f": 0.1, "big": 2 ** 64 - 1}
        """
        s = Served(Program(body))
        rows, end = s.key({"id": 1})
        self.assertEqual(end, {"_djc": "done"})
        self.assertEqual(rows, [{"b": base64.b64encode(b"\x00\x01\xff").decode(), "ba": "YWI=", "d": "2026-01-02",
                                 "t": "2026-01-02 03:04:05", "dec": "1.50", "u": "00000000-0000-0000-0000-000000000001",
                                 "s": "\u2603 \"q\"", "n": None, "f": 0.1, "big": "18446744073709551615"}])
        self.assertEqual(s.close()[0], 0)

    def test_ints_beyond_64_bits_go_as_text(self):
        # djc reads JSON integers as 64-bit signed: a uint64 above 2^63 - 1
        # goes as decimal text (docs/types.md), in rows (target and part)
        # and in a fetch's key and where; those within int64 stay numbers,
        # and a json attribute's inner numbers are left as they are
        body = """
        up = fetch("Up", where={"big": {">=": 2 ** 63}, "alt": [2 ** 64 - 1, 3]})
        fetch("Up", {"big": 2 ** 64 - 1})
        return [{"big": 2 ** 64 - 1, "top": 2 ** 63 - 1, "low": -2 ** 63, "under": -2 ** 63 - 1, "j": {"x": 2 ** 64},
                 "n": len(up)}, {"_part": "P", "big": 2 ** 63}]
        """
        s = Served(Program(body))
        s.send({"_djc": "key", "table": "T", "key": {"id": 7}, "attempt": 1})
        self.assertEqual(s.readline(), '{"_djc":"fetch","table":"Up","where":{"big":{">=":"9223372036854775808"},'
                                       '"alt":["18446744073709551615",3]}}\n')
        s.raw(b'{"_djc":"rows","count":1}\n{"id":7,"big":"18446744073709551615"}\n')
        self.assertEqual(s.readline(), '{"_djc":"fetch","table":"Up","key":{"big":"18446744073709551615"}}\n')
        s.raw(b'{"_djc":"rows","count":0}\n')
        self.assertEqual(s.readline(), '{"big":"18446744073709551615","top":9223372036854775807,"low":-9223372036854775808,'
                                       '"under":"-9223372036854775809","j":{"x":18446744073709551616},"n":1}\n')
        self.assertEqual(s.readline(), '{"_part":"P","big":"9223372036854775808"}\n')
        self.assertEqual(s.read(), {"_djc": "done"})
        self.assertEqual(s.close()[0], 0)

    @unittest.skipUnless(djc_blob.np is not None, "numpy")
    def test_numpy_integers_beyond_64_bits_go_as_text(self):
        body = """
        import numpy as np
        return {"big": np.uint64(2 ** 64 - 1), "small": np.uint64(5), "i": np.int64(-3)}
        """
        s = Served(Program(body))
        s.send({"_djc": "key", "table": "T", "key": {"id": 1}, "attempt": 1})
        self.assertEqual(s.readline(), '{"big":"18446744073709551615","small":5,"i":-3}\n')
        self.assertEqual(s.read(), {"_djc": "done"})
        self.assertEqual(s.close()[0], 0)

    def test_nan_goes_as_text_and_unknown_types_fail_the_key(self):
        # a NaN or infinite float as the text djc's float attributes of an
        # adopted PostgreSQL table take (docs/types.md); inside a value, an error
        s = Served(Program("return {'v': float('nan'), 'w': float('-inf'), 'x': 1e308 * 10} if i == 1 else "
                           "{'v': [float('nan')]} if i == 3 else {'v': object()}"))
        rows, end = s.key({"id": 1})
        self.assertEqual((rows, end["_djc"]), ([{"v": "NaN", "w": "-Infinity", "x": "Infinity"}], "done"))
        rows, end = s.key({"id": 3})
        self.assertEqual((rows, end["_djc"]), ([], "error"))
        self.assertIn("ValueError", end["message"])
        rows, end = s.key({"id": 2})
        self.assertEqual(end["_djc"], "error")
        self.assertIn("cannot be sent to djc", end["message"])
        self.assertEqual(s.close()[0], 0)

    def test_an_exception_is_the_keys_error_with_its_traceback(self):
        body = """
        if i == 2:
            raise KeyError("missing thing")
        return {"v": i}
        """
        s = Served(Program(body))
        self.assertEqual(s.key({"id": 1})[1], {"_djc": "done"})
        rows, end = s.key({"id": 2})
        self.assertEqual(rows, [])
        self.assertEqual(end["_djc"], "error")
        self.assertEqual(end["message"], "KeyError: 'missing thing'")
        self.assertIn("Traceback", end["stack"])
        self.assertIn('raise KeyError("missing thing")', end["stack"])
        # and the program goes on
        self.assertEqual(s.key({"id": 3}), ([{"v": 3}], {"_djc": "done"}))
        self.assertEqual(s.close()[0], 0)

    def test_fetch_asks_djc_on_the_pipe(self):
        body = """
        a = fetch("Up", key)
        b = fetch("Up", where={"x": {">": 1}})
        c = fetch("Up")
        return {"n": len(a) + len(b) + len(c), "first": a[0]["x"]}
        """
        s = Served(Program(body))
        s.send({"_djc": "key", "table": "T", "key": {"id": 7}, "attempt": 1})
        self.assertEqual(s.read(), {"_djc": "fetch", "table": "Up", "key": {"id": 7}})
        s.raw(b'{"_djc":"rows","count":2}\n{"id":7,"x":1}\n{"id":7,"x":2}\n')
        self.assertEqual(s.read(), {"_djc": "fetch", "table": "Up", "where": {"x": {">": 1}}})
        s.raw(b'{"_djc":"rows","count":0}\n')
        self.assertEqual(s.read(), {"_djc": "fetch", "table": "Up"})
        s.raw(b'{"_djc":"rows","count":1}\n{"id":1,"x":5}\n')
        self.assertEqual(s.read(), {"n": 3, "first": 1})
        self.assertEqual(s.read(), {"_djc": "done"})
        self.assertEqual(s.close()[0], 0)

    def test_a_failed_fetch_raises_fetch_error(self):
        body = """
        try:
            fetch("Nope", key)
        except djc_make.FetchError as e:
            if i == 1:
                return {"caught": str(e)}
            raise
        """
        s = Served(Program(body))
        for i in (1, 2):
            s.send({"_djc": "key", "table": "T", "key": {"id": i}, "attempt": 1})
            self.assertEqual(s.read()["_djc"], "fetch")
            s.send({"_djc": "rows", "error": "no table named Nope"})
            if i == 1:
                self.assertEqual(s.read(), {"caught": "no table named Nope"})
                self.assertEqual(s.read(), {"_djc": "done"})
            else:
                end = s.read()
                self.assertEqual((end["_djc"], end["message"]), ("error", "FetchError: no table named Nope"))
        self.assertEqual(s.close()[0], 0)

    def test_fetch_arguments_are_checked(self):
        s = Served(Program("fetch('Up', key, where={'x': 1})"))
        rows, end = s.key({"id": 1})
        self.assertEqual(end["_djc"], "error")
        self.assertIn("key or where, not both", end["message"])
        self.assertEqual(s.close()[0], 0)

    def test_table_and_attempt_reach_the_make(self):
        s = Served(Program("return {'t': fetch.table, 'a': fetch.attempt}"))
        self.assertEqual(s.key({"id": 1}, table="Bursts", attempt=3)[0], [{"t": "Bursts", "a": 3}])
        self.assertEqual(s.close()[0], 0)

    def test_a_dict_of_makes_serves_several_tables(self):
        extra = "\ndef other(key, fetch):\n    return {'other': key['id']}\n"
        s = Served(Program("return {'one': i}", target="{'One': make, 'Other': other}", extra=extra))
        self.assertEqual(s.key({"id": 1}, table="One")[0], [{"one": 1}])
        self.assertEqual(s.key({"id": 2}, table="Other")[0], [{"other": 2}])
        rows, end = s.key({"id": 3}, table="Third")
        self.assertEqual(end["_djc"], "error")
        self.assertIn("makes One, Other, not Third", end["message"])
        self.assertEqual(s.close()[0], 0)

    def test_prints_and_stdin_cannot_touch_the_protocol(self):
        body = """
        print("printed %d" % i)
        sys.stdout.write("written\\n")
        os.write(1, b"fd one\\n")
        return {"stdin": sys.stdin.read()}
        """
        s = Served(Program(body))
        rows, end = s.key({"id": 1})
        self.assertEqual((rows, end), ([{"stdin": ""}], {"_djc": "done"}))
        status, rest, err = s.close()
        self.assertEqual((status, rest), (0, b""))
        self.assertIn("printed 1\nwritten\nfd one\n", err)

    def test_stderr_is_written_before_the_closing_line(self):
        s = Served(Program("sys.stderr.write('partial line without newline'); return {'v': 1}"))
        s.send({"_djc": "key", "table": "T", "key": {"id": 1}, "attempt": 1})
        self.assertEqual(s.read(), {"v": 1})
        self.assertEqual(s.read(), {"_djc": "done"})
        # djc reads stderr once it has the closing line: it is there already
        os.set_blocking(s.p.stderr.fileno(), False)
        self.assertEqual(os.read(s.p.stderr.fileno(), 4096), b"partial line without newline")
        os.set_blocking(s.p.stderr.fileno(), True)
        self.assertEqual(s.close()[0], 0)

    def test_end_of_input_before_hello_is_a_clean_exit(self):
        s = Served(Program("return {}"), hello=False)
        self.assertEqual(s.close()[:2], (0, b""))

    def test_a_protocol_error_ends_the_program(self):
        s = Served(Program("return {}"), hello=False)
        s.send({"_djc": "key", "key": {}})
        status, rest, err = s.close()
        self.assertNotEqual(status, 0)
        self.assertIn("expected djc's hello", err)
        s = Served(Program("return {}"))
        s.raw(b"garbage\n")
        status, rest, err = s.close()
        self.assertNotEqual(status, 0)
        s = Served(Program("return {}"), hello=False)
        s.send({"_djc": "hello", "version": 0})
        status, rest, err = s.close()
        self.assertNotEqual(status, 0)
        self.assertIn("needs 1", err)

    def test_a_line_is_read_as_json_loads_reads_it(self):
        # djc_make reads djc's lines with a decoder of its own (json.loads
        # without its per-call work): the same values, the same errors
        for line in (b'{"_djc":"key","key":{"k":1}}\n', b'{"a": [1, 2.5, null, "\\u00e9\xc3\xa9"]}',
                     b' {"a":1}\n', b'{"a":1}\r\n', b'[]\n'):
            self.assertEqual(djc_make._loads(line), json.loads(line), line)
        for line in (b'{"a":1} x\n', b'{"a":1}{}\n', b'', b'\n', b'{"a":', b'garbage\n', b'\xff\n'):
            with self.assertRaises(ValueError, msg=line):
                json.loads(line)
            with self.assertRaises(ValueError, msg=line):
                djc_make._loads(line)
        # trailing data after a message ends the program as garbage does
        s = Served(Program("return {}"))
        s.raw(b'{"_djc":"key","key":{}} {"_djc":"key","key":{}}\n')
        status, rest, err = s.close()
        self.assertNotEqual(status, 0)
        self.assertIn("Extra data", err)


class JsonCodec(unittest.TestCase):
    """djc_make writes and reads JSON through CPython's _json (json's own
    accelerator) without importing json: the same text as json.dumps with
    djc_make's settings, the same values and errors as json.loads."""

    VALUES = [
        {}, [], "", 0, -1, 2 ** 63, -(2 ** 70), 0.1, -0.0, 1e-7, 1.5e300, 5e-324, True, False, None,
        "\u00e9\u2603\U0001f600 \" \\ / \b\f\n\r\t \x00\x1f\x7f",
        {"k": [1, {"n": [None, [True]]}], "": "", "\u00e9": 1}, (1, 2), {1: "int key", 2.5: "f", None: "n", True: "b"},
        b"\x00\xffbytes", bytearray(b"ab"), memoryview(b"cd"),
        datetime.datetime(2026, 12, 6, 4, 5, 6, 789), datetime.date(2026, 1, 2), decimal.Decimal("1.50"),
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
    ]

    @staticmethod
    def json_dumps(v):
        return json.dumps(v, default=djc_make._default, allow_nan=False, ensure_ascii=False, separators=(",", ":"))

    def test_dumps_writes_what_json_dumps_writes(self):
        self.assertIsNotNone(djc_make._fast, "this CPython's _json was not taken")
        for v in self.VALUES:
            self.assertEqual(djc_make._dumps(v), self.json_dumps(v), repr(v))

    def test_dumps_refuses_what_json_dumps_refuses(self):
        cyc = []
        cyc.append(cyc)
        for v in (float("nan"), [float("inf")], {"x": -float("inf")}, cyc, {"o": object()}, {(1, 2): 3}):
            with self.assertRaises((ValueError, TypeError)) as want:
                self.json_dumps(v)
            with self.assertRaises(type(want.exception), msg=repr(v)):
                djc_make._dumps(v)
        # a failure half way leaves nothing behind: the same list again, fixed
        bad = [[1, 2], {"o": object()}]
        with self.assertRaises(TypeError):
            djc_make._dumps(bad)
        bad[1] = {"o": 1}
        self.assertEqual(djc_make._dumps(bad), '[[1,2],{"o":1}]')

    def test_loads_reads_what_json_loads_reads(self):
        texts = ['{"a":[1,-2.5e-3,1E+2,null,true,false,"\\u00e9\\ud83d\\ude00\\n"],"b":{}}', "123456789012345678901234567890",
                 "-0", "0.0", '"\u00e9"', "[NaN, Infinity, -Infinity]", '{"a":1,"a":2}', " [1] ", "[1]\n", "[1]\r\n",
                 '{"k" : [ 1 , 2 ] }']
        for t in texts:
            got, want = djc_make._loads_text(t), json.loads(t)
            self.assertEqual(repr(got), repr(want), t)
            self.assertEqual(repr(djc_make._loads(t.encode("utf-8"))), repr(want), t)
        for t in ("", " ", "[1,]", "{\"a\":1,}", "[1 2]", '{"a" 1}', "tru", '"\x01"', '"\\x"', "[1] [2]", "01", "{'a':1}"):
            with self.assertRaises(ValueError, msg=t):
                json.loads(t)
            with self.assertRaises(json.JSONDecodeError, msg=t):
                djc_make._loads_text(t)

    def test_without_the_accelerator_json_does_the_work(self):
        code = textwrap.dedent("""
            import sys
            sys.modules["_json"] = None
            import djc_make
            assert djc_make._fast is None
            print(djc_make._dumps({"a": [1, 2.5, None, "\u00e9"]}))
            print(djc_make._loads(b'{"b": [true, "x"]}\\n'))
            try:
                djc_make._loads(b'[1] x')
            except ValueError as e:
                print(type(e).__name__)
            """)
        p = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=MODULE_DIR),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertEqual(p.stdout.decode("utf-8").splitlines(),
                         ['{"a":[1,2.5,null,"\u00e9"]}', "{'b': [True, 'x']}", "JSONDecodeError"])

    def test_importing_djc_make_imports_no_json(self):
        p = subprocess.run([sys.executable, "-c", "import sys; had = set(sys.modules); import djc_make; "
                            "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules and m not in had))"],
                           env=dict(os.environ, PYTHONPATH=MODULE_DIR), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertEqual(p.stdout.decode().strip(), "[]")


class PerKeyProtocol(unittest.TestCase):
    def setUp(self):
        # a stand-in for the djc program: prints its arguments as a row
        self.dir = tempfile.mkdtemp(prefix="djc-pymake-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.djc = os.path.join(self.dir, "djc")
        with open(self.djc, "w") as f:
            f.write("#!%s\nimport json, os, sys\n"
                    "if sys.argv[2] == 'Nope':\n"
                    "    sys.stderr.write('djc: no table named Nope\\n'); sys.exit(2)\n"
                    "print(json.dumps({'argv': sys.argv[1:], 'url': os.environ.get('DJC_DATABASE_URL')}))\n"
                    "print(json.dumps({'second': 1}))\n" % sys.executable)
        os.chmod(self.djc, 0o755)

    def test_key_in_rows_out(self):
        st, rows, err = per_key(Program("return [{'v': i}, {'_part': 'P', 'w': 1}]"), {"id": 4})
        self.assertEqual((st, rows), (0, [{"v": 4}, {"_part": "P", "w": 1}]))

    def test_the_key_from_djc_key_when_stdin_is_empty(self):
        prog = Program("return {'v': i}")
        p = subprocess.run([sys.executable, prog.path], input=b"", stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=prog.env(False, DJC_KEY='{"id": 9}'), timeout=60)
        self.assertEqual((p.returncode, p.stdout), (0, b'{"v":9}\n'))

    def test_an_exception_exits_1_with_the_error_as_the_last_stderr_line(self):
        st, rows, err = per_key(Program("raise ValueError('bad %d' % i)"), {"id": 2})
        self.assertEqual((st, rows), (1, []))
        self.assertIn("Traceback", err)
        self.assertEqual(err.strip().splitlines()[-1], "ValueError: bad 2")

    def test_fetch_runs_djc_fetch(self):
        body = """
        a = fetch("Up", key)
        b = fetch("Up", where={"x": [1, 2]})
        c = fetch("Up")
        return {"a": a, "b": b[0]["argv"], "c": c[0]["argv"]}
        """
        st, rows, err = per_key(Program(body), {"id": 3}, DJC=self.djc, DJC_DATABASE_URL="sqlite:x.db")
        self.assertEqual(st, 0, err)
        self.assertEqual(rows[0]["a"], [{"argv": ["fetch", "Up", "--format", "json", "--key", '{"id":3}'],
                                         "url": "sqlite:x.db"}, {"second": 1}])
        self.assertEqual(rows[0]["b"], ["fetch", "Up", "--format", "json", "--where", '{"x":[1,2]}'])
        self.assertEqual(rows[0]["c"], ["fetch", "Up", "--format", "json"])

    def fake_socket(self, answer):
        """A djc fetch socket in a thread: each request line (seen, which
        comes back with the socket's path) answered with answer(req, seen)."""
        import socket
        import threading
        path = tempfile.mktemp(prefix="fetch", dir=self.dir)
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(1)
        self.addCleanup(srv.close)
        seen = []

        def serve():
            conn, _ = srv.accept()
            for line in conn.makefile("rb"):
                seen.append(json.loads(line))
                conn.sendall(answer(seen[-1], seen))
            conn.close()
        threading.Thread(target=serve, daemon=True).start()
        return path, seen

    @staticmethod
    def table_of(types, rows_line=b'{"_djc":"rows","count":0}\n'):
        """An answer: the table message of a table T of types, rows_line to a fetch."""
        return lambda req, seen: (json.dumps({"_djc": "table", "table": "T", "types": types, "parts": {}}).encode() + b"\n"
                                  if req["_djc"] == "table" else rows_line)

    def test_fetch_through_djc_fetch_socket(self):
        # djc's side of DJC_FETCH_SOCKET: each request line is logged and
        # answered with a rows header and one row naming it (an error for
        # table Nope); the stand-in djc program must not run
        def answer(req, seen):
            if req["_djc"] == "table":   # as a djc before table messages on this socket
                return b'{"_djc":"rows","error":"the fetch socket takes fetch requests only","code":2}\n'
            if req["table"] == "Nope":
                return b'{"_djc":"rows","error":"Nope is not upstream of T"}\n'
            return b'{"_djc":"rows","count":2}\n' + json.dumps({"n": len(seen)}).encode() + b'\n{"b":"AAE="}\n'
        path, seen = self.fake_socket(answer)
        body = """
        a = fetch("Up", key)
        b = fetch("Up", where={"x": [1, 2 ** 64 - 1]})
        try:
            fetch("Nope")
        except djc_make.FetchError as e:
            return {"a": a, "b": b, "e": str(e)}
        """
        st, rows, err = per_key(Program(body), {"id": 3}, DJC=self.djc, DJC_FETCH_SOCKET=path)
        self.assertEqual(st, 0, err)
        self.assertEqual(rows, [{"a": [{"n": 1}, {"b": "AAE="}], "b": [{"n": 2}, {"b": "AAE="}],
                                 "e": "Nope is not upstream of T"}])
        ask = {"types": True, "binary": True}
        self.assertEqual(seen, [{"_djc": "fetch", "table": "Up", "key": {"id": 3}, **ask},
                                {"_djc": "fetch", "table": "Up", "where": {"x": [1, "18446744073709551615"]}, **ask},
                                {"_djc": "fetch", "table": "Nope", **ask},
                                {"_djc": "table"}])   # lists in the rows made: their types asked

    def test_the_fetch_socket_gives_types_and_raw_values(self):
        # a djc that answers with types and raw values: the make gets the
        # bytes as a memoryview (as under serve), and the rows it makes go
        # by the types of the table made (the table message): a json
        # attribute's wide int stays a number, another's goes as text
        path, seen = self.fake_socket(self.table_of({"id": "int32", "j": "json", "w": "uint64"},
                                                    b'{"_djc":"rows","count":1,"types":{"id":"int32","raw":"bytes"}}\n'
                                                    b'{"id":3,"_bin":[["raw",5]]}\n\x00\n\x01{}'))
        body = """
        r = fetch("Up", key)[0]
        return {"j": {"big": 2 ** 64 - 1}, "w": 2 ** 64 - 1, "t": type(r["raw"]).__name__, "raw": djc_make.b64(r["raw"])}
        """
        st, rows, err = per_key(Program(body), {"id": 3}, DJC="/bin/false", DJC_FETCH_SOCKET=path)
        self.assertEqual(st, 0, err)
        self.assertEqual([q["_djc"] for q in seen], ["fetch", "table"])
        self.assertEqual(rows, [{"j": {"big": 2 ** 64 - 1}, "w": "18446744073709551615", "t": "memoryview",
                                 "raw": base64.b64encode(b"\x00\n\x01{}").decode()}])

    def test_ints_beyond_64_bits_go_as_text(self):
        # per key as under serve: rows, and djc fetch's --key and --where
        body = """
        a = fetch("Up", {"big": 2 ** 64 - 1})[0]["argv"]
        b = fetch("Up", where={"big": [2 ** 63, 1]})[0]["argv"]
        return [{"big": 2 ** 64 - 1, "top": 2 ** 63 - 1, "a": a[-1], "b": b[-1]}, {"_part": "P", "big": 2 ** 63}]
        """
        prog = Program(body)
        p = subprocess.run([sys.executable, prog.path], input=b'{"id": 1}', stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=prog.env(False, DJC=self.djc), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertEqual(p.stdout.decode().splitlines(),
                         ['{"big":"18446744073709551615","top":9223372036854775807,"a":"{\\"big\\":\\"18446744073709551615\\"}",'
                          '"b":"{\\"big\\":[\\"9223372036854775808\\",1]}"}',
                          '{"_part":"P","big":"9223372036854775808"}'])

    def test_rows_from_a_generator_and_scalars_for_a_blob(self):
        # a make may yield its rows; every row goes, and any value for a
        # <blob> is packed as under serve (the table's types asked of the
        # socket: without a codec, serve's message names the attribute)
        path, seen = self.fake_socket(self.table_of({"id": "int32", "v": "int32", "b": "<blob>"}))
        body = """
        yield {"v": 1}
        yield {"v": 2}
        """
        st, rows, err = per_key(Program(body), {"id": 3}, DJC="/bin/false", DJC_FETCH_SOCKET=path)
        self.assertEqual((st, rows), (0, [{"v": 1}, {"v": 2}]), err)
        self.assertEqual(seen, [{"_djc": "table"}])
        path, seen = self.fake_socket(self.table_of({"id": "int32", "v": "int32", "b": "<blob>"}))
        st, rows, err = per_key(Program("return {'b': 2.5}"), {"id": 3}, DJC="/bin/false", DJC_FETCH_SOCKET=path,
                                DJC_BLOBS="raw")
        self.assertEqual(st, 1)
        self.assertIn("TypeError: attribute 'b' is a <blob>: its value must be bytes (DJC_BLOBS=raw to pack a float)", err)

    def test_a_fetched_nan_given_back_as_a_key(self):
        # "NaN" from a table that keeps it comes as a float; given back in a
        # fetch's key it goes as JSON carries it
        path, seen = self.fake_socket(self.table_of({"id": "int32"}, b'{"_djc":"rows","count":1,"types":{"f":"float64"}}\n{"f":"NaN"}\n'))
        body = """
        r = fetch("Up", key)[0]
        fetch("Up", r)
        fetch("Up", where={"f": [float("inf"), 1.5]})
        return None
        """
        st, rows, err = per_key(Program(body), {"id": 3}, DJC="/bin/false", DJC_FETCH_SOCKET=path)
        self.assertEqual(st, 0, err)
        self.assertEqual([q.get("key", q.get("where")) for q in seen],
                         [{"id": 3}, {"f": "NaN"}, {"f": ["Infinity", 1.5]}])

    def test_a_fetch_socket_out_of_reach_leaves_fetch_to_djc_fetch(self):
        body = "return {'a': fetch('Up', key)[0]['argv'], 'b': fetch('Up')[0]['argv']}"
        st, rows, err = per_key(Program(body), {"id": 3}, DJC=self.djc,
                                DJC_FETCH_SOCKET=os.path.join(self.dir, "none", "fetch"))
        self.assertEqual(st, 0, err)
        self.assertEqual(rows, [{"a": ["fetch", "Up", "--format", "json", "--key", '{"id":3}'],
                                 "b": ["fetch", "Up", "--format", "json"]}])

    def test_a_failed_fetch_raises_fetch_error(self):
        st, rows, err = per_key(Program("fetch('Nope', key)"), {"id": 1}, DJC=self.djc)
        self.assertEqual(st, 1)
        self.assertEqual(err.strip().splitlines()[-1], "djc_make.FetchError: no table named Nope")

    def test_prints_go_to_stderr(self):
        st, rows, err = per_key(Program("print('hello'); return {'v': 1}"), {"id": 1})
        self.assertEqual((st, rows), (0, [{"v": 1}]))
        self.assertIn("hello", err)

    def test_table_and_attempt(self):
        st, rows, err = per_key(Program("return {'t': fetch.table, 'a': fetch.attempt}"), {"id": 1},
                                DJC_TABLE="Bursts", DJC_ATTEMPT="2")
        self.assertEqual(rows, [{"t": "Bursts", "a": 2}])


HELLO2 = {"_djc": "hello", "version": 2, "binary": True, "types": True}
TYPES = {"id": "int32", "b": "bytes", "blob": "<blob>", "n": "int64"}


class Binary(unittest.TestCase):
    """Binary values and types (serve protocol version 2): djc's side
    played here, byte for byte."""

    def served(self, body, **env):
        s = Served(Program(body), hello=False, **env)
        s.send(HELLO2)
        s.hello = s.read()
        s.send({"_djc": "table", "table": "T", "types": TYPES, "parts": {"P": {"id": "int32", "q": "<blob>"}}})
        return s

    def rows_of(self, s):
        """Lines and raw values the program wrote for a key, to its closing line."""
        out = []
        while True:
            m = s.read()
            out.append(m)
            if "_djc" in m:
                return out
            for a, n in m.get("_bin", []):
                out.append((a, s.p.stdout.read(n)))

    def answer_fetch(self, s, row, bins):
        req = s.read()
        self.assertEqual(req, {"_djc": "fetch", "table": "S", "key": {"id": 1}})
        s.send({"_djc": "rows", "count": 1, "types": TYPES})
        row = dict(row, _bin=[[a, len(v)] for a, v in bins])
        s.raw(json.dumps(row).encode() + b"\n" + b"".join(v for a, v in bins))

    def test_values_cross_raw_both_ways(self):
        body = """
        r = fetch("S", key)[0]
        print(type(r["b"]).__name__, type(r["blob"]).__name__, r["n"], file=sys.stderr)
        return [{"n": len(r["b"]), "b": bytes(r["b"])[::-1], "blob": r["blob"]}, {"_part": "P", "q": b"mYm\\0x"}]
        """
        s = self.served(body, DJC_BLOBS="raw")
        self.assertEqual(s.hello, {"_djc": "hello", "version": 2, "ahead": djc_make.AHEAD, "binary": True, "types": True})
        big = bytes(range(256)) * 4096 + b"\n{}\n\x00"
        s.send({"_djc": "key", "table": "T", "key": {"id": 1}, "attempt": 1})
        self.answer_fetch(s, {"id": 1, "n": 7}, [("b", big), ("blob", b"mYm\0\n\n")])
        out = self.rows_of(s)
        self.assertEqual(out, [{"n": len(big), "_bin": [["b", len(big)], ["blob", 6]]}, ("b", big[::-1]),
                               ("blob", b"mYm\0\n\n"), {"_part": "P", "_bin": [["q", 5]]}, ("q", b"mYm\0x"),
                               {"_djc": "done"}])
        status, rest, err = s.close()
        self.assertEqual((status, rest), (0, b""))
        self.assertIn("memoryview memoryview 7", err)

    def test_nonfinite_floats_come_as_floats(self):
        # a float attribute's NaN and infinities come as JSON text (an
        # adopted PostgreSQL table's); the make gets Python floats
        body = """
        r = fetch("S", key)[0]
        return {"n": 1, "x": repr([r["f"], r["g"], r["h"], r["s"]])}
        """
        s = self.served(body, DJC_BLOBS="raw")
        s.send({"_djc": "key", "table": "T", "key": {"id": 1}, "attempt": 1})
        self.assertEqual(s.read(), {"_djc": "fetch", "table": "S", "key": {"id": 1}})
        s.send({"_djc": "rows", "count": 1, "types": {"id": "int32", "f": "float64", "g": "float32", "h": "float64", "s": "varchar(8)"}})
        s.send({"id": 1, "f": "NaN", "g": "-Infinity", "h": 1.5, "s": "NaN"})
        self.assertEqual(self.rows_of(s), [{"n": 1, "x": "[nan, -inf, 1.5, 'NaN']"}, {"_djc": "done"}])
        self.assertEqual(s.close()[0], 0)

    def test_heap_kept_from_the_first_large_value(self):
        # _keep_heap (ctypes: 5 ms of a start) only once a large value came
        body = """
        r = fetch("S", key)[0]
        print("ctypes", i, "ctypes" in sys.modules, file=sys.stderr)
        return {"n": len(r["b"])}
        """
        s = self.served(body, DJC_BLOBS="raw")
        for i, n in ((1, 10), (2, djc_make._REUSE_MIN)):
            s.send({"_djc": "key", "table": "T", "key": {"id": 1}, "attempt": 1})
            self.answer_fetch(s, {"id": 1, "n": 7}, [("b", b"x" * n)])
            self.assertEqual(self.rows_of(s), [{"n": n}, {"_djc": "done"}])
        status, rest, err = s.close()
        self.assertEqual(status, 0)
        self.assertIn("ctypes 1 False", err)
        self.assertIn("ctypes 1 False\nctypes 1 True", err.replace("\r", ""))

    def test_blob_that_is_not_bytes_needs_the_codec(self):
        s = self.served("return {'n': 1, 'b': b'', 'blob': [1, 2]}", DJC_BLOBS="raw")
        rows, end = s.key({"id": 1})
        self.assertEqual(rows, [])
        self.assertEqual(end["message"], "TypeError: attribute 'blob' is a <blob>: its value must be bytes "
                                         "(DJC_BLOBS=raw to pack a list)")
        self.assertEqual(s.close()[0], 0)

    def test_binary_false_asks_for_types_only(self):
        prog = Program("return {'n': 1, 'b': b'ab'}", target="make, binary=False")
        s = Served(prog, hello=False)
        s.send(HELLO2)
        self.assertEqual(s.read(), {"_djc": "hello", "version": 2, "ahead": djc_make.AHEAD, "types": True})
        s.send({"_djc": "table", "table": "T", "types": TYPES, "parts": {}})
        self.assertEqual(s.key({"id": 1}), ([{"n": 1, "b": "YWI="}], {"_djc": "done"}))
        self.assertEqual(s.close()[0], 0)

    def test_a_json_attributes_wide_int_stays_a_number(self):
        # with the table's types known, a json attribute's value is JSON:
        # its int beyond 64 bits stays the number it is (djc then refuses
        # it, naming the attribute), never text; a uint64's goes as text
        prog = Program("return [{'n': 2 ** 64 - 1, 'j': 2 ** 64 - 1}, {'_part': 'P', 'id': 2 ** 64, 'j': 2 ** 64}]",
                       target="make, binary=False")
        s = Served(prog, hello=False)
        s.send(HELLO2)
        s.read()
        s.send({"_djc": "table", "table": "T", "types": dict(TYPES, j="json"), "parts": {"P": {"id": "uint64", "j": "json"}}})
        s.send({"_djc": "key", "table": "T", "key": {"id": 1}, "attempt": 1})
        self.assertEqual(s.readline(), '{"n":"18446744073709551615","j":18446744073709551615}\n')
        self.assertEqual(s.readline(), '{"_part":"P","id":"18446744073709551616","j":18446744073709551616}\n')
        self.assertEqual(s.read(), {"_djc": "done"})
        self.assertEqual(s.close()[0], 0)

    def test_version_1_djc_gets_base64(self):
        s = Served(Program("return {'b': b'ab'}"))
        self.assertEqual(s.key({"id": 1}), ([{"b": "YWI="}], {"_djc": "done"}))
        self.assertEqual(s.close()[0], 0)


class ValueBuffers(unittest.TestCase):
    """Large binary values are read into buffers used again once nothing
    refers to them (_Conn._value_buffer); a value still referred to in
    any way keeps its bytes."""
    N = djc_make._REUSE_MIN

    def conn(self, *values):
        import io
        self.out = io.BytesIO()
        return djc_make._Conn(io.BytesIO(b"".join(values)), self.out)

    def test_a_dropped_value_lends_its_buffer_to_the_next(self):
        a, b = b"a" * (2 * self.N), b"b" * self.N
        c = self.conn(a, b)
        v = c.read_exact(len(a))
        self.assertEqual(bytes(v), a)
        first = id(v.obj)
        del v
        w = c.read_exact(len(b))
        self.assertEqual(id(w.obj), first)
        self.assertEqual((len(w), bytes(w)), (len(b), b))
        self.assertTrue(w.readonly)
        # the buffer is the value's size: nothing of the longer one shows,
        # and a <blob>'s codec is handed the buffer itself (_decode_row)
        self.assertEqual(bytes(w.obj), b)
        got = []
        with unittest.mock.patch.object(djc_make, "_codec", lambda: (None, lambda v: got.append(type(v)) or "decoded")):
            self.assertEqual(djc_make._decode_row({"x": w}, {"x": "<blob>"}), {"x": "decoded"})
        self.assertEqual(got, [bytearray])

    def test_a_value_still_referred_to_keeps_its_bytes(self):
        holds = {"the view": lambda v: v, "a slice": lambda v: v[10:20], "a view of it": memoryview,
                 "a list": lambda v: [v], "a numpy array": None}
        try:
            import numpy
            holds["a numpy array"] = lambda v: numpy.frombuffer(v, dtype=numpy.uint8)
        except ImportError:
            del holds["a numpy array"]
        for name, hold in holds.items():
            with self.subTest(held=name):
                a, b = bytes(range(256)) * (self.N // 256), b"b" * self.N
                c = self.conn(a, b)
                held = hold(c.read_exact(len(a)))
                w = c.read_exact(len(b))
                self.assertEqual(bytes(w), b)
                got = held[0] if isinstance(held, list) else held
                self.assertEqual(bytes(got), a[10:20] if name == "a slice" else a)

    def test_a_value_queued_to_write_keeps_its_bytes(self):
        a, b = b"a" * self.N, b"b" * self.N
        c = self.conn(a, b)
        c.send([c.read_exact(len(a))])
        c.read_exact(len(b))
        c.flush()
        self.assertEqual(self.out.getvalue(), a)

    def test_small_values_get_buffers_of_their_own(self):
        n = self.N - 1
        c = self.conn(b"x" * n, b"y" * n)
        self.assertEqual(bytes(c.read_exact(n)), b"x" * n)
        self.assertEqual((bytes(c.read_exact(n)), c._spares), (b"y" * n, []))

    def test_at_most_two_buffers_are_kept(self):
        c = self.conn(*(bytes([i]) * self.N for i in range(4)))
        held = [c.read_exact(self.N) for _ in range(3)]
        self.assertEqual(len(c._spares), djc_make._SPARES)
        del held
        self.assertEqual(bytes(c.read_exact(self.N)), b"\x03" * self.N)
        self.assertEqual(len(c._spares), djc_make._SPARES)


class KeysAhead(unittest.TestCase):
    """Version 2 without binary or types: keys sent ahead are made without
    a round trip while the makes are quick; after a slow make (_SLOW or
    more) the next key waits for djc's word, however recently it came."""

    PROG = """
    if i == 2:
        import time
        time.sleep(0.6)
    return {"v": i}
    """
    # quick and slow far apart, and keys fresh for a minute, so that a
    # loaded machine (a "quick" make of 5 ms, a key started 50 ms after it
    # came) cannot turn a quick make slow: the program would then ask for
    # djc's word where the test waits for rows, and both wait for good
    LIMITS = "djc_make._SLOW = 0.3\ndjc_make._FRESH = 60.0\n"

    def start(self):
        s = Served(Program(self.PROG, extra=self.LIMITS), hello=False)
        s.send({"_djc": "hello", "version": 2})
        self.assertEqual(s.read(), {"_djc": "hello", "version": 2, "ahead": djc_make.AHEAD})
        return s

    def keys(self, s, ids):
        s.raw(b"".join((json.dumps({"_djc": "key", "table": "T", "key": {"id": i}, "attempt": 1}) + "\n").encode()
                       for i in ids))

    def test_quick_makes_take_keys_ahead_without_asking(self):
        s = self.start()
        self.keys(s, [10, 11, 12])
        got = [s.read() for _ in range(6)]
        self.assertEqual(got, [{"v": 10}, {"_djc": "done"}, {"v": 11}, {"_djc": "done"}, {"v": 12}, {"_djc": "done"}])
        status, rest, _ = s.close()
        self.assertEqual((status, rest), (0, b""))

    def test_after_a_slow_make_the_next_key_waits_for_go(self):
        s = self.start()
        self.keys(s, [1, 2, 3])
        got = [s.read() for _ in range(5)]
        self.assertEqual(got, [{"v": 1}, {"_djc": "done"}, {"v": 2}, {"_djc": "done"}, {"_djc": "next"}])
        s.send({"_djc": "go"})
        self.assertEqual([s.read(), s.read()], [{"v": 3}, {"_djc": "done"}])
        status, rest, _ = s.close()
        self.assertEqual((status, rest), (0, b""))

    def test_skip_makes_nothing_of_the_key(self):
        s = self.start()
        self.keys(s, [1, 2, 3, 4])
        got = [s.read() for _ in range(5)]
        self.assertEqual(got[-1], {"_djc": "next"})
        s.send({"_djc": "skip"})   # key 3 was cancelled: key 4 comes after a skip, and is asked about
        self.assertEqual(s.read(), {"_djc": "next"})
        s.send({"_djc": "go"})
        self.assertEqual([s.read(), s.read()], [{"v": 4}, {"_djc": "done"}])
        status, rest, _ = s.close()
        self.assertEqual((status, rest), (0, b""))


class Parents(unittest.TestCase):
    """Version 2, "parents": before a key djc may send rows of its parents;
    a fetch of a parent by the key is answered from them (no request on
    the pipe), and the closing line names the parents the make was
    given."""

    HELLO = {"_djc": "hello", "version": 2, "binary": True, "types": True, "parents": True}

    def start(self, body, target="make"):
        s = Served(Program(body, target=target), hello=False)
        s.send(self.HELLO)
        s.hello = s.read()
        s.send({"_djc": "table", "table": "T", "types": {"id": "int32", "v": "int64"}, "parts": {}})
        return s

    def parents(self, s, i, rows=None, error=None):
        """Key i's parents: S with rows (a raw bytes value b each), or an
        error; then key i."""
        s.send({"_djc": "parents", "tables": ["S"]})
        if error:
            s.send({"_djc": "rows", "error": error, "code": -2})
        else:
            s.send({"_djc": "rows", "count": len(rows), "types": {"id": "int32", "b": "bytes"}})
            for r in rows:
                s.raw(json.dumps({"id": r["id"], "_bin": [["b", len(r["b"])]]}).encode() + b"\n" + r["b"])
        s.send({"_djc": "key", "table": "T", "key": {"id": i}, "attempt": 1})

    def test_parents_ride_with_the_keys(self):
        body = """
        r = fetch("S", key)
        return {"v": len(bytes(r[0]["b"])) + 1000 * len(r)}
        """
        s = self.start(body)
        self.assertEqual(s.hello, {"_djc": "hello", "version": 2, "ahead": djc_make.AHEAD, "binary": True,
                                   "types": True, "parents": True})
        # a key sent without its parents: fetched over the pipe
        s.send({"_djc": "key", "table": "T", "key": {"id": 1}, "attempt": 1})
        self.assertEqual(s.read(), {"_djc": "fetch", "table": "S", "key": {"id": 1}})
        s.send({"_djc": "rows", "count": 1, "types": {"id": "int32", "b": "bytes"}})
        s.raw(json.dumps({"id": 1, "_bin": [["b", 3]]}).encode() + b"\n" + b"abc")
        self.assertEqual([s.read(), s.read()], [{"v": 1003}, {"_djc": "done"}])
        # the next: from the rows sent with it, named in the closing line
        self.parents(s, 2, [{"id": 2, "b": b"\n" * 5}])
        self.assertEqual([s.read(), s.read()], [{"v": 1005}, {"_djc": "done", "parents": ["S"]}])
        # then one without again
        s.send({"_djc": "key", "table": "T", "key": {"id": 3}, "attempt": 1})
        self.assertEqual(s.read(), {"_djc": "fetch", "table": "S", "key": {"id": 3}})
        s.send({"_djc": "rows", "count": 1, "types": {"id": "int32", "b": "bytes"}})
        s.raw(json.dumps({"id": 3, "_bin": [["b", 2]]}).encode() + b"\n" + b"zz")
        self.assertEqual([s.read(), s.read()], [{"v": 1002}, {"_djc": "done"}])
        status, rest, _ = s.close()
        self.assertEqual((status, rest), (0, b""))

    def test_unused_parents_are_not_named(self):
        body = """
        if i == 3:
            return {"v": len(fetch("S", {"id": 9}))}   # another key: asked on the pipe
        return {"v": 0}
        """
        s = self.start(body)
        self.assertEqual(s.key({"id": 1}), ([{"v": 0}], {"_djc": "done"}))
        self.parents(s, 2, [{"id": 2, "b": b"x"}])
        self.assertEqual([s.read(), s.read()], [{"v": 0}, {"_djc": "done"}])
        self.parents(s, 3, [{"id": 3, "b": b"y"}])
        self.assertEqual(s.read(), {"_djc": "fetch", "table": "S", "key": {"id": 9}})
        s.send({"_djc": "rows", "count": 0})
        self.assertEqual([s.read(), s.read()], [{"v": 0}, {"_djc": "done"}])
        status, rest, _ = s.close()
        self.assertEqual((status, rest), (0, b""))

    def test_a_parent_whose_read_failed_is_asked_for(self):
        s = self.start("return {'v': len(fetch('S', key))}")
        self.parents(s, 2, error="connection lost")
        self.assertEqual(s.read(), {"_djc": "fetch", "table": "S", "key": {"id": 2}})
        s.send({"_djc": "rows", "count": 0})
        self.assertEqual([s.read(), s.read()], [{"v": 0}, {"_djc": "done"}])
        self.assertEqual(s.close()[0], 0)

    def test_rows_sent_are_given_once(self):
        # a make changing the rows it fetched, then fetching again, gets
        # fresh rows (asked for), as from two fetches over the pipe
        body = """
        a = fetch("S", key)
        a[0]["id"] += 1000
        b = fetch("S", key)
        return {"v": b[0]["id"]}
        """
        s = self.start(body)
        self.parents(s, 2, [{"id": 2, "b": b"x"}])
        self.assertEqual(s.read(), {"_djc": "fetch", "table": "S", "key": {"id": 2}})
        s.send({"_djc": "rows", "count": 1, "types": {"id": "int32", "b": "bytes"}})
        s.raw(json.dumps({"id": 2, "_bin": [["b", 1]]}).encode() + b"\n" + b"x")
        self.assertEqual([s.read(), s.read()], [{"v": 2}, {"_djc": "done", "parents": ["S"]}])
        self.assertEqual(s.close()[0], 0)

    def test_parents_false_does_not_ask(self):
        s = self.start("return {'v': 1}", target="make, parents=False")
        self.assertNotIn("parents", s.hello)
        self.assertEqual(s.key({"id": 1}), ([{"v": 1}], {"_djc": "done"}))
        self.assertEqual(s.key({"id": 2}), ([{"v": 1}], {"_djc": "done"}))   # no parents follow: none read
        self.assertEqual(s.close()[0], 0)


class DjcAhead(unittest.TestCase):
    """djc's hello says how many keys it may send ahead ("ahead"); with 0
    (jobs.reserve_batch 1) nothing can wait in the pipe before the
    program's answer, so the program does not look (a system call a key)."""

    def conn_after(self, hello):
        r, w = os.pipe()
        self.addCleanup(os.close, w)
        self.w = w
        rfile = os.fdopen(r, "rb")
        self.addCleanup(rfile.close)
        conn = djc_make._Conn(rfile, io.BytesIO())
        os.write(w, (json.dumps(hello) + "\n").encode())
        self.assertEqual(djc_make._hello(conn, djc_make.AHEAD), 2)
        # a key in the pipe, unread
        os.write(w, b'{"_djc":"key","table":"T","key":{"id":1},"attempt":1}\n')
        return conn

    def test_ahead_zero_looks_not_at_the_pipe(self):
        conn = self.conn_after({"_djc": "hello", "version": 2, "ahead": 0})
        self.assertFalse(conn.sends_ahead)
        self.assertFalse(conn.more_waiting())

    def test_keys_that_come_after_a_wait_are_fresh(self):
        # Keys djc writes after the program waited for them (djc's commit
        # and claim) were sent after its last look found the pipe empty:
        # stamped by that look, not by the read before the wait, so that
        # they start without asking (a "next" round trip a key). The
        # writer writes once a look found the pipe empty (an event, not a
        # time); the read before is made a minute old, and keys are fresh
        # for 30 s.
        conn = self.conn_after({"_djc": "hello", "version": 2, "ahead": 49})
        self.assertEqual(conn.receive()["_djc"], "key")   # the key in the pipe: the buffer is empty now
        looked_empty = threading.Event()
        real = djc_make.select

        class Select:
            @staticmethod
            def select(r, w, x, timeout):
                got = real.select(r, w, x, timeout)
                if not got[0]:
                    looked_empty.set()
                return got

        self.addCleanup(setattr, djc_make, "select", real)
        self.addCleanup(setattr, djc_make, "_FRESH", djc_make._FRESH)
        self.addCleanup(setattr, djc_make, "_LOOK_EVERY", djc_make._LOOK_EVERY)
        self.addCleanup(setattr, djc_make, "_LOOKS", djc_make._LOOKS)
        djc_make.select, djc_make._FRESH, djc_make._LOOK_EVERY, djc_make._LOOKS = Select, 30.0, 0.01, 1000
        conn._last -= 60.0
        w = self.w

        def djc():
            looked_empty.wait(20)   # (an old module never looks: then it writes after 20 s)
            os.write(w, b''.join(b'{"_djc":"key","table":"T","key":{"id":%d},"attempt":1}\n' % i for i in (2, 3)))

        t = threading.Thread(target=djc)
        t.start()
        self.addCleanup(t.join)
        self.assertEqual(conn.receive()["key"], {"id": 2})
        self.assertTrue(looked_empty.is_set())
        self.assertTrue(conn.more_waiting())
        self.assertTrue(conn.fresh(), "key 3 came after the look, not a minute ago")

    def test_a_djc_that_may_send_ahead_is_looked_for(self):
        for hello in ({"_djc": "hello", "version": 2, "ahead": 49}, {"_djc": "hello", "version": 2},
                      {"_djc": "hello", "version": 2, "ahead": False}):
            conn = self.conn_after(hello)
            self.assertTrue(conn.sends_ahead, hello)
            self.assertTrue(conn.more_waiting(), hello)


class Helpers(unittest.TestCase):
    def test_b64(self):
        self.assertEqual(djc_make.b64("AAEC/w=="), b"\x00\x01\x02\xff")
        self.assertEqual(djc_make.b64(memoryview(b"\x00\n")), b"\x00\n")

    def test_run_wants_a_function(self):
        with self.assertRaises(TypeError):
            djc_make.run(42)


class BlobCodec(unittest.TestCase):
    """djc_make's <blob> codec around a value that djc_blob.py does not
    decode itself (everything but numeric numpy arrays, and everything
    without numpy): framing by djc_blob, the rest by DataJoint's pack and
    unpack (given stand-ins here: DataJoint's format is what they frame,
    not what they test; tests/datajoint/blob_codec.py checks djc_blob's
    arrays against the real DataJoint)."""

    def setUp(self):
        self.calls = []

        def pack(v, compress=True):
            self.calls.append(compress)
            return v

        def unpack(b):
            self.calls.append(bytes(b))
            return "unpacked"

        patch = unittest.mock.patch.object(djc_make, "_dj_cache", [(pack, unpack)])
        patch.start()
        self.addCleanup(patch.stop)
        self.pack = lambda v: djc_make._pack_value(djc_blob, v)
        self.unpack = lambda v: djc_make._unpack_value(djc_blob, v)

    def test_compressible_blob_framed_as_datajoint_does_at_level_1(self):
        raw = b"mYm\0" + bytes(100000)
        out = self.pack(raw)
        self.assertEqual(self.calls, [False])   # DataJoint's pack never compresses
        self.assertEqual(out[:6], b"ZL123\0")
        self.assertEqual(int.from_bytes(out[6:14], "little"), len(raw))
        self.assertEqual(zlib.decompress(out[14:]), raw)
        self.assertEqual(out[14:], zlib.compress(raw, 1))

    def test_small_or_incompressible_blob_stays_raw(self):
        self.assertEqual(self.pack(b"mYm\0" + bytes(900)), b"mYm\0" + bytes(900))
        noise = b"mYm\0" + os.urandom(50000)
        self.assertEqual(self.pack(noise), noise)

    def test_level_from_environment(self):
        raw = b"mYm\0" + bytes(100000)
        with unittest.mock.patch.dict(os.environ, {"DJC_BLOB_ZLIB": "0"}):
            self.assertEqual(self.pack(raw), raw)
        with unittest.mock.patch.dict(os.environ, {"DJC_BLOB_ZLIB": "6"}):
            self.assertEqual(self.pack(raw)[14:], zlib.compress(raw, 6))

    def test_compressed_blob_inflated_before_unpack(self):
        raw = b"mYm\0" + bytes(range(256)) * 400
        z = b"ZL123\0" + len(raw).to_bytes(8, "little") + zlib.compress(raw)
        self.assertEqual(self.unpack(memoryview(z)), "unpacked")
        self.assertEqual(self.calls, [raw])

    def test_other_blobs_go_to_unpack_as_they_are(self):
        raw = b"mYm\0" + bytes(50)
        self.unpack(raw)
        self.assertEqual(self.calls, [raw])

    def test_compressed_blob_of_a_wrong_size_is_an_error(self):
        bad = b"ZL123\0" + (5).to_bytes(8, "little") + zlib.compress(b"longer than 5")
        with self.assertRaisesRegex(ValueError, "states 5 bytes and inflates to 13"):
            self.unpack(bad)
        self.assertEqual(self.calls, [])

    def test_datajoint_unpack_gets_bytes_not_the_read_buffer(self):
        # a value comes in a bytearray djc_make reads it into; DataJoint's
        # unpack takes bytes and UUIDs inside a blob from its input as it
        # is, and uuid.UUID(bytes=bytearray(...)) raises AssertionError
        seen = []
        with unittest.mock.patch.object(djc_make, "_dj_cache", [(None, lambda b: seen.append(type(b)) or "u")]):
            raw = b"mYm\0" + bytes(50)
            for v in (bytearray(raw), memoryview(bytearray(raw)), raw):
                self.assertEqual(self.unpack(v), "u")
            if djc_blob.np is not None:   # without numpy _decode_row leaves every <blob> value as it came
                info = {"types": {"b": "<blob>"}}
                row = djc_make._decode_row({"b": memoryview(bytearray(raw))}, info["types"])
                self.assertEqual(row["b"], "u")
        self.assertEqual(seen, [bytes] * (4 if djc_blob.np is not None else 3))

    @unittest.skipUnless(djc_blob.np is not None, "numpy")
    def test_masked_array_packs_its_fill_value(self):
        # as DataJoint's pack (tobytes) writes it: never the data the mask
        # hides (tests/datajoint/blob_codec.py compares the bytes with it)
        import numpy as np

        for m, want in [(np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0]), [1.0, 1e20, 3.0]),
                        (np.ma.masked_array([[1, 2], [3, 4]], mask=[[0, 0], [1, 0]], fill_value=-1), [[1, 2], [-1, 4]]),
                        (np.ma.masked_array([1 + 1j, 2 + 2j], mask=[1, 0]), [1e20 + 1e20j, 2 + 2j])]:
            for level in (0, 6):
                got = djc_blob.unpack(djc_blob.inflate(djc_blob.pack(m, level)))
                self.assertEqual(got.tolist(), want)
        self.assertEqual(djc_make._pack_value(djc_blob, np.ma.masked_array([5.0], mask=[1]))[-8:],
                         np.float64(1e20).tobytes())

    @unittest.skipUnless(djc_blob.np is not None, "numpy (without it nothing is packed: no DataJoint either)")
    def test_bytes_for_a_blob_without_its_header_are_packed_as_datajoint_does(self):
        # a make giving back a <blob> it fetched that holds bytes:
        # DataJoint's insert packs the bytes object; packed values (their
        # header) go as they are
        info = {"types": {"b": "<blob>", "r": "bytes"}}
        with unittest.mock.patch.object(djc_make, "_dj_cache", [(lambda v, compress=True: b"mYm\0packed:" + bytes(v), None)]):
            for v in (b"\x00\x01raw", bytearray(b"\x00\x01raw"), memoryview(b"\x00\x01raw")):
                out = djc_make._pack_blobs({"b": v, "r": b"\x00\x01raw"}, info)
                self.assertEqual(out["b"], b"mYm\0packed:\x00\x01raw")
                self.assertEqual(out["r"], b"\x00\x01raw")   # not a <blob>: as it is
            for packed in (b"mYm\0A", b"dj0\0A", b"ZL123\0" + bytes(8)):
                self.assertIs(djc_make._pack_blobs({"b": packed}, info)["b"], packed)
        # without DataJoint to pack them they go as they are (djc refuses them, naming the header)
        with unittest.mock.patch.object(djc_make, "_dj_cache", [None]):
            self.assertEqual(djc_make._pack_blobs({"b": b"\x00\x01raw"}, info)["b"], b"\x00\x01raw")

    def test_without_datajoint_a_value_it_would_decode_stays_as_it_came(self):
        with unittest.mock.patch.object(djc_make, "_dj_cache", [None]):
            self.assertIsNone(self.unpack(b"mYm\0" + bytes(50)))
            self.assertIsNone(self.pack([1, 2]))


class KeepHeap(unittest.TestCase):
    """A serve program keeps freed heap for the next key (mallopt through
    ctypes, as the djc command does), unless the user set glibc's malloc
    themselves."""

    def calls(self, env):
        import ctypes
        from unittest import mock
        got = []
        fake = mock.Mock()
        fake.mallopt = lambda k, v: got.append((k, v)) or 1
        with mock.patch.dict(os.environ, env, clear=False), mock.patch.object(ctypes, "CDLL", return_value=fake):
            for k in ("GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_"):
                if k not in env:
                    os.environ.pop(k, None)
            djc_make._keep_heap()
        return got

    def test_sets_the_two_thresholds(self):
        self.assertEqual(self.calls({}), [(-3, 64 << 20), (-1, 256 << 20)])

    def test_a_users_setting_wins(self):
        self.assertEqual(self.calls({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1"}), [])
        self.assertEqual(self.calls({"MALLOC_TRIM_THRESHOLD_": "1"}), [])
        self.assertEqual(self.calls({"MALLOC_MMAP_THRESHOLD_": "1"}), [])
        self.assertEqual(self.calls({"GLIBC_TUNABLES": "glibc.rtld.nns=2"}), [(-3, 64 << 20), (-1, 256 << 20)])


class Interrupts(unittest.TestCase):
    """SystemExit and KeyboardInterrupt in a make: the key's error with its
    traceback, as DataJoint's populate records them; then the program ends."""

    BODY = """
    if i == 2: sys.exit(3)
    if i == 3: raise KeyboardInterrupt
    return {"v": i}
    """

    def test_serve_records_the_key_then_exits(self):
        for i, message in ((2, "SystemExit: 3"), (3, "KeyboardInterrupt")):
            s = Served(Program(self.BODY))
            self.assertEqual(s.key({"id": 1}), ([{"v": 1}], {"_djc": "done"}))
            rows, end = s.key({"id": i})
            self.assertEqual((rows, end["_djc"], end["message"]), ([], "error", message))
            self.assertIn("Traceback", end["stack"])
            self.assertIn("mk.py", end["stack"])
            self.assertEqual(s.p.wait(timeout=60), 0)   # ended without waiting for djc: status 0 after its closing line
            self.assertEqual(s.close()[:2], (0, b""))

    def test_per_key_records_the_key(self):
        status, rows, err = per_key(Program(self.BODY), {"id": 2})
        self.assertEqual((status, rows, err.strip().splitlines()[-1]), (1, [], "SystemExit: 3"))
        self.assertIn("Traceback", err)


class _Attr:
    """A DataJoint heading attribute, as djc_datajoint reads it."""

    def __init__(self, type, original_type=None, numeric=False, nullable=True, default="null", in_key=False,
                 uuid=False, json=False, codec=None):
        self.type, self.original_type, self.numeric, self.nullable = type, original_type or type, numeric, nullable
        self.default, self.in_key, self.uuid, self.json, self.codec = default, in_key, uuid, json, codec


class _Table:
    """A DataJoint table, as djc_datajoint's conversion reads it."""

    full_table_name = "`s`.`t`"

    def __init__(self, backend, attrs, how="truncate"):
        import djc_datajoint
        self.heading = unittest.mock.Mock(attributes=attrs)
        self.adapter = unittest.mock.Mock(backend=backend)
        self.connection = object()
        djc_datajoint._servers[id(self.connection)] = (backend, how)


class DataJointValues(unittest.TestCase):
    """djc_datajoint converts a make's values as DataJoint's insert would
    send them and the server store them (no DataJoint needed)."""

    MY = {"f": _Attr("double", "float64", numeric=True), "fd": _Attr("double", "float64", numeric=True, nullable=False, default="2.5"),
          "fnn": _Attr("double", "float64", numeric=True, nullable=False, default=None),
          "i": _Attr("int", "int32", numeric=True), "b": _Attr("tinyint", "bool", numeric=True),
          "d": _Attr("decimal(6,2)", numeric=True), "dt": _Attr("datetime"), "dt3": _Attr("datetime(3)"),
          "dd": _Attr("date"), "s": _Attr("varchar(20)"), "e": _Attr("enum('a','b')"), "u": _Attr("binary(16)", "uuid", uuid=True),
          "k": _Attr("int", "int32", numeric=True, nullable=False, default=None, in_key=True)}
    PG = {"f": _Attr("double precision", "float64"), "i": _Attr("integer", "int32", numeric=True), "b": _Attr("boolean", "bool"),
          "dt": _Attr("timestamp without time zone", "datetime"), "dt3": _Attr("timestamp without time zone", "datetime(3)"),
          "s": _Attr("varchar(20)"), "g": _Attr("real", "float32", numeric=True)}

    def row(self, attrs, backend, how="truncate", **r):
        import djc_datajoint
        return djc_datajoint._coerce_row(_Table(backend, attrs, how), r)

    def refused(self, attrs, backend, **r):
        import djc_datajoint
        with self.assertRaises(djc_datajoint.NotSupported) as c:
            self.row(attrs, backend, **r)
        (a,) = r
        self.assertIn("attribute '%s'" % a, str(c.exception))
        self.assertNotIn("\n", str(c.exception))
        return str(c.exception)

    @unittest.skipUnless(djc_blob.np is not None, "numpy (DataJoint, and so djc_datajoint, needs it)")
    def test_mysql(self):
        import numpy as np
        D, DT = decimal.Decimal, datetime.datetime
        for a, v, want in [
                ("f", np.nan, None), ("f", float("nan"), None), ("f", "", None), ("f", D("2.5"), 2.5), ("f", np.float32(0.1), 0.1),
                ("f", "3.25", 3.25), ("i", "7", 7), ("i", True, 1), ("i", 2.5, 3), ("i", np.float64(-4.5), -5), ("i", " 12 ", 12),
                ("i", np.nan, None), ("b", "1", True), ("b", "0", False), ("b", np.bool_(True), True), ("b", 2, 2),
                ("d", 1.005, "1.01"), ("d", "1.005", "1.01"), ("d", D("1.0049"), "1.00"), ("d", -1.005, "-1.01"), ("d", 7, "7.00"),
                ("d", np.float32(0.1), "0.10"),
                ("dt", DT(2024, 1, 1, 10, 0, 0, 999999), "2024-01-01 10:00:00"), ("dt", datetime.date(2024, 1, 1), "2024-01-01 00:00:00"),
                ("dt", "2024-01-01 10:00:00.7", "2024-01-01 10:00:00"), ("dt3", DT(2024, 1, 1, 10, 0, 0, 123456), "2024-01-01 10:00:00.123"),
                ("dt", np.datetime64("2024-01-01T10:00:00"), "2024-01-01 10:00:00"),
                ("dd", DT(2024, 1, 4, 13, 5), datetime.date(2024, 1, 4)), ("dd", "2024-01-04 13:05:00", datetime.date(2024, 1, 4)),
                ("s", 5, "5"), ("s", 2.5, "2.5"), ("s", True, "1"), ("s", D("1.50"), "1.50"), ("s", np.int64(4), "4"),
                ("e", 1, 1), ("u", "0000000000000000000000000000000A", uuid.UUID(int=10))]:
            with self.subTest(a=a, v=v):
                got = self.row(self.MY, "mysql", **{a: v})[a]
                self.assertEqual((type(got), got), (type(want), want))
        # the column's default (DataJoint's DEFAULT): left out for djc to fill in
        self.assertEqual(self.row(self.MY, "mysql", fd=np.nan, f=1.0), {"f": 1.0})
        self.assertEqual(self.row(self.MY, "mysql", fd=None), {})
        self.assertEqual(self.row(self.MY, "mysql", fnn=np.nan), {"fnn": None})   # no default: djc refuses the NULL
        self.assertEqual(self.row(self.MY, "mysql", k=None), {"k": None})
        self.assertEqual(self.row(self.MY, "mysql", how="round", dt=DT(2024, 1, 1, 10, 0, 0, 500000))["dt"], "2024-01-01 10:00:01")
        self.assertIn("(float64)", self.refused(self.MY, "mysql", f=np.inf))
        self.refused(self.MY, "mysql", i="abc")
        self.refused(self.MY, "mysql", b="true")
        self.refused(self.MY, "mysql", d="abc")
        self.refused(self.MY, "mysql", u="bad")

    @unittest.skipUnless(djc_blob.np is not None, "numpy (DataJoint, and so djc_datajoint, needs it)")
    def test_postgresql(self):
        import numpy as np
        DT = datetime.datetime
        for a, v, want in [
                ("f", np.float32(0.1), float(np.float32(0.1))), ("f", "3.25", 3.25), ("f", "", ""), ("i", "7", 7), ("i", True, 1),
                ("b", "1", True), ("b", " TRUE ", True), ("b", "off", False), ("s", True, "true"),
                ("dt", DT(2024, 1, 1, 10, 0, 0, 500000), "2024-01-01 10:00:00.5"),
                ("dt3", DT(2024, 1, 1, 10, 0, 0, 999900), "2024-01-01 10:00:01"),
                ("dt3", DT(1990, 1, 1, 10, 0, 0, 122500), "1990-01-01 10:00:00.122"),
                ("dt3", DT(2024, 1, 1, 10, 0, 0, 122500), "2024-01-01 10:00:00.123")]:
            with self.subTest(a=a, v=v):
                got = self.row(self.PG, "postgresql", how="round", **{a: v})[a]
                self.assertEqual((type(got), got), (type(want), want))
        # NaN and infinities: DataJoint sends them to double precision as they
        # are (not numeric to its heading), to real as text (numeric: NaN is
        # the default); PostgreSQL keeps them, and so does djc (as float8/float4)
        for v in (np.nan, float("inf"), -np.inf):
            got = self.row(self.PG, "postgresql", f=v)["f"]
            self.assertEqual(type(got), float)
            self.assertTrue(got != got if v != v else got == v)
        self.assertEqual(self.row(self.PG, "postgresql", g=np.inf), {"g": float("inf")})
        self.assertEqual(self.row(self.PG, "postgresql", g=np.nan), {"g": None})
        self.assertIn("(float64)", self.refused(self.MY, "mysql", f=-np.inf))
        self.assertIn("PostgreSQL refuses", self.refused(self.PG, "postgresql", i=3.0))
        self.refused(self.PG, "postgresql", i="2.5")

    def test_bytes_in_a_blob_packed_by_datajoint_codec(self):
        import djc_datajoint
        codec = unittest.mock.Mock()
        codec.name = "blob"
        codec.encode.return_value = b"dj0\0packed"
        attrs = {"bl": _Attr("<blob>", codec=codec), "ar": _Attr("<blob>", codec=codec)}
        r = self.row(attrs, "mysql", bl=b"\x00\x01raw", ar=[1, 2])
        self.assertEqual(r, {"bl": b"dj0\0packed", "ar": [1, 2]})   # others: djc_make packs them
        codec.encode.assert_called_once_with(b"\x00\x01raw", key=None)
        self.assertEqual(self.row(attrs, "mysql", bl=None), {"bl": None})
        self.assertTrue(djc_datajoint)


class DataJointKeys(unittest.TestCase):
    """python/djc_datajoint.py gives a DataJoint make its key as DataJoint's
    populate does (its fetch("KEY")): a bool attribute on MySQL/MariaDB (a
    tinyint there) as the int 0 or 1, on PostgreSQL (boolean) as a bool;
    dates, decimals and uuids typed. The heading is a stand-in (no DataJoint)."""

    def _key(self, types, key, backend="mysql"):
        import djc_datajoint
        attrs = {n: unittest.mock.Mock(type=t, original_type=None, uuid=(t == "binary(16)")) for n, t in types.items()}
        target = unittest.mock.Mock()
        target.heading.attributes = attrs
        target.adapter.backend = backend
        return djc_datajoint._key_of(target, key)

    def test_char_on_postgresql_is_padded(self):
        # PostgreSQL's char(4) holds 'ab  ', and DataJoint's key there is 'ab  '
        # (a make naming a file by it); MySQL strips the spaces
        self.assertEqual(self._key({"code": "char(4)"}, {"code": "ab"}, "postgresql"), {"code": "ab  "})
        self.assertEqual(self._key({"code": "char(4)"}, {"code": "abcd"}, "postgresql"), {"code": "abcd"})
        self.assertEqual(self._key({"code": "char(4)"}, {"code": "ab"}, "mysql"), {"code": "ab"})

    def test_bool_on_mysql_is_int(self):
        k = self._key({"flag": "tinyint", "n": "int"}, {"flag": True, "n": 3})
        self.assertEqual((k["flag"], type(k["flag"])), (1, int))
        k = self._key({"flag": "tinyint"}, {"flag": False})
        self.assertEqual((k["flag"], type(k["flag"])), (0, int))

    def test_bool_on_postgresql_is_bool(self):
        k = self._key({"flag": "boolean"}, {"flag": True}, "postgresql")
        self.assertIs(k["flag"], True)

    def test_typed_values(self):
        k = self._key({"d": "date", "x": "decimal(6,3)", "u": "binary(16)", "s": "varchar(8)"},
                      {"d": "2024-02-29", "x": "1.500", "u": "00000000-0000-0000-0000-000000000001", "s": "a"})
        self.assertEqual(k, {"d": datetime.date(2024, 2, 29), "x": decimal.Decimal("1.500"),
                             "u": uuid.UUID(int=1), "s": "a"})


class QuickKeys(unittest.TestCase):
    """The usual key of a serve program (a key line djc wrote, a make
    that returns an empty row quickly, more keys waiting) runs no Python
    function of the module beside the make: serve's loop reads it and
    answers it itself (issue 40: the Python calls a key were most of a
    no-op make's cost in the program). Lines it does not read so go the
    general way, answered as before."""

    def test_the_usual_key_calls_no_function_of_the_module(self):
        # keys never stale, makes never slow here (a loaded machine): the
        # answers are held 32 keys at a time, as when djc sends keys ahead
        for name in ("_FRESH", "_SLOW", "_HOLD_SECS"):
            self.addCleanup(setattr, djc_make, name, getattr(djc_make, name))
            setattr(djc_make, name, 60.0)
        n = 1000
        lines = [b'{"_djc":"hello","version":2,"binary":true,"types":true,"parents":true,"ahead":49}\n',
                 b'{"_djc":"table","table":"T","types":{"id":"int64"},"parts":{}}\n']
        lines += [b'{"_djc":"key","table":"T","key":{"id":%d},"attempt":1}\n' % i for i in range(n)]
        # the general way: white space after the line's object, members in
        # another order, a key djc sends with its parents' rows
        lines += [b'{"_djc":"key","table":"T","key":{"id":-1},"attempt":1} \n',
                  b'{"table":"T","_djc":"key","key":{"id":-2},"attempt":2}\n',
                  b'{"_djc":"parents","tables":["P"]}\n', b'{"_djc":"rows","count":1}\n', b'{"id":-3,"x":1}\n',
                  b'{"_djc":"key","table":"T","key":{"id":-3},"attempt":1}\n']
        made, calls = [], [0]

        def make(key, fetch):
            made.append((key["id"], fetch.attempt))
            if key["id"] == -3:
                return {"x": fetch("P", key)[0]["x"]}
            return {}

        def count(frame, event, arg):
            if event == "call" and frame.f_globals is vars(djc_make) and frame.f_code.co_name != "serve":
                calls[0] += 1

        out = io.BytesIO()
        sys.setprofile(count)
        try:
            djc_make.serve(make, io.BytesIO(b"".join(lines[:2 + n])), out)
        finally:
            sys.setprofile(None)
        hello = b'{"_djc":"hello","version":2,"ahead":64,"binary":true,"types":true,"parents":true}\n'
        self.assertEqual(out.getvalue(), hello + b'{}\n{"_djc":"done"}\n' * n)
        self.assertEqual(made, [(i, 1) for i in range(n)])
        self.assertLess(calls[0], n / 2, "functions of djc_make called for %d keys" % n)

        out, made[:] = io.BytesIO(), []
        djc_make.serve(make, io.BytesIO(b"".join(lines[:2] + lines[-6:])), out)
        self.assertEqual(made, [(-1, 1), (-2, 2), (-3, 1)])
        self.assertEqual(out.getvalue(), hello + b'{}\n{"_djc":"done"}\n' * 2
                         + b'{"x":1}\n{"_djc":"done","parents":["P"]}\n')


if __name__ == "__main__":
    unittest.main()
