"""The local process pool of every experiment (sweeps, the map, ``replay --processes``):
a forkserver forks the workers, and no process outlives its driver (issue 33): the workers
die with their parent (:func:`die_with_parent`), the forkserver with the driver (the guard
in ``_boot/``)."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import sys
from pathlib import Path

PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(driver_pid: int | None = None) -> bool:
    """Linux: this process gets SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG)``
    through ctypes), so no worker outlives a driver killed by SIGKILL, SIGTERM or a closed
    terminal. False where the OS has no such signal (then nothing changes).

    A pool worker's parent is the forkserver, a one-thread process that exits as soon as
    the driver dies (its "alive" pipe reaches EOF), so the signal fires then; it fires on
    the death of the creating *thread*, which for the forkserver is its only one. A worker
    whose parent is already gone (it died between the fork and this call: the worker's
    parent is then init) or whose ``driver_pid`` no longer exists exits at once.

    Parameters
    ----------
    driver_pid : int, optional
        The driver's process id, checked after the signal is set.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if os.getppid() == 1:
        os._exit(1)
    if driver_pid is not None:
        try:
            os.kill(driver_pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except OSError:
            pass
    return True


GUARD = "_allseason_forkserver_guard"  # in _boot/: a top-level module, imported first
GUARD_ENV = "ALLSEASON_FORKSERVER_OF"


def _start_forkserver() -> None:
    """Start the forkserver now (if it is not running) with the guard on its path; from the
    driver's main thread, with ``$ALLSEASON_FORKSERVER_OF`` set so that it dies with the
    driver. (The parent-death signal fires when the creating *thread* ends: a forkserver
    started from another thread, e.g. a Streamlit script's, is left to its own exit on the
    driver's death, or it would die with that thread while others still use it.)"""
    import threading
    from multiprocessing import forkserver

    if threading.current_thread() is not threading.main_thread():
        forkserver.ensure_running()
        return
    # the forkserver's path comes from $PYTHONPATH (Python 3.11 ignores the driver's
    # sys.path there): the guard's folder goes last, for the forkserver's start only
    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", GUARD_ENV)}
    boot = str(Path(__file__).with_name("_boot"))
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (saved["PYTHONPATH"], boot) if p)
    os.environ[GUARD_ENV] = str(os.getpid())
    try:
        forkserver.ensure_running()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _init_worker(driver_pid: int | None = None):
    """A pool worker: Ctrl-C is the driver's business; it dies with its parent."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(driver_pid)


def guarded_forkserver():
    """The forkserver context, its server started with the guard (it dies with the driver,
    and so do the children it forks); None where there is no forkserver (then spawn)."""
    import multiprocessing as mp

    if "forkserver" not in mp.get_all_start_methods():
        return None
    # a clean server process forks the workers (no threads inherited from the driver); it
    # imports the guard (it dies with the driver), then this module, the kernels (numba, which
    # the package imports on first use) and scipy.linalg (numba's BLAS, at a kernel's first
    # call) once, so each worker starts warm
    from ..kernels import FAMILIES

    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([GUARD, "allseason.sweeps.execute", *FAMILIES, "scipy.linalg"])
    _start_forkserver()
    return ctx


@contextlib.contextmanager
def _pool(processes: int):
    import multiprocessing as mp
    from multiprocessing.context import BaseContext

    ctx: BaseContext = guarded_forkserver() or mp.get_context("spawn")
    ex = cf.ProcessPoolExecutor(
        max_workers=processes,
        mp_context=ctx,
        initializer=_init_worker,
        initargs=(os.getpid(),),
    )
    try:
        yield ex, processes
    finally:
        ex.shutdown(wait=True, cancel_futures=True)


__all__ = ["die_with_parent", "guarded_forkserver"]
