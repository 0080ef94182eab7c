"""The knobs of a seasonal world, a synthetic world built from them, and the knobs of any
world estimated from its scenario (and its own environment, for worlds from data).

A world on the map is the linear Gaussian environment (paper eq. (reward)) on a regular
pattern: ``n_states`` states take turns, each season lasts ``season_length`` observations,
and every state comes back ``returns`` times after its first season, so the horizon is
``n_states * (returns + 1) * season_length``.

    >>> k = Knobs(season_length=100, n_states=2, returns=1)
    >>> k.scenario().segments
    ((0, 100), (1, 100), (0, 100), (1, 100))
    >>> est = estimate_knobs(k.scenario(), snr_steps=200)
    >>> est["season_length"], est["n_states"], est["returns"]
    (100.0, 2, 1.0)
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from ..errors import SpecError
from ..errors import show as _show
from ..limits import LIMITS, NOISE_RANGE
from ..specs import Scenario

#: name: (plain label, unit or note) of every knob, in screening order
KNOBS = {
    "season_length": ("season length", "observations per season"),
    "n_states": ("distinct states", "seasons that differ"),
    "returns": ("returns per state", "times each state comes back"),
    "n_arms": ("arms K", "choices per step"),
    "d": ("dimension d", "features per arm"),
    "sigma2": ("noise σ²", "reward noise variance"),
    "batch_size": ("batch size", "observations per feedback"),
}

#: name: (integer?, lowest, highest) level of every knob, checked before a world is built
RANGES = {
    "season_length": (True, 1, LIMITS["horizon"]),
    "n_states": (True, 1, LIMITS["n_states"]),
    "returns": (True, 0, LIMITS["n_segments"] - 1),
    "n_arms": (True, 2, LIMITS["n_arms"]),
    "d": (True, 1, LIMITS["d"]),
    "sigma2": (False, *NOISE_RANGE),
    "batch_size": (True, 1, LIMITS["batch_size"]),
}
# A run's memory (measured 2026-11, tracemalloc of one map run): its trace, at most about
# 400 B a step (All-Season's weights; 115-300 for the others), and one chunk of rounds
# (2,500 steps or a whole batch, K x d features, twice).
TRACE_BYTES_PER_STEP = 400
_CHUNK = 2_500


def check_level(knob: str, value, field: str | None = None):
    """A level of ``knob`` as an int (or a float for sigma2) within :data:`RANGES`; a
    SpecError naming ``field`` (default: the knob) otherwise: a list, a table, text, a
    bool, NaN or a number out of range never reach the world.

    >>> check_level("n_states", 3), check_level("sigma2", 1)
    (3, 1.0)
    >>> check_level("d", [5])
    Traceback (most recent call last):
    ...
    allseason.errors.SpecError: d: must be an integer from 1 to 500, got [5]
    """
    integer, lo, hi = RANGES[knob]
    field = field or knob
    kind = "an integer" if integer else "a number"
    ok = isinstance(value, (int, np.integer)) if integer else isinstance(value, (int, float))
    if isinstance(value, (bool, np.bool_)) or not ok:
        raise SpecError(field, f"must be {kind} from {lo:g} to {hi:g}, got {_show(value)}")
    v = int(value) if integer else float(value)
    if not lo <= v <= hi:  # NaN fails too
        raise SpecError(
            field, f"must be {kind} from {lo:g} to {hi:g}, got {_show(value)}", bounds=(lo, hi)
        )
    return v


@dataclass(frozen=True)
class Knobs:
    """A synthetic seasonal world (module docstring).

    Parameters
    ----------
    season_length : int
        Observations (steps) per season, >= 1.
    n_states : int
        Distinct states taking turns, >= 1.
    returns : int
        Times each state comes back after its first season, >= 0.
    n_arms, d : int
        K arms per step, dimension d.
    sigma2 : float
        Reward noise variance; the signal-to-noise ratio is the gap between the two best
        arms against sigma (:func:`snr`).
    batch_size : int
        Observations per feedback batch.
    """

    season_length: int = 200
    n_states: int = 3
    returns: int = 2
    n_arms: int = 5
    d: int = 5
    sigma2: float = 0.1
    batch_size: int = 1

    def __post_init__(self):
        for name in RANGES:  # types and ranges first: nothing is built from a bad level
            object.__setattr__(self, name, check_level(name, getattr(self, name)))
        if self.n_segments > LIMITS["n_segments"]:
            raise SpecError(
                "returns",
                f"n_states x (returns + 1) = {self.n_segments:,} seasons; at most "
                f"{LIMITS['n_segments']:,}",
            )
        if self.horizon > LIMITS["horizon"]:
            raise SpecError(
                "season_length",
                f"n_states x (returns + 1) x season_length = {self.horizon:,} steps; at most "
                f"{LIMITS['horizon']:,}",
            )

    @property
    def n_segments(self) -> int:
        """Seasons in the pattern: ``n_states * (returns + 1)``."""
        return self.n_states * (self.returns + 1)

    @property
    def horizon(self) -> int:
        """Steps of the world: ``n_states * (returns + 1) * season_length``."""
        return self.n_segments * self.season_length

    def run_bytes(self) -> int:
        """The memory one run of this world takes, at most (bytes): its trace and one chunk
        of rounds (:data:`TRACE_BYTES_PER_STEP`; the policies' own state is small beside
        them: All-Season keeps n_max + 2 posteriors of 3 d x d)."""
        chunk = min(self.horizon, _CHUNK + self.batch_size)
        return (
            self.horizon * TRACE_BYTES_PER_STEP
            + 2 * chunk * self.n_arms * self.d * 8
            + 8 * 3 * self.d * self.d * 8
        )

    def segments(self) -> tuple[tuple[int, int], ...]:
        """The regular pattern: states 0..S-1 in turn, ``returns + 1`` rounds."""
        rounds = self.returns + 1
        return tuple((s, self.season_length) for _ in range(rounds) for s in range(self.n_states))

    def scenario(self, seed: int = 0) -> Scenario:
        """The Scenario of this world (preset "custom"; raises SpecError past the limits)."""
        return Scenario(
            segments=self.segments(),
            d=self.d,
            n_arms=self.n_arms,
            sigma2=self.sigma2,
            batch_size=self.batch_size,
            seed=seed,
            preset="custom",
        )

    def with_(self, **changes) -> Knobs:
        """A copy with some knobs changed."""
        return replace(self, **changes)

    def to_dict(self) -> dict:
        """The knobs as plain data (JSON-ready)."""
        return asdict(self)


def pattern_knobs(segments) -> dict:
    """Season length (mean segment length, in steps), distinct states, and returns (the mean
    over states of the number of its segments, minus one) of a list of (state, length)."""
    segs = [(int(s), int(n)) for s, n in segments]
    states = {s for s, _ in segs}
    lengths = np.array([n for _, n in segs], dtype=float)
    visits = np.array([sum(1 for s, _ in segs if s == st) for st in sorted(states)], dtype=float)
    return {
        "season_length": float(lengths.mean()),
        "n_states": len(states),
        "returns": float(visits.mean() - 1.0),
        "n_segments": len(segs),
    }


def snr(scenario: Scenario, world=None, n_steps: int = 2000) -> float:
    """Signal-to-noise ratio of a world: the mean gap between the best and the second-best
    arm's expected reward over its first ``n_steps`` steps (seed 0's environment), divided
    by sigma = sqrt(scenario.sigma2) (for 0/1 worlds, the sigma the policies assume)."""
    from ..sim.runner import make_env

    env = make_env(scenario, 0, world)
    rnd = env.next_round(min(int(n_steps), scenario.horizon))
    top2 = np.sort(np.asarray(rnd.expected, dtype=float), axis=1)[:, -2:]
    return float(np.mean(top2[:, 1] - top2[:, 0]) / np.sqrt(scenario.sigma2))


def estimate_knobs(scenario: Scenario, world=None, snr_steps: int = 2000) -> dict:
    """Every knob of a world, estimated from its scenario (and ``world``, the factory of
    its environment when it is not the scenario's own, e.g. a reward table).

    Parameters
    ----------
    scenario : Scenario
        The world's scenario (its segments are the true or derived seasons).
    world : callable, optional
        ``world(scenario, seed_index, rng)``, as :func:`allseason.sim.runner.make_env`.
    snr_steps : int
        Steps drawn to estimate the gap between the two best arms.

    Returns
    -------
    dict
        season_length, n_states, returns, n_segments, n_arms, d, sigma2, batch_size (the
        mean batch when batches vary), horizon, snr.
    """
    out = pattern_knobs(scenario.segments)
    bs = scenario.batch_size
    out.update(
        n_arms=scenario.n_arms,
        d=scenario.d,
        sigma2=float(scenario.sigma2),
        batch_size=float(np.mean(bs)) if isinstance(bs, tuple) else int(bs),
        horizon=scenario.horizon,
        snr=snr(scenario, world, snr_steps),
    )
    return out


__all__ = ["KNOBS", "RANGES", "check_level", "Knobs", "estimate_knobs", "pattern_knobs", "snr"]
