"""Measure the per-step price of every policy (CPU-seconds per step, one thread) at two
sizes and store them in ``allseason/costs.json``, the snapshot :mod:`allseason.costs`
estimates from.

    python benchmarks/cost_prices.py            # measure and write allseason/costs.json
    python benchmarks/cost_prices.py --dry-run  # print only

Each price is the median of 3 runs of one policy alone (the sweeps' ``run_unit``: the
environment's draws included), CPU time (``time.process_time``), after a warm-up, so that
other processes on the machine count less than in wall time."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from allseason import api
from allseason.costs import PRICES_FILE
from allseason.sweeps.execute import run_unit
from allseason.sweeps.spec import Unit

SIZES = ((5, 5), (20, 50))
STEPS = 3000


def measure(name: str, d: int, n_arms: int, steps: int = STEPS, repeats: int = 3) -> float:
    """Median CPU-seconds per step of ``name`` alone on a paper-synthetic world."""
    sc = api.Scenario.from_preset("paper-synthetic", horizon=steps, d=d, n_arms=n_arms)
    spec = api.PolicySpec(name, api.default_params(name))
    times = []
    for k in range(repeats):
        t0 = time.process_time()
        run_unit(Unit(sc, spec, k))
        times.append((time.process_time() - t0) / steps)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    api.warm_up()
    prices = {}
    for name in api.policy_names():
        prices[name] = [measure(name, d, k) for d, k in SIZES]
        print(f"{name:<22} " + "  ".join(f"{p * 1e6:8.1f} us/step" for p in prices[name]))
    families = {}
    for name, p in prices.items():
        families.setdefault(api.role(name).family, []).append(p)
    snap = {
        "about": "CPU-seconds per step of each policy alone, at sizes (d, K); "
        "benchmarks/cost_prices.py",
        "measured": time.strftime("%Y-%m-%d", time.gmtime()),
        "sizes": [list(s) for s in SIZES],
        "prices": prices,
        "families": {f: list(np.max(ps, axis=0)) for f, ps in families.items()},
    }
    if not args.dry_run:
        Path(PRICES_FILE).write_text(json.dumps(snap, indent=1) + "\n", encoding="utf-8")
        print(f"written {PRICES_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
