"""blob_codec.py - python/djc_blob.py against the real DataJoint's codec
(datajoint.blob; run by tests/datajoint/test_pyblob.sh with an interpreter
that imports datajoint and numpy). For numeric arrays of every dtype djc_blob
handles, many shapes and memory layouts, compressed or not:
  unpack   djc_blob reads what DataJoint packed to the array DataJoint's
           unpack makes (dtype, shape, values, writable or not)
  pack     what djc_blob packs, DataJoint unpacks to the array given; the
           bytes are DataJoint's own uncompressed, and at zlib level 6
           (DataJoint's) compressed too
  others   values djc_blob leaves to DataJoint (dicts, strings, cells,
           structs, datetime64, ...): it says None for them, never a wrong
           value
Prints each failure and the counts; exit status 1 when any check failed."""
import os
import sys

import numpy as np
from datajoint.blob import MatCell, pack, unpack

import djc_blob

rng = np.random.default_rng(40)
bad = checks = 0


def fail(what, v):
    global bad
    bad += 1
    print("FAIL %s: %s %s" % (what, getattr(v, "dtype", type(v).__name__), getattr(v, "shape", "")))


def same(x, y):
    return (x.dtype == y.dtype and x.shape == y.shape and x.flags.writeable == y.flags.writeable
            and np.array_equal(x, y))


arrays = []
for dt in ["bool", "float64", "float32", "int8", "uint8", "int16", "uint16", "int32", "uint32",
           "int64", "uint64", "complex128", "complex64"]:
    for shape in [(), (0,), (1,), (5,), (3, 4), (2, 3, 4), (0, 3), (1, 1), (2000,), (300, 7)]:
        a = rng.standard_normal(shape) * 100
        if dt.startswith("complex"):
            a = a + 1j * rng.standard_normal(shape)
        arrays.append(np.asarray(a).astype(dt))
arrays += [np.arange(24.0).reshape(4, 6).T,              # Fortran-contiguous
           np.arange(24.0).reshape(4, 6)[:, ::2],        # neither layout
           np.zeros(5000), np.ones((50, 50), dtype="int16"),   # compressible
           np.asmatrix(np.arange(6.0).reshape(2, 3)),    # subclasses
           np.float64(3.5), np.int32(-7), np.bool_(True), np.complex64(1 + 2j), np.uint8(255)]

for a in arrays:
    for compress in (False, True):
        checks += 1
        dj = pack(a, compress=compress)
        mine = djc_blob.unpack(djc_blob.inflate(dj))
        if mine is None or not same(mine, unpack(dj)):
            fail("unpack (compress=%s)" % compress, a)
        checks += 1
        mine = djc_blob.unpack(djc_blob.inflate(bytearray(dj)))   # djc's read buffer
        if mine is None or not same(mine, unpack(bytearray(dj))):
            fail("unpack of a bytearray (compress=%s)" % compress, a)
    for level in (0, 1, 6):
        checks += 1
        mine = djc_blob.pack(a, level)
        if mine is None or not same(unpack(mine), unpack(pack(a, compress=False))):
            fail("pack at level %d" % level, a)
        elif level == 0 and mine != pack(a, compress=False):
            fail("bytes of pack at level 0", a)
        elif level == 6 and mine != pack(a, compress=True):
            fail("bytes of pack at level 6", a)

# a masked array packs its masked elements as their fill value, as
# DataJoint's pack (the array's tobytes) does, never the data they hide
for m in [np.ma.masked_array([1.0, 2.0, 3.0], mask=[0, 1, 0]),
          np.ma.masked_array(np.arange(12, dtype="int32").reshape(3, 4), mask=np.arange(12).reshape(3, 4) % 5 == 0),
          np.ma.masked_array(np.arange(6.0).reshape(2, 3).T, mask=[[1, 0], [0, 0], [0, 1]]),
          np.ma.masked_array([1 + 2j, 3 - 1j], mask=[0, 1]),
          np.ma.masked_array([True, False], mask=[1, 0], fill_value=False),
          np.ma.masked_array(np.zeros(3000), mask=np.arange(3000) % 7 == 0)]:
    for level in (0, 6):
        checks += 1
        if djc_blob.pack(m, level) != pack(m, compress=bool(level)):
            fail("pack of a masked array at level %d" % level, m)

# what DataJoint's unpack decodes (a dict holding a UUID and bytes) comes
# from djc's read buffer (a bytearray) as from bytes
import uuid  # noqa: E402

import djc_make  # noqa: E402

v = {"u": uuid.UUID(int=12345), "b": b"\x00\x01raw", "n": [1, 2]}
checks += 1
try:
    got = djc_make._unpack_value(djc_blob, bytearray(pack(v, compress=False)))
    if got != v or type(got["b"]) is not bytes:
        fail("unpack of a dict from a bytearray: %r" % (got,), v)
except Exception as e:
    fail("unpack of a dict from a bytearray: %r" % (e,), v)

# a memmap packs as the array it holds
mm = np.memmap("/tmp/djc-blob-codec.%d" % os.getpid(), dtype="float32", mode="w+", shape=(10, 3))
mm[:] = rng.standard_normal((10, 3))
checks += 1
if djc_blob.pack(mm, 0) != pack(np.asarray(mm), compress=False):
    fail("pack of a memmap", mm)
os.unlink(mm.filename)

others = [{"a": 1}, [1, 2], (1, "x"), {1, 2}, "text", 3, 2.5, True, 1 + 2j, None, b"raw",
          np.array(["ab", "c"]), np.array("x"), np.datetime64("2020-01-01"),
          np.array([1, 2], dtype="datetime64[D]"), np.array([{"a": 1}, None], dtype=object),
          np.rec.array([(1, 2.0)], dtype=[("x", "i4"), ("y", "f8")]),
          np.array([(1, 2.0)], dtype=[("x", "i4"), ("y", "f8")]),
          np.array([1.0, 2.0]).view(MatCell), np.array([b"a", b"bc"])]
for v in others:
    try:
        dj = pack(v)
    except Exception:   # DataJoint cannot pack it either: djc_blob must not
        dj = None
    checks += 1
    if djc_blob.pack(v, 1) is not None:
        fail("pack of a value left to DataJoint", v)
    if dj is not None:
        checks += 1
        if djc_blob.unpack(djc_blob.inflate(dj)) is not None:
            fail("unpack of a value left to DataJoint", v)

# a value whose data is not as long as its header says is an error, not an array
checks += 1
short = pack(np.arange(10.0), compress=False)[:-8]
try:
    djc_blob.unpack(short)
    fail("a short value is refused", short)
except ValueError:
    pass

print("%d checks, %d failed" % (checks, bad))
sys.exit(1 if bad else 0)
