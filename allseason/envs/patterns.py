"""Season patterns: which stationary state (0, 1, ...) the environment is in at each step.

A pattern is a list of segments (state, length). Presets, scaled to any horizon:

- ``regular``: few long periods; the states in turn, each twice;
- ``realistic``: a long usual state 0 interrupted by short events and medium seasons;
- ``extreme``: all periods short (50 of them);
- ``paper-synthetic``: the paper's section 5 experiment: 10,000 steps, 4 states, 8 change
  points, new states first appearing at the 1st, 3rd and 5th change points (the paper gives
  the pattern only as a figure; these lengths are our reading of it);
- ``seattle-weather``: the real weather regimes of Seattle, 2012-2015, one day = 10 steps
  (:mod:`allseason.envs.weather`; needs PyPI vega-datasets): a fixed pattern, not scaled;
- ``custom``: any list of (state, length) segments.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import SpecError

PAPER_SYNTHETIC = (
    (0, 1500),
    (1, 1000),
    (0, 1000),
    (2, 1200),
    (1, 800),
    (3, 1200),
    (0, 1000),
    (2, 1100),
    (1, 1200),
)

# realistic: relative lengths and roles; 0 = the usual state, "e" = the next event state
_REALISTIC_REL = (6, 1, 3, 2, 5, 1, 2, 4, 1, 3)
_REALISTIC_ROLE = (0, "e", 0, "e", 0, "e", "e", 0, "e", 0)
PRESETS = ("regular", "realistic", "extreme", "paper-synthetic", "seattle-weather")
# presets whose pattern comes from data: not scaled, n_states fixed by the data
FIXED_PRESETS = ("seattle-weather",)


@dataclass(frozen=True)
class Pattern:
    """A season pattern: ``segments`` is a tuple of (state, length) with length >= 1."""

    segments: tuple[tuple[int, int], ...]

    def __post_init__(self):
        segs = tuple((int(s), int(n)) for s, n in self.segments)
        if not segs:
            raise ValueError("segments: a pattern needs at least one segment")
        for i, (s, n) in enumerate(segs):
            if s < 0:
                raise ValueError(f"segments: state of segment {i + 1} must be >= 0, got {s}")
            if n < 1:
                raise ValueError(f"segments: length of segment {i + 1} must be >= 1, got {n}")
        object.__setattr__(self, "segments", segs)

    @property
    def horizon(self) -> int:
        """T, the number of steps."""
        return sum(n for _, n in self.segments)

    @property
    def n_states(self) -> int:
        """Number of distinct state indices used (states are 0 .. max)."""
        return max(s for s, _ in self.segments) + 1

    def states(self) -> np.ndarray:
        """The true state at each step, shape (T,)."""
        return np.repeat([s for s, _ in self.segments], [n for _, n in self.segments])

    def change_points(self) -> np.ndarray:
        """Steps at which a new segment starts (the first step of each segment but the first)."""
        return np.cumsum([n for _, n in self.segments])[:-1]

    def first_seen(self) -> np.ndarray:
        """For each change point, True if it brings a state never seen before."""
        seen, out = {self.segments[0][0]}, []
        for s, _ in self.segments[1:]:
            out.append(s not in seen)
            seen.add(s)
        return np.array(out, dtype=bool)


def _scale(rel, horizon):
    """Integer lengths proportional to rel, summing to horizon, each >= 1."""
    rel = np.asarray(rel, dtype=float)
    lengths = np.maximum(np.floor(rel / rel.sum() * horizon).astype(int), 1)
    lengths[-1] += horizon - lengths.sum()
    if lengths[-1] < 1:
        raise SpecError("horizon", f"{horizon} is too short for this pattern", got=horizon)
    return lengths


def preset(name: str, horizon: int | None = None, n_states: int | None = None) -> Pattern:
    """A preset pattern scaled to ``horizon`` steps with ``n_states`` distinct states (None:
    3). ``seattle-weather`` is the data's pattern: horizon and n_states must be left out
    (None) or equal the data's (14,610 steps, 4 regimes).

    >>> preset("regular", horizon=600, n_states=3).segments
    ((0, 100), (1, 100), (2, 100), (0, 100), (1, 100), (2, 100))
    >>> p = preset("paper-synthetic")
    >>> p.horizon, p.n_states, p.change_points()[:3].tolist()
    (10000, 4, [1500, 2500, 3500])
    """
    if name == "seattle-weather":
        from . import weather

        pattern = Pattern(weather.segments())
        if horizon is not None and int(horizon) != pattern.horizon:
            raise SpecError(
                "horizon",
                f"the {name} preset has a fixed horizon of "
                f"{pattern.horizon:,} steps (1,461 days x "
                f"{weather.BATCH} customers), got {horizon}",
                got=horizon,
            )
        if n_states is not None and int(n_states) != pattern.n_states:
            raise SpecError(
                "n_states",
                f"the {name} preset has {pattern.n_states} regimes (from the data), got {n_states}",
                got=n_states,
            )
        return pattern
    if n_states is None:
        n_states = 3
    if name == "paper-synthetic":
        if horizon not in (None, 10_000):
            return Pattern(
                tuple(
                    zip(
                        [s for s, _ in PAPER_SYNTHETIC],
                        _scale([n for _, n in PAPER_SYNTHETIC], horizon),
                    )
                )
            )
        return Pattern(PAPER_SYNTHETIC)
    horizon = 10_000 if horizon is None else int(horizon)
    n_states = int(n_states)
    if n_states < 1:
        raise SpecError("n_states", f"must be >= 1, got {n_states}", got=n_states)
    rel: Sequence[int]  # each segment's relative length
    if name == "regular":
        states = [i % n_states for i in range(2 * n_states)]
        rel = [1] * len(states)
    elif name == "realistic":
        events = iter(range(1, 10**6))
        states = [
            0 if role == 0 else (next(events) - 1) % max(n_states - 1, 1) + 1
            for role in _REALISTIC_ROLE
        ]
        if n_states == 1:
            states = [0] * len(states)
        rel = _REALISTIC_REL
    elif name == "extreme":
        n_seg = max(50, n_states)
        states = [i % n_states for i in range(n_seg)]
        rel = [1] * n_seg
    else:
        raise SpecError("pattern", f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    if horizon < len(states):
        raise SpecError(
            "horizon",
            f"{horizon} is too short for the {name} pattern (needs at least {len(states)} steps)",
            got=horizon,
        )
    return Pattern(tuple(zip(states, _scale(rel, horizon))))
