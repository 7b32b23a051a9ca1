"""djc_make's own cost a key (issue 40): python/djc_make.py's serve loop
fed from memory, no djc, no pipe: a hello, a table message and N key lines
as djc sends them at jobs.reserve_batch 50, a no-op make returning {}.
Prints microseconds a key, best of 5. Run from the repository's root:

    /usr/bin/python3 bench/prog/djc_make_loop.py [N]

Keys are never "stale" nor behind a slow make here (djc_make._FRESH and
_SLOW raised: a preempted make would otherwise ask djc about the next key
and wait for an answer that never comes), so every key is made."""
import io
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import djc_make  # noqa: E402

djc_make._FRESH = djc_make._SLOW = 1e9
N = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
parts = [b'{"_djc":"hello","version":2,"binary":true,"types":true,"ahead":49}\n',
         b'{"_djc":"table","table":"Noop","types":{"id":"int64","v":"int32"},"parts":{}}\n']
parts += [b'{"_djc":"key","table":"Noop","key":{"id":%d},"attempt":1}\n' % i for i in range(N)]
data = b"".join(parts)


def make(key, fetch):
    return {}


best = 1e9
for _ in range(5):
    out = io.BytesIO()
    t = time.perf_counter()
    djc_make.serve(make, io.BytesIO(data), out)
    best = min(best, time.perf_counter() - t)
    assert out.getvalue().count(b'{"_djc":"done"}') == N
print("%.2f us a key (%d keys, best of 5)" % (best / N * 1e6, N))
