"""Compile every registered policy's numba kernels once, before the tests run in parallel.

numba keeps compiled kernels on disk (``cache=True``: ``allseason/kernels/__pycache__``). On a
fresh clone the cache is empty, and the pytest-xdist workers would each compile the same
kernels at the same time (about 40 s of CPU for the default race's kernels alone, 80 s for
every policy's; measured). ``make test`` runs this first: the workers then load the kernels.
A tiny race (two seasons of 20 steps, batches of 1 and 3) of every registered policy, after
:func:`allseason.api.warm_up` (the app's kernels, the spawning variant included).
"""

from __future__ import annotations

import time

from allseason import api


def main() -> None:
    t0 = time.perf_counter()
    api.warm_up()
    scenario = api.Scenario(segments=((0, 20), (1, 20)), batch_size=(1, 3), preset="custom")
    api.run_race(api.Race(scenario, api.policy_specs(api.policy_names()), 1))
    print(f"compiled kernels ready in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
