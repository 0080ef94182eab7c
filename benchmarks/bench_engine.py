"""Engine speed: steps per second for every registered policy.

- the paper's synthetic problem (d=5, K=5, T=10,000) in batches of 1 and of 10;
- the paper's MNIST scale: 10 arms, 44 features, outer-product actions (d=440), batches of 10;
- a race of six policies over three seeds, 10,000 steps, end to end (environment included).

Times exclude the first (JIT-compiling or cache-loading) call. Numbers, not pass/fail:

    python benchmarks/bench_engine.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from allseason import api
from allseason.envs.arms import BlockArms
from allseason.envs.linear import LinearGaussianEnv
from allseason.policies import REGISTRY, Policy, make_policy

PARAMS = {
    "allseason-sw": dict(tau=10, n_max=5),
    "allseason-disc": dict(gamma=0.9, n_max=5),
    "sw-lints": dict(tau=100),
    "d-lints": dict(gamma=0.99),
}


def synthetic_round(batch):
    sc = api.Scenario.from_preset("paper-synthetic", batch_size=batch)
    env = LinearGaussianEnv(sc.pattern, sc.d, sc.n_arms, sc.sigma2, rng=0)
    return env.next_round(sc.horizon), sc.batch_ends(), sc.sigma2


def outer_product_round(T, n_arms=10, p=44, batch=10, seed=0):
    """Actions e_k (x) c_t: the contextualised vectors of a K-class classification problem,
    as BlockArms (the kernels keep K blocks of p x p instead of one 440 x 440 precision).
    Three seasons: the parameter blocks are permuted among the arms (the arm-shift setting)."""
    rng = np.random.default_rng(seed)
    ctx = rng.standard_normal((T, p))
    ctx /= np.linalg.norm(ctx, axis=1, keepdims=True)
    base = rng.standard_normal((n_arms, p))
    perms = [rng.permutation(n_arms) for _ in range(3)]
    state = (np.arange(T) // 2000) % 3
    expected = np.stack([ctx @ base[perm].T for perm in perms])[state, np.arange(T)]
    noise = 0.3 * rng.standard_normal(T)
    return BlockArms(ctx, n_arms), expected, noise, np.arange(batch - 1, T, batch), state


def steps_per_second(name, arms, expected, noise, ends, sigma2, repeat=3, states=None):
    best = np.inf
    for r in range(repeat + 1):
        policy = make_policy(
            name,
            arms.shape[2],
            rng=r,
            **PARAMS.get(name, {}),
            **({"sigma2": sigma2} if name != "random" else {}),
        )
        if policy.oracle:  # an oracle is told the true states, as the runner does
            policy.observe_states(states)
        t0 = time.perf_counter()
        policy.run_chunk(arms, expected, noise, ends)
        dt = time.perf_counter() - t0
        if r:  # the first run pays for compilation / cache loading
            best = min(best, dt)
    return arms.shape[0] / best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="shorter d=440 run")
    args = parser.parse_args(argv)
    names = [n for n in REGISTRY]
    print("steps per second (best of 3), paper-synthetic d=5 K=5 T=10,000")
    print(f"{'policy':<16} {'batch 1':>12} {'batch 10':>12}")
    for name in names:
        row = []
        for batch in (1, 10):
            rnd, ends, sigma2 = synthetic_round(batch)
            row.append(
                steps_per_second(
                    name, rnd.arms, rnd.expected, rnd.noise, ends, sigma2, states=rnd.state
                )
            )
        print(f"{name:<16} {row[0]:>12,.0f} {row[1]:>12,.0f}")

    T = 3000 if args.quick else 30_000
    arms, expected, noise, ends, state = outer_product_round(T)
    print(f"\nouter-product problem K=10, p=44 (d=440), batch 10, T={T} (block-diagonal)")
    print(f"{'policy':<16} {'steps/s':>12} {'30,000 steps':>14}")
    for name in names:
        compiled = type(make_policy(name, 440, rng=0)).run_chunk is not Policy.run_chunk
        n = T if compiled else min(T, 1000)  # plain-Python baselines: a shorter run
        sps = steps_per_second(
            name, arms[:n], expected[:n], noise[:n], ends[ends < n], 0.09, 1, state[:n]
        )
        print(f"{name:<16} {sps:>12,.0f} {30000 / sps:>12.1f} s")

    race = api.default_race()
    api.run_race(race)  # warm
    t0 = time.perf_counter()
    api.run_race(race)
    print(
        f"\nrace: {len(race.policies)} policies x {race.n_seeds} seeds x "
        f"{race.scenario.horizon} steps, end to end: {time.perf_counter() - t0:.3f} s"
    )


if __name__ == "__main__":
    main()
