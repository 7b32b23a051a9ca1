"""perkey_make.py - the per-key Python make of bench/py-perkey.sh (issue
40): fetches its key's upstream row and returns y = 2 x.

PERKEY_FETCH=socket: fetch through djc's fetch socket (DJC_FETCH_SOCKET);
cli: through a `djc fetch` process (the socket forgotten, as an older djc
or a program out of its reach would: it reads the database); cli-socket: a
`djc fetch --format json` process as a shell make runs it, which asks the
socket; none: no fetch (the interpreter's start and djc's own cost a key,
the floor of the others)."""
import os

HOW = os.environ.get("PERKEY_FETCH", "socket")
if HOW == "cli":
    os.environ.pop("DJC_FETCH_SOCKET", None)

import djc_make  # noqa: E402


def make(key, fetch):
    if HOW == "none":
        return {"y": 2 * key["id"]}
    if HOW == "cli-socket":
        import json
        import subprocess

        out = subprocess.run([os.environ["DJC"], "fetch", "Src", "--key", json.dumps(key), "--format", "json"],
                             stdout=subprocess.PIPE, check=True).stdout
        return {"y": 2 * json.loads(out.splitlines()[0])["x"]}
    return {"y": 2 * fetch("Src", key)[0]["x"]}


djc_make.run(make)
