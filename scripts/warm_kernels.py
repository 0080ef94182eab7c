"""Compile every registered policy's numba kernels once, before the tests run in parallel.

numba keeps compiled kernels on disk (``cache=True``: ``allseason/kernels/__pycache__``). On a
fresh clone the cache is empty, and the pytest-xdist workers would each compile the same
kernels at the same time (about 40 s of CPU for the default race's kernels alone, 80 s for
every policy's; measured). ``make test`` runs this first: the workers then load the kernels.
A tiny race (two seasons of 20 steps, batches of 1 and 3) of every registered policy, after
:func:`allseason.api.warm_up` (the app's kernels, the spawning variant included); then the
deployable agent's kernels (decide with every kind of pi, learn with batches of 1 and 10), which
no race compiles.
"""

from __future__ import annotations

import time

import numpy as np

from allseason import api


def main() -> None:
    t0 = time.perf_counter()
    api.warm_up()
    scenario = api.Scenario(segments=((0, 20), (1, 20)), batch_size=(1, 3), preset="custom")
    api.run_race(api.Race(scenario, api.policy_specs(api.policy_names()), 1))
    _warm_agent()
    print(f"compiled kernels ready in {time.perf_counter() - t0:.1f} s")


def _warm_agent() -> None:
    """A few decisions and rewards of LinTS and All-Season (SW) agents in both shapes: dense
    arms K = 2 (exact pi) and K = 5 (Monte Carlo), context mode (quadrature)."""
    rng = np.random.default_rng(0)
    for policy in ("lints", "allseason-sw"):
        for batch_size in (1, 10):
            for shape, K in (("arms", 2), ("arms", 5), ("context", 3)):
                kw = {"n_arms": K} if shape == "context" else {}
                agent = api.Agent(policy, d=3, seed=0, batch_size=batch_size, n_mc=64, **kw)
                for e in range(25):
                    if shape == "arms":
                        rec = agent.decide(rng.standard_normal((K, 3)), event_id=e, t=float(e))
                    else:
                        rec = agent.decide(context=rng.standard_normal(3), event_id=e, t=float(e))
                    agent.learn(e, float(rec.arm == 0), t=float(e))


if __name__ == "__main__":
    main()
