"""A small client of the service (the standard library only), and a way to start the service
as a subprocess: what the tests and ``benchmarks/bench_serve.py`` use, and a model for a
caller in Python.

    c = Client(8000)
    status, decision = c.call("POST", "/decide", {"arms": [[0.1, 0.2], [0.3, 0.1]]})
    status, ack = c.call("POST", "/reward", {"event_id": decision["event_id"], "reward": 1})
"""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class Client:
    """One keep-alive connection to 127.0.0.1:``port``.

    Parameters
    ----------
    port : int
    token : str, optional
        Sent as ``Authorization: Bearer TOKEN``.
    timeout : float
        Seconds to wait for an answer.
    """

    def __init__(self, port: int, token: str | None = None, timeout: float = 20):
        self.port, self.token, self.timeout = port, token, timeout
        self.conn: http.client.HTTPConnection | None = None
        self.headers: http.client.HTTPMessage | None = None

    def call(self, method: str, path: str, body=None, raw: bytes | None = None, headers=None):
        """(status, JSON answer); OSError if the connection is refused or lost."""
        conn = self.conn
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
            try:
                conn.connect()
            except OSError:
                conn.close()
                raise OSError("connection refused") from None
            conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.conn = conn
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        h = {"Content-Type": "application/json", **(headers or {})}
        if self.token:
            h["Authorization"] = f"Bearer {self.token}"
        try:
            conn.request(method, path, body=data, headers=h)
            resp = conn.getresponse()
            text = resp.read()
            self.headers = resp.headers  # case-insensitive
        except (OSError, http.client.HTTPException):
            self.close()
            raise OSError("connection lost") from None
        return resp.status, json.loads(text)

    def close(self) -> None:
        """Close the connection (a later request opens a new one)."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def start_service(folder, *flags, env=None, timeout: float = 180):
    """``python -m allseason serve FOLDER --port 0 FLAGS`` as a subprocess, once /health
    answers: (process, port)."""
    cmd = [sys.executable, "-m", "allseason", "serve", str(folder), "--port", "0", *flags]
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    err = proc.stderr
    assert err is not None  # stderr=PIPE
    line = err.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)", line)
    if not m:
        proc.wait(30)
        raise RuntimeError((line + err.read()).strip())
    port = int(m.group(1))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if Client(port, timeout=5).call("GET", "/health")[0] == 200:
                return proc, port
        except OSError:
            time.sleep(0.1)
        if proc.poll() is not None:
            raise RuntimeError(err.read().strip())
    proc.kill()
    raise RuntimeError("the service did not answer /health")


def rss_kb(pid: int) -> int:
    """The resident memory of process ``pid`` (Linux /proc), kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0
