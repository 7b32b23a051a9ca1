"""stats_make.py - Stats' make for djc (`make_serve = DJPYTHON stats_make.py`
in the overlay of `make check-datajoint` and bench/dj-populate.sh): the same
computation as the DataJoint class's make (pipeline.stats_rows), run under
djc's serve protocol through python/djc_make.py. The interpreter can import
DataJoint, so djc_make.py hands the make <blob> values unpacked by DataJoint's
own codec (numpy arrays) and packs the arrays it returns with it
(docs/serve-protocol.md), so DataJoint reads the result as if Python had
made it."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import djc_make  # noqa: E402  (djc puts python/ first on its make programs' PYTHONPATH)
from pipeline import stats_rows  # noqa: E402


def make(key, fetch):
    session = fetch("Session", key)[0]
    scale = fetch("ParamSet", where={"paramset_idx": key["paramset"]})[0]["scale"]
    mean, scaled, peaks = stats_rows(session["samples"], scale)
    rows = [{"mean": mean, "scaled": scaled}]
    rows += [{"_part": "Peak", "peak_idx": i, "value": v} for i, v in peaks]
    return rows


if __name__ == "__main__":
    djc_make.run(make)
