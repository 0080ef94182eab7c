"""An event's key, compiled: BLAKE2b-64 (RFC 7693, unkeyed, 8-byte digest) of the seed's bytes
and an ASCII event id, its top 63 bits: the very number of :func:`allseason.agent.draws.event_key`
(hashlib's BLAKE2b), without the Python calls around it (a copy of the hasher, ``encode``,
``digest``, ``int.from_bytes``: about 0.3 us a decision). An event id with a character
beyond ASCII gives -1: its caller keys it by hashlib instead (its UTF-8 bytes are not its
characters). ``tests/agent/test_eventkey.py`` checks it against hashlib."""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unicode import _get_code_point

_IV = np.array(
    [
        0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
        0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179,
    ],
    dtype=np.uint64,
)  # fmt: skip
#: the message schedule: round r uses row r mod 10 (RFC 7693, section 2.7)
_SIGMA = np.array(
    [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
        [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
        [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
        [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
        [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
        [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
        [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
        [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
        [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
        [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    ],
    dtype=np.intp,
)
_R32, _R24, _R16, _R63 = np.uint64(32), np.uint64(24), np.uint64(16), np.uint64(63)
_L32, _L40, _L48, _L1 = np.uint64(32), np.uint64(40), np.uint64(48), np.uint64(1)
_PARAM = np.uint64(
    0x01010008
)  # parameter block's first word: digest 8 bytes, no key, fanout 1, depth 1


@njit(cache=True, inline="always")
def _half(a, b, c, d, x, rd, ld, rb, lb):
    """Half of G: add ``x``, then rotate d right by ``rd`` and b by ``rb`` (``ld``, ``lb``:
    64 less them)."""
    a = a + b + x
    d ^= a
    d = (d >> rd) | (d << ld)
    c = c + d
    b ^= c
    b = (b >> rb) | (b << lb)
    return a, b, c, d


@njit(cache=True, inline="always")
def _g(a, b, c, d, x, y):
    """BLAKE2b's mixing function G: two halves, rotations 32, 24 then 16, 63."""
    a, b, c, d = _half(a, b, c, d, x, _R32, _L32, _R24, _L40)
    return _half(a, b, c, d, y, _R16, _L48, _R63, _L1)


@njit(cache=True, inline="always")
def _compress(h, m, t, last):
    """BLAKE2b's compression F of the block ``m`` (16 words) into ``h``; ``t`` bytes so far."""
    v0, v1, v2, v3, v4, v5, v6, v7 = h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
    v8, v9, v10, v11 = _IV[0], _IV[1], _IV[2], _IV[3]
    v12, v13, v14, v15 = _IV[4], _IV[5], _IV[6], _IV[7]
    v12 ^= np.uint64(t)  # t < 2^64 (the high word of the counter stays 0)
    if last:
        v14 = ~v14
    for r in range(12):
        s = _SIGMA[r % 10]
        v0, v4, v8, v12 = _g(v0, v4, v8, v12, m[s[0]], m[s[1]])
        v1, v5, v9, v13 = _g(v1, v5, v9, v13, m[s[2]], m[s[3]])
        v2, v6, v10, v14 = _g(v2, v6, v10, v14, m[s[4]], m[s[5]])
        v3, v7, v11, v15 = _g(v3, v7, v11, v15, m[s[6]], m[s[7]])
        v0, v5, v10, v15 = _g(v0, v5, v10, v15, m[s[8]], m[s[9]])
        v1, v6, v11, v12 = _g(v1, v6, v11, v12, m[s[10]], m[s[11]])
        v2, v7, v8, v13 = _g(v2, v7, v8, v13, m[s[12]], m[s[13]])
        v3, v4, v9, v14 = _g(v3, v4, v9, v14, m[s[14]], m[s[15]])
    h[0] ^= v0 ^ v8
    h[1] ^= v1 ^ v9
    h[2] ^= v2 ^ v10
    h[3] ^= v3 ^ v11
    h[4] ^= v4 ^ v12
    h[5] ^= v5 ^ v13
    h[6] ^= v6 ^ v14
    h[7] ^= v7 ^ v15


@njit(cache=True, inline="always")
def event_key_ascii(prefix, event, h, m):
    """The key of ``event`` (a str) after the bytes ``prefix``, or -1 if ``event`` has a
    character beyond ASCII.

    Parameters
    ----------
    prefix : ndarray of uint8
        The seed's text and its separator, encoded (:func:`allseason.agent.draws.key_hasher`).
    event : str
        The event's text.
    h : ndarray of uint64, shape (8,)
        Workspace (the state).
    m : ndarray of uint64, shape (16,)
        Workspace (a block).

    Returns
    -------
    int
        In [0, 2^63), or -1.
    """
    P = prefix.shape[0]
    total = P + len(event)
    for i in range(8):
        h[i] = _IV[i]
    h[0] ^= _PARAM
    pos = 0
    while True:  # 128-byte blocks; the last one (maybe partial, maybe empty) finalises
        end = min(pos + 128, total)
        for i in range(16):
            m[i] = 0
        for i in range(pos, end):
            if i < P:
                c = np.uint64(prefix[i])
            else:
                c = np.uint64(_get_code_point(event, i - P))
                if c > 127:
                    return -1
            k = i - pos
            m[k >> 3] |= c << np.uint64(8 * (k & 7))
        last = end >= total
        _compress(h, m, end, last)
        if last:
            break
        pos = end
    return np.int64(h[0] >> np.uint64(1))


@njit(cache=True)
def event_key_compiled(prefix, event, h, m):
    """:func:`event_key_ascii` as a call (for the tests)."""
    return event_key_ascii(prefix, event, h, m)


__all__ = ["event_key_ascii", "event_key_compiled"]
