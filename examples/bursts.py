#!/usr/bin/env python3
"""A make in Python (python/djc_make.py): count the bursts of a session's
spike train. The demo runs it as a serve program (make_serve = ... in
examples/demo.djc): one Python process per worker makes every key, and
reads the spike train from djc over its pipe."""
import struct

import djc_make


def make(key, fetch):
    row = fetch("SpikeTrain", key)[0]
    raw = djc_make.b64(row["spikes"])
    spikes = struct.unpack("<%dd" % (len(raw) // 8), raw)
    bursts, run = 0, 1
    for a, b in zip(spikes, spikes[1:]):
        if b - a < 0.010:
            run += 1
        else:
            bursts += run >= 3
            run = 1
    bursts += run >= 3
    return {"n_bursts": bursts}


if __name__ == "__main__":
    djc_make.run(make)
