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
        for name in ("season_length", "n_states", "n_arms", "d", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise SpecError(name, f"must be an integer >= 1, got {v!r}")
            object.__setattr__(self, name, int(v))
        if isinstance(self.returns, bool) or not isinstance(self.returns, (int, np.integer)):
            raise SpecError("returns", f"must be an integer >= 0, got {self.returns!r}")
        if self.returns < 0:
            raise SpecError("returns", f"must be an integer >= 0, got {self.returns!r}")
        object.__setattr__(self, "returns", int(self.returns))
        object.__setattr__(self, "sigma2", float(self.sigma2))

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


__all__ = ["KNOBS", "Knobs", "estimate_knobs", "pattern_knobs", "snr"]
