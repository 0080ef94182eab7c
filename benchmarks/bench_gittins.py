"""gittins' own decide + learn loop, timed on synthetic rounds (issue 31: "gittins' own loop on
the same rounds"). Prints one JSON document.

gittins is NOT a requirement of this project: run this under a scratch virtualenv, e.g.

    python3 -m venv /tmp/gittins-venv
    /tmp/gittins-venv/bin/pip install gittins==2.0.1 numpy
    /tmp/gittins-venv/bin/python benchmarks/bench_gittins.py [--quick]

It imports only numpy and gittins (not allseason, whose requirements the scratch venv does not
have).

**The rounds** (:func:`rounds`; the same recipe as benchmarks/bench_agent.py's): for a seed,
``rng = numpy.random.default_rng(seed)``; ``theta = rng.standard_normal(d) / sqrt(d)``;
``X = rng.standard_normal((n, K, d)) / sqrt(d)`` (each round's K candidate rows);
``R = X @ theta + 0.1 * rng.standard_normal((n, K))`` (the reward of every candidate, so any
policy's reward for the arm it picks is ``R[t, arm]``). Sizes: d = 5, K = 5 and d = 50,
K = 20.

**gittins' loop**, used as its README and docstrings say: a candidate is ``(id, {"f0": x0,
..., "f{d-1}": x_{d-1}})`` (floats are numeric features), the context is ``{}``;
``rec = decide(state, {}, candidates, t, salt)`` (salt = the event id: one decision id per
event, ``rec.propensity`` the exact probability of ``rec.chosen``), then ``learn(state,
rec.decision_id, R[t, rec.chosen], t)`` at once (a batch of 1). The candidates' Python
objects are built before the clock starts (``loop``) and, separately, inside it
(``with_building``), since a service that holds numpy rows pays for that conversion.
Rates are decide + learn pairs per second of CPU time (``time.process_time``, one core) and
of wall time; ``decide_p50_us`` / ``decide_p99_us``: one ``decide``, timed alone.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import time

import numpy as np

SIZES = ((5, 5), (50, 20))  # (d, K)
SEED = 31
BITS = 18  # gittins' model size (2**18 hashed weights); its README's example uses 8
HORIZON = 3600.0  # seconds before an open decision expires (none does here)


def rounds(n: int, d: int, K: int, seed: int = SEED):
    """(X (n, K, d), R (n, K)): the synthetic rounds (module docstring)."""
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(d) / math.sqrt(d)
    X = rng.standard_normal((n, K, d)) / math.sqrt(d)
    R = X @ theta + 0.1 * rng.standard_normal((n, K))
    return X, R


def candidates(X_t: np.ndarray) -> list:
    names = [f"f{i}" for i in range(X_t.shape[1])]
    return [(f"a{k}", dict(zip(names, row.tolist()))) for k, row in enumerate(X_t)]


def run(n: int, d: int, K: int, build_inside: bool) -> dict:
    import gittins

    X, R = rounds(n, d, K)
    cands = None if build_inside else [candidates(X[t]) for t in range(n)]
    state = gittins.create(bits=BITS, horizon=HORIZON)
    rewards = np.empty(n)
    props = np.empty(n)
    c0, w0 = time.process_time(), time.perf_counter()
    for t in range(n):
        c = candidates(X[t]) if build_inside else cands[t]
        rec = gittins.decide(state, {}, c, float(t), f"e{t}")
        r = float(R[t, rec.chosen])
        gittins.learn(state, rec.decision_id, r, float(t))
        rewards[t] = r
        props[t] = rec.propensity
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    best = R.max(axis=1)
    return dict(
        per_s_cpu=n / cpu,
        per_s_wall=n / wall,
        mean_reward=float(rewards.mean()),
        mean_best=float(best.mean()),
        propensity_min=float(props.min()),
        propensity_max=float(props.max()),
    )


def decide_latency(n: int, d: int, K: int) -> dict:
    import gittins

    X, R = rounds(n, d, K)
    cands = [candidates(X[t]) for t in range(n)]
    state = gittins.create(bits=BITS, horizon=HORIZON)
    lat = np.empty(n)
    for t in range(n):
        t0 = time.perf_counter_ns()
        rec = gittins.decide(state, {}, cands[t], float(t), f"e{t}")
        lat[t] = time.perf_counter_ns() - t0
        gittins.learn(state, rec.decision_id, float(R[t, rec.chosen]), float(t))
    return dict(
        decide_p50_us=float(np.percentile(lat, 50) / 1e3),
        decide_p99_us=float(np.percentile(lat, 99) / 1e3),
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds (a smoke run)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per size; the best is kept")
    args = ap.parse_args(argv)
    try:
        from importlib.metadata import version

        import gittins  # noqa: F401

        gv = version("gittins")
    except ImportError:
        print(json.dumps({"error": "gittins is not installed in this python (see the docstring)"}))
        return 1
    out = dict(
        gittins=gv,
        python=sys.version.split()[0],
        numpy=np.__version__,
        machine=platform.machine(),
        seed=SEED,
        bits=BITS,
        note="decide + learn pairs per second, one core; best of repeats (the machine is "
        "shared: noisy)",
        sizes=[],
    )
    for d, K in SIZES:
        n = (2_000 if args.quick else 20_000) if d == 5 else (500 if args.quick else 5_000)
        loops = [run(n, d, K, False) for _ in range(args.repeats)]
        built = [run(n, d, K, True) for _ in range(args.repeats)]
        best = max(loops, key=lambda r: r["per_s_cpu"])
        out["sizes"].append(
            dict(
                d=d,
                K=K,
                rounds=n,
                loop=best,
                loop_all_cpu=[round(r["per_s_cpu"]) for r in loops],
                with_building=max(built, key=lambda r: r["per_s_cpu"]),
                **decide_latency(n, d, K),
            )
        )
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
