"""datajoint_populate.py - DataJoint's own populate protocol, for `make bench`.

Runs DataJoint for Python itself (not an emulation) from a source checkout
of datajoint-python that the user provides (BENCH_DATAJOINT, see
bench/README.md; nothing of it is part of djc), on the same pipeline as
bench/noop.c: Src (manual, id) and Noop (computed, -> Src, v = 0), whose
make inserts one row holding the key.

    python3 bench/datajoint_populate.py DJ_SRC setup URL SCHEMA N
    python3 bench/datajoint_populate.py DJ_SRC run URL SCHEMA WORKERS

`setup` declares the tables, inserts Src ids 0..N-1, and empties Noop and
its jobs table. `run` refreshes the jobs table (timed on its own), starts
WORKERS processes that each import DataJoint, connect and declare the
tables, and then, all at once, each calls
Noop.populate(reserve_jobs=True, refresh=False, suppress_errors=True):
DataJoint's distributed mode, as many independent workers on a cluster run
it. The clock runs from that start to the last worker's exit. Each make
logs its key; the run proves every key was made exactly once, that Noop
holds N rows and that no job is left. Prints one JSON object.

URL: postgresql://user@host:port/db or mysql://user:pw@host:port/db.
The Python database drivers come from Debian (python3-psycopg2,
python3-pymysql; /usr/lib/python3/dist-packages is added to the path).
"""

import json
import os
import subprocess
import sys
import time
import urllib.parse


def load(dj_src, url):
    sys.path.insert(0, dj_src)
    sys.path.append("/usr/lib/python3/dist-packages")
    import logging
    import warnings

    warnings.filterwarnings("ignore")   # "no datajoint.json found", native type bigint
    import datajoint as dj

    logging.getLogger("datajoint").setLevel(logging.ERROR)
    u = urllib.parse.urlparse(url)
    pg = u.scheme.startswith("postgres")
    dj.config["database.backend"] = "postgresql" if pg else "mysql"
    dj.config["database.host"] = u.hostname
    dj.config["database.port"] = u.port
    dj.config["database.user"] = urllib.parse.unquote(u.username or "")
    dj.config["database.password"] = urllib.parse.unquote(u.password or "")
    dj.config["database.use_tls"] = False
    if pg:
        dj.config["database.name"] = u.path.lstrip("/")
    return dj


def declare(dj, schema_name, made):
    schema = dj.Schema(schema_name)

    @schema
    class Src(dj.Manual):
        definition = """
        id : int64
        """

    @schema
    class Noop(dj.Computed):
        definition = """
        -> Src
        ---
        v = 0 : int32
        """

        def make(self, key):
            made.append(int(key["id"]))
            self.insert1(dict(key))

    return Src, Noop


def cmd_setup(dj_src, url, schema, n):
    dj = load(dj_src, url)
    Src, Noop = declare(dj, schema, [])
    have = len(Src())
    if have < n:
        Src.insert(({"id": i} for i in range(have, n)), skip_duplicates=True)
    Noop.delete_quick()
    Noop.jobs.delete()
    print(json.dumps({"upstream": len(Src()), "made": len(Noop())}))


def cmd_worker(dj_src, url, schema):
    dj = load(dj_src, url)
    made = []
    _, Noop = declare(dj, schema, made)
    Noop.connection.ping()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    sys.stdin.readline()   # go
    r = Noop.populate(reserve_jobs=True, refresh=False, suppress_errors=True)
    sys.stdout.write(json.dumps({"made": made, "success": r["success_count"], "errors": len(r["error_list"])}) + "\n")
    sys.stdout.flush()


def cmd_run(dj_src, url, schema, workers):
    dj = load(dj_src, url)
    Src, Noop = declare(dj, schema, [])
    n = len(Src())
    t0 = time.monotonic()
    added = Noop.jobs.refresh()["added"]
    refresh_s = time.monotonic() - t0
    kids = [
        subprocess.Popen([sys.executable, __file__, dj_src, "worker", url, schema],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(workers)
    ]
    for k in kids:
        if k.stdout.readline().strip() != "ready":
            raise SystemExit("datajoint_populate: a worker did not start")
    t0 = time.monotonic()
    for k in kids:
        k.stdin.write("go\n")
        k.stdin.flush()
    outs = [json.loads(k.stdout.readline()) for k in kids]
    for k in kids:
        k.wait()
    secs = time.monotonic() - t0
    rows = len(Noop())
    prog = Noop.jobs.progress()
    seen = {}
    for o in outs:
        for i in o["made"]:
            seen[i] = seen.get(i, 0) + 1
    once = sum(1 for i, c in seen.items() if c == 1 and 0 <= i < n)
    print(json.dumps({
        "system": "datajoint", "workers": workers, "keys": n, "added": added, "refresh_s": round(refresh_s, 3),
        "secs": round(secs, 4), "keys_per_s": round(rows / secs, 1), "us_per_key": round(secs * 1e6 / max(rows, 1), 1),
        "rows": rows, "make_calls": sum(len(o["made"]) for o in outs), "keys_once": once,
        "keys_more": sum(1 for c in seen.values() if c > 1), "success": sum(o["success"] for o in outs),
        "errors": sum(o["errors"] for o in outs), "jobs_left": prog["total"],
        "version": getattr(dj, "__version__", "?"),
    }))


def main(a):
    if len(a) == 5 and a[1] == "setup":
        cmd_setup(a[0], a[2], a[3], int(a[4]))
    elif len(a) == 4 and a[1] == "worker":
        cmd_worker(a[0], a[2], a[3])
    elif len(a) == 5 and a[1] == "run":
        cmd_run(a[0], a[2], a[3], int(a[4]))
    else:
        sys.stderr.write("usage: datajoint_populate.py DJ_SRC setup URL SCHEMA N | run URL SCHEMA WORKERS\n")
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
