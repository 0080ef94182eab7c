"""The state file of an All-Season agent with 5 bandits, at d = 5 and d = 50: its size, and its
save and load times (issue 31). Prints one JSON document.

    python benchmarks/bench_statefile.py [--repeats 20]

The agent (arms mode, K = 5 arms of dimension d, batch size 10, the race's default
hyperparameters) is driven through ``decide``/``learn`` on a linear world whose parameter
changes every 400 steps among 6 seasons, until 5 bandits are alive (base bandits, not
counting the shadow), with 100 decisions left open (no reward yet: the open decisions are
part of the state). Then ``agent.save`` (atomic: temporary file, fsync, rename, folder fsync)
and ``api.Agent.load`` (every check: sizes, SHA-256, finiteness, the agent's own checks) are
timed ``--repeats`` times each; the median and the best are reported, in wall time (the disk's
fsync is part of a save) and CPU time. The machine is shared: wall times are noisy.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

K = 5
SEASON = 400
N_SEASONS = 6
OPEN = 100


def grown_agent(d: int, seed: int = 0, target: int = 5, max_steps: int = 40_000):
    """An All-Season (SW) agent with ``target`` base bandits alive (or the most it reached
    in ``max_steps``) and :data:`OPEN` decisions open."""
    from allseason import api

    rng = np.random.default_rng(seed)
    thetas = rng.standard_normal((N_SEASONS, d)) / np.sqrt(d)
    agent = api.Agent("allseason-sw", d=d, seed=seed, batch_size=10)
    step = 0

    def alive() -> int:
        return sum(b["role"] == "base" for b in agent.summary()["bandits"])

    while step < max_steps and (step % 100 or alive() < target):
        X = rng.standard_normal((K, d)) / np.sqrt(d)
        rec = agent.decide(arms=X, event_id=f"e{step}")
        theta = thetas[(step // SEASON) % N_SEASONS]
        agent.learn(f"e{step}", float(X[rec.arm] @ theta + 0.1 * rng.standard_normal()))
        step += 1
    for k in range(OPEN):
        agent.decide(arms=rng.standard_normal((K, d)) / np.sqrt(d), event_id=f"open{k}")
    return agent, step, alive()


def timed(fn, repeats: int) -> dict:
    wall, cpu = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return dict(
        wall_ms_median=1e3 * statistics.median(wall),
        wall_ms_best=1e3 * min(wall),
        cpu_ms_median=1e3 * statistics.median(cpu),
    )


def measure(d: int, repeats: int) -> dict:
    from allseason import api
    from allseason.agent.statefile import read_state

    agent, steps, n_bandits = grown_agent(d)
    folder = Path(tempfile.mkdtemp(prefix="bench-state-"))
    path = folder / "agent.state"
    save = timed(lambda: agent.save(path), repeats)
    load = timed(lambda: api.Agent.load(path), repeats)
    manifest, arrays = read_state(path)
    again = api.Agent.load(path)
    same = all(
        again.decide(arms=np.eye(K, d), event_id=f"check{k}").arm
        == agent.decide(arms=np.eye(K, d), event_id=f"check{k}").arm
        for k in range(20)
    )
    return dict(
        d=d,
        K=K,
        steps=steps,
        base_bandits=n_bandits,
        open_decisions=OPEN,
        file_bytes=path.stat().st_size,
        manifest_bytes=len(json.dumps(manifest)),
        arrays=len(arrays),
        array_bytes=int(sum(a.nbytes for a in arrays.values())),
        save=save,
        load=load,
        same_decisions_after_load=same,
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args(argv)
    out = dict(
        note="median and best of repeats; wall includes fsync (the machine is shared: noisy)",
        sizes=[measure(d, args.repeats) for d in (5, 50)],
    )
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
