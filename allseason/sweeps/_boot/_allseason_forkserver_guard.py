"""Imported first by the process pool's forkserver (its preload), as a top-level module so
that nothing of the package is imported before it: when ``$ALLSEASON_FORKSERVER_OF`` names
the forkserver's parent (the driver set it while starting the forkserver from its main
thread), the forkserver asks Linux for SIGKILL when that parent dies
(``prctl(PR_SET_PDEATHSIG)``), and exits at once if the parent is already gone.

Without it, a forkserver whose driver was killed during the seconds its preload takes to
import lives on until the import ends; its workers (which die with it, see
:func:`allseason.sweeps.pool.die_with_parent`) could be forked meanwhile.

Every child the guarded forkserver forks asks for the same signal at once, in the fork itself
(``os.register_at_fork``), before anything of it runs: a pool worker (which asks again in its
initializer) and a Dask worker alike (a Dask LocalCluster of ``--workers N`` forks its workers
from this forkserver: its own workers, spawned, lived 5-15 s after a SIGKILL of the driver,
the time their start takes under load before Dask's own parent watch begins)."""

import os
import sys

_DRIVER = os.environ.get("ALLSEASON_FORKSERVER_OF", "")

if _DRIVER.isdigit() and sys.platform.startswith("linux"):
    import ctypes
    import signal

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != int(_DRIVER):  # the driver died before the signal was set
        os._exit(0)

    _SERVER = os.getpid()

    def _die_with_the_forkserver() -> None:
        """In a forked child: SIGKILL when the forkserver dies; gone already: exit."""
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
        if os.getppid() != _SERVER:
            os._exit(1)

    os.register_at_fork(after_in_child=_die_with_the_forkserver)
