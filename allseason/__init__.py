"""All-Season: a linear Thompson-sampling bandit for seasonal environments.

Reference implementation of Di Benedetto, Bellini, Zappella, "A Linear Bandit for Seasonal
Environments". The engine (this package but ``viz`` and ``ui``) needs only numpy, scipy and
numba; pandas is used at the edge (tables). Start with :mod:`allseason.api`:

    from allseason import api
    result = api.run_race(api.default_race())
    result.summary()
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_names
from ._version import __version__

if TYPE_CHECKING:
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

# Every public name is imported on first use (PEP 562), so that ``import allseason`` and
# ``import allseason.kernels`` (a Dask worker, ``python -m allseason --help``) do not load the
# whole engine: numba, scipy and every room cost about 1.4 s of CPU in each process.
_HOME = {
    **dict.fromkeys(
        (
            "LIMITS",
            "PRESETS",
            "PolicySpec",
            "Race",
            "RaceResult",
            "Scenario",
            "SpecError",
            "default_race",
            "iter_race",
            "policy_specs",
            "run_race",
        ),
        ".api",
    ),
    "GaussianLinearPosterior": ".models",
    "symmetric_kl": ".models",
    "REGISTRY": ".policies",
    "Policy": ".policies",
    "make_policy": ".policies",
    "register": ".policies",
    "run": ".sim",
}


# any other attribute is tried as a room: ``allseason.api``, ``allseason.viz``
__getattr__, __dir__ = lazy_names(__name__, globals(), _HOME, submodules=True)

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
