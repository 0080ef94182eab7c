"""The service under load on 127.0.0.1 (issue 32): decisions per second with p50 and p99 at
1 and 2 workers, the resident memory after N decisions, and (``--kills 50``) the kill -9 test.

    PYTHONPATH=. python benchmarks/bench_serve.py --decisions 20000 --clients 4
    PYTHONPATH=. python benchmarks/bench_serve.py --kills 50  # tests/agent/test_serve.py, 50 kills
    PYTHONPATH=. python benchmarks/bench_serve.py --kills 20 --kill-workers 2  # 2 processes
    PYTHONPATH=. python benchmarks/bench_serve.py --in-process --decisions 1000000 --steps 20
    PYTHONPATH=. python benchmarks/bench_serve.py --in-process --decisions 6000 --snapshot-every 0

Each client is a process with one keep-alive connection sending /decide one at a time (d = 5,
K = 5 arms, All-Season (SW)), and a reward for every 10th decision (B = 10, so batch updates
and snapshots happen as they would). Latency is the client's, request to answer. The clients
run on the same 2 cores as the service: the numbers are a floor, noisy on a shared machine;
the service's own CPU time per decision (from /proc, rewards and snapshots included) is the
steadier number, and 1 / it is what one core would serve.
The resident memory is the sum over the service's processes, read from /proc, measured as
decisions go; open decisions are capped (``--max-open``), so it levels off once the cap is
reached; 10**6 decisions is that level plus what the journal costs (nothing in memory).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from allseason.serve.client import Client, rss_kb, start_service  # noqa: E402

D, K = 5, 5


def _client(args):
    port, index, n = args
    rng = np.random.default_rng(index)
    c = Client(port, timeout=60)
    lat = np.empty(n)
    t0 = time.perf_counter()
    for i in range(n):
        arms = rng.normal(size=(K, D)).round(6).tolist()
        t = time.perf_counter()
        status, out = c.call("POST", "/decide", {"event_id": f"c{index}-{i}", "arms": arms})
        lat[i] = time.perf_counter() - t
        if status != 200:
            raise RuntimeError(f"{status} {out}")
        if i % 10 == 0:
            status, out = c.call(
                "POST", "/reward", {"event_id": out["event_id"], "reward": float(rng.random())}
            )
            if status != 202:
                raise RuntimeError(f"{status} {out}")
    return lat, time.perf_counter() - t0


def _cpu_s(pids) -> float:
    """User + system CPU seconds of these processes (/proc/PID/stat)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in pids:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])
    return total / tick


def _service_pids(proc) -> list[int]:
    kids = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    pids = [int(p) for p in kids.read_text().split()] if kids.exists() else []
    return pids or [proc.pid]


def load(workers: int, decisions: int, clients: int, max_open: int, steps: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        proc, port = start_service(
            Path(tmp) / "state",
            "--d", str(D), "--batch-size", "10", "--workers", str(workers),
            "--max-open", str(max_open), "--rate", "10000000", "--burst", "10000000",
        )  # fmt: skip
        try:
            time.sleep(1.0)  # the readers warm up too
            pids = _service_pids(proc)
            rss0 = sum(rss_kb(p) for p in pids)
            cpu0 = _cpu_s(pids)
            per = decisions // clients // steps
            t_start = time.perf_counter()
            lats, walls, rss = [], 0.0, []
            with mp.get_context("spawn").Pool(clients) as pool:
                for s in range(steps):
                    t0 = time.perf_counter()
                    got = pool.map(_client, [(port, s * clients + i, per) for i in range(clients)])
                    walls += time.perf_counter() - t0
                    lats += [g[0] for g in got]
                    rss.append(sum(rss_kb(p) for p in _service_pids(proc)))
                    print(
                        f"step {s + 1}/{steps}: {(s + 1) * per * clients:,} decisions, "
                        f"RSS {rss[-1] / 1024:.1f} MB, {time.perf_counter() - t_start:.0f} s, "
                        f"load {os.getloadavg()[0]:.1f}",
                        file=sys.stderr,
                        flush=True,
                    )
            lat = np.concatenate(lats)
            cpu = _cpu_s(pids) - cpu0
            state = Client(port).call("GET", "/state")[1]
        finally:
            proc.terminate()
            proc.wait(30)
    return dict(
        workers=workers,
        clients=clients,
        decisions=int(lat.size),
        per_second=round(lat.size / walls),
        service_cpu_ms_per_decision=round(cpu / lat.size * 1e3, 3),
        per_cpu_second=round(lat.size / cpu) if cpu else None,
        load_average=round(os.getloadavg()[0], 1),
        p50_ms=round(float(np.percentile(lat, 50)) * 1e3, 2),
        p99_ms=round(float(np.percentile(lat, 99)) * 1e3, 2),
        rss_start_mb=round(rss0 / 1024, 1),
        rss_mb_by_step=[round(r / 1024, 1) for r in rss],
        version=state.get("version", state.get("model_version")),
    )


def in_process(decisions: int, max_open: int, steps: int, snapshot_every: float = 2.0) -> dict:
    """``--in-process``: the writer (allseason/serve/store.py) driven directly, no HTTP and no
    clients, the same calls as :func:`load` (a reward for every 10th decision, B = 10, a
    snapshot every ``snapshot_every`` seconds; 0: at every batch update, as before the
    cadence): the resident memory of this process as decisions go, where a machine too busy
    for 10**6 decisions over HTTP still gets there, and the writer's CPU per decision."""
    from allseason.agent import Agent
    from allseason.serve.store import Writer, init_folder

    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="bench-serve-rss-") as tmp:
        folder = Path(tmp) / "state"
        init_folder(folder, Agent("allseason-sw", d=D, batch_size=10, max_open=max_open))
        w = Writer(folder, snapshot_seconds=snapshot_every)
        rss0, cpu0, t0, rss = rss_kb(os.getpid()), time.process_time(), time.perf_counter(), []
        per = decisions // steps
        for s in range(steps):
            for i in range(s * per, (s + 1) * per):
                arms = rng.normal(size=(K, D)).round(6).tolist()
                w.decide({"event_id": f"e{i}", "arms": arms, "t": time.time()})
                if i % 10 == 0:
                    w.reward({"event_id": f"e{i}", "reward": float(rng.random()), "t": time.time()})
            rss.append(rss_kb(os.getpid()))
            print(
                f"step {s + 1}/{steps}: {(s + 1) * per:,} decisions, RSS {rss[-1] / 1024:.1f} MB,"
                f" {time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.1f}",
                file=sys.stderr,
                flush=True,
            )
        cpu = time.process_time() - cpu0
        return dict(
            in_process=True,
            snapshot_every=snapshot_every,
            decisions=per * steps,
            cpu_ms_per_decision=round(cpu / (per * steps) * 1e3, 3),
            snapshots=w.seq,
            load_average=round(os.getloadavg()[0], 1),
            rss_start_mb=round(rss0 / 1024, 1),
            rss_mb_by_step=[round(r / 1024, 1) for r in rss],
            counts=w.agent.counts,
        )


def kills(n: int) -> int:
    test = next(ROOT.glob("tests/**/test_serve.py"))
    env = {**os.environ, "SERVE_KILLS": str(n), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", str(test), "-k", "kill_9", "-s"]
    t0 = time.time()
    rc = subprocess.call(cmd, cwd=ROOT, env=env)
    print(f"{n} kills: {'passed' if rc == 0 else 'FAILED'} in {time.time() - t0:.0f} s")
    return rc


class _Driver:
    """Decisions and rewards over a new connection each (so both processes get them), one at
    a time; a call that fails (the service killed) is sent again until it is answered."""

    def __init__(self, port: int, seed: int):
        self.port, self.rng = port, np.random.default_rng(seed)
        self.open, self.rewarded, self.decided = [], set(), 0
        self.answers = {"decide": 0, "decide_409": 0, "reward": 0, "reward_dup": 0}
        self.retries, self.stop = 0, False

    def _send(self, path: str, body: dict) -> tuple[int, dict]:
        while True:
            try:
                c = Client(self.port, timeout=30)
                try:
                    return c.call("POST", path, body)
                finally:
                    c.close()
            except OSError:
                self.retries += 1
                time.sleep(0.05)

    def run(self) -> None:
        i = 0
        while not self.stop:
            if self.open and self.rng.random() < 0.5:
                e = self.open.pop(int(self.rng.integers(len(self.open))))
                status, out = self._send("/reward", {"event_id": e, "reward": float(i % 2)})
                if status not in (200, 202):
                    raise RuntimeError(f"/reward {e}: {status} {out}")
                self.rewarded.add(e)
                self.answers["reward" if status == 202 else "reward_dup"] += 1
            else:
                arms = self.rng.normal(size=(K, D)).round(6).tolist()
                status, out = self._send("/decide", {"event_id": f"e{i}", "arms": arms})
                if status not in (200, 409):
                    raise RuntimeError(f"/decide e{i}: {status} {out}")
                self.answers["decide" if status == 200 else "decide_409"] += 1
                self.open.append(f"e{i}")
                self.decided += 1
                i += 1


def _children(pid: int) -> list[int]:
    kids = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in kids.read_text().split()] if kids.exists() else []


def kills_two_workers(n: int, seed: int = 0) -> int:
    """``--kills N --kill-workers 2``: a service of 2 processes (a writer, a reader) and a
    driver sending decisions and rewards; N times, at a random moment, kill -9 either one
    worker (the supervisor starts it again) or the whole service (started again on the same
    folder and port). At the end, every reward the driver sent (each sent again until
    answered) is learnt exactly once, no reward is for an unknown decision, and the writer
    started again from the disk holds the same counts as the running one."""
    import threading

    from allseason.serve.store import Writer

    rng = np.random.default_rng(seed)
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="kill-two-") as tmp:
        folder = Path(tmp) / "state"
        flags = ["--workers", "2", "--poll-ms", "20", "--journal-bytes", "20000"]
        proc, port = start_service(folder, "--d", str(D), "--batch-size", "3", "--seed", "7",
                                   *flags)  # fmt: skip
        driver = _Driver(port, seed)
        thread = threading.Thread(target=driver.run, daemon=True)
        thread.start()
        how = {"one worker": 0, "the whole service": 0}
        try:
            for _ in range(n):
                time.sleep(rng.uniform(0.3, 2.0))
                kids = _children(proc.pid)
                if kids and rng.random() < 0.5:
                    os.kill(int(rng.choice(kids)), 9)
                    how["one worker"] += 1
                    continue
                for pid in [proc.pid, *kids]:
                    os.kill(pid, 9)
                proc.wait()
                for pid in kids:  # ours: wait until they are gone before starting again
                    while Path(f"/proc/{pid}").exists():
                        time.sleep(0.01)
                proc, _ = start_service(folder, *flags, "--port", str(port))
                how["the whole service"] += 1
            time.sleep(2.0)
        finally:
            driver.stop = True
            thread.join(60)
        try:
            live = None
            for _ in range(50):  # the writer's own numbers, once it has read the reader's
                c = Client(port)
                health = c.call("GET", "/health")[1]
                if health["role"] == "writer":
                    live = c.call("GET", "/state")[1]
                c.close()
                if live and live["counts"]["learned"] == len(driver.rewarded):
                    break
                time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(30)
        writer = Writer(folder, n_readers=1)
        while writer.ingest():
            pass
        c = writer.agent.counts
        out = dict(
            kills=n,
            how=how,
            calls_answered=driver.answers,
            retries=driver.retries,
            rewards_sent=len(driver.rewarded),
            learned=c["learned"],
            duplicates=c["duplicates"],
            unknown=c["unknown"],
            decisions_held=c["decisions"],
            decisions_answered=driver.decided,
            readers_records_skipped=writer.skipped,
            live_counts_equal_restarted=bool(live) and live["counts"] == c,
            journal_files=sorted(p.name for p in (folder / "journal").iterdir()),
            seconds=round(time.time() - t0),
            load_average=round(os.getloadavg()[0], 1),
        )
        print(json.dumps(out), flush=True)
        ok = c["learned"] == len(driver.rewarded) and c["unknown"] == 0
        print(f"{n} kills of 2 workers: {'0 acknowledged rewards lost' if ok else 'FAILED'}")
        return 0 if ok else 1


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--decisions", type=int, default=20_000, help="per worker setting (20,000)")
    p.add_argument("--clients", type=int, default=4, help="client processes (4)")
    p.add_argument("--workers", default="1,2", help="worker counts to measure (1,2)")
    p.add_argument("--max-open", type=int, default=5_000, help="the agent's open cap (5,000)")
    p.add_argument("--steps", type=int, default=4, help="RSS readings along the run (4)")
    p.add_argument("--kills", type=int, default=0, help="run the kill -9 test this many times")
    p.add_argument(
        "--kill-workers",
        type=int,
        choices=(1, 2),
        default=1,
        help="the kill test on 1 process (tests/agent/test_serve.py) or on 2 (a writer and a "
        "reader: kills_two_workers) (1)",
    )
    p.add_argument(
        "--snapshot-every",
        type=float,
        default=2.0,
        help="--in-process: the writer's cadence in seconds (0: at every batch update) (2)",
    )
    p.add_argument(
        "--in-process",
        action="store_true",
        help="the writer driven directly (no HTTP): its RSS as --decisions go (in_process)",
    )
    args = p.parse_args()
    if args.in_process:
        out = in_process(args.decisions, args.max_open, args.steps, args.snapshot_every)
        print(json.dumps(out), flush=True)
        return 0
    if args.kills:
        return kills_two_workers(args.kills) if args.kill_workers == 2 else kills(args.kills)
    for w in [int(x) for x in args.workers.split(",")]:
        out = load(w, args.decisions, args.clients, args.max_open, args.steps)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
