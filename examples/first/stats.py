#!/usr/bin/env python3
# stats.py - the make program of SessionStats (pipeline.djc). djc runs it once
# per key: the key arrives as one JSON object on stdin, the rows to insert go
# to stdout as JSON Lines (the key's attributes may be left out).
import json
import os
import subprocess
import sys

key = json.load(sys.stdin)
# the upstream row: `djc fetch Session --key` is DataJoint's (Session & key);
# djc tells its make programs where it is ($DJC) and the database URL
out = subprocess.run([os.environ["DJC"], "fetch", "Session", "--key", json.dumps(key), "--format", "json"],
                     check=True, capture_output=True, text=True).stdout
session = json.loads(out.splitlines()[0])
print(json.dumps({"mean_rate": session["n_spikes"] / session["duration_s"]}))
