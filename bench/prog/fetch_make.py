#!/usr/bin/env python3
"""The no-op make of bench/py-serve.sh that reads its key's Src row first
(as most makes read their upstream; djc checks the read at the commit),
with python/djc_make.py: one row {} per key. Its C counterpart is
bench/serve_run.c's c-fetch callback."""
import djc_make


def make(key, fetch):
    if len(fetch("Src", key)) != 1:
        raise LookupError("no Src row for %r" % (key,))
    return {}


if __name__ == "__main__":
    djc_make.run(make)
