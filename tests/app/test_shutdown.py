"""A process that starts the app's warm-up and exits while it runs exits quietly.

The warm-up (``allseason.ui.runcache.warm_up``, started by every page) runs races in a daemon
thread. A process that exits while it races (every AppTest run did) stopped the races' thread
pool under it, and the warm-up printed a traceback: "cannot schedule new futures after
shutdown". Here a subprocess starts the warm-up, waits until it races, and exits; its exit
takes a moment (an ``atexit`` hook, as pytest's own teardown does), which gives the warm-up
the time to fail loudly if it still does. Nothing may be written to stderr."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import atexit, threading, time
from allseason.ui import runcache
runcache.warm_up()
deadline = time.monotonic() + 300
while not any(t.name.startswith("race") for t in threading.enumerate()):
    if time.monotonic() > deadline:
        raise SystemExit("the warm-up never started a race")
    time.sleep(0.005)
print("racing", flush=True)
atexit.register(time.sleep, 3)  # an exit that takes a moment
"""


def test_exit_during_the_warm_up_prints_nothing_on_stderr():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=600
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "racing\n"  # it exited while the warm-up raced
    assert out.stderr == ""


def test_the_exit_is_seen_from_threadings_hooks_on(monkeypatch):
    """The window a CI run failed in: ``threading``'s exit hooks have run (``concurrent.futures``
    refuses work) but the main thread is not yet marked stopped."""
    import concurrent.futures.thread as futures_thread
    import threading

    from allseason.ui import runcache

    assert not runcache._exiting()
    monkeypatch.setattr(futures_thread, "_shutdown", True)
    assert runcache._exiting()
    monkeypatch.setattr(futures_thread, "_shutdown", False)
    monkeypatch.setattr(threading, "_SHUTTING_DOWN", True, raising=False)
    assert runcache._exiting()
