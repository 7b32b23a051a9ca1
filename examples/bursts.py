#!/usr/bin/env python3
"""A make program in Python: read the key, fetch the upstream spike train
through the djc command, print the computed row as one JSON line."""
import base64, json, os, struct, subprocess, sys

key = json.loads(sys.stdin.read())
djc = os.environ.get("DJC", "build/djc")
out = subprocess.run([djc, "fetch", "SpikeTrain", "--where", json.dumps(key), "--format", "json"],
                     check=True, capture_output=True, text=True).stdout
row = json.loads(out.splitlines()[0])
raw = base64.b64decode(row["spikes"])
spikes = struct.unpack("<%dd" % (len(raw) // 8), raw)
bursts, run = 0, 1
for a, b in zip(spikes, spikes[1:]):
    if b - a < 0.010:
        run += 1
    else:
        bursts += run >= 3
        run = 1
bursts += run >= 3
print(json.dumps({"n_bursts": bursts}))
