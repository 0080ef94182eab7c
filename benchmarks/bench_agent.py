"""decide + learn per second of the agent (issue 31), one core, and the latency of one decide.

    python benchmarks/bench_agent.py [--n 20000] [--repeat 3] [--json out.json]

For LinTS and All-Season (SW), at d = 5 / K = 5 and d = 50 / K = 20, with and without pi,
batch sizes 1 and 10, in both shapes (``arms``: X of shape (K, d) per decision, dense, one
shared theta; ``context``: c of shape (d,), one block per arm). Each row: decide+learn per
second (the best of ``--repeat`` runs of ``--n`` rounds, after a warm-up that compiles), and
p50/p99 of one ``decide`` (perf_counter around each call, in a separate pass). Rewards are
learnt at once (the batch rule still applies: an update every B rewards).

pi: exact in context mode (the quadrature, mixed over All-Season's bandits); in arms mode
K = 5 or 20 > 2, Monte Carlo (``n_mc`` draws per decision), reported with the same flag.

Importable: :func:`agent_rates` returns one row as a dict (engineer agent-state compares
gittins' own loop on the same rounds with it).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from allseason.agent import Agent


def _rounds(n: int, d: int, K: int, shape: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(d)
    if shape == "arms":
        X = rng.standard_normal((n, K, d)) / np.sqrt(d)
        reward = X @ theta + 0.1 * rng.standard_normal((n, K))
        return list(X), reward
    C = rng.standard_normal((n, d)) / np.sqrt(d)
    W = rng.standard_normal((K, d))
    reward = C @ W.T + 0.1 * rng.standard_normal((n, K))
    return list(C), reward


def _make(policy, d, K, shape, pi, batch_size, n_mc):
    kw = dict(d=d, seed=1, batch_size=batch_size, propensities=pi, n_mc=n_mc)
    if shape == "context":
        kw["n_arms"] = K
    return Agent(policy, **kw)


def _loop(agent, items, reward, ids, shape) -> float:
    decide, learn = agent.decide, agent.learn
    t0, c0 = time.perf_counter(), time.process_time()
    if shape == "arms":
        for i, x in enumerate(items):
            e = ids[i]
            learn(e, reward[i, decide(x, event_id=e, t=0.0).arm])
    else:
        for i, c in enumerate(items):
            e = ids[i]
            learn(e, reward[i, decide(context=c, event_id=e, t=0.0).arm])
    return time.perf_counter() - t0, time.process_time() - c0


def agent_rates(
    policy: str = "allseason-sw",
    d: int = 5,
    K: int = 5,
    *,
    shape: str = "arms",
    pi: bool = False,
    batch_size: int = 1,
    n: int = 20_000,
    repeat: int = 3,
    n_mc: int = 1024,
    latency_n: int = 5_000,
) -> dict:
    """One benchmark row: decide+learn per second and the decide latency.

    Parameters
    ----------
    policy : str
        A registered contestant.
    d, K : int
        Length of a row (or context) and number of arms.
    shape : {"arms", "context"}
        Dense arms (X of shape (K, d)) or a context with one block per arm.
    pi : bool
        Compute pi at each decision.
    batch_size : int
        The agent's B.
    n : int
        Rounds per timed run.
    repeat : int
        Timed runs (the best is kept).
    n_mc : int
        Monte Carlo draws of pi (dense arms, K > 2).
    latency_n : int
        Decisions timed one by one for p50/p99.

    Returns
    -------
    dict
        policy, d, K, shape, pi, batch_size, n, per_second (decide+learn), p50_us, p99_us
        (one decide), and the agent's engine. ``per_cpu_second`` counts the process's CPU
        time (the machine may be shared: wall time then overstates the cost); likewise
        ``p50_cpu_us`` / ``p99_cpu_us``, one decide's CPU time (the thread's: a shared
        machine's preemptions are not counted, which a loaded machine adds to p99_us).
    """
    items, reward = _rounds(n, d, K, shape)
    ids = [f"e{i}" for i in range(n)]
    warm = _make(policy, d, K, shape, pi, batch_size, n_mc)
    _loop(warm, items[:200], reward, ids, shape)  # compiles (or loads the cache)
    best = best_cpu = np.inf
    for _ in range(repeat):
        agent = _make(policy, d, K, shape, pi, batch_size, n_mc)
        wall, cpu = _loop(agent, items, reward, ids, shape)
        best, best_cpu = min(best, wall), min(best_cpu, cpu)
    agent = _make(policy, d, K, shape, pi, batch_size, n_mc)
    lat = np.empty(min(latency_n, n))
    lat_cpu = np.empty(len(lat))
    for i in range(len(lat)):
        c0, t0 = time.thread_time_ns(), time.perf_counter()
        if shape == "arms":
            rec = agent.decide(items[i], event_id=ids[i], t=0.0)
        else:
            rec = agent.decide(context=items[i], event_id=ids[i], t=0.0)
        lat[i] = time.perf_counter() - t0
        lat_cpu[i] = (time.thread_time_ns() - c0) * 1e-9
        agent.learn(ids[i], reward[i, rec.arm])
    return {
        "policy": policy,
        "d": d,
        "K": K,
        "shape": shape,
        "pi": pi,
        "pi_method": rec.pi_method,
        "batch_size": batch_size,
        "n": n,
        "per_second": n / best,
        "per_cpu_second": n / best_cpu,
        "p50_us": float(np.percentile(lat, 50) * 1e6),
        "p99_us": float(np.percentile(lat, 99) * 1e6),
        "p50_cpu_us": float(np.percentile(lat_cpu, 50) * 1e6),
        "p99_cpu_us": float(np.percentile(lat_cpu, 99) * 1e6),
        "engine": agent.engine,
    }


def plain_rates(
    policy: str = "lints", d: int = 5, K: int = 5, *, batch_size: int = 1, n: int = 5_000
) -> dict:
    """The issue's baseline on the same rounds: ``Policy.select`` / ``Policy.update`` one step
    at a time (the plain numpy path), dense arms; per wall and per CPU second."""
    from allseason.defaults import default_params
    from allseason.policies import make_policy

    items, reward = _rounds(n, d, K, "arms")
    pol = make_policy(policy, d, rng=1, **default_params(policy))
    t0, c0 = time.perf_counter(), time.process_time()
    xs, rs = [], []
    for i, X in enumerate(items):
        a = pol.select(X)
        xs.append(X[a])
        rs.append(reward[i, a])
        if len(rs) == batch_size:
            pol.update(np.array(xs), np.array(rs))
            xs, rs = [], []
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"policy": policy, "d": d, "K": K, "batch_size": batch_size, "n": n,
            "per_second": n / wall, "per_cpu_second": n / cpu}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", default=None, help="write the rows to this file")
    ap.add_argument("--quick", action="store_true", help="d = 5 / K = 5 only")
    args = ap.parse_args()
    sizes = [(5, 5)] if args.quick else [(5, 5), (50, 20)]
    rows = []
    head = ("policy", "d", "K", "shape", "pi", "B", "per s", "per cpu s", "p50 us", "p99 us",
            "p99 cpu us")  # fmt: skip
    print(" ".join(head), " method")
    for policy in ("lints", "allseason-sw"):
        for d, K in sizes:
            for shape in ("arms", "context"):
                for pi in (False, True):
                    for B in (1, 10):
                        # Monte Carlo pi (dense arms, K > 2) costs n_mc steps a decision
                        n = args.n if not (pi and shape == "arms") else 200
                        row = agent_rates(
                            policy, d, K, shape=shape, pi=pi, batch_size=B, n=n, repeat=args.repeat
                        )
                        rows.append(row)
                        print(
                            f"{policy:14} {d:>3} {K:>3} {shape:8} {str(pi):5} {B:>3} "
                            f"{row['per_second']:>9,.0f} {row['per_cpu_second']:>9,.0f} "
                            f"{row['p50_us']:>8.1f} "
                            f"{row['p99_us']:>8.1f} {row['p99_cpu_us']:>8.1f}  {row['pi_method']}",
                            flush=True,
                        )
    for policy in ("lints", "allseason-sw"):
        for d, K in sizes:
            base = plain_rates(policy, d, K, n=min(args.n, 5_000))
            rows.append({**base, "shape": "arms", "engine": "plain Policy.select/update"})
            wall, cpu = base["per_second"], base["per_cpu_second"]
            print(f"{policy} d={d} K={K} plain Policy.select/update, B=1: {wall:,.0f}/s wall, "
                  f"{cpu:,.0f}/s CPU")  # fmt: skip
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
