"""All-Season: a linear Thompson-sampling bandit for seasonal environments.

Reference implementation of Di Benedetto, Bellini, Zappella, "A Linear Bandit for Seasonal
Environments". The engine (this package but ``viz`` and ``ui``) needs only numpy, scipy and
numba; pandas is used at the edge (tables). Start with :mod:`allseason.api`:

    from allseason import api
    result = api.run_race(api.default_race())
    result.summary()
"""

from ._version import __version__
from .api import (
    LIMITS,
    PRESETS,
    PolicySpec,
    Race,
    RaceResult,
    Scenario,
    SpecError,
    default_race,
    iter_race,
    policy_specs,
    run_race,
)
from .models import GaussianLinearPosterior, symmetric_kl
from .policies import REGISTRY, Policy, make_policy, register
from .sim import run

__all__ = [
    "__version__",
    "Scenario",
    "PolicySpec",
    "Race",
    "RaceResult",
    "SpecError",
    "LIMITS",
    "PRESETS",
    "policy_specs",
    "run",
    "run_race",
    "iter_race",
    "default_race",
    "make_policy",
    "GaussianLinearPosterior",
    "symmetric_kl",
    "REGISTRY",
    "Policy",
    "register",
]
