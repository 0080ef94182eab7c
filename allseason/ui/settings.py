"""Server settings read from the environment, once, when the app starts.

``ALLSEASON_PRECOMPUTE=0`` (also ``false``, ``no``, ``off``): the server's warm-up does not
compute Home's default race in advance (:func:`precompute`; on by default).

``ALLSEASON_LOW_MEMORY=1`` (also ``true``, ``yes``, ``on``) is the setting for small hosts
(a free Hugging Face Space, a 512 MB-1 GB container). It trades speed for memory:

- the cache of finished races keeps at most :data:`LOW_MEMORY_ENTRIES` races and
  :data:`LOW_MEMORY_BYTES` bytes (instead of 8 races and 1.5 GB);
- one race computes at a time (instead of two), and its seeds play one after the other;
- the server's warm-up only loads the compiled kernels: it does not precompute Home's race
  nor build the first tables and figures, so an idle server stays small (Home's first click
  then pays about a second more);
- glibc's allocator (where there is one) is limited to two arenas (``mallopt(M_ARENA_MAX,
  2)``), serves every block of 128 KB or more from its own mapping, which goes back to the
  system when it is freed (a fixed ``M_MMAP_THRESHOLD``: glibc otherwise raises it as blocks are
  freed, and the freed arrays of one race then stay in the heap), and returns free heap memory
  to the system after each race (``malloc_trim``).

Nothing changes the results: a race is computed the same way, bit for bit. Pair it with
Streamlit's own ``STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL=5`` (a closed tab's session is
otherwise kept 120 s with what it drew): measured (``benchmarks/lowmem_rss.py``,
docs/deployment.md), one default race peaks at about 410 MB with or without the setting (the
libraries are about 300 MB), the idle server drops from 389 to 295 MB, and after five races
from five tabs the server holds 445 MB with both variables against 566 MB without.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os

ENV = "ALLSEASON_LOW_MEMORY"
LOW_MEMORY_ENTRIES = 2
LOW_MEMORY_BYTES = 250_000_000
_M_MMAP_THRESHOLD, _M_ARENA_MAX = -3, -8  # glibc's mallopt parameters
MMAP_THRESHOLD = 128 * 1024


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


def tune_allocator(arenas: int = 2, mmap_threshold: int = MMAP_THRESHOLD) -> bool:
    """Ask glibc for at most ``arenas`` malloc arenas and a fixed mmap threshold; False where
    there is no glibc (or it refuses)."""
    libc = _libc()
    if libc is None or not hasattr(libc, "mallopt"):
        return False
    return bool(libc.mallopt(_M_ARENA_MAX, arenas)) and bool(
        libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)
    )


def trim() -> bool:
    """Give freed heap memory back to the system (glibc's ``malloc_trim(0)``)."""
    libc = _libc()
    if libc is None or not hasattr(libc, "malloc_trim"):
        return False
    return bool(libc.malloc_trim(0))


DEPLOYED_ENV = "ALLSEASON_DEPLOYED_DIR"


def deployed_dir(environ=None):
    """The folder of a deployed agent's log that the page "Your deployed bandit" watches
    (``ALLSEASON_DEPLOYED_DIR``, set by whoever starts the server; never a path typed in a
    page), as a ``Path``, or None when unset."""
    from pathlib import Path

    value = (os.environ if environ is None else environ).get(DEPLOYED_ENV, "").strip()
    return Path(value).expanduser() if value else None


PRECOMPUTE_ENV = "ALLSEASON_PRECOMPUTE"


def precompute(environ=None) -> bool:
    """Does the server's warm-up compute Home's default race into the cache? Yes, unless
    ``ALLSEASON_PRECOMPUTE`` is 0, false, no or off: for a server whose visitors never ask
    for that race (the real-browser tests' extra servers: the deployed page's, a fresh deep
    link's, the load test's), which then spends no CPU on it. The rest of the warm-up and
    every result stay as they are."""
    value = (os.environ if environ is None else environ).get(PRECOMPUTE_ENV, "")
    return value.strip().lower() not in ("0", "false", "no", "off")


PRECOMPUTE = precompute()
LOW_MEMORY = low_memory()
if LOW_MEMORY:
    tune_allocator()
