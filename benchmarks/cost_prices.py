"""Measure the per-step price of every policy (CPU-seconds per step, one thread) at two
sizes and store them in ``allseason/costs.json``, the snapshot :mod:`allseason.costs`
estimates from.

    python benchmarks/cost_prices.py            # measure and write allseason/costs.json
    python benchmarks/cost_prices.py --dry-run  # print only

Each price is the median of 3 runs of one policy alone (the sweeps' ``run_unit``: the
environment's draws included) less one run's set-up (the median of 9 runs of 10 steps,
stored as ``run_overhead_s``), CPU time (``time.process_time``), after a warm-up, so that
other processes on the machine count less than in wall time."""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from allseason import api
from allseason.costs import PRICES_FILE
from allseason.sweeps.calibration import calibration_seconds
from allseason.sweeps.execute import run_unit
from allseason.sweeps.spec import Unit

SIZES = ((5, 5), (20, 50))
STEPS = 3000


def _run_seconds(name: str, d: int, n_arms: int, steps: int, repeats: int) -> float:
    """Median CPU-seconds of one run of ``name`` alone on a paper-synthetic world."""
    sc = api.Scenario.from_preset("paper-synthetic", horizon=steps, d=d, n_arms=n_arms)
    spec = api.PolicySpec(name, api.default_params(name))
    times = []
    for k in range(repeats):
        t0 = time.process_time()
        run_unit(Unit(sc, spec, k))
        times.append(time.process_time() - t0)
    return statistics.median(times)


def run_overhead(repeats: int = 9) -> float:
    """One run's set-up in CPU-seconds: the median of 10-step runs of ``random``."""
    return _run_seconds("random", 5, 5, 10, repeats)


def measure(
    name: str, d: int, n_arms: int, overhead: float, steps: int = STEPS, repeats: int = 3
) -> float:
    """Median CPU-seconds per step of ``name`` alone, beyond one run's ``overhead``."""
    return max(0.0, _run_seconds(name, d, n_arms, steps, repeats) - overhead) / steps


def _cpu_model() -> str:
    """The processor's name (informative: :func:`allseason.costs.calibrate` scales the
    prices to the machine that reads them)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args(argv)
    api.warm_up()
    # first, as costs.calibrate() measures it: right after the warm-up (after other runs the
    # same runs take about 15% less here: the allocator's heap is then grown)
    calibration = calibration_seconds(repeats=9)
    overhead = run_overhead()
    print(f"one run's set-up: {overhead * 1e3:.2f} ms")
    prices = {}
    for name in api.policy_names():
        prices[name] = [measure(name, d, k, overhead) for d, k in SIZES]
        print(f"{name:<22} " + "  ".join(f"{p * 1e6:8.1f} us/step" for p in prices[name]))
    families = {}
    for name, p in prices.items():
        families.setdefault(api.role(name).family, []).append(p)
    snap = {
        "about": "CPU-seconds per step of each policy alone, at sizes (d, K); "
        "benchmarks/cost_prices.py",
        "measured": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": _cpu_model(),
        "sizes": [list(s) for s in SIZES],
        "prices": prices,
        "families": {f: list(np.max(ps, axis=0)) for f, ps in families.items()},
        "run_overhead_s": overhead,
        "calibration_s": calibration,
    }
    if not args.dry_run:
        Path(PRICES_FILE).write_text(json.dumps(snap, indent=1) + "\n", encoding="utf-8")
        print(f"written {PRICES_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
