"""The service under load on 127.0.0.1 (issue 32): decisions per second with p50 and p99 at
1 and 2 workers, the resident memory after N decisions, and (``--kills 50``) the kill -9 test.

    PYTHONPATH=. python benchmarks/bench_serve.py --decisions 20000 --clients 4
    PYTHONPATH=. python benchmarks/bench_serve.py --kills 50  # tests/agent/test_serve.py, 50 kills

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
            lats, walls, rss = [], 0.0, []
            with mp.get_context("spawn").Pool(clients) as pool:
                for s in range(steps):
                    t0 = time.perf_counter()
                    got = pool.map(_client, [(port, s * clients + i, per) for i in range(clients)])
                    walls += time.perf_counter() - t0
                    lats += [g[0] for g in got]
                    rss.append(sum(rss_kb(p) for p in _service_pids(proc)))
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


def kills(n: int) -> int:
    test = next(ROOT.glob("tests/**/test_serve.py"))
    env = {**os.environ, "SERVE_KILLS": str(n), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", str(test), "-k", "kill_9", "-s"]
    t0 = time.time()
    rc = subprocess.call(cmd, cwd=ROOT, env=env)
    print(f"{n} kills: {'passed' if rc == 0 else 'FAILED'} in {time.time() - t0:.0f} s")
    return rc


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--decisions", type=int, default=20_000, help="per worker setting (20,000)")
    p.add_argument("--clients", type=int, default=4, help="client processes (4)")
    p.add_argument("--workers", default="1,2", help="worker counts to measure (1,2)")
    p.add_argument("--max-open", type=int, default=5_000, help="the agent's open cap (5,000)")
    p.add_argument("--steps", type=int, default=4, help="RSS readings along the run (4)")
    p.add_argument("--kills", type=int, default=0, help="run the kill -9 test this many times")
    args = p.parse_args()
    if args.kills:
        return kills(args.kills)
    for w in [int(x) for x in args.workers.split(",")]:
        out = load(w, args.decisions, args.clients, args.max_open, args.steps)
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
