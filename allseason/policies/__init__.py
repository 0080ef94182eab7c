"""Bandit policies and their registry: ``make_policy("allseason-sw", d, tau=10, rng=rng)``."""

from __future__ import annotations

import inspect

from .allseason import AllSeason, AllSeasonDiscounted, AllSeasonPrinted
from .base import ChunkOutcome, Event, Policy
from .bob import BoB
from .denband import DenBand
from .dlinucb import DLinUCB
from .lints import DLinTS, LinTS, SWLinTS
from .random import RandomPolicy

REGISTRY: dict[str, type[Policy]] = {
    cls.name: cls
    for cls in (AllSeason, AllSeasonDiscounted, AllSeasonPrinted, LinTS, SWLinTS, DLinTS, RandomPolicy,
                BoB, DenBand, DLinUCB)
}


def register(cls: type[Policy]) -> type[Policy]:
    """Add a policy class to the registry under ``cls.name`` (usable as a decorator)."""
    REGISTRY[cls.name] = cls
    return cls


def hyperparameters(name: str) -> dict[str, object]:
    """The tunable hyperparameters of a registered policy and their defaults."""
    cls = policy_class(name)
    sig = inspect.signature(cls.__init__)
    return {k: p.default for k, p in sig.parameters.items()
            if k not in ("self", "d", "rng") and p.kind is p.KEYWORD_ONLY}


def policy_class(name: str) -> type[Policy]:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"policy: unknown name {name!r}; known: {', '.join(REGISTRY)}") from None


def make_policy(name: str, d: int, *, rng=None, **params) -> Policy:
    """Build a registered policy; unknown hyperparameters are an error naming them.

    Hyperparameters a policy does not take (e.g. tau for lints) are ignored only when passed
    through :func:`make_policy_lenient`; here they raise."""
    cls = policy_class(name)
    allowed = hyperparameters(name)
    unknown = set(params) - set(allowed)
    if unknown:
        raise ValueError(f"{name}: unknown hyperparameter(s) {sorted(unknown)}; "
                         f"it takes {sorted(allowed)}")
    return cls(d, rng=rng, **params)


__all__ = ["REGISTRY", "Policy", "ChunkOutcome", "Event", "make_policy", "policy_class",
           "hyperparameters", "register", "LinTS", "SWLinTS", "DLinTS", "RandomPolicy",
           "AllSeason", "AllSeasonDiscounted", "AllSeasonPrinted", "BoB", "DenBand", "DLinUCB"]
