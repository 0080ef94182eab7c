"""CPU time of one dense-arm Monte Carlo pi (allseason/kernels/agent_mc.py), and its
standard error against the unstratified one.

    python benchmarks/bench_pi_mc.py [--calls 200] [--repeat 5] [--bandits 5]

A bank of ``--bandits`` random bandits (Dirichlet weights), at d = 5 / K = 5 and d = 50 / K = 20,
n_mc = 4096 and 1024: microseconds of CPU per call (the median of ``--repeat`` runs of
``--calls`` calls with fresh keys), the mean standard error returned, and the binomial
``sqrt(max pi (1 - pi) / n_mc)`` of drawing the bandit per draw. Where
``allseason.kernels.agent._pi_mc`` (the per-draw mixture it replaced, removed after it was
measured: 1,646 against 276 us per call at d = 5, K = 5, n_mc = 4096, 2026-11-27) exists, as in
a checkout before that, its rows are timed too, alternating (CPU time, paired).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from allseason.kernels import agent as kagent
from allseason.kernels.agent_mc import pi_mc


def bank(S: int, p: int, K: int, seed: int = 0) -> tuple:
    """A random bank of S dense-arm bandits (G = 1) and K arms, as ``pi_mc``'s arguments
    without ``pi``, ``key`` and ``n_mc``."""
    rng = np.random.default_rng(seed)
    L = np.empty((S, 1, p, p))
    for s in range(S):
        B = rng.standard_normal((p, 3 * p)) / np.sqrt(p)
        L[s, 0] = np.linalg.cholesky(B @ B.T + 0.5 * np.eye(p))
    mu = rng.standard_normal((S, 1, p))
    Lt = np.eye(p)[None]
    w = rng.dirichlet(np.ones(S))
    X = rng.standard_normal((K, p)) / np.sqrt(p)
    block, cidx = np.zeros(K, np.int64), np.arange(K, dtype=np.int64)
    return X, block, cidx, L, mu, Lt, np.ones(S, dtype=bool), False, w


def _time(fn, b, n_mc, calls):
    X = b[0]
    K, p = X.shape
    pi, theta, tmp, tmp2 = np.empty(K), np.empty((1, p)), np.empty(p), np.empty(p)
    ses, pis = [], []
    c0 = time.process_time()
    for i in range(calls):
        pi[:] = 0.0  # the per-draw kernel adds into pi (decide_step zeroes it)
        ses.append(fn(*b, pi, 1000 + i, n_mc, theta, tmp, tmp2))
        pis.append(pi.copy())
    cpu = (time.process_time() - c0) / calls * 1e6
    mean = np.mean(pis, axis=0)
    return cpu, float(np.mean(ses)), float(np.sqrt((mean * (1 - mean)).max() / n_mc))


def main(argv=None) -> None:
    """Print one row per (d, K, n_mc, kernel)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--bandits", type=int, default=5)
    args = ap.parse_args(argv)
    kernels = {"stratified": pi_mc}
    old = getattr(kagent, "_pi_mc", None)
    if old is not None:
        kernels["per-draw mixture"] = old
    for p, K in [(5, 5), (50, 20)]:
        b = bank(args.bandits, p, K)
        calls = args.calls if p == 5 else max(1, args.calls // 10)
        for n_mc in (4096, 1024):
            runs: dict[str, list] = {name: [] for name in kernels}
            for fn in kernels.values():
                _time(fn, b, n_mc, 2)  # compiles (or loads the cache)
            for _ in range(args.repeat):
                for name, fn in kernels.items():
                    runs[name].append(_time(fn, b, n_mc, calls))
            for name, rows in runs.items():
                cpu = float(np.median([r[0] for r in rows]))
                print(
                    f"d={p:2d} K={K:2d} n_mc={n_mc:5d} {name:17s} {cpu:9.1f} us/call  "
                    f"se {rows[0][1]:.4f} (binomial {rows[0][2]:.4f})"
                )


if __name__ == "__main__":
    main()
