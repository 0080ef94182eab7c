"""All-Season: a linear Thompson-sampling bandit for seasonal environments.

Reference implementation of Di Benedetto, Bellini, Zappella, "A Linear Bandit for Seasonal
Environments". The engine (this package but ``viz`` and ``ui``) needs only numpy, scipy and
numba; pandas is used at the edge (tables). Start with :mod:`allseason.api`:

    from allseason import api
    result = api.run_race(api.default_race())
    result.summary()
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
        "api",
    ),
    "GaussianLinearPosterior": "models",
    "symmetric_kl": "models",
    "REGISTRY": "policies",
    "Policy": "policies",
    "make_policy": "policies",
    "register": "policies",
    "run": "sim",
}


def __getattr__(name: str) -> Any:
    """A public name (from its room), or a room (``allseason.api``), imported on first use."""
    home = _HOME.get(name)
    if home is not None:
        value = getattr(importlib.import_module(f".{home}", __name__), name)
        globals()[name] = value
        return value
    if not name.startswith("__"):
        try:
            return importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})


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
