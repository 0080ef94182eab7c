"""The cost estimates (:mod:`allseason.costs`) against measured CPU time on 20 requests of
different sizes: races (the Race page, "Race it to check"), map cells and sweeps; and three
log evaluations (Your data: ``costs.estimate_replay``, which also sets how many of a large
log's first events the page evaluates, :mod:`allseason.logs.subsample`).

    python benchmarks/cost_check.py     # prints the table; exit 1 if one is off by > 2x

CPU-seconds (``time.process_time``: this process and its threads) are compared, not wall
time: the machine is shared, and a budget is about the work a request asks for."""

from __future__ import annotations

import sys
import time

from allseason import api, costs
from allseason.sweeps.execute import run_unit
from allseason.sweeps.spec import SweepSpec
from allseason.worldmap import contest
from allseason.worldmap.knobs import Knobs

DEFAULT = list(api.DEFAULT_POLICIES)


def _race(horizon, d, k, names, seeds, preset="paper-synthetic"):
    sc = api.Scenario.from_preset(preset, horizon=horizon, d=d, n_arms=k)
    return api.Race(sc, api.default_specs(tuple(names)), seeds)


RACES = [
    ("race default 2k", _race(2000, 5, 5, DEFAULT, 5)),
    ("race default 10k", _race(10_000, 5, 5, DEFAULT, 5)),
    ("race default 10k d20 K50", _race(10_000, 20, 50, DEFAULT, 2)),
    ("race lints 5k", _race(5000, 5, 5, ["lints"], 3)),
    ("race lints 20k d20 K50", _race(20_000, 20, 50, ["lints"], 1)),
    ("race allseason-sw 20k", _race(20_000, 5, 5, ["allseason-sw"], 2)),
    ("race allseason 5k d10 K20", _race(5000, 10, 20, ["allseason-sw", "allseason-disc"], 2)),
    ("race ucb 3k", _race(3000, 5, 5, ["bob", "dlinucb"], 2)),
    ("race denband 5k d10 K10", _race(5000, 10, 10, ["denband"], 2)),
    ("race oracles 10k", _race(10_000, 5, 5, ["oracle-state", "oracle-restart"], 3)),
    ("race 3 pol 30k", _race(30_000, 5, 5, ["lints", "sw-lints", "allseason-sw"], 1)),
    ("check: 10k d20 K50", _race(10_000, 20, 50, ["allseason-sw", "sw-lints", "lints"], 1)),
    ("race d-lints 8k d15 K30", _race(8000, 15, 30, ["d-lints"], 2)),
    ("race random 50k", _race(50_000, 5, 5, ["random"], 1)),
]


def _cell(season_length, **kw):
    sc = Knobs(season_length=season_length, **kw).scenario()
    return contest.tuning_units(sc) + contest.shown_units(
        sc, {lab: contest.settings(lab)[0] for lab in contest.GRIDS}
    )


UNITS = [
    ("map cell L=50", _cell(50)),
    ("map cell L=200", _cell(200)),
    ("map cell L=400 d10 K10", _cell(400, d=10, n_arms=10)),
    ("sweep small (examples)", SweepSpec.from_file("examples/sweep_small.toml").units()),
    ("map cell L=100 batch 10", _cell(100, batch_size=10)),
    ("sweep share (examples)", None),
]


# (name, events of the OBD-like example, seeds): the page's replays of an upload (one thread)
REPLAYS = [("replay 2k events 2 seeds", 2000, 2), ("replay 5k events 1 seed", 5000, 1)]
REPLAYS += [("replay 10k events 2 seeds", 10_000, 2)]


def main() -> int:
    api.warm_up()  # and calibrate(): this machine's factor over the stored prices
    snap = costs.prices()
    print(
        f"prices measured {snap['measured']} on {snap.get('machine', 'an earlier machine')}; "
        f"this machine's factor {costs.machine_factor():.2f}",
        flush=True,
    )
    rows = []
    from allseason.logs import examples

    for name, n, seeds in REPLAYS:
        log = api.read_user_file(examples.obd_log(n_rows=n), "log")
        est = api.estimate_replay(log, seeds)
        t0 = time.process_time()
        api.evaluate(log, None, seeds, 0, workers=1)
        rows.append((name, est, time.process_time() - t0))
        print(f"{name:<28} estimated {est:7.2f} s  measured {rows[-1][2]:7.2f} s", flush=True)
    for name, race in RACES:
        est = costs.estimate_race(race)
        t0 = time.process_time()
        api.run_race(race)
        rows.append((name, est, time.process_time() - t0))
        print(f"{name:<28} estimated {est:7.2f} s  measured {rows[-1][2]:7.2f} s", flush=True)
    for name, units in UNITS:
        if units is None:
            units = SweepSpec.from_file("examples/sweep_share.toml").units()[:60]
        est = costs.estimate_units(units)
        t0 = time.process_time()
        for u in units:
            run_unit(u)
        rows.append((name, est, time.process_time() - t0))
        print(f"{name:<28} estimated {est:7.2f} s  measured {rows[-1][2]:7.2f} s", flush=True)
    print("\n| request | estimated CPU-s | measured CPU-s | ratio |\n|---|---:|---:|---:|")
    worst = 1.0
    for name, est, got in rows:
        ratio = est / got
        worst = max(worst, ratio, 1 / ratio)
        print(f"| {name} | {est:.2f} | {got:.2f} | {ratio:.2f} |")
    print(f"\nworst factor {worst:.2f} over {len(rows)} requests")
    return 0 if worst <= 2 else 1


if __name__ == "__main__":
    sys.exit(main())
