"""Imported first by the process pool's forkserver (its preload), as a top-level module so
that nothing of the package is imported before it: when ``$ALLSEASON_FORKSERVER_OF`` names
the forkserver's parent (the driver set it while starting the forkserver from its main
thread), the forkserver asks Linux for SIGKILL when that parent dies
(``prctl(PR_SET_PDEATHSIG)``), and exits at once if the parent is already gone.

Without it, a forkserver whose driver was killed during the seconds its preload takes to
import lives on until the import ends; its workers (which die with it, see
:func:`allseason.sweeps.pool.die_with_parent`) could be forked meanwhile."""

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
