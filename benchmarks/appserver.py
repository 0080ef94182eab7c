"""The app under test or measurement: ``streamlit run app.py`` on a free port of 127.0.0.1,
and how Debian's chromium is started. Shared by the benchmarks (bench_app.py, load_test.py)
and the real-browser tests (tests/conftest.py), so all of them start the app the same way.

    with Server() as srv:        # srv.url, srv.pid, srv.log_tail()
        ...
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# headless Debian chromium on a closed network: without the background-networking flags it
# keeps trying hosts that the network refuses (see ../shared/testing-notes.md)
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'  # the script has finished
LOG_DIR = Path(os.environ.get("SCREENSHOT_DIR", "/tmp/allseason-screens"))
# ``Server(env=NO_PRECOMPUTE)``: a server whose visitors never press Home's button (the
# browser tests' extra servers) does not compute Home's default race in its warm-up
# (allseason/ui/settings.py; 10,000 steps x 5 seeds x 9 policies of CPU it would not use)
NO_PRECOMPUTE = {"ALLSEASON_PRECOMPUTE": "0"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``streamlit run app.py`` (this interpreter's streamlit) on 127.0.0.1:``port`` (a free
    one by default), headless; ``with Server() as srv`` returns once ``/_stcore/health``
    answers ``ok``. Its output goes to ``log_path`` (default: ``$SCREENSHOT_DIR``); ``env``:
    variables of its own (on top of this process's environment, which stays as it is)."""

    def __init__(
        self,
        port: int | None = None,
        log_path: str | Path | None = None,
        root: str | Path | None = None,
        env: dict[str, str] | None = None,
    ):
        self.root = Path(root or ROOT)
        self.env = dict(env or {})  # another checkout's app (e.g. a before/after pair)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(log_path or LOG_DIR / f"app-server-{self.port}.log")
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Server:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        cmd = [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.port",
            str(self.port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
        ]
        self._log = open(self.log_path, "w")
        env = {**os.environ, **self.env, "PYTHONPATH": str(self.root)}  # that checkout's allseason
        self.proc = subprocess.Popen(
            cmd, cwd=self.root, env=env, stdout=self._log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 60
        try:
            while True:
                try:
                    with urllib.request.urlopen(self.url + "/_stcore/health", timeout=2) as r:
                        if r.read().decode().strip() == "ok":
                            return self
                except OSError:
                    pass
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"streamlit did not start (exit code "
                        f"{self.proc.poll()}); see {self.log_path}"
                    )
                time.sleep(0.25)
        except BaseException:  # failed or interrupted while starting: leave no server behind
            self.__exit__(None, None, None)
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def __exit__(self, *exc) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self._log.close()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (psutil)."""
    import psutil

    t = psutil.Process(pid).cpu_times()
    return t.user + t.system


def browser_cpu_seconds() -> float:
    """User + system CPU seconds so far of the chromium processes this script started."""
    import psutil

    total = 0.0
    for p in psutil.Process().children(recursive=True):
        try:
            if "chrom" in p.name():
                t = p.cpu_times()
                total += t.user + t.system
        except psutil.Error:
            pass
    return total
