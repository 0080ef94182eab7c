"""Recompute the default race's baseline hyperparameters with the rule of allseason/defaults.py
(best mean reward on the paper's grid, validation scenario seed 1000, 3 seeds) and compare
them with ``defaults.TUNED``. tests/sim/test_defaults.py recomputes SW-LinTS and D-LinTS; BoB and
DenBand take about 3 minutes here.

    python benchmarks/tune_baselines.py [--policies sw-lints,d-lints,bob,denband]
"""

from __future__ import annotations

import argparse
import time

from allseason import defaults
from allseason.paper import tuning


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--policies", default=",".join(defaults.TUNED))
    args = ap.parse_args()
    differ = 0
    for name in args.policies.split(","):
        t0 = time.perf_counter()
        best, scores = tuning.tune(name)
        same = best == defaults.TUNED.get(name)
        differ += not same
        print(
            f"{name}: best {best} ({'=' if same else '!='} TUNED), {time.perf_counter() - t0:.0f} s"
        )
        for params, score in scores:
            print(f"    {params}: {score:.4f}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
