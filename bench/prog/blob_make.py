"""blob_make.py - the Python make of bench/py-blob.sh (issue 40): Arr's
<blob> (a float64 vector) in, its first 131,072 elements (1 MiB) out as a
<blob> of their own, as bench/blob_run.c's C make does.

BLOB_MODE=raw (run with DJC_BLOBS=raw): the blob's bytes as they come
(a memoryview with binary values), the result's header written here and
its data sliced from them; BLOB_MODE=dj: DataJoint's format through
djc_make.py (a numpy array in, an array out: djc_blob.py decodes and packs
numeric arrays as datajoint.blob does, with numpy alone).
BLOB_BINARY=0: djc_make.run(make, binary=False) (base64 in the JSON).
BLOB_RSS=FILE: at its end, the program appends its max RSS (KiB) to FILE,
and its CPU seconds (user + system) to FILE.cpu."""
import atexit
import os
import resource
import struct

import djc_make

OUT = 131072
HDR = 29   # mYm\0, 'A', ndim, shape (one dimension), class, complex
MODE = os.environ.get("BLOB_MODE", "raw")


def make_raw(key, fetch):
    d = fetch("Arr", key)[0]["data"]
    if isinstance(d, str):
        d = djc_make.b64(d)
    head = b"mYm\0A" + struct.pack("<QQII", 1, OUT, 6, 0)
    return {"n": (len(d) - HDR) // 8, "head": head + d[HDR:HDR + OUT * 8]}


def make_dj(key, fetch):
    a = fetch("Arr", key)[0]["data"]
    return {"n": a.size, "head": a[:OUT]}


if os.environ.get("BLOB_RSS"):
    def _rss():
        with open(os.environ["BLOB_RSS"], "a") as f:
            f.write("%d\n" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        u = resource.getrusage(resource.RUSAGE_SELF)
        with open(os.environ["BLOB_RSS"] + ".cpu", "a") as f:
            f.write("%.3f\n" % (u.ru_utime + u.ru_stime))
    atexit.register(_rss)
djc_make.run(make_dj if MODE == "dj" else make_raw, binary=os.environ.get("BLOB_BINARY", "1") == "1")
