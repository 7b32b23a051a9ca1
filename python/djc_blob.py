"""djc_blob - DataJoint's <blob> format for numeric numpy arrays, without
DataJoint.

A Python make run by djc (python/djc_make.py) gets the values of <blob>
attributes decoded and has its results packed in DataJoint's format. The
format is DataJoint's (``datajoint.blob``): a value DataJoint wrote is read
here to the same array, and DataJoint reads what is written here to the
array that was given. Importing DataJoint costs a Python make about a
second at its start (pandas, its connection code, its settings); numeric
arrays, the values that are large, need only numpy and this module.
Without numpy the module loads, frames (``inflate``, ``compress``) and
decodes nothing (``pack`` and ``unpack`` give None).

What this module does itself (everything else goes to DataJoint's own
codec, imported the first time such a value comes, or is left undecoded
when DataJoint is not there):

- a value whose body is a numeric array (``A``: bool, float32/64, the
  signed and unsigned integers of 8 to 64 bits; real or complex, any shape,
  a 0-dimensional array too), under the ``mYm`` or ``dj0`` header,
  compressed (``ZL123``, zlib) or not;
- a numpy array of such a dtype (not DataJoint's MatCell or MatStruct) or
  a numpy scalar (packed as a 0-dimensional array, as DataJoint does)
  given as a result.

The layout of such a value (little-endian): the header ``mYm\\0`` (``dj0\\0``
for a 0-dimensional array, which MATLAB's mYm cannot read), ``A``, the
number of dimensions (u64), each dimension (u64), the type id (u32, the
table below) and 1 if complex (u32), then the elements in column-major
(Fortran) order, the imaginary parts after the real ones. Compressed:
``ZL123\\0``, the size of the value above (u64), a zlib stream of it.

Decoding makes the array over the value's own buffer (numpy.frombuffer: no
copy; read-only when the buffer is bytes, as DataJoint's), reshaped in
Fortran order, as DataJoint's unpack without squeeze. Packing writes the
header and compresses the array's own memory when it is contiguous (no
copy of it first); a value over 1000 bytes is stored compressed when that
is smaller, as DataJoint does, at zlib level ``level`` (DataJoint: 6).
"""

import struct
import zlib

try:
    import numpy as np
except ImportError:   # the framing (inflate, compress) only; pack and unpack say None
    np = None

ZL = b"ZL123\0"      # compressed: this, the inflated size (u64), a zlib stream
_MYM = b"mYm\0"
_DJ0 = b"dj0\0"

# DataJoint's type ids of the numeric classes (its deserialize_lookup)
_DTYPES = {3: "bool", 6: "float64", 7: "float32", 8: "int8", 9: "uint8", 10: "int16", 11: "uint16",
           12: "int32", 13: "uint32", 14: "int64", 15: "uint64"}
_DTYPES = {k: np.dtype(v) for k, v in _DTYPES.items()} if np else {}
_IDS = {v: k for k, v in _DTYPES.items()}
_REAL = {np.dtype("complex128"): np.dtype("float64"), np.dtype("complex64"): np.dtype("float32")} if np else {}


def inflate(v):
    """The value v with its compression undone (v itself when it is not
    compressed), inflated into a buffer of the size it states."""
    if len(v) > 14 and bytes(v[:6]) == ZL:
        n = struct.unpack_from("<Q", v, 6)[0]
        raw = zlib.decompress(memoryview(v)[14:], bufsize=max(n, 1))
        if len(raw) != n:
            raise ValueError("a compressed <blob> states %d bytes and inflates to %d" % (n, len(raw)))
        return raw
    return v


def unpack(v):
    """The numeric array an inflated <blob> value holds (v: bytes,
    bytearray or memoryview, as inflate returns it), or None when it holds
    something else (a struct, a cell, a string, a list, a datetime64
    array, ...): a value for DataJoint's unpack."""
    if np is None or len(v) < 5 or bytes(v[:5]) not in (_MYM + b"A", _DJ0 + b"A"):
        return None
    pos = 5
    if len(v) < pos + 8:
        return None
    ndim = struct.unpack_from("<Q", v, pos)[0]
    pos += 8
    if ndim > 64 or len(v) < pos + 8 * ndim + 8:
        return None
    shape = struct.unpack_from("<%dQ" % ndim, v, pos)
    pos += 8 * ndim
    tid, cplx = struct.unpack_from("<II", v, pos)
    pos += 8
    dt = _DTYPES.get(tid)
    if dt is None or cplx > 1:
        return None
    n = 1
    for d in shape:
        n *= d
    size = n * dt.itemsize
    if len(v) - pos != size * (2 if cplx else 1):
        raise ValueError("a <blob> array of shape %s of %s holds %d bytes of data, not %d"
                         % (tuple(shape), dt.name, len(v) - pos, size * (2 if cplx else 1)))
    a = np.frombuffer(v, dtype=dt, count=n, offset=pos)
    b = np.frombuffer(v, dtype=dt, count=n, offset=pos + size) if cplx else None
    if n == 1:
        # one element is a numpy scalar in DataJoint's unpack: a new array
        # when reshaped, and its complex sum complex128 for float32 parts too
        a, b = a[0], (b[0] if cplx else None)
    if cplx:
        a = a + 1j * b
    return a.reshape(shape, order="F")


def _header(a):
    """The bytes before a numeric array's elements, or None when a is
    not such an array."""
    if a.dtype.fields is not None:
        return None
    dt = _REAL.get(a.dtype, a.dtype)
    tid = _IDS.get(dt)
    if tid is None:
        return None
    return b"".join((_DJ0 if a.ndim == 0 else _MYM, b"A", struct.pack("<Q", a.ndim),
                     struct.pack("<%dQ" % a.ndim, *a.shape), struct.pack("<II", tid, 1 if a.dtype in _REAL else 0)))


def _parts(a):
    """The element data of a numeric array, in Fortran order, as buffers
    (the array's own memory when it is laid out so already). A masked
    array's masked elements are its fill value, as DataJoint's pack (its
    tobytes) writes them, never the data the mask hides."""
    if np.iscomplexobj(a):
        return [np.real(a).tobytes(order="F"), np.imag(a).tobytes(order="F")]
    if a.flags.f_contiguous and not isinstance(a, np.ma.MaskedArray):
        return [memoryview(a.reshape(-1, order="F")).cast("B")] if a.size else [b""]
    return [a.tobytes(order="F")]


def pack(a, level):
    """The <blob> value of a numeric numpy array (bytes), or None when a
    is something else (a value for DataJoint's pack). Compressed at zlib
    level ``level`` when over 1000 bytes and smaller so; level 0: never."""
    if np is None:
        return None
    if isinstance(a, (np.number, np.bool_)):
        a = np.array(a)   # a 0-dimensional array, as DataJoint packs a numpy scalar
    elif not isinstance(a, np.ndarray) or type(a).__module__.startswith("datajoint"):
        return None       # not an array, or DataJoint's MatCell or MatStruct
    if not isinstance(a, np.ma.MaskedArray):
        a = np.asarray(a)     # a subclass (numpy.memmap, ...) as the array it is
    head = _header(a)
    if head is None:
        return None
    parts = [head] + _parts(a)
    return _compressed(parts, level) or b"".join(parts)


def compress(raw, level):
    """A packed value (bytes: header and body, uncompressed) as it is
    stored: compressed at zlib level ``level`` when it is over 1000 bytes
    and that makes it smaller, as DataJoint's pack does; level 0: never."""
    return _compressed([raw], level) or raw


def _compressed(parts, level):
    """The compressed value of the buffers parts, one after the other, or
    None when it would not be compressed."""
    size = sum(memoryview(p).nbytes for p in parts)
    if level <= 0 or size <= 1000:
        return None
    z = zlib.compressobj(level)
    out = [ZL, struct.pack("<Q", size)] + [z.compress(p) for p in parts] + [z.flush()]
    packed = b"".join(out)
    return packed if len(packed) < size else None
