"""The state file of an All-Season agent with 5 bandits, at d = 5 and d = 50: its size, and its
save and load times (issue 31). Prints one JSON document.

    python benchmarks/bench_statefile.py [--repeats 20]

The agent (arms mode, K = 5 arms of dimension d, batch size 10, the race's default
hyperparameters: at most n_max = 5 base bandits) is driven through ``decide``/``learn`` on
the default race's world (its seasons, at dimension d) until 5 base bandits are alive (the
shadow not counted), with 100 decisions left open (no reward yet: the open decisions are part
of the state). Then ``agent.save`` (atomic: temporary file, fsync, rename, folder fsync)
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
OPEN = 100


def grown_agent(d: int, seed: int = 0, target: int = 5, max_steps: int = 40_000):
    """An All-Season (SW) agent (the race's default hyperparameters: n_max = 5) driven on
    the default race's world (paper-synthetic seasons, K = 5, sigma2 = 0.1) at dimension
    ``d`` until ``target`` base bandits are alive (or ``max_steps``), then :data:`OPEN`
    decisions left open. pi is not computed while growing it (it is not part of the state)."""
    import dataclasses

    from allseason import api
    from allseason.sim.runner import make_env

    scenario = dataclasses.replace(api.default_race().scenario, d=d)
    rounds = [make_env(scenario, k).next_round(scenario.horizon) for k in range(4)]
    arms = np.concatenate([r.arms for r in rounds])  # the race's seeds 0-3, one after another
    pay = np.concatenate([r.payoff + r.noise[:, None] for r in rounds])
    agent = api.Agent("allseason-sw", d=d, seed=seed, batch_size=10, propensities=False)

    def alive() -> int:
        return sum(b["role"] == "base" for b in agent.summary()["bandits"])

    step = 0
    while step < min(max_steps, len(pay)) and (step % 100 or alive() < target):
        rec = agent.decide(arms=arms[step], event_id=f"e{step}")
        agent.learn(f"e{step}", float(pay[step, rec.arm]))
        step += 1
    for k in range(OPEN):
        agent.decide(arms=arms[(step + k) % len(arms)], event_id=f"open{k}")
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
