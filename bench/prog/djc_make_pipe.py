"""djc_make's own CPU a key (issue 40) through real pipes: a stand-in for
djc's side of the serve protocol drives bench/prog/noop_make.py (one
program, no database) as djc does at jobs.reserve_batch B: its hello
with "ahead": B - 1 and the first key in one write, the table message
after the program's hello, then the keys of each "claim" of B in one write
(at batch 1: one key, its answer, the next), a go for every next. The
program's CPU (user + system, from wait4) less that of a program given
one key, divided by the keys: the loop's cost a key, pipe reads and writes
and wake-ups included. Several module directories side by side (old and
new), alternating, best of R rounds:

    /usr/bin/python3 bench/prog/djc_make_pipe.py [-n KEYS] [-b BATCH ...] [-r ROUNDS] DIR...

DIR: a directory holding djc_make.py (a checkout's python/), or a program
to run instead (the floor: bench/prog/noop_serve.c compiled, one read and
one write a key; keys go ahead only to a program whose hello takes them,
as djc sends them). The stand-in
waits CLAIM_MS (environment, default 0) between claims, as djc commits and
claims; PYTHON (default /usr/bin/python3) runs the program."""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PY = os.environ.get("PYTHON", "/usr/bin/python3")
CLAIM = float(os.environ.get("CLAIM_MS", "0")) / 1e3


def drive(moddir, n, batch):
    """Run the program over n keys at batch; (its CPU seconds, its wall
    seconds, system lines it wrote)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJC_")}
    env.update(DJC_SERVE="1", PYTHONPATH=moddir)
    env.pop("NOOP_LOG", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)   # each DIR's module compiled once, as py-hop.sh runs it
    cmd = [moddir] if os.path.isfile(moddir) else [PY, os.path.join(HERE, "noop_make.py")]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, bufsize=0)
    w, r = p.stdin.fileno(), p.stdout.fileno()
    key = b'{"_djc":"key","table":"Noop","key":{"id":%d},"attempt":1}\n'
    os.write(w, b'{"_djc":"hello","version":2,"binary":true,"types":true,"parents":true,"ahead":%d}\n'
             % (batch - 1) + key % 0)
    buf = b""
    sent, done, nexts = 1, 0, 0
    first = True
    t0 = time.perf_counter()
    in_claim = 1     # keys of the claim not answered yet
    unsent = 0       # keys of the claim not sent yet
    limit = 1        # keys in flight at most: 1 + the keys ahead the program takes (its hello)
    while done < n:
        chunk = os.read(r, 65536)
        if not chunk:
            raise SystemExit("the program ended after %d keys" % done)
        buf += chunk
        lines = buf.split(b"\n")
        buf = lines.pop()
        out = []
        for line in lines:
            if first:
                hello = json.loads(line)
                assert hello["_djc"] == "hello", line
                if hello["version"] >= 2:
                    limit = 1 + min(hello.get("ahead", 0), batch - 1)
                first = False
                if hello.get("types") is True:
                    out.append(b'{"_djc":"table","table":"Noop","types":{"id":"int64","v":"int32"},"parts":{}}\n')
            elif line == b'{"_djc":"done"}':
                done += 1
                in_claim -= 1
            elif line == b'{"_djc":"next"}':
                nexts += 1
                out.append(b'{"_djc":"go"}\n')
            elif line != b"{}":
                raise SystemExit("unexpected line %r" % line)
        if out:
            os.write(w, b"".join(out))
        if in_claim == 0 and sent < n:
            if CLAIM:
                time.sleep(CLAIM)
            in_claim = unsent = min(batch, n - sent)
        k = min(unsent, limit - (sent - done))
        if k > 0:
            os.write(w, b"".join(key % (sent + i) for i in range(k)))
            sent += k
            unsent -= k
    wall = time.perf_counter() - t0
    p.stdin.close()
    _, status, ru = os.wait4(p.pid, 0)
    p.stdout.close()
    if status != 0:
        raise SystemExit("the program exited with status %d" % status)
    return ru.ru_utime + ru.ru_stime, wall, nexts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=100000)
    ap.add_argument("-b", type=int, action="append")
    ap.add_argument("-r", type=int, default=3)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    dirs = [os.path.abspath(d) for d in a.dirs]
    best = {}
    for _ in range(a.r):
        for b in a.b or [1, 50]:
            for d in dirs:
                base = drive(d, 1, b)[0]
                cpu, wall, nexts = drive(d, a.n, b)
                us = (cpu - base) / a.n * 1e6
                k = (b, d)
                if k not in best or us < best[k][0]:
                    best[k] = (us, wall, nexts)
    for b in a.b or [1, 50]:
        for d in dirs:
            us, wall, nexts = best[(b, d)]
            print("batch %d %s: %.2f us CPU a key (%d keys, %.0f keys/s, %.3f next a key; best of %d)"
                  % (b, d, us, a.n, a.n / wall, nexts / a.n, a.r))


if __name__ == "__main__":
    main()
