"""The compiled event key (:mod:`allseason.kernels.eventkey`) is hashlib's BLAKE2b-64 key
(:func:`allseason.agent.draws.event_key`), for every length around the 128-byte blocks, short
and long seeds; an event id beyond ASCII gives -1 (its caller keys it by hashlib)."""

import random

import numpy as np
import pytest

from allseason.agent.draws import event_key, seed_text
from allseason.kernels.eventkey import event_key_compiled

SEEDS = ["int:0", "int:5", seed_text(np.random.SeedSequence(123, spawn_key=(4, 7))), "x" * 127,
         "y" * 128, "z" * 300]  # fmt: skip


def _prefix(seed):
    return np.frombuffer(f"{seed}\x1f".encode(), dtype=np.uint8).copy()


@pytest.mark.parametrize("seed", SEEDS)
def test_same_key_as_hashlib(seed):
    rng = random.Random(3)
    h, m = np.empty(8, dtype=np.uint64), np.empty(16, dtype=np.uint64)
    pre = _prefix(seed)
    for n in range(0, 270):
        text = "".join(chr(rng.randrange(0, 128)) for _ in range(n))
        assert event_key_compiled(pre, text, h, m) == event_key(seed, text), n
    for text in ("e0", "e12345", "order-2026-11-27T22:30:00Z", str(10**18 - 1)):
        assert event_key_compiled(pre, text, h, m) == event_key(seed, text)


@pytest.mark.parametrize("text", ["é", "ab\xff", "a" * 140 + "\u20ac", "\U0001f600", "x\x80"])
def test_beyond_ascii_is_refused(text):
    h, m = np.empty(8, dtype=np.uint64), np.empty(16, dtype=np.uint64)
    assert event_key_compiled(_prefix("int:1"), text, h, m) == -1
