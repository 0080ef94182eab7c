"""The contest played in every cell of the map: who races, the tuning rule, and what a cell
reports.

**The tuning rule, the same for everyone.** Each contestant has a small grid of its main
hyperparameter (:data:`GRIDS`: a window, a discount, All-Season's tau or gamma). On the
tuning seeds (:data:`TUNE_SEEDS`, seed indices never shown) every setting runs; the setting
with the best mean reward is kept (ties: the first in grid order). The kept settings then run
on the shown seeds (:data:`SHOWN_SEEDS`), and only those runs are reported. So each
contestant is compared at its best for this world, not at defaults tuned for another one.
LinTS (no forgetting hyperparameter) and the per-state oracle run as they are.

**A cell** (:func:`summarise`): the mean reward of each contestant on the shown seeds; the
best baseline b (the baseline with the best mean, chosen on the shown seeds, which favours
the baselines); for All-Season (SW) and (Disc) the paired difference against b, seed by seed
(every contestant of a seed meets the same arms and noise), with its 95% Student t interval,
and the share of the oracle gap closed, (m - b) / (o - b) with o the per-state oracle's mean.
A difference is *significant* when its interval excludes 0.
"""

from __future__ import annotations

import json
import math

import numpy as np

from ..specs import PolicySpec
from ..stats import ci95_halfwidth
from ..sweeps.spec import Unit, canonical_json

#: label: (registered name, fixed params, {hyperparameter: grid})
GRIDS: dict[str, tuple[str, dict[str, object], dict[str, list[float]]]] = {
    "allseason-sw": ("allseason-sw", {"n_max": 5}, {"tau": [5, 10, 30]}),
    "allseason-disc": ("allseason-disc", {"n_max": 5}, {"gamma": [0.8, 0.9, 0.97]}),
    "sw-lints": ("sw-lints", {}, {"tau": [20, 60, 200, 600, 2000]}),
    "d-lints": (
        "d-lints",
        {"covariance": "kim-tewari"},
        {"gamma": [0.9, 0.97, 0.99, 0.997]},
    ),
    "lints": ("lints", {}, {}),
    "oracle-state": ("oracle-state", {}, {}),
}
ALLSEASON = ("allseason-sw", "allseason-disc")
BASELINES = ("sw-lints", "d-lints", "lints")
ORACLE = "oracle-state"
TUNE_SEEDS = (100, 101, 102)  # seed indices for the choice, never shown
SHOWN_SEEDS = tuple(range(10))  # the seed indices shown (and reported)
TITLES = {
    "allseason-sw": "All-Season (SW)",
    "allseason-disc": "All-Season (Disc)",
    "sw-lints": "SW-LinTS",
    "d-lints": "D-LinTS",
    "lints": "LinTS",
    "oracle-state": "Oracle (per-state LinTS)",
}


def settings(label: str) -> list[dict]:
    """Every setting (full params) of one contestant's grid, in grid order."""
    _, fixed, grid = GRIDS[label]
    if not grid:
        return [dict(fixed)]
    ((name, values),) = grid.items()
    return [{**fixed, name: v} for v in values]


def spec(label: str, params: dict) -> PolicySpec:
    """The PolicySpec of one setting (label = the contestant: common random numbers)."""
    return PolicySpec(GRIDS[label][0], params, label)


def tuning_units(scenario) -> list[Unit]:
    """Stage 1: every setting of every contestant with a grid, on the tuning seeds."""
    return [
        Unit(scenario, spec(label, p), k)
        for k in TUNE_SEEDS
        for label in GRIDS
        if GRIDS[label][2]
        for p in settings(label)
    ]


def choose(rows) -> dict[str, dict]:
    """The kept setting of each contestant: the best mean reward over the tuning seeds
    (ties: the first in grid order). ``rows``: dicts with label, params (JSON), seed_index,
    mean_reward (the tuning runs of one scenario)."""
    out: dict[str, dict] = {}
    for label in GRIDS:
        best: dict | None = None
        best_m = -math.inf
        for p in settings(label):
            key = canonical_json(p)
            vals = [
                r["mean_reward"]
                for r in rows
                if r["label"] == label and r["params"] == key and r["seed_index"] in TUNE_SEEDS
            ]
            if not GRIDS[label][2]:
                best = p
                break
            if len(vals) != len(TUNE_SEEDS):
                raise ValueError(f"{label} {p}: {len(vals)} tuning runs, {len(TUNE_SEEDS)} needed")
            m = float(np.mean(vals))
            if m > best_m:
                best, best_m = p, m
        if best is None:
            raise ValueError(f"{label}: no setting has a mean reward (NaN in its tuning runs)")
        out[label] = best
    return out


def shown_units(scenario, chosen: dict[str, dict], seeds=SHOWN_SEEDS) -> list[Unit]:
    """Stage 2: the kept setting of every contestant on the shown ``seeds``."""
    return [Unit(scenario, spec(label, chosen[label]), k) for k in seeds for label in GRIDS]


def per_seed(rows, chosen: dict[str, dict], seeds=SHOWN_SEEDS) -> dict[str, list[float]]:
    """label -> mean reward on each shown seed (in ``seeds`` order) of its kept setting."""
    out = {}
    for label, p in chosen.items():
        key = canonical_json(p)
        by_seed = {
            r["seed_index"]: r["mean_reward"]
            for r in rows
            if r["label"] == label and r["params"] == key
        }
        missing = [k for k in seeds if k not in by_seed]
        if missing:
            raise ValueError(f"{label}: no run for shown seeds {missing}")
        out[label] = [float(by_seed[k]) for k in seeds]
    return out


def paired(a, b) -> tuple[float, float]:
    """Mean and 95% Student t half-width of the paired differences a - b over seeds."""
    diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    return float(diff.mean()), float(ci95_halfwidth(diff.std(ddof=1), len(diff)))


def summarise(rewards: dict[str, list[float]]) -> dict:
    """What a cell reports (module docstring) from label -> per-seed mean rewards."""
    means = {label: float(np.mean(v)) for label, v in rewards.items()}
    base = max(BASELINES, key=lambda lab: means[lab])
    b, o = means[base], means[ORACLE]
    out = {"means": means, "best_baseline": base}
    for label in ALLSEASON:
        d, half = paired(rewards[label], rewards[base])
        gap = (means[label] - b) / (o - b) if o - b > 0 else float("nan")
        out[label] = {
            "diff": d,
            "half": half,
            "significant": bool(abs(d) > half),
            "gap_closed": gap,
        }
    return out


def verdict(cell: dict, label: str = "allseason-sw") -> str:
    """ "wins", "loses" or "tie" (interval across 0) for one All-Season variant."""
    c = cell[label]
    if not c["significant"]:
        return "tie"
    return "wins" if c["diff"] > 0 else "loses"


def rows_from_store(store, units) -> list[dict]:
    """The stored rows (label, params, seed_index, mean_reward) of these units."""
    keys = [u.key for u in units]
    out = []
    con = store.con
    for i in range(0, len(keys), 500):
        part = keys[i : i + 500]
        marks = ",".join("?" * len(part))
        q = f"SELECT label, params, seed_index, mean_reward FROM runs WHERE key IN ({marks})"
        for label, params, seed, m in con.execute(q, part):
            out.append({"label": label, "params": params, "seed_index": seed, "mean_reward": m})
    return out


def describe_choice(chosen: dict[str, dict]) -> dict[str, dict]:
    """Only the tuned hyperparameter of each kept setting (JSON-ready)."""
    out = {}
    for label, p in chosen.items():
        grid = GRIDS[label][2]
        out[label] = {k: p[k] for k in grid}
    return json.loads(json.dumps(out))
