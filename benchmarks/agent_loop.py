"""The loop closed (issue 31): All-Season deployed through ``decide``/``learn`` only on a seasonal
world, its decision log written, then read back by ``python -m allseason replay`` AS IT IS and
evaluated offline. Prints one JSON document (the numbers of docs/agent.md).

    python benchmarks/agent_loop.py                 # 50,000 events, 5 replay seeds
    python benchmarks/agent_loop.py --events 5000   # what tests/agent/test_loop_closed.py runs

**The world** (:func:`world`): a *linear seasonal world* with a context. K = 4 arms, a context
c_t uniform in [-1, 1]^3; the season s_t follows the ``paper-synthetic`` pattern
(:func:`allseason.envs.patterns.preset`: 4 states, 8 change points) scaled to the events; arm
k pays 1 with probability ``p_t(k) = clip(a[s_t, k] + w[s_t, k] . c_t, 0.02, 0.98)`` (a
different best arm in each season), else 0: linear in ``e_k (x) [c_t, 1]``, the agent's
context mode, but for the clip. Common random numbers: one uniform per (event, arm).

**The agent**: ``api.Agent("allseason-sw", d=3, arms=[...], batch_size=10)``, the race's
default hyperparameters, a log attached; rewards come back **late and out of order** (each
after a random delay of 0-30 events), so rows reach ``decisions.csv`` in the order rewards
arrive; the timestamps (one second apart) give the decision order back.

**The check**: ``replay --json`` on ``decisions.csv`` with All-Season (SW) (the same, default,
hyperparameters), SW-LinTS and D-LinTS: the logger's own value must equal the realised mean
reward, and All-Season's IPS interval should contain it; the ESS of each contestant is
reported.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

K, D = 4, 3
LABELS = ["news", "sport", "weather", "music"]
T0 = 1_700_000_000  # the first decision's time (Unix seconds; 2023-11-14)
MAX_DELAY = 30  # events a reward may wait
CONTESTANTS = ("allseason-sw", "sw-lints", "d-lints")


def world(n: int, seed: int = 0):
    """(contexts (n, D), seasons (n,), p (n, K) reward probabilities, u (n, K) uniforms)."""
    from allseason.envs.patterns import preset

    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(31,)))
    seasons = preset("paper-synthetic", horizon=n).states()
    n_states = int(seasons.max()) + 1
    a = np.full((n_states, K), 0.25)
    a[np.arange(n_states), np.arange(n_states) % K] = 0.7  # a different best arm per season
    w = 0.1 * rng.standard_normal((n_states, K, D))
    c = rng.uniform(-1, 1, (n, D))
    p = np.clip(a[seasons] + np.einsum("tkd,td->tk", w[seasons], c), 0.02, 0.98)
    u = rng.random((n, K))
    return c, seasons, p, u


def deploy(n: int, folder, seed: int = 0, batch_size: int = 10) -> dict:
    """Run the agent for ``n`` events on :func:`world`, rewards late and out of order, the
    log in ``folder``; the realised rewards and the agent's counts."""
    from allseason import api

    c, seasons, p, u = world(n, seed)
    agent = api.Agent("allseason-sw", d=D, arms=LABELS, seed=seed, batch_size=batch_size)
    log = agent.attach_log(folder)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(32,)))
    due = rng.integers(0, MAX_DELAY + 1, n) + np.arange(n)  # when each reward comes back
    waiting: dict[int, list] = {}
    rewards = np.empty(n)
    props = np.empty(n)
    t0 = time.perf_counter()
    for t in range(n):
        rec = agent.decide(context=c[t], event_id=f"ev{t}", t=float(T0 + t))
        rewards[t] = float(u[t, rec.arm] < p[t, rec.arm])
        props[t] = rec.propensity
        waiting.setdefault(int(due[t]), []).append((f"ev{t}", rewards[t]))
        for event, r in waiting.pop(t, []):
            agent.learn(event, r)
    for step in sorted(waiting):
        for event, r in waiting[step]:
            agent.learn(event, r)
    agent.end_batch()
    seconds = time.perf_counter() - t0
    log.close()
    best = p.max(axis=1)
    return dict(
        events=n,
        realised_mean=float(rewards.mean()),
        best_mean=float(best.mean()),
        propensity_min=float(props.min()),
        seconds=seconds,
        counts=dict(agent.counts),
        version=int(agent.model_version),
    )


def evaluate(path, n_seeds: int = 5, in_process: bool = False) -> dict:
    """``python -m allseason replay PATH --json`` with :data:`CONTESTANTS`: its JSON."""
    args = ["replay", str(path), "--policies", ",".join(CONTESTANTS), "--seeds", str(n_seeds)]
    args += ["--json"]
    if in_process:
        import contextlib
        import io

        from allseason.cli import main

        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = main(args)
        assert rc == 0
        return json.loads(out.getvalue())
    run = subprocess.run(
        [sys.executable, "-m", "allseason", *args], capture_output=True, text=True, check=True
    )
    return json.loads(run.stdout)


def summarise(deployed: dict, report: dict) -> dict:
    """The numbers of the check: the logger's value against the realised mean, and per
    contestant and method the estimate, its interval and the ESS (kept events for replay)."""
    logger = report["logger"]
    rows = {}
    for r in report["rows"][1:]:
        rows.setdefault(r["policy"], {})[r["method"]] = dict(
            estimate=r["estimate"], low=r["low"], high=r["high"], ess=r["events"]
        )
    own = rows["allseason-sw"]["ips"]
    return dict(
        log=report["log"],
        realised_mean=deployed["realised_mean"],
        logger_value=logger["estimate"],
        logger_equals_realised=abs(logger["estimate"] - deployed["realised_mean"]) < 1e-12,
        allseason_ips_contains_logger=own["low"] <= logger["estimate"] <= own["high"],
        contestants=rows,
        too_sparse=report["too_sparse"],
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=50_000)
    ap.add_argument("--seeds", type=int, default=5, help="replay seeds")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", default=None, help="a folder to keep the log in")
    args = ap.parse_args(argv)
    folder = Path(args.keep or tempfile.mkdtemp(prefix="agent-loop-"))
    deployed = deploy(args.events, folder, seed=args.seed)
    t0 = time.perf_counter()
    report = evaluate(folder / "decisions.csv", args.seeds)
    out = dict(
        world="linear seasonal (benchmarks/agent_loop.py: paper-synthetic pattern, K=4, d=3)",
        deployed=deployed,
        replay_seconds=time.perf_counter() - t0,
        log_bytes=(folder / "decisions.csv").stat().st_size,
        **summarise(deployed, report),
    )
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
