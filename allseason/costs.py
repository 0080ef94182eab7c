"""What a request costs, known before it runs: CPU-seconds estimated as steps x seeds x the
per-step price of each policy, measured once and stored in ``allseason/costs.json``
(``python benchmarks/cost_prices.py`` measures it again), times this machine's factor.

The factor is measured at start-up: :func:`allseason.api.warm_up`, once the kernels are
compiled, times a few short runs (:data:`CALIBRATION`, about 40 ms) and :func:`calibrate`
divides by their time where the prices were measured, so that prices measured on one
machine serve another (its cores 2.3 times slower, say). Until it is measured, and wherever
``ALLSEASON_COST_FACTOR`` is set (the tests: estimates that do not depend on the machine),
the factor is 1 or that value.

A policy's price per step grows with the arms' features it reads, K x d: it is measured at
two sizes (d = 5, K = 5 and d = 20, K = 50) and taken on the line through them (never below
the smaller). ``benchmarks/cost_check.py`` compares the estimates with measured times.

    >>> from allseason.specs import Race, Scenario
    >>> race = Race(Scenario(), ["lints", "allseason-sw"], n_seeds=2)
    >>> 0 < estimate_race(race) < 10
    True
"""

from __future__ import annotations

import functools
import json
import math
import os
import shlex
from pathlib import Path

from .errors import SpecError
from .limits import COST_BUDGET_SECONDS
from .policies import role
from .specs import Race

PRICES_FILE = Path(__file__).with_name("costs.json")
# A replay of a log costs this many times a race's steps of the same policies at the log's d
# and K: pi at every event (quadrature or Monte Carlo), the kept-event bookkeeping and the
# estimators' terms. Measured 2026-11-27 on the OBD-like example (examples.obd_log, 20,000
# events, K = 10, d = 10, the six offline contestants, 1 and 2 seeds, one thread): 14.7 and
# 16.7 (CPU 8.6 and 19.4 s) on a loaded 2-core machine.
REPLAY_FACTOR = 8.5


@functools.lru_cache(maxsize=1)
def prices() -> dict:
    """The stored snapshot: ``{"sizes": [[d, K], [d, K]], "prices": {name: [s, s]},
    "families": {family: [s, s]}, "run_overhead_s": s, "calibration_s": s, "measured": ...}``
    (seconds per step at each size, beyond one run's set-up; the calibration's seconds)."""
    return json.loads(PRICES_FILE.read_text(encoding="utf-8"))


# short runs of the calibration: (policy, d, K, steps), the kernels' two sizes and the
# memories' two costs (about 40 ms of CPU on a 2026 core, three times)
CALIBRATION = (("lints", 5, 5, 2000), ("allseason-sw", 5, 5, 2000), ("allseason-sw", 20, 50, 300))
FACTOR_ENV = "ALLSEASON_COST_FACTOR"
FACTOR_RANGE = (0.05, 50.0)  # a measured factor outside: a broken clock, not a machine
_factor: list[float | None] = [None]  # measured by calibrate()


def machine_factor() -> float:
    """The time of this machine over the stored prices' (1 until :func:`calibrate` has run);
    ``ALLSEASON_COST_FACTOR``, when set, is used instead (a number in :data:`FACTOR_RANGE`)."""
    text = os.environ.get(FACTOR_ENV)
    if text:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        lo, hi = FACTOR_RANGE
        if not lo <= value <= hi:
            raise SpecError(FACTOR_ENV, f"{FACTOR_ENV} must be a number in [{lo}, {hi}]")
        return value
    return _factor[0] or 1.0


def calibrate(measure) -> float:
    """Set :func:`machine_factor` from ``measure()``, the :data:`CALIBRATION` runs' CPU-seconds
    here (:func:`allseason.sweeps.calibration.calibration_seconds`), over their seconds where the
    prices were measured (the snapshot's ``calibration_s``), bounded by :data:`FACTOR_RANGE`.
    Measures nothing, and returns that value, where ``ALLSEASON_COST_FACTOR`` is set."""
    if os.environ.get(FACTOR_ENV):
        return machine_factor()
    lo, hi = FACTOR_RANGE
    factor = min(hi, max(lo, measure() / prices()["calibration_s"]))
    _factor[0] = factor
    return factor


def step_price(name: str, d: int, n_arms: int) -> float:
    """Seconds per step of policy ``name`` at dimension ``d`` with ``n_arms`` arms (its
    family's price for a policy measured under no name of its own)."""
    snap = prices()
    (d0, k0), (d1, k1) = snap["sizes"]
    p0, p1 = snap["prices"].get(name) or snap["families"][role(name).family]
    x0, x1, x = d0 * k0, d1 * k1, d * n_arms
    return max(min(p0, p1), p0 + (p1 - p0) * (x - x0) / (x1 - x0))


def _stored_runs(
    horizon: int, d: int, n_arms: int, names, n_seeds: int, shared_world: bool = False
) -> float:
    world = step_price("random", d, n_arms) if shared_world else 0.0
    overhead = prices()["run_overhead_s"]
    per_seed = sum(horizon * (step_price(n, d, n_arms) - world) + overhead for n in names)
    return (per_seed + horizon * world) * n_seeds


def estimate_runs(
    horizon: int, d: int, n_arms: int, names, n_seeds: int, shared_world: bool = False
) -> float:
    """CPU-seconds of ``n_seeds`` runs of each of ``names`` on a world of ``horizon``
    steps, dimension ``d``, ``n_arms`` arms, on this machine (:func:`machine_factor`). A
    price includes drawing the world (what ``random`` costs); in a race the policies of a
    seed share one world (``shared_world``), so it is counted once a seed."""
    stored = _stored_runs(horizon, d, n_arms, names, n_seeds, shared_world)
    return stored * machine_factor()


def estimate_race(race: Race) -> float:
    """CPU-seconds of a race (every policy on every seed, a world drawn once a seed)."""
    sc = race.scenario
    names = [s.name for s in race.policies]
    return estimate_runs(sc.horizon, sc.d, sc.n_arms, names, race.n_seeds, shared_world=True)


def estimate_units(units) -> float:
    """CPU-seconds of sweep or map runs (each alone, :class:`allseason.sweeps.Unit`)."""
    return sum(
        estimate_runs(u.scenario.horizon, u.scenario.d, u.scenario.n_arms, [u.policy.name], 1)
        for u in units
    )


def estimate_replay(n_events: int, d: int, n_arms: int, names, n_seeds: int) -> float:
    """CPU-seconds of replaying a log of ``n_events`` events (features of dimension ``d``,
    ``n_arms`` arms) with each of ``names`` on ``n_seeds`` seeds, pi at every event
    (:data:`REPLAY_FACTOR` times the race's price of the same steps).

    >>> 1 < estimate_replay(20_000, 10, 10, ["lints", "allseason-sw"], 5) < 1000
    True
    """
    return REPLAY_FACTOR * estimate_runs(n_events, d, n_arms, list(names), n_seeds)


def events_within(
    budget: float, d: int, n_arms: int, names, n_seeds: int, replay: bool = False
) -> int:
    """The most steps (a replay: events) that ``n_seeds`` runs of each of ``names`` at
    dimension ``d`` with ``n_arms`` arms can take within ``budget`` CPU-seconds: the inverse
    of :func:`estimate_runs` (``replay``: of :func:`estimate_replay`); 0 if none.

    >>> n = events_within(60.0, 10, 10, ["lints", "random"], 5, replay=True)
    >>> estimate_replay(n, 10, 10, ["lints", "random"], 5) <= 60.0
    True
    >>> estimate_replay(n + 1, 10, 10, ["lints", "random"], 5) > 60.0
    True
    """
    names = list(names)
    per_run = budget / ((REPLAY_FACTOR if replay else 1.0) * n_seeds * machine_factor())
    per_step = sum(step_price(n, d, n_arms) for n in names)
    room = per_run - prices()["run_overhead_s"] * len(names)
    return max(0, int(room / per_step)) if per_step > 0 else 0


def command_line(race: Race) -> str:
    """The command that runs ``race`` from a terminal (no budget there)."""
    sc = race.scenario
    args = ["python", "-m", "allseason", "run"]
    if sc.preset in (None, "custom"):
        args += ["--pattern", "FILE.json"]
    else:
        args += ["--pattern", sc.preset, "--horizon", str(sc.horizon)]
    args += ["--d", str(sc.d), "--arms", str(sc.n_arms), "--sigma2", f"{sc.sigma2:g}"]
    args += ["--seeds", str(race.n_seeds)]
    args += ["--policies", ",".join(s.name for s in race.policies)]
    return shlex.join(args)


def check_budget(seconds: float, budget: float = COST_BUDGET_SECONDS, command: str = "") -> None:
    """SpecError("budget", ...) when an estimate is above the per-request ``budget``, with
    the budget and the command that runs it without one."""
    if seconds > budget:
        then = f"; run it from a terminal: {command}" if command else ""
        raise SpecError(
            "budget",
            f"this request is estimated at {seconds:,.0f} CPU-seconds; at most {budget:,.0f} "
            f"per request here (limits.COST_BUDGET_SECONDS){then}",
            bounds=(0, budget),
            got=seconds,
        )


__all__ = [
    "prices",
    "machine_factor",
    "calibrate",
    "CALIBRATION",
    "step_price",
    "estimate_runs",
    "estimate_race",
    "estimate_units",
    "estimate_replay",
    "events_within",
    "REPLAY_FACTOR",
    "command_line",
    "check_budget",
]
