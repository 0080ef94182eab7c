"""Server settings read from the environment, once, when the app starts.

``ALLSEASON_LOW_MEMORY=1`` (also ``true``, ``yes``, ``on``) is the setting for small hosts
(a free Hugging Face Space, a 512 MB-1 GB container). It trades speed for memory:

- the cache of finished races keeps at most :data:`LOW_MEMORY_ENTRIES` races and
  :data:`LOW_MEMORY_BYTES` bytes (instead of 8 races and 1.5 GB);
- one race computes at a time (instead of two), and its seeds play one after the other;
- the server's warm-up only loads the compiled kernels: it does not precompute Home's race
  nor build the first tables and figures, so an idle server stays small (Home's first click
  then pays about a second more);
- glibc's allocator is limited to two arenas (``mallopt(M_ARENA_MAX, 2)``, where glibc is
  there) and returns freed memory to the system after each race (``malloc_trim``).

Nothing changes the results: a race is computed the same way, bit for bit. The docs'
Deployment page gives the measured memory with and without it
(``benchmarks/lowmem_rss.py``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

ENV = "ALLSEASON_LOW_MEMORY"
LOW_MEMORY_ENTRIES = 2
LOW_MEMORY_BYTES = 250_000_000
_M_ARENA_MAX = -8  # glibc's mallopt parameter


def low_memory(environ=None) -> bool:
    """Is the low-memory setting on (``ALLSEASON_LOW_MEMORY`` = 1, true, yes or on)?"""
    value = (os.environ if environ is None else environ).get(ENV, "")
    return value.strip().lower() in ("1", "true", "yes", "on")


def _libc():
    try:
        name = ctypes.util.find_library("c")
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


def limit_arenas(n: int = 2) -> bool:
    """Ask glibc for at most ``n`` malloc arenas (fewer threads' pools kept); False where
    there is no glibc."""
    libc = _libc()
    if libc is None or not hasattr(libc, "mallopt"):
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, n))


def trim() -> bool:
    """Give freed heap memory back to the system (glibc's ``malloc_trim(0)``)."""
    libc = _libc()
    if libc is None or not hasattr(libc, "malloc_trim"):
        return False
    return bool(libc.malloc_trim(0))


LOW_MEMORY = low_memory()
if LOW_MEMORY:
    limit_arenas()
