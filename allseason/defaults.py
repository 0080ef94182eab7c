"""The default race: who races, and with which hyperparameters (set by the rule of
:mod:`allseason.paper.tuning`, stored here).

Contestants (:data:`DEFAULT_POLICIES`): All-Season with a sliding-window shadow and with a
discounted shadow, both with carried weights (fixed share, the package default); All-Season
with **the paper's printed rule** (``allseason-sw-printed``, Algorithm 3: the last batch
alone); and the baselines LinTS, SW-LinTS, D-LinTS and random. Two references run with
them, drawn and ranked apart (:data:`REFERENCES`, :mod:`allseason.policies.oracle`): LinTS
told the true seasons, with one model per state (``oracle-state``, perfect memory) or
restarted at every true change point (``oracle-restart``, perfect detection); they take
LinTS's defaults (lam = 1, sigma2 the scenario's), as LinTS does. BoB and DenBand, the paper's
other baselines, are one click away in the app and in ``--policies``; they are left out of the
default race for time alone (DenBand takes about 4.7 s per 10,000-step run at d = 5, against
0.03 s for SW-LinTS), and their tuned scores are below SW-LinTS's
(docs/reproduction-synthetic.md).

Hyperparameters (:func:`default_params`):

- All-Season keeps the paper's own setting of its section 5 experiment: tau = 10, and the
  discounted shadow gamma = 1 - 1/tau = 0.9 (the same mapping as the real-data protocol);
  n_max = 5. It is **not** tuned.
- Every baseline takes its best grid point on **the paper's grid** (section 6; the grids of
  :data:`allseason.paper.reproduce.GRIDS`) by mean reward on a validation scenario: the paper's
  synthetic experiment with scenario seed :data:`VALIDATION_SEED` (other true parameters and
  arms than the seeds 0-4 the default race is reported on), :data:`VALIDATION_RUNS` seeds;
  ties go to the first grid point. :data:`TUNED` stores the result of the rule
  (:func:`allseason.paper.tuning.tune`) so the app need not recompute it;
  ``tests/sim/test_defaults.py`` recomputes it.

D-LinTS's grid is crossed with its two covariances (:data:`CHOICES`): Kim & Tewari's
M^-1 Mt M^-1 wins on validation and on seeds 0-4 (benchmarks/dlints_covariance.py,
docs/d-lints-covariance.md), so the default race runs it; the class default stays
"precision", the setting of the tracked paper tables.

So the default race is fair to the baselines: they are tuned on the scenario's kind of data,
All-Season is not.
"""

from __future__ import annotations

import functools

from .policies import hyperparameters, role
from .specs import PolicySpec, Race, Scenario

DEFAULT_POLICIES = (
    "allseason-sw",
    "allseason-disc",
    "allseason-sw-printed",
    "lints",
    "sw-lints",
    "d-lints",
    "random",
    "oracle-state",
    "oracle-restart",
)
# in the race, drawn and ranked apart: the default policies whose class declares it
REFERENCES = tuple(n for n in DEFAULT_POLICIES if role(n).reference)
DEFAULT_SEEDS = 5
VALIDATION_SEED = 1000
VALIDATION_RUNS = 3
ALLSEASON_PARAMS: dict[str, dict[str, object]] = {  # the paper's section 5 setting, not tuned
    "allseason-sw": {"tau": 10, "n_max": 5},
    "allseason-disc": {"gamma": 0.9, "n_max": 5},
    "allseason-sw-printed": {"tau": 10, "n_max": 5},
}
CHOICES: dict[str, tuple[dict, ...]] = {  # choices the rule crosses with the paper's grid
    "d-lints": ({"covariance": "precision"}, {"covariance": "kim-tewari"}),
}
TUNED: dict[str, dict] = {  # tune(name) for every baseline with a grid; recomputed by tests
    "sw-lints": {"tau": 100},
    "d-lints": {"gamma": 0.9, "covariance": "kim-tewari"},  # docs/d-lints-covariance.md
    "bob": {"S": 0.1, "L": 0.1},
    "denband": {"tau": 500, "delta_l": 0.1},
}


def default_params(name: str) -> dict:
    """The default race's hyperparameters for a policy (the tuned or paper values; {} when
    it keeps its class defaults)."""
    params = {**ALLSEASON_PARAMS.get(name, {}), **TUNED.get(name, {})}
    if not params:
        return {}
    allowed = hyperparameters(name)
    return {k: v for k, v in params.items() if k in allowed}


def default_specs(names=DEFAULT_POLICIES) -> tuple[PolicySpec, ...]:
    """PolicySpecs of the named policies with their default-race hyperparameters."""
    return tuple(PolicySpec(n, default_params(n)) for n in names)


def default_race(scenario: Scenario | None = None, n_seeds: int = DEFAULT_SEEDS) -> Race:
    """The race the app and the CLI run by default: the paper's synthetic experiment,
    All-Season (carried weights, SW and Disc; and the printed rule) against the baselines.
    The race of the default settings is checked once per process (a frozen value)."""
    if scenario is None and n_seeds == DEFAULT_SEEDS:
        return _the_default_race()
    return Race(scenario or Scenario(), default_specs(), n_seeds)


@functools.cache
def _the_default_race() -> Race:
    return Race(Scenario(), default_specs(), DEFAULT_SEEDS)


__all__ = [
    "DEFAULT_POLICIES",
    "REFERENCES",
    "DEFAULT_SEEDS",
    "VALIDATION_SEED",
    "VALIDATION_RUNS",
    "ALLSEASON_PARAMS",
    "CHOICES",
    "TUNED",
    "default_params",
    "default_specs",
    "default_race",
]
