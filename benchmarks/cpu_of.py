"""The CPU seconds of a command and of every process it starts, orphans included.

``/usr/bin/time`` counts only the children that were waited for: chromium's helper processes,
reparented when their parent exits, escape it. Here this process becomes a *child
subreaper* (Linux ``prctl(PR_SET_CHILD_SUBREAPER)``): every orphan of the command is
reparented to it, and it waits for them all, so ``RUSAGE_CHILDREN`` then holds the whole tree
(the app servers, Playwright's driver, chromium and its helpers, pytest and its workers).

    python benchmarks/cpu_of.py -- python -m pytest -q -n 0 -m e2e tests/browser/test_tour.py

prints one line (wall seconds, user + system CPU seconds of the tree, the load average before
and after) and exits with the command's code. A process of the tree still alive 30 s after
the command ended is terminated (its pid printed): it would otherwise never be counted.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
GRACE_S = 30.0


def _reap_all(deadline: float) -> list[int]:
    """Wait for every remaining descendant until ``deadline``; the pids still alive then."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return []
        if pid:
            continue
        if time.monotonic() > deadline:
            break
        time.sleep(0.1)
    left = [int(p) for p in os.listdir("/proc") if p.isdigit() and _parent(int(p)) == os.getpid()]
    for pid in left:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return left


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return -1


def main(argv: list[str]) -> int:
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print(__doc__)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("cpu_of: prctl(PR_SET_CHILD_SUBREAPER) failed: orphans are not counted")
    load0 = os.getloadavg()
    t0 = time.monotonic()
    code = subprocess.call(argv)
    wall = time.monotonic() - t0
    left = _reap_all(time.monotonic() + GRACE_S)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    load1 = os.getloadavg()
    print(
        f"cpu_of: wall {wall:.1f} s, CPU {ru.ru_utime + ru.ru_stime:.1f} s "
        f"(user {ru.ru_utime:.1f}, system {ru.ru_stime:.1f}); load average "
        f"{load0[0]:.1f} -> {load1[0]:.1f} (1 min), exit {code}"
        + (f"; terminated, still alive after {GRACE_S:.0f} s: {left}" if left else ""),
        flush=True,
    )
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
