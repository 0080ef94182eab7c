"""The rule that set the default race's baseline hyperparameters (:data:`allseason.defaults.TUNED`):
the best point of the paper's grid (:data:`allseason.paper.reproduce.GRIDS`) by mean reward on a
validation scenario. It runs races, so it lives above the engine, with the paper's protocol;
:mod:`allseason.defaults` only stores its result."""

from __future__ import annotations

from ..defaults import CHOICES, VALIDATION_RUNS, VALIDATION_SEED
from ..policies import policy_class
from ..sim import run_race
from ..specs import PolicySpec, Race, Scenario
from .reproduce import GRIDS


def validation_scenario() -> Scenario:
    """The paper's synthetic experiment on the validation seed (batch 1, d = 5, K = 5)."""
    return Scenario(seed=VALIDATION_SEED)


def tune(
    name: str,
    scenario: Scenario | None = None,
    n_seeds: int = VALIDATION_RUNS,
    fixed: dict | None = None,
) -> tuple[dict, list[tuple[dict, float]]]:
    """The rule: the grid point of the paper's grid with the highest mean reward on the
    validation scenario (ties: the first point). Returns (best params, [(params, score)]).
    A policy with :data:`CHOICES` (D-LinTS's ``covariance``) has its grid crossed with them,
    choice by choice (so ties go to the first choice, the class default); ``fixed``:
    hyperparameters added to every grid point instead (e.g. one covariance)."""
    scenario = scenario or validation_scenario()
    if policy_class(name).deterministic:  # its seeds would all score the same
        n_seeds = 1
    scores = []
    extras = (fixed,) if fixed is not None else CHOICES.get(name, ({},))
    for params in [{**p, **e} for e in extras for p in GRIDS[name]]:
        race = Race(scenario, (PolicySpec(name, params),), n_seeds)
        scores.append((dict(params), run_race(race).summary()[name]["mean_reward"]))
    best = max(range(len(scores)), key=lambda i: (scores[i][1], -i))
    return scores[best][0], scores


__all__ = ["validation_scenario", "tune"]
