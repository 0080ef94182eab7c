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

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import SpecError
from .allseason import AllSeason, AllSeasonDiscounted, AllSeasonPrinted
from .base import ChunkOutcome, Event, Policy, PosteriorBlocks, RngLike, Role
from .bob import BoB
from .denband import DenBand
from .dlinucb import DLinUCB
from .lints import DLinTS, LinTS, SWLinTS
from .oracle import OracleRestart, OracleState
from .params import Param, check_values, declared, values_checked
from .random import RandomPolicy

REGISTRY: dict[str, type[Policy]] = {}


def register(cls: type[Policy]) -> type[Policy]:
    """Add a policy class to the registry under ``cls.name`` (usable as a decorator).

    Parameters
    ----------
    cls : type
        A :class:`Policy` subclass.

    Returns
    -------
    type
        ``cls``, unchanged.

    Raises
    ------
    TypeError
        A hyperparameter of its ``__init__`` is not declared in ``params``.
    """
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


def role(name: str | type[Policy]) -> Role:
    """What a registered policy (or a policy class) declares it is.

    Parameters
    ----------
    name : str or type
        A registry name, or a :class:`Policy` subclass.

    Returns
    -------
    Role
        ``family`` (the class's ``family``; a class that declares none is a family of its
        own, its ``name``), ``oracle``, ``reference`` and ``ceiling``.

    Raises
    ------
    SpecError
        An unknown name.

    Examples
    --------
    >>> role("allseason-sw")
    Role(family='allseason', oracle=False, reference=False, ceiling=False)
    >>> role("oracle-state")
    Role(family='oracle', oracle=True, reference=True, ceiling=True)
    """
    cls = name if isinstance(name, type) else policy_class(name)
    return Role(cls.family or cls.name, bool(cls.oracle), bool(cls.reference), bool(cls.ceiling))


def label_role(label, names: Mapping[str, str] | None = None) -> Role | None:
    """The role of the policy a display label stands for, looked up, never guessed from
    the label's words: ``names`` (label to registry name: a race's own,
    ``{p.label: p.name for p in race.policies}``) first, else the registered names and
    titles (a race's labels are its policies' names unless it gives its own).

    Parameters
    ----------
    label : str
        A policy label.
    names : mapping of str to str, optional
        The registry name of each label.

    Returns
    -------
    Role or None
        None if the label is no registered policy's.

    Examples
    --------
    >>> label_role("allseason-sw").family
    'allseason'
    >>> label_role("All-Season (SW)").family
    'allseason'
    >>> label_role("mine", {"mine": "oracle-state"}).oracle
    True
    >>> label_role("allseason-sw-tau5") is None  # no policy of that label in the lookup
    True
    """
    name = (names or {}).get(label, label)
    cls = REGISTRY.get(name) if isinstance(name, str) else None
    if cls is None:
        cls = next((c for c in REGISTRY.values() if c.title and c.title == name), None)
    return None if cls is None else role(cls)


def is_reference(label, names: Mapping[str, str] | None = None) -> bool:
    """True for a label of a reference (:func:`label_role`): drawn and ranked apart from the
    contestants.

    Parameters
    ----------
    label : str
        A policy label.
    names : mapping of str to str, optional
        The registry name of each label (:func:`label_role`).

    Returns
    -------
    bool
    """
    r = label_role(label, names)
    return r is not None and r.reference


def policy_class(name: str) -> type[Policy]:
    """The registered class of a name.

    Parameters
    ----------
    name : str
        A registry name (``"allseason-sw"``, ``"lints"``, ...).

    Returns
    -------
    type

    Raises
    ------
    SpecError
        ``field="policy"``, naming the known ones, for an unknown name.
    """
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
    """The declared hyperparameters of a registered policy.

    Parameters
    ----------
    name : str
        A registry name (``"allseason-sw"``, ``"lints"``, ...).

    Returns
    -------
    dict of str to Param
        Constraint, help and default of each.
    """
    return declared(policy_class(name))


def hyperparameters(name: str) -> dict[str, object]:
    """The tunable hyperparameters of a registered policy and their defaults.

    Parameters
    ----------
    name : str
        A registry name (``"allseason-sw"``, ``"lints"``, ...).

    Returns
    -------
    dict
        Hyperparameter name to default value.
    """
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

    Parameters
    ----------
    name : str
        A registry name (``"allseason-sw"``, ``"lints"``, ...).

    Returns
    -------
    PolicyInfo

    Examples
    --------
    >>> info = describe("allseason-sw")
    >>> info.title, info.deterministic
    ('All-Season (SW)', False)
    >>> info.params["weighting"].describe()
    "one of 'fixed-share', 'batch'"
    """
    cls = policy_class(name)
    return PolicyInfo(name, cls.title or name, cls.help, bool(cls.deterministic), declared(cls))


def check_params(name: str, params: dict) -> dict:
    """Check hyperparameters against a policy's declaration without building it.

    Parameters
    ----------
    name : str
        A registry name (``"allseason-sw"``, ``"lints"``, ...).
    params : dict
        Hyperparameter values (missing ones take their defaults).

    Returns
    -------
    dict
        The values converted (ints, floats).

    Raises
    ------
    SpecError
        Its ``field`` is the hyperparameter, ``bounds`` and ``got`` the declared bounds and
        the value.
    """
    decl = parameters(name)
    return check_values(decl, params, defaults={k: p.default for k, p in decl.items()}, owner=name)


def make_policy(name: str, d: int, *, rng: RngLike = None, **params) -> Policy:
    """Build a registered policy.

    Parameters
    ----------
    name : str
        A registry name (``"allseason-sw"``, ``"lints"``, ...).
    d : int
        Dimension of the arms' vectors.
    rng : numpy.random.Generator, int or None
        Root of the policy's random streams.
    **params
        Its hyperparameters (the others take their defaults).

    Returns
    -------
    Policy

    Raises
    ------
    SpecError
        A hyperparameter it does not take, or a bad value, named.

    Examples
    --------
    >>> make_policy("d-lints", 3, gamma=0.9, rng=0).gamma
    0.9
    """
    values = check_params(name, params)
    with values_checked():  # checked just now: the constructor need not again
        return policy_class(name)(d, rng=rng, **values)


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
    "values_checked",
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
    "role",
    "label_role",
    "Role",
    "PosteriorBlocks",
]
