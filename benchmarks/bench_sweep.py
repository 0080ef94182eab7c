"""Wall time of one sweep (48 runs by default) on 1 and on 2 local worker processes, the
speed-up, and the time of a rerun (which must do nothing). Optionally the same on a Dask
LocalCluster (``--dask``). The stores of every executor are checked to be identical.

    python benchmarks/bench_sweep.py [--seeds 6] [--horizon 20000] [--dask]

Numbers, not pass/fail: on a shared machine the speed-up depends on what else runs (the
load average is printed before and after).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from allseason import api, sweeps


def bench_spec(seeds: int, horizon: int) -> sweeps.SweepSpec:
    """8 settings x seeds on the paper's pattern stretched to ``horizon`` steps, d = K = 10."""
    scenario = api.Scenario.from_preset(
        "paper-synthetic", horizon=horizon, d=10, n_arms=10, batch_size=5
    )
    return sweeps.SweepSpec(
        scenarios=[scenario],
        policies=[
            sweeps.PolicyGrid("allseason-sw", grid={"tau": [20, 50], "n_max": [3, 5]}),
            sweeps.PolicyGrid("allseason-disc", grid={"gamma": [0.9, 0.95]}),
            sweeps.PolicyGrid("sw-lints", grid={"tau": [50, 500]}),
        ],
        seeds=seeds,
        name="bench",
    )


def _rows(folder):
    with sweeps.ResultStore(folder, create=False) as store:
        return {r["key"]: (r["mean_reward"], r["cum_regret"]) for r in store.rows()}


def timed(spec, folder, **executor) -> float:
    t0 = time.perf_counter()
    outcome = sweeps.run_sweep(spec, folder, progress=False, **executor)
    seconds = time.perf_counter() - t0
    assert outcome.n_failed == 0 and outcome.complete, outcome.errors
    return seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=6, help="seeds (8 settings each; 6)")
    parser.add_argument("--horizon", type=int, default=20_000, help="steps per run (20000)")
    parser.add_argument("--dask", action="store_true", help="also on a Dask LocalCluster")
    args = parser.parse_args(argv)
    spec = bench_spec(args.seeds, args.horizon)
    print(
        f"sweep: {spec.n_runs} runs ({spec.n_settings} settings x {len(spec.seeds)} seeds), "
        f"T={args.horizon}, d=K=10, batch 5; {os.cpu_count()} cores; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    executors = [("process pool", "processes")]
    if args.dask:
        executors.append(("Dask LocalCluster", "workers"))
    stores = []
    with tempfile.TemporaryDirectory() as tmp:
        for title, kw in executors:
            times = {}
            for n in (1, 2):
                folder = Path(tmp) / f"{kw}-{n}"
                times[n] = timed(spec, folder, **{kw: n})
                stores.append(_rows(folder))
                print(
                    f"{title:<18} {n} worker{'s' if n > 1 else ' '}: {times[n]:7.2f} s "
                    f"({spec.n_runs / times[n]:.1f} runs/s)"
                )
            print(f"{title:<18} speed-up 1 -> 2 workers: {times[1] / times[2]:.2f}x")
            t0 = time.perf_counter()
            again = sweeps.run_sweep(spec, Path(tmp) / f"{kw}-2", progress=False, **{kw: 2})
            print(
                f"{title:<18} rerun of the finished sweep: {again.n_ran} runs, "
                f"{time.perf_counter() - t0:.2f} s"
            )
    same = all(s == stores[0] for s in stores)
    print(f"identical results across executors and worker counts: {same}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
