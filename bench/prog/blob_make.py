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
and its CPU seconds (user + system) to FILE.cpu.

`blob_make.py lib URL SCHEMA`: the same make called in this process by
libdjc (python/djc_lib.py), populating Part with reserved jobs and no
refresh as bench/blob_run.c's run does, printing what it prints (this
process is the worker: no program). BLOB_TABLE: another table (the
adopted Head of bench/dj-blob.sh); BLOB_REFRESH=1: refresh as populate
does by default (jobs.auto_refresh)."""
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


def run_lib(url, schema):
    import json
    import sys
    import time

    import djc_lib

    def usage():
        u = resource.getrusage(resource.RUSAGE_SELF)
        return u.ru_maxrss, u.ru_utime + u.ru_stime, u.ru_minflt

    if MODE == "dj":
        # what the serve program's "above its interpreter" leaves out too
        import djc_blob  # noqa: F401 (numpy with it)
    rss0, cpu0, flt0 = usage()
    t0 = time.perf_counter()
    r = djc_lib.populate(os.environ.get("BLOB_TABLE", "Part"), make_dj if MODE == "dj" else make_raw, url=url,
                         schema=schema, reserve_jobs=True, refresh=None if os.environ.get("BLOB_REFRESH") else False,
                         suppress_errors=True)
    dt = time.perf_counter() - t0
    rss, cpu, flt = usage()
    made = r["success_count"]
    print(json.dumps({"kind": "py-lib", "keys": made, "secs": round(dt, 4), "keys_per_s": round(made / dt, 2),
                      "errors": r["error_count"], "worker_rss0_kb": rss0, "worker_rss_kb": rss, "program_rss_kb": 0,
                      "worker_cpu_s": round(cpu - cpu0, 3), "worker_faults": flt - flt0}))
    if r["error_list"]:
        print("blob_make.py: first error: %r" % (r["error_list"][0],), file=sys.stderr)


if __name__ == "__main__" and os.sys.argv[1:2] == ["lib"]:
    run_lib(os.sys.argv[2], os.sys.argv[3])
    raise SystemExit(0)
if os.environ.get("BLOB_RSS"):
    def _rss():
        with open(os.environ["BLOB_RSS"], "a") as f:
            f.write("%d\n" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
        u = resource.getrusage(resource.RUSAGE_SELF)
        with open(os.environ["BLOB_RSS"] + ".cpu", "a") as f:
            f.write("%.3f\n" % (u.ru_utime + u.ru_stime))
    atexit.register(_rss)
djc_make.run(make_dj if MODE == "dj" else make_raw, binary=os.environ.get("BLOB_BINARY", "1") == "1")
