"""``python -m allseason serve`` (issue 32, items 2-4): the endpoints, the one-line refusals,
nothing acknowledged lost across ``kill -9``, a full disk, two processes, 1,000 hostile
requests. Each service is a subprocess on a free port of 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from allseason.serve import checks
from allseason.serve.client import Client, rss_kb

ROOT = Path(__file__).resolve().parents[2]
D = 3


# --- a client and a service ------------------------------------------------------------------
# A service is `python -m allseason serve`'s own function (cli), run in a process forked from
# one parent that has paid the imports and the kernels' loading once (FORKER): a start takes
# a fraction of a second instead of seconds, so a kill -9 test restarts cheaply; the process
# killed is the one serving, as with `python -m allseason serve` (start_service, which
# benchmarks/bench_serve.py uses).
FORKER = r"""
import json, os, sys
import numpy as np
import starlette, uvicorn  # noqa: F401  the imports a start would pay
from allseason.agent import Agent
from allseason.cli import serve
from allseason.serve import http, reader, store
store.warm_up(Agent("allseason-sw", d=3, seed=0))  # the kernels, loaded once
print("ready", flush=True)
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd[0] == "wait":
        _, status = os.waitpid(cmd[1], 0)
        print(os.waitstatus_to_exitcode(status), flush=True)
        continue
    log = os.open(cmd[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    pid = os.fork()
    if pid == 0:
        os.dup2(log, 1)  # the pipe to the test is the forker's alone
        os.dup2(log, 2)
        os.dup2(os.open(os.devnull, os.O_RDWR), 0)
        code = 1
        try:
            code = serve.cli(cmd[2])
        finally:
            os._exit(code)
    os.close(log)
    print(pid, flush=True)
"""


class Forked:
    """A service forked by the FORKER: ``Popen``'s poll, wait, send_signal and returncode."""

    def __init__(self, forker, pid: int):
        self.forker, self.pid, self.returncode = forker, pid, None

    def send_signal(self, sig) -> None:
        os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout=None):
        """The exit code (-signal if killed); ``timeout`` as Popen's."""
        if self.returncode is None:
            deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
            while self.poll() is None:
                if time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(str(self.pid), timeout)
                time.sleep(0.02)
        return self.returncode

    def poll(self):
        if self.returncode is None:
            try:  # a zombie (ended, not yet reaped) counts as ended
                ended = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except FileNotFoundError:
                ended = "Z"
            if ended == "Z":
                self.returncode = self.forker.ask(["wait", self.pid])
        return self.returncode


class Forker:
    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", FORKER],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert self.proc.stdout.readline().strip() == "ready"
        self.n = 0

    def ask(self, cmd) -> int:
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def start(self, folder, *flags, timeout: float = 120):
        """Like ``start_service``: (process, port) once /health answers."""
        self.n += 1
        log = Path(folder).parent / f"serve-{self.n}.log"
        argv = [str(folder), "--port", "0", *flags]
        proc = Forked(self, self.ask(["start", str(log), argv]))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(r"http://127\.0\.0\.1:(\d+)", log.read_text())
            if m:
                try:
                    if Client(int(m.group(1)), timeout=5).call("GET", "/health")[0] == 200:
                        return proc, int(m.group(1))
                except OSError:
                    pass
            if proc.poll() is not None:
                raise RuntimeError(log.read_text().strip())
            time.sleep(0.02)
        proc.kill()
        raise RuntimeError("the service did not answer /health")

    def close(self):
        self.proc.kill()  # it holds nothing: its services are stopped by their tests
        self.proc.wait(30)


@pytest.fixture(scope="module")
def forker():
    f = Forker()
    yield f
    f.close()


@pytest.fixture
def start(forker):
    return forker.start


def stop(proc, sig=signal.SIGTERM):
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def arms_for(i: int, k: int = 3) -> list:
    rng = np.random.default_rng(i)
    return np.round(rng.normal(size=(k, D)), 6).tolist()


@pytest.fixture
def service(tmp_path, start):
    procs = []

    def run(*flags, folder=None, **kw):
        folder = folder or tmp_path / "state"
        proc, port = start(folder, *flags, **kw)
        procs.append(proc)
        return proc, port

    yield run
    for p in procs:
        stop(p, signal.SIGKILL)


# --- the checks, without a server ------------------------------------------------------------
@pytest.mark.parametrize(
    "body, field",
    [
        ({"arms": [[1, 2]]}, "arms[0]"),
        ({"arms": [[1, 2, "x"]]}, "arms[0][2]"),
        ({"arms": [[1, 2, True]]}, "arms[0][2]"),
        ({"arms": [[0, 0, 0]] * 101}, "at most 100 rows"),
        ({"arms": []}, "arms"),
        ({"arms": {"a": 1}}, "arms"),
        ({"arms": [[1, 2, 3]], "event_id": 5}, "event_id"),
        ({"arms": [[1, 2, 3]], "event_id": "a b"}, "event_id"),
        ({"arms": [[1, 2, 3]], "event_id": "x" * 129}, "event_id"),
        ({"arms": [[1, 2, 3]], "extra": 1}, "unknown field 'extra'"),
        ({"context": [1, 2, 3]}, "this agent takes 'arms'"),
        ({"arms": [[1, 2, 3]], "t": -1}, "t:"),
        ({"arms": [[1e300, 2, 3]]}, "±1e6"),
    ],
)
def test_a_bad_decide_body_gets_one_line_naming_the_field(body, field):
    with pytest.raises(checks.RequestError) as e:
        checks.check_decide(body, d=D, context_mode=False)
    assert e.value.status == 400 and field in e.value.message and "\n" not in e.value.message


@pytest.mark.parametrize(
    "raw", [b"{", b"[1]", b'{"reward": NaN}', b'{"reward": Infinity}', b"\xff\xfe", b""]
)
def test_a_body_that_is_not_a_json_object_is_refused(raw):
    with pytest.raises(checks.RequestError) as e:
        checks.parse_body(raw)
    assert e.value.status == 400


def test_the_token_bucket_caps_the_rate():
    now = [0.0]
    bucket = checks.TokenBucket(rate=10, burst=5, clock=lambda: now[0])
    assert sum(bucket.take() for _ in range(20)) == 5
    now[0] += 0.5
    assert sum(bucket.take() for _ in range(20)) == 5


def test_without_the_extra_the_command_says_how_to_install_it(tmp_path):
    code = (
        "import sys; sys.modules['starlette'] = None; from allseason.cli import main; "
        f"sys.exit(main(['serve', {str(tmp_path)!r}, '--d', '3']))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "error: the service needs its optional extra: pip install -r requirements-serve.txt "
        "(or pip install 'allseason[serve]')"
    ]


# --- the endpoints ----------------------------------------------------------------------------
def test_decide_reward_state_health_and_their_refusals(service, tmp_path):
    token = "s3cret-token-0123456789"
    (tmp_path / "token").write_text(token + "\n")
    proc, port = service(
        "--d", str(D), "--batch-size", "2", "--token-file", str(tmp_path / "token"),
        "--snapshot-every", "3600",
    )  # fmt: skip
    c = Client(port, token)
    assert Client(port).call("GET", "/health")[0] == 200  # health needs no token
    status, body = Client(port).call("POST", "/decide", {"arms": arms_for(0)})
    assert status == 401 and body == {"error": body["error"]} and "Bearer" in body["error"]
    status, dec = c.call("POST", "/decide", {"event_id": "e1", "arms": arms_for(1)})
    assert status == 200
    assert set(dec) >= {"event_id", "arm", "propensity", "model_version", "bandit"}
    assert dec["event_id"] == "e1" and 0 <= dec["arm"] < 3 and 0 < dec["propensity"] <= 1
    assert c.call("POST", "/decide", {"event_id": "e1", "arms": arms_for(1)})[0] == 409
    status, dec2 = c.call("POST", "/decide", {"arms": arms_for(2)})
    assert status == 200 and dec2["event_id"]
    assert c.call("POST", "/reward", {"event_id": "e1", "reward": 1.0}) == (
        202,
        {"event_id": "e1", "status": "learned", "model_version": 0},
    )
    assert c.call("POST", "/reward", {"event_id": "e1", "reward": 1.0})[1]["status"] == "duplicate"
    status, body = c.call("POST", "/reward", {"event_id": "nope", "reward": 1.0})
    assert status == 404 and "nope" in body["error"]
    status, body = c.call("POST", "/reward", {"event_id": dec2["event_id"], "reward": 0.0})
    assert status == 202 and body["model_version"] == 1  # B = 2: one batch update
    status, state = c.call("GET", "/state")
    assert status == 200 and state["counts"]["learned"] == 2 and state["counts"]["duplicates"] == 1
    assert c.call("GET", "/nowhere")[0] == 404 and c.call("GET", "/decide")[0] == 405
    big = b'{"arms": [' + b"[0,0,0]," * 1_400_000 + b"[0,0,0]]}"  # 11 MB
    status, body = c.call("POST", "/decide", raw=big)
    assert status == 413 and "1,000,000 bytes" in body["error"]
    assert proc.poll() is None
    from allseason.serve.store import Writer, read_pointer

    assert read_pointer(tmp_path / "state")["seq"] == 0  # --snapshot-every 3600: none yet
    stop(proc)  # SIGTERM: a clean stop writes a last snapshot
    assert proc.returncode in (0, -signal.SIGTERM)  # uvicorn raises it again once stopped
    ptr = read_pointer(tmp_path / "state")
    assert ptr["seq"] == 1 and ptr["version"] == 1
    again = Writer(tmp_path / "state")
    assert again.replayed == 0 and again.agent.counts == state["counts"]


# --- nothing acknowledged is lost -------------------------------------------------------------
def _next_call(rng, open_ids, next_id):
    if open_ids and rng.random() < 0.5:
        e = open_ids[int(rng.integers(len(open_ids)))]
        return "/reward", {"event_id": e, "reward": float(rng.integers(2)), "t": 2e9}
    i = next_id[0]
    next_id[0] += 1
    return "/decide", {"event_id": f"e{i}", "arms": arms_for(i), "t": 1e9 + i}


def _acknowledged(ops, open_ids, path, body, status, out, retried=False):
    """Record an answered call in ``ops`` (the order the service applied them). A call sent
    again after a kill answers 409 (a decision it holds) or "duplicate" (a reward it holds):
    the first sending was applied, and a duplicate reward is applied (counted) once more."""
    if path == "/decide":
        assert status == 200 or (retried and status == 409), (status, out)
        ops.append(("d", body, out.get("arm") if status == 200 else None))
        open_ids.append(body["event_id"])
        return
    assert status == 202 or (retried and status == 200), (status, out)
    ops.append(("r", body, "learned"))
    if status == 200:
        assert out["status"] == "duplicate"
        ops.append(("r", body, "duplicate"))
    open_ids.remove(body["event_id"])


def drive_until_killed(port, ops, open_ids, next_id, rng, pending=None):
    """Send calls one at a time until the connection dies; the call in flight is returned."""
    c = Client(port, timeout=10)
    retried = pending is not None
    while True:
        path, body = pending if pending is not None else _next_call(rng, open_ids, next_id)
        try:
            status, out = c.call("POST", path, body)
        except OSError:
            return path, body
        _acknowledged(ops, open_ids, path, body, status, out, retried)
        pending, retried = None, False


def reference_agent(first_state, ops):
    """An agent never interrupted, fed the acknowledged calls in order."""
    from allseason.agent import Agent

    agent = Agent.load(first_state)
    for op in ops:
        body = op[1]
        if op[0] == "d":
            rec = agent.decide(
                np.asarray(body["arms"], dtype=np.float64), event_id=body["event_id"], t=body["t"]
            )
            assert op[2] is None or rec.arm == op[2]  # the service's answer, decision for decision
        else:
            assert agent.learn(body["event_id"], body["reward"], t=body["t"]) == op[2]
    return agent


def assert_same_state(a, b) -> int:
    """Every array of to_state, bit for bit; the number of arrays."""
    ma, xa = a.to_state()
    mb, xb = b.to_state()
    assert sorted(xa) == sorted(xb)
    for k in xa:
        assert xa[k].dtype == xb[k].dtype and xa[k].shape == xb[k].shape, k
        assert xa[k].tobytes() == xb[k].tobytes(), k
    assert ma["counts"] == mb["counts"]
    return len(xa)


@pytest.mark.slow
def test_kill_9_at_random_moments_loses_no_acknowledged_reward(tmp_path, start):
    """SERVE_KILLS (5 here; benchmarks/bench_serve.py --kills 50) kill -9 at random moments
    while a driver sends decisions and rewards; after each restart every acknowledged reward
    is counted, and at the end the state equals, array for array and bit for bit, that of an
    agent never interrupted, fed the acknowledged calls in the same order."""
    import shutil
    import threading

    from allseason.serve.store import Writer

    kills = int(os.environ.get("SERVE_KILLS", "5"))
    folder = tmp_path / "state"
    rng = np.random.default_rng(32)
    ops, open_ids, next_id = [], [], [0]
    proc, port = start(
        folder, "--d", str(D), "--batch-size", "3", "--seed", "7", "--snapshot-every", "0.2"
    )
    first = tmp_path / "agent0.state"
    shutil.copy(folder / "snapshots" / "snap-00000000.state", first)
    pending = None
    try:
        for _ in range(kills):
            timer = threading.Timer(rng.uniform(0.05, 0.5), proc.send_signal, [signal.SIGKILL])
            timer.start()
            pending = drive_until_killed(port, ops, open_ids, next_id, rng, pending)
            timer.join()
            proc.wait()
            proc, port = start(folder)
            learned = sum(op[0] == "r" and op[2] == "learned" for op in ops)
            state = Client(port).call("GET", "/state")[1]
            in_flight = pending[0] == "/reward"  # written before the kill, or not
            assert learned <= state["counts"]["learned"] <= learned + in_flight  # 0 lost
        path, body = pending
        status, out = Client(port).call("POST", path, body)
        _acknowledged(ops, open_ids, path, body, status, out, retried=True)
        stop(proc, signal.SIGKILL)
        assert sum(op[0] == "r" for op in ops) > kills  # rewards were in flight
    finally:
        stop(proc, signal.SIGKILL)
    restarted = Writer(folder).agent
    n_arrays = assert_same_state(restarted, reference_agent(first, ops))
    assert n_arrays > 0
    n_rewards = sum(op[0] == "r" for op in ops)
    print(f"{kills} kills: {len(ops)} calls acknowledged ({n_rewards} rewards), 0 lost; ")
    print(f"{n_arrays} arrays of to_state equal bit for bit, version {restarted.model_version}")


# --- hostile requests -------------------------------------------------------------------------
def _raw(port: int, data: bytes, timeout: float = 10) -> bytes:
    """Send raw bytes, read what comes back until the server closes or a timeout."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except OSError:
            pass
    return out


def _hostile(rng, i: int, opened: list):
    """One hostile request: (method, path, raw body or None, headers)."""
    junk = [None, True, -1, 1e308, "x" * 300, [], {}, [[]], [1, [2]], "NaN", {"a": [1]}]
    kind = i % 12
    if kind == 0:  # wrong types
        body = {"event_id": junk[rng.integers(len(junk))], "arms": junk[rng.integers(len(junk))]}
    elif kind == 1:
        body = {"event_id": "r", "reward": junk[rng.integers(len(junk))]}
        return "POST", "/reward", json.dumps(body).encode(), {}
    elif kind == 2:  # huge arrays
        body = {"arms": [[0.0] * D] * 5000} if rng.random() < 0.5 else {"arms": [[0.0] * 90_000]}
    elif kind == 3:  # NaN, Infinity
        raw = b'{"arms": [[NaN, 1, 2]]}' if rng.random() < 0.5 else b'{"reward": Infinity}'
        return "POST", "/decide" if b"arms" in raw else "/reward", raw, {}
    elif kind == 4:  # unknown event ids
        body = {"event_id": f"never-{i}", "reward": 1.0}
        return "POST", "/reward", json.dumps(body).encode(), {}
    elif kind == 5:  # duplicates: a decision twice, a reward twice
        e = f"dup-{i // 24}"
        if rng.random() < 0.5:
            return "POST", "/decide", json.dumps({"event_id": e, "arms": arms_for(i)}).encode(), {}
        return "POST", "/reward", json.dumps({"event_id": e, "reward": 0.5}).encode(), {}
    elif kind == 6:  # not JSON, deep nesting, not UTF-8
        raw = [b"{", b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe\x00", b'"just a string"'][i % 4]
        return "POST", "/decide", raw, {}
    elif kind == 7:  # wrong methods and paths, a lying Content-Length
        return (
            ["GET", "PUT", "DELETE", "POST"][i % 4],
            ["/decide", "/x", "/../etc", "/state"][(i // 4) % 4],
            b"{}",
            {},
        )
    elif kind == 8:  # a bad token and strange headers
        return "POST", "/decide", b"{}", {"Authorization": "Bearer " + "x" * 5000}
    elif kind == 9:  # unknown fields, ids out of the alphabet
        body = {"arms": arms_for(i), "event_id": "é/../;DROP", "extra": 1}
    elif kind == 10:  # valid, to keep the agent busy between the hostile ones
        body = {"arms": arms_for(i)}
    else:  # context where arms are expected, rows of the wrong length
        body = {"context": [1, 2, 3]} if rng.random() < 0.5 else {"arms": [[1, 2]]}
    return "POST", "/decide", json.dumps(body).encode(), {}


def test_1000_hostile_requests_get_4xx_lines_no_traceback_and_bounded_memory(service, tmp_path):
    proc, port = service("--d", str(D), "--client-timeout", "2", "--rate", "1000000")
    rss0 = rss_kb(proc.pid)
    rng = np.random.default_rng(1000)
    statuses = {}
    c = Client(port)
    t0 = time.monotonic()
    for i in range(1000):
        method, path, raw, headers = _hostile(rng, i, [])
        status, body = c.call(method, path, raw=raw, headers=headers)
        statuses[status] = statuses.get(status, 0) + 1
        assert status < 500, (i, status, body)
        if status >= 400:
            assert set(body) == {"error"} and "\n" not in body["error"], body
    # 10 MB bodies: announced (refused unread) and chunked (cut at the cap)
    ten_mb = b"[" + b"0," * 5_000_000 + b"0]"
    head = b"POST /decide HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    out = _raw(port, head + b"Content-Length: %d\r\n\r\n" % len(ten_mb) + ten_mb)
    assert out.startswith(b"HTTP/1.1 413"), out[:200]
    chunked = head + b"Transfer-Encoding: chunked\r\n\r\n"
    chunked += b"".join(
        b"%x\r\n" % 65536 + ten_mb[j : j + 65536] + b"\r\n" for j in range(0, 10**7, 65536)
    )
    out = _raw(port, chunked + b"0\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 413"), out[:200]
    # slow clients: silent, a header a byte at a time, a body that never comes
    slow = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
    slow[1].sendall(b"POST /decide HTTP/1.1\r\nHo")
    slow[2].sendall(head + b"Content-Length: 100\r\n\r\n{")
    time.sleep(3.5)  # --client-timeout 2
    for s in slow[:2]:
        s.settimeout(2)
        assert s.recv(100) == b""  # closed by the service
    slow[2].settimeout(2)
    assert slow[2].recv(200).startswith(b"HTTP/1.1 408")
    for s in slow:
        s.close()
    assert _raw(port, b"GARBAGE\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert time.monotonic() - t0 < 120
    assert proc.poll() is None and Client(port).call("GET", "/health")[0] == 200
    assert rss_kb(proc.pid) - rss0 < 60_000, (rss0, rss_kb(proc.pid))
    assert statuses.get(200, 0) > 50 and statuses.get(400, 0) > 300, statuses


def test_the_rate_cap_answers_429(service):
    proc, port = service("--d", str(D), "--rate", "1", "--burst", "5")
    c = Client(port)
    got = [c.call("POST", "/decide", {"arms": arms_for(i)})[0] for i in range(8)]
    assert got[:5] == [200] * 5 and got[5:] == [429] * 3


# --- a full disk --------------------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    got = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], capture_output=True
    )
    if got.returncode != 0:
        pytest.skip("cannot mount a 2 MB tmpfs here (not root?): " + got.stderr.decode()[:100])
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_full_disk_gives_503_with_one_line_and_never_a_corrupt_snapshot(
    small_disk, tmp_path, start
):
    import shutil

    from allseason.agent import Agent
    from allseason.serve.store import Writer, read_pointer

    folder = small_disk / "state"
    proc, port = start(folder, "--d", "8", "--batch-size", "1", "--snapshot-every", "0")
    st = os.statvfs(small_disk)
    room = (folder / "snapshots" / "snap-00000000.state").stat().st_size // 2  # < a snapshot
    (small_disk / "filler").write_bytes(b"\0" * (st.f_bavail * st.f_frsize - room))
    try:
        c = Client(port)
        learned, refused = 0, None
        for i in range(500):
            arms = np.random.default_rng(i).normal(size=(8, 8)).round(9).tolist()
            status, out = c.call("POST", "/decide", {"event_id": f"e{i}", "arms": arms})
            if status == 200:
                status, out = c.call("POST", "/reward", {"event_id": f"e{i}", "reward": 1.0})
                learned += status == 202
            if status == 503:
                refused = out
                break
            assert status in (200, 202), out
        assert refused is not None and set(refused) == {"error"} and "\n" not in refused["error"]
        assert "refused a write" in refused["error"]
        health = c.call("GET", "/health")[1]
        assert health["status"] == "degraded" and "snapshot" in health["problem"]
        assert c.call("POST", "/decide", {"arms": arms})[0] == 503  # still full
        (small_disk / "filler").unlink()  # room again: the service takes requests again
        time.sleep(1.1)
        status, out = c.call("POST", "/decide", {"event_id": "after", "arms": arms})
        assert status == 200, out
        assert c.call("POST", "/reward", {"event_id": "after", "reward": 0.0})[0] == 202
        learned += 1
    finally:
        stop(proc, signal.SIGKILL)
    seq = read_pointer(folder)["seq"]
    Agent.load(folder / "snapshots" / f"snap-{seq:08d}.state")  # the snapshot named is whole
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    assert Writer(copy).agent.counts["learned"] == learned  # every 202 is there


# --- two processes ------------------------------------------------------------------------------
CADENCE, POLL = 1.0, 0.02  # --snapshot-every, --poll-ms / 1000
SLACK = 3.0  # writing and loading a snapshot, and the HTTP calls, on a loaded machine


def test_two_processes_readers_answer_the_writer_learns_within_the_stated_time(service, tmp_path):
    """The reader answers from the latest snapshot: it holds the writer's last version at most
    --snapshot-every + 2 polls (+ a snapshot's write and load) after the last 202, with no
    request after it (the writer's tick); a SIGTERM leaves a last snapshot, nothing to
    replay."""
    from allseason.serve.store import Writer, read_pointer

    proc, port = service(
        "--d", str(D), "--workers", "2", "--batch-size", "1", "--poll-ms", str(int(POLL * 1000)),
        "--snapshot-every", str(CADENCE),
    )  # fmt: skip
    roles, decided = {}, []
    for i in range(200):  # a new connection each: the kernel spreads them over both
        c = Client(port)
        status, out = c.call("POST", "/decide", {"event_id": f"e{i}", "arms": arms_for(i)})
        assert status == 200, out
        roles[c.headers["X-Allseason-Role"]] = roles.get(c.headers["X-Allseason-Role"], 0) + 1
        decided.append(out)
        c.close()
    assert set(roles) == {"writer", "reader-1"}, roles
    for i, out in enumerate(decided):  # rewards to whichever process takes the connection
        c = Client(port)
        status, body = c.call("POST", "/reward", {"event_id": out["event_id"], "reward": i % 2})
        assert status == 202, body
        c.close()
    t0 = time.monotonic()
    seen = {}
    bound = POLL + CADENCE + 2 * POLL + SLACK  # ingest, cadence, tick, reader's poll
    while len(seen) < 2 or min(seen.values()) < len(decided):
        assert time.monotonic() - t0 < bound, seen
        c = Client(port)
        health = c.call("GET", "/health")[1]
        seen[health["role"]] = health["model_version"]
        c.close()
    staleness = time.monotonic() - t0
    c = Client(port)
    while c.call("GET", "/health")[1]["role"] != "writer":
        c.close()
    counts = c.call("GET", "/state")[1]["counts"]
    assert counts["decisions"] == counts["learned"] == len(decided), counts
    assert counts["unknown"] == 0 and counts["duplicates"] == 0, counts
    c.close()
    stop(proc)  # SIGTERM to the supervisor, then to both: the writer's last snapshot
    assert read_pointer(tmp_path / "state")["version"] == len(decided)
    assert Writer(tmp_path / "state", n_readers=1).replayed == 0
    print(f"roles {roles}; every process at the last version {staleness:.2f} s after the last 202")
