#!/usr/bin/env python3
"""The no-op make of `make bench` in Python (python/djc_make.py): one row
{} per key (djc fills in the key); with NOOP_LOG, appends the key's id
there so the benchmark can check that every key was made exactly once.
The same file runs under the per-key and the serve protocol."""
import os

import djc_make

LOG = os.environ.get("NOOP_LOG")


def make(key, fetch):
    if LOG:
        with open(LOG, "a") as f:
            f.write("%d\n" % key["id"])
    return {}


if __name__ == "__main__":
    djc_make.run(make)
