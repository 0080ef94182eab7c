"""Compile every registered policy's numba kernels once, before the tests run in parallel.

numba keeps compiled kernels on disk (``cache=True``: ``allseason/kernels/__pycache__``). On a
fresh clone the cache is empty, and the pytest-xdist workers would each compile the same
kernels at the same time (about 40 s of CPU for the default race's kernels alone, 80 s for
every policy's; measured). ``make test`` runs this first: the workers then load the kernels.

Two parts, each in a process of its own, at the same time (compiling is single-core):

- ``app``: :func:`allseason.api.warm_up` (the app's kernels: the default race, and the
  spawning variant), then the deployable agent's kernels (decide with every kind of pi, learn
  with batches of 1 and 10), which no race compiles. The agent's learning calls the race's
  batch updates (``kernels.allseason.allseason_batch``, ``kernels.lints.lints_batch`` and their
  helpers): compiled first by the race in the same process, they are loaded, not compiled a
  second time (when the agent had a process of its own, both compiled them; yet the CPU saved
  is within two paired runs' noise: each caller links and optimises them again);
- ``rest``: the offline evaluation's probabilities of the logged arm (``logs.policy_probs``: a
  Gaussian argmax, ``kernels/argmax.py``; each test process compiled it on its first
  evaluation: 14 CPU-s), first, since the agent's pi calls the same module's helpers (the
  ``app`` part reaches the agent after it, and loads them); then a tiny race (two seasons of
  20 steps, batches of 1 and 3) of every registered policy but the default race's (the ridge
  and DenBand kernels, which share nothing with the others).

``--part app`` or ``--part rest`` runs one part in this process. ``make test`` starts this as
soon as the engine's packages are installed, beside the rest of the install and the lint
(Makefile, target ``setup``).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np

PARTS = ("app", "rest")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=PARTS, help="run this part alone, in this process")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    if args.part:
        _warm(args.part)
        wall, cpu = time.perf_counter() - t0, time.process_time()
        print(f"{args.part}: {wall:.1f} s ({cpu:.1f} s of CPU)", flush=True)
        return 0
    procs = [subprocess.Popen([sys.executable, __file__, "--part", part]) for part in PARTS]
    codes = [p.wait() for p in procs]
    if any(codes):
        print(f"warm-up failed: exit codes {codes}", file=sys.stderr)
        return 1
    print(f"compiled kernels ready in {time.perf_counter() - t0:.1f} s")
    return 0


def _warm(part: str) -> None:
    from allseason import api

    if part == "app":
        api.warm_up()
        _warm_agent()
        return
    from allseason.logs.policy_probs import gaussian_argmax_probs

    gaussian_argmax_probs(np.array([[0.0, 0.5, 1.0]]), np.ones((1, 3)))
    defaults = {spec.name for spec in api.default_specs()}
    others = [name for name in api.policy_names() if name not in defaults]
    scenario = api.Scenario(segments=((0, 20), (1, 20)), batch_size=(1, 3), preset="custom")
    api.run_race(api.Race(scenario, api.policy_specs(others), 1))


def _warm_agent() -> None:
    """A few decisions and rewards of LinTS and All-Season (SW) agents in both shapes: dense
    arms K = 2 (exact pi) and K = 5 (Monte Carlo), context mode (quadrature)."""
    from allseason import api

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
        agent = api.Agent(policy, d=3, seed=0, propensities=False)  # the hot path (agent_hot)
        for e in range(5):
            agent.learn(e, float(agent.decide(rng.standard_normal((5, 3)), event_id=e).arm))


if __name__ == "__main__":
    sys.exit(main())
