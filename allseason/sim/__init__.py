"""Simulation: the runner (run, race, iter_race) and what it records (Trace, RaceResult)."""

from .runner import Progress, iter_race, play, run, run_race, seed_sequence
from .trace import RaceResult, Trace

__all__ = [
    "iter_race",
    "play",
    "run",
    "run_race",
    "seed_sequence",
    "Progress",
    "RaceResult",
    "Trace",
]
