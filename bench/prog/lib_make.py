#!/usr/bin/env python3
"""bench/py-serve.sh's in-process Python makes (python/djc_lib.py): the
no-op make of bench/prog/noop_make.py, or with `fetch` the one of
bench/prog/fetch_make.py (reads its key's Src row first), called by libdjc
in this interpreter and its forks, no program or pipe between.

    lib_make.py URL SCHEMA PROCS [fetch]

populates Noop with reserved jobs (added beforehand: no refresh), timed
around djc_lib.populate (its connection's opening included), and prints
one JSON object as bench/serve_run.c's run does."""
import json
import resource
import sys
import time

import djc_lib


def noop(key, fetch):
    return {}


def fetch_noop(key, fetch):
    if len(fetch("Src", key)) != 1:
        raise LookupError("no Src row for %r" % (key,))
    return {}


def main():
    url, schema, procs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    fetching = sys.argv[4:] == ["fetch"]
    t = time.perf_counter()
    r = djc_lib.populate("Noop", fetch_noop if fetching else noop, url=url, schema=schema, reserve_jobs=True,
                         processes=procs, refresh=False, suppress_errors=True)
    secs = time.perf_counter() - t
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    me = resource.getrusage(resource.RUSAGE_SELF)
    cpu = kids.ru_utime + kids.ru_stime + (me.ru_utime + me.ru_stime if procs <= 1 else 0)
    n = r["success_count"]
    print(json.dumps({"mode": "reserve", "procs": procs, "kind": "python-lib-fetch" if fetching else "python-lib",
                      "keys": n, "secs": round(secs, 4), "keys_per_s": round(n / secs, 1) if secs else 0,
                      "us_per_key": round(secs * 1e6 / n, 1) if n else 0, "errors": r["error_count"],
                      "lost": r["lost_count"], "worker_cpu_us_per_key": round(cpu * 1e6 / n, 1) if n else 0}))
    if r["error_list"]:
        print("lib_make.py: first error: %r" % (r["error_list"][0],), file=sys.stderr)


if __name__ == "__main__":
    main()
