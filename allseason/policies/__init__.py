"""Bandit policies and their registry.

A policy is one class (see :class:`~allseason.policies.base.Policy`): it declares its
registry ``name``, ``title``, one-line ``help``, whether it is ``deterministic``, a figure
``style`` preference and its hyperparameters (``params``, :mod:`.params`). Registering it
(:func:`register`, usable as a decorator) is all it takes for the CLI, the configuration
checks, sweeps and the app to offer it.

    >>> from allseason.policies import hyperparameters, make_policy, parameters
    >>> hyperparameters("sw-lints")
    {'tau': 100, 'lam': 1.0, 'sigma2': 1.0}
    >>> parameters("sw-lints")["tau"].describe()
    'an integer in [1, 200000]'
    >>> make_policy("sw-lints", 3, tau=10, rng=0).tau
    10
    >>> make_policy("sw-lints", 3, tau=0)
    Traceback (most recent call last):
    ...
    allseason.errors.SpecError: tau: must be an integer in [1, 200000], got 0
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SpecError
from .allseason import AllSeason, AllSeasonDiscounted, AllSeasonPrinted
from .base import ChunkOutcome, Event, Policy
from .bob import BoB
from .denband import DenBand
from .dlinucb import DLinUCB
from .lints import DLinTS, LinTS, SWLinTS
from .oracle import OracleRestart, OracleState
from .params import Param, check_values, declared
from .random import RandomPolicy

REGISTRY: dict[str, type[Policy]] = {}


def register(cls: type[Policy]) -> type[Policy]:
    """Add a policy class to the registry under ``cls.name`` (usable as a decorator).
    TypeError if a hyperparameter of its ``__init__`` is not declared in ``params``."""
    declared(cls)
    REGISTRY[cls.name] = cls
    return cls


for _cls in (
    AllSeason,
    AllSeasonDiscounted,
    AllSeasonPrinted,
    LinTS,
    SWLinTS,
    DLinTS,
    RandomPolicy,
    BoB,
    DenBand,
    DLinUCB,
    OracleState,
    OracleRestart,
):
    register(_cls)


def is_reference(label) -> bool:
    """True for a reference (an oracle, ``reference = True``): a label that is a registered
    reference's name, or starts with one (``"oracle-state-2"``). References are drawn and
    ranked apart from the contestants."""
    label = str(label)
    return any(
        getattr(cls, "reference", False)
        and (label == name or label.startswith(name + "-") or label.startswith(name + " "))
        for name, cls in REGISTRY.items()
    )


def policy_class(name: str) -> type[Policy]:
    """The registered class; SpecError("policy", ...) naming the known ones if none."""
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise SpecError(
            "policy",
            f"unknown name {name!r}; known: {', '.join(REGISTRY)}",
            bounds=tuple(REGISTRY),
            got=name,
        ) from None


def parameters(name: str) -> dict[str, Param]:
    """The declared hyperparameters of a registered policy: constraint, help and default."""
    return declared(policy_class(name))


def hyperparameters(name: str) -> dict[str, object]:
    """The tunable hyperparameters of a registered policy and their defaults."""
    return {k: p.default for k, p in parameters(name).items()}


@dataclass(frozen=True)
class PolicyInfo:
    """What a registered policy declares: its name, display title, one-line help, whether
    its decisions ignore the seed, and its hyperparameters (:class:`Param`, with defaults)."""

    name: str
    title: str
    help: str
    deterministic: bool
    params: dict[str, Param]


def describe(name: str) -> PolicyInfo:
    """The declaration of a registered policy.

    >>> info = describe("allseason-sw")
    >>> info.title, info.deterministic
    ('All-Season (SW)', False)
    >>> info.params["weighting"].describe()
    "one of 'fixed-share', 'batch'"
    """
    cls = policy_class(name)
    return PolicyInfo(name, cls.title or name, cls.help, bool(cls.deterministic), declared(cls))


def check_params(name: str, params) -> dict:
    """Check hyperparameters against a policy's declaration without building it: the values
    converted (ints, floats), or SpecError whose ``field`` is the hyperparameter and whose
    ``bounds`` and ``got`` are the declared bounds and the value."""
    decl = parameters(name)
    return check_values(decl, params, defaults={k: p.default for k, p in decl.items()}, owner=name)


def make_policy(name: str, d: int, *, rng=None, **params) -> Policy:
    """Build a registered policy; a hyperparameter it does not take, or a bad value, is a
    SpecError naming it."""
    return policy_class(name)(d, rng=rng, **check_params(name, params))


__all__ = [
    "REGISTRY",
    "Policy",
    "ChunkOutcome",
    "Event",
    "make_policy",
    "policy_class",
    "hyperparameters",
    "parameters",
    "check_params",
    "describe",
    "PolicyInfo",
    "register",
    "LinTS",
    "SWLinTS",
    "DLinTS",
    "RandomPolicy",
    "AllSeason",
    "AllSeasonDiscounted",
    "AllSeasonPrinted",
    "BoB",
    "DenBand",
    "DLinUCB",
    "OracleState",
    "OracleRestart",
    "is_reference",
]
